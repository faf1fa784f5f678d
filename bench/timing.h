// timing.h: the one timing loop. A sample is `batch` runs queued back to back between two
// synchronizes, wall clock, divided by batch (main.cpp adds the ABI 1.1 device timer around it).
#ifndef TGL_BENCH_TIMING_H
#define TGL_BENCH_TIMING_H

#include <functional>

namespace bench {

struct TimingConfig {
    // Warm-up after the first (cold) run: at least warmup_s, then until timings settle (the last
    // settle_samples samples within settle_rel of each other) or warmup_max_s has passed. An idle
    // GPU runs at a low clock and ramps up under load; sampling before it settles timed one row
    // 3x slow (issue 19: 17.6 ms against 6.1 ms on an H100 that had been idle).
    double warmup_s = 0.2;
    double warmup_max_s = 3.0;
    int settle_samples = 3;
    double settle_rel = 0.03;
    // Optional: the warm-up also goes on until it returns true, i.e. the GPU's clock has
    // ramped up (main.cpp). Timings settle at a low clock too: a row measured right after a 2 - 3 s
    // shader compile, with the GPU idle meanwhile, was timed at 600 MHz, 2.8x slow (bench/RESULTS.md
    // GGUF round 9), its samples within 0.1 % of each other.
    std::function<bool()> clock_ready;
    double target_sample_s = 0.02; // calibrate batch so that one sample takes about this long
    int max_batch = 1000;
    int min_samples = 5;
    int max_samples = 100;
    double target_rel_mad = 0.02;  // stop once MAD / median is below this (and min_samples)...
    double max_time_s = 2.0;       // ...or once timed sampling took this long (and min_samples)
};

struct Stats {
    double median_s = 0;  // per run
    double mad_s = 0;     // median absolute deviation of the samples
    double min_s = 0;
    double first_s = 0;   // the first run of the process for this case: shader compile etc.
    int samples = 0;
    int batch = 0;        // runs per sample
    int warmup_samples = 0;  // samples the warm-up took
    bool settled = true;     // false: the warm-up ran out of time before timings settled
    double rel_mad() const { return median_s > 0 ? mad_s / median_s : 0; }
};

// Monotonic clock in seconds.
double now_s();

// sample(batch) performs `batch` runs and returns the wall time per run in seconds.
// fixed_batch > 0 uses that batch; 0 calibrates it. warm = false: no warm-up beyond the first run
// (for samples that are whole processes).
Stats measure(const std::function<double(int batch)>& sample, const TimingConfig& cfg,
              int fixed_batch, bool warm = true);

}  // namespace bench

#endif
