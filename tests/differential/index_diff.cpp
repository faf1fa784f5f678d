// Differential tests (GLES vs CPU) of the index ops: gather, index_select, scatter, scatter_add,
// one_hot on seeded random inputs: ranks 1-4 with sizes of primes and 1s, every axis (negative
// axes too), i32 and i64 indices, permuted / negative-stride / stride-0 / stepped / padded inputs and index views,
// misaligned f16/u8/bool views, non-contiguous outputs, duplicate targets, empty tensors, and an
// embedding lookup past 65,535 workgroups. Exact bits for everything but scatter_add of floats
// (NMSE: the GPU accumulates in f32, the CPU in double; i32 exact).
#include "diff.h"

namespace diff {
namespace {

const std::vector<int64_t>& sizes() {
    static const std::vector<int64_t> s = {1, 2, 3, 5, 7, 1, 11};
    return s;
}

ValueGen values_of(tgl_dtype dt, bool specials) {
    if (dt == TGL_DTYPE_BOOL) return bool_values();
    if (dt == TGL_DTYPE_F32 || dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16)
        return specials ? with_special_values(dt, float_values(dt, -10, 10), 0.1) : float_values(dt, -10, 10);
    const IntRange r = int_range(dt);
    return specials ? with_special_values(dt, int_values(dt, r.lo, r.hi), 0.1) : int_values(dt, -100, 100);
}

// A view of `shape` of kind k; f16/u8/bool/i8 contiguous views are often misaligned instead.
View view_for(tgl_dtype dt, const Shape& shape, Kind k, Rng& rng, bool input) {
    if (k == Kind::Contiguous && dtype_size(dt) < 4 && rng.chance(0.6)) return make_view(shape, misaligned_layout(rng));
    return view_of(shape, k, rng, input);
}

InputArg data_input(tgl_dtype dt, const Shape& shape, Kind k, Rng& rng, bool specials) {
    InputArg a;
    a.dtype = dt;
    a.view = view_for(dt, shape, k, rng, true);
    a.storage = random_storage(dt, a.view.storage, rng, values_of(dt, specials));
    return a;
}

// Indices in [0, limit) (limit 0: an empty index tensor is expected), i32 or i64 at random.
InputArg index_input(const Shape& shape, int64_t limit, Kind k, Rng& rng) {
    InputArg a;
    a.dtype = rng.chance(0.5) ? tgl_dtype(TGL_DTYPE_I64) : I32;
    a.view = view_of(shape, k, rng, true);
    a.storage = random_storage(a.dtype, a.view.storage, rng, int_values(a.dtype, 0, std::max<int64_t>(limit - 1, 0)));
    return a;
}

struct IndexCase {
    std::string name;
    std::function<MultiSpec(Rng&)> build;
};

struct Opts {
    tgl_op op;
    tgl_dtype dt;
    Shape x;          // x (one_hot: the index's shape)
    int axis;         // as passed (may be negative)
    Kind xk, ik, yk;  // layouts of x / src, index, y
    int64_t len;      // index length along the axis (one_hot: num_classes)
    bool full_rows;   // index as large as x off the axis
    uint32_t reduction = TGL_SCATTER_REPLACE;  // scatter (ABI 1.3)
};

MultiSpec build(const Opts& o, Rng& rng) {
    MultiSpec s;
    s.op = o.op;
    const int rank = int(o.x.size());
    const int axis = o.axis < 0 ? o.axis + std::max(rank, 1) : o.axis;
    const bool accumulates = o.op == TGL_OP_SCATTER_ADD || o.reduction == TGL_SCATTER_MUL;  // rounding differs
    const bool exact = !(accumulates && o.dt != I32);
    s.mode = {exact ? CompareMode::ExactBits : CompareMode::Nmse};
    s.tolerance = {o.dt == TGL_DTYPE_F16 ? 1e-6 : o.dt == TGL_DTYPE_BF16 ? tol::kBf16Store : 1e-7};
    s.what = "op " + std::to_string(o.op) + " " + dtype_name(o.dt) + " x " + shape_str(o.x) + " axis " + std::to_string(o.axis);
    if (o.op == TGL_OP_ONE_HOT) {
        s.inputs = {index_input(o.x, o.len, o.ik, rng)};
        Shape ys = o.x;
        ys.push_back(o.len);
        OutputArg y;
        y.dtype = o.dt;
        y.view = view_for(o.dt, ys, o.yk, rng, false);
        s.outputs = {y};
        return s;
    }
    s.params = param_bytes(tgl_axis_params{sizeof(tgl_axis_params), o.axis, o.reduction});
    s.what += " reduction " + std::to_string(o.reduction);
    // No special values where products or sums meet them: f32 and double intermediates overflow apart.
    const bool specials = !accumulates;
    InputArg x = data_input(o.dt, o.x, o.xk, rng, specials);
    const int64_t axis_size = rank ? o.x[size_t(axis)] : 1;
    OutputArg y;
    y.dtype = o.dt;
    if (o.op == TGL_OP_INDEX_SELECT) {
        Shape ys = o.x;
        ys[size_t(axis)] = o.len;
        s.inputs = {x, index_input({o.len}, axis_size, o.ik, rng)};
        y.view = view_for(o.dt, ys, o.yk, rng, false);
        s.outputs = {y};
        return s;
    }
    if (o.op == TGL_OP_SET_ROWS) {  // a 1-D index of K = len rows (duplicates where len > the axis), src (.., K, ..)
        Shape ss = o.x;
        ss[size_t(axis)] = o.len;
        s.inputs = {x, index_input({o.len}, axis_size, o.ik, rng), data_input(o.dt, ss, o.xk, rng, specials)};
        y.view = view_for(o.dt, o.x, o.yk, rng, false);
        s.outputs = {y};
        return s;
    }
    // gather / scatter: the index's shape, <= x's off the axis.
    Shape is = o.x;
    for (int d = 0; d < rank; ++d)
        is[size_t(d)] = d == axis ? o.len : (o.full_rows ? o.x[size_t(d)] : rng.integer(std::min<int64_t>(o.x[size_t(d)], 1), o.x[size_t(d)]));
    InputArg index = index_input(is, axis_size, o.ik, rng);
    if (o.op == TGL_OP_GATHER) {
        s.inputs = {x, index};
        y.view = view_for(o.dt, is, o.yk, rng, false);
    } else {
        Shape ss = is;  // src at least as large as the index, sometimes larger
        for (auto& n : ss)
            if (rng.chance(0.3)) n += 1;
        s.inputs = {x, index, data_input(o.dt, ss, o.xk, rng, specials)};
        y.view = view_for(o.dt, o.x, o.yk, rng, false);
    }
    s.outputs = {y};
    return s;
}

std::string kind_tag(Kind k) { return kind_name(k); }

std::vector<IndexCase> cases() {
    std::vector<IndexCase> out;
    const std::vector<std::pair<const char*, tgl_op>> ops = {{"gather", TGL_OP_GATHER},
                                                             {"index_select", TGL_OP_INDEX_SELECT},
                                                             {"scatter", TGL_OP_SCATTER},
                                                             {"scatter_add", TGL_OP_SCATTER_ADD},
                                                             {"one_hot", TGL_OP_ONE_HOT},
                                                             {"set_rows", TGL_OP_SET_ROWS}};
    const std::vector<Kind> kinds = {Kind::Contiguous, Kind::Permuted, Kind::Negative, Kind::Broadcast,
                                     Kind::Stepped,    Kind::Padded,   Kind::Mixed};
    const std::vector<Kind> out_kinds = {Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Padded, Kind::Mixed};
    auto dtypes_of = [](tgl_op op) {
        return op == TGL_OP_SCATTER_ADD ? std::vector<tgl_dtype>{TGL_DTYPE_F32, TGL_DTYPE_F16, I32, TGL_DTYPE_BF16} : word_dtypes();
    };
    auto add = [&](const std::string& name, Opts o) {
        out.push_back({name, [o](Rng& rng) { return build(o, rng); }});
    };
    int n = 0;
    for (const auto& op : ops) {
        const std::vector<tgl_dtype> dts = dtypes_of(op.second);
        // Every rank and axis, layouts and dtypes cycling.
        for (int rank = 1; rank <= 4; ++rank)
            for (int axis = 0; axis < rank; ++axis, ++n) {
                Opts o;
                o.op = op.second;
                o.dt = dts[size_t(n) % dts.size()];
                // random-looking but fixed sizes: primes and 1s
                for (int d = 0; d < rank; ++d) o.x.push_back(sizes()[size_t(n + 3 * d) % sizes().size()]);
                o.axis = (n % 3 == 0) ? axis - rank : axis;
                o.xk = kinds[size_t(n) % kinds.size()];
                o.ik = kinds[size_t(n / 2) % kinds.size()];
                o.yk = out_kinds[size_t(n) % out_kinds.size()];
                o.len = op.second == TGL_OP_ONE_HOT ? sizes()[size_t(n) % sizes().size()] + 1 : sizes()[size_t(n + 1) % sizes().size()] + 2;
                o.full_rows = n % 2 == 0;
                if (op.second == TGL_OP_ONE_HOT) o.axis = 0;
                add(std::string(op.first) + "_r" + std::to_string(rank) + "_axis" + std::to_string(axis) + "_" +
                        dtype_name(o.dt) + "_" + kind_tag(o.xk) + "_" + kind_tag(o.ik) + "_" + kind_tag(o.yk),
                    o);
            }
        // Every dtype once, (13, 1, 6) along axis 2, duplicates certain (len 17 > 6).
        for (tgl_dtype dt : dts) {
            Opts o{op.second, dt, {13, 1, 6}, 2, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, 17, true};
            if (op.second == TGL_OP_ONE_HOT) o.len = 9;
            add(std::string(op.first) + "_dtype_" + dtype_name(dt), o);
        }
        // Empty: an empty index (scatter: y = x), and an empty x with an empty index.
        Opts e{op.second, dts[0], {4, 3}, 1, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, 0, true};
        if (op.second == TGL_OP_ONE_HOT) e = {op.second, dts[0], {4, 0}, 0, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, 3, true};
        add(std::string(op.first) + "_empty_index", e);
        if (op.second != TGL_OP_ONE_HOT) {
            Opts ex{op.second, dts[0], {0, 3}, 1, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, 2, true};
            add(std::string(op.first) + "_empty_x", ex);
        }
        // Rank 0.
        Opts r0{op.second, dts[0], {}, op.second == TGL_OP_ONE_HOT ? 0 : -1, Kind::Contiguous, Kind::Contiguous,
                Kind::Contiguous, op.second == TGL_OP_ONE_HOT ? 4 : 1, true};
        if (op.second != TGL_OP_INDEX_SELECT && op.second != TGL_OP_SET_ROWS) add(std::string(op.first) + "_scalar", r0);
    }
    // scatter's reductions (ABI 1.3): duplicates certain (17 indices into 6), every dtype they take,
    // strided and negative layouts, an empty index, rank 0, long rows.
    const char* const red_names[] = {"", "mul", "amin", "amax"};
    for (uint32_t red : {uint32_t(TGL_SCATTER_MUL), uint32_t(TGL_SCATTER_AMIN), uint32_t(TGL_SCATTER_AMAX)}) {
        const std::string n = std::string("scatter_") + red_names[red];
        for (tgl_dtype dt : std::vector<tgl_dtype>{TGL_DTYPE_F32, TGL_DTYPE_F16, I32, TGL_DTYPE_BF16}) {
            Opts o{TGL_OP_SCATTER, dt, {13, 1, 6}, 2, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, 17, true, red};
            add(n + "_dtype_" + dtype_name(dt), o);
            Opts st{TGL_OP_SCATTER, dt, {7, 5, 3}, -3, Kind::Negative, Kind::Permuted, Kind::Stepped, 11, false, red};
            add(n + "_strided_" + dtype_name(dt), st);
        }
        add(n + "_empty_index", {TGL_OP_SCATTER, TGL_DTYPE_F32, {4, 3}, 1, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, 0, true, red});
        add(n + "_scalar", {TGL_OP_SCATTER, TGL_DTYPE_F32, {}, -1, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, 1, true, red});
        add(n + "_long_rows", {TGL_OP_SCATTER, TGL_DTYPE_F32, {3, 40}, 1, Kind::Padded, Kind::Contiguous, Kind::Mixed, 300, true, red});
    }
    // Long rows with many duplicates (the quadratic owner loop, kept small for llvmpipe).
    add("scatter_add_long_rows", {TGL_OP_SCATTER_ADD, TGL_DTYPE_F32, {3, 300}, 1, Kind::Negative, Kind::Permuted, Kind::Stepped, 900, true});
    add("scatter_long_rows", {TGL_OP_SCATTER, TGL_DTYPE_F16, {300, 2}, 0, Kind::Permuted, Kind::Negative, Kind::Padded, 700, true});
    // Index rows past llvmpipe's 65,535 loop passes per invocation: every index hits y's one
    // element (x of shape (1,)), so its owner walks the whole row.
    add("scatter_add_row_65539_i32", {TGL_OP_SCATTER_ADD, I32, {1}, 0, Kind::Contiguous, Kind::Negative, Kind::Contiguous, 65539, true});
    add("scatter_row_65539", {TGL_OP_SCATTER, TGL_DTYPE_F32, {1}, 0, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, 65539, true});
    // set_rows with 3000 positions into 7 rows: the duplicate pass compares every later position
    // (several dispatches where the loop budget is limited).
    add("set_rows_long_index", {TGL_OP_SET_ROWS, TGL_DTYPE_F32, {7, 5}, 0, Kind::Stepped, Kind::Negative, Kind::Contiguous, 3000, true});
    // Past 65,535 workgroups: an embedding lookup of 4200 rows of 4096 u8 (17.2M elements).
    add("index_select_embedding_big", {TGL_OP_INDEX_SELECT, TGL_DTYPE_U8, {97, 4096}, 0, Kind::Contiguous, Kind::Contiguous,
                                       Kind::Contiguous, 4200, true});
    return out;
}

// gtest prints a failing case's parameter with this (instead of its bytes).
void PrintTo(const IndexCase& c, std::ostream* os) { *os << c.name; }

class IndexDiffCases : public SeededTestWithParam<IndexCase> {};

TEST_P(IndexDiffCases, MatchesReference) { check(GetParam().build(rng_)); }

std::string index_case_name(const ::testing::TestParamInfo<IndexCase>& info) { return info.param.name; }

INSTANTIATE_TEST_SUITE_P(IndexDiff, IndexDiffCases, ::testing::ValuesIn(cases()), index_case_name);

// scatter_add of 65,539 f32 ones into one element: the exact count on both plugins (a cut-short
// owner loop lost the last ones; NMSE would not see 4 of 65,539).
class IndexDiffLongRow : public SeededTest {};

TEST_F(IndexDiffLongRow, ScatterAddOnesCountsExactly) {
    const int64_t n = 65539;
    MultiSpec s = build({TGL_OP_SCATTER_ADD, TGL_DTYPE_F32, {1}, 0, Kind::Contiguous, Kind::Contiguous, Kind::Contiguous, n, true}, rng_);
    s.inputs[0].storage = Storage::from_values(TGL_DTYPE_F32, std::vector<double>(size_t(s.inputs[0].view.storage), 0.0));
    s.inputs[2].storage = Storage::from_values(TGL_DTYPE_F32, std::vector<double>(size_t(s.inputs[2].view.storage), 1.0));
    s.mode = {CompareMode::ExactBits};
    check(s);
    for (Role role : {Role::Reference, Role::Subject})
        EXPECT_EQ(run_op_values(shared_device(role), s.op, s.params.data(), s.inputs, s.outputs)[0][0], double(n));
}

}  // namespace
}  // namespace diff
