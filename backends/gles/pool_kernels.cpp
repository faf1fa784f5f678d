// GLES host side of the Pool family (plan: backends/common/pool_rules.h; shader: glsl/pool.comp):
// one dispatch per op, one invocation per written element (windowed, adaptive, upsampling and the
// backward gathers), or for global pooling one invocation per (n, c) plane when planes are small
// and one workgroup per plane (shared-memory tree) when they are large. Nothing is computed on
// the CPU.
#include "gles_device.h"
#include "dispatch_util.h"
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

}  // namespace

void run_pool(GlesDevice& dev, const OpCall& call) {
    const P& p = call.pool;
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
    Defines defines = {{op_define(p.kind), ""}, {"DTYPE", str(call.dtype)}, {"WG_SIZE", str(group ? group_wg : wg)}};
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

    // Few large planes (3 planes of a megapixel would keep 3 workgroups busy): each plane is cut
    // into chunks of at least 16 elements per invocation, one workgroup each (PASS_PARTIAL, f32
    // partials in scratch), then PASS_FINAL combines each plane's partials and stores y.
    uint64_t chunk = uint64_t(group_wg) * 16;
    uint64_t chunks = ceil_div(uint64_t(plane_in), chunk);
    if (chunks > kMaxChunks) {
        chunk = ceil_div(uint64_t(plane_in), kMaxChunks);
        chunks = ceil_div(uint64_t(plane_in), chunk);
    }
    if (group && planes < kSplitPlanes && chunks >= 4) {
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
                if (def.first == "WG_SIZE") def.second = str(wg_);
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

}  // namespace gles
}  // namespace tgl
