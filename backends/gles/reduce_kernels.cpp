// Host side of the state reductions (reduce_state.comp) and the scans (scan.comp): shader variants,
// SSBO windows, uniforms and dispatches within the device's limits. Nothing is computed on the CPU.
#include "reduce_kernels.h"

#include "dispatch_util.h"

#include "status.h"

#include <algorithm>

namespace tgl {
namespace gles {
namespace {

struct Dim {
    int64_t n, xs, ys;
};

// Drops size-1 dims and merges neighbours contiguous in x (and y).
std::vector<Dim> collapse(int rank, const int64_t* shape, const int64_t* xs, const int64_t* ys) {
    std::vector<Dim> out;
    for (int d = 0; d < rank; ++d) {
        if (shape[d] == 1) continue;
        Dim cur{shape[d], xs[d], ys ? ys[d] : 0};
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

const char* state_define(const OpCall& call) {
    switch (call.info->op) {
    case TGL_OP_ARGMAX: return "OP_ARGMAX";
    case TGL_OP_ARGMIN: return "OP_ARGMIN";
    case TGL_OP_LOGSUMEXP: return "OP_LOGSUMEXP";
    case TGL_OP_VAR: return "OP_VAR";
    case TGL_OP_STD: return "OP_STD";
    case TGL_OP_ANY: return "OP_ANY";
    case TGL_OP_ALL: return "OP_ALL";
    case TGL_OP_NORM: return call.norm_ord == 1 ? "OP_NORM1" : "OP_NORM2";
    default: return nullptr;
    }
}

void run_state_reduce(GlesDevice& dev, const OpCall& call, const char* op) {
    const ReducePlan& p = call.reduce;
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
                       {"X_DTYPE", str(x_dtype)},
                       {"Y_DTYPE", str(y.dtype)},
                       {"OUTER_RANK", str(long(outer.size()))},
                       {"INNER_RANK", str(long(inner.size()))},
                       {"WG_SIZE", str(wg)}};
    Dispatch base;
    base.program = dev.program("reduce_state.comp", defines);
    base.bindings = {yb, xb};
    base.uniforms.push_back(uniform_uint("u_out_count", {out_count}));
    base.uniforms.push_back(uniform_uint("u_reduce_count", {reduce_count}));
    base.uniforms.push_back(uniform_int("u_x_offset", {x_off}));
    base.uniforms.push_back(uniform_int("u_y_offset", {y_off}));
    base.uniforms.push_back(uniform_float("u_correction", call.correction));
    outer_uniforms(outer, base);
    if (!inner.empty()) {
        std::vector<int32_t> n, xs;
        for (const Dim& d : inner) {
            n.push_back(to_i32(d.n, "a reduced dimension of x"));
            xs.push_back(to_i32(d.xs, "a stride of x"));
        }
        base.uniforms.push_back(uniform_int("u_inner_shape", n));
        base.uniforms.push_back(uniform_int("u_inner_x_stride", xs));
    }
    std::vector<Dispatch> dispatches;
    add_chunks(dev, base, group ? uint64_t(out_count) : ceil_div(out_count, uint64_t(wg)), dispatches);
    dev.submit(call.info->name, std::move(dispatches));
}

constexpr int kScanItems = 4;

void run_scan(GlesDevice& dev, const OpCall& call) {
    const ReducePlan& p = call.reduce;
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    uint32_t rows = count_u32(p.out_count, "the rows of outputs[0] (y)");
    uint32_t len = count_u32(p.reduce_count, "the scanned axis of inputs[0] (x)");
    std::vector<Dim> outer = collapse(p.outer_rank, p.outer_shape, p.outer_x_strides, p.outer_y_strides);
    int32_t x_off = 0, y_off = 0;
    Binding yb = dev.window(y, "outputs[0] (y)", &y_off);
    Binding xb = dev.window(x, "inputs[0] (x)", &x_off);
    int64_t xs = p.inner_rank ? p.inner_x_strides[0] : 0, ys = p.inner_rank ? call.scan_y_stride : 0;
    if (len == 1) xs = ys = 0;  // never stepped: keep it within 32 bits

    int wg = dev.workgroup_size();
    const uint64_t block = uint64_t(wg) * kScanItems;
    const uint64_t blocks = ceil_div(len, block);
    const bool sum = call.info->op == TGL_OP_CUMSUM || call.info->op == TGL_OP_CUMSUM_BACKWARD;  // the latter: Grad family
    Defines common = {{sum ? "OP_CUMSUM" : "OP_CUMPROD", ""},
                      {"X_DTYPE", str(x.dtype)},
                      {"Y_DTYPE", str(y.dtype)},
                      {"OUTER_RANK", str(long(outer.size()))},
                      {"WG_SIZE", str(wg)},
                      {"ITEMS", str(kScanItems)}};
    if (call.scan_exclusive) common.emplace_back("EXCLUSIVE", "");
    if (call.scan_reverse) common.emplace_back("REVERSE", "");
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
    if (blocks > 1) {
        BufferRef scratch = dev.scratch(groups * 4);
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
        add_chunks(dev, carry, ceil_div(rows, uint64_t(wg)), dispatches);
    }
    Dispatch scan = base;
    scan.program = variant("PASS_SCAN");
    scan.bindings = {yb, xb, tb};
    scan.uniforms.push_back(uniform_uint("u_use_carry", {blocks > 1 ? 1u : 0u}));
    add_chunks(dev, scan, groups, dispatches);
    dev.submit(call.info->name, std::move(dispatches));
}

}  // namespace

bool run_reduce_more(GlesDevice& dev, const OpCall& call) {
    if (call.info->op == TGL_OP_CUMSUM || call.info->op == TGL_OP_CUMPROD || call.info->op == TGL_OP_CUMSUM_BACKWARD) {
        run_scan(dev, call);
        return true;
    }
    const char* op = state_define(call);
    if (!op) return false;
    run_state_reduce(dev, call, op);
    return true;
}

}  // namespace gles
}  // namespace tgl
