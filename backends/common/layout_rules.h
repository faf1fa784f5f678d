// Shape rules and index plan of the Layout family (contiguous, concat, pad, tile, roll, permute, reshape, slice, narrow, split, stack, expand, flip).
// Included by validate.h; plan_layout() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct LayoutPlan {
};

// Reads the op's params, checks shapes against them and fills call.layout. Throws tgl::Error.
void plan_layout(OpCall& call, const void* params);

}  // namespace tgl
