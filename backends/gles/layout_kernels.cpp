// GLES host side of the Layout family: each copy step of the plan (backends/common/layout_rules.h)
// is one dispatch (or a few, past the workgroup-count limits) of glsl/copy.comp. Every dispatch of
// the op is built, and every 32-bit limit checked, before any is queued.
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"

namespace tgl {
namespace gles {
namespace {

int elem_log2(tgl_dtype dt) {
    const uint32_t size = tgl_dtype_size(dt);
    return size == 8 ? 3 : (size == 4 ? 2 : (size == 2 ? 1 : 0));
}

std::vector<int32_t> i32s(const int64_t* v, int n, const char* what) {
    std::vector<int32_t> out;
    for (int d = 0; d < n; ++d) out.push_back(to_i32(v[d], what));
    return out;
}

// Whether the step's output is one contiguous run of elements (row-major, unit innermost stride).
bool contiguous_out(const CopyStep& s) {
    if (s.linear) return s.rank == 0 || (s.rank == 1 && s.out_strides[0] == 1);
    int64_t expect = 1;
    for (int d = s.rank - 1; d >= 0; --d) {
        if (s.out_strides[d] != expect) return false;
        expect *= s.shape[d];
    }
    return true;
}

void add_step(GlesDevice& dev, const OpCall& call, const CopyStep& s, std::vector<Dispatch>& out) {
    const TensorArg& y = call.outputs[size_t(s.output)];
    const int lg = elem_log2(y.dtype);
    const int wg = dev.workgroup_size();
    const uint32_t count = count_u32(s.count, "a copy step of the op");
    int32_t y_win = 0, x_win = 0;
    Dispatch base;
    base.bindings.push_back(dev.window(y, "outputs (y)", &y_win));
    const bool has_x = s.input >= 0;
    if (has_x) {
        const TensorArg& x = call.inputs[size_t(s.input)];
        base.bindings.push_back(dev.window(x, "inputs (x)", &x_win));
        base.uniforms.push_back(uniform_int("u_x_offset", {to_i32(x_win + (s.in_offset - x.offset), "an input offset")}));
    }
    const bool word_out = lg < 3 && contiguous_out(s);  // 8-byte elements are whole words anyway
    int64_t y_start = y_win + (s.out_offset - y.offset);
    if (word_out && s.linear && s.rank == 1) y_start += s.out_lin;  // the run starts at out_lin
    base.uniforms.push_back(uniform_int("u_y_offset", {to_i32(y_start, "an output offset")}));
    base.uniforms.push_back(uniform_uint("u_count", {count}));
    base.uniforms.push_back(uniform_uint("u_value", {uint32_t(call.layout().value_bits)}));
    if (lg == 3) base.uniforms.push_back(uniform_uint("u_value_hi", {uint32_t(call.layout().value_bits >> 32)}));
    Defines defines = {{"ELEM_LOG2", str(lg)}, {"RANK", str(s.rank)}, {def::kWorkgroupSize, str(wg)}};
    if (s.rank > 0) {
        base.uniforms.push_back(uniform_int("u_shape", i32s(s.shape, s.rank, "a dim of the copy")));
        base.uniforms.push_back(uniform_int("u_y_stride", i32s(s.out_strides, s.rank, "a stride of an output")));
    }
    if (!has_x) defines.push_back({"NO_X", ""});
    if (word_out) defines.push_back({"WORD_OUT", ""});
    if (s.linear) {
        defines.push_back({"LINEAR", ""});
        defines.push_back({"IN_RANK", str(s.in_rank)});
        base.uniforms.push_back(uniform_uint("u_in_lin", {count_u32(s.in_lin, "the start of a run of x")}));
        base.uniforms.push_back(uniform_uint("u_out_lin", {count_u32(s.out_lin, "the start of a run of y")}));
        if (s.in_rank > 0) {
            base.uniforms.push_back(uniform_int("u_in_shape", i32s(s.in_shape, s.in_rank, "a dim of x")));
            base.uniforms.push_back(uniform_int("u_in_stride", i32s(s.in_lin_strides, s.in_rank, "a stride of x")));
        }
    } else if (has_x && s.rank > 0) {
        base.uniforms.push_back(uniform_int("u_x_stride", i32s(s.in_strides, s.rank, "a stride of an input")));
        if (s.has_boundary()) {
            defines.push_back({"BOUNDARY", ""});
            std::vector<int32_t> mode;
            for (int d = 0; d < s.rank; ++d) {
                mode.push_back(int32_t(s.mode[d]));
                // The last coordinate before the boundary rule must fit too.
                to_i32(s.start[d] + s.step[d] * (s.shape[d] - 1), "an input coordinate");
            }
            base.uniforms.push_back(uniform_int("u_start", i32s(s.start, s.rank, "an input coordinate")));
            base.uniforms.push_back(uniform_int("u_step", i32s(s.step, s.rank, "an input step")));
            base.uniforms.push_back(uniform_int("u_size", i32s(s.in_size, s.rank, "a dim of an input")));
            base.uniforms.push_back(uniform_int("u_mode", mode));
        }
    }
    base.program = dev.program("copy.comp", defines);
    uint64_t items = count;
    if (word_out) {
        const int sh = 2 - lg;
        items = uint64_t(((y_start + count - 1) >> sh) - (y_start >> sh) + 1);
    }
    add_chunks(dev, base, ceil_div(items, uint64_t(wg)), out);
}

}  // namespace

void run_layout(GlesDevice& dev, const OpCall& call) {
    std::vector<Dispatch> dispatches;
    for (const CopyStep& s : call.layout().steps) add_step(dev, call, s, dispatches);
    if (!dispatches.empty()) dev.submit(call.info->name, std::move(dispatches));
}

void register_layout_kernels(std::vector<GlesFamily>& families) {
    families.push_back({OpFamily::Layout, run_layout, &kLayoutSplit});
}

}  // namespace gles
}  // namespace tgl
