// Known-answer and bad-input tests of the Grad family, run on every plugin: hand-computed
// gradients of small rows, every backward op checked against central finite differences of its
// forward op on small random cases, targets / indices out of range (device-side on GLES: status at
// the next wait, nothing written).
#include "common.h"

#include "tgl_test/op_runner.h"

#include <cmath>
#include <functional>
#include <limits>

namespace conf {
namespace {

using GradOps = ConformanceTest;
using Vals = std::vector<double>;

InputArg in(tgl_dtype dt, const Shape& s, const Vals& v) { return input_values(dt, s, v); }
InputArg idx(const Shape& s, const Vals& v) { return input_values(I32, s, v); }

std::vector<Vals> run_all(tgl_op op, const void* params, const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs) {
    return run_op_values(dev(), op, params, ins, outs);
}
Vals run1(tgl_op op, const void* params, const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs) {
    return run_all(op, params, ins, outs).at(0);
}

// Per element: |got - want| <= tol * max(1, |want|) (want rounded to the dtype first).
::testing::AssertionResult near(tgl_dtype dt, const Vals& got, const Vals& want, double tol = 2e-6) {
    if (got.size() != want.size()) return ::testing::AssertionFailure() << "size " << got.size() << " vs " << want.size();
    for (size_t i = 0; i < got.size(); ++i) {
        const double w = round_to_dtype(dt, want[i]);
        const double t = (dt == F16 ? 2e-3 : tol) * std::max(1.0, std::fabs(w));
        if (!(std::fabs(got[i] - w) <= t) && !(std::isnan(got[i]) && std::isnan(w)))
            return ::testing::AssertionFailure() << "element " << i << ": got " << got[i] << ", want " << w;
    }
    return ::testing::AssertionSuccess();
}

tgl_softmax_params sm(int axis, float scale = 1.0f) { return {sizeof(tgl_softmax_params), axis, scale, 0}; }
tgl_layer_norm_params ln(uint32_t dims, float eps) { return {sizeof(tgl_layer_norm_params), dims, eps, 0}; }
tgl_scan_params scan(int axis, bool exclusive, bool reverse) { return {sizeof(tgl_scan_params), axis, exclusive, reverse}; }
tgl_cross_entropy_params ce(uint32_t reduction, int32_t ignore = -100, float ls = 0.0f) {
    return {sizeof(tgl_cross_entropy_params), reduction, ignore, ls};
}
tgl_embedding_backward_params emb(bool pad, int32_t idx) { return {sizeof(tgl_embedding_backward_params), pad ? 1u : 0u, idx, 0}; }

// ----- known answers -------------------------------------------------------------------------------

TEST_F(GradOps, SoftmaxBackwardKnown) {
    for (tgl_dtype dt : {F32, F16}) {  // not bf16: these expected values are of unrounded inputs
        SCOPED_TRACE(dtype_name(dt));
        // y = (1/2, 1/4, 1/4), dy = (1, 0, 0): sum(dy * y) = 1/2, dx = y * (dy - 1/2).
        auto p = sm(-1);
        EXPECT_TRUE(near(dt, run1(TGL_OP_SOFTMAX_BACKWARD, &p, {in(dt, {2, 3}, {0.5, 0.25, 0.25, 1, 0, 0}), in(dt, {2, 3}, {1, 0, 0, 4, 5, 6})},
                                  {output_of(dt, {2, 3})}),
                         {0.25, -0.125, -0.125, 0, 0, 0}));
        // Along axis 0 with scale 2: columns (1/2, 1/2) with dy (2, 0): s = 1, dx = 2 * y * (dy - 1).
        p = sm(0, 2.0f);
        EXPECT_TRUE(near(dt, run1(TGL_OP_SOFTMAX_BACKWARD, &p, {in(dt, {2, 1}, {0.5, 0.5}), in(dt, {2, 1}, {2, 0})}, {output_of(dt, {2, 1})}),
                         {1, -1}));
        // log_softmax: y = (0, log 1/2 .. ) i.e. exp(y) = (1/2, 1/4, 1/4); dy = (1, 1, 0): sum 2, dx = dy - exp(y) * 2.
        Vals y = {std::log(0.5), std::log(0.25), std::log(0.25)};
        EXPECT_TRUE(near(dt, run1(TGL_OP_LOG_SOFTMAX_BACKWARD, nullptr, {in(dt, {3}, y), in(dt, {3}, {1, 1, 0})}, {output_of(dt, {3})}),
                         {0, 0.5, -0.5}));
    }
}

TEST_F(GradOps, LayerNormBackwardKnown) {
    // x = (1, 2, 3): mean 2, var 2/3, eps 0: rstd = s = sqrt(3/2), xhat = (-s, 0, s) * sqrt(2/3) * s...
    const double s = std::sqrt(1.5);  // rstd; xhat = (-1, 0, 1) * s * 1 (x - mean = -1, 0, 1)
    auto p = ln(1, 0.0f);
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // Row 1: dy (1, 0, 0): g - mean(g) - xhat * mean(g * xhat) = (1/6, -1/3, 1/6). Row 2: dy (0, 0, 2): (1/3, -2/3, 1/3).
        auto r = run_all(TGL_OP_LAYER_NORM_BACKWARD, &p,
                         {in(dt, {2, 3}, {1, 2, 3, 1, 2, 3}), in(dt, {2, 3}, {1, 0, 0, 0, 0, 2}), absent_input()},
                         {output_of(dt, {2, 3}), output_of(dt, {3}), output_of(dt, {3})});
        EXPECT_TRUE(near(dt, r[0], {s / 6, -s / 3, s / 6, s / 3, -2 * s / 3, s / 3}));
        EXPECT_TRUE(near(dt, r[1], {-s, 0, 2 * s}));  // dgamma = sum dy * xhat
        EXPECT_TRUE(near(dt, r[2], {1, 0, 2}));       // dbeta = sum dy
        // gamma (2, 1, 1), dy (1, 0, 0): g = (2, 0, 0) -> (1/3, -2/3, 1/3) * s; dgamma does not depend on gamma.
        r = run_all(TGL_OP_LAYER_NORM_BACKWARD, &p, {in(dt, {1, 3}, {1, 2, 3}), in(dt, {1, 3}, {1, 0, 0}), in(dt, {3}, {2, 1, 1})},
                    {output_of(dt, {1, 3}), output_of(dt, {3}), absent_output()});
        EXPECT_TRUE(near(dt, r[0], {s / 3, -2 * s / 3, s / 3}));
        EXPECT_TRUE(near(dt, r[1], {-s, 0, 0}));
    }
}

TEST_F(GradOps, RmsNormBackwardKnown) {
    auto p = ln(1, 0.0f);
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        // x = (2, 2, 2, 2): rstd 1/2, xhat 1; dy (1, 0, 0, 0): dx = 1/2 * (g - 1/4) ; dgamma = dy * xhat.
        auto r = run_all(TGL_OP_RMS_NORM_BACKWARD, &p, {in(dt, {1, 4}, {2, 2, 2, 2}), in(dt, {1, 4}, {1, 0, 0, 0}), absent_input()},
                         {output_of(dt, {1, 4}), output_of(dt, {4})});
        EXPECT_TRUE(near(dt, r[0], {0.375, -0.125, -0.125, -0.125}));
        EXPECT_TRUE(near(dt, r[1], {1, 0, 0, 0}));
        // gamma (4, 1, 1, 1): g = (4, 0, 0, 0), mean(g * xhat) = 1: dx = 1/2 * (g - 1).
        r = run_all(TGL_OP_RMS_NORM_BACKWARD, &p, {in(dt, {1, 4}, {2, 2, 2, 2}), in(dt, {1, 4}, {1, 0, 0, 0}), in(dt, {4}, {4, 1, 1, 1})},
                    {output_of(dt, {1, 4}), absent_output()});
        EXPECT_TRUE(near(dt, r[0], {1.5, -0.5, -0.5, -0.5}));
    }
}

TEST_F(GradOps, CumsumBackwardKnown) {
    const Vals dy = {1, 2, 3, 4};
    const std::vector<std::pair<tgl_scan_params, Vals>> cases = {{scan(-1, false, false), {10, 9, 7, 4}},
                                                                 {scan(0, true, false), {9, 7, 4, 0}},
                                                                 {scan(0, false, true), {1, 3, 6, 10}},
                                                                 {scan(-1, true, true), {0, 1, 3, 6}}};
    for (tgl_dtype dt : {F32, F16, BF16})
        for (const auto& c : cases)
            EXPECT_TRUE(near(dt, run1(TGL_OP_CUMSUM_BACKWARD, &c.first, {in(dt, {4}, dy)}, {output_of(dt, {4})}), c.second));
    // Along axis 0 of (2, 2): columns.
    auto p = scan(0, false, false);
    EXPECT_TRUE(near(F32, run1(TGL_OP_CUMSUM_BACKWARD, &p, {in(F32, {2, 2}, {1, 2, 3, 4})}, {output_of(F32, {2, 2})}), {4, 6, 3, 4}));
}

TEST_F(GradOps, EmbeddingBackwardKnown) {
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        const InputArg dy = in(dt, {3, 2}, {1, 2, 3, 4, 5, 6});
        const InputArg index = idx({3}, {2, 0, 2});
        EXPECT_TRUE(near(dt, run1(TGL_OP_EMBEDDING_BACKWARD, nullptr, {dy, index}, {output_of(dt, {4, 2})}), {3, 4, 0, 0, 6, 8, 0, 0}));
        auto p = emb(true, 2);
        EXPECT_TRUE(near(dt, run1(TGL_OP_EMBEDDING_BACKWARD, &p, {dy, index}, {output_of(dt, {4, 2})}), {3, 4, 0, 0, 0, 0, 0, 0}));
        // index (2, 2), dy (2, 2, 1); no token: all zeros.
        EXPECT_TRUE(near(dt, run1(TGL_OP_EMBEDDING_BACKWARD, nullptr, {in(dt, {2, 2, 1}, {1, 2, 3, 4}), idx({2, 2}, {1, 1, 0, 1})},
                                  {output_of(dt, {2, 1})}),
                         {3, 7}));
    }
}

TEST_F(GradOps, CrossEntropyKnown) {
    const double l2 = std::log(2.0), l3 = std::log(3.0), l4 = std::log(4.0);
    // Row 1: logits (0, 0, 0), target 1: lse = ln 3, loss ln 3. Row 2: (0, ln 2, 0), target 1: ln 4 - ln 2.
    const Vals z = {0, 0, 0, 0, l2, 0};
    for (tgl_dtype dt : {F32, F16}) {  // not bf16: these expected values are of unrounded inputs
        SCOPED_TRACE(dtype_name(dt));
        const InputArg logits = in(dt, {2, 3}, z), t = idx({2}, {1, 1});
        auto none = ce(TGL_REDUCTION_NONE), mean = ce(TGL_REDUCTION_MEAN), sum = ce(TGL_REDUCTION_SUM);
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, &none, {logits, t}, {output_of(dt, {2})}), {l3, l2}));
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, nullptr, {logits, t}, {output_of(dt, {})}), {(l3 + l2) / 2}));
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, &sum, {logits, t}, {output_of(dt, {})}), {l3 + l2}));
        // ignore_index: the mean is over the one remaining row; its loss is 0 with none.
        auto ign = ce(TGL_REDUCTION_MEAN, 7);
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, &ign, {logits, idx({2}, {1, 7})}, {output_of(dt, {})}), {l3}));
        auto ign_none = ce(TGL_REDUCTION_NONE);
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, &ign_none, {logits, idx({2}, {-100, 1})}, {output_of(dt, {2})}), {0, l2}));
        // All ignored, mean: 0 / 0.
        Vals all_ign = run1(TGL_OP_CROSS_ENTROPY, &mean, {logits, idx({2}, {-100, -100})}, {output_of(dt, {})});
        EXPECT_TRUE(std::isnan(all_ign.at(0)));
        // label smoothing 0.3: 0.7 (lse - z_t) + 0.3 (lse - mean(z)).
        auto lsp = ce(TGL_REDUCTION_NONE, -100, 0.3f);
        const double ls = double(0.3f);
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, &lsp, {logits, t}, {output_of(dt, {2})}),
                         {l3, (1 - ls) * l2 + ls * (l4 - l2 / 3)}));
        // Backward. softmax rows (1/3, 1/3, 1/3) and (1/4, 1/2, 1/4).
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY_BACKWARD, &none, {logits, t, in(dt, {2}, {1, 2})}, {output_of(dt, {2, 3})}),
                         {1.0 / 3, -2.0 / 3, 1.0 / 3, 0.5, -1, 0.5}));
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY_BACKWARD, &mean, {logits, t, in(dt, {}, {2})}, {output_of(dt, {2, 3})}),
                         {1.0 / 3, -2.0 / 3, 1.0 / 3, 0.25, -0.5, 0.25}));
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY_BACKWARD, &sum, {logits, idx({2}, {-100, 0}), in(dt, {}, {1})}, {output_of(dt, {2, 3})}),
                         {0, 0, 0, -0.75, 0.5, 0.25}));
        auto lsb = ce(TGL_REDUCTION_SUM, -100, 0.3f);
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY_BACKWARD, &lsb, {in(dt, {1, 3}, {0, 0, 0}), idx({1}, {1}), in(dt, {}, {1})},
                              {output_of(dt, {1, 3})}),
                         {1.0 / 3 - ls / 3, 1.0 / 3 - (1 - ls) - ls / 3, 1.0 / 3 - ls / 3}));
        // (N, C, d): logits (1, 2, 2), target (1, 2): positions (0, 0) and (0, 1), classes along dim 1.
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, &none, {in(dt, {1, 2, 2}, {0, l3, 0, 0}), idx({1, 2}, {1, 0})}, {output_of(dt, {1, 2})}),
                         {l2, std::log(4.0 / 3)}));
        // Rank-1 logits (C) with a rank-0 target.
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, &none, {in(dt, {3}, {0, l2, 0}), idx({}, {1})}, {output_of(dt, {})}), {l2}));
    }
}

// ----- finite differences of the forward ops -------------------------------------------------------

// Central differences of the scalar L(v) = sum(w * forward(v)) with respect to every element of v,
// against `grad` (the backward op's result for dy = w).
void check_fd(const std::string& what, Vals v, const std::function<Vals(const Vals&)>& forward, const Vals& w, const Vals& grad,
              double h = 1e-2, double tol = 2e-3) {
    SCOPED_TRACE(what);
    ASSERT_EQ(grad.size(), v.size());
    auto L = [&](const Vals& x) {
        Vals y = forward(x);
        double s = 0;
        for (size_t i = 0; i < y.size(); ++i) s += w[i] * y[i];
        return s;
    };
    for (size_t i = 0; i < v.size(); ++i) {
        const double keep = v[i];
        v[i] = keep + h;
        const double up = L(v);
        v[i] = keep - h;
        const double down = L(v);
        v[i] = keep;
        const double fd = (up - down) / (2 * h);
        EXPECT_NEAR(grad[i], fd, tol * std::max(1.0, std::fabs(fd))) << "element " << i;
    }
}

Vals randv(Rng& rng, size_t n, double lo, double hi) {
    Vals v(n);
    for (double& a : v) a = double(float(rng.uniform(lo, hi)));
    return v;
}

// Special logits (IEEE, as torch.nn.functional.cross_entropy): a -inf logit (a masked class) is a
// class of probability 0 and leaves the loss finite without label smoothing (the smoothing term is
// absent, not 0 * inf); a NaN or +inf logit makes its row's loss and gradient NaN (inf - inf).
// GLES once folded the NaN lse (mx - mx) to 0, the CPU once gave NaN for a -inf logit.
TEST_F(GradOps, CrossEntropySpecialLogits) {
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const double lse = std::log(1 + std::exp(1.0) + std::exp(2.0));  // of (0, -inf, 1, 2)
    for (tgl_dtype dt : {F32, F16, BF16}) {
        SCOPED_TRACE(dtype_name(dt));
        const InputArg logits = in(dt, {3, 4}, {0, -inf, 1, 2, 0, inf, 1, 2, 0, nan, 1, 2});
        const InputArg t = idx({3}, {0, 0, 0});
        auto none = ce(TGL_REDUCTION_NONE);
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY, &none, {logits, t}, {output_of(dt, {3})}), {lse, nan, nan}));
        auto sum = ce(TGL_REDUCTION_SUM);
        Vals total = run1(TGL_OP_CROSS_ENTROPY, &sum, {logits, t}, {output_of(dt, {})});
        EXPECT_TRUE(std::isnan(total.at(0))) << "sum over rows with a NaN loss: got " << total.at(0);
        const double p1 = 0, p2 = std::exp(1 - lse), p3 = std::exp(2 - lse), p0 = std::exp(-lse);
        EXPECT_TRUE(near(dt, run1(TGL_OP_CROSS_ENTROPY_BACKWARD, &none, {logits, t, in(dt, {3}, {1, 1, 1})}, {output_of(dt, {3, 4})}),
                         {p0 - 1, p1, p2, p3, nan, nan, nan, nan, nan, nan, nan, nan}));
        // With label smoothing the -inf class makes the loss +inf (ls * (lse - mean(z)), mean(z) = -inf).
        auto lsp = ce(TGL_REDUCTION_NONE, -100, 0.25f);
        Vals smoothed = run1(TGL_OP_CROSS_ENTROPY, &lsp, {in(dt, {1, 4}, {0, -inf, 1, 2}), idx({1}, {0})}, {output_of(dt, {1})});
        EXPECT_EQ(smoothed.at(0), inf);
    }
}

TEST_F(GradOps, FiniteDifferencesSoftmax) {
    const Shape s = {3, 4};
    for (tgl_op op : {TGL_OP_SOFTMAX, TGL_OP_LOG_SOFTMAX}) {
        const tgl_op bw = op == TGL_OP_SOFTMAX ? TGL_OP_SOFTMAX_BACKWARD : TGL_OP_LOG_SOFTMAX_BACKWARD;
        for (int axis : {0, 1}) {
            auto p = sm(axis, 1.5f);
            Vals x = randv(rng_, 12, -2, 2), w = randv(rng_, 12, -1, 1);
            auto fwd = [&](const Vals& v) { return run1(op, &p, {in(F32, s, v), absent_input()}, {output_of(F32, s)}); };
            Vals y = fwd(x);
            Vals dx = run1(bw, &p, {in(F32, s, y), in(F32, s, w)}, {output_of(F32, s)});
            check_fd(std::to_string(op) + " axis " + std::to_string(axis), x, fwd, w, dx);
        }
    }
}

TEST_F(GradOps, FiniteDifferencesNorms) {
    const Shape s = {3, 2, 3}, ps = {2, 3};
    for (tgl_op op : {TGL_OP_LAYER_NORM, TGL_OP_RMS_NORM}) {
        const bool rms = op == TGL_OP_RMS_NORM;
        auto p = ln(2, 1e-3f);
        Vals x = randv(rng_, 18, -2, 2), gamma = randv(rng_, 6, 0.5, 2), beta = randv(rng_, 6, -1, 1), w = randv(rng_, 18, -1, 1);
        auto fwd_in = [&](const Vals& xv, const Vals& gv, const Vals& bv) {
            std::vector<InputArg> ins = {in(F32, s, xv), in(F32, ps, gv)};
            if (!rms) ins.push_back(in(F32, ps, bv));
            return run1(op, &p, ins, {output_of(F32, s)});
        };
        std::vector<OutputArg> outs = {output_of(F32, s), output_of(F32, ps)};
        if (!rms) outs.push_back(output_of(F32, ps));
        auto g = run_all(rms ? TGL_OP_RMS_NORM_BACKWARD : TGL_OP_LAYER_NORM_BACKWARD, &p, {in(F32, s, x), in(F32, s, w), in(F32, ps, gamma)}, outs);
        check_fd("dx", x, [&](const Vals& v) { return fwd_in(v, gamma, beta); }, w, g[0]);
        check_fd("dgamma", gamma, [&](const Vals& v) { return fwd_in(x, v, beta); }, w, g[1]);
        if (!rms) check_fd("dbeta", beta, [&](const Vals& v) { return fwd_in(x, gamma, v); }, w, g[2]);
    }
}

TEST_F(GradOps, FiniteDifferencesCumsum) {
    const Shape s = {2, 5};
    for (int mode = 0; mode < 4; ++mode) {
        auto p = scan(mode % 2 ? 0 : 1, mode & 1, mode & 2);
        Vals x = randv(rng_, 10, -2, 2), w = randv(rng_, 10, -1, 1);
        auto fwd = [&](const Vals& v) { return run1(TGL_OP_CUMSUM, &p, {in(F32, s, v)}, {output_of(F32, s)}); };
        Vals dx = run1(TGL_OP_CUMSUM_BACKWARD, &p, {in(F32, s, w)}, {output_of(F32, s)});
        check_fd("cumsum mode " + std::to_string(mode), x, fwd, w, dx);
    }
}

TEST_F(GradOps, FiniteDifferencesEmbedding) {
    // index_select(W, index, axis 0) is the embedding lookup; its gradient with respect to W.
    const Vals index = {3, 0, 3, 1, 3};
    Vals W = randv(rng_, 4 * 2, -1, 1), w = randv(rng_, 5 * 2, -1, 1);
    tgl_axis_params a0{sizeof(tgl_axis_params), 0, 0};
    auto fwd = [&](const Vals& v) { return run1(TGL_OP_INDEX_SELECT, &a0, {in(F32, {4, 2}, v), idx({5}, index)}, {output_of(F32, {5, 2})}); };
    Vals dW = run1(TGL_OP_EMBEDDING_BACKWARD, nullptr, {in(F32, {5, 2}, w), idx({5}, index)}, {output_of(F32, {4, 2})});
    check_fd("embedding", W, fwd, w, dW);
    // gather's gradient is scatter_add into zeros (documented; no op of its own).
    tgl_axis_params a1{sizeof(tgl_axis_params), 1, 0};
    const Vals gi = {2, 0, 2, 1, 1, 1};
    Vals x = randv(rng_, 6, -1, 1), wg = randv(rng_, 6, -1, 1);
    auto gfwd = [&](const Vals& v) { return run1(TGL_OP_GATHER, &a1, {in(F32, {2, 3}, v), idx({2, 3}, gi)}, {output_of(F32, {2, 3})}); };
    Vals dx = run1(TGL_OP_SCATTER_ADD, &a1, {in(F32, {2, 3}, Vals(6, 0.0)), idx({2, 3}, gi), in(F32, {2, 3}, wg)}, {output_of(F32, {2, 3})});
    check_fd("gather", x, gfwd, wg, dx);
}

TEST_F(GradOps, FiniteDifferencesCrossEntropy) {
    const Shape s = {4, 5};
    const Vals t = {2, -100, 0, 4};
    for (uint32_t red : {TGL_REDUCTION_NONE, TGL_REDUCTION_MEAN, TGL_REDUCTION_SUM})
        for (float ls : {0.0f, 0.2f}) {
            auto p = ce(red, -100, ls);
            Vals z = randv(rng_, 20, -3, 3);
            const Shape ls_shape = red == TGL_REDUCTION_NONE ? Shape{4} : Shape{};
            Vals w = randv(rng_, red == TGL_REDUCTION_NONE ? 4 : 1, -1, 1);
            auto fwd = [&](const Vals& v) { return run1(TGL_OP_CROSS_ENTROPY, &p, {in(F32, s, v), idx({4}, t)}, {output_of(F32, ls_shape)}); };
            Vals dz = run1(TGL_OP_CROSS_ENTROPY_BACKWARD, &p, {in(F32, s, z), idx({4}, t), in(F32, ls_shape, w)}, {output_of(F32, s)});
            check_fd("cross_entropy reduction " + std::to_string(red) + " smoothing " + std::to_string(ls), z, fwd, w, dz);
        }
}

// ----- bad input -----------------------------------------------------------------------------------

TEST_F(GradOps, BadInput) {
    const InputArg a = in(F32, {2, 3}, {1, 2, 3, 4, 5, 6});
    expect_rejected(TGL_OP_SOFTMAX_BACKWARD, nullptr, {a, in(F32, {3, 2}, Vals(6, 1))}, {output_of(F32, {2, 3})}, TGL_ERROR_SHAPE_MISMATCH,
                 {"dy", "(3, 2)", "(2, 3)"});
    expect_rejected(TGL_OP_SOFTMAX_BACKWARD, nullptr, {a, in(F16, {2, 3}, Vals(6, 1))}, {output_of(F32, {2, 3})}, TGL_ERROR_DTYPE_MISMATCH,
                 {"dy", "f16"});
    auto bad_axis = sm(2);
    expect_rejected(TGL_OP_LOG_SOFTMAX_BACKWARD, &bad_axis, {a, a}, {output_of(F32, {2, 3})}, TGL_ERROR_AXIS_OUT_OF_RANGE, {"axis"});
    tgl_softmax_params short_p = sm(0);
    short_p.struct_size = 8;
    expect_rejected(TGL_OP_SOFTMAX_BACKWARD, &short_p, {a, a}, {output_of(F32, {2, 3})}, TGL_ERROR_PARAMS_SIZE, {"struct_size"});
    auto l2 = ln(3, 1e-5f);
    expect_rejected(TGL_OP_LAYER_NORM_BACKWARD, &l2, {a, a, absent_input()}, {output_of(F32, {2, 3}), absent_output(), absent_output()},
                 TGL_ERROR_AXIS_OUT_OF_RANGE, {"n_norm_dims"});
    expect_rejected(TGL_OP_LAYER_NORM_BACKWARD, nullptr, {a, a, in(F32, {2}, {1, 1})}, {output_of(F32, {2, 3}), absent_output(), absent_output()},
                 TGL_ERROR_SHAPE_MISMATCH, {"gamma", "(2)", "(3)"});
    expect_rejected(TGL_OP_RMS_NORM_BACKWARD, nullptr, {a, a, absent_input()}, {output_of(F32, {2, 3}), output_of(F32, {2, 3})},
                 TGL_ERROR_SHAPE_MISMATCH, {"dgamma"});
    tgl_scan_params bad_scan{sizeof(tgl_scan_params), 0, 2, 0};
    expect_rejected(TGL_OP_CUMSUM_BACKWARD, &bad_scan, {a}, {output_of(F32, {2, 3})}, TGL_ERROR_INVALID_ARGUMENT, {"exclusive"});
    expect_rejected(TGL_OP_CUMSUM_BACKWARD, nullptr, {a}, {output_of(F32, {3, 2})}, TGL_ERROR_SHAPE_MISMATCH, {"dx", "dy's shape"});
    // embedding: dW not 2-D, dy not index + (D,), padding_idx out of [0, V), index not i32
    expect_rejected(TGL_OP_EMBEDDING_BACKWARD, nullptr, {a, idx({2}, {0, 1})}, {output_of(F32, {4})}, TGL_ERROR_SHAPE_MISMATCH, {"dW", "(V, D)"});
    expect_rejected(TGL_OP_EMBEDDING_BACKWARD, nullptr, {a, idx({3}, {0, 1, 0})}, {output_of(F32, {4, 3})}, TGL_ERROR_SHAPE_MISMATCH, {"dy"});
    auto pad = emb(true, 4);
    expect_rejected(TGL_OP_EMBEDDING_BACKWARD, &pad, {a, idx({2}, {0, 1})}, {output_of(F32, {4, 3})}, TGL_ERROR_INVALID_ARGUMENT, {"padding_idx", "4"});
    expect_rejected(TGL_OP_EMBEDDING_BACKWARD, nullptr, {a, in(F32, {2}, {0, 1})}, {output_of(F32, {4, 3})}, TGL_ERROR_DTYPE_MISMATCH, {"index"});
    // cross entropy: target shape, loss shape per reduction, reduction value, smoothing, target dtype
    auto none = ce(TGL_REDUCTION_NONE);
    expect_rejected(TGL_OP_CROSS_ENTROPY, nullptr, {a, idx({3}, {0, 1, 2})}, {output_of(F32, {})}, TGL_ERROR_SHAPE_MISMATCH, {"target"});
    expect_rejected(TGL_OP_CROSS_ENTROPY, nullptr, {a, idx({2}, {0, 1})}, {output_of(F32, {2})}, TGL_ERROR_SHAPE_MISMATCH, {"loss", "scalar"});
    expect_rejected(TGL_OP_CROSS_ENTROPY, &none, {a, idx({2}, {0, 1})}, {output_of(F32, {})}, TGL_ERROR_SHAPE_MISMATCH, {"loss", "none"});
    auto bad_red = ce(3);
    expect_rejected(TGL_OP_CROSS_ENTROPY, &bad_red, {a, idx({2}, {0, 1})}, {output_of(F32, {})}, TGL_ERROR_INVALID_ARGUMENT, {"reduction"});
    auto bad_ls = ce(TGL_REDUCTION_MEAN, -100, 1.5f);
    expect_rejected(TGL_OP_CROSS_ENTROPY, &bad_ls, {a, idx({2}, {0, 1})}, {output_of(F32, {})}, TGL_ERROR_INVALID_ARGUMENT, {"label_smoothing"});
    expect_rejected(TGL_OP_CROSS_ENTROPY, nullptr, {a, in(F32, {2}, {0, 1})}, {output_of(F32, {})}, TGL_ERROR_DTYPE_MISMATCH, {"target"});
    expect_rejected(TGL_OP_CROSS_ENTROPY_BACKWARD, &none, {a, idx({2}, {0, 1}), in(F32, {}, {1})}, {output_of(F32, {2, 3})},
                 TGL_ERROR_SHAPE_MISMATCH, {"dloss"});
}

// A target / index out of range: CPU at run_op, GLES at the next wait; nothing written either way;
// the error reported once; the device usable afterwards.
TEST_F(GradOps, OutOfRangeNothingWritten) {
    auto mean = ce(TGL_REDUCTION_MEAN), none = ce(TGL_REDUCTION_NONE);
    struct Bad {
        const char* name;
        tgl_op op;
        const void* params;
        std::vector<InputArg> in;
        OutputArg out;
        std::string value, position;
    };
    const InputArg z = in(F32, {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    const std::vector<Bad> cases = {
        {"cross_entropy", TGL_OP_CROSS_ENTROPY, &mean, {z, idx({3}, {0, -100, 3})}, output_of(F32, {}), "3", "position 2"},
        {"cross_entropy", TGL_OP_CROSS_ENTROPY, &none, {z, idx({3}, {-1, 0, 1})}, output_of(F32, {3}), "-1", "position 0"},
        {"cross_entropy_backward", TGL_OP_CROSS_ENTROPY_BACKWARD, &none, {z, idx({3}, {0, 5, 1}), in(F32, {3}, {1, 1, 1})},
         output_of(F32, {3, 3}), "5", "position 1"},
        {"embedding_backward", TGL_OP_EMBEDDING_BACKWARD, nullptr, {z, idx({3}, {0, 1, 4})}, output_of(F32, {4, 3}), "4", "position 2"},
        {"embedding_backward", TGL_OP_EMBEDDING_BACKWARD, nullptr, {z, idx({3}, {-2, 1, 0})}, output_of(F32, {4, 3}), "-2", "position 0"},
    };
    for (const Bad& c : cases) {
        SCOPED_TRACE(std::string(c.name) + " with " + c.value);
        expect_index_out_of_range({c.name, c.op, c.params, c.in, c.out, {c.name, "holds " + c.value, c.position}});
        EXPECT_TRUE(near(F32, run1(TGL_OP_CROSS_ENTROPY, &none, {in(F32, {1, 2}, {0, 0}), idx({1}, {1})}, {output_of(F32, {1})}),
                         {std::log(2.0)}));
    }
}

}  // namespace
}  // namespace conf
