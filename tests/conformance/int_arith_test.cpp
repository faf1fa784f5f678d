// Integer arithmetic (ops.h, "Integer arithmetic"; ABI 1.3) and floor_divide: known answers
// written by hand for i32, i8 and u8: wrap-around at the ends of the range (INT_MAX + 1, INT_MIN /
// -1, abs and neg of INT_MIN), division and remainder by zero (0), the signs of C (div, fmod) and
// Python (floor_divide, remainder) division with negative operands, integer pow (wrapping, negative
// exponents), clamp's rounded bounds, integers beyond 2^24 that f32 would round; sum, prod, max,
// min, cumsum and cumprod of i32 (short and long, so that the GLES plugin's split and column
// reductions and its block scans run); argmax/argmin of i8/u8; floor_divide on floats (Python's
// //); and bad input (mixed dtypes, integer dtypes an op does not take).
#include "common.h"

#include <cstdint>
#include <string>
#include <vector>

namespace conf {
namespace {

const double kIntMax = 2147483647.0, kIntMin = -2147483648.0;

using IntArith = ConformanceTest;

std::vector<double> run_int(tgl_op op, tgl_dtype dt, const std::vector<InputArg>& ins, const Shape& ys,
                            const void* params = nullptr) {
    return run_op_values(dev(), op, params, ins, {output_of(dt, ys)})[0];
}

// a op b, elementwise on equal-length 1-D operands of dtype dt.
std::vector<double> int2(tgl_op op, tgl_dtype dt, const std::vector<double>& a, const std::vector<double>& b) {
    const Shape s{int64_t(a.size())};
    return run_int(op, dt, {input_values(dt, s, a), input_values(dt, s, b)}, s);
}

std::vector<double> int1(tgl_op op, tgl_dtype dt, const std::vector<double>& x, const void* params = nullptr) {
    const Shape s{int64_t(x.size())};
    return run_int(op, dt, {input_values(dt, s, x)}, s, params);
}

::testing::AssertionResult same(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want,
                                const std::string& what) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::Exact, what + " " + dtype_name(dt));
}

#define EXPECT_INT2(OP, DT, A, B, WANT) EXPECT_TRUE(same(DT, int2(OP, DT, A, B), WANT, #OP))
#define EXPECT_INT1(OP, DT, X, WANT) EXPECT_TRUE(same(DT, int1(OP, DT, X), WANT, #OP))

TEST_F(IntArith, AddSubMulWrapAroundI32) {
    const tgl_dtype dt = TGL_DTYPE_I32;
    EXPECT_INT2(TGL_OP_ADD, dt, (std::vector<double>{kIntMax, kIntMin, 5, 16777216, kIntMax}),
                (std::vector<double>{1, -1, -7, 1, kIntMax}), (std::vector<double>{kIntMin, kIntMax, -2, 16777217, -2}));
    EXPECT_INT2(TGL_OP_SUB, dt, (std::vector<double>{kIntMin, 0, kIntMax, -3}), (std::vector<double>{1, kIntMin, -1, 4}),
                (std::vector<double>{kIntMax, kIntMin, kIntMin, -7}));
    // 46341^2 = 2147488281 = 2^31 + 4633 wraps to -2147479015; 2^16 * 2^16 = 2^32 wraps to 0.
    EXPECT_INT2(TGL_OP_MUL, dt, (std::vector<double>{65536, kIntMax, 46341, -3, kIntMin, 16777217}),
                (std::vector<double>{65536, 2, 46341, 7, -1, 1}),
                (std::vector<double>{0, -2, -2147479015.0, -21, kIntMin, 16777217}));
}

TEST_F(IntArith, AddSubMulWrapAroundI8U8) {
    EXPECT_INT2(TGL_OP_ADD, TGL_DTYPE_I8, (std::vector<double>{127, -128, 100}), (std::vector<double>{1, -1, 27}),
                (std::vector<double>{-128, 127, 127}));
    EXPECT_INT2(TGL_OP_SUB, TGL_DTYPE_I8, (std::vector<double>{-128, 0}), (std::vector<double>{1, -128}),
                (std::vector<double>{127, -128}));
    EXPECT_INT2(TGL_OP_MUL, TGL_DTYPE_I8, (std::vector<double>{16, -128, 11}), (std::vector<double>{16, -1, 12}),
                (std::vector<double>{0, -128, -124}));  // 132 - 256
    EXPECT_INT2(TGL_OP_ADD, TGL_DTYPE_U8, (std::vector<double>{255, 200}), (std::vector<double>{1, 100}),
                (std::vector<double>{0, 44}));
    EXPECT_INT2(TGL_OP_SUB, TGL_DTYPE_U8, (std::vector<double>{0, 3}), (std::vector<double>{1, 200}),
                (std::vector<double>{255, 59}));
    EXPECT_INT2(TGL_OP_MUL, TGL_DTYPE_U8, (std::vector<double>{16, 255}), (std::vector<double>{16, 255}),
                (std::vector<double>{0, 1}));
}

// C (div, fmod: toward zero, the sign of a) and Python (floor_divide, remainder: toward -inf, the
// sign of b), with every sign combination, INT_MIN / -1 and division by zero.
TEST_F(IntArith, DivisionAndRemainderSignsI32) {
    const tgl_dtype dt = TGL_DTYPE_I32;
    const std::vector<double> a = {7, -7, 7, -7, kIntMin, kIntMin, 5, -5, 0, kIntMin, 6, -1};
    const std::vector<double> b = {2, 2, -2, -2, -1, kIntMax, 0, 0, 0, 1, 3, kIntMax};
    EXPECT_INT2(TGL_OP_DIV, dt, a, b, (std::vector<double>{3, -3, -3, 3, kIntMin, -1, 0, 0, 0, kIntMin, 2, 0}));
    EXPECT_INT2(TGL_OP_FLOOR_DIVIDE, dt, a, b, (std::vector<double>{3, -4, -4, 3, kIntMin, -2, 0, 0, 0, kIntMin, 2, -1}));
    // -2^31 = -1 * (2^31 - 1) - 1 (C) = -2 * (2^31 - 1) + 2147483646 (Python).
    EXPECT_INT2(TGL_OP_FMOD, dt, a, b, (std::vector<double>{1, -1, 1, -1, 0, -1, 0, 0, 0, 0, 0, -1}));
    EXPECT_INT2(TGL_OP_REMAINDER, dt, a, b, (std::vector<double>{1, 1, -1, -1, 0, 2147483646, 0, 0, 0, 0, 0, 2147483646}));
}

TEST_F(IntArith, DivisionAndRemainderI8U8) {
    const std::vector<double> a = {-128, -7, 7, 100, -128}, b = {-1, 2, -2, 0, 3};
    EXPECT_INT2(TGL_OP_DIV, TGL_DTYPE_I8, a, b, (std::vector<double>{-128, -3, -3, 0, -42}));
    EXPECT_INT2(TGL_OP_FLOOR_DIVIDE, TGL_DTYPE_I8, a, b, (std::vector<double>{-128, -4, -4, 0, -43}));
    EXPECT_INT2(TGL_OP_FMOD, TGL_DTYPE_I8, a, b, (std::vector<double>{0, -1, 1, 0, -2}));
    EXPECT_INT2(TGL_OP_REMAINDER, TGL_DTYPE_I8, a, b, (std::vector<double>{0, 1, -1, 0, 1}));
    // u8: 200 and 255 are positive (not -56, -1).
    const std::vector<double> ua = {200, 255, 7, 9}, ub = {7, 2, 0, 255};
    EXPECT_INT2(TGL_OP_DIV, TGL_DTYPE_U8, ua, ub, (std::vector<double>{28, 127, 0, 0}));
    EXPECT_INT2(TGL_OP_FLOOR_DIVIDE, TGL_DTYPE_U8, ua, ub, (std::vector<double>{28, 127, 0, 0}));
    EXPECT_INT2(TGL_OP_FMOD, TGL_DTYPE_U8, ua, ub, (std::vector<double>{4, 1, 0, 9}));
    EXPECT_INT2(TGL_OP_REMAINDER, TGL_DTYPE_U8, ua, ub, (std::vector<double>{4, 1, 0, 9}));
}

TEST_F(IntArith, PowWrapsAndDefinesNegativeExponents) {
    // 3^20 = 3486784401 = 2^32 - 808182895; 2^31 wraps to INT_MIN, 2^32 to 0; b < 0: trunc(1 / a^-b).
    EXPECT_INT2(TGL_OP_POW, TGL_DTYPE_I32, (std::vector<double>{2, 2, 2, 3, -2, 0, 5, 1, -1, -1, 2, 0, -1, 46341}),
                (std::vector<double>{10, 31, 32, 20, 3, 0, 0, -3, -3, -2, -1, -1, kIntMax, 2}),
                (std::vector<double>{1024, kIntMin, 0, -808182895.0, -8, 1, 1, 1, -1, 1, 0, 0, -1, -2147479015.0}));
    EXPECT_INT2(TGL_OP_POW, TGL_DTYPE_I8, (std::vector<double>{2, 3, -2, 2}), (std::vector<double>{7, 5, 7, -2}),
                (std::vector<double>{-128, -13, -128, 0}));  // 243 - 256
    EXPECT_INT2(TGL_OP_POW, TGL_DTYPE_U8, (std::vector<double>{2, 3, 255}), (std::vector<double>{8, 5, 2}),
                (std::vector<double>{0, 243, 1}));  // 255^2 = 65025 = 254 * 256 + 1
}

TEST_F(IntArith, MaximumMinimumInIntegerOrder) {
    // 16777217 and 16777216 are one f32; u8 200 is above 100 (not -56).
    EXPECT_INT2(TGL_OP_MAXIMUM, TGL_DTYPE_I32, (std::vector<double>{16777217, kIntMin, -1}),
                (std::vector<double>{16777216, kIntMax, -2}), (std::vector<double>{16777217, kIntMax, -1}));
    EXPECT_INT2(TGL_OP_MINIMUM, TGL_DTYPE_I32, (std::vector<double>{16777217, kIntMin, -1}),
                (std::vector<double>{16777216, kIntMax, -2}), (std::vector<double>{16777216, kIntMin, -2}));
    EXPECT_INT2(TGL_OP_MAXIMUM, TGL_DTYPE_U8, (std::vector<double>{200, 0}), (std::vector<double>{100, 255}),
                (std::vector<double>{200, 255}));
    EXPECT_INT2(TGL_OP_MINIMUM, TGL_DTYPE_I8, (std::vector<double>{-128, 127}), (std::vector<double>{127, -1}),
                (std::vector<double>{-128, -1}));
}

TEST_F(IntArith, AbsNegClamp) {
    EXPECT_INT1(TGL_OP_ABS, TGL_DTYPE_I32, (std::vector<double>{kIntMin, -5, kIntMax, 0}), (std::vector<double>{kIntMin, 5, kIntMax, 0}));
    EXPECT_INT1(TGL_OP_NEG, TGL_DTYPE_I32, (std::vector<double>{kIntMin, -5, kIntMax, 0}), (std::vector<double>{kIntMin, 5, -kIntMax, 0}));
    EXPECT_INT1(TGL_OP_ABS, TGL_DTYPE_I8, (std::vector<double>{-128, -5, 127}), (std::vector<double>{-128, 5, 127}));
    EXPECT_INT1(TGL_OP_NEG, TGL_DTYPE_I8, (std::vector<double>{-128, -5, 127}), (std::vector<double>{-128, 5, -127}));
    EXPECT_INT1(TGL_OP_ABS, TGL_DTYPE_U8, (std::vector<double>{200, 0}), (std::vector<double>{200, 0}));
    EXPECT_INT1(TGL_OP_NEG, TGL_DTYPE_U8, (std::vector<double>{1, 0, 200}), (std::vector<double>{255, 0, 56}));
    auto clamp = [](tgl_dtype dt, float lo, float hi, const std::vector<double>& x) {
        tgl_clamp_params p{sizeof(tgl_clamp_params), lo, hi, 0};
        return int1(TGL_OP_CLAMP, dt, x, &p);
    };
    const float inf = kInf;
    // Bounds rounded inward: [-2.5, 2.5] is [-2, 2] for integers.
    EXPECT_TRUE(same(TGL_DTYPE_I32, clamp(TGL_DTYPE_I32, -2.5f, 2.5f, {-3, -2, 0, 2, 3, kIntMin}), {-2, -2, 0, 2, 2, -2}, "clamp"));
    // f32 2^31 (the nearest f32 to INT_MAX) saturates to INT_MAX; -inf: no bound.
    EXPECT_TRUE(same(TGL_DTYPE_I32, clamp(TGL_DTYPE_I32, -inf, 2147483647.0f, {kIntMax, kIntMin, 7}), {kIntMax, kIntMin, 7}, "clamp"));
    EXPECT_TRUE(same(TGL_DTYPE_I32, clamp(TGL_DTYPE_I32, 3.0f, 1.0f, {0, 2, 5}), {1, 1, 1}, "clamp lo > hi"));
    EXPECT_TRUE(same(TGL_DTYPE_U8, clamp(TGL_DTYPE_U8, -5.0f, 300.0f, {0, 255, 17}), {0, 255, 17}, "clamp"));
    EXPECT_TRUE(same(TGL_DTYPE_I8, clamp(TGL_DTYPE_I8, -100.5f, inf, {-128, -100, 127}), {-100, -100, 127}, "clamp"));
}

TEST_F(IntArith, BroadcastAndStridedOperands) {
    // (2, 3) floor_divide (3,): the divisor row repeated.
    const tgl_dtype dt = TGL_DTYPE_I32;
    std::vector<double> y = run_int(TGL_OP_FLOOR_DIVIDE, dt,
                                    {input_values(dt, {2, 3}, {7, -7, 9, 0, kIntMin, -1}), input_values(dt, {3}, {2, -1, 0})},
                                    {2, 3});
    EXPECT_TRUE(compare(dt, y, {3, 7, 0, 0, kIntMin, 0}, Shape{2, 3}, 0.0, CompareMode::Exact, "floor_divide broadcast"));
}

TEST_F(IntArith, FloorDivideFloatsAsPython) {
    // Python: 7.0 // 2 = 3, -7.0 // 2 = -4, 1 // 0.1 = 9 (0.1 is above 1/10), -0.0 // 1 = -0,
    // 0.0 // -1 = -0, -5.5 // inf = -1, 5.5 // inf = 0; b == 0: a / b (as PyTorch).
    const std::vector<double> a = {7, -7, 7, -7, 1, -0.0, 0.0, -5.5, 5.5, 1, -1, 0, 0.5};
    const std::vector<double> b = {2, 2, -2, -2, 0.1f, 1, -1, kInf, kInf, 0, 0, 0, 1};
    const std::vector<double> want = {3, -4, -4, 3, 9, -0.0, -0.0, -1, 0, kInf, -kInf, kNaN, 0};
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        const Shape s{int64_t(a.size())};
        std::vector<double> got = run_int(TGL_OP_FLOOR_DIVIDE, dt, {input_values(dt, s, a), input_values(dt, s, b)}, s);
        if (dt == TGL_DTYPE_F16) got[4] = 9;  // f16's 0.1 is 0.0999755859375: 1 // it = 10
        EXPECT_TRUE(compare(dt, got, want, s, 0.0, CompareMode::ExactBits, "floor_divide " + dtype_name(dt)));
    }
}

TEST_F(IntArith, SumProdMaxMinI32) {
    const tgl_dtype dt = TGL_DTYPE_I32;
    auto red = [&](tgl_op op, const Shape& xs, const std::vector<double>& x, std::vector<int> axes, const Shape& ys) {
        tgl_reduce_params p = reduce_params(std::move(axes), false);
        return run_int(op, dt, {x.empty() ? empty_input(dt, xs) : input_values(dt, xs, x)}, ys, &p);
    };
    EXPECT_TRUE(same(dt, red(TGL_OP_SUM, {3}, {kIntMax, 1, 5}, {0}, {}), {kIntMin + 5}, "sum"));
    EXPECT_TRUE(same(dt, red(TGL_OP_PROD, {3}, {65536, 65536, 3}, {0}, {}), {0}, "prod"));
    EXPECT_TRUE(same(dt, red(TGL_OP_PROD, {3}, {3, -2, 7}, {0}, {}), {-42}, "prod"));
    EXPECT_TRUE(same(dt, red(TGL_OP_MAX, {3}, {16777217, 16777216, -5}, {0}, {}), {16777217}, "max"));
    EXPECT_TRUE(same(dt, red(TGL_OP_MIN, {3}, {16777217, kIntMin, -5}, {0}, {}), {kIntMin}, "min"));
    EXPECT_TRUE(same(dt, red(TGL_OP_SUM, {0}, {}, {0}, {}), {0}, "sum of nothing"));
    EXPECT_TRUE(same(dt, red(TGL_OP_PROD, {0}, {}, {0}, {}), {1}, "prod of nothing"));
    // Long rows (split workgroup reductions) and columns: 10000 * (2^31 - 1) = -10000 mod 2^32.
    const int64_t n = 10000;
    EXPECT_TRUE(same(dt, red(TGL_OP_SUM, {n}, std::vector<double>(size_t(n), kIntMax), {0}, {}), {-10000}, "long sum"));
    EXPECT_TRUE(same(dt, red(TGL_OP_PROD, {n}, std::vector<double>(size_t(n), -1), {0}, {}), {1}, "long prod"));
    std::vector<double> cols;  // (n, 3): INT_MAX, 1, -1 in every row
    for (int64_t i = 0; i < n; ++i) cols.insert(cols.end(), {kIntMax, 1, i == 4321 ? kIntMin : -1.0});
    EXPECT_TRUE(same(dt, red(TGL_OP_SUM, {n, 3}, cols, {0}, {3}), {-10000, 10000, kIntMax - 9998}, "column sums"));
    EXPECT_TRUE(same(dt, red(TGL_OP_MIN, {n, 3}, cols, {0}, {3}), {kIntMax, 1, kIntMin}, "column min"));
    EXPECT_TRUE(same(dt, red(TGL_OP_MAX, {n, 3}, cols, {0}, {3}), {kIntMax, 1, -1}, "column max"));
}

TEST_F(IntArith, CumsumCumprodI32) {
    const tgl_dtype dt = TGL_DTYPE_I32;
    auto scan = [&](tgl_op op, const std::vector<double>& x, bool exclusive, bool reverse) {
        tgl_scan_params p{};
        p.struct_size = sizeof p;
        p.axis = 0;
        p.exclusive = exclusive ? 1 : 0;
        p.reverse = reverse ? 1 : 0;
        return int1(op, dt, x, &p);
    };
    EXPECT_TRUE(same(dt, scan(TGL_OP_CUMSUM, {kIntMax, 1, 1}, false, false), {kIntMax, kIntMin, kIntMin + 1}, "cumsum"));
    EXPECT_TRUE(same(dt, scan(TGL_OP_CUMSUM, {kIntMax, 1, 1}, true, false), {0, kIntMax, kIntMin}, "exclusive cumsum"));
    EXPECT_TRUE(same(dt, scan(TGL_OP_CUMSUM, {1, 1, kIntMax}, false, true), {kIntMin + 1, kIntMin, kIntMax}, "reverse cumsum"));
    // 2^k: 2^31 wraps to INT_MIN, 2^32 and beyond to 0.
    std::vector<double> twos(34, 2), powers;
    for (int k = 1; k <= 34; ++k) powers.push_back(k < 31 ? double(int64_t(1) << k) : (k == 31 ? kIntMin : 0));
    EXPECT_TRUE(same(dt, scan(TGL_OP_CUMPROD, twos, false, false), powers, "cumprod"));
    // A long row (block scans): (k + 1) * (2^31 - 1) mod 2^32.
    const int n = 3000;
    std::vector<double> big(n, kIntMax), want;
    for (int k = 0; k < n; ++k) want.push_back(double(int32_t(uint32_t(k + 1) * 2147483647u)));
    EXPECT_TRUE(same(dt, scan(TGL_OP_CUMSUM, big, false, false), want, "long cumsum"));
}

TEST_F(IntArith, ArgmaxArgminI8U8) {
    auto arg = [](tgl_op op, tgl_dtype dt, const std::vector<double>& x) {
        tgl_arg_reduce_params p{};
        p.struct_size = sizeof p;
        p.axis = 0;
        return run_op_values(dev(), op, &p, {input_values(dt, {int64_t(x.size())}, x)}, {output_of(TGL_DTYPE_I32, {})})[0];
    };
    EXPECT_TRUE(same(TGL_DTYPE_I32, arg(TGL_OP_ARGMAX, TGL_DTYPE_U8, {3, 200, 200, 7}), {1}, "argmax u8"));
    EXPECT_TRUE(same(TGL_DTYPE_I32, arg(TGL_OP_ARGMIN, TGL_DTYPE_U8, {3, 200, 0, 0}), {2}, "argmin u8"));
    EXPECT_TRUE(same(TGL_DTYPE_I32, arg(TGL_OP_ARGMAX, TGL_DTYPE_I8, {3, -100, 127, 127}), {2}, "argmax i8"));
    EXPECT_TRUE(same(TGL_DTYPE_I32, arg(TGL_OP_ARGMIN, TGL_DTYPE_I8, {3, -100, 127, -100}), {1}, "argmin i8"));
}

TEST_F(IntArith, BadInputIsRejected) {
    const Shape s{3};
    const std::vector<double> v = {1, 2, 3};
    // Mixed dtypes: a i32 with b f32, and an i32 sum into an f32 y.
    expect_rejected(TGL_OP_ADD, nullptr, {input_values(TGL_DTYPE_I32, s, v), input_values(TGL_DTYPE_F32, s, v)},
                    {output_of(TGL_DTYPE_I32, s)}, TGL_ERROR_DTYPE_MISMATCH, {"add", "b"});
    expect_rejected(TGL_OP_FLOOR_DIVIDE, nullptr, {input_values(TGL_DTYPE_I8, s, v), input_values(TGL_DTYPE_I8, s, v)},
                    {output_of(TGL_DTYPE_U8, s)}, TGL_ERROR_DTYPE_MISMATCH, {"floor_divide", "y"});
    // Integer dtypes an op does not take: atan2 and mean of i32, sum of i8, bool arithmetic.
    expect_rejected(TGL_OP_ATAN2, nullptr, {input_values(TGL_DTYPE_I32, s, v), input_values(TGL_DTYPE_I32, s, v)},
                    {output_of(TGL_DTYPE_I32, s)}, TGL_ERROR_DTYPE_MISMATCH, {"atan2", "i32"});
    expect_rejected(TGL_OP_ADD, nullptr, {input_values(TGL_DTYPE_BOOL, s, {1, 0, 1}), input_values(TGL_DTYPE_BOOL, s, {1, 0, 1})},
                    {output_of(TGL_DTYPE_BOOL, s)}, TGL_ERROR_DTYPE_MISMATCH, {"add", "bool"});
    tgl_reduce_params p = reduce_params({0}, false);
    expect_rejected(TGL_OP_MEAN, &p, {input_values(TGL_DTYPE_I32, s, v)}, {output_of(TGL_DTYPE_I32, {})},
                    TGL_ERROR_DTYPE_MISMATCH, {"mean", "i32"});
    expect_rejected(TGL_OP_SUM, &p, {input_values(TGL_DTYPE_I8, s, v)}, {output_of(TGL_DTYPE_I8, {})},
                    TGL_ERROR_DTYPE_MISMATCH, {"sum", "i8"});
    // An integer op still checks its shapes.
    expect_rejected(TGL_OP_REMAINDER, nullptr, {input_values(TGL_DTYPE_I32, s, v), input_values(TGL_DTYPE_I32, {2}, {1, 2})},
                    {output_of(TGL_DTYPE_I32, s)}, TGL_ERROR_SHAPE_MISMATCH, {"remainder"});
}

}  // namespace
}  // namespace conf
