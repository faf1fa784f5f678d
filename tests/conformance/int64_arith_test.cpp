// i64 arithmetic (ops.h, "Integer arithmetic"; ABI 1.3): known answers written by hand for add,
// sub, mul, maximum, minimum, abs, neg, clamp, the comparisons, sum, prod, max, min and add_n on
// i64, where the GLES plugin computes on two 32-bit words: carries and borrows across the word
// boundary, wrap-around modulo 2^64 (INT64_MAX + 1, INT64_MIN * -1, products past 2^64), negative
// products, values equal in their low word (compared on all 64 bits), sums of many values whose
// partial sums cross 2^32 (long rows and columns: the GLES split and column reductions); argmax /
// argmin writing i64 indices; and bad input (mixed dtypes, the i64 ops that stay refused). Values
// travel as bits (the test support's doubles round past 2^53).
#include "common.h"

#include <cstdint>
#include <string>
#include <vector>

namespace conf {
namespace {

using Int64Arith = ConformanceTest;

const int64_t kMin = INT64_MIN, kMax = INT64_MAX;
const int64_t P31 = int64_t(1) << 31, P32 = int64_t(1) << 32, P33 = int64_t(1) << 33, P40 = int64_t(1) << 40;
const int64_t kLow = 0xffffffff;  // 2^32 - 1: every bit of the low word

Bits bits_of(const std::vector<int64_t>& v) { return Bits(v.begin(), v.end()); }

// a op b on equal-length 1-D i64 operands (y: i64, or bool for the comparisons).
Bits i64_2(tgl_op op, const std::vector<int64_t>& a, const std::vector<int64_t>& b, tgl_dtype y = I64) {
    const Shape s{int64_t(a.size())};
    return run_bits(op, nullptr, {i64_input(s, a), i64_input(s, b)}, {output_of(y, s)});
}
Bits i64_1(tgl_op op, const std::vector<int64_t>& x, const void* params = nullptr) {
    const Shape s{int64_t(x.size())};
    return run_bits(op, params, {i64_input(s, x)}, {output_of(I64, s)});
}

TEST_F(Int64Arith, AddCarriesAcrossTheWordsAndWraps) {
    EXPECT_EQ(i64_2(TGL_OP_ADD, {kLow, kMax, kMin, -1, P31, kLow, -5, 3 * P40, P32 + kLow},
                    {1, 1, -1, 1, P31, kLow, 3, -P40, P32 + 1}),
              bits_of({P32, kMin, kMax, 0, P32, 2 * P32 - 2, -2, 2 * P40, 3 * P32}));
}

TEST_F(Int64Arith, SubBorrowsAcrossTheWordsAndWraps) {
    EXPECT_EQ(i64_2(TGL_OP_SUB, {P32, 0, kMin, kMax, 5, 0, P33, -P32}, {1, 1, 1, -1, P33, kMin, P32 + 1, 1}),
              bits_of({kLow, -1, kMax, kMin, 5 - P33, kMin, P32 - 1, -P32 - 1}));
}

TEST_F(Int64Arith, MulKeepsTheLow64BitsOfTheProduct) {
    // (2^32 - 1)^2 = 2^64 - 2^33 + 1; 3037000500^2 = 9223372037000250000 = 2^64 - 9223372036709301616;
    // (2^32 + 1)^2 = 2^64 + 2^33 + 1; 123456789 * 987654321 = 121932631112635269 (past 2^53).
    EXPECT_EQ(i64_2(TGL_OP_MUL, {P32, kLow, 3037000500, -3, kMin, -1, P31, P32 + 1, 123456789, -123456789, kMax},
                    {P32, kLow, 3037000500, P40, -1, -1, -P31, P32 + 1, 987654321, 987654321, 2}),
              bits_of({0, 1 - P33, -9223372036709301616, -3 * P40, kMin, 1, -(int64_t(1) << 62), P33 + 1,
                       121932631112635269, -121932631112635269, -2}));
}

// Pairs equal in their low word (or their high word) that differ in the other: -1 and 2^32 - 1,
// -2^32 and 0, 2^32 + 5 and 5; the extremes; an equal pair.
const std::vector<int64_t> kCmpA = {P32 + 5, 5, -1, kLow, kMin, kMax, -P32, 7, P32, P32 + 1};
const std::vector<int64_t> kCmpB = {5, P32 + 5, kLow, -1, kMax, kMin, 0, 7, P32 + 1, P32};

TEST_F(Int64Arith, ComparisonsUseAll64Bits) {
    EXPECT_EQ(i64_2(TGL_OP_EQ, kCmpA, kCmpB, BOOL), Bits({0, 0, 0, 0, 0, 0, 0, 1, 0, 0}));
    EXPECT_EQ(i64_2(TGL_OP_NE, kCmpA, kCmpB, BOOL), Bits({1, 1, 1, 1, 1, 1, 1, 0, 1, 1}));
    EXPECT_EQ(i64_2(TGL_OP_LT, kCmpA, kCmpB, BOOL), Bits({0, 1, 1, 0, 1, 0, 1, 0, 1, 0}));
    EXPECT_EQ(i64_2(TGL_OP_LE, kCmpA, kCmpB, BOOL), Bits({0, 1, 1, 0, 1, 0, 1, 1, 1, 0}));
    EXPECT_EQ(i64_2(TGL_OP_GT, kCmpA, kCmpB, BOOL), Bits({1, 0, 0, 1, 0, 1, 0, 0, 0, 1}));
    EXPECT_EQ(i64_2(TGL_OP_GE, kCmpA, kCmpB, TGL_DTYPE_U8), Bits({1, 0, 0, 1, 0, 1, 0, 1, 0, 1}));  // a u8 mask too
}

TEST_F(Int64Arith, MaximumMinimumAbsNeg) {
    EXPECT_EQ(i64_2(TGL_OP_MAXIMUM, kCmpA, kCmpB), bits_of({P32 + 5, P32 + 5, kLow, kLow, kMax, kMax, 0, 7, P32 + 1, P32 + 1}));
    EXPECT_EQ(i64_2(TGL_OP_MINIMUM, kCmpA, kCmpB), bits_of({5, 5, -1, -1, kMin, kMin, -P32, 7, P32, P32}));
    const std::vector<int64_t> x = {kMin, -1, -P32, P32, kMax, 0, -P32 - 1, -kMax};
    EXPECT_EQ(i64_1(TGL_OP_ABS, x), bits_of({kMin, 1, P32, P32, kMax, 0, P32 + 1, kMax}));  // |INT64_MIN| wraps
    EXPECT_EQ(i64_1(TGL_OP_NEG, x), bits_of({kMin, 1, P32, -P32, -kMax, 0, P32 + 1, kMax}));
}

TEST_F(Int64Arith, ClampRoundsItsBoundsInwardAndSaturates) {
    auto clamp = [](float lo, float hi, const std::vector<int64_t>& x) {
        tgl_clamp_params p{sizeof(tgl_clamp_params), lo, hi, 0};
        return i64_1(TGL_OP_CLAMP, x, &p);
    };
    EXPECT_EQ(clamp(-2.5f, 2.5f, {-3, -2, 0, 2, 3, kMin, kMax, P32 + 1}), bits_of({-2, -2, 0, 2, 2, -2, 2, 2}));
    // Bounds past 2^32 act on the high word: f32 3e9 and 5e9 are exact.
    EXPECT_EQ(clamp(3e9f, 5e9f, {0, P32 + 7, P33, -1}), bits_of({3000000000, P32 + 7, 5000000000, 3000000000}));
    // -inf: no lower bound; 2^40 exact; f32 beyond +-2^63 saturates to the i64 range.
    EXPECT_EQ(clamp(-kInf, float(P40), {P40 + 1, kMin, P33}), bits_of({P40, kMin, P33}));
    EXPECT_EQ(clamp(-9.3e18f, 9.3e18f, {kMax, kMin, -7}), bits_of({kMax, kMin, -7}));
    EXPECT_EQ(clamp(3.0f, 1.0f, {0, 2, P40}), bits_of({1, 1, 1}));  // lo > hi: hi wins
}

TEST_F(Int64Arith, BroadcastAndAddN) {
    // (2, 3) + (3,): the row repeated; add_n of three i64 wraps as chained adds.
    const Bits y = run_bits(TGL_OP_ADD, nullptr, {i64_input({2, 3}, {kLow, kMax, -1, 0, P32, kMin}), i64_input({3}, {1, 1, -P32})},
                            {output_of(I64, {2, 3})});
    EXPECT_EQ(y, bits_of({P32, kMin, -P32 - 1, 1, P32 + 1, kMax - P32 + 1}));
    const Shape s{3};
    EXPECT_EQ(run_bits(TGL_OP_ADD_N, nullptr, {i64_input(s, {kMax, kLow, -1}), i64_input(s, {1, 1, -1}), i64_input(s, {kMax, P32, kMin})},
                       {output_of(I64, s)}),
              bits_of({-1, 2 * P32, kMax - 1}));  // kMax + 1 = kMin, kMin + kMax = -1; -2 + kMin wraps
}

tgl_reduce_params axes(std::vector<int> a) { return reduce_params(std::move(a), false); }

TEST_F(Int64Arith, SumProdMaxMinExactAndWrapping) {
    auto red = [](tgl_op op, const Shape& xs, const std::vector<int64_t>& x, std::vector<int> ax, const Shape& ys) {
        tgl_reduce_params p = axes(std::move(ax));
        return run_bits(op, &p, {x.empty() ? empty_input(I64, xs) : i64_input(xs, x)}, {output_of(I64, ys)});
    };
    EXPECT_EQ(red(TGL_OP_SUM, {3}, {kMax, 1, 5}, {0}, {}), bits_of({kMin + 5}));
    EXPECT_EQ(red(TGL_OP_SUM, {3}, {kLow, kLow, kLow}, {0}, {}), bits_of({3 * kLow}));
    EXPECT_EQ(red(TGL_OP_SUM, {4}, {-P32, P31, P31, -1}, {0}, {}), bits_of({-1}));
    EXPECT_EQ(red(TGL_OP_SUM, {0}, {}, {0}, {}), bits_of({0}));
    EXPECT_EQ(red(TGL_OP_PROD, {3}, {P32, P32, 3}, {0}, {}), bits_of({0}));
    EXPECT_EQ(red(TGL_OP_PROD, {3}, {-3, P31, 5}, {0}, {}), bits_of({-15 * P31}));
    EXPECT_EQ(red(TGL_OP_PROD, {0}, {}, {0}, {}), bits_of({1}));
    EXPECT_EQ(red(TGL_OP_MAX, {3}, {P32 + 1, P32, -5}, {0}, {}), bits_of({P32 + 1}));
    EXPECT_EQ(red(TGL_OP_MIN, {4}, {P32 + 1, kMin, -5, kLow}, {0}, {}), bits_of({kMin}));
    EXPECT_EQ(red(TGL_OP_MAX, {3}, {-P32 - 1, -1, -P32}, {0}, {}), bits_of({-1}));  // -2^32 - 1 and -1: one low word
    // Long rows (split workgroup reductions): partial sums cross 2^32 thousands of times.
    const int64_t n = 100000;
    EXPECT_EQ(red(TGL_OP_SUM, {n}, std::vector<int64_t>(size_t(n), kLow), {0}, {}), bits_of({n * kLow}));
    EXPECT_EQ(red(TGL_OP_SUM, {n}, std::vector<int64_t>(size_t(n), kMax), {0}, {}), bits_of({-n}));  // n (2^63 - 1) mod 2^64
    std::vector<int64_t> alternating;  // +(2^32 + 1), -2^32, ...: the sum is n / 2
    for (int64_t i = 0; i < n; ++i) alternating.push_back(i % 2 ? -P32 : P32 + 1);
    EXPECT_EQ(red(TGL_OP_SUM, {n}, alternating, {0}, {}), bits_of({n / 2}));
    EXPECT_EQ(red(TGL_OP_PROD, {10001}, std::vector<int64_t>(10001, -1), {0}, {}), bits_of({-1}));
    // Columns (n, 3): 2^32 - 1, -1, and 1 except INT64_MIN in one row.
    const int64_t m = 10000;
    std::vector<int64_t> cols;
    for (int64_t i = 0; i < m; ++i) cols.insert(cols.end(), {kLow, -1, i == 4321 ? kMin : 1});
    EXPECT_EQ(red(TGL_OP_SUM, {m, 3}, cols, {0}, {3}), bits_of({m * kLow, -m, kMin + m - 1}));
    EXPECT_EQ(red(TGL_OP_MIN, {m, 3}, cols, {0}, {3}), bits_of({kLow, -1, kMin}));
    EXPECT_EQ(red(TGL_OP_MAX, {m, 3}, cols, {0}, {3}), bits_of({kLow, -1, 1}));
}

TEST_F(Int64Arith, ArgmaxArgminWriteI64Indices) {
    auto arg = [](tgl_op op, const Shape& xs, const std::vector<double>& x, int axis, bool last, const Shape& ys) {
        tgl_arg_reduce_params p{};
        p.struct_size = sizeof p;
        p.axis = axis;
        p.select_last_index = last ? 1 : 0;
        return run_bits(op, &p, {input_values(TGL_DTYPE_F32, xs, x)}, {output_of(I64, ys)});
    };
    // Both words of every index are written (the output starts poisoned).
    EXPECT_EQ(arg(TGL_OP_ARGMAX, {4}, {1, 5, 5, 2}, 0, false, {}), Bits({1}));
    EXPECT_EQ(arg(TGL_OP_ARGMAX, {4}, {1, 5, 5, 2}, 0, true, {}), Bits({2}));
    EXPECT_EQ(arg(TGL_OP_ARGMIN, {2, 3}, {1, 5, 1, 7, -2, -2}, 1, false, {2}), Bits({0, 1}));
    EXPECT_EQ(arg(TGL_OP_ARGMIN, {2, 3}, {1, 5, 1, 7, -2, -2}, 1, true, {2}), Bits({2, 2}));
    // A long row (a workgroup per output on GLES) and an i8 x.
    std::vector<double> row(5000, 0.0);
    row[4321] = 9;
    row[4999] = 9;
    EXPECT_EQ(arg(TGL_OP_ARGMAX, {5000}, row, 0, false, {}), Bits({4321}));
    EXPECT_EQ(arg(TGL_OP_ARGMAX, {5000}, row, 0, true, {}), Bits({4999}));
    tgl_arg_reduce_params p{};
    p.struct_size = sizeof p;
    EXPECT_EQ(run_bits(TGL_OP_ARGMIN, &p, {input_values(TGL_DTYPE_I8, {4}, {3, -100, 127, -100})}, {output_of(I64, {})}), Bits({1}));
}

TEST_F(Int64Arith, BadInputIsRejected) {
    const Shape s{3};
    const std::vector<int64_t> v = {1, 2, 3};
    const std::vector<double> d = {1, 2, 3};
    // Mixed dtypes: i64 with i32, an i64 sum into i32, a comparison into i64.
    expect_rejected(TGL_OP_ADD, nullptr, {i64_input(s, v), input_values(TGL_DTYPE_I32, s, d)}, {output_of(I64, s)},
                    TGL_ERROR_DTYPE_MISMATCH, {"add", "b"});
    expect_rejected(TGL_OP_LT, nullptr, {i64_input(s, v), i64_input(s, v)}, {output_of(I64, s)}, TGL_ERROR_DTYPE_MISMATCH,
                    {"lt", "y"});
    tgl_reduce_params p = axes({0});
    expect_rejected(TGL_OP_SUM, &p, {i64_input(s, v)}, {output_of(TGL_DTYPE_I32, {})}, TGL_ERROR_DTYPE_MISMATCH, {"sum", "y"});
    // The i64 ops still refused: division, remainder, pow, mean, the scans, the logical ops.
    for (tgl_op op : {TGL_OP_DIV, TGL_OP_FLOOR_DIVIDE, TGL_OP_FMOD, TGL_OP_REMAINDER, TGL_OP_POW, TGL_OP_LOGICAL_AND})
        expect_rejected(op, nullptr, {i64_input(s, v), i64_input(s, v)}, {output_of(op == TGL_OP_LOGICAL_AND ? BOOL : I64, s)},
                        TGL_ERROR_DTYPE_MISMATCH, {"i64"});
    expect_rejected(TGL_OP_MEAN, &p, {i64_input(s, v)}, {output_of(I64, {})}, TGL_ERROR_DTYPE_MISMATCH, {"mean", "i64"});
    tgl_scan_params sp{sizeof(tgl_scan_params), 0, 0, 0};
    expect_rejected(TGL_OP_CUMSUM, &sp, {i64_input(s, v)}, {output_of(I64, s)}, TGL_ERROR_DTYPE_MISMATCH, {"cumsum", "i64"});
    // argmax: x i64 is not taken (its index output may be i64), and the index is i32 or i64 only.
    tgl_arg_reduce_params ap{};
    ap.struct_size = sizeof ap;
    expect_rejected(TGL_OP_ARGMAX, &ap, {i64_input(s, v)}, {output_of(I64, {})}, TGL_ERROR_DTYPE_MISMATCH, {"argmax", "i64"});
    for (tgl_dtype y : {TGL_DTYPE_I16, TGL_DTYPE_F32, TGL_DTYPE_U8})
        expect_rejected(TGL_OP_ARGMAX, &ap, {input_values(TGL_DTYPE_F32, s, d)}, {output_of(y, {})}, TGL_ERROR_DTYPE_MISMATCH,
                        {"argmax", "y"});
    // An i64 op still checks its shapes.
    expect_rejected(TGL_OP_MUL, nullptr, {i64_input(s, v), i64_input({2}, {1, 2})}, {output_of(I64, s)}, TGL_ERROR_SHAPE_MISMATCH,
                    {"mul"});
}

}  // namespace
}  // namespace conf
