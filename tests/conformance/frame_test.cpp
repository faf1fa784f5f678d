// The plugin frame shared by every plugin (backends/common): handle generations past the wrap,
// device_properties under concurrent readers, the per-thread error message.
#include "common.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace conf {
namespace {

using Frame = ConformanceTest;

// A handle slot that reaches its last generation is retired: every handle it gave out stays
// stale (never INVALID, never valid again), and later handles are all new. TGL_TEST_HANDLE_GENERATION
// makes new slots start 16 generations before the last, so that a few reuses pass the wrap; it is
// read when the plugin is initialised, so the check runs in a fresh process (a death-test child).
void check_handles_past_the_wrap() {
    Device d(plug());
    const tgl_plugin_api& api = d.api();
    std::vector<tgl_buffer> buffers;
    std::vector<tgl_graph> graphs;
    int bad = 0;
    for (int i = 0; i < 40; ++i) {  // one slot reused past its 16 remaining generations, twice
        tgl_buffer b = d.alloc(64);
        for (tgl_buffer old : buffers) bad += old == b;
        d.free(b);
        buffers.push_back(b);
        tgl_graph g = 0;
        d.check(api.graph_begin(d.handle()), "graph_begin");
        d.check(api.graph_end(d.handle(), &g), "graph_end");
        for (tgl_graph old : graphs) bad += old == g;
        d.check(api.graph_destroy(d.handle(), g), "graph_destroy");
        graphs.push_back(g);
    }
    if (bad) std::fprintf(stderr, "%d handles were issued twice\n", bad);
    tgl_buffer live = d.alloc(64);  // a new owner: no stale handle may reach it
    for (size_t i = 0; i < buffers.size(); ++i) {
        uint64_t size = 0;
        tgl_status s = api.buffer_size(d.handle(), buffers[i], &size);
        tgl_status f = api.buffer_free(d.handle(), buffers[i]);
        if (s != TGL_ERROR_STALE_HANDLE || f != TGL_ERROR_STALE_HANDLE) {
            std::fprintf(stderr, "freed buffer %zu (0x%016llx): buffer_size %s, buffer_free %s: %s\n", i,
                         (unsigned long long)buffers[i], tgl_status_name(s), tgl_status_name(f),
                         plug().last_error().c_str());
            ++bad;
        }
    }
    for (size_t i = 0; i < graphs.size(); ++i) {
        tgl_status s = api.graph_replay(d.handle(), graphs[i]);
        if (s != TGL_ERROR_STALE_HANDLE) {
            std::fprintf(stderr, "destroyed graph %zu: graph_replay %s: %s\n", i, tgl_status_name(s),
                         plug().last_error().c_str());
            ++bad;
        }
    }
    d.free(live);
    d.close();
    std::fflush(stderr);
    std::_Exit(bad == 0 ? 0 : 1);
}

TEST_F(Frame, StaleHandlesStayStalePastTheGenerationWrap) {
    ::testing::FLAGS_gtest_death_test_style = "threadsafe";  // re-executes this binary: a fresh plugin
    setenv("TGL_TEST_HANDLE_GENERATION", "0xFFFFF0", 1);
    EXPECT_EXIT(check_handles_past_the_wrap(), ::testing::ExitedWithCode(0), "");
    unsetenv("TGL_TEST_HANDLE_GENERATION");
}

// The header: property strings live until the plugin is unloaded. Readers on several threads, while
// ops change the counters, keep every result they got and find each one as it was when returned.
TEST_F(Frame, DevicePropertiesStayAsReturnedWhileOthersReadAndOpsRun) {
    const tgl_plugin_api& api = plug().api();
    std::atomic<bool> stop{false};
    std::atomic<int> torn{0}, calls{0};
    std::string first_problem;
    std::mutex problem_mutex;
    auto reader = [&] {
        struct Seen {
            const tgl_property* props;
            uint32_t n;
            std::vector<std::string> values;
        };
        std::vector<Seen> seen;
        while (!stop.load()) {
            const tgl_property* p = nullptr;
            uint32_t n = 0;
            if (api.device_properties(0, &p, &n) != TGL_OK) {
                ++torn;
                continue;
            }
            ++calls;
            Seen s{p, n, {}};
            for (uint32_t i = 0; i < n; ++i) s.values.push_back(p[i].value);
            if (seen.size() < 64) seen.push_back(std::move(s));
            for (const Seen& old : seen)
                for (uint32_t i = 0; i < old.n; ++i)
                    if (old.values[i] != old.props[i].value) {
                        ++torn;
                        std::lock_guard<std::mutex> lock(problem_mutex);
                        if (first_problem.empty())
                            first_problem = std::string(old.props[i].name) + " was '" + old.values[i] + "', now '" +
                                            old.props[i].value + "'";
                    }
        }
    };
    std::vector<std::thread> readers;
    for (int i = 0; i < 4; ++i) readers.emplace_back(reader);
    {
        Device d(plug());
        DeviceTensor a(d, contiguous({1000})), y(d, contiguous({1000}));
        a.set_values(iota_values(1000));
        // At least 150 ops, and on until the readers have made some calls (CPU ops are quick).
        for (int i = 0; i < 150 || (calls.load() < 200 && i < 100000); ++i) {
            y.poison();
            d.run_ok(TGL_OP_EXP, nullptr, {a.desc()}, {y.desc()});
            if (i % 10 == 0) d.synchronize();
        }
        d.synchronize();
    }
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_EQ(torn.load(), 0) << first_problem;
    EXPECT_GT(calls.load(), 4);
    // Nothing ran since: the same snapshot again, no new storage.
    const tgl_property *p1 = nullptr, *p2 = nullptr;
    uint32_t n1 = 0, n2 = 0;
    ASSERT_EQ(api.device_properties(0, &p1, &n1), TGL_OK);
    ASSERT_EQ(api.device_properties(0, &p2, &n2), TGL_OK);
    EXPECT_EQ(p1, p2) << "device_properties stored a new snapshot although no counter changed";
    std::printf("[ frame    ] %d device_properties calls on 4 threads while ops ran, %d results changed\n",
                calls.load(), torn.load());
}

// last_error_message: the message of the thread's most recent failing call, kept by later calls
// that succeed (plugin_api.h; the loader's tgl_loader_last_error does the same).
TEST_F(Frame, SuccessfulCallsKeepTheLastErrorMessage) {
    const tgl_plugin_api& api = plug().api();
    uint64_t size = 0;
    ASSERT_EQ(api.buffer_size(dev().handle(), 0, &size), TGL_ERROR_INVALID_HANDLE);
    const std::string failed = api.last_error_message();
    EXPECT_NE(failed.find("buffer_size"), std::string::npos) << failed;
    uint32_t count = 0;
    ASSERT_EQ(api.device_count(&count), TGL_OK);
    tgl_buffer b = dev().alloc(16);
    dev().free(b);
    dev().synchronize();
    EXPECT_EQ(std::string(api.last_error_message()), failed);
    // Another failure replaces it.
    ASSERT_EQ(api.device_count(nullptr), TGL_ERROR_NULL_POINTER);
    EXPECT_NE(std::string(api.last_error_message()), failed);
}

// Each failing call's message starts with the call's name once ("synchronize: ...", never
// "synchronize: synchronize: ..."), whatever added it.
TEST_F(Frame, MessagesNameTheirCallOnce) {
    const tgl_plugin_api& api = plug().api();
    float host[4];
    const uint32_t word = 0;
    auto check = [&](const char* call, tgl_status s) {
        ASSERT_NE(s, TGL_OK) << call;
        std::string m = api.last_error_message();
        std::string once = std::string(call) + ": ";
        EXPECT_EQ(m.compare(0, once.size(), once), 0) << m;
        EXPECT_NE(m.compare(0, 2 * once.size(), once + once), 0) << "the call's name twice: " << m;
    };
    Device e(plug());
    tgl_buffer f2 = e.alloc(64);
    e.free(f2);
    check("buffer_download", api.buffer_download(e.handle(), f2, 0, host, sizeof host));
    check("buffer_upload", api.buffer_upload(e.handle(), f2, 0, host, sizeof host));
    check("buffer_fill", api.buffer_fill(e.handle(), f2, 0, 4, &word, 4));
    check("buffer_alloc", api.buffer_alloc(e.handle(), ~uint64_t(0), &f2));
    check("run_op", api.run_op(e.handle(), TGL_OP_INVALID, nullptr, nullptr, 0, nullptr, 0));
    check("synchronize", api.synchronize(0));
    check("device_open", api.device_open(1u << 30, nullptr));
    tgl_device gone = e.handle();
    e.close();
    check("synchronize", api.synchronize(gone));
    check("device_close", api.device_close(gone));
}

}  // namespace
}  // namespace conf
