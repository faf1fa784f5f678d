// CPU reference kernels of the Generate family (plan: backends/common/generate_rules.h): arange,
// full, eye, tril, triu, random_uniform, random_normal. Every element is produced on its own from
// its row-major index k (GeneratePlan), so the order of the loop does not matter.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"
#include "philox.h"
#include "status.h"

#include <cmath>
#include <cstring>

namespace tgl {
namespace cpu {
namespace {

constexpr int64_t kMinElementsPerThread = 1 << 16;

// The Philox words of the element with row-major index k (tgl_random_params' recipe).
void random_words(const GeneratePlan& p, int64_t k, uint32_t w[4]) {
    philox_words(p.seed, p.offset + uint64_t(k), w);
}


// cos(2 pi u) for u in [0, 1), with the quarter turn split off exactly (4u - n is exact), so that
// the zeros at u = 1/4, 3/4 are exact and the result keeps its relative accuracy near them.
double cos_two_pi(double u) {
    const double t = 4.0 * u;
    const double n = std::floor(t + 0.5);
    const double theta = (t - n) * (M_PI / 2);
    switch (int(n) & 3) {
    case 0: return std::cos(theta);
    case 1: return -std::sin(theta);
    case 2: return -std::cos(theta);
    default: return std::sin(theta);
    }
}

// The element bits that y gets at row-major index k (x_bits: tril/triu's source element).
uint32_t element_bits(const OpCall& call, int64_t k, int64_t i, int64_t j, uint32_t x_bits) {
    const GeneratePlan& p = call.generate();
    const tgl_dtype dt = call.outputs[0].dtype;
    switch (call.info->op) {
    case TGL_OP_ARANGE:
        if (p.arange_integer)  // the low bits of the exact integer start + k * step
            return uint32_t(uint64_t(p.start_int) + uint64_t(k) * uint64_t(p.step_int));
        // f32 arithmetic, not contracted into an fma (-ffp-contract=off), as the GLES shader does.
        return double_to_dtype_bits(double(p.start_f32 + float(k) * p.step_f32), dt);
    case TGL_OP_FULL: return p.bits;
    case TGL_OP_EYE: return j - i == p.diagonal ? p.bits : 0u;
    case TGL_OP_TRIL: return j - i <= p.diagonal ? x_bits : 0u;
    case TGL_OP_TRIU: return j - i >= p.diagonal ? x_bits : 0u;
    case TGL_OP_RANDOM_UNIFORM: {
        uint32_t w[4];
        random_words(p, k, w);
        const float u = float(w[0] >> 8) * 0x1p-24f;
        const float span = p.b - p.a;
        const float scaled = span * u;
        return double_to_dtype_bits(double(p.a + scaled), dt);
    }
    case TGL_OP_RANDOM_NORMAL: {
        uint32_t w[4];
        random_words(p, k, w);
        const double u1 = double((w[0] >> 8) + 1u) * 0x1p-24;
        const double u2 = double(w[1] >> 8) * 0x1p-24;
        const double z = std::sqrt(-2.0 * std::log(u1)) * cos_two_pi(u2);
        return double_to_dtype_bits(double(p.a) + double(p.b) * z, dt);
    }
    default: fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' is not a generate op", call.info->name);
    }
}

uint32_t load_bits(const uint8_t* base, uint32_t size, int64_t e) {
    uint32_t v = 0;
    std::memcpy(&v, base + int64_t(size) * e, size);  // little-endian: the low bytes
    return v;
}

void store_bits(uint8_t* base, uint32_t size, int64_t e, uint32_t v) {
    std::memcpy(base + int64_t(size) * e, &v, size);
}

}  // namespace

void run_generate(const OpCall& call, unsigned threads) {
    const GeneratePlan& p = call.generate();
    const TensorArg& y = call.outputs[0];
    const bool has_x = !call.inputs.empty();
    uint8_t* yb = cpu_buffer(y.buffer).bytes();
    const uint8_t* xb = has_x ? cpu_buffer(call.inputs[0].buffer).bytes() : nullptr;
    const uint32_t size = tgl_dtype_size(y.dtype);
    const bool matrix = call.info->op == TGL_OP_EYE || has_x;
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
            int64_t yo = p.y_offset, xo = p.x_offset, rest = k, c[TGL_MAX_RANK] = {};
            for (int d = p.rank - 1; d >= 0; --d) {
                c[d] = rest % p.shape[d];
                rest /= p.shape[d];
                yo += c[d] * p.y_strides[d];
                xo += c[d] * p.x_strides[d];
            }
            const int64_t i = matrix ? c[p.rank - 2] : 0, j = matrix ? c[p.rank - 1] : 0;
            const uint32_t x_bits = has_x ? load_bits(xb, size, xo) : 0u;
            store_bits(yb, size, yo, element_bits(call, k, i, j, x_bits));
        }
    });
}

void register_generate_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Generate, run_generate}); }

}  // namespace cpu
}  // namespace tgl
