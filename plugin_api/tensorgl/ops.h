/*
 * tensorgl plugin ABI: the op catalogue (op ids, their operands and parameter structs).
 *
 * Part of the ABI defined by <tensorgl/plugin_api.h>, which includes this file at its place
 * (including this file alone includes plugin_api.h). The growth rules at the top of plugin_api.h
 * apply: ids are never renumbered or reused, structs grow only at their end.
 */
#ifndef TENSORGL_PLUGIN_API_H
#include "plugin_api.h" /* includes this file after the tensor descriptor */
#elif !defined(TENSORGL_OPS_H)
#define TENSORGL_OPS_H

/* Every op id of ABI major 1, of any minor, is below this limit: a host lists a plugin's ops by
 * calling query_op for each id in [1, TGL_OP_ID_LIMIT) (ids it does not know give
 * TGL_ERROR_UNKNOWN_OP), also for ops added by minors newer than the host. Fixed for major 1. */
#define TGL_OP_ID_LIMIT 4096u

/* ---------------------------------------------------------------------------------------------
 * Op ids. Stable numbers, grouped by family in blocks of 100; never renumbered. An id in this list
 * that a plugin does not implement is reported with supported = 0 by query_op, and run_op returns
 * TGL_ERROR_UNIMPLEMENTED for it. Operands are listed as (inputs) -> (outputs).
 * ------------------------------------------------------------------------------------------- */
typedef uint32_t tgl_op;
enum {
    TGL_OP_INVALID = 0,

    /* Unary elementwise: (x) -> (y), y has x's shape and dtype; dtypes f32 and f16 (f16 is storage:
     * computed in f32, rounded to nearest even at the store). params: tgl_unary_params or NULL,
     * except where an op names its own struct. Special values follow C99/IEEE: log(0) = -inf,
     * log(x<0) = NaN, sqrt(x<0) = NaN, exp overflows to +inf; NaN in gives NaN out. The gated
     * activations x * g(x) (gelu, silu, mish, hardswish, also as fused epilogues) give IEEE's
     * value of that product at the infinities, as PyTorch and ONNX's reference do:
     * f(+inf) = +inf, f(-inf) = -inf * 0 = NaN (not the limit 0). */
    TGL_OP_ABS = 100,
    TGL_OP_NEG = 101,
    TGL_OP_RELU = 102,    /* max(x, 0); relu(NaN) = NaN */
    TGL_OP_SIGMOID = 103, /* 1 / (1 + exp(-x)) */
    TGL_OP_TANH = 104,
    TGL_OP_EXP = 105,
    TGL_OP_LOG = 106,     /* natural log */
    TGL_OP_SQRT = 107,
    TGL_OP_GELU = 108,    /* x * Phi(x) (erf form) or its tanh approximation, see tgl_gelu_params */
    TGL_OP_SILU = 109,    /* x * sigmoid(x) */
    TGL_OP_SIGN = 110,        /* -1, 0 or 1 (sign(-0) = -0, sign(NaN) = NaN) */
    TGL_OP_LEAKY_RELU = 111,  /* x >= 0 ? x : slope * x; tgl_leaky_relu_params */
    TGL_OP_ELU = 112,         /* x > 0 ? x : alpha * (exp(x) - 1); tgl_elu_params */
    TGL_OP_SELU = 113,        /* scale * (x > 0 ? x : alpha * (exp(x) - 1)), PyTorch's constants */
    TGL_OP_CELU = 114,        /* max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); tgl_elu_params */
    TGL_OP_HARDSIGMOID = 115, /* clamp(x / 6 + 1 / 2, 0, 1) */
    TGL_OP_HARDSWISH = 116,   /* x * hardsigmoid(x) */
    TGL_OP_SOFTPLUS = 117,    /* log(1 + exp(beta x)) / beta, or x where beta x > threshold; tgl_softplus_params */
    TGL_OP_MISH = 118,        /* x * tanh(softplus(x)) */
    TGL_OP_EXPM1 = 119,       /* exp(x) - 1, accurate near 0 */
    TGL_OP_LOG1P = 120,       /* log(1 + x), accurate near 0 */
    TGL_OP_RSQRT = 121,       /* 1 / sqrt(x); rsqrt(0) = inf, rsqrt(-0) = -inf */
    TGL_OP_RECIPROCAL = 122,  /* 1 / x */
    TGL_OP_SQUARE = 123,      /* x * x */
    TGL_OP_SIN = 124,         /* accurate over the whole f32 range (argument reduced exactly) */
    TGL_OP_COS = 125,
    TGL_OP_ERF = 126,
    TGL_OP_FLOOR = 127,
    TGL_OP_CEIL = 128,
    TGL_OP_ROUND = 129,       /* to the nearest integer, halves to even (torch.round) */
    TGL_OP_TRUNC = 130,
    TGL_OP_CLAMP = 131,       /* minimum(maximum(x, lo), hi) (hi wins when lo > hi; -0 < +0); NaN stays NaN; tgl_clamp_params */
    /* abs, neg and clamp also take x and y of i32, i8 or u8 (one dtype; since ABI 1.3), computed
     * exactly with wrap-around (abs(INT_MIN) = neg(INT_MIN) = INT_MIN, neg of u8 x is 256 - x; see
     * "Integer arithmetic" below). Integer clamp rounds its f32 bounds inward to integers (lo up,
     * hi down) and saturates them to x's range: clamp(x, -2.5, 2.5) on i32 is clamp(x, -2, 2). */
    /* logical_not: (x) -> (y): y = (x == 0); x of any dtype but i64 (NaN counts as nonzero), y bool or u8
     * (0 or 1). */
    TGL_OP_LOGICAL_NOT = 132,
    /* Since ABI 1.3. Inverse trigonometric and hyperbolic functions, C99 special values:
     * asin/atan/sinh/tan/asinh/atanh keep the sign of zero (f(-0) = -0); acos(1) = +0, acosh(1) = +0;
     * asin, acos of |x| > 1, acosh of x < 1, atanh of |x| > 1 are NaN; atanh(+-1) = +-inf;
     * atan(+-inf) = +-pi/2, sinh(+-inf) = +-inf, cosh(+-inf) = +inf, tan(+-inf) = NaN,
     * asinh(+-inf) = +-inf, acosh(+inf) = +inf. sinh/cosh overflow to inf only where the exact
     * value does (|x| > 89.4); tan's argument is reduced exactly (as sin/cos). The GPU evaluates
     * them in f32 from formulas that keep full precision near 0 and for large |x| (sinh from expm1,
     * asinh(x) = sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), log(2|x|) beyond 2^12, ...);
     * docs/ops.md states the measured ulp bounds. */
    TGL_OP_ASIN = 133,
    TGL_OP_ACOS = 134,
    TGL_OP_ATAN = 135,
    TGL_OP_SINH = 136,
    TGL_OP_COSH = 137,
    TGL_OP_TAN = 138,
    TGL_OP_ASINH = 139,
    TGL_OP_ACOSH = 140,
    TGL_OP_ATANH = 141,
    TGL_OP_GELU_QUICK = 142, /* since 1.3: x * sigmoid(1.702 x) (ggml's gelu_quick); gated: f(-inf) = NaN */
    /* step, since 1.3: x > 0 ? 1 : 0 (ggml's step): step(+-0) = +0, step(NaN) = 0 (a comparison with
     * NaN is false; the one unary float op that does not propagate NaN), step(+inf) = 1. */
    TGL_OP_STEP = 143,

    /* Binary elementwise: (a, b) -> (y). a and b broadcast NumPy-style (shapes right-aligned; a
     * dim of 1 stretches); y must have exactly the broadcast shape. params: tgl_binary_params or
     * NULL. Arithmetic ops: a, b and y share one dtype, f32 or f16; add, sub, mul, div, maximum,
     * minimum, pow, fmod, remainder and floor_divide also i32, i8 and u8 (since ABI 1.3).
     *
     * Integer arithmetic (the binary ops above; abs, neg, clamp; sum, prod, max, min, cumsum,
     * cumprod on i32) is exact and never goes through float. Results wrap around to the dtype
     * (two's complement, the low 32 / 8 bits, as C's unsigned arithmetic and NumPy): INT_MAX + 1 =
     * INT_MIN, neg(INT_MIN) = abs(INT_MIN) = INT_MIN, INT_MIN / -1 = INT_MIN (floor_divide and div),
     * u8 0 - 1 = 255. Division and remainder by zero give 0 (as NumPy: x // 0 = x % 0 = fmod(x, 0)
     * = 0 and div(x, 0) = 0), never an error or undefined behaviour; INT_MIN % -1 = 0.
     *   div        integer: C division, the quotient truncated toward zero (ONNX Div,
     *              torch.div(rounding_mode='trunc')); floats: IEEE a / b.
     *   floor_divide  a / b rounded toward -inf (Python //, torch.floor_divide): floats floor(a / b)
     *              of the IEEE quotient (x // 0 = +-inf, 0 // 0 = NaN); integers exact.
     *   fmod       integer: C %, the sign of a (a - trunc(a / b) * b).
     *   remainder  integer: Python %, the sign of b (a - floor(a / b) * b).
     *   pow        integer: exact a^b wrapped (repeated squaring); b < 0 gives trunc(1 / a^-b):
     *              1 for a = 1, 1 or -1 for a = -1 (b even / odd), 0 for every other a, 0 included
     *              (as PyTorch's integer pow).
     *   maximum, minimum  integer order. */
    TGL_OP_ADD = 200,
    TGL_OP_SUB = 201,
    TGL_OP_MUL = 202,
    TGL_OP_DIV = 203,     /* IEEE division: x/0 = +-inf, 0/0 = NaN; integers: truncated (see above) */
    TGL_OP_MAXIMUM = 204, /* NaN if either is NaN (torch.maximum) */
    TGL_OP_MINIMUM = 205, /* NaN if either is NaN (torch.minimum) */
    TGL_OP_POW = 206,     /* C99 pow() semantics, including negative bases with integer exponents */
    TGL_OP_FMOD = 207,      /* C fmod: a - trunc(a / b) * b, exact; sign of a (torch.fmod) */
    TGL_OP_REMAINDER = 208, /* Python %: a - floor(a / b) * b; sign of b (torch.remainder) */
    TGL_OP_ATAN2 = 209,     /* atan2(a, b) = angle of (b, a), C99 special values */
    /* Logical: a and b of one dtype (any but i64; nonzero and NaN are true), y bool or u8 (0 or 1). */
    TGL_OP_LOGICAL_AND = 210,
    TGL_OP_LOGICAL_OR = 211,
    TGL_OP_LOGICAL_XOR = 212,
    /* Comparisons: a and b of one dtype (f32, f16, i32, i8, u8 or bool), y bool or u8 (0 or 1).
     * IEEE: any comparison with NaN is false except ne; -0 == +0. */
    TGL_OP_EQ = 213,
    TGL_OP_NE = 214,
    TGL_OP_LT = 215,
    TGL_OP_LE = 216,
    TGL_OP_GT = 217,
    TGL_OP_GE = 218,
    TGL_OP_FLOOR_DIVIDE = 219, /* a / b rounded toward -inf (Python //); floats floor(a / b) (since ABI 1.3) */
    /* where: (cond, a, b) -> (y), y = cond != 0 ? a : b, all three broadcast to y. cond is bool or
     * u8; a, b and y share one dtype (any but i64); elements are copied bit for bit. tgl_binary_params. */
    TGL_OP_WHERE = 250,
    /* add_n (since ABI 1.3): (x0, x1, ..., x_{n-1}) -> (y), 1 <= n <= TGL_MAX_OP_INPUTS (8), the
     * n-ary sum y = ((x0 + x1) + x2) + ... Every x_k broadcasts to y as in add; y must have exactly
     * the broadcast shape. One dtype for all: f32, f16, i32, i8 or u8. Summed left to right in
     * f32 (integers exact, wrapping as add); f16 is widened, summed in f32 and rounded once at the
     * store, so it can differ from chained f16 adds, which round after each. tgl_binary_params. */
    TGL_OP_ADD_N = 260,

    /* Reductions: (x) -> (y) over a set of axes, see tgl_reduce_params. NaN propagates through
     * max/min. Over an empty axis: sum = 0, prod = 1, mean = NaN, max/min = error.
     * dtypes of sum, mean, max, min, prod, logsumexp, var, std and norm: x and y are both f32 or
     * both f16. f16 is a storage type: elements are widened to f32 exactly, everything (sums,
     * partial sums across workgroups, the mean's division, var's deviations) is computed in f32
     * (the CPU reference: in double) and the result is rounded once, to nearest even, at the store;
     * a result beyond the f16 range is +-inf (the sum of three f16 40000s is inf, their mean 40000).
     * sum, prod, max and min also take x and y both i32 (since ABI 1.3): exact, wrapping (two's
     * complement) integer sums and products, so the result does not depend on the order. */
    TGL_OP_SUM = 300,
    TGL_OP_MEAN = 301,
    TGL_OP_MAX = 302,
    TGL_OP_MIN = 303,
    TGL_OP_PROD = 304,
    /* argmax/argmin: (x) -> (y i32) along one axis (tgl_arg_reduce_params): the index of the first
     * largest/smallest element; a NaN counts as larger (argmax) or smaller (argmin) than any
     * number, so the first NaN wins (as PyTorch). With select_last_index (since 1.3) the last of
     * the tied extremes, and the last NaN (as ONNX's reference: the first of the reversed axis).
     * -0 and +0 tie. An empty axis is an error. x: f32, f16, i32, i8 or u8 (i8, u8 since ABI 1.3). */
    TGL_OP_ARGMAX = 305,
    TGL_OP_ARGMIN = 306,
    /* logsumexp: log(sum(exp(x))) computed stably (max subtracted); over an empty set -inf;
     * tgl_reduce_params. */
    TGL_OP_LOGSUMEXP = 307,
    /* var/std: sum((x - mean)^2) / max(0, N - correction) (tgl_var_params; N = number of reduced
     * elements), as PyTorch: N - correction <= 0 gives inf or NaN; std = sqrt(var). */
    TGL_OP_VAR = 308,
    TGL_OP_STD = 309,
    /* any/all: (x any dtype but i64) -> (y bool or u8): whether any / every reduced element is nonzero (NaN
     * is nonzero); over an empty set any = 0, all = 1. tgl_reduce_params. */
    TGL_OP_ANY = 310,
    TGL_OP_ALL = 311,
    /* norm: vector norm, sum(|x|) (ord 1) or sqrt(sum(x^2)) (ord 2, without overflow for large
     * finite x); tgl_vector_norm_params. */
    TGL_OP_NORM = 312,
    /* cumsum/cumprod: (x) -> (y) of the same shape, running sum/product along one axis
     * (tgl_scan_params): inclusive (y[i] includes x[i]) or exclusive (starts at 0 / 1), forward or
     * reverse (from the end). x and y are both f32 or both f16; the running value is f32 (the CPU
     * reference: double) and each y element is rounded once at its store (f16 overflow: +-inf).
     * Also x and y both i32 (since ABI 1.3): exact running sums/products, wrapping. */
    TGL_OP_CUMSUM = 313,
    TGL_OP_CUMPROD = 314,

    /* Matmul: (A, B) -> (C), C = alpha * op(A) @ op(B) + beta * C, see tgl_matmul_params. A, B
     * and C share one dtype, f32 or f16 (f16 is storage: products summed in f32 on the GPU, in
     * double on the CPU reference, rounded once at the store). */
    TGL_OP_MATMUL = 400,
    /* [matmul family: ops 401..] */
    /* The linear family: y = act(x @ W^T + bias), W in PyTorch's nn.Linear layout (N, K). x is
     * (..., K) of rank >= 1 with any leading dims (a batch), y is (..., N) with the same leading
     * dims; bias? (N) is absent when its buffer handle is 0. Every float operand but the scales
     * has x's dtype (f32 or f16; f16 is storage: summed in f32 on the GPU, double on the CPU,
     * bias added and the activation (tgl_activation, params->activation) applied before the one
     * rounding at the store). Any strides on every operand; outputs may be non-contiguous. K == 0
     * gives y = act(bias) (or act(0)). Outputs must not overlap the inputs or each other.
     * linear: (x, W (N, K), bias?) -> (y); tgl_linear_params.
     * linear_qkv: (x, W (Nq + Nk + Nv, K), bias? (Nq + Nk + Nv)) -> (q (..., Nq), k (..., Nk),
     *   v (..., Nv)): one fused projection whose output columns are routed to three tensors, each
     *   with its own strides (Nq, Nk, Nv come from the outputs' last dims, any of them may be 0);
     *   tgl_linear_params (the activation applies to all three).
     * grouped_linear (mixture of experts): (x (T, K), W (E, N, K), index (T) i32 or i64, bias? (E, N))
     *   -> (y (T, N)): y[t] = act(x[t] @ W[index[t]]^T + bias[index[t]]). An index outside
     *   [0, E) is TGL_ERROR_INDEX_OUT_OF_RANGE and nothing is written, with the rules and the
     *   message of the indexing ops (CPU: from run_op; GLES: at the next call that waits).
     *   E == 0 with T > 0 is rejected by run_op. tgl_linear_params.
     * linear_int8 (weight-only int8): (x, Wq (N, K) i8, scale (N) f32 or f16, bias?) -> (y):
     *   W[n, k] = Wq[n, k] * scale[n] (dequantized in f32 on the GPU, exactly in double on the
     *   CPU), then as linear. tgl_linear_params.
     * linear_int4 (weight-only 4-bit, GPTQ/AWQ-style groups): (x, Wq (N, K/2) u8, scales (N, K/G)
     *   f32 or f16, zeros? (N, K/G) u8, bias?) -> (y), G = params->group_size (32 or 64; K must be
     *   a multiple of G: anything else is TGL_ERROR_SHAPE_MISMATCH, no padding). Byte Wq[n, j]
     *   holds k = 2j in its LOW nibble and k = 2j + 1 in its HIGH nibble, each an unsigned 4-bit
     *   q in 0..15. W[n, k] = (q - z) * scales[n, k / G] with z = zeros[n, k / G] (the byte's
     *   integer value, conventionally 0..15) when zeros is given, else z = 8 (so q - 8 in
     *   -8..7). tgl_linear_int4_params. */
    TGL_OP_LINEAR = 401,
    TGL_OP_LINEAR_QKV = 402,
    TGL_OP_GROUPED_LINEAR = 403,
    TGL_OP_LINEAR_INT8 = 404,
    TGL_OP_LINEAR_INT4 = 405,

    /* cast: (x) -> (y), same shape, any dtype to any dtype (tgl_unary_params). Exact where the value
     * fits; otherwise:
     *   to f32/f16/bf16: rounded to nearest, ties to even; beyond the largest finite value: +-inf;
     *     NaN stays NaN (quiet), -0 stays -0.
     *   float to i64/i32/i16/i8/u8: truncated toward zero, then saturated to the range of y
     *     (i64: every x >= 2^63 gives 2^63 - 1, every x <= -2^63 gives -2^63; 1.3); NaN gives 0.
     *   integer to a narrower integer: two's-complement wrap-around (keeps the low bits, as C,
     *     NumPy and PyTorch do; i64 to i32 keeps the low 32 bits).
     *   i64 to a float: rounded once to nearest, ties to even (2^53 + 1 to f32 is 2^53; never
     *     rounded twice through an intermediate format).
     *   to bool: x != 0 (NaN is true, -0 is false). bool to anything: 0 or 1.
     *   i64 and i16 (ABI 1.3) go to and from every dtype. */
    TGL_OP_CAST = 500,

    /* Normalization. Optional operands (marked ?) are absent when their buffer handle is 0. Every
     * float operand of one op has one dtype (f32 or f16; f16 is storage, computed in f32 on the GPU).
     * softmax/log_softmax: (x, mask?) -> (y) along one axis (any axis, any strides): y =
     *   softmax(scale * x + mask), mask additive and broadcasting NumPy-style to x
     *   (tgl_softmax_params; scale finite). A row whose every element is -inf after masking gives
     *   zeros (softmax) and -inf (log_softmax), not NaN. A NaN in a row gives a NaN row; a +inf gives
     *   a NaN row too (inf - inf, as PyTorch). Rows of any length (statistics in two passes: max,
     *   then the sum of exp(v - max)).
     * layer_norm: (x, gamma?, beta?) -> (y), over the last n_norm_dims dims (tgl_layer_norm_params):
     *   (x - mean) / sqrt(var + eps) * gamma + beta, biased variance (two passes: stable for large
     *   means); gamma/beta have exactly the shape of those dims; absent gamma is 1, beta 0.
     * rms_norm: (x, gamma?, beta?) -> (y) = x / sqrt(mean(x^2) + eps) * gamma + beta
     *   (tgl_layer_norm_params); gamma and beta as layer_norm's (absent: 1 and 0). beta since 1.3
     *   (a shifted RMS norm, as llama.cpp's norm + add): 2 or 3 inputs are accepted.
     * group_norm: (x (N, C, ...), gamma? (C), beta? (C)) -> (y) (tgl_group_norm_params): mean/var
     *   over each group of C / num_groups channels and all positions; num_groups must divide C.
     * batch_norm: (x (N, C, ...), mean (C), var (C), gamma? (C), beta? (C)) -> (y), inference form
     *   (tgl_batch_norm_params); C is dim 1, rank >= 2.
     * add_layer_norm / add_rms_norm: (x, residual, gamma?, beta?) -> (y, sum?): sum = x + residual
     *   (same shape) rounded to the dtype, y = layer_norm(sum) / rms_norm(sum) of that rounded sum
     *   (as the unfused PyTorch ops), in one pass; sum is written when given (add_rms_norm takes no
     *   beta); y and sum must not overlap. tgl_layer_norm_params.
     * eps (all norms) must be finite and >= 0 (NaN, inf or negative: TGL_ERROR_INVALID_ARGUMENT);
     *   eps 0 is allowed as in PyTorch: a constant row then gives 0 / 0 = NaN. A NaN or inf in a row
     *   gives a NaN row (layer/group norm). Statistics are f32 on the GPU (double on the CPU
     *   reference): an rms_norm row with |x| beyond ~1e19 overflows there. */
    TGL_OP_SOFTMAX = 600,
    TGL_OP_LOG_SOFTMAX = 601,
    TGL_OP_LAYER_NORM = 602,
    TGL_OP_RMS_NORM = 603,
    TGL_OP_GROUP_NORM = 604,
    TGL_OP_BATCH_NORM = 605,
    TGL_OP_ADD_LAYER_NORM = 606,
    TGL_OP_ADD_RMS_NORM = 607,

    /* Layout: (x) -> (y), any dtype (inputs and outputs of one dtype; i64 and i16 since 1.3), elements copied bit for bit
     * (NaN payloads and -0 kept). All 13 ops are one strided copy. Zero-copy views of the same
     * kinds (reshape of a contiguous tensor, permute, slice, narrow, expand) are made on the host by
     * editing a descriptor (shape, strides, byte_offset); these ops materialize them into y. Inputs
     * may have any strides (0 and negative too); outputs any strides but 0 and must not overlap
     * themselves or each other (split's outputs are checked pairwise).
     * contiguous: y = x (same shape), any strides on both sides.
     * reshape: y takes x's elements in row-major order; same element count, any shapes and ranks.
     * permute: y.shape[d] = x.shape[perm[d]] (tgl_permute_params; params required).
     * slice: along one axis, Python start:stop:step, negative steps too (tgl_slice_params; params
     *   required); y's size there is Python's len(range(*slice(start, stop, step).indices(n))).
     * narrow: x.narrow(axis, start, length), start in [-n, n] (negative: from the end),
     *   0 <= length <= n - start (tgl_narrow_params; params required).
     * expand: y.shape is x's shape broadcast NumPy-style (right-aligned; dims of 1 stretch, also to
     *   0; extra leading dims of y repeat x).
     * flip: reverse the listed axes (tgl_flip_params; params required; no repeats; none: a copy).
     * concat: (x0, ..., x{n-1}) -> (y), 1 <= n <= 8 inputs of one rank (>= 1) agreeing in every
     *   dim but the axis, which may be 0 in some (those add nothing); y's axis is their sum. For
     *   more inputs: concatenate into slices of y (tgl_axis_params; NULL: axis 0).
     * split: (x) -> (y0, ..., y{n-1}), 1 <= n <= 4; the sizes along the axis come from the
     *   outputs' shapes (any, 0 included) and must add up to x's (tgl_axis_params; NULL: axis 0).
     * stack: (x0, ..., x{n-1}) -> (y), 1 <= n <= 8 inputs of one shape, joined along a new axis
     *   of size n at `axis` in [-(rank+1), rank] (tgl_axis_params; NULL: axis 0).
     * pad: per side of every dim, y.shape[d] = before[d] + x.shape[d] + after[d] >= 0; negative
     *   pads crop. constant: the value converted to y's dtype as cast converts a double; reflect
     *   (torch 'reflect', the edge not repeated): every positive pad < x.shape[d]; replicate: the
     *   edge element repeated, a dim of size 0 cannot be padded (tgl_pad_params; params required).
     * tile: y.shape[d] is a multiple of x's (x right-aligned; leading dims of y beyond x's rank are
     *   repetitions of all of x), torch.tile / Tensor.repeat with y.shape = reps * x.shape. A y dim of
     *   0 is 0 repetitions; a dim of x of size 0 needs y's to be 0 too (tgl_unary_params).
     * roll: torch.roll (tgl_roll_params; params required): y[(i + shift) mod n] = x[i] along each
     *   listed axis, shifts of any sign and size; an axis listed twice gets the sum of its shifts;
     *   n_axes 0 rolls the flattened tensor (row-major order) by shifts[0] and keeps the shape. */
    TGL_OP_CONTIGUOUS = 700,
    TGL_OP_CONCAT = 701,
    TGL_OP_PAD = 702,
    TGL_OP_TILE = 703,
    TGL_OP_ROLL = 704,
    TGL_OP_PERMUTE = 705,
    TGL_OP_RESHAPE = 706,
    TGL_OP_SLICE = 707,
    TGL_OP_NARROW = 708,
    TGL_OP_SPLIT = 709,
    TGL_OP_STACK = 710,
    TGL_OP_EXPAND = 711,
    TGL_OP_FLIP = 712,

    /* Indexing (tgl_axis_params, NULL: axis 0; one_hot: tgl_unary_params). Indices are i32 or
     * (1.3) i64 (any other dtype is TGL_ERROR_DTYPE_MISMATCH; an i64 index is checked on its whole
     * 64-bit value, so 2^32 + 3 is out of range, never 3); data operands any dtype but i64
     * (scatter_add: f32, f16, i32). The same holds for the index of grouped_linear and
     * embedding_backward and the target of cross_entropy(_backward).
     * Out-of-range indices: an index outside [0, size) -- negative ones included, they do NOT wrap
     * as in Python -- is TGL_ERROR_INDEX_OUT_OF_RANGE and NOTHING is written (y keeps its bytes,
     * scatter's y = x copy included). The message names the op, the first bad index in row-major
     * order of the index tensor (flat position and value) and the valid range, on every plugin.
     * The CPU plugin checks all indices before writing and returns the error from run_op. The GLES
     * plugin sees indices only on the GPU: run_op returns TGL_OK, a first GPU pass checks them, and
     * the error reaches the host thread that queued the op at that thread's next call that waits
     * (synchronize, buffer_download -- whose bytes are still delivered --, timer_end or
     * device_close), whichever thread's wait found it on the GPU. The GPU keeps one error per
     * span between two reads of its status (the first failure; a later failing op of the span
     * writes nothing but is not named), so every thread whose ops with such a check ran in that
     * span gets that error, once, at its next wait: a thread never waits with TGL_OK over an op of
     * its own that failed, but it may be told of another thread's failure (then its own outputs of
     * that span are not known to be written). A thread that queued no such op is not handed
     * another thread's error. device_close returns an error that a thread has not yet been told
     * of. The device stays usable, and later ops run normally. An index tensor that is not empty over an axis of size 0 is rejected by
     * run_op on every plugin (no index can be valid). An op whose y is empty does nothing.
     * gather: (x, index) -> (y), torch.gather: index has x's rank, y has index's shape,
     *   index.shape[d] <= x.shape[d] for d != axis (PyTorch's rule), y[..i..] = x[..index[..i..]..]
     *   along the axis. index_select: (x, index (1-D)) -> (y), rows of x along the axis: y.shape is
     *   x's with shape[axis] = len(index) (embedding lookup: axis 0). Both copy bits.
     * scatter: (x, index, src) -> (y): y has x's shape; index and src have x's rank, index.shape[d]
     *   <= x.shape[d] for d != axis and index.shape[d] <= src.shape[d] for every d (src may be
     *   larger, as in PyTorch; only its elements at index's coordinates are read); y = x, then
     *   y[..index[..i..]..] = src[..i..]; of duplicate targets the last in row-major order of
     *   index wins (deterministic on every plugin). y may be the identical view of x (in place;
     *   any other overlap is rejected). scatter_add: the same, adding: each y element is x's
     *   value plus its matching src elements in increasing index position; CPU: accumulated in
     *   double, rounded once; GLES: an f32 accumulator in the same order (f16 rounded once per
     *   output element), no float atomics, so the same bits every run; i32 wraps. GLES computes
     *   scatter/scatter_add "owner computes": each y element scans its index row, O(numel(y) *
     *   index.shape[axis]) work in all.
     *   scatter with params->reduction (since 1.3; x, src, y f32, f16 or i32): like scatter_add,
     *   each y element is x's value combined with its matching src elements in increasing index
     *   position: TGL_SCATTER_MUL multiplies (i32 wraps), TGL_SCATTER_AMIN / TGL_SCATTER_AMAX take
     *   the minimum / maximum with the rules of the minimum/maximum ops (NaN propagates, -0 < +0);
     *   CPU in double rounded once, GLES in f32 rounded once. An element that no index reaches
     *   keeps x's value, bits included.
     * one_hot: (index) -> (y), y.shape = index.shape + (num_classes,), num_classes = y's last dim;
     *   1 at the index, 0 elsewhere, in any dtype of y.
     * set_rows (since 1.3; index_put along an axis, the KV-cache update): (x, index (K), src) -> (y):
     *   y has x's shape, src has x's shape with shape[axis] = K; y = x, then for k = 0 .. K-1 in
     *   order, y's row index[k] along the axis = src's row k (ggml_set_rows, torch's
     *   y.index_copy_(axis, index, src) made deterministic): of duplicate indices the LAST in the
     *   index's order wins, on every plugin. y may be the identical view of x (in place): then only
     *   the K rows are written, cost O(K * row) whatever x's size (a GPU also spends O(K^2) index
     *   comparisons for the duplicates); otherwise y = x is copied first (O(numel(x))). */
    TGL_OP_GATHER = 800,
    TGL_OP_INDEX_SELECT = 801,
    TGL_OP_SCATTER = 802,
    TGL_OP_SCATTER_ADD = 803,
    TGL_OP_ONE_HOT = 804,
    TGL_OP_SET_ROWS = 805, /* since 1.3 */

    /* Selection along one axis (tgl_sort_params); x of f32, f16 or i32, values of x's dtype,
     * indices i32 or (1.3) i64 (the element's position along the axis in x). Order: numeric; NaN sorts as
     * larger than any number, +inf included (last ascending, first descending); -0.0 and +0.0
     * compare equal (tied: they keep their order, and each keeps its sign: values are x's
     * elements bit for bit, NaN payloads too). Stable in both directions: equal keys (and NaNs)
     * keep their original order, lower index first, so descending is NOT the reverse of
     * ascending where keys tie (torch.sort(stable=True) does the same).
     * topk: (x) -> (values, indices), k = the outputs' size along the axis, 0 <= k <= n (k = 0:
     *   empty outputs; k > n: TGL_ERROR_SHAPE_MISMATCH); descending = 1 the k largest, largest
     *   first (torch.topk(largest=True, sorted=True)), descending = 0 the k smallest, smallest
     *   first; of tied keys the lower index comes first (torch.topk leaves that unspecified). The
     *   other dims of values equal x's; indices have values' shape.
     * sort: (x) -> (values, indices), both of x's shape. argsort: (x) -> (indices), x's shape.
     * A rank-0 x is one row of one element (axis -1 or 0). */
    TGL_OP_TOPK = 900,
    TGL_OP_SORT = 901,
    TGL_OP_ARGSORT = 902,

    /* Generation: () -> (y), or (x) -> (y) for tril/triu. y may be any view (any strides, also
     * negative) of any dtype but i64 (cast an i32 result); "index" below is the element's
     * row-major (logical) index in y.
     * arange: y is 1-D, its length n is the count; y[i] = start + i * step (tgl_arange_params;
     *   start, step finite, step != 0; y any dtype but bool).
     *   Integer y (i32, i16, i8, u8): start and step must be integers in [-2^63, 2^63) (else
     *     INVALID_ARGUMENT: use a float y and cast); y[i] is the exact integer start + i * step
     *     wrapped to y's dtype as cast wraps integers (two's complement, the low bits). Exact on
     *     every plugin.
     *   Float y: f32 arithmetic, as torch.arange on CUDA: y[i] = f32(start) + f32(i) * f32(step),
     *     f32(.) rounding to nearest even, the product and the sum each rounded (never fused into
     *     an fma), then rounded to f16/bf16 for those y. start and step must be within the f32
     *     range. The same bits on every plugin (GPUs that flush subnormal results may differ
     *     there). Unlike a double computation, large i or step lose precision as f32 does.
     * full: every element = value converted to y's dtype as cast converts a float (NaN/inf kept
     *   in float y; to integers truncated and saturated, NaN -> 0; to bool value != 0)
     *   (tgl_full_params). Exact.
     * eye: y of rank >= 2 (leading dims are a batch), y[..., i, j] = 1 if j - i == diagonal else
     *   0, in y's dtype (tgl_diagonal_params). Non-square allowed. Exact.
     * tril/triu: x of rank >= 2 (leading dims are a batch), y of x's shape and dtype (any dtype),
     *   y[..., i, j] = x[..., i, j] where j - i <= diagonal (tril) / >= diagonal (triu), else 0
     *   (tgl_diagonal_params). y may be the identical view of x (in place); any other overlap is
     *   an error. Bits are copied exactly (NaN payloads too).
     * random_uniform / random_normal: y f32, f16 or bf16; Philox4x32-10 keyed by seed, counter =
     *   offset + the element's index, so that the same seed gives the same numbers on every
     *   plugin and offset k continues the stream k elements further (tgl_random_params; the exact
     *   bit recipe is documented with the struct). */
    TGL_OP_ARANGE = 1000,
    TGL_OP_FULL = 1001,
    TGL_OP_EYE = 1002,
    TGL_OP_TRIL = 1003,
    TGL_OP_TRIU = 1004,
    TGL_OP_RANDOM_UNIFORM = 1005,
    TGL_OP_RANDOM_NORMAL = 1006,

    /* [conv family: ops 1100..1199] */
    /* Convolution (tgl_conv_params; every float operand one dtype, f32 or f16 storage with f32
     * accumulation; the CPU reference accumulates in double). Optional operands (?) are absent when
     * their buffer handle is 0. S = 1, 2, 3 spatial dims; g = params->groups.
     * convNd: (x (N, C_in, *in), w (C_out, C_in/g, *k), bias? (C_out)) -> (y (N, C_out, *out)),
     *   y[n, co, o] = act(bias[co] + sum_{ci in co's group, j} x[n, ci, o*stride - pad_begin +
     *   j*dilation] * w[co, ci - group start, j]); x outside [0, in) is 0 (zero padding).
     *   out = floor((in + pad_begin + pad_end - dilation*(k-1) - 1) / stride) + 1, which must be
     *   >= 1 when in + pads > 0 (else SHAPE_MISMATCH: the kernel is larger than the padded input).
     * conv_transposeNd: (x (N, C_in, *in), w (C_in, C_out/g, *k), bias? (C_out)) -> (y (N, C_out,
     *   *out)), the adjoint of convNd (PyTorch ConvTranspose): every x[n, ci, i] adds
     *   x * w[ci, co - group start, j] to y[n, co, i*stride - pad_begin + j*dilation] (positions
     *   outside [0, out) dropped); out = (in - 1)*stride - pad_begin - pad_end + dilation*(k-1) +
     *   output_padding + 1 (output_padding < max(stride, dilation), as PyTorch); padding_mode same
     *   is not accepted.
     * conv2d_backward_input: (dy (N, C_out, Ho, Wo), w (C_out, C_in/g, kH, kW)) -> (dx (N, C_in, H,
     *   W)): the gradient of conv2d with respect to x, for the conv2d params (stride, dilation,
     *   pads or same, groups, layout); dx's shape gives H, W (several input sizes give one output
     *   size) and conv2d of that shape must give dy's shape. No bias, activation none,
     *   output_padding 0.
     * conv2d_backward_weight: (x (N, C_in, H, W), dy (N, C_out, Ho, Wo)) -> (dw (C_out, C_in/g,
     *   kH, kW), db? (C_out)): dw = sum over n and positions of dy * the x element it multiplied;
     *   db[co] = sum of dy[:, co]; dw's shape gives the kernel size. Activation none.
     * layout TGL_CONV_LAYOUT_CHANNELS_LAST: x, y, dy and dx are (N, *spatial, C) (NLC, NHWC,
     *   NDHWC); the weight keeps the shape above (C_out, C_in/g, *k) in every layout (OHWI memory
     *   is that shape with strides (k*C_in/g, 1, ...), any strides being accepted).
     * The activation (conv, conv_transpose) applies to the biased f32 sum before the one rounding.
     * Outputs must not overlap inputs. */
    TGL_OP_CONV1D = 1100,
    TGL_OP_CONV2D = 1101,
    TGL_OP_CONV3D = 1102,
    TGL_OP_CONV_TRANSPOSE1D = 1103,
    TGL_OP_CONV_TRANSPOSE2D = 1104,
    TGL_OP_CONV2D_BACKWARD_INPUT = 1105,
    TGL_OP_CONV2D_BACKWARD_WEIGHT = 1106,

    /* [pool family: ops 1200..1299] */
    /* Pooling and upsampling over the spatial dims of x (N, C, *spatial), NCHW-style: dim 0 is the
     * batch, dim 1 the channels, dims 2.. the 1, 2 or 3 spatial dims; the rank of x (3, 4 or 5)
     * picks 1d, 2d or 3d (unbatched (C, *spatial) tensors: add a batch dim of 1). Every float
     * operand of one op has one dtype, f32 or f16 (f16 is storage: computed in f32 on the GPU, in
     * double on the CPU reference, rounded once at the store); indices are i32. N and C may be 0
     * (nothing is written); every spatial dim of every operand must be >= 1. Any strides.
     * max_pool: (x) -> (y, indices?) (tgl_pool_params; params required): y[n, c, o] = the max of
     *   x over the window o: positions o * stride - pad_begin + j * dilation, j in [0, kernel),
     *   per spatial dim; positions in the padding are skipped (as if -inf, never selected).
     *   Output size per dim (PyTorch): floor or, with ceil_mode, ceil of
     *   (in + pad_begin + pad_end - dilation * (kernel - 1) - 1) / stride, plus 1; with ceil_mode
     *   the last window must start inside the input or the left padding (else one fewer). y must
     *   have shape (N, C, out...) (every out >= 1). Ties: the first (in window order, row-major)
     *   largest element wins; a NaN in the window is the max (y is NaN; its index is that of the
     *   LAST NaN in window order, as PyTorch's `val > max || isnan(val)` rule gives). A window of
     *   -inf only gives -inf with the index of its first element inside the input. indices
     *   (optional, y's shape): the flat index into x's spatial dims of the max, (i0 * in1 + i1) *
     *   in2 + i2 (PyTorch's return_indices).
     * avg_pool: (x) -> (y) (tgl_pool_params, dilation must be 1): the sum over the window clipped
     *   to the input, divided by the number of window elements inside the input
     *   (count_include_pad = 0) or inside the padded input (count_include_pad = 1: the window
     *   clipped to [-pad_begin, in + pad_end) per dim, which is PyTorch's divisor with ceil_mode).
     * Padding: any pad_begin, pad_end >= 0 (since 1.3; ABI 1.0-1.2 took PyTorch's limits, at most
     *   half the dilated kernel, where every window holds an input element). Wider pads (ONNX
     *   allows them) can give windows with no input element: max_pool gives -inf there with
     *   index -1 (max_pool_backward skips it), avg_pool with count_include_pad = 0 gives
     *   0 / 0 = NaN, with count_include_pad = 1 gives 0 (the zeros of the padding).
     * global_max_pool / global_avg_pool: (x) -> (y): the max (NaN propagates) / the mean over all
     *   spatial dims of each (n, c); y is (N, C) or (N, C, 1, ..., 1) of x's rank
     *   (tgl_unary_params).
     * adaptive_avg_pool: (x) -> (y), y (N, C, out...) of x's rank, out from y's shape: per dim the
     *   window [floor(o * in / out), ceil((o + 1) * in / out)) (PyTorch), the mean over it
     *   (tgl_unary_params).
     * upsample_nearest: (x) -> (y) of x's rank (1d/2d/3d), out from y's shape
     *   (tgl_upsample_params): src = min(floor(dst * s), in - 1), computed in f32 as PyTorch does,
     *   with s = f32(in) / f32(out) (rounded once) or, where params->scales[d] > 0 (PyTorch's
     *   scale_factor), s = 1 / scales[d] in f32; then out must be floor(in * scales[d]).
     *   align_corners must be 0. Copies bits (exact).
     * upsample_bilinear: (x (N, C, H, W)) -> (y (N, C, OH, OW)) (tgl_upsample_params): PyTorch's
     *   bilinear: align_corners = 1: src = dst * (in - 1) / (out - 1) (0 when out = 1);
     *   align_corners = 0: src = max((dst + 0.5) * s - 0.5, 0), s = in / out or 1 / scales[d];
     *   i0 = floor(src), i1 = min(i0 + 1, in - 1), l = src - i0; y = the lerp of the 4 neighbours.
     * max_pool_backward: (dy (N, C, out...), indices (i32, dy's shape)) -> (dx (N, C, in...)): the
     *   same tgl_pool_params as the forward call; in comes from dx's shape and dy must have the
     *   forward's output shape. dx[p] = the sum of dy[o] over the outputs o whose window contains
     *   p and whose index is p (an index outside its own window contributes nothing). Gathered per
     *   dx element in row-major order of o (deterministic; no atomics).
     * avg_pool_backward: (dy) -> (dx) (tgl_pool_params of the forward): dx[p] = sum over the
     *   windows o containing p of dy[o] / divisor(o).
     * adaptive_avg_pool_backward: (dy (N, C, out...)) -> (dx (N, C, in...)): dx[p] = sum over the
     *   windows o containing p of dy[o] / (the window's element count) (tgl_unary_params). */
    TGL_OP_MAX_POOL = 1200,
    TGL_OP_AVG_POOL = 1201,
    TGL_OP_GLOBAL_MAX_POOL = 1202,
    TGL_OP_GLOBAL_AVG_POOL = 1203,
    TGL_OP_ADAPTIVE_AVG_POOL = 1204,
    TGL_OP_UPSAMPLE_NEAREST = 1205,
    TGL_OP_UPSAMPLE_BILINEAR = 1206,
    TGL_OP_MAX_POOL_BACKWARD = 1207,
    TGL_OP_AVG_POOL_BACKWARD = 1208,
    TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD = 1209,

    /* [attention family: ops 1300..1399] */
    /* Scaled dot-product attention. Every float operand of one op has q's dtype (f32 or f16;
     * f16 is storage, computed in f32 on the GPU, in double on the CPU reference), except lse,
     * which is f32. Shapes: q (B, Hq, Sq, D), k (B, Hkv, Skv, D), v (B, Hkv, Skv, Dv), D and Dv in
     * 1..256 (Dv may differ from D), Hkv >= 1 dividing Hq (grouped-query attention: q head h reads
     * kv head h / (Hq / Hkv)); every dim may be 0 where the result stays defined (B, Hq, Sq: empty
     * outputs; Skv = 0: every row is fully masked). Any strides on every operand.
     * attention: (q, k, v, mask?) -> (o (B, Hq, Sq, Dv), lse? (B, Hq, Sq) f32), with
     *   s[i, j] = scale * (q_i . k_j) + mask[b, h, i, j], and -inf where causal hides key j;
     *   o_i = sum_j softmax_j(s[i, :]) v_j; lse_i = log(sum_j exp(s[i, j])) (natural log).
     *   mask: broadcasting NumPy-style to (B, Hq, Sq, Skv); either additive, of q's dtype (-inf
     *   hides a key), or bool (PyTorch's boolean attn_mask: 1 = the key takes part, 0 = hidden,
     *   i.e. additive 0 / -inf).
     *   causal (tgl_attention_params): BOTTOM-RIGHT aligned (flash-attn's convention, what KV-cache
     *   decoding needs): query i sees key j iff j <= i + (Skv - Sq). With Sq == Skv that is the
     *   usual lower triangle; with Sq > Skv the first Sq - Skv rows see no key. PyTorch's
     *   is_causal (top-left, j <= i) is causal = 0 with a mask of 0 where j <= i and -inf above.
     *   A fully masked row (every s = -inf: by mask, by causal or Skv = 0) gives o = 0 and
     *   lse = -inf (PyTorch gives NaN). A NaN score gives a NaN row; a +inf score gives NaN
     *   (inf - inf) as in softmax. The GPU never materializes an Sq x Skv matrix (online softmax
     *   over key tiles; long key sequences with few query rows are split across workgroups and
     *   combined, as flash-decoding).
     * attention_backward: (q, k, v, o, do, lse, mask?) -> (dq, dk, dv): the gradients of the
     *   forward's o with respect to q, k and v for the upstream gradient do (B, Hq, Sq, Dv), same
     *   params; o and lse are the forward's outputs for these inputs. Computed as
     *   p[i, j] = exp(s[i, j] - lse_i) (0 where lse_i = -inf: a fully masked row has zero
     *   gradients), delta_i = sum_c do[i, c] o[i, c], dv_j = sum_i p[i, j] do_i,
     *   ds[i, j] = p[i, j] (do_i . v_j - delta_i), dq_i = scale sum_j ds[i, j] k_j,
     *   dk_j = scale sum_i ds[i, j] q_i; with GQA dk and dv sum over the Hq / Hkv q heads of their
     *   group. The mask gets no gradient. Deterministic: the same bits on every run (no float
     *   atomics). dq, dk, dv have the shapes of q, k, v. */
    TGL_OP_ATTENTION = 1300,
    TGL_OP_ATTENTION_BACKWARD = 1301,

    /* [sequence family: ops 1400..1499] */
    /* Sequence ops. Float operands of one op share one dtype (f32 or f16; f16 is storage, computed
     * in f32 on the GPU, in double on the CPU reference), except where said.
     * rope: (x (..., D), positions i32) -> (y, x's shape): rotary position embedding
     *   (tgl_rope_params). The last dim of x is the head dim D; positions broadcast NumPy-style
     *   (right-aligned) to x.shape[:-1], so for x (B, H, S, D) the sequence dim is rank - 2 and
     *   positions (S) serve every (b, h); (B, 1, S) gives per-batch positions. Of the first n_rot
     *   elements of each row, n_rot / 2 pairs are rotated, the rest copied: mode NORMAL (GPT-J,
     *   llama.cpp's default) pairs (x[2i], x[2i+1]), NEOX pairs (x[i], x[i + n_rot/2]); pair i
     *   (0 <= i < n_rot/2) turns by angle a_i = angle(pos, i) (see tgl_rope_params):
     *     y0 = m * (x0 cos a - x1 sin a), y1 = m * (x0 sin a + x1 cos a), m = the mscale.
     *   Accuracy: the GPU computes theta_i and pos * theta_i in f32 (as llama.cpp does) and cos/sin
     *   of that f32 angle with an exact argument reduction; the CPU reference in double. The angle
     *   alone carries an error of a few f32 ulp of |a| (0.008 rad at positions near 1e5).
     *   Options (since 1.3; docs/rope.md), inputs (x, positions, freq_factors?, cos?, sin?): an
     *   absent operand (buffer 0, or left out: 2 inputs as before 1.3) is off.
     *   freq_factors (n_rot/2) f32, any stride (Llama-3.1's rope_freqs, LongRoPE's short/long
     *     factors, ggml_rope_ext's c): theta_i is divided by freq_factors[i] (see tgl_rope_params);
     *     each factor finite and > 0 is the caller's contract (a 0 gives an infinite angle: NaN).
     *   cos, sin (max_positions, n_rot/2) of x's dtype, any strides, both or neither (ONNX's
     *     RotaryEmbedding cos_cache/sin_cache, HF's cos_cached[:, :n_rot/2]): a = the cached angle,
     *     cos a = cos[pos, i], sin a = sin[pos, i] (times m = attn_factor); no angle is computed,
     *     so scaling must be NONE and freq_factors absent. Every element of positions must lie in
     *     [0, max_positions): else TGL_ERROR_INDEX_OUT_OF_RANGE naming the first bad one (row-major),
     *     and nothing is written (GLES: raised at the next wait, as the index ops).
     *   Multi-section rope (tgl_rope_params.multi, M-RoPE of Qwen2-VL / Qwen3-VL, ggml's
     *     GGML_ROPE_TYPE_MROPE, IMROPE and VISION): positions gain a last dim of 1..4 position
     *     streams (t, h, w, e; ggml passes 4), its other dims broadcasting to x.shape[:-1]; pair i
     *     turns by the angle of the stream that params->sections choose (the rule is in
     *     tgl_rope_params). Combines with freq_factors and with the cache (cos[p_s, i]).
     * rope_backward: (dy, positions, freq_factors?, cos?, sin?) -> (dx): the gradient of rope, the
     *   rotation by -a_i (times m), with every option of rope:
     *   dx0 = m * (dy0 cos a + dy1 sin a), dx1 = m * (-dy0 sin a + dy1 cos a); copied part copied.
     * fft / ifft: (x (..., n, 2)) -> (y (..., n, 2)): discrete Fourier transform along the
     *   second-to-last dim of complex numbers stored as (re, im) in the last dim (size 2; any
     *   strides), no params (tgl_unary_params). fft: y_k = sum_j x_j exp(-2 pi i jk / n) (unscaled);
     *   ifft: y_k = (1/n) sum_j x_j exp(+2 pi i jk / n) (numpy's default "backward" norm).
     *   n a power of two: Stockham autosort (the GPU: radix-4 stages in shared memory while the
     *   row fits, 16 n bytes; else one global radix-4 pass per two stages); other n up to 4096:
     *   a direct DFT (O(n^2) work, one invocation per output); another n is
     *   TGL_ERROR_UNIMPLEMENTED. n = 0 or no rows: nothing to do. Twiddles exp(-2 pi i k/m) come
     *   from the exact turn fraction k/m (quadrant split), accurate to an ulp.
     * selective_scan: (u (B, D, L), delta (B, D, L), A (D, N), Bm (B, N, L), Cm (B, N, L),
     *   Dskip? (D), z? (B, D, L), delta_bias? (D)) -> (y (B, D, L), last_state? (B, D, N)), Mamba's
     *   selective_scan_ref (tgl_selective_scan_params): dt = delta + delta_bias (softplus(dt) with
     *   threshold 20 when delta_softplus), then for t = 0..L-1 with x_{-1} = 0:
     *     x_t[n] = exp(dt_t * A[d, n]) * x_{t-1}[n] + dt_t * Bm[b, n, t] * u_t,
     *     y_t = sum_n Cm[b, n, t] * x_t[n] + Dskip[d] * u_t, then y_t *= silu(z_t) when z is given;
     *   last_state = x_{L-1} (zeros when L = 0). N >= 1 is A's dim 1.
     *   Carried state (since 1.3, params->state_in = 1, for step-by-step decode): last_state is
     *   required and is read and written: on entry it holds x_{-1} (instead of 0), on return
     *   x_{L-1} (unchanged when L = 0). Running a sequence in two halves, the second with the first's
     *   last_state, gives the same y and last_state as one run (up to rounding: the same f32
     *   recurrence, so the same bits on the CPU).
     *   Float accuracy: an f32 recurrence on the GPU (error grows with L like a running sum). */
    TGL_OP_ROPE = 1400,
    TGL_OP_ROPE_BACKWARD = 1401,
    TGL_OP_FFT = 1402,
    TGL_OP_IFFT = 1403,
    TGL_OP_SELECTIVE_SCAN = 1404,
    /* sample: (logits (B, V) f32/f16) -> (token (B) i32, any strides), one token per row
     * (tgl_sample_params). Every plugin computes it exactly as below (f32 operations that are
     * correctly rounded everywhere, then integers), so the same seed gives the same token on every
     * plugin, bit for bit:
     *   key_j = logit_j (NaN counts as -inf); m = max key, i* = the first index holding it.
     *   temperature 0, top_k 1, or m = +-inf: token = i* (greedy).
     *   t_j = (key_j - m) * f32(1 / temperature) (f32, rounded); z_j = t_j * f32(log2 e);
     *   weight w_j = 0 unless z_j > -24; else Q = trunc(-z_j * 2^24), a = 2^31, and for each set
     *   bit 2^-k (k = 1..24) of the fraction Q mod 2^24: a = (a * c_k) >> 31 with the constant
     *   c_k = round(2^31 * 2^(-2^-k)); w_j = a >> (floor(Q / 2^24) + 7). So w ~ 2^24 * exp(t),
     *   the top token has w = 2^24 and tokens below 2^-24 of the top weigh 0.
     *   top_k (0 or >= V: off): tau = the k-th largest weight (counting repeats); every token with
     *   w >= tau is kept (ties at the threshold are all kept: more than k tokens may stay).
     *   top_p (1: off): P = ceil(top_p * 65536); need = ceil(P * S / 65536), S the sum of the kept
     *   weights; tau' = the largest weight value such that the kept weights >= tau' sum to >= need
     *   (the smallest set of the heaviest tokens holding >= top_p of the mass, ties at its edge
     *   all kept); tokens with w >= tau' stay.
     *   R = word 0 of Philox4x32-10 keyed by seed (as random_uniform) at counter offset + b (b the
     *   row); target = floor(R * total / 2^32) with total = the sum of the kept weights; the token
     *   is the first index j (in index order) whose running sum of kept weights exceeds target.
     *   V must be in 1..2^24 - 1 (when B > 0). */
    TGL_OP_SAMPLE = 1405,

    /* [grad family: ops 1500..1599] */
    /* Training gradients and losses. Float operands f32 or f16 (one dtype per op; f16 is storage,
     * computed in f32 on the GPU, double on the CPU reference), indices/targets i32 or (1.3) i64. Every
     * gradient has the shape of the forward input it belongs to; inputs and outputs may have any
     * strides (outputs not 0). dx overwrites (it is not accumulated into).
     * softmax_backward: (y, dy) -> (dx), y = softmax(scale * x) along params->axis
     *   (tgl_softmax_params as the forward, NULL: axis -1, scale 1): dx = scale * y * (dy - sum(dy * y)).
     * log_softmax_backward: (y, dy) -> (dx), y = log_softmax(scale * x):
     *   dx = scale * (dy - exp(y) * sum(dy)).
     * layer_norm_backward: (x, dy, gamma?) -> (dx, dgamma?, dbeta?) (tgl_layer_norm_params as the
     *   forward): mean and rstd = 1 / sqrt(var + eps) are recomputed from x (nothing saved from
     *   the forward); xhat = (x - mean) * rstd, g = dy * gamma (gamma absent: 1),
     *   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)) over each row; dgamma = sum over rows of
     *   dy * xhat, dbeta = sum over rows of dy (shape of the normalized dims; each optional output
     *   written when present; deterministic: fixed-order two-stage sums, no float atomics).
     * rms_norm_backward: (x, dy, gamma?) -> (dx, dgamma?): rstd = 1 / sqrt(mean(x^2) + eps),
     *   xhat = x * rstd, dx = rstd * (g - xhat * mean(g * xhat)), dgamma = sum over rows dy * xhat.
     * cumsum_backward: (dy) -> (dx) for y = cumsum(x) with the same tgl_scan_params: the scan of dy
     *   in the other direction (exclusive stays exclusive, reverse flips).
     * embedding_backward: (dy (..., D), index (...) i32 or i64) -> (dW (V, D)), V from dW's shape:
     *   dW[v] = sum of dy rows whose index is v, in increasing position order (deterministic; an
     *   f32 accumulator per element on the GPU, double on the CPU), 0 for unused rows
     *   (tgl_embedding_backward_params: padding_idx's row stays 0). index rank 0..7, dy's shape =
     *   index's shape + (D,). An index outside [0, V) is TGL_ERROR_INDEX_OUT_OF_RANGE as the
     *   Indexing ops report it (GLES: at the next wait) and nothing is written. Gather's gradient is
     *   scatter_add (TGL_OP_SCATTER_ADD into zeros); index_select's is embedding_backward along
     *   axis 0 (or scatter_add).
     * cross_entropy: (logits (N, C, d...), target (N, d...) i32 or i64) -> (loss)
     *   (tgl_cross_entropy_params; NULL: reduction mean, ignore_index -100, label_smoothing 0), as
     *   torch.nn.functional.cross_entropy with class-index targets: per position
     *   l = (1 - ls) * (lse - z[t]) + ls * (lse - mean_c(z[c])), lse the stable log-sum-exp over the
     *   C classes (dim 1; logits of rank 1 are one row (C) with a rank-0 target), 0 at positions
     *   whose target is ignore_index. loss: reduction none: the target's shape; sum: rank 0, the
     *   sum; mean: rank 0, the sum divided by the number of non-ignored positions (all ignored:
     *   0 / 0 = NaN, as PyTorch). A target outside [0, C) that is not ignore_index is
     *   TGL_ERROR_INDEX_OUT_OF_RANGE (as the Indexing ops: the CPU at run_op, GLES at the next wait)
     *   and nothing is written.
     * cross_entropy_backward: (logits, target, dloss (loss's shape)) -> (dlogits (logits' shape)):
     *   dlogits[c] = w * (softmax(z)[c] - (1 - ls) * [c == t] - ls / C), w = dloss at the position
     *   (none), dloss (sum), dloss / count (mean); 0 at ignored positions. */
    TGL_OP_SOFTMAX_BACKWARD = 1500,
    TGL_OP_LOG_SOFTMAX_BACKWARD = 1501,
    TGL_OP_LAYER_NORM_BACKWARD = 1502,
    TGL_OP_RMS_NORM_BACKWARD = 1503,
    TGL_OP_CUMSUM_BACKWARD = 1504,
    TGL_OP_EMBEDDING_BACKWARD = 1505,
    TGL_OP_CROSS_ENTROPY = 1506,
    TGL_OP_CROSS_ENTROPY_BACKWARD = 1507,
};

/* ---------------------------------------------------------------------------------------------
 * Op parameter structs. Each starts with struct_size = sizeof(the struct) (a plugin also takes
 * every older published size, see the published sizes below). Passing NULL params selects the
 * documented defaults. reserved fields must be 0.
 * ------------------------------------------------------------------------------------------- */
typedef struct tgl_unary_params {
    uint32_t struct_size;
    uint32_t reserved;
} tgl_unary_params;

enum { TGL_GELU_ERF = 0, TGL_GELU_TANH = 1 };
typedef struct tgl_gelu_params {
    uint32_t struct_size;
    uint32_t approximate; /* TGL_GELU_ERF (default, exact) or TGL_GELU_TANH (PyTorch 'tanh') */
} tgl_gelu_params;

typedef struct tgl_leaky_relu_params {
    uint32_t struct_size;
    float negative_slope; /* default (NULL params) 0.01 */
} tgl_leaky_relu_params;

/* elu and celu. */
typedef struct tgl_elu_params {
    uint32_t struct_size;
    float alpha; /* default 1; celu needs alpha != 0 */
} tgl_elu_params;

typedef struct tgl_softplus_params {
    uint32_t struct_size;
    float beta;      /* default 1; must be nonzero */
    float threshold; /* default 20: where beta * x > threshold, y = x */
    uint32_t reserved;
} tgl_softplus_params;

/* clamp: bounds as f32 (converted from the caller's dtype); -inf / +inf for "no bound". A NaN
 * bound is an error. Default (NULL params): no bounds. */
typedef struct tgl_clamp_params {
    uint32_t struct_size;
    float min;
    float max;
    uint32_t reserved;
} tgl_clamp_params;

typedef struct tgl_binary_params {
    uint32_t struct_size;
    uint32_t reserved;
} tgl_binary_params;

/* Reduce over axes[0..n_axes). Axes may be negative (counted from the end) and must not repeat.
 * n_axes == 0 reduces over every axis. keepdims != 0 keeps reduced axes as size 1; otherwise they
 * are removed (reducing every axis then gives a rank-0 output). NULL params: all axes, no keepdims. */
typedef struct tgl_reduce_params {
    uint32_t struct_size;
    uint32_t keepdims;
    uint32_t n_axes;
    int32_t axes[TGL_MAX_RANK];
    uint32_t reserved;
} tgl_reduce_params;

/* One axis (negative counts from the end); keepdims != 0 keeps it as size 1. NULL params: axis -1
 * (the last), no keepdims, select_last_index 0. */
typedef struct tgl_arg_reduce_params {
    uint32_t struct_size;
    int32_t axis;
    uint32_t keepdims;
    uint32_t reserved;
    /* since 1.3: 0 or 1 (ONNX ArgMax/ArgMin select_last_index): 1 picks the LAST index among equal
     * extremes, and the last NaN when the axis holds any; 0 (and the 1.0 size) the first. */
    uint32_t select_last_index;
} tgl_arg_reduce_params;

/* As tgl_reduce_params, plus the correction (Bessel's: 1, the default with NULL params; 0 for the
 * population variance). */
typedef struct tgl_var_params {
    uint32_t struct_size;
    uint32_t keepdims;
    uint32_t n_axes;
    int32_t axes[TGL_MAX_RANK];
    float correction;
} tgl_var_params;

/* As tgl_reduce_params, plus ord: 1 or 2 (default 2 with NULL params); other values are an error. */
typedef struct tgl_vector_norm_params {
    uint32_t struct_size;
    uint32_t keepdims;
    uint32_t n_axes;
    int32_t axes[TGL_MAX_RANK];
    float ord;
} tgl_vector_norm_params;

/* Along one axis (negative counts from the end). NULL params: axis -1, inclusive, forward. */
typedef struct tgl_scan_params {
    uint32_t struct_size;
    int32_t axis;
    uint32_t exclusive; /* 1: y[i] combines x[0..i) (x(i..n) when reverse); y[first] = 0 or 1 */
    uint32_t reverse;   /* 1: accumulate from the last element towards the first */
} tgl_scan_params;

/* softmax, log_softmax. NULL params: axis -1, scale 1. scale must be finite; reserved 0. */
typedef struct tgl_softmax_params {
    uint32_t struct_size;
    int32_t axis;
    float scale;
    uint32_t reserved;
} tgl_softmax_params;

/* layer_norm, rms_norm, add_layer_norm, add_rms_norm. NULL params: n_norm_dims 1, eps 1e-5. */
typedef struct tgl_layer_norm_params {
    uint32_t struct_size;
    uint32_t n_norm_dims; /* normalize over the last n_norm_dims dims (>= 1) */
    float eps;
    uint32_t reserved;
} tgl_layer_norm_params;

/* group_norm: C must be a multiple of num_groups. NULL params are an error (num_groups has no
 * default). */
typedef struct tgl_group_norm_params {
    uint32_t struct_size;
    uint32_t num_groups;
    float eps; /* PyTorch's default: 1e-5 */
    uint32_t reserved;
} tgl_group_norm_params;

/* batch_norm (inference): y = (x - mean) / sqrt(var + eps) * gamma + beta. NULL params: eps 1e-5. */
typedef struct tgl_batch_norm_params {
    uint32_t struct_size;
    float eps;
} tgl_batch_norm_params;

/* permute: y.shape[d] = x.shape[perm[d]] for d < rank; perm is a permutation of 0..rank-1 (an
 * entry may be negative, counted from the end; a repeated or out-of-range entry is
 * TGL_ERROR_AXIS_OUT_OF_RANGE). Entries at index >= rank are ignored. NULL params: an error. */
typedef struct tgl_permute_params {
    uint32_t struct_size;
    int32_t perm[TGL_MAX_RANK];
    uint32_t reserved;
} tgl_permute_params;

/* slice: Python's start:stop:step along axis (negative start/stop count from the end and are
 * clamped; INT64_MAX as stop means "to the end", INT64_MIN with a negative step "to the front";
 * INT64_MAX as start with a negative step: from the last element); step != 0, any other value
 * (INT64_MIN and INT64_MAX too). NULL params: an error. */
typedef struct tgl_slice_params {
    uint32_t struct_size;
    int32_t axis;
    int64_t start;
    int64_t stop;
    int64_t step;
} tgl_slice_params;

/* narrow: elements [start, start + length) along axis (start in [-n, n]; negative: from the end;
 * 0 <= length <= n - start). NULL params: an error. */
typedef struct tgl_narrow_params {
    uint32_t struct_size;
    int32_t axis;
    int64_t start;
    int64_t length;
} tgl_narrow_params;

/* One axis (negative counts from the end): concat, split, stack, gather, index_select, scatter,
 * scatter_add, set_rows. NULL params: axis 0, reduction TGL_SCATTER_REPLACE. */
enum { TGL_SCATTER_REPLACE = 0, TGL_SCATTER_MUL = 1, TGL_SCATTER_AMIN = 2, TGL_SCATTER_AMAX = 3 };
typedef struct tgl_axis_params {
    uint32_t struct_size;
    int32_t axis;
    /* since 1.3, scatter only (every other op requires 0): how scatter combines y's element with
     * the src elements that land on it (TGL_SCATTER_*; ONNX ScatterElements/ScatterND reduction
     * mul, min, max, with x's value included). See TGL_OP_SCATTER. */
    uint32_t reduction;
} tgl_axis_params;

/* flip: reverses axes[0..n_axes) (n_axes <= 8, negative axes from the end, no repeats). NULL
 * params: an error. */
typedef struct tgl_flip_params {
    uint32_t struct_size;
    uint32_t n_axes;
    int32_t axes[TGL_MAX_RANK];
} tgl_flip_params;

enum { TGL_PAD_CONSTANT = 0, TGL_PAD_REFLECT = 1, TGL_PAD_REPLICATE = 2 };
/* pad: y.shape[d] = before[d] + x.shape[d] + after[d] (>= 0) for d < rank; entries at index >= rank
 * are ignored. Negative pads crop. Reflect needs every positive pad < x.shape[d]; replicate needs
 * x.shape[d] > 0 where a pad is positive. NULL params: an error. */
typedef struct tgl_pad_params {
    uint32_t struct_size;
    uint32_t mode;  /* TGL_PAD_* */
    double value;   /* constant mode, converted to y's dtype as cast does */
    int64_t before[TGL_MAX_RANK];
    int64_t after[TGL_MAX_RANK];
} tgl_pad_params;

/* roll: shifts[i] along axes[i] (any int64; a repeated axis adds its shifts); n_axes == 0 rolls
 * the flattened tensor by shifts[0]. NULL params: an error. */
typedef struct tgl_roll_params {
    uint32_t struct_size;
    uint32_t n_axes;
    int32_t axes[TGL_MAX_RANK];
    int64_t shifts[TGL_MAX_RANK];
} tgl_roll_params;

/* topk, sort, argsort. axis: negative counts from the end. descending: 0 or 1; 1 = largest first
 * (topk's "largest"). reserved: 0. NULL params: axis -1, ascending (topk: descending = 1, largest). */
typedef struct tgl_sort_params {
    uint32_t struct_size;
    int32_t axis;
    uint32_t descending;
    uint32_t reserved;
} tgl_sort_params;

/* arange (see TGL_OP_ARANGE for the arithmetic). NULL params: start 0, step 1. */
typedef struct tgl_arange_params {
    uint32_t struct_size;
    uint32_t reserved;
    double start;
    double step;
} tgl_arange_params;

typedef struct tgl_full_params {
    uint32_t struct_size;
    uint32_t reserved;
    double value; /* converted to y's dtype as cast does; NULL params: 0 */
} tgl_full_params;

/* eye, tril, triu: diagonal 0 is the main one, > 0 above it, < 0 below. NULL params: 0. */
typedef struct tgl_diagonal_params {
    uint32_t struct_size;
    int32_t diagonal;
} tgl_diagonal_params;

/* random_uniform: [a, b) (default 0, 1); random_normal: mean a, standard deviation b (0, 1).
 * a and b finite; uniform needs a <= b and b - a finite in f32; normal needs b >= 0 (else
 * INVALID_ARGUMENT). NULL params: seed 0, offset 0 and the defaults above.
 * Recipe for the element of row-major index i: Philox4x32-10 (Random123's philox4x32, 10 rounds)
 * with key (seed & 0xffffffff, seed >> 32) and counter (c & 0xffffffff, c >> 32, 0, 0),
 * c = offset + i modulo 2^64, gives words w0..w3.
 *   uniform: u = (w0 >> 8) * 2^-24 in [0, 1); y = a + (b - a) * u in f32 arithmetic, each step
 *     rounded to nearest even (never fused into an fma), then rounded to y's dtype. The same bits
 *     on every plugin (GPUs that flush subnormal results may differ there). As in PyTorch, the
 *     rounding of the sum (or to f16/bf16) may give b itself.
 *   normal: u1 = ((w0 >> 8) + 1) * 2^-24 in (0, 1], u2 = (w1 >> 8) * 2^-24;
 *     y = a + b * sqrt(-2 ln u1) * cos(2 pi u2) (Box-Muller, one value per counter). The CPU
 *     plugin computes this in double and rounds once; GPU plugins compute in f32 (log, sqrt,
 *     cos are not correctly rounded there) and agree within a few f32 ulp, not bit for bit:
 *     |y_gpu - y_cpu| <= 2^-20 * (|a| + |b * z|), z the standard normal value (f16/bf16: one
 *     ulp of the format at that scale, 2^-10 / 2^-7). */
typedef struct tgl_random_params {
    uint32_t struct_size;
    uint32_t reserved;
    uint64_t seed;
    uint64_t offset;
    float a;
    float b;
} tgl_random_params;

/* C = alpha * op(A) @ op(B) + beta * C.
 *   A is (..., M, K), or (..., K, M) with transpose_a; B is (..., K, N), or (..., N, K) with
 *   transpose_b; both rank >= 2. Batch dims (all but the last two) broadcast NumPy-style; C is
 *   (broadcast batch..., M, N). When beta == 0, C is not read (NaN/garbage in C does not leak in).
 *   C must not overlap A or B. K == 0 gives C = beta * C. NULL params: alpha 1, beta 0, no
 *   transposes. */
typedef struct tgl_matmul_params {
    uint32_t struct_size;
    uint32_t transpose_a;
    uint32_t transpose_b;
    float alpha;
    float beta;
    uint32_t reserved;
} tgl_matmul_params;

/* Activation fused into an op's epilogue (conv, linear): applied in f32 to the biased result
 * before the one rounding to the output dtype, with the semantics of the unary op of that name. */
typedef uint32_t tgl_activation;
enum {
    TGL_ACTIVATION_NONE = 0,
    TGL_ACTIVATION_RELU = 1,
    TGL_ACTIVATION_GELU = 2,      /* erf form (TGL_OP_GELU with TGL_GELU_ERF) */
    TGL_ACTIVATION_GELU_TANH = 3, /* tanh approximation (TGL_GELU_TANH) */
    TGL_ACTIVATION_SILU = 4,
    TGL_ACTIVATION_COUNT_V1_0 = 5
};

/* [matmul family: params] */
/* linear, linear_qkv, grouped_linear, linear_int8. NULL params: no activation. */
typedef struct tgl_linear_params {
    uint32_t struct_size;
    tgl_activation activation; /* TGL_ACTIVATION_*, applied after the bias */
} tgl_linear_params;

/* linear_int4. NULL params: no activation, group_size 32. */
typedef struct tgl_linear_int4_params {
    uint32_t struct_size;
    tgl_activation activation;
    uint32_t group_size; /* 32 or 64: elements of K sharing one scale (and zero point) */
    uint32_t reserved;   /* 0 */
} tgl_linear_int4_params;

/* [conv family: params] */
enum { TGL_CONV_LAYOUT_CHANNELS_FIRST = 0, TGL_CONV_LAYOUT_CHANNELS_LAST = 1 };
enum { TGL_CONV_PADDING_EXPLICIT = 0, TGL_CONV_PADDING_SAME = 1 };
/* Every op of the conv family. Per-dim arrays hold the op's S spatial dims in order (D, H, W /
 * H, W / L), entries past S are ignored. stride >= 1, dilation >= 1, pads >= 0 (they may exceed
 * the kernel's reach: the outputs there see only zeros and the bias), output_padding >= 0 (conv
 * transpose only; 0 elsewhere). groups >= 1 divides C_in and C_out. padding_mode
 * TGL_CONV_PADDING_SAME (PyTorch padding='same'): stride must be 1, pad_begin/pad_end must be 0;
 * the total pad dilation*(k-1) is split with the smaller half at the begin side. activation: a
 * tgl_activation (conv and conv_transpose; the backward ops take none). reserved: 0.
 * NULL params: channels first, groups 1, no activation, explicit padding, stride 1, dilation 1,
 * pads 0, output_padding 0. */
typedef struct tgl_conv_params {
    uint32_t struct_size;
    uint32_t layout;       /* TGL_CONV_LAYOUT_* */
    uint32_t groups;
    tgl_activation activation;
    uint32_t padding_mode; /* TGL_CONV_PADDING_* */
    uint32_t reserved;
    int32_t stride[3];
    int32_t dilation[3];
    int32_t pad_begin[3];
    int32_t pad_end[3];
    int32_t output_padding[3];
    uint32_t reserved2;
} tgl_conv_params;

/* [pool family: params] */
/* max_pool, avg_pool and their backward ops. Entry d of each array is spatial dim d (dim 2 + d of
 * x); entries at d >= the number of spatial dims are ignored. kernel >= 1; stride 0 means the
 * kernel size (PyTorch's default), else >= 1; dilation 0 means 1, else >= 1 (avg_pool: 1 only);
 * pads >= 0, any size (see TGL_OP_MAX_POOL), pad_begin / pad_end per side (PyTorch's
 * symmetric padding p: both p). ceil_mode, count_include_pad: 0 or 1 (count_include_pad:
 * avg_pool only; PyTorch's default is 1). reserved: 0. NULL params: an error (the kernel size has
 * no default). */
typedef struct tgl_pool_params {
    uint32_t struct_size;
    uint32_t ceil_mode;
    uint32_t count_include_pad;
    uint32_t reserved0;
    int32_t kernel[3];
    int32_t stride[3];
    int32_t pad_begin[3];
    int32_t pad_end[3];
    int32_t dilation[3];
    uint32_t reserved1;
} tgl_pool_params;

/* upsample_nearest, upsample_bilinear. align_corners: 0 or 1 (bilinear only). scales[d] (spatial
 * dim d): 0 = derive the source step from the sizes (in / out), > 0 (finite) = PyTorch's
 * scale_factor (the step is 1 / scale; y's size must be floor(in * scale); ignored by bilinear
 * with align_corners). reserved: 0. NULL params: align_corners 0, scales from the sizes. */
typedef struct tgl_upsample_params {
    uint32_t struct_size;
    uint32_t align_corners;
    float scales[3];
    uint32_t reserved;
} tgl_upsample_params;

/* [attention family: params] */
/* attention, attention_backward. scale: the factor of q . k; 0 means 1 / sqrt(D) (D = q's last
 * dim); any other value must be finite. causal: 0 or 1 (bottom-right aligned, see
 * TGL_OP_ATTENTION). reserved: 0. NULL params: scale 1 / sqrt(D), not causal. */
typedef struct tgl_attention_params {
    uint32_t struct_size;
    uint32_t causal;
    float scale;
    uint32_t reserved;
} tgl_attention_params;

/* [sequence family: params] */
/* rope, rope_backward. NULL params: NORMAL mode, n_rot = D, theta_base 10000, no scaling,
 * attn_factor 1, single-stream positions. reserved must be 0.
 * Angle of pair i (0 <= i < n_rot/2) at position p (an i32, any sign):
 *   dims = n_rot (VISION: n_rot / 2); j = i (VISION: i's index within its section, below)
 *   base = theta_base; NTK_AWARE: base = theta_base * factor^(dims / (dims - 2)) (dims > 2)
 *   theta_i = base^(-2j / dims) / ff_i   (ff_i = freq_factors[i]; 1 without freq_factors)
 *   NONE, NTK_AWARE: a = p * theta_i, m = attn_factor
 *   LINEAR: a = (p * theta_i) / factor, m = attn_factor
 *   YARN (llama.cpp's rope_yarn / ggml_rope_yarn_corr_dims, with n_dims = dims, freq_scale =
 *     1 / factor): corr(b) = dims * ln(original_max_positions / (b * 2 pi)) / (2 ln theta_base);
 *     low = max(0, floor(corr(beta_fast))), high = min(dims - 1, ceil(corr(beta_slow)));
 *     ramp_i = 1 - clamp((i - low) / max(0.001, high - low), 0, 1); mix = ramp_i * ext_factor;
 *     e = p * theta_i; a = (e / factor) * (1 - mix) + e * mix;
 *     m = attn_factor * (ext_factor != 0 ? 1 + 0.1 * ln(factor) : 1).
 * (ggml: theta = theta_scale^i * p / ff[i], then rope_yarn; the same with freq_factors.)
 * factor > 0 and finite (used by LINEAR, NTK_AWARE and YARN; ignored by NONE); theta_base > 0
 * finite; YARN needs original_max_positions > 0, finite beta_fast, beta_slow, ext_factor;
 * attn_factor finite. n_rot: even, 2 <= n_rot <= D (0: D, which must then be even).
 * Multi-section rope (since 1.3; ggml_mrope_cache_init): multi != NONE takes positions (..., S)
 * with S = 1..4 streams; sections[4] (sum s = s0 + s1 + s2 + s3, 1 <= s <= 2^24) give pair i the
 * stream k(i) of sector c = i mod s, and p = positions[..., k(i)]:
 *   SECTIONS (ggml MROPE, Qwen2-VL): k = 0 if c < s0, 1 if c < s0 + s1, 2 if c < s0 + s1 + s2,
 *     else 3.
 *   INTERLEAVED (ggml IMROPE, Qwen3-VL): k = 1 if c mod 3 = 1 and c < 3 s1, else 2 if
 *     c mod 3 = 2 and c < 3 s2, else 0 if c mod 3 = 0 and c < 3 s0, else 3.
 *   VISION (ggml VISION, Qwen2-VL's vision encoder: with NEOX and n_rot = D): k as SECTIONS,
 *     j = c - (the first sector of k's section), dims = n_rot / 2.
 * Every stream some pair selects must exist (k < S). multi NONE needs sections all 0. */
enum { TGL_ROPE_NORMAL = 0, TGL_ROPE_NEOX = 1 };
enum { TGL_ROPE_SCALING_NONE = 0, TGL_ROPE_SCALING_LINEAR = 1, TGL_ROPE_SCALING_NTK_AWARE = 2,
       TGL_ROPE_SCALING_YARN = 3 };
enum { TGL_ROPE_MULTI_NONE = 0, TGL_ROPE_MULTI_SECTIONS = 1, TGL_ROPE_MULTI_INTERLEAVED = 2,
       TGL_ROPE_MULTI_VISION = 3 };
typedef struct tgl_rope_params {
    uint32_t struct_size;
    uint32_t mode;      /* TGL_ROPE_NORMAL (interleaved pairs) or TGL_ROPE_NEOX (half split) */
    uint32_t n_rot;     /* rotated dims (even); 0: all of D */
    uint32_t scaling;   /* TGL_ROPE_SCALING_* */
    float theta_base;   /* 10000 */
    float factor;       /* the context scaling factor (1) */
    uint32_t original_max_positions; /* YaRN: the training context (n_ctx_orig) */
    float beta_fast;    /* YaRN: 32 */
    float beta_slow;    /* YaRN: 1 */
    float ext_factor;   /* YaRN: extrapolation mix (1); 0 gives plain linear interpolation */
    float attn_factor;  /* magnitude scale of cos and sin (1) */
    uint32_t reserved;
    uint32_t multi;       /* since 1.3: TGL_ROPE_MULTI_* (0: one position stream) */
    uint32_t sections[4]; /* since 1.3: multi-section rope: pairs per section (t, h, w, e) */
} tgl_rope_params;

/* sample (see TGL_OP_SAMPLE): temperature (0: greedy), top_k (0: off), top_p (1: off), Philox
 * seed and offset. */
typedef struct tgl_sample_params {
    uint32_t struct_size;
    uint32_t top_k;
    float temperature;
    float top_p;
    uint64_t seed;
    uint64_t offset;
} tgl_sample_params;

/* selective_scan. NULL params: delta_softplus 0, state_in 0. reserved must be 0. */
typedef struct tgl_selective_scan_params {
    uint32_t struct_size;
    uint32_t delta_softplus; /* 1: dt = softplus(delta + delta_bias) (threshold 20), as Mamba */
    uint32_t reserved[2];
    uint32_t state_in;       /* since 1.3: 1: last_state holds the initial state (read, then written); 0 or 1 */
} tgl_selective_scan_params;

/* [grad family: params] */
/* embedding_backward. NULL params: no padding index. has_padding_idx 0 or 1; with 1, padding_idx
 * (in [0, V)) names the row of dW that stays 0. reserved 0. */
typedef struct tgl_embedding_backward_params {
    uint32_t struct_size;
    uint32_t has_padding_idx;
    int32_t padding_idx;
    uint32_t reserved;
} tgl_embedding_backward_params;

/* cross_entropy, cross_entropy_backward. NULL params: mean, ignore_index -100, label_smoothing 0.
 * label_smoothing in [0, 1]. */
enum { TGL_REDUCTION_NONE = 0, TGL_REDUCTION_MEAN = 1, TGL_REDUCTION_SUM = 2 };
typedef struct tgl_cross_entropy_params {
    uint32_t struct_size;
    uint32_t reduction; /* TGL_REDUCTION_* */
    int32_t ignore_index;
    float label_smoothing;
} tgl_cross_entropy_params;

/* ---------------------------------------------------------------------------------------------
 * Published sizes of the params structs: TGL_<STRUCT>_SIZE_V1_<minor> is the struct as the
 * minor that introduced it (or last appended to it) defined it. A plugin accepts every
 * published size of a struct as struct_size (TGL-P-9): a shorter one is a host built against an
 * older minor, and the fields it lacks take the defaults documented for NULL params. When a
 * minor appends a field, it adds a constant here (the older ones stay) and a pin below.
 * ------------------------------------------------------------------------------------------- */
#define TGL_UNARY_PARAMS_SIZE_V1_0              TGL_STRUCT_SIZE(tgl_unary_params, reserved)
#define TGL_GELU_PARAMS_SIZE_V1_0               TGL_STRUCT_SIZE(tgl_gelu_params, approximate)
#define TGL_LEAKY_RELU_PARAMS_SIZE_V1_0         TGL_STRUCT_SIZE(tgl_leaky_relu_params, negative_slope)
#define TGL_ELU_PARAMS_SIZE_V1_0                TGL_STRUCT_SIZE(tgl_elu_params, alpha)
#define TGL_SOFTPLUS_PARAMS_SIZE_V1_0           TGL_STRUCT_SIZE(tgl_softplus_params, reserved)
#define TGL_CLAMP_PARAMS_SIZE_V1_0              TGL_STRUCT_SIZE(tgl_clamp_params, reserved)
#define TGL_BINARY_PARAMS_SIZE_V1_0             TGL_STRUCT_SIZE(tgl_binary_params, reserved)
#define TGL_REDUCE_PARAMS_SIZE_V1_0             TGL_STRUCT_SIZE(tgl_reduce_params, reserved)
#define TGL_ARG_REDUCE_PARAMS_SIZE_V1_0         TGL_STRUCT_SIZE(tgl_arg_reduce_params, reserved)
#define TGL_ARG_REDUCE_PARAMS_SIZE_V1_3         TGL_STRUCT_SIZE(tgl_arg_reduce_params, select_last_index)
#define TGL_VAR_PARAMS_SIZE_V1_0                TGL_STRUCT_SIZE(tgl_var_params, correction)
#define TGL_VECTOR_NORM_PARAMS_SIZE_V1_0        TGL_STRUCT_SIZE(tgl_vector_norm_params, ord)
#define TGL_SCAN_PARAMS_SIZE_V1_0               TGL_STRUCT_SIZE(tgl_scan_params, reverse)
#define TGL_SOFTMAX_PARAMS_SIZE_V1_0            TGL_STRUCT_SIZE(tgl_softmax_params, reserved)
#define TGL_LAYER_NORM_PARAMS_SIZE_V1_0         TGL_STRUCT_SIZE(tgl_layer_norm_params, reserved)
#define TGL_GROUP_NORM_PARAMS_SIZE_V1_0         TGL_STRUCT_SIZE(tgl_group_norm_params, reserved)
#define TGL_BATCH_NORM_PARAMS_SIZE_V1_0         TGL_STRUCT_SIZE(tgl_batch_norm_params, eps)
#define TGL_PERMUTE_PARAMS_SIZE_V1_0            TGL_STRUCT_SIZE(tgl_permute_params, reserved)
#define TGL_SLICE_PARAMS_SIZE_V1_0              TGL_STRUCT_SIZE(tgl_slice_params, step)
#define TGL_NARROW_PARAMS_SIZE_V1_0             TGL_STRUCT_SIZE(tgl_narrow_params, length)
#define TGL_AXIS_PARAMS_SIZE_V1_0               TGL_STRUCT_SIZE(tgl_axis_params, axis)
#define TGL_AXIS_PARAMS_SIZE_V1_3               TGL_STRUCT_SIZE(tgl_axis_params, reduction)
#define TGL_FLIP_PARAMS_SIZE_V1_0               TGL_STRUCT_SIZE(tgl_flip_params, axes)
#define TGL_PAD_PARAMS_SIZE_V1_0                TGL_STRUCT_SIZE(tgl_pad_params, after)
#define TGL_ROLL_PARAMS_SIZE_V1_0               TGL_STRUCT_SIZE(tgl_roll_params, shifts)
#define TGL_SORT_PARAMS_SIZE_V1_0               TGL_STRUCT_SIZE(tgl_sort_params, reserved)
#define TGL_ARANGE_PARAMS_SIZE_V1_0             TGL_STRUCT_SIZE(tgl_arange_params, step)
#define TGL_FULL_PARAMS_SIZE_V1_0               TGL_STRUCT_SIZE(tgl_full_params, value)
#define TGL_DIAGONAL_PARAMS_SIZE_V1_0           TGL_STRUCT_SIZE(tgl_diagonal_params, diagonal)
#define TGL_RANDOM_PARAMS_SIZE_V1_0             TGL_STRUCT_SIZE(tgl_random_params, b)
#define TGL_MATMUL_PARAMS_SIZE_V1_0             TGL_STRUCT_SIZE(tgl_matmul_params, reserved)
#define TGL_LINEAR_PARAMS_SIZE_V1_1             TGL_STRUCT_SIZE(tgl_linear_params, activation)
#define TGL_LINEAR_INT4_PARAMS_SIZE_V1_1        TGL_STRUCT_SIZE(tgl_linear_int4_params, reserved)
#define TGL_CONV_PARAMS_SIZE_V1_1               TGL_STRUCT_SIZE(tgl_conv_params, reserved2)
#define TGL_POOL_PARAMS_SIZE_V1_1               TGL_STRUCT_SIZE(tgl_pool_params, reserved1)
#define TGL_UPSAMPLE_PARAMS_SIZE_V1_1           TGL_STRUCT_SIZE(tgl_upsample_params, reserved)
#define TGL_ATTENTION_PARAMS_SIZE_V1_1          TGL_STRUCT_SIZE(tgl_attention_params, reserved)
#define TGL_ROPE_PARAMS_SIZE_V1_1               TGL_STRUCT_SIZE(tgl_rope_params, reserved)
#define TGL_ROPE_PARAMS_SIZE_V1_3               TGL_STRUCT_SIZE(tgl_rope_params, sections)
#define TGL_SAMPLE_PARAMS_SIZE_V1_1             TGL_STRUCT_SIZE(tgl_sample_params, offset)
#define TGL_SELECTIVE_SCAN_PARAMS_SIZE_V1_1     TGL_STRUCT_SIZE(tgl_selective_scan_params, reserved)
#define TGL_SELECTIVE_SCAN_PARAMS_SIZE_V1_3     TGL_STRUCT_SIZE(tgl_selective_scan_params, state_in)
#define TGL_EMBEDDING_BACKWARD_PARAMS_SIZE_V1_1 TGL_STRUCT_SIZE(tgl_embedding_backward_params, reserved)
#define TGL_CROSS_ENTROPY_PARAMS_SIZE_V1_1      TGL_STRUCT_SIZE(tgl_cross_entropy_params, label_smoothing)

/* ---------------------------------------------------------------------------------------------
 * Layout pins of the params structs (every target). A change here is an ABI break.
 * ------------------------------------------------------------------------------------------- */
TGL_STATIC_ASSERT(sizeof(tgl_unary_params) == 8, "tgl_unary_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_gelu_params) == 8, "tgl_gelu_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_gelu_params, approximate) == 4, "tgl_gelu_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_binary_params) == 8, "tgl_binary_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_leaky_relu_params) == 8, "tgl_leaky_relu_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_leaky_relu_params, negative_slope) == 4, "tgl_leaky_relu_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_elu_params) == 8, "tgl_elu_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_elu_params, alpha) == 4, "tgl_elu_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_softplus_params) == 16, "tgl_softplus_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_softplus_params, threshold) == 8, "tgl_softplus_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_clamp_params) == 16, "tgl_clamp_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_clamp_params, max) == 8, "tgl_clamp_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_reduce_params) == 48, "tgl_reduce_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_reduce_params, n_axes) == 8, "tgl_reduce_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_reduce_params, axes) == 12, "tgl_reduce_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_arg_reduce_params) == 20, "tgl_arg_reduce_params layout");
TGL_STATIC_ASSERT(TGL_ARG_REDUCE_PARAMS_SIZE_V1_0 == 16, "tgl_arg_reduce_params v1.0 size");
TGL_STATIC_ASSERT(offsetof(tgl_arg_reduce_params, keepdims) == 8, "tgl_arg_reduce_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_var_params) == 48, "tgl_var_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_var_params, correction) == 44, "tgl_var_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_vector_norm_params) == 48, "tgl_vector_norm_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_vector_norm_params, ord) == 44, "tgl_vector_norm_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_scan_params) == 16, "tgl_scan_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_scan_params, reverse) == 12, "tgl_scan_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_softmax_params) == 16, "tgl_softmax_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_layer_norm_params) == 16, "tgl_layer_norm_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_layer_norm_params, eps) == 8, "tgl_layer_norm_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_group_norm_params) == 16, "tgl_group_norm_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_batch_norm_params) == 8, "tgl_batch_norm_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_permute_params) == 40, "tgl_permute_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_slice_params) == 32, "tgl_slice_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_slice_params, start) == 8, "tgl_slice_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_narrow_params) == 24, "tgl_narrow_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_axis_params) == 12, "tgl_axis_params layout");
TGL_STATIC_ASSERT(TGL_AXIS_PARAMS_SIZE_V1_0 == 8, "tgl_axis_params v1.0 size");
TGL_STATIC_ASSERT(sizeof(tgl_flip_params) == 40, "tgl_flip_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_pad_params) == 144, "tgl_pad_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_pad_params, value) == 8, "tgl_pad_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_pad_params, after) == 80, "tgl_pad_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_roll_params) == 104, "tgl_roll_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_roll_params, shifts) == 40, "tgl_roll_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_sort_params) == 16, "tgl_sort_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_arange_params) == 24, "tgl_arange_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_full_params) == 16, "tgl_full_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_diagonal_params) == 8, "tgl_diagonal_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_random_params) == 32, "tgl_random_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_random_params, a) == 24, "tgl_random_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_matmul_params) == 24, "tgl_matmul_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_matmul_params, alpha) == 12, "tgl_matmul_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_matmul_params, beta) == 16, "tgl_matmul_params layout");
/* [matmul family: layout pins] */
TGL_STATIC_ASSERT(sizeof(tgl_linear_params) == 8, "tgl_linear_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_linear_params, activation) == 4, "tgl_linear_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_linear_int4_params) == 16, "tgl_linear_int4_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_linear_int4_params, group_size) == 8, "tgl_linear_int4_params layout");
/* [conv family: layout pins] */
TGL_STATIC_ASSERT(sizeof(tgl_conv_params) == 88, "tgl_conv_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_conv_params, stride) == 24, "tgl_conv_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_conv_params, output_padding) == 72, "tgl_conv_params layout");
/* [pool family: layout pins] */
TGL_STATIC_ASSERT(sizeof(tgl_pool_params) == 80, "tgl_pool_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_pool_params, kernel) == 16, "tgl_pool_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_pool_params, dilation) == 64, "tgl_pool_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_upsample_params) == 24, "tgl_upsample_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_upsample_params, scales) == 8, "tgl_upsample_params layout");
/* [attention family: layout pins] */
TGL_STATIC_ASSERT(sizeof(tgl_attention_params) == 16, "tgl_attention_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_attention_params, scale) == 8, "tgl_attention_params layout");
/* [sequence family: layout pins] */
TGL_STATIC_ASSERT(sizeof(tgl_rope_params) == 68, "tgl_rope_params layout");
TGL_STATIC_ASSERT(TGL_ROPE_PARAMS_SIZE_V1_1 == 48, "tgl_rope_params v1.1 size");
TGL_STATIC_ASSERT(offsetof(tgl_rope_params, sections) == 52, "tgl_rope_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_rope_params, theta_base) == 16, "tgl_rope_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_rope_params, attn_factor) == 40, "tgl_rope_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_selective_scan_params) == 20, "tgl_selective_scan_params layout");
TGL_STATIC_ASSERT(TGL_SELECTIVE_SCAN_PARAMS_SIZE_V1_1 == 16, "tgl_selective_scan_params v1.1 size");
TGL_STATIC_ASSERT(sizeof(tgl_sample_params) == 32, "tgl_sample_params layout");
/* [grad family: layout pins] */
TGL_STATIC_ASSERT(sizeof(tgl_embedding_backward_params) == 16, "tgl_embedding_backward_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_embedding_backward_params, padding_idx) == 8, "tgl_embedding_backward_params layout");
TGL_STATIC_ASSERT(sizeof(tgl_cross_entropy_params) == 16, "tgl_cross_entropy_params layout");
TGL_STATIC_ASSERT(offsetof(tgl_cross_entropy_params, label_smoothing) == 12, "tgl_cross_entropy_params layout");
/* Every published size is the struct's size through its last field, and no struct has tail padding:
 * the same sizes and offsets on LP64, ILP32 (i386, armhf) and LLP64 targets. */
TGL_STATIC_ASSERT(sizeof(tgl_unary_params) == TGL_UNARY_PARAMS_SIZE_V1_0, "tgl_unary_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_gelu_params) == TGL_GELU_PARAMS_SIZE_V1_0, "tgl_gelu_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_leaky_relu_params) == TGL_LEAKY_RELU_PARAMS_SIZE_V1_0, "tgl_leaky_relu_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_elu_params) == TGL_ELU_PARAMS_SIZE_V1_0, "tgl_elu_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_softplus_params) == TGL_SOFTPLUS_PARAMS_SIZE_V1_0, "tgl_softplus_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_clamp_params) == TGL_CLAMP_PARAMS_SIZE_V1_0, "tgl_clamp_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_binary_params) == TGL_BINARY_PARAMS_SIZE_V1_0, "tgl_binary_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_reduce_params) == TGL_REDUCE_PARAMS_SIZE_V1_0, "tgl_reduce_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_arg_reduce_params) == TGL_ARG_REDUCE_PARAMS_SIZE_V1_3, "tgl_arg_reduce_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_var_params) == TGL_VAR_PARAMS_SIZE_V1_0, "tgl_var_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_vector_norm_params) == TGL_VECTOR_NORM_PARAMS_SIZE_V1_0, "tgl_vector_norm_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_scan_params) == TGL_SCAN_PARAMS_SIZE_V1_0, "tgl_scan_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_softmax_params) == TGL_SOFTMAX_PARAMS_SIZE_V1_0, "tgl_softmax_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_layer_norm_params) == TGL_LAYER_NORM_PARAMS_SIZE_V1_0, "tgl_layer_norm_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_group_norm_params) == TGL_GROUP_NORM_PARAMS_SIZE_V1_0, "tgl_group_norm_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_batch_norm_params) == TGL_BATCH_NORM_PARAMS_SIZE_V1_0, "tgl_batch_norm_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_permute_params) == TGL_PERMUTE_PARAMS_SIZE_V1_0, "tgl_permute_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_slice_params) == TGL_SLICE_PARAMS_SIZE_V1_0, "tgl_slice_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_narrow_params) == TGL_NARROW_PARAMS_SIZE_V1_0, "tgl_narrow_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_axis_params) == TGL_AXIS_PARAMS_SIZE_V1_3, "tgl_axis_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_flip_params) == TGL_FLIP_PARAMS_SIZE_V1_0, "tgl_flip_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_pad_params) == TGL_PAD_PARAMS_SIZE_V1_0, "tgl_pad_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_roll_params) == TGL_ROLL_PARAMS_SIZE_V1_0, "tgl_roll_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_sort_params) == TGL_SORT_PARAMS_SIZE_V1_0, "tgl_sort_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_arange_params) == TGL_ARANGE_PARAMS_SIZE_V1_0, "tgl_arange_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_full_params) == TGL_FULL_PARAMS_SIZE_V1_0, "tgl_full_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_diagonal_params) == TGL_DIAGONAL_PARAMS_SIZE_V1_0, "tgl_diagonal_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_random_params) == TGL_RANDOM_PARAMS_SIZE_V1_0, "tgl_random_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_matmul_params) == TGL_MATMUL_PARAMS_SIZE_V1_0, "tgl_matmul_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_linear_params) == TGL_LINEAR_PARAMS_SIZE_V1_1, "tgl_linear_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_linear_int4_params) == TGL_LINEAR_INT4_PARAMS_SIZE_V1_1, "tgl_linear_int4_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_conv_params) == TGL_CONV_PARAMS_SIZE_V1_1, "tgl_conv_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_pool_params) == TGL_POOL_PARAMS_SIZE_V1_1, "tgl_pool_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_upsample_params) == TGL_UPSAMPLE_PARAMS_SIZE_V1_1, "tgl_upsample_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_attention_params) == TGL_ATTENTION_PARAMS_SIZE_V1_1, "tgl_attention_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_rope_params) == TGL_ROPE_PARAMS_SIZE_V1_3, "tgl_rope_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_sample_params) == TGL_SAMPLE_PARAMS_SIZE_V1_1, "tgl_sample_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_selective_scan_params) == TGL_SELECTIVE_SCAN_PARAMS_SIZE_V1_3, "tgl_selective_scan_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_embedding_backward_params) == TGL_EMBEDDING_BACKWARD_PARAMS_SIZE_V1_1, "tgl_embedding_backward_params has no tail padding");
TGL_STATIC_ASSERT(sizeof(tgl_cross_entropy_params) == TGL_CROSS_ENTROPY_PARAMS_SIZE_V1_1, "tgl_cross_entropy_params has no tail padding");

#endif /* TENSORGL_OPS_H */
