// GLES host side of the Generate family (plan: backends/common/generate_rules.h): picks the
// variant of generate.comp, binds y (and x for tril/triu), sets the plan as uniforms and dispatches
// one invocation per element of y. Every value is computed by the shader.
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"

#include <cstring>

namespace tgl {
namespace gles {
namespace {

const char* op_define(const OpCall& call) {
    switch (call.info->op) {
    case TGL_OP_ARANGE: return call.generate().arange_integer ? "OP_ARANGE_INT" : "OP_ARANGE_FLOAT";
    case TGL_OP_FULL: return "OP_FULL";
    case TGL_OP_EYE: return "OP_EYE";
    case TGL_OP_TRIL: return "OP_TRIL";
    case TGL_OP_TRIU: return "OP_TRIU";
    case TGL_OP_RANDOM_UNIFORM: return "OP_UNIFORM";
    case TGL_OP_RANDOM_NORMAL: return "OP_NORMAL";
    default: fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' is not a generate op", call.info->name);
    }
}

uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

}  // namespace

void run_generate(GlesDevice& dev, const OpCall& call) {
    const GeneratePlan& p = call.generate();
    const TensorArg& y = call.outputs[0];
    const uint32_t numel = count_u32(p.numel, "outputs[0] (y)");
    int32_t y_off = 0, x_off = 0;
    Binding yb = dev.window(y, "outputs[0] (y)", &y_off);
    Dispatch base;
    base.bindings = {yb};
    if (!call.inputs.empty()) base.bindings.push_back(dev.window(call.inputs[0], "inputs[0] (x)", &x_off));
    const int wg = dev.workgroup_size();
    base.program = dev.program("generate.comp", {{op_define(call), ""},
                                                 {def::kYDtype, str(y.dtype)},
                                                 {"RANK", str(p.rank)},
                                                 {def::kWorkgroupSize, str(wg)}});
    std::vector<int32_t> shape, ys, xs;
    for (int d = 0; d < p.rank; ++d) {
        shape.push_back(to_i32(p.shape[d], "a dimension of y"));
        ys.push_back(to_i32(p.y_strides[d], "a stride of y"));
        xs.push_back(to_i32(p.x_strides[d], "a stride of x"));
    }
    const bool integer = p.arange_integer;
    base.uniforms = {uniform_uint("u_numel", {numel}),
                     uniform_int("u_y_offset", {y_off}),
                     uniform_int("u_x_offset", {x_off}),
                     uniform_uint("u_bits", {p.bits}),
                     uniform_int("u_diagonal", {p.diagonal}),
                     // arange: the low 32 bits of the integers (the rest never reaches y), or f32 bits
                     uniform_uint("u_start", {integer ? uint32_t(uint64_t(p.start_int)) : f32_bits(p.start_f32)}),
                     uniform_uint("u_step", {integer ? uint32_t(uint64_t(p.step_int)) : f32_bits(p.step_f32)}),
                     uniform_uint("u_random", {uint32_t(p.seed), uint32_t(p.seed >> 32), uint32_t(p.offset),
                                               uint32_t(p.offset >> 32)}),
                     uniform_float("u_a", p.a),
                     uniform_float("u_b", p.b),
                     uniform_uint("u_zero", {0u})};
    if (p.rank > 0) {
        base.uniforms.push_back(uniform_int("u_shape", shape));
        base.uniforms.push_back(uniform_int("u_y_stride", ys));
        base.uniforms.push_back(uniform_int("u_x_stride", xs));
    }
    std::vector<Dispatch> dispatches;
    add_chunks(dev, base, ceil_div(numel, uint64_t(wg)), dispatches);
    dev.submit(call.info->name, std::move(dispatches));
}

void register_generate_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Generate, run_generate, &kGenerateSplit});
}

}  // namespace gles
}  // namespace tgl
