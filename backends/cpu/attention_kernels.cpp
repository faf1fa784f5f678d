// CPU reference kernels of the Attention family (plan: backends/common/attention_rules.h): plain
// loops in double. Forward: for each query row, every score of the row materialized (scale q . k,
// softcap, ALiBi, + mask, -inf where causal or the window hides the key), softmax in two passes
// (max, then sum of exp, the sink joining both), o the weighted sum of v, lse = max + log(sum). Backward: the same row of scores, p = exp(s - lse),
// and the gradient formulas of plugin_api.h, dk/dv accumulated in double per kv head.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"
#include "status.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <vector>

namespace tgl {
namespace cpu {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using R = AttentionPlan::Role;

// Element access of one role through the plan's 4-D strides.
struct Operand {
    uint8_t* base = nullptr;
    tgl_dtype dt = TGL_DTYPE_F32;
    int64_t off = 0;
    const int64_t* s = nullptr;
    int64_t at(int64_t b, int64_t h, int64_t i, int64_t c) const { return off + b * s[0] + h * s[1] + i * s[2] + c * s[3]; }
    double load(int64_t b, int64_t h, int64_t i, int64_t c) const { return load_as_double(base, dt, at(b, h, i, c)); }
    void store(int64_t b, int64_t h, int64_t i, int64_t c, double v) const { store_from_double(base, dt, at(b, h, i, c), v, false); }
};

Operand operand(const OpCall& call, int role) {
    const AttentionPlan& p = call.attention();
    Operand o;
    if (p.slot[role] < 0) return o;
    const TensorArg& t = p.is_input[role] ? call.inputs[size_t(p.slot[role])] : call.outputs[size_t(p.slot[role])];
    if (!t.present()) return o;
    o.base = cpu_buffer(t.buffer).bytes();
    o.dt = t.dtype;
    o.off = p.offset[role];
    o.s = p.strides[role];
    return o;
}

// The scores of row (b, h, i) (ops.h): x = scale * q_i . k_j, capped (softcap), minus the ALiBi
// distance, plus the mask; -inf where causal or the window hides key j. `capped` (when given)
// receives the capped x, whose derivative the backward needs.
void scores(const AttentionPlan& p, const Operand& q, const Operand& k, const Operand& mask, int64_t b, int64_t h,
            int64_t i, std::vector<double>& s, std::vector<double>* capped = nullptr) {
    const int64_t hk = h / p.G;
    const int64_t lo = p.key_begin(i), hi = p.key_end(i), pos = i + p.pos_offset;
    const double slope = p.max_bias > 0.0f ? std::exp2(-p.alibi_exponent(h)) : 0.0;
    s.assign(size_t(p.Skv), -kInf);
    if (capped) capped->assign(size_t(p.Skv), 0.0);
    for (int64_t j = lo; j < hi; ++j) {
        double dot = 0.0;
        for (int64_t c = 0; c < p.D; ++c) dot += q.load(b, h, i, c) * k.load(b, hk, j, c);
        double x = double(p.scale) * dot;
        if (p.softcap > 0.0f) x = double(p.softcap) * std::tanh(x / double(p.softcap));
        if (capped) (*capped)[size_t(j)] = x;
        if (slope != 0.0) x -= slope * double(std::llabs(pos - j));
        double add = 0.0;
        if (mask.base) {
            add = mask.load(b, h, i, j);
            if (p.bool_mask) add = add != 0.0 ? 0.0 : -kInf;
        }
        s[size_t(j)] = x + add;
    }
}

void forward(const OpCall& call, unsigned threads) {
    const AttentionPlan& p = call.attention();
    const Operand q = operand(call, R::kQ), k = operand(call, R::kK), v = operand(call, R::kV);
    const Operand mask = operand(call, R::kMask), o = operand(call, R::kO), lse = operand(call, R::kLse);
    const Operand sinks = operand(call, R::kSinks);
    const int64_t rows = p.B * p.Hq * p.Sq;
    struct Scratch {
        std::vector<double> s, acc;
    };
    // (s sized as scores() fills it: no allocation once rows are being written)
    auto make = [&] { return Scratch{std::vector<double>(size_t(p.Skv)), std::vector<double>(size_t(p.Dv))}; };
    parallel_for_with_scratch(rows, threads, 1, make, [&](int64_t begin, int64_t end, Scratch& sc) {
        std::vector<double>& s = sc.s;
        std::vector<double>& acc = sc.acc;
        for (int64_t row = begin; row < end; ++row) {
            const int64_t i = row % p.Sq, h = row / p.Sq % p.Hq, b = row / p.Sq / p.Hq, hk = h / p.G;
            scores(p, q, k, mask, b, h, i, s);
            // A sink joins the denominator only: one more logit, with no value row.
            const double sink = sinks.base ? sinks.load(h, 0, 0, 0) : -kInf;
            double m = -kInf;
            bool nan = std::isnan(sink);
            for (double a : s) {
                nan = nan || std::isnan(a);
                m = std::max(m, a);
            }
            m = std::max(m, sink);
            double sum = sink == -kInf || nan ? 0.0 : std::exp(sink - m), l;
            std::fill(acc.begin(), acc.end(), 0.0);
            if (nan || m == kInf) {
                std::fill(acc.begin(), acc.end(), kNaN);
                l = kNaN;
            } else if (m == -kInf) {
                l = -kInf;  // fully masked: o = 0, lse = -inf
            } else {
                for (double a : s) sum += std::exp(a - m);
                for (int64_t j = 0; j < p.Skv; ++j) {
                    const double w = std::exp(s[size_t(j)] - m) / sum;
                    if (w == 0.0) continue;
                    for (int64_t c = 0; c < p.Dv; ++c) acc[size_t(c)] += w * v.load(b, hk, j, c);
                }
                l = m + std::log(sum);
            }
            for (int64_t c = 0; c < p.Dv; ++c) o.store(b, h, i, c, acc[size_t(c)]);
            if (lse.base) lse.store(b, h, i, 0, l);
        }
    });
}

void backward(const OpCall& call, unsigned threads) {
    const AttentionPlan& p = call.attention();
    const Operand q = operand(call, R::kQ), k = operand(call, R::kK), v = operand(call, R::kV);
    const Operand o = operand(call, R::kO), dout = operand(call, R::kDo), lse = operand(call, R::kLse);
    const Operand mask = operand(call, R::kMask);
    const Operand dq = operand(call, R::kDq), dk = operand(call, R::kDk), dv = operand(call, R::kDv);
    // One task per (batch, kv head): it owns dk and dv of that head and dq of the group's q heads.
    struct Scratch {
        std::vector<double> s, capped, dqi, dks, dvs;
    };
    auto make = [&] {
        return Scratch{std::vector<double>(size_t(p.Skv)), std::vector<double>(size_t(p.Skv)), std::vector<double>(size_t(p.D)),
                       std::vector<double>(size_t(p.Skv * p.D)), std::vector<double>(size_t(p.Skv * p.Dv))};
    };
    parallel_for_with_scratch(p.B * p.Hkv, threads, 1, make, [&](int64_t begin, int64_t end, Scratch& sc) {
        std::vector<double>& s = sc.s;
        std::vector<double>& dqi = sc.dqi;
        std::vector<double>& dks = sc.dks;
        std::vector<double>& dvs = sc.dvs;
        for (int64_t bh = begin; bh < end; ++bh) {
            const int64_t b = bh / p.Hkv, hk = bh % p.Hkv;
            std::fill(dks.begin(), dks.end(), 0.0);
            std::fill(dvs.begin(), dvs.end(), 0.0);
            for (int64_t h = hk * p.G; h < (hk + 1) * p.G; ++h)
                for (int64_t i = 0; i < p.Sq; ++i) {
                    scores(p, q, k, mask, b, h, i, s, &sc.capped);
                    const double l = lse.load(b, h, i, 0);
                    double delta = 0.0;
                    for (int64_t c = 0; c < p.Dv; ++c) delta += dout.load(b, h, i, c) * o.load(b, h, i, c);
                    std::fill(dqi.begin(), dqi.end(), 0.0);
                    for (int64_t j = 0; j < p.Skv; ++j) {
                        const double pij = l == -kInf ? 0.0 : std::exp(s[size_t(j)] - l);
                        if (pij == 0.0) continue;
                        double dp = 0.0;
                        for (int64_t c = 0; c < p.Dv; ++c) {
                            const double g = dout.load(b, h, i, c);
                            dp += g * v.load(b, hk, j, c);
                            dvs[size_t(j * p.Dv + c)] += pij * g;
                        }
                        double ds = pij * (dp - delta) * double(p.scale);
                        if (p.softcap > 0.0f) {  // d(c tanh(x / c))/dx = 1 - tanh^2
                            const double t = sc.capped[size_t(j)] / double(p.softcap);
                            ds *= 1.0 - t * t;
                        }
                        for (int64_t c = 0; c < p.D; ++c) {
                            dqi[size_t(c)] += ds * k.load(b, hk, j, c);
                            dks[size_t(j * p.D + c)] += ds * q.load(b, h, i, c);
                        }
                    }
                    for (int64_t c = 0; c < p.D; ++c) dq.store(b, h, i, c, dqi[size_t(c)]);
                }
            for (int64_t j = 0; j < p.Skv; ++j) {
                for (int64_t c = 0; c < p.D; ++c) dk.store(b, hk, j, c, dks[size_t(j * p.D + c)]);
                for (int64_t c = 0; c < p.Dv; ++c) dv.store(b, hk, j, c, dvs[size_t(j * p.Dv + c)]);
            }
        }
    });
}

}  // namespace

void run_attention(const OpCall& call, unsigned threads) {
    if (call.attention().backward) backward(call, threads);
    else forward(call, threads);
}

void register_attention_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Attention, run_attention}); }

}  // namespace cpu
}  // namespace tgl
