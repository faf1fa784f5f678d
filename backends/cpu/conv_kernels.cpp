// CPU reference kernels of the Conv family (plan: backends/common/conv_rules.h): plain direct loops
// over every output element, each summing its terms in double and rounding once at the store.
//   Forward     y[n, co, o] = act(bias + sum_{c, j} x[n, ci, o*stride - pad + j*dil] * w)
//   Transposed  y[n, co, o] = act(bias + sum_{c, j, i: i*stride - pad + j*dil = o} x[n, ci, i] * w)
//   WeightGrad  dw[co, c, j] = sum_{n, o} dy[n, co, o] * x[n, ci, o*stride - pad + j*dil]; db = sum dy
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"
#include "scalar_ops.h"
#include "status.h"

namespace tgl {
namespace cpu {

void run_conv(const OpCall& call, unsigned threads) {
    const ConvPlan& p = call.conv();
    const tgl_dtype dt = call.dtype;
    auto operand = [&](bool out, int slot) -> const TensorArg& { return (out ? call.outputs : call.inputs)[size_t(slot)]; };
    auto bytes = [&](bool out, int slot) -> uint8_t* { return cpu_buffer(operand(out, slot).buffer).bytes(); };
    // w and bias: dt, or f16/bf16 under f32 x and y (mixed weights), each read as its own dtype.
    const tgl_dtype w_dt = operand(p.w_is_out, p.w_slot).dtype;
    const tgl_dtype b_dt = p.b_slot >= 0 ? operand(p.mode == ConvPlan::WeightGrad, p.b_slot).dtype : dt;
    const uint8_t* x = bytes(false, p.x_slot);
    uint8_t* y = bytes(p.y_is_out, p.y_slot);
    uint8_t* w = bytes(p.w_is_out, p.w_slot);
    uint8_t* b = p.b_slot >= 0 ? bytes(p.mode == ConvPlan::WeightGrad, p.b_slot) : nullptr;
    const int64_t kvol = p.k[0] * p.k[1] * p.k[2];
    auto x_at = [&](int64_t n, int64_t ci, const int64_t* i) {
        return load_as_double(x, dt, p.x_off + n * p.xs[0] + ci * p.xs[1] + i[0] * p.xs[2] + i[1] * p.xs[3] + i[2] * p.xs[4]);
    };
    auto y_off = [&](int64_t n, int64_t co, const int64_t* o) {
        return p.y_off + n * p.ys[0] + co * p.ys[1] + o[0] * p.ys[2] + o[1] * p.ys[3] + o[2] * p.ys[4];
    };
    auto w_off = [&](int64_t g, int64_t m, int64_t c, const int64_t* j) {
        return p.w_off + g * p.w_g + m * p.w_m + c * p.w_c + j[0] * p.ws[0] + j[1] * p.ws[1] + j[2] * p.ws[2];
    };
    auto unflatten3 = [](int64_t r, const int64_t* n, int64_t* v) {
        for (int d = 2; d >= 0; --d) {
            v[d] = r % n[d];
            r /= n[d];
        }
    };

    if (p.mode == ConvPlan::WeightGrad) {
        const int64_t ovol = p.out[0] * p.out[1] * p.out[2];
        const int64_t count = p.groups * p.cy * p.cx * kvol;
        parallel_for(count, threads, 16, [&](int64_t begin, int64_t end) {
            for (int64_t e = begin; e < end; ++e) {
                int64_t j[3];
                unflatten3(e % kvol, p.k, j);
                const int64_t c = e / kvol % p.cx, co = e / kvol / p.cx, g = co / p.cy;
                double acc = 0.0;
                for (int64_t n = 0; n < p.batch; ++n)
                    for (int64_t oe = 0; oe < ovol; ++oe) {
                        int64_t o[3], i[3];
                        unflatten3(oe, p.out, o);
                        bool inside = true;
                        for (int d = 0; d < 3; ++d) {
                            i[d] = o[d] * p.stride[d] - p.pad[d] + j[d] * p.dil[d];
                            inside = inside && i[d] >= 0 && i[d] < p.in[d];
                        }
                        if (inside) acc += load_as_double(y, dt, y_off(n, co, o)) * x_at(n, g * p.cx + c, i);
                    }
                store_from_double(w, w_dt, w_off(g, co % p.cy, c, j), acc, false);
            }
        });
        if (b)
            for (int64_t co = 0; co < p.groups * p.cy; ++co) {
                double acc = 0.0;
                for (int64_t n = 0; n < p.batch; ++n)
                    for (int64_t oe = 0; oe < ovol; ++oe) {
                        int64_t o[3];
                        unflatten3(oe, p.out, o);
                        acc += load_as_double(y, dt, y_off(n, co, o));
                    }
                store_from_double(b, b_dt, p.b_off + co * p.bs, acc, false);
            }
        return;
    }

    const int64_t ovol = p.out[0] * p.out[1] * p.out[2];
    const int64_t count = p.batch * p.groups * p.cy * ovol;
    const bool transposed = p.mode == ConvPlan::Transposed;
    parallel_for(count, threads, 64, [&](int64_t begin, int64_t end) {
        for (int64_t e = begin; e < end; ++e) {
            int64_t o[3];
            unflatten3(e % ovol, p.out, o);
            const int64_t co = e / ovol % (p.groups * p.cy), n = e / ovol / (p.groups * p.cy);
            const int64_t g = co / p.cy, m = co % p.cy;
            double acc = b ? load_as_double(b, b_dt, p.b_off + co * p.bs) : 0.0;
            for (int64_t c = 0; c < p.cx; ++c)
                for (int64_t je = 0; je < kvol; ++je) {
                    int64_t j[3], i[3];
                    unflatten3(je, p.k, j);
                    bool inside = true;
                    for (int d = 0; d < 3 && inside; ++d) {
                        if (transposed) {
                            const int64_t num = o[d] + p.pad[d] - j[d] * p.dil[d];
                            inside = num >= 0 && num % p.stride[d] == 0 && num / p.stride[d] < p.in[d];
                            i[d] = num / p.stride[d];
                        } else {
                            i[d] = o[d] * p.stride[d] - p.pad[d] + j[d] * p.dil[d];
                            inside = i[d] >= 0 && i[d] < p.in[d];
                        }
                    }
                    if (inside) acc += x_at(n, g * p.cx + c, i) * load_as_double(w, w_dt, w_off(g, m, c, j));
                }
            store_from_double(y, dt, y_off(n, co, o), apply_activation(p.activation, acc), false);
        }
    });
}

void register_conv_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Conv, run_conv}); }

}  // namespace cpu
}  // namespace tgl
