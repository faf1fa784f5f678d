// CPU reference of the Matmul family (matmul_rules.h): matmul, linear, linear_qkv, grouped_linear,
// linear_int8, linear_int4. One output row (b, m) at a time, in tiles of columns:
// acc[n] += A[m, k] * W(k, n) for k = 0, 1, ... in double (so every dot product sums over k in
// order); then alpha, beta * C, bias and the activation in double, rounded once at the store.
// Quantized weights are dequantized in double exactly as plugin_api.h documents:
// int8 Wq * scale, int4 (nibble - zero) * scale (zero 8 when absent), low nibble = even k, GGUF
// block dtypes by block_decode.h (dequantize: the same decoder, each element rounded once).
#include "kernels.h"

#include "block_decode.h"
#include "block_dtypes.h"  // backends/common

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"
#include "scalar_ops.h"
#include "status.h"

#include <algorithm>
#include <cstring>

namespace tgl {
namespace cpu {
namespace {

constexpr int64_t kMinMacsPerThread = 1 << 16;
constexpr int64_t kTileN = 256;

struct Operand {
    const uint8_t* base = nullptr;
    tgl_dtype dt = TGL_DTYPE_F32;
    double load(int64_t i) const { return load_as_double(base, dt, i); }
};

Operand operand(const OpCall& c, int slot) {
    if (slot < 0) return {};
    const TensorArg& t = c.inputs[size_t(slot)];
    return {cpu_buffer(t.buffer).bytes(), t.dtype};
}

int64_t load_index(const OpCall& c, int64_t m) {  // i32 or i64, exact
    const MatmulPlan& p = c.matmul();
    const TensorArg& t = c.inputs[size_t(p.index_input)];
    return load_as_int64(cpu_buffer(t.buffer).bytes(), t.dtype, p.index_offset + m * p.index_stride);
}

}  // namespace

namespace {

// dequantize: every element of every row decoded exactly and rounded once to y's dtype.
void run_dequantize(const OpCall& c, unsigned threads) {
    const MatmulPlan& p = c.matmul();
    const TensorArg& x = c.inputs[0];
    const TensorArg& y = c.outputs[0];
    const uint8_t* xb = cpu_buffer(x.buffer).bytes();
    uint8_t* yb = cpu_buffer(y.buffer).bytes();
    const int64_t B = tgl_dtype_block_size(x.dtype);
    parallel_for(p.N, threads, std::max<int64_t>(1, kMinMacsPerThread / std::max<int64_t>(1, p.K)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            int64_t x_off = p.b_offset, y_off = p.out[0].offset, rem = r;
            for (int d = p.dequant_rank - 1; d >= 0; --d) {
                const int64_t i = rem % p.dequant_shape[d];
                rem /= p.dequant_shape[d];
                x_off += i * p.dequant_x_strides[d];
                y_off += i * p.dequant_y_strides[d];
            }
            for (int64_t k = 0; k < p.K; ++k) {
                const int64_t e = x_off + k;
                store_from_double(yb, y.dtype, y_off + k * p.dequant_y_k_stride,
                                  decode_block_element(x.dtype, xb + block_byte(x.dtype, e), int(e % B)), false);
            }
        }
    });
}

}  // namespace

void run_matmul(const OpCall& c, unsigned threads) {
    if (c.info->op == TGL_OP_DEQUANTIZE) return run_dequantize(c, threads);
    const MatmulPlan& p = c.matmul();
    // grouped_linear: every expert index is checked before anything is written.
    if (p.index_input >= 0)
        for (int64_t m = 0; m < p.M; ++m) {
            const int64_t e = load_index(c, m);
            if (e < 0 || e >= p.experts)
                fail(TGL_ERROR_INDEX_OUT_OF_RANGE, "%s", grouped_index_message(*c.info, m, e, p.experts).c_str());
        }
    const Operand A = operand(c, 0), B = operand(c, 1), bias = operand(c, p.bias_input), scale = operand(c, p.scale_input),
                  zero = operand(c, p.zero_input);
    const bool fast_f32 = p.b_kind == MatmulPlan::BKind::Float && A.dt == TGL_DTYPE_F32 && B.dt == TGL_DTYPE_F32;
    uint8_t* out_base[3] = {};
    for (int o = 0; o < p.n_out; ++o) out_base[o] = cpu_buffer(c.outputs[size_t(o)].buffer).bytes();
    const double alpha = p.alpha, beta = p.beta;
    const int64_t block_elems = tgl_dtype_block_size(B.dt);

    // The weight W(k, n) of expert b_off's matrix, dequantized.
    auto weight = [&](int64_t b_off, int64_t k, int64_t n) -> double {
        switch (p.b_kind) {
        case MatmulPlan::BKind::Float: return B.load(b_off + k * p.b_k_stride + n * p.b_n_stride);
        case MatmulPlan::BKind::Int8:
            return B.load(b_off + k * p.b_k_stride + n * p.b_n_stride) * scale.load(p.scale_offset + n * p.scale_n_stride);
        case MatmulPlan::BKind::Block: {  // a row start (a multiple of B) + k: block e / B, position e % B
            const int64_t e = b_off + n * p.b_n_stride + k;
            return decode_block_element(B.dt, B.base + block_byte(B.dt, e), int(e % block_elems));
        }
        case MatmulPlan::BKind::Int4: {
            const int64_t g = k / p.group_size;
            const int byte = int(B.base[b_off + (k / 2) * p.b_k_stride + n * p.b_n_stride]);
            const int q = (k % 2 == 0) ? (byte & 15) : (byte >> 4);
            const double z = p.zero_input >= 0 ? zero.load(p.zero_offset + n * p.zero_n_stride + g * p.zero_g_stride) : 8.0;
            return (double(q) - z) * scale.load(p.scale_offset + n * p.scale_n_stride + g * p.scale_g_stride);
        }
        }
        return 0.0;
    };

    const int64_t rows = p.batch_count * p.M;
    const int64_t macs_per_row = std::max<int64_t>(1, p.N * std::max<int64_t>(1, p.K));
    const int64_t min_rows = std::max<int64_t>(1, kMinMacsPerThread / macs_per_row);
    parallel_for(rows, threads, min_rows, [&](int64_t begin, int64_t end) {
        double acc[kTileN];
        for (int64_t r = begin; r < end; ++r) {
            const int64_t m = r % p.M;
            int64_t a_off = p.a_offset + m * p.a_m_stride, b_off = p.b_offset;
            int64_t c_off[3];
            for (int o = 0; o < p.n_out; ++o) c_off[o] = p.out[o].offset + m * p.out[o].m_stride;
            int64_t rem = r / p.M;  // batch index, row-major over batch_shape
            for (int d = p.batch_rank - 1; d >= 0; --d) {
                const int64_t i = rem % p.batch_shape[d];
                rem /= p.batch_shape[d];
                a_off += i * p.a_batch_strides[d];
                b_off += i * p.b_batch_strides[d];
                for (int o = 0; o < p.n_out; ++o) c_off[o] += i * p.out[o].batch_strides[d];
            }
            const int64_t e = p.index_input >= 0 ? load_index(c, m) : 0;
            b_off += e * p.b_e_stride;
            for (int64_t n0 = 0; n0 < p.N; n0 += kTileN) {
                const int64_t tile = std::min(kTileN, p.N - n0);
                std::fill(acc, acc + tile, 0.0);
                for (int64_t k = 0; k < p.K; ++k) {
                    const double a = A.load(a_off + k * p.a_k_stride);
                    if (fast_f32) {  // the common case, written out so that it vectorises
                        const float* b_row = reinterpret_cast<const float*>(B.base) + b_off + k * p.b_k_stride + n0 * p.b_n_stride;
                        const int64_t bn = p.b_n_stride;
                        for (int64_t j = 0; j < tile; ++j) acc[j] += a * static_cast<double>(b_row[j * bn]);
                    } else {
                        for (int64_t j = 0; j < tile; ++j) acc[j] += a * weight(b_off, k, n0 + j);
                    }
                }
                for (int64_t j = 0; j < tile; ++j) {
                    // Route column n to its output (linear_qkv: q, k, v in order).
                    int64_t n = n0 + j, col = n;
                    int o = 0;
                    while (o + 1 < p.n_out && col >= p.out[o].n) col -= p.out[o++].n;
                    const tgl_dtype dt = c.outputs[size_t(o)].dtype;
                    const int64_t ci = c_off[o] + col * p.out[o].n_stride;
                    // K == 0: the product is empty, so alpha does not enter (alpha = inf must not give NaN).
                    double v = p.K > 0 ? alpha * acc[j] : 0.0;
                    if (beta != 0.0) v += beta * load_as_double(out_base[o], dt, ci);
                    if (p.bias_input >= 0) v += bias.load(p.bias_offset + e * p.bias_e_stride + n * p.bias_n_stride);
                    store_from_double(out_base[o], dt, ci, apply_activation(p.activation, v), false);
                }
            }
        }
    });
}

void register_matmul_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Matmul, run_matmul}); }

}  // namespace cpu
}  // namespace tgl
