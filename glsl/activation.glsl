// A fused epilogue activation (tgl_activation of the ABI) chosen at compile time by ACTIVATION:
// 0 none, 1 relu, 2 gelu (erf), 3 gelu (tanh), 4 silu; the same math as the unary ops.
#include "math.glsl"

#ifndef ACTIVATION
#define ACTIVATION 0
#endif

float apply_activation(float v) {
#if ACTIVATION == 1
    return tgl_relu(v);
#elif ACTIVATION == 2
    return tgl_gelu_erf(v);
#elif ACTIVATION == 3
    return tgl_gelu_tanh(v);
#elif ACTIVATION == 4
    return tgl_silu(v);
#else
    return v;
#endif
}
