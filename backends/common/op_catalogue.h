// The op catalogue: for every op id of the ABI, its name, family, operands and parameter struct.
// Shared by both plugins so that the capability query and validation mean the same everywhere.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

// Unary: (x) -> (y) of one shape. Binary: (a, b) -> (y), broadcasting. Ternary: where.
// Reduce: over a set of axes. ArgReduce: argmax/argmin along one axis. Scan: cumsum/cumprod.
// Normalize: softmax .. add_rms_norm. Layout: contiguous .. flip (copies, any dtype). Index:
// gather .. one_hot. Select: topk, sort, argsort. Generate: arange .. random_normal.
// Conv: convolution 1d/2d/3d, transposed convolution, conv2d backward.
// Pool: pooling 1d/2d/3d, global and adaptive pooling, upsampling, pooling backward.
// Attention: scaled dot-product attention forward and backward.
// Sequence: rotary embedding (and its backward), FFT, selective scan, token sampling.
// Grad: training: backward of softmax/log_softmax/layer_norm/rms_norm/cumsum/embedding, cross-entropy.
enum class OpFamily { Unary, Binary, Ternary, Reduce, ArgReduce, Scan, Matmul, Normalize, Layout, Index, Select, Generate,
                      Conv, Pool, Attention, Sequence, Grad };

constexpr int kMaxOperands = TGL_MAX_OP_INPUTS + TGL_MAX_OP_OUTPUTS;

// TGL_DTYPE_BIT masks of the operand dtype rules. The float (compute) dtypes: f16 and bf16 are
// storage only, computed in f32 on the GPU and in double on the CPU, rounded once at the store.
constexpr uint32_t kDtypesFloat = TGL_DTYPE_BIT(TGL_DTYPE_F32) | TGL_DTYPE_BIT(TGL_DTYPE_F16) | TGL_DTYPE_BIT(TGL_DTYPE_BF16);
// Mixed weights: the dtypes a weight operand (or bias) may have under f32 activations.
constexpr uint32_t kDtypesMixedWeight = TGL_DTYPE_BIT(TGL_DTYPE_F16) | TGL_DTYPE_BIT(TGL_DTYPE_BF16);
constexpr uint32_t kDtypesMask = TGL_DTYPE_BIT(TGL_DTYPE_BOOL) | TGL_DTYPE_BIT(TGL_DTYPE_U8);
// Every dtype whose element fits one 32-bit word (all but i64): the ops that handle an element as
// the bits of one word (logical, where, any/all, generate, index data).
constexpr uint32_t kDtypesWord = TGL_DTYPE_BIT(TGL_DTYPE_F32) | TGL_DTYPE_BIT(TGL_DTYPE_F16) |
                                 TGL_DTYPE_BIT(TGL_DTYPE_BF16) | TGL_DTYPE_BIT(TGL_DTYPE_I32) |
                                 TGL_DTYPE_BIT(TGL_DTYPE_I8) | TGL_DTYPE_BIT(TGL_DTYPE_U8) |
                                 TGL_DTYPE_BIT(TGL_DTYPE_BOOL) | TGL_DTYPE_BIT(TGL_DTYPE_I16);
// Every dtype (layout ops and cast, which move or convert elements of any size).
constexpr uint32_t kDtypesAll = kDtypesWord | TGL_DTYPE_BIT(TGL_DTYPE_I64);
// The GGUF block dtypes (plugin_api.h): taken by dequantize, linear/grouped_linear's W, index_select's x.
constexpr uint32_t kDtypesBlock = TGL_DTYPE_BIT(TGL_DTYPE_Q4_0) | TGL_DTYPE_BIT(TGL_DTYPE_Q4_1) |
                                  TGL_DTYPE_BIT(TGL_DTYPE_Q5_0) | TGL_DTYPE_BIT(TGL_DTYPE_Q5_1) |
                                  TGL_DTYPE_BIT(TGL_DTYPE_Q8_0) | TGL_DTYPE_BIT(TGL_DTYPE_Q4_K) |
                                  TGL_DTYPE_BIT(TGL_DTYPE_Q5_K) | TGL_DTYPE_BIT(TGL_DTYPE_Q6_K);

// Which dtypes one operand accepts: any of `dtypes`, and when same_as >= 0 exactly the dtype of
// operand slot same_as (slots count inputs, then outputs), or, when that operand is f32, also any
// of `under_f32` (mixed weights: f16/bf16 weights under f32 activations).
struct OperandRule {
    uint32_t dtypes = 0;
    int same_as = -1;
    uint32_t under_f32 = 0;
};

struct OpInfo {
    tgl_op op;
    const char* name;
    OpFamily family;
    uint32_t n_inputs;
    uint32_t n_outputs;
    const char* operand_names[kMaxOperands];  // inputs, then outputs
    OperandRule operands[kMaxOperands];       // inputs, then outputs
    uint32_t params_size;  // sizeof the params struct
    // Bit k set: operand slot k is optional (absent when its buffer handle is 0).
    uint32_t optional_slots = 0;
    // Variadic ops (concat, stack: inputs; split: outputs) accept from min_* up to n_* operands;
    // 0 means exactly n_*.
    uint32_t min_inputs = 0, min_outputs = 0;
};

// nullptr if `op` is not in the catalogue.
const OpInfo* find_op(tgl_op op);

// Every op of the catalogue, in id order.
const OpInfo* all_ops(uint32_t* count);

// An op of the ABI whose kernels have not landed yet: query_op reports it unsupported and run_op
// returns TGL_ERROR_UNIMPLEMENTED, on every plugin.
bool is_planned(tgl_op op);

}  // namespace tgl
