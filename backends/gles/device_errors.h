// Who hears of an error found on the GPU (glsl/device_status.glsl: an index out of range). The
// status words record the first failing op since the host last read them, not which host thread
// queued it, and a later failing op of another thread in the same span writes nothing and is not
// recorded. So an error read from the status goes to every host thread whose checked ops ran in
// that span (the failing ones among them), each at its own next wait; a thread whose ops have no
// device check is not handed another thread's error. plugin_api.h (Indexing ops) states this.
#pragma once

#include "status.h"

#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tgl {
namespace gles {

class DeviceErrorRoute {
public:
    // GL thread, once host thread `by`'s dispatches with a device check have been issued.
    void ran_checked(std::thread::id by) {
        for (std::thread::id t : ran_)
            if (t == by) return;
        ran_.push_back(by);
    }

    // GL thread, after a wait read the status: `error` (nullptr: none) goes to every thread whose
    // checked ops ran since the last read; with none on record, to `waiter`.
    void status_read(const Error* error, std::thread::id waiter) {
        std::vector<std::thread::id> ran;
        ran.swap(ran_);
        if (!error) return;
        if (ran.empty()) ran.push_back(waiter);
        std::lock_guard<std::mutex> lock(mutex_);
        for (std::thread::id t : ran) {
            bool has = false;  // a thread keeps its earliest unheard error
            for (const auto& k : kept_) has = has || k.first == t;
            if (!has) kept_.emplace_back(t, *error);
        }
    }

    // Host thread, after its wait: throws the error kept for it, if any (then forgets it).
    void raise_for_this_thread() { raise_kept(true); }
    // device_close: throws an error kept for any thread (the last chance to report it).
    void raise_any() { raise_kept(false); }

private:
    void raise_kept(bool this_thread_only) {
        std::unique_lock<std::mutex> lock(mutex_);
        const std::thread::id me = std::this_thread::get_id();
        for (size_t i = 0; i < kept_.size(); ++i) {
            if (this_thread_only && kept_[i].first != me) continue;
            Error e = std::move(kept_[i].second);
            kept_.erase(kept_.begin() + long(i));
            lock.unlock();
            throw e;
        }
    }

    std::vector<std::thread::id> ran_;  // GL thread only
    std::mutex mutex_;
    std::vector<std::pair<std::thread::id, Error>> kept_;  // at most one per host thread
};

}  // namespace gles
}  // namespace tgl
