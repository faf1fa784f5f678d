// The CPU reference kernels. Each follows the index plan that validate_op() built (validate.h):
// it reads any dtype exactly as double, computes in double, and rounds once when it stores.
#pragma once

#include "validate.h"

#include <vector>

namespace tgl {
namespace cpu {

// Runs a validated, non-empty call, using at most `threads` threads: the run function of the op's
// family (op_families.cpp: the entry it registered). Every operand's buffer is a CpuBuffer.
void run(const OpCall& call, unsigned threads);

// How the plugin runs one OpFamily. Each family's <family>_kernels.cpp registers its entries in
// register_<family>_kernels(); registered_family_kernels() is generated from TGL_OP_FAMILIES
// (cmake/op_families.cmake).
struct CpuFamily {
    OpFamily family;
    void (*run)(const OpCall& call, unsigned threads);
};
std::vector<CpuFamily> registered_family_kernels();

// The run functions of the families, each in its <family>_kernels.cpp, which registers it. A new
// family's needs no line here unless another family's kernel calls it (as grad calls run_scan).
void run_unary(const OpCall& call, unsigned threads);  // elementwise_kernels.cpp
void run_binary(const OpCall& call, unsigned threads);
void run_where(const OpCall& call, unsigned threads);  // Ternary
void run_reduce(const OpCall& call, unsigned threads);  // reduce_kernels.cpp
void run_arg_reduce(const OpCall& call, unsigned threads);
void run_scan(const OpCall& call, unsigned threads);  // also cumsum_backward (Grad)
void run_matmul(const OpCall& call, unsigned threads);
void run_norm(const OpCall& call, unsigned threads);
void run_layout(const OpCall& call, unsigned threads);
void run_index(const OpCall& call, unsigned threads);
void run_select(const OpCall& call, unsigned threads);
void run_generate(const OpCall& call, unsigned threads);
void run_conv(const OpCall& call, unsigned threads);
void run_pool(const OpCall& call, unsigned threads);
void run_attention(const OpCall& call, unsigned threads);
void run_sequence(const OpCall& call, unsigned threads);
void run_grad(const OpCall& call, unsigned threads);

}  // namespace cpu
}  // namespace tgl
