// The lowering table: ONNX op type -> a small function that emits plugin ops (or folds the node on
// the host when it only computes shapes). One entry per op type; shared shape rules live above.
#include "plan.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>

namespace tglrt {

namespace {

using onnx::TensorProto;

int64_t norm_axis(const Lowering& L, int64_t axis, size_t rank, const char* what = "axis") {
    int64_t r = (int64_t)rank;
    if (axis < -r || axis >= r)
        L.invalid(std::string(what) + " " + std::to_string(axis) + " is outside [" + std::to_string(-r) + ", " + std::to_string(r) + ")");
    return axis < 0 ? axis + r : axis;
}

bool is_int_type(int32_t t) {
    return t == TensorProto::INT64 || t == TensorProto::INT32 || t == TensorProto::INT8 ||
           t == TensorProto::UINT8 || t == TensorProto::BOOL || held_in_wider_int(t);
}

std::vector<uint8_t> ints_to_bytes(const std::vector<int64_t>& v, int32_t type) {
    uint32_t es = host_elem_size(type);
    std::vector<uint8_t> b(v.size() * es);
    for (size_t i = 0; i < v.size(); ++i) {
        if (type == TensorProto::INT64) std::memcpy(&b[i * 8], &v[i], 8);
        else if (type == TensorProto::INT32) { int32_t x = (int32_t)v[i]; std::memcpy(&b[i * 4], &x, 4); }
        else if (type == TensorProto::BOOL) b[i] = v[i] != 0;
        else b[i] = (uint8_t)v[i];
    }
    return b;
}

// ---------------------------------------------------------------------------------------------
// Shape rules shared by the host folding and the device lowering.

Shape reshape_shape(const Lowering& L, const Shape& in, const std::vector<int64_t>& target, bool allowzero) {
    Shape out(target.begin(), target.end());
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] == 0 && !allowzero) {
            if (i >= in.size()) L.invalid("shape entry 0 at " + std::to_string(i) + " has no input dim to copy");
            out[i] = in[i];
        }
        if (out[i] == -1) {
            if (infer >= 0) L.invalid("more than one -1 in the target shape");
            infer = (int64_t)i;
        } else if (out[i] < 0) L.invalid("negative target dim " + std::to_string(out[i]));
        else known *= out[i];
    }
    if (infer >= 0) {
        if (known == 0 || numel(in) % known) L.invalid("cannot infer -1 for " + shape_str(in) + " -> " + shape_str(target));
        out[infer] = numel(in) / known;
    }
    if (numel(out) != numel(in)) L.invalid("reshape of " + shape_str(in) + " to " + shape_str(out) + " changes the element count");
    return out;
}

std::vector<int64_t> axes_arg(const Lowering& L, size_t input_index, const char* attr) {
    if (L.has_in(input_index)) return L.host_ints(input_index);
    return L.attr_ints(attr);
}

Shape squeeze_shape(Lowering& L, const Shape& in) {
    std::vector<int64_t> axes = axes_arg(L, 1, "axes");
    Shape out;
    std::vector<bool> drop(in.size(), false);
    if (axes.empty())
        for (size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
    for (int64_t a : axes) {
        int64_t d = norm_axis(L, a, in.size());
        if (in[d] != 1) L.invalid("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[d]));
        drop[d] = true;
    }
    for (size_t d = 0; d < in.size(); ++d)
        if (!drop[d]) out.push_back(in[d]);
    return out;
}

Shape unsqueeze_shape(Lowering& L, const Shape& in) {
    std::vector<int64_t> axes = axes_arg(L, 1, "axes");
    size_t r = in.size() + axes.size();
    std::vector<bool> ins(r, false);
    for (int64_t a : axes) {
        int64_t d = norm_axis(L, a, r);
        if (ins[d]) L.invalid("axis repeated");
        ins[d] = true;
    }
    Shape out;
    size_t k = 0;
    for (size_t d = 0; d < r; ++d) out.push_back(ins[d] ? 1 : in[k++]);
    return out;
}

Shape flatten_shape(Lowering& L, const Shape& in) {
    int64_t axis = L.attr_i("axis", 1);
    if (axis < 0) axis += (int64_t)in.size();
    if (axis < 0 || axis > (int64_t)in.size()) L.invalid("axis out of range");
    int64_t a = 1, b = 1;
    for (int64_t d = 0; d < (int64_t)in.size(); ++d) (d < axis ? a : b) *= in[d];
    return {a, b};
}

Shape view_shape_of(Lowering& L, const Shape& in) {
    const std::string& op = L.node.op_type();
    if (op == "Reshape") return reshape_shape(L, in, L.host_ints(1), L.attr_i("allowzero", 0) != 0);
    if (op == "Squeeze") return squeeze_shape(L, in);
    if (op == "Unsqueeze") return unsqueeze_shape(L, in);
    if (op == "Flatten") return flatten_shape(L, in);
    return in;  // Identity, Dropout
}

// Slice: per axis, the ONNX-clamped start and the count for a step.
struct SliceDim { int64_t start, count, step; };
std::vector<SliceDim> slice_dims(Lowering& L, const Shape& in) {
    std::vector<int64_t> starts, ends, axes, steps;
    if (L.opset < 10) {
        starts = L.attr_ints("starts");
        ends = L.attr_ints("ends");
        axes = L.attr_ints("axes");
    } else {
        starts = L.host_ints(1);
        ends = L.host_ints(2);
        if (L.has_in(3)) axes = L.host_ints(3);
        if (L.has_in(4)) steps = L.host_ints(4);
    }
    if (axes.empty()) for (size_t i = 0; i < starts.size(); ++i) axes.push_back((int64_t)i);
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        L.invalid("starts, ends, axes and steps differ in length");
    std::vector<SliceDim> dims(in.size());
    for (size_t d = 0; d < in.size(); ++d) dims[d] = {0, in[d], 1};
    for (size_t i = 0; i < starts.size(); ++i) {
        int64_t d = norm_axis(L, axes[i], in.size()), n = in[d], st = steps[i];
        if (st == 0) L.invalid("step 0");
        int64_t s = starts[i], e = ends[i];
        if (s < 0) s += n;
        if (e < 0 && e > INT64_MIN + n) e += n; else if (e < 0) e = -1;
        if (st > 0) {
            s = std::clamp<int64_t>(s, 0, n);
            e = std::clamp<int64_t>(e, 0, n);
        } else {
            s = std::clamp<int64_t>(s, 0, n - 1);
            e = std::clamp<int64_t>(e, -1, n - 1);
        }
        int64_t count = st > 0 ? (e > s ? (e - s + st - 1) / st : 0) : (s > e ? (s - e + (-st) - 1) / (-st) : 0);
        dims[d] = {count ? s : 0, count, st};
    }
    return dims;
}

// ---------------------------------------------------------------------------------------------
// Host folding of shape computations (integers only: float math always runs on the plugin).

bool fold_integer(Lowering& L, const std::vector<const Value*>& xs);

}  // namespace

bool fold_on_host(Lowering& L) {
    const std::string& op = L.node.op_type();
    if (op == "Constant") {
        const onnx::TensorProto* t = L.attr_tensor("value");
        if (t) {
            onnx::TensorProto copy = *t;
            copy.set_name(L.node.output(0));
            // Constant's tensor is validated like an initializer (its byte count against its dims).
            Value v = tensor_value_of(copy);
            L.host_out(0, v.type, v.shape, std::move(v.host));
            return true;
        }
        if (L.has_attr("value_float")) {
            float f = L.attr_f("value_float", 0);
            std::vector<uint8_t> b(4);
            std::memcpy(b.data(), &f, 4);
            L.host_out(0, TensorProto::FLOAT, {}, b);
            return true;
        }
        if (L.has_attr("value_int")) {
            L.host_out(0, TensorProto::INT64, {}, ints_to_bytes({L.attr_i("value_int", 0)}, TensorProto::INT64));
            return true;
        }
        if (L.has_attr("value_ints")) {
            std::vector<int64_t> v = L.attr_ints("value_ints");
            L.host_out(0, TensorProto::INT64, {(int64_t)v.size()}, ints_to_bytes(v, TensorProto::INT64));
            return true;
        }
        L.unsupported("only the value, value_float, value_int and value_ints forms are supported");
    }
    if (op == "Shape") {
        const Shape& s = L.in_v(0).shape;
        int64_t r = (int64_t)s.size(), start = L.attr_i("start", 0), end = L.attr_i("end", r);
        if (start < 0) start += r;
        if (end < 0) end += r;
        start = std::clamp<int64_t>(start, 0, r);
        end = std::clamp<int64_t>(end, start, r);
        std::vector<int64_t> v(s.begin() + start, s.begin() + end);
        L.host_out(0, TensorProto::INT64, {(int64_t)v.size()}, ints_to_bytes(v, TensorProto::INT64));
        return true;
    }
    if (op == "Size") {
        L.host_out(0, TensorProto::INT64, {}, ints_to_bytes({numel(L.in_v(0).shape)}, TensorProto::INT64));
        return true;
    }
    std::vector<const Value*> xs;
    for (size_t i = 0; i < L.n_in(); ++i) {
        if (!L.has_in(i)) { xs.push_back(nullptr); continue; }
        const Value& x = L.in_v(i);
        if (!x.on_host) return false;
        xs.push_back(&x);
    }
    if (xs.empty() || !xs[0]) return false;
    // Metadata-only ops of host values: any dtype.
    if (op == "Reshape" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten" || op == "Identity") {
        Shape s = view_shape_of(L, xs[0]->shape);
        L.host_out(0, xs[0]->type, s, xs[0]->host);
        return true;
    }
    for (const Value* x : xs)
        if (x && !is_int_type(x->type)) return false;
    return fold_integer(L, xs);
}

namespace {

// Small integer tensors (shape arithmetic) evaluated on the host.
bool fold_integer(Lowering& L, const std::vector<const Value*>& xs) {
    const std::string& op = L.node.op_type();
    constexpr int64_t kMaxFold = 1 << 16;
    const Value& x = *xs[0];
    std::vector<int64_t> a = x.host_ints();
    auto emit = [&](int32_t type, const Shape& s, const std::vector<int64_t>& v) {
        L.host_out(0, type, s, ints_to_bytes(v, type));
        return true;
    };
    // Elementwise over the NumPy broadcast of `in`: f(values at one position) per element.
    auto elementwise = [&](const std::vector<const Value*>& in, auto f, int32_t out_type) {
        Shape s = in[0]->shape;
        try {
            for (size_t k = 1; k < in.size(); ++k) s = broadcast_shapes(s, in[k]->shape);
        } catch (const std::invalid_argument& e) { L.invalid(e.what()); }
        if (numel(s) > kMaxFold) return false;
        std::vector<std::vector<int64_t>> vals;
        std::vector<Shape> strides;
        for (const Value* v : in) {
            vals.push_back(v->host_ints());
            strides.push_back(contiguous_strides(v->shape));
        }
        std::vector<int64_t> r((size_t)numel(s)), at(in.size());
        for (int64_t i = 0; i < (int64_t)r.size(); ++i) {
            int64_t rem = i;
            std::fill(at.begin(), at.end(), 0);
            for (size_t d = s.size(); d-- > 0;) {
                int64_t c = rem % s[d];
                rem /= s[d];
                for (size_t k = 0; k < in.size(); ++k) {
                    const Shape& sk = in[k]->shape;
                    if (d < s.size() - sk.size()) continue;
                    size_t dk = d + sk.size() - s.size();
                    if (sk[dk] != 1) at[k] += c * strides[k][dk];
                }
            }
            for (size_t k = 0; k < in.size(); ++k) at[k] = vals[k][at[k]];
            r[i] = f(at);
        }
        return emit(out_type, s, r);
    };
    auto binary = [&](auto f, int32_t out_type) {
        return elementwise({xs[0], xs[1]}, [&](const std::vector<int64_t>& v) { return f(v[0], v[1]); }, out_type);
    };
    if (op == "Add") return binary([](int64_t p, int64_t q) { return p + q; }, x.type);
    if (op == "Sub") return binary([](int64_t p, int64_t q) { return p - q; }, x.type);
    if (op == "Mul") return binary([](int64_t p, int64_t q) { return p * q; }, x.type);
    if (op == "Div") {
        for (int64_t q : xs[1]->host_ints()) if (q == 0) L.invalid("integer division by zero in a shape computation");
        return binary([](int64_t p, int64_t q) { return p / q; }, x.type);  // ONNX: C truncation
    }
    if (op == "Mod") {  // e.g. torch 2's export of MultiheadAttention checks embed_dim % num_heads
        for (int64_t q : xs[1]->host_ints()) if (q == 0) L.invalid("integer modulo by zero in a shape computation");
        const bool c_style = L.attr_i("fmod", 0) != 0;  // fmod=1: the dividend's sign; 0: the divisor's
        return binary([c_style](int64_t p, int64_t q) {
            if (q == -1) return int64_t(0);  // INT64_MIN % -1 overflows in C++
            int64_t r = p % q;
            if (!c_style && r != 0 && ((r < 0) != (q < 0))) r += q;
            return r;
        }, x.type);
    }
    if (op == "Equal") return binary([](int64_t p, int64_t q) { return (int64_t)(p == q); }, TensorProto::BOOL);
    if (op == "Less") return binary([](int64_t p, int64_t q) { return (int64_t)(p < q); }, TensorProto::BOOL);
    if (op == "LessOrEqual") return binary([](int64_t p, int64_t q) { return (int64_t)(p <= q); }, TensorProto::BOOL);
    if (op == "Greater") return binary([](int64_t p, int64_t q) { return (int64_t)(p > q); }, TensorProto::BOOL);
    if (op == "GreaterOrEqual") return binary([](int64_t p, int64_t q) { return (int64_t)(p >= q); }, TensorProto::BOOL);
    if (op == "And") return binary([](int64_t p, int64_t q) { return (int64_t)(p && q); }, TensorProto::BOOL);
    if (op == "Or") return binary([](int64_t p, int64_t q) { return (int64_t)(p || q); }, TensorProto::BOOL);
    if (op == "Xor") return binary([](int64_t p, int64_t q) { return (int64_t)((p != 0) != (q != 0)); }, TensorProto::BOOL);
    if (op == "Not") { for (auto& v : a) v = !v; return emit(TensorProto::BOOL, x.shape, a); }
    if ((op == "Max" || op == "Min") && xs.size() == 2)
        return op == "Max" ? binary([](int64_t p, int64_t q) { return std::max(p, q); }, x.type)
                           : binary([](int64_t p, int64_t q) { return std::min(p, q); }, x.type);
    // Where over shape values: the exporters' "replace -1 by the input's dim" (Expand, Reshape).
    if (op == "Where" && xs.size() == 3 && xs[1] && xs[2])
        return elementwise(xs, [](const std::vector<int64_t>& v) { return v[0] ? v[1] : v[2]; }, xs[1]->type);
    if (op == "Transpose") {  // e.g. the exporter's reordering of Pad's pads
        std::vector<int64_t> perm = L.attr_ints("perm");
        if (perm.empty())
            for (size_t d = x.shape.size(); d-- > 0;) perm.push_back((int64_t)d);
        if (perm.size() != x.shape.size()) L.invalid("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(x.shape.size()));
        Shape s, st = contiguous_strides(x.shape), src_stride;
        for (int64_t d : perm) {
            size_t a_d = (size_t)norm_axis(L, d, x.shape.size(), "perm entry");
            s.push_back(x.shape[a_d]);
            src_stride.push_back(st[a_d]);
        }
        if (numel(s) > kMaxFold) return false;
        std::vector<int64_t> r((size_t)numel(s));
        for (int64_t i = 0; i < (int64_t)r.size(); ++i) {
            int64_t rem = i, src = 0;
            for (size_t d = s.size(); d-- > 0;) {
                src += (rem % s[d]) * src_stride[d];
                rem /= s[d];
            }
            r[i] = a[src];
        }
        return emit(x.type, s, r);
    }
    if (op == "Neg") { for (auto& v : a) v = -v; return emit(x.type, x.shape, a); }
    if (op == "Abs") { for (auto& v : a) v = v < 0 ? -v : v; return emit(x.type, x.shape, a); }
    if (op == "Cast") {
        int32_t to = (int32_t)L.attr_i("to", 0);
        if (!is_int_type(to) || to == TensorProto::BOOL) return false;
        return emit(to, x.shape, a);
    }
    if (op == "Concat") {
        int64_t axis = norm_axis(L, L.attr_i("axis", 0), x.shape.size());
        Shape s = x.shape;
        s[axis] = 0;
        for (const Value* v : xs) s[axis] += v->shape[axis];
        if (numel(s) > kMaxFold) return false;
        int64_t outer = 1;
        for (int64_t d = 0; d < axis; ++d) outer *= s[d];
        std::vector<int64_t> r;
        for (int64_t o = 0; o < outer; ++o)
            for (const Value* v : xs) {
                std::vector<int64_t> vv = v->host_ints();
                int64_t inner = numel(v->shape) / std::max<int64_t>(outer, 1);
                r.insert(r.end(), vv.begin() + o * inner, vv.begin() + (o + 1) * inner);
            }
        return emit(x.type, s, r);
    }
    if (op == "Gather") {
        int64_t axis = norm_axis(L, L.attr_i("axis", 0), x.shape.size());
        std::vector<int64_t> idx = xs[1]->host_ints();
        Shape s(x.shape.begin(), x.shape.begin() + axis);
        s.insert(s.end(), xs[1]->shape.begin(), xs[1]->shape.end());
        s.insert(s.end(), x.shape.begin() + axis + 1, x.shape.end());
        if (numel(s) > kMaxFold) return false;
        int64_t outer = 1, inner = 1, n = x.shape[axis];
        for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
        for (size_t d = axis + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
        std::vector<int64_t> r;
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t k : idx) {
                if (k < -n || k >= n) L.invalid("index " + std::to_string(k) + " is outside [" + std::to_string(-n) + ", " + std::to_string(n) + ")");
                if (k < 0) k += n;
                for (int64_t i = 0; i < inner; ++i) r.push_back(a[(o * n + k) * inner + i]);
            }
        return emit(x.type, s, r);
    }
    if (op == "Slice") {
        std::vector<SliceDim> dims = slice_dims(L, x.shape);
        Shape s, st = contiguous_strides(x.shape);
        for (auto& d : dims) s.push_back(d.count);
        std::vector<int64_t> r((size_t)numel(s));
        for (int64_t i = 0; i < (int64_t)r.size(); ++i) {
            int64_t rem = i, src = 0;
            for (size_t d = s.size(); d-- > 0;) {
                int64_t c = rem % s[d];
                rem /= s[d];
                src += (dims[d].start + c * dims[d].step) * st[d];
            }
            r[i] = a[src];
        }
        return emit(x.type, s, r);
    }
    if (op == "Range") {
        int64_t start = a.at(0), limit = xs[1]->host_ints().at(0), delta = xs[2]->host_ints().at(0);
        if (delta == 0) L.invalid("delta 0");
        int64_t n = std::max<int64_t>(0, (limit - start + delta + (delta > 0 ? -1 : 1)) / delta);
        if (n > kMaxFold) return false;
        std::vector<int64_t> r;
        for (int64_t i = 0; i < n; ++i) r.push_back(start + i * delta);
        return emit(x.type, {n}, r);
    }
    if (op == "ConstantOfShape") {
        const onnx::TensorProto* t = L.attr_tensor("value");
        int32_t type = t ? t->data_type() : TensorProto::FLOAT;
        if (!is_int_type(type) || numel(a) > kMaxFold) return false;
        int64_t value = t ? tensor_value_of(*t).host_ints().at(0) : 0;
        return emit(type, Shape(a.begin(), a.end()), std::vector<int64_t>((size_t)numel(a), value));
    }
    if (op == "ReduceProd" && L.attr_ints("axes").empty() && x.shape.size() == 1) {
        int64_t p = 1;
        for (int64_t v : a) p *= v;
        return emit(x.type, L.attr_i("keepdims", 1) ? Shape{1} : Shape{}, {p});
    }
    return false;  // everything else: the device (or an error naming what is missing)
}

// ---------------------------------------------------------------------------------------------
// Device lowerings.

template <tgl_op OP> void unary(Lowering& L) {
    Operand x = L.dev(0);
    L.emit<tgl_unary_params>(OP, nullptr, {x}, {L.out(0, L.in_v(0).shape)});
}

Shape broadcast_inputs(Lowering& L) {
    Shape s = L.in_v(0).shape;
    for (size_t i = 1; i < L.n_in(); ++i) {
        try { s = broadcast_shapes(s, L.in_v(i).shape); } catch (const std::invalid_argument& e) { L.invalid(e.what()); }
    }
    return s;
}

template <tgl_op OP> void binary(Lowering& L) {
    Shape s = broadcast_inputs(L);
    Operand a = L.dev(0), b = L.dev(1);
    L.emit<tgl_binary_params>(OP, nullptr, {a, b}, {L.out(0, s)});
}

template <tgl_op OP> void compare(Lowering& L) {
    Shape s = broadcast_inputs(L);
    Operand a = L.dev(0), b = L.dev(1);
    L.emit<tgl_binary_params>(OP, nullptr, {a, b}, {L.out(0, s, TensorProto::BOOL)});
}

// Max, Min, Sum, Mean: pairwise over 1..n inputs; Sum of 3 to 8 inputs as one add_n where the
// plugin has it (f16 then rounds once, not after each add).
template <tgl_op OP> void variadic(Lowering& L) {
    Shape s = broadcast_inputs(L);
    bool mean = L.node.op_type() == "Mean";
    size_t n = L.n_in();
    if (OP == TGL_OP_ADD && !mean && n > 2 && n <= TGL_MAX_OP_INPUTS && L.implements(TGL_OP_ADD_N)) {
        std::vector<Operand> xs;
        for (size_t i = 0; i < n; ++i) xs.push_back(L.dev(i));
        L.emit<tgl_binary_params>(TGL_OP_ADD_N, nullptr, xs, {L.out(0, s)});
        return;
    }
    if (n == 1) {
        Operand x = L.dev(0);
        L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {x}, {L.out(0, s)});
        if (mean) return;
        return;
    }
    Operand acc = L.dev(0);
    Shape acc_shape = L.in_v(0).shape;
    for (size_t i = 1; i < n; ++i) {
        acc_shape = broadcast_shapes(acc_shape, L.in_v(i).shape);
        Operand dst = (i + 1 == n && !mean) ? L.out(0, s) : L.temp(acc_shape, L.in_v(0).type);
        L.emit<tgl_binary_params>(OP, nullptr, {acc, L.dev(i)}, {dst});
        acc = dst;
    }
    if (mean) {
        Operand c = L.constant(L.in_v(0).type, {}, {(double)n});
        L.emit<tgl_binary_params>(TGL_OP_DIV, nullptr, {acc, c}, {L.out(0, s)});
    }
}

void lower_view(Lowering& L) {
    if (L.node.op_type() == "Dropout") {
        if (L.has_in(2) && L.host_ints(2).at(0) != 0) {  // training: deterministic only when nothing is dropped
            double ratio = L.has_in(1) ? L.host_doubles(1).at(0) : 0.5;
            char r[32];
            std::snprintf(r, sizeof r, "%g", ratio);
            if (ratio != 0) L.unsupported(std::string("training_mode = true with ratio ") + r + " (random dropout: its outputs cannot match)");
        }
        if (L.has_out(1)) {
            Operand x = L.dev(0);
            tgl_full_params p = make_params<tgl_full_params>();
            p.value = 1;
            L.alias(0, x, L.in_v(0).shape);
            L.emit(TGL_OP_FULL, &p, {}, {L.out(1, L.in_v(0).shape, TensorProto::BOOL)});
            return;
        }
    }
    Shape s = view_shape_of(L, L.in_v(0).shape);
    Operand x = L.dev(0);
    L.alias(0, x, s);
}

void lower_elu_like(Lowering& L) {
    const std::string& op = L.node.op_type();
    Operand x = L.dev(0);
    const Shape& s = L.in_v(0).shape;
    if (op == "LeakyRelu") {
        tgl_leaky_relu_params p = make_params<tgl_leaky_relu_params>();
        p.negative_slope = L.attr_f("alpha", 0.01f);
        L.emit(TGL_OP_LEAKY_RELU, &p, {x}, {L.out(0, s)});
    } else if (op == "Elu" || op == "Celu") {
        tgl_elu_params p = make_params<tgl_elu_params>();
        p.alpha = L.attr_f("alpha", 1.0f);
        L.emit(op == "Elu" ? TGL_OP_ELU : TGL_OP_CELU, &p, {x}, {L.out(0, s)});
    } else if (op == "Selu") {  // gamma * elu_alpha(x)
        tgl_elu_params p = make_params<tgl_elu_params>();
        p.alpha = L.attr_f("alpha", 1.67326319217681884765625f);
        Operand t = L.temp(s, L.in_v(0).type);
        L.emit(TGL_OP_ELU, &p, {x}, {t});
        Operand g = L.constant(L.in_v(0).type, {}, {L.attr_f("gamma", 1.05070102214813232421875f)});
        L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {t, g}, {L.out(0, s)});
    }
}

// y = clamp(alpha * x + beta, 0, 1)
void lower_hard_sigmoid(Lowering& L) {
    Operand x = L.dev(0);
    const Shape& s = L.in_v(0).shape;
    int32_t ty = L.in_v(0).type;
    Operand t = L.temp(s, ty), u = L.temp(s, ty);
    L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {x, L.constant(ty, {}, {L.attr_f("alpha", 0.2f)})}, {t});
    L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {t, L.constant(ty, {}, {L.attr_f("beta", 0.5f)})}, {u});
    tgl_clamp_params p = make_params<tgl_clamp_params>();
    p.min = 0;
    p.max = 1;
    L.emit(TGL_OP_CLAMP, &p, {u}, {L.out(0, s)});
}

// y = x / (1 + |x|)
void lower_softsign(Lowering& L) {
    Operand x = L.dev(0);
    const Shape& s = L.in_v(0).shape;
    int32_t ty = L.in_v(0).type;
    Operand a = L.temp(s, ty), d = L.temp(s, ty);
    L.emit<tgl_unary_params>(TGL_OP_ABS, nullptr, {x}, {a});
    L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {a, L.constant(ty, {}, {1.0})}, {d});
    L.emit<tgl_binary_params>(TGL_OP_DIV, nullptr, {x, d}, {L.out(0, s)});
}

// y = x < 0 ? slope * x : x = max(x, 0) + slope * min(x, 0)
void lower_prelu(Lowering& L) {
    Shape s = broadcast_inputs(L);
    int32_t ty = L.in_v(0).type;
    Operand x = L.dev(0), slope = L.dev(1), zero = L.constant(ty, {}, {0.0});
    Operand pos = L.temp(L.in_v(0).shape, ty), neg = L.temp(L.in_v(0).shape, ty), sn = L.temp(s, ty);
    L.emit<tgl_binary_params>(TGL_OP_MAXIMUM, nullptr, {x, zero}, {pos});
    L.emit<tgl_binary_params>(TGL_OP_MINIMUM, nullptr, {x, zero}, {neg});
    L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {neg, slope}, {sn});
    L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {pos, sn}, {L.out(0, s)});
}

// y = x > alpha ? x : 0
void lower_thresholded_relu(Lowering& L) {
    Operand x = L.dev(0);
    const Shape& s = L.in_v(0).shape;
    int32_t ty = L.in_v(0).type;
    Operand m = L.temp(s, TensorProto::BOOL);
    L.emit<tgl_binary_params>(TGL_OP_GT, nullptr, {x, L.constant(ty, {}, {L.attr_f("alpha", 1.0f)})}, {m});
    L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {m, x, L.constant(ty, {}, {0.0})}, {L.out(0, s)});
}

void lower_isnan(Lowering& L) {  // NaN is the only value unequal to itself
    Operand x = L.dev(0);
    L.emit<tgl_binary_params>(TGL_OP_NE, nullptr, {x, x}, {L.out(0, L.in_v(0).shape, TensorProto::BOOL)});
}

void lower_isinf(Lowering& L) {
    Operand x = L.dev(0);
    const Shape& s = L.in_v(0).shape;
    int32_t ty = L.in_v(0).type;
    bool pos = L.attr_i("detect_positive", 1) != 0, neg = L.attr_i("detect_negative", 1) != 0;
    if (!pos && !neg) {
        tgl_full_params p = make_params<tgl_full_params>();
        L.emit(TGL_OP_FULL, &p, {}, {L.out(0, s, TensorProto::BOOL)});
        return;
    }
    if (pos != neg) {
        L.emit<tgl_binary_params>(TGL_OP_EQ, nullptr, {x, L.constant(ty, {}, {pos ? INFINITY : -INFINITY})}, {L.out(0, s, TensorProto::BOOL)});
        return;
    }
    Operand a = L.temp(s, TensorProto::FLOAT);
    L.emit<tgl_unary_params>(TGL_OP_ABS, nullptr, {x}, {a});
    L.emit<tgl_binary_params>(TGL_OP_EQ, nullptr, {a, L.constant(TensorProto::FLOAT, {}, {INFINITY})}, {L.out(0, s, TensorProto::BOOL)});
}

void lower_not(Lowering& L) {
    Operand x = L.dev(0);
    L.emit<tgl_unary_params>(TGL_OP_LOGICAL_NOT, nullptr, {x}, {L.out(0, L.in_v(0).shape, TensorProto::BOOL)});
}

// Pow. Integer base and exponent: the plugins' exact integer pow (the exponent cast to the base's
// type). A float exponent of an integer base, as ONNX's reference (numpy's float power, then
// astype): integral exponents by the exact integer pow (an f32 power such as 3^3 = 26.99... would
// truncate to 26), the others computed in f32 and truncated. An integer exponent of a float base:
// cast to the base's type (exact below 2^24).
void lower_pow(Lowering& L) {
    Shape s = broadcast_inputs(L);
    Operand a = L.dev(0), b = L.dev(1);
    int32_t ta = L.in_v(0).type, tb = L.in_v(1).type;
    const Shape &sa = L.in_v(0).shape, &sb = L.in_v(1).shape;
    if (is_int_type(ta) && !is_int_type(tb)) {
        Operand bi = L.temp(sb, ta), bf = L.temp(sb, tb), integral = L.temp(sb, TensorProto::BOOL);
        L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {b}, {bi});
        L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {bi}, {bf});
        L.emit<tgl_binary_params>(TGL_OP_EQ, nullptr, {b, bf}, {integral});
        Operand exact = L.temp(s, ta), af = L.temp(sa, tb), rf = L.temp(s, tb), truncated = L.temp(s, ta);
        L.emit<tgl_binary_params>(TGL_OP_POW, nullptr, {a, bi}, {exact});
        L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {a}, {af});
        L.emit<tgl_binary_params>(TGL_OP_POW, nullptr, {af, b}, {rf});
        L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {rf}, {truncated});
        L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {integral, exact, truncated}, {L.out(0, s)});
        return;
    }
    if (device_dtype(ta) != device_dtype(tb)) {
        Operand bc = L.temp(sb, ta);
        L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {b}, {bc});
        b = bc;
    }
    L.emit<tgl_binary_params>(TGL_OP_POW, nullptr, {a, b}, {L.out(0, s)});
}

void lower_mod(Lowering& L) {
    Shape s = broadcast_inputs(L);
    bool fmod = L.attr_i("fmod", 0) != 0;
    Operand a = L.dev(0), b = L.dev(1);
    if (!fmod && !is_int_type(L.in_v(0).type)) L.invalid("fmod = 0 is for integers only");
    L.emit<tgl_binary_params>(fmod ? TGL_OP_FMOD : TGL_OP_REMAINDER, nullptr, {a, b}, {L.out(0, s)});
}

void lower_where(Lowering& L) {
    Shape s = broadcast_inputs(L);
    Operand c = L.dev(0), a = L.dev(1), b = L.dev(2);
    L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {c, a, b}, {L.out(0, s, L.in_v(1).type)});
}

void lower_clip(Lowering& L) {
    tgl_clamp_params p = make_params<tgl_clamp_params>();
    p.min = -INFINITY;
    p.max = INFINITY;
    if (L.opset < 11) {
        p.min = L.attr_f("min", -INFINITY);
        p.max = L.attr_f("max", INFINITY);
    } else {
        if (L.has_in(1)) p.min = (float)L.host_doubles(1).at(0);
        if (L.has_in(2)) p.max = (float)L.host_doubles(2).at(0);
    }
    Operand x = L.dev(0);
    L.emit(TGL_OP_CLAMP, &p, {x}, {L.out(0, L.in_v(0).shape)});
}

void lower_cast(Lowering& L) {
    int32_t to = L.node.op_type() == "CastLike" ? L.in_v(1).type : (int32_t)L.attr_i("to", 0);
    if (device_dtype(to) == TGL_DTYPE_INVALID) L.unsupported(std::string("cast to ") + onnx_type_name(to) + " (the device cannot hold it)");
    Operand x = L.dev(0);
    L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {x}, {L.out(0, L.in_v(0).shape, to)});
}

// MatMul: NumPy semantics (1-D operands get a dim of 1 that the result drops).
void lower_matmul(Lowering& L) {
    Shape a = L.in_v(0).shape, b = L.in_v(1).shape;
    if (a.empty() || b.empty()) L.invalid("MatMul of a scalar");
    bool a1 = a.size() == 1, b1 = b.size() == 1;
    Shape av = a1 ? Shape{1, a[0]} : a, bv = b1 ? Shape{b[0], 1} : b;
    if (av.back() != bv[bv.size() - 2]) L.invalid("inner dims differ: " + shape_str(a) + " @ " + shape_str(b));
    Shape batch;
    try {
        batch = broadcast_shapes(Shape(av.begin(), av.end() - 2), Shape(bv.begin(), bv.end() - 2));
    } catch (const std::invalid_argument& e) { L.invalid(e.what()); }
    Shape yv = batch;
    yv.push_back(av[av.size() - 2]);
    yv.push_back(bv.back());
    Shape y = batch;
    if (!a1) y.push_back(av[av.size() - 2]);
    if (!b1) y.push_back(bv.back());
    Operand A = L.dev(0), B = L.dev(1);
    Operand Y = L.out(0, y);
    L.emit<tgl_matmul_params>(TGL_OP_MATMUL, nullptr, {view(A, L.in_v(0), av), view(B, L.in_v(1), bv)},
                              {view(Y, L.v(Y.value), yv)});
}

void lower_gemm(Lowering& L) {
    Shape a = L.in_v(0).shape, b = L.in_v(1).shape;
    if (a.size() != 2 || b.size() != 2) L.invalid("A and B must be 2-D");
    tgl_matmul_params p = make_params<tgl_matmul_params>();
    p.transpose_a = L.attr_i("transA", 0) != 0;
    p.transpose_b = L.attr_i("transB", 0) != 0;
    p.alpha = L.attr_f("alpha", 1.0f);
    float beta = L.attr_f("beta", 1.0f);
    int64_t M = p.transpose_a ? a[1] : a[0], N = p.transpose_b ? b[0] : b[1];
    Operand A = L.dev(0), B = L.dev(1);
    Operand Y = L.out(0, {M, N});
    if (L.has_in(2) && beta != 0) {
        Operand C = L.dev(2);
        L.emit<tgl_unary_params>(TGL_OP_EXPAND, nullptr, {C}, {Y});
        p.beta = beta;
    }
    L.emit(TGL_OP_MATMUL, &p, {A, B}, {Y});
}

void lower_transpose(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    std::vector<int64_t> perm = L.attr_ints("perm");
    if (perm.empty())
        for (size_t d = s.size(); d-- > 0;) perm.push_back((int64_t)d);
    if (perm.size() != s.size()) L.invalid("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(s.size()));
    tgl_permute_params p = make_params<tgl_permute_params>();
    Shape y;
    for (size_t d = 0; d < perm.size(); ++d) {
        p.perm[d] = (int32_t)norm_axis(L, perm[d], s.size(), "perm entry");
        y.push_back(s[p.perm[d]]);
    }
    Operand x = L.dev(0);
    L.emit(TGL_OP_PERMUTE, &p, {x}, {L.out(0, y)});
}

// A view of `base` (elements) at an extra offset with its own shape and strides; an absent
// operand stays absent.
Operand sub_view(const Operand& base, int64_t offset, const Shape& shape, const Shape& strides) {
    Operand o = base;
    if (o.value < 0) return o;
    o.custom = true;
    o.elem_offset += offset;
    o.shape = shape;
    o.strides = strides;
    return o;
}

// A strided view of operand `o` (of value v): dims selected by slice_dims.
Operand strided_view(const Operand& o, const Value& v, const std::vector<SliceDim>& dims) {
    Shape st = contiguous_strides(v.shape), shape, strides;
    int64_t offset = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
        offset += dims[d].start * st[d];
        shape.push_back(dims[d].count);
        strides.push_back(st[d] * dims[d].step);
    }
    return sub_view(o, offset, shape, strides);
}

void lower_slice(Lowering& L) {
    std::vector<SliceDim> dims = slice_dims(L, L.in_v(0).shape);
    Shape y;
    for (auto& d : dims) y.push_back(d.count);
    Operand x = L.dev(0);
    Operand Y = L.out(0, y);
    if (numel(y) == 0) return;  // nothing to copy
    L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {strided_view(x, L.in_v(0), dims)}, {Y});
}

void lower_concat(Lowering& L) {
    const Shape& s0 = L.in_v(0).shape;
    int64_t axis = norm_axis(L, L.attr_i("axis", 0), s0.size());
    Shape y = s0;
    y[axis] = 0;
    for (size_t i = 0; i < L.n_in(); ++i) y[axis] += L.in_v(i).shape[axis];
    std::vector<Operand> ins;
    for (size_t i = 0; i < L.n_in(); ++i) ins.push_back(L.dev(i));
    Operand Y = L.out(0, y);
    if (ins.size() <= 8) {
        tgl_axis_params p = make_params<tgl_axis_params>();
        p.axis = (int32_t)axis;
        L.emit(TGL_OP_CONCAT, &p, ins, {Y});
        return;
    }
    // More inputs than the op takes: each input copied into its slice of y.
    Shape st = contiguous_strides(y);
    int64_t at = 0;
    for (size_t i = 0; i < ins.size(); ++i) {
        const Shape& si = L.in_v(i).shape;
        Operand dst = Y;
        dst.custom = true;
        dst.shape = si;
        dst.strides = st;
        dst.elem_offset = at * st[axis];
        at += si[axis];
        if (numel(si)) L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {ins[i]}, {dst});
    }
}

void lower_split(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    int64_t axis = norm_axis(L, L.attr_i("axis", 0), s.size());
    std::vector<int64_t> sizes = L.opset >= 13 && L.has_in(1) ? L.host_ints(1) : L.attr_ints("split");
    size_t n = L.n_out();
    if (sizes.empty()) {
        if (s[axis] % (int64_t)n) L.invalid("axis of " + std::to_string(s[axis]) + " does not split into " + std::to_string(n) + " equal parts");
        sizes.assign(n, s[axis] / (int64_t)n);
    }
    if (sizes.size() != n) L.invalid("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(n) + " outputs");
    if (std::accumulate(sizes.begin(), sizes.end(), (int64_t)0) != s[axis]) L.invalid("split sizes do not add up to the axis");
    Operand x = L.dev(0);
    std::vector<Operand> outs;
    for (size_t i = 0; i < n; ++i) {
        Shape y = s;
        y[axis] = sizes[i];
        outs.push_back(L.out(i, y));
    }
    if (n <= 4) {
        tgl_axis_params p = make_params<tgl_axis_params>();
        p.axis = (int32_t)axis;
        L.emit(TGL_OP_SPLIT, &p, {x}, outs);
        return;
    }
    int64_t at = 0;
    for (size_t i = 0; i < n; ++i) {
        std::vector<SliceDim> dims;
        for (size_t d = 0; d < s.size(); ++d) dims.push_back({(int64_t)d == axis ? at : 0, (int64_t)d == axis ? sizes[i] : s[d], 1});
        at += sizes[i];
        if (sizes[i]) L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {strided_view(x, L.in_v(0), dims)}, {outs[i]});
    }
}

// Indices of an axis of n: negative ones count from the end (ONNX), the ABI's do not wrap. Host
// indices are wrapped and checked at load; run-time ones on the device:
//   where(idx < 0, i32(f32(idx) + n), idx)
// exact for n <= 2^23 (the f32 sum of a valid negative index is exact; an index below -n stays
// negative and the plugin reports it out of range, as any index >= n).
Operand index_operand(Lowering& L, size_t i, int64_t n) {
    const Value& iv = L.in_v(i);
    if (!iv.on_host) {
        Operand idx = L.dev(i);
        const Shape& s = iv.shape;
        if (!is_int_type(iv.type)) {  // OneHot takes float indices: cast (truncating) as ONNX does
            Operand c = L.temp(s, TensorProto::INT32);
            L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {idx}, {c});
            idx = c;
        }
        if (n > (1 << 23)) return idx;  // negative run-time indices are then reported out of range
        Operand neg = L.temp(s, TensorProto::BOOL), f = L.temp(s, TensorProto::FLOAT), fw = L.temp(s, TensorProto::FLOAT),
                w = L.temp(s, TensorProto::INT32), r = L.temp(s, TensorProto::INT32);
        L.emit<tgl_binary_params>(TGL_OP_LT, nullptr, {idx, L.constant(TensorProto::INT32, {}, {0.0})}, {neg});
        L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {idx}, {f});
        L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {f, L.constant(TensorProto::FLOAT, {}, {(double)n})}, {fw});
        L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {fw}, {w});
        L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {neg, w, idx}, {r});
        return r;
    }
    std::vector<double> fixed;
    for (double kd : iv.host_doubles()) {
        int64_t k = (int64_t)kd;
        if (k < -n || k >= n) L.invalid("index " + std::to_string(k) + " is outside [" + std::to_string(-n) + ", " + std::to_string(n) + ")");
        fixed.push_back((double)(k < 0 ? k + n : k));
    }
    return L.constant(TensorProto::INT32, iv.shape, fixed);
}

void lower_gather(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    int64_t axis = norm_axis(L, L.attr_i("axis", 0), s.size());
    const Shape& is = L.in_v(1).shape;
    Shape y(s.begin(), s.begin() + axis);
    y.insert(y.end(), is.begin(), is.end());
    y.insert(y.end(), s.begin() + axis + 1, s.end());
    Operand x = L.dev(0), idx = index_operand(L, 1, s[axis]);
    Operand Y = L.out(0, y);
    Shape yv = s;
    yv[axis] = numel(is);
    tgl_axis_params p = make_params<tgl_axis_params>();
    p.axis = (int32_t)axis;
    L.emit(TGL_OP_INDEX_SELECT, &p, {x, view(idx, L.v(idx.value), {numel(is)})}, {view(Y, L.v(Y.value), yv)});
}

void lower_gather_elements(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    int64_t axis = norm_axis(L, L.attr_i("axis", 0), s.size());
    Operand x = L.dev(0), idx = index_operand(L, 1, s[axis]);
    tgl_axis_params p = make_params<tgl_axis_params>();
    p.axis = (int32_t)axis;
    L.emit(TGL_OP_GATHER, &p, {x, idx}, {L.out(0, L.in_v(1).shape)});
}

// ONNX's reduction attribute of ScatterElements / ScatterND as the ABI op (scatter_add for "add")
// and scatter's params->reduction.
tgl_op scatter_op(Lowering& L, tgl_axis_params& p) {
    const std::string red = L.attr_s("reduction", "none");
    p.reduction = TGL_SCATTER_REPLACE;
    if (red == "add") return TGL_OP_SCATTER_ADD;
    if (red == "mul") p.reduction = TGL_SCATTER_MUL;
    else if (red == "min") p.reduction = TGL_SCATTER_AMIN;
    else if (red == "max") p.reduction = TGL_SCATTER_AMAX;
    else if (red != "none") L.invalid("reduction '" + red + "' (ONNX has none, add, mul, min, max)");
    return TGL_OP_SCATTER;
}

void lower_scatter_elements(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    int64_t axis = norm_axis(L, L.attr_i("axis", 0), s.size());
    tgl_axis_params p = make_params<tgl_axis_params>();
    const tgl_op op = scatter_op(L, p);
    Operand x = L.dev(0), idx = index_operand(L, 1, s[axis]), src = L.dev(2);
    p.axis = (int32_t)axis;
    L.emit(op, &p, {x, idx, src}, {L.out(0, s)});
}

void lower_expand(Lowering& L) {
    std::vector<int64_t> shape = L.host_ints(1);
    Shape y;
    try { y = broadcast_shapes(L.in_v(0).shape, Shape(shape.begin(), shape.end())); } catch (const std::invalid_argument& e) { L.invalid(e.what()); }
    Operand x = L.dev(0);
    L.emit<tgl_unary_params>(TGL_OP_EXPAND, nullptr, {x}, {L.out(0, y)});
}

void lower_tile(Lowering& L) {
    std::vector<int64_t> reps = L.host_ints(1);
    const Shape& s = L.in_v(0).shape;
    if (reps.size() != s.size()) L.invalid("repeats has " + std::to_string(reps.size()) + " entries for rank " + std::to_string(s.size()));
    Shape y = s;
    for (size_t d = 0; d < s.size(); ++d) {
        if (reps[d] < 0) L.invalid("negative repeat");
        y[d] *= reps[d];
    }
    Operand x = L.dev(0);
    L.emit<tgl_unary_params>(TGL_OP_TILE, nullptr, {x}, {L.out(0, y)});
}

void lower_pad(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    std::string mode = L.attr_s("mode", "constant");
    std::vector<int64_t> pads;
    double value = 0;
    if (L.opset < 11) {
        pads = L.attr_ints("pads");
        value = L.attr_f("value", 0.0f);
    } else {
        pads = L.host_ints(1);
        if (L.has_in(2)) value = L.host_doubles(2).at(0);
        if (L.has_in(3)) L.unsupported("the axes input (opset 18)");
    }
    if (pads.size() != 2 * s.size()) L.invalid("pads has " + std::to_string(pads.size()) + " entries for rank " + std::to_string(s.size()));
    tgl_pad_params p = make_params<tgl_pad_params>();
    if (mode == "constant") p.mode = TGL_PAD_CONSTANT;
    else if (mode == "reflect") p.mode = TGL_PAD_REFLECT;
    else if (mode == "edge") p.mode = TGL_PAD_REPLICATE;
    else L.unsupported("mode '" + mode + "'");
    p.value = value;
    Shape y = s;
    for (size_t d = 0; d < s.size(); ++d) {
        p.before[d] = pads[d];
        p.after[d] = pads[d + s.size()];
        y[d] += pads[d] + pads[d + s.size()];
        if (y[d] < 0) L.invalid("pads crop dim " + std::to_string(d) + " below 0");
    }
    Operand x = L.dev(0);
    L.emit(TGL_OP_PAD, &p, {x}, {L.out(0, y)});
}

// Reductions. kind: the ABI op; pre/post: an elementwise op before (SumSquare) or after (LogSum).
Shape reduce_shape(Lowering& L, const Shape& s, std::vector<int64_t>& axes, bool keep) {
    std::vector<bool> red(s.size(), axes.empty());
    for (auto& a : axes) {
        a = norm_axis(L, a, s.size());
        red[a] = true;
    }
    Shape y;
    for (size_t d = 0; d < s.size(); ++d)
        if (!red[d]) y.push_back(s[d]);
        else if (keep) y.push_back(1);
    return y;
}

void lower_reduce(Lowering& L) {
    const std::string& op = L.node.op_type();
    const Shape& s = L.in_v(0).shape;
    bool axes_input = op == "ReduceSum" && L.opset >= 13;
    std::vector<int64_t> axes = axes_input ? (L.has_in(1) ? L.host_ints(1) : std::vector<int64_t>{}) : L.attr_ints("axes");
    bool keep = L.attr_i("keepdims", 1) != 0;
    if (axes.empty() && L.attr_i("noop_with_empty_axes", 0)) {
        Operand x = L.dev(0);
        L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {x}, {L.out(0, s)});
        return;
    }
    Shape y = reduce_shape(L, s, axes, keep);
    if (axes.size() > TGL_MAX_RANK) L.invalid("too many axes");
    tgl_reduce_params p = make_params<tgl_reduce_params>();
    p.keepdims = keep;
    p.n_axes = (uint32_t)axes.size();
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = (int32_t)axes[i];
    int32_t ty = L.in_v(0).type;
    Operand x = L.dev(0);
    if (op == "ReduceL1" || op == "ReduceL2") {
        tgl_vector_norm_params q = make_params<tgl_vector_norm_params>();
        q.keepdims = p.keepdims;
        q.n_axes = p.n_axes;
        std::memcpy(q.axes, p.axes, sizeof q.axes);
        q.ord = op == "ReduceL1" ? 1.0f : 2.0f;
        L.emit(TGL_OP_NORM, &q, {x}, {L.out(0, y)});
        return;
    }
    if (op == "ReduceSumSquare") {
        Operand sq = L.temp(s, ty);
        L.emit<tgl_unary_params>(TGL_OP_SQUARE, nullptr, {x}, {sq});
        L.emit(TGL_OP_SUM, &p, {sq}, {L.out(0, y)});
        return;
    }
    if (op == "ReduceLogSum") {
        Operand sm = L.temp(y, ty);
        L.emit(TGL_OP_SUM, &p, {x}, {sm});
        L.emit<tgl_unary_params>(TGL_OP_LOG, nullptr, {sm}, {L.out(0, y)});
        return;
    }
    static const std::map<std::string, tgl_op> ops = {
        {"ReduceSum", TGL_OP_SUM}, {"ReduceMean", TGL_OP_MEAN}, {"ReduceMax", TGL_OP_MAX}, {"ReduceMin", TGL_OP_MIN},
        {"ReduceProd", TGL_OP_PROD}, {"ReduceLogSumExp", TGL_OP_LOGSUMEXP}};
    L.emit(ops.at(op), &p, {x}, {L.out(0, y)});
}

void lower_arg(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    int64_t axis = norm_axis(L, L.attr_i("axis", 0), s.size());
    bool keep = L.attr_i("keepdims", 1) != 0;
    std::vector<int64_t> axes{axis};
    Shape y = reduce_shape(L, s, axes, keep);
    tgl_arg_reduce_params p = make_params<tgl_arg_reduce_params>();
    p.axis = (int32_t)axis;
    p.keepdims = keep;
    p.select_last_index = L.attr_i("select_last_index", 0) != 0;
    tgl_op op = L.node.op_type() == "ArgMax" ? TGL_OP_ARGMAX : TGL_OP_ARGMIN;
    L.emit(op, &p, {L.dev(0)}, {L.out(0, y, TensorProto::INT64)});
}

void lower_softmax(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    const std::string& op = L.node.op_type();
    tgl_op kind = op == "LogSoftmax" ? TGL_OP_LOG_SOFTMAX : TGL_OP_SOFTMAX;
    tgl_softmax_params p = make_params<tgl_softmax_params>();
    p.scale = 1;
    Operand x = L.dev(0);
    Operand Y = L.out(0, s);
    if (L.opset >= 13) {
        p.axis = (int32_t)norm_axis(L, L.attr_i("axis", -1), s.size());
        L.emit(kind, &p, {x}, {Y});
        return;
    }
    // Before opset 13: the input is coerced to 2-D at axis and normalised over the second dim.
    int64_t axis = L.attr_i("axis", 1);
    if (axis < 0) axis += (int64_t)s.size();
    int64_t a = 1, b = 1;
    for (int64_t d = 0; d < (int64_t)s.size(); ++d) (d < axis ? a : b) *= s[d];
    p.axis = 1;
    L.emit(kind, &p, {view(x, L.in_v(0), {a, b})}, {view(Y, L.v(Y.value), {a, b})});
}

// Permutes `src` (shape s, its last dim being dim `axis` of the result) into `dst`: the inverse
// of moving dim `axis` to the end. one_hot and argmax work on the last axis; this puts it back.
void last_to_axis(Lowering& L, const Operand& src, const Shape& s, int64_t axis, const Operand& dst) {
    tgl_permute_params p = make_params<tgl_permute_params>();
    int64_t r = (int64_t)s.size(), k = 0;
    for (int64_t d = 0; d < r; ++d) p.perm[d] = (int32_t)(d == axis ? r - 1 : k++);
    L.emit(TGL_OP_PERMUTE, &p, {src}, {dst});
}

void lower_hardmax(Lowering& L) {  // one_hot(argmax) along the last axis, permuted where needed
    const Shape& s = L.in_v(0).shape;
    int64_t axis = L.attr_i("axis", L.opset >= 13 ? -1 : 1);
    if (axis < 0) axis += (int64_t)s.size();
    int32_t ty = L.in_v(0).type;
    Operand x = L.dev(0);
    Operand Y = L.out(0, s);
    int64_t a = 1, b = 1;
    if (L.opset < 13) {  // coerced to 2-D at axis: already row-major (a, b)
        for (int64_t d = 0; d < (int64_t)s.size(); ++d) (d < axis ? a : b) *= s[d];
        Operand idx = L.temp({a}, TensorProto::INT32);
        tgl_arg_reduce_params p = make_params<tgl_arg_reduce_params>();
        p.axis = 1;
        L.emit(TGL_OP_ARGMAX, &p, {view(x, L.in_v(0), {a, b})}, {idx});
        L.emit<tgl_unary_params>(TGL_OP_ONE_HOT, nullptr, {idx}, {view(Y, L.v(Y.value), {a, b})});
        return;
    }
    norm_axis(L, axis, s.size());
    Shape moved;  // s with `axis` moved to the end
    for (size_t d = 0; d < s.size(); ++d)
        if ((int64_t)d != axis) moved.push_back(s[d]);
    moved.push_back(s[axis]);
    b = s[axis];
    a = numel(s) / std::max<int64_t>(b, 1);
    bool last = axis == (int64_t)s.size() - 1;
    Operand xm = x;
    if (!last) {
        tgl_permute_params p = make_params<tgl_permute_params>();
        int64_t k = 0;
        for (size_t d = 0; d < s.size(); ++d)
            if ((int64_t)d != axis) p.perm[k++] = (int32_t)d;
        p.perm[k] = (int32_t)axis;
        xm = L.temp(moved, ty);
        L.emit(TGL_OP_PERMUTE, &p, {x}, {xm});
    }
    Operand idx = L.temp({a}, TensorProto::INT32);
    tgl_arg_reduce_params p = make_params<tgl_arg_reduce_params>();
    p.axis = 1;
    L.emit(TGL_OP_ARGMAX, &p, {view(xm, L.v(xm.value), {a, b})}, {idx});
    if (last) {
        L.emit<tgl_unary_params>(TGL_OP_ONE_HOT, nullptr, {idx}, {view(Y, L.v(Y.value), {a, b})});
        return;
    }
    Operand oh = L.temp(moved, ty);
    L.emit<tgl_unary_params>(TGL_OP_ONE_HOT, nullptr, {idx}, {view(oh, L.v(oh.value), {a, b})});
    last_to_axis(L, oh, moved, axis, Y);
}

void lower_batch_norm(Lowering& L) {
    if (L.attr_i("spatial", 1) != 1) L.unsupported("spatial = 0");
    const Shape& s = L.in_v(0).shape;
    tgl_batch_norm_params p = make_params<tgl_batch_norm_params>();
    p.eps = L.attr_f("epsilon", 1e-5f);
    Operand x = L.dev(0), scale = L.dev(1), bias = L.dev(2), mean = L.dev(3), var = L.dev(4);
    bool training = L.attr_i("training_mode", 0) != 0;
    if (!training) {
        if (L.has_out(1) || L.has_out(2)) L.unsupported("the running mean/var outputs without training_mode");
        L.emit(TGL_OP_BATCH_NORM, &p, {x, mean, var, scale, bias}, {L.out(0, s)});
        return;
    }
    // Training mode: normalized by the batch's statistics (biased variance); the running
    // statistics are blended with momentum.
    if (s.size() < 2) L.invalid("input must be (N, C, ...)");
    int64_t C = s[1];
    int32_t ty = L.in_v(0).type;
    tgl_var_params v = make_params<tgl_var_params>();
    v.correction = 0;
    for (int64_t d = 0; d < (int64_t)s.size(); ++d)
        if (d != 1) v.axes[v.n_axes++] = (int32_t)d;
    tgl_reduce_params m = make_params<tgl_reduce_params>();
    m.n_axes = v.n_axes;
    std::memcpy(m.axes, v.axes, sizeof m.axes);
    Operand bm = L.temp({C}, ty), bv = L.temp({C}, ty);
    L.emit(TGL_OP_MEAN, &m, {x}, {bm});
    L.emit(TGL_OP_VAR, &v, {x}, {bv});
    L.emit(TGL_OP_BATCH_NORM, &p, {x, bm, bv, scale, bias}, {L.out(0, s)});
    float momentum = L.attr_f("momentum", 0.9f);
    auto blend = [&](size_t out, const Operand& running, const Operand& batch) {  // running * m + batch * (1 - m)
        if (!L.has_out(out)) return;
        Operand a = L.temp({C}, ty), b = L.temp({C}, ty);
        L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {running, L.constant(ty, {}, {momentum})}, {a});
        L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {batch, L.constant(ty, {}, {1.0 - momentum})}, {b});
        L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {a, b}, {L.out(out, {C})});
    };
    blend(1, mean, bm);
    blend(2, var, bv);
}

// Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0
void lower_shrink(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    int32_t ty = L.in_v(0).type;
    float lambd = L.attr_f("lambd", 0.5f), bias = L.attr_f("bias", 0.0f);
    Operand x = L.dev(0);
    Operand lo = L.temp(s, TensorProto::BOOL), hi = L.temp(s, TensorProto::BOOL), xp = L.temp(s, ty), xm = L.temp(s, ty),
            upper = L.temp(s, ty);
    L.emit<tgl_binary_params>(TGL_OP_LT, nullptr, {x, L.constant(ty, {}, {-lambd})}, {lo});
    L.emit<tgl_binary_params>(TGL_OP_GT, nullptr, {x, L.constant(ty, {}, {lambd})}, {hi});
    L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {x, L.constant(ty, {}, {bias})}, {xp});
    L.emit<tgl_binary_params>(TGL_OP_SUB, nullptr, {x, L.constant(ty, {}, {bias})}, {xm});
    L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {hi, xm, L.constant(ty, {}, {0.0})}, {upper});
    L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {lo, xp, upper}, {L.out(0, s)});
}

// LRN: x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta; the window
// sum is an average pool over the channel dim of an (N, 1, C, rest) view.
void lower_lrn(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    if (s.size() < 3) L.invalid("input must be (N, C, D1, ...)");
    int32_t ty = L.in_v(0).type;
    int64_t size = L.attr_i("size", 0), N = s[0], C = s[1], rest = numel(s) / std::max<int64_t>(N * C, 1);
    if (size < 1) L.invalid("size must be >= 1");
    float alpha = L.attr_f("alpha", 1e-4f), beta = L.attr_f("beta", 0.75f), bias = L.attr_f("bias", 1.0f);
    Operand x = L.dev(0);
    Operand sq = L.temp(s, ty), avg = L.temp(s, ty), sc = L.temp(s, ty), den = L.temp(s, ty), pw = L.temp(s, ty);
    L.emit<tgl_unary_params>(TGL_OP_SQUARE, nullptr, {x}, {sq});
    tgl_pool_params p = make_params<tgl_pool_params>();
    p.kernel[0] = (int32_t)size;
    p.kernel[1] = 1;
    p.stride[0] = p.stride[1] = 1;
    p.pad_begin[0] = (int32_t)((size - 1) / 2);
    p.pad_end[0] = (int32_t)(size - 1 - (size - 1) / 2);
    p.count_include_pad = 1;  // divides by size: the sum / size
    Shape v4{N, 1, C, rest};
    L.emit(TGL_OP_AVG_POOL, &p, {view(sq, L.v(sq.value), v4)}, {view(avg, L.v(avg.value), v4)});
    L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {avg, L.constant(ty, {}, {alpha})}, {sc});
    L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {sc, L.constant(ty, {}, {bias})}, {den});
    L.emit<tgl_binary_params>(TGL_OP_POW, nullptr, {den, L.constant(ty, {}, {beta})}, {pw});
    L.emit<tgl_binary_params>(TGL_OP_DIV, nullptr, {x, pw}, {L.out(0, s)});
}

void lower_instance_norm(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    if (s.size() < 3) L.invalid("input must be (N, C, D1, ...)");
    tgl_group_norm_params p = make_params<tgl_group_norm_params>();
    p.num_groups = (uint32_t)s[1];
    p.eps = L.attr_f("epsilon", 1e-5f);
    Operand x = L.dev(0), g = L.dev(1), b = L.dev(2);
    L.emit(TGL_OP_GROUP_NORM, &p, {x, g, b}, {L.out(0, s)});
}

void lower_layer_norm(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    int64_t axis = norm_axis(L, L.attr_i("axis", -1), s.size());
    if (L.attr_i("stash_type", 1) != 1) L.unsupported("stash_type other than 1 (float)");
    Shape norm(s.begin() + axis, s.end());
    tgl_layer_norm_params p = make_params<tgl_layer_norm_params>();
    p.n_norm_dims = (uint32_t)norm.size();
    p.eps = L.attr_f("epsilon", 1e-5f);
    auto affine = [&](size_t i) {
        if (!L.has_in(i)) return Operand{};
        Shape gs = L.in_v(i).shape;
        Operand g = L.dev(i);
        if (gs == norm) return g;
        // Broadcastable scale/bias: materialized to the normalized shape once per run.
        Operand e = L.temp(norm, L.in_v(i).type);
        L.emit<tgl_unary_params>(TGL_OP_EXPAND, nullptr, {g}, {e});
        return e;
    };
    Operand x = L.dev(0), g = affine(1), b = affine(2);
    L.emit(TGL_OP_LAYER_NORM, &p, {x, g, b}, {L.out(0, s)});
    if (!L.has_out(1) && !L.has_out(2)) return;
    // Mean and InvStdDev = 1 / sqrt(biased var + eps), over the normalized dims, kept as 1s.
    Shape stat(s.begin(), s.begin() + axis);
    stat.resize(s.size(), 1);
    tgl_var_params v = make_params<tgl_var_params>();
    v.keepdims = 1;
    v.n_axes = (uint32_t)norm.size();
    for (uint32_t k = 0; k < v.n_axes; ++k) v.axes[k] = (int32_t)(axis + k);
    v.correction = 0;
    if (L.has_out(1)) {
        tgl_reduce_params m = make_params<tgl_reduce_params>();
        m.keepdims = 1;
        m.n_axes = v.n_axes;
        std::memcpy(m.axes, v.axes, sizeof m.axes);
        L.emit(TGL_OP_MEAN, &m, {x}, {L.out(1, stat, TensorProto::FLOAT)});
    }
    if (L.has_out(2)) {
        Operand var = L.temp(stat, TensorProto::FLOAT), ve = L.temp(stat, TensorProto::FLOAT);
        L.emit(TGL_OP_VAR, &v, {x}, {var});
        L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {var, L.constant(TensorProto::FLOAT, {}, {p.eps})}, {ve});
        L.emit<tgl_unary_params>(TGL_OP_RSQRT, nullptr, {ve}, {L.out(2, stat, TensorProto::FLOAT)});
    }
}

// Conv / pool geometry: kernel, strides, dilations and pads after auto_pad.
struct Window {
    std::string same_transpose;  // ConvTranspose with auto_pad SAME_*: pads come from the output size
    size_t S;
    std::vector<int64_t> k, stride, dil, pb, pe;
};

Window window(Lowering& L, const Shape& x, const std::vector<int64_t>& kernel, bool transpose = false) {
    Window w;
    w.S = x.size() - 2;
    w.k = kernel;
    w.stride = L.attr_ints("strides");
    w.dil = L.attr_ints("dilations");
    std::vector<int64_t> pads = L.attr_ints("pads");
    if (w.stride.empty()) w.stride.assign(w.S, 1);
    if (w.dil.empty()) w.dil.assign(w.S, 1);
    if (pads.empty()) pads.assign(2 * w.S, 0);
    if (w.k.size() != w.S || w.stride.size() != w.S || w.dil.size() != w.S || pads.size() != 2 * w.S)
        L.invalid("kernel_shape/strides/dilations/pads do not match " + std::to_string(w.S) + " spatial dims");
    w.pb.assign(pads.begin(), pads.begin() + w.S);
    w.pe.assign(pads.begin() + w.S, pads.end());
    std::string ap = L.attr_s("auto_pad", "NOTSET");
    if (ap == "VALID") {
        std::fill(w.pb.begin(), w.pb.end(), 0);
        std::fill(w.pe.begin(), w.pe.end(), 0);
    } else if (ap == "SAME_UPPER" || ap == "SAME_LOWER") {
        if (transpose) {  // ConvTranspose's SAME: output = input * stride, padded like output_shape
            w.same_transpose = ap;
            return w;
        }
        for (size_t d = 0; d < w.S; ++d) {
            int64_t in = x[d + 2], out = (in + w.stride[d] - 1) / w.stride[d];
            int64_t total = std::max<int64_t>(0, (out - 1) * w.stride[d] + (w.k[d] - 1) * w.dil[d] + 1 - in);
            w.pb[d] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
            w.pe[d] = total - w.pb[d];
        }
    } else if (ap != "NOTSET") L.invalid("auto_pad '" + ap + "'");
    for (size_t d = 0; d < w.S; ++d)
        if (w.k[d] < 1 || w.stride[d] < 1 || w.dil[d] < 1 || w.pb[d] < 0 || w.pe[d] < 0 || w.pb[d] > INT32_MAX || w.pe[d] > INT32_MAX || w.k[d] > INT32_MAX || w.stride[d] > INT32_MAX)
            L.invalid("kernel, stride, dilation must be >= 1 and pads >= 0, within int32");
    return w;
}

void lower_conv(Lowering& L) {
    const Shape& x = L.in_v(0).shape;
    const Shape& w = L.in_v(1).shape;
    if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) L.unsupported("Conv of " + std::to_string(x.size() - 2) + " spatial dims (1 to 3 are supported)");
    std::vector<int64_t> k(w.begin() + 2, w.end());
    if (L.has_attr("kernel_shape") && L.attr_ints("kernel_shape") != k) L.invalid("kernel_shape disagrees with the weight");
    Window g = window(L, x, k);
    tgl_conv_params p = make_params<tgl_conv_params>();
    p.groups = (uint32_t)L.attr_i("group", 1);
    Shape y{x[0], w[0]};
    for (size_t d = 0; d < g.S; ++d) {
        p.stride[d] = (int32_t)g.stride[d];
        p.dilation[d] = (int32_t)g.dil[d];
        p.pad_begin[d] = (int32_t)g.pb[d];
        p.pad_end[d] = (int32_t)g.pe[d];
        y.push_back((x[d + 2] + g.pb[d] + g.pe[d] - g.dil[d] * (k[d] - 1) - 1) / g.stride[d] + 1);
    }
    Operand X = L.dev(0), W = L.dev(1), B = L.has_in(2) ? L.dev(2) : Operand{};
    static const tgl_op ops[] = {TGL_OP_CONV1D, TGL_OP_CONV2D, TGL_OP_CONV3D};
    L.emit(ops[g.S - 1], &p, {X, W, B}, {L.out(0, y)});
}

// ConvTranspose over 3 spatial dims (the ABI has conv_transpose 1-D and 2-D only) as the conv3d
// it equals: x with stride - 1 zeros inserted between its elements (a pad of a view with a unit
// dim after each spatial dim), padded by dilation * (k - 1) - pad (negative: cropped) plus the
// output padding, convolved at stride 1 with the spatially flipped kernel whose in/out channels
// are swapped within each group.
void conv_transpose_as_conv3d(Lowering& L, const tgl_conv_params& p, const Shape& y) {
    const Shape& x = L.in_v(0).shape;
    const Shape& w = L.in_v(1).shape;
    int32_t ty = L.in_v(0).type;
    int64_t G = p.groups, Ci = x[1], Co = y[1];
    if (G < 1 || Ci % G) L.invalid("group must divide the input channels");
    Operand X = L.dev(0), W = L.dev(1);
    // Zero insertion: (N, C, D, 1, H, 1, W, 1) padded to (N, C, D, s, H, s, W, s).
    Shape spread{x[0], x[1]}, unit{x[0], x[1]};
    tgl_pad_params zi = make_params<tgl_pad_params>();
    zi.mode = TGL_PAD_CONSTANT;
    for (int d = 0; d < 3; ++d) {
        unit.insert(unit.end(), {x[d + 2], 1});
        zi.after[3 + 2 * d] = p.stride[d] - 1;
        spread.push_back(x[d + 2] * p.stride[d]);
    }
    Operand Z = X;
    if (p.stride[0] > 1 || p.stride[1] > 1 || p.stride[2] > 1) {
        Shape wide = unit;
        for (int d = 0; d < 3; ++d) wide[3 + 2 * d] = p.stride[d];
        Z = L.temp(spread, ty);
        L.emit(TGL_OP_PAD, &zi, {view(X, L.in_v(0), unit)}, {view(Z, L.v(Z.value), wide)});
    }
    tgl_pad_params pad = make_params<tgl_pad_params>();
    pad.mode = TGL_PAD_CONSTANT;
    Shape padded = spread;
    for (int d = 0; d < 3; ++d) {
        int64_t reach = (int64_t)p.dilation[d] * (w[d + 2] - 1);
        pad.before[d + 2] = reach - p.pad_begin[d];
        pad.after[d + 2] = reach - p.pad_end[d] + p.output_padding[d] - (p.stride[d] - 1);
        padded[d + 2] += pad.before[d + 2] + pad.after[d + 2];
    }
    Operand Zp = L.temp(padded, ty);
    L.emit(TGL_OP_PAD, &pad, {Z}, {Zp});
    // The kernel: flipped, then (G, Ci/G, Co/G, k) -> (G, Co/G, Ci/G, k) = (Co, Ci/G, kd, kh, kw).
    tgl_flip_params f = make_params<tgl_flip_params>();
    f.n_axes = 3;
    for (int d = 0; d < 3; ++d) f.axes[d] = d + 2;
    int64_t K = w[2] * w[3] * w[4];
    Operand Wf = L.temp(w, ty), Wc = L.temp({Co, Ci / G, w[2], w[3], w[4]}, ty);
    L.emit(TGL_OP_FLIP, &f, {W}, {Wf});
    tgl_permute_params perm = make_params<tgl_permute_params>();
    const int32_t order[4] = {0, 2, 1, 3};
    for (int d = 0; d < 4; ++d) perm.perm[d] = order[d];
    L.emit(TGL_OP_PERMUTE, &perm, {view(Wf, L.v(Wf.value), {G, Ci / G, Co / G, K})}, {view(Wc, L.v(Wc.value), {G, Co / G, Ci / G, K})});
    tgl_conv_params c = make_params<tgl_conv_params>();
    c.groups = p.groups;
    for (int d = 0; d < 3; ++d) {
        c.stride[d] = 1;
        c.dilation[d] = p.dilation[d];
    }
    Operand B = L.has_in(2) ? L.dev(2) : Operand{};
    L.emit(TGL_OP_CONV3D, &c, {Zp, Wc, B}, {L.out(0, y)});
}

void lower_conv_transpose(Lowering& L) {
    const Shape& x = L.in_v(0).shape;
    const Shape& w = L.in_v(1).shape;
    if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) L.unsupported("ConvTranspose of " + std::to_string(x.size() - 2) + " spatial dims (1 to 3 are supported)");
    std::vector<int64_t> k(w.begin() + 2, w.end());
    Window g = window(L, x, k, true);
    int64_t groups = L.attr_i("group", 1);
    std::vector<int64_t> op = L.attr_ints("output_padding"), os = L.attr_ints("output_shape");
    if (op.empty()) op.assign(g.S, 0);
    tgl_conv_params p = make_params<tgl_conv_params>();
    p.groups = (uint32_t)groups;
    Shape y{x[0], w[1] * groups};
    for (size_t d = 0; d < g.S; ++d) {
        int64_t full = g.stride[d] * (x[d + 2] - 1) + op[d] + (k[d] - 1) * g.dil[d] + 1;
        if (!os.empty() || !g.same_transpose.empty()) {
            int64_t target = !os.empty() ? os[os.size() - g.S + d] : x[d + 2] * g.stride[d], total = full - target;
            if (total < 0) {  // an output longer than the full result: the extra positions are output padding
                op[d] -= total;
                full -= total;
                total = 0;
            }
            std::string ap = L.attr_s("auto_pad", "NOTSET");
            g.pb[d] = ap == "SAME_UPPER" ? total / 2 : total - total / 2;
            g.pe[d] = total - g.pb[d];
        }
        p.stride[d] = (int32_t)g.stride[d];
        p.dilation[d] = (int32_t)g.dil[d];
        p.pad_begin[d] = (int32_t)g.pb[d];
        p.pad_end[d] = (int32_t)g.pe[d];
        p.output_padding[d] = (int32_t)op[d];
        y.push_back(full - g.pb[d] - g.pe[d]);
    }
    if (g.S == 3) return conv_transpose_as_conv3d(L, p, y);
    Operand X = L.dev(0), W = L.dev(1), B = L.has_in(2) ? L.dev(2) : Operand{};
    L.emit(g.S == 1 ? TGL_OP_CONV_TRANSPOSE1D : TGL_OP_CONV_TRANSPOSE2D, &p, {X, W, B}, {L.out(0, y)});
}

bool is_8bit(int32_t t);
void max_pool_8bit(Lowering& L, const tgl_pool_params& p, const Operand& X);

// MaxPool's Indices output: ONNX's index is flat over (N, C, spatial), row-major, or with
// storage_order = 1 column-major over the spatial dims; the ABI's is the row-major spatial index.
// Converted in f32 on the device, exact while the tensor has at most 2^24 elements.
void max_pool_with_indices(Lowering& L, const tgl_pool_params& p, const Operand& X) {
    const Shape& x = L.in_v(0).shape;
    Shape y = L.inferred_shape(0);
    int64_t spatial = numel(Shape(x.begin() + 2, x.end()));
    bool column_major = L.attr_i("storage_order", 0) != 0 && x.size() > 3;
    if (column_major && x.size() != 4) L.unsupported("storage_order = 1 with the Indices output over 3 spatial dims");
    if (numel(x) > (1 << 24)) L.unsupported("the Indices output of an input over 2^24 elements (converted in f32)");
    const int32_t F = TensorProto::FLOAT;
    Operand idx = L.temp(y, TensorProto::INT32), f = L.temp(y, F);
    L.emit(TGL_OP_MAX_POOL, &p, {X}, {L.out(0, y), idx});
    L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {idx}, {f});
    if (column_major) {  // s = h W + w  ->  w H + h
        Operand h = L.temp(y, F), hf = L.temp(y, F), hw = L.temp(y, F), w = L.temp(y, F), wh = L.temp(y, F), c = L.temp(y, F);
        L.emit<tgl_binary_params>(TGL_OP_DIV, nullptr, {f, L.constant(F, {}, {(double)x[3]})}, {h});
        L.emit<tgl_unary_params>(TGL_OP_FLOOR, nullptr, {h}, {hf});
        L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {hf, L.constant(F, {}, {(double)x[3]})}, {hw});
        L.emit<tgl_binary_params>(TGL_OP_SUB, nullptr, {f, hw}, {w});
        L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {w, L.constant(F, {}, {(double)x[2]})}, {wh});
        L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {wh, hf}, {c});
        f = c;
    }
    Shape per_plane{x[0], x[1]};
    per_plane.resize(x.size(), 1);
    std::vector<double> offsets;
    for (int64_t nc = 0; nc < x[0] * x[1]; ++nc) offsets.push_back((double)(nc * spatial));
    Operand flat = L.temp(y, F);
    L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {f, L.constant(F, per_plane, offsets)}, {flat});
    L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {flat}, {L.out(1, y, TensorProto::INT64)});
}

void lower_pool(Lowering& L) {
    const std::string& op = L.node.op_type();
    const Shape& x = L.in_v(0).shape;
    if (x.size() < 3 || x.size() > 5) L.unsupported("pooling over " + std::to_string(x.size() - 2) + " spatial dims (1 to 3 are supported)");
    Window g = window(L, x, L.attr_ints("kernel_shape"));
    tgl_pool_params p = make_params<tgl_pool_params>();
    p.ceil_mode = L.attr_i("ceil_mode", 0) != 0;
    bool avg = op == "AveragePool";
    p.count_include_pad = avg && L.attr_i("count_include_pad", 0) != 0;
    for (size_t d = 0; d < g.S; ++d) {
        p.kernel[d] = (int32_t)g.k[d];
        p.stride[d] = (int32_t)g.stride[d];
        p.dilation[d] = (int32_t)g.dil[d];
        p.pad_begin[d] = (int32_t)g.pb[d];
        p.pad_end[d] = (int32_t)g.pe[d];
    }
    Operand X = L.dev(0);
    // Pads of any size are the ops' own (ABI 1.3): a window with no input element gives -inf (max)
    // or 0 / 0 = NaN (average without count_include_pad), as ONNX's reference.
    if (!avg && is_8bit(L.in_v(0).type)) return max_pool_8bit(L, p, X);
    if (!avg && L.has_out(1)) {
        for (size_t d = 0; d < g.S; ++d)  // such a window's index is -1, which has no ONNX flat index
            if (g.pb[d] >= g.dil[d] * (g.k[d] - 1) + 1 || g.pe[d] >= g.dil[d] * (g.k[d] - 1) + 1)
                L.unsupported("the Indices output with a pad as wide as the dilated kernel");
        return max_pool_with_indices(L, p, X);
    }
    L.emit(avg ? TGL_OP_AVG_POOL : TGL_OP_MAX_POOL, &p, {X}, {L.out(0, L.inferred_shape(0))});
}

void lower_global_pool(Lowering& L) {
    Shape y = L.in_v(0).shape;
    if (y.size() < 3) L.invalid("input must be (N, C, D1, ...)");
    for (size_t d = 2; d < y.size(); ++d) y[d] = 1;
    Operand X = L.dev(0);
    L.emit<tgl_unary_params>(L.node.op_type() == "GlobalMaxPool" ? TGL_OP_GLOBAL_MAX_POOL : TGL_OP_GLOBAL_AVG_POOL, nullptr, {X}, {L.out(0, y)});
}

void lower_cumsum(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    tgl_scan_params p = make_params<tgl_scan_params>();
    p.axis = (int32_t)norm_axis(L, L.host_ints(1).at(0), s.size());
    p.exclusive = L.attr_i("exclusive", 0) != 0;
    p.reverse = L.attr_i("reverse", 0) != 0;
    Operand x = L.dev(0);
    L.emit(TGL_OP_CUMSUM, &p, {x}, {L.out(0, s)});
}

void lower_topk(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    int64_t k = L.opset >= 10 ? L.host_ints(1).at(0) : L.attr_i("k", 0);
    int64_t axis = norm_axis(L, L.attr_i("axis", -1), s.size());
    if (k < 0 || k > s[axis]) L.invalid("k = " + std::to_string(k) + " for an axis of " + std::to_string(s[axis]));
    tgl_sort_params p = make_params<tgl_sort_params>();
    p.axis = (int32_t)axis;
    p.descending = L.attr_i("largest", 1) != 0;  // sorted = 0 leaves the order free: sorted is one
    Shape y = s;
    y[axis] = k;
    Operand x = L.dev(0);
    Operand vals = L.out(0, y), idx = L.out(1, y, TensorProto::INT64);
    L.emit(TGL_OP_TOPK, &p, {x}, {vals, idx});
}

void lower_trilu(Lowering& L) {
    tgl_diagonal_params p = make_params<tgl_diagonal_params>();
    int64_t k = L.has_in(1) ? L.host_ints(1).at(0) : 0;
    p.diagonal = (int32_t)std::clamp<int64_t>(k, INT32_MIN, INT32_MAX);
    Operand x = L.dev(0);
    L.emit(L.attr_i("upper", 1) ? TGL_OP_TRIU : TGL_OP_TRIL, &p, {x}, {L.out(0, L.in_v(0).shape)});
}

void lower_range(Lowering& L) {  // integer ranges fold on the host; float ones are arange
    std::vector<double> s = L.host_doubles(0), l = L.host_doubles(1), d = L.host_doubles(2);
    if (d.at(0) == 0) L.invalid("delta 0");
    int64_t n = std::max<int64_t>(0, (int64_t)std::ceil((l.at(0) - s.at(0)) / d.at(0)));
    tgl_arange_params p = make_params<tgl_arange_params>();
    p.start = s[0];
    p.step = d[0];
    L.emit(TGL_OP_ARANGE, &p, {}, {L.out(0, {n})});
}

void lower_constant_of_shape(Lowering& L) {
    std::vector<int64_t> shape = L.host_ints(0);
    const onnx::TensorProto* t = L.attr_tensor("value");
    int32_t type = TensorProto::FLOAT;
    double value = 0;
    if (t) {
        Value v = tensor_value_of(*t);
        if (numel(v.shape) != 1) L.invalid("value must hold one element");
        type = v.type;
        value = v.host_doubles().at(0);
    }
    tgl_full_params p = make_params<tgl_full_params>();
    p.value = value;
    L.emit(TGL_OP_FULL, &p, {}, {L.out(0, Shape(shape.begin(), shape.end()), type)});
}

void lower_one_hot(Lowering& L) {
    const Shape& is = L.in_v(0).shape;
    int64_t depth = (int64_t)L.host_doubles(1).at(0);
    std::vector<double> vals = L.host_doubles(2);
    if (depth < 1 || vals.size() != 2) L.invalid("depth must be >= 1 and values hold (off, on)");
    int64_t axis = norm_axis(L, L.attr_i("axis", -1), is.size() + 1);
    Shape moved = is;  // the class axis last, as the ABI's one_hot writes it
    moved.push_back(depth);
    Shape y = is;
    y.insert(y.begin() + axis, depth);
    int32_t ty = L.in_v(2).type;
    Operand idx = index_operand(L, 0, depth);
    bool last = axis == (int64_t)is.size(), plain = vals[0] == 0 && vals[1] == 1;
    Operand Y = L.out(0, y, ty);
    Operand oh = plain && last ? Y : L.temp(moved, plain ? ty : TensorProto::BOOL);
    L.emit<tgl_unary_params>(TGL_OP_ONE_HOT, nullptr, {idx}, {oh});
    if (!plain) {  // where(one_hot, on, off): the values' own elements, exact in every dtype
        Operand values = L.dev(2), v = last ? Y : L.temp(moved, ty);
        L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {oh, sub_view(values, 1, {}, {}), sub_view(values, 0, {}, {})}, {v});
        oh = v;
    }
    if (!last) last_to_axis(L, oh, moved, axis, Y);
}

// DepthToSpace / SpaceToDepth: one permute of a 6-D view.
void lower_depth_space(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    if (s.size() != 4) L.invalid("input must be 4-D");
    int64_t b = L.attr_i("blocksize", 0), N = s[0], C = s[1], H = s[2], W = s[3];
    if (b < 1) L.invalid("blocksize must be >= 1");
    tgl_permute_params p = make_params<tgl_permute_params>();
    Shape in6, y;
    std::vector<int32_t> perm;
    if (L.node.op_type() == "DepthToSpace") {
        if (C % (b * b)) L.invalid("channels not divisible by blocksize^2");
        std::string mode = L.attr_s("mode", "DCR");
        if (mode == "DCR") { in6 = {N, b, b, C / (b * b), H, W}; perm = {0, 3, 4, 1, 5, 2}; }
        else if (mode == "CRD") { in6 = {N, C / (b * b), b, b, H, W}; perm = {0, 1, 4, 2, 5, 3}; }
        else L.invalid("mode '" + mode + "'");
        y = {N, C / (b * b), H * b, W * b};
    } else {
        if (H % b || W % b) L.invalid("spatial dims not divisible by blocksize");
        in6 = {N, C, H / b, b, W / b, b};
        perm = {0, 3, 5, 1, 2, 4};
        y = {N, C * b * b, H / b, W / b};
    }
    Shape out6;
    for (int d = 0; d < 6; ++d) {
        p.perm[d] = perm[d];
        out6.push_back(in6[perm[d]]);
    }
    Operand x = L.dev(0);
    Operand Y = L.out(0, y);
    L.emit(TGL_OP_PERMUTE, &p, {view(x, L.in_v(0), in6)}, {view(Y, L.v(Y.value), out6)});
}

// ---------------------------------------------------------------------------------------------
// Resize in every ONNX mode, as separable per-axis maps onto existing ops: the source positions
// and weights of each output position are computed on the host exactly as ONNX's reference
// (onnx/backend/test/case/node/resize.py) computes them; nearest becomes an index_select (exact
// bits), linear and cubic one matmul by the (out, in) weight matrix; tf_crop_and_resize's
// positions outside the image get the extrapolation value by a where.

struct ResizeAxis {
    std::vector<std::vector<std::pair<int64_t, double>>> taps;  // per output position: (source, weight)
    std::vector<bool> extrapolated;                             // per output position
    bool identity = true;
};

ResizeAxis resize_axis(const Lowering& L, const std::string& mode, const std::string& ctm, const std::string& nm,
                       double cubic_a, bool exclude_outside, int64_t in, int64_t out, double scale, bool scale_f32,
                       float roi0, float roi1) {
    ResizeAxis r;
    // The reference's output_width is scale * input_width, in float32 when the scales came as float32.
    double ow = scale_f32 ? (double)((float)scale * (float)in) : scale * (double)in;
    for (int64_t x = 0; x < out; ++x) {
        double xo;
        bool outside = false;
        if (ctm == "align_corners") xo = ow == 1 ? 0.0 : (double)(x * (in - 1)) / (ow - 1);
        else if (ctm == "asymmetric") xo = (double)x / scale;
        else if (ctm == "pytorch_half_pixel") xo = ow == 1 ? -0.5 : ((double)x + 0.5) / scale - 0.5;
        else if (ctm == "half_pixel") xo = ((double)x + 0.5) / scale - 0.5;
        else if (ctm == "tf_crop_and_resize") {
            float span = roi1 - roi0, start = roi0 * (float)(in - 1);
            xo = ow == 1 ? (double)(span * (float)(in - 1) / 2.0f) : (double)x * span * (double)(in - 1) / (ow - 1);
            xo += start;
            outside = xo < 0 || xo > (double)(in - 1);
        } else L.invalid("coordinate_transformation_mode '" + ctm + "'");
        r.extrapolated.push_back(outside);
        std::vector<std::pair<int64_t, double>> taps;
        if (outside) {
            r.identity = false;
            r.taps.push_back(taps);
            continue;
        }
        double fl = std::floor(xo);
        bool whole = xo == fl;
        double ratio = whole ? 1.0 : xo - fl;
        std::vector<double> c;
        if (mode == "nearest") {
            if (whole) c = {0, 1};
            else if (nm == "round_prefer_floor") c = {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
            else if (nm == "round_prefer_ceil") c = {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
            else if (nm == "floor") c = {1, 0};
            else if (nm == "ceil") c = {0, 1};
            else L.invalid("nearest_mode '" + nm + "'");
        } else if (mode == "linear") {
            c = {1 - ratio, ratio};
        } else if (mode == "cubic") {
            const double A = cubic_a, r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
            c = {((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A, ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1,
                 ((A + 2) * q - (A + 3)) * q * q + 1, ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A};
        } else L.invalid("mode '" + mode + "'");
        // The n nearest positions of the edge-padded axis (ties to the smaller), paired with c in order.
        int64_t n = (int64_t)c.size(), pad = (n + 1) / 2;
        int64_t first = (int64_t)(whole ? xo - 1 : fl) - n / 2 + 1;
        first = std::clamp<int64_t>(first, -pad, in + pad - n);
        double total = 0;
        for (int64_t i = 0; i < n; ++i) {
            int64_t idx = first + i;
            if (exclude_outside && (idx < 0 || idx >= in)) c[(size_t)i] = 0;
            total += c[(size_t)i];
        }
        if (exclude_outside && total == 0) L.unsupported("exclude_outside leaves output position " + std::to_string(x) + " without a source (0/0)");
        double own = 0;
        for (int64_t i = 0; i < n; ++i) {
            double w = exclude_outside ? c[(size_t)i] / total : c[(size_t)i];
            if (w == 0) continue;
            int64_t src = std::clamp<int64_t>(first + i, 0, in - 1);
            taps.emplace_back(src, w);
            if (src == x) own += w;
        }
        if (in != out || taps.size() != 1 || own != 1) r.identity = false;
        r.taps.push_back(taps);
    }
    return r;
}

void lower_resize_separable(Lowering& L, const Shape& s, const Shape& y, const std::string& mode, const std::string& ctm,
                            const std::string& nm, const std::vector<double>& scales) {
    int32_t ty = L.in_v(0).type;
    std::vector<double> roi;
    if (ctm == "tf_crop_and_resize") {
        if (!L.has_in(1)) L.invalid("tf_crop_and_resize needs the roi input");
        roi = L.host_doubles(1);
        if (roi.size() != 2 * s.size()) L.invalid("roi must hold 2 * rank entries");
    }
    double extrapolation = L.attr_f("extrapolation_value", 0.0f);
    std::vector<std::pair<size_t, ResizeAxis>> axes;
    for (size_t d = 0; d < s.size(); ++d) {
        double scale = scales.empty() ? (double)y[d] / (double)s[d] : scales[d];
        if (!(scale > 0) || y[d] < 1) L.invalid("dim " + std::to_string(d) + ": scale " + std::to_string(scale) + ", output size " + std::to_string(y[d]) + " (both must be positive)");
        if (mode != "nearest" && s[d] * y[d] > (int64_t(1) << 26))
            L.unsupported("a " + mode + " resize of dim " + std::to_string(d) + " from " + std::to_string(s[d]) + " to " + std::to_string(y[d]) +
                          " (its dense weight matrix would exceed 2^26 elements)");
        ResizeAxis a = resize_axis(L, mode, ctm, nm, L.attr_f("cubic_coeff_a", -0.75f), L.attr_i("exclude_outside", 0) != 0,
                                   s[d], y[d], scale, !scales.empty(), roi.empty() ? 0.0f : (float)roi[d],
                                   roi.empty() ? 1.0f : (float)roi[d + s.size()]);
        if (!a.identity) axes.emplace_back(d, std::move(a));
    }
    Operand cur = L.dev(0);
    Operand Y = L.out(0, y);
    if (axes.empty()) {
        L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {cur}, {Y});
        return;
    }
    Shape cs = s;
    // The innermost axis first, as the reference nests them (only the rounding order depends on it).
    for (size_t k = axes.size(); k-- > 0;) {
        size_t d = axes[k].first;
        const ResizeAxis& a = axes[k].second;
        int64_t in = cs[d], out = y[d];
        int64_t pre = numel(Shape(cs.begin(), cs.begin() + d)), post = numel(Shape(cs.begin() + d + 1, cs.end()));
        Shape ns = cs;
        ns[d] = out;
        bool extrapolates = std::find(a.extrapolated.begin(), a.extrapolated.end(), true) != a.extrapolated.end();
        Operand dst = k == 0 && !extrapolates ? Y : L.temp(ns, ty);
        Operand src3 = view(cur, L.v(cur.value), {pre, in, post}), dst3 = view(dst, L.v(dst.value), {pre, out, post});
        if (mode == "nearest") {
            std::vector<double> idx;
            for (const auto& t : a.taps) idx.push_back(t.empty() ? 0.0 : (double)t[0].first);
            tgl_axis_params p = make_params<tgl_axis_params>();
            p.axis = 1;
            L.emit(TGL_OP_INDEX_SELECT, &p, {src3, L.constant(TensorProto::INT32, {out}, idx)}, {dst3});
        } else {
            std::vector<double> w((size_t)(out * in), 0.0);
            for (int64_t o = 0; o < out; ++o)
                for (const auto& [src, wt] : a.taps[(size_t)o]) w[(size_t)(o * in + src)] += wt;
            Operand W = L.constant(TensorProto::FLOAT, {out, in}, w);
            if (ty != TensorProto::FLOAT) {  // the weights in the data's dtype (the plugin refuses other than f32/f16)
                Operand wc = L.temp({out, in}, ty);
                L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {W}, {wc});
                W = wc;
            }
            L.emit<tgl_matmul_params>(TGL_OP_MATMUL, nullptr, {W, src3}, {dst3});
        }
        if (extrapolates) {
            std::vector<double> m;
            for (bool e : a.extrapolated) m.push_back(e ? 1.0 : 0.0);
            Operand mask = L.temp({1, out, 1}, TensorProto::BOOL), value = L.temp({}, ty);
            L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {L.constant(TensorProto::INT32, {1, out, 1}, m)}, {mask});
            L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {L.constant(TensorProto::FLOAT, {}, {extrapolation})}, {value});
            Operand filled = k == 0 ? Y : L.temp(ns, ty);
            L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {mask, value, dst3}, {view(filled, L.v(filled.value), {pre, out, post})});
            dst = filled;
        }
        cur = dst;
        cs = ns;
    }
}

// Resize / Upsample: PyTorch's modes onto the ABI's upsampling (nearest with asymmetric coordinates
// and floor rounding; linear over 2 spatial dims with half_pixel or align_corners), every other
// mode, coordinate transformation and axis by lower_resize_separable. Resize-10 and Upsample map
// as Upsample did (asymmetric, floor).
void lower_resize(Lowering& L) {
    const Shape& s = L.in_v(0).shape;
    bool upsample = L.node.op_type() == "Upsample";
    std::string mode = L.attr_s("mode", "nearest");
    std::string ctm = upsample || L.opset < 11 ? "asymmetric" : L.attr_s("coordinate_transformation_mode", "half_pixel");
    std::string nm = upsample || L.opset < 11 ? "floor" : L.attr_s("nearest_mode", "round_prefer_floor");
    if (upsample && L.opset < 9) L.unsupported("Upsample before opset 9 (scales as an attribute)");
    size_t scales_at = upsample || L.opset < 11 ? 1 : 2, sizes_at = 3;
    std::vector<double> scales;
    std::vector<int64_t> sizes;
    if (L.has_in(scales_at) && numel(L.in_v(scales_at).shape) > 0) scales = L.host_doubles(scales_at);
    if (!upsample && L.opset >= 11 && L.has_in(sizes_at) && numel(L.in_v(sizes_at).shape) > 0) sizes = L.host_ints(sizes_at);
    if (scales.empty() == sizes.empty()) L.invalid("exactly one of scales and sizes must be given");
    if ((!scales.empty() && scales.size() != s.size()) || (!sizes.empty() && sizes.size() != s.size()))
        L.invalid("scales/sizes must have one entry per dim");
    Shape y(s.size());
    for (size_t d = 0; d < s.size(); ++d) y[d] = sizes.empty() ? (int64_t)std::floor(s[d] * scales[d]) : sizes[d];
    // PyTorch's modes map onto the ABI's upsampling ops (one op each); every other mode is separable.
    bool nchw = s.size() >= 3 && s.size() <= 5 && y[0] == s[0] && y[1] == s[1];
    tgl_upsample_params p = make_params<tgl_upsample_params>();
    for (size_t d = 2; d < s.size() && d < 5; ++d) p.scales[d - 2] = scales.empty() ? 0.0f : (float)scales[d];
    tgl_op op = TGL_OP_INVALID;
    if (nchw && mode == "nearest" && ctm == "asymmetric" && nm == "floor") op = TGL_OP_UPSAMPLE_NEAREST;
    if (nchw && mode == "linear" && s.size() == 4) {
        bool all_above_one = y[2] > 1 && y[3] > 1, whole = true;
        for (size_t d = 2; d < 4 && !scales.empty(); ++d) whole &= s[d] * scales[d] == (double)y[d];
        if (ctm == "align_corners" && whole) {
            p.align_corners = 1;
            op = TGL_OP_UPSAMPLE_BILINEAR;
        } else if (ctm == "half_pixel" || (ctm == "pytorch_half_pixel" && all_above_one)) op = TGL_OP_UPSAMPLE_BILINEAR;
    }
    if (op == TGL_OP_INVALID) return lower_resize_separable(L, s, y, mode, ctm, nm, scales);
    Operand x = L.dev(0);
    L.emit(op, &p, {x}, {L.out(0, y)});
}

// ---------------------------------------------------------------------------------------------
// RNN, GRU, LSTM: the input projection of every step at once (one linear), then per step one
// linear of the state and the gates as elementwise ops on views of the gate tensor. Default
// activations only, no clip, every sequence full length.


void lower_recurrent(Lowering& L) {
    const std::string& op = L.node.op_type();
    const int G = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
    static const std::map<std::string, std::vector<std::string>> default_acts = {
        {"RNN", {"tanh"}}, {"GRU", {"sigmoid", "tanh"}}, {"LSTM", {"sigmoid", "tanh", "tanh"}}};
    if (L.has_attr("clip")) L.unsupported("clip");
    if (L.attr_i("input_forget", 0)) L.unsupported("input_forget = 1");
    for (const auto& a : L.node.attribute())
        if (a.name() == "activation_alpha" || a.name() == "activation_beta") L.unsupported("attribute " + a.name());
    std::string dir = L.attr_s("direction", "forward");
    int D = dir == "bidirectional" ? 2 : 1;
    if (dir != "forward" && dir != "reverse" && dir != "bidirectional") L.invalid("direction '" + dir + "'");
    for (const auto& a : L.node.attribute()) {
        if (a.name() != "activations") continue;
        const auto& want = default_acts.at(op);
        for (int k = 0; k < a.strings_size(); ++k) {
            std::string got = a.strings(k);
            std::transform(got.begin(), got.end(), got.begin(), ::tolower);
            if (got != want[k % want.size()]) L.unsupported("activation '" + a.strings(k) + "' (only the defaults are supported)");
        }
    }
    bool layout1 = L.attr_i("layout", 0) != 0;
    const Shape& xs = L.in_v(0).shape;
    if (xs.size() != 3) L.invalid("X must be 3-D");
    int64_t S = layout1 ? xs[1] : xs[0], B = layout1 ? xs[0] : xs[1], I = xs[2];
    int64_t H = L.attr_i("hidden_size", L.in_v(2).shape.at(2));
    int64_t GH = G * H;
    if (L.in_v(1).shape != Shape{D, GH, I} || L.in_v(2).shape != Shape{D, GH, H}) L.invalid("W or R has the wrong shape");
    if (L.has_in(4))
        for (int64_t len : L.host_ints(4))
            if (len != S) L.unsupported("sequence_lens shorter than the sequence (masking is not supported)");
    int32_t ty = L.in_v(0).type;
    bool lbr = L.attr_i("linear_before_reset", 0) != 0;
    Operand X = L.dev(0), W = L.dev(1), R = L.dev(2), Bias = L.has_in(3) ? L.dev(3) : Operand{};
    Operand H0 = L.has_in(5) ? L.dev(5) : Operand{}, C0 = op == "LSTM" && L.has_in(6) ? L.dev(6) : Operand{};
    Operand P = op == "LSTM" && L.has_in(7) ? L.dev(7) : Operand{};
    Shape ys = layout1 ? Shape{B, S, D, H} : Shape{S, D, B, H}, hs = layout1 ? Shape{B, D, H} : Shape{D, B, H};
    Operand Y = L.has_out(0) ? L.out(0, ys) : Operand{};
    Operand Yh = L.has_out(1) ? L.out(1, hs) : Operand{};
    Operand Yc = op == "LSTM" && L.has_out(2) ? L.out(2, hs) : Operand{};
    // (B, H) slice of a (.., D, ..) state tensor of direction d (initial_h, Y_h, ...).
    auto state_view = [&](const Operand& base, int d) {
        return layout1 ? sub_view(base, d * H, {B, H}, {D * H, 1}) : sub_view(base, d * B * H, {B, H}, {H, 1});
    };
    auto act = [&](tgl_op f, const Operand& in, const Operand& out) { L.emit<tgl_unary_params>(f, nullptr, {in}, {out}); };
    auto bin = [&](tgl_op f, const Operand& a, const Operand& b, const Operand& out) {
        L.emit<tgl_binary_params>(f, nullptr, {a, b}, {out});
    };
    tgl_full_params zero = make_params<tgl_full_params>();
    for (int d = 0; d < D; ++d) {
        bool reverse = dir == "reverse" || d == 1;
        Operand Wd = sub_view(W, d * GH * I, {GH, I}, {I, 1}), Rd = sub_view(R, d * GH * H, {GH, H}, {H, 1});
        Operand Wb = sub_view(Bias, d * 2 * GH, {GH}, {1}), Rb = sub_view(Bias, d * 2 * GH + GH, {GH}, {1});
        // Every step's input projection: rows of X in its layout's order.
        Operand xw = L.temp({S * B, GH}, ty);
        L.emit<tgl_linear_params>(TGL_OP_LINEAR, nullptr, {view(X, L.in_v(0), {S * B, I}), Wd, Wb}, {xw});
        Operand h = H0.value >= 0 ? state_view(H0, d) : L.temp({B, H}, ty);
        if (H0.value < 0) L.emit(TGL_OP_FULL, &zero, {}, {h});
        Operand c;
        if (op == "LSTM") {
            c = C0.value >= 0 ? state_view(C0, d) : L.temp({B, H}, ty);
            if (C0.value < 0) L.emit(TGL_OP_FULL, &zero, {}, {c});
        }
        for (int64_t k = 0; k < S; ++k) {
            int64_t t = reverse ? S - 1 - k : k;
            Operand xt = layout1 ? sub_view(xw, t * GH, {B, GH}, {S * GH, 1}) : sub_view(xw, t * B * GH, {B, GH}, {GH, 1});
            auto gate = [&](const Operand& g, int j, int64_t stride) { return sub_view(g, j * H, {B, H}, {stride, 1}); };
            Operand hn = Y.value >= 0 ? (layout1 ? sub_view(Y, (t * D + d) * H, {B, H}, {S * D * H, 1})
                                                 : sub_view(Y, (t * D + d) * B * H, {B, H}, {H, 1}))
                                      : L.temp({B, H}, ty);
            if (op == "RNN") {
                Operand hr = L.temp({B, H}, ty), sum = L.temp({B, H}, ty);
                L.emit<tgl_linear_params>(TGL_OP_LINEAR, nullptr, {h, Rd, Rb}, {hr});
                bin(TGL_OP_ADD, xt, hr, sum);
                act(TGL_OP_TANH, sum, hn);
            } else if (op == "GRU") {  // gates z, r, h
                Operand Rzr = sub_view(R, d * GH * H, {2 * H, H}, {H, 1}), Rh = sub_view(R, d * GH * H + 2 * H * H, {H, H}, {H, 1});
                Operand Rbzr = sub_view(Bias, d * 2 * GH + GH, {2 * H}, {1}), Rbh = sub_view(Bias, d * 2 * GH + GH + 2 * H, {H}, {1});
                Operand hr = L.temp({B, 2 * H}, ty), zr = L.temp({B, 2 * H}, ty), zrs = L.temp({B, 2 * H}, ty);
                L.emit<tgl_linear_params>(TGL_OP_LINEAR, nullptr, {h, Rzr, Rbzr}, {hr});
                bin(TGL_OP_ADD, sub_view(xt, 0, {B, 2 * H}, {layout1 ? S * GH : GH, 1}), hr, zr);
                act(TGL_OP_SIGMOID, zr, zrs);
                Operand z = gate(zrs, 0, 2 * H), r = gate(zrs, 1, 2 * H);
                Operand pre = L.temp({B, H}, ty), ht = L.temp({B, H}, ty);
                if (lbr) {
                    Operand lin = L.temp({B, H}, ty), rl = L.temp({B, H}, ty);
                    L.emit<tgl_linear_params>(TGL_OP_LINEAR, nullptr, {h, Rh, Rbh}, {lin});
                    bin(TGL_OP_MUL, r, lin, rl);
                    bin(TGL_OP_ADD, gate(xt, 2, layout1 ? S * GH : GH), rl, pre);
                } else {
                    Operand rh = L.temp({B, H}, ty), lin = L.temp({B, H}, ty);
                    bin(TGL_OP_MUL, r, h, rh);
                    L.emit<tgl_linear_params>(TGL_OP_LINEAR, nullptr, {rh, Rh, Rbh}, {lin});
                    bin(TGL_OP_ADD, gate(xt, 2, layout1 ? S * GH : GH), lin, pre);
                }
                act(TGL_OP_TANH, pre, ht);
                // h' = ht + z * (h - ht)
                Operand diff = L.temp({B, H}, ty), zd = L.temp({B, H}, ty);
                bin(TGL_OP_SUB, h, ht, diff);
                bin(TGL_OP_MUL, z, diff, zd);
                bin(TGL_OP_ADD, ht, zd, hn);
            } else {  // LSTM: gates i, o, f, c; peepholes P (i, o, f)
                Operand hr = L.temp({B, GH}, ty), g = L.temp({B, GH}, ty);
                L.emit<tgl_linear_params>(TGL_OP_LINEAR, nullptr, {h, Rd, Rb}, {hr});
                bin(TGL_OP_ADD, xt, hr, g);
                auto peep = [&](int j, const Operand& state) {  // g_j += P_j * state
                    if (P.value < 0) return;
                    Operand m = L.temp({B, H}, ty);
                    bin(TGL_OP_MUL, sub_view(P, d * 3 * H + j * H, {H}, {1}), state, m);
                    bin(TGL_OP_ADD, gate(g, j == 0 ? 0 : 2, GH), m, gate(g, j == 0 ? 0 : 2, GH));
                };
                peep(0, c);  // i
                peep(2, c);  // f
                Operand si = L.temp({B, H}, ty), sf = L.temp({B, H}, ty), ct = L.temp({B, H}, ty);
                act(TGL_OP_SIGMOID, gate(g, 0, GH), si);
                act(TGL_OP_SIGMOID, gate(g, 2, GH), sf);
                act(TGL_OP_TANH, gate(g, 3, GH), ct);
                Operand fc = L.temp({B, H}, ty), ic = L.temp({B, H}, ty), cn = L.temp({B, H}, ty);
                bin(TGL_OP_MUL, sf, c, fc);
                bin(TGL_OP_MUL, si, ct, ic);
                bin(TGL_OP_ADD, fc, ic, cn);
                if (P.value >= 0) {  // o sees the new cell
                    Operand m = L.temp({B, H}, ty);
                    bin(TGL_OP_MUL, sub_view(P, d * 3 * H + H, {H}, {1}), cn, m);
                    bin(TGL_OP_ADD, gate(g, 1, GH), m, gate(g, 1, GH));
                }
                Operand so = L.temp({B, H}, ty), tc = L.temp({B, H}, ty);
                act(TGL_OP_SIGMOID, gate(g, 1, GH), so);
                act(TGL_OP_TANH, cn, tc);
                bin(TGL_OP_MUL, so, tc, hn);
                c = cn;
            }
            h = hn;
        }
        if (Yh.value >= 0) L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {h}, {state_view(Yh, d)});
        if (Yc.value >= 0) L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {c}, {state_view(Yc, d)});
    }
}

// GatherND / ScatterND onto index_select / scatter over a flattened view: the k index components
// become one flat row index, computed on the device in f32 (exact while the rows number at most
// 2^23), negative components counted from the end as ONNX says.
struct FlatIndex {
    Operand rows;      // i32, one per index tuple (shape: indices' without the last dim)
    int64_t n_rows;    // rows of the flattened data: batch * prod(indexed dims)
    Shape rest;        // the data dims after the indexed ones
};

FlatIndex flat_index(Lowering& L, int64_t batch_dims) {
    const Shape& ds = L.in_v(0).shape;
    const Shape& is = L.in_v(1).shape;
    if (is.empty()) L.invalid("indices must have rank >= 1");
    int64_t k = is.back(), bd = batch_dims, r = (int64_t)ds.size();
    if (bd < 0 || bd >= (int64_t)is.size() || k < 1 || bd + k > r) L.invalid("indices' last dim or batch_dims does not fit the data's rank");
    for (int64_t d = 0; d < bd; ++d)
        if (is[d] != ds[d]) L.invalid("batch dims of data and indices differ");
    Shape outer(is.begin(), is.end() - 1), strides(k, 1), dims(ds.begin() + bd, ds.begin() + bd + k);
    for (int64_t j = k - 2; j >= 0; --j) strides[j] = strides[j + 1] * dims[j + 1];
    int64_t P = numel(dims), Bn = numel(Shape(ds.begin(), ds.begin() + bd));
    if (Bn * P > (1 << 23)) L.unsupported("more than 2^23 indexed rows (the flat index is computed in f32)");
    std::vector<double> dimv(dims.begin(), dims.end()), strv(strides.begin(), strides.end());
    Operand idx = L.dev(1);
    Operand f = L.temp(is, TensorProto::FLOAT), neg = L.temp(is, TensorProto::BOOL), fw = L.temp(is, TensorProto::FLOAT),
            fs = L.temp(is, TensorProto::FLOAT), pr = L.temp(is, TensorProto::FLOAT), flat = L.temp(outer, TensorProto::FLOAT);
    L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {idx}, {f});
    L.emit<tgl_binary_params>(TGL_OP_LT, nullptr, {f, L.constant(TensorProto::FLOAT, {}, {0.0})}, {neg});
    L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {f, L.constant(TensorProto::FLOAT, {k}, dimv)}, {fw});
    L.emit<tgl_binary_params>(TGL_OP_WHERE, nullptr, {neg, fw, f}, {fs});
    L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {fs, L.constant(TensorProto::FLOAT, {k}, strv)}, {pr});
    tgl_reduce_params sum = make_params<tgl_reduce_params>();
    sum.n_axes = 1;
    sum.axes[0] = -1;
    L.emit(TGL_OP_SUM, &sum, {pr}, {flat});
    if (bd > 0) {  // + the batch's first row
        std::vector<double> off((size_t)numel(outer));
        int64_t per_batch = numel(outer) / std::max<int64_t>(Bn, 1);
        for (size_t e = 0; e < off.size(); ++e) off[e] = (double)((int64_t)e / per_batch * P);
        Operand shifted = L.temp(outer, TensorProto::FLOAT);
        L.emit<tgl_binary_params>(TGL_OP_ADD, nullptr, {flat, L.constant(TensorProto::FLOAT, outer, off)}, {shifted});
        flat = shifted;
    }
    FlatIndex fi;
    fi.rows = L.temp(outer, TensorProto::INT32);
    L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {flat}, {fi.rows});
    fi.n_rows = Bn * P;
    fi.rest.assign(ds.begin() + bd + k, ds.end());
    return fi;
}

void lower_gather_nd(Lowering& L) {
    FlatIndex fi = flat_index(L, L.attr_i("batch_dims", 0));
    const Shape& is = L.in_v(1).shape;
    Shape y(is.begin(), is.end() - 1);
    y.insert(y.end(), fi.rest.begin(), fi.rest.end());
    int64_t n = numel(Shape(is.begin(), is.end() - 1));
    Shape dv{fi.n_rows}, yv{n};
    dv.insert(dv.end(), fi.rest.begin(), fi.rest.end());
    yv.insert(yv.end(), fi.rest.begin(), fi.rest.end());
    Operand x = L.dev(0);
    Operand Y = L.out(0, y);
    tgl_axis_params p = make_params<tgl_axis_params>();
    L.emit(TGL_OP_INDEX_SELECT, &p, {view(x, L.in_v(0), dv), view(fi.rows, L.v(fi.rows.value), {n})}, {view(Y, L.v(Y.value), yv)});
}

void lower_scatter_nd(Lowering& L) {
    tgl_axis_params p = make_params<tgl_axis_params>();
    const tgl_op op = scatter_op(L, p);
    FlatIndex fi = flat_index(L, 0);
    const Shape& is = L.in_v(1).shape;
    int64_t n = numel(Shape(is.begin(), is.end() - 1)), R = numel(fi.rest);
    Shape want(is.begin(), is.end() - 1);
    want.insert(want.end(), fi.rest.begin(), fi.rest.end());
    if (L.in_v(2).shape != want) L.invalid("updates have shape " + shape_str(L.in_v(2).shape) + ", expected " + shape_str(want));
    Operand x = L.dev(0), u = L.dev(2);
    Operand full = L.temp({n, R}, TensorProto::INT32);  // every element of a row gets the row's index
    L.emit<tgl_unary_params>(TGL_OP_EXPAND, nullptr, {view(fi.rows, L.v(fi.rows.value), {n, 1})}, {full});
    Operand Y = L.out(0, L.in_v(0).shape);
    L.emit(op, &p,
           {view(x, L.in_v(0), {fi.n_rows, R}), full, view(u, L.in_v(2), {n, R})}, {view(Y, L.v(Y.value), {fi.n_rows, R})});
}

// ---------------------------------------------------------------------------------------------
// Einsum onto strided views, sum, mul and matmul: a label repeated within an operand is its
// diagonal (one view, strides added); a label no other operand and not the output needs is summed
// out at once; operands are then contracted left to right, each pair as one batched matmul
// (batch, kept-left, contracted) @ (batch, contracted, kept-right) or, with nothing contracted, one
// broadcasting mul; the last result is permuted into the output's order. Ellipsis dims broadcast
// as NumPy's (a dim of 1 is a stride-0 view).

struct EinsumTerm {
    Operand o;                 // a view: shape and strides per label below
    std::vector<int> labels;   // 'a'..'z', 'A'..'Z', or 1000 + k for the k-th ellipsis dim
};

void lower_einsum(Lowering& L) {
    std::string eq;
    for (char c : L.attr_s("equation", "")) if (c != ' ') eq += c;
    auto bad = [&](const std::string& why) { L.invalid("equation '" + eq + "': " + why); };
    size_t arrow = eq.find("->");
    std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms(1);
    for (char c : lhs) {
        if (c == ',') terms.emplace_back();
        else terms.back().push_back(c);
    }
    if (terms.size() != L.n_in()) bad("names " + std::to_string(terms.size()) + " operands, the node has " + std::to_string(L.n_in()));
    // Parses a term into letters, -1 marking the ellipsis.
    auto parse = [&](const std::string& t) {
        std::vector<int> r;
        for (size_t i = 0; i < t.size(); ++i) {
            if (t.compare(i, 3, "...") == 0) {
                if (std::find(r.begin(), r.end(), -1) != r.end()) bad("two ellipses in one term");
                r.push_back(-1);
                i += 2;
            } else if (std::isalpha((unsigned char)t[i])) r.push_back(t[i]);
            else bad(std::string("unexpected character '") + t[i] + "'");
        }
        return r;
    };
    std::vector<std::vector<int>> parsed;
    size_t ell = 0;  // the most ellipsis dims of any operand
    for (size_t i = 0; i < terms.size(); ++i) {
        parsed.push_back(parse(terms[i]));
        size_t letters = (size_t)std::count_if(parsed[i].begin(), parsed[i].end(), [](int l) { return l >= 0; });
        bool has_ell = letters != parsed[i].size();
        size_t rank = L.in_v(i).shape.size();
        if (rank < letters || (!has_ell && rank != letters))
            bad("operand " + std::to_string(i) + " has rank " + std::to_string(rank) + " for term '" + terms[i] + "'");
        if (has_ell) ell = std::max(ell, rank - letters);
    }
    // Each operand's labels per axis, and every label's size (ellipsis dims broadcast).
    std::map<int, int64_t> size;
    std::map<int, int> count;
    std::vector<EinsumTerm> ops;
    for (size_t i = 0; i < terms.size(); ++i) {
        const Shape& s = L.in_v(i).shape;
        std::vector<int> labels;
        size_t letters = (size_t)std::count_if(parsed[i].begin(), parsed[i].end(), [](int l) { return l >= 0; }), e = s.size() - letters;
        for (int l : parsed[i])
            if (l >= 0) labels.push_back(l);
            else for (size_t k = 0; k < e; ++k) labels.push_back(1000 + (int)(ell - e + k));
        for (size_t d = 0; d < s.size(); ++d) {
            int l = labels[d];
            auto it = size.find(l);
            if (it == size.end() || it->second == 1) size[l] = s[d];
            else if (s[d] != it->second && !(l >= 1000 && s[d] == 1))
                bad("label '" + (l >= 1000 ? std::string("...") : std::string(1, (char)l)) + "' has sizes " + std::to_string(it->second) + " and " + std::to_string(s[d]));
        }
        // A label repeated within the operand: its diagonal, one dim whose stride is the sum.
        Operand x = L.dev(i);
        Shape st = contiguous_strides(s), shape, strides;
        std::vector<int> uniq;
        for (size_t d = 0; d < s.size(); ++d) {
            auto at = std::find(uniq.begin(), uniq.end(), labels[d]);
            if (at == uniq.end()) {
                uniq.push_back(labels[d]);
                shape.push_back(s[d]);
                strides.push_back(st[d]);
            } else {
                size_t k = (size_t)(at - uniq.begin());
                if (shape[k] != s[d]) bad("a repeated label with sizes " + std::to_string(shape[k]) + " and " + std::to_string(s[d]));
                strides[k] += st[d];
            }
        }
        for (int l : uniq) ++count[l];
        ops.push_back({sub_view(x, 0, shape, strides), uniq});
    }
    // The output's labels: explicit, or the ellipsis dims then every letter used once, in ASCII order.
    std::vector<int> out;
    if (arrow != std::string::npos) {
        for (int l : parse(eq.substr(arrow + 2))) {
            if (l == -1) for (size_t k = 0; k < ell; ++k) out.push_back(1000 + (int)k);
            else if (!size.count(l)) bad(std::string("output label '") + (char)l + "' is in no operand");
            else if (std::find(out.begin(), out.end(), l) != out.end()) bad(std::string("output label '") + (char)l + "' twice");
            else out.push_back(l);
        }
    } else {
        for (size_t k = 0; k < ell; ++k) out.push_back(1000 + (int)k);
        std::map<int, int> uses;
        for (const auto& p : parsed) for (int l : p) if (l >= 0) ++uses[l];
        for (const auto& [l, n] : uses) if (n == 1) out.push_back(l);
    }
    int32_t ty = L.in_v(0).type;
    auto has = [](const std::vector<int>& v, int l) { return std::find(v.begin(), v.end(), l) != v.end(); };
    // A term's view with the given labels in order, each at its full size (stride 0 where the
    // operand broadcasts it).
    auto in_order = [&](const EinsumTerm& t, const std::vector<int>& order) {
        Shape shape, strides;
        for (int l : order) {
            size_t k = (size_t)(std::find(t.labels.begin(), t.labels.end(), l) - t.labels.begin());
            shape.push_back(size[l]);
            strides.push_back(t.o.shape[k] == size[l] ? t.o.strides[k] : 0);
        }
        return sub_view(t.o, 0, shape, strides);
    };
    // The same, materialized unless it is already contiguous.
    auto arranged = [&](const EinsumTerm& t, const std::vector<int>& order) {
        Operand v = in_order(t, order);
        if (v.strides == contiguous_strides(v.shape)) return v;
        Operand c = L.temp(v.shape, ty);
        L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {v}, {c});
        return sub_view(c, 0, v.shape, contiguous_strides(v.shape));
    };
    // Sums out the labels of t that `keep` does not name.
    auto reduce = [&](EinsumTerm& t, const std::vector<int>& keep) {
        tgl_reduce_params p = make_params<tgl_reduce_params>();
        Shape shape, strides;
        std::vector<int> kept;
        for (size_t k = 0; k < t.labels.size(); ++k) {
            if (has(keep, t.labels[k])) {
                kept.push_back(t.labels[k]);
                shape.push_back(t.o.shape[k]);
            } else p.axes[p.n_axes++] = (int32_t)k;
        }
        if (p.n_axes == 0) return;
        Operand r = L.temp(shape, ty);
        L.emit(TGL_OP_SUM, &p, {t.o}, {r});
        t = {sub_view(r, 0, shape, contiguous_strides(shape)), kept};
    };
    auto later_labels = [&](size_t from) {  // the labels of operands from..end and of the output
        std::vector<int> v = out;
        for (size_t j = from; j < ops.size(); ++j) v.insert(v.end(), ops[j].labels.begin(), ops[j].labels.end());
        return v;
    };
    EinsumTerm acc = ops[0];
    for (size_t i = 1; i < ops.size(); ++i) {
        EinsumTerm b = ops[i];
        std::vector<int> later = later_labels(i + 1), need_a = later, need_b = later;
        need_a.insert(need_a.end(), b.labels.begin(), b.labels.end());
        need_b.insert(need_b.end(), acc.labels.begin(), acc.labels.end());
        reduce(acc, need_a);
        reduce(b, need_b);
        std::vector<int> batch, contract, a_only, b_only;
        for (int l : acc.labels) (has(b.labels, l) ? (has(later, l) ? batch : contract) : a_only).push_back(l);
        for (int l : b.labels) if (!has(acc.labels, l)) b_only.push_back(l);
        auto prod = [&](const std::vector<int>& ls) { int64_t n = 1; for (int l : ls) n *= size[l]; return n; };
        int64_t Bt = prod(batch), M = prod(a_only), K = prod(contract), N = prod(b_only);
        std::vector<int> ao = batch, bo = batch, ro = batch;
        ao.insert(ao.end(), a_only.begin(), a_only.end());
        ao.insert(ao.end(), contract.begin(), contract.end());
        bo.insert(bo.end(), contract.begin(), contract.end());
        bo.insert(bo.end(), b_only.begin(), b_only.end());
        ro.insert(ro.end(), a_only.begin(), a_only.end());
        ro.insert(ro.end(), b_only.begin(), b_only.end());
        Operand A = arranged(acc, ao), B = arranged(b, bo);
        Shape rs;
        for (int l : ro) rs.push_back(size[l]);
        Operand R = L.temp(rs, ty);
        Shape r3{Bt, M, N};
        if (contract.empty())
            L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {sub_view(A, 0, {Bt, M, 1}, {M, 1, 1}), sub_view(B, 0, {Bt, 1, N}, {N, N, 1})},
                                      {sub_view(R, 0, r3, contiguous_strides(r3))});
        else
            L.emit<tgl_matmul_params>(TGL_OP_MATMUL, nullptr, {sub_view(A, 0, {Bt, M, K}, {M * K, K, 1}), sub_view(B, 0, {Bt, K, N}, {K * N, N, 1})},
                                      {sub_view(R, 0, r3, contiguous_strides(r3))});
        acc = {sub_view(R, 0, rs, contiguous_strides(rs)), ro};
    }
    reduce(acc, out);
    Operand v = in_order(acc, out);
    L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {v}, {L.out(0, v.shape)});
}

// ---------------------------------------------------------------------------------------------
// int8/uint8 through f32 where the ABI has no 8-bit kernel (MaxPool): every 8-bit value is exact
// in f32. (Arithmetic on int8/uint8/int32 runs on the plugins' integer ops: exact, wrapping as
// ONNX's reference does; Div truncates; division by zero, undefined in ONNX, gives 0.)

bool is_8bit(int32_t t) { return t == TensorProto::INT8 || t == TensorProto::UINT8; }

Operand to_f32(Lowering& L, const Operand& x, const Shape& s) {
    Operand f = L.temp(s, TensorProto::FLOAT);
    L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {x}, {f});
    return f;
}

// MaxPool of int8/uint8: the maximum of exact f32 values, cast back (in range); no Indices.
void max_pool_8bit(Lowering& L, const tgl_pool_params& p, const Operand& X) {
    if (L.has_out(1)) L.unsupported("the Indices output of an 8-bit MaxPool");
    Shape y = L.inferred_shape(0);
    Operand r = L.temp(y, TensorProto::FLOAT);
    L.emit(TGL_OP_MAX_POOL, &p, {to_f32(L, X, L.in_v(0).shape)}, {r});
    L.emit<tgl_unary_params>(TGL_OP_CAST, nullptr, {r}, {L.out(0, y)});
}

// ---------------------------------------------------------------------------------------------
// LpPool / GlobalLpPool: (sum over the window of |x|^p)^(1/p). The sum is an average pool that
// counts the zero padding (ONNX pads LpPool with zeros) times the window size (pads of any size:
// the average pool takes them, ABI 1.3).

// |x|^p elementwise (p = 2 squares, p = 1 takes abs only).
Operand abs_pow(Lowering& L, const Operand& x, const Shape& s, int64_t p) {
    int32_t ty = L.in_v(0).type;
    Operand a = L.temp(s, ty);
    L.emit<tgl_unary_params>(p == 2 ? TGL_OP_SQUARE : TGL_OP_ABS, nullptr, {x}, {a});
    if (p == 1 || p == 2) return a;
    Operand r = L.temp(s, ty);
    L.emit<tgl_binary_params>(TGL_OP_POW, nullptr, {a, L.constant(ty, {}, {(double)p})}, {r});
    return r;
}

// s^(1/p) into out (p = 2: sqrt, p = 1: a copy).
void root_p(Lowering& L, const Operand& s, int64_t p, const Operand& out) {
    if (p == 1) return L.emit<tgl_unary_params>(TGL_OP_CONTIGUOUS, nullptr, {s}, {out});
    if (p == 2) return L.emit<tgl_unary_params>(TGL_OP_SQRT, nullptr, {s}, {out});
    L.emit<tgl_binary_params>(TGL_OP_POW, nullptr, {s, L.constant(L.in_v(0).type, {}, {1.0 / (double)p})}, {out});
}

int64_t lp_order(Lowering& L) {
    int64_t p = L.attr_i("p", 2);
    if (p < 1) L.invalid("p = " + std::to_string(p) + " (must be >= 1)");
    return p;
}

void lower_lp_pool(Lowering& L) {
    const Shape& x = L.in_v(0).shape;
    if (x.size() < 3 || x.size() > 5) L.unsupported("pooling over " + std::to_string(x.size() - 2) + " spatial dims (1 to 3 are supported)");
    int64_t lp = lp_order(L);
    Window g = window(L, x, L.attr_ints("kernel_shape"));
    int32_t ty = L.in_v(0).type;
    tgl_pool_params p = make_params<tgl_pool_params>();
    p.count_include_pad = 1;
    double window_size = 1;
    for (size_t d = 0; d < g.S; ++d) {
        p.kernel[d] = (int32_t)g.k[d];
        p.stride[d] = (int32_t)g.stride[d];
        p.dilation[d] = 1;
        p.pad_begin[d] = (int32_t)g.pb[d];
        p.pad_end[d] = (int32_t)g.pe[d];
        window_size *= (double)g.k[d];
    }
    Shape y = L.inferred_shape(0);
    Operand a = abs_pow(L, L.dev(0), x, lp);
    Operand mean = L.temp(y, ty), sum = L.temp(y, ty);
    L.emit(TGL_OP_AVG_POOL, &p, {a}, {mean});
    L.emit<tgl_binary_params>(TGL_OP_MUL, nullptr, {mean, L.constant(ty, {}, {window_size})}, {sum});
    root_p(L, sum, lp, L.out(0, y));
}

void lower_global_lp_pool(Lowering& L) {
    const Shape& x = L.in_v(0).shape;
    if (x.size() < 3) L.invalid("input must be (N, C, D1, ...)");
    int64_t lp = lp_order(L);
    Shape y = x;
    tgl_reduce_params p = make_params<tgl_reduce_params>();
    p.keepdims = 1;
    for (size_t d = 2; d < x.size(); ++d) {
        y[d] = 1;
        p.axes[p.n_axes++] = (int32_t)d;
    }
    Operand sum = L.temp(y, L.in_v(0).type);
    L.emit(TGL_OP_SUM, &p, {abs_pow(L, L.dev(0), x, lp)}, {sum});
    root_p(L, sum, lp, L.out(0, y));
}

}  // namespace

const std::map<std::string, OpRule>& lowering_table() {
    static const std::map<std::string, OpRule> table = {
        // Host-only (fold_on_host handles them; a lowering here means "not foldable").
        {"Constant", {nullptr, {"value", "value_float", "value_int", "value_ints", "value_floats", "value_string", "value_strings", "sparse_value"}}},
        {"Shape", {nullptr, {"start", "end"}}},
        {"Size", {nullptr, {}}},
        // Views.
        {"Identity", {lower_view, {}}},
        {"Reshape", {lower_view, {"allowzero"}}},
        {"Flatten", {lower_view, {"axis"}}},
        {"Squeeze", {lower_view, {"axes"}}},
        {"Unsqueeze", {lower_view, {"axes"}}},
        {"Dropout", {lower_view, {"ratio", "seed", "is_test"}}},
        // Unary.
        {"Relu", {unary<TGL_OP_RELU>, {}}},
        {"Sigmoid", {unary<TGL_OP_SIGMOID>, {}}},
        {"Tanh", {unary<TGL_OP_TANH>, {}}},
        {"Exp", {unary<TGL_OP_EXP>, {}}},
        {"Log", {unary<TGL_OP_LOG>, {}}},
        {"Sqrt", {unary<TGL_OP_SQRT>, {}}},
        {"Abs", {unary<TGL_OP_ABS>, {}}},
        {"Neg", {unary<TGL_OP_NEG>, {}}},
        {"Erf", {unary<TGL_OP_ERF>, {}}},
        {"Floor", {unary<TGL_OP_FLOOR>, {}}},
        {"Ceil", {unary<TGL_OP_CEIL>, {}}},
        {"Round", {unary<TGL_OP_ROUND>, {}}},
        {"Sin", {unary<TGL_OP_SIN>, {}}},
        {"Cos", {unary<TGL_OP_COS>, {}}},
        {"Tan", {unary<TGL_OP_TAN>, {}}},
        {"Atan", {unary<TGL_OP_ATAN>, {}}},
        {"Asin", {unary<TGL_OP_ASIN>, {}}},
        {"Acos", {unary<TGL_OP_ACOS>, {}}},
        {"Sinh", {unary<TGL_OP_SINH>, {}}},
        {"Cosh", {unary<TGL_OP_COSH>, {}}},
        {"Asinh", {unary<TGL_OP_ASINH>, {}}},
        {"Acosh", {unary<TGL_OP_ACOSH>, {}}},
        {"Atanh", {unary<TGL_OP_ATANH>, {}}},
        {"Reciprocal", {unary<TGL_OP_RECIPROCAL>, {}}},
        {"Sign", {unary<TGL_OP_SIGN>, {}}},
        {"Softplus", {unary<TGL_OP_SOFTPLUS>, {}}},
        {"Softsign", {lower_softsign, {}}},
        {"Mish", {unary<TGL_OP_MISH>, {}}},
        {"HardSwish", {unary<TGL_OP_HARDSWISH>, {}}},
        {"HardSigmoid", {lower_hard_sigmoid, {"alpha", "beta"}}},
        {"LeakyRelu", {lower_elu_like, {"alpha"}}},
        {"Elu", {lower_elu_like, {"alpha"}}},
        {"Celu", {lower_elu_like, {"alpha"}}},
        {"Selu", {lower_elu_like, {"alpha", "gamma"}}},
        {"PRelu", {lower_prelu, {}}},
        {"ThresholdedRelu", {lower_thresholded_relu, {"alpha"}}},
        {"Clip", {lower_clip, {"min", "max"}}},
        {"Cast", {lower_cast, {"to"}}},
        {"CastLike", {lower_cast, {}}},
        {"Not", {lower_not, {}}},
        {"IsNaN", {lower_isnan, {}}},
        {"IsInf", {lower_isinf, {"detect_positive", "detect_negative"}}},
        // Binary.
        {"Add", {binary<TGL_OP_ADD>, {}}},
        {"Sub", {binary<TGL_OP_SUB>, {}}},
        {"Mul", {binary<TGL_OP_MUL>, {}}},
        {"Div", {binary<TGL_OP_DIV>, {}}},
        {"Pow", {lower_pow, {}}},
        {"Mod", {lower_mod, {"fmod"}}},
        {"Max", {variadic<TGL_OP_MAXIMUM>, {}}},
        {"Min", {variadic<TGL_OP_MINIMUM>, {}}},
        {"Sum", {variadic<TGL_OP_ADD>, {}}},
        {"Mean", {variadic<TGL_OP_ADD>, {}}},
        {"And", {compare<TGL_OP_LOGICAL_AND>, {}}},
        {"Or", {compare<TGL_OP_LOGICAL_OR>, {}}},
        {"Xor", {compare<TGL_OP_LOGICAL_XOR>, {}}},
        {"Equal", {compare<TGL_OP_EQ>, {}}},
        {"Less", {compare<TGL_OP_LT>, {}}},
        {"LessOrEqual", {compare<TGL_OP_LE>, {}}},
        {"Greater", {compare<TGL_OP_GT>, {}}},
        {"GreaterOrEqual", {compare<TGL_OP_GE>, {}}},
        {"Where", {lower_where, {}}},
        // Linear algebra, conv, pooling, normalization.
        {"MatMul", {lower_matmul, {}}},
        {"Gemm", {lower_gemm, {"alpha", "beta", "transA", "transB"}}},
        {"Conv", {lower_conv, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}}},
        {"ConvTranspose", {lower_conv_transpose, {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"}}},
        {"MaxPool", {lower_pool, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"}}},
        {"AveragePool", {lower_pool, {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"}}},
        {"GlobalAveragePool", {lower_global_pool, {}}},
        {"GlobalMaxPool", {lower_global_pool, {}}},
        {"LpPool", {lower_lp_pool, {"auto_pad", "kernel_shape", "p", "pads", "strides"}}},
        {"GlobalLpPool", {lower_global_lp_pool, {"p"}}},
        {"BatchNormalization", {lower_batch_norm, {"epsilon", "momentum", "training_mode", "spatial", "is_test"}}},
        {"InstanceNormalization", {lower_instance_norm, {"epsilon"}}},
        {"LRN", {lower_lrn, {"alpha", "beta", "bias", "size"}}},
        {"Shrink", {lower_shrink, {"bias", "lambd"}}},
        {"LayerNormalization", {lower_layer_norm, {"axis", "epsilon", "stash_type"}}},
        {"Softmax", {lower_softmax, {"axis"}}},
        {"LogSoftmax", {lower_softmax, {"axis"}}},
        {"Hardmax", {lower_hardmax, {"axis"}}},
        // Reductions.
        {"ReduceSum", {lower_reduce, {"axes", "keepdims", "noop_with_empty_axes"}}},
        {"ReduceMean", {lower_reduce, {"axes", "keepdims"}}},
        {"ReduceMax", {lower_reduce, {"axes", "keepdims"}}},
        {"ReduceMin", {lower_reduce, {"axes", "keepdims"}}},
        {"ReduceProd", {lower_reduce, {"axes", "keepdims"}}},
        {"ReduceLogSumExp", {lower_reduce, {"axes", "keepdims"}}},
        {"ReduceLogSum", {lower_reduce, {"axes", "keepdims"}}},
        {"ReduceSumSquare", {lower_reduce, {"axes", "keepdims"}}},
        {"ReduceL1", {lower_reduce, {"axes", "keepdims"}}},
        {"ReduceL2", {lower_reduce, {"axes", "keepdims"}}},
        {"ArgMax", {lower_arg, {"axis", "keepdims", "select_last_index"}}},
        {"ArgMin", {lower_arg, {"axis", "keepdims", "select_last_index"}}},
        {"CumSum", {lower_cumsum, {"exclusive", "reverse"}}},
        {"TopK", {lower_topk, {"axis", "largest", "sorted", "k"}}},
        // Layout and indexing.
        {"Transpose", {lower_transpose, {"perm"}}},
        {"Slice", {lower_slice, {"starts", "ends", "axes"}}},
        {"Concat", {lower_concat, {"axis"}}},
        {"Split", {lower_split, {"axis", "split"}}},
        {"Gather", {lower_gather, {"axis"}}},
        {"GatherElements", {lower_gather_elements, {"axis"}}},
        {"ScatterElements", {lower_scatter_elements, {"axis", "reduction"}}},
        {"Scatter", {lower_scatter_elements, {"axis"}}},
        {"GatherND", {lower_gather_nd, {"batch_dims"}}},
        {"ScatterND", {lower_scatter_nd, {"reduction"}}},
        {"Expand", {lower_expand, {}}},
        {"Tile", {lower_tile, {}}},
        {"Pad", {lower_pad, {"mode", "pads", "value"}}},
        {"Trilu", {lower_trilu, {"upper"}}},
        {"Range", {lower_range, {}}},
        {"ConstantOfShape", {lower_constant_of_shape, {"value"}}},
        {"OneHot", {lower_one_hot, {"axis"}}},
        {"DepthToSpace", {lower_depth_space, {"blocksize", "mode"}}},
        {"Resize", {lower_resize, {"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value"}}},
        {"Upsample", {lower_resize, {"mode"}}},
        {"RNN", {lower_recurrent, {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout"}}},
        {"GRU", {lower_recurrent, {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout", "linear_before_reset"}}},
        {"LSTM", {lower_recurrent, {"activation_alpha", "activation_beta", "activations", "clip", "direction", "hidden_size", "layout", "input_forget"}}},
        {"SpaceToDepth", {lower_depth_space, {"blocksize"}}},
        {"Einsum", {lower_einsum, {"equation"}}},
    };
    return table;
}

}  // namespace tglrt
