// Fusion inside recorded graphs (docs/graphs.md): at graph_end, and again for graph_replay_with's
// ops with its bindings applied, consecutive float elementwise ops that form a chain (each reads a
// result of the ones before it, at the same element) are replaced by one dispatch of
// glsl/fused_elementwise.comp. The rules that keep every buffer bit-identical to the unfused replay:
//  - every op's output is still stored (a user may download any buffer after a replay, and
//    graph_replay_with may swap any of them): what a chain saves is re-reading its intermediates,
//    and the dispatches and barriers between its ops;
//  - each op computes in the fused kernel what its own kernel computes (the same function of
//    elementwise_ops.glsl on the same f32 values), its result rounded to its output's dtype before
//    a later op reads it, as a store and a load would;
//  - an operand may coincide with another one exactly (the same buffer, offset, dtype, shape and
//    strides: the same element at every index, so in-place ops and a re-read intermediate are
//    per-element orders that one invocation keeps), but a written view that overlaps any other
//    view of the chain in any other way ends the chain: its elements would be read or written by
//    other invocations, in another order than op by op.
// A chain may also start at the output of a layer_norm or rms_norm (the LLM's norm then scale by a
// weight row, then maybe more): then it runs as the norm kernel's epilogue (norm.comp's EPILOGUE),
// applied to each element of the norm's output as the norm stores it, the norm's output being the
// chain's head (a register). Same rules, and the chain writes over neither the norm's inputs (its
// other invocations still read them) nor its output.
#include "graph_fusion.h"

#include "dispatch_util.h"
#include "gles_device.h"

#include "op_families.h"
#include "status.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace tgl {
namespace gles {
namespace {

constexpr int kMaxViews = FusedChain::kMaxViews;

bool float_dtype(tgl_dtype t) { return t == TGL_DTYPE_F32 || t == TGL_DTYPE_F16 || t == TGL_DTYPE_BF16; }

// An op the fused kernel computes as elementwise.comp does: a unary or binary float op of
// elementwise_ops.glsl whose operands are all floats, and whose output does not step on itself.
bool fusable(const OpCall& c) {
    if (c.info->family != OpFamily::Unary && c.info->family != OpFamily::Binary) return false;
    if (c.info->op == TGL_OP_ADD_N || is_bits_op(c.info->op) || c.outputs.size() != 1) return false;
    if (c.inputs.empty() || c.inputs.size() > 2) return false;
    for (const TensorArg& t : c.inputs)
        if (!t.present() || !float_dtype(t.dtype)) return false;
    const TensorArg& y = c.outputs[0];
    if (!float_dtype(y.dtype)) return false;
    for (int d = 0; d < y.rank; ++d)
        if (y.shape[d] > 1 && y.strides[d] == 0) return false;
    return true;
}

// A norm that can run a chain as its epilogue (norm.comp's EPILOGUE): layer_norm or rms_norm
// (with or without gamma, beta) of a float dtype with elements, whose output does not step on itself.
// At most kNormHeadRows rows: the fused norm saves a dispatch (3-6 us on an H200) but its
// epilogue costs 1.5-3 us per million elements more than the norm and the chain run apart
// (docs/graphs.md: 1 x 4096 fused 1.6-1.8x faster, 2048 x 4096 0.72-0.78x), so prefill-sized norms
// stay unfused (the break-even of those figures: about 500 rows of 4096).
constexpr int64_t kNormHeadRows = 256;
bool norm_head(const OpCall& c) {
    if (c.info->op != TGL_OP_LAYER_NORM && c.info->op != TGL_OP_RMS_NORM) return false;
    if (c.outputs.size() != 1 || !float_dtype(c.dtype)) return false;
    if (c.norm().rows > kNormHeadRows) return false;
    const TensorArg& y = c.outputs[0];
    for (int d = 0; d < y.rank; ++d)
        if (y.shape[d] == 0 || (y.shape[d] > 1 && y.strides[d] == 0)) return false;
    return true;
}

bool same_view(const TensorArg& a, const TensorArg& b) {
    if (a.buffer != b.buffer || a.dtype != b.dtype || a.offset != b.offset || a.rank != b.rank) return false;
    for (int d = 0; d < a.rank; ++d)
        if (a.shape[d] != b.shape[d] || a.strides[d] != b.strides[d]) return false;
    return true;
}

bool overlap(const TensorArg& a, const TensorArg& b) {
    return a.buffer == b.buffer && a.byte_lo < b.byte_hi && b.byte_lo < a.byte_hi;
}

}  // namespace

FusedChain::FusedChain(const OpCall& norm) : head(&norm.outputs[0]) {
    rank = head->rank;
    std::copy(head->shape, head->shape + rank, shape);
    for (const TensorArg& t : norm.inputs)
        if (t.present()) head_reads.push_back(&t);
}

bool FusedChain::try_add(const OpCall& c, int max_views) {
    if (!fusable(c) || int(stages.size()) >= kMaxStages) return false;
    auto find = [&](const TensorArg& t) {
        for (size_t v = 0; v < views.size(); ++v)
            if (same_view(views[v].arg, t)) return int(v);
        return -1;
    };
    auto is_head = [&](const TensorArg& t) { return head && same_view(*head, t); };
    const TensorArg& y = c.outputs[0];
    if (rank >= 0) {
        if (y.rank != rank || !std::equal(shape, shape + rank, y.shape)) return false;
        bool linked = false;  // it reads a result of the chain (or its head)
        for (const TensorArg& t : c.inputs) {
            const int v = find(t);
            linked = linked || is_head(t) || (v >= 0 && views[size_t(v)].written);
        }
        if (!linked) return false;
    }
    // Every pair of the chain's views and c's (one of them written) coincides or is disjoint.
    std::vector<const TensorArg*> reads;
    for (const TensorArg& t : c.inputs) reads.push_back(&t);
    for (const View& v : views) {
        if (overlap(v.arg, y) && !same_view(v.arg, y)) return false;
        for (const TensorArg* t : reads)
            if (v.written && overlap(v.arg, *t) && !same_view(v.arg, *t)) return false;
    }
    for (const TensorArg* t : reads)
        if (overlap(*t, y) && !same_view(*t, y)) return false;
    // The head: read as it is (the same element), never overlapped otherwise nor written over,
    // and neither are the norm's inputs.
    if (head) {
        if (overlap(*head, y)) return false;
        for (const TensorArg* t : reads)
            if (overlap(*head, *t) && !is_head(*t)) return false;
        for (const TensorArg* t : head_reads)
            if (overlap(*t, y)) return false;
    }
    int extra = 0;  // new views
    for (size_t k = 0; k < c.inputs.size(); ++k) {
        bool seen = find(c.inputs[k]) >= 0 || is_head(c.inputs[k]);
        for (size_t j = 0; j < k && !seen; ++j) seen = same_view(c.inputs[j], c.inputs[k]);
        extra += seen ? 0 : 1;
    }
    bool y_seen = find(y) >= 0;
    for (const TensorArg& t : c.inputs) y_seen = y_seen || same_view(t, y);
    extra += y_seen ? 0 : 1;
    if (int(views.size()) + extra > std::min(max_views, kMaxViews)) return false;

    if (rank < 0) {
        rank = y.rank;
        std::copy(y.shape, y.shape + rank, shape);
    }
    Stage s{&c, {"0.0", "0.0"}, 0};
    for (size_t k = 0; k < c.inputs.size(); ++k) {
        if (is_head(c.inputs[k])) {
            s.operand[k] = "h";
            continue;
        }
        int v = find(c.inputs[k]);
        if (v < 0) {
            views.push_back(View{c.inputs[k]});
            v = int(views.size()) - 1;
        }
        View& view = views[size_t(v)];
        if (view.writer >= 0) {
            s.operand[k] = "r[" + str(view.writer) + "]";
        } else {
            view.read = true;
            s.operand[k] = "x[" + str(v) + "]";
        }
    }
    int out = find(y);
    if (out < 0) {
        views.push_back(View{y});
        out = int(views.size()) - 1;
    }
    views[size_t(out)].written = true;
    views[size_t(out)].writer = int(stages.size());
    s.out = out;
    stages.push_back(std::move(s));
    return true;
}

void broadcast_strides(const TensorArg& t, int rank, const int64_t* shape, int64_t* out) {
    for (int d = 0; d < rank; ++d) {
        const int td = d - (rank - t.rank);
        out[d] = td < 0 || (t.shape[td] == 1 && shape[d] != 1) ? 0 : t.strides[td];
    }
}

std::vector<int32_t> bind_fused_views(GlesDevice& dev, const FusedChain& ch, Dispatch& base, Defines& defines) {
    const int n = int(ch.views.size());
    std::vector<int32_t> offsets(size_t(n), 0);
    std::string dtypes, reads;
    defines.emplace_back("FUSED_BINDING", str(long(base.bindings.size())));
    for (int v = 0; v < n; ++v) {
        const FusedChain::View& view = ch.views[size_t(v)];
        if (dev.window_bytes(view.arg) > dev.max_window_bytes() - dev.window_alignment())
            fail(TGL_ERROR_RESOURCE_EXHAUSTED, "a fused operand is larger than one SSBO window");
        base.bindings.push_back(dev.window(view.arg, "a fused operand", &offsets[size_t(v)]));
        dtypes += (v ? "," : "") + str(view.arg.dtype);
        reads += v ? "," : "";
        reads += view.read ? "true" : "false";
    }
    if (int(base.bindings.size()) > dev.limits().max_compute_ssbo_blocks)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "a fused chain needs %d shader storage blocks; this device allows %d",
             int(base.bindings.size()), dev.limits().max_compute_ssbo_blocks);
    defines.emplace_back("N_VIEWS", str(n));
    defines.emplace_back("V_DTYPES", dtypes);
    defines.emplace_back("V_READ", reads);
    defines.emplace_back("STAGES", str(long(ch.stages.size())));
    std::vector<float> scalars;
    for (size_t k = 0; k < ch.stages.size(); ++k) {
        const FusedChain::Stage& s = ch.stages[k];
        const std::string p = "S" + str(long(k)) + "_";
        defines.emplace_back(p + "FN", float_op_function(*s.call));
        defines.emplace_back(p + "A", s.operand[0]);
        defines.emplace_back(p + "B", s.operand[1]);
        defines.emplace_back(p + "OUT", str(s.out));
        scalars.push_back(s.call->elementwise().scalars[0]);
        scalars.push_back(s.call->elementwise().scalars[1]);
    }
    UniformValue u{"u_scalars", UniformValue::Float, std::vector<uint32_t>(scalars.size())};
    std::memcpy(u.bits.data(), scalars.data(), scalars.size() * 4);
    base.uniforms.push_back(std::move(u));
    base.uniforms.push_back(uniform_uint("u_zero", {0u}));
    return offsets;
}

namespace {

// Queues the chain as one fused_elementwise.comp op (throws where it cannot: the caller keeps the
// ops unfused then).
void run_fused(GlesDevice& dev, const FusedChain& ch) {
    const int n = int(ch.views.size());
    int64_t shape[TGL_MAX_RANK];
    int64_t strides[kMaxViews][TGL_MAX_RANK];
    int64_t* stride_of[kMaxViews];
    std::copy(ch.shape, ch.shape + ch.rank, shape);
    int64_t numel = 1;
    for (int d = 0; d < ch.rank; ++d) numel *= shape[d];
    for (int v = 0; v < n; ++v) {
        broadcast_strides(ch.views[size_t(v)].arg, ch.rank, ch.shape, strides[v]);
        stride_of[v] = strides[v];
    }
    const int rank = merge_dims_in_place(ch.rank, shape, n, stride_of);
    const uint32_t count = count_u32(numel, "a fused elementwise chain's output");
    bool contig = rank == 1;
    for (int v = 0; v < n; ++v) contig = contig && strides[v][0] == 1;

    Dispatch base;
    Defines defines;
    const std::vector<int32_t> offsets = bind_fused_views(dev, ch, base, defines);
    std::vector<int32_t> flat_strides;
    for (int v = 0; v < n; ++v)
        for (int d = 0; d < rank; ++d) flat_strides.push_back(to_i32(strides[v][d], "a stride"));
    const int wg = dev.workgroup_size();
    defines.emplace_back("RANK", str(rank));
    if (contig) defines.emplace_back("CONTIG", "");
    defines.emplace_back(def::kWorkgroupSize, str(wg));
    base.program = dev.program("fused_elementwise.comp", defines);
    base.uniforms.push_back(uniform_uint("u_numel", {count}));
    base.uniforms.push_back(uniform_int("u_offset", offsets));
    if (rank > 0 && !contig) {
        base.uniforms.push_back(uniform_int("u_shape", to_i32s(shape, rank, "a dimension")));
        base.uniforms.push_back(uniform_int("u_stride", flat_strides));
    }
    std::vector<Dispatch> dispatches;
    add_chunks(dev, base, ceil_div(count, uint64_t(wg)), dispatches);
    dev.submit("fused elementwise", std::move(dispatches));
}

}  // namespace

Device::RecordedOps GlesDevice::plan_graph(const std::vector<const OpCall*>& calls, const RecordedOps& ops) {
    if (!graph_fusion_) return ops;
    auto out = std::make_shared<std::vector<std::shared_ptr<RecordedOp>>>();
    bool fused = false;
    const int max_views = limits().max_compute_ssbo_blocks;
    // Replaces ops [i, j) by the plan `run` (false where it throws: the ops stay unfused).
    auto fuse = [&](size_t i, size_t j, const std::function<void()>& run) {
        try {
            out->push_back(record_plan(run));
        } catch (const Error&) {
            // (a chain the kernels cannot take, e.g. an operand beyond one SSBO window or 32-bit
            // indices: its ops replay unfused)
            return false;
        }
        fused = true;
        if (stats_) stats_->fused_ops += int64_t(j - i);
        return true;
    };
    for (size_t i = 0; i < calls.size();) {
        // A norm and the chain that starts at its output: one norm kernel with an epilogue.
        if (norm_head(*calls[i])) {
            FusedChain chain(*calls[i]);
            const int room = max_views - norm_store_pass_blocks(*this, *calls[i]);
            size_t j = i + 1;
            while (j < calls.size() && chain.try_add(*calls[j], room)) ++j;
            if (j > i + 1 && fuse(i, j, [&] { run_norm_with_epilogue(*this, *calls[i], &chain); })) {
                i = j;
                continue;
            }
        }
        FusedChain chain;
        size_t j = i;
        while (j < calls.size() && chain.try_add(*calls[j], max_views)) ++j;
        if (j - i >= 2 && fuse(i, j, [&] { run_fused(*this, chain); })) {
            i = j;
            continue;
        }
        for (size_t k = i; k < std::max(j, i + 1); ++k) out->push_back((*ops)[k]);
        i = std::max(j, i + 1);
    }
    return fused ? RecordedOps(out) : ops;
}

}  // namespace gles
}  // namespace tgl
