// Conformance (known-answer, bad-input) tests of the generate ops: arange, full, eye, tril, triu,
// random_uniform, random_normal. Expected values come from hand-checked literals or from the
// obvious formula of plugin_api.h evaluated here; the random ops from this file's own
// Philox4x32-10, itself checked against the published known-answer vectors (Random123 kat_vectors).
#include "common.h"

#include "tgl_test/op_runner.h"

#include <cmath>
#include <cstring>

namespace conf {
namespace {

using GenerateOps = ConformanceTest;

// ---- params ----

tgl_arange_params arange_params(double start, double step) {
    tgl_arange_params p{};
    p.struct_size = sizeof p;
    p.start = start;
    p.step = step;
    return p;
}
tgl_full_params full_params(double value) {
    tgl_full_params p{};
    p.struct_size = sizeof p;
    p.value = value;
    return p;
}
tgl_diagonal_params diag_params(int diagonal) { return tgl_diagonal_params{sizeof(tgl_diagonal_params), diagonal}; }
tgl_random_params random_params(uint64_t seed, uint64_t offset, float a, float b) {
    tgl_random_params p{};
    p.struct_size = sizeof p;
    p.seed = seed;
    p.offset = offset;
    p.a = a;
    p.b = b;
    return p;
}

// ---- running ----

// Runs a generator (no inputs) into a poisoned y of dtype dt laid out as `view`; y's logical values.
std::vector<double> gen(tgl_op op, const void* params, tgl_dtype dt, const View& view) {
    OutputArg y;
    y.dtype = dt;
    y.view = view;
    return run_op_values(dev(), op, params, {}, {y})[0];
}
std::vector<double> gen(tgl_op op, const void* params, tgl_dtype dt, const Shape& shape) {
    return gen(op, params, dt, contiguous(shape));
}
// tril/triu of contiguous x (values) into y laid out as `yview`.
std::vector<double> tri(tgl_op op, int diagonal, tgl_dtype dt, const Shape& shape, const std::vector<double>& x,
                        const View& yview) {
    tgl_diagonal_params p = diag_params(diagonal);
    OutputArg y;
    y.dtype = dt;
    y.view = yview;
    return run_op_values(dev(), op, &p, {input_values(dt, shape, x)}, {y})[0];
}

::testing::AssertionResult bits_equal(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, 0.0, CompareMode::ExactBits);
}

// f32 arithmetic as the ops define it: every product and sum rounded (volatile keeps the compiler
// from fusing them).
float f32_mul_add(float a, float m, float x) {
    volatile float p = m * x;
    volatile float s = a + p;
    return s;
}

// ---- Philox4x32-10, the tests' own ----

struct Words {
    uint32_t w[4];
};

Words philox(Words c, uint32_t k0, uint32_t k1) {
    for (int r = 0; r < 10; ++r) {
        const uint64_t a = uint64_t(0xD2511F53u) * c.w[0];
        const uint64_t b = uint64_t(0xCD9E8D57u) * c.w[2];
        c = Words{{uint32_t(b >> 32) ^ c.w[1] ^ k0, uint32_t(b), uint32_t(a >> 32) ^ c.w[3] ^ k1, uint32_t(a)}};
        k0 += 0x9E3779B9u;  // the key schedule (Weyl sequence); unused after the last round
        k1 += 0xBB67AE85u;
    }
    return c;
}
// The words of the element with index i under (seed, offset), as tgl_random_params defines them.
Words element_words(uint64_t seed, uint64_t offset, uint64_t i) {
    const uint64_t c = offset + i;
    return philox(Words{{uint32_t(c), uint32_t(c >> 32), 0, 0}}, uint32_t(seed), uint32_t(seed >> 32));
}
float uniform_value(uint64_t seed, uint64_t offset, uint64_t i, float a, float b) {
    const float u = float(element_words(seed, offset, i).w[0] >> 8) * 0x1p-24f;
    volatile float span = b - a;
    return f32_mul_add(a, span, u);
}
// The standard normal value z of element i, in double.
double normal_z(uint64_t seed, uint64_t offset, uint64_t i) {
    const Words w = element_words(seed, offset, i);
    const double u1 = double((w.w[0] >> 8) + 1) * 0x1p-24, u2 = double(w.w[1] >> 8) * 0x1p-24;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

TEST_F(GenerateOps, PhiloxKnownAnswers) {
    // Random123 kat_vectors, philox4x32 with 10 rounds: counter, key -> words.
    struct Kat {
        Words ctr;
        uint32_t k0, k1;
        Words want;
    };
    const Kat kats[] = {
        {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}}},
        {{{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}}, 0xffffffffu, 0xffffffffu,
         {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}}},
        {{{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}}, 0xa4093822u, 0x299f31d0u,
         {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}}},
    };
    for (const Kat& k : kats) {
        Words got = philox(k.ctr, k.k0, k.k1);
        for (int j = 0; j < 4; ++j) EXPECT_EQ(got.w[j], k.want.w[j]) << "word " << j;
    }
    // The plugin's w0 >> 8 through the ABI: uniform on [0, 2^24) gives it exactly. Counter 0 and key
    // 0 is the first vector above: 0x6627e8d5 >> 8.
    tgl_random_params p = random_params(0, 0, 0.0f, 16777216.0f);
    std::vector<double> y = gen(TGL_OP_RANDOM_UNIFORM, &p, TGL_DTYPE_F32, Shape{1});
    EXPECT_EQ(y[0], double(0x6627e8d5u >> 8));
    // Keys with both words set, counters whose low word carries into the high one, 2^64 wrap.
    const uint64_t seeds[] = {0xa4093822299f31d0ull, 0xffffffffffffffffull, 12345};
    const uint64_t offsets[] = {0xfffffff0ull, 0xffffffffffffffe0ull, 0x85a308d3243f6a88ull};
    for (uint64_t seed : seeds)
        for (uint64_t off : offsets) {
            p = random_params(seed, off, 0.0f, 16777216.0f);
            y = gen(TGL_OP_RANDOM_UNIFORM, &p, TGL_DTYPE_F32, Shape{5, 7});
            std::vector<double> want;
            for (uint64_t i = 0; i < 35; ++i) want.push_back(double(element_words(seed, off, i).w[0] >> 8));
            EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, y, want)) << "seed " << seed << " offset " << off;
        }
}

// ---- arange ----

TEST_F(GenerateOps, ArangeFloat) {
    tgl_arange_params p = arange_params(0, 1);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_F32, Shape{5}), {0, 1, 2, 3, 4}));
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_ARANGE, nullptr, TGL_DTYPE_F32, Shape{3}), {0, 1, 2}));
    p = arange_params(5, -1.5);  // negative step
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_F32, Shape{5}), {5, 3.5, 2, 0.5, -1}));
    // Fractional steps: f32 arithmetic, product and sum each rounded.
    for (auto [start, step] : {std::pair<double, double>{0.1, 0.1}, {-3.7, 0.3}, {1e6, -0.01}, {16777216.0, 1.0}}) {
        p = arange_params(start, step);
        std::vector<double> want;
        for (int i = 0; i < 37; ++i) want.push_back(f32_mul_add(float(start), float(step), float(i)));
        EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_F32, Shape{37}), want))
            << "start " << start << " step " << step;
    }
    // 2^24 + 1 is not an f32: the sum rounds to even.
    p = arange_params(16777216.0, 1.0);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_F32, Shape{4}),
                           {16777216, 16777216, 16777218, 16777220}));
    // f16 / bf16: the f32 value rounded to nearest even (2049 -> 2048, 2051 -> 2052; 257 -> 256).
    p = arange_params(0.5, 0.25);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F16, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_F16, Shape{5}), {0.5, 0.75, 1, 1.25, 1.5}));
    p = arange_params(2048, 1);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F16, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_F16, Shape{4}), {2048, 2048, 2050, 2052}));
    p = arange_params(65504, 8);  // 65512 rounds down; 65520 (halfway to 2^16) to inf
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F16, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_F16, Shape{3}), {65504, 65504, dInf}));
    p = arange_params(256, 1);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_BF16, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_BF16, Shape{4}), {256, 256, 258, 260}));
    // A negative-stride, stepped y: y[i] is still the i-th logical element.
    p = arange_params(-2, 0.5);
    View v = make_view(Shape{6}, Layout{"neg", {}, {-2}, {}, 1, 2});
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F16, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_F16, v), {-2, -1.5, -1, -0.5, 0, 0.5}));
}

TEST_F(GenerateOps, ArangeInteger) {
    tgl_arange_params p = arange_params(-3, 2);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_I32, Shape{5}), {-3, -1, 1, 3, 5}));
    p = arange_params(10, -4);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_I32, Shape{4}), {10, 6, 2, -2}));
    // Exact where f32 is not: 2^24 + 1.
    p = arange_params(16777215, 1);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_I32, Shape{3}), {16777215, 16777216, 16777217}));
    // Wrap-around as integer casts do: the low bits of the exact value.
    p = arange_params(2147483646, 1);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_I32, Shape{3}), {2147483646, 2147483647, -2147483648.0}));
    p = arange_params(4294967296.0 + 7, -4294967296.0 * 3 + 1);  // only the low 32 bits reach y
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_I32, Shape{3}), {7, 8, 9}));
    p = arange_params(250, 3);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_U8, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_U8, Shape{4}), {250, 253, 0, 3}));
    p = arange_params(2, -1);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_U8, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_U8, Shape{4}), {2, 1, 0, 255}));
    p = arange_params(120, 5);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I8, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_I8, Shape{4}), {120, 125, -126, -121}));
    // Odd element offset of a u8 y (bytes packed in words), stepped.
    p = arange_params(0, 1);
    View v = make_view(Shape{7}, Layout{"odd", {}, {3}, {}, 3, 1});
    EXPECT_TRUE(bits_equal(TGL_DTYPE_U8, gen(TGL_OP_ARANGE, &p, TGL_DTYPE_U8, v), {0, 1, 2, 3, 4, 5, 6}));
    // Empty y: nothing to do.
    EXPECT_TRUE(gen(TGL_OP_ARANGE, &p, TGL_DTYPE_I32, Shape{0}).empty());
}

// ---- full ----

TEST_F(GenerateOps, FullEveryDtype) {
    const double values[] = {2.5, -2.5, 0.7, -0.0, dNaN, dInf, -dInf, 1e10, -1e10, 300, -300, 65520, 1e-8, 0x1.fffffep-1};
    // What each dtype stores, by the cast rules (hand-derived).
    struct Row {
        tgl_dtype dt;
        std::vector<double> want;
    };
    const Row rows[] = {
        {TGL_DTYPE_F32, {2.5, -2.5, double(0.7f), -0.0, dNaN, dInf, -dInf, 1e10, -1e10, 300, -300, 65520, double(1e-8f), 0x1.fffffep-1}},
        {TGL_DTYPE_F16, {2.5, -2.5, 0.7001953125, -0.0, dNaN, dInf, -dInf, dInf, -dInf, 300, -300, dInf, 0x1p-24 * 0, 1.0}},
        {TGL_DTYPE_BF16, {2.5, -2.5, 0.69921875, -0.0, dNaN, dInf, -dInf, 9999220736.0, -9999220736.0, 300, -300, 65536, 0x1.58p-27, 1.0}},
        {TGL_DTYPE_I32, {2, -2, 0, 0, 0, 2147483647, -2147483648.0, 2147483647, -2147483648.0, 300, -300, 65520, 0, 0}},
        {TGL_DTYPE_I8, {2, -2, 0, 0, 0, 127, -128, 127, -128, 127, -128, 127, 0, 0}},
        {TGL_DTYPE_U8, {2, 0, 0, 0, 0, 255, 0, 255, 0, 255, 0, 255, 0, 0}},
        {TGL_DTYPE_BOOL, {1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
    };
    for (const Row& row : rows) {
        std::vector<double> got;
        for (double v : values) {
            tgl_full_params p = full_params(v);
            // A (2, 3) y in a padded, odd-offset layout: every element written, the gaps untouched.
            std::vector<double> y = gen(TGL_OP_FULL, &p, row.dt, make_view(Shape{2, 3}, Layout{"padded", {}, {1, 2}, {}, 3, 2}));
            for (double e : y) EXPECT_TRUE(std::isnan(e) ? std::isnan(y[0]) : e == y[0] && std::signbit(e) == std::signbit(y[0]));
            got.push_back(y[0]);
        }
        // 1e-8 to f16: below half the smallest subnormal (2^-25): +0.
        EXPECT_TRUE(bits_equal(row.dt, got, row.want)) << dtype_name(row.dt);
    }
    tgl_full_params p = full_params(3);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, gen(TGL_OP_FULL, &p, TGL_DTYPE_I32, Shape{}), {3}));  // rank 0
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_FULL, nullptr, TGL_DTYPE_F32, Shape{2}), {0, 0}));  // NULL: 0
    EXPECT_TRUE(gen(TGL_OP_FULL, &p, TGL_DTYPE_F16, Shape{3, 0}).empty());
}

// ---- eye ----

std::vector<double> eye_want(const Shape& s, int diagonal) {
    const int64_t rows = s[s.size() - 2], cols = s.back();
    std::vector<double> w;
    for (int64_t k = 0; k < numel(s); ++k) w.push_back((k % cols) - (k / cols) % rows == diagonal ? 1 : 0);
    return w;
}

TEST_F(GenerateOps, Eye) {
    tgl_diagonal_params p = diag_params(0);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_EYE, &p, TGL_DTYPE_F32, Shape{3, 3}), {1, 0, 0, 0, 1, 0, 0, 0, 1}));
    p = diag_params(1);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, gen(TGL_OP_EYE, &p, TGL_DTYPE_I32, Shape{2, 3}), {0, 1, 0, 0, 0, 1}));
    p = diag_params(-1);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_U8, gen(TGL_OP_EYE, &p, TGL_DTYPE_U8, Shape{3, 2}), {0, 0, 1, 0, 0, 1}));
    EXPECT_TRUE(bits_equal(TGL_DTYPE_BOOL, gen(TGL_OP_EYE, nullptr, TGL_DTYPE_BOOL, Shape{2, 2}), {1, 0, 0, 1}));
    for (tgl_dtype dt : word_dtypes())
        for (int diagonal : {-1, 0, 1, 5}) {
            const Shape s{2, 3, 4};  // batch of 2
            p = diag_params(diagonal);
            EXPECT_TRUE(bits_equal(dt, gen(TGL_OP_EYE, &p, dt, s), eye_want(s, diagonal))) << dtype_name(dt) << " diagonal " << diagonal;
            // Permuted and odd-offset y: the same logical values.
            View v = make_view(Shape{4, 1, 3, 5}, Layout{"perm", {2, 0, 3, 1}, {}, {}, 1, 0});
            EXPECT_TRUE(bits_equal(dt, gen(TGL_OP_EYE, &p, dt, v), eye_want(v.shape, diagonal))) << dtype_name(dt);
        }
}

// ---- tril / triu ----

std::vector<double> tri_want(bool lower, const Shape& s, const std::vector<double>& x, int diagonal) {
    const int64_t rows = s[s.size() - 2], cols = s.back();
    std::vector<double> w;
    for (int64_t k = 0; k < numel(s); ++k) {
        const int64_t d = (k % cols) - (k / cols) % rows;
        w.push_back((lower ? d <= diagonal : d >= diagonal) ? x[size_t(k)] : 0.0);
    }
    return w;
}

TEST_F(GenerateOps, TrilTriuKnownAnswers) {
    const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, tri(TGL_OP_TRIL, 0, TGL_DTYPE_F32, {3, 3}, x, contiguous({3, 3})),
                           {1, 0, 0, 4, 5, 0, 7, 8, 9}));
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, tri(TGL_OP_TRIU, 0, TGL_DTYPE_F32, {3, 3}, x, contiguous({3, 3})),
                           {1, 2, 3, 0, 5, 6, 0, 0, 9}));
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, tri(TGL_OP_TRIL, -1, TGL_DTYPE_I32, {3, 3}, x, contiguous({3, 3})),
                           {0, 0, 0, 4, 0, 0, 7, 8, 0}));
    EXPECT_TRUE(bits_equal(TGL_DTYPE_I32, tri(TGL_OP_TRIU, 2, TGL_DTYPE_I32, {3, 3}, x, contiguous({3, 3})),
                           {0, 0, 3, 0, 0, 0, 0, 0, 0}));
    // Special values are copied bit for bit (-0, NaN, inf).
    const std::vector<double> sp{-0.0, dNaN, dInf, -dInf};
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F16, tri(TGL_OP_TRIL, 1, TGL_DTYPE_F16, {2, 2}, sp, contiguous({2, 2})), sp));
    EXPECT_TRUE(bits_equal(TGL_DTYPE_BF16, tri(TGL_OP_TRIU, 0, TGL_DTYPE_BF16, {2, 2}, sp, contiguous({2, 2})),
                           {-0.0, dNaN, 0, -dInf}));
}

TEST_F(GenerateOps, TrilTriuEveryDtype) {
    const Shape s{2, 3, 5};
    for (tgl_dtype dt : word_dtypes()) {
        std::vector<double> x;
        for (int64_t k = 0; k < numel(s); ++k) x.push_back(dt == TGL_DTYPE_BOOL ? double(k % 3 != 0) : double(k % 50 + 1));
        for (int diagonal : {-1, 0, 2, -7, 9})
            for (bool lower : {true, false}) {
                tgl_op op = lower ? TGL_OP_TRIL : TGL_OP_TRIU;
                const std::vector<double> want = tri_want(lower, s, x, diagonal);
                EXPECT_TRUE(bits_equal(dt, tri(op, diagonal, dt, s, x, contiguous(s)), want))
                    << dtype_name(dt) << (lower ? " tril " : " triu ") << diagonal;
                // y negative-stride with an odd offset.
                View v = make_view(s, Layout{"neg", {}, {1, -1, -2}, {}, 1, 0});
                EXPECT_TRUE(bits_equal(dt, tri(op, diagonal, dt, s, x, v), want)) << dtype_name(dt) << " negstride";
            }
    }
}

TEST_F(GenerateOps, TrilTriuInPlaceAndStridedX) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_U8}) {
        const Shape s{3, 4, 5};
        // x = y, the identical view (permuted, odd offset): in place.
        View v = make_view(s, Layout{"perm", {1, 2, 0}, {}, {}, 3, 1});
        std::vector<double> x;
        for (int64_t k = 0; k < numel(s); ++k) x.push_back(double(k % 100 + 1));
        DeviceTensor t(dev(), v, dt);
        t.set_logical(x);
        tgl_diagonal_params p = diag_params(1);
        dev().run_ok(TGL_OP_TRIU, &p, {t.desc()}, {t.desc()});
        EXPECT_TRUE(bits_equal(dt, t.read_logical(), tri_want(false, s, x, 1))) << dtype_name(dt);
        // x strided/broadcast (stride 0 along the batch dim), y contiguous.
        InputArg xa;
        xa.dtype = dt;
        xa.view = make_view(s, Layout{"bcast", {}, {1, 2, 1}, {true, false, false}, 1, 0});
        // Every batch reads the same (4, 5) matrix 1..20, stepped by 2 along the rows.
        std::vector<double> parent(size_t(xa.view.storage), 0.0), want_all;
        for_each_offset(xa.view, [&](int64_t i, int64_t off) {
            parent[size_t(off)] = double(i % 20 + 1);
            want_all.push_back(double(i % 20 + 1));
        });
        xa.storage = Storage::from_values(dt, parent);
        p = diag_params(0);
        std::vector<double> y = run_op_values(dev(), TGL_OP_TRIL, &p, {xa}, {output_of(dt, s)})[0];
        EXPECT_TRUE(bits_equal(dt, y, tri_want(true, s, want_all, 0))) << dtype_name(dt) << " broadcast x";
    }
}

// ---- random ----

TEST_F(GenerateOps, UniformKnownAnswers) {
    const Shape s{3, 7};
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16})
        for (auto [a, b] : {std::pair<float, float>{0, 1}, {-2, 3}, {1000, 1000.5}, {-1e-3f, 0}, {4, 4}}) {
            tgl_random_params p = random_params(0x123456789abcdefull, 99, a, b);
            std::vector<double> want;
            for (uint64_t i = 0; i < 21; ++i) want.push_back(uniform_value(0x123456789abcdefull, 99, i, a, b));
            // f16/bf16: the f32 value rounded to nearest even (compare's ExactBits rounds `want`).
            EXPECT_TRUE(bits_equal(dt, gen(TGL_OP_RANDOM_UNIFORM, &p, dt, s), want)) << dtype_name(dt) << " [" << a << ", " << b << ")";
        }
    // NULL params: seed 0, offset 0, [0, 1).
    std::vector<double> y = gen(TGL_OP_RANDOM_UNIFORM, nullptr, TGL_DTYPE_F32, Shape{4});
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[size_t(i)], double(uniform_value(0, 0, uint64_t(i), 0, 1)));
}

// |got - want| within a few f32 ulp of |a| + |b z| (plugin_api.h); f16/bf16 also 1 ulp of the
// result's format (a GPU value on the other side of a rounding boundary).
::testing::AssertionResult normal_close(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& want,
                                        float a, float b) {
    const double rel = dt == TGL_DTYPE_F32 ? 0x1p-20 : (dt == TGL_DTYPE_F16 ? 0x1p-10 : 0x1p-7);
    for (size_t i = 0; i < want.size(); ++i) {
        const double scale = std::fabs(a) + std::fabs(want[i] - a);
        if (!(std::fabs(got[i] - want[i]) <= rel * scale + 1e-30))
            return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << want[i]
                                                 << " (a " << a << ", b " << b << ")";
    }
    return ::testing::AssertionSuccess();
}

TEST_F(GenerateOps, NormalKnownAnswers) {
    const Shape s{5, 11};
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16})
        for (auto [a, b] : {std::pair<float, float>{0, 1}, {1.5f, 0.25f}, {-100, 3}, {2, 0}}) {
            const uint64_t seed = 0xfeedfacecafebeefull, offset = 0xfffffffcull;
            tgl_random_params p = random_params(seed, offset, a, b);
            std::vector<double> want;
            for (uint64_t i = 0; i < 55; ++i) want.push_back(round_to_dtype(dt, double(a) + double(b) * normal_z(seed, offset, i)));
            EXPECT_TRUE(normal_close(dt, gen(TGL_OP_RANDOM_NORMAL, &p, dt, s), want, a, b)) << dtype_name(dt);
        }
}

double mean_of(const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
}
double var_of(const std::vector<double>& v) {
    const double m = mean_of(v);
    double s = 0;
    for (double x : v) s += (x - m) * (x - m);
    return s / double(v.size());
}

TEST_F(GenerateOps, RandomStatistics) {
    const int64_t n = 100000;
    tgl_random_params p = random_params(rng_.engine()(), rng_.engine()(), 0, 1);
    std::vector<double> u = gen(TGL_OP_RANDOM_UNIFORM, &p, TGL_DTYPE_F32, Shape{n});
    for (double x : u) ASSERT_TRUE(x >= 0 && x < 1) << x;
    // 5 standard errors: mean 1/2 (sd 0.289 / sqrt(n)), variance 1/12 (sd ~0.0745 / sqrt(n)).
    EXPECT_NEAR(mean_of(u), 0.5, 5 * 0.2887 / std::sqrt(double(n)));
    EXPECT_NEAR(var_of(u), 1.0 / 12, 5 * 0.0745 / std::sqrt(double(n)));
    p.a = 3;
    p.b = 2;
    std::vector<double> z = gen(TGL_OP_RANDOM_NORMAL, &p, TGL_DTYPE_F32, Shape{n});
    // mean 3 (sd 2 / sqrt(n)), variance 4 (sd 4 sqrt(2 / n)).
    EXPECT_NEAR(mean_of(z), 3.0, 5 * 2 / std::sqrt(double(n)));
    EXPECT_NEAR(var_of(z), 4.0, 5 * 4 * std::sqrt(2.0 / double(n)));
    int64_t within1 = 0;
    for (double x : z) within1 += std::fabs(x - 3) < 2;
    EXPECT_NEAR(double(within1) / double(n), 0.6827, 0.01);
}

TEST_F(GenerateOps, RandomSeedsOffsetsAndLayouts) {
    const Shape s{64};
    for (tgl_op op : {TGL_OP_RANDOM_UNIFORM, TGL_OP_RANDOM_NORMAL}) {
        tgl_random_params p = random_params(7, 0, 0, 1);
        std::vector<double> base = gen(op, &p, TGL_DTYPE_F32, s);
        p.seed = 8;
        std::vector<double> other = gen(op, &p, TGL_DTYPE_F32, s);
        int same = 0;
        for (size_t i = 0; i < base.size(); ++i) same += base[i] == other[i];
        EXPECT_LE(same, 2) << "seeds 7 and 8 give the same numbers";
        // offset k continues the stream: y(offset k)[i] == y(offset 0)[i + k], bit for bit.
        p.seed = 7;
        for (uint64_t k : {1u, 13u, 63u}) {
            p.offset = k;
            std::vector<double> shifted = gen(op, &p, TGL_DTYPE_F32, Shape{int64_t(64 - k)});
            EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, shifted, std::vector<double>(base.begin() + int64_t(k), base.end())))
                << "offset " << k;
        }
        // A non-contiguous y gets the values of the row-major logical index.
        p.offset = 0;
        std::vector<double> flat = gen(op, &p, TGL_DTYPE_F32, Shape{4, 3, 5});
        for (const Layout& l : {Layout{"perm", {2, 0, 1}, {}, {}, 1, 0}, Layout{"neg", {}, {-1, 2, -3}, {}, 0, 2}}) {
            View v = make_view(Shape{4, 3, 5}, l);
            EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(op, &p, TGL_DTYPE_F32, v), flat)) << l.name;
        }
        // f16 at an odd element offset: the f16 rounding of the same numbers... for uniform exactly.
        if (op == TGL_OP_RANDOM_UNIFORM) {
            View v = make_view(Shape{4, 3, 5}, Layout{"odd", {}, {}, {}, 1, 1});
            EXPECT_TRUE(bits_equal(TGL_DTYPE_F16, gen(op, &p, TGL_DTYPE_F16, v), flat));
        }
    }
    // a == b (uniform) and b == 0 (normal) give a.
    tgl_random_params p = random_params(1, 2, 0.75f, 0.75f);
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_RANDOM_UNIFORM, &p, TGL_DTYPE_F32, Shape{3}), {0.75, 0.75, 0.75}));
    p.b = 0;
    EXPECT_TRUE(bits_equal(TGL_DTYPE_F32, gen(TGL_OP_RANDOM_NORMAL, &p, TGL_DTYPE_F32, Shape{3}), {0.75, 0.75, 0.75}));
    EXPECT_TRUE(gen(TGL_OP_RANDOM_NORMAL, &p, TGL_DTYPE_BF16, Shape{0, 4}).empty());
}

// ---- bad input ----

TEST_F(GenerateOps, BadInput) {
    const OutputArg y5 = output_of(TGL_DTYPE_F32, {5});
    tgl_arange_params ap = arange_params(0, dNaN);
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"params->step", "finite", "nan"});
    ap = arange_params(0, 0);
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"params->step", "must not be 0"});
    ap = arange_params(0, 1e-50);  // 0 in f32
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"params->step", "0 in f32"});
    ap = arange_params(dInf, 1);
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"params->start", "finite"});
    ap = arange_params(1e39, 1);
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"params->start", "f32 range"});
    ap = arange_params(0.5, 1);
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {output_of(TGL_DTYPE_I32, {5})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->start", "integer", "i32", "0.5"});
    ap = arange_params(0, 1);
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {output_of(TGL_DTYPE_F32, {2, 3})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"arange", "outputs[0] (y)", "1-D", "(2, 3)"});
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {output_of(TGL_DTYPE_BOOL, {5})}, TGL_ERROR_DTYPE_MISMATCH, {"outputs[0] (y)", "bool"});
    ap.struct_size = 16;
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {y5}, TGL_ERROR_PARAMS_SIZE, {"struct_size", "16", "24"});
    ap = arange_params(0, 1);
    ap.reserved = 1;
    expect_rejected(TGL_OP_ARANGE, &ap, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"reserved"});

    tgl_full_params fp = full_params(1);
    fp.reserved = 3;
    expect_rejected(TGL_OP_FULL, &fp, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"reserved", "full"});

    tgl_diagonal_params dp = diag_params(0);
    expect_rejected(TGL_OP_EYE, &dp, {}, {y5}, TGL_ERROR_SHAPE_MISMATCH, {"eye", "outputs[0] (y)", "rank >= 2", "(5)"});
    const InputArg x23 = input_values(TGL_DTYPE_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
    expect_rejected(TGL_OP_TRIL, &dp, {x23}, {output_of(TGL_DTYPE_F32, {3, 2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"tril", "outputs[0] (y)", "(3, 2)", "(2, 3)"});
    expect_rejected(TGL_OP_TRIU, &dp, {input_values(TGL_DTYPE_F32, {3}, {1, 2, 3})}, {output_of(TGL_DTYPE_F32, {3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"triu", "inputs[0] (x)", "rank >= 2"});
    expect_rejected(TGL_OP_TRIL, &dp, {x23}, {output_of(TGL_DTYPE_F16, {2, 3})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"outputs[0] (y)", "f16", "f32"});
    dp.struct_size = 4;
    expect_rejected(TGL_OP_TRIL, &dp, {x23}, {output_of(TGL_DTYPE_F32, {2, 3})}, TGL_ERROR_PARAMS_SIZE, {"struct_size"});

    tgl_random_params rp = random_params(0, 0, 2, 1);
    expect_rejected(TGL_OP_RANDOM_UNIFORM, &rp, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"params->a <= params->b", "2", "1"});
    rp = random_params(0, 0, -3e38f, 3e38f);
    expect_rejected(TGL_OP_RANDOM_UNIFORM, &rp, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"overflows f32"});
    rp = random_params(0, 0, 0, -1);
    expect_rejected(TGL_OP_RANDOM_NORMAL, &rp, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"params->b", "standard deviation", ">= 0"});
    rp = random_params(0, 0, kNaN, 1);
    expect_rejected(TGL_OP_RANDOM_NORMAL, &rp, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"params->a", "finite"});
    rp = random_params(0, 0, 0, 1);
    rp.reserved = 1;
    expect_rejected(TGL_OP_RANDOM_UNIFORM, &rp, {}, {y5}, TGL_ERROR_INVALID_ARGUMENT, {"reserved"});
    rp.reserved = 0;
    expect_rejected(TGL_OP_RANDOM_UNIFORM, &rp, {}, {output_of(TGL_DTYPE_I32, {5})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"outputs[0] (y)", "i32", "f32, f16, bf16"});
}

TEST_F(GenerateOps, TrilOverlapOtherThanInPlaceIsRejected) {
    // y one element further into x's buffer: overlapping but not the identical view.
    DeviceTensor t(dev(), make_view(Shape{3, 3}, Layout{"padded", {}, {}, {}, 0, 1}), TGL_DTYPE_F32);
    t.set_logical({1, 2, 3, 4, 5, 6, 7, 8, 9});
    tgl_tensor y = t.desc();
    y.byte_offset += 4;
    tgl_diagonal_params p = diag_params(0);
    EXPECT_TGL_ERROR(dev().run(TGL_OP_TRIL, &p, {t.desc()}, {y}), TGL_ERROR_INVALID_ARGUMENT,
                     {"outputs[0] (y)", "overlaps", "inputs[0] (x)"});
    EXPECT_TRUE(t.unchanged());
}

}  // namespace
}  // namespace conf
