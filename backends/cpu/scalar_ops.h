// The scalar definition of every elementwise op, in double: the CPU plugin applies these, and the
// GLES shaders (glsl/elementwise_ops.glsl, in f32) are checked against them. Special values that
// the C library does not already give (the gelu/silu limits at -inf, the sign of zero in
// maximum/minimum) are handled explicitly.
#pragma once

#include "validate.h"
#include "status.h"

#include <cmath>

namespace tgl {
namespace cpu {

constexpr double kSqrtHalf = 0.70710678118654752440084436210484903;   // 1/sqrt(2)
constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876373; // sqrt(2/pi)

// ---------------------------------------------------------------------------------------------
// The scalar definition of every op.

inline double relu(double x) { return x > 0.0 ? x : (std::isnan(x) ? x : 0.0); }

inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }  // exp(+inf) = inf gives 0

// gelu(x) = 0.5 x erfc(-x / sqrt 2). At +-inf the formula gives inf and inf * 0 = NaN; the limits
// are +inf and 0.
inline double gelu_erf(double x) {
    if (std::isinf(x)) return x > 0.0 ? x : 0.0;
    return 0.5 * x * std::erfc(-x * kSqrtHalf);
}

// PyTorch's tanh approximation. In double, x^3 cannot overflow for any finite f32 x.
inline double gelu_tanh(double x) {
    if (std::isinf(x)) return x > 0.0 ? x : 0.0;
    return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// silu(x) = x / (1 + exp(-x)); -inf / inf would be NaN, the limit is 0.
inline double silu(double x) {
    if (std::isinf(x)) return x > 0.0 ? x : 0.0;
    return x / (1.0 + std::exp(-x));
}

// NaN if either is NaN; of +0 and -0, maximum is +0 and minimum is -0.
inline double maximum(double a, double b) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? b : a;
    return a > b ? a : b;
}

inline double minimum(double a, double b) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? a : b;
    return a < b ? a : b;
}

// Calls visit(f) with f(double x) -> double, the scalar function of the unary op of `c`.
template <class Visit>
void visit_unary(const OpCall& c, Visit&& visit) {
    switch (c.info->op) {
    case TGL_OP_ABS: return visit([](double x) { return std::fabs(x); });
    case TGL_OP_NEG: return visit([](double x) { return -x; });
    case TGL_OP_RELU: return visit(relu);
    case TGL_OP_SIGMOID: return visit(sigmoid);
    case TGL_OP_TANH: return visit([](double x) { return std::tanh(x); });
    case TGL_OP_EXP: return visit([](double x) { return std::exp(x); });
    case TGL_OP_LOG: return visit([](double x) { return std::log(x); });
    case TGL_OP_SQRT: return visit([](double x) { return std::sqrt(x); });
    case TGL_OP_GELU: return c.gelu_approximate == TGL_GELU_TANH ? visit(gelu_tanh) : visit(gelu_erf);
    case TGL_OP_SILU: return visit(silu);
    default: fail(TGL_ERROR_INTERNAL, "cpu scalar_ops: op '%s' is not a unary op", c.info->name);
    }
}

// Calls visit(f) with f(double a, double b) -> double, the scalar function of the binary op of `c`.
template <class Visit>
void visit_binary(const OpCall& c, Visit&& visit) {
    switch (c.info->op) {
    case TGL_OP_ADD: return visit([](double a, double b) { return a + b; });
    case TGL_OP_SUB: return visit([](double a, double b) { return a - b; });
    case TGL_OP_MUL: return visit([](double a, double b) { return a * b; });
    case TGL_OP_DIV: return visit([](double a, double b) { return a / b; });
    case TGL_OP_MAXIMUM: return visit(maximum);
    case TGL_OP_MINIMUM: return visit(minimum);
    case TGL_OP_POW: return visit([](double a, double b) { return std::pow(a, b); });
    default: fail(TGL_ERROR_INTERNAL, "cpu scalar_ops: op '%s' is not a binary op", c.info->name);
    }
}

}  // namespace cpu
}  // namespace tgl
