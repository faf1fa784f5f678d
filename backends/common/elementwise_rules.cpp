// Shape rules, params and index plan of the elementwise families (Unary, Binary, Ternary).
#include "validate.h"
#include "op_families.h"

#include "dim_merge.h"
#include "status.h"
#include "validate_util.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace tgl {

namespace {

// Drops size-1 dims and merges dims that are contiguous for every operand.
void collapse(ElementwisePlan& p) {
    int64_t* strides[ElementwisePlan::kMaxOperands];
    for (int k = 0; k < p.n_operands; ++k) strides[k] = p.strides[k];
    p.rank = merge_dims_in_place(p.rank, p.shape, p.n_operands, strides);
}

}  // namespace

void plan_elementwise(OpCall& call, const void*) {
    const OpInfo& info = *call.info;
    const TensorArg& y = call.outputs[0];
    ElementwisePlan& p = call.elementwise();
    p.n_operands = 1 + int(call.inputs.size());
    p.rank = y.rank;
    p.numel = y.numel;
    for (int d = 0; d < y.rank; ++d) { p.shape[d] = y.shape[d]; p.strides[0][d] = y.strides[d]; }
    p.offset[0] = y.offset;
    if (info.family == OpFamily::Unary) {
        const TensorArg& x = call.inputs[0];
        if (x.rank != y.rank || !std::equal(x.shape, x.shape + x.rank, y.shape))
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': output y has shape %s but input x has shape %s",
                 info.name, shape_string(y.rank, y.shape).c_str(), shape_string(x.rank, x.shape).c_str());
    } else {
        // The output shape must be exactly the broadcast of the inputs.
        int rank = 0;
        for (const TensorArg& in : call.inputs) rank = std::max(rank, in.rank);
        int64_t expect[TGL_MAX_RANK];
        std::fill(expect, expect + rank, int64_t(1));
        for (size_t i = 0; i < call.inputs.size(); ++i) {
            const TensorArg& in = call.inputs[i];
            for (int d = 0; d < rank; ++d) {
                int di = d - (rank - in.rank);
                int64_t n = di >= 0 ? in.shape[di] : 1;
                if (n == expect[d] || n == 1) continue;
                if (expect[d] != 1) {
                    std::string shapes;
                    for (size_t k = 0; k <= i; ++k)
                        shapes += format("%s%s of shape %s", k ? (k == i ? " and " : ", ") : "",
                                         info.operand_names[k], shape_string(call.inputs[k].rank, call.inputs[k].shape).c_str());
                    fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s do not broadcast (dim %d of the result: %lld vs %lld)",
                         info.name, shapes.c_str(), d, (long long)expect[d], (long long)n);
                }
                expect[d] = n;
            }
        }
        if (rank != y.rank || !std::equal(expect, expect + rank, y.shape)) {
            std::string names;  // built only for the message
            for (size_t k = 0; k < call.inputs.size(); ++k)
                names += format("%s%s", k ? (k + 1 == call.inputs.size() ? " and " : ", ") : "", info.operand_names[k]);
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': output y has shape %s but %s broadcast to %s",
                 info.name, shape_string(y.rank, y.shape).c_str(), names.c_str(), shape_string(rank, expect).c_str());
        }
    }
    for (size_t i = 0; i < call.inputs.size(); ++i) {
        char label[96];  // short enough for std::string's inline storage: no allocation
        broadcast_strides(call.inputs[i], operand_label_into(label, sizeof label, info, false, uint32_t(i)), y,
                          p.strides[i + 1]);
        p.offset[i + 1] = call.inputs[i].offset;
    }
    collapse(p);
}

// Reads the params of a Unary/Binary/Ternary op into the call (gelu form, scalars).
void read_elementwise_params(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    ElementwisePlan& plan = call.plan.emplace<ElementwisePlan>();
    switch (info.op) {
    case TGL_OP_GELU: {
        tgl_gelu_params prm = read_params(info, params, tgl_gelu_params{sizeof(tgl_gelu_params), TGL_GELU_ERF});
        if (prm.approximate != TGL_GELU_ERF && prm.approximate != TGL_GELU_TANH)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->approximate of op 'gelu' must be TGL_GELU_ERF (0) or TGL_GELU_TANH (1), got %u",
                 prm.approximate);
        plan.gelu_approximate = prm.approximate;
        return;
    }
    case TGL_OP_LEAKY_RELU:
        plan.scalars[0] = read_params(info, params, tgl_leaky_relu_params{sizeof(tgl_leaky_relu_params), 0.01f}).negative_slope;
        return;
    case TGL_OP_ELU:
    case TGL_OP_CELU: {
        float alpha = read_params(info, params, tgl_elu_params{sizeof(tgl_elu_params), 1.0f}).alpha;
        if (info.op == TGL_OP_CELU && alpha == 0.0f)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->alpha of op 'celu' must not be 0 (celu divides by it)");
        plan.scalars[0] = alpha;
        return;
    }
    case TGL_OP_SOFTPLUS: {
        tgl_softplus_params prm = read_params(info, params, tgl_softplus_params{sizeof(tgl_softplus_params), 1.0f, 20.0f, 0});
        require_reserved_zero(info, prm.reserved);
        if (prm.beta == 0.0f || std::isnan(prm.beta))
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->beta of op 'softplus' must be a nonzero number, got %g", double(prm.beta));
        plan.scalars[0] = prm.beta;
        plan.scalars[1] = prm.threshold;
        return;
    }
    case TGL_OP_CLAMP: {
        const float inf = std::numeric_limits<float>::infinity();
        tgl_clamp_params prm = read_params(info, params, tgl_clamp_params{sizeof(tgl_clamp_params), -inf, inf, 0});
        require_reserved_zero(info, prm.reserved);
        if (std::isnan(prm.min) || std::isnan(prm.max))
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->min and params->max of op 'clamp' must not be NaN (got %g, %g); use -inf/+inf for no bound",
                 double(prm.min), double(prm.max));
        plan.scalars[0] = prm.min;
        plan.scalars[1] = prm.max;
        return;
    }
    default:
        if (info.params_size == sizeof(tgl_unary_params))  // tgl_unary_params and tgl_binary_params
            require_reserved_zero(info, read_params(info, params, tgl_unary_params{sizeof(tgl_unary_params), 0}).reserved);
        return;
    }
}

void register_elementwise_rules(std::vector<FamilyRules>& families) {
    families.push_back({OpFamily::Unary, plan_elementwise, read_elementwise_params, true});
    families.push_back({OpFamily::Binary, plan_elementwise, read_elementwise_params, true});
    families.push_back({OpFamily::Ternary, plan_elementwise, read_elementwise_params, true});
}

}  // namespace tgl
