#include "timing.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <vector>

namespace bench {

double now_s() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

static double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
    double hi = v[mid];
    if (v.size() % 2) return hi;
    double lo = *std::max_element(v.begin(), v.begin() + static_cast<long>(mid));
    return 0.5 * (lo + hi);
}

// The last n samples lie within rel of their minimum.
static bool settled(const std::vector<double>& xs, int n, double rel) {
    if (static_cast<int>(xs.size()) < n) return false;
    auto first = xs.end() - n;
    const double lo = *std::min_element(first, xs.end());
    const double hi = *std::max_element(first, xs.end());
    return hi <= lo * (1 + rel);
}

Stats measure(const std::function<double(int)>& sample, const TimingConfig& cfg, int fixed_batch,
              bool warm) {
    Stats st;
    // 1. The first run: cold (shader compile, first allocation touches); reported on its own.
    st.first_s = sample(fixed_batch > 0 ? fixed_batch : 1);
    double per_run = st.first_s;

    // 2. Batch: fixed, or enough runs that a sample takes target_sample_s, from a second, warm
    //    single run (the first one compiles shaders: calibrated on it, a fast op would be timed one
    //    run per sample, each paying a synchronize's latency).
    //    A single run's time still holds one synchronize's latency (~0.1-0.2 ms on an H200), so a
    //    fast op is then timed in samples of a few ms, each paying that latency once (1-2 us per
    //    run on a 20 us op: 5-10 % of the row); one sample at that batch re-estimates the time
    //    per run, and the batch grows to fill target_sample_s.
    int batch = fixed_batch;
    if (batch <= 0) {
        auto batch_for = [&](double t) {
            const double want = t > 0 ? std::ceil(cfg.target_sample_s / t) : cfg.max_batch;
            return static_cast<int>(std::clamp(want, 1.0, static_cast<double>(cfg.max_batch)));
        };
        if (warm) per_run = std::min(per_run, sample(1));
        batch = batch_for(per_run);
        if (warm && batch > 1 && batch < cfg.max_batch) batch = std::max(batch, batch_for(sample(batch)));
    }
    st.batch = batch;

    // 3. Warm-up at the sampling batch, until the timings settle (TimingConfig says why).
    if (warm && cfg.warmup_s > 0) {
        std::vector<double> ws;
        const double t0 = now_s();
        for (;;) {
            ws.push_back(sample(batch));
            const double elapsed = now_s() - t0;
            if (elapsed >= cfg.warmup_s && settled(ws, cfg.settle_samples, cfg.settle_rel) &&
                (!cfg.clock_ready || cfg.clock_ready()))
                break;
            if (elapsed >= cfg.warmup_max_s) {
                st.settled = false;
                break;
            }
        }
        st.warmup_samples = static_cast<int>(ws.size());
    }

    // 4. Timed samples until the spread is small, or time or count runs out.
    std::vector<double> xs;
    double t0 = now_s();
    for (;;) {
        xs.push_back(sample(batch));
        const int n = static_cast<int>(xs.size());
        st.median_s = median_of(xs);
        std::vector<double> dev;
        for (double x : xs) dev.push_back(std::fabs(x - st.median_s));
        st.mad_s = median_of(dev);
        const double elapsed = now_s() - t0;
        if (n >= cfg.max_samples) break;
        if (n >= cfg.min_samples && (st.rel_mad() <= cfg.target_rel_mad || elapsed >= cfg.max_time_s))
            break;
        if (n >= 1 && elapsed >= 4 * cfg.max_time_s) break;  // a single run takes very long
    }
    st.samples = static_cast<int>(xs.size());
    st.min_s = *std::min_element(xs.begin(), xs.end());
    return st;
}

}  // namespace bench
