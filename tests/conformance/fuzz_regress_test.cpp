// Cases the libFuzzer targets (tests/fuzz, tools/fuzz.sh) found, reduced to a call each: every one
// once crashed a plugin or was undefined behaviour (found under ASan+UBSan); here each must return
// its documented status and write nothing it should not. The crashing inputs themselves are in
// tests/fuzz/corpus/.
#include "common.h"

#include <cstring>

namespace conf {
namespace {

using FuzzRegress = ConformanceTest;

tgl_tensor view(tgl_buffer b, uint64_t offset, tgl_dtype dt, std::vector<int64_t> shape,
                std::vector<int64_t> strides) {
    tgl_tensor t;
    std::memset(&t, 0, sizeof t);
    t.buffer = b;
    t.byte_offset = offset;
    t.dtype = dt;
    t.rank = uint32_t(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) {
        t.shape[d] = shape[d];
        t.strides[d] = strides[d];
    }
    return t;
}

// A 4 KiB buffer of known bytes; unchanged() says whether an op wrote into it.
struct Canary {
    explicit Canary(Device& d) : dev(d), buf(d, 4096), bytes(4096) {
        for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 13 + 5);
        d.upload(buf.handle(), 0, bytes.data(), bytes.size());
    }
    bool unchanged() {
        std::vector<uint8_t> now(bytes.size());
        dev.download(buf.handle(), 0, now.data(), now.size());
        return now == bytes;
    }
    // The first n f32 elements are 0 (an op's result over an empty set) and every later byte is
    // as it was.
    ::testing::AssertionResult zeros_then_unchanged(size_t n) {
        std::vector<uint8_t> now(bytes.size());
        dev.download(buf.handle(), 0, now.data(), now.size());
        for (size_t i = 0; i < n; ++i) {
            float v;
            std::memcpy(&v, &now[i * 4], 4);
            if (v != 0.0f) return ::testing::AssertionFailure() << "element " << i << " is " << v << ", expected 0";
        }
        for (size_t i = n * 4; i < bytes.size(); ++i)
            if (now[i] != bytes[i]) return ::testing::AssertionFailure() << "byte " << i << " past the output changed";
        return ::testing::AssertionSuccess();
    }
    Device& dev;
    Buffer buf;
    std::vector<uint8_t> bytes;
};

tgl_tensor contiguous_view(tgl_buffer b, std::vector<int64_t> shape) {
    std::vector<int64_t> strides(shape.size());
    int64_t s = 1;
    for (size_t d = shape.size(); d-- > 0;) {
        strides[d] = s;
        s *= shape[d];
    }
    return view(b, 0, TGL_DTYPE_F32, shape, strides);
}

// Strides that overflow stride * size for any size >= 2, of both signs.
const int64_t kHugeStrides[] = {INT64_MAX - 1, INT64_MIN + 1};

// tril/triu/eye on an empty y whose strides are huge: a valid no-op (an empty view may have any
// strides). The planner multiplied stride * size before noticing (signed overflow, UBSan).
TEST_F(FuzzRegress, EmptyGenerateOutputWithHugeStrides) {
    Device& d = dev();
    Canary x(d), y(d);
    const int64_t huge = INT64_MAX - 1;
    tgl_tensor xt = view(x.buf.handle(), 0, TGL_DTYPE_F32, {4, 0, 3}, {huge, huge, huge});
    tgl_tensor yt = view(y.buf.handle(), 0, TGL_DTYPE_F32, {4, 0, 3}, {huge, huge, huge});
    for (tgl_op op : {TGL_OP_TRIL, TGL_OP_TRIU}) {
        EXPECT_EQ(d.run(op, nullptr, {xt}, {yt}), TGL_OK) << op << ": " << plug().last_error();
    }
    EXPECT_EQ(d.run(TGL_OP_EYE, nullptr, {}, {yt}), TGL_OK) << plug().last_error();
    d.synchronize();
    EXPECT_TRUE(x.unchanged());
    EXPECT_TRUE(y.unchanged());
}


// Every plan merges neighbouring dims where contiguous (stride of the outer dim == stride of the
// inner dim * its size). An empty view's strides are never checked against its buffer and may be
// anything; each former copy of that merge (elementwise validation, layout rules, GLES dispatch
// planning of the row kernels, GLES matmul batches and the matmul rules' batch-into-M fold) formed
// stride * size with them: signed overflow (UBSan). Here each of those paths meets empty operands
// with huge strides; the ops are valid (no-ops, or results over an empty set).
TEST_F(FuzzRegress, EmptyElementwiseAndLayoutViewsWithHugeStrides) {
    Device& d = dev();
    for (int64_t huge : kHugeStrides) {
        Canary x(d), y(d);
        tgl_tensor xt = view(x.buf.handle(), 0, TGL_DTYPE_F32, {4, 0, 3}, {huge, huge, huge});
        tgl_tensor yt = view(y.buf.handle(), 0, TGL_DTYPE_F32, {4, 0, 3}, {huge, huge, huge});
        EXPECT_EQ(d.run(TGL_OP_NEG, nullptr, {xt}, {yt}), TGL_OK) << plug().last_error();
        EXPECT_EQ(d.run(TGL_OP_ADD, nullptr, {xt, xt}, {yt}), TGL_OK) << plug().last_error();
        EXPECT_EQ(d.run(TGL_OP_CONTIGUOUS, nullptr, {xt}, {yt}), TGL_OK) << plug().last_error();
        tgl_tensor rt = view(y.buf.handle(), 0, TGL_DTYPE_F32, {3, 0, 4}, {huge, huge, huge});
        EXPECT_EQ(d.run(TGL_OP_RESHAPE, nullptr, {xt}, {rt}), TGL_OK) << plug().last_error();
        tgl_flip_params flip{};
        flip.struct_size = sizeof flip;
        flip.n_axes = 1;
        flip.axes[0] = 2;
        EXPECT_EQ(d.run(TGL_OP_FLIP, &flip, {xt}, {yt}), TGL_OK) << plug().last_error();
        d.synchronize();
        EXPECT_TRUE(x.unchanged());
        EXPECT_TRUE(y.unchanged());
    }
}

// sum over an axis of size 0: y (4, 3) = 0, read through x's kept dims with huge strides.
TEST_F(FuzzRegress, ReduceOverEmptyAxisWithHugeStrides) {
    Device& d = dev();
    for (int64_t huge : kHugeStrides) {
        Canary x(d), y(d);
        tgl_tensor xt = view(x.buf.handle(), 0, TGL_DTYPE_F32, {4, 0, 3}, {huge, huge, huge});
        tgl_reduce_params p = reduce_params({1}, false);
        EXPECT_EQ(d.run(TGL_OP_SUM, &p, {xt}, {contiguous_view(y.buf.handle(), {4, 3})}), TGL_OK) << plug().last_error();
        EXPECT_TRUE(y.zeros_then_unchanged(12));
        EXPECT_TRUE(x.unchanged());
    }
}

// matmul with K = 0: C = 0 (beta 0); A and B are empty with huge strides, in their batch dims
// (two of them, so that the batch merge meets them) and in A's rows (the fold of the batch into M,
// which B's batch stride 0 allows).
TEST_F(FuzzRegress, MatmulOverEmptyKWithHugeStrides) {
    Device& d = dev();
    const tgl_matmul_params mp = matmul_params(false, false, 1.0f, 0.0f);
    for (int64_t huge : kHugeStrides) {
        for (int64_t b_batch : {huge, int64_t(0)}) {
            Canary a(d), b(d), c(d);
            tgl_tensor at = view(a.buf.handle(), 0, TGL_DTYPE_F32, {2, 2, 3, 0}, {huge, huge, huge, huge});
            tgl_tensor bt = view(b.buf.handle(), 0, TGL_DTYPE_F32, {2, 2, 0, 4}, {b_batch, b_batch, huge, huge});
            EXPECT_EQ(d.run(TGL_OP_MATMUL, &mp, {at, bt}, {contiguous_view(c.buf.handle(), {2, 2, 3, 4})}), TGL_OK)
                << plug().last_error();
            EXPECT_TRUE(c.zeros_then_unchanged(48));
            EXPECT_TRUE(a.unchanged());
            EXPECT_TRUE(b.unchanged());
        }
    }
}

// layer_norm_backward over no rows: dx is empty, dgamma = dbeta = 0; the rows' dims of x, dy and
// dx (outer dims of the row plan) have huge strides.
TEST_F(FuzzRegress, LayerNormBackwardOverNoRowsWithHugeStrides) {
    Device& d = dev();
    tgl_layer_norm_params lp{};
    lp.struct_size = sizeof lp;
    lp.n_norm_dims = 1;
    lp.eps = 1e-5f;
    for (int64_t huge : kHugeStrides) {
        Canary x(d), dy(d), gamma(d), dx(d), dgamma(d), dbeta(d);
        auto rows = [&](Canary& c) { return view(c.buf.handle(), 0, TGL_DTYPE_F32, {0, 2, 4}, {huge, huge, 1}); };
        EXPECT_EQ(d.run(TGL_OP_LAYER_NORM_BACKWARD, &lp, {rows(x), rows(dy), contiguous_view(gamma.buf.handle(), {4})},
                        {rows(dx), contiguous_view(dgamma.buf.handle(), {4}), contiguous_view(dbeta.buf.handle(), {4})}),
                  TGL_OK)
            << plug().last_error();
        EXPECT_TRUE(dgamma.zeros_then_unchanged(4));
        EXPECT_TRUE(dbeta.zeros_then_unchanged(4));
        EXPECT_TRUE(dx.unchanged());
    }
}

// Non-empty views whose dims of size 1 have huge strides (never stepped, so any value is valid):
// y = -x, read and written through them.
TEST_F(FuzzRegress, SizeOneDimsWithHugeStrides) {
    Device& d = dev();
    for (int64_t huge : kHugeStrides) {
        Canary x(d), y(d);
        const float xv[4] = {1.0f, -2.0f, 3.5f, 8.0f};
        d.upload(x.buf.handle(), 0, xv, sizeof xv);
        tgl_tensor xt = view(x.buf.handle(), 0, TGL_DTYPE_F32, {1, 4, 1}, {huge, 1, huge});
        tgl_tensor yt = view(y.buf.handle(), 0, TGL_DTYPE_F32, {1, 4, 1}, {-huge, 1, huge});
        EXPECT_EQ(d.run(TGL_OP_NEG, nullptr, {xt}, {yt}), TGL_OK) << plug().last_error();
        float yv[4];
        d.download(y.buf.handle(), 0, yv, sizeof yv);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(yv[i], -xv[i]) << "element " << i;
    }
}

}  // namespace
}  // namespace conf
