// add_n (ops.h; ABI 1.3): known answers written by hand for n = 1, 2, 3 and 8 inputs with
// broadcasting; the order of the sum (left to right in f32); f16 rounded once (not after each add);
// integer wrap-around; y in place over an input; an empty y; and bad input (no inputs, mixed
// dtypes, shapes that do not broadcast, a y of the wrong shape, bool).
#include "common.h"

#include <cstdint>
#include <string>
#include <vector>

namespace conf {
namespace {

using AddN = ConformanceTest;
using Values = std::vector<double>;

// add_n of contiguous inputs of one dtype into a contiguous y of shape ys.
std::vector<double> add_n(tgl_dtype dt, const std::vector<Shape>& shapes, const std::vector<Values>& values, const Shape& ys) {
    std::vector<InputArg> ins;
    for (size_t k = 0; k < shapes.size(); ++k)
        ins.push_back(values[k].empty() ? empty_input(dt, shapes[k]) : input_values(dt, shapes[k], values[k]));
    return run_op_values(dev(), TGL_OP_ADD_N, nullptr, ins, {output_of(dt, ys)})[0];
}

::testing::AssertionResult same(tgl_dtype dt, const std::vector<double>& got, const Values& want, const std::string& what) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::Exact, what + " " + dtype_name(dt));
}

TEST_F(AddN, OneTwoThreeInputs) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        // n = 1: a copy (y has x0's shape: the broadcast of one input).
        EXPECT_TRUE(same(dt, add_n(dt, {{3}}, {{1.5, -2, 0.25}}, {3}), {1.5, -2, 0.25}, "n=1"));
        // n = 2: add.
        EXPECT_TRUE(same(dt, add_n(dt, {{2, 3}, {3}}, {{1, 2, 3, 4, 5, 6}, {10, 20, 30}}, {2, 3}),
                         {11, 22, 33, 14, 25, 36}, "n=2"));
        // n = 3: (2, 1) + (1, 3) + () -> (2, 3).
        EXPECT_TRUE(same(dt, add_n(dt, {{2, 1}, {1, 3}, {}}, {{1, 2}, {10, 20, 30}, {0.5}}, {2, 3}),
                         {11.5, 21.5, 31.5, 12.5, 22.5, 32.5}, "n=3"));
    }
}

TEST_F(AddN, EightInputsBroadcast) {
    // Shapes (2, 3), (3,), (2, 1), (), (1, 3), (2, 3), (1,), (1, 1) -> (2, 3); small integers: exact.
    const std::vector<Shape> shapes = {{2, 3}, {3}, {2, 1}, {}, {1, 3}, {2, 3}, {1}, {1, 1}};
    const std::vector<Values> values = {{1, 2, 3, 4, 5, 6}, {10, 20, 30}, {100, 200}, {1000},
                                        {-1, -2, -3}, {7, 7, 7, 8, 8, 8}, {-5}, {3}};
    Values want(6);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            want[size_t(i * 3 + j)] = values[0][size_t(i * 3 + j)] + values[1][size_t(j)] + values[2][size_t(i)] + 1000 +
                                      values[4][size_t(j)] + values[5][size_t(i * 3 + j)] - 5 + 3;
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_I32})
        EXPECT_TRUE(same(dt, add_n(dt, shapes, values, {2, 3}), want, "n=8"));
}

// Left to right in f32: (1e8 + 1) - 1e8 = 0 in f32 (1e8 + 1 rounds to 1e8), where an exact sum is 1;
// (1 - 1e8) + 1e8 = 0 likewise, and 1e8 - 1e8 + 1 = 1.
TEST_F(AddN, SumsLeftToRightInF32) {
    const Shape s{3};
    EXPECT_TRUE(same(TGL_DTYPE_F32, add_n(TGL_DTYPE_F32, {s, s, s}, {{1e8, 1, 1e8}, {1, -1e8, -1e8}, {-1e8, 1e8, 1}}, s),
                     {0, 0, 1}, "order"));
}

// f16: summed in f32, rounded once at the store. 2048 + 1 + 1: chained f16 adds give 2048 (2049
// is a tie that rounds to even, twice), the f32 sum 2050 is an f16. 60000 + 60000 - 60000: chained
// f16 adds overflow to inf, the f32 sum is 60000. 0.1 + 0.2 + 0.3 (as f16): one rounding of the
// exact f32 sum of the three f16 values (chained f16 adds give 0.599609375).
TEST_F(AddN, F16RoundsOnce) {
    const Shape s{3};
    const double a = 0.0999755859375, b = 0.199951171875, c = 0.300048828125;  // f16(0.1), f16(0.2), f16(0.3)
    // a + b + c = 0.5999755859375 exactly (in f32); the nearest f16 is 0.60009765625 (spacing 2^-11
    // at [0.5, 1): 0.599609375 and 0.60009765625 lie either side, the latter nearer).
    EXPECT_TRUE(same(TGL_DTYPE_F16, add_n(TGL_DTYPE_F16, {s, s, s}, {{2048, 60000, a}, {1, 60000, b}, {1, -60000, c}}, s),
                     {2050, 60000, 0.60009765625}, "rounded once"));
}

TEST_F(AddN, IntegersWrapAround) {
    const Shape s{3};
    const double kIntMax = 2147483647.0, kIntMin = -2147483648.0;
    EXPECT_TRUE(same(TGL_DTYPE_I32, add_n(TGL_DTYPE_I32, {s, s, s}, {{kIntMax, kIntMin, 16777216}, {1, -1, 1}, {1, 5, 0}}, s),
                     {kIntMin + 1, kIntMin + 4, 16777217}, "wrap"));
    EXPECT_TRUE(same(TGL_DTYPE_U8, add_n(TGL_DTYPE_U8, {s, s, s}, {{200, 0, 255}, {100, 0, 255}, {10, 1, 255}}, s),
                     {54, 1, 253}, "wrap"));
    EXPECT_TRUE(same(TGL_DTYPE_I8, add_n(TGL_DTYPE_I8, {s, s, s}, {{100, -128, 127}, {100, -1, 1}, {-100, 0, 0}}, s),
                     {100, 127, -128}, "wrap"));
}

// y in place over an input: over x0 and over x2 (read after the first partial sum).
TEST_F(AddN, InPlace) {
    Device& d = dev();
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_I32}) {
        for (int over : {0, 2}) {
            DeviceTensor x0(d, contiguous({4}), dt), x1(d, contiguous({4}), dt), x2(d, contiguous({4}), dt);
            x0.set_logical({1, 2, 3, 4});
            x1.set_logical({10, 20, 30, 40});
            x2.set_logical({100, 200, 300, 400});
            DeviceTensor* y = over == 0 ? &x0 : &x2;
            d.run_ok(TGL_OP_ADD_N, nullptr, {x0.desc(), x1.desc(), x2.desc()}, {y->desc()});
            EXPECT_TRUE(same(dt, y->read_logical(), {111, 222, 333, 444}, "in place over x" + std::to_string(over)));
        }
    }
}

TEST_F(AddN, EmptyOutput) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        EXPECT_TRUE(add_n(dt, {{0, 3}, {3}, {1, 3}}, {{}, {1, 2, 3}, {4, 5, 6}}, {0, 3}).empty());
}

TEST_F(AddN, BadInputIsRejected) {
    const Shape s{3};
    const Values v = {1, 2, 3};
    expect_rejected(TGL_OP_ADD_N, nullptr, {}, {output_of(F32, s)}, TGL_ERROR_INVALID_ARGUMENT, {"add_n", "1 to 8 inputs"});
    expect_rejected(TGL_OP_ADD_N, nullptr, {input_values(F32, s, v), input_values(F32, s, v), input_values(TGL_DTYPE_F16, s, v)},
                    {output_of(F32, s)}, TGL_ERROR_DTYPE_MISMATCH, {"add_n", "x2", "f16"});
    expect_rejected(TGL_OP_ADD_N, nullptr, {input_values(F32, s, v), input_values(F32, s, v)}, {output_of(TGL_DTYPE_F16, s)},
                    TGL_ERROR_DTYPE_MISMATCH, {"add_n", "y"});
    expect_rejected(TGL_OP_ADD_N, nullptr, {input_values(TGL_DTYPE_BOOL, s, {1, 0, 1})}, {output_of(TGL_DTYPE_BOOL, s)},
                    TGL_ERROR_DTYPE_MISMATCH, {"add_n", "bool"});
    expect_rejected(TGL_OP_ADD_N, nullptr, {input_values(F32, s, v), input_values(F32, s, v), input_values(F32, {2}, {1, 2})},
                    {output_of(F32, s)}, TGL_ERROR_SHAPE_MISMATCH, {"add_n", "x2", "broadcast"});
    expect_rejected(TGL_OP_ADD_N, nullptr, {input_values(F32, s, v), input_values(F32, {2, 1}, {1, 2})}, {output_of(F32, s)},
                    TGL_ERROR_SHAPE_MISMATCH, {"add_n", "output y"});
    // One input does not stretch to a larger y (y is exactly the inputs' broadcast, as in add).
    expect_rejected(TGL_OP_ADD_N, nullptr, {input_values(F32, {1, 3}, v)}, {output_of(F32, {2, 3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"add_n", "output y"});
}

}  // namespace
}  // namespace conf
