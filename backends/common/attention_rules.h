// Shape rules and index plan of the Attention family (scaled dot-product attention forward and backward).
// Included by validate.h; plan_attention() is called by validate_op() for every op of the family.
//
// Every operand is seen as 4-D (batch, head, position, channel) with element strides per dim; the
// mask's strides are those of its broadcast to (B, Hq, Sq, Skv) (0 where it broadcasts), lse's
// channel stride is 0. Absent operands have no strides (has_mask / has_lse false).
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

struct AttentionPlan {
    // Operand roles; the call's input/output slot of each is in slot[] (-1: not taken by the op).
    enum Role { kQ, kK, kV, kMask, kO, kLse, kDo, kDq, kDk, kDv, kSinks, kRoles };
    bool backward = false;
    bool causal = false;     // either alignment (params->causal 1 or 2)
    bool has_mask = false, has_lse = false, has_sinks = false;
    bool bool_mask = false;  // a bool mask: 1 = attend (additive 0), 0 = hidden (-inf)
    float scale = 1.0f;      // resolved (0 in params: 1 / sqrt(D))
    float softcap = 0.0f;    // > 0: x = softcap * tanh(x / softcap)
    float max_bias = 0.0f;   // > 0: ALiBi (alibi_slope)
    int64_t window = 0;      // > 0: key j visible only if |P(i) - j| < window (clamped to Sq + Skv + 1)
    int64_t B = 0, Hq = 0, Hkv = 0, G = 1, Sq = 0, Skv = 0, D = 0, Dv = 0;
    // P(i) = i + pos_offset, query i's position among the keys: Skv - Sq (bottom-right aligned,
    // causal 0 and 1) or 0 (top-left, causal 2).
    int64_t pos_offset = 0;
    int64_t offset[kRoles] = {};
    int64_t strides[kRoles][4] = {};
    // Whether the role is an input (true) or an output, and its index there.
    bool is_input[kRoles] = {};
    int slot[kRoles] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    // The largest head dim (D and Dv) the ops accept.
    static constexpr int64_t kMaxHeadDim = 256;

    // ALiBi as ggml (ops.h): with n = 2^floor(log2(Hq)), slope_h = 2^-(alibi_exponent(h)), where
    // the exponent is (h + 1) max_bias / n for h < n, else (2 (h - n) + 1) max_bias / (2 n).
    // 0 when ALiBi is off. Both plugins compute the slope from this exponent.
    double alibi_exponent(int64_t h) const;
    int64_t alibi_heads_pow2() const;  // n
    // Keys [key_begin(i), key_end(i)) are the ones query i may see (causal and window; the mask
    // aside), clamped to [0, Skv].
    int64_t key_begin(int64_t i) const;
    int64_t key_end(int64_t i) const;
};

void plan_attention(OpCall& call, const void* params);

}  // namespace tgl
