#include "matmul_rules.h"
#include "block_dtypes.h"
#include "op_families.h"

#include "dim_merge.h"
#include "validate_util.h"

#include <algorithm>

namespace tgl {

namespace {

using Out = MatmulPlan::Out;

std::string shape_of(const TensorArg& t) { return shape_string(t.rank, t.shape); }

// Leading (batch) dims folded into M where every operand walks them as one more row: the last
// batch dim has B stride 0 and A/output strides equal to M rows. Fewer, larger products (a batch
// of decode rows becomes one M) for the tiles of the GPU kernel.
void merge_batch_into_m(MatmulPlan& p) {
    while (p.batch_rank > 0) {
        const int d = p.batch_rank - 1;
        const int64_t n = p.batch_shape[d];
        bool ok = n == 1 || p.M == 1 || p.b_batch_strides[d] == 0;
        if (n != 1 && p.M > 1) {
            ok = ok && strides_nest(p.a_batch_strides[d], p.a_m_stride, p.M);
            for (int o = 0; o < p.n_out; ++o) ok = ok && strides_nest(p.out[o].batch_strides[d], p.out[o].m_stride, p.M);
        }
        if (!ok || (n != 1 && p.b_batch_strides[d] != 0)) return;
        if (n != 1 && p.M == 1) {  // the single row's strides are free: take the batch dim's
            p.a_m_stride = p.a_batch_strides[d];
            for (int o = 0; o < p.n_out; ++o) p.out[o].m_stride = p.out[o].batch_strides[d];
        }
        p.M *= n;
        --p.batch_rank;
    }
}

void finish_batch(MatmulPlan& p) {
    merge_batch_into_m(p);
    p.batch_count = 1;
    for (int d = 0; d < p.batch_rank; ++d) p.batch_count *= p.batch_shape[d];
}

void plan_plain_matmul(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    tgl_matmul_params defaults{sizeof(tgl_matmul_params), 0, 0, 1.0f, 0.0f, 0};
    tgl_matmul_params prm = read_params(info, params, defaults);
    require_reserved_zero(info, prm.reserved);
    if (prm.transpose_a > 1 || prm.transpose_b > 1)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->transpose_a/transpose_b must be 0 or 1, got %u/%u",
             prm.transpose_a, prm.transpose_b);
    const TensorArg& A = call.inputs[0];
    const TensorArg& B = call.inputs[1];
    const TensorArg& C = call.outputs[0];
    if (A.rank < 2 || B.rank < 2 || C.rank < 2)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op 'matmul' needs rank >= 2 for A, B and C; got A %s, B %s, C %s",
             shape_of(A).c_str(), shape_of(B).c_str(), shape_of(C).c_str());
    MatmulPlan& p = call.matmul();
    int ar = A.rank, br = B.rank, cr = C.rank;
    // Row/col of op(A) and op(B).
    int a_m = prm.transpose_a ? ar - 1 : ar - 2, a_k = prm.transpose_a ? ar - 2 : ar - 1;
    int b_k = prm.transpose_b ? br - 1 : br - 2, b_n = prm.transpose_b ? br - 2 : br - 1;
    p.M = A.shape[a_m];
    p.K = A.shape[a_k];
    p.N = B.shape[b_n];
    if (B.shape[b_k] != p.K)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op 'matmul': op(A) is %lld x %lld but op(B) is %lld x %lld (inner dims differ); A %s%s, B %s%s",
             (long long)p.M, (long long)p.K, (long long)B.shape[b_k], (long long)p.N, shape_of(A).c_str(),
             prm.transpose_a ? " transposed" : "", shape_of(B).c_str(), prm.transpose_b ? " transposed" : "");
    p.a_m_stride = A.strides[a_m];
    p.a_k_stride = A.strides[a_k];
    p.b_k_stride = B.strides[b_k];
    p.b_n_stride = B.strides[b_n];
    // Batch dims: right-aligned broadcast of A's and B's leading dims.
    int batch = std::max(ar, br) - 2;
    int64_t expect[TGL_MAX_RANK];
    for (int d = 0; d < batch; ++d) {
        int da = d - (batch - (ar - 2)), db = d - (batch - (br - 2));
        int64_t na = da >= 0 ? A.shape[da] : 1, nb = db >= 0 ? B.shape[db] : 1;
        if (na != nb && na != 1 && nb != 1)
            fail(TGL_ERROR_SHAPE_MISMATCH, "op 'matmul': batch dims of A %s and B %s do not broadcast (batch dim %d: %lld vs %lld)",
                 shape_of(A).c_str(), shape_of(B).c_str(), d, (long long)na, (long long)nb);
        expect[d] = na == 1 ? nb : na;
        p.batch_shape[d] = expect[d];
        p.a_batch_strides[d] = (da >= 0 && na != 1) ? A.strides[da] : 0;
        p.b_batch_strides[d] = (db >= 0 && nb != 1) ? B.strides[db] : 0;
    }
    expect[batch] = p.M;
    expect[batch + 1] = p.N;
    if (cr != batch + 2 || !std::equal(expect, expect + cr, C.shape))
        fail(TGL_ERROR_SHAPE_MISMATCH, "op 'matmul': output C has shape %s but the product has shape %s",
             shape_of(C).c_str(), shape_string(batch + 2, expect).c_str());
    p.batch_rank = batch;
    Out& o = p.out[0];
    o.n = p.N;
    for (int d = 0; d < batch; ++d) o.batch_strides[d] = C.strides[d];
    o.m_stride = C.strides[cr - 2];
    o.n_stride = C.strides[cr - 1];
    o.offset = C.offset;
    p.a_offset = A.offset;
    p.b_offset = B.offset;
    p.alpha = prm.alpha;
    p.beta = prm.beta;
    finish_batch(p);
}

// A rank-1 (n) or rank-2 (rows, cols) side operand of exactly the given shape.
void require_side(const OpCall& call, int slot, int rank, const int64_t* shape, const char* why) {
    const TensorArg& t = call.inputs[size_t(slot)];
    require_shape(*call.info, t, operand_label(*call.info, false, uint32_t(slot)), rank, shape, why);
}

// linear, linear_qkv, grouped_linear, linear_int8, linear_int4.
void plan_linear(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const tgl_op op = info.op;
    MatmulPlan& p = call.matmul();
    if (op == TGL_OP_LINEAR_INT4) {
        tgl_linear_int4_params prm = read_params(info, params, tgl_linear_int4_params{sizeof(tgl_linear_int4_params), 0, 32, 0});
        require_activation(info, prm.activation);
        require_reserved_zero(info, prm.reserved);
        if (prm.group_size != 32 && prm.group_size != 64)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->group_size of op '%s' must be 32 or 64, got %u", info.name, prm.group_size);
        p.activation = prm.activation;
        p.group_size = prm.group_size;
    } else {
        tgl_linear_params prm = read_params(info, params, tgl_linear_params{sizeof(tgl_linear_params), 0});
        require_activation(info, prm.activation);
        p.activation = prm.activation;
    }
    const TensorArg& x = call.inputs[0];
    const TensorArg& W = call.inputs[1];
    const bool grouped = op == TGL_OP_GROUPED_LINEAR;
    if (x.rank < 1 || (grouped && x.rank != 2))
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[0] (x) must have rank %s (..., K); got shape %s", info.name,
             grouped ? "2, (T, K)" : ">= 1", shape_of(x).c_str());
    const int wr = grouped ? 3 : 2;
    if (W.rank != wr)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[1] (%s) must have rank %d, %s; got shape %s", info.name,
             info.operand_names[1], wr, grouped ? "(E, N, K)" : op == TGL_OP_LINEAR_INT4 ? "(N, K / 2)" : "(N, K)",
             shape_of(W).c_str());
    p.K = x.shape[x.rank - 1];
    p.N = W.shape[wr - 2];
    const int64_t w_k = op == TGL_OP_LINEAR_INT4 ? p.K / 2 : p.K;
    if (op == TGL_OP_LINEAR_INT4 && p.K % p.group_size != 0)
        fail(TGL_ERROR_SHAPE_MISMATCH,
             "op 'linear_int4': K = %lld (x's last dim) is not a multiple of params->group_size %lld; pad K (x with "
             "zeros, Wq with zero-point nibbles) to a multiple of the group size",
             (long long)p.K, (long long)p.group_size);
    if (W.shape[wr - 1] != w_k)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': inputs[1] (%s) has shape %s but x %s has K = %lld, so its last dim must be %lld%s",
             info.name, info.operand_names[1], shape_of(W).c_str(), shape_of(x).c_str(), (long long)p.K, (long long)w_k,
             op == TGL_OP_LINEAR_INT4 ? " (two 4-bit values per byte)" : "");
    // W's dtype against x's is the catalogue's rule (weight_or_block_of); a block W's kernels read
    // the bias in x's dtype, so mixed f16/bf16 bias is for float weights only.
    const int bias_slot = grouped ? 3 : 2;
    if (is_block_dtype(W.dtype) && call.inputs.size() > size_t(bias_slot) && call.inputs[size_t(bias_slot)].present() &&
        call.inputs[size_t(bias_slot)].dtype != x.dtype)
        fail(TGL_ERROR_DTYPE_MISMATCH, "op '%s': inputs[%d] (bias) is %s but inputs[0] (x) is %s; with a block-dtype W "
             "(%s) the bias must have x's dtype", info.name, bias_slot, dtype_name(call.inputs[size_t(bias_slot)].dtype),
             dtype_name(x.dtype), dtype_name(W.dtype));
    p.a_dtype = x.dtype;
    p.b_dtype = W.dtype;
    p.a_k_stride = x.strides[x.rank - 1];
    p.a_offset = x.offset;
    p.b_offset = W.offset;
    p.b_n_stride = W.strides[wr - 2];
    p.b_k_stride = W.strides[wr - 1];
    p.b_kind = op == TGL_OP_LINEAR_INT8 ? MatmulPlan::BKind::Int8
             : op == TGL_OP_LINEAR_INT4 ? MatmulPlan::BKind::Int4
             : is_block_dtype(W.dtype)  ? MatmulPlan::BKind::Block : MatmulPlan::BKind::Float;
    if (grouped) {
        p.experts = W.shape[0];
        p.b_e_stride = W.strides[0];
    }

    // Outputs: (leading dims of x..., n_o).
    const int lead = x.rank - 1;
    p.n_out = int(call.outputs.size());
    int64_t total = 0;
    for (int o = 0; o < p.n_out; ++o) {
        const TensorArg& y = call.outputs[size_t(o)];
        int64_t expect[TGL_MAX_RANK];
        std::copy(x.shape, x.shape + lead, expect);
        expect[lead] = p.n_out == 1 ? p.N : (y.rank == x.rank ? y.shape[lead] : -1);
        if (y.rank != x.rank || !std::equal(expect, expect + x.rank, y.shape))
            fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s has shape %s but x %s and W %s give %s%s", info.name,
                 operand_label(info, true, uint32_t(o)).c_str(), shape_of(y).c_str(), shape_of(x).c_str(),
                 shape_of(W).c_str(), p.n_out == 1 ? "" : "x's leading dims and any last dim: ",
                 shape_string(x.rank, expect).c_str());
        Out& out = p.out[o];
        out.n = y.shape[lead];
        out.offset = y.offset;
        out.n_stride = y.strides[lead];
        total += out.n;
    }
    if (p.n_out == 3 && total != p.N)
        fail(TGL_ERROR_SHAPE_MISMATCH,
             "op 'linear_qkv': the outputs' last dims %lld + %lld + %lld = %lld must add up to W's rows, %lld (W %s)",
             (long long)p.out[0].n, (long long)p.out[1].n, (long long)p.out[2].n, (long long)total, (long long)p.N,
             shape_of(W).c_str());
    // Rows: the last leading dim is M, the others a batch (merged into M where they can be).
    if (lead == 0) {
        p.M = 1;
    } else {
        p.M = x.shape[lead - 1];
        p.a_m_stride = x.strides[lead - 1];
        for (int o = 0; o < p.n_out; ++o) p.out[o].m_stride = call.outputs[size_t(o)].strides[lead - 1];
        p.batch_rank = lead - 1;
        for (int d = 0; d < p.batch_rank; ++d) {
            p.batch_shape[d] = x.shape[d];
            p.a_batch_strides[d] = x.strides[d];
            p.b_batch_strides[d] = 0;
            for (int o = 0; o < p.n_out; ++o) p.out[o].batch_strides[d] = call.outputs[size_t(o)].strides[d];
        }
    }

    // Side operands.
    int slot = 2;
    if (grouped) {
        p.index_input = slot;
        const TensorArg& index = call.inputs[size_t(slot)];
        const int64_t t_shape[1] = {x.shape[0]};
        require_side(call, slot, 1, t_shape, "x's rows (T)");
        p.index_offset = index.offset;
        p.index_stride = index.strides[0];
        if (p.experts == 0 && x.shape[0] > 0)
            fail(TGL_ERROR_INDEX_OUT_OF_RANGE, "op 'grouped_linear': W %s has no experts (E = 0) but x has %lld rows; no index can be valid (size 0)",
                 shape_of(W).c_str(), (long long)x.shape[0]);
        ++slot;
    }
    if (p.b_kind == MatmulPlan::BKind::Int8 || p.b_kind == MatmulPlan::BKind::Int4) {
        p.scale_input = slot;
        const TensorArg& s = call.inputs[size_t(slot)];
        if (p.b_kind == MatmulPlan::BKind::Int8) {
            const int64_t shape[1] = {p.N};
            require_side(call, slot, 1, shape, "W's rows (N)");
            p.scale_n_stride = s.strides[0];
        } else {
            p.groups = p.K / p.group_size;
            const int64_t shape[2] = {p.N, p.groups};
            require_side(call, slot, 2, shape, "(N, K / group_size)");
            p.scale_n_stride = s.strides[0];
            p.scale_g_stride = s.strides[1];
        }
        p.scale_offset = s.offset;
        ++slot;
        if (p.b_kind == MatmulPlan::BKind::Int4) {
            const TensorArg& z = call.inputs[size_t(slot)];
            if (z.present()) {
                const int64_t shape[2] = {p.N, p.groups};
                require_side(call, slot, 2, shape, "(N, K / group_size)");
                p.zero_input = slot;
                p.zero_offset = z.offset;
                p.zero_n_stride = z.strides[0];
                p.zero_g_stride = z.strides[1];
            }
            ++slot;
        }
    }
    const TensorArg& bias = call.inputs[size_t(slot)];
    if (bias.present()) {
        p.bias_input = slot;
        p.bias_offset = bias.offset;
        if (grouped) {
            const int64_t shape[2] = {p.experts, p.N};
            require_side(call, slot, 2, shape, "W's (E, N)");
            p.bias_e_stride = bias.strides[0];
            p.bias_n_stride = bias.strides[1];
        } else {
            const int64_t shape[1] = {p.N};
            require_side(call, slot, 1, shape, "W's rows (N)");
            p.bias_n_stride = bias.strides[0];
        }
    }
    p.c_dtype = call.outputs[0].dtype;
    if (!grouped) finish_batch(p);
}

// dequantize: y = x decoded, same shape; rows over every leading dim (block_dtypes.h).
void plan_dequantize(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const tgl_unary_params prm = read_params(info, params, tgl_unary_params{sizeof(tgl_unary_params), 0});
    require_reserved_zero(info, prm.reserved);
    const TensorArg& x = call.inputs[0];
    const TensorArg& y = call.outputs[0];
    require_shape(info, y, "outputs[0] (y)", x.rank, x.shape, "x's shape");
    MatmulPlan& p = call.matmul();
    p.b_kind = MatmulPlan::BKind::Block;
    p.b_dtype = x.dtype;
    p.a_dtype = p.c_dtype = y.dtype;
    p.K = x.shape[x.rank - 1];
    p.M = 1;
    p.N = 1;
    p.b_offset = x.offset;
    p.b_k_stride = 1;
    p.out[0].offset = y.offset;
    p.dequant_y_k_stride = y.strides[y.rank - 1];
    p.dequant_rank = x.rank - 1;
    for (int d = 0; d < p.dequant_rank; ++d) {
        p.dequant_shape[d] = x.shape[d];
        p.dequant_x_strides[d] = x.strides[d];
        p.dequant_y_strides[d] = y.strides[d];
        p.N *= x.shape[d];
    }
}

}  // namespace

void plan_matmul(OpCall& call, const void* params) {
    MatmulPlan& p = call.plan.emplace<MatmulPlan>();
    if (call.info->op == TGL_OP_DEQUANTIZE) {
        plan_dequantize(call, params);
    } else if (call.info->op == TGL_OP_MATMUL) {
        p.a_dtype = p.c_dtype = call.inputs[0].dtype;
        p.b_dtype = call.inputs[1].dtype;  // f16/bf16 under an f32 A: mixed weights
        plan_plain_matmul(call, params);
    } else {
        plan_linear(call, params);
    }
}

std::string grouped_index_message(const OpInfo& info, int64_t position, int64_t value, int64_t experts) {
    return format("op '%s': %s holds %lld at position %lld (row-major), outside [0, %lld) (the experts of W, axis 0); "
                  "indices do not wrap; nothing was written",
                  info.name, operand_label(info, false, 2).c_str(), (long long)value, (long long)position,
                  (long long)experts);
}

void register_matmul_rules(std::vector<FamilyRules>& families) { families.push_back({OpFamily::Matmul, plan_matmul}); }

}  // namespace tgl
