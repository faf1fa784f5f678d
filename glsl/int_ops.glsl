// The integer arithmetic ops (ops.h, "Integer arithmetic"): apply_int(a, b) on the values of
// i32 / i8 / u8 elements (tgl_to_int: i8 sign-extended, u8 zero-extended), selected by one
// OP_<NAME> define; the caller stores the low bits of the result (wrap-around). Never through
// float. With y of i64, apply_int64(a, b) on the uvec2 words of i64 elements instead (int64.glsl;
// add, sub, mul, maximum, minimum, abs, neg, clamp). GLSL ES int addition, subtraction and multiplication keep the low 32 bits; negation,
// division and remainder work on magnitudes in uint, because GLSL leaves INT_MIN / -1 and
// division by zero undefined: here x / 0 = x % 0 = 0 and INT_MIN / -1 wraps to INT_MIN. The CPU
// plugin's int_ops.h is the definition these are checked against.
#include "int64.glsl"
uniform float u_scalars[2];  // clamp: the f32 bounds

#if Y_DTYPE == DT_I64

// clamp's f32 bound rounded inward (lo up, hi down) and saturated to the i64 range.
uvec2 tgl_i64_bound(float v, bool lower) { return tgl_f32_bits_to_i64_sat(floatBitsToUint(lower ? ceil(v) : floor(v))); }

uvec2 apply_int64(uvec2 a, uvec2 b) {
#if defined(OP_ABS)
    return tgl_i64_abs(a);
#elif defined(OP_NEG)
    return tgl_i64_neg(a);
#elif defined(OP_CLAMP)
    return tgl_i64_min(tgl_i64_max(a, tgl_i64_bound(u_scalars[0], true)), tgl_i64_bound(u_scalars[1], false));  // hi wins
#elif defined(OP_ADD)
    return tgl_i64_add(a, b);
#elif defined(OP_SUB)
    return tgl_i64_sub(a, b);
#elif defined(OP_MUL)
    return tgl_i64_mul(a, b);
#elif defined(OP_MAXIMUM)
    return tgl_i64_max(a, b);
#elif defined(OP_MINIMUM)
    return tgl_i64_min(a, b);
#else
#error "int_ops.glsl: no OP_* define of an i64 integer op"
    return a;
#endif
}

#else

int tgl_ineg(int v) { return int(0u - uint(v)); }  // -INT_MIN wraps to INT_MIN
uint tgl_imagnitude(int v) { return v < 0 ? 0u - uint(v) : uint(v); }  // |INT_MIN| = 2^31 in uint

// C division and remainder (truncated; the remainder has the sign of a).
int tgl_idiv_trunc(int a, int b) {
    if (b == 0) return 0;
    uint q = tgl_imagnitude(a) / tgl_imagnitude(b);
    return (a < 0) != (b < 0) ? int(0u - q) : int(q);
}
int tgl_ifmod(int a, int b) {
    if (b == 0) return 0;
    uint r = tgl_imagnitude(a) % tgl_imagnitude(b);
    return a < 0 ? int(0u - r) : int(r);
}
// Python's // and % (floored; the remainder has the sign of b).
int tgl_ifloor_divide(int a, int b) {
    int q = tgl_idiv_trunc(a, b);
    return (tgl_ifmod(a, b) != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}
int tgl_iremainder(int a, int b) {
    int m = tgl_ifmod(a, b);
    return (m != 0 && (m < 0) != (b < 0)) ? m + b : m;
}
// a^b by repeated squaring in uint (the low bits of the exact power); b < 0: trunc(1 / a^-b).
int tgl_ipow(int a, int b) {
    if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) != 0 ? -1 : 1) : 0);
    uint r = 1u, base = uint(a);
    for (uint e = uint(b); e != 0u; e >>= 1) {
        if ((e & 1u) != 0u) r *= base;
        base *= base;
    }
    return int(r);
}

// The range of Y_DTYPE, and clamp's f32 bounds rounded inward (lo up, hi down) and saturated to it.
int tgl_imin_of_dtype() { return Y_DTYPE == DT_I32 ? (-2147483647 - 1) : (Y_DTYPE == DT_I8 ? -128 : 0); }
int tgl_imax_of_dtype() { return Y_DTYPE == DT_I32 ? 2147483647 : (Y_DTYPE == DT_I8 ? 127 : 255); }
int tgl_ibound(float v, bool lower) {
    float r = lower ? ceil(v) : floor(v);
    return tgl_f32_bits_to_int_sat(floatBitsToUint(r), tgl_imin_of_dtype(), tgl_imax_of_dtype());
}

int apply_int(int a, int b) {
#if defined(OP_ABS)
    return a < 0 ? tgl_ineg(a) : a;
#elif defined(OP_NEG)
    return tgl_ineg(a);
#elif defined(OP_CLAMP)
    return min(max(a, tgl_ibound(u_scalars[0], true)), tgl_ibound(u_scalars[1], false));  // hi wins
#elif defined(OP_ADD)
    return a + b;
#elif defined(OP_SUB)
    return a - b;
#elif defined(OP_MUL)
    return a * b;
#elif defined(OP_DIV)
    return tgl_idiv_trunc(a, b);
#elif defined(OP_FLOOR_DIVIDE)
    return tgl_ifloor_divide(a, b);
#elif defined(OP_FMOD)
    return tgl_ifmod(a, b);
#elif defined(OP_REMAINDER)
    return tgl_iremainder(a, b);
#elif defined(OP_POW)
    return tgl_ipow(a, b);
#elif defined(OP_MAXIMUM)
    return max(a, b);
#elif defined(OP_MINIMUM)
    return min(a, b);
#else
#error "int_ops.glsl: no OP_* define of an integer op"
    return 0;
#endif
}
#endif
