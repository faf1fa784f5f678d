// selective_scan (Mamba's selective_scan_ref; SequencePlan, sequence_rules.h). Every input was
// first packed by pack.comp into one f32 block p_data (row-major, at u_off[k]: 0 u,
// 1 delta, 2 A, 3 Bm, 4 Cm, 5 Dskip, 6 z, 7 delta_bias), so the scan binds at most 3 blocks
// (p_data, y, last_state) whatever the operands: within OpenGL ES 3.1's minimum of 4.
// A workgroup of WG_SIZE invocations holds WG_SIZE / NP channels (b, d); each channel's NP lanes
// (NP a power of two) own the states n = lane + m NP (m < PER), kept in registers; the time loop
// is sequential: per step each lane updates its states, x = exp(dt A) x + dt B u, and the lanes'
// partial sums of C x meet in shared memory (blocks of TS steps, see below). Everything in f32.
// Defines: Y_DTYPE, NP, PER, TS (steps per block, <= NP), HAS_D, HAS_Z, HAS_BIAS, HAS_STATE, STATE_IN
// (with HAS_STATE: last_state holds the initial state, read first), SOFTPLUS, WG_SIZE, CARRY.
// A dispatch runs the steps [u_t_begin, u_t_end). A sequence longer than one invocation's loop budget
// runs in chunks of steps, one dispatch each (CARRY): a chunk after the first starts from the f32
// states the previous one left in p_data at u_carry_off (bit 0 of u_carry), a chunk before the
// last leaves its states there (bit 1) instead of in last_state: the same f32 recurrence, bit for
// bit, as one walk.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"

layout(local_size_x = WG_SIZE) in;

#if defined(CARRY)
layout(std430, binding = 0) buffer PBuffer { float p_data[]; };
uniform int u_carry_off;  // the chunks' f32 states, (B * D, N) row-major
uniform uint u_carry;     // bit 0: start from the carried states; bit 1: leave the states there
#else
layout(std430, binding = 0) readonly buffer PBuffer { float p_data[]; };
#endif
layout(std430, binding = 1) buffer YBuffer { uint y_data[]; };
#if defined(HAS_STATE)
layout(std430, binding = 2) buffer SBuffer { uint s_data[]; };
#endif

#include "store.glsl"

uniform uint u_channels;  // B * D
uniform int u_dim;        // D
uniform int u_len;        // L
uniform int u_t_begin;    // the steps this dispatch runs: [u_t_begin, u_t_end)
uniform int u_t_end;
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
        xs[m] = 0.0;
#if defined(CARRY)
        bool carried = (u_carry & 1u) != 0u;
        if (carried && n < u_n) xs[m] = p_data[u_carry_off + bd * u_n + n];
#else
        bool carried = false;
#endif
#if defined(STATE_IN)
        // the carried state x_{-1}, read from last_state before this invocation writes it
        int so = u_s_off + b * u_s_stride[0] + d * u_s_stride[1] + n * u_s_stride[2];
        if (!carried && n < u_n) xs[m] = tgl_to_f32(tgl_extract(s_data[tgl_word_of(so, Y_DTYPE)], so, Y_DTYPE), Y_DTYPE);
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
    for (int t0 = u_t_begin; t0 < u_t_end; t0 += TS) {
        for (int tt = 0; tt < TS; ++tt) {
            int t = t0 + tt;
            float part = 0.0;
            if (t < u_t_end) {
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
        if (lane < uint(TS) && t < u_t_end && live) {
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
#if defined(CARRY)
    if ((u_carry & 2u) != 0u) {
        if (live)
            for (int m = 0; m < PER; ++m) {
                int n = int(lane) + m * NP;
                if (n < u_n) p_data[u_carry_off + bd * u_n + n] = xs[m];
            }
        return;
    }
#endif
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
