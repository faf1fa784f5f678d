// CPU reference kernels of the Layout family: every op is the list of copy steps that
// plan_layout() made (backends/common/layout_rules.h), run here as a plain loop over each step's
// elements that copies the element's bytes (or writes the constant's bytes).
#include "kernels.h"

#include "cpu_buffer.h"
#include "parallel.h"

#include <cstring>

namespace tgl {
namespace cpu {
namespace {

// Element index of row-major index `lin` of the view (rank, shape, strides) starting at `offset`.
int64_t unravel(int64_t lin, int rank, const int64_t* shape, const int64_t* strides, int64_t offset) {
    for (int d = rank - 1; d >= 0; --d) {
        offset += (lin % shape[d]) * strides[d];
        lin /= shape[d];
    }
    return offset;
}

// The input coordinate of output coordinate c along dim d of a map step, or -1 for the constant.
int64_t input_coord(const CopyStep& s, int d, int64_t c) {
    const int64_t n = s.in_size[d];
    int64_t k = s.start[d] + s.step[d] * c;
    switch (s.mode[d]) {
    case CoordMode::Direct: return k;
    case CoordMode::Wrap: return ((k % n) + n) % n;
    case CoordMode::Reflect: return k < 0 ? -k : (k >= n ? 2 * (n - 1) - k : k);
    case CoordMode::Clamp: return k < 0 ? 0 : (k >= n ? n - 1 : k);
    case CoordMode::Constant: return (k < 0 || k >= n) ? -1 : k;
    }
    return -1;
}

void run_step(const OpCall& call, const CopyStep& s, unsigned threads) {
    const TensorArg& y = call.outputs[size_t(s.output)];
    const int64_t es = tgl_dtype_size(y.dtype);
    uint8_t* yb = cpu_buffer(y.buffer).bytes();
    const uint8_t* xb = s.input >= 0 ? cpu_buffer(call.inputs[size_t(s.input)].buffer).bytes() : nullptr;
    const uint8_t* value = reinterpret_cast<const uint8_t*>(&call.layout().value_bits);  // little-endian low bytes
    parallel_for(s.count, threads, int64_t(1) << 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            int64_t yi, xi;
            bool constant = s.input < 0;
            if (s.linear) {
                yi = unravel(s.out_lin + i, s.rank, s.shape, s.out_strides, s.out_offset);
                xi = unravel(s.in_lin + i, s.in_rank, s.in_shape, s.in_lin_strides, s.in_offset);
            } else {
                yi = s.out_offset;
                xi = s.in_offset;
                int64_t rest = i;
                for (int d = s.rank - 1; d >= 0; --d) {
                    const int64_t c = rest % s.shape[d];
                    rest /= s.shape[d];
                    yi += c * s.out_strides[d];
                    const int64_t k = input_coord(s, d, c);
                    if (k < 0) constant = true;
                    else xi += k * s.in_strides[d];
                }
            }
            std::memcpy(yb + yi * es, constant ? value : xb + xi * es, size_t(es));
        }
    });
}

}  // namespace

void run_layout(const OpCall& call, unsigned threads) {
    for (const CopyStep& s : call.layout().steps) run_step(call, s, threads);
}

void register_layout_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Layout, run_layout}); }

}  // namespace cpu
}  // namespace tgl
