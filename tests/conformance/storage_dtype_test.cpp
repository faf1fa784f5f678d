// Known answers of the storage dtypes of ABI 1.3, i64 and i16: cast to and from every dtype
// (values past 2^31 and 2^53, INT64_MIN/MAX, rounding ties that a detour through double would
// round twice, saturation, wrap-around), the layout ops moving 8- and 2-byte elements bit for bit
// (a pad constant in both words of an i64), i64 indices in every op that takes an index (the whole
// 64-bit value checked: 2^32 + 1 is out of range, never 1), and the dtypes still refused. i64
// values travel as bits (the test support's doubles round past 2^53). Every expected value is
// written by hand.
#include "common.h"

#include "tgl_test/op_runner.h"

#include <cmath>
#include <string>
#include <vector>

namespace conf {
namespace {

using StorageDtypes = ConformanceTest;

const int64_t kMin = INT64_MIN, kMax = INT64_MAX;
const int64_t P24 = int64_t(1) << 24, P31 = int64_t(1) << 31, P32 = int64_t(1) << 32, P36 = int64_t(1) << 36,
              P52 = int64_t(1) << 52, P53 = int64_t(1) << 53, P60 = int64_t(1) << 60;

// Bits of values in a float dtype (the test support's own exact encoders; every value here is
// one the dtype holds) or an integer dtype.
Bits bits_of(tgl_dtype dt, const std::vector<double>& v) {
    Bits b;
    for (double x : v) b.push_back(value_to_bits(dt, x));
    return b;
}
Bits bits_of(const std::vector<int64_t>& v) { return Bits(v.begin(), v.end()); }

Bits cast(tgl_dtype from, const Bits& x, tgl_dtype to) {
    const int64_t n = int64_t(x.size());
    return run_bits(TGL_OP_CAST, nullptr, {bits_input(from, {n}, x)}, {output_of(to, {n})});
}

#define EXPECT_BITS(GOT, WANT) EXPECT_EQ(GOT, WANT)

// ----- cast ---------------------------------------------------------------------------------------

TEST_F(StorageDtypes, I64ToFloatsRoundsOnceToNearestEven) {
    // f32: a tie goes to even; 2^60 + 2^36 + 1 is just above a tie (through double, whose ulp
    // there is 256, it would become the tie and round down).
    const std::vector<int64_t> x = {0,       1,        -1,        P31,           -P31 - 1,           P53 + 1, kMax,
                                    kMin,    P24 + 1,  P24 + 3,   P60 + P36 + 1, -(P60 + P36 + 1), P60 + P36};
    const std::vector<double> f32 = {0,        1,       -1,      0x1p31, -0x1p31, 0x1p53,           0x1p63,
                                     -0x1p63,  0x1p24, 0x1p24 + 4, 0x1p60 + 0x1p37, -(0x1p60 + 0x1p37), 0x1p60};
    EXPECT_BITS(cast(I64, bits_of(x), F32), bits_of(F32, f32));
    // bf16 (8 significant bits): the same trap at 2^60 + 2^52 + 1; 257 is a tie (256).
    EXPECT_BITS(cast(I64, bits_of({P60 + P52 + 1, P60 + P52, 255, 257, kMax, -3}), BF16),
                bits_of(BF16, {0x1p60 + 0x1p53, 0x1p60, 255, 256, 0x1p63, -3}));
    // f16: past 65504 it overflows at the tie 65520; 2049 is a tie (2048).
    EXPECT_BITS(cast(I64, bits_of({65519, 65520, -65520, 2049, kMin, int64_t(1) << 40}), F16),
                bits_of(F16, {65504, dInf, -dInf, 2048, -dInf, dInf}));
}

TEST_F(StorageDtypes, I64ToNarrowerIntegersWraps) {
    const std::vector<int64_t> x = {0x123456789abcdef0, P31, -P31 - 1, kMax, kMin, -1, P32 + 5, 0xffff8000};
    EXPECT_BITS(cast(I64, bits_of(x), I32),
                bits_of(I32, {-1698898192, -0x1p31, 2147483647, -1, 0, -1, 5, -32768}));
    EXPECT_BITS(cast(I64, bits_of(x), I16), bits_of(I16, {-8464, 0, -1, -1, 0, -1, 5, -32768}));
    EXPECT_BITS(cast(I64, bits_of(x), I8), bits_of(I8, {-16, 0, -1, -1, 0, -1, 5, 0}));
    EXPECT_BITS(cast(I64, bits_of(x), U8), bits_of(U8, {240, 0, 255, 255, 0, 255, 5, 0}));
    // bool: nonzero anywhere in the 64 bits (2^32 and INT64_MIN have a zero low word).
    EXPECT_BITS(cast(I64, bits_of({0, P32, kMin, 1, -1}), BOOL), bits_of(BOOL, {0, 1, 1, 1, 1}));
    EXPECT_BITS(cast(I64, bits_of(x), I64), bits_of(x));
}

TEST_F(StorageDtypes, FloatsToI64TruncateAndSaturate) {
    const double below_2_63 = 0x1p63 - 0x1p39;  // the largest f32 below 2^63
    EXPECT_BITS(cast(F32,
                     bits_of(F32, {1.5, -1.5, 0x1p40, -0x1p62, 0x1p63, -0x1p63, 1e30, -dInf, dNaN, 0.75, -0.0, 3e9,
                                   below_2_63, dInf, -1e30}),
                     I64),
                bits_of({1, -1, int64_t(1) << 40, -(int64_t(1) << 62), kMax, kMin, kMax, kMin, 0, 0, 0, 3000000000,
                         int64_t(below_2_63), kMax, kMin}));
    EXPECT_BITS(cast(F16, bits_of(F16, {65504, -dInf, -2.5, dNaN}), I64), bits_of({65504, kMin, -2, 0}));
    EXPECT_BITS(cast(BF16, bits_of(BF16, {0x1p62, -3.5, 0x1p64}), I64), bits_of({int64_t(1) << 62, -3, kMax}));
}

TEST_F(StorageDtypes, IntegersToI64SignExtend) {
    EXPECT_BITS(cast(I32, bits_of(I32, {-5, -0x1p31, 2147483647}), I64), bits_of({-5, -P31, P31 - 1}));
    EXPECT_BITS(cast(I16, bits_of(I16, {-32768, 32767}), I64), bits_of({-32768, 32767}));
    EXPECT_BITS(cast(I8, bits_of(I8, {-128, 127}), I64), bits_of({-128, 127}));
    EXPECT_BITS(cast(U8, bits_of(U8, {255, 0}), I64), bits_of({255, 0}));
    EXPECT_BITS(cast(BOOL, bits_of(BOOL, {1, 0}), I64), bits_of({1, 0}));
}

TEST_F(StorageDtypes, I16Casts) {
    EXPECT_BITS(cast(F32, bits_of(F32, {40000, -40000, 1.9, -1.9, dNaN, 32767.5, -0.0}), I16),
                bits_of(I16, {32767, -32768, 1, -1, 0, 32767, 0}));
    EXPECT_BITS(cast(I32, bits_of(I32, {65537, 32768, -32769}), I16), bits_of(I16, {1, -32768, 32767}));
    // f16 has 11 significant bits: 32767 rounds to 32768, 2049 is a tie (2048).
    EXPECT_BITS(cast(I16, bits_of(I16, {-32768, 32767, 2049, -7}), F16), bits_of(F16, {-32768, 32768, 2048, -7}));
    EXPECT_BITS(cast(I16, bits_of(I16, {-32768, 32767, -1}), F32), bits_of(F32, {-32768, 32767, -1}));
    EXPECT_BITS(cast(I16, bits_of(I16, {-1, 263}), U8), bits_of(U8, {255, 7}));
    EXPECT_BITS(cast(I16, bits_of(I16, {-1, 263}), I8), bits_of(I8, {-1, 7}));
    EXPECT_BITS(cast(U8, bits_of(U8, {255}), I16), bits_of(I16, {255}));
    EXPECT_BITS(cast(I16, bits_of(I16, {0, -2}), BOOL), bits_of(BOOL, {0, 1}));
}

// ----- layout ops -----------------------------------------------------------------------------------

template <class P>
P zeroed() {
    P p{};
    p.struct_size = sizeof p;
    return p;
}

TEST_F(StorageDtypes, I64LayoutOpsMoveBothWords) {
    const std::vector<int64_t> x = {kMin, kMax, 0x123456789abcdef0, -1, P53 + 1, 0x00000001ffffffff};  // (2, 3)
    const InputArg xi = i64_input({2, 3}, x);
    auto perm = zeroed<tgl_permute_params>();
    perm.perm[0] = 1;
    perm.perm[1] = 0;
    EXPECT_BITS(run_bits(TGL_OP_PERMUTE, &perm, {xi}, {output_of(I64, {3, 2})}), bits_of({x[0], x[3], x[1], x[4], x[2], x[5]}));
    auto flip = zeroed<tgl_flip_params>();
    flip.n_axes = 1;
    flip.axes[0] = 1;
    EXPECT_BITS(run_bits(TGL_OP_FLIP, &flip, {xi}, {output_of(I64, {2, 3})}), bits_of({x[2], x[1], x[0], x[5], x[4], x[3]}));
    // pad: the constant -2^40 in both words; 2^63 saturates to INT64_MAX as cast converts it.
    for (double value : {-0x1p40, 0x1p63}) {
        auto pad = zeroed<tgl_pad_params>();
        pad.mode = TGL_PAD_CONSTANT;
        pad.value = value;
        pad.before[1] = 1;
        const int64_t c = value < 0 ? -(int64_t(1) << 40) : kMax;
        EXPECT_BITS(run_bits(TGL_OP_PAD, &pad, {xi}, {output_of(I64, {2, 4})}), bits_of({c, x[0], x[1], x[2], c, x[3], x[4], x[5]}));
    }
    auto roll = zeroed<tgl_roll_params>();
    roll.shifts[0] = 2;  // flattened
    EXPECT_BITS(run_bits(TGL_OP_ROLL, &roll, {xi}, {output_of(I64, {2, 3})}), bits_of({x[4], x[5], x[0], x[1], x[2], x[3]}));
    auto axis1 = zeroed<tgl_axis_params>();
    axis1.axis = 1;
    EXPECT_BITS(run_bits(TGL_OP_CONCAT, &axis1, {xi, i64_input({2, 1}, {7, -7})}, {output_of(I64, {2, 4})}),
                bits_of({x[0], x[1], x[2], 7, x[3], x[4], x[5], -7}));
    InputArg row = i64_input({1, 3}, {x[0], x[2], x[4]});
    EXPECT_BITS(run_bits(TGL_OP_EXPAND, nullptr, {row}, {output_of(I64, {2, 3})}), bits_of({x[0], x[2], x[4], x[0], x[2], x[4]}));
    auto slice = zeroed<tgl_slice_params>();
    slice.axis = 1;
    slice.start = 2;
    slice.stop = -4;  // Python slice(2, -4, -2) of 3: elements 2, 0
    slice.step = -2;
    EXPECT_BITS(run_bits(TGL_OP_SLICE, &slice, {xi}, {output_of(I64, {2, 2})}), bits_of({x[2], x[0], x[5], x[3]}));
    EXPECT_BITS(run_bits(TGL_OP_TILE, nullptr, {row}, {output_of(I64, {1, 6})}), bits_of({x[0], x[2], x[4], x[0], x[2], x[4]}));
    // A non-contiguous (transposed) output view: both words land at the strided positions.
    OutputArg t = output_of(I64, {2, 3});
    Layout tr;
    tr.name = "transposed";
    tr.perm = {1, 0};
    t.view = make_view({2, 3}, tr);
    EXPECT_BITS(run_bits(TGL_OP_CONTIGUOUS, nullptr, {xi}, {t}), bits_of(x));
}

// ----- i64 indices ----------------------------------------------------------------------------------

tgl_axis_params axis_p(int axis) { return tgl_axis_params{sizeof(tgl_axis_params), axis, 0}; }

std::vector<double> values(tgl_op op, const void* params, const std::vector<InputArg>& ins, const OutputArg& out) {
    return run_op_values(dev(), op, params, ins, {out})[0];
}

// The index ops with an i64 index give what they give with the same i32 index (known answers of
// those: index_test.cpp), and the hand-checked values here.
TEST_F(StorageDtypes, IndexOpsTakeI64Indices) {
    const InputArg x = input_values(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
    const tgl_axis_params a0 = axis_p(0), a1 = axis_p(1);
    EXPECT_EQ(values(TGL_OP_GATHER, &a1, {x, i64_input({2, 2}, {2, 0, 1, 1})}, output_of(F32, {2, 2})),
              (std::vector<double>{3, 1, 5, 5}));
    EXPECT_EQ(values(TGL_OP_INDEX_SELECT, &a0, {x, i64_input({3}, {1, 0, 1})}, output_of(F32, {3, 3})),
              (std::vector<double>{4, 5, 6, 1, 2, 3, 4, 5, 6}));
    // scatter: duplicates, the last wins; scatter_add sums them.
    const InputArg src = input_values(F32, {1, 3}, {10, 20, 30});
    EXPECT_EQ(values(TGL_OP_SCATTER, &a1, {x, i64_input({1, 3}, {2, 0, 2}), src}, output_of(F32, {2, 3})),
              (std::vector<double>{20, 2, 30, 4, 5, 6}));
    EXPECT_EQ(values(TGL_OP_SCATTER_ADD, &a1, {x, i64_input({1, 3}, {2, 0, 2}), src}, output_of(F32, {2, 3})),
              (std::vector<double>{21, 2, 43, 4, 5, 6}));
    EXPECT_EQ(values(TGL_OP_ONE_HOT, nullptr, {i64_input({3}, {2, 0, 1})}, output_of(I32, {3, 3})),
              (std::vector<double>{0, 0, 1, 1, 0, 0, 0, 1, 0}));
    // A strided (every other element) i64 index.
    InputArg strided = i64_input({4}, {1, 99, 0, 99});
    strided.view = View{{2}, {2}, 0, 4, "every other"};
    EXPECT_EQ(values(TGL_OP_INDEX_SELECT, &a0, {x, strided}, output_of(F32, {2, 3})), (std::vector<double>{4, 5, 6, 1, 2, 3}));
}

// grouped_linear, embedding_backward and cross_entropy(_backward): the i64 index gives the same
// bits as the i32 one.
TEST_F(StorageDtypes, IndexOfMatmulAndLossesTakesI64) {
    auto same_with_both = [](tgl_op op, const void* params, std::vector<InputArg> ins, size_t index_slot,
                             const std::vector<double>& index, const Shape& index_shape, const OutputArg& out) {
        ins[index_slot] = input_values(I32, index_shape, index);
        const std::vector<double> with_i32 = values(op, params, ins, out);
        std::vector<int64_t> wide(index.begin(), index.end());
        ins[index_slot] = i64_input(index_shape, wide);
        const std::vector<double> with_i64 = values(op, params, ins, out);
        EXPECT_TRUE(compare(out.dtype, with_i64, with_i32, out.view.shape, 0.0, CompareMode::ExactBits, "op " + std::to_string(op)));
    };
    tgl_linear_params lp{};
    lp.struct_size = sizeof lp;
    same_with_both(TGL_OP_GROUPED_LINEAR, &lp,
                   {input_values(F32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), input_values(F32, {3, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2, 1, 1, 1, -1}),
                    InputArg{}, absent_input()},
                   2, {2, 0, 1, 2}, {4}, output_of(F32, {4, 2}));
    same_with_both(TGL_OP_EMBEDDING_BACKWARD, nullptr, {input_values(F32, {3, 2}, {1, 2, 3, 4, 5, 6}), InputArg{}}, 1, {2, 0, 2},
                   {3}, output_of(F32, {4, 2}));
    const InputArg logits = input_values(F32, {2, 3}, {1, 2, 3, 0.5, -1, 2});
    tgl_cross_entropy_params ce{sizeof(tgl_cross_entropy_params), TGL_REDUCTION_NONE, -100, 0.0f};
    same_with_both(TGL_OP_CROSS_ENTROPY, &ce, {logits, InputArg{}}, 1, {2, -100}, {2}, output_of(F32, {2}));
    same_with_both(TGL_OP_CROSS_ENTROPY_BACKWARD, &ce, {logits, InputArg{}, input_values(F32, {2}, {1, 0.5})}, 1, {0, 1}, {2},
                   output_of(F32, {2, 3}));
}

// The whole 64-bit value is checked: 2^32 + 1 (low word 1), 2^31 (low word negative as an i32),
// -1, INT64_MIN (low word 0) and INT64_MAX are all out of range, nothing is written, and the
// message names the value. CPU: run_op fails; GLES: the next waiting call.
TEST_F(StorageDtypes, I64IndexOutOfRangeOnItsWholeValue) {
    const InputArg x = input_values(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
    const tgl_axis_params a0 = axis_p(0), a1 = axis_p(1);
    tgl_linear_params lp{};
    lp.struct_size = sizeof lp;
    tgl_cross_entropy_params ce{sizeof(tgl_cross_entropy_params), TGL_REDUCTION_NONE, 1, 0.0f};
    for (int64_t bad : {P32 + 1, P31, int64_t(-1), kMin, kMax}) {
        const std::vector<IndexErrorCase> cases = {
            {"gather", TGL_OP_GATHER, &a1, {x, i64_input({2, 1}, {0, bad})}, output_of(F32, {2, 1}), {}},
            {"index_select", TGL_OP_INDEX_SELECT, &a0, {x, i64_input({2}, {bad, 0})}, output_of(F32, {2, 3}), {}},
            {"scatter", TGL_OP_SCATTER, &a0, {x, i64_input({1, 1}, {bad}), input_values(F32, {1, 1}, {9})}, output_of(F32, {2, 3}), {}},
            {"scatter_add", TGL_OP_SCATTER_ADD, &a1, {x, i64_input({1, 2}, {0, bad}), input_values(F32, {1, 2}, {9, 9})},
             output_of(F32, {2, 3}), {}},
            {"one_hot", TGL_OP_ONE_HOT, nullptr, {i64_input({2}, {1, bad})}, output_of(F32, {2, 3}), {}},
            {"grouped_linear", TGL_OP_GROUPED_LINEAR, &lp,
             {input_values(F32, {2, 2}, {1, 2, 3, 4}), input_values(F32, {2, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2}),
              i64_input({2}, {0, bad}), absent_input()},
             output_of(F32, {2, 2}), {}},
            {"embedding_backward", TGL_OP_EMBEDDING_BACKWARD, nullptr, {input_values(F32, {2, 2}, {1, 2, 3, 4}), i64_input({2}, {bad, 0})},
             output_of(F32, {3, 2}), {}},
            // ignore_index 1: a value whose low word is 1 (2^32 + 1) is not ignored.
            {"cross_entropy", TGL_OP_CROSS_ENTROPY, &ce, {x, i64_input({2}, {0, bad})}, output_of(F32, {2}), {}},
        };
        for (IndexErrorCase c : cases) {
            SCOPED_TRACE(c.name + " with " + std::to_string(bad));
            c.tokens = {c.name, "holds " + std::to_string(bad)};
            expect_index_out_of_range(c);
        }
    }
}

// topk, sort and argsort write i64 indices (both words; the poison of the output must be gone).
TEST_F(StorageDtypes, SelectionWritesI64Indices) {
    const InputArg x = input_values(F32, {2, 4}, {3, 1, 2, 1, -1, 5, 5, 0});
    const tgl_sort_params asc{sizeof(tgl_sort_params), 1, 0, 0}, desc{sizeof(tgl_sort_params), -1, 1, 0};
    EXPECT_BITS(run_bits(TGL_OP_ARGSORT, &asc, {x}, {output_of(I64, {2, 4})}), bits_of({1, 3, 2, 0, 0, 3, 1, 2}));
    EXPECT_BITS(run_bits(TGL_OP_SORT, &desc, {x}, {output_of(F32, {2, 4}), output_of(I64, {2, 4})}, 1),
                bits_of({0, 2, 1, 3, 1, 2, 3, 0}));
    EXPECT_BITS(run_bits(TGL_OP_TOPK, &desc, {x}, {output_of(F32, {2, 2}), output_of(I64, {2, 2})}, 1), bits_of({0, 2, 1, 2}));
}

// ----- refused dtypes -------------------------------------------------------------------------------

TEST_F(StorageDtypes, RefusedWhereNotTaken) {
    const InputArg x64 = i64_input({2}, {1, 2});
    const InputArg x16 = input_values(I16, {2}, {1, 2});
    const tgl_axis_params a0 = axis_p(0);
    // Index of another integer dtype.
    expect_rejected(TGL_OP_GATHER, &a0, {input_values(F32, {2}, {1, 2}), x16}, {output_of(F32, {2})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"gather", "i16", "i32, i64"});
    // i64 data where an op handles elements as 32-bit words.
    expect_rejected(TGL_OP_GATHER, &a0, {x64, input_values(I32, {2}, {0, 1})}, {output_of(I64, {2})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"gather", "i64"});
    expect_rejected(TGL_OP_WHERE, nullptr, {input_values(BOOL, {2}, {1, 0}), x64, x64}, {output_of(I64, {2})},
                    TGL_ERROR_DTYPE_MISMATCH, {"where", "i64"});
    expect_rejected(TGL_OP_FULL, nullptr, {}, {output_of(I64, {2})}, TGL_ERROR_DTYPE_MISMATCH, {"full", "i64"});
    // Layout ops keep one dtype.
    expect_rejected(TGL_OP_CONTIGUOUS, nullptr, {x64}, {output_of(I32, {2})}, TGL_ERROR_DTYPE_MISMATCH, {"i64", "i32"});
    expect_rejected(TGL_OP_CONTIGUOUS, nullptr, {x16}, {output_of(F16, {2})}, TGL_ERROR_DTYPE_MISMATCH, {"i16", "f16"});
    // An i64 view whose byte offset is not a multiple of 8.
    tgl_test::OpCall call(dev(), {x64}, {output_of(I64, {1})});
    std::vector<tgl_tensor> in = call.input_descs(), out = call.output_descs();
    in[0].shape[0] = 1;
    in[0].byte_offset += 4;
    EXPECT_TGL_ERROR(dev().api().run_op(dev().handle(), TGL_OP_CONTIGUOUS, nullptr, in.data(), 1, out.data(), 1),
                     TGL_ERROR_INVALID_ARGUMENT, {"byte_offset", "i64", "8"});
    EXPECT_TRUE(call.all_unchanged());
}

}  // namespace
}  // namespace conf
