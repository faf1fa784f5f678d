// Shape rules and index plan of the Select family (topk, sort, argsort).
// Included by validate.h; plan_select() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct SelectPlan {
};

// Reads the op's params, checks shapes against them and fills call.select. Throws tgl::Error.
void plan_select(OpCall& call, const void* params);

}  // namespace tgl
