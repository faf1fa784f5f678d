// CPU reference kernels of the reductions beyond sum/mean/max/min/prod: argmax, argmin, logsumexp,
// var, std, any, all, norm (ReducePlan) and the scans cumsum, cumprod (ReducePlan with the scanned
// axis as its one inner dim). Plain loops in double, one rounding at the store.
#pragma once

#include "validate.h"

namespace tgl {
namespace cpu {

// Runs a validated, non-empty call of argmax..cumprod; false if `op` is not one of them.
bool run_reduce_more(const OpCall& call, unsigned threads);

}  // namespace cpu
}  // namespace tgl
