// Errors inside a plugin: thrown as tgl::Error, turned into a status + per-thread message at the
// ABI boundary by tgl::guard(). Nothing (no exception, no abort) crosses the C ABI.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdarg>
#include <stdexcept>
#include <string>

namespace tgl {

class Error : public std::runtime_error {
public:
    Error(tgl_status status, std::string message)
        : std::runtime_error(std::move(message)), status_(status) {}
    tgl_status status() const { return status_; }

private:
    tgl_status status_;
};

// printf-style message; throws Error(status, message).
[[noreturn]] void fail(tgl_status status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// The calling thread's last error message ("" after a successful call).
const char* last_error_message();
void set_last_error(const char* message);

// Runs f, mapping any exception to a status and recording its message for this thread.
template <class F>
tgl_status guard(const char* function, F&& f) noexcept {
    try {
        f();
        set_last_error("");
        return TGL_OK;
    } catch (const Error& e) {
        set_last_error((std::string(function) + ": " + e.what()).c_str());
        return e.status();
    } catch (const std::bad_alloc&) {
        set_last_error((std::string(function) + ": out of host memory").c_str());
        return TGL_ERROR_RESOURCE_EXHAUSTED;
    } catch (const std::exception& e) {
        set_last_error((std::string(function) + ": internal error: " + e.what()).c_str());
        return TGL_ERROR_INTERNAL;
    } catch (...) {
        set_last_error((std::string(function) + ": internal error (unknown exception)").c_str());
        return TGL_ERROR_INTERNAL;
    }
}

}  // namespace tgl
