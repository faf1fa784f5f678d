// Host-side helpers shared by the GLES kernel files: 32-bit index checks, define values and the
// split of a 1-D grid into dispatches within the device's workgroup-count limits.
#pragma once

#include "dim_merge.h"
#include "gles_device.h"
#include "status.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace tgl {
namespace gles {

// GLSL ES 3.10 has no 64-bit integers: every index, offset and stride a shader sees is 32-bit.
inline int32_t to_i32(int64_t v, const char* what) {
    if (v < INT32_MIN || v > INT32_MAX)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "%s = %lld does not fit the 32-bit index arithmetic of GLSL ES 3.10", what,
             (long long)v);
    return int32_t(v);
}

// The same for n values (array uniforms).
inline std::vector<int32_t> to_i32s(const int64_t* v, int n, const char* what) {
    std::vector<int32_t> out;
    for (int d = 0; d < n; ++d) out.push_back(to_i32(v[d], what));
    return out;
}

inline uint32_t count_u32(int64_t n, const char* what) {
    if (n < 0 || n > INT32_MAX)
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "%s has %lld elements; GLSL ES 3.10 indexes with 32-bit integers, so at most 2147483647 are supported",
             what, (long long)n);
    return uint32_t(n);
}

inline uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

inline std::string str(long long v) { return std::to_string(v); }

// A dim of an index space walked by N operands at once: its size and each operand's stride.
template <size_t N>
struct MergedDim {
    int64_t n;
    int64_t s[N];
};

// The dims (shape[d], strides[k][d]) without size-1 dims, neighbours merged where contiguous in
// every operand (dim_merge.h), in order: fewer dims for the shader to walk (and fewer variants).
template <size_t N>
std::vector<MergedDim<N>> merge_dims(int rank, const int64_t* shape, const int64_t* const (&strides)[N]) {
    int64_t n[TGL_MAX_RANK], s[N][TGL_MAX_RANK];
    int64_t* s_of[N];
    for (size_t k = 0; k < N; ++k) s_of[k] = s[k];
    for (int d = 0; d < rank; ++d) {
        n[d] = shape[d];
        for (size_t k = 0; k < N; ++k) s[k][d] = strides[k][d];
    }
    const int merged = merge_dims_in_place(rank, n, int(N), s_of);
    std::vector<MergedDim<N>> out(static_cast<size_t>(merged));
    for (int d = 0; d < merged; ++d) {
        out[size_t(d)].n = n[d];
        for (size_t k = 0; k < N; ++k) out[size_t(d)].s[k] = s[k][d];
    }
    return out;
}

// merge_dims over a row plan's per-role stride table (strides[role][d]), e.g. NormPlan, GradPlan.
template <size_t N>
std::vector<MergedDim<N>> merge_role_dims(int rank, const int64_t* shape, const int64_t (*strides)[TGL_MAX_RANK]) {
    const int64_t* per_role[N];
    for (size_t k = 0; k < N; ++k) per_role[k] = strides[k];
    return merge_dims<N>(rank, shape, per_role);
}

// The uniforms of merged dims: shape_name[d] and stride_name[d * N + role] (none for no dims).
template <size_t N>
void role_dim_uniforms(const std::vector<MergedDim<N>>& dims, const char* shape_name, const char* stride_name, Dispatch& d) {
    if (dims.empty()) return;
    std::vector<int32_t> n, s;
    for (const MergedDim<N>& dim : dims) {
        n.push_back(to_i32(dim.n, "a dimension of an operand"));
        for (size_t k = 0; k < N; ++k) s.push_back(to_i32(dim.s[k], "a stride of an operand"));
    }
    d.uniforms.push_back(uniform_int(shape_name, n));
    d.uniforms.push_back(uniform_int(stride_name, s));
}

// One dispatch per grid chunk of a 1-D kernel, each with its u_group_base; at most max_groups
// workgroups per dispatch (a bound on one dispatch's run time where workgroups are heavy).
inline void add_chunks(GlesDevice& dev, const Dispatch& base, uint64_t groups, std::vector<Dispatch>& out,
                       uint64_t max_groups = UINT64_MAX) {
    for (uint64_t first = 0; first < groups; first += max_groups) {
        for (const GridChunk& c : dev.split_grid(std::min(groups - first, max_groups))) {
            Dispatch d = base;
            d.uniforms.push_back(uniform_uint("u_group_base", {uint32_t(first + c.base)}));
            d.groups[0] = c.x;
            d.groups[1] = c.y;
            d.groups[2] = 1;
            out.push_back(std::move(d));
        }
    }
}

// Kernel choice as ordered candidates: each either takes the work (plans and queues it, returns
// "") or declines with the reason, and takes nothing then; where none takes it, the error
// (RESOURCE_EXHAUSTED) lists every candidate's reason.
template <class... Args>
struct KernelCandidate {
    const char* name;
    std::string (*take)(Args...);
};
template <class T>
struct NoDeduce {
    using type = T;
};
template <size_t N, class... Args>
void take_first_candidate(const KernelCandidate<Args...> (&candidates)[N], const std::string& what,
                          typename NoDeduce<Args>::type... args) {
    std::string why;
    for (const KernelCandidate<Args...>& c : candidates) {
        const std::string declined = c.take(args...);
        if (declined.empty()) return;
        why += (why.empty() ? "" : "; ") + std::string(c.name) + ": " + declined;
    }
    fail(TGL_ERROR_RESOURCE_EXHAUSTED, "%s: no kernel fits (%s)", what.c_str(), why.c_str());
}

// The pack pass (glsl/pack.comp, pack.cpp): an operand copied as contiguous 32-bit words, row-major
// over `shape`, into `dst` from word dst_offset on; f32 values (an integer dtype converted), or
// with `index` the checked i32 values of an index (matmul's expert index).
struct PackSource {
    Binding window;      // the operand's window (GlesDevice::window)
    int32_t offset = 0;  // its first element in the window
    tgl_dtype dtype = TGL_DTYPE_F32;
    int64_t numel = 0;
    std::vector<int64_t> shape, strides;  // the walk, at most TGL_MAX_RANK dims; strides in elements
};
struct PackIndexCheck {
    GlesDevice::DeviceCheck check;
    int32_t limit;  // valid values are [0, limit)
    uint32_t op;    // the op id, for the error
    // The whole index was checked under `check` already (a piece of an op run in pieces,
    // window_split.cpp): one dispatch stores the values and the fail flag, raising nothing.
    bool checked = false;
};
void add_pack(GlesDevice& dev, const PackSource& src, const std::string& label, const Binding& dst, int64_t dst_offset,
              std::vector<Dispatch>& out, const PackIndexCheck* index = nullptr);
// add_pack of the non-empty float view t with its own shape and strides (`label` for messages).
void add_pack_f32(GlesDevice& dev, const TensorArg& t, const std::string& label, const Binding& dst, int64_t dst_offset,
                  std::vector<Dispatch>& out);

}  // namespace gles
}  // namespace tgl
