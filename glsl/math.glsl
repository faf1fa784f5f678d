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
    if (tgl_abs(b) > 8.507059e37) return (a * 0.25) / (b * 0.25);
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

// x * sigmoid(x); silu(+inf) = +inf, silu(-inf) = 0.
float tgl_silu(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_isinf(x)) return tgl_signbit(x) ? 0.0 : x;
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

// gelu, erf form: 0.5 * x * erfc(-x / sqrt(2)); gelu(+inf) = +inf, gelu(-inf) = 0.
float tgl_gelu_erf(float x) {
    if (tgl_isnan(x)) return x;
    if (tgl_isinf(x)) return tgl_signbit(x) ? 0.0 : x;
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
    if (tgl_isinf(x)) return tgl_signbit(x) ? 0.0 : x;
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
