// Shape rules and index plan of the Grad family (training: backward of softmax/log_softmax/layer_norm/rms_norm/cumsum/embedding, cross-entropy).
// Included by validate.h; plan_grad() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct GradPlan {
};

void plan_grad(OpCall& call, const void* params);

}  // namespace tgl
