// The value type of the folds of reduce.comp and scan.comp. Floats: VALUE is float (f32 and f16
// elements widened exactly, the result rounded once at its store). With INT_VALUES (i32
// elements): VALUE is int, whose + and * keep the low 32 bits in GLSL ES, so sums and products
// are the exact wrapped i32 results in any order (ops.h, "Integer arithmetic"); never through
// float. With WIDE_VALUES (i64 elements, reduce.comp only): VALUE is the uvec2 of an i64's words,
// folded by int64.glsl's exact wrapping arithmetic, and loaded and stored by the kernel as wide
// elements (TGL_LOAD_WIDE, TGL_STORE_WIDE). tgl_value_add and tgl_value_mul are + and * of VALUE.
// Partials kept in scratch words between passes are the value's bits. Include after dtype.glsl.
#include "int64.glsl"
#if defined(WIDE_VALUES)
#define VALUE uvec2
VALUE tgl_value_zero() { return uvec2(0u); }
VALUE tgl_value_one() { return uvec2(1u, 0u); }
VALUE tgl_value_lowest() { return uvec2(0u, 0x80000000u); }
VALUE tgl_value_highest() { return uvec2(0xffffffffu, 0x7fffffffu); }
VALUE tgl_value_add(VALUE a, VALUE b) { return tgl_i64_add(a, b); }
VALUE tgl_value_mul(VALUE a, VALUE b) { return tgl_i64_mul(a, b); }
VALUE tgl_value_max(VALUE a, VALUE b) { return tgl_i64_max(a, b); }
VALUE tgl_value_min(VALUE a, VALUE b) { return tgl_i64_min(a, b); }
#elif defined(INT_VALUES)
#define VALUE int
VALUE tgl_value_of(uint bits, int dt) { return tgl_to_int(bits, dt); }
uint tgl_value_bits(VALUE v, int dt) { return uint(v) & tgl_dt_mask(dt); }
uint tgl_value_word(VALUE v) { return uint(v); }
VALUE tgl_word_value(uint w) { return int(w); }
VALUE tgl_value_zero() { return 0; }
VALUE tgl_value_one() { return 1; }
VALUE tgl_value_lowest() { return -2147483647 - 1; }
VALUE tgl_value_highest() { return 2147483647; }
VALUE tgl_value_add(VALUE a, VALUE b) { return a + b; }
VALUE tgl_value_mul(VALUE a, VALUE b) { return a * b; }
VALUE tgl_value_max(VALUE a, VALUE b) { return max(a, b); }
VALUE tgl_value_min(VALUE a, VALUE b) { return min(a, b); }
#else
#define VALUE float
VALUE tgl_value_of(uint bits, int dt) { return tgl_to_f32(bits, dt); }
uint tgl_value_bits(VALUE v, int dt) { return tgl_from_f32(v, dt); }
uint tgl_value_word(VALUE v) { return floatBitsToUint(v); }
VALUE tgl_word_value(uint w) { return uintBitsToFloat(w); }
VALUE tgl_value_zero() { return 0.0; }
VALUE tgl_value_one() { return 1.0; }
VALUE tgl_value_lowest() { return tgl_neg_inf(); }
VALUE tgl_value_highest() { return tgl_inf(); }
VALUE tgl_value_add(VALUE a, VALUE b) { return a + b; }
VALUE tgl_value_mul(VALUE a, VALUE b) { return a * b; }
// NaN propagates and -0 orders below +0 (as the CPU plugin).
VALUE tgl_value_max(VALUE a, VALUE b) { return tgl_maximum(a, b); }
VALUE tgl_value_min(VALUE a, VALUE b) { return tgl_minimum(a, b); }
#endif
