// The CPU reference plugin: one device ("cpu") whose buffers are host memory. Transfers are
// memcpy-like and synchronous; ops run to completion inside run_op (so synchronize has nothing to
// wait for). All calls on one open device are serialised by that device's mutex; an op may use
// several threads internally (see parallel.h).
#include "backend.h"
#include "cpu_buffer.h"
#include "kernels.h"
#include "status.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <exception>
#include <mutex>
#include <string>
#include <chrono>
#include <thread>

#ifndef TGL_CPU_VERSION
#define TGL_CPU_VERSION "0.0.0"
#endif

namespace tgl {
namespace cpu {

constexpr uint64_t kAlignment = 64;

CpuBuffer::CpuBuffer(uint64_t bytes) : DeviceBuffer(bytes) {
    if (bytes == 0) return;  // a zero-byte buffer owns no memory
    uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = nullptr;
    if (rounded < bytes || rounded > SIZE_MAX || posix_memalign(&p, kAlignment, size_t(rounded)) != 0 || !p)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "could not allocate %llu bytes of host memory for the buffer",
             (unsigned long long)bytes);
    data_.reset(static_cast<uint8_t*>(p));
}

namespace {

// Physical RAM in bytes (0 if unknown).
uint64_t physical_memory() {
    long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page_size <= 0) return 0;
    return uint64_t(pages) * uint64_t(page_size);
}

// A value of `key` in /proc/cpuinfo ("" if absent).
std::string cpuinfo_value(const char* key) {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    size_t n = std::strlen(key);
    while (std::getline(in, line)) {
        if (line.compare(0, n, key) != 0) continue;
        size_t colon = line.find(':');
        if (colon == std::string::npos) continue;
        size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? std::string() : line.substr(start);
    }
    return std::string();
}

// Threads per op: TGL_CPU_THREADS (1..1024) if set, else the hardware concurrency.
unsigned thread_count() {
    if (const char* env = ::secure_getenv("TGL_CPU_THREADS")) {
        char* end = nullptr;
        long v = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && v >= 1 && v <= 1024) return unsigned(v);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

class CpuDevice : public Device {
public:
    CpuDevice(uint64_t max_buffer_bytes, unsigned threads)
        : max_buffer_bytes_(max_buffer_bytes), threads_(threads) {}

    BufferRef alloc(uint64_t bytes) override {
        if (bytes > max_buffer_bytes_)
            fail(TGL_ERROR_RESOURCE_EXHAUSTED,
                 "bytes = %llu is above the device limit limit.max_buffer_bytes = %llu",
                 (unsigned long long)bytes, (unsigned long long)max_buffer_bytes_);
        return std::make_shared<CpuBuffer>(bytes);
    }

    void upload(const BufferRef& dst, uint64_t offset, const void* src, uint64_t bytes) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::memcpy(cpu_buffer(dst).bytes() + offset, src, size_t(bytes));
    }

    void download(const BufferRef& src, uint64_t offset, void* dst, uint64_t bytes) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::memcpy(dst, cpu_buffer(src).bytes() + offset, size_t(bytes));
    }

    void copy(const BufferRef& src, uint64_t src_offset, const BufferRef& dst, uint64_t dst_offset,
              uint64_t bytes) override {
        std::lock_guard<std::mutex> lock(mutex_);
        // The frame rejects overlapping ranges; memmove costs nothing extra and is safe anyway.
        std::memmove(cpu_buffer(dst).bytes() + dst_offset, cpu_buffer(src).bytes() + src_offset, size_t(bytes));
    }

    void fill(const BufferRef& dst, uint64_t offset, uint64_t bytes, const void* pattern,
              uint32_t pattern_size) override {
        std::lock_guard<std::mutex> lock(mutex_);
        uint8_t* p = cpu_buffer(dst).bytes() + offset;
        // One copy of the pattern, then double the filled (periodic) prefix until it covers the range.
        std::memcpy(p, pattern, pattern_size);
        for (uint64_t done = pattern_size; done < bytes;) {
            uint64_t n = std::min(done, bytes - done);
            std::memcpy(p + done, p, size_t(n));
            done += n;
        }
    }

    void run(const OpCall& call) override {
        std::lock_guard<std::mutex> lock(mutex_);
        cpu::run(call, threads_);
    }

    void synchronize() override {}  // every call has finished when it returns

    // A recorded op is its validated call (buffers held by their references), run again as is.
    struct RecordedCall : RecordedOp {
        explicit RecordedCall(const OpCall& c) : call(c) {}
        OpCall call;
    };
    std::shared_ptr<RecordedOp> record(const OpCall& call) override { return std::make_shared<RecordedCall>(call); }
    // As run_op would: an op that fails on its data (an index out of range) writes nothing and
    // the later ops still run; the first failure is the replay's status.
    void replay(const RecordedOps& ops) override {
        std::lock_guard<std::mutex> lock(mutex_);
        std::exception_ptr first;
        for (const auto& op : *ops) {
            try {
                cpu::run(static_cast<const RecordedCall&>(*op).call, threads_);
            } catch (...) {
                if (!first) first = std::current_exception();
            }
        }
        if (first) std::rethrow_exception(first);
    }

    // Ops run inside run_op: the region's time is the wall time between the two calls.
    void timer_begin() override { timer_start_ = std::chrono::steady_clock::now(); }
    uint64_t timer_end(uint32_t* flags) override {
        *flags = 0;
        return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                              timer_start_).count());
    }

private:
    std::chrono::steady_clock::time_point timer_start_;  // guarded by the frame's per-device timer lock
    const uint64_t max_buffer_bytes_;
    const unsigned threads_;
    std::mutex mutex_;
};

class CpuBackend : public Backend {
public:
    CpuBackend() {
        uint64_t ram = physical_memory();
        // Half of physical RAM (4 GiB if unknown): a larger single buffer is almost certainly a
        // mistake on a reference device, and failing cleanly beats the OOM killer.
        max_buffer_bytes_ = ram ? ram / 2 : (uint64_t(4) << 30);
        threads_ = thread_count();
        std::string vendor = cpuinfo_value("vendor_id");
        if (vendor.empty()) vendor = cpuinfo_value("CPU implementer");
        if (vendor.empty()) vendor = "unknown";
        std::string model = cpuinfo_value("model name");
        values_ = {
            {"name", "cpu"},
            {"renderer", "tensorgl CPU reference"},
            {"vendor", vendor},
            {"api.version", std::string("tensorgl plugin ABI ") + std::to_string(TGL_ABI_MAJOR) + "." +
                                std::to_string(TGL_ABI_MINOR) + (model.empty() ? "" : ", host CPU: " + model)},
            {"driver.version", TGL_CPU_VERSION},
            {"memory.bytes", std::to_string(ram)},
            {"limit.max_rank", std::to_string(TGL_MAX_RANK)},
            {"limit.max_buffer_bytes", std::to_string(max_buffer_bytes_)},
            {"threads", std::to_string(threads_)},
        };
        for (const auto& kv : values_) props_.push_back(tgl_property{kv.first.c_str(), kv.second.c_str()});
    }

    const char* name() const override { return "cpu"; }
    const char* version() const override { return TGL_CPU_VERSION; }
    const char* description() const override {
        return "tensorgl CPU reference plugin: plain loops in double precision, the reference the "
               "GLES plugin is checked against";
    }
    uint32_t device_count() override { return 1; }
    const std::vector<tgl_property>& device_properties(uint32_t) override { return props_; }
    std::shared_ptr<Device> open_device(uint32_t) override {
        return std::make_shared<CpuDevice>(max_buffer_bytes_, threads_);
    }

    uint8_t handle_tag() const override { return 0x43; }  // 'C'

private:
    uint64_t max_buffer_bytes_ = 0;
    unsigned threads_ = 1;
    // Property strings live as long as the backend (the rest of the process).
    std::vector<std::pair<std::string, std::string>> values_;
    std::vector<tgl_property> props_;
};

CpuBackend& backend_singleton() {
    static CpuBackend* backend = new CpuBackend;  // never destroyed: calls may run during exit
    return *backend;
}

}  // namespace
}  // namespace cpu
}  // namespace tgl

extern "C" __attribute__((visibility("default"))) tgl_status tgl_plugin_init_v1(uint32_t host_minor,
                                                                               const tgl_plugin_api** out) {
    // The backend's constructor reads sysconf and /proc/cpuinfo only (no driver); guard it anyway.
    tgl::cpu::CpuBackend* backend = nullptr;
    tgl_status status = tgl::guard("tgl_plugin_init_v1", [&] { backend = &tgl::cpu::backend_singleton(); });
    if (status != TGL_OK) return status;
    return tgl::plugin_init(*backend, host_minor, out);
}
