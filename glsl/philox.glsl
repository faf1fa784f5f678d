// Philox4x32-10, shared by generate.comp (random_uniform/normal) and sample.comp; the CPU twin
// is backends/common/philox.h.
// Philox4x32-10 (Salmon et al., SC'11), the words for counter c and key k.
uvec4 philox4x32_10(uvec4 c, uvec2 k) {
    for (int round = 0; round < 10; ++round) {
        if (round > 0) k += uvec2(0x9E3779B9u, 0xBB67AE85u);
        uint hi0, lo0, hi1, lo1;
        umulExtended(0xD2511F53u, c.x, hi0, lo0);
        umulExtended(0xCD9E8D57u, c.z, hi1, lo1);
        c = uvec4(hi1 ^ c.y ^ k.x, lo1, hi0 ^ c.w ^ k.y, lo0);
    }
    return c;
}


// The words of counter offset + k (offset: 64 bits in two words, the sum carried), under key.
uvec4 philox_words_at(uvec2 key, uvec2 offset, uint k) {
    uint carry;
    uint lo = uaddCarry(offset.x, k, carry);
    return philox4x32_10(uvec4(lo, offset.y + carry, 0u, 0u), key);
}
