// Values, views and the Lowering context's helpers (everything a lowering function calls).
#include "plan.hpp"

#include <climits>
#include <cstring>
#include <sstream>

namespace tglrt {

int64_t numel(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

std::string shape_str(const Shape& s) {
    std::string r = "(";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + (s.size() == 1 ? ",)" : ")");
}

const char* onnx_type_name(int32_t t) {
    switch (t) {
    case onnx::TensorProto::FLOAT: return "float";
    case onnx::TensorProto::UINT8: return "uint8";
    case onnx::TensorProto::INT8: return "int8";
    case onnx::TensorProto::UINT16: return "uint16";
    case onnx::TensorProto::INT16: return "int16";
    case onnx::TensorProto::INT32: return "int32";
    case onnx::TensorProto::INT64: return "int64";
    case onnx::TensorProto::STRING: return "string";
    case onnx::TensorProto::BOOL: return "bool";
    case onnx::TensorProto::FLOAT16: return "float16";
    case onnx::TensorProto::DOUBLE: return "double";
    case onnx::TensorProto::UINT32: return "uint32";
    case onnx::TensorProto::UINT64: return "uint64";
    case onnx::TensorProto::COMPLEX64: return "complex64";
    case onnx::TensorProto::COMPLEX128: return "complex128";
    case onnx::TensorProto::BFLOAT16: return "bfloat16";
    default: return "undefined";
    }
}

uint32_t host_elem_size(int32_t t) {
    switch (t) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64: case onnx::TensorProto::DOUBLE: return 8;
    case onnx::TensorProto::FLOAT16: case onnx::TensorProto::BFLOAT16:
    case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: return 2;
    case onnx::TensorProto::UINT8: case onnx::TensorProto::INT8: case onnx::TensorProto::BOOL: return 1;
    default: return 0;
    }
}

tgl_dtype device_dtype(int32_t t) {
    switch (t) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::DOUBLE: return TGL_DTYPE_F32;
    case onnx::TensorProto::FLOAT16: return TGL_DTYPE_F16;
    case onnx::TensorProto::BFLOAT16: return TGL_DTYPE_BF16;
    case onnx::TensorProto::INT32: case onnx::TensorProto::INT64: case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16: case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: return TGL_DTYPE_I32;
    case onnx::TensorProto::INT8: return TGL_DTYPE_I8;
    case onnx::TensorProto::UINT8: return TGL_DTYPE_U8;
    case onnx::TensorProto::BOOL: return TGL_DTYPE_BOOL;
    default: return TGL_DTYPE_INVALID;
    }
}

std::string why_not_held(int32_t t, bool f64_as_f32) {
    if (device_dtype(t) == TGL_DTYPE_INVALID) return std::string("dtype ") + onnx_type_name(t) + ", which the device cannot hold";
    if (t == onnx::TensorProto::DOUBLE && !f64_as_f32)
        return "dtype double: the ABI has no f64 (load with the f64_as_f32 option, tensorgl-run --f64-as-f32, "
               "to compute it in f32 at f32's precision)";
    return "";
}

bool held_in_wider_int(int32_t t) {
    return t == onnx::TensorProto::INT16 || t == onnx::TensorProto::UINT16 || t == onnx::TensorProto::UINT32 ||
           t == onnx::TensorProto::UINT64;
}

bool keeps_range(tgl_op op) {
    switch (op) {
    case TGL_OP_CONTIGUOUS: case TGL_OP_CONCAT: case TGL_OP_PAD: case TGL_OP_TILE: case TGL_OP_ROLL:
    case TGL_OP_PERMUTE: case TGL_OP_RESHAPE: case TGL_OP_SLICE: case TGL_OP_NARROW: case TGL_OP_SPLIT:
    case TGL_OP_STACK: case TGL_OP_EXPAND: case TGL_OP_FLIP: case TGL_OP_GATHER: case TGL_OP_INDEX_SELECT:
    case TGL_OP_SCATTER: case TGL_OP_TOPK: case TGL_OP_SORT: case TGL_OP_TRIL: case TGL_OP_TRIU:
    case TGL_OP_WHERE: case TGL_OP_MAXIMUM: case TGL_OP_MINIMUM: case TGL_OP_MAX: case TGL_OP_MIN:
    case TGL_OP_FMOD: case TGL_OP_REMAINDER:
        return true;
    default:
        return false;
    }
}

namespace {

// The range of an integer host type held in i32 (int64's and uint64's limited to i32's).
void int_range(int32_t t, int64_t& lo, int64_t& hi) {
    switch (t) {
    case onnx::TensorProto::INT16: lo = INT16_MIN; hi = INT16_MAX; break;
    case onnx::TensorProto::UINT16: lo = 0; hi = UINT16_MAX; break;
    case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: lo = 0; hi = INT32_MAX; break;
    default: lo = INT32_MIN; hi = INT32_MAX; break;  // int64
    }
}

uint64_t read_u64(const uint8_t* p) {
    uint64_t x;
    std::memcpy(&x, p, 8);
    return x;
}

// An integer element of a host type; uint64 above INT64_MAX reads as INT64_MAX (out of every
// device range).
int64_t read_int(int32_t t, const uint8_t* p) {
    switch (t) {
    case onnx::TensorProto::INT16: { int16_t x; std::memcpy(&x, p, 2); return x; }
    case onnx::TensorProto::UINT16: { uint16_t x; std::memcpy(&x, p, 2); return x; }
    case onnx::TensorProto::UINT32: { uint32_t x; std::memcpy(&x, p, 4); return x; }
    case onnx::TensorProto::UINT64: { uint64_t x = read_u64(p); return x > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)x; }
    default: { int64_t x; std::memcpy(&x, p, 8); return x; }  // int64
    }
}

bool converted(int32_t t) { return t == onnx::TensorProto::INT64 || t == onnx::TensorProto::DOUBLE || held_in_wider_int(t); }

}  // namespace

std::vector<uint8_t> to_device_bytes(int32_t t, const void* host, uint64_t n, const std::string& what) {
    std::vector<uint8_t> out;
    if (!converted(t)) return out;
    const uint8_t* src = static_cast<const uint8_t*>(host);
    const uint32_t es = host_elem_size(t);
    out.resize((size_t)n * 4);
    for (uint64_t k = 0; k < n; ++k) {
        if (t == onnx::TensorProto::DOUBLE) {
            double d;
            std::memcpy(&d, src + k * 8, 8);
            float f = (float)d;  // nearest; beyond f32's range: +-inf
            std::memcpy(&out[k * 4], &f, 4);
            continue;
        }
        int64_t lo, hi, x = read_int(t, src + k * es);
        int_range(t, lo, hi);
        if (x < lo || x > hi)
            throw Error(TGLRT_ERROR_OUT_OF_RANGE, what + " element " + std::to_string(k) + " = " +
                                                      (t == onnx::TensorProto::UINT64 ? std::to_string(read_u64(src + k * 8)) : std::to_string(x)) +
                                                      " does not fit the device's int32");
        int32_t w = (int32_t)x;
        std::memcpy(&out[k * 4], &w, 4);
    }
    return out;
}

void from_device_bytes(int32_t t, const void* device, uint64_t n, void* host, const std::string& what) {
    uint8_t* dst = static_cast<uint8_t*>(host);
    if (!converted(t)) {
        std::memcpy(dst, device, (size_t)n * host_elem_size(t));
        return;
    }
    const uint8_t* src = static_cast<const uint8_t*>(device);
    for (uint64_t k = 0; k < n; ++k) {
        if (t == onnx::TensorProto::DOUBLE) {
            float f;
            std::memcpy(&f, src + k * 4, 4);
            double d = f;
            std::memcpy(dst + k * 8, &d, 8);
            continue;
        }
        int32_t w;
        std::memcpy(&w, src + k * 4, 4);
        int64_t lo, hi;
        int_range(t, lo, hi);
        if (w < lo || w > hi)
            throw Error(TGLRT_ERROR_OUT_OF_RANGE, what + " element " + std::to_string(k) + " = " + std::to_string(w) +
                                                      " is outside " + onnx_type_name(t) + "'s range (the device computed it in int32)");
        switch (t) {
        case onnx::TensorProto::INT16: { int16_t x = (int16_t)w; std::memcpy(dst + k * 2, &x, 2); break; }
        case onnx::TensorProto::UINT16: { uint16_t x = (uint16_t)w; std::memcpy(dst + k * 2, &x, 2); break; }
        case onnx::TensorProto::UINT32: { uint32_t x = (uint32_t)w; std::memcpy(dst + k * 4, &x, 4); break; }
        default: { int64_t x = w; std::memcpy(dst + k * 8, &x, 8); break; }  // int64, uint64 (w >= 0)
        }
    }
}

std::vector<int64_t> Value::host_ints() const {
    int64_t n = numel(shape);
    std::vector<int64_t> r((size_t)n);
    for (int64_t i = 0; i < n; ++i) {
        switch (type) {
        case onnx::TensorProto::INT64: case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16:
        case onnx::TensorProto::UINT32:
            r[i] = read_int(type, &host[i * host_elem_size(type)]);
            break;
        case onnx::TensorProto::UINT64: {
            uint64_t x;
            std::memcpy(&x, &host[i * 8], 8);
            if (x > (uint64_t)INT64_MAX) throw Error(TGLRT_ERROR_OUT_OF_RANGE, "uint64 value of '" + name + "' above 2^63");
            r[i] = (int64_t)x;
            break;
        }
        case onnx::TensorProto::INT32: { int32_t x; std::memcpy(&x, &host[i * 4], 4); r[i] = x; break; }
        case onnx::TensorProto::INT8: r[i] = (int8_t)host[i]; break;
        case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: r[i] = host[i]; break;
        default: throw Error(TGLRT_ERROR_INTERNAL, "host_ints of a " + std::string(onnx_type_name(type)) + " value");
        }
    }
    return r;
}

static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023, bits;
    if (exp == 0) {
        if (man == 0) bits = sign;
        else {  // subnormal: normalise
            int e = -1;
            do { ++e; man <<= 1; } while (!(man & 1024));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 1023) << 13);
        }
    } else if (exp == 31) bits = sign | 0x7f800000u | (man << 13);
    else bits = sign | ((exp + 112) << 23) | (man << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::vector<double> Value::host_doubles() const {
    if (type == onnx::TensorProto::DOUBLE) {
        std::vector<double> r((size_t)numel(shape));
        if (!r.empty()) std::memcpy(r.data(), host.data(), r.size() * 8);
        return r;
    }
    if (type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::FLOAT16 ||
        type == onnx::TensorProto::BFLOAT16) {
        int64_t n = numel(shape);
        std::vector<double> r((size_t)n);
        for (int64_t i = 0; i < n; ++i) {
            if (type == onnx::TensorProto::FLOAT) { float f; std::memcpy(&f, &host[i * 4], 4); r[i] = f; }
            else {
                uint16_t h; std::memcpy(&h, &host[i * 2], 2);
                if (type == onnx::TensorProto::FLOAT16) r[i] = half_to_float(h);
                else { uint32_t b = (uint32_t)h << 16; float f; std::memcpy(&f, &b, 4); r[i] = f; }
            }
        }
        return r;
    }
    std::vector<int64_t> ints = host_ints();
    return std::vector<double>(ints.begin(), ints.end());
}

Shape contiguous_strides(const Shape& s) {
    Shape st(s.size());
    int64_t stride = 1;
    for (size_t d = s.size(); d-- > 0;) {
        st[d] = stride;
        stride *= s[d] > 0 ? s[d] : 1;
    }
    return st;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
    size_t r = std::max(a.size(), b.size());
    Shape y(r);
    for (size_t i = 0; i < r; ++i) {
        int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
        int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
        if (da != db && da != 1 && db != 1)
            throw std::invalid_argument("shapes " + shape_str(a) + " and " + shape_str(b) +
                                        " do not broadcast");
        y[i] = da == 1 ? db : da;
    }
    return y;
}

Shape operand_shape(const Operand& o, const Plan& plan) {
    return o.custom ? o.shape : plan.values[o.value].shape;
}

Operand view(const Operand& base, const Value& v, const Shape& shape) {
    if (base.custom && base.strides != contiguous_strides(base.shape))
        throw Error(TGLRT_ERROR_INTERNAL, "view of a non-contiguous operand of " + v.name);
    Operand o = base;
    o.custom = true;
    o.shape = shape;
    o.strides = contiguous_strides(shape);
    return o;
}

// ---------------------------------------------------------------------------------------------
// Lowering.

Lowering::Lowering(Plan& plan, const onnx::NodeProto& n, int node_index, int opset_,
                   const tgl_plugin_api& api, const std::map<std::string, onnx::TypeProto>& inferred)
    : node(n), opset(opset_), plan_(plan), node_index_(node_index), api_(api), inferred_(inferred) {}

std::string Lowering::where() const {
    return "node '" + plan_.nodes[node_index_].name + "' (" + node.op_type() + ")";
}

void Lowering::unsupported(const std::string& what) const {
    throw Error(TGLRT_ERROR_UNSUPPORTED, where() + ": " + what);
}
void Lowering::invalid(const std::string& what) const {
    throw Error(TGLRT_ERROR_INVALID_MODEL, where() + ": " + what);
}

bool Lowering::has_in(size_t i) const { return i < n_in() && !node.input((int)i).empty(); }

int Lowering::in(size_t i) const {
    if (!has_in(i)) invalid("input " + std::to_string(i) + " is required but absent");
    auto it = plan_.by_name.find(node.input((int)i));
    if (it == plan_.by_name.end())
        invalid("input '" + node.input((int)i) + "' is not produced by any earlier node");
    return it->second;
}

std::vector<int64_t> Lowering::host_ints(size_t i) const {
    const Value& x = in_v(i);
    if (!x.on_host)
        unsupported("input " + std::to_string(i) + " ('" + x.name +
                    "') must be known when the model is loaded (a constant or computed from shapes); "
                    "it is computed at run time (a dynamic shape or parameter)");
    if (device_dtype(x.type) != TGL_DTYPE_I32 && x.type != onnx::TensorProto::INT8 &&
        x.type != onnx::TensorProto::UINT8 && x.type != onnx::TensorProto::BOOL)
        invalid("input " + std::to_string(i) + " must be an integer tensor, is " + onnx_type_name(x.type));
    return x.host_ints();
}

std::vector<double> Lowering::host_doubles(size_t i) const {
    const Value& x = in_v(i);
    if (!x.on_host)
        unsupported("input " + std::to_string(i) + " ('" + x.name +
                    "') must be known when the model is loaded; it is computed at run time");
    if (host_elem_size(x.type) == 0) unsupported("input " + std::to_string(i) + " has dtype " + onnx_type_name(x.type));
    return x.host_doubles();
}

Operand Lowering::dev(size_t i) { return dev_value(in(i)); }

Operand Lowering::dev_value(int id) {
    Value& x = plan_.values[id];
    if (x.storage < 0) {
        if (!x.on_host) throw Error(TGLRT_ERROR_INTERNAL, "value '" + x.name + "' has no data");
        std::string why = why_not_held(x.type, plan_.f64_as_f32);
        if (!why.empty()) unsupported("tensor '" + x.name + "' has " + why);
        Storage s;
        s.weight = true;
        // Types the ABI lacks are converted (and range-checked) once, at load.
        s.upload = to_device_bytes(x.type, x.host.data(), (uint64_t)numel(x.shape), where() + ": " + onnx_type_name(x.type) + " tensor '" + x.name + "'");
        if (s.upload.empty()) s.upload = x.host;
        s.bytes = s.upload.size();
        x.storage = (int)plan_.storages.size();
        plan_.storages.push_back(std::move(s));
    }
    Operand o;
    o.value = id;
    return o;
}

bool Lowering::has_attr(const std::string& name) const {
    for (const auto& a : node.attribute())
        if (a.name() == name) return true;
    return false;
}

static const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

int64_t Lowering::attr_i(const std::string& name, int64_t def) const {
    const auto* a = find_attr(node, name);
    if (!a) return def;
    if (a->type() != onnx::AttributeProto::INT) invalid("attribute " + name + " must be an int");
    return a->i();
}
float Lowering::attr_f(const std::string& name, float def) const {
    const auto* a = find_attr(node, name);
    if (!a) return def;
    if (a->type() != onnx::AttributeProto::FLOAT) invalid("attribute " + name + " must be a float");
    return a->f();
}
std::string Lowering::attr_s(const std::string& name, const std::string& def) const {
    const auto* a = find_attr(node, name);
    if (!a) return def;
    if (a->type() != onnx::AttributeProto::STRING) invalid("attribute " + name + " must be a string");
    return a->s();
}
std::vector<int64_t> Lowering::attr_ints(const std::string& name) const {
    const auto* a = find_attr(node, name);
    if (!a) return {};
    if (a->type() != onnx::AttributeProto::INTS) invalid("attribute " + name + " must be ints");
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}
const onnx::TensorProto* Lowering::attr_tensor(const std::string& name) const {
    const auto* a = find_attr(node, name);
    if (!a) return nullptr;
    if (a->type() != onnx::AttributeProto::TENSOR) invalid("attribute " + name + " must be a tensor");
    return &a->t();
}

bool Lowering::has_out(size_t i) const { return i < n_out() && !node.output((int)i).empty(); }

int Lowering::new_value(const std::string& name, int32_t type, const Shape& shape) {
    int64_t count = 1;
    for (int64_t d : shape) {
        if (d < 0) throw Error(TGLRT_ERROR_INTERNAL, where() + ": negative dim for " + name);
        // Shapes can come from the file (Reshape targets, Expand shapes): an element count that
        // does not fit 2^48 is refused before anything is sized by it.
        if (__builtin_mul_overflow(count, d, &count) || count > (int64_t(1) << 48))
            invalid("output '" + name + "' of shape " + shape_str(shape) + " has too many elements");
    }
    if (shape.size() > TGL_MAX_RANK)
        unsupported("output '" + name + "' has rank " + std::to_string(shape.size()) + ", above the ABI's " + std::to_string(TGL_MAX_RANK));
    // Cross-check with ONNX's shape inference where it knows the output.
    auto it = inferred_.find(name);
    if (!name.empty() && it != inferred_.end() && it->second.has_tensor_type()) {
        const auto& tt = it->second.tensor_type();
        if (tt.elem_type() != 0 && tt.elem_type() != type)
            throw Error(TGLRT_ERROR_INTERNAL, where() + ": output '" + name + "' planned as " + onnx_type_name(type) +
                                                  ", ONNX infers " + onnx_type_name(tt.elem_type()));
        if (tt.has_shape()) {
            bool all_static = (size_t)tt.shape().dim_size() == shape.size();
            bool same = all_static;
            for (int d = 0; all_static && d < tt.shape().dim_size(); ++d)
                if (tt.shape().dim(d).has_dim_value() && tt.shape().dim(d).dim_value() != shape[d]) same = false;
            if (!same)
                throw Error(TGLRT_ERROR_INTERNAL, where() + ": output '" + name + "' planned with shape " +
                                                      shape_str(shape) + ", which ONNX's shape inference contradicts");
        }
    }
    Value val;
    val.name = name;
    val.type = type;
    val.shape = shape;
    int id = (int)plan_.values.size();
    plan_.values.push_back(std::move(val));
    if (!name.empty()) plan_.by_name[name] = id;
    return id;
}

Operand Lowering::out(size_t i, const Shape& shape, int32_t type) {
    if (type < 0) type = in_v(0).type;
    std::string why = why_not_held(type, plan_.f64_as_f32);
    if (!why.empty()) unsupported("output " + std::to_string(i) + " has " + why);
    return with_storage(i < n_out() ? node.output((int)i) : std::string(), shape, type);
}

Operand Lowering::temp(const Shape& shape, int32_t type) { return with_storage("", shape, type); }

// A new value with a storage of its own, sized for its shape and device dtype.
Operand Lowering::with_storage(const std::string& name, const Shape& shape, int32_t type) {
    int id = new_value(name, type, shape);
    Storage s;
    s.bytes = (uint64_t)numel(shape) * tgl_dtype_size(device_dtype(type));
    plan_.values[id].storage = (int)plan_.storages.size();
    plan_.storages.push_back(std::move(s));
    Operand o;
    o.value = id;
    return o;
}

Shape Lowering::inferred_shape(size_t i) const {
    auto it = inferred_.find(node.output((int)i));
    if (it == inferred_.end() || !it->second.has_tensor_type() || !it->second.tensor_type().has_shape())
        unsupported("the shape of output '" + node.output((int)i) + "' is not known after shape inference (a dynamic shape)");
    Shape s;
    for (const auto& d : it->second.tensor_type().shape().dim()) {
        if (!d.has_dim_value())
            unsupported("output '" + node.output((int)i) + "' has a dynamic dim ('" + d.dim_param() + "')");
        s.push_back(d.dim_value());
    }
    return s;
}

void Lowering::alias(size_t i, const Operand& src, const Shape& shape) {
    const Value& sv = v(src.value);
    if (src.custom && (src.elem_offset != 0 || src.strides != contiguous_strides(src.shape)))
        throw Error(TGLRT_ERROR_INTERNAL, where() + ": alias of a strided view");
    int32_t type = sv.type;
    int storage = sv.storage;
    int id = new_value(node.output((int)i), type, shape);
    plan_.values[id].storage = storage;
}

void Lowering::host_out(size_t i, int32_t type, const Shape& shape, std::vector<uint8_t> bytes) {
    int id = new_value(node.output((int)i), type, shape);
    plan_.values[id].on_host = true;
    plan_.values[id].host = std::move(bytes);
}

Operand Lowering::constant(int32_t type, const Shape& shape, const std::vector<double>& vals) {
    int id = new_value("", type, shape);
    Value& c = plan_.values[id];
    c.on_host = true;
    uint32_t es = host_elem_size(type);
    c.host.resize(vals.size() * es);
    for (size_t k = 0; k < vals.size(); ++k) {
        uint8_t* p = &c.host[k * es];
        switch (type) {
        case onnx::TensorProto::FLOAT: { float f = (float)vals[k]; std::memcpy(p, &f, 4); break; }
        case onnx::TensorProto::DOUBLE: std::memcpy(p, &vals[k], 8); break;
        case onnx::TensorProto::INT64: { int64_t x = (int64_t)vals[k]; std::memcpy(p, &x, 8); break; }
        case onnx::TensorProto::INT32: { int32_t x = (int32_t)vals[k]; std::memcpy(p, &x, 4); break; }
        default: unsupported(std::string("a constant of dtype ") + onnx_type_name(type) + " (runtime helper)");
        }
    }
    return dev_value(id);
}

bool Lowering::implements(tgl_op op) const {
    tgl_op_caps caps{};
    caps.struct_size = sizeof caps;
    return api_.query_op(op, &caps) == TGL_OK && caps.supported;
}

void Lowering::emit_raw(tgl_op op, std::vector<uint8_t> params, std::vector<Operand> in,
                        std::vector<Operand> out) {
    tgl_op_caps caps{};
    caps.struct_size = sizeof caps;
    tgl_status st = api_.query_op(op, &caps);
    if (st != TGL_OK || !caps.supported)
        unsupported(std::string("the plugin does not implement ABI op ") + (st == TGL_OK && caps.name ? caps.name : std::to_string(op).c_str()));
    auto check = [&](const std::vector<Operand>& ops, const uint32_t* masks, size_t n_masks, const char* kind) {
        for (size_t k = 0; k < ops.size() && k < n_masks; ++k) {
            if (ops[k].value < 0 || masks[k] == 0) continue;
            tgl_dtype dt = device_dtype(v(ops[k].value).type);
            if (!(masks[k] & TGL_DTYPE_BIT(dt)))
                unsupported(std::string("the plugin's ") + caps.name + " does not take " +
                            onnx_type_name(v(ops[k].value).type) + " for " + kind + " " + std::to_string(k));
        }
    };
    // Optional operands the lowering left out are passed as absent (buffer 0): run_op takes the
    // op's full operand count. Concat, stack, split and add_n take a variable count instead.
    if (op != TGL_OP_CONCAT && op != TGL_OP_STACK && op != TGL_OP_SPLIT && op != TGL_OP_ADD_N) {
        while (in.size() < caps.n_inputs) in.push_back(Operand{});
        while (out.size() < caps.n_outputs) out.push_back(Operand{});
    }
    check(in, caps.input_dtypes, TGL_MAX_OP_INPUTS, "input");
    check(out, caps.output_dtypes, TGL_MAX_OP_OUTPUTS, "output");
    for (const Operand& o : out)
        if (o.value >= 0 && held_in_wider_int(v(o.value).type) && !keeps_range(op))
            unsupported(std::string("the plugin's ") + caps.name + " on " + onnx_type_name(v(o.value).type) +
                        ": the device holds that type in int32, and this op's results can leave its range "
                        "(only ops that move, select, compare or take remainders of values are run on it)");
    Step s;
    s.op = op;
    s.params = std::move(params);
    s.in = std::move(in);
    s.out = std::move(out);
    s.node = node_index_;
    int idx = (int)plan_.steps.size();
    for (const auto* ops : {&s.in, &s.out})
        for (const Operand& o : *ops) {
            if (o.value < 0) continue;
            Storage& sto = plan_.storages[plan_.values[o.value].storage];
            if (sto.first_step < 0) sto.first_step = idx;
            sto.last_step = idx;
        }
    plan_.steps.push_back(std::move(s));
    plan_.nodes[node_index_].device_ops++;
}

}  // namespace tglrt
