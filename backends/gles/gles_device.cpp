#include "gles_device.h"

#include "gles_families.h"

#include "status.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>

namespace tgl {
namespace gles {

UniformValue uniform_int(const char* name, std::vector<int32_t> values) {
    UniformValue u{name, UniformValue::Int, {}};
    u.bits.resize(values.size());
    std::memcpy(u.bits.data(), values.data(), values.size() * 4);
    return u;
}

UniformValue uniform_uint(const char* name, std::vector<uint32_t> values) {
    return UniformValue{name, UniformValue::Uint, std::move(values)};
}

UniformValue uniform_float(const char* name, float value) {
    UniformValue u{name, UniformValue::Float, {0}};
    std::memcpy(u.bits.data(), &value, 4);
    return u;
}

namespace {

GlesBuffer& gl_buffer(const BufferRef& b) { return static_cast<GlesBuffer&>(*b); }

// Size of the GL buffer store behind a buffer of `bytes`: a multiple of 4 (the shaders address
// 32-bit words) and never 0 (so that any buffer can be bound).
int64_t store_bytes(uint64_t bytes) { return int64_t(std::max<uint64_t>(4, (bytes + 3) & ~uint64_t(3))); }

// Sets uniform `d` of `p` (the program's record of u.name) to u's value.
void set_uniform_at(const Program& p, const Program::Uniform& d, const UniformValue& u) {
    GLsizei n = GLsizei(u.bits.size());
    const void* v = u.bits.data();
    auto expect = [&](UniformValue::Kind k, int comps) {
        if (u.kind != k || n % comps != 0)
            fail(TGL_ERROR_INTERNAL, "uniform %s of %s: value kind/count does not match its GLSL type 0x%04x",
                 u.name.c_str(), p.label.c_str(), unsigned(d.type));
        return std::min<GLsizei>(n / comps, d.size);
    };
    if (d.set && d.last == u.bits) return;  // a program keeps its uniform values
    d.last = u.bits;
    d.set = true;
    switch (d.type) {
    case GL_INT: glUniform1iv(d.location, expect(UniformValue::Int, 1), static_cast<const GLint*>(v)); break;
    case GL_UNSIGNED_INT: glUniform1uiv(d.location, expect(UniformValue::Uint, 1), static_cast<const GLuint*>(v)); break;
    case GL_FLOAT: glUniform1fv(d.location, expect(UniformValue::Float, 1), static_cast<const GLfloat*>(v)); break;
    case GL_UNSIGNED_INT_VEC3: glUniform3uiv(d.location, expect(UniformValue::Uint, 3), static_cast<const GLuint*>(v)); break;
    case GL_UNSIGNED_INT_VEC4: glUniform4uiv(d.location, expect(UniformValue::Uint, 4), static_cast<const GLuint*>(v)); break;
    default:
        fail(TGL_ERROR_INTERNAL, "uniform %s of %s has GLSL type 0x%04x, which the plugin does not set",
             u.name.c_str(), p.label.c_str(), unsigned(d.type));
    }
}

// The program's record of uniform `name`; nullptr when the driver optimised it away.
const Program::Uniform* find_uniform(const Program& p, const std::string& name) {
    auto it = p.uniforms.find(name);
    return it == p.uniforms.end() ? nullptr : &it->second;
}

void set_uniform(const Program& p, const UniformValue& u) {
    if (const Program::Uniform* d = find_uniform(p, u.name)) set_uniform_at(p, *d, u);
}

// TGL_GLES_TEST_FAULT=slow: `thousands` x 1000 workgroups of a long loop, issued on the GL thread
// before the op's own dispatches (so that the op is what runs past the time limit).
void run_slow_dispatch(uint32_t thousands) {
    ShaderSource src;
    src.text = kSlowShaderSource;
    src.legend = "source 0 = the slow test hook";
    src.label = "slow test hook";
    Program p = compile_program(src);
    GLuint buf = 0;
    const uint32_t seed = 1;
    glGenBuffers(1, &buf);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf);
    glBufferData(GL_SHADER_STORAGE_BUFFER, sizeof seed, &seed, GL_DYNAMIC_COPY);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, buf);
    glUseProgram(p.id);
    glDispatchCompute(1000, thousands, 1);
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    glDeleteBuffers(1, &buf);  // GL deletes both once the dispatch is done with them
    glDeleteProgram(p.id);
}

int uniform_components(GLenum type) {
    switch (type) {
    case GL_INT_VEC2: case GL_UNSIGNED_INT_VEC2: case GL_FLOAT_VEC2: case GL_BOOL_VEC2: return 2;
    case GL_INT_VEC3: case GL_UNSIGNED_INT_VEC3: case GL_FLOAT_VEC3: case GL_BOOL_VEC3: return 3;
    case GL_INT_VEC4: case GL_UNSIGNED_INT_VEC4: case GL_FLOAT_VEC4: case GL_BOOL_VEC4: return 4;
    default: return 1;
    }
}

// Every kernel stays within the device's limits (the driver's, or the OpenGL ES 3.1 minima under
// TGL_GLES_LIMITS=minimum, which a driver with larger limits would not enforce itself): checks a
// linked program's SSBO blocks and binding points, workgroup size and default-block uniform
// components. (Shared memory cannot be queried: each kernel sizes its shared arrays from
// max_shared_bytes or workgroup_size().) A violation is a plugin bug: INTERNAL.
void check_program_limits(const Program& p, const Limits& L) {
    GLint blocks = 0;
    glGetProgramInterfaceiv(p.id, GL_SHADER_STORAGE_BLOCK, GL_ACTIVE_RESOURCES, &blocks);
    if (blocks > L.max_compute_ssbo_blocks)
        fail(TGL_ERROR_INTERNAL, "compute program %s uses %d shader storage blocks; this device allows %d%s", p.label.c_str(),
             blocks, L.max_compute_ssbo_blocks, L.minimum ? " (TGL_GLES_LIMITS=minimum)" : "");
    for (GLint i = 0; i < blocks; ++i) {
        const GLenum prop = GL_BUFFER_BINDING;
        GLint binding = 0;
        glGetProgramResourceiv(p.id, GL_SHADER_STORAGE_BLOCK, GLuint(i), 1, &prop, 1, nullptr, &binding);
        if (binding >= L.max_ssbo_bindings)
            fail(TGL_ERROR_INTERNAL, "compute program %s uses SSBO binding point %d; this device has %d%s", p.label.c_str(),
                 binding, L.max_ssbo_bindings, L.minimum ? " (TGL_GLES_LIMITS=minimum)" : "");
    }
    GLint size[3] = {0, 0, 0};
    glGetProgramiv(p.id, GL_COMPUTE_WORK_GROUP_SIZE, size);
    if (size[0] > L.max_size[0] || size[1] > L.max_size[1] || size[2] > L.max_size[2] ||
        int64_t(size[0]) * size[1] * size[2] > L.max_invocations)
        fail(TGL_ERROR_INTERNAL, "compute program %s has workgroups of %d x %d x %d; this device allows %d x %d x %d and %d "
             "invocations%s", p.label.c_str(), size[0], size[1], size[2], L.max_size[0], L.max_size[1], L.max_size[2],
             L.max_invocations, L.minimum ? " (TGL_GLES_LIMITS=minimum)" : "");
    int components = 0;
    for (const auto& u : p.uniforms) components += uniform_components(u.second.type) * u.second.size;
    if (L.max_compute_uniform_components > 0 && components > L.max_compute_uniform_components)
        fail(TGL_ERROR_INTERNAL, "compute program %s uses %d uniform components; this device allows %d%s", p.label.c_str(),
             components, L.max_compute_uniform_components, L.minimum ? " (TGL_GLES_LIMITS=minimum)" : "");
}

}  // namespace

// A fence (no glFinish), waited for at most the time limit; then the reset check.
void GlesDevice::wait_idle(const char* what) {
    GLsync sync = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!sync) fail(TGL_ERROR_BACKEND_FAILURE, "%s: glFenceSync failed", what);
    const uint32_t limit = gl_->timeout_ms();
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        GLenum r = glClientWaitSync(sync, GL_SYNC_FLUSH_COMMANDS_BIT, 100000000ull);  // 100 ms slices
        if (r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED) break;
        if (r == GL_WAIT_FAILED) {
            glDeleteSync(sync);
            gl_->check_reset(what, false);  // a lost context fails its waits
            fail(TGL_ERROR_BACKEND_FAILURE, "%s: glClientWaitSync failed", what);
        }
        // GL_TIMEOUT_EXPIRED: the GPU is still busy.
        long long ms = (long long)std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start).count();
        if (limit && ms > (long long)limit) {
            glDeleteSync(sync);
            std::string m = format("%s: the GPU has not finished the queued work after %lld ms, past the time limit of "
                                   "%u ms (TGL_GLES_TIMEOUT_MS)", what, ms, limit);
            gl_->mark_lost(m);
            fail(TGL_ERROR_DEVICE_UNAVAILABLE, "device lost: %s", m.c_str());
        }
    }
    glDeleteSync(sync);
    gl_->check_reset(what, hooks_ && hooks_->lose.exchange(false));
}

std::shared_ptr<StagingPool::Block> StagingPool::get(size_t bytes) {
    std::unique_ptr<Block> block;
    {
        // Best fit among idle blocks that are not more than twice too large.
        std::lock_guard<std::mutex> lock(mutex_);
        size_t best = idle_.size();
        for (size_t i = 0; i < idle_.size(); ++i)
            if (idle_[i]->capacity >= bytes && idle_[i]->capacity / 2 <= bytes &&
                (best == idle_.size() || idle_[i]->capacity < idle_[best]->capacity))
                best = i;
        if (best < idle_.size()) {
            block = std::move(idle_[best]);
            idle_.erase(idle_.begin() + long(best));
            idle_bytes_ -= block->capacity;
        }
    }
    if (!block) {
        block.reset(new Block);
        block->capacity = std::max<size_t>(bytes, 1);
        block->data.reset(new uint8_t[block->capacity]);  // uninitialised: it is overwritten at once
    }
    block->size = bytes;
    std::weak_ptr<StagingPool> pool = shared_from_this();
    return std::shared_ptr<Block>(block.release(), [pool](Block* b) {
        if (auto p = pool.lock()) p->put(b);
        else delete b;
    });
}

void StagingPool::put(Block* b) {
    std::unique_ptr<Block> block(b);
    std::lock_guard<std::mutex> lock(mutex_);
    if (block->capacity > kMaxIdleBytes) return;
    // Keep the most recent blocks: drop the oldest until the new one fits.
    while (!idle_.empty() && idle_bytes_ + block->capacity > kMaxIdleBytes) {
        idle_bytes_ -= idle_.front()->capacity;
        idle_.erase(idle_.begin());
    }
    idle_bytes_ += block->capacity;
    idle_.push_back(std::move(block));
}

namespace {
// TGL_TUNE_STREAM's shape (tuning.h), its workgroup size halved to the device's limits.
StreamShape fit_stream_shape(StreamShape s, const Limits& L) {
    while (s.wg > 32 && (s.wg > L.max_invocations || s.wg > L.max_size[0])) s.wg /= 2;
    return s;
}
}  // namespace

GlesDevice::GlesDevice(const DeviceDesc& desc, std::shared_ptr<DeviceStats> stats)
    : gl_(std::make_shared<GlThread>(desc.target, stats ? std::shared_ptr<GlThreadCounters>(stats, &stats->gl) : nullptr)),
      stats_(std::move(stats)) {
    hooks_ = read_fault_hooks();  // a malformed value fails device_open (gl_ is joined on the way out)
    tuning_ = read_tuning();      // likewise
    gl_->configure(read_timeout_ms());
    const Limits& L = gl_->limits();
    int wg = 256;
    while (wg > 1 && (wg > L.max_invocations || wg > L.max_size[0])) wg /= 2;
    wg_size_ = wg;
    stream_ = fit_stream_shape(tuning_.stream, L);
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
            cache_.bind_driver();
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

GlesDevice::~GlesDevice() {
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

int64_t GlesDevice::max_window_bytes() const {
    int64_t cap = int64_t(INT32_MAX) + 1 - window_alignment();
    if (hooks_ && hooks_->max_window) cap = std::min<int64_t>(cap, std::max<int64_t>(int64_t(hooks_->max_window), 4 * window_alignment()));
    return std::min<int64_t>(limits().max_ssbo_block_bytes, cap) & ~int64_t(3);
}

int64_t GlesDevice::window_alignment() const {
    return std::lcm<int64_t>(limits().ssbo_offset_alignment, 16);
}

int64_t GlesDevice::window_bytes(const TensorArg& t) const {
    if (t.byte_hi <= t.byte_lo) return 0;
    const int64_t start = t.byte_lo - t.byte_lo % window_alignment();
    return (t.byte_hi - start + 3) & ~int64_t(3);  // whole words (the store is padded to them)
}

Binding GlesDevice::window(const TensorArg& t, const char* what, int32_t* elem_offset) const {
    int64_t align = window_alignment();
    int64_t start = t.byte_lo - t.byte_lo % align;
    int64_t size = window_bytes(t);
    if (t.byte_hi <= t.byte_lo)
        fail(TGL_ERROR_INTERNAL, "%s: window of an empty view", what);
    if (size > max_window_bytes())
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "%s: the view spans bytes [%lld, %lld) of its buffer (%lld bytes), but one shader storage block on "
             "this device covers at most %lld bytes (GL_MAX_SHADER_STORAGE_BLOCK_SIZE = %lld)",
             what, (long long)t.byte_lo, (long long)t.byte_hi, (long long)(t.byte_hi - t.byte_lo),
             (long long)max_window_bytes(), (long long)limits().max_ssbo_block_bytes);
    const int64_t es = tgl_dtype_size(t.dtype);
    int64_t rel = (t.offset * es - start) / es;  // exact: start is 16-byte aligned; fits in 32 bits
    if (rel < 0 || rel > INT32_MAX)
        fail(TGL_ERROR_INTERNAL, "%s: element offset %lld outside its window", what, (long long)rel);
    *elem_offset = int32_t(rel);
    Binding b;
    b.keep = t.buffer;
    b.name = gl_buffer(t.buffer).name();
    b.offset = start;
    b.size = size;
    return b;
}

std::vector<GridChunk> GlesDevice::split_grid(uint64_t groups) const {
    std::vector<GridChunk> chunks;
    uint64_t max_x = uint64_t(limits().max_count[0]), max_y = uint64_t(limits().max_count[1]);
    uint64_t per = max_x * max_y;
    for (uint64_t base = 0; base < groups;) {
        uint64_t n = std::min(groups - base, per);
        uint64_t x = std::min(n, max_x);
        uint64_t y = (n + x - 1) / x;
        chunks.push_back(GridChunk{uint32_t(base), uint32_t(x), uint32_t(y)});
        base += n;
    }
    return chunks;
}

std::shared_ptr<const Program> GlesDevice::program(const std::string& file, const Defines& defines) {
    // Fast path (every op): the variant (file + defines) was seen before; found by a hash of its
    // parts and compared part by part, with no string built. The programs themselves are keyed by
    // their full source text, so two variants that expand to the same source share one program.
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the parts, each followed by a separator
    auto mix = [&h](const std::string& s) {
        for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
        h = (h ^ 0xffu) * 1099511628211ull;
    };
    mix(file);
    for (const auto& d : defines) {
        mix(d.first);
        mix(d.second);
    }
    {
        std::lock_guard<std::mutex> lock(programs_mutex_);
        auto range = variants_.equal_range(h);
        for (auto it = range.first; it != range.second; ++it)
            if (it->second.file == file && it->second.defines == defines) return it->second.program;
    }
    ShaderSource src = build_shader_source(file, defines);
    ProgramCache::tag_source(src);
    std::shared_ptr<const Program> result;
    {
        std::lock_guard<std::mutex> lock(programs_mutex_);
        auto it = programs_.find(src.text);
        if (it != programs_.end()) result = it->second;
    }
    if (!result) {
        gl_->call("compiling a compute shader", [&] {
            {
                // Another host thread may have compiled it while this call waited in the queue.
                std::lock_guard<std::mutex> lock(programs_mutex_);
                auto it = programs_.find(src.text);
                if (it != programs_.end()) {
                    result = it->second;
                    return;
                }
            }
            std::shared_ptr<Program> p;
            bool fresh = true;  // compiled here (not from the disk cache)
            if (hooks_ && hooks_->compile.exchange(false)) {
                ShaderSource bad = src;  // TGL_GLES_TEST_FAULT=compile: the driver rejects this variant
                bad.text += "#line 1 0\nthis is not GLSL (injected by TGL_GLES_TEST_FAULT=compile);\n";
                bad.label += " (with a syntax error injected by TGL_GLES_TEST_FAULT=compile)";
                p = std::make_shared<Program>(compile_program(bad));
            } else {
                Program cached = cache_.load(src, stats_->cache);
                fresh = cached.id == 0;
                if (fresh) stats_->cache.misses.fetch_add(1, std::memory_order_relaxed);
                p = std::make_shared<Program>(fresh ? compile_program(src) : std::move(cached));
            }
            try {
                check_program_limits(*p, limits());
            } catch (...) {
                glDeleteProgram(p->id);
                throw;
            }
            if (fresh) cache_.store(src, *p, stats_->cache);
            if (::secure_getenv("TGL_GLES_DEBUG"))
                std::fprintf(stderr, "tensorgl-gles: %s %s\n", fresh ? "compiled" : "loaded from the program cache",
                             src.label.c_str());
            std::lock_guard<std::mutex> lock(programs_mutex_);
            programs_.emplace(src.text, p);
            result = p;
        });
    }
    std::lock_guard<std::mutex> lock(programs_mutex_);
    auto range = variants_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it)
        if (it->second.file == file && it->second.defines == defines) return it->second.program;
    variants_.emplace(h, Variant{file, defines, result});
    return result;
}

BufferRef GlesDevice::scratch(uint64_t bytes) {
    std::lock_guard<std::mutex> lock(scratch_mutex_);
    if (!scratch_ || scratch_->size() < bytes) {
        scratch_.reset();  // the old one goes once the work queued with it is done
        scratch_ = alloc_buffer(std::max<uint64_t>(bytes, 1u << 16), false);
    }
    return scratch_;
}

namespace {
// record(): the dispatches submit() captures on this thread, for this device.
struct Capture {
    const GlesDevice* dev;
    std::vector<Dispatch>* out;
};
thread_local Capture* t_capture = nullptr;

// A recorded op: its dispatches, and where they set u_check_seq (dispatch, uniform, and which of
// the op's device checks: an op has one, but nothing here assumes it).
struct GlesRecordedOp : Device::RecordedOp {
    struct SeqSlot {
        uint32_t dispatch, uniform, check;
    };
    std::vector<Dispatch> ds;
    std::vector<SeqSlot> seqs;
    uint32_t checks = 0;
    // Each dispatch's uniforms resolved to the program's records once (a replay does no name
    // lookups): dispatch i's start at uniform_at[i] in `uniforms`; nullptr: optimised away.
    std::vector<const Program::Uniform*> uniforms;
    std::vector<uint32_t> uniform_at;
};
}  // namespace

void GlesDevice::begin_batch(BoundState& b, GlThread* gl, uint32_t slow) {
    if (slow) {
        run_slow_dispatch(slow);
        b = BoundState{};  // it bound its own program and buffer
    }
    if (b.deletions != gl->deletions()) {  // a name may have been reused: bind everything again
        b.ssbo.clear();
        b.deletions = gl->deletions();
    }
}

void GlesDevice::issue(BoundState& b, const Dispatch& d, const Program::Uniform* const* resolved, int seq_uniform,
                       uint32_t seq) {
    if (b.program != d.program->id) {
        glUseProgram(d.program->id);
        b.program = d.program->id;
    }
    if (b.ssbo.size() < d.bindings.size()) b.ssbo.resize(d.bindings.size());
    for (size_t i = 0; i < d.bindings.size(); ++i) {
        const Binding& want = d.bindings[i];
        Binding& have = b.ssbo[i];
        if (have.name == want.name && have.offset == want.offset && have.size == want.size && want.name)
            continue;
        glBindBufferRange(GL_SHADER_STORAGE_BUFFER, GLuint(i), want.name, GLintptr(want.offset),
                          GLsizeiptr(want.size));
        have.name = want.name;
        have.offset = want.offset;
        have.size = want.size;
    }
    if (!resolved) {
        for (const UniformValue& u : d.uniforms) set_uniform(*d.program, u);
    } else {
        for (size_t k = 0; k < d.uniforms.size(); ++k) {
            if (!resolved[k]) continue;  // optimised away by the driver
            if (int(k) != seq_uniform) {
                set_uniform_at(*d.program, *resolved[k], d.uniforms[k]);
                continue;
            }
            UniformValue u = d.uniforms[k];
            u.bits.assign(1, seq);
            set_uniform_at(*d.program, *resolved[k], u);
        }
    }
    glDispatchCompute(d.groups[0], d.groups[1], d.groups[2]);
    // Later dispatches read what this one wrote; copies and maps too.
    glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
}

void GlesDevice::submit(const char* what, std::vector<Dispatch> dispatches) {
    if (t_capture && t_capture->dev == this) {  // recording (record()): kept, not queued
        for (Dispatch& d : dispatches) t_capture->out->push_back(std::move(d));
        return;
    }
    uint32_t slow = hooks_ && hooks_->slow.exchange(false) ? hooks_->slow_thousands : 0;
    // An op with a device check: whose it was, for the errors it may raise (device_errors.h).
    const bool checked = std::any_of(dispatches.begin(), dispatches.end(), [](const Dispatch& d) {
        return std::any_of(d.uniforms.begin(), d.uniforms.end(), [](const UniformValue& u) { return u.name == "u_check_seq"; });
    });
    gl_->post(what, [ds = std::move(dispatches), slow, bound = bound_, gl = gl_.get(), errors = checked ? errors_ : nullptr,
                     by = std::this_thread::get_id()] {
        BoundState& b = *bound;
        begin_batch(b, gl, slow);
        for (const Dispatch& d : ds) issue(b, d);
        if (errors) errors->ran_checked(by);
    });
}

std::vector<Dispatch> GlesDevice::capture(const std::function<void()>& plan) {
    std::vector<Dispatch> out;
    Capture capture{this, &out};
    Capture* outer = t_capture;
    t_capture = &capture;
    try {
        plan();
    } catch (...) {
        t_capture = outer;
        throw;
    }
    t_capture = outer;
    return out;
}

std::shared_ptr<Device::RecordedOp> GlesDevice::record(const OpCall& call) {
    auto op = std::make_shared<GlesRecordedOp>();
    op->ds = capture([&] { run(call); });
    // Where the op sets u_check_seq: each distinct recorded value is one device check.
    std::vector<uint32_t> recorded;
    for (size_t i = 0; i < op->ds.size(); ++i) {
        const std::vector<UniformValue>& us = op->ds[i].uniforms;
        for (size_t k = 0; k < us.size(); ++k) {
            if (us[k].name != "u_check_seq" || us[k].bits.size() != 1) continue;
            auto it = std::find(recorded.begin(), recorded.end(), us[k].bits[0]);
            if (it == recorded.end()) it = recorded.insert(recorded.end(), us[k].bits[0]);
            op->seqs.push_back({uint32_t(i), uint32_t(k), uint32_t(it - recorded.begin())});
        }
    }
    op->checks = uint32_t(recorded.size());
    for (const Dispatch& d : op->ds) {
        op->uniform_at.push_back(uint32_t(op->uniforms.size()));
        for (const UniformValue& u : d.uniforms) op->uniforms.push_back(find_uniform(*d.program, u.name));
    }
    return op;
}

void GlesDevice::next_check_seqs(std::vector<uint32_t>& out, size_t n) {
    std::lock_guard<std::mutex> lock(status_mutex_);
    for (size_t i = 0; i < n; ++i) {
        if (++check_seq_ == 0) check_seq_ = 1;  // 0 means "none"
        out.push_back(check_seq_);
    }
}

void GlesDevice::replay(const RecordedOps& ops) {
    size_t checks = 0;
    for (const auto& op : *ops) checks += static_cast<const GlesRecordedOp&>(*op).checks;
    std::vector<uint32_t> seqs;
    if (checks) next_check_seqs(seqs, checks);
    uint32_t slow = hooks_ && hooks_->slow.exchange(false) ? hooks_->slow_thousands : 0;
    gl_->post("graph_replay", [ops, seqs = std::move(seqs), slow, bound = bound_, gl = gl_.get(),
                               errors = checks ? errors_ : nullptr, by = std::this_thread::get_id()] {
        BoundState& b = *bound;
        begin_batch(b, gl, slow);
        size_t first_seq = 0;  // the current op's first fresh sequence number in seqs
        for (const auto& o : *ops) {
            const GlesRecordedOp& op = static_cast<const GlesRecordedOp&>(*o);
            size_t next = 0;  // op.seqs is in dispatch order
            for (size_t i = 0; i < op.ds.size(); ++i) {
                const Program::Uniform* const* resolved = op.uniforms.data() + op.uniform_at[i];
                if (next < op.seqs.size() && op.seqs[next].dispatch == i) {
                    // (a dispatch sets u_check_seq once)
                    const auto& slot = op.seqs[next++];
                    issue(b, op.ds[i], resolved, int(slot.uniform), seqs[first_seq + slot.check]);
                } else {
                    issue(b, op.ds[i], resolved);
                }
            }
            first_seq += op.checks;
        }
        if (errors) errors->ran_checked(by);
    });
}

namespace {
// device_status.glsl's words when no error is recorded.
const uint32_t kStatusClear[8] = {0, 0, 0xffffffffu, 0, 0, 0, 0, 0};
}  // namespace

GlesDevice::DeviceCheck GlesDevice::device_check() {
    std::lock_guard<std::mutex> lock(status_mutex_);
    if (!status_) {
        BufferRef b = alloc_buffer(sizeof kStatusClear, false);
        upload(b, 0, kStatusClear, sizeof kStatusClear);
        status_ = b;
    }
    if (++check_seq_ == 0) check_seq_ = 1;  // 0 means "none"
    Binding b;
    b.keep = status_;
    b.name = gl_buffer(status_).name();
    b.size = sizeof kStatusClear;
    return DeviceCheck{b, check_seq_};
}

void GlesDevice::read_device_status(std::thread::id waiter) {
    BufferRef status;
    {
        std::lock_guard<std::mutex> lock(status_mutex_);
        status = status_;
    }
    if (!status) return;  // no op has had a device check
    uint32_t w[8];
    glBindBuffer(GL_COPY_READ_BUFFER, gl_buffer(status).name());
    const void* p = glMapBufferRange(GL_COPY_READ_BUFFER, 0, sizeof w, GL_MAP_READ_BIT);
    if (!p) {
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        fail(TGL_ERROR_BACKEND_FAILURE, "reading the device status: glMapBufferRange failed (GL error 0x%04x)",
             unsigned(glGetError()));
    }
    std::memcpy(w, p, sizeof w);
    glUnmapBuffer(GL_COPY_READ_BUFFER);
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    if (w[1] == 0) {
        errors_->status_read(nullptr, waiter);
        return;
    }
    glBindBuffer(GL_COPY_WRITE_BUFFER, gl_buffer(status).name());
    glBufferSubData(GL_COPY_WRITE_BUFFER, 0, sizeof kStatusClear, kStatusClear);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    const tgl_status code = tgl_status(w[4]);
    const OpInfo* info = find_op(tgl_op(w[5]));
    const Error error =
        code == TGL_ERROR_INDEX_OUT_OF_RANGE && info
            ? Error(code, format("%s (found on the GPU while running an op queued earlier)",
                                 index_out_of_range_message(*info, int64_t(w[2]), int64_t(int32_t(w[3])), int64_t(w[6]),
                                                            int(w[7]))
                                     .c_str()))
            : Error(code != TGL_OK ? code : TGL_ERROR_INTERNAL,
                    format("op %s (id %u), queued earlier, raised %s on the GPU (position %u, value %u, details %u, %u)",
                           info ? info->name : "?", w[5], tgl_status_name(code), w[2], w[3], w[6], w[7]));
    errors_->status_read(&error, waiter);
}

BufferRef GlesDevice::alloc(uint64_t bytes) { return alloc_buffer(bytes, true); }

BufferRef GlesDevice::alloc_buffer(uint64_t bytes, bool user) {
    const Limits& L = limits();
    if (bytes > L.max_buffer_bytes || bytes > uint64_t(INT64_MAX) - 4)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "bytes = %llu, but this device allocates at most %llu bytes per buffer (%s)",
             (unsigned long long)bytes, (unsigned long long)L.max_buffer_bytes, L.max_buffer_reason);
    GLuint name = 0;
    gl_->call("buffer_alloc", [&] {
        glGenBuffers(1, &name);
        glBindBuffer(GL_COPY_WRITE_BUFFER, name);
        glBufferData(GL_COPY_WRITE_BUFFER, GLsizeiptr(store_bytes(bytes)), nullptr, GL_DYNAMIC_COPY);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        GLenum e = glGetError();
        // TGL_GLES_TEST_FAULT=max_bytes=N: refused as the driver would refuse it.
        bool simulated = e == GL_NO_ERROR && hooks_ && hooks_->refuse_alloc(uint64_t(store_bytes(bytes)));
        if (simulated) e = GL_OUT_OF_MEMORY;
        if (e != GL_NO_ERROR) {
            glDeleteBuffers(1, &name);
            name = 0;
            while (glGetError() != GL_NO_ERROR) {
            }
            if (e == GL_OUT_OF_MEMORY)
                fail(TGL_ERROR_RESOURCE_EXHAUSTED, "the driver is out of memory for a %llu-byte buffer (GL_OUT_OF_MEMORY%s)",
                     (unsigned long long)bytes,
                     simulated ? format(", simulated: TGL_GLES_TEST_FAULT=%s with %llu bytes live", hooks_->spec.c_str(),
                                        (unsigned long long)hooks_->live_bytes.load()).c_str()
                               : "");
            fail(TGL_ERROR_BACKEND_FAILURE, "glBufferData of %llu bytes failed with GL error 0x%04x",
                 (unsigned long long)bytes, unsigned(e));
        }
    });
    return std::make_shared<GlesBuffer>(bytes, name, gl_, hooks_, uint64_t(store_bytes(bytes)), stats_, user);
}

void GlesDevice::upload(const BufferRef& dst, uint64_t offset, const void* src, uint64_t bytes) {
    // The host bytes are copied before returning; the GL thread writes them later, in order.
    std::shared_ptr<StagingPool::Block> data = staging_->get(size_t(bytes));
    std::memcpy(data->data.get(), src, size_t(bytes));
    gl_->post("buffer_upload", [dst, offset, data] {
        glBindBuffer(GL_COPY_WRITE_BUFFER, gl_buffer(dst).name());
        glBufferSubData(GL_COPY_WRITE_BUFFER, GLintptr(offset), GLsizeiptr(data->size), data->data.get());
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    });
}

void GlesDevice::download(const BufferRef& src, uint64_t offset, void* dst, uint64_t bytes) {
    const std::thread::id waiter = std::this_thread::get_id();
    gl_->call("buffer_download", [&] {
        wait_idle("buffer_download");
        glBindBuffer(GL_COPY_READ_BUFFER, gl_buffer(src).name());
        void* p = glMapBufferRange(GL_COPY_READ_BUFFER, GLintptr(offset), GLsizeiptr(bytes), GL_MAP_READ_BIT);
        if (!p) {
            GLenum e = glGetError();
            glBindBuffer(GL_COPY_READ_BUFFER, 0);
            fail(e == GL_OUT_OF_MEMORY ? TGL_ERROR_RESOURCE_EXHAUSTED : TGL_ERROR_BACKEND_FAILURE,
                 "glMapBufferRange of %llu bytes at offset %llu failed (GL error 0x%04x)", (unsigned long long)bytes,
                 (unsigned long long)offset, unsigned(e));
        }
        std::memcpy(dst, p, bytes);
        GLboolean intact = glUnmapBuffer(GL_COPY_READ_BUFFER);
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        if (!intact) fail(TGL_ERROR_BACKEND_FAILURE, "the buffer's contents were lost while mapped (glUnmapBuffer)");
        read_device_status(waiter);
    });
    raise_device_error();
    gl_->raise_pending();
}

void GlesDevice::copy(const BufferRef& src, uint64_t src_offset, const BufferRef& dst, uint64_t dst_offset,
                      uint64_t bytes) {
    // 16-byte aligned ranges by a shader (glCopyBufferSubData is an order of magnitude slower on
    // NVIDIA's driver); unaligned ranges and a tail under 16 bytes by glCopyBufferSubData.
    const uint64_t by_shader = src_offset % 16 == 0 && dst_offset % 16 == 0 ? bytes & ~uint64_t(15) : 0;
    if (by_shader) run_buffer_copy(*this, src, src_offset, dst, dst_offset, by_shader);
    if (by_shader == bytes) return;
    src_offset += by_shader;
    dst_offset += by_shader;
    bytes -= by_shader;
    gl_->post("buffer_copy", [src, src_offset, dst, dst_offset, bytes] {
        glBindBuffer(GL_COPY_READ_BUFFER, gl_buffer(src).name());
        glBindBuffer(GL_COPY_WRITE_BUFFER, gl_buffer(dst).name());
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, GLintptr(src_offset), GLintptr(dst_offset),
                            GLsizeiptr(bytes));
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    });
}

void GlesDevice::fill(const BufferRef& dst, uint64_t offset, uint64_t bytes, const void* pattern,
                      uint32_t pattern_size) {
    run_fill(*this, dst, offset, bytes, pattern, pattern_size);
}

void GlesDevice::run(const OpCall& call) {
    if (run_in_pieces(*this, call)) return;  // an operand larger than one SSBO window
    gles_family(*call.info).run(*this, call);
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
        if (scratch_ && scratch_->size() > kScratchKeepBytes) scratch_.reset();
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
