// Result comparison: NMSE with matching NaN/inf positions, per-element and exact modes.
#include "tgl_test/support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tgl_test {

double tol::for_op(tgl_op op) {
    switch (op) {
    case TGL_OP_SIGMOID: case TGL_OP_TANH: case TGL_OP_EXP: case TGL_OP_LOG: case TGL_OP_GELU:
    case TGL_OP_SILU: case TGL_OP_POW:
        return kTranscendental;
    case TGL_OP_SUM: case TGL_OP_MEAN: case TGL_OP_MAX: case TGL_OP_MIN: case TGL_OP_PROD:
        return kReduction;
    case TGL_OP_MATMUL:
        return kMatmul;
    default:
        return kElementwise;
    }
}

std::string fmt(float f) {
    char buf[64];
    if (std::isnan(f)) std::snprintf(buf, sizeof buf, "nan(0x%08x)", float_bits(f));
    else if (std::isinf(f)) std::snprintf(buf, sizeof buf, "%sinf", f < 0 ? "-" : "+");
    else if (f == 0.0f) std::snprintf(buf, sizeof buf, "%s0", std::signbit(f) ? "-" : "");
    else std::snprintf(buf, sizeof buf, "%.9g", double(f));
    return buf;
}

namespace {

std::string index_str(int64_t linear, const Shape& shape) {
    if (shape.empty()) return "[]";
    std::vector<int64_t> idx(shape.size());
    for (size_t d = shape.size(); d-- > 0;) {
        int64_t n = std::max<int64_t>(shape[d], 1);
        idx[d] = linear % n;
        linear /= n;
    }
    std::string s = "[";
    for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
    return s + "]";
}

struct Worst {
    double badness;
    int64_t index;
    std::string why;
};

}  // namespace

::testing::AssertionResult compare(const std::vector<float>& got, const std::vector<float>& expected,
                                   const Shape& shape, double tolerance, CompareMode mode, const std::string& what) {
    const std::string label = what.empty() ? std::string("result") : what;
    if (got.size() != expected.size())
        return ::testing::AssertionFailure() << label << ": " << got.size() << " values, expected " << expected.size()
                                             << " (shape " << shape_str(shape) << ")";
    const size_t kKeep = 8;
    std::vector<Worst> worst;  // min-heap on badness, at most kKeep
    auto keep = [&](double badness, int64_t i, const char* why) {
        auto cmp = [](const Worst& a, const Worst& b) { return a.badness > b.badness; };
        if (worst.size() < kKeep) {
            worst.push_back({badness, i, why});
            std::push_heap(worst.begin(), worst.end(), cmp);
        } else if (badness > worst.front().badness) {
            std::pop_heap(worst.begin(), worst.end(), cmp);
            worst.back() = {badness, i, why};
            std::push_heap(worst.begin(), worst.end(), cmp);
        }
    };

    int64_t nan_mismatch = 0, inf_mismatch = 0, finite = 0, element_fail = 0;
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < got.size(); ++i) {
        const float g = got[i], e = expected[i];
        if (std::isnan(e) || std::isnan(g)) {
            if (std::isnan(e) != std::isnan(g)) {
                ++nan_mismatch;
                keep(HUGE_VAL, int64_t(i), "NaN mismatch");
            }
            continue;
        }
        if (std::isinf(e) || std::isinf(g)) {
            if (g != e) {
                ++inf_mismatch;
                keep(HUGE_VAL, int64_t(i), std::isinf(e) && std::isinf(g) ? "inf sign mismatch" : "inf mismatch");
            }
            continue;
        }
        ++finite;
        const double d = double(g) - double(e);
        const double sq = d * d, esq = double(e) * double(e);
        num += sq;
        den += esq;
        if (mode == CompareMode::Exact) {
            if (g != e) {
                ++element_fail;
                keep(std::fabs(d), int64_t(i), "not equal");
            }
        } else if (mode == CompareMode::PerElement) {
            double err = esq > 0 ? sq / esq : sq;
            if (err > tolerance) {
                ++element_fail;
                keep(err, int64_t(i), "element error above tolerance");
            }
        } else if (d != 0.0) {
            keep(std::fabs(d), int64_t(i), "");
        }
    }
    const double nmse = den > 0 ? num / den : num;
    bool ok = nan_mismatch == 0 && inf_mismatch == 0;
    if (mode == CompareMode::Nmse) ok = ok && nmse <= tolerance;
    else ok = ok && element_fail == 0;
    if (ok) return ::testing::AssertionSuccess();

    char head[512];
    const char* mode_name = mode == CompareMode::Exact ? "exact" : mode == CompareMode::PerElement ? "per-element" : "NMSE";
    std::snprintf(head, sizeof head,
                  "%s differs (%s comparison, tolerance %.3g, shape %s, %zu elements): NMSE %.6g over %lld finite "
                  "element(s); %lld NaN mismatch(es), %lld inf mismatch(es)%s",
                  label.c_str(), mode_name, tolerance, shape_str(shape).c_str(), got.size(), nmse,
                  (long long)finite, (long long)nan_mismatch, (long long)inf_mismatch,
                  mode == CompareMode::Nmse ? "" : (", " + std::to_string(element_fail) + " element(s) off").c_str());
    auto r = ::testing::AssertionFailure();
    r << head << "\n  worst elements (index: got | expected | abs err | rel err):";
    std::sort(worst.begin(), worst.end(), [](const Worst& a, const Worst& b) {
        return a.badness != b.badness ? a.badness > b.badness : a.index < b.index;
    });
    for (const Worst& w : worst) {
        float g = got[size_t(w.index)], e = expected[size_t(w.index)];
        double ad = std::fabs(double(g) - double(e));
        char line[256];
        std::snprintf(line, sizeof line, "\n    %s: %s | %s | %.3g | %.3g%s%s", index_str(w.index, shape).c_str(),
                      fmt(g).c_str(), fmt(e).c_str(), ad, e != 0 ? ad / std::fabs(double(e)) : ad,
                      w.why.empty() ? "" : "  <- ", w.why.c_str());
        r << line;
    }
    r << "\n  [" << reproduce_hint() << "]";
    return r;
}

}  // namespace tgl_test
