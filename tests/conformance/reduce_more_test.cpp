// Known answers and bad input for argmax, argmin, logsumexp, var, std, any, all, norm, cumsum and
// cumprod: small hand-checked cases with ties, NaN, inf, empty sets, keepdims, negative axes,
// exclusive and reverse scans, in every dtype of the ops' catalogue rules.
#include "common.h"

#include <cmath>

namespace conf {
namespace {

using ReduceMore = ConformanceTest;

const double dInf = std::numeric_limits<double>::infinity();
const double dNaN = std::numeric_limits<double>::quiet_NaN();

// Runs `op` on a contiguous x of dtype xt and a poisoned contiguous y of dtype yt; checks guards,
// that every output element was written and that x is unchanged; returns y's values.
std::vector<double> run_dt(tgl_op op, const void* params, tgl_dtype xt, const Shape& xs, const std::vector<double>& x,
                           tgl_dtype yt, const Shape& ys) {
    Device& d = dev();
    DeviceTensor in(d, contiguous(xs), xt);
    in.set_logical(x);
    DeviceTensor out(d, contiguous(ys), yt);
    out.poison();
    d.run_ok(op, params, {in.desc()}, {out.desc()});
    std::vector<double> y = out.read_logical();
    ::testing::AssertionResult r = in.unchanged();
    if (!r) throw Failure(std::string("input was modified by the op: ") + r.message());
    return y;
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
