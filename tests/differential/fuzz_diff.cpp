// Random cases for every op of the catalogue. Each op has a seed call (dtypes, params, operand
// shapes; drawn at random where simple rules allow: elementwise, reductions, layout, norms ...);
// each case then gives every operand a random layout of its logical shape (permuted, stepped,
// negative, stride 0, padded, all mixed), random values, random legal params, and in about a third
// of the cases special values in the float inputs (NaN, +-inf, +-0, subnormals, +-max). The subject
// must match the reference within the op's tolerance, NaN where NaN, infinities with their sign.
// Each case draws everything from its own stream, so TGL_TEST_SEED and the case name replay it.
// TGL_FUZZ_DIFF_CASES=N runs N cases per op (default kDefaultPerOp) for a long run.
#include "diff.h"
#include "op_catalogue.h"

#include <algorithm>
#include <cfloat>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>

namespace diff {
namespace {

constexpr int kDefaultPerOp = 3;

int cases_per_op() {
    const char* v = std::getenv("TGL_FUZZ_DIFF_CASES");
    if (!v || !*v) return kDefaultPerOp;
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (*end || n < 1 || n > 100000) {
        std::fprintf(stderr, "TGL_FUZZ_DIFF_CASES='%s': expected a count in 1..100000; using %d\n", v, kDefaultPerOp);
        return kDefaultPerOp;
    }
    return int(n);
}

Shape random_shape(Rng& rng, int min_rank, int max_rank, int64_t max_numel) {
    while (true) {
        Shape s(static_cast<size_t>(rng.integer(min_rank, max_rank)));
        for (auto& d : s) d = rng.pick(std::vector<int64_t>{1, 1, 2, 3, 5, 7, 13});
        if (numel(s) <= max_numel) return s;
    }
}

// A suffix of `full` with some dims set to 1 (an operand that broadcasts to `full`).
Shape broadcastable(const Shape& full, Rng& rng) {
    Shape s(full.begin() + ptrdiff_t(rng.integer(0, int64_t(full.size()))), full.end());
    for (auto& d : s)
        if (rng.chance(0.25)) d = 1;
    return s;
}

View random_view(const Shape& s, Rng& rng, bool input) {
    const Kind kinds[] = {Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Broadcast,
                          Kind::Padded,     Kind::Mixed,    Kind::Mixed};
    return view_of(s, kinds[rng.integer(0, 7)], rng, input);
}

// ---- The seed calls --------------------------------------------------------------------------

// What an operand's values are.
enum class Vals {
    Real,   // uniform in [lo, hi) (float dtypes; special values mixed in by the case)
    Index,  // integers in [0, n) (n = hi)
    Any,    // any value of the dtype: floats in [lo, hi), integers over the dtype's range, bools 0/1
    Small,  // small integers in [lo, hi] in any dtype (ties and equalities for predicates)
};

struct Arg {
    tgl_dtype dt = F32;
    Shape shape;
    Vals vals = Vals::Real;
    double lo = -1, hi = 1;
    bool absent = false;
    bool plain = false;  // no special values in this operand (see plain())
    bool no_stride0 = false;  // a view without stride-0 dims (no value repeated along a dim)
};

Arg real(Shape s, double lo = -1, double hi = 1, tgl_dtype dt = F32) { return {dt, std::move(s), Vals::Real, lo, hi}; }
Arg index_arg(Shape s, int64_t n) { return {I32, std::move(s), Vals::Index, 0, double(n)}; }
Arg any_arg(Shape s, tgl_dtype dt) { return {dt, std::move(s), Vals::Any, -2, 2}; }
// Small integers in [lo, hi], within dt's range (u8 and bool have no negative values, bool no 2).
Arg small_arg(Shape s, tgl_dtype dt, int lo, int hi) {
    if (dt == TGL_DTYPE_U8 || dt == TGL_DTYPE_BOOL) lo = std::max(lo, 0);
    if (dt == TGL_DTYPE_BOOL) hi = std::min(hi, 1);
    return {dt, std::move(s), Vals::Small, double(lo), double(hi)};
}
Arg none() { Arg a; a.absent = true; return a; }
Arg out(Shape s, tgl_dtype dt = F32) { return {dt, std::move(s), Vals::Real, 0, 0}; }
// An operand that gets no special values, where the two plugins legitimately differ on them (the
// caller says why).
Arg plain(Arg a) {
    a.plain = true;
    return a;
}
Arg maybe(Arg a, Rng& rng) { return rng.chance(0.3) ? none() : a; }  // an optional operand

// One drawn call of an op, before layouts and values.
struct Seed {
    std::vector<uint8_t> params;  // empty: NULL params
    std::vector<Arg> ins, outs;
    double tol = tol::kElementwise;
    CompareMode mode = CompareMode::Nmse;
    // Values near the f32 maximum are left out of the float inputs: the op sums, multiplies or
    // squares its inputs, which overflows in f32 on the GPU but not in the reference's double.
    bool no_max = false;
    bool finite = false;  // no NaN or +-inf either (see the FFT)
    // No subnormals (nor FLT_MIN): a running product of them underflows to 0 in f32 (then
    // 0 * inf = NaN) but not in the reference's double (prod, cumprod).
    bool no_subnormal = false;
    std::string what{};  // (initialised: aggregate initialisers above stop before it)
};

template <class P> std::vector<uint8_t> P_(P p) {
    p.struct_size = sizeof p;
    return param_bytes(p);
}

tgl_dtype pick_dtype(Rng& rng, std::vector<tgl_dtype> v) { return rng.pick(v); }
const std::vector<tgl_dtype> kAll = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32,
                                     TGL_DTYPE_I8,  TGL_DTYPE_U8,  TGL_DTYPE_BOOL};
const std::vector<tgl_dtype> kCompared = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_I32, TGL_DTYPE_I8,
                                          TGL_DTYPE_U8,  TGL_DTYPE_BOOL};  // comparisons: no bf16
const std::vector<tgl_dtype> kMasks = {TGL_DTYPE_BOOL, TGL_DTYPE_U8};

constexpr double kTrans = tol::kTranscendental;
constexpr double kNorm = 1e-5;       // normalisation, scans, pools, losses: f32 vs double statistics
constexpr double kDot = tol::kMatmul;  // dot products: matmul family, conv, attention, selective scan

// Elementwise unary: (x) -> (y), any shape; params and value range per op.
Seed unary(Rng& rng, double lo, double hi, double tol, std::vector<uint8_t> params = {}) {
    Shape s = random_shape(rng, 0, 6, 2000);
    Seed c{std::move(params), {real(s, lo, hi)}, {out(s)}, tol};
    return c;
}
// Elementwise binary with broadcasting.
Seed binary(Rng& rng, Arg a, Arg b, Arg y, double tol) {
    Shape ys = random_shape(rng, 0, 6, 2000);
    a.shape = broadcastable(ys, rng);
    b.shape = broadcastable(ys, rng);
    y.shape = broadcast_shapes(a.shape, b.shape);
    return Seed{{}, {a, b}, {y}, tol};
}

// Reduction params over random axes of rank r: the output shape with keepdims.
template <class P> Shape reduce_axes(P& p, const Shape& xs, Rng& rng) {
    const int r = int(xs.size());
    p.keepdims = rng.chance(0.5);
    std::vector<bool> red(size_t(r), false);
    for (int k = 0; k < r; ++k)
        if (rng.chance(0.4)) {
            p.axes[p.n_axes++] = rng.chance(0.5) ? k : k - r;
            red[size_t(k)] = true;
        }
    std::shuffle(p.axes, p.axes + p.n_axes, rng.engine());
    if (p.n_axes == 0) std::fill(red.begin(), red.end(), true);
    Shape ys;
    for (int k = 0; k < r; ++k) {
        if (!red[size_t(k)]) ys.push_back(xs[size_t(k)]);
        else if (p.keepdims) ys.push_back(1);
    }
    return ys;
}

template <class P> Seed reduction(Rng& rng, P p, Arg x, tgl_dtype ydt, double tol, bool empty_ok = true) {
    x.shape = random_shape(rng, 0, 6, 3000);
    if (empty_ok && rng.chance(0.1) && !x.shape.empty()) x.shape[size_t(rng.integer(0, int64_t(x.shape.size()) - 1))] = 0;
    Shape ys = reduce_axes(p, x.shape, rng);
    return Seed{P_(p), {x}, {out(ys, ydt)}, tol};
}

int axis_of(Rng& rng, int rank) {  // a random axis, negative half of the time
    int a = int(rng.integer(0, rank - 1));
    return rng.chance(0.5) ? a - rank : a;
}
size_t pos(int axis, size_t rank) { return size_t(axis < 0 ? axis + int(rank) : axis); }

tgl_activation activation(Rng& rng) { return tgl_activation(rng.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1)); }

struct OpFuzz {
    tgl_op op;
    std::function<Seed(Rng&)> draw;
    // Instead of draw: a case run and checked by another file's harness (gguf_diff.cpp's raw
    // operands for the GGUF block dtypes, which Arg's element storage cannot hold).
    std::function<void(Rng&)> custom = nullptr;
};

// Convolution output size (PyTorch's).
int64_t conv_out(int64_t in, int k, int s, int d, int pb, int pe) { return (in + pb + pe - d * (k - 1) - 1) / s + 1; }

// A conv call of S spatial dims: (x, w, bias?) -> y, or a transposed one.
Seed conv(Rng& rng, int S, bool transposed) {
    tgl_conv_params p{};
    const int64_t N = rng.integer(1, 2), g = rng.integer(1, 2);
    const int64_t ci = g * rng.integer(1, 3), co = g * rng.integer(1, 3);
    p.groups = uint32_t(g);
    p.activation = transposed ? tgl_activation(TGL_ACTIVATION_NONE) : activation(rng);
    Shape xs{N, ci}, ws{transposed ? ci : co, transposed ? co / g : ci / g}, ys{N, co};
    for (int d = 0; d < S; ++d) {
        const int k = int(rng.integer(1, 3));
        p.stride[d] = int(rng.integer(1, 2));
        p.dilation[d] = int(rng.integer(1, 2));
        p.pad_begin[d] = int(rng.integer(0, 1));
        p.pad_end[d] = int(rng.integer(0, 1));
        int64_t in = rng.integer(S == 3 ? 2 : 3, S == 3 ? 5 : 9);
        if (transposed) {
            p.output_padding[d] = int(rng.integer(0, std::max(p.stride[d], p.dilation[d]) - 1));
            ys.push_back((in - 1) * p.stride[d] - p.pad_begin[d] - p.pad_end[d] + p.dilation[d] * (k - 1) +
                         p.output_padding[d] + 1);
        } else {
            in = std::max<int64_t>(in, p.dilation[d] * (k - 1) + 1);
            ys.push_back(conv_out(in, k, p.stride[d], p.dilation[d], p.pad_begin[d], p.pad_end[d]));
        }
        xs.push_back(in);
        ws.push_back(k);
    }
    // The weight gets no special values: zero padding (and a transposed conv's taps past the input)
    // times an inf or NaN weight is NaN on GLES (an implicit GEMM over zero-filled x) but skipped by
    // the CPU plugin (it adds in-range taps only). Which is right is open (reported): the header says
    // "x outside [0, in) is 0", which IEEE makes NaN, PyTorch's im2col too.
    return Seed{P_(p), {real(xs), plain(real(ws)), maybe(real({co}), rng)}, {out(ys)}, kDot, CompareMode::Nmse, true};
}

// A pool call over S spatial dims: params and the in/out spatial shapes.
struct PoolCall {
    tgl_pool_params p{};
    Shape xs, ys;
};
PoolCall pool(Rng& rng, bool avg) {
    PoolCall c;
    const int S = int(rng.integer(1, 3));
    c.xs = {rng.integer(1, 2), rng.integer(1, 3)};
    c.ys = c.xs;
    c.p.count_include_pad = avg && rng.chance(0.5);
    for (int d = 0; d < S; ++d) {
        const int k = int(rng.integer(1, 3));
        c.p.kernel[d] = k;
        c.p.stride[d] = int(rng.integer(1, 2));
        c.p.dilation[d] = avg ? 1 : int(rng.integer(1, 2));
        const int maxpad = avg ? k / 2 : (c.p.dilation[d] * (k - 1) + 1) / 2;
        c.p.pad_begin[d] = int(rng.integer(0, maxpad));
        c.p.pad_end[d] = int(rng.integer(0, maxpad));
        const int64_t in = rng.integer(c.p.dilation[d] * (k - 1) + 1, S == 3 ? 5 : 9);
        c.xs.push_back(in);
        c.ys.push_back(conv_out(in, k, c.p.stride[d], c.p.dilation[d], c.p.pad_begin[d], c.p.pad_end[d]));
    }
    return c;
}

// (N, C, spatial...) for global/adaptive pools and upsampling: x dims and an output size per dim.
Shape pool_input(Rng& rng, int S) {
    Shape s{rng.integer(1, 2), rng.integer(1, 3)};
    for (int d = 0; d < S; ++d) s.push_back(rng.integer(1, S == 3 ? 5 : 9));
    return s;
}

const std::vector<OpFuzz>& op_fuzzers() {
    static const std::vector<OpFuzz> ops = [] {
        std::vector<OpFuzz> v;
        auto add = [&](tgl_op op, std::function<Seed(Rng&)> f) { v.push_back({op, std::move(f)}); };
        // -- unary
        struct U { tgl_op op; double lo, hi, tol; };
        for (U u : {U{TGL_OP_ABS, -150, 150, tol::kElementwise}, U{TGL_OP_NEG, -150, 150, tol::kElementwise},
                    U{TGL_OP_RELU, -150, 150, tol::kElementwise}, U{TGL_OP_SIGMOID, -20, 20, kTrans},
                    U{TGL_OP_TANH, -10, 10, kTrans}, U{TGL_OP_EXP, -20, 20, kTrans}, U{TGL_OP_LOG, 0, 100, kTrans},
                    U{TGL_OP_SQRT, 0, 100, tol::kElementwise}, U{TGL_OP_SILU, -20, 20, kTrans},
                    U{TGL_OP_SIGN, -2, 2, tol::kElementwise}, U{TGL_OP_SELU, -5, 5, kTrans},
                    U{TGL_OP_HARDSIGMOID, -5, 5, tol::kElementwise}, U{TGL_OP_HARDSWISH, -5, 5, tol::kElementwise},
                    U{TGL_OP_MISH, -10, 10, kTrans}, U{TGL_OP_EXPM1, -5, 5, kTrans}, U{TGL_OP_LOG1P, -0.9, 10, kTrans},
                    U{TGL_OP_RSQRT, 0.01, 100, kTrans}, U{TGL_OP_RECIPROCAL, 0.1, 10, tol::kElementwise},
                    U{TGL_OP_SQUARE, -10, 10, tol::kElementwise}, U{TGL_OP_SIN, -10, 10, kTrans},
                    U{TGL_OP_COS, -10, 10, kTrans}, U{TGL_OP_ERF, -3, 3, kTrans},
                    U{TGL_OP_FLOOR, -10, 10, tol::kElementwise}, U{TGL_OP_CEIL, -10, 10, tol::kElementwise},
                    U{TGL_OP_ROUND, -10, 10, tol::kElementwise}, U{TGL_OP_TRUNC, -10, 10, tol::kElementwise},
                    // ABI 1.3: each over its domain (acosh from 1, atanh and asin/acos inside (-1, 1))
                    U{TGL_OP_ASIN, -1, 1, kTrans}, U{TGL_OP_ACOS, -1, 1, kTrans}, U{TGL_OP_ATAN, -20, 20, kTrans},
                    U{TGL_OP_SINH, -10, 10, kTrans}, U{TGL_OP_COSH, -10, 10, kTrans}, U{TGL_OP_TAN, -1.5, 1.5, kTrans},
                    U{TGL_OP_ASINH, -100, 100, kTrans}, U{TGL_OP_ACOSH, 1, 100, kTrans},
                    U{TGL_OP_ATANH, -0.99, 0.99, kTrans}, U{TGL_OP_GELU_QUICK, -20, 20, kTrans},
                    U{TGL_OP_STEP, -2, 2, tol::kElementwise}})
            add(u.op, [u](Rng& r) { return unary(r, u.lo, u.hi, u.tol); });
        add(TGL_OP_GELU, [](Rng& r) {
            tgl_gelu_params p{};
            p.approximate = uint32_t(r.integer(0, 1));
            return unary(r, -6, 6, kTrans, P_(p));
        });
        add(TGL_OP_LEAKY_RELU, [](Rng& r) {
            tgl_leaky_relu_params p{};
            p.negative_slope = r.uniformf(0, 0.5);
            return unary(r, -5, 5, tol::kElementwise, P_(p));
        });
        for (tgl_op op : {TGL_OP_ELU, TGL_OP_CELU})
            add(op, [](Rng& r) {
                tgl_elu_params p{};
                p.alpha = r.uniformf(0.5, 2);
                return unary(r, -5, 5, kTrans, P_(p));
            });
        add(TGL_OP_SOFTPLUS, [](Rng& r) {
            tgl_softplus_params p{};
            p.beta = r.uniformf(0.5, 2);
            p.threshold = r.uniformf(5, 20);
            return unary(r, -20, 20, kTrans, P_(p));
        });
        add(TGL_OP_CLAMP, [](Rng& r) {
            tgl_clamp_params p{};
            p.min = r.uniformf(-1, 0);
            p.max = r.uniformf(0, 1);
            return unary(r, -2, 2, tol::kElementwise, P_(p));
        });
        add(TGL_OP_LOGICAL_NOT, [](Rng& r) {
            Shape s = random_shape(r, 0, 6, 2000);
            return Seed{{}, {small_arg(s, pick_dtype(r, kAll), -1, 2)}, {out(s, pick_dtype(r, kMasks))}, 0};
        });
        add(TGL_OP_CAST, [](Rng& r) {
            Shape s = random_shape(r, 0, 6, 2000);
            Arg x = any_arg(s, pick_dtype(r, kAll));
            x.lo = -300, x.hi = 300;  // past the i8/u8 ranges: saturation and wrap-around
            return Seed{{}, {x}, {out(s, pick_dtype(r, kAll))}, 0, CompareMode::ExactBits};
        });
        // -- binary
        struct B { tgl_op op; double alo, ahi, blo, bhi; bool signed_b; double tol; };
        for (B b : {B{TGL_OP_ADD, -1, 1, -1, 1, false, tol::kElementwise}, B{TGL_OP_SUB, -1, 1, -1, 1, false, tol::kElementwise},
                    B{TGL_OP_MUL, -2, 2, -2, 2, false, tol::kElementwise}, B{TGL_OP_DIV, -1, 1, 0.5, 2, true, tol::kElementwise},
                    B{TGL_OP_MAXIMUM, -1, 1, -1, 1, false, tol::kElementwise},
                    B{TGL_OP_MINIMUM, -1, 1, -1, 1, false, tol::kElementwise}, B{TGL_OP_POW, 0.5, 2, -3, 3, false, kTrans},
                    B{TGL_OP_FMOD, -10, 10, 0.5, 3, true, kTrans}, B{TGL_OP_REMAINDER, -10, 10, 0.5, 3, true, kTrans},
                    B{TGL_OP_FLOOR_DIVIDE, -10, 10, 0.5, 3, true, tol::kElementwise},
                    B{TGL_OP_ATAN2, -1, 1, -1, 1, false, kTrans}})
            add(b.op, [b](Rng& r) {
                Arg bb = real({}, b.blo, b.bhi);
                if (b.signed_b && r.chance(0.5)) bb.lo = -b.bhi, bb.hi = -b.blo;
                return binary(r, real({}, b.alo, b.ahi), bb, out({}), b.tol);
            });
        for (tgl_op op : {TGL_OP_LOGICAL_AND, TGL_OP_LOGICAL_OR, TGL_OP_LOGICAL_XOR, TGL_OP_EQ, TGL_OP_NE, TGL_OP_LT,
                          TGL_OP_LE, TGL_OP_GT, TGL_OP_GE})
            add(op, [op](Rng& r) {
                const bool logical = op == TGL_OP_LOGICAL_AND || op == TGL_OP_LOGICAL_OR || op == TGL_OP_LOGICAL_XOR;
                const tgl_dtype dt = logical ? pick_dtype(r, kAll) : pick_dtype(r, kCompared);
                return binary(r, small_arg({}, dt, -2, 2), small_arg({}, dt, -2, 2), out({}, pick_dtype(r, kMasks)), 0);
            });
        add(TGL_OP_WHERE, [](Rng& r) {
            Shape ys = random_shape(r, 0, 6, 2000);
            const tgl_dtype dt = pick_dtype(r, kAll);
            Arg c = small_arg(broadcastable(ys, r), pick_dtype(r, kMasks), 0, 1);
            Arg a = any_arg(broadcastable(ys, r), dt), b = any_arg(broadcastable(ys, r), dt);
            Shape y = broadcast_shapes(broadcast_shapes(c.shape, a.shape), b.shape);
            return Seed{{}, {c, a, b}, {out(y, dt)}, 0, CompareMode::ExactBits};
        });
        add(TGL_OP_ADD_N, [](Rng& r) {
            Shape ys = random_shape(r, 0, 6, 2000);
            const tgl_dtype dt = pick_dtype(r, {TGL_DTYPE_F32, TGL_DTYPE_F16});
            std::vector<Arg> xs;
            Shape y;
            for (int64_t k = 0, n = r.integer(1, 8); k < n; ++k) {
                xs.push_back(real(broadcastable(ys, r), -1, 1, dt));
                y = broadcast_shapes(y, xs.back().shape);
            }
            return Seed{{}, xs, {out(y, dt)}, tol::kElementwise};
        });
        // -- reductions
        struct R { tgl_op op; double lo, hi; bool no_max; bool empty_ok; };
        for (R q : {R{TGL_OP_SUM, -0.9, 1.1, true, true}, R{TGL_OP_MEAN, -0.9, 1.1, true, true},
                    R{TGL_OP_MAX, -1, 1, false, false}, R{TGL_OP_MIN, -1, 1, false, false},
                    R{TGL_OP_PROD, 0.8, 1.25, true, true}, R{TGL_OP_LOGSUMEXP, -5, 5, false, true}})
            add(q.op, [q](Rng& r) {
                Seed c = reduction(r, tgl_reduce_params{}, real({}, q.lo, q.hi), F32, tol::kReduction, q.empty_ok);
                c.no_max = q.no_max;
                c.no_subnormal = q.op == TGL_OP_PROD;
                return c;
            });
        for (tgl_op op : {TGL_OP_VAR, TGL_OP_STD})
            add(op, [](Rng& r) {
                tgl_var_params p{};
                p.correction = float(r.integer(0, 1));
                Seed c = reduction(r, p, real({}, -2, 2), F32, kNorm, false);
                c.no_max = true;
                return c;
            });
        add(TGL_OP_NORM, [](Rng& r) {
            tgl_vector_norm_params p{};
            p.ord = r.chance(0.5) ? 2.0f : 1.0f;  // the orders the header defines
            Seed c = reduction(r, p, real({}, -2, 2), F32, kNorm);
            c.no_max = true;
            return c;
        });
        for (tgl_op op : {TGL_OP_ANY, TGL_OP_ALL})
            add(op, [](Rng& r) {
                return reduction(r, tgl_reduce_params{}, small_arg({}, pick_dtype(r, kAll), 0, 1), pick_dtype(r, kMasks), 0);
            });
        for (tgl_op op : {TGL_OP_ARGMAX, TGL_OP_ARGMIN})
            add(op, [](Rng& r) {
                Shape xs = random_shape(r, 1, 5, 2000);
                tgl_arg_reduce_params p{};
                p.axis = axis_of(r, int(xs.size()));
                p.keepdims = r.chance(0.5);
                Shape ys = xs;
                if (p.keepdims) ys[pos(p.axis, xs.size())] = 1;
                else ys.erase(ys.begin() + ptrdiff_t(pos(p.axis, xs.size())));
                Arg x = r.chance(0.3) ? small_arg(xs, I32, -5, 5) : real(xs);
                return Seed{P_(p), {x}, {out(ys, I32)}, 0};
            });
        for (tgl_op op : {TGL_OP_CUMSUM, TGL_OP_CUMPROD, TGL_OP_CUMSUM_BACKWARD})
            add(op, [op](Rng& r) {
                Shape xs = random_shape(r, 1, 5, 2000);
                tgl_scan_params p{};
                p.axis = axis_of(r, int(xs.size()));
                p.exclusive = r.chance(0.3);
                p.reverse = r.chance(0.3);
                Seed c{P_(p), {op == TGL_OP_CUMPROD ? real(xs, 0.8, 1.25) : real(xs)}, {out(xs)}, kNorm};
                c.no_max = true;
                c.no_subnormal = op == TGL_OP_CUMPROD;
                return c;
            });
        // -- matmul family
        add(TGL_OP_MATMUL, [](Rng& r) {
            const std::vector<int64_t> dims = {1, 2, 3, 7, 16, 33};
            int64_t M = r.pick(dims), N = r.pick(dims), K = r.pick(dims);
            tgl_matmul_params p{};
            p.transpose_a = r.chance(0.5);
            p.transpose_b = r.chance(0.5);
            p.alpha = r.chance(0.5) ? 1.0f : r.uniformf(-2, 2);
            Shape batch = random_shape(r, 0, 2, 12);
            Shape as = broadcastable(batch, r), bs = broadcastable(batch, r), cs = broadcast_shapes(as, bs);
            as.insert(as.end(), {p.transpose_a ? K : M, p.transpose_a ? M : K});
            bs.insert(bs.end(), {p.transpose_b ? N : K, p.transpose_b ? K : N});
            cs.insert(cs.end(), {M, N});
            return Seed{P_(p), {real(as), real(bs)}, {out(cs)}, kDot, CompareMode::Nmse, true};
        });
        auto linear_seed = [](Rng& r, tgl_op op) {
            const int64_t K = op == TGL_OP_LINEAR_INT4 ? 32 * r.integer(1, 2) : r.integer(1, 40);
            const int64_t N = r.integer(1, 20);
            Shape xs = random_shape(r, 0, 2, 12);
            xs.push_back(K);
            Shape ys(xs.begin(), xs.end() - 1);
            ys.push_back(N);
            tgl_linear_params p{};
            p.activation = activation(r);
            Seed c{P_(p), {real(xs)}, {}, kDot, CompareMode::Nmse, true};
            Arg bias = maybe(real({N}), r);
            switch (op) {
            case TGL_OP_LINEAR:
                c.ins.push_back(real({N, K}));
                c.ins.push_back(bias);
                c.outs.push_back(out(ys));
                break;
            case TGL_OP_LINEAR_QKV: {
                const int64_t nq = r.integer(0, 8), nk = r.integer(0, 8), nv = r.integer(1, 8);
                c.ins.push_back(real({nq + nk + nv, K}));
                c.ins.push_back(maybe(real({nq + nk + nv}), r));
                for (int64_t n : {nq, nk, nv}) {
                    Shape s(xs.begin(), xs.end() - 1);
                    s.push_back(n);
                    c.outs.push_back(out(s));
                }
                break;
            }
            case TGL_OP_GROUPED_LINEAR: {
                const int64_t T = r.integer(1, 9), E = r.integer(1, 4);
                c.ins = {real({T, K}), real({E, N, K}), index_arg({T}, E), maybe(real({E, N}), r)};
                c.outs.push_back(out({T, N}));
                break;
            }
            case TGL_OP_LINEAR_INT8:
                c.ins.push_back(small_arg({N, K}, TGL_DTYPE_I8, -128, 127));
                c.ins.push_back(real({N}, 0.001, 0.02));
                c.ins.push_back(bias);
                c.outs.push_back(out(ys));
                break;
            case TGL_OP_LINEAR_INT4: {
                tgl_linear_int4_params q{};
                q.activation = p.activation;
                q.group_size = 32;
                c.params = P_(q);
                c.ins.push_back(small_arg({N, K / 2}, TGL_DTYPE_U8, 0, 255));
                c.ins.push_back(real({N, K / 32}, 0.01, 0.1));
                c.ins.push_back(maybe(small_arg({N, K / 32}, TGL_DTYPE_U8, 0, 15), r));
                c.ins.push_back(bias);
                c.outs.push_back(out(ys));
                break;
            }
            default: break;
            }
            return c;
        };
        for (tgl_op op : {TGL_OP_LINEAR, TGL_OP_LINEAR_QKV, TGL_OP_GROUPED_LINEAR, TGL_OP_LINEAR_INT8, TGL_OP_LINEAR_INT4})
            add(op, [linear_seed, op](Rng& r) { return linear_seed(r, op); });
        v.push_back({TGL_OP_DEQUANTIZE, nullptr, [](Rng& r) { gguf_fuzz_case(TGL_OP_DEQUANTIZE, r); }});
        // -- normalization
        for (tgl_op op : {TGL_OP_SOFTMAX, TGL_OP_LOG_SOFTMAX, TGL_OP_SOFTMAX_BACKWARD, TGL_OP_LOG_SOFTMAX_BACKWARD})
            add(op, [op](Rng& r) {
                Shape xs = random_shape(r, 1, 4, 2000);
                tgl_softmax_params p{};
                p.axis = axis_of(r, int(xs.size()));
                p.scale = r.chance(0.5) ? 1.0f : r.uniformf(0.25, 2);
                const bool fwd = op == TGL_OP_SOFTMAX || op == TGL_OP_LOG_SOFTMAX;
                Seed c{P_(p), {real(xs, -3, 3)}, {out(xs)}, kNorm};
                if (fwd) c.ins.push_back(maybe(real(broadcastable(xs, r), -2, 0), r));
                else c.ins.push_back(real(xs));
                c.no_max = true;  // scale * x
                return c;
            });
        for (tgl_op op : {TGL_OP_LAYER_NORM, TGL_OP_RMS_NORM, TGL_OP_ADD_LAYER_NORM, TGL_OP_ADD_RMS_NORM,
                          TGL_OP_LAYER_NORM_BACKWARD, TGL_OP_RMS_NORM_BACKWARD})
            add(op, [op](Rng& r) {
                const bool bwd = op == TGL_OP_LAYER_NORM_BACKWARD || op == TGL_OP_RMS_NORM_BACKWARD;
                Shape xs = random_shape(r, 1, 4, 2000);
                // The backward's dx of a short row is a difference of nearly equal terms (of a row
                // of 1, exactly 0 but for eps): f32 against double there compares rounding noise.
                if (bwd) xs.back() = r.pick(std::vector<int64_t>{8, 13, 16});
                tgl_layer_norm_params p{};
                p.n_norm_dims = uint32_t(r.integer(1, int64_t(std::min<size_t>(2, xs.size()))));
                p.eps = r.chance(0.5) ? 1e-5f : r.uniformf(1e-6f, 1e-2f);
                Shape ns(xs.end() - p.n_norm_dims, xs.end());
                const bool rms = op == TGL_OP_RMS_NORM || op == TGL_OP_ADD_RMS_NORM || op == TGL_OP_RMS_NORM_BACKWARD;
                // The backward's dgamma / dbeta are sums over rows that may cancel: f32 vs double.
                Seed c{P_(p), {real(xs, -2, 2)}, {out(xs)}, bwd ? kDot : kNorm};
                c.no_max = true;
                if (op == TGL_OP_ADD_LAYER_NORM || op == TGL_OP_ADD_RMS_NORM) c.ins.push_back(real(xs));
                if (bwd) {  // dy constant along a row (stride 0) makes dx exactly 0 in double, rounding noise in f32
                    Arg dy = real(xs);
                    dy.no_stride0 = true;
                    c.ins.push_back(dy);
                }
                c.ins.push_back(maybe(real(ns, 0.5, 1.5), r));
                if (!rms && !bwd) c.ins.push_back(maybe(real(ns), r));
                if (op == TGL_OP_ADD_LAYER_NORM || op == TGL_OP_ADD_RMS_NORM) c.outs.push_back(maybe(out(xs), r));
                if (bwd) {
                    c.outs.push_back(maybe(out(ns), r));
                    if (!rms) c.outs.push_back(maybe(out(ns), r));
                }
                return c;
            });
        add(TGL_OP_GROUP_NORM, [](Rng& r) {
            tgl_group_norm_params p{};
            p.num_groups = uint32_t(r.integer(1, 3));
            p.eps = 1e-5f;
            const int64_t C = p.num_groups * r.integer(1, 3);
            Shape xs = random_shape(r, 0, 2, 30);
            xs.insert(xs.begin(), {r.integer(1, 3), C});
            Seed c{P_(p), {real(xs, -2, 2), maybe(real({C}), r), maybe(real({C}), r)}, {out(xs)}, kNorm};
            c.no_max = true;
            return c;
        });
        add(TGL_OP_BATCH_NORM, [](Rng& r) {
            tgl_batch_norm_params p{};
            p.eps = 1e-5f;
            const int64_t C = r.integer(1, 5);
            Shape xs = random_shape(r, 0, 2, 30);
            xs.insert(xs.begin(), {r.integer(1, 3), C});
            Seed c{P_(p), {real(xs, -2, 2), real({C}), real({C}, 0.1, 2), maybe(real({C}), r), maybe(real({C}), r)}, {out(xs)}, kNorm};
            c.no_max = true;
            return c;
        });
        // -- layout (any dtype, bit-exact copies)
        auto layout = [](Rng& r, std::vector<uint8_t> params, std::vector<Shape> ins, std::vector<Shape> outs) {
            const tgl_dtype dt = pick_dtype(r, kAll);
            Seed c{std::move(params), {}, {}, 0, CompareMode::ExactBits};
            for (Shape& s : ins) c.ins.push_back(any_arg(s, dt));
            for (Shape& s : outs) c.outs.push_back(out(s, dt));
            return c;
        };
        add(TGL_OP_CONTIGUOUS, [layout](Rng& r) {
            Shape s = random_shape(r, 0, 6, 2000);
            return layout(r, {}, {s}, {s});
        });
        add(TGL_OP_RESHAPE, [layout](Rng& r) {
            Shape s = random_shape(r, 0, 5, 2000), t = s;
            std::shuffle(t.begin(), t.end(), r.engine());
            if (t.size() >= 2 && r.chance(0.5)) {  // merge two dims
                t[0] *= t[1];
                t.erase(t.begin() + 1);
            }
            return layout(r, {}, {s}, {t});
        });
        add(TGL_OP_PERMUTE, [layout](Rng& r) {
            Shape s = random_shape(r, 0, 6, 2000), t(s.size());
            tgl_permute_params p{};
            std::vector<int32_t> perm(s.size());
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), r.engine());
            for (size_t k = 0; k < s.size(); ++k) p.perm[k] = perm[k], t[k] = s[size_t(perm[k])];
            return layout(r, P_(p), {s}, {t});
        });
        add(TGL_OP_EXPAND, [layout](Rng& r) {
            Shape y = random_shape(r, 0, 6, 2000);
            return layout(r, {}, {broadcastable(y, r)}, {y});
        });
        add(TGL_OP_TILE, [layout](Rng& r) {
            Shape x = random_shape(r, 0, 4, 100), y = x;
            for (auto& d : y) d *= r.integer(1, 3);
            if (r.chance(0.3)) y.insert(y.begin(), r.integer(1, 3));
            return layout(r, {}, {x}, {y});
        });
        add(TGL_OP_FLIP, [layout](Rng& r) {
            Shape s = random_shape(r, 1, 6, 2000);
            tgl_flip_params p{};
            for (int k = 0; k < int(s.size()); ++k)
                if (r.chance(0.5)) p.axes[p.n_axes++] = r.chance(0.5) ? k : k - int(s.size());
            return layout(r, P_(p), {s}, {s});
        });
        add(TGL_OP_ROLL, [layout](Rng& r) {
            Shape s = random_shape(r, 1, 6, 2000);
            tgl_roll_params p{};
            for (int k = 0; k < int(s.size()); ++k)
                if (r.chance(0.5)) p.axes[p.n_axes] = k, p.shifts[p.n_axes++] = r.integer(-20, 20);
            return layout(r, P_(p), {s}, {s});
        });
        add(TGL_OP_PAD, [layout](Rng& r) {
            Shape s = random_shape(r, 1, 4, 500), t = s;
            tgl_pad_params p{};
            p.mode = uint32_t(r.integer(0, 2));
            p.value = r.chance(0.5) ? 0.0 : double(int(r.integer(-3, 3)));
            for (size_t k = 0; k < s.size(); ++k) {
                const int64_t lim = p.mode == TGL_PAD_REFLECT ? s[k] - 1 : 3;
                p.before[k] = r.integer(0, std::min<int64_t>(lim, 3));
                p.after[k] = r.integer(0, std::min<int64_t>(lim, 3));
                t[k] += p.before[k] + p.after[k];
            }
            return layout(r, P_(p), {s}, {t});
        });
        add(TGL_OP_SLICE, [layout](Rng& r) {
            Shape s = random_shape(r, 1, 5, 2000), t = s;
            tgl_slice_params p{};
            p.axis = axis_of(r, int(s.size()));
            const int64_t n = s[pos(p.axis, s.size())];
            p.start = r.integer(0, n);
            p.stop = r.integer(p.start, n);
            p.step = r.integer(1, 3);
            t[pos(p.axis, s.size())] = (p.stop - p.start + p.step - 1) / p.step;
            return layout(r, P_(p), {s}, {t});
        });
        add(TGL_OP_NARROW, [layout](Rng& r) {
            Shape s = random_shape(r, 1, 5, 2000), t = s;
            tgl_narrow_params p{};
            p.axis = axis_of(r, int(s.size()));
            const int64_t n = s[pos(p.axis, s.size())];
            p.start = r.integer(0, n);
            p.length = r.integer(0, n - p.start);
            t[pos(p.axis, s.size())] = p.length;
            return layout(r, P_(p), {s}, {t});
        });
        add(TGL_OP_CONCAT, [layout](Rng& r) {
            Shape s = random_shape(r, 1, 5, 500);
            tgl_axis_params p{};
            p.axis = axis_of(r, int(s.size()));
            const size_t a = pos(p.axis, s.size());
            std::vector<Shape> ins(size_t(r.integer(1, 5)), s);
            Shape y = s;
            y[a] = 0;
            for (Shape& x : ins) y[a] += (x[a] = r.integer(0, 4));
            return layout(r, P_(p), ins, {y});
        });
        add(TGL_OP_SPLIT, [layout](Rng& r) {
            Shape s = random_shape(r, 1, 5, 500);
            tgl_axis_params p{};
            p.axis = axis_of(r, int(s.size()));
            const size_t a = pos(p.axis, s.size());
            std::vector<Shape> outs(size_t(r.integer(1, 4)), s);
            s[a] = 0;
            for (Shape& y : outs) s[a] += (y[a] = r.integer(0, 4));
            return layout(r, P_(p), {s}, outs);
        });
        add(TGL_OP_STACK, [layout](Rng& r) {
            Shape s = random_shape(r, 0, 5, 500);
            tgl_axis_params p{};
            const int rank = int(s.size()) + 1;
            p.axis = axis_of(r, rank);
            const int64_t n = r.integer(1, 5);
            Shape y = s;
            y.insert(y.begin() + ptrdiff_t(pos(p.axis, size_t(rank))), n);
            return layout(r, P_(p), std::vector<Shape>(size_t(n), s), {y});
        });
        // -- indexing
        add(TGL_OP_GATHER, [](Rng& r) {
            Shape xs = random_shape(r, 1, 4, 500), is = xs;
            tgl_axis_params p{};
            p.axis = axis_of(r, int(xs.size()));
            const size_t a = pos(p.axis, xs.size());
            if (xs[a] == 0) xs[a] = 1;
            for (size_t d = 0; d < is.size(); ++d) is[d] = d == a ? r.integer(0, 6) : r.integer(0, xs[d]);
            const tgl_dtype dt = pick_dtype(r, kAll);
            return Seed{P_(p), {any_arg(xs, dt), index_arg(is, xs[a])}, {out(is, dt)}, 0, CompareMode::ExactBits};
        });
        add(TGL_OP_INDEX_SELECT, [](Rng& r) {
            Shape xs = random_shape(r, 1, 4, 500), ys = xs;
            tgl_axis_params p{};
            p.axis = axis_of(r, int(xs.size()));
            const size_t a = pos(p.axis, xs.size());
            const int64_t n = r.integer(0, 8);
            ys[a] = n;
            const tgl_dtype dt = pick_dtype(r, kAll);
            return Seed{P_(p), {any_arg(xs, dt), index_arg({n}, xs[a])}, {out(ys, dt)}, 0, CompareMode::ExactBits};
        });
        for (tgl_op op : {TGL_OP_SCATTER, TGL_OP_SCATTER_ADD})
            add(op, [op](Rng& r) {
                Shape xs = random_shape(r, 1, 4, 500), is = xs, ss = xs;
                tgl_axis_params p{};
                p.axis = axis_of(r, int(xs.size()));
                const size_t a = pos(p.axis, xs.size());
                for (size_t d = 0; d < is.size(); ++d) {
                    is[d] = d == a ? r.integer(0, 6) : r.integer(0, xs[d]);
                    ss[d] = is[d] + r.integer(0, 1);
                }
                if (xs[a] == 0) is[a] = 0;
                const tgl_dtype dt = op == TGL_OP_SCATTER ? pick_dtype(r, kAll) : pick_dtype(r, {F32, F16, I32});
                const bool add = op == TGL_OP_SCATTER_ADD;
                Seed c{P_(p), {any_arg(xs, dt), index_arg(is, xs[a]), any_arg(ss, dt)}, {out(xs, dt)},
                       add ? kNorm : 0, add ? CompareMode::Nmse : CompareMode::ExactBits, add};
                return c;
            });
        add(TGL_OP_SET_ROWS, [](Rng& r) {
            Shape xs = random_shape(r, 1, 4, 500), ss = xs;
            tgl_axis_params p{};
            p.axis = axis_of(r, int(xs.size()));
            const size_t a = pos(p.axis, xs.size());
            const int64_t k = xs[a] == 0 ? 0 : r.integer(0, 6);
            ss[a] = k;
            const tgl_dtype dt = pick_dtype(r, kAll);
            return Seed{P_(p), {any_arg(xs, dt), index_arg({k}, xs[a]), any_arg(ss, dt)}, {out(xs, dt)}, 0, CompareMode::ExactBits};
        });
        add(TGL_OP_ONE_HOT, [](Rng& r) {
            Shape is = random_shape(r, 0, 4, 300), ys = is;
            const int64_t n = r.integer(1, 9);
            ys.push_back(n);
            return Seed{{}, {index_arg(is, n)}, {out(ys, pick_dtype(r, kAll))}, 0, CompareMode::ExactBits};
        });
        add(TGL_OP_EMBEDDING_BACKWARD, [](Rng& r) {
            Shape is = random_shape(r, 0, 3, 100), ds = is;
            const int64_t V = r.integer(1, 9), D = r.integer(1, 9);
            ds.push_back(D);
            tgl_embedding_backward_params p{};
            p.has_padding_idx = r.chance(0.3);
            p.padding_idx = int32_t(r.integer(0, V - 1));
            Seed c{P_(p), {real(ds), index_arg(is, V)}, {out({V, D})}, kNorm};
            c.no_max = true;
            return c;
        });
        // -- selection
        for (tgl_op op : {TGL_OP_TOPK, TGL_OP_SORT, TGL_OP_ARGSORT})
            add(op, [op](Rng& r) {
                Shape xs = random_shape(r, 1, 4, 1000), ys = xs;
                tgl_sort_params p{};
                p.axis = axis_of(r, int(xs.size()));
                p.descending = r.chance(0.5);
                if (op == TGL_OP_TOPK) ys[pos(p.axis, xs.size())] = r.integer(0, xs[pos(p.axis, xs.size())]);
                const tgl_dtype dt = pick_dtype(r, {F32, F16, I32});
                Seed c{P_(p), {dt == I32 ? small_arg(xs, I32, -20, 20) : real(xs, -1, 1, dt)}, {}, 0, CompareMode::ExactBits};
                if (op != TGL_OP_ARGSORT) c.outs.push_back(out(ys, dt));
                c.outs.push_back(out(ys, I32));
                return c;
            });
        // -- generation
        add(TGL_OP_ARANGE, [](Rng& r) {
            tgl_arange_params p{};
            p.start = double(r.integer(-10, 10));
            p.step = r.chance(0.5) ? double(r.integer(1, 3)) : 0.25 * double(r.integer(1, 8));
            if (r.chance(0.5)) p.step = -p.step;
            const tgl_dtype dt = pick_dtype(r, {F32, F16, TGL_DTYPE_BF16, I32, TGL_DTYPE_I8, TGL_DTYPE_U8});
            if (dt == TGL_DTYPE_U8 || dt == TGL_DTYPE_I8 || dt == I32)
                p.start = std::max(p.start, 0.0), p.step = std::max(1.0, std::abs(std::round(p.step)));
            return Seed{P_(p), {}, {out({r.integer(0, 40)}, dt)}, 0, CompareMode::ExactBits};
        });
        add(TGL_OP_FULL, [](Rng& r) {
            tgl_full_params p{};
            p.value = r.pick(std::vector<double>{0, 1, -3, 0.5, 100, -0.0, double(kInf), double(kNaN)});
            const tgl_dtype dt = pick_dtype(r, kAll);
            if (dt != F32 && dt != F16 && dt != TGL_DTYPE_BF16 && !std::isfinite(p.value)) p.value = 7;
            return Seed{P_(p), {}, {out(random_shape(r, 0, 5, 2000), dt)}, 0, CompareMode::ExactBits};
        });
        add(TGL_OP_EYE, [](Rng& r) {
            tgl_diagonal_params p{};
            p.diagonal = int32_t(r.integer(-3, 3));
            return Seed{P_(p), {}, {out(random_shape(r, 2, 4, 2000), pick_dtype(r, kAll))}, 0, CompareMode::ExactBits};
        });
        for (tgl_op op : {TGL_OP_TRIL, TGL_OP_TRIU})
            add(op, [](Rng& r) {
                tgl_diagonal_params p{};
                p.diagonal = int32_t(r.integer(-3, 3));
                Shape s = random_shape(r, 2, 4, 2000);
                const tgl_dtype dt = pick_dtype(r, kAll);
                return Seed{P_(p), {any_arg(s, dt)}, {out(s, dt)}, 0, CompareMode::ExactBits};
            });
        for (tgl_op op : {TGL_OP_RANDOM_UNIFORM, TGL_OP_RANDOM_NORMAL})
            add(op, [](Rng& r) {
                tgl_random_params p{};
                p.seed = uint64_t(r.integer(0, INT64_MAX));
                p.offset = uint64_t(r.integer(0, 1000));
                p.a = r.uniformf(-2, 0);
                p.b = r.uniformf(0.5, 2);
                return Seed{P_(p), {}, {out(random_shape(r, 0, 4, 2000), pick_dtype(r, {F32, F16, TGL_DTYPE_BF16}))}, kTrans};
            });
        // -- conv
        add(TGL_OP_CONV1D, [](Rng& r) { return conv(r, 1, false); });
        add(TGL_OP_CONV2D, [](Rng& r) { return conv(r, 2, false); });
        add(TGL_OP_CONV3D, [](Rng& r) { return conv(r, 3, false); });
        add(TGL_OP_CONV_TRANSPOSE1D, [](Rng& r) { return conv(r, 1, true); });
        add(TGL_OP_CONV_TRANSPOSE2D, [](Rng& r) { return conv(r, 2, true); });
        add(TGL_OP_CONV2D_BACKWARD_INPUT, [](Rng& r) {
            Seed c = conv(r, 2, false);  // (x, w, bias) -> y becomes (dy, w) -> dx
            tgl_conv_params p{};
            std::memcpy(&p, c.params.data(), sizeof p);
            p.activation = TGL_ACTIVATION_NONE;
            c.params = P_(p);
            Shape xs = c.ins[0].shape;
            c.ins = {real(c.outs[0].shape), c.ins[1]};  // w stays plain (see conv())
            c.outs = {out(xs)};
            return c;
        });
        add(TGL_OP_CONV2D_BACKWARD_WEIGHT, [](Rng& r) {
            Seed c = conv(r, 2, false);  // (x, w, bias) -> y becomes (x, dy) -> (dw, db?)
            tgl_conv_params p{};
            std::memcpy(&p, c.params.data(), sizeof p);
            p.activation = TGL_ACTIVATION_NONE;
            c.params = P_(p);
            const Shape ws = c.ins[1].shape;
            c.ins = {c.ins[0], plain(real(c.outs[0].shape))};  // dy meets x's zero padding (see conv())
            c.outs = {out(ws), maybe(out({c.outs[0].shape[1]}), r)};
            return c;
        });
        // -- pooling
        add(TGL_OP_MAX_POOL, [](Rng& r) {
            PoolCall c = pool(r, false);
            return Seed{P_(c.p), {real(c.xs)}, {out(c.ys), maybe(out(c.ys, I32), r)}, 0};
        });
        add(TGL_OP_AVG_POOL, [](Rng& r) {
            PoolCall c = pool(r, true);
            Seed s{P_(c.p), {real(c.xs)}, {out(c.ys)}, kNorm};
            s.no_max = true;
            return s;
        });
        add(TGL_OP_MAX_POOL_BACKWARD, [](Rng& r) {
            PoolCall c = pool(r, false);
            int64_t spatial = 1;
            for (size_t d = 2; d < c.xs.size(); ++d) spatial *= c.xs[d];
            Seed s{P_(c.p), {real(c.ys), index_arg(c.ys, spatial)}, {out(c.xs)}, kNorm};
            s.no_max = true;
            return s;
        });
        add(TGL_OP_AVG_POOL_BACKWARD, [](Rng& r) {
            PoolCall c = pool(r, true);
            Seed s{P_(c.p), {real(c.ys)}, {out(c.xs)}, kNorm};
            s.no_max = true;
            return s;
        });
        for (tgl_op op : {TGL_OP_GLOBAL_MAX_POOL, TGL_OP_GLOBAL_AVG_POOL})
            add(op, [op](Rng& r) {
                Shape xs = pool_input(r, int(r.integer(1, 3))), ys = xs;
                if (r.chance(0.5)) ys.resize(2);
                else std::fill(ys.begin() + 2, ys.end(), 1);
                Seed s{{}, {real(xs)}, {out(ys)}, kNorm};
                s.no_max = op == TGL_OP_GLOBAL_AVG_POOL;
                return s;
            });
        for (tgl_op op : {TGL_OP_ADAPTIVE_AVG_POOL, TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD, TGL_OP_UPSAMPLE_NEAREST,
                          TGL_OP_UPSAMPLE_BILINEAR})
            add(op, [op](Rng& r) {
                Shape xs = pool_input(r, op == TGL_OP_UPSAMPLE_BILINEAR ? 2 : int(r.integer(1, 3))), ys = xs;
                for (size_t d = 2; d < xs.size(); ++d) ys[d] = r.integer(1, 9);
                std::vector<uint8_t> params;
                if (op == TGL_OP_UPSAMPLE_BILINEAR) {
                    tgl_upsample_params p{};
                    p.align_corners = r.chance(0.5);
                    params = P_(p);
                } else if (op == TGL_OP_UPSAMPLE_NEAREST) {
                    params = P_(tgl_upsample_params{});
                }
                if (op == TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD) std::swap(xs, ys);  // (dy (out), dx (in))
                Seed s{params, {real(xs)}, {out(ys)}, op == TGL_OP_UPSAMPLE_NEAREST ? 0 : kNorm,
                       op == TGL_OP_UPSAMPLE_NEAREST ? CompareMode::ExactBits : CompareMode::Nmse};
                s.no_max = op != TGL_OP_UPSAMPLE_NEAREST;
                // Bilinear: whether a neighbour's weight rounds to exactly 0, and whether 0 times an
                // inf or NaN there stays NaN, depends on f32 rounding of the source coordinate (fma
                // or not) and on the compiler (NVIDIA's folds it away): finite values only.
                s.finite = op == TGL_OP_UPSAMPLE_BILINEAR;
                return s;
            });
        // -- attention
        for (tgl_op op : {TGL_OP_ATTENTION, TGL_OP_ATTENTION_BACKWARD})
            add(op, [op](Rng& r) {
                const int64_t B = r.integer(1, 2), Hkv = r.integer(1, 2), Hq = Hkv * r.integer(1, 2);
                const int64_t Sq = r.integer(1, 9), Skv = r.integer(1, 12), D = r.pick(std::vector<int64_t>{1, 4, 8, 16}),
                              Dv = r.chance(0.7) ? D : r.integer(1, 9);
                tgl_attention_params p{};
                p.causal = uint32_t(r.chance(0.4) ? r.integer(1, 2) : 0);  // bottom-right or top-left
                p.scale = r.chance(0.5) ? float(1 / std::sqrt(double(D))) : r.uniformf(0.1, 1);
                p.softcap = r.chance(0.2) ? r.uniformf(0.5, 5) : 0.0f;
                p.max_bias = r.chance(0.2) ? r.uniformf(1, 8) : 0.0f;
                p.window = uint32_t(r.chance(0.2) ? r.integer(1, 6) : 0);
                // The forward: f16 k and v under the f32 q at times, and sinks (f32, per q head).
                const bool fwd_op = op == TGL_OP_ATTENTION;
                const tgl_dtype kv_dt = fwd_op && r.chance(0.2) ? F16 : F32;
                Shape qs{B, Hq, Sq, D}, ks{B, Hkv, Skv, D}, vs{B, Hkv, Skv, Dv}, os{B, Hq, Sq, Dv};
                Arg mask = none();
                if (r.chance(0.5)) {
                    Shape ms = broadcastable({B, Hq, Sq, Skv}, r);
                    mask = r.chance(0.5) ? small_arg(ms, BOOL, 0, 1) : real(ms, -2, 0);
                }
                // v (and in the backward q, k, v, o, do) get no special values: a key of weight 0
                // (hidden by the mask or causal, or exp underflowed in f32 but not in double) meets
                // an inf or NaN there; the CPU skips zero weights, GLES multiplies 0 * inf = NaN.
                // Which is right for hidden keys is open (reported); underflow is f32 vs double.
                const bool fwd = op == TGL_OP_ATTENTION;
                auto qk = [fwd](Shape s) { return fwd ? real(std::move(s)) : plain(real(std::move(s))); };
                Arg k = qk(ks), v = plain(real(vs));
                k.dt = v.dt = kv_dt;
                Seed c{P_(p), {qk(qs), k, v}, {}, kDot, CompareMode::Nmse, true};
                // No subnormals in q and k: GLES scales q (or the score) in f32, where a subnormal
                // times the scale underflows to 0 and then meets an inf of k (0 * inf = NaN); the
                // reference's double keeps it nonzero (subnormal * inf = inf). f32 vs double.
                c.no_subnormal = true;
                if (op == TGL_OP_ATTENTION) {
                    if (!mask.absent && mask.dt == F32) mask.dt = kv_dt;
                    c.ins.push_back(mask);
                    c.ins.push_back(r.chance(0.3) ? plain(real({Hq}, -2, 3)) : none());  // sinks
                    c.outs = {out(os), maybe(out({B, Hq, Sq}), r)};
                } else {
                    c.ins.push_back(plain(real(os)));
                    c.ins.push_back(plain(real(os)));
                    // lse is the forward's output: a NaN there for finite scores is no state the
                    // forward gives, and hidden keys' p = exp(-inf - NaN) is NaN on the CPU, 0 on GLES.
                    c.ins.push_back(plain(real({B, Hq, Sq}, 1, 3)));
                    c.ins.push_back(mask);
                    c.outs = {out(qs), out(ks), out(vs)};
                }
                return c;
            });
        // -- sequence
        for (tgl_op op : {TGL_OP_ROPE, TGL_OP_ROPE_BACKWARD})
            add(op, [](Rng& r) {
                const int64_t D = 2 * r.integer(1, 8), S = r.integer(1, 9);
                Shape xs{r.integer(1, 2), r.integer(1, 3), S, D};
                tgl_rope_params p{};
                p.mode = uint32_t(r.integer(0, 1));
                p.n_rot = uint32_t(r.chance(0.5) ? 0 : 2 * r.integer(1, D / 2));
                p.scaling = r.chance(0.7) ? TGL_ROPE_SCALING_NONE : TGL_ROPE_SCALING_LINEAR;
                p.theta_base = r.chance(0.5) ? 10000.0f : 500000.0f;
                p.factor = p.scaling ? r.uniformf(1, 4) : 1.0f;
                p.attn_factor = 1.0f;
                // The 1.3 options: multi-section rope (positions (S, 4)), freq_factors or a cos/sin
                // cache (no scaling beside it); factors and cache without special values (a
                // subnormal factor is an f32 inf on the GPU, a finite angle in double).
                const int64_t half = (p.n_rot ? int64_t(p.n_rot) : D) / 2, max_positions = r.integer(1, 64);
                Shape ps{S};
                if (r.chance(0.3)) {
                    p.multi = uint32_t(r.integer(TGL_ROPE_MULTI_SECTIONS, TGL_ROPE_MULTI_VISION));
                    for (uint32_t& sec : p.sections) sec = uint32_t(r.integer(0, half));
                    p.sections[0] += 1;
                    ps.push_back(4);
                }
                const int option = int(r.integer(0, 2));  // none, freq_factors, cache
                if (option == 2) p.scaling = TGL_ROPE_SCALING_NONE;
                return Seed{P_(p),
                            {real(xs), index_arg(ps, option == 2 ? max_positions : 4096),
                             option == 1 ? plain(real({half}, 1, 4)) : none(),
                             option == 2 ? plain(real({max_positions, half})) : none(),
                             option == 2 ? plain(real({max_positions, half})) : none()},
                            {out(xs)},
                            kTrans};
            });
        for (tgl_op op : {TGL_OP_FFT, TGL_OP_IFFT})
            add(op, [](Rng& r) {
                Shape xs = random_shape(r, 0, 2, 6);
                xs.push_back(r.chance(0.6) ? int64_t(1) << r.integer(0, 7) : r.integer(1, 40));
                xs.push_back(2);
                Seed c{{}, {real(xs)}, {out(xs)}, kDot};
                // An inf or NaN meets twiddles of exactly 0 and 1 (inf * 0 = NaN, NaN * 0 = NaN, or
                // the multiplication skipped or folded away: NVIDIA's compiler folds NaN * 0 to 0)
                // in some places and not others depending on the algorithm and the compiler (GLES
                // radix-4 Stockham / direct DFT in f32, the CPU's in double): finite values only.
                c.no_max = c.finite = true;
                return c;
            });
        add(TGL_OP_SELECTIVE_SCAN, [](Rng& r) {
            const int64_t B = r.integer(1, 2), D = r.integer(1, 4), N = r.integer(1, 4), L = r.integer(0, 12);
            tgl_selective_scan_params p{};
            p.delta_softplus = r.chance(0.5);
            Seed c{P_(p),
                   {real({B, D, L}), real({B, D, L}, 0, 0.5), real({D, N}, -1, 0), real({B, N, L}), real({B, N, L}),
                    maybe(real({D}), r), maybe(real({B, D, L}), r), maybe(real({D}), r)},
                   {out({B, D, L}), maybe(out({B, D, N}), r)},
                   kDot};
            // exp(dt * A) and the running state underflow to 0 in f32 but not in double, and 0 times
            // an inf state is NaN: finite values only.
            c.no_max = c.finite = true;
            return c;
        });
        add(TGL_OP_SAMPLE, [](Rng& r) {
            const int64_t B = r.integer(1, 4), V = r.integer(1, 60);
            tgl_sample_params p{};
            p.temperature = r.chance(0.2) ? 0.0f : r.uniformf(0.3, 2);
            p.top_k = uint32_t(r.chance(0.5) ? 0 : r.integer(1, 10));
            p.top_p = r.chance(0.5) ? 1.0f : r.uniformf(0.1, 1);
            p.seed = uint64_t(r.integer(0, INT64_MAX));
            p.offset = uint64_t(r.integer(0, 100));
            return Seed{P_(p), {real({B, V}, -5, 5)}, {out({B}, I32)}, 0};
        });
        // -- losses
        for (tgl_op op : {TGL_OP_CROSS_ENTROPY, TGL_OP_CROSS_ENTROPY_BACKWARD})
            add(op, [op](Rng& r) {
                const int64_t N = r.integer(1, 6), C = r.integer(1, 9);
                Shape ls{N, C}, ts{N};
                if (r.chance(0.3)) ls.push_back(3), ts.push_back(3);
                tgl_cross_entropy_params p{};
                p.reduction = uint32_t(r.integer(0, 2));
                p.ignore_index = int32_t(r.chance(0.3) ? 0 : -100);
                p.label_smoothing = r.chance(0.5) ? 0.0f : r.uniformf(0, 0.3);
                Shape loss = p.reduction == TGL_REDUCTION_NONE ? ts : Shape{};
                Seed c{P_(p), {real(ls, -3, 3), index_arg(ts, C)}, {}, kNorm};
                c.no_max = true;
                if (op == TGL_OP_CROSS_ENTROPY) c.outs = {out(loss)};
                else c.ins.push_back(real(loss)), c.outs = {out(ls)};
                return c;
            });
        return v;
    }();
    return ops;
}

const std::vector<float>& fuzz_specials() {
    static const std::vector<float> v = {kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-40f, -1e-40f, FLT_TRUE_MIN,
                                         FLT_MIN, 1.0f, -1.0f, FLT_MAX, -FLT_MAX};
    return v;
}
bool is_large(float v) { return std::isfinite(v) && std::fabs(v) > 1e30f; }
bool is_tiny(float v) { return v != 0 && std::fabs(v) <= FLT_MIN; }  // subnormals and the smallest normal

// Whether the subject flushes subnormal results to zero (GLSL ES allows it; the NVIDIA driver does
// it): FLT_MIN * 0.5 there. Such a device gives 0 for a subnormal input or product, so ceil, log,
// atan2 of them, and inf times them (NaN), differ from the reference; on it the special values
// leave out subnormals and FLT_MIN (whose quotients become subnormal), once noted on stderr.
bool subject_flushes_subnormals() {
    static const bool flushes = [] {
        std::vector<std::vector<double>> y =
            run_op_values(shared_device(Role::Subject), TGL_OP_MUL, nullptr,
                          {input_values(F32, {1}, {double(FLT_MIN)}), input_values(F32, {1}, {0.5})}, {output_of(F32, {1})});
        const bool f = y.at(0).at(0) == 0.0;
        if (f) std::fprintf(stderr, "fuzz_diff: the subject flushes subnormals to zero; special values leave them out\n");
        return f;
    }();
    return flushes;
}

double draw_value(const Arg& a, Rng& rng, bool specials, const Seed& seed) {
    const bool is_float = a.dt == F32 || a.dt == F16 || a.dt == TGL_DTYPE_BF16;
    if (is_float && a.vals != Vals::Index && specials && !a.plain && rng.chance(0.12)) {
        float v;
        do v = rng.pick(fuzz_specials());
        while ((seed.no_max && is_large(v)) || (seed.finite && !std::isfinite(v)) ||
               (is_tiny(v) && (seed.no_subnormal || subject_flushes_subnormals())));
        return v;
    }
    switch (a.vals) {
    case Vals::Index: return a.hi > 0 ? double(rng.integer(0, int64_t(a.hi) - 1)) : 0.0;
    case Vals::Small: return double(rng.integer(int64_t(a.lo), int64_t(a.hi)));
    case Vals::Real: return rng.uniform(a.lo, a.hi);
    case Vals::Any:
        switch (a.dt) {
        case TGL_DTYPE_BOOL: return double(rng.integer(0, 1));
        case TGL_DTYPE_U8: return double(rng.integer(0, 255));
        case TGL_DTYPE_I8: return double(rng.integer(-128, 127));
        case TGL_DTYPE_I32: return double(rng.integer(int64_t(a.lo), int64_t(a.hi)));
        default: return rng.uniform(a.lo, a.hi);
        }
    }
    return 0;
}

std::string op_name(tgl_op op) {
    const tgl::OpInfo* info = tgl::find_op(op);
    return info ? info->name : "op " + std::to_string(op);
}

// TGL_FUZZ_DIFF_DUMP=1: failure messages list every input's logical values (row-major), to
// report a disagreement with its values.
bool dump_inputs() {
    static const bool on = [] {
        const char* v = std::getenv("TGL_FUZZ_DIFF_DUMP");
        return v && *v && std::string(v) != "0";
    }();
    return on;
}
std::string logical_values(const InputArg& a) {
    std::string out;
    const int64_t n = a.view.numel();
    for (int64_t i = 0; i < n; ++i) {
        int64_t rest = i, at = a.view.offset;
        for (int d = a.view.rank() - 1; d >= 0; --d) {
            at += (rest % a.view.shape[size_t(d)]) * a.view.strides[size_t(d)];
            rest /= a.view.shape[size_t(d)];
        }
        out += (i ? ", " : "") + fmt_value(a.dtype, a.storage.value(at));
    }
    return out;
}

MultiSpec fuzz_spec(const OpFuzz& o, Rng& rng) {
    Seed seed = o.draw(rng);
    const bool specials = rng.chance(0.35);
    MultiSpec s;
    s.op = o.op;
    s.params = seed.params;
    for (const Arg& a : seed.ins) {
        if (a.absent) {
            s.inputs.push_back(absent_input());
            continue;
        }
        InputArg in;
        in.dtype = a.dt;
        in.view = diff::random_view(a.shape, a.dt, rng, !a.no_stride0);
        in.storage = Storage::zeros(a.dt, in.view.storage);
        for (int64_t i = 0; i < in.view.storage; ++i) in.storage.set_value(i, draw_value(a, rng, specials, seed));
        s.inputs.push_back(std::move(in));
    }
    for (const Arg& a : seed.outs) {
        s.tolerance.push_back(seed.tol);  // per output slot, absent ones included
        s.mode.push_back(seed.mode);
        if (a.absent) {
            s.outputs.push_back(absent_output());
            continue;
        }
        OutputArg y;
        y.dtype = a.dt;
        y.view = diff::random_view(a.shape, a.dt, rng, false);
        s.outputs.push_back(std::move(y));
    }
    s.what = op_name(o.op) + (specials ? " with special values" : "") + (seed.no_max ? " (no +-max)" : "");
    if (!s.params.empty()) {
        s.what += "\n  params (bytes):";
        for (uint8_t b : s.params) s.what += " " + std::to_string(b);
    }
    if (dump_inputs())
        for (size_t i = 0; i < s.inputs.size(); ++i)
            if (!s.inputs[i].absent) s.what += "\n  input " + std::to_string(i) + ": " + logical_values(s.inputs[i]);
    return s;
}

struct FuzzCase {
    std::string name;
    const tgl::OpInfo* info;
    const OpFuzz* fuzz;  // null: the op has no entry in op_fuzzers()
};
// The ops are drawn from the catalogue, cases_per_op() cases each; an op without a fuzzer is a
// failing case named after it (and FuzzCoverage fails), not an op left out.
std::vector<FuzzCase> all_cases() {
    std::map<tgl_op, const OpFuzz*> fuzz_of;
    for (const OpFuzz& o : op_fuzzers()) fuzz_of[o.op] = &o;
    uint32_t n_ops = 0;
    const tgl::OpInfo* ops = tgl::all_ops(&n_ops);
    std::vector<FuzzCase> cases;
    const int n = cases_per_op();
    for (uint32_t k = 0; k < n_ops; ++k) {
        auto it = fuzz_of.find(ops[k].op);
        for (int i = 0; i < n; ++i)
            cases.push_back({std::string(ops[k].name) + "_" + std::to_string(i), &ops[k], it == fuzz_of.end() ? nullptr : it->second});
    }
    return cases;
}
void PrintTo(const FuzzCase& c, std::ostream* os) { *os << c.name; }

class FuzzOp : public SeededTestWithParam<FuzzCase> {};

TEST_P(FuzzOp, MatchesReference) {
    const FuzzCase& c = GetParam();
    if (!c.fuzz) FAIL() << "catalogue op '" << c.info->name << "' (id " << c.info->op << ") has no entry in op_fuzzers()";
    if (c.fuzz->custom) return c.fuzz->custom(rng_);
    check(fuzz_spec(*c.fuzz, rng_));
}

INSTANTIATE_TEST_SUITE_P(Diff, FuzzOp, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<FuzzCase>& i) { return i.param.name; });

// Every op of the catalogue has a fuzzer (a new op cannot be forgotten), and no op has two.
TEST(FuzzCoverage, EveryCatalogueOpHasAFuzzer) {
    std::map<tgl_op, int> count;
    for (const OpFuzz& o : op_fuzzers()) ++count[o.op];
    uint32_t n = 0;
    const tgl::OpInfo* ops = tgl::all_ops(&n);
    std::string missing;
    for (uint32_t i = 0; i < n; ++i)
        if (!count.count(ops[i].op)) missing += std::string(missing.empty() ? "" : ", ") + ops[i].name;
    EXPECT_TRUE(missing.empty()) << "catalogue ops without an entry in op_fuzzers(): " << missing;
    for (const auto& [op, k] : count) {
        EXPECT_NE(tgl::find_op(op), nullptr) << "op_fuzzers() has op " << op << ", which is not in the catalogue";
        EXPECT_EQ(k, 1) << op_name(op) << " has " << k << " entries in op_fuzzers()";
    }
}

// ---- In place and matmul with beta: what the table above does not draw -------------------------

struct ElemOp {
    const char* name;
    tgl_op op;
    int arity;
    Gen a, b;
};

Spec in_place_spec(const ElemOp& o, Rng& rng) {
    Spec s;
    s.op = o.op;
    Shape ys = random_shape(rng, 0, 8, 3000);
    Shape bs = o.arity == 2 ? broadcastable(ys, rng) : Shape{};
    // In place, input 0 is the output: same shape, and no stride 0.
    View av = make_view(ys, random_layout(ys, rng, false));
    s.inputs.push_back(operand(av, rng, o.a));
    if (o.arity == 2) s.inputs.push_back(operand(random_view(bs, rng, true), rng, o.b));
    s.in_place = true;
    s.out = av;
    s.tolerance = tol::for_op(o.op);
    s.what = std::string(o.name) + " in place: a " + shape_str(ys) +
             (o.arity == 2 ? ", b " + shape_str(bs) : std::string()) + " -> " + shape_str(ys);
    return s;
}

Spec matmul_beta_spec(Rng& rng) {
    Spec s;
    s.op = TGL_OP_MATMUL;
    const std::vector<int64_t> dims = {1, 2, 3, 7, 16, 31, 33, 64};
    int64_t M = rng.pick(dims), N = rng.pick(dims), K = rng.pick(dims);
    if (rng.chance(0.05)) K = 0;
    tgl_matmul_params p{};
    p.struct_size = sizeof p;
    p.transpose_a = rng.chance(0.5);
    p.transpose_b = rng.chance(0.5);
    p.alpha = rng.chance(0.5) ? 1.0f : rng.uniformf(-2, 2);
    p.beta = rng.uniformf(-2, 2);
    Shape batch = random_shape(rng, 0, 4, 24);
    Shape ab = broadcastable(batch, rng), bb = broadcastable(batch, rng), cb = broadcast_shapes(ab, bb);
    Shape as = ab, bs = bb, cs = cb;
    as.push_back(p.transpose_a ? K : M);
    as.push_back(p.transpose_a ? M : K);
    bs.push_back(p.transpose_b ? N : K);
    bs.push_back(p.transpose_b ? K : N);
    cs.push_back(M);
    cs.push_back(N);
    s.params = param_bytes(p);
    s.inputs.push_back(operand(random_view(as, rng, true), rng, uniform(-1, 1)));
    s.inputs.push_back(operand(random_view(bs, rng, true), rng, uniform(-1, 1)));
    s.out = random_view(cs, rng, false);
    s.out_init.resize(static_cast<size_t>(numel(cs)));
    for (auto& v : s.out_init) v = rng.uniformf(-1, 1);
    s.tolerance = tol::kMatmul;
    char buf[128];
    std::snprintf(buf, sizeof buf, " M=%lld N=%lld K=%lld%s%s alpha=%g beta=%g", (long long)M, (long long)N,
                  (long long)K, p.transpose_a ? " A^T" : "", p.transpose_b ? " B^T" : "", double(p.alpha),
                  double(p.beta));
    s.what = "matmul" + std::string(buf) + ": A " + shape_str(as) + ", B " + shape_str(bs) + " -> C " + shape_str(cs);
    return s;
}

std::vector<Case> in_place_cases() {
    static const std::vector<ElemOp> ops = {
        {"relu", TGL_OP_RELU, 1, uniform(-150, 150), {}},  {"exp", TGL_OP_EXP, 1, uniform(-20, 20), {}},
        {"gelu", TGL_OP_GELU, 1, uniform(-6, 6), {}},      {"add", TGL_OP_ADD, 2, uniform(-1, 1), uniform(-1, 1)},
        {"mul", TGL_OP_MUL, 2, uniform(-2, 2), uniform(-2, 2)}, {"div", TGL_OP_DIV, 2, uniform(-1, 1), signed_uniform(0.5, 2)},
        {"maximum", TGL_OP_MAXIMUM, 2, uniform(-1, 1), uniform(-1, 1)}, {"pow", TGL_OP_POW, 2, uniform(0.5, 2), uniform(-3, 3)},
    };
    std::vector<Case> cases;
    const int n = cases_per_op();
    for (const ElemOp& o : ops)
        for (int i = 0; i < n; ++i)
            cases.push_back({std::string(o.name) + "_in_place_" + std::to_string(i), [&o](Rng& r) { return in_place_spec(o, r); }});
    for (int i = 0; i < 2 * n; ++i) cases.push_back({"matmul_beta_" + std::to_string(i), [](Rng& r) { return matmul_beta_spec(r); }});
    return cases;
}

class Fuzz : public SeededTestWithParam<Case> {};

TEST_P(Fuzz, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, Fuzz, ::testing::ValuesIn(in_place_cases()), case_name);

}  // namespace
}  // namespace diff
