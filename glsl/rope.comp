// rope and rope_backward (SequencePlan, backends/common/sequence_rules.h): one invocation per
// "unit" of a row: units 0..n_rot/2-1 rotate one pair, units n_rot/2.. copy one element of the
// unrotated tail. Row dims (x.shape[:-1], merged) with strides of x, y, positions (role-major per
// dim: u_row_stride[d * 3 + role]).
// The angle of pair i in f32: theta_i = exp(j * u_log_theta) (u_log_theta = -2 ln(base) / dims;
// j = i but for VISION), e = f32(pos) * theta_i (/ freq_factors[i] with FF); plain:
// a = e * u_freq_scale; YARN: a = (e * fs) (1 - mix) + e mix with
// mix = (1 - clamp((i - low) / max(0.001, high - low), 0, 1)) * ext_factor. cos/sin: math.glsl's
// (exact argument reduction, so large angles keep their accuracy); both times u_mscale.
// MULTI (1 SECTIONS, 2 INTERLEAVED, 3 VISION: TGL_ROPE_MULTI_*): pair i reads position stream
// stream_of(i) (u_stream_stride apart), the rule of rope_stream() / rope_exponent().
// The cos/sin cache takes two passes over a scratch block (host: run_rope):
//   words [0] fail flag (the positions check, pack.comp's PACK_INDEX), [1, 1 + P) the positions,
//   packed row-major (streams last), [u_table, ...) per position row k: cos[0..half), sin[0..half).
//   PASS_GATHER: one invocation per (position row k, pair i) copies cos[p, i] and sin[p, i] there.
//   CACHE (the main pass): the positions binding is the scratch; o.z is the position row; nothing
//   is written when the flag is set.
// Defines: Y_DTYPE, RANK (0..7), NEOX, BACKWARD (rotate by -a), YARN, FF, MULTI, PASS_GATHER,
// CACHE, WG_SIZE.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"

layout(local_size_x = WG_SIZE) in;

#if defined(MULTI)
uniform int u_sections[4];
// The position stream of pair i (rope_stream).
int stream_of(int i) {
    int c = i % (u_sections[0] + u_sections[1] + u_sections[2] + u_sections[3]);
#if MULTI == 2
    if (c % 3 == 1 && c < 3 * u_sections[1]) return 1;
    if (c % 3 == 2 && c < 3 * u_sections[2]) return 2;
    if (c % 3 == 0 && c < 3 * u_sections[0]) return 0;
    return 3;
#else
    int s01 = u_sections[0] + u_sections[1];
    return c < u_sections[0] ? 0 : c < s01 ? 1 : c < s01 + u_sections[2] ? 2 : 3;
#endif
}
#else
int stream_of(int i) { return 0; }
#endif

#if defined(PASS_GATHER)

layout(std430, binding = 0) readonly buffer CosBuffer { uint cos_data[]; };
layout(std430, binding = 1) readonly buffer SinBuffer { uint sin_data[]; };
layout(std430, binding = 2) buffer ScratchBuffer { uint s_data[]; };

uniform uint u_count;   // position rows * half
uniform int u_half;
uniform int u_streams;  // positions' streams (1 without MULTI)
uniform int u_table;    // the first word of the gathered table
uniform int u_cos[3];   // offset, stride along positions, stride along pairs
uniform int u_sin[3];

void main() {
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (g >= u_count || s_data[0] != 0u) return;  // a position outside the cache: nothing is written
    int k = int(g / uint(u_half));
    int i = int(g) - k * u_half;
    int p = int(s_data[1 + k * u_streams + stream_of(i)]);
    int co = u_cos[0] + p * u_cos[1] + i * u_cos[2], so = u_sin[0] + p * u_sin[1] + i * u_sin[2];
    float c = tgl_to_f32(tgl_extract(cos_data[tgl_word_of(co, Y_DTYPE)], co, Y_DTYPE), Y_DTYPE);
    float s = tgl_to_f32(tgl_extract(sin_data[tgl_word_of(so, Y_DTYPE)], so, Y_DTYPE), Y_DTYPE);
    int t = u_table + k * 2 * u_half + i;
    s_data[t] = floatBitsToUint(c);
    s_data[t + u_half] = floatBitsToUint(s);
}

#else

layout(std430, binding = 0) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 1) readonly buffer PBuffer { int p_data[]; };
layout(std430, binding = 2) buffer YBuffer { uint y_data[]; };
#if defined(FF)
layout(std430, binding = 3) readonly buffer FBuffer { uint ff_data[]; };
uniform int u_ff[2];  // offset, stride (f32 elements)
#endif

#include "store.glsl"

uniform uint u_count;  // rows * units
uniform uint u_units;  // n_rot / 2 + (D - n_rot)
uniform int u_half;    // n_rot / 2
uniform int u_offset[3];
uniform int u_x_d;
uniform int u_y_d;
#if RANK > 0
uniform int u_row_shape[RANK];
uniform int u_row_stride[RANK * 3];
#endif
#if defined(CACHE)
uniform int u_table;
#else
uniform float u_log_theta;
uniform float u_freq_scale;
uniform float u_ext;
uniform float u_corr_low;
uniform float u_corr_high;
uniform int u_stream_stride;
#endif
uniform float u_mscale;

float x_at(int o) { return tgl_to_f32(tgl_extract(x_data[tgl_word_of(o, Y_DTYPE)], o, Y_DTYPE), Y_DTYPE); }

void main() {
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (g >= u_count) return;
#if defined(CACHE)
    if (p_data[0] != 0) return;  // a position outside the cache: nothing is written
#endif
    uint row = g / u_units;
    int unit = int(g - row * u_units);
    ivec3 o = ivec3(u_offset[0], u_offset[1], u_offset[2]);
#if RANK > 0
    uint rest = row;
    for (int d = RANK - 1; d >= 0; --d) {
        uint n = uint(u_row_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        o += c * ivec3(u_row_stride[d * 3], u_row_stride[d * 3 + 1], u_row_stride[d * 3 + 2]);
    }
#endif
    if (unit >= u_half) {  // the unrotated tail: a copy of the element
        int j = unit + u_half;
        y_store_bits(o.y + j * u_y_d, tgl_extract(x_data[tgl_word_of(o.x + j * u_x_d, Y_DTYPE)], o.x + j * u_x_d, Y_DTYPE));
        return;
    }
    int i = unit;
#if defined(NEOX)
    int j0 = i, j1 = i + u_half;
#else
    int j0 = 2 * i, j1 = 2 * i + 1;
#endif
#if defined(CACHE)
    int t = u_table + o.z * 2 * u_half + i;
    float cs = intBitsToFloat(p_data[t]) * u_mscale;
    float sn = intBitsToFloat(p_data[t + u_half]) * u_mscale;
#else
    int exponent = i;
#if defined(MULTI)
#if MULTI == 3
    {  // VISION: the index within the pair's section (rope_exponent)
        int c = i % (u_sections[0] + u_sections[1] + u_sections[2] + u_sections[3]);
        int k = stream_of(i);
        for (int q = 0; q < k; ++q) c -= u_sections[q];
        exponent = c;
    }
#endif
#endif
    float theta = tgl_exp(float(exponent) * u_log_theta);
    float e = float(p_data[o.z + stream_of(i) * u_stream_stride]) * theta;
#if defined(FF)
    e /= uintBitsToFloat(ff_data[u_ff[0] + i * u_ff[1]]);
#endif
#if defined(YARN)
    float ramp = (float(i) - u_corr_low) / max(0.001, u_corr_high - u_corr_low);
    float mix_ = (1.0 - min(1.0, max(0.0, ramp))) * u_ext;
    float a = (e * u_freq_scale) * (1.0 - mix_) + e * mix_;
#else
    float a = e * u_freq_scale;
#endif
    float cs = tgl_cos(a) * u_mscale;
    float sn = tgl_sin(a) * u_mscale;
#endif
#if defined(BACKWARD)
    sn = -sn;
#endif
    float x0 = x_at(o.x + j0 * u_x_d), x1 = x_at(o.x + j1 * u_x_d);
    y_store_bits(o.y + j0 * u_y_d, tgl_from_f32(x0 * cs - x1 * sn, Y_DTYPE));
    y_store_bits(o.y + j1 * u_y_d, tgl_from_f32(x0 * sn + x1 * cs, Y_DTYPE));
}

#endif
