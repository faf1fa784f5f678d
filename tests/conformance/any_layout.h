// Random views against a host reference (the *OnAnyLayout tests of the unary, binary, reduce and
// matmul files). Both plugins follow the same shared index plans (validate.h), so a mistake there
// would look the same on both and the differential suite could not see it; these tests run ops on
// permuted, stepped, negative-stride, broadcast (stride 0) and padded views, with strided outputs,
// and check them exactly against obvious host loops over logical indices. Values are small
// integers, so every result is exact in f32.
#pragma once

#include "common.h"

#include <memory>
#include <string>
#include <vector>

namespace conf {

using Layouts = ConformanceTest;

// Row-major multi-index of a linear index.
inline std::vector<int64_t> unravel(int64_t i, const Shape& s) {
    std::vector<int64_t> idx(s.size());
    for (size_t d = s.size(); d-- > 0;) {
        idx[d] = s[d] ? i % s[d] : 0;
        i = s[d] ? i / s[d] : 0;
    }
    return idx;
}

inline int64_t ravel(const std::vector<int64_t>& idx, const Shape& s) {
    int64_t i = 0;
    for (size_t d = 0; d < s.size(); ++d) i = i * s[d] + idx[d];
    return i;
}

// Logical index into an operand of shape `in` broadcast (right-aligned) to `out`.
inline int64_t broadcast_index(const std::vector<int64_t>& out_idx, const Shape& out, const Shape& in) {
    std::vector<int64_t> idx(in.size());
    for (size_t d = 0; d < in.size(); ++d) {
        size_t od = d + out.size() - in.size();
        idx[d] = in[d] == 1 ? 0 : out_idx[od];
    }
    return ravel(idx, in);
}

inline Shape random_shape(Rng& rng, int min_rank, int max_rank, int64_t max_numel) {
    while (true) {
        int r = int(rng.integer(min_rank, max_rank));
        Shape s(static_cast<size_t>(r));
        for (auto& d : s) d = rng.pick(std::vector<int64_t>{1, 1, 2, 3, 5, 7});
        if (numel(s) <= max_numel) return s;
    }
}

// A suffix of `s` of random length with each dim set to 1 at probability 0.3: an operand shape
// that broadcasts to s.
inline Shape broadcastable_suffix(const Shape& s, Rng& rng) {
    Shape suffix(s.begin() + ptrdiff_t(rng.integer(0, int64_t(s.size()))), s.end());
    for (auto& v : suffix)
        if (rng.chance(0.3)) v = 1;
    return suffix;
}

// An input tensor with a random layout whose logical values are returned; a broadcast layout
// repeats its stored values along stride-0 dims, which gather() reproduces.
struct Input {
    std::unique_ptr<DeviceTensor> t;
    std::vector<float> logical;
};

inline Input make_input(Device& d, const Shape& s, Rng& rng) {
    Input in;
    in.t = std::make_unique<DeviceTensor>(d, make_view(s, random_layout(s, rng, true)));
    std::vector<float> storage = small_ints(rng, in.t->view().storage);
    in.t->set_storage(storage);
    in.logical = gather(storage, in.t->view());
    return in;
}

inline std::unique_ptr<DeviceTensor> make_output(Device& d, const Shape& s, Rng& rng) {
    auto t = std::make_unique<DeviceTensor>(d, make_view(s, random_layout(s, rng, false)));
    t->poison();
    return t;
}

inline std::string describe(const char* what, const std::vector<const DeviceTensor*>& ts) {
    std::string s = what;
    for (const DeviceTensor* t : ts) s += "\n  " + t->view().describe();
    return s;
}

}  // namespace conf
