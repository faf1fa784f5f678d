// Shape rules and index plan of the Generate family (arange, full, eye, tril, triu, random_uniform, random_normal).
// Included by validate.h; plan_generate() is called by validate_op() for every op of the family.
#pragma once

#include <tensorgl/plugin_api.h>

#include <cstdint>

namespace tgl {

struct OpCall;

// Both plugins iterate y's elements in row-major (logical) order over `shape`: element k of that
// order is y[y_offset + sum c_d * y_strides[d]] (and x's likewise for tril/triu). Size-1 dims are
// dropped and neighbours contiguous in y (and x) merged, which keeps the row-major index k, except
// that eye/tril/triu keep their last two dims (rows, cols) as they are, so c[rank-2] = i and
// c[rank-1] = j. random_* use k as the element's index in the counter.
struct GeneratePlan {
    int rank = 0;
    int64_t shape[TGL_MAX_RANK] = {};
    int64_t y_strides[TGL_MAX_RANK] = {};
    int64_t x_strides[TGL_MAX_RANK] = {};  // tril/triu
    int64_t y_offset = 0, x_offset = 0;
    int64_t numel = 0;
    int32_t diagonal = 0;  // eye, tril, triu
    uint32_t bits = 0;     // full: the value as y's element bits; eye: the bits of 1
    // arange: integer y takes start and step as exact integers (the low 32 bits are what matter:
    // y keeps the low bits of start + k * step); float y the f32 roundings of start and step.
    bool arange_integer = false;
    int64_t start_int = 0, step_int = 0;
    float start_f32 = 0.0f, step_f32 = 0.0f;
    // random_uniform / random_normal (tgl_random_params).
    uint64_t seed = 0, offset = 0;
    float a = 0.0f, b = 1.0f;
};

// Reads the op's params, checks shapes against them and fills call.generate. Throws tgl::Error.
void plan_generate(OpCall& call, const void* params);

}  // namespace tgl
