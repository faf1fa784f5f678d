// Argument validation and shape rules, once for both plugins. validate_op() turns the raw ABI
// arguments of run_op into an OpCall: every handle resolved, every view checked against its
// buffer, params defaulted, and a family-specific plan (index arithmetic) that kernels follow.
#pragma once

#include "op_catalogue.h"

// Index plans of the op families beyond elementwise and reduce, each in its own file.
#include "attention_rules.h"
#include "conv_rules.h"
#include "generate_rules.h"
#include "grad_rules.h"
#include "index_rules.h"
#include "layout_rules.h"
#include "matmul_rules.h"
#include "norm_rules.h"
#include "pool_rules.h"
#include "select_rules.h"
#include "sequence_rules.h"

#include <functional>
#include <memory>
#include <vector>

namespace tgl {

class DeviceBuffer;

// A checked view. offset and strides are in elements of dtype; an empty view's strides are all 0
// (it touches no memory, so whatever the caller gave is never used).
struct TensorArg {
    std::shared_ptr<DeviceBuffer> buffer;
    tgl_dtype dtype = TGL_DTYPE_INVALID;
    int rank = 0;
    int64_t shape[TGL_MAX_RANK] = {};
    int64_t strides[TGL_MAX_RANK] = {};
    int64_t offset = 0;  // element offset of element (0, ..., 0)
    int64_t numel = 0;
    // Lowest and highest byte touched (inclusive range [lo, hi)); empty views have lo == hi.
    int64_t byte_lo = 0, byte_hi = 0;
    // False for an absent optional operand (buffer handle 0): no buffer, rank 0, numel 0.
    bool present() const { return buffer != nullptr; }
};

// Elementwise ops: the output iterated in row-major order over `shape`; operand 0 is the output,
// operands 1.. are the inputs with broadcasting folded in as stride 0. Dims of size 1 are dropped
// and dims contiguous in every operand are merged, so rank is often 1.
struct ElementwisePlan {
    static constexpr int kMaxOperands = 4;  // y and up to 3 inputs (where)
    int n_operands = 0;
    int rank = 0;
    int64_t shape[TGL_MAX_RANK] = {};
    int64_t strides[kMaxOperands][TGL_MAX_RANK] = {};
    int64_t offset[kMaxOperands] = {};
    int64_t numel = 0;
};

// Reductions: y[outer] = reduce over inner of x[outer, inner]. Outer dims are the kept dims in
// order; inner dims are the reduced ones.
struct ReducePlan {
    int64_t out_count = 0, reduce_count = 0;
    int outer_rank = 0;
    int64_t outer_shape[TGL_MAX_RANK] = {};
    int64_t outer_x_strides[TGL_MAX_RANK] = {};
    int64_t outer_y_strides[TGL_MAX_RANK] = {};
    int inner_rank = 0;
    int64_t inner_shape[TGL_MAX_RANK] = {};
    int64_t inner_x_strides[TGL_MAX_RANK] = {};
    int64_t x_offset = 0, y_offset = 0;
};

struct OpCall {
    const OpInfo* info = nullptr;
    // The caller's params struct (NULL: defaults); valid only while the call is being run or recorded.
    const void* params = nullptr;
    tgl_dtype dtype = TGL_DTYPE_INVALID;  // dtype of the first input (of the output if none)
    std::vector<TensorArg> inputs, outputs;
    bool noop = false;  // every output is empty: nothing to run

    uint32_t gelu_approximate = TGL_GELU_ERF;
    // Scalar parameters of elementwise ops: leaky_relu {slope}; elu, celu {alpha}; softplus
    // {beta, threshold}; clamp {min, max}. Unused entries are 0.
    float scalars[2] = {0.0f, 0.0f};
    ElementwisePlan elementwise;  // Unary, Binary, Ternary
    ReducePlan reduce;            // Reduce; ArgReduce and Scan (one reduced axis: inner_rank 1)
    MatmulPlan matmul;            // Matmul
    // var/std: the correction (Bessel's 1 by default). norm: ord 1 or 2.
    float correction = 1.0f;
    int norm_ord = 2;
    // Scan (cumsum/cumprod): reduce.inner_* is the scanned axis (inner_rank 1, or 0 when the axis
    // has size 1), reduce.outer_* the other dims (one row each); scan_y_stride is y's stride along
    // the axis.
    int64_t scan_y_stride = 0;
    bool scan_exclusive = false, scan_reverse = false;
    NormPlan norm;          // Normalize
    LayoutPlan layout;      // Layout
    IndexPlan index;        // Index
    SelectPlan select;      // Select
    GeneratePlan generate;  // Generate
    ConvPlan conv;  // Conv
    PoolPlan pool;  // Pool
    AttentionPlan attention;  // Attention
    SequencePlan sequence;  // Sequence
    GradPlan grad;  // Grad
};

// Resolves a buffer handle of the device the op runs on; throws INVALID_HANDLE / STALE_HANDLE
// naming `what`.
using BufferLookup = std::function<std::shared_ptr<DeviceBuffer>(tgl_buffer, const char* what)>;

// Validates everything; throws tgl::Error with the status and a message naming the argument.
// The op must be in the catalogue and not planned (the caller checks that first).
OpCall validate_op(const OpInfo& info, const void* params, const tgl_tensor* inputs,
                   uint32_t n_inputs, const tgl_tensor* outputs, uint32_t n_outputs,
                   const BufferLookup& lookup);

// The Scan plan (call.reduce, scan_*) of a (dy) -> (dx) call with tgl_scan_params; for the Grad
// family's cumsum_backward, which is a scan.
void plan_scan_for(OpCall& call, const void* params);

// "(2, 3, 5)"
std::string shape_string(int rank, const int64_t* shape);
const char* dtype_name(tgl_dtype dtype);

}  // namespace tgl
