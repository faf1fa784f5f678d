#include "layout_rules.h"
#include "op_families.h"

#include "dim_merge.h"
#include "validate_util.h"

// The double -> dtype conversion of op 'cast' (header-only, no CPU plugin code beyond it): the pad
// constant is converted once here, so both plugins store the same bits.
#include "dtype_bits.h"

#include <algorithm>

namespace tgl {
namespace {

// A strided view of an operand (or part of one) in elements.
struct ViewDesc {
    int rank = 0;
    int64_t shape[TGL_MAX_RANK] = {};
    int64_t strides[TGL_MAX_RANK] = {};
    int64_t offset = 0;
};

ViewDesc view_of(const TensorArg& t) {
    ViewDesc v;
    v.rank = t.rank;
    std::copy(t.shape, t.shape + t.rank, v.shape);
    std::copy(t.strides, t.strides + t.rank, v.strides);
    v.offset = t.offset;
    return v;
}

// A map step writing all of `out` from input `input`; every dim Direct with stride 0 (the caller
// fills in the input side).
CopyStep map_step(int input, int output, const ViewDesc& out, int64_t in_offset) {
    CopyStep s;
    s.input = input;
    s.output = output;
    s.rank = out.rank;
    s.out_offset = out.offset;
    s.in_offset = in_offset;
    for (int d = 0; d < out.rank; ++d) {
        s.shape[d] = out.shape[d];
        s.out_strides[d] = out.strides[d];
        s.step[d] = 1;
        s.in_size[d] = out.shape[d];
    }
    return s;
}

// Output dim d of s reads input dim of size n and stride `stride` Direct, at start + step * c.
void set_dim(CopyStep& s, int d, int64_t stride, int64_t n, int64_t start = 0, int64_t step = 1,
             CoordMode mode = CoordMode::Direct) {
    s.in_strides[d] = stride;
    s.in_size[d] = n;
    s.start[d] = start;
    s.step[d] = step;
    s.mode[d] = mode;
}

// The input coordinate of a coordinate k outside [0, n) under a boundary mode (n > 0), or -1 for
// the constant. Used for dims of size 1 and for the range test.
int64_t resolve(CoordMode m, int64_t k, int64_t n) {
    if (k >= 0 && k < n) return k;
    switch (m) {
    case CoordMode::Wrap: return ((k % n) + n) % n;
    case CoordMode::Reflect: return k < 0 ? -k : 2 * (n - 1) - k;
    case CoordMode::Clamp: return k < 0 ? 0 : n - 1;
    default: return -1;  // Constant (Direct never gets here)
    }
}

// Simplifies a map step (see layout_rules.h) and appends it unless it is empty.
void add_map_step(LayoutPlan& plan, CopyStep s) {
    int64_t count = 1;
    for (int d = 0; d < s.rank; ++d) count *= s.shape[d];
    if (count == 0) return;
    s.count = count;
    CopyStep t = s;
    t.rank = 0;
    for (int d = 0; d < s.rank && t.input >= 0; ++d) {
        CoordMode m = s.mode[d];
        const int64_t n = s.in_size[d];
        const int64_t first = s.start[d], last = s.start[d] + s.step[d] * (s.shape[d] - 1);
        const bool inside = std::min(first, last) >= 0 && std::max(first, last) < n;
        if (m == CoordMode::Constant && n == 0) t.input = -1;  // nothing to read: all constant
        if (t.input < 0) break;
        if (inside) m = CoordMode::Direct;
        if (s.shape[d] == 1) {
            // One coordinate: resolved here.
            int64_t k = m == CoordMode::Direct ? first : resolve(m, first, n);
            if (k < 0) t.input = -1;
            else t.in_offset += k * s.in_strides[d];
            continue;
        }
        int r = t.rank++;
        t.shape[r] = s.shape[d];
        t.out_strides[r] = s.out_strides[d];
        t.in_size[r] = n;
        t.mode[r] = m;
        if (m == CoordMode::Direct) {
            t.in_offset += first * s.in_strides[d];
            t.in_strides[r] = s.in_strides[d] * s.step[d];
            t.start[r] = 0;
            t.step[r] = 1;
        } else {
            t.in_strides[r] = s.in_strides[d];
            t.start[r] = m == CoordMode::Wrap ? ((first % n) + n) % n : first;
            t.step[r] = s.step[d];
        }
    }
    if (t.input < 0) {
        // Every element is the constant: only the output side remains.
        t.rank = 0;
        t.in_offset = 0;
        for (int d = 0; d < s.rank; ++d) {
            if (s.shape[d] == 1) continue;
            int r = t.rank++;
            t.shape[r] = s.shape[d];
            t.out_strides[r] = s.out_strides[d];
            t.in_strides[r] = 0;
            t.in_size[r] = s.shape[d];
            t.mode[r] = CoordMode::Direct;
            t.start[r] = 0;
            t.step[r] = 1;
        }
    }
    // Merge neighbours that are Direct and contiguous on both sides; a merged Direct dim reads
    // its whole run (in_size = its size).
    bool pinned[TGL_MAX_RANK];
    int from[TGL_MAX_RANK];
    for (int d = 0; d < t.rank; ++d) pinned[d] = t.mode[d] != CoordMode::Direct;
    int64_t* strides[2] = {t.out_strides, t.in_strides};
    const int r = merge_dims_in_place(t.rank, t.shape, 2, strides, pinned, from);
    for (int k = 0; k < r; ++k) {  // from[k] >= k: nothing is read after it is overwritten
        const int d = from[k];
        t.mode[k] = t.mode[d];
        t.start[k] = t.start[d];
        t.step[k] = t.step[d];
        t.in_size[k] = t.mode[k] == CoordMode::Direct ? t.shape[k] : t.in_size[d];
    }
    t.rank = r;
    plan.steps.push_back(t);
}

// A linear step: `count` elements from row-major index in_lin of x to out_lin of y.
void add_linear_step(LayoutPlan& plan, int input, const ViewDesc& x, int64_t in_lin, int output, const ViewDesc& y,
                     int64_t out_lin, int64_t count) {
    if (count == 0) return;
    CopyStep s;
    s.input = input;
    s.output = output;
    s.count = count;
    s.out_offset = y.offset;
    s.in_offset = x.offset;
    std::copy(y.shape, y.shape + y.rank, s.shape);
    std::copy(y.strides, y.strides + y.rank, s.out_strides);
    std::copy(x.shape, x.shape + x.rank, s.in_shape);
    std::copy(x.strides, x.strides + x.rank, s.in_lin_strides);
    // Size-1 dims dropped and contiguous neighbours merged: the row-major order is unchanged.
    int64_t* out_strides = s.out_strides;
    int64_t* in_strides = s.in_lin_strides;
    s.rank = merge_dims_in_place(y.rank, s.shape, 1, &out_strides);
    s.in_rank = merge_dims_in_place(x.rank, s.in_shape, 1, &in_strides);
    if (s.rank <= 1 && s.in_rank <= 1) {
        // Both sides are a single strided run: a rank-1 map step.
        int64_t os = s.rank ? s.out_strides[0] : 0, is = s.in_rank ? s.in_lin_strides[0] : 0;
        CopyStep m;
        m.input = input;
        m.output = output;
        m.count = count;
        m.rank = count > 1 ? 1 : 0;
        m.shape[0] = count;
        m.out_strides[0] = os;
        m.out_offset = y.offset + out_lin * os;
        m.in_strides[0] = is;
        m.in_offset = x.offset + in_lin * is;
        m.step[0] = 1;
        m.in_size[0] = count;
        plan.steps.push_back(m);
        return;
    }
    s.linear = true;
    s.in_lin = in_lin;
    s.out_lin = out_lin;
    plan.steps.push_back(s);
}

// The op's params struct, which has no default.
template <class P>
P read_required(const OpInfo& info, const void* params, const char* what) {
    if (!params)
        fail(TGL_ERROR_NULL_POINTER, "params is NULL but op '%s' needs its %s (there is no default)", info.name, what);
    return read_params(info, params, P{});
}

void require_same_shape_as_x(const OpCall& call) {
    const TensorArg& x = call.inputs[0];
    require_shape(*call.info, call.outputs[0], "outputs[0] (y)", x.rank, x.shape, "inputs[0] (x)");
}

// Every input has the shape of inputs[0], except along `axis` (-1: no exception).
void require_same_shapes(const OpCall& call, int axis, bool output) {
    const std::vector<TensorArg>& ts = output ? call.outputs : call.inputs;
    const TensorArg& ref = ts[0];
    for (size_t i = 1; i < ts.size(); ++i) {
        const TensorArg& t = ts[i];
        bool ok = t.rank == ref.rank;
        for (int d = 0; ok && d < t.rank; ++d) ok = d == axis || t.shape[d] == ref.shape[d];
        if (!ok)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s has shape %s but %s has shape %s; they must agree%s",
                 call.info->name, operand_label(*call.info, output, uint32_t(i)).c_str(),
                 shape_string(t.rank, t.shape).c_str(), operand_label(*call.info, output, 0).c_str(),
                 shape_string(ref.rank, ref.shape).c_str(),
                 axis >= 0 ? format(" in every dim except axis %d", axis).c_str() : "");
    }
}

int32_t read_axis(const OpInfo& info, const void* params) {
    const tgl_axis_params p = read_params(info, params, tgl_axis_params{sizeof(tgl_axis_params), 0, 0});
    require_no_reduction(info, p);
    return p.axis;
}

// Normalised, non-repeating axes[0..n) of a tensor of `rank`.
std::vector<int> read_axes(uint32_t n, const int32_t* axes, int rank, bool allow_repeat) {
    if (n > TGL_MAX_RANK)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->n_axes is %u; at most %d axes can be given", n, TGL_MAX_RANK);
    std::vector<int> out;
    for (uint32_t i = 0; i < n; ++i) {
        int a = normalize_axis(axes[i], rank, format("params->axes[%u]", i).c_str());
        if (!allow_repeat && std::find(out.begin(), out.end(), a) != out.end())
            fail(TGL_ERROR_AXIS_OUT_OF_RANGE, "params->axes[%u] = %d repeats axis %d", i, axes[i], a);
        out.push_back(a);
    }
    return out;
}

// The x side of a map step over all of x's dims, Direct (contiguous, permute, expand ...).
CopyStep direct_step(const OpCall& call, const int64_t* x_strides) {
    const TensorArg& x = call.inputs[0];
    CopyStep s = map_step(0, 0, view_of(call.outputs[0]), x.offset);
    for (int d = 0; d < s.rank; ++d) set_dim(s, d, x_strides[d], s.shape[d]);
    return s;
}

void plan_permute(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    auto prm = read_required<tgl_permute_params>(info, params, "tgl_permute_params (perm)");
    require_reserved_zero(info, prm.reserved);
    const TensorArg& x = call.inputs[0];
    int perm[TGL_MAX_RANK];
    bool seen[TGL_MAX_RANK] = {};
    int64_t expect[TGL_MAX_RANK], strides[TGL_MAX_RANK];
    for (int d = 0; d < x.rank; ++d) {
        perm[d] = normalize_axis(prm.perm[d], x.rank, format("params->perm[%d]", d).c_str());
        if (seen[perm[d]])
            fail(TGL_ERROR_AXIS_OUT_OF_RANGE, "params->perm[%d] = %d repeats axis %d: perm must be a permutation of 0..%d",
                 d, prm.perm[d], perm[d], x.rank - 1);
        seen[perm[d]] = true;
        expect[d] = x.shape[perm[d]];
        strides[d] = x.strides[perm[d]];
    }
    require_shape(info, call.outputs[0], "outputs[0] (y)", x.rank, expect, "permuting x");
    add_map_step(call.layout(), direct_step(call, strides));
}

void plan_expand(OpCall& call) {
    int64_t strides[TGL_MAX_RANK];
    broadcast_strides(call.inputs[0], "inputs[0] (x)", call.outputs[0], strides);
    add_map_step(call.layout(), direct_step(call, strides));
}

// Python's slice(start, stop, step).indices(n) and the number of elements.
void slice_indices(int64_t n, int64_t& start, int64_t& stop, int64_t step, int64_t& count) {
    auto clampi = [&](int64_t v, bool neg) {
        if (v < 0) {
            v += n;  // no overflow: n >= 0
            if (v < 0) v = neg ? -1 : 0;
        } else if (v >= n) {
            v = neg ? n - 1 : n;
        }
        return v;
    };
    start = clampi(start, step < 0);
    stop = clampi(stop, step < 0);
    __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
    __int128 st = step > 0 ? __int128(step) : -__int128(step);
    count = span <= 0 ? 0 : int64_t((span + st - 1) / st);
}

// y is x with `count` elements along axis: y[.., c, ..] = x[.., start + step * c, ..].
void plan_along_axis(OpCall& call, int axis, int64_t count, int64_t start, int64_t step, const std::string& why) {
    const TensorArg& x = call.inputs[0];
    int64_t expect[TGL_MAX_RANK];
    std::copy(x.shape, x.shape + x.rank, expect);
    expect[axis] = count;
    require_shape(*call.info, call.outputs[0], "outputs[0] (y)", x.rank, expect, why.c_str());
    CopyStep s = direct_step(call, x.strides);
    // A step only matters between two elements: with one element or none it may be anything.
    set_dim(s, axis, x.strides[axis], x.shape[axis], start, count > 1 ? step : 1);
    add_map_step(call.layout(), s);
}

void plan_slice(OpCall& call, const void* params) {
    auto prm = read_required<tgl_slice_params>(*call.info, params, "tgl_slice_params (axis, start, stop, step)");
    const TensorArg& x = call.inputs[0];
    int axis = normalize_axis(prm.axis, x.rank, "params->axis");
    if (prm.step == 0) fail(TGL_ERROR_INVALID_ARGUMENT, "params->step of op 'slice' must not be 0");
    int64_t start = prm.start, stop = prm.stop, count = 0;
    slice_indices(x.shape[axis], start, stop, prm.step, count);
    plan_along_axis(call, axis, count, start, prm.step,
                    format("slicing axis %d of x %s by start %lld, stop %lld, step %lld", axis,
                           shape_string(x.rank, x.shape).c_str(), (long long)prm.start, (long long)prm.stop,
                           (long long)prm.step));
}

void plan_narrow(OpCall& call, const void* params) {
    auto prm = read_required<tgl_narrow_params>(*call.info, params, "tgl_narrow_params (axis, start, length)");
    const TensorArg& x = call.inputs[0];
    int axis = normalize_axis(prm.axis, x.rank, "params->axis");
    const int64_t n = x.shape[axis];
    if (prm.start < -n || prm.start > n)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->start = %lld of op 'narrow' is out of range for axis %d of size %lld (valid: %lld..%lld)",
             (long long)prm.start, axis, (long long)n, (long long)-n, (long long)n);
    int64_t start = prm.start < 0 ? prm.start + n : prm.start;
    if (prm.length < 0 || prm.length > n - start)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->length = %lld of op 'narrow' must be in 0..%lld (axis %d of size %lld from start %lld)",
             (long long)prm.length, (long long)(n - start), axis, (long long)n, (long long)start);
    plan_along_axis(call, axis, prm.length, start, 1, "narrowing x");
}

void plan_flip(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    auto prm = read_required<tgl_flip_params>(info, params, "tgl_flip_params (axes)");
    const TensorArg& x = call.inputs[0];
    std::vector<int> axes = read_axes(prm.n_axes, prm.axes, x.rank, false);
    require_same_shape_as_x(call);
    CopyStep s = direct_step(call, x.strides);
    for (int a : axes) set_dim(s, a, x.strides[a], x.shape[a], x.shape[a] - 1, -1);
    add_map_step(call.layout(), s);
}

void plan_roll(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    auto prm = read_required<tgl_roll_params>(info, params, "tgl_roll_params (axes, shifts)");
    const TensorArg& x = call.inputs[0];
    require_same_shape_as_x(call);
    if (prm.n_axes == 0) {
        // The flattened tensor: y_lin[(i + shift) mod N] = x_lin[i], as two runs.
        const int64_t N = x.numel;
        int64_t s = N ? ((prm.shifts[0] % N) + N) % N : 0;
        ViewDesc xv = view_of(x), yv = view_of(call.outputs[0]);
        add_linear_step(call.layout(), 0, xv, N - s, 0, yv, 0, s);
        add_linear_step(call.layout(), 0, xv, 0, 0, yv, s, N - s);
        return;
    }
    std::vector<int> axes = read_axes(prm.n_axes, prm.axes, x.rank, true);
    int64_t shift[TGL_MAX_RANK] = {};
    for (size_t i = 0; i < axes.size(); ++i) {
        int64_t n = x.shape[axes[i]];
        if (n > 0) shift[axes[i]] = (shift[axes[i]] + prm.shifts[i] % n + n) % n;  // repeated axes add up
    }
    CopyStep s = direct_step(call, x.strides);
    for (int d = 0; d < x.rank; ++d)
        if (shift[d]) set_dim(s, d, x.strides[d], x.shape[d], x.shape[d] - shift[d], 1, CoordMode::Wrap);
    add_map_step(call.layout(), s);
}

void plan_tile(OpCall& call) {
    const OpInfo& info = *call.info;
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    if (y.rank < x.rank)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op 'tile': output y of shape %s has fewer dims than x of shape %s",
             shape_string(y.rank, y.shape).c_str(), shape_string(x.rank, x.shape).c_str());
    CopyStep s = map_step(0, 0, view_of(y), x.offset);
    const int lead = y.rank - x.rank;
    for (int d = 0; d < y.rank; ++d) {
        if (d < lead) {
            set_dim(s, d, 0, 1, 0, 0);  // a repetition of all of x
            continue;
        }
        const int64_t n = x.shape[d - lead], m = y.shape[d];
        if (n == 0 ? m != 0 : m % n != 0)
            fail(TGL_ERROR_SHAPE_MISMATCH,
                 "op '%s': dim %d of output y %s is %lld, not a multiple of x's size %lld there (x %s, right-aligned)",
                 info.name, d, shape_string(y.rank, y.shape).c_str(), (long long)m, (long long)n,
                 shape_string(x.rank, x.shape).c_str());
        if (n == 1) set_dim(s, d, 0, 1, 0, 0);  // one element, repeated
        else set_dim(s, d, x.strides[d - lead], n, 0, 1, m == n ? CoordMode::Direct : CoordMode::Wrap);
    }
    add_map_step(call.layout(), s);
}

void plan_pad(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    auto prm = read_required<tgl_pad_params>(info, params, "tgl_pad_params (mode, value, before, after)");
    if (prm.mode > TGL_PAD_REPLICATE)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->mode of op 'pad' must be TGL_PAD_CONSTANT (0), TGL_PAD_REFLECT (1) or TGL_PAD_REPLICATE (2), got %u",
             prm.mode);
    const TensorArg& x = call.inputs[0];
    int64_t expect[TGL_MAX_RANK];
    for (int d = 0; d < x.rank; ++d) {
        const int64_t n = x.shape[d], b = prm.before[d], a = prm.after[d];
        __int128 total = __int128(b) + n + a;
        if (total < 0 || total > INT64_MAX)
            fail(TGL_ERROR_INVALID_ARGUMENT, "op 'pad': params->before[%d] = %lld and params->after[%d] = %lld give dim %d of size %lld a size of %lld",
                 d, (long long)b, d, (long long)a, d, (long long)n, (long long)std::max<__int128>(total, INT64_MIN));
        if (prm.mode == TGL_PAD_REFLECT && ((b > 0 && b >= n) || (a > 0 && a >= n)))
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "op 'pad' in reflect mode needs pads smaller than the dim: params->before[%d] = %lld, params->after[%d] = %lld but dim %d of x has size %lld",
                 d, (long long)b, d, (long long)a, d, (long long)n);
        if (prm.mode == TGL_PAD_REPLICATE && n == 0 && (b > 0 || a > 0))
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "op 'pad' in replicate mode cannot pad dim %d of x: it is empty (params->before[%d] = %lld, params->after[%d] = %lld)",
                 d, d, (long long)b, d, (long long)a);
        expect[d] = int64_t(total);
    }
    require_shape(info, call.outputs[0], "outputs[0] (y)", x.rank, expect, "padding x");
    const CoordMode mode = prm.mode == TGL_PAD_CONSTANT  ? CoordMode::Constant
                           : prm.mode == TGL_PAD_REFLECT ? CoordMode::Reflect
                                                         : CoordMode::Clamp;
    CopyStep s = map_step(0, 0, view_of(call.outputs[0]), x.offset);
    for (int d = 0; d < x.rank; ++d) set_dim(s, d, x.strides[d], x.shape[d], -prm.before[d], 1, mode);
    call.layout().value_bits = double_to_dtype_bits(prm.value, call.outputs[0].dtype);
    add_map_step(call.layout(), s);
}

void plan_concat(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const int32_t axis_param = read_axis(info, params);
    const TensorArg& x0 = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    if (x0.rank == 0) fail(TGL_ERROR_SHAPE_MISMATCH, "op 'concat' needs inputs of rank >= 1; inputs[0] (x0) is a scalar");
    const int axis = normalize_axis(axis_param, x0.rank, "params->axis", "x0");
    require_same_shapes(call, axis, false);
    int64_t expect[TGL_MAX_RANK];
    std::copy(x0.shape, x0.shape + x0.rank, expect);
    expect[axis] = 0;
    for (const TensorArg& x : call.inputs) expect[axis] += x.shape[axis];
    require_shape(info, y, "outputs[0] (y)", x0.rank, expect, format("concatenating the inputs along axis %d", axis).c_str());
    int64_t pos = 0;
    for (size_t i = 0; i < call.inputs.size(); ++i) {
        const TensorArg& x = call.inputs[i];
        ViewDesc part = view_of(y);
        part.offset += pos * y.strides[axis];
        part.shape[axis] = x.shape[axis];
        pos += x.shape[axis];
        CopyStep s = map_step(int(i), 0, part, x.offset);
        for (int d = 0; d < x.rank; ++d) set_dim(s, d, x.strides[d], x.shape[d]);
        add_map_step(call.layout(), s);
    }
}

void plan_split(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const int32_t axis_param = read_axis(info, params);
    const TensorArg& x = call.inputs[0];
    if (x.rank == 0) fail(TGL_ERROR_SHAPE_MISMATCH, "op 'split' needs an input of rank >= 1; inputs[0] (x) is a scalar");
    const int axis = normalize_axis(axis_param, x.rank, "params->axis");
    int64_t total = 0;
    for (size_t k = 0; k < call.outputs.size(); ++k) {
        const TensorArg& y = call.outputs[k];
        bool ok = y.rank == x.rank;
        for (int d = 0; ok && d < x.rank; ++d) ok = d == axis || y.shape[d] == x.shape[d];
        if (!ok)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op 'split': %s has shape %s but x has shape %s; they must agree in every dim except axis %d",
                 operand_label(info, true, uint32_t(k)).c_str(), shape_string(y.rank, y.shape).c_str(),
                 shape_string(x.rank, x.shape).c_str(), axis);
        total += y.shape[axis];
    }
    if (total != x.shape[axis])
        fail(TGL_ERROR_SHAPE_MISMATCH, "op 'split': the outputs' sizes along axis %d add up to %lld but x %s has %lld there",
             axis, (long long)total, shape_string(x.rank, x.shape).c_str(), (long long)x.shape[axis]);
    int64_t pos = 0;
    for (size_t k = 0; k < call.outputs.size(); ++k) {
        CopyStep s = map_step(0, int(k), view_of(call.outputs[k]), x.offset);
        for (int d = 0; d < x.rank; ++d) set_dim(s, d, x.strides[d], x.shape[d], d == axis ? pos : 0);
        pos += call.outputs[k].shape[axis];
        add_map_step(call.layout(), s);
    }
}

void plan_stack(OpCall& call, const void* params) {
    const TensorArg& x0 = call.inputs[0];
    const int r = x0.rank;
    const int32_t axis_param = read_axis(*call.info, params);
    if (axis_param < -(r + 1) || axis_param > r)
        fail(TGL_ERROR_AXIS_OUT_OF_RANGE, "params->axis = %d is out of range for stacking inputs of rank %d (valid: %d..%d)",
             axis_param, r, -(r + 1), r);
    if (r + 1 > TGL_MAX_RANK)
        fail(TGL_ERROR_RANK_TOO_LARGE, "op 'stack' of inputs of rank %d gives rank %d; the limit is %d", r, r + 1, TGL_MAX_RANK);
    const int axis = axis_param < 0 ? axis_param + r + 1 : axis_param;
    require_same_shapes(call, -1, false);
    int64_t expect[TGL_MAX_RANK];
    for (int d = 0, k = 0; d <= r; ++d) expect[d] = d == axis ? int64_t(call.inputs.size()) : x0.shape[k++];
    require_shape(*call.info, call.outputs[0], "outputs[0] (y)", r + 1, expect, format("stacking the inputs at axis %d", axis).c_str());
    for (size_t i = 0; i < call.inputs.size(); ++i) {
        const TensorArg& x = call.inputs[i];
        const TensorArg& y = call.outputs[0];
        ViewDesc part;  // y with the new axis fixed at i
        part.rank = r;
        part.offset = y.offset + int64_t(i) * y.strides[axis];
        for (int d = 0, k = 0; d <= r; ++d) {
            if (d == axis) continue;
            part.shape[k] = y.shape[d];
            part.strides[k++] = y.strides[d];
        }
        CopyStep s = map_step(int(i), 0, part, x.offset);
        for (int d = 0; d < r; ++d) set_dim(s, d, x.strides[d], x.shape[d]);
        add_map_step(call.layout(), s);
    }
}

void plan_reshape(OpCall& call) {
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    if (x.numel != y.numel)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op 'reshape': output y has shape %s (%lld elements) but x has shape %s (%lld elements)",
             shape_string(y.rank, y.shape).c_str(), (long long)y.numel, shape_string(x.rank, x.shape).c_str(),
             (long long)x.numel);
    add_linear_step(call.layout(), 0, view_of(x), 0, 0, view_of(y), 0, y.numel);
}

}  // namespace

void plan_layout(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    call.plan.emplace<LayoutPlan>();
    if (info.op == TGL_OP_CONTIGUOUS || info.op == TGL_OP_TILE || info.op == TGL_OP_RESHAPE || info.op == TGL_OP_EXPAND)
        require_reserved_zero(info, read_params(info, params, tgl_unary_params{sizeof(tgl_unary_params), 0}).reserved);
    switch (info.op) {
    case TGL_OP_CONTIGUOUS:
        require_same_shape_as_x(call);
        return add_map_step(call.layout(), direct_step(call, call.inputs[0].strides));
    case TGL_OP_CONCAT: return plan_concat(call, params);
    case TGL_OP_PAD: return plan_pad(call, params);
    case TGL_OP_TILE: return plan_tile(call);
    case TGL_OP_ROLL: return plan_roll(call, params);
    case TGL_OP_PERMUTE: return plan_permute(call, params);
    case TGL_OP_RESHAPE: return plan_reshape(call);
    case TGL_OP_SLICE: return plan_slice(call, params);
    case TGL_OP_NARROW: return plan_narrow(call, params);
    case TGL_OP_SPLIT: return plan_split(call, params);
    case TGL_OP_STACK: return plan_stack(call, params);
    case TGL_OP_EXPAND: return plan_expand(call);
    case TGL_OP_FLIP: return plan_flip(call, params);
    default: fail(TGL_ERROR_INTERNAL, "op '%s' is not of the layout family", info.name);
    }
}

void register_layout_rules(std::vector<FamilyRules>& families) { families.push_back({OpFamily::Layout, plan_layout}); }

}  // namespace tgl
