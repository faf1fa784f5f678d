// Conformance (known-answer, bad-input) tests of the norm ops: softmax, log_softmax, layer_norm,
// rms_norm, group_norm, batch_norm, add_layer_norm, add_rms_norm. Expected values come from the
// defining formulas evaluated in double on small hand-made rows.
#include "common.h"

#include "tgl_test/op_runner.h"

#include <cmath>

namespace conf {
namespace {

using NormOps = ConformanceTest;

using Vals = std::vector<double>;

InputArg in(tgl_dtype dt, const Shape& s, const Vals& v) { return input_values(dt, s, v); }

Vals run1(tgl_op op, const void* params, const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs) {
    return run_op_values(dev(), op, params, ins, outs).at(0);
}

// Relative error per element (transcendentals on the GPU are not correctly rounded).
::testing::AssertionResult near(tgl_dtype dt, const Vals& got, const Vals& want, double tol = 1e-10) {
    Vals w = want;
    for (double& v : w) v = round_to_dtype(dt, v);  // the f16 result is the rounded exact value
    return compare(dt, got, w, Shape{int64_t(want.size())}, dt == F16 ? 1e-6 : tol, CompareMode::PerElement);
}

tgl_softmax_params sm(int axis, float scale = 1.0f) { return tgl_softmax_params{sizeof(tgl_softmax_params), axis, scale, 0}; }
tgl_layer_norm_params ln(uint32_t dims, float eps = 1e-5f) { return tgl_layer_norm_params{sizeof(tgl_layer_norm_params), dims, eps, 0}; }
tgl_group_norm_params gn(uint32_t groups, float eps = 1e-5f) { return tgl_group_norm_params{sizeof(tgl_group_norm_params), groups, eps, 0}; }

// Reference formulas over one row.
Vals softmax_row(Vals v, bool log) {
    double m = -dInf, s = 0;
    for (double a : v) m = std::max(m, a);
    for (double a : v) s += std::exp(a - m);
    for (double& a : v) a = log ? a - m - std::log(s) : std::exp(a - m) / s;
    return v;
}
Vals norm_row(Vals v, double eps, bool rms, const Vals& gamma = {}, const Vals& beta = {}) {
    double n = double(v.size()), mean = 0, var = 0;
    if (!rms) {
        for (double a : v) mean += a;
        mean /= n;
    }
    for (double a : v) var += (a - mean) * (a - mean);
    var /= n;
    for (size_t i = 0; i < v.size(); ++i)
        v[i] = (v[i] - mean) / std::sqrt(var + eps) * (gamma.empty() ? 1 : gamma[i]) + (beta.empty() ? 0 : beta[i]);
    return v;
}
Vals cat(std::initializer_list<Vals> parts) {
    Vals out;
    for (const Vals& p : parts) out.insert(out.end(), p.begin(), p.end());
    return out;
}

TEST_F(NormOps, Softmax) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        Vals x = {1, 2, 3, 0, 0, 0};
        auto p = sm(-1);
        EXPECT_TRUE(near(dt, run1(TGL_OP_SOFTMAX, &p, {in(dt, {2, 3}, x), absent_input()}, {output_of(dt, {2, 3})}),
                         cat({softmax_row({1, 2, 3}, false), softmax_row({0, 0, 0}, false)})));
        EXPECT_TRUE(near(dt, run1(TGL_OP_LOG_SOFTMAX, nullptr, {in(dt, {2, 3}, x), absent_input()}, {output_of(dt, {2, 3})}),
                         cat({softmax_row({1, 2, 3}, true), softmax_row({0, 0, 0}, true)})));
        // Along axis 0, with scale 2: columns (1, 0), (2, 0), (3, 0) of 2x.
        p = sm(0, 2.0f);
        Vals c1 = softmax_row({2, 0}, false), c2 = softmax_row({4, 0}, false), c3 = softmax_row({6, 0}, false);
        EXPECT_TRUE(near(dt, run1(TGL_OP_SOFTMAX, &p, {in(dt, {2, 3}, x), absent_input()}, {output_of(dt, {2, 3})}),
                         {c1[0], c2[0], c3[0], c1[1], c2[1], c3[1]}));
        // An additive mask (3) broadcast over the rows; a fully masked row gives 0 (softmax), -inf (log).
        p = sm(1);
        Vals y = run1(TGL_OP_SOFTMAX, &p, {in(dt, {2, 3}, x), in(dt, {3}, {0, -dInf, 1})}, {output_of(dt, {2, 3})});
        Vals r0 = softmax_row({1, 4}, false), r1 = softmax_row({0, 1}, false);
        EXPECT_TRUE(near(dt, y, {r0[0], 0, r0[1], r1[0], 0, r1[1]}));
        Vals masked = {0, 0, 0, 1, 2, 3};
        Vals mask = {-dInf, -dInf, -dInf, 0, 0, 0};
        EXPECT_TRUE(near(dt, run1(TGL_OP_SOFTMAX, &p, {in(dt, {2, 3}, masked), in(dt, {2, 3}, mask)}, {output_of(dt, {2, 3})}),
                         cat({{0, 0, 0}, softmax_row({1, 2, 3}, false)})));
        EXPECT_TRUE(near(dt, run1(TGL_OP_LOG_SOFTMAX, &p, {in(dt, {2, 3}, masked), in(dt, {2, 3}, mask)}, {output_of(dt, {2, 3})}),
                         cat({{-dInf, -dInf, -dInf}, softmax_row({1, 2, 3}, true)})));
        // NaN or +inf in a row: NaN for the whole row; -inf alone is an ordinary zero weight.
        Vals sp = {1, dNaN, 2, dInf, 1, 2, -dInf, 0, 0};
        EXPECT_TRUE(near(dt, run1(TGL_OP_SOFTMAX, &p, {in(dt, {3, 3}, sp), absent_input()}, {output_of(dt, {3, 3})}),
                         {dNaN, dNaN, dNaN, dNaN, dNaN, dNaN, 0, 0.5, 0.5}));
        // A scalar, and a row of one element.
        EXPECT_TRUE(near(dt, run1(TGL_OP_SOFTMAX, nullptr, {in(dt, {}, {-7}), absent_input()}, {output_of(dt, {})}), {1}));
        EXPECT_TRUE(near(dt, run1(TGL_OP_LOG_SOFTMAX, nullptr, {in(dt, {3, 1}, {5, -1, 9}), absent_input()}, {output_of(dt, {3, 1})}), {0, 0, 0}));
    }
}

// One row of 600,000 elements (far beyond one workgroup): all equal gives 1/600000 each; an
// extra large element takes almost everything, stably.
TEST_F(NormOps, SoftmaxLongRow) {
    const int64_t n = 600000;
    Vals x(size_t(n), 3.5);
    Vals y = run1(TGL_OP_SOFTMAX, nullptr, {in(F32, {n}, x), absent_input()}, {output_of(F32, {n})});
    EXPECT_TRUE(near(F32, y, Vals(size_t(n), 1.0 / n), 1e-9));
    y = run1(TGL_OP_LOG_SOFTMAX, nullptr, {in(F32, {n}, x), absent_input()}, {output_of(F32, {n})});
    EXPECT_TRUE(near(F32, y, Vals(size_t(n), -std::log(double(n))), 1e-10));
    x[123457] = 1000;
    Vals want(size_t(n), std::exp(3.5 - 1000));  // underflows to 0 in f32 and double alike
    want[123457] = 1;
    y = run1(TGL_OP_SOFTMAX, nullptr, {in(F32, {n}, x), absent_input()}, {output_of(F32, {n})});
    EXPECT_TRUE(near(F32, y, want));
}

TEST_F(NormOps, LayerNorm) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        Vals x = {1, 2, 3, 4, -1, 0, 0, 1};
        auto p = ln(1);
        // No gamma/beta.
        EXPECT_TRUE(near(dt, run1(TGL_OP_LAYER_NORM, &p, {in(dt, {2, 4}, x), absent_input(), absent_input()}, {output_of(dt, {2, 4})}),
                         cat({norm_row({1, 2, 3, 4}, 1e-5, false), norm_row({-1, 0, 0, 1}, 1e-5, false)}), 1e-9));
        // gamma and beta; NULL params (n_norm_dims 1, eps 1e-5).
        Vals g = {1, 2, 0.5, -1}, b = {0, 1, 0, -2};
        EXPECT_TRUE(near(dt, run1(TGL_OP_LAYER_NORM, nullptr, {in(dt, {2, 4}, x), in(dt, {4}, g), in(dt, {4}, b)}, {output_of(dt, {2, 4})}),
                         cat({norm_row({1, 2, 3, 4}, 1e-5, false, g, b), norm_row({-1, 0, 0, 1}, 1e-5, false, g, b)}), 1e-9));
        // beta without gamma; over both dims (n_norm_dims 2, gamma of shape (2, 4)); eps 0.5.
        p = ln(2, 0.5f);
        Vals g8 = {1, 2, 3, 4, 5, 6, 7, 8};
        EXPECT_TRUE(near(dt, run1(TGL_OP_LAYER_NORM, &p, {in(dt, {2, 4}, x), in(dt, {2, 4}, g8), absent_input()}, {output_of(dt, {2, 4})}),
                         norm_row(x, 0.5, false, g8), 1e-9));
    }
    // A mean of 1e4 with a small spread: two-pass statistics keep it exact.
    auto p = ln(1, 0.0f);
    EXPECT_TRUE(near(F32, run1(TGL_OP_LAYER_NORM, &p, {in(F32, {1, 4}, {10000, 10001, 10002, 10003}), absent_input(), absent_input()},
                               {output_of(F32, {1, 4})}),
                     norm_row({0, 1, 2, 3}, 0, false), 1e-9));
    // eps 0 and a constant row: 0 / 0 = NaN (as PyTorch); NaN in a row: NaN row.
    EXPECT_TRUE(near(F32, run1(TGL_OP_LAYER_NORM, &p, {in(F32, {2, 2}, {5, 5, 1, dNaN}), absent_input(), absent_input()}, {output_of(F32, {2, 2})}),
                     {dNaN, dNaN, dNaN, dNaN}));
    // f16: normalized values times gamma 1e4 beyond 65504 overflow to inf (9.95e4), the rest stay finite.
    Vals x(100, 0.0);
    x[0] = 1;
    Vals g(100, 1e4);
    Vals want = norm_row(x, 1e-5, false, g);
    ASSERT_GT(want[0], 65504.0);
    Vals yf = run1(TGL_OP_LAYER_NORM, nullptr, {in(F32, {1, 100}, x), in(F32, {100}, g), absent_input()}, {output_of(F32, {1, 100})});
    EXPECT_TRUE(near(F32, yf, want, 1e-9));
    Vals yn = run1(TGL_OP_LAYER_NORM, nullptr, {in(F32, {1, 100}, x), absent_input(), absent_input()}, {output_of(F32, {1, 100})});
    EXPECT_TRUE(near(F32, yn, norm_row(x, 1e-5, false), 1e-9));
    Vals y = run1(TGL_OP_LAYER_NORM, nullptr, {in(F16, {1, 100}, x), in(F16, {100}, g), absent_input()}, {output_of(F16, {1, 100})});
    EXPECT_EQ(y[0], dInf);
    EXPECT_TRUE(near(F16, y, want));
}

TEST_F(NormOps, RmsNorm) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // [3, 4]: mean square 12.5.
        Vals y = run1(TGL_OP_RMS_NORM, nullptr, {in(dt, {2, 2}, {3, 4, 0, -2}), absent_input()}, {output_of(dt, {2, 2})});
        EXPECT_TRUE(near(dt, y, {3 / std::sqrt(12.5 + 1e-5), 4 / std::sqrt(12.5 + 1e-5), 0, -2 / std::sqrt(2 + 1e-5)}, 1e-9));
        auto p = ln(1, 0.25f);
        y = run1(TGL_OP_RMS_NORM, &p, {in(dt, {2, 2}, {3, 4, 0, -2}), in(dt, {2}, {2, -1})}, {output_of(dt, {2, 2})});
        EXPECT_TRUE(near(dt, y, {6 / std::sqrt(12.75), -4 / std::sqrt(12.75), 0, 2 / std::sqrt(2.25)}, 1e-9));
        // An all-zero row stays 0 with eps > 0.
        y = run1(TGL_OP_RMS_NORM, nullptr, {in(dt, {1, 3}, {0, 0, 0}), absent_input()}, {output_of(dt, {1, 3})});
        EXPECT_TRUE(near(dt, y, {0, 0, 0}));
        // beta (ABI 1.3): added after gamma; with an absent gamma, after the plain normalization; an
        // all-zero row gives beta.
        y = run1(TGL_OP_RMS_NORM, &p, {in(dt, {2, 2}, {3, 4, 0, -2}), in(dt, {2}, {2, -1}), in(dt, {2}, {0.5, -3})},
                 {output_of(dt, {2, 2})});
        EXPECT_TRUE(near(dt, y, {6 / std::sqrt(12.75) + 0.5, -4 / std::sqrt(12.75) - 3, 0.5, 2 / std::sqrt(2.25) - 3}, 1e-9));
        y = run1(TGL_OP_RMS_NORM, &p, {in(dt, {2, 2}, {3, 4, 0, -2}), absent_input(), in(dt, {2}, {0.5, -3})},
                 {output_of(dt, {2, 2})});
        EXPECT_TRUE(near(dt, y, {3 / std::sqrt(12.75) + 0.5, 4 / std::sqrt(12.75) - 3, 0.5, -2 / std::sqrt(2.25) - 3}, 1e-9));
        y = run1(TGL_OP_RMS_NORM, nullptr, {in(dt, {1, 3}, {0, 0, 0}), absent_input(), in(dt, {3}, {1, -2, 0.25})},
                 {output_of(dt, {1, 3})});
        EXPECT_TRUE(near(dt, y, {1, -2, 0.25}));
    }
}

TEST_F(NormOps, GroupNorm) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // x (2, 4, 2), 2 groups of 2 channels: each group is 4 consecutive values.
        Vals x = {1, 2, 3, 4, 0, 0, 2, 2, -1, 1, -3, 3, 5, 6, 7, 9};
        Vals g = {1, 2, -1, 0.5}, b = {0, 1, 2, 3};
        auto p = gn(2);
        Vals y = run1(TGL_OP_GROUP_NORM, &p, {in(dt, {2, 4, 2}, x), in(dt, {4}, g), in(dt, {4}, b)}, {output_of(dt, {2, 4, 2})});
        Vals want;
        for (int grp = 0; grp < 4; ++grp) {
            Vals row(x.begin() + 4 * grp, x.begin() + 4 * grp + 4);
            int c0 = (grp % 2) * 2;
            Vals rg = {g[c0], g[c0], g[c0 + 1], g[c0 + 1]}, rb = {b[c0], b[c0], b[c0 + 1], b[c0 + 1]};
            Vals r = norm_row(row, 1e-5, false, rg, rb);
            want.insert(want.end(), r.begin(), r.end());
        }
        EXPECT_TRUE(near(dt, y, want, 1e-9));
        // One group per channel (instance norm) on (1, 2, 2, 2) without gamma/beta; rank 2 input.
        p = gn(2, 0.1f);
        y = run1(TGL_OP_GROUP_NORM, &p, {in(dt, {1, 2, 2, 2}, {1, 2, 3, 4, 8, 8, 8, 0}), absent_input(), absent_input()},
                 {output_of(dt, {1, 2, 2, 2})});
        EXPECT_TRUE(near(dt, y, cat({norm_row({1, 2, 3, 4}, 0.1, false), norm_row({8, 8, 8, 0}, 0.1, false)}), 1e-9));
        p = gn(1);
        y = run1(TGL_OP_GROUP_NORM, &p, {in(dt, {2, 2}, {1, 3, 2, 2}), absent_input(), absent_input()}, {output_of(dt, {2, 2})});
        EXPECT_TRUE(near(dt, y, cat({norm_row({1, 3}, 1e-5, false), {0, 0}}), 1e-9));
    }
}

TEST_F(NormOps, BatchNorm) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        Vals mean = {1, -2}, var = {4, 0.25}, g = {2, 1}, b = {0.5, -1};
        // x (2, 2, 2): N 2, C 2, 2 positions.
        Vals x = {1, 3, 0, -2, 5, -1, -1.5, -2.5};
        tgl_batch_norm_params p{sizeof(tgl_batch_norm_params), 0.0f};
        Vals want;
        for (size_t i = 0; i < x.size(); ++i) {
            size_t c = (i / 2) % 2;
            want.push_back((x[i] - mean[c]) / std::sqrt(var[c]) * g[c] + b[c]);
        }
        Vals y = run1(TGL_OP_BATCH_NORM, &p, {in(dt, {2, 2, 2}, x), in(dt, {2}, mean), in(dt, {2}, var), in(dt, {2}, g), in(dt, {2}, b)},
                      {output_of(dt, {2, 2, 2})});
        EXPECT_TRUE(near(dt, y, want, 1e-12));
        // NULL params (eps 1e-5), no gamma/beta, rank 2.
        y = run1(TGL_OP_BATCH_NORM, nullptr, {in(dt, {1, 2}, {3, -2}), in(dt, {2}, mean), in(dt, {2}, var), absent_input(), absent_input()},
                 {output_of(dt, {1, 2})});
        EXPECT_TRUE(near(dt, y, {2 / std::sqrt(4 + 1e-5), 0}, 1e-12));
    }
}

TEST_F(NormOps, AddNorms) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        Vals x = {1, 2, 3, 4, 0.5, 0, 0, 1}, r = {0, 1, -1, 2, 0.5, 1, 0, -1};
        Vals sum;
        for (size_t i = 0; i < x.size(); ++i) sum.push_back(x[i] + r[i]);
        Vals s0(sum.begin(), sum.begin() + 4), s1(sum.begin() + 4, sum.end());
        Vals g = {1, 2, 3, 4}, b = {1, 0, 0, -1};
        auto p = ln(1);
        auto ys = run_op_values(dev(), TGL_OP_ADD_LAYER_NORM, &p, {in(dt, {2, 4}, x), in(dt, {2, 4}, r), in(dt, {4}, g), in(dt, {4}, b)},
                                {output_of(dt, {2, 4}), output_of(dt, {2, 4})});
        EXPECT_TRUE(near(dt, ys[0], cat({norm_row(s0, 1e-5, false, g, b), norm_row(s1, 1e-5, false, g, b)}), 1e-9));
        EXPECT_TRUE(near(dt, ys[1], sum, 0));
        // sum absent, gamma/beta absent.
        ys = run_op_values(dev(), TGL_OP_ADD_LAYER_NORM, nullptr, {in(dt, {2, 4}, x), in(dt, {2, 4}, r), absent_input(), absent_input()},
                           {output_of(dt, {2, 4}), absent_output()});
        EXPECT_TRUE(near(dt, ys[0], cat({norm_row(s0, 1e-5, false), norm_row(s1, 1e-5, false)}), 1e-9));
        ys = run_op_values(dev(), TGL_OP_ADD_RMS_NORM, &p, {in(dt, {2, 4}, x), in(dt, {2, 4}, r), in(dt, {4}, g)},
                           {output_of(dt, {2, 4}), output_of(dt, {2, 4})});
        EXPECT_TRUE(near(dt, ys[0], cat({norm_row(s0, 1e-5, true, g), norm_row(s1, 1e-5, true, g)}), 1e-9));
        EXPECT_TRUE(near(dt, ys[1], sum, 0));
        ys = run_op_values(dev(), TGL_OP_ADD_RMS_NORM, nullptr, {in(dt, {2, 4}, x), in(dt, {2, 4}, r), absent_input()},
                           {output_of(dt, {2, 4}), absent_output()});
        EXPECT_TRUE(near(dt, ys[0], cat({norm_row(s0, 1e-5, true), norm_row(s1, 1e-5, true)}), 1e-9));
    }
    // f16: the sum is rounded to f16 (2048 + 1 = 2048) before it is normalized, as stored.
    auto ys = run_op_values(dev(), TGL_OP_ADD_RMS_NORM, nullptr, {in(F16, {1, 2}, {2048, 1}), in(F16, {1, 2}, {1, 0}), absent_input()},
                            {output_of(F16, {1, 2}), output_of(F16, {1, 2})});
    EXPECT_TRUE(near(F16, ys[1], {2048, 1}, 0));
    EXPECT_TRUE(near(F16, ys[0], norm_row({2048, 1}, 1e-5, true)));
}

// ----- bad input ------------------------------------------------------------------------------------

TEST_F(NormOps, BadInput) {
    Vals six(6, 1.0), four(4, 1.0);
    auto p = sm(2);
    expect_rejected(TGL_OP_SOFTMAX, &p, {in(F32, {2, 3}, six), absent_input()}, {output_of(F32, {2, 3})},
                    TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "2"});
    p = sm(-1);
    expect_rejected(TGL_OP_SOFTMAX, &p, {in(F32, {2, 3}, six), in(F32, {2}, {0, 0})}, {output_of(F32, {2, 3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (mask)", "(2)", "(2, 3)"});
    expect_rejected(TGL_OP_LOG_SOFTMAX, &p, {in(F32, {2, 3}, six), in(F16, {3}, {0, 0, 0})}, {output_of(F32, {2, 3})},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[1] (mask)", "f16"});
    expect_rejected(TGL_OP_SOFTMAX, &p, {in(F32, {2, 3}, six), absent_input()}, {output_of(F16, {2, 3})},
                    TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)"});
    expect_rejected(TGL_OP_SOFTMAX, &p, {in(F32, {2, 3}, six), absent_input()}, {output_of(F32, {3, 2})},
                    TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (y)", "(3, 2)"});
    expect_rejected(TGL_OP_SOFTMAX, &p, {in(TGL_DTYPE_I32, {2, 3}, six), absent_input()}, {output_of(TGL_DTYPE_I32, {2, 3})},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[0] (x)", "i32"});
    p = sm(-1, std::numeric_limits<float>::quiet_NaN());
    expect_rejected(TGL_OP_SOFTMAX, &p, {in(F32, {2, 3}, six), absent_input()}, {output_of(F32, {2, 3})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->scale"});
    p = sm(-1);
    p.struct_size = 12;
    expect_rejected(TGL_OP_SOFTMAX, &p, {in(F32, {2, 3}, six), absent_input()}, {output_of(F32, {2, 3})},
                    TGL_ERROR_PARAMS_SIZE, {"struct_size", "12"});

    auto l = ln(1);
    expect_rejected(TGL_OP_LAYER_NORM, &l, {in(F32, {2, 3}, six), in(F32, {2}, {1, 1}), absent_input()}, {output_of(F32, {2, 3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (gamma)", "(2)", "(3)"});
    expect_rejected(TGL_OP_LAYER_NORM, &l, {in(F32, {2, 3}, six), absent_input(), in(F32, {1, 3}, {1, 1, 1})}, {output_of(F32, {2, 3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[2] (beta)", "(1, 3)"});
    expect_rejected(TGL_OP_RMS_NORM, &l, {in(F32, {2, 3}, six), in(F16, {3}, {1, 1, 1})}, {output_of(F32, {2, 3})},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[1] (gamma)"});
    expect_rejected(TGL_OP_RMS_NORM, &l, {in(F32, {2, 3}, six), absent_input(), in(F32, {2}, {1, 1})}, {output_of(F32, {2, 3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[2] (beta)", "(2)", "(3)"});
    expect_rejected(TGL_OP_RMS_NORM, &l, {in(F32, {2, 3}, six), absent_input(), in(F16, {3}, {1, 1, 1})}, {output_of(F32, {2, 3})},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[2] (beta)"});
    expect_rejected(TGL_OP_RMS_NORM, &l, {in(F32, {2, 3}, six), absent_input(), absent_input(), absent_input()},
                    {output_of(F32, {2, 3})}, TGL_ERROR_INVALID_ARGUMENT, {"2 to 3 inputs", "n_inputs = 4"});
    l = ln(3);
    expect_rejected(TGL_OP_LAYER_NORM, &l, {in(F32, {2, 3}, six), absent_input(), absent_input()}, {output_of(F32, {2, 3})},
                    TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->n_norm_dims", "3"});
    l = ln(0);
    expect_rejected(TGL_OP_RMS_NORM, &l, {in(F32, {2, 3}, six), absent_input()}, {output_of(F32, {2, 3})},
                    TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->n_norm_dims"});
    l = ln(1, std::numeric_limits<float>::quiet_NaN());
    expect_rejected(TGL_OP_LAYER_NORM, &l, {in(F32, {2, 3}, six), absent_input(), absent_input()}, {output_of(F32, {2, 3})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->eps"});
    l = ln(1, -1.0f);
    expect_rejected(TGL_OP_ADD_RMS_NORM, &l, {in(F32, {2, 3}, six), in(F32, {2, 3}, six), absent_input()},
                    {output_of(F32, {2, 3}), absent_output()}, TGL_ERROR_INVALID_ARGUMENT, {"params->eps", "-1"});
    l = ln(1);
    expect_rejected(TGL_OP_ADD_LAYER_NORM, &l, {in(F32, {2, 3}, six), in(F32, {3}, {1, 1, 1}), absent_input(), absent_input()},
                    {output_of(F32, {2, 3}), absent_output()}, TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (residual)", "(3)"});
    expect_rejected(TGL_OP_ADD_LAYER_NORM, &l, {in(F32, {2, 3}, six), in(F32, {2, 3}, six), absent_input(), absent_input()},
                    {output_of(F32, {2, 3}), output_of(F32, {6})}, TGL_ERROR_SHAPE_MISMATCH, {"outputs[1] (sum)", "(6)"});

    auto g = gn(3);
    expect_rejected(TGL_OP_GROUP_NORM, &g, {in(F32, {1, 4}, four), absent_input(), absent_input()}, {output_of(F32, {1, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"num_groups", "4", "3"});
    g = gn(0);
    expect_rejected(TGL_OP_GROUP_NORM, &g, {in(F32, {1, 4}, four), absent_input(), absent_input()}, {output_of(F32, {1, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"num_groups"});
    expect_rejected(TGL_OP_GROUP_NORM, nullptr, {in(F32, {1, 4}, four), absent_input(), absent_input()}, {output_of(F32, {1, 4})},
                    TGL_ERROR_NULL_POINTER, {"params", "num_groups"});
    g = gn(2);
    expect_rejected(TGL_OP_GROUP_NORM, &g, {in(F32, {4}, four), absent_input(), absent_input()}, {output_of(F32, {4})},
                    TGL_ERROR_SHAPE_MISMATCH, {"rank >= 2"});
    expect_rejected(TGL_OP_GROUP_NORM, &g, {in(F32, {1, 4}, four), in(F32, {2}, {1, 1}), absent_input()}, {output_of(F32, {1, 4})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (gamma)", "(4)"});

    expect_rejected(TGL_OP_BATCH_NORM, nullptr, {in(F32, {2, 2}, four), in(F32, {3}, {0, 0, 0}), in(F32, {2}, {1, 1}), absent_input(), absent_input()},
                    {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (mean)", "(3)", "(2)"});
    expect_rejected(TGL_OP_BATCH_NORM, nullptr, {in(F32, {4}, four), in(F32, {4}, four), in(F32, {4}, four), absent_input(), absent_input()},
                    {output_of(F32, {4})}, TGL_ERROR_SHAPE_MISMATCH, {"batch_norm", "rank >= 2"});
    tgl_batch_norm_params b{sizeof(tgl_batch_norm_params), std::numeric_limits<float>::quiet_NaN()};
    expect_rejected(TGL_OP_BATCH_NORM, &b, {in(F32, {2, 2}, four), in(F32, {2}, {0, 0}), in(F32, {2}, {1, 1}), absent_input(), absent_input()},
                    {output_of(F32, {2, 2})}, TGL_ERROR_INVALID_ARGUMENT, {"params->eps"});
}

}  // namespace
}  // namespace conf
