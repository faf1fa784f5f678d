#include "conv_rules.h"
#include "op_families.h"

#include "validate_util.h"

namespace tgl {

namespace {

// An activation-like operand (x, y, dy, dx) as channels-first logical (N, C, D, H, W): sizes and
// element strides, whatever its layout (channels-last views have C as their last dim).
struct Act {
    int64_t n = 0, c = 0, sp[3] = {1, 1, 1};
    int64_t st[5] = {};
};

Act act_of(const OpCall& call, const TensorArg& t, const std::string& label, int S, bool last) {
    if (t.rank != S + 2)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s must have rank %d (%s), got shape %s", call.info->name, label.c_str(), S + 2,
             last ? (S == 1 ? "N, L, C" : S == 2 ? "N, H, W, C" : "N, D, H, W, C")
                  : (S == 1 ? "N, C, L" : S == 2 ? "N, C, H, W" : "N, C, D, H, W"),
             shape_string(t.rank, t.shape).c_str());
    Act a;
    const int cd = last ? S + 1 : 1;
    a.n = t.shape[0];
    a.st[0] = t.strides[0];
    a.c = t.shape[cd];
    a.st[1] = t.strides[cd];
    for (int d = 0; d < S; ++d) {
        const int td = last ? 1 + d : 2 + d;
        a.sp[3 - S + d] = t.shape[td];
        a.st[2 + 3 - S + d] = t.strides[td];
    }
    return a;
}

// The shape an activation-like operand of (n, c, spatial) has in the op's layout.
void act_shape(int S, bool last, int64_t n, int64_t c, const int64_t* sp3, int64_t* shape) {
    shape[0] = n;
    shape[last ? S + 1 : 1] = c;
    for (int d = 0; d < S; ++d) shape[last ? 1 + d : 2 + d] = sp3[3 - S + d];
}

}  // namespace

void plan_conv(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const tgl_op op = info.op;
    ConvPlan& p = call.plan.emplace<ConvPlan>();
    const int S = op == TGL_OP_CONV1D || op == TGL_OP_CONV_TRANSPOSE1D ? 1 : op == TGL_OP_CONV3D ? 3 : 2;
    const bool transposed = op == TGL_OP_CONV_TRANSPOSE1D || op == TGL_OP_CONV_TRANSPOSE2D;
    const bool bwd_in = op == TGL_OP_CONV2D_BACKWARD_INPUT, bwd_w = op == TGL_OP_CONV2D_BACKWARD_WEIGHT;

    // ---- params ----
    tgl_conv_params d{};
    d.struct_size = sizeof d;
    d.groups = 1;
    for (int i = 0; i < 3; ++i) d.stride[i] = d.dilation[i] = 1;
    const tgl_conv_params prm = read_params(info, params, d);
    require_reserved_zero(info, prm.reserved);
    if (prm.reserved2 != 0)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->reserved2 of op '%s' must be 0, got %u", info.name, prm.reserved2);
    require_activation(info, prm.activation);
    if ((bwd_in || bwd_w) && prm.activation != TGL_ACTIVATION_NONE)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->activation of op '%s' must be TGL_ACTIVATION_NONE (0), got %u", info.name,
             prm.activation);
    if (prm.layout > TGL_CONV_LAYOUT_CHANNELS_LAST)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->layout of op '%s' must be TGL_CONV_LAYOUT_CHANNELS_FIRST (0) or TGL_CONV_LAYOUT_CHANNELS_LAST (1), got %u",
             info.name, prm.layout);
    if (prm.padding_mode > TGL_CONV_PADDING_SAME)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->padding_mode of op '%s' must be TGL_CONV_PADDING_EXPLICIT (0) or TGL_CONV_PADDING_SAME (1), got %u",
             info.name, prm.padding_mode);
    const bool same = prm.padding_mode == TGL_CONV_PADDING_SAME;
    if (same && transposed)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->padding_mode of op '%s' cannot be TGL_CONV_PADDING_SAME (transposed convolution has no 'same' mode)",
             info.name);
    if (prm.groups < 1) fail(TGL_ERROR_INVALID_ARGUMENT, "params->groups of op '%s' must be >= 1, got %u", info.name, prm.groups);
    for (int i = 0; i < S; ++i) {
        if (prm.stride[i] < 1 || prm.dilation[i] < 1)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->stride[%d] and params->dilation[%d] of op '%s' must be >= 1, got %d and %d", i, i,
                 info.name, prm.stride[i], prm.dilation[i]);
        if (prm.pad_begin[i] < 0 || prm.pad_end[i] < 0)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->pad_begin[%d] and params->pad_end[%d] of op '%s' must be >= 0, got %d and %d", i, i,
                 info.name, prm.pad_begin[i], prm.pad_end[i]);
        if (same && (prm.stride[i] != 1 || prm.pad_begin[i] != 0 || prm.pad_end[i] != 0))
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "op '%s' with padding_mode TGL_CONV_PADDING_SAME needs params->stride[%d] = 1 and pad_begin/pad_end[%d] = 0, got %d, %d, %d",
                 info.name, i, i, prm.stride[i], prm.pad_begin[i], prm.pad_end[i]);
        if (prm.output_padding[i] < 0 || (!transposed && prm.output_padding[i] != 0) ||
            (transposed && prm.output_padding[i] >= std::max(prm.stride[i], prm.dilation[i])))
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 transposed ? "params->output_padding[%d] of op '%s' must be >= 0 and smaller than stride or dilation (%d, %d), got %d"
                            : "params->output_padding[%d] of op '%s' must be 0 (only transposed convolution takes it; stride %d, dilation %d), got %d",
                 i, info.name, prm.stride[i], prm.dilation[i], prm.output_padding[i]);
    }
    const bool last = prm.layout == TGL_CONV_LAYOUT_CHANNELS_LAST;
    const int64_t g = prm.groups;
    p.groups = g;
    p.activation = prm.activation;

    // ---- operands ----
    // x: the input whose spatial extent the forward convolution reads (conv, conv_transpose: x;
    // backward input: the output dx; backward weight: x). w: the weight (backward weight: dw).
    const bool w_out = bwd_w;
    const TensorArg& W = w_out ? call.outputs[0] : call.inputs[1];
    const std::string w_label = operand_label(info, w_out, w_out ? 0 : 1);
    if (W.rank != S + 2)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s must have rank %d (%s, %s), got shape %s", info.name, w_label.c_str(), S + 2,
             transposed ? "C_in, C_out/groups" : "C_out, C_in/groups", S == 1 ? "kL" : S == 2 ? "kH, kW" : "kD, kH, kW",
             shape_string(W.rank, W.shape).c_str());
    int64_t k3[3] = {1, 1, 1}, wk[3] = {0, 0, 0};
    for (int i = 0; i < S; ++i) {
        if (W.shape[2 + i] < 1 || W.shape[2 + i] > INT32_MAX)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s has shape %s; its kernel dims must be in 1..2147483647", info.name, w_label.c_str(),
                 shape_string(W.rank, W.shape).c_str());
        k3[3 - S + i] = W.shape[2 + i];
        wk[3 - S + i] = W.strides[2 + i];
    }
    // The channels-first operand of the forward relation's input side, with its role.
    const int x_in = bwd_in ? -1 : 0;  // input slot of the spatial-input tensor, -1: it is outputs[0]
    const TensorArg& Xt = x_in >= 0 ? call.inputs[0] : call.outputs[0];
    const std::string x_label = operand_label(info, x_in < 0, 0);
    const Act X = act_of(call, Xt, x_label, S, last);
    auto need_div = [&](int64_t c, const char* what) {
        if (c % g != 0)
            fail(TGL_ERROR_INVALID_ARGUMENT, "op '%s': params->groups = %lld must divide %s (%lld)", info.name, (long long)g, what,
                 (long long)c);
    };
    need_div(X.c, transposed ? "C_in, the channels of x" : bwd_in ? "C_in, the channels of dx" : "C_in, the channels of x");

    int64_t pad_b[3] = {0, 0, 0}, pad_e[3] = {0, 0, 0};
    for (int i = 0; i < S; ++i) {
        const int j = 3 - S + i;
        if (same) {
            const int64_t total = int64_t(prm.dilation[i]) * (k3[j] - 1);
            pad_b[j] = total / 2;
            pad_e[j] = total - pad_b[j];
        } else {
            pad_b[j] = prm.pad_begin[i];
            pad_e[j] = prm.pad_end[i];
        }
        p.stride[j] = prm.stride[i];
        p.dil[j] = prm.dilation[i];
        p.pad[j] = pad_b[j];
    }
    // Forward-relation output extent of an input extent (throws when the kernel does not fit).
    auto conv_out = [&](const int64_t* in, int64_t* out) {
        for (int i = 0; i < S; ++i) {
            const int j = 3 - S + i;
            // In 128 bits: an empty weight or x may have dims up to 2^62.
            const __int128 padded = __int128(in[j]) + pad_b[j] + pad_e[j], reach = __int128(p.dil[j]) * (k3[j] - 1) + 1;
            if (padded < reach)
                fail(TGL_ERROR_SHAPE_MISMATCH,
                     "op '%s': the kernel reaches %lld elements in spatial dim %d (size %lld, dilation %lld) but the padded input has only %lld "
                     "(size %lld + pads %lld + %lld)",
                     info.name, (long long)reach, i, (long long)k3[j], (long long)p.dil[j], (long long)padded, (long long)in[j],
                     (long long)pad_b[j], (long long)pad_e[j]);
            out[j] = int64_t((padded - reach) / p.stride[j] + 1);
        }
    };

    int64_t expect[TGL_MAX_RANK];
    if (transposed) {
        // w (C_in, C_out/g, k)
        if (W.shape[0] != X.c)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s has shape %s but x has %lld channels, so its dim 0 must be %lld (C_in)", info.name,
                 w_label.c_str(), shape_string(W.rank, W.shape).c_str(), (long long)X.c, (long long)X.c);
        const int64_t cout = W.shape[1] * g;
        int64_t out3[3] = {1, 1, 1};
        for (int i = 0; i < S; ++i) {
            const int j = 3 - S + i;
            const __int128 o = __int128(X.sp[j] - 1) * p.stride[j] - pad_b[j] - pad_e[j] + __int128(p.dil[j]) * (k3[j] - 1) +
                               prm.output_padding[i] + 1;
            out3[j] = int64_t(std::min<__int128>(o, INT64_MAX));
            if (o < 0)
                fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': spatial dim %d of the output would have negative size %lld (pads too large)", info.name,
                     i, (long long)out3[j]);
        }
        act_shape(S, last, X.n, cout, out3, expect);
        require_shape(info, call.outputs[0], operand_label(info, true, 0), S + 2, expect, "x, w and the params");
        p.mode = ConvPlan::Transposed;
        p.cx = X.c / g;
        p.cy = W.shape[1];
        p.w_m = W.strides[1];
        p.w_c = W.strides[0];
        p.w_g = p.cx * W.strides[0];
    } else {
        // w (C_out, C_in/g, k)
        if (W.shape[1] * g != X.c)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s has shape %s but %s has %lld channels in %lld groups, so its dim 1 must be %lld (C_in/groups)",
                 info.name, w_label.c_str(), shape_string(W.rank, W.shape).c_str(), x_label.c_str(), (long long)X.c, (long long)g,
                 (long long)(X.c / g));
        const int64_t cout = W.shape[0];
        need_div(cout, "C_out, dim 0 of the weight");
        int64_t out3[3] = {1, 1, 1};
        conv_out(X.sp, out3);
        act_shape(S, last, X.n, cout, out3, expect);
        p.cx = X.c / g;
        p.cy = cout / g;
        if (bwd_in) {
            require_shape(info, call.inputs[0], operand_label(info, false, 0), S + 2, expect, "conv2d of dx's shape with w and the params");
            p.mode = ConvPlan::Transposed;  // dx from dy: the adjoint relation, dy on the small side
            std::swap(p.cx, p.cy);
            p.w_m = W.strides[1];
            p.w_c = W.strides[0];
            p.w_g = p.cx * W.strides[0];
        } else {
            const TensorArg& Y = bwd_w ? call.inputs[1] : call.outputs[0];
            require_shape(info, Y, operand_label(info, !bwd_w, bwd_w ? 1 : 0), S + 2, expect,
                          bwd_w ? "conv2d of x with dw's kernel size and the params" : "x, w and the params");
            p.mode = bwd_w ? ConvPlan::WeightGrad : ConvPlan::Forward;
            p.w_m = W.strides[0];
            p.w_c = W.strides[1];
            p.w_g = p.cy * W.strides[0];
        }
    }

    // Roles: x (small side), y (large side), bias.
    const TensorArg* xr;
    const TensorArg* yr;
    std::string xl, yl;
    if (bwd_in) {
        xr = &call.inputs[0];
        yr = &call.outputs[0];
        xl = operand_label(info, false, 0);
        yl = operand_label(info, true, 0);
    } else if (bwd_w) {
        xr = &call.inputs[0];
        yr = &call.inputs[1];
        xl = operand_label(info, false, 0);
        yl = operand_label(info, false, 1);
    } else {
        xr = &call.inputs[0];
        yr = &call.outputs[0];
        xl = operand_label(info, false, 0);
        yl = operand_label(info, true, 0);
    }
    const Act XA = act_of(call, *xr, xl, S, last), YA = act_of(call, *yr, yl, S, last);
    p.batch = XA.n;
    for (int j = 0; j < 3; ++j) {
        p.in[j] = XA.sp[j];
        p.out[j] = YA.sp[j];
        p.k[j] = k3[j];
        p.ws[j] = wk[j];
    }
    std::copy(XA.st, XA.st + 5, p.xs);
    std::copy(YA.st, YA.st + 5, p.ys);
    p.x_off = xr->offset;
    p.y_off = yr->offset;
    p.w_off = W.offset;
    p.w_is_out = w_out;
    p.y_is_out = !bwd_w;
    p.x_slot = 0;
    p.y_slot = bwd_w ? 1 : 0;
    p.w_slot = w_out ? 0 : 1;

    // bias (C_out) / db (C_out): optional.
    const TensorArg* B = nullptr;
    int b_slot = -1;
    if (bwd_w) {
        if (call.outputs.size() > 1 && call.outputs[1].present()) B = &call.outputs[1], b_slot = 1;
    } else if (!bwd_in && call.inputs.size() > 2 && call.inputs[2].present()) {
        B = &call.inputs[2], b_slot = 2;
    }
    if (B) {
        const int64_t cout = p.cy * g;
        require_shape(info, *B, operand_label(info, bwd_w, uint32_t(b_slot)), 1, &cout, "C_out, the channels of the output,");
        p.bs = B->strides[0];
        p.b_off = B->offset;
        p.b_slot = b_slot;
    }
}

void register_conv_rules(std::vector<FamilyRules>& families) { families.push_back({OpFamily::Conv, plan_conv}); }

}  // namespace tgl
