// Combining one value per invocation over groups of invocations of a workgroup (reductions, norms,
// the GEMV's lanes along k): the steps between invocations of one subgroup as shuffles
// (GL_KHR_shader_subgroup: no shared memory, no barrier) where the variant has TGL_SUBGROUP_SIZE
// (shader_defines.h: the host sets it where the device's subgroups are used and the workgroup is
// a whole number of them; build_shader_source then adds the extension directives), the
// shared-memory tree alone otherwise. Every caller follows one pattern, on slots rather than
// gl_LocalInvocationID (the lanes of a group are the slots c, c + S, c + 2S, ..., S a power of two):
//
//   uint slot = tgl_local_slot();        // the caller's lanes derive from it
//   TGL_SUBGROUP_FOLD(v, S, N, combine)  // v over slots slot ^ d, d = S, 2S, ... < min(N, subgroup)
//   s[slot] = v; barrier();
//   for (uint h = N / 2; h >= TGL_TREE_STOP(S); h >>= 1) {
//       if (slot % N < h) s[slot] = combine(s[slot], s[slot + h]);
//       barrier();
//   }
//   // s[c] (c < S, of each group of N slots) holds the combination of the slots c, c + S, ...
//
// The result differs from the tree alone only in the order of combination (a butterfly inside a
// subgroup, then the tree over the subgroups' partials). The fold and the tree belong in uniform
// control flow: every invocation of the workgroup reaches them, as it does the barriers.
#if defined(TGL_SUBGROUP_SIZE)
// Slots subgroup by subgroup: slots s and s ^ d (d < the subgroup size) are in one subgroup, and
// subgroupShuffleXor(v, d) reads slot s ^ d. (The extension does not promise that layout of
// gl_LocalInvocationID; drivers use it, so the caller's loads stay as coalesced.)
uint tgl_local_slot() { return gl_SubgroupID * uint(TGL_SUBGROUP_SIZE) + gl_SubgroupInvocationID; }
#define TGL_SUBGROUP_FOLD(V, S, N, COMBINE)                                                             \
    for (uint tgl_d_ = uint(S); tgl_d_ < uint(N) && tgl_d_ < uint(TGL_SUBGROUP_SIZE); tgl_d_ <<= 1) \
        V = COMBINE(V, subgroupShuffleXor(V, tgl_d_));
// The tree's last step: the fold covered the distances below the subgroup size.
#define TGL_TREE_STOP(S) max(uint(S), uint(TGL_SUBGROUP_SIZE))
#else
uint tgl_local_slot() { return gl_LocalInvocationID.x; }
#define TGL_SUBGROUP_FOLD(V, S, N, COMBINE)
#define TGL_TREE_STOP(S) uint(S)
#endif
