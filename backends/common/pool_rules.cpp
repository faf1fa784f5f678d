#include "pool_rules.h"
#include "op_families.h"

#include "validate_util.h"

#include <cmath>

namespace tgl {

namespace {

using P = PoolPlan;

bool windowed(P::Kind k) { return k == P::kMaxPool || k == P::kAvgPool || k == P::kMaxPoolBwd || k == P::kAvgPoolBwd; }
bool backward(P::Kind k) { return k == P::kMaxPoolBwd || k == P::kAvgPoolBwd || k == P::kAdaptiveAvgBwd; }

P::Kind kind_of(tgl_op op) {
    switch (op) {
    case TGL_OP_MAX_POOL: return P::kMaxPool;
    case TGL_OP_AVG_POOL: return P::kAvgPool;
    case TGL_OP_GLOBAL_MAX_POOL: return P::kGlobalMax;
    case TGL_OP_GLOBAL_AVG_POOL: return P::kGlobalAvg;
    case TGL_OP_ADAPTIVE_AVG_POOL: return P::kAdaptiveAvg;
    case TGL_OP_UPSAMPLE_NEAREST: return P::kNearest;
    case TGL_OP_UPSAMPLE_BILINEAR: return P::kBilinear;
    case TGL_OP_MAX_POOL_BACKWARD: return P::kMaxPoolBwd;
    case TGL_OP_AVG_POOL_BACKWARD: return P::kAvgPoolBwd;
    default: return P::kAdaptiveAvgBwd;
    }
}

void require_flag(const OpInfo& info, const char* name, uint32_t v) {
    if (v > 1) fail(TGL_ERROR_INVALID_ARGUMENT, "params->%s of op '%s' must be 0 or 1, got %u", name, info.name, v);
}

// Windowed pooling: reads tgl_pool_params into the plan (spatial dims right-aligned) and returns
// the output size of every spatial dim for the input sizes p.in.
void plan_window(const OpInfo& info, const void* params, P& p, int64_t (&out)[3]) {
    if (!params)
        fail(TGL_ERROR_NULL_POINTER, "op '%s' needs params (tgl_pool_params): the kernel size has no default", info.name);
    const tgl_pool_params prm = read_params(info, params, tgl_pool_params{});
    require_reserved_zero(info, prm.reserved0);
    require_reserved_zero(info, prm.reserved1);
    require_flag(info, "ceil_mode", prm.ceil_mode);
    require_flag(info, "count_include_pad", prm.count_include_pad);
    const bool avg = p.kind == P::kAvgPool || p.kind == P::kAvgPoolBwd;
    if (!avg && prm.count_include_pad)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->count_include_pad of op '%s' must be 0 (it is an avg_pool setting), got %u",
             info.name, prm.count_include_pad);
    p.ceil_mode = prm.ceil_mode != 0;
    p.count_include_pad = prm.count_include_pad != 0;
    for (int d = 0; d < p.spatial; ++d) {
        const int e = 3 - p.spatial + d;  // right-aligned slot
        const int32_t k = prm.kernel[d];
        const int32_t s = prm.stride[d] == 0 ? k : prm.stride[d];
        const int32_t dil = prm.dilation[d] == 0 ? 1 : prm.dilation[d];
        if (k < 1) fail(TGL_ERROR_INVALID_ARGUMENT, "params->kernel[%d] of op '%s' must be >= 1, got %d", d, info.name, k);
        if (s < 1)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->stride[%d] of op '%s' must be >= 1 (or 0: the kernel size), got %d", d,
                 info.name, prm.stride[d]);
        if (dil < 1)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->dilation[%d] of op '%s' must be >= 1 (or 0: 1), got %d", d, info.name,
                 prm.dilation[d]);
        if (avg && dil != 1)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->dilation[%d] of op '%s' must be 1 or 0 (avg_pool has no dilation), got %d",
                 d, info.name, prm.dilation[d]);
        const int64_t eff = int64_t(dil) * (k - 1) + 1;
        // Any pads >= 0 (ONNX allows them; PyTorch stops at half the kernel): a window may then hold
        // no input element (ops.h says what it gives).
        for (int side = 0; side < 2; ++side) {
            const int32_t pad = side ? prm.pad_end[d] : prm.pad_begin[d];
            if (pad < 0)
                fail(TGL_ERROR_INVALID_ARGUMENT, "params->%s[%d] of op '%s' must be >= 0, got %d",
                     side ? "pad_end" : "pad_begin", d, info.name, pad);
        }
        p.kernel[e] = k;
        p.stride[e] = s;
        p.dilation[e] = dil;
        p.pad_begin[e] = prm.pad_begin[d];
        p.pad_end[e] = prm.pad_end[d];
        const int64_t in = p.in[e];
        const int64_t num = in + prm.pad_begin[d] + prm.pad_end[d] - eff;
        int64_t o = num < 0 ? 0 : (p.ceil_mode ? (num + s - 1) / s : num / s) + 1;
        // PyTorch: with ceil_mode the last window must start inside the input or the left padding.
        if (p.ceil_mode && o > 0 && (o - 1) * s >= in + prm.pad_begin[d]) --o;
        if (o < 1)
            fail(TGL_ERROR_SHAPE_MISMATCH,
                 "op '%s': spatial dim %d of size %lld with kernel %d, dilation %d and padding %d + %d gives no output "
                 "window (the padded input is smaller than the dilated kernel)",
                 info.name, d, (long long)in, k, dil, prm.pad_begin[d], prm.pad_end[d]);
        out[e] = o;
    }
}

}  // namespace

void plan_pool(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    P& p = call.plan.emplace<P>();
    p.kind = kind_of(info.op);
    const bool bwd = backward(p.kind);
    // X: the (N, C, in...) tensor; Y: the (N, C, out...) one.
    const TensorArg& X = bwd ? call.outputs[0] : call.inputs[0];
    const TensorArg& Y = bwd ? call.inputs[0] : call.outputs[0];
    const std::string x_label = operand_label(info, bwd, 0), y_label = operand_label(info, !bwd, 0);
    const bool global = p.kind == P::kGlobalMax || p.kind == P::kGlobalAvg;

    // ---- ranks ----
    const int min_rank = p.kind == P::kBilinear ? 4 : 3, max_rank = p.kind == P::kBilinear ? 4 : 5;
    if (X.rank < min_rank || X.rank > max_rank)
        fail(X.rank > max_rank ? TGL_ERROR_RANK_TOO_LARGE : TGL_ERROR_SHAPE_MISMATCH,
             "op '%s' takes %s of shape (N, C, %s) (rank %s), got shape %s", info.name, x_label.c_str(),
             p.kind == P::kBilinear ? "H, W" : "1 to 3 spatial dims", p.kind == P::kBilinear ? "4" : "3 to 5",
             shape_string(X.rank, X.shape).c_str());
    p.spatial = X.rank - 2;
    p.N = X.shape[0];
    p.C = X.shape[1];
    for (int d = 0; d < p.spatial; ++d) {
        if (X.shape[2 + d] < 1)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': the spatial dims of %s must be >= 1, got shape %s", info.name,
                 x_label.c_str(), shape_string(X.rank, X.shape).c_str());
        p.in[3 - p.spatial + d] = X.shape[2 + d];
    }
    if (info.op == TGL_OP_MAX_POOL || info.op == TGL_OP_MAX_POOL_BACKWARD) {
        int64_t plane = p.in[0] * p.in[1] * p.in[2];
        if (plane > INT32_MAX)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': the spatial dims of %s (shape %s) hold %lld elements; i32 indices reach %d",
                 info.name, x_label.c_str(), shape_string(X.rank, X.shape).c_str(), (long long)plane, INT32_MAX);
    }

    if (!global && Y.rank != X.rank)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s has shape %s but must have the rank of %s (%s)", info.name,
             y_label.c_str(), shape_string(Y.rank, Y.shape).c_str(), x_label.c_str(), shape_string(X.rank, X.shape).c_str());

    // ---- params and Y's expected shape ----
    int64_t out[3] = {1, 1, 1};
    if (windowed(p.kind)) {
        plan_window(info, params, p, out);
    } else if (p.kind == P::kNearest || p.kind == P::kBilinear) {
        tgl_upsample_params prm = read_params(info, params, tgl_upsample_params{sizeof(tgl_upsample_params), 0, {0, 0, 0}, 0});
        require_reserved_zero(info, prm.reserved);
        require_flag(info, "align_corners", prm.align_corners);
        if (p.kind == P::kNearest && prm.align_corners)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->align_corners of op 'upsample_nearest' must be 0 (nearest has no corners mode), got 1");
        p.align_corners = prm.align_corners != 0;
        for (int d = 0; d < p.spatial; ++d) {
            const int e = 3 - p.spatial + d;
            const float sc = prm.scales[d];
            if (!(sc >= 0.0f) || std::isinf(sc))
                fail(TGL_ERROR_INVALID_ARGUMENT, "params->scales[%d] of op '%s' must be 0 (from the sizes) or a finite number > 0, got %g",
                     d, info.name, double(sc));
            const int64_t in = p.in[e], o = Y.shape[2 + d];
            if (sc > 0.0f && o != int64_t(std::floor(double(in) * double(sc))))
                fail(TGL_ERROR_SHAPE_MISMATCH,
                     "op '%s': %s has size %lld in spatial dim %d but params->scales[%d] = %g gives floor(%lld * %g) = %lld",
                     info.name, y_label.c_str(), (long long)o, d, d, double(sc), (long long)in, double(sc),
                     (long long)std::floor(double(in) * double(sc)));
            out[e] = o;
            // The f32 source step, computed as PyTorch does (area_pixel_compute_scale).
            float step;
            if (p.align_corners) step = o > 1 ? float(in - 1) / float(o - 1) : 0.0f;
            else if (sc > 0.0f) step = float(1.0 / double(sc));
            else step = o > 0 ? float(in) / float(o) : 0.0f;
            if (p.kind == P::kNearest && o == in) step = 1.0f;         // PyTorch's nearest_idx shortcuts
            if (p.kind == P::kNearest && o == 2 * in) step = 0.5f;
            p.scale[e] = step;
        }
    } else if (!global) {  // adaptive: out from Y's shape
        for (int d = 0; d < p.spatial; ++d) out[3 - p.spatial + d] = Y.shape[2 + d];
    }

    // Y's shape: (N, C, out...); global pooling also takes (N, C).
    int64_t want[TGL_MAX_RANK] = {p.N, p.C};
    for (int d = 0; d < p.spatial; ++d) want[2 + d] = out[3 - p.spatial + d];
    if (global && Y.rank == 2) {
        require_shape(info, Y, y_label, 2, want, "(N, C) of x");
    } else {
        const char* why = windowed(p.kind) ? (bwd ? "the pooling of dx's shape" : "the pooling of x's shape")
                          : global ? "(N, C, 1, ...) of x"
                                   : "(N, C) of x with spatial dims of y's rank";
        if (!windowed(p.kind) && !global) {
            for (int d = 0; d < p.spatial; ++d)
                if (Y.shape[2 + d] < 1)
                    fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': the spatial dims of %s must be >= 1, got shape %s", info.name,
                         y_label.c_str(), shape_string(Y.rank, Y.shape).c_str());
        }
        require_shape(info, Y, y_label, X.rank, want, why);
    }
    for (int d = 0; d < 3; ++d) p.out[d] = out[d];

    // ---- indices ----
    const TensorArg* I = nullptr;
    if (info.op == TGL_OP_MAX_POOL && call.outputs.size() > 1 && call.outputs[1].present()) I = &call.outputs[1];
    if (info.op == TGL_OP_MAX_POOL_BACKWARD) I = &call.inputs[1];
    if (I) {
        require_shape(info, *I, operand_label(info, info.op == TGL_OP_MAX_POOL, 1), Y.rank, Y.shape,
                      info.op == TGL_OP_MAX_POOL ? "y's shape" : "dy's shape");
        p.has_indices = true;
    }

    // ---- strides ----
    const TensorArg* roles[P::kRoles] = {&X, &Y, I};
    for (int r = 0; r < P::kRoles; ++r) {
        const TensorArg* t = roles[r];
        if (!t) continue;
        p.offset[r] = t->offset;
        p.stride_n[r] = t->strides[0];
        p.stride_c[r] = t->strides[1];
        if (t->rank > 2)
            for (int d = 0; d < p.spatial; ++d) p.stride_sp[r][3 - p.spatial + d] = t->strides[2 + d];
    }
}

void register_pool_rules(std::vector<FamilyRules>& families) { families.push_back({OpFamily::Pool, plan_pool}); }

}  // namespace tgl
