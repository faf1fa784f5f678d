// Random cases for every op: random rank (0..8), dims among {1, 2, 3, 5, 7, 13}, random layouts
// on every operand (permuted, stepped, negative, stride 0, padded, all mixed), random broadcasting,
// axes, transposes and batches; plus elementwise ops computed in place. Each case draws all of
// this from its own stream, so TGL_TEST_SEED and the case name replay it exactly.
#include "diff.h"

#include <algorithm>
#include <cstdio>

namespace diff {
namespace {

constexpr int kPerOp = 12;

Shape random_shape(Rng& rng, int min_rank, int max_rank, int64_t max_numel) {
    while (true) {
        Shape s(static_cast<size_t>(rng.integer(min_rank, max_rank)));
        for (auto& d : s) d = rng.pick(std::vector<int64_t>{1, 1, 2, 3, 5, 7, 13});
        if (numel(s) <= max_numel) return s;
    }
}

// A suffix of `full` with some dims set to 1 (an operand that broadcasts to `full`).
Shape broadcastable(const Shape& full, Rng& rng) {
    Shape s(full.begin() + ptrdiff_t(rng.integer(0, int64_t(full.size()))), full.end());
    for (auto& d : s)
        if (rng.chance(0.25)) d = 1;
    return s;
}

View random_view(const Shape& s, Rng& rng, bool input) {
    const Kind kinds[] = {Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Broadcast,
                          Kind::Padded,     Kind::Mixed,    Kind::Mixed};
    return view_of(s, kinds[rng.integer(0, 7)], rng, input);
}

struct ElemOp {
    const char* name;
    tgl_op op;
    int arity;
    int gelu;  // -1 or tgl_gelu_params.approximate
    Gen a, b;
};

const std::vector<ElemOp>& elem_ops() {
    static const std::vector<ElemOp> ops = {
        {"abs", TGL_OP_ABS, 1, -1, uniform(-150, 150), {}},
        {"neg", TGL_OP_NEG, 1, -1, uniform(-150, 150), {}},
        {"relu", TGL_OP_RELU, 1, -1, uniform(-150, 150), {}},
        {"sigmoid", TGL_OP_SIGMOID, 1, -1, uniform(-20, 20), {}},
        {"tanh", TGL_OP_TANH, 1, -1, uniform(-10, 10), {}},
        {"exp", TGL_OP_EXP, 1, -1, uniform(-20, 20), {}},
        {"log", TGL_OP_LOG, 1, -1, uniform(0, 100), {}},
        {"sqrt", TGL_OP_SQRT, 1, -1, uniform(0, 100), {}},
        {"gelu", TGL_OP_GELU, 1, TGL_GELU_ERF, uniform(-6, 6), {}},
        {"gelu_tanh", TGL_OP_GELU, 1, TGL_GELU_TANH, uniform(-6, 6), {}},
        {"silu", TGL_OP_SILU, 1, -1, uniform(-20, 20), {}},
        {"add", TGL_OP_ADD, 2, -1, uniform(-1, 1), uniform(-1, 1)},
        {"sub", TGL_OP_SUB, 2, -1, uniform(-1, 1), uniform(-1, 1)},
        {"mul", TGL_OP_MUL, 2, -1, uniform(-2, 2), uniform(-2, 2)},
        {"div", TGL_OP_DIV, 2, -1, uniform(-1, 1), signed_uniform(0.5, 2)},
        {"maximum", TGL_OP_MAXIMUM, 2, -1, uniform(-1, 1), uniform(-1, 1)},
        {"minimum", TGL_OP_MINIMUM, 2, -1, uniform(-1, 1), uniform(-1, 1)},
        {"pow", TGL_OP_POW, 2, -1, uniform(0.5, 2), uniform(-3, 3)},
    };
    return ops;
}

Spec elem_spec(const ElemOp& o, Rng& rng, bool in_place) {
    Spec s;
    s.op = o.op;
    if (o.gelu >= 0) s.params = param_bytes(tgl_gelu_params{sizeof(tgl_gelu_params), uint32_t(o.gelu)});
    Shape ys = random_shape(rng, 0, 8, 3000);
    Shape as = o.arity == 2 && !in_place ? broadcastable(ys, rng) : ys;
    Shape bs = o.arity == 2 ? broadcastable(ys, rng) : Shape{};
    if (o.arity == 2) ys = broadcast_shapes(as, bs);
    // In place, input 0 is the output: same shape, and no stride 0.
    View av = in_place ? make_view(as, random_layout(as, rng, false)) : random_view(as, rng, true);
    s.inputs.push_back(operand(av, rng, o.a));
    if (o.arity == 2) s.inputs.push_back(operand(random_view(bs, rng, true), rng, o.b));
    s.in_place = in_place;
    s.out = in_place ? av : random_view(ys, rng, false);
    s.tolerance = tol::for_op(o.op);
    s.what = std::string(o.name) + (in_place ? " in place" : "") + ": a " + shape_str(as) +
             (o.arity == 2 ? ", b " + shape_str(bs) : std::string()) + " -> " + shape_str(ys);
    return s;
}

struct RedOp {
    const char* name;
    tgl_op op;
    Gen gen;
};

Spec reduce_spec(const RedOp& o, Rng& rng) {
    Spec s;
    s.op = o.op;
    Shape xs = random_shape(rng, 0, 8, 4000);
    if (o.op != TGL_OP_MAX && o.op != TGL_OP_MIN && rng.chance(0.1) && !xs.empty())
        xs[size_t(rng.integer(0, int64_t(xs.size()) - 1))] = 0;  // sometimes an empty axis
    const int r = int(xs.size());
    tgl_reduce_params p{};
    p.struct_size = sizeof p;
    p.keepdims = rng.chance(0.5);
    std::vector<bool> red(size_t(r), false);
    for (int k = 0; k < r; ++k)
        if (rng.chance(0.4)) {
            p.axes[p.n_axes++] = rng.chance(0.5) ? k : k - r;
            red[size_t(k)] = true;
        }
    std::shuffle(p.axes, p.axes + p.n_axes, rng.engine());
    if (p.n_axes == 0) std::fill(red.begin(), red.end(), true);
    Shape ys;
    for (int k = 0; k < r; ++k) {
        if (!red[size_t(k)]) ys.push_back(xs[size_t(k)]);
        else if (p.keepdims) ys.push_back(1);
    }
    s.params = param_bytes(p);
    s.inputs.push_back(operand(random_view(xs, rng, true), rng, o.gen));
    s.out = random_view(ys, rng, false);
    s.tolerance = tol::kReduction;
    s.what = std::string(o.name) + ": x " + shape_str(xs) + " over " + std::to_string(p.n_axes) + " axes" +
             (p.keepdims ? " keepdims" : "") + " -> " + shape_str(ys);
    return s;
}

Spec matmul_spec(Rng& rng) {
    Spec s;
    s.op = TGL_OP_MATMUL;
    const std::vector<int64_t> dims = {1, 2, 3, 7, 16, 31, 33, 64};
    int64_t M = rng.pick(dims), N = rng.pick(dims), K = rng.pick(dims);
    if (rng.chance(0.05)) K = 0;
    tgl_matmul_params p{};
    p.struct_size = sizeof p;
    p.transpose_a = rng.chance(0.5);
    p.transpose_b = rng.chance(0.5);
    p.alpha = rng.chance(0.5) ? 1.0f : rng.uniformf(-2, 2);
    p.beta = rng.chance(0.5) ? 0.0f : rng.uniformf(-2, 2);
    Shape batch = random_shape(rng, 0, 4, 24);
    Shape ab = broadcastable(batch, rng), bb = broadcastable(batch, rng), cb = broadcast_shapes(ab, bb);
    Shape as = ab, bs = bb, cs = cb;
    as.push_back(p.transpose_a ? K : M);
    as.push_back(p.transpose_a ? M : K);
    bs.push_back(p.transpose_b ? N : K);
    bs.push_back(p.transpose_b ? K : N);
    cs.push_back(M);
    cs.push_back(N);
    s.params = param_bytes(p);
    s.inputs.push_back(operand(random_view(as, rng, true), rng, uniform(-1, 1)));
    s.inputs.push_back(operand(random_view(bs, rng, true), rng, uniform(-1, 1)));
    s.out = random_view(cs, rng, false);
    if (p.beta != 0.0f) {
        s.out_init.resize(static_cast<size_t>(numel(cs)));
        for (auto& v : s.out_init) v = rng.uniformf(-1, 1);
    }
    s.tolerance = tol::kMatmul;
    char buf[128];
    std::snprintf(buf, sizeof buf, " M=%lld N=%lld K=%lld%s%s alpha=%g beta=%g", (long long)M, (long long)N,
                  (long long)K, p.transpose_a ? " A^T" : "", p.transpose_b ? " B^T" : "", double(p.alpha),
                  double(p.beta));
    s.what = "matmul" + std::string(buf) + ": A " + shape_str(as) + ", B " + shape_str(bs) + " -> C " + shape_str(cs);
    return s;
}

std::vector<Case> fuzz_cases() {
    std::vector<Case> cases;
    for (const ElemOp& o : elem_ops()) {
        for (int i = 0; i < kPerOp; ++i)
            cases.push_back({std::string(o.name) + "_" + std::to_string(i), [&o](Rng& r) { return elem_spec(o, r, false); }});
        for (int i = 0; i < 2; ++i)
            cases.push_back({std::string(o.name) + "_in_place_" + std::to_string(i),
                             [&o](Rng& r) { return elem_spec(o, r, true); }});
    }
    static const std::vector<RedOp> reds = {{"sum", TGL_OP_SUM, uniform(-0.9, 1.1)},
                                            {"mean", TGL_OP_MEAN, uniform(-0.9, 1.1)},
                                            {"max", TGL_OP_MAX, uniform(-1, 1)},
                                            {"min", TGL_OP_MIN, uniform(-1, 1)},
                                            {"prod", TGL_OP_PROD, uniform(0.8, 1.25)}};
    for (const RedOp& o : reds)
        for (int i = 0; i < kPerOp; ++i)
            cases.push_back({std::string(o.name) + "_" + std::to_string(i), [&o](Rng& r) { return reduce_spec(o, r); }});
    for (int i = 0; i < 3 * kPerOp; ++i) cases.push_back({"matmul_" + std::to_string(i), [](Rng& r) { return matmul_spec(r); }});
    return cases;
}

class Fuzz : public SeededTestWithParam<Case> {};

TEST_P(Fuzz, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, Fuzz, ::testing::ValuesIn(fuzz_cases()), case_name);

}  // namespace
}  // namespace diff
