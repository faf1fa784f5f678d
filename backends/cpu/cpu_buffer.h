// A CPU "device buffer": a block of host memory, 64-byte aligned.
#pragma once

#include "backend.h"

#include <cstdlib>
#include <memory>

namespace tgl {
namespace cpu {

class CpuBuffer : public DeviceBuffer {
public:
    // Throws tgl::Error(RESOURCE_EXHAUSTED) when the host allocation fails. Contents are
    // unspecified (not cleared), as the ABI allows.
    explicit CpuBuffer(uint64_t bytes);

    uint8_t* bytes() const { return data_.get(); }
    float* f32() const { return reinterpret_cast<float*>(data_.get()); }

private:
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t, Free> data_;
};

inline CpuBuffer& cpu_buffer(const std::shared_ptr<DeviceBuffer>& buffer) {
    return static_cast<CpuBuffer&>(*buffer);
}

}  // namespace cpu
}  // namespace tgl
