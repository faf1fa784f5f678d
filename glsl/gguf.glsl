// The GGUF block formats (plugin_api.h: q4_0 .. q6_K, byte for byte as ggml stores them), decoded
// in units of 16 elements: every element of a unit is scale * q + offset with q a small integer
// (exact in f32) and one scale and offset per unit, so a kernel can sum q * x and x over a unit and
// apply the scale once. scale * q is exact in f32 for every format (at most 22 significant bits but
// q6_K's d * sc * q, whose one rounding is its product) and offset is added once, so a decoded
// element is the exact value rounded once to f32, as the CPU reference rounds its double.
// The including kernel defines GGUF_WORD(i), word i of the bound window holding the blocks (block
// addresses below are bytes of that window; blocks start on 2-byte boundaries). Needs dtype.glsl
// (tgl_f16_to_f32_bits).

#define DT_Q4_0 16
#define DT_Q4_1 17
#define DT_Q5_0 18
#define DT_Q5_1 19
#define DT_Q8_0 20
#define DT_Q4_K 21
#define DT_Q5_K 22
#define DT_Q6_K 23

// The block dtype: the define W_DTYPE where the kernel is specialised per format (the GEMV on a
// GPU: only that format's code, fewer registers), else the uniform u_w_dtype, chosen at run time
// (one program serves every format: a uniform branch; a software renderer compiles it once).
#if defined(W_DTYPE)
#define GGUF_DT W_DTYPE
#else
uniform int u_w_dtype;
#define GGUF_DT u_w_dtype
#endif

// Elements, 16-element units and bytes of one block of the format.
int gguf_block() { return GGUF_DT >= DT_Q4_K ? 256 : 32; }
int gguf_units() { return gguf_block() / 16; }
int gguf_bytes() {
    switch (GGUF_DT) {
    case DT_Q4_0: return 18;
    case DT_Q4_1: return 20;
    case DT_Q5_0: return 22;
    case DT_Q5_1: return 24;
    case DT_Q8_0: return 34;
    case DT_Q4_K: return 144;
    case DT_Q5_K: return 176;
    default: return 210;
    }
}

uint gguf_u16(uint a) { return (GGUF_WORD(a >> 2) >> ((a & 2u) * 8u)) & 0xffffu; }
uint gguf_u8(uint a) { return (GGUF_WORD(a >> 2) >> ((a & 3u) * 8u)) & 0xffu; }
float gguf_f16(uint a) { return uintBitsToFloat(tgl_f16_to_f32_bits(gguf_u16(a))); }
// Four bytes from a 2-byte aligned address, little-endian.
uint gguf_u32(uint a) {
    uint w = a >> 2;
    if ((a & 2u) == 0u) return GGUF_WORD(w);
    return (GGUF_WORD(w) >> 16) | (GGUF_WORD(w + 1u) << 16);
}
// Sixteen bytes from a 2-byte aligned address.
uvec4 gguf_load16(uint a) {
    uint w = a >> 2;
    if ((a & 2u) == 0u) return uvec4(GGUF_WORD(w), GGUF_WORD(w + 1u), GGUF_WORD(w + 2u), GGUF_WORD(w + 3u));
    uint w0 = GGUF_WORD(w), w1 = GGUF_WORD(w + 1u), w2 = GGUF_WORD(w + 2u), w3 = GGUF_WORD(w + 3u), w4 = GGUF_WORD(w + 4u);
    return uvec4((w0 >> 16) | (w1 << 16), (w1 >> 16) | (w2 << 16), (w2 >> 16) | (w3 << 16), (w3 >> 16) | (w4 << 16));
}
// Byte i (0..15) of a uvec4 of 16 bytes.
uint gguf_byte_of(uvec4 v, int i) { return (v[i >> 2] >> (uint(i & 3) * 8u)) & 0xffu; }

// q4_K/q5_K: the 6-bit scales and mins of sub-blocks 2j and 2j + 1 (scales in bytes 0 and 1 of .x,
// mins in those of .y) from the 12 scale bytes as 3 words (byte i: bits 8 (i % 4) of word i / 4).
// Word-wide, two sub-blocks at once and no selects by byte: sub-blocks 0..3 are the low 6 bits of
// bytes 0..3 (scales) and 4..7 (mins); 4..7 the low (scales) and high (mins) nibbles of bytes 8..11,
// their top 2 bits the top bits of bytes 0..3 (scales) and 4..7 (mins). (Decoded per byte with
// selects, and the fields converted by integer conversions, the q4_K GEMV was 5% slower on an
// H100: docs/quantized.md, eleventh look.)
uvec2 gguf_k_pair_scale_min_words(uvec3 sc, int j) {
    uint sh = uint(j & 1) * 16u;
    uint a = sc.x >> sh, b = sc.y >> sh, z = sc.z >> sh;
    uvec2 low = uvec2(a & 0x3F3Fu, b & 0x3F3Fu);
    uvec2 high = uvec2((z & 0x0F0Fu) | ((a >> 2) & 0x3030u), ((z >> 4) & 0x0F0Fu) | ((b >> 2) & 0x3030u));
    return j < 2 ? low : high;  // a select: j differs between neighbouring lanes of the GEMV
}
// Sub-block s (0..7) alone: (scale, min); gguf_k_scale_min reads the 12 bytes at byte address a.
uvec2 gguf_k_scale_min_words(uvec3 sc, int s) { return (gguf_k_pair_scale_min_words(sc, s >> 1) >> uint(s & 1) * 8u) & 0xFFu; }
uvec2 gguf_k_scale_min(uint a, int s) { return gguf_k_scale_min_words(uvec3(gguf_u32(a), gguf_u32(a + 4u), gguf_u32(a + 8u)), s); }

// Unit u (elements 16u .. 16u + 15) of the block at byte address blk: q[i], scale, offset.
void gguf_unit(uint blk, int u, out float q[16], out float scale, out float offset) {
    offset = 0.0;
    int dt = GGUF_DT;
    if (dt <= DT_Q5_1) {  // q4_0, q4_1, q5_0, q5_1: d (, m), (qh,) qs; low nibbles j < 16, high j >= 16
        bool has_min = dt == DT_Q4_1 || dt == DT_Q5_1, five = dt == DT_Q5_0 || dt == DT_Q5_1;
        uint qs_at = 2u + (has_min ? 2u : 0u) + (five ? 4u : 0u);
        scale = gguf_f16(blk);
        if (has_min) offset = gguf_f16(blk + 2u);
        float bias = has_min ? 0.0 : (five ? -16.0 : -8.0);
        uvec4 qs = gguf_load16(blk + qs_at);
        uint shift = uint(u) * 4u;
        uint qh = five ? gguf_u32(blk + qs_at - 4u) >> (uint(u) * 16u) : 0u;
        for (int i = 0; i < 16; ++i) {
            uint v = ((gguf_byte_of(qs, i) >> shift) & 15u) | (((qh >> uint(i)) & 1u) << 4);
            q[i] = float(v) + bias;
        }
    } else if (dt == DT_Q8_0) {
        scale = gguf_f16(blk);
        uvec4 qs = gguf_load16(blk + 2u + uint(u) * 16u);
        for (int i = 0; i < 16; ++i) q[i] = float(int(gguf_byte_of(qs, i) << 24) >> 24);
    } else if (dt != DT_Q6_K) {  // q4_K, q5_K
        int c = u >> 2, h = (u >> 1) & 1, l0 = (u & 1) * 16;
        uvec2 sm = gguf_k_scale_min(blk + 4u, 2 * c + h);
        scale = gguf_f16(blk) * float(sm.x);          // exact: 11 x 6 bits
        offset = -(gguf_f16(blk + 2u) * float(sm.y));  // exact
        bool five = dt == DT_Q5_K;
        uvec4 qs = gguf_load16(blk + (five ? 48u : 16u) + uint(32 * c + l0));
        uvec4 qh = five ? gguf_load16(blk + 16u + uint(l0)) : uvec4(0u);
        for (int i = 0; i < 16; ++i) {
            uint v = ((gguf_byte_of(qs, i) >> uint(4 * h)) & 15u) | (((gguf_byte_of(qh, i) >> uint(2 * c + h)) & 1u) << 4);
            q[i] = float(v);
        }
    } else {  // q6_K
        int a = u >> 3, r = (u >> 1) & 3, l0 = (u & 1) * 16;
        uvec4 ql = gguf_load16(blk + uint(64 * a + 32 * (r & 1) + l0));
        uvec4 qh = gguf_load16(blk + 128u + uint(32 * a + l0));
        int sc = int(gguf_u8(blk + uint(192 + 8 * a + 2 * r + (u & 1))) << 24) >> 24;
        scale = gguf_f16(blk + 208u) * float(sc);  // exact: 11 x 8 bits
        for (int i = 0; i < 16; ++i) {
            uint v = ((gguf_byte_of(ql, i) >> uint(4 * (r >> 1))) & 15u) | (((gguf_byte_of(qh, i) >> uint(2 * r)) & 3u) << 4);
            q[i] = float(int(v) - 32);
        }
    }
}
