// Scaled dot-product attention, forward and backward (plan: backends/common/attention_rules.h),
// without ever materializing an Sq x Skv matrix: flash attention's tiling with an online softmax.
//
// Rows: the queries of one (batch, kv head) are the G * Sq pairs (g, i) of the group's q heads
// (q head h = kvh * G + g) and positions, numbered rho = g * Sq + i, so that grouped-query heads
// share every K/V tile a workgroup loads (and a decode step, Sq = 1, still fills a query tile).
// Row i's position among the keys is P(i) = i + u_pos_off (Skv - Sq: bottom-right aligned; 0:
// top-left); causal: it sees key j iff j <= P(i); a window W: iff |P(i) - j| < W as well. The keys
// a row may see are [key_begin(i), key_end(i)); a tile walks the union of its rows' ranges only.
// Scores (logit()): softcap (SOFTCAP), minus the ALiBi distance (ALIBI), plus the mask.
//
// Passes (one define each):
//   PASS_FLASH    the forward of 16+ rows per kv head without a KV split (FlashAttention-2: register
//                 tiles of scores and outputs, vec4 tiles in shared memory; described at its code).
//   PASS_FWD      one workgroup per (batch, kv head, tile of BQ rows, KV split). Q tile (scaled) in
//                 shared memory; loop over key tiles of BK keys: K tile -> scores into s_p -> V tile
//                 over K's space; each row keeps its running max m and sum l, and its invocations
//                 (TPR per row, each owning the output channels lane + u * TPR) rescale their
//                 accumulators by exp(m_old - m_new). Without SPLIT it stores o = acc / l and
//                 lse = m + log(l); with SPLIT (flash-decoding: the keys of a row cut into u_splits
//                 chunks of u_chunk keys) it stores the partial (m, l, acc) of its chunk to P_BUF.
//   PASS_COMBINE  one invocation per output element: merges the splits' partials into o and lse
//                 (Dv as the uniform u_Dv here and in PASS_DELTA: fewer variants).
//   PASS_DELTA    backward: delta_i = sum_c do[i, c] * o[i, c] into the scratch block.
//   PASS_DKDV     backward: one workgroup per (batch, kv head, tile of BQ keys): K and V tiles stay
//                 in shared memory, the loop over row tiles (every q head of the group) recomputes
//                 p = exp(s - lse) and ds = p (do . v - delta) into shared tiles, and each key's
//                 invocations accumulate dv += p do and dk += ds q in registers.
//   PASS_DQ       backward: one workgroup per (batch, kv head, tile of BQ rows): loop over key
//                 tiles, ds into shared memory, dq += ds k in registers.
//                 WALK_SPLIT (both backward passes, where the walk passes the loop budget): a
//                 dispatch walks tiles [u_walk_lo, u_walk_hi) of the loop only, starting from the
//                 f32 accumulators the previous one left in S_BUF at u_sacc (bit 0 of u_carry) and
//                 leaving them there (bit 1) instead of storing dq (dk, dv): bit for bit one walk.
// Every float is f32 inside; operands of DTYPE (f32/f16/bf16) are read and written through uint words.
// The backward reads q, k, v, do, lse and delta from their f32 copies in the scratch block
// (contiguous: row-major (B, H, S, C)); mask, dq, dk, dv keep their own dtype and strides.
//
// Storage blocks: BLK0..BLK6 declare blk0..blk6, arrays of the element type each define names
// (uint; uvec4 / uvec2 for the vector operands of PASS_FLASH with VEC); each operand names its block (Q_BUF, K_BUF,
// V_BUF, M_BUF, O_BUF, L_BUF, P_BUF (partials/scratch), S_BUF (scratch), DQ_BUF, DK_BUF, DV_BUF),
// several operands may share one (the scratch block). K_DTYPE / V_DTYPE: DTYPE, or DT_F32 when packed.
// Defines: one PASS_*, DTYPE, HD (D), HDV (Dv), WG_SIZE, BQ, BK, TPR (WG_SIZE / BQ, or WG_SIZE / BK in PASS_DKDV),
// PASS_FLASH's own (HDP, HDVP, BKV, TM, TX, VEC, PREFETCH),
// SK (PASS_FWD: keys per score invocation, dividing BK), KV_W (PASS_FWD), CAUSAL, HAS_MASK + M_DTYPE
// (the mask's dtype: DTYPE, f16 under f32, or DT_BOOL: 1 attends, 0 hides), HAS_LSE, SPLIT,
// SOFTCAP, ALIBI, HAS_SINKS (SK_BUF: per q head f32 logits joining the softmax denominator;
// PASS_FLASH, unsplit PASS_FWD and PASS_COMBINE).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "store.glsl"
#include "math.glsl"
#include "subgroup.glsl"

layout(local_size_x = WG_SIZE) in;

#if defined(BLK0)
layout(std430, binding = 0) buffer Blk0 { BLK0 blk0[]; };
#endif
#if defined(BLK1)
layout(std430, binding = 1) buffer Blk1 { BLK1 blk1[]; };
#endif
#if defined(BLK2)
layout(std430, binding = 2) buffer Blk2 { BLK2 blk2[]; };
#endif
#if defined(BLK3)
layout(std430, binding = 3) buffer Blk3 { BLK3 blk3[]; };
#endif
#if defined(BLK4)
layout(std430, binding = 4) buffer Blk4 { BLK4 blk4[]; };
#endif
#if defined(BLK5)
layout(std430, binding = 5) buffer Blk5 { BLK5 blk5[]; };
#endif
#if defined(BLK6)
layout(std430, binding = 6) buffer Blk6 { BLK6 blk6[]; };
#endif

// Element I of dtype DT in the uint words of BUF, as f32.
#define LD(BUF, I, DT) tgl_to_f32(tgl_extract(BUF[tgl_word_of(I, DT)], I, DT), DT)
#define LDF(BUF, I) uintBitsToFloat(BUF[I])
// Stores V (f32) as element I of DTYPE; sub-word elements change only their own bits (their
// neighbours may belong to other invocations).
#define ST(BUF, I, V) TGL_STORE_BITS(BUF, I, tgl_from_f32(V, DTYPE), DTYPE)
#define STF(BUF, I, V) BUF[I] = floatBitsToUint(V)

// Element offset of (b, h, s, c) of an operand given as {offset, 4 strides}.
#define AT(U, B_, H_, S_, C_) (U[0] + (B_) * U[1] + (H_) * U[2] + (S_) * U[3] + (C_) * U[4])

uniform int u_Sq;
uniform int u_Skv;
uniform int u_G;
uniform int u_Hq;
uniform int u_Hkv;
uniform float u_scale;
uniform int u_Dv;  // PASS_DELTA, PASS_COMBINE (the tiled passes have HDV)

#if defined(HAS_SINKS)
uniform int u_sinks[2];  // {offset, stride} of the sinks (Hq) in SK_BUF
float sink_of(int h) { return LDF(SK_BUF, u_sinks[0] + h * u_sinks[1]); }
// Joins the sink logit sk into a row's running max m and sum l (natural log units); returns the
// factor of the row's accumulated output (whose sink term is 0).
float join_sink(inout float m, inout float l, float sk) {
    if (sk == tgl_neg_inf()) return 1.0;
    float mf = tgl_maximum(m, sk);
    float a = m == tgl_neg_inf() ? 0.0 : tgl_exp(m - mf);
    l = l * a + tgl_exp(sk - mf);
    m = mf;
    return a;
}
#endif

#if defined(PASS_DELTA)
// ---------------------------------------------------------------------------------------------
uniform int u_o[5];
uniform int u_do[5];
uniform int u_dst;
uniform uint u_count;

void main() {
    uint row = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (row >= u_count) return;
    int i = int(row % uint(u_Sq));
    int h = int(row / uint(u_Sq) % uint(u_Hq));
    int b = int(row / uint(u_Sq) / uint(u_Hq));
    float d = 0.0;
    for (int c = 0; c < u_Dv; ++c) d += LD(O_BUF, AT(u_o, b, h, i, c), DTYPE) * LD(DO_BUF, AT(u_do, b, h, i, c), DTYPE);
    STF(S_BUF, u_dst + int(row), d);
}

#elif defined(PASS_COMBINE)
// ---------------------------------------------------------------------------------------------
uniform int u_o[5];
uniform int u_l[5];
uniform int u_part;
uniform int u_splits;
uniform uint u_count;

void main() {
    uint e = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (e >= u_count) return;
    int c = int(e % uint(u_Dv));
    int row = int(e / uint(u_Dv));
    int i = row % u_Sq;
    int h = row / u_Sq % u_Hq;
    int b = row / u_Sq / u_Hq;
    int base = u_part + row * u_splits * (u_Dv + 2);
    float m = tgl_neg_inf();
    for (int s = 0; s < u_splits; ++s) m = tgl_maximum(m, LDF(P_BUF, base + s * (u_Dv + 2)));
    float l = 0.0, acc = 0.0;
    if (m != tgl_neg_inf()) {
        for (int s = 0; s < u_splits; ++s) {
            int p = base + s * (u_Dv + 2);
            float ms = LDF(P_BUF, p);
            float w = ms == tgl_neg_inf() ? 0.0 : tgl_exp(ms - m);
            l += LDF(P_BUF, p + 1) * w;
            acc += LDF(P_BUF, p + 2 + c) * w;
        }
    }
#if defined(HAS_SINKS)
    acc *= join_sink(m, l, sink_of(h));
#endif
    ST(O_BUF, AT(u_o, b, h, i, c), l > 0.0 || tgl_isnan(l) ? acc / l : 0.0);
#if defined(HAS_LSE)
    if (c == 0) L_BUF[AT(u_l, b, h, i, 0)] = floatBitsToUint(m == tgl_neg_inf() ? m : m + tgl_log(l));
#endif
}

#else
// ---------------------------------------------------------------------------------------------
// The tiled passes: PASS_FWD, PASS_DKDV, PASS_DQ.
uniform uint u_groups;  // workgroups in all (the grid may be split into chunks past the limits)
uniform int u_m[5];     // mask {offset, strides over (B, Hq, Sq, Skv)}
uniform int u_pos_off;  // P(i) = i + u_pos_off
uniform int u_window;   // 0: none
#if defined(SOFTCAP)
uniform float u_softcap;
#endif
#if defined(ALIBI)
uniform int u_alibi_n;      // 2^floor(log2(Hq))
uniform float u_alibi_e0;   // max_bias / n
uniform float u_alibi_e1;   // max_bias / (2 n)
#endif

// Query row rho of the kv head's group: q head and position.
int head_of(int kvh, int rho) { return kvh * u_G + rho / u_Sq; }
int pos_of(int rho) { return rho % u_Sq; }

// The largest and smallest positions among rows [r0, r1] (r1 >= r0): rows run through positions
// within each head.
int max_pos(int r0, int r1) { return r0 / u_Sq == r1 / u_Sq ? r1 % u_Sq : u_Sq - 1; }
int min_pos(int r0, int r1) { return r0 / u_Sq == r1 / u_Sq ? r0 % u_Sq : 0; }

// The keys [key_begin(i), key_end(i)) that row position i may see (both grow with i), and whether
// it sees key j < Skv.
int key_begin(int i) { return u_window > 0 ? clamp(i + u_pos_off - u_window + 1, 0, u_Skv) : 0; }
int key_end(int i) {
#if defined(CAUSAL)
    return clamp(i + u_pos_off + 1, 0, u_Skv);
#else
    return u_window > 0 ? clamp(i + u_pos_off + u_window, 0, u_Skv) : u_Skv;
#endif
}
bool visible(int i, int j) { return j >= key_begin(i) && j < key_end(i); }

// Whether rows [r0, r1] may see some key of [j0, j1).
bool tile_sees(int r0, int r1, int j0, int j1) { return j0 < key_end(max_pos(r0, r1)) && j1 > key_begin(min_pos(r0, r1)); }

// The soft-capped score x (= scale * q . k).
float capped(float x) {
#if defined(SOFTCAP)
    return u_softcap * tgl_tanh(x / u_softcap);
#else
    return x;
#endif
}
float mask_at(int b, int h, int i, int j);
// The score of a visible key from its capped x: ALiBi's distance and the mask.
float biased(float xc, int b, int h, int i, int j) {
#if defined(ALIBI)
    float e = h < u_alibi_n ? float(h + 1) * u_alibi_e0 : float(2 * (h - u_alibi_n) + 1) * u_alibi_e1;
    xc -= exp2(-e) * float(abs(i + u_pos_off - j));
#endif
    return xc + mask_at(b, h, i, j);
}
float logit(float x, int b, int h, int i, int j) { return biased(capped(x), b, h, i, j); }

float mask_at(int b, int h, int i, int j) {
#if defined(HAS_MASK) && M_DTYPE == DT_BOOL
    int o = AT(u_m, b, h, i, j);
    return tgl_extract(M_BUF[tgl_word_of(o, DT_BOOL)], o, DT_BOOL) != 0u ? 0.0 : tgl_neg_inf();
#elif defined(HAS_MASK)
    return LD(M_BUF, AT(u_m, b, h, i, j), M_DTYPE);
#else
    return 0.0;
#endif
}

#if defined(PASS_FLASH)
// FlashAttention-2 forward: one workgroup per (batch, kv head, tile of BQ rows). Invocation
// (ty, tx) = (tid / TX, tid % TX) owns rows ty + NR * i (i < TM) of the tile, the keys tx + TX * n
// (n < TN) of each key block and the output channel quads tx + TX * u (u < NV4): a register tile
// of scores s = q k^T (TM x TN) and of the output accumulator (TM x 4 NV4); in p^T and s_red its
// rows sit side by side (slots ty * TM + i: vec4 access). Per key block of BKV keys: K and V tiles
// staged in shared memory (vec4 rows, f16/bf16 unpacked once); scores from vec4 reads of the Q and K
// tiles; the row maxima of the TX invocations of a row meet in s_red; p = exp2(s - m) (q was
// scaled by scale * log2(e)) goes to shared memory over K's space (p^T, so that o += p v reads a
// vec4 of rows and vec4s of V). Causal blocks past the tile's last visible key are never visited;
// only blocks that hold a hidden or missing key (the diagonal, the sequence's end, any block with
// a mask) are masked element by element. Each invocation keeps the partial row sums l of its own
// keys; they meet once at the end.
// Defines: HDP (D rounded up to 4), HDVP (Dv rounded up to 4 TX), BQ, BKV, TM (a multiple of 4),
// TX, VEC (q, k, v, o as uvec4 (f32) / uvec2 (f16/bf16) arrays: channels contiguous, every offset and
// stride a multiple of 4), PREFETCH (the next block's K and V loaded into registers during this
// block's arithmetic), KMAJ (channel-major Q and K tiles, scores as outer products; TN a
// multiple of 4; below) and the ones of PASS_FWD.
#pragma optionNV(unroll all)
#define TN (BKV / TX)
#define NV4 (HDVP / (4 * TX))
#define Q4 (HDP / 4)
#define V4 (HDVP / 4)
#define R4 (BQ / 4)
#define NR (BQ / TM)
// Rows of the shared tiles read by neighbouring invocations at the same column (rows of q, keys
// of k, keys of p^T, invocations of s_red) are padded by one quad: 8 consecutive rows then span
// the 32 banks, and every read is a base address plus a constant.
#define Q4W (Q4 + 1)
#define R4W (R4 + 1)
#if defined(KMAJ)
// KMAJ: the Q and K tiles channel-major (q^T: channel rows of row-slot quads; K^T: channel rows
// of key quads), scores as outer products: per channel TM / 4 + TN / 4 vec4 reads for TM x TN
// products (the register tile holds one channel of q and k, not TM + TN quads). An invocation's
// rows are slots ty * TM + i (the slots of p^T), its keys the quads tx + TX * n4 (n4 < TN / 4).
// The staging transposes in registers: a chunk is 4 keys (rows) x 1 channel quad, stored as 4
// whole quads of K^T (q^T), with neighbouring invocations on neighbouring key (row) quads.
#define KW4 (BKV / 4 + 1)
#define Q_SIZE (HDP * R4W)
#define K_SIZE (HDP * KW4)
#define ROW(TY, I) ((TY) * TM + (I))
#define KEY(TX_, N) (4 * ((TX_) + TX * ((N) / 4)) + (N) % 4)
#define K_PER 4  // loads per chunk of the K tile
#define K_ITEMS (BKV / 4 * Q4)
#else
#define Q_SIZE (BQ * Q4W)
#define K_SIZE (BKV * Q4W)
#define ROW(TY, I) ((TY) + NR * (I))
#define KEY(TX_, N) ((TX_) + TX * (N))
#define K_PER 1
#define K_ITEMS (BKV * Q4)
#endif
// SG (TGL_SUBGROUP_SIZE set, TX lanes of a row within one subgroup): the row maxima and sums of
// the TX invocations of a row meet by subgroup shuffles (no s_red), and p^T has its own tile, so
// that a block needs no barrier between the K tile's last read and p's store (3 barriers, not 4).
#define PT_SIZE (BKV * R4W)
#if defined(SG) && !defined(TGL_SUBGROUP_SIZE)
#error SG needs TGL_SUBGROUP_SIZE
#endif
float flash_add(float a, float b) { return a + b; }
#if defined(SG)
#define KP_SIZE K_SIZE
#define P_TILE s_pt
#else
#define KP_SIZE (K_SIZE > PT_SIZE ? K_SIZE : PT_SIZE)
#define P_TILE s_kp
#endif
const float LOG2E = 1.4426950408889634;
const float LN2 = 0.6931471805599453;

// HALF_RUN (f16 q, k, v; GL_NV_gpu_shader5): the Q, K, V and p^T tiles in f16 and their products
// in packed f16 (f16vec2: HFMA2 on NVIDIA), each f16vec2 lane summing HALF_RUN products (scores:
// HALF_RUN / 2 channel quads; o += p v: HALF_RUN keys) before the run's sum is added into the f32
// scores and accumulators (docs/half-precision.md).
#if defined(HALF_RUN)
#define TILE4 f16vec4
#else
#define TILE4 vec4
#endif
// QGLOBAL (f32, VEC, not KMAJ): no q tile; the score loop reads q's quads from Q_BUF (L1-cached
// global memory) and the scores are scaled afterwards: 17 KB less shared memory per 64-row tile.
#if !defined(QGLOBAL)
shared TILE4 s_q[Q_SIZE];  // q * scale * log2(e)
#endif
shared TILE4 s_kp[KP_SIZE];  // the K tile, then (without SG) p^T (key rows of row-slot quads)
shared TILE4 s_v[BKV * V4];  // the V tile
#if defined(SG)
shared TILE4 s_pt[PT_SIZE];  // p^T
#else
shared vec4 s_red[TX * R4W];  // row maxima (then partial sums) of each invocation's keys
#endif

uniform int u_q[5];
uniform int u_k[5];
uniform int u_v[5];
uniform int u_o[5];
uniform int u_l[5];
uniform int u_tiles;

// Channels [4 C4, 4 C4 + 4) of operand BUF {U} at (B_, H_, S_) with N channels (0 past N), as
// loaded (RAW: the words under VEC, so that a prefetch into registers does not wait for them) and
// as f32 (cvt).
#if defined(VEC) && DTYPE == DT_F32
#define RAW uvec4
vec4 cvt(RAW x) { return uintBitsToFloat(x); }
#elif defined(VEC)
#define RAW uvec2
vec4 cvt(RAW x) { return vec4(tgl_unpack_2x16(x.x, DTYPE), tgl_unpack_2x16(x.y, DTYPE)); }
#else
#define RAW vec4
vec4 cvt(RAW x) { return x; }
#endif
// (DT: the operand's dtype; VEC only where q, k, v and o share one)
#if defined(VEC)
#define LOAD_RAW(BUF, U, B_, H_, S_, C4, N, DT) (4 * (C4) < (N) ? BUF[AT(U, B_, H_, S_, 4 * (C4)) >> 2] : RAW(0u))
#else
#define LDC(BUF, U, B_, H_, S_, C, N, DT) ((C) < (N) ? LD(BUF, AT(U, B_, H_, S_, C), DT) : 0.0)
#define LOAD_RAW(BUF, U, B_, H_, S_, C4, N, DT)                                                  \
    vec4(LDC(BUF, U, B_, H_, S_, 4 * (C4), N, DT), LDC(BUF, U, B_, H_, S_, 4 * (C4) + 1, N, DT), \
         LDC(BUF, U, B_, H_, S_, 4 * (C4) + 2, N, DT), LDC(BUF, U, B_, H_, S_, 4 * (C4) + 3, N, DT))
#endif

// Loops over N items by all invocations with a constant trip count (unrolled: every load of a
// tile issued before its stores to shared memory).
#define ITERS(N) (((N) + WG_SIZE - 1) / WG_SIZE)
#define IN_RANGE(E, N) ((N) % WG_SIZE == 0 || (E) < (N))

// Chunk e (a quad of channels of one key row) of the K / V tile of the keys from j0 (0 past Skv).
// (KMAJ: load r of chunk e, key 4 (e % (BKV / 4)) + r, channel quad e / (BKV / 4))
RAW k_chunk(int b, int kvh, int j0, int e, int r) {
#if defined(KMAJ)
    int j = j0 + 4 * (e % (BKV / 4)) + r, c4 = e / (BKV / 4);
#else
    int j = j0 + e / Q4, c4 = e % Q4;
#endif
    return j < u_Skv ? LOAD_RAW(K_BUF, u_k, b, kvh, j, c4, HD, K_DTYPE) : RAW(0u);
}
// Stores chunk e of the K tile (its K_PER loads) into s_kp.
void store_k(int e, RAW raw[K_PER]) {
#if defined(KMAJ)
    vec4 x[4];
    for (int r = 0; r < 4; ++r) x[r] = cvt(raw[r]);
    int kq = e % (BKV / 4), c4 = e / (BKV / 4);
    for (int ch = 0; ch < 4; ++ch) s_kp[(4 * c4 + ch) * KW4 + kq] = TILE4(vec4(x[0][ch], x[1][ch], x[2][ch], x[3][ch]));
#else
    s_kp[(e / Q4) * Q4W + e % Q4] = TILE4(cvt(raw[0]));
#endif
}
RAW v_chunk(int b, int kvh, int j0, int e) {
    int j = j0 + e / V4;
    return j < u_Skv ? LOAD_RAW(V_BUF, u_v, b, kvh, j, e % V4, HDV, V_DTYPE) : RAW(0u);
}
#if defined(PREFETCH)
// This invocation's chunks of the K and V tiles of the keys from j0, into registers.
void fetch_kv(int b, int kvh, int j0, int tid, inout RAW k[ITERS(K_ITEMS) * K_PER], inout RAW v[ITERS(BKV * V4)]) {
    for (int it = 0; it < ITERS(K_ITEMS); ++it)
        if (IN_RANGE(tid + it * WG_SIZE, K_ITEMS))
            for (int r = 0; r < K_PER; ++r) k[it * K_PER + r] = k_chunk(b, kvh, j0, tid + it * WG_SIZE, r);
    for (int it = 0; it < ITERS(BKV * V4); ++it)
        if (IN_RANGE(tid + it * WG_SIZE, BKV * V4)) v[it] = v_chunk(b, kvh, j0, tid + it * WG_SIZE);
}
#endif

void main() {
    uint wg = tgl_group_index();
    if (wg >= u_groups) return;  // the whole workgroup: uniform
    int tid = int(tgl_local_slot());  // (under SG the TX lanes of a row are in one subgroup)
    int ty = tid / TX, tx = tid % TX;
    int tile = u_tiles - 1 - int(wg % uint(u_tiles));  // the longest causal tiles first
    int bh = int(wg / uint(u_tiles));
    int b = bh / u_Hkv, kvh = bh % u_Hkv;
    int rows = u_G * u_Sq;
    int r0 = tile * BQ;
    int r_last = min(r0 + BQ, rows) - 1;

    float qscale = u_scale * LOG2E;
#if defined(KMAJ)
    for (int it = 0; it < ITERS(R4 * Q4); ++it) {  // chunks of 4 rows x 1 channel quad, transposed
        int e = tid + it * WG_SIZE;
        if (!IN_RANGE(e, R4 * Q4)) break;
        int rq = e % R4, c4 = e / R4;
        vec4 x[4];
        for (int r = 0; r < 4; ++r) {
            int rho = r0 + 4 * rq + r;
            x[r] = rho < rows ? cvt(LOAD_RAW(Q_BUF, u_q, b, head_of(kvh, rho), pos_of(rho), c4, HD, DTYPE)) * qscale : vec4(0.0);
        }
        for (int ch = 0; ch < 4; ++ch) s_q[(4 * c4 + ch) * R4W + rq] = TILE4(vec4(x[0][ch], x[1][ch], x[2][ch], x[3][ch]));
    }
#elif defined(QGLOBAL)
    // The quad index of each of this invocation's rows in Q_BUF (rows past the end read the last
    // row: their scores are never stored).
    int q_at[TM];
    for (int i = 0; i < TM; ++i) {
        int rho = min(r0 + ROW(ty, i), rows - 1);
        q_at[i] = AT(u_q, b, head_of(kvh, rho), pos_of(rho), 0) >> 2;
    }
#else
    for (int it = 0; it < ITERS(BQ * Q4); ++it) {
        int e = tid + it * WG_SIZE;
        if (!IN_RANGE(e, BQ * Q4)) break;
        int r = e / Q4, c4 = e % Q4, rho = r0 + r;
        vec4 x = vec4(0.0);
        if (rho < rows) x = cvt(LOAD_RAW(Q_BUF, u_q, b, head_of(kvh, rho), pos_of(rho), c4, HD, DTYPE)) * qscale;
        s_q[r * Q4W + c4] = TILE4(x);
    }
#endif

    // Keys [kv_begin, kv_end) are seen by some row of the tile (no other key tile is loaded);
    // every row may see keys [all_begin, all_end).
    int p_lo = min_pos(r0, r_last), p_hi = max_pos(r0, r_last);
    int kv_begin = key_begin(p_lo), kv_end = key_end(p_hi);
    int all_begin = key_begin(p_hi), all_end = key_end(p_lo);

    float m[TM], l[TM];
    vec4 acc[TM * NV4];
    for (int i = 0; i < TM; ++i) {
        m[i] = tgl_neg_inf();
        l[i] = 0.0;
    }
    for (int a = 0; a < TM * NV4; ++a) acc[a] = vec4(0.0);

#if defined(PREFETCH)
    // The next block's K and V chunks, loaded into registers while this block computes.
    RAW k_next[ITERS(K_ITEMS) * K_PER], v_next[ITERS(BKV * V4)];
    if (kv_end > kv_begin) fetch_kv(b, kvh, kv_begin, tid, k_next, v_next);
#endif
    for (int j0 = kv_begin; j0 < kv_end; j0 += BKV) {
        barrier();  // the previous block's readers of s_kp and s_v are done
        for (int it = 0; it < ITERS(K_ITEMS); ++it) {
            int e = tid + it * WG_SIZE;
            if (!IN_RANGE(e, K_ITEMS)) break;
            RAW raw[K_PER];
            for (int r = 0; r < K_PER; ++r)
#if defined(PREFETCH)
                raw[r] = k_next[it * K_PER + r];
#else
                raw[r] = k_chunk(b, kvh, j0, e, r);
#endif
            store_k(e, raw);
        }
        for (int it = 0; it < ITERS(BKV * V4); ++it) {
            int e = tid + it * WG_SIZE;
            if (!IN_RANGE(e, BKV * V4)) break;
#if defined(PREFETCH)
            s_v[e] = TILE4(cvt(v_next[it]));
#else
            s_v[e] = TILE4(cvt(v_chunk(b, kvh, j0, e)));
#endif
        }
        memoryBarrierShared();
        barrier();
#if defined(PREFETCH)
        if (j0 + BKV < kv_end) fetch_kv(b, kvh, j0 + BKV, tid, k_next, v_next);
#endif

        float s[TM * TN];
        for (int a = 0; a < TM * TN; ++a) s[a] = 0.0;
#if defined(KMAJ)
#if defined(HALF_RUN)
        f16vec2 rs[TM * TN / 2];  // this run's scores, key pairs
        for (int a = 0; a < TM * TN / 2; ++a) rs[a] = f16vec2(0.0);
#endif
        for (int c = 0; c < HDP; ++c) {
            TILE4 qv[TM / 4], kv[TN / 4];
            for (int q = 0; q < TM / 4; ++q) qv[q] = s_q[c * R4W + ty * (TM / 4) + q];
            for (int n4 = 0; n4 < TN / 4; ++n4) kv[n4] = s_kp[c * KW4 + tx + TX * n4];
            for (int i = 0; i < TM; ++i)
                for (int n4 = 0; n4 < TN / 4; ++n4) {
#if defined(HALF_RUN)
                    rs[i * (TN / 2) + 2 * n4] += qv[i / 4][i % 4] * kv[n4].xy;
                    rs[i * (TN / 2) + 2 * n4 + 1] += qv[i / 4][i % 4] * kv[n4].zw;
#else
                    for (int k = 0; k < 4; ++k) s[i * TN + 4 * n4 + k] += qv[i / 4][i % 4] * kv[n4][k];
#endif
                }
#if defined(HALF_RUN)
            if ((c + 1) % HALF_RUN == 0 || c == HDP - 1)  // (constant once unrolled)
                for (int a = 0; a < TM * TN / 2; ++a) {
                    s[2 * a] += float(rs[a].x);
                    s[2 * a + 1] += float(rs[a].y);
                    rs[a] = f16vec2(0.0);
                }
#endif
        }
#else
#if defined(HALF_RUN)
        f16vec2 rs[TM * TN];  // this run's scores, even and odd channels
        for (int a = 0; a < TM * TN; ++a) rs[a] = f16vec2(0.0);
#endif
        for (int c4 = 0; c4 < Q4; ++c4) {
            TILE4 qv[TM], kv[TN];
#if defined(QGLOBAL)
            for (int i = 0; i < TM; ++i) qv[i] = uintBitsToFloat(Q_BUF[q_at[i] + c4]);
#else
            for (int i = 0; i < TM; ++i) qv[i] = s_q[ROW(ty, i) * Q4W + c4];
#endif
            for (int n = 0; n < TN; ++n) {
                int kk = tx + TX * n;
                kv[n] = s_kp[kk * Q4W + c4];
            }
            for (int i = 0; i < TM; ++i)
                for (int n = 0; n < TN; ++n) {
#if defined(HALF_RUN)
                    rs[i * TN + n] += qv[i].xy * kv[n].xy + qv[i].zw * kv[n].zw;
#else
                    float t = s[i * TN + n];
                    t += qv[i].x * kv[n].x;
                    t += qv[i].y * kv[n].y;
                    t += qv[i].z * kv[n].z;
                    t += qv[i].w * kv[n].w;
                    s[i * TN + n] = t;
#endif
                }
#if defined(HALF_RUN)
            if ((c4 + 1) % (HALF_RUN / 2) == 0 || c4 == Q4 - 1)  // (constant once unrolled)
                for (int a = 0; a < TM * TN; ++a) {
                    s[a] += float(rs[a].x) + float(rs[a].y);
                    rs[a] = f16vec2(0.0);
                }
#endif
        }
#endif
#if defined(QGLOBAL)
        for (int a = 0; a < TM * TN; ++a) s[a] *= qscale;
#endif
        // Element-wise masking only where some key of the block is hidden from a row or missing,
        // or a score has more terms than q . k.
        bool masked = j0 < all_begin || j0 + BKV > all_end;
#if defined(HAS_MASK) || defined(SOFTCAP) || defined(ALIBI)
        masked = true;
#endif
        if (masked) {
            for (int i = 0; i < TM; ++i) {
                int rho = r0 + ROW(ty, i);
                int h = head_of(kvh, rho), pos = pos_of(rho);
                for (int n = 0; n < TN; ++n) {
                    int j = j0 + KEY(tx, n);
                    bool seen = rho < rows && j < u_Skv && visible(pos, j);
#if defined(SOFTCAP) || defined(ALIBI)
                    s[i * TN + n] = seen ? logit(s[i * TN + n] * LN2, b, h, pos, j) * LOG2E : tgl_neg_inf();
#else
                    s[i * TN + n] = seen ? s[i * TN + n] + mask_at(b, h, pos, j) * LOG2E : tgl_neg_inf();
#endif
                }
            }
        }
        // Row maxima over this invocation's keys, then over the row's TX invocations.
        float p_base[TM];
#if defined(SG)
        for (int i = 0; i < TM; ++i) {
            float mx = tgl_neg_inf();
            for (int n = 0; n < TN; ++n) mx = max(mx, s[i * TN + n]);
            TGL_SUBGROUP_FOLD(mx, 1, TX, max);
            float m_new = max(m[i], mx);
            // A row that has seen nothing yet keeps acc = l = 0 (alpha = 0, every p = 0).
            p_base[i] = m_new == tgl_neg_inf() ? 0.0 : m_new;
            float alpha = m[i] == tgl_neg_inf() ? 0.0 : exp2(m[i] - m_new);
            m[i] = m_new;
            l[i] *= alpha;
            for (int u = 0; u < NV4; ++u) acc[i * NV4 + u] *= alpha;
        }
#else
        for (int q = 0; q < TM / 4; ++q) {
            vec4 mx = vec4(tgl_neg_inf());
            for (int n = 0; n < TN; ++n)
                mx = max(mx, vec4(s[(4 * q) * TN + n], s[(4 * q + 1) * TN + n], s[(4 * q + 2) * TN + n], s[(4 * q + 3) * TN + n]));
            s_red[tx * R4W + ty * (TM / 4) + q] = mx;
        }
        memoryBarrierShared();
        barrier();  // s_red written; every read of the K tile done (p^T goes over it)
        for (int q = 0; q < TM / 4; ++q) {
            vec4 mx = vec4(tgl_neg_inf());
            for (int t = 0; t < TX; ++t) mx = max(mx, s_red[t * R4W + ty * (TM / 4) + q]);
            for (int e = 0; e < 4; ++e) {
                int i = 4 * q + e;
                float m_new = max(m[i], mx[e]);
                // A row that has seen nothing yet keeps acc = l = 0 (alpha = 0, every p = 0).
                p_base[i] = m_new == tgl_neg_inf() ? 0.0 : m_new;
                float alpha = m[i] == tgl_neg_inf() ? 0.0 : exp2(m[i] - m_new);
                m[i] = m_new;
                l[i] *= alpha;
                for (int u = 0; u < NV4; ++u) acc[i * NV4 + u] *= alpha;
            }
        }
#endif
        for (int i = 0; i < TM; ++i)
            for (int n = 0; n < TN; ++n) {
                float x = s[i * TN + n];
                float pe = exp2(x - p_base[i]);
                if (masked && x == tgl_neg_inf()) pe = 0.0;  // exp2(-inf) is not exact everywhere
                s[i * TN + n] = pe;
                l[i] += pe;
            }
        for (int n = 0; n < TN; ++n) {
            int kk = KEY(tx, n);
            for (int q = 0; q < TM / 4; ++q)
                P_TILE[kk * R4W + ty * (TM / 4) + q] =
                    TILE4(vec4(s[(4 * q) * TN + n], s[(4 * q + 1) * TN + n], s[(4 * q + 2) * TN + n], s[(4 * q + 3) * TN + n]));
        }
        memoryBarrierShared();
        barrier();
#if defined(HALF_RUN)
        f16vec4 ro[TM * NV4];  // this run's p v
        for (int a = 0; a < TM * NV4; ++a) ro[a] = f16vec4(0.0);
#endif
        for (int kk = 0; kk < BKV; ++kk) {
            TILE4 pv[TM / 4], vv[NV4];
            for (int q = 0; q < TM / 4; ++q) pv[q] = P_TILE[kk * R4W + ty * (TM / 4) + q];
            for (int u = 0; u < NV4; ++u) vv[u] = s_v[kk * V4 + tx + TX * u];
            for (int q = 0; q < TM / 4; ++q)
                for (int e = 0; e < 4; ++e)
#if defined(HALF_RUN)
                    for (int u = 0; u < NV4; ++u) ro[(4 * q + e) * NV4 + u] += pv[q][e] * vv[u];
            if ((kk + 1) % HALF_RUN == 0 || kk == BKV - 1)  // (constant once unrolled)
                for (int a = 0; a < TM * NV4; ++a) {
                    acc[a] += vec4(ro[a]);
                    ro[a] = f16vec4(0.0);
                }
#else
                    for (int u = 0; u < NV4; ++u) acc[(4 * q + e) * NV4 + u] += pv[q][e] * vv[u];
#endif
        }
    }

    // The row sums: partial sums of the TX invocations of a row (s_red's last reads were before
    // the last block's barrier after p).
#if defined(SG)
    for (int i = 0; i < TM; ++i) TGL_SUBGROUP_FOLD(l[i], 1, TX, flash_add);
#else
    for (int q = 0; q < TM / 4; ++q)
        s_red[tx * R4W + ty * (TM / 4) + q] = vec4(l[4 * q], l[4 * q + 1], l[4 * q + 2], l[4 * q + 3]);
    memoryBarrierShared();
    barrier();
#endif
    for (int q = 0; q < TM / 4; ++q) {
#if defined(SG)
        vec4 sum = vec4(l[4 * q], l[4 * q + 1], l[4 * q + 2], l[4 * q + 3]);
#else
        vec4 sum = vec4(0.0);
        for (int t = 0; t < TX; ++t) sum += s_red[t * R4W + ty * (TM / 4) + q];
#endif
        for (int e = 0; e < 4; ++e) {
            int i = 4 * q + e, rho = r0 + ROW(ty, i);
            if (rho >= rows) continue;
            int h = head_of(kvh, rho), pos = pos_of(rho);
            bool empty = m[i] == tgl_neg_inf() && sum[e] == 0.0;  // (NaN scores: NaN, not 0)
            float inv = empty ? 0.0 : 1.0 / sum[e];
#if defined(HAS_SINKS)
            float m_nat = m[i] * LN2, l_all = sum[e];
            float a = join_sink(m_nat, l_all, sink_of(h));
            empty = m_nat == tgl_neg_inf() && l_all == 0.0;
            inv = empty ? 0.0 : a / l_all;
#endif
            for (int u = 0; u < NV4; ++u) {
                int c = 4 * (tx + TX * u);
                if (c >= HDV) continue;
                vec4 o = acc[i * NV4 + u] * inv;
#if defined(VEC) && DTYPE == DT_F32
                O_BUF[AT(u_o, b, h, pos, c) >> 2] = floatBitsToUint(o);
#elif defined(VEC)
                O_BUF[AT(u_o, b, h, pos, c) >> 2] = uvec2(tgl_from_f32(o.x, DTYPE) | (tgl_from_f32(o.y, DTYPE) << 16),
                                                          tgl_from_f32(o.z, DTYPE) | (tgl_from_f32(o.w, DTYPE) << 16));
#else
                for (int k = 0; k < 4; ++k)
                    if (c + k < HDV) ST(O_BUF, AT(u_o, b, h, pos, c + k), o[k]);
#endif
            }
#if defined(HAS_LSE)
#if defined(HAS_SINKS)
            if (tx == 0) L_BUF[AT(u_l, b, h, pos, 0)] = floatBitsToUint(empty ? m_nat : m_nat + tgl_log(l_all));
#else
            if (tx == 0) L_BUF[AT(u_l, b, h, pos, 0)] = floatBitsToUint(empty ? m[i] : m[i] * LN2 + tgl_log(sum[e]));
#endif
#endif
        }
    }
}

#elif defined(PASS_FWD)
#define NACC ((HDV + TPR - 1) / TPR)
// Shared rows padded by one float: the score dots of consecutive invocations walk different rows
// of s_kv, which would otherwise fall into one memory bank.
#define Q_W (HD + 1)
// KV_W (a define: max(HD, HDV) + 1): the row length of s_kv, which holds K and then V.
shared float s_q[BQ * Q_W];
shared float s_kv[BK * KV_W];
shared float s_p[BQ * BK];  // scores
shared float s_e[BQ * BK];  // exp(score - the row's new max)

uniform int u_q[5];
uniform int u_k[5];
uniform int u_v[5];
uniform int u_o[5];
uniform int u_l[5];
uniform int u_tiles;
uniform int u_splits;
uniform int u_chunk;
uniform int u_part;

void main() {
    uint wg = tgl_group_index();
    if (wg >= u_groups) return;  // the whole workgroup: uniform
    int tid = int(gl_LocalInvocationID.x);
    int split = int(wg % uint(u_splits));
    int tile = int(wg / uint(u_splits) % uint(u_tiles));
    int bh = int(wg / uint(u_splits) / uint(u_tiles));
    int b = bh / u_Hkv, kvh = bh % u_Hkv;
    int rows = u_G * u_Sq;
    int r0 = tile * BQ;
    int r_last = min(r0 + BQ, rows) - 1;

    // Q tile, scaled (rows past the end: 0).
    for (int e = tid; e < BQ * HD; e += WG_SIZE) {
        int r = e / HD, c = e % HD, rho = r0 + r;
        float x = 0.0;
        if (rho < rows) x = LD(Q_BUF, AT(u_q, b, head_of(kvh, rho), pos_of(rho), c), DTYPE) * u_scale;
        s_q[r * Q_W + c] = x;
    }

    // This workgroup's keys: its split's chunk of the keys the tile's rows see.
    int kv_begin = key_begin(min_pos(r0, r_last)), kv_end = key_end(max_pos(r0, r_last));
    int kv_lo = kv_begin + split * u_chunk;
    int kv_hi = min(kv_lo + u_chunk, kv_end);

    int r = tid / TPR, lane = tid % TPR;  // WG_SIZE = BQ * TPR: r < BQ
    int rho = r0 + r;
    int h = head_of(kvh, rho), i = pos_of(rho);
    float m = tgl_neg_inf(), l = 0.0;
    float acc[NACC];
    for (int u = 0; u < NACC; ++u) acc[u] = 0.0;

    for (int j0 = kv_lo; j0 < kv_hi; j0 += BK) {
        barrier();  // the previous tile's readers of s_kv and s_e are done
        for (int e = tid; e < BK * HD; e += WG_SIZE) {
            int kk = e / HD, c = e % HD, j = j0 + kk;
            s_kv[kk * KV_W + c] = j < kv_hi ? LD(K_BUF, AT(u_k, b, kvh, j, c), K_DTYPE) : 0.0;
        }
        memoryBarrierShared();
        barrier();
        // Scores: each invocation takes SK keys of one row (keys kk + n * BK / SK: neighbouring
        // invocations read neighbouring rows of s_kv, different banks), reading q once for all.
        for (int e = tid; e < BQ * (BK / SK); e += WG_SIZE) {
            int er = e / (BK / SK), kk = e % (BK / SK), erho = r0 + er;
            float dot[SK];
            for (int n = 0; n < SK; ++n) dot[n] = 0.0;
            for (int c = 0; c < HD; ++c) {
                float qc = s_q[er * Q_W + c];
                for (int n = 0; n < SK; ++n) dot[n] += qc * s_kv[(kk + n * (BK / SK)) * KV_W + c];
            }
            for (int n = 0; n < SK; ++n) {
                int key = kk + n * (BK / SK), j = j0 + key;
                bool seen = erho < rows && j < kv_hi && visible(pos_of(erho), j);
                s_p[er * BK + key] = seen ? logit(dot[n], b, head_of(kvh, erho), pos_of(erho), j) : tgl_neg_inf();
            }
        }
        memoryBarrierShared();
        barrier();
        for (int e = tid; e < BK * HDV; e += WG_SIZE) {
            int kk = e / HDV, c = e % HDV, j = j0 + kk;
            s_kv[kk * KV_W + c] = j < kv_hi ? LD(V_BUF, AT(u_v, b, kvh, j, c), V_DTYPE) : 0.0;
        }
        // The row's new running max (every invocation of the row alike), then each invocation
        // exponentiates its share of the row's scores once.
        float mt = tgl_neg_inf();
        for (int kk = 0; kk < BK; ++kk) mt = tgl_maximum(mt, s_p[r * BK + kk]);
        float m_new = tgl_maximum(m, mt);
        for (int kk = lane; kk < BK; kk += TPR) {
            float s = s_p[r * BK + kk];
            s_e[r * BK + kk] = s == tgl_neg_inf() ? 0.0 : tgl_exp(s - m_new);
        }
        memoryBarrierShared();
        barrier();
        if (m_new != tgl_neg_inf()) {  // else nothing seen yet: acc and l stay 0
            float alpha = m == tgl_neg_inf() ? 0.0 : tgl_exp(m - m_new);
            l *= alpha;
            for (int u = 0; u < NACC; ++u) acc[u] *= alpha;
            for (int kk = 0; kk < BK; ++kk) {
                float pk = s_e[r * BK + kk];
                l += pk;
                for (int u = 0; u < NACC; ++u) {
                    int c = lane + u * TPR;
                    if (c < HDV) acc[u] += pk * s_kv[kk * KV_W + c];
                }
            }
            m = m_new;
        }
    }
    if (rho >= rows) return;
#if defined(SPLIT)
    int p = u_part + ((b * u_Hq + h) * u_Sq + i) * u_splits * (HDV + 2) + split * (HDV + 2);
    if (lane == 0) {
        STF(P_BUF, p, m);
        STF(P_BUF, p + 1, l);
    }
    for (int u = 0; u < NACC; ++u) {
        int c = lane + u * TPR;
        if (c < HDV) STF(P_BUF, p + 2 + c, acc[u]);
    }
#else
    float f = 1.0;
#if defined(HAS_SINKS)
    f = join_sink(m, l, sink_of(h));
#endif
    bool empty = m == tgl_neg_inf();
    for (int u = 0; u < NACC; ++u) {
        int c = lane + u * TPR;
        if (c < HDV) ST(O_BUF, AT(u_o, b, h, i, c), empty ? 0.0 : acc[u] * f / l);
    }
#if defined(HAS_LSE)
    if (lane == 0) L_BUF[AT(u_l, b, h, i, 0)] = floatBitsToUint(empty ? m : m + tgl_log(l));
#endif
#endif
}

#else  // PASS_DKDV, PASS_DQ
// The f32 copies in S_BUF (element offsets): q (B, Hq, Sq, HD), k (B, Hkv, Skv, HD), v (B, Hkv,
// Skv, HDV), do (B, Hq, Sq, HDV), lse and delta (B, Hq, Sq).
uniform int u_sq;
uniform int u_sk;
uniform int u_sv;
uniform int u_sdo;
uniform int u_slse;
uniform int u_sdelta;
uniform int u_dq[5];
uniform int u_dk[5];
uniform int u_dv[5];
#if defined(WALK_SPLIT)
uniform int u_walk_lo;
uniform int u_walk_hi;
uniform uint u_carry;
uniform int u_sacc;
#endif

// Rows padded by one float (no bank conflicts where consecutive invocations walk different rows).
#define Q_W (HD + 1)
#define V_W (HDV + 1)
shared float s_q[BQ * Q_W];
shared float s_do[BQ * V_W];
shared float s_k[BK * Q_W];
shared float s_v[BK * V_W];
shared float s_ds[BQ * BK];
#if defined(PASS_DKDV)
shared float s_pp[BQ * BK];
#endif

int row_index(int b, int h, int i) { return (b * u_Hq + h) * u_Sq + i; }

// Loads rows [r0, r0 + BQ) of q and do into s_q / s_do (0 past the end).
void load_rows(int tid, int b, int kvh, int r0, int rows) {
    for (int e = tid; e < BQ * HD; e += WG_SIZE) {
        int r = e / HD, rho = r0 + r;
        s_q[r * Q_W + e % HD] = rho < rows ? LDF(S_BUF, u_sq + row_index(b, head_of(kvh, rho), pos_of(rho)) * HD + e % HD) : 0.0;
    }
    for (int e = tid; e < BQ * HDV; e += WG_SIZE) {
        int r = e / HDV, rho = r0 + r;
        s_do[r * V_W + e % HDV] = rho < rows ? LDF(S_BUF, u_sdo + row_index(b, head_of(kvh, rho), pos_of(rho)) * HDV + e % HDV) : 0.0;
    }
}
// Loads keys [j0, j0 + BK) of k and v into s_k / s_v (0 past the end).
void load_keys(int tid, int b, int kvh, int j0) {
    int base = (b * u_Hkv + kvh) * u_Skv;
    for (int e = tid; e < BK * HD; e += WG_SIZE) {
        int j = j0 + e / HD;
        s_k[(e / HD) * Q_W + e % HD] = j < u_Skv ? LDF(S_BUF, u_sk + (base + j) * HD + e % HD) : 0.0;
    }
    for (int e = tid; e < BK * HDV; e += WG_SIZE) {
        int j = j0 + e / HDV;
        s_v[(e / HDV) * V_W + e % HDV] = j < u_Skv ? LDF(S_BUF, u_sv + (base + j) * HDV + e % HDV) : 0.0;
    }
}
// p and ds of (row r of s_q / s_do, key kk of s_k / s_v): 0 where the pair is out of range or hidden.
vec2 p_ds(int b, int kvh, int r, int rho, int rows, int kk, int j) {
    if (rho >= rows || j >= u_Skv) return vec2(0.0);
    int h = head_of(kvh, rho), i = pos_of(rho);
    if (!visible(i, j)) return vec2(0.0);
    int ri = row_index(b, h, i);
    float lse = LDF(S_BUF, u_slse + ri);
    if (lse == tgl_neg_inf()) return vec2(0.0);  // a fully masked row: no gradient
    float dot = 0.0;
    for (int c = 0; c < HD; ++c) dot += s_q[r * Q_W + c] * s_k[kk * Q_W + c];
    float xc = capped(u_scale * dot);
    float s = biased(xc, b, h, i, j);
    float p = s == tgl_neg_inf() ? 0.0 : tgl_exp(s - lse);
    float dp = 0.0;
    for (int c = 0; c < HDV; ++c) dp += s_do[r * V_W + c] * s_v[kk * V_W + c];
    float ds = p * (dp - LDF(S_BUF, u_sdelta + ri));
#if defined(SOFTCAP)
    float t = xc / u_softcap;
    ds *= 1.0 - t * t;  // d(c tanh(x / c))/dx
#endif
    return vec2(p, ds);
}

#define NACC_D ((HD + TPR - 1) / TPR)
#define NACC_V ((HDV + TPR - 1) / TPR)

#if defined(PASS_DKDV)
uniform int u_ktiles;

void main() {
    uint wg = tgl_group_index();
    if (wg >= u_groups) return;
    int tid = int(gl_LocalInvocationID.x);
    int ktile = int(wg % uint(u_ktiles));
    int bh = int(wg / uint(u_ktiles));
    int b = bh / u_Hkv, kvh = bh % u_Hkv;
    int j0 = ktile * BK;
    int rows = u_G * u_Sq;
    load_keys(tid, b, kvh, j0);
    int kr = tid / TPR, lane = tid % TPR;
    float dk[NACC_D], dv[NACC_V];
    for (int u = 0; u < NACC_D; ++u) dk[u] = 0.0;
    for (int u = 0; u < NACC_V; ++u) dv[u] = 0.0;
#if defined(WALK_SPLIT)
    int acc_at = u_sacc + (int(wg) * WG_SIZE + tid) * (NACC_D + NACC_V);
    if ((u_carry & 1u) != 0u) {
        for (int u = 0; u < NACC_D; ++u) dk[u] = LDF(S_BUF, acc_at + u);
        for (int u = 0; u < NACC_V; ++u) dv[u] = LDF(S_BUF, acc_at + NACC_D + u);
    }
    int r_begin = u_walk_lo * BQ, r_end = min(rows, u_walk_hi * BQ);
#else
    int r_begin = 0, r_end = rows;
#endif
    for (int r0 = r_begin; r0 < r_end; r0 += BQ) {
        if (!tile_sees(r0, min(r0 + BQ, rows) - 1, j0, j0 + BK)) continue;  // uniform: no row sees these keys
        barrier();  // the previous tile's readers are done
        load_rows(tid, b, kvh, r0, rows);
        memoryBarrierShared();
        barrier();
        for (int e = tid; e < BQ * BK; e += WG_SIZE) {
            int kk = e / BQ, r = e % BQ;
            vec2 pd = p_ds(b, kvh, r, r0 + r, rows, kk, j0 + kk);
            s_pp[e] = pd.x;
            s_ds[e] = pd.y;
        }
        memoryBarrierShared();
        barrier();
        if (kr < BK) {
            for (int r = 0; r < BQ; ++r) {
                float p = s_pp[kr * BQ + r], ds = s_ds[kr * BQ + r];
                for (int u = 0; u < NACC_V; ++u) {
                    int c = lane + u * TPR;
                    if (c < HDV) dv[u] += p * s_do[r * V_W + c];
                }
                for (int u = 0; u < NACC_D; ++u) {
                    int c = lane + u * TPR;
                    if (c < HD) dk[u] += ds * s_q[r * Q_W + c];
                }
            }
        }
    }
#if defined(WALK_SPLIT)
    if ((u_carry & 2u) != 0u) {
        for (int u = 0; u < NACC_D; ++u) STF(S_BUF, acc_at + u, dk[u]);
        for (int u = 0; u < NACC_V; ++u) STF(S_BUF, acc_at + NACC_D + u, dv[u]);
        return;
    }
#endif
    int j = j0 + kr;
    if (kr >= BK || j >= u_Skv) return;
    for (int u = 0; u < NACC_D; ++u) {
        int c = lane + u * TPR;
        if (c < HD) ST(DK_BUF, AT(u_dk, b, kvh, j, c), dk[u] * u_scale);
    }
    for (int u = 0; u < NACC_V; ++u) {
        int c = lane + u * TPR;
        if (c < HDV) ST(DV_BUF, AT(u_dv, b, kvh, j, c), dv[u]);
    }
}

#else  // PASS_DQ
uniform int u_tiles;

void main() {
    uint wg = tgl_group_index();
    if (wg >= u_groups) return;
    int tid = int(gl_LocalInvocationID.x);
    int tile = int(wg % uint(u_tiles));
    int bh = int(wg / uint(u_tiles));
    int b = bh / u_Hkv, kvh = bh % u_Hkv;
    int rows = u_G * u_Sq;
    int r0 = tile * BQ;
    load_rows(tid, b, kvh, r0, rows);
    int r_last = min(r0 + BQ, rows) - 1;
    int kv_begin = key_begin(min_pos(r0, r_last)), kv_end = key_end(max_pos(r0, r_last));
    int r = tid / TPR, lane = tid % TPR;
    float dq[NACC_D];
    for (int u = 0; u < NACC_D; ++u) dq[u] = 0.0;
#if defined(WALK_SPLIT)
    int acc_at = u_sacc + (int(wg) * WG_SIZE + tid) * NACC_D;
    if ((u_carry & 1u) != 0u)
        for (int u = 0; u < NACC_D; ++u) dq[u] = LDF(S_BUF, acc_at + u);
    int j_begin = kv_begin + u_walk_lo * BK, j_end = min(kv_end, kv_begin + u_walk_hi * BK);
#else
    int j_begin = kv_begin, j_end = kv_end;
#endif
    for (int j0 = j_begin; j0 < j_end; j0 += BK) {
        barrier();
        load_keys(tid, b, kvh, j0);
        memoryBarrierShared();
        barrier();
        for (int e = tid; e < BQ * BK; e += WG_SIZE) {
            int er = e / BK, kk = e % BK;
            s_ds[e] = p_ds(b, kvh, er, r0 + er, rows, kk, j0 + kk).y;
        }
        memoryBarrierShared();
        barrier();
        if (r < BQ) {
            for (int kk = 0; kk < BK; ++kk) {
                float ds = s_ds[r * BK + kk];
                for (int u = 0; u < NACC_D; ++u) {
                    int c = lane + u * TPR;
                    if (c < HD) dq[u] += ds * s_k[kk * Q_W + c];
                }
            }
        }
    }
#if defined(WALK_SPLIT)
    if ((u_carry & 2u) != 0u) {
        for (int u = 0; u < NACC_D; ++u) STF(S_BUF, acc_at + u, dq[u]);
        return;
    }
#endif
    int rho = r0 + r;
    if (r >= BQ || rho >= rows) return;
    for (int u = 0; u < NACC_D; ++u) {
        int c = lane + u * TPR;
        if (c < HD) ST(DQ_BUF, AT(u_dq, b, head_of(kvh, rho), pos_of(rho), c), dq[u] * u_scale);
    }
}
#endif
#endif
#endif
