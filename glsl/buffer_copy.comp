// buffer_copy of 16-byte aligned ranges: 16 bytes per load and store (glCopyBufferSubData ran
// 175 GB/s on NVIDIA's GLES driver, a compute copy 3+ TB/s). Each invocation moves PER_INV uvec4s
// spaced WG_SIZE apart, so every load and store instruction of a workgroup is one contiguous run.
// The host copies a tail shorter than 16 bytes, and ranges that are not 16-byte aligned, with
// glCopyBufferSubData. Source and destination never overlap (checked before).
//
// Defines: WG_SIZE, PER_INV.
#include "grid.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer DstBuffer { uvec4 dst_data[]; };
layout(std430, binding = 1) readonly buffer SrcBuffer { uvec4 src_data[]; };

uniform uint u_count;       // uvec4s to copy
uniform uint u_dst_first;   // first uvec4, relative to the bound windows
uniform uint u_src_first;

void main() {
    uint first = tgl_group_index() * uint(WG_SIZE * PER_INV) + gl_LocalInvocationID.x;
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
}
