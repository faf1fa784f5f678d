// Shape rules and index plan of the Pool family (pooling 1d/2d/3d, global and adaptive pooling, upsampling, pooling backward).
// Included by validate.h; plan_pool() is called by validate_op() for every op of the family.
//
// Every op maps between a "big" tensor X (x of the forward ops, dx of the backward ops) of shape
// (N, C, in...) and a "small" one Y (y, or dy) of shape (N, C, out...) (upsampling: y is the
// larger one, the names keep their roles: X is read, Y written). The 1 to 3 spatial dims are
// right-aligned into 3 (a 2d op has dim 0 of size 1, kernel 1, stride 1, no padding), so that
// one set of loops serves 1d, 2d and 3d.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct PoolPlan {
    enum Kind { kMaxPool, kAvgPool, kGlobalMax, kGlobalAvg, kAdaptiveAvg, kNearest, kBilinear, kMaxPoolBwd, kAvgPoolBwd,
                kAdaptiveAvgBwd };
    // Roles: X (x / dx), Y (y / dy), I (indices; absent: all 0).
    enum Role { kX, kY, kI, kRoles };
    Kind kind = kMaxPool;
    int spatial = 0;  // 1, 2 or 3
    int64_t N = 0, C = 0;
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};  // X's and Y's spatial sizes (right-aligned)
    int32_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, pad_begin[3] = {}, pad_end[3] = {}, dilation[3] = {1, 1, 1};
    bool ceil_mode = false, count_include_pad = false;
    bool has_indices = false;
    bool align_corners = false;
    // Upsampling: the f32 source step per dim (nearest: src = floor(dst * scale); bilinear:
    // align_corners ? dst * scale : (dst + 0.5) * scale - 0.5).
    float scale[3] = {0.0f, 0.0f, 0.0f};
    // Element strides of each role over (n, c) and the 3 spatial dims; offsets of element 0.
    int64_t stride_n[kRoles] = {}, stride_c[kRoles] = {};
    int64_t stride_sp[kRoles][3] = {};
    int64_t offset[kRoles] = {};
};

void plan_pool(OpCall& call, const void* params);

}  // namespace tgl
