// GLES host side of the GGUF block dtypes (plugin_api.h; shader: glsl/gguf.comp, decoders in
// glsl/gguf.glsl): dequantize, linear with a block W, grouped_linear with a block W and
// index_select of a block table. The blocks are read as stored (no host repack). Every operand is
// bound in windows within the SSBO block size limit (window_split.cpp's rule for the other ops):
//   dequantize          PASS_DEQUANT over x's rows, in runs of rows along x's first dim that fit.
//   linear, M <= 8      PASS_GEMV (decode), W's rows in chunks whose blocks fit one window.
//   linear, M > 8;      W's rows in chunks: each chunk decoded by PASS_DEQUANT into an internal
//   grouped_linear      buffer of x's dtype, then the chunk's columns of y by the float linear /
//                       grouped_linear kernels (matmul_kernels.cpp, through GlesDevice::run), so
//                       bias, activation, expert index check and window splitting are theirs.
//   index_select        the index check (index_kernels.cpp), then PASS_DEQUANT INDEXED over y's
//                       rows, the table and y (with the index) bound in windows of rows.
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"

#include "block_dtypes.h"  // backends/common
#include "validate.h"      // backends/common

#include <algorithm>

namespace tgl {
namespace gles {

namespace {

constexpr int kGemvMaxM = 8;   // rows of x that take PASS_GEMV (gguf.comp: one row of x at a time)
// The decoded chunk of W for the float kernels (M > 8, grouped_linear): at most this many bytes.
constexpr int64_t kDecodedChunkBytes = int64_t(64) << 20;

// A view cut to [lo, lo + n) along dim d, its byte extent recomputed (block dtypes: block_dtypes.h).
TensorArg cut(const TensorArg& t, int d, int64_t lo, int64_t n) {
    TensorArg c = t;
    c.offset += lo * t.strides[d];
    c.shape[d] = n;
    c.numel = 1;
    for (int i = 0; i < c.rank; ++i) c.numel *= c.shape[i];
    if (c.numel == 0) {
        c.byte_lo = c.byte_hi = 0;
        return c;
    }
    __int128 blo = 0, bhi = 0;
    if (is_block_dtype(t.dtype)) {
        block_view_bytes(t.dtype, c.rank, c.shape, c.strides, c.offset, &blo, &bhi);
    } else {
        const int64_t es = tgl_dtype_size(t.dtype);
        __int128 lo_e = c.offset, hi_e = c.offset;
        for (int i = 0; i < c.rank; ++i) {
            const __int128 span = __int128(c.strides[i]) * (c.shape[i] - 1);
            if (span < 0) lo_e += span; else hi_e += span;
        }
        blo = lo_e * es;
        bhi = (hi_e + 1) * es;
    }
    c.byte_lo = int64_t(blo);
    c.byte_hi = int64_t(bhi);
    return c;
}

Defines base_defines(int wg, tgl_dtype y, const char* pass) {
    return {{pass, ""}, {def::kYDtype, str(y)}, {def::kWorkgroupSize, str(wg)}};
}

// Row byte strides of a block view's leading dims (its element strides are multiples of B).
int64_t row_bytes(tgl_dtype dt, int64_t element_stride) {
    return element_stride / int64_t(tgl_dtype_block_size(dt)) * int64_t(tgl_dtype_block_bytes(dt));
}

// PASS_DEQUANT of block view x (rank >= 1) into y (x's shape, or with INDEXED the rows of y are
// index_select's: x's dim 0 picked by `index`, x's rows [lo, hi) of dim 0 in this window).
void add_dequant(GlesDevice& dev, const TensorArg& x, const TensorArg& y, std::vector<Dispatch>& ds,
                 const TensorArg* index = nullptr, const GlesDevice::DeviceCheck* check = nullptr, int64_t lo = 0,
                 int64_t hi = 0) {
    if (y.numel == 0) return;
    const int lead = std::max(1, y.rank - 1);
    int64_t shape[TGL_MAX_RANK] = {1}, xs[TGL_MAX_RANK] = {0}, ys[TGL_MAX_RANK] = {0};
    int64_t rows = 1;
    for (int d = 0; d + 1 < y.rank; ++d) {
        shape[d] = y.shape[d];
        xs[d] = row_bytes(x.dtype, x.strides[d]);
        ys[d] = y.strides[d];
        rows *= y.shape[d];
    }
    const int64_t K = y.shape[y.rank - 1];
    const int64_t row_units = (K + 15) / 16;
    int32_t x_base = 0, y_off = 0;
    Dispatch d;
    Defines defs = base_defines(dev.workgroup_size(), y.dtype, "PASS_DEQUANT");
    defs.emplace_back("RANK", str(lead));
    const Binding xb = dev.window(x, "the block tensor", &x_base);
    const Binding yb = dev.window(y, "outputs[0] (y)", &y_off);
    d.bindings = {yb, xb};
    if (index) {
        defs.emplace_back("INDEXED", "");
        defs.emplace_back(def::kIndexDtype, str(index->dtype));
        int32_t i_off = 0;
        d.bindings.push_back(dev.window(*index, "the index tensor", &i_off));
        d.bindings.push_back(check->status);
        d.uniforms = {uniform_int("u_i_offset", {i_off}), uniform_int("u_i_str", {to_i32(index->strides[0], "the index's stride")}),
                      uniform_int("u_lo", {to_i32(lo, "a table row")}), uniform_int("u_hi", {to_i32(hi, "a table row")}),
                      uniform_uint("u_check_seq", {check->seq})};
    }
    d.program = dev.program("gguf.comp", defs);
    d.uniforms.push_back(uniform_int("u_w_dtype", {int32_t(x.dtype)}));
    d.uniforms.push_back(uniform_uint("u_units", {count_u32(rows * row_units, "the units of 16 elements of y")}));
    d.uniforms.push_back(uniform_int("u_row_units", {to_i32(row_units, "the units of a row")}));
    d.uniforms.push_back(uniform_int("u_K", {to_i32(K, "K")}));
    d.uniforms.push_back(uniform_int("u_shape", to_i32s(shape, lead, "a dim of y")));
    d.uniforms.push_back(uniform_int("u_x_str", to_i32s(xs, lead, "a row stride of the block tensor (bytes)")));
    d.uniforms.push_back(uniform_int("u_y_str", to_i32s(ys, lead, "a stride of y")));
    d.uniforms.push_back(uniform_int("u_x_base", {x_base}));
    d.uniforms.push_back(uniform_int("u_y_offset", {y_off}));
    d.uniforms.push_back(uniform_int("u_y_k_str", {to_i32(K > 1 ? y.strides[y.rank - 1] : 0, "y's last stride")}));
    add_chunks(dev, d, ceil_div(uint64_t(rows * row_units), uint64_t(dev.workgroup_size())), ds);
}

// Whether view t would fit one window wherever a run of its size starts: the window starts at its
// first byte aligned down (window_alignment), so a run elsewhere may need up to that much more.
bool fits_anywhere(GlesDevice& dev, const TensorArg& t) {
    return dev.window_bytes(t) + dev.window_alignment() <= dev.max_window_bytes();
}

// Largest n <= total such that `fits(n)`, halving from total (at least 1; the caller's window()
// reports a single row that does not fit).
template <class F>
int64_t fitting_run(int64_t total, F fits) {
    int64_t n = std::max<int64_t>(total, 1);
    while (n > 1 && !fits(n)) n = (n + 1) / 2;
    return n;
}

void run_dequantize(GlesDevice& dev, const OpCall& call) {
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    std::vector<Dispatch> ds;
    if (x.rank == 1) {
        add_dequant(dev, x, y, ds);
    } else {  // runs of x's first dim whose windows fit
        const int64_t rows = x.shape[0];
        const int64_t run = fitting_run(rows, [&](int64_t n) { return fits_anywhere(dev, cut(x, 0, 0, n)) && fits_anywhere(dev, cut(y, 0, 0, n)); });
        for (int64_t lo = 0; lo < rows; lo += run) {
            const int64_t n = std::min(run, rows - lo);
            add_dequant(dev, cut(x, 0, lo, n), cut(y, 0, lo, n), ds);
        }
    }
    dev.submit("dequantize", std::move(ds));
}

void run_index_select(GlesDevice& dev, const OpCall& call) {
    const TensorArg& x = call.inputs[0];
    const TensorArg& index = call.inputs[1];
    const TensorArg& y = call.outputs[0];
    const GlesDevice::DeviceCheck check = dev.device_check();
    std::vector<Dispatch> ds;
    add_index_check(dev, call, check, ds);
    // The table in windows of rows, y (and the index with it) in windows of positions: every pair.
    const int64_t rows = x.shape[0], T = y.shape[0];
    const int64_t run = fitting_run(rows, [&](int64_t n) { return fits_anywhere(dev, cut(x, 0, 0, n)); });
    const int64_t t_run = fitting_run(T, [&](int64_t n) { return fits_anywhere(dev, cut(y, 0, 0, n)) && fits_anywhere(dev, cut(index, 0, 0, n)); });
    for (int64_t t0 = 0; t0 < T; t0 += t_run) {
        const int64_t tn = std::min(t_run, T - t0);
        const TensorArg yc = cut(y, 0, t0, tn), ic = cut(index, 0, t0, tn);
        for (int64_t lo = 0; lo < rows; lo += run)
            add_dequant(dev, cut(x, 0, lo, std::min(run, rows - lo)), yc, ds, &ic, &check, lo, std::min(rows, lo + run));
    }
    dev.submit("index_select", std::move(ds));
}

// PASS_GEMV's shape for N rows of W: TGL_TUNE_GGUF's (tuning.h), with half the lanes from its n<N>
// rows on, cut down only where the device cannot hold it (the workgroup, the rows per invocation
// and the lanes halved until the partials, ROWS floats an invocation, fit the shared memory).
// Neither M nor K changes it, so that a device compiles at most two programs per format (and x
// layout) for every decode GEMV.
struct GemvShape {
    int lanes, rows, unroll, wg, passes;
    int64_t x_bytes;  // shared memory left for a staged row of x (gguf.comp X_SHARED; 0: none)
};

// The pairs of chunks of gguf.comp's staged row of x (X_STR) for K: a power of two of pairs (at
// least 16: K 1024) plus one (1 modulo 8: no bank conflicts), so that a device compiles few programs
// yet declares no more shared memory than such a row needs (what a workgroup declares bounds how
// many share a multiprocessor): 16 vec4s and a vec4 of unit sums a pair. 0 where that passes x_bytes.
int64_t x_shared_pairs(int64_t K, int64_t x_bytes) {
    int64_t pairs = 16;
    while (pairs < (K + 63) / 64) pairs *= 2;
    pairs += 1;
    return pairs * (16 * 16 + 16) <= x_bytes ? pairs : 0;
}

// wg: the workgroup asked for (0: TGL_TUNE_GGUF's).
GemvShape gemv_shape(const GlesDevice& dev, int64_t N, int wg = 0) {
    const GgufTuning& t = dev.tuning().gguf;
    const Limits& L = dev.limits();
    GemvShape g{t.lanes, t.rows, t.unroll, wg > 0 ? wg : t.wg, t.passes, 0};
    if (t.halve_lanes_from > 0 && N >= t.halve_lanes_from) g.lanes = std::max(1, g.lanes / 2);
    const int64_t cap = std::min<int64_t>(L.max_invocations, L.max_size[0]);
    const auto shared_bytes = [&] { return int64_t(g.rows) * g.wg * 4; };
    g.wg = std::max(g.wg, g.lanes);
    while (g.wg > 1 && (g.wg > cap || (g.wg > g.lanes && shared_bytes() > L.max_shared_bytes))) g.wg /= 2;
    while (g.rows > 1 && shared_bytes() > L.max_shared_bytes) g.rows /= 2;
    while (g.wg > 1 && shared_bytes() > L.max_shared_bytes) g.wg /= 2;
    g.lanes = std::min(g.lanes, g.wg);
    // A row of x in shared memory: what the partials leave (K 8192 fits NVIDIA's 48 KiB, 2048 the
    // GLES minimum of 16 KiB; longer rows are read by every invocation).
    if (t.x_shared) g.x_bytes = L.max_shared_bytes - shared_bytes();
    return g;
}

// Loop passes of PASS_GEMV's longest invocation (loop_budget.h): x's staging in shared memory
// where a row fits, then per row of x, per chunk of its trips (whole trips of UNROLL pairs) and the
// two chunks past the whole pairs, the loads (gguf_unit's loops for the other formats), x's 32
// elements and the sums.
uint64_t gemv_passes(const GemvShape& g, int64_t M, int64_t K) {
    const uint64_t per_lane = 2 * ceil_div(uint64_t(K / 64), uint64_t(g.lanes) * g.unroll) * g.unroll + 2;
    const uint64_t unit = 4 + 2 * loop_cost(16) + 2 * loop_cost(4);
    const uint64_t per_chunk = 6 + 2 * uint64_t(g.rows) * unit + loop_cost(32);
    const uint64_t units = 4 * uint64_t((K + 63) / 64);  // x staged in shared memory: a unit an invocation
    const uint64_t staging = x_shared_pairs(K, g.x_bytes) > 0 ? ceil_div(units, uint64_t(g.wg)) * (2 + loop_cost(4)) : 0;
    return 2 + uint64_t(M) * (staging + uint64_t(g.passes) * (per_lane * per_chunk + uint64_t(g.rows) * (2 + loop_cost(6))));
}

// x (operand 0) or y (output 0) of a GEMV call as (M, K) / (M, N) from the plan (leading dims
// merged into M).
TensorArg gemv_rows(const OpCall& call, bool output) {
    const MatmulPlan& p = call.matmul();
    TensorArg t = output ? call.outputs[0] : call.inputs[0];
    t.rank = 2;
    t.shape[0] = p.M;
    t.shape[1] = output ? p.N : p.K;
    t.strides[0] = p.M > 1 ? (output ? p.out[0].m_stride : p.a_m_stride) : 0;
    t.strides[1] = output ? p.out[0].n_stride : p.a_k_stride;
    return cut(t, 0, 0, p.M);
}

// linear, M <= 8: PASS_GEMV's dispatches of shape g over W's rows in chunks whose blocks (and
// y's and the bias's columns) fit one window, storing into y2 (gemv_rows' view of the output, or
// the same view of a scratch: fastest_plan).
std::vector<Dispatch> gemv_plan(GlesDevice& dev, const OpCall& call, const GemvShape& g, const TensorArg& y2) {
    const MatmulPlan& p = call.matmul();
    const TensorArg& x = call.inputs[0];
    const TensorArg& W = call.inputs[1];
    const TensorArg& y = call.outputs[0];
    const int64_t M = p.M, N = p.N, K = p.K;
    const TensorArg x2 = gemv_rows(call, false);
    const TensorArg* bias = p.bias_input >= 0 ? &call.inputs[size_t(p.bias_input)] : nullptr;
    const int64_t run = fitting_run(N, [&](int64_t n) {
        return fits_anywhere(dev, cut(W, 0, 0, n)) && fits_anywhere(dev, cut(y2, 1, 0, n)) && (!bias || fits_anywhere(dev, cut(*bias, 0, 0, n)));
    });
    // A GPU's program is this format's, for one row of x (the decode) or every M <= 8, and this
    // epilogue (constants where the kernel specialises: its registers); a software renderer's is
    // one for every format, M and epilogue (u_w_dtype, u_M, u_activation, u_has_bias: compile time).
    const bool software = dev.software();
    const int wg_rows = g.wg / g.lanes * g.rows * g.passes;  // a workgroup's rows, all passes
    std::vector<Dispatch> ds;
    int32_t x_off = 0;
    const Binding xb = dev.window(x2, "inputs[0] (x)", &x_off);
    const bool x_pairs = x.dtype == TGL_DTYPE_F16 && (K == 1 || x2.strides[1] == 1) && x_off % 2 == 0 && x2.strides[0] % 2 == 0;
    // Whole uvec4s of 8 halves: every row starts on a 16-byte boundary (the window's start is one)
    // and ends on one, so a chunk's last octet lies within x.
    const bool x_octets = x_pairs && K % 8 == 0 && x_off % 8 == 0 && x2.strides[0] % 8 == 0;
    // x's rows staged one at a time per workgroup in shared memory where one fits.
    const int64_t x_pairs_staged = x_shared_pairs(K, g.x_bytes);
    for (int64_t n0 = 0; n0 < N; n0 += run) {
        const int64_t n = std::min(run, N - n0);
        const TensorArg Wc = cut(W, 0, n0, n), yc = cut(y2, 1, n0, n);
        int32_t w_base = 0, y_off = 0, b_off = 0;
        Dispatch d;
        Defines defs = base_defines(g.wg, y.dtype, "PASS_GEMV");
        if (!software) defs.emplace_back("W_DTYPE", str(W.dtype));
        defs.emplace_back("LANES", str(g.lanes));
        defs.emplace_back("ROWS", str(g.rows));
        defs.emplace_back("UNROLL", str(g.unroll));
        defs.emplace_back("PASSES", str(g.passes));
        if (!software) {
            if (M == 1) defs.emplace_back("GEMV_M", "1");
            defs.emplace_back("ACTIVATION", str(int(p.activation)));  // activation.glsl
            defs.emplace_back("GEMV_HAS_BIAS", bias ? "1" : "0");
        }
        dev.add_subgroup_define(defs, g.wg);  // the lanes' sum by shuffles (gguf.comp)
        // x staged (read by octets where it can be, else element by element), or read by every row.
        if (x_pairs_staged > 0) {
            defs.emplace_back("X_SHARED", str(16 * x_pairs_staged));
            defs.emplace_back("X_STR", str(x_pairs_staged));
        }
        if (x_octets) defs.emplace_back("X_F16_OCTETS", "");
        else if (x_pairs_staged > 0) d.uniforms.push_back(uniform_int("u_x_pairs", {x_pairs ? 1 : 0}));
        else if (x_pairs) defs.emplace_back("X_F16_PAIRS", "");
        d.bindings = {dev.window(yc, "outputs[0] (y)", &y_off), dev.window(Wc, "inputs[1] (W)", &w_base), xb};
        // Every row on a 4-byte boundary: q4_0's and q8_0's blocks alternate known word offsets.
        const int64_t w_row_bytes = n > 1 ? row_bytes(W.dtype, W.strides[0]) : 0;
        const bool w_aligned = w_base % 4 == 0 && w_row_bytes % 4 == 0;
        if (software) d.uniforms.push_back(uniform_int("u_w_aligned", {w_aligned ? 1 : 0}));
        else if (w_aligned) defs.emplace_back("W_ALIGNED", "");
        // q4_K rows on 16-byte boundaries (144-byte super-blocks, from a first on one): W bound as
        // uvec4s, a pair's scale header and 32 bytes of quants three 16-byte loads (W_QUADS).
        if (!software && W.dtype == TGL_DTYPE_Q4_K && w_base % 16 == 0 && w_row_bytes % 16 == 0)
            defs.emplace_back("W_QUADS", "");
        // y f16, contiguous, every row's element 0 on a word: the rows stored as whole words of two
        // (Y_WORDS; else each f16 by two atomics on the word it shares with its neighbour).
        if (y.dtype == TGL_DTYPE_F16 && (n == 1 || y2.strides[1] == 1) && y_off % 2 == 0 && (M == 1 || y2.strides[0] % 2 == 0))
            defs.emplace_back("Y_WORDS", "");
        // Without a bias, x's window again at binding 3 (the shader reads it only under u_has_bias).
        d.bindings.push_back(bias ? dev.window(cut(*bias, 0, n0, n), "inputs[2] (bias)", &b_off) : xb);
        d.uniforms.push_back(uniform_int("u_has_bias", {bias ? 1 : 0}));
        d.uniforms.push_back(uniform_int("u_b_offset", {b_off}));
        d.uniforms.push_back(uniform_int("u_b_n_str", {to_i32(bias && n > 1 ? p.bias_n_stride : 0, "the bias's stride")}));
        d.uniforms.push_back(uniform_int("u_activation", {int32_t(p.activation)}));
        d.uniforms.push_back(uniform_int("u_M", {to_i32(M, "M")}));
        d.program = dev.program("gguf.comp", defs);
        if (software) d.uniforms.push_back(uniform_int("u_w_dtype", {int32_t(W.dtype)}));
        d.uniforms.push_back(uniform_int("u_K", {to_i32(K, "K")}));
        d.uniforms.push_back(uniform_int("u_N", {to_i32(n, "N")}));
        d.uniforms.push_back(uniform_int("u_w_base", {w_base}));
        d.uniforms.push_back(uniform_int("u_w_n_str", {to_i32(w_row_bytes, "W's row stride (bytes)")}));
        d.uniforms.push_back(uniform_int("u_x_offset", {x_off}));
        d.uniforms.push_back(uniform_int("u_x_m_str", {to_i32(x2.strides[0], "x's row stride")}));
        d.uniforms.push_back(uniform_int("u_x_k_str", {to_i32(K > 1 ? x2.strides[1] : 0, "x's stride")}));
        d.uniforms.push_back(uniform_int("u_y_offset", {y_off}));
        d.uniforms.push_back(uniform_int("u_y_m_str", {to_i32(y2.strides[0], "y's row stride")}));
        d.uniforms.push_back(uniform_int("u_y_n_str", {to_i32(n > 1 ? y2.strides[1] : 0, "y's stride")}));
        add_chunks(dev, d, ceil_div(uint64_t(n), uint64_t(wg_rows)), ds);
    }
    return ds;
}

// The measured alternative to shape g (fastest_plan): twice the workgroup, so twice its rows
// with x staged once for them, and the same lanes, so the same sums in the same order: the same
// bits. On an H100 one workgroup of 1024 a multiprocessor beats two of 512 where the workgroups
// fill the GPU about once (1 x 4096 x 4096: q4_K 2.51 - 2.53x the f16 GEMV against 2.40x) and
// loses by 14 - 21% elsewhere (1024, 6144, 11008 rows; docs/quantized.md, fourteenth look); GLES
// reports no multiprocessor count, so the choice is measured. False where the device cannot hold
// it whole (gemv_shape's cuts), or x would no longer be staged.
bool gemv_wide_shape(const GlesDevice& dev, const GemvShape& g, int64_t N, int64_t K, GemvShape* wide) {
    *wide = gemv_shape(dev, N, 2 * g.wg);
    return wide->wg == 2 * g.wg && wide->lanes == g.lanes && wide->rows == g.rows &&
           (x_shared_pairs(K, g.x_bytes) > 0) == (x_shared_pairs(K, wide->x_bytes) > 0);
}

// The view t of a fresh internal buffer, as far past a window boundary as t is (the same program
// binds it): where fastest_plan's plans store, never the caller's output.
TensorArg scratch_like(GlesDevice& dev, TensorArg t) {
    const int64_t shift = t.byte_lo - t.byte_lo % dev.window_alignment();
    t.offset -= shift / tgl_dtype_size(t.dtype);  // the alignment is a multiple of 16
    t.byte_lo -= shift;
    t.byte_hi -= shift;
    t.buffer = dev.internal_buffer(uint64_t(std::max<int64_t>(t.byte_hi, 16)));
    return t;
}

// linear, M <= 8: gemv_plan of shape g, or of its wide shape where fastest_plan measures that faster.
void run_gemv(GlesDevice& dev, const OpCall& call, const GemvShape& g) {
    const MatmulPlan& p = call.matmul();
    const TensorArg y2 = gemv_rows(call, true);
    std::vector<Dispatch> ds = gemv_plan(dev, call, g, y2);
    const GgufTuning& t = dev.tuning().gguf;
    GemvShape wide;
    if (t.measure > 0 && !t.wg_given && !ds.empty() && gemv_wide_shape(dev, g, p.N, p.K, &wide)) {
        const std::string key = "gemv " + ds[0].program->label + " W " + std::to_string(int(call.inputs[1].dtype)) + " M " +
                                std::to_string(p.M) + " N " + std::to_string(p.N) + " K " + std::to_string(p.K);
        const int pick = dev.fastest_plan(key, [&] {
            const TensorArg ys = scratch_like(dev, y2);
            return std::vector<std::vector<Dispatch>>{gemv_plan(dev, call, g, ys), gemv_plan(dev, call, wide, ys)};
        }, t.measure > 1);
        if (pick == 1) ds = gemv_plan(dev, call, wide, y2);
    }
    dev.submit(call.info->name, std::move(ds));
}

// linear (M > 8, or rows that do not merge into one M) and grouped_linear: W's rows in chunks,
// each decoded into an internal buffer of x's dtype, then the float op on that chunk's columns.
void run_decoded(GlesDevice& dev, const OpCall& call) {
    const bool grouped = call.info->op == TGL_OP_GROUPED_LINEAR;
    const TensorArg& x = call.inputs[0];  // the decoded W takes its dtype
    const TensorArg& W = call.inputs[1];
    const TensorArg& y = call.outputs[0];
    const int n_dim = grouped ? 1 : 0;  // W's N dim
    const int64_t E = grouped ? W.shape[0] : 1, N = W.shape[n_dim], K = W.shape[n_dim + 1];
    const int64_t es = tgl_dtype_size(x.dtype);
    const int64_t cap = std::min<int64_t>(kDecodedChunkBytes, dev.max_window_bytes());
    const int64_t run = std::max<int64_t>(1, std::min<int64_t>(N, cap / std::max<int64_t>(1, E * K * es)));
    const int bias_slot = grouped ? 3 : 2;
    for (int64_t n0 = 0; n0 < N; n0 += run) {
        const int64_t n = std::min(run, N - n0);
        // The decoded chunk: contiguous (E,) n, K of x's dtype.
        TensorArg dec;
        dec.buffer = dev.internal_buffer(uint64_t(std::max<int64_t>(1, E * n * K * es)));
        dec.dtype = x.dtype;
        dec.rank = W.rank;
        for (int d = 0; d < W.rank; ++d) dec.shape[d] = d == n_dim ? n : W.shape[d];
        int64_t stride = 1;
        for (int d = W.rank - 1; d >= 0; --d) {
            dec.strides[d] = stride;
            stride *= std::max<int64_t>(1, dec.shape[d]);
        }
        dec = cut(dec, 0, 0, dec.shape[0]);
        std::vector<Dispatch> ds;
        add_dequant(dev, cut(W, n_dim, n0, n), dec, ds);
        dev.submit(call.info->name, std::move(ds));
        OpCall sub;
        sub.info = call.info;
        sub.params = call.params;
        sub.dtype = call.dtype;
        sub.inputs = call.inputs;
        sub.inputs[1] = dec;
        if (call.inputs.size() > size_t(bias_slot) && call.inputs[size_t(bias_slot)].present())
            sub.inputs[size_t(bias_slot)] = cut(call.inputs[size_t(bias_slot)], call.inputs[size_t(bias_slot)].rank - 1, n0, n);
        sub.outputs = {cut(y, y.rank - 1, n0, n)};
        plan_matmul(sub, call.params);
        sub.noop = sub.outputs[0].numel == 0;
        if (!sub.noop) dev.run(sub);
    }
}

}  // namespace

bool is_block_call(const OpCall& call) {
    for (const TensorArg& t : call.inputs)
        if (t.present() && is_block_dtype(t.dtype)) return true;
    return false;
}

void run_block_call(GlesDevice& dev, const OpCall& call) {
    switch (call.info->op) {
    case TGL_OP_DEQUANTIZE: return run_dequantize(dev, call);
    case TGL_OP_INDEX_SELECT: return run_index_select(dev, call);
    case TGL_OP_LINEAR: {
        const MatmulPlan& p = call.matmul();
        const GemvShape g = gemv_shape(dev, p.N);
        const bool within = !dev.loop_limited() || p.M > kGemvMaxM || gemv_passes(g, p.M, p.K) <= kLoopTripBudget;
        // x in one window (else the float kernels, which cut it); W, y and the bias in chunks of rows.
        const bool x_fits = dev.window_bytes(call.inputs[0]) <= dev.max_window_bytes();
        if (p.batch_count == 1 && p.M <= kGemvMaxM && p.K > 0 && within && x_fits) return run_gemv(dev, call, g);
        return run_decoded(dev, call);
    }
    case TGL_OP_GROUPED_LINEAR: return run_decoded(dev, call);
    default:
        fail(TGL_ERROR_INTERNAL, "op '%s' was given a block dtype operand but has no block kernel (gguf_kernels.cpp)",
             call.info->name);
    }
}

}  // namespace gles
}  // namespace tgl
