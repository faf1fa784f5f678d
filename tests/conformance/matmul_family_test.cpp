// Known-answer and bad-input tests of the matmul family (linear, qkv, grouped and quantized matmul, f16 storage), run on every plugin.
// Expected values are worked out by hand in the comments (the activations by their defining
// formulas in double).
#include <limits>
#include "common.h"

#include "tgl_test/op_runner.h"

#include <cmath>

namespace conf {
namespace {

using MatmulFamily = ConformanceTest;
using Vals = std::vector<double>;

const tgl_dtype F32 = TGL_DTYPE_F32, F16 = TGL_DTYPE_F16, I8 = TGL_DTYPE_I8, U8 = TGL_DTYPE_U8, I32 = TGL_DTYPE_I32;

InputArg in(tgl_dtype dt, const Shape& s, const Vals& v) { return input_values(dt, s, v); }
// An empty input (a dim of 0): its storage still holds the one element a view needs.
InputArg empty_in(tgl_dtype dt, const Shape& s) {
    InputArg a = input_values(dt, s, {});
    a.storage = Storage::zeros(dt, a.view.storage);
    return a;
}

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

TEST_F(MatmulFamily, LinearEveryActivation) {
    // x (2, 3) = [[1, -2, 3], [0.5, 0, -1]], W (2, 3) = [[1, 1, 1], [2, -1, 0.5]], bias [0.5, -1]:
    // x @ W^T = [[2, 5.5], [-0.5, 0.5]]; + bias = [[2.5, 4.5], [0, -0.5]].
    const Vals x = {1, -2, 3, 0.5, 0, -1}, w = {1, 1, 1, 2, -1, 0.5}, b = {0.5, -1};
    const Vals pre = {2.5, 4.5, 0, -0.5}, nobias = {2, 5.5, -0.5, 0.5};
    for (tgl_dtype dt : {F32, F16})
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
    EXPECT_TRUE(near(F32, run1(TGL_OP_LINEAR, &relu, {empty_in(F32, {2, 0}), empty_in(F32, {2, 0}), in(F32, {2}, b)}, output_of(F32, {2, 2})),
                     {0.5, 0, 0.5, 0}));
    // The epilogue's special values are the unary ops' (plugin_api.h, unary ops): act(+inf) = +inf;
    // relu(-inf) = 0, gelu and silu of -inf = -inf * 0 = NaN (IEEE, as PyTorch), not the limit 0.
    for (uint32_t a = 0; a < TGL_ACTIVATION_COUNT_V1_0; ++a) {
        SCOPED_TRACE("activation " + std::to_string(a) + " at +-inf");
        tgl_linear_params pa = lin(a);
        const double at_minus_inf = a == TGL_ACTIVATION_NONE ? -INFINITY : a == TGL_ACTIVATION_RELU ? 0.0 : NAN;
        EXPECT_TRUE(near(F32, run1(TGL_OP_LINEAR, &pa, {empty_in(F32, {1, 0}), empty_in(F32, {2, 0}), in(F32, {2}, {-INFINITY, INFINITY})},
                                   output_of(F32, {1, 2})),
                         {at_minus_inf, INFINITY}));
    }
}

TEST_F(MatmulFamily, LinearQkvSplitsTheColumns) {
    // x (2, 2) = [[1, 2], [3, 4]], W (4, 2) = rows [1, 0], [0, 1], [1, 1], [1, -1], bias [0, 0, 10, 0]:
    // x @ W^T + bias = [[1, 2, 13, -1], [3, 4, 17, -1]] -> q = col 0, k = col 1, v = cols 2..3.
    for (tgl_dtype dt : {F32, F16}) {
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
    for (tgl_dtype dt : {F32, F16}) {
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
    for (tgl_dtype dt : {F32, F16}) {
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
    for (tgl_dtype dt : {F32, F16})
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
    for (tgl_dtype dt : {F32, F16}) {
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
    for (tgl_dtype dt : {F32, F16}) {
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
    Device& d = dev();
    auto expect_error = [&](tgl_op op, const void* params, const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs,
                            tgl_status want, const std::vector<std::string>& tokens) {
        tgl_test::OpCall call(d, ins, outs);
        tgl_status st = call.run(op, params);
        std::string msg = plug().last_error();
        EXPECT_TRUE(is_error(st, want, msg, tokens)) << "op " << op;
        EXPECT_TRUE(call.all_unchanged());
    };
    const tgl_linear_params p = lin();
    InputArg x = in(F32, {2, 3}, {1, 2, 3, 4, 5, 6}), w = in(F32, {2, 3}, {1, 0, 0, 0, 1, 0}), b = in(F32, {2}, {0, 0});
    // linear: W's K differs, wrong y shape, wrong bias shape, dtype mix, bad activation, struct_size.
    expect_error(TGL_OP_LINEAR, &p, {x, in(F32, {2, 4}, Vals(8, 0)), b}, {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH, {"W", "K = 3"});
    expect_error(TGL_OP_LINEAR, &p, {x, w, b}, {output_of(F32, {2, 3})}, TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (y)", "(2, 2)"});
    expect_error(TGL_OP_LINEAR, &p, {x, w, in(F32, {3}, {0, 0, 0})}, {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH, {"bias"});
    expect_error(TGL_OP_LINEAR, &p, {x, in(F16, {2, 3}, Vals(6, 0)), b}, {output_of(F32, {2, 2})}, TGL_ERROR_DTYPE_MISMATCH, {"W", "f16"});
    tgl_linear_params bad_act = lin(7);
    expect_error(TGL_OP_LINEAR, &bad_act, {x, w, b}, {output_of(F32, {2, 2})}, TGL_ERROR_INVALID_ARGUMENT, {"activation", "7"});
    tgl_linear_params bad_size = lin();
    bad_size.struct_size = 4;
    expect_error(TGL_OP_LINEAR, &bad_size, {x, w, b}, {output_of(F32, {2, 2})}, TGL_ERROR_PARAMS_SIZE, {"struct_size"});
    // matmul: A f16 with B f32.
    expect_error(TGL_OP_MATMUL, nullptr, {in(F16, {2, 3}, Vals(6, 0)), in(F32, {3, 2}, Vals(6, 0))}, {output_of(F16, {2, 2})},
                 TGL_ERROR_DTYPE_MISMATCH, {"B"});
    // qkv: the outputs' last dims do not add up to W's rows.
    expect_error(TGL_OP_LINEAR_QKV, &p, {x, w, absent_input()}, {output_of(F32, {2, 1}), output_of(F32, {2, 1}), output_of(F32, {2, 1})},
                 TGL_ERROR_SHAPE_MISMATCH, {"add up", "2"});
    // grouped: W not (E, N, K), index not i32, index of the wrong length.
    InputArg w3 = in(F32, {2, 2, 3}, Vals(12, 1));
    expect_error(TGL_OP_GROUPED_LINEAR, &p, {x, w, in(I32, {2}, {0, 0}), absent_input()}, {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                 {"rank 3", "(E, N, K)"});
    expect_error(TGL_OP_GROUPED_LINEAR, &p, {x, w3, in(F32, {2}, {0, 0}), absent_input()}, {output_of(F32, {2, 2})}, TGL_ERROR_DTYPE_MISMATCH,
                 {"index", "i32"});
    expect_error(TGL_OP_GROUPED_LINEAR, &p, {x, w3, in(I32, {3}, {0, 0, 0}), absent_input()}, {output_of(F32, {2, 2})},
                 TGL_ERROR_SHAPE_MISMATCH, {"index"});
    // grouped with no experts (E = 0) and rows: no index can be valid.
    expect_error(TGL_OP_GROUPED_LINEAR, &p, {x, empty_in(F32, {0, 2, 3}), in(I32, {2}, {0, 0}), absent_input()}, {output_of(F32, {2, 2})},
                 TGL_ERROR_INDEX_OUT_OF_RANGE, {"E = 0", "size 0"});
    // int8: Wq not i8, scale of the wrong length.
    expect_error(TGL_OP_LINEAR_INT8, &p, {x, in(U8, {2, 3}, Vals(6, 0)), in(F32, {2}, {1, 1}), absent_input()}, {output_of(F32, {2, 2})},
                 TGL_ERROR_DTYPE_MISMATCH, {"Wq", "i8"});
    expect_error(TGL_OP_LINEAR_INT8, &p, {x, in(I8, {2, 3}, Vals(6, 0)), in(F32, {3}, {1, 1, 1}), absent_input()}, {output_of(F32, {2, 2})},
                 TGL_ERROR_SHAPE_MISMATCH, {"scale"});
    // int4: group size 48, K not a multiple of the group (48 with group 32), Wq of K columns, scales shape.
    InputArg x64 = in(F32, {1, 64}, Vals(64, 1)), wq = in(U8, {1, 32}, Vals(32, 0x88)), sc = in(F16, {1, 2}, {1, 1});
    tgl_linear_int4_params g48 = lin4(48), g32 = lin4(32), g64 = lin4(64);
    expect_error(TGL_OP_LINEAR_INT4, &g48, {x64, wq, sc, absent_input(), absent_input()}, {output_of(F32, {1, 1})}, TGL_ERROR_INVALID_ARGUMENT,
                 {"group_size", "48"});
    expect_error(TGL_OP_LINEAR_INT4, &g32, {in(F32, {1, 48}, Vals(48, 1)), in(U8, {1, 24}, Vals(24, 0x88)), in(F16, {1, 1}, {1}), absent_input(),
                                            absent_input()},
                 {output_of(F32, {1, 1})}, TGL_ERROR_SHAPE_MISMATCH, {"K = 48", "multiple", "group_size"});
    expect_error(TGL_OP_LINEAR_INT4, &g32, {x64, in(U8, {1, 64}, Vals(64, 0x88)), sc, absent_input(), absent_input()}, {output_of(F32, {1, 1})},
                 TGL_ERROR_SHAPE_MISMATCH, {"Wq", "two 4-bit values per byte"});
    expect_error(TGL_OP_LINEAR_INT4, &g64, {x64, wq, sc, absent_input(), absent_input()}, {output_of(F32, {1, 1})}, TGL_ERROR_SHAPE_MISMATCH,
                 {"scales", "(1, 1)"});
    expect_error(TGL_OP_LINEAR_INT4, &g32, {x64, wq, sc, in(F16, {1, 2}, {8, 8}), absent_input()}, {output_of(F32, {1, 1})},
                 TGL_ERROR_DTYPE_MISMATCH, {"zeros", "u8"});
    tgl_linear_int4_params reserved = lin4(32);
    reserved.reserved = 1;
    expect_error(TGL_OP_LINEAR_INT4, &reserved, {x64, wq, sc, absent_input(), absent_input()}, {output_of(F32, {1, 1})},
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

}  // namespace
}  // namespace conf
