// GLES host side of the Pool family (plan: backends/common/pool_rules.h; shader: glsl/pool.comp):
// one dispatch per op, one invocation per written element (windowed, adaptive, upsampling and the
// backward gathers), or for global pooling one invocation per (n, c) plane when planes are small
// and one workgroup per plane (shared-memory tree) when they are large. Nothing is computed on
// the CPU.
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"
#include "validate_util.h"

#include <cstring>

namespace tgl {
namespace gles {
namespace {

using P = PoolPlan;

// Planes of at most this many elements get one invocation each in global pooling.
constexpr int64_t kThreadPlaneMax = 32;
// Global pooling of fewer planes than this, each of 4 or more chunks, runs in two passes; a plane
// has at most kMaxChunks chunks.
constexpr int64_t kSplitPlanes = 256;
constexpr uint64_t kMaxChunks = 1024;

const char* op_define(P::Kind k) {
    switch (k) {
    case P::kMaxPool: return "OP_MAX";
    case P::kAvgPool: return "OP_AVG";
    case P::kGlobalMax: return "OP_GLOBAL_MAX";
    case P::kGlobalAvg: return "OP_GLOBAL_AVG";
    case P::kAdaptiveAvg: return "OP_ADAPTIVE";
    case P::kNearest: return "OP_NEAREST";
    case P::kBilinear: return "OP_BILINEAR";
    case P::kMaxPoolBwd: return "OP_MAX_BWD";
    case P::kAvgPoolBwd: return "OP_AVG_BWD";
    default: return "OP_ADAPTIVE_BWD";
    }
}

std::vector<int32_t> i32x3(const int64_t (&v)[3], const char* what) {
    return {to_i32(v[0], what), to_i32(v[1], what), to_i32(v[2], what)};
}
std::vector<int32_t> i32x3(const int32_t (&v)[3]) { return {v[0], v[1], v[2]}; }

// Per spatial dim, the most positions of the box one written element walks (pool.comp's FOR_BOX:
// the taps of a max window, the inputs of an avg/adaptive window, the outputs whose window holds a
// dx element); 0 for the kinds without one.
void window_box(const P& p, int64_t (&box)[3]) {
    for (int d = 0; d < 3; ++d) {
        const int64_t k = p.kernel[d], in = p.in[d], out = p.out[d];
        switch (p.kind) {
        case P::kMaxPool: box[d] = k; break;
        case P::kAvgPool: box[d] = std::min(k, in); break;
        case P::kAdaptiveAvg: box[d] = std::min(in, in / std::max<int64_t>(out, 1) + 2); break;
        case P::kMaxPoolBwd:
        case P::kAvgPoolBwd: box[d] = std::min(out, (k - 1) * p.dilation[d] / p.stride[d] + 1); break;
        case P::kAdaptiveAvgBwd: box[d] = std::min(out, out / std::max<int64_t>(in, 1) + 2); break;
        default: box[d] = 0; break;
        }
    }
}

}  // namespace

void run_pool(GlesDevice& dev, const OpCall& call) {
    const P& p = call.pool();
    const OpInfo& info = *call.info;
    const bool bwd = p.kind == P::kMaxPoolBwd || p.kind == P::kAvgPoolBwd || p.kind == P::kAdaptiveAvgBwd;
    const bool global = p.kind == P::kGlobalMax || p.kind == P::kGlobalAvg;
    const int wg = dev.workgroup_size();

    // Blocks: 0 read, 1 written, 2 indices. Roles of the plan in block order.
    const TensorArg& read_t = call.inputs[0];  // x, or dy
    const TensorArg& write_t = call.outputs[0];
    const int role_of_block[3] = {bwd ? P::kY : P::kX, bwd ? P::kX : P::kY, P::kI};
    Dispatch base;
    int32_t offs[3] = {};
    base.bindings.push_back(dev.window(read_t, operand_label(info, false, 0).c_str(), &offs[0]));
    base.bindings.push_back(dev.window(write_t, operand_label(info, true, 0).c_str(), &offs[1]));
    if (p.has_indices) {
        const TensorArg& idx = bwd ? call.inputs[1] : call.outputs[1];
        base.bindings.push_back(dev.window(idx, operand_label(info, !bwd, 1).c_str(), &offs[2]));
    }

    // 32-bit index arithmetic: the adaptive windows form o * in and w * out.
    const bool adaptive = p.kind == P::kAdaptiveAvg || p.kind == P::kAdaptiveAvgBwd;
    for (int d = 0; d < 3; ++d)
        if (adaptive && (p.in[d] + 1) * (p.out[d] + 1) > INT32_MAX)
            fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': spatial sizes %lld and %lld exceed the 32-bit index arithmetic of GLSL ES 3.10",
                 info.name, (long long)p.in[d], (long long)p.out[d]);
    const int64_t plane_in = p.in[0] * p.in[1] * p.in[2];
    const int64_t planes = p.N * p.C;
    const int64_t written = planes * (bwd ? plane_in : global ? 1 : p.out[0] * p.out[1] * p.out[2]);
    const bool group = global && plane_in > kThreadPlaneMax;

    // A workgroup per plane: about 4 elements per invocation (at least 32 invocations, at most the
    // device's 1-D size), so that small planes (7x7 in a classifier head) do not idle most of it.
    int group_wg = 32;
    while (group_wg < wg && int64_t(group_wg) * 4 < plane_in) group_wg *= 2;
    Defines defines = {{op_define(p.kind), ""}, {def::kDtype, str(call.dtype)}, {def::kWorkgroupSize, str(group ? group_wg : wg)}};
    if (p.has_indices && !bwd) defines.emplace_back("HAS_IDX", "");
    if (p.count_include_pad) defines.emplace_back("CIP", "");
    if (p.align_corners) defines.emplace_back("ALIGN", "");
    if (global) defines.emplace_back(group ? "MODE_GROUP" : "MODE_THREAD", "");
    base.program = dev.program("pool.comp", defines);

    std::vector<int32_t> sn, sc, sp, off;
    for (int b = 0; b < 3; ++b) {
        const int r = role_of_block[b];
        sn.push_back(to_i32(p.stride_n[r], "a stride of an operand"));
        sc.push_back(to_i32(p.stride_c[r], "a stride of an operand"));
        for (int d = 0; d < 3; ++d) sp.push_back(to_i32(p.stride_sp[r][d], "a stride of an operand"));
        off.push_back(offs[b]);
    }
    std::vector<int32_t> scale_bits(3);
    std::memcpy(scale_bits.data(), p.scale, sizeof p.scale);
    const uint32_t count = count_u32(group || global ? planes : written, "the output");
    base.uniforms = {uniform_uint("u_count", {count}),
                     uniform_int("u_C", {to_i32(p.C, "the channels")}),
                     uniform_int("u_in", i32x3(p.in, "a spatial dim")),
                     uniform_int("u_out", i32x3(p.out, "a spatial dim")),
                     uniform_int("u_kernel", i32x3(p.kernel)),
                     uniform_int("u_stride", i32x3(p.stride)),
                     uniform_int("u_pad", i32x3(p.pad_begin)),
                     uniform_int("u_pad_end", i32x3(p.pad_end)),
                     uniform_int("u_dil", i32x3(p.dilation)),
                     uniform_int("u_scale_bits", scale_bits),
                     uniform_int("u_off", off),
                     uniform_int("u_sn", sn),
                     uniform_int("u_sc", sc),
                     uniform_int("u_sp", sp)};
    count_u32(plane_in, "a spatial plane of x");
    std::vector<Dispatch> dispatches;

    // Windows whose three nested loops would pass the loop budget are walked flat, a range of
    // loop_items_within(budget, 1) positions per dispatch (WIN_SPLIT); the state between dispatches
    // (max: 4 words, sums: 1) goes through scratch words per written element.
    int64_t box[3];
    window_box(p, box);
    const uint64_t b0 = uint64_t(std::max<int64_t>(box[0], 0)), b1 = uint64_t(std::max<int64_t>(box[1], 0)),
                   b2 = uint64_t(std::max<int64_t>(box[2], 0));
    if (!global && loop_cost(b0) + loop_cost(b1, b0) + loop_cost(b2, b0 * b1) > loop_budget(dev)) {
        const uint64_t vol = b0 * b1 * b2, range = std::min(vol, loop_items_within(loop_budget(dev), 1));
        to_i32(int64_t(vol), "the positions of a pooling window");
        const uint64_t words = p.kind == P::kMaxPool ? 4 : 1;
        const uint64_t bytes = uint64_t(written) * words * 4;
        if (bytes > uint64_t(dev.max_window_bytes()))
            fail(TGL_ERROR_RESOURCE_EXHAUSTED,
                 "op '%s': a window of %llu positions takes several dispatches, whose running state for %lld outputs "
                 "(%llu bytes) exceeds one shader storage block (%lld bytes)",
                 info.name, (unsigned long long)vol, (long long)written, (unsigned long long)bytes, (long long)dev.max_window_bytes());
        Dispatch split = base;
        Defines defs = defines;
        defs.emplace_back("WIN_SPLIT", "");
        split.program = dev.program("pool.comp", defs);
        Binding state;
        state.keep = dev.scratch(std::max<uint64_t>(bytes, 4));
        state.name = static_cast<GlesBuffer&>(*state.keep).name();
        state.size = int64_t(std::max<uint64_t>(bytes, 4));
        while (split.bindings.size() < 3) split.bindings.push_back(split.bindings[1]);  // block 2 unused: a stand-in
        split.bindings.push_back(state);
        for (uint64_t t = 0; t < vol; t += range) {
            Dispatch d = split;
            d.uniforms.push_back(uniform_int("u_t_begin", {int32_t(t)}));
            d.uniforms.push_back(uniform_int("u_t_end", {int32_t(std::min(vol, t + range))}));
            d.uniforms.push_back(uniform_uint("u_last", {t + range >= vol ? 1u : 0u}));
            add_chunks(dev, d, ceil_div(count, uint64_t(wg)), dispatches);
        }
        dev.submit(info.name, std::move(dispatches));
        return;
    }

    // Few large planes (3 planes of a megapixel would keep 3 workgroups busy): each plane is cut
    // into chunks of at least 16 elements per invocation, one workgroup each (PASS_PARTIAL, f32
    // partials in scratch), then PASS_FINAL combines each plane's partials and stores y.
    uint64_t chunk = uint64_t(group_wg) * 16;
    uint64_t chunks = ceil_div(uint64_t(plane_in), chunk);
    if (chunks > kMaxChunks) {
        chunk = ceil_div(uint64_t(plane_in), kMaxChunks);
        chunks = ceil_div(uint64_t(plane_in), chunk);
    }
    // Chunks short enough for the loop budget (at most 2^31 / (32767 * 32) = 2048 of them, which
    // PASS_FINAL's invocations walk in 64 passes or fewer).
    const uint64_t max_chunk = std::min<uint64_t>(loop_items_within(loop_budget(dev), 1), uint64_t(plane_in)) * uint64_t(group_wg);
    if (chunk > max_chunk) {
        chunk = max_chunk;
        chunks = ceil_div(uint64_t(plane_in), chunk);
    }
    // Planes of more loop passes per invocation than the budget are always split.
    const bool long_plane = loop_cost(ceil_div(uint64_t(plane_in), uint64_t(group_wg))) > loop_budget(dev);
    if (group && ((planes < kSplitPlanes && chunks >= 4) || long_plane)) {
        const uint64_t parts = uint64_t(planes) * chunks;
        BufferRef scratch = dev.scratch(parts * 4);
        Binding sb;
        sb.keep = scratch;
        sb.name = static_cast<GlesBuffer&>(*scratch).name();
        sb.size = int64_t(parts * 4);
        auto pass = [&](const char* define, Binding in, Binding out, uint64_t count_, int wg_) {
            Dispatch d = base;
            d.bindings = {std::move(in), std::move(out)};
            Defines defs = defines;
            defs.emplace_back(define, "");
            for (auto& def : defs)
                if (def.first == def::kWorkgroupSize) def.second = str(wg_);
            d.program = dev.program("pool.comp", defs);
            d.uniforms[0] = uniform_uint("u_count", {uint32_t(count_)});
            d.uniforms.push_back(uniform_uint("u_chunks", {uint32_t(chunks)}));
            d.uniforms.push_back(uniform_uint("u_chunk", {uint32_t(chunk)}));
            add_chunks(dev, d, count_, dispatches);
        };
        int final_wg = 32;
        while (final_wg < wg && uint64_t(final_wg) * 4 < chunks) final_wg *= 2;
        pass("PASS_PARTIAL", base.bindings[0], sb, parts, group_wg);
        pass("PASS_FINAL", sb, base.bindings[1], uint64_t(planes), final_wg);
    } else {
        add_chunks(dev, base, group ? uint64_t(count) : ceil_div(count, uint64_t(wg)), dispatches);
    }
    dev.submit(info.name, std::move(dispatches));
}

void register_pool_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Pool, run_pool, &kPoolSplit});
}

}  // namespace gles
}  // namespace tgl
