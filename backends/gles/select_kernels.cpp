// GLES host side of the Select family (plan: backends/common/select_rules.h): the bitonic sort of
// glsl/sort.comp. Rows padded to P = 2^ceil(log2 n) positions. P <= BLOCK (the shared-memory
// block): one PASS_BLOCK dispatch sorts whole rows and writes the outputs. P > BLOCK: rows in
// batches that fit one scratch window; per batch a local sort into the scratch pairs, then per
// stage k > BLOCK the strides >= BLOCK as PASS_GLOBAL dispatches and the strides < BLOCK as one
// PASS_BLOCK merge (the last stage's merge writes the outputs). Nothing is computed on the CPU.
#include "gles_device.h"
#include "dispatch_util.h"

#include <algorithm>

namespace tgl {
namespace gles {
namespace {

uint32_t log2_ceil(uint64_t n) {
    uint32_t l = 0;
    while ((uint64_t(1) << l) < n) ++l;
    return l;
}

// Scratch pairs per batch at most (8 bytes each): 16 MiB, still 2^20 compare-exchanges per global
// pass, enough to fill a large GPU.
constexpr uint64_t kMaxBatchPositions = uint64_t(1) << 21;

}  // namespace

void run_select(GlesDevice& dev, const OpCall& call) {
    const SelectPlan& p = call.select;
    const TensorArg& x = call.inputs[0];
    const TensorArg& ind = call.outputs[p.has_values ? 1 : 0];
    const uint32_t rows = count_u32(p.rows, "the rows of inputs[0] (x)");
    const uint32_t n = count_u32(p.n, "the sorted axis of inputs[0] (x)");
    const uint32_t log2p = log2_ceil(n);
    const uint64_t P = uint64_t(1) << log2p;

    // Shared-memory block: 8 bytes per position, within the queried limit (16 KiB at least).
    const Limits& L = dev.limits();
    uint32_t max_block = 4096;
    while (max_block > 64 && uint64_t(max_block) * 8 > uint64_t(L.max_shared_bytes)) max_block >>= 1;
    const uint32_t wg_max = std::min<uint32_t>(uint32_t(dev.workgroup_size()), max_block / 2);
    const bool single = P <= max_block;
    // Short rows: a workgroup of >= 32 invocations sorts BLOCK / P rows; otherwise the full block.
    const uint32_t wg = single ? std::min<uint32_t>(wg_max, std::max<uint32_t>(32, uint32_t(P / 2))) : wg_max;
    const uint32_t block = single ? std::max<uint32_t>(uint32_t(P), 2 * wg) : max_block;

    int32_t x_off = 0, v_off = 0, i_off = 0;
    Binding xb = dev.window(x, "inputs[0] (x)", &x_off);
    Binding ib = dev.window(ind, p.has_values ? "outputs[1] (indices)" : "outputs[0] (indices)", &i_off);
    Binding vb = ib;
    if (p.has_values) vb = dev.window(call.outputs[0], "outputs[0] (values)", &v_off);

    const int64_t* const outer_strides[3] = {p.outer_x_strides, p.outer_v_strides, p.outer_i_strides};
    const std::vector<MergedDim<3>> outer = merge_dims(p.outer_rank, p.outer_shape, outer_strides);
    Defines common = {{"X_DTYPE", str(x.dtype)},
                      {"OUTER_RANK", str(long(outer.size()))},
                      {"WG_SIZE", str(wg)},
                      {"BLOCK", str(block)}};
    if (p.has_values) common.emplace_back("HAS_VALUES", "");
    auto variant = [&](const char* pass) {
        Defines d = common;
        d.emplace_back(pass, "");
        return dev.program("sort.comp", d);
    };

    Dispatch base;
    base.uniforms = {uniform_uint("u_n", {n}),
                     uniform_uint("u_kout", {uint32_t(p.k)}),
                     uniform_uint("u_log2p", {log2p}),
                     uniform_uint("u_descending", {p.descending ? 1u : 0u}),
                     uniform_int("u_x_offset", {x_off}),
                     uniform_int("u_v_offset", {v_off}),
                     uniform_int("u_i_offset", {i_off}),
                     // Strides along the axis; never stepped where the axis has one element.
                     uniform_int("u_x_stride", {n > 1 ? to_i32(p.x_stride, "the stride of x along the axis") : 0}),
                     uniform_int("u_v_stride", {p.k > 1 ? to_i32(p.v_stride, "the stride of values along the axis") : 0}),
                     uniform_int("u_i_stride", {p.k > 1 ? to_i32(p.i_stride, "the stride of indices along the axis") : 0})};
    if (!outer.empty()) {
        std::vector<int32_t> sn, sx, sv, si;
        for (const MergedDim<3>& d : outer) {
            sn.push_back(to_i32(d.n, "a dimension of x"));
            sx.push_back(to_i32(d.s[0], "a stride of x"));
            sv.push_back(to_i32(d.s[1], "a stride of values"));
            si.push_back(to_i32(d.s[2], "a stride of indices"));
        }
        base.uniforms.push_back(uniform_int("u_outer_shape", sn));
        base.uniforms.push_back(uniform_int("u_outer_x_stride", sx));
        base.uniforms.push_back(uniform_int("u_outer_v_stride", sv));
        base.uniforms.push_back(uniform_int("u_outer_i_stride", si));
    }
    auto block_pass = [&](uint32_t row_base, uint32_t batch_rows, uint32_t k, bool from_x, bool to_out,
                          const Binding& sb, std::vector<Dispatch>& out) {
        Dispatch d = base;
        d.program = variant("PASS_BLOCK");
        d.bindings = {vb, xb, ib, sb};
        d.uniforms.push_back(uniform_uint("u_rows", {batch_rows}));
        d.uniforms.push_back(uniform_uint("u_row_base", {row_base}));
        d.uniforms.push_back(uniform_uint("u_k", {k}));
        d.uniforms.push_back(uniform_uint("u_from_x", {from_x ? 1u : 0u}));
        d.uniforms.push_back(uniform_uint("u_to_out", {to_out ? 1u : 0u}));
        const uint64_t groups = single ? ceil_div(batch_rows, block >> log2p) : uint64_t(batch_rows) * (P / block);
        add_chunks(dev, d, groups, out);
    };

    std::vector<Dispatch> dispatches;
    if (single) {
        block_pass(0, rows, 0, true, true, xb, dispatches);  // binding 3 unused: no scratch
        dev.submit(call.info->name, std::move(dispatches));
        return;
    }

    // Long rows: batches of whole rows within one scratch window.
    const uint64_t cap = std::min<uint64_t>(kMaxBatchPositions, uint64_t(dev.max_window_bytes()) / 8);
    if (P > cap)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "op '%s': a row of %u elements needs %llu bytes of sort scratch in one shader storage block, but this "
             "device allows %lld bytes",
             call.info->name, n, (unsigned long long)(P * 8), (long long)dev.max_window_bytes());
    const uint32_t batch = uint32_t(std::min<uint64_t>(rows, cap / P));
    BufferRef scratch = dev.scratch(uint64_t(batch) * P * 8);
    Binding sb;
    sb.keep = scratch;
    sb.name = static_cast<GlesBuffer&>(*scratch).name();
    sb.offset = 0;
    sb.size = int64_t(uint64_t(batch) * P * 8);
    for (uint32_t r0 = 0; r0 < rows; r0 += batch) {
        const uint32_t br = std::min(batch, rows - r0);
        block_pass(r0, br, 0, true, false, sb, dispatches);
        for (uint64_t k = 2 * uint64_t(block); k <= P; k <<= 1) {
            for (uint64_t j = k / 2; j >= block; j >>= 1) {
                Dispatch g = base;
                g.program = variant("PASS_GLOBAL");
                g.bindings = {vb, xb, ib, sb};
                g.uniforms.push_back(uniform_uint("u_rows", {br}));
                g.uniforms.push_back(uniform_uint("u_row_base", {r0}));
                g.uniforms.push_back(uniform_uint("u_k", {uint32_t(k)}));
                g.uniforms.push_back(uniform_uint("u_j", {uint32_t(j)}));
                add_chunks(dev, g, ceil_div(uint64_t(br) * P / 2, wg), dispatches);
            }
            block_pass(r0, br, uint32_t(k), false, k == P, sb, dispatches);
        }
    }
    dev.submit(call.info->name, std::move(dispatches));
}

}  // namespace gles
}  // namespace tgl
