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

#include "dispatch_util.h"
#include "gles_device.h"
#include "status.h"

#include <algorithm>
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

// The loop passes of a workgroup tree reduction over wg invocations (its halving loop is not
// unrolled).
inline uint64_t tree_passes(int wg) {
    uint64_t n = 1;
    for (int h = wg / 2; h > 0; h /= 2) ++n;
    return n;
}

// How a row that a workgroup walks (wg invocations, each every wg-th element) is cut: `splits`
// chunks of `chunk` elements (multiples of wg), a workgroup each, so that one invocation's loop
// passes stay within loop_budget(dev): `walks` walks over its share of a chunk, `trees` tree
// reductions and, where the row is cut, `merges` walks over the row's chunk partials (norm.comp's
// ROW_CHUNKS, grad.comp's). {len, 1} where the whole row fits; fails (check_loop_budget) where even
// chunks of one element per invocation do not.
struct RowChunks {
    uint64_t chunk, splits;
};
inline RowChunks plan_row_chunks(const GlesDevice& dev, const char* op, uint64_t len, int wg, int walks, int trees, int merges) {
    const uint64_t budget = loop_budget(dev);
    const uint64_t fixed = uint64_t(trees) * tree_passes(wg);
    auto cost = [&](uint64_t chunk, uint64_t splits) {
        const uint64_t walk = uint64_t(walks) * loop_cost(ceil_div(chunk, uint64_t(wg)));
        return fixed + walk + (splits > 1 ? uint64_t(merges) * loop_cost(splits) : 0);
    };
    if (cost(len, 1) <= budget) return {len, 1};
    // Elements per invocation with room for the partials' walks, then fewer while it does not fit.
    uint64_t per = std::max<uint64_t>(1, loop_items_within(budget, uint64_t(walks), fixed + uint64_t(walks)));
    RowChunks c{per * uint64_t(wg), ceil_div(len, per * uint64_t(wg))};
    while (per > 1 && cost(c.chunk, c.splits) > budget) {
        per -= std::max<uint64_t>(1, per / 16);
        c = {per * uint64_t(wg), ceil_div(len, per * uint64_t(wg))};
    }
    check_loop_budget(dev, cost(c.chunk, c.splits), op, "the walk over one row's elements");
    return c;
}

}  // namespace gles
}  // namespace tgl
