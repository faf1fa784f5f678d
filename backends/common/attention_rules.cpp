#include "attention_rules.h"
#include "op_families.h"

#include "validate_util.h"

#include <algorithm>
#include <cmath>

namespace tgl {

// ABI 1.3 grew tgl_attention_params (softcap, max_bias, window).
template <>
struct PublishedSizes<tgl_attention_params> {
    static constexpr uint32_t sizes[] = {TGL_ATTENTION_PARAMS_SIZE_V1_1, TGL_ATTENTION_PARAMS_SIZE_V1_3};
};

namespace {

using R = AttentionPlan::Role;

const TensorArg& arg_of(const OpCall& call, const AttentionPlan& p, int role) {
    return p.is_input[role] ? call.inputs[size_t(p.slot[role])] : call.outputs[size_t(p.slot[role])];
}

std::string label_of(const OpCall& call, const AttentionPlan& p, int role) {
    return operand_label(*call.info, !p.is_input[role], uint32_t(p.slot[role]));
}

void require_rank4(const OpCall& call, const AttentionPlan& p, int role, const char* dims) {
    const TensorArg& t = arg_of(call, p, role);
    if (t.rank != 4)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s must have rank 4 %s, got shape %s", call.info->name,
             label_of(call, p, role).c_str(), dims, shape_string(t.rank, t.shape).c_str());
}

}  // namespace

void plan_attention(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    AttentionPlan& p = call.plan.emplace<AttentionPlan>();
    p.backward = info.op == TGL_OP_ATTENTION_BACKWARD;

    const tgl_attention_params prm = read_params(
        info, params, tgl_attention_params{sizeof(tgl_attention_params), 0, 0.0f, 0, 0.0f, 0.0f, 0});
    require_reserved_zero(info, prm.reserved);
    if (prm.causal > 2)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->causal of op '%s' must be 0 (none), 1 (bottom-right aligned) or 2 (top-left aligned), got %u",
             info.name, prm.causal);
    if (!std::isfinite(prm.scale))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->scale of op '%s' must be a finite number (0: 1 / sqrt(head_dim)), got %g",
             info.name, double(prm.scale));
    if (!std::isfinite(prm.softcap) || prm.softcap < 0.0f)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->softcap of op '%s' must be finite and >= 0 (0: off), got %g", info.name,
             double(prm.softcap));
    if (!std::isfinite(prm.max_bias) || prm.max_bias < 0.0f)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->max_bias of op '%s' must be finite and >= 0 (0: no ALiBi), got %g",
             info.name, double(prm.max_bias));
    p.causal = prm.causal != 0;
    p.softcap = prm.softcap;
    p.max_bias = prm.max_bias;

    // Roles to slots.
    auto in = [&](int role, int slot) { p.is_input[role] = true; p.slot[role] = slot; };
    auto out = [&](int role, int slot) { p.is_input[role] = false; p.slot[role] = slot; };
    in(R::kQ, 0);
    in(R::kK, 1);
    in(R::kV, 2);
    if (!p.backward) {
        in(R::kMask, 3);
        if (call.inputs.size() > 4) in(R::kSinks, 4);  // (a host of ABI < 1.3 passes 4 inputs)
        out(R::kO, 0);
        out(R::kLse, 1);
    } else {
        in(R::kO, 3);
        in(R::kDo, 4);
        in(R::kLse, 5);
        in(R::kMask, 6);
        out(R::kDq, 0);
        out(R::kDk, 1);
        out(R::kDv, 2);
    }
    p.has_mask = arg_of(call, p, R::kMask).present();
    p.has_lse = arg_of(call, p, R::kLse).present();
    p.has_sinks = p.slot[R::kSinks] >= 0 && arg_of(call, p, R::kSinks).present();

    require_rank4(call, p, R::kQ, "(B, Hq, Sq, D)");
    require_rank4(call, p, R::kK, "(B, Hkv, Skv, D)");
    require_rank4(call, p, R::kV, "(B, Hkv, Skv, Dv)");
    const TensorArg& q = arg_of(call, p, R::kQ);
    const TensorArg& k = arg_of(call, p, R::kK);
    const TensorArg& v = arg_of(call, p, R::kV);
    p.B = q.shape[0];
    p.Hq = q.shape[1];
    p.Sq = q.shape[2];
    p.D = q.shape[3];
    p.Hkv = k.shape[1];
    p.Skv = k.shape[2];
    p.Dv = v.shape[3];
    const std::string qs = shape_string(4, q.shape), ks = shape_string(4, k.shape), vs = shape_string(4, v.shape);
    if (k.shape[0] != p.B || v.shape[0] != p.B)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': the batch dim (dim 0) of q %s, k %s and v %s must agree", info.name,
             qs.c_str(), ks.c_str(), vs.c_str());
    if (k.shape[3] != p.D)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': head_dim mismatch: q %s and k %s must have the same last dim (D)",
             info.name, qs.c_str(), ks.c_str());
    if (v.shape[1] != p.Hkv || v.shape[2] != p.Skv)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': k %s and v %s must agree in their heads (dim 1) and key positions (dim 2)",
             info.name, ks.c_str(), vs.c_str());
    if (p.D < 1 || p.D > AttentionPlan::kMaxHeadDim || p.Dv < 1 || p.Dv > AttentionPlan::kMaxHeadDim)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': head dims must be in 1..%lld; q %s has D = %lld, v %s has Dv = %lld",
             info.name, (long long)AttentionPlan::kMaxHeadDim, qs.c_str(), (long long)p.D, vs.c_str(), (long long)p.Dv);
    if (p.Hkv == 0 ? p.Hq != 0 : p.Hq % p.Hkv != 0)
        fail(TGL_ERROR_SHAPE_MISMATCH,
             "op '%s': the q heads Hq = %lld (q %s) must be a multiple of the kv heads Hkv = %lld (k %s)", info.name,
             (long long)p.Hq, qs.c_str(), (long long)p.Hkv, ks.c_str());
    p.G = p.Hkv > 0 ? p.Hq / p.Hkv : 1;
    p.scale = prm.scale != 0.0f ? prm.scale : float(1.0 / std::sqrt(double(p.D)));
    p.pos_offset = prm.causal == 2 ? 0 : p.Skv - p.Sq;
    // A window that spans every (query, key) pair hides nothing: |P(i) - j| <= Sq + Skv.
    p.window = std::min<int64_t>(prm.window, p.Sq + p.Skv + 1);
    if (k.dtype != q.dtype && !(q.dtype == TGL_DTYPE_F32 && k.dtype == TGL_DTYPE_F16 && !p.backward))
        fail(TGL_ERROR_DTYPE_MISMATCH, "op '%s': k and v are %s but q is %s; they have q's dtype%s", info.name,
             dtype_name(k.dtype), dtype_name(q.dtype), p.backward ? "" : ", or f16 under an f32 q");

    // The other operands' shapes.
    const int64_t o_shape[4] = {p.B, p.Hq, p.Sq, p.Dv};
    const int64_t lse_shape[3] = {p.B, p.Hq, p.Sq};
    auto require = [&](int role, int rank, const int64_t* shape, const char* why) {
        require_shape(info, arg_of(call, p, role), label_of(call, p, role), rank, shape, why);
    };
    if (!p.backward) {
        require(R::kO, 4, o_shape, "(B, Hq, Sq, Dv) of q and v");
        if (p.has_lse) require(R::kLse, 3, lse_shape, "(B, Hq, Sq) of q");
        const int64_t sinks_shape[1] = {p.Hq};
        if (p.has_sinks) require(R::kSinks, 1, sinks_shape, "(Hq), one logit per q head");
    } else {
        require(R::kO, 4, o_shape, "(B, Hq, Sq, Dv) of q and v");
        require(R::kDo, 4, o_shape, "(B, Hq, Sq, Dv) of q and v");
        require(R::kLse, 3, lse_shape, "(B, Hq, Sq) of q");
        require(R::kDq, 4, q.shape, "q's shape");
        require(R::kDk, 4, k.shape, "k's shape");
        require(R::kDv, 4, v.shape, "v's shape");
    }

    // Strides and offsets of every present role.
    for (int role = 0; role < AttentionPlan::kRoles; ++role) {
        if (p.slot[role] < 0 || role == R::kMask) continue;
        const TensorArg& t = arg_of(call, p, role);
        if (!t.present()) continue;
        p.offset[role] = t.offset;
        for (int d = 0; d < t.rank; ++d) p.strides[role][d] = t.strides[d];
    }
    if (p.has_mask) {
        const TensorArg& m = arg_of(call, p, R::kMask);
        const int64_t full[4] = {p.B, p.Hq, p.Sq, p.Skv};
        if (m.rank > 4)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s of shape %s does not broadcast to (B, Hq, Sq, Skv) = %s",
                 info.name, label_of(call, p, R::kMask).c_str(), shape_string(m.rank, m.shape).c_str(),
                 shape_string(4, full).c_str());
        const int lead = 4 - m.rank;
        for (int d = 0; d < 4; ++d) {
            if (d < lead) continue;
            const int64_t n = m.shape[d - lead];
            if (n != full[d] && n != 1)
                fail(TGL_ERROR_SHAPE_MISMATCH,
                     "op '%s': %s of shape %s does not broadcast to (B, Hq, Sq, Skv) = %s (dim %d: %lld vs %lld)",
                     info.name, label_of(call, p, R::kMask).c_str(), shape_string(m.rank, m.shape).c_str(),
                     shape_string(4, full).c_str(), d, (long long)n, (long long)full[d]);
            p.strides[R::kMask][d] = n == 1 ? 0 : m.strides[d - lead];
        }
        p.offset[R::kMask] = m.offset;
        p.bool_mask = m.dtype == TGL_DTYPE_BOOL;
        if (!p.bool_mask && m.dtype != q.dtype && (p.backward || m.dtype != TGL_DTYPE_F16))
            fail(TGL_ERROR_DTYPE_MISMATCH, "op '%s': %s is %s but q is %s; an additive mask has q's dtype%s (or use a bool mask)",
                 info.name, label_of(call, p, R::kMask).c_str(), dtype_name(m.dtype), dtype_name(q.dtype),
                 p.backward ? "" : " or f16");
    }
}

int64_t AttentionPlan::alibi_heads_pow2() const {
    int64_t n = 1;
    while (n * 2 <= Hq) n *= 2;
    return n;
}

double AttentionPlan::alibi_exponent(int64_t h) const {
    if (max_bias <= 0.0f) return 0.0;
    const int64_t n = alibi_heads_pow2();
    return h < n ? double(h + 1) * double(max_bias) / double(n) : double(2 * (h - n) + 1) * double(max_bias) / double(2 * n);
}

int64_t AttentionPlan::key_begin(int64_t i) const {
    const int64_t pos = i + pos_offset;
    return window > 0 ? std::clamp<int64_t>(pos - window + 1, 0, Skv) : 0;
}

int64_t AttentionPlan::key_end(int64_t i) const {
    const int64_t pos = i + pos_offset;
    if (causal) return std::clamp<int64_t>(pos + 1, 0, Skv);
    return window > 0 ? std::clamp<int64_t>(pos + window, 0, Skv) : Skv;
}

void register_attention_rules(std::vector<FamilyRules>& families) {
    families.push_back({OpFamily::Attention, plan_attention});
}

}  // namespace tgl
