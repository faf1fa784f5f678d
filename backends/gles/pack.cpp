// The pack pass (glsl/pack.comp): operands staged as contiguous 32-bit words in a scratch block,
// for every kernel that does so (dispatch_util.h).
#include "dispatch_util.h"

namespace tgl {
namespace gles {

void add_pack(GlesDevice& dev, const PackSource& src, const std::string& label, const Binding& dst, int64_t dst_offset,
              std::vector<Dispatch>& out, const PackIndexCheck* index) {
    const uint32_t count = count_u32(src.numel, label.c_str());
    if (count == 0) return;
    // Size-1 dims dropped and contiguous neighbours merged: fewer dims to walk, fewer variants.
    const int64_t* strides[1] = {src.strides.data()};
    const std::vector<MergedDim<1>> dims = merge_dims<1>(int(src.shape.size()), src.shape.data(), strides);
    const int wg = dev.workgroup_size();
    Defines defs = {{def::kSrcDtype, str(src.dtype)}, {"PACK_RANK", str(long(dims.size()))}, {def::kWorkgroupSize, str(wg)}};
    if (index) defs.emplace_back("PACK_INDEX", "");
    Dispatch d;
    d.program = dev.program("pack.comp", defs);
    d.bindings = {src.window, dst};
    d.uniforms = {uniform_uint("u_count", {count}), uniform_int("u_src_offset", {src.offset}),
                  uniform_int("u_dst_offset", {to_i32(dst_offset, "a packed operand's place in its scratch block")})};
    if (!dims.empty()) {
        std::vector<int32_t> n, s;
        for (const MergedDim<1>& dim : dims) {
            n.push_back(to_i32(dim.n, label.c_str()));
            s.push_back(to_i32(dim.s[0], label.c_str()));
        }
        d.uniforms.push_back(uniform_int("u_pack_shape", n));
        d.uniforms.push_back(uniform_int("u_pack_stride", s));
    }
    const uint64_t groups = ceil_div(count, uint64_t(wg));
    if (!index) {
        add_chunks(dev, d, groups, out);
        return;
    }
    // The index: a check dispatch, then the report dispatch that also publishes the fail flag
    // (checked before: one dispatch that stores the values and the flag).
    d.bindings.push_back(index->check.status);
    d.uniforms.push_back(uniform_int("u_limit", {index->limit}));
    d.uniforms.push_back(uniform_uint("u_op", {index->op}));
    d.uniforms.push_back(uniform_uint("u_check_seq", {index->check.seq}));
    d.uniforms.push_back(uniform_uint("u_checked", {index->checked ? 1u : 0u}));
    if (index->checked) {
        d.uniforms.push_back(uniform_uint("u_report", {0u}));
        add_chunks(dev, d, groups, out);
        return;
    }
    Dispatch report = d;
    d.uniforms.push_back(uniform_uint("u_report", {0u}));
    report.uniforms.push_back(uniform_uint("u_report", {1u}));
    add_chunks(dev, d, groups, out);
    add_chunks(dev, report, groups, out);
}

void add_pack_f32(GlesDevice& dev, const TensorArg& t, const std::string& label, const Binding& dst,
                  int64_t dst_offset, std::vector<Dispatch>& out) {
    PackSource src;
    src.window = dev.window(t, label.c_str(), &src.offset);
    src.dtype = t.dtype;
    src.numel = t.numel;
    src.shape.assign(t.shape, t.shape + t.rank);
    src.strides.assign(t.strides, t.strides + t.rank);
    add_pack(dev, src, label, dst, dst_offset, out);
}

}  // namespace gles
}  // namespace tgl
