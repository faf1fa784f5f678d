// Headless EGL: finding the devices on which a GLES 3.1 context can be created, and creating
// that context (no window, no X): the EGL device platform first, then Mesa's surfaceless platform,
// then the default display.
#pragma once

#include <epoxy/egl.h>

#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tgl {
namespace gles {

enum class EglPlatform { Device, Surfaceless, Default };

// How to reach one device's EGLDisplay.
struct EglTarget {
    EglPlatform platform = EglPlatform::Default;
    EGLDeviceEXT device = EGL_NO_DEVICE_EXT;  // EglPlatform::Device only
    std::string description;                  // e.g. "EGL device 0 (/dev/dri/renderD128)"
};

// GL limits of a context, queried at probe and again at device open.
struct Limits {
    int gl_major = 0, gl_minor = 0;
    int max_invocations = 0;
    int max_size[3] = {};
    int max_count[3] = {};
    int max_shared_bytes = 0;
    int max_ssbo_bindings = 0;
    int max_compute_ssbo_blocks = 0;
    int64_t max_ssbo_block_bytes = 0;
    int ssbo_offset_alignment = 1;
    int max_compute_uniform_components = 0;
    uint64_t memory_bytes = 0;       // 0 if unknown
    uint64_t max_buffer_bytes = 0;   // largest buffer_alloc accepted
    const char* max_buffer_reason = "";  // where that limit comes from, for messages
    // GL_KHR_shader_subgroup as the context reports it: the extension, the default subgroup size,
    // the stages and features (GL_SUBGROUP_FEATURE_*_BIT_KHR) it supports; all 0 without it.
    bool subgroup = false;
    int subgroup_size = 0;
    uint32_t subgroup_stages = 0, subgroup_features = 0;
    bool f16_arith = false;          // GL_NV_gpu_shader5: float16_t / f16vec* arithmetic in GLSL ES
    // TGL_GLES_LIMITS=minimum: every limit above clamped to what OpenGL ES 3.1 guarantees and no
    // extension used (see apply_limits_mode); `clamped` lists what changed ("name driver->used").
    bool minimum = false;
    std::string clamped;
};

// A context made current (with no surface, or a 1x1 pbuffer where surfaceless is unavailable).
struct EglContext {
    EGLDisplay display = EGL_NO_DISPLAY;
    EGLContext context = EGL_NO_CONTEXT;
    EGLSurface surface = EGL_NO_SURFACE;
    bool lose_on_reset = false;  // created with EGL_EXT_create_context_robustness's lose-context-on-reset
};

// Creates a GLES 3.1+ context on the target and makes it current on the calling thread. Throws
// Error(DEVICE_UNAVAILABLE) saying which step failed.
EglContext create_context(const EglTarget& target);
// Starts a device's GL thread running body(adopted). On NVIDIA's driver, binding a context on a
// thread for the first time costs about 25 ms, whether the context is new or not; so the probe's
// thread stays, with its context of the first listed device current, and the first call for that
// device gets that thread (exactly one caller; `adopted` is then the probe's context, already
// current). Every other call gets a new thread, and `adopted` is empty.
std::thread start_context_thread(const EglTarget& target, std::function<void(EglContext adopted)> body);
// On the thread body runs on: `adopted` if it holds a context, else a new one from create_context.
EglContext open_context(const EglTarget& target, const EglContext& adopted);
// Releases and destroys the context (same thread). The display stays initialized: other devices
// may share it, and EGL has no reference count on eglInitialize.
void destroy_context(EglContext& ctx);

// Limits of the current context, clamped by TGL_GLES_LIMITS (read with secure_getenv): unset,
// empty or "driver" keeps the driver's; "minimum" keeps only what OpenGL ES 3.1 guarantees
// (128 invocations, 128 x 128 x 64 workgroups, 65535 workgroups per axis, 16 KiB shared memory,
// 4 SSBO blocks and bindings, 2^27-byte blocks, 256-byte SSBO offset alignment, 512 uniform
// components, no extension). Another value throws Error(DEVICE_UNAVAILABLE).
Limits query_limits();

// The subgroup size the kernels may use (glsl/subgroup.glsl): GL_KHR_shader_subgroup in compute
// shaders with the basic and shuffle features and a power-of-two size in [4, 128]; 0 where not,
// under TGL_GLES_LIMITS=minimum (no extension), or with `switched_on` false (TGL_TUNE_SUBGROUPS=0).
int kernel_subgroup_size(const Limits& L, bool switched_on);
// The names of the GL_SUBGROUP_FEATURE_*_BIT_KHR bits of `features`, e.g. "basic vote arithmetic".
std::string subgroup_feature_names(uint32_t features);

// The OpenGL ES 3.1 minimum of each limit (the maximum for SSBO_OFFSET_ALIGNMENT), from the
// spec's tables of implementation-dependent values (20.47 and 20.48 of the ES 3.1 spec).
namespace es31_minimum {
constexpr int kInvocations = 128;
constexpr int kSize[3] = {128, 128, 64};
constexpr int kCount = 65535;
constexpr int kSharedBytes = 16384;
constexpr int kSsboBlocks = 4;    // MAX_COMPUTE_SHADER_STORAGE_BLOCKS
constexpr int kSsboBindings = 4;  // MAX_SHADER_STORAGE_BUFFER_BINDINGS
constexpr int64_t kSsboBlockBytes = int64_t(1) << 27;
constexpr int kSsboOffsetAlignment = 256;  // the largest value an implementation may report
constexpr int kUniformComponents = 512;    // MAX_COMPUTE_UNIFORM_COMPONENTS
}  // namespace es31_minimum

struct DeviceDesc {
    EglTarget target;
    Limits limits;
    std::vector<std::pair<std::string, std::string>> properties;
};

struct DeviceList {
    std::vector<DeviceDesc> devices;
    std::string note;  // why devices were skipped or none was found ("" if nothing to say)
};

// The usable devices, probed once (on a private thread, so that no host thread's current context
// is disturbed) on the first call. Never throws.
const DeviceList& probe_devices();

}  // namespace gles
}  // namespace tgl
