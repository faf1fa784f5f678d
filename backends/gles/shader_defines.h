// Names of the shader defines that several shaders share: one spelling per meaning, named here so
// that every kernel and shader agrees (build_shader_source refuses the retired spellings: def::kWorkgroupSize for
// the workgroup size, "<ROLE>_DT" for a dtype).
#pragma once

namespace tgl {
namespace gles {
namespace def {

// Invocations of a 1-D workgroup (layout(local_size_x = WG_SIZE)).
inline constexpr char kWorkgroupSize[] = "WG_SIZE";
// Dtypes (a tgl_dtype number: glsl/dtype.glsl's DT_*), spelt <ROLE>_DTYPE: the op's own (one-dtype
// kernels), then one per operand role.
inline constexpr char kDtype[] = "DTYPE";
inline constexpr char kXDtype[] = "X_DTYPE";      // the input x
inline constexpr char kYDtype[] = "Y_DTYPE";      // the output y
inline constexpr char kADtype[] = "A_DTYPE";      // operands a, b, c (elementwise, matmul; conv: w, bias)
inline constexpr char kBDtype[] = "B_DTYPE";
inline constexpr char kCDtype[] = "C_DTYPE";
inline constexpr char kSrcDtype[] = "SRC_DTYPE";  // a packed operand (pack.comp)
inline constexpr char kKDtype[] = "K_DTYPE";      // attention's k, v and mask
inline constexpr char kVDtype[] = "V_DTYPE";
inline constexpr char kMaskDtype[] = "M_DTYPE";
inline constexpr char kIndexDtype[] = "I_DTYPE";  // an index operand (i32 or i64; dtype.glsl's TGL_LOAD_INDEX)

// The subgroup size where a variant uses GL_KHR_shader_subgroup (glsl/subgroup.glsl; absent: the
// shared-memory fallback). build_shader_source adds the extension directives for it.
inline constexpr char kSubgroupSize[] = "TGL_SUBGROUP_SIZE";

// Not a #define: a GLSL extension the variant needs ("#extension <value> : require" in the
// preamble, where GLSL ES wants it: before any other token).
inline constexpr char kRequireExtension[] = "REQUIRE_EXTENSION";

}  // namespace def
}  // namespace gles
}  // namespace tgl
