// Elements of every dtype as double, and doubles stored into every dtype with the rounding rules of
// op 'cast' (plugin_api.h). Every value of every dtype is exact in double (i32 included), so a
// load never loses anything; a store rounds once:
//   f32: the C++ conversion (round to nearest even, overflow to inf);
//   f16 / bf16: correctly rounded from double directly (ties to even; integer bit manipulation,
//     no detour through f32, which would round twice), beyond the largest finite value +-inf;
//   i32 / i8 / u8 from a float source: truncated toward zero, saturated, NaN -> 0;
//   i32 / i8 / u8 from an integer source: two's-complement wrap-around (the low bits);
//   bool: x != 0 (NaN is true, -0 false).
#pragma once

#include <tensorgl/plugin_api.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tgl {
namespace cpu {

inline bool is_float_dtype(tgl_dtype dt) {
    return dt == TGL_DTYPE_F32 || dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16;
}

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

inline double f16_to_double(uint16_t h) { return decode_small_float(h, 5, 10); }
inline double bf16_to_double(uint16_t h) { return decode_small_float(h, 8, 7); }
inline uint16_t double_to_f16(double x) { return uint16_t(encode_small_float(x, 5, 10)); }
inline uint16_t double_to_bf16(double x) { return uint16_t(encode_small_float(x, 8, 7)); }

// Element i (index in elements) of a buffer of dtype dt, as double (exact).
inline double load_as_double(const uint8_t* base, tgl_dtype dt, int64_t i) {
    switch (dt) {
    case TGL_DTYPE_F32: { float f; std::memcpy(&f, base + 4 * i, 4); return f; }
    case TGL_DTYPE_F16: { uint16_t h; std::memcpy(&h, base + 2 * i, 2); return f16_to_double(h); }
    case TGL_DTYPE_BF16: { uint16_t h; std::memcpy(&h, base + 2 * i, 2); return bf16_to_double(h); }
    case TGL_DTYPE_I32: { int32_t v; std::memcpy(&v, base + 4 * i, 4); return v; }
    case TGL_DTYPE_I8: return double(int8_t(base[i]));
    case TGL_DTYPE_U8: return double(base[i]);
    case TGL_DTYPE_BOOL: return base[i] != 0 ? 1.0 : 0.0;
    default: return 0.0;
    }
}

// Float to an integer type: truncated toward zero, saturated to [lo, hi], NaN -> 0.
inline int64_t float_to_int_saturate(double x, int64_t lo, int64_t hi) {
    if (std::isnan(x)) return 0;
    double t = std::trunc(x);
    if (t <= double(lo)) return lo;
    if (t >= double(hi)) return hi;
    return int64_t(t);
}

// Stores x into element i of a buffer of dtype dt. from_integer: x came from an integer dtype (an
// integer value), so narrowing to an integer type wraps instead of saturating.
inline void store_from_double(uint8_t* base, tgl_dtype dt, int64_t i, double x, bool from_integer) {
    switch (dt) {
    case TGL_DTYPE_F32: { float f = static_cast<float>(x); std::memcpy(base + 4 * i, &f, 4); return; }
    case TGL_DTYPE_F16: { uint16_t h = double_to_f16(x); std::memcpy(base + 2 * i, &h, 2); return; }
    case TGL_DTYPE_BF16: { uint16_t h = double_to_bf16(x); std::memcpy(base + 2 * i, &h, 2); return; }
    case TGL_DTYPE_I32: {
        int32_t v = from_integer ? int32_t(uint32_t(uint64_t(int64_t(x))))
                                 : int32_t(float_to_int_saturate(x, INT32_MIN, INT32_MAX));
        std::memcpy(base + 4 * i, &v, 4);
        return;
    }
    case TGL_DTYPE_I8:
        base[i] = from_integer ? uint8_t(uint64_t(int64_t(x))) : uint8_t(int8_t(float_to_int_saturate(x, -128, 127)));
        return;
    case TGL_DTYPE_U8:
        base[i] = from_integer ? uint8_t(uint64_t(int64_t(x))) : uint8_t(float_to_int_saturate(x, 0, 255));
        return;
    case TGL_DTYPE_BOOL: base[i] = x != 0.0 ? 1 : 0; return;  // NaN != 0
    default: return;
    }
}

}  // namespace cpu
}  // namespace tgl
