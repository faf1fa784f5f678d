// The thread that owns one device's EGL context. Every GL call of the device happens on it; host
// threads hand it work through a mutex-protected FIFO queue.
//   post(): queue and return (ops, uploads, copies, fills). An error it raises, or a GL error it
//           leaves behind, becomes the device's pending error, reported by the next call() that
//           asks for it (synchronize, download).
//   call(): queue, wait until it has run, rethrow its error (alloc, compile, download, sync).
#pragma once

#include "debug_notes.h"
#include "egl_devices.h"

#include <tensorgl/plugin_api.h>

#include <epoxy/gl.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace tgl {
namespace gles {

// Work done on a GL thread: posted tasks run and the steady-clock time spent in them (the host's
// cost of issuing GL commands, which queueing on the caller's thread does not show). Work that a
// caller waits for (call(): synchronize, downloads) is not counted: its time is mostly the GPU's.
struct GlThreadCounters {
    std::atomic<int64_t> tasks{0};
    std::atomic<int64_t> busy_ns{0};
};

class GlThread : public std::enable_shared_from_this<GlThread> {
public:
    // The thread's name (/proc/<pid>/task/<tid>/comm), one per open device.
    static constexpr const char* kThreadName = "tgl-gles-gl";
    // How long the GL thread, out of work, polls for more before it sleeps (by default; see
    // poll_before_sleep).
    static constexpr int64_t kPollBeforeSleepNs = 100000;

    // Starts the thread and creates the context on it; throws Error(DEVICE_UNAVAILABLE).
    explicit GlThread(const EglTarget& target, std::shared_ptr<GlThreadCounters> counters = nullptr);
    ~GlThread();
    GlThread(const GlThread&) = delete;
    GlThread& operator=(const GlThread&) = delete;

    // Limits of this thread's context.
    const Limits& limits() const { return limits_; }

    // `what` names the work in messages; it must be a string literal.
    void post(const char* what, std::function<void()> fn);
    // call() waits while the GL thread makes progress; once one piece of work has run on it for
    // longer than the time limit (configure()), the device is marked lost and call() throws
    // DEVICE_UNAVAILABLE naming that work and the limit (the abandoned work never runs).
    void call(const char* what, const std::function<void()>& fn);

    // Time limit in milliseconds for one piece of GL work (0: none); see test_hooks.h.
    void configure(uint32_t timeout_ms) { timeout_ms_ = timeout_ms; }
    // Sets how long the GL thread polls for more work before sleeping (0: sleeps at once).
    void poll_before_sleep(int64_t ns) { poll_ns_ = ns; }
    uint32_t timeout_ms() const { return timeout_ms_; }

    // Marks the device lost (sticky; the first message is kept). Queued work is dropped from then on.
    void mark_lost(const std::string& message);
    bool lost();
    // On the GL thread, after a wait: throws DEVICE_UNAVAILABLE (and marks the device lost) when
    // glGetGraphicsResetStatus reports a reset, or when `simulated` (TGL_GLES_TEST_FAULT=lose).
    void check_reset(const char* what, bool simulated);

    // Throws the pending error of earlier posted work (and clears it), or DEVICE_UNAVAILABLE once
    // the context was lost (sticky).
    void raise_pending();

    // Runs everything queued, destroys the context and joins the thread. Later posts are refused
    // (DEVICE_UNAVAILABLE) and buffer deletions dropped (the context took its objects with it).
    // Bounded: when the work the thread runs has gone past the time limit, the thread is detached
    // (the device is marked lost; the thread keeps this object alive, drops what is queued and
    // exits when the driver returns; the plugin is pinned in memory so that it cannot be unloaded
    // under it).
    // Safe to call from several threads; also called for every live GL thread at process exit.
    void shutdown();

    // Deletes a GL buffer: at once on the GL thread, queued from any other thread.
    void delete_buffer(GLuint name);

    bool on_gl_thread() const { return std::this_thread::get_id() == gl_id_; }
    // Buffers deleted so far (GL thread only): a deleted name may be reused by a new buffer, so
    // cached bindings are valid only while this stays the same.
    uint64_t deletions() const { return deletions_; }

    // Checks glGetError on the GL thread; throws naming `what` (GL_OUT_OF_MEMORY ->
    // RESOURCE_EXHAUSTED, GL_CONTEXT_LOST -> DEVICE_UNAVAILABLE, others -> BACKEND_FAILURE).
    void check_gl(const char* what);

private:
    struct Task {
        const char* what;
        std::function<void()> fn;
        bool counted;  // queued work (post), not a caller's wait for a result (call): see GlThreadCounters
    };
    void enqueue(Task task);
    void run(const EglTarget& target);
    // Keeps the first error of queued work: "<what>: <prefix><detail>". Never throws (the GL
    // thread's loop must survive running out of host memory).
    void record_error(tgl_status status, const char* what, const char* prefix, const char* detail) noexcept;
    void throw_if_lost();
    // "" or why the work the GL thread runs now is past the time limit.
    std::string overdue() const;

    std::mutex shutdown_mutex_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Task> queue_;
    std::deque<Task> batch_;  // GL thread only; made with this object, so the loop allocates nothing
    bool stopping_ = false;
    bool sleeping_ = false;                 // the GL thread waits on wake_ (mutex_)
    std::atomic<int64_t> poll_ns_{kPollBeforeSleepNs};
    // Tasks ever queued: the idle GL thread polls it before sleeping. On a cache line of its own
    // (the padding fills the rest), apart from mutex_, which callers take.
    alignas(64) std::atomic<uint64_t> posted_{0};
    [[maybe_unused]] char posted_pad_[64 - sizeof(std::atomic<uint64_t>)] = {};
    uint64_t deletions_ = 0;                // GL thread only
    bool joined_ = false;
    bool exited_ = false;                   // the thread function has finished (mutex_)
    std::condition_variable exited_cv_;
    std::shared_ptr<GlThread> self_;        // set when detached: the thread keeps itself alive
    std::atomic<uint32_t> timeout_ms_{0};
    std::atomic<const char*> task_what_{nullptr};
    std::atomic<int64_t> task_start_ns_{0};  // steady clock; 0: idle
    std::shared_ptr<GlThreadCounters> counters_;  // may be null
    bool reset_query_ = false;               // glGetGraphicsResetStatus is available
    // TGL_GLES_DEBUG: tasks that run for kDebugSlowTaskNs or longer are said on stderr.
    static constexpr int64_t kDebugSlowTaskNs = 500000;
    const bool debug_ = debug_enabled();
    std::thread thread_;
    std::thread::id gl_id_;
    EglContext context_;
    Limits limits_;

    std::mutex error_mutex_;
    bool has_pending_ = false;
    tgl_status pending_status_ = TGL_OK;
    std::string pending_message_;  // empty when there was no memory for it
    const char* pending_what_ = "";
    std::atomic<bool> lost_{false};  // written under error_mutex_ (with lost_message_), read without it by lost()
    std::string lost_message_;
};

}  // namespace gles
}  // namespace tgl
