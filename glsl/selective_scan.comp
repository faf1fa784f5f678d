// selective_scan (Mamba's selective_scan_ref; SequencePlan, sequence_rules.h). Every input was
// first packed by pack.comp into one f32 block p_data (row-major, at u_off[k]: 0 u,
// 1 delta, 2 A, 3 Bm, 4 Cm, 5 Dskip, 6 z, 7 delta_bias), so the scan binds at most 3 blocks
// (p_data, y, last_state) whatever the operands: within OpenGL ES 3.1's minimum of 4.
// A workgroup of WG_SIZE invocations holds WG_SIZE / NP channels (b, d); each channel's NP lanes
// (NP a power of two) own the states n = lane + m NP (m < PER), kept in registers; the time loop
// is sequential: per step each lane updates its states, x = exp(dt A) x + dt B u, and the lanes'
// partial sums of C x meet in shared memory (blocks of TS steps, see below). Everything in f32.
// Defines: Y_DTYPE, NP, PER, TS (steps per block, <= NP), HAS_D, HAS_Z, HAS_BIAS, HAS_STATE, STATE_IN
// (with HAS_STATE: last_state holds the initial state, read first), SOFTPLUS, WG_SIZE.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) readonly buffer PBuffer { float p_data[]; };
layout(std430, binding = 1) buffer YBuffer { uint y_data[]; };
#if defined(HAS_STATE)
layout(std430, binding = 2) buffer SBuffer { uint s_data[]; };
#endif

#include "store.glsl"

uniform uint u_channels;  // B * D
uniform int u_dim;        // D
uniform int u_len;        // L
uniform int u_n;          // N
uniform int u_off[8];
uniform int u_y_off;
uniform int u_y_stride[3];
uniform int u_s_off;
uniform int u_s_stride[3];

// Per lane and step of a block of TS steps, the lane's partial sum of C x.
shared float s_red[WG_SIZE * TS];

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint lane = lid % uint(NP);
    uint ch = tgl_group_index() * uint(WG_SIZE / NP) + lid / uint(NP);
    // No early return: every invocation reaches the barriers; a channel past the end computes on
    // channel 0 and stores nothing.
    bool live = ch < u_channels;
    int bd = live ? int(ch) : 0;
    int b = bd / u_dim, d = bd - b * u_dim;
    float xs[PER];
    float a[PER];
    for (int m = 0; m < PER; ++m) {
        int n = int(lane) + m * NP;
#if defined(STATE_IN)
        // the carried state x_{-1}, read from last_state before this invocation writes it
        int so = u_s_off + b * u_s_stride[0] + d * u_s_stride[1] + n * u_s_stride[2];
        xs[m] = n < u_n ? tgl_to_f32(tgl_extract(s_data[tgl_word_of(so, Y_DTYPE)], so, Y_DTYPE), Y_DTYPE) : 0.0;
#else
        xs[m] = 0.0;
#endif
        a[m] = n < u_n ? p_data[u_off[2] + d * u_n + n] : 0.0;
    }
#if defined(HAS_BIAS)
    float bias = p_data[u_off[7] + d];
#else
    float bias = 0.0;
#endif
#if defined(HAS_D)
    float dskip = p_data[u_off[5] + d];
#endif
    int bdl = bd * u_len;        // (b, d, 0) in u, delta, z
    int bnl = b * u_n * u_len;   // (b, 0, 0) in Bm, Cm
    // Blocks of TS steps: each lane runs its states through the block and leaves its partial sums;
    // then lane l (< TS) adds the channel's NP partials of step t0 + l in lane order. Two barriers
    // per block instead of a tree per step.
    uint first = (lid - lane) * uint(TS);  // the channel's lane 0 in s_red
    for (int t0 = 0; t0 < u_len; t0 += TS) {
        for (int tt = 0; tt < TS; ++tt) {
            int t = t0 + tt;
            float part = 0.0;
            if (t < u_len) {
                float dt = p_data[u_off[1] + bdl + t] + bias;
#if defined(SOFTPLUS)
                dt = tgl_softplus(dt, 1.0, 20.0);
#endif
                float u = p_data[u_off[0] + bdl + t];
                for (int m = 0; m < PER; ++m) {
                    int n = int(lane) + m * NP;
                    if (n < u_n) {
                        int o = bnl + n * u_len + t;
                        xs[m] = tgl_exp(dt * a[m]) * xs[m] + dt * p_data[u_off[3] + o] * u;
                        part += p_data[u_off[4] + o] * xs[m];
                    }
                }
            }
            s_red[lid * uint(TS) + uint(tt)] = part;
        }
        memoryBarrierShared();
        barrier();
        int t = t0 + int(lane);
        if (lane < uint(TS) && t < u_len && live) {
            float yv = 0.0;
            for (uint k = 0u; k < uint(NP); ++k) yv += s_red[first + k * uint(TS) + lane];
#if defined(HAS_D)
            yv += dskip * p_data[u_off[0] + bdl + t];
#endif
#if defined(HAS_Z)
            yv *= tgl_silu(p_data[u_off[6] + bdl + t]);
#endif
            y_store_bits(u_y_off + b * u_y_stride[0] + d * u_y_stride[1] + t * u_y_stride[2], tgl_from_f32(yv, Y_DTYPE));
        }
        memoryBarrierShared();
        barrier();
    }
#if defined(HAS_STATE)
    if (live)
        for (int m = 0; m < PER; ++m) {
            int n = int(lane) + m * NP;
            if (n >= u_n) continue;
            int o = u_s_off + b * u_s_stride[0] + d * u_s_stride[1] + n * u_s_stride[2];
            TGL_STORE_BITS(s_data, o, tgl_from_f32(xs[m], Y_DTYPE), Y_DTYPE)
        }
#endif
}
