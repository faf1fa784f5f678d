// Host-side helpers shared by the GLES kernel files: 32-bit index checks, define values and the
// split of a 1-D grid into dispatches within the device's workgroup-count limits.
#pragma once

#include "gles_device.h"
#include "status.h"

#include <string>
#include <vector>

namespace tgl {
namespace gles {

// GLSL ES 3.10 has no 64-bit integers: every index, offset and stride a shader sees is 32-bit.
inline int32_t to_i32(int64_t v, const char* what) {
    if (v < INT32_MIN || v > INT32_MAX)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "%s = %lld does not fit the 32-bit index arithmetic of GLSL ES 3.10", what,
             (long long)v);
    return int32_t(v);
}

inline uint32_t count_u32(int64_t n, const char* what) {
    if (n < 0 || n > INT32_MAX)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "%s has %lld elements; GLSL ES 3.10 indexes with 32-bit integers, so at most 2147483647 are supported",
             what, (long long)n);
    return uint32_t(n);
}

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

inline std::string str(long long v) { return std::to_string(v); }

// One dispatch per grid chunk of a 1-D kernel, each with its u_group_base.
inline void add_chunks(GlesDevice& dev, const Dispatch& base, uint64_t groups, std::vector<Dispatch>& out) {
    for (const GridChunk& c : dev.split_grid(groups)) {
        Dispatch d = base;
        d.uniforms.push_back(uniform_uint("u_group_base", {c.base}));
        d.groups[0] = c.x;
        d.groups[1] = c.y;
        d.groups[2] = 1;
        out.push_back(std::move(d));
    }
}

}  // namespace gles
}  // namespace tgl
