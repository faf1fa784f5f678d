// Elements of every dtype as double, and doubles stored into every dtype with the rounding rules of
// op 'cast' (plugin_api.h). Every value of every dtype but i64 is exact in double (i32 included),
// so a load never loses anything; integer elements also load exactly as int64 (load_as_int64), the
// path of every integer source of cast. A store rounds once:
//   f32: the C++ conversion (round to nearest even, overflow to inf);
//   f16 / bf16: correctly rounded from double directly (ties to even; integer bit manipulation,
//     no detour through f32, which would round twice), beyond the largest finite value +-inf;
//   i64 / i32 / i16 / i8 / u8 from a float source: truncated toward zero, saturated, NaN -> 0;
//   i64 / i32 / i16 / i8 / u8 from an integer source: two's-complement wrap-around (the low bits);
//   floats from an integer source: rounded once to nearest even (store_from_int64; i64 past 2^53
//     through int64_to_double_sticky, never rounded twice);
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
    case TGL_DTYPE_I16: { int16_t v; std::memcpy(&v, base + 2 * i, 2); return v; }
    case TGL_DTYPE_I64: { int64_t v; std::memcpy(&v, base + 8 * i, 8); return double(v); }  // nearest past 2^53
    default: return 0.0;
    }
}

// Element i of an integer (or bool) buffer, exact.
inline int64_t load_as_int64(const uint8_t* base, tgl_dtype dt, int64_t i) {
    if (dt == TGL_DTYPE_I64) {
        int64_t v;
        std::memcpy(&v, base + 8 * i, 8);
        return v;
    }
    return int64_t(load_as_double(base, dt, i));  // exact for every other integer dtype
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
    case TGL_DTYPE_I16: {
        int16_t v = from_integer ? int16_t(uint16_t(uint64_t(int64_t(x))))
                                 : int16_t(float_to_int_saturate(x, INT16_MIN, INT16_MAX));
        std::memcpy(base + 2 * i, &v, 2);
        return;
    }
    case TGL_DTYPE_I64: {  // from_integer callers with i64 values use store_from_int64 (exact)
        int64_t v = float_to_int_saturate(x, INT64_MIN, INT64_MAX);
        std::memcpy(base + 8 * i, &v, 8);
        return;
    }
    default: return;
    }
}

// An integer arithmetic result (int_ops.h; i64, i32, i8, u8) stored as its low bits (two's-complement
// wrap-around); its operands load exactly through load_as_int64, where a double would lose the low
// bits of a product beyond 2^53.
inline void store_int_wrapped(uint8_t* base, tgl_dtype dt, int64_t i, int64_t v) {
    if (dt == TGL_DTYPE_I64) {
        std::memcpy(base + 8 * i, &v, 8);
    } else if (dt == TGL_DTYPE_I32) {
        const uint32_t low = uint32_t(uint64_t(v));
        std::memcpy(base + 4 * i, &low, 4);
    } else {
        base[i] = uint8_t(uint64_t(v));  // i8, u8
    }
}

// Stores the integer v into element i of dtype dt as op 'cast' converts an integer source:
// integers keep the low bits (two's-complement wrap-around), floats round once to nearest even,
// bool is v != 0.
inline void store_from_int64(uint8_t* base, tgl_dtype dt, int64_t i, int64_t v) {
    if (dt == TGL_DTYPE_I64) {
        std::memcpy(base + 8 * i, &v, 8);
        return;
    }
    if (is_float_dtype(dt)) return store_from_double(base, dt, i, int64_to_double_sticky(v), true);
    if (dt == TGL_DTYPE_BOOL) return store_from_double(base, dt, i, v != 0 ? 1.0 : 0.0, true);  // all 64 bits
    // The low 32 bits, as a double (exact), then wrapped to dt's width by the integer store.
    store_from_double(base, dt, i, double(int32_t(uint32_t(uint64_t(v)))), true);
}

}  // namespace cpu
}  // namespace tgl
