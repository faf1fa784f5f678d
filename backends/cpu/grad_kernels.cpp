// CPU reference kernels of the Grad family (plan: backends/common/grad_rules.h): plain loops in
// double, each output element rounded once at its store. Data-dependent errors (index / target out
// of range) are checked over all of the index tensor before anything is written.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "status.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace tgl {
namespace cpu {
namespace {

using R = GradPlan::Role;
constexpr int kRoles = GradPlan::kRoles;

// Element offsets of every role for row `row`'s base, and of element j relative to the base.
void row_base(const GradPlan& p, int64_t row, int64_t (&o)[kRoles]) {
    for (int k = 0; k < kRoles; ++k) o[k] = p.offset[k];
    for (int d = p.outer_rank - 1; d >= 0; --d) {
        const int64_t i = row % p.outer_shape[d];
        row /= p.outer_shape[d];
        for (int k = 0; k < kRoles; ++k) o[k] += i * p.outer_strides[k][d];
    }
}
void elem_offsets(const GradPlan& p, int64_t j, const int64_t (&base)[kRoles], int64_t (&o)[kRoles]) {
    for (int k = 0; k < kRoles; ++k) o[k] = base[k];
    for (int d = p.inner_rank - 1; d >= 0; --d) {
        const int64_t i = j % p.inner_shape[d];
        j /= p.inner_shape[d];
        for (int k = 0; k < kRoles; ++k) o[k] += i * p.inner_strides[k][d];
    }
}

const uint8_t* in_bytes(const OpCall& c, size_t i) { return cpu_buffer(c.inputs[i].buffer).bytes(); }
uint8_t* out_bytes(const OpCall& c, size_t i) { return cpu_buffer(c.outputs[i].buffer).bytes(); }


// A row's elements of roles a and g (as double) and their offsets.
struct Row {
    std::vector<double> a, g;
    std::vector<int64_t> oa, og, od, op;
};
void load_row(const OpCall& c, int64_t row, bool with_g, Row& r) {
    const GradPlan& p = c.grad();
    int64_t base[kRoles], o[kRoles];
    row_base(p, row, base);
    const size_t n = size_t(p.len);
    r.a.resize(n); r.g.resize(n); r.oa.resize(n); r.og.resize(n); r.od.resize(n); r.op.resize(n);
    for (size_t j = 0; j < n; ++j) {
        elem_offsets(p, int64_t(j), base, o);
        r.oa[j] = o[R::kA]; r.og[j] = o[R::kG]; r.od[j] = o[R::kD]; r.op[j] = o[R::kP];
        r.a[j] = load_as_double(in_bytes(c, 0), c.dtype, o[R::kA]);
        if (with_g) r.g[j] = load_as_double(in_bytes(c, 1), c.dtype, o[R::kG]);
    }
}

void softmax_backward(const OpCall& c) {
    const GradPlan& p = c.grad();
    const bool log = c.info->op == TGL_OP_LOG_SOFTMAX_BACKWARD;
    uint8_t* dx = out_bytes(c, 0);
    Row r;
    for (int64_t row = 0; row < p.rows; ++row) {
        load_row(c, row, true, r);
        double s = 0.0;
        for (size_t j = 0; j < r.a.size(); ++j) s += log ? r.g[j] : r.g[j] * r.a[j];
        for (size_t j = 0; j < r.a.size(); ++j) {
            const double v = log ? r.g[j] - std::exp(r.a[j]) * s : r.a[j] * (r.g[j] - s);
            store_from_double(dx, c.dtype, r.od[j], p.scale * v, false);
        }
    }
}

// A row-major (param-coordinate) copy of an operand over the normalized dims.
std::vector<double> param_values(const OpCall& c, size_t input) {
    const TensorArg& t = c.inputs[input];
    std::vector<double> v(size_t(t.numel));
    for (int64_t i = 0; i < t.numel; ++i) {
        int64_t off = t.offset, rem = i;
        for (int d = t.rank - 1; d >= 0; --d) {
            off += (rem % t.shape[d]) * t.strides[d];
            rem /= t.shape[d];
        }
        v[size_t(i)] = load_as_double(in_bytes(c, input), t.dtype, off);
    }
    return v;
}

void store_param(const OpCall& c, size_t output, const std::vector<double>& v) {
    const TensorArg& t = c.outputs[output];
    for (int64_t i = 0; i < t.numel; ++i) {
        int64_t off = t.offset, rem = i;
        for (int d = t.rank - 1; d >= 0; --d) {
            off += (rem % t.shape[d]) * t.strides[d];
            rem /= t.shape[d];
        }
        store_from_double(out_bytes(c, output), t.dtype, off, v[size_t(i)], false);
    }
}

void norm_backward(const OpCall& c) {
    const GradPlan& p = c.grad();
    const bool rms = c.info->op == TGL_OP_RMS_NORM_BACKWARD;
    const std::vector<double> gamma = p.has_gamma ? param_values(c, 2) : std::vector<double>();
    std::vector<double> dgamma(size_t(p.len), 0.0), dbeta(size_t(p.len), 0.0);
    uint8_t* dx = out_bytes(c, 0);
    const double n = double(p.len);
    Row r;
    std::vector<double> xhat, g;
    for (int64_t row = 0; row < p.rows; ++row) {
        load_row(c, row, true, r);
        double mean = 0.0, var = 0.0;
        if (rms) {
            for (double a : r.a) var += a * a;
        } else {
            for (double a : r.a) mean += a;
            mean /= n;
            for (double a : r.a) var += (a - mean) * (a - mean);
        }
        var /= n;
        const double rstd = 1.0 / std::sqrt(var + p.eps);
        xhat.resize(r.a.size());
        g.resize(r.a.size());
        double mg = 0.0, mgx = 0.0;
        for (size_t j = 0; j < r.a.size(); ++j) {
            xhat[j] = (r.a[j] - mean) * rstd;
            g[j] = r.g[j] * (gamma.empty() ? 1.0 : gamma[size_t(r.op[j])]);
            mg += g[j];
            mgx += g[j] * xhat[j];
            dgamma[size_t(r.op[j])] += r.g[j] * xhat[j];
            dbeta[size_t(r.op[j])] += r.g[j];
        }
        mg /= n;
        mgx /= n;
        for (size_t j = 0; j < r.a.size(); ++j)
            store_from_double(dx, c.dtype, r.od[j], rstd * (g[j] - (rms ? 0.0 : mg) - xhat[j] * mgx), false);
    }
    if (p.has_dgamma) store_param(c, 1, dgamma);
    if (p.has_dbeta) store_param(c, 2, dbeta);
}

// The index / target of each row, checked before anything is written; -1 for ignored targets.
std::vector<int64_t> row_targets(const OpCall& c, int64_t limit, bool ce, int axis) {
    const GradPlan& p = c.grad();
    std::vector<int64_t> t(size_t(p.rows));
    for (int64_t row = 0; row < p.rows; ++row) {
        int64_t o[kRoles];
        row_base(p, row, o);
        const int64_t v = load_as_int64(in_bytes(c, 1), c.inputs[1].dtype, o[R::kT]);  // i32 or i64, exact
        if (ce && v == p.ignore_index) {
            t[size_t(row)] = -1;
            continue;
        }
        if (v < 0 || v >= limit)
            fail(TGL_ERROR_INDEX_OUT_OF_RANGE, "%s", index_out_of_range_message(*c.info, row, v, limit, axis).c_str());
        t[size_t(row)] = v;
    }
    return t;
}

void embedding_backward(const OpCall& c) {
    const GradPlan& p = c.grad();
    const std::vector<int64_t> idx = row_targets(c, p.vocab, false, 0);
    std::vector<double> acc(size_t(p.vocab * p.len), 0.0);
    Row r;
    for (int64_t row = 0; row < p.rows; ++row) {
        load_row(c, row, false, r);
        for (int64_t j = 0; j < p.len; ++j) acc[size_t(idx[size_t(row)] * p.len + j)] += r.a[size_t(j)];
    }
    for (int64_t v = 0; v < p.vocab; ++v)
        for (int64_t j = 0; j < p.len; ++j) {
            const double val = p.has_padding && v == p.padding_idx ? 0.0 : acc[size_t(v * p.len + j)];
            store_from_double(out_bytes(c, 0), c.dtype, p.dw_offset + v * p.dw_strides[0] + j * p.dw_strides[1], val, false);
        }
}

void cross_entropy(const OpCall& c) {
    const GradPlan& p = c.grad();
    const bool backward = c.info->op == TGL_OP_CROSS_ENTROPY_BACKWARD;
    const std::vector<int64_t> tgt = row_targets(c, p.len, true, c.inputs[0].rank == 1 ? 0 : 1);
    const double ls = p.label_smoothing, C = double(p.len);
    int64_t count = 0;
    for (int64_t t : tgt) count += t >= 0;
    double total = 0.0, dscalar = 0.0;
    if (backward && p.reduction != TGL_REDUCTION_NONE) {
        dscalar = load_as_double(in_bytes(c, 2), c.dtype, c.inputs[2].offset);
        if (p.reduction == TGL_REDUCTION_MEAN) dscalar /= double(count);
    }
    Row r;
    for (int64_t row = 0; row < p.rows; ++row) {
        load_row(c, row, false, r);
        int64_t base[kRoles];
        row_base(p, row, base);
        const int64_t t = tgt[size_t(row)];
        double m = -std::numeric_limits<double>::infinity(), sum = 0.0, zsum = 0.0;
        for (double z : r.a) m = std::max(m, z);
        for (double z : r.a) { sum += std::exp(z - m); zsum += z; }
        const double lse = m + std::log(sum);
        if (!backward) {
            // The smoothing term only with smoothing: a -inf logit (a masked class) would make it 0 * inf.
            const double l = t < 0 ? 0.0 : (1.0 - ls) * (lse - r.a[size_t(t)]) + (ls > 0 ? ls * (lse - zsum / C) : 0.0);
            if (p.reduction == TGL_REDUCTION_NONE) store_from_double(out_bytes(c, 0), c.dtype, base[R::kL], l, false);
            total += l;
            continue;
        }
        double w = 0.0;
        if (t >= 0) w = p.reduction == TGL_REDUCTION_NONE ? load_as_double(in_bytes(c, 2), c.dtype, base[R::kL]) : dscalar;
        for (size_t j = 0; j < r.a.size(); ++j) {
            const double v = t < 0 ? 0.0 : w * (std::exp(r.a[j] - lse) - (1.0 - ls) * (int64_t(j) == t) - ls / C);
            store_from_double(out_bytes(c, 0), c.dtype, r.od[j], v, false);
        }
    }
    if (!backward && p.reduction != TGL_REDUCTION_NONE)
        store_from_double(out_bytes(c, 0), c.dtype, c.outputs[0].offset,
                          p.reduction == TGL_REDUCTION_MEAN ? total / double(count) : total, false);
}

}  // namespace

void run_grad(const OpCall& call, unsigned threads) {
    switch (call.info->op) {
    case TGL_OP_SOFTMAX_BACKWARD:
    case TGL_OP_LOG_SOFTMAX_BACKWARD: softmax_backward(call); break;
    case TGL_OP_LAYER_NORM_BACKWARD:
    case TGL_OP_RMS_NORM_BACKWARD: norm_backward(call); break;
    // The scan in the opposite direction (plan_grad flips it): the cumsum kernel itself.
    case TGL_OP_CUMSUM_BACKWARD: run_scan(call, threads); break;
    case TGL_OP_EMBEDDING_BACKWARD: embedding_backward(call); break;
    case TGL_OP_CROSS_ENTROPY:
    case TGL_OP_CROSS_ENTROPY_BACKWARD: cross_entropy(call); break;
    default: fail(TGL_ERROR_INTERNAL, "cpu kernels: no kernel for op '%s'", call.info->name);
    }
}

void register_grad_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Grad, run_grad}); }

}  // namespace cpu
}  // namespace tgl
