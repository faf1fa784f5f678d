// Layouts against a host reference. Both plugins follow the same shared index plans (validate.h),
// so a mistake there would look the same on both and the differential suite could not see it; here
// every op family runs on permuted, stepped, negative-stride, broadcast (stride 0) and padded
// views, with strided outputs, and is checked exactly against obvious host loops over logical
// indices. Values are small integers, so every result is exact in f32.
#include "common.h"

#include <algorithm>

namespace conf {
namespace {

using Layouts = ConformanceTest;

// Row-major multi-index of a linear index.
std::vector<int64_t> unravel(int64_t i, const Shape& s) {
    std::vector<int64_t> idx(s.size());
    for (size_t d = s.size(); d-- > 0;) {
        idx[d] = s[d] ? i % s[d] : 0;
        i = s[d] ? i / s[d] : 0;
    }
    return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
    int64_t i = 0;
    for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
    return i;
}

// Logical index into an operand of shape `in` broadcast (right-aligned) to `out`.
int64_t broadcast_index(const std::vector<int64_t>& out_idx, const Shape& out, const Shape& in) {
    std::vector<int64_t> idx(in.size());
    for (size_t d = 0; d < in.size(); ++d) {
        size_t od = d + out.size() - in.size();
        idx[d] = in[d] == 1 ? 0 : out_idx[od];
    }
    return ravel(idx, in);
}

Shape random_shape(Rng& rng, int min_rank, int max_rank, int64_t max_numel) {
    while (true) {
        int r = int(rng.integer(min_rank, max_rank));
        Shape s(static_cast<size_t>(r));
        for (auto& d : s) d = rng.pick(std::vector<int64_t>{1, 1, 2, 3, 5, 7});
        if (numel(s) <= max_numel) return s;
    }
}

std::vector<float> small_ints(Rng& rng, int64_t n, int lo = -5, int hi = 5) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = float(rng.integer(lo, hi));
    return v;
}

// An input tensor with the given layout whose logical values are returned; a broadcast layout
// repeats its stored values along stride-0 dims, which gather() reproduces.
struct Input {
    std::unique_ptr<DeviceTensor> t;
    std::vector<float> logical;
};

Input make_input(Device& d, const Shape& s, Rng& rng) {
    Input in;
    in.t = std::make_unique<DeviceTensor>(d, make_view(s, random_layout(s, rng, true)));
    std::vector<float> storage = small_ints(rng, in.t->view().storage);
    in.t->set_storage(storage);
    in.logical = gather(storage, in.t->view());
    return in;
}

std::unique_ptr<DeviceTensor> make_output(Device& d, const Shape& s, Rng& rng) {
    auto t = std::make_unique<DeviceTensor>(d, make_view(s, random_layout(s, rng, false)));
    t->poison();
    return t;
}

std::string describe(const char* what, const std::vector<const DeviceTensor*>& ts) {
    std::string s = what;
    for (const DeviceTensor* t : ts) s += "\n  " + t->view().describe();
    return s;
}

TEST_F(Layouts, UnaryOnAnyLayout) {
    Device& d = dev();
    for (int round = 0; round < 40; ++round) {
        Shape s = random_shape(rng_, 0, 8, 600);
        Input x = make_input(d, s, rng_);
        auto y = make_output(d, s, rng_);
        tgl_op op = rng_.chance(0.5) ? TGL_OP_NEG : TGL_OP_ABS;
        SCOPED_TRACE(describe(op == TGL_OP_NEG ? "neg" : "abs", {x.t.get(), y.get()}));
        d.run_ok(op, nullptr, {x.t->desc()}, {y->desc()});
        std::vector<float> want(x.logical.size());
        for (size_t i = 0; i < want.size(); ++i) want[i] = op == TGL_OP_NEG ? -x.logical[i] : std::fabs(x.logical[i]);
        EXPECT_TRUE(compare(y->read(), want, s, 0, CompareMode::Exact));
        EXPECT_TRUE(x.t->unchanged());
    }
}

TEST_F(Layouts, BinaryWithBroadcastOnAnyLayout) {
    Device& d = dev();
    for (int round = 0; round < 60; ++round) {
        Shape ys = random_shape(rng_, 0, 8, 600);
        // a and b: suffixes of ys (rank-different) with some dims set to 1.
        auto operand_shape = [&]() {
            Shape s(ys.begin() + ptrdiff_t(rng_.integer(0, int64_t(ys.size()))), ys.end());
            for (auto& v : s)
                if (rng_.chance(0.3)) v = 1;
            return s;
        };
        Shape as = operand_shape(), bs = operand_shape();
        // The output is the broadcast of a and b (dims both set to 1 stay 1).
        size_t r = std::max(as.size(), bs.size());
        Shape out(r);
        for (size_t k = 0; k < r; ++k) {
            int64_t na = k + as.size() >= r ? as[k + as.size() - r] : 1;
            int64_t nb = k + bs.size() >= r ? bs[k + bs.size() - r] : 1;
            out[k] = na == 1 ? nb : na;
        }
        Input a = make_input(d, as, rng_), b = make_input(d, bs, rng_);
        auto y = make_output(d, out, rng_);
        const tgl_op ops[] = {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_MAXIMUM, TGL_OP_MINIMUM};
        tgl_op op = ops[rng_.integer(0, 4)];
        SCOPED_TRACE(describe(("binary op " + std::to_string(op)).c_str(), {a.t.get(), b.t.get(), y.get()}));
        d.run_ok(op, nullptr, {a.t->desc(), b.t->desc()}, {y->desc()});
        std::vector<float> want(static_cast<size_t>(numel(out)));
        for (int64_t i = 0; i < numel(out); ++i) {
            auto idx = unravel(i, out);
            float p = a.logical[size_t(broadcast_index(idx, out, as))];
            float q = b.logical[size_t(broadcast_index(idx, out, bs))];
            float v = op == TGL_OP_ADD ? p + q : op == TGL_OP_SUB ? p - q : op == TGL_OP_MUL ? p * q
                    : op == TGL_OP_MAXIMUM ? std::max(p, q) : std::min(p, q);
            want[size_t(i)] = v;
        }
        EXPECT_TRUE(compare(y->read(), want, out, 0, CompareMode::Exact));
        EXPECT_TRUE(a.t->unchanged());
        EXPECT_TRUE(b.t->unchanged());
    }
}

TEST_F(Layouts, ReductionsOnAnyLayout) {
    Device& d = dev();
    for (int round = 0; round < 60; ++round) {
        Shape xs = random_shape(rng_, 0, 8, 800);
        const int r = int(xs.size());
        std::vector<int> axes;
        std::vector<bool> red(size_t(r), false);
        for (int k = 0; k < r; ++k)
            if (rng_.chance(0.4)) {
                axes.push_back(rng_.chance(0.5) ? k : k - r);  // negative axes too
                red[size_t(k)] = true;
            }
        std::shuffle(axes.begin(), axes.end(), rng_.engine());
        if (axes.empty()) std::fill(red.begin(), red.end(), true);  // n_axes == 0: all axes
        bool keep = rng_.chance(0.5);
        Shape ys;
        for (int k = 0; k < r; ++k) {
            if (!red[size_t(k)]) ys.push_back(xs[size_t(k)]);
            else if (keep) ys.push_back(1);
        }
        const tgl_op ops[] = {TGL_OP_SUM, TGL_OP_MAX, TGL_OP_MIN, TGL_OP_PROD};
        tgl_op op = ops[rng_.integer(0, 3)];
        Input x = make_input(d, xs, rng_);
        if (op == TGL_OP_PROD) {  // keep products small: values in {-1, 1, 2}
            std::vector<float> storage(static_cast<size_t>(x.t->view().storage));
            for (auto& v : storage) v = rng_.pick(std::vector<float>{-1, 1, 1, 2});
            x.t->set_storage(storage);
            x.logical = gather(storage, x.t->view());
        }
        auto y = make_output(d, ys, rng_);
        tgl_reduce_params p = reduce_params(axes, keep);
        std::string ax;
        for (int a : axes) ax += std::to_string(a) + " ";
        SCOPED_TRACE(describe(("reduce op " + std::to_string(op) + " axes {" + ax + "} keepdims " + std::to_string(keep)).c_str(),
                              {x.t.get(), y.get()}));
        d.run_ok(op, &p, {x.t->desc()}, {y->desc()});
        // Host: fold each x element into the output element it belongs to.
        std::vector<double> acc(static_cast<size_t>(numel(ys)),
                                op == TGL_OP_SUM ? 0.0 : op == TGL_OP_PROD ? 1.0 : op == TGL_OP_MAX ? -1e300 : 1e300);
        for (int64_t i = 0; i < numel(xs); ++i) {
            auto idx = unravel(i, xs);
            std::vector<int64_t> yi;
            for (int k = 0; k < r; ++k) {
                if (!red[size_t(k)]) yi.push_back(idx[size_t(k)]);
                else if (keep) yi.push_back(0);
            }
            double v = x.logical[size_t(i)];
            double& a = acc[size_t(ravel(yi, ys))];
            a = op == TGL_OP_SUM ? a + v : op == TGL_OP_PROD ? a * v : op == TGL_OP_MAX ? std::max(a, v) : std::min(a, v);
        }
        std::vector<float> want(acc.begin(), acc.end());
        EXPECT_TRUE(compare(y->read(), want, ys, 0, CompareMode::Exact));
        EXPECT_TRUE(x.t->unchanged());
    }
}

TEST_F(Layouts, MatmulOnAnyLayout) {
    Device& d = dev();
    for (int round = 0; round < 40; ++round) {
        int64_t M = rng_.pick(std::vector<int64_t>{1, 2, 3, 7, 16});
        int64_t N = rng_.pick(std::vector<int64_t>{1, 2, 5, 9, 16});
        int64_t K = rng_.pick(std::vector<int64_t>{1, 3, 4, 11, 17});
        bool ta = rng_.chance(0.5), tb = rng_.chance(0.5);
        Shape batch = random_shape(rng_, 0, 3, 12);
        auto batch_of = [&]() {
            Shape s(batch.begin() + ptrdiff_t(rng_.integer(0, int64_t(batch.size()))), batch.end());
            for (auto& v : s)
                if (rng_.chance(0.3)) v = 1;
            return s;
        };
        Shape ab = batch_of(), bb = batch_of();
        size_t br = std::max(ab.size(), bb.size());
        Shape cb(br);
        for (size_t k = 0; k < br; ++k) {
            int64_t na = k + ab.size() >= br ? ab[k + ab.size() - br] : 1;
            int64_t nb = k + bb.size() >= br ? bb[k + bb.size() - br] : 1;
            cb[k] = na == 1 ? nb : na;
        }
        Shape as = ab, bs = bb, cs = cb;
        as.insert(as.end(), ta ? std::initializer_list<int64_t>{K, M} : std::initializer_list<int64_t>{M, K});
        bs.insert(bs.end(), tb ? std::initializer_list<int64_t>{N, K} : std::initializer_list<int64_t>{K, N});
        cs.insert(cs.end(), {M, N});
        Input a = make_input(d, as, rng_), b = make_input(d, bs, rng_);
        auto c = make_output(d, cs, rng_);
        float alpha = float(rng_.integer(-2, 2)), beta = rng_.chance(0.5) ? 0.0f : float(rng_.integer(-2, 2));
        std::vector<float> c0 = small_ints(rng_, numel(cs));
        if (beta != 0.0f) c->prefill(c0);
        tgl_matmul_params p = matmul_params(ta, tb, alpha, beta);
        SCOPED_TRACE(describe(("matmul M " + std::to_string(M) + " N " + std::to_string(N) + " K " + std::to_string(K) +
                               (ta ? " A^T" : "") + (tb ? " B^T" : "") + " alpha " + std::to_string(alpha) + " beta " +
                               std::to_string(beta)).c_str(),
                              {a.t.get(), b.t.get(), c.get()}));
        d.run_ok(TGL_OP_MATMUL, &p, {a.t->desc(), b.t->desc()}, {c->desc()});
        // Host: C[b, m, n] = alpha * sum_k op(A)[b, m, k] op(B)[b, k, n] + beta * C0[b, m, n].
        auto element = [](const Input& t, const Shape& full, const Shape& own_batch, const Shape& out_batch,
                          const std::vector<int64_t>& bidx, int64_t row, int64_t col) {
            std::vector<int64_t> idx;
            for (size_t k = 0; k < own_batch.size(); ++k)
                idx.push_back(own_batch[k] == 1 ? 0 : bidx[k + out_batch.size() - own_batch.size()]);
            idx.push_back(row);
            idx.push_back(col);
            return double(t.logical[size_t(ravel(idx, full))]);
        };
        std::vector<float> want(static_cast<size_t>(numel(cs)));
        for (int64_t i = 0; i < numel(cs); ++i) {
            auto idx = unravel(i, cs);
            std::vector<int64_t> bidx(idx.begin(), idx.end() - 2);
            int64_t m = idx[idx.size() - 2], n = idx[idx.size() - 1];
            double s = 0;
            for (int64_t k = 0; k < K; ++k)
                s += element(a, as, ab, cb, bidx, ta ? k : m, ta ? m : k) * element(b, bs, bb, cb, bidx, tb ? n : k, tb ? k : n);
            want[size_t(i)] = float(alpha * s + (beta != 0.0f ? beta * double(c0[size_t(i)]) : 0.0));
        }
        EXPECT_TRUE(compare(c->read(), want, cs, 0, CompareMode::Exact));
        EXPECT_TRUE(a.t->unchanged());
        EXPECT_TRUE(b.t->unchanged());
    }
}

}  // namespace
}  // namespace conf
