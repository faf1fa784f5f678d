// OpProgram and ProgramDevice (op_program.h).
#include "tgl_test/op_program.h"

#include <cstdlib>
#include <cstring>

namespace tgl_test {

std::vector<std::vector<uint8_t>> OpProgram::random_contents(Rng& rng, double lo, double hi) const {
    std::vector<std::vector<uint8_t>> out;
    for (const Buffer& b : buffers) out.push_back(encode_values(b.dtype, random_values(b.elements, rng, float_values(b.dtype, lo, hi))));
    return out;
}

namespace {
// Sets NAME=value for the object's lifetime (nothing for nullptr).
struct ScopedEnv {
    std::string name;
    bool had = false;
    std::string old;
    explicit ScopedEnv(const char* assignment) {
        if (!assignment) return;
        const char* eq = std::strchr(assignment, '=');
        if (!eq) throw Failure(std::string("ScopedEnv: expected NAME=value, got ") + assignment);
        name.assign(assignment, eq);
        if (const char* v = std::getenv(name.c_str())) {
            had = true;
            old = v;
        }
        setenv(name.c_str(), eq + 1, 1);
    }
    ~ScopedEnv() {
        if (name.empty()) return;
        if (had)
            setenv(name.c_str(), old.c_str(), 1);
        else
            unsetenv(name.c_str());
    }
};
}  // namespace

ProgramDevice::ProgramDevice(Role role, const OpProgram& program, const char* env)
    : api(plugin(role).api()), role_(role), program_(program) {
    {
        ScopedEnv scoped(env);
        check(api.device_open(0, &h), "device_open");
    }
    for (const OpProgram::Buffer& b : program.buffers) {
        tgl_buffer buf = 0;
        check(api.buffer_alloc(h, uint64_t(b.elements) * tgl_dtype_size(b.dtype), &buf), "buffer_alloc");
        buffers_.push_back(buf);
    }
}

ProgramDevice::~ProgramDevice() {
    if (h) api.device_close(h);
}

void ProgramDevice::check(tgl_status s, const std::string& what) const {
    if (s != TGL_OK)
        throw Failure(std::string(role_ == Role::Reference ? "reference " : role_ == Role::Subject ? "subject " : "") +
                      what + ": " + tgl_status_name(s) + ": " + plugin(role_).last_error());
}

void ProgramDevice::upload(const std::vector<std::vector<uint8_t>>& contents) {
    for (size_t i = 0; i < buffers_.size(); ++i)
        check(api.buffer_upload(h, buffers_[i], 0, contents[i].data(), contents[i].size()), "buffer_upload");
}

std::vector<std::vector<uint8_t>> ProgramDevice::read_all() {
    std::vector<std::vector<uint8_t>> out;
    for (size_t i = 0; i < buffers_.size(); ++i) {
        const OpProgram::Buffer& b = program_.buffers[i];
        out.emplace_back(size_t(b.elements) * tgl_dtype_size(b.dtype));
        check(api.buffer_download(h, buffers_[i], 0, out.back().data(), out.back().size()), "buffer_download");
    }
    return out;
}

tgl_tensor ProgramDevice::tensor(const ProgramTensor& t) const {
    if (t.buffer < 0) return tgl_tensor{};  // an absent optional operand
    tgl_tensor out = tgl_tensor_contiguous(buffers_[size_t(t.buffer)], uint64_t(t.offset) * tgl_dtype_size(t.dtype),
                                           t.dtype, uint32_t(t.shape.size()), t.shape.data());
    for (size_t d = 0; d < t.strides.size(); ++d) out.strides[d] = t.strides[d];
    return out;
}

void ProgramDevice::run_direct() {
    for (const ProgramOp& op : program_.ops) {
        std::vector<tgl_tensor> in;
        for (const ProgramTensor& t : op.inputs) in.push_back(tensor(t));
        tgl_tensor y = tensor(op.output);
        check(api.run_op(h, op.op, op.params.empty() ? nullptr : op.params.data(), in.data(), uint32_t(in.size()), &y, 1),
              "run_op (op " + std::to_string(op.op) + ")");
    }
}

tgl_graph ProgramDevice::record() {
    check(api.graph_begin(h), "graph_begin");
    run_direct();
    tgl_graph g = 0;
    check(api.graph_end(h, &g), "graph_end");
    return g;
}

void ProgramDevice::replay(tgl_graph g) { check(api.graph_replay(h, g), "graph_replay"); }

void ProgramDevice::replay_with(tgl_graph g, const std::vector<tgl_graph_binding>& bindings) {
    check(api.graph_replay_with(h, g, bindings.data(), uint32_t(bindings.size())), "graph_replay_with");
}

long long ProgramDevice::property(const char* name) const {
    const tgl_property* props = nullptr;
    uint32_t n = 0;
    check(api.device_properties(0, &props, &n), "device_properties");
    for (uint32_t i = 0; i < n; ++i)
        if (std::strcmp(props[i].name, name) == 0) return std::atoll(props[i].value);
    return -1;
}

std::string first_difference(const OpProgram& program, const std::vector<std::vector<uint8_t>>& a,
                             const std::vector<std::vector<uint8_t>>& b) {
    for (size_t i = 0; i < a.size(); ++i) {
        const size_t size = tgl_dtype_size(program.buffers[i].dtype);
        for (size_t k = 0; k < a[i].size(); ++k)
            if (a[i][k] != b[i][k]) {
                const size_t e = k / size;
                std::vector<uint8_t> x(a[i].begin() + long(e * size), a[i].begin() + long(e * size + size));
                std::vector<uint8_t> y(b[i].begin() + long(e * size), b[i].begin() + long(e * size + size));
                return "buffer " + std::to_string(i) + " element " + std::to_string(e) + ": " +
                       std::to_string(decode_values(program.buffers[i].dtype, x)[0]) + " vs " +
                       std::to_string(decode_values(program.buffers[i].dtype, y)[0]);
            }
    }
    return "";
}

}  // namespace tgl_test
