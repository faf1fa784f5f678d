// Threads: error messages are per thread, and many host threads can use one device at once.
#include "common.h"

#include <atomic>
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

}  // namespace
}  // namespace conf
