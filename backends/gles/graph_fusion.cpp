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
#include "dispatch_util.h"
#include "gles_device.h"

#include "op_families.h"
#include "status.h"

#include <algorithm>
#include <cstring>

namespace tgl {
namespace gles {
namespace {

constexpr int kMaxViews = 8;   // fused_elementwise.comp's bindings
constexpr int kMaxStages = 8;  // and stages

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

bool same_view(const TensorArg& a, const TensorArg& b) {
    if (a.buffer != b.buffer || a.dtype != b.dtype || a.offset != b.offset || a.rank != b.rank) return false;
    for (int d = 0; d < a.rank; ++d)
        if (a.shape[d] != b.shape[d] || a.strides[d] != b.strides[d]) return false;
    return true;
}

bool overlap(const TensorArg& a, const TensorArg& b) {
    return a.buffer == b.buffer && a.byte_lo < b.byte_hi && b.byte_lo < a.byte_hi;
}

// A chain being built: its views (distinct operands) and stages.
struct Chain {
    struct View {
        TensorArg arg;
        bool read = false;     // loaded: read by a stage before any stage wrote it
        bool written = false;  // some stage stores into it
        int writer = -1;       // the last stage that stored into it so far
    };
    struct Stage {
        const OpCall* call;
        std::string operand[2];  // x[v] or r[j], or "0.0"
        int out;
    };
    int rank = -1;  // the common output shape
    int64_t shape[TGL_MAX_RANK] = {};
    std::vector<View> views;
    std::vector<Stage> stages;

    int find(const TensorArg& t) const {
        for (size_t v = 0; v < views.size(); ++v)
            if (same_view(views[v].arg, t)) return int(v);
        return -1;
    }

    // Adds op c as the next stage if it continues the chain within `max_views` bindings.
    bool try_add(const OpCall& c, int max_views) {
        if (!fusable(c) || int(stages.size()) >= kMaxStages) return false;
        const TensorArg& y = c.outputs[0];
        if (rank >= 0) {
            if (y.rank != rank || !std::equal(shape, shape + rank, y.shape)) return false;
            bool linked = false;  // it reads a result of the chain
            for (const TensorArg& t : c.inputs) {
                const int v = find(t);
                linked = linked || (v >= 0 && views[size_t(v)].written);
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
        int extra = 0;  // new views
        for (size_t k = 0; k < c.inputs.size(); ++k) {
            bool seen = find(c.inputs[k]) >= 0;
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
};

// View `t`'s strides over the chain's output shape (numpy broadcasting: trailing dims aligned,
// size-1 dims repeated with stride 0).
void broadcast_strides(const TensorArg& t, int rank, const int64_t* shape, int64_t* out) {
    for (int d = 0; d < rank; ++d) {
        const int td = d - (rank - t.rank);
        out[d] = td < 0 || (t.shape[td] == 1 && shape[d] != 1) ? 0 : t.strides[td];
    }
}

// Queues the chain as one fused_elementwise.comp op (throws where it cannot: the caller keeps the
// ops unfused then).
void run_fused(GlesDevice& dev, const Chain& ch) {
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
    std::vector<int32_t> offsets(size_t(n), 0), flat_strides;
    std::string dtypes, reads;
    for (int v = 0; v < n; ++v) {
        const Chain::View& view = ch.views[size_t(v)];
        if (dev.window_bytes(view.arg) > dev.max_window_bytes() - dev.window_alignment())
            fail(TGL_ERROR_RESOURCE_EXHAUSTED, "a fused operand is larger than one SSBO window");
        base.bindings.push_back(dev.window(view.arg, "a fused operand", &offsets[size_t(v)]));
        for (int d = 0; d < rank; ++d) flat_strides.push_back(to_i32(strides[v][d], "a stride"));
        dtypes += (v ? "," : "") + str(view.arg.dtype);
        reads += v ? "," : "";
        reads += view.read ? "true" : "false";
    }
    const int wg = dev.workgroup_size();
    Defines defines = {{"N_VIEWS", str(n)}, {"V_DTYPES", dtypes}, {"V_READ", reads},
                       {"STAGES", str(long(ch.stages.size()))}};
    std::vector<float> scalars;
    for (size_t k = 0; k < ch.stages.size(); ++k) {
        const Chain::Stage& s = ch.stages[k];
        const std::string p = "S" + str(long(k)) + "_";
        defines.emplace_back(p + "FN", float_op_function(*s.call));
        defines.emplace_back(p + "A", s.operand[0]);
        defines.emplace_back(p + "B", s.operand[1]);
        defines.emplace_back(p + "OUT", str(s.out));
        scalars.push_back(s.call->elementwise().scalars[0]);
        scalars.push_back(s.call->elementwise().scalars[1]);
    }
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
    UniformValue u{"u_scalars", UniformValue::Float, std::vector<uint32_t>(scalars.size())};
    std::memcpy(u.bits.data(), scalars.data(), scalars.size() * 4);
    base.uniforms.push_back(std::move(u));
    base.uniforms.push_back(uniform_uint("u_zero", {0u}));
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
    for (size_t i = 0; i < calls.size();) {
        Chain chain;
        size_t j = i;
        while (j < calls.size() && chain.try_add(*calls[j], max_views)) ++j;
        if (j - i >= 2) {
            try {
                out->push_back(record_plan([&] { run_fused(*this, chain); }));
                fused = true;
                if (stats_) stats_->fused_ops += int64_t(j - i);
                i = j;
                continue;
            } catch (const Error&) {
                // (a chain the fused kernel cannot take, e.g. an operand beyond one SSBO window or
                // 32-bit indices: its ops replay unfused)
            }
        }
        for (size_t k = i; k < std::max(j, i + 1); ++k) out->push_back((*ops)[k]);
        i = std::max(j, i + 1);
    }
    return fused ? RecordedOps(out) : ops;
}

}  // namespace gles
}  // namespace tgl
