// The strided copy of every layout op: one copy step of backends/common/layout_rules.h (read that
// comment for what a step is). Element i of the step (i < u_count) is copied bit for bit from the
// input element the step maps it to, or is the constant u_value.
//
// Defines:
//   ELEM_LOG2   log2 of the element size in bytes (0, 1, 2, 3); the dtype itself does not matter.
//               8-byte elements (i64) are two words each, 2e (low) and 2e + 1 (high), copied as a
//               pair with plain stores (no word is shared; WORD_OUT is not used); the constant is
//               (u_value, u_value_hi)
//   RANK        output dims of the step (0..8): u_shape, u_y_stride
//   LINEAR      linear step: the input element is row-major index u_in_lin + i of the input view
//               (IN_RANK dims u_in_shape, u_in_stride); the output element is row-major index
//               u_out_lin + i of the output view. Otherwise a map step: the output coordinates
//               give the input's through u_x_stride (and, with BOUNDARY, u_start, u_step,
//               u_size, u_mode per dim: 0 direct, 1 wrap, 2 reflect, 3 clamp, 4 constant)
//   NO_X        no input: every element is u_value
//   WORD_OUT    the step's output is one contiguous run (y element = u_y_offset + i): each
//               invocation writes one whole 32-bit word of it (sub-word elements gathered into the
//               word, one plain store); only the run's first and last word, shared with other
//               data, use atomicAnd/atomicOr. Otherwise one invocation per element, sub-word
//               elements stored with atomicAnd/atomicOr on just their bits.
//   WG_SIZE     invocations per workgroup
// Every index is in elements relative to the bound SSBO windows (16-byte aligned starts).
#include "grid.glsl"

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };
#if !defined(NO_X)
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };
#endif

#if ELEM_LOG2 < 3
#define PER_WORD (4 >> ELEM_LOG2)
#define ELEM_BITS (8 << ELEM_LOG2)
#endif
#if ELEM_LOG2 == 3
uniform uint u_value_hi;
#elif ELEM_LOG2 == 2
#define ELEM_MASK 0xffffffffu
#elif ELEM_LOG2 == 1
#define ELEM_MASK 0xffffu
#else
#define ELEM_MASK 0xffu
#endif

uniform uint u_count;
uniform int u_y_offset;
uniform int u_x_offset;
uniform uint u_value;
#if RANK > 0
uniform int u_shape[RANK];
uniform int u_y_stride[RANK];
#endif
#if defined(LINEAR)
uniform uint u_in_lin;
uniform uint u_out_lin;
#if IN_RANK > 0
uniform int u_in_shape[IN_RANK];
uniform int u_in_stride[IN_RANK];
#endif
#elif RANK > 0 && !defined(NO_X)
uniform int u_x_stride[RANK];
#if defined(BOUNDARY)
uniform int u_start[RANK];
uniform int u_step[RANK];
uniform int u_size[RANK];
uniform int u_mode[RANK];
#endif
#endif

#if ELEM_LOG2 < 3
uint shift_of(int e) { return uint((e & (PER_WORD - 1)) * ELEM_BITS); }

// Bits of input element e.
uint x_bits(int e) {
#if defined(NO_X)
    return u_value;
#else
    return (x_data[e >> (2 - ELEM_LOG2)] >> shift_of(e)) & ELEM_MASK;
#endif
}
#endif

// Row-major unravelling of `lin` over (shape, stride) arrays of N dims, added to `base`.
#define UNRAVEL(N, SHAPE, STRIDE, lin, base)          \
    {                                                 \
        uint rest_ = (lin);                           \
        for (int d_ = (N) - 1; d_ > 0; --d_) {        \
            uint n_ = uint(SHAPE[d_]);                \
            base += int(rest_ % n_) * STRIDE[d_];     \
            rest_ /= n_;                              \
        }                                             \
        base += int(rest_) * STRIDE[0];               \
    }

// The input element of step element i (its row-major coordinates give both sides), or -1 for
// the constant; *y_elem receives the output element.
int locate(uint i, out int y_elem) {
    int y = u_y_offset;
    int x = u_x_offset;
#if defined(LINEAR)
#if RANK > 0
    UNRAVEL(RANK, u_shape, u_y_stride, u_out_lin + i, y)
#endif
#if IN_RANK > 0
    UNRAVEL(IN_RANK, u_in_shape, u_in_stride, u_in_lin + i, x)
#endif
#elif RANK > 0
    bool constant = false;
    uint rest = i;
    for (int d = RANK - 1; d >= 0; --d) {
        int c;
        if (d > 0) {
            uint n = uint(u_shape[d]);
            c = int(rest % n);
            rest /= n;
        } else {
            c = int(rest);
        }
        y += c * u_y_stride[d];
#if !defined(NO_X)
#if defined(BOUNDARY)
        int k = u_start[d] + u_step[d] * c;
        int m = u_mode[d];
        int size = u_size[d];
        if (m == 1) {
            k %= size;  // start is in [0, size) and step 1: k >= 0
        } else if (m == 2) {
            k = k < 0 ? -k : (k >= size ? 2 * (size - 1) - k : k);
        } else if (m == 3) {
            k = clamp(k, 0, size - 1);
        } else if (m == 4 && (k < 0 || k >= size)) {
            constant = true;
        }
        x += k * u_x_stride[d];
#else
        x += c * u_x_stride[d];
#endif
#endif
    }
    if (constant) x = -1;
#endif
    y_elem = y;
#if defined(NO_X)
    return -1;
#else
    return x;
#endif
}

#if ELEM_LOG2 < 3
uint element_bits(uint i, out int y_elem) {
    int x = locate(i, y_elem);
    return x < 0 ? u_value : x_bits(x);
}

// Stores `bits` under `mask` of word w, leaving the word's other bits alone.
void store_masked(int w, uint bits, uint mask) {
    if (mask == 0xffffffffu) {
        y_data[w] = bits;
    } else {
        atomicAnd(y_data[w], ~mask);
        atomicOr(y_data[w], bits & mask);
    }
}
#endif

void main() {
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
#if ELEM_LOG2 == 3
    if (g >= u_count) return;
    int y_elem;
    int x = locate(g, y_elem);
    uvec2 v = uvec2(u_value, u_value_hi);
#if !defined(NO_X)
    if (x >= 0) v = uvec2(x_data[2 * x], x_data[2 * x + 1]);
#endif
    y_data[2 * y_elem] = v.x;
    y_data[2 * y_elem + 1] = v.y;
#elif defined(WORD_OUT)
    // Word g of the run, counted from the word holding element u_y_offset.
    int first = (u_y_offset >> (2 - ELEM_LOG2)) + int(g);
    int e0 = first << (2 - ELEM_LOG2);
    int lo = max(e0, u_y_offset);
    int hi = min(e0 + PER_WORD, u_y_offset + int(u_count));
    if (lo >= hi) return;
    uint bits = 0u, mask = 0u;
    for (int e = lo; e < hi; ++e) {
        int y_elem;
        uint b = element_bits(uint(e - u_y_offset), y_elem);
        bits |= b << shift_of(e);
        mask |= ELEM_MASK << shift_of(e);
    }
    store_masked(first, bits, mask);
#else
    if (g >= u_count) return;
    int y_elem;
    uint b = element_bits(g, y_elem);
    store_masked(y_elem >> (2 - ELEM_LOG2), b << shift_of(y_elem), ELEM_MASK << shift_of(y_elem));
#endif
}
