// Known-answer and bad-input tests of the Sequence family, run on every plugin: rope and
// rope_backward (positions 0 and 1 with theta 10000 in both layouts, partial rotation, linear, NTK
// and YaRN scaling, broadcast positions, the backward undoing the forward; the 1.3 options: frequency
// factors, a cos/sin cache (and a position outside it), multi-section rope by each layout's rule,
// older callers' 2 inputs and 48-byte params), fft/ifft (n = 1, 2, 4,
// 8: impulse, constant, alternating, shifted impulse; ifft(fft(x)) = x on the shared-memory, global
// and direct paths), selective_scan (L = 3, N = 2 worked by hand, with D, z, delta_bias, softplus
// and last_state; L = 0), empty tensors and rejected inputs. Expected values are the defining
// formulas evaluated by hand (double), never another plugin's output.
#include "common.h"

#include "tgl_test/op_runner.h"

#include <array>
#include <cmath>

namespace conf {
namespace {

using SequenceOps = ConformanceTest;

using Vals = std::vector<double>;

InputArg in(tgl_dtype dt, const Shape& s, const Vals& v) { return input_values(dt, s, v); }
// An empty input (its view still spans a storage element or two).
InputArg empty_in(tgl_dtype dt, const Shape& s) {
    InputArg a = input_values(dt, s, {});
    a.storage = Storage::from_values(dt, Vals(size_t(a.view.storage), 0.0));
    return a;
}

std::vector<Vals> run(tgl_op op, const void* params, const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs) {
    return run_op_values(dev(), op, params, ins, outs);
}

// Per-element relative error (absolute near 0); f16 against the rounded exact value.
::testing::AssertionResult near(tgl_dtype dt, const Vals& got, const Vals& want, double tol = 1e-11) {
    Vals w = want;
    for (double& v : w) v = round_to_dtype(dt, v);
    return compare(dt, got, w, Shape{int64_t(want.size())}, dt == F16 ? 1e-6 : tol, CompareMode::PerElement);
}

tgl_rope_params rope_params(uint32_t mode, uint32_t n_rot = 0, uint32_t scaling = TGL_ROPE_SCALING_NONE, float factor = 1.0f) {
    return tgl_rope_params{sizeof(tgl_rope_params), mode, n_rot, scaling, 10000.0f, factor, 0, 32.0f, 1.0f, 1.0f, 1.0f, 0, 0, {}};
}

// (a, b) turned by angle t.
void rot(double a, double b, double t, double& ya, double& yb) {
    ya = a * std::cos(t) - b * std::sin(t);
    yb = a * std::sin(t) + b * std::cos(t);
}

// ----- rope -----------------------------------------------------------------------------------------

TEST_F(SequenceOps, RopeBothLayoutsAtPositionsZeroAndOne) {
    // x (S = 2, D = 4); theta_0 = 1, theta_1 = 10000^(-2/4) = 0.01. Position 0: unchanged.
    const Vals x = {1, 2, 3, 4, 1, 2, 3, 4};
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        Vals want(8);
        auto p = rope_params(TGL_ROPE_NORMAL);
        // NORMAL: pairs (x0, x1) by 1 rad, (x2, x3) by 0.01.
        want = {1, 2, 3, 4, 0, 0, 0, 0};
        rot(1, 2, 1.0, want[4], want[5]);
        rot(3, 4, 0.01, want[6], want[7]);
        EXPECT_TRUE(near(dt, run(TGL_OP_ROPE, &p, {in(dt, {2, 4}, x), in(I32, {2}, {0, 1})}, {output_of(dt, {2, 4})})[0], want, 1e-10));
        // NULL params are NORMAL, theta 10000, all of D.
        EXPECT_TRUE(near(dt, run(TGL_OP_ROPE, nullptr, {in(dt, {2, 4}, x), in(I32, {2}, {0, 1})}, {output_of(dt, {2, 4})})[0], want, 1e-10));
        // NEOX: pairs (x0, x2) by 1 rad, (x1, x3) by 0.01.
        p = rope_params(TGL_ROPE_NEOX);
        want = {1, 2, 3, 4, 0, 0, 0, 0};
        rot(1, 3, 1.0, want[4], want[6]);
        rot(2, 4, 0.01, want[5], want[7]);
        EXPECT_TRUE(near(dt, run(TGL_OP_ROPE, &p, {in(dt, {2, 4}, x), in(I32, {2}, {0, 1})}, {output_of(dt, {2, 4})})[0], want, 1e-10));
    }
}

TEST_F(SequenceOps, RopePartialRotationAndScaling) {
    // D = 6, n_rot = 4: the last two elements are copied; theta_1 = 10000^(-2/4) = 0.01.
    const Vals x = {1, 2, 3, 4, 5, 6};
    auto p = rope_params(TGL_ROPE_NORMAL, 4);
    Vals want = {0, 0, 0, 0, 5, 6};
    rot(1, 2, 3.0, want[0], want[1]);  // position 3
    rot(3, 4, 0.03, want[2], want[3]);
    EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, {in(F32, {1, 6}, x), in(I32, {1}, {3})}, {output_of(F32, {1, 6})})[0], want, 1e-10));
    // Linear scaling by 2: angles halve.
    p = rope_params(TGL_ROPE_NEOX, 4, TGL_ROPE_SCALING_LINEAR, 2.0f);
    want = {0, 0, 0, 0, 5, 6};
    rot(1, 3, 1.5, want[0], want[2]);
    rot(2, 4, 0.015, want[1], want[3]);
    EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, {in(F32, {1, 6}, x), in(I32, {1}, {3})}, {output_of(F32, {1, 6})})[0], want, 1e-10));
    // NTK-aware, factor 4, n_rot 4: base 10000 * 4^(4/2) = 160000, theta_1 = 1/400.
    p = rope_params(TGL_ROPE_NORMAL, 4, TGL_ROPE_SCALING_NTK_AWARE, 4.0f);
    want = {0, 0, 0, 0, 5, 6};
    rot(1, 2, 2.0, want[0], want[1]);  // position 2
    rot(3, 4, 2.0 / 400, want[2], want[3]);
    EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, {in(F32, {1, 6}, x), in(I32, {1}, {2})}, {output_of(F32, {1, 6})})[0], want, 1e-10));
    // YaRN, factor 4, original 4096 positions, n_rot 4, base 10000: corr(b) = 4 ln(4096 / (2 pi b)) / (2 ln 10000):
    // corr(32) = 0.5457.. -> low 0; corr(1) = 1.4085.. -> high min(3, 2) = 2. ramp_0 = 1, ramp_1 = 1 - 1/2.
    // ext_factor 1: mix_0 = 1 (angle e), mix_1 = 0.5 (e/4 * 0.5 + e * 0.5); m = 1 + 0.1 ln 4.
    p = rope_params(TGL_ROPE_NORMAL, 4, TGL_ROPE_SCALING_YARN, 4.0f);
    p.original_max_positions = 4096;
    const double m = 1.0 + 0.1 * std::log(4.0);
    const double e1 = 5 * 0.01;  // position 5
    want = {0, 0, 0, 0, 5, 6};
    rot(1, 2, 5.0, want[0], want[1]);
    rot(3, 4, e1 / 4 * 0.5 + e1 * 0.5, want[2], want[3]);
    for (int k = 0; k < 4; ++k) want[size_t(k)] *= m;
    EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, {in(F32, {1, 6}, x), in(I32, {1}, {5})}, {output_of(F32, {1, 6})})[0], want, 1e-10));
}

TEST_F(SequenceOps, RopeBroadcastPositionsAndBackward) {
    // x (B = 2, H = 1, S = 2, D = 2); positions (S) serve both batches; negative positions turn back.
    const Vals x = {1, 0, 0, 1, 2, 0, 0, 2};
    Vals want = {0, 0, 0, 0, 0, 0, 0, 0};
    rot(1, 0, -2.0, want[0], want[1]);
    rot(0, 1, 7.0, want[2], want[3]);
    rot(2, 0, -2.0, want[4], want[5]);
    rot(0, 2, 7.0, want[6], want[7]);
    auto p = rope_params(TGL_ROPE_NORMAL);
    Vals y = run(TGL_OP_ROPE, &p, {in(F32, {2, 1, 2, 2}, x), in(I32, {2}, {-2, 7})}, {output_of(F32, {2, 1, 2, 2})})[0];
    EXPECT_TRUE(near(F32, y, want, 1e-10));
    // rope_backward turns by the negative angle: it undoes rope.
    Vals back = run(TGL_OP_ROPE_BACKWARD, &p, {in(F32, {2, 1, 2, 2}, y), in(I32, {2}, {-2, 7})}, {output_of(F32, {2, 1, 2, 2})})[0];
    EXPECT_TRUE(compare(F32, back, x, Shape{8}, 1e-12, CompareMode::Nmse));
    // Per-batch positions (B, 1, S).
    Vals y2 = run(TGL_OP_ROPE, &p, {in(F32, {2, 1, 2, 2}, x), in(I32, {2, 1, 2}, {-2, 7, 0, 0})}, {output_of(F32, {2, 1, 2, 2})})[0];
    EXPECT_TRUE(near(F32, y2, {want[0], want[1], want[2], want[3], 2, 0, 0, 2}, 1e-10));
    // A large position: the argument reduction keeps cos/sin accurate for the f32 angle 100000.
    Vals y3 = run(TGL_OP_ROPE, &p, {in(F32, {1, 2}, {1, 0}), in(I32, {1}, {100000})}, {output_of(F32, {1, 2})})[0];
    EXPECT_TRUE(near(F32, y3, {std::cos(100000.0), std::sin(100000.0)}, 1e-9));
}

// ----- rope options (ABI 1.3): frequency factors, a cos/sin cache, multi-section rope ---------------

// rope's inputs with the 1.3 options: freq_factors, cos, sin absent unless given.
std::vector<InputArg> rope_in(InputArg x, InputArg pos, InputArg ff = absent_input(), InputArg cs = absent_input(),
                              InputArg sn = absent_input()) {
    return {std::move(x), std::move(pos), std::move(ff), std::move(cs), std::move(sn)};
}
tgl_rope_params multi_params(uint32_t mode, uint32_t multi, std::array<uint32_t, 4> sections) {
    tgl_rope_params p = rope_params(mode);
    p.multi = multi;
    for (int k = 0; k < 4; ++k) p.sections[k] = sections[size_t(k)];
    return p;
}
// y of one row x (D) whose pair i (NORMAL: (2i, 2i+1); NEOX: (i, i + n_rot/2)) turns by angle[i] (times m).
Vals rotated(const Vals& x, bool neox, const Vals& angle, double m = 1.0) {
    Vals y = x;
    const size_t half = angle.size();
    for (size_t i = 0; i < half; ++i) {
        const size_t j0 = neox ? i : 2 * i, j1 = neox ? i + half : 2 * i + 1;
        rot(x[j0], x[j1], angle[i], y[j0], y[j1]);
        y[j0] *= m;
        y[j1] *= m;
    }
    return y;
}

TEST_F(SequenceOps, RopeFrequencyFactorsDivideTheAngle) {
    // D = 4, position 3: theta = (1, 0.01); factors 2 and 4 halve and quarter the angles (ggml: theta / ff[i]).
    const Vals x = {1, 2, 3, 4};
    for (tgl_dtype dt : {F32, F16}) {
        SCOPED_TRACE(dtype_name(dt));
        for (uint32_t mode : {uint32_t(TGL_ROPE_NORMAL), uint32_t(TGL_ROPE_NEOX)}) {
            auto p = rope_params(mode);
            EXPECT_TRUE(near(dt, run(TGL_OP_ROPE, &p, rope_in(in(dt, {1, 4}, x), in(I32, {1}, {3}), in(F32, {2}, {2, 4})), {output_of(dt, {1, 4})})[0],
                             rotated(x, mode == TGL_ROPE_NEOX, {1.5, 0.0075}), 1e-10));
        }
    }
    // Partial rotation (D = 6, n_rot = 4, tail copied), NEOX, with linear scaling by 2 on top: 3 / 2 / 2, 0.03 / 4 / 2.
    auto p = rope_params(TGL_ROPE_NEOX, 4, TGL_ROPE_SCALING_LINEAR, 2.0f);
    const Vals x6 = {1, 2, 3, 4, 5, 6};
    Vals y = run(TGL_OP_ROPE, &p, rope_in(in(F32, {1, 6}, x6), in(I32, {1}, {3}), in(F32, {2}, {2, 4})), {output_of(F32, {1, 6})})[0];
    EXPECT_TRUE(near(F32, y, rotated(x6, true, {0.75, 0.00375}), 1e-10));
    // rope_backward with the same factors undoes it.
    Vals back = run(TGL_OP_ROPE_BACKWARD, &p, rope_in(in(F32, {1, 6}, y), in(I32, {1}, {3}), in(F32, {2}, {2, 4})), {output_of(F32, {1, 6})})[0];
    EXPECT_TRUE(compare(F32, back, x6, Shape{6}, 1e-12, CompareMode::Nmse));
    // Factors of 1 change nothing.
    p = rope_params(TGL_ROPE_NORMAL);
    EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, rope_in(in(F32, {1, 4}, x), in(I32, {1}, {3}), in(F32, {2}, {1, 1})), {output_of(F32, {1, 4})})[0],
                     rotated(x, false, {3.0, 0.03}), 1e-10));
}

TEST_F(SequenceOps, RopeOlderCallersSeeNoOption) {
    // A 1.1/1.2 host: 2 inputs and the 48-byte params struct: the options are off.
    const Vals x = {1, 2, 3, 4};
    auto p = rope_params(TGL_ROPE_NEOX);
    p.struct_size = TGL_ROPE_PARAMS_SIZE_V1_1;
    p.multi = 7;  // beyond the 48 bytes: not read
    EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, {in(F32, {1, 4}, x), in(I32, {1}, {3})}, {output_of(F32, {1, 4})})[0],
                     rotated(x, true, {3.0, 0.03}), 1e-10));
}

TEST_F(SequenceOps, RopeCosSinCache) {
    // The cache's values are used as given (no angle computed): cos 0.6, sin 0.8 at (position 4, pair 0),
    // cos 2, sin 0 at (4, 1), (c, s) = (0, -1) at (1, *); attn_factor scales both.
    Vals cs5(10), sn5(10);  // max_positions 5, half 2: (1, 0) but rows 1 and 4
    for (int r = 0; r < 5; ++r)
        for (int i = 0; i < 2; ++i) {
            cs5[size_t(2 * r + i)] = r == 4 ? (i == 0 ? 0.6 : 2.0) : r == 1 ? 0.0 : 1.0;
            sn5[size_t(2 * r + i)] = r == 4 ? (i == 0 ? 0.8 : 0.0) : r == 1 ? -1.0 : 0.0;
        }
    const Vals x = {1, 2, 3, 4, 1, 2, 3, 4};
    for (tgl_dtype dt : {F32, F16})
        for (uint32_t mode : {uint32_t(TGL_ROPE_NORMAL), uint32_t(TGL_ROPE_NEOX)}) {
            SCOPED_TRACE(std::string(dtype_name(dt)) + " mode " + std::to_string(mode));
            auto p = rope_params(mode);
            p.attn_factor = 0.5f;
            const bool neox = mode == TGL_ROPE_NEOX;
            // row 0 at position 4, row 1 at position 1.
            Vals want(8);
            const size_t a0 = 0, b0 = neox ? 2 : 1, a1 = neox ? 1 : 2, b1 = 3;
            for (size_t r = 0; r < 2; ++r) {
                const double* xr = &x[4 * r];
                double* w = &want[4 * r];
                const double c0 = r == 0 ? 0.6 : 0.0, s0 = r == 0 ? 0.8 : -1.0, c1 = r == 0 ? 2.0 : 0.0, s1 = r == 0 ? 0.0 : -1.0;
                w[a0] = 0.5 * (xr[a0] * c0 - xr[b0] * s0);
                w[b0] = 0.5 * (xr[a0] * s0 + xr[b0] * c0);
                w[a1] = 0.5 * (xr[a1] * c1 - xr[b1] * s1);
                w[b1] = 0.5 * (xr[a1] * s1 + xr[b1] * c1);
            }
            EXPECT_TRUE(near(dt, run(TGL_OP_ROPE, &p, rope_in(in(dt, {2, 4}, x), in(I32, {2}, {4, 1}), absent_input(), in(dt, {5, 2}, cs5), in(dt, {5, 2}, sn5)),
                                     {output_of(dt, {2, 4})})[0],
                             want, 1e-10));
        }
    // Partial rotation with a cache of true angles a(p, i) = 0.3 p + 0.7 i, and rope_backward undoing it.
    Vals ca(12), sa(12);
    for (int r = 0; r < 6; ++r)
        for (int i = 0; i < 2; ++i) {
            ca[size_t(2 * r + i)] = std::cos(0.3 * r + 0.7 * i);
            sa[size_t(2 * r + i)] = std::sin(0.3 * r + 0.7 * i);
        }
    auto p = rope_params(TGL_ROPE_NEOX, 4);
    const Vals x6 = {1, 2, 3, 4, 5, 6};
    Vals y = run(TGL_OP_ROPE, &p, rope_in(in(F32, {1, 6}, x6), in(I32, {1}, {5}), absent_input(), in(F32, {6, 2}, ca), in(F32, {6, 2}, sa)),
                 {output_of(F32, {1, 6})})[0];
    EXPECT_TRUE(near(F32, y, rotated(x6, true, {1.5, 2.2}), 1e-7));
    Vals back = run(TGL_OP_ROPE_BACKWARD, &p, rope_in(in(F32, {1, 6}, y), in(I32, {1}, {5}), absent_input(), in(F32, {6, 2}, ca), in(F32, {6, 2}, sa)),
                    {output_of(F32, {1, 6})})[0];
    EXPECT_TRUE(compare(F32, back, x6, Shape{6}, 1e-12, CompareMode::Nmse));
}

TEST_F(SequenceOps, RopeCachePositionOutOfRange) {
    // A position outside [0, max_positions) is INDEX_OUT_OF_RANGE and nothing is written.
    auto p = rope_params(TGL_ROPE_NORMAL);
    const Vals x(8, 1.0), c(6, 1.0), s(6, 0.0);
    for (int32_t bad : {3, -1})
        expect_index_out_of_range({"rope cache position " + std::to_string(bad), TGL_OP_ROPE, &p,
                                   rope_in(in(F32, {2, 4}, x), in(I32, {2}, {1, double(bad)}), absent_input(), in(F32, {3, 2}, c), in(F32, {3, 2}, s)),
                                   output_of(F32, {2, 4}), {"rope", "positions", "holds " + std::to_string(bad), "position 1", "[0, 3)"}});
    // An empty cache (max_positions 0): every position is outside.
    expect_index_out_of_range({"rope empty cache", TGL_OP_ROPE_BACKWARD, &p,
                               rope_in(in(F32, {2, 4}, x), in(I32, {2}, {0, 0}), absent_input(), empty_in(F32, {0, 2}), empty_in(F32, {0, 2})),
                               output_of(F32, {2, 4}), {"rope_backward", "holds 0", "position 0", "[0, 0)"}});
}

TEST_F(SequenceOps, RopeMultiSection) {
    // D = 8, n_rot 8: pairs 0..3, theta_i = 10000^(-i/4) = 1, 0.1, 0.01, 0.001; streams (t, h, w, e) = (5, 7, 11, 13).
    const Vals x = {1, 2, 3, 4, 5, 6, 7, 8};
    const Vals t = {1, 0.1, 0.01, 0.001};
    const Vals four = {5, 7, 11, 13};
    auto angles = [&](std::array<int, 4> stream) {
        Vals a(4);
        for (size_t i = 0; i < 4; ++i) a[i] = four[size_t(stream[i])] * t[i];
        return a;
    };
    struct Case {
        uint32_t multi;
        std::array<uint32_t, 4> sections;
        std::array<int, 4> streams;  // of pairs 0..3 by the rule in ops.h, worked by hand
    };
    const Case cases[] = {
        {TGL_ROPE_MULTI_SECTIONS, {2, 1, 1, 0}, {0, 0, 1, 2}},      // c = 0, 1 < 2: t; 2 < 3: h; 3 < 4: w
        {TGL_ROPE_MULTI_SECTIONS, {1, 1, 1, 1}, {0, 1, 2, 3}},
        {TGL_ROPE_MULTI_SECTIONS, {1, 1, 0, 0}, {0, 1, 0, 1}},      // sectors wrap: c = i mod 2
        {TGL_ROPE_MULTI_INTERLEAVED, {2, 1, 1, 0}, {0, 1, 2, 0}},   // c mod 3 = 1 < 3: h; 2 < 3: w; c = 3: 3 < 6: t
        {TGL_ROPE_MULTI_INTERLEAVED, {1, 1, 1, 1}, {0, 1, 2, 3}},   // c = 3: 3 < 3 fails: e
    };
    for (const Case& c : cases)
        for (uint32_t mode : {uint32_t(TGL_ROPE_NORMAL), uint32_t(TGL_ROPE_NEOX)}) {
            SCOPED_TRACE("multi " + std::to_string(c.multi) + " sections " + std::to_string(c.sections[0]) + std::to_string(c.sections[1]) +
                         std::to_string(c.sections[2]) + std::to_string(c.sections[3]) + " mode " + std::to_string(mode));
            auto p = multi_params(mode, c.multi, c.sections);
            EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, rope_in(in(F32, {1, 8}, x), in(I32, {1, 4}, four)), {output_of(F32, {1, 8})})[0],
                             rotated(x, mode == TGL_ROPE_NEOX, angles(c.streams)), 1e-10));
        }
    // VISION (NEOX, n_rot = D): dims = n_rot / 2 = 4, theta = 10000^(-2j/4) = 100^-j with j the index within the
    // section: sections (2, 2): pairs 0, 1 on t with j 0, 1; pairs 2, 3 on h with j 0, 1.
    auto p = multi_params(TGL_ROPE_NEOX, TGL_ROPE_MULTI_VISION, {2, 2, 0, 0});
    EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, rope_in(in(F32, {1, 8}, x), in(I32, {1, 2}, {3, 4})), {output_of(F32, {1, 8})})[0],
                     rotated(x, true, {3, 0.03, 4, 0.04}), 1e-10));
    // Positions (S, streams) broadcast over heads (x (H = 2, S = 2, D = 4)), partial n_rot = 2 (one pair: stream t),
    // with frequency factors.
    p = multi_params(TGL_ROPE_NEOX, TGL_ROPE_MULTI_SECTIONS, {1, 0, 0, 0});
    p.n_rot = 2;
    const Vals xh = {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8};
    Vals want;
    for (int h = 0; h < 2; ++h)
        for (int s = 0; s < 2; ++s) {
            Vals r = rotated({xh[size_t(8 * h + 4 * s)], xh[size_t(8 * h + 4 * s + 1)]}, true, {(s == 0 ? 3.0 : 9.0) / 4});
            want.insert(want.end(), {r[0], r[1], xh[size_t(8 * h + 4 * s + 2)], xh[size_t(8 * h + 4 * s + 3)]});
        }
    EXPECT_TRUE(near(F32, run(TGL_OP_ROPE, &p, rope_in(in(F32, {2, 2, 4}, xh), in(I32, {2, 1}, {3, 9}), in(F32, {1}, {4})), {output_of(F32, {2, 2, 4})})[0],
                     want, 1e-10));
    // With a cache: pair i reads cos/sin[p_k(i), i]; the cache holds the angle 0.5 p + i.
    Vals ca(14 * 4), sa(14 * 4);
    for (int r = 0; r < 14; ++r)
        for (int i = 0; i < 4; ++i) {
            ca[size_t(4 * r + i)] = std::cos(0.5 * r + i);
            sa[size_t(4 * r + i)] = std::sin(0.5 * r + i);
        }
    p = multi_params(TGL_ROPE_NORMAL, TGL_ROPE_MULTI_SECTIONS, {1, 1, 1, 1});
    Vals y = run(TGL_OP_ROPE, &p, rope_in(in(F32, {1, 8}, x), in(I32, {1, 4}, four), absent_input(), in(F32, {14, 4}, ca), in(F32, {14, 4}, sa)),
                 {output_of(F32, {1, 8})})[0];
    EXPECT_TRUE(near(F32, y, rotated(x, false, {2.5, 4.5, 7.5, 9.5}), 1e-7));
    // rope_backward undoes multi-section rope.
    p = multi_params(TGL_ROPE_NEOX, TGL_ROPE_MULTI_INTERLEAVED, {2, 1, 1, 0});
    y = run(TGL_OP_ROPE, &p, rope_in(in(F32, {1, 8}, x), in(I32, {1, 3}, {5, 7, 11})), {output_of(F32, {1, 8})})[0];
    Vals back = run(TGL_OP_ROPE_BACKWARD, &p, rope_in(in(F32, {1, 8}, y), in(I32, {1, 3}, {5, 7, 11})), {output_of(F32, {1, 8})})[0];
    EXPECT_TRUE(compare(F32, back, x, Shape{8}, 1e-12, CompareMode::Nmse));
}

TEST_F(SequenceOps, RopeOptionsBadInput) {
    const Vals eight(8, 1.0);
    const auto x = [&] { return in(F32, {2, 4}, eight); };
    const auto pos = [&] { return in(I32, {2}, {0, 1}); };
    const std::vector<OutputArg> y = {output_of(F32, {2, 4})};
    auto p = rope_params(TGL_ROPE_NORMAL);
    // freq_factors: n_rot / 2 f32 values
    expect_rejected(TGL_OP_ROPE, &p, rope_in(x(), pos(), in(F32, {3}, {1, 1, 1})), y, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[2] (freq_factors)", "(3)", "(2)"});
    expect_rejected(TGL_OP_ROPE_BACKWARD, &p, rope_in(x(), pos(), in(F16, {2}, {1, 1})), y, TGL_ERROR_DTYPE_MISMATCH,
                    {"inputs[2] (freq_factors)", "f16"});
    // the cache: both halves, (max_positions, n_rot / 2), x's dtype, no scaling or factors beside it
    expect_rejected(TGL_OP_ROPE, &p, rope_in(x(), pos(), absent_input(), in(F32, {4, 2}, eight)), y, TGL_ERROR_INVALID_ARGUMENT,
                    {"inputs[3] (cos)", "inputs[4] (sin)", "only cos"});
    expect_rejected(TGL_OP_ROPE, &p, rope_in(x(), pos(), absent_input(), in(F32, {2, 4}, eight), in(F32, {2, 4}, eight)), y,
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[3] (cos)", "(max_positions, n_rot / 2 = 2)", "(2, 4)"});
    expect_rejected(TGL_OP_ROPE, &p, rope_in(x(), pos(), absent_input(), in(F32, {4, 2}, eight), in(F32, {3, 2}, Vals(6, 0.0))), y,
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[4] (sin)", "(3, 2)", "(4, 2)"});
    expect_rejected(TGL_OP_ROPE, &p, rope_in(x(), pos(), absent_input(), in(F16, {4, 2}, eight), in(F16, {4, 2}, eight)), y,
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[3] (cos)", "f16"});
    expect_rejected(TGL_OP_ROPE, &p, rope_in(x(), pos(), in(F32, {2}, {1, 1}), in(F32, {4, 2}, eight), in(F32, {4, 2}, eight)), y,
                    TGL_ERROR_INVALID_ARGUMENT, {"freq_factors", "must be absent"});
    auto lin = rope_params(TGL_ROPE_NORMAL, 0, TGL_ROPE_SCALING_LINEAR, 2.0f);
    expect_rejected(TGL_OP_ROPE, &lin, rope_in(x(), pos(), absent_input(), in(F32, {4, 2}, eight), in(F32, {4, 2}, eight)), y,
                    TGL_ERROR_INVALID_ARGUMENT, {"params->scaling", "TGL_ROPE_SCALING_NONE", "1"});
    // multi-section rope: a known layout, sections summing to >= 1 (and 0 without it), streams that exist
    auto m = multi_params(TGL_ROPE_NEOX, 4, {1, 1, 0, 0});
    expect_rejected(TGL_OP_ROPE, &m, rope_in(x(), in(I32, {2, 2}, {0, 0, 1, 1})), y, TGL_ERROR_INVALID_ARGUMENT, {"params->multi", "4"});
    m = multi_params(TGL_ROPE_NEOX, TGL_ROPE_MULTI_SECTIONS, {0, 0, 0, 0});
    expect_rejected(TGL_OP_ROPE, &m, rope_in(x(), in(I32, {2, 2}, {0, 0, 1, 1})), y, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->sections", "sum", "(0, 0, 0, 0)"});
    m = multi_params(TGL_ROPE_NEOX, TGL_ROPE_MULTI_NONE, {1, 1, 0, 0});
    expect_rejected(TGL_OP_ROPE, &m, rope_in(x(), pos()), y, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->sections", "all 0", "TGL_ROPE_MULTI_NONE", "(1, 1, 0, 0)"});
    m = multi_params(TGL_ROPE_NEOX, TGL_ROPE_MULTI_SECTIONS, {1, 1, 1, 1});
    expect_rejected(TGL_OP_ROPE, &m, rope_in(x(), in(I32, {2, 5}, Vals(10, 0.0))), y, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[1] (positions)", "1..4 position streams", "(2, 5)"});
    expect_rejected(TGL_OP_ROPE, &m, rope_in(x(), in(I32, {2, 1}, {0, 1})), y, TGL_ERROR_SHAPE_MISMATCH,
                    {"sections (1, 1, 1, 1)", "pair 1", "stream 1", "1 streams"});
    m = multi_params(TGL_ROPE_NEOX, TGL_ROPE_MULTI_SECTIONS, {0xffffffffu, 2, 0, 0});
    expect_rejected(TGL_OP_ROPE, &m, rope_in(x(), in(I32, {2, 2}, {0, 0, 1, 1})), y, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->sections", "4294967297"});
    // positions' leading dims (not the streams) broadcast to x.shape[:-1]
    m = multi_params(TGL_ROPE_NEOX, TGL_ROPE_MULTI_SECTIONS, {1, 1, 0, 0});
    expect_rejected(TGL_OP_ROPE, &m, rope_in(x(), in(I32, {3, 2}, Vals(6, 0.0))), y, TGL_ERROR_SHAPE_MISMATCH,
                    {"positions", "streams", "(3)"});
    // a params size between the published ones
    p.struct_size = 52;
    expect_rejected(TGL_OP_ROPE, &p, rope_in(x(), pos()), y, TGL_ERROR_PARAMS_SIZE, {"struct_size", "52", "48", "68"});
}

// ----- fft ------------------------------------------------------------------------------------------

// Interleaved (re, im) of n complex values.
Vals cplx(std::initializer_list<std::pair<double, double>> v) {
    Vals out;
    for (auto& c : v) {
        out.push_back(c.first);
        out.push_back(c.second);
    }
    return out;
}

Vals cat3(const Vals& a, const Vals& b, const Vals& c) {
    Vals out = a;
    out.insert(out.end(), b.begin(), b.end());
    out.insert(out.end(), c.begin(), c.end());
    return out;
}

Vals fft(tgl_op op, tgl_dtype dt, const Shape& s, const Vals& x) {
    return run(op, nullptr, {x.empty() ? empty_in(dt, s) : in(dt, s, x)}, {output_of(dt, s)})[0];
}

::testing::AssertionResult close(tgl_dtype dt, const Vals& got, const Vals& want) {
    return compare(dt, got, want, Shape{int64_t(want.size())}, dt == F16 ? 1e-6 : 1e-12, CompareMode::Nmse);
}

TEST_F(SequenceOps, FftKnownAnswers) {
    for (tgl_dtype dt : {F32, F16}) {  // not bf16: these expected values are of unrounded inputs
        SCOPED_TRACE(dtype_name(dt));
        EXPECT_TRUE(close(dt, fft(TGL_OP_FFT, dt, {1, 2}, {3, -1}), {3, -1}));
        EXPECT_TRUE(close(dt, fft(TGL_OP_FFT, dt, {2, 2}, cplx({{1, 0}, {2, 0}})), cplx({{3, 0}, {-1, 0}})));
        EXPECT_TRUE(close(dt, fft(TGL_OP_FFT, dt, {2, 2}, cplx({{0, 1}, {1, 0}})), cplx({{1, 1}, {-1, 1}})));
        // n = 4: impulse -> ones; constant -> 4 at k = 0; alternating -> 4 at k = 2.
        EXPECT_TRUE(close(dt, fft(TGL_OP_FFT, dt, {3, 4, 2},
                                  cat3(cplx({{1, 0}, {0, 0}, {0, 0}, {0, 0}}), cplx({{1, 0}, {1, 0}, {1, 0}, {1, 0}}),
                                       cplx({{1, 0}, {-1, 0}, {1, 0}, {-1, 0}}))),
                          cat3(cplx({{1, 0}, {1, 0}, {1, 0}, {1, 0}}), cplx({{4, 0}, {0, 0}, {0, 0}, {0, 0}}),
                               cplx({{0, 0}, {0, 0}, {4, 0}, {0, 0}}))));
        // n = 8, impulse at j = 1: X_k = exp(-2 pi i k / 8).
        const double h = std::sqrt(0.5);
        EXPECT_TRUE(close(dt, fft(TGL_OP_FFT, dt, {8, 2}, cplx({{0, 0}, {1, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}})),
                          cplx({{1, 0}, {h, -h}, {0, -1}, {-h, -h}, {-1, 0}, {-h, h}, {0, 1}, {h, h}})));
        // ifft: 1/n scaling and the + sign.
        EXPECT_TRUE(close(dt, fft(TGL_OP_IFFT, dt, {4, 2}, cplx({{4, 0}, {0, 0}, {0, 0}, {0, 0}})),
                          cplx({{1, 0}, {1, 0}, {1, 0}, {1, 0}})));
        EXPECT_TRUE(close(dt, fft(TGL_OP_IFFT, dt, {8, 2}, cplx({{1, 0}, {h, -h}, {0, -1}, {-h, -h}, {-1, 0}, {-h, h}, {0, 1}, {h, h}})),
                          cplx({{0, 0}, {1, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}, {0, 0}})));
        // n = 3 (direct DFT): constant -> 3 at k = 0.
        EXPECT_TRUE(close(dt, fft(TGL_OP_FFT, dt, {3, 2}, cplx({{1, 0}, {1, 0}, {1, 0}})), cplx({{3, 0}, {0, 0}, {0, 0}})));
    }
}

TEST_F(SequenceOps, FftRoundTrip) {
    // ifft(fft(x)) = x for the shared-memory (64), global (8192: past every device's shared-memory
    // row) and direct (3, 5, 12, 1000) paths.
    for (int64_t n : {3, 5, 12, 64, 1000, 8192}) {
        SCOPED_TRACE("n = " + std::to_string(n));
        Vals x(size_t(2 * n));
        for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * double(i * i % 101)) + 0.25;
        Vals y = fft(TGL_OP_FFT, F32, {n, 2}, x);
        // The DC term is the sum.
        double sr = 0, si = 0;
        for (int64_t j = 0; j < n; ++j) {
            sr += x[size_t(2 * j)];
            si += x[size_t(2 * j + 1)];
        }
        EXPECT_NEAR(y[0], sr, 1e-4 * std::max(1.0, std::fabs(sr)));
        EXPECT_NEAR(y[1], si, 1e-4 * std::max(1.0, std::fabs(si)));
        EXPECT_TRUE(compare(F32, fft(TGL_OP_IFFT, F32, {n, 2}, y), x, Shape{2 * n}, 1e-10, CompareMode::Nmse));
    }
}

// ----- selective scan -------------------------------------------------------------------------------

tgl_selective_scan_params ss(uint32_t softplus, uint32_t state_in = 0) {
    return tgl_selective_scan_params{sizeof(tgl_selective_scan_params), softplus, {0, 0}, state_in};
}

OutputArg state_out(tgl_dtype dt, const Shape& s, const Vals& init) {
    OutputArg o = output_of(dt, s);
    o.init = init;
    return o;
}

TEST_F(SequenceOps, SelectiveScanByHand) {
    // B = D = 1, L = 3, N = 2; A = (0, -ln 2), so exp(dt A) = (1, 1/2) at dt = 1.
    // u = (1, 2, 3), B rows (1, 1, 1), (1, 0, 2); C rows (1, 0, 1), (0, 1, 1):
    //   t0: x = (1, 1), y = 1;  t1: x = (3, 0.5), y = 0.5;  t2: x = (6, 6.25), y = 12.25.
    const Vals u = {1, 2, 3}, A = {0, -std::log(2.0)}, Bm = {1, 1, 1, 1, 0, 2}, Cm = {1, 0, 1, 0, 1, 1};
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        auto p = ss(0);
        auto ys = run(TGL_OP_SELECTIVE_SCAN, &p,
                      {in(dt, {1, 1, 3}, u), in(dt, {1, 1, 3}, {1, 1, 1}), in(dt, {1, 2}, A), in(dt, {1, 2, 3}, Bm),
                       in(dt, {1, 2, 3}, Cm), absent_input(), absent_input(), absent_input()},
                      {output_of(dt, {1, 1, 3}), output_of(dt, {1, 1, 2})});
        const double tol = dt == F16 ? 1e-6 : 1e-12;
        EXPECT_TRUE(near(dt, ys[0], {1, 0.5, 12.25}, tol));
        EXPECT_TRUE(near(dt, ys[1], {6, 6.25}, tol));
        // D skip 0.5, z = 1 (silu(1) = 1 / (1 + e^-1)), delta 0.5 + delta_bias 0.5.
        const double s1 = 1.0 / (1.0 + std::exp(-1.0));
        ys = run(TGL_OP_SELECTIVE_SCAN, &p,
                 {in(dt, {1, 1, 3}, u), in(dt, {1, 1, 3}, {0.5, 0.5, 0.5}), in(dt, {1, 2}, A), in(dt, {1, 2, 3}, Bm),
                  in(dt, {1, 2, 3}, Cm), in(dt, {1}, {0.5}), in(dt, {1, 1, 3}, {1, 1, 1}), in(dt, {1}, {0.5})},
                 {output_of(dt, {1, 1, 3}), absent_output()});
        EXPECT_TRUE(near(dt, ys[0], {1.5 * s1, 1.5 * s1, 13.75 * s1}, tol));
    }
    // softplus(ln(e - 1)) = 1: the same scan.
    auto p = ss(1);
    const double d = std::log(std::exp(1.0) - 1.0);
    auto ys = run(TGL_OP_SELECTIVE_SCAN, &p,
                  {in(F32, {1, 1, 3}, u), in(F32, {1, 1, 3}, {d, d, d}), in(F32, {1, 2}, A), in(F32, {1, 2, 3}, Bm),
                   in(F32, {1, 2, 3}, Cm), absent_input(), absent_input(), absent_input()},
                  {output_of(F32, {1, 1, 3}), output_of(F32, {1, 1, 2})});
    EXPECT_TRUE(near(F32, ys[0], {1, 0.5, 12.25}, 1e-12));
    EXPECT_TRUE(near(F32, ys[1], {6, 6.25}, 1e-12));
    // L = 0: y is empty, last_state is zeros.
    p = ss(0);
    ys = run(TGL_OP_SELECTIVE_SCAN, &p,
             {empty_in(F32, {1, 2, 0}), empty_in(F32, {1, 2, 0}), in(F32, {2, 2}, {1, 1, 1, 1}), empty_in(F32, {1, 2, 0}),
              empty_in(F32, {1, 2, 0}), absent_input(), absent_input(), absent_input()},
             {output_of(F32, {1, 2, 0}), output_of(F32, {1, 2, 2})});
    EXPECT_TRUE(compare(F32, ys[1], {0, 0, 0, 0}, Shape{4}, 0, CompareMode::Exact));
}

// ABI 1.3 state_in: the hand example's steps t1, t2 started from the state after t0, (1, 1), carried
// in last_state; L = 0 leaves the state as it is; the 1.1 struct size still means state_in 0.
TEST_F(SequenceOps, SelectiveScanCarriedStateByHand) {
    const Vals A = {0, -std::log(2.0)};
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        const double tol = dt == F16 ? 1e-6 : 1e-12;
        auto p = ss(0, 1);
        auto ys = run(TGL_OP_SELECTIVE_SCAN, &p,
                      {in(dt, {1, 1, 2}, {2, 3}), in(dt, {1, 1, 2}, {1, 1}), in(dt, {1, 2}, A), in(dt, {1, 2, 2}, {1, 1, 0, 2}),
                       in(dt, {1, 2, 2}, {0, 1, 1, 1}), absent_input(), absent_input(), absent_input()},
                      {output_of(dt, {1, 1, 2}), state_out(dt, {1, 1, 2}, {1, 1})});
        EXPECT_TRUE(near(dt, ys[0], {0.5, 12.25}, tol));
        EXPECT_TRUE(near(dt, ys[1], {6, 6.25}, tol));
        ys = run(TGL_OP_SELECTIVE_SCAN, &p,
                 {empty_in(dt, {1, 1, 0}), empty_in(dt, {1, 1, 0}), in(dt, {1, 2}, A), empty_in(dt, {1, 2, 0}),
                  empty_in(dt, {1, 2, 0}), absent_input(), absent_input(), absent_input()},
                 {output_of(dt, {1, 1, 0}), state_out(dt, {1, 1, 2}, {6, -2.5})});
        EXPECT_TRUE(near(dt, ys[1], {6, -2.5}, 0));
    }
    tgl_selective_scan_params old = ss(0, 1);
    old.struct_size = TGL_SELECTIVE_SCAN_PARAMS_SIZE_V1_1;  // a 1.1 host: no state_in field, so 0
    auto ys = run(TGL_OP_SELECTIVE_SCAN, &old,
                  {in(F32, {1, 1, 1}, {1}), in(F32, {1, 1, 1}, {1}), in(F32, {1, 2}, A), in(F32, {1, 2, 1}, {1, 1}),
                   in(F32, {1, 2, 1}, {1, 0}), absent_input(), absent_input(), absent_input()},
                  {output_of(F32, {1, 1, 1}), state_out(F32, {1, 1, 2}, {100, 100})});
    EXPECT_TRUE(near(F32, ys[0], {1}, 1e-12));
    EXPECT_TRUE(near(F32, ys[1], {1, 1}, 1e-12));
}

// A random sequence run in two halves, the second from the first's last_state, equals one run:
// (B, D, L, N) = (2, 3, 9, 5), split after 4 steps, with D, z, delta_bias and softplus.
TEST_F(SequenceOps, SelectiveScanTwoHalvesEqualOneRun) {
    const int64_t B = 2, D = 3, L = 9, N = 5, L1 = 4;
    auto random_vals = [&](int64_t n, double lo, double hi) {
        Vals v(static_cast<size_t>(n), 0.0);
        for (double& x : v) x = double(float(rng_.uniform(lo, hi)));
        return v;
    };
    const Vals u = random_vals(B * D * L, -1, 1), delta = random_vals(B * D * L, -1, 1), A = random_vals(D * N, -2, -0.1),
               Bm = random_vals(B * N * L, -1, 1), Cm = random_vals(B * N * L, -1, 1), Ds = random_vals(D, -1, 1),
               z = random_vals(B * D * L, -1, 1), bias = random_vals(D, -0.5, 0.5);
    // the steps [t0, t1) of a (rows, L) array
    auto steps = [&](const Vals& v, int64_t rows, int64_t t0, int64_t t1) {
        Vals out;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t t = t0; t < t1; ++t) out.push_back(v[size_t(r * L + t)]);
        return out;
    };
    auto scan = [&](int64_t t0, int64_t t1, const tgl_selective_scan_params& p, const Vals& state) {
        const int64_t l = t1 - t0;
        return run(TGL_OP_SELECTIVE_SCAN, &p,
                   {in(F32, {B, D, l}, steps(u, B * D, t0, t1)), in(F32, {B, D, l}, steps(delta, B * D, t0, t1)), in(F32, {D, N}, A),
                    in(F32, {B, N, l}, steps(Bm, B * N, t0, t1)), in(F32, {B, N, l}, steps(Cm, B * N, t0, t1)), in(F32, {D}, Ds),
                    in(F32, {B, D, l}, steps(z, B * D, t0, t1)), in(F32, {D}, bias)},
                   {output_of(F32, {B, D, l}), state_out(F32, {B, D, N}, state)});
    };
    const Vals poison(size_t(B * D * N), 1e30);
    const auto whole = scan(0, L, ss(1, 0), poison);  // state_in 0: the prefill is not read
    const auto first = scan(0, L1, ss(1, 0), poison);
    const auto second = scan(L1, L, ss(1, 1), first[1]);
    Vals joined;
    for (int64_t r = 0; r < B * D; ++r) {
        for (int64_t t = 0; t < L1; ++t) joined.push_back(first[0][size_t(r * L1 + t)]);
        for (int64_t t = 0; t < L - L1; ++t) joined.push_back(second[0][size_t(r * (L - L1) + t)]);
    }
    // The carried state is rounded to f32 once (the CPU keeps it in double within a run).
    EXPECT_TRUE(compare(F32, joined, whole[0], Shape{B, D, L}, 1e-12, CompareMode::Nmse));
    EXPECT_TRUE(compare(F32, second[1], whole[1], Shape{B, D, N}, 1e-12, CompareMode::Nmse));
}

// ----- sample ---------------------------------------------------------------------------------------

tgl_sample_params sp(float temperature, uint32_t top_k = 0, float top_p = 1.0f, uint64_t seed = 0, uint64_t offset = 0) {
    return tgl_sample_params{sizeof(tgl_sample_params), top_k, temperature, top_p, seed, offset};
}

Vals sample(const tgl_sample_params* p, tgl_dtype dt, const Shape& s, const Vals& logits) {
    return run(TGL_OP_SAMPLE, p, {in(dt, s, logits)}, {output_of(I32, {s[0]})})[0];
}

TEST_F(SequenceOps, SampleGreedyAndCertain) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // Greedy: the first index of the largest logit (NaN is never chosen); temperature 0 or top_k 1.
        const Vals x = {1, 3, 2, 5, 5, 1, nan, 1, 2, -inf, -inf, -inf};
        auto p = sp(0.0f);
        EXPECT_EQ(sample(&p, dt, {4, 3}, x), Vals({1, 0, 2, 0}));
        p = sp(1.5f, 1, 1.0f, 77);
        EXPECT_EQ(sample(&p, dt, {4, 3}, x), Vals({1, 0, 2, 0}));
        // One token holds all the mass (the others are -inf): any seed, offset, temperature, top_p.
        for (uint64_t seed : {0ull, 1ull, 0x123456789abcdefull}) {
            p = sp(0.7f, 0, 0.9f, seed, seed * 3);
            EXPECT_EQ(sample(&p, dt, {2, 4}, {-inf, -inf, 5, -inf, 1, -inf, -inf, -inf}), Vals({2, 0}));
        }
        // top_p tiny: only the largest weight; top_k 2 of {10, 9, -100, -100}: token 0 or 1.
        p = sp(1.0f, 0, 1e-6f, 5);
        EXPECT_EQ(sample(&p, dt, {1, 4}, {1, 2, 4, 3}), Vals({2}));
        for (uint64_t seed = 0; seed < 8; ++seed) {
            p = sp(1.0f, 2, 1.0f, seed);
            double t = sample(&p, dt, {1, 4}, {10, 9, -100, -100})[0];
            EXPECT_TRUE(t == 0 || t == 1) << t;
        }
    }
}

TEST_F(SequenceOps, SamplePhiloxDraw) {
    // Seed 0, offset 0, row 0: Philox4x32-10 of counter 0 under key 0 has word 0 = 0x6627e8d5
    // (Random123's known answer). n equal logits have equal weights 2^24, so the token is
    // floor(R * n / 2^32): the top log2(n) bits of R: n = 2: 0, 4: 1 (01), 8: 3 (011), 16: 6 (0110).
    for (int64_t n : {2, 4, 8, 16}) {
        auto p = sp(1.0f);
        const double want = double(0x6627e8d5u >> (32 - int(std::log2(double(n)))));
        EXPECT_EQ(sample(&p, F32, {1, n}, Vals(size_t(n), 0.5)), Vals({want})) << "n = " << n;
    }
    // Ties at the top_k and top_p thresholds are kept: 4 equal logits with top_k 2 or top_p 0.5
    // keep all 4, so the draw is the same.
    auto p = sp(2.0f, 2);
    EXPECT_EQ(sample(&p, F32, {1, 4}, Vals(4, -1.0)), Vals({1}));
    p = sp(2.0f, 0, 0.5f);
    EXPECT_EQ(sample(&p, F32, {1, 4}, Vals(4, 3.0)), Vals({1}));
}

// ----- empty tensors and bad input ------------------------------------------------------------------

TEST_F(SequenceOps, EmptyTensors) {
    auto p = rope_params(TGL_ROPE_NORMAL);
    EXPECT_TRUE(run(TGL_OP_ROPE, &p, {empty_in(F32, {0, 4}), empty_in(I32, {0})}, {output_of(F32, {0, 4})})[0].empty());
    EXPECT_TRUE(fft(TGL_OP_FFT, F32, {0, 8, 2}, {}).empty());
    EXPECT_TRUE(fft(TGL_OP_IFFT, F32, {3, 0, 2}, {}).empty());
    auto s = sp(1.0f);
    EXPECT_TRUE(run(TGL_OP_SAMPLE, &s, {empty_in(F32, {0, 5})}, {output_of(I32, {0})})[0].empty());
}

TEST_F(SequenceOps, BadInput) {
    const Vals eight(8, 1.0);
    auto p = rope_params(TGL_ROPE_NORMAL, 3);
    expect_rejected(TGL_OP_ROPE, &p, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->n_rot", "even", "3"});
    p = rope_params(TGL_ROPE_NORMAL, 6);
    expect_rejected(TGL_OP_ROPE, &p, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->n_rot", "D = 4"});
    p = rope_params(2);
    expect_rejected(TGL_OP_ROPE, &p, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->mode", "2"});
    p = rope_params(TGL_ROPE_NORMAL, 0, 7);
    expect_rejected(TGL_OP_ROPE, &p, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->scaling", "7"});
    p = rope_params(TGL_ROPE_NORMAL, 0, TGL_ROPE_SCALING_LINEAR, 0.0f);
    expect_rejected(TGL_OP_ROPE, &p, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->factor"});
    p = rope_params(TGL_ROPE_NORMAL, 0, TGL_ROPE_SCALING_YARN, 2.0f);
    expect_rejected(TGL_OP_ROPE, &p, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->original_max_positions"});
    p = rope_params(TGL_ROPE_NORMAL);
    p.theta_base = 0.0f;
    expect_rejected(TGL_OP_ROPE, &p, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->theta_base"});
    p = rope_params(TGL_ROPE_NORMAL);
    p.struct_size = 40;
    expect_rejected(TGL_OP_ROPE, &p, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_PARAMS_SIZE, {"struct_size", "40"});
    expect_rejected(TGL_OP_ROPE, nullptr, {in(F32, {2, 4}, eight), in(F32, {2}, {0, 1})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_DTYPE_MISMATCH, {"inputs[1] (positions)", "f32"});
    expect_rejected(TGL_OP_ROPE, nullptr, {in(F32, {2, 4}, eight), in(I32, {3}, {0, 1, 2})}, {output_of(F32, {2, 4})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[1] (positions)", "(3)", "(2)"});
    expect_rejected(TGL_OP_ROPE_BACKWARD, nullptr, {in(F32, {2, 4}, eight), in(I32, {2}, {0, 1})}, {output_of(F32, {4, 2})},
                    TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (dx)", "(4, 2)"});
    expect_rejected(TGL_OP_ROPE, nullptr, {in(F32, {2, 3}, Vals(6, 1.0)), in(I32, {2}, {0, 1})}, {output_of(F32, {2, 3})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->n_rot", "D = 3"});

    expect_rejected(TGL_OP_FFT, nullptr, {in(F32, {2, 3}, Vals(6, 1.0))}, {output_of(F32, {2, 3})},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[0] (x)", "(..., n, 2)", "(2, 3)"});
    expect_rejected(TGL_OP_IFFT, nullptr, {in(F32, {4, 2}, eight)}, {output_of(F32, {2, 4})},
                    TGL_ERROR_SHAPE_MISMATCH, {"outputs[0] (y)", "(2, 4)"});
    expect_rejected(TGL_OP_FFT, nullptr, {in(F32, {4, 2}, eight)}, {output_of(F16, {4, 2})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"outputs[0] (y)"});
    expect_rejected(TGL_OP_FFT, nullptr, {in(F32, {4097, 2}, Vals(8194, 1.0))}, {output_of(F32, {4097, 2})},
                    TGL_ERROR_UNIMPLEMENTED, {"n = 4097", "power of two", "4096"});

    auto sa = sp(-1.0f);
    expect_rejected(TGL_OP_SAMPLE, &sa, {in(F32, {2, 4}, eight)}, {output_of(I32, {2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->temperature", "-1"});
    sa = sp(1e-39f);
    expect_rejected(TGL_OP_SAMPLE, &sa, {in(F32, {2, 4}, eight)}, {output_of(I32, {2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->temperature", "reciprocal"});
    sa = sp(1.0f, 0, 0.0f);
    expect_rejected(TGL_OP_SAMPLE, &sa, {in(F32, {2, 4}, eight)}, {output_of(I32, {2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->top_p", "(0, 1]"});
    sa = sp(1.0f, 0, 1.5f);
    expect_rejected(TGL_OP_SAMPLE, &sa, {in(F32, {2, 4}, eight)}, {output_of(I32, {2})}, TGL_ERROR_INVALID_ARGUMENT,
                    {"params->top_p", "1.5"});
    sa = sp(1.0f);
    expect_rejected(TGL_OP_SAMPLE, &sa, {in(F32, {8}, eight)}, {output_of(I32, {1})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[0] (logits)", "(B, V)", "(8)"});
    expect_rejected(TGL_OP_SAMPLE, &sa, {in(F32, {2, 4}, eight)}, {output_of(I32, {4})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"outputs[0] (token)", "(4)", "(2)"});
    expect_rejected(TGL_OP_SAMPLE, &sa, {in(F32, {2, 4}, eight)}, {output_of(F32, {2})}, TGL_ERROR_DTYPE_MISMATCH,
                    {"outputs[0] (token)"});
    expect_rejected(TGL_OP_SAMPLE, &sa, {empty_in(F32, {2, 0})}, {output_of(I32, {2})}, TGL_ERROR_SHAPE_MISMATCH,
                    {"vocabulary", "(2, 0)"});
    sa.struct_size = 24;
    expect_rejected(TGL_OP_SAMPLE, &sa, {in(F32, {2, 4}, eight)}, {output_of(I32, {2})}, TGL_ERROR_PARAMS_SIZE,
                    {"struct_size", "24"});

    const Vals six(6, 1.0), three(3, 1.0);
    auto s = ss(0);
    auto scan_in = [&](const Shape& a_shape, const Shape& b_shape, const Shape& d_shape) {
        int64_t an = a_shape[0] * a_shape[1], bn = b_shape[0] * b_shape[1] * b_shape[2];
        return std::vector<InputArg>{in(F32, {1, 1, 3}, three), in(F32, {1, 1, 3}, three), in(F32, a_shape, Vals(size_t(an), -1.0)),
                                     in(F32, b_shape, Vals(size_t(bn), 1.0)), in(F32, {1, 2, 3}, six),
                                     in(F32, d_shape, Vals(size_t(d_shape[0]), 1.0)), absent_input(), absent_input()};
    };
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, scan_in({2, 2}, {1, 2, 3}, {1}), {output_of(F32, {1, 1, 3}), absent_output()},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[2] (A)", "(2, 2)", "(D, N)"});
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, scan_in({1, 2}, {1, 3, 3}, {1}), {output_of(F32, {1, 1, 3}), absent_output()},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[3] (Bm)", "(1, 3, 3)", "(1, 2, 3)"});
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, scan_in({1, 2}, {1, 2, 3}, {2}), {output_of(F32, {1, 1, 3}), absent_output()},
                    TGL_ERROR_SHAPE_MISMATCH, {"inputs[5] (Dskip)", "(2)"});
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, scan_in({1, 2}, {1, 2, 3}, {1}), {output_of(F32, {1, 1, 3}), output_of(F32, {1, 2, 1})},
                    TGL_ERROR_SHAPE_MISMATCH, {"outputs[1] (last_state)", "(1, 2, 1)", "(1, 1, 2)"});
    s = ss(2);
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, scan_in({1, 2}, {1, 2, 3}, {1}), {output_of(F32, {1, 1, 3}), absent_output()},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->delta_softplus", "2"});
    s = ss(0, 2);
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, scan_in({1, 2}, {1, 2, 3}, {1}), {output_of(F32, {1, 1, 3}), output_of(F32, {1, 1, 2})},
                    TGL_ERROR_INVALID_ARGUMENT, {"params->state_in", "2"});
    s = ss(0, 1);  // the initial state comes from last_state, which is absent
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, scan_in({1, 2}, {1, 2, 3}, {1}), {output_of(F32, {1, 1, 3}), absent_output()},
                    TGL_ERROR_INVALID_ARGUMENT, {"state_in", "outputs[1] (last_state)", "absent"});
    s.struct_size = 18;
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, scan_in({1, 2}, {1, 2, 3}, {1}), {output_of(F32, {1, 1, 3}), absent_output()},
                    TGL_ERROR_PARAMS_SIZE, {"struct_size", "18", "16 or 20"});
    s = ss(0);
    std::vector<InputArg> bad = scan_in({1, 2}, {1, 2, 3}, {1});
    bad[0] = in(F32, {1, 3}, three);
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, bad, {output_of(F32, {1, 1, 3}), absent_output()}, TGL_ERROR_SHAPE_MISMATCH,
                    {"inputs[0] (u)", "(B, D, L)", "(1, 3)"});
    bad = scan_in({1, 2}, {1, 2, 3}, {1});
    bad[4].dtype = F16;
    bad[4].storage = Storage::from_values(F16, six);
    expect_rejected(TGL_OP_SELECTIVE_SCAN, &s, bad, {output_of(F32, {1, 1, 3}), absent_output()}, TGL_ERROR_DTYPE_MISMATCH,
                    {"inputs[4] (Cm)", "f16"});
}

}  // namespace
}  // namespace conf
