#include "gl_thread.h"

#include "status.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <future>
#include <new>
#include <vector>

#include <pthread.h>

namespace tgl {
namespace gles {

namespace {

const char* gl_error_name(GLenum e) {
    switch (e) {
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    case GL_CONTEXT_LOST: return "GL_CONTEXT_LOST";
    default: return "unknown GL error";
    }
}

// Every live GL thread, for the exit hook. Never destroyed (used during exit).
std::mutex& live_mutex() {
    static std::mutex* m = new std::mutex;
    return *m;
}
std::vector<GlThread*>& live_threads() {
    static std::vector<GlThread*>* v = new std::vector<GlThread*>;
    return *v;
}
bool g_exiting = false;  // guarded by live_mutex()

// At process exit, before the driver's own exit handlers and destructors (registered earlier, so
// run later) take Mesa apart: every GL thread finishes what is queued, destroys its context and is
// joined. Without this, a dispatch still running on a GL thread crashed inside the driver during
// exit (tests/loader/plugins_test.cpp, ProcessExitsWithDevicesOpenAndThreadsBusy). Host threads
// that call in afterwards get TGL_ERROR_DEVICE_UNAVAILABLE.
void stop_all_at_exit() {
    std::lock_guard<std::mutex> lock(live_mutex());  // held: no GlThread is destroyed meanwhile
    g_exiting = true;
    for (GlThread* t : live_threads()) t->shutdown();
}

bool process_exiting() {
    std::lock_guard<std::mutex> lock(live_mutex());
    return g_exiting;
}

// Registers a started thread; false if the process is already exiting.
bool track(GlThread* t) {
    static std::once_flag once;
    // Registered after the first context exists, so after the handlers the driver registers while
    // it loads and creates a context: at exit this one runs before them.
    std::call_once(once, [] { std::atexit(stop_all_at_exit); });
    std::lock_guard<std::mutex> lock(live_mutex());
    if (g_exiting) return false;
    live_threads().push_back(t);
    return true;
}

void untrack(GlThread* t) {
    std::lock_guard<std::mutex> lock(live_mutex());
    auto& v = live_threads();
    v.erase(std::remove(v.begin(), v.end(), t), v.end());
}

}  // namespace

GlThread::GlThread(const EglTarget& target) {
    if (process_exiting()) fail(TGL_ERROR_DEVICE_UNAVAILABLE, "the process is exiting: no new device can be opened");
    std::promise<void> started;
    std::future<void> ready = started.get_future();
    thread_ = std::thread([this, target, &started] {
        gl_id_ = std::this_thread::get_id();
        // Named so that a person (top -H, gdb) and the thread tests can tell it from Mesa's threads.
        pthread_setname_np(pthread_self(), kThreadName);
        try {
            context_ = create_context(target);
            limits_ = query_limits();
        } catch (...) {
            destroy_context(context_);
            started.set_exception(std::current_exception());
            return;
        }
        started.set_value();
        run(target);
    });
    try {
        ready.get();
    } catch (...) {
        thread_.join();
        joined_ = true;
        throw;
    }
    if (!track(this)) {
        shutdown();
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "the process is exiting: no new device can be opened");
    }
}

GlThread::~GlThread() {
    untrack(this);  // first: waits for an exit hook that may be shutting this thread down
    shutdown();
}

void GlThread::run(const EglTarget&) {
    bool unflushed = false;
    for (;;) {
        Task task;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (queue_.empty() && unflushed && !stopping_) {
                // The host has nothing more for now: hand what was issued to the GPU, so that it
                // runs while the host is busy elsewhere (no wait; errors surface like any other).
                lock.unlock();
                glFlush();
                unflushed = false;
                lock.lock();
            }
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            if (queue_.empty()) break;  // stopping, and everything queued has run
            task = std::move(queue_.front());
            queue_.pop_front();
        }
        unflushed = true;
        try {
            task.fn();
            check_gl(task.what);
        } catch (const Error& e) {
            record_error(e.status(), std::string(task.what) + ": " + e.what());
        } catch (const std::bad_alloc&) {
            record_error(TGL_ERROR_RESOURCE_EXHAUSTED, std::string(task.what) + ": out of host memory");
        } catch (const std::exception& e) {
            record_error(TGL_ERROR_INTERNAL, std::string(task.what) + ": internal error: " + e.what());
        } catch (...) {
            record_error(TGL_ERROR_INTERNAL, std::string(task.what) + ": internal error (unknown exception)");
        }
        // The task (and the buffers it captured) is released here, outside the lock: a buffer
        // destructor deletes its GL name directly since this is the GL thread.
    }
    destroy_context(context_);
}

void GlThread::check_gl(const char* what) {
    std::string errors;
    tgl_status status = TGL_ERROR_BACKEND_FAILURE;
    for (int i = 0; i < 8; ++i) {
        GLenum e = glGetError();
        if (e == GL_NO_ERROR) break;
        if (!errors.empty()) errors += ", ";
        errors += format("%s (0x%04x)", gl_error_name(e), unsigned(e));
        if (e == GL_OUT_OF_MEMORY && status != TGL_ERROR_DEVICE_UNAVAILABLE) status = TGL_ERROR_RESOURCE_EXHAUSTED;
        if (e == GL_CONTEXT_LOST) status = TGL_ERROR_DEVICE_UNAVAILABLE;
    }
    if (errors.empty()) return;
    if (status == TGL_ERROR_DEVICE_UNAVAILABLE) {
        std::lock_guard<std::mutex> lock(error_mutex_);
        if (!lost_) {
            lost_ = true;
            lost_message_ = format("the GL context was lost during %s", what);
        }
    }
    fail(status, "the driver reported %s", errors.c_str());
}

void GlThread::record_error(tgl_status status, const std::string& message) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (has_pending_) return;  // the first error is the informative one
    has_pending_ = true;
    pending_status_ = status;
    pending_message_ = message;
}

void GlThread::throw_if_lost() {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (lost_) fail(TGL_ERROR_DEVICE_UNAVAILABLE, "device lost: %s", lost_message_.c_str());
}

void GlThread::raise_pending() {
    std::unique_lock<std::mutex> lock(error_mutex_);
    if (has_pending_) {
        has_pending_ = false;
        tgl_status s = pending_status_;
        std::string m = std::move(pending_message_);
        lock.unlock();
        fail(s, "an earlier queued operation failed: %s", m.c_str());
    }
    if (lost_) fail(TGL_ERROR_DEVICE_UNAVAILABLE, "device lost: %s", lost_message_.c_str());
}

void GlThread::post(const char* what, std::function<void()> fn) {
    throw_if_lost();
    // Built outside the lock: should it be destroyed here (closed device, push_back failing), the
    // buffers it holds are released without the lock (their destructors queue deletions).
    Task task{what, std::move(fn)};
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: the device is closed", what);
        queue_.push_back(std::move(task));
    }
    wake_.notify_one();
}

void GlThread::call(const char* what, const std::function<void()>& fn) {
    if (on_gl_thread()) fail(TGL_ERROR_INTERNAL, "%s: GlThread::call from the GL thread itself", what);
    std::promise<void> done;
    std::future<void> result = done.get_future();
    post(what, [this, what, &fn, &done] {
        try {
            fn();
            check_gl(what);
            done.set_value();
        } catch (...) {
            done.set_exception(std::current_exception());
        }
    });
    result.get();
}

void GlThread::shutdown() {
    // Serialised: device_close and the exit hook may both get here; only one joins.
    std::lock_guard<std::mutex> shutting(shutdown_mutex_);
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (joined_) return;
        stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable() && !on_gl_thread()) thread_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    joined_ = true;
}

void GlThread::delete_buffer(GLuint name) {
    if (!name) return;
    if (on_gl_thread()) {
        glDeleteBuffers(1, &name);
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) return;
        queue_.push_back(Task{"glDeleteBuffers", [name] { glDeleteBuffers(1, &name); }});
    }
    wake_.notify_one();
}

}  // namespace gles
}  // namespace tgl
