// The unary family (abs .. clamp; cast and logical_not are in dtype_test.cpp with the dtype ops): known
// answers on small hand-checked cases, special values included, any input and output layout, and
// bad input. Expected values are written out (by hand, from the obvious formula in double, e.g.
// gelu(1) = 0.5 * (1 + erf(1/sqrt(2))), or from Python's math module in double of the f32-rounded
// input), rounded to f32 and compared element by element, with the sign of every zero result; the
// branch points of each op (threshold of softplus, +-3 of hardsigmoid/hardswish, halfway cases of
// round, the quadrant boundaries of sin/cos, arguments up to 3.4e38); f16 storage. Ops a plugin
// does not implement (query_op reports supported = 0) are skipped.
#include "any_layout.h"
#include "bad_input.h"

#include <limits>
#include <memory>

namespace conf {
namespace {

using KnownAnswer = ConformanceTest;
using MathKnownAnswer = ConformanceTest;

// ----- known answers ------------------------------------------------------------------------------

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
    EXPECT_TRUE(close_to(y, f32({0.5, 0.7310585786300049, 0.2689414213699951, 0.8807970779778823, 0.04742587317756678,
                              0.9999999979388463, 2.0611536181902037e-09, 1.0, 0.0, NAN, 1.0, 0.0}),
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Tanh) {
    auto y = unary(TGL_OP_TANH, {0.0f, 0.5f, -0.5f, 1.0f, -2.0f, 3.0f, 20.0f, -20.0f, 100.0f, -100.0f, kInf, -kInf, kNaN});
    EXPECT_TRUE(close_to(y, f32({0.0, 0.46211715726000974, -0.46211715726000974, 0.7615941559557649, -0.9640275800758169,
                              0.9950547536867305, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, NAN}),
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Exp) {
    auto y = unary(TGL_OP_EXP, {0.0f, 1.0f, -1.0f, 2.0f, 0.5f, -5.0f, 10.0f, 88.0f, 89.0f, 1000.0f, -1000.0f, kInf, -kInf, kNaN});
    EXPECT_TRUE(close_to(y, f32({1.0, 2.718281828459045, 0.36787944117144233, 7.38905609893065, 1.6487212707001282,
                              0.006737946999085467, 22026.465794806718, 1.6516362549940018e+38, INFINITY, INFINITY,
                              0.0, INFINITY, 0.0, NAN}),
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Log) {
    auto y = unary(TGL_OP_LOG, {1.0f, 2.0f, 0.5f, 10.0f, 3.0f, 1e30f, 1e-30f, 0.0f, -0.0f, -1.0f, kInf, -kInf, kNaN});
    EXPECT_TRUE(close_to(y, f32({0.0, 0.6931471805599453, -0.6931471805599453, 2.302585092994046, 1.0986122886681098,
                              69.07755278982137, -69.07755278982137, -INFINITY, -INFINITY, NAN, INFINITY, NAN, NAN}),
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Sqrt) {
    auto y = unary(TGL_OP_SQRT, {4.0f, 2.0f, 0.5f, 0.0f, 1e30f, 1e-30f, -1.0f, kInf, -kInf, kNaN, 0.25f});
    EXPECT_TRUE(close_to(y, f32({2.0, 1.4142135623730951, 0.7071067811865476, 0.0, 1e15, 1e-15, NAN, INFINITY, NAN, NAN, 0.5}),
                      tol::kElementwise));
}

TEST_F(KnownAnswer, GeluErf) {
    const std::vector<float> x = {0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -3.0f, 3.0f, 20.0f, 0.1f, kInf, -kInf, kNaN};
    // gelu(x) = 0.5 x erfc(-x / sqrt(2)).
    const auto want = f32({0.0, 0.8413447460685429, -0.15865525393145707, 0.34573123063700656, -0.15426876936299344,
                           1.9544997361036416, -0.004049694094890287, 2.99595030590511, 20.0, 0.053982783727702904,
                           INFINITY, NAN, NAN});  // gelu(-inf) = -inf * 0 = NaN, as in PyTorch
    EXPECT_TRUE(close_to(unary(TGL_OP_GELU, x), want, tol::kTranscendental)) << "NULL params = erf form";
    tgl_gelu_params p{sizeof(tgl_gelu_params), TGL_GELU_ERF};
    EXPECT_TRUE(close_to(unary(TGL_OP_GELU, x, &p), want, tol::kTranscendental));
}

TEST_F(KnownAnswer, GeluTanh) {
    // gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    tgl_gelu_params p{sizeof(tgl_gelu_params), TGL_GELU_TANH};
    auto y = unary(TGL_OP_GELU, {0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -3.0f, 3.0f, 20.0f, 0.1f, kInf, -kInf, kNaN}, &p);
    EXPECT_TRUE(close_to(y, f32({0.0, 0.8411919906082768, -0.15880800939172324, 0.34571400982514394, -0.15428599017485606,
                              1.954597694087775, -0.0036373920817729943, 2.996362607918227, 20.0, 0.053982751045435165,
                              INFINITY, NAN, NAN}),  // gelu_tanh(-inf) = NaN
                      tol::kTranscendental));
}

TEST_F(KnownAnswer, Silu) {
    auto y = unary(TGL_OP_SILU, {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -3.0f, 20.0f, -20.0f, kInf, -kInf, kNaN, 1000.0f, -1000.0f});
    EXPECT_TRUE(close_to(y, f32({0.0, 0.7310585786300049, -0.2689414213699951, 0.3112296656009273, 1.7615941559557646,
                              -0.14227761953270035, 19.999999958776925, -4.122307236380407e-08, INFINITY, NAN, NAN,
                              1000.0, 0.0}),  // silu(-inf) = -inf * 0 = NaN
                      tol::kTranscendental));
}

TEST_F(MathKnownAnswer, Sign) {
    if (!supported(TGL_OP_SIGN)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {2.5f, -3.0f, 0.0f, -0.0f, 1.0000000031710769e-30f, -1.0000000031710769e-30f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 1.401298464324817e-45f};
    const std::vector<float> want = {1.0f, -1.0f, 0.0f, -0.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f, -1.0f, kNaN, 1.0f};
    const auto y = unary(TGL_OP_SIGN, x);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, LeakyReluDefaultSlope) {
    if (!supported(TGL_OP_LEAKY_RELU)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {2.5f, -3.0f, 0.0f, -0.0f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, -100.0f};
    const std::vector<float> want = f32({2.5, -0.029999999329447746, 0.0, -0.0, -9.99999944211969e+27, INFINITY, -INFINITY, NAN, -1.0});
    const auto y = unary(TGL_OP_LEAKY_RELU, x);
    EXPECT_TRUE(close_to(y, want, tol::kElementwise));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, LeakyReluSlope) {
    if (!supported(TGL_OP_LEAKY_RELU)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {2.5f, -3.0f, 0.0f, -0.0f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, -0.5f};
    const std::vector<float> want = f32({2.5, 6.0, 0.0, -0.0, 2.0000000300949324e+30, INFINITY, INFINITY, NAN, 1.0});
    const auto p = tgl_leaky_relu_params{sizeof(tgl_leaky_relu_params), -2.0f};
    const auto y = unary(TGL_OP_LEAKY_RELU, x, &p);
    EXPECT_TRUE(close_to(y, want, tol::kElementwise));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, EluDefault) {
    if (!supported(TGL_OP_ELU)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {1.0f, -1.0f, 0.0f, -0.0f, -1.0000000116860974e-07f, -20.0f, -100.0f, 3.5f, kInf, -kInf, kNaN, -1.0000000031710769e-30f};
    const std::vector<float> want = f32({1.0, -0.6321205496788025, 0.0, -0.0, -9.999999406318238e-08, -1.0, -1.0, 3.5, INFINITY, -1.0, NAN, -1.0000000031710769e-30});
    const auto y = unary(TGL_OP_ELU, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, EluAlpha) {
    if (!supported(TGL_OP_ELU)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {1.0f, -1.0f, 0.0f, -0.0f, -1.0000000116860974e-07f, -20.0f, -100.0f, 3.5f, kInf, -kInf, kNaN, 0.5f};
    const std::vector<float> want = f32({1.0, -0.31606027483940125, 0.0, -0.0, -4.999999703159119e-08, -0.5, -0.5, 3.5, INFINITY, -0.5, NAN, 0.5});
    const auto p = tgl_elu_params{sizeof(tgl_elu_params), 0.5f};
    const auto y = unary(TGL_OP_ELU, x, &p);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Selu) {
    if (!supported(TGL_OP_SELU)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {1.0f, -1.0f, 0.0f, -0.0f, -1.0000000116860974e-07f, -20.0f, -100.0f, 3.5f, kInf, -kInf, kNaN, 1.0000000150474662e+30f};
    const std::vector<float> want = f32({1.0507010221481323, -1.1113307476043701, 0.0, -0.0, -1.7580993016963475e-07, -1.7580993175506592, -1.7580993175506592, 3.6774535179138184, INFINITY, -1.7580993175506592, NAN, 1.0507010038805567e+30});
    const auto y = unary(TGL_OP_SELU, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, CeluAlpha) {
    if (!supported(TGL_OP_CELU)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {1.0f, -1.0f, 0.0f, -0.0f, -1.0000000116860974e-07f, -20.0f, -100.0f, 3.5f, kInf, -kInf, kNaN, -2.0f};
    const std::vector<float> want = f32({1.0, -0.7869386672973633, 0.0, -0.0, -1.0000000116860974e-07, -1.9999091625213623, -2.0, 3.5, INFINITY, -2.0, NAN, -1.264241099357605});
    const auto p = tgl_elu_params{sizeof(tgl_elu_params), 2.0f};
    const auto y = unary(TGL_OP_CELU, x, &p);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, CeluNegativeAlpha) {
    if (!supported(TGL_OP_CELU)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {1.0f, -1.0f, 0.0f, -0.0f, -1.0000000116860974e-07f, -20.0f, -50.0f, 3.5f, kInf, -kInf, kNaN, -2.0f};
    const std::vector<float> want = f32({1.0, -1.1868373155593872, 0.0, -0.0, -1.0000000116860974e-07, -2354.31591796875, -51923336.0, 3.5, INFINITY, -INFINITY, NAN, -2.8432021141052246});
    const auto p = tgl_elu_params{sizeof(tgl_elu_params), -3.0f};
    const auto y = unary(TGL_OP_CELU, x, &p);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Hardsigmoid) {
    if (!supported(TGL_OP_HARDSIGMOID)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 2.9000000953674316f, -2.9000000953674316f, 3.0f, -3.0f, 3.5f, -4.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 1.5f};
    const std::vector<float> want = f32({0.5, 0.5, 0.6666666865348816, 0.3333333432674408, 0.9833333492279053, 0.016666650772094727, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, NAN, 0.75});
    const auto y = unary(TGL_OP_HARDSIGMOID, x);
    EXPECT_TRUE(close_to(y, want, tol::kElementwise));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Hardswish) {
    if (!supported(TGL_OP_HARDSWISH)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 2.9000000953674316f, -2.9000000953674316f, 3.0f, -3.0f, 3.5f, -4.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 1.5f};
    const std::vector<float> want = f32({0.0, -0.0, 0.6666666865348816, -0.3333333432674408, 2.8516666889190674, -0.04833328723907471, 3.0, -0.0, 3.5, -0.0, 1.0000000150474662e+30, -0.0, INFINITY, NAN, NAN, 1.125});  // hardswish(-inf) = -inf * 0 = NaN
    const auto y = unary(TGL_OP_HARDSWISH, x);
    EXPECT_TRUE(close_to(y, want, tol::kElementwise));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, SoftplusDefault) {
    if (!supported(TGL_OP_SOFTPLUS)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, 1.0f, -1.0f, 19.899999618530273f, 20.0f, 20.5f, -20.0f, -90.0f, -200.0f, 1.0000000116860974e-07f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.6931471824645996, 1.31326162815094, 0.3132616877555847, 19.899999618530273, 20.0, 20.5, 2.06115369216775e-09, 8.194008692231508e-40, 0.0, 0.6931472420692444, 1.0000000150474662e+30, 0.0, INFINITY, 0.0, NAN});
    const auto y = unary(TGL_OP_SOFTPLUS, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, SoftplusBetaThreshold) {
    if (!supported(TGL_OP_SOFTPLUS)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, 1.0f, -1.0f, 2.4000000953674316f, 2.5999999046325684f, 5.0f, -20.0f, -90.0f, 1.0000000116860974e-07f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.3465735912322998, 1.0634640455245972, 0.06346400827169418, 2.4040980339050293, 2.5999999046325684, 5.0, 2.12417706556933e-18, 0.0, 0.3465736508369446, 1.0000000150474662e+30, 0.0, INFINITY, 0.0, NAN});
    const auto p = tgl_softplus_params{sizeof(tgl_softplus_params), 2.0f, 5.0f, 0};
    const auto y = unary(TGL_OP_SOFTPLUS, x, &p);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, SoftplusNegativeBeta) {
    if (!supported(TGL_OP_SOFTPLUS)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, 1.0f, -1.0f, -2.4000000953674316f, -2.5999999046325684f, 5.0f, 20.0f, -20.0f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({-0.3465735912322998, -0.06346400827169418, -1.0634640455245972, -2.4040980339050293, -2.5999999046325684, -2.269944889121689e-05, -2.12417706556933e-18, -20.0, -0.0, -INFINITY, NAN});
    const auto p = tgl_softplus_params{sizeof(tgl_softplus_params), -2.0f, 5.0f, 0};
    const auto y = unary(TGL_OP_SOFTPLUS, x, &p);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Mish) {
    if (!supported(TGL_OP_MISH)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 3.0f, -5.0f, 9.0f, 10.0f, -30.0f, -60.0f, 100.0f, -100.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 0.8650984168052673, -0.30340147018432617, 0.37524521350860596, 2.98653507232666, -0.03357623890042305, 9.0, 10.0, -2.807286954981114e-12, -5.253906319928302e-25, 100.0, -3.7204474227823893e-42, 1.0000000150474662e+30, -0.0, INFINITY, NAN, NAN});  // mish(-inf) = NaN
    const auto y = unary(TGL_OP_MISH, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Expm1) {
    if (!supported(TGL_OP_EXPM1)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.000000013351432e-10f, -1.000000013351432e-10f, 9.999999747378752e-06f, -0.0003000000142492354f, 0.30000001192092896f, -0.3400000035762787f, 0.4000000059604645f, 1.0f, -1.0f, 5.0f, -17.0f, -20.0f, 88.0f, 89.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 1.000000013351432e-10, -1.000000013351432e-10, 1.0000049769587349e-05, -0.0002999550197273493, 0.349858820438385, -0.28822967410087585, 0.4918247163295746, 1.718281865119934, -0.6321205496788025, 147.4131622314453, -0.9999999403953552, -1.0, 1.6516362661361307e+38, INFINITY, INFINITY, -1.0, INFINITY, -1.0, NAN});
    const auto y = unary(TGL_OP_EXPM1, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Log1p) {
    if (!supported(TGL_OP_LOG1P)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.000000013351432e-10f, -1.000000013351432e-10f, 9.999999747378752e-06f, -0.0003000000142492354f, 0.5f, -0.5f, 1.0f, -0.9999989867210388f, 9.0f, 1.0000000150474662e+30f, 3.0000000054977558e+38f, -1.0f, -2.0f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 1.000000013351432e-10, -1.000000013351432e-10, 9.999949725170154e-06, -0.0003000450087711215, 0.40546509623527527, -0.6931471824645996, 0.6931471824645996, -13.802318572998047, 2.3025851249694824, 69.07755279541016, 88.59684753417969, -INFINITY, NAN, NAN, INFINITY, NAN, NAN});
    const auto y = unary(TGL_OP_LOG1P, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Rsqrt) {
    if (!supported(TGL_OP_RSQRT)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {4.0f, 0.25f, 2.0f, 0.0f, -0.0f, -1.0f, 1.0000000150474662e+30f, 1.0000000031710769e-30f, 9.99994610111476e-41f, 3.0f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.5, 2.0, 0.7071067690849304, INFINITY, -INFINITY, NAN, 1.0000000036274937e-15, 999999986991104.0, 1.000002658868784e+20, 0.5773502588272095, 0.0, NAN, NAN});
    const auto y = unary(TGL_OP_RSQRT, x);
    EXPECT_TRUE(close_to(y, want, tol::kElementwise));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Reciprocal) {
    if (!supported(TGL_OP_RECIPROCAL)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {4.0f, -0.25f, 3.0f, 0.0f, -0.0f, 1.0000000150474662e+30f, -1.0000000031710769e-30f, 9.999999680285692e+37f, kInf, -kInf, kNaN, 7.0f};
    const std::vector<float> want = f32({0.25, -4.0, 0.3333333432674408, INFINITY, -INFINITY, 1.0000000031710769e-30, -1.0000000150474662e+30, 1.0000000751754868e-38, 0.0, -0.0, NAN, 0.1428571492433548});
    const auto y = unary(TGL_OP_RECIPROCAL, x);
    EXPECT_TRUE(close_to(y, want, tol::kElementwise));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Square) {
    if (!supported(TGL_OP_SQUARE)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {3.0f, -3.0f, 0.5f, 0.0f, -0.0f, 1.0000000200408773e+20f, -1.0000000200408773e+20f, 1.0000000031710769e-30f, kInf, -kInf, kNaN, 1.5f};
    const std::vector<float> want = {9.0f, 9.0f, 0.25f, 0.0f, 0.0f, kInf, kInf, 0.0f, kInf, kInf, kNaN, 2.25f};
    const auto y = unary(TGL_OP_SQUARE, x);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Sin) {
    if (!supported(TGL_OP_SIN)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 0.5f, -1.0f, 1.5707963705062866f, 3.1415927410125732f, -3.1415927410125732f, 4.71238899230957f, 100.0f, -1000.0f, 12345.677734375f, 1000000.0f, -30000000.0f, 10000000000.0f, 1.0000000200408773e+20f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, 3.3999999521443642e+38f, 1.0000000031710769e-30f, kInf, -kInf, kNaN, 6.2831854820251465f, 120000.0f};
    const std::vector<float> want = f32({0.0, -0.0, 0.4794255495071411, -0.8414709568023682, 1.0, -8.742277657347586e-08, 8.742277657347586e-08, -1.0, -0.5063656568527222, -0.8268795609474182, -0.7042698860168457, -0.349993497133255, -0.9641302824020386, -0.48750603199005127, 0.6565766930580139, -0.791163444519043, 0.791163444519043, -0.24408487975597382, 1.0000000031710769e-30, NAN, NAN, NAN, 1.7484555314695172e-07, -0.5525418519973755});
    const auto y = unary(TGL_OP_SIN, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Cos) {
    if (!supported(TGL_OP_COS)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 0.5f, -1.0f, 1.5707963705062866f, 3.1415927410125732f, -3.1415927410125732f, 4.71238899230957f, 100.0f, -1000.0f, 12345.677734375f, 1000000.0f, -30000000.0f, 10000000000.0f, 1.0000000200408773e+20f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, 3.3999999521443642e+38f, 1.0000000031710769e-30f, kInf, -kInf, kNaN, 6.2831854820251465f, 120000.0f};
    const std::vector<float> want = f32({1.0, 1.0, 0.8775825500488281, 0.5403022766113281, -4.371138828673793e-08, -1.0, -1.0, 1.1924880638503055e-08, 0.8623188734054565, 0.5623790621757507, 0.7099323272705078, 0.9367521405220032, -0.26542940735816956, 0.8731196522712708, 0.7542592883110046, -0.6116048097610474, -0.6116048097610474, 0.9697538614273071, 1.0, NAN, NAN, NAN, 1.0, -0.8334851264953613});
    const auto y = unary(TGL_OP_COS, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Erf) {
    if (!supported(TGL_OP_ERF)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, 0.10000000149011612f, -0.5f, 0.9900000095367432f, 1.0f, -1.5f, 2.0f, 3.0f, -3.5f, 4.5f, 10.0f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 1.1283791266481092e-30, 0.11246291548013687, -0.5204998850822449, 0.8385080695152283, 0.8427007794380188, -0.9661051630973816, 0.9953222870826721, 0.9999778866767883, -0.9999992847442627, 1.0, 1.0, 1.0, -1.0, NAN});
    const auto y = unary(TGL_OP_ERF, x);
    EXPECT_TRUE(close_to(y, want, tol::kTranscendental));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Floor) {
    if (!supported(TGL_OP_FLOOR)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.4999999701976776f, -0.4999999701976776f, 1.399999976158142f, -1.600000023841858f, 3.700000047683716f, -3.200000047683716f, 8388607.5f, -8388607.5f, 8388609.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 1.0000000031710769e-30f, -1.0000000031710769e-30f};
    const std::vector<float> want = {0.0f, -0.0f, 0.0f, -1.0f, 1.0f, -2.0f, 2.0f, -3.0f, 0.0f, -1.0f, 1.0f, -2.0f, 3.0f, -4.0f, 8388607.0f, -8388608.0f, 8388609.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 0.0f, -1.0f};
    const auto y = unary(TGL_OP_FLOOR, x);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Ceil) {
    if (!supported(TGL_OP_CEIL)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.4999999701976776f, -0.4999999701976776f, 1.399999976158142f, -1.600000023841858f, 3.700000047683716f, -3.200000047683716f, 8388607.5f, -8388607.5f, 8388609.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 1.0000000031710769e-30f, -1.0000000031710769e-30f};
    const std::vector<float> want = {0.0f, -0.0f, 1.0f, -0.0f, 2.0f, -1.0f, 3.0f, -2.0f, 1.0f, -0.0f, 2.0f, -1.0f, 4.0f, -3.0f, 8388608.0f, -8388607.0f, 8388609.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 1.0f, -0.0f};
    const auto y = unary(TGL_OP_CEIL, x);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Round) {
    if (!supported(TGL_OP_ROUND)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.4999999701976776f, -0.4999999701976776f, 1.399999976158142f, -1.600000023841858f, 3.700000047683716f, -3.200000047683716f, 8388607.5f, -8388607.5f, 8388609.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 1.0000000031710769e-30f, -1.0000000031710769e-30f, 4194303.5f, 4194304.5f, -4194304.5f};
    const std::vector<float> want = {0.0f, -0.0f, 0.0f, -0.0f, 2.0f, -2.0f, 2.0f, -2.0f, 0.0f, -0.0f, 1.0f, -2.0f, 4.0f, -3.0f, 8388608.0f, -8388608.0f, 8388609.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 0.0f, -0.0f, 4194304.0f, 4194304.0f, -4194304.0f};
    const auto y = unary(TGL_OP_ROUND, x);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, Trunc) {
    if (!supported(TGL_OP_TRUNC)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2.5f, -2.5f, 0.4999999701976776f, -0.4999999701976776f, 1.399999976158142f, -1.600000023841858f, 3.700000047683716f, -3.200000047683716f, 8388607.5f, -8388607.5f, 8388609.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 1.0000000031710769e-30f, -1.0000000031710769e-30f};
    const std::vector<float> want = {0.0f, -0.0f, 0.0f, -0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.0f, -0.0f, 1.0f, -1.0f, 3.0f, -3.0f, 8388607.0f, -8388607.0f, 8388609.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN, 0.0f, -0.0f};
    const auto y = unary(TGL_OP_TRUNC, x);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, ClampBounds) {
    if (!supported(TGL_OP_CLAMP)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {-3.0f, -1.0f, -0.5f, 0.0f, -0.0f, 0.5f, 1.0f, 3.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = {-1.0f, -1.0f, -0.5f, 0.0f, -0.0f, 0.5f, 0.5f, 0.5f, 0.5f, -1.0f, 0.5f, -1.0f, kNaN};
    const auto p = tgl_clamp_params{sizeof(tgl_clamp_params), -1.0f, 0.5f, 0};
    const auto y = unary(TGL_OP_CLAMP, x, &p);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, ClampMinOnly) {
    if (!supported(TGL_OP_CLAMP)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {-3.0f, -1.0f, -0.5f, 0.0f, -0.0f, 0.5f, 1.0f, 3.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.5f, 1.0f, 3.0f, 1.0000000150474662e+30f, 0.0f, kInf, 0.0f, kNaN};
    const auto p = tgl_clamp_params{sizeof(tgl_clamp_params), 0.0f, kInf, 0};
    const auto y = unary(TGL_OP_CLAMP, x, &p);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, ClampInvertedBoundsHiWins) {
    if (!supported(TGL_OP_CLAMP)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {-3.0f, -1.0f, -0.5f, 0.0f, -0.0f, 0.5f, 1.0f, 3.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, kNaN};
    const auto p = tgl_clamp_params{sizeof(tgl_clamp_params), 2.0f, 1.0f, 0};
    const auto y = unary(TGL_OP_CLAMP, x, &p);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

TEST_F(MathKnownAnswer, ClampDefaultIsIdentity) {
    if (!supported(TGL_OP_CLAMP)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {-3.0f, -1.0f, -0.5f, 0.0f, -0.0f, 0.5f, 1.0f, 3.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = {-3.0f, -1.0f, -0.5f, 0.0f, -0.0f, 0.5f, 1.0f, 3.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const auto y = unary(TGL_OP_CLAMP, x);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

// ----- asin .. atanh, gelu_quick, step (ABI 1.3) ---------------------------------------------------
// Expected values: Python's math module in double on the f32 inputs, rounded to f32. Tolerance: a
// relative error of 1e-6 per element (about 8 f32 ulp; (a - b)^2 / b^2 <= 1e-12), tighter than
// kTranscendental's 1e-3; the differential MathUlp cases bound the worst element in ulps.
constexpr double kInverseTrigRel2 = 1e-12;

// asin: |x| > 1 is NaN, +-0 and subnormals kept, 1 - |x| exact above 0.5 (0.99999994 needs it).
TEST_F(MathKnownAnswer, Asin) {
    if (!supported(TGL_OP_ASIN)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, 1.401298464324817e-45f, -5.877471754111438e-39f, 0.25f, -0.5f, 0.5000001192092896f, 0.75f, -0.8999999761581421f, 0.9999999403953552f, 1.0f, -1.0f, 1.0000001192092896f, -2.0f, kInf, -kInf, kNaN, 4.999999873689376e-05f, 9.999999747378752e-05f};
    const std::vector<float> want = f32({0.0, -0.0, 1.0000000031710769e-30, 1.401298464324817e-45, -5.877471754111438e-39, 0.252680242061615, -0.5235987901687622, 0.5235989093780518, 0.8480620980262756, -1.1197694540023804, 1.570451021194458, 1.5707963705062866, -1.5707963705062866, NAN, NAN, NAN, NAN, NAN, 4.999999873689376e-05, 9.999999747378752e-05});
    const auto y = unary(TGL_OP_ASIN, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// acos: acos(1) = +0, acos(-1) = pi, NaN outside [-1, 1]; next to +-1 from sqrt((1 -+ x) / 2).
TEST_F(MathKnownAnswer, Acos) {
    if (!supported(TGL_OP_ACOS)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, 0.25f, -0.5f, 0.5000001192092896f, 0.75f, -0.8999999761581421f, 0.9999999403953552f, -0.9999999403953552f, 1.0f, -1.0f, 1.0000001192092896f, -2.0f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({1.5707963705062866, 1.5707963705062866, 1.5707963705062866, 1.3181160688400269, 2.094395160675049, 1.0471974611282349, 0.722734272480011, 2.690565824508667, 0.0003452669770922512, 3.141247272491455, 0.0, 3.1415927410125732, NAN, NAN, NAN, NAN, NAN});
    const auto y = unary(TGL_OP_ACOS, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// atan: +-0 kept, atan(+-inf) = +-pi/2, tan(pi/8) (the branch of the polynomial), 3.4e38.
TEST_F(MathKnownAnswer, Atan) {
    if (!supported(TGL_OP_ATAN)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, -1.401298464324817e-45f, 0.25f, -0.5f, 0.4142135679721832f, 1.0f, -1.0f, 2.5f, -10.0f, 10000000000.0f, -1.0000000150474662e+30f, 3.3999999521443642e+38f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 1.0000000031710769e-30, -1.401298464324817e-45, 0.244978666305542, -0.46364760398864746, 0.39269909262657166, 0.7853981852531433, -0.7853981852531433, 1.1902899742126465, -1.4711276292800903, 1.5707963705062866, -1.5707963705062866, 1.5707963705062866, 1.5707963705062866, -1.5707963705062866, NAN});
    const auto y = unary(TGL_OP_ATAN, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// sinh: +-0 and subnormals kept, expm1 near 0 (1e-5, -1e-3), the exp branch above 9, finite up to
// 89.4 (3.35e38), overflow at 89.5.
TEST_F(MathKnownAnswer, Sinh) {
    if (!supported(TGL_OP_SINH)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, -1.401298464324817e-45f, 9.999999747378752e-06f, -0.0010000000474974513f, 0.25f, -0.5f, 1.0f, -2.0f, 8.899999618530273f, 9.5f, -20.0f, 88.0f, 89.0f, 89.4000015258789f, -89.5f, 100.0f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 1.0000000031710769e-30, -1.401298464324817e-45, 9.999999747378752e-06, -0.0010000001639127731, 0.25261232256889343, -0.5210952758789062, 1.175201177597046, -3.6268603801727295, 3665.9853515625, 6679.86328125, -242582592.0, 8.258181330680653e+37, 2.2448063889081578e+38, 3.3488627241070614e+38, -INFINITY, INFINITY, INFINITY, -INFINITY, NAN});
    const auto y = unary(TGL_OP_SINH, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// cosh: cosh(+-0) = 1 (1 + x^2/2 rounds to 1 below 2.4e-4), the exp branch above 9, finite up to 89.4.
TEST_F(MathKnownAnswer, Cosh) {
    if (!supported(TGL_OP_COSH)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, 9.999999747378752e-06f, -0.0010000000474974513f, 0.25f, -0.5f, 1.0f, -2.0f, 8.899999618530273f, 9.5f, -20.0f, 88.0f, -89.0f, 89.4000015258789f, 89.5f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({1.0, 1.0, 1.0, 1.0, 1.0000004768371582, 1.0314130783081055, 1.1276259422302246, 1.5430806875228882, 3.762195587158203, 3665.9853515625, 6679.86328125, 242582592.0, 8.258181330680653e+37, 2.2448063889081578e+38, 3.3488627241070614e+38, INFINITY, INFINITY, INFINITY, NAN});
    const auto y = unary(TGL_OP_COSH, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// tan: +-0 kept, next to +-pi/2 (-2.29e7: exact argument reduction), pi, 3 pi / 2, up to 3.4e38.
TEST_F(MathKnownAnswer, Tan) {
    if (!supported(TGL_OP_TAN)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, -1.401298464324817e-45f, 4.999999873689376e-05f, 0.25f, -0.5f, 0.7853981852531433f, 1.0f, -1.5f, 1.5707963705062866f, -1.5707963705062866f, 3.1415927410125732f, 4.71238899230957f, 100.0f, -1000.0f, 1000000.0f, 1.0000000200408773e+20f, -3.3999999521443642e+38f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 1.0000000031710769e-30, -1.401298464324817e-45, 4.999999873689376e-05, 0.25534191727638245, -0.5463024973869324, 1.0, 1.5574077367782593, -14.101420402526855, -22877332.0, 22877332.0, 8.742277657347586e-08, -83858280.0, -0.587213933467865, -1.470324158668518, -0.37362444400787354, 0.8704919815063477, 0.25169774889945984, NAN, NAN, NAN});
    const auto y = unary(TGL_OP_TAN, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// asinh: +-0 kept, log1p form near 0, the log(2|x|) branch either side of 4096, 3.4e38 (x^2 would
// overflow), +-inf.
TEST_F(MathKnownAnswer, Asinh) {
    if (!supported(TGL_OP_ASINH)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, -1.401298464324817e-45f, 4.999999873689376e-05f, 0.0010000000474974513f, -0.25f, 0.5f, 1.0f, -2.0f, 100.0f, 4096.0f, 4097.0f, -10000000000.0f, 3.3999999521443642e+38f, -3.3999999521443642e+38f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 1.0000000031710769e-30, -1.401298464324817e-45, 4.999999873689376e-05, 0.0009999999310821295, -0.24746645987033844, 0.4812118113040924, 0.8813735842704773, -1.4436354637145996, 5.298342227935791, 9.010912895202637, 9.011157035827637, -23.718997955322266, 89.41515350341797, -89.41515350341797, INFINITY, -INFINITY, NAN});
    const auto y = unary(TGL_OP_ASINH, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// acosh: acosh(1) = +0, next to 1 (1.0000001: t = x - 1 exact), either side of 4096, NaN below 1.
TEST_F(MathKnownAnswer, Acosh) {
    if (!supported(TGL_OP_ACOSH)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {1.0f, 1.0000001192092896f, 1.0010000467300415f, 1.5f, 2.0f, 10.0f, 4096.0f, 4097.0f, 10000000000.0f, 3.3999999521443642e+38f, 0.9999999403953552f, 0.0f, -0.0f, -1.0f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, 0.00048828125, 0.044718679040670395, 0.9624236226081848, 1.316957950592041, 2.993222951889038, 9.010912895202637, 9.011157035827637, 23.718997955322266, 89.41515350341797, NAN, NAN, NAN, NAN, INFINITY, NAN, NAN});
    const auto y = unary(TGL_OP_ACOSH, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// atanh: +-0 kept, atanh(+-1) = +-inf, next to +-1 (0.99999994), NaN outside [-1, 1].
TEST_F(MathKnownAnswer, Atanh) {
    if (!supported(TGL_OP_ATANH)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0000000031710769e-30f, -1.401298464324817e-45f, 4.999999873689376e-05f, 0.0010000000474974513f, -0.25f, 0.5f, -0.75f, 0.9900000095367432f, 0.9999999403953552f, -0.9999999403953552f, 1.0f, -1.0f, 1.0000001192092896f, -2.0f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 1.0000000031710769e-30, -1.401298464324817e-45, 4.999999873689376e-05, 0.0010000003967434168, -0.2554128170013428, 0.5493061542510986, -0.972955048084259, 2.646652936935425, 8.664340019226074, -8.664340019226074, INFINITY, -INFINITY, NAN, NAN, NAN, NAN, NAN});
    const auto y = unary(TGL_OP_ATANH, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// gelu_quick(x) = x * sigmoid(1.702 x): gelu_quick(-inf) = -inf * 0 = NaN as the gated ops, a
// subnormal result at -60, -0 for large negative x.
TEST_F(MathKnownAnswer, GeluQuick) {
    if (!supported(TGL_OP_GELU_QUICK)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 2.0f, -3.0f, 10.0f, -10.0f, -30.0f, -60.0f, 100.0f, -100.0f, 1.0000000150474662e+30f, -1.0000000150474662e+30f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, -0.0, 0.845795750617981, -0.15420423448085785, 0.35038843750953674, -0.14961156249046326, 1.935658574104309, -0.018071310594677925, 10.0, -4.0579612914370955e-07, -2.004679686612757e-21, -2.6764800668604006e-43, 100.0, -0.0, 1.0000000150474662e+30, -0.0, INFINITY, NAN, NAN});
    const auto y = unary(TGL_OP_GELU_QUICK, x);
    EXPECT_TRUE(close_to(y, want, kInverseTrigRel2));
    EXPECT_TRUE(zero_signs(y, want));
}

// step (ggml's): x > 0 ? 1 : 0; step(+-0) = +0, step(NaN) = 0, the smallest subnormal is > 0.
TEST_F(MathKnownAnswer, Step) {
    if (!supported(TGL_OP_STEP)) GTEST_SKIP() << "op not implemented by this plugin";
    const std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, 1.401298464324817e-45f, -1.401298464324817e-45f, 1.0000000031710769e-30f, -1.0000000150474662e+30f, 3.3999999521443642e+38f, kInf, -kInf, kNaN};
    const std::vector<float> want = f32({0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0});
    const auto y = unary(TGL_OP_STEP, x);
    EXPECT_TRUE(exact(y, want));
    EXPECT_TRUE(zero_signs(y, want));
}

// f16 storage (computed in f32, rounded to nearest even at the store), bit-exact (-0 != +0).
TEST_F(MathKnownAnswer, F16Storage) {
    const double kInfD = std::numeric_limits<double>::infinity(), kNaND = std::numeric_limits<double>::quiet_NaN();
    auto run16 = [](tgl_op op, const std::vector<std::vector<double>>& ins, const void* params = nullptr) {
        Device& d = dev();
        const int64_t n = int64_t(ins[0].size());
        std::vector<std::unique_ptr<DeviceTensor>> ts;
        std::vector<tgl_tensor> descs;
        for (const auto& v : ins) {
            ts.push_back(std::make_unique<DeviceTensor>(d, contiguous({n}), TGL_DTYPE_F16));
            ts.back()->set_logical(v);
            descs.push_back(ts.back()->desc());
        }
        DeviceTensor out(d, contiguous({n}), TGL_DTYPE_F16);
        out.poison();
        d.run_ok(op, params, descs, {out.desc()});
        return out.read_logical();
    };
    auto same = [](const std::vector<double>& got, const std::vector<double>& want, const char* what) {
        return compare(TGL_DTYPE_F16, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::ExactBits, what);
    };
    struct U {
        tgl_op op;
        const char* what;
        std::vector<double> x, want;
    };
    const std::vector<U> unary_cases = {
        {TGL_OP_SIGN, "sign", {-3, -0.0, 0.0, 5, kNaND}, {-1, -0.0, 0.0, 1, kNaND}},
        {TGL_OP_FLOOR, "floor", {-0.5, 2.5, -0.0, 65504}, {-1, 2, -0.0, 65504}},
        {TGL_OP_ROUND, "round", {0.5, 1.5, 2.5, -0.5, -2.5}, {0.0, 2, 2, -0.0, -2}},
        {TGL_OP_TRUNC, "trunc", {-1.75, 1.75, -0.25}, {-1, 1, -0.0}},
        {TGL_OP_CEIL, "ceil", {-0.5, 0.25}, {-0.0, 1}},
        {TGL_OP_SQUARE, "square", {300, -3, -0.0}, {kInfD, 9, 0.0}},
        {TGL_OP_RSQRT, "rsqrt", {4, 0.0, -0.0, -1}, {0.5, kInfD, -kInfD, kNaND}},
        {TGL_OP_RECIPROCAL, "reciprocal", {4, -0.0, 3}, {0.25, -kInfD, 0.333251953125}},
        {TGL_OP_EXPM1, "expm1", {-0.0, 0.0, -kInfD}, {-0.0, 0.0, -1}},
        {TGL_OP_LOG1P, "log1p", {-0.0, -1, -2}, {-0.0, -kInfD, kNaND}},
        {TGL_OP_SIN, "sin", {-0.0, 0.0, kInfD}, {-0.0, 0.0, kNaND}},
        {TGL_OP_COS, "cos", {0.0, kInfD}, {1, kNaND}},
        {TGL_OP_ERF, "erf", {-0.0, kInfD, -kInfD}, {-0.0, 1, -1}},
        {TGL_OP_HARDSIGMOID, "hardsigmoid", {-3, 0.0, 3}, {0.0, 0.5, 1}},
        {TGL_OP_HARDSWISH, "hardswish", {-4, 4, 0.0}, {-0.0, 4, 0.0}},
        {TGL_OP_SELU, "selu", {0.0, -kInfD}, {0.0, -1.7578125}},
        {TGL_OP_MISH, "mish", {0.0, kInfD}, {0.0, kInfD}},
        {TGL_OP_SOFTPLUS, "softplus", {0.0, 30, -kInfD}, {0.693359375, 30, 0.0}},
        {TGL_OP_LEAKY_RELU, "leaky_relu", {-100, -0.0, 2}, {-1, -0.0, 2}},
        {TGL_OP_ELU, "elu", {-kInfD, 2}, {-1, 2}},
        {TGL_OP_CELU, "celu", {-kInfD, 2}, {-1, 2}},
        {TGL_OP_CLAMP, "clamp", {-kInfD, kNaND, 70000}, {-kInfD, kNaND, kInfD}},
        {TGL_OP_ASIN, "asin", {-0.0, 1, -2}, {-0.0, 1.5703125, kNaND}},
        {TGL_OP_ACOS, "acos", {1, -1, 2}, {0.0, 3.140625, kNaND}},
        {TGL_OP_ATAN, "atan", {-0.0, kInfD, -kInfD}, {-0.0, 1.5703125, -1.5703125}},
        {TGL_OP_SINH, "sinh", {-0.0, 12, -kInfD}, {-0.0, kInfD, -kInfD}},  // sinh(12) = 81377 > 65504
        {TGL_OP_COSH, "cosh", {-0.0, 11, kNaND}, {1, 29936, kNaND}},
        {TGL_OP_TAN, "tan", {-0.0, kInfD, 0.5}, {-0.0, kNaND, 0.54638671875}},
        {TGL_OP_ASINH, "asinh", {-0.0, 65504, -kInfD}, {-0.0, 11.78125, -kInfD}},
        {TGL_OP_ACOSH, "acosh", {1, 0.5, kInfD}, {0.0, kNaND, kInfD}},
        {TGL_OP_ATANH, "atanh", {-0.0, 1, -1, 2}, {-0.0, kInfD, -kInfD, kNaND}},
        {TGL_OP_GELU_QUICK, "gelu_quick", {-0.0, 1, -kInfD}, {-0.0, 0.845703125, kNaND}},
        {TGL_OP_STEP, "step", {-0.0, 0.0, kNaND, 5.960464477539063e-08, -65504}, {0.0, 0.0, 0.0, 1, 0.0}},
    };
    for (const U& u : unary_cases) {
        if (!supported(u.op)) continue;
        EXPECT_TRUE(same(run16(u.op, {u.x}), u.want, u.what));
    }
    const std::vector<double> a = {5.5, -5.5, -1, 7, kInfD, -0.0}, b = {2, 2, 3, -0.0, 1, 1};
    if (supported(TGL_OP_FMOD)) {
        EXPECT_TRUE(same(run16(TGL_OP_FMOD, {a, b}), {1.5, -1.5, -1, kNaND, kNaND, -0.0}, "fmod"));
    }
    if (supported(TGL_OP_REMAINDER)) {
        EXPECT_TRUE(same(run16(TGL_OP_REMAINDER, {a, b}), {1.5, 0.5, 2, kNaND, kNaND, 0.0}, "remainder"));
    }
    if (supported(TGL_OP_ATAN2)) {
        EXPECT_TRUE(same(run16(TGL_OP_ATAN2, {{0.0, -0.0, 1}, {-1, 1, 0.0}}), {3.140625, -0.0, 1.5703125}, "atan2"));
    }
}

// ----- any layout ---------------------------------------------------------------------------------

TEST_F(Layouts, UnaryOnAnyLayout) {
    Device& d = dev();
    for (int round = 0; round < 40; ++round) {
        Shape s = random_shape(rng_, 0, 8, 600);
        Input x = make_input(d, s, rng_);
        auto y = make_output(d, s, rng_);
        tgl_op op = rng_.chance(0.5) ? TGL_OP_NEG : TGL_OP_ABS;
        SCOPED_TRACE(describe(op == TGL_OP_NEG ? "neg" : "abs", {x.t.get(), y.get()}));
        d.run_ok(op, nullptr, {x.t->desc()}, {y->desc()});
        std::vector<float> want(x.logical.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = op == TGL_OP_NEG ? -x.logical[i] : std::fabs(x.logical[i]);
        EXPECT_TRUE(compare(y->read(), want, s, 0, CompareMode::Exact));
        EXPECT_TRUE(x.t->unchanged());
    }
}

// ----- bad input ----------------------------------------------------------------------------------

std::vector<BadCase> unary_bad_cases() {
    std::vector<BadCase> c;
    c.push_back({"UnaryOutputShape", TGL_ERROR_SHAPE_MISMATCH, {"output y"}, [](Ctx& k) {
                     tgl_tensor x = k.a.desc(), y = with(k.y.desc(), [](tgl_tensor& t) { t.shape[1] = 2; });
                     return k.api.run_op(k.d.handle(), TGL_OP_EXP, nullptr, &x, 1, &y, 1);
                 }});
    c.push_back({"UnaryParamsSize", TGL_ERROR_PARAMS_SIZE, {"struct_size"}, [](Ctx& k) {
                     tgl_unary_params p{0, 0};
                     tgl_tensor x = k.a.desc(), y = k.y.desc();
                     return k.api.run_op(k.d.handle(), TGL_OP_RELU, &p, &x, 1, &y, 1);
                 }});
    c.push_back({"GeluParamsOfWrongSize", TGL_ERROR_PARAMS_SIZE, {"struct_size"}, [](Ctx& k) {
                     tgl_reduce_params p = k.rp;  // 48 bytes where gelu takes 8
                     tgl_tensor x = k.a.desc(), y = k.y.desc();
                     return k.api.run_op(k.d.handle(), TGL_OP_GELU, &p, &x, 1, &y, 1);
                 }});
    c.push_back({"GeluBadApproximate", TGL_ERROR_INVALID_ARGUMENT, {"approximate"}, [](Ctx& k) {
                     tgl_gelu_params p{sizeof(tgl_gelu_params), 7};
                     tgl_tensor x = k.a.desc(), y = k.y.desc();
                     return k.api.run_op(k.d.handle(), TGL_OP_GELU, &p, &x, 1, &y, 1);
                 }});
    c.push_back({"UnaryGivenTwoInputs", TGL_ERROR_INVALID_ARGUMENT, {"n_inputs"}, [](Ctx& k) {
                     tgl_tensor in[2] = {k.a.desc(), k.a.desc()};
                     tgl_tensor y = k.y.desc();
                     return k.api.run_op(k.d.handle(), TGL_OP_EXP, nullptr, in, 2, &y, 1);
                 }});
    c.push_back({"ElementwiseOutputIsInputTransposed", TGL_ERROR_INVALID_ARGUMENT, {"outputs[0]", "inputs[0]"},
                 [](Ctx& k) {
                     // x (3, 3) in place but written through the transposed view: not the identical view.
                     tgl_tensor x = k.a.desc(), y = k.a.desc();
                     x.shape[0] = x.shape[1] = 3;
                     x.strides[0] = 3;
                     y.shape[0] = y.shape[1] = 3;
                     y.strides[0] = 1;
                     y.strides[1] = 3;
                     return k.api.run_op(k.d.handle(), TGL_OP_NEG, nullptr, &x, 1, &y, 1);
                 }});
    // The ops of ABI 1.3, each rejected once (an output of another shape).
    const std::pair<const char*, tgl_op> abi13[] = {
        {"AsinOutputShape", TGL_OP_ASIN},   {"AcosOutputShape", TGL_OP_ACOS},   {"AtanOutputShape", TGL_OP_ATAN},
        {"SinhOutputShape", TGL_OP_SINH},   {"CoshOutputShape", TGL_OP_COSH},   {"TanOutputShape", TGL_OP_TAN},
        {"AsinhOutputShape", TGL_OP_ASINH}, {"AcoshOutputShape", TGL_OP_ACOSH}, {"AtanhOutputShape", TGL_OP_ATANH},
        {"GeluQuickOutputShape", TGL_OP_GELU_QUICK}, {"StepOutputShape", TGL_OP_STEP}};
    for (const auto& o : abi13) {
        const tgl_op op = o.second;
        c.push_back({o.first, TGL_ERROR_SHAPE_MISMATCH, {"output y"}, [op](Ctx& k) {
                         tgl_tensor x = k.a.desc(), y = with(k.y.desc(), [](tgl_tensor& t) { t.shape[1] = 2; });
                         return k.api.run_op(k.d.handle(), op, nullptr, &x, 1, &y, 1);
                     }});
    }
    return c;
}

INSTANTIATE_TEST_SUITE_P(Unary, BadInput, ::testing::ValuesIn(unary_bad_cases()), bad_case_name);

}  // namespace
}  // namespace conf
