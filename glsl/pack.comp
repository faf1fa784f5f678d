// The pack pass, one for every kernel that first stages operands as contiguous 32-bit words in a
// scratch block (host: add_pack, backends/gles/pack.cpp): matmul's side operands, the params of
// the Normalize family, gamma of the norm backwards, selective_scan's inputs, attention's K/V and
// backward operands.
//   dst[u_dst_offset + i] = src[u_src_offset + sum_d c_d(i) * u_pack_stride[d]] as f32 bits (an
//   integer dtype converted to its value), where c(i) is element i of the u_count elements of the
//   PACK_RANK-d shape u_pack_shape, row-major.
// PACK_INDEX (matmul's expert index): the value itself (i32, or i64: its whole 64-bit value
//   checked, the low word stored), checked against [0, u_limit) (a
//   device-side error: device_status.glsl), dispatched again with u_report = 1 to store the first
//   bad value and publish the verdict as the fail flag in dst word 0. u_checked = 1: a piece of an
//   op run in pieces, whose whole index was checked under u_check_seq already
//   (backends/gles/window_split.cpp): one dispatch stores the values and the fail flag, raising nothing.
// Defines: SRC_DTYPE; PACK_RANK (0..8); WG_SIZE; PACK_INDEX.
#include "dtype.glsl"
#include "grid.glsl"

#if defined(PACK_INDEX)
#define STATUS_BINDING 2
#include "device_status.glsl"
#endif
layout(local_size_x = WG_SIZE) in;
layout(std430, binding = 0) readonly buffer SrcBuffer { uint src_data[]; };
layout(std430, binding = 1) writeonly buffer DstBuffer { uint dst_data[]; };
uniform uint u_count;
uniform int u_src_offset;
uniform int u_dst_offset;
#if PACK_RANK > 0
uniform int u_pack_shape[PACK_RANK];
uniform int u_pack_stride[PACK_RANK];
#endif
#if defined(PACK_INDEX)
uniform int u_limit;    // valid values are [0, u_limit)
uniform uint u_op;      // op id, for the error
uniform uint u_report;  // 1 in the report dispatch
uniform uint u_checked; // 1 where the index was checked before (one dispatch)
#endif

void main() {
    uint i = tgl_group_index() * uint(WG_SIZE) + gl_LocalInvocationID.x;
#if defined(PACK_INDEX)
    // The report dispatch's first invocation publishes the verdict of the check dispatch (finished:
    // a barrier separates them) as the fail flag the main pass reads.
    if ((u_report == 1u || u_checked == 1u) && i == 0u) dst_data[0] = tgl_op_failed() ? u_check_seq : 0u;
#endif
    if (i >= u_count) return;
    int off = u_src_offset;
#if PACK_RANK > 0
    uint rest = i;
    for (int d = PACK_RANK - 1; d > 0; --d) {
        uint n = uint(u_pack_shape[d]);
        off += int(rest % n) * u_pack_stride[d];
        rest /= n;
    }
    off += int(rest) * u_pack_stride[0];
#endif
#if defined(PACK_INDEX)
    ivec2 v = TGL_LOAD_INDEX(src_data, off, SRC_DTYPE);
    if (u_checked == 1u || tgl_index_in_range(v, u_limit)) {
        if (u_report == 0u) dst_data[u_dst_offset + int(i)] = uint(v.x);
    } else if (u_report == 0u) {
        tgl_raise(19u /* TGL_ERROR_INDEX_OUT_OF_RANGE */, u_op, i, uint(u_limit), 0u);
    } else if (tgl_is_reported(i)) {
        tgl_report_index(v);
    }
#else
    uint bits = tgl_extract(src_data[tgl_word_of(off, SRC_DTYPE)], off, SRC_DTYPE);
    float v = tgl_dt_is_float(SRC_DTYPE) ? tgl_to_f32(bits, SRC_DTYPE) : float(tgl_to_int(bits, SRC_DTYPE));
    dst_data[u_dst_offset + int(i)] = floatBitsToUint(v);
#endif
}
