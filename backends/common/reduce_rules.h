// Shape rules of the reduction families, called by validate_op(): Reduce (sum .. norm over a set
// of axes), ArgReduce (argmax, argmin) and Scan (cumsum, cumprod); the plan is call.reduce and the
// scan_* fields (validate.h). plan_scan_for (validate.h) plans cumsum_backward as a scan.
#pragma once

namespace tgl {

struct OpCall;

void plan_reduce(OpCall& call, const void* params);
void plan_arg_reduce(OpCall& call, const void* params);
void plan_scan(OpCall& call, const void* params);

}  // namespace tgl
