#include "generate_rules.h"
#include "op_families.h"

#include "dim_merge.h"
#include "dtype_bits.h"
#include "validate_util.h"

#include <cfloat>
#include <cmath>

namespace tgl {
namespace {

bool is_matrix_op(tgl_op op) { return op == TGL_OP_EYE || op == TGL_OP_TRIL || op == TGL_OP_TRIU; }

// The row-major index space of y (and x): see GeneratePlan. The last `keep` dims are copied as they
// are; the ones before them lose size-1 dims and merge where contiguous in y and x.
void index_space(GeneratePlan& p, const TensorArg& y, const TensorArg* x, int keep) {
    p.numel = y.numel;
    p.y_offset = y.offset;
    p.x_offset = x ? x->offset : 0;
    bool kept[TGL_MAX_RANK];
    for (int d = 0; d < y.rank; ++d) {
        p.shape[d] = y.shape[d];
        p.y_strides[d] = y.strides[d];
        p.x_strides[d] = x ? x->strides[d] : 0;
        kept[d] = d >= y.rank - keep;
    }
    int64_t* strides[2] = {p.y_strides, p.x_strides};
    p.rank = merge_dims_in_place(y.rank, p.shape, 2, strides, kept);
}

void require_finite(const OpInfo& info, const char* what, double v) {
    if (!std::isfinite(v))
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->%s of op '%s' must be a finite number, got %g", what, info.name, v);
}

void plan_arange(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    const TensorArg& y = call.outputs[0];
    tgl_arange_params prm = read_params(info, params, tgl_arange_params{sizeof(tgl_arange_params), 0, 0.0, 1.0});
    require_reserved_zero(info, prm.reserved);
    require_finite(info, "start", prm.start);
    require_finite(info, "step", prm.step);
    if (prm.step == 0.0) fail(TGL_ERROR_INVALID_ARGUMENT, "params->step of op 'arange' must not be 0");
    if (y.rank != 1)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op 'arange': outputs[0] (y) must be 1-D (its length is the count), got shape %s",
             shape_string(y.rank, y.shape).c_str());
    GeneratePlan& p = call.generate();
    const bool integer = y.dtype == TGL_DTYPE_I32 || y.dtype == TGL_DTYPE_I16 || y.dtype == TGL_DTYPE_I8 || y.dtype == TGL_DTYPE_U8;
    p.arange_integer = integer;
    if (integer) {
        // Exact integer arithmetic needs integral start and step (int64 range).
        const double lim = 9223372036854775808.0;  // 2^63
        for (const auto& [name, v] : {std::pair<const char*, double>{"start", prm.start}, {"step", prm.step}})
            if (std::trunc(v) != v || v < -lim || v >= lim)
                fail(TGL_ERROR_INVALID_ARGUMENT,
                     "params->%s of op 'arange' must be an integer in [-2^63, 2^63) for an integer y (%s), got %.17g; "
                     "use a float y and cast for fractional values",
                     name, dtype_name(y.dtype), v);
        p.start_int = int64_t(prm.start);
        p.step_int = int64_t(prm.step);
    } else {
        for (const auto& [name, v] : {std::pair<const char*, double>{"start", prm.start}, {"step", prm.step}})
            if (std::fabs(v) > double(FLT_MAX))
                fail(TGL_ERROR_INVALID_ARGUMENT,
                     "params->%s of op 'arange' must be within the f32 range for a float y (%s), got %g", name,
                     dtype_name(y.dtype), v);
        p.start_f32 = float(prm.start);
        p.step_f32 = float(prm.step);
        if (p.step_f32 == 0.0f)
            fail(TGL_ERROR_INVALID_ARGUMENT, "params->step of op 'arange' is %g, which is 0 in f32 (the arithmetic of a float y)",
                 prm.step);
    }
    index_space(p, y, nullptr, 1);
}

void plan_random(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    tgl_random_params prm = read_params(info, params, tgl_random_params{sizeof(tgl_random_params), 0, 0, 0, 0.0f, 1.0f});
    require_reserved_zero(info, prm.reserved);
    require_finite(info, "a", prm.a);
    require_finite(info, "b", prm.b);
    if (info.op == TGL_OP_RANDOM_UNIFORM) {
        if (!(prm.a <= prm.b))
            fail(TGL_ERROR_INVALID_ARGUMENT, "op 'random_uniform' needs params->a <= params->b (the range [a, b)), got a = %g, b = %g",
                 double(prm.a), double(prm.b));
        if (!std::isfinite(prm.b - prm.a))
            fail(TGL_ERROR_INVALID_ARGUMENT, "op 'random_uniform': params->b - params->a = %g - %g overflows f32",
                 double(prm.b), double(prm.a));
    } else if (prm.b < 0.0f) {
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->b (the standard deviation) of op 'random_normal' must be >= 0, got %g",
             double(prm.b));
    }
    GeneratePlan& p = call.generate();
    p.seed = prm.seed;
    p.offset = prm.offset;
    p.a = prm.a;
    p.b = prm.b;
    index_space(p, call.outputs[0], nullptr, 0);
}

}  // namespace

void plan_generate(OpCall& call, const void* params) {
    const OpInfo& info = *call.info;
    GeneratePlan& p = call.plan.emplace<GeneratePlan>();
    const TensorArg& y = call.outputs[0];
    switch (info.op) {
    case TGL_OP_ARANGE: return plan_arange(call, params);
    case TGL_OP_RANDOM_UNIFORM:
    case TGL_OP_RANDOM_NORMAL: return plan_random(call, params);
    case TGL_OP_FULL: {
        tgl_full_params prm = read_params(info, params, tgl_full_params{sizeof(tgl_full_params), 0, 0.0});
        require_reserved_zero(info, prm.reserved);
        p.bits = uint32_t(double_to_dtype_bits(prm.value, y.dtype));  // y is a word dtype
        return index_space(p, y, nullptr, 0);
    }
    default: break;
    }
    if (!is_matrix_op(info.op)) fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' is not a generate op", info.name);
    p.diagonal = read_params(info, params, tgl_diagonal_params{sizeof(tgl_diagonal_params), 0}).diagonal;
    const TensorArg* x = info.op == TGL_OP_EYE ? nullptr : &call.inputs[0];
    const TensorArg& m = x ? *x : y;
    const std::string label = x ? operand_label(info, false, 0) : operand_label(info, true, 0);
    if (m.rank < 2)
        fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s must have rank >= 2 (batch dims..., rows, cols), got shape %s",
             info.name, label.c_str(), shape_string(m.rank, m.shape).c_str());
    if (x) require_shape(info, y, operand_label(info, true, 0), x->rank, x->shape, "inputs[0] (x)");
    p.bits = uint32_t(double_to_dtype_bits(1.0, y.dtype));
    index_space(p, y, x, 2);
}

void register_generate_rules(std::vector<FamilyRules>& families) {
    families.push_back({OpFamily::Generate, plan_generate});
}

}  // namespace tgl
