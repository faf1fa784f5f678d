// CPU reference kernels of the Pool family (plan: backends/common/pool_rules.h): plain loops over
// every (n, c) plane, values read exactly as double, sums and means in double, one rounding at
// the store. The backward ops scatter (dx[p] += dy[o] / divisor over each window o, as PyTorch's
// CPU kernels do) into a double plane; the GLES plugin gathers instead, an independent algorithm.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"
#include "status.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace tgl {
namespace cpu {
namespace {

using P = PoolPlan;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Plane {
    const P& p;
    int64_t base[P::kRoles];
    // Element offset of spatial position (i0, i1, i2) of role r in this plane.
    int64_t at(int r, int64_t i0, int64_t i1, int64_t i2) const {
        return base[r] + i0 * p.stride_sp[r][0] + i1 * p.stride_sp[r][1] + i2 * p.stride_sp[r][2];
    }
};

// One pooling window of output o along dim d: [start, end) unclipped (avg: end clipped to the
// padded input), and its part inside the input.
struct Span {
    int64_t start, end, lo, hi;
};
Span avg_span(const P& p, int d, int64_t o) {
    Span s;
    s.start = o * p.stride[d] - p.pad_begin[d];
    s.end = std::min(s.start + p.kernel[d], p.in[d] + p.pad_end[d]);
    s.lo = std::max<int64_t>(s.start, 0);
    s.hi = std::min(s.end, p.in[d]);
    return s;
}
Span adaptive_span(const P& p, int d, int64_t o) {
    Span s;
    s.start = s.lo = o * p.in[d] / p.out[d];
    s.end = s.hi = ((o + 1) * p.in[d] + p.out[d] - 1) / p.out[d];
    return s;
}
// The avg_pool divisor of output (o0, o1, o2) and its clipped window.
double avg_window(const P& p, const int64_t (&o)[3], Span (&sp)[3]) {
    double pool = 1, count = 1;
    for (int d = 0; d < 3; ++d) {
        sp[d] = avg_span(p, d, o[d]);
        pool *= double(sp[d].end - sp[d].start);
        count *= double(std::max<int64_t>(0, sp[d].hi - sp[d].lo));
    }
    return p.count_include_pad ? pool : count;
}

void run_plane(const OpCall& c, const Plane& pl, std::vector<double>& acc) {
    const P& p = c.pool();
    const tgl_dtype dt = c.dtype;
    const bool bwd = p.kind == P::kMaxPoolBwd || p.kind == P::kAvgPoolBwd || p.kind == P::kAdaptiveAvgBwd;
    // x and y as the plan names them (dx is written by the backward ops, y by the others).
    uint8_t* x = cpu_buffer((bwd ? c.outputs[0] : c.inputs[0]).buffer).bytes();
    uint8_t* y = cpu_buffer((bwd ? c.inputs[0] : c.outputs[0]).buffer).bytes();
    const TensorArg* idx_t = p.has_indices ? (bwd ? &c.inputs[1] : &c.outputs[1]) : nullptr;
    uint8_t* idx = idx_t ? cpu_buffer(idx_t->buffer).bytes() : nullptr;
    auto X = [&](int64_t i0, int64_t i1, int64_t i2) { return load_as_double(x, dt, pl.at(P::kX, i0, i1, i2)); };
    const int64_t plane_in = p.in[0] * p.in[1] * p.in[2];

    if (p.kind == P::kGlobalMax || p.kind == P::kGlobalAvg) {
        double m = -kInf, sum = 0;
        for (int64_t i0 = 0; i0 < p.in[0]; ++i0)
            for (int64_t i1 = 0; i1 < p.in[1]; ++i1)
                for (int64_t i2 = 0; i2 < p.in[2]; ++i2) {
                    const double v = X(i0, i1, i2);
                    m = std::isnan(v) || std::isnan(m) ? kNaN : std::max(m, v);
                    sum += v;
                }
        store_from_double(y, dt, pl.at(P::kY, 0, 0, 0), p.kind == P::kGlobalMax ? m : sum / double(plane_in), false);
        return;
    }
    if (bwd) std::fill(acc.begin(), acc.end(), 0.0);
    const int64_t esize = tgl_dtype_size(dt);
    int64_t o[3];
    for (o[0] = 0; o[0] < p.out[0]; ++o[0])
        for (o[1] = 0; o[1] < p.out[1]; ++o[1])
            for (o[2] = 0; o[2] < p.out[2]; ++o[2]) {
                const int64_t yo = pl.at(P::kY, o[0], o[1], o[2]);
                switch (p.kind) {
                case P::kMaxPool: {
                    double best = -kInf;
                    int64_t best_i = -1;
                    for (int64_t j0 = 0; j0 < p.kernel[0]; ++j0)
                        for (int64_t j1 = 0; j1 < p.kernel[1]; ++j1)
                            for (int64_t j2 = 0; j2 < p.kernel[2]; ++j2) {
                                const int64_t i[3] = {o[0] * p.stride[0] - p.pad_begin[0] + j0 * p.dilation[0],
                                                      o[1] * p.stride[1] - p.pad_begin[1] + j1 * p.dilation[1],
                                                      o[2] * p.stride[2] - p.pad_begin[2] + j2 * p.dilation[2]};
                                bool inside = true;
                                for (int d = 0; d < 3; ++d) inside = inside && i[d] >= 0 && i[d] < p.in[d];
                                if (!inside) continue;  // padding: never selected
                                const int64_t flat = (i[0] * p.in[1] + i[1]) * p.in[2] + i[2];
                                if (best_i < 0) best_i = flat;
                                const double v = X(i[0], i[1], i[2]);
                                if (v > best || std::isnan(v)) {  // PyTorch's rule: a later NaN replaces
                                    best = v;
                                    best_i = flat;
                                }
                            }
                    store_from_double(y, dt, yo, best, false);
                    if (idx)
                        store_from_double(idx, TGL_DTYPE_I32, pl.at(P::kI, o[0], o[1], o[2]), double(best_i), true);
                    break;
                }
                case P::kAvgPool:
                case P::kAdaptiveAvg: {
                    Span sp[3];
                    double div;
                    if (p.kind == P::kAvgPool) {
                        div = avg_window(p, o, sp);
                    } else {
                        div = 1;
                        for (int d = 0; d < 3; ++d) {
                            sp[d] = adaptive_span(p, d, o[d]);
                            div *= double(sp[d].hi - sp[d].lo);
                        }
                    }
                    double sum = 0;
                    for (int64_t i0 = sp[0].lo; i0 < sp[0].hi; ++i0)
                        for (int64_t i1 = sp[1].lo; i1 < sp[1].hi; ++i1)
                            for (int64_t i2 = sp[2].lo; i2 < sp[2].hi; ++i2) sum += X(i0, i1, i2);
                    store_from_double(y, dt, yo, sum / div, false);  // div 0: a window with no element, 0 / 0
                    break;
                }
                case P::kNearest: {
                    int64_t s[3];
                    for (int d = 0; d < 3; ++d) {
                        const float f = float(o[d]) * p.scale[d];  // f32, as PyTorch computes it
                        s[d] = std::min<int64_t>(int64_t(std::floor(f)), p.in[d] - 1);
                    }
                    std::memcpy(y + yo * esize, x + pl.at(P::kX, s[0], s[1], s[2]) * esize, size_t(esize));
                    break;
                }
                case P::kBilinear: {
                    int64_t i0[3], i1[3];
                    double l1[3];
                    for (int d = 1; d < 3; ++d) {
                        const double sc = p.scale[d];
                        const double src = p.align_corners ? sc * double(o[d]) : std::max(sc * (double(o[d]) + 0.5) - 0.5, 0.0);
                        i0[d] = std::min<int64_t>(int64_t(src), p.in[d] - 1);
                        i1[d] = std::min<int64_t>(i0[d] + 1, p.in[d] - 1);
                        l1[d] = src - double(i0[d]);
                    }
                    const double top = (1 - l1[2]) * X(0, i0[1], i0[2]) + l1[2] * X(0, i0[1], i1[2]);
                    const double bot = (1 - l1[2]) * X(0, i1[1], i0[2]) + l1[2] * X(0, i1[1], i1[2]);
                    store_from_double(y, dt, yo, (1 - l1[1]) * top + l1[1] * bot, false);
                    break;
                }
                case P::kMaxPoolBwd: {
                    const int64_t flat = int64_t(load_as_double(idx, TGL_DTYPE_I32, pl.at(P::kI, o[0], o[1], o[2])));
                    if (flat < 0 || flat >= plane_in) break;
                    const int64_t i[3] = {flat / (p.in[1] * p.in[2]), flat / p.in[2] % p.in[1], flat % p.in[2]};
                    bool in_window = true;  // an index outside its own window contributes nothing
                    for (int d = 0; d < 3; ++d) {
                        const int64_t t = i[d] - (o[d] * p.stride[d] - p.pad_begin[d]);
                        in_window = in_window && t >= 0 && t % p.dilation[d] == 0 && t / p.dilation[d] < p.kernel[d];
                    }
                    if (in_window) acc[size_t(flat)] += load_as_double(y, dt, yo);
                    break;
                }
                case P::kAvgPoolBwd:
                case P::kAdaptiveAvgBwd: {
                    Span sp[3];
                    double div = 1;
                    if (p.kind == P::kAvgPoolBwd) {
                        div = avg_window(p, o, sp);
                    } else {
                        for (int d = 0; d < 3; ++d) {
                            sp[d] = adaptive_span(p, d, o[d]);
                            div *= double(sp[d].hi - sp[d].lo);
                        }
                    }
                    const double g = load_as_double(y, dt, yo) / div;
                    for (int64_t i0 = sp[0].lo; i0 < sp[0].hi; ++i0)
                        for (int64_t i1 = sp[1].lo; i1 < sp[1].hi; ++i1)
                            for (int64_t i2 = sp[2].lo; i2 < sp[2].hi; ++i2)
                                acc[size_t((i0 * p.in[1] + i1) * p.in[2] + i2)] += g;
                    break;
                }
                default: fail(TGL_ERROR_INTERNAL, "cpu pool kernels: op '%s' has no case", c.info->name);
                }
            }
    if (bwd)
        for (int64_t i0 = 0; i0 < p.in[0]; ++i0)
            for (int64_t i1 = 0; i1 < p.in[1]; ++i1)
                for (int64_t i2 = 0; i2 < p.in[2]; ++i2)
                    store_from_double(x, dt, pl.at(P::kX, i0, i1, i2), acc[size_t((i0 * p.in[1] + i1) * p.in[2] + i2)], false);
}

}  // namespace

void run_pool(const OpCall& call, unsigned threads) {
    const P& p = call.pool();
    const int64_t planes = p.N * p.C;
    const int64_t work = std::max<int64_t>(1, p.in[0] * p.in[1] * p.in[2] + p.out[0] * p.out[1] * p.out[2]);
    const bool bwd = p.kind == P::kMaxPoolBwd || p.kind == P::kAvgPoolBwd || p.kind == P::kAdaptiveAvgBwd;
    auto make = [&] { return std::vector<double>(bwd ? size_t(p.in[0] * p.in[1] * p.in[2]) : 0); };
    parallel_for_with_scratch(planes, threads, std::max<int64_t>(1, (int64_t(1) << 15) / work), make,
                              [&](int64_t begin, int64_t end, std::vector<double>& acc) {
        for (int64_t pi = begin; pi < end; ++pi) {
            const int64_t n = pi / p.C, c = pi % p.C;
            Plane pl{p, {}};
            for (int r = 0; r < P::kRoles; ++r) pl.base[r] = p.offset[r] + n * p.stride_n[r] + c * p.stride_c[r];
            run_plane(call, pl, acc);
        }
    });
}

void register_pool_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Pool, run_pool}); }

}  // namespace cpu
}  // namespace tgl
