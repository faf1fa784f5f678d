// cumsum / cumprod along one axis, inclusive or exclusive, forward or reverse, rows of any length.
// A row is the scanned axis of one index of the other dims (ReducePlan outer dims); position k of
// the scan order is element k of the row, or element len - 1 - k with REVERSE. Rows are cut into
// blocks of WG_SIZE * ITEMS positions, and the passes are:
//   PASS_ROW     one invocation per row scans it sequentially (short rows; no scratch);
//   PASS_TOTALS  one workgroup per (row, block): the block's total -> t_data[row * u_blocks + block];
//   PASS_CARRY   one invocation per row: exclusive scan of its block totals, in place (the carry
//                into each block), over blocks [u_b_begin, u_b_end) only: rows of more blocks than
//                the loop budget take several dispatches, each starting from the row's running
//                carry that the previous one left in y_data[row] (then a scratch word per row);
//   PASS_SCAN    one workgroup per (row, block): each invocation scans ITEMS consecutive positions
//                in registers, a shared-memory (Hillis-Steele) scan combines the invocations' totals,
//                and the block's carry (when u_use_carry) is applied.
// Defines: OP_CUMSUM | OP_CUMPROD; PASS_*; EXCLUSIVE; REVERSE; X_DTYPE, Y_DTYPE (f32 or f16, one
// dtype: values and block totals/carries are f32, each output rounded once at its store; sub-word
// stores via store.glsl's atomics); INT_VALUES (x and y i32: int values, totals and carries,
// value.glsl: wrapping, exact); OUTER_RANK (0..7); WG_SIZE; ITEMS.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "value.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 2) buffer TBuffer { VALUE t_data[]; };

uniform uint u_rows;
uniform uint u_len;
uniform uint u_blocks;     // blocks per row
uniform uint u_use_carry;  // PASS_SCAN: add t_data's carry
uniform uint u_b_begin;    // PASS_CARRY: the blocks this dispatch scans
uniform uint u_b_end;
uniform int u_x_offset;
uniform int u_y_offset;
uniform int u_x_stride;    // along the scanned axis
uniform int u_y_stride;
#if OUTER_RANK > 0
uniform int u_outer_shape[OUTER_RANK];
uniform int u_outer_x_stride[OUTER_RANK];
uniform int u_outer_y_stride[OUTER_RANK];
#endif

#if defined(OP_CUMSUM)
VALUE identity() { return tgl_value_zero(); }
VALUE combine(VALUE a, VALUE b) { return a + b; }
#elif defined(OP_CUMPROD)
VALUE identity() { return tgl_value_one(); }
VALUE combine(VALUE a, VALUE b) { return a * b; }
#else
#error "scan.comp: no OP_* define"
#endif

void row_offsets(uint row, out int xo, out int yo) {
    xo = u_x_offset;
    yo = u_y_offset;
#if OUTER_RANK > 0
    uint rest = row;
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

// Element index along the row of scan position k.
int element_of(uint k) {
#if defined(REVERSE)
    return int(u_len - 1u - k);
#else
    return int(k);
#endif
}

VALUE x_at(int xo, uint k) {
    int i = xo + element_of(k) * u_x_stride;
    return tgl_value_of(tgl_extract(x_data[tgl_word_of(i, X_DTYPE)], i, X_DTYPE), X_DTYPE);
}

#include "store.glsl"

void y_store(int yo, uint k, VALUE v) { y_store_bits(yo + element_of(k) * u_y_stride, tgl_value_bits(v, Y_DTYPE)); }

#if defined(PASS_ROW)

void main() {
    uint row = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (row >= u_rows) return;
    int xo, yo;
    row_offsets(row, xo, yo);
    VALUE acc = identity();
    for (uint k = 0u; k < u_len; ++k) {
        VALUE x = x_at(xo, k);
#if defined(EXCLUSIVE)
        y_store(yo, k, acc);
        acc = combine(acc, x);
#else
        acc = combine(acc, x);
        y_store(yo, k, acc);
#endif
    }
}

#elif defined(PASS_CARRY)

void main() {
    uint row = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (row >= u_rows) return;
    uint base = row * u_blocks;
    VALUE carry = u_b_begin == 0u ? identity() : tgl_word_value(y_data[row]);
    uint end = min(u_blocks, u_b_end);
    for (uint b = u_b_begin; b < end; ++b) {
        VALUE t = t_data[base + b];
        t_data[base + b] = carry;
        carry = combine(carry, t);
    }
    if (end < u_blocks) y_data[row] = tgl_value_word(carry);
}

#else  // PASS_TOTALS, PASS_SCAN: one workgroup per (row, block)

shared VALUE s_val[WG_SIZE];

void main() {
    uint g = tgl_group_index();
    uint lid = gl_LocalInvocationID.x;
    bool in_range = g < u_rows * u_blocks;  // no early return: every invocation reaches the barriers
    uint row = in_range ? g / u_blocks : 0u;
    uint block = in_range ? g - row * u_blocks : 0u;
    int xo = 0, yo = 0;
    if (in_range) row_offsets(row, xo, yo);
    uint first = block * uint(WG_SIZE * ITEMS) + lid * uint(ITEMS);
    VALUE v[ITEMS];
    VALUE acc = identity();
    for (int j = 0; j < ITEMS; ++j) {
        uint k = first + uint(j);
        VALUE x = (in_range && k < u_len) ? x_at(xo, k) : identity();
#if defined(EXCLUSIVE)
        v[j] = acc;
        acc = combine(acc, x);
#else
        acc = combine(acc, x);
        v[j] = acc;
#endif
    }
    s_val[lid] = acc;
    memoryBarrierShared();
    barrier();
#if defined(PASS_TOTALS)
    for (uint h = uint(WG_SIZE) / 2u; h > 0u; h >>= 1) {
        if (lid < h) s_val[lid] = combine(s_val[lid], s_val[lid + h]);
        memoryBarrierShared();
        barrier();
    }
    if (in_range && lid == 0u) t_data[g] = s_val[0];
#else
    // Inclusive scan of the invocations' totals: after step h, s_val[l] combines (l - 2h, l].
    for (uint h = 1u; h < uint(WG_SIZE); h <<= 1) {
        VALUE other = lid >= h ? s_val[lid - h] : identity();
        memoryBarrierShared();
        barrier();
        s_val[lid] = combine(other, s_val[lid]);
        memoryBarrierShared();
        barrier();
    }
    VALUE prefix = lid > 0u ? s_val[lid - 1u] : identity();
    if (in_range && u_use_carry != 0u) prefix = combine(t_data[g], prefix);
    if (in_range) {
        for (int j = 0; j < ITEMS; ++j) {
            uint k = first + uint(j);
            if (k < u_len) y_store(yo, k, combine(prefix, v[j]));
        }
    }
#endif
}

#endif
