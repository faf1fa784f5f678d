// Threads: error messages are per thread, and many host threads can use one device at once.
#include "common.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

namespace conf {
namespace {

using Threads = ConformanceTest;

// Two threads fail at the same time with different errors, a third succeeds; each must read its
// own message (and the succeeding one an empty message) every time.
TEST_F(Threads, ErrorMessagesArePerThread) {
    Device& d = dev();
    const tgl_plugin_api& api = d.api();
    DeviceTensor x(d, contiguous({4, 5})), y(d, contiguous({4, 5})), r(d, contiguous({4}));
    std::vector<float> xv(20);
    for (int i = 0; i < 20; ++i) xv[size_t(i)] = float(i);
    x.set_values(xv);
    y.poison();
    r.poison();
    const int kRounds = 300;
    std::atomic<int> ready{0};
    std::vector<std::string> problems[3];

    auto wait_start = [&] {
        ready.fetch_add(1);
        while (ready.load() < 3) std::this_thread::yield();
    };
    std::thread null_inputs([&] {
        wait_start();
        tgl_tensor out = y.desc();
        for (int i = 0; i < kRounds; ++i) {
            tgl_status s = api.run_op(d.handle(), TGL_OP_EXP, nullptr, nullptr, 1, &out, 1);
            std::string m = api.last_error_message();
            if (s != TGL_ERROR_NULL_POINTER || m.find("inputs") == std::string::npos || m.find("n_axes") != std::string::npos)
                problems[0].push_back("round " + std::to_string(i) + ": " + tgl_status_name(s) + " \"" + m + "\"");
        }
    });
    std::thread bad_axes([&] {
        wait_start();
        tgl_reduce_params p = reduce_params({1}, false);
        p.n_axes = 42;
        tgl_tensor in = x.desc(), out = r.desc();
        for (int i = 0; i < kRounds; ++i) {
            tgl_status s = api.run_op(d.handle(), TGL_OP_SUM, &p, &in, 1, &out, 1);
            std::string m = api.last_error_message();
            if (s != TGL_ERROR_INVALID_ARGUMENT || m.find("n_axes") == std::string::npos || m.find("inputs is") != std::string::npos)
                problems[1].push_back("round " + std::to_string(i) + ": " + tgl_status_name(s) + " \"" + m + "\"");
        }
    });
    std::thread good([&] {
        wait_start();
        uint32_t count = 0;
        for (int i = 0; i < kRounds; ++i) {
            tgl_status s = api.device_count(&count);
            std::string m = api.last_error_message();
            if (s != TGL_OK || !m.empty())
                problems[2].push_back("round " + std::to_string(i) + ": " + tgl_status_name(s) + " \"" + m + "\"");
        }
    });
    null_inputs.join();
    bad_axes.join();
    good.join();
    const char* who[3] = {"thread with NULL inputs", "thread with 42 axes", "thread with good calls"};
    for (int t = 0; t < 3; ++t) {
        EXPECT_TRUE(problems[t].empty()) << who[t] << ": " << problems[t].size() << " wrong result(s) of " << kRounds
                                         << ", first: " << (problems[t].empty() ? "" : problems[t][0]);
    }
    EXPECT_TRUE(y.unchanged());
    EXPECT_TRUE(r.unchanged());
}

// 4 host threads x 50 ops on one device, each with its own buffers plus one input they all read;
// every result is checked exactly (small integers, exact in f32).
TEST_F(Threads, ManyThreadsShareOneDevice) {
    Device& d = dev();
    const int kThreads = 4, kOps = 50;
    const int64_t kShared = 777;
    DeviceTensor shared(d, contiguous({kShared}));
    std::vector<float> sv(static_cast<size_t>(kShared));
    for (int64_t i = 0; i < kShared; ++i) sv[size_t(i)] = float(i % 13 - 6);
    shared.set_values(sv);
    std::vector<std::string> errors(kThreads);
    std::vector<int> checked(kThreads, 0);
    std::vector<uint64_t> seeds;
    for (int t = 0; t < kThreads; ++t) seeds.push_back(case_seed("thread " + std::to_string(t)));

    auto worker = [&](int t) {
        try {
            Rng rng(seeds[size_t(t)]);
            DeviceTensor a(d, contiguous({kShared})), y(d, contiguous({kShared})), r(d, contiguous({}));
            std::vector<float> av(static_cast<size_t>(kShared));
            for (auto& v : av) v = float(rng.integer(-20, 20));
            a.set_values(av);
            r.poison();
            for (int i = 0; i < kOps; ++i) {
                const tgl_op ops[] = {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_MAXIMUM, TGL_OP_MINIMUM,
                                      TGL_OP_NEG, TGL_OP_ABS, TGL_OP_RELU, TGL_OP_SUM};
                tgl_op op = ops[(i + t) % 9];
                std::vector<float> want(static_cast<size_t>(kShared));
                for (int64_t k = 0; k < kShared; ++k) {
                    float p = av[size_t(k)], q = sv[size_t(k)];
                    switch (op) {
                    case TGL_OP_ADD: want[size_t(k)] = p + q; break;
                    case TGL_OP_SUB: want[size_t(k)] = p - q; break;
                    case TGL_OP_MUL: want[size_t(k)] = p * q; break;
                    case TGL_OP_MAXIMUM: want[size_t(k)] = std::max(p, q); break;
                    case TGL_OP_MINIMUM: want[size_t(k)] = std::min(p, q); break;
                    case TGL_OP_NEG: want[size_t(k)] = -p; break;
                    case TGL_OP_ABS: want[size_t(k)] = std::fabs(p); break;
                    default: want[size_t(k)] = p > 0 ? p : 0.0f; break;
                    }
                }
                if (op == TGL_OP_SUM) {
                    double s = 0;
                    for (float v : av) s += v;
                    d.run_ok(op, nullptr, {a.desc()}, {r.desc()});
                    std::vector<float> got = r.read();
                    if (got[0] != float(s))
                        throw Failure("thread " + std::to_string(t) + " op " + std::to_string(i) + " sum: got " +
                                      fmt(got[0]) + ", expected " + fmt(float(s)));
                } else {
                    y.poison();
                    if (op == TGL_OP_NEG || op == TGL_OP_ABS || op == TGL_OP_RELU)
                        d.run_ok(op, nullptr, {a.desc()}, {y.desc()});
                    else
                        d.run_ok(op, nullptr, {a.desc(), shared.desc()}, {y.desc()});
                    std::vector<float> got = y.read();
                    for (int64_t k = 0; k < kShared; ++k)
                        if (got[size_t(k)] != want[size_t(k)])
                            throw Failure("thread " + std::to_string(t) + " op #" + std::to_string(i) + " (id " +
                                          std::to_string(op) + ") element " + std::to_string(k) + ": got " +
                                          fmt(got[size_t(k)]) + ", expected " + fmt(want[size_t(k)]));
                }
                ++checked[size_t(t)];
                // Feed the result back as the next input (bounded so products stay exact).
                for (auto& v : av) v = float(int(v * 3 + 1) % 41 - 20);
                a.set_values(av);
            }
        } catch (const std::exception& e) {
            errors[size_t(t)] = e.what();
        }
    };
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
    for (auto& th : threads) th.join();
    for (int t = 0; t < kThreads; ++t) {
        EXPECT_EQ(errors[size_t(t)], "") << "thread " << t;
        EXPECT_EQ(checked[size_t(t)], kOps) << "thread " << t;
    }
    EXPECT_TRUE(shared.unchanged());
}

// ------------------------------------------------------------------------------------------------
// Stress, two devices, close under load, thread accounting.

// A positive count from the environment, or `fallback` (tests may read the environment freely).
int env_count(const char* name, int fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    return (*end == '\0' && n > 0 && n <= 1000000) ? int(n) : fallback;
}

bool is_gles() { return plug().name() == "gles"; }

// Raw ABI calls of one host thread on one device. A failing call throws Failure naming the call,
// the status and the plugin's message (read on this thread, right after the call).
class Caller {
public:
    Caller(const tgl_plugin_api& api, tgl_device dev) : api_(api), dev_(dev) {}
    const tgl_plugin_api& api() const { return api_; }
    tgl_device device() const { return dev_; }

    void ok(tgl_status s, const std::string& what) const {
        if (s != TGL_OK) throw Failure(what + " failed: " + tgl_status_name(s) + " \"" + api_.last_error_message() + "\"");
    }
    tgl_buffer alloc(uint64_t bytes) {
        tgl_buffer b = 0;
        ok(api_.buffer_alloc(dev_, bytes, &b), "buffer_alloc(" + std::to_string(bytes) + ")");
        return b;
    }
    void free(tgl_buffer b) { ok(api_.buffer_free(dev_, b), "buffer_free"); }
    template <class T>
    void upload(tgl_buffer b, const std::vector<T>& v, uint64_t offset = 0) {
        if (!v.empty()) ok(api_.buffer_upload(dev_, b, offset, v.data(), v.size() * sizeof(T)), "buffer_upload");
    }
    template <class T>
    std::vector<T> download(tgl_buffer b, size_t n, uint64_t offset = 0) {
        std::vector<T> v(n);
        if (n) ok(api_.buffer_download(dev_, b, offset, v.data(), n * sizeof(T)), "buffer_download");
        return v;
    }
    void run(tgl_op op, const void* params, std::vector<tgl_tensor> in, std::vector<tgl_tensor> out) {
        ok(api_.run_op(dev_, op, params, in.data(), uint32_t(in.size()), out.data(), uint32_t(out.size())),
           "run_op(op " + std::to_string(op) + ")");
    }

private:
    const tgl_plugin_api& api_;
    tgl_device dev_;
};

// Buffers of one step, freed when the step ends (also when it throws; errors then ignored).
class Scratch {
public:
    explicit Scratch(Caller& c) : c_(c) {}
    ~Scratch() {
        for (tgl_buffer b : bufs_) c_.api().buffer_free(c_.device(), b);
    }
    template <class T>
    tgl_tensor in(const Shape& shape, const std::vector<T>& v, tgl_dtype dt) {
        tgl_buffer b = make(v.size() * sizeof(T));
        c_.upload(b, v);
        return tgl_tensor_contiguous(b, 0, dt, uint32_t(shape.size()), shape.data());
    }
    tgl_tensor out(const Shape& shape, tgl_dtype dt) {
        tgl_buffer b = make(uint64_t(numel(shape)) * tgl_dtype_size(dt));
        return tgl_tensor_contiguous(b, 0, dt, uint32_t(shape.size()), shape.data());
    }
    tgl_buffer make(uint64_t bytes) {
        bufs_.push_back(c_.alloc(std::max<uint64_t>(bytes, 4)));
        return bufs_.back();
    }
    template <class T>
    std::vector<T> read(const tgl_tensor& t) {
        int64_t n = 1;
        for (uint32_t d = 0; d < t.rank; ++d) n *= t.shape[d];
        return c_.download<T>(t.buffer, size_t(n));
    }

private:
    Caller& c_;
    std::vector<tgl_buffer> bufs_;
};

struct StressResult {
    int64_t checked = 0;     // steps whose result was compared
    int64_t mismatches = 0;  // of those, wrong results
    std::vector<std::string> problems;  // first few mismatch descriptions, or the call that failed
    std::map<std::string, int64_t> kinds;
};

// One host thread's share of the stress test: `steps` random steps on the device, each one op (or
// a transfer, or a deliberately bad call) whose result is checked exactly against a value computed
// here. Inputs are small integers, so every f32 result (sums of products included) is exact.
// Besides the per-step buffers, the thread keeps a pool of long-lived buffers with known contents
// that it allocates, checks and frees at random: another thread's work must never touch them.
void stress_steps(Caller& c, uint64_t seed, int steps, StressResult& r) {
    Rng rng(seed);
    struct Kept {
        tgl_buffer buffer;
        std::vector<uint8_t> bytes;
    };
    std::vector<Kept> pool;
    auto mismatch = [&](const std::string& what) {
        ++r.mismatches;
        if (r.problems.size() < 5) r.problems.push_back(what);
    };
    auto check_kept = [&](const Kept& k) {
        std::vector<uint8_t> got = c.download<uint8_t>(k.buffer, k.bytes.size());
        if (got != k.bytes) mismatch("a long-lived buffer of " + std::to_string(k.bytes.size()) + " bytes changed");
    };
    const char* kKinds[] = {"binary", "unary_inplace", "reduce", "argreduce", "matmul", "permute", "flip",
                            "sort", "cumsum", "cast", "copy_fill", "bad_call", "pool"};
    const int kNumKinds = int(sizeof kKinds / sizeof kKinds[0]);
    try {
        for (int step = 0; step < steps; ++step) {
            const int kind = int(rng.integer(0, kNumKinds - 1));
            const std::string tag = std::string(kKinds[kind]) + " (step " + std::to_string(step) + ")";
            ++r.kinds[kKinds[kind]];
            Scratch s(c);
            const int64_t R = rng.integer(1, 12), C = rng.integer(1, 12);
            switch (kind) {
            case 0: {  // binary elementwise, b maybe broadcast along rows
                const tgl_op ops[] = {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_MAXIMUM, TGL_OP_MINIMUM};
                tgl_op op = ops[rng.integer(0, 4)];
                bool bc = rng.chance(0.5);
                std::vector<float> a = small_ints(rng, R * C, -50, 50), b = small_ints(rng, bc ? C : R * C, -50, 50);
                tgl_tensor ta = s.in({R, C}, a, TGL_DTYPE_F32);
                tgl_tensor tb = bc ? s.in({C}, b, TGL_DTYPE_F32) : s.in({R, C}, b, TGL_DTYPE_F32);
                tgl_tensor ty = s.out({R, C}, TGL_DTYPE_F32);
                c.run(op, nullptr, {ta, tb}, {ty});
                std::vector<float> y = s.read<float>(ty);
                for (int64_t i = 0; i < R * C; ++i) {
                    float p = a[size_t(i)], q = b[size_t(bc ? i % C : i)], w = 0;
                    switch (op) {
                    case TGL_OP_ADD: w = p + q; break;
                    case TGL_OP_SUB: w = p - q; break;
                    case TGL_OP_MUL: w = p * q; break;
                    case TGL_OP_MAXIMUM: w = std::max(p, q); break;
                    default: w = std::min(p, q); break;
                    }
                    if (y[size_t(i)] != w) {
                        mismatch(tag + ": op " + std::to_string(op) + " element " + std::to_string(i) + " got " +
                                 fmt(y[size_t(i)]) + ", expected " + fmt(w));
                        break;
                    }
                }
                break;
            }
            case 1: {  // y = square(neg(a)) then relu in place: two queued ops before the read
                std::vector<float> a = small_ints(rng, R * C, -100, 100);
                tgl_tensor ta = s.in({R, C}, a, TGL_DTYPE_F32), ty = s.out({R, C}, TGL_DTYPE_F32);
                c.run(TGL_OP_NEG, nullptr, {ta}, {ty});
                c.run(TGL_OP_RELU, nullptr, {ty}, {ty});
                std::vector<float> y = s.read<float>(ty);
                for (int64_t i = 0; i < R * C; ++i)
                    if (y[size_t(i)] != std::max(-a[size_t(i)], 0.0f)) {
                        mismatch(tag + ": relu(neg(x)) element " + std::to_string(i) + " got " + fmt(y[size_t(i)]));
                        break;
                    }
                break;
            }
            case 2: {  // sum / max / min over one axis
                const tgl_op ops[] = {TGL_OP_SUM, TGL_OP_MAX, TGL_OP_MIN};
                tgl_op op = ops[rng.integer(0, 2)];
                int axis = int(rng.integer(0, 1));
                std::vector<float> a = small_ints(rng, R * C, -1000, 1000);
                tgl_reduce_params p = reduce_params({axis}, false);
                const int64_t n_out = axis == 0 ? C : R;
                tgl_tensor ta = s.in({R, C}, a, TGL_DTYPE_F32), ty = s.out({n_out}, TGL_DTYPE_F32);
                c.run(op, &p, {ta}, {ty});
                std::vector<float> y = s.read<float>(ty);
                for (int64_t o = 0; o < n_out; ++o) {
                    float w = op == TGL_OP_SUM ? 0.0f : a[size_t(axis == 0 ? o : o * C)];
                    for (int64_t k = 0; k < (axis == 0 ? R : C); ++k) {
                        float v = a[size_t(axis == 0 ? k * C + o : o * C + k)];
                        w = op == TGL_OP_SUM ? w + v : op == TGL_OP_MAX ? std::max(w, v) : std::min(w, v);
                    }
                    if (y[size_t(o)] != w) {
                        mismatch(tag + ": reduce op " + std::to_string(op) + " axis " + std::to_string(axis) + " output " +
                                 std::to_string(o) + " got " + fmt(y[size_t(o)]) + ", expected " + fmt(w));
                        break;
                    }
                }
                break;
            }
            case 3: {  // argmax / argmin with ties (the first wins)
                bool is_max = rng.chance(0.5);
                int axis = int(rng.integer(0, 1));
                std::vector<float> a = small_ints(rng, R * C, -3, 3);
                tgl_arg_reduce_params p{};
                p.struct_size = sizeof p;
                p.axis = axis;
                const int64_t n_out = axis == 0 ? C : R;
                tgl_tensor ta = s.in({R, C}, a, TGL_DTYPE_F32), ty = s.out({n_out}, TGL_DTYPE_I32);
                c.run(is_max ? TGL_OP_ARGMAX : TGL_OP_ARGMIN, &p, {ta}, {ty});
                std::vector<int32_t> y = s.read<int32_t>(ty);
                for (int64_t o = 0; o < n_out; ++o) {
                    int32_t best = 0;
                    const int64_t len = axis == 0 ? R : C;
                    auto at = [&](int64_t k) { return a[size_t(axis == 0 ? k * C + o : o * C + k)]; };
                    for (int64_t k = 1; k < len; ++k)
                        if (is_max ? at(k) > at(best) : at(k) < at(best)) best = int32_t(k);
                    if (y[size_t(o)] != best) {
                        mismatch(tag + ": arg" + (is_max ? "max" : "min") + " output " + std::to_string(o) + " got " +
                                 std::to_string(y[size_t(o)]) + ", expected " + std::to_string(best));
                        break;
                    }
                }
                break;
            }
            case 4: {  // matmul with random transposes; |sum| <= 12 * 16, exact
                const int64_t M = R, N = C, K = rng.integer(1, 12);
                bool ta_ = rng.chance(0.5), tb_ = rng.chance(0.5);
                std::vector<float> a = small_ints(rng, M * K, -4, 4), b = small_ints(rng, K * N, -4, 4);
                tgl_matmul_params p = matmul_params(ta_, tb_, 1.0f, 0.0f);
                tgl_tensor tA = s.in(ta_ ? Shape{K, M} : Shape{M, K}, a, TGL_DTYPE_F32);
                tgl_tensor tB = s.in(tb_ ? Shape{N, K} : Shape{K, N}, b, TGL_DTYPE_F32);
                tgl_tensor tC = s.out({M, N}, TGL_DTYPE_F32);
                c.run(TGL_OP_MATMUL, &p, {tA, tB}, {tC});
                std::vector<float> y = s.read<float>(tC);
                for (int64_t i = 0; i < M; ++i)
                    for (int64_t j = 0; j < N; ++j) {
                        float w = 0;
                        for (int64_t k = 0; k < K; ++k)
                            w += a[size_t(ta_ ? k * M + i : i * K + k)] * b[size_t(tb_ ? j * K + k : k * N + j)];
                        if (y[size_t(i * N + j)] != w) {
                            mismatch(tag + ": matmul " + std::to_string(M) + "x" + std::to_string(K) + "x" +
                                     std::to_string(N) + " C[" + std::to_string(i) + "," + std::to_string(j) + "] got " +
                                     fmt(y[size_t(i * N + j)]) + ", expected " + fmt(w));
                            i = M;
                            break;
                        }
                    }
                break;
            }
            case 5: {  // permute of a rank-3 i32 tensor (a layout copy of 4-byte elements)
                Shape xs{rng.integer(1, 6), rng.integer(1, 6), rng.integer(1, 6)};
                std::vector<int> perm{0, 1, 2};
                std::shuffle(perm.begin(), perm.end(), rng.engine());
                std::vector<int32_t> a(size_t(numel(xs)));
                for (auto& v : a) v = int32_t(rng.integer(-1000000, 1000000));
                tgl_permute_params p{};
                p.struct_size = sizeof p;
                for (int d = 0; d < 3; ++d) p.perm[d] = perm[size_t(d)];
                Shape ys{xs[size_t(perm[0])], xs[size_t(perm[1])], xs[size_t(perm[2])]};
                tgl_tensor tx = s.in(xs, a, TGL_DTYPE_I32), ty = s.out(ys, TGL_DTYPE_I32);
                c.run(TGL_OP_PERMUTE, &p, {tx}, {ty});
                std::vector<int32_t> y = s.read<int32_t>(ty);
                int64_t idx[3];
                for (idx[0] = 0; idx[0] < ys[0]; ++idx[0])
                    for (idx[1] = 0; idx[1] < ys[1]; ++idx[1])
                        for (idx[2] = 0; idx[2] < ys[2]; ++idx[2]) {
                            int64_t xi[3];
                            for (int d = 0; d < 3; ++d) xi[perm[size_t(d)]] = idx[d];
                            int32_t w = a[size_t((xi[0] * xs[1] + xi[1]) * xs[2] + xi[2])];
                            int32_t g = y[size_t((idx[0] * ys[1] + idx[1]) * ys[2] + idx[2])];
                            if (g != w) {
                                mismatch(tag + ": permute element got " + std::to_string(g) + ", expected " +
                                         std::to_string(w));
                                idx[0] = ys[0];
                                idx[1] = ys[1];
                                break;
                            }
                        }
                break;
            }
            case 6: {  // flip of u8 elements (bytes packed in words on the GPU) along one or both axes
                bool f0 = rng.chance(0.5), f1 = !f0 || rng.chance(0.5);
                std::vector<uint8_t> a(size_t(R * C));
                for (auto& v : a) v = uint8_t(rng.integer(0, 255));
                tgl_flip_params p{};
                p.struct_size = sizeof p;
                if (f0) p.axes[p.n_axes++] = 0;
                if (f1) p.axes[p.n_axes++] = 1;
                tgl_tensor tx = s.in({R, C}, a, TGL_DTYPE_U8), ty = s.out({R, C}, TGL_DTYPE_U8);
                c.run(TGL_OP_FLIP, &p, {tx}, {ty});
                std::vector<uint8_t> y = s.read<uint8_t>(ty);
                for (int64_t i = 0; i < R; ++i)
                    for (int64_t j = 0; j < C; ++j) {
                        uint8_t w = a[size_t((f0 ? R - 1 - i : i) * C + (f1 ? C - 1 - j : j))];
                        if (y[size_t(i * C + j)] != w) {
                            mismatch(tag + ": flip element (" + std::to_string(i) + "," + std::to_string(j) + ") got " +
                                     std::to_string(y[size_t(i * C + j)]) + ", expected " + std::to_string(w));
                            i = R;
                            break;
                        }
                    }
                break;
            }
            case 7: {  // stable sort along the last axis, with many ties: values and indices
                bool desc = rng.chance(0.5);
                const int64_t L = rng.integer(1, 40);
                std::vector<float> a = small_ints(rng, R * L, -5, 5);
                tgl_sort_params p{};
                p.struct_size = sizeof p;
                p.axis = -1;
                p.descending = desc ? 1 : 0;
                tgl_tensor tx = s.in({R, L}, a, TGL_DTYPE_F32);
                tgl_tensor tv = s.out({R, L}, TGL_DTYPE_F32), ti = s.out({R, L}, TGL_DTYPE_I32);
                c.run(TGL_OP_SORT, &p, {tx}, {tv, ti});
                std::vector<float> v = s.read<float>(tv);
                std::vector<int32_t> ix = s.read<int32_t>(ti);
                for (int64_t row = 0; row < R; ++row) {
                    std::vector<int32_t> order(static_cast<size_t>(L));
                    std::iota(order.begin(), order.end(), 0);
                    const float* x = &a[size_t(row * L)];
                    std::stable_sort(order.begin(), order.end(),
                                     [&](int32_t i, int32_t j) { return desc ? x[i] > x[j] : x[i] < x[j]; });
                    for (int64_t k = 0; k < L; ++k)
                        if (ix[size_t(row * L + k)] != order[size_t(k)] || v[size_t(row * L + k)] != x[order[size_t(k)]]) {
                            mismatch(tag + ": sort row " + std::to_string(row) + " position " + std::to_string(k) +
                                     " got index " + std::to_string(ix[size_t(row * L + k)]) + ", expected " +
                                     std::to_string(order[size_t(k)]));
                            row = R;
                            break;
                        }
                }
                break;
            }
            case 8: {  // cumsum along an axis, inclusive or exclusive, forward or reverse
                tgl_scan_params p{};
                p.struct_size = sizeof p;
                p.axis = int32_t(rng.integer(0, 1));
                p.exclusive = rng.chance(0.5) ? 1 : 0;
                p.reverse = rng.chance(0.5) ? 1 : 0;
                std::vector<float> a = small_ints(rng, R * C, -100, 100);
                tgl_tensor tx = s.in({R, C}, a, TGL_DTYPE_F32), ty = s.out({R, C}, TGL_DTYPE_F32);
                c.run(TGL_OP_CUMSUM, &p, {tx}, {ty});
                std::vector<float> y = s.read<float>(ty);
                const int64_t len = p.axis == 0 ? R : C, lines = p.axis == 0 ? C : R;
                for (int64_t l = 0; l < lines; ++l) {
                    float acc = 0;
                    bool bad = false;
                    for (int64_t t = 0; t < len && !bad; ++t) {
                        int64_t k = p.reverse ? len - 1 - t : t;
                        size_t at = size_t(p.axis == 0 ? k * C + l : l * C + k);
                        if (!p.exclusive) acc += a[at];
                        if (y[at] != acc) {
                            mismatch(tag + ": cumsum element " + std::to_string(at) + " got " + fmt(y[at]) +
                                     ", expected " + fmt(acc));
                            bad = true;
                        }
                        if (p.exclusive) acc += a[at];
                    }
                    if (bad) break;
                }
                break;
            }
            case 9: {  // cast f32 -> i32 (exact integers, truncation of halves)
                std::vector<float> a = small_ints(rng, R * C, -20000, 20000);
                for (float& v : a) v /= 2;  // x.5 truncates toward zero
                tgl_tensor tx = s.in({R, C}, a, TGL_DTYPE_F32), ty = s.out({R, C}, TGL_DTYPE_I32);
                c.run(TGL_OP_CAST, nullptr, {tx}, {ty});
                std::vector<int32_t> y = s.read<int32_t>(ty);
                for (int64_t i = 0; i < R * C; ++i)
                    if (y[size_t(i)] != int32_t(a[size_t(i)])) {
                        mismatch(tag + ": cast of " + fmt(a[size_t(i)]) + " got " + std::to_string(y[size_t(i)]));
                        break;
                    }
                break;
            }
            case 10: {  // buffer_copy and buffer_fill at random offsets
                const uint64_t n = uint64_t(rng.integer(16, 4096)) & ~uint64_t(3);
                std::vector<uint8_t> src(n), dst(n);
                for (auto& v : src) v = uint8_t(rng.integer(0, 255));
                for (auto& v : dst) v = uint8_t(rng.integer(0, 255));
                tgl_buffer bs = s.make(n), bd = s.make(n);
                c.upload(bs, src);
                c.upload(bd, dst);
                uint64_t so = uint64_t(rng.integer(0, int64_t(n) - 1)), doff = uint64_t(rng.integer(0, int64_t(n) - 1));
                uint64_t len = uint64_t(rng.integer(0, int64_t(n - std::max(so, doff))));
                c.ok(c.api().buffer_copy(c.device(), bs, so, bd, doff, len), "buffer_copy");
                std::copy(src.begin() + long(so), src.begin() + long(so + len), dst.begin() + long(doff));
                uint32_t pattern = uint32_t(rng.integer(0, 0xFFFFFFFF));
                uint64_t fo = uint64_t(rng.integer(0, int64_t(n / 4) - 1)) * 4;
                uint64_t fl = uint64_t(rng.integer(0, int64_t((n - fo) / 4))) * 4;
                c.ok(c.api().buffer_fill(c.device(), bd, fo, fl, &pattern, 4), "buffer_fill");
                for (uint64_t i = 0; i < fl; ++i) dst[size_t(fo + i)] = uint8_t(pattern >> (8 * (i % 4)));
                if (c.download<uint8_t>(bd, n) != dst) mismatch(tag + ": buffer_copy + buffer_fill result differs");
                break;
            }
            case 11: {  // a bad call: the error and this thread's own message, nothing written
                std::vector<float> a = small_ints(rng, R * C, -5, 5);
                tgl_tensor ta = s.in({R, C}, a, TGL_DTYPE_F32), tb = s.in({C + 1}, small_ints(rng, C + 1, -5, 5), TGL_DTYPE_F32);
                tgl_tensor ty = s.in({R, C}, a, TGL_DTYPE_F32);
                tgl_tensor in[2] = {ta, tb};
                tgl_status st = c.api().run_op(c.device(), TGL_OP_ADD, nullptr, in, 2, &ty, 1);
                std::string m = c.api().last_error_message();
                if (st != TGL_ERROR_SHAPE_MISMATCH || m.find("run_op") == std::string::npos)
                    mismatch(tag + ": a shape mismatch gave " + tgl_status_name(st) + " \"" + m + "\"");
                else if (s.read<float>(ty) != a)
                    mismatch(tag + ": a rejected op wrote its output");
                break;
            }
            default: {  // the long-lived pool: allocate, check or free
                int what = int(rng.integer(0, 2));
                if (pool.empty() || (what == 0 && pool.size() < 8)) {
                    Kept k;
                    k.bytes.resize(size_t(rng.integer(1, 2048)));
                    for (auto& v : k.bytes) v = uint8_t(rng.integer(0, 255));
                    k.buffer = c.alloc(k.bytes.size());
                    pool.push_back(k);
                    c.upload(k.buffer, k.bytes);
                } else {
                    size_t i = size_t(rng.integer(0, int64_t(pool.size()) - 1));
                    check_kept(pool[i]);
                    if (what == 2) {
                        c.free(pool[i].buffer);
                        pool.erase(pool.begin() + long(i));
                    }
                }
                break;
            }
            }
            ++r.checked;
        }
        for (const Kept& k : pool) {
            check_kept(k);
            c.free(k.buffer);
        }
        pool.clear();
    } catch (const std::exception& e) {
        r.problems.push_back(std::string("a call failed: ") + e.what());
        for (const Kept& k : pool) c.api().buffer_free(c.device(), k.buffer);
    }
}

// Stress: 16 host threads (TGL_STRESS_THREADS) share one freshly opened device, each running its
// own random mix (own seed) of allocs, uploads, ops, downloads, frees and bad calls; every result
// is checked exactly. Steps per thread: TGL_STRESS_OPS (default 2000 on the CPU plugin, 500 on GLES,
// where every step waits for a GPU round trip on llvmpipe).
TEST_F(Threads, StressManyThreadsMixedCallsOneDevice) {
    const tgl_plugin_api& api = plug().api();
    const int kThreads = env_count("TGL_STRESS_THREADS", 16);
    const int kSteps = env_count("TGL_STRESS_OPS", is_gles() ? 500 : 2000);
    tgl_device dev = 0;
    ASSERT_EQ(api.device_open(0, &dev), TGL_OK) << plug().last_error();
    std::vector<StressResult> results(static_cast<size_t>(kThreads));
    std::vector<uint64_t> seeds;
    for (int t = 0; t < kThreads; ++t) seeds.push_back(case_seed("stress thread " + std::to_string(t)));
    auto start = std::chrono::steady_clock::now();
    {
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t)
            threads.emplace_back([&, t] {
                Caller c(api, dev);
                stress_steps(c, seeds[size_t(t)], kSteps, results[size_t(t)]);
            });
        for (auto& th : threads) th.join();
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(api.device_close(dev), TGL_OK) << plug().last_error();
    int64_t checked = 0, mismatches = 0;
    std::map<std::string, int64_t> kinds;
    for (int t = 0; t < kThreads; ++t) {
        const StressResult& r = results[size_t(t)];
        checked += r.checked;
        mismatches += r.mismatches;
        for (const auto& kv : r.kinds) kinds[kv.first] += kv.second;
        EXPECT_TRUE(r.problems.empty()) << "thread " << t << " (seed " << seeds[size_t(t)] << "): " << r.problems.size()
                                        << " problem(s), first: " << (r.problems.empty() ? "" : r.problems[0]);
        EXPECT_EQ(r.checked, kSteps) << "thread " << t;
    }
    std::string mix;
    for (const auto& kv : kinds) mix += (mix.empty() ? "" : ", ") + kv.first + " " + std::to_string(kv.second);
    std::printf("[  STRESS  ] %s: %d threads x %d ops on one device = %lld ops checked exactly, %lld mismatches "
                "(%.1f s; %s)\n",
                plug().name().c_str(), kThreads, kSteps, (long long)checked, (long long)mismatches, secs, mix.c_str());
    std::fflush(stdout);
    EXPECT_EQ(mismatches, 0);
    EXPECT_EQ(checked, int64_t(kThreads) * kSteps);
}

// Threads of this process named `name` (/proc/self/task/<tid>/comm), or all of them (nullptr).
int count_threads(const char* name = nullptr) {
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    while (struct dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        if (!name) {
            ++n;
            continue;
        }
        std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string s;
        std::getline(comm, s);
        if (s == name) ++n;
    }
    ::closedir(d);
    return n;
}

// count_threads once it equals `want`, or after 2 s. A joined thread leaves /proc/self/task a
// moment after pthread_join returns (the kernel wakes the joiner before it reaps the task), so a
// count taken right after device_close can still see it.
int count_threads_settled(int want, const char* name = nullptr) {
    int n = count_threads(name);
    for (int i = 0; i < 200 && n != want; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        n = count_threads(name);
    }
    return n;
}

// The GLES plugin names each device's GL thread (gl_thread.h); the CPU plugin owns no thread.
const char kGlThreadName[] = "tgl-gles-gl";

// The ABI lets device_open open one index more than once: each open is a device of its own (on
// GLES its own context and GL thread), with its own buffers; a buffer of one is an invalid handle
// on the other. Both run ops from several threads at once with exact results, and closing one
// leaves the other working.
// Threads of their own on each of `devs` (per_device of them) run the exactly checked stress steps
// at once; first, a buffer of one device must not be usable on another.
void stress_devices_at_once(const tgl_plugin_api& api, const std::vector<tgl_device>& devs, int per_device, int steps,
                            const std::string& what) {
    tgl_buffer b0 = 0;
    ASSERT_EQ(api.buffer_alloc(devs[0], 64, &b0), TGL_OK);
    uint64_t size = 0;
    EXPECT_TGL_ERROR(api.buffer_size(devs[1], b0, &size), TGL_ERROR_INVALID_HANDLE, {"another device"});
    EXPECT_EQ(api.buffer_free(devs[0], b0), TGL_OK);

    const size_t n = devs.size(), n_threads = n * size_t(per_device);
    std::vector<StressResult> results(n_threads);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < n_threads; ++t)
        threads.emplace_back([&, t] {
            Caller c(api, devs[t % n]);
            stress_steps(c, case_seed("device " + std::to_string(t % n) + " thread " + std::to_string(t)), steps, results[t]);
        });
    for (auto& th : threads) th.join();
    int64_t checked = 0;
    for (size_t t = 0; t < n_threads; ++t) {
        checked += results[t].checked;
        EXPECT_TRUE(results[t].problems.empty()) << "thread " << t << " on device " << t % n << ": " << results[t].problems[0];
        EXPECT_EQ(results[t].mismatches, 0) << "thread " << t << " on device " << t % n;
    }
    std::printf("[  STRESS  ] %s: %s x %d threads each x %d ops = %lld ops checked exactly\n", plug().name().c_str(),
                what.c_str(), per_device, steps, (long long)checked);
    std::fflush(stdout);
}

TEST_F(Threads, TwoDevicesOfOneIndexWorkAtOnce) {
    const tgl_plugin_api& api = plug().api();
    const int gl_before = count_threads(kGlThreadName);
    tgl_device d[2] = {0, 0};
    ASSERT_EQ(api.device_open(0, &d[0]), TGL_OK) << plug().last_error();
    ASSERT_EQ(api.device_open(0, &d[1]), TGL_OK) << "a second open of index 0: " << plug().last_error();
    EXPECT_NE(d[0], d[1]);
    if (is_gles()) {
        EXPECT_EQ(count_threads(kGlThreadName), gl_before + 2) << "one GL thread per open device";
    }
    stress_devices_at_once(api, {d[0], d[1]}, 3, env_count("TGL_STRESS_OPS", is_gles() ? 200 : 500), "2 devices of index 0");

    EXPECT_EQ(api.device_close(d[0]), TGL_OK) << plug().last_error();
    if (is_gles()) {
        EXPECT_EQ(count_threads_settled(gl_before + 1, kGlThreadName), gl_before + 1);
    }
    StressResult after;
    Caller c1(api, d[1]);
    stress_steps(c1, case_seed("after closing the other"), 20, after);
    EXPECT_TRUE(after.problems.empty()) << after.problems[0];
    EXPECT_EQ(after.checked, 20);
    EXPECT_EQ(api.device_close(d[1]), TGL_OK) << plug().last_error();
    EXPECT_EQ(count_threads_settled(gl_before, kGlThreadName), gl_before);
}

// Every device the plugin enumerates (two GPUs of one host, say) opened at once, each with
// threads of its own running the exactly checked stress steps: the devices must not share state
// (buffers are per device) and work on all of them at once must be exact. With one device there is
// nothing to check: skipped, saying so (run it on a machine with several GPUs).
TEST_F(Threads, EveryDeviceWorksAtOnce) {
    const tgl_plugin_api& api = plug().api();
    uint32_t n = 0;
    ASSERT_EQ(api.device_count(&n), TGL_OK) << plug().last_error();
    std::vector<std::string> renderers(n);
    for (uint32_t i = 0; i < n; ++i) {
        const tgl_property* props = nullptr;
        uint32_t n_props = 0;
        ASSERT_EQ(api.device_properties(i, &props, &n_props), TGL_OK) << plug().last_error();
        for (uint32_t k = 0; k < n_props; ++k)
            if (std::string(props[k].name) == "name") renderers[i] = props[k].value;
            else if (std::string(props[k].name) == "egl.device") renderers[i] += std::string(", ") + props[k].value;
        std::printf("[  DEVICES ] %s: device %u of %u: %s\n", plug().name().c_str(), i, n, renderers[i].c_str());
    }
    std::fflush(stdout);
    if (n < 2) GTEST_SKIP() << plug().name() << " enumerates " << n << " device(s): nothing to run at once";
    std::vector<tgl_device> d(n, 0);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(api.device_open(i, &d[i]), TGL_OK) << "device " << i << ": " << plug().last_error();
    stress_devices_at_once(api, d, 2, env_count("TGL_STRESS_OPS", is_gles() ? 200 : 500), std::to_string(n) + " devices");
    for (uint32_t i = 0; i < n; ++i) EXPECT_EQ(api.device_close(d[i]), TGL_OK) << "device " << i << ": " << plug().last_error();
}

// A device closed while other threads hold its buffers and are calling into it: each of those
// threads gets a clear error at its next call (a stale device or buffer handle, or "device
// closed"), naming what was closed; never a crash, a hang or a wrong result. Afterwards the
// buffers report stale handles.
TEST_F(Threads, DeviceClosedWhileOtherThreadsUseIt) {
    const tgl_plugin_api& api = plug().api();
    tgl_device dev = 0;
    ASSERT_EQ(api.device_open(0, &dev), TGL_OK) << plug().last_error();
    const int kThreads = 6;
    const int64_t kN = 257;
    struct Outcome {
        int good = 0;
        tgl_status error = TGL_OK;
        std::string message, wrong;
        std::vector<tgl_buffer> buffers;
    };
    std::vector<Outcome> out(kThreads);
    std::atomic<int> rounds{0};
    std::atomic<bool> closed{false};
    auto worker = [&](int t) {
        Outcome& o = out[size_t(t)];
        Rng rng(case_seed("closing " + std::to_string(t)));
        auto failed = [&](tgl_status s) {
            if (s == TGL_OK) return false;
            o.error = s;
            o.message = api.last_error_message();
            return true;
        };
        tgl_buffer a = 0, y = 0;
        if (failed(api.buffer_alloc(dev, kN * 4, &a))) return;
        o.buffers.push_back(a);
        if (failed(api.buffer_alloc(dev, kN * 4, &y))) return;
        o.buffers.push_back(y);
        Shape sh{kN};
        tgl_tensor ta = tgl_tensor_contiguous(a, 0, TGL_DTYPE_F32, 1, sh.data());
        tgl_tensor ty = tgl_tensor_contiguous(y, 0, TGL_DTYPE_F32, 1, sh.data());
        for (int i = 0; i < 1000000; ++i) {
            std::vector<float> av = small_ints(rng, kN, -1000, 1000), got(static_cast<size_t>(kN));
            if (failed(api.buffer_upload(dev, a, 0, av.data(), kN * 4))) return;
            tgl_tensor in[2] = {ta, ta};
            if (failed(api.run_op(dev, TGL_OP_ADD, nullptr, in, 2, &ty, 1))) return;
            if (failed(api.buffer_download(dev, y, 0, got.data(), kN * 4))) return;
            for (int64_t k = 0; k < kN; ++k)
                if (got[size_t(k)] != 2 * av[size_t(k)] && o.wrong.empty())
                    o.wrong = "round " + std::to_string(i) + " element " + std::to_string(k) + ": got " +
                              fmt(got[size_t(k)]) + ", expected " + fmt(2 * av[size_t(k)]);
            ++o.good;
            rounds.fetch_add(1);
        }
        o.wrong = "the device was never closed under this thread";
    };
    std::vector<std::future<void>> done;
    for (int t = 0; t < kThreads; ++t) done.push_back(std::async(std::launch::async, worker, t));
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (rounds.load() < kThreads * 3 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(api.device_close(dev), TGL_OK) << plug().last_error();
    closed = true;
    for (int t = 0; t < kThreads; ++t)
        if (done[size_t(t)].wait_until(deadline) != std::future_status::ready) {
            std::fprintf(stderr, "thread %d still runs 120 s after the device was closed: a hang\n", t);
            std::abort();  // a hung call cannot be cancelled; end the test process loudly
        }
    for (int t = 0; t < kThreads; ++t) {
        const Outcome& o = out[size_t(t)];
        EXPECT_EQ(o.wrong, "") << "thread " << t;
        EXPECT_TRUE(o.error == TGL_ERROR_STALE_HANDLE || o.error == TGL_ERROR_INVALID_HANDLE ||
                    o.error == TGL_ERROR_DEVICE_UNAVAILABLE)
            << "thread " << t << " ended with " << tgl_status_name(o.error) << " \"" << o.message << "\"";
        EXPECT_NE(o.message.find("closed"), std::string::npos)
            << "thread " << t << ": the message does not say the device was closed: \"" << o.message << "\"";
        for (tgl_buffer b : o.buffers) {
            EXPECT_TGL_ERROR(api.buffer_free(dev, b), TGL_ERROR_STALE_HANDLE, {"device", "closed"});
        }
    }
    int good = 0;
    for (const Outcome& o : out) good += o.good;
    EXPECT_GE(good, kThreads * 3);
    EXPECT_TGL_ERROR(api.device_close(dev), TGL_ERROR_STALE_HANDLE, {"device", "already closed"});
    std::printf("[  CLOSE   ] %s: %d threads, %d exact rounds before the close, every thread then got a clear error "
                "(first: \"%s\")\n",
                plug().name().c_str(), kThreads, good, out[0].message.c_str());
    std::fflush(stdout);
}

// The plugin's own threads end with the device: /proc/self/task counts before open, with the
// device open and after close. A first open/close cycle lets the driver start whatever it keeps
// per process (Mesa's screen threads); after that, every close returns to the same count. The
// CPU plugin owns no thread; GLES owns exactly one per open device (named, see gl_thread.h).
TEST_F(Threads, PluginThreadsAreJoinedOnClose) {
    const tgl_plugin_api& api = plug().api();
    int open_total = 0, open_named = 0;
    auto cycle = [&] {
        tgl_device d = 0;
        ASSERT_EQ(api.device_open(0, &d), TGL_OK) << plug().last_error();
        StressResult r;
        Caller cd(api, d);
        stress_steps(cd, case_seed("cycle"), 6, r);
        EXPECT_TRUE(r.problems.empty()) << r.problems[0];
        open_total = count_threads();
        open_named = count_threads(kGlThreadName);
        ASSERT_EQ(api.device_close(d), TGL_OK) << plug().last_error();
    };
    cycle();
    const int base_total = count_threads(), base_named = count_threads(kGlThreadName);
    ASSERT_GT(base_total, 0);
    for (int i = 0; i < 3; ++i) {
        cycle();
        const int own = is_gles() ? 1 : 0;
        EXPECT_EQ(open_named, base_named + own) << "cycle " << i;
        if (is_gles()) {
            EXPECT_GE(open_total, base_total + 1) << "cycle " << i;
        } else {
            EXPECT_EQ(open_total, base_total) << "cycle " << i << ": the CPU device should own no thread";
        }
        EXPECT_EQ(count_threads_settled(base_total), base_total) << "cycle " << i << ": threads left after device_close";
        EXPECT_EQ(count_threads_settled(base_named, kGlThreadName), base_named) << "cycle " << i;
        if (i == 0)
            std::printf("[ THREADS  ] %s: %d threads in the process before open, %d with a device open "
                        "(%d of them the plugin's), %d after close\n",
                        plug().name().c_str(), base_total, open_total, open_named - base_named, count_threads());
    }
    std::fflush(stdout);
}

}  // namespace
}  // namespace conf
