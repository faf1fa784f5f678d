// Plugin infrastructure of the GLES plugin: the on-disk program cache (program_cache.h), the
// memory properties (memory.live_bytes / memory.held_bytes) and (ABI 1.1) the timer interface.
// The GLES-only tests are skipped on other plugins; the timer test runs on every plugin.
#include "common.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace conf {
namespace {

using Infra = ConformanceTest;

bool is_gles() { return plug().name() == "gles"; }

// A device property of device 0 as an integer (-1 when absent).
long long property(const char* name) {
    const tgl_property* props = nullptr;
    uint32_t n = 0;
    if (plug().api().device_properties(0, &props, &n) != TGL_OK) return -1;
    for (uint32_t i = 0; i < n; ++i)
        if (std::string(props[i].name) == name) return std::atoll(props[i].value);
    return -1;
}

struct CacheCounts {
    long long hits, misses, writes, rejected;
};
CacheCounts cache_counts() {
    return {property("program_cache.hits"), property("program_cache.misses"), property("program_cache.writes"),
            property("program_cache.rejected")};
}

// A fresh directory under TMPDIR (removed with its files at the end of the test).
class TempDir {
public:
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string templ = std::string(base && *base ? base : "/tmp") + "/tgl-cache-test-XXXXXX";
        std::vector<char> buf(templ.begin(), templ.end());
        buf.push_back('\0');
        if (!mkdtemp(buf.data())) throw Failure("mkdtemp failed");
        path_ = buf.data();
    }
    ~TempDir() {
        for (const auto& f : files()) unlink(f.c_str());
        rmdir(path_.c_str());
    }
    const std::string& path() const { return path_; }
    std::vector<std::string> files() const {
        std::vector<std::string> out;
        if (DIR* d = opendir(path_.c_str())) {
            while (dirent* e = readdir(d))
                if (e->d_name[0] != '.') out.push_back(path_ + "/" + e->d_name);
            closedir(d);
        }
        return out;
    }

private:
    std::string path_;
};

// Opens a device with TGL_CACHE_DIR = dir (unset again afterwards; read at device_open).
std::unique_ptr<Device> open_with_cache_dir(const std::string& dir) {
    const char* old = std::getenv("TGL_CACHE_DIR");
    std::string saved = old ? old : "";
    setenv("TGL_CACHE_DIR", dir.c_str(), 1);
    std::unique_ptr<Device> d;
    try {
        d = std::make_unique<Device>(plug());
    } catch (...) {
        if (old) setenv("TGL_CACHE_DIR", saved.c_str(), 1);
        else unsetenv("TGL_CACHE_DIR");
        throw;
    }
    if (old) setenv("TGL_CACHE_DIR", saved.c_str(), 1);
    else unsetenv("TGL_CACHE_DIR");
    return d;
}

// a + b and sum(a) on a fresh device (two programs), checked against hand values.
void run_ops_checked(Device& d) {
    DeviceTensor a(d, contiguous({4})), b(d, contiguous({4})), y(d, contiguous({4})), s(d, contiguous({1}));
    a.set_values({1, 2, 3, 4});
    b.set_values({10, 20, 30, 40});
    y.poison();
    s.poison();
    d.run_ok(TGL_OP_ADD, nullptr, {a.desc(), b.desc()}, {y.desc()});
    tgl_reduce_params p = reduce_params({0}, true);
    d.run_ok(TGL_OP_SUM, &p, {a.desc()}, {s.desc()});
    EXPECT_EQ(y.read(), f32({11, 22, 33, 44}));
    EXPECT_EQ(s.read(), f32({10}));
}

std::vector<char> read_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}
void write_bytes(const std::string& path, const std::vector<char>& bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

TEST_F(Infra, ProgramCacheColdWritesWarmHits) {
    if (!is_gles()) GTEST_SKIP() << "the program cache is the GLES plugin's";
    if (property("program_binary_formats") <= 0) GTEST_SKIP() << "the driver offers no program binary formats (softpipe)";
    TempDir dir;
    CacheCounts c0 = cache_counts();
    ASSERT_GE(c0.hits, 0) << "program_cache.* properties missing";
    {
        auto d = open_with_cache_dir(dir.path());
        run_ops_checked(*d);
    }
    CacheCounts c1 = cache_counts();
    EXPECT_GE(c1.misses - c0.misses, 2);
    EXPECT_EQ(c1.hits, c0.hits);
    ASSERT_GE(c1.writes - c0.writes, 2) << "the driver offers program binaries: a cold run writes entries";
    EXPECT_EQ(dir.files().size(), size_t(c1.writes - c0.writes));
    {
        auto d = open_with_cache_dir(dir.path());  // a second device: compiles nothing
        run_ops_checked(*d);
    }
    CacheCounts c2 = cache_counts();
    EXPECT_EQ(c2.hits - c1.hits, c1.writes - c0.writes);
    EXPECT_EQ(c2.misses, c1.misses);
    EXPECT_EQ(c2.writes, c1.writes);
    EXPECT_EQ(c2.rejected, c1.rejected);
}

TEST_F(Infra, ProgramCacheBadEntriesAreMisses) {
    if (!is_gles()) GTEST_SKIP() << "the program cache is the GLES plugin's";
    if (property("program_binary_formats") <= 0) GTEST_SKIP() << "the driver offers no program binary formats (softpipe)";
    TempDir dir;
    {
        auto d = open_with_cache_dir(dir.path());
        run_ops_checked(*d);
    }
    std::vector<std::string> files = dir.files();
    ASSERT_GE(files.size(), 2u);
    // Entry 0: a flipped byte in its payload. Entry 1: truncated. Entry 2 (if any): another
    // entry's contents under its name (foreign / stale key).
    const std::vector<char> original0 = read_bytes(files[0]);
    std::vector<char> e0 = original0;
    ASSERT_GT(e0.size(), 100u);
    e0[e0.size() / 2 + 50] ^= 0x5a;
    write_bytes(files[0], e0);
    std::vector<char> e1 = read_bytes(files[1]);
    e1.resize(e1.size() / 2);
    write_bytes(files[1], e1);
    size_t bad = 2;
    if (files.size() > 2) {
        write_bytes(files[2], original0);
        ++bad;
    }
    CacheCounts c0 = cache_counts();
    {
        auto d = open_with_cache_dir(dir.path());
        run_ops_checked(*d);  // the right answers from recompiled programs
    }
    CacheCounts c1 = cache_counts();
    EXPECT_EQ(size_t(c1.rejected - c0.rejected), bad);
    EXPECT_EQ(size_t(c1.misses - c0.misses), bad);
    EXPECT_EQ(size_t(c1.writes - c0.writes), bad);  // rewritten
    {
        auto d = open_with_cache_dir(dir.path());
        run_ops_checked(*d);
    }
    CacheCounts c2 = cache_counts();
    EXPECT_EQ(c2.misses, c1.misses) << "the rewritten entries load";
    EXPECT_EQ(c2.rejected, c1.rejected);
    EXPECT_GE(c2.hits - c1.hits, 2);
}

TEST_F(Infra, ProgramCacheDisabledAndUnwritable) {
    if (!is_gles()) GTEST_SKIP() << "the program cache is the GLES plugin's";
    TempDir dir;
    CacheCounts c0 = cache_counts();
    {
        auto d = open_with_cache_dir("");  // documented switch: empty disables
        run_ops_checked(*d);
    }
    CacheCounts c1 = cache_counts();
    EXPECT_EQ(c1.writes, c0.writes);
    EXPECT_EQ(c1.hits, c0.hits);
    // A directory that cannot be created (its parent is a regular file): no cache, no error.
    const std::string file = dir.path() + "/plain-file";
    write_bytes(file, {'x'});
    {
        auto d = open_with_cache_dir(file + "/cache");
        run_ops_checked(*d);
    }
    CacheCounts c2 = cache_counts();
    EXPECT_EQ(c2.writes, c1.writes);
    EXPECT_EQ(c2.hits, c1.hits);
    EXPECT_GE(c2.misses - c1.misses, 2);
}

TEST_F(Infra, GlThreadCountersGrowWithWork) {
    if (!is_gles()) GTEST_SKIP() << "gl_thread.* properties are the GLES plugin's";
    const long long tasks0 = property("gl_thread.tasks"), busy0 = property("gl_thread.busy_ns");
    ASSERT_GE(tasks0, 0) << "gl_thread.tasks missing";
    ASSERT_GE(busy0, 0) << "gl_thread.busy_ns missing";
    {
        Device d(plug());
        Buffer b(d, 4096);
        const float one = 1.0f;
        for (int i = 0; i < 3; ++i) d.fill(b.handle(), 0, 4096, &one, 4);
        d.synchronize();
    }
    EXPECT_GE(property("gl_thread.tasks") - tasks0, 3);  // the three fills (waits such as synchronize are not counted)
    EXPECT_GT(property("gl_thread.busy_ns"), busy0);
}

TEST_F(Infra, MemoryPropertiesFollowAllocAndFree) {
    if (!is_gles()) GTEST_SKIP() << "memory.* properties are the GLES plugin's";
    const long long live0 = property("memory.live_bytes"), held0 = property("memory.held_bytes");
    ASSERT_GE(live0, 0);
    ASSERT_GE(held0, live0);
    {
        Device d(plug());
        const uint64_t sizes[3] = {1 << 20, 4096, 12345};
        std::vector<tgl_buffer> bufs;
        for (uint64_t s : sizes) bufs.push_back(d.alloc(s));
        const long long want = (1 << 20) + 4096 + 12345;
        EXPECT_EQ(property("memory.live_bytes") - live0, want);
        const long long held = property("memory.held_bytes") - held0;
        EXPECT_GE(held, want);
        EXPECT_LE(held, want + 16);  // stores are padded to whole words only
        // An op with a scratch buffer (a sum over many elements reduces in two passes) holds it, bounded.
        {
            Buffer x(d, 4 << 20), s(d, 4);
            const float half = 0.5f;
            d.fill(x.handle(), 0, 4 << 20, &half, 4);
            tgl_tensor xt{}, st{};
            xt.buffer = x.handle();
            xt.dtype = st.dtype = TGL_DTYPE_F32;
            xt.rank = 1;
            xt.shape[0] = 1 << 20;
            xt.strides[0] = 1;
            st.buffer = s.handle();
            tgl_reduce_params p = reduce_params({0}, false);
            d.run_ok(TGL_OP_SUM, &p, {xt}, {st});
            float got = 0;
            d.download(s.handle(), 0, &got, 4);
            EXPECT_EQ(got, 524288.0f);
        }
        d.synchronize();
        EXPECT_EQ(property("memory.live_bytes") - live0, want);
        EXPECT_LE(property("memory.held_bytes") - held0 - want, 4 << 20) << "scratch kept is bounded";
        d.free(bufs[0]);
        EXPECT_EQ(property("memory.live_bytes") - live0, want - (1 << 20));
        for (size_t i = 1; i < bufs.size(); ++i) d.free(bufs[i]);
        EXPECT_EQ(property("memory.live_bytes"), live0);
    }
    // Closed: everything it held is returned.
    EXPECT_EQ(property("memory.live_bytes"), live0);
    EXPECT_EQ(property("memory.held_bytes"), held0);
}

}  // namespace
}  // namespace conf
