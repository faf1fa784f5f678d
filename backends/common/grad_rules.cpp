#include "grad_rules.h"
#include "op_families.h"

#include "validate_util.h"

#include <cmath>

namespace tgl {

namespace {

using R = GradPlan::Role;

void require_like(const OpCall& call, bool output, uint32_t index, const TensorArg& ref, const char* why) {
    const TensorArg& t = output ? call.outputs[index] : call.inputs[index];
    require_shape(*call.info, t, operand_label(*call.info, output, index), ref.rank, ref.shape, why);
}

// Puts dim d of the operands into the outer or inner part of the plan.
struct Builder {
    GradPlan& p;
    void add(bool inner, int64_t n, const int64_t (&s)[GradPlan::kRoles]) {
        int& r = inner ? p.inner_rank : p.outer_rank;
        (inner ? p.inner_shape : p.outer_shape)[r] = n;
        for (int k = 0; k < GradPlan::kRoles; ++k) (inner ? p.inner_strides : p.outer_strides)[k][r] = s[k];
        ++r;
        (inner ? p.len : p.rows) *= n;
    }
};

void plan_rows_softmax(OpCall& call, const void* params) {
    GradPlan& p = call.grad();
    const SoftmaxParams prm = read_softmax_params(call, params);
    const int axis = prm.axis;
    p.scale = prm.scale;
    const TensorArg& y = call.inputs[0];
    require_like(call, false, 1, y, "y's shape");
    require_like(call, true, 0, y, "y's shape");
    Builder b{p};
    p.rows = p.len = 1;
    for (int d = 0; d < y.rank; ++d) {
        int64_t s[GradPlan::kRoles] = {};
        s[R::kA] = y.strides[d];
        s[R::kG] = call.inputs[1].strides[d];
        s[R::kD] = call.outputs[0].strides[d];
        b.add(d == axis, y.shape[d], s);
    }
    p.offset[R::kA] = y.offset;
    p.offset[R::kG] = call.inputs[1].offset;
    p.offset[R::kD] = call.outputs[0].offset;
}

void plan_rows_norm(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    GradPlan& p = call.grad();
    const tgl_layer_norm_params prm = read_layer_norm_params(call, params);
    const TensorArg& x = call.inputs[0];
    p.eps = prm.eps;
    const int nn = int(prm.n_norm_dims), lead = x.rank - nn;
    require_like(call, false, 1, x, "x's shape");
    require_like(call, true, 0, x, "x's shape");
    const int64_t* pshape = x.shape + lead;
    p.has_gamma = call.inputs[2].present();
    if (p.has_gamma) require_shape(info, call.inputs[2], operand_label(info, false, 2), nn, pshape, "the normalized dims of x");
    for (uint32_t o = 1; o < call.outputs.size(); ++o) {
        if (!call.outputs[o].present()) continue;
        require_shape(info, call.outputs[o], operand_label(info, true, o), nn, pshape, "the normalized dims of x");
        (o == 1 ? p.has_dgamma : p.has_dbeta) = true;
    }
    Builder b{p};
    p.rows = p.len = 1;
    int64_t e_stride[TGL_MAX_RANK];
    int64_t e = 1;
    for (int d = x.rank - 1; d >= lead; --d) {
        e_stride[d] = e;
        e *= x.shape[d];
    }
    for (int d = 0; d < x.rank; ++d) {
        int64_t s[GradPlan::kRoles] = {};
        s[R::kA] = x.strides[d];
        s[R::kG] = call.inputs[1].strides[d];
        s[R::kD] = call.outputs[0].strides[d];
        if (d >= lead) s[R::kP] = e_stride[d];
        b.add(d >= lead, x.shape[d], s);
    }
    p.offset[R::kA] = x.offset;
    p.offset[R::kG] = call.inputs[1].offset;
    p.offset[R::kD] = call.outputs[0].offset;
}

void plan_cross_entropy(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    GradPlan& p = call.grad();
    tgl_cross_entropy_params prm =
        read_params(info, params, tgl_cross_entropy_params{sizeof(tgl_cross_entropy_params), TGL_REDUCTION_MEAN, -100, 0.0f});
    if (prm.reduction > TGL_REDUCTION_SUM)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->reduction of op '%s' must be TGL_REDUCTION_NONE (0), _MEAN (1) or _SUM (2), got %u", info.name,
             prm.reduction);
    if (!(prm.label_smoothing >= 0.0f && prm.label_smoothing <= 1.0f))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->label_smoothing of op '%s' must be in [0, 1], got %g", info.name,
             double(prm.label_smoothing));
    p.reduction = prm.reduction;
    p.ignore_index = prm.ignore_index;
    p.label_smoothing = prm.label_smoothing;
    const TensorArg& z = call.inputs[0];
    const TensorArg& t = call.inputs[1];
    if (z.rank < 1)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[0] (logits) must have shape (C) or (N, C, d...), got a rank-0 tensor",
             info.name);
    const int cdim = z.rank == 1 ? 0 : 1;
    int64_t tshape[TGL_MAX_RANK];
    int tr = 0;
    for (int d = 0; d < z.rank; ++d)
        if (d != cdim) tshape[tr++] = z.shape[d];
    require_shape(info, t, operand_label(info, false, 1), tr, tshape, "logits' shape without the class dim 1");
    const bool backward = info.op == TGL_OP_CROSS_ENTROPY_BACKWARD;
    const TensorArg& l = backward ? call.inputs[2] : call.outputs[0];
    const std::string l_label = backward ? operand_label(info, false, 2) : operand_label(info, true, 0);
    if (p.reduction == TGL_REDUCTION_NONE)
        require_shape(info, l, l_label, tr, tshape, "reduction none (the target's shape)");
    else
        require_shape(info, l, l_label, 0, tshape, "reduction mean/sum (a scalar)");
    if (backward) require_like(call, true, 0, z, "logits' shape");
    if (z.shape[cdim] == 0 && t.numel > 0)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[0] (logits) of shape %s has 0 classes, so no target can be valid",
             info.name, shape_string(z.rank, z.shape).c_str());
    Builder b{p};
    p.rows = p.len = 1;
    int td = 0;
    for (int d = 0; d < z.rank; ++d) {
        int64_t s[GradPlan::kRoles] = {};
        s[R::kA] = z.strides[d];
        if (backward) s[R::kD] = call.outputs[0].strides[d];
        if (d != cdim) {
            s[R::kT] = t.strides[td];
            if (p.reduction == TGL_REDUCTION_NONE) s[R::kL] = l.strides[td];
            ++td;
        }
        b.add(d == cdim, z.shape[d], s);
    }
    p.offset[R::kA] = z.offset;
    p.offset[R::kT] = t.offset;
    p.offset[R::kL] = l.offset;
    if (backward) p.offset[R::kD] = call.outputs[0].offset;
}

void plan_embedding(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    GradPlan& p = call.grad();
    tgl_embedding_backward_params prm =
        read_params(info, params, tgl_embedding_backward_params{sizeof(tgl_embedding_backward_params), 0, -1, 0});
    require_reserved_zero(info, prm.reserved);
    const TensorArg& dy = call.inputs[0];
    const TensorArg& index = call.inputs[1];
    const TensorArg& dw = call.outputs[0];
    if (dw.rank != 2)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': outputs[0] (dW) must have shape (V, D), got %s", info.name,
             shape_string(dw.rank, dw.shape).c_str());
    if (index.rank >= TGL_MAX_RANK)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[1] (index) has rank %d; at most %d (dy adds one dim)", info.name,
             index.rank, TGL_MAX_RANK - 1);
    int64_t dshape[TGL_MAX_RANK];
    std::copy(index.shape, index.shape + index.rank, dshape);
    dshape[index.rank] = dw.shape[1];
    require_shape(info, dy, operand_label(info, false, 0), index.rank + 1, dshape, "index's shape + (D,) (D from dW)");
    if (prm.has_padding_idx > 1)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->has_padding_idx of op '%s' must be 0 or 1, got %u", info.name,
             prm.has_padding_idx);
    p.vocab = dw.shape[0];
    if (prm.has_padding_idx && (prm.padding_idx < 0 || prm.padding_idx >= p.vocab))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->padding_idx of op '%s' must be in [0, %lld) (V, dW's dim 0), got %d",
             info.name, (long long)p.vocab, prm.padding_idx);
    if (p.vocab == 0 && index.numel > 0)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': outputs[0] (dW) has V = 0 rows, so no index can be valid", info.name);
    p.has_padding = prm.has_padding_idx != 0;
    p.padding_idx = prm.padding_idx;
    Builder b{p};
    p.rows = p.len = 1;
    for (int d = 0; d <= index.rank; ++d) {
        int64_t s[GradPlan::kRoles] = {};
        s[R::kA] = dy.strides[d];
        if (d < index.rank) s[R::kT] = index.strides[d];
        b.add(d == index.rank, dy.shape[d], s);
    }
    p.offset[R::kA] = dy.offset;
    p.offset[R::kT] = index.offset;
    p.dw_strides[0] = dw.strides[0];
    p.dw_strides[1] = dw.strides[1];
    p.dw_offset = dw.offset;
}

}  // namespace

void plan_grad(OpCall& call, const void* params) {
    call.plan.emplace<GradPlan>();
    switch (call.info->op) {
    case TGL_OP_SOFTMAX_BACKWARD:
    case TGL_OP_LOG_SOFTMAX_BACKWARD: plan_rows_softmax(call, params); break;
    case TGL_OP_LAYER_NORM_BACKWARD:
    case TGL_OP_RMS_NORM_BACKWARD: plan_rows_norm(call, params); break;
    case TGL_OP_CROSS_ENTROPY:
    case TGL_OP_CROSS_ENTROPY_BACKWARD: plan_cross_entropy(call, params); break;
    case TGL_OP_EMBEDDING_BACKWARD: plan_embedding(call, params); break;
    case TGL_OP_CUMSUM_BACKWARD:
        // dx[j] = sum of dy[i] over the i whose y[i] included x[j]: the same scan, other direction.
        require_like(call, true, 0, call.inputs[0], "dy's shape");  // before the Scan plan, whose message says x / y
        plan_scan_for(call, params);
        call.scan().reverse = !call.scan().reverse;
        break;
    default: fail(TGL_ERROR_INTERNAL, "op '%s' has no plan in family Grad", call.info->name);
    }
}

void register_grad_rules(std::vector<FamilyRules>& families) { families.push_back({OpFamily::Grad, plan_grad}); }

}  // namespace tgl
