#include "program_cache.h"

#include "debug_notes.h"
#include "gl_thread.h"
#include "test_hooks.h"

#include "sha256.h"
#include "status.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

namespace tgl {
namespace gles {

namespace {

// File layout (little-endian host order; a file from another architecture fails the key check):
//   char magic[8] = "TGLPBIN2"; uint32 format_version; uint32 binary_format; uint64 payload_len;
//   uint8 key[32] (SHA-256 of the key string); uint8 digest[32] (SHA-256 of the header with this
//   field zeroed, then the payload); payload (the driver's binary).
const char kMagic[8] = {'T', 'G', 'L', 'P', 'B', 'I', 'N', '2'};
const uint32_t kFormatVersion = 2;
struct Header {
    char magic[8];
    uint32_t format_version;
    uint32_t binary_format;
    uint64_t payload_len;
    uint8_t key[32];
    uint8_t digest[32];
};
static_assert(sizeof(Header) == 88, "cache header layout");

// SHA-256 of the header (digest zeroed) and the payload: binds the key and format to the binary.
void entry_digest(const Header& header, const uint8_t* payload, uint8_t out[32]) {
    Header h = header;
    std::memset(h.digest, 0, sizeof h.digest);
    std::vector<uint8_t> all(sizeof h + size_t(h.payload_len));
    std::memcpy(all.data(), &h, sizeof h);
    std::memcpy(all.data() + sizeof h, payload, size_t(h.payload_len));
    sha256(all.data(), all.size(), out);
}

// mkdir -p with mode 0700 for the parts it creates; false when the directory is not there after.
bool make_dirs(const std::string& dir) {
    struct stat st;
    if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
    size_t slash = dir.find_last_of('/');
    if (slash != std::string::npos && slash > 0 && !make_dirs(dir.substr(0, slash))) return false;
    if (mkdir(dir.c_str(), 0700) == 0) return true;
    return errno == EEXIST && stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Why a file or directory with status `st` is not ours alone to trust; "" when it is.
std::string untrusted_because(const struct stat& st) {
    if (st.st_uid != geteuid())
        return format("owned by uid %u, not by this process's uid %u", unsigned(st.st_uid), unsigned(geteuid()));
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return format("writable by %s (mode %04o)", (st.st_mode & S_IWOTH) ? "others" : "its group",
                      unsigned(st.st_mode & 07777));
    return "";
}

enum class ReadResult { Missing, Rejected, Read };

// Entry `name` of directory `dir_fd` into `out`. Opened without following a symlink and without
// blocking (a FIFO), then checked as a regular file that is ours and at most kMaxEntryBytes long.
ReadResult read_entry(int dir_fd, const std::string& name, std::vector<uint8_t>& out, std::string& why) {
    int fd = openat(dir_fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return ReadResult::Missing;
        why = errno == ELOOP ? "a symbolic link" : format("cannot be opened (%s)", std::strerror(errno));
        return ReadResult::Rejected;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) why = format("cannot be examined (%s)", std::strerror(errno));
    else if (!S_ISREG(st.st_mode)) why = S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file" : "not a regular file";
    else why = untrusted_because(st);
    if (why.empty() && uint64_t(st.st_size) > ProgramCache::kMaxEntryBytes)
        why = format("%lld bytes long, above the limit of %llu", (long long)st.st_size,
                     (unsigned long long)ProgramCache::kMaxEntryBytes);
    if (!why.empty()) {
        close(fd);
        return ReadResult::Rejected;
    }
    out.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < out.size()) {  // short reads; a file that shrinks meanwhile is rejected below
        ssize_t n = read(fd, out.data() + got, out.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += size_t(n);
    }
    close(fd);
    if (got != out.size()) {
        why = "shorter than its size when read";
        return ReadResult::Rejected;
    }
    return ReadResult::Read;
}

std::string entry_name(const uint8_t key[32]) { return hex_digest(key) + ".glbin"; }

// The identity block's name of a source text (without the block).
std::string identity_of(const std::string& text) {
    uint8_t d[32];
    sha256(text.data(), text.size(), d);
    return "TglProgramIdentity_" + hex_digest(d).substr(0, 32);
}

// Whether linked `program` exposes the uniform block `identity`.
bool has_identity(GLuint program, const std::string& identity) {
    GLuint index = glGetProgramResourceIndex(program, GL_UNIFORM_BLOCK, identity.c_str());
    while (glGetError() != GL_NO_ERROR) index = GL_INVALID_INDEX;
    return !identity.empty() && index != GL_INVALID_INDEX;
}


int uniform_components(GLenum type) {
    switch (type) {
    case GL_INT_VEC2: case GL_UNSIGNED_INT_VEC2: case GL_FLOAT_VEC2: case GL_BOOL_VEC2: return 2;
    case GL_INT_VEC3: case GL_UNSIGNED_INT_VEC3: case GL_FLOAT_VEC3: case GL_BOOL_VEC3: return 3;
    case GL_INT_VEC4: case GL_UNSIGNED_INT_VEC4: case GL_FLOAT_VEC4: case GL_BOOL_VEC4: return 4;
    default: return 1;
    }
}

// Every kernel stays within the device's limits (the driver's, or the OpenGL ES 3.1 minima under
// TGL_GLES_LIMITS=minimum, which a driver with larger limits would not enforce itself): checks a
// linked program's SSBO blocks and binding points, workgroup size and default-block uniform
// components. (Shared memory cannot be queried: each kernel sizes its shared arrays from
// max_shared_bytes or workgroup_size().) A violation is a plugin bug: INTERNAL.
void check_program_limits(const Program& p, const Limits& L) {
    GLint blocks = 0;
    glGetProgramInterfaceiv(p.id, GL_SHADER_STORAGE_BLOCK, GL_ACTIVE_RESOURCES, &blocks);
    if (blocks > L.max_compute_ssbo_blocks)
        fail(TGL_ERROR_INTERNAL, "compute program %s uses %d shader storage blocks; this device allows %d%s", p.label.c_str(),
             blocks, L.max_compute_ssbo_blocks, L.minimum ? " (TGL_GLES_LIMITS=minimum)" : "");
    for (GLint i = 0; i < blocks; ++i) {
        const GLenum prop = GL_BUFFER_BINDING;
        GLint binding = 0;
        glGetProgramResourceiv(p.id, GL_SHADER_STORAGE_BLOCK, GLuint(i), 1, &prop, 1, nullptr, &binding);
        if (binding >= L.max_ssbo_bindings)
            fail(TGL_ERROR_INTERNAL, "compute program %s uses SSBO binding point %d; this device has %d%s", p.label.c_str(),
                 binding, L.max_ssbo_bindings, L.minimum ? " (TGL_GLES_LIMITS=minimum)" : "");
    }
    GLint size[3] = {0, 0, 0};
    glGetProgramiv(p.id, GL_COMPUTE_WORK_GROUP_SIZE, size);
    if (size[0] > L.max_size[0] || size[1] > L.max_size[1] || size[2] > L.max_size[2] ||
        int64_t(size[0]) * size[1] * size[2] > L.max_invocations)
        fail(TGL_ERROR_INTERNAL, "compute program %s has workgroups of %d x %d x %d; this device allows %d x %d x %d and %d "
             "invocations%s", p.label.c_str(), size[0], size[1], size[2], L.max_size[0], L.max_size[1], L.max_size[2],
             L.max_invocations, L.minimum ? " (TGL_GLES_LIMITS=minimum)" : "");
    int components = 0;
    for (const auto& u : p.uniforms) components += uniform_components(u.second.type) * u.second.size;
    if (L.max_compute_uniform_components > 0 && components > L.max_compute_uniform_components)
        fail(TGL_ERROR_INTERNAL, "compute program %s uses %d uniform components; this device allows %d%s", p.label.c_str(),
             components, L.max_compute_uniform_components, L.minimum ? " (TGL_GLES_LIMITS=minimum)" : "");
}

}  // namespace

ProgramCache::ProgramCache() : debug_(debug_enabled()) {
    if (const char* d = ::secure_getenv("TGL_CACHE_DIR")) {
        if (*d && *d != '/')
            fail(TGL_ERROR_INVALID_ARGUMENT, "TGL_CACHE_DIR=%s: expected an absolute path (starting with '/'), or the "
                 "empty string for no program cache", d);
        dir_ = d;  // "" disables
    } else if (const char* x = ::secure_getenv("XDG_CACHE_HOME"); x && *x == '/') {
        dir_ = std::string(x) + "/tensorgl";
    } else if (const char* h = ::secure_getenv("HOME"); h && *h == '/') {
        dir_ = std::string(h) + "/.cache/tensorgl";
    }
    while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

ProgramCache::~ProgramCache() {
    if (dir_fd_ >= 0) close(dir_fd_);
}

void ProgramCache::disable(const std::string& why) {
    if (debug_) std::fprintf(stderr, "tensorgl-gles: program cache disabled for this device: %s\n", why.c_str());
    if (dir_fd_ >= 0) close(dir_fd_);
    dir_fd_ = -1;
}

void ProgramCache::bind_driver() {
    if (dir_.empty()) return;
    GLint formats = 0;
    glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
    if (formats <= 0) return disable("the driver offers no program binary formats");
    auto str = [](GLenum e) {
        const GLubyte* s = glGetString(e);
        return std::string(s ? reinterpret_cast<const char*>(s) : "?");
    };
    driver_ = "tensorgl-gles program cache 2\nrenderer " + str(GL_RENDERER) + "\nvendor " + str(GL_VENDOR) +
              "\nversion " + str(GL_VERSION) + "\nglsl " + str(GL_SHADING_LANGUAGE_VERSION) + "\n";
    if (!make_dirs(dir_)) return disable(dir_ + " is not a directory and cannot be created");
    dir_fd_ = open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd_ < 0) return disable(format("%s cannot be opened (%s)", dir_.c_str(), std::strerror(errno)));
    struct stat st;
    if (fstat(dir_fd_, &st) != 0) return disable(format("%s cannot be examined (%s)", dir_.c_str(), std::strerror(errno)));
    const std::string why = untrusted_because(st);
    if (!why.empty()) return disable(dir_ + " is " + why);
}

void ProgramCache::tag_source(ShaderSource& source) {
    source.identity = identity_of(source.text);
    source.text += "\n// The program's identity (program_cache.h).\nlayout(std140) uniform " + source.identity +
                   " { uint unused; } tgl_program_identity;\n";
}

void ProgramCache::key_digest(const ShaderSource& source, uint8_t out[32]) const {
    const std::string key = driver_ + "source\n" + source.text;
    sha256(key.data(), key.size(), out);
}

Program ProgramCache::load(const ShaderSource& source, ProgramCacheStats& stats) {
    if (!enabled()) return {};
    using Clock = std::chrono::steady_clock;
    const Clock::time_point start = Clock::now();
    uint8_t key[32], digest[32];
    key_digest(source, key);
    const std::string name = entry_name(key);
    std::vector<uint8_t> file;
    std::string why;
    auto reject = [&](const std::string& reason) {
        stats.rejected.fetch_add(1, std::memory_order_relaxed);
        if (debug_)
            std::fprintf(stderr, "tensorgl-gles: program cache entry %s/%s of %s rejected (%s); compiling from source\n",
                         dir_.c_str(), name.c_str(), source.label.c_str(), reason.c_str());
        return Program{};
    };
    switch (read_entry(dir_fd_, name, file, why)) {
    case ReadResult::Missing: return {};
    case ReadResult::Rejected: return reject(why);
    case ReadResult::Read: break;
    }
    if (file.size() < sizeof(Header)) return reject("shorter than its header");
    Header h;
    std::memcpy(&h, file.data(), sizeof h);
    if (std::memcmp(h.magic, kMagic, 8) != 0 || h.format_version != kFormatVersion)
        return reject("not a program cache entry of this format");
    if (h.payload_len != file.size() - sizeof(Header)) return reject("its length does not match its header");
    if (std::memcmp(h.key, key, 32) != 0) return reject("made for another program or driver");
    const uint8_t* payload = file.data() + sizeof(Header);
    entry_digest(h, payload, digest);
    if (std::memcmp(h.digest, digest, 32) != 0) return reject("its digest does not match its contents");
    const Clock::time_point verified = Clock::now();
    GLuint program = glCreateProgram();
    if (!program) return reject("glCreateProgram failed");
    glProgramBinary(program, GLenum(h.binary_format), payload, GLsizei(h.payload_len));
    GLint ok = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    const Clock::time_point linked = Clock::now();
    while (glGetError() != GL_NO_ERROR) {
        ok = GL_FALSE;  // e.g. GL_INVALID_ENUM for a format this driver no longer takes
    }
    if (!ok) {
        glDeleteProgram(program);
        return reject("the driver refused the binary");
    }
    if (!has_identity(program, source.identity)) {
        glDeleteProgram(program);
        return reject("the binary is another program's: it lacks this source's identity block");
    }
    stats.hits.fetch_add(1, std::memory_order_relaxed);
    Program loaded = introspect_program(program, source.label);
    if (debug_) {
        auto ms = [](Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
        std::fprintf(stderr, "tensorgl-gles: program cache entry of %s, %zu bytes: read and verified %.1f, "
                     "glProgramBinary %.1f, identity and introspection %.1f ms\n", source.label.c_str(), file.size(),
                     ms(start, verified), ms(verified, linked), ms(linked, Clock::now()));
    }
    return loaded;
}

void ProgramCache::store(const ShaderSource& source, const Program& program, ProgramCacheStats& stats) {
    if (!enabled()) return;
    if (!has_identity(program.id, source.identity)) {
        if (debug_)
            std::fprintf(stderr, "tensorgl-gles: %s not cached: the driver dropped its identity block, so a cached "
                         "binary could not be verified\n", source.label.c_str());
        return;
    }
    GLint len = 0;
    glGetProgramiv(program.id, GL_PROGRAM_BINARY_LENGTH, &len);
    if (len <= 0 || uint64_t(len) > kMaxEntryBytes - sizeof(Header)) return;
    std::vector<uint8_t> file(sizeof(Header) + size_t(len));
    GLsizei got = 0;
    GLenum format = 0;
    glGetProgramBinary(program.id, len, &got, &format, file.data() + sizeof(Header));
    if (glGetError() != GL_NO_ERROR || got <= 0 || got > len) return;
    file.resize(sizeof(Header) + size_t(got));
    Header h;
    std::memcpy(h.magic, kMagic, 8);
    h.format_version = kFormatVersion;
    h.binary_format = uint32_t(format);
    h.payload_len = uint64_t(got);
    key_digest(source, h.key);
    entry_digest(h, file.data() + sizeof(Header), h.digest);
    std::memcpy(file.data(), &h, sizeof h);

    const std::string final_name = entry_name(h.key);
    // Unique per process and thread: concurrent writers of one entry each rename a whole file.
    char tmp_name[96];
    std::snprintf(tmp_name, sizeof tmp_name, ".tmp-%ld-%zx-%llx.glbin", long(getpid()),
                  std::hash<std::thread::id>()(std::this_thread::get_id()),
                  (unsigned long long)std::chrono::steady_clock::now().time_since_epoch().count());
    int fd = openat(dir_fd_, tmp_name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return;  // unwritable: no cache
    size_t put = 0;
    while (put < file.size()) {
        ssize_t n = write(fd, file.data() + put, file.size() - put);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        put += size_t(n);
    }
    bool ok = put == file.size();
    ok = close(fd) == 0 && ok;
    // rename replaces whatever had the entry's name (a rejected file, FIFO or symlink) itself.
    if (!ok || renameat(dir_fd_, tmp_name, dir_fd_, final_name.c_str()) != 0) {
        unlinkat(dir_fd_, tmp_name, 0);
        return;
    }
    stats.writes.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<const Program> ProgramRegistry::get(GlThread& gl, FaultHooks* hooks, const std::string& file,
                                                    const Defines& defines) {
    // Fast path (every op): the variant (file + defines) was seen before; found by a hash of its
    // parts and compared part by part, with no string built. The programs themselves are keyed by
    // their full source text, so two variants that expand to the same source share one program.
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the parts, each followed by a separator
    auto mix = [&h](const std::string& s) {
        for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
        h = (h ^ 0xffu) * 1099511628211ull;
    };
    mix(file);
    for (const auto& d : defines) {
        mix(d.first);
        mix(d.second);
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto range = variants_.equal_range(h);
        for (auto it = range.first; it != range.second; ++it)
            if (it->second.file == file && it->second.defines == defines) return it->second.program;
    }
    ShaderSource src = build_shader_source(file, defines);
    ProgramCache::tag_source(src);
    std::shared_ptr<const Program> result;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = programs_.find(src.text);
        if (it != programs_.end()) result = it->second;
    }
    if (!result) {
        gl.call("compiling a compute shader", [&] {
            {
                // Another host thread may have compiled it while this call waited in the queue.
                std::lock_guard<std::mutex> lock(mutex_);
                auto it = programs_.find(src.text);
                if (it != programs_.end()) {
                    result = it->second;
                    return;
                }
            }
            std::shared_ptr<Program> p;
            bool fresh = true;  // compiled here (not from the disk cache)
            double ms = 0;      // the compile (or load), for TGL_GLES_DEBUG's note
            if (hooks && hooks->compile.exchange(false)) {
                ShaderSource bad = src;  // TGL_GLES_TEST_FAULT=compile: the driver rejects this variant
                bad.text += "#line 1 0\nthis is not GLSL (injected by TGL_GLES_TEST_FAULT=compile);\n";
                bad.label += " (with a syntax error injected by TGL_GLES_TEST_FAULT=compile)";
                p = std::make_shared<Program>(compile_program(bad));
            } else {
                const auto t0 = std::chrono::steady_clock::now();
                Program cached = disk_.load(src, stats_);
                fresh = cached.id == 0;
                if (fresh) stats_.misses.fetch_add(1, std::memory_order_relaxed);
                p = std::make_shared<Program>(fresh ? compile_program(src) : std::move(cached));
                ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            }
            p->declared = declared_uniforms(src.text);
            try {
                check_program_limits(*p, gl.limits());
            } catch (...) {
                glDeleteProgram(p->id);
                throw;
            }
            if (fresh) disk_.store(src, *p, stats_);
            if (debug_enabled())
                std::fprintf(stderr, "tensorgl-gles: %s %s in %.1f ms\n", fresh ? "compiled" : "loaded from the program cache",
                             src.label.c_str(), ms);
            std::lock_guard<std::mutex> lock(mutex_);
            programs_.emplace(src.text, p);
            result = p;
        });
    }
    std::lock_guard<std::mutex> lock(mutex_);
    auto range = variants_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it)
        if (it->second.file == file && it->second.defines == defines) return it->second.program;
    variants_.emplace(h, Variant{file, defines, result});
    return result;
}

}  // namespace gles
}  // namespace tgl
