// Known answers and bad input for argmax, argmin, logsumexp, var, std, any, all, norm, cumsum and
// cumprod: small hand-checked cases with ties, NaN, inf, empty sets, keepdims, negative axes,
// exclusive and reverse scans, in every dtype of the ops' catalogue rules; and the f16 storage of
// every float reduction and scan (sum, mean, max, min, prod too): computed in f32 or wider, rounded
// once at the store, f16 overflow to inf, odd lengths at odd element offsets.
#include "common.h"

#include <cmath>

namespace conf {
namespace {

using ReduceMore = ConformanceTest;

const double dInf = std::numeric_limits<double>::infinity();
const double dNaN = std::numeric_limits<double>::quiet_NaN();

// Runs `op` on x (view xv, dtype xt) and a poisoned y (view yv, dtype yt); checks guards, that
// every output element was written and that x is unchanged; returns y's values.
std::vector<double> run_views(tgl_op op, const void* params, tgl_dtype xt, const View& xv, const std::vector<double>& x,
                              tgl_dtype yt, const View& yv) {
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
std::vector<double> run_dt(tgl_op op, const void* params, tgl_dtype xt, const Shape& xs, const std::vector<double>& x,
                           tgl_dtype yt, const Shape& ys) {
    return run_views(op, params, xt, contiguous(xs), x, yt, contiguous(ys));
}

::testing::AssertionResult same(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::Exact);
}
// Per element relative error (f32 results of transcendental functions).
::testing::AssertionResult near(const std::vector<double>& got, const std::vector<double>& want) {
    return compare(TGL_DTYPE_F32, got, want, Shape{int64_t(want.size())}, 1e-10, CompareMode::PerElement);
}

tgl_arg_reduce_params arg_params(int axis, bool keepdims) {
    tgl_arg_reduce_params p{};
    p.struct_size = sizeof p;
    p.axis = axis;
    p.keepdims = keepdims;
    return p;
}

tgl_var_params var_params(std::vector<int> axes, bool keepdims, float correction) {
    tgl_var_params p{};
    p.struct_size = sizeof p;
    p.keepdims = keepdims;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    p.correction = correction;
    return p;
}

tgl_vector_norm_params norm_params(std::vector<int> axes, bool keepdims, float ord) {
    tgl_vector_norm_params p{};
    p.struct_size = sizeof p;
    p.keepdims = keepdims;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    p.ord = ord;
    return p;
}

tgl_scan_params scan_params(int axis, bool exclusive, bool reverse) {
    tgl_scan_params p{};
    p.struct_size = sizeof p;
    p.axis = axis;
    p.exclusive = exclusive;
    p.reverse = reverse;
    return p;
}

const tgl_dtype F32 = TGL_DTYPE_F32, I32 = TGL_DTYPE_I32;

// ----- argmax / argmin ----------------------------------------------------------------------------

TEST_F(ReduceMore, ArgmaxArgmin) {
    for (tgl_dtype xt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_I32}) {
        SCOPED_TRACE("x " + dtype_name(xt));
        // [[1, 5, 5], [7, -2, 7]]: ties go to the first index.
        std::vector<double> x = {1, 5, 5, 7, -2, 7};
        auto p = arg_params(1, false);
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {2, 3}, x, I32, {2}), {1, 0}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {2, 3}, x, I32, {2}), {0, 1}));
        p = arg_params(-2, true);
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {2, 3}, x, I32, {1, 3}), {1, 0, 1}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {2, 3}, x, I32, {1, 3}), {0, 1, 0}));
        // NULL params: the last axis, no keepdims.
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, nullptr, xt, {2, 3}, x, I32, {2}), {1, 0}));
        // A single element along the axis, and a scalar.
        p = arg_params(0, false);
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {1, 3}, {4, 5, 6}, I32, {3}), {0, 0, 0}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {}, {3}, I32, {}), {0}));
    }
    // NaN beats every number: the first NaN wins; +-inf are ordinary extremes; -0 == +0.
    std::vector<double> s = {1, dNaN, 3, dNaN, dInf, -dInf, 2, 2, -0.0, 0.0, -1, -1};
    auto p = arg_params(1, false);
    for (tgl_dtype xt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {4, 3}, s, I32, {4}), {1, 0, 0, 0}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {4, 3}, s, I32, {4}), {1, 0, 2, 1}));
    }
    // i32 beyond 2^24 compares exactly (no detour through f32).
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, I32, {1, 3}, {16777216, 16777217, 16777216}, I32, {1}), {1}));
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, I32, {1, 3}, {-16777216, -16777217, 2147483647}, I32, {1}), {1}));
    // A long row with the maximum near the end and a tie after it.
    std::vector<double> longrow(5000, 0.0);
    longrow[4321] = 9;
    longrow[4999] = 9;
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, nullptr, F32, {5000}, longrow, I32, {}), {4321}));
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, nullptr, F32, {5000}, longrow, I32, {}), {0}));
}

// ----- logsumexp ----------------------------------------------------------------------------------

TEST_F(ReduceMore, Logsumexp) {
    auto p = reduce_params({1}, false);
    std::vector<double> x = {0, 0, 1000, 1000, -dInf, -dInf, dInf, 1, dNaN, 1, dInf, dNaN, 1, 2};
    EXPECT_TRUE(near(run_dt(TGL_OP_LOGSUMEXP, &p, F32, {7, 2}, x, F32, {7}),
                     {std::log(2.0), 1000 + std::log(2.0), -dInf, dInf, dNaN, dNaN, 2 + std::log1p(std::exp(-1.0))}));
    // Empty set: -inf; keepdims; all axes.
    p = reduce_params({-1}, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_LOGSUMEXP, &p, F32, {2, 0}, {}, F32, {2, 1}), {-dInf, -dInf}));
    EXPECT_TRUE(near(run_dt(TGL_OP_LOGSUMEXP, nullptr, F32, {2, 2}, {1, 2, 3, 4}, F32, {}),
                     {4 + std::log(1 + std::exp(-1.0) + std::exp(-2.0) + std::exp(-3.0))}));
}

// ----- var / std ----------------------------------------------------------------------------------

TEST_F(ReduceMore, VarStd) {
    std::vector<double> x = {1, 2, 3, 4, 2, 2, 2, 2};
    auto p = var_params({1}, false, 1.0f);
    EXPECT_TRUE(near(run_dt(TGL_OP_VAR, &p, F32, {2, 4}, x, F32, {2}), {5.0 / 3, 0}));
    EXPECT_TRUE(near(run_dt(TGL_OP_STD, &p, F32, {2, 4}, x, F32, {2}), {std::sqrt(5.0 / 3), 0}));
    p = var_params({-1}, true, 0.0f);
    EXPECT_TRUE(near(run_dt(TGL_OP_VAR, &p, F32, {2, 4}, x, F32, {2, 1}), {1.25, 0}));
    // NULL params: every axis, correction 1.
    EXPECT_TRUE(near(run_dt(TGL_OP_VAR, nullptr, F32, {4}, {1, 2, 3, 4}, F32, {}), {5.0 / 3}));
    // Over axis 0 of (2, 4).
    p = var_params({0}, false, 0.0f);
    EXPECT_TRUE(near(run_dt(TGL_OP_VAR, &p, F32, {2, 4}, x, F32, {4}), {0.25, 0, 0.25, 1}));
    // N - correction <= 0: 0 / 0 = NaN, positive / 0 = inf; empty set NaN; inf/NaN give NaN.
    p = var_params({1}, false, 1.0f);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_VAR, &p, F32, {1, 1}, {5}, F32, {1}), {dNaN}));
    p = var_params({1}, false, 2.0f);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_VAR, &p, F32, {1, 2}, {1, 2}, F32, {1}), {dInf}));
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_STD, &p, F32, {1, 2}, {1, 2}, F32, {1}), {dInf}));
    p = var_params({1}, false, 1.0f);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_VAR, &p, F32, {3, 0}, {}, F32, {3}), {dNaN, dNaN, dNaN}));
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_STD, &p, F32, {2, 2}, {dInf, 1, dNaN, 1}, F32, {2}), {dNaN, dNaN}));
    // Large offset: the two-pass / Welford result, not E[x^2] - E[x]^2.
    EXPECT_TRUE(near(run_dt(TGL_OP_VAR, &p, F32, {1, 3}, {10000, 10001, 10002}, F32, {1}), {1}));
}

// ----- any / all ----------------------------------------------------------------------------------

TEST_F(ReduceMore, AnyAll) {
    for (tgl_dtype yt : {TGL_DTYPE_BOOL, TGL_DTYPE_U8}) {
        SCOPED_TRACE("y " + dtype_name(yt));
        auto p = reduce_params({1}, false);
        // rows: [0, NaN, 0], [-0, 0, 0], [1, 2, inf], [0, -1, 0]
        std::vector<double> x = {0, dNaN, 0, -0.0, 0, 0, 1, 2, dInf, 0, -1, 0};
        for (tgl_dtype xt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16}) {
            EXPECT_TRUE(same(yt, run_dt(TGL_OP_ANY, &p, xt, {4, 3}, x, yt, {4}), {1, 0, 1, 1}));
            EXPECT_TRUE(same(yt, run_dt(TGL_OP_ALL, &p, xt, {4, 3}, x, yt, {4}), {0, 0, 1, 0}));
        }
        std::vector<double> xi = {0, 5, 0, 0, 0, 0, 1, 2, 3, 0, 1, 0};
        for (tgl_dtype xt : {TGL_DTYPE_I32, TGL_DTYPE_I8, TGL_DTYPE_U8}) {
            EXPECT_TRUE(same(yt, run_dt(TGL_OP_ANY, &p, xt, {4, 3}, xi, yt, {4}), {1, 0, 1, 1}));
            EXPECT_TRUE(same(yt, run_dt(TGL_OP_ALL, &p, xt, {4, 3}, xi, yt, {4}), {0, 0, 1, 0}));
        }
        std::vector<double> xb = {0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0};
        EXPECT_TRUE(same(yt, run_dt(TGL_OP_ANY, &p, TGL_DTYPE_BOOL, {4, 3}, xb, yt, {4}), {1, 0, 1, 1}));
        EXPECT_TRUE(same(yt, run_dt(TGL_OP_ALL, &p, TGL_DTYPE_BOOL, {4, 3}, xb, yt, {4}), {0, 0, 1, 0}));
        // Over axis 0 with keepdims (7 outputs: neighbouring bytes of one word written at once).
        p = reduce_params({0}, true);
        std::vector<double> c = {1, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0, 1, 1, 0};
        EXPECT_TRUE(same(yt, run_dt(TGL_OP_ANY, &p, TGL_DTYPE_I8, {2, 7}, c, yt, {1, 7}), {1, 1, 1, 0, 1, 1, 1}));
        EXPECT_TRUE(same(yt, run_dt(TGL_OP_ALL, &p, TGL_DTYPE_I8, {2, 7}, c, yt, {1, 7}), {1, 0, 0, 0, 1, 0, 0}));
        // Empty set: any = 0, all = 1.
        p = reduce_params({1}, false);
        EXPECT_TRUE(same(yt, run_dt(TGL_OP_ANY, &p, F32, {3, 0}, {}, yt, {3}), {0, 0, 0}));
        EXPECT_TRUE(same(yt, run_dt(TGL_OP_ALL, &p, F32, {3, 0}, {}, yt, {3}), {1, 1, 1}));
    }
}

// ----- norm ---------------------------------------------------------------------------------------

TEST_F(ReduceMore, Norm) {
    auto p1 = norm_params({1}, false, 1.0f);
    auto p2 = norm_params({1}, false, 2.0f);
    std::vector<double> x = {3, -4, 0, 0, 3e30, -4e30, 3e-30, 4e-30, dInf, 1, dNaN, dInf};
    EXPECT_TRUE(near(run_dt(TGL_OP_NORM, &p1, F32, {6, 2}, x, F32, {6}), {7, 0, 7e30, 7e-30, dInf, dNaN}));
    // L2 without overflow for large finite values (3e30^2 overflows f32) or underflow for tiny ones.
    EXPECT_TRUE(near(run_dt(TGL_OP_NORM, &p2, F32, {6, 2}, x, F32, {6}), {5, 0, 5e30, 5e-30, dInf, dNaN}));
    EXPECT_TRUE(near(run_dt(TGL_OP_NORM, nullptr, F32, {2, 2}, {1, 2, 2, 4}, F32, {}), {5}));
    p2 = norm_params({-2}, true, 2.0f);
    EXPECT_TRUE(near(run_dt(TGL_OP_NORM, &p2, F32, {2, 2}, {3, 1, 4, -1}, F32, {1, 2}), {5, std::sqrt(2.0)}));
    p2 = norm_params({0}, false, 2.0f);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_NORM, &p2, F32, {0, 2}, {}, F32, {2}), {0, 0}));
}

// ----- cumsum / cumprod ---------------------------------------------------------------------------

TEST_F(ReduceMore, Cumsum) {
    std::vector<double> x = {1, 2, 3, 4};
    auto p = scan_params(0, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {4}, x, F32, {4}), {1, 3, 6, 10}));
    p = scan_params(-1, true, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {4}, x, F32, {4}), {0, 1, 3, 6}));
    p = scan_params(0, false, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {4}, x, F32, {4}), {10, 9, 7, 4}));
    p = scan_params(0, true, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {4}, x, F32, {4}), {9, 7, 4, 0}));
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, nullptr, F32, {2, 3}, {1, 2, 3, 4, 5, 6}, F32, {2, 3}), {1, 3, 6, 4, 9, 15}));
    p = scan_params(0, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {2, 3}, {1, 2, 3, 4, 5, 6}, F32, {2, 3}), {1, 2, 3, 5, 7, 9}));
    p = scan_params(-2, true, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {2, 3}, {1, 2, 3, 4, 5, 6}, F32, {2, 3}), {4, 5, 6, 0, 0, 0}));
    // inf and NaN propagate from where they enter.
    p = scan_params(0, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {5}, {1, dInf, 1, -dInf, 1}, F32, {5}), {1, dInf, dInf, dNaN, dNaN}));
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {3}, {1, dNaN, 1}, F32, {3}), {1, dNaN, dNaN}));
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {}, {2.5}, F32, {}), {2.5}));
    // A long row of ones (several blocks): exact integers.
    std::vector<double> ones(3000, 1.0), want(3000), want_rev_ex(3000);
    for (int i = 0; i < 3000; ++i) {
        want[size_t(i)] = i + 1;
        want_rev_ex[size_t(i)] = 2999 - i;
    }
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {3000}, ones, F32, {3000}), want));
    p = scan_params(0, true, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {3000}, ones, F32, {3000}), want_rev_ex));
}

TEST_F(ReduceMore, Cumprod) {
    std::vector<double> x = {1, 2, 3, 4};
    auto p = scan_params(0, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {4}, x, F32, {4}), {1, 2, 6, 24}));
    p = scan_params(0, true, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {4}, x, F32, {4}), {1, 1, 2, 6}));
    p = scan_params(0, false, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {4}, x, F32, {4}), {24, 24, 12, 4}));
    p = scan_params(0, true, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {4}, x, F32, {4}), {24, 12, 4, 1}));
    p = scan_params(1, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {2, 2}, {0, dInf, 2, -1}, F32, {2, 2}), {0, dNaN, 2, -2}));
}

// ----- f16 storage: every float reduction and scan ------------------------------------------------

const tgl_dtype F16 = TGL_DTYPE_F16;
// One f16 rounding of a value computed with f32 transcendentals: within one f16 ulp (2^-10 relative).
::testing::AssertionResult near_f16(const std::vector<double>& got, const std::vector<double>& want) {
    return compare(F16, got, want, Shape{int64_t(want.size())}, std::ldexp(1.0, -20), CompareMode::PerElement);
}

TEST_F(ReduceMore, F16SumMeanMaxMinProd) {
    auto p = reduce_params({1}, false);
    // Rows: [1, 2, 3], [40000 x 3], [-40000 x 3], [2048, 1, 1], [2048, 1, 0], [2048, 1, 0.5].
    std::vector<double> x = {1, 2, 3, 40000, 40000, 40000, -40000, -40000, -40000,
                             2048, 1, 1, 2048, 1, 0, 2048, 1, 0.5};
    // The sum is computed wide and rounded once: 2048 + 1 + 1 = 2050 (an f16 running sum would stay
    // at 2048), 2049 rounds to even (2048), 2049.5 to 2050; 120000 is beyond f16: +-inf.
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_SUM, &p, F16, {6, 3}, x, F16, {6}), {6, dInf, -dInf, 2050, 2048, 2050}));
    // The mean of three 40000s is 40000 (the sum does not overflow on the way).
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_MEAN, &p, F16, {6, 3}, x, F16, {6}),
                     {2, 40000, -40000, round_to_dtype(F16, 2050.0 / 3), 683, round_to_dtype(F16, 2049.5 / 3)}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_MAX, &p, F16, {6, 3}, x, F16, {6}), {3, 40000, -40000, 2048, 2048, 2048}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_MIN, &p, F16, {6, 3}, x, F16, {6}), {1, 40000, -40000, 1, 0, 0.5}));
    // 256 * 256 * 2 = 131072 overflows f16; 256 * 256 / 512 = 128 does not (f32 on the way).
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_PROD, &p, F16, {3, 3}, {256, 256, 2, 256, 256, 1.0 / 512, 0.5, 3, 4}, F16, {3}),
                     {dInf, 128, 6}));
    // NaN propagates through all five; -inf and the largest f16 (65504) are ordinary values.
    std::vector<double> n = {1, dNaN, 3, -dInf, 2, 65504};
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_SUM, &p, F16, {2, 3}, n, F16, {2}), {dNaN, -dInf}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_MEAN, &p, F16, {2, 3}, n, F16, {2}), {dNaN, -dInf}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_MAX, &p, F16, {2, 3}, n, F16, {2}), {dNaN, 65504}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_MIN, &p, F16, {2, 3}, n, F16, {2}), {dNaN, -dInf}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_PROD, &p, F16, {2, 3}, n, F16, {2}), {dNaN, -dInf}));
    // Long rows (split into partial sums across workgroups, partials f32): 20000 x 4 sums to 80000
    // (inf in f16) while the mean stays 4; 20000 x 3 sums to 60000 (finite).
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_SUM, nullptr, F16, {20000}, std::vector<double>(20000, 4.0), F16, {}), {dInf}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_MEAN, nullptr, F16, {20000}, std::vector<double>(20000, 4.0), F16, {}), {4}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_SUM, nullptr, F16, {20000}, std::vector<double>(20000, 3.0), F16, {}), {60000}));
    // Empty set: sum 0, prod 1, mean NaN.
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_SUM, &p, F16, {2, 0}, {}, F16, {2}), {0, 0}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_PROD, &p, F16, {2, 0}, {}, F16, {2}), {1, 1}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_MEAN, &p, F16, {2, 0}, {}, F16, {2}), {dNaN, dNaN}));
}

TEST_F(ReduceMore, F16LogsumexpVarStdNorm) {
    auto p = reduce_params({1}, false);
    EXPECT_TRUE(near_f16(run_dt(TGL_OP_LOGSUMEXP, &p, F16, {4, 2}, {0, 0, 11, 11, -dInf, -dInf, dNaN, 1}, F16, {4}),
                         {std::log(2.0), 11 + std::log(2.0), -dInf, dNaN}));
    // var of [-40000, 40000] is 1.6e9 (inf in f16), its std 40000 (finite: computed in f32).
    auto v = var_params({1}, false, 0.0f);
    std::vector<double> x = {-40000, 40000, 1, 2, 3, 4};
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_VAR, &v, F16, {3, 2}, x, F16, {3}), {dInf, 0.25, 0.25}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_STD, &v, F16, {3, 2}, x, F16, {3}), {40000, 0.5, 0.5}));
    v = var_params({}, false, 1.0f);
    EXPECT_TRUE(near_f16(run_dt(TGL_OP_VAR, &v, F16, {4}, {1, 2, 3, 4}, F16, {}), {5.0 / 3}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_STD, &v, F16, {3}, {1, dNaN, 2}, F16, {}), {dNaN}));
    // ord 2 of [300, 400] is 500 although 300^2 overflows f16; ord 1 of [40000, 40000] overflows.
    auto n1 = norm_params({1}, false, 1.0f), n2 = norm_params({1}, false, 2.0f);
    std::vector<double> y = {300, -400, 40000, 40000, dInf, 1, dNaN, 1};
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_NORM, &n1, F16, {4, 2}, y, F16, {4}), {700, dInf, dInf, dNaN}));
    EXPECT_TRUE(near_f16(run_dt(TGL_OP_NORM, &n2, F16, {4, 2}, y, F16, {4}), {500, 40000 * std::sqrt(2.0), dInf, dNaN}));
}

TEST_F(ReduceMore, F16Scans) {
    auto p = scan_params(0, false, false);
    // The running value is f32: 40000 + 40000 is inf in f16 but 40000 again one step later.
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {3}, {40000, 40000, -40000}, F16, {3}), {40000, dInf, 40000}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {3}, {2048, 1, 1}, F16, {3}), {2048, 2048, 2050}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {4}, {1, dNaN, 1, 1}, F16, {4}), {1, dNaN, dNaN, dNaN}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMPROD, &p, F16, {3}, {256, 256, 1.0 / 256}, F16, {3}), {256, dInf, 256}));
    p = scan_params(0, true, true);
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {4}, {1, 2, 3, 4}, F16, {4}), {9, 7, 4, 0}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMPROD, &p, F16, {4}, {1, 2, 3, 4}, F16, {4}), {24, 12, 4, 1}));
    // Several blocks per row (carries through f32 scratch): 3000 ones, exact integers up to 2048,
    // then f16 rounds to even steps of 2.
    std::vector<double> ones(3000, 1.0), want(3000);
    for (int i = 0; i < 3000; ++i) want[size_t(i)] = round_to_dtype(F16, i + 1);
    p = scan_params(0, false, false);
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {3000}, ones, F16, {3000}), want));
}

// Odd lengths at odd element offsets: halves share 32-bit words with their neighbours (and with
// bytes outside the view, which must stay unchanged; run_views checks the guards and gaps).
TEST_F(ReduceMore, F16OddLengthsAtOddOffsets) {
    Layout odd;
    odd.pad_front = 1;
    odd.pad_back = 3;
    auto at_odd = [&](const Shape& s) { return make_view(s, odd); };
    std::vector<double> x7 = {1, 2, 3, 4, 5, 6, 7};
    EXPECT_TRUE(same(F16, run_views(TGL_OP_SUM, nullptr, F16, at_odd({7}), x7, F16, at_odd({})), {28}));
    EXPECT_TRUE(same(F16, run_views(TGL_OP_MEAN, nullptr, F16, at_odd({7}), x7, F16, at_odd({})), {4}));
    EXPECT_TRUE(same(F16, run_views(TGL_OP_MAX, nullptr, F16, at_odd({7}), x7, F16, at_odd({})), {7}));
    EXPECT_TRUE(same(F16, run_views(TGL_OP_MIN, nullptr, F16, at_odd({7}), x7, F16, at_odd({})), {1}));
    EXPECT_TRUE(same(F16, run_views(TGL_OP_PROD, nullptr, F16, at_odd({7}), x7, F16, at_odd({})), {5040}));
    EXPECT_TRUE(near_f16(run_views(TGL_OP_VAR, nullptr, F16, at_odd({7}), x7, F16, at_odd({})), {28.0 / 6}));
    EXPECT_TRUE(near_f16(run_views(TGL_OP_STD, nullptr, F16, at_odd({7}), x7, F16, at_odd({})), {std::sqrt(28.0 / 6)}));
    EXPECT_TRUE(near_f16(run_views(TGL_OP_NORM, nullptr, F16, at_odd({7}), x7, F16, at_odd({})), {std::sqrt(140.0)}));
    EXPECT_TRUE(near_f16(run_views(TGL_OP_LOGSUMEXP, nullptr, F16, at_odd({7}), x7, F16, at_odd({})),
                         {7 + std::log(1 + std::exp(-1.0) + std::exp(-2.0) + std::exp(-3.0) + std::exp(-4.0) +
                                       std::exp(-5.0) + std::exp(-6.0))}));
    EXPECT_TRUE(same(F16, run_views(TGL_OP_CUMSUM, nullptr, F16, at_odd({7}), x7, F16, at_odd({7})), {1, 3, 6, 10, 15, 21, 28}));
    EXPECT_TRUE(same(F16, run_views(TGL_OP_CUMPROD, nullptr, F16, at_odd({7}), x7, F16, at_odd({7})),
                     {1, 2, 6, 24, 120, 720, 5040}));
    // Many outputs in neighbouring halves, each from its own workgroup (rows of 301) or invocation
    // (rows of 5); and scans of rows longer than one block.
    auto p = reduce_params({1}, false);
    for (int64_t len : {5, 301}) {
        SCOPED_TRACE("rows of " + std::to_string(len));
        std::vector<double> x, sum, mx;
        for (int r = 0; r < 7; ++r) {
            for (int64_t i = 0; i < len; ++i) x.push_back(double((r + i) % 4));
            double s = 0, m = 0;
            for (int64_t i = 0; i < len; ++i) {
                s += double((r + i) % 4);
                m = std::max(m, double((r + i) % 4));
            }
            sum.push_back(s);
            mx.push_back(m);
        }
        EXPECT_TRUE(same(F16, run_views(TGL_OP_SUM, &p, F16, at_odd({7, len}), x, F16, at_odd({7})), sum));
        EXPECT_TRUE(same(F16, run_views(TGL_OP_MAX, &p, F16, at_odd({7, len}), x, F16, at_odd({7})), mx));
        auto s = scan_params(1, false, false);
        std::vector<double> cs = run_views(TGL_OP_CUMSUM, &s, F16, at_odd({7, len}), x, F16, at_odd({7, len}));
        ASSERT_EQ(cs.size(), x.size());
        for (int r = 0; r < 7; ++r) EXPECT_EQ(cs[size_t(r * len + len - 1)], sum[size_t(r)]) << "row " << r;
    }
}

// x and y must have one dtype (f32 or f16); bf16 is not a storage type of these ops.
TEST_F(ReduceMore, F16MixedDtypesAreRejected) {
    Device& d = dev();
    for (tgl_op op : {TGL_OP_SUM, TGL_OP_MEAN, TGL_OP_MAX, TGL_OP_MIN, TGL_OP_PROD, TGL_OP_LOGSUMEXP, TGL_OP_VAR,
                      TGL_OP_STD, TGL_OP_NORM, TGL_OP_CUMSUM, TGL_OP_CUMPROD}) {
        SCOPED_TRACE("op " + std::to_string(op));
        const bool scan = op == TGL_OP_CUMSUM || op == TGL_OP_CUMPROD;
        const Shape ys = scan ? Shape{2, 3} : Shape{};
        struct Pair {
            tgl_dtype x, y;
            std::vector<std::string> tokens;
        };
        for (const Pair& c : {Pair{F16, F32, {"outputs[0] (y)", "f16", "f32"}}, Pair{F32, F16, {"outputs[0] (y)", "f32", "f16"}},
                              Pair{TGL_DTYPE_BF16, TGL_DTYPE_BF16, {"inputs[0] (x)", "bf16"}}}) {
            DeviceTensor in(d, contiguous({2, 3}), c.x);
            in.set_logical({1, 2, 3, 4, 5, 6});
            DeviceTensor out(d, contiguous(ys), c.y);
            out.poison();
            EXPECT_TGL_ERROR(d.run(op, nullptr, {in.desc()}, {out.desc()}), TGL_ERROR_DTYPE_MISMATCH, c.tokens);
            EXPECT_TRUE(out.unchanged());
            EXPECT_TRUE(in.unchanged());
        }
    }
}

// ----- bad input ----------------------------------------------------------------------------------

// Runs op with x (2, 3) f32 and a poisoned y; expects `want` naming `tokens`, and y unchanged.
void expect_rejected(tgl_op op, const void* params, const Shape& ys, tgl_dtype yt, tgl_status want,
                     const std::vector<std::string>& tokens, const Shape& xs = {2, 3}) {
    Device& d = dev();
    DeviceTensor in(d, contiguous(xs), F32);
    in.set_logical(std::vector<double>(size_t(numel(xs)), 1.0));
    DeviceTensor out(d, contiguous(ys), yt);
    out.poison();
    EXPECT_TGL_ERROR(d.run(op, params, {in.desc()}, {out.desc()}), want, tokens);
    EXPECT_TRUE(out.unchanged());
    EXPECT_TRUE(in.unchanged());
}

TEST_F(ReduceMore, BadParams) {
    auto a = arg_params(2, false);
    expect_rejected(TGL_OP_ARGMAX, &a, {2}, I32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "2"});
    a = arg_params(-3, false);
    expect_rejected(TGL_OP_ARGMIN, &a, {2}, I32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "-3"});
    a = arg_params(1, false);
    expect_rejected(TGL_OP_ARGMAX, &a, {2, 0}, I32, TGL_ERROR_INVALID_ARGUMENT, {"argmax", "empty"}, {2, 0});
    expect_rejected(TGL_OP_ARGMAX, &a, {2}, F32, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)", "i32"});
    expect_rejected(TGL_OP_ARGMAX, &a, {3}, I32, TGL_ERROR_SHAPE_MISMATCH, {"(3)", "(2)"});
    a.reserved = 1;
    expect_rejected(TGL_OP_ARGMAX, &a, {2}, I32, TGL_ERROR_INVALID_ARGUMENT, {"reserved"});
    a = arg_params(1, false);
    a.struct_size = 12;
    expect_rejected(TGL_OP_ARGMAX, &a, {2}, I32, TGL_ERROR_PARAMS_SIZE, {"struct_size", "12"});

    auto n = norm_params({1}, false, 3.0f);
    expect_rejected(TGL_OP_NORM, &n, {2}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->ord", "3"});
    n = norm_params({1}, false, 0.0f);
    expect_rejected(TGL_OP_NORM, &n, {2}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->ord"});
    n = norm_params({1, 1}, false, 2.0f);
    expect_rejected(TGL_OP_NORM, &n, {2}, F32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axes[1]", "repeats"});

    auto v = var_params({2}, false, 1.0f);
    expect_rejected(TGL_OP_VAR, &v, {2}, F32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axes[0]", "2"});
    v = var_params({1}, false, std::numeric_limits<float>::quiet_NaN());
    expect_rejected(TGL_OP_STD, &v, {2}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->correction"});
    v = var_params({1}, false, 1.0f);
    v.struct_size = sizeof(tgl_reduce_params) - 4;
    expect_rejected(TGL_OP_VAR, &v, {2}, F32, TGL_ERROR_PARAMS_SIZE, {"struct_size"});

    auto r = reduce_params({1}, false);
    expect_rejected(TGL_OP_ANY, &r, {2}, F32, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)", "bool"});
    expect_rejected(TGL_OP_LOGSUMEXP, &r, {2}, TGL_DTYPE_F16, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)"});
    r.reserved = 7;
    expect_rejected(TGL_OP_ALL, &r, {2}, TGL_DTYPE_BOOL, TGL_ERROR_INVALID_ARGUMENT, {"reserved"});

    auto s = scan_params(2, false, false);
    expect_rejected(TGL_OP_CUMSUM, &s, {2, 3}, F32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "2"});
    s = scan_params(0, false, false);
    s.exclusive = 2;
    expect_rejected(TGL_OP_CUMSUM, &s, {2, 3}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->exclusive"});
    s = scan_params(0, false, false);
    s.reverse = 5;
    expect_rejected(TGL_OP_CUMPROD, &s, {2, 3}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->reverse", "5"});
    s = scan_params(0, false, false);
    expect_rejected(TGL_OP_CUMPROD, &s, {3, 2}, F32, TGL_ERROR_SHAPE_MISMATCH, {"(3, 2)", "(2, 3)"});
}

// A scan whose output overlaps its input is rejected (it is not an elementwise op).
TEST_F(ReduceMore, ScanInPlaceIsRejected) {
    Device& d = dev();
    DeviceTensor t(d, contiguous({4}), F32);
    t.set_logical({1, 2, 3, 4});
    EXPECT_TGL_ERROR(d.run(TGL_OP_CUMSUM, nullptr, {t.desc()}, {t.desc()}), TGL_ERROR_INVALID_ARGUMENT, {"overlaps"});
    EXPECT_TRUE(t.unchanged());
}

}  // namespace
}  // namespace conf
