// Buffers: upload/download round trips with offsets, copies, fills, zero-byte calls, a large
// buffer, and the ordering of buffer calls against queued ops.
#include "common.h"

namespace conf {
namespace {

using BufferTest = ConformanceTest;

std::vector<uint8_t> random_bytes(Rng& rng, size_t n) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = uint8_t(rng.integer(0, 255));
    return v;
}

std::vector<uint8_t> download(Device& d, tgl_buffer b, uint64_t offset, uint64_t n) {
    std::vector<uint8_t> v(static_cast<size_t>(n));
    d.download(b, offset, v.data(), n);
    return v;
}

// Index and values of the first difference, for messages.
std::string first_diff(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
    if (got.size() != want.size()) return "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
    size_t n = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
        if (got[i] != want[i] && n++ == 0) first = i;
    if (!n) return "equal";
    return std::to_string(n) + " byte(s) differ; first at byte " + std::to_string(first) + ": got " +
           std::to_string(got[first]) + ", expected " + std::to_string(want[first]);
}

#define EXPECT_BYTES_EQ(got, want) EXPECT_TRUE((got) == (want)) << first_diff((got), (want))

TEST_F(BufferTest, SizeIsReportedExactly) {
    Device& d = dev();
    for (uint64_t n : {1ull, 3ull, 4ull, 1000ull, 4096ull, 65537ull}) {
        Buffer b(d, n);
        uint64_t size = 0;
        ASSERT_EQ(d.api().buffer_size(d.handle(), b.handle(), &size), TGL_OK) << plug().last_error();
        EXPECT_EQ(size, n);
    }
}

TEST_F(BufferTest, UploadDownloadRoundTripWithOffsets) {
    Device& d = dev();
    const uint64_t n = 1021;  // odd size
    Buffer b(d, n);
    std::vector<uint8_t> want = random_bytes(rng_, n);
    d.upload(b.handle(), 0, want.data(), n);
    EXPECT_BYTES_EQ(download(d, b.handle(), 0, n), want);
    // Partial uploads at odd offsets and lengths overwrite only their range.
    for (int round = 0; round < 20; ++round) {
        uint64_t off = uint64_t(rng_.integer(0, int64_t(n) - 1));
        uint64_t len = uint64_t(rng_.integer(1, int64_t(n - off)));
        std::vector<uint8_t> part = random_bytes(rng_, size_t(len));
        d.upload(b.handle(), off, part.data(), len);
        std::copy(part.begin(), part.end(), want.begin() + ptrdiff_t(off));
        // Partial download of a random range.
        uint64_t doff = uint64_t(rng_.integer(0, int64_t(n) - 1));
        uint64_t dlen = uint64_t(rng_.integer(1, int64_t(n - doff)));
        std::vector<uint8_t> sub(want.begin() + ptrdiff_t(doff), want.begin() + ptrdiff_t(doff + dlen));
        EXPECT_BYTES_EQ(download(d, b.handle(), doff, dlen), sub) << "range [" << doff << ", " << doff + dlen << ")";
    }
    EXPECT_BYTES_EQ(download(d, b.handle(), 0, n), want);
    // The last byte alone.
    EXPECT_BYTES_EQ(download(d, b.handle(), n - 1, 1), std::vector<uint8_t>{want[n - 1]});
}

TEST_F(BufferTest, CopyBetweenBuffersAndWithinOne) {
    Device& d = dev();
    const uint64_t n = 4099;
    Buffer a(d, n), b(d, n);
    std::vector<uint8_t> wa = random_bytes(rng_, n), wb = random_bytes(rng_, n);
    d.upload(a.handle(), 0, wa.data(), n);
    d.upload(b.handle(), 0, wb.data(), n);
    // Between buffers, odd offsets and length.
    ASSERT_EQ(d.api().buffer_copy(d.handle(), a.handle(), 13, b.handle(), 1001, 2001), TGL_OK) << plug().last_error();
    std::copy(wa.begin() + 13, wa.begin() + 13 + 2001, wb.begin() + 1001);
    EXPECT_BYTES_EQ(download(d, b.handle(), 0, n), wb);
    EXPECT_BYTES_EQ(download(d, a.handle(), 0, n), wa);
    // Same buffer, disjoint ranges: adjacent ([0, 1000) -> [1000, 2000)) and far apart, both ways.
    ASSERT_EQ(d.api().buffer_copy(d.handle(), a.handle(), 0, a.handle(), 1000, 1000), TGL_OK) << plug().last_error();
    std::copy(wa.begin(), wa.begin() + 1000, wa.begin() + 1000);
    ASSERT_EQ(d.api().buffer_copy(d.handle(), a.handle(), 3000, a.handle(), 7, 1099), TGL_OK) << plug().last_error();
    std::copy(wa.begin() + 3000, wa.begin() + 3000 + 1099, wa.begin() + 7);
    EXPECT_BYTES_EQ(download(d, a.handle(), 0, n), wa);
    // Whole buffer.
    ASSERT_EQ(d.api().buffer_copy(d.handle(), a.handle(), 0, b.handle(), 0, n), TGL_OK) << plug().last_error();
    EXPECT_BYTES_EQ(download(d, b.handle(), 0, n), wa);
}

// 16-byte aligned ranges go through a shader on the GLES plugin, their tail (under 16 bytes) and
// unaligned ranges through the driver's copy: every tail length, both alignments, and nothing written
// outside the range.
TEST_F(BufferTest, CopyAlignedRangesWithEveryTailLength) {
    Device& d = dev();
    const uint64_t n = 3 * 4096 + 64;
    Buffer a(d, n), b(d, n);
    std::vector<uint8_t> wa = random_bytes(rng_, n), wb = random_bytes(rng_, n);
    d.upload(a.handle(), 0, wa.data(), n);
    d.upload(b.handle(), 0, wb.data(), n);
    for (uint64_t tail = 0; tail < 16; ++tail) {
        const uint64_t len = 16 * uint64_t(rng_.integer(0, 160)) + tail;
        const uint64_t so = 16 * uint64_t(rng_.integer(0, int64_t((n - len) / 16)));
        // Even tails: an aligned destination; odd: a destination 4 or 8 bytes past one (the driver's path).
        const uint64_t doff = 16 * uint64_t(rng_.integer(0, int64_t((n - len) / 16) - 1)) + (tail % 2 ? 4 + 4 * (tail % 4 == 3) : 0);
        SCOPED_TRACE("copy " + std::to_string(len) + " bytes from " + std::to_string(so) + " to " + std::to_string(doff));
        ASSERT_EQ(d.api().buffer_copy(d.handle(), a.handle(), so, b.handle(), doff, len), TGL_OK) << plug().last_error();
        std::copy(wa.begin() + ptrdiff_t(so), wa.begin() + ptrdiff_t(so + len), wb.begin() + ptrdiff_t(doff));
        EXPECT_BYTES_EQ(download(d, b.handle(), 0, n), wb);
    }
    // Same buffer, aligned and adjacent.
    ASSERT_EQ(d.api().buffer_copy(d.handle(), a.handle(), 4096, a.handle(), 0, 4096), TGL_OK) << plug().last_error();
    std::copy(wa.begin() + 4096, wa.begin() + 8192, wa.begin());
    EXPECT_BYTES_EQ(download(d, a.handle(), 0, n), wa);
}

TEST_F(BufferTest, FillRepeatsPatternsOfEverySize) {
    Device& d = dev();
    const uint64_t n = 512;
    Buffer b(d, n);
    std::vector<uint8_t> want = random_bytes(rng_, n);
    d.upload(b.handle(), 0, want.data(), n);
    for (uint32_t size : {1u, 2u, 4u, 8u, 16u}) {
        SCOPED_TRACE("pattern of " + std::to_string(size) + " bytes");
        std::vector<uint8_t> pattern = random_bytes(rng_, size);
        uint64_t off = size * uint64_t(rng_.integer(1, 4));
        uint64_t len = size * uint64_t(rng_.integer(1, int64_t((n - off) / size) - 1));
        d.fill(b.handle(), off, len, pattern.data(), size);
        for (uint64_t i = 0; i < len; ++i) want[size_t(off + i)] = pattern[size_t(i % size)];
        EXPECT_BYTES_EQ(download(d, b.handle(), 0, n), want) << "fill [" << off << ", " << off + len << ")";
    }
    // A float pattern used as a constant tensor.
    float one = 1.0f;
    d.fill(b.handle(), 0, n, &one, 4);
    std::vector<float> f(n / 4);
    d.download(b.handle(), 0, f.data(), n);
    for (float v : f) ASSERT_EQ(v, 1.0f);
}

TEST_F(BufferTest, ZeroByteCallsAreValidNoOps) {
    Device& d = dev();
    const uint64_t n = 64;
    Buffer a(d, n), b(d, n);
    std::vector<uint8_t> wa = random_bytes(rng_, n), wb = random_bytes(rng_, n);
    d.upload(a.handle(), 0, wa.data(), n);
    d.upload(b.handle(), 0, wb.data(), n);
    uint8_t byte = 0x42;
    const tgl_plugin_api& api = d.api();
    for (uint64_t off : {uint64_t(0), uint64_t(17), n}) {  // offset == size is still inside for 0 bytes
        SCOPED_TRACE("offset " + std::to_string(off));
        EXPECT_EQ(api.buffer_upload(d.handle(), a.handle(), off, &byte, 0), TGL_OK) << plug().last_error();
        EXPECT_EQ(api.buffer_upload(d.handle(), a.handle(), off, nullptr, 0), TGL_OK) << plug().last_error();
        EXPECT_EQ(api.buffer_download(d.handle(), a.handle(), off, &byte, 0), TGL_OK) << plug().last_error();
        EXPECT_EQ(api.buffer_download(d.handle(), a.handle(), off, nullptr, 0), TGL_OK) << plug().last_error();
        EXPECT_EQ(api.buffer_copy(d.handle(), a.handle(), off, b.handle(), off, 0), TGL_OK) << plug().last_error();
        EXPECT_EQ(api.buffer_copy(d.handle(), a.handle(), off, a.handle(), off, 0), TGL_OK) << plug().last_error();
        EXPECT_EQ(api.buffer_fill(d.handle(), a.handle(), off & ~uint64_t(3), 0, &byte, 4), TGL_OK) << plug().last_error();
    }
    EXPECT_EQ(byte, 0x42);
    EXPECT_BYTES_EQ(download(d, a.handle(), 0, n), wa);
    EXPECT_BYTES_EQ(download(d, b.handle(), 0, n), wb);
}

TEST_F(BufferTest, LargeBuffer64MiB) {
    Device& d = dev();
    const uint64_t n = 64ull << 20;
    Buffer a(d, n), b(d, n);
    std::vector<uint32_t> words(n / 4);
    uint32_t x = uint32_t(rng_.integer(0, 0xFFFFFFFF)) | 1u;
    for (auto& w : words) {  // xorshift: cheap and nowhere constant
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        w = x;
    }
    d.upload(a.handle(), 0, words.data(), n);
    ASSERT_EQ(d.api().buffer_copy(d.handle(), a.handle(), 0, b.handle(), 0, n), TGL_OK) << plug().last_error();
    std::vector<uint32_t> got(n / 4);
    d.download(b.handle(), 0, got.data(), n);
    size_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) bad += got[i] != words[i];
    EXPECT_EQ(bad, 0u) << "words differing after upload + copy of 64 MiB";
    // The tail, read alone.
    uint32_t last = 0;
    d.download(b.handle(), n - 4, &last, 4);
    EXPECT_EQ(last, words.back());
    // Fill all of it with a 16-byte pattern.
    const uint32_t pattern[4] = {0x01234567u, 0x89ABCDEFu, 0xDEADBEEFu, 0x0BADF00Du};
    d.fill(a.handle(), 0, n, pattern, 16);
    d.download(a.handle(), 0, got.data(), n);
    bad = 0;
    for (size_t i = 0; i < got.size(); ++i) bad += got[i] != pattern[i % 4];
    EXPECT_EQ(bad, 0u) << "words differing after a 64 MiB fill";
}

// Buffer calls and ops on one device happen in call order: an upload after an op is not
// overwritten by it, a copy after an op copies its result.
TEST_F(BufferTest, BufferCallsAreOrderedWithOps) {
    Device& d = dev();
    const int64_t n = 4096;
    DeviceTensor a(d, contiguous({n})), b(d, contiguous({n})), y(d, contiguous({n}));
    std::vector<float> va(static_cast<size_t>(n)), vb(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
        va[size_t(i)] = float(i);
        vb[size_t(i)] = float(2 * i);
    }
    a.set_values(va);
    b.set_values(vb);
    y.poison();
    for (int round = 0; round < 5; ++round) {
        d.run_ok(TGL_OP_ADD, nullptr, {a.desc(), b.desc()}, {y.desc()});
        // Copy the op's result out, then overwrite the output by upload.
        Buffer z(d, uint64_t(n) * 4);
        ASSERT_EQ(d.api().buffer_copy(d.handle(), y.buffer(), kGuardBytes, z.handle(), 0, uint64_t(n) * 4), TGL_OK)
            << plug().last_error();
        std::vector<float> ones(size_t(n), -1.0f);
        d.upload(y.buffer(), kGuardBytes, ones.data(), uint64_t(n) * 4);
        std::vector<float> zc(static_cast<size_t>(n)), yc(static_cast<size_t>(n));
        d.download(z.handle(), 0, zc.data(), uint64_t(n) * 4);
        d.download(y.buffer(), kGuardBytes, yc.data(), uint64_t(n) * 4);
        for (int64_t i = 0; i < n; ++i) {
            ASSERT_EQ(zc[size_t(i)], va[size_t(i)] + vb[size_t(i)]) << "copy after the op saw stale data at " << i;
            ASSERT_EQ(yc[size_t(i)], -1.0f) << "the op overwrote a later upload at " << i;
        }
        // An op reading a buffer right after an upload sees the upload.
        for (auto& v : va) v += 1.0f;
        a.set_values(va);
        d.run_ok(TGL_OP_ADD, nullptr, {a.desc(), b.desc()}, {y.desc()});
        d.download(y.buffer(), kGuardBytes, yc.data(), uint64_t(n) * 4);
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(yc[size_t(i)], va[size_t(i)] + vb[size_t(i)]) << "at " << i;
    }
    d.synchronize();
}

}  // namespace
}  // namespace conf
