// Shape rules and index plan of the Normalize family (softmax, log_softmax, layer_norm, rms_norm, group_norm, batch_norm, add_layer_norm, add_rms_norm).
// Included by validate.h; plan_norm() is called by validate_op() for every op of the family.
//
// Every op of the family is "rows": a row is a set of `len` elements of x whose statistics
// (max and sum of exp, mean and variance, mean square) are computed, then every element of the
// row is normalized and stored. Rows are indexed by the outer dims, elements of a row by the
// inner dims (row-major over each):
//   softmax, log_softmax    outer: every dim but the axis; inner: the axis
//   layer_norm, rms_norm,   outer: the leading dims; inner: the last n_norm_dims dims
//   add_layer_norm, add_rms_norm
//   group_norm              x (N, C, *): outer (N, G); inner (C / G, *)
//   batch_norm              outer: every dim; inner: none (len 1, no statistics)
// Each operand role has its own strides over the outer and inner dims (0 where it broadcasts).
// The per-channel / per-normalized-element operands (gamma, beta, mean, var: "params") are
// addressed by a parameter coordinate E: a row-major index into the param's own shape, with E's
// strides over the outer and inner dims (param values live at E in a row-major copy).
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct NormPlan {
    // Operand roles with strides: x; r = mask (softmax) or residual (add_*); y; s = sum (add_*);
    // e = the parameter coordinate.
    enum Role { kX, kR, kY, kS, kE, kRoles };
    // Params in the order the kernels use them; -1 where absent or not taken by the op.
    enum Param { kGamma, kBeta, kMean, kVar, kParams };

    int64_t rows = 0, len = 0;
    int outer_rank = 0, inner_rank = 0;
    int64_t outer_shape[TGL_MAX_RANK] = {};
    int64_t inner_shape[TGL_MAX_RANK] = {};
    int64_t outer_strides[kRoles][TGL_MAX_RANK] = {};
    int64_t inner_strides[kRoles][TGL_MAX_RANK] = {};
    int64_t offset[kRoles] = {};  // element offsets of element (0, ..., 0); e: 0
    bool has_r = false, has_s = false;
    int param_input[kParams] = {-1, -1, -1, -1};  // index into call.inputs
    int64_t param_len = 0;  // elements of each param (they all have one shape)

    float scale = 1.0f;  // softmax
    float eps = 1e-5f;   // the norms
    bool log = false;    // log_softmax
};

// Reads the op's params, checks shapes against them and fills call.norm. Throws tgl::Error.
void plan_norm(OpCall& call, const void* params);

// Params shared with the backward ops of the Grad family, read and checked once for both:
// tgl_softmax_params (axis of inputs[0], normalised; finite scale) and tgl_layer_norm_params
// (eps finite and >= 0, n_norm_dims in 1..rank of inputs[0]). NULL params give the defaults.
struct SoftmaxParams {
    int axis;  // -1 for a rank-0 x
    float scale;
};
SoftmaxParams read_softmax_params(const OpCall& call, const void* params);
tgl_layer_norm_params read_layer_norm_params(const OpCall& call, const void* params);

}  // namespace tgl
