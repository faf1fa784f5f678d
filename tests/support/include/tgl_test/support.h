// tgl_test_support: what the conformance and differential suites share.
//
//   - configuration: which plugin(s) to test (--plugin=, --reference=, --subject= or the
//     environment), loaded through libtensorgl (tgl_plugin_load), device 0 opened once;
//   - seeds: one fresh random seed per run, TGL_TEST_SEED=<n> overrides it; every case derives its
//     own stream from (seed, test name), so one case is reproducible on its own; the seed is
//     printed at the start and in every failure;
//   - views: a logical tensor placed in a flat element array ("storage") as a permutation, a slice
//     with steps (negative too), with broadcast (stride 0) dims or with padding around it;
//   - device tensors surrounded by guard bytes, output views poisoned before a run, and after it
//     every guard byte and every byte the view does not cover checked unchanged;
//   - comparison: NMSE with NaN/inf positions required to match, per-element and exact modes, and a
//     report of the worst elements.
//
// Helpers report broken preconditions (a failing buffer call, corrupted guard bytes) by throwing
// tgl_test::Failure; gtest turns an exception escaping a test into a failure of that test.
#pragma once

#include <tensorgl/loader.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace tgl_test {

// ------------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------------

enum class Mode { Conformance, Differential };
enum class Role { Plugin, Reference, Subject };

struct Config {
    std::string plugin;     // conformance: --plugin=<path> or TGL_TEST_PLUGIN
    std::string reference;  // differential: --reference=<path> or TGL_TEST_REFERENCE
    std::string subject;    // differential: --subject=<path> or TGL_TEST_SUBJECT
    uint64_t seed = 0;
    bool seed_from_env = false;
};

// Call after testing::InitGoogleTest(): parses and removes this suite's flags, picks the seed,
// prints it, and installs the failure listener and the environment that closes shared devices.
// Exits with status 2 and a usage message when a required flag is missing or unknown.
void init(int* argc, char** argv, Mode mode);
const Config& config();

struct Failure : std::runtime_error {
    explicit Failure(const std::string& what);  // appends the seed hint
};

// ------------------------------------------------------------------------------------------------
// Seeds and random numbers
// ------------------------------------------------------------------------------------------------

uint64_t run_seed();
// "TGL_TEST_SEED=<n> reproduces this run (add --gtest_filter=<test> to run one case)"
std::string reproduce_hint();
// "Suite.Name" (with the parameter suffix for value-parameterized tests), or "" outside a test.
std::string current_test_name();
// A seed derived from (run seed, current test name, extra).
uint64_t case_seed(const std::string& extra = "");

class Rng {
public:
    explicit Rng(uint64_t seed) : engine_(seed) {}
    double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine_); }
    float uniformf(float lo, float hi) { return static_cast<float>(uniform(lo, hi)); }
    int64_t integer(int64_t lo, int64_t hi) {  // inclusive
        return std::uniform_int_distribution<int64_t>(lo, hi)(engine_);
    }
    bool chance(double p) { return uniform(0.0, 1.0) < p; }
    template <class T> const T& pick(const std::vector<T>& v) { return v[size_t(integer(0, int64_t(v.size()) - 1))]; }
    std::mt19937_64& engine() { return engine_; }

private:
    std::mt19937_64 engine_;
};

Rng case_rng(const std::string& extra = "");

// Base fixture: carries the seed in a trace (printed with every failure of the test) and a random
// stream derived from (seed, test name).
class SeededTest : public ::testing::Test {
protected:
    SeededTest();
    ::testing::ScopedTrace trace_;
    Rng rng_;
};

template <class P>
class SeededTestWithParam : public ::testing::TestWithParam<P> {
protected:
    SeededTestWithParam() : trace_(__FILE__, __LINE__, reproduce_hint()), rng_(case_seed()) {}
    ::testing::ScopedTrace trace_;
    Rng rng_;
};

// ------------------------------------------------------------------------------------------------
// Plugins and devices
// ------------------------------------------------------------------------------------------------

class Plugin {
public:
    explicit Plugin(const std::string& name_or_path);  // throws Failure with the loader's message
    ~Plugin();
    Plugin(const Plugin&) = delete;
    Plugin& operator=(const Plugin&) = delete;

    const tgl_plugin_api& api() const { return *api_; }
    tgl_plugin* raw() const { return plugin_; }
    const std::string& name() const { return name_; }
    const std::string& path() const { return path_; }
    // Copy of the plugin's per-thread last error message.
    std::string last_error() const;

private:
    tgl_plugin* plugin_ = nullptr;
    const tgl_plugin_api* api_ = nullptr;
    std::string name_, path_;
};

// The configured plugin of a role, loaded at first use (throws Failure if it is not configured).
Plugin& plugin(Role role = Role::Plugin);

class Device {
public:
    explicit Device(Plugin& plugin, uint32_t index = 0);  // throws Failure
    ~Device();                                            // closes if still open
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    tgl_device handle() const { return device_; }
    Plugin& plugin() const { return plugin_; }
    const tgl_plugin_api& api() const { return plugin_.api(); }
    void close();  // throws Failure if device_close fails

    // Throwing wrappers (Failure names the call, the status and the plugin's message).
    tgl_buffer alloc(uint64_t bytes);
    void free(tgl_buffer buffer);
    void upload(tgl_buffer buffer, uint64_t offset, const void* src, uint64_t bytes);
    void download(tgl_buffer buffer, uint64_t offset, void* dst, uint64_t bytes);
    void fill(tgl_buffer buffer, uint64_t offset, uint64_t bytes, const void* pattern, uint32_t size);
    void synchronize();

    // run_op returning the status (no throw).
    tgl_status run(tgl_op op, const void* params, const std::vector<tgl_tensor>& inputs,
                   const std::vector<tgl_tensor>& outputs);
    // run_op that throws Failure unless it returns TGL_OK.
    void run_ok(tgl_op op, const void* params, const std::vector<tgl_tensor>& inputs,
                const std::vector<tgl_tensor>& outputs);
    // Throws Failure "<what> failed: <status> <message>" unless s == TGL_OK.
    void check(tgl_status s, const std::string& what) const;

private:
    Plugin& plugin_;
    tgl_device device_ = 0;
};

// Device 0 of a role's plugin, opened once per process and closed when the tests end.
Device& shared_device(Role role = Role::Plugin);

// An owned buffer (freed when destroyed; errors of the free are ignored then).
class Buffer {
public:
    Buffer(Device& device, uint64_t bytes) : device_(&device), bytes_(bytes), handle_(device.alloc(bytes)) {}
    ~Buffer();
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    tgl_buffer handle() const { return handle_; }
    uint64_t bytes() const { return bytes_; }
    // Marks the buffer as already freed (a test freed it through the ABI).
    void forget() { handle_ = 0; }

private:
    Device* device_;
    uint64_t bytes_;
    tgl_buffer handle_;
};

// ------------------------------------------------------------------------------------------------
// Views: a logical tensor inside a flat array of elements
// ------------------------------------------------------------------------------------------------

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "(2, 3, 5)"; "()" for rank 0

struct View {
    Shape shape;
    std::vector<int64_t> strides;  // elements; 0 broadcasts, negative walks backwards
    int64_t offset = 0;            // storage index of element (0, ..., 0)
    int64_t storage = 1;           // elements in the flat array that holds the view
    std::string layout = "contiguous";

    int rank() const { return int(shape.size()); }
    int64_t numel() const { return tgl_test::numel(shape); }
    std::string describe() const;  // shape, strides, offset, storage, layout name
};

// How make_view() places a shape in storage. Defaults give a contiguous view at offset 0.
struct Layout {
    std::string name = "contiguous";
    std::vector<int> perm;          // view dim d is parent dim perm[d] (empty: identity)
    std::vector<int64_t> steps;     // per view dim, nonzero, negative walks backwards (empty: 1s)
    std::vector<bool> broadcast;    // per view dim: stride 0 (inputs only) (empty: none)
    int64_t pad_front = 0, pad_back = 0;  // storage elements before/after the parent
};

View make_view(const Shape& shape, const Layout& layout = {});
View contiguous(const Shape& shape);

// Layout generators (rank = shape size). They fall back to contiguous where a rank or size makes the
// requested kind meaningless (a permutation of rank < 2 is the identity, for instance); the name
// says what was made.
Layout permuted_layout(int rank, Rng& rng);       // random non-identity permutation
Layout stepped_layout(int rank, Rng& rng);        // steps in {1, 2, 3}, at least one > 1
Layout negative_layout(int rank, Rng& rng);       // steps in {-1, -2, 1}, at least one negative
Layout broadcast_layout(const Shape& shape, Rng& rng);  // stride 0 on some dims of size > 1
Layout padded_layout(Rng& rng);                   // contiguous with padding around it
// Any of the above or a mix of them; `input` allows broadcast dims.
Layout random_layout(const Shape& shape, Rng& rng, bool input);

// Calls f(logical_index, storage_index) for every element in row-major logical order.
template <class F>
void for_each_offset(const View& v, F&& f) {
    const int64_t n = v.numel();
    if (n == 0) return;
    const int r = v.rank();
    std::vector<int64_t> idx(size_t(r), 0);
    int64_t off = v.offset;
    for (int64_t i = 0; i < n; ++i) {
        f(i, off);
        for (int d = r - 1; d >= 0; --d) {
            if (++idx[size_t(d)] < v.shape[size_t(d)]) { off += v.strides[size_t(d)]; break; }
            off -= v.strides[size_t(d)] * (v.shape[size_t(d)] - 1);
            idx[size_t(d)] = 0;
        }
    }
}

// Logical values of a view (row-major) read from storage.
std::vector<float> gather(const std::vector<float>& storage, const View& v);
// Storage holding `logical` at the view's elements and `gap` elsewhere (view must not broadcast).
std::vector<float> scatter(const View& v, const std::vector<float>& logical, float gap);

// ------------------------------------------------------------------------------------------------
// Device tensors with guard bytes
// ------------------------------------------------------------------------------------------------

constexpr uint64_t kGuardBytes = 256;        // before and after the storage
constexpr uint32_t kPoisonBits = 0x7FC0DEADu;  // output view elements before a run (a NaN)
constexpr uint32_t kGapBits = 0xFFFFFFFFu;     // output storage the view does not cover (a NaN)

uint32_t float_bits(float f);
float bits_float(uint32_t u);
float poison_value();

// A view in its own device buffer: [guard][storage][guard]. The tensor keeps a host copy of what
// the whole buffer should hold ("shadow") and checks the device against it.
class DeviceTensor {
public:
    DeviceTensor(Device& device, View view);  // f32 elements
    ~DeviceTensor();
    DeviceTensor(const DeviceTensor&) = delete;
    DeviceTensor& operator=(const DeviceTensor&) = delete;

    const View& view() const { return view_; }
    tgl_tensor desc() const;  // the view as the ABI sees it
    tgl_buffer buffer() const { return buffer_; }
    uint64_t buffer_bytes() const { return bytes_; }
    uint64_t storage_byte_offset() const { return kGuardBytes; }
    Device& device() const { return device_; }

    // Input: uploads guards + this storage (size view().storage).
    void set_storage(const std::vector<float>& storage);
    // Input with given logical values (view must not broadcast); gaps get `gap`.
    void set_values(const std::vector<float>& logical, float gap = 0.0f);
    // Output: view elements = poison, the rest of storage = gap pattern, guards = guard pattern.
    void poison();
    // Output whose view elements start with these values (matmul with beta != 0).
    void prefill(const std::vector<float>& logical);

    // Downloads the whole buffer and checks that every guard byte and every byte of storage outside
    // the view is unchanged and (after poison()) that no view element still holds the poison;
    // throws Failure describing the first differences. Returns the view's logical values.
    std::vector<float> read();
    // Checks the whole buffer is exactly as last set (inputs after an op; outputs after a failed
    // or no-op call). Returns a failure describing the first differing bytes.
    ::testing::AssertionResult unchanged();
    // Raw download of the storage region (no checks).
    std::vector<float> download_storage();

private:
    void upload_shadow();
    std::vector<uint8_t> download_all();
    std::string describe_diff(const std::vector<uint8_t>& got, bool skip_view, size_t max_report) const;

    Device& device_;
    View view_;
    uint64_t bytes_ = 0;
    tgl_buffer buffer_ = 0;
    std::vector<uint8_t> shadow_;
    bool poisoned_ = false;
};

// ------------------------------------------------------------------------------------------------
// Comparison
// ------------------------------------------------------------------------------------------------

namespace tol {
// NMSE thresholds, after ggml's test-backend-ops.
constexpr double kElementwise = 1e-7;   // add, sub, mul, div, maximum, minimum, abs, neg, relu, sqrt
// Transcendentals (exp, log, tanh, sigmoid, gelu, silu, pow): GPU builtins are not correctly
// rounded (GLSL ES allows several ulp, exp/pow error grows with |x|), so they get 1e-6.
constexpr double kTranscendental = 1e-6;
constexpr double kReduction = 1e-6;     // sum, mean, max, min, prod (f32 tree vs double accumulation)
constexpr double kMatmul = 5e-4;        // f32 dot products of any length, any order
double for_op(tgl_op op);
}  // namespace tol

enum class CompareMode {
    Nmse,        // NMSE over the finite elements <= tolerance
    PerElement,  // every element alone: (a-b)^2 / b^2 <= tolerance (b == 0: (a-b)^2 <= tolerance)
    Exact        // a == b for every element (0 == -0)
};

// got vs expected (both logical, row-major, of `shape`). NaN must be NaN in both, infinities must
// match with their sign. On failure the message gives the NMSE, the mismatch counts and the worst
// elements with their indices.
::testing::AssertionResult compare(const std::vector<float>& got, const std::vector<float>& expected,
                                   const Shape& shape, double tolerance,
                                   CompareMode mode = CompareMode::Nmse, const std::string& what = "");

// Float with 9 significant digits; NaN with its bits.
std::string fmt(float f);

}  // namespace tgl_test
