// Every elementwise op: y[i] = OP(a[i]), OP(a[i], b[i]) or OP(a[i], b[i], c[i]) over an N-d index
// space (ElementwisePlan: rank up to 8, broadcasting folded in as stride 0, negative strides
// allowed), for operands of any dtype.
//
// Defines (the variant preamble):
//   OP_<NAME>   the op, e.g. OP_ADD, OP_GELU_ERF, OP_CAST (exactly one)
//   OP_FN       (float ops) its function in elementwise_ops.glsl, e.g. tgl_op_add, tgl_op_gelu_erf
//   BITS_OP     the op is one of dtype_ops.glsl (cast, logical_not, compare, logical, where): it
//               maps element bits to element bits; otherwise it is a float op of
//               elementwise_ops.glsl, computed in f32 (f16 operands are widened exactly and the
//               result rounded to nearest even at the store)
//   INT_OP      an integer arithmetic op of int_ops.glsl (y of i32, i8, u8 or i64): exact int
//               values, the result's low bits stored (wrap-around); i64 on two words (WIDE)
//   N_IN        1 (unary), 2 (binary) or 3 (where: a = cond, b, c = the sources)
//   Y_DTYPE, A_DTYPE, B_DTYPE, C_DTYPE   the operands' dtypes (TGL_DTYPE_* values)
//   WIDE        an operand is i64 (cast, an INT_OP on i64, a comparison of i64): elements are
//               loaded and stored as a uvec2 (dtype.glsl's TGL_LOAD_WIDE, tgl_cast_wide;
//               int64.glsl; store.glsl's TGL_STORE_WIDE)
//   RANK        rank of the index space after collapsing (0..8)
//   CONTIG      rank 1 with unit strides in every operand (no stride multiplications)
//   VEC4        (f32 float ops only) y contiguous and 16-byte aligned, of rank 1, or of rank 2 with
//               rows of a multiple of 4 elements (u_row_quads vec4s each): each invocation does
//               PER_INV vec4s, WG_SIZE apart, with vec4 loads and stores (u_numel and u_offset count
//               vec4s). A_KIND / B_KIND say how an input is read: KIND_FULL like y (vec4 i),
//               KIND_SCALAR one float, KIND_ROW one row repeated over the rows (vec4 i % u_row_quads),
//               KIND_COL one float per row (element u_offset + row * u_col_stride). The host runs a
//               rank-1 ragged tail (numel % 4) with the CONTIG or RANK 1 variant.
//   GRID_STRIDE (VEC4) a fixed grid of u_group_count workgroups strides over the u_blocks blocks
//               of WG_SIZE * PER_INV quads (binary ops over two full-size inputs: on an H100 a
//               grid of about two workgroups per SM keeps two read streams and a write stream
//               nearer the memory's bandwidth than one workgroup per block)
//   WG_SIZE     invocations per workgroup
// Operand offsets and strides are in elements, relative to the start of each bound SSBO window
// (which starts on a 16-byte boundary). Outside VEC4 every operand is an array of uint words
// (dtype.glsl): elements of 1 or 2 bytes are stored into their word with atomicAnd/atomicOr on
// just their bits, so neighbours written by other invocations are never lost.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
// Before the op files, which include it too: an #include is resolved once, whatever #if surrounds
// it, so the first one must not sit in a branch that the variant drops.
#include "int64.glsl"
#if defined(BITS_OP)
#include "dtype_ops.glsl"
#elif defined(INT_OP)
#include "int_ops.glsl"
#else
#include "math.glsl"
#include "elementwise_ops.glsl"
#endif

layout(local_size_x = WG_SIZE) in;

#if defined(VEC4)
#define KIND_FULL 0
#define KIND_SCALAR 1
#define KIND_ROW 2
#define KIND_COL 3
#if !defined(B_KIND)
#define B_KIND KIND_FULL
#endif
#define Y_TYPE vec4
#if A_KIND == KIND_FULL || A_KIND == KIND_ROW
#define A_TYPE vec4
#else
#define A_TYPE float
#endif
#if B_KIND == KIND_FULL || B_KIND == KIND_ROW
#define B_TYPE vec4
#else
#define B_TYPE float
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
uniform uint u_row_quads;  // vec4s per row (rank 2)
uniform int u_col_stride[2];  // KIND_COL: a's and b's stride between rows, in elements

// Quad i of input k (1: a, 2: b), read as its kind says.
#define LOAD_QUAD(data, kind, k, i)                                                              \
    ((kind) == KIND_FULL     ? vec4(data[u_offset[k] + int(i)])                                  \
     : (kind) == KIND_SCALAR ? vec4(data[u_offset[k]])                                           \
     : (kind) == KIND_ROW    ? vec4(data[u_offset[k] + int((i) % u_row_quads)])                  \
                             : vec4(data[u_offset[k] + int((i) / u_row_quads) * u_col_stride[k - 1]]))

// Quads first, first + WG_SIZE, ... (PER_INV of them) of every operand: every load before the first
// store, PER_INV quads of each input in flight per invocation. A whole block (every quad inside)
// loads without bounds checks, so nothing stands between its loads; the last block checks each.
void run_block(uint first) {
    vec4 a[PER_INV], b[PER_INV];
    if (first + uint((PER_INV - 1) * WG_SIZE) < u_numel) {
        for (int j = 0; j < PER_INV; ++j) {
            uint i = first + uint(j * WG_SIZE);
            a[j] = LOAD_QUAD(a_data, A_KIND, 1, i);
#if N_IN == 2
            b[j] = LOAD_QUAD(b_data, B_KIND, 2, i);
#else
            b[j] = vec4(0.0);
#endif
        }
        for (int j = 0; j < PER_INV; ++j) {
            uint i = first + uint(j * WG_SIZE);
            y_data[u_offset[0] + int(i)] = vec4(apply_op(a[j].x, b[j].x), apply_op(a[j].y, b[j].y),
                                                apply_op(a[j].z, b[j].z), apply_op(a[j].w, b[j].w));
        }
        return;
    }
    for (int j = 0; j < PER_INV; ++j) {
        uint i = first + uint(j * WG_SIZE);
        if (i >= u_numel) break;
        a[j] = LOAD_QUAD(a_data, A_KIND, 1, i);
#if N_IN == 2
        b[j] = LOAD_QUAD(b_data, B_KIND, 2, i);
#else
        b[j] = vec4(0.0);
#endif
    }
    for (int j = 0; j < PER_INV; ++j) {
        uint i = first + uint(j * WG_SIZE);
        if (i >= u_numel) break;
        y_data[u_offset[0] + int(i)] = vec4(apply_op(a[j].x, b[j].x), apply_op(a[j].y, b[j].y),
                                            apply_op(a[j].z, b[j].z), apply_op(a[j].w, b[j].w));
    }
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
#if defined(WIDE)
    uvec2 wa = TGL_LOAD_WIDE(a_data, oa, A_DTYPE);
#if N_IN >= 2
    uvec2 wb = TGL_LOAD_WIDE(b_data, ob, B_DTYPE);
#else
    uvec2 wb = uvec2(0u);
#endif
#if defined(OP_CAST)
    y_store_wide(oy, tgl_cast_wide(wa, A_DTYPE, Y_DTYPE));
#elif defined(INT_OP)
    y_store_wide(oy, apply_int64(wa, wb));
#else
    y_store_bits(oy, apply_bits_wide(wa, wb));  // a comparison of i64 operands
#endif
#else
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
#elif defined(INT_OP)
    y_store_bits(oy, uint(apply_int(tgl_to_int(a, A_DTYPE), tgl_to_int(b, B_DTYPE))) & tgl_dt_mask(Y_DTYPE));
#else
    float fa = tgl_to_f32(a, A_DTYPE);
#if N_IN >= 2
    float fb = tgl_to_f32(b, B_DTYPE);
#else
    float fb = 0.0;
#endif
    y_store_bits(oy, tgl_from_f32(apply_op(fa, fb), Y_DTYPE));
#endif
#endif  // WIDE
}

#endif
