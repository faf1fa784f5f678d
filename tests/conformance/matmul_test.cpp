// The matmul family (matmul, linear, qkv, grouped and quantized matmul): known answers (f32 and f16
// storage, transposes, alpha/beta, K = 0, broadcast batches, every activation), any input and
// output layout, and bad input, run on every plugin.
// Expected values are worked out by hand in the comments (the activations by their defining
// formulas in double).
#include <limits>
#include "any_layout.h"
#include "bad_input.h"

#include "tgl_test/op_runner.h"

#include <cmath>

namespace conf {
namespace {

using MatmulFamily = ConformanceTest;
using KnownAnswer = ConformanceTest;
using Vals = std::vector<double>;

InputArg in(tgl_dtype dt, const Shape& s, const Vals& v) { return input_values(dt, s, v); }

std::vector<Vals> run_all(tgl_op op, const void* params, const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs) {
    return run_op_values(dev(), op, params, ins, outs);
}
Vals run1(tgl_op op, const void* params, const std::vector<InputArg>& ins, const OutputArg& out) {
    return run_all(op, params, ins, {out}).at(0);
}

// Per element; the expected values are rounded to the dtype first (one rounding of the exact
// value), f32 within a few ulp of accumulation order, f16 within one f16 rounding step.
::testing::AssertionResult near(tgl_dtype dt, const Vals& got, const Vals& want, double tol = 1e-11) {
    Vals w = want;
    for (double& v : w) v = round_to_dtype(dt, v);
    return compare(dt, got, w, Shape{int64_t(want.size())}, dt == F16 ? 1e-6 : tol, CompareMode::PerElement);
}

tgl_linear_params lin(uint32_t act = TGL_ACTIVATION_NONE) { return tgl_linear_params{sizeof(tgl_linear_params), act}; }
tgl_linear_int4_params lin4(uint32_t group, uint32_t act = TGL_ACTIVATION_NONE) {
    return tgl_linear_int4_params{sizeof(tgl_linear_int4_params), act, group, 0};
}

double act(uint32_t a, double v) {
    switch (a) {
    case TGL_ACTIVATION_RELU: return v > 0 ? v : 0;
    case TGL_ACTIVATION_GELU: return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    case TGL_ACTIVATION_GELU_TANH: return 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
    case TGL_ACTIVATION_SILU: return v / (1 + std::exp(-v));
    default: return v;
    }
}

TEST_F(MatmulFamily, MatmulF16) {
    // [[1, 2, 3], [4, 5, 6]] @ [[0.5, -1], [2, 0.25], [-3, 1]] = [[-4.5, 2.5], [-6, 3.25]].
    EXPECT_TRUE(near(F16, run1(TGL_OP_MATMUL, nullptr, {in(F16, {2, 3}, {1, 2, 3, 4, 5, 6}), in(F16, {3, 2}, {0.5, -1, 2, 0.25, -3, 1})},
                               output_of(F16, {2, 2})),
                     {-4.5, 2.5, -6, 3.25}));
    // One rounding at the store: 2048 + 1 + 1 = 2050 (f16-representable); rounding after each
    // step would give 2048 (2049 ties to even).
    EXPECT_TRUE(near(F16, run1(TGL_OP_MATMUL, nullptr, {in(F16, {1, 3}, {2048, 1, 1}), in(F16, {3, 1}, {1, 1, 1})}, output_of(F16, {1, 1})),
                     {2050}));
    // alpha, beta with a transposed B: C = 2 * A @ B^T + 1 * C, A (1, 2) = [1, 2], B (2, 2) = [[1, 3], [2, 4]].
    tgl_matmul_params p = matmul_params(false, true, 2.0f, 1.0f);
    OutputArg c = output_of(F16, {1, 2});
    c.init = {10, 20};
    // A @ B^T = [1 + 6, 2 + 8] = [7, 10] -> 2 * [7, 10] + [10, 20] = [24, 40].
    EXPECT_TRUE(near(F16, run1(TGL_OP_MATMUL, &p, {in(F16, {1, 2}, {1, 2}), in(F16, {2, 2}, {1, 3, 2, 4})}, c), {24, 40}));
}

// Mixed weights: f32 activations with f16 or bf16 W (and bias of any of the three), y f32. The
// weights convert exactly and the sums are f32 (never rounded to W's dtype): x = [1, 2^-20, 3],
// W = [[1, 1, 0], [1 + u, 0, -1]] (u = 2^-7 for bf16, 2^-10 for f16), bias [0.5, 0.25]:
// y = [1.5 + 2^-20, 1 + u - 3 + 0.25].
TEST_F(MatmulFamily, MixedWeightsUnderF32Activations) {
    const double p20 = std::ldexp(1.0, -20);
    for (tgl_dtype wdt : {F16, BF16})
        for (tgl_dtype bdt : {F32, F16, BF16}) {
            SCOPED_TRACE("W " + std::string(dtype_name(wdt)) + ", bias " + dtype_name(bdt));
            const double u = wdt == BF16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
            const InputArg x = in(F32, {1, 3}, {1, p20, 3}), w = in(wdt, {2, 3}, {1, 1, 0, 1 + u, 0, -1}), b = in(bdt, {2}, {0.5, 0.25});
            const Vals want = {1.5 + p20, 1 + u - 3 + 0.25};
            const tgl_linear_params p = lin();
            EXPECT_TRUE(near(F32, run1(TGL_OP_LINEAR, &p, {x, w, b}, output_of(F32, {1, 2})), want, 0));
            // linear_qkv: the same two columns as q and v (k empty).
            const std::vector<Vals> qkv =
                run_all(TGL_OP_LINEAR_QKV, &p, {x, w, b}, {output_of(F32, {1, 1}), output_of(F32, {1, 0}), output_of(F32, {1, 1})});
            EXPECT_TRUE(near(F32, {qkv[0].at(0), qkv[2].at(0)}, want, 0));
            EXPECT_TRUE(qkv[1].empty());
            // grouped_linear: expert 1 of two holds W (expert 0 is NaN: never read).
            Vals w2(6, kNaN);
            for (double v : Vals{1, 1, 0, 1 + u, 0, -1}) w2.push_back(v);
            Vals b2 = {kNaN, kNaN, 0.5, 0.25};
            EXPECT_TRUE(near(F32, run1(TGL_OP_GROUPED_LINEAR, &p, {x, in(wdt, {2, 2, 3}, w2), in(I32, {1}, {1}), in(bdt, {2, 2}, b2)}, output_of(F32, {1, 2})),
                             want, 0));
            // matmul: x (1, 3) @ W^T given as B (3, 2).
            EXPECT_TRUE(near(F32, run1(TGL_OP_MATMUL, nullptr, {x, in(wdt, {3, 2}, {1, 1 + u, 1, 0, 0, -1})}, output_of(F32, {1, 2})),
                             {1 + p20, 1 + u - 3}, 0));
        }
}

TEST_F(MatmulFamily, LinearEveryActivation) {
    // x (2, 3) = [[1, -2, 3], [0.5, 0, -1]], W (2, 3) = [[1, 1, 1], [2, -1, 0.5]], bias [0.5, -1]:
    // x @ W^T = [[2, 5.5], [-0.5, 0.5]]; + bias = [[2.5, 4.5], [0, -0.5]].
    const Vals x = {1, -2, 3, 0.5, 0, -1}, w = {1, 1, 1, 2, -1, 0.5}, b = {0.5, -1};
    const Vals pre = {2.5, 4.5, 0, -0.5}, nobias = {2, 5.5, -0.5, 0.5};
    for (tgl_dtype dt : {F32, F16, BF16})
        for (uint32_t a = 0; a < TGL_ACTIVATION_COUNT_V1_0; ++a) {
            SCOPED_TRACE(std::string(dtype_name(dt)) + " activation " + std::to_string(a));
            tgl_linear_params p = lin(a);
            Vals want, want_nb;
            for (double v : pre) want.push_back(act(a, v));
            for (double v : nobias) want_nb.push_back(act(a, v));
            EXPECT_TRUE(near(dt, run1(TGL_OP_LINEAR, &p, {in(dt, {2, 3}, x), in(dt, {2, 3}, w), in(dt, {2}, b)}, output_of(dt, {2, 2})),
                             want, 1e-9));
            EXPECT_TRUE(near(dt, run1(TGL_OP_LINEAR, &p, {in(dt, {2, 3}, x), in(dt, {2, 3}, w), absent_input()}, output_of(dt, {2, 2})),
                             want_nb, 1e-9));
        }
    // x of rank 1 (a single row) and with batch dims (2, 1, 3): the same rows.
    tgl_linear_params p = lin();
    EXPECT_TRUE(near(F32, run1(TGL_OP_LINEAR, &p, {in(F32, {3}, {1, -2, 3}), in(F32, {2, 3}, w), in(F32, {2}, b)}, output_of(F32, {2})),
                     {2.5, 4.5}));
    EXPECT_TRUE(near(F32, run1(TGL_OP_LINEAR, nullptr, {in(F32, {2, 1, 3}, x), in(F32, {2, 3}, w), in(F32, {2}, b)}, output_of(F32, {2, 1, 2})),
                     pre));
    // K == 0: y = act(bias).
    tgl_linear_params relu = lin(TGL_ACTIVATION_RELU);
    EXPECT_TRUE(near(F32, run1(TGL_OP_LINEAR, &relu, {empty_input(F32, {2, 0}), empty_input(F32, {2, 0}), in(F32, {2}, b)}, output_of(F32, {2, 2})),
                     {0.5, 0, 0.5, 0}));
    // The epilogue's special values are the unary ops' (plugin_api.h, unary ops): act(+inf) = +inf;
    // relu(-inf) = 0, gelu and silu of -inf = -inf * 0 = NaN (IEEE, as PyTorch), not the limit 0.
    for (uint32_t a = 0; a < TGL_ACTIVATION_COUNT_V1_0; ++a) {
        SCOPED_TRACE("activation " + std::to_string(a) + " at +-inf");
        tgl_linear_params pa = lin(a);
        const double at_minus_inf = a == TGL_ACTIVATION_NONE ? -INFINITY : a == TGL_ACTIVATION_RELU ? 0.0 : NAN;
        EXPECT_TRUE(near(F32, run1(TGL_OP_LINEAR, &pa, {empty_input(F32, {1, 0}), empty_input(F32, {2, 0}), in(F32, {2}, {-INFINITY, INFINITY})},
                                   output_of(F32, {1, 2})),
                         {at_minus_inf, INFINITY}));
    }
}

TEST_F(MatmulFamily, LinearQkvSplitsTheColumns) {
    // x (2, 2) = [[1, 2], [3, 4]], W (4, 2) = rows [1, 0], [0, 1], [1, 1], [1, -1], bias [0, 0, 10, 0]:
    // x @ W^T + bias = [[1, 2, 13, -1], [3, 4, 17, -1]] -> q = col 0, k = col 1, v = cols 2..3.
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        tgl_linear_params p = lin();
        auto ys = run_all(TGL_OP_LINEAR_QKV, &p, {in(dt, {2, 2}, {1, 2, 3, 4}), in(dt, {4, 2}, {1, 0, 0, 1, 1, 1, 1, -1}), in(dt, {4}, {0, 0, 10, 0})},
                          {output_of(dt, {2, 1}), output_of(dt, {2, 1}), output_of(dt, {2, 2})});
        EXPECT_TRUE(near(dt, ys[0], {1, 3}));
        EXPECT_TRUE(near(dt, ys[1], {2, 4}));
        EXPECT_TRUE(near(dt, ys[2], {13, -1, 17, -1}));
        // relu, no bias, k empty (Nk = 0): q = [[1], [3]], v = relu([[1, -1], [3, -1]]... with W rows
        // [1, 0] (q), [1, 1], [1, -1] (v): v = [[3, 0], [7, 0]].
        tgl_linear_params r = lin(TGL_ACTIVATION_RELU);
        ys = run_all(TGL_OP_LINEAR_QKV, &r, {in(dt, {2, 2}, {1, 2, 3, 4}), in(dt, {3, 2}, {1, 0, 1, 1, 1, -1}), absent_input()},
                     {output_of(dt, {2, 1}), output_of(dt, {2, 0}), output_of(dt, {2, 2})});
        EXPECT_TRUE(near(dt, ys[0], {1, 3}));
        EXPECT_TRUE(ys[1].empty());
        EXPECT_TRUE(near(dt, ys[2], {3, 0, 7, 0}));
    }
}

// y[t] reads only W[index[t]]: an inf or NaN in another expert's weights leaves t's row finite
// (GLES once zero-filled the other experts' rows of a tile and multiplied them in: 0 * inf = NaN).
TEST_F(MatmulFamily, GroupedOtherExpertsSpecialsDoNotLeak) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    // Expert 0 identity, expert 1 holds inf and NaN. Rows 0 and 2 use expert 0, row 1 expert 1.
    const Vals x = {1, 2, 3, 4, 5, 6}, w = {1, 0, 0, 1, inf, 1, nan, 1};
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        tgl_linear_params p = lin();
        Vals y = run1(TGL_OP_GROUPED_LINEAR, &p, {in(dt, {3, 2}, x), in(dt, {2, 2, 2}, w), in(I32, {3}, {0, 1, 0}), absent_input()},
                      output_of(dt, {3, 2}));
        ASSERT_EQ(y.size(), 6u);
        EXPECT_EQ(y[0], 1);
        EXPECT_EQ(y[1], 2);
        EXPECT_EQ(y[2], inf);  // 3 * inf + 4 * 1
        EXPECT_TRUE(std::isnan(y[3])) << y[3];
        EXPECT_EQ(y[4], 5);
        EXPECT_EQ(y[5], 6);
    }
}

TEST_F(MatmulFamily, GroupedThreeExperts) {
    // W (3, 2, 2): expert 0 identity, 1 twice identity, 2 swaps; bias (3, 2) = [0, 0], [100, 100], [-1, -1].
    // x rows (1, 2) e2 -> (2, 1) - 1 = (1, 0); (3, 4) e0 -> (3, 4); (5, 6) e1 -> (110, 112);
    // (7, 8) e2 -> (8, 7) - 1 = (7, 6).
    const Vals x = {1, 2, 3, 4, 5, 6, 7, 8}, w = {1, 0, 0, 1, 2, 0, 0, 2, 0, 1, 1, 0}, b = {0, 0, 100, 100, -1, -1};
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        tgl_linear_params p = lin();
        EXPECT_TRUE(near(dt, run1(TGL_OP_GROUPED_LINEAR, &p, {in(dt, {4, 2}, x), in(dt, {3, 2, 2}, w), in(I32, {4}, {2, 0, 1, 2}), in(dt, {3, 2}, b)},
                                  output_of(dt, {4, 2})),
                         {1, 0, 3, 4, 110, 112, 7, 6}));
        // Without bias, relu (all positive), index [1, 1, 0, 2]: (2, 4), (6, 8), (5, 6), (8, 7).
        tgl_linear_params r = lin(TGL_ACTIVATION_RELU);
        EXPECT_TRUE(near(dt, run1(TGL_OP_GROUPED_LINEAR, &r, {in(dt, {4, 2}, x), in(dt, {3, 2, 2}, w), in(I32, {4}, {1, 1, 0, 2}), absent_input()},
                                  output_of(dt, {4, 2})),
                         {2, 4, 6, 8, 5, 6, 8, 7}));
    }
}

TEST_F(MatmulFamily, Int8WithScales) {
    // Wq (2, 3) = [[10, -20, 127], [-128, 1, 0]], scale [0.5, 0.25] -> W = [[5, -10, 63.5], [-32, 0.25, 0]].
    // x = [1, 2, -1]: y = [5 - 20 - 63.5 + 1, -32 + 0.5 + 0 + 0] = [-77.5, -31.5] (bias [1, 0]).
    for (tgl_dtype dt : {F32, F16, BF16})
        for (tgl_dtype st : {F32, F16}) {
            SCOPED_TRACE(std::string(dtype_name(dt)) + " scale " + dtype_name(st));
            EXPECT_TRUE(near(dt, run1(TGL_OP_LINEAR_INT8, nullptr,
                                      {in(dt, {1, 3}, {1, 2, -1}), in(I8, {2, 3}, {10, -20, 127, -128, 1, 0}), in(st, {2}, {0.5, 0.25}),
                                       in(dt, {2}, {1, 0})},
                                      output_of(dt, {1, 2})),
                             {-77.5, -31.5}));
            tgl_linear_params r = lin(TGL_ACTIVATION_RELU);
            EXPECT_TRUE(near(dt, run1(TGL_OP_LINEAR_INT8, &r,
                                      {in(dt, {2, 3}, {1, 2, -1, 0, 0, -4}), in(I8, {2, 3}, {10, -20, 127, -128, 1, 0}), in(st, {2}, {0.5, 0.25}),
                                       absent_input()},
                                      output_of(dt, {2, 2})),
                             {0, 0, 0, 0}));  // [-78.5, -31.5], [-254, 0] -> relu
        }
}

// Wq bytes of one row of K = 32 * n_bytes / 16.
Vals bytes(size_t n, double v) { return Vals(n, v); }

TEST_F(MatmulFamily, Int4NibbleOrder) {
    // Byte 0 of row 0 = 0x3A: k = 0 (low nibble) is 10, k = 1 (high nibble) is 3. Other bytes 0x88
    // (two 8s: zero weight without a zero point). scale 0.5, K = 32, group 32.
    Vals wq = bytes(16, 0x88);
    wq[0] = 0x3A;
    Vals e0(32, 0), e1(32, 0);
    e0[0] = 1;
    e1[1] = 1;
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        tgl_linear_int4_params p = lin4(32);
        // No zero point: (10 - 8) * 0.5 = 1 and (3 - 8) * 0.5 = -2.5.
        auto run4 = [&](const Vals& x, const InputArg& zeros) {
            return run1(TGL_OP_LINEAR_INT4, &p, {in(dt, {1, 32}, x), in(U8, {1, 16}, wq), in(F16, {1, 1}, {0.5}), zeros, absent_input()},
                        output_of(dt, {1, 1}));
        };
        EXPECT_TRUE(near(dt, run4(e0, absent_input()), {1}));
        EXPECT_TRUE(near(dt, run4(e1, absent_input()), {-2.5}));
        // Zero point 3: (10 - 3) * 0.5 = 3.5 and (3 - 3) * 0.5 = 0.
        EXPECT_TRUE(near(dt, run4(e0, in(U8, {1, 1}, {3})), {3.5}));
        EXPECT_TRUE(near(dt, run4(e1, in(U8, {1, 1}, {3})), {0}));
    }
}

TEST_F(MatmulFamily, Int4Groups32And64) {
    // Every nibble 9. x all ones. Without zero points each weight is (9 - 8) * scale of its group.
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // group 32, K = 64: scales (2 rows, 2 groups) [[1, 0.5], [2, -1]] -> y = [32 + 16, 64 - 32] = [48, 32],
        // + bias [1, -1] = [49, 31].
        tgl_linear_int4_params p32 = lin4(32);
        EXPECT_TRUE(near(dt, run1(TGL_OP_LINEAR_INT4, &p32,
                                  {in(dt, {1, 64}, Vals(64, 1)), in(U8, {2, 32}, bytes(64, 0x99)), in(F16, {2, 2}, {1, 0.5, 2, -1}),
                                   absent_input(), in(dt, {2}, {1, -1})},
                                  output_of(dt, {1, 2})),
                         {49, 31}));
        // group 64, K = 128: scales [[1, 0.5]] -> 64 + 32 = 96; zero points [[9, 7]]: (9 - 9) * 1 * 64 +
        // (9 - 7) * 0.5 * 64 = 64; with silu on a zero point making it 0: silu(0) = 0.
        tgl_linear_int4_params p64 = lin4(64);
        EXPECT_TRUE(near(dt, run1(TGL_OP_LINEAR_INT4, &p64,
                                  {in(dt, {1, 128}, Vals(128, 1)), in(U8, {1, 64}, bytes(64, 0x99)), in(F32, {1, 2}, {1, 0.5}),
                                   absent_input(), absent_input()},
                                  output_of(dt, {1, 1})),
                         {96}));
        EXPECT_TRUE(near(dt, run1(TGL_OP_LINEAR_INT4, &p64,
                                  {in(dt, {1, 128}, Vals(128, 1)), in(U8, {1, 64}, bytes(64, 0x99)), in(F16, {1, 2}, {1, 0.5}),
                                   in(U8, {1, 2}, {9, 7}), absent_input()},
                                  output_of(dt, {1, 1})),
                         {64}));
        tgl_linear_int4_params silu = lin4(64, TGL_ACTIVATION_SILU);
        EXPECT_TRUE(near(dt, run1(TGL_OP_LINEAR_INT4, &silu,
                                  {in(dt, {1, 128}, Vals(128, 1)), in(U8, {1, 64}, bytes(64, 0x99)), in(F16, {1, 2}, {1, 0.5}),
                                   in(U8, {1, 2}, {9, 9}), absent_input()},
                                  output_of(dt, {1, 1})),
                         {0}));
    }
    // NULL params: group 32, no activation.
    EXPECT_TRUE(near(F32, run1(TGL_OP_LINEAR_INT4, nullptr,
                               {in(F32, {1, 32}, Vals(32, 1)), in(U8, {1, 16}, bytes(16, 0x99)), in(F32, {1, 1}, {0.25}), absent_input(),
                                absent_input()},
                               output_of(F32, {1, 1})),
                     {8}));
}

// ----- bad input ----------------------------------------------------------------------------------

TEST_F(MatmulFamily, BadInput) {
    const tgl_linear_params p = lin();
    InputArg x = in(F32, {2, 3}, {1, 2, 3, 4, 5, 6}), w = in(F32, {2, 3}, {1, 0, 0, 0, 1, 0}), b = in(F32, {2}, {0, 0});
    // linear: W's K differs, wrong y shape, wrong bias shape, dtype mix, bad activation, struct_size.
    expect_rejected(TGL_OP_LINEAR, &p, {x, in(F32, {2, 4}, Vals(8, 0)), b}, {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH, {"W", "K = 3"});
    expect_rejected(TGL_OP_LINEAR, &p, {x, w, b}, {output_of(F32, {2, 3})}, TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (y)", "(2, 2)"});
    expect_rejected(TGL_OP_LINEAR, &p, {x, w, in(F32, {3}, {0, 0, 0})}, {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH, {"bias"});
    // Mixed weights: f16/bf16 W and bias under f32 x only; y has x's dtype.
    const InputArg x16 = in(F16, {2, 3}, Vals(6, 1)), w16 = in(F16, {2, 3}, Vals(6, 0));
    expect_rejected(TGL_OP_LINEAR, &p, {x16, in(BF16, {2, 3}, Vals(6, 0)), absent_input()}, {output_of(F16, {2, 2})},
                    TGL_ERROR_DTYPE_MISMATCH, {"W", "bf16", "f16", "only under f32"});
    expect_rejected(TGL_OP_LINEAR, &p, {x16, in(F32, {2, 3}, Vals(6, 0)), absent_input()}, {output_of(F16, {2, 2})},
                    TGL_ERROR_DTYPE_MISMATCH, {"W", "f32", "f16"});
    expect_rejected(TGL_OP_LINEAR, &p, {x16, w16, in(BF16, {2}, {0, 0})}, {output_of(F16, {2, 2})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"bias", "bf16"});
    expect_rejected(TGL_OP_LINEAR, &p, {x, w16, b}, {output_of(F16, {2, 2})}, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)", "f16", "f32"});
    expect_rejected(TGL_OP_LINEAR_QKV, &p, {x16, in(BF16, {3, 3}, Vals(9, 0)), absent_input()},
                    {output_of(F16, {2, 1}), output_of(F16, {2, 1}), output_of(F16, {2, 1})}, TGL_ERROR_DTYPE_MISMATCH, {"W", "bf16"});
    expect_rejected(TGL_OP_GROUPED_LINEAR, &p, {x16, in(BF16, {1, 2, 3}, Vals(6, 0)), in(I32, {2}, {0, 0}), absent_input()},
                    {output_of(F16, {2, 2})}, TGL_ERROR_DTYPE_MISMATCH, {"W", "bf16"});
    expect_rejected(TGL_OP_MATMUL, nullptr, {in(BF16, {2, 3}, Vals(6, 0)), in(F16, {3, 2}, Vals(6, 0))}, {output_of(BF16, {2, 2})},
                    TGL_ERROR_DTYPE_MISMATCH, {"B", "f16", "bf16"});
    tgl_linear_params bad_act = lin(7);
    expect_rejected(TGL_OP_LINEAR, &bad_act, {x, w, b}, {output_of(F32, {2, 2})}, TGL_ERROR_INVALID_ARGUMENT, {"activation", "7"});
    tgl_linear_params bad_size = lin();
    bad_size.struct_size = 4;
    expect_rejected(TGL_OP_LINEAR, &bad_size, {x, w, b}, {output_of(F32, {2, 2})}, TGL_ERROR_PARAMS_SIZE, {"struct_size"});
    // matmul: A f16 with B f32.
    expect_rejected(TGL_OP_MATMUL, nullptr, {in(F16, {2, 3}, Vals(6, 0)), in(F32, {3, 2}, Vals(6, 0))}, {output_of(F16, {2, 2})},
                 TGL_ERROR_DTYPE_MISMATCH, {"B"});
    // qkv: the outputs' last dims do not add up to W's rows.
    expect_rejected(TGL_OP_LINEAR_QKV, &p, {x, w, absent_input()}, {output_of(F32, {2, 1}), output_of(F32, {2, 1}), output_of(F32, {2, 1})},
                 TGL_ERROR_SHAPE_MISMATCH, {"add up", "2"});
    // grouped: W not (E, N, K), index not i32, index of the wrong length.
    InputArg w3 = in(F32, {2, 2, 3}, Vals(12, 1));
    expect_rejected(TGL_OP_GROUPED_LINEAR, &p, {x, w, in(I32, {2}, {0, 0}), absent_input()}, {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                 {"rank 3", "(E, N, K)"});
    expect_rejected(TGL_OP_GROUPED_LINEAR, &p, {x, w3, in(F32, {2}, {0, 0}), absent_input()}, {output_of(F32, {2, 2})}, TGL_ERROR_DTYPE_MISMATCH,
                 {"index", "i32"});
    expect_rejected(TGL_OP_GROUPED_LINEAR, &p, {x, w3, in(I32, {3}, {0, 0, 0}), absent_input()}, {output_of(F32, {2, 2})},
                 TGL_ERROR_SHAPE_MISMATCH, {"index"});
    // grouped with no experts (E = 0) and rows: no index can be valid.
    expect_rejected(TGL_OP_GROUPED_LINEAR, &p, {x, empty_input(F32, {0, 2, 3}), in(I32, {2}, {0, 0}), absent_input()}, {output_of(F32, {2, 2})},
                 TGL_ERROR_INDEX_OUT_OF_RANGE, {"E = 0", "size 0"});
    // int8: Wq not i8, scale of the wrong length.
    expect_rejected(TGL_OP_LINEAR_INT8, &p, {x, in(U8, {2, 3}, Vals(6, 0)), in(F32, {2}, {1, 1}), absent_input()}, {output_of(F32, {2, 2})},
                 TGL_ERROR_DTYPE_MISMATCH, {"Wq", "i8"});
    expect_rejected(TGL_OP_LINEAR_INT8, &p, {x, in(I8, {2, 3}, Vals(6, 0)), in(F32, {3}, {1, 1, 1}), absent_input()}, {output_of(F32, {2, 2})},
                 TGL_ERROR_SHAPE_MISMATCH, {"scale"});
    // int4: group size 48, K not a multiple of the group (48 with group 32), Wq of K columns, scales shape.
    InputArg x64 = in(F32, {1, 64}, Vals(64, 1)), wq = in(U8, {1, 32}, Vals(32, 0x88)), sc = in(F16, {1, 2}, {1, 1});
    tgl_linear_int4_params g48 = lin4(48), g32 = lin4(32), g64 = lin4(64);
    expect_rejected(TGL_OP_LINEAR_INT4, &g48, {x64, wq, sc, absent_input(), absent_input()}, {output_of(F32, {1, 1})}, TGL_ERROR_INVALID_ARGUMENT,
                 {"group_size", "48"});
    expect_rejected(TGL_OP_LINEAR_INT4, &g32, {in(F32, {1, 48}, Vals(48, 1)), in(U8, {1, 24}, Vals(24, 0x88)), in(F16, {1, 1}, {1}), absent_input(),
                                            absent_input()},
                 {output_of(F32, {1, 1})}, TGL_ERROR_SHAPE_MISMATCH, {"K = 48", "multiple", "group_size"});
    expect_rejected(TGL_OP_LINEAR_INT4, &g32, {x64, in(U8, {1, 64}, Vals(64, 0x88)), sc, absent_input(), absent_input()}, {output_of(F32, {1, 1})},
                 TGL_ERROR_SHAPE_MISMATCH, {"Wq", "two 4-bit values per byte"});
    expect_rejected(TGL_OP_LINEAR_INT4, &g64, {x64, wq, sc, absent_input(), absent_input()}, {output_of(F32, {1, 1})}, TGL_ERROR_SHAPE_MISMATCH,
                 {"scales", "(1, 1)"});
    expect_rejected(TGL_OP_LINEAR_INT4, &g32, {x64, wq, sc, in(F16, {1, 2}, {8, 8}), absent_input()}, {output_of(F32, {1, 1})},
                 TGL_ERROR_DTYPE_MISMATCH, {"zeros", "u8"});
    tgl_linear_int4_params reserved = lin4(32);
    reserved.reserved = 1;
    expect_rejected(TGL_OP_LINEAR_INT4, &reserved, {x64, wq, sc, absent_input(), absent_input()}, {output_of(F32, {1, 1})},
                 TGL_ERROR_INVALID_ARGUMENT, {"reserved"});
}

// An expert index outside [0, E): TGL_ERROR_INDEX_OUT_OF_RANGE (CPU from run_op, GLES at the next
// wait), nothing written, reported once, and the device keeps working.
TEST_F(MatmulFamily, ExpertIndexOutOfRange) {
    Device& d = dev();
    tgl_linear_params p = lin();
    for (int bad : {3, -1}) {
        SCOPED_TRACE(bad);
        tgl_test::OpCall call(d, {in(F32, {3, 2}, {1, 2, 3, 4, 5, 6}), in(F32, {3, 2, 2}, Vals(12, 1)), in(I32, {3}, {0, double(bad), 2}),
                                  in(F32, {3, 2}, Vals(6, 0))},
                              {output_of(F32, {3, 2})});
        tgl_status st = call.run(TGL_OP_GROUPED_LINEAR, &p);
        std::string msg = plug().last_error();
        if (st == TGL_OK) {
            st = d.api().synchronize(d.handle());
            msg = plug().last_error();
        }
        EXPECT_TRUE(is_error(st, TGL_ERROR_INDEX_OUT_OF_RANGE, msg,
                             {"grouped_linear", "index", "holds " + std::to_string(bad), "position 1", "[0, 3)"}));
        EXPECT_TRUE(call.all_unchanged());
        EXPECT_EQ(d.api().synchronize(d.handle()), TGL_OK) << plug().last_error();
    }
    // The device works: [1, 2] with expert 1 of W = 2 * identity... W all ones: row sums.
    EXPECT_TRUE(near(F32, run1(TGL_OP_GROUPED_LINEAR, &p, {in(F32, {1, 2}, {1, 2}), in(F32, {3, 2, 2}, Vals(12, 1)), in(I32, {1}, {2}), absent_input()},
                               output_of(F32, {1, 2})),
                     {3, 3}));
}

// ----- matmul: known answers ----------------------------------------------------------------------

const std::vector<float> kA = {1, 2, 3, 4, 5, 6};      // (2, 3)
const std::vector<float> kAt = {1, 4, 2, 5, 3, 6};     // A^T stored as (3, 2)
const std::vector<float> kB = {7, 8, 9, 10, 11, 12};   // (3, 2)
const std::vector<float> kBt = {7, 9, 11, 8, 10, 12};  // B^T stored as (2, 3)
const std::vector<float> kAB = {58, 64, 139, 154};     // A @ B, by hand

std::vector<float> mm(const Shape& as, const std::vector<float>& a, const Shape& bs, const std::vector<float>& b,
                      const Shape& cs, const tgl_matmul_params* p, const std::vector<float>* c_init = nullptr) {
    return run(TGL_OP_MATMUL, p, {as, bs}, {a, b}, cs, c_init);
}

// Reference for the batched cases: the obvious triple loop, in double. Inputs are small integers,
// so every f32 result is exact.
std::vector<float> batched_reference(int64_t batch_a, int64_t batch_b, int64_t M, int64_t K, int64_t N,
                                     const std::vector<float>& a, const std::vector<float>& b) {
    int64_t batch = std::max(batch_a, batch_b);
    std::vector<float> c(static_cast<size_t>(batch * M * N));
    for (int64_t t = 0; t < batch; ++t)
        for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k)
                    s += double(a[size_t((batch_a == 1 ? 0 : t) * M * K + m * K + k)]) *
                         double(b[size_t((batch_b == 1 ? 0 : t) * K * N + k * N + n)]);
                c[size_t(t * M * N + m * N + n)] = float(s);
            }
    return c;
}

TEST_F(KnownAnswer, Matmul2x3By3x2AndTransposes) {
    EXPECT_TRUE(exact(mm({2, 3}, kA, {3, 2}, kB, {2, 2}, nullptr), kAB, {2, 2})) << "NULL params";
    auto p = matmul_params(false, false, 1, 0);
    EXPECT_TRUE(exact(mm({2, 3}, kA, {3, 2}, kB, {2, 2}, &p), kAB, {2, 2}));
    p = matmul_params(true, false, 1, 0);
    EXPECT_TRUE(exact(mm({3, 2}, kAt, {3, 2}, kB, {2, 2}, &p), kAB, {2, 2})) << "transpose_a";
    p = matmul_params(false, true, 1, 0);
    EXPECT_TRUE(exact(mm({2, 3}, kA, {2, 3}, kBt, {2, 2}, &p), kAB, {2, 2})) << "transpose_b";
    p = matmul_params(true, true, 1, 0);
    EXPECT_TRUE(exact(mm({3, 2}, kAt, {2, 3}, kBt, {2, 2}, &p), kAB, {2, 2})) << "both transposed";
    // B @ A = (3, 2) @ (2, 3) -> (3, 3)
    EXPECT_TRUE(exact(mm({3, 2}, kB, {2, 3}, kA, {3, 3}, nullptr), {39, 54, 69, 49, 68, 87, 59, 82, 105}, {3, 3}));
    // Vector shapes: (1, 3) @ (3, 1) and (3, 1) @ (1, 2).
    EXPECT_TRUE(exact(mm({1, 3}, {1, 2, 3}, {3, 1}, {4, 5, 6}, {1, 1}, nullptr), {32}, {1, 1}));
    EXPECT_TRUE(exact(mm({3, 1}, {1, 2, 3}, {1, 2}, {4, 5}, {3, 2}, nullptr), {4, 5, 8, 10, 12, 15}, {3, 2}));
}

TEST_F(KnownAnswer, MatmulAlphaBeta) {
    const std::vector<float> c0 = {1, 2, 3, 4};
    auto p = matmul_params(false, false, 2.0f, 0.5f);
    EXPECT_TRUE(exact(mm({2, 3}, kA, {3, 2}, kB, {2, 2}, &p, &c0), {116.5f, 129, 279.5f, 310}, {2, 2}));
    p = matmul_params(false, false, -1.0f, 1.0f);
    EXPECT_TRUE(exact(mm({2, 3}, kA, {3, 2}, kB, {2, 2}, &p, &c0), {-57, -62, -136, -150}, {2, 2}));
    p = matmul_params(false, false, 0.0f, 3.0f);
    EXPECT_TRUE(exact(mm({2, 3}, kA, {3, 2}, kB, {2, 2}, &p, &c0), {3, 6, 9, 12}, {2, 2}));
}

TEST_F(KnownAnswer, MatmulBetaZeroDoesNotReadC) {
    // C full of NaN and inf: with beta == 0 none of it may leak into the result.
    const std::vector<float> c_nan = {kNaN, kInf, -kInf, kNaN};
    auto p = matmul_params(false, false, 1.0f, 0.0f);
    EXPECT_TRUE(exact(mm({2, 3}, kA, {3, 2}, kB, {2, 2}, &p, &c_nan), kAB, {2, 2}));
    p = matmul_params(false, true, 0.5f, 0.0f);
    EXPECT_TRUE(exact(mm({2, 3}, kA, {2, 3}, kBt, {2, 2}, &p, &c_nan), {29, 32, 69.5f, 77}, {2, 2}));
}

TEST_F(KnownAnswer, MatmulKZero) {
    // K == 0: C = beta * C, and 0 when beta == 0 (even over NaN).
    const std::vector<float> c0 = {1, 2, 3, 4};
    auto p = matmul_params(false, false, 1.0f, 2.0f);
    EXPECT_TRUE(exact(mm({2, 0}, {}, {0, 2}, {}, {2, 2}, &p, &c0), {2, 4, 6, 8}, {2, 2}));
    const std::vector<float> c_nan = {kNaN, kNaN, kNaN, kNaN};
    p = matmul_params(false, false, 1.0f, 0.0f);
    EXPECT_TRUE(exact(mm({2, 0}, {}, {0, 2}, {}, {2, 2}, &p, &c_nan), {0, 0, 0, 0}, {2, 2}));
    EXPECT_TRUE(exact(mm({3, 0}, {}, {0, 1}, {}, {3, 1}, nullptr), {0, 0, 0}, {3, 1})) << "NULL params";
}

TEST_F(KnownAnswer, MatmulBatchedWithBroadcastBatch) {
    const int64_t M = 3, K = 5, N = 4;
    auto a = small_ints(rng_, 8 * M * K, -4, 4);
    auto b1 = small_ints(rng_, K * N, -4, 4);
    // (8, M, K) @ (1, K, N) -> (8, M, N)
    EXPECT_TRUE(exact(mm({8, M, K}, a, {1, K, N}, b1, {8, M, N}, nullptr), batched_reference(8, 1, M, K, N, a, b1),
                      {8, M, N}));
    // (8, M, K) @ (K, N): B of rank 2 broadcasts over the batch.
    EXPECT_TRUE(exact(mm({8, M, K}, a, {K, N}, b1, {8, M, N}, nullptr), batched_reference(8, 1, M, K, N, a, b1),
                      {8, M, N}));
    // (1, M, K) @ (8, K, N)
    auto a1 = small_ints(rng_, M * K, -4, 4);
    auto b8 = small_ints(rng_, 8 * K * N, -4, 4);
    EXPECT_TRUE(exact(mm({1, M, K}, a1, {8, K, N}, b8, {8, M, N}, nullptr), batched_reference(1, 8, M, K, N, a1, b8),
                      {8, M, N}));
    // (8, M, K) @ (8, K, N)
    EXPECT_TRUE(exact(mm({8, M, K}, a, {8, K, N}, b8, {8, M, N}, nullptr), batched_reference(8, 8, M, K, N, a, b8),
                      {8, M, N}));
    // (2, 1, M, K) @ (3, K, N) -> (2, 3, M, N)
    auto a2 = small_ints(rng_, 2 * M * K, -4, 4);
    auto b3 = small_ints(rng_, 3 * K * N, -4, 4);
    std::vector<float> want;
    for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j) {
            std::vector<float> ai(a2.begin() + i * M * K, a2.begin() + (i + 1) * M * K);
            std::vector<float> bj(b3.begin() + j * K * N, b3.begin() + (j + 1) * K * N);
            auto c = batched_reference(1, 1, M, K, N, ai, bj);
            want.insert(want.end(), c.begin(), c.end());
        }
    EXPECT_TRUE(exact(mm({2, 1, M, K}, a2, {3, K, N}, b3, {2, 3, M, N}, nullptr), want, {2, 3, M, N}));
}

// ----- matmul: any layout -------------------------------------------------------------------------

TEST_F(Layouts, MatmulOnAnyLayout) {
    Device& d = dev();
    for (int round = 0; round < 40; ++round) {
        int64_t M = rng_.pick(std::vector<int64_t>{1, 2, 3, 7, 16});
        int64_t N = rng_.pick(std::vector<int64_t>{1, 2, 5, 9, 16});
        int64_t K = rng_.pick(std::vector<int64_t>{1, 3, 4, 11, 17});
        bool ta = rng_.chance(0.5), tb = rng_.chance(0.5);
        Shape batch = random_shape(rng_, 0, 3, 12);
        const Shape ab = broadcastable_suffix(batch, rng_);
        const Shape bb = broadcastable_suffix(batch, rng_);
        const Shape cb = broadcast_shapes(ab, bb);
        Shape as = ab, bs = bb, cs = cb;
        as.insert(as.end(), ta ? std::initializer_list<int64_t>{K, M} : std::initializer_list<int64_t>{M, K});
        bs.insert(bs.end(), tb ? std::initializer_list<int64_t>{N, K} : std::initializer_list<int64_t>{K, N});
        cs.insert(cs.end(), {M, N});
        Input a = make_input(d, as, rng_), b = make_input(d, bs, rng_);
        auto c = make_output(d, cs, rng_);
        float alpha = float(rng_.integer(-2, 2)), beta = rng_.chance(0.5) ? 0.0f : float(rng_.integer(-2, 2));
        std::vector<float> c0 = small_ints(rng_, numel(cs));
        if (beta != 0.0f) c->prefill(c0);
        tgl_matmul_params p = matmul_params(ta, tb, alpha, beta);
        SCOPED_TRACE(describe(("matmul M " + std::to_string(M) + " N " + std::to_string(N) + " K " + std::to_string(K) +
                               (ta ? " A^T" : "") + (tb ? " B^T" : "") + " alpha " + std::to_string(alpha) + " beta " +
                               std::to_string(beta)).c_str(),
                              {a.t.get(), b.t.get(), c.get()}));
        d.run_ok(TGL_OP_MATMUL, &p, {a.t->desc(), b.t->desc()}, {c->desc()});
        // Host: C[b, m, n] = alpha * sum_k op(A)[b, m, k] op(B)[b, k, n] + beta * C0[b, m, n].
        auto element = [](const Input& t, const Shape& full, const Shape& own_batch, const Shape& out_batch,
                          const std::vector<int64_t>& bidx, int64_t row, int64_t col) {
            std::vector<int64_t> idx;
            for (size_t k = 0; k < own_batch.size(); ++k)
                idx.push_back(own_batch[k] == 1 ? 0 : bidx[k + out_batch.size() - own_batch.size()]);
            idx.push_back(row);
            idx.push_back(col);
            return double(t.logical[size_t(ravel(idx, full))]);
        };
        std::vector<float> want(static_cast<size_t>(numel(cs)));
        for (int64_t i = 0; i < numel(cs); ++i) {
            auto idx = unravel(i, cs);
            std::vector<int64_t> bidx(idx.begin(), idx.end() - 2);
            int64_t m = idx[idx.size() - 2], n = idx[idx.size() - 1];
            double s = 0;
            for (int64_t k = 0; k < K; ++k)
                s += element(a, as, ab, cb, bidx, ta ? k : m, ta ? m : k) * element(b, bs, bb, cb, bidx, tb ? n : k, tb ? k : n);
            want[size_t(i)] = float(alpha * s + (beta != 0.0f ? beta * double(c0[size_t(i)]) : 0.0));
        }
        EXPECT_TRUE(compare(c->read(), want, cs, 0, CompareMode::Exact));
        EXPECT_TRUE(a.t->unchanged());
        EXPECT_TRUE(b.t->unchanged());
    }
}

// ----- bad input ----------------------------------------------------------------------------------

std::vector<BadCase> matmul_bad_cases() {
    std::vector<BadCase> c;
    c.push_back({"MatmulParamsSize", TGL_ERROR_PARAMS_SIZE, {"struct_size"}, [](Ctx& k) {
                     tgl_matmul_params p = k.mp;
                     p.struct_size = 16;
                     return k.matmul(k.A.desc(), k.B.desc(), k.C.desc(), &p);
                 }});
    c.push_back({"MatmulBadTranspose", TGL_ERROR_INVALID_ARGUMENT, {"transpose"}, [](Ctx& k) {
                     tgl_matmul_params p = k.mp;
                     p.transpose_b = 2;
                     return k.matmul(k.A.desc(), k.B.desc(), k.C.desc(), &p);
                 }});
    c.push_back({"MatmulOutputOverlapsInput", TGL_ERROR_INVALID_ARGUMENT, {"C", "A"}, [](Ctx& k) {
                     // C (2, 2) placed over the last 4 elements of A's (2, 3).
                     return k.matmul(k.A.desc(), k.B.desc(), with(k.C.desc(), [&](tgl_tensor& t) {
                                         t.buffer = k.A.buffer();
                                         t.byte_offset = k.A.desc().byte_offset + 8;
                                     }),
                                     &k.mp);
                 }});
    c.push_back({"MatmulOutputOverlapsStridedInput", TGL_ERROR_INVALID_ARGUMENT, {"C", "B"}, [](Ctx& k) {
                     // B viewed as (3, 1) with stride 2 (elements 0, 2, 4 of its buffer); C (2, 1)
                     // with stride 2 starting at element 2 shares elements 2 and 4 with it.
                     tgl_tensor b = k.B.desc();
                     b.shape[1] = 1;
                     b.strides[0] = 2;
                     tgl_tensor c = k.C.desc();
                     c.buffer = k.B.buffer();
                     c.shape[1] = 1;
                     c.strides[0] = 2;
                     c.byte_offset = b.byte_offset + 8;
                     return k.matmul(k.A.desc(), b, c, &k.mp);
                 }});
    c.push_back({"MatmulInnerDimsDiffer", TGL_ERROR_SHAPE_MISMATCH, {"op(B)"}, [](Ctx& k) {
                     return k.matmul(k.A.desc(), with(k.B.desc(), [](tgl_tensor& t) { t.shape[0] = 2; }), k.C.desc(), &k.mp);
                 }});
    c.push_back({"MatmulRank1", TGL_ERROR_SHAPE_MISMATCH, {"rank"}, [](Ctx& k) {
                     return k.matmul(with(k.A.desc(), [](tgl_tensor& t) { t.rank = 1; }), k.B.desc(), k.C.desc(), &k.mp);
                 }});
    c.push_back({"MatmulBatchDoNotBroadcast", TGL_ERROR_SHAPE_MISMATCH, {"batch"}, [](Ctx& k) {
                     tgl_tensor a = k.A.desc(), b = k.B.desc(), cc = k.C.desc();
                     // A (2, 1, 3) and B (3, 3, 2) viewed with stride 0 batches.
                     a.rank = 3; a.shape[0] = 2; a.shape[1] = 1; a.shape[2] = 3; a.strides[0] = 0; a.strides[1] = 3; a.strides[2] = 1;
                     b.rank = 3; b.shape[0] = 3; b.shape[1] = 3; b.shape[2] = 2; b.strides[0] = 0; b.strides[1] = 2; b.strides[2] = 1;
                     return k.matmul(a, b, cc, &k.mp);
                 }});
    c.push_back({"MatmulWrongOutputShape", TGL_ERROR_SHAPE_MISMATCH, {"output C"}, [](Ctx& k) {
                     return k.matmul(k.A.desc(), k.B.desc(), with(k.C.desc(), [](tgl_tensor& t) { t.shape[1] = 1; }), &k.mp);
                 }});
    return c;
}

INSTANTIATE_TEST_SUITE_P(Matmul, BadInput, ::testing::ValuesIn(matmul_bad_cases()), bad_case_name);

}  // namespace
}  // namespace conf
