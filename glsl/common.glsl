// Shared by every tensorgl shader: IEEE special values built from bits, and tests on them.
// NaN/inf are detected with bit tests on floatBitsToUint(): drivers may fold isnan(x) and x != x
// to false, but they cannot see through integer bit operations.

float tgl_nan() { return uintBitsToFloat(0x7fc00000u); }
float tgl_inf() { return uintBitsToFloat(0x7f800000u); }
float tgl_neg_inf() { return uintBitsToFloat(0xff800000u); }
float tgl_neg_zero() { return uintBitsToFloat(0x80000000u); }

bool tgl_isnan(float x) { return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u; }
bool tgl_isinf(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0x7f800000u; }
bool tgl_iszero(float x) { return (floatBitsToUint(x) & 0x7fffffffu) == 0u; }
bool tgl_signbit(float x) { return (floatBitsToUint(x) & 0x80000000u) != 0u; }

float tgl_abs(float x) { return uintBitsToFloat(floatBitsToUint(x) & 0x7fffffffu); }
float tgl_neg(float x) { return uintBitsToFloat(floatBitsToUint(x) ^ 0x80000000u); }
// |mag| with the sign of sgn.
float tgl_copysign(float mag, float sgn) {
    return uintBitsToFloat((floatBitsToUint(mag) & 0x7fffffffu) | (floatBitsToUint(sgn) & 0x80000000u));
}

// 2^n for n in [-126, 127], exact.
float tgl_exp2i(int n) { return uintBitsToFloat(uint(n + 127) << 23); }

// x * 2^n for n in [-378, 381]: scaled in up to three exact steps, so the result over- or
// underflows exactly where the true product does (subnormals may flush on some GPUs).
float tgl_ldexp(float x, int n) {
    if (n > 127) {
        x *= tgl_exp2i(127);
        n -= 127;
        if (n > 127) {
            x *= tgl_exp2i(127);
            n = min(n - 127, 127);
        }
    } else if (n < -126) {
        x *= tgl_exp2i(-126);
        n += 126;
        if (n < -126) {
            x *= tgl_exp2i(-126);
            n = max(n + 126, -126);
        }
    }
    return x * tgl_exp2i(n);
}

// NaN if either input is NaN (torch.maximum / torch.minimum); of +0 and -0, maximum is +0 and
// minimum is -0 (IEEE 754-2019 maximum/minimum, as the CPU plugin does; GLSL max() leaves it open).
float tgl_maximum(float a, float b) {
    if (tgl_isnan(a) || tgl_isnan(b)) return tgl_nan();
    if (a == b) return tgl_signbit(a) ? b : a;
    return a > b ? a : b;
}
float tgl_minimum(float a, float b) {
    if (tgl_isnan(a) || tgl_isnan(b)) return tgl_nan();
    if (a == b) return tgl_signbit(a) ? a : b;
    return a < b ? a : b;
}
