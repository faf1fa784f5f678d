// The GGUF block formats (plugin_api.h: q4_0 .. q6_K, byte for byte as ggml stores them), decoded
// in units of 16 elements: every element of a unit is scale * q + offset with q a small integer
// (exact in f32) and one scale and offset per unit, so a kernel can sum q * x and x over a unit and
// apply the scale once. scale * q is exact in f32 for every format (at most 22 significant bits but
// q6_K's d * sc * q, whose one rounding is its product) and offset is added once, so a decoded
// element is the exact value rounded once to f32, as the CPU reference rounds its double.
// The including kernel defines W_DTYPE (the block dtype) and GGUF_WORD(i), word i of the bound
// window holding the blocks (block addresses below are bytes of that window; blocks start on
// 2-byte boundaries). Needs dtype.glsl (tgl_f16_to_f32_bits).

#define DT_Q4_0 16
#define DT_Q4_1 17
#define DT_Q5_0 18
#define DT_Q5_1 19
#define DT_Q8_0 20
#define DT_Q4_K 21
#define DT_Q5_K 22
#define DT_Q6_K 23

#if W_DTYPE >= DT_Q4_K
#define GGUF_BLOCK 256
#else
#define GGUF_BLOCK 32
#endif
#define GGUF_UNITS (GGUF_BLOCK / 16)

#if W_DTYPE == DT_Q4_0
#define GGUF_BYTES 18
#elif W_DTYPE == DT_Q4_1
#define GGUF_BYTES 20
#elif W_DTYPE == DT_Q5_0
#define GGUF_BYTES 22
#elif W_DTYPE == DT_Q5_1
#define GGUF_BYTES 24
#elif W_DTYPE == DT_Q8_0
#define GGUF_BYTES 34
#elif W_DTYPE == DT_Q4_K
#define GGUF_BYTES 144
#elif W_DTYPE == DT_Q5_K
#define GGUF_BYTES 176
#else
#define GGUF_BYTES 210
#endif

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

// q4_K/q5_K: the 6-bit scale and min of sub-block s (0..7), scales at byte address a.
uvec2 gguf_k_scale_min(uint a, int s) {
    if (s < 4) return uvec2(gguf_u8(a + uint(s)) & 63u, gguf_u8(a + uint(s + 4)) & 63u);
    uint b = gguf_u8(a + uint(s + 4));
    return uvec2((b & 15u) | ((gguf_u8(a + uint(s - 4)) >> 6) << 4), (b >> 4) | ((gguf_u8(a + uint(s)) >> 6) << 4));
}

// Unit u (elements 16u .. 16u + 15) of the block at byte address blk: q[i], scale, offset.
void gguf_unit(uint blk, int u, out float q[16], out float scale, out float offset) {
    offset = 0.0;
#if W_DTYPE == DT_Q4_0 || W_DTYPE == DT_Q4_1 || W_DTYPE == DT_Q5_0 || W_DTYPE == DT_Q5_1
#if W_DTYPE == DT_Q4_0 || W_DTYPE == DT_Q5_0
    const uint qs_at = W_DTYPE == DT_Q4_0 ? 2u : 6u;
    scale = gguf_f16(blk);
    const float bias = W_DTYPE == DT_Q4_0 ? -8.0 : -16.0;
#else
    const uint qs_at = W_DTYPE == DT_Q4_1 ? 4u : 8u;
    scale = gguf_f16(blk);
    offset = gguf_f16(blk + 2u);
    const float bias = 0.0;
#endif
    uvec4 qs = gguf_load16(blk + qs_at);
    uint shift = uint(u) * 4u;
#if W_DTYPE == DT_Q5_0 || W_DTYPE == DT_Q5_1
    uint qh = gguf_u32(blk + qs_at - 4u) >> (uint(u) * 16u);
#endif
    for (int i = 0; i < 16; ++i) {
        uint v = (gguf_byte_of(qs, i) >> shift) & 15u;
#if W_DTYPE == DT_Q5_0 || W_DTYPE == DT_Q5_1
        v |= ((qh >> uint(i)) & 1u) << 4;
#endif
        q[i] = float(v) + bias;
    }
#elif W_DTYPE == DT_Q8_0
    scale = gguf_f16(blk);
    uvec4 qs = gguf_load16(blk + 2u + uint(u) * 16u);
    for (int i = 0; i < 16; ++i) q[i] = float(int(gguf_byte_of(qs, i) << 24) >> 24);
#elif W_DTYPE == DT_Q4_K || W_DTYPE == DT_Q5_K
    int c = u >> 2, h = (u >> 1) & 1, l0 = (u & 1) * 16;
    uvec2 sm = gguf_k_scale_min(blk + 4u, 2 * c + h);
    scale = gguf_f16(blk) * float(sm.x);          // exact: 11 x 6 bits
    offset = -(gguf_f16(blk + 2u) * float(sm.y));  // exact
    const uint qs_at = W_DTYPE == DT_Q4_K ? 16u : 48u;
    uvec4 qs = gguf_load16(blk + qs_at + uint(32 * c + l0));
#if W_DTYPE == DT_Q5_K
    uvec4 qh = gguf_load16(blk + 16u + uint(l0));
#endif
    for (int i = 0; i < 16; ++i) {
        uint v = (gguf_byte_of(qs, i) >> uint(4 * h)) & 15u;
#if W_DTYPE == DT_Q5_K
        v |= ((gguf_byte_of(qh, i) >> uint(2 * c + h)) & 1u) << 4;
#endif
        q[i] = float(v);
    }
#else  // q6_K
    int a = u >> 3, r = (u >> 1) & 3, l0 = (u & 1) * 16;
    uvec4 ql = gguf_load16(blk + uint(64 * a + 32 * (r & 1) + l0));
    uvec4 qh = gguf_load16(blk + 128u + uint(32 * a + l0));
    int sc = int(gguf_u8(blk + uint(192 + 8 * a + 2 * r + (u & 1))) << 24) >> 24;
    scale = gguf_f16(blk + 208u) * float(sc);  // exact: 11 x 8 bits
    for (int i = 0; i < 16; ++i) {
        uint v = ((gguf_byte_of(ql, i) >> uint(4 * (r >> 1))) & 15u) | (((gguf_byte_of(qh, i) >> uint(2 * r)) & 3u) << 4);
        q[i] = float(int(v) - 32);
    }
#endif
}
