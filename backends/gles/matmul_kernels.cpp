// GLES host side of the Matmul family (plan: backends/common/matmul_rules.h; shader:
// glsl/matmul.comp): side operands (expert index, bias, scales, zero points) are packed by
// PASS_PACK dispatches into one scratch block of f32/i32 words (the index checked there, a
// device-side error), then the tiled product runs as one dispatch per grid chunk. linear_qkv
// writes its three outputs from one dispatch when the device has enough SSBO bindings (2 + 3 +
// side), else one dispatch per output (the same kernel over W's rows of that output). Nothing is
// computed on the CPU.
#include "gles_device.h"
#include "dispatch_util.h"

#include <algorithm>

namespace tgl {
namespace gles {
namespace {

struct Tile {
    int bm, bn, bk, tm, tn;
};

int64_t mag(int64_t s) { return s < 0 ? -s : s; }

// PASS_PACK of a rank <= 2 operand (rows x cols, strides s0, s1) into side words at dst_base.
void add_pack(GlesDevice& dev, const OpCall& call, int slot, int64_t rows, int64_t cols, int64_t s0, int64_t s1,
              const Binding& side, int64_t dst_base, std::vector<Dispatch>& out, uint32_t* check_seq = nullptr) {
    const TensorArg& t = call.inputs[size_t(slot)];
    const uint64_t numel = uint64_t(rows * cols);
    if (numel == 0) return;
    const int wg = dev.workgroup_size();
    const bool index = slot == call.matmul.index_input;
    std::string label = "inputs[" + std::to_string(slot) + "] (" + call.info->operand_names[slot] + ")";
    int32_t off = 0;
    Binding src = dev.window(t, label.c_str(), &off);
    Defines defs = {{"PASS_PACK", ""}, {"WG_SIZE", str(wg)}, {"SRC_DTYPE", str(t.dtype)}};
    if (index) defs.emplace_back("PACK_INDEX", "");
    Dispatch d;
    d.program = dev.program("matmul.comp", defs);
    d.bindings = {src, side};
    d.uniforms = {uniform_uint("u_numel", {count_u32(int64_t(numel), label.c_str())}),
                  uniform_int("u_cols", {to_i32(std::max<int64_t>(cols, 1), "a side operand's dim")}),
                  uniform_int("u_src_offset", {off}),
                  uniform_int("u_src_str", {to_i32(rows == 1 ? 0 : s0, "a stride of a side operand"),
                                            to_i32(cols == 1 ? 0 : s1, "a stride of a side operand")}),
                  uniform_int("u_dst_base", {to_i32(dst_base, "the side block")})};
    const uint64_t groups = ceil_div(numel, uint64_t(wg));
    if (!index) {
        add_chunks(dev, d, groups, out);
        return;
    }
    // The index: a check dispatch, then the report dispatch that also publishes the fail flag.
    const GlesDevice::DeviceCheck check = dev.device_check();
    *check_seq = check.seq;
    d.bindings.push_back(check.status);
    d.uniforms.push_back(uniform_int("u_limit", {to_i32(call.matmul.experts, "the number of experts")}));
    d.uniforms.push_back(uniform_uint("u_op", {uint32_t(call.info->op)}));
    d.uniforms.push_back(uniform_uint("u_check_seq", {check.seq}));
    Dispatch report = d;
    d.uniforms.push_back(uniform_uint("u_report", {0u}));
    report.uniforms.push_back(uniform_uint("u_report", {1u}));
    add_chunks(dev, d, groups, out);
    add_chunks(dev, report, groups, out);
}

}  // namespace

void run_matmul(GlesDevice& dev, const OpCall& call) {
    MatmulPlan p = call.matmul;
    const Limits& L = dev.limits();
    const bool grouped = p.index_input >= 0;
    // A stride along a dim of size 1 is never used: zero it so that it cannot overflow 32 bits.
    if (p.M == 1) {
        p.a_m_stride = 0;
        for (int o = 0; o < p.n_out; ++o) p.out[o].m_stride = 0;
    }
    if (p.N == 1) p.b_n_stride = 0;
    for (int o = 0; o < p.n_out; ++o)
        if (p.out[o].n == 1) p.out[o].n_stride = 0;
    if (p.K == 1) p.a_k_stride = p.b_k_stride = 0;
    if (p.experts == 1) p.b_e_stride = 0;
    // Batch dims of size 1 dropped, neighbours merged where contiguous for every operand.
    struct BatchDim {
        int64_t n, as, bs, cs[3];
    };
    std::vector<BatchDim> batch;
    for (int d = 0; d < p.batch_rank; ++d) {
        BatchDim cur{p.batch_shape[d], p.a_batch_strides[d], p.b_batch_strides[d], {}};
        for (int o = 0; o < p.n_out; ++o) cur.cs[o] = p.out[o].batch_strides[d];
        if (cur.n == 1) continue;
        bool merge = !batch.empty() && batch.back().as == cur.as * cur.n && batch.back().bs == cur.bs * cur.n;
        for (int o = 0; o < p.n_out; ++o) merge = merge && batch.back().cs[o] == cur.cs[o] * cur.n;
        if (merge) {
            BatchDim& b = batch.back();
            b.n *= cur.n;
            b.as = cur.as;
            b.bs = cur.bs;
            for (int o = 0; o < p.n_out; ++o) b.cs[o] = cur.cs[o];
        } else {
            batch.push_back(cur);
        }
    }
    const int32_t M = int32_t(count_u32(p.M, "the rows (M) of the product"));
    const int32_t K = int32_t(count_u32(p.K, "the inner dim (K) of the product"));
    count_u32(p.N, "the columns (N) of the product");
    const uint32_t batch_count = count_u32(p.batch_count, "the batch of the outputs");
    std::vector<Dispatch> dispatches;

    // The side block: [0] fail flag, then index (M), bias (E x N or N), scales (N x groups),
    // zero points (N x groups), each as contiguous words.
    const int64_t groups = p.b_kind == MatmulPlan::BKind::Int4 ? p.groups : 1;
    int64_t words = 1, idx_base = 0, bias_base = 0, scale_base = 0, zero_base = 0;
    auto reserve = [&](bool present, int64_t n, int64_t& base) {
        if (!present) return;
        base = words;
        words += n;
    };
    reserve(grouped, p.M, idx_base);
    reserve(p.bias_input >= 0, (grouped ? p.experts : 1) * p.N, bias_base);
    reserve(p.scale_input >= 0, p.N * groups, scale_base);
    reserve(p.zero_input >= 0, p.N * groups, zero_base);
    const bool has_side = words > 1;
    Binding side;
    uint32_t check_seq = 0;
    if (has_side) {
        if (words * 4 > dev.max_window_bytes())
            fail(TGL_ERROR_RESOURCE_EXHAUSTED,
                 "op '%s': its index, bias, scales and zero points take %lld bytes as f32, more than one shader storage block (%lld bytes)",
                 call.info->name, (long long)(words * 4), (long long)dev.max_window_bytes());
        side.keep = dev.scratch(uint64_t(words * 4));
        side.name = static_cast<GlesBuffer&>(*side.keep).name();
        side.size = words * 4;
        if (grouped) add_pack(dev, call, p.index_input, 1, p.M, 0, p.index_stride, side, idx_base, dispatches, &check_seq);
        if (p.bias_input >= 0)
            add_pack(dev, call, p.bias_input, grouped ? p.experts : 1, p.N, p.bias_e_stride, p.bias_n_stride, side,
                     bias_base, dispatches);
        if (p.scale_input >= 0)
            add_pack(dev, call, p.scale_input, p.N, groups, p.scale_n_stride, p.scale_g_stride, side, scale_base, dispatches);
        if (p.zero_input >= 0)
            add_pack(dev, call, p.zero_input, p.N, groups, p.zero_n_stride, p.zero_g_stride, side, zero_base, dispatches);
    }

    // Tiles: 128 x 128 with 8 x 8 outputs per invocation for large products (enough tiles to fill
    // a GPU), 64 x 64 or 32 x 32 with 4 x 4, and 4 x 32 rows x columns with one output each and a
    // deep K step for decode-shaped products (M <= 4: a mat-vec whose cost is reading W once);
    // each only where the device's invocation, workgroup-size and shared-memory limits allow it.
    auto fits = [&](const Tile& t) {
        int wx = t.bn / t.tn, wy = t.bm / t.tm;
        int shared = (t.bk * (t.bm + 1 + t.bn + 1) + t.bm + 1) * 4;
        return wx * wy <= L.max_invocations && wx <= L.max_size[0] && wy <= L.max_size[1] && shared <= L.max_shared_bytes;
    };
    const Tile big{128, 128, 16, 8, 8}, mid{64, 64, 16, 4, 4}, small{32, 32, 16, 4, 4}, skinny{4, 32, 64, 1, 1};
    const int64_t Nmax = p.N;
    uint64_t tiles128 = ceil_div(uint64_t(M), 128) * ceil_div(uint64_t(Nmax), 128) * batch_count;
    Tile t = small;
    // The 128 x 128 tile (64 accumulators per invocation) ran 2.0 TFLOP/s at 4096^3 on an H100
    // with NVIDIA's GLES compiler, below the 64 x 64 tile: it stays off until it is reworked.
    constexpr bool kBigTileEnabled = false;
    if (M <= 4 && fits(skinny)) t = skinny;
    else if (kBigTileEnabled && fits(big) && M >= 256 && Nmax >= 256 && tiles128 >= 128) t = big;
    else if (fits(mid) && !(M <= 32 && Nmax <= 32) && M > 16 && Nmax > 16) t = mid;
    if (!fits(t))
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "%s: the device's compute limits (%d invocations, %d x %d workgroup size, %d bytes shared memory) "
             "cannot hold a %dx%d tile",
             call.info->name, L.max_invocations, L.max_size[0], L.max_size[1], L.max_shared_bytes, t.bm, t.bn);
    const bool a_k_fast = mag(p.a_k_stride) == 1 || (mag(p.a_m_stride) != 1 && mag(p.a_k_stride) < mag(p.a_m_stride));
    const bool b_n_fast = mag(p.b_n_stride) == 1 || (mag(p.b_k_stride) != 1 && mag(p.b_n_stride) < mag(p.b_k_stride));

    // One dispatch for all outputs, or (linear_qkv on a device with too few SSBO bindings) one per
    // output over its rows of W.
    const int side_blocks = has_side ? 1 : 0;
    const bool split_outputs = p.n_out == 3 && 2 + 3 + side_blocks > L.max_compute_ssbo_blocks;
    int32_t a_off = 0, b_off = 0;
    std::vector<Binding> cb(size_t(p.n_out));
    std::vector<int32_t> c_off(size_t(p.n_out));
    for (int o = 0; o < p.n_out; ++o)
        if (p.out[o].n > 0 && call.outputs[size_t(o)].numel > 0)
            cb[size_t(o)] = dev.window(call.outputs[size_t(o)], ("outputs[" + std::to_string(o) + "]").c_str(), &c_off[size_t(o)]);
    Binding any_out;  // stands in for the binding of an empty output (never written)
    for (const Binding& b : cb)
        if (b.keep) any_out = b;
    Binding ab, bb;
    if (K > 0) {
        ab = dev.window(call.inputs[0], "inputs[0]", &a_off);
        bb = dev.window(call.inputs[1], "inputs[1]", &b_off);
    }

    struct Pass {
        std::vector<int> outs;  // output indices
        int64_t n_base, n;      // W rows [n_base, n_base + n)
    };
    std::vector<Pass> passes;
    if (split_outputs) {
        int64_t base = 0;
        for (int o = 0; o < 3; ++o) {
            if (p.out[o].n > 0) passes.push_back({{o}, base, p.out[o].n});
            base += p.out[o].n;
        }
    } else {
        std::vector<int> all;
        for (int o = 0; o < p.n_out; ++o) all.push_back(o);
        passes.push_back({all, 0, p.N});
    }

    for (const Pass& pass : passes) {
        const int n_out = int(pass.outs.size());
        Defines defs = {{"BM", str(t.bm)}, {"BN", str(t.bn)}, {"BK", str(t.bk)}, {"TM", str(t.tm)}, {"TN", str(t.tn)},
                        {"WG_X", str(t.bn / t.tn)}, {"WG_Y", str(t.bm / t.tm)}, {"BATCH_RANK", str(long(batch.size()))},
                        {"A_DTYPE", str(p.a_dtype)}, {"B_DTYPE", str(p.b_dtype)}, {"C_DTYPE", str(p.c_dtype)},
                        {"B_KIND", str(int(p.b_kind))}, {"N_OUT", str(n_out)}, {"ACTIVATION", str(p.activation)}};
        if (a_k_fast) defs.emplace_back("A_K_FAST", "");
        if (b_n_fast) defs.emplace_back("B_N_FAST", "");
        if (has_side) defs.emplace_back("HAS_SIDE", "");
        if (p.bias_input >= 0) defs.emplace_back("HAS_BIAS", "");
        if (p.zero_input >= 0) defs.emplace_back("HAS_ZERO", "");
        if (grouped) defs.emplace_back("EXPERTS", "");
        if (p.beta != 0.0f) defs.emplace_back("READ_C", "");
        Dispatch base;
        base.program = dev.program("matmul.comp", defs);
        // K == 0: A and B are empty and never read; an output stands in for their bindings.
        base.bindings = {K > 0 ? ab : any_out, K > 0 ? bb : any_out};
        for (int o : pass.outs) base.bindings.push_back(cb[size_t(o)].keep ? cb[size_t(o)] : any_out);
        if (has_side) base.bindings.push_back(side);

        std::vector<int32_t> co, cm, cn, cbs;
        for (int o : pass.outs) {
            co.push_back(c_off[size_t(o)]);
            cm.push_back(to_i32(p.out[o].m_stride, "a stride of an output"));
            cn.push_back(to_i32(p.out[o].n_stride, "a stride of an output"));
        }
        auto& U = base.uniforms;
        U.push_back(uniform_int("u_M", {M}));
        U.push_back(uniform_int("u_N", {int32_t(pass.n)}));
        U.push_back(uniform_int("u_K", {K}));
        U.push_back(uniform_int("u_a_offset", {a_off}));
        U.push_back(uniform_int("u_b_offset", {to_i32(b_off + pass.n_base * p.b_n_stride, "W's offset")}));
        U.push_back(uniform_int("u_a_m_stride", {to_i32(p.a_m_stride, "a stride of inputs[0]")}));
        U.push_back(uniform_int("u_a_k_stride", {to_i32(p.a_k_stride, "a stride of inputs[0]")}));
        U.push_back(uniform_int("u_b_k_stride", {to_i32(p.b_k_stride, "a stride of inputs[1]")}));
        U.push_back(uniform_int("u_b_n_stride", {to_i32(p.b_n_stride, "a stride of inputs[1]")}));
        U.push_back(uniform_int("u_b_e_stride", {to_i32(p.b_e_stride, "a stride of inputs[1]")}));
        U.push_back(uniform_int("u_c_offset", co));
        U.push_back(uniform_int("u_c_m_stride", cm));
        U.push_back(uniform_int("u_c_n_stride", cn));
        U.push_back(uniform_int("u_n_split", {int32_t(p.out[0].n), int32_t(p.out[0].n + p.out[1].n)}));
        U.push_back(uniform_float("u_alpha", p.alpha));
        U.push_back(uniform_float("u_beta", p.beta));
        U.push_back(uniform_int("u_idx_base", {int32_t(idx_base)}));
        U.push_back(uniform_int("u_bias_base", {int32_t(bias_base + pass.n_base)}));
        U.push_back(uniform_int("u_bias_e", {to_i32(p.N, "N")}));
        U.push_back(uniform_int("u_scale_base", {int32_t(scale_base + pass.n_base * groups)}));
        U.push_back(uniform_int("u_zero_base", {int32_t(zero_base + pass.n_base * groups)}));
        U.push_back(uniform_int("u_groups", {int32_t(groups)}));
        U.push_back(uniform_int("u_group_size", {int32_t(std::max<int64_t>(p.group_size, 1))}));
        if (grouped) U.push_back(uniform_uint("u_check_seq", {check_seq}));
        if (!batch.empty()) {
            std::vector<int32_t> n, as, bs;
            for (const BatchDim& d : batch) {
                n.push_back(to_i32(d.n, "a batch dimension"));
                as.push_back(to_i32(d.as, "a batch stride of inputs[0]"));
                bs.push_back(to_i32(d.bs, "a batch stride of inputs[1]"));
                for (int o : pass.outs) cbs.push_back(to_i32(d.cs[o], "a batch stride of an output"));
            }
            U.push_back(uniform_int("u_batch_shape", n));
            U.push_back(uniform_int("u_a_batch_stride", as));
            U.push_back(uniform_int("u_b_batch_stride", bs));
            U.push_back(uniform_int("u_c_batch_stride", cbs));
        }

        // Grid: N tiles x M tiles x batch, split into dispatches within the per-axis limits.
        uint64_t nx = ceil_div(uint64_t(pass.n), uint64_t(t.bn)), ny = ceil_div(uint64_t(M), uint64_t(t.bm));
        uint64_t mx = uint64_t(L.max_count[0]), my = uint64_t(L.max_count[1]), mz = uint64_t(L.max_count[2]);
        for (uint64_t bz = 0; bz < batch_count; bz += mz)
            for (uint64_t by = 0; by < ny; by += my)
                for (uint64_t bx = 0; bx < nx; bx += mx) {
                    Dispatch d = base;
                    d.uniforms.push_back(uniform_uint("u_tile_base", {uint32_t(bx), uint32_t(by), uint32_t(bz)}));
                    d.groups[0] = uint32_t(std::min(nx - bx, mx));
                    d.groups[1] = uint32_t(std::min(ny - by, my));
                    d.groups[2] = uint32_t(std::min(uint64_t(batch_count) - bz, mz));
                    dispatches.push_back(std::move(d));
                }
    }
    dev.submit(call.info->name, std::move(dispatches));
}

}  // namespace gles
}  // namespace tgl
