#include "op_catalogue.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace tgl {

namespace {

constexpr uint32_t kF32 = TGL_DTYPE_BIT(TGL_DTYPE_F32);
constexpr uint32_t kI32 = TGL_DTYPE_BIT(TGL_DTYPE_I32);
// Index operands of the index family, grouped_linear and the losses: i32 or i64 (checked whole).
constexpr uint32_t kIndex = kI32 | TGL_DTYPE_BIT(TGL_DTYPE_I64);
constexpr uint32_t kBool = TGL_DTYPE_BIT(TGL_DTYPE_BOOL);
constexpr uint32_t kBf16 = TGL_DTYPE_BIT(TGL_DTYPE_BF16);
// Integer arithmetic (ABI 1.3): elementwise on i32, i8, u8; reductions and scans on i32.
constexpr uint32_t kInts = kI32 | TGL_DTYPE_BIT(TGL_DTYPE_I8) | TGL_DTYPE_BIT(TGL_DTYPE_U8);
constexpr uint32_t kCompared = kDtypesFloat | TGL_DTYPE_BIT(TGL_DTYPE_I32) | TGL_DTYPE_BIT(TGL_DTYPE_I8) |
                               TGL_DTYPE_BIT(TGL_DTYPE_U8) | TGL_DTYPE_BIT(TGL_DTYPE_BOOL);

// Operand rules: a mask, or "same dtype as slot k".
constexpr OperandRule any_of(uint32_t dtypes) { return {dtypes, -1}; }
constexpr OperandRule same_as(int slot) { return {0, slot}; }

// Float elementwise ops: every operand one float dtype.
#define UNARY_P(ID, NAME, PARAMS) \
    {ID, NAME, OpFamily::Unary, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)}, sizeof(PARAMS)}
#define UNARY(ID, NAME) UNARY_P(ID, NAME, tgl_unary_params)
#define BINARY_OF(ID, NAME, DTYPES)                                                              \
    {ID, NAME, OpFamily::Binary, 2, 1, {"a", "b", "y"}, {any_of(DTYPES), same_as(0), same_as(0)}, \
     sizeof(tgl_binary_params)}
#define BINARY(ID, NAME) BINARY_OF(ID, NAME, kDtypesFloat)
// Float and integer arithmetic (integers exact, wrapping: ops.h).
#define ARITH(ID, NAME) BINARY_OF(ID, NAME, kDtypesFloat | kInts)
#define UNARY_ARITH(ID, NAME, PARAMS) \
    {ID, NAME, OpFamily::Unary, 1, 1, {"x", "y"}, {any_of(kDtypesFloat | kInts), same_as(0)}, sizeof(PARAMS)}
// a and b of one dtype from `in`, y a mask (bool or u8).
#define PREDICATE(ID, NAME, IN)                                                                  \
    {ID, NAME, OpFamily::Binary, 2, 1, {"a", "b", "y"}, {any_of(IN), same_as(0), any_of(kDtypesMask)}, \
     sizeof(tgl_binary_params)}
#define REDUCE(ID, NAME) \
    {ID, NAME, OpFamily::Reduce, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)}, sizeof(tgl_reduce_params)}
#define REDUCE_P(ID, NAME, X, Y, PARAMS) \
    {ID, NAME, OpFamily::Reduce, 1, 1, {"x", "y"}, {any_of(X), Y}, sizeof(PARAMS)}
#define LAYOUT(ID, NAME, PARAMS) \
    {ID, NAME, OpFamily::Layout, 1, 1, {"x", "y"}, {any_of(kDtypesAll), same_as(0)}, sizeof(PARAMS)}
#define OPT(SLOT) (1u << (SLOT))

const OpInfo kOps[] = {
    UNARY_ARITH(TGL_OP_ABS, "abs", tgl_unary_params),
    UNARY_ARITH(TGL_OP_NEG, "neg", tgl_unary_params),
    UNARY(TGL_OP_RELU, "relu"),
    UNARY(TGL_OP_SIGMOID, "sigmoid"),
    UNARY(TGL_OP_TANH, "tanh"),
    UNARY(TGL_OP_EXP, "exp"),
    UNARY(TGL_OP_LOG, "log"),
    UNARY(TGL_OP_SQRT, "sqrt"),
    UNARY_P(TGL_OP_GELU, "gelu", tgl_gelu_params),
    UNARY(TGL_OP_SILU, "silu"),
    UNARY(TGL_OP_SIGN, "sign"),
    UNARY_P(TGL_OP_LEAKY_RELU, "leaky_relu", tgl_leaky_relu_params),
    UNARY_P(TGL_OP_ELU, "elu", tgl_elu_params),
    UNARY(TGL_OP_SELU, "selu"),
    UNARY_P(TGL_OP_CELU, "celu", tgl_elu_params),
    UNARY(TGL_OP_HARDSIGMOID, "hardsigmoid"),
    UNARY(TGL_OP_HARDSWISH, "hardswish"),
    UNARY_P(TGL_OP_SOFTPLUS, "softplus", tgl_softplus_params),
    UNARY(TGL_OP_MISH, "mish"),
    UNARY(TGL_OP_EXPM1, "expm1"),
    UNARY(TGL_OP_LOG1P, "log1p"),
    UNARY(TGL_OP_RSQRT, "rsqrt"),
    UNARY(TGL_OP_RECIPROCAL, "reciprocal"),
    UNARY(TGL_OP_SQUARE, "square"),
    UNARY(TGL_OP_SIN, "sin"),
    UNARY(TGL_OP_COS, "cos"),
    UNARY(TGL_OP_ERF, "erf"),
    UNARY(TGL_OP_FLOOR, "floor"),
    UNARY(TGL_OP_CEIL, "ceil"),
    UNARY(TGL_OP_ROUND, "round"),
    UNARY(TGL_OP_TRUNC, "trunc"),
    UNARY_ARITH(TGL_OP_CLAMP, "clamp", tgl_clamp_params),
    {TGL_OP_LOGICAL_NOT, "logical_not", OpFamily::Unary, 1, 1, {"x", "y"},
     {any_of(kDtypesWord), any_of(kDtypesMask)}, sizeof(tgl_unary_params)},
    UNARY(TGL_OP_ASIN, "asin"),
    UNARY(TGL_OP_ACOS, "acos"),
    UNARY(TGL_OP_ATAN, "atan"),
    UNARY(TGL_OP_SINH, "sinh"),
    UNARY(TGL_OP_COSH, "cosh"),
    UNARY(TGL_OP_TAN, "tan"),
    UNARY(TGL_OP_ASINH, "asinh"),
    UNARY(TGL_OP_ACOSH, "acosh"),
    UNARY(TGL_OP_ATANH, "atanh"),
    UNARY(TGL_OP_GELU_QUICK, "gelu_quick"),
    UNARY(TGL_OP_STEP, "step"),
    ARITH(TGL_OP_ADD, "add"),
    ARITH(TGL_OP_SUB, "sub"),
    ARITH(TGL_OP_MUL, "mul"),
    ARITH(TGL_OP_DIV, "div"),
    ARITH(TGL_OP_MAXIMUM, "maximum"),
    ARITH(TGL_OP_MINIMUM, "minimum"),
    ARITH(TGL_OP_POW, "pow"),
    ARITH(TGL_OP_FMOD, "fmod"),
    ARITH(TGL_OP_REMAINDER, "remainder"),
    BINARY(TGL_OP_ATAN2, "atan2"),
    PREDICATE(TGL_OP_LOGICAL_AND, "logical_and", kDtypesWord),
    PREDICATE(TGL_OP_LOGICAL_OR, "logical_or", kDtypesWord),
    PREDICATE(TGL_OP_LOGICAL_XOR, "logical_xor", kDtypesWord),
    PREDICATE(TGL_OP_EQ, "eq", kCompared),
    PREDICATE(TGL_OP_NE, "ne", kCompared),
    PREDICATE(TGL_OP_LT, "lt", kCompared),
    PREDICATE(TGL_OP_LE, "le", kCompared),
    PREDICATE(TGL_OP_GT, "gt", kCompared),
    PREDICATE(TGL_OP_GE, "ge", kCompared),
    ARITH(TGL_OP_FLOOR_DIVIDE, "floor_divide"),
    {TGL_OP_WHERE, "where", OpFamily::Ternary, 3, 1, {"cond", "a", "b", "y"},
     {any_of(kDtypesMask), any_of(kDtypesWord), same_as(1), same_as(1)}, sizeof(tgl_binary_params)},
    {TGL_OP_ADD_N, "add_n", OpFamily::Binary, 8, 1, {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "y"},
     {any_of(kDtypesFloat | kInts), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0),
      same_as(0)},
     sizeof(tgl_binary_params), 0, 1, 0},
    REDUCE_P(TGL_OP_SUM, "sum", kDtypesFloat | kI32, same_as(0), tgl_reduce_params),
    REDUCE(TGL_OP_MEAN, "mean"),
    REDUCE_P(TGL_OP_MAX, "max", kDtypesFloat | kI32, same_as(0), tgl_reduce_params),
    REDUCE_P(TGL_OP_MIN, "min", kDtypesFloat | kI32, same_as(0), tgl_reduce_params),
    REDUCE_P(TGL_OP_PROD, "prod", kDtypesFloat | kI32, same_as(0), tgl_reduce_params),
    {TGL_OP_ARGMAX, "argmax", OpFamily::ArgReduce, 1, 1, {"x", "y"},
     {any_of(kDtypesFloat | kInts), any_of(kI32)}, sizeof(tgl_arg_reduce_params)},
    {TGL_OP_ARGMIN, "argmin", OpFamily::ArgReduce, 1, 1, {"x", "y"},
     {any_of(kDtypesFloat | kInts), any_of(kI32)}, sizeof(tgl_arg_reduce_params)},
    REDUCE_P(TGL_OP_LOGSUMEXP, "logsumexp", kDtypesFloat, same_as(0), tgl_reduce_params),
    REDUCE_P(TGL_OP_VAR, "var", kDtypesFloat, same_as(0), tgl_var_params),
    REDUCE_P(TGL_OP_STD, "std", kDtypesFloat, same_as(0), tgl_var_params),
    REDUCE_P(TGL_OP_ANY, "any", kDtypesWord, any_of(kDtypesMask), tgl_reduce_params),
    REDUCE_P(TGL_OP_ALL, "all", kDtypesWord, any_of(kDtypesMask), tgl_reduce_params),
    REDUCE_P(TGL_OP_NORM, "norm", kDtypesFloat, same_as(0), tgl_vector_norm_params),
    {TGL_OP_CUMSUM, "cumsum", OpFamily::Scan, 1, 1, {"x", "y"}, {any_of(kDtypesFloat | kI32), same_as(0)}, sizeof(tgl_scan_params)},
    {TGL_OP_CUMPROD, "cumprod", OpFamily::Scan, 1, 1, {"x", "y"}, {any_of(kDtypesFloat | kI32), same_as(0)}, sizeof(tgl_scan_params)},
    {TGL_OP_MATMUL, "matmul", OpFamily::Matmul, 2, 1, {"A", "B", "C"}, {any_of(kDtypesFloat), same_as(0), same_as(0)},
     sizeof(tgl_matmul_params)},
    {TGL_OP_CAST, "cast", OpFamily::Unary, 1, 1, {"x", "y"}, {any_of(kDtypesAll), any_of(kDtypesAll)},
     sizeof(tgl_unary_params)},
    // Normalization: optional operands marked by OPT(slot mask).
    {TGL_OP_SOFTMAX, "softmax", OpFamily::Normalize, 2, 1, {"x", "mask", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0)}, sizeof(tgl_softmax_params), OPT(1)},
    {TGL_OP_LOG_SOFTMAX, "log_softmax", OpFamily::Normalize, 2, 1, {"x", "mask", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0)}, sizeof(tgl_softmax_params), OPT(1)},
    {TGL_OP_LAYER_NORM, "layer_norm", OpFamily::Normalize, 3, 1, {"x", "gamma", "beta", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_layer_norm_params), OPT(1) | OPT(2)},
    // rms_norm's beta: since ABI 1.3, so 2 or 3 inputs.
    {TGL_OP_RMS_NORM, "rms_norm", OpFamily::Normalize, 3, 1, {"x", "gamma", "beta", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_layer_norm_params), OPT(1) | OPT(2), 2},
    {TGL_OP_GROUP_NORM, "group_norm", OpFamily::Normalize, 3, 1, {"x", "gamma", "beta", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_group_norm_params), OPT(1) | OPT(2)},
    {TGL_OP_BATCH_NORM, "batch_norm", OpFamily::Normalize, 5, 1, {"x", "mean", "var", "gamma", "beta", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0)},
     sizeof(tgl_batch_norm_params), OPT(3) | OPT(4)},
    {TGL_OP_ADD_LAYER_NORM, "add_layer_norm", OpFamily::Normalize, 4, 2, {"x", "residual", "gamma", "beta", "y", "sum"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0)},
     sizeof(tgl_layer_norm_params), OPT(2) | OPT(3) | OPT(5)},
    {TGL_OP_ADD_RMS_NORM, "add_rms_norm", OpFamily::Normalize, 3, 2, {"x", "residual", "gamma", "y", "sum"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0), same_as(0)},
     sizeof(tgl_layer_norm_params), OPT(2) | OPT(4)},
    // Layout: bit-exact copies of any dtype.
    LAYOUT(TGL_OP_CONTIGUOUS, "contiguous", tgl_unary_params),
    {TGL_OP_CONCAT, "concat", OpFamily::Layout, 8, 1, {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "y"},
     {any_of(kDtypesAll), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0)},
     sizeof(tgl_axis_params), 0, 1, 0},
    LAYOUT(TGL_OP_PAD, "pad", tgl_pad_params),
    LAYOUT(TGL_OP_TILE, "tile", tgl_unary_params),
    LAYOUT(TGL_OP_ROLL, "roll", tgl_roll_params),
    LAYOUT(TGL_OP_PERMUTE, "permute", tgl_permute_params),
    LAYOUT(TGL_OP_RESHAPE, "reshape", tgl_unary_params),
    LAYOUT(TGL_OP_SLICE, "slice", tgl_slice_params),
    LAYOUT(TGL_OP_NARROW, "narrow", tgl_narrow_params),
    {TGL_OP_SPLIT, "split", OpFamily::Layout, 1, 4, {"x", "y0", "y1", "y2", "y3"},
     {any_of(kDtypesAll), same_as(0), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_axis_params), 0, 0, 1},
    {TGL_OP_STACK, "stack", OpFamily::Layout, 8, 1, {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "y"},
     {any_of(kDtypesAll), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0)},
     sizeof(tgl_axis_params), 0, 1, 0},
    LAYOUT(TGL_OP_EXPAND, "expand", tgl_unary_params),
    LAYOUT(TGL_OP_FLIP, "flip", tgl_flip_params),
    // Indexing: i32 or i64 indices.
    {TGL_OP_GATHER, "gather", OpFamily::Index, 2, 1, {"x", "index", "y"},
     {any_of(kDtypesWord), any_of(kIndex), same_as(0)}, sizeof(tgl_axis_params)},
    {TGL_OP_INDEX_SELECT, "index_select", OpFamily::Index, 2, 1, {"x", "index", "y"},
     {any_of(kDtypesWord), any_of(kIndex), same_as(0)}, sizeof(tgl_axis_params)},
    {TGL_OP_SCATTER, "scatter", OpFamily::Index, 3, 1, {"x", "index", "src", "y"},
     {any_of(kDtypesWord), any_of(kIndex), same_as(0), same_as(0)}, sizeof(tgl_axis_params)},
    {TGL_OP_SCATTER_ADD, "scatter_add", OpFamily::Index, 3, 1, {"x", "index", "src", "y"},
     {any_of(kDtypesFloat | kI32), any_of(kIndex), same_as(0), same_as(0)}, sizeof(tgl_axis_params)},
    {TGL_OP_ONE_HOT, "one_hot", OpFamily::Index, 1, 1, {"index", "y"}, {any_of(kIndex), any_of(kDtypesWord)},
     sizeof(tgl_unary_params)},
    {TGL_OP_SET_ROWS, "set_rows", OpFamily::Index, 3, 1, {"x", "index", "src", "y"},
     {any_of(kDtypesWord), any_of(kIndex), same_as(0), same_as(0)}, sizeof(tgl_axis_params)},
    // Selection: float and i32 keys.
    {TGL_OP_TOPK, "topk", OpFamily::Select, 1, 2, {"x", "values", "indices"},
     {any_of(kDtypesFloat | kI32), same_as(0), any_of(kIndex)}, sizeof(tgl_sort_params)},
    {TGL_OP_SORT, "sort", OpFamily::Select, 1, 2, {"x", "values", "indices"},
     {any_of(kDtypesFloat | kI32), same_as(0), any_of(kIndex)}, sizeof(tgl_sort_params)},
    {TGL_OP_ARGSORT, "argsort", OpFamily::Select, 1, 1, {"x", "indices"},
     {any_of(kDtypesFloat | kI32), any_of(kIndex)}, sizeof(tgl_sort_params)},
    // Generation.
    {TGL_OP_ARANGE, "arange", OpFamily::Generate, 0, 1, {"y"}, {any_of(kDtypesWord & ~kBool)}, sizeof(tgl_arange_params)},
    {TGL_OP_FULL, "full", OpFamily::Generate, 0, 1, {"y"}, {any_of(kDtypesWord)}, sizeof(tgl_full_params)},
    {TGL_OP_EYE, "eye", OpFamily::Generate, 0, 1, {"y"}, {any_of(kDtypesWord)}, sizeof(tgl_diagonal_params)},
    {TGL_OP_TRIL, "tril", OpFamily::Generate, 1, 1, {"x", "y"}, {any_of(kDtypesWord), same_as(0)}, sizeof(tgl_diagonal_params)},
    {TGL_OP_TRIU, "triu", OpFamily::Generate, 1, 1, {"x", "y"}, {any_of(kDtypesWord), same_as(0)}, sizeof(tgl_diagonal_params)},
    {TGL_OP_RANDOM_UNIFORM, "random_uniform", OpFamily::Generate, 0, 1, {"y"},
     {any_of(kDtypesFloat | kBf16)}, sizeof(tgl_random_params)},
    {TGL_OP_RANDOM_NORMAL, "random_normal", OpFamily::Generate, 0, 1, {"y"},
     {any_of(kDtypesFloat | kBf16)}, sizeof(tgl_random_params)},
    // [matmul family]
    {TGL_OP_LINEAR, "linear", OpFamily::Matmul, 3, 1, {"x", "W", "bias", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_linear_params), OPT(2)},
    {TGL_OP_LINEAR_QKV, "linear_qkv", OpFamily::Matmul, 3, 3, {"x", "W", "bias", "q", "k", "v"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_linear_params), OPT(2)},
    {TGL_OP_GROUPED_LINEAR, "grouped_linear", OpFamily::Matmul, 4, 1, {"x", "W", "index", "bias", "y"},
     {any_of(kDtypesFloat), same_as(0), any_of(kIndex), same_as(0), same_as(0)}, sizeof(tgl_linear_params), OPT(3)},
    {TGL_OP_LINEAR_INT8, "linear_int8", OpFamily::Matmul, 4, 1, {"x", "Wq", "scale", "bias", "y"},
     {any_of(kDtypesFloat), any_of(TGL_DTYPE_BIT(TGL_DTYPE_I8)), any_of(kDtypesFloat), same_as(0), same_as(0)},
     sizeof(tgl_linear_params), OPT(3)},
    {TGL_OP_LINEAR_INT4, "linear_int4", OpFamily::Matmul, 5, 1, {"x", "Wq", "scales", "zeros", "bias", "y"},
     {any_of(kDtypesFloat), any_of(TGL_DTYPE_BIT(TGL_DTYPE_U8)), any_of(kDtypesFloat), any_of(TGL_DTYPE_BIT(TGL_DTYPE_U8)),
      same_as(0), same_as(0)},
     sizeof(tgl_linear_int4_params), OPT(3) | OPT(4)},
    // [conv family]
    {TGL_OP_CONV1D, "conv1d", OpFamily::Conv, 3, 1, {"x", "w", "bias", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_conv_params), OPT(2)},
    {TGL_OP_CONV2D, "conv2d", OpFamily::Conv, 3, 1, {"x", "w", "bias", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_conv_params), OPT(2)},
    {TGL_OP_CONV3D, "conv3d", OpFamily::Conv, 3, 1, {"x", "w", "bias", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_conv_params), OPT(2)},
    {TGL_OP_CONV_TRANSPOSE1D, "conv_transpose1d", OpFamily::Conv, 3, 1, {"x", "w", "bias", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_conv_params), OPT(2)},
    {TGL_OP_CONV_TRANSPOSE2D, "conv_transpose2d", OpFamily::Conv, 3, 1, {"x", "w", "bias", "y"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_conv_params), OPT(2)},
    {TGL_OP_CONV2D_BACKWARD_INPUT, "conv2d_backward_input", OpFamily::Conv, 2, 1, {"dy", "w", "dx"},
     {any_of(kDtypesFloat), same_as(0), same_as(0)}, sizeof(tgl_conv_params)},
    {TGL_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", OpFamily::Conv, 2, 2, {"x", "dy", "dw", "db"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_conv_params), OPT(3)},
    // [pool family]
    {TGL_OP_MAX_POOL, "max_pool", OpFamily::Pool, 1, 2, {"x", "y", "indices"},
     {any_of(kDtypesFloat), same_as(0), any_of(kI32)}, sizeof(tgl_pool_params), OPT(2)},
    {TGL_OP_AVG_POOL, "avg_pool", OpFamily::Pool, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)}, sizeof(tgl_pool_params)},
    {TGL_OP_GLOBAL_MAX_POOL, "global_max_pool", OpFamily::Pool, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)},
     sizeof(tgl_unary_params)},
    {TGL_OP_GLOBAL_AVG_POOL, "global_avg_pool", OpFamily::Pool, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)},
     sizeof(tgl_unary_params)},
    {TGL_OP_ADAPTIVE_AVG_POOL, "adaptive_avg_pool", OpFamily::Pool, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)},
     sizeof(tgl_unary_params)},
    {TGL_OP_UPSAMPLE_NEAREST, "upsample_nearest", OpFamily::Pool, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)},
     sizeof(tgl_upsample_params)},
    {TGL_OP_UPSAMPLE_BILINEAR, "upsample_bilinear", OpFamily::Pool, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)},
     sizeof(tgl_upsample_params)},
    {TGL_OP_MAX_POOL_BACKWARD, "max_pool_backward", OpFamily::Pool, 2, 1, {"dy", "indices", "dx"},
     {any_of(kDtypesFloat), any_of(kI32), same_as(0)}, sizeof(tgl_pool_params)},
    {TGL_OP_AVG_POOL_BACKWARD, "avg_pool_backward", OpFamily::Pool, 1, 1, {"dy", "dx"}, {any_of(kDtypesFloat), same_as(0)},
     sizeof(tgl_pool_params)},
    {TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD, "adaptive_avg_pool_backward", OpFamily::Pool, 1, 1, {"dy", "dx"},
     {any_of(kDtypesFloat), same_as(0)}, sizeof(tgl_unary_params)},
    // [attention family]
    // The mask: q's dtype or bool (plan_attention checks which).
    {TGL_OP_ATTENTION, "attention", OpFamily::Attention, 4, 2, {"q", "k", "v", "mask", "o", "lse"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), any_of(kDtypesFloat | kBool), same_as(0), any_of(kF32)},
     sizeof(tgl_attention_params), OPT(3) | OPT(5)},
    {TGL_OP_ATTENTION_BACKWARD, "attention_backward", OpFamily::Attention, 7, 3,
     {"q", "k", "v", "o", "do", "lse", "mask", "dq", "dk", "dv"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0), same_as(0), any_of(kF32), any_of(kDtypesFloat | kBool),
      same_as(0), same_as(0), same_as(0)},
     sizeof(tgl_attention_params), OPT(6)},
    // [sequence family]
    // rope's freq_factors (f32) and cos/sin cache (x's dtype): since ABI 1.3, so 2 to 5 inputs.
    {TGL_OP_ROPE, "rope", OpFamily::Sequence, 5, 1, {"x", "positions", "freq_factors", "cos", "sin", "y"},
     {any_of(kDtypesFloat), any_of(kI32), any_of(kF32), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_rope_params),
     OPT(2) | OPT(3) | OPT(4), 2},
    {TGL_OP_ROPE_BACKWARD, "rope_backward", OpFamily::Sequence, 5, 1, {"dy", "positions", "freq_factors", "cos", "sin", "dx"},
     {any_of(kDtypesFloat), any_of(kI32), any_of(kF32), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_rope_params),
     OPT(2) | OPT(3) | OPT(4), 2},
    {TGL_OP_FFT, "fft", OpFamily::Sequence, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)}, sizeof(tgl_unary_params)},
    {TGL_OP_IFFT, "ifft", OpFamily::Sequence, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)}, sizeof(tgl_unary_params)},
    {TGL_OP_SELECTIVE_SCAN, "selective_scan", OpFamily::Sequence, 8, 2,
     {"u", "delta", "A", "Bm", "Cm", "Dskip", "z", "delta_bias", "y", "last_state"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0),
      same_as(0), same_as(0)},
     sizeof(tgl_selective_scan_params), OPT(5) | OPT(6) | OPT(7) | OPT(9)},
    {TGL_OP_SAMPLE, "sample", OpFamily::Sequence, 1, 1, {"logits", "token"}, {any_of(kDtypesFloat), any_of(kI32)},
     sizeof(tgl_sample_params)},
    // [grad family]
    {TGL_OP_SOFTMAX_BACKWARD, "softmax_backward", OpFamily::Grad, 2, 1, {"y", "dy", "dx"},
     {any_of(kDtypesFloat), same_as(0), same_as(0)}, sizeof(tgl_softmax_params)},
    {TGL_OP_LOG_SOFTMAX_BACKWARD, "log_softmax_backward", OpFamily::Grad, 2, 1, {"y", "dy", "dx"},
     {any_of(kDtypesFloat), same_as(0), same_as(0)}, sizeof(tgl_softmax_params)},
    {TGL_OP_LAYER_NORM_BACKWARD, "layer_norm_backward", OpFamily::Grad, 3, 3, {"x", "dy", "gamma", "dx", "dgamma", "dbeta"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_layer_norm_params),
     OPT(2) | OPT(4) | OPT(5)},
    {TGL_OP_RMS_NORM_BACKWARD, "rms_norm_backward", OpFamily::Grad, 3, 2, {"x", "dy", "gamma", "dx", "dgamma"},
     {any_of(kDtypesFloat), same_as(0), same_as(0), same_as(0), same_as(0)}, sizeof(tgl_layer_norm_params),
     OPT(2) | OPT(4)},
    {TGL_OP_CUMSUM_BACKWARD, "cumsum_backward", OpFamily::Grad, 1, 1, {"dy", "dx"},
     {any_of(kDtypesFloat), same_as(0)}, sizeof(tgl_scan_params)},
    {TGL_OP_EMBEDDING_BACKWARD, "embedding_backward", OpFamily::Grad, 2, 1, {"dy", "index", "dW"},
     {any_of(kDtypesFloat), any_of(kIndex), same_as(0)}, sizeof(tgl_embedding_backward_params)},
    {TGL_OP_CROSS_ENTROPY, "cross_entropy", OpFamily::Grad, 2, 1, {"logits", "target", "loss"},
     {any_of(kDtypesFloat), any_of(kIndex), same_as(0)}, sizeof(tgl_cross_entropy_params)},
    {TGL_OP_CROSS_ENTROPY_BACKWARD, "cross_entropy_backward", OpFamily::Grad, 3, 1, {"logits", "target", "dloss", "dlogits"},
     {any_of(kDtypesFloat), any_of(kIndex), same_as(0), same_as(0)}, sizeof(tgl_cross_entropy_params)},
};

#undef UNARY_P
#undef UNARY
#undef PREDICATE
#undef BINARY
#undef REDUCE
#undef REDUCE_P
#undef LAYOUT
#undef OPT


struct SortedOps {
    OpInfo ops[std::size(kOps)];
    SortedOps() {
        std::copy(std::begin(kOps), std::end(kOps), ops);
        std::sort(std::begin(ops), std::end(ops),
                  [](const OpInfo& a, const OpInfo& b) { return a.op < b.op; });
    }
};

const SortedOps& sorted() {
    static const SortedOps s;
    return s;
}

}  // namespace

const OpInfo* find_op(tgl_op op) {
    const SortedOps& s = sorted();
    auto it = std::lower_bound(std::begin(s.ops), std::end(s.ops), op,
                               [](const OpInfo& info, tgl_op id) { return info.op < id; });
    return (it != std::end(s.ops) && it->op == op) ? it : nullptr;
}

// Ops of the catalogue whose kernels have not landed yet: both plugins report them unsupported
// instead of failing inside a kernel. None at present; a new op id may be listed here while its
// kernels are written.
bool is_planned(tgl_op op) {
    switch (op) {
    // [planned ops]
    default: return false;
    }
}

const OpInfo* all_ops(uint32_t* count) {
    *count = static_cast<uint32_t>(std::size(kOps));
    return sorted().ops;
}

}  // namespace tgl
