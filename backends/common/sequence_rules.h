// Shape rules and index plan of the Sequence family (rotary embedding (and its backward), FFT, selective scan, token sampling).
// Included by validate.h; plan_sequence() is called by validate_op() for every op of the family.
//
// rope / rope_backward: rows = every index of x.shape[:-1] (row-major), each row D elements; per
//   row dim the strides of x, y and positions (0 where positions broadcast; multi-section rope:
//   of positions' dims but its last, the streams), and x/y strides along D. The angle scalars are
//   derived here once, in double (rope_angle() is the reference); rope_stream() and
//   rope_exponent() are multi-section rope's rule (glsl/rope.comp has its GLSL twin).
// fft / ifft: rows = x.shape[:-2]; per row n complex elements; strides along n and along (re, im).
// selective_scan: the dims (B, D, L, N) and which optional operands are present; kernels walk
//   the operands' own strides.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>
#include <string>

namespace tgl {

struct OpCall;
struct OpInfo;

struct SequencePlan {
    // Roles of the row-walking ops: x (input), y (output), p (positions; rope only).
    enum Role { kX, kY, kP, kRoles };
    int64_t rows = 0;
    int row_rank = 0;
    int64_t row_shape[TGL_MAX_RANK] = {};
    int64_t row_strides[kRoles][TGL_MAX_RANK] = {};
    int64_t offset[kRoles] = {};

    // rope
    int64_t D = 0, n_rot = 0;
    int64_t x_d_stride = 0, y_d_stride = 0;
    bool neox = false, backward = false;
    double base = 10000.0;       // theta_base, NTK-adjusted
    double freq_scale = 1.0;     // 1 / factor for LINEAR and YARN, else 1
    double ext_factor = 0.0;     // YARN's mix (0: none)
    double corr_low = 0.0, corr_high = 0.0;  // YARN's correction dims
    double mscale = 1.0;
    bool yarn = false;
    int64_t dims = 0;            // n_rot (VISION: n_rot / 2): theta's and YaRN's n_dims
    // freq_factors (inputs[2]): theta_i /= ff[i]
    bool has_ff = false;
    int64_t ff_offset = 0, ff_stride = 0;
    // the cos/sin cache (inputs[3], inputs[4]): (max_positions, n_rot/2)
    bool cache = false;
    int64_t max_positions = 0;
    int64_t cos_offset = 0, sin_offset = 0, cos_strides[2] = {}, sin_strides[2] = {};
    // multi-section rope: TGL_ROPE_MULTI_*, sections, positions' streams (last dim) and its stride
    uint32_t multi = 0;
    int64_t sections[4] = {};
    int64_t streams = 1, stream_stride = 0;

    // fft / ifft
    int64_t n = 0;
    int64_t x_n_stride = 0, x_c_stride = 0, y_n_stride = 0, y_c_stride = 0;
    bool inverse = false;

    // sample: rows = B, n = V; x_n_stride / offset[kX] for logits, row_strides[kY][0] / offset[kY]
    // for token.
    float inv_temperature = 1.0f;  // f32(1 / temperature)
    bool greedy = false;           // temperature 0 or top_k 1
    int64_t top_k = 0;             // 0: off (also for top_k >= V)
    uint32_t top_p16 = 0;          // ceil(top_p * 65536); 0: off (top_p = 1)
    uint64_t seed = 0, rng_offset = 0;

    // selective_scan
    int64_t batch = 0, dim = 0, len = 0, nstate = 0;
    bool has_dskip = false, has_z = false, has_bias = false, has_state = false, softplus = false;
    bool state_in = false;  // last_state holds x_{-1} on entry (read before it is written)
};

// Reads the op's params, checks shapes and fills call.sequence. Throws tgl::Error.
void plan_sequence(OpCall& call, const void* params);

// sample: 2^(-2^-k) * 2^31 rounded, k = 1..24 (index k - 1): the factors of the integer exp2.
extern const uint32_t kSampleExp2[24];

// sample: the integer weight of a logit (tgl_sample_params' recipe), from t = (key - max) * inv_t
// in f32: z = t * f32(log2 e); 0 unless z > -24; else Q = trunc(-z * 2^24), n = Q >> 24,
// a = 2^31 times the product of kSampleExp2[k - 1] over the set bits 2^-k of the fraction
// (each product truncated: a = a * c >> 31), w = a >> (n + 7), at most 2^24.
inline uint32_t sample_weight(float t) {
    const float z = t * 1.44269504088896341f;
    if (!(z > -24.0f)) return 0;
    const uint32_t q = uint32_t(-z * 16777216.0f);
    uint64_t a = uint64_t(1) << 31;
    for (int k = 1; k <= 24; ++k)
        if (q >> (24 - k) & 1u) a = (a * kSampleExp2[k - 1]) >> 31;
    return uint32_t(a >> ((q >> 24) + 7));
}

// rope: the angle of pair i at position pos with frequency factor ff (1: none), in double (the
// CPU reference's formula).
double rope_angle(const SequencePlan& p, int64_t pos, int64_t i, double ff = 1.0);
// Multi-section rope (tgl_rope_params): the position stream of pair i (0 without multi), and the
// exponent index j of theta (i but for VISION).
int rope_stream(const SequencePlan& p, int64_t i);
int64_t rope_exponent(const SequencePlan& p, int64_t i);
// rope with a cos/sin cache: the INDEX_OUT_OF_RANGE message for element `position` (row-major)
// of positions holding `value` outside [0, max_positions).
std::string rope_position_message(const OpInfo& info, int64_t position, int64_t value, int64_t max_positions);

}  // namespace tgl
