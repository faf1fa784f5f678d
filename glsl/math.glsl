// NaN-safe math for the elementwise ops. GLSL ES leaves exp/log/pow/tanh/sqrt undefined or
// inaccurate at the edges (log(0), pow(x<0, y), tanh(large), sqrt(x) as x*inversesqrt(x), ...), and
// its accuracy limits are loose (exp: 3 + 2|x| ulp). So the special values are handled explicitly
// and exp/log/tanh/erfc are evaluated with their own range reduction and minimax polynomials
// (Cephes single-precision coefficients), using only +, *, /, floor and bit operations.
#include "common.glsl"

const float TGL_LOG2E = 1.4426950408889634;
const float TGL_LN2_HI = 0.693359375;        // 355/512: n * TGL_LN2_HI is exact for |n| < 2^15
const float TGL_LN2_LO = -2.12194440e-4;     // ln 2 - TGL_LN2_HI
const float TGL_SQRT_HALF = 0.70710678118654752;

// exp(t) * 2^k, with k an integer-valued float. Over/underflows where the exact value does.
float tgl_exp_scaled(float t, float k) {
    float e2 = k + t * TGL_LOG2E;  // log2 of the result, roughly
    if (e2 > 130.0) return tgl_inf();
    if (e2 < -160.0) return 0.0;
    float n = floor(t * TGL_LOG2E + 0.5);
    float r = t - n * TGL_LN2_HI;
    r = r - n * TGL_LN2_LO;
    float z = r * r;
    float p = 1.9875691500e-4;
    p = p * r + 1.3981999507e-3;
    p = p * r + 8.3334519073e-3;
    p = p * r + 4.1665795894e-2;
    p = p * r + 1.6666665459e-1;
    p = p * r + 5.0000001201e-1;
    float y = p * z + r + 1.0;
    return tgl_ldexp(y, int(n) + int(k));
}

// exp(x): exp(+inf) = +inf, exp(-inf) = 0, overflow gives +inf.
float tgl_exp(float x) {
    if (tgl_isnan(x)) return x;
    if (x > 88.72283172607422) return tgl_inf();  // the largest float with a finite exp
    if (x < -104.0) return 0.0;
    return tgl_exp_scaled(x, 0.0);
}

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1] (|f| <= 0.415): f - f^2/2 + f^3 P(f), taking
// f itself (not 1 + f, which would round), so it is also log1p on that interval.
float tgl_log1p_poly(float f) {
    float z = f * f;
    float y = 7.0376836292e-2;
    y = y * f - 1.1514610310e-1;
    y = y * f + 1.1676998740e-1;
    y = y * f - 1.2420140846e-1;
    y = y * f + 1.4249322787e-1;
    y = y * f - 1.6668057665e-1;
    y = y * f + 2.0000714765e-1;
    y = y * f - 2.4999993993e-1;
    y = y * f + 3.3333331174e-1;
    y = y * f * z;
    return f + (y - 0.5 * z);
}

// Splits a positive, finite, nonzero x into x = 2^e * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)),
// and returns log(1 + f) (|log(1 + f)| <= 0.347).
float tgl_log_parts(float x, out int e) {
    uint b = floatBitsToUint(x);
    e = 0;
    if ((b & 0x7f800000u) == 0u) {  // subnormal: scale into the normal range
        x *= 8388608.0;
        b = floatBitsToUint(x);
        e = -23;
    }
    e += int(b >> 23) - 126;
    float m = uintBitsToFloat((b & 0x007fffffu) | 0x3f000000u);  // in [0.5, 1)
    float f;
    if (m < TGL_SQRT_HALF) {
        e -= 1;
        f = m + m - 1.0;
    } else {
        f = m - 1.0;
    }
    return tgl_log1p_poly(f);
}

// log(x): log(0) = -inf, log(x < 0) = NaN, log(+inf) = +inf.
float tgl_log(float x) {
    uint b = floatBitsToUint(x);
    if ((b & 0x7fffffffu) > 0x7f800000u) return x;
    if ((b & 0x7fffffffu) == 0u) return tgl_neg_inf();
    if ((b & 0x80000000u) != 0u) return tgl_nan();
    if (b == 0x7f800000u) return x;
    int e;
    float l = tgl_log_parts(x, e);
    float fe = float(e);
    return (l + fe * TGL_LN2_LO) + fe * TGL_LN2_HI;
}

// sqrt(x): sqrt(-0) = -0, sqrt(x < 0) = NaN, sqrt(+inf) = +inf.
float tgl_sqrt(float x) {
    if (tgl_isnan(x) || tgl_iszero(x)) return x;
    if (tgl_signbit(x)) return tgl_nan();
    if (tgl_isinf(x)) return x;
    return sqrt(x);
}

// IEEE division with the special cases spelled out (x/0 = +-inf, 0/0 = NaN, inf/inf = NaN) and
// divisors beyond 2^126 scaled, so that reciprocal-based division does not flush the result.
float tgl_div(float a, float b) {
    if (tgl_isnan(a) || tgl_isnan(b)) return tgl_nan();
    bool neg = tgl_signbit(a) != tgl_signbit(b);
    if (tgl_iszero(b)) {
        if (tgl_iszero(a)) return tgl_nan();
        return neg ? tgl_neg_inf() : tgl_inf();
    }
    if (tgl_isinf(b)) {
        if (tgl_isinf(a)) return tgl_nan();
        return neg ? tgl_neg_zero() : 0.0;
    }
    if (tgl_isinf(a)) return neg ? tgl_neg_inf() : tgl_inf();
    // b / 4 by its exponent bits (b is normal here): a compiler may fold (a * 0.25) / (b * 0.25)
    // back into a * rcp(b), which a GPU that flushes subnormals makes 0.
    if (tgl_abs(b) > 8.507059e37) return (a * 0.25) / uintBitsToFloat(floatBitsToUint(b) - 0x01000000u);
    return a / b;
}

// tanh(x): tanh(+-inf) = +-1.
float tgl_tanh(float x) {
    if (tgl_isnan(x)) return x;
    float z = tgl_abs(x);
    if (z > 9.1) return tgl_copysign(1.0, x);  // tanh(9.1) rounds to 1 in f32
    if (z >= 0.625) {
        float s = tgl_exp(z + z);
        z = 1.0 - 2.0 / (s + 1.0);
        return tgl_copysign(z, x);
    }
    if (tgl_iszero(x)) return x;
    float s = x * x;
    float p = -5.70498872745e-3;
    p = p * s + 2.06390887954e-2;
    p = p * s - 5.37397155531e-2;
    p = p * s + 1.33314422036e-1;
    p = p * s - 3.33332819422e-1;
    return p * s * x + x;
}

// x * exp(t) for t < -40, where exp(t) alone may be subnormal (and flushed by the GPU) while the
// product is not: exp(t) * 2^64 is formed first and the 2^-64 applied last.
float tgl_mul_exp(float x, float t) { return tgl_ldexp(x * tgl_exp_scaled(t, 64.0), -64); }

// 1 / (1 + exp(-x)); below -40 that is exp(x) to within 2^-57.
float tgl_sigmoid(float x) {
    if (tgl_isnan(x)) return x;
    if (x < -40.0) return tgl_exp(x);
    return 1.0 / (1.0 + tgl_exp(-x));
}

// x * sigmoid(t) without overflowing 1 + exp(-t).
float tgl_mul_sigmoid(float x, float t) {
    if (t < -40.0) return tgl_mul_exp(x, t);
    return x / (1.0 + tgl_exp(-t));
}

// The gated activations x * g(x) at infinities: IEEE's value of the product (+inf * 1 = +inf,
// -inf * 0 = NaN), as PyTorch computes it; spelled out, since GLSL does not promise IEEE products.
float tgl_gated_at_inf(float x) { return tgl_signbit(x) ? tgl_nan() : x; }

// x * sigmoid(x).
float tgl_silu(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_isinf(x)) return tgl_gated_at_inf(x);
    return tgl_mul_sigmoid(x, x);
}

// exp(-x*x) for x >= 0 without the error of rounding x*x: x = m + f with m a multiple of 1/32,
// so m*m is exact and exp(-m*m) * exp(-(2mf + f*f)) only carries exp's own error.
float tgl_exp_neg_square(float x) {
    if (x > 10.5) return 0.0;
    float m = floor(x * 32.0 + 0.5) * 0.03125;
    float f = x - m;
    return tgl_exp(-(m * m)) * tgl_exp(-((m + m) * f + f * f));
}

// exp(-x*x/2) for x >= 0, the same way (m*m/2 is exact too).
float tgl_exp_neg_half_square(float x) {
    if (x > 14.9) return 0.0;
    float m = floor(x * 32.0 + 0.5) * 0.03125;
    float f = x - m;
    return tgl_exp(-(m * m * 0.5)) * tgl_exp(-(m * f + 0.5 * f * f));
}

// erf(x) for |x| < 1.
float tgl_erf_small(float x) {
    float z = x * x;
    float p = 7.853861353153693e-5;
    p = p * z - 8.010193625184903e-4;
    p = p * z + 5.188327685732524e-3;
    p = p * z - 2.685381193529856e-2;
    p = p * z + 1.128358514861418e-1;
    p = p * z - 3.761262582423300e-1;
    p = p * z + 1.128379165726710e+0;
    return x * p;
}

// erfc(a) for 1 <= |a| <= 10.5, given g = exp(-a*a): g * P(1/a^2) / |a| (Cephes erfcf), reflected
// for a < 0. Taking g from the caller lets gelu form it from x exactly (a = -x/sqrt(2) is rounded,
// and the rounding of a*a would be amplified by 2a^2 in the result).
float tgl_erfc_tail(float a, float g) {
    float x = tgl_abs(a);
    float q = 1.0 / x;
    float y = q * q;
    float p;
    if (x < 2.0) {
        p = 2.326819970068386e-2;
        p = p * y - 1.387039388740657e-1;
        p = p * y + 3.687424674597105e-1;
        p = p * y - 5.824733027278666e-1;
        p = p * y + 6.210004621745983e-1;
        p = p * y - 4.944515323274145e-1;
        p = p * y + 3.404879937665872e-1;
        p = p * y - 2.741127028184656e-1;
        p = p * y + 5.638259427386472e-1;
    } else {
        p = -1.047766399936249e+1;
        p = p * y + 1.297719955372516e+1;
        p = p * y - 7.495518717768503e+0;
        p = p * y + 2.921019019210786e+0;
        p = p * y - 1.015265279202700e+0;
        p = p * y + 4.218463358204948e-1;
        p = p * y - 2.820767439740514e-1;
        p = p * y + 5.641895067754075e-1;
    }
    float r = g * q * p;
    return tgl_signbit(a) ? 2.0 - r : r;
}

// erfc(a) = 1 - erf(a), accurate in the tails: erfc(+inf) = 0, erfc(-inf) = 2.
float tgl_erfc(float a) {
    if (tgl_isnan(a)) return a;
    float x = tgl_abs(a);
    if (x < 1.0) return 1.0 - tgl_erf_small(a);
    if (x > 10.5) return tgl_signbit(a) ? 2.0 : 0.0;
    return tgl_erfc_tail(a, tgl_exp_neg_square(x));
}

// gelu, erf form: 0.5 * x * erfc(-x / sqrt(2)).
float tgl_gelu_erf(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_isinf(x)) return tgl_gated_at_inf(x);
    float a = x * -0.70710678118654752;
    float c;
    if (tgl_abs(a) < 1.0) c = 1.0 - tgl_erf_small(a);
    else if (tgl_abs(a) > 10.5) c = tgl_signbit(a) ? 2.0 : 0.0;
    else c = tgl_erfc_tail(a, tgl_exp_neg_half_square(tgl_abs(x)));
    return 0.5 * x * c;
}

// gelu, tanh form: 0.5 * x * (1 + tanh(u)) with u = sqrt(2/pi) * (x + 0.044715 x^3), evaluated as
// x * sigmoid(2u) (the same function), which keeps its accuracy for negative x.
float tgl_gelu_tanh(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_isinf(x)) return tgl_gated_at_inf(x);
    float u = 0.79788456080286536 * (x + 0.044715 * x * x * x);
    return tgl_mul_sigmoid(x, 2.0 * u);
}

// C99 pow(x, y): pow(x, +-0) = 1 (even for NaN x), pow(1, y) = 1 (even for NaN y), a negative base
// with an integer exponent keeps the sign of the parity, with a non-integer exponent gives NaN,
// pow(+-0, y < 0) = +-inf, pow(-1, +-inf) = 1, and the limits for infinite x or y.
float tgl_pow(float x, float y) {
    if (tgl_iszero(y)) return 1.0;
    if (floatBitsToUint(x) == 0x3f800000u) return 1.0;
    if (tgl_isnan(x) || tgl_isnan(y)) return tgl_nan();
    float ax = tgl_abs(x);
    float ay = tgl_abs(y);
    if (tgl_isinf(y)) {
        if (ax == 1.0) return 1.0;
        return ((ax < 1.0) == tgl_signbit(y)) ? tgl_inf() : 0.0;
    }
    bool y_int = floor(ay) == ay;
    // Every float of magnitude >= 2^24 is an even integer.
    bool y_odd = y_int && ay < 16777216.0 && (uint(ay) & 1u) == 1u;
    bool neg = tgl_signbit(x);
    if (tgl_iszero(x)) {
        if (tgl_signbit(y)) return (y_odd && neg) ? tgl_neg_inf() : tgl_inf();
        return (y_odd && neg) ? tgl_neg_zero() : 0.0;
    }
    if (tgl_isinf(x)) {
        float r = tgl_signbit(y) ? 0.0 : tgl_inf();
        return (y_odd && neg) ? tgl_neg(r) : r;
    }
    if (neg && !y_int) return tgl_nan();
    // |x|^y = 2^(y*e) * exp(y * log(1 + f)). y*e is formed exactly as yh*e + yl*e (yh keeps the
    // top 12 significand bits of y, so both products are exact), and its integer part is applied
    // as a power of two: only y * log(1 + f) and the fraction carry rounding error.
    int e;
    float l = tgl_log_parts(ax, e);
    float fe = float(e);
    // Far out of range (|y * log2|x|| > 300, which also keeps y*e below 2^24 below): 0 or inf.
    float approx = y * (fe + l * 1.4426950408889634);
    if (tgl_abs(approx) > 300.0) {
        float r = approx > 0.0 ? tgl_inf() : 0.0;
        return (y_odd && neg) ? tgl_neg(r) : r;
    }
    float yh = uintBitsToFloat(floatBitsToUint(y) & 0xfffff000u);
    float yl = y - yh;
    float a = yh * fe;
    float b = yl * fe;
    float k = floor(a + 0.5);
    float t = ((a - k) + b) * 0.69314718055994531 + y * l;
    float r = tgl_exp_scaled(t, k);
    return (y_odd && neg) ? tgl_neg(r) : r;
}

// relu(NaN) = NaN.
float tgl_relu(float x) { return (x > 0.0 || tgl_isnan(x)) ? x : 0.0; }

// ---------------------------------------------------------------------------------------------
// The math of the activation, rounding and trigonometric elementwise ops (sign .. clamp, fmod,
// remainder, atan2). Same rules as above: special values from bit tests, only exact built-ins
// (integer ops, +, -, *, comparisons) where exactness is promised.

// Whether x is a subnormal (nonzero, exponent bits 0). GPUs may flush those in arithmetic, so
// the few ops where it matters rebuild them from their bits: x = m * 2^-149 with m an integer.
bool tgl_issubnormal(float x) {
    uint b = floatBitsToUint(x) & 0x7fffffffu;
    return b != 0u && b < 0x00800000u;
}
float tgl_subnormal_mantissa(float x) { return float(floatBitsToUint(x) & 0x007fffffu); }

// -1, 0 or 1; sign(+-0) = +-0, sign(NaN) = NaN.
float tgl_sign(float x) {
    if (tgl_isnan(x) || tgl_iszero(x)) return x;
    return tgl_copysign(1.0, x);
}

// expm1(x) = exp(x) - 1, accurate near 0: x = k ln2 + r (|r| <= ln2 / 2, Cody-Waite), then
// expm1(x) = 2^k expm1(r) + (2^k - 1), where 2^k - 1 is exact for -24 <= k <= 24 and expm1(r) is
// its Taylor polynomial (degree 9; truncation error < 2^-30 relative).
float tgl_expm1_reduced(float r) {
    float p = 2.7557319224e-6;     // 1/9!
    p = p * r + 2.4801587302e-5;   // 1/8!
    p = p * r + 1.9841269841e-4;   // 1/7!
    p = p * r + 1.3888888889e-3;   // 1/6!
    p = p * r + 8.3333333333e-3;   // 1/5!
    p = p * r + 4.1666666667e-2;   // 1/4!
    p = p * r + 1.6666666667e-1;   // 1/3!
    p = p * r + 0.5;
    return r + (r * r) * p;
}

float tgl_expm1(float x) {
    if (tgl_isnan(x) || tgl_iszero(x)) return x;
    if (x > 88.72283172607422) return tgl_inf();
    if (x < -17.5) return -1.0;  // expm1(-17.5) = -1 + 2.5e-8 rounds to -1
    float k = floor(x * TGL_LOG2E + 0.5);
    if (k == 0.0) return tgl_expm1_reduced(x);
    float r = x - k * TGL_LN2_HI;
    r = r - k * TGL_LN2_LO;
    float p = tgl_expm1_reduced(r);
    if (k > 60.0) return tgl_exp_scaled(x, 0.0);  // the -1 is far below the last bit
    float s = tgl_exp2i(int(k));
    return s * p + (s - 1.0);
}

// log1p(x) = log(1 + x), accurate near 0; log1p(-1) = -inf, log1p(x < -1) = NaN.
float tgl_log1p(float x) {
    if (tgl_isnan(x) || tgl_iszero(x)) return x;
    if (x == -1.0) return tgl_neg_inf();
    if (x < -1.0) return tgl_nan();
    if (tgl_isinf(x)) return x;
    // Near 0, log(1 + x) from the polynomial of x itself. (The classic log(u) * x / (u - 1) with
    // u = 1 + x does not survive compilers that fold (1 + x) - 1 to x: GLSL ES 3.10 has no
    // `precise`.) Elsewhere log1p(x) >= 0.34 in magnitude and rounding 1 + x costs <= 3 ulp.
    if (x >= -0.29289321881 && x <= 0.41421356237) return tgl_log1p_poly(x);
    return tgl_log(1.0 + x);
}

// 1 / sqrt(x): rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(x < 0) = NaN, rsqrt(+inf) = 0.
// inversesqrt() (2 ulp allowed) refined by one Newton step.
float tgl_rsqrt(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_iszero(x)) return tgl_signbit(x) ? tgl_neg_inf() : tgl_inf();
    if (tgl_signbit(x)) return tgl_nan();
    if (tgl_isinf(x)) return 0.0;
    float scale = 1.0;
    if (tgl_issubnormal(x)) {  // x = 2m * 2^-150: rsqrt(x) = rsqrt(2m) * 2^75
        x = 2.0 * tgl_subnormal_mantissa(x);
        scale = tgl_exp2i(75);
    }
    float y = inversesqrt(x);
    y = y * (1.5 - (0.5 * x * y) * y);
    return y * scale;
}

// 1 / x with IEEE special values (see tgl_div); a subnormal x is rebuilt from its bits.
float tgl_reciprocal(float x) {
    if (tgl_issubnormal(x)) return tgl_copysign(tgl_ldexp(1.0 / tgl_subnormal_mantissa(x), 149), x);
    return tgl_div(1.0, x);
}

// x * x; square(-0) = +0.
float tgl_square(float x) { return x * x; }

// trunc, floor, ceil and round (half to even) from the bits, exact for every float: the integer
// part of x is x with its fraction bits cleared, and x - trunc(x) is exact. Integral results that
// are zero keep the sign of x (floor(-0) = -0, ceil(-0.5) = -0, round(-0.5) = -0).
float tgl_trunc(float x) {
    uint b = floatBitsToUint(x);
    int e = int((b >> 23) & 0xffu) - 127;
    if (e >= 23) return x;  // integral already (and NaN, inf)
    if (e < 0) return uintBitsToFloat(b & 0x80000000u);
    return uintBitsToFloat(b & ~(0x007fffffu >> uint(e)));
}

float tgl_floor(float x) {
    float t = tgl_trunc(x);
    return (t != x && tgl_signbit(x)) ? t - 1.0 : t;
}

float tgl_ceil(float x) {
    float t = tgl_trunc(x);
    return (t != x && !tgl_signbit(x)) ? t + 1.0 : t;
}

float tgl_round(float x) {
    float t = tgl_trunc(x);
    if (t == x) return x;  // integral, NaN-free here: NaN and inf are integral for tgl_trunc
    float f = tgl_abs(x - t);  // exact, in (0, 1)
    // |t| < 2^23 here, so int(t) is exact and t +- 1 too.
    bool up = f > 0.5 || (f == 0.5 && (abs(int(t)) & 1) == 1);
    return up ? t + tgl_copysign(1.0, x) : t;
}

// minimum(maximum(x, lo), hi) (the zero rules of maximum/minimum: +0 > -0): hi wins when
// lo > hi, NaN stays NaN (the bounds are never NaN).
float tgl_clamp(float x, float lo, float hi) { return tgl_minimum(tgl_maximum(x, lo), hi); }

// x >= 0 ? x : slope * x (leaky_relu(-0) = -0 * ... = -0 as in PyTorch: -0 >= 0).
float tgl_leaky_relu(float x, float slope) {
    if (tgl_isnan(x)) return x;
    return x >= 0.0 ? x : slope * x;
}

// x > 0 ? x : alpha * expm1(x); elu(-0) = alpha * -0.
float tgl_elu(float x, float alpha) {
    if (tgl_isnan(x)) return x;
    return x > 0.0 ? x : alpha * tgl_expm1(x);
}

// PyTorch's SELU constants.
const float TGL_SELU_SCALE = 1.0507009873554804934;
const float TGL_SELU_ALPHA = 1.6732632423543772848;

float tgl_selu(float x) {
    if (tgl_isnan(x)) return x;
    return x > 0.0 ? TGL_SELU_SCALE * x : TGL_SELU_SCALE * (TGL_SELU_ALPHA * tgl_expm1(x));
}

// max(0, x) + min(0, alpha * expm1(x / alpha)), which is x > 0 ? x : alpha * expm1(x / alpha) for
// either sign of alpha (PyTorch evaluates it that way too).
float tgl_celu(float x, float alpha) {
    if (tgl_isnan(x)) return x;
    return x > 0.0 ? x : alpha * tgl_expm1(tgl_div(x, alpha));
}

// clamp(x / 6 + 1/2, 0, 1).
float tgl_hardsigmoid(float x) {
    if (tgl_isnan(x)) return x;
    if (x <= -3.0) return 0.0;
    if (x >= 3.0) return 1.0;
    return (x + 3.0) / 6.0;  // x + 3 is exact near -3, where x / 6 + 1/2 would cancel
}

// x * hardsigmoid(x): x for x >= 3, and for finite x <= -3 the -0 that x * 0 gives.
float tgl_hardswish(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_isinf(x)) return tgl_gated_at_inf(x);
    if (x <= -3.0) return tgl_neg_zero();
    if (x >= 3.0) return x;
    return x * (x + 3.0) / 6.0;
}

// log(1 + exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|)).
float tgl_softplus_unit(float z) {
    if (z > 0.0) return z + tgl_log1p(tgl_exp(-z));
    return tgl_log1p(tgl_exp(z));
}

// PyTorch's rule: with z = beta * x (rounded to f32), x where z > threshold, else
// log(1 + exp(z)) / beta.
float tgl_softplus(float x, float beta, float threshold) {
    if (tgl_isnan(x)) return x;
    float z = x * beta;
    if (z > threshold) return x;
    // z = -inf: log(1 + 0) / beta = +-0. z = +inf (x infinite, or x * beta beyond f32 with an
    // infinite threshold): the result is z / beta = x.
    if (tgl_isinf(z)) return z > 0.0 ? x : (tgl_signbit(beta) ? tgl_neg_zero() : 0.0);
    return tgl_div(tgl_softplus_unit(z), beta);
}

// x * tanh(log(1 + e^x)). With e = e^x, tanh(log(1 + e)) = n / (n + 2), n = e (e + 2), exactly;
// above 9.1 it rounds to 1, below -40 it is e to within 2^-57.
float tgl_mish(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_isinf(x)) return tgl_gated_at_inf(x);
    if (x > 9.1) return x;
    if (x < -40.0) return tgl_mul_exp(x, x);
    float e = tgl_exp(x);
    float n = e * (e + 2.0);
    return x * (n / (n + 2.0));
}

// erf(x) = sign(x) (1 - erfc(|x|)) for |x| >= 1; erf(+-inf) = +-1, erf(-0) = -0.
float tgl_erf(float x) {
    if (tgl_isnan(x)) return x;
    float a = tgl_abs(x);
    if (a < 1.0) return tgl_erf_small(x);
    if (a > 4.0) return tgl_copysign(1.0, x);  // erfc(4) = 1.5e-8 is below half an ulp of 1
    return tgl_copysign(1.0 - tgl_erfc_tail(a, tgl_exp_neg_square(a)), x);
}

// ----- sin, cos ----------------------------------------------------------------------------------
// Argument reduction x = j pi/2 + r, |r| <= pi/4, exact for every finite float (Payne-Hanek): x =
// M 2^E with M a 24-bit integer, and x 2/pi mod 4 only needs the bits of 2/pi from weight 2^(E-2)
// (earlier bits give multiples of 4) down to ~2^(E-96): M times those 96 bits is an exact 120-bit
// integer product, whose top bits are j and the next 64 the fraction of r.

// The fraction bits of 2/pi, 32 per word, after one word of zeros (the bits "before" the point).
const uint TGL_TWO_OVER_PI[9] = uint[9](0u, 0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u,
                                        0xDB629599u, 0x3C439041u, 0xFE5163ABu, 0xDEBBC561u);

// 32 bits of 2/pi starting at fraction bit p (bit 1 weighs 2^-1; p >= -30, bits p <= 0 are 0).
uint tgl_two_over_pi_bits(int p) {
    int idx = (p + 31) >> 5;
    uint o = uint((p + 31) & 31);
    uint w = TGL_TWO_OVER_PI[idx] << o;
    if (o != 0u) w |= TGL_TWO_OVER_PI[idx + 1] >> (32u - o);
    return w;
}

// For finite |x| >= pi/4 (so E >= -24): returns r with |r| <= pi/4 and sets j = quadrant (0..3)
// with |x| = j pi/2 + r (mod 2 pi).
float tgl_reduce_pio2(float ax, out int j) {
    uint b = floatBitsToUint(ax);
    uint M = (b & 0x007fffffu) | 0x00800000u;
    int E = int(b >> 23) - 150;
    int b0 = E - 2;  // M 2^E * (bits from b0 + 1 on) = M * W * 2^(E - b0 - 96) = P * 2^-94
    uint w0 = tgl_two_over_pi_bits(b0 + 1);
    uint w1 = tgl_two_over_pi_bits(b0 + 33);
    uint w2 = tgl_two_over_pi_bits(b0 + 65);
    uint h0, l0, h1, l1, h2, l2, c1, c2;
    umulExtended(M, w0, h0, l0);
    umulExtended(M, w1, h1, l1);
    umulExtended(M, w2, h2, l2);
    // P = p3:p2:p1:p0 (p0 = l2 is below the bits used).
    uint p1 = uaddCarry(h2, l1, c1);
    uint p2 = uaddCarry(h1, l0, c2);
    p2 = uaddCarry(p2, c1, c1);
    // Point between bits 94 and 93 of P: j = bits 95..94, the fraction = bits 93..30.
    j = int(p2 >> 30);
    uint f_hi = (p2 << 2) | (p1 >> 30);
    uint f_lo = (p1 << 2) | (l2 >> 30);
    float sgn = 1.0;
    if ((f_hi & 0x80000000u) != 0u) {  // fraction >= 1/2: r = -(1 - fraction) pi/2, j + 1
        j = (j + 1) & 3;
        sgn = -1.0;
        f_lo = ~f_lo + 1u;
        f_hi = ~f_hi + (f_lo == 0u ? 1u : 0u);
    }
    // The 64-bit fraction in three exact 24-, 24- and 16-bit pieces.
    float a = float(f_hi >> 8) * 5.9604644775390625e-8;                          // 2^-24
    float c = float(((f_hi & 0xffu) << 16) | (f_lo >> 16)) * 3.552713678800501e-15;  // 2^-48
    float d = float(f_lo & 0xffffu) * 5.421010862427522e-20;                       // 2^-64
    float f = a + (c + d);
    // r = f * pi/2 with pi/2 = 1.5707963705062866 - 4.37113900018624e-8.
    float r = f * 1.5707963705062866 - f * 4.37113900018624e-8;
    return sgn * r;
}

// sin and cos of |r| <= pi/4 (Cephes sinf / cosf minimax polynomials).
float tgl_sin_poly(float r) {
    float z = r * r;
    float p = -1.9515295891e-4;
    p = p * z + 8.3321608736e-3;
    p = p * z - 1.6666654611e-1;
    return r + r * z * p;
}
float tgl_cos_poly(float r) {
    float z = r * r;
    float p = 2.443315711809948e-5;
    p = p * z - 1.388731625493765e-3;
    p = p * z + 4.166664568298827e-2;
    return (1.0 - 0.5 * z) + z * z * p;
}

// sin(x): sin(+-0) = +-0, sin(+-inf) = NaN.
float tgl_sin(float x) {
    if (tgl_isnan(x) || tgl_isinf(x)) return tgl_nan();
    if (tgl_iszero(x)) return x;  // r + r z p would turn -0 into +0
    float ax = tgl_abs(x);
    if (ax <= 0.78539816339744831) return tgl_sin_poly(x);
    int j;
    float r = tgl_reduce_pio2(ax, j);
    float s = (j & 1) == 0 ? tgl_sin_poly(r) : tgl_cos_poly(r);
    if (j >= 2) s = -s;
    return tgl_signbit(x) ? -s : s;
}

// cos(x): cos(+-inf) = NaN.
float tgl_cos(float x) {
    if (tgl_isnan(x) || tgl_isinf(x)) return tgl_nan();
    float ax = tgl_abs(x);
    if (ax <= 0.78539816339744831) return tgl_cos_poly(ax);
    int j;
    float r = tgl_reduce_pio2(ax, j);
    float c = (j & 1) == 0 ? tgl_cos_poly(r) : tgl_sin_poly(r);
    return (j == 1 || j == 2) ? -c : c;
}

// ----- fmod, remainder, atan2 ------------------------------------------------------------------

// C fmod(a, b), exact: long division of the integer significands, bit by bit (musl's fmodf), so
// neither rounding nor flushed subnormals can enter. fmod(a, +-0) = fmod(+-inf, b) = NaN,
// fmod(a, +-inf) = a for finite a, a zero result has the sign of a.
float tgl_fmod(float a, float b) {
    uint ua = floatBitsToUint(a), ub = floatBitsToUint(b);
    uint sx = ua & 0x80000000u;
    uint ax = ua & 0x7fffffffu, ay = ub & 0x7fffffffu;
    if (ay == 0u || ay > 0x7f800000u || ax >= 0x7f800000u) return tgl_nan();
    if (ax <= ay) return ax == ay ? uintBitsToFloat(sx) : a;  // also b = inf
    int ex = int(ax >> 23), ey = int(ay >> 23);
    uint mx, my;
    // Significands as integers with the leading 1 at bit 23 (subnormals normalised).
    if (ex == 0) {
        mx = ax;
        ex = 1;
        while ((mx & 0x00800000u) == 0u) { mx <<= 1; --ex; }
    } else {
        mx = (ax & 0x007fffffu) | 0x00800000u;
    }
    if (ey == 0) {
        my = ay;
        ey = 1;
        while ((my & 0x00800000u) == 0u) { my <<= 1; --ey; }
    } else {
        my = (ay & 0x007fffffu) | 0x00800000u;
    }
    for (; ex > ey; --ex) {
        if (mx >= my) {
            mx -= my;
            if (mx == 0u) return uintBitsToFloat(sx);
        }
        mx <<= 1;
    }
    if (mx >= my) {
        mx -= my;
        if (mx == 0u) return uintBitsToFloat(sx);
    }
    while ((mx & 0x00800000u) == 0u) { mx <<= 1; --ex; }
    if (ex > 0) mx = (mx & 0x007fffffu) | (uint(ex) << 23);
    else mx >>= uint(1 - ex);  // subnormal result (exact: the low bits shifted out are 0)
    return uintBitsToFloat(mx | sx);
}

// Python's a % b (torch.remainder): fmod, moved by b when the signs differ; a zero result has the
// sign of b. remainder(a, +-inf) is a when a has b's sign (or is 0), else b.
float tgl_remainder(float a, float b) {
    float m = tgl_fmod(a, b);
    if (tgl_isnan(m)) return m;
    if (tgl_iszero(m)) return tgl_copysign(0.0, b);
    if (tgl_signbit(m) != tgl_signbit(b)) return m + b;
    return m;
}

// Python's a // b (torch.floor_divide), as CPython computes it from the exact fmod (so that the
// floor of the exact quotient comes out, 1 // 0.1 = 9); b == 0 gives a / b (+-inf, NaN); a zero
// result has the sign of a / b. The CPU plugin's floor_divide (scalar_ops.h) is the definition.
float tgl_floor_divide(float a, float b) {
    if (tgl_iszero(b)) return tgl_div(a, b);
    float m = tgl_fmod(a, b);
    float q = tgl_div(a - m, b);
    if (!tgl_iszero(m) && tgl_signbit(b) != tgl_signbit(m)) q -= 1.0;
    if (tgl_iszero(q)) return tgl_copysign(0.0, tgl_div(a, b));
    float f = tgl_floor(q);
    if (q - f > 0.5) f += 1.0;
    return f;
}

// atan(t) for 0 <= t <= 1 (Cephes atanf: t > tan(pi/8) is moved by pi/4).
float tgl_atan_unit(float t) {
    float base = 0.0;
    if (t > 0.41421356237309505) {
        t = (t - 1.0) / (t + 1.0);
        base = 0.78539816339744831;
    }
    float z = t * t;
    float p = 8.05374449538e-2;
    p = p * z - 1.38776856032e-1;
    p = p * z + 1.99777106478e-1;
    p = p * z - 3.33329491539e-1;
    return base + (p * z * t + t);
}

const float TGL_PI_HI = 3.1415927410125732;     // pi rounded to f32
const float TGL_PI_LO = -8.742278000372485e-8;  // pi - TGL_PI_HI

// atan2(a, b), the angle of the point (b, a), with C99's special values.
float tgl_atan2(float a, float b) {
    if (tgl_isnan(a) || tgl_isnan(b)) return tgl_nan();
    bool bneg = tgl_signbit(b);
    float ay = tgl_abs(a), ax = tgl_abs(b);
    float t;
    if (tgl_iszero(a)) {
        t = bneg ? TGL_PI_HI : 0.0;
    } else if (tgl_isinf(a) && tgl_isinf(b)) {
        t = bneg ? 2.3561944901923449 : 0.78539816339744831;
    } else if (tgl_isinf(a) || tgl_iszero(b)) {
        t = 1.5707963267948966;
    } else if (tgl_isinf(b)) {
        t = bneg ? TGL_PI_HI : 0.0;
    } else {
        // 0 <= angle of (|b|, |a|) <= pi/2, from atan of the ratio <= 1.
        if (ay <= ax) {
            t = tgl_atan_unit(tgl_div(ay, ax));
        } else {
            t = (1.5707963705062866 - tgl_atan_unit(tgl_div(ax, ay))) - 4.37113900018624e-8;
        }
        if (bneg) t = (TGL_PI_HI - t) + TGL_PI_LO;
    }
    return tgl_copysign(t, a);
}

// ----- asin .. atanh, gelu_quick (ABI 1.3) -----------------------------------------------------
// C99's special values spelled out; each formula keeps full f32 precision near 0 (the leading
// term is x itself) and for large |x| (no intermediate overflows before the result does).

const float TGL_PIO2_HI = 1.5707963705062866;   // pi/2 rounded to f32
const float TGL_PIO2_LO = -4.37113900018624e-8;  // pi/2 - TGL_PIO2_HI
const float TGL_LN2 = 0.69314718055994531;

// asin(t) for 0 <= t <= 0.5 given z = t*t (Cephes asinf): t + t z P(z).
float tgl_asin_poly(float t, float z) {
    float p = 4.2163199048e-2;
    p = p * z + 2.4181311049e-2;
    p = p * z + 4.5470025998e-2;
    p = p * z + 7.4953002686e-2;
    p = p * z + 1.6666752422e-1;
    return t + t * z * p;
}

// asin(x): NaN for |x| > 1, asin(+-0) = +-0. Above 0.5: pi/2 - 2 asin(sqrt((1 - |x|) / 2)), where
// 1 - |x| is exact.
float tgl_asin(float x) {
    if (tgl_isnan(x)) return x;
    float a = tgl_abs(x);
    if (a > 1.0) return tgl_nan();
    if (a < 1e-4) return x;  // the cubic term is below half an ulp (keeps -0 and subnormals)
    float r;
    if (a > 0.5) {
        float z = 0.5 * (1.0 - a);
        float s = tgl_asin_poly(sqrt(z), z);
        r = (TGL_PIO2_HI - 2.0 * s) + TGL_PIO2_LO;
    } else {
        r = tgl_asin_poly(a, a * a);
    }
    return tgl_copysign(r, x);
}

// acos(x): NaN for |x| > 1, acos(1) = +0. Near +-1 from 2 asin(sqrt((1 -+ x) / 2)).
float tgl_acos(float x) {
    if (tgl_isnan(x)) return x;
    float a = tgl_abs(x);
    if (a > 1.0) return tgl_nan();
    if (x > 0.5) {
        float z = 0.5 * (1.0 - x);
        return 2.0 * tgl_asin_poly(sqrt(z), z);
    }
    if (x < -0.5) {
        float z = 0.5 * (1.0 + x);
        return (2.0 * TGL_PIO2_HI - 2.0 * tgl_asin_poly(sqrt(z), z)) + 2.0 * TGL_PIO2_LO;
    }
    float s = a < 1e-4 ? x : tgl_copysign(tgl_asin_poly(a, a * a), x);
    return (TGL_PIO2_HI - s) + TGL_PIO2_LO;
}

// atan(x) = atan2(x, 1): atan(+-0) = +-0, atan(+-inf) = +-pi/2.
float tgl_atan(float x) { return tgl_atan2(x, 1.0); }

// sinh(x): for |x| <= 9 from t = expm1(|x|): (t + t / (t + 1)) / 2 (accurate near 0); above, where
// e^-|x| is below an ulp, exp(|x|) / 2 as exp(|x|) * 2^-1 (finite up to |x| = 89.4).
float tgl_sinh(float x) {
    if (tgl_isnan(x) || tgl_iszero(x) || tgl_isinf(x)) return x;
    float a = tgl_abs(x);
    float r;
    if (a > 9.0) {
        r = tgl_exp_scaled(a, -1.0);
    } else {
        float t = tgl_expm1(a);
        r = 0.5 * (t + t / (t + 1.0));
    }
    return tgl_copysign(r, x);
}

// cosh(x) = (e + 1/e) / 2 with e = exp(|x|); above 9, exp(|x|) * 2^-1 (finite up to |x| = 89.4).
float tgl_cosh(float x) {
    if (tgl_isnan(x)) return x;
    float a = tgl_abs(x);
    if (tgl_isinf(a)) return a;
    if (a > 9.0) return tgl_exp_scaled(a, -1.0);
    float e = tgl_exp(a);
    return 0.5 * (e + 1.0 / e);
}

// tan(r) for |r| <= pi/4 (Cephes tanf).
float tgl_tan_poly(float r) {
    float z = r * r;
    float p = 9.38540185543e-3;
    p = p * z + 3.11992232697e-3;
    p = p * z + 2.44301354525e-2;
    p = p * z + 5.34112807005e-2;
    p = p * z + 1.33387994085e-1;
    p = p * z + 3.33331568548e-1;
    return r + r * z * p;
}

// tan(x): the argument reduced exactly as sin/cos (x = j pi/2 + r); odd j gives -1 / tan(r), so
// near pi/2 the result keeps the precision of the reduction. tan(+-0) = +-0, tan(+-inf) = NaN.
float tgl_tan(float x) {
    if (tgl_isnan(x) || tgl_isinf(x)) return tgl_nan();
    if (tgl_iszero(x)) return x;
    float ax = tgl_abs(x);
    if (ax < 1e-4) return x;  // the cubic term is below half an ulp
    float t;
    if (ax <= 0.78539816339744831) {
        t = tgl_tan_poly(ax);
    } else {
        int j;
        float r = tgl_reduce_pio2(ax, j);
        t = tgl_tan_poly(r);
        if ((j & 1) == 1) t = -1.0 / t;
    }
    return tgl_signbit(x) ? -t : t;
}

// asinh(x) = sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); beyond 2^12, where sqrt(1 + x^2) is
// |x| to within an f32 rounding, log(|x|) + ln 2 (x^2 never overflows).
float tgl_asinh(float x) {
    if (tgl_isnan(x) || tgl_isinf(x)) return x;
    float a = tgl_abs(x);
    if (a < 1e-4) return x;  // asinh(x) = x - x^3/6: the cubic term is below half an ulp
    float r;
    if (a > 4096.0) {
        r = tgl_log(a) + TGL_LN2;
    } else {
        float z = a * a;
        r = tgl_log1p(a + z / (1.0 + sqrt(1.0 + z)));
    }
    return tgl_copysign(r, x);
}

// acosh(x) = log1p(t + sqrt(2t + t^2)), t = x - 1 (exact near 1); beyond 2^12 log(x) + ln 2.
// NaN below 1, acosh(1) = +0.
float tgl_acosh(float x) {
    if (tgl_isnan(x)) return x;
    if (x < 1.0) return tgl_nan();
    if (tgl_isinf(x)) return x;
    if (x > 4096.0) return tgl_log(x) + TGL_LN2;
    float t = x - 1.0;
    return tgl_log1p(t + sqrt(t * (2.0 + t)));
}

// atanh(x) = sign(x) log1p(2|x| / (1 - |x|)) / 2: NaN for |x| > 1, +-inf at +-1, +-0 kept.
float tgl_atanh(float x) {
    if (tgl_isnan(x)) return x;
    float a = tgl_abs(x);
    if (a > 1.0) return tgl_nan();
    if (a == 1.0) return tgl_copysign(tgl_inf(), x);
    if (a < 1e-4) return x;  // atanh(x) = x + x^3/3: the cubic term is below half an ulp
    return tgl_copysign(0.5 * tgl_log1p(tgl_div(a + a, 1.0 - a)), x);
}

// gelu_quick(x) = x * sigmoid(1.702 x) (ggml), +inf at +inf and NaN at -inf as the gated ops.
// exp(-t) amplifies an error of t by |t|, so t = 1.702 x is carried as th + tl: 1.702 =
// 1.70166015625 (12 significant bits) + 3.3984375e-4, x = xh + xl (xh: x's top 12 bits), so that
// th = 1.70166015625 xh is exact and only the small tl is rounded.
float tgl_gelu_quick(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_isinf(x)) return tgl_gated_at_inf(x);
    float xh = uintBitsToFloat(floatBitsToUint(x) & 0xfffff000u);
    float xl = x - xh;
    float th = 1.70166015625 * xh;
    float tl = 1.70166015625 * xl + 3.3984375e-4 * x;
    if (th < -160.0) return tgl_neg_zero();  // |x exp(t)| < 1e-67 (tl alone could overflow exp)
    if (th + tl < -40.0) return tgl_ldexp(x * tgl_exp_scaled(th, 64.0) * tgl_exp(tl), -64);  // x exp(t), see tgl_mul_exp
    return x / (1.0 + tgl_exp(-th) * tgl_exp(-tl));
}
