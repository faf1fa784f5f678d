// The binary family (add .. atan2; comparisons and logical ops: dtype_diff.cpp): equal shapes,
// broadcasting on every axis and across ranks, non-contiguous operands and outputs, empty tensors,
// op-specific value ranges and every pair of special values; fmod, remainder and atan2 over ranges
// that exercise each (Diff/Binary), with their worst element in ulps (Diff/BinaryUlp).
#include "diff.h"

#include <tuple>
#include <utility>

namespace diff {
namespace {

struct BinaryOp {
    const char* name;
    tgl_op op;
    Gen a, b;
    double tolerance;
};

const std::vector<BinaryOp>& binary_ops() {
    static const std::vector<BinaryOp> ops = {
        {"add", TGL_OP_ADD, uniform(-1, 1), uniform(-1, 1), tol::kElementwise},
        {"sub", TGL_OP_SUB, uniform(-1, 1), uniform(-1, 1), tol::kElementwise},
        {"mul", TGL_OP_MUL, uniform(-2, 2), uniform(-2, 2), tol::kElementwise},
        {"div", TGL_OP_DIV, uniform(-1, 1), signed_uniform(0.5, 2), tol::kElementwise},
        {"maximum", TGL_OP_MAXIMUM, uniform(-1, 1), uniform(-1, 1), tol::kElementwise},
        {"minimum", TGL_OP_MINIMUM, uniform(-1, 1), uniform(-1, 1), tol::kElementwise},
        {"pow", TGL_OP_POW, uniform(0.5, 2), uniform(-3, 3), tol::kTranscendental},
    };
    return ops;
}

struct Layouts {
    Kind a = Kind::Contiguous, b = Kind::Contiguous, out = Kind::Contiguous;
};

Spec binary_spec(const BinaryOp& o, const Shape& as, const Shape& bs, Layouts l, const Gen& ga, const Gen& gb, Rng& rng) {
    Spec s;
    s.op = o.op;
    s.inputs.push_back(operand(view_of(as, l.a, rng, true), rng, ga));
    s.inputs.push_back(operand(view_of(bs, l.b, rng, true), rng, gb));
    Shape ys = broadcast_shapes(as, bs);
    s.out = view_of(ys, l.out, rng, false);
    s.tolerance = o.tolerance;
    s.what = std::string(o.name) + ": a " + shape_str(as) + " (" + kind_name(l.a) + "), b " + shape_str(bs) + " (" +
             kind_name(l.b) + ") -> " + shape_str(ys) + " (" + kind_name(l.out) + ")";
    return s;
}

std::vector<Case> binary_cases() {
    std::vector<Case> cases;
    const std::vector<Shape> same = {{}, {1}, {7}, {13, 1, 17}, {2, 3, 5, 7}, {2, 1, 3, 1, 2, 2, 1, 3}, {0}, {3, 0, 2}, {100003}};
    const Shape s4 = {2, 3, 5, 7};
    for (const BinaryOp& o : binary_ops()) {
        const std::string n = o.name;
        auto add = [&](const std::string& name, Shape as, Shape bs, Layouts l) {
            cases.push_back({n + "_" + name, [&o, as, bs, l](Rng& r) { return binary_spec(o, as, bs, l, o.a, o.b, r); }});
        };
        for (const Shape& sh : same) add(shape_name(sh), sh, sh, {});
        // Broadcasting on every axis, of a and of b in turn.
        for (size_t d = 0; d < s4.size(); ++d) {
            Shape one = s4;
            one[d] = 1;
            add("bcast_a_axis" + std::to_string(d), one, s4, {});
            add("bcast_b_axis" + std::to_string(d), s4, one, {});
        }
        // Operands of different ranks, and both broadcasting at once.
        add("rank_2_vs_4", {5, 7}, s4, {});
        add("rank_4_vs_1", s4, {7}, {});
        add("rank_0_vs_3", {}, {13, 1, 17}, {});
        add("rank_3_vs_0", {13, 1, 17}, {}, {});
        add("both_bcast", {13, 1, 17}, {13, 5, 1}, {});
        add("rank_8_vs_6", {2, 1, 3, 1, 2, 2, 1, 3}, {3, 2, 1, 2, 4, 1}, {});
        add("empty_bcast", {0, 3}, {3}, {});
        // Rows of a multiple of 4 (the GLES vec4 kernel's row, column and scalar reads), and the same
        // with padded rows (its general path).
        add("rows4_row_b", {3, 8}, {8}, {});
        add("rows4_row_a", {8}, {5, 8}, {});
        add("rows4_col_b", {7, 12}, {7, 1}, {});
        add("rows4_col_a", {7, 1}, {7, 12}, {});
        add("rows4_scalar_and_row", {1, 1}, {129, 1028}, {});
        add("rows4_col_and_row", {31, 1}, {1, 64}, {});
        add("rows4_padded", {6, 8}, {8}, {Kind::Padded, Kind::Contiguous, Kind::Contiguous});
        add("rows4_out_padded", {6, 8}, {6, 1}, {Kind::Contiguous, Kind::Contiguous, Kind::Padded});
        add("empty_both_bcast", {1, 0}, {5, 1}, {});
        // Layouts.
        add("a_permuted", s4, s4, {Kind::Permuted, Kind::Contiguous, Kind::Contiguous});
        add("b_stepped", s4, s4, {Kind::Contiguous, Kind::Stepped, Kind::Contiguous});
        add("negstrides", s4, s4, {Kind::Negative, Kind::Negative, Kind::Contiguous});
        add("a_stride0", s4, s4, {Kind::Broadcast, Kind::Contiguous, Kind::Contiguous});
        add("padded", s4, s4, {Kind::Padded, Kind::Padded, Kind::Padded});
        add("out_stepped", s4, s4, {Kind::Contiguous, Kind::Contiguous, Kind::Stepped});
        add("out_permuted", s4, s4, {Kind::Contiguous, Kind::Contiguous, Kind::Permuted});
        add("out_negstride", s4, s4, {Kind::Contiguous, Kind::Contiguous, Kind::Negative});
        add("mixed", s4, s4, {Kind::Mixed, Kind::Mixed, Kind::Mixed});
        add("mixed_bcast", {13, 1, 17}, {13, 5, 1}, {Kind::Mixed, Kind::Mixed, Kind::Mixed});
        add("mixed_rank8", {2, 1, 3, 1, 2, 2, 1, 3}, {3, 2, 1, 2, 4, 1}, {Kind::Mixed, Kind::Mixed, Kind::Mixed});
        // Every pair of special values: a (15, 1) against b (1, 15).
        cases.push_back({n + "_special_pairs", [&o](Rng& r) {
                             Spec s = binary_spec(o, {15, 1}, {1, 15}, {}, o.a, o.b, r);
                             s.inputs[0].storage = special_values();
                             s.inputs[1].storage = special_values();
                             s.what += " over every pair of special values";
                             return s;
                         }});
        // Special values sprinkled among ordinary ones, with broadcasting.
        cases.push_back({n + "_specials", [&o](Rng& r) {
                             return binary_spec(o, {31, 33}, {33}, {}, with_specials(o.a, 0.2), with_specials(o.b, 0.2), r);
                         }});
    }
    // Op-specific value ranges.
    const BinaryOp& mx = binary_ops()[4];
    const BinaryOp& mn = binary_ops()[5];
    const BinaryOp& pw = binary_ops()[6];
    const BinaryOp& dv = binary_ops()[3];
    const BinaryOp& ml = binary_ops()[2];
    cases.push_back({"maximum_ties", [&mx](Rng& r) { return binary_spec(mx, {63, 65}, {63, 65}, {}, integers(-3, 3), integers(-3, 3), r); }});
    cases.push_back({"minimum_ties", [&mn](Rng& r) { return binary_spec(mn, {63, 65}, {65}, {}, integers(-3, 3), integers(-3, 3), r); }});
    cases.push_back({"pow_negative_base_integer_exponent", [&pw](Rng& r) {
                         return binary_spec(pw, {63, 65}, {63, 65}, {}, signed_uniform(0.5, 2), integers(-3, 3), r);
                     }});
    cases.push_back({"pow_negative_base_integer_exponent_bcast", [&pw](Rng& r) {
                         return binary_spec(pw, {63, 65}, {65}, {}, uniform(-2, 2), integers(-5, 5), r);
                     }});
    cases.push_back({"pow_integer_base_and_exponent", [&pw](Rng& r) {
                         return binary_spec(pw, {4099}, {4099}, {}, integers(-9, 9), integers(-4, 6), r);
                     }});
    cases.push_back({"pow_negative_base_fractional_exponent", [&pw](Rng& r) {
                         return binary_spec(pw, {1021}, {1021}, {}, uniform(-2, -0.5), uniform(-3, 3), r);
                     }});
    cases.push_back({"div_wide", [&dv](Rng& r) {
                         return binary_spec(dv, {4099}, {4099}, {}, uniform(-1e3, 1e3), signed_uniform(1e-3, 1e3), r);
                     }});
    cases.push_back({"mul_near_one", [&ml](Rng& r) {
                         return binary_spec(ml, {4099}, {4099}, {}, uniform(0.9, 1.1), uniform(0.9, 1.1), r);
                     }});
    cases.push_back({"div_near_one", [&dv](Rng& r) {
                         return binary_spec(dv, {4099}, {4099}, {}, uniform(0.9, 1.1), uniform(0.9, 1.1), r);
                     }});
    return cases;
}



// ----- fmod, remainder, atan2 --------------------------------------------------------------------
// Ranges that exercise each op (mixed signs, b much smaller than a, integers, the axes of atan2),
// broadcast, non-contiguous and odd-sized operands, every pair of special values; BinaryUlp bounds
// the worst element of each range in ulps (diff.h: expect_worst_ulp_within). fmod and remainder
// are exact on the GPU (kElementwise), atan2 a polynomial approximation (kTranscendental).

struct RangedBinaryOp {
    const char* name;
    tgl_op op;
    std::vector<std::tuple<const char*, Gen, Gen>> ranges;  // the first is the main range
    double tolerance;
    double max_ulp;  // on llvmpipe with margin; the measured worst is printed by BinaryUlp
};

const std::vector<RangedBinaryOp>& ranged_ops() {
    using namespace tol;
    static const std::vector<RangedBinaryOp> ops = {
        {"fmod", TGL_OP_FMOD, {{"main", uniform(-10, 10), signed_uniform(0.5, 3)},
                               {"b_small", log_uniform(-2, 8), log_uniform(-6, -1)},
                               {"b_tiny", log_uniform(20, 38), log_uniform(-30, -3)},
                               {"ints", integers(-20, 20), integers(-5, 5)}},
         kElementwise, 0},
        {"remainder", TGL_OP_REMAINDER, {{"main", uniform(-10, 10), signed_uniform(0.5, 3)},
                                         {"b_small", log_uniform(-2, 8), log_uniform(-6, -1)},
                                         {"b_tiny", log_uniform(20, 38), log_uniform(-30, -3)},
                                         {"ints", integers(-20, 20), integers(-5, 5)}},
         kElementwise, 0},
        {"atan2", TGL_OP_ATAN2, {{"main", uniform(-3, 3), uniform(-3, 3)},
                                 {"wide", log_uniform(-30, 30), log_uniform(-30, 30)},
                                 {"axes", integers(-1, 1), integers(-1, 1)}},
         kTranscendental, 4},
    };
    return ops;
}

// The op with its main range, for binary_spec.
BinaryOp main_range(const RangedBinaryOp& o) {
    return {o.name, o.op, std::get<1>(o.ranges[0]), std::get<2>(o.ranges[0]), o.tolerance};
}

std::vector<Case> ranged_cases() {
    std::vector<Case> cases;
    const Kind C = Kind::Contiguous;
    for (const RangedBinaryOp& ro : ranged_ops()) {
        const BinaryOp o = main_range(ro);
        const std::string n = o.name;
        auto add = [&](const std::string& name, Shape as, Shape bs, Layouts l, const Gen& a, const Gen& b) {
            cases.push_back({n + "_" + name, [o, as, bs, l, a, b](Rng& r) { return binary_spec(o, as, bs, l, a, b, r); }});
        };
        for (const Shape& sh : std::vector<Shape>{{}, {7}, {13, 1, 17}, {0}, {100003}}) add(shape_name(sh), sh, sh, {}, o.a, o.b);
        const Shape s4 = {2, 3, 5, 7};
        add("bcast_b", s4, {5, 1}, {}, o.a, o.b);
        add("bcast_both", {13, 1, 17}, {13, 5, 1}, {}, o.a, o.b);
        add("rank8", {2, 1, 3, 1, 2, 2, 1, 3}, {3, 2, 1, 2, 4, 1}, {Kind::Mixed, Kind::Mixed, Kind::Mixed}, o.a, o.b);
        add("permuted", s4, s4, {Kind::Permuted, Kind::Negative, Kind::Stepped}, o.a, o.b);
        add("stride0", s4, s4, {Kind::Broadcast, Kind::Padded, C}, o.a, o.b);
        for (size_t i = 1; i < ro.ranges.size(); ++i)
            add(std::string("range_") + std::get<0>(ro.ranges[i]), {4099}, {4099}, {}, std::get<1>(ro.ranges[i]),
                std::get<2>(ro.ranges[i]));
        cases.push_back({n + "_special_pairs", [o](Rng& r) {
                             Spec s = binary_spec(o, {15, 1}, {1, 15}, {}, o.a, o.b, r);
                             s.inputs[0].storage = special_values();
                             s.inputs[1].storage = special_values();
                             s.what += " over every pair of special values";
                             return s;
                         }});
        add("specials", {31, 33}, {33}, {}, with_specials(o.a, 0.2), with_specials(o.b, 0.2));
    }
    return cases;
}

std::vector<Case> all_cases() {
    std::vector<Case> cases = binary_cases();
    for (Case& c : ranged_cases()) cases.push_back(std::move(c));
    return cases;
}

class Binary : public SeededTestWithParam<Case> {};

TEST_P(Binary, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, Binary, ::testing::ValuesIn(all_cases()), case_name);

// The GLES grid-stride kernel of two full-size f32 inputs (elementwise.comp's GRID_STRIDE), on
// devices whose grid is tiny (blocks of 32 or 128 quads, 3 or 5 workgroups), so that small tensors
// take several strides and end in a partial block: lengths around the blocks, a ragged tail
// (numel % 4), in place, rank 2, and the layouts that must take the other kernels (misaligned
// offsets, strides, broadcasting).
class BinaryGridStride : public SeededTest {};

TEST_F(BinaryGridStride, MatchesReference) {
    Rng& rng = rng_;
    const BinaryOp& add = binary_ops()[0];
    const BinaryOp& mul = binary_ops()[2];
    for (const char* tune : {"wg1024_v1_bwg32_bg3", "wg1024_v4_bwg32_bg5"}) {
        SCOPED_TRACE(std::string("TGL_TUNE_STREAM=") + tune);
        Device& d = subject_device_with("TGL_TUNE_STREAM", tune);
        for (int64_t n : {4, 5, 127, 128, 129, 384, 385, 1023, 4099, 20483})
            check(binary_spec(n % 2 ? add : mul, {n}, {n}, {}, add.a, add.b, rng), &d);
        Spec in_place = binary_spec(add, {4099}, {4099}, {}, add.a, add.b, rng);
        in_place.in_place = true;
        in_place.what += " (in place over a)";
        check(in_place, &d);
        check(binary_spec(mul, {37, 128}, {37, 128}, {}, mul.a, mul.b, rng), &d);
        check(binary_spec(add, {1000}, {1000}, {Kind::Padded, Kind::Contiguous, Kind::Contiguous}, add.a, add.b, rng), &d);
        check(binary_spec(add, {1000}, {1000}, {Kind::Contiguous, Kind::Padded, Kind::Padded}, add.a, add.b, rng), &d);
        check(binary_spec(mul, {40, 52}, {40, 52}, {Kind::Stepped, Kind::Contiguous, Kind::Contiguous}, mul.a, mul.b, rng), &d);
        check(binary_spec(add, {24, 64}, {64}, {}, add.a, add.b, rng), &d);
    }
}

std::vector<UlpCase> ulp_cases() {
    std::vector<UlpCase> cases;
    for (const RangedBinaryOp& ro : ranged_ops())
        for (const auto& r : ro.ranges) {
            const BinaryOp o = main_range(ro);
            Gen ga = std::get<1>(r), gb = std::get<2>(r);
            cases.push_back({std::string(o.name) + "_" + std::get<0>(r), o.name, std::get<0>(r), o.op, [o, ga, gb](Rng& rng) {
                                 return binary_spec(o, {4099}, {4099}, {}, ga, gb, rng);
                             }});
        }
    return cases;
}

double max_ulp_for(const std::string& op) {
    for (const RangedBinaryOp& ro : ranged_ops())
        if (op == ro.name) return ro.max_ulp;
    return 0;
}

class BinaryUlp : public SeededTestWithParam<UlpCase> {};

TEST_P(BinaryUlp, WorstElementWithinBound) { expect_worst_ulp_within(GetParam(), rng_, max_ulp_for(GetParam().op_name)); }

INSTANTIATE_TEST_SUITE_P(Diff, BinaryUlp, ::testing::ValuesIn(ulp_cases()), ulp_case_name);

}  // namespace
}  // namespace diff
