// The GLES 3.1 plugin: a tgl::Backend whose devices are headless EGL contexts (egl_devices.cpp),
// each driven by its own GL thread (gl_thread.cpp), running every op as a compute shader from
// glsl/ (kernels.cpp). The entry point tgl_plugin_init_v1 is the only exported symbol.
#include "backend.h"
#include "egl_devices.h"
#include "gles_device.h"
#include "status.h"

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
        std::call_once(props_once_, [this] {
            for (const DeviceDesc& d : probe_devices().devices) {
                std::vector<tgl_property> props;
                for (const auto& kv : d.properties) props.push_back(tgl_property{kv.first.c_str(), kv.second.c_str()});
                props_.push_back(std::move(props));
            }
        });
        return props_.at(index);  // index checked by the frame
    }

    std::string device_count_note() override { return probe_devices().note; }

    std::shared_ptr<Device> open_device(uint32_t index) override {
        return std::make_shared<GlesDevice>(probe_devices().devices.at(index));  // index checked by the frame
    }

    uint8_t handle_tag() const override { return 0x47; }

private:
    std::once_flag props_once_;
    std::vector<std::vector<tgl_property>> props_;
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
