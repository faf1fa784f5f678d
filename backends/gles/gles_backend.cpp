// The GLES 3.1 plugin: a tgl::Backend whose devices are headless EGL contexts (egl_devices.cpp),
// each driven by its own GL thread (gl_thread.cpp), running every op as a compute shader from
// glsl/ (kernels.cpp). The entry point tgl_plugin_init_v1 is the only exported symbol.
#include "backend.h"
#include "egl_devices.h"
#include "gles_device.h"
#include "status.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

namespace tgl {
namespace gles {
namespace {

class GlesBackend : public Backend {
public:
    const char* name() const override { return "gles"; }
    const char* version() const override { return "0.1.0"; }
    const char* description() const override {
        return "OpenGL ES 3.1 compute shaders on a headless EGL context (device platform, Mesa surfaceless or "
               "default display), one GL thread per device";
    }

    uint32_t device_count() override { return uint32_t(probe_devices().devices.size()); }

    const std::vector<tgl_property>& device_properties(uint32_t index) override {
        init_once();
        // The counters' values are rewritten in place (fixed storage: the pointers stay valid).
        std::lock_guard<std::mutex> lock(dyn_mutex_);
        const DeviceStats& s = *stats_.at(index);  // index checked by the frame
        const int64_t values[kDynamic] = {s.live_bytes.load(), s.held_bytes.load(), int64_t(s.cache.hits.load()),
                                          int64_t(s.cache.misses.load()), int64_t(s.cache.writes.load()),
                                          int64_t(s.cache.rejected.load()), s.gl.tasks.load(), s.gl.busy_ns.load()};
        for (int i = 0; i < kDynamic; ++i)
            std::snprintf(dyn_[index].values[i], sizeof dyn_[index].values[i], "%lld", (long long)values[i]);
        return props_.at(index);
    }

    std::string device_count_note() override { return probe_devices().note; }

    std::shared_ptr<Device> open_device(uint32_t index) override {
        init_once();
        return std::make_shared<GlesDevice>(probe_devices().devices.at(index), stats_.at(index));  // index checked
    }

    uint8_t handle_tag() const override { return 0x47; }

private:
    // Device properties that change (documented in plugin_api.h's property list).
    static constexpr int kDynamic = 8;
    static constexpr const char* kDynamicNames[kDynamic] = {
        "memory.live_bytes", "memory.held_bytes", "program_cache.hits", "program_cache.misses",
        "program_cache.writes", "program_cache.rejected", "gl_thread.tasks", "gl_thread.busy_ns"};
    struct Dynamic {
        char values[kDynamic][24] = {};
    };
    void init_once() {
        std::call_once(props_once_, [this] {
            const auto& devices = probe_devices().devices;
            dyn_.reset(new Dynamic[devices.size() + 1]);
            for (size_t i = 0; i < devices.size(); ++i) {
                std::vector<tgl_property> props;
                for (const auto& kv : devices[i].properties)
                    props.push_back(tgl_property{kv.first.c_str(), kv.second.c_str()});
                for (int k = 0; k < kDynamic; ++k) {
                    std::snprintf(dyn_[i].values[k], sizeof dyn_[i].values[k], "0");
                    props.push_back(tgl_property{kDynamicNames[k], dyn_[i].values[k]});
                }
                props_.push_back(std::move(props));
                stats_.push_back(std::make_shared<DeviceStats>());
            }
        });
    }
    std::once_flag props_once_;
    std::vector<std::vector<tgl_property>> props_;
    std::vector<std::shared_ptr<DeviceStats>> stats_;  // per device index, shared by its open devices
    std::unique_ptr<Dynamic[]> dyn_;
    std::mutex dyn_mutex_;
};

GlesBackend& backend_singleton() {
    static GlesBackend* b = new GlesBackend;  // lives for the rest of the process
    return *b;
}

}  // namespace
}  // namespace gles
}  // namespace tgl

extern "C" __attribute__((visibility("default"))) tgl_status tgl_plugin_init_v1(uint32_t host_minor,
                                                                                const tgl_plugin_api** out) {
    return tgl::plugin_init(tgl::gles::backend_singleton(), host_minor, out);
}
