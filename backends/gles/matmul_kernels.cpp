// GLES host side of the Matmul family (plan: backends/common/matmul_rules.h; shader:
// glsl/matmul.comp): side operands (expert index, bias, scales, zero points) are packed by the
// pack pass (pack.cpp) into one scratch block of f32/i32 words (the index checked there, a
// device-side error), then the tiled product runs as one dispatch per grid chunk. linear_qkv
// writes its three outputs from one dispatch when the device has enough SSBO bindings (2 + 3 +
// side), else one dispatch per output (the same kernel over W's rows of that output). Per pass
// the kernel is: the mat-vec kernel (M <= 8, W read as quads), or tiles: FAST where A and B can be
// read as quads (float, no experts: offsets and strides multiples of 4, windows of whole quads),
// else the general tiles; split over K (partials + a reduce pass) where the tiles are few and K
// long. Every plan keeps each invocation's loop passes within the loop budget (loop_budget.h): K
// is split wherever a workgroup's K range would pass it, and grouped_linear's experts go to several
// dispatches where a tile's passes over its experts would. Knobs for tuning on a GPU:
// TGL_TUNE_MATMUL (tuning() below). Nothing is computed on the CPU.
#include "gles_device.h"
#include "debug_notes.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace tgl {
namespace gles {
namespace {

struct Tile {
    int bm, bn, bk, tm, tn;
};

// Split-K (few output tiles, a long K) and the mat-vec kernel (decode).
constexpr uint64_t kSplitMinK = 256, kSplitMaxBytes = uint64_t(64) << 20;
constexpr int kGemvMaxM = 8;  // rows of a product that take the GEMV kernel
constexpr int kGemvWg = 64;   // invocations per GEMV workgroup for W k-contiguous
// Warp tiles of the default 128 x 128 FAST tile (0: the interleaved mapping); see fast_candidate.
constexpr int kBigWarpLanes = 8;

// A window read as quads (FAST, GEMV): extended to whole 16-byte quads where the buffer's store
// (padded to 4 bytes) and the block size limit allow; false where they do not.
bool quad_window(GlesDevice& dev, Binding& b, const TensorArg& t) {
    const int64_t store = std::max<int64_t>(4, (int64_t(t.buffer->size()) + 3) & ~int64_t(3));
    const int64_t size = (b.size + 15) & ~int64_t(15);
    if (b.offset + size > store || size > dev.max_window_bytes()) return false;
    b.size = size;
    return true;
}

int64_t mag(int64_t s) { return s < 0 ? -s : s; }

// Loop passes of one K step of BK in the tiled kernels: the step loop once, the product loop BK + 1
// times (measured on llvmpipe: unrolled for some tiles only; the loaders' loops are unrolled).
uint64_t tile_step_passes(int bk) { return 1 + loop_cost(uint64_t(bk)); }

// Loop passes of one GEMV loop trip (`unroll` quads of W and GEMV_M rows each), were none of its
// inner loops unrolled.
uint64_t gemv_trip_passes(int rows, int unroll) {
    return 1 + loop_cost(uint64_t(unroll)) + uint64_t(unroll) * loop_cost(uint64_t(rows)) * 2;
}

// The pack pass (pack.cpp) of a rank <= 2 operand (rows x cols, strides s0, s1) into side words
// at dst_base. The expert index is checked under a fresh device check (*check_seq), or under
// `given`'s; with `checked`, it was checked before (a piece of an op run in pieces): packed only.
void pack_side_operand(GlesDevice& dev, const OpCall& call, int slot, int64_t rows, int64_t cols, int64_t s0, int64_t s1,
                       const Binding& side, int64_t dst_base, std::vector<Dispatch>& out, uint32_t* check_seq = nullptr,
                       const GlesDevice::DeviceCheck* given = nullptr, bool checked = false) {
    if (rows * cols == 0) return;
    const TensorArg& t = call.inputs[size_t(slot)];
    std::string label = "inputs[" + std::to_string(slot) + "] (" + call.info->operand_names[slot] + ")";
    PackSource src;
    src.window = dev.window(t, label.c_str(), &src.offset);
    src.dtype = t.dtype;
    src.numel = rows * cols;
    src.shape = {rows, cols};
    src.strides = {s0, s1};
    if (slot != call.matmul().index_input) return add_pack(dev, src, label, side, dst_base, out);
    const PackIndexCheck index{given ? *given : dev.device_check(),
                               to_i32(call.matmul().experts, "the number of experts"), uint32_t(call.info->op), checked};
    if (check_seq) *check_seq = index.check.seq;
    add_pack(dev, src, label, side, dst_base, out, &index);
}

// The kernel of one pass (GEMV, tiled with split-K partials, or tiled) and its scratch partials.
enum class Mode { Tiled, Split, Gemv };
struct Plan {
    Mode mode = Mode::Tiled;
    Tile t{};
    bool fast = false, double_buf = false;
    int a_quad = 0, b_quad = 0;
    int lanes = 1;          // GEMV: invocations along k per column (W k-contiguous) or per quad of columns
    int gemv_wg = kGemvWg;  // GEMV: invocations per workgroup
    int unroll = 4;         // GEMV: loads of W in flight per invocation
    bool direct = false;    // GEMV of one K range: the epilogue in the GEMV pass (no partials, no reduce pass)
    int half_run = 0;       // FAST with f16 A and B: products summed in packed f16 over runs of this many k (0: f32)
    int warp_lanes = 0;     // FAST: warp tiles of 32 / warp_lanes x warp_lanes invocations (0: interleaved)
    int k_roll = 0;         // FAST, f32 products: the K step in rolled groups of this many k (0: unrolled)
    uint64_t splits = 1, k_chunk = 0;
    int64_t part_offset = 0, part_bytes = 0;
};

// Columns of one GEMV workgroup: one per GEMV_LK lanes (W k-contiguous) or a quad per GEMV_KR lanes.
uint64_t gemv_columns_per_workgroup(const Plan& pl) { return uint64_t((pl.b_quad == 1 ? 1 : 4) * pl.gemv_wg / pl.lanes); }

// General tiles: 64 x 64 or 32 x 32 with 4 x 4 outputs per invocation, and 4 x 32 rows x columns
// with one output each and a deep K step for decode-shaped products (M <= 4: a mat-vec whose cost
// is reading W once); each only where the device's invocation, workgroup-size and shared-memory
// limits allow it. (A general 128 x 128 tile with 8 x 8 per invocation ran 2.0 TFLOP/s on an H100,
// below 64 x 64: its accumulators spilled; FAST tiles replace it.)
bool tile_fits(const Limits& L, const Tile& t, bool fast, int bufs = 1) {
    int wx = t.bn / t.tn, wy = t.bm / t.tm;
    int shared = fast ? bufs * t.bk * (t.bm + 4 + t.bn + 4) * 4 : (t.bk * (t.bm + 1 + t.bn + 1) + t.bm + 1) * 4;
    return wx * wy <= L.max_invocations && wx <= L.max_size[0] && wy <= L.max_size[1] && shared <= L.max_shared_bytes;
}

// What the kernel candidates of one pass look at.
struct PassShape {
    GlesDevice& dev;
    const MatmulTuning& tune;
    int32_t M, K;
    int64_t N;             // the whole product's columns
    int64_t n;             // this pass's columns
    uint64_t batch_count;
    bool grouped;
    int a_quad, b_quad;    // how A and B can be read as quads (0: not at all)
    bool half;             // f16 A and B on a device with packed f16 arithmetic (GlesDevice::half_arith)
    int tune_half_run;     // TGL_TUNE_HALF's run
    uint64_t out_elems;    // the pass's outputs
    uint64_t max_part;     // the most partials (f32) the scratch takes
};

// The candidates, in order of preference: each takes the pass (fills the plan, returns "") or
// declines with the reason; the reasons are the error where none takes it.

// Mat-vec (decode): K ranges of k_chunk (default 32 rows of W or quads along k per lane), as many
// as the partials allow, then PASS_REDUCE; one K range runs the epilogue in the GEMV pass
// (GEMV_DIRECT). W n-contiguous without a tuned K range: one pass over all of K in workgroups of
// gdw invocations over gdq quads of columns where those alone make gd to 2 gd - 1
// workgroups (H200: 1x4096x4096's 128 ran 0.0209 gpu ms against 0.0262 split; 1x4096x11008's 344,
// more than one wave of 1024-invocation workgroups, 0.0726 against 0.0537 split).
std::string gemv_candidate(const PassShape& s, Plan& pl) {
    if (!s.b_quad) return "W cannot be read as quads";
    if (s.M > kGemvMaxM) return format("M = %d rows, more than %d", s.M, kGemvMaxM);
    if (s.K == 0) return "K = 0";
    if (s.tune.gemv_chunk == 0) return "turned off by TGL_TUNE_MATMUL";
    if (s.out_elems == 0) return "no outputs";
    if (s.out_elems > s.max_part) return format("the partials of %llu outputs exceed the scratch", (unsigned long long)s.out_elems);
    pl.mode = Mode::Gemv;
    pl.a_quad = s.a_quad;
    pl.b_quad = s.b_quad;
    pl.unroll = s.tune.gemv_unroll;
    bool one_range = false;
    if (pl.b_quad == 1) {
        pl.lanes = s.tune.gemv_lanes;
    } else {
        // W n-contiguous: the tuned workgroup within the device's limits (a vec4 of shared memory
        // per invocation), with at most as many lanes along k.
        const Limits& L = s.dev.limits();
        auto fit = [&](int wg) {
            while (wg > 1 && (wg > L.max_invocations || wg > L.max_size[0] || wg * 16 > L.max_shared_bytes)) wg /= 2;
            return wg;
        };
        pl.gemv_wg = fit(s.tune.gemv_wg);
        pl.lanes = std::min(s.tune.gemv_k_lanes, pl.gemv_wg);
        const int direct_wg = fit(s.tune.gemv_direct_wg);
        // Quads of columns per workgroup (gdq): on an H200, 8 with 1024 invocations streamed W
        // fastest (1x4096x4096: 0.0207 ms; 4 with 512 0.0212, 16 0.0240, 4 with 1024 0.0278;
        // docs/gpu.md).
        const int direct_quads = s.tune.gemv_direct_quads;
        const uint64_t direct_slabs = ceil_div(uint64_t(s.n), 4 * uint64_t(direct_quads)) * s.batch_count;
        if (s.tune.gemv_chunk < 0 && s.tune.gemv_direct > 0 && direct_wg >= direct_quads &&
            direct_slabs >= uint64_t(s.tune.gemv_direct) && direct_slabs < 2 * uint64_t(s.tune.gemv_direct)) {
            pl.gemv_wg = direct_wg;
            pl.lanes = direct_wg / direct_quads;
            one_range = true;
        }
    }
    pl.k_chunk = s.tune.gemv_chunk > 0 ? uint64_t(s.tune.gemv_chunk) : uint64_t(32 * pl.lanes);
    pl.k_chunk = one_range ? ceil_div(uint64_t(s.K), 4) * 4 : std::max<uint64_t>(4, pl.k_chunk / 4 * 4);
    pl.splits = std::min<uint64_t>(ceil_div(uint64_t(s.K), pl.k_chunk), std::max<uint64_t>(1, s.max_part / s.out_elems));
    // An invocation walks its K range in trips of GEMV_UNROLL quads along k (lanes apart), or of
    // GEMV_UNROLL rows of W (lanes apart).
    const uint64_t k_trip = (pl.b_quad == 1 ? 4 : 1) * uint64_t(pl.unroll) * uint64_t(pl.lanes);
    const uint64_t k_max =
        std::min(loop_items_within(loop_budget(s.dev), gemv_trip_passes(s.M, pl.unroll), 8), ceil_div(uint64_t(s.K), k_trip)) * k_trip;
    pl.splits = std::max(pl.splits, ceil_div(uint64_t(s.K), k_max));
    pl.k_chunk = std::max<uint64_t>(4, ceil_div(ceil_div(uint64_t(s.K), pl.splits), 4) * 4);
    pl.splits = ceil_div(uint64_t(s.K), pl.k_chunk);
    pl.direct = pl.splits == 1;
    return "";
}

// Split K where there are very few tiles and a long K (skinny N, small M * N): `want` ways (the
// FAST shape rule's count), else, for the general tiles, where there are fewer than an eighth of
// the target: up to the target workgroups, K ranges of at least kSplitMinK; TGL_TUNE_MATMUL ks
// overrides both. Partials within kSplitMaxBytes. And a workgroup's K range within the loop
// budget, whatever the tile count (grouped_linear splits its experts instead, in run_matmul).
void plan_split_k(const PassShape& s, Plan& pl, uint64_t want = 0) {
    const uint64_t tiles = ceil_div(uint64_t(s.n), uint64_t(pl.t.bn)) * ceil_div(uint64_t(s.M), uint64_t(pl.t.bm)) * s.batch_count;
    const uint64_t target = uint64_t(s.tune.split_target);
    uint64_t splits = 1;
    if (!s.grouped && want == 0 && tiles > 0 && tiles * 8 < target && uint64_t(s.K) >= 2 * kSplitMinK)
        want = std::min<uint64_t>(ceil_div(target, tiles), uint64_t(s.K) / kSplitMinK);
    if (!s.grouped && s.tune.splits > 0) want = uint64_t(s.tune.splits);
    if (want > 1 && s.K > 0) splits = std::max<uint64_t>(1, std::min<uint64_t>(want, s.max_part / std::max<uint64_t>(1, s.out_elems)));
    const uint64_t k_max = std::min(loop_items_within(loop_budget(s.dev), tile_step_passes(pl.t.bk)), ceil_div(uint64_t(s.K), uint64_t(pl.t.bk))) *
                           uint64_t(pl.t.bk);
    if (!s.grouped && uint64_t(s.K) > k_max) splits = std::max(splits, ceil_div(uint64_t(s.K), k_max));
    if (splits > 1) {
        pl.k_chunk = ceil_div(ceil_div(uint64_t(s.K), splits), uint64_t(pl.t.bk)) * uint64_t(pl.t.bk);
        pl.splits = ceil_div(uint64_t(s.K), pl.k_chunk);
        pl.mode = pl.splits > 1 ? Mode::Split : Mode::Tiled;
    }
}

// Whether warp tiles of 32 / lanes x lanes invocations divide tile t (matmul.comp's WARP_LN).
bool warp_tiles_fit(const Tile& t, int lanes) {
    const int invocations = (t.bm / t.tm) * (t.bn / t.tn);
    return lanes > 0 && invocations % 32 == 0 && t.bn % (lanes * t.tn) == 0 && t.bm % (32 / lanes * t.tm) == 0;
}

// FAST tiles (A and B read as quads), the shape rule: a tile of 256 invocations shaped to the
// product, 128 x 128 (8 x 8 per invocation), or 128 x 64 (8 x 4) where N <= 64, or 64 x 128 (4 x 8)
// where M <= 64, with K split into as many ranges (of at least kSplitMinK) as keep its workgroups
// within one wave (TGL_TUNE_MATMUL wave invocations at once), where those fill at least half a
// wave; else 64 x 64 (4 x 4) with the general split rule, else 32 x 32. TGL_TUNE_MATMUL's tile
// comes first. On an H200 (docs/gpu.md, "Matmul shapes"): 1024^3 0.127 ms as 128 x 128 split 4
// (64 x 64 unsplit, the old plan: 0.145); 8192 x 8192 x 64 0.537 as 128 x 64 split 4 (64 x 64 split
// 9: 0.763); 2048^3 0.692 as 128 x 128 unsplit (64 x 64: 1.10). Tiles of 8 x 8 in 128 or 64
// invocations ran 1.5-2x slower than these.
std::string fast_candidate(const PassShape& s, Plan& pl) {
    if (!s.a_quad || !s.b_quad) return "A and B cannot both be read as quads (float, no experts, quad-aligned layouts)";
    const Limits& L = s.dev.limits();
    const Tile fast_mid{64, 64, 16, 4, 4}, fast_small{32, 32, 16, 4, 4};
    const Tile shaped{s.M > 64 ? 128 : 64, s.N > 64 ? 128 : 64, 8, s.M > 64 ? 8 : 4, s.N > 64 ? 8 : 4};
    const uint64_t tiles = ceil_div(uint64_t(s.M), uint64_t(shaped.bm)) * ceil_div(uint64_t(s.N), uint64_t(shaped.bn)) * s.batch_count;
    // 8 x 4 tiles (half the accumulators) fit 3 workgroups per SM where 8 x 8 fit 2: skinny
    // 8192 x 8192 x 64 ran 0.454 ms split 6 (384 workgroups) against 0.533 split 4 on an H200.
    const uint64_t wave = std::max<uint64_t>(
        1, uint64_t(s.tune.wave) / uint64_t(shaped.bm / shaped.tm * (shaped.bn / shaped.tn)) * (shaped.tm * shaped.tn < 64 ? 3 : 2) / 2);
    const uint64_t splits = std::max<uint64_t>(1, std::min<uint64_t>(wave / std::max<uint64_t>(1, tiles), uint64_t(s.K) / kSplitMinK));
    // (Packed f16 keeps these tiles: 128 x 128 with K steps of 16, where a run can span 16 k, ran
    // 9.97 ms at 4096^3 on an H200 against 5.70 with steps of 8; docs/half-precision.md.)
    struct Choice {
        Tile t;
        uint64_t splits;  // 0: plan_split_k's general rule
    };
    std::vector<Choice> order;
    if (s.tune.tile.bm) order.push_back({Tile{s.tune.tile.bm, s.tune.tile.bn, s.tune.tile.bk, s.tune.tile.tm, s.tune.tile.tn}, 0});
    if (shaped.bm + shaped.bn > 128 && tiles * splits >= wave / 2) order.push_back({shaped, splits});
    if (s.M > 16 && s.N > 16) order.push_back({fast_mid, 0});
    order.push_back({fast_small, 0});
    for (const Choice& c : order) {
        const Tile& t = c.t;
        if (!tile_fits(L, t, true)) continue;
        pl.fast = true;
        pl.t = t;
        pl.a_quad = s.a_quad;
        pl.b_quad = s.b_quad;
        // Double buffering, warp tiles: TGL_TUNE_MATMUL's db and wl on every tile (wl where its warp
        // tiles divide the tile), else the defaults: 128 x 128 tiles single-buffered with
        // kBigWarpLanes (H200, 4096^3: 4.71 ms against 5.35 double-buffered), the others
        // double-buffered without warp tiles.
        const bool big = t.bm == 128 && t.bn == 128 && t.tm == 8 && t.tn == 8;
        pl.double_buf = (s.tune.double_buf >= 0 ? s.tune.double_buf != 0 : !big) && tile_fits(L, t, true, 2);
        const int lanes = s.tune.warp_lanes >= 0 ? s.tune.warp_lanes : big ? kBigWarpLanes : 0;
        pl.warp_lanes = warp_tiles_fit(t, lanes) ? lanes : 0;
        if (s.half) {
            // The longest run of at most TGL_TUNE_HALF's that divides the K step (both powers of two).
            pl.half_run = 1;
            while (pl.half_run * 2 <= s.tune_half_run && t.bk % (pl.half_run * 2) == 0) pl.half_run *= 2;
        }
        pl.k_roll = !pl.half_run && s.tune.k_roll > 0 && t.bk % s.tune.k_roll == 0 ? s.tune.k_roll : 0;
        plan_split_k(s, pl, c.splits);
        return "";
    }
    return "no FAST tile fits the device's compute limits";
}

std::string general_candidate(const PassShape& s, Plan& pl) {
    const Limits& L = s.dev.limits();
    const Tile mid{64, 64, 16, 4, 4}, small{32, 32, 16, 4, 4}, skinny{4, 32, 64, 1, 1};
    Tile t = small;
    if (s.M <= 4 && tile_fits(L, skinny, false)) t = skinny;
    else if (tile_fits(L, mid, false) && !(s.M <= 32 && s.N <= 32) && s.M > 16 && s.N > 16) t = mid;
    if (!tile_fits(L, t, false))
        return format("the device's compute limits (%d invocations, %d x %d workgroup size, %d bytes shared memory) cannot "
                      "hold a %dx%d tile", L.max_invocations, L.max_size[0], L.max_size[1], L.max_shared_bytes, t.bm, t.bn);
    pl.t = t;
    pl.a_quad = s.a_quad;  // (the loaders' defines name them)
    pl.b_quad = s.b_quad;
    plan_split_k(s, pl);
    return "";
}

const KernelCandidate<const PassShape&, Plan&> kCandidates[] = {
    {"gemv", gemv_candidate}, {"fast", fast_candidate}, {"general", general_candidate}};

}  // namespace

void add_expert_index_check(GlesDevice& dev, const OpCall& call, const GlesDevice::DeviceCheck& check,
                            std::vector<Dispatch>& ds) {
    const MatmulPlan& p = call.matmul();
    if (p.M == 0) return;
    // The values are packed into words nobody reads: the pieces pack their own.
    Binding words;
    words.keep = dev.internal_buffer(uint64_t(p.M + 1) * 4);
    words.name = static_cast<GlesBuffer&>(*words.keep).name();
    words.size = (p.M + 1) * 4;
    pack_side_operand(dev, call, p.index_input, 1, p.M, 0, p.index_stride, words, 1, ds, nullptr, &check);
}

void run_matmul(GlesDevice& dev, const OpCall& call) { run_matmul(dev, call, nullptr); }

void run_matmul(GlesDevice& dev, const OpCall& call, const IndexPiece* piece, int64_t scratch_floor) {
    MatmulPlan p = call.matmul();
    const Limits& L = dev.limits();
    const bool grouped = p.index_input >= 0;
    // A piece of grouped_linear run in pieces: W and the bias hold experts [e_first, e_first + E).
    const int64_t e_first = piece ? piece->axis_lo : 0;
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
    {
        const int64_t none[TGL_MAX_RANK] = {};  // outputs past n_out
        const int64_t* strides[5] = {p.a_batch_strides, p.b_batch_strides, p.out[0].batch_strides,
                                     p.n_out > 1 ? p.out[1].batch_strides : none, p.n_out > 2 ? p.out[2].batch_strides : none};
        for (const MergedDim<5>& m : merge_dims<5>(p.batch_rank, p.batch_shape, strides))
            batch.push_back(BatchDim{m.n, m.s[0], m.s[1], {m.s[2], m.s[3], m.s[4]}});
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
    if (has_side && words * 4 > dev.max_window_bytes())
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "op '%s': its index, bias, scales and zero points take %lld bytes as f32, more than one shader storage block (%lld bytes)",
             call.info->name, (long long)(words * 4), (long long)dev.max_window_bytes());
    auto pack_side = [&](const Binding& side) {
        if (grouped)
            pack_side_operand(dev, call, p.index_input, 1, p.M, 0, p.index_stride, side, idx_base, dispatches, &check_seq,
                              piece ? &piece->check : nullptr, piece != nullptr);
        if (p.bias_input >= 0)
            pack_side_operand(dev, call, p.bias_input, grouped ? p.experts : 1, p.N, p.bias_e_stride, p.bias_n_stride, side,
                     bias_base, dispatches);
        if (p.scale_input >= 0)
            pack_side_operand(dev, call, p.scale_input, p.N, groups, p.scale_n_stride, p.scale_g_stride, side, scale_base, dispatches);
        if (p.zero_input >= 0)
            pack_side_operand(dev, call, p.zero_input, p.N, groups, p.zero_n_stride, p.zero_g_stride, side, zero_base, dispatches);
    };

    // Kernel choices that depend on the GPU, for sweeping them on one: TGL_TUNE_MATMUL (tuning.h).
    const MatmulTuning& tune = dev.tuning().matmul;
    // Packed f16 products (FAST tiles): f16 A and B only; bf16 and f32 operands keep f32 arithmetic
    // (f16 would not hold their range or precision).
    const bool half = dev.half_arith() && dev.tuning().half.matmul && p.a_dtype == TGL_DTYPE_F16 && p.b_dtype == TGL_DTYPE_F16 &&
                      p.b_kind == MatmulPlan::BKind::Float && !grouped;
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
    Binding ab, bb, abq, bbq;
    bool quad_windows = false;  // A's and B's windows end on whole quads (abq, bbq)
    if (K > 0) {
        ab = dev.window(call.inputs[0], "inputs[0]", &a_off);
        bb = dev.window(call.inputs[1], "inputs[1]", &b_off);
        abq = ab;
        bbq = bb;
        quad_windows = quad_window(dev, abq, call.inputs[0]) && quad_window(dev, bbq, call.inputs[1]);
    }
    // Quads of X along its contiguous dim (stride 1), every quad loaded whole starting on a quad
    // boundary: offset and the other strides multiples of 4. 0: no quads, 1: along k, 2: along m/n.
    auto quad_dir = [&](int64_t off, int64_t k_stride, int64_t r_stride, const int64_t BatchDim::*bs) {
        bool aligned = off % 4 == 0;
        for (const BatchDim& d : batch) aligned = aligned && d.*bs % 4 == 0;
        if (!aligned) return 0;
        if (k_stride == 1 && r_stride % 4 == 0) return 1;
        if (r_stride == 1 && k_stride % 4 == 0) return 2;
        return 0;
    };
    const int a_quad = quad_dir(a_off, p.a_k_stride, p.a_m_stride, &BatchDim::as);
    const bool quads_ok = quad_windows && p.b_kind == MatmulPlan::BKind::Float && !grouped && !tune.general;

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

    // Per pass: the kernel (the first candidate that takes it), then the scratch block that holds
    // the side words and every pass's partials (one request: the scratch is one buffer).
    std::vector<Plan> plans;
    const int64_t align = dev.window_alignment();
    const int64_t floor_bytes = (scratch_floor + align - 1) / align * align;
    int64_t scratch_bytes = floor_bytes + (has_side ? (words * 4 + align - 1) / align * align : 0);
    for (const Pass& pass : passes) {
        const int64_t b_pass_off = b_off + pass.n_base * p.b_n_stride;
        const int b_quad = quads_ok ? quad_dir(b_pass_off, p.b_k_stride, pass.n == 1 ? 0 : p.b_n_stride, &BatchDim::bs) : 0;
        const uint64_t out_elems = uint64_t(batch_count) * uint64_t(M) * uint64_t(pass.n);
        const uint64_t max_part = std::min<uint64_t>(kSplitMaxBytes, uint64_t(dev.max_window_bytes())) / 4;
        const PassShape shape{dev, tune, M, K, p.N, pass.n, batch_count, grouped, quads_ok ? a_quad : 0, b_quad, half, dev.tuning().half.run,
                              out_elems, max_part};
        Plan pl;
        take_first_candidate(kCandidates, format("op '%s' (M %d, N %lld, K %d)", call.info->name, M, (long long)pass.n, K),
                             shape, pl);
        if (pl.mode != Mode::Tiled && !pl.direct) {
            // Splits the loop budget forces may take partials up to a block.
            if (pl.splits * out_elems > uint64_t(dev.max_window_bytes()) / 4)
                fail(TGL_ERROR_RESOURCE_EXHAUSTED,
                     "op '%s': K = %d is split %llu ways to keep each shader invocation's loops within %llu passes (llvmpipe "
                     "stops loops after 65535); the partials of %llu outputs exceed one shader storage block (%llu bytes)",
                     call.info->name, K, (unsigned long long)pl.splits, (unsigned long long)kLoopTripBudget,
                     (unsigned long long)out_elems, (unsigned long long)dev.max_window_bytes());
            check_loop_budget(dev, loop_cost(pl.splits), call.info->name, "the sum over K splits");
            pl.part_offset = scratch_bytes;
            pl.part_bytes = int64_t(pl.splits * out_elems * 4);
            scratch_bytes += (pl.part_bytes + align - 1) / align * align;
        }
        // TGL_GLES_DEBUG: the kernel chosen (which path a product takes, for tuning and tests).
        static const bool debug = debug_enabled();
        if (debug)
            std::fprintf(stderr, "tensorgl-gles: %s M %d N %lld K %d batch %u: %s, tile %dx%dx%d %dx%d, warp lanes %d, k roll %d, quads A %d B %d, splits %llu, f16 run %d\n",
                         call.info->name, M, (long long)pass.n, K, batch_count,
                         pl.mode == Mode::Gemv ? (pl.direct ? "gemv direct" : "gemv") : pl.fast ? (pl.double_buf ? "fast db" : "fast") : "general", pl.t.bm, pl.t.bn, pl.t.bk, pl.t.tm, pl.t.tn,
                         pl.warp_lanes, pl.k_roll, pl.a_quad, pl.b_quad, (unsigned long long)pl.splits, pl.half_run);
        plans.push_back(pl);
    }
    BufferRef scratch_buf;
    if (scratch_bytes > floor_bytes) scratch_buf = dev.scratch(uint64_t(scratch_bytes));
    auto scratch_window = [&](int64_t offset, int64_t bytes) {
        Binding b;
        b.keep = scratch_buf;
        b.name = static_cast<GlesBuffer&>(*scratch_buf).name();
        b.offset = offset;
        b.size = bytes;
        return b;
    };
    if (has_side) {
        side = scratch_window(floor_bytes, words * 4);
        pack_side(side);
    }

    for (size_t pi = 0; pi < passes.size(); ++pi) {
        const Pass& pass = passes[pi];
        const Plan& pl = plans[pi];
        const Tile& t = pl.t;
        // The defines of the loaders (A, B, batch) and of the epilogue (outputs, bias, activation).
        auto defines = [&](bool loaders, bool epilogue, int n_out) {
            Defines defs = {{"BATCH_RANK", str(long(batch.size()))}, {def::kADtype, str(p.a_dtype)}, {def::kBDtype, str(p.b_dtype)},
                            {def::kCDtype, str(p.c_dtype)}, {"B_KIND", str(int(p.b_kind))}, {"N_OUT", str(n_out)}};
            if (loaders) {
                if (pl.a_quad == 1) defs.emplace_back("A_QUAD_K", "");
                if (pl.b_quad == 1) defs.emplace_back("B_QUAD_K", "");
                if (p.zero_input >= 0) defs.emplace_back("HAS_ZERO", "");
                if (grouped) defs.emplace_back("EXPERTS", "");
                if (p.b_kind != MatmulPlan::BKind::Float) defs.emplace_back("HAS_SIDE", "");
            }
            if (epilogue) {
                defs.emplace_back("ACTIVATION", str(p.activation));
                if (has_side && !(loaders && p.b_kind != MatmulPlan::BKind::Float)) defs.emplace_back("HAS_SIDE", "");
                if (p.bias_input >= 0) defs.emplace_back("HAS_BIAS", "");
                if (p.beta != 0.0f) defs.emplace_back("READ_C", "");
            }
            return defs;
        };
        auto tile_defines = [&](Defines defs) {
            for (auto [name, v] : {std::pair<const char*, int>{"BM", t.bm}, {"BN", t.bn}, {"BK", t.bk}, {"TM", t.tm}, {"TN", t.tn},
                                   {"WG_X", t.bn / t.tn}, {"WG_Y", t.bm / t.tm}})
                defs.emplace_back(name, str(v));
            if (pl.fast) {
                defs.emplace_back("FAST", "");
                if (pl.double_buf) defs.emplace_back("DOUBLE_BUF", "");
                if (pl.warp_lanes) defs.emplace_back("WARP_LN", str(pl.warp_lanes));
                if (pl.k_roll) defs.emplace_back("K_ROLL", str(pl.k_roll));
                if (pl.half_run) {
                    defs.emplace_back(def::kRequireExtension, "GL_NV_gpu_shader5");
                    defs.emplace_back("HALF_RUN", str(pl.half_run));
                }
            } else {
                if (a_k_fast) defs.emplace_back("A_K_FAST", "");
                if (b_n_fast) defs.emplace_back("B_N_FAST", "");
            }
            return defs;
        };
        // Bindings and uniforms for outputs `outs` (the partial passes bind the partials instead).
        auto make_base = [&](const std::vector<int>& outs, bool with_side) {
            Dispatch base;
            // K == 0: A and B are empty and never read; an output stands in for their bindings.
            base.bindings = {K > 0 ? (pl.fast || pl.mode == Mode::Gemv ? abq : ab) : any_out,
                             K > 0 ? (pl.fast || pl.mode == Mode::Gemv ? bbq : bb) : any_out};
            for (int o : outs) base.bindings.push_back(cb[size_t(o)].keep ? cb[size_t(o)] : any_out);
            if (with_side) base.bindings.push_back(side);
            std::vector<int32_t> co, cm, cn, cbs;
            for (int o : outs) {
                co.push_back(c_off[size_t(o)]);
                cm.push_back(to_i32(p.out[o].m_stride, "a stride of an output"));
                cn.push_back(to_i32(p.out[o].n_stride, "a stride of an output"));
            }
            auto& U = base.uniforms;
            U.push_back(uniform_int("u_M", {M}));
            U.push_back(uniform_int("u_N", {int32_t(pass.n)}));
            U.push_back(uniform_int("u_K", {K}));
            U.push_back(uniform_int("u_a_offset", {a_off}));
            U.push_back(uniform_int("u_b_offset", {to_i32(b_off + pass.n_base * p.b_n_stride - e_first * p.b_e_stride, "W's offset")}));
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
            U.push_back(uniform_int("u_bias_base", {to_i32(bias_base + pass.n_base - e_first * p.N, "the bias's base")}));
            U.push_back(uniform_int("u_bias_e", {to_i32(p.N, "N")}));
            U.push_back(uniform_int("u_scale_base", {int32_t(scale_base + pass.n_base * groups)}));
            U.push_back(uniform_int("u_zero_base", {int32_t(zero_base + pass.n_base * groups)}));
            U.push_back(uniform_int("u_groups", {int32_t(groups)}));
            U.push_back(uniform_int("u_group_size", {int32_t(std::max<int64_t>(p.group_size, 1))}));
            U.push_back(uniform_int("u_splits", {int32_t(pl.splits)}));
            U.push_back(uniform_int("u_k_chunk", {int32_t(pl.k_chunk)}));
            U.push_back(uniform_int("u_batch_count", {int32_t(batch_count)}));
            if (pl.k_roll) U.push_back(uniform_int("u_k_groups", {t.bk / pl.k_roll}));
            if (grouped) U.push_back(uniform_uint("u_check_seq", {check_seq}));
            if (!batch.empty()) {
                std::vector<int32_t> n, as, bs;
                for (const BatchDim& d : batch) {
                    n.push_back(to_i32(d.n, "a batch dimension"));
                    as.push_back(to_i32(d.as, "a batch stride of inputs[0]"));
                    bs.push_back(to_i32(d.bs, "a batch stride of inputs[1]"));
                    for (int o : outs) cbs.push_back(to_i32(d.cs[o], "a batch stride of an output"));
                }
                U.push_back(uniform_int("u_batch_shape", n));
                U.push_back(uniform_int("u_a_batch_stride", as));
                U.push_back(uniform_int("u_b_batch_stride", bs));
                U.push_back(uniform_int("u_c_batch_stride", cbs));
            }
            return base;
        };
        // A grid of nx x ny x nz workgroups, split into dispatches within the per-axis limits.
        auto add_grid = [&](const Dispatch& base, uint64_t nx, uint64_t ny, uint64_t nz) {
            uint64_t mx = uint64_t(L.max_count[0]), my = uint64_t(L.max_count[1]), mz = uint64_t(L.max_count[2]);
            for (uint64_t bz = 0; bz < nz; bz += mz)
                for (uint64_t by = 0; by < ny; by += my)
                    for (uint64_t bx = 0; bx < nx; bx += mx) {
                        Dispatch d = base;
                        d.uniforms.push_back(uniform_uint("u_tile_base", {uint32_t(bx), uint32_t(by), uint32_t(bz)}));
                        d.groups[0] = uint32_t(std::min(nx - bx, mx));
                        d.groups[1] = uint32_t(std::min(ny - by, my));
                        d.groups[2] = uint32_t(std::min(nz - bz, mz));
                        dispatches.push_back(std::move(d));
                    }
        };
        // The GEMV pass: its defines (on top of `defs`) and its grid's column slabs.
        auto gemv_defines = [&](Defines defs) {
            defs.emplace_back("PASS_GEMV", "");
            defs.emplace_back("WG_X", str(pl.gemv_wg));
            defs.emplace_back("GEMV_M", str(M));
            defs.emplace_back("GEMV_UNROLL", str(pl.unroll));
            defs.emplace_back(pl.b_quad == 1 ? "GEMV_LK" : "GEMV_KR", str(pl.lanes));
            dev.add_subgroup_define(defs, pl.gemv_wg);
            return defs;
        };
        const uint64_t gemv_slabs = ceil_div(uint64_t(pass.n), gemv_columns_per_workgroup(pl));
        const uint64_t nx = pl.mode == Mode::Gemv ? 0 : ceil_div(uint64_t(pass.n), uint64_t(t.bn));
        const uint64_t ny = pl.mode == Mode::Gemv ? 0 : ceil_div(uint64_t(M), uint64_t(t.bm));
        const int n_out = int(pass.outs.size());
        if (pl.mode == Mode::Tiled) {
            Defines defs = tile_defines(defines(true, true, n_out));
            // f16/bf16 C, one output, columns in quads (FAST): an invocation owns both halves of a
            // word where the output's element offsets of even columns are even.
            const auto& o0 = p.out[pass.outs[0]];
            bool pair = pl.fast && n_out == 1 && p.c_dtype != TGL_DTYPE_F32 && o0.n_stride == 1 && c_off[size_t(pass.outs[0])] % 2 == 0 &&
                        o0.m_stride % 2 == 0;
            for (const BatchDim& d : batch) pair = pair && d.cs[pass.outs[0]] % 2 == 0;
            if (pair) defs.emplace_back("C_PAIR", "");
            Dispatch base = make_base(pass.outs, has_side);
            base.program = dev.program("matmul.comp", defs);
            if (!grouped) {
                add_grid(base, nx, ny, batch_count);
                continue;
            }
            // grouped_linear: a tile makes one pass per distinct expert of its rows (plus the one
            // that finds none left), each a scan of its rows and the whole K loop. Experts at most
            // `per` per dispatch keep those passes within the loop budget.
            const uint64_t steps = ceil_div(uint64_t(K), uint64_t(t.bk));
            const uint64_t scan = 1 + loop_cost(uint64_t(t.bm)), k_loop = loop_cost(steps) + steps * loop_cost(uint64_t(t.bk));
            check_loop_budget(dev, 2 * scan + k_loop, call.info->name, "one expert's pass over K in a grouped_linear tile");
            const uint64_t per = (loop_budget(dev) - scan) / (scan + k_loop), experts = uint64_t(std::max<int64_t>(p.experts, 1));
            const uint64_t range = std::min<uint64_t>(uint64_t(t.bm), experts) <= per ? experts : per;
            for (uint64_t e = 0; e < experts; e += range) {
                Dispatch d = base;
                d.uniforms.push_back(uniform_int("u_e_lo", {to_i32(e_first + int64_t(e), "an expert")}));
                d.uniforms.push_back(uniform_int("u_e_hi", {to_i32(e_first + int64_t(std::min(experts, e + range)), "an expert")}));
                add_grid(d, nx, ny, batch_count);
            }
            continue;
        }
        if (pl.direct) {  // GEMV over all of K, the epilogue in the same pass
            Defines defs = gemv_defines(defines(true, true, n_out));
            defs.emplace_back("GEMV_DIRECT", "");
            Dispatch base = make_base(pass.outs, has_side);
            base.program = dev.program("matmul.comp", defs);
            add_grid(base, gemv_slabs, 1, batch_count);
            continue;
        }
        // Partials of every K range into the scratch (binding 2), then PASS_REDUCE: the sums in
        // split order and the epilogue.
        const Binding parts = scratch_window(pl.part_offset, pl.part_bytes);
        const bool part_side = p.b_kind != MatmulPlan::BKind::Float;
        Dispatch partial = make_base({pass.outs[0]}, part_side);
        partial.bindings[2] = parts;
        if (pl.mode == Mode::Split) {
            Defines defs = tile_defines(defines(true, false, 1));
            defs.emplace_back("SPLIT_K", "");
            partial.program = dev.program("matmul.comp", defs);
            add_grid(partial, nx, ny, uint64_t(batch_count) * pl.splits);
        } else {
            partial.program = dev.program("matmul.comp", gemv_defines(defines(true, false, 1)));
            add_grid(partial, gemv_slabs, pl.splits, batch_count);
        }
        Defines rd = defines(false, true, n_out);
        rd.emplace_back("PASS_REDUCE", "");
        const int wg = dev.workgroup_size();
        rd.emplace_back(def::kWorkgroupSize, str(wg));
        Dispatch reduce = make_base(pass.outs, has_side);
        reduce.bindings[0] = reduce.bindings[1] = parts;
        reduce.program = dev.program("matmul.comp", rd);
        add_chunks(dev, reduce, ceil_div(uint64_t(batch_count) * uint64_t(M) * uint64_t(pass.n), uint64_t(wg)), dispatches);
    }
    dev.submit(call.info->name, std::move(dispatches));
}

void register_matmul_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Matmul, run_matmul, &kMatmulSplit});
}

}  // namespace gles
}  // namespace tgl
