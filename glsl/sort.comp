// topk, sort and argsort along one axis: every element becomes an (order key, original index) pair,
// and the pairs are sorted by the one total order "key, then index" (every pair is distinct), which
// is stable in both directions and deterministic.
//
// Order key (a uint whose unsigned order is the requested order): i32 with its sign bit flipped;
// floats (f16/bf16 widened exactly to f32 bits) with -0 made +0, NaN made 0xffffffff (above +inf),
// negatives bit-inverted and positives with the sign bit set; descending inverts the key, so the
// sort is always ascending.
//
// Short rows (P = 2^ceil(log2 n) <= BLOCK): PASS_BLOCK, a bitonic network in shared memory, one
// workgroup per BLOCK / P whole rows, each row padded with (0xffffffff, position >= n), which sorts
// after every real element; x in, outputs out.
//
// Long rows: an LSD radix sort of the pairs, 4 bits of the key per pass (8 passes), on a batch of
// u_rows rows laid one after another (row r at position r * n) in scratch pairs. Each pass is
// stable, and the first one takes the pairs in index order, so the result is "key, then index".
// A row is cut into tiles of WG_SIZE * CHUNK positions; invocation i of a tile owns the CHUNK
// consecutive positions from i * CHUNK (so walking its chunk in order keeps the pass stable).
//   PASS_COUNT    one workgroup per tile: the tile's count of each digit d ->
//                 c_data[(row * 16 + d) * u_tiles + tile]
//   PASS_SUMS     one workgroup per block of WG_SIZE * 16 counts: the block's total -> c_data[u_m + b]
//   PASS_CARRY    one workgroup: exclusive scan of the u_blocks block totals, in place
//   PASS_APPLY    one workgroup per block: exclusive scan of the counts, plus the block's carry, in
//                 place. The counts in (row, digit, tile) order sum to n per row, so each entry is
//                 now the batch position where that tile's first element of that digit goes.
//   PASS_SCATTER  one workgroup per tile: each invocation's chunk goes to its tile's positions,
//                 after the same digits of the tile's earlier chunks (a scan over the invocations).
//   PASS_OUT      one invocation per output position (< u_kout of each row): index and value.
// Passes COUNT and SCATTER read the pairs from x (u_from_x: key from x, index = position) or from
// the source pairs, so no pass needs more than 4 storage blocks.
// Defines: PASS_*; WG_SIZE; X_DTYPE, I_DTYPE (the indices: i32 or i64, two words each) and
// OUTER_RANK (0..7) (not the scan passes); HAS_VALUES (topk,
// sort; PASS_BLOCK, PASS_OUT); BLOCK (PASS_BLOCK; a multiple of 2 * WG_SIZE); CHUNK (PASS_COUNT,
// PASS_SCATTER).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "store.glsl"

layout(local_size_x = WG_SIZE) in;

#if defined(PASS_BLOCK) || defined(PASS_OUT)
#if defined(HAS_VALUES)
layout(std430, binding = 0) buffer VBuffer { uint v_data[]; };
#endif
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 2) buffer IBuffer { int i_data[]; };
#if defined(PASS_OUT)
layout(std430, binding = 3) readonly buffer SBuffer { uvec2 s_data[]; };  // sorted (key, index) pairs
#endif
#elif defined(PASS_COUNT) || defined(PASS_SCATTER)
layout(std430, binding = 0) buffer CBuffer { uint c_data[]; };
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 2) readonly buffer SBuffer { uvec2 s_data[]; };  // source pairs
#if defined(PASS_SCATTER)
layout(std430, binding = 3) writeonly buffer DBuffer { uvec2 d_data[]; };  // destination pairs
#endif
#else
layout(std430, binding = 0) buffer CBuffer { uint c_data[]; };
#endif

uniform uint u_rows;      // rows of this batch
uniform uint u_row_base;  // first row of this batch
uniform uint u_n;         // elements of a row
uniform uint u_kout;      // elements written per row (topk's k; n otherwise)
uniform uint u_log2p;     // PASS_BLOCK: P = 1 << u_log2p
uniform uint u_tiles;     // tiles per row
uniform uint u_shift;     // the digit's lowest key bit
uniform uint u_m;         // counts (u_rows * 16 * u_tiles)
uniform uint u_blocks;    // blocks of WG_SIZE * 16 counts
uniform uint u_descending;
uniform uint u_from_x;
uniform int u_x_offset;
uniform int u_v_offset;
uniform int u_i_offset;
uniform int u_x_stride;  // along the axis
uniform int u_v_stride;
uniform int u_i_stride;

#if !defined(PASS_SUMS) && !defined(PASS_CARRY) && !defined(PASS_APPLY)

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

#endif

#if defined(PASS_BLOCK) || defined(PASS_OUT)

// Writes position `pos` (< u_kout) of row `row`: its original index, and x's element there.
void store_out(uint row, uint pos, uvec2 kv) {
    ivec3 o = row_offsets(row);
    int e = o.z + int(pos) * u_i_stride;
#if I_DTYPE == DT_I64
    i_data[2 * e] = int(kv.y);  // an index is never negative: the high word is 0
    i_data[2 * e + 1] = 0;
#else
    i_data[e] = int(kv.y);
#endif
#if defined(HAS_VALUES)
    uint bits = x_bits(o.x + int(kv.y) * u_x_stride);
    int i = o.y + int(pos) * u_v_stride;
    TGL_STORE_BITS(v_data, i, bits, X_DTYPE)
#endif
}

#endif

#if defined(PASS_BLOCK)

const uint kPairs = uint(BLOCK / (2 * WG_SIZE));  // compare-exchanges per invocation and stage
shared uvec2 s_kv[BLOCK];

// a after b in the order (key, then index); never equal.
bool after(uvec2 a, uvec2 b) { return a.x > b.x || (a.x == b.x && a.y > b.y); }

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint p_size = 1u << u_log2p;
    uint row0 = tgl_group_index() * (uint(BLOCK) >> u_log2p);  // whole rows from row0
    for (uint e = lid; e < uint(BLOCK); e += uint(WG_SIZE)) {
        uint row = row0 + (e >> u_log2p);
        uint pos = e & (p_size - 1u);
        uvec2 kv = uvec2(0xffffffffu, pos);
        if (row < u_rows && pos < u_n) {
            ivec3 o = row_offsets(u_row_base + row);
            kv.x = order_key(x_bits(o.x + int(pos) * u_x_stride));
        }
        s_kv[e] = kv;
    }
    memoryBarrierShared();
    barrier();
    // Uniform loops: every invocation reaches every barrier.
    for (uint k = 2u; k <= p_size; k <<= 1) {
        for (uint j = k >> 1; j > 0u; j >>= 1) {
            for (uint m = 0u; m < kPairs; ++m) {
                uint q = lid + m * uint(WG_SIZE);
                uint lo = ((q & ~(j - 1u)) << 1) | (q & (j - 1u));
                uvec2 a = s_kv[lo];
                uvec2 b = s_kv[lo + j];
                // Position in the row: with several rows in the block, each sorts ascending.
                bool ascending = ((lo & (p_size - 1u)) & k) == 0u;
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
        uint pos = e & (p_size - 1u);
        if (row < u_rows && pos < u_kout) store_out(u_row_base + row, pos, s_kv[e]);
    }
}

#elif defined(PASS_OUT)

void main() {
    uint q = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;  // row * u_kout + pos
    if (q >= u_rows * u_kout) return;
    uint row = q / u_kout, pos = q - row * u_kout;
    store_out(u_row_base + row, pos, s_data[row * u_n + pos]);
}

#elif defined(PASS_COUNT) || defined(PASS_SCATTER)

shared uint s_cnt[16 * WG_SIZE];  // digit d, invocation i: [d * WG_SIZE + i]

// The pair at position pos of batch row `row`.
uvec2 pair_at(uint row, uint pos) {
    if (u_from_x == 0u) return s_data[row * u_n + pos];
    ivec3 o = row_offsets(u_row_base + row);
    return uvec2(order_key(x_bits(o.x + int(pos) * u_x_stride)), pos);
}

uint digit(uvec2 kv) { return (kv.x >> u_shift) & 15u; }

void main() {
    uint g = tgl_group_index();
    uint lid = gl_LocalInvocationID.x;
    uint row = g / u_tiles, tile = g - row * u_tiles;
    bool live = row < u_rows;  // no early return before the barriers
    uint p0 = live ? min(u_n, (tile * uint(WG_SIZE) + lid) * uint(CHUNK)) : 0u;
    uint p1 = live ? min(u_n, p0 + uint(CHUNK)) : 0u;
    // Each invocation counts into its own column of s_cnt (a dynamically indexed private array of
    // counts gave wrong results on softpipe).
    for (uint d = 0u; d < 16u; ++d) s_cnt[d * uint(WG_SIZE) + lid] = 0u;
    for (uint p = p0; p < p1; ++p) s_cnt[digit(pair_at(row, p)) * uint(WG_SIZE) + lid] += 1u;
    memoryBarrierShared();
    barrier();
#if defined(PASS_COUNT)
    if (lid < 16u && live) {
        uint total = 0u;
        for (uint i = 0u; i < uint(WG_SIZE); ++i) total += s_cnt[lid * uint(WG_SIZE) + i];
        c_data[(row * 16u + lid) * u_tiles + tile] = total;
    }
#else
    // Invocation d < 16: digit d's counts over the invocations, exclusive, from the tile's start
    // for that digit.
    if (lid < 16u && live) {
        uint run = c_data[(row * 16u + lid) * u_tiles + tile];
        for (uint i = 0u; i < uint(WG_SIZE); ++i) {
            uint c = s_cnt[lid * uint(WG_SIZE) + i];
            s_cnt[lid * uint(WG_SIZE) + i] = run;
            run += c;
        }
    }
    memoryBarrierShared();
    barrier();
    for (uint p = p0; p < p1; ++p) {
        uvec2 kv = pair_at(row, p);
        uint c = digit(kv) * uint(WG_SIZE) + lid;
        d_data[s_cnt[c]] = kv;
        s_cnt[c] += 1u;
    }
#endif
}

#else  // the exclusive scan of c_data[0, u_m), block totals at c_data[u_m + b]

shared uint s_part[WG_SIZE];

// Exclusive prefix of v over the invocations (and s_part[WG_SIZE - 1] + v of the last one is the
// total). Invocation 0 walks them: a short loop, and integer sums do not depend on the order.
uint workgroup_exclusive(uint v) {
    uint lid = gl_LocalInvocationID.x;
    s_part[lid] = v;
    memoryBarrierShared();
    barrier();
    if (lid == 0u) {
        uint run = 0u;
        for (uint i = 0u; i < uint(WG_SIZE); ++i) {
            uint c = s_part[i];
            s_part[i] = run;
            run += c;
        }
    }
    memoryBarrierShared();
    barrier();
    return s_part[lid];
}

#if defined(PASS_SUMS)

void main() {
    uint b = tgl_group_index();
    uint lid = gl_LocalInvocationID.x;
    uint e0 = (b * uint(WG_SIZE) + lid) * 16u;
    uint sum = 0u;
    for (uint e = e0; e < min(u_m, e0 + 16u); ++e) sum += c_data[e];
    uint before = workgroup_exclusive(sum);
    if (lid == uint(WG_SIZE) - 1u && b < u_blocks) c_data[u_m + b] = before + sum;
}

#elif defined(PASS_CARRY)

void main() {
    uint lid = gl_LocalInvocationID.x;
    uint seg = (u_blocks + uint(WG_SIZE) - 1u) / uint(WG_SIZE);
    uint e0 = min(u_blocks, lid * seg), e1 = min(u_blocks, e0 + seg);
    uint sum = 0u;
    for (uint e = e0; e < e1; ++e) sum += c_data[u_m + e];
    uint run = workgroup_exclusive(sum);
    for (uint e = e0; e < e1; ++e) {
        uint c = c_data[u_m + e];
        c_data[u_m + e] = run;
        run += c;
    }
}

#elif defined(PASS_APPLY)

void main() {
    uint b = tgl_group_index();
    uint lid = gl_LocalInvocationID.x;
    uint e0 = (b * uint(WG_SIZE) + lid) * 16u, e1 = min(u_m, e0 + 16u);
    uint sum = 0u;
    for (uint e = e0; e < e1; ++e) sum += c_data[e];
    uint run = workgroup_exclusive(sum) + (b < u_blocks ? c_data[u_m + b] : 0u);
    for (uint e = e0; e < e1; ++e) {
        uint c = c_data[e];
        c_data[e] = run;
        run += c;
    }
}

#else
#error "sort.comp: no PASS_* define"
#endif
#endif
