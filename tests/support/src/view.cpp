// Views: logical tensors placed in a flat array of elements.
#include "tgl_test/support.h"

#include <algorithm>
#include <numeric>

namespace tgl_test {

int64_t numel(const Shape& shape) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
    size_t r = std::max(a.size(), b.size());
    Shape out(r);
    for (size_t d = 0; d < r; ++d) {
        int64_t na = d + a.size() >= r ? a[d + a.size() - r] : 1;
        int64_t nb = d + b.size() >= r ? b[d + b.size() - r] : 1;
        out[d] = na == 1 ? nb : na;
    }
    return out;
}

std::string shape_str(const Shape& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
        if (i) s += ", ";
        s += std::to_string(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
}

std::string View::describe() const {
    return layout + " view: shape " + shape_str(shape) + ", strides " + shape_str(strides) + ", offset " +
           std::to_string(offset) + " of " + std::to_string(storage) + " elements";
}

View make_view(const Shape& shape, const Layout& layout) {
    const int r = int(shape.size());
    for (int64_t s : shape)
        if (s < 0) throw Failure("make_view: negative size in shape " + shape_str(shape));
    std::vector<int> perm = layout.perm;
    if (perm.empty()) {
        perm.resize(size_t(r));
        std::iota(perm.begin(), perm.end(), 0);
    }
    std::vector<int64_t> steps = layout.steps;
    if (steps.empty()) steps.assign(size_t(r), 1);
    std::vector<bool> bcast = layout.broadcast;
    if (bcast.empty()) bcast.assign(size_t(r), false);
    if (int(perm.size()) != r || int(steps.size()) != r || int(bcast.size()) != r)
        throw Failure("make_view: layout '" + layout.name + "' does not match rank " + std::to_string(r));
    {
        std::vector<int> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (int d = 0; d < r; ++d)
            if (sorted[size_t(d)] != d) throw Failure("make_view: layout '" + layout.name + "' perm is not a permutation");
    }
    // Parent (contiguous) extents: parent dim perm[d] holds view dim d.
    std::vector<int64_t> parent(size_t(r), 1);
    for (int d = 0; d < r; ++d) {
        if (steps[size_t(d)] == 0) throw Failure("make_view: step 0 in layout '" + layout.name + "'");
        int64_t a = steps[size_t(d)] < 0 ? -steps[size_t(d)] : steps[size_t(d)];
        parent[size_t(perm[size_t(d)])] = bcast[size_t(d)] ? 1 : std::max<int64_t>(1, shape[size_t(d)] * a);
    }
    std::vector<int64_t> pstride(size_t(r), 1);
    int64_t total = 1;
    for (int p = r - 1; p >= 0; --p) {
        pstride[size_t(p)] = total;
        total *= parent[size_t(p)];
    }
    View v;
    v.shape = shape;
    v.strides.assign(size_t(r), 0);
    v.layout = layout.name;
    int64_t off = layout.pad_front;
    for (int d = 0; d < r; ++d) {
        if (bcast[size_t(d)]) continue;
        int64_t ps = pstride[size_t(perm[size_t(d)])];
        int64_t step = steps[size_t(d)];
        v.strides[size_t(d)] = ps * step;
        if (step < 0 && shape[size_t(d)] > 0) off += ps * (-step) * (shape[size_t(d)] - 1);
    }
    v.offset = off;
    v.storage = layout.pad_front + total + layout.pad_back;
    return v;
}

View contiguous(const Shape& shape) { return make_view(shape); }

Layout permuted_layout(int rank, Rng& rng) {
    Layout l;
    if (rank < 2) return l;
    l.name = "permuted";
    l.perm.resize(size_t(rank));
    std::iota(l.perm.begin(), l.perm.end(), 0);
    while (true) {
        std::shuffle(l.perm.begin(), l.perm.end(), rng.engine());
        for (int d = 0; d < rank; ++d)
            if (l.perm[size_t(d)] != d) return l;
    }
}

Layout stepped_layout(int rank, Rng& rng) {
    Layout l;
    if (rank < 1) return l;
    l.name = "stepped";
    l.steps.resize(size_t(rank));
    for (auto& s : l.steps) s = rng.integer(1, 3);
    l.steps[size_t(rng.integer(0, rank - 1))] = rng.integer(2, 3);
    l.pad_front = rng.integer(0, 3);
    return l;
}

Layout negative_layout(int rank, Rng& rng) {
    Layout l;
    if (rank < 1) return l;
    l.name = "negative-strides";
    l.steps.resize(size_t(rank));
    for (auto& s : l.steps) s = rng.pick(std::vector<int64_t>{-1, -2, 1});
    l.steps[size_t(rng.integer(0, rank - 1))] = -1;
    return l;
}

Layout broadcast_layout(const Shape& shape, Rng& rng) {
    Layout l;
    std::vector<int> candidates;
    for (int d = 0; d < int(shape.size()); ++d)
        if (shape[size_t(d)] > 1) candidates.push_back(d);
    if (candidates.empty()) return l;
    l.name = "broadcast-stride0";
    l.broadcast.assign(shape.size(), false);
    for (int d : candidates) l.broadcast[size_t(d)] = rng.chance(0.4);
    l.broadcast[size_t(rng.pick(candidates))] = true;
    return l;
}

Layout padded_layout(Rng& rng) {
    Layout l;
    l.name = "padded";
    l.pad_front = rng.integer(1, 17);
    l.pad_back = rng.integer(1, 17);
    return l;
}

Layout misaligned_layout(Rng& rng) {
    Layout l;
    l.name = "misaligned";
    l.pad_front = 2 * rng.integer(0, 3) + 1;
    l.pad_back = 2 * rng.integer(0, 3) + 1;
    return l;
}

Layout random_layout(const Shape& shape, Rng& rng, bool input) {
    const int r = int(shape.size());
    Layout l;
    l.name = "mixed";
    l.perm = permuted_layout(r, rng).perm;
    if (rng.chance(0.7)) {
        l.steps.resize(size_t(r));
        for (auto& s : l.steps) s = rng.pick(std::vector<int64_t>{1, 1, 2, -1, -2});
    }
    if (input && rng.chance(0.3)) l.broadcast = broadcast_layout(shape, rng).broadcast;
    l.pad_front = rng.integer(0, 5);
    l.pad_back = rng.integer(0, 5);
    return l;
}

namespace {

void require_storage_size(const char* who, int64_t elements, const View& v) {
    if (elements != v.storage)
        throw Failure(std::string(who) + ": storage has " + std::to_string(elements) + " elements, the view needs " +
                      std::to_string(v.storage));
}

// scatter() writes each logical element to one storage element, which a broadcast view cannot give.
void require_scatterable(const char* who, const View& v, size_t n_logical) {
    if (int64_t(n_logical) != v.numel())
        throw Failure(std::string(who) + ": " + std::to_string(n_logical) + " values for a view of " +
                      std::to_string(v.numel()) + " elements");
    for (size_t d = 0; d < v.shape.size(); ++d)
        if (v.strides[d] == 0 && v.shape[d] > 1) throw Failure(std::string(who) + ": view " + v.describe() + " broadcasts");
}

}  // namespace

std::vector<float> gather(const std::vector<float>& storage, const View& v) {
    require_storage_size("gather", int64_t(storage.size()), v);
    std::vector<float> out(static_cast<size_t>(v.numel()));
    for_each_offset(v, [&](int64_t i, int64_t off) { out[size_t(i)] = storage[size_t(off)]; });
    return out;
}

std::vector<float> scatter(const View& v, const std::vector<float>& logical, float gap) {
    require_scatterable("scatter", v, logical.size());
    std::vector<float> storage(size_t(v.storage), gap);
    for_each_offset(v, [&](int64_t i, int64_t off) { storage[size_t(off)] = logical[size_t(i)]; });
    return storage;
}

std::vector<double> gather(const Storage& storage, const View& v) {
    require_storage_size("gather", storage.size(), v);
    std::vector<double> out(static_cast<size_t>(v.numel()));
    for_each_offset(v, [&](int64_t i, int64_t off) { out[size_t(i)] = storage.value(off); });
    return out;
}

Storage scatter(tgl_dtype dt, const View& v, const std::vector<double>& logical, double gap) {
    require_scatterable("scatter", v, logical.size());
    Storage storage = Storage::zeros(dt, v.storage);
    const uint32_t gap_element = value_to_bits(dt, gap);
    for (int64_t i = 0; i < v.storage; ++i) storage.set_bits(i, gap_element);
    for_each_offset(v, [&](int64_t i, int64_t off) { storage.set_value(off, logical[size_t(i)]); });
    return storage;
}

}  // namespace tgl_test
