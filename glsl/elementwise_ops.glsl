// The scalar function of every elementwise op, selected by one OP_<NAME> define: apply_op(a, b)
// (unary ops ignore b). Computed in f32; the CPU plugin's scalar_ops.h is the definition these are
// checked against. u_scalars holds the op's scalar parameters (see OpCall::scalars).
uniform float u_scalars[2];

float apply_op(float a, float b) {
#if defined(OP_ABS)
    return tgl_abs(a);
#elif defined(OP_NEG)
    return tgl_neg(a);
#elif defined(OP_RELU)
    return tgl_relu(a);
#elif defined(OP_SIGMOID)
    return tgl_sigmoid(a);
#elif defined(OP_TANH)
    return tgl_tanh(a);
#elif defined(OP_EXP)
    return tgl_exp(a);
#elif defined(OP_LOG)
    return tgl_log(a);
#elif defined(OP_SQRT)
    return tgl_sqrt(a);
#elif defined(OP_GELU_ERF)
    return tgl_gelu_erf(a);
#elif defined(OP_GELU_TANH)
    return tgl_gelu_tanh(a);
#elif defined(OP_SILU)
    return tgl_silu(a);
#elif defined(OP_SIGN)
    return tgl_sign(a);
#elif defined(OP_LEAKY_RELU)
    return tgl_leaky_relu(a, u_scalars[0]);
#elif defined(OP_ELU)
    return tgl_elu(a, u_scalars[0]);
#elif defined(OP_SELU)
    return tgl_selu(a);
#elif defined(OP_CELU)
    return tgl_celu(a, u_scalars[0]);
#elif defined(OP_HARDSIGMOID)
    return tgl_hardsigmoid(a);
#elif defined(OP_HARDSWISH)
    return tgl_hardswish(a);
#elif defined(OP_SOFTPLUS)
    return tgl_softplus(a, u_scalars[0], u_scalars[1]);
#elif defined(OP_MISH)
    return tgl_mish(a);
#elif defined(OP_EXPM1)
    return tgl_expm1(a);
#elif defined(OP_LOG1P)
    return tgl_log1p(a);
#elif defined(OP_RSQRT)
    return tgl_rsqrt(a);
#elif defined(OP_RECIPROCAL)
    return tgl_reciprocal(a);
#elif defined(OP_SQUARE)
    return tgl_square(a);
#elif defined(OP_SIN)
    return tgl_sin(a);
#elif defined(OP_COS)
    return tgl_cos(a);
#elif defined(OP_ERF)
    return tgl_erf(a);
#elif defined(OP_FLOOR)
    return tgl_floor(a);
#elif defined(OP_CEIL)
    return tgl_ceil(a);
#elif defined(OP_ROUND)
    return tgl_round(a);
#elif defined(OP_TRUNC)
    return tgl_trunc(a);
#elif defined(OP_CLAMP)
    return tgl_clamp(a, u_scalars[0], u_scalars[1]);
#elif defined(OP_ASIN)
    return tgl_asin(a);
#elif defined(OP_ACOS)
    return tgl_acos(a);
#elif defined(OP_ATAN)
    return tgl_atan(a);
#elif defined(OP_SINH)
    return tgl_sinh(a);
#elif defined(OP_COSH)
    return tgl_cosh(a);
#elif defined(OP_TAN)
    return tgl_tan(a);
#elif defined(OP_ASINH)
    return tgl_asinh(a);
#elif defined(OP_ACOSH)
    return tgl_acosh(a);
#elif defined(OP_ATANH)
    return tgl_atanh(a);
#elif defined(OP_GELU_QUICK)
    return tgl_gelu_quick(a);
#elif defined(OP_STEP)
    // On the bits: a positive subnormal is > 0 also where the GPU flushes subnormals (NVIDIA);
    // -0, negatives and NaN (bits above +inf's) give 0, as ggml.
    uint bits = floatBitsToUint(a);
    return bits != 0u && bits <= 0x7f800000u ? 1.0 : 0.0;
#elif defined(OP_ADD)
    return a + b;
#elif defined(OP_SUB)
    return a - b;
#elif defined(OP_MUL)
    return a * b;
#elif defined(OP_DIV)
    return tgl_div(a, b);
#elif defined(OP_MAXIMUM)
    return tgl_maximum(a, b);
#elif defined(OP_MINIMUM)
    return tgl_minimum(a, b);
#elif defined(OP_POW)
    return tgl_pow(a, b);
#elif defined(OP_FMOD)
    return tgl_fmod(a, b);
#elif defined(OP_REMAINDER)
    return tgl_remainder(a, b);
#elif defined(OP_FLOOR_DIVIDE)
    return tgl_floor_divide(a, b);
#elif defined(OP_ATAN2)
    return tgl_atan2(a, b);
#else
#error "elementwise.comp: no OP_* define"
    return a;
#endif
}
