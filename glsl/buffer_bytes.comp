// buffer_copy and buffer_fill of 16-byte aligned ranges, 16 bytes per store (glCopyBufferSubData
// ran 175 GB/s on NVIDIA's GLES driver, fill.comp's one word per invocation 1.1 TB/s, this 2.5+ TB/s).
// Each invocation moves PER_INV uvec4s spaced WG_SIZE apart, so every load and store instruction of
// a workgroup is one contiguous run. The host handles what is not 16-byte aligned: a copy's tail by
// glCopyBufferSubData, a fill's head and tail by fill.comp. A copy's ranges never overlap (checked
// before).
//
// Defines: WG_SIZE, PER_INV; FILL (store u_pattern: the fill pattern replicated to 16 bytes, and
// every quad starts at an absolute multiple of 16) or a copy from SrcBuffer; GRID_STRIDE: a fixed
// grid of u_group_count workgroups strides over the u_blocks blocks of WG_SIZE * PER_INV quads
// (TGL_TUNE_STREAM cg) instead of one workgroup per block.
#include "grid.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) writeonly buffer DstBuffer { uvec4 dst_data[]; };
#if defined(FILL)
uniform uvec4 u_pattern;
#else
layout(std430, binding = 1) readonly buffer SrcBuffer { uvec4 src_data[]; };
uniform uint u_src_first;   // first uvec4, relative to the bound window
#endif

uniform uint u_count;       // uvec4s to store
uniform uint u_dst_first;   // first uvec4, relative to the bound window

// Quads first, first + WG_SIZE, ... (PER_INV of them). A whole block stores without bounds checks
// (all its loads in flight before the first store); the last block checks each quad.
void run_block(uint first) {
    bool whole = first + uint((PER_INV - 1) * WG_SIZE) < u_count;
#if defined(FILL)
    for (int j = 0; j < PER_INV; ++j) {
        uint i = first + uint(j * WG_SIZE);
        if (whole || i < u_count) dst_data[u_dst_first + i] = u_pattern;
    }
#else
    uvec4 v[PER_INV];
    if (whole) {
        for (int j = 0; j < PER_INV; ++j) v[j] = src_data[u_src_first + first + uint(j * WG_SIZE)];
        for (int j = 0; j < PER_INV; ++j) dst_data[u_dst_first + first + uint(j * WG_SIZE)] = v[j];
        return;
    }
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

#if defined(GRID_STRIDE)
uniform uint u_blocks;       // blocks of WG_SIZE * PER_INV quads
uniform uint u_group_count;  // workgroups of the whole grid
#endif
void main() {
#if defined(GRID_STRIDE)
    // A split dispatch's last row may hold workgroups past the grid: they would repeat blocks of
    // the first ones (twice over an operand updated in place).
    if (tgl_group_index() >= u_group_count) return;
    for (uint blk = tgl_group_index(); blk < u_blocks; blk += u_group_count)
        run_block(blk * uint(WG_SIZE * PER_INV) + gl_LocalInvocationID.x);
#else
    run_block(tgl_group_index() * uint(WG_SIZE * PER_INV) + gl_LocalInvocationID.x);
#endif
}
