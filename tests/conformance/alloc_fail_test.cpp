// Allocation-failure injection (as Vulkan-Loader's and SQLite's test harnesses do): for N = 1, 2, ...
// the Nth host allocation that a plugin makes fails (std::bad_alloc, or NULL from a nothrow new)
// while a scenario runs: device open, buffer calls, a representative op of every op family, and a
// recorded graph. Every failure must come back as a status with a message (never an abort), a
// failed op writes nothing, and the device stays usable: the same op afterwards is exact.
//
// Mechanism: this executable replaces the global operator new / delete (every variant). The plugins
// are loaded with dlopen and call the global operator new, so they get these definitions. Only
// allocations made on behalf of the plugin count: those whose caller is in the plugin's .so, or in
// libstdc++ called from the plugin (a std::string the plugin builds); the driver's own allocations
// (Mesa, LLVM), which cannot recover, are never failed. Any thread counts (the GLES GL thread too).
//
// Short form (CI): the first injection points of each scenario and a sample of the rest. Full form:
// TGL_ALLOC_FAIL_FULL=1, every injection point of every scenario; the totals are printed.
#include "common.h"
#include "tgl_test/op_runner.h"

#include <dlfcn.h>
#include <unistd.h>
#include <link.h>
#include <unwind.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <new>

namespace {

// ------------------------------------------------------------------------------------------------
// The injector: counts allocations made for the plugin while on; fails the Nth once armed.
// ------------------------------------------------------------------------------------------------

struct Range {
    uintptr_t begin = 0, end = 0;
    bool contains(uintptr_t a) const { return a >= begin && a < end; }
};

std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_count{0};     // allocations for the plugin since counting began
std::atomic<int64_t> g_fail_at{0};   // 0: none fails; else the count that fails
std::atomic<int64_t> g_injected{0};  // failures injected since counting began
Range g_plugin, g_libstdcxx;

// Where in libstdc++'s callers the plugin is: the first frame outside libstdc++ (and outside this
// executable's operator new) decides.
struct WalkState {
    int depth = 0;
    bool from_plugin = false;
};
_Unwind_Reason_Code walk_frame(_Unwind_Context* ctx, void* arg) {
    auto* w = static_cast<WalkState*>(arg);
    uintptr_t ip = _Unwind_GetIP(ctx);
    if (++w->depth > 12) return _URC_END_OF_STACK;
    if (w->depth <= 1 || g_libstdcxx.contains(ip)) return _URC_NO_REASON;  // operator new itself, libstdc++
    w->from_plugin = g_plugin.contains(ip);
    return _URC_END_OF_STACK;
}

// True when this allocation must fail (counts it if it is the plugin's).
bool should_fail(void* caller) {
    if (!g_counting.load(std::memory_order_acquire)) return false;
    uintptr_t c = reinterpret_cast<uintptr_t>(caller);
    bool mine = g_plugin.contains(c);
    if (!mine && g_libstdcxx.contains(c)) {
        WalkState w;
        _Unwind_Backtrace(walk_frame, &w);
        mine = w.from_plugin;
    }
    if (!mine) return false;
    int64_t n = g_count.fetch_add(1) + 1;
    if (n != g_fail_at.load()) return false;
    g_injected.fetch_add(1);
    return true;
}

void* allocate(size_t n, size_t align, void* caller, bool nothrow) {
    if (should_fail(caller)) {
        if (nothrow) return nullptr;
        throw std::bad_alloc();
    }
    if (n == 0) n = 1;
    void* p = nullptr;
    if (align <= alignof(std::max_align_t)) p = std::malloc(n);
    else if (posix_memalign(&p, align, n) != 0) p = nullptr;
    if (!p && !nothrow) throw std::bad_alloc();
    return p;
}

// Text ranges of a loaded object whose path contains `name`.
// The loaded segments' address range of the object whose name contains `name`, or (name empty)
// of the object that holds address `inside`. The plugin is found by an address of its code: the
// loader maps it through /proc/self/fd/N, so its name is not its path.
Range object_range(const std::string& name, uintptr_t inside = 0) {
    struct Find {
        const std::string* name;
        uintptr_t inside;
        Range r;
    } f{&name, inside, {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* arg) -> int {
            auto* f = static_cast<Find*>(arg);
            if (!f->name->empty() && (!info->dlpi_name || std::strstr(info->dlpi_name, f->name->c_str()) == nullptr)) return 0;
            uintptr_t lo = UINTPTR_MAX, hi = 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type != PT_LOAD) continue;
                lo = std::min<uintptr_t>(lo, info->dlpi_addr + ph.p_vaddr);
                hi = std::max<uintptr_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
            }
            if (f->name->empty() && !(f->inside >= lo && f->inside < hi)) return 0;
            f->r = Range{lo, hi};
            return 1;
        },
        &f);
    return f.r;
}

}  // namespace

#define TGL_CALLER __builtin_return_address(0)
void* operator new(size_t n) { return allocate(n, 0, TGL_CALLER, false); }
void* operator new[](size_t n) { return allocate(n, 0, TGL_CALLER, false); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0, TGL_CALLER, true); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0, TGL_CALLER, true); }
void* operator new(size_t n, std::align_val_t a) { return allocate(n, size_t(a), TGL_CALLER, false); }
void* operator new[](size_t n, std::align_val_t a) { return allocate(n, size_t(a), TGL_CALLER, false); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate(n, size_t(a), TGL_CALLER, true);
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate(n, size_t(a), TGL_CALLER, true);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }

namespace conf {
namespace {

// What is being tried, for a crash report (an abort is exactly what this test looks for).
char g_trying[256] = "";
void report_crash(int sig) {
    const char* what = sig == SIGABRT ? "SIGABRT" : "SIGSEGV";
    char line[400];
    int n = std::snprintf(line, sizeof line, "\n[alloc-fail] %s while failing allocation %s\n", what, g_trying);
    if (n > 0) (void)!write(2, line, size_t(n));
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

// Counts (and optionally fails) the plugin's allocations for the scope.
class Injection {
public:
    explicit Injection(int64_t fail_at) {
        g_count = 0;
        g_injected = 0;
        g_fail_at = fail_at;
        g_counting.store(true, std::memory_order_release);
    }
    ~Injection() { stop(); }
    void stop() { g_counting.store(false, std::memory_order_release); }
    int64_t count() const { return g_count.load(); }
    int64_t injected() const { return g_injected.load(); }
};

// One call's outcome, with the message read at once.
struct Outcome {
    std::string call;
    tgl_status status = TGL_OK;
    std::string message;
};

// A scenario: prepare() sets up (nothing failed), act() makes the calls under injection and
// records their outcomes, check() judges them (nothing failed), cleanup() undoes what act() left.
class Scenario {
public:
    virtual ~Scenario() = default;
    virtual void prepare(Device&) {}
    virtual void act(Device& d, std::vector<Outcome>& out) = 0;
    // failed: some outcome was not TGL_OK. Returns "" or what is wrong.
    virtual std::string check(Device& d, const std::vector<Outcome>& out, bool failed) = 0;
    virtual void cleanup(Device&) {}
};

tgl_status record(std::vector<Outcome>& out, const char* call, tgl_status s) {
    out.push_back(Outcome{call, s, s == TGL_OK ? std::string() : plug().last_error()});
    return s;
}

// Output values, bit for bit (NaN == NaN).
bool same_values(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        if (a[i].size() != b[i].size()) return false;
        for (size_t j = 0; j < a[i].size(); ++j)
            if (!(a[i][j] == b[i][j] || (std::isnan(a[i][j]) && std::isnan(b[i][j])))) return false;
    }
    return true;
}

// One op, its operands built once; its exact outputs are those of a run without injection.
class OpScenario : public Scenario {
public:
    OpScenario(tgl_op op, std::vector<uint8_t> params, std::vector<InputArg> ins, std::vector<OutputArg> outs)
        : op_(op), params_(std::move(params)), ins_(std::move(ins)), outs_(std::move(outs)) {}

    void prepare(Device& d) override {
        call_ = std::make_unique<OpCall>(d, ins_, outs_);
        if (expected_.empty()) {
            d.check(call_->run(op_, params()), "run_op without injection");
            d.synchronize();
            expected_ = call_->read();
            repoison();
        }
    }
    void act(Device& d, std::vector<Outcome>& out) override {
        if (record(out, "run_op", call_->run(op_, params())) != TGL_OK) return;
        record(out, "synchronize", d.api().synchronize(d.handle()));
    }
    std::string check(Device& d, const std::vector<Outcome>& out, bool failed) override {
        // A failed run_op writes nothing; a failure reported later (queued work) leaves the
        // outputs untouched or complete; no failure: exact.
        if (failed) {
            ::testing::AssertionResult same = call_->all_unchanged();
            if (!out.empty() && out[0].status != TGL_OK) {
                if (!same) return "run_op failed but changed its operands: " + std::string(same.message());
            } else if (!same && !exact()) {
                return "the op's queued work failed and left its output half-written";
            }
        } else if (!exact()) {
            return "run_op succeeded under injection but its output is not exact";
        }
        // The device stays usable: the same op, exact.
        repoison();
        tgl_status s = call_->run(op_, params());
        if (s != TGL_OK) return "run_op after the failure: " + std::string(tgl_status_name(s)) + " " + plug().last_error();
        s = d.api().synchronize(d.handle());
        if (s != TGL_OK) return "synchronize after the failure: " + std::string(tgl_status_name(s)) + " " + plug().last_error();
        if (!exact()) return "the op after the failure is not exact";
        return "";
    }
    void cleanup(Device&) override { call_.reset(); }

private:
    const void* params() const { return params_.empty() ? nullptr : params_.data(); }
    bool exact() {
        try {
            return same_values(call_->read(), expected_);
        } catch (const std::exception&) {
            return false;  // guard bytes, gaps or poison left: not written (wholly)
        }
    }
    void repoison() {
        for (size_t i = 0; i < outs_.size(); ++i)
            if (!outs_[i].absent) call_->output(i)->poison();
    }

    tgl_op op_;
    std::vector<uint8_t> params_;
    std::vector<InputArg> ins_;
    std::vector<OutputArg> outs_;
    std::unique_ptr<OpCall> call_;
    std::vector<std::vector<double>> expected_;
};

template <class P>
std::vector<uint8_t> bytes_of(const P& p) {
    std::vector<uint8_t> b(sizeof p);
    std::memcpy(b.data(), &p, sizeof p);
    return b;
}

std::vector<double> pattern(int64_t n, int mod, double scale, double offset = 0) {
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[size_t(i)] = double((i * 7 + 3) % mod) * scale + offset;
    return v;
}

InputArg f32_input(const Shape& s, int mod = 13, double scale = 0.25, double offset = -1) {
    return input_values(TGL_DTYPE_F32, s, pattern(numel(s), mod, scale, offset));
}

// device_open and device_close under injection; then a device opens and adds exactly.
class OpenScenario : public Scenario {
public:
    void act(Device& d, std::vector<Outcome>& out) override {
        opened_ = 0;
        if (record(out, "device_open", d.api().device_open(0, &opened_)) != TGL_OK) opened_ = 0;
        if (opened_) {
            record(out, "device_close", d.api().device_close(opened_));
            opened_ = 0;  // closed whatever the status
        }
    }
    std::string check(Device&, const std::vector<Outcome>&, bool) override {
        Device fresh(plug());
        return exact_small_add(fresh);
    }
    static std::string exact_small_add(Device& d) {
        DeviceTensor a(d, contiguous({33})), b(d, contiguous({33})), y(d, contiguous({33}));
        a.set_values(iota_values(33));
        b.set_values(iota_values(33, 100.0f));
        y.poison();
        tgl_status s = d.run(TGL_OP_ADD, nullptr, {a.desc(), b.desc()}, {y.desc()});
        if (s != TGL_OK) return "add on a device opened afterwards: " + std::string(tgl_status_name(s));
        std::vector<float> got = y.read();
        for (int i = 0; i < 33; ++i)
            if (got[size_t(i)] != float(1 + i) + float(100 + i)) return "add on a device opened afterwards is not exact";
        return "";
    }

private:
    tgl_device opened_ = 0;
};

// buffer_alloc, upload, copy, fill, download, free: each either works exactly or fails cleanly.
class BufferScenario : public Scenario {
public:
    void act(Device& d, std::vector<Outcome>& out) override {
        const tgl_plugin_api& api = d.api();
        a_ = b_ = 0;
        steps_ = 0;
        got_.assign(kBytes, 0);
        src_.resize(kBytes);
        for (size_t i = 0; i < kBytes; ++i) src_[i] = uint8_t(i * 13 + 5);
        if (record(out, "buffer_alloc", api.buffer_alloc(d.handle(), kBytes, &a_)) != TGL_OK) a_ = 0;
        if (record(out, "buffer_alloc", api.buffer_alloc(d.handle(), kBytes, &b_)) != TGL_OK) b_ = 0;
        if (!a_ || !b_) return;
        if (record(out, "buffer_upload", api.buffer_upload(d.handle(), a_, 0, src_.data(), kBytes)) != TGL_OK) return;
        steps_ = 1;
        if (record(out, "buffer_copy", api.buffer_copy(d.handle(), a_, 0, b_, 0, kBytes)) != TGL_OK) return;
        steps_ = 2;
        const uint32_t word = 0xA5A55A5Au;
        if (record(out, "buffer_fill", api.buffer_fill(d.handle(), b_, 0, 64, &word, 4)) != TGL_OK) return;
        steps_ = 3;
        if (record(out, "buffer_download", api.buffer_download(d.handle(), b_, 0, got_.data(), kBytes)) != TGL_OK) return;
        steps_ = 4;
    }
    std::string check(Device& d, const std::vector<Outcome>&, bool) override {
        // Whatever failed, the device must still move bytes exactly; what succeeded is exact.
        if (steps_ == 4) {
            for (size_t i = 0; i < kBytes; ++i) {
                uint8_t want = i < 64 ? uint8_t(0xA5A55A5Au >> (8 * (i % 4))) : src_[i];
                if (got_[i] != want) return "a transfer that returned TGL_OK is not exact (byte " + std::to_string(i) + ")";
            }
        }
        cleanup(d);
        Buffer x(d, kBytes);
        d.upload(x.handle(), 0, src_.data(), kBytes);
        std::vector<uint8_t> back(kBytes);
        d.download(x.handle(), 0, back.data(), kBytes);
        return back == src_ ? "" : "upload + download after the failure is not exact";
    }
    void cleanup(Device& d) override {
        if (a_) d.api().buffer_free(d.handle(), a_);
        if (b_) d.api().buffer_free(d.handle(), b_);
        a_ = b_ = 0;
    }

private:
    static constexpr size_t kBytes = 4096 + 12;
    tgl_buffer a_ = 0, b_ = 0;
    int steps_ = 0;
    std::vector<uint8_t> src_, got_;
};

// graph_begin, a recorded add, graph_end, graph_replay, synchronize, graph_destroy.
class GraphScenario : public Scenario {
public:
    void prepare(Device& d) override {
        a_ = std::make_unique<DeviceTensor>(d, contiguous({300}));
        b_ = std::make_unique<DeviceTensor>(d, contiguous({300}));
        y_ = std::make_unique<DeviceTensor>(d, contiguous({300}));
        a_->set_values(iota_values(300));
        b_->set_values(iota_values(300, -7.0f, 0.5f));
        y_->poison();
    }
    void act(Device& d, std::vector<Outcome>& out) override {
        const tgl_plugin_api& api = d.api();
        graph_ = 0;
        replayed_ = false;
        if (record(out, "graph_begin", api.graph_begin(d.handle())) != TGL_OK) return;
        recording_ = true;
        // (A recording that failed leaves the graph without the add: then nothing is checked.)
        const bool recorded = record(out, "run_op", d.run(TGL_OP_ADD, nullptr, {a_->desc(), b_->desc()}, {y_->desc()})) == TGL_OK;
        if (record(out, "graph_end", api.graph_end(d.handle(), &graph_)) != TGL_OK) return;
        recording_ = false;
        if (record(out, "graph_replay", api.graph_replay(d.handle(), graph_)) != TGL_OK) return;
        if (record(out, "synchronize", api.synchronize(d.handle())) != TGL_OK) return;
        replayed_ = recorded;
    }
    std::string check(Device& d, const std::vector<Outcome>&, bool) override {
        if (replayed_ && !exact()) return "a replay that returned TGL_OK is not exact";
        cleanup(d);
        // Record and replay again, without injection: exact.
        y_->poison();
        d.check(d.api().graph_begin(d.handle()), "graph_begin after the failure");
        d.run_ok(TGL_OP_ADD, nullptr, {a_->desc(), b_->desc()}, {y_->desc()});
        tgl_graph g = 0;
        d.check(d.api().graph_end(d.handle(), &g), "graph_end after the failure");
        d.check(d.api().graph_replay(d.handle(), g), "graph_replay after the failure");
        d.synchronize();
        d.check(d.api().graph_destroy(d.handle(), g), "graph_destroy after the failure");
        return exact() ? "" : "a graph replayed after the failure is not exact";
    }
    void cleanup(Device& d) override {
        if (recording_) {
            tgl_graph g = 0;
            if (d.api().graph_end(d.handle(), &g) == TGL_OK) d.api().graph_destroy(d.handle(), g);
            recording_ = false;
        }
        if (graph_) d.api().graph_destroy(d.handle(), graph_);
        graph_ = 0;
        d.api().synchronize(d.handle());  // a failure of the replay's queued work, if any, is taken here
    }

private:
    bool exact() {
        try {
            std::vector<float> y = y_->read();
            for (int i = 0; i < 300; ++i)
                if (y[size_t(i)] != float(1 + i) + (-7.0f + 0.5f * float(i))) return false;
            return true;
        } catch (const std::exception&) {
            return false;
        }
    }
    std::unique_ptr<DeviceTensor> a_, b_, y_;
    tgl_graph graph_ = 0;
    bool recording_ = false, replayed_ = false;
};

struct Named {
    std::string name;
    std::function<std::unique_ptr<Scenario>()> make;
};

std::vector<Named> scenarios() {
    std::vector<Named> v;
    auto op = [&](const std::string& name, tgl_op o, std::vector<uint8_t> params, std::vector<InputArg> ins,
                  std::vector<OutputArg> outs) {
        v.push_back({name, [=] { return std::make_unique<OpScenario>(o, params, ins, outs); }});
    };
    const tgl_dtype F = TGL_DTYPE_F32, I = TGL_DTYPE_I32;
    v.push_back({"device_open", [] { return std::make_unique<OpenScenario>(); }});
    v.push_back({"buffers", [] { return std::make_unique<BufferScenario>(); }});
    op("elementwise add", TGL_OP_ADD, {}, {f32_input({3, 67}), f32_input({67})}, {output_of(F, {3, 67})});
    op("reduce sum", TGL_OP_SUM, bytes_of(reduce_params({1}, false)), {f32_input({5, 129})}, {output_of(F, {5})});
    op("norm softmax", TGL_OP_SOFTMAX, {}, {f32_input({4, 33}), absent_input()}, {output_of(F, {4, 33})});
    {
        tgl_permute_params p{};
        p.struct_size = sizeof p;
        p.perm[0] = 1;
        p.perm[1] = 0;
        op("layout permute", TGL_OP_PERMUTE, bytes_of(p), {f32_input({9, 17})}, {output_of(F, {17, 9})});
    }
    op("index gather", TGL_OP_GATHER, {}, {f32_input({6, 5}), input_values(I, {4, 5}, pattern(20, 6, 1))},
       {output_of(F, {4, 5})});
    op("select sort", TGL_OP_SORT, {}, {f32_input({3, 100}, 37)}, {output_of(F, {3, 100}), output_of(I, {3, 100})});
    // Rows enough for several worker threads (CPU plugin): scratch allocated on each.
    op("select sort, many rows", TGL_OP_SORT, {}, {f32_input({32, 4096}, 1009)},
       {output_of(F, {32, 4096}), output_of(I, {32, 4096})});
    op("generate arange", TGL_OP_ARANGE, {}, {}, {output_of(F, {77})});
    op("matmul", TGL_OP_MATMUL, {}, {f32_input({13, 7}), f32_input({7, 11})}, {output_of(F, {13, 11})});
    op("conv2d", TGL_OP_CONV2D, {}, {f32_input({1, 2, 6, 6}), f32_input({3, 2, 3, 3}), absent_input()},
       {output_of(F, {1, 3, 4, 4})});
    {
        tgl_pool_params p{};
        p.struct_size = sizeof p;
        p.kernel[0] = p.kernel[1] = 2;
        op("pool max_pool", TGL_OP_MAX_POOL, bytes_of(p), {f32_input({1, 2, 6, 6}, 29)},
           {output_of(F, {1, 2, 3, 3}), output_of(I, {1, 2, 3, 3})});
    }
    op("attention", TGL_OP_ATTENTION, {},
       {f32_input({1, 2, 5, 8}), f32_input({1, 2, 6, 8}, 11), f32_input({1, 2, 6, 8}, 7), absent_input()},
       {output_of(F, {1, 2, 5, 8}), absent_output()});
    op("sequence cumsum", TGL_OP_CUMSUM, {}, {f32_input({3, 50})}, {output_of(F, {3, 50})});
    op("grad softmax_backward", TGL_OP_SOFTMAX_BACKWARD, {}, {f32_input({4, 9}, 5, 0.125, 0.01), f32_input({4, 9})},
       {output_of(F, {4, 9})});
    v.push_back({"graph", [] { return std::make_unique<GraphScenario>(); }});
    return v;
}

bool full_run() {
    const char* v = std::getenv("TGL_ALLOC_FAIL_FULL");
    return v && *v && std::strcmp(v, "0") != 0;
}

// "<call>: <call>: ..." (the call's name twice) or an empty message.
std::string bad_message(const Outcome& o) {
    if (o.message.empty()) return o.call + " failed with an empty message";
    const std::string twice = o.call + ": " + o.call + ": ";
    if (o.message.compare(0, twice.size(), twice) == 0) return "message names its call twice: " + o.message;
    return "";
}

// Injection points to try out of `total`: all of them in the full form; else the first 12 and 12
// more spread over the rest.
std::vector<int64_t> points(int64_t total) {
    std::vector<int64_t> n;
    if (full_run()) {
        for (int64_t i = 1; i <= total; ++i) n.push_back(i);
        return n;
    }
    for (int64_t i = 1; i <= std::min<int64_t>(total, 12); ++i) n.push_back(i);
    for (int64_t k = 1; k <= 12 && total > 12; ++k) {
        int64_t i = 12 + (total - 12) * k / 12;
        if (i > n.back()) n.push_back(i);
    }
    return n;
}

using AllocFail = ConformanceTest;

TEST_F(AllocFail, EveryFailedAllocationIsAStatusAndTheDeviceStaysUsable) {
    std::signal(SIGABRT, report_crash);
    std::signal(SIGSEGV, report_crash);
    const std::string so = plug().path();
    g_plugin = object_range("", reinterpret_cast<uintptr_t>(plug().api().device_open));
    g_libstdcxx = object_range("libstdc++.so");
    ASSERT_NE(g_plugin.begin, 0u) << "plugin " << so << " not found among the loaded objects";
    int64_t tried = 0, fired = 0, failed_calls = 0, recovered = 0;
    for (const Named& sc : scenarios()) {
        Device d(plug());
        std::unique_ptr<Scenario> s = sc.make();
        // Twice without failures: the first run compiles and caches what later runs reuse.
        int64_t total = 0;
        for (int warm = 0; warm < 2; ++warm) {
            s->prepare(d);
            std::vector<Outcome> out;
            Injection count(0);
            s->act(d, out);
            count.stop();
            total = count.count();
            for (const Outcome& o : out) ASSERT_EQ(o.status, TGL_OK) << sc.name << ": " << o.call << ": " << o.message;
            s->cleanup(d);
        }
        if (sc.name == "device_open" || sc.name == "buffers" || sc.name == "graph") d.synchronize();
        ASSERT_GT(total, 0) << sc.name << ": the plugin allocated nothing (is the injector interposed?)";
        for (int64_t n : points(total + 4)) {  // a few past the count: allocations vary by a little
            std::snprintf(g_trying, sizeof g_trying, "%lld of %s (%s plugin)", (long long)n, sc.name.c_str(),
                          plug().name().c_str());
            s->prepare(d);
            std::vector<Outcome> out;
            int64_t injected;
            {
                Injection inj(n);
                s->act(d, out);
                inj.stop();
                injected = inj.injected();
            }
            ++tried;
            fired += injected != 0;
            bool failed = false;
            for (const Outcome& o : out) {
                if (o.status == TGL_OK) continue;
                failed = true;
                ++failed_calls;
                EXPECT_EQ(o.status, TGL_ERROR_RESOURCE_EXHAUSTED)
                    << sc.name << ", allocation " << n << ": " << o.call << ": " << o.message;
                std::string bad = bad_message(o);
                EXPECT_EQ(bad, "") << sc.name << ", allocation " << n;
            }
            if (injected && !failed) ++recovered;  // the plugin coped (a nothrow new with a fallback)
            std::string problem = s->check(d, out, failed);
            EXPECT_EQ(problem, "") << sc.name << ", allocation " << n << " of " << total;
            s->cleanup(d);
            if (::testing::Test::HasFailure()) return;
        }
        std::printf("[ alloc-fail ] %s plugin, %-24s %lld allocations, %zu injection points tried\n",
                    plug().name().c_str(), sc.name.c_str(), (long long)total, points(total + 4).size());
        d.close();
    }
    g_trying[0] = '\0';
    std::printf("[ alloc-fail ] %s plugin (%s form): %lld runs, %lld allocations failed, %lld calls then failed with a "
                "status, %lld failures absorbed by the plugin (a nothrow new with a fallback)\n",
                plug().name().c_str(), full_run() ? "full" : "short", (long long)tried, (long long)fired,
                (long long)failed_calls, (long long)recovered);
}

}  // namespace
}  // namespace conf
