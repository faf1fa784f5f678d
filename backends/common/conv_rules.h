// Shape rules and index plan of the Conv family (convolution 1d/2d/3d, transposed convolution, conv2d backward).
// Included by validate.h; plan_conv() is called by validate_op() for every op of the family.
//
// Every op is planned as one of three index relations between a "small-side" tensor x (spatial
// extent `in`) and a "large-side" tensor y (extent `out`), always in 3 spatial dims (D, H, W; a
// 1d/2d op has leading dims of size 1) and with channels-first logical strides (a channels-last
// view is the same tensor with permuted strides):
//   Forward     y[n, cy, o] = sum_{cx, j} x[n, cx, o*stride - pad + j*dil] * w(cy, cx, j)   (convNd)
//   Transposed  y[n, cy, o] = sum_{cx, j: o = i*stride - pad + j*dil} x[n, cx, i] * w(cy, cx, j)
//               (conv_transposeNd; conv2d_backward_input with x = dy, y = dx)
//   WeightGrad  w(cy, cx, j) = sum_{n, o} y[n, cy, o] * x[n, cx, o*stride - pad + j*dil]
//               (conv2d_backward_weight with x = x, y = dy, w = dw, bias = db)
// cx / cy run over one group's channels; w(cy, cx, j) is at w_off + g*w_g + cy*w_m + cx*w_c +
// j . ws (the three per-op weight layouts folded into w_m, w_c, w_g).
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct ConvPlan {
    enum Mode { Forward, Transposed, WeightGrad };
    Mode mode = Forward;
    int64_t batch = 0, groups = 1;
    int64_t cx = 0, cy = 0;  // channels per group of x and of y
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1};
    int64_t stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1}, pad[3] = {0, 0, 0};  // pad: the begin side
    // Element strides: x and y (n, c, d, h, w), w per local y channel, local x channel, group and
    // kernel dim; bias (c). Offsets of element 0.
    int64_t xs[5] = {}, ys[5] = {}, ws[3] = {}, w_m = 0, w_c = 0, w_g = 0, bs = 0;
    int64_t x_off = 0, y_off = 0, w_off = 0, b_off = 0;
    // Operand slots of x, y, w and bias (bias: -1 when absent); outputs are marked by is_out.
    int x_slot = 0, y_slot = 0, w_slot = 1, b_slot = -1;
    bool y_is_out = true, w_is_out = false;
    uint32_t activation = TGL_ACTIVATION_NONE;
};

void plan_conv(OpCall& call, const void* params);

}  // namespace tgl
