// CPU reference kernels of the Index family (plan: backends/common/index_rules.h): every index is
// checked first (the first bad one in row-major order is the error, and nothing is written), then
// one plain loop over y's elements, "owner computes", exactly as the plan describes. Elements are
// moved bit for bit (but index_select's rows of a GGUF block table, decoded); scatter_add sums in double from x's value in increasing index position and
// rounds once per output element.
#include "kernels.h"

#include "block_decode.h"
#include "block_dtypes.h"  // backends/common

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "scalar_ops.h"
#include "status.h"

#include <algorithm>
#include <cstring>

namespace tgl {
namespace cpu {

namespace {

// An index element (i32 or i64), exact.
int64_t load_index(const TensorArg& t, int64_t off) { return load_as_int64(cpu_buffer(t.buffer).bytes(), t.dtype, off); }

// Walks the index tensor in row-major order; fails on the first value outside [0, axis_size).
void check_indices(const OpCall& call) {
    const IndexPlan& p = call.index();
    const TensorArg& t = call.inputs[size_t(p.index_input)];
    int64_t coord[TGL_MAX_RANK] = {};
    for (int64_t pos = 0; pos < t.numel; ++pos) {
        int64_t off = t.offset;
        for (int d = 0; d < t.rank; ++d) off += coord[d] * t.strides[d];
        const int64_t v = load_index(t, off);  // i64: the whole value, never its low word
        if (v < 0 || v >= p.axis_size)
            fail(TGL_ERROR_INDEX_OUT_OF_RANGE, "%s",
                 index_out_of_range_message(*call.info, pos, v, p.axis_size, p.axis).c_str());
        for (int d = t.rank - 1; d >= 0 && ++coord[d] == t.shape[d]; --d) coord[d] = 0;
    }
}

// set_rows (indices checked): y = x unless in place, then src's elements in row-major order, so
// that of duplicate indices the last writes last.
void run_set_rows(const OpCall& call) {
    const IndexPlan& p = call.index();
    const TensorArg& it = call.inputs[1];
    const uint32_t es = tgl_dtype_size(call.outputs[0].dtype);
    uint8_t* y = cpu_buffer(call.outputs[0].buffer).bytes();
    const uint8_t* x = cpu_buffer(call.inputs[0].buffer).bytes();
    const uint8_t* src = cpu_buffer(call.inputs[2].buffer).bytes();
    const int last = p.rank - 1;
    int64_t c[TGL_MAX_RANK] = {};
    if (!p.in_place)
        for (int64_t n = 0; n < call.outputs[0].numel; ++n) {
            int64_t yo = p.y_offset, xo = p.x_offset;
            for (int d = 0; d < p.rank; ++d) yo += c[d] * p.y_strides[d], xo += c[d] * p.x_strides[d];
            std::memcpy(y + es * yo, x + es * xo, es);
            for (int d = last; d >= 0 && ++c[d] == p.shape[d]; --d) c[d] = 0;
        }
    int64_t numel = 1;
    for (int d = 0; d < p.rank; ++d) numel *= p.src_shape[d];
    std::fill(c, c + TGL_MAX_RANK, 0);
    for (int64_t n = 0; n < numel; ++n) {
        const int64_t row = load_index(it, p.index_offset + c[p.axis] * p.index_strides[p.axis]);
        int64_t yo = p.y_offset + row * p.y_strides[p.axis], so = p.src_offset;
        for (int d = 0; d < p.rank; ++d) {
            so += c[d] * p.src_strides[d];
            if (d != p.axis) yo += c[d] * p.y_strides[d];
        }
        std::memcpy(y + es * yo, src + es * so, es);
        for (int d = last; d >= 0 && ++c[d] == p.src_shape[d]; --d) c[d] = 0;
    }
}

// scatter with a reduction (ABI 1.3): y = x's element combined with the src elements whose index
// is c[axis], in increasing index position; floats in double, rounded once; i32 in wrapping
// 32-bit arithmetic.
void scatter_reduce(const IndexPlan& p, tgl_dtype dt, uint8_t* y, const uint8_t* x, int64_t x_at, const TensorArg& it,
                    const uint8_t* src, int64_t so, bool in_rows, const int64_t* c) {
    int64_t io = p.index_offset;  // the index row of c
    for (int d = 0; d < p.rank; ++d)
        if (d != p.axis) io += c[d] * p.index_strides[d];
    if (dt == TGL_DTYPE_I32) {
        int32_t acc;
        std::memcpy(&acc, x + 4 * x_at, 4);
        for (int64_t k = 0; in_rows && k < p.index_shape[p.axis]; ++k) {
            if (load_index(it, io + k * p.index_strides[p.axis]) != c[p.axis]) continue;
            int32_t v;
            std::memcpy(&v, src + 4 * (so + k * p.src_strides[p.axis]), 4);
            if (p.reduction == TGL_SCATTER_MUL) acc = int32_t(uint32_t(acc) * uint32_t(v));
            else if (p.reduction == TGL_SCATTER_AMIN) acc = std::min(acc, v);
            else acc = std::max(acc, v);
        }
        std::memcpy(y, &acc, 4);
        return;
    }
    const uint32_t es = tgl_dtype_size(dt);
    double acc = load_as_double(x, dt, x_at);
    bool hit = false;
    for (int64_t k = 0; in_rows && k < p.index_shape[p.axis]; ++k) {
        if (load_index(it, io + k * p.index_strides[p.axis]) != c[p.axis]) continue;
        const double v = load_as_double(src, dt, so + k * p.src_strides[p.axis]);
        acc = p.reduction == TGL_SCATTER_MUL ? acc * v : p.reduction == TGL_SCATTER_AMIN ? minimum(acc, v) : maximum(acc, v);
        hit = true;
    }
    if (hit) store_from_double(y, dt, 0, acc, false);
    else std::memcpy(y, x + es * x_at, es);  // untouched: x's bits (NaN payloads too)
}

}  // namespace

void run_index(const OpCall& call, unsigned) {
    check_indices(call);
    if (call.info->op == TGL_OP_SET_ROWS) return run_set_rows(call);
    const IndexPlan& p = call.index();
    const TensorArg& yt = call.outputs[0];
    const TensorArg& it = call.inputs[size_t(p.index_input)];
    const bool has_x = call.info->op != TGL_OP_ONE_HOT;
    const bool scatter = call.info->op == TGL_OP_SCATTER || call.info->op == TGL_OP_SCATTER_ADD;
    const tgl_dtype dt = yt.dtype;
    const uint32_t es = tgl_dtype_size(dt);
    uint8_t* y = cpu_buffer(yt.buffer).bytes();
    const uint8_t* x = has_x ? cpu_buffer(call.inputs[0].buffer).bytes() : nullptr;
    const uint8_t* src = scatter ? cpu_buffer(call.inputs[2].buffer).bytes() : nullptr;
    const int last = p.rank - 1;
    int64_t c[TGL_MAX_RANK] = {};
    for (int64_t n = 0; n < yt.numel; ++n) {
        int64_t yo = p.y_offset, xo = p.x_offset, io = p.index_offset, so = p.src_offset;
        bool in_rows = true;  // scatter: c lies within the index's rows
        for (int d = 0; d < p.rank; ++d) {
            yo += c[d] * p.y_strides[d];
            io += c[d] * p.index_strides[d];
            if (d == p.axis) continue;
            xo += c[d] * p.x_strides[d];
            so += c[d] * p.src_strides[d];
            in_rows = in_rows && c[d] < p.index_shape[d];
        }
        switch (call.info->op) {
        case TGL_OP_INDEX_SELECT:
            if (is_block_dtype(call.inputs[0].dtype)) {  // a GGUF embedding row, decoded (block_decode.h)
                const tgl_dtype bt = call.inputs[0].dtype;
                const int64_t e = xo + load_index(it, io) * p.x_strides[p.axis];
                store_from_double(y, dt, yo, decode_block_element(bt, x + block_byte(bt, e), int(e % tgl_dtype_block_size(bt))), false);
                break;
            }
            [[fallthrough]];
        case TGL_OP_GATHER:
            std::memcpy(y + es * yo, x + es * (xo + load_index(it, io) * p.x_strides[p.axis]), es);
            break;
        case TGL_OP_ONE_HOT: store_from_double(y, dt, yo, load_index(it, io) == c[last] ? 1.0 : 0.0, true); break;
        case TGL_OP_SCATTER: {
            if (p.reduction != TGL_SCATTER_REPLACE) {
                scatter_reduce(p, dt, y + es * yo, x, xo + c[p.axis] * p.x_strides[p.axis], it, src, so, in_rows, c);
                break;
            }
            const uint8_t* from = x + es * (xo + c[p.axis] * p.x_strides[p.axis]);
            io = p.index_offset;  // the index row of c: index[c with c[axis] = k]
            for (int d = 0; d < p.rank; ++d)
                if (d != p.axis) io += c[d] * p.index_strides[d];
            for (int64_t k = 0; in_rows && k < p.index_shape[p.axis]; ++k)
                if (load_index(it, io + k * p.index_strides[p.axis]) == c[p.axis])
                    from = src + es * (so + k * p.src_strides[p.axis]);  // the last match wins
            std::memcpy(y + es * yo, from, es);
            break;
        }
        default: {  // scatter_add
            double acc = load_as_double(x, dt, xo + c[p.axis] * p.x_strides[p.axis]);
            io = p.index_offset;
            for (int d = 0; d < p.rank; ++d)
                if (d != p.axis) io += c[d] * p.index_strides[d];
            for (int64_t k = 0; in_rows && k < p.index_shape[p.axis]; ++k)
                if (load_index(it, io + k * p.index_strides[p.axis]) == c[p.axis])
                    acc += load_as_double(src, dt, so + k * p.src_strides[p.axis]);
            store_from_double(y, dt, yo, acc, dt == TGL_DTYPE_I32);
            break;
        }
        }
        for (int d = last; d >= 0 && ++c[d] == p.shape[d]; --d) c[d] = 0;
    }
}

void register_index_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Index, run_index}); }

}  // namespace cpu
}  // namespace tgl
