// Every reduction: y[o] = REDUCE over r of x[outer(o) + inner(r)] (ReducePlan, dims collapsed).
//
// Three modes (chosen by the host from the plan's shape):
//   MODE_THREAD  one invocation per output, walking the reduced elements with an odometer; for
//                short reductions and for many outputs whose reduced elements are far apart.
//   MODE_GROUP   one workgroup per (output, split): each invocation strides over its split of the
//                reduced elements, then subgroup shuffles and a shared-memory tree (subgroup.glsl)
//                combine the WG_SIZE partials. With
//                u_splits > 1 the workgroup writes a partial to a scratch buffer (index
//                o * u_splits + split) and a second pass reduces the partials. VEC4 (f32 rows that
//                are contiguous and start 16-byte aligned; splits a multiple of 4 long): vec4
//                loads, UNROLL of them in flight per invocation, the row's last len % 4 scalar.
//   MODE_COLUMN  outputs whose last outer dim has x stride 1 (column sums): the workgroup is
//                COL_LANES column lanes x WG_SIZE / COL_LANES row lanes over a slab of columns
//                (4 per lane with VEC4: x f32, columns a multiple of 4, 16-byte aligned) and a
//                chunk of u_chunk reduced rows; neighbouring lanes read neighbouring words. With
//                u_splits > 1 (chunks) partials go to scratch index split * u_out_count + o and a
//                MODE_THREAD pass (inner stride u_out_count) reduces them in a fixed order.
//
// x and y are arrays of uint words holding X_DTYPE / Y_DTYPE elements (dtype.glsl): f32 or f16,
// computed in f32 and rounded once at the final store (sub-word stores via store.glsl's atomics).
// The partials of a split reduction stay f32 (that pass runs with Y_DTYPE f32, the second pass with
// X_DTYPE f32). For f32 the dtype helpers fold to plain word loads and stores. INT_VALUES: x and y
// i32, sum/prod/max/min in int (value.glsl: wrapping, exact), i32 partials. WIDE_VALUES: x and y
// i64, the same folds on two words (int64.glsl), i64 partials (two words each).
// Partials are stored with y_store at element index (split or output) of the scratch's Y_DTYPE.
//
// Defines: REDUCE_SUM | REDUCE_PROD | REDUCE_MAX | REDUCE_MIN (one); FINAL_MEAN (divide the final
// result by u_count; mean of an empty set is NaN); X_DTYPE, Y_DTYPE; MODE_THREAD | MODE_GROUP |
// MODE_COLUMN; VEC4, UNROLL (loads per invocation per step), COL_LANES; OUTER_RANK and INNER_RANK
// (0..8); WG_SIZE (a power of two in MODE_GROUP and MODE_COLUMN); TGL_SUBGROUP_SIZE (subgroup.glsl).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "value.glsl"
#include "subgroup.glsl"

// The UNROLL loads of a step sit in a register array indexed by constants once unrolled (NVIDIA
// honours this pragma, other drivers ignore it).
#pragma optionNV(unroll all)

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };
#if defined(VEC4)
layout(std430, binding = 1) readonly buffer XBuffer { uvec4 x_data4[]; };  // f32
#else
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };
#endif

uniform uint u_out_count;     // outputs
uniform uint u_reduce_count;  // elements per output
uniform uint u_splits;        // MODE_GROUP: workgroups per output
uniform uint u_chunk;         // MODE_GROUP: elements per split
uniform int u_x_offset;
uniform int u_y_offset;
uniform float u_count;        // FINAL_MEAN: the number of reduced elements
#if OUTER_RANK > 0
uniform int u_outer_shape[OUTER_RANK];
uniform int u_outer_x_stride[OUTER_RANK];
uniform int u_outer_y_stride[OUTER_RANK];
#endif
#if INNER_RANK > 0
uniform int u_inner_shape[INNER_RANK];
uniform int u_inner_x_stride[INNER_RANK];
#endif

#include "store.glsl"

#if defined(VEC4)
float x_at(int i) { return uintBitsToFloat(x_data4[i >> 2][i & 3]); }
vec4 x4_at(int q) { return uintBitsToFloat(x_data4[q]); }
#elif defined(WIDE_VALUES)
VALUE x_at(int i) { return TGL_LOAD_WIDE(x_data, i, X_DTYPE); }
#else
VALUE x_at(int i) { return tgl_value_of(tgl_extract(x_data[tgl_word_of(i, X_DTYPE)], i, X_DTYPE), X_DTYPE); }
#endif
#if defined(WIDE_VALUES)
void y_store(int i, VALUE v) { y_store_wide(i, v); }
#else
void y_store(int i, VALUE v) { y_store_bits(i, tgl_value_bits(v, Y_DTYPE)); }
#endif

VALUE identity() {
#if defined(REDUCE_SUM)
    return tgl_value_zero();
#elif defined(REDUCE_PROD)
    return tgl_value_one();
#elif defined(REDUCE_MAX)
    return tgl_value_lowest();
#elif defined(REDUCE_MIN)
    return tgl_value_highest();
#else
#error "reduce.comp: no REDUCE_* define"
    return 0.0;
#endif
}

VALUE combine(VALUE acc, VALUE v) {
#if defined(REDUCE_SUM)
    return tgl_value_add(acc, v);
#elif defined(REDUCE_PROD)
    return tgl_value_mul(acc, v);
#elif defined(REDUCE_MAX)
    return tgl_value_max(acc, v);
#else
    return tgl_value_min(acc, v);
#endif
}

#if defined(VEC4)
vec4 combine4(vec4 acc, vec4 v) {
    return vec4(combine(acc.x, v.x), combine(acc.y, v.y), combine(acc.z, v.z), combine(acc.w, v.w));
}
#endif

VALUE finish(VALUE acc) {
#if defined(FINAL_MEAN)
    if (u_count == 0.0) return tgl_nan();
    return acc / u_count;
#else
    return acc;
#endif
}

// Element offsets of output o in x and y.
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
    VALUE acc = identity();
#if INNER_RANK == 0
    if (u_reduce_count > 0u) acc = combine(acc, x_at(xo));
#elif INNER_RANK == 1
    int s = u_inner_x_stride[0];
    for (uint r = 0u; r < u_reduce_count; ++r) {
        acc = combine(acc, x_at(xo));
        xo += s;
    }
#else
    // Odometer over the inner dims: the innermost dim advances every step, an outer one carries.
    int idx[INNER_RANK];
    for (int d = 0; d < INNER_RANK; ++d) idx[d] = 0;
    for (uint r = 0u; r < u_reduce_count; ++r) {
        acc = combine(acc, x_at(xo));
        for (int d = INNER_RANK - 1; d >= 0; --d) {
            xo += u_inner_x_stride[d];
            idx[d] += 1;
            if (idx[d] < u_inner_shape[d]) break;
            xo -= u_inner_x_stride[d] * u_inner_shape[d];
            idx[d] = 0;
        }
    }
#endif
    y_store(yo, finish(acc));
}

#else

// Offset in x of reduced element r (row-major over the inner dims).
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

#if defined(MODE_GROUP)

shared VALUE s_partial[WG_SIZE];

void main() {
    uint g = tgl_group_index();
    uint lid = tgl_local_slot();
    // No early return: every invocation must reach the barriers.
    bool in_range = g < u_out_count * u_splits;
    uint o = g / u_splits;
    uint split = g - o * u_splits;
    int xo = 0, yo = 0;
    VALUE acc = identity();
    if (in_range) {
        outer_offsets(o, xo, yo);
        uint begin = split * u_chunk;
        uint end = min(begin + u_chunk, u_reduce_count);
#if defined(VEC4)
        // Quads [begin / 4, end / 4) of the row (xo and begin are multiples of 4), UNROLL loads
        // issued before they are combined; then the row's last end % 4 elements.
        int q0 = xo >> 2;
        uint q = begin / 4u + lid, qe = end / 4u;
        vec4 acc4 = vec4(identity());
        for (; q + uint((UNROLL - 1) * WG_SIZE) < qe; q += uint(UNROLL * WG_SIZE)) {
            vec4 v[UNROLL];
            for (int j = 0; j < UNROLL; ++j) v[j] = x4_at(q0 + int(q) + j * WG_SIZE);
            for (int j = 0; j < UNROLL; ++j) acc4 = combine4(acc4, v[j]);
        }
        for (; q < qe; q += uint(WG_SIZE)) acc4 = combine4(acc4, x4_at(q0 + int(q)));
        acc = combine(combine(acc4.x, acc4.y), combine(acc4.z, acc4.w));
        for (uint r = qe * 4u + lid; r < end; r += uint(WG_SIZE)) acc = combine(acc, x_at(xo + int(r)));
#else
        for (uint r = begin + lid; r < end; r += uint(WG_SIZE)) acc = combine(acc, x_at(xo + inner_offset(r)));
#endif
    }
    TGL_SUBGROUP_FOLD(acc, 1u, WG_SIZE, combine)
    s_partial[lid] = acc;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(WG_SIZE) / 2u; h >= TGL_TREE_STOP(1u); h >>= 1) {
        if (lid < h) s_partial[lid] = combine(s_partial[lid], s_partial[lid + h]);
        memoryBarrierShared();
        barrier();
    }
    if (in_range && lid == 0u) {
        if (u_splits == 1u) {
            y_store(yo, finish(s_partial[0]));
        } else {
            y_store(u_y_offset + int(g), s_partial[0]);  // scratch of the partials' dtype
        }
    }
}

#elif defined(MODE_COLUMN)

uniform uint u_cols;         // the last outer dim (x stride 1): columns
uniform uint u_slabs;        // workgroups across the columns
uniform int u_col_y_stride;  // its y stride

#define ROW_LANES (WG_SIZE / COL_LANES)
#if defined(VEC4)
#define COL_W 4
#define ACC vec4
#define LOAD(i) x4_at((i) >> 2)
#define COMBINE combine4
#else
#define COL_W 1
#define ACC VALUE
#define LOAD(i) x_at(i)
#define COMBINE combine
#endif

shared ACC s_col[WG_SIZE];

void main() {
    // Workgroup g: slab fastest (neighbouring workgroups read neighbouring columns of the same
    // rows), then the chunk of rows, then the batch (the outer dims before the columns).
    uint g = tgl_group_index();
    uint lid = tgl_local_slot();
    uint lane = lid % uint(COL_LANES), row_lane = lid / uint(COL_LANES);
    uint slab = g % u_slabs, rest = g / u_slabs;
    uint split = rest % u_splits, b = rest / u_splits;
    uint c = (slab * uint(COL_LANES) + lane) * uint(COL_W);
    // No early return: every invocation must reach the barriers.
    bool live = b < u_out_count / u_cols && c < u_cols;
    uint o = b * u_cols + c;
    int xo = 0, yo = 0;
    ACC acc = ACC(identity());
    if (live) {
        outer_offsets(o, xo, yo);
        uint r = split * u_chunk + row_lane;
        uint end = min(split * u_chunk + u_chunk, u_reduce_count);
        // UNROLL rows' loads in flight, combined in row order (the result does not depend on UNROLL).
        for (; r + uint((UNROLL - 1) * ROW_LANES) < end; r += uint(UNROLL * ROW_LANES)) {
            ACC v[UNROLL];
            for (int j = 0; j < UNROLL; ++j) v[j] = LOAD(xo + inner_offset(r + uint(j * ROW_LANES)));
            for (int j = 0; j < UNROLL; ++j) acc = COMBINE(acc, v[j]);
        }
        for (; r < end; r += uint(ROW_LANES)) acc = COMBINE(acc, LOAD(xo + inner_offset(r)));
    }
    TGL_SUBGROUP_FOLD(acc, COL_LANES, WG_SIZE, COMBINE)
    s_col[lid] = acc;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(ROW_LANES) / 2u; h * uint(COL_LANES) >= TGL_TREE_STOP(COL_LANES); h >>= 1) {
        if (row_lane < h) s_col[lid] = COMBINE(s_col[lid], s_col[lid + h * uint(COL_LANES)]);
        memoryBarrierShared();
        barrier();
    }
    if (live && row_lane == 0u) {
        ACC total = s_col[lid];
        for (int k = 0; k < COL_W; ++k) {
#if defined(VEC4)
            float t = total[k];
#else
            VALUE t = total;
#endif
            if (u_splits == 1u) y_store(yo + k * u_col_y_stride, finish(t));
            else y_store(u_y_offset + int(split * u_out_count + o) + k, t);  // scratch of the partials' dtype
        }
    }
}

#else
#error "reduce.comp: define MODE_THREAD, MODE_GROUP or MODE_COLUMN"
#endif
#endif
