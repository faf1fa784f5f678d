#include "op_catalogue.h"

#include <algorithm>
#include <iterator>

namespace tgl {

namespace {

constexpr uint32_t kF32 = TGL_DTYPE_BIT(TGL_DTYPE_F32);
constexpr uint32_t kCompared = kDtypesFloat | TGL_DTYPE_BIT(TGL_DTYPE_I32) | TGL_DTYPE_BIT(TGL_DTYPE_I8) |
                               TGL_DTYPE_BIT(TGL_DTYPE_U8) | TGL_DTYPE_BIT(TGL_DTYPE_BOOL);

// Operand rules: a mask, or "same dtype as slot k".
constexpr OperandRule any_of(uint32_t dtypes) { return {dtypes, -1}; }
constexpr OperandRule same_as(int slot) { return {0, slot}; }

// Float elementwise ops: every operand one float dtype.
#define UNARY_P(ID, NAME, PARAMS) \
    {ID, NAME, OpFamily::Unary, 1, 1, {"x", "y"}, {any_of(kDtypesFloat), same_as(0)}, sizeof(PARAMS)}
#define UNARY(ID, NAME) UNARY_P(ID, NAME, tgl_unary_params)
#define BINARY(ID, NAME)                                                                         \
    {ID, NAME, OpFamily::Binary, 2, 1, {"a", "b", "y"}, {any_of(kDtypesFloat), same_as(0), same_as(0)}, \
     sizeof(tgl_binary_params)}
// a and b of one dtype from `in`, y a mask (bool or u8).
#define PREDICATE(ID, NAME, IN)                                                                  \
    {ID, NAME, OpFamily::Binary, 2, 1, {"a", "b", "y"}, {any_of(IN), same_as(0), any_of(kDtypesMask)}, \
     sizeof(tgl_binary_params)}
#define REDUCE(ID, NAME) \
    {ID, NAME, OpFamily::Reduce, 1, 1, {"x", "y"}, {any_of(kF32), same_as(0)}, sizeof(tgl_reduce_params)}
#define REDUCE_P(ID, NAME, X, Y, PARAMS) \
    {ID, NAME, OpFamily::Reduce, 1, 1, {"x", "y"}, {any_of(X), Y}, sizeof(PARAMS)}
#define PLANNED(ID, NAME) {ID, NAME, OpFamily::Planned, 0, 0, {}, {}, 0}

const OpInfo kOps[] = {
    UNARY(TGL_OP_ABS, "abs"),
    UNARY(TGL_OP_NEG, "neg"),
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
    UNARY_P(TGL_OP_CLAMP, "clamp", tgl_clamp_params),
    {TGL_OP_LOGICAL_NOT, "logical_not", OpFamily::Unary, 1, 1, {"x", "y"},
     {any_of(kDtypesAll), any_of(kDtypesMask)}, sizeof(tgl_unary_params)},
    BINARY(TGL_OP_ADD, "add"),
    BINARY(TGL_OP_SUB, "sub"),
    BINARY(TGL_OP_MUL, "mul"),
    BINARY(TGL_OP_DIV, "div"),
    BINARY(TGL_OP_MAXIMUM, "maximum"),
    BINARY(TGL_OP_MINIMUM, "minimum"),
    BINARY(TGL_OP_POW, "pow"),
    BINARY(TGL_OP_FMOD, "fmod"),
    BINARY(TGL_OP_REMAINDER, "remainder"),
    BINARY(TGL_OP_ATAN2, "atan2"),
    PREDICATE(TGL_OP_LOGICAL_AND, "logical_and", kDtypesAll),
    PREDICATE(TGL_OP_LOGICAL_OR, "logical_or", kDtypesAll),
    PREDICATE(TGL_OP_LOGICAL_XOR, "logical_xor", kDtypesAll),
    PREDICATE(TGL_OP_EQ, "eq", kCompared),
    PREDICATE(TGL_OP_NE, "ne", kCompared),
    PREDICATE(TGL_OP_LT, "lt", kCompared),
    PREDICATE(TGL_OP_LE, "le", kCompared),
    PREDICATE(TGL_OP_GT, "gt", kCompared),
    PREDICATE(TGL_OP_GE, "ge", kCompared),
    {TGL_OP_WHERE, "where", OpFamily::Ternary, 3, 1, {"cond", "a", "b", "y"},
     {any_of(kDtypesMask), any_of(kDtypesAll), same_as(1), same_as(1)}, sizeof(tgl_binary_params)},
    REDUCE(TGL_OP_SUM, "sum"),
    REDUCE(TGL_OP_MEAN, "mean"),
    REDUCE(TGL_OP_MAX, "max"),
    REDUCE(TGL_OP_MIN, "min"),
    REDUCE(TGL_OP_PROD, "prod"),
    {TGL_OP_ARGMAX, "argmax", OpFamily::ArgReduce, 1, 1, {"x", "y"},
     {any_of(kDtypesFloat | TGL_DTYPE_BIT(TGL_DTYPE_I32)), any_of(TGL_DTYPE_BIT(TGL_DTYPE_I32))}, sizeof(tgl_arg_reduce_params)},
    {TGL_OP_ARGMIN, "argmin", OpFamily::ArgReduce, 1, 1, {"x", "y"},
     {any_of(kDtypesFloat | TGL_DTYPE_BIT(TGL_DTYPE_I32)), any_of(TGL_DTYPE_BIT(TGL_DTYPE_I32))}, sizeof(tgl_arg_reduce_params)},
    REDUCE_P(TGL_OP_LOGSUMEXP, "logsumexp", kF32, same_as(0), tgl_reduce_params),
    REDUCE_P(TGL_OP_VAR, "var", kF32, same_as(0), tgl_var_params),
    REDUCE_P(TGL_OP_STD, "std", kF32, same_as(0), tgl_var_params),
    REDUCE_P(TGL_OP_ANY, "any", kDtypesAll, any_of(kDtypesMask), tgl_reduce_params),
    REDUCE_P(TGL_OP_ALL, "all", kDtypesAll, any_of(kDtypesMask), tgl_reduce_params),
    REDUCE_P(TGL_OP_NORM, "norm", kF32, same_as(0), tgl_vector_norm_params),
    {TGL_OP_CUMSUM, "cumsum", OpFamily::Scan, 1, 1, {"x", "y"}, {any_of(kF32), same_as(0)}, sizeof(tgl_scan_params)},
    {TGL_OP_CUMPROD, "cumprod", OpFamily::Scan, 1, 1, {"x", "y"}, {any_of(kF32), same_as(0)}, sizeof(tgl_scan_params)},
    {TGL_OP_MATMUL, "matmul", OpFamily::Matmul, 2, 1, {"A", "B", "C"}, {any_of(kF32), same_as(0), same_as(0)},
     sizeof(tgl_matmul_params)},
    {TGL_OP_CAST, "cast", OpFamily::Unary, 1, 1, {"x", "y"}, {any_of(kDtypesAll), any_of(kDtypesAll)},
     sizeof(tgl_unary_params)},
    PLANNED(TGL_OP_SOFTMAX, "softmax"),
    PLANNED(TGL_OP_LOG_SOFTMAX, "log_softmax"),
    PLANNED(TGL_OP_LAYER_NORM, "layer_norm"),
    PLANNED(TGL_OP_RMS_NORM, "rms_norm"),
    PLANNED(TGL_OP_GROUP_NORM, "group_norm"),
    PLANNED(TGL_OP_BATCH_NORM, "batch_norm"),
    PLANNED(TGL_OP_ADD_LAYER_NORM, "add_layer_norm"),
    PLANNED(TGL_OP_ADD_RMS_NORM, "add_rms_norm"),
    PLANNED(TGL_OP_CONTIGUOUS, "contiguous"),
    PLANNED(TGL_OP_CONCAT, "concat"),
    PLANNED(TGL_OP_PAD, "pad"),
    PLANNED(TGL_OP_TILE, "tile"),
    PLANNED(TGL_OP_ROLL, "roll"),
    PLANNED(TGL_OP_PERMUTE, "permute"),
    PLANNED(TGL_OP_RESHAPE, "reshape"),
    PLANNED(TGL_OP_SLICE, "slice"),
    PLANNED(TGL_OP_NARROW, "narrow"),
    PLANNED(TGL_OP_SPLIT, "split"),
    PLANNED(TGL_OP_STACK, "stack"),
    PLANNED(TGL_OP_EXPAND, "expand"),
    PLANNED(TGL_OP_FLIP, "flip"),
    PLANNED(TGL_OP_GATHER, "gather"),
    PLANNED(TGL_OP_INDEX_SELECT, "index_select"),
    PLANNED(TGL_OP_SCATTER, "scatter"),
    PLANNED(TGL_OP_SCATTER_ADD, "scatter_add"),
    PLANNED(TGL_OP_ONE_HOT, "one_hot"),
    PLANNED(TGL_OP_TOPK, "topk"),
    PLANNED(TGL_OP_SORT, "sort"),
    PLANNED(TGL_OP_ARGSORT, "argsort"),
    PLANNED(TGL_OP_ARANGE, "arange"),
    PLANNED(TGL_OP_FULL, "full"),
    PLANNED(TGL_OP_EYE, "eye"),
    PLANNED(TGL_OP_TRIL, "tril"),
    PLANNED(TGL_OP_TRIU, "triu"),
    PLANNED(TGL_OP_RANDOM_UNIFORM, "random_uniform"),
    PLANNED(TGL_OP_RANDOM_NORMAL, "random_normal"),
};

#undef UNARY_P
#undef UNARY
#undef PREDICATE
#undef BINARY
#undef REDUCE
#undef REDUCE_P
#undef PLANNED

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

const OpInfo* all_ops(uint32_t* count) {
    *count = static_cast<uint32_t>(std::size(kOps));
    return sorted().ops;
}

}  // namespace tgl
