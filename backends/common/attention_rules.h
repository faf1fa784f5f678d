// Shape rules and index plan of the Attention family (scaled dot-product attention forward and backward).
// Included by validate.h; plan_attention() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct AttentionPlan {
};

void plan_attention(OpCall& call, const void* params);

}  // namespace tgl
