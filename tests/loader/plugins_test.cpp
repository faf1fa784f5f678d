// The real plugins through libtensorgl, in one process: the CPU and GLES plugins (and Mesa, which
// the GLES plugin brings in) side by side without symbol clashes, the lifetime of a loaded plugin
// (never unmapped while it may run threads: not by tgl_plugin_release, not by a host's own
// dlclose), and a process that exits with devices open and busy threads.
#include <tensorgl/loader.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

const std::string kCpu = TGL_CPU_PLUGIN_FILE;
const std::string kGles = TGL_GLES_PLUGIN_FILE;
const char kGlThreadName[] = "tgl-gles-gl";  // backends/gles/gl_thread.h

std::string real(const std::string& path) {
    char* r = ::realpath(path.c_str(), nullptr);
    std::string s = r ? r : path;
    std::free(r);
    return s;
}

// Threads of this process with this name (/proc/self/task/<tid>/comm).
int named_threads(const char* name) {
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    while (struct dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
        std::string s;
        std::getline(comm, s);
        n += s == name;
    }
    ::closedir(d);
    return n;
}

tgl_plugin* load(const std::string& path) {
    tgl_plugin* p = nullptr;
    tgl_status s = tgl_plugin_load(path.c_str(), &p);
    EXPECT_EQ(s, TGL_OK) << tgl_loader_last_error();
    return s == TGL_OK ? p : nullptr;
}

std::string plugin_error(const tgl_plugin_api* api, tgl_status s) {
    return std::string(tgl_status_name(s)) + " \"" + api->last_error_message() + "\"";
}

// C = A @ B on a device, with small integers (exact in f32 on every plugin); empty on error.
std::vector<float> matmul_on(const tgl_plugin_api* api, tgl_device dev, int64_t m, int64_t k, int64_t n,
                             const std::vector<float>& a, const std::vector<float>& b, std::string* error) {
    tgl_buffer ba = 0, bb = 0, bc = 0;
    std::vector<float> c(size_t(m * n));
    tgl_status s = api->buffer_alloc(dev, a.size() * 4, &ba);
    if (s == TGL_OK) s = api->buffer_alloc(dev, b.size() * 4, &bb);
    if (s == TGL_OK) s = api->buffer_alloc(dev, c.size() * 4, &bc);
    if (s == TGL_OK) s = api->buffer_upload(dev, ba, 0, a.data(), a.size() * 4);
    if (s == TGL_OK) s = api->buffer_upload(dev, bb, 0, b.data(), b.size() * 4);
    if (s == TGL_OK) {
        int64_t sa[2] = {m, k}, sb[2] = {k, n}, sc[2] = {m, n};
        tgl_tensor in[2] = {tgl_tensor_contiguous(ba, 0, TGL_DTYPE_F32, 2, sa),
                            tgl_tensor_contiguous(bb, 0, TGL_DTYPE_F32, 2, sb)};
        tgl_tensor out = tgl_tensor_contiguous(bc, 0, TGL_DTYPE_F32, 2, sc);
        s = api->run_op(dev, TGL_OP_MATMUL, nullptr, in, 2, &out, 1);
    }
    if (s == TGL_OK) s = api->buffer_download(dev, bc, 0, c.data(), c.size() * 4);
    if (s != TGL_OK) {
        *error = plugin_error(api, s);
        c.clear();
    }
    for (tgl_buffer x : {ba, bb, bc})
        if (x) api->buffer_free(dev, x);
    return c;
}

std::vector<float> small_ints(size_t n, unsigned seed) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = float(int((i * 2654435761u + seed * 40503u) >> 7) % 9 - 4);
    return v;
}

// C = A (m x k) * B (k x n) by the definition, row-major (exact for small_ints' values).
std::vector<float> host_matmul(const std::vector<float>& a, const std::vector<float>& b, int64_t m, int64_t k, int64_t n) {
    std::vector<float> c(size_t(m * n), 0.0f);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j)
            for (int64_t p = 0; p < k; ++p) c[size_t(i * n + j)] += a[size_t(i * k + p)] * b[size_t(p * n + j)];
    return c;
}

// Mangled C++ symbols of tensorgl's own code (namespace tgl) in a library's full symbol table
// (nm without -D: what the linker saw, not what the library exports).
std::set<std::string> internal_symbols(const std::string& lib) {
    std::set<std::string> out;
    std::string cmd = "nm --defined-only '" + lib + "' 2>/dev/null";
    FILE* f = ::popen(cmd.c_str(), "r");
    if (!f) return out;
    char line[4096];
    while (std::fgets(line, sizeof line, f)) {
        std::string s = line;
        size_t sp = s.find_last_of(' ');
        if (sp == std::string::npos) continue;
        std::string name = s.substr(sp + 1);
        while (!name.empty() && (name.back() == '\n' || name.back() == '\r')) name.pop_back();
        if (name.rfind("_ZN3tgl", 0) == 0) out.insert(name);
    }
    ::pclose(f);
    return out;
}

}  // namespace

// Both plugins and Mesa in one process: a device of each runs the same matmul with equal results.
TEST(TwoPlugins, CpuAndGlesInOneProcessGiveEqualResults) {
    tgl_plugin* cpu = load(kCpu);
    tgl_plugin* gles = load(kGles);
    ASSERT_TRUE(cpu && gles);
    const tgl_plugin_api* capi = tgl_plugin_get_api(cpu);
    const tgl_plugin_api* gapi = tgl_plugin_get_api(gles);
    uint32_t n = 0;
    ASSERT_EQ(gapi->device_count(&n), TGL_OK);
    if (n == 0) GTEST_SKIP() << "the GLES plugin sees no device here";
    tgl_device cd = 0, gd = 0;
    ASSERT_EQ(capi->device_open(0, &cd), TGL_OK) << capi->last_error_message();
    ASSERT_EQ(gapi->device_open(0, &gd), TGL_OK) << gapi->last_error_message();
    const int64_t m = 37, k = 29, nn = 41;
    std::vector<float> a = small_ints(size_t(m * k), 1), b = small_ints(size_t(k * nn), 2);
    std::string e1, e2;
    std::vector<float> c1 = matmul_on(capi, cd, m, k, nn, a, b, &e1);
    std::vector<float> c2 = matmul_on(gapi, gd, m, k, nn, a, b, &e2);
    EXPECT_EQ(e1, "");
    EXPECT_EQ(e2, "");
    ASSERT_EQ(c1.size(), size_t(m * nn));
    EXPECT_EQ(c1, c2) << "the CPU and GLES plugins disagree on an exact matmul in one process";
    // Spot check against the definition.
    float c00 = 0;
    for (int64_t i = 0; i < k; ++i) c00 += a[size_t(i)] * b[size_t(i * nn)];
    EXPECT_EQ(c1[0], c00);
    // Mesa is in the process (the GLES plugin opened a context through it).
    std::ifstream maps("/proc/self/maps");
    std::string line, mesa;
    while (std::getline(maps, line))
        if (line.find("libEGL") != std::string::npos || line.find("libgallium") != std::string::npos ||
            line.find("_dri.so") != std::string::npos || line.find("libGLESv2") != std::string::npos) {
            mesa = line.substr(line.find('/'));
            break;
        }
    EXPECT_NE(mesa, "") << "no EGL/GLES driver library is mapped after opening a GLES device";
    std::printf("[ PLUGINS  ] cpu + gles + %s in one process: %lldx%lldx%lld matmul equal on both\n", mesa.c_str(),
                (long long)m, (long long)k, (long long)nn);
    EXPECT_EQ(capi->device_close(cd), TGL_OK);
    EXPECT_EQ(gapi->device_close(gd), TGL_OK);
    tgl_plugin_release(cpu);
    tgl_plugin_release(gles);
}

// Each plugin's private C++ symbols (tgl::fail, tgl::plugin_init, the kernels, ...) exist in both
// plugins under the same names, but neither exports them and both are loaded RTLD_LOCAL: dlsym finds
// none of them, neither in the plugin's own handle nor in the global scope, and the one exported
// entry point of each plugin is its own.
TEST(TwoPlugins, PrivateSymbolsAreNotVisible) {
    tgl_plugin* cpu = load(kCpu);
    tgl_plugin* gles = load(kGles);
    ASSERT_TRUE(cpu && gles);
    void* hc = ::dlopen(real(kCpu).c_str(), RTLD_NOW | RTLD_NOLOAD);
    void* hg = ::dlopen(real(kGles).c_str(), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_TRUE(hc && hg) << "the loaded plugins are not mapped";
    void* ec = ::dlsym(hc, TGL_PLUGIN_ENTRY_NAME);
    void* eg = ::dlsym(hg, TGL_PLUGIN_ENTRY_NAME);
    EXPECT_TRUE(ec && eg);
    EXPECT_NE(ec, eg);
    EXPECT_EQ(::dlsym(RTLD_DEFAULT, TGL_PLUGIN_ENTRY_NAME), nullptr)
        << "a plugin's entry point is in the global scope: it was not loaded RTLD_LOCAL";
    std::set<std::string> sc = internal_symbols(kCpu), sg = internal_symbols(kGles);
    if (sc.size() < 10 || sg.size() < 10) GTEST_SKIP() << "the plugins are stripped (no symbol table to compare)";
    size_t shared = 0, checked = 0;
    for (const std::string& name : sc) shared += sg.count(name);
    EXPECT_GT(shared, 10u) << "expected the plugins to share private helpers (tgl_common)";
    for (const auto& lib : {std::make_pair(hc, &sc), std::make_pair(hg, &sg)})
        for (const std::string& name : *lib.second) {
            ++checked;
            EXPECT_EQ(::dlsym(lib.first, name.c_str()), nullptr) << name << " is exported";
            EXPECT_EQ(::dlsym(RTLD_DEFAULT, name.c_str()), nullptr) << name << " is in the global scope";
        }
    std::printf("[ PLUGINS  ] %zu private tgl:: symbols (%zu of them in both plugins), none visible to dlsym\n",
                checked, shared);
    ::dlclose(hc);
    ::dlclose(hg);
    tgl_plugin_release(cpu);
    tgl_plugin_release(gles);
}

// tgl_plugin_release with a device still open: the library stays mapped and the device keeps
// working (its GL thread too) until it is closed, which joins that thread.
TEST(PluginLifetime, ReleaseWithAnOpenDeviceKeepsItWorking) {
    tgl_plugin* gles = load(kGles);
    ASSERT_TRUE(gles);
    const tgl_plugin_api* api = tgl_plugin_get_api(gles);
    uint32_t n = 0;
    ASSERT_EQ(api->device_count(&n), TGL_OK);
    if (n == 0) GTEST_SKIP() << "the GLES plugin sees no device here";
    const int before = named_threads(kGlThreadName);
    tgl_device d = 0;
    ASSERT_EQ(api->device_open(0, &d), TGL_OK) << api->last_error_message();
    EXPECT_EQ(named_threads(kGlThreadName), before + 1);
    tgl_plugin_release(gles);
    void* h = ::dlopen(real(kGles).c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(h, nullptr) << "released plugin was unmapped while its device was open";
    if (h) ::dlclose(h);
    std::string err;
    std::vector<float> a = small_ints(12, 3), b = small_ints(12, 4);
    std::vector<float> c = matmul_on(api, d, 3, 4, 3, a, b, &err);
    EXPECT_EQ(err, "");
    EXPECT_EQ(c.size(), 9u);
    EXPECT_EQ(named_threads(kGlThreadName), before + 1);
    EXPECT_EQ(api->device_close(d), TGL_OK) << api->last_error_message();
    EXPECT_EQ(named_threads(kGlThreadName), before) << "the GL thread outlived device_close";
    // Loading it again gives the same plugin record.
    tgl_plugin* again = load(kGles);
    EXPECT_EQ(again, gles);
    tgl_plugin_release(again);
}

// A host that bypasses the loader and dlcloses a plugin itself: plugins are linked with
// -z nodelete, so the code of a device's thread is never unmapped under it. A private copy of each
// plugin (another inode, so a separate load) is opened, used with a device left open, dlclose'd,
// and must still be mapped and working.
TEST(PluginLifetime, HostDlcloseNeverUnmapsAPlugin) {
    char tmpl[] = "/tmp/tgl_plugins_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    const std::string dir = tmpl;
    for (const std::string& src : {kCpu, kGles}) {
        const std::string copy = dir + "/copy-" + std::filesystem::path(src).filename().string();
        std::filesystem::copy_file(src, copy);
        void* h = ::dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
        ASSERT_NE(h, nullptr) << ::dlerror();
        auto init = reinterpret_cast<tgl_plugin_init_v1_fn>(::dlsym(h, TGL_PLUGIN_ENTRY_NAME));
        ASSERT_NE(init, nullptr);
        const tgl_plugin_api* api = nullptr;
        ASSERT_EQ(init(TGL_ABI_MINOR, &api), TGL_OK);
        uint32_t n = 0;
        ASSERT_EQ(api->device_count(&n), TGL_OK);
        tgl_device d = 0;
        if (n > 0) {
            ASSERT_EQ(api->device_open(0, &d), TGL_OK) << api->last_error_message();
        }
        EXPECT_EQ(::dlclose(h), 0);
        void* still = ::dlopen(copy.c_str(), RTLD_NOW | RTLD_NOLOAD);
        EXPECT_NE(still, nullptr) << copy << " was unmapped by dlclose (not linked with -z nodelete)";
        if (!still) continue;  // calling into it now would crash
        ::dlclose(still);
        if (n > 0) {
            std::string err;
            std::vector<float> c = matmul_on(api, d, 2, 2, 2, {1, 2, 3, 4}, {5, 6, 7, 8}, &err);
            EXPECT_EQ(c, (std::vector<float>{19, 22, 43, 50})) << err;
            EXPECT_EQ(api->device_close(d), TGL_OK) << api->last_error_message();
        }
    }
    std::filesystem::remove_all(dir);
}

// Exit with devices open and threads busy in both plugins: the child process must end by itself,
// with status 0, quickly (no hang in a GL thread at exit, no crash in a destructor).
TEST(PluginLifetime, ProcessExitsWithDevicesOpenAndThreadsBusy) {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) env_strings.push_back(*e);
    env_strings.push_back("TGL_PLUGINS_TEST_EXIT_CHILD=1");
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(&s[0]);
    envp.push_back(nullptr);
    std::string self = real("/proc/self/exe");
    char* argv[] = {&self[0], nullptr};
    for (int round = 0; round < 10; ++round) {
        auto start = std::chrono::steady_clock::now();
        pid_t pid = 0;
        ASSERT_EQ(::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv, envp.data()), 0);
        int status = 0;
        pid_t w = 0;
        while ((w = ::waitpid(pid, &status, WNOHANG)) == 0 &&
               std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        if (w == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            FAIL() << "round " << round << ": the process hung at exit with devices open (killed after 60 s)";
        }
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_TRUE(WIFEXITED(status)) << "round " << round << ": killed by signal "
                                       << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        if (WIFEXITED(status)) {
            EXPECT_EQ(WEXITSTATUS(status), 0) << "round " << round;
        }
        if (round == 0) std::printf("[ PLUGINS  ] exit with 2 devices open and 4 busy threads: %.2f s, status %d\n", secs, status);
    }
}

namespace {

// Runs this test binary again as a child in a fresh process (TGL_GLES_DEBUG=1, `child_flag` set,
// TGL_DEVICE unset) and waits for it: its exit status, and its stderr in `log`.
int spawn_logged_child(const char* child_flag, std::string& log) {
    char log_path[] = "/tmp/tgl-probe-context-XXXXXX";
    int fd = ::mkstemp(log_path);
    if (fd < 0) return -1;
    ::close(fd);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "TGL_DEVICE=", 11) != 0) env_strings.push_back(*e);
    env_strings.push_back(std::string(child_flag) + "=1");
    env_strings.push_back("TGL_GLES_DEBUG=1");
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(&s[0]);
    envp.push_back(nullptr);
    std::string self = real("/proc/self/exe");
    char* argv[] = {&self[0], nullptr};
    posix_spawn_file_actions_t actions;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawn_file_actions_addopen(&actions, 2, log_path, O_WRONLY | O_TRUNC, 0);
    pid_t pid = 0;
    int status = -1;
    if (::posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, envp.data()) == 0 && ::waitpid(pid, &status, 0) != pid)
        status = -1;
    ::posix_spawn_file_actions_destroy(&actions);
    std::ifstream in(log_path);
    log.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    ::unlink(log_path);
    return status;
}

int occurrences(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

}  // namespace

// The first device_open takes over the thread and context that finding the devices created (NVIDIA
// spends ~25 ms binding a context on a new thread); they go to exactly one caller. Two threads open device 0 at once in a fresh
// process, then a third open follows: each gets its own working device, and TGL_GLES_DEBUG's
// account shows the probe's context used once and two contexts created.
TEST(PluginLifetime, FirstOpensRaceForTheProbeContext) {
    for (int round = 0; round < 3; ++round) {
        std::string log;
        int status = spawn_logged_child("TGL_PLUGINS_TEST_RACE_CHILD", log);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
            GTEST_SKIP() << "the GLES plugin has no device here: no context to hand over\n" << log;
        ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "round " << round << ": status " << status << "\n" << log;
        EXPECT_EQ(occurrences(log, "context the probe's, current"), 1) << "round " << round << ":\n" << log;
        EXPECT_EQ(occurrences(log, "context created, current"), 2) << "round " << round << ":\n" << log;
    }
}

// After the hand-over, device 0 is closed and opened again (twice), then opened twice at once: every
// open works and computes exactly, only the first one uses the probe's context, each later one
// creates its own, and the device's properties stay what the probe found.
TEST(PluginLifetime, ReopensAfterTheHandOverCreateTheirOwnContexts) {
    std::string log;
    int status = spawn_logged_child("TGL_PLUGINS_TEST_REOPEN_CHILD", log);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
        GTEST_SKIP() << "the GLES plugin has no device here: no context to hand over\n" << log;
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << "\n" << log;
    EXPECT_EQ(occurrences(log, "context the probe's, current"), 1) << log;
    EXPECT_EQ(occurrences(log, "context created, current"), 4) << log;
}

// Finding the devices stores the GLES 3.1 core functions, taken from libGLESv2.so.2, in libepoxy's
// function pointers (egl_devices.cpp, resolve_gles31_functions): no GL call of the plugin goes
// through libepoxy's per-function resolution, which probes for GLX with failing dlopen()s where
// libGLX is absent.
TEST(PluginLifetime, GlesCoreFunctionsComeFromLibGLESv2) {
    tgl_plugin* gles = load(kGles);
    ASSERT_NE(gles, nullptr);
    uint32_t n = 0;
    ASSERT_EQ(tgl_plugin_get_api(gles)->device_count(&n), TGL_OK);
    if (n == 0) GTEST_SKIP() << "the GLES plugin has no device here";
    void* epoxy = ::dlopen("libepoxy.so.0", RTLD_NOW | RTLD_NOLOAD);
    void* gles_lib = ::dlopen("libGLESv2.so.2", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(epoxy, nullptr) << "the GLES plugin did not load libepoxy.so.0";
    ASSERT_NE(gles_lib, nullptr) << "finding devices did not load libGLESv2.so.2";
    for (const char* name : {"glDispatchCompute", "glBufferData", "glMapBufferRange", "glProgramBinary", "glUseProgram"}) {
        void** pointer = static_cast<void**>(::dlsym(epoxy, (std::string("epoxy_") + name).c_str()));
        ASSERT_NE(pointer, nullptr) << "libepoxy has no epoxy_" << name;
        EXPECT_EQ(*pointer, ::dlsym(gles_lib, name)) << name;
    }
    ::dlclose(gles_lib);
    ::dlclose(epoxy);
    tgl_plugin_release(gles);
}

namespace {

// The child of ProcessExitsWithDevicesOpenAndThreadsBusy: devices of both plugins open, threads
// running ops on them, and exit() from main while they run. Exit status 3 when setup fails.
int exit_child() {
    tgl_plugin *cpu = nullptr, *gles = nullptr;
    if (tgl_plugin_load(kCpu.c_str(), &cpu) != TGL_OK || tgl_plugin_load(kGles.c_str(), &gles) != TGL_OK) return 3;
    std::vector<std::pair<const tgl_plugin_api*, tgl_device>> devs;
    for (tgl_plugin* p : {cpu, gles}) {
        const tgl_plugin_api* api = tgl_plugin_get_api(p);
        uint32_t n = 0;
        tgl_device d = 0;
        if (api->device_count(&n) == TGL_OK && n > 0 && api->device_open(0, &d) == TGL_OK) devs.push_back({api, d});
    }
    if (devs.empty()) return 3;
    static std::atomic<int> rounds{0};
    for (int t = 0; t < 4; ++t) {
        auto dev = devs[size_t(t) % devs.size()];
        std::thread([dev] {
            std::vector<float> a = small_ints(64 * 64, 5);
            for (;;) {
                std::string err;
                matmul_on(dev.first, dev.second, 64, 64, 64, a, a, &err);
                rounds.fetch_add(1);
            }
        }).detach();
    }
    while (rounds.load() < 8) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::exit(0);
}


// The child of FirstOpensRaceForTheProbeContext: after device_count, two threads open device 0 at
// once and run a matmul each, then a third device; every result checked exactly. Exit status: 0
// on success, 3 without a device, 4 on a failed open or a wrong result (said on stderr).
// The GLES plugin's API for a child process, or null where it does not load or sees no device.
const tgl_plugin_api* child_gles_api() {
    tgl_plugin* gles = nullptr;
    if (tgl_plugin_load(kGles.c_str(), &gles) != TGL_OK) return nullptr;
    const tgl_plugin_api* api = tgl_plugin_get_api(gles);
    uint32_t n = 0;
    return api->device_count(&n) == TGL_OK && n > 0 ? api : nullptr;
}

int race_child() {
    const tgl_plugin_api* api = child_gles_api();
    if (!api) return 3;
    const int64_t m = 8, k = 16, nn = 8;
    const std::vector<float> a = small_ints(size_t(m * k), 3), b = small_ints(size_t(k * nn), 4), want = host_matmul(a, b, m, k, nn);
    std::atomic<int> ready{0}, failures{0};
    auto open_and_run = [&](bool wait_for_other) {
        ready.fetch_add(1);
        while (wait_for_other && ready.load() < 2) {
        }
        tgl_device d = 0;
        tgl_status s = api->device_open(0, &d);
        if (s != TGL_OK) {
            std::fprintf(stderr, "device_open: %s\n", plugin_error(api, s).c_str());
            failures.fetch_add(1);
            return;
        }
        std::string err;
        std::vector<float> c = matmul_on(api, d, m, k, nn, a, b, &err);
        if (c != want) {
            std::fprintf(stderr, "matmul: %s\n", err.empty() ? "wrong result" : err.c_str());
            failures.fetch_add(1);
        }
        if (api->device_close(d) != TGL_OK) failures.fetch_add(1);
    };
    std::thread t1(open_and_run, true), t2(open_and_run, true);
    t1.join();
    t2.join();
    open_and_run(false);
    return failures.load() ? 4 : 0;
}

// The child of ReopensAfterTheHandOverCreateTheirOwnContexts: device 0 opened, used and closed three
// times, then two devices of index 0 open at once; every matmul checked exactly, and the properties
// of index 0 compared with what they were before the first open. Exit status: 0 on success, 3
// without a device, 4 on a failure (said on stderr).
int reopen_child() {
    const tgl_plugin_api* api = child_gles_api();
    if (!api) return 3;
    // The probe's properties (the counters, which change with use, left out).
    auto static_properties = [&] {
        std::vector<std::pair<std::string, std::string>> out;
        const tgl_property* props = nullptr;
        uint32_t count = 0;
        if (api->device_properties(0, &props, &count) != TGL_OK) return out;
        for (uint32_t i = 0; i < count; ++i) {
            const std::string key = props[i].name;
            if (key.rfind("memory.", 0) == 0 || key.rfind("program_cache.", 0) == 0 || key.rfind("gl_thread.", 0) == 0 ||
                key.rfind("graph.", 0) == 0)
                continue;
            out.emplace_back(key, props[i].value);
        }
        return out;
    };
    const auto before = static_properties();
    if (before.empty()) {
        std::fprintf(stderr, "device_properties(0) gave nothing\n");
        return 4;
    }
    const int64_t m = 8, k = 16, nn = 8;
    const std::vector<float> a = small_ints(size_t(m * k), 5), b = small_ints(size_t(k * nn), 6), want = host_matmul(a, b, m, k, nn);
    int failures = 0;
    auto check = [&](tgl_device d, const char* what) {
        std::string err;
        if (matmul_on(api, d, m, k, nn, a, b, &err) != want) {
            std::fprintf(stderr, "%s: matmul: %s\n", what, err.empty() ? "wrong result" : err.c_str());
            ++failures;
        }
    };
    auto open = [&](const char* what) {
        tgl_device d = 0;
        tgl_status s = api->device_open(0, &d);
        if (s != TGL_OK) {
            std::fprintf(stderr, "%s: device_open: %s\n", what, plugin_error(api, s).c_str());
            ++failures;
        }
        return s == TGL_OK ? d : 0;
    };
    for (const char* what : {"first open (the probe's context)", "second open", "third open"}) {
        if (tgl_device d = open(what)) {
            check(d, what);
            if (api->device_close(d) != TGL_OK) ++failures;
        }
    }
    tgl_device d1 = open("two at once, first"), d2 = open("two at once, second");
    if (d1) check(d1, "two at once, first");
    if (d2) check(d2, "two at once, second");
    for (tgl_device d : {d1, d2})
        if (d && api->device_close(d) != TGL_OK) ++failures;
    if (static_properties() != before) {
        std::fprintf(stderr, "the properties of device 0 changed across opens\n");
        ++failures;
    }
    return failures ? 4 : 0;
}
}  // namespace

int main(int argc, char** argv) {
    if (std::getenv("TGL_PLUGINS_TEST_EXIT_CHILD")) return exit_child();
    if (std::getenv("TGL_PLUGINS_TEST_RACE_CHILD")) return race_child();
    if (std::getenv("TGL_PLUGINS_TEST_REOPEN_CHILD")) return reopen_child();
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
