// Shape rules and copy plan of the Layout family (contiguous, concat, pad, tile, roll, permute,
// reshape, slice, narrow, split, stack, expand, flip). Included by validate.h; plan_layout() is
// called by validate_op() for every op of the family.
//
// Every op of the family is planned as a short list of copy steps, and one strided copy executes
// each step (the CPU plugin with a plain loop, the GLES plugin with glsl/copy.comp). A step writes
// `count` elements of one output; element i of the step (i in [0, count)) is found as follows.
//   Map steps (linear == false): i is unravelled row-major over shape[0..rank) into coordinates
//     c_d. The output element is out_offset + sum_d c_d * out_strides[d]. For every dim d the input
//     coordinate is k_d = start[d] + step[d] * c_d, then by mode[d]:
//       Direct: used as it is (the planner guarantees 0 <= k_d < in_size[d]);
//       Wrap: k_d mod in_size[d] (roll, tile);
//       Reflect: -k_d below 0, 2 (in_size[d] - 1) - k_d above the end (pad reflect; the planner
//         guarantees one reflection is enough);
//       Clamp: clamped to [0, in_size[d] - 1] (pad replicate);
//       Constant: outside [0, in_size[d]) the element is the constant `value_bits`, whatever the
//         other dims say (pad constant).
//     The input element is in_offset + sum_d k_d * in_strides[d] (in_strides may be 0 or negative).
//   Linear steps (linear == true; reshape, flattened roll): the output element is the element of
//     row-major index out_lin + i of the output view (shape, out_strides, out_offset); the input
//     element is the element of row-major index in_lin + i of the input view (in_shape,
//     in_lin_strides, in_offset), two independent unravellings.
//   input == -1: every element of the step is the constant value_bits (x is never read).
// After planning, dims of size 1 are gone, Direct dims have start 0, step 1 (folded into
// in_offset and in_strides) and in_size equal to their size, and neighbouring dims that are contiguous on both sides are merged,
// so rank is usually 1 or 2. Steps with count 0 are not listed. Offsets and strides are in
// elements of the op's dtype (the same on both sides).
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>
#include <vector>

namespace tgl {

struct OpCall;

enum class CoordMode : int32_t { Direct = 0, Wrap = 1, Reflect = 2, Clamp = 3, Constant = 4 };

struct CopyStep {
    int input = 0;   // index into call.inputs; -1: no input (every element is the constant)
    int output = 0;  // index into call.outputs
    int64_t count = 0;
    bool linear = false;
    // The output side (both kinds).
    int rank = 0;
    int64_t shape[TGL_MAX_RANK] = {};
    int64_t out_strides[TGL_MAX_RANK] = {};
    int64_t out_offset = 0;
    // Map steps: per output dim.
    int64_t in_strides[TGL_MAX_RANK] = {};
    int64_t start[TGL_MAX_RANK] = {};
    int64_t step[TGL_MAX_RANK] = {};
    int64_t in_size[TGL_MAX_RANK] = {};
    CoordMode mode[TGL_MAX_RANK] = {};
    int64_t in_offset = 0;
    // Linear steps: the input's own shape and strides, and where both sides start.
    int in_rank = 0;
    int64_t in_shape[TGL_MAX_RANK] = {};
    int64_t in_lin_strides[TGL_MAX_RANK] = {};
    int64_t in_lin = 0, out_lin = 0;

    // Whether any dim needs its coordinate (a mode other than Direct).
    bool has_boundary() const {
        for (int d = 0; d < rank; ++d)
            if (mode[d] != CoordMode::Direct) return true;
        return false;
    }
};

struct LayoutPlan {
    std::vector<CopyStep> steps;
    // The pad constant as the output dtype's bits (low bits of the word), converted as op 'cast'
    // converts a double.
    uint64_t value_bits = 0;
};

// Reads the op's params, checks shapes against them and fills call.layout. Throws tgl::Error.
void plan_layout(OpCall& call, const void* params);

}  // namespace tgl
