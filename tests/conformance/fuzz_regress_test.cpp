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
    Device& dev;
    Buffer buf;
    std::vector<uint8_t> bytes;
};

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

}  // namespace
}  // namespace conf
