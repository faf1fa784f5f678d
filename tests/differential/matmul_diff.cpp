// The matmul family: GLES against the CPU reference.
//
// Diff/Matmul (f32 matmul): M, N, K over {1, 2, 7, 31, 64, 127, 257} (a sampled set in which every
// size appears in every role), transposes, batches with broadcast batch dims, alpha/beta,
// non-contiguous operands and outputs, K = 0, empty outputs, special values.
// MatmulFamilyDiff: the rest of the family, below.
#include "diff.h"

#include <array>
#include <cstdio>

namespace diff {
namespace {

struct MM {
    Shape a_batch, b_batch;  // batch dims of A and B (broadcast NumPy-style)
    int64_t M = 1, N = 1, K = 1;
    bool ta = false, tb = false;
    float alpha = 1.0f, beta = 0.0f;
    Kind a_kind = Kind::Contiguous, b_kind = Kind::Contiguous, c_kind = Kind::Contiguous;
    bool c_nan = false;  // beta == 0: start C as NaN (must not leak)
    int a_front = 0, b_front = 0;  // > 0: contiguous with this many storage elements in front
};

View padded_view(const Shape& shape, int front, Kind k, Rng& rng) {
    if (front == 0) return view_of(shape, k, rng, true);
    Layout l;
    l.name = "offset " + std::to_string(front);
    l.pad_front = front;
    l.pad_back = 3;
    return make_view(shape, l);
}

Spec matmul_spec(const MM& m, Rng& rng, const Gen& ga = uniform(-1, 1), const Gen& gb = uniform(-1, 1)) {
    Spec s;
    s.op = TGL_OP_MATMUL;
    tgl_matmul_params p{};
    p.struct_size = sizeof p;
    p.transpose_a = m.ta;
    p.transpose_b = m.tb;
    p.alpha = m.alpha;
    p.beta = m.beta;
    s.params = param_bytes(p);
    Shape as = m.a_batch, bs = m.b_batch;
    if (m.ta) { as.push_back(m.K); as.push_back(m.M); } else { as.push_back(m.M); as.push_back(m.K); }
    if (m.tb) { bs.push_back(m.N); bs.push_back(m.K); } else { bs.push_back(m.K); bs.push_back(m.N); }
    Shape cs = broadcast_shapes(m.a_batch, m.b_batch);
    cs.push_back(m.M);
    cs.push_back(m.N);
    s.inputs.push_back(operand(padded_view(as, m.a_front, m.a_kind, rng), rng, ga));
    s.inputs.push_back(operand(padded_view(bs, m.b_front, m.b_kind, rng), rng, gb));
    s.out = view_of(cs, m.c_kind, rng, false);
    if (m.beta != 0.0f || m.c_nan) {
        s.out_init.resize(static_cast<size_t>(numel(cs)));
        for (auto& v : s.out_init) v = m.c_nan ? kNaN : rng.uniformf(-1, 1);
    }
    s.tolerance = tol::kMatmul;
    char buf[160];
    std::snprintf(buf, sizeof buf, "matmul M=%lld N=%lld K=%lld%s%s alpha=%g beta=%g%s", (long long)m.M, (long long)m.N,
                  (long long)m.K, m.ta ? " A^T" : "", m.tb ? " B^T" : "", double(m.alpha), double(m.beta),
                  m.c_nan ? " (C starts NaN)" : "");
    s.what = std::string(buf) + ": A " + shape_str(as) + " (" + s.inputs[0].view.layout + "), B " + shape_str(bs) + " (" +
             s.inputs[1].view.layout + ") -> C " + shape_str(cs) + " (" + kind_name(m.c_kind) + ")";
    return s;
}

std::vector<Case> matmul_cases() {
    std::vector<Case> cases;
    auto add = [&](const std::string& name, MM m) {
        cases.push_back({name, [m](Rng& r) { return matmul_spec(m, r); }});
    };
    const int64_t sizes[7] = {1, 2, 7, 31, 64, 127, 257};
    // 21 of the 343 (M, N, K): the diagonal and two shifted diagonals, so each size meets each
    // other size in each role.
    for (int i = 0; i < 7; ++i)
        for (int shift : {0, 2, 4}) {
            MM m;
            m.M = sizes[i];
            m.N = sizes[(i + shift) % 7];
            m.K = sizes[(i + 2 * shift + (shift ? 1 : 0)) % 7];
            add("M" + std::to_string(m.M) + "_N" + std::to_string(m.N) + "_K" + std::to_string(m.K), m);
        }
    // Transposes.
    for (auto dims : {std::array<int64_t, 3>{31, 64, 127}, std::array<int64_t, 3>{7, 257, 2}})
        for (int t = 1; t < 4; ++t) {
            MM m;
            m.M = dims[0];
            m.N = dims[1];
            m.K = dims[2];
            m.ta = t & 1;
            m.tb = t & 2;
            add(std::string("transpose") + (m.ta ? "_a" : "") + (m.tb ? "_b" : "") + "_M" + std::to_string(m.M), m);
        }
    // Batches, with broadcast batch dims.
    {
        MM m; m.a_batch = {3, 1}; m.b_batch = {4}; m.M = 7; m.N = 31; m.K = 64;
        add("batch_3x1_vs_4", m);
        m = MM{}; m.a_batch = {5}; m.M = 31; m.N = 7; m.K = 127;
        add("batch_5_vs_none", m);
        m = MM{}; m.a_batch = {1}; m.b_batch = {6}; m.M = 64; m.N = 2; m.K = 31;
        add("batch_1_vs_6", m);
        m = MM{}; m.a_batch = {8}; m.b_batch = {1}; m.M = 7; m.N = 7; m.K = 7; m.ta = true;
        add("batch_8_vs_1_transpose_a", m);
        m = MM{}; m.a_batch = {2, 1, 2, 1, 2, 1}; m.b_batch = {1, 2, 1, 2, 1, 2}; m.M = 7; m.N = 2; m.K = 31; m.tb = true;
        add("batch_rank8", m);
        m = MM{}; m.a_batch = {3, 1}; m.b_batch = {4}; m.M = 7; m.N = 31; m.K = 64;
        m.a_kind = Kind::Mixed; m.b_kind = Kind::Mixed; m.c_kind = Kind::Mixed;
        add("batch_mixed_layouts", m);
    }
    // alpha / beta.
    {
        MM m; m.M = 31; m.N = 64; m.K = 127; m.alpha = 0.5f; m.beta = -1.25f;
        add("alpha_beta", m);
        m.alpha = 0.0f; m.beta = 2.0f;
        add("alpha0_beta2", m);
        m = MM{}; m.M = 64; m.N = 31; m.K = 7; m.alpha = -3.0f; m.beta = 0.0f; m.c_nan = true;
        add("beta0_nan_c", m);
        m = MM{}; m.M = 7; m.N = 31; m.K = 0; m.beta = 1.5f;
        add("K0_beta", m);
        m.beta = 0.0f; m.c_nan = true;
        add("K0_beta0_nan_c", m);
        m = MM{}; m.a_batch = {3}; m.M = 0; m.N = 5; m.K = 7;
        add("M0_empty", m);
        m = MM{}; m.M = 5; m.N = 0; m.K = 7; m.beta = 1.0f;
        add("N0_empty", m);
    }
    // Non-contiguous operands and outputs.
    {
        MM m; m.M = 31; m.N = 127; m.K = 64;
        m.a_kind = Kind::Permuted; add("a_permuted", m);
        m.a_kind = Kind::Contiguous; m.b_kind = Kind::Stepped; add("b_stepped", m);
        m.b_kind = Kind::Negative; m.a_kind = Kind::Negative; add("negstrides", m);
        m = MM{}; m.M = 31; m.N = 127; m.K = 64; m.a_kind = Kind::Broadcast; add("a_stride0", m);
        m = MM{}; m.M = 31; m.N = 127; m.K = 64; m.c_kind = Kind::Stepped; m.beta = 0.5f; add("c_stepped", m);
        m.c_kind = Kind::Permuted; add("c_permuted", m);
        m.c_kind = Kind::Negative; add("c_negstride", m);
        m = MM{}; m.M = 257; m.N = 7; m.K = 31; m.a_kind = Kind::Mixed; m.b_kind = Kind::Mixed; m.c_kind = Kind::Mixed;
        m.alpha = 2.0f; m.beta = -1.0f; add("mixed", m);
    }
    // The GLES plugin's FAST tiles (A and B read as quads: 4 consecutive elements along k or along
    // the rows, offsets and other strides multiples of 4): edges around the 32/64 tiles (rows and
    // columns tile - 1, tile + 1, odd N through B^T, prime K through A^T), batches, beta; views that
    // must take the general path (offsets that are not multiples of 4, odd row strides).
    {
        const std::array<int64_t, 5> fast[] = {{65, 64, 36, 0, 0}, {63, 128, 20, 0, 0}, {128, 129, 44, 0, 1},
                                               {31, 33, 132, 0, 1}, {96, 68, 131, 1, 0}, {4, 40, 8, 0, 1}};
        for (const auto& f : fast) {
            MM m; m.M = f[0]; m.N = f[1]; m.K = f[2]; m.ta = f[3]; m.tb = f[4];
            add("quads_M" + std::to_string(m.M) + "_N" + std::to_string(m.N) + "_K" + std::to_string(m.K) + (m.ta ? "_ta" : "") + (m.tb ? "_tb" : ""), m);
        }
        MM m; m.a_batch = {3}; m.b_batch = {3}; m.M = 33; m.N = 64; m.K = 40; add("quads_batch3", m);
        m = MM{}; m.a_batch = {2, 1}; m.b_batch = {3}; m.M = 20; m.N = 36; m.K = 24; m.tb = true; add("quads_batch_broadcast", m);
        m = MM{}; m.M = 64; m.N = 64; m.K = 64; m.alpha = 0.5f; m.beta = -1.25f; add("quads_alpha_beta", m);
        m.c_kind = Kind::Stepped; add("quads_c_stepped", m);
        m = MM{}; m.M = 64; m.N = 64; m.K = 64; m.a_front = 1; add("quads_reject_a_offset1", m);
        m.a_front = 0; m.b_front = 2; add("quads_reject_b_offset2", m);
        m.b_front = 4; add("quads_b_offset4", m);
        m = MM{}; m.M = 64; m.N = 64; m.K = 63; m.tb = true; add("quads_reject_b_odd_rows", m);
        m = MM{}; m.M = 40; m.N = 40; m.K = 40; m.a_kind = Kind::Permuted; m.b_kind = Kind::Permuted; add("quads_permuted", m);
    }
    // Split-K (few tiles, long K: partials and a reduce pass), FAST and general tiles.
    {
        MM m; m.M = 64; m.N = 64; m.K = 2048; add("splitk_quads_K2048", m);
        m = MM{}; m.M = 33; m.N = 20; m.K = 1031; m.tb = true; add("splitk_quads_K1031_tb", m);
        m = MM{}; m.M = 40; m.N = 31; m.K = 700; add("splitk_general_N31", m);
        m = MM{}; m.a_batch = {2}; m.M = 31; m.N = 24; m.K = 600; add("splitk_batch2", m);
        m = MM{}; m.M = 64; m.N = 64; m.K = 1024; m.alpha = 2.0f; m.beta = 0.5f; add("splitk_alpha_beta", m);
    }
    // The GEMV kernel (M <= 8): W n-contiguous (quads along n) and k-contiguous (B^T: quads along
    // k, lanes summed in shared memory), K ranges, batches, beta.
    {
        MM m; m.M = 1; m.N = 1000; m.K = 300; add("gemv_M1_N1000", m);
        m = MM{}; m.M = 3; m.N = 130; m.K = 517; m.tb = true; add("gemv_M3_tb", m);
        m = MM{}; m.M = 8; m.N = 64; m.K = 1024; add("gemv_M8_K1024", m);
        m = MM{}; m.M = 5; m.N = 37; m.K = 260; m.tb = true; m.alpha = 1.5f; m.beta = -0.5f; add("gemv_M5_tb_beta", m);
        m = MM{}; m.a_batch = {4}; m.M = 2; m.N = 36; m.K = 100; add("gemv_batch4", m);
        m = MM{}; m.M = 1; m.N = 64; m.K = 64; m.b_front = 1; add("gemv_reject_b_offset1", m);
    }
    // NaN and inf in A: a NaN makes its row of C NaN; an inf makes +-inf or NaN (inf - inf),
    // independent of the order of summation.
    cases.push_back({"specials_in_a", [](Rng& r) {
                         MM m; m.M = 31; m.N = 17; m.K = 64;
                         Gen g = [](Rng& q) {
                             if (q.chance(0.003)) return kNaN;
                             if (q.chance(0.003)) return q.chance(0.5) ? kInf : -kInf;
                             return q.uniformf(-1, 1);
                         };
                         return matmul_spec(m, r, g);
                     }});
    return cases;
}

class Matmul : public SeededTestWithParam<Case> {};

TEST_P(Matmul, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, Matmul, ::testing::ValuesIn(matmul_cases()), case_name);

// The GEMV kernel's shapes (TGL_TUNE_MATMUL gw, gr, gk, gu) on devices opened with each: lanes
// along k summed in shared memory (gr), A read as quads (gu a multiple of 4, K a multiple of 4) or
// element by element (gu 6, A permuted, K odd), K ranges that end inside a trip, K shorter
// than one lane's first row, M up to 8, W k-contiguous (B^T), W at an offset.
class GemvTuned : public SeededTest {};

TEST_F(GemvTuned, MatchesReference) {
    // Every shape on one device (lanes along k, A as quads two row-quads per trip); the others
    // (three row-quads per trip; one lane, A element by element) on the shapes that reach them.
    Device& d = subject_device_with("TGL_TUNE_MATMUL", "gw32_gr8_gk64_gu8");
    for (int64_t K : {1, 3, 4, 60, 300, 1031}) {
        MM m; m.M = 1; m.N = 260; m.K = K; check(matmul_spec(m, rng_), &d);
    }
    MM m; m.M = 3; m.N = 36; m.K = 517; check(matmul_spec(m, rng_), &d);
    m = MM{}; m.M = 8; m.N = 64; m.K = 1024; check(matmul_spec(m, rng_), &d);
    m = MM{}; m.M = 2; m.N = 40; m.K = 200; m.a_kind = Kind::Permuted; check(matmul_spec(m, rng_), &d);
    m = MM{}; m.M = 1; m.N = 72; m.K = 96; m.b_front = 4; check(matmul_spec(m, rng_), &d);
    m = MM{}; m.M = 5; m.N = 37; m.K = 260; m.tb = true; check(matmul_spec(m, rng_), &d);
    for (const char* tune : {"gw64_gr4_gk40_gu12", "gw16_gr1_gk20_gu6"}) {
        SCOPED_TRACE(std::string("TGL_TUNE_MATMUL=") + tune);
        Device& t = subject_device_with("TGL_TUNE_MATMUL", tune);
        for (int64_t K : {300, 1031}) {
            m = MM{}; m.M = 1; m.N = 260; m.K = K; check(matmul_spec(m, rng_), &t);
        }
    }
}

// FAST tiles with warp tiles (TGL_TUNE_MATMUL wl: each 32 invocations own a compact block), single
// and double-buffered, K steps unrolled or in rolled groups (kr), on devices opened with each: rows
// and columns past a tile edge, K not a multiple of the K step (prime through A^T), odd N through
// B^T, a batch with beta, and a long K split over workgroups (partials stored through the same
// mapping). Under the minimum limits the 128 x 128 tiles do not fit and the 32 x 32 tile takes
// their warp tiles and K groups instead.
class MatmulWarpTiles : public SeededTest {};

TEST_F(MatmulWarpTiles, MatchesReference) {
    // (The third tile takes one shape: each program compiles for a second or more on llvmpipe.)
    const std::pair<const char*, bool> tunes[] = {
        {"bm128_bn128_bk8_tm8_tn8_wl8", true}, {"bm64_bn128_bk8_tm8_tn8_wl4_kr2", true}, {"bm128_bn128_bk16_tm8_tn8_wl16_kr4_db1", false}};
    for (const auto& tune : tunes) {
        SCOPED_TRACE(std::string("TGL_TUNE_MATMUL=") + tune.first);
        Device& d = subject_device_with("TGL_TUNE_MATMUL", tune.first);
        MM m; m.M = 131; m.N = 260; m.K = 44; check(matmul_spec(m, rng_), &d);
        if (!tune.second) continue;
        m = MM{}; m.M = 132; m.N = 136; m.K = 37; m.ta = true; check(matmul_spec(m, rng_), &d);
        m = MM{}; m.M = 129; m.N = 131; m.K = 52; m.tb = true; check(matmul_spec(m, rng_), &d);
        m = MM{}; m.a_batch = {2}; m.b_batch = {2}; m.M = 70; m.N = 136; m.K = 24; m.alpha = 0.5f; m.beta = -1.25f;
        check(matmul_spec(m, rng_), &d);
        m = MM{}; m.M = 128; m.N = 128; m.K = 1500; check(matmul_spec(m, rng_), &d);
    }
}

// The FAST tiles and K splits of the shape rule (matmul_kernels.cpp, fast_candidate), each forced
// by TGL_TUNE_MATMUL on a device of its own (tiles 128 x 64 and 64 x 128, with 8 x 8 per
// invocation (128 invocations: both limits) or 8 x 4 (256: past TGL_GLES_LIMITS=minimum, where
// the device skips it); ks: K split that many ways), and the rule itself on shapes that reach its
// tiles (wave4096: a wave of 16 of its workgroups, so that small products fill one), at the
// edges: K not a multiple of the splits (prime K, a short last range), K shorter than the splits'
// steps (not split), odd and prime M and N around the tiles, batches with broadcast, transposed
// operands, alpha/beta, K = 0 with beta. With the GLES plugin as subject, its dispatch trace
// (TGL_GLES_TEST_PLAN_TRACE) must show each device's tiles (and a SPLIT_K pass where it splits);
// under minimum limits the rule's 256-invocation tiles do not fit and 32 x 32 tiles take over.
class MatmulShapesTuned : public SeededTest {};

TEST_F(MatmulShapesTuned, MatchesReference) {
    std::vector<MM> edges;
    {
        MM m; m.M = 131; m.N = 67; m.K = 1031; edges.push_back(m);
        m = MM{}; m.M = 64; m.N = 64; m.K = 5; edges.push_back(m);
        m = MM{}; m.M = 36; m.N = 20; m.K = 300; m.ta = true; m.tb = true; edges.push_back(m);
        m = MM{}; m.M = 33; m.N = 37; m.K = 517; m.tb = true; edges.push_back(m);  // B^T with odd K: the general tiles
        m = MM{}; m.a_batch = {2, 1}; m.b_batch = {3}; m.M = 40; m.N = 36; m.K = 260; edges.push_back(m);
        m = MM{}; m.M = 64; m.N = 64; m.K = 517; m.alpha = 2.0f; m.beta = -0.5f; edges.push_back(m);
        m = MM{}; m.M = 17; m.N = 9; m.K = 0; m.beta = 1.5f; edges.push_back(m);
    }
    // The rule's tiles under wave4096: 128 x 64 (N <= 64), 64 x 128 (M <= 64) and 128 x 128, three
    // tiles each, K split 4 ways (K / 256), the last range short (1100 = 3 x 280 + 260); a batch
    // of 3 with a broadcast B and B^T; a tile too few to split (K < 512).
    std::vector<MM> rule;
    {
        MM m; m.M = 300; m.N = 64; m.K = 1100; rule.push_back(m);
        m = MM{}; m.M = 64; m.N = 300; m.K = 1100; m.ta = true; rule.push_back(m);
        m = MM{}; m.M = 300; m.N = 68; m.K = 1100; m.beta = 0.75f; rule.push_back(m);
        m = MM{}; m.a_batch = {3}; m.M = 129; m.N = 64; m.K = 520; m.tb = true; rule.push_back(m);
        m = MM{}; m.M = 256; m.N = 260; m.K = 300; rule.push_back(m);
    }
    struct Forced {
        const char* tune;
        std::vector<const char*> expect;      // substrings of the trace (a matmul program's label)
        std::vector<const char*> expect_min;  // the same under TGL_GLES_LIMITS=minimum
        const std::vector<MM>* shapes;
    };
    const char* k128x64 = "BM=128 BN=64 BK=8 TM=8 TN=8";
    const Forced forced[] = {
        {"bm128_bn64_bk8_tm8_tn8_ks3", {k128x64, "SPLIT_K"}, {k128x64, "SPLIT_K"}, &edges},
        {"bm64_bn128_bk8_tm8_tn8_ks4", {"BM=64 BN=128 BK=8 TM=8 TN=8", "SPLIT_K"}, {"BM=64 BN=128 BK=8 TM=8 TN=8", "SPLIT_K"}, &edges},
        {"bm128_bn64_bk8_tm8_tn8_ks1", {k128x64}, {k128x64}, &edges},
        {"bm128_bn64_bk8_tm8_tn4_ks3", {"BM=128 BN=64 BK=8 TM=8 TN=4", "SPLIT_K"}, {"BM=32 BN=32 BK=16 TM=4 TN=4", "SPLIT_K"}, &edges},
        {"wave4096",
         {"BM=128 BN=64 BK=8 TM=8 TN=4", "BM=64 BN=128 BK=8 TM=4 TN=8", "BM=128 BN=128 BK=8 TM=8 TN=8", "SPLIT_K"},
         {"BM=32 BN=32 BK=16 TM=4 TN=4", "SPLIT_K"},
         &rule},
    };
    const char* limits = std::getenv("TGL_GLES_LIMITS");
    const bool minimum = limits && std::string(limits) == "minimum";
    for (const Forced& f : forced) {
        SCOPED_TRACE(std::string("TGL_TUNE_MATMUL=") + f.tune);
        const std::string trace = plan_trace_path("matmul_shapes");
        Device& d = subject_device_with({{"TGL_GLES_TEST_PLAN_TRACE", trace}, {"TGL_TUNE_MATMUL", f.tune}});
        for (const MM& m : *f.shapes) check(matmul_spec(m, rng_), &d);
        std::string text;
        if (!take_plan_trace(trace, &text)) continue;
        for (const char* e : minimum ? f.expect_min : f.expect)
            EXPECT_NE(text.find(e), std::string::npos) << "no matmul dispatch with '" << e << "' in the trace:\n" << text;
    }
}

// ----- the rest of the family ---------------------------------------------------------------------
// f16 matmul, linear (every activation), linear_qkv, grouped_linear, linear_int8, linear_int4 on
// seeded random inputs: odd/prime sizes and 1s, batch (leading) dims, permuted / stepped /
// negative-stride / padded input views, misaligned f16 views, non-contiguous outputs, the decode
// shape M = 1, empty tensors and K = 0, and one product of more than 65,535 workgroups.
// Tolerance (NMSE): f32 outputs tol::kMatmul (f32 sums in any order vs double). f16 outputs
// 2 * tol::kMatmul: both plugins round nearly the same value once to f16, so they differ by at
// most one f16 ulp (relative 2^-10) where the value straddles a rounding boundary (NMSE <= 2^-20
// even if every element did), on top of the f32 summation differences; bf16 likewise (2^-16).

class MatmulFamilyDiff : public SeededTest {};

double tol_of(tgl_dtype dt) { return dt == F32 ? tol::kMatmul : 2 * tol::kMatmul; }

InputArg rand_input(tgl_dtype dt, const Shape& shape, Rng& rng, const ValueGen& gen) {
    InputArg a;
    a.dtype = dt;
    a.view = random_view(shape, dt, rng, false);
    a.storage = random_storage(dt, a.view.storage, rng, gen);
    return a;
}
InputArg rand_float(tgl_dtype dt, const Shape& shape, Rng& rng, double lo = -1, double hi = 1) {
    return rand_input(dt, shape, rng, float_values(dt, lo, hi));
}
InputArg contig_float(tgl_dtype dt, const Shape& shape, Rng& rng) {
    InputArg a;
    a.dtype = dt;
    a.view = contiguous(shape);
    a.storage = random_storage(dt, a.view.storage, rng, float_values(dt, -1, 1));
    return a;
}
Shape with_last(Shape s, int64_t n) {
    s.back() = n;
    return s;
}

void run_case(tgl_op op, const std::vector<uint8_t>& params, std::vector<InputArg> ins, std::vector<OutputArg> outs, tgl_dtype dt,
              const std::string& what) {
    const size_t n_out = outs.size();
    check_op(op, params, std::move(ins), std::move(outs), std::vector<double>(n_out, tol_of(dt)), what);
}

// (M, K, N) with primes, 1s, the decode shape M = 1 and sizes around the tiles.
const std::vector<std::array<int64_t, 3>>& sizes() {
    static const std::vector<std::array<int64_t, 3>> v = {{1, 1, 1}, {7, 13, 5}, {1, 64, 129}, {3, 31, 37},
                                                          {33, 17, 65}, {130, 40, 3}, {2, 96, 71}};
    return v;
}

std::string mkn(const std::array<int64_t, 3>& s) {
    return "M " + std::to_string(s[0]) + " K " + std::to_string(s[1]) + " N " + std::to_string(s[2]);
}

TEST_F(MatmulFamilyDiff, MatmulF16) {
    for (const auto& s : sizes())
        for (int variant = 0; variant < 2; ++variant) {
            const bool ta = rng_.chance(0.5), tb = rng_.chance(0.5);
            const float beta = variant ? float(rng_.uniform(-1, 1)) : 0.0f;
            tgl_matmul_params p{sizeof(tgl_matmul_params), ta, tb, float(rng_.uniform(0.5, 2)), beta, 0};
            Shape batch = variant ? Shape{2} : Shape{};
            Shape as = batch, bs = variant ? Shape{} : Shape{};
            if (ta) { as.push_back(s[1]); as.push_back(s[0]); } else { as.push_back(s[0]); as.push_back(s[1]); }
            if (tb) { bs.push_back(s[2]); bs.push_back(s[1]); } else { bs.push_back(s[1]); bs.push_back(s[2]); }
            Shape cs = batch;
            cs.push_back(s[0]);
            cs.push_back(s[2]);
            OutputArg c = rand_output(F16, cs, rng_);
            if (beta != 0.0f) {
                int64_t n = 1;
                for (int64_t d : cs) n *= d;
                c.init = random_values(n, rng_, float_values(F16, -1, 1));
            }
            run_case(TGL_OP_MATMUL, param_bytes(p), {rand_float(F16, as, rng_), rand_float(F16, bs, rng_)}, {c}, F16,
                     "matmul f16 " + mkn(s) + (ta ? " ta" : "") + (tb ? " tb" : "") + (variant ? " batch 2, beta" : ""));
        }
}

TEST_F(MatmulFamilyDiff, Linear) {
    for (tgl_dtype dt : {F32, F16, BF16})
        for (const auto& s : sizes()) {
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_params p{sizeof(tgl_linear_params), act};
            // Leading dims: none (a single row), (M), or (2, M) / (M, 3): batch dims.
            const int lead = int(rng_.integer(0, 2));
            Shape xs = lead == 0 ? Shape{s[1]} : lead == 1 ? Shape{s[0], s[1]} : (rng_.chance(0.5) ? Shape{2, s[0], s[1]} : Shape{s[0], 3, s[1]});
            const bool bias = rng_.chance(0.7);
            run_case(TGL_OP_LINEAR, param_bytes(p),
                     {rand_float(dt, xs, rng_), rand_float(dt, {s[2], s[1]}, rng_), bias ? rand_float(dt, {s[2]}, rng_) : absent_input()},
                     {rand_output(dt, with_last(xs, s[2]), rng_)}, dt,
                     "linear " + dtype_name(dt) + " x " + shape_name(xs) + " N " + std::to_string(s[2]) + " act " + std::to_string(act) +
                         (bias ? " bias" : ""));
        }
}

TEST_F(MatmulFamilyDiff, LinearQkv) {
    const std::vector<std::array<int64_t, 3>> splits = {{8, 4, 4}, {13, 0, 7}, {32, 32, 40}, {5, 17, 2}};
    for (tgl_dtype dt : {F32, F16})
        for (const auto& sp : splits) {
            const int64_t K = rng_.pick(std::vector<int64_t>{1, 16, 29, 64});
            const int64_t n = sp[0] + sp[1] + sp[2];
            Shape xs = rng_.chance(0.5) ? Shape{2, int64_t(rng_.integer(1, 9)), K} : Shape{int64_t(rng_.integer(1, 40)), K};
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_params p{sizeof(tgl_linear_params), act};
            const bool bias = rng_.chance(0.6);
            run_case(TGL_OP_LINEAR_QKV, param_bytes(p),
                     {rand_float(dt, xs, rng_), rand_float(dt, {n, K}, rng_), bias ? rand_float(dt, {n}, rng_) : absent_input()},
                     {rand_output(dt, with_last(xs, sp[0]), rng_), rand_output(dt, with_last(xs, sp[1]), rng_),
                      rand_output(dt, with_last(xs, sp[2]), rng_)},
                     dt,
                     "linear_qkv " + dtype_name(dt) + " x " + shape_name(xs) + " split " + std::to_string(sp[0]) + "/" +
                         std::to_string(sp[1]) + "/" + std::to_string(sp[2]) + (bias ? " bias" : ""));
        }
}

TEST_F(MatmulFamilyDiff, Grouped) {
    // (T, K, N, E); sorted indices (one expert per tile mostly) and random ones (tiles mix experts).
    const std::vector<std::array<int64_t, 4>> cases = {{37, 19, 23, 3}, {1, 64, 129, 8}, {70, 32, 40, 5}, {5, 1, 1, 1}, {130, 24, 9, 4}};
    for (tgl_dtype dt : {F32, F16})
        for (const auto& c : cases) {
            const bool sorted = rng_.chance(0.5);
            std::vector<double> idx = random_values(c[0], rng_, int_values(TGL_DTYPE_I32, 0, c[3] - 1));
            if (sorted) std::sort(idx.begin(), idx.end());
            InputArg index;
            index.dtype = rng_.chance(0.5) ? TGL_DTYPE_I64 : TGL_DTYPE_I32;  // either index dtype
            index.view = random_view({c[0]}, index.dtype, rng_, false);
            index.storage = random_storage(index.dtype, index.view.storage, rng_, int_values(index.dtype, 0, c[3] - 1));
            // Logical values in the view's order: write them through the view's element offsets.
            for (int64_t i = 0; i < c[0]; ++i) index.storage.set_value(index.view.offset + i * index.view.strides[0], idx[size_t(i)]);
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_params p{sizeof(tgl_linear_params), act};
            const bool bias = rng_.chance(0.6);
            run_case(TGL_OP_GROUPED_LINEAR, param_bytes(p),
                     {rand_float(dt, {c[0], c[1]}, rng_), rand_float(dt, {c[3], c[2], c[1]}, rng_), index,
                      bias ? rand_float(dt, {c[3], c[2]}, rng_) : absent_input()},
                     {rand_output(dt, {c[0], c[2]}, rng_)}, dt,
                     "grouped_linear " + dtype_name(dt) + " T " + std::to_string(c[0]) + " K " + std::to_string(c[1]) + " N " +
                         std::to_string(c[2]) + " E " + std::to_string(c[3]) + (sorted ? " sorted" : " mixed") + (bias ? " bias" : ""));
        }
}

// A tile of 32 rows with 32 distinct experts and K = 2048: its passes over the experts (each the
// whole K loop) exceed llvmpipe's 65,535 loop passes per invocation (cut short with TGL_OK); the
// GLES plugin spreads the experts over dispatches.
TEST_F(MatmulFamilyDiff, GroupedManyExpertsLongK) {
    const int64_t T = 32, K = 2048, N = 8, E = 32;
    std::vector<double> idx(static_cast<size_t>(T), 0.0);
    for (int64_t i = 0; i < T; ++i) idx[size_t(i)] = double((i * 7) % E);
    tgl_linear_params p{sizeof(tgl_linear_params), TGL_ACTIVATION_NONE};
    run_case(TGL_OP_GROUPED_LINEAR, param_bytes(p),
             {rand_float(F32, {T, K}, rng_), rand_float(F32, {E, N, K}, rng_), input_values(TGL_DTYPE_I32, {T}, idx), rand_float(F32, {E, N}, rng_)},
             {rand_output(F32, {T, N}, rng_)}, F32, "grouped_linear T 32 K 2048 N 8, 32 experts in one tile");
}

TEST_F(MatmulFamilyDiff, Int8) {
    // A subset of sizes() (each case compiles its own shader variants: runtime on llvmpipe).
    const std::vector<std::array<int64_t, 3>> int8_sizes = {{1, 1, 1}, {1, 64, 129}, {33, 17, 65}, {2, 96, 71}};
    for (tgl_dtype dt : {F32, F16})
        for (const auto& s : int8_sizes) {
            const tgl_dtype st = rng_.chance(0.5) ? F32 : F16;
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_params p{sizeof(tgl_linear_params), act};
            Shape xs = rng_.chance(0.3) ? Shape{2, s[0], s[1]} : Shape{s[0], s[1]};
            const bool bias = rng_.chance(0.6);
            run_case(TGL_OP_LINEAR_INT8, param_bytes(p),
                     {rand_float(dt, xs, rng_), rand_input(TGL_DTYPE_I8, {s[2], s[1]}, rng_, int_values(TGL_DTYPE_I8, -128, 127)),
                      rand_float(st, {s[2]}, rng_, 0.001, 0.02), bias ? rand_float(dt, {s[2]}, rng_) : absent_input()},
                     {rand_output(dt, with_last(xs, s[2]), rng_)}, dt,
                     "linear_int8 " + dtype_name(dt) + " x " + shape_name(xs) + " N " + std::to_string(s[2]) + " scale " + dtype_name(st));
        }
}

TEST_F(MatmulFamilyDiff, Int4) {
    // (M, K, N, G)
    const std::vector<std::array<int64_t, 4>> cases = {{1, 64, 129, 32}, {1, 128, 37, 64}, {7, 32, 5, 32}, {33, 192, 65, 64},
                                                       {3, 64, 1, 64}, {130, 96, 17, 32}};
    for (tgl_dtype dt : {F32, F16})
        for (const auto& c : cases) {
            const int64_t groups = c[1] / c[3];
            const tgl_dtype st = rng_.chance(0.5) ? F32 : F16;
            const bool zeros = rng_.chance(0.5), bias = rng_.chance(0.5);
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_int4_params p{sizeof(tgl_linear_int4_params), act, uint32_t(c[3]), 0};
            Shape xs = rng_.chance(0.3) ? Shape{2, c[0], c[1]} : Shape{c[0], c[1]};
            run_case(TGL_OP_LINEAR_INT4, param_bytes(p),
                     {rand_float(dt, xs, rng_), rand_input(TGL_DTYPE_U8, {c[2], c[1] / 2}, rng_, int_values(TGL_DTYPE_U8, 0, 255)),
                      rand_float(st, {c[2], groups}, rng_, 0.01, 0.1),
                      zeros ? rand_input(TGL_DTYPE_U8, {c[2], groups}, rng_, int_values(TGL_DTYPE_U8, 0, 15)) : absent_input(),
                      bias ? rand_float(dt, {c[2]}, rng_) : absent_input()},
                     {rand_output(dt, with_last(xs, c[2]), rng_)}, dt,
                     "linear_int4 " + dtype_name(dt) + " x " + shape_name(xs) + " N " + std::to_string(c[2]) + " group " +
                         std::to_string(c[3]) + (zeros ? " zeros" : "") + (bias ? " bias" : "") + " scales " + dtype_name(st));
        }
}

TEST_F(MatmulFamilyDiff, EmptyAndKZero) {
    for (tgl_dtype dt : {F32, F16}) {
        tgl_linear_params silu{sizeof(tgl_linear_params), TGL_ACTIVATION_SILU};
        // K == 0 with a bias: y = silu(bias) on every row.
        run_case(TGL_OP_LINEAR, param_bytes(silu), {rand_float(dt, {3, 0}, rng_), rand_float(dt, {5, 0}, rng_), rand_float(dt, {5}, rng_)},
                 {rand_output(dt, {3, 5}, rng_)}, dt, "linear K 0 " + dtype_name(dt));
        // No rows: nothing to do.
        run_case(TGL_OP_LINEAR, param_bytes(silu), {rand_float(dt, {0, 4}, rng_), rand_float(dt, {5, 4}, rng_), absent_input()},
                 {rand_output(dt, {0, 5}, rng_)}, dt, "linear M 0 " + dtype_name(dt));
        run_case(TGL_OP_GROUPED_LINEAR, param_bytes(silu),
                 {rand_float(dt, {0, 4}, rng_), rand_float(dt, {2, 5, 4}, rng_), InputArg{TGL_DTYPE_I32, contiguous({0}), Storage::zeros(TGL_DTYPE_I32, 1)},
                  absent_input()},
                 {rand_output(dt, {0, 5}, rng_)}, dt, "grouped_linear T 0 " + dtype_name(dt));
        tgl_matmul_params mp{sizeof(tgl_matmul_params), 0, 0, 1.0f, 0.0f, 0};
        run_case(TGL_OP_MATMUL, param_bytes(mp), {rand_float(dt, {4, 0}, rng_), rand_float(dt, {0, 3}, rng_)}, {rand_output(dt, {4, 3}, rng_)}, dt,
                 "matmul f16 K 0 " + dtype_name(dt));
    }
}

// f16 (and bf16) storage on the GLES plugin's quad paths: FAST tiles (C stored by whole words where an
// invocation owns both halves; a last odd column, an odd C offset keep the masked store), split-K,
// the GEMV kernel both ways, and offsets that are not multiples of 4 (general path).
// (M, K, N, transpose B, front pad of A, front pad of C)
TEST_F(MatmulFamilyDiff, F16QuadPaths) {
    const std::vector<std::array<int64_t, 6>> cases = {{33, 40, 67, 1, 0, 0}, {64, 36, 64, 0, 0, 0}, {64, 36, 64, 0, 0, 1},
                                                       {1, 260, 128, 0, 0, 0}, {3, 72, 37, 1, 0, 0}, {32, 600, 24, 0, 0, 0},
                                                       {17, 40, 64, 0, 1, 0}};
    auto padded = [](const Shape& shape, int64_t front) {
        Layout l;
        l.name = "offset " + std::to_string(front);
        l.pad_front = front;
        l.pad_back = 1;
        return make_view(shape, l);
    };
    // bf16: the FAST tiles with whole-word and masked C stores, the GEMV kernel and split-K.
    const std::vector<size_t> bf16_cases = {1, 2, 3, 5};
    for (tgl_dtype dt : {F16, BF16})
        for (size_t i = 0; i < cases.size(); ++i) {
            if (dt == BF16 && std::find(bf16_cases.begin(), bf16_cases.end(), i) == bf16_cases.end()) continue;
            const auto& c = cases[i];
            const bool tb = c[3] != 0;
            InputArg a, b;
            a.dtype = b.dtype = dt;
            a.view = padded({c[0], c[1]}, c[4]);
            b.view = tb ? padded({c[2], c[1]}, 0) : padded({c[1], c[2]}, 0);
            a.storage = random_storage(dt, a.view.storage, rng_, float_values(dt, -1, 1));
            b.storage = random_storage(dt, b.view.storage, rng_, float_values(dt, -1, 1));
            OutputArg out;
            out.dtype = dt;
            out.view = padded({c[0], c[2]}, c[5]);
            tgl_matmul_params p{sizeof(tgl_matmul_params), 0, tb, 1.0f, 0.0f, 0};
            run_case(TGL_OP_MATMUL, param_bytes(p), {a, b}, {out}, dt,
                     "matmul " + dtype_name(dt) + " " + mkn({c[0], c[1], c[2]}) + (tb ? " tb" : "") + " A offset " + std::to_string(c[4]) +
                         " C offset " + std::to_string(c[5]));
        }
    // Decode linear (W [N, K] k-contiguous: GEMV lanes along k) with bias and an activation.
    tgl_linear_params lp{sizeof(tgl_linear_params), TGL_ACTIVATION_SILU};
    InputArg x, w, bias;
    x.dtype = w.dtype = bias.dtype = F16;
    x.view = padded({1, 64}, 0);
    w.view = padded({72, 64}, 0);
    bias.view = padded({72}, 0);
    x.storage = random_storage(F16, x.view.storage, rng_, float_values(F16, -1, 1));
    w.storage = random_storage(F16, w.view.storage, rng_, float_values(F16, -1, 1));
    bias.storage = random_storage(F16, bias.view.storage, rng_, float_values(F16, -1, 1));
    OutputArg y;
    y.dtype = F16;
    y.view = padded({1, 72}, 0);
    run_case(TGL_OP_LINEAR, param_bytes(lp), {x, w, bias}, {y}, F16, "linear f16 decode M 1 K 64 N 72 bias silu");
}

// Mixed weights: f32 x and y with f16 or bf16 W (bias f32 or W's dtype): odd K, the decode row
// (GEMV), FAST tiles (contiguous, A read as f32 quads and W as 16-bit pairs), strided W (every
// other size: the general loaders), and empty shapes, for matmul, linear, linear_qkv and
// grouped_linear. The output is f32: tol::kMatmul.
TEST_F(MatmulFamilyDiff, MixedWeights) {
    const std::vector<std::array<int64_t, 3>> mixed_sizes = {{7, 13, 5}, {1, 64, 129}, {33, 17, 65}, {64, 36, 64}};
    for (tgl_dtype wdt : {F16, BF16}) {
        auto weight = [&](const Shape& s, bool strided) {
            InputArg w;
            w.dtype = wdt;
            w.view = strided ? view_of(s, Kind::Stepped, rng_, true) : contiguous(s);
            w.storage = random_storage(wdt, w.view.storage, rng_, float_values(wdt, -1, 1));
            return w;
        };
        auto bias = [&](const Shape& s) { return rand_float(rng_.chance(0.5) ? F32 : wdt, s, rng_); };
        auto x_of = [&](const Shape& s, bool strided) { return strided ? rand_float(F32, s, rng_) : contig_float(F32, s, rng_); };
        for (size_t i = 0; i < mixed_sizes.size(); ++i) {
            const auto& s = mixed_sizes[i];
            const bool strided = i % 2 == 0;
            const std::string what = dtype_name(wdt) + " weights " + mkn(s) + (strided ? " strided" : " contiguous");
            const bool tb = rng_.chance(0.5);
            tgl_matmul_params mp{sizeof(tgl_matmul_params), 0, tb, 1.0f, 0.0f, 0};
            run_case(TGL_OP_MATMUL, param_bytes(mp), {x_of({s[0], s[1]}, strided), weight(tb ? Shape{s[2], s[1]} : Shape{s[1], s[2]}, strided)},
                     {rand_output(F32, {s[0], s[2]}, rng_, strided)}, F32, "matmul " + what + (tb ? " tb" : ""));
            tgl_linear_params lp{sizeof(tgl_linear_params), uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1))};
            run_case(TGL_OP_LINEAR, param_bytes(lp), {x_of({s[0], s[1]}, strided), weight({s[2], s[1]}, strided), bias({s[2]})},
                     {rand_output(F32, {s[0], s[2]}, rng_, strided)}, F32, "linear " + what);
            if (i >= 2) continue;  // the qkv and grouped epilogues on the two smaller sizes
            const int64_t q = s[2] / 2, k = s[2] / 4, v = s[2] - q - k;
            run_case(TGL_OP_LINEAR_QKV, param_bytes(lp), {x_of({s[0], s[1]}, strided), weight({s[2], s[1]}, strided), bias({s[2]})},
                     {rand_output(F32, {s[0], q}, rng_), rand_output(F32, {s[0], k}, rng_), rand_output(F32, {s[0], v}, rng_)}, F32,
                     "linear_qkv " + what);
            const int64_t E = 3;
            run_case(TGL_OP_GROUPED_LINEAR, param_bytes(lp),
                     {x_of({s[0], s[1]}, strided), weight({E, s[2], s[1]}, strided),
                      input_values(TGL_DTYPE_I32, {s[0]}, random_values(s[0], rng_, int_values(TGL_DTYPE_I32, 0, E - 1))), bias({E, s[2]})},
                     {rand_output(F32, {s[0], s[2]}, rng_)}, F32, "grouped_linear " + what);
        }
        // Empty: K = 0 (y = bias), no rows, no experts' rows.
        tgl_linear_params lp{sizeof(tgl_linear_params), TGL_ACTIVATION_NONE};
        run_case(TGL_OP_LINEAR, param_bytes(lp), {rand_float(F32, {3, 0}, rng_), weight({5, 0}, false), bias({5})},
                 {rand_output(F32, {3, 5}, rng_)}, F32, "linear K 0 " + dtype_name(wdt) + " weights");
        run_case(TGL_OP_LINEAR, param_bytes(lp), {rand_float(F32, {0, 4}, rng_), weight({5, 4}, false), absent_input()},
                 {rand_output(F32, {0, 5}, rng_)}, F32, "linear M 0 " + dtype_name(wdt) + " weights");
        tgl_matmul_params mp{sizeof(tgl_matmul_params), 0, 0, 1.0f, 0.0f, 0};
        run_case(TGL_OP_MATMUL, param_bytes(mp), {rand_float(F32, {4, 0}, rng_), weight({0, 3}, false)}, {rand_output(F32, {4, 3}, rng_)}, F32,
                 "matmul K 0 " + dtype_name(wdt) + " weights");
    }
}

// The epilogues after split-K partials and after the GEMV kernel (the reduce pass): bias and
// activations, int8 / int4 weights (scales read by the partial pass), linear_qkv's three outputs.
TEST_F(MatmulFamilyDiff, SplitKAndGemvEpilogues) {
    tgl_linear_params gelu{sizeof(tgl_linear_params), TGL_ACTIVATION_GELU};
    run_case(TGL_OP_LINEAR, param_bytes(gelu), {rand_float(F32, {33, 1024}, rng_), rand_float(F32, {40, 1024}, rng_), rand_float(F32, {40}, rng_)},
             {rand_output(F32, {33, 40}, rng_)}, F32, "linear split-K M 33 K 1024 N 40 bias gelu");
    tgl_linear_params relu{sizeof(tgl_linear_params), TGL_ACTIVATION_RELU};
    run_case(TGL_OP_LINEAR_INT8, param_bytes(relu),
             {rand_float(F32, {4, 768}, rng_), rand_input(TGL_DTYPE_I8, {24, 768}, rng_, int_values(TGL_DTYPE_I8, -128, 127)),
              rand_float(F32, {24}, rng_, 0.001, 0.02), rand_float(F32, {24}, rng_)},
             {rand_output(F32, {4, 24}, rng_)}, F32, "linear_int8 split-K M 4 K 768 N 24");
    tgl_linear_int4_params p4{sizeof(tgl_linear_int4_params), TGL_ACTIVATION_NONE, 64, 0};
    run_case(TGL_OP_LINEAR_INT4, param_bytes(p4),
             {rand_float(F16, {3, 1024}, rng_), rand_input(TGL_DTYPE_U8, {20, 512}, rng_, int_values(TGL_DTYPE_U8, 0, 255)),
              rand_float(F32, {20, 16}, rng_, 0.01, 0.1), rand_input(TGL_DTYPE_U8, {20, 16}, rng_, int_values(TGL_DTYPE_U8, 0, 15)),
              absent_input()},
             {rand_output(F16, {3, 20}, rng_)}, F16, "linear_int4 split-K M 3 K 1024 N 20 group 64 zeros");
    tgl_linear_params silu{sizeof(tgl_linear_params), TGL_ACTIVATION_SILU};
    for (int64_t rows : {5, 40}) {
        auto contig = [&](tgl_dtype dt, const Shape& sh) { return contig_float(dt, sh, rng_); };
        run_case(TGL_OP_LINEAR_QKV, param_bytes(silu), {contig(F16, {rows, 600}), contig(F16, {16, 600}), contig(F16, {16})},
                 {rand_output(F16, {rows, 4}, rng_), rand_output(F16, {rows, 4}, rng_), rand_output(F16, {rows, 8}, rng_)}, F16,
                 "linear_qkv f16 rows " + std::to_string(rows) + " K 600 split 4/4/8 bias silu");
    }
}

// M = 1 and N = 2,097,200 columns: more than 65,535 workgroups along x at 32 columns per
// workgroup (the grid is split into dispatches). K = 2 keeps it lean.
TEST_F(MatmulFamilyDiff, PastWorkgroupLimit) {
    const int64_t N = 65535LL * 32 + 80;
    tgl_linear_params p{sizeof(tgl_linear_params), TGL_ACTIVATION_RELU};
    MultiSpec s;
    s.op = TGL_OP_LINEAR;
    s.params = param_bytes(p);
    s.inputs = {input_values(F32, {1, 2}, {0.5, -1}), InputArg{F32, contiguous({N, 2}), random_storage(F32, 2 * N, rng_, float_values(F32, -1, 1))},
                absent_input()};
    s.outputs = {output_of(F32, {1, N})};
    s.tolerance = {tol::kMatmul};
    s.what = "linear M 1 N " + std::to_string(N);
    check(s);
}

// The GEMV over all of K in one pass (GEMV_DIRECT: the epilogue in the GEMV pass, no partials and
// no reduce pass): TGL_TUNE_MATMUL's gd<N> takes it for W n-contiguous (workgroups of gdw over gdq
// quads of columns; also 4, and 32 with one lane along k and no tree), a K range past K (gk) for
// both layouts of W (lanes along k: tb, linear);
// with alpha and beta (C read), C starting NaN, batches, a permuted A, and linear / linear_qkv's
// bias, activation and three outputs; 8 to 128 lanes along k (subgroup shuffles, then the tree,
// where the device has them). The loop budget (llvmpipe, minimum limits) may still split K.
TEST_F(GemvTuned, OneKRangeMatchesReference) {
    for (const char* tune : {"gd8_gu8", "gd2_gdw64", "gw128_gr32_gl64_gk1048576"}) {
        SCOPED_TRACE(std::string("TGL_TUNE_MATMUL=") + tune);
        Device& t = subject_device_with("TGL_TUNE_MATMUL", tune);
        MM m; m.M = 1; m.N = 260; m.K = 1031; m.c_nan = true; check(matmul_spec(m, rng_), &t);
        m = MM{}; m.M = 3; m.N = 36; m.K = 517; m.alpha = 0.5f; m.beta = 0.25f; m.a_kind = Kind::Permuted; check(matmul_spec(m, rng_), &t);
        m = MM{}; m.M = 5; m.N = 37; m.K = 260; m.tb = true; m.beta = -1.5f; check(matmul_spec(m, rng_), &t);
        m = MM{}; m.a_batch = {3}; m.b_batch = {3}; m.M = 1; m.N = 68; m.K = 129; m.a_front = 4; check(matmul_spec(m, rng_), &t);
        tgl_linear_params lp{sizeof(tgl_linear_params), TGL_ACTIVATION_SILU};
        MultiSpec lin;
        lin.op = TGL_OP_LINEAR;
        lin.params = param_bytes(lp);
        lin.inputs = {contig_float(F32, {1, 200}, rng_), contig_float(F32, {70, 200}, rng_), rand_float(F32, {70}, rng_)};
        lin.outputs = {rand_output(F32, {1, 70}, rng_)};
        lin.tolerance = {tol::kMatmul};
        lin.what = "linear M 1 K 200 N 70 bias silu";
        check(lin, &t);
        lp.activation = TGL_ACTIVATION_GELU_TANH;
        MultiSpec qkv;
        qkv.op = TGL_OP_LINEAR_QKV;
        qkv.params = param_bytes(lp);
        qkv.inputs = {contig_float(F32, {2, 96}, rng_), contig_float(F32, {72, 96}, rng_), rand_float(F32, {72}, rng_)};
        qkv.outputs = {rand_output(F32, {2, 36}, rng_), rand_output(F32, {2, 18}, rng_), rand_output(F32, {2, 18}, rng_)};
        qkv.tolerance = {tol::kMatmul, tol::kMatmul, tol::kMatmul};
        qkv.what = "linear_qkv M 2 K 96 N 36 + 18 + 18 bias gelu_tanh";
        check(qkv, &t);
    }
    // Other quads of columns per workgroup (gdq): 1x1031x1040 takes the one pass in 65 workgroups
    // of 4 quads (A as quads), 3x517x260 in 3 of 32 (A permuted: element loads); the other product
    // of each tune takes the K split.
    for (const char* tune : {"gd64_gdw128_gdq4", "gd2_gdw32_gdq32"}) {
        SCOPED_TRACE(std::string("TGL_TUNE_MATMUL=") + tune);
        Device& t = subject_device_with("TGL_TUNE_MATMUL", tune);
        MM m; m.M = 1; m.N = 1040; m.K = 1031; m.c_nan = true; check(matmul_spec(m, rng_), &t);
        m = MM{}; m.M = 3; m.N = 260; m.K = 517; m.alpha = 0.5f; m.beta = 0.25f; m.a_kind = Kind::Permuted; check(matmul_spec(m, rng_), &t);
    }
}

}  // namespace
}  // namespace diff
