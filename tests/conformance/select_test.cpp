// Conformance (known-answer, bad-input) tests of the select ops: topk, sort, argsort. Hand-checked
// rows with ties (stable in both directions), NaN / +-inf / -0.0 placement, i32 extremes, f16 keys,
// topk largest/smallest with k = 0, 1, n, non-last axes, a rank-0 x, long rows (one of 2^20) with
// a closed-form answer, and every kind of bad argument.
#include "common.h"

#include "tgl_test/op_runner.h"

#include <algorithm>
#include <climits>
#include <cstdlib>

namespace conf {
namespace {

using SelectOps = ConformanceTest;

tgl_sort_params sort_params(int axis, bool descending) {
    tgl_sort_params p{};
    p.struct_size = sizeof p;
    p.axis = axis;
    p.descending = descending ? 1 : 0;
    return p;
}

struct Sorted {
    std::vector<double> values, indices;
};

// Runs op on a contiguous x (dtype xt) with poisoned contiguous outputs of shape ys (values of xt
// unless argsort, indices i32); checks guards, full coverage and x unchanged.
Sorted run_sel(tgl_op op, const tgl_sort_params* p, tgl_dtype xt, const Shape& xs, const std::vector<double>& x,
               const Shape& ys) {
    std::vector<OutputArg> outs;
    if (op != TGL_OP_ARGSORT) outs.push_back(output_of(xt, ys));
    outs.push_back(output_of(I32, ys));
    std::vector<std::vector<double>> r = run_op_values(dev(), op, p, {input_values(xt, xs, x)}, outs);
    Sorted s;
    if (op == TGL_OP_ARGSORT) {
        s.indices = r[0];
    } else {
        s.values = r[0];
        s.indices = r[1];
    }
    return s;
}

// Values bit for bit (so -0.0 and +0.0 differ; any NaN equals any NaN); indices exactly.
::testing::AssertionResult same_bits(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::ExactBits);
}

void expect_sorted(const Sorted& s, tgl_dtype xt, const std::vector<double>& values, const std::vector<double>& idx) {
    EXPECT_TRUE(same_bits(xt, s.values, values));
    EXPECT_TRUE(same_bits(I32, s.indices, idx));
}

TEST_F(SelectOps, SortTiesAreStableBothWays) {
    const std::vector<double> x = {3, 1, 2, 1, 3, 1};
    for (tgl_dtype xt : {F32, F16, I32}) {
        SCOPED_TRACE("x " + dtype_name(xt));
        auto asc = sort_params(0, false), desc = sort_params(-1, true);
        expect_sorted(run_sel(TGL_OP_SORT, &asc, xt, {6}, x, {6}), xt, {1, 1, 1, 2, 3, 3}, {1, 3, 5, 2, 0, 4});
        // Descending is not the reverse of ascending: tied keys keep their order here too.
        expect_sorted(run_sel(TGL_OP_SORT, &desc, xt, {6}, x, {6}), xt, {3, 3, 2, 1, 1, 1}, {0, 4, 2, 1, 3, 5});
        EXPECT_TRUE(same_bits(I32, run_sel(TGL_OP_ARGSORT, &asc, xt, {6}, x, {6}).indices, {1, 3, 5, 2, 0, 4}));
        EXPECT_TRUE(same_bits(I32, run_sel(TGL_OP_ARGSORT, &desc, xt, {6}, x, {6}).indices, {0, 4, 2, 1, 3, 5}));
        // NULL params: the last axis, ascending.
        expect_sorted(run_sel(TGL_OP_SORT, nullptr, xt, {2, 3}, x, {2, 3}), xt, {1, 2, 3, 1, 1, 3}, {1, 2, 0, 0, 2, 1});
        EXPECT_TRUE(same_bits(I32, run_sel(TGL_OP_ARGSORT, nullptr, xt, {2, 3}, x, {2, 3}).indices, {1, 2, 0, 0, 2, 1}));
    }
}

TEST_F(SelectOps, SortSpecialValues) {
    // NaN above +inf (last ascending, first descending, two NaNs in their order); -0.0 == +0.0,
    // each keeping its sign and place.
    const std::vector<double> x = {1, dNaN, -dInf, -0.0, dInf, 0.0, dNaN, -1};
    auto asc = sort_params(0, false), desc = sort_params(0, true);
    for (tgl_dtype xt : {F32, F16}) {
        SCOPED_TRACE("x " + dtype_name(xt));
        expect_sorted(run_sel(TGL_OP_SORT, &asc, xt, {8}, x, {8}), xt, {-dInf, -1, -0.0, 0.0, 1, dInf, dNaN, dNaN},
                      {2, 7, 3, 5, 0, 4, 1, 6});
        expect_sorted(run_sel(TGL_OP_SORT, &desc, xt, {8}, x, {8}), xt, {dNaN, dNaN, dInf, 1, -0.0, 0.0, -1, -dInf},
                      {1, 6, 4, 0, 3, 5, 7, 2});
        // +0.0 before -0.0 in x: still tied, still in x's order.
        expect_sorted(run_sel(TGL_OP_SORT, &asc, xt, {3}, {0.0, -0.0, -1e-3}, {3}), xt, {-1e-3, 0.0, -0.0}, {2, 0, 1});
    }
    // f32 extremes: largest finite, smallest normal and subnormals.
    const double big = 3.4028234663852886e38, tiny = 1.1754943508222875e-38, sub = 1.401298464324817e-45;
    expect_sorted(run_sel(TGL_OP_SORT, &asc, F32, {6}, {big, -sub, sub, -big, tiny, 0.0}, {6}), F32,
                  {-big, -sub, 0.0, sub, tiny, big}, {3, 1, 5, 2, 4, 0});
    // f16 extremes: 65504, the smallest subnormal 2^-24, and a value that overflows f16 to inf.
    const double h_sub = 5.960464477539063e-08;
    expect_sorted(run_sel(TGL_OP_SORT, &desc, F16, {6}, {h_sub, -65504, 65504, 1e6, -h_sub, 0.0}, {6}), F16,
                  {dInf, 65504, h_sub, 0.0, -h_sub, -65504}, {3, 2, 0, 5, 4, 1});
}

TEST_F(SelectOps, SortI32Extremes) {
    const std::vector<double> x = {INT_MAX, INT_MIN, 0, -1, 16777217, 16777216, INT_MIN};
    auto asc = sort_params(0, false), desc = sort_params(0, true);
    expect_sorted(run_sel(TGL_OP_SORT, &asc, I32, {7}, x, {7}), I32,
                  {INT_MIN, INT_MIN, -1, 0, 16777216, 16777217, INT_MAX}, {1, 6, 3, 2, 5, 4, 0});
    expect_sorted(run_sel(TGL_OP_SORT, &desc, I32, {7}, x, {7}), I32,
                  {INT_MAX, 16777217, 16777216, 0, -1, INT_MIN, INT_MIN}, {0, 4, 5, 2, 3, 1, 6});
}

TEST_F(SelectOps, TopkLargestSmallest) {
    // rows [5, 1, 5, 3, 9] and [0, 0, -1, 7, 7]
    const std::vector<double> x = {5, 1, 5, 3, 9, 0, 0, -1, 7, 7};
    for (tgl_dtype xt : {F32, F16, I32}) {
        SCOPED_TRACE("x " + dtype_name(xt));
        auto largest = sort_params(1, true), smallest = sort_params(-1, false);
        expect_sorted(run_sel(TGL_OP_TOPK, &largest, xt, {2, 5}, x, {2, 2}), xt, {9, 5, 7, 7}, {4, 0, 3, 4});
        expect_sorted(run_sel(TGL_OP_TOPK, &smallest, xt, {2, 5}, x, {2, 2}), xt, {1, 3, -1, 0}, {1, 3, 2, 0});
        expect_sorted(run_sel(TGL_OP_TOPK, &largest, xt, {2, 5}, x, {2, 1}), xt, {9, 7}, {4, 3});
        expect_sorted(run_sel(TGL_OP_TOPK, &smallest, xt, {2, 5}, x, {2, 1}), xt, {1, -1}, {1, 2});
        // k = n: the sort; ties lower index first.
        expect_sorted(run_sel(TGL_OP_TOPK, &largest, xt, {2, 5}, x, {2, 5}), xt, {9, 5, 5, 3, 1, 7, 7, 0, 0, -1},
                      {4, 0, 2, 3, 1, 3, 4, 0, 1, 2});
        expect_sorted(run_sel(TGL_OP_TOPK, &smallest, xt, {2, 5}, x, {2, 5}), xt, {1, 3, 5, 5, 9, -1, 0, 0, 7, 7},
                      {1, 3, 0, 2, 4, 2, 0, 1, 3, 4});
        // NULL params: the last axis, largest.
        expect_sorted(run_sel(TGL_OP_TOPK, nullptr, xt, {2, 5}, x, {2, 3}), xt, {9, 5, 5, 7, 7, 0}, {4, 0, 2, 3, 4, 0});
        // k = 0: empty outputs, nothing to do.
        Sorted e = run_sel(TGL_OP_TOPK, &largest, xt, {2, 5}, x, {2, 0});
        EXPECT_TRUE(e.values.empty() && e.indices.empty());
    }
    // NaN counts as the largest: first for largest, never among the smallest unless k reaches it.
    auto largest = sort_params(0, true), smallest = sort_params(0, false);
    const std::vector<double> s = {2, dNaN, -dInf, dInf, dNaN};
    expect_sorted(run_sel(TGL_OP_TOPK, &largest, F32, {5}, s, {3}), F32, {dNaN, dNaN, dInf}, {1, 4, 3});
    expect_sorted(run_sel(TGL_OP_TOPK, &smallest, F16, {5}, s, {4}), F16, {-dInf, 2, dInf, dNaN}, {2, 0, 3, 1});
}

TEST_F(SelectOps, NonLastAxis) {
    // (3, 2): columns [3, 1, 2] and [1, 1, 0].
    const std::vector<double> x = {3, 1, 1, 1, 2, 0};
    for (int axis : {0, -2}) {
        auto asc = sort_params(axis, false), desc = sort_params(axis, true);
        expect_sorted(run_sel(TGL_OP_SORT, &asc, F32, {3, 2}, x, {3, 2}), F32, {1, 0, 2, 1, 3, 1}, {1, 2, 2, 0, 0, 1});
        expect_sorted(run_sel(TGL_OP_SORT, &desc, F32, {3, 2}, x, {3, 2}), F32, {3, 1, 2, 1, 1, 0}, {0, 0, 2, 1, 1, 2});
        expect_sorted(run_sel(TGL_OP_TOPK, &desc, I32, {3, 2}, x, {1, 2}), I32, {3, 1}, {0, 0});
        EXPECT_TRUE(same_bits(I32, run_sel(TGL_OP_ARGSORT, &desc, F16, {3, 2}, x, {3, 2}).indices, {0, 0, 2, 1, 1, 2}));
    }
    // The middle axis of (2, 3, 2).
    auto p = sort_params(1, false);
    const std::vector<double> y = {5, 0, 4, 0, 6, -1, 1, 1, 1, 0, 0, 2};
    expect_sorted(run_sel(TGL_OP_SORT, &p, F32, {2, 3, 2}, y, {2, 3, 2}), F32, {4, -1, 5, 0, 6, 0, 0, 0, 1, 1, 1, 2},
                  {1, 2, 0, 0, 2, 1, 2, 1, 0, 0, 1, 2});
}

TEST_F(SelectOps, ScalarAndSingleElementRows) {
    auto p = sort_params(0, true);
    expect_sorted(run_sel(TGL_OP_SORT, &p, F32, {}, {-2.5}, {}), F32, {-2.5}, {0});
    expect_sorted(run_sel(TGL_OP_TOPK, nullptr, I32, {}, {7}, {}), I32, {7}, {0});
    p = sort_params(1, false);
    expect_sorted(run_sel(TGL_OP_SORT, &p, F16, {3, 1}, {3, dNaN, -0.0}, {3, 1}), F16, {3, dNaN, -0.0}, {0, 0, 0});
}

// Rows longer than any shared-memory block (global passes), up to 2^20, with many ties: x[i] =
// floor((n - 1 - i) / 3), so ascending the groups come back to front, each in index order.
TEST_F(SelectOps, LongRows) {
    for (int64_t n : {int64_t(5000), int64_t(1) << 20}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const size_t len = static_cast<size_t>(n);
        std::vector<double> x(len), vals(len), idx(len);
        for (int64_t i = 0; i < n; ++i) x[size_t(i)] = double((n - 1 - i) / 3);
        // Ascending position j holds value j / 3 of group g = j / 3: indices n-1-3g-2 .. n-1-3g, clipped at 0.
        int64_t j = 0;
        for (int64_t g = 0; j < n; ++g) {
            int64_t hi = n - 1 - 3 * g, lo = std::max<int64_t>(0, hi - 2);
            for (int64_t i = lo; i <= hi; ++i, ++j) {
                vals[size_t(j)] = double(g);
                idx[size_t(j)] = double(i);
            }
        }
        auto asc = sort_params(0, false);
        expect_sorted(run_sel(TGL_OP_SORT, &asc, n > 5000 ? I32 : F32, {n}, x, {n}), n > 5000 ? I32 : F32, vals, idx);
        if (n > 5000) continue;
        // topk 4 largest: x does not increase, so the first four in index order.
        auto largest = sort_params(0, true);
        Sorted t = run_sel(TGL_OP_TOPK, &largest, F32, {n}, x, {4});
        std::vector<double> tv, ti;
        for (int64_t i = 0; i < 4; ++i) {
            tv.push_back(double((n - 1 - i) / 3));
            ti.push_back(double(i));
        }
        expect_sorted(t, F32, tv, ti);
    }
}

// The header's order, written out: ascending NaN last, descending NaN first, -0 == +0, ties in
// index order (std::stable_sort keeps them).
std::vector<size_t> stable_order(const std::vector<double>& x, bool descending) {
    std::vector<size_t> idx(x.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
        const double u = x[a], v = x[b];
        if (descending) return std::isnan(v) ? false : std::isnan(u) || u > v;
        return std::isnan(u) ? false : std::isnan(v) || u < v;
    });
    return idx;
}

// The first k of `order` over x as (values, indices).
Sorted first_k(const std::vector<double>& x, const std::vector<size_t>& order, size_t k) {
    Sorted s;
    for (size_t j = 0; j < k; ++j) {
        s.values.push_back(x[order[j]]);
        s.indices.push_back(double(order[j]));
    }
    return s;
}

// Rows past 2^21 elements (the GLES plugin's radix path; a row of 2^21 + 1 once needed a scratch
// block it refused): NaNs, -0.0 / +0.0 and about a thousand ties per value, both directions, and
// topk with a small and a large k.
TEST_F(SelectOps, RowsPastTwoToThe21) {
    for (int64_t n : {(int64_t(1) << 21) + 1, 3 * (int64_t(1) << 20) + 7}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        const size_t len = size_t(n);
        std::vector<double> x(len), xi(len);
        for (size_t i = 0; i < len; ++i) {
            const int64_t v = int64_t((uint64_t(n - 1 - int64_t(i)) * 7919u) % 2003u) - 1001;
            x[i] = i % 97 == 5 ? dNaN : i % 89 == 3 ? -0.0 : double(v);
            xi[i] = double(v * 1000003);  // i32: the same ties, wider keys
        }
        const bool desc = n > (int64_t(1) << 22);  // x descending on the longer row, ascending on the other
        auto px = sort_params(0, desc), pi = sort_params(-1, !desc);
        const std::vector<size_t> order = stable_order(x, desc);
        const Sorted all = first_k(x, order, len);
        expect_sorted(run_sel(TGL_OP_SORT, &px, F32, {n}, x, {n}), F32, all.values, all.indices);
        const size_t k = desc ? 5 : len - 11;
        const Sorted top = first_k(x, order, k);
        expect_sorted(run_sel(TGL_OP_TOPK, &px, F32, {n}, x, {int64_t(k)}), F32, top.values, top.indices);
        EXPECT_TRUE(same_bits(I32, run_sel(TGL_OP_ARGSORT, &pi, I32, {n}, xi, {n}).indices,
                              first_k(xi, stable_order(xi, !desc), len).indices));
    }
}

// A row whose (key, index) scratch (8 bytes a position) exceeds one shader storage block is
// refused with the limit that stops it, writing nothing (plugins that report their storage block
// limit, if it is the GLES 3.1 minimum or near it).
TEST_F(SelectOps, RowPastTheScratchBlockIsRefused) {
    const char* v = tgl_device_property(plug().raw(), 0, "limit.max_ssbo_block_bytes");
    const int64_t block = v ? std::strtoll(v, nullptr, 10) : 0;
    if (block <= 0 || block > (int64_t(1) << 27)) GTEST_SKIP() << "no storage block limit of at most 2^27 bytes reported";
    const int64_t n = block / 8 + 1;
    InputArg x;
    x.dtype = F16;
    x.view = contiguous({n});
    x.storage = Storage::zeros(F16, n);
    OpCall call(dev(), {x}, {output_of(I32, {n})});
    auto p = sort_params(0, false);
    EXPECT_TGL_ERROR(call.run(TGL_OP_ARGSORT, &p),
                     TGL_ERROR_RESOURCE_EXHAUSTED, {std::to_string(n) + " elements", "sort scratch", "GL_MAX_SHADER_STORAGE_BLOCK_SIZE = " + std::to_string(block),
                      "at most " + std::to_string(n - 1) + " elements per row"});
    EXPECT_TRUE(call.all_unchanged());
}

// ----- bad input ----------------------------------------------------------------------------------

// Runs op with x (2, 3) of xt and poisoned outputs (values vs of vt unless argsort, indices is of
// it); expects `want` naming `tokens`, nothing written.
void expect_select_rejected(tgl_op op, const void* params, tgl_status want, const std::vector<std::string>& tokens,
                            const Shape& vs, const Shape& is, tgl_dtype vt = F32, tgl_dtype it = I32, tgl_dtype xt = F32) {
    std::vector<OutputArg> outs;
    if (op != TGL_OP_ARGSORT) outs.push_back(output_of(vt, vs));
    outs.push_back(output_of(it, is));
    expect_rejected(op, params, {input_values(xt, {2, 3}, {1, 2, 3, 4, 5, 6})}, outs, want, tokens);
}

TEST_F(SelectOps, BadInput) {
    auto p = sort_params(1, true);
    expect_select_rejected(TGL_OP_TOPK, &p, TGL_ERROR_SHAPE_MISMATCH, {"k = 4", "3"}, {2, 4}, {2, 4});
    expect_select_rejected(TGL_OP_TOPK, &p, TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (values)", "(3, 2)"}, {3, 2}, {3, 2});
    expect_select_rejected(TGL_OP_TOPK, &p, TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (values)", "(2)"}, {2}, {2});
    expect_select_rejected(TGL_OP_TOPK, &p, TGL_ERROR_SHAPE_MISMATCH, {"outputs[1] (indices)", "(2, 1)"}, {2, 2}, {2, 1});
    expect_select_rejected(TGL_OP_TOPK, &p, TGL_ERROR_DTYPE_MISMATCH, {"outputs[1] (indices)", "i32"}, {2, 2}, {2, 2}, F32, F32);
    expect_select_rejected(TGL_OP_SORT, &p, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (values)"}, {2, 3}, {2, 3}, F16);
    expect_select_rejected(TGL_OP_SORT, &p, TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (values)", "(3, 2)", "(2, 3)"}, {3, 2}, {2, 3});
    expect_select_rejected(TGL_OP_SORT, &p, TGL_ERROR_SHAPE_MISMATCH, {"outputs[1] (indices)", "(2, 2)"}, {2, 3}, {2, 2});
    expect_select_rejected(TGL_OP_ARGSORT, &p, TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (indices)", "(6)"}, {}, {6});
    expect_select_rejected(TGL_OP_ARGSORT, &p, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (indices)", "i32"}, {}, {2, 3}, F32,
                           TGL_DTYPE_I8);
    expect_select_rejected(TGL_OP_SORT, &p, TGL_ERROR_DTYPE_MISMATCH, {"inputs[0] (x)"}, {2, 3}, {2, 3}, TGL_DTYPE_U8, I32,
                    TGL_DTYPE_U8);
    p = sort_params(2, false);
    expect_select_rejected(TGL_OP_SORT, &p, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "2"}, {2, 3}, {2, 3});
    p = sort_params(-3, false);
    expect_select_rejected(TGL_OP_TOPK, &p, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "-3"}, {2, 1}, {2, 1});
    p = sort_params(0, false);
    p.descending = 2;
    expect_select_rejected(TGL_OP_ARGSORT, &p, TGL_ERROR_INVALID_ARGUMENT, {"params->descending", "2"}, {}, {2, 3});
    p = sort_params(0, false);
    p.reserved = 1;
    expect_select_rejected(TGL_OP_SORT, &p, TGL_ERROR_INVALID_ARGUMENT, {"reserved"}, {2, 3}, {2, 3});
    p = sort_params(0, false);
    p.struct_size = 12;
    expect_select_rejected(TGL_OP_SORT, &p, TGL_ERROR_PARAMS_SIZE, {"struct_size", "12"}, {2, 3}, {2, 3});
}

// An output overlapping the input is rejected (no in-place sort).
TEST_F(SelectOps, InPlaceIsRejected) {
    Device& d = dev();
    DeviceTensor t(d, contiguous({4}), I32);
    t.set_logical({4, 3, 2, 1});
    DeviceTensor v(d, contiguous({4}), I32);
    v.poison();
    EXPECT_TGL_ERROR(d.run(TGL_OP_SORT, nullptr, {t.desc()}, {v.desc(), t.desc()}), TGL_ERROR_INVALID_ARGUMENT,
                     {"overlaps"});
    EXPECT_TGL_ERROR(d.run(TGL_OP_ARGSORT, nullptr, {t.desc()}, {t.desc()}), TGL_ERROR_INVALID_ARGUMENT, {"overlaps"});
    EXPECT_TRUE(t.unchanged());
    EXPECT_TRUE(v.unchanged());
}

}  // namespace
}  // namespace conf
