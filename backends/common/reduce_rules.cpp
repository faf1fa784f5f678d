// Shape rules and index plans of the reduction families: Reduce (sum .. norm over a set of axes),
// ArgReduce (argmax, argmin along one axis) and Scan (cumsum, cumprod).
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

// The axes part shared by tgl_reduce_params, tgl_var_params and tgl_vector_norm_params (one
// layout; the last member differs).
struct AxesParams {
    uint32_t keepdims = 0, n_axes = 0;
    int32_t axes[TGL_MAX_RANK] = {};
};

template <class P>
AxesParams axes_of(const P& p) {
    AxesParams a;
    a.keepdims = p.keepdims;
    a.n_axes = p.n_axes;
    std::copy(p.axes, p.axes + TGL_MAX_RANK, a.axes);
    return a;
}

void plan_reduce_axes(OpCall& call, const AxesParams& prm);

}  // namespace

// Reduce family: reads the op's own params struct (tgl_reduce_params, or tgl_var_params for
// var/std, tgl_vector_norm_params for norm), then plans over its axes.
void plan_reduce(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    ReducePlan& plan = call.plan.emplace<ReducePlan>();
    switch (info.op) {
    case TGL_OP_VAR:
    case TGL_OP_STD: {
        tgl_var_params defaults{};
        defaults.struct_size = sizeof defaults;
        defaults.correction = 1.0f;
        tgl_var_params prm = read_params(info, params, defaults);
        if (!std::isfinite(prm.correction))
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->correction of op '%s' must be a finite number, got %g", info.name,
                 double(prm.correction));
        plan.correction = prm.correction;
        return plan_reduce_axes(call, axes_of(prm));
    }
    case TGL_OP_NORM: {
        tgl_vector_norm_params defaults{};
        defaults.struct_size = sizeof defaults;
        defaults.ord = 2.0f;
        tgl_vector_norm_params prm = read_params(info, params, defaults);
        if (prm.ord != 1.0f && prm.ord != 2.0f)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->ord of op 'norm' must be 1 or 2, got %g", double(prm.ord));
        plan.norm_ord = int(prm.ord);
        return plan_reduce_axes(call, axes_of(prm));
    }
    default: {
        tgl_reduce_params defaults{};
        defaults.struct_size = sizeof(tgl_reduce_params);
        tgl_reduce_params prm = read_params(info, params, defaults);
        require_reserved_zero(info, prm.reserved);
        return plan_reduce_axes(call, axes_of(prm));
    }
    }
}

void plan_arg_reduce(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    call.plan.emplace<ReducePlan>();
    tgl_arg_reduce_params prm = read_params(info, params, tgl_arg_reduce_params{sizeof(tgl_arg_reduce_params), -1, 0, 0, 0});
    require_reserved_zero(info, prm.reserved);
    if (prm.select_last_index > 1)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->select_last_index of op '%s' must be 0 or 1, got %u", info.name,
             prm.select_last_index);
    const TensorArg& x = call.inputs[0];
    int axis = one_axis(call, prm.axis);
    if (axis >= 0 && x.shape[axis] == 0)
        fail(TGL_ERROR_INVALID_ARGUMENT, "op '%s' over an empty axis has no result: params->axis = %d has size 0 in x of shape %s",
             info.name, prm.axis, shape_string(x.rank, x.shape).c_str());
    AxesParams a;
    a.keepdims = prm.keepdims;
    if (axis >= 0) {
        a.n_axes = 1;
        a.axes[0] = axis;
        plan_reduce_axes(call, a);
        call.reduce().select_last = prm.select_last_index != 0;
    } else {
        // rank 0: the output is the (rank-0) index 0 of the single element.
        const TensorArg& y = call.outputs[0];
        if (y.rank != 0)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': output y has shape %s but x is a scalar, so y must be a scalar",
                 info.name, shape_string(y.rank, y.shape).c_str());
        ReducePlan& p = call.reduce();
        p.x_offset = x.offset;
        p.y_offset = y.offset;
        p.out_count = 1;
        p.reduce_count = 1;
    }
}

void plan_scan(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    tgl_scan_params prm = read_params(info, params, tgl_scan_params{sizeof(tgl_scan_params), -1, 0, 0});
    if (prm.exclusive > 1 || prm.reverse > 1)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->exclusive and params->reverse of op '%s' must be 0 or 1, got %u and %u",
             info.name, prm.exclusive, prm.reverse);
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    int axis = one_axis(call, prm.axis);
    if (x.rank != y.rank || !std::equal(x.shape, x.shape + x.rank, y.shape))
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': output y has shape %s but input x has shape %s (a scan keeps the shape)",
             info.name, shape_string(y.rank, y.shape).c_str(), shape_string(x.rank, x.shape).c_str());
    ScanPlan& scan = call.plan.emplace<ScanPlan>();
    ReducePlan& p = scan.rows;
    p.x_offset = x.offset;
    p.y_offset = y.offset;
    p.reduce_count = 1;
    for (int d = 0; d < x.rank; ++d) {
        if (d == axis) {
            p.inner_shape[0] = x.shape[d];
            p.inner_x_strides[0] = x.strides[d];
            p.inner_rank = 1;
            p.reduce_count = x.shape[d];
            scan.y_stride = y.strides[d];
        } else {
            p.outer_shape[p.outer_rank] = x.shape[d];
            p.outer_x_strides[p.outer_rank] = x.strides[d];
            p.outer_y_strides[p.outer_rank++] = y.strides[d];
        }
    }
    p.out_count = 1;
    for (int d = 0; d < p.outer_rank; ++d) p.out_count *= p.outer_shape[d];
    scan.exclusive = prm.exclusive != 0;
    scan.reverse = prm.reverse != 0;
}

namespace {

void plan_reduce_axes(OpCall& call, const AxesParams& prm) {
    const OpInfo& info = *call.info;
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    if (prm.n_axes > TGL_MAX_RANK)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->n_axes is %u; at most %d axes can be given", prm.n_axes, TGL_MAX_RANK);
    bool reduced[TGL_MAX_RANK] = {};
    if (prm.n_axes == 0) {
        std::fill(reduced, reduced + x.rank, true);
    } else {
        for (uint32_t i = 0; i < prm.n_axes; ++i) {
            int axis = prm.axes[i];
            if (axis < -x.rank || axis >= x.rank)
                fail(TGL_ERROR_AXIS_OUT_OF_RANGE, "params->axes[%u] = %d is out of range for x of rank %d (valid: %d..%d)",
                     i, axis, x.rank, -x.rank, x.rank - 1);
            if (axis < 0) axis += x.rank;
            if (reduced[axis])
                fail(TGL_ERROR_AXIS_OUT_OF_RANGE, "params->axes[%u] = %d repeats axis %d", i, prm.axes[i], axis);
            reduced[axis] = true;
        }
    }
    int64_t expect[TGL_MAX_RANK];
    int er = 0;
    for (int d = 0; d < x.rank; ++d) {
        if (!reduced[d]) expect[er++] = x.shape[d];
        else if (prm.keepdims) expect[er++] = 1;
    }
    if (er != y.rank || !std::equal(expect, expect + er, y.shape))
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': output y has shape %s but reducing x of shape %s %s gives %s",
             info.name, shape_string(y.rank, y.shape).c_str(), shape_string(x.rank, x.shape).c_str(),
             prm.keepdims ? "with keepdims" : "without keepdims", shape_string(er, expect).c_str());
    ReducePlan& p = call.reduce();
    p.x_offset = x.offset;
    p.y_offset = y.offset;
    p.out_count = y.numel;
    p.reduce_count = 1;
    int yd = 0;
    for (int d = 0; d < x.rank; ++d) {
        if (reduced[d]) {
            p.inner_shape[p.inner_rank] = x.shape[d];
            p.inner_x_strides[p.inner_rank++] = x.strides[d];
            p.reduce_count *= x.shape[d];
            if (prm.keepdims) ++yd;
        } else {
            p.outer_shape[p.outer_rank] = x.shape[d];
            p.outer_x_strides[p.outer_rank] = x.strides[d];
            p.outer_y_strides[p.outer_rank++] = y.strides[yd++];
        }
    }
    if (p.out_count > 0 && p.reduce_count == 0 &&
        (info.op == TGL_OP_MAX || info.op == TGL_OP_MIN))
        fail(TGL_ERROR_INVALID_ARGUMENT, "op '%s' over an empty set of elements has no result: x has shape %s",
             info.name, shape_string(x.rank, x.shape).c_str());
}

}  // namespace

void plan_scan_for(OpCall& call, const void* params) { plan_scan(call, params); }

void register_reduce_rules(std::vector<FamilyRules>& families) {
    families.push_back({OpFamily::Reduce, plan_reduce});
    families.push_back({OpFamily::ArgReduce, plan_arg_reduce});
    families.push_back({OpFamily::Scan, plan_scan});
}

}  // namespace tgl
