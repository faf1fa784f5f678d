// The Pool family (backends/common/pool_rules.h): max/avg pooling 1d-3d, global max/avg pooling,
// adaptive avg pooling, nearest/bilinear upsampling and the backward ops of max/avg/adaptive
// pooling. The 1 to 3 spatial dims come right-aligned into 3 (a 2d op has a leading dim of 1 with
// kernel 1, stride 1, no padding), so one set of loops serves every rank.
// Blocks: 0 the tensor read (x; backward: dy), 1 the tensor written (y; backward: dx), 2 the i32
// indices (max_pool: written; max_pool_backward: read). Uniform arrays u_sn/u_sc/u_sp/u_off are
// indexed by that block number.
// One invocation per written element (memory-bound): a window's max/sum for the forward ops, and
// for the backward ops a gather over the windows that contain the dx element, in row-major order
// of the outputs (deterministic, no float atomics). Global pooling: MODE_THREAD, one invocation
// per (n, c) plane (small planes), or MODE_GROUP, one workgroup per plane with a shared-memory tree;
// few large planes are split into chunks (one workgroup each) whose partials a second pass combines.
// WIN_SPLIT (windows of more loop passes than the plan's budget): each invocation walks its window
// (a box of taps / inputs / outputs) flat, only t in [u_t_begin, u_t_end) of the box's row-major
// order, one dispatch per range in order; the running state (max: value, order key, index, NaN
// flag; the others: the f32 sum) goes through block 3 (scratch, u_state_words per written element)
// from one dispatch to the next, and the dispatch with u_last = 1 stores y.
//
// Defines: OP_MAX | OP_AVG | OP_GLOBAL_MAX | OP_GLOBAL_AVG | OP_ADAPTIVE | OP_NEAREST | OP_BILINEAR |
// OP_MAX_BWD | OP_AVG_BWD | OP_ADAPTIVE_BWD; HAS_IDX (max_pool's indices output); CIP
// (count_include_pad); ALIGN (align_corners); MODE_THREAD | MODE_GROUP (global), PASS_PARTIAL |
// PASS_FINAL (global pooling of few large planes in two passes); WIN_SPLIT; DTYPE; WG_SIZE.
#include "common.glsl"
#include "grid.glsl"
#include "dtype.glsl"
#include "math.glsl"

layout(local_size_x = WG_SIZE) in;

#define Y_DTYPE DTYPE
layout(std430, binding = 0) readonly buffer RBuffer { uint r_data[]; };
layout(std430, binding = 1) buffer YBuffer { uint y_data[]; };
#if defined(HAS_IDX)
layout(std430, binding = 2) writeonly buffer IBuffer { int i_data[]; };
#elif defined(OP_MAX_BWD)
layout(std430, binding = 2) readonly buffer IBuffer { int i_data[]; };
#endif
#if defined(WIN_SPLIT)
layout(std430, binding = 3) buffer SBuffer { uint s_state[]; };
#endif
#include "store.glsl"

uniform uint u_count;  // written elements (one invocation each), or planes (global pooling)
uniform int u_C;
uniform int u_in[3];   // spatial sizes of x / dx
uniform int u_out[3];  // spatial sizes of y / dy
uniform int u_kernel[3];
uniform int u_stride[3];
uniform int u_pad[3];  // pad_begin
uniform int u_pad_end[3];
uniform int u_dil[3];
uniform int u_scale_bits[3];  // upsampling: the f32 source step per dim
uniform int u_off[3];
uniform int u_sn[3];
uniform int u_sc[3];
uniform int u_sp[9];  // block * 3 + dim
uniform uint u_chunks;  // global pooling in two passes: chunks per plane
uniform uint u_chunk;   // elements per chunk
uniform int u_t_begin;  // WIN_SPLIT: the range of each window this dispatch walks
uniform int u_t_end;
uniform uint u_last;    // WIN_SPLIT: 1 in the dispatch that stores y

// The body that follows runs for each v in the box [lo, lo + n) in row-major order (n may be <= 0
// along a dim: then not at all); close it with END_BOX. WIN_SPLIT: one flat loop over this
// dispatch's range of the box, else three nested loops.
#if defined(WIN_SPLIT)
#define FOR_BOX(v, lo, n)                                                                       \
    ivec3 box_n_ = (n);                                                                         \
    int box_end_ = all(greaterThan(box_n_, ivec3(0))) ? min(u_t_end, box_n_.x * box_n_.y * box_n_.z) : 0; \
    for (int t_ = u_t_begin; t_ < box_end_; ++t_) {                                             \
        ivec3 v = (lo) + ivec3(t_ / (box_n_.y * box_n_.z), (t_ / box_n_.z) % box_n_.y, t_ % box_n_.z);
#else
#define FOR_BOX(v, lo, n)                             \
    ivec3 box_n_ = (n);                               \
    for (int a0_ = 0; a0_ < box_n_.x; ++a0_)          \
        for (int a1_ = 0; a1_ < box_n_.y; ++a1_)      \
            for (int a2_ = 0; a2_ < box_n_.z; ++a2_) { \
                ivec3 v = (lo) + ivec3(a0_, a1_, a2_);
#endif
#define END_BOX }

#if defined(OP_MAX_BWD) || defined(OP_AVG_BWD) || defined(OP_ADAPTIVE_BWD)
#define BACKWARD
#endif

int plane_base(int b, int n, int c) { return u_off[b] + n * u_sn[b] + c * u_sc[b]; }
int sp_off(int b, ivec3 i) { return i.x * u_sp[b * 3] + i.y * u_sp[b * 3 + 1] + i.z * u_sp[b * 3 + 2]; }
uint r_bits(int off) { return tgl_extract(r_data[tgl_word_of(off, DTYPE)], off, DTYPE); }
float r_val(int off) { return tgl_to_f32(r_bits(off), DTYPE); }
ivec3 in3() { return ivec3(u_in[0], u_in[1], u_in[2]); }
ivec3 out3() { return ivec3(u_out[0], u_out[1], u_out[2]); }
int flat_in(ivec3 i) { return (i.x * u_in[1] + i.y) * u_in[2] + i.z; }

// avg_pool window of output o: clipped input range [lo, hi) and the divisor.
void avg_window(ivec3 o, out ivec3 lo, out ivec3 hi, out float div) {
    ivec3 start = o * ivec3(u_stride[0], u_stride[1], u_stride[2]) - ivec3(u_pad[0], u_pad[1], u_pad[2]);
    ivec3 end = min(start + ivec3(u_kernel[0], u_kernel[1], u_kernel[2]), in3() + ivec3(u_pad_end[0], u_pad_end[1], u_pad_end[2]));
    lo = max(start, ivec3(0));
    hi = min(end, in3());
#if defined(CIP)
    ivec3 n = end - start;
#else
    ivec3 n = max(hi - lo, ivec3(0));
#endif
    div = float(n.x) * float(n.y) * float(n.z);
}

// adaptive window [floor(o * in / out), ceil((o + 1) * in / out)) per dim (the host keeps
// in * out within 32 bits).
void adaptive_window(ivec3 o, out ivec3 lo, out ivec3 hi) {
    ivec3 in_ = in3(), out_ = out3();
    lo = (o * in_) / out_;
    hi = ((o + 1) * in_ + out_ - 1) / out_;
}

#if defined(OP_GLOBAL_MAX) || defined(OP_GLOBAL_AVG)
#if defined(MODE_GROUP)
shared float s_red[WG_SIZE];
#endif
#if defined(OP_GLOBAL_MAX)
float combine(float a, float b) { return tgl_maximum(a, b); }
#else
float combine(float a, float b) { return a + b; }
#endif

// PASS_PARTIAL (few large planes): workgroup g reduces chunk g % u_chunks of plane g / u_chunks
// (elements [part * u_chunk, +u_chunk)) into the f32 word g of block 1 (scratch); PASS_FINAL
// then reduces each plane's u_chunks partials (block 0) and stores y.
void main() {
#if defined(MODE_GROUP)
    uint g = tgl_group_index();
    uint start = gl_LocalInvocationID.x, step = uint(WG_SIZE);
#else
    uint g = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    uint start = 0u, step = 1u;
    if (g >= u_count) return;
#endif
    uint len = uint(u_in[0] * u_in[1] * u_in[2]);
#if defined(PASS_PARTIAL)
    uint plane = g / u_chunks, part = g % u_chunks;
    uint lo = part * u_chunk, hi = min(len, lo + u_chunk);
#elif defined(PASS_FINAL)
    uint plane = g, lo = 0u, hi = u_chunks;
#else
    uint plane = g, lo = 0u, hi = len;
#endif
    // No early return in MODE_GROUP: every invocation reaches the barriers.
    if (g >= u_count) hi = 0u;
    int n = int(plane) / u_C, c = int(plane) % u_C;
    int base = plane_base(0, n, c);
#if defined(OP_GLOBAL_MAX)
    float acc = tgl_neg_inf();
#else
    float acc = 0.0;
#endif
    for (uint k = lo + start; k < hi; k += step) {
#if defined(PASS_FINAL)
        acc = combine(acc, uintBitsToFloat(r_data[plane * u_chunks + k]));
#else
        int kk = int(k);
        ivec3 i = ivec3(kk / (u_in[1] * u_in[2]), (kk / u_in[2]) % u_in[1], kk % u_in[2]);
        acc = combine(acc, r_val(base + sp_off(0, i)));
#endif
    }
#if defined(MODE_GROUP)
    uint lid = gl_LocalInvocationID.x;
    s_red[lid] = acc;
    memoryBarrierShared();
    barrier();
    for (uint h = uint(WG_SIZE) / 2u; h > 0u; h >>= 1) {
        if (lid < h) s_red[lid] = combine(s_red[lid], s_red[lid + h]);
        memoryBarrierShared();
        barrier();
    }
    acc = s_red[0];
    if (lid != 0u || g >= u_count) return;
#endif
#if defined(PASS_PARTIAL)
    y_data[g] = floatBitsToUint(acc);
#else
#if defined(OP_GLOBAL_AVG)
    acc = acc / float(len);
#endif
    y_store_bits(plane_base(1, n, c), tgl_from_f32(acc, DTYPE));
#endif
}

#else

// The running sum of written element e: 0, or (WIN_SPLIT, not the first range) what the previous
// dispatch left; split_sum_end keeps it for the next dispatch (true: not the last, nothing to store).
float split_sum_begin(uint e) {
#if defined(WIN_SPLIT)
    if (u_t_begin > 0) return uintBitsToFloat(s_state[e]);
#endif
    return 0.0;
}
bool split_sum_end(uint e, float sum) {
#if defined(WIN_SPLIT)
    if (u_last == 0u) {
        s_state[e] = floatBitsToUint(sum);
        return true;
    }
#endif
    return false;
}

void main() {
    uint e = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
    if (e >= u_count) return;
#if defined(BACKWARD)
    ivec3 wsize = in3();  // one invocation per dx element
#else
    ivec3 wsize = out3();
#endif
    int rest = int(e);
    ivec3 w;
    w.z = rest % wsize.z; rest /= wsize.z;
    w.y = rest % wsize.y; rest /= wsize.y;
    w.x = rest % wsize.x; rest /= wsize.x;
    int c = rest % u_C, n = rest / u_C;
    int rbase = plane_base(0, n, c);
    int yoff = plane_base(1, n, c) + sp_off(1, w);
    ivec3 stride = ivec3(u_stride[0], u_stride[1], u_stride[2]);
    ivec3 pad = ivec3(u_pad[0], u_pad[1], u_pad[2]);
    ivec3 kernel = ivec3(u_kernel[0], u_kernel[1], u_kernel[2]);
    ivec3 dil = ivec3(u_dil[0], u_dil[1], u_dil[2]);
    float result;

#if defined(OP_MAX)
    ivec3 first = w * stride - pad;
    // Compared by order key, not as floats: GPUs that flush subnormals would take a subnormal
    // for 0 (the key keeps them ordered, -0 == +0 as in float comparison).
    float best = tgl_neg_inf();
    int best_key = tgl_order_key(floatBitsToUint(best), DT_F32);
    bool best_nan = false;
    int best_i = -1;
#if defined(WIN_SPLIT)
    uint st = e * 4u;
    if (u_t_begin > 0) {
        best = uintBitsToFloat(s_state[st]);
        best_key = int(s_state[st + 1u]);
        best_i = int(s_state[st + 2u]);
        best_nan = s_state[st + 3u] != 0u;
    }
#endif
    FOR_BOX(j, ivec3(0), kernel)
        ivec3 i = first + j * dil;
        if (any(lessThan(i, ivec3(0))) || any(greaterThanEqual(i, in3()))) continue;  // padding
        int at = flat_in(i);
        if (best_i < 0) best_i = at;
        uint bits = r_bits(rbase + sp_off(0, i));
        bool is_nan = tgl_is_nan_bits(bits, DTYPE);
        int key = tgl_order_key(bits, DTYPE);
        if (is_nan || (!best_nan && key > best_key)) {  // PyTorch's rule: a later NaN replaces
            best = r_val(rbase + sp_off(0, i));
            best_key = key;
            best_nan = is_nan;
            best_i = at;
        }
    END_BOX
#if defined(WIN_SPLIT)
    if (u_last == 0u) {
        s_state[st] = floatBitsToUint(best);
        s_state[st + 1u] = uint(best_key);
        s_state[st + 2u] = uint(best_i);
        s_state[st + 3u] = best_nan ? 1u : 0u;
        return;
    }
#endif
    result = best;
#if defined(HAS_IDX)
    i_data[plane_base(2, n, c) + sp_off(2, w)] = best_i;
#endif

#elif defined(OP_AVG) || defined(OP_ADAPTIVE)
    ivec3 lo, hi;
    float div;
#if defined(OP_AVG)
    avg_window(w, lo, hi, div);
#else
    adaptive_window(w, lo, hi);
    div = float(hi.x - lo.x) * float(hi.y - lo.y) * float(hi.z - lo.z);
#endif
    float sum = split_sum_begin(e);
    FOR_BOX(i, lo, hi - lo)
        sum += r_val(rbase + sp_off(0, i));
    END_BOX
    if (split_sum_end(e, sum)) return;
    result = div > 0.0 ? sum / div : tgl_nan();  // a window with no input element: 0 / 0

#elif defined(OP_NEAREST)
    ivec3 s;
    for (int d = 0; d < 3; ++d) s[d] = min(int(floor(float(w[d]) * intBitsToFloat(u_scale_bits[d]))), u_in[d] - 1);
    y_store_bits(yoff, r_bits(rbase + sp_off(0, s)));  // bits copied
    return;

#elif defined(OP_BILINEAR)
    ivec2 i0, i1;
    vec2 l1;
    for (int d = 1; d < 3; ++d) {
        float sc = intBitsToFloat(u_scale_bits[d]);
#if defined(ALIGN)
        float src = sc * float(w[d]);
#else
        float src = max(sc * (float(w[d]) + 0.5) - 0.5, 0.0);
#endif
        i0[d - 1] = min(int(src), u_in[d] - 1);
        i1[d - 1] = min(i0[d - 1] + 1, u_in[d] - 1);
        l1[d - 1] = src - float(i0[d - 1]);
    }
    float v00 = r_val(rbase + sp_off(0, ivec3(0, i0.x, i0.y))), v01 = r_val(rbase + sp_off(0, ivec3(0, i0.x, i1.y)));
    float v10 = r_val(rbase + sp_off(0, ivec3(0, i1.x, i0.y))), v11 = r_val(rbase + sp_off(0, ivec3(0, i1.x, i1.y)));
    result = (1.0 - l1.x) * ((1.0 - l1.y) * v00 + l1.y * v01) + l1.x * ((1.0 - l1.y) * v10 + l1.y * v11);

#elif defined(BACKWARD)
    // The outputs o whose window can contain w: per dim [o_lo, o_hi].
    ivec3 o_lo, o_hi;
#if defined(OP_ADAPTIVE_BWD)
    o_lo = (w * out3()) / in3();
    o_hi = min(((w + 1) * out3() + in3() - 1) / in3(), out3()) - 1;
#else
    ivec3 a = w + pad - (kernel - 1) * dil;  // o * stride >= a
    for (int d = 0; d < 3; ++d) o_lo[d] = a[d] > 0 ? (a[d] + stride[d] - 1) / stride[d] : 0;
    o_hi = min((w + pad) / stride, out3() - 1);
#endif
    int dbase = plane_base(0, n, c);
#if defined(OP_MAX_BWD)
    int ibase = plane_base(2, n, c);
    int target = flat_in(w);
#endif
    float sum = split_sum_begin(e);
    FOR_BOX(o, o_lo, o_hi - o_lo + 1)
#if defined(OP_MAX_BWD)
        ivec3 t = w + pad - o * stride;  // offset of w in o's window, a multiple of the dilation
        if (any(notEqual(t % dil, ivec3(0))) || i_data[ibase + sp_off(2, o)] != target) continue;
        sum += r_val(dbase + sp_off(0, o));
#elif defined(OP_AVG_BWD)
        ivec3 lo, hi;
        float div;
        avg_window(o, lo, hi, div);
        sum += r_val(dbase + sp_off(0, o)) / div;
#else
        ivec3 lo, hi;
        adaptive_window(o, lo, hi);
        if (any(lessThan(w, lo)) || any(greaterThanEqual(w, hi))) continue;
        sum += r_val(dbase + sp_off(0, o)) / (float(hi.x - lo.x) * float(hi.y - lo.y) * float(hi.z - lo.z));
#endif
    END_BOX
    if (split_sum_end(e, sum)) return;
    result = sum;
#else
#error "pool.comp: no OP_* define"
#endif
    y_store_bits(yoff, tgl_from_f32(result, DTYPE));
}

#endif
