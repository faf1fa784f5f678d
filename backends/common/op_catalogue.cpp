#include "op_catalogue.h"

#include <algorithm>
#include <iterator>

namespace tgl {

namespace {

#define UNARY(ID, NAME) {ID, NAME, OpFamily::Unary, 1, 1, {"x", "y"}, sizeof(tgl_unary_params)}
#define BINARY(ID, NAME) {ID, NAME, OpFamily::Binary, 2, 1, {"a", "b", "y"}, sizeof(tgl_binary_params)}
#define REDUCE(ID, NAME) {ID, NAME, OpFamily::Reduce, 1, 1, {"x", "y"}, sizeof(tgl_reduce_params)}
#define PLANNED(ID, NAME) {ID, NAME, OpFamily::Planned, 0, 0, {}, 0}

const OpInfo kOps[] = {
    UNARY(TGL_OP_ABS, "abs"),
    UNARY(TGL_OP_NEG, "neg"),
    UNARY(TGL_OP_RELU, "relu"),
    UNARY(TGL_OP_SIGMOID, "sigmoid"),
    UNARY(TGL_OP_TANH, "tanh"),
    UNARY(TGL_OP_EXP, "exp"),
    UNARY(TGL_OP_LOG, "log"),
    UNARY(TGL_OP_SQRT, "sqrt"),
    {TGL_OP_GELU, "gelu", OpFamily::Unary, 1, 1, {"x", "y"}, sizeof(tgl_gelu_params)},
    UNARY(TGL_OP_SILU, "silu"),
    PLANNED(TGL_OP_SIGN, "sign"),
    PLANNED(TGL_OP_LEAKY_RELU, "leaky_relu"),
    PLANNED(TGL_OP_ELU, "elu"),
    PLANNED(TGL_OP_SELU, "selu"),
    PLANNED(TGL_OP_CELU, "celu"),
    PLANNED(TGL_OP_HARDSIGMOID, "hardsigmoid"),
    PLANNED(TGL_OP_HARDSWISH, "hardswish"),
    PLANNED(TGL_OP_SOFTPLUS, "softplus"),
    PLANNED(TGL_OP_MISH, "mish"),
    PLANNED(TGL_OP_EXPM1, "expm1"),
    PLANNED(TGL_OP_LOG1P, "log1p"),
    PLANNED(TGL_OP_RSQRT, "rsqrt"),
    PLANNED(TGL_OP_RECIPROCAL, "reciprocal"),
    PLANNED(TGL_OP_SQUARE, "square"),
    PLANNED(TGL_OP_SIN, "sin"),
    PLANNED(TGL_OP_COS, "cos"),
    PLANNED(TGL_OP_ERF, "erf"),
    PLANNED(TGL_OP_FLOOR, "floor"),
    PLANNED(TGL_OP_CEIL, "ceil"),
    PLANNED(TGL_OP_ROUND, "round"),
    PLANNED(TGL_OP_TRUNC, "trunc"),
    PLANNED(TGL_OP_CLAMP, "clamp"),
    PLANNED(TGL_OP_LOGICAL_NOT, "logical_not"),
    BINARY(TGL_OP_ADD, "add"),
    BINARY(TGL_OP_SUB, "sub"),
    BINARY(TGL_OP_MUL, "mul"),
    BINARY(TGL_OP_DIV, "div"),
    BINARY(TGL_OP_MAXIMUM, "maximum"),
    BINARY(TGL_OP_MINIMUM, "minimum"),
    BINARY(TGL_OP_POW, "pow"),
    PLANNED(TGL_OP_FMOD, "fmod"),
    PLANNED(TGL_OP_REMAINDER, "remainder"),
    PLANNED(TGL_OP_ATAN2, "atan2"),
    PLANNED(TGL_OP_LOGICAL_AND, "logical_and"),
    PLANNED(TGL_OP_LOGICAL_OR, "logical_or"),
    PLANNED(TGL_OP_LOGICAL_XOR, "logical_xor"),
    PLANNED(TGL_OP_EQ, "eq"),
    PLANNED(TGL_OP_NE, "ne"),
    PLANNED(TGL_OP_LT, "lt"),
    PLANNED(TGL_OP_LE, "le"),
    PLANNED(TGL_OP_GT, "gt"),
    PLANNED(TGL_OP_GE, "ge"),
    PLANNED(TGL_OP_WHERE, "where"),
    REDUCE(TGL_OP_SUM, "sum"),
    REDUCE(TGL_OP_MEAN, "mean"),
    REDUCE(TGL_OP_MAX, "max"),
    REDUCE(TGL_OP_MIN, "min"),
    REDUCE(TGL_OP_PROD, "prod"),
    PLANNED(TGL_OP_ARGMAX, "argmax"),
    PLANNED(TGL_OP_ARGMIN, "argmin"),
    PLANNED(TGL_OP_LOGSUMEXP, "logsumexp"),
    PLANNED(TGL_OP_VAR, "var"),
    PLANNED(TGL_OP_STD, "std"),
    PLANNED(TGL_OP_ANY, "any"),
    PLANNED(TGL_OP_ALL, "all"),
    PLANNED(TGL_OP_NORM, "norm"),
    PLANNED(TGL_OP_CUMSUM, "cumsum"),
    PLANNED(TGL_OP_CUMPROD, "cumprod"),
    {TGL_OP_MATMUL, "matmul", OpFamily::Matmul, 2, 1, {"A", "B", "C"}, sizeof(tgl_matmul_params)},
    PLANNED(TGL_OP_CAST, "cast"),
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

#undef UNARY
#undef BINARY
#undef REDUCE
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
