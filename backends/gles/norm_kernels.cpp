// GLES host side of the Normalize family (plan: backends/common/norm_rules.h; shader:
// glsl/norm.comp): the params (gamma, beta, mean, var) are first copied by the pack pass (pack.cpp)
// into a scratch block as contiguous f32, then one dispatch normalizes every row (one workgroup per
// row, or one invocation per row for short rows; aligned contiguous f32 rows are read once into
// registers, ROW_VEC4, tuned by TGL_TUNE_NORM); on a device with fewer than 5 SSBO blocks,
// add_*_norm with the sum output stores the sum first (SUM_ONLY). Rows too long for one
// invocation's loop budget (loop_budget.h) are cut into chunks, a workgroup each: statistics per
// chunk (CHUNK_STATS) into the scratch block after the params, then each chunk merges its row's
// partials and writes its elements (CHUNK_APPLY). Nothing is computed on the CPU. In a recorded
// graph, layer_norm and rms_norm may carry an elementwise chain that the pass storing y applies to
// each element (norm.comp's EPILOGUE; graph_fusion.cpp plans it).
#include "graph_fusion.h"
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"
#include "validate_util.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace tgl {
namespace gles {
namespace {

constexpr int kRoles = NormPlan::kRoles;
// Rows at most this long get one invocation each instead of a workgroup.
constexpr int64_t kThreadRowMax = 32;

using Dim = MergedDim<kRoles>;

const char* stats_define(tgl_op op) {
    switch (op) {
    case TGL_OP_SOFTMAX:
    case TGL_OP_LOG_SOFTMAX: return "STATS_SOFTMAX";
    case TGL_OP_RMS_NORM:
    case TGL_OP_ADD_RMS_NORM: return "STATS_MEANSQ";
    case TGL_OP_BATCH_NORM: return "STATS_NONE";
    default: return "STATS_MEANVAR";
    }
}

// norm.comp's ROW_VEC4 variant (f32 rows kept in registers): `wg` invocations per row to start
// with, at most `per` quads (vec4) per invocation; longer rows double the invocations up to the
// device's limit, rows longer than 4 * per * that take the general path; short rows halve them
// (down to 32). TGL_TUNE_NORM (tuning.h): e.g. "wg512_per4" (the defaults: on the H100, 8192-wide
// rows ran softmax 0.24 ms, layer_norm 0.22, rms_norm 0.19 with 512 x 4 against 0.29, 0.23, 0.23
// with 256 x 8).

// Invocations per row and quads per invocation of ROW_VEC4 for rows of `len`; false if none fits.
bool row_vec4_shape(const GlesDevice& dev, uint64_t len, int* wg, int* per) {
    const NormTuning& t = dev.tuning().norm;
    const Limits& L = dev.limits();
    const int max_wg = std::min(L.max_invocations, L.max_size[0]);
    const int max_per = std::max(1, std::min(t.per, 16));
    int w = 32;
    while (w * 2 <= std::min(t.wg, max_wg)) w *= 2;
    while (uint64_t(w) * 4 * max_per < len && w * 2 <= max_wg) w *= 2;  // long rows: more invocations
    while (w > 32 && uint64_t(w / 2) * 4 >= len) w /= 2;                 // short rows: fewer
    int q = 1;
    while (uint64_t(w) * 4 * q < len && q < max_per) q *= 2;
    if (uint64_t(w) * 4 * q < len || int64_t(w) * 2 * 4 > L.max_shared_bytes) return false;
    *wg = w;
    *per = q;
    return true;
}

// Loops over a row's elements in one pass of norm.comp's general path (MODE_GROUP without
// ROW_VEC4): the statistics' passes and the store.
int row_loops(tgl_op op, bool sum_only) {
    if (sum_only) return 1;
    switch (op) {
    case TGL_OP_BATCH_NORM: return 1;
    case TGL_OP_RMS_NORM:
    case TGL_OP_ADD_RMS_NORM: return 2;
    default: return 3;  // softmax: max, sum, store; mean/var: sum, deviations, store
    }
}

int present_params(const NormPlan& p) {
    int n = 0;
    for (int in : p.param_input) n += in >= 0;
    return n;
}

// How the rows of a whole op (not a piece of a row) are walked: a workgroup per row where rows are
// long, cut into chunks (one workgroup each) where one invocation's walk would exceed the loop
// budget.
RowChunks whole_row_chunks(const GlesDevice& dev, const OpCall& call) {
    const NormPlan& p = call.norm();
    const uint32_t len = count_u32(p.len, "a row of inputs[0] (x)");
    return p.len > kThreadRowMax
               ? plan_row_chunks(dev, call.info->name, len, dev.workgroup_size(), row_loops(call.info->op, false), 3, 2)
               : RowChunks{len, 1};
}

// The epilogue's defines and uniforms for the pass that stores y: its views' strides over y's
// rows (the plan's outer dims) and over a row's elements (the inner dims), merged among its views.
void add_epilogue(GlesDevice& dev, const NormPlan& p, const FusedChain& ep, Dispatch& base, Defines& defines) {
    const int n = int(ep.views.size());
    if (p.outer_rank + p.inner_rank != ep.rank)
        fail(TGL_ERROR_INTERNAL, "a fused norm epilogue of rank %d on a norm of %d + %d dims", ep.rank, p.outer_rank, p.inner_rank);
    const std::vector<int32_t> offsets = bind_fused_views(dev, ep, base, defines);
    int64_t strides[FusedChain::kMaxViews][TGL_MAX_RANK];
    for (int v = 0; v < n; ++v) broadcast_strides(ep.views[size_t(v)].arg, ep.rank, ep.shape, strides[v]);
    auto part = [&](int first, int rank, const int64_t* shape, const char* rank_define, const char* shape_name,
                    const char* stride_name) {
        int64_t dims[TGL_MAX_RANK], s[FusedChain::kMaxViews][TGL_MAX_RANK];
        int64_t* s_of[FusedChain::kMaxViews];
        std::copy(shape, shape + rank, dims);
        for (int v = 0; v < n; ++v) {
            std::copy(strides[v] + first, strides[v] + first + rank, s[v]);
            s_of[v] = s[v];
        }
        const int merged = merge_dims_in_place(rank, dims, n, s_of);
        defines.emplace_back(rank_define, str(merged));
        if (merged == 0) return;
        std::vector<int32_t> flat;
        for (int d = 0; d < merged; ++d)
            for (int v = 0; v < n; ++v) flat.push_back(to_i32(s[v][d], "a stride of a fused operand"));
        base.uniforms.push_back(uniform_int(shape_name, to_i32s(dims, merged, "a dimension")));
        base.uniforms.push_back(uniform_int(stride_name, flat));
    };
    // layer_norm, rms_norm: the rows are y's leading dims, a row its trailing ones.
    part(0, p.outer_rank, p.outer_shape, "EP_OUTER_RANK", "u_ep_outer_shape", "u_ep_outer_stride");
    part(p.outer_rank, p.inner_rank, p.inner_shape, "EP_INNER_RANK", "u_ep_inner_shape", "u_ep_inner_stride");
    defines.emplace_back("EPILOGUE", "");
    base.uniforms.push_back(uniform_int("u_ep_offset", offsets));
}

}  // namespace

NormRowPieces plan_norm_row_pieces(const GlesDevice& dev, const OpInfo& info, uint64_t row_len, uint64_t max_piece) {
    const int wg = dev.workgroup_size();
    const int loops = row_loops(info.op, false);
    // The budget's chunk, at most a piece; whole workgroups of elements where a piece has more.
    uint64_t chunk = std::min(plan_row_chunks(dev, info.name, row_len, wg, loops, 3, 2).chunk, std::max<uint64_t>(max_piece, 1));
    if (chunk > uint64_t(wg)) chunk -= chunk % uint64_t(wg);
    NormRowPieces r{chunk, std::max<uint64_t>(1, max_piece / chunk), ceil_div(row_len, chunk)};
    check_loop_budget(dev, 3 * tree_passes(wg) + uint64_t(loops) * loop_cost(ceil_div(chunk, uint64_t(wg))) + 2 * loop_cost(r.splits),
                      info.name, "the walk over one row's elements and its pieces' partial statistics");
    return r;
}

uint64_t norm_row_piece_words(const OpCall& call, const NormRowPieces& plan) {
    return 2 * uint64_t(call.norm().rows) * plan.splits + uint64_t(present_params(call.norm())) * plan.chunks_per_piece * plan.chunk;
}

int norm_store_pass_blocks(const GlesDevice& dev, const OpCall& call) {
    const NormPlan& p = call.norm();
    const bool chunk_stats = whole_row_chunks(dev, call).splits > 1 && call.info->op != TGL_OP_BATCH_NORM;
    return 2 + int(p.has_r) + int(p.has_s) + int(present_params(p) > 0 || chunk_stats);
}

void run_norm(GlesDevice& dev, const OpCall& call) { run_norm(dev, call, nullptr, nullptr); }

void run_norm(GlesDevice& dev, const OpCall& call, const NormRowPiece* piece) { run_norm(dev, call, piece, nullptr); }

void run_norm_with_epilogue(GlesDevice& dev, const OpCall& call, const FusedChain* epilogue) {
    run_norm(dev, call, nullptr, epilogue);
}

void run_norm(GlesDevice& dev, const OpCall& call, const NormRowPiece* piece, const FusedChain* epilogue) {
    const NormPlan& p = call.norm();
    const OpInfo& info = *call.info;
    const uint32_t rows = count_u32(p.rows, "the rows of outputs[0] (y)");
    const uint32_t len = count_u32(p.len, "a row of inputs[0] (x)");
    const int wg = dev.workgroup_size();
    const std::string dtype = str(call.dtype);
    std::vector<Dispatch> dispatches;
    if (epilogue && (info.op != TGL_OP_LAYER_NORM && info.op != TGL_OP_RMS_NORM))
        fail(TGL_ERROR_INTERNAL, "op '%s' takes no fused epilogue (layer_norm and rms_norm do)", info.name);
    if (epilogue && piece) fail(TGL_ERROR_INTERNAL, "op '%s': a piece of a row takes no fused epilogue", info.name);

    // A piece of a row (window_split.cpp) is always chunked: its chunks' partials meet the other
    // pieces' in piece->scratch.
    const bool group = p.len > kThreadRowMax || piece;
    // Rows cut into chunks (one workgroup each) where one invocation's walk would exceed the loop
    // budget; with statistics, each chunk's partials (2 floats) follow the params in scratch.
    const RowChunks rc = piece ? RowChunks{piece->plan->chunk, ceil_div(len, piece->plan->chunk)} : whole_row_chunks(dev, call);
    const bool chunked = rc.splits > 1 || piece;
    const bool chunk_stats = chunked && info.op != TGL_OP_BATCH_NORM;
    const uint64_t splits = piece ? piece->plan->splits : rc.splits;  // of the whole row

    // Params, packed as f32 into one scratch block (one block instead of up to four), then the
    // chunks' partials; a piece of a row: the partials (of every piece), then its params.
    const bool any_param = present_params(p) > 0;
    Binding pb;
    int32_t param_off[NormPlan::kParams] = {};
    const uint64_t plen = any_param ? count_u32(p.param_len, "a param operand") : 0;
    const uint64_t partial_words = chunk_stats ? 2 * uint64_t(rows) * splits : 0;
    const uint64_t params_off = piece ? partial_words : 0;
    const uint64_t part_off = piece ? 0 : uint64_t(present_params(p)) * plen;
    const uint64_t scratch_floats = part_off + partial_words + (piece ? uint64_t(present_params(p)) * plen : 0);
    if (scratch_floats > 0) {
        count_u32(int64_t(scratch_floats), "the scratch of a normalization (params and row chunks' statistics)");
        BufferRef scratch = piece ? piece->scratch : dev.scratch(scratch_floats * 4);
        if (piece && scratch_floats * 4 > piece->scratch_bytes)
            fail(TGL_ERROR_INTERNAL, "op '%s': a piece of a row needs %llu scratch bytes, %llu were planned", info.name,
                 (unsigned long long)(scratch_floats * 4), (unsigned long long)piece->scratch_bytes);
        pb.keep = scratch;
        pb.name = static_cast<GlesBuffer&>(*scratch).name();
        pb.size = int64_t(piece ? piece->scratch_bytes : scratch_floats * 4);
    }
    if (any_param && !(piece && piece->stats)) {  // a piece's stats pass reads no params
        uint64_t at = params_off;
        for (int k = 0; k < NormPlan::kParams; ++k) {
            if (p.param_input[k] < 0) continue;
            const TensorArg& t = call.inputs[size_t(p.param_input[k])];
            const std::string label = operand_label(info, false, uint32_t(p.param_input[k]));
            param_off[k] = int32_t(at);
            at += plen;
            add_pack_f32(dev, t, label, pb, param_off[k], dispatches);
        }
    }

    // Blocks numbered densely (some devices have only 4 binding points). add_layer_norm and
    // add_rms_norm with the sum output need x, r, y, s and the params: 5 blocks. Where the device
    // allows fewer (OpenGL ES 3.1 guarantees 4), they run in two passes: SUM_ONLY stores
    // s = x + r (x, r, s: 3 blocks), then the normalize pass reads s in place of x (s, y, params:
    // 3 blocks). s holds the sum rounded to DTYPE, which is what the one-pass kernel normalizes.
    const int needed = 2 + int(p.has_r) + int(p.has_s) + int(any_param || chunk_stats);
    const bool split = p.has_s && needed > dev.limits().max_compute_ssbo_blocks;
    // chunk_stage: nullptr (whole rows, or chunks without statistics), CHUNK_STATS or CHUNK_APPLY.
    auto add_pass = [&](bool sum_only, bool x_is_s, const char* chunk_stage) {
        int64_t outer_s[kRoles][TGL_MAX_RANK], inner_s[kRoles][TGL_MAX_RANK];
        std::memcpy(outer_s, p.outer_strides, sizeof outer_s);
        std::memcpy(inner_s, p.inner_strides, sizeof inner_s);
        if (x_is_s) {
            std::memcpy(outer_s[NormPlan::kX], outer_s[NormPlan::kS], sizeof outer_s[0]);
            std::memcpy(inner_s[NormPlan::kX], inner_s[NormPlan::kS], sizeof inner_s[0]);
        }
        Dispatch base;
        int32_t offs[kRoles] = {};
        Defines defines = {{sum_only ? "SUM_ONLY" : stats_define(info.op), ""}, {def::kDtype, dtype}, {def::kWorkgroupSize, str(wg)}};
        auto bind = [&](const char* define, Binding b) {
            defines.emplace_back(define, str(long(base.bindings.size())));
            base.bindings.push_back(std::move(b));
        };
        if (x_is_s)
            bind("B_X", dev.window(call.outputs[1], "outputs[1] (sum)", &offs[NormPlan::kX]));
        else
            bind("B_X", dev.window(call.inputs[0], "inputs[0] (x)", &offs[NormPlan::kX]));
        if (!sum_only) bind("B_Y", dev.window(call.outputs[0], "outputs[0] (y)", &offs[NormPlan::kY]));
        if (p.has_r && !x_is_s) {
            bind("B_R", dev.window(call.inputs[1], operand_label(info, false, 1).c_str(), &offs[NormPlan::kR]));
            defines.emplace_back("HAS_R", "");
        }
        if (p.has_s && !x_is_s) {
            bind("B_S", dev.window(call.outputs[1], "outputs[1] (sum)", &offs[NormPlan::kS]));
            defines.emplace_back("HAS_S", "");
        }
        if ((any_param || chunk_stage) && !sum_only) bind("B_P", pb);
        // The epilogue runs where y is stored: not in the statistics pass of chunked rows.
        const bool stores_y = !sum_only && (!chunk_stage || std::strcmp(chunk_stage, "CHUNK_APPLY") == 0);
        if (epilogue && stores_y) add_epilogue(dev, p, *epilogue, base, defines);
        if (int(base.bindings.size()) > dev.limits().max_compute_ssbo_blocks)
            fail(TGL_ERROR_RESOURCE_EXHAUSTED,
                 "op '%s' with these operands needs %d shader storage blocks; this device allows %d", info.name,
                 int(base.bindings.size()), dev.limits().max_compute_ssbo_blocks);
        if (!sum_only) {
            if (p.param_input[NormPlan::kGamma] >= 0) defines.emplace_back("HAS_GAMMA", "");
            if (p.param_input[NormPlan::kBeta] >= 0) defines.emplace_back("HAS_BETA", "");
            if (info.op == TGL_OP_LOG_SOFTMAX) defines.emplace_back("LOG", "");
        }
        if (!x_is_s && (info.op == TGL_OP_ADD_LAYER_NORM || info.op == TGL_OP_ADD_RMS_NORM))
            defines.emplace_back("ADD", "");

        const std::vector<Dim> outer = merge_role_dims<kRoles>(p.outer_rank, p.outer_shape, outer_s);
        const std::vector<Dim> inner = merge_role_dims<kRoles>(p.inner_rank, p.inner_shape, inner_s);
        // ROW_VEC4: f32 rows with statistics, contiguous and starting 16-byte aligned in every
        // operand read or written as vec4 (x, y, and r, s where bound).
        int row_wg = wg, per = 0;
        bool vec4 = group && !split && !chunked && call.dtype == TGL_DTYPE_F32 && info.op != TGL_OP_BATCH_NORM &&
                    inner.size() == 1 && row_vec4_shape(dev, len, &row_wg, &per);
        for (int role : {int(NormPlan::kX), int(NormPlan::kY), int(NormPlan::kR), int(NormPlan::kS)}) {
            if (!vec4 || (role == NormPlan::kR && !p.has_r) || (role == NormPlan::kS && !p.has_s)) continue;
            bool aligned = inner[0].s[role] == 1 && offs[role] % 4 == 0;
            for (const Dim& d : outer) aligned = aligned && d.s[role] % 4 == 0;
            vec4 = aligned;
        }
        if (vec4) {
            for (auto& d : defines)
                if (d.first == def::kWorkgroupSize) d.second = str(row_wg);
            defines.emplace_back("ROW_VEC4", "");
            defines.emplace_back("PER", str(per));
        }
        defines.emplace_back(group ? "MODE_GROUP" : "MODE_THREAD", "");
        if (group) dev.add_subgroup_define(defines, vec4 ? row_wg : wg);
        defines.emplace_back("OUTER_RANK", str(long(outer.size())));
        defines.emplace_back("INNER_RANK", str(long(inner.size())));
        if (chunked) {
            defines.emplace_back("ROW_CHUNKS", "");
            if (chunk_stage && !sum_only) defines.emplace_back(chunk_stage, "");
            base.uniforms.push_back(uniform_uint("u_splits", {uint32_t(splits)}));
            base.uniforms.push_back(uniform_uint("u_chunk", {uint32_t(rc.chunk)}));
            base.uniforms.push_back(uniform_int("u_part", {to_i32(int64_t(part_off), "the offset of the row chunks' statistics")}));
            base.uniforms.push_back(uniform_uint("u_chunk_lo", {uint32_t(piece ? piece->chunk_lo : 0)}));
            base.uniforms.push_back(uniform_uint("u_piece_splits", {uint32_t(rc.splits)}));
            base.uniforms.push_back(uniform_uint("u_row_len", {count_u32(int64_t(piece ? piece->row_len : len), "a row of inputs[0] (x)")}));
        }
        base.program = dev.program("norm.comp", defines);
        base.uniforms.push_back(uniform_uint("u_rows", {rows}));
        base.uniforms.push_back(uniform_uint("u_len", {len}));
        base.uniforms.push_back(uniform_int("u_offset", {offs[0], offs[1], offs[2], offs[3], offs[4]}));
        base.uniforms.push_back(uniform_float("u_scale", p.scale));
        base.uniforms.push_back(uniform_float("u_eps", p.eps));
        base.uniforms.push_back(uniform_int("u_gamma_off", {param_off[NormPlan::kGamma]}));
        base.uniforms.push_back(uniform_int("u_beta_off", {param_off[NormPlan::kBeta]}));
        base.uniforms.push_back(uniform_int("u_mean_off", {param_off[NormPlan::kMean]}));
        base.uniforms.push_back(uniform_int("u_var_off", {param_off[NormPlan::kVar]}));
        role_dim_uniforms(outer, "u_outer_shape", "u_outer_stride", base);
        role_dim_uniforms(inner, "u_inner_shape", "u_inner_stride", base);
        if (uint64_t(rows) * splits > uint64_t(INT32_MAX))
            fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': %llu rows x %llu chunks exceed the 32-bit workgroup index", info.name,
                 (unsigned long long)rows, (unsigned long long)splits);
        add_chunks(dev, base, group ? uint64_t(rows) * rc.splits : ceil_div(rows, uint64_t(wg)), dispatches);
    };
    auto add_normalize = [&](bool x_is_s) {
        if (piece) return add_pass(false, x_is_s, piece->stats ? "CHUNK_STATS" : "CHUNK_APPLY");
        if (chunk_stats) add_pass(false, x_is_s, "CHUNK_STATS");
        add_pass(false, x_is_s, chunk_stats ? "CHUNK_APPLY" : nullptr);
    };
    if (split) {
        add_pass(true, false, nullptr);
        add_normalize(true);
    } else {
        add_normalize(false);
    }
    dev.submit(info.name, std::move(dispatches));
}

void register_norm_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Normalize, run_norm, &kNormSplit});
}

}  // namespace gles
}  // namespace tgl
