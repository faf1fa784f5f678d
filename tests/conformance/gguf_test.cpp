// GGUF block dtypes (plugin_api.h: q4_0 .. q6_K): known answers of dequantize from hand-built
// blocks, checked bit for bit (every expected value is d * integer or d * sc * q - dmin * m of
// short f16 scales, exact in f32; f16 outputs against the values rounded once), linear / grouped_linear / index_select with block
// operands against the same hand-decoded values, and bad input, on every plugin.
#include "common.h"

#include "tgl_test/gguf_blocks.h"

namespace conf {
namespace {

using Vals = std::vector<double>;
using Bytes = std::vector<uint8_t>;

using GgufBlocks = ConformanceTest;

// dequantize of one row of K from `bytes` into `out` (f32 or f16), values row-major.
Vals dequant(tgl_dtype dt, const Bytes& bytes, int64_t K, tgl_dtype out = F32) {
    RawResult r = run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {raw_blocks(dt, {K}, bytes)}, raw_output(out, {K}));
    EXPECT_EQ(r.status, TGL_OK) << r.message;
    return r.values;
}

// The values rounded once to dt (every known answer is exact in f32; the large q6_K ones are not
// in f16).
Vals rounded(tgl_dtype dt, Vals v) {
    for (double& x : v) x = round_to_dtype(dt, x);
    return v;
}

::testing::AssertionResult same(const Vals& got, const Vals& want) {
    if (got.size() != want.size()) return ::testing::AssertionFailure() << got.size() << " values, expected " << want.size();
    for (size_t i = 0; i < want.size(); ++i)
        if (!(got[i] == want[i]))
            return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", expected " << want[i];
    return ::testing::AssertionSuccess();
}

void f16_at(Bytes& b, size_t at, double v) { put_f16(&b[at], v); }

// q4_0: d = -2; qs[i] = i | (15 - i) << 4, so q = j (j < 16), 15 - (j - 16) (j >= 16); x = -2 (q - 8).
TEST_F(GgufBlocks, Q4_0) {
    Bytes b(18);
    f16_at(b, 0, -2.0);
    for (int i = 0; i < 16; ++i) b[2 + i] = uint8_t(i | (15 - i) << 4);
    Vals want;
    for (int j = 0; j < 32; ++j) want.push_back(-2.0 * ((j < 16 ? j : 31 - j) - 8));
    EXPECT_EQ(want[0], 16.0);   // q 0: -2 * -8
    EXPECT_EQ(want[15], -14.0); // q 15
    EXPECT_EQ(want[16], -14.0); // high nibble of qs[0]: 15
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q4_0, b, 32), want));
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q4_0, b, 32, F16), want));
}

// q4_1: d = 0.5, m = -3; qs[i] = i | i << 4: q = j % 16; x = 0.5 q - 3.
TEST_F(GgufBlocks, Q4_1) {
    Bytes b(20);
    f16_at(b, 0, 0.5);
    f16_at(b, 2, -3.0);
    for (int i = 0; i < 16; ++i) b[4 + i] = uint8_t(i | i << 4);
    Vals want;
    for (int j = 0; j < 32; ++j) want.push_back(0.5 * (j % 16) - 3.0);
    EXPECT_EQ(want[31], 4.5);
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q4_1, b, 32), want));
}

// q5_0: d = 0.25; qh = 0xAAAA5555 (bit j: set for even j < 16 and odd j >= 16); qs as q4_0's:
// q = nibble | bit << 4; x = 0.25 (q - 16).
TEST_F(GgufBlocks, Q5_0HighBits) {
    Bytes b(22);
    f16_at(b, 0, 0.25);
    const uint32_t qh = 0xAAAA5555u;
    for (int i = 0; i < 4; ++i) b[2 + i] = uint8_t(qh >> (8 * i));
    for (int i = 0; i < 16; ++i) b[6 + i] = uint8_t(i | (15 - i) << 4);
    Vals want;
    for (int j = 0; j < 32; ++j) {
        const int nibble = j < 16 ? j : 31 - j;
        const int high = j < 16 ? (j % 2 == 0) : (j % 2 == 1);
        want.push_back(0.25 * ((nibble | high << 4) - 16));
    }
    EXPECT_EQ(want[0], 0.0);    // 0 | 16: 0.25 * 0
    EXPECT_EQ(want[1], -3.75);  // 1: 0.25 * -15
    EXPECT_EQ(want[17], 3.5);   // nibble 14 | 16 = 30: 0.25 * 14
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q5_0, b, 32), want));
}

// q5_1: d = 1, m = 0.5; qh = 0xFFFF0000; qs[i] = i | i << 4: q = j; x = j + 0.5.
TEST_F(GgufBlocks, Q5_1) {
    Bytes b(24);
    f16_at(b, 0, 1.0);
    f16_at(b, 2, 0.5);
    const uint32_t qh = 0xFFFF0000u;
    for (int i = 0; i < 4; ++i) b[4 + i] = uint8_t(qh >> (8 * i));
    for (int i = 0; i < 16; ++i) b[8 + i] = uint8_t(i | i << 4);
    Vals want;
    for (int j = 0; j < 32; ++j) want.push_back(j + 0.5);
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q5_1, b, 32), want));
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q5_1, b, 32, F16), want));
}

// q8_0: d = -0.5; qs[j] = 8 j - 128 (as i8): x = -0.5 (8 j - 128) = 64 - 4 j.
TEST_F(GgufBlocks, Q8_0NegativeScale) {
    Bytes b(34);
    f16_at(b, 0, -0.5);
    for (int j = 0; j < 32; ++j) b[2 + j] = uint8_t(int8_t(8 * j - 128));
    Vals want;
    for (int j = 0; j < 32; ++j) want.push_back(64.0 - 4.0 * j);
    EXPECT_EQ(want[31], -60.0);
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q8_0, b, 32), want));
}

// The K-quants' scales and mins of sub-blocks 0..7 (6 bits each), packed as plugin_api.h says:
// bytes 0..3: sc[s] | (sc[s + 4] >> 4) << 6; bytes 4..7: m[s] | (m[s + 4] >> 4) << 6;
// bytes 8..11: (sc[s + 4] & 15) | (m[s + 4] & 15) << 4.
const int kSc[8] = {1, 2, 3, 4, 33, 47, 60, 63}, kMin[8] = {5, 6, 7, 8, 17, 34, 51, 62};
void pack_k_scales(uint8_t* p) {
    for (int s = 0; s < 4; ++s) {
        p[s] = uint8_t(kSc[s] | (kSc[s + 4] >> 4) << 6);
        p[s + 4] = uint8_t(kMin[s] | (kMin[s + 4] >> 4) << 6);
        p[s + 8] = uint8_t((kSc[s + 4] & 15) | (kMin[s + 4] & 15) << 4);
    }
}

// q4_K: d = 0.5, dmin = 0.25, the scales above; qs[32 c + l] = l % 16 | (15 - l % 16) << 4, so
// element j = 64 c + 32 h + l has q = l % 16 (h = 0) or 15 - l % 16 (h = 1), sub-block 2c + h:
// x = 0.5 sc q - 0.25 m. Sub-blocks 4..7 take their scale's high bits from bytes 0..3.
TEST_F(GgufBlocks, Q4_KSixBitScales) {
    Bytes b(144);
    f16_at(b, 0, 0.5);
    f16_at(b, 2, 0.25);
    pack_k_scales(&b[4]);
    for (int i = 0; i < 128; ++i) b[16 + i] = uint8_t(i % 16 | (15 - i % 16) << 4);
    Vals want;
    for (int j = 0; j < 256; ++j) {
        const int c = j / 64, h = j / 32 % 2, l = j % 32, s = 2 * c + h;
        const int q = h == 0 ? l % 16 : 15 - l % 16;
        want.push_back(0.5 * kSc[s] * q - 0.25 * kMin[s]);
    }
    EXPECT_EQ(want[0], -1.25);                  // sub-block 0: 0 - 0.25 * 5
    EXPECT_EQ(want[255], 0.5 * 63 * 0 - 15.5);  // sub-block 7, q 0: -0.25 * 62
    EXPECT_EQ(want[224], 0.5 * 63 * 15 - 15.5); // sub-block 7, q 15: 472.5 - 15.5 = 457
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q4_K, b, 256), want));
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q4_K, b, 256, F16), rounded(F16, want)));
}

// q5_K: q4_K's block plus qh[l] = 0x55 (l < 16) or 0xAA (l >= 16): bit 2c + h of qh[l] adds 16
// where (l < 16) == (h == 0).
TEST_F(GgufBlocks, Q5_KHighBits) {
    Bytes b(176);
    f16_at(b, 0, 0.5);
    f16_at(b, 2, 0.25);
    pack_k_scales(&b[4]);
    for (int l = 0; l < 32; ++l) b[16 + l] = l < 16 ? 0x55 : 0xAA;
    for (int i = 0; i < 128; ++i) b[48 + i] = uint8_t(i % 16 | (15 - i % 16) << 4);
    Vals want;
    for (int j = 0; j < 256; ++j) {
        const int c = j / 64, h = j / 32 % 2, l = j % 32, s = 2 * c + h;
        const int q = (h == 0 ? l % 16 : 15 - l % 16) + ((l < 16) == (h == 0) ? 16 : 0);
        want.push_back(0.5 * kSc[s] * q - 0.25 * kMin[s]);
    }
    EXPECT_EQ(want[0], 0.5 * 1 * 16 - 1.25);
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q5_K, b, 256), want));
}

// q6_K: d = -0.125; scales[i] = (i odd ? -1 : 1) * 7 (i + 1) (i8, down to -112); ql[i] = i;
// qh[i] = 3 i & 255. Element j = 128 a + 32 r + l: q = (ql[64 a + 32 (r & 1) + l] >> 4 (r >> 1) &
// 15) | (qh[32 a + l] >> 2 r & 3) << 4, x = d * scales[8 a + 2 r + l / 16] * (q - 32).
TEST_F(GgufBlocks, Q6_K) {
    Bytes b(210);
    for (int i = 0; i < 128; ++i) b[i] = uint8_t(i);
    for (int i = 0; i < 64; ++i) b[128 + i] = uint8_t(3 * i & 255);
    int sc[16];
    for (int i = 0; i < 16; ++i) {
        sc[i] = (i % 2 ? -1 : 1) * 7 * (i + 1);
        b[192 + i] = uint8_t(int8_t(sc[i]));
    }
    f16_at(b, 208, -0.125);
    Vals want;
    for (int j = 0; j < 256; ++j) {
        const int a = j / 128, r = j / 32 % 4, l = j % 32;
        const int q = (b[64 * a + 32 * (r & 1) + l] >> (4 * (r >> 1)) & 15) | (b[128 + 32 * a + l] >> (2 * r) & 3) << 4;
        want.push_back(-0.125 * sc[8 * a + 2 * r + l / 16] * (q - 32));
    }
    // j = 0: ql[0] = 0, qh[0] = 0: q = 0, -0.125 * 7 * -32 = 28.
    EXPECT_EQ(want[0], 28.0);
    // j = 255: a 1, r 3, l 31: ql[127] = 127 >> 4 = 7, qh[63] = 189 >> 6 = 2: q = 39; sc[15] = -112:
    // -0.125 * -112 * 7 = 98.
    EXPECT_EQ(want[255], 98.0);
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q6_K, b, 256), want));
    EXPECT_TRUE(same(dequant(TGL_DTYPE_Q6_K, b, 256, F16), rounded(F16, want)));
}

// K not a multiple of the block: a row of 40 q8_0 elements is two blocks, the second's last 24
// elements never read (and never written to y); the next row starts at element 64.
TEST_F(GgufBlocks, RowTailNotRead) {
    Bytes b(4 * 34, 0);
    for (int blk = 0; blk < 4; ++blk) {
        f16_at(b, size_t(blk) * 34, double(blk + 1));
        for (int j = 0; j < 32; ++j) b[size_t(blk) * 34 + 2 + size_t(j)] = uint8_t(j);
    }
    RawResult r = run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {raw_blocks(TGL_DTYPE_Q8_0, {2, 40}, b)}, raw_output(F32, {2, 40}));
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    Vals want;
    for (int row = 0; row < 2; ++row)
        for (int k = 0; k < 40; ++k) want.push_back(double(2 * row + k / 32 + 1) * (k % 32));
    EXPECT_TRUE(same(r.values, want));
}

// linear with each block dtype: x (2, K) of ones and of k-th unit steps against W (3, K) made of
// hand-built values: y = sum of the decoded row (x = 1) and its element 5 (x = e5); bias added.
TEST_F(GgufBlocks, LinearSumsDecodedRows) {
    Rng& r = rng_;
    for (tgl_dtype dt : block_dtypes()) {
        const int64_t K = tgl_dtype_block_size(dt), N = 3;
        const Bytes w = random_blocks(dt, N, r);
        RawResult d = run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {raw_blocks(dt, {N, K}, w)}, raw_output(F32, {N, K}));
        ASSERT_EQ(d.status, TGL_OK) << d.message;
        Vals x(size_t(2 * K), 0.0);
        for (int64_t k = 0; k < K; ++k) x[size_t(k)] = 1.0;
        x[size_t(K + 5)] = 1.0;
        for (tgl_dtype xd : {F32, F16}) {
            RawResult y = run_raw(dev(), TGL_OP_LINEAR, nullptr,
                                  {raw_values(xd, {2, K}, x), raw_blocks(dt, {N, K}, w), raw_values(xd, {N}, {0.5, -1, 2})},
                                  raw_output(xd, {2, N}));
            ASSERT_EQ(y.status, TGL_OK) << y.message;
            for (int64_t n = 0; n < N; ++n) {
                double sum = 0, magnitude = 0;  // the sum and the sum of its terms' magnitudes
                for (int64_t k = 0; k < K; ++k) {
                    sum += d.values[size_t(n * K + k)];
                    magnitude += std::abs(d.values[size_t(n * K + k)]);
                }
                const double bias = n == 0 ? 0.5 : n == 1 ? -1 : 2;
                // An f32 sum of K terms in the kernel's order errs in proportion to the terms'
                // magnitudes, not to the sum (which cancels: 3e-5 off a sum of 0.85 seen on softpipe).
                const double tol = (xd == F16 ? 2e-3 : 1e-5) * (1 + magnitude + std::abs(bias));
                EXPECT_NEAR(y.values[size_t(n)], sum + bias, tol) << dtype_name(dt) << " " << dtype_name(xd) << " row " << n;
                EXPECT_NEAR(y.values[size_t(N + n)], round_to_dtype(xd, d.values[size_t(n * K + 5)] + bias),
                            (xd == F16 ? 2e-3 : 1e-6) * (1 + std::abs(d.values[size_t(n * K + 5)]) + std::abs(bias)))
                    << dtype_name(dt) << " " << dtype_name(xd) << " row " << n;
            }
        }
    }
}

// grouped_linear with q8_0 experts: expert e's weights are all (e + 1) * 0.5 (d = 0.5, q = e + 1),
// so y[t, n] = 0.5 (index[t] + 1) * sum(x[t]).
TEST_F(GgufBlocks, GroupedLinearExperts) {
    const int64_t E = 3, N = 2, K = 40;  // K not a multiple of 32: two blocks a row
    Bytes w(size_t(E * N * 2) * 34);
    for (int64_t e = 0; e < E; ++e)
        for (int64_t blk = 0; blk < N * 2; ++blk) {
            uint8_t* p = &w[size_t(e * N * 2 + blk) * 34];
            put_f16(p, 0.5);
            for (int j = 0; j < 32; ++j) p[2 + j] = uint8_t(e + 1);
        }
    Vals x;
    for (int t = 0; t < 4; ++t)
        for (int k = 0; k < K; ++k) x.push_back(k < 3 ? double(t + 1) : 0.0);  // sum(x[t]) = 3 (t + 1)
    const Vals index = {2, 0, 1, 2};
    RawResult y = run_raw(dev(), TGL_OP_GROUPED_LINEAR, nullptr,
                          {raw_values(F32, {4, K}, x), raw_blocks(TGL_DTYPE_Q8_0, {E, N, K}, w), raw_values(I32, {4}, index),
                           RawOperand{TGL_DTYPE_F32, {}, {}, {}, 0, true}},
                          raw_output(F32, {4, N}));
    ASSERT_EQ(y.status, TGL_OK) << y.message;
    Vals want;
    for (int t = 0; t < 4; ++t)
        for (int n = 0; n < N; ++n) want.push_back(0.5 * (index[size_t(t)] + 1) * 3 * (t + 1));
    EXPECT_TRUE(same(y.values, want));
}

// index_select of a q4_0 table (4 rows of 32): rows 3, 0, 3 decoded; row r has d = r + 1 and
// every q = 9: x = r + 1.
TEST_F(GgufBlocks, IndexSelectRows) {
    Bytes t(4 * 18);
    for (int row = 0; row < 4; ++row) {
        put_f16(&t[size_t(row) * 18], row + 1);
        for (int i = 0; i < 16; ++i) t[size_t(row) * 18 + 2 + size_t(i)] = 0x99;
    }
    for (tgl_dtype yd : {F32, F16}) {
        RawResult y = run_raw(dev(), TGL_OP_INDEX_SELECT, nullptr,
                              {raw_blocks(TGL_DTYPE_Q4_0, {4, 32}, t), raw_values(I32, {3}, {3, 0, 3})}, raw_output(yd, {3, 32}));
        ASSERT_EQ(y.status, TGL_OK) << y.message;
        Vals want;
        for (int row : {3, 0, 3})
            for (int k = 0; k < 32; ++k) want.push_back(row + 1);
        EXPECT_TRUE(same(y.values, want));
    }
    // Index 4 of 4 rows: the CPU fails run_op; GLES checks on the device and fails the download.
    std::string message;
    try {
        RawResult bad = run_raw(dev(), TGL_OP_INDEX_SELECT, nullptr,
                                {raw_blocks(TGL_DTYPE_Q4_0, {4, 32}, t), raw_values(I32, {1}, {4})}, raw_output(F32, {1, 32}));
        EXPECT_EQ(bad.status, TGL_ERROR_INDEX_OUT_OF_RANGE) << bad.message;
        message = bad.message;
    } catch (const Failure& f) {
        message = f.what();
    }
    EXPECT_NE(message.find("outside [0, 4)"), std::string::npos) << message;
}

// Empty tensors: nothing to do.
TEST_F(GgufBlocks, Empty) {
    RawResult r = run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {raw_blocks(TGL_DTYPE_Q4_K, {0, 256}, {})}, raw_output(F32, {0, 256}));
    EXPECT_EQ(r.status, TGL_OK) << r.message;
    RawResult l = run_raw(dev(), TGL_OP_LINEAR, nullptr,
                          {raw_values(F32, {0, 32}, {}), raw_blocks(TGL_DTYPE_Q8_0, {2, 32}, Bytes(68, 0)), RawOperand{TGL_DTYPE_F32, {}, {}, {}, 0, true}},
                          raw_output(F32, {0, 2}));
    EXPECT_EQ(l.status, TGL_OK) << l.message;
}

// Bad input: a block dtype where the op takes none, a row off a block boundary, a stride not a
// multiple of the block, a misaligned byte offset, a view past its buffer, a wrong output dtype.
TEST_F(GgufBlocks, BadInput) {
    const Bytes blocks(4 * 18, 0);
    auto expect = [](const RawResult& r, tgl_status s, const std::string& needle) {
        EXPECT_EQ(r.status, s) << r.message;
        EXPECT_NE(r.message.find(needle), std::string::npos) << "message: " << r.message;
    };
    RawOperand q = raw_blocks(TGL_DTYPE_Q4_0, {2, 64}, blocks);
    expect(run_raw(dev(), TGL_OP_RELU, nullptr, {q}, raw_output(F32, {2, 64})), TGL_ERROR_DTYPE_MISMATCH, "block dtype");
    expect(run_raw(dev(), TGL_OP_MATMUL, nullptr, {raw_values(F32, {1, 2}, {1, 2}), q}, raw_output(F32, {1, 64})),
           TGL_ERROR_DTYPE_MISMATCH, "block dtype");
    RawOperand misstride = q;
    misstride.strides = {48, 1};  // 48 is not a multiple of 32
    expect(run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {misstride}, raw_output(F32, {2, 64})), TGL_ERROR_INVALID_ARGUMENT,
           "not a multiple of the q4_0 block size 32");
    RawOperand inner = q;
    inner.strides = {64, 2};
    expect(run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {inner}, raw_output(F32, {2, 64})), TGL_ERROR_INVALID_ARGUMENT,
           "innermost dim must have stride 1");
    RawOperand off = q;
    off.byte_offset = 16;
    expect(run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {off}, raw_output(F32, {2, 64})), TGL_ERROR_INVALID_ARGUMENT,
           "not on a block boundary");
    // A row of INT64_MAX elements (fuzz_run_op under UBSan: ceil(K / B) was K + B - 1 over B, a
    // signed overflow): q8_0's 2^58 blocks of 34 bytes need more than 2^63 bytes; q4_K's 2^55 of
    // 144 do not, and reach past the buffer.
    for (auto [dt, status, needle] : {std::tuple{TGL_DTYPE_Q8_0, TGL_ERROR_SIZE_OVERFLOW, "more than 2^63 bytes"},
                                      std::tuple{TGL_DTYPE_Q4_K, TGL_ERROR_OUT_OF_BOUNDS, "reaches bytes"}}) {
        RawOperand huge = raw_blocks(dt, {1}, Bytes(size_t(tgl_dtype_block_bytes(dt)), 0));
        huge.shape = {INT64_MAX};
        expect(run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {huge}, raw_output(F32, {1})), status, needle);
    }
    RawOperand past = raw_blocks(TGL_DTYPE_Q4_0, {2, 64}, Bytes(3 * 18, 0));  // 2 rows need 4 blocks
    expect(run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {past}, raw_output(F32, {2, 64})), TGL_ERROR_OUT_OF_BOUNDS, "reaches bytes");
    expect(run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {q}, raw_output(I32, {2, 64})), TGL_ERROR_DTYPE_MISMATCH, "outputs[0]");
    expect(run_raw(dev(), TGL_OP_DEQUANTIZE, nullptr, {q}, raw_output(F32, {2, 32})), TGL_ERROR_SHAPE_MISMATCH, "x's shape");
    expect(run_raw(dev(), TGL_OP_INDEX_SELECT, nullptr, {raw_blocks(TGL_DTYPE_Q4_0, {2, 64}, blocks), raw_values(I32, {1}, {0})},
                   raw_output(TGL_DTYPE_U8, {1, 64})),
           TGL_ERROR_DTYPE_MISMATCH, "f32 or f16");
    tgl_axis_params axis1{sizeof(tgl_axis_params), 1, 0};
    expect(run_raw(dev(), TGL_OP_INDEX_SELECT, &axis1, {raw_blocks(TGL_DTYPE_Q4_0, {2, 64}, blocks), raw_values(I32, {1}, {0})},
                   raw_output(F32, {2, 1})),
           TGL_ERROR_INVALID_ARGUMENT, "axis 0");
    // linear: W of a float dtype x's rule does not take (f32 W under f16 x; f16/bf16 W under an
    // f32 x are mixed weights, docs/ops-dtypes.md), and a block W with a bias of another dtype.
    expect(run_raw(dev(), TGL_OP_LINEAR, nullptr,
                   {raw_values(F16, {1, 2}, {1, 2}), raw_values(F32, {1, 2}, {1, 2}), RawOperand{TGL_DTYPE_F16, {}, {}, {}, 0, true}},
                   raw_output(F16, {1, 1})),
           TGL_ERROR_DTYPE_MISMATCH, "block dtype");
    expect(run_raw(dev(), TGL_OP_LINEAR, nullptr,
                   {raw_values(F32, {1, 64}, std::vector<double>(64, 1.0)), raw_blocks(TGL_DTYPE_Q4_0, {1, 64}, Bytes(2 * 18, 0)),
                    raw_values(F16, {1}, {1})},
                   raw_output(F32, {1, 1})),
           TGL_ERROR_DTYPE_MISMATCH, "the bias must have x's dtype");
}

}  // namespace
}  // namespace conf
