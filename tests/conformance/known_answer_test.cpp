// Known answers for every op on small hand-checked cases, special values included. Expected values
// are written out (by hand, or from the obvious formula in double, e.g. gelu(1) =
// 0.5 * (1 + erf(1/sqrt(2)))), rounded to f32 and compared element by element.
#include "common.h"

namespace conf {
namespace {

using KnownAnswer = ConformanceTest;

// Element-wise NMSE for values of transcendental ops (see tol::kTranscendental), exact otherwise.
::testing::AssertionResult close(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
    return compare(got, want, Shape{int64_t(want.size())}, tolerance, CompareMode::PerElement);
}
::testing::AssertionResult exact(const std::vector<float>& got, const std::vector<float>& want, Shape shape = {}) {
    if (shape.empty()) shape = {int64_t(want.size())};
    return compare(got, want, shape, 0.0, CompareMode::Exact);
}

// ----- unary ------------------------------------------------------------------------------------

TEST_F(KnownAnswer, Abs) {
    auto y = unary(TGL_OP_ABS, {-2.0f, -0.5f, 0.0f, 3.25f, -kInf, kInf, kNaN, -1e30f, -1e-30f});
    EXPECT_TRUE(exact(y, {2.0f, 0.5f, 0.0f, 3.25f, kInf, kInf, kNaN, 1e30f, 1e-30f}));
    // abs clears the sign bit: abs(-0) = +0.
    auto z = unary(TGL_OP_ABS, {-0.0f});
    EXPECT_FALSE(std::signbit(z[0])) << "abs(-0) = " << fmt(z[0]) << ", expected +0";
}

TEST_F(KnownAnswer, Neg) {
    auto y = unary(TGL_OP_NEG, {-2.0f, 0.5f, 3.25f, -kInf, kInf, kNaN, 1e30f});
    EXPECT_TRUE(exact(y, {2.0f, -0.5f, -3.25f, kInf, -kInf, kNaN, -1e30f}));
    auto z = unary(TGL_OP_NEG, {0.0f, -0.0f});
    EXPECT_TRUE(std::signbit(z[0])) << "neg(+0) = " << fmt(z[0]) << ", expected -0";
    EXPECT_FALSE(std::signbit(z[1])) << "neg(-0) = " << fmt(z[1]) << ", expected +0";
}

TEST_F(KnownAnswer, Relu) {
    auto y = unary(TGL_OP_RELU, {-2.0f, -0.5f, 0.0f, 3.25f, -kInf, kInf, kNaN, 1e-30f, -1e-30f});
    EXPECT_TRUE(exact(y, {0.0f, 0.0f, 0.0f, 3.25f, 0.0f, kInf, kNaN, 1e-30f, 0.0f}));
}

TEST_F(KnownAnswer, Sigmoid) {
    auto y = unary(TGL_OP_SIGMOID, {0.0f, 1.0f, -1.0f, 2.0f, -3.0f, 20.0f, -20.0f, kInf, -kInf, kNaN, 1000.0f, -1000.0f});
    EXPECT_TRUE(close(y, f32({0.5, 0.7310585786300049, 0.2689414213699951, 0.8807970779778823, 0.04742587317756678,
                              0.9999999979388463, 2.0611536181902037e-09, 1.0, 0.0, NAN, 1.0, 0.0}),
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Tanh) {
    auto y = unary(TGL_OP_TANH, {0.0f, 0.5f, -0.5f, 1.0f, -2.0f, 3.0f, 20.0f, -20.0f, 100.0f, -100.0f, kInf, -kInf, kNaN});
    EXPECT_TRUE(close(y, f32({0.0, 0.46211715726000974, -0.46211715726000974, 0.7615941559557649, -0.9640275800758169,
                              0.9950547536867305, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, NAN}),
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Exp) {
    auto y = unary(TGL_OP_EXP, {0.0f, 1.0f, -1.0f, 2.0f, 0.5f, -5.0f, 10.0f, 88.0f, 89.0f, 1000.0f, -1000.0f, kInf, -kInf, kNaN});
    EXPECT_TRUE(close(y, f32({1.0, 2.718281828459045, 0.36787944117144233, 7.38905609893065, 1.6487212707001282,
                              0.006737946999085467, 22026.465794806718, 1.6516362549940018e+38, INFINITY, INFINITY,
                              0.0, INFINITY, 0.0, NAN}),
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Log) {
    auto y = unary(TGL_OP_LOG, {1.0f, 2.0f, 0.5f, 10.0f, 3.0f, 1e30f, 1e-30f, 0.0f, -0.0f, -1.0f, kInf, -kInf, kNaN});
    EXPECT_TRUE(close(y, f32({0.0, 0.6931471805599453, -0.6931471805599453, 2.302585092994046, 1.0986122886681098,
                              69.07755278982137, -69.07755278982137, -INFINITY, -INFINITY, NAN, INFINITY, NAN, NAN}),
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Sqrt) {
    auto y = unary(TGL_OP_SQRT, {4.0f, 2.0f, 0.5f, 0.0f, 1e30f, 1e-30f, -1.0f, kInf, -kInf, kNaN, 0.25f});
    EXPECT_TRUE(close(y, f32({2.0, 1.4142135623730951, 0.7071067811865476, 0.0, 1e15, 1e-15, NAN, INFINITY, NAN, NAN, 0.5}),
                      tol::kElementwise));
}

TEST_F(KnownAnswer, GeluErf) {
    const std::vector<float> x = {0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -3.0f, 3.0f, 20.0f, 0.1f, kInf, -kInf, kNaN};
    // gelu(x) = 0.5 x erfc(-x / sqrt(2)).
    const auto want = f32({0.0, 0.8413447460685429, -0.15865525393145707, 0.34573123063700656, -0.15426876936299344,
                           1.9544997361036416, -0.004049694094890287, 2.99595030590511, 20.0, 0.053982783727702904,
                           INFINITY, NAN, NAN});  // gelu(-inf) = -inf * 0 = NaN, as in PyTorch
    EXPECT_TRUE(close(unary(TGL_OP_GELU, x), want, tol::kTranscendental)) << "NULL params = erf form";
    tgl_gelu_params p{sizeof(tgl_gelu_params), TGL_GELU_ERF};
    EXPECT_TRUE(close(unary(TGL_OP_GELU, x, &p), want, tol::kTranscendental));
}

TEST_F(KnownAnswer, GeluTanh) {
    // gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    tgl_gelu_params p{sizeof(tgl_gelu_params), TGL_GELU_TANH};
    auto y = unary(TGL_OP_GELU, {0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -3.0f, 3.0f, 20.0f, 0.1f, kInf, -kInf, kNaN}, &p);
    EXPECT_TRUE(close(y, f32({0.0, 0.8411919906082768, -0.15880800939172324, 0.34571400982514394, -0.15428599017485606,
                              1.954597694087775, -0.0036373920817729943, 2.996362607918227, 20.0, 0.053982751045435165,
                              INFINITY, NAN, NAN}),  // gelu_tanh(-inf) = NaN
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Silu) {
    auto y = unary(TGL_OP_SILU, {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -3.0f, 20.0f, -20.0f, kInf, -kInf, kNaN, 1000.0f, -1000.0f});
    EXPECT_TRUE(close(y, f32({0.0, 0.7310585786300049, -0.2689414213699951, 0.3112296656009273, 1.7615941559557646,
                              -0.14227761953270035, 19.999999958776925, -4.122307236380407e-08, INFINITY, NAN, NAN,
                              1000.0, 0.0}),  // silu(-inf) = -inf * 0 = NaN
                      tol::kTranscendental));
}

// ----- binary -----------------------------------------------------------------------------------

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
    EXPECT_TRUE(close(y, {2.0f, kInf, -kInf, kNaN, 0.25f, -3.5f, kNaN, 0.0f, -2.0f, -kInf}, tol::kElementwise));
    // (2, 2) / (2, 1)
    EXPECT_TRUE(close(binary(TGL_OP_DIV, {2, 2}, {1, 2, 3, 4}, {2, 1}, {2, 4}, {2, 2}), {0.5f, 1.0f, 0.75f, 1.0f},
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
    EXPECT_TRUE(close(got, want, tol::kTranscendental));
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
    EXPECT_TRUE(close(gather(storage, t.view()), f32({1, 1.4142135623730951, 1.7320508075688772, 2, 2.23606797749979,
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

// ----- reductions -------------------------------------------------------------------------------

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
    EXPECT_TRUE(close(reduce(TGL_OP_MEAN, xs, x, {1}, false, {2}), f32({2.0, 5.0 / 3}), tol::kReduction));
    EXPECT_TRUE(close(reduce(TGL_OP_MEAN, xs, x, {0}, true, {1, 3}), {2, -3, 6.5f}, tol::kReduction));
    EXPECT_TRUE(close(reduce(TGL_OP_MEAN, xs, x, {}, false, {}), f32({11.0 / 6}), tol::kReduction));
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

// ----- matmul -----------------------------------------------------------------------------------

const std::vector<float> kA = {1, 2, 3, 4, 5, 6};      // (2, 3)
const std::vector<float> kAt = {1, 4, 2, 5, 3, 6};     // A^T stored as (3, 2)
const std::vector<float> kB = {7, 8, 9, 10, 11, 12};   // (3, 2)
const std::vector<float> kBt = {7, 9, 11, 8, 10, 12};  // B^T stored as (2, 3)
const std::vector<float> kAB = {58, 64, 139, 154};     // A @ B, by hand

std::vector<float> mm(const Shape& as, const std::vector<float>& a, const Shape& bs, const std::vector<float>& b,
                      const Shape& cs, const tgl_matmul_params* p, const std::vector<float>* c_init = nullptr) {
    return run(TGL_OP_MATMUL, p, {as, bs}, {a, b}, cs, c_init);
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

std::vector<float> small_ints(Rng& rng, int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = float(rng.integer(-4, 4));
    return v;
}

TEST_F(KnownAnswer, MatmulBatchedWithBroadcastBatch) {
    const int64_t M = 3, K = 5, N = 4;
    auto a = small_ints(rng_, 8 * M * K);
    auto b1 = small_ints(rng_, K * N);
    // (8, M, K) @ (1, K, N) -> (8, M, N)
    EXPECT_TRUE(exact(mm({8, M, K}, a, {1, K, N}, b1, {8, M, N}, nullptr), batched_reference(8, 1, M, K, N, a, b1),
                      {8, M, N}));
    // (8, M, K) @ (K, N): B of rank 2 broadcasts over the batch.
    EXPECT_TRUE(exact(mm({8, M, K}, a, {K, N}, b1, {8, M, N}, nullptr), batched_reference(8, 1, M, K, N, a, b1),
                      {8, M, N}));
    // (1, M, K) @ (8, K, N)
    auto a1 = small_ints(rng_, M * K);
    auto b8 = small_ints(rng_, 8 * K * N);
    EXPECT_TRUE(exact(mm({1, M, K}, a1, {8, K, N}, b8, {8, M, N}, nullptr), batched_reference(1, 8, M, K, N, a1, b8),
                      {8, M, N}));
    // (8, M, K) @ (8, K, N)
    EXPECT_TRUE(exact(mm({8, M, K}, a, {8, K, N}, b8, {8, M, N}, nullptr), batched_reference(8, 8, M, K, N, a, b8),
                      {8, M, N}));
    // (2, 1, M, K) @ (3, K, N) -> (2, 3, M, N)
    auto a2 = small_ints(rng_, 2 * M * K);
    auto b3 = small_ints(rng_, 3 * K * N);
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

}  // namespace
}  // namespace conf
