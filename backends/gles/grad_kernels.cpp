// GLES host side of the Grad family (plan: backends/common/grad_rules.h; shader: glsl/grad.comp).
// Row ops are one PASS_ROW dispatch (a workgroup per row, or an invocation per short row), with
// the passes around it that the op needs:
//   layer/rms_norm_backward  gamma packed to f32 in a scratch block (the pack pass, pack.cpp), the
//     row pass (also storing each row's mean and rstd when dgamma/dbeta are asked for), then the
//     deterministic two-stage column sums: PASS_COLUMN (partials per chunk of rows), and
//     PASS_COLUMN_FINAL (the chunks in order). At most 4 SSBO blocks per dispatch.
//   cross_entropy(_backward) PASS_TARGETS (range check, device-side error), PASS_COUNT (count of
//     non-ignored targets and the failed flag), the row pass, PASS_CE_SUM (mean / sum).
//   embedding_backward  PASS_TARGETS (the index, checked, into a key block), a stable argsort of
//     the keys (the Select family's bitonic sort), PASS_EMB_BOUNDS (each value's run of sorted
//     positions), PASS_EMB_GATHER (each dW element sums its run in position order): O(T log^2 T +
//     T * D + V * D) work, deterministic, no float atomics.
//   cumsum_backward  the Scan kernels (scan.comp), with the direction flipped by the plan.
// Run in windows (window_split.cpp), cross_entropy(_backward) and embedding_backward split these:
// the check passes (with the count, or the sort and the runs) once over the whole op
// (add_grad_index_check), then each piece's row pass or gather pass over that scratch (run_grad
// with an IndexPiece), then cross_entropy's PASS_CE_SUM over every row (add_grad_after_pieces).
// Nothing is computed on the CPU.
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"
#include "validate_util.h"

#include <algorithm>
#include <vector>

namespace tgl {
namespace gles {
namespace {

constexpr int kRoles = GradPlan::kRoles;
using R = GradPlan::Role;
// Rows at most this long get one invocation each instead of a workgroup.
constexpr int64_t kThreadRowMax = 32;
using Dim = MergedDim<kRoles>;

Binding whole(const BufferRef& b, uint64_t bytes) {
    Binding r;
    r.keep = b;
    r.name = static_cast<GlesBuffer&>(*b).name();
    r.size = int64_t(bytes);
    return r;
}

// A scratch block of `words` for `call`, refused where it would not fit one storage block.
Binding scratch_block(GlesDevice& dev, const OpCall& call, uint64_t words, const char* what) {
    if (words * 4 > uint64_t(dev.max_window_bytes()))
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': its %llu-byte scratch (%s) exceeds one shader storage block (%lld bytes)",
             call.info->name, (unsigned long long)(words * 4), what, (long long)dev.max_window_bytes());
    return whole(dev.alloc(words * 4), words * 4);
}

// The dispatches of one op, built pass by pass: dense binding points, shared uniforms.
struct Passes {
    GlesDevice& dev;
    const OpCall& call;
    const GradPlan& p;
    int wg;
    std::vector<Dim> outer, inner;
    int32_t offs[kRoles] = {};
    std::vector<Dispatch> ds;
    GlesDevice::DeviceCheck check{};
    bool has_check = false;

    Passes(GlesDevice& d, const OpCall& c) : dev(d), call(c), p(c.grad()), wg(d.workgroup_size()) {
        outer = merge_role_dims<kRoles>(p.outer_rank, p.outer_shape, p.outer_strides);
        inner = merge_role_dims<kRoles>(p.inner_rank, p.inner_shape, p.inner_strides);
    }
    // Binds a view of an operand for role `role` (its window-relative offset goes to u_offset).
    Binding view(const TensorArg& t, const std::string& label, int role) {
        int32_t off = 0;
        Binding b = dev.window(t, label.c_str(), &off);
        if (role >= 0) offs[role] = off;
        return b;
    }
    // A dispatch of `pass` with the bindings given as (define, binding) pairs.
    Dispatch make(const char* pass, std::vector<std::pair<const char*, Binding>> binds, Defines extra = {}) {
        Dispatch d;
        Defines defs = {{pass, ""}, {def::kDtype, str(call.dtype)}, {def::kWorkgroupSize, str(wg)},
                        {"OUTER_RANK", str(long(outer.size()))}, {"INNER_RANK", str(long(inner.size()))}};
        for (auto& b : binds) {
            defs.emplace_back(b.first, str(long(d.bindings.size())));
            d.bindings.push_back(b.second);
        }
        if (int(d.bindings.size()) > dev.limits().max_compute_ssbo_blocks)
            fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s' needs %d shader storage blocks in one pass; this device allows %d",
                 call.info->name, int(d.bindings.size()), dev.limits().max_compute_ssbo_blocks);
        for (auto& e : extra) defs.push_back(e);
        d.program = dev.program("grad.comp", defs);
        d.uniforms.push_back(uniform_uint("u_rows", {count_u32(p.rows, "the rows of the op")}));
        d.uniforms.push_back(uniform_uint("u_len", {count_u32(p.len, "a row of the op")}));
        d.uniforms.push_back(uniform_int("u_offset", std::vector<int32_t>(offs, offs + kRoles)));
        d.uniforms.push_back(uniform_float("u_scale", p.scale));
        d.uniforms.push_back(uniform_float("u_eps", p.eps));
        d.uniforms.push_back(uniform_float("u_smoothing", p.label_smoothing));
        d.uniforms.push_back(uniform_int("u_ignore", {p.ignore_index}));
        if (has_check) d.uniforms.push_back(uniform_uint("u_check_seq", {check.seq}));
        role_dim_uniforms(outer, "u_outer_shape", "u_outer_stride", d);
        role_dim_uniforms(inner, "u_inner_shape", "u_inner_stride", d);
        return d;
    }
    void add(const Dispatch& d, uint64_t groups) { add_chunks(dev, d, groups, ds); }
    void status() {
        if (!has_check) check = dev.device_check();
        has_check = true;
    }
    // How PASS_ROW cuts a row. Its invocations walk their row (one element in wg each in
    // MODE_GROUP) for each of the op's `reductions` (a tree of log2(wg) steps after each), then to
    // store dx. Where that passes the loop budget, softmax, log_softmax, layer_norm and rms_norm
    // backward cut the row into chunks (grad.comp's ROW_CHUNKS: a stage per reduction, then the
    // store); cross_entropy (`cut` false: up to 4 walks and trees) fails (RESOURCE_EXHAUSTED).
    RowChunks row_chunks(int reductions, bool cut) const {
        const uint64_t len = uint64_t(p.len);
        if (p.len <= kThreadRowMax) return {len, 1};  // MODE_THREAD: at most 32 elements a walk
        if (cut) return plan_row_chunks(dev, call.info->name, len, wg, reductions + 1, reductions, reductions);
        check_loop_budget(dev, 4 * (loop_cost(ceil_div(len, uint64_t(wg))) + tree_passes(wg)), call.info->name,
                          "the walks over a row");
        return {len, 1};
    }
    Defines row_mode(const RowChunks& rc) const {
        Defines d = {{p.len > kThreadRowMax ? "MODE_GROUP" : "MODE_THREAD", ""}};
        if (rc.splits > 1) d.emplace_back("ROW_CHUNKS", "");
        return d;
    }
    // The words of the chunks' partials in the scratch (2 per reduction, row and chunk).
    uint64_t chunk_words(const RowChunks& rc, int reductions) const {
        return rc.splits > 1 ? 2 * uint64_t(reductions) * uint64_t(p.rows) * rc.splits : 0;
    }
    uint64_t row_groups() const { return p.len > kThreadRowMax ? uint64_t(p.rows) : ceil_div(uint64_t(p.rows), uint64_t(wg)); }
    // The row pass `row`: one dispatch, or with chunks a dispatch per stage over every (row, chunk),
    // the partials at word chunk_off of the scratch bound as B_S.
    void add_rows(Dispatch row, const RowChunks& rc, int reductions, uint64_t chunk_off) {
        if (rc.splits == 1) return add(row, row_groups());
        count_u32(int64_t(chunk_off + chunk_words(rc, reductions)), "the scratch of the row chunks' partials");
        row.uniforms.push_back(uniform_uint("u_splits", {uint32_t(rc.splits)}));
        row.uniforms.push_back(uniform_uint("u_chunk", {uint32_t(rc.chunk)}));
        row.uniforms.push_back(uniform_int("u_chunk_off", {int32_t(chunk_off)}));
        for (int stage = 0; stage <= reductions; ++stage) {
            Dispatch d = row;
            d.uniforms.push_back(uniform_uint("u_stage", {uint32_t(stage)}));
            add(d, uint64_t(p.rows) * rc.splits);
        }
    }
    void submit() {
        if (!ds.empty()) dev.submit(call.info->name, std::move(ds));
        ds.clear();
    }
};

void set(Dispatch& d, const char* name, int32_t v) { d.uniforms.push_back(uniform_int(name, {v})); }
void setu(Dispatch& d, const char* name, uint32_t v) { d.uniforms.push_back(uniform_uint(name, {v})); }

void softmax_backward(GlesDevice& dev, const OpCall& call) {
    Passes ps(dev, call);
    const OpInfo& info = *call.info;
    Binding a = ps.view(call.inputs[0], operand_label(info, false, 0), R::kA);
    Binding g = ps.view(call.inputs[1], operand_label(info, false, 1), R::kG);
    Binding d = ps.view(call.outputs[0], operand_label(info, true, 0), R::kD);
    const RowChunks rc = ps.row_chunks(1, true);  // the sum of dy * y (of dy), then dx
    Defines ex = ps.row_mode(rc);
    ex.emplace_back(info.op == TGL_OP_LOG_SOFTMAX_BACKWARD ? "OP_LOG_SOFTMAX_BW" : "OP_SOFTMAX_BW", "");
    std::vector<std::pair<const char*, Binding>> binds = {{"B_A", a}, {"B_G", g}, {"B_D", d}};
    if (rc.splits > 1) binds.emplace_back("B_S", scratch_block(dev, call, ps.chunk_words(rc, 1), "the row chunks' partial sums"));
    ps.add_rows(ps.make("PASS_ROW", binds, ex), rc, 1, 0);
    ps.submit();
}

void norm_backward(GlesDevice& dev, const OpCall& call) {
    Passes ps(dev, call);
    const GradPlan& p = call.grad();
    const OpInfo& info = *call.info;
    const bool cols = p.has_dgamma || p.has_dbeta;
    const uint64_t len = count_u32(p.len, "the normalized elements"), rows = count_u32(p.rows, "the rows of x");
    if (len == 0) return;  // every output is empty
    // Column chunks: about 2^18 (chunk, element) invocations to fill a large GPU, at least 8 rows
    // per chunk, and at most 1024 chunks for the final pass to add up per element.
    uint64_t chunks = std::min<uint64_t>({ceil_div(rows, 8), ceil_div(uint64_t(1) << 18, len), 1024});
    chunks = std::max<uint64_t>(chunks, 1);
    // PASS_COLUMN walks a chunk's rows, PASS_COLUMN_FINAL the chunks: both within the loop budget.
    chunks = std::max<uint64_t>(chunks, ceil_div(rows, std::min<uint64_t>(std::max<uint64_t>(rows, 1), loop_items_within(loop_budget(dev), 1))));
    if (cols) check_loop_budget(dev, loop_cost(chunks), info.name, "the sum over the chunks of rows");
    const uint64_t chunk_rows = std::max<uint64_t>(1, ceil_div(rows, chunks));
    chunks = std::max<uint64_t>(1, ceil_div(rows, chunk_rows));
    const uint64_t gamma_off = 2, stats_off = gamma_off + (p.has_gamma ? len : 0);
    const uint64_t part_off = stats_off + (cols ? 2 * rows : 0);
    // The row pass's reductions: the mean (of squares, rms), layer_norm's deviations, the sums of
    // g and g * xhat.
    const int reductions = info.op == TGL_OP_RMS_NORM_BACKWARD ? 2 : 3;
    const RowChunks rc = ps.row_chunks(reductions, true);
    const uint64_t chunk_off = part_off + (cols ? 2 * chunks * len : 0);
    const uint64_t words = chunk_off + ps.chunk_words(rc, reductions);
    Binding sb = scratch_block(dev, call, words, "gamma in f32, each row's mean and rstd, the column sums, the row chunks' partials");
    const bool use_s = p.has_gamma || cols || rc.splits > 1;

    if (p.has_gamma) {
        add_pack_f32(dev, call.inputs[2], operand_label(info, false, 2), sb, int32_t(gamma_off), ps.ds);
    }
    if (rows == 0) {
        // No rows: dgamma and dbeta are sums of nothing (the column pass writes zeros).
    } else {
        Binding a = ps.view(call.inputs[0], operand_label(info, false, 0), R::kA);
        Binding g = ps.view(call.inputs[1], operand_label(info, false, 1), R::kG);
        Binding d = ps.view(call.outputs[0], operand_label(info, true, 0), R::kD);
        Defines ex = ps.row_mode(rc);
        ex.emplace_back(info.op == TGL_OP_RMS_NORM_BACKWARD ? "OP_RMS_BW" : "OP_LN_BW", "");
        if (p.has_gamma) ex.emplace_back("HAS_GAMMA", "");
        if (cols) ex.emplace_back("STATS_OUT", "");
        std::vector<std::pair<const char*, Binding>> binds = {{"B_A", a}, {"B_G", g}, {"B_D", d}};
        if (use_s) binds.emplace_back("B_S", sb);
        Dispatch row = ps.make("PASS_ROW", binds, ex);
        set(row, "u_gamma_off", int32_t(gamma_off));
        set(row, "u_stats_off", int32_t(stats_off));
        ps.add_rows(row, rc, reductions, chunk_off);
    }
    if (cols) {
        Binding a = sb, g = sb;  // no rows: never read
        if (rows > 0) {
            a = ps.view(call.inputs[0], operand_label(info, false, 0), R::kA);
            g = ps.view(call.inputs[1], operand_label(info, false, 1), R::kG);
        }
        Dispatch col = ps.make("PASS_COLUMN", {{"B_A", a}, {"B_G", g}, {"B_S", sb}});
        set(col, "u_stats_off", int32_t(stats_off));
        set(col, "u_part_off", int32_t(part_off));
        setu(col, "u_chunks", uint32_t(chunks));
        setu(col, "u_chunk_rows", uint32_t(chunk_rows));
        ps.add(col, ceil_div(chunks * len, uint64_t(ps.wg)));

        std::vector<std::pair<const char*, Binding>> binds = {{"B_S", sb}};
        int32_t dg_off = 0, db_off = 0;
        // dgamma and dbeta in their own dtype: f32 for f16 x where the op runs in windows (each piece's
        // partial sums, added up after the pieces and rounded once: window_split.cpp)
        const tgl_dtype sums = call.outputs[p.has_dgamma ? 1 : 2].dtype;
        Defines ex = {{"P_RANK", str(p.inner_rank)}, {"SUM_DTYPE", str(sums)}};
        if (p.has_dgamma) {
            binds.emplace_back("B_DG", dev.window(call.outputs[1], operand_label(info, true, 1).c_str(), &dg_off));
            ex.emplace_back("HAS_DG", "");
        }
        if (p.has_dbeta) {
            binds.emplace_back("B_DB", dev.window(call.outputs[2], operand_label(info, true, 2).c_str(), &db_off));
            ex.emplace_back("HAS_DB", "");
        }
        Dispatch fin = ps.make("PASS_COLUMN_FINAL", binds, ex);
        set(fin, "u_part_off", int32_t(part_off));
        setu(fin, "u_chunks", uint32_t(chunks));
        std::vector<int32_t> n, sg, sd;
        for (int d = 0; d < p.inner_rank; ++d) {
            n.push_back(to_i32(p.inner_shape[d], "a normalized dim"));
            sg.push_back(p.has_dgamma ? to_i32(call.outputs[1].strides[d], "a stride of dgamma") : 0);
            sd.push_back(p.has_dbeta ? to_i32(call.outputs[2].strides[d], "a stride of dbeta") : 0);
        }
        fin.uniforms.push_back(uniform_int("u_p_shape", n));
        fin.uniforms.push_back(uniform_int("u_dg_stride", sg));
        fin.uniforms.push_back(uniform_int("u_db_stride", sd));
        set(fin, "u_dg_offset", dg_off);
        set(fin, "u_db_offset", db_off);
        ps.add(fin, ceil_div(len, uint64_t(ps.wg)));
    }
    ps.submit();
}

// PASS_TARGETS and its report dispatch: the row's target / index into scratch word u_tgt_off + row.
void targets_pass(Passes& ps, const Binding& sb, int32_t tgt_off, int64_t limit, int axis, bool ignore) {
    const OpInfo& info = *ps.call.info;
    Binding t = ps.view(ps.call.inputs[1], operand_label(info, false, 1), R::kT);
    ps.status();
    Defines ex = {{"STATUS_BINDING", "2"}, {def::kIndexDtype, str(ps.call.inputs[1].dtype)}};
    if (ignore) ex.emplace_back("IGNORE", "");
    Dispatch d = ps.make("PASS_TARGETS", {{"B_T", t}, {"B_S", sb}}, ex);
    d.bindings.push_back(ps.check.status);
    set(d, "u_tgt_off", tgt_off);
    set(d, "u_limit", to_i32(limit, "the valid range of the index"));
    set(d, "u_axis", axis);
    setu(d, "u_op", uint32_t(info.op));
    Dispatch report = d;
    setu(d, "u_report", 0u);
    setu(report, "u_report", 1u);
    const uint64_t groups = ceil_div(uint64_t(ps.p.rows), uint64_t(ps.wg));
    ps.add(d, groups);
    ps.add(report, groups);
}

// cross_entropy's scratch: [0] the check failed, [1] the count of non-ignored targets, then each
// row's target (-1: ignored), then each row's loss (reductions sum and mean).
uint64_t ce_words(uint64_t rows) { return 2 + 2 * rows; }
constexpr int32_t kTargetsOff = 2;
int32_t ce_loss_off(uint64_t rows) { return int32_t(2 + rows); }

// PASS_TARGETS and PASS_COUNT over every row of the call: each row's target, checked, into the
// scratch; then the count of non-ignored ones and the failed flag, which the later passes read.
void ce_check(Passes& ps, const Binding& sb) {
    const uint64_t rows = uint64_t(ps.p.rows);
    if (rows > 0) targets_pass(ps, sb, kTargetsOff, ps.p.len, ps.call.inputs[0].rank == 1 ? 0 : 1, true);
    // PASS_COUNT and PASS_CE_SUM: one workgroup walks every row (one in wg per invocation).
    check_loop_budget(ps.dev, loop_cost(ceil_div(rows, uint64_t(ps.wg))) + 64, ps.call.info->name,
                      "the walk over the rows' targets and losses");
    ps.status();
    Dispatch count = ps.make("PASS_COUNT", {{"B_S", sb}}, {{"STATUS_BINDING", "1"}});
    count.bindings.push_back(ps.check.status);
    set(count, "u_tgt_off", kTargetsOff);
    ps.add(count, 1);
}

Defines ce_reduction(const GradPlan& p) {
    Defines red;
    if (p.reduction == TGL_REDUCTION_NONE) red.emplace_back("LOSS_NONE", "");
    if (p.reduction == TGL_REDUCTION_MEAN) red.emplace_back("MEAN", "");
    return red;
}

// The row pass over the call's rows, which are rows [row_lo, row_lo + rows) of an op of all_rows
// rows whose targets and count the scratch holds (a piece of an op run in windows: the whole op's).
void ce_rows(Passes& ps, const Binding& sb, uint64_t row_lo, uint64_t all_rows) {
    const OpCall& call = ps.call;
    const OpInfo& info = *call.info;
    const bool backward = info.op == TGL_OP_CROSS_ENTROPY_BACKWARD;
    if (ps.p.rows == 0) return;
    Binding a = ps.view(call.inputs[0], operand_label(info, false, 0), R::kA);
    Defines ex = ps.row_mode(ps.row_chunks(0, false));
    for (auto& e : ce_reduction(ps.p)) ex.push_back(e);
    ex.emplace_back(backward ? "OP_CE_BW" : "OP_CE", "");
    std::vector<std::pair<const char*, Binding>> binds = {{"B_A", a}, {"B_S", sb}};
    if (backward) binds.emplace_back("B_L", ps.view(call.inputs[2], operand_label(info, false, 2), R::kL));
    else if (ps.p.reduction == TGL_REDUCTION_NONE) binds.emplace_back("B_L", ps.view(call.outputs[0], operand_label(info, true, 0), R::kL));
    if (backward) binds.emplace_back("B_D", ps.view(call.outputs[0], operand_label(info, true, 0), R::kD));
    Dispatch row = ps.make("PASS_ROW", binds, ex);
    set(row, "u_tgt_off", to_i32(int64_t(kTargetsOff + row_lo), "a row of the op"));
    set(row, "u_loss_off", to_i32(int64_t(ce_loss_off(all_rows) + row_lo), "a row of the op"));
    ps.add(row, ps.row_groups());
}

// PASS_CE_SUM (cross_entropy with reduction sum or mean): every row's loss, in one order however
// the rows were computed (whole, or in pieces), into the loss.
void ce_sum(Passes& ps, const Binding& sb) {
    const OpCall& call = ps.call;
    if (call.info->op != TGL_OP_CROSS_ENTROPY || ps.p.reduction == TGL_REDUCTION_NONE) return;
    Binding lb = ps.view(call.outputs[0], operand_label(*call.info, true, 0), R::kL);
    Dispatch sum = ps.make("PASS_CE_SUM", {{"B_S", sb}, {"B_L", lb}}, ce_reduction(ps.p));
    set(sum, "u_loss_off", ce_loss_off(uint64_t(ps.p.rows)));
    ps.add(sum, 1);
}

void cross_entropy(GlesDevice& dev, const OpCall& call) {
    Passes ps(dev, call);
    const uint64_t rows = count_u32(call.grad().rows, "the rows of logits");
    const Binding sb = scratch_block(dev, call, ce_words(rows), "each row's target and loss");
    ce_check(ps, sb);
    ce_rows(ps, sb, 0, rows);
    ce_sum(ps, sb);
    ps.submit();
}

// embedding_backward's scratch: the token positions sorted by index value (T), then each value's
// run of sorted positions: starts (V), ends (V).
uint64_t emb_words(uint64_t tokens, uint64_t vocab) { return tokens + 2 * vocab; }

// The index checked (PASS_TARGETS into a key block), the positions sorted by it, stably (the Select
// family's argsort), and each value's run of sorted positions: the scratch the gather pass reads.
Binding emb_runs(Passes& ps) {
    GlesDevice& dev = ps.dev;
    const uint64_t T = count_u32(ps.p.rows, "the tokens of index"), V = count_u32(ps.p.vocab, "V (dW's dim 0)");
    const Binding s2 = scratch_block(dev, ps.call, emb_words(T, V), "the sorted tokens and each index value's run of them");
    const int32_t pos_off = 0, start_off = int32_t(T);
    ps.status();
    if (T > 0) {
        BufferRef keys = dev.alloc(T * 4);
        Binding kb = whole(keys, T * 4);
        targets_pass(ps, kb, 0, ps.p.vocab, 0, false);
        ps.submit();
        // Positions sorted by index value, stably (equal values keep position order).
        OpCall sort;
        sort.info = find_op(TGL_OP_ARGSORT);
        sort.dtype = TGL_DTYPE_I32;
        TensorArg k;
        k.buffer = keys;
        k.dtype = TGL_DTYPE_I32;
        k.rank = 1;
        k.shape[0] = int64_t(T);
        k.strides[0] = 1;
        k.numel = int64_t(T);
        k.byte_hi = int64_t(T * 4);
        TensorArg pos = k;
        pos.buffer = s2.keep;
        sort.inputs.push_back(k);
        sort.outputs.push_back(pos);
        plan_select(sort, nullptr);
        run_select(dev, sort);
        uint32_t zero = 0;
        dev.fill(s2.keep, uint64_t(start_off) * 4, 2 * V * 4, &zero, 4);
        Dispatch bounds = ps.make("PASS_EMB_BOUNDS", {{"B_K", kb}, {"B_S", s2}});
        set(bounds, "u_pos_off", pos_off);
        set(bounds, "u_start_off", start_off);
        setu(bounds, "u_vocab", uint32_t(V));
        ps.add(bounds, ceil_div(T, uint64_t(ps.wg)));
    } else {
        uint32_t zero = 0;
        dev.fill(s2.keep, uint64_t(start_off) * 4, 2 * V * 4, &zero, 4);
    }
    return s2;
}

// PASS_EMB_GATHER into the call's dW, which holds rows [v_lo, v_lo + its V) of the dW of an op of
// all_tokens tokens and all_vocab rows whose runs the scratch holds, over the call's tokens
// [t_lo, t_lo + its T) of them (a piece of an op run in windows: the whole op's; a piece of tokens
// past the first adds to the dW the earlier ones stored).
void emb_gather(Passes& ps, const Binding& s2, uint64_t v_lo, uint64_t t_lo, uint64_t all_tokens, uint64_t all_vocab) {
    const OpCall& call = ps.call;
    const GradPlan& p = ps.p;
    const OpInfo& info = *call.info;
    const uint64_t T = count_u32(p.rows, "the tokens of index"), V = count_u32(p.vocab, "V (dW's dim 0)");
    const uint64_t D = count_u32(p.len, "D (dW's dim 1)");
    int32_t dw_off = 0;
    Binding d = ps.dev.window(call.outputs[0], operand_label(info, true, 0).c_str(), &dw_off);
    Binding a = T > 0 && D > 0 ? ps.view(call.inputs[0], operand_label(info, false, 0), R::kA) : s2;
    const bool token_window = t_lo > 0 || T < all_tokens;  // a piece of the tokens: runs cut to them
    Defines ex = {{"STATUS_BINDING", "3"}, {"DW_DTYPE", str(call.outputs[0].dtype)}};
    if (token_window) ex.emplace_back("TOKEN_WINDOW", "");
    Dispatch gather = ps.make("PASS_EMB_GATHER", {{"B_A", a}, {"B_S", s2}, {"B_D", d}}, ex);
    gather.bindings.push_back(ps.check.status);
    set(gather, "u_pos_off", 0);
    set(gather, "u_start_off", to_i32(int64_t(all_tokens), "the tokens of index"));
    setu(gather, "u_vocab", count_u32(int64_t(all_vocab), "V (dW's dim 0)"));
    setu(gather, "u_v_lo", uint32_t(v_lo));
    setu(gather, "u_v_rows", uint32_t(V));
    setu(gather, "u_t_lo", uint32_t(t_lo));
    setu(gather, "u_t_hi", uint32_t(t_lo + T));
    set(gather, "u_padding", p.has_padding ? p.padding_idx : -1);
    gather.uniforms.push_back(uniform_int("u_dw_stride", {to_i32(p.dw_strides[0], "a stride of dW"),
                                                          to_i32(p.dw_strides[1], "a stride of dW")}));
    set(gather, "u_dw_offset", dw_off);
    // A dW element walks its index value's run of tokens (up to all T; a piece of the tokens first
    // cuts the run to them, two binary searches of up to 32 steps): runs longer than the loop
    // budget take several dispatches, each over a range of offsets into the runs, in order.
    const uint64_t search = token_window ? 2 * loop_cost(32) : 0;
    const uint64_t run = std::min(std::max<uint64_t>(T, 1), loop_items_within(loop_budget(ps.dev), 1, 1 + search));
    for (uint64_t r = 0; r < std::max<uint64_t>(T, 1); r += run) {
        Dispatch g = gather;
        setu(g, "u_run_begin", uint32_t(r));
        setu(g, "u_run_end", uint32_t(r + run));
        ps.add(g, ceil_div(V * D, uint64_t(ps.wg)));
    }
}

void embedding_backward(GlesDevice& dev, const OpCall& call) {
    Passes ps(dev, call);
    const Binding s2 = emb_runs(ps);
    emb_gather(ps, s2, 0, 0, uint64_t(call.grad().rows), uint64_t(call.grad().vocab));
    ps.submit();
}

// The Passes of a piece of an op run in windows: the whole op's device check.
void use_check(Passes& ps, const GlesDevice::DeviceCheck& check) {
    ps.check = check;
    ps.has_check = true;
}

}  // namespace

BufferRef add_grad_index_check(GlesDevice& dev, const OpCall& call, const GlesDevice::DeviceCheck& check) {
    Passes ps(dev, call);
    use_check(ps, check);
    Binding sb;
    if (call.info->op == TGL_OP_EMBEDDING_BACKWARD) {
        sb = emb_runs(ps);
    } else {
        sb = scratch_block(dev, call, ce_words(count_u32(call.grad().rows, "the rows of logits")), "each row's target and loss");
        ce_check(ps, sb);
    }
    ps.submit();
    return sb.keep;
}

void run_grad(GlesDevice& dev, const OpCall& call, const IndexPiece& piece) {
    Passes ps(dev, call);
    use_check(ps, piece.check);
    const uint64_t rows = uint64_t(piece.whole->grad().rows);
    if (call.info->op == TGL_OP_EMBEDDING_BACKWARD) {
        const uint64_t vocab = uint64_t(piece.whole->grad().vocab);
        emb_gather(ps, whole(piece.scratch, emb_words(rows, vocab) * 4), uint64_t(piece.axis_lo), uint64_t(piece.row_lo), rows, vocab);
    } else {
        ce_rows(ps, whole(piece.scratch, ce_words(rows) * 4), uint64_t(piece.row_lo), rows);
    }
    ps.submit();
}

void add_grad_after_pieces(GlesDevice& dev, const OpCall& call, const IndexPiece& piece) {
    if (call.info->op == TGL_OP_EMBEDDING_BACKWARD) return;
    Passes ps(dev, call);
    use_check(ps, piece.check);
    ce_sum(ps, whole(piece.scratch, ce_words(uint64_t(call.grad().rows)) * 4));
    ps.submit();
}

void run_grad(GlesDevice& dev, const OpCall& call) {
    switch (call.info->op) {
    case TGL_OP_SOFTMAX_BACKWARD:
    case TGL_OP_LOG_SOFTMAX_BACKWARD: softmax_backward(dev, call); break;
    case TGL_OP_LAYER_NORM_BACKWARD:
    case TGL_OP_RMS_NORM_BACKWARD: norm_backward(dev, call); break;
    case TGL_OP_CROSS_ENTROPY:
    case TGL_OP_CROSS_ENTROPY_BACKWARD: cross_entropy(dev, call); break;
    case TGL_OP_EMBEDDING_BACKWARD: embedding_backward(dev, call); break;
    case TGL_OP_CUMSUM_BACKWARD: run_scan(dev, call); break;
    default: fail(TGL_ERROR_INTERNAL, "op '%s' has no kernel in plugin 'gles'", call.info->name);
    }
}

void register_grad_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Grad, run_grad, &kGradSplit});
}

}  // namespace gles
}  // namespace tgl
