// Shape rules and index plan of the Select family (topk, sort, argsort).
// Included by validate.h; plan_select() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

// One row = the elements of x along the axis at one index of the other ("outer") dims, in x's
// dim order. Outputs: values (topk, sort; absent for argsort) and indices, each with k elements
// along the axis (k = n for sort/argsort). Offsets and strides are in elements of each operand.
struct SelectPlan {
    int64_t n = 0;     // elements of x along the axis (1 for a rank-0 x)
    int64_t k = 0;     // elements of the outputs along the axis
    int64_t rows = 0;  // product of the outer dims
    bool descending = false;
    bool has_values = false;  // outputs[0] is values (topk, sort); otherwise outputs[0] is indices
    int outer_rank = 0;
    int64_t outer_shape[TGL_MAX_RANK] = {};
    int64_t outer_x_strides[TGL_MAX_RANK] = {};
    int64_t outer_v_strides[TGL_MAX_RANK] = {};
    int64_t outer_i_strides[TGL_MAX_RANK] = {};
    int64_t x_stride = 0, v_stride = 0, i_stride = 0;  // along the axis
    int64_t x_offset = 0, v_offset = 0, i_offset = 0;
};

// Reads the op's params, checks shapes against them and fills call.select. Throws tgl::Error.
void plan_select(OpCall& call, const void* params);

}  // namespace tgl
