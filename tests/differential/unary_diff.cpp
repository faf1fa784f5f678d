// The unary family: GLES against the CPU reference on seeded random inputs.
//
// Diff/Unary (abs .. silu, gelu both ways): shapes with primes and 1s, rank 0 and 8, empty
// tensors, non-contiguous inputs and outputs, two value ranges per op, and special values.
//
// Diff/Math, Diff/MathUlp (sign .. clamp): ranges that exercise each op (sin/cos up to 1e30 and
// next to multiples of pi/2, expm1/log1p next to 0, the branch points of softplus/hardswish/...,
// halfway cases of round), with non-contiguous, broadcast and odd-sized operands and special
// values; MathUlp bounds the worst element of each range in ulps as well, which NMSE alone would
// not. Ops that either plugin does not implement are skipped. (fmod, remainder and atan2 are in
// binary_diff.cpp.)
//
// Tolerances (NMSE, see tgl_test::tol):
//   kElementwise (1e-7): abs, neg, relu, sqrt, sign, floor, ceil, round, trunc, clamp, square,
//     leaky_relu, hardsigmoid, hardswish, reciprocal, rsqrt (<= 2 ulp).
//   kTranscendental (1e-6): sigmoid, tanh, exp, log, gelu, silu, elu, selu, celu, softplus, mish,
//     expm1, log1p, sin, cos, erf, asin, acos, atan, sinh, cosh, tan, asinh, acosh, atanh,
//     gelu_quick (polynomial approximations, a few ulp; MathUlp bounds the worst element).
//   step: kElementwise (exact: 0 or 1).
#include "diff.h"

#include <cstdio>

namespace diff {
namespace {

struct UnaryOp {
    const char* name;
    tgl_op op;
    int gelu;         // -1: no params; else tgl_gelu_params.approximate
    Gen primary;      // main value range (testing.md 1.4)
    const char* secondary_name;
    Gen secondary;
    double tolerance;
};

const std::vector<UnaryOp>& unary_ops() {
    static const std::vector<UnaryOp> ops = {
        {"abs", TGL_OP_ABS, -1, uniform(-150, 150), "small", uniform(-1, 1), tol::kElementwise},
        {"neg", TGL_OP_NEG, -1, uniform(-150, 150), "small", uniform(-1, 1), tol::kElementwise},
        {"relu", TGL_OP_RELU, -1, uniform(-150, 150), "small", uniform(-1e-3, 1e-3), tol::kElementwise},
        {"sigmoid", TGL_OP_SIGMOID, -1, uniform(-150, 150), "small", uniform(-5, 5), tol::kTranscendental},
        {"tanh", TGL_OP_TANH, -1, uniform(-150, 150), "small", uniform(-5, 5), tol::kTranscendental},
        // exp: no input near the overflow threshold (88.72), where a 1-ulp difference decides
        // between FLT_MAX-ish and inf; the "overflow" range below checks both sides of it.
        {"exp", TGL_OP_EXP, -1, uniform(-87, 87), "small", uniform(-5, 5), tol::kTranscendental},
        {"log", TGL_OP_LOG, -1, uniform(0.9, 1.1), "wide", uniform(0, 100), tol::kTranscendental},
        {"sqrt", TGL_OP_SQRT, -1, uniform(50, 100), "wide", uniform(0, 100), tol::kElementwise},
        {"gelu", TGL_OP_GELU, TGL_GELU_ERF, uniform(-150, 150), "small", uniform(-5, 5), tol::kTranscendental},
        {"gelu_tanh", TGL_OP_GELU, TGL_GELU_TANH, uniform(-150, 150), "small", uniform(-5, 5), tol::kTranscendental},
        {"silu", TGL_OP_SILU, -1, uniform(-150, 150), "small", uniform(-5, 5), tol::kTranscendental},
    };
    return ops;
}

const std::vector<Shape>& shapes() {
    static const std::vector<Shape> s = {{},        {1},          {7},  {13, 1, 17}, {2, 3, 5, 7},
                                         {2, 1, 3, 1, 2, 2, 1, 3}, {0}, {3, 0, 2},  {100003}};
    return s;
}

Spec unary_spec(const UnaryOp& u, const Shape& shape, Kind in, Kind out, const Gen& gen, Rng& rng) {
    Spec s;
    s.op = u.op;
    if (u.gelu >= 0) s.params = param_bytes(tgl_gelu_params{sizeof(tgl_gelu_params), uint32_t(u.gelu)});
    s.inputs.push_back(operand(view_of(shape, in, rng, true), rng, gen));
    s.out = view_of(shape, out, rng, false);
    s.tolerance = u.tolerance;
    s.what = std::string(u.name) + " of " + shape_str(shape) + " (input " + kind_name(in) + ", output " + kind_name(out) + ")";
    return s;
}

std::vector<Case> unary_cases() {
    std::vector<Case> cases;
    for (const UnaryOp& u : unary_ops()) {
        const std::string n = u.name;
        for (const Shape& sh : shapes())
            cases.push_back({n + "_" + shape_name(sh), [&u, sh](Rng& r) {
                                 return unary_spec(u, sh, Kind::Contiguous, Kind::Contiguous, u.primary, r);
                             }});
        const Shape s4 = {2, 3, 5, 7};
        for (Kind k : {Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Broadcast, Kind::Padded})
            cases.push_back({n + "_in_" + kind_name(k), [&u, s4, k](Rng& r) {
                                 return unary_spec(u, s4, k, Kind::Contiguous, u.primary, r);
                             }});
        for (Kind k : {Kind::Permuted, Kind::Stepped, Kind::Negative})
            cases.push_back({n + "_out_" + kind_name(k), [&u, s4, k](Rng& r) {
                                 return unary_spec(u, s4, Kind::Contiguous, k, u.primary, r);
                             }});
        cases.push_back({n + "_mixed_13x1x17", [&u](Rng& r) {
                             return unary_spec(u, {13, 1, 17}, Kind::Mixed, Kind::Mixed, u.primary, r);
                         }});
        cases.push_back({n + "_mixed_rank8", [&u](Rng& r) {
                             return unary_spec(u, {2, 1, 3, 1, 2, 2, 1, 3}, Kind::Mixed, Kind::Mixed, u.primary, r);
                         }});
        cases.push_back({n + "_range_" + u.secondary_name, [&u](Rng& r) {
                             return unary_spec(u, {4099}, Kind::Contiguous, Kind::Contiguous, u.secondary, r);
                         }});
        // NaN, +-inf, -0, +-1e30, +-1e-30 among values of the main range; NaN/inf positions must match.
        cases.push_back({n + "_specials", [&u](Rng& r) {
                             return unary_spec(u, {31, 33}, Kind::Contiguous, Kind::Contiguous, with_specials(u.primary, 0.3), r);
                         }});
    }
    // exp on both sides of its overflow threshold: inf above ~88.72, 0 below ~-103.97.
    cases.push_back({"exp_range_overflow", [](Rng& r) {
                         const UnaryOp& u = unary_ops()[5];
                         Gen g = [](Rng& q) { return q.chance(0.5) ? q.uniformf(89.5f, 1000.0f) : q.uniformf(-1000.0f, -105.0f); };
                         return unary_spec(u, {1021}, Kind::Contiguous, Kind::Contiguous, g, r);
                     }});
    // Large results (up to e^88 = 1.65e38), all still finite.
    cases.push_back({"exp_range_large", [](Rng& r) {
                         const UnaryOp& u = unary_ops()[5];
                         return unary_spec(u, {1021}, Kind::Contiguous, Kind::Contiguous, uniform(60, 88), r);
                     }});
    return cases;
}

class Unary : public SeededTestWithParam<Case> {};

TEST_P(Unary, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, Unary, ::testing::ValuesIn(unary_cases()), case_name);

// The GLES grid stride of the vec4 elementwise kernels other than two full-size inputs
// (elementwise.comp's GRID_STRIDE under TGL_TUNE_STREAM ug) on devices whose grid is tiny (3 or 5
// workgroups, blocks of 32 or 128 quads), so that small tensors take several strides and end in a
// partial block: lengths around the blocks and not a multiple of 4 (the ragged tail), in place,
// rank 2, an input or output off a 16-byte boundary (padded: the scalar kernel), and a row, a
// column and a scalar broadcast of a binary op.
class UnaryGridStride : public SeededTest {};

TEST_F(UnaryGridStride, MatchesReference) {
    Rng& rng = rng_;
    const UnaryOp* ops[3] = {&unary_ops()[2], &unary_ops()[5], &unary_ops()[8]};  // relu, exp, gelu
    for (const char* tune : {"wg32_v1_ug3", "wg32_v4_ug5"}) {
        SCOPED_TRACE(std::string("TGL_TUNE_STREAM=") + tune);
        Device& d = subject_device_with("TGL_TUNE_STREAM", tune);
        for (int64_t n : {4, 5, 127, 128, 129, 384, 385, 1023, 4099, 20483}) {
            const UnaryOp& u = *ops[n % 3];
            check(unary_spec(u, {n}, Kind::Contiguous, Kind::Contiguous, u.primary, rng), &d);
        }
        Spec in_place = unary_spec(*ops[1], {4099}, Kind::Contiguous, Kind::Contiguous, ops[1]->primary, rng);
        in_place.in_place = true;
        in_place.what += " (in place)";
        check(in_place, &d);
        check(unary_spec(*ops[2], {37, 128}, Kind::Contiguous, Kind::Contiguous, ops[2]->primary, rng), &d);
        for (Kind in : {Kind::Padded, Kind::Contiguous})
            check(unary_spec(*ops[0], {1001}, in, in == Kind::Padded ? Kind::Contiguous : Kind::Padded, ops[0]->primary, rng), &d);
        // A broadcast input of add: a row, a column, a scalar (the vec4 kernel's other kinds).
        for (const Shape& b : std::vector<Shape>{{64}, {24, 1}, {1}}) {
            Spec s;
            s.op = TGL_OP_ADD;
            s.inputs.push_back(operand(view_of({24, 64}, Kind::Contiguous, rng, true), rng, uniform(-10, 10)));
            s.inputs.push_back(operand(view_of(b, Kind::Contiguous, rng, true), rng, uniform(-10, 10)));
            s.out = view_of({24, 64}, Kind::Contiguous, rng, false);
            s.tolerance = tol::kElementwise;
            s.what = "add: a 24x64, b " + shape_str(b);
            check(s, &d);
        }
    }
}

// A grid stride of more workgroups than one dispatch row holds (65,535 along x on llvmpipe and at
// the minimum limits): 70,000 workgroups of 32 invocations, one quad each, over 70,001 blocks and
// a ragged tail, exp in place (a block run twice would be exp(exp(x))).
TEST_F(UnaryGridStride, PastMaxWorkgroupsPerDispatch) {
    Device& d = subject_device_with("TGL_TUNE_STREAM", "wg32_v1_ug70000");
    const UnaryOp& exp = unary_ops()[5];
    Spec s = unary_spec(exp, {70001 * 128 + 3}, Kind::Contiguous, Kind::Contiguous, exp.secondary, rng_);
    s.in_place = true;
    s.what += " (in place)";
    check(s, &d);
}

// buffer_copy and buffer_fill on the GLES plugin's buffer_bytes.comp under TGL_TUNE_STREAM's
// shapes: one workgroup per block (blocks of 32, 128 and 4096 quads: the default's) and a grid
// stride over blocks of 32 or 128 quads (cg), lengths around the blocks with 16-byte aligned and
// unaligned ends (the unaligned heads and tails go through the driver's copy and fill.comp), and
// glCopyBufferSubData alone (glcopy). Expected bytes are computed here; other plugins ignore the
// variable.
class BufferBytesTuned : public SeededTest {};

TEST_F(BufferBytesTuned, CopyAndFillMatchHost) {
    Rng& rng = rng_;
    for (const char* tune : {"wg32_v1_cg3", "wg32_v4_cg5", "wg32_v4", "wg64_v2_glcopy", "wg1024_v4"}) {
        SCOPED_TRACE(std::string("TGL_TUNE_STREAM=") + tune);
        Device& d = subject_device_with("TGL_TUNE_STREAM", tune);
        const uint64_t n = 300000;
        Buffer a(d, n), b(d, n);
        std::vector<uint8_t> wa(n), wb(n);
        for (auto& x : wa) x = uint8_t(rng.integer(0, 255));
        for (auto& x : wb) x = uint8_t(rng.integer(0, 255));
        d.upload(a.handle(), 0, wa.data(), n);
        d.upload(b.handle(), 0, wb.data(), n);
        for (uint64_t quads : {1, 31, 32, 33, 127, 128, 129, 640, 2047, 4096, 4097, 12293}) {
            const uint64_t len = 16 * quads + uint64_t(rng.integer(0, 1)) * uint64_t(rng.integer(1, 15));
            const uint64_t so = 16 * uint64_t(rng.integer(0, int64_t((n - len) / 16) - 1)) + (quads % 2 ? 0 : 4);
            const uint64_t doff = 16 * uint64_t(rng.integer(0, int64_t((n - len) / 16) - 1)) + (quads % 3 ? 0 : 8);
            SCOPED_TRACE("copy " + std::to_string(len) + " bytes from " + std::to_string(so) + " to " + std::to_string(doff));
            d.check(d.api().buffer_copy(d.handle(), a.handle(), so, b.handle(), doff, len), "buffer_copy");
            std::copy(wa.begin() + ptrdiff_t(so), wa.begin() + ptrdiff_t(so + len), wb.begin() + ptrdiff_t(doff));
            std::vector<uint8_t> got(n);
            d.download(b.handle(), 0, got.data(), n);
            ASSERT_TRUE(got == wb) << "buffer b differs from the expected bytes";
        }
        for (uint32_t size : {4u, 16u}) {
            uint8_t pattern[16];
            for (auto& x : pattern) x = uint8_t(rng.integer(0, 255));
            const uint64_t off = size * uint64_t(rng.integer(0, 7)), len = size * uint64_t(rng.integer(1000, 17000));
            SCOPED_TRACE("fill " + std::to_string(len) + " bytes at " + std::to_string(off) + " with a pattern of " +
                         std::to_string(size));
            d.fill(a.handle(), off, len, pattern, size);
            for (uint64_t i = 0; i < len; ++i) wa[size_t(off + i)] = pattern[i % size];
            std::vector<uint8_t> got(n);
            d.download(a.handle(), 0, got.data(), n);
            ASSERT_TRUE(got == wa) << "buffer a differs from the expected bytes";
        }
    }
}

// ----- the math ops -------------------------------------------------------------------------------

const double kPio2 = 1.57079632679489661923;

// Floats within a few ulp of k pi/2 for random k up to `kmax` (the hard cases of reduction).
Gen near_pio2_multiples(int64_t kmax) {
    return [kmax](Rng& r) {
        float v = float(double(r.integer(-kmax, kmax)) * kPio2);
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        bits = uint32_t(int64_t(bits) + r.integer(-3, 3));
        std::memcpy(&v, &bits, 4);
        return v;
    };
}
// Integers and halves (round's ties), scaled into [-n, n].
Gen halves(int64_t n) {
    return [n](Rng& r) { return float(r.integer(-2 * n, 2 * n)) * 0.5f; };
}

struct MathOp {
    const char* name;
    tgl_op op;
    std::vector<uint8_t> params;
    std::vector<std::pair<const char*, Gen>> ranges;  // the first is the main range
    double tolerance;
};

template <class P>
std::vector<uint8_t> pb(const P& p) { return param_bytes(p); }

const std::vector<MathOp>& math_ops() {
    using namespace tol;
    static const std::vector<MathOp> ops = {
        {"sign", TGL_OP_SIGN, {}, {{"main", uniform(-2, 2)}, {"ints", integers(-1, 1)}}, kElementwise},
        {"leaky_relu", TGL_OP_LEAKY_RELU, {}, {{"main", uniform(-150, 150)}}, kElementwise},
        {"leaky_relu_slope", TGL_OP_LEAKY_RELU, pb(tgl_leaky_relu_params{sizeof(tgl_leaky_relu_params), 0.2f}),
         {{"main", uniform(-150, 150)}}, kElementwise},
        {"elu", TGL_OP_ELU, {}, {{"main", uniform(-20, 20)}, {"near0", uniform(-1e-4, 1e-4)}}, kTranscendental},
        {"elu_alpha", TGL_OP_ELU, pb(tgl_elu_params{sizeof(tgl_elu_params), 0.3f}), {{"main", uniform(-20, 20)}},
         kTranscendental},
        {"selu", TGL_OP_SELU, {}, {{"main", uniform(-20, 20)}, {"near0", uniform(-1e-4, 1e-4)}}, kTranscendental},
        {"celu", TGL_OP_CELU, pb(tgl_elu_params{sizeof(tgl_elu_params), 1.7f}), {{"main", uniform(-20, 20)}},
         kTranscendental},
        {"celu_neg_alpha", TGL_OP_CELU, pb(tgl_elu_params{sizeof(tgl_elu_params), -2.5f}),
         {{"main", uniform(-20, 20)}}, kTranscendental},
        {"hardsigmoid", TGL_OP_HARDSIGMOID, {}, {{"main", uniform(-5, 5)}, {"ends", halves(4)}}, kElementwise},
        {"hardswish", TGL_OP_HARDSWISH, {}, {{"main", uniform(-5, 5)}, {"ends", halves(4)}}, kElementwise},
        {"softplus", TGL_OP_SOFTPLUS, {}, {{"main", uniform(-30, 30)}, {"threshold", uniform(19.5, 20.5)},
                                          {"negative", uniform(-100, -20)}}, kTranscendental},
        {"softplus_beta", TGL_OP_SOFTPLUS, pb(tgl_softplus_params{sizeof(tgl_softplus_params), 0.5f, 3.0f, 0}),
         {{"main", uniform(-30, 30)}, {"threshold", uniform(5.5, 6.5)}}, kTranscendental},
        {"softplus_neg_beta", TGL_OP_SOFTPLUS, pb(tgl_softplus_params{sizeof(tgl_softplus_params), -1.5f, 10.0f, 0}),
         {{"main", uniform(-30, 30)}}, kTranscendental},
        {"mish", TGL_OP_MISH, {}, {{"main", uniform(-20, 20)}, {"wide", uniform(-150, 150)}, {"small", uniform(-1, 1)}},
         kTranscendental},
        {"expm1", TGL_OP_EXPM1, {}, {{"main", uniform(-5, 5)}, {"near0", uniform(-1e-3, 1e-3)},
                                    {"tiny", log_uniform(-30, -5)}, {"wide", uniform(-87, 87)}},
         kTranscendental},
        {"log1p", TGL_OP_LOG1P, {}, {{"main", uniform(-0.99, 10)}, {"near0", uniform(-1e-3, 1e-3)},
                                    {"tiny", log_uniform(-30, -5)}, {"wide", uniform(-1, 1e6)}},
         kTranscendental},
        {"rsqrt", TGL_OP_RSQRT, {}, {{"main", uniform(0, 100)}, {"wide", log_uniform(-37, 38)}}, kElementwise},
        {"reciprocal", TGL_OP_RECIPROCAL, {}, {{"main", signed_uniform(0.01, 100)}, {"wide", log_uniform(-37, 38)}},
         kElementwise},
        {"square", TGL_OP_SQUARE, {}, {{"main", uniform(-100, 100)}, {"wide", log_uniform(-20, 19)}}, kElementwise},
        {"sin", TGL_OP_SIN, {}, {{"main", uniform(-10, 10)}, {"large", log_uniform(1, 30)},
                                {"near_pio2", near_pio2_multiples(1000)}, {"near_pio2_far", near_pio2_multiples(1 << 22)},
                                {"huge", log_uniform(30, 38.5)}}, kTranscendental},
        {"cos", TGL_OP_COS, {}, {{"main", uniform(-10, 10)}, {"large", log_uniform(1, 30)},
                                {"near_pio2", near_pio2_multiples(1000)}, {"near_pio2_far", near_pio2_multiples(1 << 22)},
                                {"huge", log_uniform(30, 38.5)}}, kTranscendental},
        {"erf", TGL_OP_ERF, {}, {{"main", uniform(-5, 5)}, {"small", uniform(-1e-3, 1e-3)}}, kTranscendental},
        {"floor", TGL_OP_FLOOR, {}, {{"main", uniform(-100, 100)}, {"halves", halves(20)}, {"wide", log_uniform(-3, 10)}},
         kElementwise},
        {"ceil", TGL_OP_CEIL, {}, {{"main", uniform(-100, 100)}, {"halves", halves(20)}, {"wide", log_uniform(-3, 10)}},
         kElementwise},
        {"round", TGL_OP_ROUND, {}, {{"main", uniform(-100, 100)}, {"halves", halves(20)}, {"wide", log_uniform(-3, 10)}},
         kElementwise},
        {"trunc", TGL_OP_TRUNC, {}, {{"main", uniform(-100, 100)}, {"halves", halves(20)}, {"wide", log_uniform(-3, 10)}},
         kElementwise},
        {"clamp", TGL_OP_CLAMP, pb(tgl_clamp_params{sizeof(tgl_clamp_params), -1.5f, 2.25f, 0}),
         {{"main", uniform(-5, 5)}}, kElementwise},
        {"clamp_default", TGL_OP_CLAMP, {}, {{"main", uniform(-5, 5)}}, kElementwise},
        {"clamp_inverted", TGL_OP_CLAMP, pb(tgl_clamp_params{sizeof(tgl_clamp_params), 1.0f, -1.0f, 0}),
         {{"main", uniform(-5, 5)}}, kElementwise},
        // ABI 1.3: each op's branch points (0.5 of asin/acos, 1 of atan, 9 of sinh/cosh, pi/4 and the
        // poles of tan, 4096 of asinh/acosh), next to 0 and next to the ends of the domain.
        {"asin", TGL_OP_ASIN, {}, {{"main", uniform(-1, 1)}, {"near0", uniform(-1e-3, 1e-3)},
                                  {"tiny", log_uniform(-30, -3)}, {"ends", signed_uniform(0.999, 1.0)},
                                  {"outside", signed_uniform(1.0, 3.0)}}, kTranscendental},
        {"acos", TGL_OP_ACOS, {}, {{"main", uniform(-1, 1)}, {"near_half", signed_uniform(0.49, 0.51)},
                                  {"ends", signed_uniform(0.999, 1.0)}}, kTranscendental},
        {"atan", TGL_OP_ATAN, {}, {{"main", uniform(-10, 10)}, {"near1", signed_uniform(0.9, 1.1)},
                                  {"tiny", log_uniform(-30, -3)}, {"wide", log_uniform(-3, 38)}}, kTranscendental},
        {"sinh", TGL_OP_SINH, {}, {{"main", uniform(-10, 10)}, {"near0", uniform(-1e-3, 1e-3)},
                                  {"tiny", log_uniform(-30, -3)}, {"large", signed_uniform(8, 89.4)},
                                  {"overflow", signed_uniform(89.5, 200)}}, kTranscendental},
        {"cosh", TGL_OP_COSH, {}, {{"main", uniform(-10, 10)}, {"near0", uniform(-1e-3, 1e-3)},
                                  {"large", signed_uniform(8, 89.4)}}, kTranscendental},
        {"tan", TGL_OP_TAN, {}, {{"main", uniform(-1.5, 1.5)}, {"large", log_uniform(0, 30)},
                                {"near_pio2", near_pio2_multiples(1000)}, {"tiny", log_uniform(-30, -3)},
                                {"huge", log_uniform(30, 38.5)}}, kTranscendental},
        {"asinh", TGL_OP_ASINH, {}, {{"main", uniform(-10, 10)}, {"near0", uniform(-1e-3, 1e-3)},
                                    {"tiny", log_uniform(-30, -3)}, {"branch", signed_uniform(4000, 4200)},
                                    {"wide", log_uniform(-3, 38.5)}}, kTranscendental},
        {"acosh", TGL_OP_ACOSH, {}, {{"main", uniform(1, 10)}, {"near1", uniform(1, 1.001)},
                                    {"branch", uniform(4000, 4200)}, {"wide", log_uniform(0, 38.5)},
                                    {"below1", uniform(-2, 1)}}, kTranscendental},
        {"atanh", TGL_OP_ATANH, {}, {{"main", uniform(-1, 1)}, {"near0", uniform(-1e-3, 1e-3)},
                                    {"tiny", log_uniform(-30, -3)}, {"ends", signed_uniform(0.999, 1.0)},
                                    {"outside", signed_uniform(1.0, 3.0)}}, kTranscendental},
        {"gelu_quick", TGL_OP_GELU_QUICK, {}, {{"main", uniform(-20, 20)}, {"wide", uniform(-150, 150)},
                                              {"small", uniform(-1, 1)}}, kTranscendental},
        {"step", TGL_OP_STEP, {}, {{"main", uniform(-2, 2)}, {"tiny", log_uniform(-45, -30)}}, kElementwise},
    };
    return ops;
}


Spec unary_spec(const MathOp& u, const Shape& shape, Kind in, Kind out, const Gen& gen, Rng& rng) {
    Spec s;
    s.op = u.op;
    s.params = u.params;
    s.inputs.push_back(operand(view_of(shape, in, rng, true), rng, gen));
    s.out = view_of(shape, out, rng, false);
    s.tolerance = u.tolerance;
    s.what = std::string(u.name) + " of " + shape_str(shape) + " (input " + kind_name(in) + ", output " + kind_name(out) + ")";
    return s;
}

struct MathCase {
    std::string name;
    tgl_op op;
    std::function<Spec(Rng&)> build;
};

std::vector<MathCase> math_cases() {
    std::vector<MathCase> cases;
    const Kind C = Kind::Contiguous;
    for (const MathOp& u : math_ops()) {
        const std::string n = u.name;
        const Gen& g = u.ranges[0].second;
        auto add = [&](const std::string& name, Shape sh, Kind in, Kind out, const Gen& gen) {
            cases.push_back({n + "_" + name, u.op, [&u, sh, in, out, gen](Rng& r) { return unary_spec(u, sh, in, out, gen, r); }});
        };
        for (const Shape& sh : std::vector<Shape>{{}, {7}, {13, 1, 17}, {2, 1, 3, 1, 2, 2, 1, 3}, {0}, {100003}})
            add(shape_name(sh), sh, C, C, g);
        const Shape s4 = {2, 3, 5, 7};
        for (Kind k : {Kind::Permuted, Kind::Negative, Kind::Broadcast, Kind::Padded}) add(std::string("in_") + kind_name(k), s4, k, C, g);
        add("out_stepped", s4, C, Kind::Stepped, g);
        add("mixed", {13, 1, 17}, Kind::Mixed, Kind::Mixed, g);
        for (size_t i = 1; i < u.ranges.size(); ++i) add(std::string("range_") + u.ranges[i].first, {4099}, C, C, u.ranges[i].second);
        add("specials", {31, 33}, C, C, with_specials(g, 0.3));
    }
    return cases;
}

std::string math_case_name(const ::testing::TestParamInfo<MathCase>& info) { return info.param.name; }
void PrintTo(const MathCase& c, std::ostream* os) { *os << c.name; }

class Math : public SeededTestWithParam<MathCase> {};

TEST_P(Math, MatchesReference) {
    if (!both_support(GetParam().op)) GTEST_SKIP() << "op not implemented by both plugins";
    check(GetParam().build(rng_));
}

INSTANTIATE_TEST_SUITE_P(Diff, Math, ::testing::ValuesIn(math_cases()), math_case_name);

// The worst element of every range of every math op, in ulps (diff.h: expect_worst_ulp_within).
// Bounds on llvmpipe with margin; each op's worst measured value is printed by the test.
double max_ulp_for(const std::string& op) {
    static const std::vector<std::pair<const char*, double>> b = {
        {"sign", 0},      {"leaky_relu", 0},  {"leaky_relu_slope", 0}, {"elu", 4},       {"elu_alpha", 4},
        {"selu", 4},      {"celu", 8},        {"celu_neg_alpha", 8},   {"hardsigmoid", 2}, {"hardswish", 3},
        {"softplus", 8},  {"softplus_beta", 64}, {"softplus_neg_beta", 64}, {"mish", 8},   {"expm1", 4},
        {"log1p", 4},     {"rsqrt", 2},       {"reciprocal", 3},       {"square", 0},    {"sin", 4},
        {"cos", 4},       {"erf", 4},         {"floor", 0},            {"ceil", 0},      {"round", 0},
        {"trunc", 0},     {"clamp", 0},       {"clamp_default", 0},    {"clamp_inverted", 0},
        // ABI 1.3: measured 1.2 to 3.3 ulp on llvmpipe (docs/ops.md); 6 leaves room for GPUs whose
        // division and sqrt are not correctly rounded.
        {"asin", 6},      {"acos", 6},        {"atan", 6},             {"sinh", 6},      {"cosh", 6},
        {"tan", 6},       {"asinh", 6},       {"acosh", 6},            {"atanh", 6},     {"gelu_quick", 6},
        {"step", 0}};
    for (const auto& u : b)
        if (op == u.first) return u.second;
    return 0;
}

std::vector<UlpCase> ulp_cases() {
    std::vector<UlpCase> cases;
    for (const MathOp& u : math_ops())
        for (const auto& r : u.ranges) {
            Gen g = r.second;
            cases.push_back({std::string(u.name) + "_" + r.first, u.name, r.first, u.op, [&u, g](Rng& rng) {
                                 return unary_spec(u, {4099}, Kind::Contiguous, Kind::Contiguous, g, rng);
                             }});
        }
    return cases;
}

class MathUlp : public SeededTestWithParam<UlpCase> {};

TEST_P(MathUlp, WorstElementWithinBound) {
    if (!both_support(GetParam().op)) GTEST_SKIP() << "op not implemented by both plugins";
    expect_worst_ulp_within(GetParam(), rng_, max_ulp_for(GetParam().op_name));
}

INSTANTIATE_TEST_SUITE_P(Diff, MathUlp, ::testing::ValuesIn(ulp_cases()), ulp_case_name);

}  // namespace
}  // namespace diff
