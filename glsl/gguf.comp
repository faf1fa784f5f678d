// The GGUF block dtypes on the device (gguf.glsl decodes them; host: backends/gles/gguf_kernels.cpp):
//   PASS_DEQUANT  one invocation per 16-element unit of a row: y[row, k] = the decoded element,
//                 rounded once to Y_DTYPE (dequantize; index_select of a block table with INDEXED:
//                 y's row i0, ... is x's row index[i0], ...; a table larger than one window is
//                 bound in windows of rows [u_lo, u_hi), each dispatch writing the rows whose index
//                 lies in its window). Rows walk RANK leading dims (u_shape; x's row strides in
//                 bytes, y's in elements).
//   PASS_GEMV     linear with block W read directly (decode, M <= 8): y[m, n] = act(sum_k x[m, k] *
//                 W[n, k] + bias[n]); LANES invocations take ROWS rows of W, each lane the chunks
//                 of 32 elements lane, lane + LANES, ... of those rows, UNROLL chunks of each row
//                 loaded before any is summed; per unit of 16: scale * dot(q, x) + offset * sum(x),
//                 x read once per chunk for all the rows; then a tree sum over the lanes in shared
//                 memory (so the order is fixed: the same bits every run).
// INDEXED tests tgl_op_failed() first (the index was checked by a check pass under u_check_seq), so
// a failed check writes nothing. At most 4 bindings (the GLES 3.1 minimum).
// Defines: one PASS_*; W_DTYPE (optional: else the uniform u_w_dtype); Y_DTYPE (x, bias, y: f32 or f16); WG_SIZE;
// PASS_DEQUANT: RANK (1..7), INDEXED, I_DTYPE; PASS_GEMV (rows of x, the activation and whether
// there is a bias are uniforms: one program serves every M <= 8 and epilogue): LANES (a power of
// two), ROWS, UNROLL,
// X_F16_OCTETS (x f16 with k-stride 1, rows on 16-byte boundaries, K a multiple of 8: read eight
// a uvec4) or X_F16_PAIRS (x f16 with k-stride 1 and even offsets: two a word), both widened
// exactly by unpackHalf2x16; X_SHARED (the capacity in vec4s of one row of x staged in shared
// memory as f32, with its sums of 16: 8 quads of X_STR chunks, X_STR at least ceil(K / 32) and 1
// modulo 8; X_SHARED = 8 * X_STR); staged by octets under
// X_F16_OCTETS, else element by element).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"

#define STATUS_BINDING 3
#if defined(INDEXED)
#include "device_status.glsl"
#endif

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };
layout(std430, binding = 1) readonly buffer WBuffer { uint w_data[]; };  // the blocks
#if defined(PASS_GEMV) && defined(X_F16_OCTETS)
layout(std430, binding = 2) readonly buffer XBuffer { uvec4 x_oct[]; };
layout(std430, binding = 3) readonly buffer BBuffer { uint b_data[]; };  // the bias (u_has_bias)
#elif defined(PASS_GEMV)
layout(std430, binding = 2) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 3) readonly buffer BBuffer { uint b_data[]; };  // the bias (u_has_bias)
#else
layout(std430, binding = 2) readonly buffer IBuffer { uint i_data[]; };  // the index (INDEXED)
#endif

#define GGUF_WORD(i) w_data[i]
#include "gguf.glsl"
#include "store.glsl"

uniform int u_K;
uniform int u_y_offset;

// Element e (window-relative) of an f32/f16 operand array as f32.
// f16 by unpackHalf2x16 (exact, one instruction): the bit-level tgl_to_f32, inlined into each of
// the GEMV's unrolled element loads of strided x, made one program take NVIDIA's compiler 86 s.
#define LOAD_FLOAT(ARR, E) (Y_DTYPE == DT_F32 ? uintBitsToFloat(ARR[E]) : unpackHalf2x16(ARR[(E) >> 1] >> (uint((E) & 1) * 16u)).x)

#if defined(PASS_DEQUANT)
uniform uint u_units;      // units of all rows
uniform int u_row_units;   // units of one row: ceil(K / 16)
uniform int u_shape[RANK];
uniform int u_x_str[RANK];  // bytes (a multiple of the block's bytes per B elements)
uniform int u_y_str[RANK];
uniform int u_x_base;      // byte of x's row 0 in its window
uniform int u_y_k_str;
#if defined(INDEXED)
uniform int u_i_offset;
uniform int u_i_str;
uniform int u_lo;  // the table's rows [u_lo, u_hi) in this window (u_x_base: row u_lo)
uniform int u_hi;
#endif

void main() {
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (g >= u_units) return;
#if defined(INDEXED)
    if (tgl_op_failed()) return;
#endif
    int row = int(g / uint(u_row_units)), unit = int(g % uint(u_row_units));
    int x_at = u_x_base, y_at = u_y_offset;
    for (int d = RANK - 1; d >= 0; --d) {
        int i = row % u_shape[d];
        row /= u_shape[d];
        y_at += i * u_y_str[d];
#if defined(INDEXED)
        if (d == 0) {
            i = TGL_LOAD_INDEX(i_data, u_i_offset + i * u_i_str, I_DTYPE).x;
            if (i < u_lo || i >= u_hi) return;  // another window's row
            i -= u_lo;
        }
#endif
        x_at += i * u_x_str[d];
    }
    float q[16], scale, offset;
    gguf_unit(uint(x_at + (unit / gguf_units()) * gguf_bytes()), unit % gguf_units(), q, scale, offset);
    int k0 = unit * 16;
    for (int i = 0; i < 16; ++i) {
        if (k0 + i >= u_K) break;
        float v = scale * q[i] + offset;
        y_store_bits(y_at + (k0 + i) * u_y_k_str, tgl_from_f32(v, Y_DTYPE));
    }
}
#endif

#if defined(PASS_GEMV)
#include "activation.glsl"
#include "subgroup.glsl"
// NVIDIA: unroll the loops of constant trip count, so that the chunk and accumulator arrays are
// indexed by constants and stay in registers (other drivers ignore unknown pragmas).
#pragma optionNV(unroll all)
uniform int u_M;           // rows of x (at most 8)
uniform int u_activation;  // tgl_activation (activation.glsl)
uniform int u_has_bias;    // 0: binding 2 (x) is bound again at binding 3, unread
#define ROW_GROUPS (WG_SIZE / LANES)
#define WG_ROWS (ROW_GROUPS * ROWS)
uniform int u_N;
uniform int u_w_base;      // byte of W's row 0 in its window
uniform int u_w_n_str;     // bytes between rows of W
uniform int u_x_offset;
uniform int u_x_m_str;
uniform int u_x_k_str;
uniform int u_y_m_str;
uniform int u_y_n_str;
uniform int u_b_offset;
uniform int u_b_n_str;

// A chunk: elements 32c .. 32c + 31 of a row, two units of 16. The fast formats' quants are loaded
// as whole words (the blocks of q4_0 and q8_0 start on 2-byte boundaries: the words that cover
// them, shifted into place) and decoded only when summed, so that the loads of a trip's chunks are
// all in flight together; their f16 scales are widened by unpackHalf2x16 (exact, one instruction;
// the subnormal and special scales are in the differential tests). The other formats' units are
// decoded by gguf_unit as they are loaded.
#if !defined(W_DTYPE) || W_DTYPE == DT_Q8_0 || W_DTYPE == DT_Q4_K
#define CHUNK_VEC4 2
#else
#define CHUNK_VEC4 1
#endif
#if !defined(W_DTYPE) || (W_DTYPE != DT_Q4_0 && W_DTYPE != DT_Q4_1 && W_DTYPE != DT_Q8_0 && W_DTYPE != DT_Q4_K)
#define GEMV_GENERIC
#endif
struct Chunk {
    uvec4 qs[CHUNK_VEC4];  // q4_0, q4_1: the block's 16 bytes; q8_0: its 32; q4_K: the 32 bytes of its sub-block pair
    vec4 so;               // the units' scales and offsets (scale 0, scale 1, offset 0, offset 1)
#if defined(GEMV_GENERIC)
    vec4 q[8];             // the other formats: the decoded quants
#endif
};

bool gemv_fast(int dt) { return dt == DT_Q4_0 || dt == DT_Q4_1 || dt == DT_Q8_0 || dt == DT_Q4_K; }

// Words a..a+3 of bytes starting 2 bytes into word w (odd) or at it.
uvec4 gemv_words(uint w, bool odd) {
    uint w0 = GGUF_WORD(w), w1 = GGUF_WORD(w + 1u), w2 = GGUF_WORD(w + 2u), w3 = GGUF_WORD(w + 3u), w4 = GGUF_WORD(w + 4u);
    return odd ? uvec4(w1, w2, w3, w4) : uvec4((w0 >> 16) | (w1 << 16), (w1 >> 16) | (w2 << 16), (w2 >> 16) | (w3 << 16), (w3 >> 16) | (w4 << 16));
}

Chunk load_chunk(int row, int c) {
    Chunk k;
    int dt = GGUF_DT;
    for (int i = 0; i < CHUNK_VEC4; ++i) k.qs[i] = uvec4(0u);
    k.so = vec4(0.0);
    if (dt == DT_Q4_K) {  // 144-byte blocks (word-aligned); chunk = sub-block s, nibble s & 1 of pair s >> 1
        int s = c & 7;
        uint a = uint(row + (c >> 3) * 144), w = (a >> 2) + 4u + uint(s >> 1) * 8u;
        k.qs[0] = uvec4(GGUF_WORD(w), GGUF_WORD(w + 1u), GGUF_WORD(w + 2u), GGUF_WORD(w + 3u));
        k.qs[CHUNK_VEC4 - 1] = uvec4(GGUF_WORD(w + 4u), GGUF_WORD(w + 5u), GGUF_WORD(w + 6u), GGUF_WORD(w + 7u));
        // d, dmin and the 12 scale bytes as words: the same 4 loads for every sub-block
        uint h = a >> 2, dm = GGUF_WORD(h);
        uvec2 sm = gguf_k_scale_min_words(uvec3(GGUF_WORD(h + 1u), GGUF_WORD(h + 2u), GGUF_WORD(h + 3u)), s);
        vec2 d_min = unpackHalf2x16(dm);
        float scale = d_min.x * float(sm.x);       // exact: 11 x 6 bits
        float offset = -(d_min.y * float(sm.y));  // exact
        k.so = vec4(scale, scale, offset, offset);
    } else if (dt == DT_Q8_0) {  // 34-byte blocks: d, then 32 i8
        uint a = uint(row + c * 34), w = a >> 2, w0 = GGUF_WORD(w);  // one load, whichever half d is
        bool odd = (a & 2u) != 0u;
        float d = odd ? unpackHalf2x16(w0).y : unpackHalf2x16(w0).x;
        k.qs[0] = gemv_words(w, odd);
        k.qs[CHUNK_VEC4 - 1] = gemv_words(w + 4u, odd);
        k.so = vec4(d, d, 0.0, 0.0);
    } else if (dt == DT_Q4_0) {  // 18-byte blocks: d, then 16 bytes of nibbles
        uint a = uint(row + c * 18), w = a >> 2, w0 = GGUF_WORD(w);
        bool odd = (a & 2u) != 0u;
        float d = odd ? unpackHalf2x16(w0).y : unpackHalf2x16(w0).x;
        k.qs[0] = gemv_words(w, odd);
        k.so = vec4(d, d, -8.0 * d, -8.0 * d);  // d (q - 8) = d q + (-8 d) (exact)
    } else if (dt == DT_Q4_1) {  // 20-byte blocks (word-aligned): d, m, then 16 bytes of nibbles
        uint w = uint(row + c * 20) >> 2, dm = GGUF_WORD(w);
        vec2 d_m = unpackHalf2x16(dm);
        float d = d_m.x, m = d_m.y;
        k.qs[0] = uvec4(GGUF_WORD(w + 1u), GGUF_WORD(w + 2u), GGUF_WORD(w + 3u), GGUF_WORD(w + 4u));
        k.so = vec4(d, d, m, m);
    }
#if defined(GEMV_GENERIC)
    else {
        uint at = uint(row + ((2 * c) / gguf_units()) * gguf_bytes());
        int u = (2 * c) % gguf_units();
        for (int p = 0; p < 2; ++p) {
            float q[16], scale, offset;
            gguf_unit(at, u + p, q, scale, offset);
            for (int j = 0; j < 4; ++j) k.q[4 * p + j] = vec4(q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]);
            k.so[p] = scale;
            k.so[2 + p] = offset;
        }
    }
#endif
    return k;
}

// Quants as floats without a conversion instruction (an eighth of the rate of an add on NVIDIA's
// recent GPUs) and with few integer ones (half the rate of a float add there: the decode's
// bound): a field f masked in place at bit p (below bit 23) and or'ed into the mantissa of 2^23
// is the float 2^23 + f 2^p, and times 2^-p less 2^(23 - p) that is f exactly (one fused
// multiply-add; unfused, the product is exact too). Fields past bit 22 come from the word
// shifted right by 16. A signed byte b is read as (b ^ 0x80) = b + 128 and offset by 128 more.
const uint kTwo23Bits = 0x4B000000u;  // 2^23
vec4 fields(uvec4 w, uvec4 mask, vec4 inv, vec4 off) { return uintBitsToFloat((w & mask) | kTwo23Bits) * inv - off; }
// The low nibbles of the word's 4 bytes (bits 0, 8, 16; 24 as bit 8 of w >> 16), and the high ones.
vec4 low_nibbles(uint w) {
    uint t = w >> 16;
    return fields(uvec4(w, w, w, t), uvec4(0xFu, 0xF00u, 0xF0000u, 0xF00u), vec4(1.0, 0.00390625, 0.0000152587890625, 0.00390625),
                  vec4(8388608.0, 32768.0, 128.0, 32768.0));
}
vec4 high_nibbles(uint w) {
    uint t = w >> 16;
    return fields(uvec4(w, w, t, t), uvec4(0xF0u, 0xF000u, 0xF0u, 0xF000u), vec4(0.0625, 0.000244140625, 0.0625, 0.000244140625),
                  vec4(524288.0, 2048.0, 524288.0, 2048.0));
}
vec4 signed_bytes(uint w) {
    uint s = w ^ 0x80808080u, t = s >> 16;
    return fields(uvec4(s, s, t, t), uvec4(0xFFu, 0xFF00u, 0xFFu, 0xFF00u), vec4(1.0, 0.00390625, 1.0, 0.00390625),
                  vec4(8388736.0, 32896.0, 8388736.0, 32896.0));
}

// sum over the chunk's two units of scale * sum(q x) + offset * sum(x): x its 32 elements (zero
// past K), sx the sums of x over each unit.
float chunk_dot(Chunk k, int c, vec4 x[8], vec2 sx) {
    int dt = GGUF_DT;
    vec2 sqx = vec2(0.0);
    if (dt == DT_Q8_0) {
        for (int j = 0; j < 4; ++j) {
            sqx.x += dot(signed_bytes(k.qs[0][j]), x[j]);
            sqx.y += dot(signed_bytes(k.qs[CHUNK_VEC4 - 1][j]), x[4 + j]);
        }
    } else if (gemv_fast(dt)) {  // nibbles: q4_0/q4_1 unit 0 the low ones of the 16 bytes, unit 1 the high;
                                 // q4_K nibble (c & 1) of the pair's bytes 0..15, 16..31
        if (dt == DT_Q4_K) {
            uint h = uint(c & 1) * 4u;
            uvec4 u0 = k.qs[0] >> h, u1 = k.qs[CHUNK_VEC4 - 1] >> h;
            for (int j = 0; j < 4; ++j) {
                sqx.x += dot(low_nibbles(u0[j]), x[j]);
                sqx.y += dot(low_nibbles(u1[j]), x[4 + j]);
            }
        } else {
            for (int j = 0; j < 4; ++j) {
                sqx.x += dot(low_nibbles(k.qs[0][j]), x[j]);
                sqx.y += dot(high_nibbles(k.qs[0][j]), x[4 + j]);
            }
        }
    }
#if defined(GEMV_GENERIC)
    else {
        for (int j = 0; j < 4; ++j) {
            sqx.x += dot(k.q[j], x[j]);
            sqx.y += dot(k.q[4 + j], x[4 + j]);
        }
    }
#endif
    return (k.so.x * sqx.x + k.so.z * sx.x) + (k.so.y * sqx.y + k.so.w * sx.y);
}

#if defined(X_SHARED)
// One row of x staged per workgroup in shared memory, widened to f32, zeros past K, with the sums
// of its units of 16: every row of W then reads its chunks' 32 floats and 2 sums from there
// instead of loading, widening and summing x again (64 arithmetic instructions a chunk, the
// decode GEMV's largest share after the quants' own: docs/quantized.md). Quad j of chunk c is
// s_x[j * X_STR + c]: the lanes' reads of consecutive chunks are consecutive vec4s, and the
// staging's writes meet no bank conflict either (X_STR is 1 modulo 8: the 8 lanes of a 16-byte
// access hit 8 bank quads). X_STR is a constant, so that the 8 reads of a chunk take constant
// offsets from one address.
shared vec4 s_x[X_SHARED];
shared vec2 s_sx[X_STR];  // the sums of chunk c's two units

#if !defined(X_F16_OCTETS)
uniform int u_x_pairs;  // x f16 with k-stride 1 and even offsets: two halves a word

// x[m, k .. k + 3] of the row at xa (k a multiple of 4), zeros past K.
vec4 x_quad(int xa, int k) {
    vec4 v;
#if Y_DTYPE == DT_F16
    if (u_x_pairs != 0) {  // words of x's row only: the last holds element K - 1
        int w = (xa + k) >> 1, last = (xa + u_K - 1) >> 1;
        v = vec4(unpackHalf2x16(x_data[min(w, last)]), unpackHalf2x16(x_data[min(w + 1, last)]));
        for (int e = 0; e < 4; ++e) v[e] = k + e < u_K ? v[e] : 0.0;
        return v;
    }
#endif
    for (int e = 0; e < 4; ++e) v[e] = k + e < u_K ? LOAD_FLOAT(x_data, xa + min(k + e, u_K - 1) * u_x_k_str) : 0.0;
    return v;
}
#endif

// Row m of x into s_x and s_sx: an invocation a unit of 16 (two of a chunk, the last zero-padded).
void stage_x(int m, int lid) {
    int chunks = (u_K + 31) / 32, xa = u_x_offset + m * u_x_m_str;
    for (int u = lid; u < 2 * chunks; u += WG_SIZE) {
        int c = u >> 1, j0 = (u & 1) * 4;
        vec4 q[4];
#if defined(X_F16_OCTETS)
        // x f16 from a 16-byte boundary, K a multiple of 8: the unit's two octets (or zeros)
        for (int i = 0; i < 2; ++i) {
            int o = 2 * u + i;
            uvec4 v = o < u_K / 8 ? x_oct[(xa >> 3) + o] : uvec4(0u);
            q[2 * i] = vec4(unpackHalf2x16(v.x), unpackHalf2x16(v.y));
            q[2 * i + 1] = vec4(unpackHalf2x16(v.z), unpackHalf2x16(v.w));
        }
#else
        for (int j = 0; j < 4; ++j) q[j] = x_quad(xa, 16 * u + 4 * j);
#endif
        for (int j = 0; j < 4; ++j) s_x[(j0 + j) * X_STR + c] = q[j];
        s_sx[c][u & 1] = dot(q[0] + q[1] + q[2] + q[3], vec4(1.0));
    }
    memoryBarrierShared();
    barrier();
}
#endif

// Elements 32c .. 32c + kn - 1 of row m of x (kn <= 32), zeros after (read at the last one: x
// ends there), and their sums over each unit of 16.
void load_x(int m, int c, int kn, out vec4 x[8], out vec2 sx) {
#if defined(X_SHARED)
    for (int j = 0; j < 8; ++j) x[j] = s_x[j * X_STR + c];
    sx = s_sx[c];
#else
    int xa = u_x_offset + m * u_x_m_str + 32 * c * u_x_k_str;
#if defined(X_F16_OCTETS)
    // x f16, contiguous along k from a 16-byte boundary, K a multiple of 8: eight a uvec4
    for (int i = 0; i < 4; ++i) {
        uvec4 v = x_oct[(xa >> 3) + min(i, (kn - 1) >> 3)];
        bool in_k = 8 * i < kn;
        x[2 * i] = in_k ? vec4(unpackHalf2x16(v.x), unpackHalf2x16(v.y)) : vec4(0.0);
        x[2 * i + 1] = in_k ? vec4(unpackHalf2x16(v.z), unpackHalf2x16(v.w)) : vec4(0.0);
    }
#elif defined(X_F16_PAIRS)
    // x f16, contiguous along k from an even element: two a word (an exact widening)
    for (int i = 0; i < 16; ++i) {
        vec2 v = unpackHalf2x16(x_data[(xa >> 1) + min(i, (kn - 1) >> 1)]);
        v.x = 2 * i < kn ? v.x : 0.0;
        v.y = 2 * i + 1 < kn ? v.y : 0.0;
        x[i >> 1][2 * (i & 1)] = v.x;
        x[i >> 1][2 * (i & 1) + 1] = v.y;
    }
#else
    for (int i = 0; i < 32; ++i) {
        float v = LOAD_FLOAT(x_data, xa + min(i, kn - 1) * u_x_k_str);
        x[i >> 2][i & 3] = i < kn ? v : 0.0;
    }
#endif
    sx = vec2(dot(x[0] + x[1] + x[2] + x[3], vec4(1.0)), dot(x[4] + x[5] + x[6] + x[7], vec4(1.0)));
#endif
}

shared float s_part[ROWS * WG_SIZE];
float gemv_add(float a, float b) { return a + b; }

// One trip's loads: UNROLL whole chunks LANES apart from chunk c of each of the ROWS rows. A trip
// past the row's whole chunks loads its last one again (in bounds, cached) and sums only those it
// has, so that any UNROLL keeps its loads in flight at any K (one program for every K).
void load_trip(int w_row[ROWS], int c, int whole, out Chunk ch[UNROLL * ROWS]) {
    for (int u = 0; u < UNROLL; ++u)
        for (int r = 0; r < ROWS; ++r) ch[u * ROWS + r] = load_chunk(w_row[r], min(c + u * LANES, whole - 1));
}

void main() {
    uint group = tgl_group_index();
    if (int(group) * WG_ROWS >= u_N) return;  // past the grid (the whole workgroup: no barrier waits on it)
    int lid = int(tgl_local_slot()), lane = lid % LANES;
    int n0 = int(group) * WG_ROWS + (lid / LANES) * ROWS;
    int w_row[ROWS];
    for (int r = 0; r < ROWS; ++r) w_row[r] = u_w_base + min(n0 + r, u_N - 1) * u_w_n_str;  // rows past N: read, not stored
    int chunks = (u_K + 31) / 32, whole = u_K / 32;
    // One row of x at a time, in a loop the compilers keep (one small program for every M; W's
    // rows read again for each row of x, from the caches).
    for (int m = 0; m < u_M; ++m) {
        float acc[ROWS];
        for (int r = 0; r < ROWS; ++r) acc[r] = 0.0;
        // Trips of UNROLL whole chunks for each of the ROWS rows: every load of the trip first,
        // then the sums (x read once per chunk for all the rows); the trips whose chunks all
        // lie within the row's whole chunks, then the last one, which checks. The first trip's
        // loads are issued before x is staged, so that their latency and the staging's overlap.
        const int step = UNROLL * LANES;
        int full = whole - whole % step;  // chunks of the trips with every chunk whole
        Chunk ch[UNROLL * ROWS];
#if defined(X_SHARED)
        if (whole > 0) load_trip(w_row, lane, whole, ch);
        stage_x(m, lid);
#endif
        int c = lane;
        for (; c < full; c += step) {
#if defined(X_SHARED)
            if (c != lane) load_trip(w_row, c, whole, ch);
#else
            load_trip(w_row, c, whole, ch);
#endif
            for (int u = 0; u < UNROLL; ++u) {
                vec4 x[8];
                vec2 sx;
                load_x(m, c + u * LANES, 32, x, sx);
                for (int r = 0; r < ROWS; ++r) acc[r] += chunk_dot(ch[u * ROWS + r], c + u * LANES, x, sx);
            }
        }
        if (full < whole) {
#if defined(X_SHARED)
            if (full > 0) load_trip(w_row, c, whole, ch);
#else
            load_trip(w_row, c, whole, ch);
#endif
            for (int u = 0; u < UNROLL; ++u) {
                if (c + u * LANES >= whole) break;
                vec4 x[8];
                vec2 sx;
                load_x(m, c + u * LANES, 32, x, sx);
                for (int r = 0; r < ROWS; ++r) acc[r] += chunk_dot(ch[u * ROWS + r], c + u * LANES, x, sx);
            }
        }
        // The row's partial last chunk (K not a multiple of 32), summed by the lane whose turn it
        // is. Every lane decodes it (the same addresses: cached): Mesa's softpipe gave wrong sums
        // where one lane of its 4-wide quads ran this alone (Gguf.* differential, driver limits).
        if (whole < chunks) {
            Chunk ch[ROWS];
            for (int r = 0; r < ROWS; ++r) ch[r] = load_chunk(w_row[r], whole);
            vec4 x[8];
            vec2 sx;
            load_x(m, whole, u_K - 32 * whole, x, sx);
            bool mine = lane == whole % LANES;
            for (int r = 0; r < ROWS; ++r) acc[r] += mine ? chunk_dot(ch[r], whole, x, sx) : 0.0;
        }
        // The sum over the lanes: shuffles inside a subgroup, then a tree in shared memory
        // (subgroup.glsl; a fixed order: the same bits every run).
        for (int r = 0; r < ROWS; ++r) {
            TGL_SUBGROUP_FOLD(acc[r], 1u, LANES, gemv_add)
            s_part[r * WG_SIZE + lid] = acc[r];
        }
        for (int half_lanes = LANES / 2; half_lanes >= int(TGL_TREE_STOP(1u)); half_lanes /= 2) {
            memoryBarrierShared();
            barrier();
            if (lane < half_lanes)
                for (int r = 0; r < ROWS; ++r) s_part[r * WG_SIZE + lid] += s_part[r * WG_SIZE + lid + half_lanes];
        }
        if (lane == 0)
            for (int r = 0; r < ROWS; ++r) {
                int n = n0 + r;
                if (n >= u_N) break;
                float b = u_has_bias != 0 ? LOAD_FLOAT(b_data, u_b_offset + n * u_b_n_str) : 0.0;
                float v = tgl_activation(u_activation, s_part[r * WG_SIZE + lid] + b);
                y_store_bits(u_y_offset + m * u_y_m_str + n * u_y_n_str, tgl_from_f32(v, Y_DTYPE));
            }
        memoryBarrierShared();
        barrier();  // the partials are written again for the next row of x
    }
}
#endif
