// Shape rules and index plan of the Conv family (convolution 1d/2d/3d, transposed convolution, conv2d backward).
// Included by validate.h; plan_conv() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct ConvPlan {
};

void plan_conv(OpCall& call, const void* params);

}  // namespace tgl
