// Known-answer and bad-input tests of the Attention family, run on every plugin. Expected values
// are worked out by hand in the comments (uniform scores average v, a log-3 score gap weighs 3:1,
// causal bottom-right alignment (also over longer sequences), -inf masks, fully masked rows, GQA head mapping, lse), and the
// backward is checked against known answers and against central finite differences of the
// plugin's own forward.
#include "common.h"

#include "tgl_test/op_runner.h"

#include <cmath>

namespace conf {
namespace {

using AttentionOps = ConformanceTest;

using Vals = std::vector<double>;

InputArg in(tgl_dtype dt, const Shape& s, const Vals& v) { return input_values(dt, s, v); }

tgl_attention_params ap(bool causal = false, float scale = 0.0f) {
    return tgl_attention_params{sizeof(tgl_attention_params), causal ? 1u : 0u, scale, 0, 0.0f, 0.0f, 0};
}
// The ABI 1.3 options: causal 0, 1 (bottom-right) or 2 (top-left), softcap, ALiBi, window.
tgl_attention_params opts(uint32_t causal, float scale, float softcap, float max_bias, uint32_t window) {
    return tgl_attention_params{sizeof(tgl_attention_params), causal, scale, 0, softcap, max_bias, window};
}

::testing::AssertionResult near(tgl_dtype dt, const Vals& got, const Vals& want, double tol = 1e-6) {
    Vals w = want;
    for (double& v : w) v = round_to_dtype(dt, v);
    return compare(dt, got, w, Shape{int64_t(want.size())}, dt == F16 ? 2e-3 : tol, CompareMode::PerElement);
}

// Forward: returns {o, lse}. sinks: one per q head (empty: none).
std::vector<Vals> fwd(tgl_dtype dt, const tgl_attention_params& p, const Shape& qs, const Vals& q, const Shape& ks,
                      const Vals& k, const Shape& vs, const Vals& v, const Shape& ms = {}, const Vals& m = {},
                      const Vals& sinks = {}) {
    const Shape os = {qs[0], qs[1], qs[2], vs[3]};
    return run_op_values(dev(), TGL_OP_ATTENTION, &p,
                         {in(dt, qs, q), in(dt, ks, k), in(dt, vs, v), m.empty() ? absent_input() : in(dt, ms, m),
                          sinks.empty() ? absent_input() : in(F32, {qs[1]}, sinks)},
                         {output_of(dt, os), output_of(F32, {qs[0], qs[1], qs[2]})});
}

TEST_F(AttentionOps, UniformScoresAverageV) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // q = 0: every score is 0, o = the mean of v's rows, lse = log(3).
        auto r = fwd(dt, ap(), {1, 1, 1, 2}, {0, 0}, {1, 1, 3, 2}, {1, -2, 3, 0.5, -1, 4}, {1, 1, 3, 2}, {1, 2, 3, 4, 5, 9});
        EXPECT_TRUE(near(dt, r[0], {3, 5}));
        EXPECT_TRUE(near(F32, r[1], {std::log(3.0)}));
    }
}

TEST_F(AttentionOps, ScoreGapWeighsValues) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // D = 1, scale 1: scores (log 3) * 1 and 0 -> weights 3/4, 1/4: o = 3/4 * 4 + 1/4 * 8 = 5, lse = log 4.
        auto r = fwd(dt, ap(false, 1.0f), {1, 1, 1, 1}, {1}, {1, 1, 2, 1}, {std::log(3.0), 0}, {1, 1, 2, 1}, {4, 8});
        EXPECT_TRUE(near(F32, r[0], {5}, dt == F16 ? 4e-3 : 1e-6));  // f16 rounds log 3 in k
        if (dt == F32) { EXPECT_TRUE(near(F32, r[1], {std::log(4.0)})); }
        // Nearly one-hot: scores 100 and 0: o = v0 (the other weight e^-100), lse = 100.
        r = fwd(dt, ap(false, 1.0f), {1, 1, 1, 2}, {1, 0}, {1, 1, 2, 2}, {100, 0, 0, 0}, {1, 1, 2, 2}, {1, -2, 7, 7});
        EXPECT_TRUE(near(dt, r[0], {1, -2}));
        EXPECT_TRUE(near(F32, r[1], {100}));
    }
}

TEST_F(AttentionOps, DefaultScaleIsInverseSqrtD) {
    // D = 4: q . k0 = 4, q . k1 = 0; scale 1/2 -> scores 2, 0; o = (e^2 v0 + v1) / (e^2 + 1).
    const double e2 = std::exp(2.0);
    auto r = fwd(F32, ap(), {1, 1, 1, 4}, {1, 1, 1, 1}, {1, 1, 2, 4}, {1, 1, 1, 1, 0, 0, 0, 0}, {1, 1, 2, 1}, {1, -1});
    EXPECT_TRUE(near(F32, r[0], {(e2 - 1) / (e2 + 1)}));
    EXPECT_TRUE(near(F32, r[1], {std::log(e2 + 1)}));
    // NULL params give the same.
    auto n = run_op_values(dev(), TGL_OP_ATTENTION, nullptr,
                           {in(F32, {1, 1, 1, 4}, {1, 1, 1, 1}), in(F32, {1, 1, 2, 4}, {1, 1, 1, 1, 0, 0, 0, 0}),
                            in(F32, {1, 1, 2, 1}, {1, -1}), absent_input()},
                           {output_of(F32, {1, 1, 1, 1}), absent_output()});
    EXPECT_TRUE(near(F32, n[0], {(e2 - 1) / (e2 + 1)}));
}

TEST_F(AttentionOps, CausalBottomRight) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // Sq = 2, Skv = 3, q = 0: row 0 sees keys 0..1 (0 + 3 - 2), row 1 all three.
        // v = 1, 3, 8: o = 2, 4; lse = log 2, log 3.
        auto r = fwd(dt, ap(true), {1, 1, 2, 1}, {0, 0}, {1, 1, 3, 1}, {5, -5, 2}, {1, 1, 3, 1}, {1, 3, 8});
        EXPECT_TRUE(near(dt, r[0], {2, 4}));
        EXPECT_TRUE(near(F32, r[1], {std::log(2.0), std::log(3.0)}));
        // Sq = 3, Skv = 2: row i sees keys j <= i - 1: row 0 none (o = 0, lse = -inf), row 1 key 0,
        // row 2 both.
        r = fwd(dt, ap(true), {1, 1, 3, 1}, {0, 0, 0}, {1, 1, 2, 1}, {1, 2}, {1, 1, 2, 1}, {2, 6});
        EXPECT_TRUE(near(dt, r[0], {0, 2, 4}));
        EXPECT_TRUE(near(F32, r[1], {-dInf, 0, std::log(2.0)}));
    }
}

TEST_F(AttentionOps, CausalPrefixMeans) {
    // Longer sequences (a GPU plugin's tiled prefill path): q = 0, causal, v_j = (j, 2j, -j, 1).
    // Row i sees the n = i + 1 + Skv - Sq keys j < n (none where n <= 0: o = 0, lse = -inf):
    // o = ((n-1)/2, n-1, -(n-1)/2, 1), lse = log n.
    for (tgl_dtype dt : {F32, F16, BF16})
        for (auto sq_skv : {std::make_pair(70, 75), std::make_pair(75, 70)}) {
            const int64_t sq = sq_skv.first, skv = sq_skv.second;
            Vals v, want_o, want_lse;
            for (int64_t j = 0; j < skv; ++j) v.insert(v.end(), {double(j), 2.0 * j, -double(j), 1.0});
            for (int64_t i = 0; i < sq; ++i) {
                const double n = double(i + 1 + skv - sq);
                if (n <= 0) want_o.insert(want_o.end(), {0, 0, 0, 0});
                else want_o.insert(want_o.end(), {(n - 1) / 2, n - 1, -(n - 1) / 2, 1});
                want_lse.push_back(n <= 0 ? -dInf : std::log(n));
            }
            auto r = fwd(dt, ap(true), {1, 1, sq, 4}, Vals(size_t(sq * 4), 0.0), {1, 1, skv, 4}, Vals(size_t(skv * 4), 0.5),
                         {1, 1, skv, 4}, v);
            EXPECT_TRUE(near(dt, r[0], want_o, 1e-5));
            EXPECT_TRUE(near(F32, r[1], want_lse, 1e-5));
        }
}

TEST_F(AttentionOps, MaskAndFullyMaskedRow) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // Two rows, q = 0, mask (2, 3): row 0 hides key 1 -> mean of v0, v2; row 1 hides every key
        // -> o = 0, lse = -inf (not NaN).
        auto r = fwd(dt, ap(), {1, 1, 2, 1}, {0, 0}, {1, 1, 3, 1}, {1, 1, 1}, {1, 1, 3, 2}, {1, 10, 100, 1000, 3, 30},
                     {2, 3}, {0, -dInf, 0, -dInf, -dInf, -dInf});
        EXPECT_TRUE(near(dt, r[0], {2, 20, 0, 0}));
        EXPECT_TRUE(near(F32, r[1], {std::log(2.0), -dInf}));
        // An additive finite mask: scores 0 + log 3 and 0 -> weights 3/4, 1/4 (broadcast over rows).
        r = fwd(F32, ap(), {1, 1, 2, 1}, {0, 0}, {1, 1, 2, 1}, {0, 0}, {1, 1, 2, 1}, {4, 8}, {2}, {std::log(3.0), 0});
        EXPECT_TRUE(near(F32, r[0], {5, 5}));
    }
}

TEST_F(AttentionOps, NanAndInfScoresGiveNanRows) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // Row 0: q = NaN, every score NaN -> o and lse NaN. Row 1: q = 1, k = (+inf, 0): a +inf score
    // gives inf - inf = NaN (as softmax). Row 2: q = 0, scores 0 and NaN (0 * inf): NaN.
    auto r = fwd(F32, ap(false, 1.0f), {1, 1, 3, 1}, {nan, 1, 0}, {1, 1, 2, 1}, {dInf, 0}, {1, 1, 2, 1}, {1, 2});
    EXPECT_TRUE(near(F32, r[0], {nan, nan, nan}));
    EXPECT_TRUE(near(F32, r[1], {nan, nan, nan}));
}

TEST_F(AttentionOps, BoolMask) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // A bool mask (1 attends, 0 hides) = the additive 0 / -inf mask: row 0 sees keys 0 and 2
        // (mean of v0, v2), row 1 none (o = 0, lse = -inf).
        auto r = run_op_values(dev(), TGL_OP_ATTENTION, nullptr,
                               {in(dt, {1, 1, 2, 1}, {0, 0}), in(dt, {1, 1, 3, 1}, {1, 1, 1}), in(dt, {1, 1, 3, 1}, {1, 10, 3}),
                                in(TGL_DTYPE_BOOL, {2, 3}, {1, 0, 1, 0, 0, 0})},
                               {output_of(dt, {1, 1, 2, 1}), output_of(F32, {1, 1, 2})});
        EXPECT_TRUE(near(dt, r[0], {2, 0}));
        EXPECT_TRUE(near(F32, r[1], {std::log(2.0), -dInf}));  // q = 0: both seen scores are 0
    }
}

TEST_F(AttentionOps, GroupedQueryHeads) {
    // Hq = 4, Hkv = 2: q heads 0, 1 read kv head 0, heads 2, 3 kv head 1. One key each: o = v.
    auto r = fwd(F32, ap(), {1, 4, 1, 1}, {1, 2, 3, 4}, {1, 2, 1, 1}, {5, 6}, {1, 2, 1, 1}, {10, 20});
    EXPECT_TRUE(near(F32, r[0], {10, 10, 20, 20}));
    EXPECT_TRUE(near(F32, r[1], {5, 10, 18, 24}));  // lse = the one score q * k (scale 1/sqrt(1))
    // Two keys per kv head, scale 1, D = 1: kv head 0 keys (log 3, 0), kv head 1 keys (0, log 3);
    // q = 1 everywhere: heads 0, 1 weigh v 3:1, heads 2, 3 weigh 1:3.
    r = fwd(F32, ap(false, 1.0f), {1, 4, 1, 1}, {1, 1, 1, 1}, {1, 2, 2, 1}, {std::log(3.0), 0, 0, std::log(3.0)},
            {1, 2, 2, 1}, {4, 8, 4, 8});
    EXPECT_TRUE(near(F32, r[0], {5, 5, 7, 7}));
}

// ----- ABI 1.3 options -------------------------------------------------------------------------------

TEST_F(AttentionOps, SoftcapKnownAnswers) {
    for (tgl_dtype dt : {F32, F16}) {
        // D = 1, scale 1, q = 1, k = (2, 0), softcap 2: scores 2 tanh(1) = 1.5231883 and 0, so
        // o = sigmoid(1.5231883) * 1 + (1 - sigmoid) * 0 = 0.8209807, lse = log(e^1.5231883 + 1).
        const double s0 = 2 * std::tanh(1.0);
        auto r = fwd(dt, opts(0, 1.0f, 2.0f, 0.0f, 0), {1, 1, 1, 1}, {1}, {1, 1, 2, 1}, {2, 0}, {1, 1, 2, 1}, {1, 0});
        EXPECT_NEAR(s0, 1.5231883, 1e-7);
        EXPECT_TRUE(near(dt, r[0], {1 / (1 + std::exp(-s0))}));
        EXPECT_TRUE(near(F32, r[1], {std::log(std::exp(s0) + 1)}, dt == F16 ? 2e-3 : 1e-6));
        // A score far past the cap: 100 with softcap 5 is 5 tanh(20) = 5 (to f32): lse 5, o = v.
        r = fwd(dt, opts(0, 1.0f, 5.0f, 0.0f, 0), {1, 1, 1, 1}, {10}, {1, 1, 1, 1}, {10}, {1, 1, 1, 2}, {3, -1});
        EXPECT_TRUE(near(dt, r[0], {3, -1}));
        EXPECT_TRUE(near(F32, r[1], {5}));
    }
}

TEST_F(AttentionOps, AlibiKnownAnswers) {
    for (tgl_dtype dt : {F32, F16}) {
        // Hq = 3 (n = 2), max_bias 8: m0 = 2^(-8/2) = 1/16, m1 = 2^(-8/4) = 1/4; slopes h0 1/16,
        // h1 (1/16)^2 = 1/256, h2 m1^1 = 1/4. q = 0 (scores 0 but for the bias), Sq = 1, Skv = 3,
        // not causal: P(0) = 0 + 3 - 1 = 2, bias -slope * (2, 1, 0). v = (1, 2, 4).
        const double slopes[3] = {1.0 / 16, 1.0 / 256, 1.0 / 4};
        Vals want_o, want_l;
        for (double m : slopes) {
            const double w0 = std::exp(-2 * m), w1 = std::exp(-m), w2 = 1, z = w0 + w1 + w2;
            want_o.push_back((w0 * 1 + w1 * 2 + w2 * 4) / z);
            want_l.push_back(std::log(z));
        }
        auto r = fwd(dt, opts(0, 1.0f, 0.0f, 8.0f, 0), {1, 3, 1, 1}, {0, 0, 0}, {1, 1, 3, 1}, {1, 1, 1}, {1, 1, 3, 1},
                     {1, 2, 4});
        EXPECT_TRUE(near(dt, r[0], want_o));
        EXPECT_TRUE(near(F32, r[1], want_l, dt == F16 ? 2e-3 : 1e-6));
        // Causal, Sq = Skv = 2, Hq = 2 (slopes 1/16, 1/256): row 1 sees keys 0 (bias -slope) and 1.
        r = fwd(dt, opts(1, 1.0f, 0.0f, 8.0f, 0), {1, 2, 2, 1}, {0, 0, 0, 0}, {1, 1, 2, 1}, {1, 1}, {1, 1, 2, 1}, {2, 6});
        want_o.clear();
        for (double m : {slopes[0], slopes[1]}) {
            const double w0 = std::exp(-m);
            want_o.push_back(2);
            want_o.push_back((2 * w0 + 6) / (w0 + 1));
        }
        EXPECT_TRUE(near(dt, r[0], want_o));
    }
}

TEST_F(AttentionOps, WindowKnownAnswers) {
    for (tgl_dtype dt : {F32, F16}) {
        // Window 1 sees the diagonal only (|P(i) - j| < 1, P(i) = i at Sq = Skv): o_i = v_i,
        // lse_i = the diagonal score (scale 1, D = 1: q_i k_i), with and without causal.
        for (uint32_t causal : {0u, 1u, 2u}) {
            auto r = fwd(dt, opts(causal, 1.0f, 0.0f, 0.0f, 1), {1, 1, 3, 1}, {1, 2, -1}, {1, 1, 3, 1}, {0.5, 1, 2},
                         {1, 1, 3, 1}, {7, 8, 9});
            EXPECT_TRUE(near(dt, r[0], {7, 8, 9})) << "causal " << causal;
            EXPECT_TRUE(near(F32, r[1], {0.5, 2, -2})) << "causal " << causal;
        }
        // Causal window 2 (the key itself and the one before), q = 0, v_j = j: row 0 sees key 0,
        // rows 1..3 keys i-1, i: o = 0, 0.5, 1.5, 2.5. Not causal, window 2: keys i-1..i+1: o = 0.5,
        // 1, 2, 2.5.
        const Vals q4(4, 0.0), k4(4, 1.0), v4 = {0, 1, 2, 3};
        auto r = fwd(dt, opts(1, 1.0f, 0.0f, 0.0f, 2), {1, 1, 4, 1}, q4, {1, 1, 4, 1}, k4, {1, 1, 4, 1}, v4);
        EXPECT_TRUE(near(dt, r[0], {0, 0.5, 1.5, 2.5}));
        EXPECT_TRUE(near(F32, r[1], {0, std::log(2.0), std::log(2.0), std::log(2.0)}));
        r = fwd(dt, opts(0, 1.0f, 0.0f, 0.0f, 2), {1, 1, 4, 1}, q4, {1, 1, 4, 1}, k4, {1, 1, 4, 1}, v4);
        EXPECT_TRUE(near(dt, r[0], {0.5, 1, 2, 2.5}));
        // Bottom-right alignment: Sq = 1, Skv = 5, causal window 2: the last two keys.
        r = fwd(dt, opts(1, 1.0f, 0.0f, 0.0f, 2), {1, 1, 1, 1}, {0}, {1, 1, 5, 1}, Vals(5, 1.0), {1, 1, 5, 1},
                {0, 1, 2, 3, 4});
        EXPECT_TRUE(near(dt, r[0], {3.5}));
    }
}

TEST_F(AttentionOps, TopLeftCausal) {
    for (tgl_dtype dt : {F32, F16}) {
        // Sq = 2, Skv = 3, q = 0, top-left: row 0 sees key 0, row 1 keys 0, 1 (PyTorch's is_causal):
        // v = 1, 3, 8: o = 1, 2; lse = 0, log 2. Equals causal 0 with the explicit mask.
        const Vals q = {0, 0}, k = {5, -5, 2}, v = {1, 3, 8};
        auto r = fwd(dt, opts(2, 0.0f, 0.0f, 0.0f, 0), {1, 1, 2, 1}, q, {1, 1, 3, 1}, k, {1, 1, 3, 1}, v);
        EXPECT_TRUE(near(dt, r[0], {1, 2}));
        EXPECT_TRUE(near(F32, r[1], {0, std::log(2.0)}));
        auto m = fwd(dt, ap(), {1, 1, 2, 1}, q, {1, 1, 3, 1}, k, {1, 1, 3, 1}, v, {2, 3}, {0, -dInf, -dInf, 0, 0, -dInf});
        EXPECT_TRUE(near(dt, r[0], m[0], 0));
        EXPECT_TRUE(near(F32, r[1], m[1], 0));
    }
}

TEST_F(AttentionOps, SinksKnownAnswers) {
    for (tgl_dtype dt : {F32, F16}) {
        // One key, q = 0 (score 0), v = 6, sink 0: weights 1/2 (the sink's value row is 0): o = 3,
        // lse = log 2. Sink log 3: o = 6 / 4 = 1.5, lse = log 4. Two heads, one sink each.
        auto r = fwd(dt, ap(), {1, 2, 1, 1}, {0, 0}, {1, 1, 1, 1}, {1}, {1, 1, 1, 1}, {6}, {}, {}, {0, std::log(3.0)});
        EXPECT_TRUE(near(dt, r[0], {3, 1.5}));
        EXPECT_TRUE(near(F32, r[1], {std::log(2.0), std::log(4.0)}));
        // A sink of -inf is no sink.
        const Vals q = {0.3, -0.2}, k = {1, 2, -1, 0.5}, v = {1, 5};
        auto with = fwd(dt, ap(false, 1.0f), {1, 1, 1, 2}, q, {1, 1, 2, 2}, k, {1, 1, 2, 1}, v, {}, {}, {-dInf});
        auto none = fwd(dt, ap(false, 1.0f), {1, 1, 1, 2}, q, {1, 1, 2, 2}, k, {1, 1, 2, 1}, v);
        EXPECT_TRUE(near(dt, with[0], none[0], 0));
        EXPECT_TRUE(near(F32, with[1], none[1], 0));
        // A fully masked row with a sink: o = 0, lse = the sink (causal, Sq 2 > Skv 1: row 0 sees no key).
        r = fwd(dt, ap(true), {1, 1, 2, 1}, {0, 0}, {1, 1, 1, 1}, {1}, {1, 1, 1, 1}, {4}, {}, {}, {0.5});
        const double z = std::exp(0.5) + 1;
        EXPECT_TRUE(near(dt, r[0], {0, 4 / z}));
        EXPECT_TRUE(near(F32, r[1], {0.5, std::log(z)}));
    }
}

TEST_F(AttentionOps, HalfKvUnderF32Queries) {
    // k, v and an additive mask in f16 under an f32 q: o (f32) is the f32 op on the f16 values.
    const Shape qs = {1, 2, 3, 2}, ks = {1, 1, 4, 2}, vs = {1, 1, 4, 3};
    const Vals q = {0.3, -0.7, 1.1, 0.2, -0.4, 0.9, 0.5, 0.5, -1.2, 0.1, 0.8, -0.3};
    Vals k = {0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8}, v = {1, 2, 3, -1, -2, -3, 0.5, 0.25, 0.125, 4, 5, 6};
    Vals m = {0, -0.5, -dInf, 0.25};
    auto mixed = run_op_values(dev(), TGL_OP_ATTENTION, nullptr,
                               {in(F32, qs, q), in(F16, ks, k), in(F16, vs, v), in(F16, {4}, m)},
                               {output_of(F32, {1, 2, 3, 3}), output_of(F32, {1, 2, 3})});
    for (Vals* x : {&k, &v, &m})
        for (double& e : *x) e = round_to_dtype(F16, e);
    auto ref = fwd(F32, ap(), qs, q, ks, k, vs, v, {4}, m);
    EXPECT_TRUE(near(F32, mixed[0], ref[0], 1e-6));
    EXPECT_TRUE(near(F32, mixed[1], ref[1], 1e-6));
}

TEST_F(AttentionOps, OptionEqualities) {
    const Shape qs = {1, 2, 5, 3}, ks = {1, 1, 5, 3}, vs = {1, 1, 5, 2};
    Vals q, k, v;
    for (int i = 0; i < 30; ++i) q.push_back(std::sin(0.7 * i));
    for (int i = 0; i < 15; ++i) k.push_back(std::cos(1.3 * i));
    for (int i = 0; i < 10; ++i) v.push_back(0.5 * i - 2);
    auto same = [&](const tgl_attention_params& a, const tgl_attention_params& b, const char* what) {
        auto ra = fwd(F32, a, qs, q, ks, k, vs, v), rb = fwd(F32, b, qs, q, ks, k, vs, v);
        EXPECT_TRUE(near(F32, ra[0], rb[0], 1e-6)) << what;
        EXPECT_TRUE(near(F32, ra[1], rb[1], 1e-6)) << what;
    };
    // A window at least Skv hides nothing (Sq == Skv), causal or not.
    same(opts(0, 0.0f, 0.0f, 0.0f, 5), ap(), "window 5 == none");
    same(opts(1, 0.0f, 0.0f, 0.0f, 1000000), ap(true), "window 1e6 == none, causal");
    // Top-left and bottom-right agree where Sq == Skv.
    same(opts(2, 0.0f, 0.0f, 0.0f, 0), ap(true), "top-left == bottom-right at Sq == Skv");
    same(opts(2, 0.0f, 0.0f, 0.0f, 3), opts(1, 0.0f, 0.0f, 0.0f, 3), "top-left == bottom-right, window 3");
    // A 1.1-sized struct leaves the 1.3 fields off, whatever follows it in memory.
    tgl_attention_params old = opts(1, 0.0f, 30.0f, 8.0f, 2);
    old.struct_size = TGL_ATTENTION_PARAMS_SIZE_V1_1;
    same(old, ap(true), "1.1 size");
}

// ----- backward ------------------------------------------------------------------------------------

std::vector<Vals> bwd(tgl_dtype dt, const tgl_attention_params& p, const Shape& qs, const Vals& q, const Shape& ks,
                      const Vals& k, const Shape& vs, const Vals& v, const Vals& o, const Vals& dout, const Vals& lse,
                      const Shape& ms = {}, const Vals& m = {}) {
    const Shape os = {qs[0], qs[1], qs[2], vs[3]};
    return run_op_values(dev(), TGL_OP_ATTENTION_BACKWARD, &p,
                         {in(dt, qs, q), in(dt, ks, k), in(dt, vs, v), in(dt, os, o), in(dt, os, dout),
                          in(F32, {qs[0], qs[1], qs[2]}, lse), m.empty() ? absent_input() : in(dt, ms, m)},
                         {output_of(dt, qs), output_of(dt, ks), output_of(dt, vs)});
}

TEST_F(AttentionOps, BackwardKnownAnswers) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        // One key: s = (1 * 3 + 2 * -1) / sqrt(2) = lse, p = 1, o = v, so dv = do and
        // ds = do . v - do . o = 0: dq = dk = 0.
        auto g = bwd(dt, ap(), {1, 1, 1, 2}, {1, 2}, {1, 1, 1, 2}, {3, -1}, {1, 1, 1, 2}, {5, 6}, {5, 6}, {0.5, -2},
                     {1 / std::sqrt(2.0)});
        EXPECT_TRUE(near(dt, g[0], {0, 0}));
        EXPECT_TRUE(near(dt, g[1], {0, 0}));
        EXPECT_TRUE(near(dt, g[2], {0.5, -2}));
    }
    // Two keys with equal scores (q = 0): p = 1/2 each, o = (v0 + v1) / 2 = 2 for v = 1, 3; lse = log 2.
    // do = 1: dv = (1/2, 1/2); delta = do . o = 2; ds_j = 1/2 (v_j - 2) = -1/2, 1/2.
    // dq = scale sum_j ds_j k_j = 1 * (-1/2 * 4 + 1/2 * 6) = 1 (scale 1); dk_j = ds_j q = 0.
    auto g = bwd(F32, ap(false, 1.0f), {1, 1, 1, 1}, {0}, {1, 1, 2, 1}, {4, 6}, {1, 1, 2, 1}, {1, 3}, {2}, {1},
                 {std::log(2.0)});
    EXPECT_TRUE(near(F32, g[0], {1}));
    EXPECT_TRUE(near(F32, g[1], {0, 0}));
    EXPECT_TRUE(near(F32, g[2], {0.5, 0.5}));
    // A fully masked row (lse = -inf) gets no gradient; GQA: dk, dv sum over the group's heads.
    // Hq = 2, Hkv = 1, one key: head 0 masked out, head 1 sees the key: dv = do of head 1 only.
    g = bwd(F32, ap(), {1, 2, 1, 1}, {1, 1}, {1, 1, 1, 1}, {1}, {1, 1, 1, 1}, {3}, {0, 3}, {7, 2}, {-dInf, 1},
            {1, 2, 1, 1}, {-dInf, 0});
    EXPECT_TRUE(near(F32, g[0], {0, 0}));
    EXPECT_TRUE(near(F32, g[1], {0}));
    EXPECT_TRUE(near(F32, g[2], {2}));
}

// The plugin's backward against central differences of its own forward: L = sum(do * o).
TEST_F(AttentionOps, BackwardMatchesFiniteDifferences) {
    const Shape qs = {1, 2, 2, 2}, ks = {1, 1, 3, 2}, vs = {1, 1, 3, 2}, ms = {2, 3};
    Vals q = {0.3, -0.5, 0.8, 0.1, -0.7, 0.4, 0.2, 0.9};
    Vals k = {0.5, -0.2, -0.4, 0.6, 0.9, 0.3};
    Vals v = {1.0, -0.5, 0.25, 2.0, -1.5, 0.75};
    const Vals mask = {0.0, -0.3, -dInf, 0.2, 0.0, -1.0};
    const Vals dout = {0.6, -1.1, 0.4, 0.9, -0.3, 0.7, 1.2, -0.8};
    const tgl_attention_params cases[] = {ap(false, 0.9f), ap(true, 0.9f), opts(2, 0.9f, 0.0f, 0.0f, 0),
                                          opts(0, 0.9f, 0.7f, 0.0f, 0), opts(1, 0.9f, 0.0f, 4.0f, 0),
                                          opts(0, 0.9f, 0.0f, 0.0f, 2), opts(2, 0.9f, 1.5f, 2.0f, 2)};
    for (const tgl_attention_params& p : cases) {
        const bool causal = p.causal != 0;
        auto loss = [&](const Vals& qq, const Vals& kk, const Vals& vv) {
            Vals o = fwd(F32, p, qs, qq, ks, kk, vs, vv, ms, mask)[0];
            double l = 0;
            for (size_t i = 0; i < o.size(); ++i) l += o[i] * dout[i];
            return l;
        };
        auto f = fwd(F32, p, qs, q, ks, k, vs, v, ms, mask);
        auto g = bwd(F32, p, qs, q, ks, k, vs, v, f[0], dout, f[1], ms, mask);
        const double h = 1e-3;
        Vals* params[3] = {&q, &k, &v};
        for (int which = 0; which < 3; ++which) {
            Vals& x = *params[which];
            for (size_t i = 0; i < x.size(); ++i) {
                const double x0 = x[i];
                x[i] = x0 + h;
                const double lp = loss(q, k, v);
                x[i] = x0 - h;
                const double lm = loss(q, k, v);
                x[i] = x0;
                const double num = (lp - lm) / (2 * h);
                EXPECT_NEAR(g[size_t(which)][i], num, 2e-3)
                    << (which == 0 ? "dq" : which == 1 ? "dk" : "dv") << "[" << i << "]" << (causal ? " causal " : " ")
                    << p.causal << " softcap " << p.softcap << " max_bias " << p.max_bias << " window " << p.window;
            }
        }
    }
}

// ----- bad input ------------------------------------------------------------------------------------

InputArg zeros(tgl_dtype dt, const Shape& s) { return in(dt, s, Vals(size_t(numel(s)), 0.0)); }

TEST_F(AttentionOps, BadInput) {
    auto p = ap();
    const Shape q = {1, 2, 3, 4}, kv = {1, 1, 5, 4}, o = {1, 2, 3, 4}, l = {1, 2, 3};
    auto run_fwd = [&](const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs, tgl_status want,
                       const std::vector<std::string>& tokens, const void* prm) {
        expect_rejected(TGL_OP_ATTENTION, prm, ins, outs, want, tokens);
    };
    const std::vector<OutputArg> good_out = {output_of(F32, o), output_of(F32, l)};
    // head_dim mismatch
    run_fwd({zeros(F32, q), zeros(F32, {1, 1, 5, 3}), zeros(F32, kv), absent_input()}, good_out,
            TGL_ERROR_SHAPE_MISMATCH, {"head_dim", "(1, 2, 3, 4)", "(1, 1, 5, 3)"}, &p);
    // Hq not a multiple of Hkv
    run_fwd({zeros(F32, {1, 3, 3, 4}), zeros(F32, {1, 2, 5, 4}), zeros(F32, {1, 2, 5, 4}), absent_input()},
            {output_of(F32, {1, 3, 3, 4}), absent_output()}, TGL_ERROR_SHAPE_MISMATCH, {"multiple", "Hq = 3", "Hkv = 2"}, &p);
    // mask not broadcastable to (B, Hq, Sq, Skv)
    run_fwd({zeros(F32, q), zeros(F32, kv), zeros(F32, kv), zeros(F32, {2, 5})}, good_out, TGL_ERROR_SHAPE_MISMATCH,
            {"inputs[3] (mask)", "(2, 5)", "(1, 2, 3, 5)"}, &p);
    // head dim above 256
    run_fwd({zeros(F32, {1, 1, 1, 257}), zeros(F32, {1, 1, 1, 257}), zeros(F32, {1, 1, 1, 4}), absent_input()},
            {output_of(F32, {1, 1, 1, 4}), absent_output()}, TGL_ERROR_SHAPE_MISMATCH, {"1..256", "D = 257"}, &p);
    // rank, output shapes, dtypes
    run_fwd({zeros(F32, {2, 3, 4}), zeros(F32, kv), zeros(F32, kv), absent_input()}, good_out, TGL_ERROR_SHAPE_MISMATCH,
            {"inputs[0] (q)", "rank 4"}, &p);
    run_fwd({zeros(F32, q), zeros(F32, kv), zeros(F32, {1, 1, 4, 4}), absent_input()}, good_out, TGL_ERROR_SHAPE_MISMATCH,
            {"k (1, 1, 5, 4)", "v (1, 1, 4, 4)"}, &p);
    run_fwd({zeros(F32, q), zeros(F32, kv), zeros(F32, kv), absent_input()}, {output_of(F32, {1, 2, 3, 5}), output_of(F32, l)},
            TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (o)", "(1, 2, 3, 5)"}, &p);
    run_fwd({zeros(F32, q), zeros(F32, kv), zeros(F32, kv), absent_input()}, {output_of(F32, o), output_of(F32, {1, 2, 4})},
            TGL_ERROR_SHAPE_MISMATCH, {"outputs[1] (lse)", "(1, 2, 4)"}, &p);
    run_fwd({zeros(F32, q), zeros(F32, kv), zeros(F32, kv), absent_input()}, {output_of(F32, o), output_of(F16, l)},
            TGL_ERROR_DTYPE_MISMATCH, {"outputs[1] (lse)", "f16"}, &p);
    run_fwd({zeros(F32, q), zeros(F16, kv), zeros(F32, kv), absent_input()}, good_out, TGL_ERROR_DTYPE_MISMATCH,
            {"inputs[2] (v)", "f32"}, &p);  // (v has k's dtype)
    run_fwd({zeros(F16, q), zeros(F32, kv), zeros(F32, kv), absent_input()},
            {output_of(F16, o), output_of(F32, l)}, TGL_ERROR_DTYPE_MISMATCH, {"k and v are f32", "q is f16"}, &p);
    run_fwd({zeros(F16, q), zeros(F16, kv), zeros(F16, kv), zeros(F32, {5})}, {output_of(F16, o), output_of(F32, l)},
            TGL_ERROR_DTYPE_MISMATCH, {"inputs[3] (mask)", "f32"}, &p);
    run_fwd({zeros(F32, q), zeros(F32, kv), zeros(F32, kv), zeros(TGL_DTYPE_I32, {5})}, good_out, TGL_ERROR_DTYPE_MISMATCH,
            {"inputs[3] (mask)"}, &p);
    // sinks: (Hq) f32
    run_fwd({zeros(F32, q), zeros(F32, kv), zeros(F32, kv), absent_input(), zeros(F32, {3})}, good_out,
            TGL_ERROR_SHAPE_MISMATCH, {"inputs[4] (sinks)", "(3)", "(2)"}, &p);
    run_fwd({zeros(F32, q), zeros(F32, kv), zeros(F32, kv), absent_input(), zeros(F16, {2})}, good_out,
            TGL_ERROR_DTYPE_MISMATCH, {"inputs[4] (sinks)", "f16"}, &p);
    run_fwd({zeros(TGL_DTYPE_I32, q), zeros(TGL_DTYPE_I32, kv), zeros(TGL_DTYPE_I32, kv), absent_input()},
            {output_of(TGL_DTYPE_I32, o), absent_output()}, TGL_ERROR_DTYPE_MISMATCH, {"inputs[0] (q)", "i32"}, &p);
    // params
    const std::vector<InputArg> good_in = {zeros(F32, q), zeros(F32, kv), zeros(F32, kv), absent_input()};
    auto bad = ap();
    bad.causal = 3;
    run_fwd(good_in, good_out, TGL_ERROR_INVALID_ARGUMENT, {"params->causal", "3"}, &bad);
    for (float x : {-1.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
        bad = opts(0, 0.0f, x, 0.0f, 0);
        run_fwd(good_in, good_out, TGL_ERROR_INVALID_ARGUMENT, {"params->softcap"}, &bad);
        bad = opts(0, 0.0f, 0.0f, x, 0);
        run_fwd(good_in, good_out, TGL_ERROR_INVALID_ARGUMENT, {"params->max_bias"}, &bad);
        expect_rejected(TGL_OP_ATTENTION_BACKWARD, &bad,
                        {zeros(F32, q), zeros(F32, kv), zeros(F32, kv), zeros(F32, o), zeros(F32, o), zeros(F32, l),
                         absent_input()},
                        {output_of(F32, q), output_of(F32, kv), output_of(F32, kv)}, TGL_ERROR_INVALID_ARGUMENT,
                        {"params->max_bias"});
    }
    bad = ap();
    bad.struct_size = 20;  // neither 16 (1.1) nor 28 (1.3)
    run_fwd(good_in, good_out, TGL_ERROR_PARAMS_SIZE, {"struct_size", "20", "16 or 28"}, &bad);
    bad = ap(false, std::numeric_limits<float>::quiet_NaN());
    run_fwd(good_in, good_out, TGL_ERROR_INVALID_ARGUMENT, {"params->scale"}, &bad);
    bad = ap();
    bad.reserved = 1;
    run_fwd(good_in, good_out, TGL_ERROR_INVALID_ARGUMENT, {"params->reserved"}, &bad);
    bad = ap();
    bad.struct_size = 12;
    run_fwd(good_in, good_out, TGL_ERROR_PARAMS_SIZE, {"struct_size", "12"}, &bad);

    // backward
    auto bwd_in = [&](const Shape& lse_shape, const Shape& do_shape) {
        return std::vector<InputArg>{zeros(F32, q), zeros(F32, kv), zeros(F32, kv), zeros(F32, o),
                                     zeros(F32, do_shape), zeros(F32, lse_shape), absent_input()};
    };
    const std::vector<OutputArg> grads = {output_of(F32, q), output_of(F32, kv), output_of(F32, kv)};
    expect_rejected(TGL_OP_ATTENTION_BACKWARD, &p, bwd_in({1, 2, 4}, o), grads, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[5] (lse)", "(1, 2, 4)"});
    expect_rejected(TGL_OP_ATTENTION_BACKWARD, &p, bwd_in(l, {1, 2, 3, 3}), grads, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[4] (do)"});
    expect_rejected(TGL_OP_ATTENTION_BACKWARD, &p, bwd_in(l, o),
                    {output_of(F32, q), output_of(F32, {1, 2, 5, 4}), output_of(F32, kv)}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[1] (dk)", "(1, 2, 5, 4)"});
    std::vector<InputArg> f16_lse = bwd_in(l, o);
    f16_lse[5] = zeros(F16, l);
    expect_rejected(TGL_OP_ATTENTION_BACKWARD, &p, f16_lse, grads, TGL_ERROR_DTYPE_MISMATCH, {"inputs[5] (lse)", "f16"});
    // The backward has every float operand of q's dtype: no f16 k, v or mask under an f32 q.
    std::vector<InputArg> f16_kv = bwd_in(l, o);
    f16_kv[1] = zeros(F16, kv);
    f16_kv[2] = zeros(F16, kv);
    expect_rejected(TGL_OP_ATTENTION_BACKWARD, &p, f16_kv, {output_of(F32, q), output_of(F16, kv), output_of(F16, kv)},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[1] (k)", "f16"});
    std::vector<InputArg> f16_mask = bwd_in(l, o);
    f16_mask[6] = zeros(F16, {5});
    expect_rejected(TGL_OP_ATTENTION_BACKWARD, &p, f16_mask, grads, TGL_ERROR_DTYPE_MISMATCH, {"inputs[6] (mask)", "f16"});
}

}  // namespace
}  // namespace conf
