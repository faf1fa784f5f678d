// GLES host side of the Conv family (plan: backends/common/conv_rules.h; shader: glsl/conv.comp).
// The implicit GEMM serves every mode (forward; transposed, which conv2d backward input is too;
// backward weight with the bias gradient in its first column tile). Forward/transposed with at most
// 4 output channels per group (depthwise) use the direct variant instead, since a GEMM tile of BM
// rows would be mostly idle. A strided transposed relation runs one GEMM per output phase
// (o mod stride) over only the taps that reach it. Few tiles with a long K split K (partials in
// scratch, then a reduce pass with the epilogue). Tiles are chosen within the device's invocation,
// workgroup-size and shared-memory limits (TGL_TUNE_CONV overrides the choice, for sweeps on a
// GPU); each grid (tiles x groups x splits) is a linear index split into dispatches within the
// workgroup-count limits. Convolutions whose taps all lie inside x (1x1, unpadded) load without
// bound tests (IN_BOUNDS). Every plan keeps each invocation's loop passes within the loop budget
// (loop_budget.h): a direct convolution with more taps than that takes the GEMM, whose K range per
// workgroup is split to fit. The kernel is the first of the candidates (direct, GEMM) that takes
// the call; each that does not says why, and those reasons are the error where none does. 3x3
// stride-1 forward convolutions with many channels take Winograd F(2x2, 3x3) first (below); 1x1
// forward convolutions may run as the matmul family's products (pointwise_candidate).
// A piece of a convolution run in pieces over its input channels (window_split.cpp) adds its sum
// to the f32 output the earlier pieces stored (ACCUMULATE; an f16 op's pieces write an f32 copy:
// Y_F32).
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"
#include "op_catalogue.h"  // backends/common
#include "validate_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>

namespace tgl {
namespace gles {
namespace {

struct Tile {
    int bm, bn, bk, tm, tn;
};
// At most this many output channels per group take the direct variant.
constexpr int64_t kDirectMaxChannels = 4;
constexpr uint64_t kSplitTarget = 256, kSplitMinK = 256, kSplitMaxBytes = uint64_t(64) << 20;

// The shader's rules for a tile (conv.comp's #error lines), in either orientation (Y_C_FAST swaps
// the workgroup's x and y), within the device's limits.
bool fits(const Limits& L, const Tile& t) {
    if (t.bm <= 0 || t.bn <= 0 || t.bk <= 0 || t.tm <= 0 || t.tn <= 0 || t.tm % 4 || t.tn % 4 || t.bm % t.tm || t.bn % t.tn) return false;
    const int wx = t.bn / t.tn, wy = t.bm / t.tm, nt = wx * wy;
    if (nt % t.bn || (t.bm * t.bk) % nt || (t.bn * t.bk) % nt || nt < t.bk || nt < t.bm) return false;
    const int shared = t.bk * (t.bm + 4 + t.bn + 4) * 4 + 2 * t.bk * 32;  // the tiles and two slots of (ivec3, ivec2) per k
    return nt <= L.max_invocations && std::max(wx, wy) <= std::min(L.max_size[0], L.max_size[1]) && shared <= L.max_shared_bytes;
}

// One convolution being planned: what the kernel candidates look at, and their dispatches.
struct ConvRun {
    GlesDevice& dev;
    const OpCall& call;
    const ConvPlan& p;
    bool wgrad;           // the weight gradient (binding 2 is the weight)
    bool has_bias;
    bool accumulate;      // add to what the (f32) output holds
    int32_t M, N, K;      // the GEMM of one group: output channels x columns, reduction length
    int64_t out_numel;    // elements of binding 2's operand
    std::string o_label;  // its label
    Dispatch base;        // bindings x, a, out, bias and the uniforms every pass has
    std::vector<Dispatch> dispatches;

    tgl_dtype a_dtype, b_dtype;  // of bindings 1 and 3: w and bias may be f16/bf16 under f32 x and y
    // A variant: the mode and dtypes; where the pass stores the result, the activation, whether it
    // adds to the output (ACCUMULATE) and an f32 output of an f16 op (Y_F32).
    Defines variant(bool epilogue) const {
        const char* mode = p.mode == ConvPlan::Forward ? "MODE_FORWARD" : p.mode == ConvPlan::Transposed ? "MODE_TRANSPOSED" : "MODE_WGRAD";
        Defines d{{mode, ""}, {def::kDtype, str(call.dtype)}, {def::kADtype, str(a_dtype)}, {def::kBDtype, str(b_dtype)},
                  {"ACTIVATION", str(epilogue ? p.activation : 0)}};
        if (epilogue && accumulate) d.emplace_back("ACCUMULATE", "");
        const TensorArg& out = (p.y_is_out ? call.outputs : call.inputs)[size_t(p.y_slot)];
        if (epilogue && !wgrad && out.dtype == TGL_DTYPE_F32 && call.dtype != TGL_DTYPE_F32) d.emplace_back("Y_F32", "");
        return d;
    }
};

// Kernel candidates, in order of preference (take_first_candidate).

// The direct variant: forward/transposed with at most kDirectMaxChannels output channels per group
// (depthwise), where a GEMM tile of BM rows would be mostly idle; its invocation walks every
// (channel, tap) pair of its group.
std::string direct_candidate(ConvRun& r) {
    const ConvPlan& p = r.p;
    if (r.wgrad) return "not for the weight gradient";
    if (p.cy > kDirectMaxChannels)
        return format("%lld output channels per group, more than %lld", (long long)p.cy, (long long)kDirectMaxChannels);
    const uint64_t passes = loop_cost(uint64_t(p.cx)) + loop_cost(uint64_t(p.k[0] * p.k[1] * p.k[2]), uint64_t(p.cx));
    if (passes > loop_budget(r.dev))
        return format("an invocation's %llu loop passes exceed the loop budget of %llu", (unsigned long long)passes,
                      (unsigned long long)loop_budget(r.dev));
    const int wg = r.dev.workgroup_size();
    Defines defines = r.variant(true);
    defines.emplace_back("DIRECT", "");
    defines.emplace_back(def::kWorkgroupSize, str(wg));
    r.base.program = r.dev.program("conv.comp", defines);
    const uint64_t total = uint64_t(count_u32(r.out_numel, r.o_label.c_str()));
    add_chunks(r.dev, r.base, ceil_div(total, uint64_t(wg)), r.dispatches);
    return "";
}

// Measured on the H100 (ResNet-50 layers at batch 32, bench/RESULTS.md): the 64x64 tile (4x4 per
// invocation) beats the 128x64 / 64x128 ones (8x4 / 4x8) on every layer, and the 128x128 tile
// (8x8) wins only with many output channels and few positions (conv5_x, 512 channels x 1,568
// positions: 0.46 ms against 0.62). A wide tile when a group has few output channels, the smallest
// where the limits allow nothing else (GLES 3.1 minimum: 128 invocations, 16 KiB). TGL_TUNE_CONV
// overrides where it fits.
const Tile kBigTile{128, 128, 8, 8, 8}, kWideTile{32, 128, 16, 4, 4}, kMidTile{64, 64, 16, 4, 4}, kSmallTile{32, 32, 16, 4, 4};
Tile gemm_tile(const Limits& L, const ConvTuning& tuned, int32_t M, int32_t N) {
    const Tile tuned_tile{tuned.tile.bm, tuned.tile.bn, tuned.tile.bk, tuned.tile.tm, tuned.tile.tn};
    if (tuned_tile.bm > 0 && M > 32 && fits(L, tuned_tile)) return tuned_tile;
    if (M >= 512 && N < 4096 && fits(L, kBigTile)) return kBigTile;
    if (fits(L, kWideTile) && M <= 32 && N >= 512) return kWideTile;
    if (fits(L, kMidTile) && M > 32) return kMidTile;
    return kSmallTile;
}

// One GEMM of N columns and reduction length K over `b` (which carries the phase uniforms).
void add_gemm(ConvRun& r, Dispatch b, int32_t N, int32_t K, bool in_bounds) {
    GlesDevice& dev = r.dev;
    const ConvPlan& p = r.p;
    const OpInfo& info = *r.call.info;
    const bool wgrad = r.wgrad, bias = r.has_bias;
    const int32_t M = r.M;
    const ConvTuning& tuned = dev.tuning().conv;
    const Tile t = gemm_tile(dev.limits(), tuned, M, N);
    // db needs its column tile even where dw is empty (C_in = 0).
    const uint64_t tiles_n = std::max<uint64_t>(ceil_div(uint64_t(N), uint64_t(t.bn)), bias && wgrad ? 1 : 0);
    const uint64_t tiles_m = ceil_div(uint64_t(M), uint64_t(t.bm));
    const uint64_t tiles = tiles_n * tiles_m * uint64_t(p.groups);
    // Split K where there are few tiles and a long K (the weight gradient: K = N * Ho * Wo; deep
    // layers with small images): up to split_target workgroups, K ranges of at least kSplitMinK,
    // partials within kSplitMaxBytes of scratch.
    const uint64_t c_elems = uint64_t(p.groups) * uint64_t(M) * uint64_t(N), db_elems = bias && wgrad ? uint64_t(p.groups) * uint64_t(M) : 0;
    uint64_t splits = 1;
    const uint64_t split_target = tuned.split_target >= 0 ? uint64_t(tuned.split_target) : kSplitTarget;
    if (tiles < split_target && uint64_t(K) >= 2 * kSplitMinK)
        splits = std::min<uint64_t>({ceil_div(split_target, tiles), uint64_t(K) / kSplitMinK,
                                     kSplitMaxBytes / (4 * std::max<uint64_t>(1, c_elems + db_elems))});
    // A workgroup's K range within the loop budget: each step of BK passes the step loop once and
    // the product loop (and with db its sum loop) BK + 1 times (llvmpipe unrolls neither). Longer K
    // is split whatever the tile count (the partials must fit a block).
    const uint64_t k_max = std::min<uint64_t>(loop_items_within(loop_budget(dev), 1 + loop_cost(uint64_t(t.bk)) * (wgrad && bias ? 2 : 1)),
                                              ceil_div(uint64_t(K), uint64_t(t.bk))) * uint64_t(t.bk);
    if (uint64_t(K) > k_max) {
        splits = std::max(splits, ceil_div(uint64_t(K), k_max));
        const uint64_t need = 4 * splits * (c_elems + db_elems);
        if (need > uint64_t(dev.max_window_bytes()))
            fail(TGL_ERROR_RESOURCE_EXHAUSTED,
                 "op '%s': a reduction of %d (channels x taps, or positions for the weight gradient) is split %llu ways "
                 "to keep each shader invocation's loops within %llu passes (llvmpipe stops loops after 65535); "
                 "its partials (%llu bytes) exceed one shader storage block (%lld bytes)",
                 info.name, K, (unsigned long long)splits, (unsigned long long)kLoopTripBudget, (unsigned long long)need,
                 (long long)dev.max_window_bytes());
        check_loop_budget(dev, loop_cost(splits), info.name, "the sum over K splits");
    }
    const uint64_t k_chunk = splits > 1 ? ceil_div(ceil_div(uint64_t(K), splits), uint64_t(t.bk)) * uint64_t(t.bk) : uint64_t(std::max(K, 1));
    splits = splits > 1 ? ceil_div(uint64_t(K), k_chunk) : 1;
    Defines defines = r.variant(splits == 1);
    // Channels-last y: the rows (channels) along the invocations' x, for consecutive stores.
    const bool y_c_fast = !wgrad && (p.ys[1] == 1 || p.ys[1] == -1) && M > 1;
    for (auto [name, v] : {std::pair<const char*, int>{"BM", t.bm}, {"BN", t.bn}, {"BK", t.bk}, {"TM", t.tm}, {"TN", t.tn},
                           {"WG_X", y_c_fast ? t.bm / t.tm : t.bn / t.tn}, {"WG_Y", y_c_fast ? t.bn / t.tn : t.bm / t.tm}})
        defines.emplace_back(name, str(v));
    if (y_c_fast) defines.emplace_back("Y_C_FAST", "");
    if (!wgrad && (p.xs[1] == 1 || p.xs[1] == -1) && p.cx > 1) defines.emplace_back("X_C_FAST", "");  // channels-last x
    if (in_bounds) defines.emplace_back("IN_BOUNDS", "");
    auto& BU = b.uniforms;
    BU.push_back(uniform_int("u_N", {N}));
    BU.push_back(uniform_int("u_K", {K}));
    BU.push_back(uniform_int("u_tiles_n", {to_i32(int64_t(tiles_n), "the column tiles")}));
    BU.push_back(uniform_int("u_tiles_m", {to_i32(int64_t(tiles_m), "the row tiles")}));
    BU.push_back(uniform_int("u_splits", {int32_t(splits)}));
    BU.push_back(uniform_int("u_k_chunk", {int32_t(k_chunk)}));
    BU.push_back(uniform_int("u_db_part", {int32_t(splits * c_elems)}));
    if (splits == 1) {
        b.program = dev.program("conv.comp", defines);
        add_chunks(dev, b, tiles, r.dispatches);
        return;
    }
    const uint64_t bytes = 4 * splits * (c_elems + db_elems);
    BufferRef scratch = dev.scratch(bytes);
    Binding sb;
    sb.keep = scratch;
    sb.name = static_cast<GlesBuffer&>(*scratch).name();
    sb.size = int64_t(bytes);
    defines.emplace_back("SPLIT_K", "");
    Dispatch partial = b;
    partial.bindings[2] = sb;
    partial.program = dev.program("conv.comp", defines);
    add_chunks(dev, partial, tiles * splits, r.dispatches);
    const int wg = dev.workgroup_size();
    Defines rd = r.variant(true);
    rd.emplace_back("PASS_REDUCE", "");
    rd.emplace_back(def::kWorkgroupSize, str(wg));
    Dispatch reduce = b;
    reduce.bindings[0] = reduce.bindings[1] = sb;
    reduce.program = dev.program("conv.comp", rd);
    add_chunks(dev, reduce, ceil_div(c_elems + db_elems, uint64_t(wg)), r.dispatches);
}

void phase_uniforms(Dispatch& b, const int64_t* qout, const int64_t* phase, const int64_t* ostep, const int64_t* jcnt,
                    const int64_t* j0, const int64_t* jstep) {
    b.uniforms.push_back(uniform_int("u_qout3", to_i32s(qout, 3, "a spatial size")));
    b.uniforms.push_back(uniform_int("u_phase3", to_i32s(phase, 3, "a phase")));
    b.uniforms.push_back(uniform_int("u_ostep3", to_i32s(ostep, 3, "a stride")));
    b.uniforms.push_back(uniform_int("u_jcnt3", to_i32s(jcnt, 3, "a kernel size")));
    b.uniforms.push_back(uniform_int("u_j03", to_i32s(j0, 3, "a tap")));
    b.uniforms.push_back(uniform_int("u_jstep3", to_i32s(jstep, 3, "a tap step")));
}

// The implicit GEMM (every mode), one per output phase of a strided transposed relation.
std::string gemm_candidate(ConvRun& r) {
    const ConvPlan& p = r.p;
    const Limits& L = r.dev.limits();
    if (!fits(L, kSmallTile))
        return format("the device's compute limits (%d invocations, %d x %d workgroup size, %d bytes shared memory) cannot "
                      "hold a %dx%d tile", L.max_invocations, L.max_size[0], L.max_size[1], L.max_shared_bytes,
                      kSmallTile.bm, kSmallTile.bn);
    // Every tap of every output position inside x (no padding, no reach past the end, e.g. a 1x1
    // convolution): the B loader tests no bounds.
    bool in_bounds = p.mode != ConvPlan::Transposed;
    for (int d = 0; d < 3; ++d)
        in_bounds = in_bounds && p.pad[d] == 0 && (p.out[d] - 1) * p.stride[d] + (p.k[d] - 1) * p.dil[d] < p.in[d];
    const int64_t zero[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    if (p.mode != ConvPlan::Transposed || (p.stride[0] == 1 && p.stride[1] == 1 && p.stride[2] == 1)) {
        // Every output position, every tap (the stride-1 transposed relation divides by 1).
        Dispatch b = r.base;
        phase_uniforms(b, p.out, zero, one, p.k, zero, one);
        add_gemm(r, std::move(b), r.N, r.K, in_bounds);
        return "";
    }
    // One GEMM per output phase r = o mod stride: o + pad - j * dil is a multiple of the stride only
    // for taps j = j0 + t * (stride / gcd(stride, dil)), so the others (3 of 4 for stride 2 in 2d)
    // are never visited. A phase without taps still stores its bias.
    for (int64_t e = 0; e < p.stride[0] * p.stride[1] * p.stride[2]; ++e) {
        int64_t ph[3], qout[3], jcnt[3], j0[3], jstep[3];
        int64_t rest = e;
        for (int d = 2; d >= 0; --d) {
            ph[d] = rest % p.stride[d];
            rest /= p.stride[d];
            qout[d] = ph[d] < p.out[d] ? (p.out[d] - ph[d] + p.stride[d] - 1) / p.stride[d] : 0;
            jstep[d] = p.stride[d] / std::gcd(p.stride[d], p.dil[d]);
            j0[d] = -1;
            for (int64_t j = 0; j < std::min(p.k[d], jstep[d]) && j0[d] < 0; ++j)
                if ((ph[d] + p.pad[d] - j * p.dil[d]) % p.stride[d] == 0) j0[d] = j;
            jcnt[d] = j0[d] < 0 ? 0 : (p.k[d] - j0[d] + jstep[d] - 1) / jstep[d];
            if (j0[d] < 0) j0[d] = 0;
        }
        const int64_t cols = p.batch * qout[0] * qout[1] * qout[2];
        if (cols == 0) continue;
        Dispatch b = r.base;
        phase_uniforms(b, qout, ph, p.stride, jcnt, j0, jstep);
        add_gemm(r, std::move(b), int32_t(cols), int32_t(p.cx * jcnt[0] * jcnt[1] * jcnt[2]), in_bounds);
    }
    return "";
}

// Winograd F(m x m, 3x3) (conv.comp's WINO_* passes): F(4x4) by shape, 36 multiplications per 4x4
// output tile and input channel where the direct kernels do 144 (F(2x2): 16 per 2x2 tile, 36).
// TGL_TUNE_CONV says winograd4 / winograd (F(4x4) / F(2x2) wherever it applies) or direct
// (nowhere). With E = (m + 2)^2: U = G g G^T (E x K x C), then per chunk of
// tiles V = B^T d B (E x C x tiles), the E products M = U x V as one batched matmul (matmul.comp's
// tiles: run_matmul), and Y = A^T M A with the epilogue of the direct kernels (store_y). U, V and
// M lie in the scratch, each within one storage block (the tiles go in chunks that keep V and M
// within kWinogradMaxBytes and a block), the matmul's own scratch words after them.
// By shape: at least kWinogradMinChannels input and output channels and kWinogradMinPositions
// output positions, where the products' work dwarfs the transforms' traffic (V and M are 2.25x the
// size of x and y with F(4x4), 4x with F(2x2)), with F(4x4, 3x3). On an H200 at batch 32 (direct -> F(2x2) -> F(4x4)):
// 64 channels 56x56 0.46 -> 0.55 -> 0.40 ms, 128 at 28x28 0.49 -> 0.28 -> 0.21, 256 at 14x14
// 0.49 -> 0.29 -> 0.27, 512 at 7x7 0.46 -> 0.34 -> 0.27.
constexpr int64_t kWinogradMinChannels = 64, kWinogradMinPositions = 1024;
constexpr int64_t kWinogradMaxBytes = int64_t(64) << 20;

// An f32 view of the scratch: 3 dims, element strides, starting at byte `at`.
TensorArg scratch_view(const BufferRef& buf, int64_t at, const int64_t (&shape)[3], const int64_t (&strides)[3]) {
    TensorArg t;
    t.buffer = buf;
    t.dtype = TGL_DTYPE_F32;
    t.rank = 3;
    t.offset = at / 4;
    t.numel = shape[0] * shape[1] * shape[2];
    int64_t last = t.offset;
    for (int d = 0; d < 3; ++d) {
        t.shape[d] = shape[d];
        t.strides[d] = strides[d];
        last += (shape[d] - 1) * strides[d];
    }
    t.byte_lo = t.numel > 0 ? at : 0;
    t.byte_hi = t.numel > 0 ? (last + 1) * 4 : 0;
    return t;
}

std::string winograd_candidate(ConvRun& r) {
    const ConvPlan& p = r.p;
    GlesDevice& dev = r.dev;
    const ConvTuning::Path path = dev.tuning().conv.path;
    if (path == ConvTuning::Path::Direct) return "turned off by TGL_TUNE_CONV=direct";
    if (p.mode != ConvPlan::Forward) return "forward convolutions only";
    if (p.groups != 1) return format("%lld groups, not 1", (long long)p.groups);
    if (p.k[0] != 1 || p.in[0] != 1 || p.k[1] != 3 || p.k[2] != 3) return "3x3 kernels over 2d inputs only";
    for (int d = 1; d < 3; ++d)
        if (p.stride[d] != 1 || p.dil[d] != 1) return "stride 1 and dilation 1 only";
    if (p.cx == 0) return "no input channels";
    // Output tiles of m x m (F(m x m, 3x3)): 4 by shape or with TGL_TUNE_CONV=winograd4, 2 with
    // TGL_TUNE_CONV=winograd; E products, one per element of an (m + 2) x (m + 2) input tile.
    const int64_t m = path == ConvTuning::Path::Winograd ? 2 : 4, E = (m + 2) * (m + 2);
    const int64_t C = p.cx, K = p.cy, tiles_h = (p.out[1] + m - 1) / m, tiles_w = (p.out[2] + m - 1) / m;
    const int64_t tiles = p.batch * tiles_h * tiles_w;
    if (path == ConvTuning::Path::Auto && (C < kWinogradMinChannels || K < kWinogradMinChannels ||
                                           p.batch * p.out[1] * p.out[2] < kWinogradMinPositions))
        return format("by shape: fewer than %lld input or output channels, or %lld output positions (TGL_TUNE_CONV=winograd forces it)",
                      (long long)kWinogradMinChannels, (long long)kWinogradMinPositions);
    if (tiles == 0 || K == 0) return "";  // nothing to store
    const int64_t window = dev.max_window_bytes(), align = dev.window_alignment();
    auto aligned = [&](int64_t b) { return (b + align - 1) / align * align; };
    const int64_t cp = (C + 3) / 4 * 4;
    const int64_t u_bytes = E * K * cp * 4;
    if (u_bytes > window)
        return format("the transformed weight (%lld x %lld x %lld f32, %lld bytes) exceeds one shader storage block (%lld bytes)",
                      (long long)E, (long long)K, (long long)cp, (long long)u_bytes, (long long)window);
    // Tiles per chunk (a multiple of 4: V's and M's rows are read as quads).
    const int64_t per_tile = E * std::max(C, K) * 4;
    const int64_t tc = std::min((tiles + 3) / 4 * 4, std::min(window, kWinogradMaxBytes) / per_tile / 4 * 4);
    if (tc == 0)
        return format("4 tiles' transformed input or products (%lld bytes) exceed one shader storage block (%lld bytes)",
                      (long long)(4 * per_tile), (long long)window);
    const int64_t v_at = aligned(u_bytes), v_bytes = E * C * tc * 4, m_at = v_at + aligned(v_bytes), m_bytes = E * K * tc * 4;
    const int64_t total = m_at + aligned(m_bytes);
    const BufferRef scratch = dev.scratch(uint64_t(total));
    auto region = [&](int64_t at, int64_t bytes) {
        Binding b;
        b.keep = scratch;
        b.name = static_cast<GlesBuffer&>(*scratch).name();
        b.offset = at;
        b.size = bytes;
        return b;
    };
    const int wg = dev.workgroup_size();
    auto pass = [&](const char* name, bool epilogue, int bind, const Binding& b, int64_t items, int64_t t0, int64_t n) {
        Defines defines = r.variant(epilogue);
        defines.emplace_back(name, "");
        defines.emplace_back(def::kWorkgroupSize, str(wg));
        defines.emplace_back("WINO_M", str(m));
        Dispatch d = r.base;
        d.bindings[size_t(bind)] = b;
        d.program = dev.program("conv.comp", defines);
        d.uniforms.push_back(uniform_int("u_wino_tiles", {to_i32(tiles_h, "the tile rows"), to_i32(tiles_w, "the tile columns")}));
        d.uniforms.push_back(uniform_int("u_wino_t0", {to_i32(t0, "a tile")}));
        d.uniforms.push_back(uniform_int("u_wino_tc", {int32_t(n)}));
        d.uniforms.push_back(uniform_int("u_wino_tp", {int32_t(tc)}));
        d.uniforms.push_back(uniform_int("u_wino_cp", {int32_t(cp)}));
        add_chunks(dev, d, ceil_div(uint64_t(items), uint64_t(wg)), r.dispatches);
    };
    to_i32(tiles, "the output tiles");
    // Every pass planned before any is queued (a failure queues nothing): the products' dispatches
    // captured between the transforms'.
    std::vector<Dispatch> planned = dev.capture([&] {
        pass("WINO_WEIGHT", false, 2, region(0, u_bytes), K * C, 0, tc);
        OpCall mm;
        mm.info = find_op(TGL_OP_MATMUL);
        mm.dtype = TGL_DTYPE_F32;
        for (int64_t t0 = 0; t0 < tiles; t0 += tc) {
            const int64_t n = std::min(tc, tiles - t0);
            pass("WINO_INPUT", false, 2, region(v_at, v_bytes), C * n, t0, n);
            dev.submit(r.call.info->name, std::move(r.dispatches));
            r.dispatches.clear();
            mm.inputs = {scratch_view(scratch, 0, {E, K, C}, {K * cp, cp, 1}), scratch_view(scratch, v_at, {E, C, n}, {C * tc, tc, 1})};
            mm.outputs = {scratch_view(scratch, m_at, {E, K, n}, {K * tc, tc, 1})};
            plan_matmul(mm, nullptr);
            run_matmul(dev, mm, nullptr, total);
            pass("WINO_OUTPUT", true, 0, region(m_at, m_bytes), K * n, t0, n);
        }
        dev.submit(r.call.info->name, std::move(r.dispatches));
        r.dispatches.clear();
    });
    r.dispatches = std::move(planned);
    return "";
}

// 1x1 convolutions (forward, one group, stride 1, unpadded: y[n] = W x[n] over the positions) as
// the matmul family's products (run_matmul: its vector-loading tiles), planned on views of the
// operands. Two orientations:
//   matmul  C[n] = W (Cout x Cin, broadcast over the batch) x x[n] (Cin x P): the output rows are
//           channels and its columns positions, consecutive in an NCHW y; no per-row bias in
//           the matmul plan, so only without a bias, with W, x and y of one dtype.
//   linear  y[n]^T = x[n]^T W^T + bias (P x Cout, K = Cin): linear's bias per column (channel)
//           and mixed weights; columns consecutive in a channels-last y.
// The positions of x and y must each be one stride (P = D*H*W of any contiguous spatial block).
// By shape (TGL_TUNE_CONV=gemm1x1 / mm1x1 / lin1x1 force one): the matmul where it applies, with
// consecutive positions in y, at least kPointwiseMinRows output channels and at least twice as
// many output as input channels (a short K: the expand layers), else the implicit GEMM. H200,
// ResNet-50 1x1 layers at batch 32 (GEMM -> matmul): expand 56x56 0.262 -> 0.228 ms, 28x28 0.229
// -> 0.227, 14x14 0.212 -> 0.212, 7x7 0.294 -> 0.246; reduce (4x fewer output channels) 28x28
// 0.233 -> 0.265, 14x14 0.216 -> 0.293, 7x7 0.233 -> 0.343 (docs/gpu.md); conv2_x reduce 256 -> 64
// 0.218 -> 0.386 (the plan's 128x128 tile, half of its rows idle). The linear is opt-in (lin1x1):
// 0.290 ms for conv2_x expand (its stores stride over the positions), unmeasured channels-last on a GPU.
constexpr int64_t kPointwiseMinRows = 128;
// The positions of extent n (d, h, w) at element strides s as one dim: its stride, or -1 when they
// are not one stride apart.
int64_t positions_stride(const int64_t* n, const int64_t* s) {
    int64_t step = 1, inner = 0;  // inner: the positions walked so far (0: none yet)
    for (int d = 2; d >= 0; --d) {
        if (n[d] == 1) continue;
        if (inner == 0) step = s[d], inner = n[d];
        else if (s[d] != step * inner) return -1;
        else inner *= n[d];
    }
    return step;
}

// A view of t's elements: offset and (size, stride) per dim.
TensorArg view(const TensorArg& t, int64_t offset, std::initializer_list<std::pair<int64_t, int64_t>> dims) {
    TensorArg v = t;  // buffer, dtype and byte range (the view walks the same elements)
    v.offset = offset;
    v.rank = int(dims.size());
    v.numel = 1;
    int d = 0;
    for (auto [n, stride] : dims) {
        v.shape[d] = n;
        v.strides[d++] = stride;
        v.numel *= n;
    }
    return v;
}

std::string pointwise_candidate(ConvRun& r) {
    const ConvPlan& p = r.p;
    const ConvTuning::Pointwise route = r.dev.tuning().conv.pointwise;
    if (route == ConvTuning::Pointwise::Gemm) return "turned off by TGL_TUNE_CONV=gemm1x1";
    if (p.mode != ConvPlan::Forward) return "forward convolutions only";
    if (p.groups != 1) return format("%lld groups, not 1", (long long)p.groups);
    for (int d = 0; d < 3; ++d)
        if (p.k[d] != 1 || p.stride[d] != 1 || p.pad[d] != 0) return "1x1 kernels, stride 1, unpadded only";
    if (r.accumulate) return "not for a piece that adds to the output";
    const OpCall& call = r.call;
    const TensorArg& X = call.inputs[size_t(p.x_slot)];
    const TensorArg& W = call.inputs[size_t(p.w_slot)];
    const TensorArg& Y = call.outputs[size_t(p.y_slot)];
    if (Y.dtype != X.dtype) return "an output of another dtype than x";
    const int64_t P = p.out[0] * p.out[1] * p.out[2];
    if (p.batch * P == 0 || p.cy == 0 || p.cx == 0) return "an empty product";
    const int64_t xp = positions_stride(p.in, p.xs + 2), yp = positions_stride(p.out, p.ys + 2);
    if (xp < 0 || yp < 0) return "positions of x or y not one stride apart";
    const bool bias = r.has_bias;
    const bool matmul_fits = !bias && W.dtype == X.dtype;
    bool as_matmul;
    if (route == ConvTuning::Pointwise::Matmul) as_matmul = matmul_fits;
    else if (route == ConvTuning::Pointwise::Linear) as_matmul = false;
    else if (matmul_fits && yp == 1 && p.cy >= kPointwiseMinRows && p.cy >= 2 * p.cx) as_matmul = true;
    else
        return format("by shape: a bias, dtypes that differ, y's positions not consecutive, fewer than %lld output channels "
                      "or fewer than twice the input channels (TGL_TUNE_CONV=mm1x1 / lin1x1 force a product)",
                      (long long)kPointwiseMinRows);
    OpCall mm;
    mm.dtype = call.dtype;
    tgl_linear_params lin{sizeof(tgl_linear_params), tgl_activation(p.activation)};
    if (as_matmul) {
        mm.info = find_op(TGL_OP_MATMUL);
        mm.inputs = {view(W, p.w_off, {{p.cy, p.w_m}, {p.cx, p.w_c}}),
                     view(X, p.x_off, {{p.batch, p.xs[0]}, {p.cx, p.xs[1]}, {P, xp}})};
        mm.outputs = {view(Y, p.y_off, {{p.batch, p.ys[0]}, {p.cy, p.ys[1]}, {P, yp}})};
        plan_matmul(mm, nullptr);
        mm.matmul().activation = p.activation;  // the matmul op has none of its own; the plan's epilogue does
    } else {
        mm.info = find_op(TGL_OP_LINEAR);
        mm.params = &lin;
        mm.inputs = {view(X, p.x_off, {{p.batch, p.xs[0]}, {P, xp}, {p.cx, p.xs[1]}}), view(W, p.w_off, {{p.cy, p.w_m}, {p.cx, p.w_c}}),
                     bias ? view(call.inputs[size_t(p.b_slot)], p.b_off, {{p.cy, p.bs}}) : TensorArg{}};
        mm.outputs = {view(Y, p.y_off, {{p.batch, p.ys[0]}, {P, yp}, {p.cy, p.ys[1]}})};
        plan_matmul(mm, &lin);
    }
    r.dispatches = r.dev.capture([&] { run_matmul(r.dev, mm, nullptr); });
    return "";
}

const KernelCandidate<ConvRun&> kCandidates[] = {
    {"winograd", winograd_candidate}, {"pointwise", pointwise_candidate}, {"direct", direct_candidate}, {"gemm", gemm_candidate}};

}  // namespace

void run_conv(GlesDevice& dev, const OpCall& call) { run_conv(dev, call, false); }

void run_conv(GlesDevice& dev, const OpCall& call, bool accumulate) {
    const ConvPlan& p = call.conv();
    const OpInfo& info = *call.info;
    const bool wgrad = p.mode == ConvPlan::WeightGrad;
    const TensorArg& X = call.inputs[size_t(p.x_slot)];
    const TensorArg& Yr = (p.y_is_out ? call.outputs : call.inputs)[size_t(p.y_slot)];
    const TensorArg& Wr = (p.w_is_out ? call.outputs : call.inputs)[size_t(p.w_slot)];
    const TensorArg* B = p.b_slot >= 0 ? &(wgrad ? call.outputs : call.inputs)[size_t(p.b_slot)] : nullptr;
    const TensorArg& Out = wgrad ? Wr : Yr;  // binding 2
    const TensorArg& A = wgrad ? Yr : Wr;    // binding 1
    const std::string x_label = operand_label(info, false, uint32_t(p.x_slot));
    const std::string a_label = wgrad ? operand_label(info, false, uint32_t(p.y_slot)) : operand_label(info, false, uint32_t(p.w_slot));
    const std::string o_label = wgrad ? operand_label(info, true, 0) : operand_label(info, true, uint32_t(p.y_slot));

    const int64_t ovol = p.out[0] * p.out[1] * p.out[2], kvol = p.k[0] * p.k[1] * p.k[2];
    const int32_t M = int32_t(count_u32(p.cy, "the output channels of a group"));
    const int32_t N = int32_t(count_u32(wgrad ? p.cx * kvol : p.batch * ovol, "the GEMM columns of the convolution"));
    const int32_t K = int32_t(count_u32(wgrad ? p.batch * ovol : p.cx * kvol, "the reduction length of the convolution"));
    count_u32(Out.numel, o_label.c_str());
    if (accumulate && (wgrad || Out.dtype != TGL_DTYPE_F32))
        fail(TGL_ERROR_INTERNAL, "op '%s': a piece that adds to its output needs an f32 y (forward or transposed)", info.name);
    ConvRun r{dev, call, p, wgrad, B != nullptr, accumulate, M, N, K, Out.numel, o_label, {}, {}, A.dtype, B ? B->dtype : Out.dtype};

    // Bindings: empty operands (never read) are stood in for by a bound one.
    int32_t x_off = 0, a_off = 0, o_off = 0, b_off = 0;
    Dispatch& base = r.base;
    Binding ob = Out.numel > 0 ? dev.window(Out, o_label.c_str(), &o_off) : Binding{};
    Binding bb = B && B->numel > 0 ? dev.window(*B, operand_label(info, wgrad, uint32_t(p.b_slot)).c_str(), &b_off) : Binding{};
    const Binding& any = Out.numel > 0 ? ob : bb;
    base.bindings.push_back(X.numel > 0 ? dev.window(X, x_label.c_str(), &x_off) : any);
    base.bindings.push_back(A.numel > 0 ? dev.window(A, a_label.c_str(), &a_off) : any);
    base.bindings.push_back(Out.numel > 0 ? ob : any);
    const Binding out_binding = base.bindings[2];
    base.bindings.push_back(B ? bb : out_binding);  // never read or written when absent

    auto& U = base.uniforms;
    U.push_back(uniform_int("u_has_bias", {B ? 1 : 0}));
    U.push_back(uniform_int("u_in3", to_i32s(p.in, 3, "a spatial size")));
    U.push_back(uniform_int("u_out3", to_i32s(p.out, 3, "a spatial size")));
    U.push_back(uniform_int("u_k3", to_i32s(p.k, 3, "a kernel size")));
    U.push_back(uniform_int("u_stride3", to_i32s(p.stride, 3, "a stride")));
    U.push_back(uniform_int("u_dil3", to_i32s(p.dil, 3, "a dilation")));
    U.push_back(uniform_int("u_pad3", to_i32s(p.pad, 3, "a pad")));
    U.push_back(uniform_int("u_ws3", to_i32s(p.ws, 3, "a stride of the weight")));
    U.push_back(uniform_int("u_xs", to_i32s(p.xs, 5, "a stride of x")));
    U.push_back(uniform_int("u_ys", to_i32s(p.ys, 5, "a stride of y")));
    U.push_back(uniform_int("u_w_m", {to_i32(p.w_m, "a stride of the weight")}));
    U.push_back(uniform_int("u_w_c", {to_i32(p.w_c, "a stride of the weight")}));
    U.push_back(uniform_int("u_w_g", {to_i32(p.w_g, "a stride of the weight")}));
    U.push_back(uniform_int("u_bs", {to_i32(p.bs, "a stride of the bias")}));
    U.push_back(uniform_int("u_x_off", {x_off}));
    U.push_back(uniform_int("u_y_off", {wgrad ? a_off : o_off}));
    U.push_back(uniform_int("u_w_off", {wgrad ? o_off : a_off}));
    U.push_back(uniform_int("u_b_off", {b_off}));
    U.push_back(uniform_int("u_batch", {to_i32(p.batch, "the batch")}));
    U.push_back(uniform_int("u_cx", {to_i32(p.cx, "channels per group")}));
    U.push_back(uniform_int("u_cy", {M}));
    U.push_back(uniform_int("u_groups", {to_i32(p.groups, "groups")}));
    U.push_back(uniform_int("u_M", {M}));

    take_first_candidate(kCandidates, format("op '%s'", info.name), r);
    dev.submit(info.name, std::move(r.dispatches));
}

void register_conv_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Conv, run_conv, &kConvSplit});
}

}  // namespace gles
}  // namespace tgl
