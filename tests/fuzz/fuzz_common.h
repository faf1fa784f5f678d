// Shared by the libFuzzer targets: loads the plugin named by TGL_FUZZ_PLUGIN (cpu or gles; default
// cpu) through the loader, reads fuzz input bytes, and checks the status oracle that every ABI
// call must meet. An oracle violation prints what happened and aborts (libFuzzer saves the input).
#pragma once

#include <tensorgl/loader.h>

#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace fuzz {

[[noreturn]] inline void die(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    std::fprintf(stderr, "\nFUZZ ORACLE VIOLATION: ");
    std::vfprintf(stderr, fmt, ap);
    std::fprintf(stderr, "\n");
    va_end(ap);
    std::abort();
}

// The plugin's function table (loaded once per process) and its name.
struct Plugin {
    const tgl_plugin_api* api = nullptr;
    const char* name = nullptr;
};

inline const Plugin& plugin() {
    static Plugin p = [] {
        Plugin r;
        const char* name = std::getenv("TGL_FUZZ_PLUGIN");
        if (!name || !*name) name = "cpu";
        tgl_plugin* pl = nullptr;
        tgl_status s = tgl_plugin_load(name, &pl);
        if (s != TGL_OK) {
            std::fprintf(stderr, "fuzz: cannot load plugin '%s': %s: %s\n", name, tgl_status_name(s),
                         tgl_loader_last_error());
            std::exit(2);
        }
        r.api = tgl_plugin_get_api(pl);
        r.name = tgl_plugin_name(pl);
        return r;
    }();
    return p;
}

// Every status a plugin may return (0..19); loader statuses never come from a plugin.
inline bool known_plugin_status(tgl_status s) { return s >= TGL_OK && s <= TGL_ERROR_INDEX_OUT_OF_RANGE; }

// Checks a status returned by `call`: a known code, and after a failure a non-empty message.
inline tgl_status check(tgl_status s, const char* call) {
    if (!known_plugin_status(s)) die("%s returned status %d, not a plugin status", call, int(s));
    if (s != TGL_OK) {
        const char* msg = plugin().api->last_error_message();
        if (!msg) die("%s failed with %s but last_error_message() is NULL", call, tgl_status_name(s));
        if (!*msg) die("%s failed with %s but last_error_message() is empty", call, tgl_status_name(s));
        if (std::strlen(msg) > 4096) die("%s: message longer than 4096 bytes", call);
    }
    return s;
}

// Consumes the fuzz input front to back; past the end every read gives 0.
class Reader {
public:
    Reader(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
    bool empty() const { return p_ >= end_; }
    uint8_t u8() { return p_ < end_ ? *p_++ : 0; }
    uint16_t u16() { return uint16_t(u8() | (u8() << 8)); }
    uint32_t u32() { return uint32_t(u16()) | (uint32_t(u16()) << 16); }
    uint64_t u64() { return uint64_t(u32()) | (uint64_t(u32()) << 32); }
    // An integer in [0, n) (n >= 1).
    uint32_t below(uint32_t n) { return n <= 256 ? u8() % n : u16() % n; }
    // Rare choices are the high values, so that the zeros past the end of a short input decode to
    // the common, well-formed case.
    bool one_in(uint32_t n) { return below(n) == n - 1; }
    void bytes(void* dst, size_t n) {
        uint8_t* d = static_cast<uint8_t*>(dst);
        for (size_t i = 0; i < n; ++i) d[i] = u8();
    }

    // Interesting 64-bit integers: small ones mostly, then the edges.
    int64_t i64() {
        static const int64_t kEdges[] = {0, 1, -1, 2, 3, 4, 7, 8, 9, 16, 255, 256, 1023, 1024, 65535,
                                         65536, INT32_MAX, int64_t(INT32_MAX) + 1, INT32_MIN,
                                         int64_t(1) << 32, int64_t(1) << 40, int64_t(1) << 62,
                                         INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1,
                                         -2, -3, -8, -9, -1024};
        switch (below(4)) {
        case 3: return kEdges[below(sizeof kEdges / sizeof kEdges[0])];
        case 2: return int64_t(u64());
        default: return int64_t(below(12)) - 3;
        }
    }

    // Interesting floats: NaN, infinities, zeros, denormals, huge, small integers.
    float f32() {
        static const float kValues[] = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 2.0f, 1e-5f, 1e30f, -1e30f,
                                        3.4028235e38f, 1e-45f, 1.17549435e-38f, 65504.0f, 65520.0f,
                                        INFINITY, -INFINITY, NAN, -NAN, 20.0f, 0.01f, 1e-7f};
        if (below(4) == 3) {
            float f;
            uint32_t w = u32();
            std::memcpy(&f, &w, 4);
            return f;
        }
        return kValues[below(sizeof kValues / sizeof kValues[0])];
    }

    double f64() {
        static const double kValues[] = {0.0, -0.0, 1.0, -1.0, 0.5, 3.0, 1e300, -1e300, 1e-320,
                                         INFINITY, -INFINITY, NAN, 9.3e18, -9.3e18, 4294967296.0,
                                         2147483648.0, 1e10, 0.1};
        if (below(4) == 3) {
            double f;
            uint64_t w = u64();
            std::memcpy(&f, &w, 8);
            return f;
        }
        return kValues[below(sizeof kValues / sizeof kValues[0])];
    }

private:
    const uint8_t* p_;
    const uint8_t* end_;
};

}  // namespace fuzz
