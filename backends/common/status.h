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
// Sets it to "<function>: <prefix><message>" (just prefix + message when function is ""). Never
// throws: when the host is out of memory it is cut to a fixed-size buffer.
void set_last_error(const char* function, const char* prefix, const char* message) noexcept;

// Runs f, mapping any exception to a status and recording its message for this thread. Nothing in
// the handlers allocates before set_last_error, so even std::bad_alloc cannot escape.
template <class F>
tgl_status guard(const char* function, F&& f) noexcept {
    try {
        f();
        set_last_error("", "", "");
        return TGL_OK;
    } catch (const Error& e) {
        set_last_error(function, "", e.what());
        return e.status();
    } catch (const std::bad_alloc&) {
        set_last_error(function, "", "out of host memory");
        return TGL_ERROR_RESOURCE_EXHAUSTED;
    } catch (const std::exception& e) {
        set_last_error(function, "internal error: ", e.what());
        return TGL_ERROR_INTERNAL;
    } catch (...) {
        set_last_error(function, "", "internal error (unknown exception)");
        return TGL_ERROR_INTERNAL;
    }
}

}  // namespace tgl
