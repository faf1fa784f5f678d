// Shape rules and params of the elementwise families (Unary, Binary, Ternary: the ops of ids 1xx,
// 2xx and cast). Called by validate_op(); the plan is call.elementwise (validate.h).
#pragma once

namespace tgl {

struct OpCall;

// The op's params (gelu form, scalars of leaky_relu/elu/celu/softplus/clamp) into the call.
void read_elementwise_params(OpCall& call, const void* params);
// Output shape = the inputs' broadcast (unary: x's shape); strides merged over every operand.
void plan_elementwise(OpCall& call);

}  // namespace tgl
