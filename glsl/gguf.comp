// The GGUF block dtypes on the device (gguf.glsl decodes them; host: backends/gles/gguf_kernels.cpp):
//   PASS_DEQUANT  one invocation per 16-element unit of a row: y[row, k] = the decoded element,
//                 rounded once to Y_DTYPE (dequantize; index_select of a block table with INDEXED:
//                 y's row i0, ... is x's row index[i0], ...; a table larger than one window is
//                 bound in windows of rows [u_lo, u_hi), each dispatch writing the rows whose index
//                 lies in its window). Rows walk RANK leading dims (u_shape; x's row strides in
//                 bytes, y's in elements).
//   PASS_GEMV     linear / grouped_linear with block W read directly: y[m, n] = act(sum_k x[m, k] *
//                 W[n, k] + bias[n]); a workgroup takes GEMV_ROWS rows n of W, LANES invocations a
//                 row, each summing whole units (scale * sum(q * x) + offset * sum(x)) for every m
//                 of its GEMV_M rows of x, then a tree sum over the lanes in shared memory (so the
//                 order is fixed: the same bits every run).
// INDEXED tests tgl_op_failed() first (the index was checked by a check pass under u_check_seq), so
// a failed check writes nothing. At most 4 bindings (the GLES 3.1 minimum).
// Defines: one PASS_*; W_DTYPE (optional: else the uniform u_w_dtype); Y_DTYPE (x, bias, y: f32 or f16); WG_SIZE;
// PASS_DEQUANT: RANK (1..7), INDEXED, I_DTYPE; PASS_GEMV: LANES (a power of two),
// HAS_BIAS, ACTIVATION, X_F16_PAIRS (x f16 with k-stride 1 and even offsets: read two a word by
// unpackHalf2x16, an exact widening).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"

#define STATUS_BINDING 3
#if defined(INDEXED)
#include "device_status.glsl"
#endif

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };
layout(std430, binding = 1) readonly buffer WBuffer { uint w_data[]; };  // the blocks
#if defined(PASS_GEMV)
layout(std430, binding = 2) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 3) readonly buffer BBuffer { uint b_data[]; };  // the bias (HAS_BIAS)
#else
layout(std430, binding = 2) readonly buffer IBuffer { uint i_data[]; };  // the index (INDEXED)
#endif

#define GGUF_WORD(i) w_data[i]
#include "gguf.glsl"
#include "store.glsl"

uniform int u_K;
uniform int u_y_offset;

// Element e (window-relative) of an f32/f16 operand array as f32.
#define LOAD_FLOAT(ARR, E) (Y_DTYPE == DT_F32 ? uintBitsToFloat(ARR[E]) : tgl_to_f32(tgl_extract(ARR[tgl_word_of(E, Y_DTYPE)], E, Y_DTYPE), Y_DTYPE))

#if defined(PASS_DEQUANT)
uniform uint u_units;      // units of all rows
uniform int u_row_units;   // units of one row: ceil(K / 16)
uniform int u_shape[RANK];
uniform int u_x_str[RANK];  // bytes (a multiple of the block's bytes per B elements)
uniform int u_y_str[RANK];
uniform int u_x_base;      // byte of x's row 0 in its window
uniform int u_y_k_str;
#if defined(INDEXED)
uniform int u_i_offset;
uniform int u_i_str;
uniform int u_lo;  // the table's rows [u_lo, u_hi) in this window (u_x_base: row u_lo)
uniform int u_hi;
#endif

void main() {
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (g >= u_units) return;
#if defined(INDEXED)
    if (tgl_op_failed()) return;
#endif
    int row = int(g / uint(u_row_units)), unit = int(g % uint(u_row_units));
    int x_at = u_x_base, y_at = u_y_offset;
    for (int d = RANK - 1; d >= 0; --d) {
        int i = row % u_shape[d];
        row /= u_shape[d];
        y_at += i * u_y_str[d];
#if defined(INDEXED)
        if (d == 0) {
            i = TGL_LOAD_INDEX(i_data, u_i_offset + i * u_i_str, I_DTYPE).x;
            if (i < u_lo || i >= u_hi) return;  // another window's row
            i -= u_lo;
        }
#endif
        x_at += i * u_x_str[d];
    }
    float q[16], scale, offset;
    gguf_unit(uint(x_at + (unit / gguf_units()) * gguf_bytes()), unit % gguf_units(), q, scale, offset);
    int k0 = unit * 16;
    for (int i = 0; i < 16; ++i) {
        if (k0 + i >= u_K) break;
        float v = scale * q[i] + offset;
        y_store_bits(y_at + (k0 + i) * u_y_k_str, tgl_from_f32(v, Y_DTYPE));
    }
}
#endif

#if defined(PASS_GEMV)
#include "activation.glsl"
#define GEMV_ROWS (WG_SIZE / LANES)
#define GEMV_M 8  // rows of x per workgroup row of the grid (u_M of them used)
uniform int u_N;
uniform int u_M;           // rows of x (a workgroup row of the grid per GEMV_M of them)
uniform int u_w_base;      // byte of W's row 0 (expert 0) in its window
uniform int u_w_n_str;     // bytes between rows of W
uniform int u_x_offset;
uniform int u_x_m_str;
uniform int u_x_k_str;
uniform int u_y_m_str;
uniform int u_y_n_str;
uniform int u_row_groups;  // workgroups along n
#if defined(HAS_BIAS)
uniform int u_b_offset;
uniform int u_b_n_str;
#endif

shared float s_part[WG_SIZE * GEMV_M];

void main() {
    uint group = tgl_group_index();
    int lane = int(gl_LocalInvocationID.x) % LANES, r = int(gl_LocalInvocationID.x) / LANES;
    int n = int(group % uint(u_row_groups)) * GEMV_ROWS + r;
    int m0 = int(group / uint(u_row_groups)) * GEMV_M;
    int w_row = u_w_base + n * u_w_n_str;
    float acc[GEMV_M];
    for (int m = 0; m < GEMV_M; ++m) acc[m] = 0.0;
    int row_units = (u_K + 15) / 16;
    if (n < u_N) {
        for (int unit = lane; unit < row_units; unit += LANES) {
            float q[16], scale, offset;
            gguf_unit(uint(w_row + (unit / gguf_units()) * gguf_bytes()), unit % gguf_units(), q, scale, offset);
            int k0 = unit * 16, kn = min(16, u_K - k0);
            for (int m = 0; m < GEMV_M; ++m) {
                if (m0 + m >= u_M) break;
                int xa = u_x_offset + (m0 + m) * u_x_m_str + k0 * u_x_k_str;
                float sqx = 0.0, sx = 0.0;
                // Branch-free loops of constant trip count (unrolled: q stays in registers); past K
                // (the row's last unit only) x is read at its last element and taken as 0, since the
                // block's tail may hold anything and x ends there.
#if defined(X_F16_PAIRS)
                // x f16, contiguous along k from an even element: two a word
                for (int i = 0; i < 8; ++i) {
                    vec2 xv = unpackHalf2x16(x_data[(xa >> 1) + min(i, (kn - 1) >> 1)]);
                    xv.x = 2 * i < kn ? xv.x : 0.0;
                    xv.y = 2 * i + 1 < kn ? xv.y : 0.0;
                    sqx += q[2 * i] * xv.x + q[2 * i + 1] * xv.y;
                    sx += xv.x + xv.y;
                }
#else
                for (int i = 0; i < 16; ++i) {
                    float xv = LOAD_FLOAT(x_data, xa + min(i, kn - 1) * u_x_k_str);
                    xv = i < kn ? xv : 0.0;
                    sqx += q[i] * xv;
                    sx += xv;
                }
#endif
                acc[m] += scale * sqx + offset * sx;
            }
        }
    }
    for (int m = 0; m < GEMV_M; ++m) s_part[m * WG_SIZE + int(gl_LocalInvocationID.x)] = acc[m];
    barrier();
    for (int half_lanes = LANES / 2; half_lanes > 0; half_lanes /= 2) {
        if (lane < half_lanes)
            for (int m = 0; m < GEMV_M; ++m) {
                if (m0 + m >= u_M) break;  // the workgroup's rows of x: the same for all its invocations
                s_part[m * WG_SIZE + int(gl_LocalInvocationID.x)] += s_part[m * WG_SIZE + int(gl_LocalInvocationID.x) + half_lanes];
            }
        barrier();
    }
    if (lane != 0 || n >= u_N) return;
    float b = 0.0;
#if defined(HAS_BIAS)
    b = LOAD_FLOAT(b_data, u_b_offset + n * u_b_n_str);
#endif
    for (int m = 0; m < GEMV_M; ++m) {
        if (m0 + m >= u_M) break;
        float v = apply_activation(s_part[m * WG_SIZE + int(gl_LocalInvocationID.x)] + b);
        y_store_bits(u_y_offset + (m0 + m) * u_y_m_str + n * u_y_n_str, tgl_from_f32(v, Y_DTYPE));
    }
}
#endif
