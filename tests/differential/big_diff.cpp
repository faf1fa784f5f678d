// Tensors big enough that one workgroup per 256 (or fewer) elements needs more than 65,535
// workgroups in one dispatch dimension: the plugin must split or fold its grid.
#include "diff.h"

namespace diff {
namespace {

constexpr int64_t kBig = (int64_t(1) << 24) + 3;  // 16,777,219 elements

Spec unary_or_binary(tgl_op op, const std::vector<Shape>& in, const std::vector<Kind>& kinds, const Shape& out,
                     double tolerance, Rng& rng, const std::string& what) {
    Spec s;
    s.op = op;
    for (size_t i = 0; i < in.size(); ++i) s.inputs.push_back(operand(view_of(in[i], kinds[i], rng, true), rng, uniform(-1, 1)));
    s.out = contiguous(out);
    s.tolerance = tolerance;
    s.what = what;
    return s;
}

Spec reduce_big(tgl_op op, const Shape& xs, std::vector<int> axes, const Shape& ys, Rng& rng, const std::string& what) {
    Spec s;
    s.op = op;
    tgl_reduce_params p{};
    p.struct_size = sizeof p;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    s.params = param_bytes(p);
    s.inputs.push_back(operand(contiguous(xs), rng, uniform(-0.9, 1.1)));
    s.out = contiguous(ys);
    s.tolerance = tol::kReduction;
    s.what = what;
    return s;
}

Spec matmul_big(const Shape& as, const Shape& bs, const Shape& cs, Rng& rng, const std::string& what) {
    Spec s;
    s.op = TGL_OP_MATMUL;
    s.inputs.push_back(operand(contiguous(as), rng, uniform(-1, 1)));
    s.inputs.push_back(operand(contiguous(bs), rng, uniform(-1, 1)));
    s.out = contiguous(cs);
    s.tolerance = tol::kMatmul;
    s.what = what;
    return s;
}

std::vector<Case> big_cases() {
    return {
        {"add_2p24_plus_3", [](Rng& r) {
             return unary_or_binary(TGL_OP_ADD, {{kBig}, {kBig}}, {Kind::Contiguous, Kind::Contiguous}, {kBig},
                                    tol::kElementwise, r, "add of two (2^24 + 3,) tensors");
         }},
        {"mul_4099x4099_b_transposed", [](Rng& r) {
             return unary_or_binary(TGL_OP_MUL, {{4099, 4099}, {4099, 4099}}, {Kind::Contiguous, Kind::Permuted},
                                    {4099, 4099}, tol::kElementwise, r, "mul of (4099, 4099) by a transposed view");
         }},
        {"sum_all_2p24_plus_3", [](Rng& r) {
             return reduce_big(TGL_OP_SUM, {kBig}, {}, {}, r, "sum of all 2^24 + 3 elements");
         }},
        {"sum_rows_1048579x16", [](Rng& r) {
             return reduce_big(TGL_OP_SUM, {1048579, 16}, {1}, {1048579}, r, "sum over rows of 16: 1,048,579 outputs");
         }},
        {"max_columns_16x1048579", [](Rng& r) {
             return reduce_big(TGL_OP_MAX, {16, 1048579}, {0}, {1048579}, r, "max over columns of 16: 1,048,579 outputs");
         }},
        {"matmul_M_1048579", [](Rng& r) {
             return matmul_big({1048579, 3}, {3, 2}, {1048579, 2}, r, "matmul with M = 1,048,579");
         }},
        {"matmul_N_1048579", [](Rng& r) {
             return matmul_big({2, 3}, {3, 1048579}, {2, 1048579}, r, "matmul with N = 1,048,579");
         }},
        {"matmul_batch_70001", [](Rng& r) {
             return matmul_big({70001, 1, 3}, {70001, 3, 2}, {70001, 1, 2}, r, "matmul with 70,001 batches");
         }},
    };
}

class Big : public SeededTestWithParam<Case> {};

TEST_P(Big, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, Big, ::testing::ValuesIn(big_cases()), case_name);

}  // namespace
}  // namespace diff
