// gpu_clock.h: the GPU's current SM clock where the driver shows it, for each benchmark row (a row
// timed before the clock ramped up is visible as such). NVIDIA: NVML, opened at run time, so the
// runner needs no NVIDIA library to build or to run elsewhere.
#ifndef TGL_BENCH_GPU_CLOCK_H
#define TGL_BENCH_GPU_CLOCK_H

namespace bench {

// The SM clock in MHz of the machine's GPU; -1 where unknown: no NVML, or more than one GPU (the
// EGL device the plugin chose cannot be matched to an NVML index).
int sm_clock_mhz();

}  // namespace bench

#endif
