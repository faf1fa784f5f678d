// Helpers of the reduction families' known answers (reduce_test.cpp, arg_reduce_test.cpp,
// scan_test.cpp): one input, one output, any dtype and view; params builders; exact and near
// comparisons.
#pragma once

#include "common.h"

#include <cmath>
#include <limits>
#include <vector>

namespace conf {

// Runs `op` on x (view xv, dtype xt) and a poisoned y (view yv, dtype yt); checks guards, that
// every output element was written and that x is unchanged; returns y's values.
inline std::vector<double> run_views(tgl_op op, const void* params, tgl_dtype xt, const View& xv,
                                     const std::vector<double>& x, tgl_dtype yt, const View& yv) {
    Device& d = dev();
    DeviceTensor in(d, xv, xt);
    in.set_logical(x);
    DeviceTensor out(d, yv, yt);
    out.poison();
    d.run_ok(op, params, {in.desc()}, {out.desc()});
    std::vector<double> y = out.read_logical();
    ::testing::AssertionResult r = in.unchanged();
    if (!r) throw Failure(std::string("input was modified by the op: ") + r.message());
    return y;
}
// The same with contiguous x and y.
inline std::vector<double> run_dt(tgl_op op, const void* params, tgl_dtype xt, const Shape& xs,
                                  const std::vector<double>& x, tgl_dtype yt, const Shape& ys) {
    return run_views(op, params, xt, contiguous(xs), x, yt, contiguous(ys));
}

inline ::testing::AssertionResult same(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::Exact);
}
// Per element relative error (f32 results of transcendental functions).
inline ::testing::AssertionResult near(const std::vector<double>& got, const std::vector<double>& want) {
    return compare(TGL_DTYPE_F32, got, want, Shape{int64_t(want.size())}, 1e-10, CompareMode::PerElement);
}
// One f16 rounding of a value computed with f32 transcendentals: within one f16 ulp (2^-10 relative).
inline ::testing::AssertionResult near_f16(const std::vector<double>& got, const std::vector<double>& want) {
    return compare(F16, got, want, Shape{int64_t(want.size())}, std::ldexp(1.0, -20), CompareMode::PerElement);
}

inline tgl_arg_reduce_params arg_params(int axis, bool keepdims) {
    tgl_arg_reduce_params p{};
    p.struct_size = sizeof p;
    p.axis = axis;
    p.keepdims = keepdims;
    return p;
}

inline tgl_var_params var_params(std::vector<int> axes, bool keepdims, float correction) {
    tgl_var_params p{};
    p.struct_size = sizeof p;
    p.keepdims = keepdims;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    p.correction = correction;
    return p;
}

inline tgl_vector_norm_params norm_params(std::vector<int> axes, bool keepdims, float ord) {
    tgl_vector_norm_params p{};
    p.struct_size = sizeof p;
    p.keepdims = keepdims;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    p.ord = ord;
    return p;
}

inline tgl_scan_params scan_params(int axis, bool exclusive, bool reverse) {
    tgl_scan_params p{};
    p.struct_size = sizeof p;
    p.axis = axis;
    p.exclusive = exclusive;
    p.reverse = reverse;
    return p;
}

// Runs op on x (xs, f32, all ones) and a poisoned y (ys, yt); expects `want` naming `tokens`,
// nothing written.
inline void expect_reduction_rejected(tgl_op op, const void* params, const Shape& ys, tgl_dtype yt, tgl_status want,
                                      const std::vector<std::string>& tokens, const Shape& xs = {2, 3}) {
    const InputArg x = numel(xs) ? input_values(F32, xs, std::vector<double>(size_t(numel(xs)), 1.0)) : empty_input(F32, xs);
    expect_rejected(op, params, {x}, {output_of(yt, ys)}, want, tokens);
}

}  // namespace conf
