// Unary elementwise ops: shapes with primes and 1s, rank 0 and 8, empty tensors, non-contiguous
// inputs and outputs, two value ranges per op, and special values.
#include "diff.h"

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

}  // namespace
}  // namespace diff
