// Differential tests (GLES vs CPU) of the Sequence family on seeded random inputs:
//   rope / rope_backward: both layouts, partial rotation, every scaling, positions (S), (B, 1, S)
//     and broadcast, permuted / stepped / negative-stride / padded views, misaligned f16, empty x;
//     positions in [-4096, 4096], and one case near 1e5. The 1.3 options (freq_factors, the cos/sin
//     cache, multi-section rope) alone and together on the same shapes; a cache of 110,000 rows
//     read near 1e5 (its values as given: tol::kTranscendental); empty x with each.
//   fft / ifft: n = 1 .. 2^16 (shared-memory and global Stockham paths) and non-powers of two
//     (direct DFT), batches, strided views, f16, empty rows, 70,000 rows (more than 65,535
//     workgroups).
//   sample: thousands of rows over temperatures, top_k, top_p, seeds and offsets, logits with ties
//     and -inf, f32 and f16, strided logits and tokens, V up to 50,000, 70,000 rows: exact.
//   selective_scan: every combination of the optional operands, softplus, a carried state (state_in), N from 1 to 200 (more
//     states than a workgroup has invocations), L up to 1000, strided views, f16.
// Tolerances (NMSE):
//   rope: the GPU's angle is f32 (theta_i from an f32 exp, the product pos * theta_i rounded), so
//     its error is a few ulp of the angle: about 1e-7 |a| rad. With |pos| <= 4096 that is <= 5e-4
//     rad, NMSE <= 2.5e-7 in the worst element; tol 1e-6 (tol::kTranscendental). Positions near
//     1e5: 1.2e-2 rad at worst, tol 4e-4.
//   fft: f32 butterflies with ~1-ulp twiddles, error ~ eps * sqrt(log2 n) relative: tol 1e-10
//     (powers of two); the direct DFT sums n terms in f32: tol 1e-9.
//   selective_scan: an f32 recurrence with exp on the GPU, error growing with L like a running
//     sum: tol::kReduction for L <= 64, tol::kMatmul beyond.
//   f16 outputs: one f16 rounding on each side, NMSE <= 2^-20 (as norm_diff.cpp argues); FFT f16
//     sums of n terms round once too, but their spread grows: 4 * 2^-20.
#include "diff.h"

namespace diff {
namespace {

class SequenceDiff : public SeededTest {};

const double kTolF16 = 1.0 / (1 << 20);

InputArg rand_input(tgl_dtype dt, const Shape& shape, Rng& rng, double lo, double hi, bool layouts = true) {
    InputArg a;
    a.dtype = dt;
    a.view = layouts ? random_view(shape, dt, rng, true) : contiguous(shape);
    a.storage = random_storage(dt, a.view.storage, rng, dt == I32 ? int_values(dt, int64_t(lo), int64_t(hi)) : float_values(dt, lo, hi));
    return a;
}

// ----- rope -----------------------------------------------------------------------------------------

tgl_rope_params random_rope(Rng& rng, int64_t D) {
    tgl_rope_params p{sizeof(tgl_rope_params), uint32_t(rng.integer(0, 1)), 0, uint32_t(rng.integer(0, 3)),
                      float(rng.pick(std::vector<double>{10000.0, 500000.0, 1e6})), float(rng.uniform(1.0, 8.0)),
                      uint32_t(rng.pick(std::vector<int64_t>{2048, 4096, 8192})), 32.0f, 1.0f,
                      float(rng.pick(std::vector<double>{0.0, 1.0, 0.5})), float(rng.uniform(0.5, 1.5)), 0, 0, {}};
    int64_t n_rot = D;
    if (rng.chance(0.4)) n_rot = 2 * rng.integer(1, D / 2);
    if (p.scaling == TGL_ROPE_SCALING_NTK_AWARE && n_rot <= 2) n_rot = D;
    if (p.scaling == TGL_ROPE_SCALING_NTK_AWARE && n_rot <= 2) p.scaling = TGL_ROPE_SCALING_LINEAR;
    p.n_rot = n_rot == D && rng.chance(0.5) ? 0u : uint32_t(n_rot);
    return p;
}

TEST_F(SequenceDiff, Rope) {
    const std::vector<Shape> shapes = {{1, 2}, {3, 8}, {2, 3, 5, 16}, {1, 4, 7, 64}, {2, 1, 13, 6}, {5, 1, 10}, {2, 2, 3, 128}};
    for (tgl_dtype dt : {F32, F16})
        for (const Shape& s : shapes)
            for (tgl_op op : {TGL_OP_ROPE, TGL_OP_ROPE_BACKWARD}) {
                const int64_t D = s.back();
                tgl_rope_params p = random_rope(rng_, D);
                // positions: (S), (B, 1, S) (per batch) or the full x.shape[:-1].
                Shape lead(s.begin(), s.end() - 1), ps = {lead.back()};
                if (lead.size() >= 3 && rng_.chance(0.4)) ps = {lead[0], 1, lead.back()};
                else if (rng_.chance(0.3)) ps = lead;
                check_op(op, param_bytes(p), {rand_input(dt, s, rng_, -2, 2), rand_input(I32, ps, rng_, -4096, 4096)},
                         {rand_output(dt, s, rng_)}, {dt == F16 ? kTolF16 : tol::kTranscendental},
                         std::string(op == TGL_OP_ROPE ? "rope " : "rope_backward ") + dtype_name(dt) + " " + shape_name(s) +
                             " positions " + shape_name(ps) + " mode " + std::to_string(p.mode) + " n_rot " +
                             std::to_string(p.n_rot) + " scaling " + std::to_string(p.scaling));
            }
    // Positions near 1e5 (f32 angles there carry ~1e-2 rad of error, see above).
    tgl_rope_params p{sizeof(tgl_rope_params), TGL_ROPE_NEOX, 0, TGL_ROPE_SCALING_NONE, 10000.0f, 1.0f, 0, 32.0f, 1.0f, 1.0f, 1.0f, 0, 0, {}};
    check_op(TGL_OP_ROPE, param_bytes(p), {rand_input(F32, {2, 40, 64}, rng_, -2, 2), rand_input(I32, {40}, rng_, 90000, 110000)},
             {rand_output(F32, {2, 40, 64}, rng_)}, {4e-4}, "rope f32 positions near 1e5");
    // Empty x.
    check_op(TGL_OP_ROPE, {}, {rand_input(F32, {0, 3, 8}, rng_, -1, 1), rand_input(I32, {3}, rng_, 0, 10)},
             {rand_output(F32, {0, 3, 8}, rng_)}, {0}, "rope empty");
}

// rope's 1.3 options: freq_factors, the cos/sin cache, multi-section rope, alone and together, on
// the shapes above with both layouts, partial n_rot, every scaling (NONE with the cache), strided
// views of every operand, broadcast positions, f16.
TEST_F(SequenceDiff, RopeOptions) {
    const std::vector<Shape> shapes = {{1, 2}, {3, 8}, {2, 3, 5, 16}, {1, 4, 7, 64}, {2, 1, 13, 6}, {5, 1, 10}, {2, 2, 3, 128}};
    enum Option { kFf, kCache, kMulti, kMultiFf, kMultiCache, kOptions };
    const char* const names[] = {"freq_factors", "cache", "multi", "multi+freq_factors", "multi+cache"};
    for (tgl_dtype dt : {F32, F16})
        for (const Shape& s : shapes)
            for (int option = 0; option < kOptions; ++option) {
                if (dt == F16 && s.size() == 4 && s[3] != 128) continue;  // f16 on fewer shapes: run time
                const tgl_op op = rng_.chance(0.5) ? TGL_OP_ROPE : TGL_OP_ROPE_BACKWARD;
                const int64_t D = s.back();
                tgl_rope_params p = random_rope(rng_, D);
                const int64_t n_rot = p.n_rot ? p.n_rot : D, half = n_rot / 2;
                const bool ff = option == kFf || option == kMultiFf, cache = option == kCache || option == kMultiCache;
                const bool multi = option >= kMulti;
                int64_t streams = 1;
                if (multi) {
                    p.multi = uint32_t(rng_.integer(TGL_ROPE_MULTI_SECTIONS, TGL_ROPE_MULTI_VISION));
                    for (uint32_t& sec : p.sections) sec = uint32_t(rng_.integer(0, half));
                    if (p.sections[0] + p.sections[1] + p.sections[2] + p.sections[3] == 0) p.sections[0] = 1;
                    streams = 4;
                    if (p.multi != TGL_ROPE_MULTI_INTERLEAVED && rng_.chance(0.3)) {  // no stream e: 3 streams
                        p.sections[3] = 0;
                        if (p.sections[0] + p.sections[1] + p.sections[2] == 0) p.sections[1] = 1;
                        streams = 3;
                    }
                    if (p.multi == TGL_ROPE_MULTI_VISION && p.scaling == TGL_ROPE_SCALING_NTK_AWARE && half <= 2)
                        p.scaling = TGL_ROPE_SCALING_LINEAR;
                }
                if (cache) p.scaling = TGL_ROPE_SCALING_NONE;
                Shape lead(s.begin(), s.end() - 1), ps = {lead.back()};
                if (lead.size() >= 3 && rng_.chance(0.4)) ps = {lead[0], 1, lead.back()};
                else if (rng_.chance(0.3)) ps = lead;
                if (multi) ps.push_back(streams);
                const int64_t max_positions = rng_.integer(1, 300);
                std::vector<InputArg> ins = {rand_input(dt, s, rng_, -2, 2),
                                             cache ? rand_input(I32, ps, rng_, 0, max_positions - 1) : rand_input(I32, ps, rng_, -4096, 4096),
                                             ff ? rand_input(F32, {half}, rng_, 1, 8) : absent_input(), absent_input(), absent_input()};
                if (cache) {
                    ins[3] = rand_input(dt, {max_positions, half}, rng_, -1.5, 1.5);
                    ins[4] = rand_input(dt, {max_positions, half}, rng_, -1.5, 1.5);
                }
                check_op(op, param_bytes(p), ins, {rand_output(dt, s, rng_)}, {dt == F16 ? kTolF16 : tol::kTranscendental},
                         std::string(op == TGL_OP_ROPE ? "rope " : "rope_backward ") + names[option] + " " + dtype_name(dt) + " " +
                             shape_name(s) + " positions " + shape_name(ps) + " mode " + std::to_string(p.mode) + " n_rot " +
                             std::to_string(p.n_rot) + " scaling " + std::to_string(p.scaling) + " multi " + std::to_string(p.multi) +
                             " sections " + shape_name({p.sections[0], p.sections[1], p.sections[2], p.sections[3]}));
            }
    // Positions near 1e5 with a cache of 110,000 rows: the cached values are used as given.
    tgl_rope_params p{sizeof(tgl_rope_params), TGL_ROPE_NEOX, 4, TGL_ROPE_SCALING_NONE, 10000.0f, 1.0f, 0, 32.0f, 1.0f, 1.0f, 1.0f, 0, 0, {}};
    check_op(TGL_OP_ROPE, param_bytes(p),
             {rand_input(F32, {2, 40, 16}, rng_, -2, 2), rand_input(I32, {40}, rng_, 90000, 109999), absent_input(),
              rand_input(F32, {110000, 2}, rng_, -1, 1, false), rand_input(F32, {110000, 2}, rng_, -1, 1, false)},
             {rand_output(F32, {2, 40, 16}, rng_)}, {tol::kTranscendental}, "rope f32 cache of 110,000 positions near 1e5");
    // freq_factors and multi-section rope near 1e5 (the f32 angle's error, as the plain case).
    p.n_rot = 12;
    p.multi = TGL_ROPE_MULTI_SECTIONS;
    for (int k = 0; k < 3; ++k) p.sections[k] = 2;
    check_op(TGL_OP_ROPE, param_bytes(p),
             {rand_input(F32, {2, 40, 16}, rng_, -2, 2), rand_input(I32, {40, 3}, rng_, 90000, 110000), rand_input(F32, {6}, rng_, 1, 4),
              absent_input(), absent_input()},
             {rand_output(F32, {2, 40, 16}, rng_)}, {4e-4}, "rope f32 multi-section with freq_factors near 1e5");
    // Empty x with each option.
    p = tgl_rope_params{sizeof(tgl_rope_params), TGL_ROPE_NORMAL, 0, TGL_ROPE_SCALING_NONE, 10000.0f, 1.0f, 0, 32.0f, 1.0f, 1.0f, 1.0f, 0, 0, {}};
    check_op(TGL_OP_ROPE, param_bytes(p),
             {rand_input(F32, {0, 3, 8}, rng_, -1, 1), rand_input(I32, {3}, rng_, 0, 4), rand_input(F32, {4}, rng_, 1, 2), absent_input(), absent_input()},
             {rand_output(F32, {0, 3, 8}, rng_)}, {0}, "rope empty with freq_factors");
    check_op(TGL_OP_ROPE_BACKWARD, param_bytes(p),
             {rand_input(F32, {0, 3, 8}, rng_, -1, 1), rand_input(I32, {3}, rng_, 0, 4), absent_input(), rand_input(F32, {5, 4}, rng_, -1, 1),
              rand_input(F32, {5, 4}, rng_, -1, 1)},
             {rand_output(F32, {0, 3, 8}, rng_)}, {0}, "rope_backward empty with a cache");
}

// ----- fft ------------------------------------------------------------------------------------------

TEST_F(SequenceDiff, Fft) {
    struct C { Shape s; };
    const std::vector<Shape> shapes = {{1, 2},     {2, 2},      {3, 4, 2},   {5, 8, 2},   {2, 3, 16, 2}, {7, 64, 2},
                                       {3, 256, 2}, {2, 1024, 2}, {2, 2048, 2}, {1, 4096, 2}, {2, 16384, 2}, {65536, 2},
                                       {3, 3, 2},   {2, 5, 2},    {4, 12, 2},  {1, 97, 2},  {2, 1000, 2}};
    for (const Shape& s : shapes)
        for (tgl_op op : {TGL_OP_FFT, TGL_OP_IFFT}) {
            const int64_t n = s[s.size() - 2];
            const bool pow2 = (n & (n - 1)) == 0;
            const bool big = n >= 16384;
            check_op(op, {}, {rand_input(F32, s, rng_, -1, 1, !big || rng_.chance(0.5))}, {rand_output(F32, s, rng_, !big)},
                     {pow2 ? 1e-10 : 1e-9}, std::string(op == TGL_OP_FFT ? "fft " : "ifft ") + shape_name(s));
        }
    for (const Shape& s : std::vector<Shape>{{3, 8, 2}, {2, 128, 2}, {1, 8192, 2}, {2, 6, 2}})
        check_op(TGL_OP_FFT, {}, {rand_input(F16, s, rng_, -1, 1)}, {rand_output(F16, s, rng_)}, {4 * kTolF16},
                 "fft f16 " + shape_name(s));
    check_op(TGL_OP_IFFT, {}, {rand_input(F32, {0, 8, 2}, rng_, -1, 1)}, {rand_output(F32, {0, 8, 2}, rng_)}, {0}, "ifft empty");
    // 70,000 rows of n = 2: a workgroup per row, more than 65,535.
    check_op(TGL_OP_FFT, {}, {rand_input(F32, {70000, 2, 2}, rng_, -1, 1, false)}, {output_of(F32, {70000, 2, 2})}, {1e-10},
             "fft of 70,000 rows");
}

// ----- selective scan -------------------------------------------------------------------------------

TEST_F(SequenceDiff, SelectiveScan) {
    struct Dims { int64_t B, D, L, N; };
    const std::vector<Dims> dims = {{1, 1, 1, 1}, {2, 3, 5, 2}, {1, 4, 17, 16}, {3, 2, 64, 3}, {2, 5, 9, 200}, {1, 3, 1000, 16}, {2, 7, 0, 4}};
    for (tgl_dtype dt : {F32, F16})
        for (const Dims& d : dims) {
            const bool softplus = rng_.chance(0.5);
            tgl_selective_scan_params p{sizeof(tgl_selective_scan_params), softplus ? 1u : 0u, {0, 0}, 0u};
            const Shape bdl = {d.B, d.D, d.L}, bnl = {d.B, d.N, d.L};
            std::vector<InputArg> ins = {rand_input(dt, bdl, rng_, -1, 1),
                                         softplus ? rand_input(dt, bdl, rng_, -3, 1) : rand_input(dt, bdl, rng_, 0.001, 0.2),
                                         rand_input(dt, {d.D, d.N}, rng_, -4, -0.05),
                                         rand_input(dt, bnl, rng_, -1, 1),
                                         rand_input(dt, bnl, rng_, -1, 1),
                                         rng_.chance(0.6) ? rand_input(dt, {d.D}, rng_, -1, 1) : absent_input(),
                                         rng_.chance(0.6) ? rand_input(dt, bdl, rng_, -3, 3) : absent_input(),
                                         rng_.chance(0.5) ? rand_input(dt, {d.D}, rng_, softplus ? -0.5 : 0.0, 0.1) : absent_input()};  // dt > 0
            std::vector<OutputArg> outs = {rand_output(dt, bdl, rng_),
                                           rng_.chance(0.7) ? rand_output(dt, {d.B, d.D, d.N}, rng_) : absent_output()};
            if (!outs[1].absent && rng_.chance(0.5)) {  // ABI 1.3: a carried initial state in last_state
                p.state_in = 1;
                outs[1].init.resize(size_t(d.B * d.D * d.N));
                for (double& v : outs[1].init) v = double(float(rng_.uniform(-1, 1)));
            }
            const double tol = dt == F16 ? kTolF16 : (d.L <= 64 ? tol::kReduction : tol::kMatmul);
            check_op(TGL_OP_SELECTIVE_SCAN, param_bytes(p), ins, outs, {tol, tol},
                     "selective_scan " + dtype_name(dt) + " B D L N " + shape_name({d.B, d.D, d.L, d.N}) +
                         (softplus ? " softplus" : "") + (p.state_in ? " state_in" : ""));
        }
}

// A sequence of 70,000 steps (N 16): one GLES invocation would walk it in 4,375 blocks of 18 loop
// passes, past llvmpipe's 65,535 (TGL_OK over a wrong y before, then a refusal); where loops are
// limited it now runs in chunks of about 29k steps, the states carried between dispatches.
TEST_F(SequenceDiff, SelectiveScanPastTheLoopBudget) {
    const int64_t L = 70000, N = 16;
    tgl_selective_scan_params p{sizeof(tgl_selective_scan_params), 0u, {0, 0}, 0u};
    MultiSpec s;
    s.op = TGL_OP_SELECTIVE_SCAN;
    s.params = param_bytes(p);
    s.inputs = {rand_input(F32, {1, 1, L}, rng_, -1, 1), rand_input(F32, {1, 1, L}, rng_, 0.001, 0.2), rand_input(F32, {1, N}, rng_, -4, -0.05),
                rand_input(F32, {1, N, L}, rng_, -1, 1), rand_input(F32, {1, N, L}, rng_, -1, 1), absent_input(), absent_input(), absent_input()};
    s.outputs = {output_of(F32, {1, 1, L}), output_of(F32, {1, 1, N})};
    s.tolerance = {tol::kMatmul, tol::kMatmul};
    s.what = "selective_scan B D L N 1 1 70000 16";
    check(s);
}

// The chunks of a long sequence come out bit for bit as one walk: the scan of 5 x 12,000 steps
// (chunks of 15,408 steps where loops are limited) against five scans of 12,000 steps
// (each within one invocation's budget) chained through last_state (state_in; f32, so the carried
// state is exact). B 2, D 3, N 20 (32 lanes a channel, those past N idle), with
// Dskip, z, delta_bias and softplus, and an initial state.
TEST_F(SequenceDiff, SelectiveScanChunksMatchOneWalkBitForBit) {
    const int64_t B = 2, D = 3, N = 20, part = 12000, parts = 5, L = part * parts;
    // Inputs (B, X, L) for X = D or N: values of the whole sequence, and of one part along L.
    struct Seq {
        int64_t b, x;
        std::vector<double> v;
        InputArg whole() const { return input_values(F32, {b, x, int64_t(v.size()) / (b * x)}, v); }
        InputArg slice(int64_t k, int64_t len) const {
            const int64_t total = int64_t(v.size()) / (b * x);
            std::vector<double> out;
            for (int64_t r = 0; r < b * x; ++r) out.insert(out.end(), v.begin() + r * total + k * len, v.begin() + r * total + (k + 1) * len);
            return input_values(F32, {b, x, len}, out);
        }
    };
    auto seq = [&](int64_t x, double lo, double hi) { return Seq{B, x, random_values(B * x * L, rng_, float_values(F32, lo, hi))}; };
    const Seq u = seq(D, -1, 1), delta = seq(D, -3, 1), Bm = seq(N, -1, 1), Cm = seq(N, -1, 1), z = seq(D, -3, 3);
    const InputArg A = input_values(F32, {D, N}, random_values(D * N, rng_, float_values(F32, -4, -0.05)));
    const InputArg dskip = input_values(F32, {D}, random_values(D, rng_, float_values(F32, -1, 1)));
    const InputArg bias = input_values(F32, {D}, random_values(D, rng_, float_values(F32, -0.5, 0.1)));
    tgl_selective_scan_params p{sizeof(tgl_selective_scan_params), 1u, {0, 0}, 1u};
    OutputArg state = output_of(F32, {B, D, N});
    state.init = random_values(B * D * N, rng_, float_values(F32, -1, 1));
    Device& dev = shared_device(Role::Subject);
    const std::vector<std::vector<double>> whole =
        run_op_values(dev, TGL_OP_SELECTIVE_SCAN, &p, {u.whole(), delta.whole(), A, Bm.whole(), Cm.whole(), dskip, z.whole(), bias},
                      {output_of(F32, {B, D, L}), state});
    std::vector<double> y(size_t(B * D * L));
    for (int64_t k = 0; k < parts; ++k) {
        const std::vector<std::vector<double>> r = run_op_values(
            dev, TGL_OP_SELECTIVE_SCAN, &p,
            {u.slice(k, part), delta.slice(k, part), A, Bm.slice(k, part), Cm.slice(k, part), dskip, z.slice(k, part), bias},
            {output_of(F32, {B, D, part}), state});
        for (int64_t row = 0; row < B * D; ++row)
            std::copy(r[0].begin() + row * part, r[0].begin() + (row + 1) * part, y.begin() + row * L + k * part);
        state.init = r[1];
    }
    EXPECT_TRUE(compare(F32, whole[0], y, {B, D, L}, 0, CompareMode::ExactBits, "y: one call vs 5 chained calls"));
    EXPECT_TRUE(compare(F32, whole[1], state.init, {B, D, N}, 0, CompareMode::ExactBits, "last_state: one call vs 5 chained calls"));
}

// ----- sample ---------------------------------------------------------------------------------------

// Logits with ties and -inf now and then; integer-valued ones tie often.
InputArg logits_input(tgl_dtype dt, const Shape& s, Rng& rng, bool layouts) {
    InputArg a = rand_input(dt, s, rng, -6, 6, layouts);
    const bool ints = rng.chance(0.3);
    for (int64_t i = 0; i < a.storage.size(); ++i) {
        if (ints) a.storage.set_value(i, double(rng.integer(-3, 3)));
        if (rng.chance(0.02)) a.storage.set_value(i, -std::numeric_limits<double>::infinity());
    }
    return a;
}

TEST_F(SequenceDiff, SampleExact) {
    // Thousands of rows over many parameter sets: the tokens must agree exactly.
    for (tgl_dtype dt : {F32, F16})
        for (int rep = 0; rep < 12; ++rep) {
            const int64_t B = rng_.integer(1, 400), V = rng_.pick(std::vector<int64_t>{1, 2, 7, 32, 100, 257, 1000});
            const float T = float(rng_.pick(std::vector<double>{0.0, 0.05, 0.7, 1.0, 1.3, 10.0}));
            const uint32_t top_k = uint32_t(rng_.pick(std::vector<int64_t>{0, 0, 1, 2, 5, 40}));
            const float top_p = float(rng_.pick(std::vector<double>{1.0, 1.0, 0.9, 0.5, 0.1, 1e-3}));
            tgl_sample_params p{sizeof(tgl_sample_params), top_k, T, top_p, uint64_t(rng_.integer(0, 1 << 30)) << 20,
                                uint64_t(rng_.integer(0, 1000000))};
            OutputArg tok = rand_output(I32, {B}, rng_);
            check_op(TGL_OP_SAMPLE, param_bytes(p), {logits_input(dt, {B, V}, rng_, true)}, {tok}, {0},
                     "sample " + dtype_name(dt) + " " + shape_name({B, V}) + " T " + std::to_string(T) + " top_k " +
                         std::to_string(top_k) + " top_p " + std::to_string(top_p));
        }
    // A large vocabulary, and 70,000 rows (a workgroup each: more than 65,535).
    tgl_sample_params p{sizeof(tgl_sample_params), 50, 0.8f, 0.95f, 1234, 0};
    check_op(TGL_OP_SAMPLE, param_bytes(p), {logits_input(F32, {3, 50000}, rng_, false)}, {output_of(I32, {3})}, {0},
             "sample V 50000");
    // A vocabulary of 2^17 (Llama 3's is 128,256), with and without top_k / top_p.
    for (const tgl_sample_params& q : {tgl_sample_params{sizeof(tgl_sample_params), 40, 0.9f, 0.9f, 77, 3},
                                       tgl_sample_params{sizeof(tgl_sample_params), 0, 1.0f, 1.0f, 5, 11}})
        check_op(TGL_OP_SAMPLE, param_bytes(q), {logits_input(F32, {2, 131072}, rng_, false)}, {output_of(I32, {2})}, {0},
                 "sample V 131072 top_k " + std::to_string(q.top_k));
    p = tgl_sample_params{sizeof(tgl_sample_params), 0, 1.0f, 1.0f, 99, 7};
    check_op(TGL_OP_SAMPLE, param_bytes(p), {logits_input(F32, {70000, 3}, rng_, false)}, {output_of(I32, {70000})}, {0},
             "sample 70,000 rows");
    check_op(TGL_OP_SAMPLE, param_bytes(p), {logits_input(F32, {0, 3}, rng_, false)}, {output_of(I32, {0})}, {0},
             "sample empty");
}

// The split plan of long rows (sample_split.comp: many workgroups per row, radix histograms in
// scratch), forced at small vocabularies by TGL_TUNE_SAMPLE=split1 (chunks of 256 logits: the
// workgroup size or two chunks of one): chunk edges, prime sizes, top_k 1 / V - 1 / V / past V,
// top_p near 0 and 1, ties, -inf, NaN (a key of -inf), rows of all -inf or with +inf, and rows in
// several scratch groups. The tokens must agree exactly with the CPU reference.
void check_sample(Device& dev, const tgl_sample_params& p, InputArg logits, int64_t B, const std::string& what) {
    MultiSpec s;
    s.op = TGL_OP_SAMPLE;
    s.params = param_bytes(p);
    s.inputs = {std::move(logits)};
    s.outputs = {output_of(I32, {B})};
    s.mode = {CompareMode::Exact};
    s.what = what + " T " + std::to_string(p.temperature) + " top_k " + std::to_string(p.top_k) + " top_p " +
             std::to_string(p.top_p) + " seed " + std::to_string(p.seed);
    check(s, &dev);
}

TEST_F(SequenceDiff, SampleSplit) {
    Device& split = subject_device_with("TGL_TUNE_SAMPLE", "split1_chunk256");
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    for (int64_t V : {1, 2, 255, 256, 257, 509, 512, 513, 1021, 4099}) {
        const int64_t B = rng_.integer(1, 3);
        const tgl_dtype dt = rng_.chance(0.5) ? F32 : F16;
        for (uint32_t top_k : {0u, 1u, 2u, uint32_t(std::max<int64_t>(V - 1, 0)), uint32_t(V), uint32_t(V + 5), 40u}) {
            const float T = float(rng_.pick(std::vector<double>{0.0, 0.05, 0.7, 1.0, 10.0}));
            const float top_p = float(rng_.pick(std::vector<double>{1.0, 0.999999, 0.99, 0.9, 0.5, 1e-3, 1e-6}));
            tgl_sample_params p{sizeof(tgl_sample_params), top_k, T, top_p, uint64_t(rng_.integer(0, 1 << 30)),
                                uint64_t(rng_.integer(0, 1000000))};
            InputArg x = logits_input(dt, {B, V}, rng_, true);
            if (rng_.chance(0.3)) x.storage.set_value(rng_.integer(0, x.storage.size() - 1), nan);
            check_sample(split, p, std::move(x), B, "split sample " + dtype_name(dt) + " " + shape_name({B, V}));
        }
    }
    // Rows of all -inf (the first index), with +inf (its first index), with NaN (never drawn), and
    // a row of equal logits (every weight 2^24: ties at every digit).
    const int64_t V = 700;
    std::vector<double> special(size_t(4 * V), -inf);
    for (int64_t j = 0; j < V; ++j) {
        special[size_t(V + j)] = j % 3 ? 1.0 : nan;
        special[size_t(2 * V + j)] = j == 333 || j == 600 ? inf : 0.5;
        special[size_t(3 * V + j)] = 2.0;
    }
    for (const tgl_sample_params& p : {tgl_sample_params{sizeof(tgl_sample_params), 0, 1.0f, 1.0f, 3, 0},
                                       tgl_sample_params{sizeof(tgl_sample_params), 5, 0.7f, 0.9f, 4, 1},
                                       tgl_sample_params{sizeof(tgl_sample_params), 0, 0.0f, 1.0f, 5, 2}})
        check_sample(split, p, input_values(F32, {4, V}, special), 4, "split sample of special rows");
    // More chunks than a row may have (512 of 256 logits: the chunk grows), and more rows than one
    // scratch group holds (4 MiB of scratch rows of about 12 KiB each).
    tgl_sample_params p{sizeof(tgl_sample_params), 50, 0.8f, 0.95f, 1234, 77};
    check_sample(split, p, logits_input(F32, {1, 140001}, rng_, false), 1, "split sample V 140001");
    check_sample(split, p, logits_input(F16, {400, 300}, rng_, true), 400, "split sample of 400 rows");
    // 64 KiB windows: the scratch rows go in groups of 5 (the default plan, rows of 8192 f16 logits).
    Device& windowed = subject_device_with("TGL_GLES_TEST_FAULT", "max_window=65536");
    check_sample(windowed, p, logits_input(F16, {12, 8192}, rng_, false), 12, "split sample, 64 KiB windows");
    // 4 KiB windows cannot hold a row's scratch: the one-workgroup kernel runs (its results must agree).
    Device& small = subject_device_with("TGL_GLES_TEST_FAULT", "max_window=4096");
    check_sample(small, p, logits_input(F32, {6, 900}, rng_, false), 6, "sample, 4 KiB windows");
}

}  // namespace
}  // namespace diff
