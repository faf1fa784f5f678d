// Shape rules and index plan of the Index family (gather, index_select, scatter, scatter_add, one_hot).
// Included by validate.h; plan_index() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct IndexPlan {
};

// Reads the op's params, checks shapes against them and fills call.index. Throws tgl::Error.
void plan_index(OpCall& call, const void* params);

}  // namespace tgl
