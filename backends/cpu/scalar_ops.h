// The scalar definition of every elementwise op, in double: the CPU plugin applies these, and the
// GLES shaders (glsl/elementwise_ops.glsl, in f32) are checked against them. Special values that
// the C library does not already give (gelu/silu/mish/hardswish at -inf, the sign of zero in
// maximum/minimum and remainder, rsqrt(-0)) are handled explicitly. Parameters come from
// ElementwisePlan::scalars (as f32, widened).
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

// The gated activations x * g(x) (gelu, silu, mish, hardswish) at infinities: IEEE's value of the
// product, as PyTorch and ONNX's reference compute it: +inf * 1 = +inf, -inf * 0 = NaN (not the
// limit 0). The header states this (TGL_OP_GELU).
inline double gated_at_inf(double x) { return x > 0.0 ? x : std::nan(""); }

// gelu(x) = 0.5 x erfc(-x / sqrt 2).
inline double gelu_erf(double x) {
    if (std::isinf(x)) return gated_at_inf(x);
    return 0.5 * x * std::erfc(-x * kSqrtHalf);
}

// PyTorch's tanh approximation. In double, x^3 cannot overflow for any finite f32 x.
inline double gelu_tanh(double x) {
    if (std::isinf(x)) return gated_at_inf(x);
    return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

// silu(x) = x / (1 + exp(-x)).
inline double silu(double x) {
    if (std::isinf(x)) return gated_at_inf(x);
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

// ----- sign .. clamp, fmod, remainder, atan2 (PyTorch's meaning; special values spelled out) -----

constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;

// -1, 0 or 1; sign(+-0) = +-0, sign(NaN) = NaN.
inline double sign(double x) {
    if (std::isnan(x) || x == 0.0) return x;
    return x > 0.0 ? 1.0 : -1.0;
}

// x >= 0 ? x : slope * x (so -0 stays -0, as in PyTorch).
// A fused epilogue activation (tgl_activation, validated), same semantics as the unary ops.
inline double apply_activation(uint32_t activation, double x) {
    switch (activation) {
    case TGL_ACTIVATION_RELU: return relu(x);
    case TGL_ACTIVATION_GELU: return gelu_erf(x);
    case TGL_ACTIVATION_GELU_TANH: return gelu_tanh(x);
    case TGL_ACTIVATION_SILU: return silu(x);
    default: return x;
    }
}

inline double leaky_relu(double x, double slope) { return x >= 0.0 ? x : slope * x; }

// x > 0 ? x : alpha * (exp(x) - 1); NaN falls through expm1.
inline double elu(double x, double alpha) { return x > 0.0 ? x : alpha * std::expm1(x); }

inline double selu(double x) { return kSeluScale * (x > 0.0 ? x : kSeluAlpha * std::expm1(x)); }

// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) = x > 0 ? x : alpha * expm1(x / alpha), for
// either sign of alpha (alpha != 0 is validated).
inline double celu(double x, double alpha) { return x > 0.0 ? x : alpha * std::expm1(x / alpha); }

// clamp(x / 6 + 1/2, 0, 1).
inline double hardsigmoid(double x) {
    if (std::isnan(x)) return x;
    if (x <= -3.0) return 0.0;
    if (x >= 3.0) return 1.0;
    return x / 6.0 + 0.5;
}

// x * hardsigmoid(x). For finite x <= -3 that is x * 0 = -0.
inline double hardswish(double x) {
    if (std::isnan(x)) return x;
    if (std::isinf(x)) return gated_at_inf(x);
    if (x <= -3.0) return -0.0;
    if (x >= 3.0) return x;
    return x * (x + 3.0) / 6.0;
}

// log(1 + exp(z)) without overflow.
inline double softplus_unit(double z) { return z > 0.0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z)); }

// PyTorch: x where beta * x > threshold, else log(1 + exp(beta x)) / beta. The product is compared
// as PyTorch computes it for f32 tensors, rounded to f32, so that the branch taken is the one of
// an f32 implementation; the value itself is computed from the exact product.
inline double softplus(double x, double beta, double threshold) {
    if (std::isnan(x)) return x;
    if (static_cast<double>(static_cast<float>(x * beta)) > threshold) return x;
    return softplus_unit(x * beta) / beta;
}

// x * tanh(softplus(x)).
inline double mish(double x) {
    if (std::isinf(x)) return gated_at_inf(x);
    return x * std::tanh(softplus_unit(x));
}

// 1 / sqrt(x): rsqrt(+0) = +inf, rsqrt(-0) = 1 / -0 = -inf, rsqrt(x < 0) = NaN, rsqrt(inf) = 0.
inline double rsqrt(double x) {
    if (x == 0.0) return 1.0 / x;
    return 1.0 / std::sqrt(x);
}

// To the nearest integer, halves to even (torch.round); a zero result keeps the sign of x
// (round(-0.5) = -0). x - floor(x) is exact in double.
inline double round_half_even(double x) {
    if (!std::isfinite(x)) return x;
    double r = std::floor(x);
    const double d = x - r;
    if (d > 0.5 || (d == 0.5 && std::fmod(r, 2.0) != 0.0)) r += 1.0;
    return r == 0.0 ? std::copysign(0.0, x) : r;
}

// minimum(maximum(x, lo), hi), with the NaN and zero rules of maximum/minimum (+0 > -0): hi wins
// when lo > hi; NaN stays NaN (the bounds are never NaN).
inline double clamp(double x, double lo, double hi) { return minimum(maximum(x, lo), hi); }

// Python's a % b (torch.remainder): the C fmod (exact), moved by b when the signs differ; a zero
// result takes the sign of b. So remainder(a, +-inf) is a when a has b's sign, else b (+-inf);
// remainder(+-inf, b), remainder(a, 0) and NaN give NaN.
inline double remainder(double a, double b) {
    double m = std::fmod(a, b);
    if (std::isnan(m)) return m;
    if (m == 0.0) return std::copysign(0.0, b);
    if (std::signbit(m) != std::signbit(b)) return m + b;
    return m;
}

// Python's a // b (torch.floor_divide) on floats: the floor of the exact quotient, computed as
// CPython does from the exact fmod (so 1 // 0.1 = 9); a zero result takes the sign of a / b;
// b == 0 gives a / b (+-inf, NaN), as PyTorch.
inline double floor_divide(double a, double b) {
    if (b == 0.0) return a / b;
    const double mod = std::fmod(a, b);
    double div = (a - mod) / b;
    if (mod != 0.0 && (b < 0.0) != (mod < 0.0)) div -= 1.0;
    if (div == 0.0) return std::copysign(0.0, a / b);
    double floordiv = std::floor(div);
    if (div - floordiv > 0.5) floordiv += 1.0;
    return floordiv;
}

// x * sigmoid(1.702 x) (ggml's gelu_quick), IEEE's product at the infinities as the other gated ops.
constexpr double kGeluQuickCoef = 1.702;
inline double gelu_quick(double x) {
    if (std::isinf(x)) return gated_at_inf(x);
    return x / (1.0 + std::exp(-kGeluQuickCoef * x));
}

// ggml's step: x > 0 ? 1 : 0, so step(+-0) = +0 and step(NaN) = 0.
inline double step(double x) { return x > 0.0 ? 1.0 : 0.0; }

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
    case TGL_OP_GELU: return c.elementwise().gelu_approximate == TGL_GELU_TANH ? visit(gelu_tanh) : visit(gelu_erf);
    case TGL_OP_SILU: return visit(silu);
    case TGL_OP_SIGN: return visit(sign);
    case TGL_OP_LEAKY_RELU: {
        const double slope = c.elementwise().scalars[0];
        return visit([slope](double x) { return leaky_relu(x, slope); });
    }
    case TGL_OP_ELU: {
        const double alpha = c.elementwise().scalars[0];
        return visit([alpha](double x) { return elu(x, alpha); });
    }
    case TGL_OP_SELU: return visit(selu);
    case TGL_OP_CELU: {
        const double alpha = c.elementwise().scalars[0];
        return visit([alpha](double x) { return celu(x, alpha); });
    }
    case TGL_OP_HARDSIGMOID: return visit(hardsigmoid);
    case TGL_OP_HARDSWISH: return visit(hardswish);
    case TGL_OP_SOFTPLUS: {
        const double beta = c.elementwise().scalars[0], threshold = c.elementwise().scalars[1];
        return visit([beta, threshold](double x) { return softplus(x, beta, threshold); });
    }
    case TGL_OP_MISH: return visit(mish);
    case TGL_OP_EXPM1: return visit([](double x) { return std::expm1(x); });
    case TGL_OP_LOG1P: return visit([](double x) { return std::log1p(x); });
    case TGL_OP_RSQRT: return visit(rsqrt);
    case TGL_OP_RECIPROCAL: return visit([](double x) { return 1.0 / x; });
    case TGL_OP_SQUARE: return visit([](double x) { return x * x; });
    case TGL_OP_SIN: return visit([](double x) { return std::sin(x); });
    case TGL_OP_COS: return visit([](double x) { return std::cos(x); });
    case TGL_OP_ERF: return visit([](double x) { return std::erf(x); });
    case TGL_OP_FLOOR: return visit([](double x) { return std::floor(x); });
    case TGL_OP_CEIL: return visit([](double x) { return std::ceil(x); });
    case TGL_OP_ROUND: return visit(round_half_even);
    case TGL_OP_TRUNC: return visit([](double x) { return std::trunc(x); });
    case TGL_OP_CLAMP: {
        const double lo = c.elementwise().scalars[0], hi = c.elementwise().scalars[1];
        return visit([lo, hi](double x) { return clamp(x, lo, hi); });
    }
    // The C library's functions in double give C99's special values (ops.h).
    case TGL_OP_ASIN: return visit([](double x) { return std::asin(x); });
    case TGL_OP_ACOS: return visit([](double x) { return std::acos(x); });
    case TGL_OP_ATAN: return visit([](double x) { return std::atan(x); });
    case TGL_OP_SINH: return visit([](double x) { return std::sinh(x); });
    case TGL_OP_COSH: return visit([](double x) { return std::cosh(x); });
    case TGL_OP_TAN: return visit([](double x) { return std::tan(x); });
    case TGL_OP_ASINH: return visit([](double x) { return std::asinh(x); });
    case TGL_OP_ACOSH: return visit([](double x) { return std::acosh(x); });
    case TGL_OP_ATANH: return visit([](double x) { return std::atanh(x); });
    case TGL_OP_GELU_QUICK: return visit(gelu_quick);
    case TGL_OP_STEP: return visit(step);
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
    case TGL_OP_FMOD: return visit([](double a, double b) { return std::fmod(a, b); });
    case TGL_OP_REMAINDER: return visit(remainder);
    case TGL_OP_FLOOR_DIVIDE: return visit(floor_divide);
    case TGL_OP_ATAN2: return visit([](double a, double b) { return std::atan2(a, b); });
    default: fail(TGL_ERROR_INTERNAL, "cpu scalar_ops: op '%s' is not a binary op", c.info->name);
    }
}

}  // namespace cpu
}  // namespace tgl
