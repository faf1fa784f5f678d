// The differential harness: one op with identical inputs (same storage, same views) on the
// reference plugin and on the subject plugin; the subject's output is compared with the
// reference's (NaN/inf positions exactly, NMSE within the op's tolerance), and on both plugins
// guards, out-of-view bytes and inputs are checked unchanged.
#pragma once

#include "tgl_test/op_runner.h"
#include "tgl_test/support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

namespace diff {

using namespace tgl_test;
using namespace tgl_test::dtype_names;

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// A value generator for input storage.
using Gen = std::function<float(Rng&)>;

inline Gen uniform(double lo, double hi) {
    return [lo, hi](Rng& r) { return r.uniformf(float(lo), float(hi)); };
}
// U(lo, hi) with a random sign.
inline Gen signed_uniform(double lo, double hi) {
    return [lo, hi](Rng& r) {
        float v = r.uniformf(float(lo), float(hi));
        return r.chance(0.5) ? -v : v;
    };
}
// Random magnitude 10^U(lo, hi) with a random sign.
inline Gen log_uniform(double lo, double hi) {
    return [lo, hi](Rng& r) {
        float v = float(std::pow(10.0, r.uniform(lo, hi)));
        return r.chance(0.5) ? -v : v;
    };
}
inline Gen integers(int64_t lo, int64_t hi) {
    return [lo, hi](Rng& r) { return float(r.integer(lo, hi)); };
}
// The special values of f32 arithmetic.
inline const std::vector<float>& special_values() {
    static const std::vector<float> v = {kNaN,   kInf,    -kInf,  -0.0f, 0.0f, 1e30f, -1e30f, 1e-30f,
                                         -1e-30f, 1.0f,   -1.0f,  2.0f,  -2.0f, 0.5f, 3.0f};
    return v;
}
// Mostly `base`, sometimes a special value.
inline Gen with_specials(Gen base, double p) {
    return [base, p](Rng& r) { return r.chance(p) ? r.pick(special_values()) : base(r); };
}

struct Operand {
    View view;
    std::vector<float> storage;
};

inline Operand operand(const View& v, Rng& rng, const Gen& gen) {
    Operand o{v, std::vector<float>(static_cast<size_t>(v.storage))};
    for (auto& x : o.storage) x = gen(rng);
    return o;
}

struct Spec {
    tgl_op op = TGL_OP_INVALID;
    bool in_place = false;  // the output is inputs[0]'s view (elementwise ops); `out` is ignored
    std::vector<uint8_t> params;  // the params struct's bytes; empty: NULL
    std::vector<Operand> inputs;
    View out;
    std::vector<float> out_init;  // logical values the output starts with (matmul beta != 0); empty: poisoned
    double tolerance = 0;
    std::string what;  // a description for messages
};

template <class P>
std::vector<uint8_t> param_bytes(const P& p) {
    std::vector<uint8_t> b(sizeof p);
    std::memcpy(b.data(), &p, sizeof p);
    return b;
}

// A device of the subject plugin opened with environment variable `name` set to `value` (the GLES
// plugin reads its TGL_TUNE_* knobs at device_open; other plugins ignore them), kept for the
// process; the variable is restored afterwards. Deliberately never destroyed (as the shared devices
// of tests/support): closing a device from a static destructor at exit, when the plugin's own
// statics may be gone, corrupted the heap ("corrupted double-linked list" after every test had
// passed); a device left open at exit is the plugins' documented case (their threads are joined).
// Several variables at once ({name, value} pairs, set in order).
inline Device& subject_device_with(const std::vector<std::pair<std::string, std::string>>& vars) {
    static auto* devices = new std::map<std::string, std::unique_ptr<Device>>;
    std::string key;
    for (const auto& [name, value] : vars) key += name + "=" + value + ";";
    std::unique_ptr<Device>& d = (*devices)[key];
    if (!d) {
        struct Env {  // restored even when device_open fails
            std::string name, old;
            bool had;
            Env(const std::string& n, const std::string& v) : name(n), had(std::getenv(n.c_str()) != nullptr) {
                if (had) old = std::getenv(n.c_str());
                setenv(n.c_str(), v.c_str(), 1);
            }
            ~Env() { had ? setenv(name.c_str(), old.c_str(), 1) : unsetenv(name.c_str()); }
        };
        std::vector<std::unique_ptr<Env>> env;
        for (const auto& [name, value] : vars) env.push_back(std::make_unique<Env>(name, value));
        d = std::make_unique<Device>(plugin(Role::Subject), 0);
    }
    return *d;
}

inline Device& subject_device_with(const std::string& name, const std::string& value) {
    return subject_device_with({{name, value}});
}

// A fresh file name for a subject's dispatch trace (TGL_GLES_TEST_PLAN_TRACE, backends/gles/
// test_hooks.h: a line per dispatch naming its program and defines), for subject_device_with.
inline std::string plan_trace_path(const std::string& what) {
    static int serial = 0;
    const std::string path =
        ::testing::TempDir() + "tgl_" + what + "_" + std::to_string(::getpid()) + "_" + std::to_string(serial++) + ".trace";
    std::remove(path.c_str());
    return path;
}

// The trace written at `path` into *text, the file removed; false (with a note) where the subject
// wrote none (not the GLES plugin), so that what it would show goes unchecked.
inline bool take_plan_trace(const std::string& path, std::string* text) {
    std::FILE* file = std::fopen(path.c_str(), "r");
    if (!file) {
        std::printf("[ note     ] the subject wrote no dispatch trace (not the GLES plugin): its programs not checked\n");
        return false;
    }
    text->clear();
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, file)) > 0;) text->append(buf, n);
    std::fclose(file);
    std::remove(path.c_str());
    return true;
}

// Runs `spec` on one plugin's shared device (or on `subject`, a device of the subject plugin);
// throws Failure on any error of that plugin.
inline std::vector<float> run_on(Role role, const Spec& spec, Device* subject = nullptr) {
    Device& d = role == Role::Subject && subject ? *subject : shared_device(role);
    const char* who = role == Role::Reference ? "reference" : "subject";
    std::vector<std::unique_ptr<DeviceTensor>> ins;
    std::vector<tgl_tensor> descs;
    for (const Operand& o : spec.inputs) {
        ins.push_back(std::make_unique<DeviceTensor>(d, o.view));
        ins.back()->set_storage(o.storage);
        descs.push_back(ins.back()->desc());
    }
    std::unique_ptr<DeviceTensor> own_out;
    DeviceTensor* out_ptr = spec.in_place ? ins.at(0).get() : nullptr;
    if (!out_ptr) {
        own_out = std::make_unique<DeviceTensor>(d, spec.out);
        out_ptr = own_out.get();
        if (spec.out_init.empty()) out_ptr->poison();
        else out_ptr->prefill(spec.out_init);
    }
    DeviceTensor& out = *out_ptr;
    tgl_status s = d.run(spec.op, spec.params.empty() ? nullptr : spec.params.data(), descs, {out.desc()});
    if (s != TGL_OK)
        throw Failure(std::string(who) + " plugin '" + d.plugin().name() + "' rejected " + spec.what + ": " +
                      tgl_status_name(s) + ": " + d.plugin().last_error());
    std::vector<float> y;
    try {
        y = out.read();
    } catch (const Failure& f) {
        throw Failure(std::string(who) + " plugin '" + d.plugin().name() + "', " + spec.what + ": " + f.what());
    }
    for (size_t i = spec.in_place ? 1 : 0; i < ins.size(); ++i) {
        ::testing::AssertionResult r = ins[i]->unchanged();
        if (!r)
            throw Failure(std::string(who) + " plugin '" + d.plugin().name() + "' modified input " + std::to_string(i) +
                          " of " + spec.what + ": " + r.message());
    }
    return y;
}

inline std::string describe(const Spec& spec) {
    std::string s = spec.what + "\n  inputs:";
    for (size_t i = 0; i < spec.inputs.size(); ++i) s += "\n    [" + std::to_string(i) + "] " + spec.inputs[i].view.describe();
    s += spec.in_place ? std::string("\n  output: in place over input 0") : "\n  output: " + spec.out.describe();
    return s;
}

// Reference vs subject (its shared device, or `subject`); EXPECTs (non-fatal) the comparison.
inline void check(const Spec& spec, Device* subject = nullptr) {
    SCOPED_TRACE(describe(spec));
    std::vector<float> want = run_on(Role::Reference, spec);
    std::vector<float> got = run_on(Role::Subject, spec, subject);
    EXPECT_TRUE(compare(got, want, spec.out.shape, spec.tolerance, CompareMode::Nmse,
                        "subject '" + plugin(Role::Subject).name() + "' vs reference '" +
                            plugin(Role::Reference).name() + "'"));
}

// A call with any operands (any dtypes, several outputs, optional operands absent), compared output
// by output: tolerance and mode per output (integer outputs always compare exactly).
struct MultiSpec {
    tgl_op op = TGL_OP_INVALID;
    std::vector<uint8_t> params;  // the params struct's bytes; empty: NULL
    std::vector<InputArg> inputs;
    std::vector<OutputArg> outputs;
    std::vector<double> tolerance;  // per output (missing entries: 0)
    std::vector<CompareMode> mode;  // per output (missing entries: Nmse)
    std::string what;
};

inline std::string describe(const MultiSpec& spec) {
    std::string s = spec.what + "\n  inputs:";
    for (size_t i = 0; i < spec.inputs.size(); ++i)
        s += "\n    [" + std::to_string(i) + "] " +
             (spec.inputs[i].absent ? std::string("absent")
                                    : dtype_name(spec.inputs[i].dtype) + " " + spec.inputs[i].view.describe());
    s += "\n  outputs:";
    for (size_t i = 0; i < spec.outputs.size(); ++i)
        s += "\n    [" + std::to_string(i) + "] " +
             (spec.outputs[i].absent ? std::string("absent")
                                     : dtype_name(spec.outputs[i].dtype) + " " + spec.outputs[i].view.describe());
    return s;
}

// The outputs of one run: logical values, and the element bits of i64 outputs (whose values are
// doubles, rounded beyond 2^53), which compare bit for bit.
struct RunOutputs {
    std::vector<std::vector<double>> values;
    std::vector<std::vector<uint64_t>> i64_bits;  // empty for other dtypes
};

// Reference vs subject; EXPECTs (non-fatal) each present output's comparison. `subject`: a device
// of the subject plugin other than its shared one (e.g. opened with a test hook).
inline void check(const MultiSpec& spec, Device* subject = nullptr) {
    SCOPED_TRACE(describe(spec));
    const void* params = spec.params.empty() ? nullptr : spec.params.data();
    auto run = [&](Role role) {
        try {
            Device& d = role == Role::Subject && subject ? *subject : shared_device(role);
            OpCall call(d, spec.inputs, spec.outputs);
            const tgl_status s = call.run(spec.op, params);
            if (s != TGL_OK)
                throw Failure("plugin '" + d.plugin().name() + "' failed op " + std::to_string(spec.op) + ": " +
                              tgl_status_name(s) + ": " + d.plugin().last_error());
            RunOutputs r{call.read(), {}};
            for (size_t i = 0; i < spec.outputs.size(); ++i)
                r.i64_bits.push_back(spec.outputs[i].absent || spec.outputs[i].dtype != TGL_DTYPE_I64
                                         ? std::vector<uint64_t>{}
                                         : call.output(i)->read_bits());
            return r;
        } catch (const Failure& f) {
            throw Failure(std::string(role == Role::Reference ? "reference: " : "subject: ") + f.what());
        }
    };
    const RunOutputs ref = run(Role::Reference), sub = run(Role::Subject);
    const std::vector<std::vector<double>>& want = ref.values;
    const std::vector<std::vector<double>>& got = sub.values;
    for (size_t i = 0; i < spec.outputs.size(); ++i) {
        if (spec.outputs[i].absent) continue;
        for (size_t k = 0; k < ref.i64_bits[i].size(); ++k)
            if (sub.i64_bits[i][k] != ref.i64_bits[i][k]) {
                ADD_FAILURE() << "output " << i << ": i64 element " << k << " (logical order) is 0x" << std::hex
                              << sub.i64_bits[i][k] << ", the reference has 0x" << ref.i64_bits[i][k] << std::dec;
                break;
            }
        double tol = i < spec.tolerance.size() ? spec.tolerance[i] : 0.0;
        CompareMode mode = i < spec.mode.size() ? spec.mode[i] : CompareMode::Nmse;
        EXPECT_TRUE(compare(spec.outputs[i].dtype, got[i], want[i], spec.outputs[i].view.shape, tol, mode,
                            "output " + std::to_string(i) + ", subject '" + plugin(Role::Subject).name() +
                                "' vs reference '" + plugin(Role::Reference).name() + "'"));
    }
}

// check(MultiSpec) from its parts: NMSE per output with tolerances `tol` (missing entries: 0).
inline void check_op(tgl_op op, const std::vector<uint8_t>& params, std::vector<InputArg> ins,
                     std::vector<OutputArg> outs, std::vector<double> tol, const std::string& what) {
    MultiSpec s;
    s.op = op;
    s.params = params;
    s.inputs = std::move(ins);
    s.outputs = std::move(outs);
    s.tolerance = std::move(tol);
    s.what = what;
    check(s);
}

// For shapes a plugin may refuse as too long for its driver's loops (the GLES plugin on llvmpipe,
// where no split of the loop exists): either the subject refuses with TGL_ERROR_RESOURCE_EXHAUSTED
// naming the loop budget, or its result matches the reference. Never TGL_OK over a wrong result.
inline void check_or_loop_refusal(const MultiSpec& spec) {
    try {
        run_op_values(shared_device(Role::Subject), spec.op, spec.params.empty() ? nullptr : spec.params.data(), spec.inputs,
                      spec.outputs);
    } catch (const Failure& f) {
        const std::string m = f.what();
        EXPECT_TRUE(m.find("TGL_ERROR_RESOURCE_EXHAUSTED") != std::string::npos && m.find("loop") != std::string::npos)
            << spec.what << ": " << m;
        // The refusal loses nothing: the device still computes.
        check_op(TGL_OP_ADD, {}, {input_values(TGL_DTYPE_F32, {2}, {1, 2}), input_values(TGL_DTYPE_F32, {2}, {3, 4})},
                 {output_of(TGL_DTYPE_F32, {2})}, {0.0}, "an add after the refusal");
        return;
    }
    check(spec);
}

// A named case: builds its Spec from the case's random stream.
struct Case {
    std::string name;
    std::function<Spec(Rng&)> build;
};

inline std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }
// gtest prints a failing case's parameter with this (instead of its bytes).
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

// ----- worst element in ulps ---------------------------------------------------------------------
// NMSE hides a few bad elements among many good ones. A ulp case runs one value range of one
// elementwise op (unary_diff.cpp, binary_diff.cpp) and bounds the worst finite element in ulps of
// the reference (the f32 rounding of the double result); NaN and infinities must match exactly.
// Results below 2^-100 in magnitude (tiny values a GPU may flush) are skipped. The measured worst
// value is printed.
struct UlpCase {
    std::string name, op_name, range;
    tgl_op op;
    std::function<Spec(Rng&)> build;
};

inline std::string ulp_case_name(const ::testing::TestParamInfo<UlpCase>& info) { return info.param.name; }
inline void PrintTo(const UlpCase& c, std::ostream* os) { *os << c.name; }

// The distance of two floats in ulps (0 and -0 are one value).
inline double ulp_diff(float a, float b) {
    auto ordered = [](float f) {
        int32_t i;
        std::memcpy(&i, &f, 4);
        return i < 0 ? -int64_t(i & 0x7fffffff) : int64_t(i);
    };
    return double(std::llabs(ordered(a) - ordered(b)));
}

inline void expect_worst_ulp_within(const UlpCase& c, Rng& rng, double max_ulp) {
    Spec spec = c.build(rng);
    SCOPED_TRACE(describe(spec));
    std::vector<float> want = run_on(Role::Reference, spec);
    std::vector<float> got = run_on(Role::Subject, spec);
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i]) || std::isnan(got[i]) || std::isinf(want[i]) || std::isinf(got[i])) {
            EXPECT_EQ(std::isnan(want[i]), std::isnan(got[i])) << "element " << i;
            if (!std::isnan(want[i])) {
                EXPECT_EQ(want[i], got[i]) << "element " << i;
            }
            continue;
        }
        if (std::fabs(want[i]) < 7.888609e-31f && std::fabs(got[i]) < 7.888609e-31f) continue;  // both below 2^-100
        double d = ulp_diff(got[i], want[i]);
        if (d > worst) {
            worst = d;
            at = i;
        }
    }
    std::printf("[ ulp ] %-20s %-16s worst %.0f ulp (element %zu: got %s, want %s)\n", c.op_name.c_str(),
                c.range.c_str(), worst, at, fmt(got[at]).c_str(), fmt(want[at]).c_str());
    EXPECT_LE(worst, max_ulp) << "element " << at << ": got " << fmt(got[at]) << ", want " << fmt(want[at]);
}

// Whether both plugins implement `op` (query_op reports supported).
inline bool both_support(tgl_op op) {
    for (Role r : {Role::Reference, Role::Subject}) {
        tgl_op_caps caps;
        std::memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        if (plugin(r).api().query_op(op, &caps) != TGL_OK || !caps.supported) return false;
    }
    return true;
}

// Shape as a name fragment: (2, 3, 5) -> "2x3x5", () -> "scalar".
inline std::string shape_name(const Shape& s) {
    if (s.empty()) return "scalar";
    std::string n;
    for (size_t i = 0; i < s.size(); ++i) n += (i ? "x" : "") + std::to_string(s[i]);
    return n;
}

// Layout kinds a case can ask for; `make_layout` turns them into a Layout with the case's rng.
enum class Kind { Contiguous, Permuted, Stepped, Negative, Broadcast, Padded, Mixed };

inline const char* kind_name(Kind k) {
    switch (k) {
    case Kind::Contiguous: return "contiguous";
    case Kind::Permuted: return "permuted";
    case Kind::Stepped: return "stepped";
    case Kind::Negative: return "negstride";
    case Kind::Broadcast: return "stride0";
    case Kind::Padded: return "padded";
    case Kind::Mixed: return "mixed";
    }
    return "?";
}

inline Layout make_layout(Kind k, const Shape& shape, Rng& rng, bool input) {
    switch (k) {
    case Kind::Contiguous: return Layout{};
    case Kind::Permuted: return permuted_layout(int(shape.size()), rng);
    case Kind::Stepped: return stepped_layout(int(shape.size()), rng);
    case Kind::Negative: return negative_layout(int(shape.size()), rng);
    case Kind::Broadcast: return input ? broadcast_layout(shape, rng) : Layout{};
    case Kind::Padded: return padded_layout(rng);
    case Kind::Mixed: return random_layout(shape, rng, input);
    }
    return Layout{};
}

inline View view_of(const Shape& shape, Kind k, Rng& rng, bool input) {
    return make_view(shape, make_layout(k, shape, rng, input));
}
// The same for an operand of dtype dt: a contiguous view of a 1- or 2-byte dtype starts at an odd
// element offset half of the time (misaligned_layout: its first and last elements share words).
inline View view_of(const Shape& shape, Kind k, Rng& rng, bool input, tgl_dtype dt) {
    if (k == Kind::Contiguous && dtype_size(dt) < 4 && rng.chance(0.5)) return make_view(shape, misaligned_layout(rng));
    return view_of(shape, k, rng, input);
}

// A random view of `shape` of any non-broadcasting kind (inputs: Mixed may broadcast); views of
// 1- and 2-byte dtypes also start inside a word 30% of the time.
inline View random_view(const Shape& shape, tgl_dtype dt, Rng& rng, bool input) {
    static const std::vector<Kind> kinds = {Kind::Contiguous, Kind::Permuted, Kind::Stepped,
                                            Kind::Negative,   Kind::Padded,   Kind::Mixed};
    if (dtype_size(dt) < 4 && rng.chance(0.3)) return make_view(shape, misaligned_layout(rng));
    return view_of(shape, rng.pick(kinds), rng, input);
}

// i64 elements as bits: any 64-bit pattern, often one of the edges (INT64_MIN/MAX, +-2^31,
// +-2^53 +- 1, rounding ties of f32 and bf16 past 2^53); small: [-3, 3].
inline Storage i64_storage(int64_t n, Rng& rng, bool small) {
    static const std::vector<uint64_t> edges = {
        0x8000000000000000ull, 0x7fffffffffffffffull, 0x80000000ull, 0xffffffff7fffffffull, 0xffffffffull,
        0x100000000ull, 0x20000000000001ull, 0xffdfffffffffffffull, 0x1000001000000001ull, 0x1010000000000001ull,
        0x1000002000000000ull, 0, 1, ~0ull};
    Storage s = Storage::zeros(TGL_DTYPE_I64, n);
    for (int64_t i = 0; i < n; ++i)
        s.set_bits(i, small ? uint64_t(rng.integer(-3, 3))
                            : rng.chance(0.3) ? rng.pick(edges) : uint64_t(rng.integer(INT64_MIN, INT64_MAX)));
    return s;
}

// An output of `shape` and dtype `dt` seen through a random view (strided, offset, permuted: the
// outputs of an op are checked in every layout), or contiguous when `layouts` is false.
inline OutputArg rand_output(tgl_dtype dt, const Shape& shape, Rng& rng, bool layouts = true) {
    OutputArg o;
    o.dtype = dt;
    o.view = layouts ? random_view(shape, dt, rng, false) : contiguous(shape);
    return o;
}

// gguf_diff.cpp: one random GGUF block-dtype case of op (dequantize; linear, grouped_linear and
// index_select with a block operand), subject against reference; the fuzzer of fuzz_diff.cpp.
void gguf_fuzz_case(tgl_op op, Rng& r);

}  // namespace diff
