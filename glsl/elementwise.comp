// Every unary and binary elementwise op: y[i] = OP(a[i]) or OP(a[i], b[i]) over an N-d index space
// (ElementwisePlan: rank up to 8, broadcasting folded in as stride 0, negative strides allowed).
//
// Defines (the variant preamble):
//   OP_<NAME>   the op, e.g. OP_ADD, OP_GELU_ERF (exactly one; see elementwise_ops.glsl)
//   N_IN        1 (unary) or 2 (binary)
//   RANK        rank of the index space after collapsing (0..8)
//   CONTIG      rank 1 with unit strides in every operand (no stride multiplications)
//   VEC4        rank 1, contiguous, 16-byte aligned: each invocation does 4 elements with vec4
//               loads and stores (u_numel and u_offset then count vec4s); A_BCAST / B_BCAST mark
//               an input of stride 0, read as one float. The host runs the ragged tail (numel % 4)
//               with the CONTIG or RANK 1 variant.
//   WG_SIZE     invocations per workgroup
// Operand offsets and strides are in elements, relative to the start of each bound SSBO window.
#include "common.glsl"
#include "math.glsl"
#include "grid.glsl"
#include "elementwise_ops.glsl"

layout(local_size_x = WG_SIZE) in;

#if defined(VEC4)
#define Y_TYPE vec4
#if defined(A_BCAST)
#define A_TYPE float
#else
#define A_TYPE vec4
#endif
#if defined(B_BCAST)
#define B_TYPE float
#else
#define B_TYPE vec4
#endif
#else
#define Y_TYPE float
#define A_TYPE float
#define B_TYPE float
#endif

layout(std430, binding = 0) buffer YBuffer { Y_TYPE y_data[]; };
layout(std430, binding = 1) readonly buffer ABuffer { A_TYPE a_data[]; };
#if N_IN == 2
layout(std430, binding = 2) readonly buffer BBuffer { B_TYPE b_data[]; };
#endif

uniform uint u_numel;
uniform int u_offset[3];  // y, a, b
#if RANK > 0 && !defined(CONTIG)
uniform int u_shape[RANK];
uniform int u_stride_y[RANK];
uniform int u_stride_a[RANK];
#if N_IN == 2
uniform int u_stride_b[RANK];
#endif
#endif

#if defined(VEC4)

void main() {
    uint i = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (i >= u_numel) return;
#if defined(A_BCAST)
    vec4 a = vec4(a_data[u_offset[1]]);
#else
    vec4 a = a_data[u_offset[1] + int(i)];
#endif
#if N_IN == 2
#if defined(B_BCAST)
    vec4 b = vec4(b_data[u_offset[2]]);
#else
    vec4 b = b_data[u_offset[2] + int(i)];
#endif
#else
    vec4 b = vec4(0.0);
#endif
    y_data[u_offset[0] + int(i)] = vec4(apply_op(a.x, b.x), apply_op(a.y, b.y), apply_op(a.z, b.z), apply_op(a.w, b.w));
}

#else

void main() {
    uint i = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (i >= u_numel) return;
    int oy = u_offset[0];
    int oa = u_offset[1];
#if N_IN == 2
    int ob = u_offset[2];
#endif
#if defined(CONTIG)
    oy += int(i);
    oa += int(i);
#if N_IN == 2
    ob += int(i);
#endif
#elif RANK > 0
    // Row-major decomposition of i over u_shape (innermost dim last); dim 0 takes the quotient.
    uint rest = i;
    for (int d = RANK - 1; d > 0; --d) {
        uint n = uint(u_shape[d]);
        int c = int(rest % n);
        rest /= n;
        oy += c * u_stride_y[d];
        oa += c * u_stride_a[d];
#if N_IN == 2
        ob += c * u_stride_b[d];
#endif
    }
    int c0 = int(rest);
    oy += c0 * u_stride_y[0];
    oa += c0 * u_stride_a[0];
#if N_IN == 2
    ob += c0 * u_stride_b[0];
#endif
#endif
    float a = a_data[oa];
#if N_IN == 2
    float b = b_data[ob];
#else
    float b = 0.0;
#endif
    y_data[oy] = apply_op(a, b);
}

#endif
