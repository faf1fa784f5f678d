// buffer_fill: repeats a pattern of 1, 2, 4, 8 or 16 bytes over a byte range (GLES 3.1 has no
// glClearBufferSubData). The pattern arrives replicated to 16 bytes, indexed by the absolute word
// index mod 4 (valid because the range starts at a multiple of the pattern size). Each invocation
// owns one 32-bit word, so the partial words at the ends are read-modify-written without races.
//
// Defines: WG_SIZE.
#include "grid.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer Data { uint data[]; };

uniform uint u_first_word;  // first word touched, relative to the bound window
uniform uint u_word_count;  // words touched
uniform uint u_lo;          // byte range to fill, relative to the bound window
uniform uint u_hi;
uniform uint u_phase;       // (absolute index of the window's first word) mod 4
uniform uvec4 u_pattern;

void main() {
    uint k = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (k >= u_word_count) return;
    uint w = u_first_word + k;
    uint byte0 = w * 4u;
    uint mask = 0u;
    for (uint j = 0u; j < 4u; ++j) {
        uint at = byte0 + j;
        if (at >= u_lo && at < u_hi) mask |= 0xffu << (8u * j);
    }
    uint v = u_pattern[(u_phase + w) & 3u];
    if (mask == 0xffffffffu) {
        data[w] = v;
    } else {
        data[w] = (data[w] & ~mask) | (v & mask);
    }
}
