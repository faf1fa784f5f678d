#include "test_hooks.h"

#include "env_value.h"
#include "status.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sstream>
#include <unistd.h>

namespace tgl {
namespace gles {

bool FaultHooks::refuse_alloc(uint64_t bytes) {
    if (!max_bytes) return false;
    uint64_t live = live_bytes.load();
    do {
        if (bytes > max_bytes || live > max_bytes - bytes) return true;
    } while (!live_bytes.compare_exchange_weak(live, live + bytes));
    return false;
}

void FaultHooks::release(uint64_t bytes) {
    if (max_bytes) live_bytes.fetch_sub(bytes);
}

std::shared_ptr<FaultHooks> read_fault_hooks() {
    const char* v = secure_getenv("TGL_GLES_TEST_FAULT");
    if (!v || !*v) return nullptr;
    auto h = std::make_shared<FaultHooks>();
    h->spec = v;
    std::stringstream in(h->spec);
    std::string item;
    while (std::getline(in, item, ',')) {
        size_t eq = item.find('=');
        std::string name = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
        uint64_t n = 0;
        bool has_value = eq != std::string::npos;
        if (name == "compile" && !has_value) {
            h->compile = true;
        } else if (name == "uniform" && !has_value) {
            h->uniform = true;
        } else if (name == "lose" && !has_value) {
            h->lose = true;
        } else if (name == "slow" && (!has_value || parse_decimal(value, 1, 65535, &n))) {
            h->slow = true;
            if (has_value) h->slow_thousands = uint32_t(n);
        } else if (name == "max_bytes" && parse_decimal(value, 1, UINT64_MAX, &n)) {
            h->max_bytes = n;
        } else if (name == "max_window" && parse_decimal(value, 1024, UINT64_MAX, &n)) {
            h->max_window = n;
        } else {
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "TGL_GLES_TEST_FAULT=%s: '%s' is not a test hook (expected a comma-separated list of compile, lose, "
                 "uniform, slow[=<thousands of workgroups, 1..65535>], max_bytes=<bytes > 0>, max_window=<bytes >= 1024>)",
                 v, item.c_str());
        }
    }
    return h;
}

PlanTrace::~PlanTrace() { ::close(fd_); }

void PlanTrace::line(const std::string& text) const {
    const std::string l = text + "\n";
    [[maybe_unused]] const ssize_t n = ::write(fd_, l.data(), l.size());  // a trace, not a result: a short write is left alone
}

std::shared_ptr<PlanTrace> read_plan_trace() {
    const char* v = secure_getenv("TGL_GLES_TEST_PLAN_TRACE");
    if (!v || !*v) return nullptr;
    const int fd = ::open(v, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        fail(TGL_ERROR_INVALID_ARGUMENT, "TGL_GLES_TEST_PLAN_TRACE=%s: cannot open it for appending: %s", v,
             std::strerror(errno));
    return std::make_shared<PlanTrace>(fd);
}

uint32_t read_timeout_ms() {
    return uint32_t(env_number("TGL_GLES_TIMEOUT_MS", 0, 86400000, kDefaultTimeoutMs,
                               "milliseconds (0: no limit), e.g. 60000"));
}

const char* const kSlowShaderSource = R"(#version 310 es
// TGL_GLES_TEST_FAULT=slow: a deliberately long dispatch. Each workgroup (one invocation) runs
// 50,000 steps of a xorshift generator, which has no closed form, and stores the result so that
// nothing is optimised away. (Loops stay below 65,535 iterations: llvmpipe cuts longer ones short.)
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Word { uint w[]; };
void main() {
    uint x = w[0] + gl_WorkGroupID.x + 65536u * gl_WorkGroupID.y;
    for (uint i = 0u; i < 50000u; ++i) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
    }
    if (x == 0u) w[0] = x;  // never true for a non-zero start; the compiler cannot know it
}
)";

}  // namespace gles
}  // namespace tgl
