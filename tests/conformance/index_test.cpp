// Conformance (known-answer, bad-input) tests of the index ops: gather, index_select, scatter,
// scatter_add, one_hot, set_rows. Out-of-range indices: the CPU plugin fails run_op, the GLES plugin the next
// waiting call (synchronize / download); either way nothing is written and the device stays usable.
#include "common.h"

#include "tgl_test/op_runner.h"

#include <future>
#include <thread>

namespace conf {
namespace {

using IndexOps = ConformanceTest;

tgl_axis_params axis_p(int axis) { return tgl_axis_params{sizeof(tgl_axis_params), axis, TGL_SCATTER_REPLACE}; }

InputArg idx(const Shape& s, const std::vector<double>& v) { return input_values(I32, s, v); }

std::vector<double> run1(tgl_op op, const void* params, const std::vector<InputArg>& in, const OutputArg& out) {
    return run_op_values(dev(), op, params, in, {out})[0];
}

::testing::AssertionResult same(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::ExactBits);
}

std::vector<double> iota(int64_t n, double start = 0) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = start + double(i);
    return v;
}

// ----- known answers ------------------------------------------------------------------------------

TEST_F(IndexOps, GatherAxes) {
    const InputArg x = input_values(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
    tgl_axis_params a0 = axis_p(0), a1 = axis_p(1), am1 = axis_p(-1);
    EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, &a0, {x, idx({2, 3}, {1, 0, 1, 0, 0, 1})}, output_of(F32, {2, 3})),
                     {4, 2, 6, 1, 2, 6}));
    // index smaller than x off the axis (2 <= 3), PyTorch's rule.
    EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, &a0, {x, idx({1, 2}, {1, 1})}, output_of(F32, {1, 2})), {4, 5}));
    EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, &a1, {x, idx({2, 2}, {2, 0, 1, 1})}, output_of(F32, {2, 2})),
                     {3, 1, 5, 5}));
    EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, &am1, {x, idx({2, 4}, {0, 0, 2, 1, 2, 2, 2, 0})}, output_of(F32, {2, 4})),
                     {1, 1, 3, 2, 6, 6, 6, 4}));
    // rank 3, the middle axis; NULL params is axis 0.
    const InputArg x3 = input_values(F32, {2, 3, 2}, iota(12));
    EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, &a1, {x3, idx({2, 1, 2}, {2, 0, 1, 2})}, output_of(F32, {2, 1, 2})),
                     {4, 1, 8, 11}));
    EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, nullptr, {x3, idx({1, 1, 1}, {1})}, output_of(F32, {1, 1, 1})), {6}));
    // rank 0: the one element.
    EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, nullptr, {input_values(F32, {}, {7.5}), idx({}, {0})}, output_of(F32, {})),
                     {7.5}));
    // special values are moved bit for bit.
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, &a0, {input_values(F32, {4}, {-0.0, inf, -inf, 1e-40}), idx({5}, {3, 2, 1, 0, 0})},
                               output_of(F32, {5})),
                     {1e-40, -inf, inf, -0.0, -0.0}));
}

TEST_F(IndexOps, IndexSelectEmbedding) {
    std::vector<double> table;
    for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 3; ++c) table.push_back(r * 10 + c);
    const InputArg emb = input_values(F32, {4, 3}, table);
    tgl_axis_params a0 = axis_p(0), a1 = axis_p(1);
    EXPECT_TRUE(same(F32, run1(TGL_OP_INDEX_SELECT, &a0, {emb, idx({3}, {3, 0, 3})}, output_of(F32, {3, 3})),
                     {30, 31, 32, 0, 1, 2, 30, 31, 32}));
    EXPECT_TRUE(same(F32, run1(TGL_OP_INDEX_SELECT, &a1, {emb, idx({2}, {2, 2})}, output_of(F32, {4, 2})),
                     {2, 2, 12, 12, 22, 22, 32, 32}));
    // f16 rows, an embedding in half precision.
    EXPECT_TRUE(same(F16, run1(TGL_OP_INDEX_SELECT, nullptr, {input_values(F16, {3, 1}, {0.5, 1.5, 65504}), idx({4}, {2, 1, 0, 2})},
                               output_of(F16, {4, 1})),
                     {65504, 1.5, 0.5, 65504}));
}

TEST_F(IndexOps, ScatterDuplicatesLastWins) {
    tgl_axis_params a0 = axis_p(0), a1 = axis_p(1);
    const InputArg x = input_values(F32, {2, 4}, iota(8, 1));
    EXPECT_TRUE(same(F32, run1(TGL_OP_SCATTER, &a1, {x, idx({2, 3}, {1, 1, 3, 0, 2, 0}), input_values(F32, {2, 3}, {10, 20, 30, 40, 50, 60})},
                               output_of(F32, {2, 4})),
                     {1, 20, 3, 30, 60, 6, 50, 8}));
    // axis 0, src larger than index (only its leading elements are read)
    EXPECT_TRUE(same(F32, run1(TGL_OP_SCATTER, &a0, {input_values(F32, {3, 2}, {-1, -1, -1, -1, -1, -1}), idx({2, 2}, {2, 0, 2, 1}),
                                                      input_values(F32, {2, 3}, {1, 2, 99, 3, 4, 99})},
                               output_of(F32, {3, 2})),
                     {-1, 2, -1, 4, 3, -1}));
    // empty index: y = x
    EXPECT_TRUE(same(F32, run1(TGL_OP_SCATTER, &a1, {x, empty_input(I32, {2, 0}), empty_input(F32, {2, 0})}, output_of(F32, {2, 4})),
                     iota(8, 1)));
}

TEST_F(IndexOps, ScatterAddDuplicatesSum) {
    tgl_axis_params a1 = axis_p(1);
    const std::vector<double> want = {1, 32, 3, 34, 105, 6, 57, 8};
    for (tgl_dtype dt : {F32, F16, I32}) {
        SCOPED_TRACE(dtype_name(dt));
        EXPECT_TRUE(same(dt, run1(TGL_OP_SCATTER_ADD, &a1, {input_values(dt, {2, 4}, iota(8, 1)), idx({2, 3}, {1, 1, 3, 0, 2, 0}),
                                                            input_values(dt, {2, 3}, {10, 20, 30, 40, 50, 60})},
                                  output_of(dt, {2, 4})),
                         want));
    }
    // f16 rounds once per output element: 2048 + 1 + 1 = 2050 exactly (stepwise f16 would give 2048).
    EXPECT_TRUE(same(F16, run1(TGL_OP_SCATTER_ADD, nullptr, {input_values(F16, {1}, {2048}), idx({2}, {0, 0}), input_values(F16, {2}, {1, 1})},
                               output_of(F16, {1})),
                     {2050}));
    // f16 overflow to inf; i32 wraps
    EXPECT_TRUE(same(F16, run1(TGL_OP_SCATTER_ADD, nullptr, {input_values(F16, {1}, {65504}), idx({1}, {0}), input_values(F16, {1}, {65504})},
                               output_of(F16, {1})),
                     {std::numeric_limits<double>::infinity()}));
    EXPECT_TRUE(same(I32, run1(TGL_OP_SCATTER_ADD, nullptr, {input_values(I32, {1}, {2147483647}), idx({1}, {0}), input_values(I32, {1}, {1})},
                               output_of(I32, {1})),
                     {-2147483648.0}));
}

// scatter's reductions (ABI 1.3): x's element combined with every src element that lands on it, in
// increasing index position. x = [[1, 2, 3, 4], [5, 6, 7, 8]], index (axis 1) [[1, 1, 3], [0, 2, 0]],
// src [[-1, 3, 30], [40, -2, 4]].
TEST_F(IndexOps, ScatterReductions) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    struct R {
        uint32_t reduction;
        std::vector<double> want;
    };
    const std::vector<R> rs = {{TGL_SCATTER_MUL, {1, -6, 3, 120, 800, 6, -14, 8}},
                               {TGL_SCATTER_AMIN, {1, -1, 3, 4, 4, 6, -2, 8}},
                               {TGL_SCATTER_AMAX, {1, 3, 3, 30, 40, 6, 7, 8}}};
    for (tgl_dtype dt : {F32, F16, I32})
        for (const R& r : rs) {
            SCOPED_TRACE(dtype_name(dt) + " reduction " + std::to_string(r.reduction));
            const tgl_axis_params p{sizeof(tgl_axis_params), 1, r.reduction};
            EXPECT_TRUE(same(dt, run1(TGL_OP_SCATTER, &p, {input_values(dt, {2, 4}, iota(8, 1)), idx({2, 3}, {1, 1, 3, 0, 2, 0}),
                                                           input_values(dt, {2, 3}, {-1, 3, 30, 40, -2, 4})},
                                      output_of(dt, {2, 4})),
                             r.want));
        }
    // Special values: NaN propagates through amin/amax (either side), -0 < +0, inf * 0 = NaN; an
    // element no index reaches keeps x's bits (the NaN at position 3).
    const std::vector<double> x = {1, nan, 0.0, nan, -0.0, inf};
    const std::vector<double> src = {nan, 5, -0.0, 0.0, 0.0, 0.0};
    const std::vector<double> index = {0, 1, 2, 4, 4, 5};
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        tgl_axis_params p{sizeof(tgl_axis_params), 0, TGL_SCATTER_AMAX};
        EXPECT_TRUE(same(dt, run1(TGL_OP_SCATTER, &p, {input_values(dt, {6}, x), idx({6}, index), input_values(dt, {6}, src)}, output_of(dt, {6})),
                         {nan, nan, 0.0, nan, 0.0, inf}));
        p.reduction = TGL_SCATTER_AMIN;
        EXPECT_TRUE(same(dt, run1(TGL_OP_SCATTER, &p, {input_values(dt, {6}, x), idx({6}, index), input_values(dt, {6}, src)}, output_of(dt, {6})),
                         {nan, nan, -0.0, nan, -0.0, 0.0}));
        p.reduction = TGL_SCATTER_MUL;
        EXPECT_TRUE(same(dt, run1(TGL_OP_SCATTER, &p, {input_values(dt, {6}, x), idx({6}, index), input_values(dt, {6}, src)}, output_of(dt, {6})),
                         {nan, nan, -0.0, nan, -0.0, nan}));
    }
    // i32 products wrap (2^16 * 2^16 = 0, (2^31 - 1) * 2 = -2); f16 overflows to inf.
    const tgl_axis_params mul{sizeof(tgl_axis_params), 0, TGL_SCATTER_MUL};
    EXPECT_TRUE(same(I32, run1(TGL_OP_SCATTER, &mul, {input_values(I32, {2}, {65536, 2147483647}), idx({2}, {0, 1}), input_values(I32, {2}, {65536, 2})},
                               output_of(I32, {2})),
                     {0, -2}));
    EXPECT_TRUE(same(F16, run1(TGL_OP_SCATTER, &mul, {input_values(F16, {1}, {300}), idx({2}, {0, 0}), input_values(F16, {2}, {300, 0.5})},
                               output_of(F16, {1})),
                     {45000}));  // 300 * 300 = 90000 is past f16's range, but the f32/double running product is not
}

TEST_F(IndexOps, ScatterInPlace) {
    Device& d = dev();
    tgl_axis_params a1 = axis_p(1);
    for (tgl_op op : {TGL_OP_SCATTER, TGL_OP_SCATTER_ADD}) {
        DeviceTensor x(d, contiguous({2, 3}), F32);
        x.set_logical({1, 2, 3, 4, 5, 6});
        DeviceTensor index(d, contiguous({2, 2}), I32);
        index.set_logical({2, 2, 0, 1});
        DeviceTensor src(d, contiguous({2, 2}), F32);
        src.set_logical({10, 20, 30, 40});
        d.run_ok(op, &a1, {x.desc(), index.desc(), src.desc()}, {x.desc()});
        std::vector<double> want = op == TGL_OP_SCATTER ? std::vector<double>{1, 2, 20, 30, 40, 6}
                                                        : std::vector<double>{1, 2, 33, 34, 45, 6};
        EXPECT_TRUE(same(F32, x.read_logical(), want)) << (op == TGL_OP_SCATTER ? "scatter" : "scatter_add");
        EXPECT_TRUE(index.unchanged());
        EXPECT_TRUE(src.unchanged());
    }
}

// set_rows: rows replaced along the axis; duplicates: the last in the index's order wins.
TEST_F(IndexOps, SetRowsKnownAnswers) {
    tgl_axis_params a0 = axis_p(0), a1 = axis_p(1), am1 = axis_p(-1);
    const InputArg x = input_values(F32, {4, 3}, iota(12, 1));
    EXPECT_TRUE(same(F32, run1(TGL_OP_SET_ROWS, &a0, {x, idx({2}, {2, 0}), input_values(F32, {2, 3}, {10, 20, 30, 40, 50, 60})},
                               output_of(F32, {4, 3})),
                     {40, 50, 60, 4, 5, 6, 10, 20, 30, 10, 11, 12}));
    // NULL params: axis 0; duplicates 3, 1, 3: position 2 wins row 3
    EXPECT_TRUE(same(F32, run1(TGL_OP_SET_ROWS, nullptr, {x, idx({3}, {3, 1, 3}), input_values(F32, {3, 3}, iota(9, 100))},
                               output_of(F32, {4, 3})),
                     {1, 2, 3, 103, 104, 105, 7, 8, 9, 106, 107, 108}));
    // along the last axis (columns), duplicates 0, 0
    const InputArg x2 = input_values(F32, {2, 4}, iota(8, 1));
    for (tgl_axis_params* a : {&a1, &am1})
        EXPECT_TRUE(same(F32, run1(TGL_OP_SET_ROWS, a, {x2, idx({3}, {0, 2, 0}), input_values(F32, {2, 3}, {10, 20, 30, 40, 50, 60})},
                                   output_of(F32, {2, 4})),
                         {30, 2, 20, 4, 60, 6, 50, 8}));
    // rank 3, the middle axis (a KV cache (heads, tokens, dim) written at token 1)
    const InputArg x3 = input_values(F32, {2, 3, 2}, iota(12));
    EXPECT_TRUE(same(F32, run1(TGL_OP_SET_ROWS, &a1, {x3, idx({1}, {1}), input_values(F32, {2, 1, 2}, {-1, -2, -3, -4})},
                               output_of(F32, {2, 3, 2})),
                     {0, 1, -1, -2, 4, 5, 6, 7, -3, -4, 10, 11}));
    // K = 0: y = x
    EXPECT_TRUE(same(F32, run1(TGL_OP_SET_ROWS, &a0, {x, empty_input(I32, {0}), empty_input(F32, {0, 3})}, output_of(F32, {4, 3})),
                     iota(12, 1)));
    // every dtype is moved bit for bit
    for (tgl_dtype dt : std::vector<tgl_dtype>{F16, TGL_DTYPE_BF16, I32, TGL_DTYPE_I8, U8, BOOL}) {
        SCOPED_TRACE(dtype_name(dt));
        const bool boolean = dt == BOOL;
        std::vector<double> xv = boolean ? std::vector<double>{0, 1, 0, 1, 0, 1} : iota(6, 1);
        std::vector<double> sv = boolean ? std::vector<double>{1, 0} : std::vector<double>{-7, 9};
        if (dt == U8) sv = {250, 9};
        std::vector<double> want = xv;
        want[4] = sv[0];
        want[5] = sv[1];
        EXPECT_TRUE(same(dt, run1(TGL_OP_SET_ROWS, &a0, {input_values(dt, {3, 2}, xv), idx({1}, {2}), input_values(dt, {1, 2}, sv)},
                                  output_of(dt, {3, 2})),
                         want));
    }
}

// In place (y the identical view of x): the K rows are written, every other element keeps its
// bytes; strided views (a cache of (tokens, heads, dim) written through a permuted view) too.
TEST_F(IndexOps, SetRowsInPlace) {
    Device& d = dev();
    tgl_axis_params a0 = axis_p(0), a1 = axis_p(1);
    const int64_t rows = 1000, width = 6;
    DeviceTensor x(d, contiguous({rows, width}), F32);
    std::vector<double> xv = iota(rows * width);
    x.set_logical(xv);
    DeviceTensor index(d, contiguous({3}), I32);
    index.set_logical({999, 0, 500});
    DeviceTensor src(d, contiguous({3, width}), F32);
    src.set_logical(iota(3 * width, -100));
    d.run_ok(TGL_OP_SET_ROWS, &a0, {x.desc(), index.desc(), src.desc()}, {x.desc()});
    std::vector<double> want = xv;
    const int64_t at[3] = {999, 0, 500};
    for (int64_t k = 0; k < 3; ++k)
        for (int64_t j = 0; j < width; ++j) want[size_t(at[k] * width + j)] = double(-100 + k * width + j);
    EXPECT_TRUE(same(F32, x.read_logical(), want));
    EXPECT_TRUE(index.unchanged());
    EXPECT_TRUE(src.unchanged());

    // a transposed view (width, rows) of a (rows, width) buffer, rows along axis 1
    View tv;
    tv.shape = {width, rows};
    tv.strides = {1, width};
    tv.storage = rows * width;
    tv.layout = "transposed";
    DeviceTensor t(d, tv, F32);
    t.set_logical(iota(rows * width));
    DeviceTensor col_src(d, contiguous({width, 2}), F32);
    col_src.set_logical(iota(width * 2, 5000));
    DeviceTensor cols(d, contiguous({2}), I32);
    cols.set_logical({7, 7});  // duplicates: position 1 wins
    d.run_ok(TGL_OP_SET_ROWS, &a1, {t.desc(), cols.desc(), col_src.desc()}, {t.desc()});
    std::vector<double> tw = iota(rows * width);
    for (int64_t j = 0; j < width; ++j) tw[size_t(j * rows + 7)] = double(5000 + j * 2 + 1);
    EXPECT_TRUE(same(F32, t.read_logical(), tw));
}

TEST_F(IndexOps, SetRowsBadInput) {
    tgl_axis_params a0 = axis_p(0), a2 = axis_p(2);
    const InputArg x = input_values(F32, {4, 3}, iota(12));
    const InputArg src = input_values(F32, {2, 3}, iota(6));
    expect_rejected(TGL_OP_SET_ROWS, &a0, {x, idx({1, 2}, {0, 1}), src}, {output_of(F32, {4, 3})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"set_rows", "index", "1-D", "(1, 2)"});
    expect_rejected(TGL_OP_SET_ROWS, &a0, {x, idx({2}, {0, 1}), input_values(F32, {2, 2}, iota(4))}, {output_of(F32, {4, 3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"src", "(2, 2)", "(2, 3)"});
    expect_rejected(TGL_OP_SET_ROWS, &a0, {x, idx({3}, {0, 1, 2}), src}, {output_of(F32, {4, 3})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"src", "(3, 3)"});
    expect_rejected(TGL_OP_SET_ROWS, &a0, {x, idx({2}, {0, 1}), src}, {output_of(F32, {3, 4})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"y", "(3, 4)"});
    expect_rejected(TGL_OP_SET_ROWS, &a0, {x, input_values(F32, {2}, {0, 1}), src}, {output_of(F32, {4, 3})},
                    TGL_ERROR_DTYPE_MISMATCH, {"index", "f32"});
    expect_rejected(TGL_OP_SET_ROWS, &a0, {x, idx({2}, {0, 1}), input_values(F16, {2, 3}, iota(6))}, {output_of(F32, {4, 3})},
                    TGL_ERROR_DTYPE_MISMATCH, {"src", "f16"});
    expect_rejected(TGL_OP_SET_ROWS, &a2, {x, idx({2}, {0, 1}), src}, {output_of(F32, {4, 3})}, TGL_ERROR_AXIS_OUT_OF_RANGE,
                    {"axis", "2"});
    expect_rejected(TGL_OP_SET_ROWS, nullptr, {input_values(F32, {}, {1}), idx({1}, {0}), input_values(F32, {1}, {2})},
                    {output_of(F32, {})}, TGL_ERROR_SHAPE_MISMATCH, {"set_rows", "scalar"});
    expect_rejected(TGL_OP_SET_ROWS, &a0, {empty_input(F32, {0, 3}), idx({1}, {0}), input_values(F32, {1, 3}, {1, 2, 3})},
                    {output_of(F32, {0, 3})}, TGL_ERROR_INDEX_OUT_OF_RANGE, {"size 0"});
    // y over src is rejected; y over x only as the identical view
    Device& d = dev();
    DeviceTensor buf(d, contiguous({8}), F32);
    buf.set_logical(iota(8));
    DeviceTensor index(d, contiguous({1}), I32);
    index.set_logical({0});
    auto part = [&](int64_t offset, int64_t n) {
        tgl_tensor t = buf.desc();
        t.byte_offset += uint64_t(offset) * 4;
        t.shape[0] = n;
        return t;
    };
    EXPECT_TGL_ERROR(d.run(TGL_OP_SET_ROWS, &a0, {part(0, 4), index.desc(), part(4, 1)}, {part(4, 4)}),
                     TGL_ERROR_INVALID_ARGUMENT, {"overlaps", "src"});
    EXPECT_TGL_ERROR(d.run(TGL_OP_SET_ROWS, &a0, {part(0, 4), index.desc(), part(7, 1)}, {part(1, 4)}),
                     TGL_ERROR_INVALID_ARGUMENT, {"overlaps", "x"});
    EXPECT_TRUE(buf.unchanged());
}

TEST_F(IndexOps, OneHot) {
    EXPECT_TRUE(same(F32, run1(TGL_OP_ONE_HOT, nullptr, {idx({3}, {2, 0, 1})}, output_of(F32, {3, 3})), {0, 0, 1, 1, 0, 0, 0, 1, 0}));
    EXPECT_TRUE(same(I32, run1(TGL_OP_ONE_HOT, nullptr, {idx({2, 1}, {3, 0})}, output_of(I32, {2, 1, 4})), {0, 0, 0, 1, 1, 0, 0, 0}));
    EXPECT_TRUE(same(BOOL, run1(TGL_OP_ONE_HOT, nullptr, {idx({3}, {1, 1, 0})}, output_of(BOOL, {3, 2})), {0, 1, 0, 1, 1, 0}));
    EXPECT_TRUE(same(F16, run1(TGL_OP_ONE_HOT, nullptr, {idx({}, {4})}, output_of(F16, {5})), {0, 0, 0, 0, 1}));
    EXPECT_TRUE(same(U8, run1(TGL_OP_ONE_HOT, nullptr, {idx({2}, {0, 2})}, output_of(U8, {2, 3})), {1, 0, 0, 0, 0, 1}));
}

// Every dtype through gather, index_select and scatter with views starting inside a 32-bit word.
TEST_F(IndexOps, EveryDtypeOddOffsets) {
    Layout odd;
    odd.name = "odd offset";
    odd.pad_front = 1;
    odd.pad_back = 3;
    tgl_axis_params a0 = axis_p(0);
    for (tgl_dtype dt : word_dtypes()) {
        SCOPED_TRACE(dtype_name(dt));
        std::vector<double> xv = dt == BOOL ? std::vector<double>{1, 0, 0, 1, 1} : std::vector<double>{1, 2, 3, 4, 5};
        if (dt == TGL_DTYPE_I8) xv[1] = -2;
        InputArg x;
        x.dtype = dt;
        x.view = make_view({5}, odd);
        x.storage = scatter(dt, x.view, xv, 0);
        OutputArg y = output_of(dt, {5});
        y.view = make_view({5}, odd);
        const std::vector<double> want = {xv[4], xv[0], xv[1], xv[1], xv[3]};
        EXPECT_TRUE(same(dt, run1(TGL_OP_GATHER, &a0, {x, idx({5}, {4, 0, 1, 1, 3})}, y), want));
        EXPECT_TRUE(same(dt, run1(TGL_OP_INDEX_SELECT, &a0, {x, idx({5}, {4, 0, 1, 1, 3})}, y), want));
        InputArg src = x;
        EXPECT_TRUE(same(dt, run1(TGL_OP_SCATTER, &a0, {x, idx({2}, {3, 0}), src}, y), {xv[1], xv[1], xv[2], xv[0], xv[4]}));
    }
}

// ----- out-of-range indices -----------------------------------------------------------------------

struct BadCase {
    const char* name;
    tgl_op op;
    std::vector<InputArg> in;
    OutputArg out;
    tgl_axis_params params;
    std::string value, position;  // expected in the message
};

std::vector<BadCase> bad_cases(int bad_low, int bad_high) {
    const InputArg x = input_values(F32, {2, 3}, iota(6, 1));
    std::vector<BadCase> c;
    for (double v : {double(bad_low), double(bad_high)}) {
        const std::string vs = std::to_string(int(v));
        c.push_back({"gather", TGL_OP_GATHER, {x, idx({2, 2}, {0, 1, v, 2})}, output_of(F32, {2, 2}), axis_p(1), vs, "position 2"});
        c.push_back({"index_select", TGL_OP_INDEX_SELECT, {x, idx({3}, {1, v, v})}, output_of(F32, {3, 3}), axis_p(0), vs,
                     "position 1"});
        c.push_back({"scatter", TGL_OP_SCATTER, {x, idx({1, 2}, {v, 0}), input_values(F32, {1, 2}, {9, 9})}, output_of(F32, {2, 3}),
                     axis_p(0), vs, "position 0"});
        c.push_back({"scatter_add", TGL_OP_SCATTER_ADD, {x, idx({2, 1}, {0, v}), input_values(F32, {2, 1}, {9, 9})},
                     output_of(F32, {2, 3}), axis_p(1), vs, "position 1"});
        c.push_back({"one_hot", TGL_OP_ONE_HOT, {idx({3}, {0, 1, v})}, output_of(F32, {3, 3}), axis_p(0), vs, "position 2"});
        c.push_back({"set_rows", TGL_OP_SET_ROWS, {x, idx({3}, {0, v, 1}), input_values(F32, {2, 3}, iota(6, 9))},
                     output_of(F32, {2, 3}), axis_p(1), vs, "position 1"});
    }
    return c;
}

// CPU: run_op fails. GLES: run_op succeeds and the next waiting call fails. The status of whichever
// call failed, its message, and then: outputs untouched, the error reported once, device usable.
TEST_F(IndexOps, OutOfRangeNothingWritten) {
    for (int high : {3, 2}) {
        // -1 and == size; for index_select (axis 0 of size 2) and scatter (axis 0 of size 2) the
        // size is 2, elsewhere 3: cases use `high` per op below.
        for (BadCase& c : bad_cases(-1, high)) {
            const bool axis_of_two = c.op == TGL_OP_INDEX_SELECT || c.op == TGL_OP_SCATTER;
            if ((high == 2) != axis_of_two) continue;
            SCOPED_TRACE(std::string(c.name) + " with " + c.value);
            expect_index_out_of_range({c.name, c.op, c.op == TGL_OP_ONE_HOT ? nullptr : &c.params, c.in, c.out,
                                       {c.name, "holds " + c.value, c.position, "index"}});
            // Reported once (above); the device works.
            tgl_axis_params a1 = axis_p(1);
            EXPECT_TRUE(same(F32, run1(TGL_OP_GATHER, &a1, {input_values(F32, {1, 3}, {7, 8, 9}), idx({1, 2}, {2, 0})}, output_of(F32, {1, 2})),
                             {9, 7}));
        }
    }
}

// A failing op followed by a correct one before the wait: the correct one is written, the error is
// still reported (by buffer_download on GLES).
TEST_F(IndexOps, OutOfRangeThenCorrectOpThenDownload) {
    Device& d = dev();
    tgl_axis_params a0 = axis_p(0);
    tgl_test::OpCall bad(d, {input_values(F32, {3}, {1, 2, 3}), idx({2}, {0, 3})}, {output_of(F32, {2})});
    tgl_status st = bad.run(TGL_OP_GATHER, &a0);
    std::string msg = plug().last_error();
    tgl_test::OpCall good(d, {input_values(F32, {3}, {1, 2, 3}), idx({2}, {2, 1})}, {output_of(F32, {2})});
    EXPECT_EQ(good.run(TGL_OP_GATHER, &a0), TGL_OK);
    if (st == TGL_OK) {  // deferred: the download of the good result reports the earlier failure
        uint8_t bytes[8];
        st = d.api().buffer_download(d.handle(), good.output(0)->buffer(), good.output(0)->storage_byte_offset(), bytes, 8);
        msg = plug().last_error();
    }
    EXPECT_TRUE(is_error(st, TGL_ERROR_INDEX_OUT_OF_RANGE, msg, {"gather", "holds 3", "position 1", "[0, 3)"}));
    EXPECT_TRUE(bad.all_unchanged());
    EXPECT_TRUE(same(F32, good.read()[0], {3, 2}));
}

// GLES: an error still recorded when the device is closed is returned by device_close.
TEST_F(IndexOps, OutOfRangeReportedByDeviceClose) {
    Device d(plug());
    tgl_axis_params a0 = axis_p(0);
    tgl_test::OpCall bad(d, {input_values(F32, {3}, {1, 2, 3}), idx({2}, {-7, 0})}, {output_of(F32, {2})});
    tgl_status st = bad.run(TGL_OP_GATHER, &a0);
    std::string msg = plug().last_error();
    if (st == TGL_OK) {
        try {
            d.close();
            ADD_FAILURE() << "device_close did not report the deferred error";
            return;
        } catch (const Failure& f) {
            msg = f.what();
        }
        st = TGL_ERROR_INDEX_OUT_OF_RANGE;
        EXPECT_NE(msg.find("TGL_ERROR_INDEX_OUT_OF_RANGE"), std::string::npos) << msg;
    }
    EXPECT_TRUE(is_error(st, TGL_ERROR_INDEX_OUT_OF_RANGE, msg, {"gather", "holds -7", "position 0"}));
}

// ----- deferred errors and threads -----------------------------------------------------------------
// An out-of-range index reaches the host thread whose op failed: from run_op (CPU) or from that
// thread's next wait (GLES), even when another thread's wait found it on the GPU first. That other
// thread, whose own work was fine, is not handed the error (plugin_api.h, Indexing ops).

// A thread's bad gather, then waits: `waits` says which call of the failing thread comes after
// another thread's synchronize.
struct FailingThread {
    FailingThread(Device& d, int64_t bad_index)
        : dev(d), call(d, {input_values(F32, {3}, {1, 2, 3}), idx({2}, {0, double(bad_index)})}, {output_of(F32, {2})}),
          bad_index(bad_index) {}
    // Runs the bad op on its own thread, then waits for `go` and makes its waiting call.
    void start(std::shared_future<void> go, bool by_download) {
        thread = std::thread([this, go, by_download] {
            const tgl_plugin_api& api = dev.api();
            tgl_axis_params a0 = axis_p(0);
            status = call.run(TGL_OP_GATHER, &a0);
            message = plug().last_error();
            queued.set_value();
            go.wait();
            tgl_status w;
            if (by_download) {
                uint8_t bytes[8];
                w = api.buffer_download(dev.handle(), call.output(0)->buffer(), call.output(0)->storage_byte_offset(), bytes, 8);
            } else {
                w = api.synchronize(dev.handle());
            }
            if (status == TGL_OK) {
                status = w;
                message = plug().last_error();
            } else {
                first_wait_after_error = w;  // the CPU plugin reported it from run_op already
            }
            second_wait = api.synchronize(dev.handle());  // reported once to this thread
        });
    }
    Device& dev;
    tgl_test::OpCall call;
    int64_t bad_index;
    std::thread thread;
    std::promise<void> queued;
    tgl_status status = TGL_OK, first_wait_after_error = TGL_OK, second_wait = TGL_ERROR_INTERNAL;
    std::string message;
};

TEST_F(IndexOps, DeferredErrorReachesTheThreadWhoseOpFailed) {
    for (bool by_download : {false, true}) {
        SCOPED_TRACE(by_download ? "failing thread waits by buffer_download" : "failing thread waits by synchronize");
        Device d(plug());
        FailingThread a(d, 3);
        std::promise<void> go;
        a.start(go.get_future().share(), by_download);
        a.queued.get_future().wait();
        // Thread B (this one) waits first; its own work (none) is fine.
        tgl_status b = d.api().synchronize(d.handle());
        std::string b_message = plug().last_error();
        go.set_value();
        a.thread.join();
        EXPECT_EQ(b, TGL_OK) << b_message;
        EXPECT_TRUE(is_error(a.status, TGL_ERROR_INDEX_OUT_OF_RANGE, a.message, {"gather", "holds 3", "position 1", "[0, 3)"}));
        EXPECT_EQ(a.first_wait_after_error, TGL_OK);
        EXPECT_EQ(a.second_wait, TGL_OK) << "a deferred error is reported once to each thread";
        EXPECT_TRUE(a.call.all_unchanged());
    }
}

// Two threads fail before anyone waits (the GPU records only the first failure); a third thread
// waits first. Each failing thread still gets an index error from its own next wait.
TEST_F(IndexOps, DeferredErrorsOfTwoThreadsReachBoth) {
    Device d(plug());
    FailingThread a(d, 3), c(d, -1);
    std::promise<void> go;
    std::shared_future<void> go_f = go.get_future().share();
    a.start(go_f, false);
    a.queued.get_future().wait();
    c.start(go_f, true);
    c.queued.get_future().wait();
    tgl_status b = d.api().synchronize(d.handle());
    std::string b_message = plug().last_error();
    go.set_value();
    a.thread.join();
    c.thread.join();
    EXPECT_EQ(b, TGL_OK) << b_message;
    for (FailingThread* t : {&a, &c}) {
        SCOPED_TRACE("thread with bad index " + std::to_string(t->bad_index));
        EXPECT_TRUE(is_error(t->status, TGL_ERROR_INDEX_OUT_OF_RANGE, t->message, {"gather", "position 1"}));
        EXPECT_EQ(t->second_wait, TGL_OK);
        EXPECT_TRUE(t->call.all_unchanged());
    }
}

// A failing thread that never waits again: the device_close made by another thread returns the
// error after that thread's own synchronize passed over it (it is never dropped unreported).
TEST_F(IndexOps, DeferredErrorOfAnotherThreadReportedByDeviceClose) {
    Device d(plug());
    tgl_status a_status = TGL_OK;
    std::string a_message;
    std::thread a([&] {
        tgl_axis_params a0 = axis_p(0);
        tgl_test::OpCall bad(d, {input_values(F32, {3}, {1, 2, 3}), idx({2}, {5, 0})}, {output_of(F32, {2})});
        a_status = bad.run(TGL_OP_GATHER, &a0);
        a_message = plug().last_error();
    });
    a.join();
    tgl_status b = d.api().synchronize(d.handle());
    EXPECT_EQ(b, TGL_OK) << plug().last_error();
    if (a_status != TGL_OK) {  // reported by run_op (CPU)
        EXPECT_TRUE(is_error(a_status, TGL_ERROR_INDEX_OUT_OF_RANGE, a_message, {"gather", "holds 5", "position 0"}));
        d.close();
        return;
    }
    try {
        d.close();
        ADD_FAILURE() << "device_close did not report the other thread's deferred error";
    } catch (const Failure& f) {
        std::string msg = f.what();
        EXPECT_NE(msg.find("TGL_ERROR_INDEX_OUT_OF_RANGE"), std::string::npos) << msg;
        EXPECT_NE(msg.find("holds 5"), std::string::npos) << msg;
    }
}

// ----- other bad input ----------------------------------------------------------------------------

TEST_F(IndexOps, BadInput) {
    tgl_axis_params a0 = axis_p(0), a5 = axis_p(5);
    const InputArg x = input_values(F32, {2, 3}, iota(6));
    // index not i32
    expect_rejected(TGL_OP_GATHER, &a0, {x, input_values(F32, {2, 3}, iota(6, 0))}, {output_of(F32, {2, 3})}, TGL_ERROR_DTYPE_MISMATCH,
                 {"index", "f32", "i32"});
    expect_rejected(TGL_OP_ONE_HOT, nullptr, {input_values(TGL_DTYPE_I8, {2}, {0, 1})}, {output_of(F32, {2, 2})}, TGL_ERROR_DTYPE_MISMATCH,
                 {"index", "i8"});
    // x and y dtypes differ; scatter_add of u8 is not in its rules
    expect_rejected(TGL_OP_GATHER, &a0, {x, idx({1, 1}, {0})}, {output_of(F16, {1, 1})}, TGL_ERROR_DTYPE_MISMATCH, {"y", "f16"});
    expect_rejected(TGL_OP_SCATTER_ADD, &a0, {input_values(U8, {2}, {1, 2}), idx({1}, {0}), input_values(U8, {1}, {1})}, {output_of(U8, {2})},
                 TGL_ERROR_DTYPE_MISMATCH, {"u8"});
    // scatter's reduction (ABI 1.3): f32, f16, i32 only; a value beyond TGL_SCATTER_AMAX; any other
    // op with a reduction; the 1.0-sized struct (8 bytes) still accepted (no reduction).
    const tgl_axis_params mul{sizeof(tgl_axis_params), 0, TGL_SCATTER_MUL}, bad{sizeof(tgl_axis_params), 0, 4};
    expect_rejected(TGL_OP_SCATTER, &mul, {input_values(U8, {2}, {1, 2}), idx({1}, {0}), input_values(U8, {1}, {1})}, {output_of(U8, {2})},
                 TGL_ERROR_DTYPE_MISMATCH, {"reduction", "u8"});
    expect_rejected(TGL_OP_SCATTER, &bad, {x, idx({1, 1}, {0}), input_values(F32, {1, 1}, {1})}, {output_of(F32, {2, 3})},
                 TGL_ERROR_INVALID_ARGUMENT, {"params->reduction", "4"});
    expect_rejected(TGL_OP_SCATTER_ADD, &mul, {x, idx({1, 1}, {0}), input_values(F32, {1, 1}, {1})}, {output_of(F32, {2, 3})},
                 TGL_ERROR_INVALID_ARGUMENT, {"params->reduction", "scatter_add"});
    expect_rejected(TGL_OP_GATHER, &mul, {x, idx({1, 1}, {0})}, {output_of(F32, {1, 1})}, TGL_ERROR_INVALID_ARGUMENT,
                 {"params->reduction", "gather"});
    {
        tgl_axis_params v10 = a0;
        v10.struct_size = TGL_AXIS_PARAMS_SIZE_V1_0;
        v10.reduction = TGL_SCATTER_MUL;  // beyond the 8 bytes: not read
        EXPECT_TRUE(same(F32, run1(TGL_OP_SCATTER, &v10, {input_values(F32, {2}, {1, 2}), idx({1}, {1}), input_values(F32, {1}, {7})},
                                   output_of(F32, {2})),
                         {1, 7}));
    }
    // rank mismatch, index larger than x, y not index's shape
    expect_rejected(TGL_OP_GATHER, &a0, {x, idx({6}, iota(6))}, {output_of(F32, {6})}, TGL_ERROR_SHAPE_MISMATCH, {"index", "rank"});
    expect_rejected(TGL_OP_GATHER, &a0, {x, idx({1, 4}, {0, 0, 0, 0})}, {output_of(F32, {1, 4})}, TGL_ERROR_SHAPE_MISMATCH,
                 {"index", "(1, 4)", "dim 1"});
    expect_rejected(TGL_OP_GATHER, &a0, {x, idx({1, 2}, {0, 0})}, {output_of(F32, {2, 1})}, TGL_ERROR_SHAPE_MISMATCH, {"y", "(2, 1)"});
    expect_rejected(TGL_OP_INDEX_SELECT, &a0, {x, idx({1, 2}, {0, 0})}, {output_of(F32, {2, 3})}, TGL_ERROR_SHAPE_MISMATCH, {"1-D"});
    expect_rejected(TGL_OP_INDEX_SELECT, &a0, {x, idx({2}, {0, 0})}, {output_of(F32, {2, 2})}, TGL_ERROR_SHAPE_MISMATCH, {"y", "(2, 3)"});
    // scatter: src smaller than index, y not x's shape, src rank
    expect_rejected(TGL_OP_SCATTER, &a0, {x, idx({1, 3}, {0, 0, 0}), input_values(F32, {1, 2}, {1, 2})}, {output_of(F32, {2, 3})},
                 TGL_ERROR_SHAPE_MISMATCH, {"src", "(1, 2)"});
    expect_rejected(TGL_OP_SCATTER, &a0, {x, idx({1, 1}, {0}), input_values(F32, {1, 1}, {1})}, {output_of(F32, {3, 2})},
                 TGL_ERROR_SHAPE_MISMATCH, {"y", "(3, 2)"});
    expect_rejected(TGL_OP_SCATTER, &a0, {x, idx({1, 1}, {0}), input_values(F32, {1}, {1})}, {output_of(F32, {2, 3})},
                 TGL_ERROR_SHAPE_MISMATCH, {"src", "rank"});
    // one_hot: y's shape is not index.shape + (n,)
    expect_rejected(TGL_OP_ONE_HOT, nullptr, {idx({3}, {0, 1, 2})}, {output_of(F32, {3})}, TGL_ERROR_SHAPE_MISMATCH, {"y", "num_classes"});
    expect_rejected(TGL_OP_ONE_HOT, nullptr, {idx({3}, {0, 1, 2})}, {output_of(F32, {2, 3})}, TGL_ERROR_SHAPE_MISMATCH, {"y", "(2, 3)"});
    // axis, params size
    expect_rejected(TGL_OP_GATHER, &a5, {x, idx({1, 1}, {0})}, {output_of(F32, {1, 1})}, TGL_ERROR_AXIS_OUT_OF_RANGE, {"axis", "5"});
    tgl_axis_params wrong = a0;
    wrong.struct_size = 4;
    expect_rejected(TGL_OP_SCATTER_ADD, &wrong, {x, idx({1, 1}, {0}), input_values(F32, {1, 1}, {1})}, {output_of(F32, {2, 3})},
                 TGL_ERROR_PARAMS_SIZE, {"struct_size"});
    // a nonempty index over an empty axis: rejected by run_op on every plugin
    expect_rejected(TGL_OP_ONE_HOT, nullptr, {idx({2}, {0, 0})}, {output_of(F32, {2, 0})}, TGL_ERROR_INDEX_OUT_OF_RANGE, {"size 0"});
    expect_rejected(TGL_OP_INDEX_SELECT, &a0, {empty_input(F32, {0, 3}), idx({1}, {0})}, {output_of(F32, {1, 3})},
                 TGL_ERROR_INDEX_OUT_OF_RANGE, {"size 0"});
}

TEST_F(IndexOps, AliasingOnlyInPlaceScatter) {
    Device& d = dev();
    tgl_axis_params a0 = axis_p(0);
    DeviceTensor x(d, contiguous({4}), F32);
    x.set_logical({1, 2, 3, 4});
    DeviceTensor index(d, contiguous({2}), I32);
    index.set_logical({0, 1});
    // gather into x itself
    tgl_status st = d.run(TGL_OP_GATHER, &a0, {x.desc(), index.desc()}, {[&] {
                              tgl_tensor t = x.desc();
                              t.shape[0] = 2;
                              return t;
                          }()});
    EXPECT_TRUE(is_error(st, TGL_ERROR_INVALID_ARGUMENT, plug().last_error(), {"overlaps"}));
    // scatter whose y overlaps src
    tgl_status st2 = d.run(TGL_OP_SCATTER, &a0, {x.desc(), index.desc(), x.desc()}, {x.desc()});
    EXPECT_TRUE(is_error(st2, TGL_ERROR_INVALID_ARGUMENT, plug().last_error(), {"overlaps", "src"}));
    EXPECT_TRUE(x.unchanged());
}

}  // namespace
}  // namespace conf
