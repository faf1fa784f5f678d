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
    enum Role { kQ, kK, kV, kMask, kO, kLse, kDo, kDq, kDk, kDv, kRoles };
    bool backward = false;
    bool causal = false;
    bool has_mask = false, has_lse = false;
    bool bool_mask = false;  // a bool mask: 1 = attend (additive 0), 0 = hidden (-inf)
    float scale = 1.0f;  // resolved (0 in params: 1 / sqrt(D))
    int64_t B = 0, Hq = 0, Hkv = 0, G = 1, Sq = 0, Skv = 0, D = 0, Dv = 0;
    int64_t offset[kRoles] = {};
    int64_t strides[kRoles][4] = {};
    // Whether the role is an input (true) or an output, and its index there.
    bool is_input[kRoles] = {};
    int slot[kRoles] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
    // The largest head dim (D and Dv) the ops accept.
    static constexpr int64_t kMaxHeadDim = 256;
};

void plan_attention(OpCall& call, const void* params);

}  // namespace tgl
