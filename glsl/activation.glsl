// A fused epilogue activation (tgl_activation of the ABI): 0 none, 1 relu, 2 gelu (erf),
// 3 gelu (tanh), 4 silu; the same math as the unary ops. tgl_activation takes it at run time (a
// uniform: one program for every epilogue), apply_activation at compile time (ACTIVATION).
#include "math.glsl"

#ifndef ACTIVATION
#define ACTIVATION 0
#endif

float tgl_activation(int a, float v) {
    switch (a) {
    case 1: return tgl_relu(v);
    case 2: return tgl_gelu_erf(v);
    case 3: return tgl_gelu_tanh(v);
    case 4: return tgl_silu(v);
    default: return v;
    }
}

float apply_activation(float v) { return tgl_activation(ACTIVATION, v); }
