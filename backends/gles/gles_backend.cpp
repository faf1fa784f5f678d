// The GLES 3.1 plugin: a tgl::Backend whose devices are headless EGL contexts (egl_devices.cpp),
// each driven by its own GL thread (gl_thread.cpp), running every op as a compute shader from
// glsl/ (the <family>_kernels.cpp). The entry point tgl_plugin_init_v1 is the only exported symbol.
#include "backend.h"
#include "egl_devices.h"
#include "gles_device.h"
#include "status.h"

#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
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

    // A snapshot of the device's properties with its counters as they are now. Snapshots are never
    // changed or freed (plugin_api.h: the strings live until the plugin is unloaded), so a caller's
    // earlier result stays as it was while other threads ask again. The store grows only when a
    // counter changed since the last snapshot of that index: by one array of tgl_property plus the
    // counter strings not seen before (about 1 KiB: 40 properties on llvmpipe), never per call.
    const std::vector<tgl_property>& device_properties(uint32_t index) override {
        init_once();
        const DeviceStats& s = *stats_.at(index);  // index checked by the frame
        std::lock_guard<std::mutex> lock(snapshots_mutex_);  // (read under it: snapshots never go back in time)
        const int64_t values[kDynamic] = {s.live_bytes.load(), s.held_bytes.load(), int64_t(s.cache.hits.load()),
                                          int64_t(s.cache.misses.load()), int64_t(s.cache.writes.load()),
                                          int64_t(s.cache.rejected.load()), s.gl.tasks.load(), s.gl.busy_ns.load(),
                                          s.fused_ops.load()};
        Snapshots& snaps = snapshots_[index];
        const std::vector<tgl_property>& latest = snaps.arrays.back();
        const size_t first_dynamic = latest.size() - kDynamic;
        char text[kDynamic][24];
        bool changed = false;
        for (int i = 0; i < kDynamic; ++i) {
            std::snprintf(text[i], sizeof text[i], "%lld", (long long)values[i]);
            changed = changed || std::strcmp(text[i], latest[first_dynamic + size_t(i)].value) != 0;
        }
        if (!changed) return latest;
        std::vector<tgl_property> next = latest;
        for (int i = 0; i < kDynamic; ++i)
            next[first_dynamic + size_t(i)].value = snaps.values.insert(text[i]).first->c_str();
        snaps.arrays.push_back(std::move(next));
        return snaps.arrays.back();
    }

    std::string device_count_note() override { return probe_devices().note; }

    std::shared_ptr<Device> open_device(uint32_t index) override {
        init_once();
        return std::make_shared<GlesDevice>(probe_devices().devices.at(index), stats_.at(index));  // index checked
    }

    uint8_t handle_tag() const override { return 0x47; }

private:
    // Device properties that change (documented in plugin_api.h's property list).
    static constexpr int kDynamic = 9;
    static constexpr const char* kDynamicNames[kDynamic] = {
        "memory.live_bytes", "memory.held_bytes", "program_cache.hits", "program_cache.misses",
        "program_cache.writes", "program_cache.rejected", "gl_thread.tasks", "gl_thread.busy_ns", "graph.fused_ops"};
    // Every snapshot handed out, per device index: arrays in a deque (elements never move) and the
    // counter strings they point at in a node-based set (each distinct string stored once).
    struct Snapshots {
        std::deque<std::vector<tgl_property>> arrays;
        std::unordered_set<std::string> values;
    };
    void init_once() {
        std::call_once(props_once_, [this] {
            const auto& devices = probe_devices().devices;
            for (size_t i = 0; i < devices.size(); ++i) {
                Snapshots snaps;
                std::vector<tgl_property> props;
                for (const auto& kv : devices[i].properties)
                    props.push_back(tgl_property{kv.first.c_str(), kv.second.c_str()});
                for (int k = 0; k < kDynamic; ++k) props.push_back(tgl_property{kDynamicNames[k], "0"});
                snaps.arrays.push_back(std::move(props));
                snapshots_.push_back(std::move(snaps));
                stats_.push_back(std::make_shared<DeviceStats>());
            }
        });
    }
    std::once_flag props_once_;
    std::deque<Snapshots> snapshots_;
    std::vector<std::shared_ptr<DeviceStats>> stats_;  // per device index, shared by its open devices
    std::mutex snapshots_mutex_;
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
