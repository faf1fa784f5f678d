// Binary elementwise ops: equal shapes, broadcasting on every axis and across ranks, non-contiguous
// operands and outputs, empty tensors, op-specific value ranges and every pair of special values.
#include "diff.h"

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

class Binary : public SeededTestWithParam<Case> {};

TEST_P(Binary, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, Binary, ::testing::ValuesIn(binary_cases()), case_name);

}  // namespace
}  // namespace diff
