// Command line, seeds, the failure listener and the environment that closes shared devices.
#include "tgl_test/support.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <malloc.h>
#include <mutex>

namespace tgl_test {

namespace {

Config g_config;

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001B3ull;
    }
    return h;
}

bool parse_u64(const char* s, uint64_t* out) {
    if (!s || !*s) return false;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 0);
    if (errno || !end || *end) return false;
    *out = v;
    return true;
}

[[noreturn]] void usage(const char* prog, Mode mode, const std::string& problem) {
    std::fprintf(stderr, "%s: %s\n", prog, problem.c_str());
    if (mode == Mode::Conformance)
        std::fprintf(stderr,
                     "usage: %s --plugin=<path or name of a tensorgl plugin> [gtest flags]\n"
                     "       (or set TGL_TEST_PLUGIN)\n",
                     prog);
    else
        std::fprintf(stderr,
                     "usage: %s --reference=<plugin> --subject=<plugin> [gtest flags]\n"
                     "       (or set TGL_TEST_REFERENCE and TGL_TEST_SUBJECT)\n",
                     prog);
    std::fprintf(stderr, "       TGL_TEST_SEED=<n> replays a run with the seed it printed.\n");
    std::exit(2);
}

const char* role_name(Role r);

// Prints the seed again after every failing assertion and at the end of a failing run.
std::mutex g_name_mutex;
std::string g_test_name;

// Also records the running test's name: gtest holds its own lock while it calls listeners, so the
// hint must not ask gtest for the current test from inside OnTestPartResult.
class SeedListener : public ::testing::EmptyTestEventListener {
    void OnTestStart(const ::testing::TestInfo& info) override {
        std::lock_guard<std::mutex> lock(g_name_mutex);
        g_test_name = std::string(info.test_suite_name()) + "." + info.name();
    }
    void OnTestEnd(const ::testing::TestInfo& info) override {
        if (info.result() && info.result()->Failed()) drop_lost_shared_devices();
        std::lock_guard<std::mutex> lock(g_name_mutex);
        g_test_name.clear();
    }
    void OnTestPartResult(const ::testing::TestPartResult& r) override {
        if (r.failed())
            std::printf("[  SEED    ] %s\n", reproduce_hint().c_str());
    }
    void OnTestProgramEnd(const ::testing::UnitTest& u) override {
        std::printf("[  SEED    ] this run used TGL_TEST_SEED=%" PRIu64 "%s\n", g_config.seed,
                    u.Passed() ? "" : " (set it to reproduce the failures)");
        std::fflush(stdout);
    }
};

// Deliberately never destroyed: at static destruction the plugins' own statics may be gone, so a
// device still open then (a program that ends without RUN_ALL_TESTS' environment tear-down) must
// not be closed from a destructor.
std::mutex g_shared_mutex;
std::map<Role, std::unique_ptr<Plugin>>& plugins() {
    static auto* m = new std::map<Role, std::unique_ptr<Plugin>>;
    return *m;
}
std::map<Role, std::unique_ptr<Device>>& devices() {
    static auto* m = new std::map<Role, std::unique_ptr<Device>>;
    return *m;
}

// Closes shared devices before gtest returns from RUN_ALL_TESTS, so a plugin's worker threads are
// shut down while the process is still whole.
class SharedEnvironment : public ::testing::Environment {
    void TearDown() override {
        std::lock_guard<std::mutex> lock(g_shared_mutex);
        for (auto& kv : devices()) {
            try {
                kv.second->close();
            } catch (const std::exception& e) {
                ADD_FAILURE() << "closing the shared device at the end: " << e.what();
            }
        }
        devices().clear();
    }
};

const char* role_name(Role r) {
    switch (r) {
    case Role::Plugin: return "plugin";
    case Role::Reference: return "reference";
    case Role::Subject: return "subject";
    }
    return "?";
}

}  // namespace

// After a failed test: a shared device that test lost (a dispatch past the GL time limit, say) is
// closed, so that the next test opens a fresh one instead of failing with the lost device's
// sticky TGL_ERROR_DEVICE_UNAVAILABLE. Only failed tests pay for the check.
int drop_lost_shared_devices() {
    std::lock_guard<std::mutex> lock(g_shared_mutex);
    int dropped = 0;
    for (auto it = devices().begin(); it != devices().end();) {
        Device& d = *it->second;
        if (d.api().synchronize(d.handle()) != TGL_ERROR_DEVICE_UNAVAILABLE) {
            ++it;
            continue;
        }
        const char* msg = d.api().last_error_message ? d.api().last_error_message() : nullptr;
        std::printf("[  DEVICE  ] the shared %s device was lost (%s); the next test opens a fresh one\n",
                    role_name(it->first), msg && *msg ? msg : "no message");
        std::fflush(stdout);
        try {
            d.close();  // returns the loss again, as the ABI allows
        } catch (const std::exception&) {
        }
        it = devices().erase(it);
        ++dropped;
    }
    return dropped;
}

void close_shared_device(Role role) {
    std::lock_guard<std::mutex> lock(g_shared_mutex);
    auto it = devices().find(role);
    if (it == devices().end()) return;
    it->second->close();
    devices().erase(it);
}

Failure::Failure(const std::string& what) : std::runtime_error(what + "\n  [" + reproduce_hint() + "]") {}

void init(int* argc, char** argv, Mode mode) {
    const char* prog = *argc > 0 ? argv[0] : "tgl_test";
    int out = 1;
    for (int i = 1; i < *argc; ++i) {
        std::string a = argv[i];
        auto take = [&](const char* flag, std::string* dst) {
            std::string f = std::string("--") + flag + "=";
            if (a.compare(0, f.size(), f) != 0) return false;
            *dst = a.substr(f.size());
            return true;
        };
        bool ok = false;
        if (mode == Mode::Conformance) ok = take("plugin", &g_config.plugin);
        else ok = take("reference", &g_config.reference) || take("subject", &g_config.subject);
        if (ok) continue;
        if (a.size() > 2 && a[0] == '-' && a[1] == '-') usage(prog, mode, "unknown flag '" + a + "'");
        argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = nullptr;

    auto env = [](const char* name) -> std::string {
        const char* v = std::getenv(name);
        return v ? v : "";
    };
    if (mode == Mode::Conformance) {
        if (g_config.plugin.empty()) g_config.plugin = env("TGL_TEST_PLUGIN");
        if (g_config.plugin.empty()) usage(prog, mode, "no plugin given");
    } else {
        if (g_config.reference.empty()) g_config.reference = env("TGL_TEST_REFERENCE");
        if (g_config.subject.empty()) g_config.subject = env("TGL_TEST_SUBJECT");
        if (g_config.reference.empty() || g_config.subject.empty())
            usage(prog, mode, "both a reference and a subject plugin are needed");
    }

    const char* s = std::getenv("TGL_TEST_SEED");
    if (s && *s) {
        if (!parse_u64(s, &g_config.seed)) usage(prog, mode, std::string("TGL_TEST_SEED='") + s + "' is not an unsigned integer");
        g_config.seed_from_env = true;
    } else {
        std::random_device rd;
        g_config.seed = (uint64_t(rd()) << 32) ^ uint64_t(rd());
    }
    // Big test tensors (64 MiB and more) are allocated and freed many times; served by mmap, every
    // one of them costs a page fault per 4 KiB when touched again. Keep them on the heap instead.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);

    std::printf("[  SEED    ] TGL_TEST_SEED=%" PRIu64 " (%s)\n", g_config.seed,
                g_config.seed_from_env ? "from the environment" : "fresh; set TGL_TEST_SEED to this value to reproduce");
    if (mode == Mode::Conformance)
        std::printf("[  PLUGIN  ] %s\n", g_config.plugin.c_str());
    else
        std::printf("[  PLUGINS ] reference %s, subject %s\n", g_config.reference.c_str(), g_config.subject.c_str());
    std::fflush(stdout);

    ::testing::UnitTest::GetInstance()->listeners().Append(new SeedListener);
    ::testing::AddGlobalTestEnvironment(new SharedEnvironment);
}

const Config& config() { return g_config; }

uint64_t run_seed() { return g_config.seed; }

std::string reproduce_hint() {
    std::string hint = "TGL_TEST_SEED=" + std::to_string(g_config.seed) + " reproduces this run";
    std::string name = current_test_name();
    if (!name.empty()) hint += " (--gtest_filter='" + name + "' runs this case alone)";
    return hint;
}

std::string current_test_name() {
    std::lock_guard<std::mutex> lock(g_name_mutex);
    return g_test_name;
}

uint64_t case_seed(const std::string& extra) {
    return splitmix64(g_config.seed ^ fnv1a(current_test_name() + "#" + extra));
}

Rng case_rng(const std::string& extra) { return Rng(case_seed(extra)); }

SeededTest::SeededTest() : trace_(__FILE__, __LINE__, reproduce_hint()), rng_(case_seed()) {}

Plugin& plugin(Role role) {
    std::lock_guard<std::mutex> lock(g_shared_mutex);
    auto& m = plugins();
    auto it = m.find(role);
    if (it != m.end()) return *it->second;
    const std::string& path = role == Role::Plugin      ? g_config.plugin
                              : role == Role::Reference ? g_config.reference
                                                        : g_config.subject;
    if (path.empty())
        throw Failure(std::string("no ") + role_name(role) + " plugin configured (tgl_test::init not called?)");
    auto p = std::make_unique<Plugin>(path);
    Plugin& ref = *p;
    m[role] = std::move(p);
    return ref;
}

Device& shared_device(Role role) {
    Plugin& p = plugin(role);
    std::lock_guard<std::mutex> lock(g_shared_mutex);
    auto& m = devices();
    auto it = m.find(role);
    if (it != m.end()) return *it->second;
    auto d = std::make_unique<Device>(p, 0);
    Device& ref = *d;
    m[role] = std::move(d);
    return ref;
}

}  // namespace tgl_test
