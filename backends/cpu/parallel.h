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

// How [0, count) is split: `chunks` ranges of `chunk` elements (the last one shorter).
struct Split {
    int64_t chunks, chunk;
};
inline Split split(int64_t count, unsigned threads, int64_t min_chunk) {
    min_chunk = std::max<int64_t>(min_chunk, 1);
    int64_t n = std::min<int64_t>(std::max(1u, threads), std::max<int64_t>(1, count / min_chunk));
    if (n <= 1) return {1, count};
    int64_t chunk = (count + n - 1) / n;
    return {(count + chunk - 1) / chunk, chunk};
}

// Calls fn(begin, end) over disjoint ranges covering [0, count). At most `threads` ranges, none
// smaller than `min_chunk` (except the last); small counts run on the calling thread only.
// An exception thrown by fn on any thread (std::bad_alloc of a kernel's scratch, a tgl::Error)
// is rethrown here on the calling thread once every chunk has ended: the first one thrown wins,
// later ones are dropped. (Escaping a std::thread it would call std::terminate.)
template <class Fn>
void parallel_for(int64_t count, unsigned threads, int64_t min_chunk, const Fn& fn) {
    if (count <= 0) return;
    const int64_t chunk = split(count, threads, min_chunk).chunk;
    if (chunk >= count) {
        fn(int64_t(0), count);
        return;
    }
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

// parallel_for for kernels with scratch memory: make() builds one chunk's scratch, for every chunk
// on the calling thread before any chunk runs, and fn(begin, end, scratch) gets its chunk's own.
// So a scratch allocation that fails throws before anything is written (with parallel_for alone,
// other chunks may have written their part by then).
template <class Make, class Fn>
void parallel_for_with_scratch(int64_t count, unsigned threads, int64_t min_chunk, const Make& make, const Fn& fn) {
    if (count <= 0) return;
    const Split s = split(count, threads, min_chunk);
    std::vector<decltype(make())> scratch;
    scratch.reserve(size_t(s.chunks));
    for (int64_t i = 0; i < s.chunks; ++i) scratch.push_back(make());
    parallel_for(count, threads, min_chunk,
                 [&](int64_t begin, int64_t end) { fn(begin, end, scratch[size_t(begin / s.chunk)]); });
}

}  // namespace cpu
}  // namespace tgl
