// Elements of every dtype in 32-bit words, and exact conversions between them, in integer
// arithmetic only (no packHalf2x16, whose rounding the spec leaves open; no float arithmetic that
// a GPU could flush or round differently).
//
// Every operand is bound as an SSBO of uint words whose window starts on a 16-byte boundary, so
// element i (relative to the window) of a dtype of size s lives in word (i * s) / 4 at bit
// 8 * ((i * s) % 4). "Bits" of an element are its s bytes in the low bits of a uint. An i64
// element (GLSL ES 3.10 has no 64-bit integers) is two whole words, 2i (low) and 2i + 1 (high);
// its bits are a uvec2 (low, high), and the kernels that take i64 (copy.comp, cast) handle it as
// such through the *_wide functions below and TGL_STORE_WIDE (store.glsl).
// Dtype values are those of the ABI (TGL_DTYPE_*), given to shaders as the defines
// Y_DTYPE, A_DTYPE, ... (the elementwise shader's operands).

#define DT_F32 1
#define DT_F16 2
#define DT_BF16 3
#define DT_I32 4
#define DT_I8 5
#define DT_U8 6
#define DT_BOOL 7
#define DT_I64 8
#define DT_I16 9

// log2 of the element size: 3 for i64, 2 for f32/i32, 1 for f16/bf16/i16, 0 for i8/u8/bool.
int tgl_dt_log2size(int dt) {
    if (dt == DT_I64) return 3;
    return (dt == DT_F32 || dt == DT_I32) ? 2 : ((dt == DT_F16 || dt == DT_BF16 || dt == DT_I16) ? 1 : 0);
}
bool tgl_dt_is_float(int dt) { return dt == DT_F32 || dt == DT_F16 || dt == DT_BF16; }
// The word holding element i (of an i64: its low word).
int tgl_word_of(int i, int dt) {
    int l = tgl_dt_log2size(dt);
    return l == 3 ? i << 1 : i >> (2 - l);
}
uint tgl_shift_of(int i, int dt) {
    int l = tgl_dt_log2size(dt);
    return l >= 2 ? 0u : uint((i & ((4 >> l) - 1)) << (l + 3));
}
uint tgl_dt_mask(int dt) {
    int l = tgl_dt_log2size(dt);
    return l >= 2 ? 0xffffffffu : (l == 1 ? 0xffffu : 0xffu);
}
// The element bits of element i out of its word.
uint tgl_extract(uint word, int i, int dt) { return (word >> tgl_shift_of(i, dt)) & tgl_dt_mask(dt); }

// ---- floats ----

// Bits of an f16 / bf16 / f32 element as f32 bits (exact; NaN payloads kept).
uint tgl_f16_to_f32_bits(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 31u) return sign | 0x7f800000u | (m << 13);
    if (e == 0u) {
        if (m == 0u) return sign;
        int msb = findMSB(m);  // value m * 2^-24 = 1.f * 2^(msb - 24)
        return sign | (uint(msb + 103) << 23) | ((m << uint(23 - msb)) & 0x7fffffu);
    }
    return sign | ((e + 112u) << 23) | (m << 13);
}
uint tgl_to_f32_bits(uint bits, int dt) {
    if (dt == DT_F16) return tgl_f16_to_f32_bits(bits);
    if (dt == DT_BF16) return bits << 16;
    return bits;  // f32
}

// The two 16-bit floats of one word (element 0 in the low half) as f32, for the vector loads of
// the fast paths: f16 by unpackHalf2x16 (exact, one instruction per pair; every f16 is an f32),
// bf16 by shifts (exact: a bf16 is the top half of an f32's bits).
vec2 tgl_unpack_2x16(uint w, int dt) {
    return dt == DT_BF16 ? uintBitsToFloat(uvec2(w << 16, w & 0xffff0000u)) : unpackHalf2x16(w);
}

// f32 bits rounded to a binary format with E exponent and M fraction bits (f16: 5, 10; bf16:
// 8, 7): nearest, ties to even; +-inf beyond the largest finite value; NaN quiet with the top of
// its payload.
uint tgl_f32_bits_to_small(uint b, int E, int M) {
    uint sign = (b >> 31) << uint(E + M);
    uint a = b & 0x7fffffffu;
    uint exp_all = ((1u << uint(E)) - 1u) << uint(M);
    if (a > 0x7f800000u) return sign | exp_all | (1u << uint(M - 1)) | ((a & 0x7fffffu) >> uint(23 - M));
    if (a == 0x7f800000u) return sign | exp_all;
    if (a == 0u) return sign;
    int bias = (1 << (E - 1)) - 1;
    int e = int(a >> 23) - 127;
    uint mant = a & 0x7fffffu;
    if ((a >> 23) == 0u) e = -126;
    else mant |= 0x800000u;
    int emin = 1 - bias;
    int shift = max(e, emin) - M - (e - 23);  // bits of mant below the result's quantum
    uint r = 0u;
    if (shift < 32) {
        r = mant >> uint(shift);
        uint rem = mant & ((1u << uint(shift)) - 1u);
        uint half_q = 1u << uint(shift - 1);
        if (rem > half_q || (rem == half_q && (r & 1u) == 1u)) r += 1u;
    }
    // Subnormal or zero: below emin, or an f32 subnormal input at emin (no implicit bit). r == 2^M
    // after rounding up is the smallest normal, which the same encoding gives.
    if (e < emin || r < (1u << uint(M))) return sign | r;
    if (r == (2u << uint(M))) {
        r >>= 1;
        e += 1;
    }
    int biased = e + bias;
    if (biased >= (1 << E) - 1) return sign | exp_all;
    return sign | (uint(biased) << uint(M)) | (r - (1u << uint(M)));
}
uint tgl_from_f32_bits(uint f, int dt) {
    if (dt == DT_F16) return tgl_f32_bits_to_small(f, 5, 10);
    if (dt == DT_BF16) return tgl_f32_bits_to_small(f, 8, 7);
    return f;
}

// Bit k (0..63) of the 64-bit magnitude (hi, lo), and whether any bit below k is set.
uint tgl_bit64(uint hi, uint lo, int k) { return k >= 32 ? (hi >> uint(k - 32)) & 1u : (lo >> uint(k)) & 1u; }
bool tgl_any_below64(uint hi, uint lo, int k) {
    if (k >= 32) return lo != 0u || (k > 32 && (hi & ((1u << uint(k - 32)) - 1u)) != 0u);
    return k > 0 && (lo & ((1u << uint(k)) - 1u)) != 0u;
}

// An integer of magnitude (hi, lo) (64 bits) and sign `neg` rounded to a float format (E, M)
// (f32: 8, 23): nearest, ties to even, directly from the integer (no double rounding through
// f32); overflow (f16 only) gives +-inf.
uint tgl_mag64_to_float_bits(bool neg, uint hi, uint lo, int E, int M) {
    uint sign = neg ? (1u << uint(E + M)) : 0u;
    if (hi == 0u && lo == 0u) return 0u;
    int e = hi != 0u ? 32 + findMSB(hi) : findMSB(lo);  // the leading bit
    uint r;
    if (e > M) {
        int shift = e - M;  // 1..63 - M: r = mag >> shift has M + 1 bits
        r = shift >= 32 ? hi >> uint(shift - 32) : (lo >> uint(shift)) | (hi << uint(32 - shift));
        bool round_bit = tgl_bit64(hi, lo, shift - 1) != 0u;
        if (round_bit && (tgl_any_below64(hi, lo, shift - 1) || (r & 1u) == 1u)) r += 1u;
        if (r == (2u << uint(M))) {
            r >>= 1;
            e += 1;
        }
    } else {
        r = lo << uint(M - e);
    }
    int biased = e + (1 << (E - 1)) - 1;
    if (biased >= (1 << E) - 1) return sign | (((1u << uint(E)) - 1u) << uint(M));
    return sign | (uint(biased) << uint(M)) | (r - (1u << uint(M)));
}
uint tgl_int_to_float_bits(int v, int E, int M) {
    return tgl_mag64_to_float_bits(v < 0, 0u, v < 0 ? uint(-(v + 1)) + 1u : uint(v), E, M);
}

// Element bits as a float value (f32, f16, bf16), exact.
float tgl_to_f32(uint bits, int dt) { return uintBitsToFloat(tgl_to_f32_bits(bits, dt)); }
// A float value stored into a float dtype (rounded as above).
uint tgl_from_f32(float v, int dt) { return tgl_from_f32_bits(floatBitsToUint(v), dt); }

// ---- integers ----

// Value of an integer element: i32, i16 and i8 sign-extended, u8, bool (any nonzero byte is 1).
int tgl_to_int(uint bits, int dt) {
    if (dt == DT_I32) return int(bits);
    if (dt == DT_I16) return int(bits << 16) >> 16;
    if (dt == DT_I8) return int(bits << 24) >> 24;
    if (dt == DT_BOOL) return bits != 0u ? 1 : 0;
    return int(bits);  // u8
}

// Truth value of an element of any dtype: nonzero (floats: NaN true, +-0 false).
bool tgl_truth(uint bits, int dt) {
    if (dt == DT_F32) return (bits & 0x7fffffffu) != 0u;
    if (dt == DT_F16 || dt == DT_BF16) return (bits & 0x7fffu) != 0u;
    return bits != 0u;
}

bool tgl_is_nan_bits(uint bits, int dt) {
    return tgl_dt_is_float(dt) && (tgl_to_f32_bits(bits, dt) & 0x7fffffffu) > 0x7f800000u;
}

// A key whose integer order is the numeric order of the element (not for NaN): floats by sign
// and magnitude bits (-0 and +0 both 0; subnormals kept), integers by value.
int tgl_order_key(uint bits, int dt) {
    if (!tgl_dt_is_float(dt)) return tgl_to_int(bits, dt);
    uint f = tgl_to_f32_bits(bits, dt);
    int mag = int(f & 0x7fffffffu);
    return (f & 0x80000000u) != 0u ? -mag : mag;
}

// ---- cast (the rules of plugin_api.h) ----

// f32 bits truncated toward zero and saturated to [lo, hi]; NaN gives 0.
int tgl_f32_bits_to_int_sat(uint f, int lo, int hi) {
    if ((f & 0x7fffffffu) > 0x7f800000u) return 0;
    float x = uintBitsToFloat(f);
    if ((f & 0x7fffffffu) < 0x3f800000u) return 0;  // |x| < 1 (subnormals included)
    int v;
    if (x >= 2147483648.0) v = 2147483647;
    else if (x <= -2147483648.0) v = -2147483647 - 1;
    else v = int(x);  // truncates
    return clamp(v, lo, hi);
}

uint tgl_cast_bits(uint bits, int from, int to) {
    if (from == to) return bits;
    if (to == DT_BOOL) return tgl_truth(bits, from) ? 1u : 0u;
    if (tgl_dt_is_float(from)) {
        uint f = tgl_to_f32_bits(bits, from);
        if (tgl_dt_is_float(to)) return tgl_from_f32_bits(f, to);
        if (to == DT_I32) return uint(tgl_f32_bits_to_int_sat(f, -2147483647 - 1, 2147483647));
        if (to == DT_I16) return uint(tgl_f32_bits_to_int_sat(f, -32768, 32767)) & 0xffffu;
        if (to == DT_I8) return uint(tgl_f32_bits_to_int_sat(f, -128, 127)) & 0xffu;
        return uint(tgl_f32_bits_to_int_sat(f, 0, 255));  // u8
    }
    int v = tgl_to_int(bits, from);
    if (to == DT_F32) return tgl_int_to_float_bits(v, 8, 23);
    if (to == DT_F16) return tgl_int_to_float_bits(v, 5, 10);
    if (to == DT_BF16) return tgl_int_to_float_bits(v, 8, 7);
    return uint(v) & tgl_dt_mask(to);  // integer to integer: the low bits (wrap-around)
}

// ---- i64 (bits: uvec2(low word, high word)) ----

// Element E of an index tensor of dtype DT (i32 or i64) in an array of int or uint words, as
// ivec2(low word, high word): an i32 sign-extended.
#define TGL_LOAD_INDEX(ARR, E, DT) \
    ((DT) == DT_I64 ? ivec2(int(ARR[2 * (E)]), int(ARR[2 * (E) + 1])) : ivec2(int(ARR[E]), int(ARR[E]) >> 31))
// Whether an index (TGL_LOAD_INDEX) lies in [0, limit): its whole 64-bit value, so 2^32 + 3 is
// out of range, not 3.
bool tgl_index_in_range(ivec2 v, int limit) { return v.y == 0 && v.x >= 0 && v.x < limit; }

// The element bits of any dtype as the uvec2 of the *_wide functions: an i64's two words, any
// other dtype's bits in the low word.
#define TGL_LOAD_WIDE(ARR, I, DT) \
    ((DT) == DT_I64 ? uvec2(ARR[2 * (I)], ARR[2 * (I) + 1]) : uvec2(tgl_extract(ARR[tgl_word_of((I), (DT))], (I), (DT)), 0u))

// f32 bits truncated toward zero to an i64, saturated to [-2^63, 2^63 - 1]; NaN gives 0 (the rule
// of the narrower integers).
uvec2 tgl_f32_bits_to_i64_sat(uint f) {
    uint a = f & 0x7fffffffu;
    bool neg = (f >> 31) != 0u;
    if (a > 0x7f800000u || a < 0x3f800000u) return uvec2(0u);  // NaN, |x| < 1
    int e = int(a >> 23) - 127;
    if (e >= 63) return neg ? uvec2(0u, 0x80000000u) : uvec2(0xffffffffu, 0x7fffffffu);
    uint m = (a & 0x7fffffu) | 0x800000u;  // value m * 2^(e - 23)
    uint lo, hi;
    if (e <= 23) {
        lo = m >> uint(23 - e);
        hi = 0u;
    } else {
        int s = e - 23;  // 1..39
        lo = s >= 32 ? 0u : m << uint(s);
        hi = s >= 32 ? m << uint(s - 32) : m >> uint(32 - s);
    }
    if (neg) {  // two's complement negation of (hi, lo)
        lo = ~lo + 1u;
        hi = ~hi + (lo == 0u ? 1u : 0u);
    }
    return uvec2(lo, hi);
}

// cast where `from` or `to` is i64 (the other rules as tgl_cast_bits): an i64 to an integer keeps
// the low bits (two's-complement wrap-around), to a float rounds once to nearest even, to bool is
// != 0; an integer to i64 sign-extends (u8, bool: zero-extend), a float truncates and saturates.
uvec2 tgl_cast_wide(uvec2 b, int from, int to) {
    if (from == to) return b;
    if (from == DT_I64) {
        if (to == DT_BOOL) return uvec2((b.x | b.y) != 0u ? 1u : 0u, 0u);
        if (tgl_dt_is_float(to)) {
            bool neg = (b.y >> 31) != 0u;
            uint lo = neg ? ~b.x + 1u : b.x;
            uint hi = neg ? ~b.y + (lo == 0u ? 1u : 0u) : b.y;  // INT64_MIN: magnitude 2^63
            if (to == DT_F16) return uvec2(tgl_mag64_to_float_bits(neg, hi, lo, 5, 10), 0u);
            if (to == DT_BF16) return uvec2(tgl_mag64_to_float_bits(neg, hi, lo, 8, 7), 0u);
            return uvec2(tgl_mag64_to_float_bits(neg, hi, lo, 8, 23), 0u);
        }
        return uvec2(b.x & tgl_dt_mask(to), 0u);
    }
    if (to != DT_I64) return uvec2(tgl_cast_bits(b.x, from, to), 0u);
    if (tgl_dt_is_float(from)) return tgl_f32_bits_to_i64_sat(tgl_to_f32_bits(b.x, from));
    int v = tgl_to_int(b.x, from);
    return uvec2(uint(v), v < 0 ? 0xffffffffu : 0u);
}
