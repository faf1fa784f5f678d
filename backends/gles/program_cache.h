// On-disk cache of linked program binaries (glGetProgramBinary / glProgramBinary, core in
// OpenGL ES 3.0), so that a process does not compile the shaders an earlier one compiled.
//
// Location: $TGL_CACHE_DIR, else $XDG_CACHE_HOME/tensorgl, else $HOME/.cache/tensorgl (read with
// secure_getenv). TGL_CACHE_DIR set to the empty string disables the cache. One file per program,
// named by the SHA-256 of its key: the driver's renderer, version and shading-language strings,
// the plugin version and the full variant source (defines and every included file). A file holds
// a header (magic, format version, binary format, lengths), the key's hash and the payload's
// SHA-256: a truncated, corrupt, foreign or stale entry (other driver, other source) is a miss
// (compiled again and rewritten), never a failure. Writes go to a temporary file in the same
// directory and are renamed into place, so concurrent processes and threads see either nothing or
// a whole entry. An unwritable or missing-and-uncreatable directory means no cache, silently.
#pragma once

#include "shaders.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace tgl {
namespace gles {

// SHA-256 of `data` as 32 bytes.
void sha256(const void* data, size_t len, uint8_t out[32]);
std::string sha256_hex(const std::string& data);

// Counters of one device index (shared by its open devices; exposed as device properties).
struct ProgramCacheStats {
    std::atomic<uint64_t> hits{0};    // programs loaded from disk
    std::atomic<uint64_t> misses{0};  // programs compiled (no entry, or a bad one)
    std::atomic<uint64_t> writes{0};  // entries written
    std::atomic<uint64_t> rejected{0};  // entries found but unusable (corrupt, stale, refused by the driver)
};

class ProgramCache {
public:
    // Reads the location from the environment (device open). Disabled when it resolves to nothing.
    ProgramCache();
    bool enabled() const { return !dir_.empty(); }
    const std::string& dir() const { return dir_; }

    // On the GL thread, once the context is current: the driver part of the key; disables the
    // cache when the driver offers no binary formats.
    void bind_driver();

    // On the GL thread: the cached program for `source`, linked and introspected, or {} (id 0).
    Program load(const ShaderSource& source, ProgramCacheStats& stats);
    // On the GL thread: stores the binary of a freshly linked `program` (best effort).
    void store(const ShaderSource& source, const Program& program, ProgramCacheStats& stats);

    // The file of `source` (tests corrupt it).
    std::string path_for(const ShaderSource& source) const;

private:
    void key_digest(const ShaderSource& source, uint8_t out[32]) const;  // SHA-256 of driver + source
    std::string key_hash(const ShaderSource& source) const;               // the same in hex
    std::string dir_;
    std::string driver_;  // renderer, version, GLSL version, plugin version
};

}  // namespace gles
}  // namespace tgl
