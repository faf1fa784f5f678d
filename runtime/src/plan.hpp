// Internal types of the runtime: values of the ONNX graph, the plan of plugin ops, and the context
// a lowering function uses to turn one ONNX node into plugin ops.
#pragma once

#include <tensorgl/plugin_api.h>
#include <tensorgl/runtime.h>

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <deque>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tglrt {

using Shape = std::vector<int64_t>;

// An error of the runtime: its status and a message for tglrt_last_error.
struct Error : std::runtime_error {
    tglrt_status status;
    Error(tglrt_status s, const std::string& m) : std::runtime_error(m), status(s) {}
};

int64_t numel(const Shape& s);
std::string shape_str(const Shape& s);
const char* onnx_type_name(int32_t t);
// Bytes per element of an ONNX type as the host holds it (int64: 8), 0 if not supported.
uint32_t host_elem_size(int32_t onnx_type);
// The plugin dtype that holds an ONNX type on the device, or TGL_DTYPE_INVALID. Types the ABI
// lacks are held in a wider or narrower one (docs/runtime.md, "Types the ABI lacks"): int64,
// uint32 and uint64 in i32 (range-checked), int16 and uint16 in i32 (exact), double in f32 (only
// with the f64_as_f32 load option).
tgl_dtype device_dtype(int32_t onnx_type);
// Why the device cannot hold an ONNX type ("" when it can): no device dtype for it, or double
// without the f64_as_f32 load option.
std::string why_not_held(int32_t onnx_type, bool f64_as_f32);
// True for an integer type held in a wider i32 (int16, uint16, uint32, uint64; not int64, whose
// arithmetic the runtime has always done in i32): only ops that keep every result within the
// input values' range may produce it (keeps_range).
bool held_in_wider_int(int32_t onnx_type);
// Ops whose results lie within the range of their input values (moved, selected, max/min, or a
// remainder smaller than the divisor), so an integer type held in a wider i32 never needs
// wrapping.
bool keeps_range(tgl_op op);
// Host bytes (ONNX layout) of n elements of an ONNX type -> the device's bytes. Empty when both
// layouts are the same. A value the device type cannot hold is TGLRT_ERROR_OUT_OF_RANGE naming
// `what` and the element; double -> f32 rounds to nearest (+-inf beyond f32's range).
std::vector<uint8_t> to_device_bytes(int32_t onnx_type, const void* host, uint64_t n, const std::string& what);
// The device's bytes of n elements -> host bytes (ONNX layout), range-checked for the narrower
// host types (a uint16 result outside [0, 65535] is TGLRT_ERROR_OUT_OF_RANGE, not wrapped).
void from_device_bytes(int32_t onnx_type, const void* device, uint64_t n, void* host, const std::string& what);

// A tensor of the graph. It is known on the host (an initializer, a constant, or folded from
// them: `host` holds its bytes in ONNX's layout, int64 as int64) and/or lives on the device in a
// storage (a buffer of the plan; aliases such as Reshape share their source's storage).
struct Value {
    std::string name;
    int32_t type = 0;  // ONNX element type
    Shape shape;
    bool on_host = false;
    std::vector<uint8_t> host;
    int storage = -1;  // -1: not (yet) on the device
    std::vector<int64_t> host_ints() const;  // integer host values as int64
    std::vector<double> host_doubles() const;
};

// Device memory of the plan. Weights are uploaded once; activations get pooled buffers by
// liveness.
struct Storage {
    uint64_t bytes = 0;
    bool weight = false;
    int first_step = -1, last_step = -1;  // liveness, in plan steps (graph I/O span the run)
    tgl_buffer buffer = 0;
    std::vector<uint8_t> upload;  // weight bytes in device layout
};

// An operand of a step: a value seen through a view (elements, row-major by default).
struct Operand {
    int value = -1;  // -1: an absent optional operand (buffer 0)
    bool custom = false;
    Shape shape, strides;
    int64_t elem_offset = 0;
};

struct Step {
    tgl_op op;
    std::vector<uint8_t> params;  // empty: NULL params
    std::vector<Operand> in, out;
    int node = -1;  // index into Plan::nodes
};

struct NodeInfo {
    std::string name, op_type;
    uint32_t device_ops = 0;
    uint64_t total_ns = 0;
    uint32_t runs = 0;
};

struct Plan {
    // A deque: lowerings hold references to values (shapes of inputs) while adding new ones.
    std::deque<Value> values;
    std::map<std::string, int> by_name;
    std::vector<Storage> storages;
    std::vector<Step> steps;
    std::vector<NodeInfo> nodes;
    std::vector<int> inputs, outputs;  // value ids of the graph's inputs/outputs
    bool f64_as_f32 = false;           // the load option: double tensors held as f32
};

class Lowering;
using LowerFn = void (*)(Lowering&);

// One entry of the lowering table: the function and the attributes it understands (any other
// attribute on a node is refused at load).
struct OpRule {
    LowerFn fn;
    std::vector<std::string> attributes;
};
const std::map<std::string, OpRule>& lowering_table();
// Folds the node on the host when it computes shapes only (integers); false: lower it.
bool fold_on_host(Lowering& L);
// An initializer or attribute tensor as a host value, its byte count checked against its dims.
Value tensor_value_of(const onnx::TensorProto& t);

// The context of one node being lowered.
class Lowering {
public:
    Lowering(Plan& plan, const onnx::NodeProto& node, int node_index, int opset,
             const tgl_plugin_api& api, const std::map<std::string, onnx::TypeProto>& inferred);

    const onnx::NodeProto& node;
    int opset;

    [[noreturn]] void unsupported(const std::string& what) const;
    [[noreturn]] void invalid(const std::string& what) const;
    // Whether the plugin implements `op` (query_op; a plugin of an older ABI may lack it).
    bool implements(tgl_op op) const;

    // Inputs.
    size_t n_in() const { return (size_t)node.input_size(); }
    bool has_in(size_t i) const;
    int in(size_t i) const;                      // value id (error if absent)
    const Value& v(int id) const { return plan_.values[id]; }
    const Value& in_v(size_t i) const { return v(in(i)); }
    std::vector<int64_t> host_ints(size_t i) const;  // input must be known on the host
    std::vector<double> host_doubles(size_t i) const;
    Operand dev(size_t i);  // input on the device (uploads a host value once)
    Operand dev_value(int id);

    // Attributes.
    bool has_attr(const std::string& name) const;
    int64_t attr_i(const std::string& name, int64_t def) const;
    float attr_f(const std::string& name, float def) const;
    std::string attr_s(const std::string& name, const std::string& def) const;
    std::vector<int64_t> attr_ints(const std::string& name) const;
    const onnx::TensorProto* attr_tensor(const std::string& name) const;

    // Outputs: a new device value with its own storage; type -1 = type of input 0.
    size_t n_out() const { return (size_t)node.output_size(); }
    bool has_out(size_t i) const;
    Operand out(size_t i, const Shape& shape, int32_t type = -1);
    // The output's shape from ONNX shape inference (must be static).
    Shape inferred_shape(size_t i) const;
    // The output as an alias of a device operand (Reshape and friends: no copy).
    void alias(size_t i, const Operand& src, const Shape& shape);
    // The output known on the host (folded).
    void host_out(size_t i, int32_t type, const Shape& shape, std::vector<uint8_t> bytes);
    // A temporary device value.
    Operand temp(const Shape& shape, int32_t type);
    Operand with_storage(const std::string& name, const Shape& shape, int32_t type);
    // A constant uploaded once (a scalar or small tensor of `type` given as doubles).
    Operand constant(int32_t type, const Shape& shape, const std::vector<double>& values);

    template <class P> void emit(tgl_op op, const P* params, std::vector<Operand> in,
                                 std::vector<Operand> out) {
        std::vector<uint8_t> bytes;
        if (params) bytes.assign((const uint8_t*)params, (const uint8_t*)params + sizeof(P));
        emit_raw(op, std::move(bytes), std::move(in), std::move(out));
    }
    void emit_raw(tgl_op op, std::vector<uint8_t> params, std::vector<Operand> in,
                  std::vector<Operand> out);

    Plan& plan() { return plan_; }

private:
    Plan& plan_;
    int node_index_;
    const tgl_plugin_api& api_;
    const std::map<std::string, onnx::TypeProto>& inferred_;
    std::string where() const;
    int new_value(const std::string& name, int32_t type, const Shape& shape);
};

// Views.
Operand view(const Operand& base, const Value& v, const Shape& shape);  // reshape of contiguous
Shape operand_shape(const Operand& o, const Plan& plan);
Shape contiguous_strides(const Shape& s);
Shape broadcast_shapes(const Shape& a, const Shape& b);  // throws std::invalid_argument

template <class P> P make_params() {
    P p{};
    p.struct_size = (uint32_t)sizeof(P);
    return p;
}

}  // namespace tglrt
