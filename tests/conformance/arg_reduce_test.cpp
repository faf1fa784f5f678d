// The arg-reduce family (argmax, argmin): known answers on small hand-checked cases with ties, NaN,
// inf, keepdims and negative axes in every dtype of the ops' catalogue rules, and bad params.
#include "reductions.h"

namespace conf {
namespace {

using ReduceMore = ConformanceTest;

TEST_F(ReduceMore, ArgmaxArgmin) {
    for (tgl_dtype xt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_I32}) {
        SCOPED_TRACE("x " + dtype_name(xt));
        // [[1, 5, 5], [7, -2, 7]]: ties go to the first index.
        std::vector<double> x = {1, 5, 5, 7, -2, 7};
        auto p = arg_params(1, false);
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {2, 3}, x, I32, {2}), {1, 0}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {2, 3}, x, I32, {2}), {0, 1}));
        p = arg_params(-2, true);
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {2, 3}, x, I32, {1, 3}), {1, 0, 1}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {2, 3}, x, I32, {1, 3}), {0, 1, 0}));
        // NULL params: the last axis, no keepdims.
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, nullptr, xt, {2, 3}, x, I32, {2}), {1, 0}));
        // A single element along the axis, and a scalar.
        p = arg_params(0, false);
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {1, 3}, {4, 5, 6}, I32, {3}), {0, 0, 0}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {}, {3}, I32, {}), {0}));
    }
    // NaN beats every number: the first NaN wins; +-inf are ordinary extremes; -0 == +0.
    std::vector<double> s = {1, dNaN, 3, dNaN, dInf, -dInf, 2, 2, -0.0, 0.0, -1, -1};
    auto p = arg_params(1, false);
    for (tgl_dtype xt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {4, 3}, s, I32, {4}), {1, 0, 0, 0}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {4, 3}, s, I32, {4}), {1, 0, 2, 1}));
    }
    // i32 beyond 2^24 compares exactly (no detour through f32).
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, I32, {1, 3}, {16777216, 16777217, 16777216}, I32, {1}), {1}));
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, I32, {1, 3}, {-16777216, -16777217, 2147483647}, I32, {1}), {1}));
    // A long row with the maximum near the end and a tie after it.
    std::vector<double> longrow(5000, 0.0);
    longrow[4321] = 9;
    longrow[4999] = 9;
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, nullptr, F32, {5000}, longrow, I32, {}), {4321}));
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, nullptr, F32, {5000}, longrow, I32, {}), {0}));
}

// ----- bad input ----------------------------------------------------------------------------------

TEST_F(ReduceMore, ArgBadParams) {
    auto a = arg_params(2, false);
    expect_reduction_rejected(TGL_OP_ARGMAX, &a, {2}, I32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "2"});
    a = arg_params(-3, false);
    expect_reduction_rejected(TGL_OP_ARGMIN, &a, {2}, I32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "-3"});
    a = arg_params(1, false);
    expect_reduction_rejected(TGL_OP_ARGMAX, &a, {2, 0}, I32, TGL_ERROR_INVALID_ARGUMENT, {"argmax", "empty"}, {2, 0});
    expect_reduction_rejected(TGL_OP_ARGMAX, &a, {2}, F32, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)", "i32"});
    expect_reduction_rejected(TGL_OP_ARGMAX, &a, {3}, I32, TGL_ERROR_SHAPE_MISMATCH, {"(3)", "(2)"});
    a.reserved = 1;
    expect_reduction_rejected(TGL_OP_ARGMAX, &a, {2}, I32, TGL_ERROR_INVALID_ARGUMENT, {"reserved"});
    a = arg_params(1, false);
    a.struct_size = 12;
    expect_reduction_rejected(TGL_OP_ARGMAX, &a, {2}, I32, TGL_ERROR_PARAMS_SIZE, {"struct_size", "12"});
}

}  // namespace
}  // namespace conf
