// sample over long rows (run_sample_split in backends/gles/sequence_kernels.cpp): the tokens of
// sample.comp (the same weights, thresholds and draw: TGL_OP_SAMPLE in plugin_api/tensorgl/ops.h), with each row cut into
// chunks of u_chunk logits, a workgroup per (row, chunk) in every pass but the last:
//   PASS_MAX   the max key of the chunk and its first index (partials); clears histogram slot 0
//              and initialises the walk state.
//   PASS_HIST  one level of a radix walk: top_k's digits (levels 0..2: count histograms) or
//              top_p's (levels 3..5: mass histograms of the weights >= tau_k). Digit 0 is w >> 16
//              (0..256: w <= 2^24), digits 1 and 2 are bits 15..8 and 7..0. Each workgroup first
//              walks the previous level's finished histogram (all of them alike; the chunk-0
//              workgroup stores the result), then adds its chunk's histogram of the logits that
//              match the prefix found so far into this level's slot with 64-bit atomic sums.
//   PASS_SUMS  walks the last level (tau = the threshold) and stores each chunk's kept mass.
//   PASS_DRAW  a workgroup per row: the target from Philox as sample.comp draws it, the chunk
//              whose running mass passes it, then sample.comp's segment scan inside that chunk.
// The walks are sample.comp's: the largest digit whose mass (from the top) reaches what is left
// to find. Integer sums do not depend on their order, so every pass is exact.
// Histogram slots rotate over 3 (pass p counts into p % 3, walks (p - 1) % 3, clears (p + 1) % 3);
// the walk state alternates over 2 (pass p reads p % 2, writes (p + 1) % 2), so no workgroup
// reads what another writes in the same pass.
// Defines: X_DTYPE, WG_SIZE (a power of two <= 512), one of PASS_MAX, PASS_HIST, PASS_SUMS, PASS_DRAW.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "philox.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 1) buffer SBuffer { uint s_data[]; };  // the scratch rows (words below)
#ifdef PASS_DRAW
layout(std430, binding = 2) writeonly buffer TBuffer { int t_data[]; };
#endif
#include "sample_weight.glsl"

uniform uint u_rows;       // rows of this group of dispatches
uniform uint u_row0;       // its first row within the op
uniform uint u_v;
uniform uint u_chunk;      // logits per chunk
uniform uint u_chunks;     // chunks per row (<= kBins)
uniform uint u_row_words;  // scratch words per row
uniform int u_x_off;
uniform int u_x_row;
uniform uint u_top_k;    // 0: off
uniform uint u_top_p16;  // 0: off
uniform uint u_pass;     // PASS_HIST, PASS_SUMS, PASS_DRAW: the pass index p after PASS_MAX
uniform uint u_level;    // PASS_HIST: the level counted
uniform uint u_prev;     // PASS_HIST, PASS_SUMS: the level walked first (kNoLevel: none)
#ifdef PASS_DRAW
uniform int u_t_off;
uniform int u_t_row;
uniform uint u_greedy;
uniform uvec4 u_random;  // seed low, seed high, offset low, offset high
#endif

const uint kBins = 512u;
const uint kNoLevel = 0xffffffffu;
const uint kGroup = 32u;  // bins per group of a walk's first scan
const uint kGroups = kBins / kGroup;
// Scratch words of a row: partial max (value bits, index) per chunk, kept mass (lo, hi) per
// chunk, 2 walk states of 8 words (prefix, t lo, t hi, tau_k, tau, max key bits, its first index), 3 histogram slots of kBins
// (lo, hi) pairs.
uint part_word(uint r) { return r * u_row_words; }
uint sums_word(uint r) { return r * u_row_words + 2u * u_chunks; }
uint state_word(uint r, uint s) { return r * u_row_words + 4u * u_chunks + 8u * (s & 1u); }
uint hist_word(uint r, uint slot) { return r * u_row_words + 4u * u_chunks + 16u + 2u * kBins * (slot % 3u); }

shared float sh_val[WG_SIZE];
shared uint sh_idx[WG_SIZE];
shared uint sh_lo[kBins];
shared uint sh_hi[kBins];
shared uint sh_blo[WG_SIZE];
shared uint sh_bhi[WG_SIZE];
shared uint sh_res[8];

uint digit_shift(uint d) { return d == 0u ? 16u : (d == 1u ? 8u : 0u); }
uint digit_of(uint w, uint d) { return d == 0u ? w >> 16 : (w >> digit_shift(d)) & 255u; }
// Whether w agrees with prefix on the digits above digit d.
bool matches(uint w, uint prefix, uint d) { return d == 0u || (w >> (digit_shift(d) + 8u)) == (prefix >> (digit_shift(d) + 8u)); }

void shared_add64(uint b, uint w) {
    uint old = atomicAdd(sh_lo[b], w);
    if (old + w < old) atomicAdd(sh_hi[b], 1u);
}

// The max key of the (value, first index) pairs over the workgroup (every invocation gets it).
void reduce_max(inout float best, inout uint bi) {
    uint lid = gl_LocalInvocationID.x;
    sh_val[lid] = best;
    sh_idx[lid] = bi;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(WG_SIZE) / 2u; h > 0u; h >>= 1) {
        if (lid < h) {
            float v = sh_val[lid + h];
            uint i = sh_idx[lid + h];
            if (v > sh_val[lid] || (v == sh_val[lid] && i < sh_idx[lid])) {
                sh_val[lid] = v;
                sh_idx[lid] = i;
            }
        }
        memoryBarrierShared();
        barrier();
    }
    best = sh_val[0];
    bi = sh_idx[0];
    memoryBarrierShared();
    barrier();
}

#ifndef PASS_MAX
// The row's max key and its first index, from the chunk partials.
void row_max(uint r, out float m, out uint first) {
    float best = tgl_neg_inf();
    uint bi = 0xffffffffu;
    for (uint c = gl_LocalInvocationID.x; c < u_chunks; c += uint(WG_SIZE)) {
        float v = uintBitsToFloat(s_data[part_word(r) + 2u * c]);
        uint i = s_data[part_word(r) + 2u * c + 1u];
        if (v > best || (v == best && i < bi)) {
            best = v;
            bi = i;
        }
    }
    reduce_max(best, bi);
    m = best;
    first = bi;
}

struct WalkState {
    uint prefix;
    uvec2 t;  // what is left to find: a count (top_k) or a mass (top_p)
    uint tau_k, tau;
    float m;  // the row's max key and its first index
    uint first;
};

// The state a pass starts from: pass 0 reduces the chunk partials (every later pass reads the
// state, so the workgroups of one row do that once); the others read the state pass p - 1 stored.
WalkState begin_pass(uint r) {
    uint o = state_word(r, u_pass);
    if (u_pass == 0u) {
        float m;
        uint first;
        row_max(r, m, first);
        return WalkState(0u, uvec2(0u), 0u, 0u, m, first);
    }
    return WalkState(s_data[o], uvec2(s_data[o + 1u], s_data[o + 2u]), s_data[o + 3u], s_data[o + 4u],
                     uintBitsToFloat(s_data[o + 5u]), s_data[o + 6u]);
}

void store_state(uint r, uint s, WalkState st) {
    uint o = state_word(r, s);
    s_data[o] = st.prefix;
    s_data[o + 1u] = st.t.x;
    s_data[o + 2u] = st.t.y;
    s_data[o + 3u] = st.tau_k;
    s_data[o + 4u] = st.tau;
    s_data[o + 5u] = floatBitsToUint(st.m);
    s_data[o + 6u] = st.first;
}

// One step of a radix walk over level `level`'s finished histogram (slot `slot`): the largest
// digit b whose bins from the top reach st.t; st.t loses the bins above b.
void walk(uint r, uint level, uint slot, inout WalkState st) {
    uint lid = gl_LocalInvocationID.x;
    uint d = level % 3u;
    bool mass = level >= 3u;
    uint hw = hist_word(r, slot);
    for (uint b = lid; b < kBins; b += uint(WG_SIZE)) {
        sh_lo[b] = s_data[hw + 2u * b];
        sh_hi[b] = s_data[hw + 2u * b + 1u];
    }
    memoryBarrierShared();
    barrier();
    // Sums of groups of kGroup bins, then one invocation scans the groups and the bins of the
    // group that holds the digit (few barriers: each costs much on a CPU driver).
    if (lid < kGroups) {
        uvec2 sum = uvec2(0u);
        for (uint k = 0u; k < kGroup; ++k) sum = tgl_i64_add(sum, uvec2(sh_lo[lid * kGroup + k], sh_hi[lid * kGroup + k]));
        sh_blo[lid] = sum.x;
        sh_bhi[lid] = sum.y;
    }
    memoryBarrierShared();
    barrier();
    if (lid == 0u) {
        uvec2 t = st.t;
        if (d == 0u) {  // a walk starts: top_k's count, or top_p's need from the kept mass (all of it)
            uvec2 total = uvec2(0u);
            for (uint g = 0u; g < kGroups; ++g) total = tgl_i64_add(total, uvec2(sh_blo[g], sh_bhi[g]));
            t = mass ? top_p_need(u_top_p16, total) : uvec2(u_top_k, 0u);
        }
        uvec2 acc = uvec2(0u);
        uint digit = 0u;  // (none reaches t: never, t <= the total) as sample.comp: digit 0
        for (uint g = kGroups; g-- > 0u;) {
            uvec2 with_g = tgl_i64_add(acc, uvec2(sh_blo[g], sh_bhi[g]));
            if (ge64(with_g, t)) {
                for (uint b = g * kGroup + kGroup; b-- > g * kGroup;) {
                    uvec2 with_b = tgl_i64_add(acc, uvec2(sh_lo[b], sh_hi[b]));
                    if (ge64(with_b, t)) {
                        digit = b;
                        break;
                    }
                    acc = with_b;
                }
                break;
            }
            acc = with_g;
        }
        uvec2 left = tgl_i64_sub(t, acc);
        sh_res[0] = digit;
        sh_res[1] = left.x;
        sh_res[2] = left.y;
    }
    memoryBarrierShared();
    barrier();
    if (d == 0u) st.prefix = 0u;
    st.prefix |= sh_res[0] << digit_shift(d);
    st.t = uvec2(sh_res[1], sh_res[2]);
    if (d == 2u) {
        if (mass) st.tau = max(st.tau_k, st.prefix);
        else st.tau_k = st.tau = st.prefix;
    }
    memoryBarrierShared();
    barrier();
}
#endif

void main() {
    uint lid = gl_LocalInvocationID.x;
#ifdef PASS_DRAW
    uint r = tgl_group_index();
    if (r >= u_rows) return;  // (the whole workgroup)
    uint row = u_row0 + r;
    int base = u_x_off + int(row) * u_x_row;
    WalkState st = begin_pass(r);
    float m = st.m;
    uint token = st.first;
    if (u_greedy == 0u && !tgl_isinf(m)) {
        uint tau = st.tau;
        for (uint c = lid; c < u_chunks; c += uint(WG_SIZE)) {
            sh_lo[c] = s_data[sums_word(r) + 2u * c];
            sh_hi[c] = s_data[sums_word(r) + 2u * c + 1u];
        }
        memoryBarrierShared();
        barrier();
        if (lid == 0u) {
            uvec2 total = uvec2(0u);
            for (uint c = 0u; c < u_chunks; ++c) total = tgl_i64_add(total, uvec2(sh_lo[c], sh_hi[c]));
            uvec2 target = draw_target(philox_words_at(u_random.xy, u_random.zw, row).x, total);
            uvec2 run = uvec2(0u);
            uint owner = 0u;
            for (uint c = 0u; c < u_chunks; ++c) {
                uvec2 next = tgl_i64_add(run, uvec2(sh_lo[c], sh_hi[c]));
                if (!ge64(target, next)) {  // next > target
                    owner = c;
                    break;
                }
                run = next;
            }
            sh_res[0] = owner;
            sh_res[1] = target.x;
            sh_res[2] = target.y;
            sh_res[3] = run.x;
            sh_res[4] = run.y;
        }
        memoryBarrierShared();
        barrier();
        // sample.comp's step 5 within the owner chunk, from the mass before it.
        uint c0 = sh_res[0] * u_chunk, len = min(u_v - c0, u_chunk);
        uvec2 target = uvec2(sh_res[1], sh_res[2]);
        uvec2 run = uvec2(sh_res[3], sh_res[4]);
        uint seg = (len + uint(WG_SIZE) - 1u) / uint(WG_SIZE);
        uint j0 = c0 + min(len, lid * seg), j1 = c0 + min(len, lid * seg + seg);
        uvec2 part = uvec2(0u);
        for (uint j = j0; j < j1; ++j) {
            uint w = weight(key_at(base, j), m);
            if (w >= tau) part = tgl_i64_add(part, uvec2(w, 0u));
        }
        sh_blo[lid] = part.x;
        sh_bhi[lid] = part.y;
        memoryBarrierShared();
        barrier();
        if (lid == 0u) {
            uint owner = 0u;
            for (uint i = 0u; i < uint(WG_SIZE); ++i) {
                uvec2 next = tgl_i64_add(run, uvec2(sh_blo[i], sh_bhi[i]));
                if (!ge64(target, next)) {
                    owner = i;
                    break;
                }
                run = next;
            }
            sh_res[5] = owner;
            sh_res[6] = run.x;
            sh_res[7] = run.y;
        }
        memoryBarrierShared();
        barrier();
        if (lid == sh_res[5]) {
            run = uvec2(sh_res[6], sh_res[7]);
            for (uint j = j0; j < j1; ++j) {
                uint w = weight(key_at(base, j), m);
                if (w >= tau) run = tgl_i64_add(run, uvec2(w, 0u));
                if (!ge64(target, run)) {
                    token = j;
                    break;
                }
            }
            t_data[u_t_off + int(row) * u_t_row] = int(token);
        }
    } else if (lid == 0u) {
        t_data[u_t_off + int(row) * u_t_row] = int(token);
    }
#else
    uint g = tgl_group_index();
    uint r = g / u_chunks, c = g % u_chunks;
    if (r >= u_rows) return;  // (the whole workgroup)
    int base = u_x_off + int(u_row0 + r) * u_x_row;
    uint j_end = min(u_v, c * u_chunk + u_chunk);
#ifdef PASS_MAX
    float best = tgl_neg_inf();
    uint bi = 0xffffffffu;
    for (uint j = c * u_chunk + lid; j < j_end; j += uint(WG_SIZE)) {
        float v = key_at(base, j);
        if (v > best || (v == best && j < bi)) {
            best = v;
            bi = j;
        }
    }
    reduce_max(best, bi);
    if (lid == 0u) {
        s_data[part_word(r) + 2u * c] = floatBitsToUint(best);
        s_data[part_word(r) + 2u * c + 1u] = bi;
    }
    for (uint i = c * uint(WG_SIZE) + lid; i < 2u * kBins; i += u_chunks * uint(WG_SIZE)) s_data[hist_word(r, 0u) + i] = 0u;
#else
    WalkState st = begin_pass(r);
    float m = st.m;
    if (u_prev != kNoLevel && !tgl_isinf(m)) walk(r, u_prev, u_pass + 2u, st);
    if (c == 0u && lid == 0u) store_state(r, u_pass + 1u, st);
    if (tgl_isinf(m)) return;  // (the whole workgroup) the draw takes the first max
#ifdef PASS_HIST
    for (uint i = c * uint(WG_SIZE) + lid; i < 2u * kBins; i += u_chunks * uint(WG_SIZE))
        s_data[hist_word(r, u_pass + 1u) + i] = 0u;
    uint d = u_level % 3u;
    bool mass = u_level >= 3u;
    uint prefix = d == 0u ? 0u : st.prefix;
    uint keep = mass ? st.tau_k : 0u;  // top_p weighs the weights top_k keeps
    for (uint b = lid; b < kBins; b += uint(WG_SIZE)) {
        sh_lo[b] = 0u;
        sh_hi[b] = 0u;
    }
    memoryBarrierShared();
    barrier();
    for (uint j = c * u_chunk + lid; j < j_end; j += uint(WG_SIZE)) {
        uint w = weight(key_at(base, j), m);
        if (w >= keep && matches(w, prefix, d)) {
            if (mass) shared_add64(digit_of(w, d), w);
            else atomicAdd(sh_lo[digit_of(w, d)], 1u);
        }
    }
    memoryBarrierShared();
    barrier();
    uint hw = hist_word(r, u_pass);
    for (uint b = lid; b < kBins; b += uint(WG_SIZE)) {
        uint lo = sh_lo[b], hi = sh_hi[b];
        if (lo == 0u && hi == 0u) continue;
        uint old = atomicAdd(s_data[hw + 2u * b], lo);
        if (old + lo < old) hi += 1u;
        if (hi != 0u) atomicAdd(s_data[hw + 2u * b + 1u], hi);
    }
#else  // PASS_SUMS
    if (lid == 0u) {
        sh_lo[0] = 0u;
        sh_hi[0] = 0u;
    }
    memoryBarrierShared();
    barrier();
    uvec2 part = uvec2(0u);
    for (uint j = c * u_chunk + lid; j < j_end; j += uint(WG_SIZE)) {
        uint w = weight(key_at(base, j), m);
        if (w >= st.tau) part = tgl_i64_add(part, uvec2(w, 0u));
    }
    uint old = atomicAdd(sh_lo[0], part.x);
    atomicAdd(sh_hi[0], part.y + (old + part.x < old ? 1u : 0u));
    memoryBarrierShared();
    barrier();
    if (lid == 0u) {
        s_data[sums_word(r) + 2u * c] = sh_lo[0];
        s_data[sums_word(r) + 2u * c + 1u] = sh_hi[0];
    }
#endif
#endif
#endif
}
