#include "egl_devices.h"
#include "debug_notes.h"
#include "tuning.h"

#include "status.h"

#include <epoxy/gl.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#ifndef EGL_DRM_RENDER_NODE_FILE_EXT
#define EGL_DRM_RENDER_NODE_FILE_EXT 0x3377
#endif
#ifndef EGL_DRM_DEVICE_FILE_EXT
#define EGL_DRM_DEVICE_FILE_EXT 0x3233
#endif
#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif
#ifndef GL_GPU_MEMORY_INFO_TOTAL_AVAILABLE_MEMORY_NVX
#define GL_GPU_MEMORY_INFO_TOTAL_AVAILABLE_MEMORY_NVX 0x9048
#endif

namespace tgl {
namespace gles {
namespace {

// Whole-token match in a space-separated extension list (NULL-safe).
bool has_ext(const char* list, const char* name) {
    if (!list) return false;
    size_t n = std::strlen(name);
    for (const char* p = list; (p = std::strstr(p, name)) != nullptr; p += n) {
        bool start = p == list || p[-1] == ' ';
        bool end = p[n] == '\0' || p[n] == ' ';
        if (start && end) return true;
    }
    return false;
}

const char* egl_error_name(EGLint e) {
    switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    default: return "unknown EGL error";
    }
}

std::string egl_error() {
    EGLint e = eglGetError();
    return format("%s (0x%04x)", egl_error_name(e), unsigned(e));
}

const char* client_extensions() {
    const char* s = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!s) eglGetError();  // EGL_BAD_DISPLAY when client extensions are unsupported: clear it
    return s;
}

const char* gl_string(GLenum name) {
    const GLubyte* s = glGetString(name);
    return s ? reinterpret_cast<const char*>(s) : "";
}

// "OpenGL ES 3.2 Mesa 22.3.6" -> 3, 2.
bool parse_gles_version(const char* v, int* major, int* minor) {
    const char* p = std::strstr(v, "OpenGL ES");
    if (!p) return false;
    p += 9;
    while (*p && (*p < '0' || *p > '9')) ++p;
    return std::sscanf(p, "%d.%d", major, minor) == 2;
}

EGLDisplay get_display(const EglTarget& t, const char* cext) {
    switch (t.platform) {
    case EglPlatform::Device:
        if (!has_ext(cext, "EGL_EXT_platform_base")) return EGL_NO_DISPLAY;
        return eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, t.device, nullptr);
    case EglPlatform::Surfaceless:
        if (!has_ext(cext, "EGL_EXT_platform_base")) return EGL_NO_DISPLAY;
        return eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
    case EglPlatform::Default:
        return eglGetDisplay(EGL_DEFAULT_DISPLAY);
    }
    return EGL_NO_DISPLAY;
}

uint64_t physical_memory_bytes() {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

// TGL_GLES_LIMITS=minimum: clamps L to the OpenGL ES 3.1 minima (see egl_devices.h) and records
// what changed. The extensions were already left unused by query_limits.
void clamp_to_minimum(Limits& L) {
    namespace m = es31_minimum;
    L.minimum = true;
    auto note = [&](const char* name, long long from, long long to) {
        if (from == to) return;
        if (!L.clamped.empty()) L.clamped += ", ";
        L.clamped += format("%s %lld->%lld", name, from, to);
    };
    auto lower = [&](const char* name, int& v, int cap) {
        note(name, v, std::min(v, cap));
        v = std::min(v, cap);
    };
    lower("MAX_COMPUTE_WORK_GROUP_INVOCATIONS", L.max_invocations, m::kInvocations);
    lower("MAX_COMPUTE_WORK_GROUP_SIZE[0]", L.max_size[0], m::kSize[0]);
    lower("MAX_COMPUTE_WORK_GROUP_SIZE[1]", L.max_size[1], m::kSize[1]);
    lower("MAX_COMPUTE_WORK_GROUP_SIZE[2]", L.max_size[2], m::kSize[2]);
    lower("MAX_COMPUTE_WORK_GROUP_COUNT[0]", L.max_count[0], m::kCount);
    lower("MAX_COMPUTE_WORK_GROUP_COUNT[1]", L.max_count[1], m::kCount);
    lower("MAX_COMPUTE_WORK_GROUP_COUNT[2]", L.max_count[2], m::kCount);
    lower("MAX_COMPUTE_SHARED_MEMORY_SIZE", L.max_shared_bytes, m::kSharedBytes);
    lower("MAX_SHADER_STORAGE_BUFFER_BINDINGS", L.max_ssbo_bindings, m::kSsboBindings);
    lower("MAX_COMPUTE_SHADER_STORAGE_BLOCKS", L.max_compute_ssbo_blocks, m::kSsboBlocks);
    lower("MAX_COMPUTE_UNIFORM_COMPONENTS", L.max_compute_uniform_components, m::kUniformComponents);
    note("MAX_SHADER_STORAGE_BLOCK_SIZE", L.max_ssbo_block_bytes, std::min(L.max_ssbo_block_bytes, m::kSsboBlockBytes));
    L.max_ssbo_block_bytes = std::min(L.max_ssbo_block_bytes, m::kSsboBlockBytes);
    // An alignment is a power of two: the largest allowed one is a multiple of any smaller one.
    note("SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT", L.ssbo_offset_alignment,
         std::max(L.ssbo_offset_alignment, m::kSsboOffsetAlignment));
    L.ssbo_offset_alignment = std::max(L.ssbo_offset_alignment, m::kSsboOffsetAlignment);
    note("GL_KHR_shader_subgroup", L.subgroup, 0);
    L.subgroup = false;
    L.subgroup_size = 0;
    L.subgroup_stages = L.subgroup_features = 0;
    note("GL_NV_gpu_shader5", L.f16_arith, 0);
    L.f16_arith = false;
}

// The value of TGL_GLES_LIMITS: true for "minimum", false for unset, "" or "driver".
bool minimum_limits_requested() {
    const char* v = secure_getenv("TGL_GLES_LIMITS");
    if (!v || !*v || !std::strcmp(v, "driver")) return false;
    if (!std::strcmp(v, "minimum")) return true;
    fail(TGL_ERROR_DEVICE_UNAVAILABLE, "TGL_GLES_LIMITS=%s: expected 'minimum' (only what OpenGL ES 3.1 guarantees) "
         "or 'driver' (the driver's limits; the same as unset)", v);
}

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// TGL_GLES_DEBUG: the time of each step of finding devices and creating a context, said in one
// line ("<what>: step 1.2, step 3.4 ms") when the object goes; nothing without TGL_GLES_DEBUG.
class StepTimes {
public:
    explicit StepTimes(std::string what) : on_(debug_enabled()), what_(std::move(what)), last_(on_ ? now_ms() : 0) {}
    ~StepTimes() {
        if (on_ && !steps_.empty()) std::fprintf(stderr, "tensorgl-gles: %s: %s ms\n", what_.c_str(), steps_.c_str());
    }
    StepTimes(const StepTimes&) = delete;
    StepTimes& operator=(const StepTimes&) = delete;
    void done(const char* step) {
        if (!on_) return;
        const double t = now_ms();
        steps_ += format("%s%s %.1f", steps_.empty() ? "" : ", ", step, t - last_);
        last_ = t;
    }

private:
    bool on_;
    std::string what_, steps_;
    double last_;
};

// The OpenGL ES 3.1 core functions the plugin calls. libepoxy resolves each on its first call, and
// every resolution first asks whether a GLX context is current: where libGLX.so.0 cannot be loaded
// (headless servers, containers) that is two failed dlopen()s each time, about 200 of them before
// a first op (measured on an H200 machine: docs/latency.md, "First op"). So they are resolved
// once here, from libGLESv2.so.2 as libepoxy itself resolves core GLES functions, and stored in
// libepoxy's public function pointers (what <epoxy/gl.h>'s names call). Extension functions and
// glGetGraphicsResetStatus (core only in ES 3.2; libepoxy falls back to the KHR/EXT names) are
// left to libepoxy.
#define TGL_GLES31_FUNCTIONS(X)                                                                                    \
    X(glAttachShader) X(glBindBuffer) X(glBindBufferBase) X(glBindBufferRange) X(glBufferData) X(glBufferSubData) \
    X(glClientWaitSync) X(glCompileShader) X(glCopyBufferSubData) X(glCreateProgram) X(glCreateShader)            \
    X(glDeleteBuffers) X(glDeleteProgram) X(glDeleteShader) X(glDeleteSync) X(glDetachShader)                     \
    X(glDispatchCompute) X(glFenceSync) X(glFlush) X(glGenBuffers) X(glGetActiveUniform) X(glGetError)            \
    X(glGetInteger64v) X(glGetIntegeri_v) X(glGetIntegerv) X(glGetProgramBinary) X(glGetProgramInfoLog)           \
    X(glGetProgramInterfaceiv) X(glGetProgramResourceIndex) X(glGetProgramResourceiv) X(glGetProgramiv)           \
    X(glGetShaderInfoLog) X(glGetShaderiv) X(glGetString) X(glGetStringi) X(glGetUniformLocation)                 \
    X(glLinkProgram) X(glMapBufferRange) X(glMemoryBarrier) X(glProgramBinary) X(glProgramParameteri)             \
    X(glShaderSource) X(glUniform1fv) X(glUniform1iv) X(glUniform1uiv) X(glUniform3uiv) X(glUniform4uiv)          \
    X(glUnmapBuffer) X(glUseProgram)

// Once per process, with libGLESv2.so.2 loaded; a name the library lacks stays with libepoxy.
void resolve_gles31_functions(void* gles) {
    static std::once_flag once;
    std::call_once(once, [gles] {
#define TGL_RESOLVE_GL(name)                                                                \
    if (void* f = dlsym(gles, #name)) epoxy_##name = reinterpret_cast<decltype(epoxy_##name)>(f);
        TGL_GLES31_FUNCTIONS(TGL_RESOLVE_GL)
#undef TGL_RESOLVE_GL
    });
}

}  // namespace

EglContext create_context(const EglTarget& target) {
    StepTimes steps(target.description + ": context");
    const char* cext = client_extensions();
    EglContext c;
    c.display = get_display(target, cext);
    steps.done("display");
    if (c.display == EGL_NO_DISPLAY)
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: no EGL display (%s)", target.description.c_str(), egl_error().c_str());
    EGLint major = 0, minor = 0;
    if (!eglInitialize(c.display, &major, &minor))
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: eglInitialize failed: %s", target.description.c_str(), egl_error().c_str());
    steps.done("eglInitialize");
    const char* dext = eglQueryString(c.display, EGL_EXTENSIONS);
    if (!eglBindAPI(EGL_OPENGL_ES_API))
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: eglBindAPI(EGL_OPENGL_ES_API) failed: %s", target.description.c_str(),
             egl_error().c_str());
    bool no_config = has_ext(dext, "EGL_KHR_no_config_context") || has_ext(dext, "EGL_MESA_configless_context");
    bool surfaceless = has_ext(dext, "EGL_KHR_surfaceless_context");
    bool versioned = major > 1 || minor >= 5 || has_ext(dext, "EGL_KHR_create_context");
    EGLConfig config = EGL_NO_CONFIG_KHR;
    if (!no_config || !surfaceless) {
        const EGLint attrs[] = {EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT, EGL_SURFACE_TYPE,
                                surfaceless ? 0 : EGL_PBUFFER_BIT, EGL_NONE};
        EGLint n = 0;
        if (!eglChooseConfig(c.display, attrs, &config, 1, &n) || n < 1)
            fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: no EGL config for OpenGL ES 3%s (%s)", target.description.c_str(),
                 surfaceless ? "" : " with a pbuffer", egl_error().c_str());
    }
    // With EGL_EXT_create_context_robustness, ask to be told of a GPU reset (the context is then
    // lost and glGetGraphicsResetStatus says so, see GlThread::check_reset); without it, or if the
    // driver refuses the attribute, a plain context.
    const EGLint robust[] = {EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY_EXT, EGL_LOSE_CONTEXT_ON_RESET_EXT};
    EGLint attrs[9];
    int n_attrs = 0;
    if (versioned) {
        for (EGLint a : {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1}) attrs[n_attrs++] = a;
    } else {
        for (EGLint a : {EGL_CONTEXT_CLIENT_VERSION, 3}) attrs[n_attrs++] = a;
    }
    if (has_ext(dext, "EGL_EXT_create_context_robustness")) {
        attrs[n_attrs] = robust[0];
        attrs[n_attrs + 1] = robust[1];
        attrs[n_attrs + 2] = EGL_NONE;
        c.context = eglCreateContext(c.display, config, EGL_NO_CONTEXT, attrs);
        if (c.context != EGL_NO_CONTEXT) c.lose_on_reset = true;
        else eglGetError();
    }
    attrs[n_attrs] = EGL_NONE;
    if (c.context == EGL_NO_CONTEXT) c.context = eglCreateContext(c.display, config, EGL_NO_CONTEXT, attrs);
    if (c.context == EGL_NO_CONTEXT)
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: eglCreateContext for OpenGL ES 3.1 failed: %s", target.description.c_str(),
             egl_error().c_str());
    steps.done(c.lose_on_reset ? "eglCreateContext (robust)" : "eglCreateContext");
    if (!surfaceless) {
        const EGLint pb[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        c.surface = eglCreatePbufferSurface(c.display, config, pb);
        if (c.surface == EGL_NO_SURFACE) {
            std::string err = egl_error();
            destroy_context(c);
            fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: no EGL_KHR_surfaceless_context and a 1x1 pbuffer failed: %s",
                 target.description.c_str(), err.c_str());
        }
    }
    if (!eglMakeCurrent(c.display, c.surface, c.surface, c.context)) {
        std::string err = egl_error();
        destroy_context(c);
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: eglMakeCurrent failed: %s", target.description.c_str(), err.c_str());
    }
    steps.done("eglMakeCurrent");
    int gl_major = 0, gl_minor = 0;
    const char* version = gl_string(GL_VERSION);
    steps.done("glGetString");
    if (!parse_gles_version(version, &gl_major, &gl_minor) || gl_major < 3 || (gl_major == 3 && gl_minor < 1)) {
        std::string v = version;
        destroy_context(c);
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "%s: the context is '%s', but OpenGL ES 3.1 or later is required",
             target.description.c_str(), v.c_str());
    }
    return c;
}

void destroy_context(EglContext& c) {
    if (c.display == EGL_NO_DISPLAY) return;
    eglMakeCurrent(c.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (c.surface != EGL_NO_SURFACE) eglDestroySurface(c.display, c.surface);
    if (c.context != EGL_NO_CONTEXT) eglDestroyContext(c.display, c.context);
    eglReleaseThread();
    c = EglContext{};
}

Limits query_limits() {
    Limits L;
    const bool minimum = minimum_limits_requested();
    parse_gles_version(gl_string(GL_VERSION), &L.gl_major, &L.gl_minor);
    glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &L.max_invocations);
    for (GLuint i = 0; i < 3; ++i) {
        glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_SIZE, i, &L.max_size[i]);
        glGetIntegeri_v(GL_MAX_COMPUTE_WORK_GROUP_COUNT, i, &L.max_count[i]);
    }
    glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &L.max_shared_bytes);
    glGetIntegerv(GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS, &L.max_ssbo_bindings);
    glGetIntegerv(GL_MAX_COMPUTE_SHADER_STORAGE_BLOCKS, &L.max_compute_ssbo_blocks);
    GLint64 block = 0;
    glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &block);
    L.max_ssbo_block_bytes = block;
    glGetIntegerv(GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, &L.ssbo_offset_alignment);
    if (L.ssbo_offset_alignment < 1) L.ssbo_offset_alignment = 1;
    glGetIntegerv(GL_MAX_COMPUTE_UNIFORM_COMPONENTS, &L.max_compute_uniform_components);
    GLint n_ext = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &n_ext);
    bool nvx_memory = false;
    for (GLint i = 0; i < n_ext; ++i) {
        const GLubyte* e = glGetStringi(GL_EXTENSIONS, GLuint(i));
        if (!e) continue;
        const char* s = reinterpret_cast<const char*>(e);
        if (!std::strcmp(s, "GL_KHR_shader_subgroup")) L.subgroup = true;
        if (!std::strcmp(s, "GL_NV_gpu_shader5")) L.f16_arith = true;
        if (!std::strcmp(s, "GL_NVX_gpu_memory_info")) nvx_memory = !minimum;  // minimum: no extension
    }
    if (L.subgroup) {
        GLint size = 0, stages = 0, features = 0;
        glGetIntegerv(GL_SUBGROUP_SIZE_KHR, &size);
        glGetIntegerv(GL_SUBGROUP_SUPPORTED_STAGES_KHR, &stages);
        glGetIntegerv(GL_SUBGROUP_SUPPORTED_FEATURES_KHR, &features);
        L.subgroup_size = size > 0 ? size : 0;
        L.subgroup_stages = uint32_t(stages);
        L.subgroup_features = uint32_t(features);
    }
    if (nvx_memory) {
        GLint kib = 0;
        glGetIntegerv(GL_GPU_MEMORY_INFO_TOTAL_AVAILABLE_MEMORY_NVX, &kib);
        if (kib > 0) L.memory_bytes = uint64_t(kib) * 1024u;
    }
    std::string renderer = gl_string(GL_RENDERER);
    if (!L.memory_bytes && (renderer.find("llvmpipe") != std::string::npos ||
                            renderer.find("softpipe") != std::string::npos ||
                            renderer.find("SwiftShader") != std::string::npos))
        L.memory_bytes = physical_memory_bytes();  // a software renderer allocates host memory
    // Largest buffer_alloc: the device memory where known, else 1 TiB (the driver then decides,
    // and GL_OUT_OF_MEMORY is reported as TGL_ERROR_RESOURCE_EXHAUSTED).
    L.max_buffer_bytes = L.memory_bytes ? L.memory_bytes : (uint64_t(1) << 40);
    L.max_buffer_reason = L.memory_bytes ? "the device's memory size" : "the plugin's cap of 1 TiB";
    // Mesa's buffer objects have a 32-bit size (pipe_resource::width0): 4 GiB and up fail with
    // GL_OUT_OF_MEMORY. (The GL store of a buffer is padded to whole words.)
    if (std::strstr(gl_string(GL_VERSION), "Mesa") && L.max_buffer_bytes > 0xFFFFFFFCu) {
        L.max_buffer_bytes = 0xFFFFFFFCu;
        L.max_buffer_reason = "Mesa buffer objects hold less than 4 GiB";
    }
    while (glGetError() != GL_NO_ERROR) {
    }
    if (minimum) {
        clamp_to_minimum(L);
        if (debug_enabled())
            std::fprintf(stderr, "tensorgl-gles: TGL_GLES_LIMITS=minimum on %s: %s\n", renderer.c_str(),
                         L.clamped.empty() ? "the driver's limits are already the minimum" : L.clamped.c_str());
    }
    return L;
}

int kernel_subgroup_size(const Limits& L, bool switched_on) {
    const uint32_t needed = GL_SUBGROUP_FEATURE_BASIC_BIT_KHR | GL_SUBGROUP_FEATURE_SHUFFLE_BIT_KHR;
    const int n = L.subgroup_size;
    const bool usable = switched_on && L.subgroup && !L.minimum && (L.subgroup_stages & GL_COMPUTE_SHADER_BIT) &&
                        (L.subgroup_features & needed) == needed && n >= 4 && n <= 128 && (n & (n - 1)) == 0;
    return usable ? n : 0;
}

std::string subgroup_feature_names(uint32_t features) {
    static const char* const names[] = {"basic", "vote", "arithmetic", "ballot", "shuffle", "shuffle_relative",
                                        "clustered", "quad", "partitioned_nv"};
    std::string s;
    for (int b = 0; b < 9; ++b)
        if (features & (1u << b)) s += std::string(s.empty() ? "" : " ") + names[b];
    return s;
}

namespace {

std::vector<std::pair<std::string, std::string>> describe(const EglTarget& target, const EglContext& c,
                                                          const Limits& L) {
    std::vector<std::pair<std::string, std::string>> p;
    std::string version = gl_string(GL_VERSION);
    std::string renderer = gl_string(GL_RENDERER);
    // Driver: what follows "OpenGL ES x.y " in GL_VERSION (e.g. "Mesa 22.3.6", "NVIDIA 580.159.04").
    std::string driver;
    size_t es = version.find("OpenGL ES");
    if (es != std::string::npos) {
        size_t sp = version.find(' ', es + 10);
        if (sp != std::string::npos) driver = version.substr(sp + 1);
    }
    const char* egl_vendor = eglQueryString(c.display, EGL_VENDOR);
    const char* egl_version = eglQueryString(c.display, EGL_VERSION);
    if (driver.empty()) driver = std::string(egl_vendor ? egl_vendor : "") + " EGL " + (egl_version ? egl_version : "");
    auto add = [&](const char* k, const std::string& v) { p.emplace_back(k, v); };
    auto num = [&](const char* k, long long v) { p.emplace_back(k, std::to_string(v)); };
    add("name", renderer);
    add("renderer", renderer);
    add("vendor", gl_string(GL_VENDOR));
    add("api.version", version);
    add("driver.version", driver);
    add("shading.version", gl_string(GL_SHADING_LANGUAGE_VERSION));
    add("egl.platform", target.platform == EglPlatform::Device        ? "device"
                        : target.platform == EglPlatform::Surfaceless ? "surfaceless"
                                                                      : "default");
    add("egl.device", target.description);
    add("egl.vendor", egl_vendor ? egl_vendor : "");
    add("egl.context_reset_notification", c.lose_on_reset ? "lose_context_on_reset" : "none");
    add("egl.version", egl_version ? egl_version : "");
    if (L.memory_bytes) num("memory.bytes", (long long)L.memory_bytes);
    num("limit.max_rank", TGL_MAX_RANK);
    num("limit.max_buffer_bytes", (long long)L.max_buffer_bytes);
    num("limit.max_workgroup_invocations", L.max_invocations);
    num("limit.max_workgroup_size_x", L.max_size[0]);
    num("limit.max_workgroup_size_y", L.max_size[1]);
    num("limit.max_workgroup_size_z", L.max_size[2]);
    num("limit.max_workgroup_count_x", L.max_count[0]);
    num("limit.max_workgroup_count_y", L.max_count[1]);
    num("limit.max_workgroup_count_z", L.max_count[2]);
    num("limit.max_shared_memory_bytes", L.max_shared_bytes);
    num("limit.max_ssbo_bindings", L.max_ssbo_bindings);
    num("limit.max_compute_ssbo_blocks", L.max_compute_ssbo_blocks);
    num("limit.max_ssbo_block_bytes", (long long)L.max_ssbo_block_bytes);
    num("limit.ssbo_offset_alignment", L.ssbo_offset_alignment);
    num("limit.max_compute_uniform_components", L.max_compute_uniform_components);
    {
        GLint formats = 0;  // 0: the driver cannot save programs, so the disk cache stays off
        glGetIntegerv(GL_NUM_PROGRAM_BINARY_FORMATS, &formats);
        num("program_binary_formats", formats);
    }
    add("limits.mode", L.minimum ? "minimum" : "driver");
    if (L.minimum) add("limits.clamped", L.clamped);
    add("extensions.subgroup", L.subgroup ? "1" : "0");
    num("subgroup.size", L.subgroup_size);
    add("subgroup.compute", (L.subgroup_stages & GL_COMPUTE_SHADER_BIT) ? "1" : "0");
    add("subgroup.features", subgroup_feature_names(L.subgroup_features));
    // What the kernels use: 0 also where TGL_TUNE_SUBGROUPS=0 (a malformed value: 0 here, and
    // device_open fails with the reason).
    bool switched_on = false;
    try {
        switched_on = read_subgroups_switch();
    } catch (...) {
    }
    num("subgroup.kernels", kernel_subgroup_size(L, switched_on));
    add("extensions.f16_arith", L.f16_arith ? "1" : "0");
    GLint n_ext = 0;
    glGetIntegerv(GL_NUM_EXTENSIONS, &n_ext);
    if (L.minimum) n_ext = 0;  // TGL_GLES_LIMITS=minimum: no extension is used
    std::string all;
    for (GLint i = 0; i < n_ext; ++i) {
        const GLubyte* e = glGetStringi(GL_EXTENSIONS, GLuint(i));
        if (!e) continue;
        if (!all.empty()) all += ' ';
        all += reinterpret_cast<const char*>(e);
    }
    num("extensions.count", n_ext);
    add("extensions", all);
    while (glGetError() != GL_NO_ERROR) {
    }
    return p;
}

// A probed device and the context the probe created on it, current on no thread.
struct Probed {
    DeviceDesc desc;
    EglContext context;
};

// Creates a context on the target and reads its limits and properties; the context stays current
// (probe_all keeps it for the first device and destroys the others). Throws on failure.
Probed probe_one(const EglTarget& target) {
    Probed p;
    p.desc.target = target;
    const double start = now_ms();
    p.context = create_context(target);
    const double created = now_ms();
    try {
        p.desc.limits = query_limits();
        p.desc.properties = describe(target, p.context, p.desc.limits);
    } catch (...) {
        destroy_context(p.context);
        throw;
    }
    if (debug_enabled())
        std::fprintf(stderr, "tensorgl-gles: probe of %s: display and context %.1f ms, limits and properties %.1f ms\n",
                     target.description.c_str(), created - start, now_ms() - created);
    return p;
}

// The probe's thread, waiting with its context of the first listed device current until
// start_context_thread gives it a body to run. Never destroyed: it may be used during exit.
struct ParkedThread {
    std::mutex mutex;
    std::condition_variable handed;
    bool present = false;  // a thread waits with a context of `target` current
    EglTarget target;
    EglContext context;
    std::thread thread;
    std::function<void(EglContext)> body;  // set once, by the one caller that takes the thread
};

ParkedThread& parked() {
    static ParkedThread* p = new ParkedThread;
    return *p;
}

bool same_target(const EglTarget& a, const EglTarget& b) {
    return a.platform == b.platform && a.device == b.device && a.description == b.description;
}

// On the probe's thread, with `context` current: waits for the body to run with it.
void wait_for_body(EglContext context) {
    ParkedThread& slot = parked();
    std::unique_lock<std::mutex> lock(slot.mutex);
    slot.handed.wait(lock, [&] { return bool(slot.body); });
    std::function<void(EglContext)> body = std::move(slot.body);
    slot.body = nullptr;
    lock.unlock();
    body(context);
}


void add_note(std::string& note, const std::string& s) {
    if (!note.empty()) note += "; ";
    note += s;
}

DeviceList probe_all(EglContext* kept) {
    DeviceList out;
    try {
        minimum_limits_requested();  // a bad TGL_GLES_LIMITS value leaves no device, said once
    } catch (const std::exception& e) {
        out.note = e.what();
        return out;
    }
    StepTimes steps("finding devices");
    // libepoxy aborts the process when it cannot load the EGL or GLES library: check first.
    if (!dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL)) {
        const char* e = dlerror();
        out.note = format("libEGL.so.1 cannot be loaded (%s): no EGL driver", e ? e : "?");
        return out;
    }
    void* gles = dlopen("libGLESv2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!gles) {
        const char* e = dlerror();
        out.note = format("libGLESv2.so.2 cannot be loaded (%s): no OpenGL ES driver", e ? e : "?");
        return out;
    }
    resolve_gles31_functions(gles);
    steps.done("dlopen libEGL, libGLESv2");
    const char* cext = client_extensions();
    bool platform_base = has_ext(cext, "EGL_EXT_platform_base");
    steps.done("client extensions");

    // 1. The EGL device platform: one display per device, no window system. Hardware devices come
    //    first, software ones (EGL_MESA_device_software, e.g. llvmpipe) after them. A device seen
    //    twice (same handle or the same DRM node) is kept once.
    std::vector<Probed> hardware, software;
    bool enumerate = has_ext(cext, "EGL_EXT_device_enumeration") || has_ext(cext, "EGL_EXT_device_base");
    bool query = has_ext(cext, "EGL_EXT_device_query") || has_ext(cext, "EGL_EXT_device_base");
    if (platform_base && has_ext(cext, "EGL_EXT_platform_device") && enumerate) {
        EGLint n = 0;
        if (!eglQueryDevicesEXT(0, nullptr, &n)) {
            add_note(out.note, "eglQueryDevicesEXT failed: " + egl_error());
            n = 0;
        }
        std::vector<EGLDeviceEXT> devs(size_t(n > 0 ? n : 0));
        if (n > 0 && !eglQueryDevicesEXT(n, devs.data(), &n)) {
            add_note(out.note, "eglQueryDevicesEXT failed: " + egl_error());
            n = 0;
        }
        devs.resize(size_t(n > 0 ? n : 0));
        steps.done("eglQueryDevicesEXT");
        if (devs.empty()) add_note(out.note, "eglQueryDevicesEXT lists no EGL device");
        std::vector<std::string> nodes;
        for (size_t i = 0; i < devs.size(); ++i) {
            bool dup = false;
            for (size_t j = 0; j < i; ++j) dup = dup || devs[j] == devs[i];
            const char* dext = query ? eglQueryDeviceStringEXT(devs[i], EGL_EXTENSIONS) : nullptr;
            bool is_software = has_ext(dext, "EGL_MESA_device_software");
            std::string node;
            const char* s = nullptr;
            if (has_ext(dext, "EGL_EXT_device_drm_render_node")) s = eglQueryDeviceStringEXT(devs[i], EGL_DRM_RENDER_NODE_FILE_EXT);
            if (!s && has_ext(dext, "EGL_EXT_device_drm")) s = eglQueryDeviceStringEXT(devs[i], EGL_DRM_DEVICE_FILE_EXT);
            if (s) node = s;
            eglGetError();  // a string the device lacks leaves an error behind
            for (const std::string& other : nodes) dup = dup || (!node.empty() && node == other);
            if (dup) continue;
            nodes.push_back(node);
            EglTarget t;
            t.platform = EglPlatform::Device;
            t.device = devs[i];
            t.description = format("EGL device %zu (%s)", i,
                                   !node.empty() ? node.c_str() : is_software ? "software" : "no DRM node");
            try {
                (is_software ? software : hardware).push_back(probe_one(t));
            } catch (const std::exception& e) {
                add_note(out.note, e.what());
            }
        }
    } else {
        add_note(out.note, "the EGL client offers no device platform (EGL_EXT_platform_device with "
                           "EGL_EXT_device_enumeration or EGL_EXT_device_base)");
    }
    std::vector<Probed> found = std::move(hardware);
    for (Probed& p : software) found.push_back(std::move(p));

    // 2. Mesa's surfaceless platform, and 3. the default display: only when the device platform
    //    gave nothing, since they reach the same devices again.
    if (found.empty() && platform_base && has_ext(cext, "EGL_MESA_platform_surfaceless")) {
        EglTarget t;
        t.platform = EglPlatform::Surfaceless;
        t.description = "EGL surfaceless platform";
        try {
            found.push_back(probe_one(t));
        } catch (const std::exception& e) {
            add_note(out.note, e.what());
        }
    }
    if (found.empty()) {
        EglTarget t;
        t.platform = EglPlatform::Default;
        t.description = "EGL default display";
        try {
            found.push_back(probe_one(t));
        } catch (const std::exception& e) {
            add_note(out.note, e.what());
        }
    }

    // TGL_DEVICE=<n> restricts enumeration to the n-th usable device (counting from 0 in the order
    // above), which then becomes device 0 and the only device; a value that is not a decimal number
    // or is past the last device leaves no device. Unset or empty: every usable device.
    const char* sel = ::secure_getenv("TGL_DEVICE");
    if (sel && *sel) {
        char* end = nullptr;
        unsigned long k = std::strtoul(sel, &end, 10);
        bool valid = *end == '\0' && sel[0] >= '0' && sel[0] <= '9';
        size_t usable = found.size();
        if (!valid || k >= usable)
            add_note(out.note, format("TGL_DEVICE=%s selects no device (%zu usable device%s)", sel, usable,
                                      usable == 1 ? "" : "s"));
        for (size_t i = 0; i < usable; ++i)
            if (!valid || i != k) destroy_context(found[i].context);
        if (!valid || k >= usable) found.clear();
        else if (usable > 1 || k != 0) found = {std::move(found[k])};
    }
    // The first device keeps its context, current on this thread, for the first device_open
    // (start_context_thread); the others' are destroyed, so that devices never opened hold no
    // driver memory.
    for (size_t i = 1; i < found.size(); ++i) destroy_context(found[i].context);
    if (!found.empty() && eglGetCurrentContext() != found[0].context.context) {
        const EglContext& c = found[0].context;
        if (!eglMakeCurrent(c.display, c.surface, c.surface, c.context)) destroy_context(found[0].context);
    }
    for (Probed& p : found) out.devices.push_back(std::move(p.desc));
    if (!found.empty() && found[0].context.context != EGL_NO_CONTEXT) *kept = found[0].context;
    else eglReleaseThread();
    if (out.devices.empty() && out.note.empty()) out.note = "no EGL display offers an OpenGL ES 3.1 context";
    return out;
}

}  // namespace

EglContext open_context(const EglTarget& target, const EglContext& adopted) {
    const double start = now_ms();
    const bool probes = adopted.context != EGL_NO_CONTEXT;
    EglContext c = probes ? adopted : create_context(target);
    if (debug_enabled())
        std::fprintf(stderr, "tensorgl-gles: %s: context %s, current in %.1f ms\n", target.description.c_str(),
                     probes ? "the probe's" : "created", now_ms() - start);
    return c;
}

std::thread start_context_thread(const EglTarget& target, std::function<void(EglContext adopted)> body) {
    probe_devices();  // the probe's thread, if any, is parked before this looks
    ParkedThread& slot = parked();
    {
        std::lock_guard<std::mutex> lock(slot.mutex);
        if (slot.present && same_target(slot.target, target)) {
            slot.present = false;
            slot.body = std::move(body);
            slot.handed.notify_all();
            return std::move(slot.thread);
        }
    }
    return std::thread(std::move(body), EglContext{});
}

const DeviceList& probe_devices() {
    static DeviceList* list = nullptr;
    static std::once_flag once;
    std::call_once(once, [] {
        auto result = std::make_unique<DeviceList>();
        const double start = now_ms();
        try {
            // The thread probes, then (with a context kept) waits to become device 0's GL thread.
            std::promise<EglContext> probed;
            std::future<EglContext> kept = probed.get_future();
            std::thread t([&result, &probed] {
                EglContext context;
                try {
                    *result = probe_all(&context);
                } catch (const std::exception& e) {
                    result->devices.clear();
                    result->note = std::string("device probe failed: ") + e.what();
                }
                probed.set_value(context);  // `result` and `probed` die after this
                if (context.context != EGL_NO_CONTEXT) wait_for_body(context);
            });
            EglContext context = kept.get();
            if (context.context == EGL_NO_CONTEXT || result->devices.empty()) {
                t.join();
            } else {
                ParkedThread& slot = parked();
                std::lock_guard<std::mutex> lock(slot.mutex);
                slot.target = result->devices[0].target;
                slot.context = context;
                slot.thread = std::move(t);
                slot.present = true;
            }
        } catch (const std::exception& e) {
            result->devices.clear();
            result->note = std::string("device probe thread could not run: ") + e.what();
        }
        if (debug_enabled())
            std::fprintf(stderr, "tensorgl-gles: %zu device%s%s%s (probed in %.1f ms)\n", result->devices.size(),
                         result->devices.size() == 1 ? "" : "s", result->note.empty() ? "" : "; ",
                         result->note.c_str(), now_ms() - start);
        list = result.release();
    });
    return *list;
}

}  // namespace gles
}  // namespace tgl
