// Shape rules and index plan of the Pool family (pooling 1d/2d/3d, global and adaptive pooling, upsampling, pooling backward).
// Included by validate.h; plan_pool() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct PoolPlan {
};

void plan_pool(OpCall& call, const void* params);

}  // namespace tgl
