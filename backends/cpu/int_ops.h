// The scalar definition of the integer arithmetic ops (ops.h, "Integer arithmetic"): i32, i8, u8
// and i64 elements held as int64_t (exact), results stored as their low bits (store_int_wrapped).
// add, sub, mul, neg and abs compute in uint64_t, whose wrap-around is defined: modulo 2^64 is the
// i64 result and keeps the low 32 / 8 bits of the narrower ones right (int64_t(u) of a uint64_t u
// is its two's-complement value). Division, remainder and pow take only i32/i8/u8 operands (the
// catalogue), whose quotients (INT_MIN / -1 included) are exact in int64; pow and the folds of
// reduce/scan multiply in uint64_t. No undefined behaviour for any input (UBSan runs these in CI).
#pragma once

#include "validate.h"
#include "status.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace tgl {
namespace cpu {

inline int64_t wrap_add(int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); }
inline int64_t wrap_sub(int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); }
inline int64_t wrap_mul(int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); }
inline int64_t wrap_neg(int64_t x) { return int64_t(0 - uint64_t(x)); }  // -INT64_MIN wraps to INT64_MIN

// Division and remainder by zero give 0 (as NumPy); a and b are within the i32 range.
inline int64_t int_trunc_divide(int64_t a, int64_t b) { return b == 0 ? 0 : a / b; }
inline int64_t int_fmod(int64_t a, int64_t b) { return b == 0 ? 0 : a % b; }
inline int64_t int_floor_divide(int64_t a, int64_t b) {
    if (b == 0) return 0;
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
inline int64_t int_remainder(int64_t a, int64_t b) {
    if (b == 0) return 0;
    const int64_t m = a % b;
    return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}

// a^b wrapped to 64 bits (repeated squaring in uint64_t); b < 0: trunc(1 / a^-b).
inline int64_t int_pow(int64_t a, int64_t b) {
    if (b < 0) {
        if (a == 1) return 1;
        if (a == -1) return (b % 2 != 0) ? -1 : 1;
        return 0;
    }
    uint64_t result = 1, base = uint64_t(a);
    for (uint64_t e = uint64_t(b); e != 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
    }
    return int64_t(result);  // two's complement: the low bits are what the store keeps
}

// Integer clamp bounds: the f32 bound rounded inward (lo up, hi down) and saturated to [min, max]
// of x's dtype (ops.h, TGL_OP_CLAMP); bounds are never NaN (validated). double(INT64_MAX) is 2^63,
// so the comparisons saturate before a conversion could overflow.
inline int64_t int_bound(double bound, bool lower, int64_t min, int64_t max) {
    const double r = lower ? std::ceil(bound) : std::floor(bound);
    if (r <= double(min)) return min;
    if (r >= double(max)) return max;
    return int64_t(r);
}

// Calls visit(f) with f(int64_t x) -> int64_t for the integer unary op of `c` (abs, neg, clamp);
// [min, max] is the range of x's dtype.
template <class Visit>
void visit_int_unary(const OpCall& c, int64_t min, int64_t max, Visit&& visit) {
    switch (c.info->op) {
    case TGL_OP_ABS: return visit([](int64_t x) { return x < 0 ? wrap_neg(x) : x; });
    case TGL_OP_NEG: return visit(wrap_neg);
    case TGL_OP_CLAMP: {
        const int64_t lo = int_bound(c.elementwise().scalars[0], true, min, max);
        const int64_t hi = int_bound(c.elementwise().scalars[1], false, min, max);
        return visit([lo, hi](int64_t x) { return std::min(std::max(x, lo), hi); });  // hi wins when lo > hi
    }
    default: fail(TGL_ERROR_INTERNAL, "cpu int_ops: op '%s' has no integer kernel", c.info->name);
    }
}

// Calls visit(f) with f(int64_t a, int64_t b) -> int64_t for the integer binary op of `c`.
template <class Visit>
void visit_int_binary(const OpCall& c, Visit&& visit) {
    switch (c.info->op) {
    case TGL_OP_ADD: return visit(wrap_add);
    case TGL_OP_SUB: return visit(wrap_sub);
    case TGL_OP_MUL: return visit(wrap_mul);
    case TGL_OP_DIV: return visit(int_trunc_divide);
    case TGL_OP_FLOOR_DIVIDE: return visit(int_floor_divide);
    case TGL_OP_FMOD: return visit(int_fmod);
    case TGL_OP_REMAINDER: return visit(int_remainder);
    case TGL_OP_POW: return visit(int_pow);
    case TGL_OP_MAXIMUM: return visit([](int64_t a, int64_t b) { return a > b ? a : b; });
    case TGL_OP_MINIMUM: return visit([](int64_t a, int64_t b) { return a < b ? a : b; });
    default: fail(TGL_ERROR_INTERNAL, "cpu int_ops: op '%s' has no integer kernel", c.info->name);
    }
}

}  // namespace cpu
}  // namespace tgl
