// Shape rules of the reduction families, called by validate_op(): Reduce (sum .. norm over a set
// of axes) and ArgReduce (argmax, argmin), whose plan is call.reduce(), and Scan (cumsum, cumprod),
// whose plan is call.scan(). plan_scan_for (validate.h) plans cumsum_backward as a scan.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

// Reductions: y[outer] = reduce over inner of x[outer, inner]. Outer dims are the kept dims in
// order; inner dims are the reduced ones (argmax/argmin: the one axis).
struct ReducePlan {
    int64_t out_count = 0, reduce_count = 0;
    int outer_rank = 0;
    int64_t outer_shape[TGL_MAX_RANK] = {};
    int64_t outer_x_strides[TGL_MAX_RANK] = {};
    int64_t outer_y_strides[TGL_MAX_RANK] = {};
    int inner_rank = 0;
    int64_t inner_shape[TGL_MAX_RANK] = {};
    int64_t inner_x_strides[TGL_MAX_RANK] = {};
    int64_t x_offset = 0, y_offset = 0;
    // var/std: the correction (Bessel's 1 by default). norm: ord 1 or 2.
    float correction = 1.0f;
    int norm_ord = 2;
    // argmax/argmin: the last index among tied extremes (and the last NaN) instead of the first.
    bool select_last = false;
};

// Scans (cumsum/cumprod, and cumsum_backward of the Grad family): rows.inner_* is the scanned axis
// (inner_rank 1, or 0 when the axis has size 1), rows.outer_* the other dims (one row each).
struct ScanPlan {
    ReducePlan rows;
    int64_t y_stride = 0;  // y's stride along the axis
    bool exclusive = false, reverse = false;
};

void plan_reduce(OpCall& call, const void* params);
void plan_arg_reduce(OpCall& call, const void* params);
void plan_scan(OpCall& call, const void* params);

}  // namespace tgl
