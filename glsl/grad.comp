// The Grad family (training): softmax/log_softmax/layer_norm/rms_norm backward, cross_entropy
// forward/backward and embedding_backward, over the rows of the GradPlan
// (backends/common/grad_rules.h): per-role strides over the outer dims (which row) and the inner
// dims (which element of the row). Roles (u_*_stride[d * 6 + role]): 0 a (y, x, logits, dy of
// embedding_backward), 1 g (dy), 2 d (dx, dlogits), 3 p (gamma's f32 copy coordinate), 4 t
// (target / index), 5 l (loss or dloss with reduction none). Everything in f32.
//
// One scratch block of words (s_data) carries what passes hand on, at uniform word offsets:
//   [0] failed flag (cross-entropy: the device check failed), [1] count of non-ignored targets,
//   u_gamma_off: gamma as f32 (pack.comp), u_stats_off: (mean, rstd) per row,
//   u_tgt_off: target / index per row (-1 ignored), u_loss_off: loss per row,
//   u_part_off: dgamma/dbeta partial sums per (chunk, element),
//   u_chunk_off: ROW_CHUNKS' partials per (reduction, row, chunk), 2 words each.
// Checked mode (cross_entropy(_backward) and embedding_backward run in windows, window_split.cpp):
// the whole op's PASS_TARGETS (and PASS_COUNT, or the sort and PASS_EMB_BOUNDS) fill one scratch
// once; each piece runs only its row pass (u_tgt_off and u_loss_off at its first row) or its
// PASS_EMB_GATHER (u_v_lo) over that scratch, checking nothing again, and PASS_CE_SUM follows the
// pieces.
// Passes:
//   PASS_ROW     per row (MODE_GROUP: a workgroup and a shared-memory tree; MODE_THREAD: one
//                invocation per short row), by OP_*:
//     OP_SOFTMAX_BW  dx = scale * y * (dy - sum(dy * y));  OP_LOG_SOFTMAX_BW dx = scale * (dy - exp(y) * sum(dy))
//     OP_LN_BW / OP_RMS_BW  mean (LN), rstd, then mean(g), mean(g * xhat), g = dy * gamma; dx; with
//                    STATS_OUT also stores (mean, rstd) for the column pass
//     OP_CE      max, then sum exp(z - max) and sum z: the row's loss, stored to loss (LOSS_NONE) or
//                to the scratch per row; OP_CE_BW: dlogits = w * (softmax - (1 - ls) onehot - ls / C)
//   PASS_COLUMN  per (element e, chunk of u_chunk_rows rows): partial sums of dy * xhat and dy
//   PASS_COLUMN_FINAL  per element: the chunks' partials in order -> dgamma (HAS_DG), dbeta (HAS_DB),
//                stored as SUM_DTYPE (DTYPE, or f32 partial sums of a piece of an f16 op run in windows)
//   PASS_TARGETS per row: the target / index, range-checked (device_status.glsl; IGNORE: the
//                ignore_index value is kept as -1), stored to the scratch
//   PASS_COUNT   one workgroup: count of non-ignored targets and the failed flag
//   PASS_CE_SUM  one workgroup: the sum (or mean) of the per-row losses -> loss (unless failed)
//   PASS_EMB_BOUNDS  per sorted position s (positions sorted by index, stably): start[k] / end[k]
//                of each index value's run
//   PASS_EMB_GATHER  per (v, j) of dW: the sum over the run of v of dy[token, j], in position order;
//                    a dispatch walks run offsets [u_run_begin, u_run_end) only, later ones adding to
//                    the dW the previous one stored (runs longer than the loop budget); it writes
//                    dW rows v in [u_v_lo, u_v_lo + u_v_rows) (all of V, or a piece's window of it)
// ROW_CHUNKS (PASS_ROW, MODE_GROUP; softmax, log_softmax, layer_norm and rms_norm backward): rows too
// long for one invocation's loop budget (backends/gles/loop_budget.h) are cut into u_splits chunks
// of u_chunk elements, a workgroup per (row, chunk), and the row pass runs as stages, one dispatch
// each (u_stage): stage s walks the chunk for the row's reduction s and stores the chunk's partial
// (row_reduce); later stages add up the row's partials in chunk order instead; the last stage,
// after every reduction, stores dx.
// Defines: one PASS_*, one OP_* (PASS_ROW), MODE_GROUP | MODE_THREAD, ROW_CHUNKS, B_* binding points, DTYPE,
// OUTER_RANK, INNER_RANK (0..8), P_RANK and SUM_DTYPE (PASS_COLUMN_FINAL), TOKEN_WINDOW
// (PASS_EMB_GATHER over a part of the tokens: each run cut to them by binary search) and DW_DTYPE
// (its dW: DTYPE, or the f32 copy that pieces of an f16 op's tokens add to),
// STATUS_BINDING, WG_SIZE.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"
#if defined(STATUS_BINDING)
#include "device_status.glsl"
#endif

layout(local_size_x = WG_SIZE) in;

// Sub-word elements (f16) share their word with neighbours that other invocations store.
#include "store.glsl"
#define STORE_AT(ARR, I, V) TGL_STORE_BITS(ARR, I, tgl_from_f32(V, DTYPE), DTYPE)

#if defined(B_A)
layout(std430, binding = B_A) readonly buffer ABuffer { uint a_data[]; };
#endif
#if defined(B_G)
layout(std430, binding = B_G) readonly buffer GBuffer { uint g_data[]; };
#endif
#if defined(B_D)
layout(std430, binding = B_D) buffer DBuffer { uint d_data[]; };
#endif
#if defined(B_T)
layout(std430, binding = B_T) readonly buffer TBuffer { int t_data[]; };
#endif
#if defined(B_L)
layout(std430, binding = B_L) buffer LBuffer { uint l_data[]; };
#endif
#if defined(B_S)
layout(std430, binding = B_S) buffer SBuffer { uint s_data[]; };
#endif
#if defined(B_K)
layout(std430, binding = B_K) readonly buffer KBuffer { int k_data[]; };  // embedding: index per token
#endif
#if defined(B_DG)
layout(std430, binding = B_DG) buffer DGBuffer { uint dg_data[]; };
#endif
#if defined(B_DB)
layout(std430, binding = B_DB) buffer DBBuffer { uint db_data[]; };
#endif

uniform uint u_rows;
uniform uint u_len;
uniform int u_offset[6];
uniform float u_scale;
uniform float u_eps;
uniform float u_smoothing;
uniform int u_ignore;
uniform int u_limit;    // PASS_TARGETS: valid values are [0, u_limit)
uniform uint u_op;      // PASS_TARGETS: op id, for the error
uniform int u_axis;     // PASS_TARGETS: the axis the error names
uniform uint u_report;  // PASS_TARGETS: 1 in the report dispatch
uniform int u_gamma_off;
uniform int u_stats_off;
uniform int u_tgt_off;
uniform int u_loss_off;
uniform int u_part_off;
uniform int u_pos_off;     // embedding: sorted positions
uniform int u_start_off;   // embedding: start of each value's run (end: + u_vocab)
uniform uint u_vocab;      // embedding: V, of the whole op
uniform uint u_v_lo;       // PASS_EMB_GATHER: the first index value of the rows of dW it writes (a piece
uniform uint u_v_rows;     // of an op run in windows: a window of V's rows), and their count
uniform uint u_t_lo;       // PASS_EMB_GATHER: the tokens (positions) whose dy rows it sums, [u_t_lo, u_t_hi)
uniform uint u_t_hi;       // (a piece of tokens past the first adds to the dW the earlier ones stored)
uniform int u_padding;     // embedding: the row of this dispatch's dW that stays 0, or -1
uniform uint u_run_begin;  // PASS_EMB_GATHER: the offsets into each run this dispatch walks
uniform uint u_run_end;
uniform uint u_chunks;
uniform uint u_chunk_rows;
uniform int u_dw_stride[2];
uniform int u_dw_offset;
#if defined(ROW_CHUNKS)
uniform uint u_splits;
uniform uint u_chunk;
uniform int u_chunk_off;
uniform uint u_stage;
#endif
#if OUTER_RANK > 0
uniform int u_outer_shape[OUTER_RANK];
uniform int u_outer_stride[OUTER_RANK * 6];
#endif
#if INNER_RANK > 0
uniform int u_inner_shape[INNER_RANK];
uniform int u_inner_stride[INNER_RANK * 6];
#endif
#if defined(P_RANK)
uniform int u_p_shape[P_RANK];
uniform int u_dg_stride[P_RANK];
uniform int u_db_stride[P_RANK];
uniform int u_dg_offset;
uniform int u_db_offset;
#endif

// Offsets of roles a, g, d, p (o4) and t, l (o2) of row `row`'s element (0, ..., 0).
void row_base(uint row, out ivec4 o4, out ivec2 o2) {
    o4 = ivec4(u_offset[0], u_offset[1], u_offset[2], u_offset[3]);
    o2 = ivec2(u_offset[4], u_offset[5]);
#if OUTER_RANK > 0
    uint rest = row;
    for (int d = OUTER_RANK - 1; d >= 0; --d) {
        uint n = uint(u_outer_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        int b = d * 6;
        o4 += c * ivec4(u_outer_stride[b], u_outer_stride[b + 1], u_outer_stride[b + 2], u_outer_stride[b + 3]);
        o2 += c * ivec2(u_outer_stride[b + 4], u_outer_stride[b + 5]);
    }
#endif
}

// Offsets of roles a, g, d, p of element k of a row, relative to the row's base.
ivec4 elem_offsets(uint k) {
    ivec4 o = ivec4(0);
#if INNER_RANK > 0
    uint rest = k;
    for (int d = INNER_RANK - 1; d >= 0; --d) {
        uint n = uint(u_inner_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        int b = d * 6;
        o += c * ivec4(u_inner_stride[b], u_inner_stride[b + 1], u_inner_stride[b + 2], u_inner_stride[b + 3]);
    }
#endif
    return o;
}

#if defined(B_A)
float a_at(int i) { return tgl_to_f32(tgl_extract(a_data[tgl_word_of(i, DTYPE)], i, DTYPE), DTYPE); }
#endif
#if defined(B_G)
float g_at(int i) { return tgl_to_f32(tgl_extract(g_data[tgl_word_of(i, DTYPE)], i, DTYPE), DTYPE); }
#endif
#if defined(B_L)
float l_at(int i) { return tgl_to_f32(tgl_extract(l_data[tgl_word_of(i, DTYPE)], i, DTYPE), DTYPE); }
#endif
#if defined(B_S)
float s_f(int i) { return uintBitsToFloat(s_data[i]); }
#endif

#if defined(MODE_GROUP) || defined(PASS_COUNT) || defined(PASS_CE_SUM)
#define HAS_TREE
// One half per reduction (the first's result may still be read when the next one starts).
shared vec2 s_red[2 * WG_SIZE];
#endif

// Sum (or max, is_max) of every invocation's v over the workgroup, returned to all of them;
// consecutive reductions alternate `which` (see norm.comp's group_reduce).
vec2 group_reduce(vec2 v, bool is_max, uint which) {
#if defined(HAS_TREE)
    uint lid = gl_LocalInvocationID.x;
    uint b = which * uint(WG_SIZE);
    s_red[b + lid] = v;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(WG_SIZE) / 2u; h > 0u; h >>= 1) {
        if (lid < h) {
            vec2 o = s_red[b + lid + h], m = s_red[b + lid];
            s_red[b + lid] = is_max ? vec2(tgl_maximum(m.x, o.x), tgl_maximum(m.y, o.y)) : m + o;
        }
        memoryBarrierShared();
        barrier();
    }
    return s_red[b];
#else
    return v;
#endif
}

#if defined(PASS_ROW)
#if defined(ROW_CHUNKS)
uint g_row, g_chunk;  // this workgroup's row and chunk
bool g_live;          // a row of the op (else it reads row 0's partials and stores nothing)
// The row's total of reduction `s` over the invocations' values v: in stage s the workgroup's
// (its chunk's) sum or max, stored as the chunk's partial; in a later stage the row's partials
// combined in chunk order (v unused).
vec2 row_reduce(vec2 v, bool is_max, uint which, uint s) {
    int first = u_chunk_off + 2 * int((s * u_rows + g_row) * u_splits);
    if (u_stage == s) {
        v = group_reduce(v, is_max, which);
        if (gl_LocalInvocationID.x == 0u && g_live) {
            s_data[first + 2 * int(g_chunk)] = floatBitsToUint(v.x);
            s_data[first + 2 * int(g_chunk) + 1] = floatBitsToUint(v.y);
        }
        return v;
    }
    vec2 t = is_max ? vec2(tgl_neg_inf()) : vec2(0.0);
    for (uint c = 0u; c < u_splits; ++c) {
        vec2 p = vec2(uintBitsToFloat(s_data[first + 2 * int(c)]), uintBitsToFloat(s_data[first + 2 * int(c) + 1]));
        t = is_max ? vec2(tgl_maximum(t.x, p.x), tgl_maximum(t.y, p.y)) : t + p;
    }
    return t;
}
// The end of the elements this dispatch walks for stage s (an empty walk in the other stages).
uint walk_end(uint s, uint len) { return u_stage == s ? min(len, g_chunk * u_chunk + u_chunk) : 0u; }
// Stage s's dispatch is done once its partial is stored.
#define ROW_STAGE_END(s) \
    if (u_stage == (s)) return;
#else
vec2 row_reduce(vec2 v, bool is_max, uint which, uint s) { return group_reduce(v, is_max, which); }
uint walk_end(uint s, uint len) { return len; }
#define ROW_STAGE_END(s)
#endif

void main() {
#if defined(MODE_GROUP) && defined(ROW_CHUNKS)
    g_row = tgl_group_index() / u_splits;
    g_chunk = tgl_group_index() % u_splits;
    uint row = g_row;
    uint start = g_chunk * u_chunk + gl_LocalInvocationID.x, step = uint(WG_SIZE);
    bool lead = gl_LocalInvocationID.x == 0u && g_chunk == 0u;
    bool live = row < u_rows;
    g_live = live;
    if (!live) g_row = 0u;
#elif defined(MODE_GROUP)
    uint row = tgl_group_index();
    uint start = gl_LocalInvocationID.x, step = uint(WG_SIZE);
    bool lead = gl_LocalInvocationID.x == 0u;
    // No early return: every invocation must reach the barriers.
    bool live = row < u_rows;
#else
    uint row = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    uint start = 0u, step = 1u;
    bool lead = true;
    if (row >= u_rows) return;
    bool live = true;
#endif
#if defined(OP_CE) || defined(OP_CE_BW)
    live = live && s_data[0] == 0u;  // the target check failed: nothing is written
#endif
    uint len = live ? u_len : 0u;
    ivec4 b4;
    ivec2 b2;
    row_base(live ? row : 0u, b4, b2);

#if defined(OP_SOFTMAX_BW) || defined(OP_LOG_SOFTMAX_BW)
    float acc = 0.0;
    for (uint k = start; k < walk_end(0u, len); k += step) {
        ivec4 o = b4 + elem_offsets(k);
#if defined(OP_LOG_SOFTMAX_BW)
        acc += g_at(o.y);
#else
        acc += g_at(o.y) * a_at(o.x);
#endif
    }
    float s = row_reduce(vec2(acc, 0.0), false, 0u, 0u).x;
    ROW_STAGE_END(0u)
    for (uint k = start; k < walk_end(1u, len); k += step) {
        ivec4 o = b4 + elem_offsets(k);
#if defined(OP_LOG_SOFTMAX_BW)
        float v = g_at(o.y) - tgl_exp(a_at(o.x)) * s;
#else
        float v = a_at(o.x) * (g_at(o.y) - s);
#endif
        STORE_AT(d_data, o.z, u_scale * v)
    }

#elif defined(OP_LN_BW) || defined(OP_RMS_BW)
    // Stages (ROW_CHUNKS): 0 the sum of x (of x * x), LN: 1 the deviations', then the sums of g and
    // g * xhat (S_M), then dx (S_DX).
#if defined(OP_RMS_BW)
#define S_M 1u
#else
#define S_M 2u
#endif
#define S_DX (S_M + 1u)
    float n = float(u_len);
    float mean = 0.0, var;
    float acc = 0.0;
    for (uint k = start; k < walk_end(0u, len); k += step) {
        float v = a_at(b4.x + elem_offsets(k).x);
#if defined(OP_RMS_BW)
        acc += v * v;
#else
        acc += v;
#endif
    }
#if defined(OP_RMS_BW)
    var = row_reduce(vec2(acc, 0.0), false, 0u, 0u).x / n;
    ROW_STAGE_END(0u)
#else
    mean = row_reduce(vec2(acc, 0.0), false, 0u, 0u).x / n;
    ROW_STAGE_END(0u)
    // Two passes with the deviations' mean taken out (as norm.comp): stable for large means.
    vec2 dv = vec2(0.0);
    for (uint k = start; k < walk_end(1u, len); k += step) {
        float d = a_at(b4.x + elem_offsets(k).x) - mean;
        dv += vec2(d, d * d);
    }
    dv = row_reduce(dv, false, 1u, 1u) / n;
    ROW_STAGE_END(1u)
    var = max(dv.y - dv.x * dv.x, 0.0);
    mean += dv.x;
#endif
    float rstd = tgl_div(1.0, tgl_sqrt(var + u_eps));
#if defined(STATS_OUT)
#if defined(ROW_CHUNKS)
    if (live && lead && u_stage == S_DX) {
#else
    if (live && lead) {
#endif
        s_data[u_stats_off + 2 * int(row)] = floatBitsToUint(mean);
        s_data[u_stats_off + 2 * int(row) + 1] = floatBitsToUint(rstd);
    }
#endif
    vec2 m = vec2(0.0);  // sum g, sum g * xhat
    for (uint k = start; k < walk_end(S_M, len); k += step) {
        ivec4 o = b4 + elem_offsets(k);
        float g = g_at(o.y);
#if defined(HAS_GAMMA)
        g *= s_f(u_gamma_off + o.w);
#endif
        m += vec2(g, g * (a_at(o.x) - mean) * rstd);
    }
#if defined(OP_RMS_BW)
    m = row_reduce(m, false, 1u, S_M) / n;  // halves alternate: the previous reduction used 0
    m.x = 0.0;
#else
    m = row_reduce(m, false, 0u, S_M) / n;
#endif
    ROW_STAGE_END(S_M)
    for (uint k = start; k < walk_end(S_DX, len); k += step) {
        ivec4 o = b4 + elem_offsets(k);
        float g = g_at(o.y);
#if defined(HAS_GAMMA)
        g *= s_f(u_gamma_off + o.w);
#endif
        float xhat = (a_at(o.x) - mean) * rstd;
        STORE_AT(d_data, o.z, rstd * (g - m.x - xhat * m.y))
    }

#elif defined(OP_CE) || defined(OP_CE_BW)
    int t = live ? int(s_data[u_tgt_off + int(row)]) : -1;
    float mx = tgl_neg_inf();
    for (uint k = start; k < len; k += step) mx = tgl_maximum(mx, a_at(b4.x + elem_offsets(k).x));
    mx = group_reduce(vec2(mx, 0.0), true, 0u).x;
    vec2 se = vec2(0.0);  // sum exp(z - max), sum z
    bool finite = !tgl_isinf(mx) && !tgl_isnan(mx);
    for (uint k = start; k < len; k += step) {
        float z = a_at(b4.x + elem_offsets(k).x);
        se += vec2(finite ? tgl_exp(z - mx) : 0.0, z);
    }
    se = group_reduce(se, false, 1u);
    // Not finite (inf or NaN logits): the max itself carries it (NaN, or inf - inf = NaN).
    float lse = finite ? mx + tgl_log(se.x) : tgl_nan();  // not mx - mx: a compiler may fold x - x to 0
    float C = float(u_len);
#if defined(OP_CE)
    if (live && lead) {
        float l = 0.0;
        if (t >= 0) {
            float zt = a_at(b4.x + elem_offsets(uint(t)).x);
            l = (1.0 - u_smoothing) * (lse - zt);
            if (u_smoothing > 0.0) l += u_smoothing * (lse - se.y / C);
        }
#if defined(LOSS_NONE)
        STORE_AT(l_data, b2.y, l)
#else
        s_data[u_loss_off + int(row)] = floatBitsToUint(l);
#endif
    }
#else
    float w = 0.0;
    if (t >= 0) {
#if defined(LOSS_NONE)
        w = l_at(b2.y);
#else
        w = l_at(u_offset[5]);
#if defined(MEAN)
        w = w / float(s_data[1]);
#endif
#endif
    }
    for (uint k = start; k < len; k += step) {
        ivec4 o = b4 + elem_offsets(k);
        float v = 0.0;
        if (t >= 0) {
            float p = tgl_exp(a_at(o.x) - lse);
            v = w * (p - (int(k) == t ? 1.0 - u_smoothing : 0.0) - u_smoothing / C);
        }
        STORE_AT(d_data, o.z, v)
    }
#endif
#else
#error "grad.comp: PASS_ROW needs an OP_* define"
#endif
}

#elif defined(PASS_COLUMN)
void main() {
    uint i = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (i >= u_len * u_chunks) return;
    uint e = i % u_len, chunk = i / u_len;
    ivec4 eo = elem_offsets(e);
    uint r0 = chunk * u_chunk_rows, r1 = min(u_rows, r0 + u_chunk_rows);
    vec2 acc = vec2(0.0);  // sum dy * xhat, sum dy
    for (uint r = r0; r < r1; ++r) {
        ivec4 b4;
        ivec2 b2;
        row_base(r, b4, b2);
        float dy = g_at(b4.y + eo.y);
        float xhat = (a_at(b4.x + eo.x) - s_f(u_stats_off + 2 * int(r))) * s_f(u_stats_off + 2 * int(r) + 1);
        acc += vec2(dy * xhat, dy);
    }
    int w = u_part_off + 2 * int(chunk * u_len + e);
    s_data[w] = floatBitsToUint(acc.x);
    s_data[w + 1] = floatBitsToUint(acc.y);
}

#elif defined(PASS_COLUMN_FINAL)
void main() {
    uint e = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (e >= u_len) return;
    vec2 acc = vec2(0.0);
    for (uint c = 0u; c < u_chunks; ++c) {
        int w = u_part_off + 2 * int(c * u_len + e);
        acc += vec2(s_f(w), s_f(w + 1));
    }
    int og = u_dg_offset, ob = u_db_offset;
    uint rest = e;
    for (int d = P_RANK - 1; d >= 0; --d) {
        uint n = uint(u_p_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        og += c * u_dg_stride[d];
        ob += c * u_db_stride[d];
    }
#if defined(HAS_DG)
    TGL_STORE_BITS(dg_data, og, tgl_from_f32(acc.x, SUM_DTYPE), SUM_DTYPE)
#endif
#if defined(HAS_DB)
    TGL_STORE_BITS(db_data, ob, tgl_from_f32(acc.y, SUM_DTYPE), SUM_DTYPE)
#endif
}

#elif defined(PASS_TARGETS)
void main() {
    uint row = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (row >= u_rows) return;
    ivec4 b4;
    ivec2 b2;
    row_base(row, b4, b2);
    ivec2 v = TGL_LOAD_INDEX(t_data, b2.x, I_DTYPE);  // the whole value of an i64 target
#if defined(IGNORE)
    if (v == ivec2(u_ignore, u_ignore >> 31)) v = ivec2(-1);
    else
#endif
    if (!tgl_index_in_range(v, u_limit)) {
        if (u_report == 0u) tgl_raise(19u /* TGL_ERROR_INDEX_OUT_OF_RANGE */, u_op, row, uint(u_limit), uint(u_axis));
        else if (tgl_is_reported(row)) tgl_report_index(v);
    }
    if (u_report == 0u) s_data[u_tgt_off + int(row)] = uint(v.x);
}

#elif defined(PASS_COUNT)
void main() {
    uint c = 0u;
    for (uint r = gl_LocalInvocationID.x; r < u_rows; r += uint(WG_SIZE))
        c += int(s_data[u_tgt_off + int(r)]) >= 0 ? 1u : 0u;
    // Counts stay exact in f32 up to 2^24 per invocation's share and in the tree (f32 sums of
    // integers below 2^24).
    float total = group_reduce(vec2(float(c), 0.0), false, 0u).x;
    if (gl_LocalInvocationID.x == 0u) {
        s_data[0] = tgl_op_failed() ? 1u : 0u;
        s_data[1] = uint(total);
    }
}

#elif defined(PASS_CE_SUM)
void main() {
    float acc = 0.0;
    for (uint r = gl_LocalInvocationID.x; r < u_rows; r += uint(WG_SIZE)) acc += s_f(u_loss_off + int(r));
    float total = group_reduce(vec2(acc, 0.0), false, 0u).x;
    if (gl_LocalInvocationID.x == 0u && s_data[0] == 0u) {
#if defined(MEAN)
        total = total / float(s_data[1]);  // all ignored: 0 / 0 = NaN, as PyTorch
#endif
        STORE_AT(l_data, u_offset[5], total)
    }
}

#elif defined(PASS_EMB_BOUNDS)
void main() {
    uint s = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (s >= u_rows) return;
    int k = k_data[s_data[u_pos_off + int(s)]];
    if (k < 0 || k >= int(u_vocab)) return;  // the check failed; the gather pass writes nothing
    if (s == 0u || k_data[s_data[u_pos_off + int(s) - 1]] != k) s_data[u_start_off + k] = s;
    if (s + 1u == u_rows || k_data[s_data[u_pos_off + int(s) + 1]] != k) s_data[u_start_off + int(u_vocab) + k] = s + 1u;
}

#elif defined(PASS_EMB_GATHER)
#if defined(TOKEN_WINDOW)
// The first sorted position in [lo, hi) whose token is at least t (hi if none): a value's run of
// sorted positions holds its tokens in increasing order (the sort is stable).
uint first_token_at_least(uint lo, uint hi, uint t) {
    while (lo < hi) {
        uint mid = lo + (hi - lo) / 2u;
        if (s_data[u_pos_off + int(mid)] < t) lo = mid + 1u;
        else hi = mid;
    }
    return lo;
}
#endif

void main() {
    uint i = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (i >= u_v_rows * u_len || tgl_op_failed()) return;
    uint j = i % u_len, r = i / u_len, v = u_v_lo + r;  // r: the row of this dispatch's dW, v: its index value
    int aj = elem_offsets(j).x;
    int at = u_dw_offset + int(r) * u_dw_stride[0] + int(j) * u_dw_stride[1];
    // v's run of sorted positions, cut to the tokens of this dispatch
    uint s0 = s_data[u_start_off + int(v)], s1 = s_data[u_start_off + int(u_vocab + v)];
#if defined(TOKEN_WINDOW)
    s0 = first_token_at_least(s0, s1, u_t_lo);
    s1 = first_token_at_least(s0, s1, u_t_hi);
#endif
    bool first = u_run_begin == 0u && u_t_lo == 0u;  // this dispatch stores dW; later ones add to it
    bool padding = int(r) == u_padding;
    if (!first && (padding || s1 - s0 <= u_run_begin)) return;  // nothing to add
    float acc = first ? 0.0 : tgl_to_f32(tgl_extract(d_data[tgl_word_of(at, DW_DTYPE)], at, DW_DTYPE), DW_DTYPE);
    if (!padding) {
        uint end = min(s1, s0 + u_run_end);
        for (uint s = s0 + u_run_begin; s < end; ++s) {
            ivec4 b4;
            ivec2 b2;
            row_base(s_data[u_pos_off + int(s)] - u_t_lo, b4, b2);
            acc += a_at(b4.x + aj);
        }
    }
    TGL_STORE_BITS(d_data, at, tgl_from_f32(acc, DW_DTYPE), DW_DTYPE)
}

#else
#error "grad.comp: no PASS_* define"
#endif
