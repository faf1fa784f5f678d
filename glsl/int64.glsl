// Exact 64-bit integer arithmetic on the uvec2(low word, high word) of an i64 element (GLSL ES 3.10
// has no 64-bit integers; dtype.glsl's TGL_LOAD_WIDE and store.glsl's TGL_STORE_WIDE move them):
// two's complement, results modulo 2^64 (wrap-around, as the CPU plugin's uint64_t arithmetic in
// int_ops.h), carries and borrows between the words by uaddCarry / usubBorrow, the low 64 bits of
// a product from umulExtended. The integer ops of int_ops.glsl, the comparisons of dtype_ops.glsl
// and the folds of value.glsl (reduce.comp) use these; nothing goes through float.

uvec2 tgl_i64_of_int(int v) { return uvec2(uint(v), v < 0 ? 0xffffffffu : 0u); }  // sign-extended

uvec2 tgl_i64_add(uvec2 a, uvec2 b) {
    uint carry;
    uint lo = uaddCarry(a.x, b.x, carry);
    return uvec2(lo, a.y + b.y + carry);
}
uvec2 tgl_i64_sub(uvec2 a, uvec2 b) {
    uint borrow;
    uint lo = usubBorrow(a.x, b.x, borrow);
    return uvec2(lo, a.y - b.y - borrow);
}
uvec2 tgl_i64_neg(uvec2 a) { return tgl_i64_sub(uvec2(0u), a); }  // -INT64_MIN wraps to INT64_MIN
// (ah 2^32 + al)(bh 2^32 + bl) mod 2^64 = al bl + 2^32 (ah bl + al bh): the cross terms' low words.
uvec2 tgl_i64_mul(uvec2 a, uvec2 b) {
    uint hi, lo;
    umulExtended(a.x, b.x, hi, lo);
    return uvec2(lo, hi + a.y * b.x + a.x * b.y);
}

bool tgl_i64_negative(uvec2 a) { return (a.y >> 31) != 0u; }
bool tgl_i64_eq(uvec2 a, uvec2 b) { return a.x == b.x && a.y == b.y; }
// Signed order: the high words as int, then the low words as uint.
bool tgl_i64_lt(uvec2 a, uvec2 b) { return int(a.y) < int(b.y) || (a.y == b.y && a.x < b.x); }

uvec2 tgl_i64_abs(uvec2 a) { return tgl_i64_negative(a) ? tgl_i64_neg(a) : a; }  // |INT64_MIN| = INT64_MIN
uvec2 tgl_i64_max(uvec2 a, uvec2 b) { return tgl_i64_lt(a, b) ? b : a; }
uvec2 tgl_i64_min(uvec2 a, uvec2 b) { return tgl_i64_lt(b, a) ? b : a; }
