// Host side of every op: turns a validated OpCall (its index plan) into shader variants, SSBO
// windows, uniforms and dispatches that stay within the device's limits. Nothing is computed on
// the CPU.
#include "gles_device.h"
#include "dispatch_util.h"
#include "reduce_kernels.h"

#include "status.h"
#include "validate_util.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace tgl {
namespace gles {
namespace {

// The OP_<NAME> define of an elementwise op: "OP_" and the op's name in upper case (gelu picks
// OP_GELU_ERF or OP_GELU_TANH), so that a new float op needs only its #elif in
// glsl/elementwise_ops.glsl.
std::string elementwise_define(const OpCall& call) {
    if (call.info->op == TGL_OP_GELU)
        return call.gelu_approximate == TGL_GELU_TANH ? "OP_GELU_TANH" : "OP_GELU_ERF";
    std::string d = "OP_";
    for (const char* p = call.info->name; *p; ++p) d += char(std::toupper(static_cast<unsigned char>(*p)));
    return d;
}

// Ops of glsl/dtype_ops.glsl: element bits to element bits, any dtype.
bool is_bits_op(tgl_op op) {
    switch (op) {
    case TGL_OP_CAST: case TGL_OP_LOGICAL_NOT:
    case TGL_OP_LOGICAL_AND: case TGL_OP_LOGICAL_OR: case TGL_OP_LOGICAL_XOR:
    case TGL_OP_EQ: case TGL_OP_NE: case TGL_OP_LT: case TGL_OP_LE: case TGL_OP_GT: case TGL_OP_GE:
    case TGL_OP_WHERE:
        return true;
    default:
        return false;
    }
}

UniformValue uniform_floats(const char* name, const float* values, size_t n) {
    UniformValue u{name, UniformValue::Float, std::vector<uint32_t>(n)};
    std::memcpy(u.bits.data(), values, n * 4);
    return u;
}

}  // namespace

void run_elementwise(GlesDevice& dev, const OpCall& call) {
    const ElementwisePlan& p = call.elementwise;
    const int n_in = int(call.inputs.size());
    if (n_in + 1 > dev.limits().max_compute_ssbo_blocks)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s' needs %d shader storage blocks; this device allows %d per compute shader",
             call.info->name, n_in + 1, dev.limits().max_compute_ssbo_blocks);
    const TensorArg* args[4] = {&call.outputs[0], &call.inputs[0], n_in >= 2 ? &call.inputs[1] : nullptr,
                                n_in >= 3 ? &call.inputs[2] : nullptr};
    char labels[4][96];  // for messages only: built without formatting or allocation
    operand_label_into(labels[0], sizeof labels[0], *call.info, true, 0);
    for (int k = 0; k < n_in; ++k) operand_label_into(labels[k + 1], sizeof labels[k + 1], *call.info, false, uint32_t(k));
    uint32_t numel = count_u32(p.numel, "outputs[0] (y)");
    int wg = dev.workgroup_size();
    const std::string op = elementwise_define(call);
    const bool bits_op = is_bits_op(call.info->op);
    bool all_f32 = true;
    for (int k = 0; k <= n_in; ++k) all_f32 = all_f32 && args[k]->dtype == TGL_DTYPE_F32;

    std::vector<Binding> bindings;
    std::vector<int32_t> offsets(4, 0);
    for (int k = 0; k <= n_in; ++k) bindings.push_back(dev.window(*args[k], labels[k], &offsets[k]));
    std::vector<int32_t> shape, strides[4];
    for (int d = 0; d < p.rank; ++d) {
        shape.push_back(to_i32(p.shape[d], "a dimension"));
        for (int k = 0; k <= n_in; ++k) strides[k].push_back(to_i32(p.strides[k][d], "a stride"));
    }
    // Every variant: the op, its kind, the operands' dtypes (unused ones f32).
    Defines common = {{op, ""}, {"N_IN", str(n_in)}};
    if (bits_op) common.emplace_back("BITS_OP", "");
    static const char* dtype_names[4] = {"Y_DTYPE", "A_DTYPE", "B_DTYPE", "C_DTYPE"};
    for (int k = 0; k < 4; ++k)
        common.emplace_back(dtype_names[k], str(k <= n_in ? long(args[k]->dtype) : long(TGL_DTYPE_F32)));
    const UniformValue scalars = uniform_floats("u_scalars", call.scalars, 2);
    std::vector<Dispatch> dispatches;

    // Scalar kernel over `count` elements starting at `offs` (general N-d, or CONTIG).
    auto scalar = [&](uint32_t count, const std::vector<int32_t>& offs) {
        bool contig = p.rank == 1;
        for (int k = 0; k <= n_in; ++k) contig = contig && p.strides[k][0] == 1;
        Defines defines = common;
        defines.emplace_back("RANK", str(p.rank));
        defines.emplace_back("WG_SIZE", str(wg));
        if (contig) defines.emplace_back("CONTIG", "");
        Dispatch base;
        base.program = dev.program("elementwise.comp", defines);
        base.bindings = bindings;
        base.uniforms.push_back(uniform_uint("u_numel", {count}));
        base.uniforms.push_back(uniform_int("u_offset", offs));
        base.uniforms.push_back(scalars);
        if (!contig && p.rank > 0) {
            static const char* stride_names[4] = {"u_stride_y", "u_stride_a", "u_stride_b", "u_stride_c"};
            base.uniforms.push_back(uniform_int("u_shape", shape));
            for (int k = 0; k <= n_in; ++k) base.uniforms.push_back(uniform_int(stride_names[k], strides[k]));
        }
        add_chunks(dev, base, ceil_div(count, uint64_t(wg)), dispatches);
    };

    // f32 float ops whose output is contiguous and 16-byte aligned, of rank 1 or of rank 2 with rows
    // of a multiple of 4: the vec4 kernel, each input read whole, as a scalar, as a repeated row or
    // as one value per row (elementwise.comp's kinds); a rank-1 ragged tail by the scalar kernel.
    enum Kind { kFull = 0, kScalar = 1, kRow = 2, kCol = 3 };
    const bool rank2 = p.rank == 2 && p.shape[1] % 4 == 0 && p.strides[0][1] == 1 && p.strides[0][0] == p.shape[1];
    bool vec4 = !bits_op && all_f32 && n_in <= 2 && (p.rank == 1 || rank2) && numel >= 4 &&
                p.strides[0][p.rank - 1] == 1 && offsets[0] % 4 == 0;
    int kinds[3] = {kFull, kFull, kFull};
    int32_t col_stride[2] = {0, 0};
    for (int k = 1; k <= n_in && vec4; ++k) {
        const int64_t* st = p.strides[k];
        const bool aligned = offsets[k] % 4 == 0;
        if (p.rank == 1) {
            kinds[k] = st[0] == 0 ? kScalar : kFull;
            vec4 = st[0] == 0 || (st[0] == 1 && aligned);
        } else if (st[0] == 0 && st[1] == 0) {
            kinds[k] = kScalar;
        } else if (st[1] == 0) {
            kinds[k] = kCol;
            col_stride[k - 1] = int32_t(st[0]);  // fits: strides[k] were checked by to_i32 above
        } else {
            kinds[k] = st[0] == 0 ? kRow : kFull;
            vec4 = st[1] == 1 && aligned && (st[0] == 0 || st[0] == p.shape[1]);
        }
    }
    if (vec4) {
        const StreamShape shape = dev.stream_shape();
        uint32_t quads = numel / 4;
        Defines defines = common;
        defines.emplace_back("RANK", str(p.rank));
        defines.emplace_back("VEC4", "");
        defines.emplace_back("WG_SIZE", str(shape.wg));
        defines.emplace_back("PER_INV", str(shape.per_invocation));
        defines.emplace_back("A_KIND", str(kinds[1]));
        if (n_in == 2) defines.emplace_back("B_KIND", str(kinds[2]));
        Dispatch base;
        base.program = dev.program("elementwise.comp", defines);
        base.bindings = bindings;
        std::vector<int32_t> quad_offsets(4, 0);
        for (int k = 0; k <= n_in; ++k)
            quad_offsets[k] = kinds[k] == kFull || kinds[k] == kRow ? offsets[k] / 4 : offsets[k];
        base.uniforms.push_back(uniform_uint("u_numel", {quads}));
        base.uniforms.push_back(uniform_int("u_offset", quad_offsets));
        base.uniforms.push_back(uniform_uint("u_row_quads", {rank2 ? uint32_t(p.shape[1] / 4) : 1u}));
        base.uniforms.push_back(uniform_int("u_col_stride", {col_stride[0], col_stride[1]}));
        base.uniforms.push_back(scalars);
        add_chunks(dev, base, ceil_div(quads, uint64_t(shape.wg) * shape.per_invocation), dispatches);
        if (p.rank == 1 && numel % 4) {
            std::vector<int32_t> tail = offsets;
            for (int k = 0; k <= n_in; ++k) tail[k] += int32_t(4 * quads) * int32_t(p.strides[k][0]);
            scalar(numel % 4, tail);
        }
    } else {
        scalar(numel, offsets);
    }
    dev.submit(call.info->name, std::move(dispatches));
}

namespace {

struct ReduceDim {
    int64_t n, xs, ys;
};

// Drops size-1 dims and merges neighbours that are contiguous in x (and in y when use_y).
std::vector<ReduceDim> collapse_dims(int rank, const int64_t* shape, const int64_t* xs, const int64_t* ys, bool use_y) {
    std::vector<ReduceDim> out;
    for (int d = 0; d < rank; ++d) {
        if (shape[d] == 1) continue;
        ReduceDim cur{shape[d], xs[d], use_y ? ys[d] : 0};
        if (!out.empty() && out.back().xs == cur.xs * cur.n && out.back().ys == cur.ys * cur.n) {
            out.back().n *= cur.n;
            out.back().xs = cur.xs;
            out.back().ys = cur.ys;
        } else {
            out.push_back(cur);
        }
    }
    return out;
}

struct ReducePass {
    bool group = false;  // MODE_GROUP, else MODE_THREAD
    bool final_mean = false;
    uint32_t splits = 1, chunk = 0;
    std::vector<ReduceDim> outer, inner;
    int32_t x_offset = 0, y_offset = 0;
    Binding x, y;
    tgl_dtype x_dtype = TGL_DTYPE_F32, y_dtype = TGL_DTYPE_F32;  // f32 or f16; split partials are f32
};

void add_reduce_pass(GlesDevice& dev, const char* reduce_define, const ReducePass& pass, uint32_t out_count,
                     uint32_t reduce_count, float mean_count, std::vector<Dispatch>& out) {
    int wg = dev.workgroup_size();
    Defines defines = {{reduce_define, ""},
                       {pass.group ? "MODE_GROUP" : "MODE_THREAD", ""},
                       {"OUTER_RANK", str(long(pass.outer.size()))},
                       {"INNER_RANK", str(long(pass.inner.size()))},
                       {"X_DTYPE", str(pass.x_dtype)},
                       {"Y_DTYPE", str(pass.y_dtype)},
                       {"WG_SIZE", str(wg)}};
    if (pass.final_mean) defines.emplace_back("FINAL_MEAN", "");
    Dispatch base;
    base.program = dev.program("reduce.comp", defines);
    base.bindings = {pass.y, pass.x};
    base.uniforms.push_back(uniform_uint("u_out_count", {out_count}));
    base.uniforms.push_back(uniform_uint("u_reduce_count", {reduce_count}));
    base.uniforms.push_back(uniform_uint("u_splits", {pass.splits}));
    base.uniforms.push_back(uniform_uint("u_chunk", {pass.chunk}));
    base.uniforms.push_back(uniform_int("u_x_offset", {pass.x_offset}));
    base.uniforms.push_back(uniform_int("u_y_offset", {pass.y_offset}));
    base.uniforms.push_back(uniform_float("u_count", mean_count));
    if (!pass.outer.empty()) {
        std::vector<int32_t> n, xs, ys;
        for (const ReduceDim& d : pass.outer) {
            n.push_back(to_i32(d.n, "a kept dimension of x"));
            xs.push_back(to_i32(d.xs, "a stride of x"));
            ys.push_back(to_i32(d.ys, "a stride of y"));
        }
        base.uniforms.push_back(uniform_int("u_outer_shape", n));
        base.uniforms.push_back(uniform_int("u_outer_x_stride", xs));
        base.uniforms.push_back(uniform_int("u_outer_y_stride", ys));
    }
    if (!pass.inner.empty()) {
        std::vector<int32_t> n, xs;
        for (const ReduceDim& d : pass.inner) {
            n.push_back(to_i32(d.n, "a reduced dimension of x"));
            xs.push_back(to_i32(d.xs, "a stride of x"));
        }
        base.uniforms.push_back(uniform_int("u_inner_shape", n));
        base.uniforms.push_back(uniform_int("u_inner_x_stride", xs));
    }
    uint64_t groups = pass.group ? uint64_t(out_count) * pass.splits : ceil_div(out_count, uint64_t(wg));
    add_chunks(dev, base, groups, out);
}

}  // namespace

void run_reduce(GlesDevice& dev, const OpCall& call) {
    const ReducePlan& p = call.reduce;
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    uint32_t out_count = count_u32(p.out_count, "outputs[0] (y)");
    uint32_t reduce_count = count_u32(p.reduce_count, "the reduced part of inputs[0] (x)");
    const char* reduce_define;
    bool mean = false;
    switch (call.info->op) {
    case TGL_OP_SUM: reduce_define = "REDUCE_SUM"; break;
    case TGL_OP_MEAN: reduce_define = "REDUCE_SUM"; mean = true; break;
    case TGL_OP_MAX: reduce_define = "REDUCE_MAX"; break;
    case TGL_OP_MIN: reduce_define = "REDUCE_MIN"; break;
    case TGL_OP_PROD: reduce_define = "REDUCE_PROD"; break;
    default: fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' has no reduction shader in plugin 'gles'", call.info->name);
    }

    ReducePass first;
    first.outer = collapse_dims(p.outer_rank, p.outer_shape, p.outer_x_strides, p.outer_y_strides, true);
    first.inner = collapse_dims(p.inner_rank, p.inner_shape, p.inner_x_strides, nullptr, false);
    first.y = dev.window(y, "outputs[0] (y)", &first.y_offset);
    first.x_dtype = x.dtype;
    first.y_dtype = y.dtype;
    if (x.numel > 0) {
        first.x = dev.window(x, "inputs[0] (x)", &first.x_offset);
    } else {
        first.x = first.y;  // nothing is read (reduce_count == 0), but every block must be bound
        first.x_offset = 0;
    }

    // Mode: one invocation per output for short reductions, and for many outputs whose reduced
    // elements are not contiguous (neighbouring invocations then read neighbouring addresses);
    // otherwise a workgroup per output, split further when there are too few outputs to fill
    // the device (partials go through a scratch buffer and a second pass).
    int wg = dev.workgroup_size();
    bool inner_unit = !first.inner.empty() && first.inner.back().xs == 1;
    if (reduce_count <= 32) first.group = false;
    else if (out_count >= 4096 && (!inner_unit || reduce_count < uint32_t(wg))) first.group = false;
    else first.group = true;
    first.chunk = reduce_count;
    if (first.group && out_count < 4096) {
        // About 32 elements per invocation, and at most ~2048 workgroups in all.
        uint64_t want = ceil_div(reduce_count, uint64_t(wg) * 32);
        uint64_t cap = std::max<uint64_t>(1, 2048 / out_count);
        uint64_t splits = std::max<uint64_t>(1, std::min(want, cap));
        first.chunk = uint32_t(ceil_div(reduce_count, splits));
        first.splits = uint32_t(ceil_div(reduce_count, first.chunk));
    }
    float mean_count = float(double(reduce_count));
    std::vector<Dispatch> dispatches;
    if (first.splits == 1) {
        first.final_mean = mean;
        add_reduce_pass(dev, reduce_define, first, out_count, reduce_count, mean_count, dispatches);
    } else {
        uint64_t partials = uint64_t(out_count) * first.splits;
        BufferRef scratch = dev.scratch(partials * 4);
        Binding sb;
        sb.keep = scratch;
        sb.name = static_cast<GlesBuffer&>(*scratch).name();
        sb.offset = 0;
        sb.size = int64_t(partials * 4);
        ReducePass second;
        second.outer = first.outer;
        int64_t stride = first.splits;  // partial (o, split) sits at o * splits + split, o row-major
        for (size_t d = second.outer.size(); d-- > 0;) {
            second.outer[d].xs = stride;
            stride *= second.outer[d].n;
        }
        second.inner = {ReduceDim{first.splits, 1, 0}};
        second.group = first.splits > 32;
        second.chunk = first.splits;
        second.final_mean = mean;
        second.x = sb;
        second.y = first.y;
        second.y_offset = first.y_offset;
        second.x_dtype = TGL_DTYPE_F32;
        second.y_dtype = first.y_dtype;
        first.y = sb;
        first.y_offset = 0;
        first.y_dtype = TGL_DTYPE_F32;
        add_reduce_pass(dev, reduce_define, first, out_count, reduce_count, mean_count, dispatches);
        add_reduce_pass(dev, reduce_define, second, out_count, first.splits, mean_count, dispatches);
    }
    dev.submit(call.info->name, std::move(dispatches));
}

namespace {

// Copies or fills (src null: with the 16-byte pattern `quad`) bytes, a multiple of 16, between
// 16-byte aligned offsets with buffer_bytes.comp.
void run_aligned_bytes(GlesDevice& dev, const BufferRef* src, uint64_t src_offset, const BufferRef& dst,
                       uint64_t dst_offset, uint64_t bytes, const std::vector<uint32_t>& quad) {
    const StreamShape shape = dev.stream_shape();
    Defines defines = {{"WG_SIZE", str(shape.wg)}, {"PER_INV", str(shape.per_invocation)}};
    if (!src) defines.emplace_back("FILL", "");
    Dispatch base;
    base.program = dev.program("buffer_bytes.comp", defines);
    if (!src) base.uniforms.push_back(uniform_uint("u_pattern", quad));
    const int64_t align = dev.window_alignment();  // a multiple of 16
    // Each window starts at a multiple of the binding alignment below its range, so the range may
    // reach at most max_window_bytes - align into it.
    const int64_t chunk = (dev.max_window_bytes() - align) & ~int64_t(15);
    auto window = [&](const BufferRef& buf, int64_t pos, int64_t len, uint32_t* first) {
        Binding b;
        b.keep = buf;
        b.name = static_cast<GlesBuffer&>(*buf).name();
        b.offset = pos - pos % align;
        b.size = pos + len - b.offset;
        *first = uint32_t((pos - b.offset) / 16);
        return b;
    };
    std::vector<Dispatch> dispatches;
    for (int64_t done = 0; done < int64_t(bytes);) {
        const int64_t len = std::min(int64_t(bytes) - done, chunk);
        Dispatch d = base;
        uint32_t dst_first = 0, src_first = 0;
        d.bindings.push_back(window(dst, int64_t(dst_offset) + done, len, &dst_first));
        if (src) {
            d.bindings.push_back(window(*src, int64_t(src_offset) + done, len, &src_first));
            d.uniforms.push_back(uniform_uint("u_src_first", {src_first}));
        }
        const uint32_t count = uint32_t(len / 16);
        d.uniforms.push_back(uniform_uint("u_count", {count}));
        d.uniforms.push_back(uniform_uint("u_dst_first", {dst_first}));
        add_chunks(dev, d, ceil_div(uint64_t(count), uint64_t(shape.wg) * shape.per_invocation), dispatches);
        done += len;
    }
    dev.submit(src ? "buffer_copy" : "buffer_fill", std::move(dispatches));
}

// fill.comp over [offset, offset + bytes): one word per invocation, partial words merged.
void run_fill_words(GlesDevice& dev, const BufferRef& dst, uint64_t offset, uint64_t bytes,
                    const std::vector<uint32_t>& quad) {
    int wg = dev.workgroup_size();
    Dispatch base;
    base.program = dev.program("fill.comp", {{"WG_SIZE", str(wg)}});
    base.uniforms.push_back(uniform_uint("u_pattern", quad));
    GLuint name = static_cast<GlesBuffer&>(*dst).name();
    int64_t align = dev.window_alignment();
    int64_t max_window = dev.max_window_bytes() - align;  // leaves room for the alignment of the start
    std::vector<Dispatch> dispatches;
    int64_t pos = int64_t(offset), end = int64_t(offset + bytes);
    while (pos < end) {
        int64_t start = pos - pos % align;
        int64_t stop = std::min(end, start + max_window);
        int64_t window_end = (stop + 3) & ~int64_t(3);  // the GL store is padded to whole words
        Dispatch d = base;
        Binding b;
        b.keep = dst;
        b.name = name;
        b.offset = start;
        b.size = window_end - start;
        d.bindings.push_back(b);
        uint32_t lo = uint32_t(pos - start), hi = uint32_t(stop - start);
        uint32_t first = lo / 4, count = (hi + 3) / 4 - first;
        d.uniforms.push_back(uniform_uint("u_first_word", {first}));
        d.uniforms.push_back(uniform_uint("u_word_count", {count}));
        d.uniforms.push_back(uniform_uint("u_lo", {lo}));
        d.uniforms.push_back(uniform_uint("u_hi", {hi}));
        d.uniforms.push_back(uniform_uint("u_phase", {uint32_t((start / 4) % 4)}));
        add_chunks(dev, d, ceil_div(count, uint64_t(wg)), dispatches);
        pos = stop;
    }
    dev.submit("buffer_fill", std::move(dispatches));
}

}  // namespace

void run_fill(GlesDevice& dev, const BufferRef& dst, uint64_t offset, uint64_t bytes, const void* pattern,
              uint32_t pattern_size) {
    // The pattern replicated to 16 bytes: byte j of the fill at absolute address a is
    // pattern[a % pattern_size] = rep[a % 16] (offset is a multiple of pattern_size).
    uint8_t rep[16];
    for (int i = 0; i < 16; ++i) rep[i] = static_cast<const uint8_t*>(pattern)[i % pattern_size];
    std::vector<uint32_t> quad(4);
    std::memcpy(quad.data(), rep, 16);  // little-endian host and GPU
    // The 16-byte aligned middle by buffer_bytes.comp, an unaligned head and tail by fill.comp.
    const uint64_t lo = (offset + 15) & ~uint64_t(15), hi = (offset + bytes) & ~uint64_t(15);
    if (hi <= lo) return run_fill_words(dev, dst, offset, bytes, quad);
    if (lo > offset) run_fill_words(dev, dst, offset, lo - offset, quad);
    run_aligned_bytes(dev, nullptr, 0, dst, lo, hi - lo, quad);
    if (offset + bytes > hi) run_fill_words(dev, dst, hi, offset + bytes - hi, quad);
}

void run_buffer_copy(GlesDevice& dev, const BufferRef& src, uint64_t src_offset, const BufferRef& dst,
                     uint64_t dst_offset, uint64_t bytes) {
    run_aligned_bytes(dev, &src, src_offset, dst, dst_offset, bytes, {});
}

}  // namespace gles
}  // namespace tgl
