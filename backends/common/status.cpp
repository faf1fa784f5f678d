#include "status.h"

#include <cstdio>
#include <cstring>
#include <vector>

namespace tgl {

static std::string vformat(const char* fmt, va_list args) {
    va_list copy;
    va_copy(copy, args);
    int n = std::vsnprintf(nullptr, 0, fmt, copy);
    va_end(copy);
    if (n <= 0) return std::string();
    std::vector<char> buf(static_cast<size_t>(n) + 1);
    std::vsnprintf(buf.data(), buf.size(), fmt, args);
    return std::string(buf.data(), static_cast<size_t>(n));
}

std::string format(const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    return s;
}

void fail(tgl_status status, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::string s = vformat(fmt, args);
    va_end(args);
    throw Error(status, std::move(s));
}

static thread_local std::string t_last_error;
// Used instead of t_last_error when the host cannot allocate the message (out of memory).
static thread_local char t_fallback[512];
static thread_local bool t_use_fallback = false;

const char* last_error_message() { return t_use_fallback ? t_fallback : t_last_error.c_str(); }

void set_last_error(const char* function, const char* prefix, const char* message) noexcept {
    const size_t n = std::strlen(function);
    if (n && std::strncmp(message, function, n) == 0 && message[n] == ':' && message[n + 1] == ' ')
        message += n + 2;  // named already: the name is written once, below
    try {
        t_last_error.assign(function).append(function[0] ? ": " : "").append(prefix).append(message);
        t_use_fallback = false;
    } catch (...) {
        std::snprintf(t_fallback, sizeof t_fallback, "%s%s%s%s", function, function[0] ? ": " : "", prefix, message);
        t_use_fallback = true;
    }
}

}  // namespace tgl
