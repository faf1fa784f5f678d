// The CPU reference decoder of the GGUF block dtypes, written from plugin_api.h's layouts (which
// follow ggml-common.h byte for byte): element j of one block as an exact double (every value is
// d * integer, or d * sc * q - dmin * m, of f16 d/dmin: exact in double).
#pragma once

#include "dtype_bits.h"  // backends/common

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {
namespace cpu {

inline double block_f16(const uint8_t* p) { return decode_small_float(uint32_t(p[0]) | uint32_t(p[1]) << 8, 5, 10); }

// The 4-bit q of q4_0/q4_1/q5_0/q5_1's element j: low nibbles hold j < 16, high nibbles j >= 16.
inline int nibble_32(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 15 : qs[j - 16] >> 4; }

// q4_K/q5_K: the 6-bit scale and min of sub-block s (0..7) from the 12 packed bytes.
inline void k_scale_min(const uint8_t* scales, int s, int* sc, int* m) {
    if (s < 4) {
        *sc = scales[s] & 63;
        *m = scales[s + 4] & 63;
    } else {
        *sc = (scales[s + 4] & 15) | (scales[s - 4] >> 6) << 4;
        *m = (scales[s + 4] >> 4) | (scales[s] >> 6) << 4;
    }
}

// Element j (0 <= j < tgl_dtype_block_size(dt)) of the block at `b`.
inline double decode_block_element(tgl_dtype dt, const uint8_t* b, int j) {
    switch (dt) {
    case TGL_DTYPE_Q4_0: return block_f16(b) * (nibble_32(b + 2, j) - 8);
    case TGL_DTYPE_Q4_1: return block_f16(b) * nibble_32(b + 4, j) + block_f16(b + 2);
    case TGL_DTYPE_Q5_0:
    case TGL_DTYPE_Q5_1: {
        const bool q51 = dt == TGL_DTYPE_Q5_1;
        const uint8_t* qh = b + (q51 ? 4 : 2);
        const uint32_t high = uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
        const int q = nibble_32(qh + 4, j) | int(high >> j & 1u) << 4;
        return q51 ? block_f16(b) * q + block_f16(b + 2) : block_f16(b) * (q - 16);
    }
    case TGL_DTYPE_Q8_0: return block_f16(b) * double(int8_t(b[2 + j]));
    case TGL_DTYPE_Q4_K:
    case TGL_DTYPE_Q5_K: {
        const int c = j / 64, h = j / 32 % 2, l = j % 32;
        int sc = 0, m = 0;
        k_scale_min(b + 4, 2 * c + h, &sc, &m);
        const uint8_t* qs = b + (dt == TGL_DTYPE_Q4_K ? 16 : 48);
        int q = qs[32 * c + l] >> (4 * h) & 15;
        if (dt == TGL_DTYPE_Q5_K) q |= (b[16 + l] >> (2 * c + h) & 1) << 4;
        return block_f16(b) * sc * q - block_f16(b + 2) * m;
    }
    case TGL_DTYPE_Q6_K: {
        const int a = j / 128, r = j / 32 % 4, l = j % 32;
        const int q = (b[64 * a + 32 * (r & 1) + l] >> (4 * (r >> 1)) & 15) | (b[128 + 32 * a + l] >> (2 * r) & 3) << 4;
        return block_f16(b + 208) * double(int8_t(b[192 + 8 * a + 2 * r + l / 16])) * (q - 32);
    }
    default: return 0.0;
    }
}

}  // namespace cpu
}  // namespace tgl
