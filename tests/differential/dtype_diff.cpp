// The dtype ops of the GLES plugin against the CPU reference: cast over every pair of dtypes,
// every comparison in every input dtype (both output dtypes), logical ops, where, and the float ops
// in f16 and bf16; on random layouts (permuted, stepped, negative, broadcast, padded, odd offsets), odd
// sizes, empty tensors and one tensor past 65,535 workgroups. Casts, compare, logical and where
// must match exactly (bit for bit, any NaN equal to any NaN); the f16/bf16 float ops within a small
// NMSE (the CPU rounds its double result once, the GPU its f32 result).
#include "diff.h"

#include <memory>
#include <string>
#include <vector>

namespace diff {
namespace {

struct Operand {
    tgl_dtype dtype;
    View view;
    Storage storage;  // inputs only
};

// Runs op on one plugin's device with the given input operands and output (dtype, view); returns
// the output's logical values (guards and inputs checked) and, for an i64 y, its element bits in
// *bits (the values round beyond 2^53).
std::vector<double> run_on(Role role, tgl_op op, const void* params, const std::vector<Operand>& ins,
                           tgl_dtype ydt, const View& yv, std::vector<uint64_t>* bits = nullptr) {
    Device& d = shared_device(role);
    std::vector<std::unique_ptr<DeviceTensor>> ts;
    std::vector<tgl_tensor> descs;
    for (const Operand& in : ins) {
        ts.push_back(std::make_unique<DeviceTensor>(d, in.view, in.dtype));
        ts.back()->set_storage(in.storage);
        descs.push_back(ts.back()->desc());
    }
    DeviceTensor out(d, yv, ydt);
    out.poison();
    d.run_ok(op, params, descs, {out.desc()});
    std::vector<double> y = out.read_logical();
    if (bits && ydt == TGL_DTYPE_I64) *bits = out.read_bits();
    for (size_t i = 0; i < ts.size(); ++i) {
        ::testing::AssertionResult r = ts[i]->unchanged();
        if (!r) throw Failure(d.plugin().name() + ": input " + std::to_string(i) + " was modified: " + r.message());
    }
    return y;
}

::testing::AssertionResult check(tgl_op op, const std::vector<Operand>& ins, tgl_dtype ydt, const View& yv,
                                 double tolerance, CompareMode mode, const std::string& what) {
    std::vector<uint64_t> want_bits, got_bits;
    std::vector<double> want = run_on(Role::Reference, op, nullptr, ins, ydt, yv, &want_bits);
    std::vector<double> got = run_on(Role::Subject, op, nullptr, ins, ydt, yv, &got_bits);
    std::string desc = what + "; y " + yv.describe();
    for (size_t i = 0; i < ins.size(); ++i) desc += "; in" + std::to_string(i) + " " + dtype_name(ins[i].dtype) + " " + ins[i].view.describe();
    for (size_t k = 0; k < want_bits.size(); ++k)
        if (got_bits[k] != want_bits[k])
            return ::testing::AssertionFailure() << desc << ": i64 element " << k << " is 0x" << std::hex << got_bits[k]
                                                 << ", the reference has 0x" << want_bits[k];
    return compare(ydt, got, want, yv.shape, tolerance, mode, desc);
}

// Values of a dtype: its whole range for integers (i32 beyond 2^24 included), floats in
// [-300, 300] (so that casts to i8/u8 saturate) or small integers (so that comparisons see
// equal values), with special values mixed in.
ValueGen values_for(tgl_dtype dt, bool small) {
    ValueGen base;
    if (dt == TGL_DTYPE_BOOL) base = bool_values();
    else if (is_float_dtype(dt)) base = small ? int_values(TGL_DTYPE_I32, -3, 3) : float_values(dt, -300, 300);
    else if (small) base = int_values(dt, -3, 3);
    else base = int_values(dt, int_range(dt).lo, int_range(dt).hi);
    return with_special_values(dt, base, 0.15);
}

Operand input(tgl_dtype dt, const Shape& shape, Rng& rng, bool small, bool allow_layouts = true) {
    View v = allow_layouts ? make_view(shape, rng.chance(0.3) ? misaligned_layout(rng) : random_layout(shape, rng, true))
                           : contiguous(shape);
    if (dt == TGL_DTYPE_I64) return Operand{dt, v, i64_storage(v.storage, rng, small)};
    return Operand{dt, v, random_storage(dt, v.storage, rng, values_for(dt, small))};
}

View output_view(const Shape& shape, Rng& rng) {
    if (rng.chance(0.3)) return make_view(shape, misaligned_layout(rng));
    return make_view(shape, random_layout(shape, rng, false));
}

Shape random_shape(Rng& rng) {
    static const std::vector<Shape> shapes = {{1}, {7}, {33}, {3, 5}, {2, 3, 7}, {4, 1, 5}, {65}, {2, 2, 2, 3}, {129}, {}};
    return rng.pick(shapes);
}

const std::vector<tgl_dtype>& kAll = all_dtypes();    // cast
const std::vector<tgl_dtype>& kWord = word_dtypes();  // logical ops, where
const std::vector<tgl_dtype> kCompared = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32,
                                          TGL_DTYPE_I8,  TGL_DTYPE_U8,  TGL_DTYPE_BOOL};

class DtypeDiff : public SeededTest {};

TEST_F(DtypeDiff, CastEveryPair) {
    for (tgl_dtype from : kAll)
        for (tgl_dtype to : kAll)
            for (int rep = 0; rep < 4; ++rep) {
                Shape s = random_shape(rng_);
                Operand x = input(from, s, rng_, false);
                EXPECT_TRUE(check(TGL_OP_CAST, {x}, to, output_view(s, rng_), 0, CompareMode::ExactBits,
                                  "cast " + dtype_name(from) + " -> " + dtype_name(to)));
            }
}

TEST_F(DtypeDiff, CompareEveryDtype) {
    const tgl_op ops[] = {TGL_OP_EQ, TGL_OP_NE, TGL_OP_LT, TGL_OP_LE, TGL_OP_GT, TGL_OP_GE};
    for (tgl_op op : ops)
        for (tgl_dtype dt : kCompared)
            for (tgl_dtype ydt : {TGL_DTYPE_BOOL, TGL_DTYPE_U8})
                for (int rep = 0; rep < 2; ++rep) {
                    Shape s = random_shape(rng_);
                    Shape sb = s;
                    if (!sb.empty() && rng_.chance(0.4)) sb[rng_.integer(0, int64_t(sb.size()) - 1)] = 1;  // broadcast b
                    bool small = rep == 0;
                    EXPECT_TRUE(check(op, {input(dt, s, rng_, small), input(dt, sb, rng_, small)}, ydt, output_view(s, rng_), 0,
                                      CompareMode::Exact, "op " + std::to_string(op) + " " + dtype_name(dt)));
                }
}

TEST_F(DtypeDiff, LogicalEveryDtype) {
    const tgl_op ops[] = {TGL_OP_LOGICAL_AND, TGL_OP_LOGICAL_OR, TGL_OP_LOGICAL_XOR};
    for (tgl_dtype dt : kWord) {
        for (tgl_op op : ops) {
            Shape s = random_shape(rng_);
            tgl_dtype ydt = rng_.chance(0.5) ? TGL_DTYPE_BOOL : TGL_DTYPE_U8;
            EXPECT_TRUE(check(op, {input(dt, s, rng_, true), input(dt, s, rng_, true)}, ydt, output_view(s, rng_), 0,
                              CompareMode::Exact, "op " + std::to_string(op) + " " + dtype_name(dt)));
        }
        Shape s = random_shape(rng_);
        for (tgl_dtype ydt : {TGL_DTYPE_BOOL, TGL_DTYPE_U8})
            EXPECT_TRUE(check(TGL_OP_LOGICAL_NOT, {input(dt, s, rng_, true)}, ydt, output_view(s, rng_), 0,
                              CompareMode::Exact, "logical_not " + dtype_name(dt)));
    }
}

TEST_F(DtypeDiff, WhereEveryDtypeWithBroadcasting) {
    for (tgl_dtype dt : kWord)
        for (tgl_dtype cdt : {TGL_DTYPE_BOOL, TGL_DTYPE_U8})
            for (int rep = 0; rep < 3; ++rep) {
                Shape y = rep == 0 ? Shape{3, 5} : (rep == 1 ? Shape{2, 3, 7} : Shape{33});
                // Per dim of y, a random nonempty set of the three inputs has its size, the
                // others 1 (each input broadcasts somewhere); leading 1s are sometimes dropped.
                Shape in_shapes[3];
                for (size_t d = 0; d < y.size(); ++d) {
                    int64_t mask = rng_.integer(1, 7);
                    for (int k = 0; k < 3; ++k) in_shapes[k].push_back((mask >> k) & 1 ? y[d] : 1);
                }
                for (Shape& sh : in_shapes)
                    while (!sh.empty() && sh[0] == 1 && rng_.chance(0.5)) sh.erase(sh.begin());
                Operand c = input(cdt, in_shapes[0], rng_, false), a = input(dt, in_shapes[1], rng_, false),
                        b = input(dt, in_shapes[2], rng_, false);
                EXPECT_TRUE(check(TGL_OP_WHERE, {c, a, b}, dt, output_view(y, rng_), 0, CompareMode::ExactBits,
                                  "where " + dtype_name(cdt) + ", " + dtype_name(dt)));
            }
}

// f16 and bf16 float ops: the GLES plugin computes in f32 and rounds the f32 result to the dtype,
// the reference rounds its double result once. Where the f32 result lands exactly halfway between
// two values of the dtype (double rounding: silu(2^-24) is 2^-25 in f32, which rounds to even, 0,
// while the true value is a hair above it), the two differ by one ulp. So each element may also be
// within one ulp of the reference (same NaN and infinity positions), beside the NMSE bound.
::testing::AssertionResult check_rounded(tgl_dtype dt, tgl_op op, const std::vector<Operand>& ins, const View& yv,
                                         const std::string& what) {
    std::vector<double> want = run_on(Role::Reference, op, nullptr, ins, dt, yv);
    std::vector<double> got = run_on(Role::Subject, op, nullptr, ins, dt, yv);
    ::testing::AssertionResult nmse = compare(dt, got, want, yv.shape, 1e-5, CompareMode::Nmse, what);
    if (nmse) return nmse;
    const int mantissa = dt == TGL_DTYPE_BF16 ? 7 : 10, min_exp = dt == TGL_DTYPE_BF16 ? -126 : -14;
    for (size_t i = 0; i < want.size(); ++i) {
        const double w = want[i], g = got[i];
        if (std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)) {
            if ((std::isnan(w) && std::isnan(g)) || w == g) continue;
            return nmse;
        }
        const double ulp = std::fabs(w) < std::ldexp(1.0, min_exp) ? std::ldexp(1.0, min_exp - mantissa)
                                                                  : std::ldexp(1.0, std::ilogb(w) - mantissa);
        if (std::fabs(g - w) > ulp) return nmse;
    }
    return ::testing::AssertionSuccess() << "within one " << dtype_name(dt) << " ulp of the reference everywhere";
}

// The float ops in a 16-bit dtype: each unary op on 3 random shapes and layouts (reps), each binary
// op likewise with b broadcast half of the time.
void float_ops_in(tgl_dtype dt, const std::vector<tgl_op>& unary, const std::vector<tgl_op>& binary, int reps, Rng& rng) {
    auto input16 = [&](const Shape& s, double lo, double hi) {
        View v = make_view(s, rng.chance(0.3) ? misaligned_layout(rng) : random_layout(s, rng, true));
        return Operand{dt, v, random_storage(dt, v.storage, rng, with_special_values(dt, float_values(dt, lo, hi), 0.05))};
    };
    const std::string name = dtype_name(dt);
    for (tgl_op op : unary)
        for (int rep = 0; rep < reps; ++rep) {
            Shape s = random_shape(rng);
            EXPECT_TRUE(check_rounded(dt, op, {input16(s, -8, 8)}, output_view(s, rng), name + " unary op " + std::to_string(op)));
        }
    for (tgl_op op : binary)
        for (int rep = 0; rep < reps; ++rep) {
            Shape s = random_shape(rng);
            Shape sb = s;
            if (!sb.empty() && rng.chance(0.5)) sb[0] = 1;
            double lo = op == TGL_OP_POW ? 0.1 : -100, hi = op == TGL_OP_POW ? 4 : 100;
            EXPECT_TRUE(check_rounded(dt, op, {input16(s, lo, hi), input16(sb, op == TGL_OP_POW ? -4 : -100, op == TGL_OP_POW ? 4 : 100)},
                                      output_view(s, rng), name + " binary op " + std::to_string(op)));
        }
}

TEST_F(DtypeDiff, FloatOpsInF16) {
    float_ops_in(TGL_DTYPE_F16,
                 {TGL_OP_ABS, TGL_OP_NEG, TGL_OP_RELU, TGL_OP_SIGMOID, TGL_OP_TANH, TGL_OP_EXP, TGL_OP_LOG, TGL_OP_SQRT, TGL_OP_GELU,
                  TGL_OP_SILU},
                 {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_DIV, TGL_OP_MAXIMUM, TGL_OP_MINIMUM, TGL_OP_POW}, 3, rng_);
}

// bf16: the same ops, 2 shapes each (the elementwise kernels convert every dtype alike).
TEST_F(DtypeDiff, FloatOpsInBf16) {
    float_ops_in(TGL_DTYPE_BF16,
                 {TGL_OP_ABS, TGL_OP_NEG, TGL_OP_RELU, TGL_OP_SIGMOID, TGL_OP_TANH, TGL_OP_EXP, TGL_OP_LOG, TGL_OP_SQRT, TGL_OP_GELU,
                  TGL_OP_SILU},
                 {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_DIV, TGL_OP_MAXIMUM, TGL_OP_MINIMUM, TGL_OP_POW}, 2, rng_);
}

TEST_F(DtypeDiff, EmptyTensors) {
    for (tgl_dtype dt : {TGL_DTYPE_I64, TGL_DTYPE_I16}) {
        Shape s{3, 0, 2};
        EXPECT_TRUE(check(TGL_OP_CAST, {input(dt, s, rng_, false, false)}, TGL_DTYPE_F32, contiguous(s), 0,
                          CompareMode::ExactBits, "empty cast " + dtype_name(dt)));
        EXPECT_TRUE(check(TGL_OP_CAST, {input(TGL_DTYPE_F16, s, rng_, false, false)}, dt, contiguous(s), 0,
                          CompareMode::ExactBits, "empty cast to " + dtype_name(dt)));
    }
    for (tgl_dtype dt : {TGL_DTYPE_F16, TGL_DTYPE_I8, TGL_DTYPE_BOOL}) {
        Shape s{3, 0, 2};
        EXPECT_TRUE(check(TGL_OP_CAST, {input(dt, s, rng_, false, false)}, TGL_DTYPE_U8, contiguous(s), 0,
                          CompareMode::ExactBits, "empty cast"));
        EXPECT_TRUE(check(TGL_OP_WHERE,
                          {input(TGL_DTYPE_BOOL, s, rng_, false, false), input(dt, s, rng_, false, false),
                           input(dt, {2}, rng_, false, false)},
                          dt, contiguous(s), 0, CompareMode::ExactBits, "empty where"));
        EXPECT_TRUE(check(TGL_OP_EQ, {input(dt, s, rng_, false, false), input(dt, s, rng_, false, false)},
                          TGL_DTYPE_BOOL, contiguous(s), 0, CompareMode::Exact, "empty eq"));
    }
}

TEST_F(DtypeDiff, PastMaxWorkgroupsPerDispatch) {
    // More than 65535 workgroups of 256 invocations: the grid is split into several dispatches.
    const int64_t n = int64_t(65536) * 256 + 5;
    Shape s{n};
    Operand x = input(TGL_DTYPE_I8, s, rng_, false, false);
    EXPECT_TRUE(check(TGL_OP_CAST, {x}, TGL_DTYPE_F16, make_view(s, Layout{"odd", {}, {}, {}, 1, 0}), 0,
                      CompareMode::ExactBits, "big cast i8 -> f16"));
    Operand c = input(TGL_DTYPE_U8, s, rng_, false, false);
    EXPECT_TRUE(check(TGL_OP_WHERE, {c, x, input(TGL_DTYPE_I8, {1}, rng_, false, false)}, TGL_DTYPE_I8,
                      make_view(s, Layout{"odd", {}, {}, {}, 3, 0}), 0, CompareMode::Exact, "big where i8"));
}

}  // namespace
}  // namespace diff
