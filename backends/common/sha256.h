// SHA-256 (FIPS 180-4): the GLES program cache's keys and entry digests (and the tests that forge
// entries to check that the cache refuses them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tgl {

// SHA-256 of `data` as 32 bytes.
void sha256(const void* data, size_t len, uint8_t out[32]);
// The 32 bytes of a digest as 64 lowercase hex digits.
std::string hex_digest(const uint8_t digest[32]);

}  // namespace tgl
