// Known answers of the dtype ops: cast between every pair class of dtypes (rounding, overflow,
// saturation, wrap-around, NaN, signed zero), the comparisons with NaN and signed zeros and
// integers beyond 2^24, logical ops, where with broadcasting of all three inputs, and the float
// ops in f16 and bf16 (computed in f32, rounded to nearest even at the store). Every expected value is
// written by hand.
#include "common.h"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace conf {
namespace {

struct In {
    tgl_dtype dtype;
    Shape shape;
    std::vector<double> values;
};

// Runs op on contiguous inputs (values of their dtypes) and a poisoned contiguous output of dtype
// ydt; checks guards, that the inputs are unchanged, and returns the output's logical values.
std::vector<double> run_dt(tgl_op op, const std::vector<In>& ins, tgl_dtype ydt, const Shape& ys,
                           const void* params = nullptr) {
    Device& d = dev();
    std::vector<std::unique_ptr<DeviceTensor>> ts;
    std::vector<tgl_tensor> descs;
    for (const In& in : ins) {
        ts.push_back(std::make_unique<DeviceTensor>(d, contiguous(in.shape), in.dtype));
        ts.back()->set_logical(in.values);
        descs.push_back(ts.back()->desc());
    }
    DeviceTensor out(d, contiguous(ys), ydt);
    out.poison();
    d.run_ok(op, params, descs, {out.desc()});
    std::vector<double> y = out.read_logical();
    for (size_t i = 0; i < ts.size(); ++i) {
        ::testing::AssertionResult r = ts[i]->unchanged();
        if (!r) throw Failure("input " + std::to_string(i) + " was modified by the op: " + r.message());
    }
    return y;
}

// Bit-exact (NaN matches any NaN; -0 differs from +0) for floats, exact for integers.
::testing::AssertionResult same(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want,
                                const std::string& what, CompareMode mode = CompareMode::ExactBits) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, mode, what);
}

std::vector<double> cast1(tgl_dtype from, tgl_dtype to, const std::vector<double>& x) {
    return run_dt(TGL_OP_CAST, {{from, {int64_t(x.size())}, x}}, to, {int64_t(x.size())});
}

#define EXPECT_CAST(FROM, TO, X, WANT)                                                                 \
    EXPECT_TRUE(same(TO, cast1(FROM, TO, X), WANT,                                                     \
                     "cast " + dtype_name(FROM) + " -> " + dtype_name(TO)))

const double p2_11 = std::ldexp(1.0, -11), p2_10 = std::ldexp(1.0, -10), p2_9 = std::ldexp(1.0, -9);
const double p2_8 = std::ldexp(1.0, -8), p2_7 = std::ldexp(1.0, -7), p2_6 = std::ldexp(1.0, -6);
const double p2_24 = std::ldexp(1.0, -24), p2_25 = std::ldexp(1.0, -25);

TEST(DtypeCast, FloatToF16RoundsToNearestEven) {
    EXPECT_CAST(TGL_DTYPE_F32, TGL_DTYPE_F16,
                (std::vector<double>{65520, 65519, -65520, 1 + p2_11, 1 + 3 * p2_11, p2_25, 3 * p2_25, -0.0, dNaN,
                                     dInf, 1e-8, 0.1, 65504, 2049, 1e10}),
                (std::vector<double>{dInf, 65504, -dInf, 1, 1 + p2_9, 0, 2 * p2_24, -0.0, dNaN, dInf, 0,
                                     0.0999755859375, 65504, 2048, dInf}));
    // bf16 -> f16 (exact values, and rounding) and i32 -> f16 directly.
    EXPECT_CAST(TGL_DTYPE_BF16, TGL_DTYPE_F16, (std::vector<double>{1 + p2_7, std::ldexp(1.0, -20), 65536, -0.0}),
                (std::vector<double>{1 + p2_7, std::ldexp(1.0, -20), dInf, -0.0}));
    EXPECT_CAST(TGL_DTYPE_I32, TGL_DTYPE_F16, (std::vector<double>{65519, 65520, 2049, 2051, -2049, 0, 2147483647}),
                (std::vector<double>{65504, dInf, 2048, 2052, -2048, 0, dInf}));
}

TEST(DtypeCast, ToBf16RoundsToNearestEven) {
    EXPECT_CAST(TGL_DTYPE_F32, TGL_DTYPE_BF16,
                (std::vector<double>{1 + p2_8, 1 + 3 * p2_8, -(1 + 3 * p2_8), 1 + p2_8 + std::ldexp(1.0, -20),
                                     3.4028234663852886e38, -0.0, dNaN, std::ldexp(1.0, -130), std::ldexp(1.0, -127),
                                     -std::ldexp(3.0, -140), std::ldexp(1.0, -149), std::ldexp(1.0, -134),
                                     std::ldexp(3.0, -134)}),
                (std::vector<double>{1, 1 + p2_6, -(1 + p2_6), 1 + p2_7, dInf, -0.0, dNaN, std::ldexp(1.0, -130),
                                     std::ldexp(1.0, -127), -0.0, 0, 0, std::ldexp(1.0, -132)}));
    // f16 -> bf16: 1 + 2^-10 is below half a bf16 step; 1 + 2^-8 + 2^-10 is above.
    EXPECT_CAST(TGL_DTYPE_F16, TGL_DTYPE_BF16, (std::vector<double>{1 + p2_10, 1 + p2_8 + p2_10, 1 + p2_8, 65504}),
                (std::vector<double>{1, 1 + p2_7, 1, 65536}));
    // i32 -> bf16 directly: through f32 first, 2^24 + 2^16 + 1 would round to the tie 2^24 + 2^16
    // and then to even 2^24.
    EXPECT_CAST(TGL_DTYPE_I32, TGL_DTYPE_BF16, (std::vector<double>{16842753, 16842752, 257, 259, -259}),
                (std::vector<double>{16908288, 16777216, 256, 260, -260}));
}

TEST(DtypeCast, ToF32) {
    EXPECT_CAST(TGL_DTYPE_I32, TGL_DTYPE_F32, (std::vector<double>{16777217, 16777219, -16777217, 2147483647, -2147483648.0}),
                (std::vector<double>{16777216, 16777220, -16777216, 2147483648.0, -2147483648.0}));
    EXPECT_CAST(TGL_DTYPE_F16, TGL_DTYPE_F32, (std::vector<double>{p2_24, -65504, -0.0, dInf, dNaN, 1 + p2_10}),
                (std::vector<double>{p2_24, -65504, -0.0, dInf, dNaN, 1 + p2_10}));
    EXPECT_CAST(TGL_DTYPE_BF16, TGL_DTYPE_F32, (std::vector<double>{std::ldexp(1.0, -133), -3, 1 + p2_7}),
                (std::vector<double>{std::ldexp(1.0, -133), -3, 1 + p2_7}));
    EXPECT_CAST(TGL_DTYPE_I8, TGL_DTYPE_F32, (std::vector<double>{-128, 127, -1}), (std::vector<double>{-128, 127, -1}));
    EXPECT_CAST(TGL_DTYPE_U8, TGL_DTYPE_F32, (std::vector<double>{255, 0}), (std::vector<double>{255, 0}));
    EXPECT_CAST(TGL_DTYPE_BOOL, TGL_DTYPE_F32, (std::vector<double>{1, 0}), (std::vector<double>{1, 0}));
}

TEST(DtypeCast, FloatToIntegerTruncatesAndSaturates) {
    EXPECT_CAST(TGL_DTYPE_F32, TGL_DTYPE_I32,
                (std::vector<double>{dNaN, 3e9, -3e9, -1.5, 2.9, dInf, -dInf, -0.0, 16777216, -2147483648.0, 1e-45}),
                (std::vector<double>{0, 2147483647, -2147483648.0, -1, 2, 2147483647, -2147483648.0, 0, 16777216,
                                     -2147483648.0, 0}));
    EXPECT_CAST(TGL_DTYPE_F32, TGL_DTYPE_I8, (std::vector<double>{-1.5, 300, -300, dNaN, 127.9, -128.9, 1e10}),
                (std::vector<double>{-1, 127, -128, 0, 127, -128, 127}));
    EXPECT_CAST(TGL_DTYPE_F32, TGL_DTYPE_U8, (std::vector<double>{-1.5, 255.9, 256, dNaN, 0.99, -dInf}),
                (std::vector<double>{0, 255, 255, 0, 0, 0}));
    EXPECT_CAST(TGL_DTYPE_F16, TGL_DTYPE_I32, (std::vector<double>{-65504, dInf, 2.5, dNaN}),
                (std::vector<double>{-65504, 2147483647, 2, 0}));
    EXPECT_CAST(TGL_DTYPE_BF16, TGL_DTYPE_U8, (std::vector<double>{-2, 3.5, 512}), (std::vector<double>{0, 3, 255}));
}

TEST(DtypeCast, IntegerToNarrowerIntegerWraps) {
    EXPECT_CAST(TGL_DTYPE_I32, TGL_DTYPE_U8, (std::vector<double>{300, -1, 255, 256, -2147483648.0}),
                (std::vector<double>{44, 255, 255, 0, 0}));
    EXPECT_CAST(TGL_DTYPE_I32, TGL_DTYPE_I8, (std::vector<double>{200, -129, 127, -128, 2147483647}),
                (std::vector<double>{-56, 127, 127, -128, -1}));
    EXPECT_CAST(TGL_DTYPE_U8, TGL_DTYPE_I8, (std::vector<double>{200, 127, 128}), (std::vector<double>{-56, 127, -128}));
    EXPECT_CAST(TGL_DTYPE_I8, TGL_DTYPE_U8, (std::vector<double>{-1, -128, 5}), (std::vector<double>{255, 128, 5}));
    EXPECT_CAST(TGL_DTYPE_I8, TGL_DTYPE_I32, (std::vector<double>{-128, -1, 127}), (std::vector<double>{-128, -1, 127}));
    EXPECT_CAST(TGL_DTYPE_BOOL, TGL_DTYPE_I32, (std::vector<double>{1, 0}), (std::vector<double>{1, 0}));
    EXPECT_CAST(TGL_DTYPE_I32, TGL_DTYPE_I32, (std::vector<double>{2147483647, -2147483648.0, 16777217}),
                (std::vector<double>{2147483647, -2147483648.0, 16777217}));
}

TEST(DtypeCast, ToBoolIsNonzero) {
    EXPECT_CAST(TGL_DTYPE_F32, TGL_DTYPE_BOOL, (std::vector<double>{0.5, -0.0, 0.0, dNaN, 1e-45, -dInf}),
                (std::vector<double>{1, 0, 0, 1, 1, 1}));
    EXPECT_CAST(TGL_DTYPE_F16, TGL_DTYPE_BOOL, (std::vector<double>{p2_24, -0.0, dNaN}), (std::vector<double>{1, 0, 1}));
    EXPECT_CAST(TGL_DTYPE_BF16, TGL_DTYPE_BOOL, (std::vector<double>{-0.0, 2}), (std::vector<double>{0, 1}));
    EXPECT_CAST(TGL_DTYPE_I32, TGL_DTYPE_BOOL, (std::vector<double>{256, 0, -1}), (std::vector<double>{1, 0, 1}));
    EXPECT_CAST(TGL_DTYPE_U8, TGL_DTYPE_BOOL, (std::vector<double>{0, 2, 255}), (std::vector<double>{0, 1, 1}));
    EXPECT_CAST(TGL_DTYPE_I8, TGL_DTYPE_BOOL, (std::vector<double>{-128, 0}), (std::vector<double>{1, 0}));
    EXPECT_CAST(TGL_DTYPE_BOOL, TGL_DTYPE_U8, (std::vector<double>{1, 0, 1}), (std::vector<double>{1, 0, 1}));
}

// ---------------------------------------------------------------------------------------------

std::vector<double> binary_dt(tgl_op op, tgl_dtype in, const std::vector<double>& a, const std::vector<double>& b,
                              tgl_dtype out) {
    Shape s{int64_t(a.size())};
    return run_dt(op, {{in, s, a}, {in, s, b}}, out, s);
}

TEST(DtypeCompare, FloatsWithNaNAndSignedZeros) {
    const std::vector<double> a = {dNaN, 1, -0.0, 0.0, 1, 2, -dInf, 3};
    const std::vector<double> b = {dNaN, dNaN, 0.0, -0.0, 2, 1, dInf, 3};
    struct Case { tgl_op op; std::vector<double> want; };
    const std::vector<Case> cases = {
        {TGL_OP_EQ, {0, 0, 1, 1, 0, 0, 0, 1}}, {TGL_OP_NE, {1, 1, 0, 0, 1, 1, 1, 0}},
        {TGL_OP_LT, {0, 0, 0, 0, 1, 0, 1, 0}}, {TGL_OP_LE, {0, 0, 1, 1, 1, 0, 1, 1}},
        {TGL_OP_GT, {0, 0, 0, 0, 0, 1, 0, 0}}, {TGL_OP_GE, {0, 0, 1, 1, 0, 1, 0, 1}},
    };
    for (tgl_dtype in : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (tgl_dtype out : {TGL_DTYPE_BOOL, TGL_DTYPE_U8})
            for (const Case& c : cases)
                EXPECT_TRUE(same(out, binary_dt(c.op, in, a, b, out), c.want,
                                 "op " + std::to_string(c.op) + " " + dtype_name(in) + " -> " + dtype_name(out)));
}

TEST(DtypeCompare, IntegersExactly) {
    // i32 beyond 2^24: f32 would make 16777217 and 16777216 equal.
    EXPECT_TRUE(same(TGL_DTYPE_BOOL,
                     binary_dt(TGL_OP_EQ, TGL_DTYPE_I32, {16777217, 2147483647, -2147483648.0, 5}, {16777216, 2147483646, -2147483648.0, 5}, TGL_DTYPE_BOOL),
                     {0, 0, 1, 1}, "eq i32"));
    EXPECT_TRUE(same(TGL_DTYPE_U8,
                     binary_dt(TGL_OP_GT, TGL_DTYPE_I32, {16777217, 2147483647, -2147483648.0, 5}, {16777216, 2147483646, 2147483647, 5}, TGL_DTYPE_U8),
                     {1, 1, 0, 0}, "gt i32"));
    EXPECT_TRUE(same(TGL_DTYPE_BOOL, binary_dt(TGL_OP_LT, TGL_DTYPE_I8, {-1, -128, 127}, {1, 127, -128}, TGL_DTYPE_BOOL),
                     {1, 1, 0}, "lt i8"));
    EXPECT_TRUE(same(TGL_DTYPE_BOOL, binary_dt(TGL_OP_GE, TGL_DTYPE_U8, {255, 0, 128}, {1, 0, 129}, TGL_DTYPE_BOOL),
                     {1, 1, 0}, "ge u8"));
    EXPECT_TRUE(same(TGL_DTYPE_BOOL, binary_dt(TGL_OP_NE, TGL_DTYPE_BOOL, {1, 0, 1, 0}, {1, 1, 0, 0}, TGL_DTYPE_BOOL),
                     {0, 1, 1, 0}, "ne bool"));
    EXPECT_TRUE(same(TGL_DTYPE_BOOL, binary_dt(TGL_OP_LE, TGL_DTYPE_BOOL, {1, 0, 1, 0}, {1, 1, 0, 0}, TGL_DTYPE_BOOL),
                     {1, 1, 0, 1}, "le bool"));
}

TEST(DtypeLogical, TruthValues) {
    const std::vector<double> a = {dNaN, 0, -0.0, 2, 0};
    const std::vector<double> b = {1, 1, 1, 0, 0};
    for (tgl_dtype in : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16}) {
        EXPECT_TRUE(same(TGL_DTYPE_BOOL, binary_dt(TGL_OP_LOGICAL_AND, in, a, b, TGL_DTYPE_BOOL), {1, 0, 0, 0, 0}, "and " + dtype_name(in)));
        EXPECT_TRUE(same(TGL_DTYPE_U8, binary_dt(TGL_OP_LOGICAL_OR, in, a, b, TGL_DTYPE_U8), {1, 1, 1, 1, 0}, "or " + dtype_name(in)));
        EXPECT_TRUE(same(TGL_DTYPE_BOOL, binary_dt(TGL_OP_LOGICAL_XOR, in, a, b, TGL_DTYPE_BOOL), {0, 1, 1, 1, 0}, "xor " + dtype_name(in)));
    }
    const std::vector<double> ia = {256, 0, -1, 7, 0}, ib = {1, 1, 1, 0, 0};
    for (tgl_dtype in : {TGL_DTYPE_I32, TGL_DTYPE_I8, TGL_DTYPE_U8, TGL_DTYPE_BOOL}) {
        std::vector<double> x = ia;
        if (in == TGL_DTYPE_I8 || in == TGL_DTYPE_U8) x[0] = 16;
        if (in == TGL_DTYPE_U8) x[2] = 255;
        if (in == TGL_DTYPE_BOOL) x = {1, 0, 1, 1, 0};
        EXPECT_TRUE(same(TGL_DTYPE_BOOL, binary_dt(TGL_OP_LOGICAL_AND, in, x, ib, TGL_DTYPE_BOOL), {1, 0, 1, 0, 0}, "and " + dtype_name(in)));
        EXPECT_TRUE(same(TGL_DTYPE_BOOL, binary_dt(TGL_OP_LOGICAL_OR, in, x, ib, TGL_DTYPE_BOOL), {1, 1, 1, 1, 0}, "or " + dtype_name(in)));
        EXPECT_TRUE(same(TGL_DTYPE_U8, binary_dt(TGL_OP_LOGICAL_XOR, in, x, ib, TGL_DTYPE_U8), {0, 1, 0, 1, 0}, "xor " + dtype_name(in)));
    }
    // logical_not: NaN and subnormals are nonzero.
    EXPECT_TRUE(same(TGL_DTYPE_BOOL, run_dt(TGL_OP_LOGICAL_NOT, {{TGL_DTYPE_F32, {5}, {dNaN, 0, -0.0, 1e-45, 3}}}, TGL_DTYPE_BOOL, {5}),
                     {0, 1, 1, 0, 0}, "logical_not f32"));
    EXPECT_TRUE(same(TGL_DTYPE_U8, run_dt(TGL_OP_LOGICAL_NOT, {{TGL_DTYPE_I32, {3}, {256, 0, -1}}}, TGL_DTYPE_U8, {3}),
                     {0, 1, 0}, "logical_not i32"));
    EXPECT_TRUE(same(TGL_DTYPE_BOOL, run_dt(TGL_OP_LOGICAL_NOT, {{TGL_DTYPE_BF16, {2}, {-0.0, dNaN}}}, TGL_DTYPE_BOOL, {2}),
                     {1, 0}, "logical_not bf16"));
}

TEST(DtypeWhere, BroadcastsAllThreeInputsAndCopiesBits) {
    // cond (3, 1), a (1, 4), b (4): y (3, 4).
    const std::vector<double> cond = {1, 0, 1};
    for (tgl_dtype dt : {TGL_DTYPE_I32, TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I8, TGL_DTYPE_U8, TGL_DTYPE_BOOL}) {
        std::vector<double> a, b;
        switch (dt) {
        case TGL_DTYPE_I32: a = {2147483647, 16777217, -2147483648.0, -1}; b = {16777219, 0, 1, 2}; break;
        case TGL_DTYPE_F32: a = {dNaN, -0.0, 1e-45, 16777216}; b = {0.1, dInf, -dInf, 0.0}; break;
        case TGL_DTYPE_F16: a = {dNaN, -0.0, p2_24, 65504}; b = {0.5, dInf, -dInf, 0.0}; break;
        case TGL_DTYPE_BF16: a = {dNaN, -0.0, std::ldexp(1.0, -133), 3}; b = {0.5, dInf, -dInf, 0.0}; break;
        case TGL_DTYPE_I8: a = {-128, 127, -1, 0}; b = {1, 2, 3, 4}; break;
        case TGL_DTYPE_U8: a = {255, 128, 0, 7}; b = {1, 2, 3, 4}; break;
        default: a = {1, 0, 1, 0}; b = {0, 1, 1, 0}; break;
        }
        for (tgl_dtype cdt : {TGL_DTYPE_BOOL, TGL_DTYPE_U8}) {
            std::vector<double> c = cond;
            if (cdt == TGL_DTYPE_U8) c = {200, 0, 1};
            std::vector<double> want;
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 4; ++j) want.push_back(c[size_t(i)] != 0 ? a[size_t(j)] : b[size_t(j)]);
            std::vector<double> got = run_dt(TGL_OP_WHERE, {{cdt, {3, 1}, c}, {dt, {1, 4}, a}, {dt, {4}, b}}, dt, {3, 4});
            EXPECT_TRUE(compare(dt, got, want, Shape{3, 4}, 0.0, CompareMode::ExactBits,
                                "where " + dtype_name(cdt) + ", " + dtype_name(dt)));
        }
    }
}

// ---------------------------------------------------------------------------------------------

TEST(DtypeF16, UnaryOps) {
    auto un = [](tgl_op op, const std::vector<double>& x) {
        return run_dt(op, {{TGL_DTYPE_F16, {int64_t(x.size())}, x}}, TGL_DTYPE_F16, {int64_t(x.size())});
    };
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_ABS, {-2.5, -0.0, dNaN, -dInf, -p2_24}), {2.5, 0.0, dNaN, dInf, p2_24}, "abs"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_NEG, {-2.5, 0.0, 65504}), {2.5, -0.0, -65504}, "neg"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_RELU, {-1, 3, dNaN}), {0, 3, dNaN}, "relu"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_SQRT, {4, 2, -1, dInf}), {2, 1.4140625, dNaN, dInf}, "sqrt"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_EXP, {0, 12, -dInf}), {1, dInf, 0}, "exp", CompareMode::Exact));
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_LOG, {1, 0, -1}), {0, -dInf, dNaN}, "log", CompareMode::Exact));
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_SIGMOID, {0, -dInf, dInf}), {0.5, 0, 1}, "sigmoid", CompareMode::Exact));
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_TANH, {0, dInf, -dInf}), {0, 1, -1}, "tanh", CompareMode::Exact));
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_GELU, {0, dInf, -dInf}), {0, dInf, dNaN}, "gelu", CompareMode::Exact));  // -inf * 0
    EXPECT_TRUE(same(TGL_DTYPE_F16, un(TGL_OP_SILU, {0, dInf, -dInf}), {0, dInf, dNaN}, "silu", CompareMode::Exact));
}

TEST(DtypeF16, BinaryOpsRoundAtTheStore) {
    auto bin = [](tgl_op op, const std::vector<double>& a, const std::vector<double>& b) {
        return binary_dt(op, TGL_DTYPE_F16, a, b, TGL_DTYPE_F16);
    };
    // 1 + 2^-11 is a tie (to 1); 1 + 3 * 2^-11 a tie to 1 + 2^-9; 65504 + 65504 overflows;
    // 2^-14 * 2^-10 is the smallest subnormal.
    EXPECT_TRUE(same(TGL_DTYPE_F16, bin(TGL_OP_ADD, {1, 1, 65504, -0.0, 0.1}, {p2_11, 3 * p2_11, 65504, -0.0, 0.2}),
                     {1, 1 + p2_9, dInf, -0.0, 0.2998046875}, "add"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, bin(TGL_OP_SUB, {1, 3}, {1, 0.5}), {0, 2.5}, "sub"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, bin(TGL_OP_MUL, {std::ldexp(1.0, -14), 256, -2}, {std::ldexp(1.0, -10), 256, 0}),
                     {p2_24, dInf, -0.0}, "mul"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, bin(TGL_OP_DIV, {1, 1, 0}, {4, 0, 0}), {0.25, dInf, dNaN}, "div"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, bin(TGL_OP_MAXIMUM, {1, dNaN, -0.0}, {2, 1, 0.0}), {2, dNaN, 0.0}, "maximum"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, bin(TGL_OP_MINIMUM, {1, dNaN, -0.0}, {2, 1, 0.0}), {1, dNaN, -0.0}, "minimum"));
    EXPECT_TRUE(same(TGL_DTYPE_F16, bin(TGL_OP_POW, {2, -2, 2}, {10, 3, 16}), {1024, -8, dInf}, "pow"));
}

TEST(DtypeF16, OddOffsetAndSizeKeepNeighbours) {
    // 7 f16 elements starting at an odd element offset: the halves of the shared first and last
    // words outside the view must survive (read() checks every byte outside the view).
    Device& d = dev();
    View xv = make_view({7}, Layout{"odd", {}, {}, {}, 1, 2});
    View yv = make_view({7}, Layout{"odd", {}, {}, {}, 3, 1});
    DeviceTensor x(d, xv, TGL_DTYPE_F16), y(d, yv, TGL_DTYPE_F16);
    x.set_logical({1, -2, 3, -4, 5, -6, 7});
    y.poison();
    d.run_ok(TGL_OP_NEG, nullptr, {x.desc()}, {y.desc()});
    EXPECT_TRUE(same(TGL_DTYPE_F16, y.read_logical(), {-1, 2, -3, 4, -5, 6, -7}, "neg f16, odd offsets"));
    DeviceTensor z(d, make_view({7}, Layout{"odd", {}, {}, {}, 5, 2}), TGL_DTYPE_U8);
    z.poison();
    d.run_ok(TGL_OP_CAST, nullptr, {x.desc()}, {z.desc()});
    EXPECT_TRUE(same(TGL_DTYPE_U8, z.read_logical(), {1, 0, 3, 0, 5, 0, 7}, "cast f16 -> u8, odd offsets"));
}

// bf16 as a compute dtype (8 exponent bits, 7 mantissa bits): computed in f32 (GPU) or double
// (CPU), rounded once to nearest even at the store, as f16. The values are picked where bf16 and
// f16 round differently.
TEST(DtypeBf16, BinaryOpsRoundAtTheStore) {
    const tgl_dtype BF = TGL_DTYPE_BF16;
    auto bin = [&](tgl_op op, const std::vector<double>& a, const std::vector<double>& b) { return binary_dt(op, BF, a, b, BF); };
    const double big = 1.5 * std::ldexp(1.0, 127);
    // 1 + 2^-8 is a tie (to 1; exact in f16); 1 + 3 * 2^-8 a tie up to the even 1 + 2^-6; 1 + 2^-9
    // below half an ulp; 65536 + 65536 is finite (f16: inf); 1.5 * 2^127 * 2 overflows;
    // 0.10009765625 + 0.2001953125 = 0.30029296875 rounds to 0.30078125 (154 * 2^-9).
    EXPECT_TRUE(same(BF, bin(TGL_OP_ADD, {1, 1, 1, 65536, big, -0.0, 0.10009765625}, {p2_8, 3 * p2_8, p2_9, 65536, big, -0.0, 0.2001953125}),
                     {1, 1 + p2_6, 1, 131072, dInf, -0.0, 0.30078125}, "add bf16"));
    // 3 * (1 + 2^-7) = 3.0234375, a tie between 3.015625 and 3.03125 (even); 2^100 * 2^100 is
    // finite in bf16 (f16: inf); 2^-60 * 2^-60 = 2^-120 is a normal bf16.
    EXPECT_TRUE(same(BF, bin(TGL_OP_MUL, {3, std::ldexp(1.0, 100), std::ldexp(1.0, -60), -2}, {1 + p2_7, std::ldexp(1.0, 100), std::ldexp(1.0, -60), 0}),
                     {3.03125, std::ldexp(1.0, 200), std::ldexp(1.0, -120), -0.0}, "mul bf16"));
    EXPECT_TRUE(same(BF, bin(TGL_OP_DIV, {1, 1, 0, -1}, {3, 0, 0, dInf}), {0.333984375, dInf, dNaN, -0.0}, "div bf16"));
    EXPECT_TRUE(same(BF, bin(TGL_OP_MAXIMUM, {1, dNaN, -0.0, -dInf}, {2, 1, 0.0, 5}), {2, dNaN, 0.0, 5}, "maximum bf16"));
    EXPECT_TRUE(same(BF, bin(TGL_OP_SUB, {dInf, 1}, {dInf, 1 + p2_7}), {dNaN, -p2_7}, "sub bf16"));
}

TEST(DtypeBf16, UnaryOps) {
    const tgl_dtype BF = TGL_DTYPE_BF16;
    auto un = [&](tgl_op op, const std::vector<double>& x) { return run_dt(op, {{BF, {int64_t(x.size())}, x}}, BF, {int64_t(x.size())}); };
    EXPECT_TRUE(same(BF, un(TGL_OP_ABS, {-2.5, -0.0, dNaN, -dInf, -std::ldexp(1.0, -126)}),
                     {2.5, 0.0, dNaN, dInf, std::ldexp(1.0, -126)}, "abs bf16"));
    EXPECT_TRUE(same(BF, un(TGL_OP_NEG, {-2.5, 0.0, 3.3895313892515355e38}), {2.5, -0.0, -3.3895313892515355e38}, "neg bf16"));
    // sqrt(2) = 1.41421356... is 181.02 ulps of 2^-7: 1.4140625.
    EXPECT_TRUE(same(BF, un(TGL_OP_SQRT, {4, 2, -1, dInf}), {2, 1.4140625, dNaN, dInf}, "sqrt bf16"));
    // exp(12) = 162754.79 is finite in bf16 (f16: inf): 162816 (159 * 2^10, within half an ulp).
    EXPECT_TRUE(same(BF, un(TGL_OP_EXP, {0, 12, -dInf, 100}), {1, 162816, 0, dInf}, "exp bf16", CompareMode::Exact));
    EXPECT_TRUE(same(BF, un(TGL_OP_RELU, {-1, 3, dNaN}), {0, 3, dNaN}, "relu bf16"));
}

// One rounding of the whole result: 1 + 2^-8 + 2^-8 = 1 + 2^-7 in bf16, where rounding after each
// step would give 1 (1 + 2^-8 ties to even, twice).
TEST(DtypeBf16, ReductionsAndProductsRoundOnce) {
    const tgl_dtype BF = TGL_DTYPE_BF16;
    Device& d = dev();
    DeviceTensor x(d, contiguous({3}), BF), w(d, contiguous({3, 1}), BF), a(d, contiguous({1, 3}), BF);
    x.set_logical({1, p2_8, p2_8});
    a.set_logical({1, p2_8, p2_8});
    w.set_logical({1, 1, 1});
    DeviceTensor y(d, contiguous({}), BF), c(d, contiguous({1, 1}), BF);
    y.poison();
    c.poison();
    tgl_reduce_params rp = reduce_params({0}, false);
    d.run_ok(TGL_OP_SUM, &rp, {x.desc()}, {y.desc()});
    EXPECT_TRUE(same(BF, y.read_logical(), {1 + p2_7}, "sum bf16"));
    d.run_ok(TGL_OP_MATMUL, nullptr, {a.desc(), w.desc()}, {c.desc()});
    EXPECT_TRUE(same(BF, c.read_logical(), {1 + p2_7}, "matmul bf16"));
}

}  // namespace
}  // namespace conf
