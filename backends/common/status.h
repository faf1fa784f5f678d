// Errors inside a plugin: thrown as tgl::Error, turned into a status + per-thread message at the
// ABI boundary by tgl::guard(). Nothing (no exception, no abort) crosses the C ABI.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdarg>
#include <stdexcept>
#include <string>
#include <system_error>

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

// The message of the calling thread's most recent failing call ("" if none). A successful call
// leaves it as it is (plugin_api.h, last_error_message; the loader does the same).
const char* last_error_message();
// Sets it to "<function>: <prefix><message>" (just prefix + message when function is ""). A
// message that already starts with "<function>: " (work named after the call that runs it, e.g.
// the GL thread's "synchronize") gets the name once, not twice. Never throws: when the host is out
// of memory it is cut to a fixed-size buffer.
void set_last_error(const char* function, const char* prefix, const char* message) noexcept;

// Runs f, mapping any exception to a status and recording its message for this thread. Nothing in
// the handlers allocates before set_last_error, so even std::bad_alloc cannot escape.
template <class F>
tgl_status guard(const char* function, F&& f) noexcept {
    try {
        f();
        return TGL_OK;
    } catch (const Error& e) {
        set_last_error(function, "", e.what());
        return e.status();
    } catch (const std::bad_alloc&) {
        set_last_error(function, "", "out of host memory");
        return TGL_ERROR_RESOURCE_EXHAUSTED;
    } catch (const std::system_error& e) {
        // std::thread's EAGAIN: the process, user or system is at its thread limit.
        if (e.code() == std::errc::resource_unavailable_try_again) {
            set_last_error(function, "out of threads (the process, user or system is at its thread limit): ", e.what());
            return TGL_ERROR_RESOURCE_EXHAUSTED;
        }
        set_last_error(function, "internal error: ", e.what());
        return TGL_ERROR_INTERNAL;
    } catch (const std::exception& e) {
        set_last_error(function, "internal error: ", e.what());
        return TGL_ERROR_INTERNAL;
    } catch (...) {
        set_last_error(function, "", "internal error (unknown exception)");
        return TGL_ERROR_INTERNAL;
    }
}

}  // namespace tgl
