// Helpers of argument validation shared by validate.cpp and the family rule files
// (*_rules.cpp): operand labels for messages, params structs, axes, broadcasting, shapes.
// Internal to tgl_common; every failure throws tgl::Error with a message naming the argument.
#pragma once

#include "status.h"
#include "validate.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <string>

namespace tgl {

// operand_label(...) + suffix into buf[n] without formatting or allocation (run_op's hot path).
inline const char* operand_label_into(char* buf, size_t n, const OpInfo& info, bool output, uint32_t index,
                                      const char* suffix = "") {
    uint32_t slot = output ? info.n_inputs + index : index;
    const char* name = slot < uint32_t(kMaxOperands) ? info.operand_names[slot] : nullptr;
    char num[12];
    int k = 0;
    do num[k++] = char('0' + index % 10); while ((index /= 10) && k < 11);
    size_t at = 0;
    auto put = [&](const char* s) {
        while (*s && at + 1 < n) buf[at++] = *s++;
    };
    put(output ? "outputs[" : "inputs[");
    while (k > 0 && at + 1 < n) buf[at++] = num[--k];
    put("]");
    if (name) {
        put(" (");
        put(name);
        put(")");
    }
    put(suffix);
    buf[at] = '\0';
    return buf;
}

// "inputs[1] (b)" / "outputs[0] (y)"
inline std::string operand_label(const OpInfo& info, bool output, uint32_t index) {
    uint32_t slot = output ? info.n_inputs + index : index;
    const char* name = slot < uint32_t(kMaxOperands) ? info.operand_names[slot] : nullptr;
    return format("%s[%u]%s%s%s", output ? "outputs" : "inputs", index, name ? " (" : "",
                  name ? name : "", name ? ")" : "");
}

// The published sizes of params struct P (ops.h: TGL_<STRUCT>_SIZE_V1_n), oldest first, the last
// being sizeof(P). A struct that a minor has grown specialises this with its older sizes, e.g.
//   template <> struct PublishedSizes<tgl_x_params> {
//       static constexpr uint32_t sizes[] = {TGL_X_PARAMS_SIZE_V1_2, TGL_X_PARAMS_SIZE_V1_3}; };
template <class P>
struct PublishedSizes {
    static constexpr uint32_t sizes[] = {uint32_t(sizeof(P))};
};

// The structs that a minor has grown (ops.h: their TGL_<STRUCT>_SIZE_V1_n).
template <>
struct PublishedSizes<tgl_arg_reduce_params> {
    static constexpr uint32_t sizes[] = {TGL_ARG_REDUCE_PARAMS_SIZE_V1_0, TGL_ARG_REDUCE_PARAMS_SIZE_V1_3};
};
template <>
struct PublishedSizes<tgl_axis_params> {
    static constexpr uint32_t sizes[] = {TGL_AXIS_PARAMS_SIZE_V1_0, TGL_AXIS_PARAMS_SIZE_V1_3};
};

// tgl_axis_params of an op other than scatter: its reduction must be 0.
inline void require_no_reduction(const OpInfo& info, const tgl_axis_params& p) {
    if (p.reduction != 0)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->reduction of op '%s' must be 0 (a reduction is scatter's), got %u",
             info.name, p.reduction);
}

// "8 or 12" for the message of a struct_size that is not published.
template <class P>
std::string published_sizes_text() {
    const auto& sizes = PublishedSizes<P>::sizes;
    std::string s;
    for (size_t i = 0; i < std::size(sizes); ++i)
        s += (i == 0 ? "" : i + 1 == std::size(sizes) ? " or " : ", ") + std::to_string(sizes[i]);
    return s;
}

// Reads params of the op's struct type; NULL gives `defaults` (TGL-P-9). struct_size must be a
// published size of P: a shorter one comes from a host built against an older minor, and the
// fields it lacks keep their values from `defaults`, the documented NULL-params defaults.
template <class P>
P read_params(const OpInfo& info, const void* params, const P& defaults) {
    constexpr const auto& sizes = PublishedSizes<P>::sizes;
    static_assert(sizes[std::size(sizes) - 1] == sizeof(P), "the newest published size of a params struct is its sizeof");
    if (!params) return defaults;
    uint32_t size;
    std::memcpy(&size, params, sizeof size);
    if (std::find(std::begin(sizes), std::end(sizes), size) == std::end(sizes))
        fail(TGL_ERROR_PARAMS_SIZE, "params->struct_size is %u but op '%s' takes a %s-byte params struct", size,
             info.name, published_sizes_text<P>().c_str());
    P p = defaults;
    std::memcpy(&p, params, size);
    p.struct_size = uint32_t(sizeof(P));
    return p;
}

// A tgl_activation params field (fused epilogues): one of TGL_ACTIVATION_*.
inline void require_activation(const OpInfo& info, uint32_t activation) {
    if (activation >= TGL_ACTIVATION_COUNT_V1_0)
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "params->activation of op '%s' must be a TGL_ACTIVATION_* value (0..%d), got %u", info.name,
             TGL_ACTIVATION_COUNT_V1_0 - 1, activation);
}

inline void require_reserved_zero(const OpInfo& info, uint32_t reserved) {
    if (reserved != 0)
        fail(TGL_ERROR_INVALID_ARGUMENT, "params->reserved of op '%s' must be 0, got %u", info.name, reserved);
}

// `axis` (negative counts from the end) of a tensor of `rank` >= 1 in [-rank, rank); returns it
// in [0, rank). `what` names the parameter ("params->axis"). Throws AXIS_OUT_OF_RANGE.
inline int normalize_axis(int32_t axis, int rank, const char* what, const char* tensor = "x") {
    if (axis < -rank || axis >= rank)
        fail(TGL_ERROR_AXIS_OUT_OF_RANGE, "%s = %d is out of range for %s of rank %d (valid: %d..%d)", what, axis,
             tensor, rank, -rank, rank - 1);
    return axis < 0 ? axis + rank : axis;
}

// One axis of inputs[0] (ArgReduce, Scan, ...): `axis` in [-rank, rank) (rank 0: -1 or 0, a
// single element). Returns the normalised axis, or -1 for rank 0.
inline int one_axis(const OpCall& call, int32_t axis) {
    const TensorArg& x = call.inputs[0];
    if (x.rank == 0) {
        if (axis < -1 || axis > 0)
            fail(TGL_ERROR_AXIS_OUT_OF_RANGE, "params->axis = %d is out of range for x of rank 0 (valid: -1..0)", axis);
        return -1;
    }
    return normalize_axis(axis, x.rank, "params->axis");
}

inline bool same_shape(const TensorArg& a, const TensorArg& b) {
    return a.rank == b.rank && std::equal(a.shape, a.shape + a.rank, b.shape);
}

// Throws SHAPE_MISMATCH unless `got` has shape (rank, shape): "op 'x': outputs[0] (y) has shape
// (2, 3) but <why> gives (3, 2)".
inline void require_shape(const OpInfo& info, const TensorArg& got, const std::string& got_label, int rank,
                          const int64_t* shape, const char* why) {
    if (got.rank == rank && std::equal(shape, shape + rank, got.shape)) return;
    fail(TGL_ERROR_SHAPE_MISMATCH, "op '%s': %s has shape %s but %s gives %s", info.name, got_label.c_str(),
         shape_string(got.rank, got.shape).c_str(), why, shape_string(rank, shape).c_str());
}

// Right-aligned NumPy broadcasting of an input onto the output shape: strides for every output
// dim (0 where the input broadcasts). Throws SHAPE_MISMATCH.
inline void broadcast_strides(const TensorArg& in, const std::string& in_label, const TensorArg& out,
                              int64_t* strides) {
    if (in.rank > out.rank)
        fail(TGL_ERROR_SHAPE_MISMATCH, "%s of shape %s has more dims than the output shape %s",
             in_label.c_str(), shape_string(in.rank, in.shape).c_str(),
             shape_string(out.rank, out.shape).c_str());
    int lead = out.rank - in.rank;
    for (int d = 0; d < out.rank; ++d) {
        if (d < lead) { strides[d] = 0; continue; }
        int64_t n = in.shape[d - lead];
        if (n == out.shape[d]) strides[d] = n == 1 ? 0 : in.strides[d - lead];
        else if (n == 1) strides[d] = 0;
        else
            fail(TGL_ERROR_SHAPE_MISMATCH, "%s of shape %s does not broadcast to the output shape %s (dim %d: %lld vs %lld)",
                 in_label.c_str(), shape_string(in.rank, in.shape).c_str(),
                 shape_string(out.rank, out.shape).c_str(), d, (long long)n, (long long)out.shape[d]);
    }
}

}  // namespace tgl
