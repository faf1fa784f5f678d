// Shape rules and index plan of the Matmul family: matmul (f32/f16), linear, linear_qkv,
// grouped_linear (mixture of experts), linear_int8 and linear_int4 (weight-only quantized).
// Included by validate.h; plan_matmul() is called by validate_op() for every op of the family.
//
// Every op is one product per batch index b and row m:
//   out[b, m, n] = act(alpha * sum_k A[b, m, k] * W(b, e, k, n) + beta * out[b, m, n] + bias[e, n])
// where W(.) is B's element (matmul, linear: B[k, n] = W[n, k]) or the dequantized weight
// (int8: Wq[n, k] * scale[n]; int4: (nibble - zero) * scale[n, k / G]), e is the row's expert
// (grouped_linear: index[m]; else 0), and the output column n is routed to one of n_out outputs
// (linear_qkv: q, k, v in column ranges of sizes out[0..2].n). dequantize (x (..., K) of a block
// dtype -> y) is planned as a linear whose W is x's rows: M = 1, N = the rows (every leading dim of
// x, in row-major order: the plan's dequant_* fields), each output element y[row, k] = W(k, row). Transposes, the nn.Linear layout,
// batch broadcasting (stride 0) and leading dims merged into M are already folded into the strides.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>
#include <string>

namespace tgl {

struct OpCall;
struct OpInfo;

struct MatmulPlan {
    static constexpr int kMaxBatchRank = TGL_MAX_RANK - 2;
    enum class BKind { Float, Int8, Int4, Block };  // Block: a GGUF block dtype (b_dtype), k-contiguous
    int64_t M = 0, N = 0, K = 0;  // N: all output columns together (qkv: Nq + Nk + Nv)
    int batch_rank = 0;
    int64_t batch_count = 1;
    int64_t batch_shape[kMaxBatchRank] = {};
    int64_t a_batch_strides[kMaxBatchRank] = {};
    int64_t b_batch_strides[kMaxBatchRank] = {};
    int64_t a_m_stride = 0, a_k_stride = 0;
    // B's element (k, n) of expert e: b_offset + e * b_e_stride + k * b_k_stride + n * b_n_stride;
    // int4: the byte (k / 2) * b_k_stride + n * b_n_stride, nibble k % 2 (low nibble: even k).
    // Block: element offset b_offset + e * b_e_stride + n * b_n_stride + k (a row start, a multiple
    // of B, plus k; block_dtypes.h), b_k_stride = 1.
    int64_t b_k_stride = 0, b_n_stride = 0, b_e_stride = 0;
    int64_t a_offset = 0, b_offset = 0;
    tgl_dtype a_dtype = TGL_DTYPE_F32, b_dtype = TGL_DTYPE_F32, c_dtype = TGL_DTYPE_F32;
    BKind b_kind = BKind::Float;
    // Outputs: n columns each, consecutive in n (column n0 of output o is n0 + sum of earlier n).
    struct Out {
        int64_t n = 0;
        int64_t offset = 0, m_stride = 0, n_stride = 0;
        int64_t batch_strides[kMaxBatchRank] = {};
    };
    int n_out = 1;
    Out out[3];
    float alpha = 1.0f, beta = 0.0f;  // matmul only
    uint32_t activation = TGL_ACTIVATION_NONE;
    // Side operands (input slots, -1 when absent), each addressed by offset + n * n_stride (+ ...).
    int bias_input = -1;  // bias[e, n]: offset + e * e_stride + n * n_stride
    int64_t bias_offset = 0, bias_n_stride = 0, bias_e_stride = 0;
    int scale_input = -1;  // scale[n, g] (int8: g = 0): offset + n * n_stride + g * g_stride
    int64_t scale_offset = 0, scale_n_stride = 0, scale_g_stride = 0;
    int zero_input = -1;  // int4 zero points, as scale
    int64_t zero_offset = 0, zero_n_stride = 0, zero_g_stride = 0;
    int64_t group_size = 0, groups = 0;  // int4: G and K / G
    int index_input = -1;  // grouped_linear: index[m] at index_offset + m * index_stride
    int64_t index_offset = 0, index_stride = 0;
    int64_t experts = 1;
    // dequantize: x's leading dims (rows, row-major) with x's and y's strides; K = the last dim.
    int dequant_rank = 0;
    int64_t dequant_shape[TGL_MAX_RANK] = {}, dequant_x_strides[TGL_MAX_RANK] = {}, dequant_y_strides[TGL_MAX_RANK] = {};
    int64_t dequant_y_k_stride = 0;
};

void plan_matmul(OpCall& call, const void* params);

// The message of an expert index outside [0, E) (both plugins; GLES from the device status).
std::string grouped_index_message(const OpInfo& info, int64_t position, int64_t value, int64_t experts);

}  // namespace tgl
