// The reduce family (sum, mean, max, min, prod, logsumexp, var, std, any, all, norm): known answers
// on small hand-checked cases with NaN, inf, empty sets, keepdims, negative and repeated axes, in
// every dtype of the ops' catalogue rules; the f16 storage of every float reduction and scan
// (computed in f32 or wider, rounded once at the store, f16 overflow to inf, odd lengths at odd
// element offsets; the scans are checked beside the reductions there); any input and output
// layout; bad input and bad params.
#include "any_layout.h"
#include "bad_input.h"
#include "reductions.h"

#include <algorithm>
#include <cmath>

namespace conf {
namespace {

using KnownAnswer = ConformanceTest;
using ReduceMore = ConformanceTest;

// ----- known answers ------------------------------------------------------------------------------

TEST_F(KnownAnswer, SumOverAxes) {
    // x[i][j][k] = 1 + 12 i + 4 j + k, shape (2, 3, 4), values 1..24.
    const Shape xs = {2, 3, 4};
    const std::vector<float> x = iota_values(24);
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {0}, false, {3, 4}), {14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36}, {3, 4}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {1}, false, {2, 4}), {15, 18, 21, 24, 51, 54, 57, 60}, {2, 4}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {-1}, false, {2, 3}), {10, 26, 42, 58, 74, 90}, {2, 3}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {2}, true, {2, 3, 1}), {10, 26, 42, 58, 74, 90}, {2, 3, 1}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {0, 2}, false, {3}), {68, 100, 132}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {2, -3}, true, {1, 3, 1}), {68, 100, 132}, {1, 3, 1}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {1, 0}, false, {4}), {66, 72, 78, 84}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {}, false, {}), {300}, {}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {0, 1, 2}, true, {1, 1, 1}), {300}, {1, 1, 1}));
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, xs, x, {}, true, {1, 1, 1}), {300}, {1, 1, 1}));
    EXPECT_TRUE(exact(run(TGL_OP_SUM, nullptr, {xs}, {x}, {}), {300}, {})) << "NULL params: all axes, no keepdims";
    // rank 0 input: reducing "all axes" of a scalar is the scalar.
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, {}, {2.5f}, {}, false, {}), {2.5f}, {}));
    // specials: inf + -inf = NaN, NaN propagates.
    EXPECT_TRUE(exact(reduce(TGL_OP_SUM, {3, 2}, {kInf, 1, kInf, -kInf, kNaN, 1}, {1}, false, {3}), {kInf, kNaN, kNaN}));
}

TEST_F(KnownAnswer, MeanMaxMinProd) {
    const Shape xs = {2, 3};
    const std::vector<float> x = {3, -1, 4, 1, -5, 9};
    EXPECT_TRUE(close_to(reduce(TGL_OP_MEAN, xs, x, {1}, false, {2}), f32({2.0, 5.0 / 3}), tol::kReduction));
    EXPECT_TRUE(close_to(reduce(TGL_OP_MEAN, xs, x, {0}, true, {1, 3}), {2, -3, 6.5f}, tol::kReduction));
    EXPECT_TRUE(close_to(reduce(TGL_OP_MEAN, xs, x, {}, false, {}), f32({11.0 / 6}), tol::kReduction));
    EXPECT_TRUE(exact(reduce(TGL_OP_MAX, xs, x, {1}, false, {2}), {4, 9}));
    EXPECT_TRUE(exact(reduce(TGL_OP_MAX, xs, x, {-2}, false, {3}), {3, -1, 9}));
    EXPECT_TRUE(exact(reduce(TGL_OP_MAX, xs, x, {0, 1}, false, {}), {9}, {}));
    EXPECT_TRUE(exact(reduce(TGL_OP_MIN, xs, x, {1}, true, {2, 1}), {-1, -5}, {2, 1}));
    EXPECT_TRUE(exact(reduce(TGL_OP_MIN, xs, x, {0}, false, {3}), {1, -5, 4}));
    EXPECT_TRUE(exact(reduce(TGL_OP_MIN, xs, x, {}, true, {1, 1}), {-5}, {1, 1}));
    EXPECT_TRUE(exact(reduce(TGL_OP_PROD, xs, x, {1}, false, {2}), {-12, -45}));
    EXPECT_TRUE(exact(reduce(TGL_OP_PROD, xs, x, {0}, false, {3}), {3, 5, 36}));
    EXPECT_TRUE(exact(reduce(TGL_OP_PROD, xs, x, {}, false, {}), {540}, {}));
    // NaN propagates through max/min wherever it sits; -inf/inf are ordinary.
    const std::vector<float> s = {1, kNaN, 3, kNaN, 5, 6, -kInf, 0, kInf, 2, 2, 2};
    EXPECT_TRUE(exact(reduce(TGL_OP_MAX, {4, 3}, s, {1}, false, {4}), {kNaN, kNaN, kInf, 2}));
    EXPECT_TRUE(exact(reduce(TGL_OP_MIN, {4, 3}, s, {1}, false, {4}), {kNaN, kNaN, -kInf, 2}));
    EXPECT_TRUE(exact(reduce(TGL_OP_PROD, {2, 2}, {0, kInf, 2, kInf}, {1}, false, {2}), {kNaN, kInf}));
    EXPECT_TRUE(exact(reduce(TGL_OP_MEAN, {2, 2}, {kInf, 1, kNaN, 1}, {1}, false, {2}), {kInf, kNaN}));
}

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

// ----- f16 storage: every float reduction and scan ------------------------------------------------

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

// x and y must have one dtype (f32, f16 or bf16).
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
                              Pair{TGL_DTYPE_BF16, F16, {"outputs[0] (y)", "bf16", "f16"}}}) {
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

// ----- any layout ---------------------------------------------------------------------------------

TEST_F(Layouts, ReductionsOnAnyLayout) {
    Device& d = dev();
    for (int round = 0; round < 60; ++round) {
        Shape xs = random_shape(rng_, 0, 8, 800);
        const int r = int(xs.size());
        std::vector<int> axes;
        std::vector<bool> red(size_t(r), false);
        for (int k = 0; k < r; ++k)
            if (rng_.chance(0.4)) {
                axes.push_back(rng_.chance(0.5) ? k : k - r);  // negative axes too
                red[size_t(k)] = true;
            }
        std::shuffle(axes.begin(), axes.end(), rng_.engine());
        if (axes.empty()) std::fill(red.begin(), red.end(), true);  // n_axes == 0: all axes
        bool keep = rng_.chance(0.5);
        Shape ys;
        for (int k = 0; k < r; ++k) {
            if (!red[size_t(k)]) ys.push_back(xs[size_t(k)]);
            else if (keep) ys.push_back(1);
        }
        const tgl_op ops[] = {TGL_OP_SUM, TGL_OP_MAX, TGL_OP_MIN, TGL_OP_PROD};
        tgl_op op = ops[rng_.integer(0, 3)];
        Input x = make_input(d, xs, rng_);
        if (op == TGL_OP_PROD) {  // keep products small: values in {-1, 1, 2}
            std::vector<float> storage(static_cast<size_t>(x.t->view().storage));
            for (auto& v : storage) v = rng_.pick(std::vector<float>{-1, 1, 1, 2});
            x.t->set_storage(storage);
            x.logical = gather(storage, x.t->view());
        }
        auto y = make_output(d, ys, rng_);
        tgl_reduce_params p = reduce_params(axes, keep);
        std::string ax;
        for (int a : axes) ax += std::to_string(a) + " ";
        SCOPED_TRACE(describe(("reduce op " + std::to_string(op) + " axes {" + ax + "} keepdims " + std::to_string(keep)).c_str(),
                              {x.t.get(), y.get()}));
        d.run_ok(op, &p, {x.t->desc()}, {y->desc()});
        // Host: fold each x element into the output element it belongs to.
        std::vector<double> acc(static_cast<size_t>(numel(ys)),
                                op == TGL_OP_SUM ? 0.0 : op == TGL_OP_PROD ? 1.0 : op == TGL_OP_MAX ? -1e300 : 1e300);
        for (int64_t i = 0; i < numel(xs); ++i) {
            auto idx = unravel(i, xs);
            std::vector<int64_t> yi;
            for (int k = 0; k < r; ++k) {
                if (!red[size_t(k)]) yi.push_back(idx[size_t(k)]);
                else if (keep) yi.push_back(0);
            }
            double v = x.logical[size_t(i)];
            double& a = acc[size_t(ravel(yi, ys))];
            a = op == TGL_OP_SUM ? a + v : op == TGL_OP_PROD ? a * v : op == TGL_OP_MAX ? std::max(a, v) : std::min(a, v);
        }
        std::vector<float> want(acc.begin(), acc.end());
        EXPECT_TRUE(compare(y->read(), want, ys, 0, CompareMode::Exact));
        EXPECT_TRUE(x.t->unchanged());
    }
}

// ----- bad input ----------------------------------------------------------------------------------

std::vector<BadCase> reduce_bad_cases() {
    std::vector<BadCase> c;
    c.push_back({"ReduceOutputShape", TGL_ERROR_SHAPE_MISMATCH, {"output y"}, [](Ctx& k) {
                     return k.sum(k.x.desc(), with(k.r.desc(), [](tgl_tensor& t) { t.shape[0] = 3; }), &k.rp);
                 }});
    c.push_back({"ReduceKeepdimsShape", TGL_ERROR_SHAPE_MISMATCH, {"output y", "keepdims"}, [](Ctx& k) {
                     tgl_reduce_params p = reduce_params({1}, true);  // wants (2, 1), r is (2,)
                     return k.sum(k.x.desc(), k.r.desc(), &p);
                 }});
    c.push_back({"AxisOutOfRange", TGL_ERROR_AXIS_OUT_OF_RANGE, {"axes[0]"}, [](Ctx& k) {
                     tgl_reduce_params p = reduce_params({2}, false);
                     return k.sum(k.x.desc(), k.r.desc(), &p);
                 }});
    c.push_back({"NegativeAxisOutOfRange", TGL_ERROR_AXIS_OUT_OF_RANGE, {"axes[0]"}, [](Ctx& k) {
                     tgl_reduce_params p = reduce_params({-3}, false);
                     return k.sum(k.x.desc(), k.r.desc(), &p);
                 }});
    c.push_back({"RepeatedAxis", TGL_ERROR_AXIS_OUT_OF_RANGE, {"axes[1]"}, [](Ctx& k) {
                     tgl_reduce_params p = reduce_params({1, -1}, false);
                     return k.sum(k.x.desc(), k.r.desc(), &p);
                 }});
    c.push_back({"TooManyAxes", TGL_ERROR_INVALID_ARGUMENT, {"n_axes"}, [](Ctx& k) {
                     tgl_reduce_params p = reduce_params({1}, false);
                     p.n_axes = TGL_MAX_RANK + 1;
                     return k.sum(k.x.desc(), k.r.desc(), &p);
                 }});
    c.push_back({"ReduceParamsSize", TGL_ERROR_PARAMS_SIZE, {"struct_size"}, [](Ctx& k) {
                     tgl_reduce_params p = k.rp;
                     p.struct_size = sizeof p + 4;
                     return k.sum(k.x.desc(), k.r.desc(), &p);
                 }});
    c.push_back({"ReduceOutputOverlapsInput", TGL_ERROR_INVALID_ARGUMENT, {"outputs[0]", "inputs[0]"}, [](Ctx& k) {
                     return k.sum(k.x.desc(), with(k.r.desc(), [&](tgl_tensor& t) {
                                      t.buffer = k.x.buffer();
                                      t.byte_offset = k.x.desc().byte_offset + 4;
                                  }),
                                  &k.rp);
                 }});
    c.push_back({"MaxOverEmptyAxis", TGL_ERROR_INVALID_ARGUMENT, {"'max'", "x has shape"}, [](Ctx& k) {
                     tgl_tensor x = with(k.x.desc(), [](tgl_tensor& t) { t.shape[1] = 0; });
                     tgl_tensor r = k.r.desc();
                     return k.api.run_op(k.d.handle(), TGL_OP_MAX, &k.rp, &x, 1, &r, 1);
                 }});
    c.push_back({"MinOverEmptyAxis", TGL_ERROR_INVALID_ARGUMENT, {"'min'", "x has shape"}, [](Ctx& k) {
                     tgl_tensor x = with(k.x.desc(), [](tgl_tensor& t) { t.shape[1] = 0; });
                     tgl_tensor r = k.r.desc();
                     return k.api.run_op(k.d.handle(), TGL_OP_MIN, &k.rp, &x, 1, &r, 1);
                 }});
    return c;
}

INSTANTIATE_TEST_SUITE_P(Reduce, BadInput, ::testing::ValuesIn(reduce_bad_cases()), bad_case_name);

TEST_F(ReduceMore, BadParams) {
    auto n = norm_params({1}, false, 3.0f);
    expect_reduction_rejected(TGL_OP_NORM, &n, {2}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->ord", "3"});
    n = norm_params({1}, false, 0.0f);
    expect_reduction_rejected(TGL_OP_NORM, &n, {2}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->ord"});
    n = norm_params({1, 1}, false, 2.0f);
    expect_reduction_rejected(TGL_OP_NORM, &n, {2}, F32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axes[1]", "repeats"});

    auto v = var_params({2}, false, 1.0f);
    expect_reduction_rejected(TGL_OP_VAR, &v, {2}, F32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axes[0]", "2"});
    v = var_params({1}, false, std::numeric_limits<float>::quiet_NaN());
    expect_reduction_rejected(TGL_OP_STD, &v, {2}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->correction"});
    v = var_params({1}, false, 1.0f);
    v.struct_size = sizeof(tgl_reduce_params) - 4;
    expect_reduction_rejected(TGL_OP_VAR, &v, {2}, F32, TGL_ERROR_PARAMS_SIZE, {"struct_size"});

    auto r = reduce_params({1}, false);
    expect_reduction_rejected(TGL_OP_ANY, &r, {2}, F32, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)", "bool"});
    expect_reduction_rejected(TGL_OP_LOGSUMEXP, &r, {2}, TGL_DTYPE_F16, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)"});
    r.reserved = 7;
    expect_reduction_rejected(TGL_OP_ALL, &r, {2}, TGL_DTYPE_BOOL, TGL_ERROR_INVALID_ARGUMENT, {"reserved"});
}

}  // namespace
}  // namespace conf
