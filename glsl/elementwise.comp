// Every elementwise op: y[i] = OP(a[i]), OP(a[i], b[i]) or OP(a[i], b[i], c[i]) over an N-d index
// space (ElementwisePlan: rank up to 8, broadcasting folded in as stride 0, negative strides
// allowed), for operands of any dtype.
//
// Defines (the variant preamble):
//   OP_<NAME>   the op, e.g. OP_ADD, OP_GELU_ERF, OP_CAST (exactly one)
//   BITS_OP     the op is one of dtype_ops.glsl (cast, logical_not, compare, logical, where): it
//               maps element bits to element bits; otherwise it is a float op of
//               elementwise_ops.glsl, computed in f32 (f16 operands are widened exactly and the
//               result rounded to nearest even at the store)
//   N_IN        1 (unary), 2 (binary) or 3 (where: a = cond, b, c = the sources)
//   Y_DTYPE, A_DTYPE, B_DTYPE, C_DTYPE   the operands' dtypes (TGL_DTYPE_* values)
//   RANK        rank of the index space after collapsing (0..8)
//   CONTIG      rank 1 with unit strides in every operand (no stride multiplications)
//   VEC4        (f32 float ops only) rank 1, contiguous, 16-byte aligned: each invocation does 4
//               elements with vec4 loads and stores (u_numel and u_offset then count vec4s);
//               A_BCAST / B_BCAST mark an input of stride 0, read as one float. The host runs the
//               ragged tail (numel % 4) with the CONTIG or RANK 1 variant.
//   WG_SIZE     invocations per workgroup
// Operand offsets and strides are in elements, relative to the start of each bound SSBO window
// (which starts on a 16-byte boundary). Outside VEC4 every operand is an array of uint words
// (dtype.glsl): elements of 1 or 2 bytes are stored into their word with atomicAnd/atomicOr on
// just their bits, so neighbours written by other invocations are never lost.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#if defined(BITS_OP)
#include "dtype_ops.glsl"
#else
#include "math.glsl"
#include "elementwise_ops.glsl"
#endif

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
#define Y_TYPE uint
#define A_TYPE uint
#define B_TYPE uint
#endif

layout(std430, binding = 0) buffer YBuffer { Y_TYPE y_data[]; };
layout(std430, binding = 1) readonly buffer ABuffer { A_TYPE a_data[]; };
#if N_IN >= 2
layout(std430, binding = 2) readonly buffer BBuffer { B_TYPE b_data[]; };
#endif
#if N_IN >= 3
layout(std430, binding = 3) readonly buffer CBuffer { uint c_data[]; };
#endif

uniform uint u_numel;
uniform int u_offset[4];  // y, a, b, c
#if RANK > 0 && !defined(CONTIG)
uniform int u_shape[RANK];
uniform int u_stride_y[RANK];
uniform int u_stride_a[RANK];
#if N_IN >= 2
uniform int u_stride_b[RANK];
#endif
#if N_IN >= 3
uniform int u_stride_c[RANK];
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

// Element accessors: bits of element i of each operand, and the store of y.
uint a_bits(int i) { return tgl_extract(a_data[tgl_word_of(i, A_DTYPE)], i, A_DTYPE); }
#if N_IN >= 2
uint b_bits(int i) { return tgl_extract(b_data[tgl_word_of(i, B_DTYPE)], i, B_DTYPE); }
#endif
#if N_IN >= 3
uint c_bits(int i) { return tgl_extract(c_data[tgl_word_of(i, C_DTYPE)], i, C_DTYPE); }
#endif
#include "store.glsl"

void main() {
    uint i = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (i >= u_numel) return;
    int oy = u_offset[0];
    int oa = u_offset[1];
    int ob = u_offset[2];
    int oc = u_offset[3];
#if defined(CONTIG)
    oy += int(i);
    oa += int(i);
    ob += int(i);
    oc += int(i);
#elif RANK > 0
    // Row-major decomposition of i over u_shape (innermost dim last); dim 0 takes the quotient.
    uint rest = i;
    for (int d = RANK - 1; d >= 0; --d) {
        int c;
        if (d > 0) {
            uint n = uint(u_shape[d]);
            c = int(rest % n);
            rest /= n;
        } else {
            c = int(rest);
        }
        oy += c * u_stride_y[d];
        oa += c * u_stride_a[d];
#if N_IN >= 2
        ob += c * u_stride_b[d];
#endif
#if N_IN >= 3
        oc += c * u_stride_c[d];
#endif
    }
#endif
    uint a = a_bits(oa);
#if N_IN >= 2
    uint b = b_bits(ob);
#else
    uint b = 0u;
#endif
#if N_IN >= 3
    uint c = c_bits(oc);
#else
    uint c = 0u;
#endif
#if defined(BITS_OP)
    y_store_bits(oy, apply_bits(a, b, c));
#else
    float fa = tgl_to_f32(a, A_DTYPE);
#if N_IN >= 2
    float fb = tgl_to_f32(b, B_DTYPE);
#else
    float fb = 0.0;
#endif
    y_store_bits(oy, tgl_from_f32(apply_op(fa, fb), Y_DTYPE));
#endif
}

#endif
