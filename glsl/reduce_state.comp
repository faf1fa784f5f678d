// The reductions whose running value is more than one number: argmax, argmin, logsumexp, var,
// std, any, all, norm. Each is a monoid over a small State: from_element() makes the state of one
// element, combine() merges two states (commutative and associative, so any order of the tree is
// right) and finish() turns the state of all reduced elements into the output value:
//   argmax/argmin  (order key, index, NaN flag): the better value wins, the smaller index on ties,
//                  a NaN beats every number (so the first NaN wins)
//   logsumexp      (max m, sum of exp(x - m), NaN flag): one pass, rescaled when m grows
//   var/std        (count, mean, M2): Welford/Chan's parallel combine
//   any/all        (flag): or / and of the truth values (NaN is true)
//   norm ord 1     (sum of |x|); ord 2 (scale, sum of (x / scale)^2, inf/NaN flag), overflow-safe
// Same index plan and modes as reduce.comp (ReducePlan, dims collapsed):
//   MODE_THREAD  one invocation per output, an odometer over the reduced elements;
//   MODE_GROUP   one workgroup per output: each invocation strides over the reduced elements,
//                then a shared-memory tree merges the WG_SIZE states.
// Operands are arrays of uint words (dtype.glsl); x of X_DTYPE, y of Y_DTYPE (1-byte outputs are
// stored with atomicAnd/atomicOr on their own bits; an i64 index of argmax/argmin as two words, the
// high one 0: y_store_wide).
// WALK_SPLIT (more elements per invocation than the loop budget): a dispatch walks only the reduced
// elements [u_r_begin, u_r_end); each walker (an output's invocation) starts from the State the
// previous dispatch left in block 2 (5 words per walker) and leaves its own there, and the dispatch
// whose range ends the reduction merges and stores.
//
// Defines: OP_ARGMAX | OP_ARGMIN | OP_LOGSUMEXP | OP_VAR | OP_STD | OP_ANY | OP_ALL | OP_NORM1 |
// OP_NORM2 (one); X_DTYPE, Y_DTYPE; MODE_THREAD | MODE_GROUP; OUTER_RANK, INNER_RANK (0..8);
// WG_SIZE (a power of two in MODE_GROUP); WALK_SPLIT.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };

uniform uint u_out_count;
uniform uint u_reduce_count;
uniform int u_x_offset;
uniform int u_y_offset;
uniform float u_correction;  // var/std
#if OUTER_RANK > 0
uniform int u_outer_shape[OUTER_RANK];
uniform int u_outer_x_stride[OUTER_RANK];
uniform int u_outer_y_stride[OUTER_RANK];
#endif
#if INNER_RANK > 0
uniform int u_inner_shape[INNER_RANK];
uniform int u_inner_x_stride[INNER_RANK];
#endif

struct State {
    float a;
    float b;
    float c;
    int k;
    uint i;
};

uint x_bits(int i) { return tgl_extract(x_data[tgl_word_of(i, X_DTYPE)], i, X_DTYPE); }

#include "store.glsl"

#if defined(OP_ARGMAX) || defined(OP_ARGMIN)
// a: -1 empty, 0 a number (key k), 1 NaN; i: the index.
State identity() { return State(-1.0, 0.0, 0.0, 0, 0xffffffffu); }
State from_element(uint bits, uint r) {
    if (tgl_is_nan_bits(bits, X_DTYPE)) return State(1.0, 0.0, 0.0, 0, r);
    return State(0.0, 0.0, 0.0, tgl_order_key(bits, X_DTYPE), r);
}
State combine(State s, State t) {
    if (t.a < 0.0) return s;
    if (s.a < 0.0) return t;
    if (s.a != t.a) return s.a > t.a ? s : t;  // the NaN
    bool t_better;
#if defined(SELECT_LAST)
    if (s.a > 0.0 || s.k == t.k) t_better = t.i > s.i;  // ties (NaNs too): the last index
#else
    if (s.a > 0.0 || s.k == t.k) t_better = t.i < s.i;
#endif
#if defined(OP_ARGMAX)
    else t_better = t.k > s.k;
#else
    else t_better = t.k < s.k;
#endif
    return t_better ? t : s;
}
uint finish(State s) { return s.i; }

#elif defined(OP_LOGSUMEXP)
// a: max m, b: sum of exp(x - m), c: NaN seen.
State identity() { return State(tgl_neg_inf(), 0.0, 0.0, 0, 0u); }
State from_element(uint bits, uint r) {
    float x = tgl_to_f32(bits, X_DTYPE);
    if (tgl_isnan(x)) return State(tgl_neg_inf(), 0.0, 1.0, 0, 0u);
    if (x == tgl_neg_inf()) return identity();
    return State(x, 1.0, 0.0, 0, 0u);
}
// s * exp(m_s - m), without evaluating exp(-inf) or inf - inf.
float rescale(float s, float ms, float m) {
    if (s == 0.0) return 0.0;
    if (ms == m) return s;
    return s * exp(ms - m);
}
State combine(State s, State t) {
    float m = max(s.a, t.a);
    float c = max(s.c, t.c);
    if (tgl_isinf(m)) return State(m, m > 0.0 ? 1.0 : 0.0, c, 0, 0u);
    return State(m, rescale(s.b, s.a, m) + rescale(t.b, t.a, m), c, 0, 0u);
}
uint finish(State s) {
    if (s.c > 0.0) return tgl_from_f32(tgl_nan(), Y_DTYPE);
    if (tgl_isinf(s.a)) return tgl_from_f32(s.a, Y_DTYPE);
    return tgl_from_f32(s.a + log(s.b), Y_DTYPE);
}

#elif defined(OP_VAR) || defined(OP_STD)
// a: count, b: mean, c: M2 (sum of squared deviations from the mean).
State identity() { return State(0.0, 0.0, 0.0, 0, 0u); }
State from_element(uint bits, uint r) { return State(1.0, tgl_to_f32(bits, X_DTYPE), 0.0, 0, 0u); }
State combine(State s, State t) {
    if (t.a == 0.0) return s;
    if (s.a == 0.0) return t;
    float n = s.a + t.a;
    float delta = t.b - s.b;
    float wt = t.a / n;
    return State(n, s.b + delta * wt, s.c + t.c + delta * delta * s.a * wt, 0, 0u);
}
uint finish(State s) {
    float denom = max(0.0, float(u_reduce_count) - u_correction);
    float v;
    // An inf or NaN among the elements makes the mean inf or NaN and x - mean NaN somewhere.
    if (tgl_isnan(s.c) || tgl_isnan(s.b) || tgl_isinf(s.b) || u_reduce_count == 0u) v = tgl_nan();
    else if (denom == 0.0) v = s.c == 0.0 ? tgl_nan() : tgl_inf();
    else v = s.c / denom;
#if defined(OP_STD)
    if (!tgl_isnan(v) && !tgl_isinf(v)) v = sqrt(v);
#endif
    return tgl_from_f32(v, Y_DTYPE);
}

#elif defined(OP_ANY) || defined(OP_ALL)
State identity() {
#if defined(OP_ANY)
    return State(0.0, 0.0, 0.0, 0, 0u);
#else
    return State(1.0, 0.0, 0.0, 0, 0u);
#endif
}
State from_element(uint bits, uint r) { return State(tgl_truth(bits, X_DTYPE) ? 1.0 : 0.0, 0.0, 0.0, 0, 0u); }
State combine(State s, State t) {
#if defined(OP_ANY)
    return State(max(s.a, t.a), 0.0, 0.0, 0, 0u);
#else
    return State(min(s.a, t.a), 0.0, 0.0, 0, 0u);
#endif
}
uint finish(State s) { return s.a > 0.0 ? 1u : 0u; }

#elif defined(OP_NORM1)
// a: sum of |x|.
State identity() { return State(0.0, 0.0, 0.0, 0, 0u); }
State from_element(uint bits, uint r) { return State(tgl_abs(tgl_to_f32(bits, X_DTYPE)), 0.0, 0.0, 0, 0u); }
State combine(State s, State t) { return State(s.a + t.a, 0.0, 0.0, 0, 0u); }
uint finish(State s) { return tgl_from_f32(s.a, Y_DTYPE); }

#elif defined(OP_NORM2)
// a: scale (the largest |x| so far), b: sum of (|x| / scale)^2, c: 1 inf seen, 2 NaN seen.
State identity() { return State(0.0, 0.0, 0.0, 0, 0u); }
State from_element(uint bits, uint r) {
    float x = tgl_abs(tgl_to_f32(bits, X_DTYPE));
    if (tgl_isnan(x)) return State(0.0, 0.0, 2.0, 0, 0u);
    if (tgl_isinf(x)) return State(0.0, 0.0, 1.0, 0, 0u);
    if (x == 0.0) return identity();
    return State(x, 1.0, 0.0, 0, 0u);
}
State combine(State s, State t) {
    float scale = max(s.a, t.a);
    float c = max(s.c, t.c);
    if (scale == 0.0) return State(0.0, 0.0, c, 0, 0u);
    // Divide after scaling both sides to scale's binade: a / scale as a * (1 / scale) would flush
    // 1 / scale to zero for scale near FLT_MAX on GPUs without subnormals.
    int e = int((floatBitsToUint(scale) >> 23) & 0xffu) - 127;
    float ms = tgl_ldexp(scale, -e);
    float rs = tgl_ldexp(s.a, -e) / ms, rt = tgl_ldexp(t.a, -e) / ms;
    return State(scale, s.b * rs * rs + t.b * rt * rt, c, 0, 0u);
}
uint finish(State s) {
    if (s.c > 1.5) return tgl_from_f32(tgl_nan(), Y_DTYPE);
    if (s.c > 0.5) return tgl_from_f32(tgl_inf(), Y_DTYPE);
    return tgl_from_f32(s.a * sqrt(s.b), Y_DTYPE);
}

#else
#error "reduce_state.comp: no OP_* define"
#endif

#if defined(WALK_SPLIT)
layout(std430, binding = 2) buffer SBuffer { uint s_state[]; };
uniform uint u_r_begin;
uniform uint u_r_end;

State load_state(uint w) {
    uint at = w * 5u;
    return State(uintBitsToFloat(s_state[at]), uintBitsToFloat(s_state[at + 1u]), uintBitsToFloat(s_state[at + 2u]),
                 int(s_state[at + 3u]), s_state[at + 4u]);
}
void save_state(uint w, State s) {
    uint at = w * 5u;
    s_state[at] = floatBitsToUint(s.a);
    s_state[at + 1u] = floatBitsToUint(s.b);
    s_state[at + 2u] = floatBitsToUint(s.c);
    s_state[at + 3u] = uint(s.k);
    s_state[at + 4u] = s.i;
}
#endif

int inner_offset(uint r) {
#if INNER_RANK == 0
    return 0;
#else
    int off = 0;
    uint rest = r;
    for (int d = INNER_RANK - 1; d > 0; --d) {
        uint n = uint(u_inner_shape[d]);
        off += int(rest % n) * u_inner_x_stride[d];
        rest /= n;
    }
    return off + int(rest) * u_inner_x_stride[0];
#endif
}

void outer_offsets(uint o, out int xo, out int yo) {
    xo = u_x_offset;
    yo = u_y_offset;
#if OUTER_RANK > 0
    uint rest = o;
    for (int d = OUTER_RANK - 1; d > 0; --d) {
        uint n = uint(u_outer_shape[d]);
        int c = int(rest % n);
        rest /= n;
        xo += c * u_outer_x_stride[d];
        yo += c * u_outer_y_stride[d];
    }
    xo += int(rest) * u_outer_x_stride[0];
    yo += int(rest) * u_outer_y_stride[0];
#endif
}

#if defined(MODE_THREAD)

void main() {
    uint o = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (o >= u_out_count) return;
    int xo, yo;
    outer_offsets(o, xo, yo);
    State acc = identity();
#if defined(WALK_SPLIT)
    if (u_r_begin > 0u) acc = load_state(o);
    for (uint r = u_r_begin; r < min(u_r_end, u_reduce_count); ++r) acc = combine(acc, from_element(x_bits(xo + inner_offset(r)), r));
    if (u_r_end < u_reduce_count) {
        save_state(o, acc);
        return;
    }
#elif INNER_RANK == 0
    if (u_reduce_count > 0u) acc = combine(acc, from_element(x_bits(xo), 0u));
#else
    int idx[INNER_RANK];
    for (int d = 0; d < INNER_RANK; ++d) idx[d] = 0;
    for (uint r = 0u; r < u_reduce_count; ++r) {
        acc = combine(acc, from_element(x_bits(xo), r));
        for (int d = INNER_RANK - 1; d >= 0; --d) {
            xo += u_inner_x_stride[d];
            idx[d] += 1;
            if (idx[d] < u_inner_shape[d]) break;
            xo -= u_inner_x_stride[d] * u_inner_shape[d];
            idx[d] = 0;
        }
    }
#endif
    y_store_wide(yo, uvec2(finish(acc), 0u));
}

#elif defined(MODE_GROUP)

shared State s_partial[WG_SIZE];

void main() {
    uint o = tgl_group_index();
    uint lid = gl_LocalInvocationID.x;
    bool in_range = o < u_out_count;  // no early return: every invocation reaches the barriers
    int xo = 0, yo = 0;
    State acc = identity();
    if (in_range) {
        outer_offsets(o, xo, yo);
#if defined(WALK_SPLIT)
        if (u_r_begin > 0u) acc = load_state(o * uint(WG_SIZE) + lid);
        for (uint r = u_r_begin + lid; r < min(u_r_end, u_reduce_count); r += uint(WG_SIZE))
            acc = combine(acc, from_element(x_bits(xo + inner_offset(r)), r));
#else
        for (uint r = lid; r < u_reduce_count; r += uint(WG_SIZE)) acc = combine(acc, from_element(x_bits(xo + inner_offset(r)), r));
#endif
    }
#if defined(WALK_SPLIT)
    if (u_r_end < u_reduce_count) {  // uniform: not the last range, nothing to merge yet
        if (in_range) save_state(o * uint(WG_SIZE) + lid, acc);
        return;
    }
#endif
    s_partial[lid] = acc;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(WG_SIZE) / 2u; h > 0u; h >>= 1) {
        if (lid < h) s_partial[lid] = combine(s_partial[lid], s_partial[lid + h]);
        memoryBarrierShared();
        barrier();
    }
    if (in_range && lid == 0u) y_store_wide(yo, uvec2(finish(s_partial[0]), 0u));
}

#else
#error "reduce_state.comp: define MODE_THREAD or MODE_GROUP"
#endif
