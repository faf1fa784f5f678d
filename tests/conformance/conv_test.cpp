// Known-answer and bad-input tests of the Conv family, run on every plugin. Expected values are
// worked out by hand in the comments; the backward ops are also checked against central finite
// differences of the plugin's own forward conv2d (exact up to rounding: conv is linear in x and w).
#include "common.h"

#include "tgl_test/op_runner.h"

namespace conf {
namespace {

using ConvOps = ConformanceTest;

using Vals = std::vector<double>;

InputArg in(tgl_dtype dt, const Shape& s, const Vals& v) { return input_values(dt, s, v); }

tgl_conv_params cp(std::initializer_list<int> stride = {}, std::initializer_list<int> pad = {}, std::initializer_list<int> dil = {},
                   uint32_t groups = 1) {
    tgl_conv_params p{};
    p.struct_size = sizeof p;
    p.groups = groups;
    for (int i = 0; i < 3; ++i) p.stride[i] = p.dilation[i] = 1;
    int i = 0;
    for (int v : stride) p.stride[i++] = v;
    i = 0;
    for (int v : pad) p.pad_begin[i] = p.pad_end[i] = v, ++i;
    i = 0;
    for (int v : dil) p.dilation[i++] = v;
    return p;
}

Vals conv(tgl_op op, const tgl_conv_params* p, tgl_dtype dt, const InputArg& x, const InputArg& w, const InputArg& b, const Shape& y) {
    return run_op_values(dev(), op, p, {x, w, b}, {output_of(dt, y)}).at(0);
}

::testing::AssertionResult same(tgl_dtype dt, const Vals& got, const Vals& want) {
    Vals w = want;
    for (double& v : w) v = round_to_dtype(dt, v);
    return compare(dt, got, w, Shape{int64_t(want.size())}, 1e-12, CompareMode::PerElement);
}

TEST_F(ConvOps, Conv2dKnownAnswers) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // 1x1: x (1, 2, 2, 2); w rows (1, 0), (0, 1), (1, -1): y = x0, x1, x0 - x1.
        Vals x = {1, 2, 3, 4, 5, 6, 7, 8};
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV2D, nullptr, dt, in(dt, {1, 2, 2, 2}, x), in(dt, {3, 2, 1, 1}, {1, 0, 0, 1, 1, -1}), absent_input(), {1, 3, 2, 2}),
                         {1, 2, 3, 4, 5, 6, 7, 8, -4, -4, -4, -4}));
        // 3x3 of ones, pad 1, over 1..9: the sums of each 3x3 neighbourhood.
        auto p = cp({}, {1, 1});
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV2D, &p, dt, in(dt, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), in(dt, {1, 1, 3, 3}, Vals(9, 1.0)),
                                  absent_input(), {1, 1, 3, 3}),
                         {12, 21, 16, 27, 45, 33, 24, 39, 28}));
        // Stride 2, 2x2 kernel (1, 2; 3, 4) over x[r][c] = 4r + c + 1: e.g. 1*1 + 2*2 + 5*3 + 6*4 = 44.
        p = cp({2, 2});
        Vals x16;
        for (int i = 1; i <= 16; ++i) x16.push_back(i);
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV2D, &p, dt, in(dt, {1, 1, 4, 4}, x16), in(dt, {1, 1, 2, 2}, {1, 2, 3, 4}), absent_input(), {1, 1, 2, 2}),
                         {44, 64, 124, 144}));
        // NHWC: the 1x1 case again, channels last (the weight keeps its (C_out, C_in, 1, 1) shape).
        p = cp();
        p.layout = TGL_CONV_LAYOUT_CHANNELS_LAST;
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV2D, &p, dt, in(dt, {1, 2, 2, 2}, {1, 5, 2, 6, 3, 7, 4, 8}), in(dt, {3, 2, 1, 1}, {1, 0, 0, 1, 1, -1}),
                                  absent_input(), {1, 2, 2, 3}),
                         {1, 5, -4, 2, 6, -4, 3, 7, -4, 4, 8, -4}));
        // 'same' with a 2x2 kernel: total pad 1 per dim, all of it at the end: y[i][j] = x[i][j] + x[i][j+1] + x[i+1][j] + x[i+1][j+1].
        p = cp();
        p.padding_mode = TGL_CONV_PADDING_SAME;
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV2D, &p, dt, in(dt, {1, 1, 2, 2}, {1, 2, 3, 4}), in(dt, {1, 1, 2, 2}, {1, 1, 1, 1}), absent_input(), {1, 1, 2, 2}),
                         {10, 6, 7, 4}));
    }
}

TEST_F(ConvOps, Conv1dAnd3dKnownAnswers) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // Dilation 2, kernel (1, -1): y[o] = x[o] - x[o + 2].
        auto p = cp({}, {}, {2});
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV1D, &p, dt, in(dt, {1, 1, 5}, {1, 2, 3, 4, 5}), in(dt, {1, 1, 2}, {1, -1}), absent_input(), {1, 1, 3}),
                         {-2, -2, -2}));
        // Two groups of two channels: y0 = x0 + x1, y1 = x2 - x3.
        p = cp({}, {}, {}, 2);
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV1D, &p, dt, in(dt, {1, 4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), in(dt, {2, 2, 1}, {1, 1, 1, -1}), absent_input(), {1, 2, 2}),
                         {4, 6, -2, -2}));
        // Depthwise (groups = channels), kernels (1, 1) and (2, -1).
        p = cp({}, {}, {}, 2);
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV1D, &p, dt, in(dt, {1, 2, 3}, {1, 2, 3, 4, 5, 6}), in(dt, {2, 1, 2}, {1, 1, 2, -1}), absent_input(), {1, 2, 2}),
                         {3, 5, 3, 4}));
        // Bias -1 and relu: 2x - 1 over (1, -2, 3) = (1, -5, 5) -> (1, 0, 5).
        p = cp();
        p.activation = TGL_ACTIVATION_RELU;
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV1D, &p, dt, in(dt, {1, 1, 3}, {1, -2, 3}), in(dt, {1, 1, 1}, {2}), in(dt, {1}, {-1}), {1, 1, 3}), {1, 0, 5}));
        // Pads (2, 2) beyond a 1-tap kernel's reach: the outer outputs see only the bias 1.
        p = cp({}, {2});
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV1D, &p, dt, in(dt, {1, 1, 2}, {1, 2}), in(dt, {1, 1, 1}, {1}), in(dt, {1}, {1}), {1, 1, 6}),
                         {1, 1, 2, 3, 1, 1}));
        // 'same', kernel 4 of ones: pad 1 before, 2 after: sums of x[o-1 .. o+2].
        p = cp();
        p.padding_mode = TGL_CONV_PADDING_SAME;
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV1D, &p, dt, in(dt, {1, 1, 4}, {1, 2, 3, 4}), in(dt, {1, 1, 4}, {1, 1, 1, 1}), absent_input(), {1, 1, 4}),
                         {6, 10, 9, 7}));
        // 3d: a 2x2x2 kernel of ones over 1..8: 36; two batch items (the second negated).
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV3D, nullptr, dt, in(dt, {2, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4, -5, -6, -7, -8}),
                                  in(dt, {1, 1, 2, 2, 2}, Vals(8, 1.0)), absent_input(), {2, 1, 1, 1, 1}),
                         {36, -36}));
    }
}

// Mixed weights: f32 x and y with f16 or bf16 w (bias f32, f16 or bf16), converted exactly and
// summed in f32: w = (1 + u, -1), u = 2^-7 (bf16) or 2^-10 (f16), bias 0.5 over x = 1..4:
// y[o] = (1 + u) x[o] - x[o + 1] + 0.5, never rounded to w's dtype.
TEST_F(ConvOps, MixedWeightsUnderF32Activations) {
    for (tgl_dtype wdt : {F16, BF16})
        for (tgl_dtype bdt : {F32, F16, BF16}) {
            SCOPED_TRACE("w " + std::string(dtype_name(wdt)) + ", bias " + dtype_name(bdt));
            const double u = wdt == BF16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
            Vals want;
            for (int o = 0; o < 3; ++o) want.push_back((1 + u) * (o + 1) - (o + 2) + 0.5);
            EXPECT_TRUE(same(F32, conv(TGL_OP_CONV1D, nullptr, F32, in(F32, {1, 1, 4}, {1, 2, 3, 4}), in(wdt, {1, 1, 2}, {1 + u, -1}),
                                       in(bdt, {1}, {0.5}), {1, 1, 3}),
                             want));
            // 2d and 3d: the same taps along the last dim.
            EXPECT_TRUE(same(F32, conv(TGL_OP_CONV2D, nullptr, F32, in(F32, {1, 1, 1, 4}, {1, 2, 3, 4}), in(wdt, {1, 1, 1, 2}, {1 + u, -1}),
                                       in(bdt, {1}, {0.5}), {1, 1, 1, 3}),
                             want));
            EXPECT_TRUE(same(F32, conv(TGL_OP_CONV3D, nullptr, F32, in(F32, {1, 1, 1, 1, 4}, {1, 2, 3, 4}),
                                       in(wdt, {1, 1, 1, 1, 2}, {1 + u, -1}), in(bdt, {1}, {0.5}), {1, 1, 1, 1, 3}),
                             want));
            // Transposed, stride 1: x = (1, 2) spreads w = (1 + u, -1): (1 + u, 2 + 2u - 1, -2) + 0.5.
            EXPECT_TRUE(same(F32, conv(TGL_OP_CONV_TRANSPOSE1D, nullptr, F32, in(F32, {1, 1, 2}, {1, 2}), in(wdt, {1, 1, 2}, {1 + u, -1}),
                                       in(bdt, {1}, {0.5}), {1, 1, 3}),
                             {1.5 + u, 1.5 + 2 * u, -1.5}));
            EXPECT_TRUE(same(F32, conv(TGL_OP_CONV_TRANSPOSE2D, nullptr, F32, in(F32, {1, 1, 1, 2}, {1, 2}),
                                       in(wdt, {1, 1, 1, 2}, {1 + u, -1}), in(bdt, {1}, {0.5}), {1, 1, 1, 3}),
                             {1.5 + u, 1.5 + 2 * u, -1.5}));
        }
}

TEST_F(ConvOps, TransposedKnownAnswers) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // Stride 2, output_padding 1, kernel (1, 2, 3), bias 0.5: x0 = 1 adds (1, 2, 3) at 0..2, x1 = 2 adds
        // (2, 4, 6) at 2..4; out = (2 - 1) * 2 + 2 + 1 + 1 = 6, the last only the bias.
        auto p = cp({2});
        p.output_padding[0] = 1;
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV_TRANSPOSE1D, &p, dt, in(dt, {1, 1, 2}, {1, 2}), in(dt, {1, 1, 3}, {1, 2, 3}), in(dt, {1}, {0.5}), {1, 1, 6}),
                         {1.5, 2.5, 5.5, 4.5, 6.5, 0.5}));
        // 2d, 2x2 kernel of ones, stride 1: each x element spreads over a 2x2 block of the 3x3 output.
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV_TRANSPOSE2D, nullptr, dt, in(dt, {1, 1, 2, 2}, {1, 2, 3, 4}), in(dt, {1, 1, 2, 2}, {1, 1, 1, 1}), absent_input(),
                                  {1, 1, 3, 3}),
                         {1, 3, 2, 4, 10, 6, 3, 7, 4}));
        // Pad 1 crops one element each side: the full result (1, 2+2, 3+4, 6) = (1, 4, 7, 6) of stride 1,
        // kernel (1, 2, 3) over x (1, 2) -> (1, 4, 7, 6), cropped to (4, 7). Groups 2: the second group's
        // channel uses kernel (1, 0, -1) on x (3, 4): full (3, 4, -3, -4) -> (4, -3).
        p = cp({}, {1}, {}, 2);
        EXPECT_TRUE(same(dt, conv(TGL_OP_CONV_TRANSPOSE1D, &p, dt, in(dt, {1, 2, 2}, {1, 2, 3, 4}), in(dt, {2, 1, 3}, {1, 2, 3, 1, 0, -1}), absent_input(),
                                  {1, 2, 2}),
                         {4, 7, 4, -3}));
    }
}

TEST_F(ConvOps, BackwardKnownAnswers) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // Forward: y[o] = 3 x[2o] + 4 x[2o + 1] (stride (1, 2), kernel (3, 4)). dy = (1, 2) -> dx = (3, 4, 6, 8);
        // a dx of width 5 (the same dy shape) gets 0 at the position no output reads.
        auto p = cp({1, 2});
        Vals dx = run_op_values(dev(), TGL_OP_CONV2D_BACKWARD_INPUT, &p, {in(dt, {1, 1, 1, 2}, {1, 2}), in(dt, {1, 1, 1, 2}, {3, 4})},
                                {output_of(dt, {1, 1, 1, 4})})[0];
        EXPECT_TRUE(same(dt, dx, {3, 4, 6, 8}));
        dx = run_op_values(dev(), TGL_OP_CONV2D_BACKWARD_INPUT, &p, {in(dt, {1, 1, 1, 2}, {1, 2}), in(dt, {1, 1, 1, 2}, {3, 4})},
                           {output_of(dt, {1, 1, 1, 5})})[0];
        EXPECT_TRUE(same(dt, dx, {3, 4, 6, 8, 0}));
        // dw[j] = sum_o dy[o] x[2o + j] over x = (1, 2, 3, 4): (1 + 6, 2 + 8) = (7, 10); db = 1 + 2.
        auto ys = run_op_values(dev(), TGL_OP_CONV2D_BACKWARD_WEIGHT, &p, {in(dt, {1, 1, 1, 4}, {1, 2, 3, 4}), in(dt, {1, 1, 1, 2}, {1, 2})},
                                {output_of(dt, {1, 1, 1, 2}), output_of(dt, {1})});
        EXPECT_TRUE(same(dt, ys[0], {7, 10}));
        EXPECT_TRUE(same(dt, ys[1], {3}));
        // Without db; an empty batch gives dw = 0.
        ys = run_op_values(dev(), TGL_OP_CONV2D_BACKWARD_WEIGHT, &p, {in(dt, {0, 1, 1, 4}, Vals(4, 0.0)), in(dt, {0, 1, 1, 2}, Vals(2, 0.0))},
                           {output_of(dt, {1, 1, 1, 2}), absent_output()});
        EXPECT_TRUE(same(dt, ys[0], {0, 0}));
    }
}

// Both backward ops against central differences of conv2d (stride 2, pad 1, dilation 1, groups 2,
// 3x3 kernel) for L = sum(y * r).
TEST_F(ConvOps, BackwardMatchesFiniteDifferences) {
    Rng rng(7);
    const Shape xs = {2, 4, 5, 4}, ws = {2, 2, 3, 3}, ys = {2, 2, 3, 2};
    auto numel = [](const Shape& s) {
        int64_t n = 1;
        for (int64_t d : s) n *= d;
        return n;
    };
    Vals x(size_t(numel(xs))), w(size_t(numel(ws))), r(size_t(numel(ys)));
    for (double& v : x) v = rng.uniform(-1, 1);
    for (double& v : w) v = rng.uniform(-1, 1);
    for (double& v : r) v = rng.uniform(-1, 1);
    auto p = cp({2, 2}, {1, 1}, {}, 2);
    auto loss = [&](const Vals& xv, const Vals& wv) {
        Vals y = conv(TGL_OP_CONV2D, &p, F32, in(F32, xs, xv), in(F32, ws, wv), absent_input(), ys);
        double l = 0;
        for (size_t i = 0; i < y.size(); ++i) l += y[i] * r[i];
        return l;
    };
    const double h = 0.25;  // exact in f32; the loss is linear, so only rounding remains
    Vals dx = run_op_values(dev(), TGL_OP_CONV2D_BACKWARD_INPUT, &p, {in(F32, ys, r), in(F32, ws, w)}, {output_of(F32, xs)})[0];
    auto g = run_op_values(dev(), TGL_OP_CONV2D_BACKWARD_WEIGHT, &p, {in(F32, xs, x), in(F32, ys, r)}, {output_of(F32, ws), output_of(F32, {2})});
    for (size_t i = 0; i < x.size(); i += 3) {
        Vals a = x, b = x;
        a[i] += h;
        b[i] -= h;
        EXPECT_NEAR(dx[i], (loss(a, w) - loss(b, w)) / (2 * h), 1e-4) << "dx[" << i << "]";
    }
    for (size_t i = 0; i < w.size(); ++i) {
        Vals a = w, b = w;
        a[i] += h;
        b[i] -= h;
        EXPECT_NEAR(g[0][i], (loss(x, a) - loss(x, b)) / (2 * h), 1e-4) << "dw[" << i << "]";
    }
    // db: the derivative of L with respect to a bias added to every output of a channel = sum of r there.
    for (int c = 0; c < 2; ++c) {
        double s = 0;
        for (int n = 0; n < 2; ++n)
            for (int k = 0; k < 6; ++k) s += r[size_t(n * 12 + c * 6 + k)];
        EXPECT_NEAR(g[1][size_t(c)], s, 1e-5);
    }
}

// ----- bad input ------------------------------------------------------------------------------------

TEST_F(ConvOps, BadInput) {
    auto ones = [](const Shape& s) {
        int64_t n = 1;
        for (int64_t d : s) n *= d;
        return in(F32, s, Vals(size_t(n), 1.0));
    };
    const InputArg none = absent_input();
    auto p = cp({}, {}, {}, 2);
    expect_rejected(TGL_OP_CONV2D, &p, {ones({1, 3, 4, 4}), ones({2, 1, 3, 3}), none}, {output_of(F32, {1, 2, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->groups", "3"});
    expect_rejected(TGL_OP_CONV2D, nullptr, {ones({1, 4, 4, 4}), ones({2, 3, 3, 3}), none}, {output_of(F32, {1, 2, 2, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[1] (w)", "(2, 3, 3, 3)", "C_in/groups"});
    expect_rejected(TGL_OP_CONV2D, nullptr, {ones({1, 1, 2, 2}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 1, 1})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"kernel reaches 3", "padded input has only 2"});
    expect_rejected(TGL_OP_CONV2D, nullptr, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 3, 3})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)", "(1, 1, 3, 3)", "(1, 1, 2, 2)"});
    expect_rejected(TGL_OP_CONV2D, nullptr, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), ones({2})}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[2] (bias)", "(2)", "(1)"});
    expect_rejected(TGL_OP_CONV2D, nullptr, {ones({1, 1, 4, 4}), ones({1, 1, 3}), none}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[1] (w)", "rank 4"});
    // Mixed weights: f16/bf16 w and bias under f32 x only; y has x's dtype; no mixing in the backward ops.
    const InputArg x16 = in(F16, {1, 1, 4, 4}, Vals(16, 1.0));
    expect_rejected(TGL_OP_CONV2D, nullptr, {x16, in(TGL_DTYPE_BF16, {1, 1, 3, 3}, Vals(9, 1.0)), none}, {output_of(F16, {1, 1, 2, 2})},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[1] (w)", "bf16", "f16", "only under f32"});
    expect_rejected(TGL_OP_CONV2D, nullptr, {x16, in(F32, {1, 1, 3, 3}, Vals(9, 1.0)), none}, {output_of(F16, {1, 1, 2, 2})},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[1] (w)", "f32", "f16"});
    expect_rejected(TGL_OP_CONV2D, nullptr, {x16, in(F16, {1, 1, 3, 3}, Vals(9, 1.0)), in(TGL_DTYPE_BF16, {1}, {0})},
                    {output_of(F16, {1, 1, 2, 2})}, TGL_ERROR_DTYPE_MISMATCH, {"inputs[2] (bias)", "bf16"});
    expect_rejected(TGL_OP_CONV2D, nullptr, {ones({1, 1, 4, 4}), in(F16, {1, 1, 3, 3}, Vals(9, 1.0)), none}, {output_of(F16, {1, 1, 2, 2})},
                    TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)", "f16", "f32"});
    expect_rejected(TGL_OP_CONV2D_BACKWARD_INPUT, nullptr, {ones({1, 1, 2, 2}), in(F16, {1, 1, 3, 3}, Vals(9, 1.0))},
                    {output_of(F32, {1, 1, 4, 4})}, TGL_ERROR_DTYPE_MISMATCH, {"inputs[1] (w)", "f16"});
    p = cp();
    p.padding_mode = 2;
    expect_rejected(TGL_OP_CONV2D, &p, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->padding_mode", "2"});
    p = cp({2, 2});
    p.padding_mode = TGL_CONV_PADDING_SAME;
    expect_rejected(TGL_OP_CONV2D, &p, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 4, 4})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"TGL_CONV_PADDING_SAME", "stride[0] = 1"});
    p = cp({0, 1});
    expect_rejected(TGL_OP_CONV2D, &p, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->stride[0]", "0"});
    p = cp({}, {-1});
    expect_rejected(TGL_OP_CONV2D, &p, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->pad_begin[0]", "-1"});
    p = cp();
    p.activation = 9;
    expect_rejected(TGL_OP_CONV2D, &p, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->activation", "9"});
    p = cp();
    p.struct_size = 40;
    expect_rejected(TGL_OP_CONV2D, &p, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_PARAMS_SIZE,
                    {"struct_size", "40"});
    p = cp();
    p.output_padding[0] = 1;
    expect_rejected(TGL_OP_CONV2D, &p, {ones({1, 1, 4, 4}), ones({1, 1, 3, 3}), none}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->output_padding[0]"});
    // Transposed: output_padding must be below the stride; no 'same'; w's dim 0 is C_in.
    p = cp({2});
    p.output_padding[0] = 2;
    expect_rejected(TGL_OP_CONV_TRANSPOSE1D, &p, {ones({1, 1, 3}), ones({1, 1, 3}), none}, {output_of(F32, {1, 1, 9})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->output_padding[0]", "2"});
    p = cp();
    p.padding_mode = TGL_CONV_PADDING_SAME;
    expect_rejected(TGL_OP_CONV_TRANSPOSE1D, &p, {ones({1, 1, 3}), ones({1, 1, 3}), none}, {output_of(F32, {1, 1, 5})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"padding_mode", "transposed"});
    expect_rejected(TGL_OP_CONV_TRANSPOSE1D, nullptr, {ones({1, 2, 3}), ones({1, 1, 3}), none}, {output_of(F32, {1, 1, 5})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[1] (w)", "C_in"});
    // Backward: dy must be conv2d's output for dx's shape; no activation; dw's C_out is dy's.
    expect_rejected(TGL_OP_CONV2D_BACKWARD_INPUT, nullptr, {ones({1, 1, 3, 3}), ones({1, 1, 3, 3})}, {output_of(F32, {1, 1, 4, 4})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[0] (dy)", "(1, 1, 3, 3)", "(1, 1, 2, 2)"});
    p = cp();
    p.activation = TGL_ACTIVATION_RELU;
    expect_rejected(TGL_OP_CONV2D_BACKWARD_INPUT, &p, {ones({1, 1, 2, 2}), ones({1, 1, 3, 3})}, {output_of(F32, {1, 1, 4, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->activation"});
    expect_rejected(TGL_OP_CONV2D_BACKWARD_WEIGHT, nullptr, {ones({1, 1, 4, 4}), ones({1, 2, 2, 2})}, {output_of(F32, {1, 1, 3, 3}), absent_output()},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (dy)", "(1, 2, 2, 2)"});
    expect_rejected(TGL_OP_CONV2D_BACKWARD_WEIGHT, nullptr, {ones({1, 1, 4, 4}), ones({1, 1, 2, 2})}, {output_of(F32, {1, 1, 3, 3}), output_of(F32, {2})},
                    TGL_ERROR_SHAPE_MISMATCH, {"outputs[1] (db)", "(2)"});
}

}  // namespace
}  // namespace conf
