// gpu_clock.h: the GPU's current SM clock where the driver shows it, for each benchmark row (a row
// timed before the clock ramped up is visible as such). NVIDIA: NVML, opened at run time, so the
// runner needs no NVIDIA library to build or to run elsewhere.
#ifndef TGL_BENCH_GPU_CLOCK_H
#define TGL_BENCH_GPU_CLOCK_H

namespace bench {

// The SM clock in MHz of the machine's GPU; -1 where unknown: no NVML, or more than one GPU (the
// EGL device the plugin chose cannot be matched to an NVML index).
int sm_clock_mhz();

// Whether the SM clock now is at least 80 % of the highest this process has read (true where it is
// unknown): the GPU runs at the clock it ramps up to under load, not one it dropped to while idle.
// 80 %: well above an idle clock (345 - 600 MHz against 1980 on an H100), below mild throttling.
bool sm_clock_ramped();

}  // namespace bench

#endif
