// The reduce family, with the arg-reductions (argmax, argmin) and scans (cumsum, cumprod), whose
// cases come from one table with logsumexp .. norm: GLES against the CPU reference.
//
// Diff/Reduce (sum, mean, max, min, prod): every single axis of a rank-4 tensor, every pair, all,
// keepdims both ways; negative axes; rank 0 and 8; empty axes; non-contiguous inputs and outputs;
// long rows; special values; in f32 and (cases named F16) f16, whose contiguous views start at odd
// element offsets half the time. Diff/ReduceMore, ReduceMoreLong: the other ops, below.
//
// Tolerance: NMSE 1e-6 (tol::kReduction) for both. f32: a tree of f32 sums against a double
// accumulator. f16: the GPU computes in f32 and rounds once to f16, the reference computes in
// double and rounds once: each result is within one f16 rounding (relative 2^-11, squared 2.4e-7)
// of the exact value, and the two differ by at most one f16 ulp (2^-10, squared 9.5e-7) where
// the f32 error moves a value across a rounding boundary, which few elements do; the NMSE stays
// far below 1e-6 unless the GPU is wrong (a missed rounding, an f16 accumulator, a dropped
// element: errors of 1e-3 and more).
#include "diff.h"

#include <algorithm>

namespace diff {
namespace {

struct ReduceOp {
    const char* name;
    tgl_op op;
    Gen gen;
};

const std::vector<ReduceOp>& reduce_ops() {
    static const std::vector<ReduceOp> ops = {
        {"sum", TGL_OP_SUM, uniform(-0.9, 1.1)},  // off-centre: no catastrophic cancellation
        {"mean", TGL_OP_MEAN, uniform(-0.9, 1.1)},
        {"max", TGL_OP_MAX, uniform(-1, 1)},
        {"min", TGL_OP_MIN, uniform(-1, 1)},
        {"prod", TGL_OP_PROD, uniform(0.8, 1.2)},  // products of hundreds of values stay normal
    };
    return ops;
}

Shape reduced_shape(const Shape& x, const std::vector<int>& axes, bool keepdims) {
    std::vector<bool> red(x.size(), axes.empty());
    for (int a : axes) red[size_t(a < 0 ? a + int(x.size()) : a)] = true;
    Shape y;
    for (size_t d = 0; d < x.size(); ++d) {
        if (!red[d]) y.push_back(x[d]);
        else if (keepdims) y.push_back(1);
    }
    return y;
}

Spec reduce_spec(const ReduceOp& o, const Shape& xs, const std::vector<int>& axes, bool keepdims, Kind in, Kind out,
                 const Gen& gen, Rng& rng, tgl_dtype dt = TGL_DTYPE_F32) {
    Spec s;
    s.op = o.op;
    tgl_reduce_params p{};
    p.struct_size = sizeof p;
    p.keepdims = keepdims;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    s.params = param_bytes(p);
    s.inputs.push_back(operand(view_of(xs, in, rng, true, dt), rng, gen));
    Shape ys = reduced_shape(xs, axes, keepdims);
    s.out = view_of(ys, out, rng, false, dt);
    s.tolerance = tol::kReduction;
    std::string ax;
    for (int a : axes) ax += (ax.empty() ? "" : ", ") + std::to_string(a);
    s.what = std::string(o.name) + " of " + shape_str(xs) + " (" + kind_name(in) + ") over axes {" +
             (axes.empty() ? std::string("all") : ax) + "}" + (keepdims ? " keepdims" : "") + " -> " + shape_str(ys) +
             " (" + kind_name(out) + ")" + (dt == TGL_DTYPE_F32 ? "" : " " + dtype_name(dt));
    return s;
}

// The f16 or bf16 form of an f32 spec: the same views, the input values rounded to dt, y dt.
MultiSpec as_16bit(const Spec& s, tgl_dtype dt) {
    MultiSpec m;
    m.op = s.op;
    m.params = s.params;
    for (const Operand& o : s.inputs) {
        InputArg a;
        a.dtype = dt;
        a.view = o.view;
        a.storage = Storage::from_values(dt, std::vector<double>(o.storage.begin(), o.storage.end()));
        m.inputs.push_back(a);
    }
    OutputArg y;
    y.dtype = dt;
    y.view = s.out;
    m.outputs = {y};
    m.tolerance = {tol::of_store(dt, s.tolerance)};
    m.what = s.what + (dt == TGL_DTYPE_BF16 ? " bf16" : "");
    return m;
}

// A case in one dtype (f32, f16 or bf16).
struct ReduceCase {
    std::string name;
    tgl_dtype dtype;
    std::function<Spec(Rng&, tgl_dtype)> build;
};
std::string reduce_case_name(const ::testing::TestParamInfo<ReduceCase>& info) { return info.param.name; }
void PrintTo(const ReduceCase& c, std::ostream* os) { *os << c.name; }

std::string axes_name(const std::vector<int>& axes) {
    if (axes.empty()) return "all";
    std::string n;
    for (int a : axes) n += (n.empty() ? "" : "_") + (a < 0 ? "m" + std::to_string(-a) : std::to_string(a));
    return n;
}

std::vector<ReduceCase> reduce_cases() {
    std::vector<ReduceCase> cases;
    // Every case in f32; in f16 too unless it is one of the few large ones (f16 has its own
    // long-row and many-output cases of moderate size).
    auto push = [&cases](const std::string& name, std::function<Spec(Rng&, tgl_dtype)> build, bool f16, bool f32 = true) {
        if (f32) cases.push_back({name, TGL_DTYPE_F32, build});
        if (f16) cases.push_back({name.substr(0, name.find('_')) + "_F16" + name.substr(name.find('_')), TGL_DTYPE_F16, build});
    };
    const Shape x4 = {3, 5, 7, 11};
    std::vector<std::vector<int>> axis_sets = {{0}, {1}, {2}, {3}};
    for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j) axis_sets.push_back({i, j});
    axis_sets.push_back({});
    for (const ReduceOp& o : reduce_ops()) {
        const std::string n = o.name;
        auto add = [&](const std::string& name, Shape xs, std::vector<int> axes, bool keep, Kind in, Kind out,
                       bool f32 = true) {
            int64_t elements = 1;
            for (int64_t d : xs) elements *= d;
            push(n + "_" + name, [&o, xs, axes, keep, in, out](Rng& r, tgl_dtype dt) {
                     return reduce_spec(o, xs, axes, keep, in, out, o.gen, r, dt);
                 }, elements <= 400000, f32);
        };
        for (const auto& axes : axis_sets)
            for (bool keep : {false, true})
                add("axes_" + axes_name(axes) + (keep ? "_keep" : ""), x4, axes, keep, Kind::Contiguous, Kind::Contiguous);
        add("axes_m1", x4, {-1}, false, Kind::Contiguous, Kind::Contiguous);
        add("axes_m4_m2_keep", x4, {-4, -2}, true, Kind::Contiguous, Kind::Contiguous);
        add("axes_3_0_1", x4, {3, 0, 1}, false, Kind::Contiguous, Kind::Contiguous);
        add("scalar", {}, {}, false, Kind::Contiguous, Kind::Contiguous);
        add("len1", {1}, {0}, false, Kind::Contiguous, Kind::Contiguous);
        add("len7", {7}, {}, false, Kind::Contiguous, Kind::Contiguous);
        add("13x1x17_axis1", {13, 1, 17}, {1}, false, Kind::Contiguous, Kind::Contiguous);
        add("13x1x17_axes0_2", {13, 1, 17}, {0, 2}, true, Kind::Contiguous, Kind::Contiguous);
        add("rank8", {2, 1, 3, 1, 2, 2, 1, 3}, {0, 2, 5, 7}, false, Kind::Contiguous, Kind::Contiguous);
        add("rank8_mixed", {2, 1, 3, 1, 2, 2, 1, 3}, {1, 4, 6}, true, Kind::Mixed, Kind::Mixed);
        add("in_permuted", x4, {1, 3}, false, Kind::Permuted, Kind::Contiguous);
        add("in_stepped", x4, {2}, false, Kind::Stepped, Kind::Contiguous);
        add("in_negstride", x4, {0, 3}, true, Kind::Negative, Kind::Contiguous);
        add("in_stride0", x4, {1}, false, Kind::Broadcast, Kind::Contiguous);
        add("out_stepped", x4, {1}, false, Kind::Contiguous, Kind::Stepped);
        add("out_permuted", x4, {2}, true, Kind::Contiguous, Kind::Permuted);
        add("mixed", x4, {0, 2}, false, Kind::Mixed, Kind::Mixed);
        add("long_rows", {2, 1000003}, {1}, false, Kind::Contiguous, Kind::Contiguous);
        add("long_columns", {100003, 3}, {0}, false, Kind::Contiguous, Kind::Contiguous);
        add("many_short_rows", {65537, 5}, {1}, false, Kind::Contiguous, Kind::Contiguous);
        // f16 only (f32 has long_rows): split into partial sums across workgroups, partials f32.
        add("rows_2x100003", {2, 100003}, {1}, false, Kind::Contiguous, Kind::Contiguous, false);
        add("empty_output", {0, 5}, {1}, false, Kind::Contiguous, Kind::Contiguous);
        if (o.op != TGL_OP_MAX && o.op != TGL_OP_MIN) {
            add("empty_axis", {4, 0, 3}, {1}, false, Kind::Contiguous, Kind::Contiguous);
            add("empty_all", {0}, {}, false, Kind::Contiguous, Kind::Contiguous);
        }
        // The vec4 row path (f32 rows contiguous and 16-byte aligned; 256 invocations x 4 quads
        // per step by default): lengths around the quad and step boundaries, a tail of 3, a split
        // row; rows that must take the scalar path (odd row stride, misaligned start).
        for (const Shape& rows : std::vector<Shape>{{3, 36}, {5, 1020}, {2, 4096}, {2, 4100}, {1, 4099}, {1, 300007}, {2, 4097}})
            add("rows_" + shape_name(rows), rows, {1}, false, Kind::Contiguous, Kind::Contiguous);
        add("rows_padded", {3, 1024}, {1}, false, Kind::Padded, Kind::Contiguous);
        // The column path: one slab (64 lanes x 4 columns) and around it, scalar columns (not a
        // multiple of 4), chunks of rows with a second pass, batches of columns, a misaligned start.
        for (const Shape& cols : std::vector<Shape>{{33, 4}, {40, 256}, {37, 260}, {41, 252}, {35, 257}, {1000, 3}, {20000, 12}})
            add("columns_" + shape_name(cols), cols, {0}, false, Kind::Contiguous, Kind::Contiguous);
        add("columns_batched_3x100x8", {3, 100, 8}, {1}, true, Kind::Contiguous, Kind::Contiguous);
        add("columns_batched_3x100x6", {3, 100, 6}, {1}, false, Kind::Contiguous, Kind::Stepped);
        add("columns_batched_3x5000x8", {3, 5000, 8}, {1}, false, Kind::Contiguous, Kind::Stepped);  // chunks
        add("columns_padded", {64, 64}, {0}, false, Kind::Padded, Kind::Contiguous);
        push(n + "_columns_misaligned", [&o](Rng& r, tgl_dtype dt) {
                 Spec s = reduce_spec(o, {50, 128}, {0}, false, Kind::Contiguous, Kind::Contiguous, o.gen, r, dt);
                 s.inputs[0] = operand(make_view({50, 128}, misaligned_layout(r)), r, o.gen);
                 s.what += " (misaligned start)";
                 return s;
             }, true);
        // NaN/inf among the values: NaN propagates, inf stays, inf - inf is NaN.
        push(n + "_specials", [&o](Rng& r, tgl_dtype dt) {
                             Gen g = [&o](Rng& q) {
                                 if (q.chance(0.02)) return kNaN;
                                 if (q.chance(0.03)) return q.chance(0.5) ? kInf : -kInf;
                                 return o.gen(q);
                             };
                             return reduce_spec(o, {64, 37}, {1}, false, Kind::Contiguous, Kind::Contiguous, g, r, dt);
                         }, true);
    }
    // Product over a long row stays meaningful with values close to 1.
    push("prod_long_rows_near_one", [](Rng& r, tgl_dtype dt) {
             return reduce_spec(reduce_ops()[4], {2, 1000003}, {1}, false, Kind::Contiguous, Kind::Contiguous,
                                uniform(0.999, 1.001), r, dt);
         }, false);
    // Column workgroups past 65,535 (66,000 batches of 2 columns): a grid split over dispatches.
    push("sum_columns_grid", [](Rng& r, tgl_dtype dt) {
             return reduce_spec(reduce_ops()[0], {66000, 33, 2}, {1}, false, Kind::Contiguous, Kind::Contiguous,
                                reduce_ops()[0].gen, r, dt);
         }, false);
    // bf16: a subset of the f16 cases (the kernels convert every float dtype alike): reductions
    // over one and all axes, permuted input, the partial sums of long rows, specials, misaligned.
    const std::vector<std::string> bf16_suffixes = {"_axes_1", "_axes_all", "_in_permuted", "_rows_2x100003", "_specials",
                                                    "_columns_misaligned"};
    const size_t n_cases = cases.size();
    for (size_t i = 0; i < n_cases; ++i) {
        const ReduceCase c = cases[i];
        const size_t at = c.name.find("_F16_");
        if (c.dtype != TGL_DTYPE_F16 || at == std::string::npos) continue;
        const std::string rest = c.name.substr(at + 4);
        if (std::find(bf16_suffixes.begin(), bf16_suffixes.end(), rest) != bf16_suffixes.end())
            cases.push_back({c.name.substr(0, at) + "_BF16" + rest, TGL_DTYPE_BF16, c.build});
    }
    return cases;
}

class Reduce : public SeededTestWithParam<ReduceCase> {};

TEST_P(Reduce, MatchesReference) {
    const ReduceCase& c = GetParam();
    Spec s = c.build(rng_, c.dtype);
    if (c.dtype == TGL_DTYPE_F32) check(s);
    else check(as_16bit(s, c.dtype));
}

INSTANTIATE_TEST_SUITE_P(Diff, Reduce, ::testing::ValuesIn(reduce_cases()), reduce_case_name);

// ----- argmax, argmin, logsumexp, var, std, any, all, norm, cumsum, cumprod --------------------------
// Every dtype of the ops' rules: sizes of primes and 1s, every axis, negative axes, permuted /
// strided / broadcast inputs, strided outputs, empty tensors, rows of 600,000 (logsumexp, cumsum)
// and grids of more than 65,535 workgroups; the float reductions and scans in f16 too (x and y f16,
// contiguous views often at odd element offsets). Tolerance: NMSE 1e-6 (tol::kReduction) for the
// float results, exact for indices and truth values.

struct MoreSpec {
    tgl_op op = TGL_OP_INVALID;
    std::vector<uint8_t> params;
    tgl_dtype xt = TGL_DTYPE_F32, yt = TGL_DTYPE_F32;
    View xv, yv;
    Storage x;
    std::string what;
};

std::vector<double> run_more(Role role, const MoreSpec& s) {
    Device& d = shared_device(role);
    const char* who = role == Role::Reference ? "reference" : "subject";
    DeviceTensor in(d, s.xv, s.xt);
    in.set_storage(s.x);
    DeviceTensor out(d, s.yv, s.yt);
    out.poison();
    tgl_status st = d.run(s.op, s.params.empty() ? nullptr : s.params.data(), {in.desc()}, {out.desc()});
    if (st != TGL_OK)
        throw Failure(std::string(who) + " plugin '" + d.plugin().name() + "' rejected " + s.what + ": " +
                      tgl_status_name(st) + ": " + d.plugin().last_error());
    std::vector<double> y;
    try {
        y = out.read_logical();
    } catch (const Failure& f) {
        throw Failure(std::string(who) + " plugin '" + d.plugin().name() + "', " + s.what + ": " + f.what());
    }
    ::testing::AssertionResult r = in.unchanged();
    if (!r) throw Failure(std::string(who) + " modified the input of " + s.what + ": " + r.message());
    return y;
}

void check_more(const MoreSpec& s) {
    SCOPED_TRACE(s.what + "\n  x: " + s.xv.describe() + "\n  y: " + s.yv.describe());
    std::vector<double> want = run_more(Role::Reference, s);
    std::vector<double> got = run_more(Role::Subject, s);
    bool exact = !is_float_dtype(s.yt);
    EXPECT_TRUE(compare(s.yt, got, want, s.yv.shape, exact ? 0.0 : tol::kReduction,
                        exact ? CompareMode::Exact : CompareMode::Nmse, "subject vs reference"));
}

// The catalogue families of these ops (op_catalogue.cpp: Reduce, ArgReduce, Scan).
enum class Family { Reduce, Arg, Scan };

struct OpDef {
    const char* name;
    tgl_op op;
    Family family;
    float extra;  // var/std correction, norm ord
};

const std::vector<OpDef>& ops() {
    static const std::vector<OpDef> v = {
        {"argmax", TGL_OP_ARGMAX, Family::Arg, 0},      {"argmin", TGL_OP_ARGMIN, Family::Arg, 0},
        {"logsumexp", TGL_OP_LOGSUMEXP, Family::Reduce, 0}, {"var", TGL_OP_VAR, Family::Reduce, 1},
        {"var_c0", TGL_OP_VAR, Family::Reduce, 0},       {"std", TGL_OP_STD, Family::Reduce, 1},
        {"any", TGL_OP_ANY, Family::Reduce, 0},         {"all", TGL_OP_ALL, Family::Reduce, 0},
        {"norm1", TGL_OP_NORM, Family::Reduce, 1},      {"norm2", TGL_OP_NORM, Family::Reduce, 2},
        {"cumsum", TGL_OP_CUMSUM, Family::Scan, 0},     {"cumprod", TGL_OP_CUMPROD, Family::Scan, 0},
        // extra 1: select_last_index (ABI 1.3); the values hold many ties (gen_for).
        {"argmax_last", TGL_OP_ARGMAX, Family::Arg, 1}, {"argmin_last", TGL_OP_ARGMIN, Family::Arg, 1},
    };
    return v;
}

Shape out_shape(const OpDef& o, const Shape& xs, const std::vector<int>& axes, bool keep) {
    if (o.family == Family::Scan || xs.empty()) return xs;
    std::vector<bool> red(xs.size(), axes.empty());
    for (int a : axes) red[size_t(a < 0 ? a + int(xs.size()) : a)] = true;
    Shape y;
    for (size_t d = 0; d < xs.size(); ++d) {
        if (!red[d]) y.push_back(xs[d]);
        else if (keep) y.push_back(1);
    }
    return y;
}

// Values: mostly in a range that suits the op; any/all get many zeros; `specials` adds NaN/inf.
ValueGen gen_for(const OpDef& o, tgl_dtype xt, bool specials) {
    ValueGen g;
    if (!is_float_dtype(xt)) {
        g = o.op == TGL_OP_ANY || o.op == TGL_OP_ALL ? int_values(xt, -1, 1) : int_values(xt, -1000, 1000);
        if (xt == TGL_DTYPE_BOOL) g = bool_values(0.5);
    } else if (o.op == TGL_OP_ANY || o.op == TGL_OP_ALL) {
        ValueGen base = float_values(xt, -1, 1);
        g = [base](Rng& r) { return r.chance(0.5) ? 0.0 : base(r); };
    } else if (o.op == TGL_OP_CUMPROD) {
        g = float_values(xt, 0.9, 1.1);
    } else if (o.op == TGL_OP_CUMSUM) {
        g = float_values(xt, -0.9, 1.1);
    } else if (o.op == TGL_OP_ARGMAX || o.op == TGL_OP_ARGMIN) {
        ValueGen base = float_values(xt, -100, 100);
        g = [base](Rng& r) { return r.chance(0.2) ? 7.0 : base(r); };  // ties
    } else {
        g = float_values(xt, -2, 3);
    }
    if (specials && is_float_dtype(xt)) {
        if (o.op == TGL_OP_VAR || o.op == TGL_OP_STD || o.op == TGL_OP_CUMPROD || o.op == TGL_OP_CUMSUM) {
            // NaN, +-inf, +-0 only: near the largest finite value the f32 intermediates (squared
            // deviations, running products and sums) overflow where the reference's double ones do
            // not (-max, -max, +max: -inf in f32, -max in double).
            ValueGen base = g;
            g = [base](Rng& r) {
                static const std::vector<double> sp = {std::numeric_limits<double>::quiet_NaN(), kInf, -kInf, 0.0, -0.0};
                return r.chance(0.03) ? r.pick(sp) : base(r);
            };
        } else {
            g = with_special_values(xt, g, 0.03);
        }
    }
    return g;
}

MoreSpec make(const OpDef& o, tgl_dtype xt, tgl_dtype yt, const Shape& xs, const std::vector<int>& axes, bool keep,
              Kind in, Kind out, bool specials, Rng& rng, bool exclusive = false, bool reverse = false) {
    MoreSpec s;
    s.op = o.op;
    s.xt = xt;
    s.yt = yt;
    if (o.family == Family::Arg) {
        tgl_arg_reduce_params p{sizeof(tgl_arg_reduce_params), axes.empty() ? -1 : axes[0], keep, 0, uint32_t(o.extra)};
        s.params = param_bytes(p);
    } else if (o.family == Family::Scan) {
        tgl_scan_params p{sizeof(tgl_scan_params), axes.empty() ? -1 : axes[0], exclusive, reverse};
        s.params = param_bytes(p);
    } else {
        tgl_var_params p{};  // the layout of all three structs
        p.struct_size = sizeof p;
        p.keepdims = keep;
        p.n_axes = uint32_t(axes.size());
        for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
        p.correction = o.extra;  // var/std correction, norm ord; tgl_reduce_params.reserved = 0
        s.params = param_bytes(p);
    }
    s.xv = view_of(xs, in, rng, true, xt);
    s.yv = view_of(out_shape(o, xs, o.family == Family::Reduce || o.family == Family::Scan ? axes : axes, keep), out, rng,
                   false, yt);
    s.x = random_storage(xt, s.xv.storage, rng, gen_for(o, xt, specials));
    std::string ax;
    for (int a : axes) ax += (ax.empty() ? "" : ", ") + std::to_string(a);
    s.what = std::string(o.name) + " of " + shape_str(xs) + " " + dtype_name(xt) + " (" + kind_name(in) + ") axes {" +
             (axes.empty() ? std::string("default") : ax) + "}" + (keep ? " keepdims" : "") +
             (exclusive ? " exclusive" : "") + (reverse ? " reverse" : "") + " -> " + dtype_name(yt) + " (" +
             kind_name(out) + ")";
    return s;
}

// The dtypes each op is tested in: every x dtype of its rule, y as the rule says.
std::vector<std::pair<tgl_dtype, tgl_dtype>> dtypes_of(const OpDef& o) {
    if (o.family == Family::Arg)
        return {{TGL_DTYPE_F32, TGL_DTYPE_I32}, {TGL_DTYPE_F16, TGL_DTYPE_I32}, {TGL_DTYPE_I32, TGL_DTYPE_I32}};
    if (o.op == TGL_OP_ANY || o.op == TGL_OP_ALL) {
        std::vector<std::pair<tgl_dtype, tgl_dtype>> v;
        for (tgl_dtype x : word_dtypes()) v.push_back({x, x == TGL_DTYPE_F16 || x == TGL_DTYPE_I8 ? TGL_DTYPE_U8 : TGL_DTYPE_BOOL});
        return v;
    }
    return {{TGL_DTYPE_F32, TGL_DTYPE_F32}, {TGL_DTYPE_F16, TGL_DTYPE_F16}};
}

struct MoreCase {
    std::string name;
    std::function<MoreSpec(Rng&)> build;
};
std::string more_case_name(const ::testing::TestParamInfo<MoreCase>& info) { return info.param.name; }
void PrintTo(const MoreCase& c, std::ostream* os) { *os << c.name; }

std::vector<MoreCase> more_cases() {
    std::vector<MoreCase> cs;
    const Shape x4 = {3, 5, 7, 11};
    for (const OpDef& o : ops()) {
        const bool single = o.family != Family::Reduce;
        for (const auto& types : dtypes_of(o)) {
            // (not a structured binding: the lambdas below copy these, which C++17 allows only for variables)
            const auto xt = types.first, yt = types.second;
            const std::string pre = std::string(o.name) + "_" + dtype_name(xt) + "_";
            auto add = [&](const std::string& name, Shape xs, std::vector<int> axes, bool keep, Kind in, Kind out,
                           bool specials = false, bool excl = false, bool rev = false) {
                cs.push_back({pre + name, [o, xt = xt, yt = yt, xs, axes, keep, in, out, specials, excl, rev](Rng& r) {
                                  return make(o, xt, yt, xs, axes, keep, in, out, specials, r, excl, rev);
                              }});
            };
            for (int a = 0; a < 4; ++a) {
                add("axis" + std::to_string(a), x4, {a}, false, Kind::Contiguous, Kind::Contiguous);
                if (o.family == Family::Scan) {
                    add("axis" + std::to_string(a) + "_excl", x4, {a}, false, Kind::Contiguous, Kind::Contiguous, false, true);
                    add("axis" + std::to_string(a) + "_rev", x4, {a}, false, Kind::Contiguous, Kind::Contiguous, false, false, true);
                    add("axis" + std::to_string(a) + "_excl_rev", x4, {a}, false, Kind::Permuted, Kind::Stepped, false, true, true);
                }
            }
            add("axis_m1_keep", x4, {-1}, true, Kind::Contiguous, Kind::Contiguous);
            add("axis_m3_keep", x4, {-3}, true, Kind::Contiguous, Kind::Contiguous);
            if (!single) {
                add("axes_0_2", x4, {0, 2}, false, Kind::Contiguous, Kind::Contiguous);
                add("axes_3_1_keep", x4, {3, 1}, true, Kind::Contiguous, Kind::Contiguous);
                add("all", x4, {}, false, Kind::Contiguous, Kind::Contiguous);
                add("rank8", {2, 1, 3, 1, 2, 2, 1, 3}, {0, 2, 5, 7}, false, Kind::Mixed, Kind::Mixed);
                add("empty_axis", {4, 0, 3}, {1}, false, Kind::Contiguous, Kind::Contiguous);
            }
            add("13x1x17_axis1", {13, 1, 17}, {1}, false, Kind::Contiguous, Kind::Contiguous);
            add("13x1x17_axis2", {13, 1, 17}, {2}, true, Kind::Contiguous, Kind::Contiguous);
            add("scalar", {}, single ? std::vector<int>{-1} : std::vector<int>{}, false, Kind::Contiguous, Kind::Contiguous);
            add("len1", {1}, {0}, false, Kind::Contiguous, Kind::Contiguous);
            add("in_permuted", x4, {1}, false, Kind::Permuted, Kind::Contiguous);
            add("in_stepped", x4, {2}, false, Kind::Stepped, Kind::Contiguous);
            add("in_negstride", x4, {3}, true, Kind::Negative, Kind::Contiguous);
            add("in_stride0", x4, {1}, false, Kind::Broadcast, Kind::Contiguous);
            add("out_stepped", x4, {0}, false, Kind::Contiguous, Kind::Stepped);
            add("mixed", x4, {2}, false, Kind::Mixed, Kind::Mixed);
            add("empty_output", {0, 5}, {1}, false, Kind::Contiguous, Kind::Contiguous);
            add("specials", {64, 37}, {1}, false, Kind::Contiguous, Kind::Contiguous, true);
            add("long_rows", {2, 100003}, {1}, false, Kind::Contiguous, Kind::Contiguous);
            add("long_columns", {20011, 3}, {0}, false, Kind::Contiguous, Kind::Contiguous);
            // (select_last_index changes only the tie rule: the grid cases of argmax/argmin serve it.)
            if (xt == TGL_DTYPE_F32 || (o.family == Family::Arg && o.extra == 0)) {
                // More than 65,535 workgroups: one per output in the group mode / one per block.
                add("grid_over_65535", {70001, 300}, {1}, false, Kind::Contiguous, Kind::Contiguous);
                add("many_short_rows", {65537, 5}, {1}, false, Kind::Contiguous, Kind::Contiguous);
            }
        }
    }
    // Rows of 600,000.
    const OpDef& lse = ops()[2];
    const OpDef& cumsum = ops()[10];
    cs.push_back({"logsumexp_row_600000", [lse](Rng& r) {
                      return make(lse, TGL_DTYPE_F32, TGL_DTYPE_F32, {600000}, {0}, false, Kind::Contiguous,
                                  Kind::Contiguous, false, r);
                  }});
    cs.push_back({"logsumexp_rows_3x600000_strided", [lse](Rng& r) {
                      return make(lse, TGL_DTYPE_F32, TGL_DTYPE_F32, {3, 600000}, {1}, true, Kind::Stepped,
                                  Kind::Contiguous, false, r);
                  }});
    for (bool excl : {false, true})
        for (bool rev : {false, true})
            cs.push_back({std::string("cumsum_row_600000") + (excl ? "_excl" : "") + (rev ? "_rev" : ""),
                          [cumsum, excl, rev](Rng& r) {
                              return make(cumsum, TGL_DTYPE_F32, TGL_DTYPE_F32, {600000}, {0}, false, Kind::Contiguous,
                                          Kind::Contiguous, false, r, excl, rev);
                          }});
    cs.push_back({"cumsum_600000_column", [cumsum](Rng& r) {
                      return make(cumsum, TGL_DTYPE_F32, TGL_DTYPE_F32, {600000, 2}, {0}, false, Kind::Contiguous,
                                  Kind::Contiguous, false, r, false, true);
                  }});
    return cs;
}

class ReduceMore : public SeededTestWithParam<MoreCase> {};

TEST_P(ReduceMore, MatchesReference) { check_more(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, ReduceMore, ::testing::ValuesIn(more_cases()), more_case_name);

class ReduceMoreLong : public SeededTest {};

// argmax of one row of 2^24 + 9 f16 whose maximum is its last element: each of the 256 invocations
// of the GLES workgroup walks 65,537 elements, more than llvmpipe's 65,535 loop passes (cut short,
// TGL_OK and a wrong index before); now ranges of elements in several dispatches.
TEST_F(ReduceMoreLong, ArgmaxRowOfMoreElementsPerInvocationThanTheLoopBudget) {
    const int64_t n = (int64_t(1) << 24) + 9;
    MoreSpec s = make(ops()[0], TGL_DTYPE_F16, TGL_DTYPE_I32, {n}, {0}, false, Kind::Contiguous, Kind::Contiguous, false, rng_);
    s.x.set_value(s.xv.offset + (n - 1) * s.xv.strides[0], 1000.0);
    check_more(s);
}

// A row of more blocks (4 x 256 positions; 4 x 128 at the minimum limits) than the GLES carry
// loop's budget: 2^25 + 7 f16 of mean 0 (the sums stay within f16). llvmpipe cut that loop at
// 65,535 blocks under TGL_GLES_LIMITS=minimum, returning TGL_OK. Disabled: the harness alone
// takes about 6 s of CPU over 2^25 elements (run it with --gtest_also_run_disabled_tests).
TEST_F(ReduceMoreLong, DISABLED_CumsumRowOfMoreBlocksThanTheLoopBudget) {
    MoreSpec s = make(ops()[10], TGL_DTYPE_F16, TGL_DTYPE_F16, {(int64_t(1) << 25) + 7}, {0}, false, Kind::Contiguous,
                      Kind::Contiguous, false, rng_);
    s.x = random_storage(TGL_DTYPE_F16, s.xv.storage, rng_, float_values(TGL_DTYPE_F16, -1, 1));
    check_more(s);
}

}  // namespace
}  // namespace diff
