// tgl-egl-timing: what a driver's headless EGL start costs, step by step, in a fresh process (the
// steps of the GLES plugin's device probe and first op, called directly through dlsym: no libepoxy,
// no tensorgl). Each line: the step, its milliseconds, and the shared libraries it mapped. See
// docs/latency.md ("First op") for what was measured with it.
//
//   tgl-egl-timing [--device=N] [--no-robust] [--default-display]
//     --device=N         the N-th EGL device (EGL_EXT_platform_device; default 0)
//     --no-robust        no EGL_EXT_create_context_robustness attributes on the context
//     --default-display  eglGetDisplay(EGL_DEFAULT_DISPLAY) instead of the device platform
#define EGL_EGL_PROTOTYPES 0
#define GL_GLES_PROTOTYPES 0
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES3/gl31.h>

#include <dlfcn.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

double now_ms() {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Shared objects mapped now (/proc/self/maps).
std::set<std::string> mapped_libraries() {
    std::set<std::string> libs;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        size_t slash = line.find('/');
        if (slash == std::string::npos || line.find(".so", slash) == std::string::npos) continue;
        libs.insert(line.substr(line.rfind('/') + 1));
    }
    return libs;
}

// Prints one step: its time and the libraries mapped since the last step.
struct Steps {
    double last = now_ms();
    double total = 0;
    std::set<std::string> libs = mapped_libraries();
    void done(const char* what) {
        const double t = now_ms(), ms = t - last;
        total += ms;
        std::set<std::string> now = mapped_libraries();
        std::string added;
        for (const std::string& l : now)
            if (!libs.count(l)) added += " " + l;
        std::printf("%-44s %8.2f ms  (sum %7.2f)%s%s\n", what, ms, total, added.empty() ? "" : "  +", added.c_str());
        std::fflush(stdout);
        libs.swap(now);
        last = now_ms();  // the /proc read is not part of the next step
    }
};

[[noreturn]] void die(const char* what) {
    std::fprintf(stderr, "tgl-egl-timing: %s\n", what);
    std::exit(1);
}

template <typename F>
F sym(void* lib, const char* name) {
    void* p = dlsym(lib, name);
    if (!p) die(name);
    return reinterpret_cast<F>(p);
}

}  // namespace

int main(int argc, char** argv) {
    int device_index = 0;
    bool robust = true, default_display = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strncmp(argv[i], "--device=", 9)) device_index = std::atoi(argv[i] + 9);
        else if (!std::strcmp(argv[i], "--no-robust")) robust = false;
        else if (!std::strcmp(argv[i], "--default-display")) default_display = true;
        else {
            std::fprintf(stderr, "usage: %s [--device=N] [--no-robust] [--default-display]\n", argv[0]);
            return 2;
        }
    }
    Steps s;
    void* egl = dlopen("libEGL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!egl) die(dlerror());
    s.done("dlopen libEGL.so.1");
    void* gles = dlopen("libGLESv2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!gles) die(dlerror());
    s.done("dlopen libGLESv2.so.2");
    auto GetProcAddress = sym<PFNEGLGETPROCADDRESSPROC>(egl, "eglGetProcAddress");
    auto QueryString = sym<PFNEGLQUERYSTRINGPROC>(egl, "eglQueryString");
    auto GetDisplay = sym<PFNEGLGETDISPLAYPROC>(egl, "eglGetDisplay");
    auto Initialize = sym<PFNEGLINITIALIZEPROC>(egl, "eglInitialize");
    auto Terminate = sym<PFNEGLTERMINATEPROC>(egl, "eglTerminate");
    auto BindAPI = sym<PFNEGLBINDAPIPROC>(egl, "eglBindAPI");
    auto CreateContext = sym<PFNEGLCREATECONTEXTPROC>(egl, "eglCreateContext");
    auto DestroyContext = sym<PFNEGLDESTROYCONTEXTPROC>(egl, "eglDestroyContext");
    auto MakeCurrent = sym<PFNEGLMAKECURRENTPROC>(egl, "eglMakeCurrent");
    auto ReleaseThread = sym<PFNEGLRELEASETHREADPROC>(egl, "eglReleaseThread");
    const char* cext = QueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    s.done("eglQueryString(client extensions)");
    auto QueryDevices = reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(GetProcAddress("eglQueryDevicesEXT"));
    auto QueryDeviceString = reinterpret_cast<PFNEGLQUERYDEVICESTRINGEXTPROC>(GetProcAddress("eglQueryDeviceStringEXT"));
    auto GetPlatformDisplay = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(GetProcAddress("eglGetPlatformDisplayEXT"));
    s.done("eglGetProcAddress (3 EGL extensions)");
    EGLDisplay display = EGL_NO_DISPLAY;
    if (default_display) {
        display = GetDisplay(EGL_DEFAULT_DISPLAY);
        s.done("eglGetDisplay(EGL_DEFAULT_DISPLAY)");
    } else {
        if (!QueryDevices || !GetPlatformDisplay) die("no eglQueryDevicesEXT / eglGetPlatformDisplayEXT");
        EGLint n = 0;
        QueryDevices(0, nullptr, &n);
        std::vector<EGLDeviceEXT> devs(size_t(n > 0 ? n : 0));
        if (n > 0) QueryDevices(n, devs.data(), &n);
        s.done("eglQueryDevicesEXT (count, list)");
        for (EGLint i = 0; i < n && QueryDeviceString; ++i) {
            const char* e = QueryDeviceString(devs[size_t(i)], EGL_EXTENSIONS);
            std::printf("  device %d: %s\n", i, e ? e : "(no extensions)");
        }
        s.done("eglQueryDeviceStringEXT (each device)");
        if (device_index >= n) die("no such device");
        display = GetPlatformDisplay(EGL_PLATFORM_DEVICE_EXT, devs[size_t(device_index)], nullptr);
        s.done("eglGetPlatformDisplayEXT(device)");
    }
    if (display == EGL_NO_DISPLAY) die("no display");
    EGLint major = 0, minor = 0;
    if (!Initialize(display, &major, &minor)) die("eglInitialize failed");
    s.done("eglInitialize");
    const char* dext = QueryString(display, EGL_EXTENSIONS);
    BindAPI(EGL_OPENGL_ES_API);
    s.done("eglQueryString(display) + eglBindAPI");
    std::vector<EGLint> attrs = {EGL_CONTEXT_MAJOR_VERSION, 3, EGL_CONTEXT_MINOR_VERSION, 1};
    if (robust && dext && std::strstr(dext, "EGL_EXT_create_context_robustness"))
        attrs.insert(attrs.end(), {EGL_CONTEXT_OPENGL_RESET_NOTIFICATION_STRATEGY_EXT, EGL_LOSE_CONTEXT_ON_RESET_EXT});
    attrs.push_back(EGL_NONE);
    EGLContext ctx = CreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs.data());
    if (ctx == EGL_NO_CONTEXT) die("eglCreateContext failed");
    s.done(attrs.size() > 5 ? "eglCreateContext (3.1, robust)" : "eglCreateContext (3.1)");
    if (!MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx)) die("eglMakeCurrent failed");
    s.done("eglMakeCurrent (first, this thread)");

#define GL(name, type) auto name = reinterpret_cast<type>(GetProcAddress("gl" #name))
    GL(GetString, PFNGLGETSTRINGPROC);
    GL(GetStringi, PFNGLGETSTRINGIPROC);
    GL(GetIntegerv, PFNGLGETINTEGERVPROC);
    GL(CreateShader, PFNGLCREATESHADERPROC);
    GL(ShaderSource, PFNGLSHADERSOURCEPROC);
    GL(CompileShader, PFNGLCOMPILESHADERPROC);
    GL(CreateProgram, PFNGLCREATEPROGRAMPROC);
    GL(AttachShader, PFNGLATTACHSHADERPROC);
    GL(LinkProgram, PFNGLLINKPROGRAMPROC);
    GL(GetProgramiv, PFNGLGETPROGRAMIVPROC);
    GL(GetProgramBinary, PFNGLGETPROGRAMBINARYPROC);
    GL(ProgramBinary, PFNGLPROGRAMBINARYPROC);
    GL(DeleteProgram, PFNGLDELETEPROGRAMPROC);
    GL(DeleteShader, PFNGLDELETESHADERPROC);
    GL(UseProgram, PFNGLUSEPROGRAMPROC);
    GL(GenBuffers, PFNGLGENBUFFERSPROC);
    GL(BindBuffer, PFNGLBINDBUFFERPROC);
    GL(BufferData, PFNGLBUFFERDATAPROC);
    GL(BindBufferBase, PFNGLBINDBUFFERBASEPROC);
    GL(DispatchCompute, PFNGLDISPATCHCOMPUTEPROC);
    GL(MemoryBarrier, PFNGLMEMORYBARRIERPROC);
    GL(MapBufferRange, PFNGLMAPBUFFERRANGEPROC);
    GL(UnmapBuffer, PFNGLUNMAPBUFFERPROC);
    GL(Finish, PFNGLFINISHPROC);
#undef GL
    s.done("eglGetProcAddress (24 GL functions)");
    std::printf("  %s | %s | EGL %d.%d\n", GetString(GL_RENDERER), GetString(GL_VERSION), major, minor);
    s.done("glGetString (renderer, version)");
    GLint n_ext = 0, v = 0;
    GetIntegerv(GL_NUM_EXTENSIONS, &n_ext);
    for (GLint i = 0; i < n_ext; ++i) GetStringi(GL_EXTENSIONS, GLuint(i));
    for (GLenum e : {GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, GL_MAX_COMPUTE_SHARED_MEMORY_SIZE,
                     GL_MAX_SHADER_STORAGE_BUFFER_BINDINGS, GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT})
        GetIntegerv(e, &v);
    s.done("limits and extension list");

    // One small compute program: compiled, then saved and loaded again as a binary (the warm cache).
    const char* src =
        "#version 310 es\nlayout(local_size_x = 256) in;\n"
        "layout(std430, binding = 0) readonly buffer A { float a[]; };\n"
        "layout(std430, binding = 1) readonly buffer B { float b[]; };\n"
        "layout(std430, binding = 2) writeonly buffer C { float c[]; };\n"
        "void main() { uint i = gl_GlobalInvocationID.x; c[i] = a[i] + b[i]; }\n";
    GLuint sh = CreateShader(GL_COMPUTE_SHADER);
    ShaderSource(sh, 1, &src, nullptr);
    CompileShader(sh);
    GLuint prog = CreateProgram();
    AttachShader(prog, sh);
    LinkProgram(prog);
    GLint linked = 0;
    GetProgramiv(prog, GL_LINK_STATUS, &linked);
    if (!linked) die("the compute program did not link");
    DeleteShader(sh);
    s.done("compile + link a compute program (cold)");
    GLint length = 0;
    GetProgramiv(prog, GL_PROGRAM_BINARY_LENGTH, &length);
    std::vector<char> binary(size_t(length > 0 ? length : 1));
    GLenum format = 0;
    GetProgramBinary(prog, length, &length, &format, binary.data());
    DeleteProgram(prog);
    s.done("glGetProgramBinary");
    prog = CreateProgram();
    ProgramBinary(prog, format, binary.data(), length);
    GetProgramiv(prog, GL_LINK_STATUS, &linked);
    if (!linked) die("glProgramBinary did not link");
    s.done("glProgramBinary + link status (warm)");
    const int n = 65536;
    std::vector<float> ones(size_t(n), 1.0f);
    GLuint buf[3];
    GenBuffers(3, buf);
    for (int i = 0; i < 3; ++i) {
        BindBuffer(GL_SHADER_STORAGE_BUFFER, buf[i]);
        BufferData(GL_SHADER_STORAGE_BUFFER, n * 4, i < 2 ? ones.data() : nullptr, GL_DYNAMIC_DRAW);
        BindBufferBase(GL_SHADER_STORAGE_BUFFER, GLuint(i), buf[i]);
    }
    s.done("3 buffers of 256 KiB (2 uploaded)");
    UseProgram(prog);
    auto dispatch_and_read = [&](const char* what) {
        DispatchCompute(n / 256, 1, 1);
        MemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT | GL_SHADER_STORAGE_BARRIER_BIT);
        BindBuffer(GL_SHADER_STORAGE_BUFFER, buf[2]);
        const float* c = static_cast<const float*>(MapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, n * 4, GL_MAP_READ_BIT));
        if (!c || c[0] != 2.0f || c[n - 1] != 2.0f) die("wrong result");
        UnmapBuffer(GL_SHADER_STORAGE_BUFFER);
        s.done(what);
    };
    dispatch_and_read("dispatch + map for reading (first)");
    dispatch_and_read("dispatch + map for reading (second)");

    // What a context costs on another thread, and a second context.
    MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    s.done("eglMakeCurrent(none): release");
    std::thread([&] {
        MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx);
        s.done("eglMakeCurrent (same context, new thread)");
        Finish();
        MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        ReleaseThread();
        s.done("glFinish + release + eglReleaseThread there");
    }).join();
    MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx);
    s.done("eglMakeCurrent (same context, first thread)");
    EGLContext second = CreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs.data());
    if (second == EGL_NO_CONTEXT) die("second eglCreateContext failed");
    s.done("eglCreateContext (second context)");
    MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, second);
    s.done("eglMakeCurrent (second context, first thread)");
    std::thread([&] {
        EGLContext third = CreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs.data());
        s.done("eglCreateContext (third context, new thread)");
        MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, third);
        s.done("eglMakeCurrent (third context, new thread)");
        MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
        DestroyContext(display, third);
        ReleaseThread();
        s.done("release + eglDestroyContext (third)");
    }).join();
    MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    DestroyContext(display, second);
    DestroyContext(display, ctx);
    s.done("release + eglDestroyContext (two)");
    Terminate(display);
    s.done("eglTerminate");
    if (!Initialize(display, &major, &minor)) die("eglInitialize (again) failed");
    s.done("eglInitialize (again, after eglTerminate)");
    ctx = CreateContext(display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attrs.data());
    MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx);
    s.done("eglCreateContext + eglMakeCurrent (after it)");
    MakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    DestroyContext(display, ctx);
    Terminate(display);
    ReleaseThread();
    s.done("release, destroy, eglTerminate");
    (void)cext;
    return 0;
}
