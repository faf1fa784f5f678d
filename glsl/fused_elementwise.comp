// A chain of float elementwise ops fused by a recorded graph (backends/gles/graph_fusion.cpp): one
// invocation per element of the chain's common output shape runs every stage in order, each
// stage's result rounded to its output's dtype and stored there (every intermediate the user could
// download is still written), the next stages reading that rounded value from a register.
//
// Defines (the variant preamble):
//   N_VIEWS     operand views (1..8), view v bound at binding v (views[v]) as uint words (dtype.glsl)
//   V_DTYPES    the views' dtypes (f32, f16 or bf16), comma-separated
//   V_READ      per view, whether it is loaded (some stage reads it before any stage writes it)
//   STAGES      ops of the chain (1..8)
//   S<k>_FN     stage k's function of elementwise_ops.glsl (tgl_op_<name>)
//   S<k>_A, S<k>_B   its operands: x[v] (view v's loaded value) or r[j] (stage j's result, j < k);
//               S<k>_B is 0.0 for a unary op
//   S<k>_OUT    the view stage k stores into
//   RANK        rank of the index space after merging dims (0..8)
//   CONTIG      rank 1 with unit strides in every view
//   WG_SIZE     invocations per workgroup
// Uniforms: u_numel, u_offset[v] and u_stride[v * RANK + d] (elements, relative to view v's
// window), u_shape, u_scalars[2k], u_scalars[2k + 1] (stage k's scalar parameters) and u_zero.
//
// Bit-identical to the unfused ops: each stage calls the same function as elementwise.comp on the
// same f32 values, and its result passes through its integer bits XOR u_zero (always 0, but the
// compiler cannot know it), so that no multiply-add of two stages is contracted into an fma or
// otherwise computed at another precision than the unfused kernels' stores and loads give.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"
#include "elementwise_ops.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer View { uint d[]; } views[N_VIEWS];
#include "store.glsl"

const int kDtype[N_VIEWS] = int[N_VIEWS](V_DTYPES);
const bool kRead[N_VIEWS] = bool[N_VIEWS](V_READ);

uniform uint u_numel;
uniform int u_offset[N_VIEWS];
#if RANK > 0 && !defined(CONTIG)
uniform int u_shape[RANK];
uniform int u_stride[N_VIEWS * RANK];
#endif
uniform float u_scalars[2 * STAGES];
uniform uint u_zero;

// View V's element (a literal V: an SSBO array is indexed by constant expressions only in ES 3.1).
#define LOAD(V) x[V] = tgl_to_f32(tgl_extract(views[V].d[tgl_word_of(o[V], kDtype[V])], o[V], kDtype[V]), kDtype[V]);
// Stage K: FN(A, B) rounded to view OUT's dtype, XOR u_zero, stored there; r[K] is what was stored.
#define STAGE(K, FN, A, B, OUT)                                                                   \
    {                                                                                             \
        uint bits = tgl_from_f32(FN(A, B, u_scalars[2 * K], u_scalars[2 * K + 1]), kDtype[OUT]) ^ u_zero; \
        r[K] = tgl_to_f32(bits, kDtype[OUT]);                                                     \
        TGL_STORE_BITS(views[OUT].d, o[OUT], bits, kDtype[OUT])                                   \
    }

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
    // Every view that is read, loaded before the first store (an in-place stage reads its element
    // first; a view that an earlier stage wrote is read from that stage's register instead).
    float x[N_VIEWS];
    if (kRead[0]) LOAD(0)
#if N_VIEWS > 1
    if (kRead[1]) LOAD(1)
#endif
#if N_VIEWS > 2
    if (kRead[2]) LOAD(2)
#endif
#if N_VIEWS > 3
    if (kRead[3]) LOAD(3)
#endif
#if N_VIEWS > 4
    if (kRead[4]) LOAD(4)
#endif
#if N_VIEWS > 5
    if (kRead[5]) LOAD(5)
#endif
#if N_VIEWS > 6
    if (kRead[6]) LOAD(6)
#endif
#if N_VIEWS > 7
    if (kRead[7]) LOAD(7)
#endif
    float r[STAGES];
    STAGE(0, S0_FN, S0_A, S0_B, S0_OUT)
#if STAGES > 1
    STAGE(1, S1_FN, S1_A, S1_B, S1_OUT)
#endif
#if STAGES > 2
    STAGE(2, S2_FN, S2_A, S2_B, S2_OUT)
#endif
#if STAGES > 3
    STAGE(3, S3_FN, S3_A, S3_B, S3_OUT)
#endif
#if STAGES > 4
    STAGE(4, S4_FN, S4_A, S4_B, S4_OUT)
#endif
#if STAGES > 5
    STAGE(5, S5_FN, S5_A, S5_B, S5_OUT)
#endif
#if STAGES > 6
    STAGE(6, S6_FN, S6_A, S6_B, S6_OUT)
#endif
#if STAGES > 7
    STAGE(7, S7_FN, S7_A, S7_B, S7_OUT)
#endif
}
