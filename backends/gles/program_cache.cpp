#include "program_cache.h"

#include <fcntl.h>
#include <pthread.h>
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

// ---------------------------------------------------------------------------------------------
// SHA-256 (FIPS 180-4).

namespace {

const uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

inline uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void sha256_block(uint32_t h[8], const uint8_t* p) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
        w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
        uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; ++i) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[i] + w[i];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += k;
}

}  // namespace

void sha256(const void* data, size_t len, uint8_t out[32]) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    const uint8_t* p = static_cast<const uint8_t*>(data);
    size_t full = len / 64;
    for (size_t i = 0; i < full; ++i) sha256_block(h, p + 64 * i);
    uint8_t tail[128] = {};
    size_t rest = len - 64 * full;
    std::memcpy(tail, p + 64 * full, rest);
    tail[rest] = 0x80;
    size_t tail_len = rest + 9 <= 64 ? 64 : 128;
    uint64_t bits = uint64_t(len) * 8;
    for (int i = 0; i < 8; ++i) tail[tail_len - 1 - i] = uint8_t(bits >> (8 * i));
    for (size_t i = 0; i < tail_len; i += 64) sha256_block(h, tail + i);
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 4; ++j) out[4 * i + j] = uint8_t(h[i] >> (24 - 8 * j));
}

namespace {
std::string to_hex(const uint8_t d[32]) {
    static const char* hex = "0123456789abcdef";
    std::string s(64, '0');
    for (int i = 0; i < 32; ++i) {
        s[2 * i] = hex[d[i] >> 4];
        s[2 * i + 1] = hex[d[i] & 15];
    }
    return s;
}
}  // namespace

std::string sha256_hex(const std::string& data) {
    uint8_t d[32];
    sha256(data.data(), data.size(), d);
    return to_hex(d);
}

// ---------------------------------------------------------------------------------------------
// The cache.

namespace {

// File layout (little-endian host order; a file from another architecture fails the key check):
//   char magic[8] = "TGLPBIN1"; uint32 format_version; uint32 binary_format; uint64 payload_len;
//   uint8 key[32] (SHA-256 of the key string); uint8 payload_sha[32]; payload.
const char kMagic[8] = {'T', 'G', 'L', 'P', 'B', 'I', 'N', '1'};
const uint32_t kFormatVersion = 1;
struct Header {
    char magic[8];
    uint32_t format_version;
    uint32_t binary_format;
    uint64_t payload_len;
    uint8_t key[32];
    uint8_t payload_sha[32];
};
static_assert(sizeof(Header) == 88, "cache header layout");
const uint64_t kMaxPayload = uint64_t(256) << 20;  // a larger "binary" is not one of ours

// mkdir -p with mode 0700 for the parts it creates; false when the directory is not usable.
bool make_dirs(const std::string& dir) {
    struct stat st;
    if (stat(dir.c_str(), &st) == 0) return S_ISDIR(st.st_mode);
    size_t slash = dir.find_last_of('/');
    if (slash != std::string::npos && slash > 0 && !make_dirs(dir.substr(0, slash))) return false;
    if (mkdir(dir.c_str(), 0700) == 0) return true;
    return errno == EEXIST && stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool read_file(const std::string& path, std::vector<uint8_t>& out) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct stat st;
    bool ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && uint64_t(st.st_size) <= kMaxPayload + sizeof(Header);
    if (ok) {
        out.resize(size_t(st.st_size));
        size_t got = 0;
        while (got < out.size()) {
            ssize_t n = read(fd, out.data() + got, out.size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += size_t(n);
        }
        ok = got == out.size();
    }
    close(fd);
    return ok;
}

}  // namespace

ProgramCache::ProgramCache() {
    if (const char* d = ::secure_getenv("TGL_CACHE_DIR")) {
        dir_ = d;  // "" disables
    } else if (const char* x = ::secure_getenv("XDG_CACHE_HOME"); x && *x == '/') {
        dir_ = std::string(x) + "/tensorgl";
    } else if (const char* h = ::secure_getenv("HOME"); h && *h == '/') {
        dir_ = std::string(h) + "/.cache/tensorgl";
    }
    while (dir_.size() > 1 && dir_.back() == '/') dir_.pop_back();
}

void ProgramCache::bind_driver() {
    if (!enabled()) return;
    GLint formats = 0;
    glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
    if (formats <= 0) {
        dir_.clear();
        return;
    }
    auto str = [](GLenum e) {
        const GLubyte* s = glGetString(e);
        return std::string(s ? reinterpret_cast<const char*>(s) : "?");
    };
    driver_ = "tensorgl-gles program cache 1\nrenderer " + str(GL_RENDERER) + "\nvendor " + str(GL_VENDOR) +
              "\nversion " + str(GL_VERSION) + "\nglsl " + str(GL_SHADING_LANGUAGE_VERSION) + "\n";
}

void ProgramCache::key_digest(const ShaderSource& source, uint8_t out[32]) const {
    const std::string key = driver_ + "source\n" + source.text;
    sha256(key.data(), key.size(), out);
}

std::string ProgramCache::key_hash(const ShaderSource& source) const {
    uint8_t d[32];
    key_digest(source, d);
    return to_hex(d);
}

std::string ProgramCache::path_for(const ShaderSource& source) const {
    return dir_ + "/" + key_hash(source) + ".glbin";
}

Program ProgramCache::load(const ShaderSource& source, ProgramCacheStats& stats) {
    if (!enabled()) return {};
    uint8_t key[32], sha[32];
    key_digest(source, key);
    std::vector<uint8_t> file;
    if (!read_file(dir_ + "/" + to_hex(key) + ".glbin", file)) return {};
    auto reject = [&] {
        stats.rejected.fetch_add(1, std::memory_order_relaxed);
        return Program{};
    };
    if (file.size() < sizeof(Header)) return reject();
    Header h;
    std::memcpy(&h, file.data(), sizeof h);
    if (std::memcmp(h.magic, kMagic, 8) != 0 || h.format_version != kFormatVersion ||
        h.payload_len != file.size() - sizeof(Header) || std::memcmp(h.key, key, 32) != 0)
        return reject();
    const uint8_t* payload = file.data() + sizeof(Header);
    sha256(payload, size_t(h.payload_len), sha);
    if (std::memcmp(h.payload_sha, sha, 32) != 0) return reject();
    GLuint program = glCreateProgram();
    if (!program) return reject();
    glProgramBinary(program, GLenum(h.binary_format), payload, GLsizei(h.payload_len));
    GLint ok = GL_FALSE;
    glGetProgramiv(program, GL_LINK_STATUS, &ok);
    while (glGetError() != GL_NO_ERROR) {
        ok = GL_FALSE;  // e.g. GL_INVALID_ENUM for a format this driver no longer takes
    }
    if (!ok) {
        glDeleteProgram(program);
        return reject();
    }
    stats.hits.fetch_add(1, std::memory_order_relaxed);
    return introspect_program(program, source.label);
}

void ProgramCache::store(const ShaderSource& source, const Program& program, ProgramCacheStats& stats) {
    if (!enabled()) return;
    GLint len = 0;
    glGetProgramiv(program.id, GL_PROGRAM_BINARY_LENGTH, &len);
    if (len <= 0 || uint64_t(len) > kMaxPayload) return;
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
    sha256(file.data() + sizeof(Header), size_t(got), h.payload_sha);
    std::memcpy(file.data(), &h, sizeof h);

    if (!make_dirs(dir_)) return;
    const std::string final_path = dir_ + "/" + to_hex(h.key) + ".glbin";
    // Unique per process and thread: concurrent writers of one entry each rename a whole file.
    char tmp_name[96];
    std::snprintf(tmp_name, sizeof tmp_name, "/.tmp-%ld-%zx-%llx.glbin", long(getpid()),
                  std::hash<std::thread::id>()(std::this_thread::get_id()),
                  (unsigned long long)std::chrono::steady_clock::now().time_since_epoch().count());
    const std::string tmp = dir_ + tmp_name;
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
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
    if (!ok || rename(tmp.c_str(), final_path.c_str()) != 0) {
        unlink(tmp.c_str());
        return;
    }
    stats.writes.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace gles
}  // namespace tgl
