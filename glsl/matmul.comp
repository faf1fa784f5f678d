// Batched matmul C = alpha * op(A) @ op(B) + beta * C (MatmulPlan: transposes and batch
// broadcasting are already folded into the strides, which may be anything, including 0).
//
// Shared-memory tiled and register-blocked: a workgroup of (BN/TN) x (BM/TM) invocations computes
// a BM x BN tile of C; each invocation accumulates TM x TN outputs in registers, at rows
// ty + i*(BM/TM) and columns tx + j*(BN/TN) (so stores to C and reads of the B tile are
// consecutive across tx). K advances in steps of BK through tiles of A and B staged in shared
// memory. Edges (M, N, K not multiples of the tile) load zeros and skip stores.
//
// Defines: BM, BN, BK, TM, TN, WG_X, WG_Y (BM*BK and BK*BN multiples of the invocation count);
//   A_K_FAST / B_N_FAST: consecutive invocations load consecutive k of A / n of B (chosen when
//   that stride is 1, for coalescing); BATCH_RANK (0..6).
// Grid: x = N tiles, y = M tiles, z = batch, each offset by u_tile_base (dispatches are split
// to stay within the workgroup-count limits).
#include "common.glsl"

// WG_X = BN / TN and WG_Y = BM / TM come as literals (layout qualifiers take no expressions).
#if WG_X * TN != BN || WG_Y * TM != BM
#error "matmul.comp: WG_X * TN must be BN and WG_Y * TM must be BM"
#endif
#define NT (WG_X * WG_Y)

layout(local_size_x = WG_X, local_size_y = WG_Y) in;

layout(std430, binding = 0) readonly buffer ABuffer { float a_data[]; };
layout(std430, binding = 1) readonly buffer BBuffer { float b_data[]; };
layout(std430, binding = 2) buffer CBuffer { float c_data[]; };

uniform int u_M;
uniform int u_N;
uniform int u_K;
uniform int u_a_offset;
uniform int u_b_offset;
uniform int u_c_offset;
uniform int u_a_m_stride;
uniform int u_a_k_stride;
uniform int u_b_k_stride;
uniform int u_b_n_stride;
uniform int u_c_m_stride;
uniform int u_c_n_stride;
uniform float u_alpha;
uniform float u_beta;
uniform uint u_read_c;    // 0 when beta == 0: C is then never read
uniform uvec3 u_tile_base;
#if BATCH_RANK > 0
uniform int u_batch_shape[BATCH_RANK];
uniform int u_a_batch_stride[BATCH_RANK];
uniform int u_b_batch_stride[BATCH_RANK];
uniform int u_c_batch_stride[BATCH_RANK];
#endif

// Rows padded by one float: the k-fast loads then store to different banks.
#define SA (BM + 1)
#define SB (BN + 1)
shared float s_a[BK * SA];  // [k][m]
shared float s_b[BK * SB];  // [k][n]

void main() {
    int tx = int(gl_LocalInvocationID.x);
    int ty = int(gl_LocalInvocationID.y);
    int tid = ty * WG_X + tx;
    int m0 = int(u_tile_base.y + gl_WorkGroupID.y) * BM;
    int n0 = int(u_tile_base.x + gl_WorkGroupID.x) * BN;

    int a_base = u_a_offset;
    int b_base = u_b_offset;
    int c_base = u_c_offset;
#if BATCH_RANK > 0
    uint rest = u_tile_base.z + gl_WorkGroupID.z;
    for (int d = BATCH_RANK - 1; d > 0; --d) {
        uint n = uint(u_batch_shape[d]);
        int c = int(rest % n);
        rest /= n;
        a_base += c * u_a_batch_stride[d];
        b_base += c * u_b_batch_stride[d];
        c_base += c * u_c_batch_stride[d];
    }
    a_base += int(rest) * u_a_batch_stride[0];
    b_base += int(rest) * u_b_batch_stride[0];
    c_base += int(rest) * u_c_batch_stride[0];
#endif

    float acc[TM * TN];
    for (int i = 0; i < TM * TN; ++i) acc[i] = 0.0;

    for (int k0 = 0; k0 < u_K; k0 += BK) {
        for (int l = 0; l < (BM * BK) / NT; ++l) {
            int e = tid + l * NT;
#if defined(A_K_FAST)
            int kk = e % BK;
            int mm = e / BK;
#else
            int mm = e % BM;
            int kk = e / BM;
#endif
            int gm = m0 + mm;
            int gk = k0 + kk;
            float v = 0.0;
            if (gm < u_M && gk < u_K) v = a_data[a_base + gm * u_a_m_stride + gk * u_a_k_stride];
            s_a[kk * SA + mm] = v;
        }
        for (int l = 0; l < (BN * BK) / NT; ++l) {
            int e = tid + l * NT;
#if defined(B_N_FAST)
            int nn = e % BN;
            int kk = e / BN;
#else
            int kk = e % BK;
            int nn = e / BK;
#endif
            int gn = n0 + nn;
            int gk = k0 + kk;
            float v = 0.0;
            if (gn < u_N && gk < u_K) v = b_data[b_base + gk * u_b_k_stride + gn * u_b_n_stride];
            s_b[kk * SB + nn] = v;
        }
        memoryBarrierShared();
        barrier();
        for (int kk = 0; kk < BK; ++kk) {
            float ar[TM];
            float br[TN];
            for (int i = 0; i < TM; ++i) ar[i] = s_a[kk * SA + ty + i * WG_Y];
            for (int j = 0; j < TN; ++j) br[j] = s_b[kk * SB + tx + j * WG_X];
            for (int i = 0; i < TM; ++i)
                for (int j = 0; j < TN; ++j) acc[i * TN + j] += ar[i] * br[j];
        }
        memoryBarrierShared();
        barrier();
    }

    for (int i = 0; i < TM; ++i) {
        int gm = m0 + ty + i * WG_Y;
        if (gm >= u_M) continue;
        for (int j = 0; j < TN; ++j) {
            int gn = n0 + tx + j * WG_X;
            if (gn >= u_N) continue;
            int ci = c_base + gm * u_c_m_stride + gn * u_c_n_stride;
            // K == 0: the product is empty, so alpha does not enter (alpha = inf must not give NaN).
            float r = u_K > 0 ? u_alpha * acc[i * TN + j] : 0.0;
            if (u_read_c != 0u) r += u_beta * c_data[ci];
            c_data[ci] = r;
        }
    }
}
