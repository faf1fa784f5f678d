#include "index_rules.h"
#include "op_families.h"

#include "validate_util.h"

namespace tgl {

namespace {

// A view promoted to rank >= 1 (a scalar is one element of stride 0).
struct Dims {
    int rank;
    int64_t shape[TGL_MAX_RANK];
    int64_t strides[TGL_MAX_RANK];
};

Dims dims_of(const TensorArg& t) {
    Dims d{t.rank, {}, {}};
    for (int i = 0; i < t.rank; ++i) {
        d.shape[i] = t.shape[i];
        d.strides[i] = t.strides[i];
    }
    if (t.rank == 0) {
        d.rank = 1;
        d.shape[0] = 1;
        d.strides[0] = 0;
    }
    return d;
}

std::string shape_of(const TensorArg& t) { return shape_string(t.rank, t.shape); }

// index.shape[d] <= other.shape[d] on every dim (but `skip`), PyTorch's rule for gather and scatter.
void require_within(const OpInfo& info, const TensorArg& index, const TensorArg& other, const char* other_name,
                    int skip) {
    for (int d = 0; d < index.rank; ++d)
        if (d != skip && index.shape[d] > other.shape[d])
            fail(TGL_ERROR_SHAPE_MISMATCH,
                 "op '%s': inputs[%d] (index) has shape %s, larger than %s of shape %s in dim %d (%lld > %lld); "
                 "index.shape[d] <= %s.shape[d] is required%s",
                 info.name, info.op == TGL_OP_ONE_HOT ? 0 : 1, shape_of(index).c_str(), other_name,
                 shape_of(other).c_str(), d, (long long)index.shape[d], (long long)other.shape[d], other_name,
                 skip >= 0 ? " for every dim but the axis" : "");
}

void require_rank(const OpInfo& info, const TensorArg& t, const char* label, const TensorArg& x) {
    if (t.rank != x.rank)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s has rank %d (shape %s) but x has rank %d (shape %s); they must be equal",
             info.name, label, t.rank, shape_of(t).c_str(), x.rank, shape_of(x).c_str());
}

// index_select's y and set_rows' src (`t`): x's shape with the axis replaced by the length of the
// 1-D index.
void require_rows_of_index(const OpInfo& info, const TensorArg& index, const TensorArg& t, const std::string& label,
                           const TensorArg& x, int axis) {
    if (index.rank != 1)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[1] (index) must be 1-D (one row number per position), got shape %s",
             info.name, shape_of(index).c_str());
    const Dims xd = dims_of(x);
    int64_t expect[TGL_MAX_RANK];
    std::copy(xd.shape, xd.shape + xd.rank, expect);
    expect[axis] = index.shape[0];
    require_shape(info, t, label, x.rank, expect,
                  format("x of shape %s with axis %d replaced by the index's length", shape_of(x).c_str(), axis).c_str());
}

}  // namespace

std::string index_out_of_range_message(const OpInfo& info, int64_t position, int64_t value, int64_t axis_size,
                                       int axis) {
    if (info.op == TGL_OP_GROUPED_LINEAR) return grouped_index_message(info, position, value, axis_size);
    if (info.op == TGL_OP_ROPE || info.op == TGL_OP_ROPE_BACKWARD) return rope_position_message(info, position, value, axis_size);
    const char* where = info.op == TGL_OP_ONE_HOT ? "num_classes (y's last dim)" : "the size of the axis";
    return format("op '%s': %s holds %lld at position %lld (row-major), outside [0, %lld) (%s, axis %d); indices "
                  "do not wrap; nothing was written",
                  info.name, operand_label(info, false, info.op == TGL_OP_ONE_HOT ? 0u : 1u).c_str(), (long long)value,
                  (long long)position, (long long)axis_size, where, axis);
}

void plan_index(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    IndexPlan& p = call.plan.emplace<IndexPlan>();
    const TensorArg& y = call.outputs[0];

    if (info.op == TGL_OP_ONE_HOT) {
        require_reserved_zero(info, read_params(info, params, tgl_unary_params{sizeof(tgl_unary_params), 0}).reserved);
        const TensorArg& index = call.inputs[0];
        int64_t expect[TGL_MAX_RANK + 1];
        std::copy(index.shape, index.shape + index.rank, expect);
        int64_t classes = y.rank == index.rank + 1 ? y.shape[y.rank - 1] : -1;
        expect[index.rank] = classes;
        if (index.rank >= TGL_MAX_RANK || classes < 0 || !std::equal(expect, expect + index.rank, y.shape))
            fail(TGL_ERROR_SHAPE_MISMATCH,
                 "op 'one_hot': outputs[0] (y) has shape %s but index of shape %s needs index.shape + (num_classes,), "
                 "num_classes being y's last dim (rank %d)",
                 shape_of(y).c_str(), shape_of(index).c_str(), index.rank + 1);
        p.index_input = 0;
        p.rank = y.rank;
        p.axis = y.rank - 1;
        p.axis_size = classes;
        for (int d = 0; d < y.rank; ++d) {
            p.shape[d] = y.shape[d];
            p.y_strides[d] = y.strides[d];
            p.index_strides[d] = d < index.rank ? index.strides[d] : 0;
        }
        p.y_offset = y.offset;
        p.index_offset = index.offset;
    } else {
        const tgl_axis_params prm = read_params(info, params, tgl_axis_params{sizeof(tgl_axis_params), 0, 0});
        if (info.op != TGL_OP_SCATTER) require_no_reduction(info, prm);
        if (prm.reduction > TGL_SCATTER_AMAX)
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "params->reduction of op 'scatter' must be TGL_SCATTER_REPLACE (0), _MUL (1), _AMIN (2) or _AMAX (3), got %u",
                 prm.reduction);
        if (prm.reduction != TGL_SCATTER_REPLACE && call.outputs[0].dtype != TGL_DTYPE_F32 &&
            call.outputs[0].dtype != TGL_DTYPE_F16 && call.outputs[0].dtype != TGL_DTYPE_I32)
            fail(TGL_ERROR_DTYPE_MISMATCH, "op 'scatter' with params->reduction %u takes x, src and y of f32, f16 or i32, got %s",
                 prm.reduction, dtype_name(call.outputs[0].dtype));
        p.reduction = prm.reduction;
        const TensorArg& x = call.inputs[0];
        const TensorArg& index = call.inputs[1];
        const int axis = x.rank == 0 ? one_axis(call, prm.axis) + 1 : normalize_axis(prm.axis, x.rank, "params->axis");
        const Dims xd = dims_of(x), yd = dims_of(y);
        p.rank = xd.rank;
        p.axis = axis;
        p.x_offset = x.offset;
        p.y_offset = y.offset;
        p.index_offset = index.offset;
        p.axis_size = xd.shape[axis];
        std::copy(xd.strides, xd.strides + xd.rank, p.x_strides);
        std::copy(yd.strides, yd.strides + yd.rank, p.y_strides);
        std::copy(yd.shape, yd.shape + yd.rank, p.shape);
        if (info.op == TGL_OP_INDEX_SELECT) {
            require_rows_of_index(info, index, y, "outputs[0] (y)", x, axis);
            p.index_strides[axis] = index.strides[0];  // 0 on the other dims: one index per position
        } else if (info.op == TGL_OP_GATHER) {
            require_rank(info, index, "inputs[1] (index)", x);
            require_within(info, index, x, "x", x.rank ? axis : -1);
            require_shape(info, y, "outputs[0] (y)", index.rank, index.shape, "the index's shape");
            const Dims id = dims_of(index);
            std::copy(id.strides, id.strides + id.rank, p.index_strides);
        } else if (info.op == TGL_OP_SET_ROWS) {
            const TensorArg& src = call.inputs[2];
            if (x.rank == 0)
                fail(TGL_ERROR_SHAPE_MISMATCH, "op 'set_rows': inputs[0] (x) must have rank >= 1 (rows along an axis), got a scalar");
            require_rows_of_index(info, index, src, "inputs[2] (src)", x, axis);
            require_shape(info, y, "outputs[0] (y)", x.rank, x.shape, "x's shape");
            const Dims sd = dims_of(src);
            p.index_strides[axis] = index.strides[0];
            p.index_shape[axis] = index.shape[0];
            std::copy(sd.shape, sd.shape + sd.rank, p.src_shape);
            std::copy(sd.strides, sd.strides + sd.rank, p.src_strides);
            p.src_offset = src.offset;
            p.in_place = x.buffer == y.buffer && x.offset == y.offset && std::equal(xd.strides, xd.strides + xd.rank, yd.strides);
        } else {  // scatter, scatter_add
            const TensorArg& src = call.inputs[2];
            require_rank(info, index, "inputs[1] (index)", x);
            require_rank(info, src, "inputs[2] (src)", x);
            require_shape(info, y, "outputs[0] (y)", x.rank, x.shape, "x's shape");
            require_within(info, index, x, "x", x.rank ? axis : -1);
            require_within(info, index, src, "src", -1);
            const Dims id = dims_of(index), sd = dims_of(src);
            std::copy(id.strides, id.strides + id.rank, p.index_strides);
            std::copy(id.shape, id.shape + id.rank, p.index_shape);
            std::copy(sd.strides, sd.strides + sd.rank, p.src_strides);
            p.src_offset = src.offset;
        }
    }
    // Every index is out of range when the axis is empty: known without reading one.
    const TensorArg& index = call.inputs[size_t(p.index_input)];
    if (index.numel > 0 && p.axis_size == 0)
        fail(TGL_ERROR_INDEX_OUT_OF_RANGE,
             "op '%s': %s has %lld elements but the axis they index (axis %d) has size 0, so none is in range; "
             "nothing was written",
             info.name, operand_label(info, false, uint32_t(p.index_input)).c_str(), (long long)index.numel, p.axis);
}

void register_index_rules(std::vector<FamilyRules>& families) { families.push_back({OpFamily::Index, plan_index}); }

}  // namespace tgl
