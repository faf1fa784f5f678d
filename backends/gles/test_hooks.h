// Fault injection for tests (TGL_GLES_TEST_FAULT), and the dispatch time limit (TGL_GLES_TIMEOUT_MS).
// Both are read with secure_getenv when a device is opened, so a test can open one faulty device
// beside healthy ones. The hooks are for tests, not for production: each one drives the same code
// path as the real fault it stands for.
//   TGL_GLES_TEST_FAULT=<hook>[,<hook>...]
//     compile        the next shader variant the device compiles gets a syntax error appended
//                    (the driver's own compile log is reported, the variant is not cached)
//     lose           the next wait (synchronize, buffer_download, device_close) finds the context
//                    reset, as glGetGraphicsResetStatus would say after a GPU reset
//     slow[=K]       the next op that dispatches runs a long dispatch first: K thousand
//                    workgroups of 50,000 loop steps each (default 200: seconds on llvmpipe)
//     max_bytes=N    buffer_alloc is refused as GL_OUT_OF_MEMORY once the device's live buffers
//                    would exceed N bytes
//     uniform        the next op's first dispatch also sets a uniform its shader does not declare
//                    (u_undeclared_by_test_hook): a plugin bug that a build with
//                    TGL_GLES_CHECK_UNIFORMS reports (INTERNAL) and any other build skips
//     max_window=N   one SSBO binding covers at most N bytes (N >= 1024), as if the device's
//                    GL_MAX_SHADER_STORAGE_BLOCK_SIZE were N: ops on larger operands run in pieces
//                    (window_split.cpp), which small tensors then exercise quickly
//   TGL_GLES_TEST_PLAN_TRACE=<file>: every dispatch an op submits (or a graph records) is appended
//     to the file as one line, "<op>\t<program: file [defines]>\t<workgroups x,y,z>", written by
//     the thread that runs the op; tools/plan-cases.py compares two runs' plans case by case.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace tgl {
namespace gles {

struct FaultHooks {
    std::string spec;  // the variable's value, for messages
    std::atomic<bool> compile{false};
    std::atomic<bool> lose{false};
    std::atomic<bool> slow{false};
    std::atomic<bool> uniform{false};
    uint32_t slow_thousands = 200;
    uint64_t max_bytes = 0;  // 0: no limit
    uint64_t max_window = 0;  // 0: the device's own limit
    std::atomic<uint64_t> live_bytes{0};

    // max_bytes accounting of a buffer store of `bytes`: true if it must be refused.
    bool refuse_alloc(uint64_t bytes);
    void release(uint64_t bytes);
};

// Parses TGL_GLES_TEST_FAULT; nullptr when unset or empty. Throws Error(INVALID_ARGUMENT) naming
// the variable for a malformed value.
std::shared_ptr<FaultHooks> read_fault_hooks();

// TGL_GLES_TEST_PLAN_TRACE: the open file (append-only) that dispatches are traced to.
class PlanTrace {
public:
    explicit PlanTrace(int fd) : fd_(fd) {}
    ~PlanTrace();
    PlanTrace(const PlanTrace&) = delete;
    PlanTrace& operator=(const PlanTrace&) = delete;
    // Appends one line in a single write (lines of several devices and threads never interleave).
    void line(const std::string& text) const;

private:
    int fd_;
};
// nullptr when unset or empty. Throws Error(INVALID_ARGUMENT) naming the variable when the file
// cannot be opened for appending (a symlink is refused).
std::shared_ptr<PlanTrace> read_plan_trace();

// TGL_GLES_TIMEOUT_MS: milliseconds a wait lets one piece of GL work run before the device is
// declared lost (0: no limit). Default kDefaultTimeoutMs. Throws Error(INVALID_ARGUMENT).
constexpr uint32_t kDefaultTimeoutMs = 60000;
uint32_t read_timeout_ms();

// GLSL of the `slow` hook's shader: binding 0 = one uint; any number of workgroups.
extern const char* const kSlowShaderSource;

}  // namespace gles
}  // namespace tgl
