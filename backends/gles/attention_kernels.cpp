// GLES host side of the Attention family (plan: backends/common/attention_rules.h; shader:
// glsl/attention.comp). Tile sizes come from the queried limits (shared memory, invocations), so
// head dims up to 256 run within OpenGL ES 3.1's minimum of 16 KiB and 128 invocations.
// Forward: one PASS_FLASH dispatch (q, k, v, mask?, o, lse?) where a kv head has 16+ query rows,
// a FlashTile fits the device and no split is wanted; else one PASS_FWD dispatch, or, when the
// grid of query tiles is small against a long key sequence (decoding), one invocation's key loop
// would exceed the device's loop budget (loop_budget.h), or the device has too few storage
// blocks, a split PASS_FWD writing partials to scratch and a PASS_COMBINE; under 4 blocks
// with a mask, k and v are first packed into the scratch block too (the pack pass, pack.cpp). Backward: q, k,
// v, do and lse packed to f32 in scratch, delta = rowsum(do * o) (PASS_DELTA), then PASS_DKDV
// and PASS_DQ (no atomics).
#include "gles_device.h"
#include "debug_notes.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"
#include "validate_util.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace tgl {
namespace gles {
namespace {

using R = AttentionPlan::Role;

// Workgroups a dispatch should have at least before the key sequence is split (flash-decoding).
constexpr int64_t kTargetGroups = 512;

int64_t pow2_floor(int64_t v) {
    int64_t p = 1;
    while (p * 2 <= v) p *= 2;
    return p;
}
int64_t pow2_ceil(int64_t v) {
    int64_t p = 1;
    while (p < v) p *= 2;
    return p;
}

// Loop passes (loop_budget.h) of attention's invocations, per key (or row) tile and once. Loops
// with constant bounds of at most 8 trips are unrolled by the compiler and not counted; every other
// loop is, whether or not the compiler unrolls it (on llvmpipe, Mesa 22.3, the largest key splits
// these plans allow measured 16,000..29,300 passes at D 1..256, f32/f16, PASS_FWD and PASS_FLASH,
// driver and minimum limits; a budget of 32,768 against llvmpipe's 65,535).
struct LoopPasses {
    uint64_t per_tile, fixed;
    // Tiles of keys one invocation may walk within `budget` (at least 1).
    uint64_t tiles_within(uint64_t budget) const { return loop_items_within(budget, per_tile, fixed); }
};
uint64_t unrolled_or(int64_t trips) { return trips <= 8 ? 0 : loop_cost(uint64_t(trips)); }

// PASS_FWD with its tile (bq rows, bk keys, sk keys per score invocation, tpr invocations per row,
// wg invocations) at head dims d, dv.
LoopPasses fwd_passes(int64_t d, int64_t dv, int64_t bq, int64_t bk, int64_t sk, int64_t tpr, int64_t wg) {
    auto walk = [&](int64_t n) { return loop_cost(ceil_div(uint64_t(n), uint64_t(wg))); };  // e = tid; e < n; e += WG
    const int64_t nacc = int64_t(ceil_div(uint64_t(dv), uint64_t(tpr)));
    const uint64_t score_iters = ceil_div(uint64_t(bq * (bk / sk)), uint64_t(wg));
    LoopPasses p;
    p.per_tile = 1 + walk(bk * d) + loop_cost(score_iters) + score_iters * (unrolled_or(d) + 3 * unrolled_or(sk)) +
                 walk(bk * dv) + unrolled_or(bk) + loop_cost(ceil_div(uint64_t(bk), uint64_t(tpr))) + unrolled_or(nacc) +
                 std::max<uint64_t>(1, unrolled_or(bk) * (1 + unrolled_or(nacc)));
    p.fixed = walk(bq * d) + 2 * loop_cost(uint64_t(nacc)) + 8;
    return p;
}

// PASS_DQ (per key tile) and PASS_DKDV (per row tile) with tiles of t rows and t keys, tpr
// invocations per row or key, wg invocations, at head dims d, dv.
LoopPasses bwd_passes(int64_t d, int64_t dv, int64_t t, int64_t tpr, int64_t wg) {
    auto walk = [&](int64_t n) { return loop_cost(ceil_div(uint64_t(n), uint64_t(wg))); };
    const uint64_t pair_iters = ceil_div(uint64_t(t * t), uint64_t(wg));
    const int64_t nacc = int64_t(ceil_div(uint64_t(std::max(d, dv)), uint64_t(tpr)));
    LoopPasses p;
    p.per_tile = 1 + walk(t * d) + walk(t * dv) + loop_cost(pair_iters) + pair_iters * (unrolled_or(d) + unrolled_or(dv)) +
                 unrolled_or(t) * (1 + 2 * unrolled_or(nacc));
    p.fixed = walk(t * d) + walk(t * dv) + 4 * loop_cost(uint64_t(nacc)) + 8;
    return p;
}

const TensorArg& arg_of(const OpCall& call, int role) {
    const AttentionPlan& p = call.attention();
    return p.is_input[role] ? call.inputs[size_t(p.slot[role])] : call.outputs[size_t(p.slot[role])];
}

// Storage blocks of one dispatch: operands are given block indices in order; the scratch block
// is bound once however many operands live in it.
struct Blocks {
    Dispatch& d;
    Defines& defines;
    int scratch = -1;
    // `type`: the element type of the block's array (uint, or a vector type for vector access).
    int add(const std::string& buf, Binding b, const char* type = "uint") {
        const int n = int(d.bindings.size());
        d.bindings.push_back(std::move(b));
        defines.emplace_back("BLK" + std::to_string(n), type);
        defines.emplace_back(buf, "blk" + std::to_string(n));
        return n;
    }
    void add_scratch(const std::string& buf, const Binding& b) {
        if (scratch < 0) scratch = add(buf, b);
        else defines.emplace_back(buf, "blk" + std::to_string(scratch));
    }
};

// PASS_FLASH tiles: BQ rows per workgroup, BKV keys per block, TM rows and BKV / TX keys per
// invocation, TX invocations per row group (workgroup: BQ / TM * TX invocations).
struct FlashTile {
    int bq, bkv, tm, tx;
    bool prefetch;  // PREFETCH: the next K/V block loaded into registers during this one
    bool kmaj;      // KMAJ: channel-major Q and K tiles, scores as outer products (bkv / tx a multiple of 4)
    bool sg;        // SG where the device's subgroups hold a row's tx lanes: shuffles for the row maxima and sums
    bool qg;        // QGLOBAL where q is f32 with vector access (not with KMAJ): q read from global memory, no q tile
    int invocations() const { return bq / tm * tx; }
    bool q_global(bool vec, int dtype) const { return qg && !kmaj && vec && dtype == TGL_DTYPE_F32; }
    // Whether SG applies on `dev` (then the variant gets TGL_SUBGROUP_SIZE).
    bool uses_subgroups(const GlesDevice& dev) const {
        return sg && dev.subgroup_size() >= tx && invocations() % dev.subgroup_size() == 0;
    }
    // PASS_FLASH's loop passes per block of bkv keys and once, at head dims d, dv.
    LoopPasses passes(int64_t d, int64_t dv) const {
        auto iters = [&](int64_t n) { return unrolled_or(int64_t(ceil_div(uint64_t(n), uint64_t(invocations())))); };  // ITERS(n)
        const int64_t q4 = int64_t(ceil_div(uint64_t(d), 4u)), v4 = int64_t(ceil_div(uint64_t(dv), uint64_t(4 * tx))) * tx;
        const int64_t tn = bkv / tx, nv4 = v4 / tx;
        LoopPasses p;
        p.per_tile = 1 + (prefetch ? 2 : 1) * (iters(bkv * q4) + iters(bkv * v4)) + unrolled_or(kmaj ? 4 * q4 : q4) +
                     unrolled_or(bkv) * (1 + unrolled_or(nv4)) + 3 * unrolled_or(tn) + uint64_t(tm / 4) * unrolled_or(tx);
        p.fixed = iters(bq * q4) + 64 + uint64_t(tm / 4) * (unrolled_or(tx) + 4 * unrolled_or(nv4));
        return p;
    }
    // Shared memory in bytes for head dims d, dv (mirrors the shared arrays of PASS_FLASH; `half`:
    // the Q, K/p and V tiles of HALF_RUN, 8 bytes a quad; `subgroups`: SG, p^T apart and no s_red;
    // `q_global`: QGLOBAL, no q tile).
    int64_t shared_bytes(int64_t d, int64_t dv, bool half, bool subgroups, bool q_global) const {
        const int64_t q4w = int64_t(ceil_div(uint64_t(d), 4u)) + 1, r4w = bq / 4 + 1;
        const int64_t v4 = int64_t(ceil_div(uint64_t(dv), uint64_t(4 * tx))) * tx;
        const int64_t q = q_global ? 0 : kmaj ? 4 * (q4w - 1) * r4w : bq * q4w;  // (KMAJ: q^T)
        const int64_t k = kmaj ? 4 * (q4w - 1) * (bkv / 4 + 1) : bkv * q4w;  // (KMAJ: K^T)
        const int64_t pt = bkv * r4w;
        const int64_t tiles = q + (subgroups ? k + pt : std::max(k, pt)) + bkv * v4;
        return (half ? 8 : 16) * tiles + (subgroups ? 0 : 16 * tx * r4w);
    }
};

// TGL_TUNE_ATTENTION (tuning.h): the PASS_FLASH tiles of the attention forward. Defaults, from a
// sweep on the H100 (B8 H16 S2048 D64 causal): f32 bq64_bk32_tm4_tx8 (5.6 ms; the next best 8.5),
// f16 bq32_bk64_tm4_tx16_pf (4.9 ms; 5.7 with the f32 tile). Candidates: bq64_bk32_tm4_tx8, bq32_bk64_tm4_tx16, bq64_bk32_tm8_tx8, bq64_bk16_tm4_tx4, bq32_bk32_tm4_tx8, bq32_bk24_tm4_tx8,
// bq16_bk16_tm4_tx4, each also with _pf. The H200 sweep of issue 19 (_km, _sg, _qg tiles against
// these; docs/attention.md) made bq64_bk32_tm4_tx8_pf_qg the f32 default. A tile that does not fit the device's shared memory or invocations (or has
// more rows than the problem) falls back to the first fitting of bq64_bk32_tm4_tx8,
// bq32_bk32_tm4_tx8, bq32_bk24_tm4_tx8, bq32_bk16_tm4_tx8, bq16_bk16_tm4_tx4; PASS_FWD where
// none fits (D = 256 within 48 KiB, ES 3.1's 16 KiB for D > 64).

struct Ctx {
    GlesDevice& dev;
    const OpCall& call;
    const AttentionPlan& p;
    int wg_cap;
    int64_t budget;  // floats of shared memory
    Binding scratch;
    std::vector<Dispatch> out;

    // {element offset within its window, 4 strides} of a role, and its window.
    Binding window(int role, std::vector<int32_t>& u) const {
        const TensorArg& t = arg_of(call, role);
        const std::string label = operand_label(*call.info, !p.is_input[role], uint32_t(p.slot[role]));
        int32_t off = 0;
        Binding b = dev.window(t, label.c_str(), &off);
        u = {off};
        for (int d = 0; d < 4; ++d) u.push_back(to_i32(p.strides[role][d], (label + " stride").c_str()));
        return b;
    }
    void common_uniforms(Dispatch& d) const {
        d.uniforms.push_back(uniform_int("u_Sq", {to_i32(p.Sq, "Sq")}));
        d.uniforms.push_back(uniform_int("u_Skv", {to_i32(p.Skv, "Skv")}));
        d.uniforms.push_back(uniform_int("u_G", {to_i32(p.G, "Hq / Hkv")}));
        d.uniforms.push_back(uniform_int("u_Hq", {to_i32(p.Hq, "Hq")}));
        d.uniforms.push_back(uniform_int("u_Hkv", {to_i32(p.Hkv, "Hkv")}));
        d.uniforms.push_back(uniform_int("u_Dv", {to_i32(p.Dv, "Dv")}));
        d.uniforms.push_back(uniform_float("u_scale", p.scale));
        d.uniforms.push_back(uniform_int("u_pos_off", {to_i32(p.pos_offset, "Skv - Sq")}));
        d.uniforms.push_back(uniform_int("u_window", {to_i32(p.window, "params->window")}));
        d.uniforms.push_back(uniform_float("u_softcap", p.softcap));
        const int64_t n = p.alibi_heads_pow2();
        d.uniforms.push_back(uniform_int("u_alibi_n", {to_i32(n, "Hq")}));
        d.uniforms.push_back(uniform_float("u_alibi_e0", float(double(p.max_bias) / double(n))));
        d.uniforms.push_back(uniform_float("u_alibi_e1", float(double(p.max_bias) / double(2 * n))));
    }
    Defines base_defines(const char* pass, int wg) const {
        return {{pass, ""}, {def::kDtype, str(call.dtype)}, {"HD", str(p.D)}, {"HDV", str(p.Dv)}, {def::kWorkgroupSize, str(wg)}};
    }
    // The 1-D passes over rows or output elements (PASS_DELTA, PASS_COMBINE) take Dv as a
    // uniform: one variant per dtype.
    Defines row_defines(const char* pass) const {
        return {{pass, ""}, {def::kDtype, str(call.dtype)}, {def::kWorkgroupSize, str(wg_cap)}};
    }
    // A 1-D pass of `count` invocations.
    void add_1d(Dispatch d, uint64_t count) {
        if (count == 0) return;
        d.uniforms.push_back(uniform_uint("u_count", {count_u32(int64_t(count), "an attention pass")}));
        add_chunks(dev, d, ceil_div(count, uint64_t(wg_cap)), out);
    }
    // The pack pass (pack.cpp): role (4-D, or lse as (B, H, S, 1)) to contiguous f32 at scratch
    // element `dst`.
    void pack(int role, int64_t dst) {
        const TensorArg& t = arg_of(call, role);
        if (t.numel == 0) return;
        PackSource src;
        std::vector<int32_t> u;
        src.window = window(role, u);
        src.offset = u[0];
        src.dtype = t.dtype;
        src.numel = t.numel;
        for (int k = 0; k < 4; ++k) {
            src.shape.push_back(k < t.rank ? t.shape[k] : 1);
            src.strides.push_back(p.strides[role][k]);
        }
        add_pack(dev, src, operand_label(*call.info, !p.is_input[role], uint32_t(p.slot[role])), scratch, dst, out);
    }
    // Binds a role's window as block `buf`, sets its {offset, strides} uniform, adds `flag`.
    void bind_role(Blocks& blk, int role, const char* buf, const char* uname, const char* flag = nullptr) const {
        std::vector<int32_t> u;
        blk.add(buf, window(role, u));
        blk.d.uniforms.push_back(uniform_int(uname, u));
        if (flag) blk.defines.emplace_back(flag, "");
    }
    void bind_mask(Blocks& blk) const {
        bind_role(blk, R::kMask, "M_BUF", "u_m", "HAS_MASK");
        blk.defines.emplace_back(def::kMaskDtype, str(arg_of(call, R::kMask).dtype));
    }
    // The sinks (Hq) as {offset, stride}.
    void bind_sinks(Blocks& blk) const {
        std::vector<int32_t> u;
        blk.add("SK_BUF", window(R::kSinks, u));
        blk.d.uniforms.push_back(uniform_int("u_sinks", {u[0], u[1]}));
        blk.defines.emplace_back("HAS_SINKS", "");
    }
    // k and v's dtype (q's, or f16 under an f32 q).
    tgl_dtype kv_dtype() const { return arg_of(call, R::kK).dtype; }
    // The tail of a tiled pass (PASS_FWD, PASS_DKDV, PASS_DQ): tile defines, program, uniforms.
    void finish_tiled(Dispatch& d, Defines& defs, int64_t bq, int64_t bk, int64_t tpr, int64_t groups) const {
        need_blocks(d);
        if (p.causal) defs.emplace_back("CAUSAL", "");
        if (p.softcap > 0.0f) defs.emplace_back("SOFTCAP", "");
        if (p.max_bias > 0.0f) defs.emplace_back("ALIBI", "");
        defs.emplace_back("BQ", str(bq));
        defs.emplace_back("BK", str(bk));
        defs.emplace_back("TPR", str(tpr));
        d.program = dev.program("attention.comp", defs);
        common_uniforms(d);
        d.uniforms.push_back(uniform_uint("u_groups", {count_u32(groups, "the workgroups of an attention pass")}));
    }
    void need_blocks(const Dispatch& d) const {
        if (int(d.bindings.size()) > dev.limits().max_compute_ssbo_blocks)
            fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s' needs %d shader storage blocks in one pass; this device allows %d",
                 call.info->name, int(d.bindings.size()), dev.limits().max_compute_ssbo_blocks);
    }
    // The scratch block of `floats` f32 values, bound whole (one storage block).
    void make_scratch(int64_t floats, const char* what) {
        count_u32(floats, what);
        if (floats * 4 > dev.max_window_bytes())
            fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': %s needs %lld bytes in one shader storage block; this device allows %lld",
                 call.info->name, what, (long long)(floats * 4), (long long)dev.max_window_bytes());
        BufferRef sbuf = dev.scratch(uint64_t(floats) * 4);
        scratch.keep = sbuf;
        scratch.name = static_cast<GlesBuffer&>(*sbuf).name();
        scratch.size = floats * 4;
    }
    // A mask with no elements contributes nothing (its broadcast has no rows or no keys).
    bool has_mask() const { return p.has_mask && arg_of(call, R::kMask).numel > 0; }
    // The most keys one tile of `bq` rows may see: all of them, or its rows' spread plus the window.
    int64_t key_span(int64_t bq) const {
        if (p.window <= 0) return p.Skv;
        const int64_t spread = std::min<int64_t>(p.G > 1 ? p.Sq : std::min(p.Sq, bq), p.Sq) - 1;
        return std::min<int64_t>(p.Skv, std::max<int64_t>(spread, 0) + (p.causal ? p.window : 2 * p.window - 1));
    }

    void forward();
    bool flash();
    void backward();
};

// PASS_FLASH: the whole forward in one dispatch when a tile fits the device and q, k, v, mask, o
// and lse have a storage block each. Returns false where PASS_FWD must do it.
bool Ctx::flash() {
    const bool mask = has_mask();
    if (dev.tuning().attention.legacy || p.Skv == 0 ||
        4 + int(mask) + int(p.has_lse) + int(p.has_sinks) > dev.limits().max_compute_ssbo_blocks)
        return false;
    // Fewer than 16 rows (decoding a few tokens): PASS_FWD's narrow tiles waste less. The tuned
    // tile, else the first fallback that fits the device and has no more rows than the problem.
    const int64_t rows = p.G * p.Sq;
    if (rows < 16) return false;
    // Packed f16 products (f16 q, k and v where the driver offers f16 arithmetic): f16 tiles, each
    // lane summing TGL_TUNE_HALF's run of products (at least 2: a score run is whole channel quads).
    const bool half = dev.half_arith() && call.dtype == TGL_DTYPE_F16 && kv_dtype() == TGL_DTYPE_F16;
    // Vector access (VEC): channels contiguous, offsets and strides multiples of 4 elements.
    std::vector<int32_t> u[4];
    Binding w[4];
    const int roles[4] = {R::kQ, R::kK, R::kV, R::kO};
    bool vec = p.D % 4 == 0 && p.Dv % 4 == 0 && kv_dtype() == call.dtype;  // (vector types of one dtype)
    for (int k = 0; k < 4; ++k) {
        w[k] = window(roles[k], u[k]);
        vec = vec && u[k][4] == 1 && u[k][0] % 4 == 0 && u[k][1] % 4 == 0 && u[k][2] % 4 == 0 && u[k][3] % 4 == 0;
    }
    // (bq32_bk24: D = 128 within 48 KiB)
    static const FlashTile fallbacks[] = {
        {64, 32, 4, 8, false, false, false, false}, {32, 32, 4, 8, false, false, false, false}, {32, 24, 4, 8, false, false, false, false},
        {32, 16, 4, 8, false, false, false, false}, {16, 16, 4, 4, false, false, false, false}};
    auto fits = [&](const FlashTile& f) {
        return f.bq <= rows && f.invocations() <= wg_cap &&
               f.shared_bytes(p.D, p.Dv, half, f.uses_subgroups(dev), f.q_global(vec, call.dtype)) <= dev.limits().max_shared_bytes;
    };
    const AttentionTuning& tuning = dev.tuning().attention;
    const FlashTileTuning& t = tuning.tile[call.dtype == TGL_DTYPE_F32 ? 0 : 1];  // f32, or 16-bit
    // Packed f16 (unless TGL_TUNE_ATTENTION names a tile): bq64_bk32_tm4_tx8_pf, whose f16 tiles
    // fit where its f32 tiles did (H200, B8 H16 S2048 D64 causal: 2.82 ms; the 16-bit default 4.04).
    // f32 (unless TGL_TUNE_ATTENTION names a tile): bq64_bk32_tm4_tx8_pf_qg (H200, B8 H16 S2048 D64
    // causal: 3.52 ms against 5.56 with the shared q tile; docs/attention.md).
    const FlashTile tuned = half && tuning.value.empty()                             ? FlashTile{64, 32, 4, 8, true, false, false, false}
                            : call.dtype == TGL_DTYPE_F32 && tuning.value.empty() ? FlashTile{64, 32, 4, 8, true, false, false, true}
                                                                                  : FlashTile{t.bq, t.bkv, t.tm, t.tx, t.prefetch, t.kmaj, t.sg, t.qg};
    const FlashTile* tile = fits(tuned) ? &tuned : nullptr;
    static std::atomic<bool> told{false};
    if (!tile && !tuning.value.empty() && rows >= tuned.bq && !told.exchange(true))
        std::fprintf(stderr, "tensorgl: TGL_TUNE_ATTENTION=%s does not fit this device (%d invocations, %d bytes of shared memory for D = %lld, Dv = %lld); using a fallback tile\n",
                     tuning.value.c_str(), wg_cap, dev.limits().max_shared_bytes, (long long)p.D, (long long)p.Dv);
    for (const FlashTile& f : fallbacks)
        if (!tile && fits(f)) tile = &f;
    if (!tile) return false;
    // Every key block in one invocation: within the loop budget, else a split PASS_FWD.
    if (ceil_div(uint64_t(key_span(tile->bq)), uint64_t(tile->bkv)) > tile->passes(p.D, p.Dv).tiles_within(loop_budget(dev)))
        return false;
    const int64_t tiles = ceil_div(uint64_t(rows), uint64_t(tile->bq));
    const int64_t groups = p.B * p.Hkv * tiles;
    // TGL_GLES_DEBUG: the tile chosen (for tuning sweeps and tests).
    static const bool debug = debug_enabled();
    if (debug)
        std::fprintf(stderr, "tensorgl-gles: attention flash rows %lld keys %lld D %lld: tile bq%d_bk%d_tm%d_tx%d%s%s%s%s%s, %lld bytes shared\n",
                     (long long)rows, (long long)p.Skv, (long long)p.D, tile->bq, tile->bkv, tile->tm, tile->tx, tile->prefetch ? "_pf" : "",
                     tile->kmaj ? "_km" : "", tile->uses_subgroups(dev) ? "_sg" : "", tile->q_global(vec, call.dtype) ? "_qg" : "",
                     half ? " (packed f16)" : "", (long long)tile->shared_bytes(p.D, p.Dv, half, tile->uses_subgroups(dev), tile->q_global(vec, call.dtype)));

    const char* vtype = !vec ? "uint" : call.dtype == TGL_DTYPE_F32 ? "uvec4" : "uvec2";
    Dispatch d;
    Defines defs = base_defines("PASS_FLASH", tile->invocations());
    Blocks blk{d, defs};
    const char* bufs[4] = {"Q_BUF", "K_BUF", "V_BUF", "O_BUF"};
    for (int k = 0; k < 4; ++k) blk.add(bufs[k], std::move(w[k]), vtype);
    if (mask) bind_mask(blk);
    if (p.has_lse) bind_role(blk, R::kLse, "L_BUF", "u_l", "HAS_LSE");
    if (p.has_sinks) bind_sinks(blk);
    defs.emplace_back(def::kKDtype, str(kv_dtype()));
    defs.emplace_back(def::kVDtype, str(kv_dtype()));
    if (vec) defs.emplace_back("VEC", "");
    if (tile->prefetch) defs.emplace_back("PREFETCH", "");
    if (tile->kmaj) defs.emplace_back("KMAJ", "");
    if (tile->q_global(vec, call.dtype)) defs.emplace_back("QGLOBAL", "");
    if (tile->uses_subgroups(dev) && dev.add_subgroup_define(defs, tile->invocations())) defs.emplace_back("SG", "");
    if (half) {
        defs.emplace_back(def::kRequireExtension, "GL_NV_gpu_shader5");
        defs.emplace_back("HALF_RUN", str(std::max(2, dev.tuning().half.run)));
    }
    defs.emplace_back("HDP", str(int64_t(ceil_div(uint64_t(p.D), 4u)) * 4));
    defs.emplace_back("HDVP", str(int64_t(ceil_div(uint64_t(p.Dv), uint64_t(4 * tile->tx))) * 4 * tile->tx));
    defs.emplace_back("TM", str(tile->tm));
    defs.emplace_back("TX", str(tile->tx));
    defs.emplace_back("BKV", str(tile->bkv));
    // (PASS_FWD's BK and TPR: unused here)
    finish_tiled(d, defs, tile->bq, tile->bkv, tile->tx, groups);
    const char* unames[4] = {"u_q", "u_k", "u_v", "u_o"};
    for (int k = 0; k < 4; ++k) d.uniforms.push_back(uniform_int(unames[k], u[k]));
    d.uniforms.push_back(uniform_int("u_tiles", {to_i32(tiles, "query tiles")}));
    add_chunks(dev, d, uint64_t(groups), out);
    return true;
}

void Ctx::forward() {
    const bool mask = has_mask();
    const bool lse = p.has_lse;
    const bool sinks = p.has_sinks;
    const int64_t rows = p.G * p.Sq;
    const int64_t kv_w = std::max(p.D, p.Dv) + 1;  // shared rows are padded by one float
    // Query tile: 16 rows of 16 invocations (fewer rows when the group has fewer: decoding);
    // invocations per row at most the channels (rounded up to a power of two).
    int64_t bq = std::max<int64_t>(1, std::min<int64_t>(wg_cap / 16, pow2_ceil(std::max<int64_t>(rows, 1))));
    int64_t tpr = std::min<int64_t>(wg_cap / bq, pow2_ceil(p.Dv));
    int64_t bk = 0;
    for (;;) {
        bk = std::min<int64_t>({64, pow2_ceil(std::max<int64_t>(p.Skv, 1)), (budget - bq * (p.D + 1)) / (kv_w + 2 * bq)});
        if (bk >= 1 || bq == 1) break;
        bq /= 2;
        tpr = std::min<int64_t>(wg_cap / bq, pow2_ceil(p.Dv));
    }
    // Keys per score invocation: 4 (register blocking) where the tile still gives every
    // invocation about one group of keys; decoding tiles (few rows) keep all invocations busy with 1.
    const int64_t sk = bk >= 8 && bq * (bk / 4) * 2 >= bq * tpr ? 4 : 1;
    bk -= bk % sk;
    if (bk < 1)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': head dims D = %lld, Dv = %lld need more shared memory than the %d bytes of this device",
             call.info->name, (long long)p.D, (long long)p.Dv, dev.limits().max_shared_bytes);
    const int64_t wg = bq * tpr;
    const int64_t tiles = ceil_div(uint64_t(rows), uint64_t(bq));
    const int64_t base_groups = p.B * p.Hkv * tiles;

    // Splits of the keys a tile sees (flash-decoding) when the tiles alone leave the GPU idle.
    const int64_t span = key_span(bq);
    int64_t splits = 1;
    if (base_groups < kTargetGroups && span > 4 * bk)
        splits = std::max<int64_t>(1, std::min<int64_t>(ceil_div(kTargetGroups, base_groups), ceil_div(span, 4 * bk)));
    int64_t chunk = std::max<int64_t>(bk, int64_t(ceil_div(ceil_div(span, splits), bk)) * bk);
    // At most the keys one invocation may walk within the loop budget.
    const LoopPasses passes = fwd_passes(p.D, p.Dv, bq, bk, sk, tpr, wg);
    const uint64_t budget = loop_budget(dev), max_tiles = passes.tiles_within(budget);
    if (max_tiles < ceil_div(uint64_t(chunk), uint64_t(bk))) chunk = int64_t(max_tiles) * bk;
    splits = std::max<int64_t>(1, ceil_div(span, chunk));
    check_loop_budget(dev, passes.fixed + passes.per_tile * ceil_div(uint64_t(chunk), uint64_t(bk)), call.info->name,
                      "attention's walk over one split of the keys");
    check_loop_budget(dev, 2 * loop_cost(uint64_t(splits)) + 8, call.info->name, "attention's merge of the key splits");
    const int max_blocks = dev.limits().max_compute_ssbo_blocks;
    // (the sinks join in PASS_COMBINE when split)
    const bool split = splits > 1 || 4 + int(mask) + int(lse) + int(sinks) > max_blocks;
    const bool packed = split && 4 + int(mask) > max_blocks;
    const bool no_kv = p.Skv == 0;  // nothing to read: k and v are bound to scratch as placeholders
    if (!split && flash()) return;  // (decoding keeps its split PASS_FWD: flash-decoding)

    // Scratch: [k, v as f32 if packed][partials (m, l, acc[Dv]) per row and split].
    const int64_t kn = p.B * p.Hkv * p.Skv * p.D, vn = p.B * p.Hkv * p.Skv * p.Dv;
    const int64_t part = packed ? kn + vn : 0;
    const int64_t total = split ? part + p.B * p.Hq * p.Sq * splits * (p.Dv + 2) : 1;
    make_scratch(total, "the scratch of attention (packed k, v and the splits' partials)");
    if (packed) {
        pack(R::kK, 0);
        pack(R::kV, kn);
    }

    Dispatch d;
    Defines defs = base_defines("PASS_FWD", int(wg));
    Blocks blk{d, defs};
    std::vector<int32_t> uq, uk, uv;
    blk.add("Q_BUF", window(R::kQ, uq));
    if (packed || no_kv) {
        blk.add_scratch("K_BUF", scratch);
        blk.add_scratch("V_BUF", scratch);
        uk = {0, to_i32(p.Hkv * p.Skv * p.D, "k"), to_i32(p.Skv * p.D, "k"), to_i32(p.D, "k"), 1};
        uv = {to_i32(kn, "v"), to_i32(p.Hkv * p.Skv * p.Dv, "v"), to_i32(p.Skv * p.Dv, "v"), to_i32(p.Dv, "v"), 1};
        defs.emplace_back(def::kKDtype, str(TGL_DTYPE_F32));
        defs.emplace_back(def::kVDtype, str(TGL_DTYPE_F32));
    } else {
        blk.add("K_BUF", window(R::kK, uk));
        blk.add("V_BUF", window(R::kV, uv));
        defs.emplace_back(def::kKDtype, str(kv_dtype()));
        defs.emplace_back(def::kVDtype, str(kv_dtype()));
    }
    if (mask) bind_mask(blk);
    if (split) {
        blk.add_scratch("P_BUF", scratch);
        defs.emplace_back("SPLIT", "");
    } else {
        bind_role(blk, R::kO, "O_BUF", "u_o");
        if (lse) bind_role(blk, R::kLse, "L_BUF", "u_l", "HAS_LSE");
        if (sinks) bind_sinks(blk);
    }
    const uint64_t groups = uint64_t(base_groups) * uint64_t(splits);
    defs.emplace_back("SK", str(sk));
    defs.emplace_back("KV_W", str(kv_w));
    finish_tiled(d, defs, bq, bk, tpr, int64_t(groups));
    d.uniforms.push_back(uniform_int("u_q", uq));
    d.uniforms.push_back(uniform_int("u_k", uk));
    d.uniforms.push_back(uniform_int("u_v", uv));
    d.uniforms.push_back(uniform_int("u_tiles", {to_i32(tiles, "query tiles")}));
    d.uniforms.push_back(uniform_int("u_splits", {to_i32(splits, "splits")}));
    d.uniforms.push_back(uniform_int("u_chunk", {to_i32(chunk, "keys per split")}));
    d.uniforms.push_back(uniform_int("u_part", {to_i32(part, "a scratch offset")}));
    add_chunks(dev, d, groups, out);

    if (split) {
        Dispatch c;
        Defines cdefs = row_defines("PASS_COMBINE");
        Blocks cblk{c, cdefs};
        cblk.add_scratch("P_BUF", scratch);
        bind_role(cblk, R::kO, "O_BUF", "u_o");
        if (lse) bind_role(cblk, R::kLse, "L_BUF", "u_l", "HAS_LSE");
        if (sinks) bind_sinks(cblk);
        c.program = dev.program("attention.comp", cdefs);
        common_uniforms(c);
        c.uniforms.push_back(uniform_int("u_part", {to_i32(part, "a scratch offset")}));
        c.uniforms.push_back(uniform_int("u_splits", {to_i32(splits, "splits")}));
        add_1d(std::move(c), uint64_t(p.B * p.Hq * p.Sq * p.Dv));
    }
}

void Ctx::backward() {
    const bool mask = has_mask();
    // f32 copies in scratch: q, k, v, do, lse, delta.
    const int64_t nq = p.B * p.Hq * p.Sq;
    const int64_t sq = 0, sk = sq + nq * p.D, sv = sk + p.B * p.Hkv * p.Skv * p.D;
    const int64_t sdo = sv + p.B * p.Hkv * p.Skv * p.Dv, slse = sdo + nq * p.Dv, sdelta = slse + nq;
    // The tiles (below) first: where a walk passes the loop budget, its accumulators follow in the scratch.
    // One tile size T for rows and keys: 2T(D + Dv + 2) + 2T^2 floats of shared memory.
    // (no larger than the longer of the two sequences: small problems get small workgroups)
    int64_t t = std::min<int64_t>(32, pow2_ceil(std::max<int64_t>({p.G * p.Sq, p.Skv, 1})));
    while (t > 1 && (2 * t * (p.D + p.Dv + 2) + 2 * t * t > budget || t > wg_cap)) t /= 2;
    if (2 * t * (p.D + p.Dv + 2) + 2 * t * t > budget)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': head dims D = %lld, Dv = %lld need more shared memory than the %d bytes of this device",
             call.info->name, (long long)p.D, (long long)p.Dv, dev.limits().max_shared_bytes);
    const int64_t tpr = std::min<int64_t>(wg_cap / t, pow2_ceil(std::max(p.D, p.Dv)));
    const int64_t wg = t * tpr;
    const int64_t rows = p.G * p.Sq;
    // Each invocation walks every key tile (PASS_DQ) or row tile (PASS_DKDV) of its kv head. Where
    // that passes the loop budget, the walk runs in chunks of tiles, a dispatch each, the f32
    // accumulators carried between them in the scratch (WALK_SPLIT; their load and store loops
    // counted as well).
    const LoopPasses walk = bwd_passes(p.D, p.Dv, t, tpr, wg);
    const uint64_t nacc_d = ceil_div(uint64_t(p.D), uint64_t(tpr)), nacc_v = ceil_div(uint64_t(p.Dv), uint64_t(tpr));
    const uint64_t row_tiles = ceil_div(uint64_t(rows), uint64_t(t)), key_tiles = ceil_div(uint64_t(p.Skv), uint64_t(t));
    const uint64_t longest = std::max(row_tiles, key_tiles);
    const uint64_t chunk_tiles = walk.fixed + walk.per_tile * longest <= loop_budget(dev)
                                     ? std::max<uint64_t>(longest, 1)
                                     : loop_items_within(loop_budget(dev), walk.per_tile, walk.fixed + 2 * loop_cost(nacc_d + nacc_v));
    check_loop_budget(dev, walk.fixed + 2 * loop_cost(nacc_d + nacc_v) + walk.per_tile * std::min(chunk_tiles, longest), call.info->name,
                      "attention_backward's walk over a chunk of the key tiles (PASS_DQ) or row tiles (PASS_DKDV) of one kv head");
    const int64_t dkdv_groups = p.B * p.Hkv * int64_t(key_tiles), dq_groups = p.B * p.Hkv * int64_t(row_tiles);
    const int64_t sacc = std::max<int64_t>(1, sdelta + nq);
    const int64_t acc_floats =
        chunk_tiles < longest ? std::max<int64_t>(dkdv_groups * wg * int64_t(nacc_d + nacc_v), dq_groups * wg * int64_t(nacc_d)) : 0;
    make_scratch(sacc + acc_floats, "the scratch of attention_backward (f32 copies of q, k, v, do, lse, delta; the accumulators of a walk in chunks)");
    pack(R::kQ, sq);
    pack(R::kK, sk);
    pack(R::kV, sv);
    pack(R::kDo, sdo);
    pack(R::kLse, slse);
    if (nq > 0) {
        Dispatch d;
        Defines defs = row_defines("PASS_DELTA");
        Blocks blk{d, defs};
        bind_role(blk, R::kO, "O_BUF", "u_o");
        bind_role(blk, R::kDo, "DO_BUF", "u_do");
        blk.add_scratch("S_BUF", scratch);
        d.program = dev.program("attention.comp", defs);
        common_uniforms(d);
        d.uniforms.push_back(uniform_int("u_dst", {to_i32(sdelta, "a scratch offset")}));
        add_1d(std::move(d), uint64_t(nq));
    }

    // walked: the tiles the pass's loop walks (PASS_DKDV: row tiles; PASS_DQ: key tiles).
    auto pass = [&](const char* name, int64_t tiles, uint64_t walked, std::initializer_list<int> outs) {
        const int64_t groups = p.B * p.Hkv * tiles;
        if (groups == 0) return;
        Dispatch d;
        Defines defs = base_defines(name, int(wg));
        Blocks blk{d, defs};
        blk.add_scratch("S_BUF", scratch);
        if (mask) bind_mask(blk);
        for (int role : outs) {
            if (role == R::kDq) bind_role(blk, role, "DQ_BUF", "u_dq");
            else if (role == R::kDk) bind_role(blk, role, "DK_BUF", "u_dk");
            else bind_role(blk, role, "DV_BUF", "u_dv");
        }
        const bool split = walked > chunk_tiles;
        if (split) defs.emplace_back("WALK_SPLIT", "");
        finish_tiled(d, defs, t, t, tpr, groups);
        d.uniforms.push_back(uniform_int("u_tiles", {to_i32(tiles, "tiles")}));
        d.uniforms.push_back(uniform_int("u_ktiles", {to_i32(tiles, "tiles")}));
        d.uniforms.push_back(uniform_int("u_sq", {to_i32(sq, "offset")}));
        d.uniforms.push_back(uniform_int("u_sk", {to_i32(sk, "offset")}));
        d.uniforms.push_back(uniform_int("u_sv", {to_i32(sv, "offset")}));
        d.uniforms.push_back(uniform_int("u_sdo", {to_i32(sdo, "offset")}));
        d.uniforms.push_back(uniform_int("u_slse", {to_i32(slse, "offset")}));
        d.uniforms.push_back(uniform_int("u_sdelta", {to_i32(sdelta, "offset")}));
        if (!split) return add_chunks(dev, d, uint64_t(groups), out);
        d.uniforms.push_back(uniform_int("u_sacc", {to_i32(sacc, "a scratch offset")}));
        for (uint64_t lo = 0; lo < walked; lo += chunk_tiles) {
            Dispatch c = d;
            c.uniforms.push_back(uniform_int("u_walk_lo", {to_i32(int64_t(lo), "a tile")}));
            c.uniforms.push_back(uniform_int("u_walk_hi", {to_i32(int64_t(std::min(walked, lo + chunk_tiles)), "a tile")}));
            c.uniforms.push_back(uniform_uint("u_carry", {(lo > 0 ? 1u : 0u) | (lo + chunk_tiles < walked ? 2u : 0u)}));
            add_chunks(dev, c, uint64_t(groups), out);
        }
    };
    if (arg_of(call, R::kDk).numel > 0) pass("PASS_DKDV", int64_t(key_tiles), row_tiles, {R::kDk, R::kDv});
    if (arg_of(call, R::kDq).numel > 0) pass("PASS_DQ", int64_t(row_tiles), key_tiles, {R::kDq});
}

}  // namespace

void run_attention(GlesDevice& dev, const OpCall& call) {
    const Limits& lim = dev.limits();
    Ctx c{dev, call, call.attention(),
          int(pow2_floor(std::min<int64_t>({256, lim.max_invocations, lim.max_size[0]}))),
          int64_t(lim.max_shared_bytes) / 4, Binding{}, {}};
    if (call.attention().backward) c.backward();
    else c.forward();
    dev.submit(call.info->name, std::move(c.out));
}

void register_attention_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Attention, run_attention, &kAttentionSplit});
}

}  // namespace gles
}  // namespace tgl
