// gather, index_select, scatter, scatter_add, one_hot: one invocation per element, "owner
// computes" (backends/common/index_rules.h has the plan). An op is a sequence of passes:
//   PASS_CHECK    one invocation per element of the index tensor (row-major over u_shape): a value
//                 outside [0, u_limit) raises TGL_ERROR_INDEX_OUT_OF_RANGE in the device status
//                 (device_status.glsl); dispatched again with u_report = 1, the invocation at the
//                 first bad position stores its value there; an index tensor larger than one
//                 window is checked window by window, each dispatch over consecutive positions
//                 from u_pos_base (the check passes of every window, then their report passes);
//   PASS_GATHER   gather and index_select: y[c] = x[c with c[axis] = index[c]];
//   PASS_ONE_HOT  y[c] = index[c] == c[last] ? u_one : 0 (u_one: the bits of 1 in Y_DTYPE);
//   PASS_SCATTER  scatter / scatter_add (ADD) / scatter's reductions (REDUCE_*) into scratch words, t[n] for y's row-major n: x's
//                 element, then over k = 0, 1, ... of c's index row, where index == c[axis], the
//                 src element replaces it (the last match wins) or is added (f32 accumulator for
//                 float dtypes, rounded once by the commit; i32 wraps). Cost: O(row length) per
//                 element of y, O(numel(y) * index.shape[axis]) in all, in exchange for a
//                 deterministic result without float atomics. A dispatch walks k in [u_k_begin,
//                 u_k_end) only: the first starts from x's element, later ones from the scratch
//                 word the previous one left (long rows take several, within the loop budget);
//   PASS_COMMIT   y[c] = t[n], converted to Y_DTYPE (scatter_add of f16/bf16).
//   set_rows      PASS_COPY (out of place only) y[c] = x[c] over y; PASS_ROWS_LAST one invocation
//                 per index position k writes scratch t[k] = index[k], or -1 where a later position
//                 holds the same row (the last duplicate wins; a dispatch compares positions
//                 [u_k_begin, u_k_end) only, the first starting from index[k], later ones from t[k]);
//                 PASS_SET_ROWS over src's elements (u_shape = src's shape): y[c with
//                 c[axis] = t[c[axis]]] = src[c] where t >= 0 (binding 1 is src, binding 2 t). Work:
//                 O(K * row + K^2), nothing over the rest of y.
// Passes that write y test tgl_op_failed() first, so a failed check leaves y untouched. Bindings
// stay within 4 SSBOs: the scatter pass writes scratch (no status binding), the commit guards y.
// Defines: one PASS_*; Y_DTYPE (x, src, y); I_DTYPE (the index: i32 or i64, two words per
// element); ADD | REDUCE_MUL | REDUCE_AMIN | REDUCE_AMAX; RANK (1..8); WG_SIZE; WINDOWED (a piece
// of an op run in pieces, backends/gles/window_split.cpp: PASS_GATHER's x, PASS_SCATTER's x and
// y, PASS_SET_ROWS's y are the window [u_lo, u_hi) of the indexed axis).
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"

// The accumulating scatters: scatter_add (ADD) and scatter's reductions (ABI 1.3: REDUCE_MUL,
// REDUCE_AMIN, REDUCE_AMAX) keep a running value per element; COMBINE(acc, v) is their step (i32:
// wrapping int arithmetic; floats in f32, min/max with the NaN and -0 rules of minimum/maximum).
#if defined(ADD) || defined(REDUCE_MUL) || defined(REDUCE_AMIN) || defined(REDUCE_AMAX)
#define ACCUM
#endif
#if defined(ADD)
#define COMBINE(a, v) ((a) + (v))
#elif defined(REDUCE_MUL)
#define COMBINE(a, v) ((a) * (v))
#elif defined(REDUCE_AMIN) && Y_DTYPE == DT_I32
#define COMBINE(a, v) min(a, v)
#elif defined(REDUCE_AMAX) && Y_DTYPE == DT_I32
#define COMBINE(a, v) max(a, v)
#elif defined(REDUCE_AMIN)
#define COMBINE(a, v) tgl_minimum(a, v)
#elif defined(REDUCE_AMAX)
#define COMBINE(a, v) tgl_maximum(a, v)
#endif
#define STATUS_BINDING 3
#if !defined(PASS_SCATTER) && !defined(PASS_ROWS_LAST)
#include "device_status.glsl"
#endif

layout(local_size_x = WG_SIZE) in;

layout(std430, binding = 0) buffer YBuffer { uint y_data[]; };  // PASS_SCATTER: the scratch words
layout(std430, binding = 1) readonly buffer XBuffer { uint x_data[]; };  // PASS_COMMIT: the scratch
layout(std430, binding = 2) readonly buffer IBuffer { int i_data[]; };
#if defined(PASS_SCATTER)
layout(std430, binding = 3) readonly buffer SBuffer { uint s_data[]; };  // src
#endif

uniform uint u_numel;  // elements of the iteration space
uniform int u_shape[RANK];
uniform int u_y_str[RANK];
uniform int u_x_str[RANK];
uniform int u_i_str[RANK];
uniform int u_s_str[RANK];
uniform int u_index_shape[RANK];
uniform int u_y_offset;
uniform int u_x_offset;
uniform int u_i_offset;
uniform int u_s_offset;
uniform int u_axis;
uniform int u_k_begin;  // PASS_SCATTER, PASS_ROWS_LAST: the range of the index row this dispatch walks
uniform int u_k_end;
uniform int u_limit;   // PASS_CHECK: valid indices are [0, u_limit)
uniform uint u_op;     // PASS_CHECK: op id, for the error
uniform uint u_report; // PASS_CHECK: 1 in the report dispatch
uniform uint u_pos_base;  // PASS_CHECK: the whole index tensor's position of this dispatch's element 0
uniform uint u_one;    // PASS_ONE_HOT
uniform int u_lo;      // WINDOWED: x (scatter: x and y) holds indices [u_lo, u_hi) of the axis
uniform int u_hi;

uint x_bits(int i) { return tgl_extract(x_data[tgl_word_of(i, Y_DTYPE)], i, Y_DTYPE); }

// Index element e as an int: an i64's low word. Every pass but the check runs after the check
// proved each whole value in [0, u_limit) (the scatter pass may read a bad one, but it writes
// only scratch, which the guarded commit then leaves unused).
int index_at(int e) { return TGL_LOAD_INDEX(i_data, e, I_DTYPE).x; }

#include "store.glsl"

// Coordinates of the row-major element n of u_shape.
void unravel(uint n, out int c[RANK]) {
    for (int d = RANK - 1; d > 0; --d) {
        uint size = uint(u_shape[d]);
        c[d] = int(n % size);
        n /= size;
    }
    c[0] = int(n);
}

void main() {
    uint n = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (n >= u_numel) return;
    int c[RANK];
    unravel(n, c);
#if defined(PASS_CHECK)
    int io = u_i_offset;
    for (int d = 0; d < RANK; ++d) io += c[d] * u_i_str[d];
    ivec2 v = TGL_LOAD_INDEX(i_data, io, I_DTYPE);
    if (tgl_index_in_range(v, u_limit)) return;
    uint pos = u_pos_base + n;
    if (u_report == 0u) tgl_raise(19u /* TGL_ERROR_INDEX_OUT_OF_RANGE */, u_op, pos, uint(u_limit), uint(u_axis));
    else if (tgl_is_reported(pos)) tgl_report_index(v);
#elif defined(PASS_COMMIT)
    if (tgl_op_failed()) return;
    int yo = u_y_offset;
    for (int d = 0; d < RANK; ++d) yo += c[d] * u_y_str[d];
    uint t = x_data[n];
#if defined(ACCUM) && Y_DTYPE != DT_I32
    t = tgl_from_f32_bits(t, Y_DTYPE);
#endif
    y_store_bits(yo, t);
#elif defined(PASS_COPY)
    if (tgl_op_failed()) return;
    int yo = u_y_offset, xo = u_x_offset;
    for (int d = 0; d < RANK; ++d) {
        yo += c[d] * u_y_str[d];
        xo += c[d] * u_x_str[d];
    }
    y_store_bits(yo, x_bits(xo));
#elif defined(PASS_ROWS_LAST)
    // u_shape = (K): c[0] is the index position k; the index is 1-D with stride u_i_str[0]
    int k = c[0];
    // (the indices were checked: an i64 index's high word is 0, index_at reads the low one)
    int v = u_k_begin == 0 ? index_at(u_i_offset + k * u_i_str[0]) : int(y_data[k]);
    for (int j = max(k + 1, u_k_begin); v >= 0 && j < u_k_end; ++j)
        if (index_at(u_i_offset + j * u_i_str[0]) == v) v = -1;
    y_data[k] = uint(v);
#elif defined(PASS_SET_ROWS)
    if (tgl_op_failed()) return;
    int v = i_data[c[u_axis]];  // the scratch t: the row, or -1 (a later duplicate writes it)
#if defined(WINDOWED)
    if (v < u_lo || v >= u_hi) return;  // y is the window [u_lo, u_hi) of the axis
    v -= u_lo;
#endif
    if (v < 0) return;
    int yo = u_y_offset + v * u_y_str[u_axis], so = u_s_offset;
    for (int d = 0; d < RANK; ++d) {
        so += c[d] * u_s_str[d];
        if (d != u_axis) yo += c[d] * u_y_str[d];
    }
    y_store_bits(yo, x_bits(so));
#elif defined(PASS_ONE_HOT)
    if (tgl_op_failed()) return;
    int yo = u_y_offset, io = u_i_offset;
    for (int d = 0; d < RANK; ++d) {
        yo += c[d] * u_y_str[d];
        io += c[d] * u_i_str[d];
    }
    y_store_bits(yo, index_at(io) == c[RANK - 1] ? u_one : 0u);
#else
    // Offsets of c in every operand; x and src without the axis term.
    int yo = u_y_offset, xo = u_x_offset, io = u_i_offset, so = u_s_offset;
    bool in_rows = true;
    for (int d = 0; d < RANK; ++d) {
        yo += c[d] * u_y_str[d];
        if (d == u_axis) continue;
        xo += c[d] * u_x_str[d];
        io += c[d] * u_i_str[d];
        so += c[d] * u_s_str[d];
        in_rows = in_rows && c[d] < u_index_shape[d];
    }
    int j = c[u_axis];
#if defined(PASS_GATHER)
    if (tgl_op_failed()) return;
    int v = index_at(io + j * u_i_str[u_axis]);
#if defined(WINDOWED)
    // A piece of an op run in pieces: x holds indices [u_lo, u_hi) of the axis; another piece
    // writes the elements whose index lies elsewhere.
    if (v < u_lo || v >= u_hi) return;
    v -= u_lo;
#endif
    y_store_bits(yo, x_bits(xo + v * u_x_str[u_axis]));
#elif defined(PASS_SCATTER)
#if defined(WINDOWED)
    j += u_lo;  // the index value that lands on this element (x and y are a window of the axis)
#endif
    bool first = u_k_begin == 0;
    uint bits = first ? x_bits(xo + c[u_axis] * u_x_str[u_axis]) : y_data[n];
    int len = in_rows ? min(u_index_shape[u_axis], u_k_end) : 0;
    int istep = u_i_str[u_axis], sstep = u_s_str[u_axis];
#if defined(ACCUM) && Y_DTYPE == DT_I32
    int acc = int(bits);
    for (int k = u_k_begin; k < len; ++k)
        if (index_at(io + k * istep) == j) acc = COMBINE(acc, int(s_data[so + k * sstep]));  // wraps
    bits = uint(acc);
#elif defined(ACCUM)
    // Without a match x's bits pass unchanged (no arithmetic that could flush or quiet them).
    if (first) bits = tgl_to_f32_bits(bits, Y_DTYPE);
    float acc = uintBitsToFloat(bits);
    bool hit = false;
    for (int k = u_k_begin; k < len; ++k) {
        if (index_at(io + k * istep) != j) continue;
        int s = so + k * sstep;
        acc = COMBINE(acc, tgl_to_f32(tgl_extract(s_data[tgl_word_of(s, Y_DTYPE)], s, Y_DTYPE), Y_DTYPE));
        hit = true;
    }
    if (hit) bits = floatBitsToUint(acc);
#else
    int last = -1;
    for (int k = u_k_begin; k < len; ++k)
        if (index_at(io + k * istep) == j) last = k;
    if (last >= 0) {
        int s = so + last * sstep;
        bits = tgl_extract(s_data[tgl_word_of(s, Y_DTYPE)], s, Y_DTYPE);
    }
#endif
    y_data[n] = bits;
#else
#error "index.comp: no PASS_* define"
#endif
#endif
}
