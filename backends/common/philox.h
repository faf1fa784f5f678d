// Philox4x32-10 (Salmon et al., SC'11; Random123's philox4x32 with 10 rounds), shared by the CPU
// reference kernels that draw random numbers (random_uniform/normal, sample). The GLSL twin is
// glsl/philox.glsl.
#pragma once

#include <cstdint>

namespace tgl {

// The four words for counter ctr and key (k0, k1), in place.
inline void philox4x32_10(uint32_t ctr[4], uint32_t k0, uint32_t k1) {
    for (int round = 0; round < 10; ++round) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        const uint64_t p0 = uint64_t(0xD2511F53u) * ctr[0];
        const uint64_t p1 = uint64_t(0xCD9E8D57u) * ctr[2];
        const uint32_t c1 = ctr[1], c3 = ctr[3];
        ctr[0] = uint32_t(p1 >> 32) ^ c1 ^ k0;
        ctr[1] = uint32_t(p1);
        ctr[2] = uint32_t(p0 >> 32) ^ c3 ^ k1;
        ctr[3] = uint32_t(p0);
    }
}

// The words of 64-bit counter c (c & 0xffffffff, c >> 32, 0, 0) under a 64-bit seed.
inline void philox_words(uint64_t seed, uint64_t c, uint32_t w[4]) {
    w[0] = uint32_t(c);
    w[1] = uint32_t(c >> 32);
    w[2] = w[3] = 0;
    philox4x32_10(w, uint32_t(seed), uint32_t(seed >> 32));
}

}  // namespace tgl
