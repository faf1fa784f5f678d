// The Conv family (ConvPlan, backends/common/conv_rules.h): convolution 1d/2d/3d, transposed
// convolution, conv2d backward input (a transposed relation) and backward weight, all in 3 spatial
// dims (1d/2d have leading dims of size 1) over any element strides (channels-last is strides).
//
// Implicit GEMM per group g (one workgroup: a BM x BN tile of C in registers, TM x TN per
// invocation in blocks of 4 consecutive rows and columns, read from shared memory as vec4; K in
// steps of BK staged through shared memory; the im2col element is computed by the loader, never
// materialised; consecutive invocations load consecutive columns, i.e. output positions):
//   MODE_FORWARD / MODE_TRANSPOSED  C[m][col] = y[n, g*cy + m, o], col = (n, o), K = (c, j):
//                                   A[m][k] = w(m, c, j), B[k][col] = x at the position that tap j
//                                   of o reads (forward: o*stride - pad + j*dil; transposed: the i
//                                   with i*stride - pad + j*dil = o), 0 outside.
//   MODE_WGRAD                      C[m][col] = dw(m, c, j), col = (c, j), K = (n, o):
//                                   A[m][k] = dy[n, g*cy + m, o], B[k][col] = the x tap as forward;
//                                   with db: the workgroups of column tile 0 also sum A's rows.
// Each K step first decodes its BK values of k once into shared memory (s_kj, s_koff), so the
// loads do no divisions; each invocation's load column is fixed (NT is a multiple of BN) and
// decoded once. The K loop is software-pipelined: the next step's global loads go to registers
// while the current step's tiles are multiplied. IN_BOUNDS (no padding, no tap past the end, e.g.
// 1x1: then the forward GEMM is a plain batched W x x_n): the B loads test no bounds.
// Epilogue: bias, apply_activation, then one rounding to DTYPE at the store, each column's output
// offset decoded once.
// ACCUMULATE (forward/transposed, a convolution run in pieces over its input channels,
// backends/gles/window_split.cpp): the output (f32) holds the earlier pieces' sum, which the
// epilogue adds before the bias and the activation (those only in the last piece). Y_F32: the
// output is f32 whatever DTYPE (an f16 op's pieces accumulate in an f32 copy, rounded once after).
// SPLIT_K (few tiles, a long K): workgroup (tile, split s) sums only K range s and stores f32
// partials to a scratch block (binding 2: [s][g][m][col], then the db partials [s][g][m] from
// u_db_part); PASS_REDUCE then sums the splits of each C element (and db) and runs the epilogue.
// X_C_FAST (forward/transposed, x channels-last): K ordered (tap, channel) with the channel fastest
// and the B tile loaded k-fast, so that its loads are consecutive in memory.
// DIRECT (forward/transposed, few output channels per group, e.g. depthwise): one invocation per
// output element, a plain loop over (c, j).
// Winograd F(2x2, 3x3) (forward 3x3, stride 1, dilation 1, one group; conv_kernels.cpp): the output
// in 2x2 tiles t, each from a 4x4 input tile d at (2 ty - pad, 2 tx - pad) (0 outside x):
// Y = A^T [U . V] A per output channel, U = G g G^T (per (k, c)), V = B^T d B (per (c, t)), the sum
// over c of the 16 element products being 16 GEMMs M[e] = U[e] x V[e] (matmul.comp, run by the
// host between these passes). Three passes, each one invocation per item, f32 words in scratch:
//   WINO_WEIGHT  (k, c): U[e][k][c] at (e * cy + k) * u_wino_cp + c, into binding 2.
//   WINO_INPUT   (c, tile tl of the chunk [u_wino_t0, + u_wino_tc)): V[e][c][tl] at
//                (e * cx + c) * u_wino_tp + tl, into binding 2.
//   WINO_OUTPUT  (k, tl): reads M[e][k][tl] at (e * cy + k) * u_wino_tp + tl from binding 0, stores
//                the tile's outputs inside y through store_y (bias, activation, ACCUMULATE, Y_F32).
// Exact for small integers (G's halves are exact); see docs for the measured error. WINO_M: the
// output tile, 2 (the above) or 4 (F(4x4, 3x3): 6x6 input tiles, 36 products; the host's
// default: its constants 1/6, 1/24 are inexact, NMSE up to 3e-12 measured).
// The bias (db) is a uniform switch, not a variant: binding 3 is always bound (a stand-in when
// absent), which halves the variants to compile.
//
// Defines: MODE_FORWARD | MODE_TRANSPOSED | MODE_WGRAD; DIRECT, PASS_REDUCE or WINO_WEIGHT |
// WINO_INPUT | WINO_OUTPUT (+ WG_SIZE, WINO_M), or BM,
// BN, BK, TM, TN (multiples of 4), WG_X, WG_Y (+ SPLIT_K, X_C_FAST, Y_C_FAST, IN_BOUNDS); DTYPE
// (= Y_DTYPE: x and y, unless Y_F32; WGRAD: also dy, dw and db); A_DTYPE and B_DTYPE, of bindings
// 1 and 3 (the weight and bias may be f16/bf16 under an f32 DTYPE: mixed weights; WGRAD: DTYPE);
// ACTIVATION; ACCUMULATE.
// Bindings: 0 x (PASS_REDUCE: the partials), 1 A's source (w; WGRAD: dy), 2 the output (y; WGRAD:
// dw; SPLIT_K: the partials), 3 bias (WGRAD: db).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "activation.glsl"

#if defined(Y_F32)
#define Y_DTYPE DT_F32
#else
#define Y_DTYPE DTYPE
#endif

layout(std430, binding = 0) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 1) readonly buffer ABuffer { uint a_data[]; };
layout(std430, binding = 2) buffer YBuffer { uint y_data[]; };
#if defined(MODE_WGRAD)
layout(std430, binding = 3) buffer BBuffer { uint b_data[]; };
#else
layout(std430, binding = 3) readonly buffer BBuffer { uint b_data[]; };
#endif

#include "store.glsl"

// r = (d, h, w) of a row-major index over extent n.
ivec3 unflatten3(int r, ivec3 n) {
    int w = r % n.z;
    r /= n.z;
    return ivec3(r / n.y, r % n.y, w);
}

// Per spatial dim (d, h, w); int arrays (the plugin sets no ivec uniforms), read as ivec3.
uniform int u_in3[3];
uniform int u_out3[3];
uniform int u_k3[3];
uniform int u_stride3[3];
uniform int u_dil3[3];
uniform int u_pad3[3];
uniform int u_ws3[3];  // w (WGRAD: dw) per kernel dim
#define IV3(A) ivec3(A[0], A[1], A[2])
#define u_in IV3(u_in3)
#define u_out IV3(u_out3)
#define u_k IV3(u_k3)
#define u_stride IV3(u_stride3)
#define u_dil IV3(u_dil3)
#define u_pad IV3(u_pad3)
#define u_ws IV3(u_ws3)
// The forward/transposed GEMM's columns and taps, one phase at a time: output positions
// o = phase + q * ostep for q in qout, taps j = j0 + t * jstep for t in jcnt. Forward: phase 0,
// step 1, all taps. Transposed with stride s: one dispatch per phase o mod s, whose taps are only
// those with (o + pad - j * dil) divisible by s (the others would multiply zeros).
uniform int u_qout3[3];
uniform int u_phase3[3];
uniform int u_ostep3[3];
uniform int u_jcnt3[3];
uniform int u_j03[3];
uniform int u_jstep3[3];
#define u_qout IV3(u_qout3)
#define u_jcnt IV3(u_jcnt3)
ivec3 phase_o(int q) { return IV3(u_phase3) + unflatten3(q, u_qout) * IV3(u_ostep3); }
ivec3 phase_j(int t) { return IV3(u_j03) + unflatten3(t, u_jcnt) * IV3(u_jstep3); }
uniform int u_xs[5];   // x: n, c, d, h, w
uniform int u_ys[5];   // y (WGRAD: dy)
uniform int u_w_m;     // w per local y channel, local x channel, group
uniform int u_w_c;
uniform int u_w_g;
uniform int u_bs;
uniform int u_x_off;
uniform int u_y_off;
uniform int u_w_off;
uniform int u_b_off;
uniform int u_batch;
uniform int u_cx;      // channels per group of x and y
uniform int u_cy;
uniform int u_groups;
uniform int u_M;       // GEMM sizes of one group
uniform int u_N;
uniform int u_K;
uniform int u_tiles_n;
uniform int u_tiles_m;
uniform int u_splits;    // K ranges (1: no split)
uniform int u_k_chunk;   // K elements per range
uniform int u_db_part;   // SPLIT_K / PASS_REDUCE: where the db partials start in the scratch
uniform int u_has_bias;  // bias (WGRAD: db) given
// Winograd: the output's 2x2 tiles per image (rows, columns); this chunk's first tile and count;
// the row strides of V and M (tiles, a multiple of 4) and of U (input channels, a multiple of 4).
uniform int u_wino_tiles[2];
uniform int u_wino_t0;
uniform int u_wino_tc;
uniform int u_wino_tp;
uniform int u_wino_cp;

#define LOAD_AS(ARR, I, DT) tgl_to_f32(tgl_extract(ARR[tgl_word_of(I, DT)], I, DT), DT)
#define LOAD(ARR, I) LOAD_AS(ARR, I, DTYPE)
#define LOAD_A(I) LOAD_AS(a_data, I, A_DTYPE)
#define LOAD_BIAS(I) LOAD_AS(b_data, I, B_DTYPE)

int dot3(ivec3 a, int s0, int s1, int s2) { return a.x * s0 + a.y * s1 + a.z * s2; }

// 0 <= i < in per dim, one unsigned compare each (a negative i is a large uint).
bool inside3(ivec3 i) { return all(lessThan(uvec3(i), uvec3(u_in))); }

#if defined(ACCUMULATE)
#if defined(MODE_WGRAD) || Y_DTYPE != DT_F32
#error "conv.comp: ACCUMULATE adds to an f32 y only"
#endif
// What the earlier pieces stored at output index i.
float y_partial(int i) { return uintBitsToFloat(y_data[i]); }
#endif

// The output element (n, channel co, position o) of y: (the earlier pieces' sum,) bias,
// activation, one rounding.
void store_y(int n, int co, ivec3 o, float v) {
    int yi = u_y_off + n * u_ys[0] + co * u_ys[1] + dot3(o, u_ys[2], u_ys[3], u_ys[4]);
#if defined(ACCUMULATE)
    v += y_partial(yi);
#endif
    if (u_has_bias != 0) v += LOAD_BIAS(u_b_off + co * u_bs);
    v = apply_activation(v);
    y_store_bits(yi, tgl_from_f32(v, Y_DTYPE));
}

// Element (m, col) of group g's C lives at c_row(g, m) + c_col(col) of the output (y, WGRAD: dw),
// so that a register tile decodes each of its columns once.
int c_row(int g, int m) {
#if defined(MODE_WGRAD)
    return u_w_off + g * u_w_g + m * u_w_m;
#else
    return u_y_off + (g * u_cy + m) * u_ys[1];
#endif
}

int c_col(int col) {
#if defined(MODE_WGRAD)
    int kvol = u_k.x * u_k.y * u_k.z;
    return (col / kvol) * u_w_c + dot3(unflatten3(col % kvol, u_k), u_ws.x, u_ws.y, u_ws.z);
#else
    int cvol = u_qout.x * u_qout.y * u_qout.z;
    return (col / cvol) * u_ys[0] + dot3(phase_o(col % cvol), u_ys[2], u_ys[3], u_ys[4]);
#endif
}

// The bias of row m of group g's C (0 for dw: db is an output of its own).
float c_bias(int g, int m) {
#if defined(MODE_WGRAD)
    return 0.0;
#else
    return u_has_bias != 0 ? LOAD_BIAS(u_b_off + (g * u_cy + m) * u_bs) : 0.0;
#endif
}

// Stores C's element at output index ci: (the earlier pieces' sum,) bias, activation (y only),
// one rounding.
void store_c_at(int ci, float bias, float v) {
#if defined(ACCUMULATE)
    v += y_partial(ci);
#endif
#if !defined(MODE_WGRAD)
    v = apply_activation(v + bias);
#endif
    y_store_bits(ci, tgl_from_f32(v, Y_DTYPE));
}

#if defined(MODE_WGRAD)
// db[co]; it may share words with neighbours that other invocations store (f16).
void store_db(int co, float v) {
    int bi = u_b_off + co * u_bs;
    TGL_STORE_BITS(b_data, bi, tgl_from_f32(v, DTYPE), DTYPE)
}
#endif

#if defined(DIRECT)

layout(local_size_x = WG_SIZE) in;

void main() {
    uint e = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    int ovol = u_out.x * u_out.y * u_out.z;
    int ctot = u_groups * u_cy;
    if (e >= uint(u_batch) * uint(ctot) * uint(ovol)) return;
    int oe = int(e % uint(ovol));
    int rest = int(e / uint(ovol));
    int co = rest % ctot;
    int n = rest / ctot;
    int g = co / u_cy;
    ivec3 o = unflatten3(oe, u_out);
    int kvol = u_k.x * u_k.y * u_k.z;
    int xb = u_x_off + n * u_xs[0] + g * u_cx * u_xs[1];
    int wb = u_w_off + g * u_w_g + (co - g * u_cy) * u_w_m;
    float acc = 0.0;
    for (int c = 0; c < u_cx; ++c) {
        for (int je = 0; je < kvol; ++je) {
            ivec3 j = unflatten3(je, u_k);
#if defined(MODE_TRANSPOSED)
            ivec3 num = o + u_pad - j * u_dil;
            if (any(lessThan(num, ivec3(0))) || any(notEqual(num % u_stride, ivec3(0)))) continue;
            ivec3 i = num / u_stride;
#else
            ivec3 i = o * u_stride - u_pad + j * u_dil;
#endif
            if (!inside3(i)) continue;
            acc += LOAD(x_data, xb + c * u_xs[1] + dot3(i, u_xs[2], u_xs[3], u_xs[4])) *
                   LOAD_A(wb + c * u_w_c + dot3(j, u_ws.x, u_ws.y, u_ws.z));
        }
    }
    store_y(n, co, o, acc);
}

#elif defined(PASS_REDUCE)

layout(local_size_x = WG_SIZE) in;

void main() {
    uint e = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    int mn = u_M * u_N;
    uint nc = uint(u_groups) * uint(mn);
    if (e < nc) {
        int g = int(e / uint(mn));
        int r = int(e % uint(mn));
        float v = 0.0;
        for (int sp = 0; sp < u_splits; ++sp) v += uintBitsToFloat(x_data[(sp * u_groups + g) * mn + r]);
        store_c_at(c_row(g, r / u_N) + c_col(r % u_N), c_bias(g, r / u_N), v);
    }
#if defined(MODE_WGRAD)
    else if (u_has_bias != 0 && e < nc + uint(u_groups * u_M)) {
        int gm = int(e - nc);
        float v = 0.0;
        for (int sp = 0; sp < u_splits; ++sp) v += uintBitsToFloat(x_data[u_db_part + sp * u_groups * u_M + gm]);
        store_db(gm, v);
    }
#endif
}

#elif defined(WINO_WEIGHT) || defined(WINO_INPUT) || defined(WINO_OUTPUT)

layout(local_size_x = WG_SIZE) in;
#if WINO_M != 2 && WINO_M != 4
#error "conv.comp: WINO_M (the output tile) is 2 or 4"
#endif

// Tile tl of the chunk: its image and the (row, column) of its first output.
void wino_tile(int tl, out int n, out ivec2 o0) {
    int per = u_wino_tiles[0] * u_wino_tiles[1];
    int t = u_wino_t0 + tl;
    n = t / per;
    t -= n * per;
    o0 = WINO_M * ivec2(t / u_wino_tiles[1], t % u_wino_tiles[1]);
}

#if WINO_M == 4
// F(4x4, 3x3) (Lavin and Gray's points 0, +-1, +-2): 6x6 input tiles, 36 products.
const float kBT[36] = float[36](4.0, 0.0, -5.0, 0.0, 1.0, 0.0,  0.0, -4.0, -4.0, 1.0, 1.0, 0.0,  0.0, 4.0, -4.0, -1.0, 1.0, 0.0,
                                0.0, -2.0, -1.0, 2.0, 1.0, 0.0,  0.0, 2.0, -1.0, -2.0, 1.0, 0.0,  0.0, 4.0, 0.0, -5.0, 0.0, 1.0);
const float kG[18] = float[18](0.25, 0.0, 0.0,  -1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0,  -1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0,
                               1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0,  1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0,  0.0, 0.0, 1.0);
const float kAT[24] = float[24](1.0, 1.0, 1.0, 1.0, 1.0, 0.0,  0.0, 1.0, -1.0, 2.0, -2.0, 0.0,  0.0, 1.0, 1.0, 4.0, 4.0, 0.0,
                                0.0, 1.0, -1.0, 8.0, -8.0, 1.0);
#endif

void main() {
    uint e = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
#if WINO_M == 4 && defined(WINO_WEIGHT)
    if (e >= uint(u_cy) * uint(u_cx)) return;
    int c = int(e % uint(u_cx)), k = int(e / uint(u_cx));
    int wb = u_w_off + k * u_w_m + c * u_w_c;
    float g[9];
    for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) g[r * 3 + s] = LOAD_A(wb + r * u_ws.y + s * u_ws.z);
    float t[18];  // G g
    for (int i = 0; i < 6; ++i)
        for (int s = 0; s < 3; ++s) t[i * 3 + s] = kG[i * 3] * g[s] + kG[i * 3 + 1] * g[3 + s] + kG[i * 3 + 2] * g[6 + s];
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            float u = kG[j * 3] * t[i * 3] + kG[j * 3 + 1] * t[i * 3 + 1] + kG[j * 3 + 2] * t[i * 3 + 2];
            y_data[((i * 6 + j) * u_cy + k) * u_wino_cp + c] = floatBitsToUint(u);
        }
#elif WINO_M == 4 && defined(WINO_INPUT)
    if (e >= uint(u_cx) * uint(u_wino_tc)) return;
    int tl = int(e % uint(u_wino_tc)), c = int(e / uint(u_wino_tc));
    int n;
    ivec2 o0;
    wino_tile(tl, n, o0);
    ivec2 i0 = o0 - ivec2(u_pad3[1], u_pad3[2]);
    int xb = u_x_off + n * u_xs[0] + c * u_xs[1];
    float d[36];
    for (int r = 0; r < 6; ++r)
        for (int s = 0; s < 6; ++s) {
            ivec2 i = i0 + ivec2(r, s);
            d[r * 6 + s] = all(lessThan(uvec2(i), uvec2(u_in3[1], u_in3[2]))) ? LOAD(x_data, xb + i.x * u_xs[3] + i.y * u_xs[4]) : 0.0;
        }
    float t[36];  // B^T d
    for (int i = 0; i < 6; ++i)
        for (int s = 0; s < 6; ++s) {
            float a = 0.0;
            for (int r = 0; r < 6; ++r) a += kBT[i * 6 + r] * d[r * 6 + s];
            t[i * 6 + s] = a;
        }
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 6; ++j) {
            float v = 0.0;
            for (int s = 0; s < 6; ++s) v += t[i * 6 + s] * kBT[j * 6 + s];
            y_data[((i * 6 + j) * u_cx + c) * u_wino_tp + tl] = floatBitsToUint(v);
        }
#elif WINO_M == 4
    if (e >= uint(u_cy) * uint(u_wino_tc)) return;
    int tl = int(e % uint(u_wino_tc)), k = int(e / uint(u_wino_tc));
    int n;
    ivec2 o0;
    wino_tile(tl, n, o0);
    float m[36];
    for (int i = 0; i < 36; ++i) m[i] = uintBitsToFloat(x_data[(i * u_cy + k) * u_wino_tp + tl]);
    float t[24];  // A^T M
    for (int i = 0; i < 4; ++i)
        for (int s = 0; s < 6; ++s) {
            float a = 0.0;
            for (int r = 0; r < 6; ++r) a += kAT[i * 6 + r] * m[r * 6 + s];
            t[i * 6 + s] = a;
        }
    for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) {
            float y = 0.0;
            for (int q = 0; q < 6; ++q) y += t[r * 6 + q] * kAT[s * 6 + q];
            ivec2 o = o0 + ivec2(r, s);
            if (o.x < u_out3[1] && o.y < u_out3[2]) store_y(n, k, ivec3(0, o), y);
        }
#elif defined(WINO_WEIGHT)
    if (e >= uint(u_cy) * uint(u_cx)) return;
    int c = int(e % uint(u_cx)), k = int(e / uint(u_cx));
    int wb = u_w_off + k * u_w_m + c * u_w_c;
    vec3 g[3];
    for (int r = 0; r < 3; ++r)
        for (int s = 0; s < 3; ++s) g[r][s] = LOAD_A(wb + r * u_ws.y + s * u_ws.z);
    // G = (1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1): rows of G g, then each row times G^T.
    vec3 t[4] = vec3[4](g[0], 0.5 * (g[0] + g[1] + g[2]), 0.5 * (g[0] - g[1] + g[2]), g[2]);
    for (int i = 0; i < 4; ++i) {
        vec4 u = vec4(t[i].x, 0.5 * (t[i].x + t[i].y + t[i].z), 0.5 * (t[i].x - t[i].y + t[i].z), t[i].z);
        for (int j = 0; j < 4; ++j) y_data[((i * 4 + j) * u_cy + k) * u_wino_cp + c] = floatBitsToUint(u[j]);
    }
#elif defined(WINO_INPUT)
    if (e >= uint(u_cx) * uint(u_wino_tc)) return;
    int tl = int(e % uint(u_wino_tc)), c = int(e / uint(u_wino_tc));
    int n;
    ivec2 o0;
    wino_tile(tl, n, o0);
    ivec2 i0 = o0 - ivec2(u_pad3[1], u_pad3[2]);
    int xb = u_x_off + n * u_xs[0] + c * u_xs[1];
    vec4 d[4];
    for (int r = 0; r < 4; ++r)
        for (int s = 0; s < 4; ++s) {
            ivec2 i = i0 + ivec2(r, s);
            d[r][s] = all(lessThan(uvec2(i), uvec2(u_in3[1], u_in3[2]))) ? LOAD(x_data, xb + i.x * u_xs[3] + i.y * u_xs[4]) : 0.0;
        }
    // B^T = (1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1): rows of B^T d, then each row times B.
    vec4 t[4] = vec4[4](d[0] - d[2], d[1] + d[2], d[2] - d[1], d[1] - d[3]);
    for (int i = 0; i < 4; ++i) {
        vec4 v = vec4(t[i].x - t[i].z, t[i].y + t[i].z, t[i].z - t[i].y, t[i].y - t[i].w);
        for (int j = 0; j < 4; ++j) y_data[((i * 4 + j) * u_cx + c) * u_wino_tp + tl] = floatBitsToUint(v[j]);
    }
#else
    if (e >= uint(u_cy) * uint(u_wino_tc)) return;
    int tl = int(e % uint(u_wino_tc)), k = int(e / uint(u_wino_tc));
    int n;
    ivec2 o0;
    wino_tile(tl, n, o0);
    vec4 m[4];
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) m[i][j] = uintBitsToFloat(x_data[((i * 4 + j) * u_cy + k) * u_wino_tp + tl]);
    // A^T = (1 1 1 0; 0 1 -1 -1): rows of A^T M, then each row times A.
    vec4 t[2] = vec4[2](m[0] + m[1] + m[2], m[1] - m[2] - m[3]);
    for (int r = 0; r < 2; ++r) {
        vec2 y = vec2(t[r].x + t[r].y + t[r].z, t[r].y - t[r].z - t[r].w);
        for (int s = 0; s < 2; ++s) {
            ivec2 o = o0 + ivec2(r, s);
            if (o.x < u_out3[1] && o.y < u_out3[2]) store_y(n, k, ivec3(0, o), y[s]);
        }
    }
#endif
}

#else  // the implicit GEMM

// NVIDIA's compiler keeps the register tile in registers only where every index into it is a
// constant after unrolling (else it goes to local memory); other drivers ignore unknown pragmas.
#pragma optionNV(unroll all)

// The register tile's rows (m) and columns (n) run along the invocation index ROW_ID and COL_ID:
// rows along y, columns along x as in matmul.comp, or, for a channels-last y (Y_C_FAST), rows
// (channels) along x, so that consecutive invocations store consecutive channels. An invocation
// holds TM x TN elements in blocks of 4 consecutive rows (columns): rows 4 * (ROW_ID + i4 *
// ROW_STEP) + r for r < 4, i4 < TM / 4, so that the inner loop reads A and B from shared memory as
// vec4 (a warp reading 4 columns apiece instead of 1 moves 4 times as much per shared access).
#if defined(Y_C_FAST)
#define ROW_ID tx
#define COL_ID ty
#define ROW_STEP WG_X
#define COL_STEP WG_Y
#else
#define ROW_ID ty
#define COL_ID tx
#define ROW_STEP WG_Y
#define COL_STEP WG_X
#endif
#if (TM % 4) != 0 || (TN % 4) != 0
#error "conv.comp: TM and TN must be multiples of 4"
#endif
#if COL_STEP * TN != BN || ROW_STEP * TM != BM
#error "conv.comp: the invocations along the columns times TN must be BN, along the rows times TM must be BM"
#endif
#define NT (WG_X * WG_Y)
#if (NT % BN) != 0 || ((BM * BK) % NT) != 0 || ((BN * BK) % NT) != 0 || NT < BK || NT < BM
#error "conv.comp: the invocation count must be a multiple of BN and at least BK and BM, and divide BM * BK and BN * BK"
#endif
#define TM4 (TM / 4)
#define TN4 (TN / 4)

layout(local_size_x = WG_X, local_size_y = WG_Y) in;

// One row of vec4 per k; a vec4 of padding per row spreads the loaders' k-fast stores over banks.
#define SA4 (BM / 4 + 1)
#define SB4 (BN / 4 + 1)
shared vec4 s_a[BK * SA4];  // [k][m]
shared vec4 s_b[BK * SB4];  // [k][n]
// Per k of a step. FORWARD: s_kj = j * dil, s_koff = (x offset of (c, j) without the column's
// part, w offset of (c, j)). TRANSPOSED: as FORWARD, but s_koff.x = c * x channel stride. WGRAD:
// s_kj = o * stride - pad, s_koff = (x offset of (n, o) without the column's part, dy offset of
// (n, o)).
// Two slots: step k0 + BK is decoded while step k0's tiles are in use.
shared ivec3 s_kj[2 * BK];
shared ivec2 s_koff[2 * BK];

// Element f (in floats) of a shared vec4 array, written through a constant component (a store
// to one component, whatever the driver makes of a dynamic one).
void set_a(int f, float v) {
    int i = f >> 2, c = f & 3;
    if (c == 0) s_a[i].x = v;
    else if (c == 1) s_a[i].y = v;
    else if (c == 2) s_a[i].z = v;
    else s_a[i].w = v;
}
void set_b(int f, float v) {
    int i = f >> 2, c = f & 3;
    if (c == 0) s_b[i].x = v;
    else if (c == 1) s_b[i].y = v;
    else if (c == 2) s_b[i].z = v;
    else s_b[i].w = v;
}

// Load column gcol of the B tile: its x offset and the position part that each k's s_kj completes
// (FORWARD, WGRAD: the offset includes that position part's offset).
void decode_col(int gcol, int xg, out int col_x, out ivec3 cpos) {
#if defined(MODE_WGRAD)
    int kvol = u_k.x * u_k.y * u_k.z;
    cpos = unflatten3(gcol % kvol, u_k) * u_dil;  // j * dil
    col_x = xg + (gcol / kvol) * u_xs[1] + dot3(cpos, u_xs[2], u_xs[3], u_xs[4]);
#else
    int cvol = u_qout.x * u_qout.y * u_qout.z;
    ivec3 o = phase_o(gcol % cvol);
#if defined(MODE_TRANSPOSED)
    cpos = o + u_pad;  // i * stride = o + pad - j * dil
    col_x = xg + (gcol / cvol) * u_xs[0];
#else
    cpos = o * u_stride - u_pad;  // i = o * stride - pad + j * dil
    col_x = xg + (gcol / cvol) * u_xs[0] + dot3(cpos, u_xs[2], u_xs[3], u_xs[4]);
#endif
#endif
}

// B[kk][the column of (col_x, cpos)]: the x element, 0 outside x. IN_BOUNDS (no padding, not
// transposed): every tap of every output position lies inside x, no test needed.
float load_b(int kk, int col_x, ivec3 cpos) {
#if defined(MODE_TRANSPOSED)
    ivec3 num = cpos - s_kj[kk];  // a multiple of stride: the phase has only such taps
    if (any(lessThan(num, ivec3(0)))) return 0.0;
    ivec3 i = num / u_stride;
    if (!inside3(i)) return 0.0;
    return LOAD(x_data, col_x + s_koff[kk].x + dot3(i, u_xs[2], u_xs[3], u_xs[4]));
#else
#if !defined(IN_BOUNDS)
    if (!inside3(cpos + s_kj[kk])) return 0.0;
#endif
    return LOAD(x_data, col_x + s_koff[kk].x);
#endif
}

// Decodes the BK values of k of the K step at k0 into slot `slot` (invocations tid < BK), so that
// the loads do no divisions.
void decode_k(int tid, int k0, int kend, int slot) {
    if (tid >= BK) return;
    int gk = min(k0 + tid, kend - 1);
    int si = slot * BK + tid;
#if defined(MODE_WGRAD)
    int n = gk / (u_out.x * u_out.y * u_out.z);
    ivec3 o = unflatten3(gk % (u_out.x * u_out.y * u_out.z), u_out);
    ivec3 kj = o * u_stride - u_pad;
    s_kj[si] = kj;
    s_koff[si] = ivec2(n * u_xs[0] + dot3(kj, u_xs[2], u_xs[3], u_xs[4]), n * u_ys[0] + dot3(o, u_ys[2], u_ys[3], u_ys[4]));
#else
#if defined(X_C_FAST)
    int c = gk % u_cx;
    ivec3 j = phase_j(gk / u_cx);
#else
    int tvol = u_jcnt.x * u_jcnt.y * u_jcnt.z;
    int c = gk / tvol;
    ivec3 j = phase_j(gk % tvol);
#endif
    ivec3 kj = j * u_dil;
    s_kj[si] = kj;
#if defined(MODE_TRANSPOSED)
    int xo = c * u_xs[1];
#else
    int xo = c * u_xs[1] + dot3(kj, u_xs[2], u_xs[3], u_xs[4]);
#endif
    s_koff[si] = ivec2(xo, c * u_w_c + dot3(j, u_ws.x, u_ws.y, u_ws.z));
#endif
}

#define LA ((BM * BK) / NT)  // A and B elements that each invocation loads per K step
#define LB ((BN * BK) / NT)
// This invocation's loads, fixed for the whole K loop: A rows from ab at stride a_m, B columns
// (X_C_FAST: LB columns k-fast; else one column, consecutive invocations on consecutive columns).
int g_tid, g_m0, g_kend, g_ab, g_am;
#if defined(X_C_FAST)
int g_col_x[LB];
ivec3 g_cpos[LB];
bool g_ok[LB];
#else
int g_col_x;
ivec3 g_cpos;
bool g_ok;
#endif

// The global loads of the K step at k0 (decoded in `slot`) into registers, so that they are in
// flight while the previous step's tiles are multiplied.
void fetch(int k0, int slot, out float ra[LA], out float rb[LB]) {
    for (int l = 0; l < LA; ++l) {
        int e = g_tid + l * NT;
        int kk = e % BK;
        int mm = e / BK;
        ra[l] = g_m0 + mm < u_M && k0 + kk < g_kend ? LOAD_A(g_ab + (g_m0 + mm) * g_am + s_koff[slot * BK + kk].y) : 0.0;
    }
    for (int l = 0; l < LB; ++l) {
#if defined(X_C_FAST)
        int kk = (g_tid + l * NT) % BK;
        rb[l] = g_ok[l] && k0 + kk < g_kend ? load_b(slot * BK + kk, g_col_x[l], g_cpos[l]) : 0.0;
#else
        int kk = (g_tid + l * NT) / BN;
        rb[l] = g_ok && k0 + kk < g_kend ? load_b(slot * BK + kk, g_col_x, g_cpos) : 0.0;
#endif
    }
}

// The registers of fetch() into the shared tiles (s_a k-major, s_b k-major).
void stash(float ra[LA], float rb[LB]) {
    for (int l = 0; l < LA; ++l) {
        int e = g_tid + l * NT;
        set_a((e % BK) * (4 * SA4) + e / BK, ra[l]);
    }
    for (int l = 0; l < LB; ++l) {
        int e = g_tid + l * NT;
#if defined(X_C_FAST)
        set_b((e % BK) * (4 * SB4) + e / BK, rb[l]);
#else
        set_b((e / BN) * (4 * SB4) + e % BN, rb[l]);
#endif
    }
}

void main() {
    int tx = int(gl_LocalInvocationID.x);
    int ty = int(gl_LocalInvocationID.y);
    int tid = ty * WG_X + tx;
    uint wg = tgl_group_index();
    int tn = int(wg % uint(u_tiles_n));
    uint rest = wg / uint(u_tiles_n);
    int tm = int(rest % uint(u_tiles_m));
    int g = int(rest / uint(u_tiles_m));
    int split = g / u_groups;
    g -= split * u_groups;
    if (split >= u_splits) return;  // past the end of a split grid: uniform per workgroup
    int kbeg = split * u_k_chunk;
    int kend = min(u_K, kbeg + u_k_chunk);
    int m0 = tm * BM;
    int n0 = tn * BN;
    int xg = u_x_off + g * u_cx * u_xs[1];  // x of this group's first channel
    g_tid = tid;
    g_m0 = m0;
    g_kend = kend;
#if defined(MODE_WGRAD)
    g_ab = u_y_off + g * u_cy * u_ys[1];  // dy of this group's first channel
    g_am = u_ys[1];
#else
    g_ab = u_w_off + g * u_w_g;
    g_am = u_w_m;
#endif
#if defined(X_C_FAST)
    // Channels-last x: K runs channel-fastest and the B loads k-fast (consecutive invocations read
    // consecutive channels).
    for (int l = 0; l < LB; ++l) {
        int gcol = n0 + (tid + l * NT) / BK;
        g_ok[l] = gcol < u_N;
        decode_col(g_ok[l] ? gcol : 0, xg, g_col_x[l], g_cpos[l]);
    }
#else
    int gcol = n0 + tid % BN;
    g_ok = gcol < u_N;
    decode_col(g_ok ? gcol : 0, xg, g_col_x, g_cpos);
#endif

    vec4 acc[TM * TN4];  // acc[row * TN4 + j4]: the 4 columns of block j4
    for (int i = 0; i < TM * TN4; ++i) acc[i] = vec4(0.0);
#if defined(MODE_WGRAD)
#define DO_DB
    float db = 0.0;
    bool do_db = u_has_bias != 0 && tn == 0 && tid < BM;
#endif

    // Software pipeline: step k0's registers go to shared memory, step k0 + BK is decoded and its
    // loads issued, then step k0 is multiplied. Two barriers per step.
    float ra[LA];
    float rb[LB];
    if (kbeg < kend) decode_k(tid, kbeg, kend, 0);  // uniform per workgroup
    memoryBarrierShared();
    barrier();
    if (kbeg < kend) fetch(kbeg, 0, ra, rb);
    int slot = 0;
    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        stash(ra, rb);
        bool more = k0 + BK < kend;
        if (more) decode_k(tid, k0 + BK, kend, 1 - slot);
        memoryBarrierShared();
        barrier();
        if (more) fetch(k0 + BK, 1 - slot, ra, rb);
        slot = 1 - slot;
#if defined(DO_DB)
        if (do_db)
            for (int kk = 0; kk < BK; ++kk) db += s_a[kk * SA4 + (tid >> 2)][tid & 3];
#endif
        for (int kk = 0; kk < BK; ++kk) {
            vec4 ar[TM4];
            vec4 br[TN4];
            for (int i4 = 0; i4 < TM4; ++i4) ar[i4] = s_a[kk * SA4 + ROW_ID + i4 * ROW_STEP];
            for (int j4 = 0; j4 < TN4; ++j4) br[j4] = s_b[kk * SB4 + COL_ID + j4 * COL_STEP];
            for (int i4 = 0; i4 < TM4; ++i4)
                for (int r = 0; r < 4; ++r)
                    for (int j4 = 0; j4 < TN4; ++j4) acc[(i4 * 4 + r) * TN4 + j4] += ar[i4][r] * br[j4];
        }
        memoryBarrierShared();
        barrier();
    }

#if defined(DO_DB)
    if (do_db && m0 + tid < u_M) {
#if defined(SPLIT_K)
        y_data[u_db_part + (split * u_groups + g) * u_M + m0 + tid] = floatBitsToUint(db);
#else
        store_db(g * u_cy + m0 + tid, db);
#endif
    }
#endif

#if !defined(SPLIT_K)
    // Each column's output offset decoded once (the row part is a multiply-add).
    int cn[TN];
    for (int j4 = 0; j4 < TN4; ++j4)
        for (int c = 0; c < 4; ++c) {
            int gn = n0 + (COL_ID + j4 * COL_STEP) * 4 + c;
            cn[j4 * 4 + c] = gn < u_N ? c_col(gn) : 0;
        }
#endif
    for (int i4 = 0; i4 < TM4; ++i4)
        for (int r = 0; r < 4; ++r) {
            int gm = m0 + (ROW_ID + i4 * ROW_STEP) * 4 + r;
            if (gm >= u_M) continue;
#if defined(SPLIT_K)
            int cr = (split * u_groups + g) * u_M * u_N + gm * u_N;
#else
            int cr = c_row(g, gm);
            float bias = c_bias(g, gm);
#endif
            for (int j4 = 0; j4 < TN4; ++j4)
                for (int c = 0; c < 4; ++c) {
                    int gn = n0 + (COL_ID + j4 * COL_STEP) * 4 + c;
                    if (gn >= u_N) continue;
                    float v = acc[(i4 * 4 + r) * TN4 + j4][c];
#if defined(SPLIT_K)
                    y_data[cr + gn] = floatBitsToUint(v);
#else
                    store_c_at(cr + cn[j4 * 4 + c], bias, v);
#endif
                }
        }
}

#endif
