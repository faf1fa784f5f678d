// The elementwise ops that work on element bits of any dtype rather than on f32 values: cast,
// logical_not, the comparisons, logical and/or/xor and where. apply_bits(a, b, c) takes the bits
// of the input elements (A_DTYPE, B_DTYPE, C_DTYPE; unused ones are 0) and returns the bits of
// the output element (Y_DTYPE). Exact for every dtype: integers are compared as integers, floats
// through an order key of their bits (so i32 beyond 2^24 and f32 subnormals compare exactly),
// where copies bits. Selected by one OP_<NAME> define. The comparisons of i64 operands take their
// uvec2 words (apply_bits_wide, int64.glsl).
#include "dtype.glsl"
#include "int64.glsl"

#if defined(OP_EQ) || defined(OP_NE) || defined(OP_LT) || defined(OP_LE) || defined(OP_GT) || defined(OP_GE)
#define TGL_COMPARE
#endif

uint apply_bits(uint a, uint b, uint c) {
#if defined(OP_CAST)
    return tgl_cast_bits(a, A_DTYPE, Y_DTYPE);
#elif defined(OP_LOGICAL_NOT)
    return tgl_truth(a, A_DTYPE) ? 0u : 1u;
#elif defined(OP_LOGICAL_AND)
    return (tgl_truth(a, A_DTYPE) && tgl_truth(b, B_DTYPE)) ? 1u : 0u;
#elif defined(OP_LOGICAL_OR)
    return (tgl_truth(a, A_DTYPE) || tgl_truth(b, B_DTYPE)) ? 1u : 0u;
#elif defined(OP_LOGICAL_XOR)
    return (tgl_truth(a, A_DTYPE) != tgl_truth(b, B_DTYPE)) ? 1u : 0u;
#elif defined(TGL_COMPARE)
    // IEEE: every comparison with NaN is false except ne.
    if (tgl_is_nan_bits(a, A_DTYPE) || tgl_is_nan_bits(b, B_DTYPE)) {
#if defined(OP_NE)
        return 1u;
#else
        return 0u;
#endif
    }
    int ka = tgl_order_key(a, A_DTYPE);
    int kb = tgl_order_key(b, B_DTYPE);
#if defined(OP_EQ)
    return ka == kb ? 1u : 0u;
#elif defined(OP_NE)
    return ka != kb ? 1u : 0u;
#elif defined(OP_LT)
    return ka < kb ? 1u : 0u;
#elif defined(OP_LE)
    return ka <= kb ? 1u : 0u;
#elif defined(OP_GT)
    return ka > kb ? 1u : 0u;
#else
    return ka >= kb ? 1u : 0u;
#endif
#elif defined(OP_WHERE)
    // a is the condition (bool or u8), b and c the two sources.
    return a != 0u ? b : c;
#else
#error "dtype_ops.glsl: no OP_* define of a dtype op"
    return 0u;
#endif
}

#if defined(TGL_COMPARE)
// a and b i64 (both: the operands of a comparison share a dtype), exact over all 64 bits.
uint apply_bits_wide(uvec2 a, uvec2 b) {
#if defined(OP_EQ)
    return tgl_i64_eq(a, b) ? 1u : 0u;
#elif defined(OP_NE)
    return tgl_i64_eq(a, b) ? 0u : 1u;
#elif defined(OP_LT)
    return tgl_i64_lt(a, b) ? 1u : 0u;
#elif defined(OP_LE)
    return tgl_i64_lt(b, a) ? 0u : 1u;
#elif defined(OP_GT)
    return tgl_i64_lt(b, a) ? 1u : 0u;
#else
    return tgl_i64_lt(a, b) ? 0u : 1u;
#endif
}
#endif
