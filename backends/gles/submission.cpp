// Submission on the GLES device: dispatches are queued in order (submit), captured instead while
// an op is recorded (capture, record) and queued again as one GL-thread task (replay); on the GL
// thread each is issued against what the previous one bound (BoundState), its uniforms set.
#include "gles_device.h"

#include "status.h"

#include <algorithm>
#include <cstring>

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

#ifndef TGL_GLES_CHECK_UNIFORMS
#define TGL_GLES_CHECK_UNIFORMS 0
#endif
// Test builds (CMake option TGL_GLES_CHECK_UNIFORMS): a uniform the host sets that the program's
// source does not declare (a misspelt, stale or other pass's name) is a plugin bug, raised when
// the op is queued instead of skipped on the GL thread. A declared uniform that the driver found
// unused in this variant (glGetUniformLocation == -1 there) is still skipped: the kernels set one
// list for the passes of a family, and which ones a driver drops is the driver's business.
constexpr bool kCheckUniforms = TGL_GLES_CHECK_UNIFORMS != 0;

void check_uniforms(const Dispatch& d) {
    for (const UniformValue& u : d.uniforms)
        if (!find_uniform(*d.program, u.name) && !d.program->declared.count(u.name))
            fail(TGL_ERROR_INTERNAL, "the plugin sets uniform %s, which the source of program %s does not declare",
                 u.name.c_str(), d.program->label.c_str());
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
}  // namespace

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
        const uint32_t flush_every = b.flush_every;
        b = BoundState{};  // it bound its own program and buffer
        b.flush_every = flush_every;
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
    // In a long batch (a replay, a backlog of queued ops), hand the GPU what is issued so far now
    // and then, so that it runs while the rest is issued rather than after (the GL thread flushes
    // anyway once its queue is empty).
    if (b.flush_every && ++b.unflushed >= b.flush_every) {
        glFlush();
        b.unflushed = 0;
    }
}

void GlesDevice::submit(const char* what, std::vector<Dispatch> dispatches) {
    if (hooks_ && !dispatches.empty() && hooks_->uniform.exchange(false))
        dispatches[0].uniforms.push_back(uniform_uint("u_undeclared_by_test_hook", {0u}));
    if (kCheckUniforms)
        for (const Dispatch& d : dispatches) check_uniforms(d);
    if (trace_)
        for (const Dispatch& d : dispatches)
            trace_->line(std::string(what) + "\t" + (d.program ? d.program->label : "?") + "\t" + std::to_string(d.groups[0]) +
                         "," + std::to_string(d.groups[1]) + "," + std::to_string(d.groups[2]));
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
    return record_plan([&] { run(call); });
}

std::shared_ptr<Device::RecordedOp> GlesDevice::record_plan(const std::function<void()>& plan) {
    auto op = std::make_shared<GlesRecordedOp>();
    op->ds = capture(plan);
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

void GlesDevice::issue_recorded(BoundState& b, const RecordedOp& recorded, const uint32_t* seqs) {
    const GlesRecordedOp& op = static_cast<const GlesRecordedOp&>(recorded);
    size_t next = 0;  // op.seqs is in dispatch order
    for (size_t i = 0; i < op.ds.size(); ++i) {
        const Program::Uniform* const* resolved = op.uniforms.data() + op.uniform_at[i];
        if (next < op.seqs.size() && op.seqs[next].dispatch == i) {
            // (a dispatch sets u_check_seq once)
            const auto& slot = op.seqs[next++];
            issue(b, op.ds[i], resolved, int(slot.uniform), seqs[slot.check]);
        } else {
            issue(b, op.ds[i], resolved);
        }
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
            issue_recorded(b, *o, seqs.data() + first_seq);
            first_seq += static_cast<const GlesRecordedOp&>(*o).checks;
        }
        if (errors) errors->ran_checked(by);
    });
}

bool GlesDevice::run_cached(const OpCall& call) {
    if (!op_cache_ || (t_capture && t_capture->dev == this)) return false;
    thread_local OpCache::Key key;
    OpCache::make_key(call, key);
    const uint64_t hash = OpCache::hash(key);
    const uint64_t generation = scratch_gen_.load();
    std::shared_ptr<RecordedOp> found = op_cache_->find(key, hash, generation);
    if (!found) {
        const uint64_t internal = internal_allocs_.load();
        std::shared_ptr<RecordedOp> fresh = record(call);
        // Planning that allocated device memory of its own (run in pieces, a grown scratch): not
        // kept, so that the cache holds no memory but the scratch and the status buffer.
        if (internal_allocs_.load() == internal) {
            // The entry does not hold the operands' buffers (each queued run holds its own).
            auto operand = [&](const BufferRef& r) {
                auto is = [&](const TensorArg& t) { return t.buffer == r; };
                return std::any_of(call.inputs.begin(), call.inputs.end(), is) ||
                       std::any_of(call.outputs.begin(), call.outputs.end(), is);
            };
            for (Dispatch& d : static_cast<GlesRecordedOp&>(*fresh).ds)
                for (Binding& b : d.bindings)
                    if (b.keep && operand(b.keep)) b.keep.reset();
            op_cache_->insert(key, hash, generation, fresh);
        }
        found = std::move(fresh);
    }
    const GlesRecordedOp& op = static_cast<const GlesRecordedOp&>(*found);
    std::vector<uint32_t> seqs;
    if (op.checks) next_check_seqs(seqs, op.checks);
    // The operands' buffers, held until the op has been issued: in the task itself for most ops
    // (one allocation less per op), the rest in a vector.
    struct Held {
        BufferRef first[4];
        std::vector<BufferRef> more;
    } keep;
    size_t held = 0;
    auto hold = [&](const TensorArg& t) {
        if (!t.buffer) return;
        if (held < 4) keep.first[held++] = t.buffer;
        else keep.more.push_back(t.buffer);
    };
    for (const TensorArg& t : call.inputs) hold(t);
    for (const TensorArg& t : call.outputs) hold(t);
    gl_->post(call.info->name, [found = std::move(found), keep = std::move(keep), seqs = std::move(seqs), bound = bound_,
                                gl = gl_.get(), errors = op.checks ? errors_ : nullptr, by = std::this_thread::get_id()] {
        BoundState& b = *bound;
        begin_batch(b, gl, 0);
        issue_recorded(b, *found, seqs.data());
        if (errors) errors->ran_checked(by);
    });
    return true;
}

}  // namespace gles
}  // namespace tgl
