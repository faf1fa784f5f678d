// Known-answer and bad-input tests of the Pool family, run on every plugin. Expected values are
// worked out by hand in the comments (windows, divisors, source coordinates), not taken from a plugin.
#include "common.h"

#include "tgl_test/op_runner.h"

#include <cmath>
#include <limits>

namespace conf {
namespace {

using PoolOps = ConformanceTest;
using Vals = std::vector<double>;

InputArg in(tgl_dtype dt, const Shape& s, const Vals& v) {
    InputArg a = input_values(dt, s, v);
    if (v.empty()) a.storage = Storage::zeros(dt, a.view.storage);  // an empty tensor's view still spans elements
    return a;
}

// Pooling params over the given spatial dims (stride 0: the kernel; dilation 0: 1).
tgl_pool_params pool(std::vector<int> kernel, std::vector<int> stride = {}, std::vector<int> pad = {},
                     std::vector<int> dilation = {}, bool ceil_mode = false, bool cip = false) {
    tgl_pool_params p{};
    p.struct_size = sizeof p;
    p.ceil_mode = ceil_mode;
    p.count_include_pad = cip;
    for (size_t d = 0; d < kernel.size(); ++d) {
        p.kernel[d] = kernel[d];
        p.stride[d] = d < stride.size() ? stride[d] : 0;
        p.pad_begin[d] = p.pad_end[d] = d < pad.size() ? pad[d] : 0;
        p.dilation[d] = d < dilation.size() ? dilation[d] : 0;
    }
    return p;
}
tgl_upsample_params ups(bool align, std::vector<float> scales = {}) {
    tgl_upsample_params p{};
    p.struct_size = sizeof p;
    p.align_corners = align;
    for (size_t d = 0; d < scales.size(); ++d) p.scales[d] = scales[d];
    return p;
}

std::vector<Vals> run(tgl_op op, const void* params, const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs) {
    return run_op_values(dev(), op, params, ins, outs);
}
Vals run1(tgl_op op, const void* params, const std::vector<InputArg>& ins, const Shape& y, tgl_dtype dt) {
    return run(op, params, ins, {output_of(dt, y)}).at(0);
}

// Values exact in f32 and f16 (or the expected results rounded to the dtype): exact comparison;
// `tol` > 0: relative per element (divisions on the GPU are not correctly rounded).
::testing::AssertionResult same(tgl_dtype dt, const Vals& got, const Vals& want, double tol = 0) {
    Vals w = want;
    for (double& v : w) v = round_to_dtype(dt, v);
    if (tol == 0) return compare(dt, got, w, Shape{int64_t(want.size())}, 0, CompareMode::Exact);
    return compare(dt, got, w, Shape{int64_t(want.size())}, dt == F16 ? 1e-6 : tol, CompareMode::PerElement);
}
::testing::AssertionResult same_i(const Vals& got, const Vals& want) {
    return compare(I32, got, want, Shape{int64_t(want.size())}, 0, CompareMode::Exact);
}
Vals scaled(Vals v, double f) {
    for (double& a : v) a *= f;
    return v;
}
Vals iota(int n, double start = 0) {
    Vals v;
    for (int i = 0; i < n; ++i) v.push_back(start + i);
    return v;
}

TEST_F(PoolOps, MaxPool2x2WithIndices) {
    // 4x4, kernel 2, stride 2: windows {1,5,3,4} -> 5 @1, {2,0,8,7} -> 8 @6, {9,-1,2,9} -> the
    // first 9 @8 (tie with @13), {6,6,0,-3} -> the first 6 @10.
    const Vals x = {1, 5, 2, 0, 3, 4, 8, 7, 9, -1, 6, 6, 2, 9, 0, -3};
    for (tgl_dtype dt : {F32, F16, BF16}) {
        auto p = pool({2, 2});
        auto ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 4, 4}, x)}, {output_of(dt, {1, 1, 2, 2}), output_of(I32, {1, 1, 2, 2})});
        EXPECT_TRUE(same(dt, ys[0], {5, 8, 9, 6}));
        EXPECT_TRUE(same_i(ys[1], {1, 6, 8, 10}));
        // indices are optional
        EXPECT_TRUE(same(dt, run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 4, 4}, x)}, {output_of(dt, {1, 1, 2, 2}), absent_output()})[0],
                         {5, 8, 9, 6}));
    }
}

TEST_F(PoolOps, Kernel3Stride2Pad1) {
    // x[i][j] = 5i + j on 5x5; out 3x3; clipped windows rows/cols R0 = {0,1}, R1 = {1,2,3}, R2 = {3,4}.
    const Vals x = iota(25);
    for (tgl_dtype dt : {F32, F16, BF16}) {
        auto p = pool({3, 3}, {2, 2}, {1, 1});
        auto ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 5, 5}, x)}, {output_of(dt, {1, 1, 3, 3}), output_of(I32, {1, 1, 3, 3})});
        const Vals corner = {6, 8, 9, 16, 18, 19, 21, 23, 24};  // the bottom-right element of each window
        EXPECT_TRUE(same(dt, ys[0], corner));
        EXPECT_TRUE(same_i(ys[1], corner));  // flat index 5i + j = the value
        // Window sums 5 |C| sum(R) + |R| sum(C); counts |R| |C|.
        const Vals sums = {12, 27, 24, 63, 108, 81, 72, 117, 84};
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 5, 5}, x)}, {1, 1, 3, 3}, dt), {3, 4.5, 6, 10.5, 12, 13.5, 18, 19.5, 21}, 1e-12));
        p.count_include_pad = 1;
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 5, 5}, x)}, {1, 1, 3, 3}, dt), scaled(sums, 1.0 / 9), 1e-12));
    }
}

TEST_F(PoolOps, CeilModeAndDivisors) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // [1..5], kernel 2 stride 2: floor gives 2 windows, ceil 3 (the last one [4, 6) holds only 5).
        auto p = pool({2});
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 5}, {1, 2, 3, 4, 5})}, {1, 1, 2}, dt), {1.5, 3.5}, 1e-12));
        p.ceil_mode = 1;
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 5}, {1, 2, 3, 4, 5})}, {1, 1, 3}, dt), {1.5, 3.5, 5}, 1e-12));
        auto ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 5}, {1, 2, 3, 4, 5})}, {output_of(dt, {1, 1, 3}), output_of(I32, {1, 1, 3})});
        EXPECT_TRUE(same(dt, ys[0], {2, 4, 5}));
        EXPECT_TRUE(same_i(ys[1], {1, 3, 4}));
        // [1..6], kernel 3 stride 2 pad 1, ceil: 4 windows [-1,2) [1,4) [3,6) [5,8); the last is
        // clipped to the padded input [5,7): divisor 2 with count_include_pad, 1 without.
        p = pool({3}, {2}, {1}, {}, true, true);
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 6}, iota(6, 1))}, {1, 1, 4}, dt), {1, 3, 5, 3}, 1e-12));
        p.count_include_pad = 0;
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 6}, iota(6, 1))}, {1, 1, 4}, dt), {1.5, 3, 5, 6}, 1e-12));
        // Asymmetric padding (begin 1, end 0): windows [-1,1) [1,3) of [1,2,3]: 1, 2.5 (cip 0).
        p = pool({2}, {2});
        p.pad_begin[0] = 1;
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 3}, {1, 2, 3})}, {1, 1, 2}, dt), {1, 2.5}, 1e-12));
    }
    // Length 5, kernel 2, stride 2, pad 1, ceil: ceil(5 / 2) + 1 = 4 windows, but the 4th would
    // start at 6 - 1 = 5, past the input: PyTorch drops it, so y has 3.
    auto p = pool({2}, {2}, {1}, {}, true);
    EXPECT_TRUE(same(F32, run(TGL_OP_MAX_POOL, &p, {in(F32, {1, 1, 5}, {1, 2, 3, 4, 5})}, {output_of(F32, {1, 1, 3}), absent_output()})[0],
                     {1, 3, 5}));
    tgl_test::OpCall call(dev(), {in(F32, {1, 1, 5}, {1, 2, 3, 4, 5})}, {output_of(F32, {1, 1, 4}), absent_output()});
    EXPECT_TGL_ERROR(call.run(TGL_OP_MAX_POOL, &p), TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (y)", "(1, 1, 3)"});
}

// Pads wider than half the kernel (ABI 1.3, as ONNX allows): windows with no input element give
// -inf with index -1 (max_pool), NaN (avg_pool, count_include_pad 0: 0 / 0) or 0 (count_include_pad
// 1); the backward ops skip them. [1, 2, 3], kernel 2, stride 1, pads 2 and 2: six windows
// [-2,0) [-1,1) [0,2) [1,3) [2,4) [3,5).
TEST_F(PoolOps, PaddingWiderThanHalfTheKernel) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        auto p = pool({2}, {1}, {2});
        auto ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 3}, {1, 2, 3})}, {output_of(dt, {1, 1, 6}), output_of(I32, {1, 1, 6})});
        EXPECT_TRUE(same(dt, ys[0], {-dInf, 1, 2, 3, 3, -dInf}));
        EXPECT_TRUE(same_i(ys[1], {-1, 0, 1, 2, 2, -1}));
        EXPECT_TRUE(same(dt, run1(TGL_OP_MAX_POOL_BACKWARD, &p, {in(dt, {1, 1, 6}, iota(6, 1)), in(I32, {1, 1, 6}, ys[1])},
                             {1, 1, 3}, dt),
                         {2, 3, 9}));
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 3}, {1, 2, 3})}, {1, 1, 6}, dt), {dNaN, 1, 1.5, 2.5, 3, dNaN},
                         1e-12));
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL_BACKWARD, &p, {in(dt, {1, 1, 6}, iota(6, 1))}, {1, 1, 3}, dt), {3.5, 3.5, 7},
                         1e-12));
        p.count_include_pad = 1;
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {1, 1, 3}, {1, 2, 3})}, {1, 1, 6}, dt), {0, 0.5, 1.5, 2.5, 1.5, 0},
                         1e-12));
        // 2-D, a pad of 3 before a 2 x 2 input with a 2 x 2 kernel, stride 2: only the last window
        // of each dim reaches the input.
        auto q = pool({2, 2}, {2, 2}, {3, 3});
        q.pad_end[0] = q.pad_end[1] = 0;
        EXPECT_TRUE(same(dt, run(TGL_OP_MAX_POOL, &q, {in(dt, {1, 1, 2, 2}, {1, 2, 3, 4})}, {output_of(dt, {1, 1, 2, 2}), absent_output()})[0],
                         {-dInf, -dInf, -dInf, 1}));
    }
}

TEST_F(PoolOps, DilationNaNAndPadding) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // kernel 2, dilation 3, stride 1 over 7: windows {o, o + 3}.
        auto p = pool({2}, {1}, {}, {3});
        auto ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 7}, {1, 9, 2, 8, 3, 7, 4})}, {output_of(dt, {1, 1, 4}), output_of(I32, {1, 1, 4})});
        EXPECT_TRUE(same(dt, ys[0], {8, 9, 7, 8}));
        EXPECT_TRUE(same_i(ys[1], {3, 1, 5, 3}));
        // A NaN in the window is the max; of several NaNs the index is the last (PyTorch).
        p = pool({2, 2});
        ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 2, 4}, {1, dNaN, 5, 6, 2, 3, dNaN, dNaN})},
                 {output_of(dt, {1, 1, 1, 2}), output_of(I32, {1, 1, 1, 2})});
        EXPECT_TRUE(std::isnan(ys[0][0]) && std::isnan(ys[0][1]));
        EXPECT_TRUE(same_i(ys[1], {1, 7}));
        // Padding is never selected (as -inf, not 0): all-negative windows keep their max.
        p = pool({3}, {1}, {1});
        ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 2}, {-5, -3})}, {output_of(dt, {1, 1, 2}), output_of(I32, {1, 1, 2})});
        EXPECT_TRUE(same(dt, ys[0], {-3, -3}));
        EXPECT_TRUE(same_i(ys[1], {1, 1}));
        // A window of -inf only: -inf, the index of its first element; +inf wins.
        p = pool({2});
        ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {1, 1, 4}, {-dInf, -dInf, 1, dInf})}, {output_of(dt, {1, 1, 2}), output_of(I32, {1, 1, 2})});
        EXPECT_TRUE(same(dt, ys[0], {-dInf, dInf}));
        EXPECT_TRUE(same_i(ys[1], {0, 3}));
    }
}

TEST_F(PoolOps, ThreeDAndBatched) {
    // x (2, 2, 2, 2, 2) = 0..31, kernel 2 over the 3 spatial dims: the max of each (n, c) cube is
    // its last element (index 7), the mean its middle (8k + 3.5).
    for (tgl_dtype dt : {F32, F16, BF16}) {
        auto p = pool({2, 2, 2});
        auto ys = run(TGL_OP_MAX_POOL, &p, {in(dt, {2, 2, 2, 2, 2}, iota(32))}, {output_of(dt, {2, 2, 1, 1, 1}), output_of(I32, {2, 2, 1, 1, 1})});
        EXPECT_TRUE(same(dt, ys[0], {7, 15, 23, 31}));
        EXPECT_TRUE(same_i(ys[1], {7, 7, 7, 7}));
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL, &p, {in(dt, {2, 2, 2, 2, 2}, iota(32))}, {2, 2, 1, 1, 1}, dt), {3.5, 11.5, 19.5, 27.5}, 1e-12));
    }
}

TEST_F(PoolOps, GlobalPooling) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // (1, 2, 2, 3): channel 0 = 1..6; channel 1 holds a NaN.
        const Vals x = {1, 2, 3, 4, 5, 6, -1, dNaN, 0, 2, 3, 4};
        Vals y = run1(TGL_OP_GLOBAL_MAX_POOL, nullptr, {in(dt, {1, 2, 2, 3}, x)}, {1, 2}, dt);
        EXPECT_EQ(y[0], 6);
        EXPECT_TRUE(std::isnan(y[1]));
        y = run1(TGL_OP_GLOBAL_AVG_POOL, nullptr, {in(dt, {1, 2, 2, 3}, x)}, {1, 2, 1, 1}, dt);
        EXPECT_EQ(y[0], 3.5);
        EXPECT_TRUE(std::isnan(y[1]));
        // Planes of 100 (one workgroup each on the GPU): 1..100 and its negation.
        Vals big = iota(100, 1);
        for (int i = 0; i < 100; ++i) big.push_back(-(i + 1));
        EXPECT_TRUE(same(dt, run1(TGL_OP_GLOBAL_AVG_POOL, nullptr, {in(dt, {2, 1, 100}, big)}, {2, 1, 1}, dt), {50.5, -50.5}, 1e-9));
        EXPECT_TRUE(same(dt, run1(TGL_OP_GLOBAL_MAX_POOL, nullptr, {in(dt, {2, 1, 100}, big)}, {2, 1}, dt), {100, -1}));
        if (dt == F32) {  // a plane of 20,000 (split into chunks on the GPU): 1..20000
            const Vals v = iota(20000, 1);
            EXPECT_TRUE(same(dt, run1(TGL_OP_GLOBAL_AVG_POOL, nullptr, {in(dt, {1, 1, 100, 200}, v)}, {1, 1}, dt), {10000.5}, 1e-12));
            EXPECT_TRUE(same(dt, run1(TGL_OP_GLOBAL_MAX_POOL, nullptr, {in(dt, {1, 1, 100, 200}, v)}, {1, 1}, dt), {20000}));
            Vals w = v;
            w[12345] = dNaN;
            EXPECT_TRUE(std::isnan(run1(TGL_OP_GLOBAL_MAX_POOL, nullptr, {in(dt, {1, 1, 100, 200}, w)}, {1, 1}, dt)[0]));
        }
        big[57] = dNaN;
        y = run1(TGL_OP_GLOBAL_MAX_POOL, nullptr, {in(dt, {2, 1, 100}, big)}, {2, 1}, dt);
        EXPECT_TRUE(std::isnan(y[0]));
        EXPECT_EQ(y[1], -1);
    }
}

TEST_F(PoolOps, Adaptive) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // 5 -> 3: windows [0,2) [1,4) [3,5).
        EXPECT_TRUE(same(dt, run1(TGL_OP_ADAPTIVE_AVG_POOL, nullptr, {in(dt, {1, 1, 5}, {1, 2, 3, 4, 5})}, {1, 1, 3}, dt), {1.5, 3, 4.5}, 1e-12));
        // 5x5 (5i + j) -> 3x3: 5 mean(R) + mean(C) with means 0.5, 2, 3.5.
        EXPECT_TRUE(same(dt, run1(TGL_OP_ADAPTIVE_AVG_POOL, nullptr, {in(dt, {1, 1, 5, 5}, iota(25))}, {1, 1, 3, 3}, dt),
                         {3, 4.5, 6, 10.5, 12, 13.5, 18, 19.5, 21}, 1e-12));
        // 2 -> 3 (upsampling windows [0,1) [0,2) [1,2)), 3d with unit dims.
        EXPECT_TRUE(same(dt, run1(TGL_OP_ADAPTIVE_AVG_POOL, nullptr, {in(dt, {1, 1, 1, 1, 2}, {2, 4})}, {1, 1, 1, 1, 3}, dt), {2, 3, 4}, 1e-12));
    }
}

TEST_F(PoolOps, UpsampleNearest) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        EXPECT_TRUE(same(dt, run1(TGL_OP_UPSAMPLE_NEAREST, nullptr, {in(dt, {1, 1, 2, 2}, {1, 2, 3, 4})}, {1, 1, 4, 4}, dt),
                         {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
        // 3 -> 5 from the sizes: step 3/5, floor(0, .6, 1.2, 1.8, 2.4) = 0 0 1 1 2.
        EXPECT_TRUE(same(dt, run1(TGL_OP_UPSAMPLE_NEAREST, nullptr, {in(dt, {1, 1, 3}, {10, 20, 30})}, {1, 1, 5}, dt), {10, 10, 20, 20, 30}));
        // scale_factor 1.6: 3 -> floor(4.8) = 4 with step 1 / 1.6 = 0.625: 0 0 1 1 (from the sizes
        // 3/4 it would be 0 0 1 2).
        auto p = ups(false, {1.6f});
        EXPECT_TRUE(same(dt, run1(TGL_OP_UPSAMPLE_NEAREST, &p, {in(dt, {1, 1, 3}, {10, 20, 30})}, {1, 1, 4}, dt), {10, 10, 20, 20}));
        EXPECT_TRUE(same(dt, run1(TGL_OP_UPSAMPLE_NEAREST, nullptr, {in(dt, {1, 1, 3}, {10, 20, 30})}, {1, 1, 4}, dt), {10, 10, 20, 30}));
        // Downsampling 4 -> 2 (step 2) in 3d: picks elements 0 and 2 of the last dim.
        EXPECT_TRUE(same(dt, run1(TGL_OP_UPSAMPLE_NEAREST, nullptr, {in(dt, {1, 1, 1, 1, 4}, {5, 6, 7, 8})}, {1, 1, 1, 1, 2}, dt), {5, 7}));
    }
}

TEST_F(PoolOps, UpsampleBilinear) {
    // x = 1 + 2h + w on 2x2 is linear, so y = 1 + 2 ch + cw at the source coordinates:
    // align_corners 1: c = d / 3 (scale (2 - 1) / (4 - 1)); align_corners 0: c = max((d + .5) / 2
    // - .5, 0) = 0, .25, .75, then 1.25 clamps to index 1 (both neighbours 1): 1.
    auto expect = [](const Vals& c) {
        Vals y;
        for (double h : c)
            for (double w : c) y.push_back(1 + 2 * h + w);
        return y;
    };
    for (tgl_dtype dt : {F32, F16, BF16}) {
        auto p = ups(true);
        EXPECT_TRUE(same(dt, run1(TGL_OP_UPSAMPLE_BILINEAR, &p, {in(dt, {1, 1, 2, 2}, {1, 2, 3, 4})}, {1, 1, 4, 4}, dt),
                         expect({0, 1.0 / 3, 2.0 / 3, 1}), 1e-12));
        p = ups(false);
        EXPECT_TRUE(same(dt, run1(TGL_OP_UPSAMPLE_BILINEAR, &p, {in(dt, {1, 1, 2, 2}, {1, 2, 3, 4})}, {1, 1, 4, 4}, dt),
                         expect({0, 0.25, 0.75, 1}), 1e-12));
        // Downsampling 4 -> 2, align_corners 0: c = (d + .5) * 2 - .5 = 0.5, 2.5 of x = 4h + w.
        Vals y = run1(TGL_OP_UPSAMPLE_BILINEAR, nullptr, {in(dt, {1, 1, 4, 4}, iota(16))}, {1, 1, 2, 2}, dt);
        EXPECT_TRUE(same(dt, y, {2.5, 4.5, 10.5, 12.5}, 1e-12));
    }
}

TEST_F(PoolOps, Backward) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // max: dy to the recorded indices; two windows sharing their max add up.
        auto p = pool({2, 2});
        Vals dx = run1(TGL_OP_MAX_POOL_BACKWARD, &p, {in(dt, {1, 1, 2, 2}, {1, 2, 3, 4}), in(I32, {1, 1, 2, 2}, {1, 6, 8, 10})}, {1, 1, 4, 4}, dt);
        EXPECT_TRUE(same(dt, dx, {0, 1, 0, 0, 0, 0, 2, 0, 3, 0, 4, 0, 0, 0, 0, 0}));
        p = pool({2}, {1});
        dx = run1(TGL_OP_MAX_POOL_BACKWARD, &p, {in(dt, {1, 1, 2}, {1, 2}), in(I32, {1, 1, 2}, {1, 1})}, {1, 1, 3}, dt);
        EXPECT_TRUE(same(dt, dx, {0, 3, 0}));
        // An index outside its own window (3 for window [0, 2)) contributes nothing.
        dx = run1(TGL_OP_MAX_POOL_BACKWARD, &p, {in(dt, {1, 1, 2}, {1, 2}), in(I32, {1, 1, 2}, {2, 2})}, {1, 1, 3}, dt);
        EXPECT_TRUE(same(dt, dx, {0, 0, 2}));
        // avg, kernel 2 stride 1 over 4: dx = (dy0, dy0 + dy1, dy1 + dy2, dy2) / 2.
        dx = run1(TGL_OP_AVG_POOL_BACKWARD, &p, {in(dt, {1, 1, 3}, {1, 2, 3})}, {1, 1, 4}, dt);
        EXPECT_TRUE(same(dt, dx, {0.5, 1.5, 2.5, 1.5}));
        // kernel 3, pad 1 over 3, dy = 6: divisors (2, 3, 2) without padding counted, 3 with.
        p = pool({3}, {1}, {1});
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL_BACKWARD, &p, {in(dt, {1, 1, 3}, {6, 6, 6})}, {1, 1, 3}, dt), {5, 8, 5}, 1e-12));
        p.count_include_pad = 1;
        EXPECT_TRUE(same(dt, run1(TGL_OP_AVG_POOL_BACKWARD, &p, {in(dt, {1, 1, 3}, {6, 6, 6})}, {1, 1, 3}, dt), {4, 6, 4}, 1e-12));
        // adaptive 5 -> 3, windows [0,2) [1,4) [3,5), dy (2, 3, 4): shares 1, 1, 2.
        EXPECT_TRUE(same(dt, run1(TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD, nullptr, {in(dt, {1, 1, 3}, {2, 3, 4})}, {1, 1, 5}, dt),
                         {1, 2, 1, 3, 2}, 1e-12));
    }
}

// The backward ops against central differences of the forward op: L(x) = sum(dy * f(x)),
// dL/dx_i = (L(x + h e_i) - L(x - h e_i)) / 2h. Pooling is piecewise linear, so with distinct
// values (max: no ties within h) the differences are exact up to rounding.
TEST_F(PoolOps, BackwardMatchesFiniteDifferences) {
    struct Case {
        tgl_op fwd, bwd;
        tgl_pool_params p;
        Shape xs, ys;
    };
    const std::vector<Case> cases = {
        {TGL_OP_AVG_POOL, TGL_OP_AVG_POOL_BACKWARD, pool({3, 2}, {2, 1}, {1, 1}, {}, true, false), {1, 2, 5, 4}, {1, 2, 3, 5}},
        {TGL_OP_AVG_POOL, TGL_OP_AVG_POOL_BACKWARD, pool({3}, {2}, {1}, {}, true, true), {2, 1, 6}, {2, 1, 4}},
        {TGL_OP_MAX_POOL, TGL_OP_MAX_POOL_BACKWARD, pool({2, 3}, {1, 2}, {1, 1}, {2, 1}), {1, 1, 5, 6}, {1, 1, 5, 3}},
        {TGL_OP_ADAPTIVE_AVG_POOL, TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD, tgl_pool_params{}, {1, 2, 5, 3}, {1, 2, 3, 2}},
    };
    Rng rng(17);
    for (const Case& c : cases) {
        const bool adaptive = c.fwd == TGL_OP_ADAPTIVE_AVG_POOL;
        const bool max = c.fwd == TGL_OP_MAX_POOL;
        const void* prm = adaptive ? nullptr : &c.p;
        int64_t nx = 1, ny = 1;
        for (int64_t v : c.xs) nx *= v;
        for (int64_t v : c.ys) ny *= v;
        Vals x, dy;
        for (int64_t i = 0; i < nx; ++i) x.push_back(double(float(0.25 * double((i * 7) % nx) + rng.uniform(0, 0.1))));
        for (int64_t i = 0; i < ny; ++i) dy.push_back(double(float(rng.uniform(-1, 1))));
        auto loss = [&](const Vals& xv) {
            Vals y = max ? run(c.fwd, prm, {in(F32, c.xs, xv)}, {output_of(F32, c.ys), absent_output()})[0]
                         : run1(c.fwd, prm, {in(F32, c.xs, xv)}, c.ys, F32);
            double l = 0;
            for (int64_t i = 0; i < ny; ++i) l += dy[size_t(i)] * y[size_t(i)];
            return l;
        };
        Vals want;
        const double h = 1.0 / 16;  // exact in f32; values differ by >= 0.25 - 0.1 > 2h
        for (int64_t i = 0; i < nx; ++i) {
            Vals xp = x, xm = x;
            xp[size_t(i)] += h;
            xm[size_t(i)] -= h;
            want.push_back((loss(xp) - loss(xm)) / (2 * h));
        }
        std::vector<InputArg> bins = {in(F32, c.ys, dy)};
        if (max) bins.push_back(in(I32, c.ys, run(c.fwd, prm, {in(F32, c.xs, x)}, {output_of(F32, c.ys), output_of(I32, c.ys)})[1]));
        Vals got = run1(c.bwd, prm, bins, c.xs, F32);
        EXPECT_TRUE(compare(F32, got, want, c.xs, 1e-8, CompareMode::Nmse)) << "op " << c.bwd;
    }
}

TEST_F(PoolOps, EmptyBatch) {
    auto p = pool({2, 2});
    Vals none;
    EXPECT_TRUE(run(TGL_OP_MAX_POOL, &p, {in(F32, {0, 3, 4, 4}, none)}, {output_of(F32, {0, 3, 2, 2}), output_of(I32, {0, 3, 2, 2})})[0].empty());
    EXPECT_TRUE(run1(TGL_OP_GLOBAL_AVG_POOL, nullptr, {in(F16, {2, 0, 5}, none)}, {2, 0}, F16).empty());
    EXPECT_TRUE(run1(TGL_OP_AVG_POOL_BACKWARD, &p, {in(F32, {1, 0, 2, 2}, none)}, {1, 0, 4, 4}, F32).empty());
}

// ----- bad input ------------------------------------------------------------------------------------

TEST_F(PoolOps, BadInput) {
    const Vals x16(16, 1.0), x4(4, 1.0);
    auto p = pool({2, 2});
    auto x = [&] { return in(F32, {1, 1, 4, 4}, x16); };
    expect_rejected(TGL_OP_MAX_POOL, nullptr, {x()}, {output_of(F32, {1, 1, 2, 2}), absent_output()}, TGL_ERROR_NULL_POINTER,
                    {"params", "kernel"});
    expect_rejected(TGL_OP_MAX_POOL, &p, {x()}, {output_of(F32, {1, 1, 3, 2}), absent_output()}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)", "(1, 1, 3, 2)", "(1, 1, 2, 2)"});
    expect_rejected(TGL_OP_MAX_POOL, &p, {x()}, {output_of(F32, {1, 1, 2, 2}), output_of(F32, {1, 1, 2, 2})},
                    TGL_ERROR_DTYPE_MISMATCH, {"outputs[1] (indices)"});
    expect_rejected(TGL_OP_MAX_POOL, &p, {x()}, {output_of(F32, {1, 1, 2, 2}), output_of(I32, {1, 2, 2})},
                    TGL_ERROR_SHAPE_MISMATCH, {"outputs[1] (indices)", "(1, 2, 2)"});
    expect_rejected(TGL_OP_MAX_POOL, &p, {x()}, {output_of(F16, {1, 1, 2, 2}), absent_output()}, TGL_ERROR_DTYPE_MISMATCH,
                    {"outputs[0] (y)"});
    expect_rejected(TGL_OP_AVG_POOL, &p, {in(F32, {4, 4}, x16)}, {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[0] (x)", "(4, 4)", "(N, C"});
    expect_rejected(TGL_OP_AVG_POOL, &p, {in(F32, {1, 1, 1, 1, 4, 4}, x16)}, {output_of(F32, {1, 1, 1, 1, 2, 2})},
                    TGL_ERROR_RANK_TOO_LARGE, {"inputs[0] (x)"});
    auto q = pool({0, 2});
    expect_rejected(TGL_OP_AVG_POOL, &q, {x()}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT, {"params->kernel[0]", "0"});
    q = pool({2, 2}, {-1, 1});
    expect_rejected(TGL_OP_AVG_POOL, &q, {x()}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT, {"params->stride[0]", "-1"});
    q = pool({2, 2}, {}, {0, -1});
    expect_rejected(TGL_OP_AVG_POOL, &q, {x()}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->pad_begin[1]", ">= 0", "-1"});
    q = pool({2, 2}, {}, {}, {2, 1});
    expect_rejected(TGL_OP_AVG_POOL, &q, {x()}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT, {"params->dilation[0]"});
    q = pool({2, 2});
    q.count_include_pad = 1;
    expect_rejected(TGL_OP_MAX_POOL, &q, {x()}, {output_of(F32, {1, 1, 2, 2}), absent_output()}, TGL_ERROR_INVALID_ARGUMENT,
                    {"count_include_pad"});
    q = pool({2, 2});
    q.ceil_mode = 2;
    expect_rejected(TGL_OP_AVG_POOL, &q, {x()}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT, {"ceil_mode", "2"});
    q = pool({2, 2});
    q.reserved1 = 5;
    expect_rejected(TGL_OP_AVG_POOL, &q, {x()}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_INVALID_ARGUMENT, {"reserved"});
    q = pool({2, 2});
    q.struct_size = 40;
    expect_rejected(TGL_OP_AVG_POOL, &q, {x()}, {output_of(F32, {1, 1, 2, 2})}, TGL_ERROR_PARAMS_SIZE, {"struct_size", "40"});
    q = pool({5, 2});
    expect_rejected(TGL_OP_AVG_POOL, &q, {x()}, {output_of(F32, {1, 1, 1, 2})}, TGL_ERROR_SHAPE_MISMATCH, {"no output window"});
    expect_rejected(TGL_OP_AVG_POOL, &p, {in(F32, {1, 1, 0, 4}, {})}, {output_of(F32, {1, 1, 0, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"spatial dims", ">= 1"});

    expect_rejected(TGL_OP_GLOBAL_AVG_POOL, nullptr, {x()}, {output_of(F32, {1, 1, 1})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)", "(1, 1, 1)"});
    expect_rejected(TGL_OP_ADAPTIVE_AVG_POOL, nullptr, {x()}, {output_of(F32, {1, 2, 2, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)", "(1, 2, 2, 2)"});
    expect_rejected(TGL_OP_ADAPTIVE_AVG_POOL, nullptr, {x()}, {output_of(F32, {1, 1, 2, 0})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)", ">= 1"});

    auto u = ups(true);
    expect_rejected(TGL_OP_UPSAMPLE_NEAREST, &u, {x()}, {output_of(F32, {1, 1, 8, 8})}, TGL_ERROR_INVALID_ARGUMENT, {"align_corners"});
    u = ups(false, {2.0f, 3.0f});
    expect_rejected(TGL_OP_UPSAMPLE_NEAREST, &u, {x()}, {output_of(F32, {1, 1, 8, 8})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)", "scales[1]", "12"});
    u = ups(false, {-1.0f});
    expect_rejected(TGL_OP_UPSAMPLE_NEAREST, &u, {x()}, {output_of(F32, {1, 1, 8, 8})}, TGL_ERROR_INVALID_ARGUMENT, {"scales[0]"});
    expect_rejected(TGL_OP_UPSAMPLE_BILINEAR, nullptr, {in(F32, {1, 1, 4}, x4)}, {output_of(F32, {1, 1, 8})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[0] (x)", "H, W"});
    expect_rejected(TGL_OP_UPSAMPLE_BILINEAR, nullptr, {x()}, {output_of(F32, {1, 1, 8})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)", "rank"});

    expect_rejected(TGL_OP_MAX_POOL_BACKWARD, &p, {in(F32, {1, 1, 2, 2}, x4), in(F32, {1, 1, 2, 2}, x4)}, {output_of(F32, {1, 1, 4, 4})},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[1] (indices)"});
    expect_rejected(TGL_OP_MAX_POOL_BACKWARD, &p, {in(F32, {1, 1, 2, 2}, x4), in(I32, {1, 1, 4}, x4)}, {output_of(F32, {1, 1, 4, 4})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (indices)", "(1, 1, 4)"});
    expect_rejected(TGL_OP_AVG_POOL_BACKWARD, &p, {in(F32, {1, 1, 2, 2}, x4)}, {output_of(F32, {1, 1, 5, 6})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[0] (dy)", "(1, 1, 2, 3)"});
}

}  // namespace
}  // namespace conf
