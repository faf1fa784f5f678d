// A minimal parallel-for: splits [0, count) into contiguous chunks, one per thread, and runs them
// on freshly started std::threads (the calling thread takes the first chunk). Chunks are fixed by
// `count`, `threads` and `min_chunk` only, so results never depend on scheduling.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tgl {
namespace cpu {

// Calls fn(begin, end) over disjoint ranges covering [0, count). At most `threads` ranges, none
// smaller than `min_chunk` (except the last); small counts run on the calling thread only.
// An exception thrown by fn on any thread (std::bad_alloc of a kernel's scratch, a tgl::Error)
// is rethrown here on the calling thread once every chunk has ended: the first one thrown wins,
// later ones are dropped. (Escaping a std::thread it would call std::terminate.)
template <class Fn>
void parallel_for(int64_t count, unsigned threads, int64_t min_chunk, const Fn& fn) {
    if (count <= 0) return;
    min_chunk = std::max<int64_t>(min_chunk, 1);
    int64_t n = std::min<int64_t>(std::max(1u, threads), std::max<int64_t>(1, count / min_chunk));
    if (n <= 1) {
        fn(int64_t(0), count);
        return;
    }
    int64_t chunk = (count + n - 1) / n;
    std::mutex first_mutex;
    std::exception_ptr first;
    auto run_chunk = [&](int64_t begin, int64_t end) noexcept {
        try {
            fn(begin, end);
        } catch (...) {
            std::lock_guard<std::mutex> lock(first_mutex);
            if (!first) first = std::current_exception();
        }
    };
    std::vector<std::thread> workers;
    for (int64_t begin = chunk; begin < count; begin += chunk) {
        int64_t end = std::min(count, begin + chunk);
        try {
            workers.emplace_back(run_chunk, begin, end);
        } catch (...) {
            run_chunk(begin, end);  // could not start a thread (or list it): do this chunk here instead
        }
    }
    run_chunk(int64_t(0), std::min(count, chunk));
    for (std::thread& t : workers) t.join();
    if (first) std::rethrow_exception(first);
}

}  // namespace cpu
}  // namespace tgl
