// GLES host side of the Sequence family (plan: backends/common/sequence_rules.h):
//   rope, rope_backward: glsl/rope.comp, one dispatch, one invocation per rotated pair or copied
//     element; the angle scalars (ln base, YaRN's correction dims, mscale) are planned in double and
//     passed as f32 uniforms; theta_i, the angle and cos/sin are computed on the GPU. With a cos/sin
//     cache: the positions checked and packed (pack.comp), their cos/sin gathered into the same
//     scratch (PASS_GATHER), then the main pass reads the scratch (3 storage blocks a pass at most,
//     4 with freq_factors).
//   fft, ifft: glsl/fft.comp. Power-of-two n that fits shared memory (16 n bytes): one dispatch,
//     a workgroup per row (radix-4 stages); larger powers of two: global radix-4 Stockham stages
//     (the last radix-2 when log2(n) is odd) ping-ponging between two halves of a scratch buffer
//     (the first reads x, the last writes y); other n: the direct DFT, one invocation per output.
//   selective_scan: every input packed to f32 in one scratch block (the pack pass, any
//     strides), then glsl/selective_scan.comp (3 blocks at most); where the loop budget binds, the
//     sequence in chunks of steps, one dispatch each, the states carried in the scratch.
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"
#include "validate_util.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tgl {
namespace gles {
namespace {

using R = SequencePlan::Role;

// The plan's row dims for the first N roles, merged, as uniforms u_row_shape / u_row_stride
// (role-major per dim). Returns the merged rank.
template <size_t N>
int row_uniforms(const SequencePlan& p, Dispatch& d) {
    const int64_t* strides[N];
    for (size_t k = 0; k < N; ++k) strides[k] = p.row_strides[k];
    const std::vector<MergedDim<N>> dims = merge_dims<N>(p.row_rank, p.row_shape, strides);
    if (dims.empty()) return 0;
    std::vector<int32_t> n, s;
    for (const MergedDim<N>& dim : dims) {
        n.push_back(to_i32(dim.n, "a dimension of x"));
        for (size_t k = 0; k < N; ++k) s.push_back(to_i32(dim.s[k], "a stride of an operand"));
    }
    d.uniforms.push_back(uniform_int("u_row_shape", n));
    d.uniforms.push_back(uniform_int("u_row_stride", s));
    return int(dims.size());
}

// rope with a cos/sin cache: the scratch block (rope.comp's layout: fail flag, packed positions,
// the gathered table), the positions check and pack, and PASS_GATHER. Returns the scratch's binding
// and its table's first word; *pos_rows: per row dim of x the stride of a position row in the table
// (0 where positions broadcast).
Binding add_rope_gather(GlesDevice& dev, const OpCall& call, const Defines& common, std::vector<Dispatch>& out,
                        int32_t* table, int64_t (&pos_rows)[TGL_MAX_RANK]) {
    const SequencePlan& p = call.sequence();
    const TensorArg& pos = call.inputs[1];
    const int64_t half = p.n_rot / 2, rows_k = pos.numel / p.streams;
    const int64_t words = 1 + pos.numel + rows_k * p.n_rot;
    if (words * 4 > dev.max_window_bytes())
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "op '%s': the cos/sin values gathered for %lld position rows of %lld pairs need %lld bytes in one shader storage "
             "block; this device allows %lld",
             call.info->name, (long long)rows_k, (long long)half, (long long)(words * 4), (long long)dev.max_window_bytes());
    Binding scratch;
    scratch.keep = dev.scratch(uint64_t(words) * 4);
    scratch.name = static_cast<GlesBuffer&>(*scratch.keep).name();
    scratch.size = words * 4;
    *table = to_i32(1 + pos.numel, "the positions");

    PackSource src;
    src.window = dev.window(pos, "inputs[1] (positions)", &src.offset);
    src.dtype = pos.dtype;
    src.numel = pos.numel;
    src.shape.assign(pos.shape, pos.shape + pos.rank);
    src.strides.assign(pos.strides, pos.strides + pos.rank);
    const PackIndexCheck check{dev.device_check(), to_i32(p.max_positions, "max_positions (dim 0 of cos)"), uint32_t(call.info->op)};
    add_pack(dev, src, "inputs[1] (positions)", scratch, 1, out, &check);

    Dispatch g;
    Defines defines = common;
    defines.emplace_back("PASS_GATHER", "");
    defines.emplace_back(def::kWorkgroupSize, str(dev.workgroup_size()));
    g.program = dev.program("rope.comp", defines);
    int32_t co = 0, so = 0;
    const bool empty = p.max_positions == 0;  // every position fails the check: nothing is read
    g.bindings = {empty ? scratch : dev.window(call.inputs[3], "inputs[3] (cos)", &co),
                  empty ? scratch : dev.window(call.inputs[4], "inputs[4] (sin)", &so), scratch};
    const uint32_t count = count_u32(rows_k * half, "the position rows times the pairs");
    g.uniforms = {uniform_uint("u_count", {count}),
                  uniform_int("u_half", {to_i32(half, "n_rot / 2")}),
                  uniform_int("u_streams", {int32_t(p.streams)}),
                  uniform_int("u_table", {*table}),
                  uniform_int("u_cos", {co, to_i32(p.cos_strides[0], "a stride of cos"), to_i32(p.cos_strides[1], "a stride of cos")}),
                  uniform_int("u_sin", {so, to_i32(p.sin_strides[0], "a stride of sin"), to_i32(p.sin_strides[1], "a stride of sin")})};
    if (p.multi) g.uniforms.push_back(uniform_int("u_sections", {int32_t(p.sections[0]), int32_t(p.sections[1]),
                                                                 int32_t(p.sections[2]), int32_t(p.sections[3])}));
    add_chunks(dev, g, ceil_div(count, uint64_t(dev.workgroup_size())), out);

    // Position row r of the table is row-major over positions' dims but the streams.
    const int pos_rank = pos.rank - (p.multi ? 1 : 0);
    int64_t step = 1;
    for (int d = p.row_rank - 1; d >= 0; --d) {
        const int a = d - (p.row_rank - pos_rank);
        pos_rows[d] = a >= 0 && pos.shape[a] == p.row_shape[d] ? step : 0;
        if (a >= 0) step *= pos.shape[a];
    }
    return scratch;
}

void run_rope(GlesDevice& dev, const OpCall& call) {
    const SequencePlan& p = call.sequence();
    const int wg = dev.workgroup_size();
    const int64_t units = p.n_rot / 2 + (p.D - p.n_rot);
    const uint32_t count = count_u32(p.rows * units, "the rows of x times the pairs and copied elements of a row");
    Defines common = {{def::kYDtype, str(call.dtype)}};
    if (p.multi) common.emplace_back("MULTI", str(long(p.multi)));
    std::vector<Dispatch> dispatches;
    Dispatch base;
    int32_t offs[3] = {};
    SequencePlan rows = p;  // the row strides bound (the cache: positions' rows in the table)
    Binding pb;
    int32_t table = 0;
    if (p.cache) pb = add_rope_gather(dev, call, common, dispatches, &table, rows.row_strides[R::kP]);
    else pb = dev.window(call.inputs[1], "inputs[1] (positions)", &offs[R::kP]);
    base.bindings = {dev.window(call.inputs[0], "inputs[0]", &offs[R::kX]), pb,
                     dev.window(call.outputs[0], "outputs[0]", &offs[R::kY])};
    const int rank = row_uniforms<3>(rows, base);
    Defines defines = common;
    defines.emplace_back("RANK", str(rank));
    defines.emplace_back(def::kWorkgroupSize, str(wg));
    if (p.neox) defines.emplace_back("NEOX", "");
    if (p.backward) defines.emplace_back("BACKWARD", "");
    if (p.yarn) defines.emplace_back("YARN", "");
    if (p.cache) defines.emplace_back("CACHE", "");
    if (p.has_ff) {
        int32_t fo = 0;
        base.bindings.push_back(dev.window(call.inputs[2], "inputs[2] (freq_factors)", &fo));
        base.uniforms.push_back(uniform_int("u_ff", {fo, to_i32(p.ff_stride, "the stride of freq_factors")}));
        defines.emplace_back("FF", "");
    }
    base.program = dev.program("rope.comp", defines);
    base.uniforms.push_back(uniform_uint("u_count", {count}));
    base.uniforms.push_back(uniform_uint("u_units", {uint32_t(units)}));
    base.uniforms.push_back(uniform_int("u_half", {int32_t(p.n_rot / 2)}));
    base.uniforms.push_back(uniform_int("u_offset", {offs[0], offs[1], offs[2]}));
    base.uniforms.push_back(uniform_int("u_x_d", {to_i32(p.x_d_stride, "the stride of x along D")}));
    base.uniforms.push_back(uniform_int("u_y_d", {to_i32(p.y_d_stride, "the stride of y along D")}));
    base.uniforms.push_back(uniform_float("u_mscale", float(p.mscale)));
    if (p.cache) {
        base.uniforms.push_back(uniform_int("u_table", {table}));
    } else {
        base.uniforms.push_back(uniform_float("u_log_theta", float(-2.0 * std::log(p.base) / double(p.dims))));
        base.uniforms.push_back(uniform_float("u_freq_scale", float(p.freq_scale)));
        base.uniforms.push_back(uniform_float("u_ext", float(p.ext_factor)));
        base.uniforms.push_back(uniform_float("u_corr_low", float(p.corr_low)));
        base.uniforms.push_back(uniform_float("u_corr_high", float(p.corr_high)));
        base.uniforms.push_back(uniform_int("u_stream_stride", {to_i32(p.stream_stride, "the stride of positions' streams")}));
    }
    if (p.multi)
        base.uniforms.push_back(uniform_int("u_sections", {int32_t(p.sections[0]), int32_t(p.sections[1]),
                                                           int32_t(p.sections[2]), int32_t(p.sections[3])}));
    add_chunks(dev, base, ceil_div(count, uint64_t(wg)), dispatches);
    dev.submit(call.info->name, std::move(dispatches));
}

// The largest power-of-two n whose two shared vec2 halves (16 n bytes) fit the device.
int64_t shared_fft_max(const GlesDevice& dev) {
    int64_t n = 1;
    while (n < 4096 && 16 * (2 * n) <= dev.limits().max_shared_bytes) n *= 2;
    return n;
}

void run_fft(GlesDevice& dev, const OpCall& call) {
    const SequencePlan& p = call.sequence();
    const uint32_t rows = count_u32(p.rows, "the rows of x");
    const uint32_t n = count_u32(p.n, "a row of x");
    const int wg = dev.workgroup_size();
    const bool pow2 = (n & (n - 1)) == 0;
    Dispatch common;
    int32_t offs[2] = {};
    const Binding xb = dev.window(call.inputs[0], "inputs[0] (x)", &offs[R::kX]);
    const Binding yb = dev.window(call.outputs[0], "outputs[0] (y)", &offs[R::kY]);
    const int rank = row_uniforms<2>(p, common);
    common.uniforms.push_back(uniform_uint("u_rows", {rows}));
    common.uniforms.push_back(uniform_uint("u_n", {n}));
    common.uniforms.push_back(uniform_int("u_offset", {offs[0], offs[1]}));
    common.uniforms.push_back(uniform_int("u_x_n", {to_i32(p.x_n_stride, "the stride of x along n")}));
    common.uniforms.push_back(uniform_int("u_x_c", {to_i32(p.x_c_stride, "the stride of x along (re, im)")}));
    common.uniforms.push_back(uniform_int("u_y_n", {to_i32(p.y_n_stride, "the stride of y along n")}));
    common.uniforms.push_back(uniform_int("u_y_c", {to_i32(p.y_c_stride, "the stride of y along (re, im)")}));
    common.uniforms.push_back(uniform_float("u_scale", p.inverse ? float(1.0 / double(n)) : 1.0f));
    Defines defines = {{def::kYDtype, str(call.dtype)}, {"RANK", str(rank)}};
    if (p.inverse) defines.emplace_back("INVERSE", "");
    std::vector<Dispatch> dispatches;
    if (!pow2) {
        // Each output walks the whole row; there is no split (a long row of another length fails
        // on a device with a loop budget).
        check_loop_budget(dev, loop_cost(n), call.info->name, "the DFT of a row whose length is not a power of two");
        defines.emplace_back("PASS_DFT", "");
        defines.emplace_back(def::kWorkgroupSize, str(wg));
        Dispatch d = common;
        d.program = dev.program("fft.comp", defines);
        d.bindings = {xb, yb};
        add_chunks(dev, d, ceil_div(uint64_t(rows) * n, uint64_t(wg)), dispatches);
    } else if (n <= shared_fft_max(dev)) {
        const int threads = int(std::max<uint32_t>(1, std::min<uint32_t>(uint32_t(wg), n / 2)));
        defines.emplace_back("PASS_SHARED", "");
        defines.emplace_back("FFT_N", str(n));
        defines.emplace_back(def::kWorkgroupSize, str(threads));
        Dispatch d = common;
        d.program = dev.program("fft.comp", defines);
        d.bindings = {xb, yb};
        add_chunks(dev, d, rows, dispatches);
    } else {
        // Two scratch halves of rows * n vec2 each, the second starting at an aligned offset.
        const uint64_t half_bytes = uint64_t(count_u32(int64_t(rows) * n, "the complex elements of x")) * 8;
        const uint64_t align = uint64_t(dev.window_alignment());
        const uint64_t second = ceil_div(half_bytes, align) * align;
        BufferRef scratch = dev.scratch(second + half_bytes);
        Binding s[2];
        for (int k = 0; k < 2; ++k) {
            s[k].keep = scratch;
            s[k].name = static_cast<GlesBuffer&>(*scratch).name();
            s[k].offset = k ? int64_t(second) : 0;
            s[k].size = int64_t(half_bytes);
        }
        defines.emplace_back("PASS_STAGE", "");
        defines.emplace_back(def::kWorkgroupSize, str(wg));
        // Radix-4 stages; the last is radix-2 when log2(n) is odd.
        int cur = 0;
        for (uint32_t ns = 1; ns < n;) {
            const uint32_t radix = (n / ns) % 4 == 0 ? 4 : 2;
            const bool first = ns == 1, last = radix * ns == n;
            Defines dd = defines;
            dd.emplace_back("RADIX", str(radix));
            if (first) dd.emplace_back("SRC_X", "");
            if (last) dd.emplace_back("DST_Y", "");
            Dispatch d = common;
            d.program = dev.program("fft.comp", dd);
            d.bindings = {first ? xb : s[cur], last ? yb : s[1 - cur]};
            d.uniforms.push_back(uniform_uint("u_ns", {ns}));
            add_chunks(dev, d, ceil_div(uint64_t(rows) * (n / radix), uint64_t(wg)), dispatches);
            cur = 1 - cur;
            ns *= radix;
        }
    }
    dev.submit(call.info->name, std::move(dispatches));
}

void run_selective_scan(GlesDevice& dev, const OpCall& call) {
    const SequencePlan& p = call.sequence();
    const OpInfo& info = *call.info;
    const int wg = dev.workgroup_size();
    const std::string dtype = str(call.dtype);
    std::vector<Dispatch> dispatches;

    // Lanes per channel: the power of two >= N, at most the workgroup; PER states per lane.
    int np = 1;
    while (np < p.nstate && np < wg) np *= 2;
    const int per = int(std::max<uint64_t>(1, ceil_div(uint64_t(p.nstate), uint64_t(np))));
    const uint32_t channels = count_u32(p.batch * p.dim, "the channels (B * D) of u");
    // Steps per block of the C . x sums: one per lane, at most 16 (shared memory: wg * ts floats).
    const int ts = std::min(np, 16);
    // An invocation walks its steps in blocks of ts: per block the block loop and the sum of NP
    // partials (measured on llvmpipe: the ts-step loop is unrolled at N = 16; the PER loop counted
    // where PER > 1), plus the state's read and write. Where the whole sequence would pass the loop
    // budget, it runs in chunks of whole blocks, one dispatch each, the f32 states carried between
    // them in the scratch (CARRY); elsewhere (GPUs) in one dispatch, as before.
    const uint64_t len = uint64_t(std::max<int64_t>(p.len, 0)), blocks = ceil_div(len, uint64_t(ts));
    const uint64_t per_block = loop_cost(uint64_t(np)) + (per > 1 ? uint64_t(ts) * loop_cost(uint64_t(per)) : 0);
    const uint64_t chunk_blocks =
        std::min(std::max<uint64_t>(blocks, 1), loop_items_within(loop_budget(dev), 1 + per_block, 1 + 2 * loop_cost(uint64_t(per))));
    const uint64_t chunk_steps = chunk_blocks * uint64_t(ts);
    const bool carry = len > chunk_steps;

    // Pack every present input as f32 (row-major) into one scratch block; with chunks, the carried
    // states (B * D, N) follow.
    int32_t off[8] = {};
    uint64_t total = 0;
    for (size_t k = 0; k < 8; ++k) {
        const TensorArg& t = call.inputs[k];
        if (!t.present()) continue;
        off[k] = int32_t(count_u32(int64_t(total), "the packed inputs of selective_scan"));
        total += uint64_t(t.numel);
    }
    const int32_t carry_off = int32_t(count_u32(int64_t(total), "the packed inputs of selective_scan"));
    if (carry) total += uint64_t(channels) * uint64_t(p.nstate);
    count_u32(int64_t(total), "the packed inputs of selective_scan");
    BufferRef scratch = dev.scratch(std::max<uint64_t>(total, 1) * 4);
    Binding pb;
    pb.keep = scratch;
    pb.name = static_cast<GlesBuffer&>(*scratch).name();
    pb.size = int64_t(std::max<uint64_t>(total, 1) * 4);
    for (size_t k = 0; k < 8; ++k) {
        const TensorArg& t = call.inputs[k];
        if (!t.present() || t.numel == 0) continue;
        add_pack_f32(dev, t, operand_label(info, false, uint32_t(k)), pb, off[k], dispatches);
    }

    Dispatch d;
    int32_t y_off = 0, s_off = 0;
    // L = 0 (y empty, last_state zeros): nothing is stored to y, whose binding is then a stand-in.
    const TensorArg& y = call.outputs[0];
    d.bindings = {pb, y.numel ? dev.window(y, "outputs[0] (y)", &y_off) : pb};
    Defines defines = {{def::kYDtype, dtype}, {"NP", str(np)}, {"PER", str(per)}, {"TS", str(ts)}, {def::kWorkgroupSize, str(wg)}};
    if (p.has_dskip) defines.emplace_back("HAS_D", "");
    if (p.has_z) defines.emplace_back("HAS_Z", "");
    if (p.has_bias) defines.emplace_back("HAS_BIAS", "");
    if (p.softplus) defines.emplace_back("SOFTPLUS", "");
    if (carry) defines.emplace_back("CARRY", "");
    if (p.has_state && call.outputs[1].numel > 0) {
        defines.emplace_back("HAS_STATE", "");
        if (p.state_in) defines.emplace_back("STATE_IN", "");
        d.bindings.push_back(dev.window(call.outputs[1], "outputs[1] (last_state)", &s_off));
        const TensorArg& st = call.outputs[1];
        d.uniforms.push_back(uniform_int("u_s_stride", {to_i32(st.strides[0], "last_state"), to_i32(st.strides[1], "last_state"),
                                                         to_i32(st.strides[2], "last_state")}));
    }
    check_loop_budget(dev, loop_cost(chunk_blocks) + chunk_blocks * per_block + 2 * loop_cost(uint64_t(per)), info.name,
                      "the walk over a chunk of the sequence (L)");
    d.program = dev.program("selective_scan.comp", defines);
    d.uniforms.push_back(uniform_uint("u_channels", {channels}));
    d.uniforms.push_back(uniform_int("u_dim", {to_i32(p.dim, "D")}));
    d.uniforms.push_back(uniform_int("u_len", {to_i32(p.len, "L")}));
    d.uniforms.push_back(uniform_int("u_n", {to_i32(p.nstate, "N")}));
    d.uniforms.push_back(uniform_int("u_off", std::vector<int32_t>(off, off + 8)));
    d.uniforms.push_back(uniform_int("u_y_off", {y_off}));
    d.uniforms.push_back(uniform_int("u_s_off", {s_off}));
    d.uniforms.push_back(uniform_int("u_y_stride", {to_i32(y.strides[0], "y"), to_i32(y.strides[1], "y"), to_i32(y.strides[2], "y")}));
    if (carry) d.uniforms.push_back(uniform_int("u_carry_off", {carry_off}));
    for (uint64_t t0 = 0; t0 < std::max<uint64_t>(len, 1); t0 += chunk_steps) {
        Dispatch c = d;
        c.uniforms.push_back(uniform_int("u_t_begin", {int32_t(t0)}));
        c.uniforms.push_back(uniform_int("u_t_end", {int32_t(std::min(len, t0 + chunk_steps))}));
        if (carry) c.uniforms.push_back(uniform_uint("u_carry", {(t0 > 0 ? 1u : 0u) | (t0 + chunk_steps < len ? 2u : 0u)}));
        add_chunks(dev, c, ceil_div(channels, uint64_t(wg / np)), dispatches);
    }
    dev.submit(info.name, std::move(dispatches));
}

// sample: logits per invocation (about), and the work of one dispatch in logit visits (each pass
// over a row visits V; each 256-bin histogram of the top_k / top_p walks costs about 512, mostly
// one invocation's serial scan of the bins), so that none runs long on llvmpipe (2^20: about 0.1 s
// on 2 cores), but with at least 32 rows (a GPU runs them side by side: a batch of decode rows with
// a 128k vocabulary stays one or two dispatches; about 0.3 s on llvmpipe).
constexpr uint32_t kSampleLogitsPerLane = 16;
constexpr uint64_t kSampleDispatchWork = uint64_t(1) << 20;
constexpr uint64_t kSampleMinRowsPerDispatch = 32;
// The split plan (sample_split.comp): at most this many chunks per row (its histogram's bins, which
// the draw's chunk masses reuse), of at most this many invocations.
constexpr uint32_t kSampleSplitMaxChunks = 512;
constexpr uint32_t kSampleSplitLanes = 256;
constexpr uint32_t kSampleSplitLevels = 3;       // radix digits per threshold
// Logits per chunk (TGL_TUNE_SAMPLE's automatic chunk): on a GPU the smallest power of two from
// kSampleSplitChunk that keeps a dispatch within kSampleSplitGroups workgroups, at most
// kSampleSplitChunkMax (H200, T 0.8 top_k 50 top_p 0.9: 1 x 131072 took 0.092 / 0.103 / 0.132 ms
// with chunks of 1024 / 2048 / 4096; 32 x 131072 0.622 / 0.524 / 0.555 ms); on llvmpipe every
// workgroup's barriers cost much more than its logits (a 128k row: 4096 took about 5x the time of
// 32768, measured on 2 cores).
constexpr uint64_t kSampleSplitChunk = 1024;
constexpr uint64_t kSampleSplitChunkMax = 4096;
constexpr uint64_t kSampleSplitGroups = 2048;
constexpr uint64_t kSampleSplitChunkLimited = 32768;
constexpr uint64_t kSampleSplitMaxPerLane = 4096;
constexpr uint32_t kSampleSplitNoLevel = 0xffffffffu;

// The uniforms both sample kernels take (logits, the weights' recipe, the draw).
void add_sample_uniforms(const SequencePlan& p, Dispatch& d, int32_t x_off) {
    d.uniforms.push_back(uniform_uint("u_v", {uint32_t(p.n)}));
    d.uniforms.push_back(uniform_int("u_x_off", {x_off}));
    d.uniforms.push_back(uniform_int("u_x_row", {to_i32(p.row_strides[R::kX][0], "the row stride of logits")}));
    d.uniforms.push_back(uniform_int("u_x_n", {to_i32(p.x_n_stride, "the stride of logits along V")}));
    d.uniforms.push_back(uniform_float("u_inv_t", p.inv_temperature));
    d.uniforms.push_back(uniform_uint("u_top_k", {uint32_t(p.top_k)}));
    d.uniforms.push_back(uniform_uint("u_top_p16", {p.top_p16}));
    d.uniforms.push_back(uniform_uint("u_exp2", std::vector<uint32_t>(kSampleExp2, kSampleExp2 + 24)));
    d.uniforms.push_back(uniform_uint("u_zero", {0u}));
}

void add_draw_uniforms(const SequencePlan& p, Dispatch& d, int32_t t_off) {
    d.uniforms.push_back(uniform_int("u_t_off", {t_off}));
    d.uniforms.push_back(uniform_int("u_t_row", {to_i32(p.row_strides[R::kY][0], "the stride of token")}));
    d.uniforms.push_back(uniform_uint("u_greedy", {p.greedy ? 1u : 0u}));
    d.uniforms.push_back(uniform_uint("u_random", {uint32_t(p.seed), uint32_t(p.seed >> 32), uint32_t(p.rng_offset),
                                                   uint32_t(p.rng_offset >> 32)}));
}

// The split plan's shape for rows of V logits: invocations per workgroup, logits per chunk, chunks
// per row, scratch words per row (sample_split.comp's layout).
struct SampleSplit {
    uint32_t lanes = 0, chunk = 0, chunks = 0;
    uint64_t row_words = 0;
};

SampleSplit sample_split_shape(const GlesDevice& dev, uint32_t rows, uint32_t V) {
    SampleSplit s;
    s.lanes = 16;  // (at least the walk's 16 groups of bins)
    while (s.lanes < std::min<uint32_t>(kSampleSplitLanes, uint32_t(dev.workgroup_size()))) s.lanes *= 2;
    const int tuned = dev.tuning().sample.chunk;
    uint64_t chunk = tuned ? uint64_t(tuned) : dev.loop_limited() ? kSampleSplitChunkLimited : kSampleSplitChunk;
    if (!tuned && !dev.loop_limited())
        while (chunk < kSampleSplitChunkMax && uint64_t(rows) * ceil_div(uint64_t(V), chunk) > kSampleSplitGroups) chunk *= 2;
    const uint64_t wanted = std::max<uint64_t>(chunk, ceil_div(uint64_t(V), uint64_t(kSampleSplitMaxChunks)));
    // At most kSampleSplitMaxPerLane logits per invocation (2^24 / 512 chunks need 256 at 128
    // invocations), so that a tuned chunk keeps within the loop budget.
    const uint64_t per_lane = std::min<uint64_t>(ceil_div(wanted, uint64_t(s.lanes)), kSampleSplitMaxPerLane);
    s.chunk = uint32_t(per_lane * s.lanes);
    s.chunks = uint32_t(ceil_div(uint64_t(V), uint64_t(s.chunk)));
    s.row_words = 4 * uint64_t(s.chunks) + 16 + 3 * 2 * 512;
    return s;
}

// The loop passes of sample_split.comp's longest invocation: the draw's (the chunk masses, the
// segments, a segment walked twice) or a histogram pass's (the partials, the bins, its logits).
void check_sample_split_budget(const GlesDevice& dev, const SampleSplit& s) {
    const uint64_t per_lane = s.chunk / s.lanes, bins = 512;
    const uint64_t draw = loop_cost(s.chunks) * 2 + loop_cost(s.lanes) + 2 * loop_cost(per_lane);
    const uint64_t hist = loop_cost(ceil_div(s.chunks, s.lanes)) + 4 * loop_cost(bins / s.lanes) + loop_cost(bins / 16) +
                          2 * loop_cost(16) + loop_cost(per_lane);
    check_loop_budget(dev, std::max(draw, hist), "sample", "the split plan's walk over a chunk");
}

// Rows of a long vocabulary: a workgroup per (row, chunk) in each pass (sample_split.comp): the
// max, a histogram pass per radix digit of top_k and of top_p, the chunks' kept masses, then a
// workgroup per row draws. Rows go in groups whose scratch fits one storage window.
void run_sample_split(GlesDevice& dev, const OpCall& call, const SampleSplit& s, uint32_t rows) {
    const SequencePlan& p = call.sequence();
    int32_t x_off = 0, t_off = 0;
    const Binding xb = dev.window(call.inputs[0], "inputs[0] (logits)", &x_off);
    const Binding tb = dev.window(call.outputs[0], "outputs[0] (token)", &t_off);
    const uint64_t row_bytes = s.row_words * 4;
    const uint32_t group_rows = uint32_t(std::max<uint64_t>(
        1, std::min<uint64_t>(rows, std::min<uint64_t>(uint64_t(dev.max_window_bytes()), GlesDevice::kScratchKeepBytes) / row_bytes)));
    Binding sb;
    sb.keep = dev.scratch(uint64_t(group_rows) * row_bytes);
    sb.name = static_cast<GlesBuffer&>(*sb.keep).name();
    sb.size = int64_t(uint64_t(group_rows) * row_bytes);
    std::vector<uint32_t> levels;  // top_k's digits 0..2, top_p's 3..5
    if (!p.greedy) {
        if (p.top_k)
            for (uint32_t l = 0; l < kSampleSplitLevels; ++l) levels.push_back(l);
        if (p.top_p16)
            for (uint32_t l = 0; l < kSampleSplitLevels; ++l) levels.push_back(kSampleSplitLevels + l);
    }
    const Defines common = {{def::kXDtype, str(call.dtype)}, {def::kWorkgroupSize, str(s.lanes)}};
    auto program = [&](const char* pass) {
        Defines defs = common;
        defs.push_back({pass, "1"});
        return dev.program("sample_split.comp", defs);
    };
    const uint64_t max_groups = std::max<uint64_t>(1, kSampleDispatchWork / s.chunk);
    std::vector<Dispatch> dispatches;
    for (uint32_t row0 = 0; row0 < rows; row0 += group_rows) {
        const uint32_t n = std::min(group_rows, rows - row0);
        Dispatch base;
        base.bindings = {xb, sb};
        add_sample_uniforms(p, base, x_off);
        base.uniforms.push_back(uniform_uint("u_rows", {n}));
        base.uniforms.push_back(uniform_uint("u_row0", {row0}));
        base.uniforms.push_back(uniform_uint("u_chunk", {s.chunk}));
        base.uniforms.push_back(uniform_uint("u_chunks", {s.chunks}));
        base.uniforms.push_back(uniform_uint("u_row_words", {uint32_t(s.row_words)}));
        const uint64_t groups = uint64_t(n) * s.chunks;
        Dispatch d = base;
        d.program = program("PASS_MAX");
        add_chunks(dev, d, groups, dispatches, max_groups);
        uint32_t pass = 0;
        if (!p.greedy) {
            for (size_t i = 0; i <= levels.size(); ++i, ++pass) {
                d = base;
                const bool sums = i == levels.size();
                d.program = program(sums ? "PASS_SUMS" : "PASS_HIST");
                d.uniforms.push_back(uniform_uint("u_pass", {pass}));
                d.uniforms.push_back(uniform_uint("u_level", {sums ? kSampleSplitNoLevel : levels[i]}));
                d.uniforms.push_back(uniform_uint("u_prev", {i ? levels[i - 1] : kSampleSplitNoLevel}));
                add_chunks(dev, d, groups, dispatches, max_groups);
            }
        }
        d = base;
        d.bindings.push_back(tb);
        d.program = program("PASS_DRAW");
        d.uniforms.push_back(uniform_uint("u_pass", {pass}));
        add_draw_uniforms(p, d, t_off);
        add_chunks(dev, d, n, dispatches, max_groups);
    }
    dev.submit(call.info->name, std::move(dispatches));
}

void run_sample(GlesDevice& dev, const OpCall& call) {
    const SequencePlan& p = call.sequence();
    const uint32_t rows = count_u32(p.rows, "the rows (B) of logits");
    const uint32_t V = count_u32(p.n, "a row (V) of logits");
    // Long rows: many workgroups per row, where one row's scratch fits a storage window.
    if (V >= uint32_t(dev.tuning().sample.split)) {
        const SampleSplit s = sample_split_shape(dev, rows, V);
        if (s.row_words * 4 <= uint64_t(dev.max_window_bytes())) {
            check_sample_split_budget(dev, s);
            return run_sample_split(dev, call, s, rows);
        }
    }
    // A workgroup per row, of a power of two from 8 invocations (short rows do not wait at every
    // barrier on 256 invocations, most of them idle) to the device's workgroup size.
    uint32_t lanes = 8;
    while (lanes < uint32_t(dev.workgroup_size()) && uint64_t(lanes) * kSampleLogitsPerLane < V) lanes *= 2;
    Dispatch d;
    int32_t x_off = 0, t_off = 0;
    d.bindings = {dev.window(call.inputs[0], "inputs[0] (logits)", &x_off), dev.window(call.outputs[0], "outputs[0] (token)", &t_off)};
    d.program = dev.program("sample.comp", {{def::kXDtype, str(call.dtype)}, {def::kWorkgroupSize, str(lanes)}});
    d.uniforms.push_back(uniform_uint("u_rows", {rows}));
    add_sample_uniforms(p, d, x_off);
    add_draw_uniforms(p, d, t_off);
    std::vector<Dispatch> dispatches;
    // Passes over the row (sample.comp): max and draw; top_k: 4 histograms; top_p: a sum and 4 more.
    const uint64_t hists = (p.top_k ? 4 : 0) + (p.top_p16 ? 4 : 0);
    const uint64_t row_work = (2 + hists + (p.top_p16 ? 1 : 0)) * uint64_t(V) + hists * 512;
    // Its longest invocation: each pass's walk over the row, invocation 0's scans of the bins and
    // of the segments (only a tuned TGL_TUNE_SAMPLE or a window too small for the split plan's
    // scratch brings rows this long here).
    check_loop_budget(dev,
                      (2 + hists + (p.top_p16 ? 1 : 0)) * loop_cost(ceil_div(uint64_t(V), uint64_t(lanes))) +
                          hists * loop_cost(256) + 2 * loop_cost(lanes),
                      call.info->name, "the one-workgroup plan's walks over a row");
    add_chunks(dev, d, rows, dispatches, std::max(kSampleMinRowsPerDispatch, kSampleDispatchWork / row_work));
    dev.submit(call.info->name, std::move(dispatches));
}

}  // namespace

void run_sequence(GlesDevice& dev, const OpCall& call) {
    switch (call.info->op) {
    case TGL_OP_ROPE:
    case TGL_OP_ROPE_BACKWARD: return run_rope(dev, call);
    case TGL_OP_FFT:
    case TGL_OP_IFFT: return run_fft(dev, call);
    case TGL_OP_SELECTIVE_SCAN: return run_selective_scan(dev, call);
    case TGL_OP_SAMPLE: return run_sample(dev, call);
    default: fail(TGL_ERROR_INTERNAL, "op '%s' has no kernel in plugin 'gles'", call.info->name);
    }
}

void register_sequence_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Sequence, run_sequence, &kSequenceSplit});
}

}  // namespace gles
}  // namespace tgl
