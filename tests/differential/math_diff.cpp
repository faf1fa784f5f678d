// The float math ops (sign .. clamp, fmod, remainder, atan2): GLES against the CPU reference on
// ranges that exercise each op (sin/cos up to 1e30 and next to multiples of pi/2, expm1/log1p
// next to 0, the branch points of softplus/hardswish/..., halfway cases of round, fmod/remainder
// with mixed signs and b much smaller than a), with non-contiguous, broadcast and odd-sized
// operands and special values. Ops that either plugin does not implement are skipped.
//
// Tolerances (NMSE, see tgl_test::tol):
//   kElementwise (1e-7): sign, floor, ceil, round, trunc, clamp, square, leaky_relu, fmod,
//     remainder (exact on the GPU), hardsigmoid, hardswish, reciprocal, rsqrt (<= 2 ulp).
//   kTranscendental (1e-6): elu, selu, celu, softplus, mish, expm1, log1p, sin, cos, erf, atan2
//     (polynomial approximations, a few ulp). The "Ulp" cases below bound the worst element in
//     ulps as well, which NMSE alone would not.
#include "diff.h"

#include <cstdio>

namespace diff {
namespace {

bool both_support(tgl_op op) {
    for (Role r : {Role::Reference, Role::Subject}) {
        tgl_op_caps caps;
        std::memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        if (plugin(r).api().query_op(op, &caps) != TGL_OK || !caps.supported) return false;
    }
    return true;
}

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
// Random magnitude 10^U(lo, hi) with a random sign.
Gen log_uniform(double lo, double hi) {
    return [lo, hi](Rng& r) {
        float v = float(std::pow(10.0, r.uniform(lo, hi)));
        return r.chance(0.5) ? -v : v;
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

const std::vector<MathOp>& unary_ops() {
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
    };
    return ops;
}

struct MathBinary {
    const char* name;
    tgl_op op;
    std::vector<std::tuple<const char*, Gen, Gen>> ranges;  // the first is the main range
    double tolerance;
};

const std::vector<MathBinary>& binary_ops() {
    using namespace tol;
    static const std::vector<MathBinary> ops = {
        {"fmod", TGL_OP_FMOD, {{"main", uniform(-10, 10), signed_uniform(0.5, 3)},
                               {"b_small", log_uniform(-2, 8), log_uniform(-6, -1)},
                               {"b_tiny", log_uniform(20, 38), log_uniform(-30, -3)},
                               {"ints", integers(-20, 20), integers(-5, 5)}},
         kElementwise},
        {"remainder", TGL_OP_REMAINDER, {{"main", uniform(-10, 10), signed_uniform(0.5, 3)},
                                         {"b_small", log_uniform(-2, 8), log_uniform(-6, -1)},
                                         {"b_tiny", log_uniform(20, 38), log_uniform(-30, -3)},
                                         {"ints", integers(-20, 20), integers(-5, 5)}},
         kElementwise},
        {"atan2", TGL_OP_ATAN2, {{"main", uniform(-3, 3), uniform(-3, 3)},
                                 {"wide", log_uniform(-30, 30), log_uniform(-30, 30)},
                                 {"axes", integers(-1, 1), integers(-1, 1)}},
         kTranscendental},
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

Spec binary_spec(const MathBinary& o, const Shape& as, const Shape& bs, Kind ka, Kind kb, Kind ky, const Gen& ga,
                 const Gen& gb, Rng& rng) {
    Spec s;
    s.op = o.op;
    s.inputs.push_back(operand(view_of(as, ka, rng, true), rng, ga));
    s.inputs.push_back(operand(view_of(bs, kb, rng, true), rng, gb));
    Shape ys = broadcast_shapes(as, bs);
    s.out = view_of(ys, ky, rng, false);
    s.tolerance = o.tolerance;
    s.what = std::string(o.name) + ": a " + shape_str(as) + " (" + kind_name(ka) + "), b " + shape_str(bs) + " (" +
             kind_name(kb) + ") -> " + shape_str(ys) + " (" + kind_name(ky) + ")";
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
    for (const MathOp& u : unary_ops()) {
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
    for (const MathBinary& o : binary_ops()) {
        const std::string n = o.name;
        const Gen& ga = std::get<1>(o.ranges[0]);
        const Gen& gb = std::get<2>(o.ranges[0]);
        auto add = [&](const std::string& name, Shape as, Shape bs, Kind ka, Kind kb, Kind ky, const Gen& a, const Gen& b) {
            cases.push_back({n + "_" + name, o.op, [&o, as, bs, ka, kb, ky, a, b](Rng& r) {
                                 return binary_spec(o, as, bs, ka, kb, ky, a, b, r);
                             }});
        };
        for (const Shape& sh : std::vector<Shape>{{}, {7}, {13, 1, 17}, {0}, {100003}}) add(shape_name(sh), sh, sh, C, C, C, ga, gb);
        const Shape s4 = {2, 3, 5, 7};
        add("bcast_b", s4, {5, 1}, C, C, C, ga, gb);
        add("bcast_both", {13, 1, 17}, {13, 5, 1}, C, C, C, ga, gb);
        add("rank8", {2, 1, 3, 1, 2, 2, 1, 3}, {3, 2, 1, 2, 4, 1}, Kind::Mixed, Kind::Mixed, Kind::Mixed, ga, gb);
        add("permuted", s4, s4, Kind::Permuted, Kind::Negative, Kind::Stepped, ga, gb);
        add("stride0", s4, s4, Kind::Broadcast, Kind::Padded, C, ga, gb);
        for (size_t i = 1; i < o.ranges.size(); ++i)
            add(std::string("range_") + std::get<0>(o.ranges[i]), {4099}, {4099}, C, C, C, std::get<1>(o.ranges[i]),
                std::get<2>(o.ranges[i]));
        cases.push_back({n + "_special_pairs", o.op, [&o, ga, gb](Rng& r) {
                             Spec s = binary_spec(o, {15, 1}, {1, 15}, Kind::Contiguous, Kind::Contiguous,
                                                  Kind::Contiguous, ga, gb, r);
                             s.inputs[0].storage = special_values();
                             s.inputs[1].storage = special_values();
                             s.what += " over every pair of special values";
                             return s;
                         }});
        add("specials", {31, 33}, {33}, C, C, C, with_specials(ga, 0.2), with_specials(gb, 0.2));
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

// ----- worst element in ulps ---------------------------------------------------------------------
// NMSE hides a few bad elements among many good ones. Here every range of every op is run on 4099
// contiguous elements and the worst finite element must be within max_ulp of the reference (the
// f32 rounding of the double result). Results below 2^-100 in magnitude (tiny values a GPU may
// flush) are skipped. The measured
// worst values are printed.

int64_t ordered(float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? -int64_t(i & 0x7fffffff) : int64_t(i);
}

double ulp_diff(float a, float b) { return double(std::llabs(ordered(a) - ordered(b))); }

struct UlpBound {
    const char* name;
    double max_ulp;
};

// Bounds on llvmpipe with margin; each op's worst measured value is printed by the test.
double max_ulp_for(const std::string& op) {
    static const std::vector<UlpBound> b = {
        {"sign", 0},      {"leaky_relu", 0},  {"leaky_relu_slope", 0}, {"elu", 4},       {"elu_alpha", 4},
        {"selu", 4},      {"celu", 8},        {"celu_neg_alpha", 8},   {"hardsigmoid", 2}, {"hardswish", 3},
        {"softplus", 8},  {"softplus_beta", 64}, {"softplus_neg_beta", 64}, {"mish", 8},   {"expm1", 4},
        {"log1p", 4},     {"rsqrt", 2},       {"reciprocal", 3},       {"square", 0},    {"sin", 4},
        {"cos", 4},       {"erf", 4},         {"floor", 0},            {"ceil", 0},      {"round", 0},
        {"trunc", 0},     {"clamp", 0},       {"clamp_default", 0},    {"clamp_inverted", 0},
        {"fmod", 0},      {"remainder", 0},   {"atan2", 4}};
    for (const UlpBound& u : b)
        if (op == u.name) return u.max_ulp;
    return 0;
}

struct UlpCase {
    std::string name, op_name, range;
    tgl_op op;
    std::function<Spec(Rng&)> build;
};

std::vector<UlpCase> ulp_cases() {
    std::vector<UlpCase> cases;
    for (const MathOp& u : unary_ops())
        for (const auto& r : u.ranges) {
            Gen g = r.second;
            cases.push_back({std::string(u.name) + "_" + r.first, u.name, r.first, u.op, [&u, g](Rng& rng) {
                                 return unary_spec(u, {4099}, Kind::Contiguous, Kind::Contiguous, g, rng);
                             }});
        }
    for (const MathBinary& o : binary_ops())
        for (const auto& r : o.ranges) {
            Gen ga = std::get<1>(r), gb = std::get<2>(r);
            cases.push_back({std::string(o.name) + "_" + std::get<0>(r), o.name, std::get<0>(r), o.op,
                             [&o, ga, gb](Rng& rng) {
                                 return binary_spec(o, {4099}, {4099}, Kind::Contiguous, Kind::Contiguous,
                                                    Kind::Contiguous, ga, gb, rng);
                             }});
        }
    return cases;
}

std::string ulp_case_name(const ::testing::TestParamInfo<UlpCase>& info) { return info.param.name; }
void PrintTo(const UlpCase& c, std::ostream* os) { *os << c.name; }

class MathUlp : public SeededTestWithParam<UlpCase> {};

TEST_P(MathUlp, WorstElementWithinBound) {
    const UlpCase& c = GetParam();
    if (!both_support(c.op)) GTEST_SKIP() << "op not implemented by both plugins";
    Spec spec = c.build(rng_);
    SCOPED_TRACE(describe(spec));
    std::vector<float> want = run_on(Role::Reference, spec);
    std::vector<float> got = run_on(Role::Subject, spec);
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i]) || std::isnan(got[i]) || std::isinf(want[i]) || std::isinf(got[i])) {
            EXPECT_EQ(std::isnan(want[i]), std::isnan(got[i])) << "element " << i;
            if (!std::isnan(want[i])) {
                EXPECT_EQ(want[i], got[i]) << "element " << i;
            }
            continue;
        }
        if (std::fabs(want[i]) < 7.888609e-31f && std::fabs(got[i]) < 7.888609e-31f) continue;  // both below 2^-100
        double d = ulp_diff(got[i], want[i]);
        if (d > worst) {
            worst = d;
            at = i;
        }
    }
    std::printf("[ ulp ] %-20s %-16s worst %.0f ulp (element %zu: got %s, want %s)\n", c.op_name.c_str(),
                c.range.c_str(), worst, at, fmt(got[at]).c_str(), fmt(want[at]).c_str());
    EXPECT_LE(worst, max_ulp_for(c.op_name)) << "element " << at << ": got " << fmt(got[at]) << ", want "
                                             << fmt(want[at]);
}

INSTANTIATE_TEST_SUITE_P(Diff, MathUlp, ::testing::ValuesIn(ulp_cases()), ulp_case_name);

}  // namespace
}  // namespace diff
