// The Conv family (ConvPlan, backends/common/conv_rules.h): convolution 1d/2d/3d, transposed
// convolution, conv2d backward input (a transposed relation) and backward weight, all in 3 spatial
// dims (1d/2d have leading dims of size 1) over any element strides (channels-last is strides).
//
// Implicit GEMM per group g (one workgroup: a BM x BN tile of C in registers, TM x TN per
// invocation at rows ty + i*WG_Y and columns tx + j*WG_X as in matmul.comp; K in steps of BK staged
// through shared memory; the im2col element is computed by the loader, never materialised):
//   MODE_FORWARD / MODE_TRANSPOSED  C[m][col] = y[n, g*cy + m, o], col = (n, o), K = (c, j):
//                                   A[m][k] = w(m, c, j), B[k][col] = x at the position that tap j
//                                   of o reads (forward: o*stride - pad + j*dil; transposed: the i
//                                   with i*stride - pad + j*dil = o), 0 outside.
//   MODE_WGRAD                      C[m][col] = dw(m, c, j), col = (c, j), K = (n, o):
//                                   A[m][k] = dy[n, g*cy + m, o], B[k][col] = the x tap as forward;
//                                   with db: the workgroups of column tile 0 also sum A's rows.
// Each K step first decodes its BK values of k once into shared memory (s_kj, s_koff), so the
// loads do no divisions; each invocation's load column is fixed (NT is a multiple of BN) and
// decoded once. Epilogue: bias, apply_activation, then one rounding to DTYPE at the store.
// SPLIT_K (few tiles, a long K): workgroup (tile, split s) sums only K range s and stores f32
// partials to a scratch block (binding 2: [s][g][m][col], then the db partials [s][g][m] from
// u_db_part); PASS_REDUCE then sums the splits of each C element (and db) and runs the epilogue.
// X_C_FAST (forward/transposed, x channels-last): K ordered (tap, channel) with the channel fastest
// and the B tile loaded k-fast, so that its loads are consecutive in memory.
// DIRECT (forward/transposed, few output channels per group, e.g. depthwise): one invocation per
// output element, a plain loop over (c, j).
// The bias (db) is a uniform switch, not a variant: binding 3 is always bound (a stand-in when
// absent), which halves the variants to compile.
//
// Defines: MODE_FORWARD | MODE_TRANSPOSED | MODE_WGRAD; DIRECT or PASS_REDUCE (+ WG_SIZE), or BM,
// BN, BK, TM, TN, WG_X, WG_Y (+ SPLIT_K, X_C_FAST, Y_C_FAST); DTYPE (= Y_DTYPE); ACTIVATION.
// Bindings: 0 x (PASS_REDUCE: the partials), 1 A's source (w; WGRAD: dy), 2 the output (y; WGRAD:
// dw; SPLIT_K: the partials), 3 bias (WGRAD: db).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "activation.glsl"

#define Y_DTYPE DTYPE

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

#define LOAD(ARR, I) tgl_to_f32(tgl_extract(ARR[tgl_word_of(I, DTYPE)], I, DTYPE), DTYPE)

int dot3(ivec3 a, int s0, int s1, int s2) { return a.x * s0 + a.y * s1 + a.z * s2; }

bool inside3(ivec3 i) { return all(greaterThanEqual(i, ivec3(0))) && all(lessThan(i, u_in)); }

// The output element (n, channel co, position o) of y: bias, activation, one rounding.
void store_y(int n, int co, ivec3 o, float v) {
    if (u_has_bias != 0) v += LOAD(b_data, u_b_off + co * u_bs);
    v = apply_activation(v);
    y_store_bits(u_y_off + n * u_ys[0] + co * u_ys[1] + dot3(o, u_ys[2], u_ys[3], u_ys[4]), tgl_from_f32(v, DTYPE));
}

// Element (m, col) of group g's C: y (bias, activation) or dw.
void store_c(int g, int m, int col, float v) {
#if defined(MODE_WGRAD)
    int kvol = u_k.x * u_k.y * u_k.z;
    int c = col / kvol;
    ivec3 j = unflatten3(col % kvol, u_k);
    y_store_bits(u_w_off + g * u_w_g + m * u_w_m + c * u_w_c + dot3(j, u_ws.x, u_ws.y, u_ws.z), tgl_from_f32(v, DTYPE));
#else
    int cvol = u_qout.x * u_qout.y * u_qout.z;
    store_y(col / cvol, g * u_cy + m, phase_o(col % cvol), v);
#endif
}

#if defined(MODE_WGRAD)
// db[co]; it may share words with neighbours that other invocations store (f16).
void store_db(int co, float v) {
    int bi = u_b_off + co * u_bs;
    uint bits = tgl_from_f32(v, DTYPE);
    if (tgl_dt_log2size(DTYPE) == 2) {
        b_data[bi] = bits;
    } else {
        int w = tgl_word_of(bi, DTYPE);
        uint sh = tgl_shift_of(bi, DTYPE);
        atomicAnd(b_data[w], ~(0xffffu << sh));
        atomicOr(b_data[w], bits << sh);
    }
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
                   LOAD(a_data, wb + c * u_w_c + dot3(j, u_ws.x, u_ws.y, u_ws.z));
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
        store_c(g, r / u_N, r % u_N, v);
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

#else  // the implicit GEMM

// The register tile's rows (m) and columns (n) run along the invocation index RX (rows) and CX
// (columns): rows along y, columns along x as in matmul.comp, or, for a channels-last y (Y_C_FAST),
// rows (channels) along x, so that consecutive invocations store consecutive channels.
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
#if COL_STEP * TN != BN || ROW_STEP * TM != BM
#error "conv.comp: the invocations along the columns times TN must be BN, along the rows times TM must be BM"
#endif
#define NT (WG_X * WG_Y)
#if (NT % BN) != 0 || ((BM * BK) % NT) != 0 || ((BN * BK) % NT) != 0
#error "conv.comp: the invocation count must divide BN, BM * BK and BN * BK"
#endif

layout(local_size_x = WG_X, local_size_y = WG_Y) in;

#define SA (BM + 1)
#define SB (BN + 1)
shared float s_a[BK * SA];  // [k][m]
shared float s_b[BK * SB];  // [k][n]
// Per k of the step. FORWARD/TRANSPOSED: s_kj = j * dil, s_koff = (c * x channel stride, w offset
// of (c, j)). WGRAD: s_kj = o * stride - pad, s_koff = (n * x batch stride, dy offset of (n, o)).
shared ivec3 s_kj[BK];
shared ivec2 s_koff[BK];

// Load column gcol of the B tile: its x offset and the position part that each k's s_kj completes.
void decode_col(int gcol, int xg, out int col_x, out ivec3 cpos) {
#if defined(MODE_WGRAD)
    int kvol = u_k.x * u_k.y * u_k.z;
    col_x = xg + (gcol / kvol) * u_xs[1];
    cpos = unflatten3(gcol % kvol, u_k) * u_dil;  // j * dil
#else
    int cvol = u_qout.x * u_qout.y * u_qout.z;
    col_x = xg + (gcol / cvol) * u_xs[0];
    ivec3 o = phase_o(gcol % cvol);
#if defined(MODE_TRANSPOSED)
    cpos = o + u_pad;  // i * stride = o + pad - j * dil
#else
    cpos = o * u_stride - u_pad;  // i = o * stride - pad + j * dil
#endif
#endif
}

// B[kk][the column of (col_x, cpos)]: the x element, 0 outside x.
float load_b(int kk, int col_x, ivec3 cpos) {
#if defined(MODE_TRANSPOSED)
    ivec3 num = cpos - s_kj[kk];  // a multiple of stride: the phase has only such taps
    if (any(lessThan(num, ivec3(0)))) return 0.0;
    ivec3 i = num / u_stride;
#else
    ivec3 i = cpos + s_kj[kk];
#endif
    if (!inside3(i)) return 0.0;
    return LOAD(x_data, col_x + s_koff[kk].x + dot3(i, u_xs[2], u_xs[3], u_xs[4]));
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
    int ovol = u_out.x * u_out.y * u_out.z;
    int xg = u_x_off + g * u_cx * u_xs[1];  // x of this group's first channel
#if defined(MODE_WGRAD)
    int ab = u_y_off + g * u_cy * u_ys[1];  // dy of this group's first channel
#else
    int ab = u_w_off + g * u_w_g;
#endif

#if defined(X_C_FAST)
    // Channels-last x: K runs channel-fastest and the B loads k-fast (consecutive invocations read
    // consecutive channels); each invocation loads LB fixed columns, decoded once.
#define LB ((BN * BK) / NT)
    int lcol_x[LB];
    ivec3 lcpos[LB];
    bool lok[LB];
    for (int l = 0; l < LB; ++l) {
        int gcol = n0 + (tid + l * NT) / BK;
        lok[l] = gcol < u_N;
        decode_col(lok[l] ? gcol : 0, xg, lcol_x[l], lcpos[l]);
    }
#else
    // This invocation's load column (fixed: NT is a multiple of BN).
    int gcol = n0 + tid % BN;
    bool col_ok = gcol < u_N;
    int col_x;
    ivec3 cpos;
    decode_col(col_ok ? gcol : 0, xg, col_x, cpos);
#endif

    float acc[TM * TN];
    for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0;
#if defined(MODE_WGRAD)
#define DO_DB
    float db = 0.0;
    bool do_db = u_has_bias != 0 && tn == 0 && tid < BM;
#endif

    for (int k0 = kbeg; k0 < kend; k0 += BK) {
        if (tid < BK) {
            int gk = min(k0 + tid, kend - 1);
#if defined(MODE_WGRAD)
            int n = gk / ovol;
            ivec3 o = unflatten3(gk % ovol, u_out);
            s_kj[tid] = o * u_stride - u_pad;
            s_koff[tid] = ivec2(n * u_xs[0], n * u_ys[0] + dot3(o, u_ys[2], u_ys[3], u_ys[4]));
#else
#if defined(X_C_FAST)
            int c = gk % u_cx;
            ivec3 j = phase_j(gk / u_cx);
#else
            int tvol = u_jcnt.x * u_jcnt.y * u_jcnt.z;
            int c = gk / tvol;
            ivec3 j = phase_j(gk % tvol);
#endif
            s_kj[tid] = j * u_dil;
            s_koff[tid] = ivec2(c * u_xs[1], c * u_w_c + dot3(j, u_ws.x, u_ws.y, u_ws.z));
#endif
        }
        memoryBarrierShared();
        barrier();
        for (int l = 0; l < (BM * BK) / NT; ++l) {
            int e = tid + l * NT;
            int kk = e % BK;
            int mm = e / BK;
            float v = 0.0;
            if (m0 + mm < u_M && k0 + kk < kend) {
#if defined(MODE_WGRAD)
                int ai = ab + (m0 + mm) * u_ys[1] + s_koff[kk].y;
#else
                int ai = ab + (m0 + mm) * u_w_m + s_koff[kk].y;
#endif
                v = LOAD(a_data, ai);
            }
            s_a[kk * SA + mm] = v;
        }
        for (int l = 0; l < (BN * BK) / NT; ++l) {
#if defined(X_C_FAST)
            int e = tid + l * NT;
            int kk = e % BK;
            float v = lok[l] && k0 + kk < kend ? load_b(kk, lcol_x[l], lcpos[l]) : 0.0;
            s_b[kk * SB + e / BK] = v;
#else
            int kk = (tid + l * NT) / BN;
            float v = col_ok && k0 + kk < kend ? load_b(kk, col_x, cpos) : 0.0;
            s_b[kk * SB + tid % BN] = v;
#endif
        }
        memoryBarrierShared();
        barrier();
#if defined(DO_DB)
        if (do_db)
            for (int kk = 0; kk < BK; ++kk) db += s_a[kk * SA + tid];
#endif
        for (int kk = 0; kk < BK; ++kk) {
            float ar[TM];
            float br[TN];
            for (int i = 0; i < TM; ++i) ar[i] = s_a[kk * SA + ROW_ID + i * ROW_STEP];
            for (int j = 0; j < TN; ++j) br[j] = s_b[kk * SB + COL_ID + j * COL_STEP];
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) acc[i * TN + j] += ar[i] * br[j];
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

    for (int i = 0; i < TM; ++i) {
        int gm = m0 + ROW_ID + i * ROW_STEP;
        if (gm >= u_M) continue;
        for (int j = 0; j < TN; ++j) {
            int gn = n0 + COL_ID + j * COL_STEP;
            if (gn >= u_N) continue;
#if defined(SPLIT_K)
            y_data[(split * u_groups + g) * u_M * u_N + gm * u_N + gn] = floatBitsToUint(acc[i * TN + j]);
#else
            store_c(g, gm, gn, acc[i * TN + j]);
#endif
        }
    }
}

#endif
