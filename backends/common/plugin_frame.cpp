// The C function table of a plugin, built around a tgl::Backend. Every entry point: catches all
// exceptions (tgl::guard), checks pointers and handles, checks byte ranges and op arguments, and
// only then calls the backend.
#include "backend.h"
#include "status.h"
#include "validate_util.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tgl {
namespace {

// One run_op of a recording that returned TGL_OK: what the device recorded (null: a no-op, whose
// outputs are empty), and its arguments, kept so that graph_replay_with can validate and plan a
// copy with some of them changed.
struct RecordedCall {
    const OpInfo* info = nullptr;
    std::vector<uint8_t> params;  // the params struct's bytes (struct_size of them); empty: NULL
    std::vector<tgl_tensor> inputs, outputs;
    std::vector<BufferRef> buffers;  // per operand (inputs, then outputs): the resolved buffer (null: absent)
    std::shared_ptr<Device::RecordedOp> device_op;
    std::shared_ptr<const OpCall> call;  // the validated call (params pointer null), for Device::plan_graph
};

struct DeviceRecord {
    std::shared_ptr<Device> device;
    std::mutex timer_mutex;
    bool timer_open = false;  // between a successful timer_begin and its timer_end
    // ABI 1.2 graph recording: between graph_begin and graph_end, run_op records into `recorded`
    // (under graph_mutex); `recording` is read without the lock on run_op's fast path.
    std::mutex graph_mutex;
    std::atomic<bool> recording{false};
    std::vector<RecordedCall> recorded;
};

struct GraphRecord {
    Device::RecordedOps ops;  // the device's recorded ops, in order (no-ops left out)
    std::vector<RecordedCall> calls;  // every recorded run_op, in order: graph_replay_with's op_index
    uint64_t device_handle;
};

struct BufferRecord {
    BufferRef buffer;
    uint64_t device_handle;
};

struct Frame {
    Backend* backend = nullptr;
    std::atomic<uint32_t> negotiated_minor{TGL_ABI_MINOR};
    std::unique_ptr<HandleTable<DeviceRecord>> devices;
    std::unique_ptr<HandleTable<BufferRecord>> buffers;
    std::unique_ptr<HandleTable<GraphRecord>> graphs;
};

// Never destroyed: at process exit other host threads may still be inside a call (a destroyed
// handle table under them crashed the process), and a device's GL teardown must not run while the
// driver's own exit handlers run. Open devices end with the process.
Frame& frame() {
    static Frame* f = new Frame;
    return *f;
}

void require(const void* p, const char* what) {
    if (!p) fail(TGL_ERROR_NULL_POINTER, "%s is NULL", what);
}

std::shared_ptr<Device> get_device(tgl_device handle) {
    return frame().devices->get(handle, "device")->device;
}

std::shared_ptr<BufferRecord> get_buffer_record(tgl_device device, tgl_buffer handle, const char* what,
                                                bool freeing = false) {
    std::shared_ptr<BufferRecord> rec;
    try {
        rec = frame().buffers->get(handle, what, freeing);
    } catch (const Error& e) {
        // Another thread closed the device after this call checked it: say so, rather than only
        // "buffer was freed", which the caller never did.
        if (e.status() == TGL_ERROR_STALE_HANDLE) {
            bool device_closed = false;
            try {
                frame().devices->get(device, "device");
            } catch (const Error& d) {
                device_closed = d.status() == TGL_ERROR_STALE_HANDLE;
            }
            if (device_closed)
                fail(TGL_ERROR_STALE_HANDLE, "%s; device 0x%016llx was closed during this call, and its buffers with it",
                     e.what(), (unsigned long long)device);
        }
        throw;
    }
    if (rec->device_handle != device)
        fail(TGL_ERROR_INVALID_HANDLE, "%s = 0x%016llx belongs to another device (0x%016llx), not device 0x%016llx",
             what, (unsigned long long)handle, (unsigned long long)rec->device_handle,
             (unsigned long long)device);
    return rec;
}

BufferRef get_buffer(tgl_device device, tgl_buffer handle, const char* what) {
    return get_buffer_record(device, handle, what)->buffer;
}

// [offset, offset + bytes) must lie inside a buffer of `size` bytes.
void check_range(const char* what, uint64_t offset, uint64_t bytes, uint64_t size) {
    uint64_t end;
    if (__builtin_add_overflow(offset, bytes, &end))
        fail(TGL_ERROR_SIZE_OVERFLOW, "%s: offset %llu + %llu bytes overflows 64 bits", what,
             (unsigned long long)offset, (unsigned long long)bytes);
    if (end > size)
        fail(TGL_ERROR_OUT_OF_BOUNDS, "%s: bytes [%llu, %llu) reach past the end of the %llu-byte buffer",
             what, (unsigned long long)offset, (unsigned long long)end, (unsigned long long)size);
}

const char* api_last_error_message() { return last_error_message(); }

tgl_status api_get_plugin_info(tgl_plugin_info* info) {
    return guard("get_plugin_info", [&] {
        require(info, "info");
        if (info->struct_size < sizeof(tgl_plugin_info))
            fail(TGL_ERROR_PARAMS_SIZE, "info->struct_size is %u, expected at least %zu", info->struct_size,
                 sizeof(tgl_plugin_info));
        info->struct_size = sizeof(tgl_plugin_info);
        info->abi_major = TGL_ABI_MAJOR;
        info->abi_minor = TGL_ABI_MINOR;
        info->negotiated_minor = frame().negotiated_minor.load();
        info->name = frame().backend->name();
        info->version = frame().backend->version();
        info->description = frame().backend->description();
    });
}

tgl_status api_device_count(uint32_t* count) {
    return guard("device_count", [&] {
        require(count, "count");
        *count = frame().backend->device_count();
    });
}

void check_device_index(uint32_t index) {
    uint32_t n = frame().backend->device_count();
    if (index >= n) {
        std::string note = frame().backend->device_count_note();
        fail(TGL_ERROR_DEVICE_UNAVAILABLE, "no device %u: plugin '%s' has %u device%s%s%s%s", index,
             frame().backend->name(), n, n == 1 ? "" : "s", note.empty() ? "" : " (", note.c_str(),
             note.empty() ? "" : ")");
    }
}

tgl_status api_device_properties(uint32_t index, const tgl_property** props, uint32_t* count) {
    return guard("device_properties", [&] {
        require(props, "props");
        require(count, "count");
        check_device_index(index);
        const std::vector<tgl_property>& p = frame().backend->device_properties(index);
        *props = p.data();
        *count = static_cast<uint32_t>(p.size());
    });
}

tgl_status api_device_open(uint32_t index, tgl_device* out) {
    return guard("device_open", [&] {
        require(out, "out");
        check_device_index(index);
        auto rec = std::make_shared<DeviceRecord>();
        rec->device = frame().backend->open_device(index);
        *out = frame().devices->insert(std::move(rec));
    });
}

tgl_status api_device_close(tgl_device device) {
    return guard("device_close", [&] {
        std::shared_ptr<DeviceRecord> rec = frame().devices->remove(device, "device");
        // The device's buffers become stale; in-flight calls keep the objects alive until done.
        frame().buffers->remove_if([&](const BufferRecord& b) { return b.device_handle == device; });
        frame().graphs->remove_if([&](const GraphRecord& g) { return g.device_handle == device; });
        {
            std::lock_guard<std::mutex> lock(rec->graph_mutex);  // an open recording ends with the device
            rec->recording = false;
            rec->recorded.clear();
        }
        rec->device->synchronize_for_close();
    });
}

tgl_status api_buffer_alloc(tgl_device device, uint64_t bytes, tgl_buffer* out) {
    return guard("buffer_alloc", [&] {
        require(out, "out");
        std::shared_ptr<Device> dev = get_device(device);
        auto rec = std::make_shared<BufferRecord>();
        rec->buffer = dev->alloc(bytes);
        rec->device_handle = device;
        *out = frame().buffers->insert(std::move(rec));
    });
}

tgl_status api_buffer_free(tgl_device device, tgl_buffer buffer) {
    return guard("buffer_free", [&] {
        get_device(device);
        get_buffer_record(device, buffer, "buffer", /*freeing=*/true);  // checks before removing
        frame().buffers->remove(buffer, "buffer");
    });
}

tgl_status api_buffer_size(tgl_device device, tgl_buffer buffer, uint64_t* bytes) {
    return guard("buffer_size", [&] {
        require(bytes, "bytes");
        get_device(device);
        *bytes = get_buffer(device, buffer, "buffer")->size();
    });
}

tgl_status api_buffer_upload(tgl_device device, tgl_buffer buffer, uint64_t offset, const void* src,
                             uint64_t bytes) {
    return guard("buffer_upload", [&] {
        std::shared_ptr<Device> dev = get_device(device);
        BufferRef buf = get_buffer(device, buffer, "buffer");
        if (bytes) require(src, "src");
        check_range("buffer", offset, bytes, buf->size());
        if (bytes) dev->upload(buf, offset, src, bytes);
    });
}

tgl_status api_buffer_download(tgl_device device, tgl_buffer buffer, uint64_t offset, void* dst,
                               uint64_t bytes) {
    return guard("buffer_download", [&] {
        std::shared_ptr<Device> dev = get_device(device);
        BufferRef buf = get_buffer(device, buffer, "buffer");
        if (bytes) require(dst, "dst");
        check_range("buffer", offset, bytes, buf->size());
        if (bytes) dev->download(buf, offset, dst, bytes);
    });
}

tgl_status api_buffer_copy(tgl_device device, tgl_buffer src, uint64_t src_offset, tgl_buffer dst,
                           uint64_t dst_offset, uint64_t bytes) {
    return guard("buffer_copy", [&] {
        std::shared_ptr<Device> dev = get_device(device);
        BufferRef s = get_buffer(device, src, "src");
        BufferRef d = get_buffer(device, dst, "dst");
        check_range("src", src_offset, bytes, s->size());
        check_range("dst", dst_offset, bytes, d->size());
        if (s == d && bytes && src_offset < dst_offset + bytes && dst_offset < src_offset + bytes)
            fail(TGL_ERROR_INVALID_ARGUMENT, "src bytes [%llu, %llu) and dst bytes [%llu, %llu) overlap in the same buffer",
                 (unsigned long long)src_offset, (unsigned long long)(src_offset + bytes),
                 (unsigned long long)dst_offset, (unsigned long long)(dst_offset + bytes));
        if (bytes) dev->copy(s, src_offset, d, dst_offset, bytes);
    });
}

tgl_status api_buffer_fill(tgl_device device, tgl_buffer buffer, uint64_t offset, uint64_t bytes,
                           const void* pattern, uint32_t pattern_size) {
    return guard("buffer_fill", [&] {
        std::shared_ptr<Device> dev = get_device(device);
        BufferRef buf = get_buffer(device, buffer, "buffer");
        require(pattern, "pattern");
        if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8 && pattern_size != 16)
            fail(TGL_ERROR_INVALID_ARGUMENT, "pattern_size must be 1, 2, 4, 8 or 16, got %u", pattern_size);
        if (offset % pattern_size || bytes % pattern_size)
            fail(TGL_ERROR_INVALID_ARGUMENT, "offset %llu and bytes %llu must be multiples of pattern_size %u",
                 (unsigned long long)offset, (unsigned long long)bytes, pattern_size);
        check_range("buffer", offset, bytes, buf->size());
        if (bytes) dev->fill(buf, offset, bytes, pattern, pattern_size);
    });
}

tgl_status api_query_op(tgl_op op, tgl_op_caps* caps) {
    return guard("query_op", [&] {
        require(caps, "caps");
        if (caps->struct_size < sizeof(tgl_op_caps))
            fail(TGL_ERROR_PARAMS_SIZE, "caps->struct_size is %u, expected at least %zu", caps->struct_size,
                 sizeof(tgl_op_caps));
        const OpInfo* info = find_op(op);
        if (!info) fail(TGL_ERROR_UNKNOWN_OP, "op id %u is not in the tensorgl ABI 1.%u catalogue", op, TGL_ABI_MINOR);
        std::memset(caps, 0, sizeof *caps);
        caps->struct_size = sizeof(tgl_op_caps);
        caps->op = op;
        caps->name = info->name;
        caps->n_inputs = info->n_inputs;
        caps->n_outputs = info->n_outputs;
        caps->params_size = info->params_size;
        // Every plugin implements every op of the catalogue that is not planned, in every dtype of
        // its rules (conformance and differential suites hold both plugins to that).
        if (is_planned(op)) return;
        caps->supported = 1;
        caps->max_rank = TGL_MAX_RANK;
        caps->flags = frame().backend->op_flags(op);
        for (uint32_t slot = 0; slot < info->n_inputs + info->n_outputs; ++slot) {
            const OperandRule* rule = &info->operands[slot];
            while (rule->same_as >= 0) rule = &info->operands[rule->same_as];
            if (slot < info->n_inputs) caps->input_dtypes[slot] = rule->dtypes;
            else caps->output_dtypes[slot - info->n_inputs] = rule->dtypes;
        }
    });
}

RecordedCall recorded_call(const OpCall& call, const void* params, const tgl_tensor* inputs, uint32_t n_inputs,
                           const tgl_tensor* outputs, uint32_t n_outputs) {
    RecordedCall r;
    r.info = call.info;
    if (params) {  // validated: struct_size is a published size, at most the struct's
        uint32_t size;
        std::memcpy(&size, params, sizeof size);
        size = std::min(size, call.info->params_size);
        r.params.assign(static_cast<const uint8_t*>(params), static_cast<const uint8_t*>(params) + size);
    }
    r.inputs.assign(inputs, inputs + n_inputs);
    r.outputs.assign(outputs, outputs + n_outputs);
    for (const TensorArg& t : call.inputs) r.buffers.push_back(t.buffer);
    for (const TensorArg& t : call.outputs) r.buffers.push_back(t.buffer);
    auto kept = std::make_shared<OpCall>(call);
    kept->params = nullptr;  // the caller's struct: valid only during the call
    r.call = std::move(kept);
    return r;
}

// The device's plan (Device::plan_graph) of the ops recorded for `calls`, whose device ops are
// `ops` (a no-op call has none).
Device::RecordedOps planned_ops(Device& dev, const std::vector<std::shared_ptr<const OpCall>>& calls,
                                std::shared_ptr<std::vector<std::shared_ptr<Device::RecordedOp>>> ops) {
    std::vector<const OpCall*> done;
    for (const auto& c : calls)
        if (!c->noop) done.push_back(c.get());
    if (done.size() != ops->size())
        fail(TGL_ERROR_INTERNAL, "graph planning: %zu recorded calls but %zu device ops", done.size(), ops->size());
    return dev.plan_graph(done, ops);
}

tgl_status api_run_op(tgl_device device, tgl_op op, const void* params, const tgl_tensor* inputs,
                      uint32_t n_inputs, const tgl_tensor* outputs, uint32_t n_outputs) {
    return guard("run_op", [&] {
        std::shared_ptr<DeviceRecord> rec = frame().devices->get(device, "device");
        Device* dev = rec->device.get();
        const OpInfo* info = find_op(op);
        if (!info) fail(TGL_ERROR_UNKNOWN_OP, "op id %u is not in the tensorgl ABI 1.%u catalogue", op, TGL_ABI_MINOR);
        if (is_planned(op))
            fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' (id %u) is not implemented by plugin '%s' (query_op reports it unsupported)",
                 info->name, op, frame().backend->name());
        OpCall call = validate_op(*info, params, inputs, n_inputs, outputs, n_outputs,
                                  [&](tgl_buffer b, const char* what) { return get_buffer(device, b, what); });
        if (rec->recording.load(std::memory_order_acquire)) {
            std::lock_guard<std::mutex> lock(rec->graph_mutex);
            if (rec->recording) {  // (graph_end may have come in between)
                RecordedCall r = recorded_call(call, params, inputs, n_inputs, outputs, n_outputs);
                if (!call.noop) r.device_op = dev->record(call);
                rec->recorded.push_back(std::move(r));  // (nothing recorded if the above throws)
                return;
            }
        }
        if (call.noop) return;
        dev->run(call);
    });
}

tgl_status api_synchronize(tgl_device device) {
    return guard("synchronize", [&] { get_device(device)->synchronize(); });
}

tgl_status api_timer_begin(tgl_device device) {
    return guard("timer_begin", [&] {
        std::shared_ptr<DeviceRecord> rec = frame().devices->get(device, "device");
        std::lock_guard<std::mutex> lock(rec->timer_mutex);
        if (rec->timer_open)
            fail(TGL_ERROR_INVALID_ARGUMENT, "a timer region is already open on this device (call timer_end first)");
        rec->device->timer_begin();
        rec->timer_open = true;
    });
}

tgl_status api_timer_end(tgl_device device, uint64_t* elapsed_ns, uint32_t* flags) {
    return guard("timer_end", [&] {
        require(elapsed_ns, "elapsed_ns");
        std::shared_ptr<DeviceRecord> rec = frame().devices->get(device, "device");
        std::lock_guard<std::mutex> lock(rec->timer_mutex);
        if (!rec->timer_open) fail(TGL_ERROR_INVALID_ARGUMENT, "no timer region is open on this device (call timer_begin first)");
        rec->timer_open = false;  // closed whatever happens next
        uint32_t f = 0;
        *elapsed_ns = rec->device->timer_end(&f);
        if (flags) *flags = f;
    });
}

// The graph `handle`, checked to belong to `device`.
std::shared_ptr<GraphRecord> get_graph(tgl_device device, tgl_graph handle, bool destroying = false) {
    std::shared_ptr<GraphRecord> g = frame().graphs->get(handle, "graph", destroying);
    if (g->device_handle != device)
        fail(TGL_ERROR_INVALID_HANDLE, "graph = 0x%016llx belongs to another device (0x%016llx), not device 0x%016llx",
             (unsigned long long)handle, (unsigned long long)g->device_handle, (unsigned long long)device);
    return g;
}

tgl_status api_graph_begin(tgl_device device) {
    return guard("graph_begin", [&] {
        std::shared_ptr<DeviceRecord> rec = frame().devices->get(device, "device");
        std::lock_guard<std::mutex> lock(rec->graph_mutex);
        if (rec->recording)
            fail(TGL_ERROR_INVALID_ARGUMENT, "a graph is already being recorded on this device (call graph_end first)");
        rec->recorded.clear();
        rec->recording.store(true, std::memory_order_release);
    });
}

tgl_status api_graph_end(tgl_device device, tgl_graph* out) {
    return guard("graph_end", [&] {
        require(out, "out");
        std::shared_ptr<DeviceRecord> rec = frame().devices->get(device, "device");
        std::lock_guard<std::mutex> lock(rec->graph_mutex);
        if (!rec->recording)
            fail(TGL_ERROR_INVALID_ARGUMENT, "no graph is being recorded on this device (call graph_begin first)");
        auto ops = std::make_shared<std::vector<std::shared_ptr<Device::RecordedOp>>>();
        std::vector<std::shared_ptr<const OpCall>> calls;
        for (const RecordedCall& c : rec->recorded) {
            if (c.device_op) ops->push_back(c.device_op);
            calls.push_back(c.call);
        }
        auto g = std::make_shared<GraphRecord>();
        g->ops = planned_ops(*rec->device, calls, ops);
        g->calls = rec->recorded;
        g->device_handle = device;
        *out = frame().graphs->insert(std::move(g));  // too many graphs: the recording stays open, with its ops
        rec->recorded.clear();
        rec->recording.store(false, std::memory_order_release);
    });
}

// graph_replay_with: what bindings[i] changes, checked against the graph (plugin_api.h).
const tgl_graph_binding& binding_at(const tgl_graph_binding* bindings, uint32_t i) {
    return *reinterpret_cast<const tgl_graph_binding*>(reinterpret_cast<const uint8_t*>(bindings) +
                                                       size_t(i) * bindings[0].struct_size);
}

void check_binding(const GraphRecord& g, const tgl_graph_binding& b, uint32_t i) {
    if (b.struct_size != TGL_GRAPH_BINDING_SIZE_V1_3)
        fail(TGL_ERROR_PARAMS_SIZE, "bindings[%u].struct_size is %u, expected %u (TGL_GRAPH_BINDING_SIZE_V1_3)%s", i,
             b.struct_size, unsigned(TGL_GRAPH_BINDING_SIZE_V1_3), i ? ", the size of bindings[0]" : "");
    if (b.op_index >= g.calls.size())
        fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u].op_index is %u but the graph recorded %zu op%s", i, b.op_index,
             g.calls.size(), g.calls.size() == 1 ? "" : "s");
    if (b.reserved != 0) fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u].reserved must be 0, got %u", i, b.reserved);
    const RecordedCall& c = g.calls[b.op_index];
    if (b.kind == TGL_GRAPH_BIND_INPUT || b.kind == TGL_GRAPH_BIND_OUTPUT) {
        const bool output = b.kind == TGL_GRAPH_BIND_OUTPUT;
        const size_t n = output ? c.outputs.size() : c.inputs.size();
        if (b.slot >= n)
            fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u].slot is %u but op %u of the graph ('%s') has %zu %s", i, b.slot,
                 b.op_index, c.info->name, n, output ? "outputs" : "inputs");
        if (!c.buffers[(output ? c.inputs.size() : 0) + b.slot])
            fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u]: %s of op %u of the graph ('%s') was recorded absent (buffer 0), so it cannot be bound",
                 i, operand_label(*c.info, output, b.slot).c_str(), b.op_index, c.info->name);
        if (b.value_size != 0)
            fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u].value_size must be 0 for an operand binding, got %u", i, b.value_size);
    } else if (b.kind == TGL_GRAPH_BIND_PARAMS) {
        if (c.params.empty())
            fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u]: op %u of the graph ('%s') was recorded with NULL params, which have "
                 "no fields to bind (record it with a params struct)", i, b.op_index, c.info->name);
        if (b.value_size < 1 || b.value_size > 8)
            fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u].value_size must be 1 .. 8, got %u", i, b.value_size);
        if (b.slot < sizeof(uint32_t) || uint64_t(b.slot) + b.value_size > c.params.size())
            fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u]: params bytes [%u, %llu) of op %u ('%s') are not inside its recorded "
                 "%zu-byte struct after struct_size ([4, %zu))", i, b.slot, (unsigned long long)b.slot + b.value_size,
                 b.op_index, c.info->name, c.params.size(), c.params.size());
    } else {
        fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u].kind must be TGL_GRAPH_BIND_INPUT (1), _OUTPUT (2) or _PARAMS (3), got %u",
             i, b.kind);
    }
}

// Two bindings that change the same operand, or overlapping params bytes, of one op.
bool bindings_collide(const tgl_graph_binding& a, const tgl_graph_binding& b) {
    if (a.op_index != b.op_index || a.kind != b.kind) return false;
    if (a.kind != TGL_GRAPH_BIND_PARAMS) return a.slot == b.slot;
    return a.slot < b.slot + b.value_size && b.slot < a.slot + a.value_size;
}

// The device ops of `g` with the bindings applied: each bound op validated and recorded again.
Device::RecordedOps bound_ops(
    tgl_device device, Device& dev, const GraphRecord& g, const tgl_graph_binding* bindings, uint32_t n) {
    std::vector<std::vector<uint32_t>> by_op(g.calls.size());  // binding numbers per op
    for (uint32_t i = 0; i < n; ++i) {
        const tgl_graph_binding& b = binding_at(bindings, i);
        check_binding(g, b, i);
        for (uint32_t j : by_op[b.op_index])
            if (bindings_collide(binding_at(bindings, j), b))
                fail(TGL_ERROR_INVALID_ARGUMENT, "bindings[%u] and bindings[%u] both change %s of op %u of the graph", j, i,
                     b.kind == TGL_GRAPH_BIND_PARAMS ? "params bytes" : "the same operand", b.op_index);
        by_op[b.op_index].push_back(i);
    }
    auto ops = std::make_shared<std::vector<std::shared_ptr<Device::RecordedOp>>>();
    std::vector<std::shared_ptr<const OpCall>> calls;  // as bound, for the device's plan of the whole graph
    for (size_t k = 0; k < g.calls.size(); ++k) {
        const RecordedCall& c = g.calls[k];
        if (by_op[k].empty()) {
            if (c.device_op) ops->push_back(c.device_op);
            calls.push_back(c.call);
            continue;
        }
        // The op's arguments with the bindings applied; every operand's buffer as a token (its slot
        // + 1) that the lookup below resolves: recorded buffers stay valid after buffer_free.
        std::vector<uint8_t> params = c.params;
        std::vector<tgl_tensor> ins = c.inputs, outs = c.outputs;
        std::vector<BufferRef> refs = c.buffers;
        for (uint32_t i : by_op[k]) {
            const tgl_graph_binding& b = binding_at(bindings, i);
            if (b.kind == TGL_GRAPH_BIND_PARAMS) {
                std::memcpy(params.data() + b.slot, b.value, b.value_size);
                continue;
            }
            const bool output = b.kind == TGL_GRAPH_BIND_OUTPUT;
            tgl_tensor& t = output ? outs[b.slot] : ins[b.slot];
            const std::string what = format("bindings[%u].buffer", i);
            refs[(output ? ins.size() : 0) + b.slot] = get_buffer(device, b.buffer, what.c_str());
            t.byte_offset = b.byte_offset;
        }
        for (size_t s = 0; s < refs.size(); ++s)
            if (refs[s]) (s < ins.size() ? ins[s] : outs[s - ins.size()]).buffer = tgl_buffer(s + 1);
        OpCall call;
        try {
            call = validate_op(*c.info, params.empty() ? nullptr : params.data(), ins.data(), uint32_t(ins.size()),
                               outs.data(), uint32_t(outs.size()),
                               [&](tgl_buffer token, const char*) { return refs[size_t(token - 1)]; });
        } catch (const Error& e) {
            fail(e.status(), "op %zu of the graph ('%s') with bindings applied: %s", k, c.info->name, e.what());
        }
        if (!call.noop) ops->push_back(dev.record(call));
        auto kept = std::make_shared<OpCall>(std::move(call));
        kept->params = nullptr;
        calls.push_back(std::move(kept));
    }
    return planned_ops(dev, calls, ops);
}

// graph_replay and graph_replay_with (n_bindings 0: the graph as recorded).
void replay_graph(tgl_device device, tgl_graph graph, const tgl_graph_binding* bindings, uint32_t n_bindings) {
    if (n_bindings) require(bindings, "bindings");
    std::shared_ptr<DeviceRecord> rec = frame().devices->get(device, "device");
    std::shared_ptr<GraphRecord> g = get_graph(device, graph);
    std::lock_guard<std::mutex> lock(rec->graph_mutex);
    if (rec->recording)
        fail(TGL_ERROR_INVALID_ARGUMENT, "graph = 0x%016llx cannot be replayed while this device records a graph "
             "(call graph_end first)", (unsigned long long)graph);
    // Everything is validated and planned before anything is queued.
    Device::RecordedOps ops = n_bindings ? bound_ops(device, *rec->device, *g, bindings, n_bindings) : g->ops;
    if (!ops->empty()) rec->device->replay(ops);
}

tgl_status api_graph_replay(tgl_device device, tgl_graph graph) {
    return guard("graph_replay", [&] { replay_graph(device, graph, nullptr, 0); });
}

tgl_status api_graph_replay_with(tgl_device device, tgl_graph graph, const tgl_graph_binding* bindings,
                                 uint32_t n_bindings) {
    return guard("graph_replay_with", [&] { replay_graph(device, graph, bindings, n_bindings); });
}

tgl_status api_graph_destroy(tgl_device device, tgl_graph graph) {
    return guard("graph_destroy", [&] {
        get_device(device);
        get_graph(device, graph, /*destroying=*/true);  // checks before removing
        frame().graphs->remove(graph, "graph");
    });
}

const tgl_plugin_api kApi = {
    sizeof(tgl_plugin_api), TGL_ABI_MAJOR, TGL_ABI_MINOR,
    api_last_error_message, api_get_plugin_info, api_device_count, api_device_properties,
    api_device_open, api_device_close, api_buffer_alloc, api_buffer_free, api_buffer_size,
    api_buffer_upload, api_buffer_download, api_buffer_copy, api_buffer_fill, api_query_op,
    api_run_op, api_synchronize,
    // since 1.1
    api_timer_begin, api_timer_end,
    // since 1.2
    api_graph_begin, api_graph_end, api_graph_replay, api_graph_destroy,
    // since 1.3
    api_graph_replay_with,
};

}  // namespace

void Device::timer_begin() {
    fail(TGL_ERROR_UNIMPLEMENTED, "this device has no timer");
}

uint64_t Device::timer_end(uint32_t*) {
    fail(TGL_ERROR_UNIMPLEMENTED, "this device has no timer");
}

// Test hook TGL_TEST_HANDLE_GENERATION=<n> (1 .. 2^24 - 1, decimal or 0x hex), read when the plugin
// is initialised: new handle slots start at generation n instead of 1, so that a test reaches the
// last generation of a slot in a few reuses rather than 16.7 million.
uint32_t first_handle_generation() {
    const char* v = secure_getenv("TGL_TEST_HANDLE_GENERATION");
    if (!v || !*v) return 1;
    char* end = nullptr;
    errno = 0;
    unsigned long long n = std::strtoull(v, &end, 0);
    if (errno || *end || n < 1 || n > 0xFFFFFFu)
        fail(TGL_ERROR_INVALID_ARGUMENT, "TGL_TEST_HANDLE_GENERATION = '%s' is not a number from 1 to 16777215", v);
    return uint32_t(n);
}

tgl_status plugin_init(Backend& backend, uint32_t host_abi_minor, const tgl_plugin_api** out) {
    return guard("tgl_plugin_init_v1", [&] {
        require(out, "out");
        Frame& f = frame();
        static std::once_flag once;
        std::call_once(once, [&] {
            const uint32_t g = first_handle_generation();
            f.devices = std::make_unique<HandleTable<DeviceRecord>>("device", uint8_t(backend.handle_tag() ^ 0x80),
                                                                     "closed", g);
            f.buffers = std::make_unique<HandleTable<BufferRecord>>("buffer", backend.handle_tag(), "freed", g);
            f.graphs = std::make_unique<HandleTable<GraphRecord>>("graph", uint8_t(backend.handle_tag() ^ 0x40),
                                                                   "destroyed", g);
            f.backend = &backend;  // last: a throw above leaves the frame uninitialised, tried again next time
        });
        f.negotiated_minor = std::min<uint32_t>(host_abi_minor, TGL_ABI_MINOR);
        *out = &kApi;
    });
}

}  // namespace tgl
