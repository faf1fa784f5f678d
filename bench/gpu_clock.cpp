#include "gpu_clock.h"

#include <dlfcn.h>

#include <algorithm>

namespace bench {

namespace {

// The few NVML entry points used (nvml.h, stable since NVML 5). 0 is NVML_SUCCESS.
using nvml_device = void*;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
struct Nvml {
    int (*init)() = nullptr;
    int (*device_count)(unsigned*) = nullptr;
    int (*device_by_index)(unsigned, nvml_device*) = nullptr;
    int (*clock_info)(nvml_device, int, unsigned*) = nullptr;
    nvml_device device = nullptr;
    bool ready = false;
};

Nvml open_nvml() {
    Nvml n;
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return n;
    n.init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    n.device_count = reinterpret_cast<int (*)(unsigned*)>(dlsym(lib, "nvmlDeviceGetCount_v2"));
    n.device_by_index = reinterpret_cast<int (*)(unsigned, nvml_device*)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    n.clock_info = reinterpret_cast<int (*)(nvml_device, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    unsigned count = 0;
    n.ready = n.init && n.device_count && n.device_by_index && n.clock_info && n.init() == 0 &&
              n.device_count(&count) == 0 && count == 1 && n.device_by_index(0, &n.device) == 0;
    return n;  // the library stays open for the process's lifetime
}

}  // namespace

int sm_clock_mhz() {
    static const Nvml nvml = open_nvml();
    unsigned mhz = 0;
    if (!nvml.ready || nvml.clock_info(nvml.device, kNvmlClockSm, &mhz) != 0) return -1;
    return static_cast<int>(mhz);
}

bool sm_clock_ramped() {
    static int highest = 0;  // the benchmark runner times on one thread
    const int mhz = sm_clock_mhz();
    if (mhz <= 0) return true;
    highest = std::max(highest, mhz);
    return mhz * 5 >= highest * 4;
}

}  // namespace bench
