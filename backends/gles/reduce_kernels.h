// GLES host side of argmax, argmin, logsumexp, var, std, any, all, norm (glsl/reduce_state.comp)
// and cumsum, cumprod (glsl/scan.comp).
#pragma once

#include "gles_device.h"

namespace tgl {
namespace gles {

// Whether these kernels cover `op` in every dtype of its catalogue rule.
bool reduce_more_implements(tgl_op op);
// Queues a validated, non-empty call of one of those ops; false if `op` is not one of them.
bool run_reduce_more(GlesDevice& dev, const OpCall& call);

}  // namespace gles
}  // namespace tgl
