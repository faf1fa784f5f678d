// The Normalize family: softmax, log_softmax, layer_norm, rms_norm, group_norm, batch_norm,
// add_layer_norm, add_rms_norm, over rows of the NormPlan (backends/common/norm_rules.h): a row is
// the set of elements one set of statistics covers; its elements are found through per-role
// strides over the outer dims (which row) and the inner dims (which element of the row).
// Roles (strides in u_*_stride[d * 5 + role]): 0 x, 1 r (mask or residual), 2 y, 3 s (sum),
// 4 e (the coordinate of gamma/beta/mean/var in their f32 copies in p_data).
//
// Each row is read up to three times, everything in f32:
//   STATS_SOFTMAX  m = max(v) (NaN propagates), then sum of exp(v - m); y = exp(v - m) / sum or
//                  (v - m) - log(sum). A NaN or +inf in the row gives NaN, all -inf gives 0 / -inf.
//   STATS_MEANVAR  mean, then the mean of (v - mean)^2 (two passes: stable for large means);
//                  y = (v - mean) / sqrt(var + eps) * gamma + beta.
//   STATS_MEANSQ   mean of v^2; y = v / sqrt(ms + eps) * gamma.
//   STATS_NONE     batch_norm: y = (v - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c].
// v is scale * x + mask (softmax), x + residual rounded to DTYPE and stored to s (ADD), else x.
// MODE_GROUP: one workgroup per row; each invocation strides over the row, subgroup shuffles and a
// shared-memory tree (subgroup.glsl) combine the invocations' partial max/sums. MODE_THREAD: one invocation per row (short rows).
// ROW_VEC4 (with MODE_GROUP; f32 rows contiguous and 16-byte aligned in x, y, r, s; not batch_norm):
// the row is read once into registers (PER vec4 per invocation) and written once.
// ROW_CHUNKS (with MODE_GROUP, not ROW_VEC4): rows too long for one invocation's loop budget
// (backends/gles/loop_budget.h) are cut into u_splits chunks of u_chunk elements, a workgroup per
// (row, chunk): workgroup g = row * u_piece_splits + chunk. SUM_ONLY and STATS_NONE just walk their
// chunk. The others take two passes: CHUNK_STATS stores each chunk's partial statistics at
// p_data[u_part + 2 g] (softmax: the chunk's max m_c and sum of exp(v - m_c); mean/var: the
// chunk's mean and sum of squared deviations; mean of squares: the sum of squares), then
// CHUNK_APPLY merges the row's partials (Chan et al. for the variance) and writes its chunk.
// A row larger than one storage-block window runs in pieces of whole chunks (window_split.cpp), the
// call's x and y a piece of the row: the piece's chunks are chunks [u_chunk_lo, u_chunk_lo +
// u_piece_splits) of the row's u_splits, which has u_row_len elements (u_len: the piece's); every
// piece's CHUNK_STATS runs before any CHUNK_APPLY. Whole rows: u_chunk_lo 0, u_piece_splits =
// u_splits, u_row_len = u_len.
// The params (gamma, beta, mean, var) come as f32 in p_data, copied there by the pack pass (pack.comp).
// SUM_ONLY (with ADD, HAS_R, HAS_S; no y, no params): only stores s = x + r, for devices with
// fewer than 5 SSBO blocks; the normalize pass then reads s as its x (no ADD, HAS_R, HAS_S).
//
// EPILOGUE (not with SUM_ONLY, CHUNK_STATS): a fused elementwise chain (fused_stages.glsl, recorded
// graphs: backends/gles/graph_fusion.cpp) applied to every element of y as it is stored: the chain's
// head h is y's element as stored, its views are addressed over y's dims: u_ep_offset[v], and
// strides u_ep_outer_stride[d * N_VIEWS + v] over the rows (EP_OUTER_RANK merged dims of
// u_ep_outer_shape) and u_ep_inner_stride over the row's elements (EP_INNER_RANK, u_ep_inner_shape).
// Whatever path stores y (one invocation per row, a workgroup per row, ROW_VEC4, the chunks of
// CHUNK_APPLY) applies it, so y and the chain's outputs hold what the norm and then the chain's
// ops run one by one store.
//
// Defines: STATS_* | SUM_ONLY; LOG (log_softmax); ADD; HAS_R, HAS_S, HAS_GAMMA, HAS_BETA; B_X, B_R, B_P, B_Y,
// B_S (binding points of the blocks used); DTYPE; MODE_THREAD | MODE_GROUP; ROW_VEC4, PER;
// ROW_CHUNKS [+ CHUNK_STATS | CHUNK_APPLY];
// OUTER_RANK, INNER_RANK (0..8); WG_SIZE (a power of two); TGL_SUBGROUP_SIZE (subgroup.glsl);
// EPILOGUE with EP_OUTER_RANK, EP_INNER_RANK and fused_stages.glsl's defines.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"
#include "subgroup.glsl"

layout(local_size_x = WG_SIZE) in;

#include "store.glsl"
#define STORE_BITS(ARR, I, BITS) TGL_STORE_BITS(ARR, I, BITS, DTYPE)

#if defined(EPILOGUE)
#include "elementwise_ops.glsl"
#include "fused_stages.glsl"
uniform int u_ep_offset[N_VIEWS];
#if EP_OUTER_RANK > 0
uniform int u_ep_outer_shape[EP_OUTER_RANK];
uniform int u_ep_outer_stride[EP_OUTER_RANK * N_VIEWS];
#endif
#if EP_INNER_RANK > 0
uniform int u_ep_inner_shape[EP_INNER_RANK];
uniform int u_ep_inner_stride[EP_INNER_RANK * N_VIEWS];
#endif

int ep_row[N_VIEWS];  // the chain's views' offsets at element 0 of this invocation's row

void ep_row_base(uint row) {
    for (int v = 0; v < N_VIEWS; ++v) ep_row[v] = u_ep_offset[v];
#if EP_OUTER_RANK > 0
    uint rest = row;
    for (int d = EP_OUTER_RANK - 1; d >= 0; --d) {
        uint n = uint(u_ep_outer_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        for (int v = 0; v < N_VIEWS; ++v) ep_row[v] += c * u_ep_outer_stride[d * N_VIEWS + v];
    }
#endif
}

// The chain at element k of the row, whose y was stored as `bits` (XOR u_zero: no contraction
// of the norm's last operation with the chain's first).
void epilogue(uint k, uint bits) {
    int o[N_VIEWS];
    for (int v = 0; v < N_VIEWS; ++v) o[v] = ep_row[v];
#if EP_INNER_RANK > 0
    uint rest = k;
    for (int d = EP_INNER_RANK - 1; d >= 0; --d) {
        uint n = uint(u_ep_inner_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        for (int v = 0; v < N_VIEWS; ++v) o[v] += c * u_ep_inner_stride[d * N_VIEWS + v];
    }
#endif
    fused_stages(o, tgl_to_f32(bits ^ u_zero, DTYPE));
}
#endif

// ROW_VEC4 reads and writes x, r, y, s as 16-byte words (f32 only).
#if defined(ROW_VEC4)
#define WORD uvec4
#else
#define WORD uint
#endif
layout(std430, binding = B_X) readonly buffer XBuffer { WORD x_data[]; };
#if defined(B_Y)
layout(std430, binding = B_Y) buffer YBuffer { WORD y_data[]; };
#endif
#if defined(HAS_R)
layout(std430, binding = B_R) readonly buffer RBuffer { WORD r_data[]; };
#endif
#if defined(HAS_S)
layout(std430, binding = B_S) buffer SBuffer { WORD s_data[]; };
#endif
#if defined(B_P) && defined(CHUNK_STATS)
layout(std430, binding = B_P) buffer PBuffer { float p_data[]; };
#elif defined(B_P)
layout(std430, binding = B_P) readonly buffer PBuffer { float p_data[]; };
#endif
#if defined(ROW_CHUNKS)
uniform uint u_splits;
uniform uint u_chunk;
uniform int u_part;
uniform uint u_chunk_lo;
uniform uint u_piece_splits;
uniform uint u_row_len;
#endif

uniform uint u_rows;
uniform uint u_len;
uniform int u_offset[5];
uniform float u_scale;
uniform float u_eps;
uniform int u_gamma_off;
uniform int u_beta_off;
uniform int u_mean_off;
uniform int u_var_off;
#if OUTER_RANK > 0
uniform int u_outer_shape[OUTER_RANK];
uniform int u_outer_stride[OUTER_RANK * 5];
#endif
#if INNER_RANK > 0
uniform int u_inner_shape[INNER_RANK];
uniform int u_inner_stride[INNER_RANK * 5];
#endif

float elem(uint word, int i) { return tgl_to_f32(tgl_extract(word, i, DTYPE), DTYPE); }

// Offsets of the roles x, r, y, s (o4) and e (oe) of row `row`'s element (0, ..., 0).
void row_base(uint row, out ivec4 o4, out int oe) {
    o4 = ivec4(u_offset[0], u_offset[1], u_offset[2], u_offset[3]);
    oe = u_offset[4];
#if OUTER_RANK > 0
    uint rest = row;
    for (int d = OUTER_RANK - 1; d >= 0; --d) {
        uint n = uint(u_outer_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        o4 += c * ivec4(u_outer_stride[d * 5], u_outer_stride[d * 5 + 1], u_outer_stride[d * 5 + 2], u_outer_stride[d * 5 + 3]);
        oe += c * u_outer_stride[d * 5 + 4];
    }
#endif
}

// The same for element k of the row, from the row's base.
void elem_offsets(uint k, inout ivec4 o4, inout int oe) {
#if INNER_RANK > 0
    uint rest = k;
    for (int d = INNER_RANK - 1; d >= 0; --d) {
        uint n = uint(u_inner_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        o4 += c * ivec4(u_inner_stride[d * 5], u_inner_stride[d * 5 + 1], u_inner_stride[d * 5 + 2], u_inner_stride[d * 5 + 3]);
        oe += c * u_inner_stride[d * 5 + 4];
    }
#endif
}

#if !defined(ROW_VEC4)
// The value the statistics see at element offsets o (x, r, y, s).
float value_at(ivec4 o, bool store_sum) {
    float v = elem(x_data[tgl_word_of(o.x, DTYPE)], o.x);
#if defined(STATS_SOFTMAX)
    v *= u_scale;
#endif
#if defined(HAS_R)
    v += elem(r_data[tgl_word_of(o.y, DTYPE)], o.y);
#endif
#if defined(ADD)
    uint bits = tgl_from_f32(v, DTYPE);  // the sum as stored: what the norm sees
    v = tgl_to_f32(bits, DTYPE);
#if defined(HAS_S)
    if (store_sum) { STORE_BITS(s_data, o.w, bits) }
#endif
#endif
    return v;
}

#if defined(B_Y)
// Stores v as element k of the row, at y offset i (and runs the EPILOGUE on it).
void y_store(int i, uint k, float v) {
    uint bits = tgl_from_f32(v, DTYPE);
    STORE_BITS(y_data, i, bits)
#if defined(EPILOGUE)
    epilogue(k, bits);
#endif
}
#endif

#endif  // !ROW_VEC4

#if defined(MODE_GROUP)
// One half per reduction of a row (the first's result is still being read when the second starts).
shared float s_red[2 * WG_SIZE];
#endif

// Max (NaN-propagating) or sum of every invocation's v, returned to all of them. `which` (0 or 1)
// picks the shared half; consecutive reductions must alternate halves: after the last barrier an
// invocation may start writing the next reduction's inputs while others still read this result.
float combine(float a, float b, bool is_max) { return is_max ? tgl_maximum(a, b) : a + b; }
float combine_max(float a, float b) { return tgl_maximum(a, b); }
float combine_add(float a, float b) { return a + b; }
vec2 combine_add2(vec2 a, vec2 b) { return a + b; }
float group_reduce(float v, bool is_max, uint which) {
#if defined(MODE_GROUP)
    uint lid = tgl_local_slot();
    uint b = which * uint(WG_SIZE);
    if (is_max) {
        TGL_SUBGROUP_FOLD(v, 1u, WG_SIZE, combine_max)
    } else {
        TGL_SUBGROUP_FOLD(v, 1u, WG_SIZE, combine_add)
    }
    s_red[b + lid] = v;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(WG_SIZE) / 2u; h >= TGL_TREE_STOP(1u); h >>= 1) {
        if (lid < h) s_red[b + lid] = combine(s_red[b + lid], s_red[b + lid + h], is_max);
        memoryBarrierShared();
        barrier();
    }
    return s_red[b];
#else
    return v;
#endif
}

// Sums of two values of every invocation in one tree (both halves); its first barrier lets every
// invocation finish reading the previous result before either half is overwritten.
vec2 group_sum2(vec2 v) {
#if defined(MODE_GROUP)
    uint lid = tgl_local_slot();
    TGL_SUBGROUP_FOLD(v, 1u, WG_SIZE, combine_add2)
    barrier();
    s_red[lid] = v.x;
    s_red[uint(WG_SIZE) + lid] = v.y;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(WG_SIZE) / 2u; h >= TGL_TREE_STOP(1u); h >>= 1) {
        if (lid < h) {
            s_red[lid] += s_red[lid + h];
            s_red[uint(WG_SIZE) + lid] += s_red[uint(WG_SIZE) + lid + h];
        }
        memoryBarrierShared();
        barrier();
    }
    return vec2(s_red[0], s_red[WG_SIZE]);
#else
    return v;
#endif
}

#if defined(ROW_VEC4)
// MODE_GROUP for f32 rows that are contiguous and start 16-byte aligned in x, y (and r, s): the
// row is read once, into registers: PER quads per invocation (quad lid + j * WG_SIZE, so that
// neighbouring invocations read neighbouring 16-byte words), the statistics come from the
// registers (softmax keeps exp(v - m) there for the store), then one store pass. Same formulas as
// the general path below; the host picks PER and WG_SIZE so that 4 * PER * WG_SIZE >= u_len.
// Elements past the row's end hold a value that changes no statistic (softmax: -inf, which adds
// exp(-inf) = 0 to the sum; else 0) except the deviations, which skip them; they are not stored.
// Register arrays are indexed by constants only (loops unrolled): dynamic indices would put them
// in local memory.
#pragma optionNV(unroll all)

#if defined(STATS_SOFTMAX)
#define PAD tgl_neg_inf()
#else
#define PAD 0.0
#endif

// Elements of quad j of this invocation within the row: 0..4.
int quad_count(int j, uint len) { return clamp(int(len) - 4 * (int(gl_LocalInvocationID.x) + j * WG_SIZE), 0, 4); }

// f32 element i of an SSBO of 16-byte words.
#define ELEM(ARR, I) ARR[(I) >> 2][(I) & 3]

void main() {
    uint row = tgl_group_index();
    uint lid = gl_LocalInvocationID.x;
    // No early return: every invocation must reach the barriers; an out-of-range row has no elements.
    uint len = row < u_rows ? u_len : 0u;
    ivec4 b4;
    int be;
    row_base(row, b4, be);
#if defined(EPILOGUE)
    ep_row_base(row);
#endif
    ivec4 q4 = b4 >> 2;  // the quads of element 0 of x, r, y, s
    float n = float(u_len);
    vec4 v[PER];
    for (int j = 0; j < PER; ++j) {
        int q = int(lid) + j * WG_SIZE;
        int nq = quad_count(j, len);
        vec4 a = vec4(PAD);
        if (nq == 4) {
            a = uintBitsToFloat(x_data[q4.x + q]);
#if defined(STATS_SOFTMAX)
            a *= u_scale;
#endif
#if defined(HAS_R)
            a += uintBitsToFloat(r_data[q4.y + q]);
#endif
#if defined(HAS_S)
            s_data[q4.w + q] = floatBitsToUint(a);
#endif
        } else {
            for (int c = 0; c < 4; ++c) {
                if (c >= nq) continue;
                int k = 4 * q + c;
                float e = uintBitsToFloat(ELEM(x_data, b4.x + k));
#if defined(STATS_SOFTMAX)
                e *= u_scale;
#endif
#if defined(HAS_R)
                e += uintBitsToFloat(ELEM(r_data, b4.y + k));
#endif
#if defined(HAS_S)
                ELEM(s_data, b4.w + k) = floatBitsToUint(e);
#endif
                a[c] = e;
            }
        }
        v[j] = a;
    }

#if defined(STATS_SOFTMAX)
    float m = tgl_neg_inf();
    for (int j = 0; j < PER; ++j)
        m = tgl_maximum(tgl_maximum(m, tgl_maximum(v[j].x, v[j].y)), tgl_maximum(v[j].z, v[j].w));
    m = group_reduce(m, true, 0u);
    bool finite = !tgl_isnan(m) && !tgl_isinf(m);
    float sum = 0.0;
    if (finite)
        for (int j = 0; j < PER; ++j) {
            vec4 e = vec4(tgl_exp(v[j].x - m), tgl_exp(v[j].y - m), tgl_exp(v[j].z - m), tgl_exp(v[j].w - m));
            sum += (e.x + e.y) + (e.z + e.w);
#if !defined(LOG)
            v[j] = e;
#endif
        }
    sum = group_reduce(sum, false, 1u);
    float log_sum = tgl_log(sum);
    for (int j = 0; j < PER; ++j) {
        vec4 out_v;
        if (tgl_isnan(m) || m == tgl_inf()) out_v = vec4(tgl_nan());
#if defined(LOG)
        else if (m == tgl_neg_inf()) out_v = vec4(tgl_neg_inf());
        else out_v = (v[j] - m) - log_sum;
#else
        else if (m == tgl_neg_inf()) out_v = vec4(0.0);
        else out_v = v[j] / sum;
#endif
#else  // STATS_MEANVAR, STATS_MEANSQ
    float acc = 0.0;
    for (int j = 0; j < PER; ++j)
#if defined(STATS_MEANSQ)
        acc += dot(v[j], v[j]);
#else
        acc += (v[j].x + v[j].y) + (v[j].z + v[j].w);
#endif
    float mean = 0.0, var;
#if defined(STATS_MEANSQ)
    var = group_reduce(acc, false, 0u) / n;
#else
    mean = group_reduce(acc, false, 0u) / n;
    // The corrected two-pass variance of the general path below.
    float dev = 0.0;
    acc = 0.0;
    for (int j = 0; j < PER; ++j) {
        int nq = quad_count(j, len);
        vec4 d = v[j] - mean;
        if (nq < 4) d = mix(vec4(0.0), d, lessThan(ivec4(0, 1, 2, 3), ivec4(nq)));
        dev += (d.x + d.y) + (d.z + d.w);
        acc += dot(d, d);
    }
    vec2 moments = group_sum2(vec2(dev, acc)) / n;
    float shift = moments.x;
    var = max(moments.y - shift * shift, 0.0);
    mean += shift;
#endif
    float inv = tgl_div(1.0, tgl_sqrt(var + u_eps));
    for (int j = 0; j < PER; ++j) {
        vec4 out_v = (v[j] - mean) * inv;
#if defined(HAS_GAMMA) || defined(HAS_BETA)
        int es = u_inner_stride[4];
        int oe = be + 4 * (int(lid) + j * WG_SIZE) * es;
        ivec4 e4 = ivec4(oe, oe + es, oe + 2 * es, oe + 3 * es);
        int nq = quad_count(j, len);
        for (int c = 0; c < 4; ++c) {
            if (c >= nq) continue;
#if defined(HAS_GAMMA)
            out_v[c] *= p_data[u_gamma_off + e4[c]];
#endif
#if defined(HAS_BETA)
            out_v[c] += p_data[u_beta_off + e4[c]];
#endif
        }
#endif
#endif  // STATS_*
        int q = int(lid) + j * WG_SIZE;
        int nq_out = quad_count(j, len);
        if (nq_out == 4) {
            y_data[q4.z + q] = floatBitsToUint(out_v);
        } else {
            for (int c = 0; c < 4; ++c)
                if (c < nq_out) ELEM(y_data, b4.z + 4 * q + c) = floatBitsToUint(out_v[c]);
        }
#if defined(EPILOGUE)
        for (int c = 0; c < 4; ++c)
            if (c < nq_out) epilogue(uint(4 * q + c), floatBitsToUint(out_v[c]));
#endif
    }
}

#else  // !ROW_VEC4

#if defined(ROW_CHUNKS) && (defined(CHUNK_STATS) || defined(CHUNK_APPLY))
// Elements of chunk c of a row.
float chunk_count(uint c) { return float(min(u_chunk, u_row_len - c * u_chunk)); }
#endif
void main() {
#if defined(MODE_GROUP) && defined(ROW_CHUNKS)
    uint g = tgl_group_index();
    uint row = g / u_piece_splits, ci = g % u_piece_splits, lo = ci * u_chunk;
    uint start = lo + gl_LocalInvocationID.x, step = uint(WG_SIZE);
    // No early return: every invocation must reach the barriers; an out-of-range row has no elements.
    uint len = row < u_rows ? min(lo + u_chunk, u_len) : 0u;
    int part = u_part + 2 * int(row * u_splits + u_chunk_lo + ci);  // this chunk's partial (CHUNK_STATS)
    int parts = u_part + 2 * int(row * u_splits);                  // the row's first (CHUNK_APPLY)
#elif defined(MODE_GROUP)
    uint row = tgl_group_index();
    uint start = gl_LocalInvocationID.x, step = uint(WG_SIZE);
    // No early return: every invocation must reach the barriers; an out-of-range row has no elements.
    uint len = row < u_rows ? u_len : 0u;
#else
    uint row = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    uint start = 0u, step = 1u;
    if (row >= u_rows) return;
    uint len = u_len;
#endif
    ivec4 b4;
    int be;
    row_base(row, b4, be);
#if defined(EPILOGUE)
    ep_row_base(row);
#endif
    float n = float(u_len);
#if defined(CHUNK_STATS)
    n = float(len) - float(lo);  // the chunk's statistics
#elif defined(CHUNK_APPLY)
    n = float(u_row_len);  // the whole row's (of which the call may hold a piece)
#endif

#if defined(SUM_ONLY)
    for (uint k = start; k < len; k += step) {
        ivec4 o = b4; int oe = be; elem_offsets(k, o, oe);
        value_at(o, true);
    }

#elif defined(STATS_SOFTMAX)
#if defined(CHUNK_APPLY)
    // The max of the chunks' maxima (NaN propagates), then their sums rescaled to it.
    float m = tgl_neg_inf();
    for (uint c = 0u; c < u_splits; ++c) m = tgl_maximum(m, p_data[parts + 2 * int(c)]);
    float sum = 0.0;
    if (!tgl_isnan(m) && !tgl_isinf(m))
        for (uint c = 0u; c < u_splits; ++c) {
            float mc = p_data[parts + 2 * int(c)];
            if (mc != tgl_neg_inf()) sum += p_data[parts + 2 * int(c) + 1] * tgl_exp(mc - m);
        }
#else
    float m = tgl_neg_inf();
    for (uint k = start; k < len; k += step) {
        ivec4 o = b4; int oe = be; elem_offsets(k, o, oe);
        m = tgl_maximum(m, value_at(o, false));
    }
    m = group_reduce(m, true, 0u);
    bool finite = !tgl_isnan(m) && !tgl_isinf(m);
    float sum = 0.0;
    if (finite)
        for (uint k = start; k < len; k += step) {
            ivec4 o = b4; int oe = be; elem_offsets(k, o, oe);
            sum += tgl_exp(value_at(o, false) - m);
        }
    sum = group_reduce(sum, false, 1u);
#endif
#if defined(CHUNK_STATS)
    if (gl_LocalInvocationID.x == 0u && row < u_rows) {
        p_data[part] = m;
        p_data[part + 1] = sum;
    }
    return;
#endif
    float log_sum = tgl_log(sum);
    for (uint k = start; k < len; k += step) {
        ivec4 o = b4; int oe = be; elem_offsets(k, o, oe);
        float out_v;
        if (tgl_isnan(m) || m == tgl_inf()) out_v = tgl_nan();
#if defined(LOG)
        else if (m == tgl_neg_inf()) out_v = tgl_neg_inf();
        else out_v = (value_at(o, false) - m) - log_sum;
#else
        else if (m == tgl_neg_inf()) out_v = 0.0;
        else out_v = tgl_exp(value_at(o, false) - m) / sum;
#endif
        y_store(o.z, k, out_v);
    }

#elif defined(STATS_MEANVAR) || defined(STATS_MEANSQ)
    float mean = 0.0, var;
#if defined(CHUNK_APPLY)
    // The chunks' sums of squares; or their means, then their squared deviations plus the
    // spread of the chunk means (Chan, Golub & LeVeque's pairwise update, all at once). The
    // means are merged as offsets from the first one (small, nearly exact), which the row's
    // mean then adds once: a sum of the means themselves would lose ulps of a large mean.
    float acc = 0.0;
#if defined(STATS_MEANSQ)
    for (uint c = 0u; c < u_splits; ++c) acc += p_data[parts + 2 * int(c)];
    var = acc / n;
#else
    float m0 = p_data[parts];
    for (uint c = 0u; c < u_splits; ++c) acc += (p_data[parts + 2 * int(c)] - m0) * chunk_count(c);
    float shift = acc / n;
    float m2 = 0.0;
    for (uint c = 0u; c < u_splits; ++c) {
        float d = (p_data[parts + 2 * int(c)] - m0) - shift;
        m2 += p_data[parts + 2 * int(c) + 1] + chunk_count(c) * d * d;
    }
    mean = m0 + shift;
    var = max(m2 / n, 0.0);
#endif
#else
    float acc = 0.0;
    for (uint k = start; k < len; k += step) {
        ivec4 o = b4; int oe = be; elem_offsets(k, o, oe);
        float v = value_at(o, false);
#if defined(STATS_MEANSQ)
        acc += v * v;
#else
        acc += v;
#endif
    }
#if defined(STATS_MEANSQ)
    var = group_reduce(acc, false, 0u) / n;
#if defined(CHUNK_STATS)
    if (gl_LocalInvocationID.x == 0u && row < u_rows) p_data[part] = var * n;
    return;
#endif
#else
    mean = group_reduce(acc, false, 0u) / n;
    // Corrected two-pass (Chan, Golub & LeVeque): the f32 sum of a long row with a large mean is
    // off by many ulps of the mean (600,000 values near 1e4 on NVIDIA: 2e-3 of the spread), so the
    // second pass also sums the deviations, whose mean is that error, and takes it out of both.
    float dev = 0.0;
    acc = 0.0;
    for (uint k = start; k < len; k += step) {
        ivec4 o = b4; int oe = be; elem_offsets(k, o, oe);
        float d = value_at(o, false) - mean;
        dev += d;
        acc += d * d;
    }
    vec2 moments = group_sum2(vec2(dev, acc)) / n;
    float shift = moments.x;
    var = max(moments.y - shift * shift, 0.0);
    mean += shift;
#if defined(CHUNK_STATS)
    if (gl_LocalInvocationID.x == 0u && row < u_rows) {
        p_data[part] = mean;
        p_data[part + 1] = var * n;
    }
    return;
#endif
#endif
#endif  // CHUNK_APPLY
    float inv = tgl_div(1.0, tgl_sqrt(var + u_eps));
    for (uint k = start; k < len; k += step) {
        ivec4 o = b4; int oe = be; elem_offsets(k, o, oe);
        float out_v = (value_at(o, true) - mean) * inv;
#if defined(HAS_GAMMA)
        out_v *= p_data[u_gamma_off + oe];
#endif
#if defined(HAS_BETA)
        out_v += p_data[u_beta_off + oe];
#endif
        y_store(o.z, k, out_v);
    }

#elif defined(STATS_NONE)
    for (uint k = start; k < len; k += step) {
        ivec4 o = b4; int oe = be; elem_offsets(k, o, oe);
        float out_v = tgl_div(value_at(o, false) - p_data[u_mean_off + oe], tgl_sqrt(p_data[u_var_off + oe] + u_eps));
#if defined(HAS_GAMMA)
        out_v *= p_data[u_gamma_off + oe];
#endif
#if defined(HAS_BETA)
        out_v += p_data[u_beta_off + oe];
#endif
        y_store(o.z, k, out_v);
    }
#else
#error "norm.comp: no STATS_* define"
#endif
}

#endif  // ROW_VEC4

