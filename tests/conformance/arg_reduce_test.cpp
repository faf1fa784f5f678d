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

// select_last_index (ABI 1.3): the last of tied extremes, the last NaN; the 1.0-sized struct (16
// bytes, without the field) keeps the first index.
TEST_F(ReduceMore, ArgmaxArgminSelectLastIndex) {
    for (tgl_dtype xt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_I32}) {
        SCOPED_TRACE("x " + dtype_name(xt));
        // [[1, 5, 5], [7, -2, 7]] along axis 1; [[1, 5, 5], [7, -2, 7]] along axis 0: (7, 5, 7) and (1, -2, 5).
        std::vector<double> x = {1, 5, 5, 7, -2, 7};
        auto p = arg_params(1, false);
        p.select_last_index = 1;
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {2, 3}, x, I32, {2}), {2, 2}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {2, 3}, x, I32, {2}), {0, 1}));
        p = arg_params(0, true);
        p.select_last_index = 1;
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {2, 3}, {3, 3, 5, 3, 3, 4}, I32, {1, 3}), {1, 1, 0}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {2, 3}, {3, 3, 5, 3, 3, 4}, I32, {1, 3}), {1, 1, 1}));
        // The published 1.0 size: no select_last_index field, so the first index.
        p.struct_size = TGL_ARG_REDUCE_PARAMS_SIZE_V1_0;
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {2, 3}, {3, 3, 5, 3, 3, 4}, I32, {1, 3}), {0, 0, 0}));
        // A scalar: index 0.
        p = arg_params(0, false);
        p.select_last_index = 1;
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {}, {3}, I32, {}), {0}));
    }
    // NaN beats every number, the LAST NaN wins; -0 and +0 tie (the last of them); +-inf ordinary.
    std::vector<double> s = {dNaN, 1, dNaN, dInf, 2, dInf, -0.0, 0.0, -1, 0.0, -0.0, 5};
    auto p = arg_params(1, false);
    p.select_last_index = 1;
    for (tgl_dtype xt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        SCOPED_TRACE("x " + dtype_name(xt));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, xt, {4, 3}, s, I32, {4}), {2, 2, 1, 2}));
        EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, xt, {4, 3}, s, I32, {4}), {2, 1, 2, 1}));
    }
    // A long row (several workgroup lanes): the maximum at 4321 and 4999, the minimum everywhere else.
    std::vector<double> longrow(5000, 0.0);
    longrow[4321] = 9;
    longrow[4999] = 9;
    p = arg_params(0, false);
    p.select_last_index = 1;
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMAX, &p, F32, {5000}, longrow, I32, {}), {4999}));
    EXPECT_TRUE(same(I32, run_dt(TGL_OP_ARGMIN, &p, F32, {5000}, longrow, I32, {}), {4998}));
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
    expect_reduction_rejected(TGL_OP_ARGMAX, &a, {2}, I32, TGL_ERROR_PARAMS_SIZE, {"struct_size", "12", "16 or 20"});
    a = arg_params(1, false);
    a.select_last_index = 2;
    expect_reduction_rejected(TGL_OP_ARGMIN, &a, {2}, I32, TGL_ERROR_INVALID_ARGUMENT, {"select_last_index", "2"});
}

}  // namespace
}  // namespace conf
