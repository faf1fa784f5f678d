// fft / ifft along the n complex elements of each row (SequencePlan, sequence_rules.h). Complex
// values are (re, im) element pairs of Y_DTYPE at any strides (u_x_n/u_x_c, u_y_n/u_y_c); rows are
// the dims before them (u_row_stride[d * 2 + role], role 0 x, 1 y). Arithmetic in f32.
//   PASS_SHARED  (n = FFT_N, a power of two that fits): one workgroup per row, Stockham autosort
//                in shared memory (two halves, ping-pong): radix-4 stages (one radix-2 stage
//                first when log2(n) is odd).
//   PASS_STAGE   one global Stockham stage of radix RADIX (2 or 4; sub-transform length u_ns ->
//                RADIX u_ns): one invocation per butterfly; SRC_X reads x (first stage), else the scratch vec2
//                array; DST_Y writes y (last stage, times u_scale), else the scratch.
//   PASS_DFT     any n (planned up to 4096): one invocation per output element, the direct sum
//                over j in f32 with the twiddle of (j k mod n).
// Twiddles: turn(k, m) = (cos, sin)(2 pi k / m) from the exact quadrant split 4k = q m + rem,
// r = (rem / m) pi/2 with |r| <= pi/4 (math.glsl's polynomials), accurate to about an ulp.
// Defines: PASS_*, Y_DTYPE, RANK (row dims, 0..6), INVERSE, FFT_N, RADIX, SRC_X, DST_Y, WG_SIZE.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"

layout(local_size_x = WG_SIZE) in;

#if defined(PASS_STAGE) && !defined(SRC_X)
layout(std430, binding = 0) readonly buffer SBuffer { vec2 s_src[]; };
#else
layout(std430, binding = 0) readonly buffer XBuffer { uint x_data[]; };
#endif
#if defined(PASS_STAGE) && !defined(DST_Y)
layout(std430, binding = 1) writeonly buffer TBuffer { vec2 s_dst[]; };
#else
layout(std430, binding = 1) buffer YBuffer { uint y_data[]; };
#include "store.glsl"
#endif

uniform uint u_rows;
uniform uint u_n;
uniform uint u_ns;  // PASS_STAGE: the current sub-transform length
uniform float u_scale;
uniform int u_offset[2];
uniform int u_x_n;
uniform int u_x_c;
uniform int u_y_n;
uniform int u_y_c;
#if RANK > 0
uniform int u_row_shape[RANK];
uniform int u_row_stride[RANK * 2];
#endif

// (cos, sin)(2 pi k / m), 0 <= k < m.
vec2 turn(uint k, uint m) {
    uint q4 = 4u * k;
    uint q = q4 / m;
    float f = float(q4 - q * m) / float(m);
    if (f > 0.5) {
        f -= 1.0;
        q += 1u;
    }
    float r = f * 1.5707963267948966;
    float s = tgl_sin_poly(r), c = tgl_cos_poly(r);
    q &= 3u;
    return q == 0u ? vec2(c, s) : (q == 1u ? vec2(-s, c) : (q == 2u ? vec2(-c, -s) : vec2(s, -c)));
}

// The twiddle of the transform direction: exp(-+2 pi i k / m).
vec2 twiddle(uint k, uint m) {
    vec2 t = turn(k, m);
#if defined(INVERSE)
    return t;
#else
    return vec2(t.x, -t.y);
#endif
}

vec2 cmul(vec2 a, vec2 b) { return vec2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }

// Radix-4 Stockham butterfly at position k (= j mod ns) of a stage of sub-transform length ns:
// v_r (= in[j + r n/4]) times the twiddle of r k / (4 ns), then the 4-point DFT; the results go
// to out[4 (j - k) + k + r ns].
void dft4(uint k, uint ns, inout vec2 v0, inout vec2 v1, inout vec2 v2, inout vec2 v3) {
    v1 = cmul(v1, twiddle(k, 4u * ns));
    v2 = cmul(v2, twiddle(2u * k, 4u * ns));
    v3 = cmul(v3, twiddle(3u * k, 4u * ns));
    vec2 s02 = v0 + v2, d02 = v0 - v2, s13 = v1 + v3, d13 = v1 - v3;
#if defined(INVERSE)
    vec2 rot = vec2(-d13.y, d13.x);  // +i (v1 - v3)
#else
    vec2 rot = vec2(d13.y, -d13.x);  // -i (v1 - v3)
#endif
    v0 = s02 + s13;
    v1 = d02 + rot;
    v2 = s02 - s13;
    v3 = d02 - rot;
}

ivec2 row_base(uint row) {
    ivec2 o = ivec2(u_offset[0], u_offset[1]);
#if RANK > 0
    uint rest = row;
    for (int d = RANK - 1; d >= 0; --d) {
        uint n = uint(u_row_shape[d]);
        int c = d > 0 ? int(rest % n) : int(rest);
        rest /= n;
        o += c * ivec2(u_row_stride[d * 2], u_row_stride[d * 2 + 1]);
    }
#endif
    return o;
}

#if !(defined(PASS_STAGE) && !defined(SRC_X))
float x_elem(int o) { return tgl_to_f32(tgl_extract(x_data[tgl_word_of(o, Y_DTYPE)], o, Y_DTYPE), Y_DTYPE); }
vec2 x_at(int base, uint k) {
    int o = base + int(k) * u_x_n;
    return vec2(x_elem(o), x_elem(o + u_x_c));
}
#endif
#if !(defined(PASS_STAGE) && !defined(DST_Y))
void y_put(int base, uint k, vec2 v) {
    int o = base + int(k) * u_y_n;
    y_store_bits(o, tgl_from_f32(v.x * u_scale, Y_DTYPE));
    y_store_bits(o + u_y_c, tgl_from_f32(v.y * u_scale, Y_DTYPE));
}
#endif

#if defined(PASS_SHARED)
shared vec2 s_buf[2 * FFT_N];

void main() {
    uint row = tgl_group_index();
    bool live = row < u_rows;  // no early return: every invocation reaches the barriers
    ivec2 b = live ? row_base(row) : ivec2(0);
    uint lid = gl_LocalInvocationID.x;
    for (uint k = lid; k < uint(FFT_N); k += uint(WG_SIZE)) s_buf[k] = live ? x_at(b.x, k) : vec2(0.0);
    memoryBarrierShared();
    barrier();
    uint src = 0u;
    uint ns = 1u;
    // An odd power of two starts with one radix-2 stage; the rest are radix-4.
    if ((findMSB(uint(FFT_N)) & 1) != 0) {
        uint dst = uint(FFT_N) - src;
        for (uint j = lid; j < uint(FFT_N / 2); j += uint(WG_SIZE)) {
            vec2 a = s_buf[src + j];
            vec2 c = s_buf[src + j + uint(FFT_N / 2)];
            s_buf[dst + 2u * j] = a + c;
            s_buf[dst + 2u * j + 1u] = a - c;
        }
        memoryBarrierShared();
        barrier();
        src = dst;
        ns = 2u;
    }
    for (; ns < uint(FFT_N); ns <<= 2) {
        uint dst = uint(FFT_N) - src;
        for (uint j = lid; j < uint(FFT_N / 4); j += uint(WG_SIZE)) {
            uint k = j & (ns - 1u);
            vec2 v0 = s_buf[src + j], v1 = s_buf[src + j + uint(FFT_N / 4)];
            vec2 v2 = s_buf[src + j + uint(FFT_N / 2)], v3 = s_buf[src + j + uint(3 * FFT_N / 4)];
            dft4(k, ns, v0, v1, v2, v3);
            uint idx = ((j - k) << 2) + k;
            s_buf[dst + idx] = v0;
            s_buf[dst + idx + ns] = v1;
            s_buf[dst + idx + 2u * ns] = v2;
            s_buf[dst + idx + 3u * ns] = v3;
        }
        memoryBarrierShared();
        barrier();
        src = dst;
    }
    if (live)
        for (uint k = lid; k < uint(FFT_N); k += uint(WG_SIZE)) y_put(b.y, k, s_buf[src + k]);
}

#elif defined(PASS_STAGE)
#if defined(SRC_X)
#define LOAD(i) x_at(b.x, i)
#else
#define LOAD(i) s_src[row * u_n + (i)]
#endif
#if defined(DST_Y)
#define STORE(i, v) y_put(b.y, i, v)
#else
#define STORE(i, v) s_dst[row * u_n + (i)] = v
#endif
void main() {
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    uint q = u_n / uint(RADIX);
    if (g >= u_rows * q) return;
    uint row = g / q;
    uint j = g - row * q;
    ivec2 b = row_base(row);
    uint k = j & (u_ns - 1u);
    uint idx = (j - k) * uint(RADIX) + k;
#if RADIX == 4
    vec2 v0 = LOAD(j), v1 = LOAD(j + q), v2 = LOAD(j + 2u * q), v3 = LOAD(j + 3u * q);
    dft4(k, u_ns, v0, v1, v2, v3);
    STORE(idx, v0);
    STORE(idx + u_ns, v1);
    STORE(idx + 2u * u_ns, v2);
    STORE(idx + 3u * u_ns, v3);
#else
    vec2 a = LOAD(j), c = cmul(LOAD(j + q), twiddle(k, 2u * u_ns));
    STORE(idx, a + c);
    STORE(idx + u_ns, a - c);
#endif
}

#elif defined(PASS_DFT)
void main() {
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (g >= u_rows * u_n) return;
    uint row = g / u_n;
    uint k = g - row * u_n;
    ivec2 b = row_base(row);
    vec2 s = vec2(0.0);
    uint jk = 0u;  // (j * k) mod n
    for (uint j = 0u; j < u_n; ++j) {
        s += cmul(x_at(b.x, j), twiddle(jk, u_n));
        jk += k;
        if (jk >= u_n) jk -= u_n;
    }
    y_put(b.y, k, s);
}
#else
#error "fft.comp: no PASS_* define"
#endif
