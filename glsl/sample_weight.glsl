// sample's logit keys and integer weights, shared by sample.comp and sample_split.comp (the CPU
// twin is sample_weight() in backends/common/sequence_rules.h). Include after the logits block
// (x_data, binding 0) is declared.
uniform int u_x_n;       // the stride of logits along V
uniform float u_inv_t;
uniform uint u_exp2[24];
uniform uint u_zero;  // 0: opaque() hides a value from the optimiser (no fusing or refolding)

float opaque(float x) { return uintBitsToFloat(floatBitsToUint(x) ^ u_zero); }

// The key of logit j of the row at `base` (NaN: -inf).
float key_at(int base, uint j) {
    int o = base + int(j) * u_x_n;
    float v = tgl_to_f32(tgl_extract(x_data[tgl_word_of(o, X_DTYPE)], o, X_DTYPE), X_DTYPE);
    return tgl_isnan(v) ? tgl_neg_inf() : v;
}

uint weight(float key, float m) {
    // Each step rounded as the CPU rounds it: the product t is not re-associated with log2 e.
    float z = opaque((key - m) * u_inv_t) * 1.44269504088896341;
    if (!(z > -24.0)) return 0u;
    uint q = uint(-z * 16777216.0);
    uint a = 0x80000000u;
    for (int k = 1; k <= 24; ++k)
        if (((q >> uint(24 - k)) & 1u) != 0u) {
            uint hi, lo;
            umulExtended(a, u_exp2[k - 1], hi, lo);
            a = (hi << 1) | (lo >> 31);
        }
    return a >> ((q >> 24) + 7u);
}

// 64-bit (lo, hi) sums of weights: int64.glsl's wrap-around add and sub (never wrapping here), and
// an unsigned comparison.
#include "int64.glsl"
bool ge64(uvec2 a, uvec2 b) { return a.y > b.y || (a.y == b.y && a.x >= b.x); }

// top_p's need = ceil(top_p16 * total / 2^16); total < 2^48, so the product fits 64 bits.
uvec2 top_p_need(uint top_p16, uvec2 total) {
    uint ph, pl;
    umulExtended(top_p16, total.x, ph, pl);
    uvec2 prod = tgl_i64_add(uvec2(pl, ph + top_p16 * total.y), uvec2(65535u, 0u));
    return uvec2((prod.x >> 16) | (prod.y << 16), prod.y >> 16);
}

// The draw's target = floor(r * total / 2^32) = floor(r * lo / 2^32) + r * hi (hi < 2^16).
uvec2 draw_target(uint r, uvec2 total) {
    uint h1, l1, hh, hl;
    umulExtended(r, total.x, h1, l1);
    umulExtended(r, total.y, hh, hl);
    return tgl_i64_add(uvec2(h1, 0u), uvec2(hl, hh));
}
