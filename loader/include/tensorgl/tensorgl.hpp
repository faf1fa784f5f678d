// tensorgl.hpp: a small header-only C++17 wrapper over libtensorgl and the plugin ABI.
//
//   tgl::Plugin cpu("cpu");                       // or a path; throws tgl::Error if it fails
//   tgl::Device dev(cpu, 0);                      // device_open / device_close (RAII)
//   auto a = tgl::Buffer::from(dev, std::vector<float>{1, 2, 3, 4});
//   tgl::Buffer y(dev, 4 * sizeof(float));
//   tgl::run_op(dev, TGL_OP_NEG, nullptr, {tgl::tensor<float>(a, {2, 2})},
//               {tgl::tensor<float>(y, {2, 2})});
//   std::vector<float> out = y.download<float>();
//
// Errors become tgl::Error (a std::runtime_error with the tgl_status and the plugin's or the
// loader's message). Exceptions live on the host side only: nothing here throws across the C ABI.
// Destructors never throw; they ignore the status of device_close / buffer_free (a buffer whose
// device was closed first is already freed: its buffer_free reports a stale handle, ignored).
//
// The classes sit in the inline namespace tgl::host so that they never collide at link time with
// the plugins' internal tgl:: types; write them as tgl::Plugin, tgl::Error and so on.
#ifndef TENSORGL_TENSORGL_HPP
#define TENSORGL_TENSORGL_HPP

#include <tensorgl/loader.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tgl {
inline namespace host {

// ---------------------------------------------------------------------------------------------
// Errors.

class Error : public std::runtime_error {
public:
    Error(tgl_status status, const std::string& message)
        : std::runtime_error(message), status_(status) {}
    tgl_status status() const noexcept { return status_; }

private:
    tgl_status status_;
};

namespace detail {

// Throws Error(status, "<what> failed with <STATUS>: <the plugin's message>"). The message is
// read first: it is only valid until the next call into the plugin on this thread.
[[noreturn]] inline void throw_plugin_error(const tgl_plugin_api& api, tgl_status status,
                                            const std::string& what) {
    const char* m = api.last_error_message ? api.last_error_message() : nullptr;
    std::string msg = what + " failed with " + tgl_status_name(status);
    if (m && *m) msg += std::string(": ") + m;
    throw Error(status, msg);
}

inline void check(const tgl_plugin_api& api, tgl_status status, const std::string& what) {
    if (status != TGL_OK) throw_plugin_error(api, status, what);
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------
// Element types of host data.

template <class T> struct dtype_of;
template <> struct dtype_of<float> : std::integral_constant<tgl_dtype, TGL_DTYPE_F32> {};
template <> struct dtype_of<int32_t> : std::integral_constant<tgl_dtype, TGL_DTYPE_I32> {};
template <> struct dtype_of<int8_t> : std::integral_constant<tgl_dtype, TGL_DTYPE_I8> {};
template <> struct dtype_of<uint8_t> : std::integral_constant<tgl_dtype, TGL_DTYPE_U8> {};
template <class T> inline constexpr tgl_dtype dtype_v = dtype_of<T>::value;

// A zeroed op parameter struct with its struct_size set, e.g. make_params<tgl_matmul_params>().
template <class P> P make_params() {
    static_assert(std::is_trivial<P>::value, "op params are plain C structs");
    P p{};
    p.struct_size = static_cast<uint32_t>(sizeof(P));
    return p;
}

// ---------------------------------------------------------------------------------------------
// Plugin: one reference to a loaded plugin (move-only).

struct PluginEntry {
    std::string name;  // "cpu", "gles", ...
    std::string path;  // the file loading by name would take
};

class Plugin {
public:
    // By name ("cpu", "gles") through the search path, or by path (anything containing '/').
    explicit Plugin(const std::string& name_or_path) {
        tgl_status s = tgl_plugin_load(name_or_path.c_str(), &p_);
        if (s != TGL_OK) throw Error(s, tgl_loader_last_error());
    }
    ~Plugin() { tgl_plugin_release(p_); }
    Plugin(Plugin&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    Plugin& operator=(Plugin&& o) noexcept {
        if (this != &o) {
            tgl_plugin_release(p_);
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    Plugin(const Plugin&) = delete;
    Plugin& operator=(const Plugin&) = delete;

    // Plugin files on the search path, without loading them.
    static std::vector<PluginEntry> available() {
        size_t n = 0;
        tgl_status s = tgl_plugin_list(nullptr, nullptr, 0, &n);
        if (s != TGL_OK) throw Error(s, tgl_loader_last_error());
        std::vector<const char*> names(n), paths(n);
        s = tgl_plugin_list(names.data(), paths.data(), n, &n);
        if (s != TGL_OK) throw Error(s, tgl_loader_last_error());
        std::vector<PluginEntry> out;
        for (size_t i = 0; i < n && i < names.size(); ++i) out.push_back({names[i], paths[i]});
        return out;
    }

    tgl_plugin* get() const { return p_; }
    const tgl_plugin_api& api() const { return *tgl_plugin_get_api(loaded()); }
    std::string name() const { return tgl_plugin_name(loaded()); }
    std::string path() const { return tgl_plugin_path(loaded()); }
    uint32_t abi_minor() const { return tgl_plugin_abi_minor(loaded()); }

    tgl_plugin_info info() const {
        tgl_plugin_info i{};
        i.struct_size = sizeof i;
        detail::check(api(), api().get_plugin_info(&i), "get_plugin_info");
        return i;
    }

    uint32_t device_count() const {
        uint32_t n = 0;
        detail::check(api(), api().device_count(&n), "device_count");
        return n;
    }

    // All named properties of a device, in the plugin's order.
    std::vector<std::pair<std::string, std::string>> properties(uint32_t device) const {
        const tgl_property* props = nullptr;
        uint32_t n = 0;
        detail::check(api(), api().device_properties(device, &props, &n),
                      "device_properties(" + std::to_string(device) + ")");
        std::vector<std::pair<std::string, std::string>> out;
        for (uint32_t i = 0; props && i < n; ++i)
            out.emplace_back(props[i].name ? props[i].name : "",
                             props[i].value ? props[i].value : "");
        return out;
    }

    // One property, or nothing if the device does not report it.
    std::optional<std::string> property(uint32_t device, const std::string& name) const {
        const char* v = tgl_device_property(loaded(), device, name.c_str());
        if (!v) return std::nullopt;
        return std::string(v);
    }

    tgl_op_caps query_op(tgl_op op) const {
        tgl_op_caps caps{};
        caps.struct_size = sizeof caps;
        detail::check(api(), api().query_op(op, &caps), "query_op(" + std::to_string(op) + ")");
        return caps;
    }

private:
    const tgl_plugin* loaded() const {
        if (!p_) throw Error(TGL_ERROR_NULL_POINTER, "tgl::Plugin: used after it was moved from");
        return p_;
    }
    tgl_plugin* p_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// Device: one open device (move-only). The plugin's table outlives it (plugins are never
// unloaded), so a Device may outlive the Plugin object it was opened from.

class Device {
public:
    explicit Device(const Plugin& plugin, uint32_t index = 0) : api_(&plugin.api()) {
        detail::check(*api_, api_->device_open(index, &h_),
                      "device_open(" + std::to_string(index) + ")");
    }
    ~Device() {
        if (h_) api_->device_close(h_);
    }
    Device(Device&& o) noexcept : api_(o.api_), h_(std::exchange(o.h_, 0)) {}
    Device& operator=(Device&& o) noexcept {
        if (this != &o) {
            if (h_) api_->device_close(h_);
            api_ = o.api_;
            h_ = std::exchange(o.h_, 0);
        }
        return *this;
    }
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    tgl_device handle() const { return h_; }
    const tgl_plugin_api& api() const { return *api_; }

    // Waits for all queued work; device errors surface here.
    void synchronize() const { detail::check(*api_, api_->synchronize(h_), "synchronize"); }

    // Closes now and reports the status (the destructor would ignore it).
    void close() {
        tgl_device h = std::exchange(h_, 0);
        if (h) detail::check(*api_, api_->device_close(h), "device_close");
    }

private:
    const tgl_plugin_api* api_;
    tgl_device h_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Graph (ABI 1.2): the ops run on a device between begin and end, recorded once and replayed with
// whatever data their buffers hold at each replay (move-only). Destroyed with the object; a
// Graph that outlives its Device is already destroyed by device_close (its destructor then does
// nothing harmful). Plugins of ABI minor < 2 have no graphs: begin throws TGL_ERROR_UNIMPLEMENTED.
//
//   tgl::Graph g = tgl::Graph::record(dev, [&] { tgl::run(dev, ...); ... });
//   for (...) { x.upload(...); g.replay(); }

class Graph {
public:
    // Starts recording on `device`: run_op calls on it are recorded, not queued, until end().
    static void begin(const Device& device) {
        const tgl_plugin_api& api = device.api();
        if (!api.graph_begin)
            throw Error(TGL_ERROR_UNIMPLEMENTED, "graph_begin: the plugin's negotiated ABI minor is below 2 (no graphs)");
        detail::check(api, api.graph_begin(device.handle()), "graph_begin");
    }
    // Ends the recording begun on `device`.
    static Graph end(const Device& device) {
        const tgl_plugin_api& api = device.api();
        if (!api.graph_end)
            throw Error(TGL_ERROR_UNIMPLEMENTED, "graph_end: the plugin's negotiated ABI minor is below 2 (no graphs)");
        tgl_graph g = 0;
        detail::check(api, api.graph_end(device.handle(), &g), "graph_end");
        return Graph(&api, device.handle(), g);
    }
    // begin, body(), end; if body throws, the recording is ended and dropped, and the exception
    // passes on.
    template <class F> static Graph record(const Device& device, F&& body) {
        begin(device);
        try {
            body();
        } catch (...) {
            tgl_graph g = 0;
            if (device.api().graph_end(device.handle(), &g) == TGL_OK) device.api().graph_destroy(device.handle(), g);
            throw;
        }
        return end(device);
    }

    ~Graph() {
        if (h_) api_->graph_destroy(dev_, h_);
    }
    Graph(Graph&& o) noexcept : api_(o.api_), dev_(o.dev_), h_(std::exchange(o.h_, 0)) {}
    Graph& operator=(Graph&& o) noexcept {
        if (this != &o) {
            if (h_) api_->graph_destroy(dev_, h_);
            api_ = o.api_;
            dev_ = o.dev_;
            h_ = std::exchange(o.h_, 0);
        }
        return *this;
    }
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;

    tgl_graph handle() const { return h_; }
    // Queues the recorded ops again (asynchronous, like run_op).
    void replay() const { detail::check(*api_, api_->graph_replay(dev_, h_), "graph_replay"); }

    // ABI 1.3: one replay with some arguments changed (plugin_api.h, graph_replay_with), e.g.
    //   g.replay({tgl::Graph::input(0, 1, pos_buf), tgl::Graph::param(3, &tgl_rope_params::theta, 1e4f)});
    // op_index counts the run_op calls of the recording from 0.
    void replay(const std::vector<tgl_graph_binding>& bindings) const {
        if (!api_->graph_replay_with)
            throw Error(TGL_ERROR_UNIMPLEMENTED, "graph_replay_with: the plugin's negotiated ABI minor is below 3");
        detail::check(*api_, api_->graph_replay_with(dev_, h_, bindings.data(), uint32_t(bindings.size())),
                      "graph_replay_with");
    }
    // inputs[slot] / outputs[slot] of op `op_index` moved to `buffer` at `byte_offset`.
    static tgl_graph_binding input(uint32_t op_index, uint32_t slot, tgl_buffer buffer, uint64_t byte_offset = 0) {
        return operand(TGL_GRAPH_BIND_INPUT, op_index, slot, buffer, byte_offset);
    }
    static tgl_graph_binding output(uint32_t op_index, uint32_t slot, tgl_buffer buffer, uint64_t byte_offset = 0) {
        return operand(TGL_GRAPH_BIND_OUTPUT, op_index, slot, buffer, byte_offset);
    }
    // Field `field` of op `op_index`'s params struct P set to `value` (at most 8 bytes).
    template <class P, class V>
    static tgl_graph_binding param(uint32_t op_index, V P::*field, V value) {
        static_assert(sizeof(V) <= 8 && std::is_trivially_copyable<V>::value, "a params field of at most 8 bytes");
        alignas(P) unsigned char storage[sizeof(P)] = {};
        const P* p = reinterpret_cast<const P*>(storage);
        const size_t offset = size_t(reinterpret_cast<const unsigned char*>(&(p->*field)) - storage);
        return param_bytes(op_index, offset, &value, uint32_t(sizeof(V)));
    }
    // `size` bytes at byte `offset` of op `op_index`'s params struct set to `value`'s.
    static tgl_graph_binding param_bytes(uint32_t op_index, size_t offset, const void* value, uint32_t size) {
        tgl_graph_binding b = {};
        b.struct_size = TGL_GRAPH_BINDING_SIZE_V1_3;
        b.kind = TGL_GRAPH_BIND_PARAMS;
        b.op_index = op_index;
        b.slot = uint32_t(offset);
        std::memcpy(b.value, value, size < sizeof b.value ? size : sizeof b.value);
        b.value_size = size;
        return b;
    }
    // Destroys now and reports the status (the destructor would ignore it).
    void destroy() {
        tgl_graph h = std::exchange(h_, 0);
        if (h) detail::check(*api_, api_->graph_destroy(dev_, h), "graph_destroy");
    }

private:
    Graph(const tgl_plugin_api* api, tgl_device dev, tgl_graph h) : api_(api), dev_(dev), h_(h) {}
    static tgl_graph_binding operand(uint32_t kind, uint32_t op_index, uint32_t slot, tgl_buffer buffer,
                                     uint64_t byte_offset) {
        tgl_graph_binding b = {};
        b.struct_size = TGL_GRAPH_BINDING_SIZE_V1_3;
        b.kind = kind;
        b.op_index = op_index;
        b.slot = slot;
        b.buffer = buffer;
        b.byte_offset = byte_offset;
        return b;
    }
    const tgl_plugin_api* api_;
    tgl_device dev_;
    tgl_graph h_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Buffer: an untyped byte range on one device (move-only).

class Buffer {
public:
    Buffer(const Device& device, uint64_t bytes)
        : api_(&device.api()), dev_(device.handle()), bytes_(bytes) {
        detail::check(*api_, api_->buffer_alloc(dev_, bytes, &h_),
                      "buffer_alloc(" + std::to_string(bytes) + " bytes)");
    }
    // A buffer holding exactly `data`.
    template <class T> static Buffer from(const Device& device, const std::vector<T>& data) {
        Buffer b(device, data.size() * sizeof(T));
        b.upload(data);
        return b;
    }
    ~Buffer() {
        if (h_) api_->buffer_free(dev_, h_);
    }
    Buffer(Buffer&& o) noexcept
        : api_(o.api_), dev_(o.dev_), h_(std::exchange(o.h_, 0)), bytes_(o.bytes_) {}
    Buffer& operator=(Buffer&& o) noexcept {
        if (this != &o) {
            if (h_) api_->buffer_free(dev_, h_);
            api_ = o.api_;
            dev_ = o.dev_;
            h_ = std::exchange(o.h_, 0);
            bytes_ = o.bytes_;
        }
        return *this;
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    tgl_buffer handle() const { return h_; }
    tgl_device device() const { return dev_; }
    uint64_t size() const { return bytes_; }

    void upload_bytes(const void* src, uint64_t bytes, uint64_t byte_offset = 0) {
        detail::check(*api_, api_->buffer_upload(dev_, h_, byte_offset, src, bytes),
                      "buffer_upload(" + std::to_string(bytes) + " bytes at offset " +
                          std::to_string(byte_offset) + ")");
    }
    template <class T> void upload(const std::vector<T>& data, uint64_t byte_offset = 0) {
        static_assert(std::is_trivially_copyable<T>::value, "upload needs plain data");
        upload_bytes(data.data(), data.size() * sizeof(T), byte_offset);
    }

    void download_bytes(void* dst, uint64_t bytes, uint64_t byte_offset = 0) const {
        detail::check(*api_, api_->buffer_download(dev_, h_, byte_offset, dst, bytes),
                      "buffer_download(" + std::to_string(bytes) + " bytes at offset " +
                          std::to_string(byte_offset) + ")");
    }
    // `count` elements of T starting at byte_offset.
    template <class T> std::vector<T> download(size_t count, uint64_t byte_offset = 0) const {
        static_assert(std::is_trivially_copyable<T>::value, "download needs plain data");
        std::vector<T> out(count);
        download_bytes(out.data(), count * sizeof(T), byte_offset);
        return out;
    }
    // The whole buffer as elements of T.
    template <class T> std::vector<T> download() const {
        return download<T>(static_cast<size_t>(bytes_ / sizeof(T)));
    }

    // Repeats `value` over `bytes` bytes from byte_offset (default: to the end of the buffer).
    template <class T> void fill(const T& value, uint64_t byte_offset = 0, uint64_t bytes = ~0ull) {
        static_assert(std::is_trivially_copyable<T>::value, "fill needs plain data");
        if (bytes == ~0ull) bytes = byte_offset <= bytes_ ? bytes_ - byte_offset : 0;
        detail::check(*api_,
                      api_->buffer_fill(dev_, h_, byte_offset, bytes, &value,
                                        static_cast<uint32_t>(sizeof(T))),
                      "buffer_fill(" + std::to_string(bytes) + " bytes at offset " +
                          std::to_string(byte_offset) + ")");
    }

    // Device-side copy of `bytes` bytes (default: all of src from src_offset) into this buffer.
    void copy_from(const Buffer& src, uint64_t src_offset = 0, uint64_t dst_offset = 0,
                   uint64_t bytes = ~0ull) {
        if (bytes == ~0ull) bytes = src_offset <= src.bytes_ ? src.bytes_ - src_offset : 0;
        detail::check(*api_,
                      api_->buffer_copy(dev_, src.h_, src_offset, h_, dst_offset, bytes),
                      "buffer_copy(" + std::to_string(bytes) + " bytes)");
    }

private:
    const tgl_plugin_api* api_;
    tgl_device dev_;
    tgl_buffer h_ = 0;
    uint64_t bytes_;
};

// ---------------------------------------------------------------------------------------------
// Tensor views (tgl_tensor) over a Buffer.

// Row-major contiguous view of `shape` at byte_offset.
inline tgl_tensor tensor(const Buffer& buffer, tgl_dtype dtype, const std::vector<int64_t>& shape,
                         uint64_t byte_offset = 0) {
    if (shape.size() > TGL_MAX_RANK)
        throw Error(TGL_ERROR_RANK_TOO_LARGE, "tgl::tensor: rank " + std::to_string(shape.size()) +
                                                  " is above TGL_MAX_RANK (" +
                                                  std::to_string(TGL_MAX_RANK) + ")");
    return tgl_tensor_contiguous(buffer.handle(), byte_offset, dtype,
                                 static_cast<uint32_t>(shape.size()), shape.data());
}
template <class T>
tgl_tensor tensor(const Buffer& buffer, const std::vector<int64_t>& shape, uint64_t byte_offset = 0) {
    return tensor(buffer, dtype_v<T>, shape, byte_offset);
}

// View with explicit strides (in elements; 0 broadcasts, negative walks backwards).
inline tgl_tensor strided_tensor(const Buffer& buffer, tgl_dtype dtype,
                                 const std::vector<int64_t>& shape,
                                 const std::vector<int64_t>& strides, uint64_t byte_offset = 0) {
    if (strides.size() != shape.size())
        throw Error(TGL_ERROR_INVALID_ARGUMENT,
                    "tgl::strided_tensor: " + std::to_string(strides.size()) +
                        " strides given for a shape of rank " + std::to_string(shape.size()));
    tgl_tensor t = tensor(buffer, dtype, shape, byte_offset);
    for (size_t d = 0; d < strides.size(); ++d) t.strides[d] = strides[d];
    return t;
}
template <class T>
tgl_tensor strided_tensor(const Buffer& buffer, const std::vector<int64_t>& shape,
                          const std::vector<int64_t>& strides, uint64_t byte_offset = 0) {
    return strided_tensor(buffer, dtype_v<T>, shape, strides, byte_offset);
}

// ---------------------------------------------------------------------------------------------
// Ops.

// Queues one op; throws tgl::Error with the plugin's message if the plugin refuses it.
inline void run_op(const Device& device, tgl_op op, const void* params,
                   const std::vector<tgl_tensor>& inputs, const std::vector<tgl_tensor>& outputs) {
    const tgl_plugin_api& api = device.api();
    detail::check(api,
                  api.run_op(device.handle(), op, params, inputs.data(),
                             static_cast<uint32_t>(inputs.size()), outputs.data(),
                             static_cast<uint32_t>(outputs.size())),
                  "run_op(op " + std::to_string(op) + ")");
}

}  // namespace host
}  // namespace tgl

#endif  // TENSORGL_TENSORGL_HPP
