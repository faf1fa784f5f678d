// Plugin infrastructure of the GLES plugin: the on-disk program cache (program_cache.h), the
// memory properties (memory.live_bytes / memory.held_bytes) and (ABI 1.1) the timer interface.
// The GLES-only tests are skipped on other plugins; the timer test runs on every plugin.
#include "common.h"
#include "sha256.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <future>
#include <memory>
#include <set>
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

// a + b, sum(a) and -a on a fresh device (three programs), checked against hand values.
void run_ops_checked(Device& d) {
    DeviceTensor a(d, contiguous({4})), b(d, contiguous({4})), y(d, contiguous({4})), s(d, contiguous({1})),
        n(d, contiguous({4}));
    a.set_values({1, 2, 3, 4});
    b.set_values({10, 20, 30, 40});
    y.poison();
    s.poison();
    n.poison();
    d.run_ok(TGL_OP_ADD, nullptr, {a.desc(), b.desc()}, {y.desc()});
    tgl_reduce_params p = reduce_params({0}, true);
    d.run_ok(TGL_OP_SUM, &p, {a.desc()}, {s.desc()});
    d.run_ok(TGL_OP_NEG, nullptr, {a.desc()}, {n.desc()});
    EXPECT_EQ(y.read(), f32({11, 22, 33, 44}));
    EXPECT_EQ(s.read(), f32({10}));
    EXPECT_EQ(n.read(), f32({-1, -2, -3, -4}));
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

// ---------------------------------------------------------------------------------------------
// A hostile program cache (program_cache.h): forged, foreign-owned, FIFO, symlinked and oversize
// entries, and directories others may write. Each is ignored (a miss: compiled from source), the
// ops stay exact, nothing blocks.

bool cache_testable() { return is_gles() && property("program_binary_formats") > 0; }
const char* const kNoCache = "the program cache is the GLES plugin's, with program binary formats";

// The entries of a populated cache directory.
std::vector<std::string> populated(const TempDir& dir) {
    {
        auto d = open_with_cache_dir(dir.path());
        run_ops_checked(*d);
    }
    std::vector<std::string> files = dir.files();
    if (files.size() < 3) throw Failure("expected at least 3 program cache entries in " + dir.path());
    return files;
}

const std::vector<float> kUnaryX = {-2.5f, -0.5f, 0.75f, 3.0f};

std::vector<float> run_unary(Device& d, tgl_op op) {
    DeviceTensor x(d, contiguous({4})), y(d, contiguous({4}));
    x.set_values(kUnaryX);
    y.poison();
    d.run_ok(op, nullptr, {x.desc()}, {y.desc()});
    return y.read();
}

// The entry names in `a` that `b` lacks.
std::vector<std::string> only_in(const TempDir& a, const TempDir& b) {
    std::set<std::string> names;
    for (const auto& f : b.files()) names.insert(f.substr(b.path().size()));
    std::vector<std::string> out;
    for (const auto& f : a.files())
        if (!names.count(f.substr(a.path().size()))) out.push_back(f);
    return out;
}

// What an attacker who knows the entry format writes: `donor`'s binary under `victim`'s key, with
// the digest recomputed. Format 2 (program_cache.cpp): an 88-byte header whose bytes 24..55 are
// the key's hash and 56..87 the SHA-256 of the header (those 32 bytes zero) and the payload.
std::vector<char> forge(std::vector<char> donor, const std::vector<char>& victim) {
    if (donor.size() < 88 || victim.size() < 88) throw Failure("entries shorter than their header");
    std::memcpy(donor.data() + 24, victim.data() + 24, 32);
    std::memset(donor.data() + 56, 0, 32);
    uint8_t digest[32];
    tgl::sha256(donor.data(), donor.size(), digest);
    std::memcpy(donor.data() + 56, digest, 32);
    return donor;
}

// Captures what the process writes to stderr (fd 2) while it lives.
class StderrCapture {
public:
    StderrCapture() {
        std::fflush(stderr);
        char templ[] = "/tmp/tgl-stderr-XXXXXX";
        fd_ = mkstemp(templ);
        if (fd_ < 0) throw Failure("mkstemp failed");
        unlink(templ);
        saved_ = dup(2);
        dup2(fd_, 2);
    }
    ~StderrCapture() { restore(); }
    std::string text() {
        restore();
        std::string out;
        char buf[4096];
        lseek(fd_, 0, SEEK_SET);
        for (ssize_t n; (n = read(fd_, buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
        return out;
    }

private:
    void restore() {
        if (saved_ < 0) return;
        std::fflush(stderr);
        dup2(saved_, 2);
        close(saved_);
        saved_ = -1;
    }
    int fd_ = -1, saved_ = -1;
};

// Another program's binary stored under exp's key (digest recomputed): exp still computes exp
// (the loaded binary lacks exp's identity block), and the entry is replaced by exp's own.
TEST_F(Infra, ProgramCacheForgedEntryIsNotLoaded) {
    if (!cache_testable()) GTEST_SKIP() << kNoCache;
    std::vector<float> want_exp, want_sigmoid;
    {
        auto d = open_with_cache_dir("");
        want_exp = run_unary(*d, TGL_OP_EXP);
        want_sigmoid = run_unary(*d, TGL_OP_SIGMOID);
    }
    ASSERT_NE(want_exp, want_sigmoid);
    TempDir exp_dir, sigmoid_dir;
    {
        auto d = open_with_cache_dir(exp_dir.path());
        ASSERT_EQ(run_unary(*d, TGL_OP_EXP), want_exp);
    }
    {
        auto d = open_with_cache_dir(sigmoid_dir.path());
        ASSERT_EQ(run_unary(*d, TGL_OP_SIGMOID), want_sigmoid);
    }
    const std::vector<std::string> exp_only = only_in(exp_dir, sigmoid_dir), sigmoid_only = only_in(sigmoid_dir, exp_dir);
    ASSERT_EQ(exp_only.size(), 1u) << "exp's program: the one entry a run of sigmoid does not write";
    ASSERT_EQ(sigmoid_only.size(), 1u);
    write_bytes(exp_only[0], forge(read_bytes(sigmoid_only[0]), read_bytes(exp_only[0])));
    CacheCounts c0 = cache_counts();
    {
        auto d = open_with_cache_dir(exp_dir.path());
        EXPECT_EQ(run_unary(*d, TGL_OP_EXP), want_exp) << "exp ran a forged cache entry (sigmoid's binary)";
    }
    CacheCounts c1 = cache_counts();
    EXPECT_EQ(c1.rejected - c0.rejected, 1);
    EXPECT_EQ(c1.writes - c0.writes, 1) << "the forged entry is replaced";
    {
        auto d = open_with_cache_dir(exp_dir.path());
        EXPECT_EQ(run_unary(*d, TGL_OP_EXP), want_exp);
    }
    CacheCounts c2 = cache_counts();
    EXPECT_EQ(c2.rejected, c1.rejected);
    EXPECT_EQ(c2.misses, c1.misses) << "the replaced entry loads";
}

// Entries owned by another user, or writable by group or others, are not used (tests run as root
// in CI: chown needs it).
TEST_F(Infra, ProgramCacheEntriesOthersCanWriteAreNotUsed) {
    if (!cache_testable()) GTEST_SKIP() << kNoCache;
    TempDir dir;
    const std::vector<std::string> files = populated(dir);
    size_t bad = 0;
    ASSERT_EQ(chmod(files[bad++].c_str(), 0620), 0);  // group-writable
    ASSERT_EQ(chmod(files[bad++].c_str(), 0602), 0);  // world-writable
    const bool root = geteuid() == 0;
    if (root) {
        ASSERT_EQ(chown(files[bad++].c_str(), 12345, 12345), 0);
    }
    CacheCounts c0 = cache_counts();
    {
        auto d = open_with_cache_dir(dir.path());
        run_ops_checked(*d);
    }
    CacheCounts c1 = cache_counts();
    EXPECT_EQ(size_t(c1.rejected - c0.rejected), bad);
    EXPECT_EQ(size_t(c1.misses - c0.misses), bad);
    EXPECT_EQ(size_t(c1.hits - c0.hits), files.size() - bad);
    EXPECT_EQ(size_t(c1.writes - c0.writes), bad) << "replaced: the directory is ours";
    for (size_t i = 0; i < bad; ++i) {
        struct stat st;
        ASSERT_EQ(lstat(files[i].c_str(), &st), 0);
        EXPECT_EQ(st.st_uid, geteuid()) << files[i];
        EXPECT_EQ(st.st_mode & 077, 0u) << files[i];
    }
    if (!root) GTEST_SKIP() << "the entry of another uid needs root to chown (the other cases passed)";
}

// A cache directory writable by group or others, or owned by another user: the cache is disabled
// for that device (nothing read or written there), with a TGL_GLES_DEBUG note.
TEST_F(Infra, ProgramCacheDirectoryOthersCanWriteIsNotUsed) {
    if (!cache_testable()) GTEST_SKIP() << kNoCache;
    TempDir dir;
    const std::vector<std::string> files = populated(dir);
    struct Case {
        mode_t mode;
        uid_t uid;
        const char* why;
    };
    std::vector<Case> cases = {{0777, geteuid(), "writable by others"}, {0770, geteuid(), "writable by its group"},
                               {01777, geteuid(), "writable by others"}};
    if (geteuid() == 0) cases.push_back({0700, 12345, "owned by uid 12345"});
    for (const Case& c : cases) {
        ASSERT_EQ(chmod(dir.path().c_str(), c.mode), 0);
        ASSERT_EQ(chown(dir.path().c_str(), c.uid, gid_t(-1)), 0);
        CacheCounts c0 = cache_counts();
        std::string note;
        {
            StderrCapture err;
            setenv("TGL_GLES_DEBUG", "1", 1);
            auto d = open_with_cache_dir(dir.path());
            unsetenv("TGL_GLES_DEBUG");
            run_ops_checked(*d);
            d.reset();
            note = err.text();
        }
        CacheCounts c1 = cache_counts();
        EXPECT_EQ(c1.hits, c0.hits) << c.why;
        EXPECT_EQ(c1.rejected, c0.rejected) << c.why;
        EXPECT_EQ(c1.writes, c0.writes) << c.why;
        EXPECT_GE(c1.misses - c0.misses, 2) << c.why;
        EXPECT_NE(note.find("program cache disabled for this device: " + dir.path() + " is " + c.why), std::string::npos)
            << "TGL_GLES_DEBUG output:\n" << note;
        EXPECT_EQ(dir.files().size(), files.size()) << c.why;
    }
    ASSERT_EQ(chown(dir.path().c_str(), geteuid(), gid_t(-1)), 0);
    ASSERT_EQ(chmod(dir.path().c_str(), 0700), 0);
}

// FIFOs named like every entry: device_open and the ops complete at once (no open or read blocks),
// exactly, and the FIFOs are replaced by entries. (Were the cache to block, the test unblocks it
// by opening each FIFO for writing, and fails.)
TEST_F(Infra, ProgramCacheFifoEntriesDoNotBlock) {
    if (!cache_testable()) GTEST_SKIP() << kNoCache;
    TempDir dir;
    const std::vector<std::string> files = populated(dir);
    for (const auto& f : files) {
        ASSERT_EQ(unlink(f.c_str()), 0);
        ASSERT_EQ(mkfifo(f.c_str(), 0600), 0);
    }
    CacheCounts c0 = cache_counts();
    const auto start = std::chrono::steady_clock::now();
    auto done = std::async(std::launch::async, [&] {
        auto d = open_with_cache_dir(dir.path());
        run_ops_checked(*d);
    });
    bool blocked = false;
    while (done.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
        if (std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) continue;
        blocked = true;
        for (const auto& f : files) {  // a writer lets a blocked open return (then EOF)
            int fd = open(f.c_str(), O_WRONLY | O_NONBLOCK);
            if (fd >= 0) close(fd);
        }
    }
    done.get();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_FALSE(blocked) << "the program cache blocked on a FIFO entry for 30 s";
    CacheCounts c1 = cache_counts();
    EXPECT_EQ(size_t(c1.rejected - c0.rejected), files.size());
    EXPECT_EQ(size_t(c1.writes - c0.writes), files.size()) << "the FIFOs are replaced";
    for (const auto& f : files) {
        struct stat st;
        ASSERT_EQ(lstat(f.c_str(), &st), 0);
        EXPECT_TRUE(S_ISREG(st.st_mode)) << f;
    }
    std::printf("[ cache    ] %zu FIFO entries: device_open and two ops took %.2f s\n", files.size(), seconds);
}

// An entry that is a symbolic link (to a valid copy of itself elsewhere) and one past the size
// limit (32 MiB, a sparse file) are rejected unread; both are replaced.
TEST_F(Infra, ProgramCacheSymlinkAndOversizeEntriesAreIgnored) {
    if (!cache_testable()) GTEST_SKIP() << kNoCache;
    TempDir dir, elsewhere;
    const std::vector<std::string> files = populated(dir);
    const std::string copy = elsewhere.path() + "/entry";
    write_bytes(copy, read_bytes(files[0]));
    ASSERT_EQ(chmod(copy.c_str(), 0600), 0);
    ASSERT_EQ(unlink(files[0].c_str()), 0);
    ASSERT_EQ(symlink(copy.c_str(), files[0].c_str()), 0);
    ASSERT_EQ(truncate(files[1].c_str(), (off_t(32) << 20) + 1), 0);
    CacheCounts c0 = cache_counts();
    {
        auto d = open_with_cache_dir(dir.path());
        run_ops_checked(*d);
    }
    CacheCounts c1 = cache_counts();
    EXPECT_EQ(c1.rejected - c0.rejected, 2);
    EXPECT_EQ(c1.misses - c0.misses, 2);
    EXPECT_EQ(c1.writes - c0.writes, 2);
    EXPECT_EQ(size_t(c1.hits - c0.hits), files.size() - 2);
    struct stat st;
    ASSERT_EQ(lstat(files[0].c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << "the symlink is replaced by an entry";
    ASSERT_EQ(stat(files[1].c_str(), &st), 0);
    EXPECT_LT(st.st_size, 32 << 20);
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
