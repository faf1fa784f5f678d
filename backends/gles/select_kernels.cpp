// GLES host side of the Select family (plan: backends/common/select_rules.h): glsl/sort.comp.
// Short rows (P = 2^ceil(log2 n) <= BLOCK, the shared-memory block): one PASS_BLOCK dispatch, a
// bitonic network per row, writes the outputs. Longer rows: an LSD radix sort of (key, index)
// pairs, 4 key bits per pass, on batches of whole rows in scratch; per pass COUNT (digit counts
// per tile), SUMS / CARRY / APPLY (their exclusive scan: destinations), SCATTER; then OUT writes
// the first k positions of each row. Every dispatch does O(1) work per element or count (no
// invocation loops more than a few hundred times), so none runs long on a slow device. Nothing
// is computed on the CPU.
#include "gles_device.h"
#include "gles_families.h"
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

// Positions per batch of rows at most (two sets of 8-byte pairs: 32 MiB of scratch); a longer row
// is a batch of its own.
constexpr uint64_t kMaxBatchPositions = uint64_t(1) << 21;
// Positions per radix invocation (consecutive: walked in order, so each pass is stable).
constexpr uint32_t kChunk = 16;
constexpr uint32_t kRadixPasses = 8;  // 4 key bits each

// A window [offset, offset + bytes) of buffer `buf`.
Binding sub_window(const BufferRef& buf, uint64_t offset, uint64_t bytes) {
    Binding b;
    b.keep = buf;
    b.name = static_cast<GlesBuffer&>(*buf).name();
    b.offset = int64_t(offset);
    b.size = int64_t(bytes);
    return b;
}

}  // namespace

void run_select(GlesDevice& dev, const OpCall& call) {
    const SelectPlan& p = call.select();
    const TensorArg& x = call.inputs[0];
    const TensorArg& ind = call.outputs[p.has_values ? 1 : 0];
    const uint32_t rows = count_u32(p.rows, "the rows of inputs[0] (x)");
    const uint32_t n = count_u32(p.n, "the sorted axis of inputs[0] (x)");
    const uint32_t kout = uint32_t(p.k);
    const uint32_t log2p = log2_ceil(n);
    const uint64_t P = uint64_t(1) << log2p;

    // Shared-memory block: 8 bytes per position, within the queried limit (16 KiB at least).
    const Limits& L = dev.limits();
    uint32_t max_block = 4096;
    while (max_block > 64 && uint64_t(max_block) * 8 > uint64_t(L.max_shared_bytes)) max_block >>= 1;
    const bool single = P <= max_block;
    uint32_t wg, block = 0;
    if (single) {  // a workgroup of >= 32 invocations sorts BLOCK / P rows
        const uint32_t wg_max = std::min<uint32_t>(uint32_t(dev.workgroup_size()), max_block / 2);
        wg = std::min<uint32_t>(wg_max, std::max<uint32_t>(32, uint32_t(P / 2)));
        block = std::max<uint32_t>(uint32_t(P), 2 * wg);
    } else {  // radix: 16 digit counts per invocation in shared memory
        wg = std::min<uint32_t>(uint32_t(dev.workgroup_size()), 128);
        while (wg > 32 && uint64_t(wg) * 16 * 4 > uint64_t(L.max_shared_bytes)) wg >>= 1;
    }

    int32_t x_off = 0, v_off = 0, i_off = 0;
    const Binding xb = dev.window(x, "inputs[0] (x)", &x_off);
    const Binding ib = dev.window(ind, p.has_values ? "outputs[1] (indices)" : "outputs[0] (indices)", &i_off);
    const Binding vb = p.has_values ? dev.window(call.outputs[0], "outputs[0] (values)", &v_off) : ib;

    const int64_t* const outer_strides[3] = {p.outer_x_strides, p.outer_v_strides, p.outer_i_strides};
    const std::vector<MergedDim<3>> outer = merge_dims(p.outer_rank, p.outer_shape, outer_strides);
    // pass: a PASS_* define; rows_access: it reads x or writes the outputs (X_DTYPE, OUTER_RANK);
    // values: it writes the values (HAS_VALUES, for topk and sort).
    auto variant = [&](const char* pass, bool rows_access, bool values) {
        Defines d = {{pass, ""}, {def::kWorkgroupSize, str(wg)}};
        if (rows_access) {
            d.emplace_back(def::kXDtype, str(x.dtype));
            d.emplace_back(def::kIndexDtype, str(ind.dtype));
            d.emplace_back("OUTER_RANK", str(long(outer.size())));
        }
        if (values && p.has_values) d.emplace_back("HAS_VALUES", "");
        if (block) d.emplace_back("BLOCK", str(block));
        else d.emplace_back("CHUNK", str(kChunk));
        return dev.program("sort.comp", d);
    };

    Dispatch base;
    base.uniforms = {uniform_uint("u_n", {n}),
                     uniform_uint("u_kout", {kout}),
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

    std::vector<Dispatch> dispatches;
    if (single) {
        Dispatch d = base;
        d.program = variant("PASS_BLOCK", true, true);
        d.bindings = {vb, xb, ib};
        d.uniforms.push_back(uniform_uint("u_rows", {rows}));
        d.uniforms.push_back(uniform_uint("u_row_base", {0u}));
        add_chunks(dev, d, ceil_div(rows, block >> log2p), dispatches);
        dev.submit(call.info->name, std::move(dispatches));
        return;
    }

    // Radix sort. A batch's pairs (8 bytes per position) are bound as one storage block.
    const uint64_t window_positions = uint64_t(dev.max_window_bytes()) / 8;
    if (n > window_positions)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "op '%s': a row of %u elements needs %llu bytes of sort scratch ((key, index) pairs of 8 bytes) in one "
             "shader storage block, but one shader storage block on this device covers at most %lld bytes "
             "(GL_MAX_SHADER_STORAGE_BLOCK_SIZE = %lld): at most %llu elements per row",
             call.info->name, n, (unsigned long long)(uint64_t(n) * 8), (long long)dev.max_window_bytes(),
             (long long)L.max_ssbo_block_bytes, (unsigned long long)window_positions);
    const uint64_t cap = std::min(window_positions, std::max<uint64_t>(kMaxBatchPositions, n));
    const uint32_t batch = uint32_t(std::min<uint64_t>(rows, cap / n));
    const uint32_t tile = wg * kChunk;
    const uint32_t tiles = uint32_t(ceil_div(n, tile));
    const uint64_t counts = uint64_t(batch) * 16 * tiles;  // < 2^32: batch * n <= 2^28
    const uint32_t blocks = uint32_t(ceil_div(counts, uint64_t(wg) * 16));
    const uint64_t align = uint64_t(dev.window_alignment());
    const uint64_t pair_bytes = uint64_t(batch) * n * 8;
    const uint64_t pair_stride = ceil_div(pair_bytes, align) * align;
    const uint64_t count_bytes = (counts + blocks) * 4;
    const BufferRef scratch = dev.scratch(2 * pair_stride + count_bytes);
    const Binding pairs[2] = {sub_window(scratch, 0, pair_bytes), sub_window(scratch, pair_stride, pair_bytes)};
    const Binding cb = sub_window(scratch, 2 * pair_stride, count_bytes);

    for (uint32_t r0 = 0; r0 < rows; r0 += batch) {
        const uint32_t br = std::min(batch, rows - r0);
        const uint32_t m = br * 16 * tiles;
        const uint32_t bm = uint32_t(ceil_div(m, uint64_t(wg) * 16));
        Dispatch b = base;
        b.uniforms.push_back(uniform_uint("u_rows", {br}));
        b.uniforms.push_back(uniform_uint("u_row_base", {r0}));
        b.uniforms.push_back(uniform_uint("u_tiles", {tiles}));
        b.uniforms.push_back(uniform_uint("u_m", {m}));
        b.uniforms.push_back(uniform_uint("u_blocks", {bm}));
        for (uint32_t pass = 0; pass < kRadixPasses; ++pass) {
            // Pass 0 reads x; pass k writes pairs[k % 2] and reads pairs[1 - k % 2].
            const Binding& src = pairs[1 - pass % 2];
            const Binding& dst = pairs[pass % 2];
            Dispatch d = b;
            d.uniforms.push_back(uniform_uint("u_shift", {4 * pass}));
            d.uniforms.push_back(uniform_uint("u_from_x", {pass == 0 ? 1u : 0u}));
            d.bindings = {cb, xb, src, dst};
            d.program = variant("PASS_COUNT", true, false);
            add_chunks(dev, d, uint64_t(br) * tiles, dispatches);
            d.program = variant("PASS_SUMS", false, false);
            add_chunks(dev, d, bm, dispatches);
            d.program = variant("PASS_CARRY", false, false);
            add_chunks(dev, d, 1, dispatches);
            d.program = variant("PASS_APPLY", false, false);
            add_chunks(dev, d, bm, dispatches);
            d.program = variant("PASS_SCATTER", true, false);
            add_chunks(dev, d, uint64_t(br) * tiles, dispatches);
        }
        Dispatch o = b;
        o.program = variant("PASS_OUT", true, true);
        o.bindings = {vb, xb, ib, pairs[(kRadixPasses - 1) % 2]};
        add_chunks(dev, o, ceil_div(uint64_t(br) * kout, wg), dispatches);
    }
    dev.submit(call.info->name, std::move(dispatches));
}

void register_select_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Select, run_select, &kSelectSplit});
}

}  // namespace gles
}  // namespace tgl
