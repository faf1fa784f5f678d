#include "sequence_rules.h"
#include "op_families.h"

#include "validate_util.h"

#include <cmath>

namespace tgl {

namespace {

using R = SequencePlan::Role;

void require_finite(const OpInfo& info, const char* what, float v) {
    if (!std::isfinite(v))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->%s of op '%s' must be finite, got %g", what, info.name, double(v));
}

// The row dims: the first `rank` dims of x, with x's and y's strides (and the offsets).
void set_rows(SequencePlan& p, const TensorArg& x, const TensorArg& y, int rank) {
    p.row_rank = rank;
    p.rows = 1;
    for (int d = 0; d < rank; ++d) {
        p.row_shape[d] = x.shape[d];
        p.row_strides[R::kX][d] = x.strides[d];
        p.row_strides[R::kY][d] = y.strides[d];
        p.rows *= x.shape[d];
    }
    p.offset[R::kX] = x.offset;
    p.offset[R::kY] = y.offset;
}

}  // namespace

// rope's struct grew multi and sections in 1.3.
template <>
struct PublishedSizes<tgl_rope_params> {
    static constexpr uint32_t sizes[] = {TGL_ROPE_PARAMS_SIZE_V1_1, TGL_ROPE_PARAMS_SIZE_V1_3};
};

namespace {

// Multi-section rope: the params' rule, and positions' last dim (the streams) against it.
void plan_rope_multi(const OpInfo& info, SequencePlan& p, const tgl_rope_params& prm, const TensorArg& pos) {
    const uint32_t* s = prm.sections;
    if (prm.multi > TGL_ROPE_MULTI_VISION)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->multi of op '%s' must be a TGL_ROPE_MULTI_* value (0..3), got %u", info.name,
             prm.multi);
    const uint64_t sum = uint64_t(s[0]) + s[1] + s[2] + s[3];
    if (prm.multi == TGL_ROPE_MULTI_NONE) {
        if (sum != 0)
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "params->sections of op '%s' must be all 0 with params->multi = TGL_ROPE_MULTI_NONE, got (%u, %u, %u, %u)",
                 info.name, s[0], s[1], s[2], s[3]);
        return;
    }
    if (sum < 1 || sum > (uint64_t(1) << 24))
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->sections of op '%s' (multi-section rope) must sum to 1..16777216 pairs, got (%u, %u, %u, %u) summing to %llu",
             info.name, s[0], s[1], s[2], s[3], (unsigned long long)sum);
    if (pos.rank < 1 || pos.shape[pos.rank - 1] < 1 || pos.shape[pos.rank - 1] > 4)
        fail(TGL_ERROR_SHAPE_MISMATCH,
             "op '%s': with multi-section rope inputs[1] (positions) must be (..., S) with S = 1..4 position streams "
             "(t, h, w, e) in its last dim, got shape %s",
             info.name, shape_string(pos.rank, pos.shape).c_str());
    p.multi = prm.multi;
    for (int k = 0; k < 4; ++k) p.sections[k] = s[k];
    p.streams = pos.shape[pos.rank - 1];
    p.stream_stride = pos.strides[pos.rank - 1];
    for (int64_t i = 0; i < p.n_rot / 2; ++i) {
        const int k = rope_stream(p, i);
        if (k >= p.streams)
            fail(TGL_ERROR_SHAPE_MISMATCH,
                 "op '%s': params->sections (%u, %u, %u, %u) give pair %lld position stream %d, but inputs[1] (positions, "
                 "shape %s) has %lld streams (its last dim)",
                 info.name, s[0], s[1], s[2], s[3], (long long)i, k, shape_string(pos.rank, pos.shape).c_str(),
                 (long long)p.streams);
    }
}

void plan_rope(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    SequencePlan& p = call.sequence();
    const TensorArg& x = call.inputs[0];
    const TensorArg& pos = call.inputs[1];
    const TensorArg& y = call.outputs[0];
    // The optional inputs (since 1.3; a 1.2 host passes 2 inputs).
    auto optional = [&](size_t k) { return k < call.inputs.size() && call.inputs[k].present() ? &call.inputs[k] : nullptr; };
    const TensorArg *ff = optional(2), *cos_t = optional(3), *sin_t = optional(4);
    tgl_rope_params prm = read_params(info, params,
                                      tgl_rope_params{sizeof(tgl_rope_params), TGL_ROPE_NORMAL, 0, TGL_ROPE_SCALING_NONE,
                                                      10000.0f, 1.0f, 0, 32.0f, 1.0f, 1.0f, 1.0f, 0, TGL_ROPE_MULTI_NONE, {0, 0, 0, 0}});
    require_reserved_zero(info, prm.reserved);
    if (x.rank < 1)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[0] (%s) must have rank >= 1 (..., D), got shape %s", info.name,
             info.operand_names[0], shape_string(x.rank, x.shape).c_str());
    require_shape(info, y, operand_label(info, true, 0), x.rank, x.shape, "x's shape");
    const int64_t D = x.shape[x.rank - 1];
    if (prm.mode > TGL_ROPE_NEOX)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->mode of op '%s' must be TGL_ROPE_NORMAL (0) or TGL_ROPE_NEOX (1), got %u",
             info.name, prm.mode);
    if (prm.scaling > TGL_ROPE_SCALING_YARN)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->scaling of op '%s' must be a TGL_ROPE_SCALING_* value (0..3), got %u",
             info.name, prm.scaling);
    const int64_t n_rot = prm.n_rot ? int64_t(prm.n_rot) : D;
    if (n_rot % 2 != 0 || n_rot > D || (prm.n_rot != 0 && n_rot < 2))
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->n_rot of op '%s' must be even and in 2..D (D = %lld, the last dim of x), or 0 for an even D; got %u",
             info.name, (long long)D, prm.n_rot);
    const int64_t half = n_rot / 2;
    p.D = D;
    p.n_rot = n_rot;
    plan_rope_multi(info, p, prm, pos);
    p.dims = p.multi == TGL_ROPE_MULTI_VISION ? half : n_rot;
    if (!(prm.theta_base > 0.0f) || !std::isfinite(prm.theta_base))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->theta_base of op '%s' must be finite and > 0, got %g", info.name,
             double(prm.theta_base));
    require_finite(info, "attn_factor", prm.attn_factor);
    if (prm.scaling != TGL_ROPE_SCALING_NONE && (!(prm.factor > 0.0f) || !std::isfinite(prm.factor)))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->factor of op '%s' must be finite and > 0 with scaling %u, got %g",
             info.name, prm.scaling, double(prm.factor));
    if (prm.scaling == TGL_ROPE_SCALING_NTK_AWARE && p.dims <= 2)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "op '%s': NTK-aware scaling needs n_rot > 2 (n_rot / 2 > 2 with VISION; base * factor^(dims / (dims - 2))), got n_rot %lld",
             info.name, (long long)n_rot);
    if (prm.scaling == TGL_ROPE_SCALING_YARN) {
        if (prm.original_max_positions == 0)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->original_max_positions of op '%s' must be > 0 for YaRN scaling", info.name);
        require_finite(info, "beta_fast", prm.beta_fast);
        require_finite(info, "beta_slow", prm.beta_slow);
        require_finite(info, "ext_factor", prm.ext_factor);
    }
    const int64_t pairs[1] = {half};
    if (ff) {
        require_shape(info, *ff, operand_label(info, false, 2), 1, pairs, "(n_rot / 2), one factor per rotated pair");
        p.has_ff = true;
        p.ff_offset = ff->offset;
        p.ff_stride = ff->strides[0];
    }
    if (!cos_t != !sin_t)
        fail(TGL_ERROR_INVALID_ARGUMENT, "op '%s': the cos/sin cache is inputs[3] (cos) and inputs[4] (sin) together; got only %s",
             info.name, cos_t ? "cos" : "sin");
    if (cos_t) {
        if (cos_t->rank != 2 || cos_t->shape[1] != half)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[3] (cos) must be (max_positions, n_rot / 2 = %lld), got shape %s",
                 info.name, (long long)half, shape_string(cos_t->rank, cos_t->shape).c_str());
        require_shape(info, *sin_t, operand_label(info, false, 4), 2, cos_t->shape, "cos's shape (max_positions, n_rot / 2)");
        if (prm.scaling != TGL_ROPE_SCALING_NONE)
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "op '%s': with a cos/sin cache the angles are the cache's, so params->scaling must be TGL_ROPE_SCALING_NONE, got %u",
                 info.name, prm.scaling);
        if (ff)
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "op '%s': with a cos/sin cache the angles are the cache's, so inputs[2] (freq_factors) must be absent", info.name);
        p.cache = true;
        p.max_positions = cos_t->shape[0];
        p.cos_offset = cos_t->offset;
        p.sin_offset = sin_t->offset;
        for (int d = 0; d < 2; ++d) {
            p.cos_strides[d] = cos_t->strides[d];
            p.sin_strides[d] = sin_t->strides[d];
        }
    }
    // positions (but multi-section rope's stream dim) broadcast to x.shape[:-1].
    TensorArg rows_of_x = x;
    rows_of_x.rank = x.rank - 1;
    TensorArg pos_rows = pos;
    if (p.multi) pos_rows.rank = pos.rank - 1;
    int64_t pos_strides[TGL_MAX_RANK] = {};
    broadcast_strides(pos_rows, operand_label(info, false, 1) + (p.multi ? " without its last dim (the streams)" : ""),
                      rows_of_x, pos_strides);

    p.neox = prm.mode == TGL_ROPE_NEOX;
    p.backward = info.op == TGL_OP_ROPE_BACKWARD;
    p.x_d_stride = x.strides[x.rank - 1];
    p.y_d_stride = y.strides[x.rank - 1];
    set_rows(p, x, y, x.rank - 1);
    for (int d = 0; d < p.row_rank; ++d) p.row_strides[R::kP][d] = pos_strides[d];
    p.offset[R::kP] = pos.offset;

    const double base = prm.theta_base, factor = prm.factor;
    p.base = base;
    p.mscale = prm.attn_factor;
    if (p.cache) return;  // the angles are the cache's
    const double dims = double(p.dims);
    switch (prm.scaling) {
    case TGL_ROPE_SCALING_LINEAR: p.freq_scale = 1.0 / factor; break;
    case TGL_ROPE_SCALING_NTK_AWARE: p.base = base * std::pow(factor, dims / (dims - 2.0)); break;
    case TGL_ROPE_SCALING_YARN: {
        p.yarn = true;
        p.freq_scale = 1.0 / factor;
        p.ext_factor = prm.ext_factor;
        const double two_pi = 2.0 * M_PI;
        auto corr = [&](double b) { return dims * std::log(double(prm.original_max_positions) / (b * two_pi)) / (2.0 * std::log(base)); };
        p.corr_low = std::max(0.0, std::floor(corr(prm.beta_fast)));
        p.corr_high = std::min(dims - 1.0, std::ceil(corr(prm.beta_slow)));
        if (p.ext_factor != 0.0) p.mscale *= 1.0 + 0.1 * std::log(factor);
        break;
    }
    default: break;
    }
    if (!std::isfinite(p.base) || !(p.base > 0.0))
        fail(TGL_ERROR_INVALID_ARGUMENT, "op '%s': the NTK-scaled base theta_base * factor^(dims / (dims - 2)) = %g is not a finite number > 0",
             info.name, p.base);
}

void plan_fft(OpCall& call) {
    const OpInfo& info = *call.info;
    SequencePlan& p = call.sequence();
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    if (x.rank < 2 || x.shape[x.rank - 1] != 2)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[0] (x) must be (..., n, 2) complex (re, im) pairs, got shape %s",
             info.name, shape_string(x.rank, x.shape).c_str());
    require_shape(info, y, operand_label(info, true, 0), x.rank, x.shape, "x's shape");
    const int64_t n = x.shape[x.rank - 2];
    const bool pow2 = n > 0 && (n & (n - 1)) == 0;
    if (n > 0 && !pow2 && n > 4096)
        fail(TGL_ERROR_UNIMPLEMENTED,
             "op '%s': n = %lld (dim %d of x, shape %s) is not a power of two; other lengths are implemented up to 4096 "
             "(direct DFT)",
             info.name, (long long)n, x.rank - 2, shape_string(x.rank, x.shape).c_str());
    p.n = n;
    p.inverse = info.op == TGL_OP_IFFT;
    p.x_n_stride = x.strides[x.rank - 2];
    p.x_c_stride = x.strides[x.rank - 1];
    p.y_n_stride = y.strides[x.rank - 2];
    p.y_c_stride = y.strides[x.rank - 1];
    set_rows(p, x, y, x.rank - 2);
}

}  // namespace

// selective_scan's struct grew state_in in 1.3.
template <>
struct PublishedSizes<tgl_selective_scan_params> {
    static constexpr uint32_t sizes[] = {TGL_SELECTIVE_SCAN_PARAMS_SIZE_V1_1, TGL_SELECTIVE_SCAN_PARAMS_SIZE_V1_3};
};

namespace {

void plan_selective_scan(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    SequencePlan& p = call.sequence();
    tgl_selective_scan_params prm =
        read_params(info, params, tgl_selective_scan_params{sizeof(tgl_selective_scan_params), 0, {0, 0}, 0});
    require_reserved_zero(info, prm.reserved[0]);
    require_reserved_zero(info, prm.reserved[1]);
    if (prm.delta_softplus > 1)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->delta_softplus of op '%s' must be 0 or 1, got %u", info.name,
             prm.delta_softplus);
    const TensorArg& u = call.inputs[0];
    const TensorArg& A = call.inputs[2];
    if (u.rank != 3)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[0] (u) must be (B, D, L), got shape %s", info.name,
             shape_string(u.rank, u.shape).c_str());
    if (A.rank != 2 || A.shape[0] != u.shape[1])
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[2] (A) must be (D, N) with D = %lld (dim 1 of u), got shape %s",
             info.name, (long long)u.shape[1], shape_string(A.rank, A.shape).c_str());
    const int64_t Bt = u.shape[0], Dm = u.shape[1], L = u.shape[2], N = A.shape[1];
    const int64_t bdl[3] = {Bt, Dm, L}, bnl[3] = {Bt, N, L}, d1[1] = {Dm}, bdn[3] = {Bt, Dm, N};
    require_shape(info, call.inputs[1], operand_label(info, false, 1), 3, bdl, "u's shape (B, D, L)");
    require_shape(info, call.inputs[3], operand_label(info, false, 3), 3, bnl, "(B, N, L) of u and A");
    require_shape(info, call.inputs[4], operand_label(info, false, 4), 3, bnl, "(B, N, L) of u and A");
    p.has_dskip = call.inputs[5].present();
    p.has_z = call.inputs[6].present();
    p.has_bias = call.inputs[7].present();
    p.has_state = call.outputs[1].present();
    if (p.has_dskip) require_shape(info, call.inputs[5], operand_label(info, false, 5), 1, d1, "(D) of u");
    if (p.has_z) require_shape(info, call.inputs[6], operand_label(info, false, 6), 3, bdl, "u's shape (B, D, L)");
    if (p.has_bias) require_shape(info, call.inputs[7], operand_label(info, false, 7), 1, d1, "(D) of u");
    require_shape(info, call.outputs[0], operand_label(info, true, 0), 3, bdl, "u's shape (B, D, L)");
    if (prm.state_in > 1)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->state_in of op '%s' must be 0 or 1, got %u", info.name, prm.state_in);
    if (prm.state_in && !p.has_state)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "op '%s': params->state_in = 1 reads the initial state from outputs[1] (last_state), which is absent "
             "(buffer 0); pass the (B, D, N) state there", info.name);
    if (p.has_state) require_shape(info, call.outputs[1], operand_label(info, true, 1), 3, bdn, "(B, D, N) of u and A");
    p.state_in = prm.state_in != 0;
    p.batch = Bt;
    p.dim = Dm;
    p.len = L;
    p.nstate = N;
    p.softplus = prm.delta_softplus != 0;
}

void plan_sample(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    SequencePlan& p = call.sequence();
    tgl_sample_params prm = read_params(info, params, tgl_sample_params{sizeof(tgl_sample_params), 0, 1.0f, 1.0f, 0, 0});
    const TensorArg& x = call.inputs[0];
    const TensorArg& tok = call.outputs[0];
    if (x.rank != 2)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[0] (logits) must be (B, V), got shape %s", info.name,
             shape_string(x.rank, x.shape).c_str());
    require_shape(info, tok, operand_label(info, true, 0), 1, x.shape, "(B) of logits (B, V)");
    const int64_t V = x.shape[1];
    if (x.shape[0] > 0 && (V < 1 || V >= (int64_t(1) << 24)))
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': the vocabulary V (dim 1 of logits, shape %s) must be in 1..16777215",
             info.name, shape_string(x.rank, x.shape).c_str());
    const float T = prm.temperature;
    if (!(T >= 0.0f) || !std::isfinite(T) || (T > 0.0f && !std::isfinite(float(1.0 / double(T)))))
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->temperature of op '%s' must be 0 (greedy) or a finite number > 0 whose reciprocal is finite in f32, got %g",
             info.name, double(T));
    if (!(prm.top_p > 0.0f && prm.top_p <= 1.0f))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->top_p of op '%s' must be in (0, 1] (1: off), got %g", info.name,
             double(prm.top_p));
    set_rows(p, x, tok, 1);
    p.n = V;
    p.x_n_stride = x.strides[1];
    p.greedy = T == 0.0f || prm.top_k == 1;
    p.inv_temperature = T > 0.0f ? float(1.0 / double(T)) : 1.0f;
    p.top_k = prm.top_k >= uint64_t(V) ? 0 : int64_t(prm.top_k);
    p.top_p16 = prm.top_p >= 1.0f ? 0u : uint32_t(std::ceil(double(prm.top_p) * 65536.0));
    p.seed = prm.seed;
    p.rng_offset = prm.offset;
}

}  // namespace

const uint32_t kSampleExp2[24] = {
    0x5A82799Au, 0x6BA27E65u, 0x75606374u, 0x7A92BE8Bu, 0x7D41D96Eu, 0x7E9F0606u, 0x7F4F08AEu, 0x7FA765ADu,
    0x7FD3AB29u, 0x7FE9D3A9u, 0x7FF4E959u, 0x7FFA748Eu, 0x7FFD3A3Fu, 0x7FFE9D1Eu, 0x7FFF4E8Eu, 0x7FFFA747u,
    0x7FFFD3A4u, 0x7FFFE9D2u, 0x7FFFF4E9u, 0x7FFFFA74u, 0x7FFFFD3Au, 0x7FFFFE9Du, 0x7FFFFF4Fu, 0x7FFFFFA7u};

int rope_stream(const SequencePlan& p, int64_t i) {
    if (p.multi == TGL_ROPE_MULTI_NONE) return 0;
    const int64_t* s = p.sections;
    const int64_t c = i % (s[0] + s[1] + s[2] + s[3]);
    if (p.multi == TGL_ROPE_MULTI_INTERLEAVED) {
        if (c % 3 == 1 && c < 3 * s[1]) return 1;
        if (c % 3 == 2 && c < 3 * s[2]) return 2;
        if (c % 3 == 0 && c < 3 * s[0]) return 0;
        return 3;
    }
    return c < s[0] ? 0 : c < s[0] + s[1] ? 1 : c < s[0] + s[1] + s[2] ? 2 : 3;
}

int64_t rope_exponent(const SequencePlan& p, int64_t i) {
    if (p.multi != TGL_ROPE_MULTI_VISION) return i;
    const int64_t* s = p.sections;
    const int64_t c = i % (s[0] + s[1] + s[2] + s[3]);
    const int k = rope_stream(p, i);
    int64_t start = 0;
    for (int q = 0; q < k; ++q) start += s[q];
    return c - start;
}

double rope_angle(const SequencePlan& p, int64_t pos, int64_t i, double ff) {
    const double theta = std::pow(p.base, -2.0 * double(rope_exponent(p, i)) / double(p.dims)) / ff;
    const double e = double(pos) * theta;
    if (!p.yarn) return e * p.freq_scale;
    const double y = (double(i) - p.corr_low) / std::max(0.001, p.corr_high - p.corr_low);
    const double mix = (1.0 - std::min(1.0, std::max(0.0, y))) * p.ext_factor;
    return (e * p.freq_scale) * (1.0 - mix) + e * mix;
}

std::string rope_position_message(const OpInfo& info, int64_t position, int64_t value, int64_t max_positions) {
    return format("op '%s': %s holds %lld at position %lld (row-major), outside [0, %lld) (the rows of the cos/sin cache, "
                  "max_positions); positions do not wrap; nothing was written",
                  info.name, operand_label(info, false, 1).c_str(), (long long)value, (long long)position,
                  (long long)max_positions);
}

void plan_sequence(OpCall& call, const void* params) {
    call.plan.emplace<SequencePlan>();
    switch (call.info->op) {
    case TGL_OP_ROPE:
    case TGL_OP_ROPE_BACKWARD: plan_rope(call, params); break;
    case TGL_OP_FFT:
    case TGL_OP_IFFT:
        require_reserved_zero(*call.info, read_params(*call.info, params, tgl_unary_params{sizeof(tgl_unary_params), 0}).reserved);
        plan_fft(call);
        break;
    case TGL_OP_SELECTIVE_SCAN: plan_selective_scan(call, params); break;
    case TGL_OP_SAMPLE: plan_sample(call, params); break;
    default: fail(TGL_ERROR_INTERNAL, "op '%s' has no plan in family Sequence", call.info->name);
    }
}

void register_sequence_rules(std::vector<FamilyRules>& families) {
    families.push_back({OpFamily::Sequence, plan_sequence});
}

}  // namespace tgl
