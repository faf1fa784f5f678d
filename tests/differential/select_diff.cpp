// Differential tests (GLES vs CPU) of the select ops: topk, sort, argsort on seeded random inputs
// of f32, f16 and i32. Sizes of primes and 1s, every axis (negative ones too), both directions,
// topk with random k (0 and n included), many duplicate keys (small integers) so that stability
// matters, NaN/inf/-0 and the dtypes' edge values, permuted / stepped / negative-stride / padded /
// misaligned inputs, non-contiguous outputs, empty tensors, rows longer than a shared-memory block
// (the radix path, batches of rows), rows of 2^20, 2^21 + 1 and 3 * 2^20 + 7 elements (topk with small and
// large k) and a grid of more than 65,535 workgroups.
// Values and indices must match exactly (values bit for bit, any NaN equal to any NaN).
#include "diff.h"

namespace diff {
namespace {

enum class Keys { Dups, Wide, Specials };

struct SelCase {
    std::string name;
    std::function<MultiSpec(Rng&)> build;
};
std::string sel_case_name(const ::testing::TestParamInfo<SelCase>& info) { return info.param.name; }
void PrintTo(const SelCase& c, std::ostream* os) { *os << c.name; }

ValueGen keys_gen(tgl_dtype xt, Keys keys) {
    const bool fl = xt != TGL_DTYPE_I32;
    switch (keys) {
    case Keys::Dups: return int_values(TGL_DTYPE_I32, -3, 3);  // exact in every dtype: many ties
    case Keys::Wide: return fl ? float_values(xt, -1000, 1000) : int_values(xt, INT32_MIN, INT32_MAX);
    case Keys::Specials: {
        ValueGen dups = int_values(TGL_DTYPE_I32, -2, 2);
        return with_special_values(xt, fl ? ValueGen([dups](Rng& r) { return r.chance(0.5) ? dups(r) : r.uniform(-2, 2); })
                                          : dups,
                                   0.3);
    }
    }
    return nullptr;
}

// k < 0: a random k in [0, n] (topk only); otherwise that k.
MultiSpec make(tgl_op op, tgl_dtype xt, const Shape& xs, int axis, bool desc, Kind in, Kind out, Keys keys, Rng& rng,
               int64_t k = -1) {
    MultiSpec s;
    s.op = op;
    tgl_sort_params p{sizeof(tgl_sort_params), axis, desc ? 1u : 0u, 0};
    s.params = param_bytes(p);
    InputArg x;
    x.dtype = xt;
    // f16 inputs sometimes start inside a word.
    x.view = in == Kind::Padded && xt == TGL_DTYPE_F16 ? make_view(xs, misaligned_layout(rng)) : view_of(xs, in, rng, true);
    x.storage = random_storage(xt, x.view.storage, rng, keys_gen(xt, keys));
    s.inputs.push_back(x);
    Shape ys = xs;
    const int a = axis < 0 ? axis + int(xs.size()) : axis;
    if (op == TGL_OP_TOPK && !xs.empty()) ys[size_t(a)] = k >= 0 ? k : rng.integer(0, xs[size_t(a)]);
    auto out_view = [&](tgl_dtype dt) {
        if (out == Kind::Padded && dt == TGL_DTYPE_F16) return make_view(ys, misaligned_layout(rng));
        return view_of(ys, out, rng, false);
    };
    if (op != TGL_OP_ARGSORT) {
        OutputArg v;
        v.dtype = xt;
        v.view = out_view(xt);
        s.outputs.push_back(v);
    }
    OutputArg i;
    i.dtype = rng.chance(0.3) ? TGL_DTYPE_I64 : TGL_DTYPE_I32;  // either index dtype
    i.view = out_view(i.dtype);
    s.outputs.push_back(i);
    s.mode = {CompareMode::ExactBits, CompareMode::ExactBits};
    const char* name = op == TGL_OP_TOPK ? "topk" : op == TGL_OP_SORT ? "sort" : "argsort";
    s.what = std::string(name) + " of " + shape_str(xs) + " " + dtype_name(xt) + " (" + kind_name(in) + ") axis " +
             std::to_string(axis) + (desc ? " descending" : " ascending") + " -> " + shape_str(ys) + " (" +
             kind_name(out) + "), indices " + dtype_name(i.dtype);
    return s;
}

std::vector<SelCase> cases() {
    std::vector<SelCase> cs;
    auto add = [&](const std::string& name, tgl_op op, tgl_dtype xt, Shape xs, int axis, bool desc, Kind in, Kind out,
                   Keys keys, int64_t k = -1) {
        cs.push_back({name, [=](Rng& r) { return make(op, xt, xs, axis, desc, in, out, keys, r, k); }});
    };
    const Shape x4 = {3, 5, 7, 11};
    const struct {
        tgl_op op;
        const char* name;
    } ops[] = {{TGL_OP_TOPK, "topk"}, {TGL_OP_SORT, "sort"}, {TGL_OP_ARGSORT, "argsort"}};
    for (auto o : ops) {
        for (tgl_dtype xt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_I32}) {
            const std::string pre = std::string(o.name) + "_" + dtype_name(xt) + "_";
            for (int a = 0; a < 4; ++a)
                for (bool desc : {false, true})
                    add(pre + "axis" + std::to_string(a) + (desc ? "_desc" : "_asc"), o.op, xt, x4, a, desc,
                        Kind::Contiguous, Kind::Contiguous, Keys::Dups);
            add(pre + "axis_m1_wide", o.op, xt, {13, 1, 17}, -1, true, Kind::Contiguous, Kind::Contiguous, Keys::Wide);
            add(pre + "axis_m3_wide", o.op, xt, {13, 1, 17}, -3, false, Kind::Contiguous, Kind::Contiguous, Keys::Wide);
            add(pre + "axis_len1", o.op, xt, {13, 1, 17}, 1, true, Kind::Contiguous, Kind::Contiguous, Keys::Dups);
            add(pre + "specials", o.op, xt, {29, 31}, 1, false, Kind::Contiguous, Kind::Contiguous, Keys::Specials);
            add(pre + "specials_desc", o.op, xt, {31, 29}, 0, true, Kind::Mixed, Kind::Contiguous, Keys::Specials);
            add(pre + "scalar", o.op, xt, {}, -1, true, Kind::Contiguous, Kind::Contiguous, Keys::Wide);
            add(pre + "in_permuted", o.op, xt, x4, 2, false, Kind::Permuted, Kind::Contiguous, Keys::Dups);
            add(pre + "in_stepped", o.op, xt, x4, 3, true, Kind::Stepped, Kind::Contiguous, Keys::Dups);
            add(pre + "in_negstride", o.op, xt, x4, 1, false, Kind::Negative, Kind::Contiguous, Keys::Dups);
            add(pre + "in_stride0", o.op, xt, x4, 3, true, Kind::Broadcast, Kind::Contiguous, Keys::Dups);
            add(pre + "in_padded", o.op, xt, {7, 13}, 1, false, Kind::Padded, Kind::Padded, Keys::Dups);
            add(pre + "out_stepped", o.op, xt, x4, 0, true, Kind::Contiguous, Kind::Stepped, Keys::Dups);
            add(pre + "out_permuted", o.op, xt, x4, 3, false, Kind::Contiguous, Kind::Permuted, Keys::Dups);
            add(pre + "out_negstride", o.op, xt, x4, 2, true, Kind::Negative, Kind::Negative, Keys::Dups);
            add(pre + "mixed", o.op, xt, x4, -2, false, Kind::Mixed, Kind::Mixed, Keys::Specials);
            add(pre + "empty_rows", o.op, xt, {0, 5}, 1, false, Kind::Contiguous, Kind::Contiguous, Keys::Dups);
            add(pre + "empty_axis", o.op, xt, {4, 0, 3}, 1, true, Kind::Contiguous, Kind::Contiguous, Keys::Dups);
            // Rows past one shared-memory block (global passes), many rows, odd lengths.
            add(pre + "rows_5003", o.op, xt, {3, 5003}, 1, xt != TGL_DTYPE_F16, Kind::Stepped, Kind::Stepped,
                Keys::Dups);
            add(pre + "columns_9001", o.op, xt, {9001, 2}, 0, xt == TGL_DTYPE_F16, Kind::Contiguous, Kind::Contiguous,
                Keys::Specials);
        }
        add(std::string(o.name) + "_k_edges", o.op, TGL_DTYPE_F32, {5, 7}, 1, true, Kind::Contiguous, Kind::Contiguous,
            Keys::Dups, o.op == TGL_OP_TOPK ? 7 : -1);
    }
    add("topk_k1", TGL_OP_TOPK, TGL_DTYPE_F16, {5, 7, 3}, 1, false, Kind::Permuted, Kind::Stepped, Keys::Dups, 1);
    add("topk_k0", TGL_OP_TOPK, TGL_DTYPE_I32, {5, 7, 3}, 1, true, Kind::Contiguous, Kind::Contiguous, Keys::Dups, 0);
    add("topk_k3_long", TGL_OP_TOPK, TGL_DTYPE_F32, {2, 40009}, 1, true, Kind::Contiguous, Kind::Contiguous,
        Keys::Dups, 3);
    // One row of 2^20 (the largest stride passes), and one of 1,000,003 in f16 (padded to 2^20).
    add("sort_row_2p20", TGL_OP_SORT, TGL_DTYPE_F32, {int64_t(1) << 20}, 0, true, Kind::Contiguous, Kind::Contiguous,
        Keys::Wide);
    add("argsort_row_1000003", TGL_OP_ARGSORT, TGL_DTYPE_F16, {1000003}, -1, false, Kind::Contiguous,
        Kind::Contiguous, Keys::Dups);
    // Rows past 2^21 (the radix path; once refused): specials and ties, both directions, topk with a
    // small and a large k, a strided row of f16.
    const int64_t n21 = (int64_t(1) << 21) + 1, n3 = 3 * (int64_t(1) << 20) + 7;
    add("sort_row_2p21p1_specials_desc", TGL_OP_SORT, TGL_DTYPE_F32, {n21}, 0, true, Kind::Contiguous,
        Kind::Contiguous, Keys::Specials);
    add("topk_row_2p21p1_k5", TGL_OP_TOPK, TGL_DTYPE_F32, {n21}, -1, true, Kind::Contiguous, Kind::Contiguous,
        Keys::Specials, 5);
    add("topk_row_3x2p20p7_klarge_asc", TGL_OP_TOPK, TGL_DTYPE_I32, {n3}, 0, false, Kind::Contiguous,
        Kind::Contiguous, Keys::Wide, n3 - 1000);
    add("argsort_row_3x2p20p7_f16_stepped", TGL_OP_ARGSORT, TGL_DTYPE_F16, {n3}, 0, true, Kind::Stepped,
        Kind::Stepped, Keys::Dups);
    // Two batches of long rows (at most 2^21 positions a batch: 6 rows, then 2).
    add("sort_rows_8x300007", TGL_OP_SORT, TGL_DTYPE_I32, {8, 300007}, 1, false, Kind::Contiguous, Kind::Contiguous,
        Keys::Dups);
    // More than 65,535 workgroups: one workgroup per row of 37 (padded to 64).
    add("argsort_grid_over_65535", TGL_OP_ARGSORT, TGL_DTYPE_F32, {70001, 37}, 1, true, Kind::Contiguous,
        Kind::Contiguous, Keys::Dups);
    return cs;
}

class Select : public SeededTestWithParam<SelCase> {};

TEST_P(Select, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(SelectDiff, Select, ::testing::ValuesIn(cases()), sel_case_name);

}  // namespace
}  // namespace diff
