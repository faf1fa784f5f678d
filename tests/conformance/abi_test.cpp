// The ABI contract: function table, plugin info, devices and their properties, capability query,
// unimplemented and unknown ops.
#include "common.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <regex>
#include <set>

namespace conf {
namespace {

// Every op of ABI 1.0..1.3 as the issues that defined it specify it: name, operand counts (the most;
// concat/stack/add_n take 1..8 inputs, split 1..4 outputs), params struct and the dtypes each operand
// must accept. Written out here, independently of the plugins' catalogue, so that a plugin that
// drops an op or a dtype fails this test.
// float ops: f32, f16 and bf16 storage (bf16 since 1.3; matmul/conv weights: each of the three)
constexpr uint32_t F = TGL_DTYPE_BIT(TGL_DTYPE_F32) | TGL_DTYPE_BIT(TGL_DTYPE_F16) | TGL_DTYPE_BIT(TGL_DTYPE_BF16);
constexpr uint32_t I32 = TGL_DTYPE_BIT(TGL_DTYPE_I32);
constexpr uint32_t MASK = TGL_DTYPE_BIT(TGL_DTYPE_BOOL) | TGL_DTYPE_BIT(TGL_DTYPE_U8);  // compare/logical results
// Every dtype but i64 (1.3 added i16 wherever "any dtype" held).
constexpr uint32_t ALL = F | I32 | TGL_DTYPE_BIT(TGL_DTYPE_I8) | MASK | TGL_DTYPE_BIT(TGL_DTYPE_I16);
constexpr uint32_t CMP = F | I32 | TGL_DTYPE_BIT(TGL_DTYPE_I8) | MASK;
constexpr uint32_t ANY = ALL | TGL_DTYPE_BIT(TGL_DTYPE_I64);  // layout ops and cast (1.3: i64 too)
constexpr uint32_t IDX = I32 | TGL_DTYPE_BIT(TGL_DTYPE_I64);  // index operands (1.3: i64 too)
constexpr uint32_t GGUF = 0xffu << TGL_DTYPE_Q4_0;  // the GGUF block dtypes q4_0 .. q6_K (1.3)
constexpr uint32_t KEYS = F | I32;  // sort keys
// Integer arithmetic (ABI 1.3): elementwise on i32/i8/u8, reductions and scans on i32.
constexpr uint32_t INTS = I32 | TGL_DTYPE_BIT(TGL_DTYPE_I8) | TGL_DTYPE_BIT(TGL_DTYPE_U8);
constexpr uint32_t FI = F | INTS;
// i64 arithmetic (1.3): the ops without division, the comparisons, sum/prod/max/min.
constexpr uint32_t I64 = TGL_DTYPE_BIT(TGL_DTYPE_I64);
constexpr uint32_t FW = FI | I64;

struct AbiOp {
    tgl_op op;
    const char* name;
    uint32_t params_size;
    std::vector<uint32_t> inputs;   // dtype masks the plugin must accept, per input operand
    std::vector<uint32_t> outputs;  // ... per output operand
};

const std::vector<AbiOp>& abi_ops() {
    const uint32_t un = sizeof(tgl_unary_params), bin = sizeof(tgl_binary_params), red = sizeof(tgl_reduce_params);
    static const std::vector<AbiOp> ops = {
        {TGL_OP_ABS, "abs", un, {FW}, {FW}}, {TGL_OP_NEG, "neg", un, {FW}, {FW}}, {TGL_OP_RELU, "relu", un, {F}, {F}},
        {TGL_OP_SIGMOID, "sigmoid", un, {F}, {F}}, {TGL_OP_TANH, "tanh", un, {F}, {F}},
        {TGL_OP_EXP, "exp", un, {F}, {F}}, {TGL_OP_LOG, "log", un, {F}, {F}}, {TGL_OP_SQRT, "sqrt", un, {F}, {F}},
        {TGL_OP_GELU, "gelu", sizeof(tgl_gelu_params), {F}, {F}}, {TGL_OP_SILU, "silu", un, {F}, {F}},
        {TGL_OP_SIGN, "sign", un, {F}, {F}}, {TGL_OP_LEAKY_RELU, "leaky_relu", sizeof(tgl_leaky_relu_params), {F}, {F}},
        {TGL_OP_ELU, "elu", sizeof(tgl_elu_params), {F}, {F}}, {TGL_OP_SELU, "selu", un, {F}, {F}},
        {TGL_OP_CELU, "celu", sizeof(tgl_elu_params), {F}, {F}}, {TGL_OP_HARDSIGMOID, "hardsigmoid", un, {F}, {F}},
        {TGL_OP_HARDSWISH, "hardswish", un, {F}, {F}}, {TGL_OP_SOFTPLUS, "softplus", sizeof(tgl_softplus_params), {F}, {F}},
        {TGL_OP_MISH, "mish", un, {F}, {F}}, {TGL_OP_EXPM1, "expm1", un, {F}, {F}}, {TGL_OP_LOG1P, "log1p", un, {F}, {F}},
        {TGL_OP_RSQRT, "rsqrt", un, {F}, {F}}, {TGL_OP_RECIPROCAL, "reciprocal", un, {F}, {F}},
        {TGL_OP_SQUARE, "square", un, {F}, {F}}, {TGL_OP_SIN, "sin", un, {F}, {F}}, {TGL_OP_COS, "cos", un, {F}, {F}},
        {TGL_OP_ERF, "erf", un, {F}, {F}}, {TGL_OP_FLOOR, "floor", un, {F}, {F}}, {TGL_OP_CEIL, "ceil", un, {F}, {F}},
        {TGL_OP_ROUND, "round", un, {F}, {F}}, {TGL_OP_TRUNC, "trunc", un, {F}, {F}},
        {TGL_OP_CLAMP, "clamp", sizeof(tgl_clamp_params), {FW}, {FW}}, {TGL_OP_LOGICAL_NOT, "logical_not", un, {ALL}, {MASK}},
        {TGL_OP_ASIN, "asin", un, {F}, {F}}, {TGL_OP_ACOS, "acos", un, {F}, {F}}, {TGL_OP_ATAN, "atan", un, {F}, {F}},
        {TGL_OP_SINH, "sinh", un, {F}, {F}}, {TGL_OP_COSH, "cosh", un, {F}, {F}}, {TGL_OP_TAN, "tan", un, {F}, {F}},
        {TGL_OP_ASINH, "asinh", un, {F}, {F}}, {TGL_OP_ACOSH, "acosh", un, {F}, {F}},
        {TGL_OP_ATANH, "atanh", un, {F}, {F}}, {TGL_OP_GELU_QUICK, "gelu_quick", un, {F}, {F}},
        {TGL_OP_STEP, "step", un, {F}, {F}},
        {TGL_OP_ADD, "add", bin, {FW, FW}, {FW}}, {TGL_OP_SUB, "sub", bin, {FW, FW}, {FW}},
        {TGL_OP_MUL, "mul", bin, {FW, FW}, {FW}}, {TGL_OP_DIV, "div", bin, {FI, FI}, {FI}},
        {TGL_OP_MAXIMUM, "maximum", bin, {FW, FW}, {FW}}, {TGL_OP_MINIMUM, "minimum", bin, {FW, FW}, {FW}},
        {TGL_OP_POW, "pow", bin, {FI, FI}, {FI}}, {TGL_OP_FMOD, "fmod", bin, {FI, FI}, {FI}},
        {TGL_OP_REMAINDER, "remainder", bin, {FI, FI}, {FI}},
        {TGL_OP_ATAN2, "atan2", bin, {F, F}, {F}},
        {TGL_OP_LOGICAL_AND, "logical_and", bin, {ALL, ALL}, {MASK}}, {TGL_OP_LOGICAL_OR, "logical_or", bin, {ALL, ALL}, {MASK}},
        {TGL_OP_LOGICAL_XOR, "logical_xor", bin, {ALL, ALL}, {MASK}},
        {TGL_OP_EQ, "eq", bin, {CMP | I64, CMP | I64}, {MASK}}, {TGL_OP_NE, "ne", bin, {CMP | I64, CMP | I64}, {MASK}},
        {TGL_OP_LT, "lt", bin, {CMP | I64, CMP | I64}, {MASK}}, {TGL_OP_LE, "le", bin, {CMP | I64, CMP | I64}, {MASK}},
        {TGL_OP_GT, "gt", bin, {CMP | I64, CMP | I64}, {MASK}}, {TGL_OP_GE, "ge", bin, {CMP | I64, CMP | I64}, {MASK}},
        {TGL_OP_FLOOR_DIVIDE, "floor_divide", bin, {FI, FI}, {FI}},
        {TGL_OP_WHERE, "where", bin, {MASK, ALL, ALL}, {ALL}},
        {TGL_OP_ADD_N, "add_n", bin, std::vector<uint32_t>(8, FW), {FW}},
        {TGL_OP_SUM, "sum", red, {F | I32 | I64}, {F | I32 | I64}}, {TGL_OP_MEAN, "mean", red, {F}, {F}},
        {TGL_OP_MAX, "max", red, {F | I32 | I64}, {F | I32 | I64}}, {TGL_OP_MIN, "min", red, {F | I32 | I64}, {F | I32 | I64}},
        {TGL_OP_PROD, "prod", red, {F | I32 | I64}, {F | I32 | I64}},
        {TGL_OP_ARGMAX, "argmax", sizeof(tgl_arg_reduce_params), {FI}, {IDX}},
        {TGL_OP_ARGMIN, "argmin", sizeof(tgl_arg_reduce_params), {FI}, {IDX}},
        {TGL_OP_LOGSUMEXP, "logsumexp", red, {F}, {F}}, {TGL_OP_VAR, "var", sizeof(tgl_var_params), {F}, {F}},
        {TGL_OP_STD, "std", sizeof(tgl_var_params), {F}, {F}}, {TGL_OP_ANY, "any", red, {ALL}, {MASK}},
        {TGL_OP_ALL, "all", red, {ALL}, {MASK}}, {TGL_OP_NORM, "norm", sizeof(tgl_vector_norm_params), {F}, {F}},
        {TGL_OP_CUMSUM, "cumsum", sizeof(tgl_scan_params), {F | I32}, {F | I32}},
        {TGL_OP_CUMPROD, "cumprod", sizeof(tgl_scan_params), {F | I32}, {F | I32}},
        {TGL_OP_MATMUL, "matmul", sizeof(tgl_matmul_params), {F, F}, {F}},
        {TGL_OP_CAST, "cast", un, {ANY}, {ANY}},
        {TGL_OP_SOFTMAX, "softmax", sizeof(tgl_softmax_params), {F, F}, {F}},
        {TGL_OP_LOG_SOFTMAX, "log_softmax", sizeof(tgl_softmax_params), {F, F}, {F}},
        {TGL_OP_LAYER_NORM, "layer_norm", sizeof(tgl_layer_norm_params), {F, F, F}, {F}},
        {TGL_OP_RMS_NORM, "rms_norm", sizeof(tgl_layer_norm_params), {F, F, F}, {F}},
        {TGL_OP_GROUP_NORM, "group_norm", sizeof(tgl_group_norm_params), {F, F, F}, {F}},
        {TGL_OP_BATCH_NORM, "batch_norm", sizeof(tgl_batch_norm_params), {F, F, F, F, F}, {F}},
        {TGL_OP_ADD_LAYER_NORM, "add_layer_norm", sizeof(tgl_layer_norm_params), {F, F, F, F}, {F, F}},
        {TGL_OP_ADD_RMS_NORM, "add_rms_norm", sizeof(tgl_layer_norm_params), {F, F, F}, {F, F}},
        {TGL_OP_CONTIGUOUS, "contiguous", un, {ANY}, {ANY}},
        {TGL_OP_CONCAT, "concat", sizeof(tgl_axis_params), std::vector<uint32_t>(8, ANY), {ANY}},
        {TGL_OP_PAD, "pad", sizeof(tgl_pad_params), {ANY}, {ANY}}, {TGL_OP_TILE, "tile", un, {ANY}, {ANY}},
        {TGL_OP_ROLL, "roll", sizeof(tgl_roll_params), {ANY}, {ANY}},
        {TGL_OP_PERMUTE, "permute", sizeof(tgl_permute_params), {ANY}, {ANY}},
        {TGL_OP_RESHAPE, "reshape", un, {ANY}, {ANY}}, {TGL_OP_SLICE, "slice", sizeof(tgl_slice_params), {ANY}, {ANY}},
        {TGL_OP_NARROW, "narrow", sizeof(tgl_narrow_params), {ANY}, {ANY}},
        {TGL_OP_SPLIT, "split", sizeof(tgl_axis_params), {ANY}, {ANY, ANY, ANY, ANY}},
        {TGL_OP_STACK, "stack", sizeof(tgl_axis_params), std::vector<uint32_t>(8, ANY), {ANY}},
        {TGL_OP_EXPAND, "expand", un, {ANY}, {ANY}}, {TGL_OP_FLIP, "flip", sizeof(tgl_flip_params), {ANY}, {ANY}},
        {TGL_OP_GATHER, "gather", sizeof(tgl_axis_params), {ALL, IDX}, {ALL}},
        {TGL_OP_INDEX_SELECT, "index_select", sizeof(tgl_axis_params), {ALL | GGUF, IDX}, {ALL}},
        {TGL_OP_SCATTER, "scatter", sizeof(tgl_axis_params), {ALL, IDX, ALL}, {ALL}},
        {TGL_OP_SCATTER_ADD, "scatter_add", sizeof(tgl_axis_params), {F | I32, IDX, F | I32}, {F | I32}},
        {TGL_OP_ONE_HOT, "one_hot", un, {IDX}, {ALL}},
        {TGL_OP_SET_ROWS, "set_rows", sizeof(tgl_axis_params), {ALL, IDX, ALL}, {ALL}},
        {TGL_OP_TOPK, "topk", sizeof(tgl_sort_params), {KEYS}, {KEYS, IDX}},
        {TGL_OP_SORT, "sort", sizeof(tgl_sort_params), {KEYS}, {KEYS, IDX}},
        {TGL_OP_ARGSORT, "argsort", sizeof(tgl_sort_params), {KEYS}, {IDX}},
        {TGL_OP_ARANGE, "arange", sizeof(tgl_arange_params), {}, {ALL & ~TGL_DTYPE_BIT(TGL_DTYPE_BOOL)}},
        {TGL_OP_FULL, "full", sizeof(tgl_full_params), {}, {ALL}},
        {TGL_OP_EYE, "eye", sizeof(tgl_diagonal_params), {}, {ALL}},
        {TGL_OP_TRIL, "tril", sizeof(tgl_diagonal_params), {ALL}, {ALL}},
        {TGL_OP_TRIU, "triu", sizeof(tgl_diagonal_params), {ALL}, {ALL}},
        {TGL_OP_RANDOM_UNIFORM, "random_uniform", sizeof(tgl_random_params), {}, {F | TGL_DTYPE_BIT(TGL_DTYPE_BF16)}},
        {TGL_OP_RANDOM_NORMAL, "random_normal", sizeof(tgl_random_params), {}, {F | TGL_DTYPE_BIT(TGL_DTYPE_BF16)}},
        // [matmul family]
        {TGL_OP_LINEAR, "linear", sizeof(tgl_linear_params), {F, F | GGUF, F}, {F}},
        {TGL_OP_LINEAR_QKV, "linear_qkv", sizeof(tgl_linear_params), {F, F, F}, {F, F, F}},
        {TGL_OP_GROUPED_LINEAR, "grouped_linear", sizeof(tgl_linear_params), {F, F | GGUF, IDX, F}, {F}},
        {TGL_OP_LINEAR_INT8, "linear_int8", sizeof(tgl_linear_params), {F, TGL_DTYPE_BIT(TGL_DTYPE_I8), F, F}, {F}},
        {TGL_OP_LINEAR_INT4, "linear_int4", sizeof(tgl_linear_int4_params),
         {F, TGL_DTYPE_BIT(TGL_DTYPE_U8), F, TGL_DTYPE_BIT(TGL_DTYPE_U8), F}, {F}},
        {TGL_OP_DEQUANTIZE, "dequantize", sizeof(tgl_unary_params), {GGUF}, {F}},
        // [conv family]
        {TGL_OP_CONV1D, "conv1d", sizeof(tgl_conv_params), {F, F, F}, {F}},
        {TGL_OP_CONV2D, "conv2d", sizeof(tgl_conv_params), {F, F, F}, {F}},
        {TGL_OP_CONV3D, "conv3d", sizeof(tgl_conv_params), {F, F, F}, {F}},
        {TGL_OP_CONV_TRANSPOSE1D, "conv_transpose1d", sizeof(tgl_conv_params), {F, F, F}, {F}},
        {TGL_OP_CONV_TRANSPOSE2D, "conv_transpose2d", sizeof(tgl_conv_params), {F, F, F}, {F}},
        {TGL_OP_CONV2D_BACKWARD_INPUT, "conv2d_backward_input", sizeof(tgl_conv_params), {F, F}, {F}},
        {TGL_OP_CONV2D_BACKWARD_WEIGHT, "conv2d_backward_weight", sizeof(tgl_conv_params), {F, F}, {F, F}},
        // [pool family]
        {TGL_OP_MAX_POOL, "max_pool", sizeof(tgl_pool_params), {F}, {F, I32}},
        {TGL_OP_AVG_POOL, "avg_pool", sizeof(tgl_pool_params), {F}, {F}},
        {TGL_OP_GLOBAL_MAX_POOL, "global_max_pool", un, {F}, {F}},
        {TGL_OP_GLOBAL_AVG_POOL, "global_avg_pool", un, {F}, {F}},
        {TGL_OP_ADAPTIVE_AVG_POOL, "adaptive_avg_pool", un, {F}, {F}},
        {TGL_OP_UPSAMPLE_NEAREST, "upsample_nearest", sizeof(tgl_upsample_params), {F}, {F}},
        {TGL_OP_UPSAMPLE_BILINEAR, "upsample_bilinear", sizeof(tgl_upsample_params), {F}, {F}},
        {TGL_OP_MAX_POOL_BACKWARD, "max_pool_backward", sizeof(tgl_pool_params), {F, I32}, {F}},
        {TGL_OP_AVG_POOL_BACKWARD, "avg_pool_backward", sizeof(tgl_pool_params), {F}, {F}},
        {TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD, "adaptive_avg_pool_backward", un, {F}, {F}},
        // [attention family]
        {TGL_OP_ATTENTION, "attention", sizeof(tgl_attention_params),
         {F, F, F, F | TGL_DTYPE_BIT(TGL_DTYPE_BOOL), TGL_DTYPE_BIT(TGL_DTYPE_F32)}, {F, TGL_DTYPE_BIT(TGL_DTYPE_F32)}},
        {TGL_OP_ATTENTION_BACKWARD, "attention_backward", sizeof(tgl_attention_params),
         {F, F, F, F, F, TGL_DTYPE_BIT(TGL_DTYPE_F32), F | TGL_DTYPE_BIT(TGL_DTYPE_BOOL)}, {F, F, F}},
        // [sequence family]
        {TGL_OP_ROPE, "rope", sizeof(tgl_rope_params), {F, I32, TGL_DTYPE_BIT(TGL_DTYPE_F32), F, F}, {F}},
        {TGL_OP_ROPE_BACKWARD, "rope_backward", sizeof(tgl_rope_params), {F, I32, TGL_DTYPE_BIT(TGL_DTYPE_F32), F, F}, {F}},
        {TGL_OP_FFT, "fft", sizeof(tgl_unary_params), {F}, {F}},
        {TGL_OP_IFFT, "ifft", sizeof(tgl_unary_params), {F}, {F}},
        {TGL_OP_SELECTIVE_SCAN, "selective_scan", sizeof(tgl_selective_scan_params), {F, F, F, F, F, F, F, F}, {F, F}},
        {TGL_OP_SAMPLE, "sample", sizeof(tgl_sample_params), {F}, {I32}},
        // [grad family]
        {TGL_OP_SOFTMAX_BACKWARD, "softmax_backward", sizeof(tgl_softmax_params), {F, F}, {F}},
        {TGL_OP_LOG_SOFTMAX_BACKWARD, "log_softmax_backward", sizeof(tgl_softmax_params), {F, F}, {F}},
        {TGL_OP_LAYER_NORM_BACKWARD, "layer_norm_backward", sizeof(tgl_layer_norm_params), {F, F, F}, {F, F, F}},
        {TGL_OP_RMS_NORM_BACKWARD, "rms_norm_backward", sizeof(tgl_layer_norm_params), {F, F, F}, {F, F}},
        {TGL_OP_CUMSUM_BACKWARD, "cumsum_backward", sizeof(tgl_scan_params), {F}, {F}},
        {TGL_OP_EMBEDDING_BACKWARD, "embedding_backward", sizeof(tgl_embedding_backward_params), {F, IDX}, {F}},
        {TGL_OP_CROSS_ENTROPY, "cross_entropy", sizeof(tgl_cross_entropy_params), {F, IDX}, {F}},
        {TGL_OP_CROSS_ENTROPY_BACKWARD, "cross_entropy_backward", sizeof(tgl_cross_entropy_params), {F, IDX, F}, {F}},
    };
    return ops;
}

tgl_op_caps query(tgl_op op, tgl_status* status) {
    tgl_op_caps caps;
    std::memset(&caps, 0xCD, sizeof caps);
    caps.struct_size = sizeof caps;
    *status = plug().api().query_op(op, &caps);
    return caps;
}

using AbiTest = ConformanceTest;

// Checks TGL-P-4, TGL-P-5 (plugin_api.h, plugin rules).
TEST_F(AbiTest, FunctionTableHasV10SizeVersionAndEveryFunction) {
    const tgl_plugin_api& api = plug().api();
    EXPECT_GE(api.struct_size, uint64_t(TGL_PLUGIN_API_SIZE_V1_0));
    EXPECT_EQ(api.abi_major, uint32_t(TGL_ABI_MAJOR));
    EXPECT_GE(api.abi_minor, 0u);
    const void* fns[] = {(void*)api.last_error_message, (void*)api.get_plugin_info, (void*)api.device_count,
                         (void*)api.device_properties, (void*)api.device_open, (void*)api.device_close,
                         (void*)api.buffer_alloc, (void*)api.buffer_free, (void*)api.buffer_size,
                         (void*)api.buffer_upload, (void*)api.buffer_download, (void*)api.buffer_copy,
                         (void*)api.buffer_fill, (void*)api.query_op, (void*)api.run_op, (void*)api.synchronize};
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; ++i) EXPECT_NE(fns[i], nullptr) << "function #" << i;
    EXPECT_EQ(tgl_plugin_get_api(plug().raw()), &plug().loader_api());
}

// ABI 1.1: this project's plugins are 1.1 plugins, so the loader (a 1.1 host) shows the timer.
// Checks TGL-P-5 (plugin_api.h, plugin rules).
TEST_F(AbiTest, FunctionTableHasV11Timer) {
    const tgl_plugin_api& api = plug().api();
    ASSERT_GE(tgl_plugin_abi_minor(plug().raw()), 1u);
    EXPECT_GE(api.struct_size, uint64_t(TGL_PLUGIN_API_SIZE_V1_1));
    EXPECT_NE(api.timer_begin, nullptr);
    EXPECT_NE(api.timer_end, nullptr);
}

// ABI 1.2: the graph members (their behaviour: graph_test.cpp).
// Checks TGL-P-5 (plugin_api.h, plugin rules).
TEST_F(AbiTest, FunctionTableHasV12Graphs) {
    const tgl_plugin_api& api = plug().api();
    ASSERT_GE(tgl_plugin_abi_minor(plug().raw()), 2u);
    EXPECT_GE(api.struct_size, uint64_t(TGL_PLUGIN_API_SIZE_V1_2));
    EXPECT_NE(api.graph_begin, nullptr);
    EXPECT_NE(api.graph_end, nullptr);
    EXPECT_NE(api.graph_replay, nullptr);
    EXPECT_NE(api.graph_destroy, nullptr);
    EXPECT_TGL_ERROR(api.graph_begin(0), TGL_ERROR_INVALID_HANDLE, {"device"});
    tgl_graph g = 0;
    EXPECT_TGL_ERROR(api.graph_end(0, &g), TGL_ERROR_INVALID_HANDLE, {"device"});
    EXPECT_TGL_ERROR(api.graph_replay(0, 1), TGL_ERROR_INVALID_HANDLE, {"device"});
    EXPECT_TGL_ERROR(api.graph_destroy(0, 1), TGL_ERROR_INVALID_HANDLE, {"device"});
    EXPECT_TGL_ERROR(api.graph_end(dev().handle(), nullptr), TGL_ERROR_NULL_POINTER, {"out"});
}

// ABI 1.3: graph_replay_with (its behaviour: graph_test.cpp).
// Checks TGL-P-5 (plugin_api.h, plugin rules).
TEST_F(AbiTest, FunctionTableHasV13ReplayWith) {
    const tgl_plugin_api& api = plug().api();
    ASSERT_GE(tgl_plugin_abi_minor(plug().raw()), 3u);
    EXPECT_GE(api.struct_size, uint64_t(TGL_PLUGIN_API_SIZE_V1_3));
    ASSERT_NE(api.graph_replay_with, nullptr);
    EXPECT_TGL_ERROR(api.graph_replay_with(0, 1, nullptr, 0), TGL_ERROR_INVALID_HANDLE, {"device"});
}

// timer_begin/timer_end around queued work: a positive time, or UNIMPLEMENTED from timer_begin
// (GLES without GL_EXT_disjoint_timer_query); regions must pair up.
// Checks TGL-P-7 (plugin_api.h, plugin rules).
TEST_F(AbiTest, TimerMeasuresQueuedWorkOrIsUnimplemented) {
    const tgl_plugin_api& api = plug().api();
    ASSERT_NE(api.timer_begin, nullptr);
    Device& d = dev();
    uint64_t ns = 12345;
    uint32_t flags = 77;
    EXPECT_TGL_ERROR(api.timer_end(d.handle(), &ns, &flags), TGL_ERROR_INVALID_ARGUMENT, {"no timer region"});
    EXPECT_EQ(ns, 12345u);
    EXPECT_TGL_ERROR(api.timer_begin(0), TGL_ERROR_INVALID_HANDLE, {"device"});
    tgl_status st = api.timer_begin(d.handle());
    if (st == TGL_ERROR_UNIMPLEMENTED) {
        EXPECT_NE(plug().last_error().find("timer"), std::string::npos) << plug().last_error();
        EXPECT_TGL_ERROR(api.timer_end(d.handle(), &ns, &flags), TGL_ERROR_INVALID_ARGUMENT, {"no timer region"});
        return;
    }
    ASSERT_EQ(st, TGL_OK) << plug().last_error();
    EXPECT_TGL_ERROR(api.timer_begin(d.handle()), TGL_ERROR_INVALID_ARGUMENT, {"already open"});
    std::vector<float> y = binary1(TGL_OP_ADD, iota_values(4096), iota_values(4096));  // queued work
    EXPECT_EQ(y[4095], 8192.0f);
    EXPECT_TGL_ERROR(api.timer_end(d.handle(), nullptr, &flags), TGL_ERROR_NULL_POINTER, {"elapsed_ns"});
    // The NULL pointer did not close the region: the checks come first.
    ASSERT_EQ(api.timer_end(d.handle(), &ns, &flags), TGL_OK) << plug().last_error();
    EXPECT_GT(ns, 0u);
    EXPECT_LT(ns, 60000000000ull);
    EXPECT_EQ(flags & ~TGL_TIMER_DISJOINT, 0u);
    EXPECT_TGL_ERROR(api.timer_end(d.handle(), &ns, &flags), TGL_ERROR_INVALID_ARGUMENT, {"no timer region"});
}

// Checks TGL-P-6, TGL-P-13 (plugin_api.h, plugin rules).
TEST_F(AbiTest, PluginInfoNamesTheVersionsAndNegotiatedMinor) {
    const tgl_plugin_api& api = plug().api();
    const std::string before = api.last_error_message();
    tgl_plugin_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ASSERT_EQ(api.get_plugin_info(&info), TGL_OK) << plug().last_error();
    EXPECT_EQ(info.struct_size, sizeof info);
    EXPECT_EQ(info.abi_major, uint32_t(TGL_ABI_MAJOR));
    EXPECT_EQ(info.abi_minor, api.abi_minor);
    EXPECT_EQ(info.negotiated_minor, std::min<uint32_t>(TGL_ABI_MINOR, info.abi_minor));
    EXPECT_EQ(info.negotiated_minor, tgl_plugin_abi_minor(plug().raw()));
    ASSERT_NE(info.name, nullptr);
    ASSERT_NE(info.version, nullptr);
    ASSERT_NE(info.description, nullptr);
    EXPECT_STRNE(info.name, "");
    EXPECT_EQ(std::string(info.name), plug().name());
    EXPECT_TRUE(std::regex_match(info.version, std::regex(R"(\d+\.\d+\.\d+([-+].*)?)")))
        << "version '" << info.version << "' is not semver";
    EXPECT_STRNE(info.description, "");
    // A successful call leaves the message as it was (plugin_api.h), never NULL.
    const char* m = api.last_error_message();
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(std::string(m), before);
}

TEST_F(AbiTest, AtLeastOneDeviceWithProperties) {
    const tgl_plugin_api& api = plug().api();
    uint32_t count = 0;
    ASSERT_EQ(api.device_count(&count), TGL_OK) << plug().last_error();
    ASSERT_GE(count, 1u) << "plugin '" << plug().name() << "' reports no device";
    for (uint32_t i = 0; i < count; ++i) {
        const tgl_property* props = nullptr;
        uint32_t n = 0;
        ASSERT_EQ(api.device_properties(i, &props, &n), TGL_OK) << plug().last_error();
        ASSERT_GT(n, 0u);
        ASSERT_NE(props, nullptr);
        std::map<std::string, std::string> m;
        for (uint32_t k = 0; k < n; ++k) {
            ASSERT_NE(props[k].name, nullptr) << "property #" << k;
            ASSERT_NE(props[k].value, nullptr) << "property " << props[k].name;
            EXPECT_TRUE(m.emplace(props[k].name, props[k].value).second) << "property " << props[k].name << " repeats";
        }
        std::string listing;
        for (auto& kv : m) listing += "\n  " + kv.first + " = " + kv.second;
        SCOPED_TRACE("device " + std::to_string(i) + " properties:" + listing);
        std::printf("[  DEVICE  ] %u: %s | %s\n", i, m["renderer"].c_str(), m["api.version"].c_str());
        for (const char* key : {"name", "renderer", "api.version"}) {
            ASSERT_TRUE(m.count(key)) << "property '" << key << "' is missing";
            EXPECT_FALSE(m[key].empty()) << "property '" << key << "' is empty";
        }
        ASSERT_TRUE(m.count("limit.max_rank")) << "property 'limit.max_rank' is missing";
        EXPECT_EQ(m["limit.max_rank"], std::to_string(TGL_MAX_RANK));
        int limits = 0;
        for (auto& kv : m) {
            if (kv.first.compare(0, 6, "limit.") != 0 && kv.first != "memory.bytes") continue;
            ++limits;
            EXPECT_TRUE(std::regex_match(kv.second, std::regex(R"(\d+)")))
                << kv.first << " = '" << kv.second << "' is not a decimal number";
        }
        EXPECT_GE(limits, 2) << "expected device limits (limit.*)";
        // The loader's convenience accessor sees the same values.
        const char* r = tgl_device_property(plug().raw(), i, "renderer");
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(std::string(r), m["renderer"]);
    }
    // Properties of a device that does not exist.
    const tgl_property* props = nullptr;
    uint32_t n = 0;
    EXPECT_TGL_ERROR(api.device_properties(count + 1000, &props, &n), TGL_ERROR_DEVICE_UNAVAILABLE,
                     {std::to_string(count + 1000)});
    tgl_device d = 0;
    EXPECT_TGL_ERROR(api.device_open(count + 1000, &d), TGL_ERROR_DEVICE_UNAVAILABLE, {std::to_string(count + 1000)});
}

// A plugin with a limits mode (GLES: TGL_GLES_LIMITS) reports it; under "minimum" every limit it
// reports is within what OpenGL ES 3.1 guarantees and no extension is used.
TEST_F(AbiTest, LimitsModeProperties) {
    const tgl_plugin_api& api = plug().api();
    uint32_t count = 0;
    ASSERT_EQ(api.device_count(&count), TGL_OK) << plug().last_error();
    const char* env = std::getenv("TGL_GLES_LIMITS");
    const bool minimum = env && std::string(env) == "minimum";
    bool any = false;
    for (uint32_t i = 0; i < count; ++i) {
        const char* mode = tgl_device_property(plug().raw(), i, "limits.mode");
        if (!mode) continue;
        any = true;
        EXPECT_STREQ(mode, minimum ? "minimum" : "driver") << "device " << i;
        if (!minimum) continue;
        auto num = [&](const char* key) {
            const char* v = tgl_device_property(plug().raw(), i, key);
            EXPECT_NE(v, nullptr) << "property '" << key << "' is missing";
            return v ? std::strtoll(v, nullptr, 10) : -1;
        };
        EXPECT_LE(num("limit.max_workgroup_invocations"), 128);
        EXPECT_LE(num("limit.max_workgroup_size_x"), 128);
        EXPECT_LE(num("limit.max_workgroup_size_y"), 128);
        EXPECT_LE(num("limit.max_workgroup_size_z"), 64);
        EXPECT_LE(num("limit.max_workgroup_count_x"), 65535);
        EXPECT_LE(num("limit.max_workgroup_count_y"), 65535);
        EXPECT_LE(num("limit.max_workgroup_count_z"), 65535);
        EXPECT_LE(num("limit.max_shared_memory_bytes"), 16384);
        EXPECT_LE(num("limit.max_ssbo_bindings"), 4);
        EXPECT_LE(num("limit.max_compute_ssbo_blocks"), 4);
        EXPECT_LE(num("limit.max_ssbo_block_bytes"), int64_t(1) << 27);
        EXPECT_GE(num("limit.ssbo_offset_alignment"), 256);
        EXPECT_LE(num("limit.max_compute_uniform_components"), 512);
        EXPECT_EQ(num("extensions.count"), 0);
        EXPECT_EQ(num("extensions.subgroup"), 0);
        EXPECT_EQ(num("subgroup.size"), 0);
        EXPECT_EQ(num("subgroup.kernels"), 0);  // the kernels keep their shared-memory trees
        EXPECT_EQ(num("extensions.f16_arith"), 0);  // packed f16 arithmetic off (docs/half-precision.md)
        EXPECT_NE(tgl_device_property(plug().raw(), i, "limits.clamped"), nullptr);
    }
    if (!any) GTEST_SKIP() << "plugin '" << plug().name() << "' reports no limits.mode";
}

std::string mask_names(uint32_t mask) {
    std::string s;
    for (tgl_dtype dt : all_dtypes())
        if (mask & TGL_DTYPE_BIT(dt)) s += (s.empty() ? "" : ",") + dtype_name(dt);
    return s.empty() ? "none" : s;
}

// Checks TGL-P-10 (plugin_api.h, plugin rules).
TEST_F(AbiTest, EveryOpOfTheAbiIsSupportedWithItsDtypes) {
    for (const AbiOp& op : abi_ops()) {
        SCOPED_TRACE(op.name);
        tgl_status s;
        tgl_op_caps caps = query(op.op, &s);
        ASSERT_EQ(s, TGL_OK) << plug().last_error();
        EXPECT_EQ(caps.struct_size, sizeof caps);
        EXPECT_EQ(caps.op, op.op);
        ASSERT_NE(caps.name, nullptr);
        EXPECT_STREQ(caps.name, op.name);
        EXPECT_EQ(caps.supported, 1u) << "op '" << op.name << "' is not implemented by plugin '" << plug().name() << "'";
        EXPECT_EQ(caps.n_inputs, op.inputs.size());
        EXPECT_EQ(caps.n_outputs, op.outputs.size());
        EXPECT_EQ(caps.max_rank, uint32_t(TGL_MAX_RANK));
        EXPECT_EQ(caps.params_size, op.params_size);
        for (uint32_t i = 0; i < TGL_MAX_OP_INPUTS; ++i) {
            uint32_t want = i < op.inputs.size() ? op.inputs[i] : 0u;
            EXPECT_EQ(caps.input_dtypes[i] & want, want) << "input " << i << " takes " << mask_names(caps.input_dtypes[i])
                                                         << "; it must take " << mask_names(want);
            if (i >= op.inputs.size()) {
                EXPECT_EQ(caps.input_dtypes[i], 0u) << "input " << i << " does not exist";
            }
        }
        for (uint32_t i = 0; i < TGL_MAX_OP_OUTPUTS; ++i) {
            uint32_t want = i < op.outputs.size() ? op.outputs[i] : 0u;
            EXPECT_EQ(caps.output_dtypes[i] & want, want) << "output " << i << " takes "
                                                          << mask_names(caps.output_dtypes[i]) << "; it must take "
                                                          << mask_names(want);
            if (i >= op.outputs.size()) {
                EXPECT_EQ(caps.output_dtypes[i], 0u) << "output " << i << " does not exist";
            }
        }
        const uint32_t all = TGL_CAP_STRIDED | TGL_CAP_BROADCAST | TGL_CAP_STRIDED_OUTPUT;
        EXPECT_EQ(caps.flags & all, all) << "flags 0x" << std::hex << caps.flags
                                         << ": every op accepts strided, broadcast inputs and strided outputs";
    }
}

// TGL-P-10. Every op id of ABI 1 lies below TGL_OP_ID_LIMIT: every id the plugin knows is in
// abi_ops() (so that the list above, and with it the README's table, covers the whole catalogue).
TEST_F(AbiTest, TheCatalogueHasNoOpBeyondTheAbiList) {
    std::set<tgl_op> listed;
    for (const AbiOp& op : abi_ops()) listed.insert(op.op);
    for (const AbiOp& op : abi_ops()) EXPECT_LT(op.op, TGL_OP_ID_LIMIT) << op.name;
    for (tgl_op op = 1; op < TGL_OP_ID_LIMIT; ++op) {
        tgl_status s;
        tgl_op_caps caps = query(op, &s);
        if (s == TGL_ERROR_UNKNOWN_OP) continue;
        ASSERT_EQ(s, TGL_OK) << "op id " << op << ": " << plug().last_error();
        EXPECT_TRUE(listed.count(op)) << "op id " << op << " ('" << caps.name << "') is not in this test's list";
    }
}

// TGL-P-10, TGL-P-11.
TEST_F(AbiTest, UnknownOpIdsAreRejected) {
    for (tgl_op op : {tgl_op(99999), tgl_op(TGL_OP_INVALID), tgl_op(199), tgl_op(TGL_OP_ID_LIMIT), tgl_op(0xFFFFFFFFu)}) {
        SCOPED_TRACE("op id " + std::to_string(op));
        tgl_op_caps caps;
        std::memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        EXPECT_TGL_ERROR(plug().api().query_op(op, &caps), TGL_ERROR_UNKNOWN_OP, {std::to_string(op)});
        DeviceTensor x(dev(), contiguous({2})), y(dev(), contiguous({2}));
        x.set_values({1, 2});
        y.poison();
        tgl_tensor in = x.desc(), out = y.desc();
        EXPECT_TGL_ERROR(plug().api().run_op(dev().handle(), op, nullptr, &in, 1, &out, 1), TGL_ERROR_UNKNOWN_OP,
                         {std::to_string(op)});
        EXPECT_TRUE(y.unchanged());
    }
}

// Checks TGL-P-7 (plugin_api.h, plugin rules).
TEST_F(AbiTest, QueryOpChecksItsArguments) {
    EXPECT_TGL_ERROR(plug().api().query_op(TGL_OP_ADD, nullptr), TGL_ERROR_NULL_POINTER, {"caps"});
    tgl_op_caps caps;
    std::memset(&caps, 0, sizeof caps);
    caps.struct_size = 8;
    EXPECT_TGL_ERROR(plug().api().query_op(TGL_OP_ADD, &caps), TGL_ERROR_PARAMS_SIZE, {"struct_size"});
    tgl_plugin_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = 4;
    EXPECT_TGL_ERROR(plug().api().get_plugin_info(&info), TGL_ERROR_PARAMS_SIZE, {"struct_size"});
}

// An op run with a dtype its capability mask does not include is a DTYPE_MISMATCH naming the dtype
// (not a crash, not a silent reinterpretation), and the output stays untouched.
// Checks TGL-P-11 (plugin_api.h, plugin rules).
TEST_F(AbiTest, DtypeOutsideTheCapabilityIsRejected) {
    int tested = 0;
    for (tgl_op op : {tgl_op(TGL_OP_ADD), tgl_op(TGL_OP_EXP), tgl_op(TGL_OP_SUM), tgl_op(TGL_OP_MATMUL)}) {
        tgl_status s;
        tgl_op_caps caps = query(op, &s);
        ASSERT_EQ(s, TGL_OK);
        for (tgl_dtype dt : {tgl_dtype(TGL_DTYPE_F16), tgl_dtype(TGL_DTYPE_BF16), tgl_dtype(TGL_DTYPE_I32)}) {
            if (caps.input_dtypes[0] & TGL_DTYPE_BIT(dt)) continue;
            SCOPED_TRACE(std::string(caps.name) + " with dtype " + std::to_string(dt));
            ++tested;
            DeviceTensor a(dev(), contiguous({2, 2})), b(dev(), contiguous({2, 2}));
            DeviceTensor y(dev(), contiguous(op == TGL_OP_SUM ? Shape{1, 1} : Shape{2, 2}));
            a.set_values({1, 2, 3, 4});
            b.set_values({1, 2, 3, 4});
            y.poison();
            std::vector<tgl_tensor> in = {a.desc(), b.desc()};
            tgl_tensor out = y.desc();
            for (auto& t : in) t.dtype = dt;
            out.dtype = dt;
            tgl_reduce_params rp = reduce_params({}, true);
            const void* params = op == TGL_OP_SUM ? &rp : nullptr;
            uint32_t n_in = caps.n_inputs;
            std::string dtname = dt == TGL_DTYPE_F16 ? "f16" : dt == TGL_DTYPE_BF16 ? "bf16" : "i32";
            EXPECT_TGL_ERROR(plug().api().run_op(dev().handle(), op, params, in.data(), n_in, &out, 1),
                             TGL_ERROR_DTYPE_MISMATCH, {dtname, "takes"});
            EXPECT_TRUE(y.unchanged());
        }
    }
    if (!tested) GTEST_SKIP() << "the plugin implements f16, bf16 and i32 for every op tried";
}

// Every op of the catalogue refuses a call with one output more than it takes: INVALID_ARGUMENT
// naming the op and the counts, and the extra output (and the others) stay untouched. With the
// family files' own bad-input cases this gives every op a rejection case (op_coverage).
// Checks TGL-P-11 (plugin_api.h, plugin rules).
TEST_F(AbiTest, EveryOpRejectsOneOutputTooMany) {
    for (const AbiOp& op : abi_ops()) {
        SCOPED_TRACE(op.name);
        const size_t n_out = op.outputs.size() + 1;
        std::vector<std::unique_ptr<DeviceTensor>> ins, outs;
        std::vector<tgl_tensor> in, out;
        for (size_t i = 0; i < op.inputs.size(); ++i) {
            ins.push_back(std::make_unique<DeviceTensor>(dev(), contiguous({2, 2})));
            ins.back()->set_values({1, 2, 3, 4});
            in.push_back(ins.back()->desc());
        }
        for (size_t o = 0; o < n_out; ++o) {
            outs.push_back(std::make_unique<DeviceTensor>(dev(), contiguous({2, 2})));
            outs.back()->poison();
            out.push_back(outs.back()->desc());
        }
        EXPECT_TGL_ERROR(plug().api().run_op(dev().handle(), op.op, nullptr, in.data(), uint32_t(in.size()), out.data(),
                                             uint32_t(n_out)),
                         TGL_ERROR_INVALID_ARGUMENT, {op.name, "n_outputs = " + std::to_string(n_out)});
        for (const auto& y : outs) EXPECT_TRUE(y->unchanged());
    }
}

}  // namespace
}  // namespace conf
