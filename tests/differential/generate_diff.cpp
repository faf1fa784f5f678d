// Differential tests (GLES vs CPU) of the generate ops: arange, full, eye, tril, triu,
// random_uniform, random_normal, on seeded random shapes (primes and 1s), params and output views
// (permuted, stepped, negative-stride, padded, odd element offsets for 1- and 2-byte dtypes), every
// dtype of the ops' rules, empty tensors and grids of more than 65,535 workgroups.
// Tolerance: bit-exact for everything but random_normal (plugin_api.h: same bits on every plugin),
// which agrees within a few f32 ulp of |a| + |b z| (the GPU's f32 log/sqrt/cos against the CPU's
// double).
#include "diff.h"

#include <cmath>
#include <cstring>

namespace diff {
namespace {

using GenerateDiff = SeededTest;

template <class P>
std::vector<uint8_t> bytes_of(const P& p) {
    std::vector<uint8_t> b(sizeof p);
    std::memcpy(b.data(), &p, sizeof p);
    return b;
}

const std::vector<Shape>& shapes() {
    static const std::vector<Shape> s = {{1}, {7}, {13, 1}, {1, 5, 3}, {2, 3, 11}, {4, 1, 7, 3}, {31, 17}, {3, 2, 1, 5, 2}};
    return s;
}

// An output view: one of the layout kinds, or for 1- and 2-byte dtypes sometimes an odd offset.
View out_view(const Shape& s, tgl_dtype dt, Rng& rng, std::string* name) {
    const Kind kinds[] = {Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Padded, Kind::Mixed};
    if (dtype_size(dt) < 4 && rng.chance(0.3)) {
        *name = "misaligned";
        return make_view(s, misaligned_layout(rng));
    }
    Kind k = kinds[rng.integer(0, 5)];
    *name = kind_name(k);
    return view_of(s, k, rng, false);
}

MultiSpec spec(tgl_op op, std::vector<uint8_t> params, std::vector<InputArg> in, tgl_dtype dt, const View& yv,
               const std::string& what) {
    MultiSpec m;
    m.op = op;
    m.params = std::move(params);
    m.inputs = std::move(in);
    OutputArg y;
    y.dtype = dt;
    y.view = yv;
    m.outputs = {y};
    m.tolerance = {0.0};
    m.mode = {CompareMode::ExactBits};
    m.what = what;
    return m;
}

const std::vector<tgl_dtype> kFloat = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16};

TEST_F(GenerateDiff, Arange) {
    for (tgl_dtype dt : word_dtypes()) {
        if (dt == TGL_DTYPE_BOOL) continue;
        for (int64_t n : {1, 2, 7, 1031}) {
            tgl_arange_params p{};
            p.struct_size = sizeof p;
            if (is_float_dtype(dt)) {
                p.start = rng_.uniform(-100, 100);
                p.step = rng_.pick(std::vector<double>{0.1, -0.37, 1.0 / 3, 2.5, -1e-3, 7});
            } else {
                p.start = double(rng_.integer(-300, 300));
                p.step = double(rng_.integer(-9, 9) | 1);
            }
            std::string kind;
            View v = out_view({n}, dt, rng_, &kind);
            check(spec(TGL_OP_ARANGE, bytes_of(p), {}, dt, v,
                       "arange " + dtype_name(dt) + " n " + std::to_string(n) + " " + kind));
        }
    }
}

TEST_F(GenerateDiff, Full) {
    for (tgl_dtype dt : word_dtypes())
        for (const Shape& s : shapes()) {
            tgl_full_params p{};
            p.struct_size = sizeof p;
            p.value = rng_.chance(0.4) ? rng_.pick(special_values_of(TGL_DTYPE_F32)) : rng_.uniform(-1e3, 1e3);
            std::string kind;
            View v = out_view(s, dt, rng_, &kind);
            check(spec(TGL_OP_FULL, bytes_of(p), {}, dt, v, "full " + dtype_name(dt) + " " + shape_name(s) + " " + kind));
        }
}

TEST_F(GenerateDiff, Eye) {
    for (tgl_dtype dt : word_dtypes())
        for (const Shape& s : shapes()) {
            if (s.size() < 2) continue;
            tgl_diagonal_params p{sizeof(tgl_diagonal_params), int32_t(rng_.integer(-4, 4))};
            std::string kind;
            View v = out_view(s, dt, rng_, &kind);
            check(spec(TGL_OP_EYE, bytes_of(p), {}, dt, v,
                       "eye " + dtype_name(dt) + " " + shape_name(s) + " diagonal " + std::to_string(p.diagonal) + " " + kind));
        }
}

TEST_F(GenerateDiff, TrilTriu) {
    for (tgl_op op : {TGL_OP_TRIL, TGL_OP_TRIU})
        for (tgl_dtype dt : word_dtypes())
            for (const Shape& s : shapes()) {
                if (s.size() < 2) continue;
                tgl_diagonal_params p{sizeof(tgl_diagonal_params), int32_t(rng_.integer(-3, 3))};
                InputArg x;
                x.dtype = dt;
                x.view = make_view(s, random_layout(s, rng_, true));
                ValueGen g = is_float_dtype(dt) ? with_special_values(dt, float_values(dt, -10, 10), 0.1)
                                                : (dt == TGL_DTYPE_BOOL ? bool_values() : int_values(dt, -1000, 1000));
                x.storage = random_storage(dt, x.view.storage, rng_, g);
                std::string kind;
                View v = out_view(s, dt, rng_, &kind);
                check(spec(op, bytes_of(p), {x}, dt, v,
                           std::string(op == TGL_OP_TRIL ? "tril " : "triu ") + dtype_name(dt) + " " + shape_name(s) +
                               " diagonal " + std::to_string(p.diagonal) + " x " + x.view.layout + " y " + kind));
            }
}

tgl_random_params random_params(Rng& rng, bool normal) {
    tgl_random_params p{};
    p.struct_size = sizeof p;
    p.seed = rng.engine()();
    // Offsets near the 2^32 carry of the counter's low word, and anywhere.
    p.offset = rng.chance(0.5) ? 0xffffff00ull + uint64_t(rng.integer(0, 0x1ff)) : rng.engine()();
    p.a = rng.uniformf(-10, 10);
    p.b = normal ? rng.uniformf(0, 5) : p.a + rng.uniformf(0, 20);
    return p;
}

TEST_F(GenerateDiff, RandomUniformBitExact) {
    for (tgl_dtype dt : kFloat)
        for (const Shape& s : shapes()) {
            tgl_random_params p = random_params(rng_, false);
            std::string kind;
            View v = out_view(s, dt, rng_, &kind);
            check(spec(TGL_OP_RANDOM_UNIFORM, bytes_of(p), {}, dt, v,
                       "random_uniform " + dtype_name(dt) + " " + shape_name(s) + " " + kind));
        }
}

// random_normal: |subject - reference| <= rel * (|a| + |reference - a|) per element; rel a few f32
// ulp for f32, one ulp of the format for f16/bf16 (values on the two sides of a rounding boundary).
void check_normal(const tgl_random_params& p, tgl_dtype dt, const View& v, const std::string& what) {
    SCOPED_TRACE(what + "\n  y: " + v.describe());
    OutputArg y;
    y.dtype = dt;
    y.view = v;
    std::vector<double> want = run_op_values(shared_device(Role::Reference), TGL_OP_RANDOM_NORMAL, &p, {}, {y})[0];
    std::vector<double> got = run_op_values(shared_device(Role::Subject), TGL_OP_RANDOM_NORMAL, &p, {}, {y})[0];
    const double rel = dt == TGL_DTYPE_F32 ? 0x1p-20 : (dt == TGL_DTYPE_F16 ? 0x1p-10 : 0x1p-7);
    double worst = 0;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        const double scale = std::fabs(p.a) + std::fabs(want[i] - p.a);
        const double err = std::fabs(got[i] - want[i]) / (scale > 0 ? scale : 1);
        if (!(err <= rel)) {
            if (!bad++) first = i;
        }
        if (err > worst || std::isnan(err)) worst = err;
    }
    EXPECT_EQ(bad, 0u) << bad << " elements off; first " << first << ": got " << got[first] << ", want "
                       << want[first] << "; worst relative error " << worst << " (allowed " << rel << ")";
}

TEST_F(GenerateDiff, RandomNormalWithinTolerance) {
    for (tgl_dtype dt : kFloat)
        for (const Shape& s : shapes()) {
            tgl_random_params p = random_params(rng_, true);
            std::string kind;
            View v = out_view(s, dt, rng_, &kind);
            check_normal(p, dt, v, "random_normal " + dtype_name(dt) + " " + shape_name(s) + " " + kind);
        }
    // Many values (both tails, u1 near 1) with mean 0: the relative accuracy of z itself.
    tgl_random_params p = random_params(rng_, true);
    p.a = 0;
    p.b = 1;
    check_normal(p, TGL_DTYPE_F32, contiguous({200003}), "random_normal f32 200003");
}

TEST_F(GenerateDiff, EmptyTensors) {
    tgl_arange_params ap{sizeof(tgl_arange_params), 0, 1.0, 2.0};
    check(spec(TGL_OP_ARANGE, bytes_of(ap), {}, TGL_DTYPE_I32, contiguous({0}), "empty arange"));
    tgl_full_params fp{sizeof(tgl_full_params), 0, 3.0};
    check(spec(TGL_OP_FULL, bytes_of(fp), {}, TGL_DTYPE_F16, contiguous({0, 3}), "empty full"));
    tgl_diagonal_params dp{sizeof(tgl_diagonal_params), 1};
    check(spec(TGL_OP_EYE, bytes_of(dp), {}, TGL_DTYPE_U8, contiguous({2, 0, 4}), "empty eye"));
    InputArg x = input_values(TGL_DTYPE_F32, {3, 0}, {});
    x.storage = Storage::from_values(TGL_DTYPE_F32, std::vector<double>(size_t(x.view.storage), 0.0));
    check(spec(TGL_OP_TRIL, bytes_of(dp), {x}, TGL_DTYPE_F32, contiguous({3, 0}), "empty tril"));
    tgl_random_params rp = random_params(rng_, false);
    check(spec(TGL_OP_RANDOM_UNIFORM, bytes_of(rp), {}, TGL_DTYPE_BF16, contiguous({0}), "empty uniform"));
    check_normal(random_params(rng_, true), TGL_DTYPE_F32, contiguous({5, 0}), "empty normal");
}

TEST_F(GenerateDiff, PastMaxWorkgroupsPerDispatch) {
    // More than 65,535 workgroups of 256 invocations: the grid is split into several dispatches.
    const int64_t n = int64_t(65536) * 256 + 5;
    tgl_full_params fp{sizeof(tgl_full_params), 0, -7.0};
    check(spec(TGL_OP_FULL, bytes_of(fp), {}, TGL_DTYPE_I8, make_view({n}, Layout{"odd", {}, {}, {}, 1, 0}), "big full i8"));
    tgl_random_params rp = random_params(rng_, false);
    check(spec(TGL_OP_RANDOM_UNIFORM, bytes_of(rp), {}, TGL_DTYPE_F16, make_view({4099, 4097}, Layout{"odd", {}, {}, {}, 1, 0}),
               "big random_uniform f16 (4099, 4097)"));
}

}  // namespace
}  // namespace diff
