// topk, sort and argsort along one axis: a bitonic sorting network over (order key, original
// index) pairs. Every pair is distinct (the index breaks ties), so the network's result is the one
// total order "key, then index": stable in both directions, and deterministic.
//
// Order key (a uint whose unsigned order is the requested order): i32 with its sign bit flipped;
// floats (f16/bf16 widened exactly to f32 bits) with -0 made +0, NaN made 0xffffffff (above +inf),
// negatives bit-inverted and positives with the sign bit set; descending inverts the key, so the
// network always sorts ascending. A row of n elements is padded to P = 2^ceil(log2 n) with
// (0xffffffff, position >= n), which sorts after every real element.
//
// Rows are laid out one after another, each padded to P, in "positions". Passes:
//   PASS_BLOCK   one workgroup per BLOCK positions (BLOCK a power of two in shared memory): load
//                from x (u_from_x) or the scratch pairs, run bitonic stages in shared memory, store
//                to the outputs (u_to_out: positions < k of each row) or back to the scratch.
//                u_k = 0: the whole local sort (stages k = 2 .. min(P, BLOCK)); u_k = K > BLOCK: the
//                strides BLOCK/2 .. 1 of stage K (the tail of a global merge).
//                P <= BLOCK: a workgroup holds BLOCK / P whole rows, and one pass does everything.
//   PASS_GLOBAL  one invocation per compare-exchange of stride u_j >= BLOCK of stage u_k, on the
//                scratch pairs (rows longer than BLOCK).
// Defines: PASS_BLOCK | PASS_GLOBAL; X_DTYPE; HAS_VALUES (topk, sort); OUTER_RANK (0..7); WG_SIZE;
// BLOCK (PASS_BLOCK; a multiple of 2 * WG_SIZE).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"

layout(local_size_x = WG_SIZE) in;

#if defined(HAS_VALUES)
layout(std430, binding = 0) buffer VBuffer { uint v_data[]; };
#endif
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 2) buffer IBuffer { int i_data[]; };
layout(std430, binding = 3) buffer SBuffer { uvec2 s_data[]; };  // (key, index) per position

uniform uint u_rows;      // rows of this batch
uniform uint u_row_base;  // first row of this batch
uniform uint u_n;         // elements of a row
uniform uint u_kout;      // elements written per row (topk's k; n otherwise)
uniform uint u_log2p;     // P = 1 << u_log2p
uniform uint u_k;         // bitonic stage (see above)
uniform uint u_j;         // PASS_GLOBAL: stride
uniform uint u_descending;
uniform uint u_from_x;
uniform uint u_to_out;
uniform int u_x_offset;
uniform int u_v_offset;
uniform int u_i_offset;
uniform int u_x_stride;  // along the axis
uniform int u_v_stride;
uniform int u_i_stride;
#if OUTER_RANK > 0
uniform int u_outer_shape[OUTER_RANK];
uniform int u_outer_x_stride[OUTER_RANK];
uniform int u_outer_v_stride[OUTER_RANK];
uniform int u_outer_i_stride[OUTER_RANK];
#endif

// Element offsets of row `row` (of the whole tensor) in x, values and indices.
ivec3 row_offsets(uint row) {
    ivec3 o = ivec3(u_x_offset, u_v_offset, u_i_offset);
#if OUTER_RANK > 0
    uint rest = row;
    for (int d = OUTER_RANK - 1; d > 0; --d) {
        uint n = uint(u_outer_shape[d]);
        int c = int(rest % n);
        rest /= n;
        o += c * ivec3(u_outer_x_stride[d], u_outer_v_stride[d], u_outer_i_stride[d]);
    }
    o += int(rest) * ivec3(u_outer_x_stride[0], u_outer_v_stride[0], u_outer_i_stride[0]);
#endif
    return o;
}

uint x_bits(int i) { return tgl_extract(x_data[tgl_word_of(i, X_DTYPE)], i, X_DTYPE); }

uint order_key(uint bits) {
    uint key;
    if (X_DTYPE == DT_I32) {
        key = bits ^ 0x80000000u;
    } else {
        uint f = tgl_to_f32_bits(bits, X_DTYPE);
        uint a = f & 0x7fffffffu;
        if (a > 0x7f800000u) key = 0xffffffffu;    // NaN: above +inf
        else if (a == 0u) key = 0x80000000u;       // -0 == +0
        else key = f != a ? ~f : (f | 0x80000000u);
    }
    return u_descending != 0u ? ~key : key;
}

// a after b in the order (key, then index); never equal.
bool after(uvec2 a, uvec2 b) { return a.x > b.x || (a.x == b.x && a.y > b.y); }

// Writes position `pos` (< u_kout) of row `row`: its original index, and x's element there.
void store_out(uint row, uint pos, uvec2 kv) {
    ivec3 o = row_offsets(row);
    i_data[o.z + int(pos) * u_i_stride] = int(kv.y);
#if defined(HAS_VALUES)
    uint bits = x_bits(o.x + int(kv.y) * u_x_stride);
    int i = o.y + int(pos) * u_v_stride;
    if (tgl_dt_log2size(X_DTYPE) == 2) {
        v_data[i] = bits;
    } else {  // sub-word element: neighbours may be written by other invocations at the same time
        int w = tgl_word_of(i, X_DTYPE);
        uint shift = tgl_shift_of(i, X_DTYPE);
        uint mask = tgl_dt_mask(X_DTYPE) << shift;
        atomicAnd(v_data[w], ~mask);
        atomicOr(v_data[w], (bits << shift) & mask);
    }
#endif
}

#if defined(PASS_BLOCK)

const uint kPairs = uint(BLOCK / (2 * WG_SIZE));  // compare-exchanges per invocation and stage
shared uvec2 s_kv[BLOCK];

void main() {
    uint g = tgl_group_index();
    uint lid = gl_LocalInvocationID.x;
    uint p_size = 1u << u_log2p;
    // Positions of this block: rows [row0, ...) from position pos0 (P <= BLOCK: whole rows from 0;
    // P > BLOCK: part of one row).
    uint row0, pos0;
    if (p_size <= uint(BLOCK)) {
        row0 = g * (uint(BLOCK) >> u_log2p);
        pos0 = 0u;
    } else {
        uint per_row = p_size / uint(BLOCK);
        row0 = g / per_row;
        pos0 = (g - row0 * per_row) * uint(BLOCK);
    }
    for (uint e = lid; e < uint(BLOCK); e += uint(WG_SIZE)) {
        uint row = row0 + (e >> u_log2p);
        uint pos = pos0 + (e & (p_size - 1u));
        uvec2 kv = uvec2(0xffffffffu, pos);
        if (row < u_rows) {
            if (u_from_x == 0u) {
                kv = s_data[row * p_size + pos];
            } else if (pos < u_n) {
                ivec3 o = row_offsets(u_row_base + row);
                kv.x = order_key(x_bits(o.x + int(pos) * u_x_stride));
            }
        }
        s_kv[e] = kv;
    }
    memoryBarrierShared();
    barrier();
    // Uniform loops: every invocation reaches every barrier.
    uint k_first = u_k == 0u ? 2u : u_k;
    uint k_last = u_k == 0u ? min(p_size, uint(BLOCK)) : u_k;
    for (uint k = k_first; k <= k_last; k <<= 1) {
        for (uint j = min(k, uint(BLOCK)) >> 1; j > 0u; j >>= 1) {
            for (uint m = 0u; m < kPairs; ++m) {
                uint q = lid + m * uint(WG_SIZE);
                uint lo = ((q & ~(j - 1u)) << 1) | (q & (j - 1u));
                uvec2 a = s_kv[lo];
                uvec2 b = s_kv[lo + j];
                // Position in the row: with several rows in the block, each sorts ascending.
                bool ascending = (((pos0 + lo) & (p_size - 1u)) & k) == 0u;
                if (after(a, b) == ascending) {
                    s_kv[lo] = b;
                    s_kv[lo + j] = a;
                }
            }
            memoryBarrierShared();
            barrier();
        }
    }
    for (uint e = lid; e < uint(BLOCK); e += uint(WG_SIZE)) {
        uint row = row0 + (e >> u_log2p);
        uint pos = pos0 + (e & (p_size - 1u));
        if (row >= u_rows) continue;
        if (u_to_out == 0u) s_data[row * p_size + pos] = s_kv[e];
        else if (pos < u_kout) store_out(u_row_base + row, pos, s_kv[e]);
    }
}

#elif defined(PASS_GLOBAL)

void main() {
    uint q = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;  // compare-exchange index
    uint p_size = 1u << u_log2p;
    if (q >= u_rows * (p_size >> 1)) return;
    uint lo = ((q & ~(u_j - 1u)) << 1) | (q & (u_j - 1u));
    uvec2 a = s_data[lo];
    uvec2 b = s_data[lo + u_j];
    bool ascending = ((lo & (p_size - 1u)) & u_k) == 0u;
    if (after(a, b) == ascending) {
        s_data[lo] = b;
        s_data[lo + u_j] = a;
    }
}

#else
#error "sort.comp: no PASS_* define"
#endif
