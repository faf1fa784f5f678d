// Exact conversions between double and the element bits of the float formats, and the float to
// integer rule of op 'cast', shared by the CPU plugin's loads and stores (backends/cpu/dtype_io.h)
// and by parameter processing in common code (a double parameter turned into y's element bits,
// e.g. full's value), so that both plugins write the same bits.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tgl {

inline uint64_t double_bits(double x) {
    uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
}

// A binary floating-point format with E exponent bits and M fraction bits (f16: 5, 10; bf16: 8, 7)
// decoded exactly.
inline double decode_small_float(uint32_t bits, int E, int M) {
    const uint32_t sign = (bits >> (E + M)) & 1u;
    const uint32_t exp = (bits >> M) & ((1u << E) - 1u);
    const uint32_t man = bits & ((1u << M) - 1u);
    const int bias = (1 << (E - 1)) - 1;
    double v;
    if (exp == (1u << E) - 1u) {
        v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    } else if (exp == 0) {
        v = std::ldexp(double(man), 1 - bias - M);
    } else {
        v = std::ldexp(double(man | (1u << M)), int(exp) - bias - M);
    }
    return sign ? -v : v;
}

// Rounds x to the nearest value of the (E, M) format, ties to even; +-inf beyond the largest
// finite value; NaN stays a quiet NaN (the top fraction bits of its payload kept).
inline uint32_t encode_small_float(double x, int E, int M) {
    const uint64_t b = double_bits(x);
    const uint32_t sign = uint32_t(b >> 63) << (E + M);
    const uint64_t a = b & ~(uint64_t(1) << 63);
    const uint32_t exp_all = ((1u << E) - 1u) << M;
    const uint64_t kInfBits = 0x7ff0000000000000ull;
    if (a > kInfBits) {  // NaN: quiet, with the top of the payload
        uint32_t payload = uint32_t((a & 0x000fffffffffffffull) >> (52 - M));
        return sign | exp_all | (1u << (M - 1)) | payload;
    }
    if (a == kInfBits) return sign | exp_all;
    if (a == 0) return sign;
    const int bias = (1 << (E - 1)) - 1;
    int e = int(a >> 52) - 1023;  // exponent of the leading bit
    uint64_t mant = a & 0x000fffffffffffffull;
    if ((a >> 52) == 0) e = -1022;  // double subnormal (no implicit bit)
    else mant |= uint64_t(1) << 52;
    // value = mant * 2^(e - 52). The result is a multiple of 2^q, q = max(e, emin) - M.
    const int emin = 1 - bias;
    const int shift = (e > emin ? e : emin) - M - (e - 52);  // >= 52 - M > 0
    uint64_t r;
    if (shift >= 64) {
        r = 0;  // below half the smallest subnormal
    } else {
        r = mant >> shift;
        const uint64_t rem = mant & ((uint64_t(1) << shift) - 1);
        const uint64_t half = uint64_t(1) << (shift - 1);
        if (rem > half || (rem == half && (r & 1))) ++r;
    }
    if (e < emin || r < (uint64_t(1) << M)) return sign | uint32_t(r);  // subnormal; r == 2^M is the smallest normal
    if (r == (uint64_t(1) << (M + 1))) {  // rounded up to the next binade
        r >>= 1;
        ++e;
    }
    const int biased = e + bias;
    if (biased >= (1 << E) - 1) return sign | exp_all;  // overflow
    return sign | (uint32_t(biased) << M) | uint32_t(r - (uint64_t(1) << M));
}

// Float to an integer type: truncated toward zero, saturated to [lo, hi], NaN -> 0. For i64,
// double(INT64_MAX) is 2^63, so every x >= 2^63 saturates and the conversion below stays defined.
inline int64_t float_to_int_saturate(double x, int64_t lo, int64_t hi) {
    if (std::isnan(x)) return 0;
    double t = std::trunc(x);
    if (t <= double(lo)) return lo;
    if (t >= double(hi)) return hi;
    return int64_t(t);
}

// An int64 as a double that rounds to any format of at most 51 fraction bits (f32, f16, bf16)
// exactly as v itself would (round to nearest even, once): past 2^53 the bits a double cannot hold
// are shifted out into one sticky bit, which lies below every such format's rounding position.
inline double int64_to_double_sticky(int64_t v) {
    const bool neg = v < 0;
    uint64_t m = neg ? ~uint64_t(v) + 1u : uint64_t(v);  // INT64_MIN's magnitude 2^63 too
    int shift = 0;
    while (m >> 53) {
        m = (m >> 1) | (m & 1u);
        ++shift;
    }
    const double d = std::ldexp(double(m), shift);
    return neg ? -d : d;
}

// The element bits (low bytes of the result) of double x stored into dtype dt as op 'cast' does
// from a float source: floats rounded once to nearest even (overflow +-inf, NaN quiet); integers
// truncated toward zero and saturated, NaN -> 0; bool x != 0 (NaN true).
inline uint64_t double_to_dtype_bits(double x, tgl_dtype dt) {
    switch (dt) {
    case TGL_DTYPE_I64: return uint64_t(float_to_int_saturate(x, INT64_MIN, INT64_MAX));
    case TGL_DTYPE_I16: return uint32_t(uint16_t(int16_t(float_to_int_saturate(x, INT16_MIN, INT16_MAX))));
    case TGL_DTYPE_F32: { float f = static_cast<float>(x); uint32_t u; std::memcpy(&u, &f, 4); return u; }
    case TGL_DTYPE_F16: return encode_small_float(x, 5, 10);
    case TGL_DTYPE_BF16: return encode_small_float(x, 8, 7);
    case TGL_DTYPE_I32: return uint32_t(int32_t(float_to_int_saturate(x, INT32_MIN, INT32_MAX)));
    case TGL_DTYPE_I8: return uint32_t(uint8_t(int8_t(float_to_int_saturate(x, -128, 127))));
    case TGL_DTYPE_U8: return uint32_t(float_to_int_saturate(x, 0, 255));
    case TGL_DTYPE_BOOL: return x != 0.0 ? 1u : 0u;
    default: return 0u;
    }
}

}  // namespace tgl
