// On-disk cache of linked program binaries (glGetProgramBinary / glProgramBinary, core in
// OpenGL ES 3.0), so that a process does not compile the shaders an earlier one compiled.
//
// Location: $TGL_CACHE_DIR, else $XDG_CACHE_HOME/tensorgl, else $HOME/.cache/tensorgl (read with
// secure_getenv; a relative XDG_CACHE_HOME or HOME is ignored, as the XDG spec says).
// TGL_CACHE_DIR set to the empty string disables the cache; a relative TGL_CACHE_DIR is malformed
// and fails device_open with TGL_ERROR_INVALID_ARGUMENT, as every malformed TGL_* value does.
//
// The directory and its files are untrusted input:
// - The directory (created 0700 where missing) is used only if, opened, it is a directory owned by
//   the effective user and not writable by group or others; otherwise the cache is disabled for
//   that device (TGL_GLES_DEBUG says why). Entries are then opened relative to that descriptor.
// - An entry is read only if, opened with O_NOFOLLOW | O_NONBLOCK (a symlink or a FIFO cannot
//   redirect or block the read), it is a regular file owned by the effective user, not writable
//   by group or others, and at most kMaxEntryBytes long. Anything else is a rejected entry.
// - One file per program, named by the SHA-256 of its key: the driver's vendor, renderer, version
//   and shading-language strings and the full variant source (defines and every included file).
//   A file holds a header (magic, format version, binary format, payload length, the key's hash)
//   and the SHA-256 of the header and payload together, so that a truncated, corrupt, renamed,
//   stale or foreign entry is rejected before the driver sees it.
// - A digest stops accidents, not a writer who recomputes it. So every program's source carries
//   its identity (tag_source): an otherwise unused std140 uniform block named after the SHA-256 of
//   the source, which stays active (GLSL ES 3.10, 4.4.5: std140 blocks are active even when
//   unreferenced). After glProgramBinary the loaded program must expose exactly that block name:
//   one glGetProgramResourceIndex, which catches another program's binary stored under this key
//   (same interface or not: exp's and sigmoid's are the same). A driver that drops the block anyway
//   gets no entries written (nothing could be verified).
// A rejected entry is a miss: the program is compiled from source and the entry replaced (written
// to a temporary file, created 0600 with O_EXCL | O_NOFOLLOW, then renamed over it, so concurrent
// processes and threads see either nothing or a whole entry). An unwritable directory means no
// writes, silently. The cache does not defend against the same user (who can replace the plugin).
#pragma once

#include "shaders.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tgl {
namespace gles {

class GlThread;
struct FaultHooks;

// Counters of one device index (shared by its open devices; exposed as device properties).
struct ProgramCacheStats {
    std::atomic<uint64_t> hits{0};    // programs loaded from disk
    std::atomic<uint64_t> misses{0};  // programs compiled (no entry, or a bad one)
    std::atomic<uint64_t> writes{0};  // entries written
    std::atomic<uint64_t> rejected{0};  // entries found but unusable (corrupt, stale, foreign, unsafe, refused)
};

class ProgramCache {
public:
    // The largest entry read (header + binary); a larger file is rejected unread. (The largest
    // binary of the conformance suite's attention, conv and matmul programs on llvmpipe: 45 KB.)
    static constexpr uint64_t kMaxEntryBytes = uint64_t(32) << 20;

    // Reads the location from the environment (device open): throws TGL_ERROR_INVALID_ARGUMENT for
    // a relative TGL_CACHE_DIR. Disabled when it resolves to nothing.
    ProgramCache();
    ~ProgramCache();
    ProgramCache(const ProgramCache&) = delete;
    ProgramCache& operator=(const ProgramCache&) = delete;
    bool enabled() const { return dir_fd_ >= 0; }

    // On the GL thread, once the context is current: the driver part of the key, and the directory
    // (created if missing, then checked); disables the cache when either is unusable.
    void bind_driver();

    // Appends the program's identity block to `source` (see above); every cached program has it.
    static void tag_source(ShaderSource& source);

    // On the GL thread: the cached program for `source`, linked, verified and introspected, or {}.
    Program load(const ShaderSource& source, ProgramCacheStats& stats);
    // On the GL thread: stores the binary of a freshly linked `program` (best effort).
    void store(const ShaderSource& source, const Program& program, ProgramCacheStats& stats);

private:
    void key_digest(const ShaderSource& source, uint8_t out[32]) const;  // SHA-256 of driver + source
    void disable(const std::string& why);
    std::string dir_;      // as configured; "" = none
    int dir_fd_ = -1;      // the checked directory (bind_driver); -1 = disabled
    std::string driver_;   // vendor, renderer, version, GLSL version
    bool debug_ = false;   // TGL_GLES_DEBUG: notes on stderr
};


// The programs of one device: every variant (file + defines) built once, on the GL thread: loaded
// from the disk cache (ProgramCache) where it holds a verified binary, else compiled (and stored);
// each checked against the device's limits (a kernel beyond them is a plugin bug: INTERNAL).
// Variants that expand to the same source share one program.
class ProgramRegistry {
public:
    explicit ProgramRegistry(ProgramCacheStats& stats) : stats_(stats) {}
    // On the GL thread, once the context is current (ProgramCache::bind_driver).
    void bind_driver() { disk_.bind_driver(); }
    // The compiled variant of `file` with `defines` (GlesDevice::program): compiled on `gl`'s
    // thread on first use while the caller waits, so that a compile error is thrown here.
    // `hooks` (may be null): TGL_GLES_TEST_FAULT=compile injects a syntax error into the next one.
    std::shared_ptr<const Program> get(GlThread& gl, FaultHooks* hooks, const std::string& file, const Defines& defines);

private:
    ProgramCache disk_;
    ProgramCacheStats& stats_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::shared_ptr<const Program>> programs_;  // by full source
    struct Variant {
        std::string file;
        Defines defines;
        std::shared_ptr<const Program> program;
    };
    std::unordered_multimap<uint64_t, Variant> variants_;  // by a hash of file + defines
};

}  // namespace gles
}  // namespace tgl
