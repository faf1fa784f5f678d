// GLES host side of sum, mean, max, min, prod (glsl/reduce.comp; run_reduce in gles_device.h),
// argmax, argmin, logsumexp, var, std, any, all, norm (glsl/reduce_state.comp) and cumsum, cumprod
// (glsl/scan.comp).
#pragma once

#include "gles_device.h"

#include <initializer_list>
#include <utility>

namespace tgl {
namespace gles {

// Queues a validated, non-empty call of argmax..cumprod; false if `op` is not one of them.
bool run_reduce_more(GlesDevice& dev, const OpCall& call);

// Kernel tuning by environment (TGL_TUNE_REDUCE, TGL_TUNE_NORM): the variable `name`, if set, is
// '_'-separated tokens <key><number> (e.g. "rwg256_ru4"); each known key sets its int, unknown
// keys and malformed tokens are ignored. For the GPU sweep: the defaults are the guesses.
void read_tune(const char* name, std::initializer_list<std::pair<const char*, int*>> keys);

}  // namespace gles
}  // namespace tgl
