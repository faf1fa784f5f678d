// Known answers and bad input of the layout ops (contiguous, concat, pad, tile, roll, permute,
// reshape, slice, narrow, split, stack, expand, flip): small hand-checked cases (negative-step
// slices, flips of several axes, every pad mode with asymmetric and negative pads, rolls with
// negative shifts, tiles with extra leading dims, concat with an empty input, uneven splits,
// stack at the last axis), every dtype with odd element offsets, and rejected calls that must
// leave every tensor unchanged.
#include "common.h"

#include "tgl_test/op_runner.h"

#include <cstdint>

namespace conf {
namespace {

using LayoutOps = ConformanceTest;

std::vector<double> iota(int64_t n, double start = 0) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = start + double(i);
    return v;
}

// An input of logical `values` placed in storage by `layout` (no broadcast dims).
InputArg in(tgl_dtype dt, const Shape& shape, const std::vector<double>& values, const Layout& layout = {}) {
    InputArg a;
    a.dtype = dt;
    a.view = make_view(shape, layout);
    a.storage = scatter(dt, a.view, values, 0);
    return a;
}
OutputArg out(tgl_dtype dt, const Shape& shape, const Layout& layout = {}) {
    OutputArg o;
    o.dtype = dt;
    o.view = make_view(shape, layout);
    return o;
}

std::vector<std::vector<double>> run_all(tgl_op op, const void* params, const std::vector<InputArg>& ins,
                                         const std::vector<OutputArg>& outs) {
    return run_op_values(dev(), op, params, ins, outs);
}
std::vector<double> run1(tgl_op op, const void* params, const std::vector<InputArg>& ins, const OutputArg& o) {
    return run_all(op, params, ins, {o}).at(0);
}

// Bit-exact comparison of one output (NaN equals NaN; -0 differs from +0).
::testing::AssertionResult same(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::ExactBits);
}

template <class P>
P zeroed() {
    P p{};
    p.struct_size = sizeof p;
    return p;
}
tgl_permute_params perm_params(std::vector<int> perm) {
    auto p = zeroed<tgl_permute_params>();
    for (size_t i = 0; i < perm.size(); ++i) p.perm[i] = perm[i];
    return p;
}
tgl_slice_params slice_params(int axis, int64_t start, int64_t stop, int64_t step) {
    auto p = zeroed<tgl_slice_params>();
    p.axis = axis;
    p.start = start;
    p.stop = stop;
    p.step = step;
    return p;
}
tgl_narrow_params narrow_params(int axis, int64_t start, int64_t length) {
    auto p = zeroed<tgl_narrow_params>();
    p.axis = axis;
    p.start = start;
    p.length = length;
    return p;
}
tgl_axis_params axis_params(int axis) {
    auto p = zeroed<tgl_axis_params>();
    p.axis = axis;
    return p;
}
tgl_flip_params flip_params(std::vector<int> axes) {
    auto p = zeroed<tgl_flip_params>();
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    return p;
}
tgl_pad_params pad_params(uint32_t mode, std::vector<int64_t> before, std::vector<int64_t> after, double value = 0) {
    auto p = zeroed<tgl_pad_params>();
    p.mode = mode;
    p.value = value;
    for (size_t i = 0; i < before.size(); ++i) p.before[i] = before[i];
    for (size_t i = 0; i < after.size(); ++i) p.after[i] = after[i];
    return p;
}
tgl_roll_params roll_params(std::vector<int> axes, std::vector<int64_t> shifts) {
    auto p = zeroed<tgl_roll_params>();
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    for (size_t i = 0; i < shifts.size(); ++i) p.shifts[i] = shifts[i];
    return p;
}

Layout transposed() {
    Layout l;
    l.name = "transposed";
    l.perm = {1, 0};
    return l;
}

// ----- known answers ------------------------------------------------------------------------------

TEST_F(LayoutOps, ContiguousOfTransposedAndNegativeViews) {
    std::vector<double> x = iota(6, 1);
    EXPECT_TRUE(same(F32, run1(TGL_OP_CONTIGUOUS, nullptr, {in(F32, {2, 3}, x, transposed())}, out(F32, {2, 3})), x));
    Layout neg;
    neg.steps = {-1, -2};
    neg.pad_front = 1;
    EXPECT_TRUE(same(F32, run1(TGL_OP_CONTIGUOUS, nullptr, {in(F32, {2, 3}, x, neg)}, out(F32, {2, 3}, transposed())), x));
    // A scalar.
    EXPECT_TRUE(same(F32, run1(TGL_OP_CONTIGUOUS, nullptr, {in(F32, {}, {-0.0})}, out(F32, {})), {-0.0}));
}

TEST_F(LayoutOps, PermuteKnownAnswers) {
    auto p = perm_params({1, 0});
    EXPECT_TRUE(same(F32, run1(TGL_OP_PERMUTE, &p, {in(F32, {2, 3}, iota(6))}, out(F32, {3, 2})), {0, 3, 1, 4, 2, 5}));
    // (2, 3, 2) -> perm (2, 0, 1) -> (2, 2, 3): y[a, b, c] = x[b, c, a]; with a negative entry.
    auto q = perm_params({-1, 0, 1});
    EXPECT_TRUE(same(I32, run1(TGL_OP_PERMUTE, &q, {in(I32, {2, 3, 2}, iota(12))}, out(I32, {2, 2, 3})),
                     {0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}));
}

TEST_F(LayoutOps, ReshapeOfAView) {
    // x is (2, 3) seen through a transposed view; y takes its elements in row-major order.
    EXPECT_TRUE(same(F32, run1(TGL_OP_RESHAPE, nullptr, {in(F32, {2, 3}, iota(6), transposed())}, out(F32, {3, 2})),
                     iota(6)));
    // Into a transposed output view and from rank 3 to rank 1.
    EXPECT_TRUE(same(F32, run1(TGL_OP_RESHAPE, nullptr, {in(F32, {6}, iota(6))}, out(F32, {3, 2}, transposed())), iota(6)));
    Layout st;
    st.steps = {2, -1, 1};
    EXPECT_TRUE(same(F32, run1(TGL_OP_RESHAPE, nullptr, {in(F32, {2, 3, 2}, iota(12), st)}, out(F32, {12})), iota(12)));
}

TEST_F(LayoutOps, SliceKnownAnswersIncludingNegativeSteps) {
    const std::vector<double> x = iota(10);
    auto run_slice = [&](int64_t start, int64_t stop, int64_t step, int64_t n) {
        auto p = slice_params(0, start, stop, step);
        return run1(TGL_OP_SLICE, &p, {in(F32, {10}, x)}, out(F32, {n}));
    };
    EXPECT_TRUE(same(F32, run_slice(8, 1, -3, 3), {8, 5, 2}));
    EXPECT_TRUE(same(F32, run_slice(-3, INT64_MAX, 1, 3), {7, 8, 9}));
    EXPECT_TRUE(same(F32, run_slice(INT64_MAX, INT64_MIN, -1, 10), {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
    EXPECT_TRUE(same(F32, run_slice(-100, 100, 4, 3), {0, 4, 8}));
    EXPECT_TRUE(same(F32, run_slice(-1, -4, -2, 2), {9, 7}));
    EXPECT_TRUE(same(F32, run_slice(3, INT64_MAX, INT64_MAX, 1), {3}));
    EXPECT_TRUE(same(F32, run_slice(5, 2, 1, 0), {}));  // empty: nothing to write
    auto p = slice_params(-1, 1, 4, 2);
    EXPECT_TRUE(same(F32, run1(TGL_OP_SLICE, &p, {in(F32, {2, 4}, iota(8))}, out(F32, {2, 2})), {1, 3, 5, 7}));
}

TEST_F(LayoutOps, NarrowWithNegativeStart) {
    auto p = narrow_params(1, -3, 2);
    EXPECT_TRUE(same(F32, run1(TGL_OP_NARROW, &p, {in(F32, {3, 4}, iota(12))}, out(F32, {3, 2})), {1, 2, 5, 6, 9, 10}));
    auto q = narrow_params(0, 2, 1);
    EXPECT_TRUE(same(F32, run1(TGL_OP_NARROW, &q, {in(F32, {3, 4}, iota(12))}, out(F32, {1, 4})), {8, 9, 10, 11}));
}

TEST_F(LayoutOps, ExpandBroadcastsNumPyStyle) {
    EXPECT_TRUE(same(F32, run1(TGL_OP_EXPAND, nullptr, {in(F32, {3, 1}, {1, 2, 3})}, out(F32, {2, 3, 2})),
                     {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
    EXPECT_TRUE(same(F32, run1(TGL_OP_EXPAND, nullptr, {in(F32, {}, {7})}, out(F32, {2, 2})), {7, 7, 7, 7}));
}

TEST_F(LayoutOps, FlipOneAndSeveralAxes) {
    auto all = flip_params({0, 1});
    EXPECT_TRUE(same(F32, run1(TGL_OP_FLIP, &all, {in(F32, {2, 3}, iota(6))}, out(F32, {2, 3})), {5, 4, 3, 2, 1, 0}));
    auto last = flip_params({-1});
    EXPECT_TRUE(same(F32, run1(TGL_OP_FLIP, &last, {in(F32, {2, 3}, iota(6))}, out(F32, {2, 3})), {2, 1, 0, 5, 4, 3}));
    auto outer = flip_params({2, 0});
    EXPECT_TRUE(same(F32, run1(TGL_OP_FLIP, &outer, {in(F32, {2, 2, 2}, iota(8))}, out(F32, {2, 2, 2})),
                     {5, 4, 7, 6, 1, 0, 3, 2}));
    auto none = flip_params({});
    EXPECT_TRUE(same(F32, run1(TGL_OP_FLIP, &none, {in(F32, {3}, iota(3))}, out(F32, {3})), iota(3)));
}

TEST_F(LayoutOps, ConcatOfThreeWithAnEmptyInput) {
    auto p = axis_params(1);
    EXPECT_TRUE(same(F32,
                     run1(TGL_OP_CONCAT, &p,
                          {in(F32, {2, 1}, {1, 2}), in(F32, {2, 0}, {}), in(F32, {2, 2}, {3, 4, 5, 6})}, out(F32, {2, 3})),
                     {1, 3, 4, 2, 5, 6}));
    auto q = axis_params(-2);
    EXPECT_TRUE(same(I32, run1(TGL_OP_CONCAT, &q, {in(I32, {1, 2}, {1, 2}), in(I32, {2, 2}, {3, 4, 5, 6})}, out(I32, {3, 2})),
                     {1, 2, 3, 4, 5, 6}));
    // One input, NULL params (axis 0).
    EXPECT_TRUE(same(F32, run1(TGL_OP_CONCAT, nullptr, {in(F32, {2}, {1, 2})}, out(F32, {2})), {1, 2}));
}

TEST_F(LayoutOps, SplitIntoUnevenParts) {
    auto p = axis_params(0);
    auto ys = run_all(TGL_OP_SPLIT, &p, {in(F32, {5, 2}, iota(10))}, {out(F32, {1, 2}), out(F32, {3, 2}), out(F32, {1, 2})});
    EXPECT_TRUE(same(F32, ys[0], {0, 1}));
    EXPECT_TRUE(same(F32, ys[1], {2, 3, 4, 5, 6, 7}));
    EXPECT_TRUE(same(F32, ys[2], {8, 9}));
    auto q = axis_params(-1);
    ys = run_all(TGL_OP_SPLIT, &q, {in(F32, {2, 3}, iota(6))}, {out(F32, {2, 1}), out(F32, {2, 0}), out(F32, {2, 2})});
    EXPECT_TRUE(same(F32, ys[0], {0, 3}));
    EXPECT_TRUE(same(F32, ys[2], {1, 2, 4, 5}));
}

TEST_F(LayoutOps, StackAtFirstAndLastAxis) {
    std::vector<InputArg> xs = {in(F32, {2, 2}, {1, 2, 3, 4}), in(F32, {2, 2}, {5, 6, 7, 8})};
    auto last = axis_params(-1);
    EXPECT_TRUE(same(F32, run1(TGL_OP_STACK, &last, xs, out(F32, {2, 2, 2})), {1, 5, 2, 6, 3, 7, 4, 8}));
    auto first = axis_params(0);
    EXPECT_TRUE(same(F32, run1(TGL_OP_STACK, &first, xs, out(F32, {2, 2, 2})), {1, 2, 3, 4, 5, 6, 7, 8}));
    auto mid = axis_params(1);
    EXPECT_TRUE(same(F32, run1(TGL_OP_STACK, &mid, xs, out(F32, {2, 2, 2})), {1, 2, 5, 6, 3, 4, 7, 8}));
    // Scalars stack into a vector.
    EXPECT_TRUE(same(F32, run1(TGL_OP_STACK, nullptr, {in(F32, {}, {3}), in(F32, {}, {4}), in(F32, {}, {5})}, out(F32, {3})),
                     {3, 4, 5}));
}

TEST_F(LayoutOps, PadConstantAsymmetricAndNegative) {
    auto p = pad_params(TGL_PAD_CONSTANT, {1, -1}, {0, 2}, 9);
    EXPECT_TRUE(same(F32, run1(TGL_OP_PAD, &p, {in(F32, {2, 3}, {1, 2, 3, 4, 5, 6})}, out(F32, {3, 4})),
                     {9, 9, 9, 9, 2, 3, 9, 9, 5, 6, 9, 9}));
    // An empty x padded: every element is the value.
    auto e = pad_params(TGL_PAD_CONSTANT, {1, 0}, {1, 0}, -2.5);
    EXPECT_TRUE(same(F32, run1(TGL_OP_PAD, &e, {in(F32, {0, 2}, {})}, out(F32, {2, 2})), {-2.5, -2.5, -2.5, -2.5}));
}

TEST_F(LayoutOps, PadReflect) {
    auto p = pad_params(TGL_PAD_REFLECT, {2}, {3});
    EXPECT_TRUE(same(F32, run1(TGL_OP_PAD, &p, {in(F32, {4}, {1, 2, 3, 4})}, out(F32, {9})), {3, 2, 1, 2, 3, 4, 3, 2, 1}));
    auto q = pad_params(TGL_PAD_REFLECT, {1, -1}, {0, 1});
    EXPECT_TRUE(same(F32, run1(TGL_OP_PAD, &q, {in(F32, {2, 3}, iota(6))}, out(F32, {3, 3})), {4, 5, 4, 1, 2, 1, 4, 5, 4}));
}

TEST_F(LayoutOps, PadReplicate) {
    auto p = pad_params(TGL_PAD_REPLICATE, {2}, {1});
    EXPECT_TRUE(same(F32, run1(TGL_OP_PAD, &p, {in(F32, {3}, {1, 2, 3})}, out(F32, {6})), {1, 1, 1, 2, 3, 3}));
    auto q = pad_params(TGL_PAD_REPLICATE, {0, 1}, {1, -1});
    EXPECT_TRUE(same(F32, run1(TGL_OP_PAD, &q, {in(F32, {2, 2}, {1, 2, 3, 4})}, out(F32, {3, 2})), {1, 1, 3, 3, 3, 3}));
}

TEST_F(LayoutOps, PadValueConvertedAsCast) {
    auto run_pad = [](tgl_dtype dt, double value) {
        auto p = pad_params(TGL_PAD_CONSTANT, {1}, {0}, value);
        return run1(TGL_OP_PAD, &p, {in(dt, {1}, {1})}, out(dt, {2}));
    };
    EXPECT_TRUE(same(F16, run_pad(F16, 1e6), {dInf, 1}));       // beyond f16's range: inf
    EXPECT_TRUE(same(F16, run_pad(F16, 1.0 + 1.0 / 4096), {1, 1}));  // rounded to nearest even
    EXPECT_TRUE(same(BF16, run_pad(BF16, -0.0), {-0.0, 1}));
    EXPECT_TRUE(same(F32, run_pad(F32, dNaN), {dNaN, 1}));
    EXPECT_TRUE(same(I32, run_pad(I32, -7.9), {-7, 1}));        // truncated
    EXPECT_TRUE(same(I32, run_pad(I32, dNaN), {0, 1}));
    EXPECT_TRUE(same(I8, run_pad(I8, 300.7), {127, 1}));        // saturated
    EXPECT_TRUE(same(U8, run_pad(U8, -5), {0, 1}));
    EXPECT_TRUE(same(BOOL, run_pad(BOOL, 0.5), {1, 1}));
}

TEST_F(LayoutOps, RollNegativeShiftsSeveralAxesAndFlattened) {
    auto p = roll_params({0}, {-2});
    EXPECT_TRUE(same(F32, run1(TGL_OP_ROLL, &p, {in(F32, {5}, iota(5))}, out(F32, {5})), {2, 3, 4, 0, 1}));
    auto q = roll_params({0, -1}, {1, -1});
    EXPECT_TRUE(same(F32, run1(TGL_OP_ROLL, &q, {in(F32, {2, 3}, iota(6))}, out(F32, {2, 3})), {4, 5, 3, 1, 2, 0}));
    auto flat = roll_params({}, {2});
    EXPECT_TRUE(same(F32, run1(TGL_OP_ROLL, &flat, {in(F32, {2, 3}, iota(6))}, out(F32, {2, 3})), {4, 5, 0, 1, 2, 3}));
    auto flat_neg = roll_params({}, {-7});
    EXPECT_TRUE(same(F32, run1(TGL_OP_ROLL, &flat_neg, {in(F32, {2, 3}, iota(6), transposed())}, out(F32, {2, 3})),
                     {1, 2, 3, 4, 5, 0}));
    auto repeated = roll_params({0, 0}, {1, 1});  // shifts of a repeated axis add up
    EXPECT_TRUE(same(F32, run1(TGL_OP_ROLL, &repeated, {in(F32, {5}, iota(5))}, out(F32, {5})), {3, 4, 0, 1, 2}));
    auto big = roll_params({0}, {INT64_MIN});  // INT64_MIN mod 5 = 2 (-2^63 = -1844674407370955162 * 5 + 2)
    EXPECT_TRUE(same(F32, run1(TGL_OP_ROLL, &big, {in(F32, {5}, iota(5))}, out(F32, {5})), {3, 4, 0, 1, 2}));
}

TEST_F(LayoutOps, TileWithExtraLeadingDims) {
    EXPECT_TRUE(same(F32, run1(TGL_OP_TILE, nullptr, {in(F32, {2}, {1, 2})}, out(F32, {2, 4})), {1, 2, 1, 2, 1, 2, 1, 2}));
    std::vector<double> block = {1, 1, 2, 2, 1, 1, 2, 2};
    std::vector<double> want;
    for (int i = 0; i < 3; ++i) want.insert(want.end(), block.begin(), block.end());
    EXPECT_TRUE(same(F32, run1(TGL_OP_TILE, nullptr, {in(F32, {2, 1}, {1, 2})}, out(F32, {3, 4, 2})), want));
    EXPECT_TRUE(same(F32, run1(TGL_OP_TILE, nullptr, {in(F32, {2, 3}, iota(6))}, out(F32, {2, 6})),
                     {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}));
    // Zero repetitions: y dims of size 0 (nothing to write).
    EXPECT_TRUE(same(F32, run1(TGL_OP_TILE, nullptr, {in(F32, {2}, {1, 2})}, out(F32, {0})), {}));
    EXPECT_TRUE(same(F32, run1(TGL_OP_TILE, nullptr, {in(F32, {0}, {})}, out(F32, {3, 0})), {}));
}

// Every dtype, with 1- and 2-byte elements at odd offsets in their words (misaligned layouts) on
// both sides, through a transpose, a roll and a pad.
TEST_F(LayoutOps, EveryDtypeAtOddOffsets) {
    for (tgl_dtype dt : all_dtypes()) {
        SCOPED_TRACE(std::string("dtype ") + dtype_name(dt));
        std::vector<double> x(15);
        for (size_t i = 0; i < x.size(); ++i) x[i] = dt == BOOL ? double(i % 3 == 0) : (dt == U8 ? double(i * 17) : double(i) - 7);
        if (dt == F32 || dt == F16 || dt == BF16) {
            x[1] = -0.0;
            x[2] = dNaN;
            x[3] = -dInf;
        }
        Layout mis = misaligned_layout(rng_), mis_out = misaligned_layout(rng_);
        auto p = perm_params({1, 0});
        std::vector<double> want(15);
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 5; ++j) want[size_t(j * 3 + i)] = x[size_t(i * 5 + j)];
        EXPECT_TRUE(same(dt, run1(TGL_OP_PERMUTE, &p, {in(dt, {3, 5}, x, mis)}, out(dt, {5, 3}, mis_out)), want));
        auto r = roll_params({1}, {-1});
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 5; ++j) want[size_t(i * 5 + j)] = x[size_t(i * 5 + (j + 1) % 5)];
        EXPECT_TRUE(same(dt, run1(TGL_OP_ROLL, &r, {in(dt, {3, 5}, x, mis)}, out(dt, {3, 5}, mis_out)), want));
        auto pad = pad_params(TGL_PAD_CONSTANT, {0, 1}, {0, 0}, 1);
        std::vector<double> padded;
        for (int i = 0; i < 3; ++i) {
            padded.push_back(1);
            for (int j = 0; j < 5; ++j) padded.push_back(x[size_t(i * 5 + j)]);
        }
        EXPECT_TRUE(same(dt, run1(TGL_OP_PAD, &pad, {in(dt, {3, 5}, x, mis)}, out(dt, {3, 6}, mis_out)), padded));
        // concat of two odd-length runs: the second starts inside a word the first ends in.
        auto c = axis_params(0);
        std::vector<double> a(x.begin(), x.begin() + 7), b(x.begin() + 7, x.end());
        EXPECT_TRUE(same(dt, run1(TGL_OP_CONCAT, &c, {in(dt, {7}, a, mis), in(dt, {8}, b)}, out(dt, {15}, mis_out)), x));
    }
}

// ----- bad input ----------------------------------------------------------------------------------

TEST_F(LayoutOps, RejectsShapesThatDoNotAddUp) {
    auto ax = axis_params(1);
    expect_rejected(TGL_OP_CONCAT, &ax, {in(F32, {2, 1}, {1, 2}), in(F32, {2, 2}, iota(4))}, {out(F32, {2, 4})},
                    TGL_ERROR_SHAPE_MISMATCH, {"concat", "outputs[0] (y)", "(2, 3)"});
    expect_rejected(TGL_OP_CONCAT, &ax, {in(F32, {2, 1}, {1, 2}), in(F32, {3, 2}, iota(6))}, {out(F32, {2, 3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (x1)", "(3, 2)"});
    expect_rejected(TGL_OP_SPLIT, &ax, {in(F32, {2, 3}, iota(6))}, {out(F32, {2, 1}), out(F32, {2, 1})},
                    TGL_ERROR_SHAPE_MISMATCH, {"split", "add up to 2", "3"});
    expect_rejected(TGL_OP_STACK, &ax, {in(F32, {2}, {1, 2}), in(F32, {3}, {1, 2, 3})}, {out(F32, {2, 2})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (x1)"});
    expect_rejected(TGL_OP_RESHAPE, nullptr, {in(F32, {2, 3}, iota(6))}, {out(F32, {4, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"reshape", "8 elements", "6 elements"});
    expect_rejected(TGL_OP_TILE, nullptr, {in(F32, {2, 3}, iota(6))}, {out(F32, {2, 7})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"tile", "multiple", "7"});
    expect_rejected(TGL_OP_TILE, nullptr, {in(F32, {2, 3}, iota(6))}, {out(F32, {6})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"tile", "fewer dims"});
    expect_rejected(TGL_OP_EXPAND, nullptr, {in(F32, {3}, iota(3))}, {out(F32, {2, 4})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[0] (x)", "broadcast"});
    auto p = pad_params(TGL_PAD_CONSTANT, {1}, {1});
    expect_rejected(TGL_OP_PAD, &p, {in(F32, {3}, iota(3))}, {out(F32, {4})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)", "(5)"});
    auto neg = pad_params(TGL_PAD_CONSTANT, {-3}, {-1});
    expect_rejected(TGL_OP_PAD, &neg, {in(F32, {3}, iota(3))}, {out(F32, {0})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->before[0] = -3", "params->after[0] = -1"});
    auto s = slice_params(0, 0, 2, 1);
    expect_rejected(TGL_OP_SLICE, &s, {in(F32, {3}, iota(3))}, {out(F32, {3})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"slice", "(2)"});
    expect_rejected(TGL_OP_CONTIGUOUS, nullptr, {in(F32, {3}, iota(3))}, {out(F32, {1, 3})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (y)"});
}

TEST_F(LayoutOps, RejectsBadParams) {
    auto rep = perm_params({0, 0});
    expect_rejected(TGL_OP_PERMUTE, &rep, {in(F32, {2, 3}, iota(6))}, {out(F32, {2, 3})}, TGL_ERROR_AXIS_OUT_OF_RANGE,
                    {"params->perm[1]", "permutation"});
    auto far = perm_params({0, 2});
    expect_rejected(TGL_OP_PERMUTE, &far, {in(F32, {2, 3}, iota(6))}, {out(F32, {2, 3})}, TGL_ERROR_AXIS_OUT_OF_RANGE,
                    {"params->perm[1] = 2"});
    auto step0 = slice_params(0, 0, 3, 0);
    expect_rejected(TGL_OP_SLICE, &step0, {in(F32, {3}, iota(3))}, {out(F32, {3})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->step"});
    auto refl = pad_params(TGL_PAD_REFLECT, {3}, {0});
    expect_rejected(TGL_OP_PAD, &refl, {in(F32, {3}, iota(3))}, {out(F32, {6})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"reflect", "params->before[0] = 3", "size 3"});
    auto repl = pad_params(TGL_PAD_REPLICATE, {0, 1}, {0, 0});
    expect_rejected(TGL_OP_PAD, &repl, {in(F32, {2, 0}, {})}, {out(F32, {2, 1})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"replicate", "empty"});
    auto mode = pad_params(3, {0}, {0});
    expect_rejected(TGL_OP_PAD, &mode, {in(F32, {3}, iota(3))}, {out(F32, {3})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->mode", "got 3"});
    auto nar = narrow_params(0, 2, 2);
    expect_rejected(TGL_OP_NARROW, &nar, {in(F32, {3}, iota(3))}, {out(F32, {2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->length = 2"});
    auto nar2 = narrow_params(0, -4, 1);
    expect_rejected(TGL_OP_NARROW, &nar2, {in(F32, {3}, iota(3))}, {out(F32, {1})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->start = -4"});
    auto flip = flip_params({1, -1});
    expect_rejected(TGL_OP_FLIP, &flip, {in(F32, {2, 3}, iota(6))}, {out(F32, {2, 3})}, TGL_ERROR_AXIS_OUT_OF_RANGE,
                    {"params->axes[1]", "repeats"});
    auto roll = roll_params({2}, {1});
    expect_rejected(TGL_OP_ROLL, &roll, {in(F32, {2, 3}, iota(6))}, {out(F32, {2, 3})}, TGL_ERROR_AXIS_OUT_OF_RANGE,
                    {"params->axes[0] = 2"});
    auto st = axis_params(3);
    expect_rejected(TGL_OP_STACK, &st, {in(F32, {2, 2}, iota(4))}, {out(F32, {2, 2, 1})}, TGL_ERROR_AXIS_OUT_OF_RANGE,
                    {"params->axis = 3", "-3..2"});
    auto cat = axis_params(-3);
    expect_rejected(TGL_OP_CONCAT, &cat, {in(F32, {2, 2}, iota(4))}, {out(F32, {2, 2})}, TGL_ERROR_AXIS_OUT_OF_RANGE,
                    {"params->axis = -3"});
    // NULL params where the op has no default; a wrong struct_size.
    expect_rejected(TGL_OP_PERMUTE, nullptr, {in(F32, {2, 3}, iota(6))}, {out(F32, {3, 2})}, TGL_ERROR_NULL_POINTER,
                    {"params", "permute"});
    auto bad = slice_params(0, 0, 3, 1);
    bad.struct_size = 8;
    expect_rejected(TGL_OP_SLICE, &bad, {in(F32, {3}, iota(3))}, {out(F32, {3})}, TGL_ERROR_PARAMS_SIZE,
                    {"struct_size", "slice"});
}

TEST_F(LayoutOps, RejectsOperandCountsDtypesAndOverlap) {
    std::vector<InputArg> nine;
    for (int i = 0; i < 9; ++i) nine.push_back(in(F32, {1}, {double(i)}));
    // Too many inputs: 9 descriptors for a catalogue of 8.
    {
        tgl_test::OpCall call(dev(), nine, {out(F32, {9})});
        auto p = axis_params(0);
        std::vector<tgl_tensor> ins = call.input_descs(), outs = call.output_descs();
        EXPECT_TGL_ERROR(plug().api().run_op(dev().handle(), TGL_OP_CONCAT, &p, ins.data(), 9, outs.data(), 1),
                         TGL_ERROR_INVALID_ARGUMENT, {"concat", "1 to 8 inputs", "n_inputs = 9"});
        EXPECT_TRUE(call.all_unchanged());
    }
    auto ax = axis_params(0);
    expect_rejected(TGL_OP_CONCAT, &ax, {in(F32, {1}, {1}), in(F16, {1}, {2})}, {out(F32, {2})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"inputs[1] (x1)", "f16", "f32"});
    expect_rejected(TGL_OP_SPLIT, &ax, {in(I32, {2}, {1, 2})}, {out(I32, {1}), out(U8, {1})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"outputs[1] (y1)", "u8"});
    expect_rejected(TGL_OP_CONTIGUOUS, nullptr, {in(BOOL, {2}, {1, 0})}, {out(U8, {2})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"outputs[0] (y)", "bool"});
    expect_rejected(TGL_OP_STACK, &ax, {in(F32, {}, {1})}, {out(F32, {1}), out(F32, {1})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"stack", "n_outputs = 2"});
    // Two outputs of split in the same bytes.
    {
        Device& d = dev();
        DeviceTensor x(d, contiguous({4}));
        x.set_values({1, 2, 3, 4});
        DeviceTensor y(d, contiguous({3}));
        y.poison();
        tgl_tensor y0 = y.desc(), y1 = y.desc();
        y0.shape[0] = 2;
        y1.shape[0] = 2;
        y1.byte_offset += 4;  // elements 1..2 overlap elements 0..1
        auto p = axis_params(0);
        EXPECT_TGL_ERROR(d.run(TGL_OP_SPLIT, &p, {x.desc()}, {y0, y1}), TGL_ERROR_INVALID_ARGUMENT,
                         {"outputs[0] (y0)", "outputs[1] (y1)", "overlap"});
        EXPECT_TRUE(y.unchanged());
        EXPECT_TRUE(x.unchanged());
    }
}

}  // namespace
}  // namespace conf
