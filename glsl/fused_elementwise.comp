// A chain of float elementwise ops fused by a recorded graph (backends/gles/graph_fusion.cpp): one
// invocation per element of the chain's common output shape runs every stage in order, each
// stage's result rounded to its output's dtype and stored there (every intermediate the user could
// download is still written), the next stages reading that rounded value from a register.
//
// The stages are fused_stages.glsl's (its defines: N_VIEWS, V_DTYPES, V_READ, STAGES, S<k>_*,
// FUSED_BINDING 0), with operand h unused (0.0). Defines of this kernel:
//   RANK        rank of the index space after merging dims (0..8)
//   CONTIG      rank 1 with unit strides in every view
//   WG_SIZE     invocations per workgroup
// Uniforms: u_numel, u_offset[v] and u_stride[v * RANK + d] (elements, relative to view v's
// window), u_shape.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"
#include "elementwise_ops.glsl"
#include "store.glsl"
#include "fused_stages.glsl"

layout(local_size_x = WG_SIZE) in;

uniform uint u_numel;
uniform int u_offset[N_VIEWS];
#if RANK > 0 && !defined(CONTIG)
uniform int u_shape[RANK];
uniform int u_stride[N_VIEWS * RANK];
#endif

void main() {
    uint i = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (i >= u_numel) return;
    int o[N_VIEWS];
    for (int v = 0; v < N_VIEWS; ++v) o[v] = u_offset[v];
#if defined(CONTIG)
    for (int v = 0; v < N_VIEWS; ++v) o[v] += int(i);
#elif RANK > 0
    // Row-major decomposition of i over u_shape (innermost dim last); dim 0 takes the quotient.
    uint rest = i;
    for (int dim = RANK - 1; dim >= 0; --dim) {
        int c;
        if (dim > 0) {
            uint n = uint(u_shape[dim]);
            c = int(rest % n);
            rest /= n;
        } else {
            c = int(rest);
        }
        for (int v = 0; v < N_VIEWS; ++v) o[v] += c * u_stride[v * RANK + dim];
    }
#endif
    fused_stages(o, 0.0);
}
