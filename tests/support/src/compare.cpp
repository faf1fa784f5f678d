// Result comparison: NMSE with matching NaN/inf positions, per-element, exact and bit-exact modes for
// floats, exact equality for integer dtypes and bool.
#include "tgl_test/support.h"

#include <algorithm>
#include <cfloat>
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

std::string fmt_value(tgl_dtype dt, double v) {
    char buf[64];
    switch (dt) {
    case TGL_DTYPE_F32:
        return fmt(bits_float(f64_to_f32_bits(v)));
    case TGL_DTYPE_F16: case TGL_DTYPE_BF16: {
        const uint32_t bits = value_to_bits(dt, v);
        if (std::isnan(v)) std::snprintf(buf, sizeof buf, "nan(0x%04x)", bits);
        else std::snprintf(buf, sizeof buf, "%s (0x%04x)", fmt(bits_float(f64_to_f32_bits(v))).c_str(), bits);
        return buf;
    }
    case TGL_DTYPE_BOOL:
        if (v == 0 || v == 1) return v == 1 ? "true" : "false";
        if (v == std::floor(v) && v >= 0 && v <= 255) {
            std::snprintf(buf, sizeof buf, "0x%02x (not a bool)", unsigned(v));
            return buf;
        }
        break;
    default:
        if (v == std::floor(v) && std::fabs(v) < 9.0e15) {
            std::snprintf(buf, sizeof buf, "%lld", (long long)v);
            return buf;
        }
    }
    std::snprintf(buf, sizeof buf, "%.17g", v);  // not a value of dt (a wrong expectation)
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

::testing::AssertionResult size_mismatch(const std::string& label, size_t got, size_t expected, const Shape& shape) {
    if (got == expected) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << label << ": " << got << " values, expected " << expected << " (shape "
                                         << shape_str(shape) << ")";
}

// Floats of dtype dt; got(i) and want(i) give element i as double.
template <class Got, class Want>
::testing::AssertionResult compare_floats(tgl_dtype dt, size_t n, Got got, Want want, const Shape& shape,
                                          double tolerance, CompareMode mode, const std::string& label) {
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
    for (size_t i = 0; i < n; ++i) {
        const double g = got(i), e = want(i);
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
        // GLSL ES lets a GPU flush f32 subnormals to zero (NVIDIA does): in the tolerance modes a
        // result and an expectation that are both below the smallest normal f32 count as equal.
        const bool both_subnormal = std::fabs(g) < double(FLT_MIN) && std::fabs(e) < double(FLT_MIN);
        const double d = (both_subnormal && mode != CompareMode::Exact && mode != CompareMode::ExactBits) ? 0.0 : g - e;
        const double sq = d * d, esq = e * e;
        num += sq;
        den += esq;
        if (mode == CompareMode::Exact) {
            if (g != e) {
                ++element_fail;
                keep(std::fabs(d), int64_t(i), "not equal");
            }
        } else if (mode == CompareMode::ExactBits) {
            // Widening to double is one-to-one, so equal doubles of equal sign are equal bits.
            if (g != e || std::signbit(g) != std::signbit(e)) {
                ++element_fail;
                keep(d != 0 ? std::fabs(d) : DBL_MIN, int64_t(i), "bits differ");
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
    const char* mode_name = mode == CompareMode::Exact       ? "exact"
                            : mode == CompareMode::ExactBits ? "exact-bits"
                            : mode == CompareMode::PerElement ? "per-element"
                                                              : "NMSE";
    std::snprintf(head, sizeof head,
                  "%s differs (%s%s comparison, tolerance %.3g, shape %s, %zu elements): NMSE %.6g over %lld finite "
                  "element(s); %lld NaN mismatch(es), %lld inf mismatch(es)%s",
                  label.c_str(), dt == TGL_DTYPE_F32 ? "" : (dtype_name(dt) + " ").c_str(), mode_name, tolerance,
                  shape_str(shape).c_str(), n, nmse, (long long)finite, (long long)nan_mismatch, (long long)inf_mismatch,
                  mode == CompareMode::Nmse ? "" : (", " + std::to_string(element_fail) + " element(s) off").c_str());
    auto r = ::testing::AssertionFailure();
    r << head << "\n  worst elements (index: got | expected | abs err | rel err):";
    std::sort(worst.begin(), worst.end(), [](const Worst& a, const Worst& b) {
        return a.badness != b.badness ? a.badness > b.badness : a.index < b.index;
    });
    for (const Worst& w : worst) {
        const double g = got(size_t(w.index)), e = want(size_t(w.index));
        const double ad = std::fabs(g - e);
        char line[384];
        std::snprintf(line, sizeof line, "\n    %s: %s | %s | %.3g | %.3g%s%s", index_str(w.index, shape).c_str(),
                      fmt_value(dt, g).c_str(), fmt_value(dt, e).c_str(), ad, e != 0 ? ad / std::fabs(e) : ad,
                      w.why.empty() ? "" : "  <- ", w.why.c_str());
        r << line;
    }
    r << "\n  [" << reproduce_hint() << "]";
    return r;
}

// Integer dtypes and bool: exact, the first mismatches in index order.
::testing::AssertionResult compare_integers(tgl_dtype dt, const std::vector<double>& got,
                                            const std::vector<double>& expected, const Shape& shape,
                                            const std::string& label) {
    const size_t kShow = 8;
    const double poison = bits_to_value(dt, poison_bits(dt));
    int64_t mismatches = 0;
    std::string lines;
    for (size_t i = 0; i < got.size(); ++i) {
        if (got[i] == expected[i]) continue;
        if (size_t(mismatches++) >= kShow) continue;
        lines += "\n    " + index_str(int64_t(i), shape) + ": " + fmt_value(dt, got[i]) + " | " +
                 fmt_value(dt, expected[i]);
        if (got[i] == poison) lines += "  <- the poison pattern (never written?)";
    }
    if (mismatches == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << label << " differs (exact " << dtype_name(dt) << " comparison, shape " << shape_str(shape) << ", "
           << got.size() << " elements): " << mismatches << " element(s) differ; the first (index: got | expected):"
           << lines << (size_t(mismatches) > kShow ? "\n    ..." : "") << "\n  [" << reproduce_hint() << "]";
}

std::string label_of(const std::string& what) { return what.empty() ? std::string("result") : what; }

}  // namespace

::testing::AssertionResult compare(const std::vector<float>& got, const std::vector<float>& expected,
                                   const Shape& shape, double tolerance, CompareMode mode, const std::string& what) {
    const std::string label = label_of(what);
    if (auto r = size_mismatch(label, got.size(), expected.size(), shape); !r) return r;
    return compare_floats(
        TGL_DTYPE_F32, got.size(), [&](size_t i) { return double(got[i]); },
        [&](size_t i) { return double(expected[i]); }, shape, tolerance, mode, label);
}

::testing::AssertionResult compare(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& expected,
                                   const Shape& shape, double tolerance, CompareMode mode, const std::string& what) {
    const std::string label = label_of(what);
    if (auto r = size_mismatch(label, got.size(), expected.size(), shape); !r) return r;
    if (!is_float_dtype(dt)) return compare_integers(dt, got, expected, shape, label);
    const bool round_expected = mode == CompareMode::Exact || mode == CompareMode::ExactBits;
    return compare_floats(
        dt, got.size(), [&](size_t i) { return got[i]; },
        [&](size_t i) { return round_expected ? round_to_dtype(dt, expected[i]) : expected[i]; }, shape, tolerance,
        mode, label);
}

}  // namespace tgl_test
