// The GLES device: opening (limits, tuning, timer), the GPU timer, measured plan choices, the grid split, running an op
// (the family dispatch) and synchronizing. Buffers and transfers: buffers.cpp; submission and
// recorded ops: submission.cpp; waits and device-side errors: device_status.cpp; programs:
// program_cache.cpp (ProgramRegistry).
#include "gles_device.h"

#include "gles_families.h"

#include "env_value.h"
#include "status.h"

#include <algorithm>
#include <cstdint>

namespace tgl {
namespace gles {

namespace {
// TGL_TUNE_STREAM's shape (tuning.h), its workgroup size halved to the device's limits.
StreamShape fit_stream_shape(StreamShape s, const Limits& L) {
    while (s.wg > 32 && (s.wg > L.max_invocations || s.wg > L.max_size[0])) s.wg /= 2;
    while (s.binary_wg > 32 && (s.binary_wg > L.max_invocations || s.binary_wg > L.max_size[0])) s.binary_wg /= 2;
    return s;
}
}  // namespace

GlesDevice::GlesDevice(const DeviceDesc& desc, std::shared_ptr<DeviceStats> stats)
    : gl_(std::make_shared<GlThread>(desc.target, stats ? std::shared_ptr<GlThreadCounters>(stats, &stats->gl) : nullptr)),
      stats_(std::move(stats)) {
    hooks_ = read_fault_hooks();  // a malformed value fails device_open (gl_ is joined on the way out)
    trace_ = read_plan_trace();   // likewise
    tuning_ = read_tuning();      // likewise
    graph_fusion_ = env_number("TGL_GRAPH_FUSION", 0, 1, 1, "0 (graphs replay their ops unfused) or 1 (the default)") != 0;
    gl_->configure(read_timeout_ms());
    const Limits& L = gl_->limits();
    int wg = 256;
    while (wg > 1 && (wg > L.max_invocations || wg > L.max_size[0])) wg /= 2;
    wg_size_ = wg;
    subgroup_size_ = kernel_subgroup_size(L, tuning_.subgroups);
    stream_ = fit_stream_shape(tuning_.stream, L);
    // Test hooks act on the op being planned or submitted, and the plan trace logs each op as it is
    // planned: under either, every op is planned afresh (no op cache).
    if (tuning_.submit.cache > 0 && !hooks_ && !trace_) op_cache_ = std::make_unique<OpCache>(size_t(tuning_.submit.cache));
    bound_->flush_every = uint32_t(tuning_.submit.flush);  // (no GL work is queued yet)
    if (L.max_count[0] < 1 || L.max_count[1] < 1 || L.max_count[2] < 1 || L.max_ssbo_block_bytes < 16 ||
        L.max_compute_ssbo_blocks < 3 || wg < 32) {
        gl_->shutdown();
        fail(TGL_ERROR_DEVICE_UNAVAILABLE,
             "%s: the context's compute limits are too small (workgroup counts %d x %d x %d, %d invocations, "
             "%d SSBO blocks per compute shader, %lld-byte SSBO blocks)",
             desc.target.description.c_str(), L.max_count[0], L.max_count[1], L.max_count[2], L.max_invocations,
             L.max_compute_ssbo_blocks, (long long)L.max_ssbo_block_bytes);
    }
    try {
        gl_->call("opening the device", [this] {
            // Mesa's software drivers offer the extension, but run compute dispatches outside what
            // their GL_TIME_ELAPSED queries measure (they read ~0 ns): no timer there.
            const GLubyte* r = glGetString(GL_RENDERER);
            const std::string renderer = r ? reinterpret_cast<const char*>(r) : "";
            software_timer_ = renderer.find("llvmpipe") != std::string::npos ||
                              renderer.find("softpipe") != std::string::npos;
            // A software renderer runs the dispatches on the CPU's cores: no polling for work there.
            // TGL_TUNE_POLL_US (microseconds) overrides it for tuning sweeps.
            int64_t poll_ns = software_timer_ ? 0 : GlThread::kPollBeforeSleepNs;
            if (tuning_.poll_us >= 0) poll_ns = 1000 * tuning_.poll_us;
            gl_->poll_before_sleep(poll_ns);
            timer_available_ = epoxy_has_gl_extension("GL_EXT_disjoint_timer_query") && !software_timer_;
            GLint stamp_bits = 0;
            if (epoxy_has_gl_extension("GL_EXT_disjoint_timer_query"))
                glGetQueryivEXT(GL_TIMESTAMP_EXT, GL_QUERY_COUNTER_BITS_EXT, &stamp_bits);
            timestamps_ = stamp_bits > 0;
            programs_.bind_driver();
        });
    } catch (...) {
        gl_->shutdown();
        throw;
    }
}

void GlesDevice::timer_begin() {
    if (!timer_available_)
        fail(TGL_ERROR_UNIMPLEMENTED, "this device has no GPU timer: %s",
             software_timer_ ? "Mesa's software driver's GL_TIME_ELAPSED queries do not cover compute dispatches"
                             : "the driver does not offer GL_EXT_disjoint_timer_query");
    gl_->post("timer_begin", [this] {
        if (!timer_query_) glGenQueriesEXT(1, &timer_query_);
        GLint disjoint = 0;
        glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);  // reading it clears it
        glBeginQueryEXT(GL_TIME_ELAPSED_EXT, timer_query_);
    });
}

uint64_t GlesDevice::timer_end(uint32_t* flags) {
    GLuint64 ns = 0;
    GLint disjoint = 0;
    const std::thread::id waiter = std::this_thread::get_id();
    gl_->call("timer_end", [&] {
        glEndQueryEXT(GL_TIME_ELAPSED_EXT);
        wait_idle("timer_end");
        glGetQueryObjectui64vEXT(timer_query_, GL_QUERY_RESULT_EXT, &ns);
        glGetIntegerv(GL_GPU_DISJOINT_EXT, &disjoint);
        read_device_status(waiter);
    });
    raise_device_error();
    gl_->raise_pending();
    *flags = disjoint ? TGL_TIMER_DISJOINT : 0;
    return uint64_t(ns);
}

int GlesDevice::fastest_plan(const std::string& key, const std::function<std::vector<std::vector<Dispatch>>()>& plans,
                             bool anywhere) {
    if (!timestamps_ || (software_timer_ && !anywhere)) return 0;
    {
        std::lock_guard<std::mutex> lock(plans_mutex_);
        const auto it = plan_choice_.find(key);
        if (it != plan_choice_.end()) return it->second;
    }
    const std::vector<std::vector<Dispatch>> ps = plans();
    const size_t n = ps.size();
    if (n < 2) return 0;
    std::vector<uint64_t> best(n, UINT64_MAX);
    gl_->call("measuring a kernel's plans", [&] {
        BoundState& b = *bound_;
        begin_batch(b, gl_.get(), 0);
        GLuint q[2] = {0, 0};
        glGenQueriesEXT(2, q);
        // GPU nanoseconds of `reps` runs of plan i back to back (0: not measured). GL_GPU_DISJOINT_EXT
        // is not read (that would clear it under a user's timer_begin): a disjoint event can only
        // mislead the choice, never change the results.
        const auto batch_ns = [&](size_t i, int reps) -> uint64_t {
            glQueryCounterEXT(q[0], GL_TIMESTAMP_EXT);
            for (int rep = 0; rep < reps; ++rep)
                for (const Dispatch& d : ps[i]) issue(b, d);
            glQueryCounterEXT(q[1], GL_TIMESTAMP_EXT);
            wait_idle("measuring a kernel's plans");
            GLuint64 t0 = 0, t1 = 0;
            glGetQueryObjectui64vEXT(q[0], GL_QUERY_RESULT_EXT, &t0);
            glGetQueryObjectui64vEXT(q[1], GL_QUERY_RESULT_EXT, &t1);
            return t1 > t0 ? t1 - t0 : 0;
        };
        try {
            for (size_t i = 0; i < n; ++i) batch_ns(i, 1);  // untimed: a program's first run may do the driver's lazy work
            // Batches of about kPlanBatchNs, and plan 0 run until its batches settle: a GPU that
            // idled while the programs compiled runs at a low clock at first, and a plan's speed
            // relative to another's is not the same there (the decode GEMV's wg1024 won at a low
            // clock where it loses at full clock).
            const uint64_t one = std::max<uint64_t>(1, batch_ns(0, 1));
            const int reps = int(std::clamp<uint64_t>(kPlanBatchNs / one, 1, 256));
            std::vector<uint64_t> warm;
            for (uint64_t spent = 0; spent < kPlanWarmNs;) {
                warm.push_back(batch_ns(0, reps));
                spent += std::max<uint64_t>(warm.back(), kPlanBatchNs / 4);
                if (warm.size() < 3) continue;
                const auto last = warm.end() - 3;
                if (double(*std::max_element(last, warm.end())) <= (1.0 + kPlanMargin / 2) * double(*std::min_element(last, warm.end())))
                    break;
            }
            uint64_t spent = 0;
            for (int r = 0; r < kPlanRounds && (r < 2 || spent < kPlanWarmNs); ++r)  // long plans: two rounds
                for (size_t k = 0; k < n; ++k) {
                    const size_t i = r % 2 ? n - 1 - k : k;  // the order alternates: a clock still moving favours none
                    const uint64_t t = batch_ns(i, reps);
                    spent += t;
                    if (t > 0) best[i] = std::min(best[i], t);
                }
        } catch (...) {
            glDeleteQueriesEXT(2, q);
            throw;
        }
        glDeleteQueriesEXT(2, q);
    });
    const size_t f = size_t(std::min_element(best.begin(), best.end()) - best.begin());
    const int choice = best[0] != UINT64_MAX && double(best[f]) < (1.0 - kPlanMargin) * double(best[0]) ? int(f) : 0;
    std::lock_guard<std::mutex> lock(plans_mutex_);
    plan_choice_.emplace(key, choice);
    return choice;
}

GlesDevice::~GlesDevice() {
    op_cache_.reset();
    {
        std::lock_guard<std::mutex> lock(scratch_mutex_);
        scratch_.reset();
    }
    {
        std::lock_guard<std::mutex> lock(status_mutex_);
        status_.reset();
    }
    gl_->shutdown();
}

std::vector<GridChunk> GlesDevice::split_grid(uint64_t groups) const {
    std::vector<GridChunk> chunks;
    uint64_t max_x = uint64_t(limits().max_count[0]), max_y = uint64_t(limits().max_count[1]);
    uint64_t per = max_x * max_y;
    for (uint64_t base = 0; base < groups;) {
        // y rows of x workgroups, x no wider than the rows need: 70,001 workgroups run as 2 x 35,001,
        // not 2 x 65,535 (61,069 more that only find themselves past the end).
        uint64_t n = std::min(groups - base, per);
        uint64_t y = (n + max_x - 1) / max_x;
        uint64_t x = (n + y - 1) / y;
        chunks.push_back(GridChunk{uint32_t(base), uint32_t(x), uint32_t(y)});
        base += n;
    }
    return chunks;
}

void GlesDevice::fill(const BufferRef& dst, uint64_t offset, uint64_t bytes, const void* pattern,
                      uint32_t pattern_size) {
    run_fill(*this, dst, offset, bytes, pattern, pattern_size);
}

void GlesDevice::run(const OpCall& call) {
    try {
        if (run_cached(call)) return;  // planned before with these operands (op_cache.h)
        if (is_block_call(call)) return run_block_call(*this, call);  // windows of its own (gguf_kernels.cpp)
        if (run_in_pieces(*this, call)) return;  // an operand larger than one SSBO window
        gles_family(*call.info).run(*this, call);
    } catch (const Error& e) {
        if (trace_) trace_->line(std::string(call.info->name) + "\t! refused: status " + std::to_string(int(e.status())));
        throw;
    }
}

void GlesDevice::synchronize() {
    const std::thread::id waiter = std::this_thread::get_id();
    gl_->call("synchronize", [this, waiter] {
        wait_idle("synchronize");
        read_device_status(waiter);
    });
    {
        // Idle now: a large scratch buffer is not kept held (see scratch()).
        std::lock_guard<std::mutex> lock(scratch_mutex_);
        if (scratch_ && scratch_->size() > kScratchKeepBytes) {
            scratch_.reset();
            const uint64_t gen = ++scratch_gen_;
            if (op_cache_) op_cache_->drop_before(gen);  // (entries holding it)
        }
    }
    raise_device_error();
    gl_->raise_pending();
}

void GlesDevice::synchronize_for_close() {
    synchronize();
    errors_->raise_any();
}

}  // namespace gles
}  // namespace tgl
