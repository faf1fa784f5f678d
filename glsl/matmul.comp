// The Matmul family (backends/common/matmul_rules.h): matmul, linear, linear_qkv, grouped_linear,
// linear_int8, linear_int4, all one tiled kernel:
//   out[b, m, n] = act(alpha * sum_k A[b, m, k] W(e, k, n) + beta * out[b, m, n] + bias[e, n])
// with variants by define for the A loader (f32/f16/bf16), the B loader (f32/f16/bf16, int8 or packed int4
// dequantized on the fly), the epilogue (bias, activation, beta * C), the routing of the output
// columns to one or three tensors and the per-row expert (grouped_linear).
//
// Shared-memory tiled and register-blocked: a workgroup of (BN/TN) x (BM/TM) invocations computes
// a BM x BN tile; each invocation accumulates TM x TN outputs in registers, at rows
// ty + i*(BM/TM) and columns tx + j*(BN/TN) (so stores and reads of the B tile are consecutive
// across tx). K advances in steps of BK through tiles of A and B staged in shared memory as f32
// (dequantized once per tile element, then reused by all BM rows). Edges load zeros and skip stores.
//
// Experts (grouped_linear): rows of one tile may use different experts. The tile loops over the
// distinct experts of its rows in increasing order; in the pass for expert e, A rows of other
// experts load as zeros, so every row sums only its own expert's products (sort-free; a tile whose
// rows share one expert, e.g. tokens sorted by expert, does one pass). A dispatch serves only the
// rows whose expert is in [u_e_lo, u_e_hi) (the host splits the experts over dispatches where a
// tile's passes would exceed the loop budget); the others are neither computed nor stored.
//
// Side operands (index, bias, scales, zero points) come packed as f32 words (index: i32) in one
// scratch block by the pack pass (pack.comp; so the main pass needs at most A, B, side and
// the outputs: 4 SSBOs with one output). Word 0 of the block is the fail flag of grouped_linear:
// u_check_seq when an index was out of range, and then nothing is stored.
//
// FAST (float A and B, no experts; the host checks the layouts): A and B read as quads (4
// consecutive elements along k or along the rows: uvec4 of f32, uvec2 of f16/bf16), shared tiles of
// vec4, each invocation TM/4 x TN/4 quads of outputs as vec4 accumulators with constant indices,
// the next K step fetched into registers during the products (DOUBLE_BUF: two shared tiles).
// SPLIT_K (few tiles, long K): workgroup (tile, split) sums K range split and stores f32 partials
// to binding 2 ([split][batch][m][n]); PASS_REDUCE sums the splits of each output in order
// (deterministic) and runs the epilogue. PASS_GEMV (M <= 8, decode): the mat-vec partials without
// shared tiles, then PASS_REDUCE.
//
// Defines (main pass): BM, BN, BK, TM, TN, WG_X, WG_Y; A_K_FAST / B_N_FAST (which index consecutive
//   invocations load: chosen when that stride is 1, for coalescing); BATCH_RANK (0..6);
//   A_DTYPE, C_DTYPE (DT_F32 / DT_F16 / DT_BF16); B_KIND 0 float (B_DTYPE f32/f16/bf16: f16 or
//   bf16 also under an f32 A, mixed weights), 1 int8, 2 int4 (u8
//   bytes, low nibble = even k); HAS_SIDE; HAS_BIAS; HAS_ZERO; EXPERTS; READ_C (beta != 0);
//   N_OUT (1 or 3); ACTIVATION; FAST (+ A_QUAD_K / B_QUAD_K: quads along k, else along m / n;
//   DOUBLE_BUF; WARP_LN (warp tiles); K_ROLL (products in rolled groups); C_PAIR: f16/bf16 C whose even columns start words, stored a word at a time); SPLIT_K.
// PASS_GEMV: WG_X, GEMV_M (rows), GEMV_UNROLL, B_QUAD_K (+ GEMV_LK lanes per column) or quads
// along n (+ GEMV_KR lanes along k per quad of columns), GEMV_DIRECT (one K range: the epilogue's
// defines, outputs bound as in the main pass), TGL_SUBGROUP_SIZE (subgroup.glsl).
// PASS_REDUCE: WG_SIZE and the epilogue's defines.
// Grid: x = N tiles, y = M tiles, z = batch (SPLIT_K: batch x splits), each offset by u_tile_base
// (dispatches are split to stay within the workgroup-count limits). PASS_GEMV: x = column slabs,
// y = K ranges, z = batch. PASS_REDUCE: 1-D over the outputs (grid.glsl).
#include "dtype.glsl"
#include "store.glsl"
#include "grid.glsl"
#include "subgroup.glsl"


#include "activation.glsl"
#if defined(FAST) || defined(PASS_GEMV) || defined(PASS_REDUCE)
// NVIDIA: unroll every loop of constant trip count, so that the register arrays (acc, av, bv)
// are indexed by constants and stay in registers (other drivers ignore unknown pragmas).
#pragma optionNV(unroll all)
#endif

#if defined(PASS_REDUCE)
layout(local_size_x = WG_SIZE) in;
#elif defined(PASS_GEMV)
layout(local_size_x = WG_X) in;
#else
// WG_X = BN / TN and WG_Y = BM / TM come as literals (layout qualifiers take no expressions).
#if WG_X * TN != BN || WG_Y * TM != BM
#error "matmul.comp: WG_X * TN must be BN and WG_Y * TM must be BM"
#endif
#if defined(FAST) && (defined(EXPERTS) || B_KIND != 0)
#error "matmul.comp: FAST loads float A and B without experts"
#endif
#if defined(FAST) && (TM % 4 != 0 || TN % 4 != 0 || BK % 4 != 0)
#error "matmul.comp: FAST needs TM, TN and BK multiples of 4"
#endif
layout(local_size_x = WG_X, local_size_y = WG_Y) in;
#endif
#define NT (WG_X * WG_Y)

// FAST and PASS_GEMV read A and B as quads (4 consecutive elements: a uvec4 of f32, a uvec2 of
// f16 halves); the host checks that every quad they load whole starts on a quad boundary.
#if defined(FAST) || defined(PASS_GEMV)
#define QUADS
#if A_DTYPE == DT_F32
#define A_QUAD uvec4
#else
#define A_QUAD uvec2
#endif
#if B_DTYPE == DT_F32
#define B_QUAD uvec4
#else
#define B_QUAD uvec2
#endif
layout(std430, binding = 0) readonly buffer ABuffer { A_QUAD a_q[]; };
layout(std430, binding = 1) readonly buffer BBuffer { B_QUAD b_q[]; };
#elif defined(PASS_REDUCE)
layout(std430, binding = 0) readonly buffer PartBuffer { uint part_data[]; };  // the partials
#else
layout(std430, binding = 0) readonly buffer ABuffer { uint a_data[]; };
layout(std430, binding = 1) readonly buffer BBuffer { uint b_data[]; };
#endif
// SPLIT_K / PASS_GEMV: binding 2 is the partials block (f32 bits [split][batch][m][n]).
layout(std430, binding = 2) buffer C0Buffer { uint c0_data[]; };
#if N_OUT == 3
layout(std430, binding = 3) buffer C1Buffer { uint c1_data[]; };
layout(std430, binding = 4) buffer C2Buffer { uint c2_data[]; };
#endif
#if defined(HAS_SIDE)
#if N_OUT == 3
#define SIDE_BINDING 5
#else
#define SIDE_BINDING 3
#endif
layout(std430, binding = SIDE_BINDING) readonly buffer SideBuffer { uint side_data[]; };
#endif

uniform int u_M;
uniform int u_N;
uniform int u_K;
uniform int u_a_offset;
uniform int u_b_offset;
uniform int u_a_m_stride;
uniform int u_a_k_stride;
uniform int u_b_k_stride;
uniform int u_b_n_stride;
uniform int u_b_e_stride;   // EXPERTS: W's stride between experts
uniform int u_c_offset[N_OUT];
uniform int u_c_m_stride[N_OUT];
uniform int u_c_n_stride[N_OUT];
uniform int u_n_split[2];   // N_OUT 3: columns [0, s0) go to c0, [s0, s1) to c1, the rest to c2
uniform float u_alpha;
uniform float u_beta;
uniform int u_idx_base;     // side words: expert index per row
uniform int u_bias_base;    // side words: bias[e * u_bias_e + n]
uniform int u_bias_e;
uniform int u_scale_base;   // side words: scale[n * u_groups + g] (int8: u_groups 1, g 0)
uniform int u_zero_base;    // side words: zero point, as scale
uniform int u_groups;
uniform int u_group_size;
uniform uint u_check_seq;   // EXPERTS: this op's sequence number (the fail flag's value)
uniform int u_e_lo;         // EXPERTS: the experts this dispatch serves, [u_e_lo, u_e_hi)
uniform int u_e_hi;
uniform uvec3 u_tile_base;
uniform int u_splits;       // SPLIT_K, PASS_GEMV, PASS_REDUCE: K ranges (partials per output)
uniform int u_k_chunk;      // SPLIT_K, PASS_GEMV: K range s is [s * u_k_chunk, (s + 1) * u_k_chunk)
uniform int u_batch_count;  // SPLIT_K, PASS_GEMV, PASS_REDUCE
uniform int u_k_groups;     // K_ROLL: BK / K_ROLL
#if BATCH_RANK > 0
uniform int u_batch_shape[BATCH_RANK];
uniform int u_a_batch_stride[BATCH_RANK];
uniform int u_b_batch_stride[BATCH_RANK];
uniform int u_c_batch_stride[BATCH_RANK * N_OUT];  // [d * N_OUT + o]
#endif

float half_or_float(uint word, int i, int dt) {
    return dt == DT_F32 ? uintBitsToFloat(word) : tgl_to_f32(tgl_extract(word, i, dt), dt);
}
#if defined(HAS_SIDE)
float side_f(int i) { return uintBitsToFloat(side_data[i]); }
#endif

#if defined(QUADS)
// A quad's 4 values, and lane c of it, of dtype dt (f32, or f16/bf16 in pairs). Pairs by
// tgl_unpack_2x16 (a few instructions per two, exact), not dtype.glsl's integer conversion, which
// costs about 15 instructions per half in the tile loaders.
vec4 quad_f32(uvec4 w, int dt) { return uintBitsToFloat(w); }
vec4 quad_f32(uvec2 w, int dt) { return vec4(tgl_unpack_2x16(w.x, dt), tgl_unpack_2x16(w.y, dt)); }
float lane_f32(uvec4 w, int c, int dt) { return uintBitsToFloat(w[c]); }
float lane_f32(uvec2 w, int c, int dt) { return tgl_unpack_2x16(w[c >> 1], dt)[c & 1]; }
float load_a(int i) { return lane_f32(a_q[i >> 2], i & 3, A_DTYPE); }
float load_b_elem(int i) { return lane_f32(b_q[i >> 2], i & 3, B_DTYPE); }
// The quad of X at (row r, k): 4 consecutive k (ON_K) or 4 consecutive rows, zeros outside
// rows < ROWS and k < k_end; one vector load when the whole quad is inside.
#define QUAD_FN(NAME, BUF, DT, RS, KS, ROWS, ON_K)                                             \
    vec4 NAME(int base, int r, int k, int k_end) {                                             \
        int i = base + r * RS + k * KS;                                                        \
        int inside = ON_K ? (r < ROWS ? k_end - k : 0) : (k < k_end ? ROWS - r : 0);           \
        if (inside >= 4) return quad_f32(BUF[i >> 2], DT);                                     \
        vec4 v = vec4(0.0);                                                                    \
        for (int c = 0; c < 3; ++c)                                                            \
            if (c < inside) v[c] = lane_f32(BUF[(i + c * (ON_K ? KS : RS)) >> 2], (i + c * (ON_K ? KS : RS)) & 3, DT); \
        return v;                                                                              \
    }
#if defined(A_QUAD_K)
QUAD_FN(quad_a, a_q, A_DTYPE, u_a_m_stride, u_a_k_stride, u_M, true)
#else
QUAD_FN(quad_a, a_q, A_DTYPE, u_a_m_stride, u_a_k_stride, u_M, false)
#endif
#if defined(B_QUAD_K)
QUAD_FN(quad_b, b_q, B_DTYPE, u_b_n_stride, u_b_k_stride, u_N, true)
#else
QUAD_FN(quad_b, b_q, B_DTYPE, u_b_n_stride, u_b_k_stride, u_N, false)
#endif
#elif !defined(PASS_REDUCE)
float load_a(int i) { return half_or_float(a_data[tgl_word_of(i, A_DTYPE)], i, A_DTYPE); }

// W(k, n), dequantized; b_base already includes the batch and expert offsets.
float load_b(int b_base, int gk, int gn) {
#if B_KIND == 0
    int i = b_base + gk * u_b_k_stride + gn * u_b_n_stride;
    return half_or_float(b_data[tgl_word_of(i, B_DTYPE)], i, B_DTYPE);
#elif B_KIND == 1
    int i = b_base + gk * u_b_k_stride + gn * u_b_n_stride;
    return float(tgl_to_int(tgl_extract(b_data[i >> 2], i, DT_I8), DT_I8)) * side_f(u_scale_base + gn);
#else
    int i = b_base + (gk >> 1) * u_b_k_stride + gn * u_b_n_stride;
    uint byte = tgl_extract(b_data[i >> 2], i, DT_U8);
    float q = float((gk & 1) == 0 ? (byte & 15u) : (byte >> 4));
    int g = gn * u_groups + gk / u_group_size;
#if defined(HAS_ZERO)
    float z = side_f(u_zero_base + g);
#else
    float z = 8.0;
#endif
    return (q - z) * side_f(u_scale_base + g);
#endif
}
#endif

// Operand bases of batch entry z (A, B: the main passes; C: the epilogue).
int a_base, b_base0, c_base[N_OUT];
void batch_bases(uint z) {
    a_base = u_a_offset;
    b_base0 = u_b_offset;
    for (int o = 0; o < N_OUT; ++o) c_base[o] = u_c_offset[o];
#if BATCH_RANK > 0
    uint rest = z;
    for (int d = BATCH_RANK - 1; d >= 0; --d) {
        uint n = uint(u_batch_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        a_base += c * u_a_batch_stride[d];
        b_base0 += c * u_b_batch_stride[d];
        for (int o = 0; o < N_OUT; ++o) c_base[o] += c * u_c_batch_stride[d * N_OUT + o];
    }
#endif
}

// Stores v into element i of an output of C_DTYPE; an f16 changes only its half of the word
// (atomicAnd/atomicOr: a neighbouring column, another invocation's, may be stored concurrently).
#define STORE_C(buf, i, v) TGL_STORE_BITS(buf, i, tgl_from_f32(v, C_DTYPE), C_DTYPE)

// The epilogue of output (gm, gn) (row expert e) from its product sum.
float epilogue(int gm, int gn, int e, float sum) {
    // K == 0: the product is empty, so alpha does not enter (alpha = inf must not give NaN).
    float r = u_K > 0 ? u_alpha * sum : 0.0;
#if defined(READ_C)
    {
        int ci = c_base[0] + gm * u_c_m_stride[0] + gn * u_c_n_stride[0];
        r += u_beta * half_or_float(c0_data[tgl_word_of(ci, C_DTYPE)], ci, C_DTYPE);
    }
#endif
#if defined(HAS_BIAS)
    r += side_f(u_bias_base + e * u_bias_e + gn);
#endif
    return apply_activation(r);
}
void store_out(int gm, int gn, float r) {
#if N_OUT == 3
    if (gn < u_n_split[0]) {
        int ci = c_base[0] + gm * u_c_m_stride[0] + gn * u_c_n_stride[0];
        STORE_C(c0_data, ci, r);
    } else if (gn < u_n_split[1]) {
        int ci = c_base[1] + gm * u_c_m_stride[1] + (gn - u_n_split[0]) * u_c_n_stride[1];
        STORE_C(c1_data, ci, r);
    } else {
        int ci = c_base[2] + gm * u_c_m_stride[2] + (gn - u_n_split[1]) * u_c_n_stride[2];
        STORE_C(c2_data, ci, r);
    }
#else
    int ci = c_base[0] + gm * u_c_m_stride[0] + gn * u_c_n_stride[0];
    STORE_C(c0_data, ci, r);
#endif
}
// SPLIT_K / PASS_GEMV: the partial sum of K range `split` for output (z, gm, gn).
void store_partial(int split, uint z, int gm, int gn, float v) {
    c0_data[(split * u_batch_count + int(z)) * u_M * u_N + gm * u_N + gn] = floatBitsToUint(v);
}

#if defined(PASS_REDUCE)
// One invocation per output: the partials summed in split order (deterministic), then the epilogue.
void main() {
    uint idx = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    uint mn = uint(u_M) * uint(u_N);
    if (idx >= mn * uint(u_batch_count)) return;
    uint z = idx / mn;
    int gm = int(idx % mn) / u_N, gn = int(idx % mn) % u_N;
    batch_bases(z);
    float sum = 0.0;
    // Eight partials loaded at a time (in flight together, not one after another), summed in split
    // order: the same sum as one at a time.
    int stride = int(mn) * u_batch_count;
    int s = 0;
    for (; s + 8 <= u_splits; s += 8) {
        float p[8];
        for (int j = 0; j < 8; ++j) p[j] = uintBitsToFloat(part_data[(s + j) * stride + int(idx)]);
        for (int j = 0; j < 8; ++j) sum += p[j];
    }
    for (; s < u_splits; ++s) sum += uintBitsToFloat(part_data[s * stride + int(idx)]);
    store_out(gm, gn, epilogue(gm, gn, 0, sum));
}

#elif defined(PASS_GEMV)
// Mat-vec products (M <= GEMV_M rows, decode): no shared tiles; every invocation streams W once.
// Grid: x = column slabs, y = K ranges, z = batch; partials per K range, then PASS_REDUCE; or
// with GEMV_DIRECT one K range (all of K) and the epilogue here (no partials, no reduce pass).
//  - W n-contiguous (quads along n): invocation = one quad of 4 columns; consecutive invocations
//    read consecutive quads of a row of W (coalesced), looping over the K range.
//  - B_QUAD_K (W k-contiguous, e.g. linear's [N, K] weights): GEMV_LK consecutive invocations
//    share a column and read consecutive quads along k.
// The lanes along k of a column are summed by subgroup shuffles and a shared-memory tree
// (subgroup.glsl), in a fixed order.
#if defined(GEMV_DIRECT)
#define GEMV_STORE(m, n, v) store_out(m, n, epilogue(m, n, 0, v))
#else
#define GEMV_STORE(m, n, v) store_partial(split, z, m, n, v)
#endif
float gemv_add(float a, float b) { return a + b; }
vec4 gemv_add4(vec4 a, vec4 b) { return a + b; }
#if !defined(GEMV_UNROLL)
#define GEMV_UNROLL 4
#endif
#if !defined(B_QUAD_K) && GEMV_KR > 1
shared vec4 s_red4[WG_X];
#endif
// The quad of W at (gn, k) where it is known to be whole (the main loops: inside the K range and
// the columns): one load and no checks, so that the loads of a trip are all in flight at once
// (behind quad_b's checks they were issued one after another).
vec4 whole_b(int b_base, int gn, int k) { return quad_f32(b_q[(b_base + gn * u_b_n_stride + k * u_b_k_stride) >> 2], B_DTYPE); }
#if defined(B_QUAD_K)
shared float s_red[GEMV_M * WG_X];
// A(m, k..k+3), zeros past k_end (any layout of A: element loads, cached across invocations).
vec4 a_quad_at(int m, int k, int k_end) {
    int i = a_base + m * u_a_m_stride + k * u_a_k_stride;
    vec4 a = vec4(0.0);
    for (int c = 0; c < 4; ++c)
        if (k + c < k_end) a[c] = load_a(i + c * u_a_k_stride);
    return a;
}
// A(m, k..k+3) inside the K range.
vec4 a_quad_whole(int m, int k) {
    int i = a_base + m * u_a_m_stride + k * u_a_k_stride;
    return vec4(load_a(i), load_a(i + u_a_k_stride), load_a(i + 2 * u_a_k_stride), load_a(i + 3 * u_a_k_stride));
}
#endif
void main() {
    uint z = u_tile_base.z + gl_WorkGroupID.z;
    int split = int(u_tile_base.y + gl_WorkGroupID.y);
    int lid = int(tgl_local_slot());
    batch_bases(z);
    int b_base = b_base0;
    int k_beg = split * u_k_chunk, k_end = min(u_K, k_beg + u_k_chunk);
#if defined(B_QUAD_K)
    int lane = lid % GEMV_LK;
    int gn = int(u_tile_base.x + gl_WorkGroupID.x) * (WG_X / GEMV_LK) + lid / GEMV_LK;
    float acc[GEMV_M];
    for (int m = 0; m < GEMV_M; ++m) acc[m] = 0.0;
    if (gn < u_N) {
        // GEMV_UNROLL quads of W in flight per invocation, then the tail one at a time.
        const int step = 4 * GEMV_LK;
        int k = k_beg + lane * 4;
        for (; k + (GEMV_UNROLL - 1) * step < k_end; k += GEMV_UNROLL * step) {
            vec4 b[GEMV_UNROLL];
            for (int u = 0; u < GEMV_UNROLL; ++u) b[u] = whole_b(b_base, gn, k + u * step);
            for (int u = 0; u < GEMV_UNROLL; ++u)
                for (int m = 0; m < GEMV_M; ++m) acc[m] += dot(a_quad_whole(m, k + u * step), b[u]);
        }
        for (; k < k_end; k += step)
            for (int m = 0; m < GEMV_M; ++m) acc[m] += dot(a_quad_at(m, k, k_end), quad_b(b_base, gn, k, k_end));
    }
    for (int m = 0; m < GEMV_M; ++m) {
        TGL_SUBGROUP_FOLD(acc[m], 1u, GEMV_LK, gemv_add)
        s_red[m * WG_X + lid] = acc[m];
    }
    for (int off = GEMV_LK / 2; off >= int(TGL_TREE_STOP(1u)); off >>= 1) {
        memoryBarrierShared();
        barrier();
        if (lane < off)
            for (int m = 0; m < GEMV_M; ++m) s_red[m * WG_X + lid] += s_red[m * WG_X + lid + off];
    }
    if (lane == 0 && gn < u_N)
        for (int m = 0; m < GEMV_M; ++m) GEMV_STORE(m, gn, s_red[m * WG_X + lid]);
#else
    // GEMV_KR invocations along k per quad of columns: invocation (q, r) = lid % QX, lid / QX reads
    // rows k_beg + r, + GEMV_KR, ... of its quad; consecutive invocations read consecutive quads of
    // one row (coalesced). A shared-memory tree sums the GEMV_KR lanes (one row of A at a time).
    const int QX = WG_X / GEMV_KR;
    int q = lid % QX, r = lid / QX;
    int gn = (int(u_tile_base.x + gl_WorkGroupID.x) * QX + q) * 4;
    vec4 acc[GEMV_M];
    for (int m = 0; m < GEMV_M; ++m) acc[m] = vec4(0.0);
#if defined(A_QUAD_K) && GEMV_UNROLL % 4 == 0
    // A read as quads along k: lane r takes rows in fours (k_beg + 4r, + 4 GEMV_KR, ...), one
    // quad of A per four rows of W; GEMV_UNROLL rows of W in flight per invocation.
    const int RQ = GEMV_UNROLL / 4;
    int k = k_beg + 4 * r;
    if (gn + 4 <= u_N) {
        for (; k + 4 * GEMV_KR * (RQ - 1) + 3 < k_end; k += 4 * GEMV_KR * RQ) {
            vec4 b[GEMV_UNROLL];
            for (int u = 0; u < RQ; ++u)
                for (int c = 0; c < 4; ++c) b[4 * u + c] = whole_b(b_base, gn, k + 4 * GEMV_KR * u + c);
            for (int u = 0; u < RQ; ++u)
                for (int m = 0; m < GEMV_M; ++m) {
                    vec4 a = quad_f32(a_q[(a_base + m * u_a_m_stride + (k + 4 * GEMV_KR * u) * u_a_k_stride) >> 2], A_DTYPE);
                    acc[m] += a.x * b[4 * u] + a.y * b[4 * u + 1] + a.z * b[4 * u + 2] + a.w * b[4 * u + 3];
                }
        }
    }
    if (gn < u_N) {
        for (; k < k_end; k += 4 * GEMV_KR)
            for (int c = 0; c < 4; ++c)
                if (k + c < k_end) {
                    vec4 b = quad_b(b_base, gn, k + c, k_end);
                    for (int m = 0; m < GEMV_M; ++m) acc[m] += load_a(a_base + m * u_a_m_stride + (k + c) * u_a_k_stride) * b;
                }
    }
#else
    int k = k_beg + r;
    // GEMV_UNROLL rows of W in flight per invocation (whole quads where all 4 columns exist), then
    // the tail one at a time.
#define GEMV_N_TRIPS(LOAD)                                                                         \
    for (; k + (GEMV_UNROLL - 1) * GEMV_KR < k_end; k += GEMV_UNROLL * GEMV_KR) {                  \
        vec4 b[GEMV_UNROLL];                                                                       \
        for (int u = 0; u < GEMV_UNROLL; ++u) b[u] = LOAD;                                         \
        for (int u = 0; u < GEMV_UNROLL; ++u)                                                      \
            for (int m = 0; m < GEMV_M; ++m)                                                       \
                acc[m] += load_a(a_base + m * u_a_m_stride + (k + u * GEMV_KR) * u_a_k_stride) * b[u]; \
    }
    if (gn + 4 <= u_N) {
        GEMV_N_TRIPS(whole_b(b_base, gn, k + u * GEMV_KR))
    } else if (gn < u_N) {
        GEMV_N_TRIPS(quad_b(b_base, gn, k + u * GEMV_KR, k_end))
    }
    if (gn < u_N) {
        for (; k < k_end; k += GEMV_KR) {
            vec4 b = quad_b(b_base, gn, k, k_end);
            for (int m = 0; m < GEMV_M; ++m) acc[m] += load_a(a_base + m * u_a_m_stride + k * u_a_k_stride) * b;
        }
    }
#endif
#if GEMV_KR > 1
    for (int m = 0; m < GEMV_M; ++m) {
        TGL_SUBGROUP_FOLD(acc[m], QX, WG_X, gemv_add4)
        s_red4[lid] = acc[m];
        for (int off = GEMV_KR / 2; off * QX >= int(TGL_TREE_STOP(QX)); off >>= 1) {
            memoryBarrierShared();
            barrier();
            if (r < off) s_red4[lid] += s_red4[lid + off * QX];
        }
        memoryBarrierShared();
        barrier();
        acc[m] = s_red4[lid];
        barrier();  // every lane has read its sum before the next row's stores
    }
#endif
    if (r == 0 && gn < u_N)
        for (int m = 0; m < GEMV_M; ++m)
            for (int c = 0; c < 4; ++c)
                if (gn + c < u_N) GEMV_STORE(m, gn + c, acc[m][c]);
#endif
}

#else  // the tiled main pass

#if defined(FAST)
// Shared tiles as vec4 [k][row quad], rows padded by one quad (the transposing stores of k-quads
// then spread over the banks); invocation (tx, ty) owns rows (ty + i * WG_Y) * 4 + 0..3 and
// columns (tx + j * WG_X) * 4 + 0..3 (WARP_LN: see RQ below), read as whole vec4 from the tiles. The next K step's quads
// are fetched into registers before the current step's products (global latency hidden behind
// them); DOUBLE_BUF: two tiles of each, one barrier per K step.
#define SA4 (BM / 4 + 1)
#define SB4 (BN / 4 + 1)
#if defined(DOUBLE_BUF)
#define N_BUF 2
#else
#define N_BUF 1
#endif
// HALF_RUN (f16 A and B, GL_NV_gpu_shader5): tiles of f16vec4 (exact: the operands are f16), and
// the products in packed f16 (f16vec2 pairs of columns: HFMA2 on NVIDIA), summed in f16 over runs
// of HALF_RUN consecutive k; each run's sum is then added into the f32 accumulators (f32
// accumulation between runs; docs/half-precision.md gives the error this costs).
#if defined(HALF_RUN)
#if BK % HALF_RUN != 0
#error "matmul.comp: HALF_RUN must divide BK"
#endif
#define TILE_T float16_t
#define TILE4 f16vec4
#else
#define TILE_T float
#define TILE4 vec4
#endif
shared TILE4 s_a[N_BUF * BK * SA4];
shared TILE4 s_b[N_BUF * BK * SB4];
// Row quad i and column quad j of this invocation (rq0, cq0: its first, set in main).
// WARP_LN (warp tiles): the invocations of each group of 32 (a warp on NVIDIA, in
// gl_LocalInvocationIndex order) own one compact (32 / WARP_LN * TM) x (WARP_LN * TN) block of the
// tile, as (32 / WARP_LN) x WARP_LN lanes whose quads lie 32 / WARP_LN (rows) and WARP_LN
// (columns) quads apart; a warp's vec4 reads of one k then touch 32 / WARP_LN quads of A and WARP_LN
// of B (WARP_LN 8: 4 and 8, one wavefront each), where the interleaved mapping (no WARP_LN: quads
// WG_Y and WG_X apart over the whole tile) touches WG_X quads of B.
#if defined(WARP_LN)
#define WARP_LM (32 / WARP_LN)
#define WARPS_N (BN / (WARP_LN * TN))
#if NT % 32 != 0 || BN % (WARP_LN * TN) != 0 || BM % (WARP_LM * TM) != 0
#error "matmul.comp: WARP_LN needs whole warps and warp tiles that divide the tile"
#endif
#define RQ_STEP WARP_LM
#define CQ_STEP WARP_LN
#else
#define RQ_STEP WG_Y
#define CQ_STEP WG_X
#endif
#define RQ(i) (rq0 + (i) * RQ_STEP)
#define CQ(j) (cq0 + (j) * CQ_STEP)
#define ROW_OF(r) (RQ((r) >> 2) * 4 + ((r) & 3))
#define COL_OF(c) (CQ((c) >> 2) * 4 + ((c) & 3))
#define ACC(r, c) acc[(r) * (TN / 4) + ((c) >> 2)][(c) & 3]
#define A_FETCHES ((BM * BK / 4 + NT - 1) / NT)
#define B_FETCHES ((BN * BK / 4 + NT - 1) / NT)
// Quad l of the X tile (ROWS x BK): (row rr, k quad kq) along k, or (row quad rq, k kk).
#define TILE_QUAD(ROWS, ON_K, l, rr, kk)                                                       \
    int rr = ON_K ? (l) / (BK / 4) : ((l) % (ROWS / 4)) * 4;                                   \
    int kk = ON_K ? ((l) % (BK / 4)) * 4 : (l) / (ROWS / 4);
// The quads of the X tile of K step kb into registers reg[] (zeros outside X).
#define FETCH_TILE(reg, quad_x, base, ROWS, r0, ON_K, kb)                                      \
    for (int q = 0; q < (ROWS * BK / 4 + NT - 1) / NT; ++q) {                                  \
        int l = q * NT + tid;                                                                  \
        if ((ROWS * BK / 4) % NT != 0 && l >= ROWS * BK / 4) break;                            \
        TILE_QUAD(ROWS, ON_K, l, rr, kk)                                                       \
        reg[q] = quad_x(base, r0 + rr, kb + kk, k_end);                                        \
    }
// ... and from the registers into tile `buf` (quads along k stored transposed, one float each).
#define STASH_TILE(reg, s_x, ROWS, SX4, ON_K, buf)                                             \
    for (int q = 0; q < (ROWS * BK / 4 + NT - 1) / NT; ++q) {                                  \
        int l = q * NT + tid;                                                                  \
        if ((ROWS * BK / 4) % NT != 0 && l >= ROWS * BK / 4) break;                            \
        TILE_QUAD(ROWS, ON_K, l, rr, kk)                                                       \
        int t0 = (buf) * BK * SX4;                                                             \
        if (ON_K) {                                                                            \
            for (int c = 0; c < 4; ++c) s_x[t0 + (kk + c) * SX4 + (rr >> 2)][rr & 3] = TILE_T(reg[q][c]); \
        } else {                                                                               \
            s_x[t0 + kk * SX4 + (rr >> 2)] = TILE4(reg[q]);                                    \
        }                                                                                      \
    }
#if defined(A_QUAD_K)
#define A_ON_K true
#else
#define A_ON_K false
#endif
#if defined(B_QUAD_K)
#define B_ON_K true
#else
#define B_ON_K false
#endif
#else
// Rows padded by one float: the k-fast loads then store to different banks.
#define SA (BM + 1)
#define SB (BN + 1)
shared float s_a[BK * SA];  // [k][m]
shared float s_b[BK * SB];  // [k][n]
#define ROW_OF(r) (ty + (r) * WG_Y)
#define COL_OF(c) (tx + (c) * WG_X)
#define ACC(r, c) acc[(r) * TN + (c)]
#endif
#if defined(EXPERTS)
#define NO_EXPERT 0x7fffffff
shared int s_e[BM];  // each row's expert (NO_EXPERT past the last row)
shared int s_next;
#endif

void main() {
    int tx = int(gl_LocalInvocationID.x);
    int ty = int(gl_LocalInvocationID.y);
    int tid = ty * WG_X + tx;
#if defined(FAST) && defined(WARP_LN)
    int warp = tid >> 5, lane = tid & 31;
    int rq0 = warp / WARPS_N * (WARP_LM * TM / 4) + lane / WARP_LN;
    int cq0 = warp % WARPS_N * (WARP_LN * TN / 4) + lane % WARP_LN;
#elif defined(FAST)
    int rq0 = ty, cq0 = tx;
#endif
    int m0 = int(u_tile_base.y + gl_WorkGroupID.y) * BM;
    int n0 = int(u_tile_base.x + gl_WorkGroupID.x) * BN;
    uint z = u_tile_base.z + gl_WorkGroupID.z;
#if defined(SPLIT_K)
    int split = int(z % uint(u_splits));
    z /= uint(u_splits);
    int k_beg = split * u_k_chunk, k_end = min(u_K, k_beg + u_k_chunk);
#else
    int k_beg = 0, k_end = u_K;
#endif
    batch_bases(z);

#if defined(FAST)
    vec4 acc[TM * TN / 4];
    for (int i = 0; i < TM * TN / 4; ++i) acc[i] = vec4(0.0);
#else
    float acc[TM * TN];
    for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0;
#endif

#if defined(EXPERTS)
    // A failed index check (the fail flag) leaves every row without an expert: nothing is computed
    // or stored. No early return: barriers follow.
    bool failed = side_data[0] == u_check_seq;
    for (int i = tid; i < BM; i += NT) {
        int e = (!failed && m0 + i < u_M) ? int(side_data[u_idx_base + m0 + i]) : NO_EXPERT;
        s_e[i] = e >= u_e_lo && e < u_e_hi ? e : NO_EXPERT;
    }
    int cur = -1;
    for (;;) {
        memoryBarrierShared();
        barrier();
        if (tid == 0) {
            int next = NO_EXPERT;
            for (int i = 0; i < BM; ++i)
                if (s_e[i] > cur) next = min(next, s_e[i]);
            s_next = next;
        }
        memoryBarrierShared();
        barrier();
        int e = s_next;  // the same in every invocation: the loop stays uniform
        if (e == NO_EXPERT) break;
        cur = e;
        int b_base = b_base0 + e * u_b_e_stride;
#else
    {
        int b_base = b_base0;
#endif
#if defined(FAST)
        vec4 ra[A_FETCHES];
        vec4 rb[B_FETCHES];
        FETCH_TILE(ra, quad_a, a_base, BM, m0, A_ON_K, k_beg)
        FETCH_TILE(rb, quad_b, b_base, BN, n0, B_ON_K, k_beg)
        STASH_TILE(ra, s_a, BM, SA4, A_ON_K, 0)
        STASH_TILE(rb, s_b, BN, SB4, B_ON_K, 0)
        memoryBarrierShared();
        barrier();
        int cur = 0;
        for (int k0 = k_beg; k0 < k_end; k0 += BK) {
            bool more = k0 + BK < k_end;  // the same in every invocation
            if (more) {
                FETCH_TILE(ra, quad_a, a_base, BM, m0, A_ON_K, k0 + BK)
                FETCH_TILE(rb, quad_b, b_base, BN, n0, B_ON_K, k0 + BK)
            }
#if defined(HALF_RUN)
            for (int k1 = 0; k1 < BK; k1 += HALF_RUN) {
                f16vec4 run[TM * TN / 4];
                for (int i = 0; i < TM * TN / 4; ++i) run[i] = f16vec4(0.0);
                for (int kk = k1; kk < k1 + HALF_RUN; ++kk) {
#elif defined(K_ROLL)
            // K_ROLL: the K step's products in groups of K_ROLL k, the loop over the groups kept
            // rolled (its trip count u_k_groups = BK / K_ROLL is a uniform): fewer shared-memory
            // reads in flight at once than a fully unrolled step, so fewer registers.
            for (int k1 = 0; k1 < u_k_groups * K_ROLL; k1 += K_ROLL) {
                for (int kk = k1; kk < k1 + K_ROLL; ++kk) {
#else
            {
                for (int kk = 0; kk < BK; ++kk) {
#endif
                    TILE4 av[TM / 4];
                    TILE4 bv[TN / 4];
                    for (int i = 0; i < TM / 4; ++i) av[i] = s_a[(cur * BK + kk) * SA4 + RQ(i)];
                    for (int j = 0; j < TN / 4; ++j) bv[j] = s_b[(cur * BK + kk) * SB4 + CQ(j)];
                    for (int r = 0; r < TM; ++r)
                        for (int j = 0; j < TN / 4; ++j)
#if defined(HALF_RUN)
                            run[r * (TN / 4) + j] += av[r >> 2][r & 3] * bv[j];
#else
                            acc[r * (TN / 4) + j] += av[r >> 2][r & 3] * bv[j];
#endif
                }
#if defined(HALF_RUN)
                for (int i = 0; i < TM * TN / 4; ++i) acc[i] += vec4(run[i]);
#endif
            }
#if defined(DOUBLE_BUF)
            cur = 1 - cur;
#else
            memoryBarrierShared();
            barrier();  // every invocation is done reading the tiles
#endif
            if (more) {
                STASH_TILE(ra, s_a, BM, SA4, A_ON_K, cur)
                STASH_TILE(rb, s_b, BN, SB4, B_ON_K, cur)
            }
            memoryBarrierShared();
            barrier();
        }
#else
#if defined(EXPERTS)
        // This invocation's rows of expert e. The others' A is zero-filled, but 0 * an inf or NaN
        // of e's weights would still turn their sums to NaN: they take no part in this pass.
        bool mine[TM];
        for (int i = 0; i < TM; ++i) mine[i] = s_e[ROW_OF(i)] == e;
#endif
        for (int k0 = k_beg; k0 < k_end; k0 += BK) {
            // Constant trip counts (unrollable); the guard folds away when NT divides the tile.
            for (int l0 = 0; l0 < BM * BK; l0 += NT) {
                int l = l0 + tid;
                if ((BM * BK) % NT != 0 && l >= BM * BK) break;
#if defined(A_K_FAST)
                int kk = l % BK, mm = l / BK;
#else
                int mm = l % BM, kk = l / BM;
#endif
                int gm = m0 + mm, gk = k0 + kk;
                float v = 0.0;
                bool row_in = gm < u_M && gk < k_end;
#if defined(EXPERTS)
                row_in = row_in && s_e[mm] == e;
#endif
                if (row_in) v = load_a(a_base + gm * u_a_m_stride + gk * u_a_k_stride);
                s_a[kk * SA + mm] = v;
            }
            for (int l0 = 0; l0 < BN * BK; l0 += NT) {
                int l = l0 + tid;
                if ((BN * BK) % NT != 0 && l >= BN * BK) break;
#if defined(B_N_FAST)
                int nn = l % BN, kk = l / BN;
#else
                int kk = l % BK, nn = l / BK;
#endif
                int gn = n0 + nn, gk = k0 + kk;
                s_b[kk * SB + nn] = (gn < u_N && gk < k_end) ? load_b(b_base, gk, gn) : 0.0;
            }
            memoryBarrierShared();
            barrier();
            for (int kk = 0; kk < BK; ++kk) {
                float ar[TM];
                float br[TN];
                for (int i = 0; i < TM; ++i) ar[i] = s_a[kk * SA + ty + i * WG_Y];
                for (int j = 0; j < TN; ++j) br[j] = s_b[kk * SB + tx + j * WG_X];
                for (int i = 0; i < TM; ++i) {
#if defined(EXPERTS)
                    if (!mine[i]) continue;
#endif
                    for (int j = 0; j < TN; ++j) acc[i * TN + j] += ar[i] * br[j];
                }
            }
            memoryBarrierShared();
            barrier();
        }
#endif
    }

    for (int r = 0; r < TM; ++r) {
        int mm = ROW_OF(r);
        int gm = m0 + mm;
        if (gm >= u_M) continue;
#if defined(EXPERTS)
        int e = s_e[mm];
        if (e == NO_EXPERT) continue;  // failed check, or another dispatch's expert
#else
        int e = 0;
#endif
#if defined(SPLIT_K)
        for (int c = 0; c < TN; ++c) {
            int gn = n0 + COL_OF(c);
            if (gn < u_N) store_partial(split, z, gm, gn, ACC(r, c));
        }
#elif defined(C_PAIR)
        // f16 C whose columns 2j, 2j + 1 share a word: this invocation owns both (FAST columns come
        // in quads), so it stores the word whole; a last odd column keeps the masked store.
        for (int c = 0; c < TN; c += 2) {
            int gn = n0 + COL_OF(c);
            if (gn >= u_N) continue;
            float r0 = epilogue(gm, gn, e, ACC(r, c));
            if (gn + 1 < u_N) {
                float r1 = epilogue(gm, gn + 1, e, ACC(r, c + 1));
                c0_data[(c_base[0] + gm * u_c_m_stride[0] + gn) >> 1] = tgl_from_f32(r0, C_DTYPE) | (tgl_from_f32(r1, C_DTYPE) << 16);
            } else {
                store_out(gm, gn, r0);
            }
        }
#else
        for (int c = 0; c < TN; ++c) {
            int gn = n0 + COL_OF(c);
            if (gn < u_N) store_out(gm, gn, epilogue(gm, gn, e, ACC(r, c)));
        }
#endif
    }
}

#endif
