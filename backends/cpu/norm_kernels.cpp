// CPU reference kernels of the Normalize family (plan: backends/common/norm_rules.h): for each row,
// the row's values are read exactly as double, its statistics computed in double with two passes
// (max then sum of exp; mean then sum of squared deviations), and each element rounded once at the
// store.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"
#include "status.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tgl {
namespace cpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using R = NormPlan::Role;

// Element offsets of every role for each element of row `row`, in row-major order of the inner dims.
void row_offsets(const NormPlan& p, int64_t row, std::vector<int64_t> (&offs)[NormPlan::kRoles]) {
    int64_t base[NormPlan::kRoles];
    for (int k = 0; k < NormPlan::kRoles; ++k) base[k] = p.offset[k];
    int64_t rem = row;
    for (int d = p.outer_rank - 1; d >= 0; --d) {
        const int64_t i = rem % p.outer_shape[d];
        rem /= p.outer_shape[d];
        for (int k = 0; k < NormPlan::kRoles; ++k) base[k] += i * p.outer_strides[k][d];
    }
    for (int k = 0; k < NormPlan::kRoles; ++k) offs[k].assign(size_t(p.len), base[k]);
    for (int64_t j = 0; j < p.len; ++j) {
        rem = j;
        for (int d = p.inner_rank - 1; d >= 0; --d) {
            const int64_t i = rem % p.inner_shape[d];
            rem /= p.inner_shape[d];
            for (int k = 0; k < NormPlan::kRoles; ++k) offs[k][size_t(j)] += i * p.inner_strides[k][d];
        }
    }
}

// A param operand in row-major order of its shape (empty when absent).
std::vector<double> gather_param(const OpCall& c, int input) {
    std::vector<double> v;
    if (input < 0) return v;
    const TensorArg& t = c.inputs[size_t(input)];
    const uint8_t* base = cpu_buffer(t.buffer).bytes();
    v.resize(size_t(t.numel));
    for (int64_t i = 0; i < t.numel; ++i) {
        int64_t off = t.offset, rem = i;
        for (int d = t.rank - 1; d >= 0; --d) {
            off += (rem % t.shape[d]) * t.strides[d];
            rem /= t.shape[d];
        }
        v[size_t(i)] = load_as_double(base, t.dtype, off);
    }
    return v;
}

// The value a store of dtype dt keeps of v (add_*: sum is normalized as stored, as PyTorch's
// unfused x + residual followed by the norm).
double round_to(tgl_dtype dt, double v) {
    if (dt == TGL_DTYPE_F16) return f16_to_double(double_to_f16(v));
    if (dt == TGL_DTYPE_BF16) return bf16_to_double(double_to_bf16(v));
    return double(float(v));
}

}  // namespace

void run_norm(const OpCall& c, unsigned threads) {
    const NormPlan& p = c.norm();
    const tgl_op op = c.info->op;
    const tgl_dtype dt = c.dtype;
    const uint8_t* x = cpu_buffer(c.inputs[0].buffer).bytes();
    const uint8_t* r = p.has_r ? cpu_buffer(c.inputs[1].buffer).bytes() : nullptr;
    uint8_t* y = cpu_buffer(c.outputs[0].buffer).bytes();
    uint8_t* s = p.has_s ? cpu_buffer(c.outputs[1].buffer).bytes() : nullptr;
    std::vector<double> prm[NormPlan::kParams];
    for (int k = 0; k < NormPlan::kParams; ++k) prm[k] = gather_param(c, p.param_input[k]);
    const bool softmax = op == TGL_OP_SOFTMAX || op == TGL_OP_LOG_SOFTMAX;
    const bool add = op == TGL_OP_ADD_LAYER_NORM || op == TGL_OP_ADD_RMS_NORM;
    const bool rms = op == TGL_OP_RMS_NORM || op == TGL_OP_ADD_RMS_NORM;
    const double eps = p.eps;
    auto param = [&](int k, int64_t e, double absent) { return prm[k].empty() ? absent : prm[k][size_t(e)]; };

    const int64_t min_rows = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(1, p.len));
    struct Scratch {
        std::vector<int64_t> offs[NormPlan::kRoles];  // sized as row_offsets() fills them
        std::vector<double> v;
    };
    auto make = [&] {
        Scratch s;
        for (auto& o : s.offs) o.resize(size_t(p.len));
        s.v.resize(size_t(p.len));
        return s;
    };
    parallel_for_with_scratch(p.rows, threads, min_rows, make, [&](int64_t begin, int64_t end, Scratch& sc) {
        std::vector<int64_t>(&offs)[NormPlan::kRoles] = sc.offs;
        std::vector<double>& v = sc.v;
        for (int64_t row = begin; row < end; ++row) {
            row_offsets(p, row, offs);
            for (size_t j = 0; j < v.size(); ++j) {
                const double xv = load_as_double(x, dt, offs[R::kX][j]);
                if (softmax) {
                    v[j] = p.scale * xv + (r ? load_as_double(r, dt, offs[R::kR][j]) : 0.0);
                } else if (add) {
                    v[j] = round_to(dt, xv + load_as_double(r, dt, offs[R::kR][j]));
                    if (s) store_from_double(s, dt, offs[R::kS][j], v[j], false);
                } else {
                    v[j] = xv;
                }
            }
            const double n = double(p.len);
            if (softmax) {
                // NaN anywhere: NaN; +inf: inf - inf = NaN (as PyTorch); all -inf: zeros / -inf.
                double m = -kInf;
                bool nan = false;
                for (double a : v) { nan = nan || std::isnan(a); m = std::max(m, a); }
                double sum = 0.0;
                if (!nan && m != -kInf && m != kInf)
                    for (double a : v) sum += std::exp(a - m);
                for (size_t j = 0; j < v.size(); ++j) {
                    double out;
                    if (nan || m == kInf) out = kNaN;
                    else if (m == -kInf) out = p.log ? -kInf : 0.0;
                    else out = p.log ? (v[j] - m) - std::log(sum) : std::exp(v[j] - m) / sum;
                    store_from_double(y, dt, offs[R::kY][j], out, false);
                }
            } else if (op == TGL_OP_BATCH_NORM) {
                for (size_t j = 0; j < v.size(); ++j) {
                    const int64_t e = offs[R::kE][j];
                    const double out = (v[j] - prm[NormPlan::kMean][size_t(e)]) / std::sqrt(prm[NormPlan::kVar][size_t(e)] + eps) *
                                           param(NormPlan::kGamma, e, 1.0) + param(NormPlan::kBeta, e, 0.0);
                    store_from_double(y, dt, offs[R::kY][j], out, false);
                }
            } else {
                double mean = 0.0, var = 0.0;
                if (rms) {
                    for (double a : v) var += a * a;  // the mean square (no overflow in double)
                    var /= n;
                } else {
                    for (double a : v) mean += a;
                    mean /= n;
                    for (double a : v) var += (a - mean) * (a - mean);
                    var /= n;
                }
                const double inv = 1.0 / std::sqrt(var + eps);
                for (size_t j = 0; j < v.size(); ++j) {
                    const int64_t e = offs[R::kE][j];
                    const double out = (v[j] - mean) * inv * param(NormPlan::kGamma, e, 1.0) + param(NormPlan::kBeta, e, 0.0);
                    store_from_double(y, dt, offs[R::kY][j], out, false);
                }
            }
        }
    });
}

void register_norm_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Normalize, run_norm}); }

}  // namespace cpu
}  // namespace tgl
