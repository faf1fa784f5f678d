// The one merge of dims that every plan uses (elementwise validation, the layout and generate
// rules, matmul batches, and the GLES plugin's dispatch planning): an index space walked by several
// operands at once loses its dims of size 1, and a dim folds into the kept dim before it where
// every operand walks the two as one run: stride(outer) == stride(inner) * size(inner).
// The product is formed without signed overflow. Strides are only bounded for the dims a view
// steps through: a dim of size 1 may have any stride, and so may every dim of an empty view (a
// fuzzed view's huge strides overflowed each of the copies this replaces).
#pragma once

#include <cstdint>

namespace tgl {

// outer == inner * n, without overflow.
inline bool strides_nest(int64_t outer, int64_t inner, int64_t n) {
    int64_t p = 0;
    return !__builtin_mul_overflow(inner, n, &p) && p == outer;
}

// In place over shape[0, rank) and strides[k][0, rank) for k < n_strides; returns the new rank.
// pinned (optional): pinned[d] keeps dim d as it is: never dropped, never merged with a neighbour.
// from (optional, out): from[r] is the original dim that result dim r starts with, for callers
// that keep more per-dim data.
inline int merge_dims_in_place(int rank, int64_t* shape, int n_strides, int64_t* const* strides,
                               const bool* pinned = nullptr, int* from = nullptr) {
    int r = 0;
    bool last_pinned = false;
    for (int d = 0; d < rank; ++d) {
        const bool pin = pinned && pinned[d];
        if (!pin && shape[d] == 1) continue;
        int64_t merged_size = 0;
        bool merge = r > 0 && !pin && !last_pinned && !__builtin_mul_overflow(shape[r - 1], shape[d], &merged_size);
        for (int k = 0; merge && k < n_strides; ++k) merge = strides_nest(strides[k][r - 1], strides[k][d], shape[d]);
        if (merge) {
            shape[r - 1] = merged_size;
            for (int k = 0; k < n_strides; ++k) strides[k][r - 1] = strides[k][d];
            continue;
        }
        shape[r] = shape[d];
        for (int k = 0; k < n_strides; ++k) strides[k][r] = strides[k][d];
        if (from) from[r] = d;
        last_pinned = pin;
        ++r;
    }
    return r;
}

}  // namespace tgl
