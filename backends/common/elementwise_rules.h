// Shape rules and params of the elementwise families (Unary, Binary, Ternary: the ops of ids 1xx,
// 2xx and cast). Called by validate_op() (op_families.h); the plan is call.elementwise().
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

// Elementwise ops: the output iterated in row-major order over `shape`; operand 0 is the output,
// operands 1.. are the inputs with broadcasting folded in as stride 0. Dims of size 1 are dropped
// and dims contiguous in every operand are merged, so rank is often 1.
struct ElementwisePlan {
    static constexpr int kMaxOperands = 1 + TGL_MAX_OP_INPUTS;  // y and the inputs (add_n: up to 8)
    int n_operands = 0;
    int rank = 0;
    int64_t shape[TGL_MAX_RANK] = {};
    int64_t strides[kMaxOperands][TGL_MAX_RANK] = {};
    int64_t offset[kMaxOperands] = {};
    int64_t numel = 0;
    uint32_t gelu_approximate = TGL_GELU_ERF;
    // Scalar parameters: leaky_relu {slope}; elu, celu {alpha}; softplus {beta, threshold};
    // clamp {min, max}. Unused entries are 0.
    float scalars[2] = {0.0f, 0.0f};
};

// The op's params (gelu form, scalars of leaky_relu/elu/celu/softplus/clamp) into a new
// call.elementwise(); validate_op calls it before it checks the operands.
void read_elementwise_params(OpCall& call, const void* params);
// Output shape = the inputs' broadcast (unary: x's shape); strides merged over every operand.
// Completes the plan that read_elementwise_params started (params: unused, read there).
void plan_elementwise(OpCall& call, const void* params);

}  // namespace tgl
