// buffer_copy and buffer_fill of 16-byte aligned ranges, 16 bytes per store (glCopyBufferSubData
// ran 175 GB/s on NVIDIA's GLES driver, fill.comp's one word per invocation 1.1 TB/s, this 2.5+ TB/s).
// Each invocation moves PER_INV uvec4s spaced WG_SIZE apart, so every load and store instruction of
// a workgroup is one contiguous run. The host handles what is not 16-byte aligned: a copy's tail by
// glCopyBufferSubData, a fill's head and tail by fill.comp. A copy's ranges never overlap (checked
// before).
//
// Defines: WG_SIZE, PER_INV; FILL (store u_pattern: the fill pattern replicated to 16 bytes, and
// every quad starts at an absolute multiple of 16) or a copy from SrcBuffer.
#include "grid.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer DstBuffer { uvec4 dst_data[]; };
#if defined(FILL)
uniform uvec4 u_pattern;
#else
layout(std430, binding = 1) readonly buffer SrcBuffer { uvec4 src_data[]; };
uniform uint u_src_first;   // first uvec4, relative to the bound window
#endif

uniform uint u_count;       // uvec4s to store
uniform uint u_dst_first;   // first uvec4, relative to the bound window

void main() {
    uint first = tgl_group_index() * uint(WG_SIZE * PER_INV) + gl_LocalInvocationID.x;
#if defined(FILL)
    for (int j = 0; j < PER_INV; ++j) {
        uint i = first + uint(j * WG_SIZE);
        if (i < u_count) dst_data[u_dst_first + i] = u_pattern;
    }
#else
    // All loads before the first store: PER_INV loads in flight per invocation.
    uvec4 v[PER_INV];
    for (int j = 0; j < PER_INV; ++j) {
        uint i = first + uint(j * WG_SIZE);
        if (i < u_count) v[j] = src_data[u_src_first + i];
    }
    for (int j = 0; j < PER_INV; ++j) {
        uint i = first + uint(j * WG_SIZE);
        if (i < u_count) dst_data[u_dst_first + i] = v[j];
    }
#endif
}
