// The scalar function of every float elementwise op: tgl_op_<name>(a, b, s0, s1), named after the
// op (gelu: tgl_op_gelu_erf, tgl_op_gelu_tanh); unary ops ignore b, and s0, s1 are the op's scalar
// parameters (ElementwisePlan::scalars). Computed in f32; the CPU plugin's scalar_ops.h is the
// definition these are checked against. A kernel picks one by the OP_FN define (elementwise.comp:
// apply_op; fused_elementwise.comp: one per stage), so a new float op needs only its function here.
float tgl_op_abs(float a, float b, float s0, float s1) { return tgl_abs(a); }
float tgl_op_neg(float a, float b, float s0, float s1) { return tgl_neg(a); }
float tgl_op_relu(float a, float b, float s0, float s1) { return tgl_relu(a); }
float tgl_op_sigmoid(float a, float b, float s0, float s1) { return tgl_sigmoid(a); }
float tgl_op_tanh(float a, float b, float s0, float s1) { return tgl_tanh(a); }
float tgl_op_exp(float a, float b, float s0, float s1) { return tgl_exp(a); }
float tgl_op_log(float a, float b, float s0, float s1) { return tgl_log(a); }
float tgl_op_sqrt(float a, float b, float s0, float s1) { return tgl_sqrt(a); }
float tgl_op_gelu_erf(float a, float b, float s0, float s1) { return tgl_gelu_erf(a); }
float tgl_op_gelu_tanh(float a, float b, float s0, float s1) { return tgl_gelu_tanh(a); }
float tgl_op_silu(float a, float b, float s0, float s1) { return tgl_silu(a); }
float tgl_op_sign(float a, float b, float s0, float s1) { return tgl_sign(a); }
float tgl_op_leaky_relu(float a, float b, float s0, float s1) { return tgl_leaky_relu(a, s0); }
float tgl_op_elu(float a, float b, float s0, float s1) { return tgl_elu(a, s0); }
float tgl_op_selu(float a, float b, float s0, float s1) { return tgl_selu(a); }
float tgl_op_celu(float a, float b, float s0, float s1) { return tgl_celu(a, s0); }
float tgl_op_hardsigmoid(float a, float b, float s0, float s1) { return tgl_hardsigmoid(a); }
float tgl_op_hardswish(float a, float b, float s0, float s1) { return tgl_hardswish(a); }
float tgl_op_softplus(float a, float b, float s0, float s1) { return tgl_softplus(a, s0, s1); }
float tgl_op_mish(float a, float b, float s0, float s1) { return tgl_mish(a); }
float tgl_op_expm1(float a, float b, float s0, float s1) { return tgl_expm1(a); }
float tgl_op_log1p(float a, float b, float s0, float s1) { return tgl_log1p(a); }
float tgl_op_rsqrt(float a, float b, float s0, float s1) { return tgl_rsqrt(a); }
float tgl_op_reciprocal(float a, float b, float s0, float s1) { return tgl_reciprocal(a); }
float tgl_op_square(float a, float b, float s0, float s1) { return tgl_square(a); }
float tgl_op_sin(float a, float b, float s0, float s1) { return tgl_sin(a); }
float tgl_op_cos(float a, float b, float s0, float s1) { return tgl_cos(a); }
float tgl_op_erf(float a, float b, float s0, float s1) { return tgl_erf(a); }
float tgl_op_floor(float a, float b, float s0, float s1) { return tgl_floor(a); }
float tgl_op_ceil(float a, float b, float s0, float s1) { return tgl_ceil(a); }
float tgl_op_round(float a, float b, float s0, float s1) { return tgl_round(a); }
float tgl_op_trunc(float a, float b, float s0, float s1) { return tgl_trunc(a); }
float tgl_op_clamp(float a, float b, float s0, float s1) { return tgl_clamp(a, s0, s1); }
float tgl_op_asin(float a, float b, float s0, float s1) { return tgl_asin(a); }
float tgl_op_acos(float a, float b, float s0, float s1) { return tgl_acos(a); }
float tgl_op_atan(float a, float b, float s0, float s1) { return tgl_atan(a); }
float tgl_op_sinh(float a, float b, float s0, float s1) { return tgl_sinh(a); }
float tgl_op_cosh(float a, float b, float s0, float s1) { return tgl_cosh(a); }
float tgl_op_tan(float a, float b, float s0, float s1) { return tgl_tan(a); }
float tgl_op_asinh(float a, float b, float s0, float s1) { return tgl_asinh(a); }
float tgl_op_acosh(float a, float b, float s0, float s1) { return tgl_acosh(a); }
float tgl_op_atanh(float a, float b, float s0, float s1) { return tgl_atanh(a); }
float tgl_op_gelu_quick(float a, float b, float s0, float s1) { return tgl_gelu_quick(a); }
float tgl_op_step(float a, float b, float s0, float s1) {
    // On the bits: a positive subnormal is > 0 also where the GPU flushes subnormals (NVIDIA);
    // -0, negatives and NaN (bits above +inf's) give 0, as ggml.
    uint bits = floatBitsToUint(a);
    return bits != 0u && bits <= 0x7f800000u ? 1.0 : 0.0;
}
float tgl_op_add(float a, float b, float s0, float s1) { return a + b; }
float tgl_op_sub(float a, float b, float s0, float s1) { return a - b; }
float tgl_op_mul(float a, float b, float s0, float s1) { return a * b; }
float tgl_op_div(float a, float b, float s0, float s1) { return tgl_div(a, b); }
float tgl_op_maximum(float a, float b, float s0, float s1) { return tgl_maximum(a, b); }
float tgl_op_minimum(float a, float b, float s0, float s1) { return tgl_minimum(a, b); }
float tgl_op_pow(float a, float b, float s0, float s1) { return tgl_pow(a, b); }
float tgl_op_fmod(float a, float b, float s0, float s1) { return tgl_fmod(a, b); }
float tgl_op_remainder(float a, float b, float s0, float s1) { return tgl_remainder(a, b); }
float tgl_op_floor_divide(float a, float b, float s0, float s1) { return tgl_floor_divide(a, b); }
float tgl_op_atan2(float a, float b, float s0, float s1) { return tgl_atan2(a, b); }

#if defined(OP_FN)
// elementwise.comp's op, with u_scalars holding its scalar parameters.
uniform float u_scalars[2];
float apply_op(float a, float b) { return OP_FN(a, b, u_scalars[0], u_scalars[1]); }
#endif
