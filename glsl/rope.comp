// rope and rope_backward (SequencePlan, backends/common/sequence_rules.h): one invocation per
// "unit" of a row: units 0..n_rot/2-1 rotate one pair, units n_rot/2.. copy one element of the
// unrotated tail. Row dims (x.shape[:-1], merged) with strides of x, y, positions (role-major per
// dim: u_row_stride[d * 3 + role]).
// The angle of pair i in f32: theta_i = exp(i * u_log_theta) (u_log_theta = -2 ln(base) / n_rot),
// e = f32(pos) * theta_i; plain: a = e * u_freq_scale; YARN: a = (e * fs) (1 - mix) + e mix with
// mix = (1 - clamp((i - low) / max(0.001, high - low), 0, 1)) * ext_factor. cos/sin: math.glsl's
// (exact argument reduction, so large angles keep their accuracy); both times u_mscale.
// Defines: Y_DTYPE, RANK (0..7), NEOX, BACKWARD (rotate by -a), YARN, WG_SIZE.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 1) readonly buffer PBuffer { int p_data[]; };
layout(std430, binding = 2) buffer YBuffer { uint y_data[]; };

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
uniform float u_log_theta;
uniform float u_freq_scale;
uniform float u_mscale;
uniform float u_ext;
uniform float u_corr_low;
uniform float u_corr_high;

float x_at(int o) { return tgl_to_f32(tgl_extract(x_data[tgl_word_of(o, Y_DTYPE)], o, Y_DTYPE), Y_DTYPE); }

void main() {
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (g >= u_count) return;
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
    float theta = tgl_exp(float(i) * u_log_theta);
    float e = float(p_data[o.z]) * theta;
#if defined(YARN)
    float ramp = (float(i) - u_corr_low) / max(0.001, u_corr_high - u_corr_low);
    float mix_ = (1.0 - min(1.0, max(0.0, ramp))) * u_ext;
    float a = (e * u_freq_scale) * (1.0 - mix_) + e * mix_;
#else
    float a = e * u_freq_scale;
#endif
    float cs = tgl_cos(a) * u_mscale;
    float sn = tgl_sin(a) * u_mscale;
#if defined(BACKWARD)
    sn = -sn;
#endif
    float x0 = x_at(o.x + j0 * u_x_d), x1 = x_at(o.x + j1 * u_x_d);
    y_store_bits(o.y + j0 * u_y_d, tgl_from_f32(x0 * cs - x1 * sn, Y_DTYPE));
    y_store_bits(o.y + j1 * u_y_d, tgl_from_f32(x0 * sn + x1 * cs, Y_DTYPE));
}
