// Shape rules and index plan of the Index family (gather, index_select, scatter, scatter_add, one_hot, set_rows).
// Included by validate.h; plan_index() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>
#include <string>

namespace tgl {

struct OpCall;
struct OpInfo;

// Every index op is one loop over the elements of y (the "owner computes" form): y's coordinate c
// (row-major over `shape`) reads the index at c's place in the index view, then x / src there.
//   gather, index_select: y[c] = x[c with c[axis] = index[c]]; index_select's index view has
//     stride 0 on every dim but the axis (the 1-D index broadcast over the rows).
//   scatter, scatter_add: y[c] = x[c], then over k in [0, index_shape[axis]) in increasing order,
//     where index[c with c[axis] = k] == c[axis]: scatter takes src[c with c[axis] = k] (so the
//     last match wins), scatter_add adds it. Coordinates outside index_shape on a dim other than
//     the axis have no row: y = x there.
//   one_hot: y[c] = (index[c without its last dim] == c[last]) ? 1 : 0 (axis = rank - 1).
//   set_rows: the one op planned over src rather than y: y = x unless in place, then for src's
//     coordinate c (row-major over src_shape, so increasing c[axis] for each destination: the last
//     duplicate wins), y[c with c[axis] = index[c[axis]]] = src[c]. index_strides holds the 1-D
//     index's stride at the axis (0 elsewhere).
// Rank-0 operands are planned as rank 1 of size 1 (stride 0), so rank >= 1.
struct IndexPlan {
    int rank = 0;
    int axis = 0;
    int64_t shape[TGL_MAX_RANK] = {};  // y's shape
    int64_t y_strides[TGL_MAX_RANK] = {}, x_strides[TGL_MAX_RANK] = {};
    int64_t index_strides[TGL_MAX_RANK] = {}, src_strides[TGL_MAX_RANK] = {};
    int64_t y_offset = 0, x_offset = 0, index_offset = 0, src_offset = 0;
    int64_t index_shape[TGL_MAX_RANK] = {};  // scatter: the index tensor's shape (rows and their length)
    int64_t axis_size = 0;  // every index must lie in [0, axis_size)
    int index_input = 1;    // inputs[index_input] is the index tensor (one_hot: 0), checked in row-major order
    int64_t src_shape[TGL_MAX_RANK] = {};  // set_rows: src's shape (K rows along the axis)
    bool in_place = false;  // set_rows: y is x's identical view, so only the K rows are written
    uint32_t reduction = TGL_SCATTER_REPLACE;  // scatter: TGL_SCATTER_* (tgl_axis_params, ABI 1.3)
};

// Reads the op's params, checks shapes against them and fills call.index. Throws tgl::Error.
void plan_index(OpCall& call, const void* params);

// The message of TGL_ERROR_INDEX_OUT_OF_RANGE, the same on every plugin: the first bad index in
// row-major order of the index tensor (its flat `position`), its value, and the valid range.
std::string index_out_of_range_message(const OpInfo& info, int64_t position, int64_t value, int64_t axis_size,
                                       int axis);

}  // namespace tgl
