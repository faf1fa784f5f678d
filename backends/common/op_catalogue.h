// The op catalogue: for every op id of the ABI, its name, family, operands and parameter struct.
// Shared by both plugins so that the capability query and validation mean the same everywhere.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

enum class OpFamily { Unary, Binary, Reduce, Matmul, Planned };

struct OpInfo {
    tgl_op op;
    const char* name;
    OpFamily family;
    uint32_t n_inputs;
    uint32_t n_outputs;
    const char* operand_names[TGL_MAX_OP_INPUTS + TGL_MAX_OP_OUTPUTS];  // inputs, then outputs
    uint32_t params_size;  // sizeof the params struct (0 for planned ops)
};

// nullptr if `op` is not in the catalogue.
const OpInfo* find_op(tgl_op op);

// Every op of the catalogue, in id order.
const OpInfo* all_ops(uint32_t* count);

}  // namespace tgl
