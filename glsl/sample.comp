// sample (tgl_sample_params, SequencePlan): one workgroup per row of logits (WG_SIZE chosen by the
// host from V: a short row does not wait on hundreds of idle invocations at each barrier); the
// token is decided by f32 subtractions/products that are correctly rounded everywhere and by
// integer arithmetic only, so it is bit-identical to the CPU reference (backends/cpu/sequence_kernels.cpp):
//   1. key = logit (NaN: -inf); m = max key, first index of it (tree over (value, index) pairs).
//      GREEDY (temperature 0 or top_k 1) or m = +-inf: the token is that index.
//   2. w_j = the integer weight of t = (key - m) * u_inv_t (sample_weight() in sequence_rules.h:
//      trunc(-t log2 e * 2^24) split into 2^-n and a 24-bit fraction, exp2 of the fraction as a
//      product of the u_exp2 factors, w = a >> (n + 7) <= 2^24). Weights are recomputed in each
//      pass instead of being stored (any V).
//   3. top_k: tau_k = the k-th largest weight, by an MSD radix select (digits of bits 24, 23..16,
//      15..8, 7..0: shared-memory histograms with atomic counts).
//   4. top_p: need = ceil(top_p16 * mass_k / 2^16), mass_k = the sum of the kept weights (64 bits
//      as uvec2 with carries); tau = the largest weight value whose mass (kept weights >= it) is
//      >= need, by the same radix walk over mass histograms (64-bit atomic sums with carries).
//   5. R = Philox word 0 at counter offset + row; target = floor(R * total / 2^32); the token is
//      the first index j whose running sum of kept weights (w >= tau) exceeds target: each
//      invocation sums a contiguous segment, invocation 0 finds the segment, its owner scans it.
// Integer sums do not depend on their order, so the parallel reductions are exact.
// Defines: X_DTYPE, WG_SIZE.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "philox.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) readonly buffer XBuffer { uint x_data[]; };
layout(std430, binding = 1) writeonly buffer TBuffer { int t_data[]; };
#include "sample_weight.glsl"

uniform uint u_rows;
uniform uint u_v;
uniform int u_x_off;
uniform int u_x_row;
uniform int u_t_off;
uniform int u_t_row;
uniform uint u_greedy;
uniform uint u_top_k;    // 0: off
uniform uint u_top_p16;  // 0: off
uniform uvec4 u_random;  // seed low, seed high, offset low, offset high

shared float s_val[WG_SIZE];
shared uint s_idx[WG_SIZE];
shared uint s_cnt[256];
shared uint s_mlo[256];
shared uint s_mhi[256];
shared uint s_seg_lo[WG_SIZE];
shared uint s_seg_hi[WG_SIZE];
shared uint s_res[4];

void atomic_add64(uint d, uint w) {
    uint old = atomicAdd(s_mlo[d], w);
    if (old + w < old) atomicAdd(s_mhi[d], 1u);
}

// The digit of pass `shift` (24, 16, 8, 0) and whether w agrees with prefix above it.
bool matches(uint w, uint prefix, uint shift) { return shift >= 24u || (w >> (shift + 8u)) == (prefix >> (shift + 8u)); }

void clear_hist() {
    for (uint b = gl_LocalInvocationID.x; b < 256u; b += uint(WG_SIZE)) {
        s_cnt[b] = 0u;
        s_mlo[b] = 0u;
        s_mhi[b] = 0u;
    }
}

void main() {
    uint row = tgl_group_index();
    uint lid = gl_LocalInvocationID.x;
    bool live = row < u_rows;  // no early return before the barriers
    int base = u_x_off + int(live ? row : 0u) * u_x_row;
    uint V = live ? u_v : 0u;

    // 1. max and its first index.
    float best = tgl_neg_inf();
    uint bi = 0xffffffffu;
    for (uint j = lid; j < V; j += uint(WG_SIZE)) {
        float v = key_at(base, j);
        if (v > best || (v == best && j < bi)) {
            best = v;
            bi = j;
        }
    }
    s_val[lid] = best;
    s_idx[lid] = bi;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(WG_SIZE) / 2u; h > 0u; h >>= 1) {
        if (lid < h) {
            float v = s_val[lid + h];
            uint i = s_idx[lid + h];
            if (v > s_val[lid] || (v == s_val[lid] && i < s_idx[lid])) {
                s_val[lid] = v;
                s_idx[lid] = i;
            }
        }
        memoryBarrierShared();
        barrier();
    }
    float m = s_val[0];
    uint token = s_idx[0];
    if (u_greedy == 0u && !tgl_isinf(m)) {  // uniform across the workgroup
        // 3. top_k threshold.
        uint tau = 0u;
        if (u_top_k != 0u) {
            uint prefix = 0u, remaining = u_top_k;
            for (uint shift = 24u;; shift -= 8u) {
                clear_hist();
                memoryBarrierShared();
                barrier();
                for (uint j = lid; j < V; j += uint(WG_SIZE)) {
                    uint w = weight(key_at(base, j), m);
                    if (matches(w, prefix, shift)) atomicAdd(s_cnt[(w >> shift) & 255u], 1u);
                }
                memoryBarrierShared();
                barrier();
                if (lid == 0u) {
                    for (int b = 255; b >= 0; --b) {
                        if (s_cnt[b] >= remaining) {
                            prefix |= uint(b) << shift;
                            break;
                        }
                        remaining -= s_cnt[b];
                    }
                    s_res[0] = prefix;
                    s_res[1] = remaining;
                }
                memoryBarrierShared();
                barrier();
                prefix = s_res[0];
                remaining = s_res[1];
                memoryBarrierShared();
                barrier();
                if (shift == 0u) break;
            }
            tau = prefix;
        }
        // 4. top_p threshold among the kept weights.
        if (u_top_p16 != 0u) {
            clear_hist();
            memoryBarrierShared();
            barrier();
            uvec2 part = uvec2(0u);
            for (uint j = lid; j < V; j += uint(WG_SIZE)) {
                uint w = weight(key_at(base, j), m);
                if (w >= tau) part = tgl_i64_add(part, uvec2(w, 0u));
            }
            uint old = atomicAdd(s_mlo[0], part.x);
            atomicAdd(s_mhi[0], part.y + (old + part.x < old ? 1u : 0u));
            memoryBarrierShared();
            barrier();
            uvec2 need = top_p_need(u_top_p16, uvec2(s_mlo[0], s_mhi[0]));
            uint prefix = 0u;
            uvec2 acc = uvec2(0u);
            memoryBarrierShared();
            barrier();
            for (uint shift = 24u;; shift -= 8u) {
                clear_hist();
                memoryBarrierShared();
                barrier();
                for (uint j = lid; j < V; j += uint(WG_SIZE)) {
                    uint w = weight(key_at(base, j), m);
                    if (w >= tau && matches(w, prefix, shift)) atomic_add64((w >> shift) & 255u, w);
                }
                memoryBarrierShared();
                barrier();
                if (lid == 0u) {
                    for (int b = 255; b >= 0; --b) {
                        uvec2 with_b = tgl_i64_add(acc, uvec2(s_mlo[b], s_mhi[b]));
                        if (ge64(with_b, need)) {
                            prefix |= uint(b) << shift;
                            break;
                        }
                        acc = with_b;
                    }
                    s_res[0] = prefix;
                    s_res[1] = acc.x;
                    s_res[2] = acc.y;
                }
                memoryBarrierShared();
                barrier();
                prefix = s_res[0];
                acc = uvec2(s_res[1], s_res[2]);
                memoryBarrierShared();
                barrier();
                if (shift == 0u) break;
            }
            tau = max(tau, prefix);
        }
        // 5. the draw: contiguous segments, one per invocation.
        uint seg = (V + uint(WG_SIZE) - 1u) / uint(WG_SIZE);
        uint j0 = min(V, lid * seg), j1 = min(V, j0 + seg);
        uvec2 mass = uvec2(0u);
        for (uint j = j0; j < j1; ++j) {
            uint w = weight(key_at(base, j), m);
            if (w >= tau) mass = tgl_i64_add(mass, uvec2(w, 0u));
        }
        s_seg_lo[lid] = mass.x;
        s_seg_hi[lid] = mass.y;
        memoryBarrierShared();
        barrier();
        if (lid == 0u) {
            uvec2 total = uvec2(0u);
            for (uint i = 0u; i < uint(WG_SIZE); ++i) total = tgl_i64_add(total, uvec2(s_seg_lo[i], s_seg_hi[i]));
            uint r = philox_words_at(u_random.xy, u_random.zw, row).x;
            uvec2 target = draw_target(r, total);
            uvec2 run = uvec2(0u);
            uint owner = 0u;
            for (uint i = 0u; i < uint(WG_SIZE); ++i) {
                uvec2 next = tgl_i64_add(run, uvec2(s_seg_lo[i], s_seg_hi[i]));
                if (!ge64(target, next)) {  // next > target
                    owner = i;
                    break;
                }
                run = next;
            }
            s_res[0] = owner;
            s_res[1] = target.x;
            s_res[2] = target.y;
            s_res[3] = 0u;
            // The owner continues from run (target - run lies within its segment).
            s_mlo[0] = run.x;
            s_mhi[0] = run.y;
        }
        memoryBarrierShared();
        barrier();
        if (lid == s_res[0] && live) {
            uvec2 target = uvec2(s_res[1], s_res[2]);
            uvec2 run = uvec2(s_mlo[0], s_mhi[0]);
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
    } else if (lid == 0u && live) {
        t_data[u_t_off + int(row) * u_t_row] = int(token);
    }
}
