#include "select_rules.h"
#include "op_families.h"

#include "validate_util.h"

namespace tgl {

void plan_select(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const bool topk = info.op == TGL_OP_TOPK;
    // NULL params: the last axis; sort/argsort ascending, topk largest (descending).
    tgl_sort_params prm = read_params(info, params, tgl_sort_params{sizeof(tgl_sort_params), -1, topk ? 1u : 0u, 0});
    require_reserved_zero(info, prm.reserved);
    if (prm.descending > 1)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->descending of op '%s' must be 0 or 1, got %u", info.name,
             prm.descending);
    const TensorArg& x = call.inputs[0];
    const int axis = one_axis(call, prm.axis);  // -1 for a rank-0 x: one row of one element
    SelectPlan& p = call.plan.emplace<SelectPlan>();
    p.descending = prm.descending != 0;
    p.has_values = info.op != TGL_OP_ARGSORT;
    p.n = axis >= 0 ? x.shape[axis] : 1;
    if (p.n - 1 > INT32_MAX)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "op '%s': x has %lld elements along params->axis = %d, but i32 indices reach at most 2147483647",
             info.name, (long long)p.n, prm.axis);

    const TensorArg& first = call.outputs[0];
    const std::string first_label = operand_label(info, true, 0);
    if (topk) {
        // values: x's shape with k along the axis, 0 <= k <= n.
        bool ok = first.rank == x.rank;
        for (int d = 0; ok && d < x.rank; ++d) ok = d == axis || first.shape[d] == x.shape[d];
        if (!ok)
            fail(TGL_ERROR_SHAPE_MISMATCH,
                 "op 'topk': %s has shape %s but x has shape %s; values must have x's shape except along "
                 "params->axis = %d (k)",
                 first_label.c_str(), shape_string(first.rank, first.shape).c_str(),
                 shape_string(x.rank, x.shape).c_str(), prm.axis);
        p.k = axis >= 0 ? first.shape[axis] : 1;
        if (p.k > p.n)
            fail(TGL_ERROR_SHAPE_MISMATCH,
                 "op 'topk': k = %lld (the size of %s along params->axis = %d) is larger than x's %lld elements "
                 "along that axis",
                 (long long)p.k, first_label.c_str(), prm.axis, (long long)p.n);
    } else {
        require_shape(info, first, first_label, x.rank, x.shape, "x's shape");
        p.k = p.n;
    }
    const TensorArg* values = p.has_values ? &call.outputs[0] : nullptr;
    const TensorArg& indices = call.outputs[p.has_values ? 1 : 0];
    if (values)
        require_shape(info, indices, operand_label(info, true, 1), values->rank, values->shape,
                      "outputs[0] (values)");

    p.rows = 1;
    p.outer_rank = 0;
    for (int d = 0; d < x.rank; ++d) {
        if (d == axis) {
            p.x_stride = x.strides[d];
            p.v_stride = values ? values->strides[d] : 0;
            p.i_stride = indices.strides[d];
            continue;
        }
        const int o = p.outer_rank++;
        p.outer_shape[o] = x.shape[d];
        p.outer_x_strides[o] = x.strides[d];
        p.outer_v_strides[o] = values ? values->strides[d] : 0;
        p.outer_i_strides[o] = indices.strides[d];
        p.rows *= x.shape[d];
    }
    p.x_offset = x.offset;
    p.v_offset = values ? values->offset : 0;
    p.i_offset = indices.offset;
}

void register_select_rules(std::vector<FamilyRules>& families) { families.push_back({OpFamily::Select, plan_select}); }

}  // namespace tgl
