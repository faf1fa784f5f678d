// Host side of the elementwise families (Unary, Binary, Ternary: elementwise.comp), and the byte
// copies and fills of the device (buffer_bytes.comp, fill.comp): shader variants, SSBO windows,
// uniforms and dispatches that stay within the device's limits. Nothing is computed on the CPU.
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"

#include "status.h"
#include "validate_util.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace tgl {
namespace gles {
namespace {

// The OP_<NAME> define of an elementwise op: "OP_" and the op's name in upper case (gelu picks
// OP_GELU_ERF or OP_GELU_TANH).
std::string elementwise_define(const OpCall& call) {
    if (call.info->op == TGL_OP_GELU)
        return call.elementwise().gelu_approximate == TGL_GELU_TANH ? "OP_GELU_TANH" : "OP_GELU_ERF";
    std::string d = "OP_";
    for (const char* p = call.info->name; *p; ++p) d += char(std::toupper(static_cast<unsigned char>(*p)));
    return d;
}

}  // namespace

std::string float_op_function(const OpCall& call) {
    const std::string define = elementwise_define(call);  // (held: the loop walks its characters)
    std::string f = "tgl_op_";
    for (size_t i = 3; i < define.size(); ++i) f += char(std::tolower(static_cast<unsigned char>(define[i])));
    return f;
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

namespace {

UniformValue uniform_floats(const char* name, const float* values, size_t n) {
    UniformValue u{name, UniformValue::Float, std::vector<uint32_t>(n)};
    std::memcpy(u.bits.data(), values, n * 4);
    return u;
}

// A dispatch of `blocks` element blocks: one workgroup each, or at most `grid` workgroups striding
// over them (the GRID_STRIDE kernels of elementwise.comp and buffer_bytes.comp; grid 0: none).
void add_block_dispatches(GlesDevice& dev, Dispatch base, uint64_t blocks, int grid, std::vector<Dispatch>& out) {
    uint64_t groups = blocks;
    if (grid > 0) {
        groups = std::min<uint64_t>(blocks, uint64_t(grid));
        base.uniforms.push_back(uniform_uint("u_blocks", {uint32_t(blocks)}));
        base.uniforms.push_back(uniform_uint("u_group_count", {uint32_t(groups)}));
    }
    add_chunks(dev, base, groups, out);
}

}  // namespace

void run_add_n(GlesDevice& dev, const OpCall& call);

void run_elementwise(GlesDevice& dev, const OpCall& call) {
    if (call.info->op == TGL_OP_ADD_N) return run_add_n(dev, call);
    const ElementwisePlan& p = call.elementwise();
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
    // Integer arithmetic (int_ops.glsl): y of i32, i8, u8 or i64, not a bits op.
    const tgl_dtype yt = args[0]->dtype;
    const bool int_op = !bits_op && (yt == TGL_DTYPE_I32 || yt == TGL_DTYPE_I8 || yt == TGL_DTYPE_U8 || yt == TGL_DTYPE_I64);
    if (int_op) common.emplace_back("INT_OP", "");
    if (!bits_op && !int_op) common.emplace_back("OP_FN", float_op_function(call));  // elementwise_ops.glsl
    bool wide = false;  // an i64 operand (cast, i64 arithmetic, compare): elements as uvec2 (elementwise.comp's WIDE)
    for (int k = 0; k <= n_in; ++k) wide = wide || args[k]->dtype == TGL_DTYPE_I64;
    if (wide) common.emplace_back("WIDE", "");
    static const char* dtype_names[4] = {def::kYDtype, def::kADtype, def::kBDtype, def::kCDtype};
    for (int k = 0; k < 4; ++k)
        common.emplace_back(dtype_names[k], str(k <= n_in ? long(args[k]->dtype) : long(TGL_DTYPE_F32)));
    const UniformValue scalars = uniform_floats("u_scalars", call.elementwise().scalars, 2);
    std::vector<Dispatch> dispatches;

    // Scalar kernel over `count` elements starting at `offs` (general N-d, or CONTIG).
    auto scalar = [&](uint32_t count, const std::vector<int32_t>& offs) {
        bool contig = p.rank == 1;
        for (int k = 0; k <= n_in; ++k) contig = contig && p.strides[k][0] == 1;
        Defines defines = common;
        defines.emplace_back("RANK", str(p.rank));
        defines.emplace_back(def::kWorkgroupSize, str(wg));
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
        // Two full-size inputs: the grid-stride kernel with its own workgroup size; the others a
        // grid stride where ug asks for one (tuning.h).
        const bool binary_full = n_in == 2 && kinds[1] == kFull && kinds[2] == kFull;
        const int grid = binary_full ? shape.binary_groups : shape.unary_groups;
        const bool stride = grid > 0;
        const int wg_vec = binary_full && stride ? shape.binary_wg : shape.wg;
        uint32_t quads = numel / 4;
        Defines defines = common;
        defines.emplace_back("RANK", str(p.rank));
        defines.emplace_back("VEC4", "");
        defines.emplace_back(def::kWorkgroupSize, str(wg_vec));
        defines.emplace_back("PER_INV", str(shape.per_invocation));
        defines.emplace_back("A_KIND", str(kinds[1]));
        if (n_in == 2) defines.emplace_back("B_KIND", str(kinds[2]));
        if (stride) defines.emplace_back("GRID_STRIDE", "");
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
        add_block_dispatches(dev, base, ceil_div(quads, uint64_t(wg_vec) * shape.per_invocation), grid, dispatches);
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

// add_n as passes of the binary kernel above (GLES 3.1 promises only 4 storage blocks per
// shader): acc = x0 + x1, acc += x_k, ..., y = acc + x_{n-1}, left to right as the CPU reference.
// acc is y itself for f32 and integers (the same roundings, wraps, as one f32 sum), an f32 scratch
// for f16, whose passes compute in f32 and the last rounds once into y. n = 1 is a copy (cast).
void run_add_n(GlesDevice& dev, const OpCall& call) {
    const ElementwisePlan& p = call.elementwise();
    const int n = int(call.inputs.size());
    const TensorArg& y = call.outputs[0];
    // An operand of a pass: the call's operand k (0 = y) with its merged strides, or acc.
    struct Operand {
        TensorArg arg;
        const int64_t* strides;
        int64_t offset;
    };
    auto operand = [&](int k) { return Operand{k == 0 ? y : call.inputs[size_t(k - 1)], p.strides[k], p.offset[k]}; };
    auto pass = [&](tgl_op op, const Operand& out, const std::vector<Operand>& ins) {
        OpCall c;
        c.info = find_op(op);
        c.dtype = ins[0].arg.dtype;
        c.outputs.push_back(out.arg);
        ElementwisePlan& q = c.plan.emplace<ElementwisePlan>();
        q.n_operands = 1 + int(ins.size());
        q.rank = p.rank;
        q.numel = p.numel;
        std::copy(p.shape, p.shape + p.rank, q.shape);
        std::copy(out.strides, out.strides + p.rank, q.strides[0]);
        q.offset[0] = out.offset;
        for (size_t i = 0; i < ins.size(); ++i) {
            c.inputs.push_back(ins[i].arg);
            std::copy(ins[i].strides, ins[i].strides + p.rank, q.strides[i + 1]);
            q.offset[i + 1] = ins[i].offset;
        }
        run_elementwise(dev, c);
    };
    if (n == 1) return pass(TGL_OP_CAST, operand(0), {operand(1)});
    Operand acc = operand(0);
    // y cannot hold the running sum when it is f16/bf16 (one rounding at the end) or when it is also
    // an input read after the first pass (y in place over x_k, k >= 2).
    bool y_read_later = false;
    for (int k = 2; k < n; ++k) {
        const TensorArg& x = call.inputs[size_t(k)];
        y_read_later = y_read_later || (x.buffer == y.buffer && x.byte_lo < y.byte_hi && y.byte_lo < x.byte_hi);
    }
    int64_t contiguous[TGL_MAX_RANK] = {};
    const bool narrow = y.dtype == TGL_DTYPE_F16 || y.dtype == TGL_DTYPE_BF16;
    if (n > 2 && (narrow || y_read_later)) {  // a scratch, row-major over the plan's shape
        int64_t step = 1;
        for (int d = p.rank - 1; d >= 0; --d) { contiguous[d] = step; step *= p.shape[d]; }
        TensorArg& s = acc.arg;
        s = TensorArg{};
        s.dtype = narrow ? tgl_dtype(TGL_DTYPE_F32) : y.dtype;
        const int64_t bytes = p.numel * int64_t(tgl_dtype_size(s.dtype));
        s.buffer = dev.scratch(uint64_t(bytes + 3) & ~uint64_t(3));
        s.rank = p.rank;
        std::copy(p.shape, p.shape + p.rank, s.shape);
        std::copy(contiguous, contiguous + p.rank, s.strides);
        s.numel = p.numel;
        s.byte_hi = bytes;
        acc.strides = contiguous;
        acc.offset = 0;
    }
    pass(TGL_OP_ADD, n == 2 ? operand(0) : acc, {operand(1), operand(2)});
    for (int k = 3; k <= n; ++k) pass(TGL_OP_ADD, k == n ? operand(0) : acc, {acc, operand(k)});
}

namespace {

// Copies or fills (src null: with the 16-byte pattern `quad`) bytes, a multiple of 16, between
// 16-byte aligned offsets with buffer_bytes.comp.
void run_aligned_bytes(GlesDevice& dev, const BufferRef* src, uint64_t src_offset, const BufferRef& dst,
                       uint64_t dst_offset, uint64_t bytes, const std::vector<uint32_t>& quad) {
    const StreamShape shape = dev.stream_shape();
    Defines defines = {{def::kWorkgroupSize, str(shape.wg)}, {"PER_INV", str(shape.per_invocation)}};
    if (!src) defines.emplace_back("FILL", "");
    if (shape.copy_groups > 0) defines.emplace_back("GRID_STRIDE", "");
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
        add_block_dispatches(dev, d, ceil_div(uint64_t(count), uint64_t(shape.wg) * shape.per_invocation), shape.copy_groups,
                             dispatches);
        done += len;
    }
    dev.submit(src ? "buffer_copy" : "buffer_fill", std::move(dispatches));
}

// fill.comp over [offset, offset + bytes): one word per invocation, partial words merged.
void run_fill_words(GlesDevice& dev, const BufferRef& dst, uint64_t offset, uint64_t bytes,
                    const std::vector<uint32_t>& quad) {
    int wg = dev.workgroup_size();
    Dispatch base;
    base.program = dev.program("fill.comp", {{def::kWorkgroupSize, str(wg)}});
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

void register_elementwise_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Unary, run_elementwise, &kElementwiseSplit});
    families.push_back({OpFamily::Binary, run_elementwise, &kElementwiseSplit});
    families.push_back({OpFamily::Ternary, run_elementwise, &kElementwiseSplit});
}

}  // namespace gles
}  // namespace tgl
