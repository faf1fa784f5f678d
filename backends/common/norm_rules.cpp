#include "norm_rules.h"
#include "op_families.h"

#include "validate_util.h"

#include <cmath>
#include <vector>

namespace tgl {

namespace {

// One dim of the row plan: size, strides per role, and whether it indexes within a row.
struct PDim {
    int64_t n = 1;
    int64_t strides[NormPlan::kRoles] = {};
    bool inner = false;
};

void require_eps(const OpInfo& info, float eps) {
    if (!(eps >= 0.0f) || std::isinf(eps))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->eps of op '%s' must be a finite number >= 0, got %g", info.name,
             double(eps));
}

// An operand that must have exactly x's shape (residual, sum, y).
void require_x_shape(const OpCall& call, bool output, uint32_t index) {
    const TensorArg& t = output ? call.outputs[index] : call.inputs[index];
    const TensorArg& x = call.inputs[0];
    require_shape(*call.info, t, operand_label(*call.info, output, index), x.rank, x.shape, "x's shape");
}

}  // namespace

SoftmaxParams read_softmax_params(const OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    tgl_softmax_params prm = read_params(info, params, tgl_softmax_params{sizeof(tgl_softmax_params), -1, 1.0f, 0});
    require_reserved_zero(info, prm.reserved);
    if (!std::isfinite(prm.scale))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->scale of op '%s' must be a finite number, got %g", info.name,
             double(prm.scale));
    return {one_axis(call, prm.axis), prm.scale};
}

tgl_layer_norm_params read_layer_norm_params(const OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const TensorArg& x = call.inputs[0];
    tgl_layer_norm_params prm = read_params(info, params, tgl_layer_norm_params{sizeof(tgl_layer_norm_params), 1, 1e-5f, 0});
    require_reserved_zero(info, prm.reserved);
    require_eps(info, prm.eps);
    if (prm.n_norm_dims < 1 || prm.n_norm_dims > uint32_t(x.rank))
        fail(TGL_ERROR_AXIS_OUT_OF_RANGE, "params->n_norm_dims of op '%s' must be in 1..%d (the rank of x, shape %s), got %u",
             info.name, x.rank, shape_string(x.rank, x.shape).c_str(), prm.n_norm_dims);
    return prm;
}

void plan_norm(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const tgl_op op = info.op;
    NormPlan& p = call.plan.emplace<NormPlan>();
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    const bool softmax = op == TGL_OP_SOFTMAX || op == TGL_OP_LOG_SOFTMAX;
    const bool add = op == TGL_OP_ADD_LAYER_NORM || op == TGL_OP_ADD_RMS_NORM;

    // ---- params ----
    int axis = -1;                 // softmax
    uint32_t n_norm_dims = 0;      // layer/rms norms
    uint32_t groups = 0;           // group_norm
    if (softmax) {
        const SoftmaxParams prm = read_softmax_params(call, params);
        axis = prm.axis;
        p.scale = prm.scale;
        p.log = op == TGL_OP_LOG_SOFTMAX;
    } else if (op == TGL_OP_GROUP_NORM) {
        if (!params)
            fail(TGL_ERROR_NULL_POINTER, "op 'group_norm' needs params (tgl_group_norm_params): num_groups has no default");
        tgl_group_norm_params prm = read_params(info, params, tgl_group_norm_params{});
        require_reserved_zero(info, prm.reserved);
        require_eps(info, prm.eps);
        groups = prm.num_groups;
        p.eps = prm.eps;
    } else if (op == TGL_OP_BATCH_NORM) {
        tgl_batch_norm_params prm = read_params(info, params, tgl_batch_norm_params{sizeof(tgl_batch_norm_params), 1e-5f});
        require_eps(info, prm.eps);
        p.eps = prm.eps;
    } else {
        const tgl_layer_norm_params prm = read_layer_norm_params(call, params);
        n_norm_dims = prm.n_norm_dims;
        p.eps = prm.eps;
    }
    if ((op == TGL_OP_GROUP_NORM || op == TGL_OP_BATCH_NORM) && x.rank < 2)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s' takes x of shape (N, C, ...) (rank >= 2), got %s", info.name,
             shape_string(x.rank, x.shape).c_str());
    if (op == TGL_OP_GROUP_NORM && (groups == 0 || x.shape[1] % groups != 0))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->num_groups of op 'group_norm' must divide the %lld channels of x (shape %s), got %u",
             (long long)x.shape[1], shape_string(x.rank, x.shape).c_str(), groups);

    // ---- shapes of the operands ----
    require_x_shape(call, true, 0);
    if (add) {
        require_x_shape(call, false, 1);
        if (call.outputs[1].present()) require_x_shape(call, true, 1);
    }
    // Params: their input slots and the shape they must have.
    int64_t pshape[TGL_MAX_RANK];
    int prank = 0;
    if (op == TGL_OP_GROUP_NORM || op == TGL_OP_BATCH_NORM) {
        pshape[0] = x.shape[1];
        prank = 1;
    } else if (!softmax) {
        prank = int(n_norm_dims);
        for (int d = 0; d < prank; ++d) pshape[d] = x.shape[x.rank - prank + d];
    }
    int first_param = add ? 2 : 1;
    switch (op) {
    case TGL_OP_LAYER_NORM:
    case TGL_OP_GROUP_NORM:
    case TGL_OP_ADD_LAYER_NORM:
        p.param_input[NormPlan::kGamma] = first_param;
        p.param_input[NormPlan::kBeta] = first_param + 1;
        break;
    case TGL_OP_RMS_NORM:  // beta since ABI 1.3 (an older host passes 2 inputs)
        p.param_input[NormPlan::kGamma] = 1;
        p.param_input[NormPlan::kBeta] = 2;
        break;
    case TGL_OP_ADD_RMS_NORM: p.param_input[NormPlan::kGamma] = first_param; break;
    case TGL_OP_BATCH_NORM:
        p.param_input[NormPlan::kMean] = 1;
        p.param_input[NormPlan::kVar] = 2;
        p.param_input[NormPlan::kGamma] = 3;
        p.param_input[NormPlan::kBeta] = 4;
        break;
    default: break;
    }
    const char* why = op == TGL_OP_GROUP_NORM || op == TGL_OP_BATCH_NORM ? "the channels (dim 1) of x" : "the normalized dims of x";
    for (int& in : p.param_input) {
        if (in < 0) continue;
        if (size_t(in) >= call.inputs.size()) {  // an optional trailing operand not passed at all
            in = -1;
            continue;
        }
        const TensorArg& t = call.inputs[size_t(in)];
        if (!t.present()) {
            in = -1;
            continue;
        }
        require_shape(info, t, operand_label(info, false, uint32_t(in)), prank, pshape, why);
    }
    p.param_len = 1;
    for (int d = 0; d < prank; ++d) p.param_len *= pshape[d];

    // ---- the row plan ----
    std::vector<PDim> dims;
    int64_t mask_strides[TGL_MAX_RANK] = {};
    p.has_r = call.inputs.size() > 1 && call.inputs[1].present() && (softmax || add);
    p.has_s = add && call.outputs[1].present();
    if (softmax && p.has_r) broadcast_strides(call.inputs[1], operand_label(info, false, 1), x, mask_strides);
    int64_t e_stride = 1;  // layer norms: row-major strides of the normalized shape
    for (int d = x.rank - 1; d >= 0; --d) {
        PDim pd;
        pd.n = x.shape[d];
        pd.strides[NormPlan::kX] = x.strides[d];
        pd.strides[NormPlan::kY] = y.strides[d];
        if (p.has_r) pd.strides[NormPlan::kR] = softmax ? mask_strides[d] : call.inputs[1].strides[d];
        if (p.has_s) pd.strides[NormPlan::kS] = call.outputs[1].strides[d];
        if (softmax) {
            pd.inner = d == axis;
        } else if (op == TGL_OP_BATCH_NORM) {
            if (d == 1) pd.strides[NormPlan::kE] = 1;
        } else if (op == TGL_OP_GROUP_NORM) {
            pd.inner = d >= 1;
            if (d == 1) {
                // C splits into (G outer, C / G inner).
                const int64_t cg = x.shape[1] / groups;
                pd.n = cg;
                pd.strides[NormPlan::kE] = 1;
                PDim g = pd;
                g.n = groups;
                g.inner = false;
                for (int64_t& s : g.strides) s *= cg;
                dims.push_back(pd);
                dims.push_back(g);
                continue;
            }
        } else {
            pd.inner = d >= x.rank - int(n_norm_dims);
            if (pd.inner) {
                pd.strides[NormPlan::kE] = e_stride;
                e_stride *= x.shape[d];
            }
        }
        dims.push_back(pd);
    }
    p.rows = 1;
    p.len = 1;
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {  // back to x's dim order
        int& r = it->inner ? p.inner_rank : p.outer_rank;
        (it->inner ? p.inner_shape : p.outer_shape)[r] = it->n;
        for (int k = 0; k < NormPlan::kRoles; ++k) (it->inner ? p.inner_strides : p.outer_strides)[k][r] = it->strides[k];
        ++r;
        (it->inner ? p.len : p.rows) *= it->n;
    }
    p.offset[NormPlan::kX] = x.offset;
    p.offset[NormPlan::kY] = y.offset;
    if (p.has_r) p.offset[NormPlan::kR] = call.inputs[1].offset;
    if (p.has_s) p.offset[NormPlan::kS] = call.outputs[1].offset;
}

void register_norm_rules(std::vector<FamilyRules>& families) { families.push_back({OpFamily::Normalize, plan_norm}); }

}  // namespace tgl
