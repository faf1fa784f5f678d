// Helpers of the conformance suite: run one op on the configured plugin's device 0 with guarded,
// poisoned tensors and return its (checked) output; error assertions.
#pragma once

#include "tgl_test/op_runner.h"
#include "tgl_test/support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace conf {

using namespace tgl_test;
using namespace tgl_test::dtype_names;

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const double dInf = std::numeric_limits<double>::infinity();
const double dNaN = std::numeric_limits<double>::quiet_NaN();

inline Device& dev() { return shared_device(Role::Plugin); }
inline Plugin& plug() { return plugin(Role::Plugin); }

// Expected values written as doubles (computed by hand or by an obvious formula), rounded to f32.
inline std::vector<float> f32(std::initializer_list<double> v) {
    std::vector<float> out;
    for (double d : v) out.push_back(static_cast<float>(d));
    return out;
}

inline std::vector<float> iota_values(int64_t n, float start = 1.0f, float step = 1.0f) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = start + step * float(i);
    return v;
}

inline tgl_reduce_params reduce_params(std::vector<int> axes, bool keepdims) {
    tgl_reduce_params p{};
    p.struct_size = sizeof p;
    p.keepdims = keepdims ? 1 : 0;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    return p;
}

inline tgl_matmul_params matmul_params(bool ta, bool tb, float alpha, float beta) {
    tgl_matmul_params p{};
    p.struct_size = sizeof p;
    p.transpose_a = ta ? 1 : 0;
    p.transpose_b = tb ? 1 : 0;
    p.alpha = alpha;
    p.beta = beta;
    return p;
}

// Per element: (a - b)^2 / b^2 <= tolerance (values of transcendental ops, see tol::kTranscendental).
inline ::testing::AssertionResult close_to(const std::vector<float>& got, const std::vector<float>& want, double tolerance) {
    return compare(got, want, Shape{int64_t(want.size())}, tolerance, CompareMode::PerElement);
}
// Equal element by element (0 == -0; zero_signs checks the signs).
inline ::testing::AssertionResult exact(const std::vector<float>& got, const std::vector<float>& want, Shape shape = {}) {
    if (shape.empty()) shape = {int64_t(want.size())};
    return compare(got, want, shape, 0.0, CompareMode::Exact);
}
// compare() takes 0 == -0; the sign of every expected zero is checked here.
inline ::testing::AssertionResult zero_signs(const std::vector<float>& got, const std::vector<float>& want) {
    for (size_t i = 0; i < want.size() && i < got.size(); ++i)
        if (want[i] == 0.0f && got[i] == 0.0f && std::signbit(want[i]) != std::signbit(got[i]))
            return ::testing::AssertionFailure() << "element " << i << " is " << fmt(got[i]) << ", expected "
                                                 << fmt(want[i]);
    return ::testing::AssertionSuccess();
}

// Whether the plugin under test implements `op` (query_op reports supported).
inline bool supported(tgl_op op) {
    tgl_op_caps caps;
    std::memset(&caps, 0, sizeof caps);
    caps.struct_size = sizeof caps;
    return plug().api().query_op(op, &caps) == TGL_OK && caps.supported != 0;
}

// n random integers in [lo, hi] as floats: every sum, product and difference of a few is exact.
inline std::vector<float> small_ints(Rng& rng, int64_t n, int lo = -5, int hi = 5) {
    std::vector<float> v(size_t(std::max<int64_t>(n, 0)));
    for (float& x : v) x = float(rng.integer(lo, hi));
    return v;
}

// Runs `op` with contiguous inputs of the given shapes/values and a poisoned contiguous output of
// shape `out_shape`. Checks guards, that every output element was written, and that the inputs
// are unchanged; returns the output. c_init prefills the output (matmul with beta != 0).
inline std::vector<float> run(tgl_op op, const void* params, const std::vector<Shape>& in_shapes,
                              const std::vector<std::vector<float>>& in_values, const Shape& out_shape,
                              const std::vector<float>* out_init = nullptr) {
    Device& d = dev();
    std::vector<std::unique_ptr<DeviceTensor>> ins;
    std::vector<tgl_tensor> in_desc;
    for (size_t i = 0; i < in_shapes.size(); ++i) {
        ins.push_back(std::make_unique<DeviceTensor>(d, contiguous(in_shapes[i])));
        ins.back()->set_values(in_values[i]);
        in_desc.push_back(ins.back()->desc());
    }
    DeviceTensor out(d, contiguous(out_shape));
    if (out_init) out.prefill(*out_init);
    else out.poison();
    d.run_ok(op, params, in_desc, {out.desc()});
    std::vector<float> y = out.read();
    for (size_t i = 0; i < ins.size(); ++i) {
        ::testing::AssertionResult r = ins[i]->unchanged();
        if (!r) throw Failure("input " + std::to_string(i) + " was modified by the op: " + r.message());
    }
    return y;
}

inline std::vector<float> unary(tgl_op op, const std::vector<float>& x, const void* params = nullptr) {
    Shape s{int64_t(x.size())};
    return run(op, params, {s}, {x}, s);
}

inline std::vector<float> binary(tgl_op op, const Shape& as, const std::vector<float>& a, const Shape& bs,
                                 const std::vector<float>& b, const Shape& ys) {
    return run(op, nullptr, {as, bs}, {a, b}, ys);
}

// Elementwise binary on equal-length 1-D operands.
inline std::vector<float> binary1(tgl_op op, const std::vector<float>& a, const std::vector<float>& b) {
    Shape s{int64_t(a.size())};
    return run(op, nullptr, {s, s}, {a, b}, s);
}

inline std::vector<float> reduce(tgl_op op, const Shape& xs, const std::vector<float>& x, std::vector<int> axes,
                                 bool keepdims, const Shape& ys) {
    tgl_reduce_params p = reduce_params(std::move(axes), keepdims);
    return run(op, &p, {xs}, {x}, ys);
}

// status == want, and the plugin's message (read right after the call on this thread) is
// non-empty and contains every token.
inline ::testing::AssertionResult is_error(tgl_status status, tgl_status want, const std::string& message,
                                           const std::vector<std::string>& tokens) {
    if (status != want)
        return ::testing::AssertionFailure() << "status " << tgl_status_name(status) << " (" << status << "), expected "
                                             << tgl_status_name(want) << " (" << want << "); message: \"" << message
                                             << "\"";
    if (message.empty()) return ::testing::AssertionFailure() << tgl_status_name(status) << " with an empty message";
    for (const std::string& t : tokens)
        if (message.find(t) == std::string::npos)
            return ::testing::AssertionFailure() << tgl_status_name(status) << " message \"" << message
                                                 << "\" does not name \"" << t << "\"";
    return ::testing::AssertionSuccess() << message;
}

// EXPECT_ERROR(call, TGL_ERROR_X, {"token", ...}): runs call, reads the message at once.
#define EXPECT_TGL_ERROR(call, want, ...)                                                     \
    do {                                                                                      \
        tgl_status status_ = (call);                                                          \
        std::string message_ = ::conf::plug().last_error();                                   \
        EXPECT_TRUE(::conf::is_error(status_, want, message_, __VA_ARGS__)) << "call: " #call; \
    } while (0)

class ConformanceTest : public SeededTest {};

// Element bits (i64 values travel as bits: the test support's doubles round past 2^53).
using Bits = std::vector<uint64_t>;

// An input of dtype dt whose elements have exactly these bits (contiguous).
inline InputArg bits_input(tgl_dtype dt, const Shape& shape, const Bits& bits) {
    InputArg a;
    a.dtype = dt;
    a.view = contiguous(shape);
    a.storage = Storage::zeros(dt, int64_t(bits.size()));
    for (size_t i = 0; i < bits.size(); ++i) a.storage.set_bits(int64_t(i), bits[i]);
    return a;
}
inline InputArg i64_input(const Shape& shape, const std::vector<int64_t>& v) {
    return bits_input(TGL_DTYPE_I64, shape, Bits(v.begin(), v.end()));
}

// Runs op (guards, poison and inputs checked) and returns output `k`'s element bits.
inline Bits run_bits(tgl_op op, const void* params, const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs,
                     size_t k = 0) {
    tgl_test::OpCall call(dev(), ins, outs);
    const tgl_status s = call.run(op, params);
    if (s != TGL_OK) throw Failure(std::string("op failed: ") + tgl_status_name(s) + ": " + plug().last_error());
    call.read();
    return call.output(k)->read_bits();
}

// Runs `op` on the shared device with operands made from `ins` and `outs` and expects status `want`
// with a message naming every token, and every output untouched (nothing written on error).
inline void expect_rejected(tgl_op op, const void* params, const std::vector<InputArg>& ins,
                            const std::vector<OutputArg>& outs, tgl_status want, const std::vector<std::string>& tokens) {
    tgl_test::OpCall call(dev(), ins, outs);
    EXPECT_TGL_ERROR(call.run(op, params), want, tokens);
    EXPECT_TRUE(call.all_unchanged());
}

// An op call with an out-of-range index, and what its message must name.
struct IndexErrorCase {
    std::string name;
    tgl_op op;
    const void* params;
    std::vector<InputArg> in;
    OutputArg out;
    std::vector<std::string> tokens;
};

// Runs c: the CPU plugin fails run_op, the GLES plugin the next waiting call (synchronize).
// Expects TGL_ERROR_INDEX_OUT_OF_RANGE naming every token, nothing written, and the error reported
// once (the next synchronize succeeds).
inline void expect_index_out_of_range(const IndexErrorCase& c) {
    Device& d = dev();
    tgl_test::OpCall call(d, c.in, {c.out});
    tgl_status st = call.run(c.op, c.params);
    std::string msg = plug().last_error();
    if (st == TGL_OK) {
        st = d.api().synchronize(d.handle());
        msg = plug().last_error();
    }
    EXPECT_TRUE(is_error(st, TGL_ERROR_INDEX_OUT_OF_RANGE, msg, c.tokens)) << c.name;
    EXPECT_TRUE(call.all_unchanged()) << c.name;
    EXPECT_EQ(d.api().synchronize(d.handle()), TGL_OK) << plug().last_error();
}

}  // namespace conf
