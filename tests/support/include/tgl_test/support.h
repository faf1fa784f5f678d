// tgl_test_support: what the conformance and differential suites share.
//
//   - configuration: which plugin(s) to test (--plugin=, --reference=, --subject= or the
//     environment), loaded through libtensorgl (tgl_plugin_load), device 0 opened once;
//   - seeds: one fresh random seed per run, TGL_TEST_SEED=<n> overrides it; every case derives its
//     own stream from (seed, test name), so one case is reproducible on its own; the seed is
//     printed at the start and in every failure;
//   - dtypes: exact conversions between double and the bits of every ABI dtype (f32, f16, bf16 with
//     round-to-nearest-even in integer arithmetic; i32, i8, u8, bool), independent of the plugins;
//   - views: a logical tensor placed in a flat element array ("storage") as a permutation, a slice
//     with steps (negative too), with broadcast (stride 0) dims or with padding around it; storage
//     is f32 (std::vector<float>) or raw bytes of any dtype (Storage);
//   - device tensors of any dtype surrounded by guard bytes, output views poisoned before a run,
//     and after it every guard byte and every byte the view does not cover checked unchanged;
//   - random values per dtype (floats in a range with special values, integers, bools);
//   - comparison: NMSE with NaN/inf positions required to match, per-element, exact and bit-exact
//     modes for floats, exact equality for integer dtypes, and a report of the worst (or first)
//     elements.
//
// Logical values of any dtype travel as double: every value of every dtype converts to double
// exactly, so a std::vector<double> holds f16, bf16, i32 or bool values without loss (NaN payloads
// aside, which no comparison looks at).
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

// Short names of the dtypes, for the suites' tables (`using namespace tgl_test::dtype_names`).
namespace dtype_names {
constexpr tgl_dtype F32 = TGL_DTYPE_F32, F16 = TGL_DTYPE_F16, BF16 = TGL_DTYPE_BF16, I64 = TGL_DTYPE_I64,
                    I32 = TGL_DTYPE_I32, I16 = TGL_DTYPE_I16, I8 = TGL_DTYPE_I8, U8 = TGL_DTYPE_U8, BOOL = TGL_DTYPE_BOOL;
}  // namespace dtype_names

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

    // The table the tests call (with TGL_TEST_OP_REPORT set: a copy whose run_op is counted).
    const tgl_plugin_api& api() const { return *api_; }
    // The loader's table for this plugin (tgl_plugin_get_api), as it is.
    const tgl_plugin_api& loader_api() const { return *loader_api_; }
    tgl_plugin* raw() const { return plugin_; }
    const std::string& name() const { return name_; }
    const std::string& path() const { return path_; }
    // Copy of the plugin's per-thread last error message.
    std::string last_error() const;

private:
    tgl_plugin* plugin_ = nullptr;
    const tgl_plugin_api* api_ = nullptr;
    const tgl_plugin_api* loader_api_ = nullptr;
    tgl_plugin_api counted_;  // the table with run_op counted for the op report (op_report.cpp)
    std::string name_, path_;
};

// With TGL_TEST_OP_REPORT set: `copy` filled with `api`, its run_op counting each call per op id
// and outcome for the op report written at exit (the op_coverage ctest reads it); returns copy.
// Otherwise (or past the plugins it can count) returns api.
const tgl_plugin_api* counted_api(const std::string& plugin_name, const tgl_plugin_api* api, tgl_plugin_api* copy);

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
// Closes the role's shared device (if open); the next shared_device() opens a new one.
void close_shared_device(Role role = Role::Plugin);
// Closes every shared device that is lost (synchronize says TGL_ERROR_DEVICE_UNAVAILABLE), so the
// tests after a loss get a fresh device. Called after every failed test; returns how many it closed.
int drop_lost_shared_devices();

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
// Dtypes and exact conversions (dtype.cpp)
//
// The tests' own reference for what each dtype stores: integer bit manipulation only (no compiler
// _Float16, no FPU rounding mode, no flush-to-zero), nothing shared with the plugins. Element bits
// are held in the low dtype_size() bytes of a uint32_t and stored little-endian.
// ------------------------------------------------------------------------------------------------

// The dtypes of ABI 1.3, in enum order (f32, f16, bf16, i32, i8, u8, bool, i64, i16).
const std::vector<tgl_dtype>& all_dtypes();
// all_dtypes() but i64: the dtypes whose element fits one 32-bit word, which every op that takes
// "any dtype but i64" takes (logical ops, where, any/all, generate, index data).
const std::vector<tgl_dtype>& word_dtypes();
std::string dtype_name(tgl_dtype dt);  // "f32", "f16", "bf16", "i32", "i8", "u8", "bool", "i64", "i16"; "dtype(12)"
uint32_t dtype_size(tgl_dtype dt);     // bytes per element; throws Failure for an unknown dtype
bool is_float_dtype(tgl_dtype dt);     // f32, f16, bf16; the others compare exactly

struct IntRange {
    int64_t lo, hi;  // inclusive
};
IntRange int_range(tgl_dtype dt);  // i64, i32, i16, i8, u8; bool is [0, 1]; throws Failure for float dtypes

// Round to nearest, ties to even; overflow gives inf of the sign; a NaN stays a NaN with its sign
// and the quiet bit set (its top payload bits kept); subnormals of the result are exact.
uint16_t f32_to_f16_bits(float f);
uint16_t f32_to_bf16_bits(float f);
// One rounding straight from double (f64 -> f32 -> f16 would round twice and can differ).
uint16_t f64_to_f16_bits(double d);
uint16_t f64_to_bf16_bits(double d);
uint32_t f64_to_f32_bits(double d);
// Exact widening (a NaN keeps its sign and payload).
float f16_bits_to_f32(uint16_t h);
float bf16_bits_to_f32(uint16_t b);

// Bits of logical value v in dtype dt. Floats round as above. Integer dtypes and bool need a value
// they hold exactly (bool: 0 or 1); anything else throws Failure, since it is a bug of the test.
uint64_t value_to_bits(tgl_dtype dt, double v);
// Value of element bits, exact for every dtype but i64 (beyond 2^53 the nearest double: compare
// i64 elements by their bits, as Storage::bits and DeviceTensor::read_bits give them). Integer
// dtypes sign-extend; a bool byte decodes to its byte value, so a stored 2 reads as 2 (not true)
// and compares unequal to 1.
double bits_to_value(tgl_dtype dt, uint64_t bits);
// The value dt stores for v: bits_to_value(dt, value_to_bits(dt, v)).
double round_to_dtype(tgl_dtype dt, double v);

// Raw little-endian element access, size 1, 2, 4 or 8.
uint64_t load_element_bits(const uint8_t* p, uint32_t size);
void store_element_bits(uint8_t* p, uint32_t size, uint64_t bits);

// Storage bytes of values (dtype_size(dt) bytes each) and back; bytes.size() must be a multiple of
// the element size.
std::vector<uint8_t> encode_values(tgl_dtype dt, const std::vector<double>& values);
std::vector<double> decode_values(tgl_dtype dt, const std::vector<uint8_t>& bytes);

// A flat array of elements of one dtype, as the raw bytes a device buffer holds.
class Storage {
public:
    Storage() = default;  // no elements, f32
    static Storage zeros(tgl_dtype dt, int64_t elements);  // every byte 0
    static Storage from_values(tgl_dtype dt, const std::vector<double>& values);
    static Storage from_f32(const std::vector<float>& values);  // bit for bit (NaN payloads too)

    tgl_dtype dtype() const { return dtype_; }
    uint32_t element_size() const { return dtype_size(dtype_); }
    int64_t size() const { return int64_t(bytes_.size() / element_size()); }  // elements
    double value(int64_t i) const { return bits_to_value(dtype_, bits(i)); }
    void set_value(int64_t i, double v) { set_bits(i, value_to_bits(dtype_, v)); }
    uint64_t bits(int64_t i) const { return load_element_bits(&bytes_.at(size_t(i) * element_size()), element_size()); }
    void set_bits(int64_t i, uint64_t b) { store_element_bits(&bytes_.at(size_t(i) * element_size()), element_size(), b); }
    std::vector<double> values() const { return decode_values(dtype_, bytes_); }
    const std::vector<uint8_t>& bytes() const { return bytes_; }
    std::vector<uint8_t>& bytes() { return bytes_; }

private:
    tgl_dtype dtype_ = TGL_DTYPE_F32;
    std::vector<uint8_t> bytes_;
};

// ------------------------------------------------------------------------------------------------
// Views: a logical tensor inside a flat array of elements
// ------------------------------------------------------------------------------------------------

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "(2, 3, 5)"; "()" for rank 0
// The NumPy broadcast of two shapes (the caller makes them compatible; dims both 1 stay 1).
Shape broadcast_shapes(const Shape& a, const Shape& b);

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
// Contiguous with an odd number of elements in front and behind: a 1- or 2-byte view then starts
// and ends inside a 32-bit word, as a plugin that packs bytes or halves into words must handle.
Layout misaligned_layout(Rng& rng);
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
// The same for storage of any dtype (values decoded exactly; `gap` must be a value of the dtype).
std::vector<double> gather(const Storage& storage, const View& v);
Storage scatter(tgl_dtype dt, const View& v, const std::vector<double>& logical, double gap = 0);

// ------------------------------------------------------------------------------------------------
// Device tensors with guard bytes
// ------------------------------------------------------------------------------------------------

constexpr uint64_t kGuardBytes = 256;        // before and after the storage
constexpr uint32_t kPoisonBits = 0x7FC0DEADu;  // f32 output view elements before a run (a NaN)
constexpr uint32_t kGapBits = 0xFFFFFFFFu;     // f32 output storage the view does not cover (a NaN)

uint32_t float_bits(float f);
float bits_float(uint32_t u);
float poison_value();

// Per dtype element patterns of outputs, chosen to be values no op produces from test inputs
// (random_storage never makes an input element the poison):
//   poison (view elements before a run): f32 and i32 0x7FC0DEAD, f16 0x7EAD, bf16 0x7FED (NaNs
//     with an unusual payload), i64 0x7FC0DEAD7FC0DEAD, i16 0xDEAD, i8, u8 and bool 0xA5 (not a
//     bool);
//   gap (storage the view does not cover): f32, f16, bf16 all ones (a NaN), i32 0xDEADBEEF, i64
//     0xDEADBEEFDEADBEEF, i16 0xBEEF, i8, u8 and bool 0xEE.
uint64_t poison_bits(tgl_dtype dt);
uint64_t gap_bits(tgl_dtype dt);
// Whether an element still holding the poison was surely never written: true where an op writes
// the poison with odds of at most 2^-32 an element (the floats' NaN payloads, i32, i64, bool's 0xA5);
// false for i8, u8 and i16, whose poisons (0xA5, 0xDEAD) are values a wrapping cast or integer op
// writes one time in 2^8 or 2^16 (a cast to i16 did, seed 6309134244368608196). Their unwritten
// elements show up in the comparison (which marks got values equal to the poison).
bool poison_detectable(tgl_dtype dt);

// A view in its own device buffer: [guard][storage][guard], elements of one dtype (default f32).
// The tensor keeps a host copy of what the whole buffer should hold ("shadow") and checks the
// device against it. The float-vector members are the f32 API (they throw Failure on a tensor of
// another dtype); the Storage / std::vector<double> members work for every dtype.
class DeviceTensor {
public:
    DeviceTensor(Device& device, View view, tgl_dtype dtype = TGL_DTYPE_F32);
    ~DeviceTensor();
    DeviceTensor(const DeviceTensor&) = delete;
    DeviceTensor& operator=(const DeviceTensor&) = delete;

    const View& view() const { return view_; }
    tgl_dtype dtype() const { return dtype_; }
    tgl_tensor desc() const;  // the view as the ABI sees it
    tgl_buffer buffer() const { return buffer_; }
    uint64_t buffer_bytes() const { return bytes_; }
    uint64_t storage_byte_offset() const { return kGuardBytes; }
    // Byte of the buffer where storage element `index` starts.
    uint64_t element_byte_offset(int64_t index) const { return kGuardBytes + uint64_t(index) * dtype_size(dtype_); }
    Device& device() const { return device_; }

    // Input: uploads guards + this storage (size view().storage, the tensor's dtype).
    void set_storage(const std::vector<float>& storage);
    void set_storage(const Storage& storage);
    // Input with given logical values (view must not broadcast); gaps get `gap`.
    void set_values(const std::vector<float>& logical, float gap = 0.0f);
    void set_logical(const std::vector<double>& logical, double gap = 0);
    // Output: view elements = poison, the rest of storage = gap pattern, guards = guard pattern.
    void poison();
    // Output whose view elements start with these values (matmul with beta != 0).
    void prefill(const std::vector<float>& logical);
    void prefill_logical(const std::vector<double>& logical);

    // Downloads the whole buffer and checks that every guard byte and every byte of storage outside
    // the view is unchanged and (after poison(), where poison_detectable) that no view element
    // still holds the poison; throws Failure describing the first differences. Returns the view's
    // logical values.
    std::vector<float> read();
    std::vector<double> read_logical();
    // The element bits of the view (logical order) as the last read() or read_logical() got them:
    // exact for i64, whose values read_logical rounds beyond 2^53.
    std::vector<uint64_t> read_bits() const;
    // Checks the whole buffer is exactly as last set (inputs after an op; outputs after a failed
    // or no-op call). Returns a failure describing the first differing bytes.
    ::testing::AssertionResult unchanged();
    // Raw download of the storage region (no checks).
    std::vector<float> download_storage();
    Storage download_raw_storage();

private:
    void require_f32(const char* member) const;
    void upload_storage(const uint8_t* bytes, int64_t elements);
    // Storage = gap pattern, view element i = bits_of_value(i) (logical order), then uploads.
    void write_output_pattern(const std::function<uint64_t(int64_t)>& bits_of_value);
    void prefill_bits(size_t n_values, const std::function<uint64_t(int64_t)>& bits_of_value);
    void upload_shadow();
    std::vector<uint8_t> download_all();
    const std::vector<uint8_t>& download_checked();
    std::string describe_diff(const std::vector<uint8_t>& got, bool skip_view, size_t max_report) const;

    Device& device_;
    View view_;
    tgl_dtype dtype_;
    uint64_t bytes_ = 0;
    tgl_buffer buffer_ = 0;
    std::vector<uint8_t> shadow_;
    bool poisoned_ = false;
};

// ------------------------------------------------------------------------------------------------
// Random values per dtype (for input storage)
// ------------------------------------------------------------------------------------------------

// Makes one logical value of some dtype.
using ValueGen = std::function<double(Rng&)>;

// Float dtypes: uniform in [lo, hi), rounded to the dtype (so lo, hi or a neighbour may appear).
ValueGen float_values(tgl_dtype dt, double lo, double hi);
// Integer dtypes and bool: uniform integers in [lo, hi] (inclusive) clipped to the dtype's range.
ValueGen int_values(tgl_dtype dt, int64_t lo, int64_t hi);
// Bool: 1 with probability p_true, else 0.
ValueGen bool_values(double p_true = 0.5);
// Mostly `base`, with probability p one of special_values_of(dt).
ValueGen with_special_values(tgl_dtype dt, ValueGen base, double p);
// Edge values of a dtype. Floats: NaN, +-inf, +-0, +-1, +-0.5, +-2, +-largest finite, +-smallest
// normal, +-largest and +-smallest subnormal. Integers: min, min + 1, -1, 0, 1, max - 1, max (those
// in range; for i64 min and max are -+2^53, the edge of what a double holds exactly: tests beyond it
// work on bits). Bool: 0, 1.
const std::vector<double>& special_values_of(tgl_dtype dt);

std::vector<double> random_values(int64_t n, Rng& rng, const ValueGen& gen);
// Random elements of dt, none of them the dtype's poison pattern: i16 and i32 values drawn from
// their whole range could be 0xDEAD / 0x7FC0DEAD (one in 2^16 / 2^32), and an op that moves such an
// element into its output would read as one that never wrote it (poison_detectable, i32) or be
// marked as the poison by the comparison (i16).
Storage random_storage(tgl_dtype dt, int64_t elements, Rng& rng, const ValueGen& gen);

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
// f16 / bf16 outputs: both plugins round nearly the same value once to the dtype, so an element
// may differ by one ulp where the value straddles a rounding boundary (relative 2^-10 / 2^-8; the
// NMSE stays below the square even if every element did).
constexpr double kF16Store = 1.0 / (1 << 20);
constexpr double kBf16Store = 1.0 / (1 << 16);
// The bound of an output of dtype dt whose f32 bound is f32: at least one rounding step of f16/bf16.
inline double of_store(tgl_dtype dt, double f32) {
    const double step = dt == TGL_DTYPE_F16 ? kF16Store : dt == TGL_DTYPE_BF16 ? kBf16Store : 0.0;
    return f32 > step ? f32 : step;
}
double for_op(tgl_op op);
}  // namespace tol

enum class CompareMode {
    Nmse,        // NMSE over the finite elements <= tolerance
    PerElement,  // every element alone: (a-b)^2 / b^2 <= tolerance (b == 0: (a-b)^2 <= tolerance)
    Exact,       // a == b for every element (0 == -0)
    ExactBits    // identical bits (0 != -0), except that any NaN equals any NaN (casts, layout ops)
};

// got vs expected (both logical, row-major, of `shape`). NaN must be NaN in both, infinities must
// match with their sign. On failure the message gives the NMSE, the mismatch counts and the worst
// elements with their indices.
::testing::AssertionResult compare(const std::vector<float>& got, const std::vector<float>& expected,
                                   const Shape& shape, double tolerance,
                                   CompareMode mode = CompareMode::Nmse, const std::string& what = "");

// The same for values of any dtype (got as read_logical() returns them).
//   Float dtypes: as above. In the Exact and ExactBits modes `expected` is first rounded to the
//   dtype, so a double expectation means "the correctly rounded result".
//   i32, i8, u8, bool: exact equality whatever the mode and tolerance; the message lists the first
//   mismatching elements in index order (index, got, expected) and marks got values that are the
//   dtype's poison.
::testing::AssertionResult compare(tgl_dtype dt, const std::vector<double>& got, const std::vector<double>& expected,
                                   const Shape& shape, double tolerance,
                                   CompareMode mode = CompareMode::Nmse, const std::string& what = "");

// Float with 9 significant digits; NaN with its bits.
std::string fmt(float f);
// A value of dtype dt: f32 as fmt(); f16 and bf16 with their bits, e.g. "1.00097656 (0x3c01)";
// integers in decimal; bool as "true"/"false" (another byte as "0x02 (not a bool)").
std::string fmt_value(tgl_dtype dt, double v);

}  // namespace tgl_test
