// GLES host side of sum, mean, max, min, prod (glsl/reduce.comp; run_reduce in gles_device.h),
// argmax, argmin, logsumexp, var, std, any, all, norm (glsl/reduce_state.comp) and cumsum, cumprod
// (glsl/scan.comp).
#pragma once

#include "gles_device.h"

namespace tgl {
namespace gles {

// Queues a validated, non-empty call of argmax..cumprod; false if `op` is not one of them.
bool run_reduce_more(GlesDevice& dev, const OpCall& call);

}  // namespace gles
}  // namespace tgl
