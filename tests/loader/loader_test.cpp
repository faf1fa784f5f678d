// Tests of libtensorgl (loader.h) against the fixture plugins of fixtures/fixture_plugin.c, and of
// the parts of tensorgl.hpp that need no working device.
//
// Plugins are never unloaded, so the process-wide registry carries over from test to test when
// the binary runs as a whole; every test therefore uses file names (and so plugin names) of its
// own and works in any order (ctest runs each test in its own process).
#include <tensorgl/loader.h>
#include <tensorgl/tensorgl.hpp>

#include <dlfcn.h>
#include <elf.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kFixtureDir = TGL_FIXTURE_DIR;

std::string fixture(const std::string& file) { return kFixtureDir + "/" + file; }

std::string real(const std::string& path) {
    char* r = ::realpath(path.c_str(), nullptr);
    std::string s = r ? r : path;
    std::free(r);
    return s;
}

// A name no other test (or earlier repetition) uses.
std::string unique(const std::string& base) {
    static std::atomic<int> counter{0};
    return base + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
}

// A fresh private directory under /tmp, removed afterwards.
class TempDir {
public:
    TempDir() {
        std::string tmpl = "/tmp/tgl_loader_test_XXXXXX";
        char* d = ::mkdtemp(&tmpl[0]);
        if (!d) throw std::runtime_error("mkdtemp failed");
        path_ = d;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }
    std::string operator/(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

// Sets (or unsets, with nullptr) an environment variable for the scope.
class EnvVar {
public:
    EnvVar(const char* name, const char* value) : name_(name) {
        const char* old = ::getenv(name);
        had_ = old != nullptr;
        if (had_) old_ = old;
        if (value) ::setenv(name, value, 1);
        else ::unsetenv(name);
    }
    ~EnvVar() {
        if (had_) ::setenv(name_.c_str(), old_.c_str(), 1);
        else ::unsetenv(name_.c_str());
    }

private:
    std::string name_, old_;
    bool had_ = false;
};

void copy_file(const std::string& from, const std::string& to, mode_t mode = 0755) {
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
    ASSERT_EQ(::chmod(to.c_str(), mode), 0);
}

void patch(const std::string& file, std::streamoff offset, const std::vector<unsigned char>& bytes) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekp(offset);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    ASSERT_TRUE(f.good());
}

struct LoadResult {
    tgl_status status;
    tgl_plugin* plugin;
    std::string message;
};

LoadResult load(const std::string& arg) {
    LoadResult r{TGL_OK, nullptr, {}};
    r.status = tgl_plugin_load(arg.c_str(), &r.plugin);
    r.message = tgl_loader_last_error();
    return r;
}

// Loading `arg` fails with `status`, *out is NULL, and the message contains every piece.
void expect_failure(const std::string& arg, tgl_status status,
                    const std::vector<std::string>& pieces) {
    LoadResult r = load(arg);
    EXPECT_EQ(r.status, status) << "expected " << tgl_status_name(status) << ", got "
                                << tgl_status_name(r.status) << " (" << r.message << ")";
    EXPECT_EQ(r.plugin, nullptr);
    for (const std::string& p : pieces)
        EXPECT_NE(r.message.find(p), std::string::npos)
            << "message lacks '" << p << "': " << r.message;
}

}  // namespace

// ------------------------------------------------------------------------------------------
// A good plugin.

// Checks TGL-P-2, TGL-P-3, TGL-P-5, TGL-P-6 (plugin_api.h, plugin rules).
TEST(LoaderLoad, GoodFixtureByPath) {
    LoadResult r = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    ASSERT_NE(r.plugin, nullptr);
    EXPECT_STREQ(tgl_plugin_name(r.plugin), "fixture");
    EXPECT_EQ(tgl_plugin_path(r.plugin), real(fixture("libtensorgl-fixture.so")));
    const tgl_plugin_api* api = tgl_plugin_get_api(r.plugin);
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api->abi_major, 1u);
    uint32_t count = 0;
    EXPECT_EQ(api->device_count(&count), TGL_OK);
    EXPECT_EQ(count, 1u);
    tgl_plugin_release(r.plugin);
}

// Checks TGL-P-13 (plugin_api.h, plugin rules).
TEST(LoaderLoad, NegotiatesTheLowerMinor) {
    LoadResult r = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    const tgl_plugin_api* api = tgl_plugin_get_api(r.plugin);
    // The fixture is "from the future": its table says minor TGL_ABI_MINOR + 3.
    EXPECT_EQ(api->abi_minor, static_cast<uint32_t>(TGL_ABI_MINOR + 3));
    EXPECT_EQ(tgl_plugin_abi_minor(r.plugin), static_cast<uint32_t>(TGL_ABI_MINOR));
    // The loader told init its own minor; the fixture reports min(host, own) back.
    tgl_plugin_info info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    ASSERT_EQ(api->get_plugin_info(&info), TGL_OK);
    EXPECT_EQ(info.negotiated_minor, static_cast<uint32_t>(TGL_ABI_MINOR));
    tgl_plugin_release(r.plugin);
}

TEST(LoaderLoad, SameFileTwiceGivesTheSameHandle) {
    TempDir tmp;
    LoadResult a = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(a.status, TGL_OK) << a.message;
    LoadResult b = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(b.status, TGL_OK) << b.message;
    EXPECT_EQ(a.plugin, b.plugin);
    // Through another path to the same inode: a symlink, found by name.
    ASSERT_EQ(::symlink(fixture("libtensorgl-fixture.so").c_str(),
                        (tmp / "libtensorgl-fixture.so").c_str()), 0);
    {
        EnvVar path("TGL_PLUGIN_PATH", tmp.path().c_str());
        LoadResult c = load("fixture");
        ASSERT_EQ(c.status, TGL_OK) << c.message;
        EXPECT_EQ(c.plugin, a.plugin);
        tgl_plugin_release(c.plugin);
    }
    tgl_plugin_release(b.plugin);
    tgl_plugin_release(a.plugin);
    // The record outlives its references: loading again gives the same pointer back.
    LoadResult d = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(d.status, TGL_OK) << d.message;
    EXPECT_EQ(d.plugin, a.plugin);
    tgl_plugin_release(d.plugin);
}

TEST(LoaderLoad, ConcurrentLoadsOfOneFileShareOneHandle) {
    const std::string file = fixture("libtensorgl-fixture.so");
    std::vector<tgl_plugin*> got(8, nullptr);
    std::vector<tgl_status> st(8, -1);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < got.size(); ++i)
        threads.emplace_back([&, i] { st[i] = tgl_plugin_load(file.c_str(), &got[i]); });
    for (std::thread& t : threads) t.join();
    for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(st[i], TGL_OK);
        EXPECT_EQ(got[i], got[0]);
    }
    for (tgl_plugin* p : got) tgl_plugin_release(p);
}

// ------------------------------------------------------------------------------------------
// Each failure: its own status, and a message naming the file and the reason.

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, MissingFile) {
    expect_failure("/nonexistent/dir/libtensorgl-gone.so", TGL_ERROR_PLUGIN_NOT_FOUND,
                   {"/nonexistent/dir/libtensorgl-gone.so", "no such file"});
}

TEST(LoaderFailure, MissingName) {
    TempDir empty;
    EnvVar path("TGL_PLUGIN_PATH", empty.path().c_str());
    expect_failure("nosuch", TGL_ERROR_PLUGIN_NOT_FOUND,
                   {"plugin 'nosuch' not found", "libtensorgl-nosuch.so", empty.path(),
                    "TGL_PLUGIN_PATH"});
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, TextFileIsNotAnElfObject) {
    // By path and by name (the generated libtensorgl-text.so sits in the fixture directory).
    expect_failure(fixture("libtensorgl-text.so"), TGL_ERROR_PLUGIN_NOT_LOADABLE,
                   {real(fixture("libtensorgl-text.so")), "not an ELF shared object"});
    EnvVar path("TGL_PLUGIN_PATH", kFixtureDir.c_str());
    expect_failure("text", TGL_ERROR_PLUGIN_NOT_LOADABLE,
                   {"libtensorgl-text.so", "not an ELF shared object", "\"this\""});
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, EmptyFile) {
    TempDir tmp;
    std::ofstream(tmp / "libtensorgl-empty.so").close();
    expect_failure(tmp / "libtensorgl-empty.so", TGL_ERROR_PLUGIN_NOT_LOADABLE,
                   {"libtensorgl-empty.so", "not an ELF shared object", "it is empty"});
}

// Checks TGL-P-2 (plugin_api.h, plugin rules).
TEST(LoaderFailure, NoEntryPoint) {
    const std::string f = real(fixture("fixture_no_entry.so"));
    expect_failure(fixture("fixture_no_entry.so"), TGL_ERROR_PLUGIN_NO_ENTRY,
                   {"symbol tgl_plugin_init_v1 not found in " + f});
}

// Checks TGL-P-4 (plugin_api.h, plugin rules).
TEST(LoaderFailure, AbiMajorTwo) {
    expect_failure(fixture("fixture_abi2.so"), TGL_ERROR_PLUGIN_ABI_MISMATCH,
                   {real(fixture("fixture_abi2.so")), "plugin ABI 2.0, loader needs 1.x"});
}

// Checks TGL-P-3 (plugin_api.h, plugin rules).
TEST(LoaderFailure, InitFailsWithItsOwnMessage) {
    expect_failure(fixture("fixture_init_fail.so"), TGL_ERROR_PLUGIN_INIT_FAILED,
                   {real(fixture("fixture_init_fail.so")), "tgl_plugin_init_v1 failed",
                    "TGL_ERROR_BACKEND_FAILURE", "no usable driver (simulated init failure)"});
}

// Checks TGL-P-3 (plugin_api.h, plugin rules).
TEST(LoaderFailure, InitFailsWithoutATable) {
    expect_failure(fixture("fixture_init_fail_no_table.so"), TGL_ERROR_PLUGIN_INIT_FAILED,
                   {real(fixture("fixture_init_fail_no_table.so")), "TGL_ERROR_INTERNAL"});
}

// Checks TGL-P-3 (plugin_api.h, plugin rules).
TEST(LoaderFailure, InitSaysOkButGivesNoTable) {
    expect_failure(fixture("fixture_ok_no_table.so"), TGL_ERROR_PLUGIN_INIT_FAILED,
                   {real(fixture("fixture_ok_no_table.so")), "no function table"});
}

// Checks TGL-P-5 (plugin_api.h, plugin rules).
TEST(LoaderFailure, TableTooSmall) {
    expect_failure(fixture("fixture_small_table.so"), TGL_ERROR_PLUGIN_BAD_TABLE,
                   {real(fixture("fixture_small_table.so")), "40 bytes",
                    std::to_string(TGL_PLUGIN_API_SIZE_V1_0) + " bytes of ABI 1.0"});
}

// Checks TGL-P-5 (plugin_api.h, plugin rules).
TEST(LoaderFailure, NullRequiredMember) {
    expect_failure(fixture("fixture_null_member.so"), TGL_ERROR_PLUGIN_BAD_TABLE,
                   {real(fixture("fixture_null_member.so")), "buffer_fill", "is NULL"});
}

// Negotiation: a host of this loader's minor with an older plugin sees the newer members as absent
// (NULL), never the bytes after the plugin's shorter table: a 1.0 plugin (no timer, no graphs), a
// 1.1 plugin (the timer, no graphs) and a 1.2 plugin (graphs, no graph_replay_with); with a 1.3 or
// newer plugin it sees them all.
// Checks TGL-P-13 (plugin_api.h, plugin rules).
TEST(LoaderLoad, OlderPluginHasNoNewerMembers) {
    struct Older {
        const char* file;
        uint32_t minor;
        uint64_t size;
    };
    for (const Older& o : {Older{"fixture_v1_0.so", 0, TGL_PLUGIN_API_SIZE_V1_0},
                           Older{"fixture_v1_1.so", 1, TGL_PLUGIN_API_SIZE_V1_1},
                           Older{"fixture_v1_2.so", 2, TGL_PLUGIN_API_SIZE_V1_2}}) {
        SCOPED_TRACE(o.file);
        LoadResult r = load(fixture(o.file));
        ASSERT_EQ(r.status, TGL_OK) << r.message;
        EXPECT_EQ(tgl_plugin_abi_minor(r.plugin), o.minor);
        const tgl_plugin_api* api = tgl_plugin_get_api(r.plugin);
        ASSERT_NE(api, nullptr);
        EXPECT_EQ(api->abi_minor, o.minor);
        EXPECT_EQ(api->struct_size, o.size);
        EXPECT_EQ(api->timer_begin == nullptr, o.minor < 1);
        EXPECT_EQ(api->timer_end == nullptr, o.minor < 1);
        EXPECT_EQ(api->graph_begin == nullptr, o.minor < 2);
        EXPECT_EQ(api->graph_end == nullptr, o.minor < 2);
        EXPECT_EQ(api->graph_replay == nullptr, o.minor < 2);
        EXPECT_EQ(api->graph_destroy == nullptr, o.minor < 2);
        EXPECT_EQ(api->graph_replay_with, nullptr);  // the fixture's table has it in memory after a 1.2 table
        if (o.minor >= 2) {
            EXPECT_EQ(api->graph_replay(0, 0), TGL_ERROR_UNIMPLEMENTED);  // the fixture's own answer
        }
        uint32_t count = 0;  // the 1.0 members work
        EXPECT_EQ(api->device_count(&count), TGL_OK);
        EXPECT_EQ(count, 1u);
        tgl_plugin_release(r.plugin);
    }
}

// Checks TGL-P-5, TGL-P-13 (plugin_api.h, plugin rules).
TEST(LoaderLoad, Minor3PluginHasEveryMember) {
    LoadResult r = load(fixture("fixture_v1_3.so"));
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    EXPECT_EQ(tgl_plugin_abi_minor(r.plugin), 3u);
    const tgl_plugin_api* api = tgl_plugin_get_api(r.plugin);
    ASSERT_NE(api, nullptr);
    EXPECT_EQ(api->abi_minor, 3u);
    EXPECT_EQ(api->struct_size, uint64_t(TGL_PLUGIN_API_SIZE_V1_3));
    ASSERT_NE(api->graph_replay, nullptr);
    ASSERT_NE(api->graph_replay_with, nullptr);
    EXPECT_EQ(api->graph_replay_with(0, 0, nullptr, 0), TGL_ERROR_UNIMPLEMENTED);  // the fixture's own answer
    tgl_plugin_release(r.plugin);
}

// Checks TGL-P-5, TGL-P-13 (plugin_api.h, plugin rules).
TEST(LoaderLoad, NewerPluginHasTheTimerAndGraphMembers) {
    LoadResult r = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    ASSERT_EQ(tgl_plugin_abi_minor(r.plugin), uint32_t(TGL_ABI_MINOR));  // the fixture says a newer minor
    const tgl_plugin_api* api = tgl_plugin_get_api(r.plugin);
    EXPECT_EQ(api->struct_size, uint64_t(TGL_PLUGIN_API_SIZE_V1_3));
    ASSERT_NE(api->graph_replay_with, nullptr);
    EXPECT_EQ(api->graph_replay_with(0, 0, nullptr, 0), TGL_ERROR_UNIMPLEMENTED);
    ASSERT_NE(api->timer_begin, nullptr);
    ASSERT_NE(api->timer_end, nullptr);
    EXPECT_EQ(api->timer_begin(0), TGL_ERROR_UNIMPLEMENTED);  // the fixture's own answer
    ASSERT_NE(api->graph_begin, nullptr);
    ASSERT_NE(api->graph_end, nullptr);
    ASSERT_NE(api->graph_replay, nullptr);
    ASSERT_NE(api->graph_destroy, nullptr);
    EXPECT_EQ(api->graph_replay(0, 0), TGL_ERROR_UNIMPLEMENTED);  // the fixture's own answer
    tgl_plugin_release(r.plugin);
}

// Checks TGL-P-5 (plugin_api.h, plugin rules).
TEST(LoaderFailure, NullMemberOfMinor3) {
    expect_failure(fixture("fixture_v1_3_no_replay_with.so"), TGL_ERROR_PLUGIN_BAD_TABLE,
                   {real(fixture("fixture_v1_3_no_replay_with.so")), "graph_replay_with", "required since ABI 1.3"});
}

// Checks TGL-P-5 (plugin_api.h, plugin rules).
TEST(LoaderFailure, NullMemberOfMinor2) {
    expect_failure(fixture("fixture_v1_2_no_graph.so"), TGL_ERROR_PLUGIN_BAD_TABLE,
                   {real(fixture("fixture_v1_2_no_graph.so")), "graph_replay", "required since ABI 1.2"});
}

// Checks TGL-P-5 (plugin_api.h, plugin rules).
TEST(LoaderFailure, NullMemberOfMinor1) {
    expect_failure(fixture("fixture_v1_1_no_timer.so"), TGL_ERROR_PLUGIN_BAD_TABLE,
                   {real(fixture("fixture_v1_1_no_timer.so")), "timer_end", "required since ABI 1.1"});
}

TEST(LoaderFailure, BadPluginName) {
    expect_failure(fixture("fixture_bad_name.so"), TGL_ERROR_PLUGIN_BAD_TABLE,
                   {real(fixture("fixture_bad_name.so")), "'not a name!'"});
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, WorldWritableFileIsRefused) {
    TempDir tmp;
    const std::string f = tmp / ("libtensorgl-" + unique("ww") + ".so");
    copy_file(fixture("libtensorgl-fixture.so"), f, 0777);
    expect_failure(f, TGL_ERROR_PLUGIN_INSECURE, {f, "world-writable", "0777"});
    // Once fixed, the same file loads.
    ASSERT_EQ(::chmod(f.c_str(), 0755), 0);
    LoadResult r = load(f);
    EXPECT_EQ(r.status, TGL_OK) << r.message;
    tgl_plugin_release(r.plugin);
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, WorldWritableDirectoryIsRefusedUnlessSticky) {
    TempDir tmp;
    const std::string dir = tmp / "open";
    ASSERT_EQ(::mkdir(dir.c_str(), 0777), 0);
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);  // umask-proof
    const std::string f = dir + "/libtensorgl-" + unique("wwdir") + ".so";
    copy_file(fixture("libtensorgl-fixture.so"), f, 0755);
    expect_failure(f, TGL_ERROR_PLUGIN_INSECURE,
                   {f, "directory " + dir + " is world-writable", "not sticky"});
    // Sticky (like /tmp): only the owner may replace the file.
    ASSERT_EQ(::chmod(dir.c_str(), 01777), 0);
    LoadResult r = load(f);
    EXPECT_EQ(r.status, TGL_OK) << r.message;
    tgl_plugin_release(r.plugin);
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, SymlinkInWorldWritableDirectoryIsRefused) {
    TempDir tmp;
    const std::string dir = tmp / "open";
    ASSERT_EQ(::mkdir(dir.c_str(), 0777), 0);
    ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
    const std::string link = dir + "/libtensorgl-fixture.so";
    ASSERT_EQ(::symlink(fixture("libtensorgl-fixture.so").c_str(), link.c_str()), 0);
    expect_failure(link, TGL_ERROR_PLUGIN_INSECURE,
                   {link + " (resolves to " + real(fixture("libtensorgl-fixture.so")) + ")",
                    "directory " + dir + " is world-writable"});
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, WorldWritableParentDirectoryIsRefusedUnlessSticky) {
    // open/ (0777) holds safe/ (0755) which holds the plugin: anybody may rename safe/ and put
    // another directory with another plugin in its place.
    TempDir tmp;
    const std::string open = tmp / "open", safe = open + "/safe";
    ASSERT_EQ(::mkdir(open.c_str(), 0777), 0);
    ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
    ASSERT_EQ(::mkdir(safe.c_str(), 0755), 0);
    const std::string f = safe + "/libtensorgl-" + unique("wwparent") + ".so";
    copy_file(fixture("libtensorgl-fixture.so"), f, 0755);
    expect_failure(f, TGL_ERROR_PLUGIN_INSECURE,
                   {f, "parent directory " + open + " is world-writable", "not sticky"});
    // By name through TGL_PLUGIN_PATH too.
    {
        EnvVar path("TGL_PLUGIN_PATH", safe.c_str());
        const std::string name = f.substr(f.rfind("libtensorgl-") + 12, f.size() - f.rfind("libtensorgl-") - 15);
        expect_failure(name, TGL_ERROR_PLUGIN_INSECURE, {"parent directory " + open + " is world-writable"});
    }
    // A symlink kept below the open directory is refused as well, even to a safe file.
    const std::string link = safe + "/libtensorgl-" + unique("wwparentlink") + ".so";
    ASSERT_EQ(::symlink(fixture("libtensorgl-fixture.so").c_str(), link.c_str()), 0);
    expect_failure(link, TGL_ERROR_PLUGIN_INSECURE, {link + " (resolves to", "parent directory " + open});
    // Sticky (like /tmp): nobody but the owner may rename safe/.
    ASSERT_EQ(::chmod(open.c_str(), 01777), 0);
    LoadResult r = load(f);
    EXPECT_EQ(r.status, TGL_OK) << r.message;
    tgl_plugin_release(r.plugin);
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, DirectoryIsNotARegularFile) {
    TempDir tmp;
    const std::string d = tmp / "libtensorgl-dir.so";
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0);
    expect_failure(d, TGL_ERROR_PLUGIN_INSECURE, {d, "not a regular file", "a directory"});
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, WrongElfClassMachineAndType) {
    TempDir tmp;
    const std::string cls = tmp / "libtensorgl-cls.so";
    copy_file(fixture("libtensorgl-fixture.so"), cls);
    patch(cls, EI_CLASS, {ELFCLASS32});
    expect_failure(cls, TGL_ERROR_PLUGIN_NOT_LOADABLE,
                   {cls, "wrong ELF class", "the file is 32-bit, this process is 64-bit"});

    const std::string mach = tmp / "libtensorgl-mach.so";
    copy_file(fixture("libtensorgl-fixture.so"), mach);
#if defined(__x86_64__)
    patch(mach, 18, {EM_AARCH64 & 0xff, EM_AARCH64 >> 8});
    expect_failure(mach, TGL_ERROR_PLUGIN_NOT_LOADABLE,
                   {mach, "built for another CPU", "AArch64", "x86-64"});
#else
    patch(mach, 18, {EM_X86_64 & 0xff, EM_X86_64 >> 8});
    expect_failure(mach, TGL_ERROR_PLUGIN_NOT_LOADABLE, {mach, "built for another CPU", "x86-64"});
#endif

    const std::string type = tmp / "libtensorgl-type.so";
    copy_file(fixture("libtensorgl-fixture.so"), type);
    patch(type, 16, {ET_EXEC, 0});
    expect_failure(type, TGL_ERROR_PLUGIN_NOT_LOADABLE, {type, "not a shared object: its ELF type is executable"});
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, DlopenErrorIsReported) {
    // An ELF file the loader's own checks pass and dlopen refuses: an OS ABI glibc does not know.
    TempDir tmp;
    const std::string f = tmp / "libtensorgl-osabi.so";
    copy_file(fixture("libtensorgl-fixture.so"), f);
    patch(f, EI_OSABI, {0x42});
    expect_failure(f, TGL_ERROR_PLUGIN_NOT_LOADABLE, {f, "dlopen failed: "});
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderFailure, DamagedProgramHeaderTableIsRefused) {
    TempDir tmp;
    const std::string f = tmp / "libtensorgl-phent.so";
    copy_file(fixture("libtensorgl-fixture.so"), f);
    patch(f, offsetof(Elf64_Ehdr, e_phentsize), {0x20, 0x00});
    expect_failure(f, TGL_ERROR_PLUGIN_NOT_LOADABLE,
                   {f, "program header entries of 32 bytes, expected " +
                           std::to_string(sizeof(Elf64_Phdr))});
}

// Checks TGL-P-6 (plugin_api.h, plugin rules).
TEST(LoaderFailure, DuplicateNameFromAnotherFile) {
    LoadResult orig = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(orig.status, TGL_OK) << orig.message;
    // A copy (another inode) whose plugin is also named "fixture".
    TempDir tmp;
    const std::string copy = tmp / "libtensorgl-fixture.so";
    copy_file(fixture("libtensorgl-fixture.so"), copy);
    expect_failure(copy, TGL_ERROR_PLUGIN_DUPLICATE,
                   {real(copy), "a plugin named 'fixture' is already loaded from " +
                                    real(fixture("libtensorgl-fixture.so"))});
    tgl_plugin_release(orig.plugin);
}

TEST(LoaderFailure, BadArguments) {
    tgl_plugin* p = reinterpret_cast<tgl_plugin*>(0x1);
    EXPECT_EQ(tgl_plugin_load(nullptr, &p), TGL_ERROR_NULL_POINTER);
    EXPECT_EQ(p, nullptr);
    EXPECT_NE(std::string(tgl_loader_last_error()).find("name_or_path is NULL"), std::string::npos);
    EXPECT_EQ(tgl_plugin_load("cpu", nullptr), TGL_ERROR_NULL_POINTER);
    EXPECT_NE(std::string(tgl_loader_last_error()).find("out is NULL"), std::string::npos);
    expect_failure("", TGL_ERROR_INVALID_ARGUMENT, {"neither a path", "nor a plugin name"});
    expect_failure("..", TGL_ERROR_INVALID_ARGUMENT, {"'..'"});
    expect_failure("two words", TGL_ERROR_INVALID_ARGUMENT, {"'two words'"});
}

// Whatever is refused after dlopen stays mapped: its constructors have run (they may have started
// threads that run its code), before the entry point was looked up or after it ran.
TEST(LoaderFailure, RejectedLibrariesStayMapped) {
    expect_failure(fixture("fixture_no_entry.so"), TGL_ERROR_PLUGIN_NO_ENTRY, {"stays loaded"});
    void* h = ::dlopen(real(fixture("fixture_no_entry.so")).c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(h, nullptr) << "a library whose constructors ran must stay mapped";
    if (h) ::dlclose(h);
    expect_failure(fixture("fixture_abi2.so"), TGL_ERROR_PLUGIN_ABI_MISMATCH, {});
    h = ::dlopen(real(fixture("fixture_abi2.so")).c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(h, nullptr) << "a library whose entry point ran must stay mapped";
    if (h) ::dlclose(h);
}

TEST(LoaderFailure, LastErrorSurvivesLaterSuccess) {
    expect_failure("/nonexistent/libtensorgl-x.so", TGL_ERROR_PLUGIN_NOT_FOUND, {});
    LoadResult ok = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(ok.status, TGL_OK);
    EXPECT_NE(ok.message.find("/nonexistent/libtensorgl-x.so"), std::string::npos) << ok.message;
    tgl_plugin_release(ok.plugin);
}

TEST(LoaderFailure, ThreadsFailingAtOnceGetTheirOwnMessages) {
    struct Case {
        std::string file;
        tgl_status status;
        std::string own;    // must be in the message
        std::string other;  // a piece of another case's message, must not be
    };
    const std::vector<Case> cases = {
        {fixture("fixture_abi2.so"), TGL_ERROR_PLUGIN_ABI_MISMATCH, "fixture_abi2.so", "symbol"},
        {fixture("fixture_no_entry.so"), TGL_ERROR_PLUGIN_NO_ENTRY, "fixture_no_entry.so", "ABI 2.0"},
        {"/nonexistent/libtensorgl-t3.so", TGL_ERROR_PLUGIN_NOT_FOUND, "libtensorgl-t3.so", "fixture_"},
        {fixture("fixture_init_fail.so"), TGL_ERROR_PLUGIN_INIT_FAILED, "simulated init failure", "ABI 2.0"},
    };
    std::atomic<int> bad{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (const Case& c : cases)
        threads.emplace_back([&, c] {
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < 200; ++i) {
                tgl_plugin* p = nullptr;
                tgl_status s = tgl_plugin_load(c.file.c_str(), &p);
                std::this_thread::yield();  // let the others fail in between
                std::string m = tgl_loader_last_error();
                if (s != c.status || p != nullptr || m.find(c.own) == std::string::npos ||
                    m.find(c.other) != std::string::npos) {
                    ++bad;
                    ADD_FAILURE() << c.file << ": got " << tgl_status_name(s) << ": " << m;
                    return;
                }
            }
        });
    go = true;
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(bad.load(), 0);
}

// ------------------------------------------------------------------------------------------
// Search path.

TEST(LoaderSearch, ByNameThroughPluginPathInOrder) {
    TempDir a, b;
    const std::string name = unique("order");
    const std::string file = "libtensorgl-" + name + ".so";
    copy_file(fixture("libtensorgl-fixture.so"), a / file);
    copy_file(fixture("libtensorgl-fixture.so"), b / file);
    EnvVar path("TGL_PLUGIN_PATH", (a.path() + ":" + b.path()).c_str());
    LoadResult r = load(name);
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    EXPECT_EQ(tgl_plugin_path(r.plugin), real(a / file));
    EXPECT_EQ(tgl_plugin_name(r.plugin), name);
    tgl_plugin_release(r.plugin);
}

TEST(LoaderSearch, FirstExistingCandidateDecides) {
    // A broken file first on the path is reported, not skipped for a good copy further down.
    TempDir a, b;
    const std::string name = unique("broken");
    const std::string file = "libtensorgl-" + name + ".so";
    std::ofstream(a / file) << "garbage";
    copy_file(fixture("libtensorgl-fixture.so"), b / file);
    EnvVar path("TGL_PLUGIN_PATH", (a.path() + ":" + b.path()).c_str());
    expect_failure(name, TGL_ERROR_PLUGIN_NOT_LOADABLE, {a / file, "not an ELF shared object"});
}

TEST(LoaderSearch, EmptyElementsAreIgnored) {
    const std::string value = "::" + kFixtureDir + "::";
    EnvVar path("TGL_PLUGIN_PATH", value.c_str());
    LoadResult r = load("fixture");
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    EXPECT_EQ(tgl_plugin_path(r.plugin), real(fixture("libtensorgl-fixture.so")));
    tgl_plugin_release(r.plugin);
}

class CwdGuard {
public:
    explicit CwdGuard(const std::string& dir) : old_(fs::current_path()) { fs::current_path(dir); }
    ~CwdGuard() { fs::current_path(old_); }

private:
    fs::path old_;
};

TEST(LoaderSearch, CurrentDirectoryIsNeverSearched) {
    CwdGuard cwd(kFixtureDir);  // libtensorgl-fixture.so is right here
    ASSERT_TRUE(fs::exists("libtensorgl-fixture.so"));
    {
        EnvVar path("TGL_PLUGIN_PATH", nullptr);  // defaults: libtensorgl's dir, install dir
        expect_failure("fixture", TGL_ERROR_PLUGIN_NOT_FOUND, {"never searched"});
    }
    {
        EnvVar path("TGL_PLUGIN_PATH", "::");  // only empty elements: not the CWD
        expect_failure("fixture", TGL_ERROR_PLUGIN_NOT_FOUND, {"not found"});
    }
    {
        EnvVar path("TGL_PLUGIN_PATH", ".:./:fixtures");  // relative elements are skipped
        expect_failure("fixture", TGL_ERROR_PLUGIN_NOT_FOUND, {"not found"});
    }
    // An explicit relative path is the host's own choice, and it loads.
    LoadResult r = load("./libtensorgl-fixture.so");
    EXPECT_EQ(r.status, TGL_OK) << r.message;
    tgl_plugin_release(r.plugin);
}

TEST(LoaderSearch, DefaultsStartAtTheLoadersDirectory) {
    const std::string loader_dir = fs::path(real(TGL_LOADER_FILE)).parent_path().string();
    {
        EnvVar path("TGL_PLUGIN_PATH", nullptr);
        expect_failure("nosuch", TGL_ERROR_PLUGIN_NOT_FOUND,
                       {"in " + loader_dir + ", " + loader_dir + "/tensorgl, ", "defaults"});
    }
    {
        TempDir tmp;
        EnvVar path("TGL_PLUGIN_PATH", tmp.path().c_str());
        LoadResult r = load("nosuch");
        EXPECT_EQ(r.status, TGL_ERROR_PLUGIN_NOT_FOUND);
        EXPECT_EQ(r.message.find(loader_dir + ","), std::string::npos)
            << "TGL_PLUGIN_PATH replaces the defaults: " << r.message;
    }
}

TEST(LoaderSearch, DebugLogNamesEveryCandidate) {
    TempDir empty;
    const std::string value = "relative/dir::" + empty.path() + ":" + kFixtureDir;
    EnvVar path("TGL_PLUGIN_PATH", value.c_str());
    EnvVar dbg("TGL_LOADER_DEBUG", "1");
    testing::internal::CaptureStderr();
    LoadResult r = load("fixture");
    std::string log = testing::internal::GetCapturedStderr();
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    tgl_plugin_release(r.plugin);
    EXPECT_NE(log.find("'relative/dir'"), std::string::npos) << log;
    EXPECT_NE(log.find("relative directories are never searched"), std::string::npos) << log;
    EXPECT_NE(log.find("candidate " + empty.path() + "/libtensorgl-fixture.so: skipped"),
              std::string::npos) << log;
    EXPECT_NE(log.find("candidate " + kFixtureDir + "/libtensorgl-fixture.so: taken"),
              std::string::npos) << log;

    // A rejection is logged with its reason.
    testing::internal::CaptureStderr();
    load(fixture("fixture_abi2.so"));
    log = testing::internal::GetCapturedStderr();
    EXPECT_NE(log.find("TGL_ERROR_PLUGIN_ABI_MISMATCH"), std::string::npos) << log;
}

TEST(LoaderSearch, DebugLogIsOffByDefault) {
    EnvVar dbg("TGL_LOADER_DEBUG", nullptr);
    EnvVar path("TGL_PLUGIN_PATH", kFixtureDir.c_str());
    testing::internal::CaptureStderr();
    LoadResult r = load("fixture");
    load("text");
    std::string log = testing::internal::GetCapturedStderr();
    EXPECT_EQ(r.status, TGL_OK);
    tgl_plugin_release(r.plugin);
    EXPECT_EQ(log, "");
}

// ------------------------------------------------------------------------------------------
// tgl_plugin_list.

TEST(LoaderList, FindsPluginFilesInSearchOrder) {
    TempDir a;
    copy_file(fixture("libtensorgl-fixture.so"), a / "libtensorgl-fixture.so");  // shadows
    copy_file(fixture("libtensorgl-fixture.so"), a / "libtensorgl-alpha.so");
    copy_file(fixture("libtensorgl-fixture.so"), a / "libfoo.so");          // not a plugin name
    copy_file(fixture("libtensorgl-fixture.so"), a / "libtensorgl-.so");     // empty name
    copy_file(fixture("libtensorgl-fixture.so"), a / "libtensorgl-x.so.1");  // wrong suffix
    EnvVar path("TGL_PLUGIN_PATH", (a.path() + ":" + kFixtureDir).c_str());

    size_t count = 0;
    ASSERT_EQ(tgl_plugin_list(nullptr, nullptr, 0, &count), TGL_OK);
    ASSERT_EQ(count, 3u);
    std::vector<const char*> names(count), paths(count);
    ASSERT_EQ(tgl_plugin_list(names.data(), paths.data(), count, &count), TGL_OK);
    ASSERT_EQ(count, 3u);
    EXPECT_STREQ(names[0], "alpha");
    EXPECT_EQ(std::string(paths[0]), a / "libtensorgl-alpha.so");
    EXPECT_STREQ(names[1], "fixture");
    EXPECT_EQ(std::string(paths[1]), a / "libtensorgl-fixture.so");
    EXPECT_STREQ(names[2], "text");
    EXPECT_EQ(std::string(paths[2]), kFixtureDir + "/libtensorgl-text.so");

    // A smaller capacity fills only what fits and still counts everything.
    const char* one_name = nullptr;
    ASSERT_EQ(tgl_plugin_list(&one_name, nullptr, 1, &count), TGL_OK);
    EXPECT_EQ(count, 3u);
    EXPECT_STREQ(one_name, "alpha");

    EXPECT_EQ(tgl_plugin_list(nullptr, nullptr, 0, nullptr), TGL_ERROR_NULL_POINTER);
    EXPECT_NE(std::string(tgl_loader_last_error()).find("count is NULL"), std::string::npos);
}

TEST(LoaderList, EmptyWhenNothingIsThere) {
    TempDir empty;
    EnvVar path("TGL_PLUGIN_PATH", (empty.path() + ":/nonexistent/dir").c_str());
    size_t count = 99;
    ASSERT_EQ(tgl_plugin_list(nullptr, nullptr, 0, &count), TGL_OK);
    EXPECT_EQ(count, 0u);
}

// Everything tgl_plugin_list passed over is reported with its reason, in search order.
TEST(LoaderList, ReportsWhatItSkippedAndWhy) {
    TempDir a;
    copy_file(fixture("libtensorgl-fixture.so"), a / "libtensorgl-fixture.so");  // shadows
    copy_file(fixture("libtensorgl-fixture.so"), a / "libtensorgl-.hidden.so");  // bad name
    ASSERT_EQ(::mkdir((a / "libtensorgl-dir.so").c_str(), 0755), 0);            // not a file
    copy_file(fixture("libtensorgl-fixture.so"), a / "libfoo.so");  // no candidate: not listed
    EnvVar path("TGL_PLUGIN_PATH",
                ("relative/dir:" + a.path() + ":/nonexistent/tgl_dir:" + kFixtureDir).c_str());

    size_t found = 0;
    ASSERT_EQ(tgl_plugin_list(nullptr, nullptr, 0, &found), TGL_OK);
    size_t count = 0;
    ASSERT_EQ(tgl_plugin_list_skipped(nullptr, nullptr, 0, &count), TGL_OK);
    ASSERT_EQ(count, 5u);
    std::vector<const char*> paths(count), reasons(count);
    ASSERT_EQ(tgl_plugin_list_skipped(paths.data(), reasons.data(), count, &count), TGL_OK);
    auto expect = [&](size_t i, const std::string& p, const std::string& why) {
        SCOPED_TRACE("skipped entry " + std::to_string(i));
        EXPECT_EQ(std::string(paths[i]), p);
        EXPECT_NE(std::string(reasons[i]).find(why), std::string::npos) << reasons[i];
    };
    expect(0, "relative/dir", "relative directories are never searched");
    expect(1, a / "libtensorgl-.hidden.so", "'.hidden' is not a plugin name");
    expect(2, a / "libtensorgl-dir.so", "not a regular file");
    expect(3, "/nonexistent/tgl_dir", "cannot be read: No such file or directory");
    expect(4, kFixtureDir + "/libtensorgl-fixture.so", "shadowed by " + (a / "libtensorgl-fixture.so"));

    // A smaller capacity fills only what fits and still counts everything.
    const char* one_reason = nullptr;
    ASSERT_EQ(tgl_plugin_list_skipped(nullptr, &one_reason, 1, &count), TGL_OK);
    EXPECT_EQ(count, 5u);
    EXPECT_NE(std::string(one_reason).find("relative"), std::string::npos);
    EXPECT_EQ(tgl_plugin_list_skipped(nullptr, nullptr, 0, nullptr), TGL_ERROR_NULL_POINTER);
    EXPECT_NE(std::string(tgl_loader_last_error()).find("count is NULL"), std::string::npos);
}

TEST(LoaderList, SearchDirsFollowTheEnvironment) {
    size_t count = 0;
    const char* origin = nullptr;
    {
        EnvVar path("TGL_PLUGIN_PATH", "/a/b:rel::/c/");
        ASSERT_EQ(tgl_plugin_search_dirs(nullptr, 0, &count, &origin), TGL_OK);
        ASSERT_EQ(count, 2u);
        EXPECT_STREQ(origin, "TGL_PLUGIN_PATH");
        std::vector<const char*> dirs(count);
        ASSERT_EQ(tgl_plugin_search_dirs(dirs.data(), count, &count, nullptr), TGL_OK);
        EXPECT_STREQ(dirs[0], "/a/b");
        EXPECT_STREQ(dirs[1], "/c");  // trailing '/' dropped
    }
    EnvVar unset("TGL_PLUGIN_PATH", nullptr);
    ASSERT_EQ(tgl_plugin_search_dirs(nullptr, 0, &count, &origin), TGL_OK);
    ASSERT_EQ(count, 3u);  // libtensorgl's directory, its tensorgl/, the install directory
    EXPECT_STREQ(origin, "defaults");
    std::vector<const char*> dirs(count);
    ASSERT_EQ(tgl_plugin_search_dirs(dirs.data(), count, &count, nullptr), TGL_OK);
    const std::string own = fs::canonical(TGL_LOADER_FILE).parent_path().string();
    EXPECT_EQ(std::string(dirs[0]), own);
    EXPECT_EQ(std::string(dirs[1]), own + "/tensorgl");
    EXPECT_EQ(tgl_plugin_search_dirs(nullptr, 0, nullptr, nullptr), TGL_ERROR_NULL_POINTER);
}

// ------------------------------------------------------------------------------------------
// Accessors and tgl_device_property.

TEST(LoaderAccessors, DeviceProperty) {
    LoadResult r = load(fixture("libtensorgl-fixture.so"));
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    EXPECT_STREQ(tgl_device_property(r.plugin, 0, "name"), "fixture device 0");
    EXPECT_STREQ(tgl_device_property(r.plugin, 0, "limit.max_rank"), "8");
    EXPECT_EQ(tgl_device_property(r.plugin, 0, "no.such.property"), nullptr);
    EXPECT_EQ(tgl_device_property(r.plugin, 5, "name"), nullptr);
    std::string m = tgl_loader_last_error();
    EXPECT_NE(m.find("TGL_ERROR_DEVICE_UNAVAILABLE"), std::string::npos) << m;
    EXPECT_NE(m.find("device index 5 does not exist"), std::string::npos) << m;
    EXPECT_EQ(tgl_device_property(r.plugin, 0, nullptr), nullptr);
    EXPECT_EQ(tgl_device_property(nullptr, 0, "name"), nullptr);
    tgl_plugin_release(r.plugin);
}

TEST(LoaderAccessors, NullPlugin) {
    EXPECT_EQ(tgl_plugin_get_api(nullptr), nullptr);
    EXPECT_EQ(tgl_plugin_abi_minor(nullptr), 0u);
    EXPECT_EQ(tgl_plugin_path(nullptr), nullptr);
    EXPECT_EQ(tgl_plugin_name(nullptr), nullptr);
    tgl_plugin_release(nullptr);  // ignored
}

// ------------------------------------------------------------------------------------------
// The C++ wrapper, as far as a plugin without devices to open can take it.

TEST(Wrapper, PluginInfoAndProperties) {
    tgl::Plugin p(fixture("libtensorgl-fixture.so"));
    EXPECT_EQ(p.name(), "fixture");
    EXPECT_EQ(p.path(), real(fixture("libtensorgl-fixture.so")));
    EXPECT_EQ(p.abi_minor(), static_cast<uint32_t>(TGL_ABI_MINOR));
    tgl_plugin_info info = p.info();
    EXPECT_STREQ(info.version, "0.0.1-fixture");
    EXPECT_EQ(p.device_count(), 1u);
    auto props = p.properties(0);
    ASSERT_EQ(props.size(), 2u);
    EXPECT_EQ(props[0].first, "name");
    EXPECT_EQ(props[0].second, "fixture device 0");
    EXPECT_EQ(p.property(0, "limit.max_rank").value_or("?"), "8");
    EXPECT_FALSE(p.property(0, "nope").has_value());

    tgl::Plugin moved = std::move(p);
    EXPECT_EQ(moved.name(), "fixture");
    EXPECT_THROW(p.name(), tgl::Error);  // NOLINT(bugprone-use-after-move): on purpose
}

TEST(Wrapper, ErrorsCarryStatusAndMessage) {
    try {
        tgl::Plugin p(fixture("fixture_abi2.so"));
        FAIL() << "loading an ABI 2 plugin must throw";
    } catch (const tgl::Error& e) {
        EXPECT_EQ(e.status(), TGL_ERROR_PLUGIN_ABI_MISMATCH);
        EXPECT_NE(std::string(e.what()).find("plugin ABI 2.0, loader needs 1.x"), std::string::npos);
    }
    tgl::Plugin p(fixture("libtensorgl-fixture.so"));
    try {
        p.properties(3);
        FAIL() << "properties of a missing device must throw";
    } catch (const tgl::Error& e) {
        EXPECT_EQ(e.status(), TGL_ERROR_DEVICE_UNAVAILABLE);
        std::string w = e.what();
        EXPECT_NE(w.find("device_properties(3) failed with TGL_ERROR_DEVICE_UNAVAILABLE"),
                  std::string::npos) << w;
        EXPECT_NE(w.find("device index 3 does not exist"), std::string::npos) << w;
    }
    try {
        tgl::Device d(p, 0);
        FAIL() << "the fixture cannot open devices";
    } catch (const tgl::Error& e) {
        EXPECT_EQ(e.status(), TGL_ERROR_UNIMPLEMENTED);
        EXPECT_NE(std::string(e.what()).find("not implemented by the loader test fixture"),
                  std::string::npos) << e.what();
    }
}

TEST(Wrapper, AvailableListsPlugins) {
    EnvVar path("TGL_PLUGIN_PATH", kFixtureDir.c_str());
    std::vector<tgl::PluginEntry> all = tgl::Plugin::available();
    ASSERT_EQ(all.size(), 2u);
    EXPECT_EQ(all[0].name, "fixture");
    EXPECT_EQ(all[0].path, fixture("libtensorgl-fixture.so"));
    EXPECT_EQ(all[1].name, "text");
}

TEST(Wrapper, DtypesAndParams) {
    static_assert(tgl::dtype_v<float> == TGL_DTYPE_F32, "float is f32");
    static_assert(tgl::dtype_v<int32_t> == TGL_DTYPE_I32, "int32_t is i32");
    static_assert(tgl::dtype_v<uint8_t> == TGL_DTYPE_U8, "uint8_t is u8");
    tgl_matmul_params mp = tgl::make_params<tgl_matmul_params>();
    EXPECT_EQ(mp.struct_size, sizeof(tgl_matmul_params));
    EXPECT_EQ(mp.alpha, 0.0f);
    EXPECT_EQ(mp.transpose_a, 0u);
    tgl_reduce_params rp = tgl::make_params<tgl_reduce_params>();
    EXPECT_EQ(rp.struct_size, sizeof(tgl_reduce_params));
}

// ------------------------------------------------------------------------------------------
// Hostile plugins and files (issue 14). Each of these once crashed, hung or fooled the loader, so
// each load runs in a forked child: a crash or a hang there fails the test instead of killing the
// test program. The children end with _exit (no atexit handlers, no leak check of the copy).

namespace {

// How a child ended: empty if it exited normally with code 0, else how it died.
std::string how_it_died(int wstatus, unsigned timeout_s) {
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        std::string d = "killed by signal " + std::to_string(sig) + " (" + ::strsignal(sig) + ")";
        if (sig == SIGALRM) d += ": still running after " + std::to_string(timeout_s) + " s, a hang";
        return d;
    }
    if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) != 0)
        return "exited with code " + std::to_string(WEXITSTATUS(wstatus));
    return {};
}

struct ChildOutcome {
    std::string died;    // empty: exited normally
    std::string output;  // what body returned
};

// Runs `body` in a forked child and returns what it returned, or how the child died.
ChildOutcome in_child(const std::function<std::string()>& body, unsigned timeout_s = 30) {
    ChildOutcome r;
    int fds[2];
    if (::pipe(fds) != 0) {
        r.died = "pipe failed";
        return r;
    }
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid < 0) {
        r.died = "fork failed";
        return r;
    }
    if (pid == 0) {
        ::close(fds[0]);
        ::alarm(timeout_s);
        const std::string out = body();
        size_t done = 0;
        while (done < out.size()) {
            ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
            if (n <= 0) ::_exit(3);
            done += static_cast<size_t>(n);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        r.output.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    r.died = how_it_died(wstatus, timeout_s);
    return r;
}

// A load in a child: its status and message, and what `then` reports about the loaded plugin.
struct ChildLoad {
    std::string died;
    tgl_status status = -1;
    std::string message, then;
};

ChildLoad load_in_child(const std::string& arg,
                        const std::function<std::string(tgl_plugin*)>& then = nullptr) {
    ChildOutcome o = in_child([&] {
        LoadResult r = load(arg);
        std::string more = (then && r.plugin) ? then(r.plugin) : "";
        return std::to_string(r.status) + '\x1f' + r.message + '\x1f' + more;
    });
    ChildLoad c;
    c.died = o.died;
    size_t a = o.output.find('\x1f'), b = o.output.rfind('\x1f');
    if (c.died.empty() && a != std::string::npos && b != a) {
        c.status = static_cast<tgl_status>(std::stol(o.output.substr(0, a)));
        c.message = o.output.substr(a + 1, b - a - 1);
        c.then = o.output.substr(b + 1);
    }
    return c;
}

// The load of `arg` in a child ends normally with `status` and a message with every piece.
void expect_child_failure(const std::string& arg, tgl_status status,
                          const std::vector<std::string>& pieces) {
    ChildLoad c = load_in_child(arg);
    ASSERT_EQ(c.died, "") << "loading " << arg << " killed the process";
    EXPECT_EQ(c.status, status) << "expected " << tgl_status_name(status) << ", got "
                                << tgl_status_name(c.status) << " (" << c.message << ")";
    for (const std::string& p : pieces)
        EXPECT_NE(c.message.find(p), std::string::npos) << "message lacks '" << p << "': " << c.message;
}

// A plugin file of its own (and so a plugin name of its own): a copy of `from` in `dir`.
std::string plugin_copy(const std::string& dir, const std::string& base,
                        const std::string& from = fixture("libtensorgl-fixture.so")) {
    const std::string f = dir + "/libtensorgl-" + unique(base) + ".so";
    fs::copy_file(from, f, fs::copy_options::overwrite_existing);
    ::chmod(f.c_str(), 0755);
    return f;
}

std::string plugin_name_of(const std::string& file) {
    std::string base = fs::path(file).filename().string();
    return base.substr(12, base.size() - 15);  // libtensorgl-<name>.so
}

// A uid and gid nobody on this machine has (a stranger's files).
constexpr uid_t kStranger = 54321;

bool can_chown() { return ::geteuid() == 0; }

}  // namespace

// ---- Defect 2: who may change the plugin. Every directory the path passes through, as given and
// through every symlink on it, must be writable by no one but root and this process's user.

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderPathTrust, SymlinkedDirectoryInWorldWritableDirectoryIsRefused) {
    // The case: ww/ is world-writable (not sticky) and d a symlink in it to a safe
    // directory: anybody may repoint d to a directory with their own plugin.
    TempDir tmp;
    const std::string safe = tmp / "safe", ww = tmp / "ww", d = ww + "/d";
    ASSERT_EQ(::mkdir(safe.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(ww.c_str(), 0777), 0);
    ASSERT_EQ(::chmod(ww.c_str(), 0777), 0);
    ASSERT_EQ(::symlink(safe.c_str(), d.c_str()), 0);
    const std::string f = plugin_copy(safe, "symdir");
    const std::string via = d + "/" + fs::path(f).filename().string();
    expect_failure(via, TGL_ERROR_PLUGIN_INSECURE,
                   {via + " (resolves to " + f + ")", "parent directory " + ww + " is world-writable",
                    "'d' (a symlink on its path)"});
    {  // by name too
        EnvVar path("TGL_PLUGIN_PATH", d.c_str());
        expect_failure(plugin_name_of(f), TGL_ERROR_PLUGIN_INSECURE,
                       {"parent directory " + ww + " is world-writable"});
    }
    // Sticky and ours (like /tmp): only we may replace d.
    ASSERT_EQ(::chmod(ww.c_str(), 01777), 0);
    LoadResult r = load(via);
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    EXPECT_EQ(tgl_plugin_path(r.plugin), f);
    tgl_plugin_release(r.plugin);
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderPathTrust, SymlinkTargetInWorldWritableDirectoryIsRefused) {
    // The other way round: a safe path whose symlink leads through a world-writable directory.
    TempDir tmp;
    const std::string safe = tmp / "safe", ww = tmp / "ww", inner = ww + "/inner";
    ASSERT_EQ(::mkdir(safe.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(ww.c_str(), 0777), 0);
    ASSERT_EQ(::chmod(ww.c_str(), 0777), 0);
    ASSERT_EQ(::mkdir(inner.c_str(), 0755), 0);
    const std::string f = plugin_copy(inner, "symtarget");
    const std::string link = safe + "/" + fs::path(f).filename().string();
    ASSERT_EQ(::symlink((std::string("../ww/inner/") + fs::path(f).filename().string()).c_str(),
                        link.c_str()), 0);
    expect_failure(link, TGL_ERROR_PLUGIN_INSECURE,
                   {"parent directory " + ww + " is world-writable", "'inner'"});
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderPathTrust, SymlinkOwnedByAnotherUserIsRefused) {
    // In a sticky world-writable directory (like /tmp) a symlink's owner may repoint it: the
    // stranger's symlink is refused, wherever it points, and ours is followed.
    if (!can_chown()) GTEST_SKIP() << "needs root to give a symlink to another user";
    TempDir tmp;
    const std::string sticky = tmp / "sticky", good = tmp / "good", evil = tmp / "evil";
    for (const std::string& dir : {good, evil}) ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    ASSERT_EQ(::mkdir(sticky.c_str(), 01777), 0);
    ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
    const std::string g = plugin_copy(good, "repoint_good");
    const std::string name = fs::path(g).filename().string();
    fs::copy_file(fixture("libtensorgl-fixture.so"), evil + "/" + name);
    const std::string d = sticky + "/d", via = d + "/" + name;
    ASSERT_EQ(::symlink(good.c_str(), d.c_str()), 0);
    ASSERT_EQ(::lchown(d.c_str(), kStranger, kStranger), 0);
    expect_failure(via, TGL_ERROR_PLUGIN_INSECURE,
                   {via, "the symlink " + d + " on its path is owned by uid " +
                             std::to_string(kStranger)});
    // The stranger repoints it at their own plugin: still refused.
    ASSERT_EQ(::unlink(d.c_str()), 0);
    ASSERT_EQ(::symlink(evil.c_str(), d.c_str()), 0);
    ASSERT_EQ(::lchown(d.c_str(), kStranger, kStranger), 0);
    expect_failure(via, TGL_ERROR_PLUGIN_INSECURE, {"owned by uid " + std::to_string(kStranger)});
    // Ours again, repointed at the good directory: it loads, and the plugin that runs is the file
    // that was checked (its name comes from the file the loader mapped).
    ASSERT_EQ(::unlink(d.c_str()), 0);
    ASSERT_EQ(::symlink(good.c_str(), d.c_str()), 0);
    LoadResult r = load(via);
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    EXPECT_EQ(tgl_plugin_path(r.plugin), g);
    EXPECT_EQ(tgl_plugin_name(r.plugin), plugin_name_of(g));
    tgl_plugin_release(r.plugin);
}

// Checks TGL-P-1 (plugin_api.h, plugin rules).
TEST(LoaderPathTrust, FileOrDirectoryOwnedByAnotherUserIsRefused) {
    // "Owner" is root or the process's effective user: a test running as root accepts only
    // root's files, so a file or directory given to another uid is refused.
    if (!can_chown()) GTEST_SKIP() << "needs root to give a file to another user";
    TempDir tmp;
    const std::string dir = tmp / "dir";
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    const std::string f = plugin_copy(dir, "stranger");
    ASSERT_EQ(::chown(f.c_str(), kStranger, kStranger), 0);
    expect_failure(f, TGL_ERROR_PLUGIN_INSECURE,
                   {f, "the file is owned by uid " + std::to_string(kStranger),
                    "only root or this process's user (uid " + std::to_string(::geteuid()) + ")"});
    ASSERT_EQ(::chown(f.c_str(), 0, 0), 0);
    ASSERT_EQ(::chown(dir.c_str(), kStranger, kStranger), 0);
    expect_failure(f, TGL_ERROR_PLUGIN_INSECURE,
                   {"directory " + dir + " is owned by uid " + std::to_string(kStranger)});
    ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
    LoadResult r = load(f);
    EXPECT_EQ(r.status, TGL_OK) << r.message;
    tgl_plugin_release(r.plugin);
}

TEST(LoaderPathTrust, GroupWritableIsRefusedForAnotherGroup) {
    // Group write is harmless for root's group and the process's own group only.
    if (!can_chown()) GTEST_SKIP() << "needs root to give a file to another group";
    TempDir tmp;
    const std::string dir = tmp / "dir";
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    const std::string f = plugin_copy(dir, "groupw");
    ASSERT_EQ(::chown(f.c_str(), 0, kStranger), 0);
    ASSERT_EQ(::chmod(f.c_str(), 0775), 0);
    expect_failure(f, TGL_ERROR_PLUGIN_INSECURE,
                   {f, "writable by group " + std::to_string(kStranger), "chmod g-w"});
    ASSERT_EQ(::chmod(f.c_str(), 0755), 0);
    ASSERT_EQ(::chown(dir.c_str(), 0, kStranger), 0);
    ASSERT_EQ(::chmod(dir.c_str(), 0775), 0);
    expect_failure(f, TGL_ERROR_PLUGIN_INSECURE,
                   {"its directory " + dir + " is writable by group " + std::to_string(kStranger)});
    ASSERT_EQ(::chown(dir.c_str(), 0, ::getegid()), 0);  // our own group: fine
    ASSERT_EQ(::chown(f.c_str(), 0, ::getegid()), 0);
    ASSERT_EQ(::chmod(f.c_str(), 0775), 0);
    LoadResult r = load(f);
    EXPECT_EQ(r.status, TGL_OK) << r.message;
    tgl_plugin_release(r.plugin);
}

TEST(LoaderPathTrust, FifoAndSymlinkLoopFailWithoutHanging) {
    TempDir tmp;
    const std::string fifo = tmp / "libtensorgl-fifo.so";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    expect_child_failure(fifo, TGL_ERROR_PLUGIN_INSECURE, {fifo, "not a regular file"});
    const std::string link = tmp / "libtensorgl-tofifo.so";  // a symlink to it: the same
    ASSERT_EQ(::symlink(fifo.c_str(), link.c_str()), 0);
    expect_child_failure(link, TGL_ERROR_PLUGIN_INSECURE, {fifo, "not a regular file"});
    const std::string a = tmp / "libtensorgl-a.so", b = tmp / "libtensorgl-b.so";
    ASSERT_EQ(::symlink(b.c_str(), a.c_str()), 0);
    ASSERT_EQ(::symlink(a.c_str(), b.c_str()), 0);
    expect_child_failure(a, TGL_ERROR_PLUGIN_NOT_LOADABLE, {a, "too many symbolic links"});
}

TEST(LoaderPathTrust, MapsTheCheckedDescriptor) {
    // The library is mapped through the descriptor its checks read (/proc/self/fd/N), not by
    // opening its path again, so the file checked is the file loaded.
    TempDir tmp;
    const std::string f = plugin_copy(tmp.path(), "viafd");
    LoadResult r = load(f);
    ASSERT_EQ(r.status, TGL_OK) << r.message;
    Dl_info info;
    ASSERT_NE(::dladdr(reinterpret_cast<void*>(tgl_plugin_get_api(r.plugin)->device_count), &info), 0);
    EXPECT_EQ(std::string(info.dli_fname).rfind("/proc/self/fd/", 0), 0u) << info.dli_fname;
    struct stat mapped, checked;
    ASSERT_EQ(::stat(info.dli_fname, &mapped), 0) << "the descriptor stays open";
    ASSERT_EQ(::stat(f.c_str(), &checked), 0);
    EXPECT_EQ(mapped.st_ino, checked.st_ino);
    EXPECT_EQ(mapped.st_dev, checked.st_dev);
    tgl_plugin_release(r.plugin);
}

// ---- Defect 8: a truncated plugin (valid ELF header, segments past the end of the file) made
// dlopen die of SIGBUS. Every truncation is refused with a message, before dlopen.

namespace {

// Sizes to cut `file` to: inside the ELF header, inside the program headers, and at the start,
// middle and last byte of every segment's file bytes.
std::vector<off_t> truncation_sizes(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    Elf64_Ehdr eh;
    in.read(reinterpret_cast<char*>(&eh), sizeof eh);
    std::vector<Elf64_Phdr> ph(eh.e_phnum);
    in.seekg(static_cast<std::streamoff>(eh.e_phoff));
    in.read(reinterpret_cast<char*>(ph.data()), static_cast<std::streamsize>(ph.size() * sizeof(Elf64_Phdr)));
    std::vector<off_t> sizes = {20, sizeof(Elf64_Ehdr),
                                static_cast<off_t>(eh.e_phoff + ph.size() * sizeof(Elf64_Phdr) - 1)};
    const off_t header_end = static_cast<off_t>(eh.e_phoff + ph.size() * sizeof(Elf64_Phdr));
    for (const Elf64_Phdr& p : ph) {
        if (p.p_type != PT_LOAD || p.p_filesz == 0) continue;
        for (uint64_t cut : {p.p_offset, p.p_offset + p.p_filesz / 2, p.p_offset + p.p_filesz - 1})
            if (static_cast<off_t>(cut) > header_end) sizes.push_back(static_cast<off_t>(cut));
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return sizes;
}

}  // namespace

TEST(LoaderHostileFile, TruncatedPluginIsRefusedNotACrash) {
    std::vector<std::string> originals = {fixture("libtensorgl-fixture.so")};
#ifdef TGL_CPU_PLUGIN_FILE
    originals.push_back(TGL_CPU_PLUGIN_FILE);  // a real plugin, with segments of many pages
#endif
    TempDir tmp;
    int cases = 0;
    for (const std::string& original : originals) {
        for (off_t size : truncation_sizes(original)) {
            SCOPED_TRACE(original + " cut to " + std::to_string(size) + " bytes");
            const std::string f = plugin_copy(tmp.path(), "cut", original);
            ASSERT_EQ(::truncate(f.c_str(), size), 0);
            expect_child_failure(f, TGL_ERROR_PLUGIN_NOT_LOADABLE, {f, "truncated"});
            ++cases;
        }
    }
    EXPECT_GE(cases, 10);
    std::printf("truncated plugin files refused: %d\n", cases);
}

// ---- Defect 9: a library refused for its missing entry point was dlclose'd although its
// constructors had run; the thread one of them started then crashed the process.

TEST(LoaderHostilePlugin, LibraryWithoutEntryPointStaysMappedForItsThreads) {
    const std::string f = fixture("fixture_no_entry_thread.so");
    ChildOutcome o = in_child([&] {
        LoadResult r = load(f);
        ::usleep(200 * 1000);  // its thread keeps running the library's code meanwhile
        void* h = ::dlopen(real(f).c_str(), RTLD_NOW | RTLD_NOLOAD);
        return std::to_string(r.status) + " " + (h ? "mapped" : "unmapped") + " " + r.message;
    });
    ASSERT_EQ(o.died, "") << "the library was unloaded under its own thread";
    EXPECT_EQ(o.output.rfind(std::to_string(TGL_ERROR_PLUGIN_NO_ENTRY) + " mapped ", 0), 0u) << o.output;
    EXPECT_NE(o.output.find("the library stays loaded, since its constructors have run"),
              std::string::npos) << o.output;
}

// ---- Defect 10: an entry point exported as data was called as a function.

TEST(LoaderHostilePlugin, DataSymbolEntryIsNotCalled) {
    expect_child_failure(fixture("fixture_data_entry.so"), TGL_ERROR_PLUGIN_NO_ENTRY,
                         {real(fixture("fixture_data_entry.so")),
                          "tgl_plugin_init_v1 is a data object (STT_OBJECT), not a function"});
}

// ---- Defect 11: an init that failed and left a garbage table pointer crashed the loader as it
// read the plugin's message from that table. The message comes only from a table that lies in
// the plugin's own memory and passes the size and version checks.

TEST(LoaderHostilePlugin, GarbageTablePointersAreNeverRead) {
    expect_child_failure(fixture("fixture_init_fail_garbage.so"), TGL_ERROR_PLUGIN_INIT_FAILED,
                         {real(fixture("fixture_init_fail_garbage.so")),
                          "tgl_plugin_init_v1 failed with TGL_ERROR_BACKEND_FAILURE"});
    expect_child_failure(fixture("fixture_init_fail_bad_message.so"), TGL_ERROR_PLUGIN_INIT_FAILED,
                         {"tgl_plugin_init_v1 failed with TGL_ERROR_BACKEND_FAILURE"});
    expect_child_failure(fixture("fixture_ok_garbage.so"), TGL_ERROR_PLUGIN_BAD_TABLE,
                         {real(fixture("fixture_ok_garbage.so")), "function table at 0x10",
                          "not an aligned address inside the plugin's own memory"});
}

// ---- Defect 7: a plugin whose init calls tgl_plugin_load (a wrapper loading the plugin it wraps)
// deadlocked: the registry lock was held while plugin code ran.

TEST(LoaderReentrancy, InitLoadsAnotherPlugin) {
    TempDir tmp;
    const std::string f = plugin_copy(tmp.path(), "nest", fixture("fixture_nested_load.so"));
    const std::string var = "TGL_FIXTURE_LOAD_" + plugin_name_of(f);
    EnvVar target(var.c_str(), fixture("libtensorgl-fixture.so").c_str());
    ChildLoad c = load_in_child(f, [](tgl_plugin* p) {
        const char* s = tgl_device_property(p, 0, "nested.status");
        tgl_plugin* inner = nullptr;  // loaded by the nested call: now just another reference
        tgl_status again = tgl_plugin_load(fixture("libtensorgl-fixture.so").c_str(), &inner);
        return std::string(s ? s : "(none)") + " " + tgl_status_name(again);
    });
    ASSERT_EQ(c.died, "") << "a plugin loading another from its init";
    EXPECT_EQ(c.status, TGL_OK) << c.message;
    EXPECT_EQ(c.then, "TGL_OK TGL_OK");
}

TEST(LoaderReentrancy, InitLoadingItselfFailsWithAStatus) {
    TempDir tmp;
    const std::string f = plugin_copy(tmp.path(), "selfnest", fixture("fixture_nested_load.so"));
    const std::string var = "TGL_FIXTURE_LOAD_" + plugin_name_of(f);
    EnvVar target(var.c_str(), f.c_str());
    ChildLoad c = load_in_child(f, [](tgl_plugin* p) {
        const char* s = tgl_device_property(p, 0, "nested.status");
        const char* m = tgl_device_property(p, 0, "nested.message");
        return std::string(s ? s : "(none)") + " " + (m ? m : "");
    });
    ASSERT_EQ(c.died, "") << "a plugin loading itself from its init";
    EXPECT_EQ(c.status, TGL_OK) << c.message;  // the outer load goes on
    EXPECT_EQ(c.then.rfind("TGL_ERROR_PLUGIN_INIT_FAILED " + f + ": tgl_plugin_load was called for "
                           "this plugin while this thread is loading it", 0), 0u) << c.then;
}

TEST(LoaderReentrancy, CircularInitsOnTwoThreadsFailOneNestedLoad) {
    // X's init loads Y and Y's init loads X, on two threads whose inits meet first: one nested
    // load waits for the other plugin, the other finds the circle and fails; nobody waits for ever.
    TempDir tmp;
    const std::string x = plugin_copy(tmp.path(), "cyclex", fixture("fixture_nested_load.so"));
    const std::string y = plugin_copy(tmp.path(), "cycley", fixture("fixture_nested_load.so"));
    int x_to_y[2], y_to_x[2];
    ASSERT_EQ(::pipe(x_to_y), 0);
    ASSERT_EQ(::pipe(y_to_x), 0);
    const std::string nx = plugin_name_of(x), ny = plugin_name_of(y);
    EnvVar lx(("TGL_FIXTURE_LOAD_" + nx).c_str(), y.c_str());
    EnvVar ly(("TGL_FIXTURE_LOAD_" + ny).c_str(), x.c_str());
    EnvVar sx(("TGL_FIXTURE_SIGNAL_FD_" + nx).c_str(), std::to_string(x_to_y[1]).c_str());
    EnvVar wy(("TGL_FIXTURE_WAIT_FD_" + ny).c_str(), std::to_string(x_to_y[0]).c_str());
    EnvVar sy(("TGL_FIXTURE_SIGNAL_FD_" + ny).c_str(), std::to_string(y_to_x[1]).c_str());
    EnvVar wx(("TGL_FIXTURE_WAIT_FD_" + nx).c_str(), std::to_string(y_to_x[0]).c_str());
    ChildOutcome o = in_child([&] {
        LoadResult rx, ry;
        std::thread tx([&] { rx = load(x); });
        std::thread ty([&] { ry = load(y); });
        tx.join();
        ty.join();
        std::string out;
        for (LoadResult* r : {&rx, &ry}) {
            const char* s = r->plugin ? tgl_device_property(r->plugin, 0, "nested.status") : nullptr;
            const char* m = r->plugin ? tgl_device_property(r->plugin, 0, "nested.message") : nullptr;
            out += std::string(tgl_status_name(r->status)) + "|" + (s ? s : "-") + "|" + (m ? m : "") + "\n";
        }
        return out;
    });
    for (int fd : {x_to_y[0], x_to_y[1], y_to_x[0], y_to_x[1]}) ::close(fd);
    ASSERT_EQ(o.died, "") << "two plugins loading each other from their inits";
    std::istringstream lines(o.output);
    std::string line;
    int outer_ok = 0, nested_ok = 0, nested_circular = 0;
    while (std::getline(lines, line)) {
        outer_ok += line.rfind("TGL_OK|", 0) == 0;
        nested_ok += line.find("|TGL_OK|") != std::string::npos;
        nested_circular += line.find("|TGL_ERROR_PLUGIN_INIT_FAILED|") != std::string::npos &&
                           line.find("circular plugin loads") != std::string::npos;
    }
    EXPECT_EQ(outer_ok, 2) << o.output;
    EXPECT_EQ(nested_ok, 1) << o.output;
    EXPECT_EQ(nested_circular, 1) << o.output;
}
