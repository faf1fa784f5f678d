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

#include "dtype_bits.h"  // decode/encode_small_float, float_to_int_saturate (backends/common)

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace tgl {
namespace cpu {

inline bool is_float_dtype(tgl_dtype dt) {
    return dt == TGL_DTYPE_F32 || dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16;
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

// Integer elements (i32, i8, u8) as their exact value, and an integer result stored as its low
// bits (two's-complement wrap-around): the integer arithmetic ops (int_ops.h), where a double
// would lose the low bits of a product beyond 2^53.
inline int64_t load_as_int64(const uint8_t* base, tgl_dtype dt, int64_t i) {
    switch (dt) {
    case TGL_DTYPE_I32: { int32_t v; std::memcpy(&v, base + 4 * i, 4); return v; }
    case TGL_DTYPE_I8: return int8_t(base[i]);
    case TGL_DTYPE_U8: return base[i];
    default: return 0;
    }
}

inline void store_int_wrapped(uint8_t* base, tgl_dtype dt, int64_t i, int64_t v) {
    if (dt == TGL_DTYPE_I32) {
        const uint32_t low = uint32_t(uint64_t(v));
        std::memcpy(base + 4 * i, &low, 4);
    } else {
        base[i] = uint8_t(uint64_t(v));  // i8, u8
    }
}

}  // namespace cpu
}  // namespace tgl
