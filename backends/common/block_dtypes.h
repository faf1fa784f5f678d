// The GGUF block dtypes (plugin_api.h: q4_0 .. q6_K): where an element of a block tensor lies.
// Validation (validate.cpp, check_tensor) checks the layout rule and computes a block tensor's
// byte extent; a checked TensorArg of a block dtype keeps offset and strides in ELEMENTS (offset =
// byte_offset / block bytes * B), so every row start is a multiple of B and element e (row start
// + k) lies in block e / B at position e % B. The kernels address blocks through block_byte().
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

inline bool is_block_dtype(tgl_dtype dt) { return tgl_dtype_is_block(dt) != 0; }

// The blocks of B elements that hold a row of k >= 0 elements: ceil(k / B), for any k up to
// INT64_MAX (k + B - 1 would overflow there).
inline int64_t blocks_of_row(int64_t k, int64_t B) { return k / B + (k % B != 0 ? 1 : 0); }

// Byte (from the buffer's start) of the block that holds element offset e >= 0.
inline int64_t block_byte(tgl_dtype dt, int64_t e) {
    return e / int64_t(tgl_dtype_block_size(dt)) * int64_t(tgl_dtype_block_bytes(dt));
}

// Bytes [*lo, *hi) that a non-empty block view covers: rows start at element offset `offset` plus
// sum(i_d * strides[d]) over the leading dims (multiples of B), each row ceil(K / B) blocks, K =
// shape[rank - 1]. 128-bit, so that validation can judge any view before it is accepted.
inline void block_view_bytes(tgl_dtype dt, int rank, const int64_t* shape, const int64_t* strides, int64_t offset,
                             __int128* lo, __int128* hi) {
    const int64_t B = tgl_dtype_block_size(dt), BB = tgl_dtype_block_bytes(dt);
    __int128 span_lo = 0, span_hi = 0;
    for (int d = 0; d + 1 < rank; ++d) {
        const __int128 span = __int128(strides[d]) * (shape[d] - 1);
        if (span < 0) span_lo += span; else span_hi += span;
    }
    const int64_t K = shape[rank - 1];
    *lo = (__int128(offset) + span_lo) / B * BB;
    *hi = ((__int128(offset) + span_hi) / B + blocks_of_row(K, B)) * BB;
}

// The ops and operands that take a block dtype, for messages.
constexpr const char* kBlockDtypeUse =
    "block dtypes are taken only by dequantize (x), linear and grouped_linear (W) and index_select (x, axis 0)";

}  // namespace tgl
