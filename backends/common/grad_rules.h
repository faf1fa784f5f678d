// Shape rules and index plan of the Grad family (training: backward of softmax/log_softmax/layer_norm/rms_norm/cumsum/embedding, cross-entropy).
// Included by validate.h; plan_grad() is called by validate_op() for every op of the family.
//
// Every op but cumsum_backward (which is planned as a scan: call.reduce, see plan_scan_for) is
// "rows": a row is `len` elements reduced together, rows are indexed by the outer dims, elements
// by the inner dims (row-major over each), each operand role with its own strides:
//   softmax/log_softmax_backward   outer: every dim but the axis; inner: the axis
//   layer/rms_norm_backward        outer: leading dims; inner: the last n_norm_dims dims
//   cross_entropy(_backward)       outer: every dim of logits but dim 1 (the target's dims);
//                                  inner: dim 1 (the classes)
//   embedding_backward             outer: the index's dims (tokens); inner: D
// Roles: a = first float input (y, x, logits, dy of embedding_backward), g = dy (softmax, norms),
// d = the row output (dx, dlogits), p = gamma's coordinate (row-major over the normalized dims),
// t = target / index (outer strides only), l = loss (reduction none) / dloss (outer only).
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct GradPlan {
    enum Role { kA, kG, kD, kP, kT, kL, kRoles };

    int64_t rows = 0, len = 0;
    int outer_rank = 0, inner_rank = 0;
    int64_t outer_shape[TGL_MAX_RANK] = {};
    int64_t inner_shape[TGL_MAX_RANK] = {};
    int64_t outer_strides[kRoles][TGL_MAX_RANK] = {};
    int64_t inner_strides[kRoles][TGL_MAX_RANK] = {};
    int64_t offset[kRoles] = {};  // element offsets of element (0, ..., 0); p: 0

    float scale = 1.0f;  // softmax backward
    float eps = 1e-5f;   // norms
    bool has_gamma = false, has_dgamma = false, has_dbeta = false;

    // cross_entropy
    uint32_t reduction = TGL_REDUCTION_MEAN;
    int32_t ignore_index = -100;
    float label_smoothing = 0.0f;

    // embedding_backward: dW (V, D)
    int64_t vocab = 0;
    int64_t dw_strides[2] = {};
    int64_t dw_offset = 0;
    bool has_padding = false;
    int32_t padding_idx = -1;
};

void plan_grad(OpCall& call, const void* params);

}  // namespace tgl
