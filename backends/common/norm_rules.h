// Shape rules and index plan of the Normalize family (softmax, log_softmax, layer_norm, rms_norm, group_norm, batch_norm, add_layer_norm, add_rms_norm).
// Included by validate.h; plan_norm() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct NormPlan {
};

// Reads the op's params, checks shapes against them and fills call.norm. Throws tgl::Error.
void plan_norm(OpCall& call, const void* params);

}  // namespace tgl
