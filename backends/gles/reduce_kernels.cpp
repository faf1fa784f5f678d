// Host side of the reduction families: Reduce (reduce.comp for sum, mean, max, min, prod;
// reduce_state.comp for logsumexp, var, std, any, all, norm), ArgReduce (reduce_state.comp) and Scan
// (scan.comp): shader variants, SSBO windows, uniforms and dispatches within the device's limits.
// Nothing is computed on the CPU.
#include "gles_device.h"
#include "gles_families.h"

#include "dispatch_util.h"
#include "loop_budget.h"

#include "status.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace tgl {
namespace gles {
namespace {

struct Dim {
    int64_t n, xs, ys;
};

// Drops size-1 dims and merges neighbours contiguous in x (and y): dispatch_util.h's merge_dims.
std::vector<Dim> collapse(int rank, const int64_t* shape, const int64_t* xs, const int64_t* ys) {
    const int64_t no_y[TGL_MAX_RANK] = {};
    const int64_t* const strides[2] = {xs, ys ? ys : no_y};
    std::vector<Dim> out;
    for (const MergedDim<2>& d : merge_dims(rank, shape, strides)) out.push_back(Dim{d.n, d.s[0], d.s[1]});
    return out;
}

void outer_uniforms(const std::vector<Dim>& outer, Dispatch& base) {
    if (outer.empty()) return;
    std::vector<int32_t> n, xs, ys;
    for (const Dim& d : outer) {
        n.push_back(to_i32(d.n, "a kept dimension of x"));
        xs.push_back(to_i32(d.xs, "a stride of x"));
        ys.push_back(to_i32(d.ys, "a stride of y"));
    }
    base.uniforms.push_back(uniform_int("u_outer_shape", n));
    base.uniforms.push_back(uniform_int("u_outer_x_stride", xs));
    base.uniforms.push_back(uniform_int("u_outer_y_stride", ys));
}

void inner_uniforms(const std::vector<Dim>& inner, Dispatch& base) {
    if (inner.empty()) return;
    std::vector<int32_t> n, xs;
    for (const Dim& d : inner) {
        n.push_back(to_i32(d.n, "a reduced dimension of x"));
        xs.push_back(to_i32(d.xs, "a stride of x"));
    }
    base.uniforms.push_back(uniform_int("u_inner_shape", n));
    base.uniforms.push_back(uniform_int("u_inner_x_stride", xs));
}

const char* state_define(const OpCall& call) {
    switch (call.info->op) {
    case TGL_OP_ARGMAX: return "OP_ARGMAX";
    case TGL_OP_ARGMIN: return "OP_ARGMIN";
    case TGL_OP_LOGSUMEXP: return "OP_LOGSUMEXP";
    case TGL_OP_VAR: return "OP_VAR";
    case TGL_OP_STD: return "OP_STD";
    case TGL_OP_ANY: return "OP_ANY";
    case TGL_OP_ALL: return "OP_ALL";
    case TGL_OP_NORM: return call.reduce().norm_ord == 1 ? "OP_NORM1" : "OP_NORM2";
    default: return nullptr;
    }
}

void run_state_reduce(GlesDevice& dev, const OpCall& call, const char* op) {
    const ReducePlan& p = call.reduce();
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    uint32_t out_count = count_u32(p.out_count, "outputs[0] (y)");
    uint32_t reduce_count = count_u32(p.reduce_count, "the reduced part of inputs[0] (x)");
    std::vector<Dim> outer = collapse(p.outer_rank, p.outer_shape, p.outer_x_strides, p.outer_y_strides);
    std::vector<Dim> inner = collapse(p.inner_rank, p.inner_shape, p.inner_x_strides, nullptr);
    int32_t x_off = 0, y_off = 0;
    Binding yb = dev.window(y, "outputs[0] (y)", &y_off);
    Binding xb = yb;  // an empty x is never read, but the block must be bound
    if (x.numel > 0) xb = dev.window(x, "inputs[0] (x)", &x_off);
    tgl_dtype x_dtype = x.numel > 0 ? x.dtype : y.dtype;

    int wg = dev.workgroup_size();
    bool inner_unit = !inner.empty() && inner.back().xs == 1;
    bool group = !(reduce_count <= 32 || (out_count >= 4096 && (!inner_unit || reduce_count < uint32_t(wg))));
    Defines defines = {{op, ""},
                       {group ? "MODE_GROUP" : "MODE_THREAD", ""},
                       {def::kXDtype, str(x_dtype)},
                       {def::kYDtype, str(y.dtype)},
                       {"OUTER_RANK", str(long(outer.size()))},
                       {"INNER_RANK", str(long(inner.size()))},
                       {def::kWorkgroupSize, str(wg)}};
    if (p.select_last) defines.emplace_back("SELECT_LAST", "");
    Dispatch base;
    base.program = dev.program("reduce_state.comp", defines);
    base.bindings = {yb, xb};
    base.uniforms.push_back(uniform_uint("u_out_count", {out_count}));
    base.uniforms.push_back(uniform_uint("u_reduce_count", {reduce_count}));
    base.uniforms.push_back(uniform_int("u_x_offset", {x_off}));
    base.uniforms.push_back(uniform_int("u_y_offset", {y_off}));
    base.uniforms.push_back(uniform_float("u_correction", call.reduce().correction));
    outer_uniforms(outer, base);
    inner_uniforms(inner, base);
    std::vector<Dispatch> dispatches;
    const uint64_t groups = group ? uint64_t(out_count) : ceil_div(out_count, uint64_t(wg));
    // An invocation's walk over its elements (every element in MODE_THREAD, one in WG_SIZE in
    // MODE_GROUP) longer than the loop budget: ranges of elements, one dispatch each, the walkers'
    // States kept in scratch between them (WALK_SPLIT).
    const uint64_t lanes = group ? uint64_t(wg) : 1;
    if (loop_cost(ceil_div(reduce_count, lanes)) <= loop_budget(dev)) {
        add_chunks(dev, base, groups, dispatches);
        dev.submit(call.info->name, std::move(dispatches));
        return;
    }
    const uint64_t bytes = uint64_t(out_count) * lanes * 5 * 4, range = loop_items_within(loop_budget(dev), 1) * lanes;
    if (bytes > uint64_t(dev.max_window_bytes()))
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "op '%s': reductions of %u elements take several dispatches, whose running states for %u outputs (%llu bytes) "
             "exceed one shader storage block (%lld bytes)",
             call.info->name, reduce_count, out_count, (unsigned long long)bytes, (long long)dev.max_window_bytes());
    defines.emplace_back("WALK_SPLIT", "");
    base.program = dev.program("reduce_state.comp", defines);
    Binding state;
    state.keep = dev.scratch(bytes);
    state.name = static_cast<GlesBuffer&>(*state.keep).name();
    state.size = int64_t(bytes);
    base.bindings.push_back(state);
    for (uint64_t r = 0; r < reduce_count; r += range) {
        Dispatch d = base;
        d.uniforms.push_back(uniform_uint("u_r_begin", {uint32_t(r)}));
        d.uniforms.push_back(uniform_uint("u_r_end", {uint32_t(std::min<uint64_t>(reduce_count, r + range))}));
        add_chunks(dev, d, groups, dispatches);
    }
    dev.submit(call.info->name, std::move(dispatches));
}

constexpr int kScanItems = 4;

void run_scan_rows(GlesDevice& dev, const OpCall& call) {
    const ScanPlan& plan = call.scan();
    const ReducePlan& p = plan.rows;
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    uint32_t rows = count_u32(p.out_count, "the rows of outputs[0] (y)");
    uint32_t len = count_u32(p.reduce_count, "the scanned axis of inputs[0] (x)");
    std::vector<Dim> outer = collapse(p.outer_rank, p.outer_shape, p.outer_x_strides, p.outer_y_strides);
    int32_t x_off = 0, y_off = 0;
    Binding yb = dev.window(y, "outputs[0] (y)", &y_off);
    Binding xb = dev.window(x, "inputs[0] (x)", &x_off);
    int64_t xs = p.inner_rank ? p.inner_x_strides[0] : 0, ys = p.inner_rank ? plan.y_stride : 0;
    if (len == 1) xs = ys = 0;  // never stepped: keep it within 32 bits

    int wg = dev.workgroup_size();
    const uint64_t block = uint64_t(wg) * kScanItems;
    const uint64_t blocks = ceil_div(len, block);
    const bool sum = call.info->op == TGL_OP_CUMSUM || call.info->op == TGL_OP_CUMSUM_BACKWARD;  // the latter: Grad family
    Defines common = {{sum ? "OP_CUMSUM" : "OP_CUMPROD", ""},
                      {def::kXDtype, str(x.dtype)},
                      {def::kYDtype, str(y.dtype)},
                      {"OUTER_RANK", str(long(outer.size()))},
                      {def::kWorkgroupSize, str(wg)},
                      {"ITEMS", str(kScanItems)}};
    if (x.dtype == TGL_DTYPE_I32) common.emplace_back("INT_VALUES", "");  // wrapping int sums/products
    if (plan.exclusive) common.emplace_back("EXCLUSIVE", "");
    if (plan.reverse) common.emplace_back("REVERSE", "");
    auto variant = [&](const char* pass) {
        Defines d = common;
        d.emplace_back(pass, "");
        return dev.program("scan.comp", d);
    };
    Dispatch base;
    base.uniforms.push_back(uniform_uint("u_rows", {rows}));
    base.uniforms.push_back(uniform_uint("u_len", {len}));
    base.uniforms.push_back(uniform_uint("u_blocks", {uint32_t(blocks)}));
    base.uniforms.push_back(uniform_int("u_x_offset", {x_off}));
    base.uniforms.push_back(uniform_int("u_y_offset", {y_off}));
    base.uniforms.push_back(uniform_int("u_x_stride", {to_i32(xs, "the stride of x along the axis")}));
    base.uniforms.push_back(uniform_int("u_y_stride", {to_i32(ys, "the stride of y along the axis")}));
    outer_uniforms(outer, base);
    std::vector<Dispatch> dispatches;

    if (len <= 64) {  // short rows: one invocation per row
        Dispatch d = base;
        d.program = variant("PASS_ROW");
        d.bindings = {yb, xb, yb};
        add_chunks(dev, d, ceil_div(rows, uint64_t(wg)), dispatches);
        dev.submit(call.info->name, std::move(dispatches));
        return;
    }
    uint64_t groups = uint64_t(rows) * blocks;
    if (groups > uint64_t(INT32_MAX))
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': %llu blocks of %llu elements exceed the 32-bit block index",
             call.info->name, (unsigned long long)groups, (unsigned long long)block);
    Binding tb = yb;
    // A row's carry loop walks its blocks: more than the loop budget take several dispatches, the
    // running carries kept in a scratch word per row (after the totals; bound in y's place).
    const uint64_t carry_per = std::min<uint64_t>(blocks, loop_items_within(loop_budget(dev), 1));
    const uint64_t align = uint64_t(dev.window_alignment());
    const uint64_t carry_at = blocks > carry_per ? ceil_div(groups * 4, align) * align : 0;
    if (blocks > 1) {
        BufferRef scratch = dev.scratch(carry_at ? carry_at + uint64_t(rows) * 4 : groups * 4);
        tb.keep = scratch;
        tb.name = static_cast<GlesBuffer&>(*scratch).name();
        tb.offset = 0;
        tb.size = int64_t(groups * 4);
        Dispatch totals = base;
        totals.program = variant("PASS_TOTALS");
        totals.bindings = {yb, xb, tb};
        add_chunks(dev, totals, groups, dispatches);
        Dispatch carry = base;
        carry.program = variant("PASS_CARRY");
        carry.bindings = {yb, xb, tb};
        if (carry_at) {
            carry.bindings[0] = tb;
            carry.bindings[0].offset = int64_t(carry_at);
            carry.bindings[0].size = int64_t(rows) * 4;
        }
        for (uint64_t b = 0; b < blocks; b += carry_per) {
            Dispatch d = carry;
            d.uniforms.push_back(uniform_uint("u_b_begin", {uint32_t(b)}));
            d.uniforms.push_back(uniform_uint("u_b_end", {uint32_t(std::min(blocks, b + carry_per))}));
            add_chunks(dev, d, ceil_div(rows, uint64_t(wg)), dispatches);
        }
    }
    Dispatch scan = base;
    scan.program = variant("PASS_SCAN");
    scan.bindings = {yb, xb, tb};
    scan.uniforms.push_back(uniform_uint("u_use_carry", {blocks > 1 ? 1u : 0u}));
    add_chunks(dev, scan, groups, dispatches);
    dev.submit(call.info->name, std::move(dispatches));
}

// The largest power of two <= v within [lo, the device's invocation limits] (and lo if none).
int pow2_within(const GlesDevice& dev, int v, int lo) {
    const Limits& L = dev.limits();
    int w = lo;
    while (w * 2 <= v && w * 2 <= L.max_invocations && w * 2 <= L.max_size[0]) w *= 2;
    return w;
}

// reduce.comp's variants and their tunables:
//   MODE_THREAD  one invocation per output (short reductions, strided outputs).
//   MODE_GROUP   a workgroup of `rwg` invocations per (output, split); VEC4 (f32 rows contiguous
//                and 16-byte aligned): `ru` vec4 loads per invocation per loop step.
//   MODE_COLUMN  outputs contiguous in x (column sums): a workgroup covers a slab of `cl` lanes
//                (4 columns each with VEC4, else 1) x rwg/cl row lanes over a chunk of `cr` rows
//                (0: enough chunks for about 2048 workgroups), `cu` loads per lane per loop step;
//                chunk partials (f32, [chunk][output]) then a MODE_THREAD pass over the chunks.
// The tunables are TGL_TUNE_REDUCE's (tuning.h: ReduceTuning), clamped to the device's limits.

enum class ReduceMode { Thread, Group, Column };

struct ReducePass {
    ReduceMode mode = ReduceMode::Thread;
    bool final_mean = false;
    bool vec4 = false;    // MODE_GROUP / MODE_COLUMN: f32 x read as vec4
    int wg = 64, unroll = 1, lanes = 1;
    uint32_t splits = 1, chunk = 0, slabs = 1;
    std::vector<Dim> outer, inner;
    int32_t x_offset = 0, y_offset = 0;
    Binding x, y;
    tgl_dtype x_dtype = TGL_DTYPE_F32, y_dtype = TGL_DTYPE_F32;  // f32 or f16; split partials are f32
    bool int_values = false;   // i32 x and y (INT_VALUES): wrapping int folds, i32 partials
    bool wide_values = false;  // i64 x and y (WIDE_VALUES): wrapping folds on two words, i64 partials
};

void add_reduce_pass(GlesDevice& dev, const char* reduce_define, const ReducePass& pass, uint32_t out_count,
                     uint32_t reduce_count, float mean_count, std::vector<Dispatch>& out) {
    static const char* modes[] = {"MODE_THREAD", "MODE_GROUP", "MODE_COLUMN"};
    Defines defines = {{reduce_define, ""},
                       {modes[int(pass.mode)], ""},
                       {"OUTER_RANK", str(long(pass.outer.size()))},
                       {"INNER_RANK", str(long(pass.inner.size()))},
                       {def::kXDtype, str(pass.x_dtype)},
                       {def::kYDtype, str(pass.y_dtype)},
                       {def::kWorkgroupSize, str(pass.wg)}};
    if (pass.final_mean) defines.emplace_back("FINAL_MEAN", "");
    if (pass.int_values) defines.emplace_back("INT_VALUES", "");
    if (pass.wide_values) defines.emplace_back("WIDE_VALUES", "");
    if (pass.vec4) defines.emplace_back("VEC4", "");
    if (pass.mode != ReduceMode::Thread) defines.emplace_back("UNROLL", str(pass.unroll));
    if (pass.mode == ReduceMode::Column) defines.emplace_back("COL_LANES", str(pass.lanes));
    if (pass.mode != ReduceMode::Thread) dev.add_subgroup_define(defines, pass.wg);
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
    uint64_t groups = ceil_div(out_count, uint64_t(pass.wg));
    if (pass.mode == ReduceMode::Group) groups = uint64_t(out_count) * pass.splits;
    if (pass.mode == ReduceMode::Column) {
        const Dim& col = pass.outer.back();
        base.uniforms.push_back(uniform_uint("u_cols", {uint32_t(col.n)}));
        base.uniforms.push_back(uniform_uint("u_slabs", {pass.slabs}));
        base.uniforms.push_back(uniform_int("u_col_y_stride", {to_i32(col.ys, "a stride of y")}));
        groups = uint64_t(out_count / col.n) * pass.splits * pass.slabs;
    }
    outer_uniforms(pass.outer, base);
    inner_uniforms(pass.inner, base);
    add_chunks(dev, base, groups, out);
}

// All strides of these dims multiples of 4 (with a 4-aligned offset: every start 16-byte aligned).
bool quad_strides(const std::vector<Dim>& dims) {
    for (const Dim& d : dims)
        if (d.xs % 4) return false;
    return true;
}

// MODE_COLUMN's shape for `pass` (outer and inner set): vec4 where the columns allow it (x f32 at a
// 4-aligned offset: x_f32), the workgroup size, column lanes and slabs, and with may_split the
// chunks of rows (splits; else one chunk).
void plan_column(const GlesDevice& dev, ReducePass& pass, uint32_t out_count, uint32_t reduce_count, bool x_f32,
                 bool may_split) {
    const ReduceTuning& tune = dev.tuning().reduce;
    const Dim& col = pass.outer.back();
    pass.mode = ReduceMode::Column;
    pass.vec4 = x_f32 && col.n % 4 == 0 && quad_strides(pass.inner) &&
                quad_strides(std::vector<Dim>(pass.outer.begin(), pass.outer.end() - 1));
    const int per_lane = pass.vec4 ? 4 : 1;
    pass.wg = pow2_within(dev, tune.cwg, 32);
    // Column workgroups keep one partial per invocation (a vec4 with VEC4, two words for i64) in
    // shared memory.
    const int value_bytes = pass.wide_values ? 8 : 4;
    while (pass.wg > 32 && pass.wg * value_bytes * per_lane > dev.limits().max_shared_bytes) pass.wg /= 2;
    int lanes = 1;
    const uint64_t lanes_needed = ceil_div(uint64_t(col.n), uint64_t(per_lane));
    while (lanes * 2 <= std::min(tune.cl, pass.wg) && uint64_t(lanes) < lanes_needed) lanes *= 2;
    pass.lanes = lanes;
    pass.unroll = std::max(1, std::min(tune.cu, 8));
    pass.slabs = uint32_t(ceil_div(lanes_needed, uint64_t(lanes)));
    const uint64_t row_lanes = uint64_t(pass.wg / lanes);
    const uint64_t base_groups = uint64_t(out_count / col.n) * pass.slabs;
    uint64_t chunk = reduce_count;
    if (may_split && tune.cr > 0) {
        chunk = uint64_t(tune.cr);
    } else if (may_split) {
        // Enough chunks for about 2048 workgroups, each row lane taking at least 8 rows.
        uint64_t want = ceil_div(2048, base_groups);
        uint64_t cap = std::max<uint64_t>(1, reduce_count / (row_lanes * 8));
        chunk = ceil_div(reduce_count, std::max<uint64_t>(1, std::min(want, cap)));
    }
    // At most 4096 chunks: the second pass's row lanes walk them in loops (and llvmpipe stops
    // loops after 65535 iterations).
    chunk = std::max(chunk, ceil_div(reduce_count, 4096));
    pass.chunk = uint32_t(std::min<uint64_t>(chunk, reduce_count));
    pass.splits = uint32_t(ceil_div(reduce_count, pass.chunk));
    // Short chunks: fewer row lanes (no lane left without a row), down to 32 invocations.
    while (pass.wg > 32 && pass.wg / 2 >= lanes && uint64_t(pass.wg / 2 / lanes) >= pass.chunk) pass.wg /= 2;
}

// sum, mean, max, min, prod (reduce.comp).
void run_fold(GlesDevice& dev, const OpCall& call) {
    const ReducePlan& p = call.reduce();
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
    const ReduceTuning& tune = dev.tuning().reduce;

    ReducePass first;
    first.outer = collapse(p.outer_rank, p.outer_shape, p.outer_x_strides, p.outer_y_strides);
    first.inner = collapse(p.inner_rank, p.inner_shape, p.inner_x_strides, nullptr);
    first.y = dev.window(y, "outputs[0] (y)", &first.y_offset);
    first.x_dtype = x.dtype;
    first.y_dtype = y.dtype;
    first.int_values = y.dtype == TGL_DTYPE_I32;
    first.wide_values = y.dtype == TGL_DTYPE_I64;
    const tgl_dtype partial_dtype = first.int_values || first.wide_values ? y.dtype : tgl_dtype(TGL_DTYPE_F32);
    const uint64_t partial_bytes = tgl_dtype_size(partial_dtype);
    if (x.numel > 0) {
        first.x = dev.window(x, "inputs[0] (x)", &first.x_offset);
    } else {
        first.x = first.y;  // nothing is read (reduce_count == 0), but every block must be bound
        first.x_offset = 0;
    }
    const bool x_f32 = x.dtype == TGL_DTYPE_F32 && first.x_offset % 4 == 0;

    // Mode: outputs that are neighbours in x (reducing over the leading dims: column sums) take
    // MODE_COLUMN, where neighbouring invocations read neighbouring columns. Otherwise one
    // invocation per output for short reductions, and for many outputs whose reduced elements
    // are not contiguous; else a workgroup per output, split further when there are too few
    // outputs to fill the device (partials go through a scratch buffer and a second pass).
    int wg = dev.workgroup_size();
    bool inner_unit = !first.inner.empty() && first.inner.back().xs == 1;
    bool column = !first.outer.empty() && first.outer.back().xs == 1 && !first.inner.empty() && reduce_count > 1;
    if (column) first.mode = ReduceMode::Column;
    else if (reduce_count <= 32) first.mode = ReduceMode::Thread;
    else if (out_count >= 4096 && (!inner_unit || reduce_count < uint32_t(wg)) && loop_cost(reduce_count) <= loop_budget(dev))
        first.mode = ReduceMode::Thread;  // (a longer walk than the loop budget takes the workgroups)
    else first.mode = ReduceMode::Group;
    first.wg = wg;
    first.chunk = reduce_count;
    if (first.mode == ReduceMode::Group) {
        // vec4 loads where every row starts 16-byte aligned and is contiguous.
        first.vec4 = x_f32 && first.inner.size() == 1 && inner_unit && quad_strides(first.outer);
        first.wg = pow2_within(dev, tune.rwg, 32);
        first.unroll = std::max(1, std::min(tune.ru, 8));
        if (out_count < 4096) {
            // About 32 elements per invocation, and at most ~2048 workgroups in all.
            uint64_t want = ceil_div(reduce_count, uint64_t(first.wg) * 32);
            uint64_t cap = std::max<uint64_t>(1, 2048 / out_count);
            uint64_t splits = std::max<uint64_t>(1, std::min(want, cap));
            first.chunk = uint32_t(ceil_div(reduce_count, splits));
            if (first.vec4) first.chunk = uint32_t(std::min<uint64_t>(ceil_div(first.chunk, 4) * 4, reduce_count));
            first.splits = uint32_t(ceil_div(reduce_count, first.chunk));
        }
    } else if (first.mode == ReduceMode::Column) {
        plan_column(dev, first, out_count, reduce_count, x_f32, true);
        if (uint64_t(out_count / first.outer.back().n) * first.slabs * first.splits > uint64_t(INT32_MAX))
            fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': %llu workgroups exceed the 32-bit workgroup index", call.info->name,
                 (unsigned long long)(uint64_t(out_count / first.outer.back().n) * first.slabs * first.splits));
    }
    float mean_count = float(double(reduce_count));
    std::vector<Dispatch> dispatches;
    if (first.splits == 1) {
        first.final_mean = mean;
        add_reduce_pass(dev, reduce_define, first, out_count, reduce_count, mean_count, dispatches);
    } else {
        uint64_t partials = uint64_t(out_count) * first.splits;
        BufferRef scratch = dev.scratch(partials * partial_bytes);
        Binding sb;
        sb.keep = scratch;
        sb.name = static_cast<GlesBuffer&>(*scratch).name();
        sb.offset = 0;
        sb.size = int64_t(partials * partial_bytes);
        // Partial (o, split), o the row-major output index: MODE_GROUP puts it at o * splits +
        // split (a workgroup per partial), MODE_COLUMN at split * outputs + o (neighbouring
        // outputs neighbours, and the second pass's invocations read neighbouring words).
        const bool by_split = first.mode == ReduceMode::Column;
        ReducePass second;
        second.outer = first.outer;
        int64_t stride = by_split ? 1 : first.splits;
        for (size_t d = second.outer.size(); d-- > 0;) {
            second.outer[d].xs = stride;
            stride *= second.outer[d].n;
        }
        second.inner = {Dim{first.splits, by_split ? int64_t(out_count) : 1, 0}};
        second.mode = !by_split && first.splits > 32 ? ReduceMode::Group : ReduceMode::Thread;
        second.wg = wg;
        second.chunk = first.splits;
        second.int_values = first.int_values;
        second.wide_values = first.wide_values;
        // [chunk][output]: columns again (vec4 for f32 partials)
        if (by_split) plan_column(dev, second, out_count, first.splits, partial_dtype == TGL_DTYPE_F32, false);
        second.final_mean = mean;
        second.x = sb;
        second.y = first.y;
        second.y_offset = first.y_offset;
        second.x_dtype = partial_dtype;
        second.y_dtype = first.y_dtype;
        first.y = sb;
        first.y_offset = 0;
        first.y_dtype = partial_dtype;
        add_reduce_pass(dev, reduce_define, first, out_count, reduce_count, mean_count, dispatches);
        add_reduce_pass(dev, reduce_define, second, out_count, first.splits, mean_count, dispatches);
    }
    dev.submit(call.info->name, std::move(dispatches));
}

}  // namespace

void run_reduce(GlesDevice& dev, const OpCall& call) {
    const char* op = state_define(call);  // logsumexp, var, std, any, all, norm
    if (op) return run_state_reduce(dev, call, op);
    run_fold(dev, call);
}

void run_arg_reduce(GlesDevice& dev, const OpCall& call) {
    const char* op = state_define(call);  // argmax, argmin
    if (!op) fail(TGL_ERROR_INTERNAL, "op '%s' has no kernel in plugin 'gles'", call.info->name);
    run_state_reduce(dev, call, op);
}

void run_scan(GlesDevice& dev, const OpCall& call) {
    if (call.info->op != TGL_OP_CUMSUM && call.info->op != TGL_OP_CUMPROD && call.info->op != TGL_OP_CUMSUM_BACKWARD)
        fail(TGL_ERROR_INTERNAL, "op '%s' has no kernel in plugin 'gles'", call.info->name);
    run_scan_rows(dev, call);
}

void register_reduce_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Reduce, run_reduce, &kReduceSplit});
    families.push_back({OpFamily::ArgReduce, run_arg_reduce, &kArgReduceSplit});
    families.push_back({OpFamily::Scan, run_scan, &kScanSplit});
}

}  // namespace gles
}  // namespace tgl
