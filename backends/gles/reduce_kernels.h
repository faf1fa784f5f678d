// GLES host side of argmax, argmin, logsumexp, var, std, any, all, norm (glsl/reduce_state.comp)
// and cumsum, cumprod (glsl/scan.comp).
#pragma once

#include "gles_device.h"

namespace tgl {
namespace gles {

// Queues a validated, non-empty call of argmax..cumprod; false if `op` is not one of them.
bool run_reduce_more(GlesDevice& dev, const OpCall& call);

}  // namespace gles
}  // namespace tgl
