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
#else
#error "elementwise.comp: no OP_* define"
    return a;
#endif
}
