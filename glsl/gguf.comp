// The GGUF block dtypes on the device (gguf.glsl decodes them; host: backends/gles/gguf_kernels.cpp):
//   PASS_DEQUANT  one invocation per 16-element unit of a row: y[row, k] = the decoded element,
//                 rounded once to Y_DTYPE (dequantize; index_select of a block table with INDEXED:
//                 y's row i0, ... is x's row index[i0], ...; a table larger than one window is
//                 bound in windows of rows [u_lo, u_hi), each dispatch writing the rows whose index
//                 lies in its window). Rows walk RANK leading dims (u_shape; x's row strides in
//                 bytes, y's in elements).
//   PASS_GEMV     linear with block W read directly (decode, M <= 8): y[m, n] = act(sum_k x[m, k] *
//                 W[n, k] + bias[n]); LANES invocations take ROWS rows of W, each lane the pairs
//                 of chunks of 32 elements lane, lane + LANES, ... of those rows, UNROLL pairs of
//                 each row loaded before any is summed; per unit of 16: scale * dot(q, x) (+ offset * sum(x) where the format has offsets),
//                 x read once per chunk for all the rows; then a tree sum over the lanes in shared
//                 memory (so the order is fixed: the same bits every run).
// INDEXED tests tgl_op_failed() first (the index was checked by a check pass under u_check_seq), so
// a failed check writes nothing. At most 4 bindings (the GLES 3.1 minimum).
// Defines: one PASS_*; W_DTYPE (optional: else the uniform u_w_dtype); Y_DTYPE (x, bias, y: f32 or f16); WG_SIZE;
// PASS_DEQUANT: RANK (1..7), INDEXED, I_DTYPE; PASS_GEMV (with W_DTYPE also GEMV_M 1 for one row
// of x, ACTIVATION and GEMV_HAS_BIAS; else the rows of x, the activation and whether there is a
// bias are uniforms): LANES (a power of two), ROWS, UNROLL, PASSES,
// Y_WORDS (y f16 with n-stride 1, each row's element 0 on a word: the workgroup's rows stored as
// whole words of two, not by atomics),
// X_F16_OCTETS (x f16 with k-stride 1, rows on 16-byte boundaries, K a multiple of 8: read eight
// a uvec4) or X_F16_PAIRS (x f16 with k-stride 1 and even offsets: two a word), both widened
// exactly by unpackHalf2x16; X_SHARED (the capacity in vec4s of one row of x staged in shared
// memory as f32, with its sums of 16: 16 quads of X_STR pairs of chunks, X_STR at least
// ceil(K / 64) and 1 modulo 8; X_SHARED = 16 * X_STR; staged by octets under X_F16_OCTETS, else
// element by element); W_ALIGNED (with W_DTYPE: W's rows start on 4-byte boundaries, as then do
// q4_0's and q8_0's pairs of blocks; else the uniform u_w_aligned says so); W_QUADS (with W_DTYPE
// q4_K: W's rows start on 16-byte boundaries, bound as uvec4s: a super-block's header and a pair's
// 32 bytes are one 16-byte load each).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"

#define STATUS_BINDING 3
#if defined(INDEXED)
#include "device_status.glsl"
#endif

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };
#if defined(W_QUADS)
layout(std430, binding = 1) readonly buffer WBuffer { uvec4 w_quads[]; };  // the blocks (q4_K), 16-byte aligned
#define GGUF_WORD(i) w_quads[(i) >> 2][(i) & 3u]
#else
layout(std430, binding = 1) readonly buffer WBuffer { uint w_data[]; };  // the blocks
#define GGUF_WORD(i) w_data[i]
#endif
#if defined(PASS_GEMV) && defined(X_F16_OCTETS)
layout(std430, binding = 2) readonly buffer XBuffer { uvec4 x_oct[]; };
layout(std430, binding = 3) readonly buffer BBuffer { uint b_data[]; };  // the bias (u_has_bias)
#elif defined(PASS_GEMV)
layout(std430, binding = 2) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 3) readonly buffer BBuffer { uint b_data[]; };  // the bias (u_has_bias)
#else
layout(std430, binding = 2) readonly buffer IBuffer { uint i_data[]; };  // the index (INDEXED)
#endif

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
// Where the kernel is specialised (a GPU), the decode's one row of x (GEMV_M 1) and the epilogue
// (ACTIVATION, GEMV_HAS_BIAS) are constants: the compiler drops the loop over x's rows and
// the epilogue's other cases, and with them registers (q4_0 and q4_K 3 - 5% faster on an H100:
// docs/quantized.md, thirteenth look). Else the uniforms: one program for all.
#if defined(GEMV_M)
#define M_COUNT GEMV_M
#if GEMV_M == 1 && PASSES == 1
#define GEMV_ONE_ROUND  // one row of x, one pass: nothing is staged or summed after the stores
#endif
#else
#define M_COUNT u_M
#endif
#if defined(GEMV_HAS_BIAS)
#define HAS_BIAS (GEMV_HAS_BIAS != 0)
#define EPILOGUE_ACTIVATION(v) apply_activation(v)
#else
#define HAS_BIAS (u_has_bias != 0)
#define EPILOGUE_ACTIVATION(v) tgl_activation(u_activation, v)
#endif
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

// A lane's unit of work is a pair: chunks 2p and 2p + 1 of a row (elements 64p .. 64p + 63), each
// two units of 16. Pairs, so that what the two chunks share is known when compiling: q4_K's two
// sub-blocks of a pair are the low and the high nibbles of the same 32 bytes under one scale
// header (one load of each); where W's rows start on 4-byte boundaries (W_ALIGNED), q4_0's and
// q8_0's pair of blocks (36 / 68 bytes) starts on one, so the first block's quants begin 2 bytes
// into a word and the second's on a word, with no per-lane selects.
//
// The fast formats' quants are loaded as whole words and decoded only when summed, so that the
// loads of a trip's pairs are all in flight together; their f16 scales are widened by
// unpackHalf2x16 (exact, one instruction; the subnormal and special scales are in the
// differential tests). The other formats' units are decoded by gguf_unit when summed.
#if !defined(W_DTYPE) || W_DTYPE == DT_Q8_0 || W_DTYPE == DT_Q4_K
#define CHUNK_VEC4 2
#else
#define CHUNK_VEC4 1
#endif
// The fast formats: a chunk of 32 is one block (q4_0, q4_1, q8_0) or sub-block (q4_K) under one
// scale and offset. The others (GEMV_GENERIC) are decoded by gguf_unit.
#define GEMV_FAST(dt) ((dt) == DT_Q4_0 || (dt) == DT_Q4_1 || (dt) == DT_Q8_0 || (dt) == DT_Q4_K)
#if !defined(W_DTYPE) || !GEMV_FAST(W_DTYPE)
#define GEMV_GENERIC
#endif
// Whether format dt's units have an offset term (offset * sum(x)): all but q8_0 and q4_0 (whose
// quants are decoded as q - 8), which then need no sums of x either.
#define GEMV_HAS_OFFSETS(dt) ((dt) != DT_Q4_0 && (dt) != DT_Q8_0)
// Whether format dt's blocks are an f16 scale and then the quants (q4_0's 18 bytes, q8_0's 34):
// blocks on 2-byte boundaries, every other one starting 2 bytes into a word. GEMV_D_WORDS: such a
// block's n words of quants (4 n + 2 bytes a block).
#define GEMV_D_BLOCK(dt) ((dt) == DT_Q4_0 || (dt) == DT_Q8_0)
#define GEMV_D_WORDS(dt) ((dt) == DT_Q8_0 ? 8 : 4)
struct Chunk {
    uvec4 qs[CHUNK_VEC4];  // the quants' words: q4_0, q4_1 the block's 16 bytes; q8_0 its 32; q4_K the 32 bytes of its sub-block pair
    uint next;             // the word after them (their last 2 bytes where shifted)
    bool shifted;          // the quants start 2 bytes into qs[0] (q4_0 and q8_0 blocks on 4-byte boundaries; chunk_shifted)
    vec4 so;               // the units' scales and offsets (scale 0, scale 1, offset 0, offset 1); d_block_pair's: pair_so
#if defined(GEMV_GENERIC)
    int row, c;            // the other formats: decoded when summed
#endif
};

// W's rows all start on 4-byte boundaries (q4_0's and q8_0's blocks then alternate known word
// offsets): the define W_ALIGNED where the kernel is specialised per format, so that the offsets
// are constants; else the uniform u_w_aligned (a software renderer: one program for both).
#if defined(W_DTYPE)
#if defined(W_ALIGNED)
#define GEMV_W_ALIGNED true
#else
#define GEMV_W_ALIGNED false
#endif
#else
uniform int u_w_aligned;
#define GEMV_W_ALIGNED (u_w_aligned != 0)
#endif

Chunk empty_chunk() {
    Chunk k;
    for (int i = 0; i < CHUNK_VEC4; ++i) k.qs[i] = uvec4(0u);
    k.next = 0u;
    k.shifted = false;
    k.so = vec4(0.0);
#if defined(GEMV_GENERIC)
    k.row = 0;
    k.c = 0;
#endif
    return k;
}

// q4_0 (n = 4) or q8_0 (n = 8): the block of 4n + 2 bytes whose first word is w (odd: it starts 2
// bytes into w, so d is w's high half and the quants are words w + 1 .. w + n; else d is w's low
// half and the quants start 2 bytes into w, ending in word w + n).
Chunk d_block_chunk(uint w, bool odd, int n) {
    Chunk k = empty_chunk();
    uint q = w + (odd ? 1u : 0u);
    k.qs[0] = uvec4(GGUF_WORD(q), GGUF_WORD(q + 1u), GGUF_WORD(q + 2u), GGUF_WORD(q + 3u));
    if (n == 8) k.qs[CHUNK_VEC4 - 1] = uvec4(GGUF_WORD(q + 4u), GGUF_WORD(q + 5u), GGUF_WORD(q + 6u), GGUF_WORD(q + 7u));
    k.next = GGUF_WORD(w + uint(n));
    k.shifted = !odd;
    vec2 dd = unpackHalf2x16(GGUF_WORD(w));  // one load, whichever half d is
    float d = odd ? dd.y : dd.x;
    k.so = vec4(d, d, 0.0, 0.0);  // no offsets: q4_0's quants are decoded as q - 8
    return k;
}

// q4_0 (n = 4) or q8_0 (n = 8): the pair of blocks whose 8n + 4 bytes start on word w (rows on
// 4-byte boundaries), its 2n + 1 words each loaded once: block 0's d is word 0's low half and its
// quants start 2 bytes into it, ending in word n, whose high half is block 1's d; block 1's quants
// are words n + 1 .. 2n.
void d_block_pair(uint w, int n, out Chunk k0, out Chunk k1) {
    k0 = empty_chunk();
    k1 = empty_chunk();
    uint mid = GGUF_WORD(w + uint(n)), q = w + uint(n) + 1u;
    k0.qs[0] = uvec4(GGUF_WORD(w), GGUF_WORD(w + 1u), GGUF_WORD(w + 2u), GGUF_WORD(w + 3u));
    k1.qs[0] = uvec4(GGUF_WORD(q), GGUF_WORD(q + 1u), GGUF_WORD(q + 2u), GGUF_WORD(q + 3u));
    if (n == 8) {
        k0.qs[CHUNK_VEC4 - 1] = uvec4(GGUF_WORD(w + 4u), GGUF_WORD(w + 5u), GGUF_WORD(w + 6u), GGUF_WORD(w + 7u));
        k1.qs[CHUNK_VEC4 - 1] = uvec4(GGUF_WORD(q + 4u), GGUF_WORD(q + 5u), GGUF_WORD(q + 6u), GGUF_WORD(q + 7u));
    }
    k0.next = mid;
    k0.shifted = true;
    // so left unset (k1.next too: its quants end on a word): pair_so reads both d's from k0's
    // words when the pair is summed
}

const uint kTwo23Bits = 0x4B000000u;  // 2^23
// v < 2^23 as a float without a conversion instruction: 2^23 + v less 2^23 (fields() below).
float small_uint_float(uint v) { return uintBitsToFloat(kTwo23Bits | v) - 8388608.0; }

// A q4_K sub-block's (scale, offset) from the super-block's (d, dmin) and its 6-bit (scale, min).
vec4 q4k_scale_offset(vec2 d_min, uvec2 sm) {
    float scale = d_min.x * small_uint_float(sm.x);       // exact: 11 x 6 bits
    float offset = -(d_min.y * small_uint_float(sm.y));  // exact
    return vec4(scale, scale, offset, offset);
}

// q4_K: pair j of the super-block whose words start at h (144-byte blocks, word-aligned): chunk
// k0 the low nibbles of the pair's 32 bytes (sub-block 2j), k1 the high (2j + 1). The bytes and
// the scale header are loaded, and the pair's scales decoded, once for both.
void q4k_pair(uint h, int j, out Chunk k0, out Chunk k1) {
    k0 = empty_chunk();
#if defined(W_QUADS)
    // Rows on 16-byte boundaries: the header (d, dmin, the 12 scale bytes) and the pair's 32 bytes
    // are three 16-byte loads (twelve 4-byte ones otherwise).
    uint q = h >> 2;
    uvec4 head = w_quads[q];
    k0.qs[0] = w_quads[q + 1u + 2u * uint(j)];
    k0.qs[CHUNK_VEC4 - 1] = w_quads[q + 2u + 2u * uint(j)];
    uvec3 sc = head.yzw;
    uint dm = head.x;
#else
    uint w = h + 4u + uint(j) * 8u;
    k0.qs[0] = uvec4(GGUF_WORD(w), GGUF_WORD(w + 1u), GGUF_WORD(w + 2u), GGUF_WORD(w + 3u));
    k0.qs[CHUNK_VEC4 - 1] = uvec4(GGUF_WORD(w + 4u), GGUF_WORD(w + 5u), GGUF_WORD(w + 6u), GGUF_WORD(w + 7u));
    uvec3 sc = uvec3(GGUF_WORD(h + 1u), GGUF_WORD(h + 2u), GGUF_WORD(h + 3u));
    uint dm = GGUF_WORD(h);
#endif
    uvec2 sm = gguf_k_pair_scale_min_words(sc, j);  // sub-block 2j in the low bytes, 2j + 1 the next
    vec2 d_min = unpackHalf2x16(dm);
    k1 = k0;
    k0.so = q4k_scale_offset(d_min, sm & 0xFFu);
    k1.so = q4k_scale_offset(d_min, (sm >> 8u) & 0xFFu);
}

// Chunk c of the row at byte `row`; side = c & 1 (a constant where the caller knows it).
Chunk load_chunk(int row, int c, int side) {
    Chunk k = empty_chunk();
    int dt = GGUF_DT;
    if (dt == DT_Q4_K) {
        Chunk k1;
        q4k_pair(uint(row + (c >> 3) * 144) >> 2, (c & 7) >> 1, k, k1);
        if (side != 0) k = k1;
    } else if (GEMV_D_BLOCK(dt)) {
        int n = GEMV_D_WORDS(dt);
        uint a = uint(row + c * (4 * n + 2));
        bool odd = GEMV_W_ALIGNED ? side != 0 : (a & 2u) != 0u;  // aligned rows: the odd blocks start 2 bytes into a word
        k = d_block_chunk(a >> 2, odd, n);
    } else if (dt == DT_Q4_1) {  // 20-byte blocks (word-aligned): d, m, then 16 bytes of nibbles
        uint w = uint(row + c * 20) >> 2;
        vec2 d_m = unpackHalf2x16(GGUF_WORD(w));
        k.qs[0] = uvec4(GGUF_WORD(w + 1u), GGUF_WORD(w + 2u), GGUF_WORD(w + 3u), GGUF_WORD(w + 4u));
        k.so = vec4(d_m.x, d_m.x, d_m.y, d_m.y);
    }
#if defined(GEMV_GENERIC)
    else {
        k.row = row;
        k.c = c;
    }
#endif
    return k;
}

// Pair p of the row at byte `row`: its chunks k0 and k1.
void load_pair(int row, int p, out Chunk k0, out Chunk k1) {
    int dt = GGUF_DT;
    if (dt == DT_Q4_K) {
        q4k_pair(uint(row + (p >> 2) * 144) >> 2, p & 3, k0, k1);
        return;
    }
    if (GEMV_W_ALIGNED && GEMV_D_BLOCK(dt)) {  // the pair's 8n + 4 bytes start on a word
        int n = GEMV_D_WORDS(dt);
        d_block_pair(uint(row + p * (8 * n + 4)) >> 2, n, k0, k1);
        return;
    }
    k0 = load_chunk(row, 2 * p, 0);
    k1 = load_chunk(row, 2 * p + 1, 1);
}

// The scales and offsets of side `side` (chunk k) of the pair whose side 0 is k0, as loaded by
// load_pair. q4_0's and q8_0's pairs on aligned rows (d_block_pair) leave their d's in k0's words,
// read here when the pair is summed: block 0's the low half of its first word, block 1's the high
// half of `next`. Decoded when loaded, the first trip's d's made x's staging (before its barrier)
// wait on W's loads: q4_0 1 - 1.4% slower on an H100 (docs/quantized.md, thirteenth look; q4_K's
// scales decoded when summed were 5% slower: kept in so).
vec4 pair_so(Chunk k0, Chunk k, int side) {
    int dt = GGUF_DT;
    if (!(GEMV_W_ALIGNED && GEMV_D_BLOCK(dt))) return k.so;
    float d = side != 0 ? unpackHalf2x16(k0.next).y : unpackHalf2x16(k0.qs[0].x).x;
    return vec4(d, d, 0.0, 0.0);
}

// Quants as floats without a conversion instruction (an eighth of the rate of an add on NVIDIA's
// recent GPUs) and with few integer ones (half the rate of a float add there: the decode's
// bound): a field f masked in place at bit p (below bit 23) and or'ed into the mantissa of 2^23
// is the float 2^23 + f 2^p, and times 2^-p less 2^(23 - p) that is f exactly (one fused
// multiply-add; unfused, the product is exact too). A signed byte b is read as (b ^ 0x80) =
// b + 128 (flipped by the same instruction that masks it) and offset by 128 more.
// The decoders take 4 bytes as two words b: b.x holds bytes 0 and 1 in its low half, b.y bytes 2
// and 3 (their high halves are masked away), so that bytes 2 bytes into a word cost no more.
vec4 fields(uvec4 w, uvec4 mask, uvec4 flip, vec4 inv, vec4 off) { return uintBitsToFloat((w & mask) ^ flip) * inv - off; }
// Nibbles less `bias` (a constant: q4_0's 8, else 0), exact in the same multiply-add: q4_0's
// blocks then need no offset term, nor x its unit sums.
vec4 low_nibbles(uvec2 b, float bias) {
    return fields(b.xxyy, uvec4(0xFu, 0xF00u, 0xFu, 0xF00u), uvec4(kTwo23Bits), vec4(1.0, 0.00390625, 1.0, 0.00390625),
                  vec4(8388608.0, 32768.0, 8388608.0, 32768.0) + bias);
}
vec4 high_nibbles(uvec2 b, float bias) {
    return fields(b.xxyy, uvec4(0xF0u, 0xF000u, 0xF0u, 0xF000u), uvec4(kTwo23Bits), vec4(0.0625, 0.000244140625, 0.0625, 0.000244140625),
                  vec4(524288.0, 2048.0, 524288.0, 2048.0) + bias);
}
vec4 signed_bytes(uvec2 b) {
    const uvec2 flip = uvec2(kTwo23Bits | 0x80u, kTwo23Bits | 0x8000u);
    return fields(b.xxyy, uvec4(0xFFu, 0xFF00u, 0xFFu, 0xFF00u), flip.xyxy, vec4(1.0, 0.00390625, 1.0, 0.00390625),
                  vec4(8388736.0, 32896.0, 8388736.0, 32896.0));
}

// Whether chunk k (side 0 or 1 of its pair) starts 2 bytes into its first word. Where W's rows
// are 4-byte aligned that is known from the side (q4_0's and q8_0's pairs: block 0 shifted, block
// 1 not; the other formats' blocks start on words), so the decode has no select or branch on a
// flag the compiler cannot see through the chunk arrays carried across trips (NVIDIA's compiler
// tested k.shifted at run time for every 4 bytes: docs/quantized.md, tenth look).
bool chunk_shifted(Chunk k, int side) {
    int dt = GGUF_DT;
    if (!GEMV_D_BLOCK(dt)) return false;
    return GEMV_W_ALIGNED ? side == 0 : k.shifted;
}

// Bytes 4j .. 4j + 3 of the chunk's quants (n words of them) as the decoders take them.
uvec2 quant_bytes(Chunk k, bool shifted, int j, int n) {
    uint w = k.qs[j >> 2][j & 3];
    if (!shifted) return uvec2(w, w >> 16);
    return uvec2(w >> 16, j + 1 < n ? k.qs[(j + 1) >> 2][(j + 1) & 3] : k.next);
}

// s + dot(q, x) as four multiply-adds into s (one fused instruction each where the compiler fuses).
float dot_into(float s, vec4 q, vec4 x) {
    s += q.x * x.x;
    s += q.y * x.y;
    s += q.z * x.z;
    s += q.w * x.w;
    return s;
}

// A chunk's sum over its two units from their dot products sqx and x's sums sx: scale * sqx +
// offset * sx (so: scale 0, scale 1, offset 0, offset 1; q8_0 and q4_0: no offsets, sx unread).
// A fast format's chunk has one scale and offset: its units' terms are added before the one
// multiply each. (GEMV_HAS_OFFSETS holds for every other format: their units carry an offset, 0 or not.)
float units_sum(int dt, vec4 so, vec2 sqx, vec2 sx) {
    if (GEMV_FAST(dt)) return GEMV_HAS_OFFSETS(dt) ? so.x * (sqx.x + sqx.y) + so.z * (sx.x + sx.y) : so.x * (sqx.x + sqx.y);
    return (so.x * sqx.x + so.z * sx.x) + (so.y * sqx.y + so.w * sx.y);
}

// The chunk's sum over its two units of scale * sum(q x) + offset * sum(x) (q8_0 and q4_0: no
// offsets, sx unread): so its (scale 0, scale 1, offset 0, offset 1), x its 32 elements (zero
// past K), sx the sums of x over each unit; side: the chunk's side of its pair (q4_K: 1 the high
// nibbles of the pair's 32 bytes).
float chunk_dot(Chunk k, vec4 so, int side, vec4 x[8], vec2 sx) {
    int dt = GGUF_DT;
    bool shifted = chunk_shifted(k, side);
    vec2 sqx = vec2(0.0);
    if (dt == DT_Q8_0) {
        for (int j = 0; j < 8; ++j) sqx[j >> 2] = dot_into(sqx[j >> 2], signed_bytes(quant_bytes(k, shifted, j, 8)), x[j]);
    } else if (dt == DT_Q4_0 || dt == DT_Q4_1) {  // unit 0 the low nibbles of the 16 bytes, unit 1 the high
        float bias = dt == DT_Q4_0 ? 8.0 : 0.0;
        for (int j = 0; j < 4; ++j) {
            uvec2 b = quant_bytes(k, shifted, j, 4);
            sqx.x = dot_into(sqx.x, low_nibbles(b, bias), x[j]);
            sqx.y = dot_into(sqx.y, high_nibbles(b, bias), x[4 + j]);
        }
    } else if (dt == DT_Q4_K) {  // the nibble half of `side` (1: high) of the pair's bytes 0..15 (unit 0), 16..31 (unit 1)
        for (int j = 0; j < 8; ++j) {
            uvec2 b = quant_bytes(k, shifted, j, 8);
            sqx[j >> 2] = dot_into(sqx[j >> 2], side != 0 ? high_nibbles(b, 0.0) : low_nibbles(b, 0.0), x[j]);
        }
    }
#if defined(GEMV_GENERIC)
    else {
        uint at = uint(k.row + ((2 * k.c) / gguf_units()) * gguf_bytes());
        int u = (2 * k.c) % gguf_units();
        for (int p = 0; p < 2; ++p) {
            float q[16], scale, offset;
            gguf_unit(at, u + p, q, scale, offset);
            for (int j = 0; j < 4; ++j) sqx[p] = dot_into(sqx[p], vec4(q[4 * j], q[4 * j + 1], q[4 * j + 2], q[4 * j + 3]), x[4 * p + j]);
            so[p] = scale;
            so[2 + p] = offset;
        }
    }
#endif
    return units_sum(dt, so, sqx, sx);
}

#if defined(X_F16_OCTETS)
// Quad `half_` (0: halves 0..3, 1: halves 4..7) of an octet of f16 x, widened exactly.
vec4 octet_quad(uvec4 v, int half_) { return half_ == 0 ? vec4(unpackHalf2x16(v.x), unpackHalf2x16(v.y)) : vec4(unpackHalf2x16(v.z), unpackHalf2x16(v.w)); }
#endif

#if defined(X_SHARED)
// One row of x staged per workgroup in shared memory, widened to f32, zeros past K, with the sums
// of its units of 16: every row of W then reads its chunks' 32 floats and 2 sums from there
// instead of loading, widening and summing x again (64 arithmetic instructions a chunk, the
// decode GEMV's largest share after the quants' own: docs/quantized.md). Quad j (0..15) of pair p
// is s_x[j * X_STR + p]: the lanes' reads of consecutive pairs are consecutive vec4s (no bank
// conflict). X_STR is a constant (1 modulo 8), so that a pair's 16 reads take constant offsets
// from one address.
shared vec4 s_x[X_SHARED];
shared vec4 s_sx[X_STR];  // the sums of pair p's four units

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

#if defined(X_F16_OCTETS)
// Octet o of x's row at xa as stored: eight halves (x from a 16-byte boundary, K a multiple of 8;
// zeros past K).
uvec4 x_octet(int xa, int o) { return o < u_K / 8 ? x_oct[(xa >> 3) + o] : uvec4(0u); }
#endif

// x staged an octet an invocation, the first octet's load issued before W's first trip
// (X_BY_OCTETS), where the format needs no unit sums (q4_0, q8_0: no offsets) or the two octets of
// a unit are summed by a shuffle; else a unit of 16 an invocation, with its sum.
#if defined(X_F16_OCTETS) && defined(W_DTYPE) && (!GEMV_HAS_OFFSETS(W_DTYPE) || defined(TGL_SUBGROUP_SIZE))
#define X_BY_OCTETS
// Octet o (quads 2 (o & 1) and the next of unit o / 2) into s_x where `staged` (o below the staged
// octets), and the unit's sum into s_sx where the format has offsets. Every invocation of the
// workgroup calls it (the shuffle: octets o and o ^ 1 are slots lid and lid ^ 1).
void put_octet(int o, uvec4 v, bool staged) {
    vec4 q0 = octet_quad(v, 0), q1 = octet_quad(v, 1);
    int u = o >> 1, j = 4 * (u & 3) + 2 * (o & 1);
    if (staged) {
        s_x[j * X_STR + (u >> 2)] = q0;
        s_x[(j + 1) * X_STR + (u >> 2)] = q1;
    }
#if GEMV_HAS_OFFSETS(W_DTYPE)
    float s = dot(q0 + q1, vec4(1.0));
    s += subgroupShuffleXor(s, 1u);
    if (staged && (o & 1) == 0) s_sx[u >> 2][u & 3] = s;
#endif
}
#else
// Unit u (4 quads) into s_x, with its sum into s_sx where the format has offsets.
void put_unit(int u, vec4 q[4]) {
    for (int j = 0; j < 4; ++j) s_x[(4 * (u & 3) + j) * X_STR + (u >> 2)] = q[j];
    if (GEMV_HAS_OFFSETS(GGUF_DT)) s_sx[u >> 2][u & 3] = dot(q[0] + q[1] + q[2] + q[3], vec4(1.0));
}
#endif

// The units of 16 of x's row staged: those of whole pairs (the last zero-padded).
int staged_units() { return 4 * ((u_K + 63) / 64); }

// Row m of x into s_x (and s_sx), from its octet or unit `from` + lid on, WG_SIZE apart.
void stage_x(int m, int lid, int from) {
    int units = staged_units(), xa = u_x_offset + m * u_x_m_str;
#if defined(X_BY_OCTETS)
    for (int o0 = from; o0 < 2 * units; o0 += WG_SIZE) {  // in step across the workgroup (put_octet)
        int o = o0 + lid;
        put_octet(o, o < 2 * units ? x_octet(xa, o) : uvec4(0u), o < 2 * units);
    }
#else
    for (int u = from + lid; u < units; u += WG_SIZE) {
        vec4 q[4];
#if defined(X_F16_OCTETS)
        uvec4 lo = x_octet(xa, 2 * u), hi = x_octet(xa, 2 * u + 1);
        q[0] = octet_quad(lo, 0);
        q[1] = octet_quad(lo, 1);
        q[2] = octet_quad(hi, 0);
        q[3] = octet_quad(hi, 1);
#else
        for (int j = 0; j < 4; ++j) q[j] = x_quad(xa, 16 * u + 4 * j);
#endif
        put_unit(u, q);
    }
#endif
    memoryBarrierShared();
    barrier();
}
#endif

// Chunk 2p + side of row m of x: its elements (kn <= 32 of them, zeros after; read at the last
// one: x ends there) and their sums over each unit of 16.
void load_x(int m, int p, int side, int kn, out vec4 x[8], out vec2 sx) {
#if defined(X_SHARED)
    for (int j = 0; j < 8; ++j) x[j] = s_x[(8 * side + j) * X_STR + p];
    sx = side != 0 ? s_sx[p].zw : s_sx[p].xy;
#else
    int xa = u_x_offset + m * u_x_m_str + 32 * (2 * p + side) * u_x_k_str;
#if defined(X_F16_OCTETS)
    // x f16, contiguous along k from a 16-byte boundary, K a multiple of 8: eight a uvec4
    for (int i = 0; i < 4; ++i) {
        uvec4 v = x_oct[(xa >> 3) + min(i, (kn - 1) >> 3)];
        bool in_k = 8 * i < kn;
        x[2 * i] = in_k ? octet_quad(v, 0) : vec4(0.0);
        x[2 * i + 1] = in_k ? octet_quad(v, 1) : vec4(0.0);
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
// Whether the lanes' sum needs the tree in shared memory (more lanes than a subgroup folds); else
// every lane holds its rows' sums after the shuffles.
#define GEMV_TREE (LANES / 2 >= int(TGL_TREE_STOP(1u)))
// Row r's sum over the lanes, read by its lane 0 (slot lid) after the shuffles and the tree; own:
// that lane's accumulator of row r.
float lanes_sum(int r, int lid, float own) { return GEMV_TREE ? s_part[r * WG_SIZE + lid] : own; }
// Row n of y (n < N, else bias 0: not stored) as Y_DTYPE bits: the lanes' sum, the bias, the activation.
uint y_bits(int n, float sum) {
    float b = HAS_BIAS && n < u_N ? LOAD_FLOAT(b_data, u_b_offset + n * u_b_n_str) : 0.0;
    return tgl_from_f32(EPILOGUE_ACTIVATION(sum + b), Y_DTYPE);
}
#if defined(Y_WORDS)
shared uint s_yh[WG_ROWS];  // the workgroup's rows' f16 bits, for the stores by words
#endif
float gemv_add(float a, float b) { return a + b; }

// One trip's loads: UNROLL pairs LANES apart from pair p of each of the ROWS rows (chunks
// ch[2 (u ROWS + r)] and the next). A trip past the row's whole pairs loads its last one again
// (in bounds, cached) and sums only those it has, so that any UNROLL keeps its loads in flight
// at any K (one program for every K).
void load_trip(int w_row[ROWS], int p, int pairs, out Chunk ch[2 * UNROLL * ROWS]) {
    for (int u = 0; u < UNROLL; ++u)
        for (int r = 0; r < ROWS; ++r) load_pair(w_row[r], min(p + u * LANES, pairs - 1), ch[2 * (u * ROWS + r)], ch[2 * (u * ROWS + r) + 1]);
}

#if defined(X_SHARED) && defined(W_DTYPE) && W_DTYPE == DT_Q4_K
#define Q4K_PAIR_BY_WORDS
// q4_K with x staged: the trip's pair u (pair pu of x) of each row summed word by word. Each of
// the pair's 8 words of quants holds 4 elements of either chunk (its low and its high nibbles),
// so one pass over the words decodes both halves of a word together and reads each quad of x
// from shared memory just before its use: two quads live at a time, where chunk by chunk a side's
// 32 floats of x are held through its sums (q4_K 1% faster at wg512, 3% at wg1024 on an H100:
// docs/quantized.md, fourteenth look). The same products in the same order as chunk_dot's.
void q4k_pair_sums(int u, int pu, Chunk ch[2 * UNROLL * ROWS], inout float acc[ROWS]) {
    vec4 sq[ROWS];  // per row: chunk 0's units 0 and 1, chunk 1's units 0 and 1
    for (int r = 0; r < ROWS; ++r) sq[r] = vec4(0.0);
    for (int j = 0; j < 8; ++j) {
        vec4 x0 = s_x[j * X_STR + pu], x1 = s_x[(8 + j) * X_STR + pu];
        for (int r = 0; r < ROWS; ++r) {
            uvec2 b = quant_bytes(ch[2 * (u * ROWS + r)], false, j, 8);
            sq[r][j >> 2] = dot_into(sq[r][j >> 2], low_nibbles(b, 0.0), x0);
            sq[r][2 + (j >> 2)] = dot_into(sq[r][2 + (j >> 2)], high_nibbles(b, 0.0), x1);
        }
    }
    vec4 sx = s_sx[pu];
    for (int r = 0; r < ROWS; ++r) {
        int c = 2 * (u * ROWS + r);
        acc[r] += units_sum(DT_Q4_K, ch[c].so, sq[r].xy, sx.xy);
        acc[r] += units_sum(DT_Q4_K, ch[c + 1].so, sq[r].zw, sx.zw);
    }
}
#endif

// The trip's sums into acc: x read once per chunk for all the rows; with `check`, only the pairs
// below `pairs`.
void sum_trip(int m, int p, int pairs, bool check, Chunk ch[2 * UNROLL * ROWS], inout float acc[ROWS]) {
    for (int u = 0; u < UNROLL; ++u) {
        int pu = p + u * LANES;
        if (check && pu >= pairs) break;
#if defined(Q4K_PAIR_BY_WORDS)
        q4k_pair_sums(u, pu, ch, acc);
#else
        for (int side = 0; side < 2; ++side) {
            vec4 x[8];
            vec2 sx;
            load_x(m, pu, side, 32, x, sx);
            for (int r = 0; r < ROWS; ++r) {
                int c = 2 * (u * ROWS + r);
                acc[r] += chunk_dot(ch[c + side], pair_so(ch[c], ch[c + side], side), side, x, sx);
            }
        }
#endif
    }
}

// Row r of this invocation's rows of W from the workgroup's row n0 on (rows past N: read, not stored).
int w_row_at(int n0, int r) { return u_w_base + min(n0 + r, u_N - 1) * u_w_n_str; }

void main() {
    uint group = tgl_group_index();
    int first = int(group) * PASSES * WG_ROWS;  // the workgroup's first row of W
    if (first >= u_N) return;  // past the grid (the whole workgroup: no barrier waits on it)
    int lid = int(tgl_local_slot()), lane = lid % LANES, own = (lid / LANES) * ROWS;
    int pairs = u_K / 64;  // whole pairs
    const int step = UNROLL * LANES;  // pairs a trip
    // One row of x at a time, in a loop the compilers keep (one small program for every M; W's
    // rows read again for each row of x, from the caches); none where GEMV_M is 1.
    for (int m = 0; m < M_COUNT; ++m) {
        // Trips of UNROLL whole pairs for each of the ROWS rows: every load of the trip first,
        // then the sums. Where the kernel is specialised per format (a GPU), a trip's loads are
        // issued early where they can be: the first pass's first trip before x is staged, the
        // next pass's during this one's sum over the lanes, so that their latency and that work
        // overlap (a software renderer loads each trip in one place: its compile time grows
        // with every inlined load).
        Chunk ch[2 * UNROLL * ROWS];
        int w_row[ROWS];
        for (int r = 0; r < ROWS; ++r) w_row[r] = w_row_at(first + own, r);
        bool loaded = false;  // ch holds this pass's first trip
#if defined(X_SHARED)
#if defined(X_BY_OCTETS)
        // x's first octet loaded before W's first trip: staging x waits on its load alone, not
        // queued behind W's
        int x_at = u_x_offset + m * u_x_m_str;
        bool x_first = lid < 2 * staged_units();
        uvec4 xo = x_first ? x_octet(x_at, lid) : uvec4(0u);
        if (pairs > 0) load_trip(w_row, lane, pairs, ch);
        loaded = true;
        put_octet(lid, xo, x_first);
        stage_x(m, lid, WG_SIZE);
#else
#if defined(W_DTYPE)
        if (pairs > 0) load_trip(w_row, lane, pairs, ch);
        loaded = true;
#endif
        stage_x(m, lid, 0);
#endif
#endif
        // PASSES groups of WG_ROWS rows, one after another, with x staged once for all.
        for (int pass = 0; pass < PASSES; ++pass) {
            int n0 = first + pass * WG_ROWS + own;
            if (first + pass * WG_ROWS >= u_N) break;  // the same for the whole workgroup
            float acc[ROWS];
            for (int r = 0; r < ROWS; ++r) {
                w_row[r] = w_row_at(n0, r);
                acc[r] = 0.0;
            }
            // Trips: pairs p, p + LANES, ... from p = lane. On a GPU the trips whose pairs are all
            // whole go first, without checks (measured: fewer instructions a pair); the rest check.
            int p = lane;
#if defined(W_DTYPE)
            for (; p < pairs - pairs % step; p += step) {
                if (!loaded) load_trip(w_row, p, pairs, ch);
                loaded = false;
                sum_trip(m, p, pairs, false, ch, acc);
            }
#endif
            for (; p - lane < pairs; p += step) {
                if (!loaded) load_trip(w_row, p, pairs, ch);
                loaded = false;
                sum_trip(m, p, pairs, true, ch, acc);
            }
            // The row's elements past its whole pairs (K % 64: a whole chunk, a partial one, or
            // both), summed by the lane whose turn it is. Every lane decodes them (the same
            // addresses: cached): Mesa's softpipe gave wrong sums where one lane of its 4-wide
            // quads ran this alone (Gguf.* differential, driver limits).
            bool mine = lane == pairs % LANES;
            for (int side = 0; side < 2; ++side) {
                int c = 2 * pairs + side;
                if (32 * c >= u_K) break;
                Chunk k[ROWS];
                for (int r = 0; r < ROWS; ++r) k[r] = load_chunk(w_row[r], c, side);
                vec4 x[8];
                vec2 sx;
                load_x(m, pairs, side, min(32, u_K - 32 * c), x, sx);
                for (int r = 0; r < ROWS; ++r) acc[r] += mine ? chunk_dot(k[r], k[r].so, side, x, sx) : 0.0;
            }
#if defined(W_DTYPE)
            if (pairs > 0 && pass + 1 < PASSES && first + (pass + 1) * WG_ROWS < u_N) {
                int next[ROWS];
                for (int r = 0; r < ROWS; ++r) next[r] = w_row_at(n0 + WG_ROWS, r);
                load_trip(next, lane, pairs, ch);
                loaded = true;
            }
#endif
            // The sum over the lanes: shuffles inside a subgroup, then a tree in shared memory
            // (subgroup.glsl; a fixed order: the same bits every run).
            for (int r = 0; r < ROWS; ++r) {
                TGL_SUBGROUP_FOLD(acc[r], 1u, LANES, gemv_add)
                if (GEMV_TREE) s_part[r * WG_SIZE + lid] = acc[r];
            }
            for (int half_lanes = LANES / 2; half_lanes >= int(TGL_TREE_STOP(1u)); half_lanes /= 2) {
                memoryBarrierShared();
                barrier();
                if (lane < half_lanes)
                    for (int r = 0; r < ROWS; ++r) s_part[r * WG_SIZE + lid] += s_part[r * WG_SIZE + lid + half_lanes];
            }
#if defined(Y_WORDS) && Y_DTYPE == DT_F16
            // y f16, contiguous, its row's element 0 on a word: the workgroup's rows written as whole
            // words of two (plain stores, where a row on its own changes its half of a word shared with
            // the next row by two atomics); a last row without its pair keeps the atomics.
            if (lane == 0)
                for (int r = 0; r < ROWS; ++r) s_yh[own + r] = y_bits(n0 + r, lanes_sum(r, lid, acc[r]));
            memoryBarrierShared();
            barrier();
            if (lid < WG_ROWS / 2) {
                int n = first + pass * WG_ROWS + 2 * lid, at = u_y_offset + m * u_y_m_str + n;
                if (n + 1 < u_N) y_data[at >> 1] = s_yh[2 * lid] | (s_yh[2 * lid + 1] << 16);
                else if (n < u_N) y_store_bits(at, s_yh[2 * lid]);
            }
#else
            if (lane == 0)
                for (int r = 0; r < ROWS; ++r) {
                    int n = n0 + r;
                    if (n >= u_N) break;
                    y_store_bits(u_y_offset + m * u_y_m_str + n * u_y_n_str, y_bits(n, lanes_sum(r, lid, acc[r])));
                }
#endif
#if !defined(GEMV_ONE_ROUND)
            memoryBarrierShared();
            barrier();  // the partials are written again for the next row of x or pass
#endif
        }
    }
}
#endif
