// The layout ops, GLES against the CPU reference, bit for bit (ExactBits: NaN payloads aside, every
// bit must match, -0 included): random shapes of primes and 1s, every axis, every dtype, inputs
// permuted / stepped / negative-stride / stride-0 / padded / misaligned, non-contiguous outputs,
// empty tensors, and one copy past 65,535 workgroups.
#include "diff.h"

#include <numeric>

namespace diff {
namespace {

class LayoutDiff : public SeededTest {};

ValueGen values_for(tgl_dtype dt) {
    if (dt == TGL_DTYPE_BOOL) return bool_values(0.5);
    if (dt == TGL_DTYPE_F32 || dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16)
        return with_special_values(dt, float_values(dt, -100, 100), 0.1);
    return with_special_values(dt, int_values(dt, -1000, 1000), 0.1);
}

int64_t dim(Rng& rng) { return rng.pick(std::vector<int64_t>{1, 1, 2, 3, 5, 7, 11, 13}); }

Shape random_shape(Rng& rng, int rank) {
    Shape s(static_cast<size_t>(rank));
    for (auto& n : s) n = dim(rng);
    return s;
}

// A strided layout of a rank-5 or 6 shape can span hundreds of times its elements (a tile output
// once spanned 175 MB, past llvmpipe's 128 MiB storage blocks, and the plugin rightly refused it):
// such a view falls back to contiguous.
constexpr int64_t kMaxViewStorage = int64_t(1) << 22;
View bounded(View v, const Shape& shape) { return v.storage <= kMaxViewStorage ? v : contiguous(shape); }

// A random input layout (any of diff.h's kinds, or misaligned for 1- and 2-byte dtypes).
View input_view(Rng& rng, const Shape& shape, tgl_dtype dt) {
    if (tgl_dtype_size(dt) < 4 && rng.chance(0.25)) return bounded(make_view(shape, misaligned_layout(rng)), shape);
    Kind k = rng.pick(std::vector<Kind>{Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Negative,
                                        Kind::Broadcast, Kind::Padded, Kind::Mixed});
    return bounded(view_of(shape, k, rng, true), shape);
}
View output_view(Rng& rng, const Shape& shape, tgl_dtype dt) {
    if (tgl_dtype_size(dt) < 4 && rng.chance(0.25)) return bounded(make_view(shape, misaligned_layout(rng)), shape);
    Kind k = rng.pick(std::vector<Kind>{Kind::Contiguous, Kind::Contiguous, Kind::Permuted, Kind::Stepped,
                                        Kind::Negative, Kind::Padded, Kind::Mixed});
    return bounded(view_of(shape, k, rng, false), shape);
}

InputArg random_input(Rng& rng, tgl_dtype dt, const Shape& shape) {
    InputArg a;
    a.dtype = dt;
    a.view = input_view(rng, shape, dt);
    a.storage = random_storage(dt, a.view.storage, rng, values_for(dt));
    if (dt == TGL_DTYPE_I64)  // every 64-bit pattern (the values above stay within 2^53)
        for (int64_t i = 0; i < a.view.storage; ++i) a.storage.set_bits(i, uint64_t(rng.integer(INT64_MIN, INT64_MAX)));
    return a;
}
OutputArg random_output(Rng& rng, tgl_dtype dt, const Shape& shape) {
    OutputArg o;
    o.dtype = dt;
    o.view = output_view(rng, shape, dt);
    return o;
}

template <class P>
void check_op(tgl_op op, const P* params, std::vector<InputArg> ins, std::vector<OutputArg> outs, const std::string& what) {
    MultiSpec s;
    s.op = op;
    if (params) s.params = param_bytes(*params);
    s.inputs = std::move(ins);
    s.outputs = std::move(outs);
    s.mode.assign(s.outputs.size(), CompareMode::ExactBits);
    s.what = what;
    check(s);
}
void check_op(tgl_op op, std::vector<InputArg> ins, std::vector<OutputArg> outs, const std::string& what) {
    check_op<tgl_unary_params>(op, nullptr, std::move(ins), std::move(outs), what);
}

template <class P>
P zeroed() {
    P p{};
    p.struct_size = sizeof p;
    return p;
}

std::string label(const char* op, tgl_dtype dt, const Shape& s) {
    return std::string(op) + " " + dtype_name(dt) + " " + shape_str(s);
}

const int kIters = 14;  // per test, with the dtypes in turn

TEST_F(LayoutDiff, ContiguousPermuteReshapeExpand) {
    for (int it = 0; it < kIters; ++it) {
        tgl_dtype dt = all_dtypes()[size_t(it) % all_dtypes().size()];
        int rank = int(rng_.integer(0, 5));
        Shape s = random_shape(rng_, rank);
        check_op(TGL_OP_CONTIGUOUS, {random_input(rng_, dt, s)}, {random_output(rng_, dt, s)}, label("contiguous", dt, s));

        auto p = zeroed<tgl_permute_params>();
        std::vector<int> perm(static_cast<size_t>(rank));
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_.engine());
        Shape ps(static_cast<size_t>(rank));
        for (int d = 0; d < rank; ++d) {
            p.perm[d] = perm[size_t(d)] - (rng_.chance(0.3) ? rank : 0);  // negative entries too
            ps[size_t(d)] = s[size_t(perm[size_t(d)])];
        }
        check_op(TGL_OP_PERMUTE, &p, {random_input(rng_, dt, s)}, {random_output(rng_, dt, ps)}, label("permute", dt, s));

        // Reshape to the dims shuffled with random neighbours merged (same element count).
        Shape rs = s;
        std::shuffle(rs.begin(), rs.end(), rng_.engine());
        for (size_t i = 1; i < rs.size();)
            if (rng_.chance(0.4)) {
                rs[i - 1] *= rs[i];
                rs.erase(rs.begin() + long(i));
            } else {
                ++i;
            }
        check_op(TGL_OP_RESHAPE, {random_input(rng_, dt, s)}, {random_output(rng_, dt, rs)}, label("reshape", dt, s));

        // Expand: x is s with some dims 1 and maybe fewer leading dims.
        Shape xs(s.begin() + long(rng_.integer(0, rank)), s.end());
        for (auto& n : xs)
            if (rng_.chance(0.4)) n = 1;
        check_op(TGL_OP_EXPAND, {random_input(rng_, dt, xs)}, {random_output(rng_, dt, s)}, label("expand", dt, xs));
    }
}

TEST_F(LayoutDiff, SliceNarrowFlipEveryAxis) {
    for (int it = 0; it < kIters; ++it) {
        tgl_dtype dt = all_dtypes()[size_t(it) % all_dtypes().size()];
        int rank = int(rng_.integer(1, 4));
        Shape s = random_shape(rng_, rank);
        for (int axis = -rank; axis < rank; axis += int(rng_.integer(1, 2))) {
            const int a = axis < 0 ? axis + rank : axis;
            const int64_t n = s[size_t(a)];
            auto sp = zeroed<tgl_slice_params>();
            sp.axis = axis;
            sp.step = rng_.pick(std::vector<int64_t>{1, 2, 3, -1, -2, -5, INT64_MAX});
            sp.start = rng_.chance(0.2) ? (sp.step > 0 ? INT64_MIN : INT64_MAX) : rng_.integer(-n - 2, n + 2);
            sp.stop = rng_.chance(0.2) ? (sp.step > 0 ? INT64_MAX : INT64_MIN) : rng_.integer(-n - 2, n + 2);
            // Python's slice count, for the output shape (the plugins compute it themselves).
            int64_t b = sp.start, e = sp.stop, cnt = 0;
            auto adj = [&](int64_t v) {
                if (v < 0) { v += n; if (v < 0) v = sp.step < 0 ? -1 : 0; }
                else if (v >= n) v = sp.step < 0 ? n - 1 : n;
                return v;
            };
            b = adj(b);
            e = adj(e);
            if (sp.step > 0 && e > b) cnt = (e - b - 1) / sp.step + 1;
            if (sp.step < 0 && b > e) cnt = (b - e - 1) / -sp.step + 1;
            Shape ys = s;
            ys[size_t(a)] = cnt;
            check_op(TGL_OP_SLICE, &sp, {random_input(rng_, dt, s)}, {random_output(rng_, dt, ys)},
                     label("slice", dt, s) + " axis " + std::to_string(axis) + " " + std::to_string(sp.start) + ":" +
                         std::to_string(sp.stop) + ":" + std::to_string(sp.step));

            auto np = zeroed<tgl_narrow_params>();
            np.axis = axis;
            np.start = rng_.integer(-n, n);
            int64_t st = np.start < 0 ? np.start + n : np.start;
            np.length = rng_.integer(0, n - st);
            ys[size_t(a)] = np.length;
            check_op(TGL_OP_NARROW, &np, {random_input(rng_, dt, s)}, {random_output(rng_, dt, ys)},
                     label("narrow", dt, s) + " axis " + std::to_string(axis));
        }
        auto fp = zeroed<tgl_flip_params>();
        for (int d = 0; d < rank; ++d)
            if (rng_.chance(0.6)) fp.axes[fp.n_axes++] = d - (rng_.chance(0.5) ? rank : 0);
        check_op(TGL_OP_FLIP, &fp, {random_input(rng_, dt, s)}, {random_output(rng_, dt, s)},
                 label("flip", dt, s) + " of " + std::to_string(fp.n_axes) + " axes");
    }
}

TEST_F(LayoutDiff, ConcatSplitStackEveryAxis) {
    for (int it = 0; it < kIters; ++it) {
        tgl_dtype dt = all_dtypes()[size_t(it) % all_dtypes().size()];
        int rank = int(rng_.integer(1, 4));
        Shape s = random_shape(rng_, rank);
        int axis = int(rng_.integer(-rank, rank - 1));
        size_t a = size_t(axis < 0 ? axis + rank : axis);
        auto ap = zeroed<tgl_axis_params>();
        ap.axis = axis;

        // n parts of shape s with random sizes (some 0) along the axis; returns their total shape.
        auto random_parts = [&](int n, std::vector<Shape>& parts) {
            Shape total = s;
            total[a] = 0;
            for (int i = 0; i < n; ++i) {
                parts.push_back(s);
                parts.back()[a] = rng_.chance(0.15) ? 0 : dim(rng_);
                total[a] += parts.back()[a];
            }
            return total;
        };
        std::vector<Shape> in_shapes, out_shapes;
        Shape ys = random_parts(int(rng_.integer(1, 8)), in_shapes);
        std::vector<InputArg> ins;
        for (const Shape& xs : in_shapes) ins.push_back(random_input(rng_, dt, xs));
        check_op(TGL_OP_CONCAT, &ap, ins, {random_output(rng_, dt, ys)},
                 label("concat", dt, ys) + " of " + std::to_string(ins.size()) + " along " + std::to_string(axis));

        Shape xs = random_parts(int(rng_.integer(1, 4)), out_shapes);
        std::vector<OutputArg> outs;
        for (const Shape& part : out_shapes) outs.push_back(random_output(rng_, dt, part));
        check_op(TGL_OP_SPLIT, &ap, {random_input(rng_, dt, xs)}, outs,
                 label("split", dt, xs) + " into " + std::to_string(outs.size()) + " along " + std::to_string(axis));

        auto sp = zeroed<tgl_axis_params>();
        sp.axis = int(rng_.integer(-rank - 1, rank));
        size_t sa = size_t(sp.axis < 0 ? sp.axis + rank + 1 : sp.axis);
        int n_st = int(rng_.integer(1, 8));
        std::vector<InputArg> st;
        for (int i = 0; i < n_st; ++i) st.push_back(random_input(rng_, dt, s));
        Shape ss = s;
        ss.insert(ss.begin() + long(sa), n_st);
        check_op(TGL_OP_STACK, &sp, st, {random_output(rng_, dt, ss)},
                 label("stack", dt, s) + " of " + std::to_string(n_st) + " at " + std::to_string(sp.axis));
    }
}

TEST_F(LayoutDiff, PadRollTile) {
    for (int it = 0; it < kIters; ++it) {
        tgl_dtype dt = all_dtypes()[size_t(it) % all_dtypes().size()];
        int rank = int(rng_.integer(1, 4));
        Shape s = random_shape(rng_, rank);
        for (uint32_t mode : {TGL_PAD_CONSTANT, TGL_PAD_REFLECT, TGL_PAD_REPLICATE}) {
            auto pp = zeroed<tgl_pad_params>();
            pp.mode = mode;
            pp.value = rng_.pick(std::vector<double>{0, -1.5, 7, 1e10, -0.0});
            Shape ys = s;
            for (int d = 0; d < rank; ++d) {
                const int64_t n = s[size_t(d)];
                // Reflect pads stay below the size; the total stays >= 0 (negative pads crop).
                const int64_t hi = mode == TGL_PAD_REFLECT ? std::min<int64_t>(n - 1, 4) : 4;
                pp.before[d] = rng_.integer(-std::min<int64_t>(n, 2), hi);
                pp.after[d] = rng_.integer(-std::min<int64_t>(n + pp.before[d], 2), hi);
                ys[size_t(d)] = pp.before[d] + n + pp.after[d];
            }
            check_op(TGL_OP_PAD, &pp, {random_input(rng_, dt, s)}, {random_output(rng_, dt, ys)},
                     label("pad", dt, s) + " mode " + std::to_string(mode));
        }
        auto rp = zeroed<tgl_roll_params>();
        if (rng_.chance(0.3)) {
            rp.shifts[0] = rng_.integer(-40, 40);  // flattened
        } else {
            rp.n_axes = uint32_t(rng_.integer(1, rank + 1));
            for (uint32_t i = 0; i < rp.n_axes; ++i) {
                rp.axes[i] = int32_t(rng_.integer(-rank, rank - 1));
                rp.shifts[i] = rng_.integer(-30, 30);
            }
        }
        check_op(TGL_OP_ROLL, &rp, {random_input(rng_, dt, s)}, {random_output(rng_, dt, s)},
                 label("roll", dt, s) + " over " + std::to_string(rp.n_axes) + " axes");

        Shape ts(size_t(rng_.integer(0, 2)), 1);
        for (auto& n : ts) n = rng_.integer(1, 3);  // extra leading dims
        for (int64_t n : s) ts.push_back(n * rng_.integer(1, 3));
        check_op(TGL_OP_TILE, {random_input(rng_, dt, s)}, {random_output(rng_, dt, ts)}, label("tile", dt, s));
    }
}

TEST_F(LayoutDiff, EmptyTensors) {
    for (tgl_dtype dt : all_dtypes()) {
        Shape e = {3, 0, 2};
        check_op(TGL_OP_CONTIGUOUS, {random_input(rng_, dt, e)}, {random_output(rng_, dt, e)}, label("contiguous", dt, e));
        check_op(TGL_OP_RESHAPE, {random_input(rng_, dt, e)}, {random_output(rng_, dt, {0, 7})}, label("reshape", dt, e));
        auto pp = zeroed<tgl_pad_params>();
        pp.value = 1;
        pp.before[1] = 2;
        check_op(TGL_OP_PAD, &pp, {random_input(rng_, dt, e)}, {random_output(rng_, dt, {3, 2, 2})}, label("pad", dt, e));
        auto rp = zeroed<tgl_roll_params>();
        rp.shifts[0] = 3;
        check_op(TGL_OP_ROLL, &rp, {random_input(rng_, dt, e)}, {random_output(rng_, dt, e)}, label("roll", dt, e));
        auto ap = zeroed<tgl_axis_params>();
        ap.axis = 1;
        check_op(TGL_OP_SPLIT, &ap, {random_input(rng_, dt, {2, 3})}, {random_output(rng_, dt, {2, 0}), random_output(rng_, dt, {2, 3})},
                 label("split", dt, {2, 3}));
        check_op(TGL_OP_TILE, {random_input(rng_, dt, {0, 2})}, {random_output(rng_, dt, {2, 0, 4})}, label("tile", dt, {0, 2}));
    }
}

// 4100 x 4100 u8 elements transposed into a transposed (so non-contiguous) output: one invocation
// per element, more than 65,535 workgroups of up to 256.
TEST_F(LayoutDiff, CopyPastMaxWorkgroups) {
    const tgl_dtype dt = TGL_DTYPE_U8;
    Shape s = {4100, 4100};
    auto p = zeroed<tgl_permute_params>();
    p.perm[0] = 1;
    p.perm[1] = 0;
    OutputArg o;
    o.dtype = dt;
    Layout l;
    l.name = "transposed";
    l.perm = {1, 0};
    o.view = make_view(s, l);
    InputArg x;
    x.dtype = dt;
    x.view = contiguous(s);
    x.storage = random_storage(dt, x.view.storage, rng_, int_values(dt, 0, 255));
    check_op(TGL_OP_PERMUTE, &p, {x}, {o}, "permute u8 (4100, 4100) into a transposed view");
}

}  // namespace
}  // namespace diff
