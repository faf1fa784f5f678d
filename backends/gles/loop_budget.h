// The per-invocation loop budget every GLES kernel plan keeps.
//
// Mesa's llvmpipe (gallivm, measured on Mesa 22.3) silently cuts loops short: one counter, set to
// 65535 when a SIMD batch of 8 consecutive invocations starts (barriers do not reset it), is
// decremented each time any loop of the shader reaches the end of its body, including the final
// pass that leaves the loop (a loop running t times costs t + 1; an inner loop costs that once per
// outer iteration). At 0 the running loop exits and every later loop runs its body once; the
// shader then finishes with wrong results. The batch's lanes share the counter, so a loop costs
// the largest trip count among them. Loops the compiler unrolls (small constant bounds) cost
// nothing. Real GPUs have no such limit.
//
// So each kernel plan counts the loop passes of its longest invocation (every loop, nested ones
// once per outer iteration, +1 per loop entry) and keeps them within loop_budget(dev), splitting
// the work across invocations or dispatches where it would not; a plan with no such split fails
// with check_loop_budget's error rather than returning TGL_OK over a cut-short loop. The budget
// applies where the driver limits loops (GlesDevice::loop_limited: llvmpipe, softpipe, and
// TGL_GLES_LIMITS=minimum, so that a GPU can run the same plans); elsewhere plans are unchanged.
#pragma once

#include "gles_device.h"
#include "status.h"

#include <cstdint>

namespace tgl {
namespace gles {

// Loop passes one invocation may take: half of llvmpipe's 65535, leaving room for the small loops a
// plan does not count (fixed-size tails, loops the compiler may or may not unroll).
constexpr uint64_t kLoopTripBudget = 32768;

// The budget of `dev`'s plans: kLoopTripBudget where loops are limited, else none (UINT64_MAX).
inline uint64_t loop_budget(const GlesDevice& dev) { return dev.loop_limited() ? kLoopTripBudget : UINT64_MAX; }

// The passes of a loop entered `entries` times that runs `trips` times per entry.
constexpr uint64_t loop_cost(uint64_t trips, uint64_t entries = 1) { return (trips + 1) * entries; }

// Fails with TGL_ERROR_RESOURCE_EXHAUSTED when `cost` loop passes exceed `dev`'s budget (`what`
// names the loop, e.g. "attention's key loop").
inline void check_loop_budget(const GlesDevice& dev, uint64_t cost, const char* op, const char* what) {
    if (cost > loop_budget(dev))
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "op '%s': %s would take %llu loop iterations in one shader invocation; on this device (whose driver "
             "stops loops after 65535) plans keep at most %llu, and this shape has no split that does",
             op, what, (unsigned long long)cost, (unsigned long long)kLoopTripBudget);
}

// The most items one invocation may walk within `budget` where each item costs `per_item` passes on
// top of `fixed` passes of its own (at least 1: a plan always makes progress).
constexpr uint64_t loop_items_within(uint64_t budget, uint64_t per_item, uint64_t fixed = 1) {
    return fixed + per_item > budget ? 1 : (budget - fixed) / (per_item ? per_item : 1);
}

}  // namespace gles
}  // namespace tgl
