// The binary family (add .. atan2; the comparisons and logical ops are in dtype_test.cpp with the
// dtype ops): known answers on small hand-checked cases with broadcasting, NaN propagation,
// signed zeros, C99 pow, fmod/remainder exactness and huge divisors; elementwise ops in place; any
// input and output layout; bad input. Expected values are written out (by hand or from Python's
// math module in double; remainder = Python's %), rounded to f32. Ops a plugin does not implement
// (query_op reports supported = 0) are skipped.
#include "any_layout.h"
#include "bad_input.h"

#include <algorithm>
#include <limits>

namespace conf {
namespace {

using KnownAnswer = ConformanceTest;
using MathKnownAnswer = ConformanceTest;

// ----- known answers ------------------------------------------------------------------------------

TEST_F(KnownAnswer, AddSubMulWithBroadcast) {
    // (2, 3) op (3,) -> (2, 3)
    const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30};
    EXPECT_TRUE(exact(binary(TGL_OP_ADD, {2, 3}, a, {3}, b, {2, 3}), {11, 22, 33, 14, 25, 36}, {2, 3}));
    EXPECT_TRUE(exact(binary(TGL_OP_SUB, {2, 3}, a, {3}, b, {2, 3}), {-9, -18, -27, -6, -15, -24}, {2, 3}));
    EXPECT_TRUE(exact(binary(TGL_OP_MUL, {2, 3}, a, {3}, b, {2, 3}), {10, 40, 90, 40, 100, 180}, {2, 3}));
    // (3,) op (2, 3): the broadcast operand on the left.
    EXPECT_TRUE(exact(binary(TGL_OP_SUB, {3}, b, {2, 3}, a, {2, 3}), {9, 18, 27, 6, 15, 24}, {2, 3}));
    // (2, 1) op (1, 3) -> (2, 3): both broadcast.
    EXPECT_TRUE(exact(binary(TGL_OP_MUL, {2, 1}, {2, 3}, {1, 3}, {1, 10, 100}, {2, 3}), {2, 20, 200, 3, 30, 300}, {2, 3}));
    // scalar (rank 0) op (2, 2).
    EXPECT_TRUE(exact(binary(TGL_OP_ADD, {}, {0.5f}, {2, 2}, {1, 2, 3, 4}, {2, 2}), {1.5f, 2.5f, 3.5f, 4.5f}, {2, 2}));
    // (2, 1, 3) op (4, 1) -> (2, 4, 3)
    std::vector<float> x = {1, 2, 3, 4, 5, 6}, w = {0, 10, 20, 30}, want;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 3; ++k) want.push_back(x[size_t(i * 3 + k)] + w[size_t(j)]);
    EXPECT_TRUE(exact(binary(TGL_OP_ADD, {2, 1, 3}, x, {4, 1}, w, {2, 4, 3}), want, {2, 4, 3}));
    // IEEE specials.
    EXPECT_TRUE(exact(binary1(TGL_OP_ADD, {kInf, kInf, 1e30f, kNaN, -0.0f}, {-kInf, 1.0f, 1e30f, 1.0f, 0.0f}),
                      {kNaN, kInf, 2e30f, kNaN, 0.0f}));
    EXPECT_TRUE(exact(binary1(TGL_OP_MUL, {0.0f, kInf, 1e30f, -2.0f}, {kInf, -2.0f, 1e30f, 1e-30f}),
                      {kNaN, -kInf, kInf, -2e-30f}));
}

TEST_F(KnownAnswer, Div) {
    auto y = binary1(TGL_OP_DIV, {6.0f, 1.0f, -1.0f, 0.0f, 1.0f, 7.0f, kInf, 1.0f, -3.0f, 1.0f},
                     {3.0f, 0.0f, 0.0f, 0.0f, 4.0f, -2.0f, kInf, kInf, 1.5f, -0.0f});
    EXPECT_TRUE(close_to(y, {2.0f, kInf, -kInf, kNaN, 0.25f, -3.5f, kNaN, 0.0f, -2.0f, -kInf}, tol::kElementwise));
    // (2, 2) / (2, 1)
    EXPECT_TRUE(close_to(binary(TGL_OP_DIV, {2, 2}, {1, 2, 3, 4}, {2, 1}, {2, 4}, {2, 2}), {0.5f, 1.0f, 0.75f, 1.0f},
                      tol::kElementwise));
}

TEST_F(KnownAnswer, MaximumMinimumPropagateNaN) {
    const std::vector<float> a = {1.0f, -2.0f, kNaN, 3.0f, kNaN, -kInf, kInf, 5.0f};
    const std::vector<float> b = {2.0f, -3.0f, 1.0f, kNaN, kNaN, 0.0f, 1e30f, 5.0f};
    EXPECT_TRUE(exact(binary1(TGL_OP_MAXIMUM, a, b), {2.0f, -2.0f, kNaN, kNaN, kNaN, 0.0f, kInf, 5.0f}));
    EXPECT_TRUE(exact(binary1(TGL_OP_MINIMUM, a, b), {1.0f, -3.0f, kNaN, kNaN, kNaN, -kInf, 1e30f, 5.0f}));
    // broadcast: (2, 3) vs (1,)
    EXPECT_TRUE(exact(binary(TGL_OP_MAXIMUM, {2, 3}, {-1, 0, 1, 2, 3, kNaN}, {1}, {1.5f}, {2, 3}),
                      {1.5f, 1.5f, 1.5f, 2, 3, kNaN}, {2, 3}));
}

// Of +0 and -0, maximum (and the max reduction) is +0 and minimum is -0, in either order.
TEST_F(KnownAnswer, MaximumMinimumOrderSignedZeros) {
    const std::vector<float> a = {-0.0f, 0.0f, -0.0f, 0.0f}, b = {0.0f, -0.0f, -0.0f, 0.0f};
    auto hi = binary1(TGL_OP_MAXIMUM, a, b), lo = binary1(TGL_OP_MINIMUM, a, b);
    const bool hi_neg[] = {false, false, true, false}, lo_neg[] = {true, true, true, false};
    for (size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(std::signbit(hi[i]), hi_neg[i]) << "maximum(" << fmt(a[i]) << ", " << fmt(b[i]) << ") = " << fmt(hi[i]);
        EXPECT_EQ(std::signbit(lo[i]), lo_neg[i]) << "minimum(" << fmt(a[i]) << ", " << fmt(b[i]) << ") = " << fmt(lo[i]);
    }
    auto mx = reduce(TGL_OP_MAX, {3}, {-0.0f, 0.0f, -0.0f}, {0}, false, {});
    auto mn = reduce(TGL_OP_MIN, {3}, {0.0f, -0.0f, 0.0f}, {0}, false, {});
    EXPECT_FALSE(std::signbit(mx[0])) << "max(-0, +0, -0) = " << fmt(mx[0]);
    EXPECT_TRUE(std::signbit(mn[0])) << "min(+0, -0, +0) = " << fmt(mn[0]);
}

TEST_F(KnownAnswer, PowFollowsC99) {
    struct P { float x, y; double want; };
    const std::vector<P> cases = {
        {2, 3, 8},        {-2, 3, -8},       {-2, 2, 4},        {-2, 0.5f, NAN},       {0, -1, INFINITY},
        {-0.0f, -1, -INFINITY}, {-0.0f, -2, INFINITY}, {0, 2, 0},  {-0.0f, 3, -0.0},     {NAN, 0, 1},
        {1, NAN, 1},      {2, -2, 0.25},     {4, 0.5f, 2},      {0, 0, 1},             {-8, 1.0f / 3, NAN},
        {kInf, -1, 0},    {-kInf, 3, -INFINITY}, {-kInf, 2, INFINITY}, {-kInf, -3, -0.0}, {2, 0.5f, 1.4142135623730951},
        {0.5f, 2.5f, 0.1767766952966369}, {-1, kInf, 1}, {-1, -kInf, 1}, {0.5f, -kInf, INFINITY},
        {2, kInf, INFINITY}, {2, -kInf, 0}, {-3, -3, -0.037037037037037035}, {1.5f, -2.5f, 0.36288736930121157},
        {10, 0.3f, 1.9952623149688795}, {NAN, 1, NAN}, {2, NAN, NAN}, {-2, 1e30f, INFINITY}, {-0.5f, 1e30f, 0},
        {kInf, 0.5f, INFINITY}, {-kInf, 0.5f, INFINITY}, {1e30f, 2, INFINITY}, {3, 2, 9}, {-3, 3, -27}};
    std::vector<float> x, y, want;
    for (const P& c : cases) {
        x.push_back(c.x);
        y.push_back(c.y);
        want.push_back(float(c.want));
    }
    // 10 ** 0.3f: the exponent is the f32 nearest 0.3, so the expected value uses it too.
    for (size_t i = 0; i < cases.size(); ++i)
        if (x[i] == 10.0f) want[i] = float(std::pow(10.0, double(0.3f)));
    auto got = binary1(TGL_OP_POW, x, y);
    EXPECT_TRUE(close_to(got, want, tol::kTranscendental));
    for (size_t i = 0; i < cases.size(); ++i) {
        if (want[i] == 0.0f || std::isinf(want[i])) {
            EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i]))
                << "pow(" << fmt(x[i]) << ", " << fmt(y[i]) << ") = " << fmt(got[i]) << ", expected " << fmt(want[i]);
        }
    }
}

// An elementwise op may write its output over an input when both are the identical view.
TEST_F(KnownAnswer, InPlaceElementwise) {
    Device& d = dev();
    DeviceTensor a(d, contiguous({2, 3})), b(d, contiguous({3}));
    a.set_values({1, 2, 3, 4, 5, 6});
    b.set_values({10, 20, 30});
    d.run_ok(TGL_OP_ADD, nullptr, {a.desc(), b.desc()}, {a.desc()});  // a += b
    EXPECT_TRUE(exact(gather(a.download_storage(), a.view()), {11, 22, 33, 14, 25, 36}, {2, 3}));
    d.run_ok(TGL_OP_MUL, nullptr, {b.desc(), a.desc()}, {a.desc()});  // a = b * a (a second)
    EXPECT_TRUE(exact(gather(a.download_storage(), a.view()), {110, 440, 990, 140, 500, 1080}, {2, 3}));
    d.run_ok(TGL_OP_NEG, nullptr, {a.desc()}, {a.desc()});
    EXPECT_TRUE(exact(gather(a.download_storage(), a.view()), {-110, -440, -990, -140, -500, -1080}, {2, 3}));
    // In place through a strided (transposed, padded) view: gaps stay as they were.
    Layout l;
    l.name = "transposed";
    l.perm = {1, 0};
    l.steps = {1, 2};
    DeviceTensor t(d, make_view({3, 2}, l));
    t.set_values({1, 2, 3, 4, 5, 6}, 7.5f);
    d.run_ok(TGL_OP_SQRT, nullptr, {t.desc()}, {t.desc()});
    std::vector<float> storage = t.download_storage();
    EXPECT_TRUE(close_to(gather(storage, t.view()), f32({1, 1.4142135623730951, 1.7320508075688772, 2, 2.23606797749979,
                                                      2.449489742783178}),
                      tol::kElementwise));
    std::vector<float> covered(storage.size(), 0);
    for_each_offset(t.view(), [&](int64_t, int64_t off) { covered[size_t(off)] = 1; });
    for (size_t i = 0; i < storage.size(); ++i) {
        if (!covered[i]) {
            EXPECT_EQ(storage[i], 7.5f) << "gap element " << i << " of " << t.view().describe();
        }
    }
}

TEST_F(MathKnownAnswer, Fmod) {
    if (!supported(TGL_OP_FMOD)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> a = {5.5f, -5.5f, 5.5f, -5.5f, 4.0f, -4.0f, 1.0f, 0.0f, -0.0f, 1.0000000150474662e+30f, 1.0000000150474662e+30f, -7.0f, 3.0f, -3.0f, kInf, -kInf, kNaN, 1.0f, 1.0f, 0.10000000149011612f, -1.0000000031710769e-30f, 16777216.0f, 9.999999680285692e+37f};
    const std::vector<float> b = {2.0f, 2.0f, -2.0f, -2.0f, 2.0f, 2.0f, 0.0f, 3.0f, 3.0f, 3.0f, 1.0000000031710769e-30f, 0.30000001192092896f, kInf, kInf, 2.0f, 2.0f, 1.0f, -kInf, kNaN, 0.0010000000474974513f, 3.0f, 0.10000000149011612f, -1.6999999456295272e-38f};
    const std::vector<float> want = {1.5f, -1.5f, 1.5f, -1.5f, 0.0f, -0.0f, kNaN, 0.0f, -0.0f, 0.0f, 8.16681565120793e-31f, -0.09999972581863403f, 3.0f, -3.0f, kNaN, kNaN, kNaN, 1.0f, kNaN, 0.0009999967878684402f, -1.0000000031710769e-30f, 0.05000000447034836f, 4.31280571092024e-39f};
    const auto y = binary1(TGL_OP_FMOD, a, b);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Remainder) {
    if (!supported(TGL_OP_REMAINDER)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> a = {5.5f, -5.5f, 5.5f, -5.5f, 4.0f, -4.0f, 1.0f, 0.0f, -0.0f, 1.0000000150474662e+30f, 1.0000000150474662e+30f, -7.0f, 3.0f, -3.0f, kInf, -kInf, kNaN, 1.0f, 1.0f, 0.10000000149011612f, -1.0000000031710769e-30f, 16777216.0f, 9.999999680285692e+37f};
    const std::vector<float> b = {2.0f, 2.0f, -2.0f, -2.0f, 2.0f, 2.0f, 0.0f, 3.0f, 3.0f, 3.0f, 1.0000000031710769e-30f, 0.30000001192092896f, kInf, kInf, 2.0f, 2.0f, 1.0f, -kInf, kNaN, 0.0010000000474974513f, 3.0f, 0.10000000149011612f, -1.6999999456295272e-38f};
    const std::vector<float> want = {1.5f, 0.5f, -0.5f, -1.5f, 0.0f, 0.0f, kNaN, 0.0f, 0.0f, 0.0f, 8.16681565120793e-31f, 0.20000028610229492f, 3.0f, kInf, kNaN, kNaN, kNaN, -kInf, kNaN, 0.0009999967878684402f, 3.0f, 0.05000000447034836f, -1.2687193745375032e-38f};
    auto y = binary1(TGL_OP_REMAINDER, a, b);
    // The last case adds a subnormal fmod result to b; a GPU that flushes subnormals (GLSL ES
    // allows it; NVIDIA does) gives b itself.
    if (y.back() == b.back()) y.back() = want.back();
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Atan2) {
    if (!supported(TGL_OP_ATAN2)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> a = {0.0f, -0.0f, 0.0f, -0.0f, 1.0f, -1.0f, 1.0f, -1.0f, kInf, -kInf, kInf, -kInf, 1.0f, -1.0f, 1.0f, 1.0f, -2.0f, 3.0000000054977558e+38f, 1.0000000031710769e-30f, kNaN, 1.0f, 5.0f};
    const std::vector<float> b = {0.0f, 0.0f, -0.0f, -0.0f, 0.0f, -0.0f, kInf, -kInf, kInf, kInf, -kInf, -kInf, 2.0f, 2.0f, -2.0f, 1.0000000031710769e-30f, -1.0000000150474662e+30f, 9.999999350456404e-39f, -3.0000000054977558e+38f, 1.0f, kNaN, -5.0f};
    const std::vector<float> want = f32({0.0, -0.0, 3.1415927410125732, -3.1415927410125732, 1.5707963705062866, -1.5707963705062866, 0.0, -3.1415927410125732, 0.7853981852531433, -0.7853981852531433, 2.356194496154785, -2.356194496154785, 0.46364760398864746, -0.46364760398864746, 2.677945137023926, 1.5707963705062866, -3.1415927410125732, 1.5707963705062866, 3.1415927410125732, NAN, NAN, 2.356194496154785});
    const auto y = binary1(TGL_OP_ATAN2, a, b);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

// Divisors beyond 2^126: their reciprocal is subnormal, which a GPU that flushes subnormals (NVIDIA)
// makes 0. GLES once scaled both operands by 0.25, which its compiler folded away: FLT_MAX / FLT_MAX
// and atan2(FLT_MAX, FLT_MAX) gave 0 there.
TEST_F(MathKnownAnswer, HugeDivisors) {
    const float m = std::numeric_limits<float>::max();
    EXPECT_TRUE(close_to(binary1(TGL_OP_DIV, {m, -m, 3e38f, 1.0f}, {m, m, 1e38f, 2e38f}), {1.0f, -1.0f, 3.0f, 5e-39f}, tol::kElementwise));
    if (!supported(TGL_OP_ATAN2)) return;
    EXPECT_TRUE(close_to(binary1(TGL_OP_ATAN2, {m, m, -m}, {m, -m, m}), f32({0.7853981852531433, 2.356194496154785, -0.7853981852531433}),
                      tol::kTranscendental));
}

// fmod is exact: a - trunc(a / b) * b in f32 would not be. Every a = k * b + r with r exactly
// representable; the result must be r bit for bit, also with b much smaller than a.
TEST_F(MathKnownAnswer, FmodIsExactForLargeQuotients) {
    if (!supported(TGL_OP_FMOD)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> a = {16777215.0f, 1e10f, 3e38f, 1.5f, -1e20f, 8388608.75f};
    const std::vector<float> b = {0.1f, 0.7f, 1.1f, 1e-30f, 3.3f, 0.0625f};
    std::vector<float> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(float(std::fmod(double(a[i]), double(b[i]))));
    EXPECT_TRUE(exact(binary1(TGL_OP_FMOD, a, b), want));
}

// Broadcast and parameters together: clamp of a (2, 3) view and remainder of (2, 3) by (3,).
TEST_F(MathKnownAnswer, RemainderBroadcastsLikeTheOtherBinaryOps) {
    if (!supported(TGL_OP_REMAINDER)) GTEST_SKIP() << "op not implemented by this plugin";
    auto y = binary(TGL_OP_REMAINDER, {2, 3}, {7, -7, 7, -7, 0, 1}, {3}, {3, 3, -3}, {2, 3});
    EXPECT_TRUE(exact(y, {1, 2, -2, 2, 0, -2}));
}

// ----- any layout ---------------------------------------------------------------------------------

TEST_F(Layouts, BinaryWithBroadcastOnAnyLayout) {
    Device& d = dev();
    for (int round = 0; round < 60; ++round) {
        Shape ys = random_shape(rng_, 0, 8, 600);
        // a and b: suffixes of ys (rank-different) with some dims set to 1; y their broadcast.
        const Shape as = broadcastable_suffix(ys, rng_);
        const Shape bs = broadcastable_suffix(ys, rng_);
        const Shape out = broadcast_shapes(as, bs);
        Input a = make_input(d, as, rng_), b = make_input(d, bs, rng_);
        auto y = make_output(d, out, rng_);
        const tgl_op ops[] = {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_MAXIMUM, TGL_OP_MINIMUM};
        tgl_op op = ops[rng_.integer(0, 4)];
        SCOPED_TRACE(describe(("binary op " + std::to_string(op)).c_str(), {a.t.get(), b.t.get(), y.get()}));
        d.run_ok(op, nullptr, {a.t->desc(), b.t->desc()}, {y->desc()});
        std::vector<float> want(static_cast<size_t>(numel(out)));
        for (int64_t i = 0; i < numel(out); ++i) {
            auto idx = unravel(i, out);
            float p = a.logical[size_t(broadcast_index(idx, out, as))];
            float q = b.logical[size_t(broadcast_index(idx, out, bs))];
            float v = op == TGL_OP_ADD ? p + q : op == TGL_OP_SUB ? p - q : op == TGL_OP_MUL ? p * q
                    : op == TGL_OP_MAXIMUM ? std::max(p, q) : std::min(p, q);
            want[size_t(i)] = v;
        }
        EXPECT_TRUE(compare(y->read(), want, out, 0, CompareMode::Exact));
        EXPECT_TRUE(a.t->unchanged());
        EXPECT_TRUE(b.t->unchanged());
    }
}

// ----- bad input ----------------------------------------------------------------------------------

std::vector<BadCase> binary_bad_cases() {
    std::vector<BadCase> c;
    c.push_back({"ShapesDoNotBroadcast", TGL_ERROR_SHAPE_MISMATCH, {"b of shape"}, [](Ctx& k) {
                     // b viewed as (2,): (2, 3) + (2,) does not broadcast.
                     return k.add(k.a.desc(), with(k.b.desc(), [](tgl_tensor& t) { t.shape[0] = 2; }), k.y.desc());
                 }});
    c.push_back({"WrongOutputShape", TGL_ERROR_SHAPE_MISMATCH, {"output y"}, [](Ctx& k) {
                     return k.add(k.a.desc(), k.b.desc(), with(k.y.desc(), [](tgl_tensor& t) {
                                      t.shape[0] = 3;
                                      t.shape[1] = 2;
                                      t.strides[0] = 2;
                                  }));
                 }});
    c.push_back({"OutputOfLowerRank", TGL_ERROR_SHAPE_MISMATCH, {"output y"}, [](Ctx& k) {
                     return k.add(k.a.desc(), k.b.desc(), with(k.y.desc(), [](tgl_tensor& t) {
                                      t.rank = 1;
                                      t.shape[0] = 3;
                                      t.strides[0] = 1;
                                  }));
                 }});
    c.push_back({"BinaryParamsSize", TGL_ERROR_PARAMS_SIZE, {"struct_size"}, [](Ctx& k) {
                     tgl_binary_params p{4, 0};
                     return k.add(k.a.desc(), k.b.desc(), k.y.desc(), &p);
                 }});
    c.push_back({"ReservedNotZero", TGL_ERROR_INVALID_ARGUMENT, {"reserved"}, [](Ctx& k) {
                     tgl_binary_params p{sizeof(tgl_binary_params), 1};
                     return k.add(k.a.desc(), k.b.desc(), k.y.desc(), &p);
                 }});
    c.push_back({"ElementwiseOutputPartiallyOverlapsInput", TGL_ERROR_INVALID_ARGUMENT, {"outputs[0]", "inputs[0]"},
                 [](Ctx& k) {
                     // y over a's buffer, one element further on: [a+4, a+28) overlaps [a, a+24).
                     return k.add(k.a.desc(), k.b.desc(), with(k.a.desc(), [](tgl_tensor& t) { t.byte_offset += 4; }));
                 }});
    return c;
}

INSTANTIATE_TEST_SUITE_P(Binary, BadInput, ::testing::ValuesIn(binary_bad_cases()), bad_case_name);

}  // namespace
}  // namespace conf
