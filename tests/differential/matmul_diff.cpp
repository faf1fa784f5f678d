// Matmul: M, N, K over {1, 2, 7, 31, 64, 127, 257} (a sampled set in which every size appears in
// every role), transposes, batches with broadcast batch dims, alpha/beta, non-contiguous operands
// and outputs, K = 0, empty outputs, special values.
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

}  // namespace
}  // namespace diff
