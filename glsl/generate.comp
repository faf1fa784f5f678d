// The Generate family: one invocation per element of y, in y's row-major (logical) order k over
// an N-d strided index space (GeneratePlan: rank up to 8, negative strides allowed); eye/tril/triu
// take the coordinates of the last two dims as (i, j).
//
// Defines (the variant preamble):
//   OP_ARANGE_INT    y = the low bits of u_start + k * u_step (uint arithmetic wraps mod 2^32)
//   OP_ARANGE_FLOAT  y = start + f32(k) * step in f32 (start, step: f32 bits in u_start, u_step)
//   OP_FULL          y = u_bits
//   OP_EYE           y = (j - i == u_diagonal) ? u_bits : 0
//   OP_TRIL, OP_TRIU y = x where j - i <= / >= u_diagonal, else 0 (y may be x's own view: in place)
//   OP_UNIFORM       Philox4x32-10 (key u_random.xy, counter u_random.zw + k): a + (b - a) * u
//   OP_NORMAL        Philox4x32-10, Box-Muller: a + b * sqrt(-2 ln u1) * cos(2 pi u2)
//   Y_DTYPE, RANK (0..8), WG_SIZE
// No product below may be fused into an fma with the sum that follows (the CPU reference rounds
// both): opaque() hides the product behind an integer op the compiler cannot see through
// (u_zero is 0), since GLSL ES 3.10 has no 'precise'.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };
#if defined(OP_TRIL) || defined(OP_TRIU)
#define HAS_X
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };
#endif

#include "store.glsl"

uniform uint u_numel;
uniform int u_y_offset;
uniform int u_x_offset;
#if RANK > 0
uniform int u_shape[RANK];
uniform int u_y_stride[RANK];
uniform int u_x_stride[RANK];
#endif
uniform uint u_bits;      // full, eye
uniform int u_diagonal;   // eye, tril, triu
uniform uint u_start;     // arange
uniform uint u_step;
uniform uvec4 u_random;   // seed low, seed high, offset low, offset high
uniform float u_a;
uniform float u_b;
uniform uint u_zero;

float opaque(float x) { return uintBitsToFloat(floatBitsToUint(x) ^ u_zero); }

#if defined(OP_UNIFORM) || defined(OP_NORMAL)
#include "philox.glsl"
// The words of element k: counter = offset + k as a 64-bit sum in two words.
uvec4 random_words(uint k) { return philox_words_at(u_random.xy, u_random.zw, k); }
#endif

#if defined(OP_NORMAL)
// ln(m * 2^-24) for an integer m in [1, 2^24], to a few ulp (GLSL's log() may be off by far more):
// m = x * 2^e with x in [sqrt(1/2), sqrt(2)], ln x = 2 atanh(s), s = (x - 1) / (x + 1), |s| < 0.172,
// the series to s^11; ln 2 split so that (e - 24) * ln2_hi is exact.
float log_scaled(uint m) {
    int e = findMSB(m);
    float x = uintBitsToFloat(floatBitsToUint(float(m)) - (uint(e) << 23));  // m / 2^e, exact
    if (x > 1.41421356) {
        x *= 0.5;
        e += 1;
    }
    float s = (x - 1.0) / (x + 1.0);
    float s2 = s * s;
    float poly = 0.6666666667 + s2 * (0.4 + s2 * (0.2857142857 + s2 * (0.2222222222 + s2 * 0.1818181818)));
    float n = float(e - 24);
    return n * 0.693145751953125 + (n * 1.428606765330187e-6 + (2.0 * s + s * s2 * poly));
}

// cos(2 pi u) for u = m * 2^-24 in [0, 1): 4u = n + f exactly, |f| <= 1/2, theta = f pi/2, and the
// quadrant n picks +-cos(theta) or +-sin(theta) (Taylor series; |theta| <= pi/4). The zeros at
// u = 1/4, 3/4 are exact and the result keeps its relative accuracy near them.
float cos_two_pi(float u) {
    float t = 4.0 * u;
    float n = floor(t + 0.5);
    float th = (t - n) * 1.5707963268;
    float t2 = th * th;
    float c = 1.0 + t2 * (-0.5 + t2 * (4.16666667e-2 + t2 * (-1.38888889e-3 + t2 * (2.48015873e-5 + t2 * -2.75573192e-7))));
    float s = th + th * t2 * (-0.166666667 + t2 * (8.33333333e-3 + t2 * (-1.98412698e-4 + t2 * (2.75573192e-6 + t2 * -2.50521084e-8))));
    int q = int(n) & 3;
    return q == 0 ? c : (q == 1 ? -s : (q == 2 ? -c : s));
}
#endif

// The element bits of y at row-major index k (coordinates i, j of the last two dims; x's element
// offset ox for tril/triu).
uint element_bits(uint k, int i, int j, int ox) {
#if defined(OP_ARANGE_INT)
    return u_start + k * u_step;
#elif defined(OP_ARANGE_FLOAT)
    float fk = uintBitsToFloat(tgl_int_to_float_bits(int(k), 8, 23));  // rounded to nearest even
    return tgl_from_f32(uintBitsToFloat(u_start) + opaque(fk * uintBitsToFloat(u_step)), Y_DTYPE);
#elif defined(OP_FULL)
    return u_bits;
#elif defined(OP_EYE)
    return j - i == u_diagonal ? u_bits : 0u;
#elif defined(HAS_X)
#if defined(OP_TRIL)
    bool keep = j - i <= u_diagonal;
#else
    bool keep = j - i >= u_diagonal;
#endif
    return keep ? tgl_extract(x_data[tgl_word_of(ox, Y_DTYPE)], ox, Y_DTYPE) : 0u;
#elif defined(OP_UNIFORM)
    uvec4 w = random_words(k);
    float u = float(w.x >> 8) * 5.9604644775390625e-8;  // 2^-24, exact
    return tgl_from_f32(u_a + opaque((u_b - u_a) * u), Y_DTYPE);
#elif defined(OP_NORMAL)
    uvec4 w = random_words(k);
    float r = sqrt(-2.0 * log_scaled((w.x >> 8) + 1u));
    float z = r * cos_two_pi(float(w.y >> 8) * 5.9604644775390625e-8);
    return tgl_from_f32(u_a + u_b * z, Y_DTYPE);
#else
#error "generate.comp: no OP_* define"
#endif
}

void main() {
    uint k = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (k >= u_numel) return;
    int oy = u_y_offset;
    int ox = u_x_offset;
    int i = 0, j = 0;
#if RANK > 0
    // Row-major decomposition of k over u_shape (innermost dim last); dim 0 takes the quotient.
    uint rest = k;
    for (int d = RANK - 1; d >= 0; --d) {
        int c;
        if (d > 0) {
            uint n = uint(u_shape[d]);
            c = int(rest % n);
            rest /= n;
        } else {
            c = int(rest);
        }
        oy += c * u_y_stride[d];
        ox += c * u_x_stride[d];
        if (d == RANK - 1) j = c;
        if (d == RANK - 2) i = c;
    }
#endif
    y_store_bits(oy, element_bits(k, i, j, ox));
}
