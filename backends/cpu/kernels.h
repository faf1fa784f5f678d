// The CPU reference kernels. Each follows the index plan that validate_op() built (validate.h):
// it reads f32, computes in double, and rounds once to f32 when it stores.
#pragma once

#include "validate.h"

namespace tgl {
namespace cpu {

// Runs a validated, non-empty f32 call of the Unary, Binary, Reduce or Matmul family, using at
// most `threads` threads. Every operand's buffer is a CpuBuffer.
void run_f32(const OpCall& call, unsigned threads);

}  // namespace cpu
}  // namespace tgl
