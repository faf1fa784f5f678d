// A minimal parallel-for: splits [0, count) into contiguous chunks, one per thread, and runs them
// on freshly started std::threads (the calling thread takes the first chunk). Chunks are fixed by
// `count`, `threads` and `min_chunk` only, so results never depend on scheduling.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace tgl {
namespace cpu {

// Calls fn(begin, end) over disjoint ranges covering [0, count). At most `threads` ranges, none
// smaller than `min_chunk` (except the last); small counts run on the calling thread only.
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
    std::vector<std::thread> workers;
    workers.reserve(size_t(n - 1));
    for (int64_t begin = chunk; begin < count; begin += chunk) {
        int64_t end = std::min(count, begin + chunk);
        try {
            workers.emplace_back([&fn, begin, end] { fn(begin, end); });
        } catch (...) {
            fn(begin, end);  // could not start a thread: do this chunk here instead
        }
    }
    fn(int64_t(0), std::min(count, chunk));
    for (std::thread& t : workers) t.join();
}

}  // namespace cpu
}  // namespace tgl
