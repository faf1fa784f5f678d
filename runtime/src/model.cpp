// Loading an ONNX model (untrusted input: validated), planning it on a device, running it, and the
// C API over that.
#include "plan.hpp"

#include <tensorgl/loader.h>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>

namespace tglrt {

constexpr int kMaxOpset = 17;
constexpr uint64_t kMaxModelBytes = 2ull << 30;  // protobuf's own limit

// ---------------------------------------------------------------------------------------------
// Initializers: their bytes in host layout, validated against their dims.

static std::string read_file(const std::string& path, uint64_t max_bytes, const std::string& what) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(TGLRT_ERROR_IO, "cannot open " + what + " '" + path + "': " + std::strerror(errno));
    f.seekg(0, std::ios::end);
    std::streamoff size = f.tellg();
    if (size < 0) throw Error(TGLRT_ERROR_IO, "cannot size " + what + " '" + path + "'");
    if ((uint64_t)size > max_bytes)
        throw Error(TGLRT_ERROR_INVALID_MODEL, what + " '" + path + "' is " + std::to_string(size) +
                                                   " bytes, above the limit of " + std::to_string(max_bytes));
    f.seekg(0);
    std::string data((size_t)size, '\0');
    if (size && !f.read(&data[0], size)) throw Error(TGLRT_ERROR_IO, "cannot read " + what + " '" + path + "'");
    return data;
}

// Reads external data of tensor `t` into raw_data. Only files inside the model's directory (no
// absolute path, no '..', symlinks resolved and checked) are read.
static void load_external(onnx::TensorProto& t, const std::string& model_dir) {
    if (model_dir.empty())
        throw Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "' has external data, which a model loaded from bytes cannot have");
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto& kv : t.external_data()) {
        auto num = [&](const std::string& s) {
            char* end = nullptr;
            errno = 0;
            long long x = std::strtoll(s.c_str(), &end, 10);
            if (errno || !end || *end || x < 0)
                throw Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "': external data " + kv.key() + " '" + s + "' is not a byte count");
            return (int64_t)x;
        };
        if (kv.key() == "location") location = kv.value();
        else if (kv.key() == "offset") offset = num(kv.value());
        else if (kv.key() == "length") length = num(kv.value());
    }
    if (location.empty() || location[0] == '/' || location.find("..") != std::string::npos)
        throw Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "': external data location '" + location +
                                                   "' must be a relative path inside the model's directory");
    std::string path = model_dir + "/" + location;
    char* real = realpath(path.c_str(), nullptr);
    char* real_dir = realpath(model_dir.c_str(), nullptr);
    std::string rp = real ? real : "", rd = real_dir ? real_dir : "";
    free(real);
    free(real_dir);
    if (rp.empty() || rd.empty() || rp.compare(0, rd.size() + 1, rd + "/") != 0)
        throw Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "': external data file '" + location +
                                                   "' does not resolve to a file inside the model's directory " + rd);
    std::string data = read_file(rp, kMaxModelBytes * 8, "external data file");
    if ((uint64_t)offset > data.size() || (length >= 0 && (uint64_t)length > data.size() - (uint64_t)offset))
        throw Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "': external data offset " + std::to_string(offset) +
                                                   " length " + std::to_string(length) + " reach outside '" + location +
                                                   "' (" + std::to_string(data.size()) + " bytes)");
    t.set_raw_data(data.substr((size_t)offset, length >= 0 ? (size_t)length : std::string::npos));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
}

static Value tensor_value(const onnx::TensorProto& t) {
    Value v;
    v.name = t.name();
    v.type = t.data_type();
    int64_t n = 1;
    for (int64_t d : t.dims()) {
        if (d < 0) throw Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "' has a negative dim");
        if (d > 0 && n > INT64_MAX / d) throw Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "': element count overflows");
        n *= d;
        v.shape.push_back(d);
    }
    uint32_t es = host_elem_size(v.type);
    if (es == 0)
        throw Error(TGLRT_ERROR_UNSUPPORTED, "tensor '" + t.name() + "' has dtype " + onnx_type_name(v.type) + ", which the runtime does not support");
    if ((uint64_t)n > kMaxModelBytes * 8 / es)
        throw Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "' claims " + std::to_string(n) + " elements, above the " +
                                                   std::to_string(kMaxModelBytes * 8 >> 30) + " GiB a tensor may hold");
    v.on_host = true;
    auto count_error = [&](size_t got) {
        return Error(TGLRT_ERROR_INVALID_MODEL, "tensor '" + t.name() + "' of shape " + shape_str(v.shape) + " (" +
                                                    onnx_type_name(v.type) + ") holds " + std::to_string(got) +
                                                    (t.has_raw_data() ? " bytes" : " values") + ", expected " +
                                                    std::to_string(t.has_raw_data() ? n * es : n));
    };
    // Counts are checked before anything is allocated: dims are the file's claim.
    size_t have = t.has_raw_data() ? t.raw_data().size()
                  : v.type == onnx::TensorProto::FLOAT ? (size_t)t.float_data_size()
                  : v.type == onnx::TensorProto::INT64 ? (size_t)t.int64_data_size()
                  : v.type == onnx::TensorProto::DOUBLE ? (size_t)t.double_data_size()
                  : v.type == onnx::TensorProto::UINT32 || v.type == onnx::TensorProto::UINT64 ? (size_t)t.uint64_data_size()
                                                       : (size_t)t.int32_data_size();
    if (have != (size_t)n * (t.has_raw_data() ? es : 1)) throw count_error(have);
    v.host.resize((size_t)n * es);
    if (t.has_raw_data()) {
        if (n) std::memcpy(v.host.data(), t.raw_data().data(), (size_t)n * es);
        return v;
    }
    switch (v.type) {
    case onnx::TensorProto::FLOAT:
        if (n) std::memcpy(v.host.data(), t.float_data().data(), (size_t)n * 4);
        break;
    case onnx::TensorProto::INT64:
        if (n) std::memcpy(v.host.data(), t.int64_data().data(), (size_t)n * 8);
        break;
    case onnx::TensorProto::DOUBLE:
        if (n) std::memcpy(v.host.data(), t.double_data().data(), (size_t)n * 8);
        break;
    case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64:  // one uint64 per element
        for (int64_t i = 0; i < n; ++i) {
            uint64_t x = t.uint64_data((int)i);
            std::memcpy(&v.host[i * es], &x, es);  // little-endian: the low bytes
        }
        break;
    default:  // int32, int16, uint16, int8, uint8, bool, float16, bfloat16: one int32 per element
        for (int64_t i = 0; i < n; ++i) {
            int32_t x = t.int32_data((int)i);
            std::memcpy(&v.host[i * es], &x, es);  // little-endian: the low bytes
        }
    }
    return v;
}

Value tensor_value_of(const onnx::TensorProto& t) { return tensor_value(t); }

// ---------------------------------------------------------------------------------------------

struct Model {
    tglrt_device* device = nullptr;
    Plan plan;
    std::vector<tglrt_tensor_info> input_info, output_info;
    uint64_t weight_bytes = 0, peak_bytes = 0, naive_bytes = 0;
    std::vector<tgl_buffer> buffers;  // every buffer of the plan (freed with the model)
    bool profiling = false;
    tgl_graph graph = 0;  // the recorded plan (record_graph), replayed by unprofiled runs
    // Carried outputs (tglrt_carry): output index -> input index, copied on the device after each
    // run; carried[i]: input i holds a value carried by a run (it may then be passed as NULL).
    std::vector<std::pair<uint32_t, uint32_t>> carries;
    std::vector<bool> carried;
    int timer = -1;  // -1 unknown, 0 none, 1 the device timer
};

}  // namespace tglrt

struct tglrt_device {
    tgl_plugin* plugin = nullptr;
    const tgl_plugin_api* api = nullptr;
    tgl_device device = 0;
    uint32_t abi_minor = 0;
    int models = 0;
};

struct tglrt_model {
    tglrt::Model m;
};

namespace tglrt {

static thread_local std::string g_last_error;

static std::string plugin_message(const tgl_plugin_api& api, tgl_status s) {
    std::string m = tgl_status_name(s);
    const char* msg = api.last_error_message();
    if (msg && *msg) m += std::string(": ") + msg;
    return m;
}

static void check_plugin(const tglrt_device& d, tgl_status s, const std::string& what) {
    if (s != TGL_OK) throw Error(TGLRT_ERROR_PLUGIN, what + " failed with " + plugin_message(*d.api, s));
}

static tgl_tensor make_tensor(const Plan& plan, const Operand& o) {
    tgl_tensor t{};
    if (o.value < 0) return t;  // absent optional operand: buffer 0
    const Value& v = plan.values[o.value];
    const Storage& s = plan.storages[v.storage];
    Shape shape = o.custom ? o.shape : v.shape;
    Shape strides = o.custom ? o.strides : contiguous_strides(v.shape);
    t.buffer = s.buffer;
    t.dtype = device_dtype(v.type);
    t.byte_offset = (uint64_t)o.elem_offset * tgl_dtype_size(t.dtype);
    t.rank = (uint32_t)shape.size();
    for (size_t d = 0; d < shape.size(); ++d) {
        t.shape[d] = shape[d];
        t.strides[d] = strides[d];
    }
    return t;
}

// The carried (output, input) names of the load options as indices, checked.
static void resolve_carries(Model& M, const std::vector<std::pair<std::string, std::string>>& carries) {
    const Plan& P = M.plan;
    auto index = [&](const std::vector<int>& ids, const std::string& name, const char* what) {
        for (size_t k = 0; k < ids.size(); ++k)
            if (P.values[ids[k]].name == name) return (uint32_t)k;
        throw Error(TGLRT_ERROR_INVALID_ARGUMENT, std::string("carry: the model has no ") + what + " '" + name + "'");
    };
    M.carried.assign(P.inputs.size(), false);
    for (const auto& [out, in] : carries) {
        uint32_t o = index(P.outputs, out, "output"), i = index(P.inputs, in, "input");
        const Value &vo = P.values[P.outputs[o]], &vi = P.values[P.inputs[i]];
        if (vo.type != vi.type || numel(vo.shape) != numel(vi.shape))
            throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "carry: output '" + out + "' (" + onnx_type_name(vo.type) + " " + shape_str(vo.shape) +
                                                          ") and input '" + in + "' (" + onnx_type_name(vi.type) + " " + shape_str(vi.shape) +
                                                          ") differ in dtype or element count");
        if (vo.storage < 0)
            throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "carry: output '" + out + "' is a constant folded on the host, not a device value");
        for (auto [o2, i2] : M.carries)
            if (i2 == i) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "carry: input '" + in + "' is carried into twice");
        M.carries.emplace_back(o, i);
    }
}

static void plan_graph(Model& M, onnx::ModelProto& model, const std::string& model_dir,
                       const std::vector<std::pair<std::string, std::string>>& carries) {
    const tglrt_device& D = *M.device;
    Plan& P = M.plan;
    int opset = -1;
    for (const auto& op : model.opset_import())
        if (op.domain().empty() || op.domain() == "ai.onnx") opset = (int)op.version();
    if (opset < 0) opset = 0;  // no default-domain op can appear; other domains are refused per node
    if (opset > kMaxOpset)
        throw Error(TGLRT_ERROR_UNSUPPORTED, "the model uses opset " + std::to_string(opset) + "; the runtime supports opsets up to " + std::to_string(kMaxOpset));

    onnx::GraphProto& g = *model.mutable_graph();
    for (auto& t : *g.mutable_initializer())
        if (t.data_location() == onnx::TensorProto::EXTERNAL) load_external(t, model_dir);
    for (auto& n : *g.mutable_node())
        for (auto& a : *n.mutable_attribute())
            if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL) load_external(*a.mutable_t(), model_dir);
    try {
        onnx::checker::check_model(model);
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions(true, 1, true));
    } catch (const std::exception& e) {
        throw Error(TGLRT_ERROR_INVALID_MODEL, std::string("ONNX checker / shape inference: ") + e.what());
    }
    std::map<std::string, onnx::TypeProto> inferred;
    for (const auto* list : {&g.value_info(), &g.output(), &g.input()})
        for (const auto& vi : *list) inferred[vi.name()] = vi.type();

    std::set<std::string> init_names;
    for (const auto& t : g.initializer()) {
        Value v = tensor_value(t);
        init_names.insert(v.name);
        P.by_name[v.name] = (int)P.values.size();
        P.values.push_back(std::move(v));
    }
    std::vector<int> input_storages;
    for (const auto& vi : g.input()) {
        if (init_names.count(vi.name())) continue;  // an initializer with a default: a constant here
        if (!vi.type().has_tensor_type())
            throw Error(TGLRT_ERROR_UNSUPPORTED, "graph input '" + vi.name() + "' is not a tensor (sequences, maps and optionals are not supported)");
        const auto& tt = vi.type().tensor_type();
        Value v;
        v.name = vi.name();
        v.type = tt.elem_type();
        std::string why = why_not_held(v.type, P.f64_as_f32);
        if (!why.empty()) throw Error(TGLRT_ERROR_UNSUPPORTED, "graph input '" + v.name + "' has " + why);
        if (!tt.has_shape()) throw Error(TGLRT_ERROR_UNSUPPORTED, "graph input '" + v.name + "' has no shape (dynamic shapes are not supported)");
        for (const auto& d : tt.shape().dim()) {
            if (!d.has_dim_value() || d.dim_value() < 0)
                throw Error(TGLRT_ERROR_UNSUPPORTED, "graph input '" + v.name + "' has a dynamic dim '" + d.dim_param() +
                                                         "' (dynamic shapes are not supported: export with static shapes)");
            v.shape.push_back(d.dim_value());
        }
        if (v.shape.size() > TGL_MAX_RANK) throw Error(TGLRT_ERROR_UNSUPPORTED, "graph input '" + v.name + "' has rank above 8");
        Storage s;
        s.bytes = (uint64_t)numel(v.shape) * tgl_dtype_size(device_dtype(v.type));
        v.storage = (int)P.storages.size();
        input_storages.push_back(v.storage);
        P.storages.push_back(s);
        P.by_name[v.name] = (int)P.values.size();
        P.inputs.push_back((int)P.values.size());
        P.values.push_back(std::move(v));
    }

    const auto& table = lowering_table();
    for (int i = 0; i < g.node_size(); ++i) {
        const onnx::NodeProto& n = g.node(i);
        NodeInfo info;
        info.name = n.name().empty() ? n.op_type() + "#" + std::to_string(i) : n.name();
        info.op_type = n.op_type();
        P.nodes.push_back(info);
        auto fail = [&](const std::string& what) {
            throw Error(TGLRT_ERROR_UNSUPPORTED, "node '" + P.nodes.back().name + "' (" + n.op_type() + "): " + what);
        };
        if (!n.domain().empty() && n.domain() != "ai.onnx") fail("domain '" + n.domain() + "' is not supported");
        auto it = table.find(n.op_type());
        if (it == table.end()) fail("op type " + n.op_type() + " is not supported by the runtime");
        for (const auto& a : n.attribute())
            if (std::find(it->second.attributes.begin(), it->second.attributes.end(), a.name()) == it->second.attributes.end())
                fail("attribute '" + a.name() + "' is not supported");
        Lowering L(P, n, i, opset, *D.api, inferred);
        if (!fold_on_host(L)) {
            if (!it->second.fn) fail("could not be folded on the host");
            it->second.fn(L);
        }
        for (int k = 0; k < n.output_size(); ++k)
            if (!n.output(k).empty() && !P.by_name.count(n.output(k)))
                fail("output " + std::to_string(k) + " ('" + n.output(k) + "') is not produced by the runtime's lowering");
    }
    for (const auto& vi : g.output()) {
        auto it = P.by_name.find(vi.name());
        if (it == P.by_name.end()) throw Error(TGLRT_ERROR_INVALID_MODEL, "graph output '" + vi.name() + "' is never produced");
        P.outputs.push_back(it->second);
    }

    resolve_carries(M, carries);

    // Buffers: weights once; activations pooled by liveness (best fit).
    int n_steps = (int)P.steps.size();
    std::set<int> io;
    for (int s : input_storages) io.insert(s), P.storages[s].first_step = -1;
    for (int id : P.outputs)
        if (P.values[id].storage >= 0 && !P.storages[P.values[id].storage].weight) {
            Storage& s = P.storages[P.values[id].storage];
            s.last_step = n_steps;
            if (s.first_step < 0 && !io.count(P.values[id].storage)) s.first_step = 0;
        }
    for (int s : input_storages) P.storages[s].first_step = -1, P.storages[s].last_step = std::max(P.storages[s].last_step, 0);
    // A carried input's buffer holds its value between runs: nothing else may reuse it.
    for (auto [o, i] : M.carries) P.storages[P.values[P.inputs[i]].storage].last_step = n_steps;
    std::multimap<uint64_t, tgl_buffer> pool;  // free buffers by size
    std::map<tgl_buffer, uint64_t> sizes;
    auto alloc = [&](uint64_t bytes) {
        tgl_buffer b = 0;
        check_plugin(D, D.api->buffer_alloc(D.device, std::max<uint64_t>(bytes, 4), &b),
                     "buffer_alloc(" + std::to_string(bytes) + " bytes)");
        M.buffers.push_back(b);
        return b;
    };
    std::vector<std::vector<int>> starts(n_steps + 2), ends(n_steps + 2);
    for (size_t k = 0; k < P.storages.size(); ++k) {
        Storage& s = P.storages[k];
        if (s.weight) {
            s.buffer = alloc(s.bytes);
            if (s.bytes) check_plugin(D, D.api->buffer_upload(D.device, s.buffer, 0, s.upload.data(), s.bytes), "weight upload");
            M.weight_bytes += s.bytes;
            s.upload.clear();
            s.upload.shrink_to_fit();
            continue;
        }
        if (s.first_step < -1 || s.last_step < 0) continue;  // never used
        M.naive_bytes += s.bytes;
        starts[s.first_step + 1].push_back((int)k);
        ends[s.last_step + 1].push_back((int)k);
    }
    for (int t = 0; t < n_steps + 2; ++t) {
        for (int k : starts[t]) {
            Storage& s = P.storages[k];
            auto f = pool.lower_bound(std::max<uint64_t>(s.bytes, 4));
            if (f != pool.end()) {
                s.buffer = f->second;
                pool.erase(f);
            } else {
                s.buffer = alloc(s.bytes);
                sizes[s.buffer] = std::max<uint64_t>(s.bytes, 4);
                M.peak_bytes += sizes[s.buffer];
            }
        }
        for (int k : ends[t]) pool.emplace(sizes[P.storages[k].buffer], P.storages[k].buffer);
    }

    auto info = [&](int id) {
        const Value& v = P.values[id];
        tglrt_tensor_info ti{};
        ti.name = v.name.c_str();
        ti.dtype = v.type;
        ti.rank = (uint32_t)v.shape.size();
        for (size_t d = 0; d < v.shape.size(); ++d) ti.shape[d] = v.shape[d];
        ti.bytes = (uint64_t)numel(v.shape) * host_elem_size(v.type);
        return ti;
    };
    for (int id : P.inputs) M.input_info.push_back(info(id));
    for (int id : P.outputs) {
        if (P.values[id].storage < 0 && !P.values[id].on_host)
            throw Error(TGLRT_ERROR_INTERNAL, "graph output '" + P.values[id].name + "' has no data");
        M.output_info.push_back(info(id));
    }
}

static void run_steps(Model& M) {
    const tglrt_device& D = *M.device;
    Plan& P = M.plan;
    bool timed = M.profiling;
    if (timed && M.timer < 0) {
        M.timer = 0;
        if (D.abi_minor >= 1 && D.api->timer_begin) {
            tgl_status s = D.api->timer_begin(D.device);
            if (s == TGL_OK) {
                uint64_t ns;
                D.api->timer_end(D.device, &ns, nullptr);
                M.timer = 1;
            }
        }
    }
    if (timed) check_plugin(D, D.api->synchronize(D.device), "synchronize");
    std::vector<tgl_tensor> in, out;
    for (const Step& s : P.steps) {
        in.clear();
        out.clear();
        for (const Operand& o : s.in) in.push_back(make_tensor(P, o));
        for (const Operand& o : s.out) out.push_back(make_tensor(P, o));
        NodeInfo& node = P.nodes[s.node];
        auto t0 = std::chrono::steady_clock::now();
        if (timed && M.timer == 1) check_plugin(D, D.api->timer_begin(D.device), "timer_begin");
        tgl_status st = D.api->run_op(D.device, s.op, s.params.empty() ? nullptr : s.params.data(), in.data(),
                                      (uint32_t)in.size(), out.data(), (uint32_t)out.size());
        if (st != TGL_OK) {
            std::string m = plugin_message(*D.api, st);
            if (timed && M.timer == 1) { uint64_t ns; D.api->timer_end(D.device, &ns, nullptr); }
            throw Error(TGLRT_ERROR_PLUGIN, "node '" + node.name + "' (" + node.op_type + "): run_op failed with " + m);
        }
        if (timed) {
            uint64_t ns = 0;
            if (M.timer == 1) {
                check_plugin(D, D.api->timer_end(D.device, &ns, nullptr), "timer_end of node '" + node.name + "'");
            } else {
                check_plugin(D, D.api->synchronize(D.device), "node '" + node.name + "' (" + node.op_type + ")");
                ns = (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
            }
            node.total_ns += ns;
        }
    }
    if (timed)
        for (NodeInfo& n : P.nodes) n.runs++;
}

static void run_model(Model& M, const void* const* inputs, const uint64_t* input_bytes, uint32_t n_inputs,
                      void* const* outputs, const uint64_t* output_bytes, uint32_t n_outputs) {
    const tglrt_device& D = *M.device;
    Plan& P = M.plan;
    if (n_inputs != P.inputs.size())
        throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "n_inputs is " + std::to_string(n_inputs) + ", the model has " + std::to_string(P.inputs.size()) + " inputs");
    if (n_outputs != P.outputs.size())
        throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "n_outputs is " + std::to_string(n_outputs) + ", the model has " + std::to_string(P.outputs.size()) + " outputs");
    if ((n_inputs && (!inputs || !input_bytes)) || (n_outputs && (!outputs || !output_bytes)))
        throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "inputs/outputs arrays must not be NULL");
    for (uint32_t i = 0; i < n_inputs; ++i) {
        const tglrt_tensor_info& ti = M.input_info[i];
        if (!inputs[i] && !input_bytes[i] && ti.bytes && i < M.carried.size() && M.carried[i]) continue;  // keeps the carried value
        bool is_carried = std::any_of(M.carries.begin(), M.carries.end(), [&](auto c) { return c.second == i; });
        if (input_bytes[i] != ti.bytes || (ti.bytes && !inputs[i]))
            throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "input " + std::to_string(i) + " ('" + ti.name + "'): " + std::to_string(input_bytes[i]) +
                                                          " bytes given, expected " + std::to_string(ti.bytes) + " (" +
                                                          onnx_type_name(ti.dtype) + " " + shape_str(P.values[P.inputs[i]].shape) + ")" +
                                                          (is_carried ? "; a carried input may be NULL only once a run has carried a value into it" : ""));
    }
    for (uint32_t i = 0; i < n_outputs; ++i)
        if (!(outputs[i] == nullptr && output_bytes[i] == 0) && (output_bytes[i] != M.output_info[i].bytes || (output_bytes[i] && !outputs[i])))
            throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "output " + std::to_string(i) + " ('" + M.output_info[i].name + "'): buffer of " +
                                                          std::to_string(output_bytes[i]) + " bytes, expected " + std::to_string(M.output_info[i].bytes));
    // Inputs of types the ABI lacks (int64, double, ...): converted and range-checked before
    // anything is uploaded.
    std::vector<std::vector<uint8_t>> converted(n_inputs);
    for (uint32_t i = 0; i < n_inputs; ++i)
        if (inputs[i])
            converted[i] = to_device_bytes(M.input_info[i].dtype, inputs[i], input_bytes[i] / std::max<uint32_t>(1, host_elem_size(M.input_info[i].dtype)),
                                           "input '" + std::string(M.input_info[i].name) + "'");
    for (uint32_t i = 0; i < n_inputs; ++i) {
        const Storage& s = P.storages[P.values[P.inputs[i]].storage];
        const void* src = converted[i].empty() ? inputs[i] : converted[i].data();
        if (s.bytes && src) check_plugin(D, D.api->buffer_upload(D.device, s.buffer, 0, src, s.bytes), "upload of input '" + std::string(M.input_info[i].name) + "'");
    }
    if (M.graph && !M.profiling) check_plugin(D, D.api->graph_replay(D.device, M.graph), "graph_replay");
    else run_steps(M);
    for (uint32_t i = 0; i < n_outputs; ++i) {
        const Value& v = P.values[P.outputs[i]];
        uint64_t bytes = output_bytes[i];
        if (!bytes || !outputs[i]) continue;
        if (v.storage < 0) {  // folded on the host
            std::memcpy(outputs[i], v.host.data(), bytes);
            continue;
        }
        const Storage& s = P.storages[v.storage];
        uint64_t n = bytes / host_elem_size(v.type), device_bytes = n * tgl_dtype_size(device_dtype(v.type));
        if (device_bytes == bytes) {  // the host's layout
            check_plugin(D, D.api->buffer_download(D.device, s.buffer, 0, outputs[i], bytes), "download of output '" + v.name + "'");
        } else {
            std::vector<uint8_t> tmp(device_bytes);
            check_plugin(D, D.api->buffer_download(D.device, s.buffer, 0, tmp.data(), device_bytes), "download of output '" + v.name + "'");
            from_device_bytes(v.type, tmp.data(), n, outputs[i], "output '" + v.name + "'");
        }
    }
    // Carried inputs have buffers of their own (kept out of the pool): the copies clobber no
    // output and no other carried value.
    for (auto [o, i] : M.carries) {
        const Storage &src = P.storages[P.values[P.outputs[o]].storage], &dst = P.storages[P.values[P.inputs[i]].storage];
        if (src.buffer != dst.buffer && dst.bytes)
            check_plugin(D, D.api->buffer_copy(D.device, src.buffer, 0, dst.buffer, 0, dst.bytes),
                         "carry of output '" + std::string(M.output_info[o].name) + "' into input '" + M.input_info[i].name + "'");
        M.carried[i] = true;
    }
    check_plugin(D, D.api->synchronize(D.device), "synchronize");
}

// Loads and plans; then one run on zeros, so that anything the plugin refuses surfaces now.
// Records the plan as an ABI 1.2 graph: run_op calls between graph_begin and graph_end are
// validated and recorded instead of queued.
static void record_graph(Model& M) {
    const tglrt_device& D = *M.device;
    if (D.abi_minor < 2 || !D.api->graph_begin)
        throw Error(TGLRT_ERROR_UNSUPPORTED, "record_graph: the plugin's ABI 1." + std::to_string(D.abi_minor) + " has no graphs (1.2 added them)");
    check_plugin(D, D.api->graph_begin(D.device), "graph_begin");
    try {
        run_steps(M);
    } catch (...) {
        tgl_graph g = 0;
        if (D.api->graph_end(D.device, &g) == TGL_OK && g) D.api->graph_destroy(D.device, g);
        throw;
    }
    check_plugin(D, D.api->graph_end(D.device, &M.graph), "graph_end");
}

static void release(tglrt_device& d, Model& M) {
    if (M.graph) d.api->graph_destroy(d.device, M.graph);
    M.graph = 0;
    for (tgl_buffer b : M.buffers) d.api->buffer_free(d.device, b);
    M.buffers.clear();
}

// tglrt_load_options before n_carries, and before f64_as_f32, were added.
constexpr uint32_t kLoadOptionsV1Size = (uint32_t)offsetof(tglrt_load_options, n_carries);
constexpr uint32_t kLoadOptionsV2Size = (uint32_t)offsetof(tglrt_load_options, f64_as_f32);

// The f64_as_f32 option (0 when the caller's struct predates it).
static bool f64_as_f32_of(const tglrt_load_options* opt) {
    if (!opt || opt->struct_size != sizeof(tglrt_load_options)) return false;
    if (opt->f64_as_f32 > 1 || opt->reserved3)
        throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "options->f64_as_f32 must be 0 or 1 and options->reserved3 0");
    return opt->f64_as_f32 == 1;
}

// The carried (output, input) names of the options, checked for NULLs.
static std::vector<std::pair<std::string, std::string>> carries_of(const tglrt_load_options* opt) {
    std::vector<std::pair<std::string, std::string>> r;
    if (!opt || opt->struct_size == kLoadOptionsV1Size) return r;
    if (opt->reserved2) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "options->reserved2 must be 0");
    if (!opt->n_carries) return r;
    if (!opt->carries) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "options->carries is NULL");
    for (uint32_t i = 0; i < opt->n_carries; ++i) {
        if (!opt->carries[i].output || !opt->carries[i].input)
            throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "carry " + std::to_string(i) + ": output or input name is NULL");
        r.emplace_back(opt->carries[i].output, opt->carries[i].input);
    }
    return r;
}

// Fixed inputs become initializers before anything else looks at the graph.
static void bind_fixed_inputs(onnx::ModelProto& model, const tglrt_load_options* opt) {
    if (!opt) return;
    if (opt->struct_size != sizeof(tglrt_load_options) && opt->struct_size != kLoadOptionsV1Size && opt->struct_size != kLoadOptionsV2Size)
        throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "options->struct_size is " + std::to_string(opt->struct_size) + ", expected " +
                                                      std::to_string(sizeof(tglrt_load_options)) + " (or " + std::to_string(kLoadOptionsV2Size) +
                                                      " without f64_as_f32, " + std::to_string(kLoadOptionsV1Size) + " without carries)");
    if (opt->record_graph > 1 || opt->reserved)
        throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "options->record_graph must be 0 or 1 and options->reserved 0");
    if (!opt->n_fixed_inputs) return;
    if (!opt->fixed_inputs) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "options->fixed_inputs is NULL");
    onnx::GraphProto& g = *model.mutable_graph();
    for (uint32_t i = 0; i < opt->n_fixed_inputs; ++i) {
        const tglrt_fixed_input& f = opt->fixed_inputs[i];
        if (!f.name || (!f.data && f.bytes)) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "fixed input " + std::to_string(i) + ": name or data is NULL");
        const onnx::ValueInfoProto* vi = nullptr;
        for (const auto& in : g.input())
            if (in.name() == f.name) vi = &in;
        if (!vi || !vi->type().has_tensor_type() || !vi->type().tensor_type().has_shape())
            throw Error(TGLRT_ERROR_INVALID_ARGUMENT, std::string("fixed input '") + f.name + "' is not a tensor input of static shape of the model");
        onnx::TensorProto t;
        t.set_name(f.name);
        t.set_data_type(vi->type().tensor_type().elem_type());
        int64_t n = 1;
        for (const auto& d : vi->type().tensor_type().shape().dim()) {
            if (!d.has_dim_value()) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, std::string("fixed input '") + f.name + "' has a dynamic dim");
            t.add_dims(d.dim_value());
            n *= d.dim_value();
        }
        uint64_t want = (uint64_t)n * host_elem_size(t.data_type());
        if (host_elem_size(t.data_type()) == 0 || f.bytes != want)
            throw Error(TGLRT_ERROR_INVALID_ARGUMENT, std::string("fixed input '") + f.name + "': " + std::to_string(f.bytes) + " bytes given, expected " +
                                                          std::to_string(want) + " (" + onnx_type_name(t.data_type()) + ")");
        t.set_raw_data(std::string((const char*)f.data, f.bytes));
        *g.add_initializer() = t;
    }
}

static std::unique_ptr<tglrt_model> load(tglrt_device* device, const std::string& bytes, const std::string& model_dir,
                                         const tglrt_load_options* options = nullptr) {
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes)) throw Error(TGLRT_ERROR_INVALID_MODEL, "not an ONNX model (protobuf parsing failed)");
    bind_fixed_inputs(model, options);
    auto carries = carries_of(options);
    auto m = std::make_unique<tglrt_model>();
    m->m.device = device;
    m->m.plan.f64_as_f32 = f64_as_f32_of(options);
    try {
        plan_graph(m->m, model, model_dir, carries);
        std::vector<std::vector<uint8_t>> in(m->m.input_info.size()), out(m->m.output_info.size());
        std::vector<const void*> ip;
        std::vector<void*> op;
        std::vector<uint64_t> ib, ob;
        for (size_t i = 0; i < in.size(); ++i) in[i].resize(m->m.input_info[i].bytes), ip.push_back(in[i].data()), ib.push_back(in[i].size());
        for (size_t i = 0; i < out.size(); ++i) out[i].resize(m->m.output_info[i].bytes), op.push_back(out[i].data()), ob.push_back(out[i].size());
        try {
            run_model(m->m, ip.data(), ib.data(), (uint32_t)ip.size(), op.data(), ob.data(), (uint32_t)op.size());
        } catch (const Error& e) {
            throw Error(e.status == TGLRT_ERROR_PLUGIN ? TGLRT_ERROR_UNSUPPORTED : e.status,
                        std::string("the plugin refused the plan in a trial run on zeros: ") + e.what());
        }
        m->m.carried.assign(m->m.carried.size(), false);  // the trial run's values are not the caller's
        if (options && options->record_graph) record_graph(m->m);
    } catch (...) {
        release(*device, m->m);
        throw;
    }
    device->models++;
    return m;
}

template <class F> static tglrt_status guarded(F&& f) {
    try {
        f();
        return TGLRT_OK;
    } catch (const Error& e) {
        g_last_error = e.what();
        return e.status;
    } catch (const std::bad_alloc&) {
        g_last_error = "out of host memory";
        return TGLRT_ERROR_INTERNAL;
    } catch (const std::exception& e) {
        g_last_error = std::string("internal error: ") + e.what();
        return TGLRT_ERROR_INTERNAL;
    }
}

static void need(const void* p, const char* what) {
    if (!p) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, std::string(what) + " is NULL");
}

}  // namespace tglrt

using namespace tglrt;

extern "C" {

const char* tglrt_last_error(void) { return g_last_error.c_str(); }

const char* tglrt_status_name(tglrt_status s) {
    switch (s) {
    case TGLRT_OK: return "TGLRT_OK";
    case TGLRT_ERROR_INVALID_ARGUMENT: return "TGLRT_ERROR_INVALID_ARGUMENT";
    case TGLRT_ERROR_IO: return "TGLRT_ERROR_IO";
    case TGLRT_ERROR_INVALID_MODEL: return "TGLRT_ERROR_INVALID_MODEL";
    case TGLRT_ERROR_UNSUPPORTED: return "TGLRT_ERROR_UNSUPPORTED";
    case TGLRT_ERROR_OUT_OF_RANGE: return "TGLRT_ERROR_OUT_OF_RANGE";
    case TGLRT_ERROR_PLUGIN: return "TGLRT_ERROR_PLUGIN";
    case TGLRT_ERROR_INTERNAL: return "TGLRT_ERROR_INTERNAL";
    default: return "TGLRT_ERROR_(unknown status)";
    }
}

tglrt_status tglrt_device_open(const char* plugin, uint32_t index, tglrt_device** out) {
    return guarded([&] {
        need(out, "out");
        *out = nullptr;
        need(plugin, "plugin");
        auto d = std::make_unique<tglrt_device>();
        tgl_status s = tgl_plugin_load(plugin, &d->plugin);
        if (s != TGL_OK) throw Error(TGLRT_ERROR_PLUGIN, std::string("loading plugin '") + plugin + "' failed with " + tgl_status_name(s) + ": " + tgl_loader_last_error());
        d->api = tgl_plugin_get_api(d->plugin);
        d->abi_minor = tgl_plugin_abi_minor(d->plugin);
        s = d->api->device_open(index, &d->device);
        if (s != TGL_OK) {
            std::string m = plugin_message(*d->api, s);
            tgl_plugin_release(d->plugin);
            throw Error(TGLRT_ERROR_PLUGIN, std::string("opening device ") + std::to_string(index) + " of plugin '" + plugin + "' failed with " + m);
        }
        *out = d.release();
    });
}

tglrt_status tglrt_device_close(tglrt_device* d) {
    if (!d) return TGLRT_OK;
    return guarded([&] {
        if (d->models) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, std::to_string(d->models) + " model(s) of this device are not freed yet");
        tgl_status s = d->api->device_close(d->device);
        std::string m = s == TGL_OK ? "" : plugin_message(*d->api, s);
        tgl_plugin_release(d->plugin);
        delete d;
        if (s != TGL_OK) throw Error(TGLRT_ERROR_PLUGIN, "device_close failed with " + m);
    });
}

const char* tglrt_device_plugin_name(const tglrt_device* d) { return d ? tgl_plugin_name(d->plugin) : nullptr; }

tglrt_status tglrt_model_load(tglrt_device* device, const char* path, tglrt_model** out) {
    return tglrt_model_load_ex(device, path, nullptr, out);
}

tglrt_status tglrt_model_load_ex(tglrt_device* device, const char* path, const tglrt_load_options* options, tglrt_model** out) {
    return guarded([&] {
        need(out, "out");
        *out = nullptr;
        need(device, "device");
        need(path, "path");
        struct stat st;
        if (stat(path, &st) != 0) throw Error(TGLRT_ERROR_IO, std::string("cannot open model '") + path + "': " + std::strerror(errno));
        if (!S_ISREG(st.st_mode)) throw Error(TGLRT_ERROR_IO, std::string("model '") + path + "' is not a regular file");
        std::string bytes = read_file(path, kMaxModelBytes, "model");
        std::string p = path;
        size_t slash = p.rfind('/');
        std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : p.substr(0, slash));
        *out = load(device, bytes, dir, options).release();
    });
}

tglrt_status tglrt_model_load_bytes(tglrt_device* device, const void* data, size_t size, tglrt_model** out) {
    return guarded([&] {
        need(out, "out");
        *out = nullptr;
        need(device, "device");
        need(data, "data");
        if (size > kMaxModelBytes) throw Error(TGLRT_ERROR_INVALID_MODEL, "model of " + std::to_string(size) + " bytes is above the 2 GiB limit");
        *out = load(device, std::string((const char*)data, size), "").release();
    });
}

void tglrt_model_free(tglrt_model* m) {
    if (!m) return;
    tglrt_device* d = m->m.device;
    release(*d, m->m);
    d->models--;
    delete m;
}

uint32_t tglrt_model_input_count(const tglrt_model* m) { return m ? (uint32_t)m->m.input_info.size() : 0; }
uint32_t tglrt_model_output_count(const tglrt_model* m) { return m ? (uint32_t)m->m.output_info.size() : 0; }

static tglrt_status info_at(const tglrt_model* m, uint32_t i, tglrt_tensor_info* out, bool input) {
    return guarded([&] {
        need(m, "model");
        need(out, "out");
        const auto& list = input ? m->m.input_info : m->m.output_info;
        if (i >= list.size())
            throw Error(TGLRT_ERROR_INVALID_ARGUMENT, std::string(input ? "input" : "output") + " index " + std::to_string(i) +
                                                          " is out of range (the model has " + std::to_string(list.size()) + ")");
        *out = list[i];
    });
}
tglrt_status tglrt_model_input_info(const tglrt_model* m, uint32_t i, tglrt_tensor_info* out) { return info_at(m, i, out, true); }
tglrt_status tglrt_model_output_info(const tglrt_model* m, uint32_t i, tglrt_tensor_info* out) { return info_at(m, i, out, false); }

tglrt_status tglrt_model_run(tglrt_model* m, const void* const* inputs, const uint64_t* input_bytes, uint32_t n_inputs,
                             void* const* outputs, const uint64_t* output_bytes, uint32_t n_outputs) {
    return guarded([&] {
        need(m, "model");
        run_model(m->m, inputs, input_bytes, n_inputs, outputs, output_bytes, n_outputs);
    });
}

tglrt_status tglrt_model_memory(const tglrt_model* m, uint64_t* w, uint64_t* peak, uint64_t* naive) {
    return guarded([&] {
        need(m, "model");
        if (w) *w = m->m.weight_bytes;
        if (peak) *peak = m->m.peak_bytes;
        if (naive) *naive = m->m.naive_bytes;
    });
}

tglrt_status tglrt_model_set_profiling(tglrt_model* m, int enabled) {
    return guarded([&] {
        need(m, "model");
        m->m.profiling = enabled != 0;
        if (enabled)
            for (NodeInfo& n : m->m.plan.nodes) n.total_ns = 0, n.runs = 0;
    });
}

uint32_t tglrt_model_profile_count(const tglrt_model* m) { return m ? (uint32_t)m->m.plan.nodes.size() : 0; }

tglrt_status tglrt_model_profile_entry(const tglrt_model* m, uint32_t i, tglrt_profile_entry* out) {
    return guarded([&] {
        need(m, "model");
        need(out, "out");
        const auto& nodes = m->m.plan.nodes;
        if (i >= nodes.size()) throw Error(TGLRT_ERROR_INVALID_ARGUMENT, "profile index " + std::to_string(i) + " is out of range (" + std::to_string(nodes.size()) + " nodes)");
        out->node_name = nodes[i].name.c_str();
        out->op_type = nodes[i].op_type.c_str();
        out->device_ops = nodes[i].device_ops;
        out->runs = nodes[i].runs;
        out->total_ns = nodes[i].total_ns;
        out->device_timer = m->m.timer == 1;
    });
}

}  // extern "C"
