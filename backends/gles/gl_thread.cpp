#include "gl_thread.h"

#include "status.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <future>
#include <new>
#include <vector>


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

const char* reset_name(GLenum r) {
    switch (r) {
    case GL_GUILTY_CONTEXT_RESET: return "GL_GUILTY_CONTEXT_RESET";
    case GL_INNOCENT_CONTEXT_RESET: return "GL_INNOCENT_CONTEXT_RESET";
    case GL_UNKNOWN_CONTEXT_RESET: return "GL_UNKNOWN_CONTEXT_RESET";
    default: return "unknown reset status";
    }
}

// A spin-wait hint to the core (no system call).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#else
    std::this_thread::yield();
#endif
}

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// How often a waiting host thread looks at the GL thread's progress.
std::chrono::milliseconds poll_interval(uint32_t timeout_ms) {
    return std::chrono::milliseconds(std::max<uint32_t>(1, std::min<uint32_t>(timeout_ms / 4, 100)));
}

// A detached GL thread runs the plugin's code until the driver returns: keep the plugin mapped
// (RTLD_NODELETE on the already loaded object; the extra reference is never dropped).
void pin_plugin() {
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&pin_plugin), &info) && info.dli_fname)
        dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
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

GlThread::GlThread(const EglTarget& target, std::shared_ptr<GlThreadCounters> counters)
    : counters_(std::move(counters)) {
    if (process_exiting()) fail(TGL_ERROR_DEVICE_UNAVAILABLE, "the process is exiting: no new device can be opened");
    std::promise<void> started;
    std::future<void> ready = started.get_future();
    thread_ = start_context_thread(target, [this, target, &started](EglContext adopted) {
        gl_id_ = std::this_thread::get_id();
        // Named so that a person (top -H, gdb) and the thread tests can tell it from Mesa's threads.
        pthread_setname_np(pthread_self(), kThreadName);
        try {
            context_ = open_context(target, adopted);
            limits_ = query_limits();
            reset_query_ = epoxy_gl_version() >= 32 || epoxy_has_gl_extension("GL_KHR_robustness") ||
                           epoxy_has_gl_extension("GL_EXT_robustness");
        } catch (...) {
            destroy_context(context_);
            started.set_exception(std::current_exception());
            return;
        }
        started.set_value();
        run(target);
        std::shared_ptr<GlThread> keep;  // when detached, this object dies with `keep`, last
        {
            std::lock_guard<std::mutex> lock(mutex_);
            exited_ = true;
            keep = std::move(self_);
            exited_cv_.notify_all();
        }
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
    std::deque<Task>& batch = batch_;  // taken from the queue all at once: one lock per batch, not per task
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(mutex_);
            if (queue_.empty() && unflushed && !stopping_) {
                // The host has nothing more for now: hand what was issued to the GPU, so that it
                // runs while the host is busy elsewhere (no wait; errors surface like any other).
                // Then poll for more work a little before sleeping: a host queueing op after op
                // finds this thread awake and pays no wake-up system call per op (several
                // microseconds each on a virtual machine).
                const uint64_t seen = posted_.load(std::memory_order_acquire);
                lock.unlock();
                glFlush();
                unflushed = false;
                const int64_t until = now_ns() + poll_ns_.load(std::memory_order_relaxed);
                while (posted_.load(std::memory_order_acquire) == seen && now_ns() < until) cpu_relax();
                lock.lock();
            }
            sleeping_ = true;
            wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
            sleeping_ = false;
            if (queue_.empty()) break;  // stopping, and everything queued has run
            batch.swap(queue_);
        }
        unflushed = true;
        for (; !batch.empty(); batch.pop_front()) {
            Task& task = batch.front();
            if (lost()) continue;  // a lost context runs nothing more; the task is dropped (a caller sees why)
            task_what_ = task.what;
            task_start_ns_ = now_ns();
            try {
                task.fn();
                check_gl(task.what);
            } catch (const Error& e) {
                record_error(e.status(), task.what, "", e.what());
            } catch (const std::bad_alloc&) {
                record_error(TGL_ERROR_RESOURCE_EXHAUSTED, task.what, "", "out of host memory");
            } catch (const std::exception& e) {
                record_error(TGL_ERROR_INTERNAL, task.what, "internal error: ", e.what());
            } catch (...) {
                record_error(TGL_ERROR_INTERNAL, task.what, "", "internal error (unknown exception)");
            }
            if (counters_ && task.counted) {
                counters_->tasks.fetch_add(1, std::memory_order_relaxed);
                counters_->busy_ns.fetch_add(now_ns() - task_start_ns_, std::memory_order_relaxed);
            }
            if (debug_) {  // the slow tasks (a first op's program load, first dispatch, read)
                const int64_t ns = now_ns() - task_start_ns_;
                if (ns >= kDebugSlowTaskNs)
                    std::fprintf(stderr, "tensorgl-gles: GL thread: '%s' ran %.2f ms\n", task.what, double(ns) * 1e-6);
            }
            task_start_ns_ = 0;
            // The task (and the buffers it captured) is released by pop_front, outside the lock: a
            // buffer destructor deletes its GL name directly since this is the GL thread.
        }
    }
    // Timed like a task: on a GPU that runs dispatches asynchronously, destroying the context waits
    // for a runaway dispatch, and shutdown() must be able to give up on it after the limit too.
    task_what_ = "destroying the GL context";
    task_start_ns_ = now_ns();
    destroy_context(context_);
    task_start_ns_ = 0;
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

void GlThread::record_error(tgl_status status, const char* what, const char* prefix, const char* detail) noexcept {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (has_pending_) return;  // the first error is the informative one
    has_pending_ = true;
    pending_status_ = status;
    pending_what_ = what;
    try {
        pending_message_.assign(what).append(": ").append(prefix).append(detail);
    } catch (...) {
        pending_message_.clear();
    }
}

void GlThread::throw_if_lost() {
    if (!lost()) return;  // (every post asks: no lock on the way)
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (lost_) fail(TGL_ERROR_DEVICE_UNAVAILABLE, "device lost: %s", lost_message_.c_str());
}

void GlThread::raise_pending() {
    std::unique_lock<std::mutex> lock(error_mutex_);
    if (has_pending_) {
        has_pending_ = false;
        tgl_status s = pending_status_;
        std::string m = std::move(pending_message_);
        const char* what = pending_what_;
        lock.unlock();
        if (m.empty()) fail(s, "an earlier queued operation failed: %s: (no host memory was left for its message)", what);
        fail(s, "an earlier queued operation failed: %s", m.c_str());
    }
    if (lost_) fail(TGL_ERROR_DEVICE_UNAVAILABLE, "device lost: %s", lost_message_.c_str());
}

void GlThread::post(const char* what, std::function<void()> fn) {
    // Built outside the lock: should it be destroyed here (closed device, push_back failing), the
    // buffers it holds are released without the lock (their destructors queue deletions).
    enqueue(Task{what, std::move(fn), true});
}

void GlThread::enqueue(Task task) {
    const char* what = task.what;
    throw_if_lost();
    bool sleeping;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: the device is closed", what);
        queue_.push_back(std::move(task));
        posted_.fetch_add(1, std::memory_order_release);
        sleeping = sleeping_;
    }
    // A GL thread that is not asleep finds the task when it next looks at the queue (under the
    // lock): no wake-up system call per op while it is busy.
    if (sleeping) wake_.notify_one();
}

void GlThread::call(const char* what, const std::function<void()>& fn) {
    if (on_gl_thread()) fail(TGL_ERROR_INTERNAL, "%s: GlThread::call from the GL thread itself", what);
    // The task owns the promise (a dropped task breaks it) and shares `phase` with this caller:
    // 0 queued, 1 running, 2 abandoned by the caller (then `fn`, on the caller's stack, is gone).
    // The outcome travels as a status and a copied message, not as an exception_ptr: the exception
    // object would be shared by both threads, and the GL thread's last release of it would race
    // (for TSan, whose view of libstdc++'s reference counts is blind) with this thread's handler.
    struct Outcome {
        tgl_status status = TGL_OK;
        std::string message;
    };
    auto done = std::make_shared<std::promise<Outcome>>();
    auto phase = std::make_shared<std::atomic<int>>(0);
    std::future<Outcome> result = done->get_future();
    enqueue(Task{what, [this, what, &fn, done, phase] {
        int queued = 0;
        if (!phase->compare_exchange_strong(queued, 1)) return;
        // Copying a message may itself run out of memory: the status is set first, and an empty
        // message is worded by the caller.
        Outcome out;
        try {
            fn();
            check_gl(what);
        } catch (const Error& e) {
            out.status = e.status();
            try {
                out.message = e.what();
            } catch (...) {
            }
        } catch (const std::bad_alloc&) {
            out.status = TGL_ERROR_RESOURCE_EXHAUSTED;
        } catch (const std::exception& e) {
            out.status = TGL_ERROR_INTERNAL;
            try {
                out.message = std::string(what) + ": internal error: " + e.what();
            } catch (...) {
            }
        } catch (...) {
            out.status = TGL_ERROR_INTERNAL;
        }
        done->set_value(std::move(out));
    }, false});
    for (uint32_t limit; (limit = timeout_ms_) != 0;) {
        if (result.wait_for(poll_interval(limit)) == std::future_status::ready) break;
        std::string stuck = overdue();
        int queued = 0;
        // Once this call's own work runs, wait for it: its waits for the GPU are bounded.
        if (stuck.empty() || !phase->compare_exchange_strong(queued, 2)) continue;
        mark_lost(stuck);
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: device lost: %s", what, stuck.c_str());
    }
    Outcome out;
    try {
        out = result.get();
    } catch (const std::future_error&) {  // dropped unrun: lost, or closed meanwhile
        throw_if_lost();
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: the device is closed", what);
    }
    if (out.status == TGL_OK) return;
    if (out.message.empty())
        fail(out.status, "%s: %s", what,
             out.status == TGL_ERROR_RESOURCE_EXHAUSTED ? "out of host memory" : "internal error (unknown exception)");
    throw Error(out.status, std::move(out.message));
}

std::string GlThread::overdue() const {
    uint32_t limit = timeout_ms_;
    int64_t start = task_start_ns_;
    const char* what = task_what_;
    if (!limit || !start) return "";
    int64_t ms = (now_ns() - start) / 1000000;
    if (ms <= int64_t(limit)) return "";
    return format("'%s' has run on the GL thread for %lld ms, past the time limit of %u ms (TGL_GLES_TIMEOUT_MS)",
                  what ? what : "?", (long long)ms, limit);
}

void GlThread::mark_lost(const std::string& message) {
    std::lock_guard<std::mutex> lock(error_mutex_);
    if (lost_) return;
    lost_ = true;
    lost_message_ = message;
}

bool GlThread::lost() { return lost_.load(std::memory_order_acquire); }

void GlThread::check_reset(const char* what, bool simulated) {
    GLenum r = reset_query_ ? glGetGraphicsResetStatus() : GLenum(GL_NO_ERROR);
    if (r == GL_NO_ERROR && !simulated) return;
    if (r == GL_NO_ERROR) r = GL_UNKNOWN_CONTEXT_RESET;
    std::string m = format("%s: the driver reports a GPU reset, %s (0x%04x)%s", what, reset_name(r), unsigned(r),
                           simulated ? " (simulated: TGL_GLES_TEST_FAULT=lose)" : "");
    mark_lost(m);
    fail(TGL_ERROR_DEVICE_UNAVAILABLE, "device lost: %s", m.c_str());
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
    if (thread_.joinable() && !on_gl_thread()) {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!exited_) {
            uint32_t limit = timeout_ms_;
            if (!limit) {
                exited_cv_.wait(lock, [&] { return exited_; });
                break;
            }
            exited_cv_.wait_for(lock, poll_interval(limit));
            std::string stuck = exited_ ? std::string() : overdue();
            std::shared_ptr<GlThread> self = weak_from_this().lock();
            if (stuck.empty() || !self) continue;
            // Past the limit: let the thread finish on its own (see gl_thread.h).
            self_ = std::move(self);
            thread_.detach();
            joined_ = true;
            lock.unlock();
            pin_plugin();
            mark_lost(stuck);
            return;
        }
        lock.unlock();
        thread_.join();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    joined_ = true;
}

void GlThread::delete_buffer(GLuint name) {
    if (!name) return;
    if (on_gl_thread()) {
        glDeleteBuffers(1, &name);
        ++deletions_;
        return;
    }
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (stopping_) return;
        try {
            queue_.push_back(Task{"glDeleteBuffers", [this, name] {
                                      glDeleteBuffers(1, &name);
                                      ++deletions_;
                                  }, true});
        } catch (...) {
            return;  // (called from destructors) no memory to queue it: the name goes with the context
        }
        posted_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_one();
}

}  // namespace gles
}  // namespace tgl
