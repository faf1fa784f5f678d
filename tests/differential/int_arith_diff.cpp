// Integer arithmetic (ops.h, "Integer arithmetic") and floor_divide: the GLES plugin against the
// CPU reference, which must agree exactly. Every integer op in i32, i8 and u8 over the whole range
// (the extremes mixed in: min, min + 1, -1, 0, 1, max - 1, max) and over small values (so that
// quotients, remainders and division by zero are common), broadcasting, random layouts (permuted,
// stepped, negative, padded, odd offsets inside a word), empty tensors and one tensor past 65,535
// workgroups; sum/prod/max/min and cumsum/cumprod of i32 over random axes and long rows; abs, neg
// and clamp; floor_divide on f32 and f16.
// i64 (two 32-bit words on the GPU), bit for bit: random full-range 64-bit values (the edges
// INT64_MIN/MAX, +-2^31, 2^32 - 1, 2^32 mixed in) and small ones (equal values for the
// comparisons); add, sub, mul, maximum, minimum, the comparisons, abs, neg, clamp, add_n with
// broadcasting, random layouts and empty tensors; sum, prod, max and min over random axes, long
// rows and columns, and a column sum of more than 65,535 workgroups; argmax/argmin with i64 indices.
#include "diff.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace diff {
namespace {

const std::vector<tgl_dtype> kInts = {TGL_DTYPE_I32, TGL_DTYPE_I8, TGL_DTYPE_U8};
const std::vector<tgl_op> kIntBinary = {TGL_OP_ADD,   TGL_OP_SUB,  TGL_OP_MUL,       TGL_OP_DIV,    TGL_OP_FLOOR_DIVIDE,
                                        TGL_OP_FMOD,  TGL_OP_REMAINDER, TGL_OP_POW, TGL_OP_MAXIMUM, TGL_OP_MINIMUM};

// Whole range with the extremes, or small values around 0 (0 included).
ValueGen values(tgl_dtype dt, bool small) {
    if (small) return int_values(dt, -6, 6);
    return with_special_values(dt, int_values(dt, int_range(dt).lo, int_range(dt).hi), 0.2);
}

InputArg operand(tgl_dtype dt, const Shape& shape, Rng& rng, const ValueGen& gen, bool layouts = true) {
    InputArg a;
    a.dtype = dt;
    a.view = layouts ? random_view(shape, dt, rng, true) : contiguous(shape);
    a.storage = random_storage(dt, a.view.storage, rng, gen);
    return a;
}

Shape random_shape(Rng& rng) {
    static const std::vector<Shape> shapes = {{1}, {7}, {33}, {3, 5}, {2, 3, 7}, {4, 1, 5}, {129}, {2, 2, 2, 3}, {}, {1031}};
    return rng.pick(shapes);
}

std::string op_name(tgl_op op) { return "op " + std::to_string(op); }

class IntArithDiff : public SeededTest {};

TEST_F(IntArithDiff, BinaryOpsEveryIntDtype) {
    for (tgl_op op : kIntBinary)
        for (tgl_dtype dt : kInts)
            for (int rep = 0; rep < 2; ++rep) {
                Shape s = random_shape(rng_), sb = s;
                if (!sb.empty() && rng_.chance(0.4)) sb[size_t(rng_.integer(0, int64_t(sb.size()) - 1))] = 1;  // broadcast b
                // pow: exponents small enough to matter (and negative), bases anywhere.
                const bool small = rep % 2 == 1;
                ValueGen gb = op == TGL_OP_POW ? int_values(dt, -3, 40) : values(dt, small);
                check_op(op, {}, {operand(dt, s, rng_, values(dt, small)), operand(dt, sb, rng_, gb)},
                         {rand_output(dt, s, rng_)}, {0}, op_name(op) + " " + dtype_name(dt) + (small ? " small" : " full range"));
            }
}

TEST_F(IntArithDiff, BroadcastAcrossRanks) {
    for (tgl_op op : {TGL_OP_FLOOR_DIVIDE, TGL_OP_REMAINDER, TGL_OP_MUL})
        for (tgl_dtype dt : kInts)
            check_op(op, {}, {operand(dt, {13, 1, 17}, rng_, values(dt, true)), operand(dt, {5, 1}, rng_, values(dt, true))},
                     {rand_output(dt, {13, 5, 17}, rng_)}, {0}, op_name(op) + " " + dtype_name(dt) + " (13,1,17) x (5,1)");
}

TEST_F(IntArithDiff, UnaryAbsNegClamp) {
    for (tgl_dtype dt : kInts)
        for (int rep = 0; rep < 3; ++rep) {
            Shape s = random_shape(rng_);
            for (tgl_op op : {TGL_OP_ABS, TGL_OP_NEG})
                check_op(op, {}, {operand(dt, s, rng_, values(dt, false))}, {rand_output(dt, s, rng_)}, {0},
                         op_name(op) + " " + dtype_name(dt));
            const float bounds[] = {-1e10f, -200.5f, -3.5f, 0.0f, 7.25f, 100.0f, 3e9f};
            tgl_clamp_params p{sizeof(tgl_clamp_params), rng_.pick(std::vector<float>(bounds, bounds + 7)),
                               rng_.pick(std::vector<float>(bounds, bounds + 7)), 0};
            std::vector<uint8_t> bytes(sizeof p);
            std::memcpy(bytes.data(), &p, sizeof p);
            check_op(TGL_OP_CLAMP, bytes, {operand(dt, s, rng_, values(dt, false))}, {rand_output(dt, s, rng_)}, {0},
                     "clamp " + dtype_name(dt) + " [" + std::to_string(p.min) + ", " + std::to_string(p.max) + "]");
        }
}

TEST_F(IntArithDiff, EmptyTensors) {
    for (tgl_op op : kIntBinary)
        check_op(op, {}, {operand(TGL_DTYPE_I32, {3, 0, 2}, rng_, values(TGL_DTYPE_I32, true), false),
                          operand(TGL_DTYPE_I32, {2}, rng_, values(TGL_DTYPE_I32, true), false)},
                 {output_of(TGL_DTYPE_I32, {3, 0, 2})}, {0}, op_name(op) + " empty");
}

TEST_F(IntArithDiff, PastMaxWorkgroupsPerDispatch) {
    // More than 65535 workgroups of 256 invocations: the grid is split into several dispatches.
    const Shape s{int64_t(65536) * 256 + 5};
    const tgl_dtype dt = TGL_DTYPE_U8;
    check_op(TGL_OP_FLOOR_DIVIDE, {}, {operand(dt, s, rng_, values(dt, false), false), operand(dt, {1}, rng_, int_values(dt, 1, 9), false)},
             {output_of(dt, s)}, {0}, "big floor_divide u8");
}

tgl_reduce_params reduce_over(const std::vector<int>& axes) {
    tgl_reduce_params p{};
    p.struct_size = sizeof p;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    return p;
}

Shape kept_dims(const Shape& x, const std::vector<int>& axes) {
    Shape ys;
    for (size_t d = 0; d < x.size(); ++d)
        if (std::find(axes.begin(), axes.end(), int(d)) == axes.end()) ys.push_back(x[d]);
    return ys;
}

// The reductions' cases (i32 and i64): short rows (an invocation per output), long rows (split
// workgroups), columns (slabs and chunks), several axes, empty.
struct ReduceCase {
    Shape x;
    std::vector<int> axes;
};
const std::vector<ReduceCase> kReduceCases = {{{7}, {0}},          {{5000}, {0}},     {{3, 4099}, {1}}, {{4099, 3}, {0}},
                                              {{6, 7, 8}, {0, 2}}, {{20000, 2}, {0}}, {{2, 0, 3}, {1}}, {{5000, 7}, {1}}};
const std::vector<tgl_op> kFolds = {TGL_OP_SUM, TGL_OP_PROD, TGL_OP_MAX, TGL_OP_MIN};
bool empty_max_or_min(tgl_op op, const ReduceCase& c) { return (op == TGL_OP_MAX || op == TGL_OP_MIN) && c.x[1] == 0; }  // an error

TEST_F(IntArithDiff, ReductionsI32) {
    const tgl_dtype dt = TGL_DTYPE_I32;
    for (tgl_op op : kFolds)
        for (const ReduceCase& c : kReduceCases) {
            if (empty_max_or_min(op, c)) continue;
            // prod: mostly +-1 and small values (else nearly every product is 0 mod 2^32).
            ValueGen gen = op == TGL_OP_PROD ? int_values(dt, -3, 3) : values(dt, false);
            check_op(op, param_bytes(reduce_over(c.axes)), {operand(dt, c.x, rng_, gen)},
                     {rand_output(dt, kept_dims(c.x, c.axes), rng_)}, {0}, op_name(op) + " i32 x " + shape_str(c.x));
        }
}

TEST_F(IntArithDiff, ScansI32) {
    const tgl_dtype dt = TGL_DTYPE_I32;
    const std::vector<Shape> shapes = {{7}, {3, 100}, {3000}, {2, 70000}, {65, 3}};
    for (tgl_op op : {TGL_OP_CUMSUM, TGL_OP_CUMPROD})
        for (const Shape& s : shapes)
            for (int flags = 0; flags < 4; ++flags) {
                if (s[0] == 2 && flags != 3) continue;  // the long rows once (exclusive, reverse)
                tgl_scan_params p{sizeof(tgl_scan_params), int32_t(s.size()) - 1, uint32_t(flags & 1), uint32_t(flags >> 1)};
                if (s == Shape{65, 3}) p.axis = 0;
                std::vector<uint8_t> bytes(sizeof p);
                std::memcpy(bytes.data(), &p, sizeof p);
                ValueGen gen = op == TGL_OP_CUMPROD ? int_values(dt, -3, 3) : values(dt, false);
                check_op(op, bytes, {operand(dt, s, rng_, gen)}, {rand_output(dt, s, rng_)}, {0},
                         op_name(op) + " i32 " + shape_str(s) + " exclusive " + std::to_string(flags & 1) +
                             " reverse " + std::to_string(flags >> 1));
            }
}

// Special values without subnormals: a GPU may flush them to zero (NVIDIA does; GLSL ES allows
// it), which changes a quotient by a subnormal completely; the CPU reference keeps them.
ValueGen with_normal_special_values(tgl_dtype dt, ValueGen base, double p) {
    return [gen = with_special_values(dt, std::move(base), p)](Rng& r) {
        double v = gen(r);
        while (v != 0 && std::fabs(v) < 1.1754943508222875e-38) v = gen(r);  // below f32's smallest normal
        return v;
    };
}

TEST_F(IntArithDiff, FloorDivideFloats) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (int rep = 0; rep < 3; ++rep) {
            Shape s = random_shape(rng_);
            ValueGen a = rep == 0 ? float_values(dt, -100, 100) : with_normal_special_values(dt, int_values(TGL_DTYPE_I32, -20, 20), 0.1);
            ValueGen b = rep == 0 ? float_values(dt, 0.25, 7) : with_normal_special_values(dt, int_values(TGL_DTYPE_I32, -5, 5), 0.1);
            check_op(TGL_OP_FLOOR_DIVIDE, {}, {operand(dt, s, rng_, a), operand(dt, s, rng_, b)}, {rand_output(dt, s, rng_)},
                     {0}, "floor_divide " + dtype_name(dt));
        }
}

// ---- i64 -------------------------------------------------------------------------------------

const std::vector<tgl_op> kI64Binary = {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_MAXIMUM, TGL_OP_MINIMUM};
const std::vector<tgl_op> kCompare = {TGL_OP_EQ, TGL_OP_NE, TGL_OP_LT, TGL_OP_LE, TGL_OP_GT, TGL_OP_GE};

// An i64 operand of this logical shape: a random layout (or contiguous), random 64-bit values
// (i64_storage: full range with the edges, or small).
InputArg i64_operand(const Shape& shape, Rng& rng, bool small, bool layouts = true) {
    InputArg a;
    a.dtype = I64;
    a.view = layouts ? random_view(shape, I64, rng, true) : contiguous(shape);
    a.storage = i64_storage(a.view.storage, rng, small);
    return a;
}

class Int64ArithDiff : public SeededTest {};

TEST_F(Int64ArithDiff, BinaryAndCompareOps) {
    std::vector<tgl_op> ops = kI64Binary;
    ops.insert(ops.end(), kCompare.begin(), kCompare.end());
    for (tgl_op op : ops)
        for (int rep = 0; rep < 3; ++rep) {
            Shape s = random_shape(rng_), sb = s;
            if (!sb.empty() && rng_.chance(0.4)) sb[size_t(rng_.integer(0, int64_t(sb.size()) - 1))] = 1;  // broadcast b
            const bool small = rep == 2;  // equal values and ties
            const bool compare = std::find(kCompare.begin(), kCompare.end(), op) != kCompare.end();
            const tgl_dtype y = compare ? (rng_.chance(0.5) ? BOOL : U8) : I64;
            check_op(op, {}, {i64_operand(s, rng_, small), i64_operand(sb, rng_, small)}, {rand_output(y, s, rng_)}, {0},
                     op_name(op) + " i64 " + shape_str(s) + " x " + shape_str(sb) + (small ? " small" : " full range"));
        }
}

TEST_F(Int64ArithDiff, BroadcastAcrossRanks) {
    for (tgl_op op : {TGL_OP_MUL, TGL_OP_ADD, TGL_OP_LT})
        check_op(op, {}, {i64_operand({13, 1, 17}, rng_, false), i64_operand({5, 1}, rng_, false)},
                 {rand_output(op == TGL_OP_LT ? BOOL : I64, {13, 5, 17}, rng_)}, {0},
                 op_name(op) + " i64 (13,1,17) x (5,1)");
}

TEST_F(Int64ArithDiff, UnaryAbsNegClampAndAddN) {
    for (int rep = 0; rep < 3; ++rep) {
        Shape s = random_shape(rng_);
        for (tgl_op op : {TGL_OP_ABS, TGL_OP_NEG})
            check_op(op, {}, {i64_operand(s, rng_, false)}, {rand_output(I64, s, rng_)}, {0}, op_name(op) + " i64 " + shape_str(s));
        const std::vector<float> bounds = {-1e19f, -5e9f, -3.5f, 0.0f, 7.25f, 3e9f, 2e18f, 1e19f};
        tgl_clamp_params p{sizeof(tgl_clamp_params), rng_.pick(bounds), rng_.pick(bounds), 0};
        check_op(TGL_OP_CLAMP, param_bytes(p), {i64_operand(s, rng_, false)}, {rand_output(I64, s, rng_)}, {0},
                 "clamp i64 [" + std::to_string(p.min) + ", " + std::to_string(p.max) + "] " + shape_str(s));
        check_op(TGL_OP_ADD_N, {}, {i64_operand(s, rng_, false), i64_operand(s, rng_, false), i64_operand(s, rng_, false)},
                 {rand_output(I64, s, rng_)}, {0}, "add_n of 3 i64 " + shape_str(s));
    }
}

TEST_F(Int64ArithDiff, EmptyTensors) {
    for (tgl_op op : {TGL_OP_ADD, TGL_OP_MUL, TGL_OP_GE})
        check_op(op, {}, {i64_operand({3, 0, 2}, rng_, false, false), i64_operand({2}, rng_, false, false)},
                 {output_of(op == TGL_OP_GE ? BOOL : I64, {3, 0, 2})}, {0}, op_name(op) + " i64 empty");
}

TEST_F(Int64ArithDiff, Reductions) {
    for (tgl_op op : kFolds)
        for (const ReduceCase& c : kReduceCases) {
            if (empty_max_or_min(op, c)) continue;
            // prod: small values (else nearly every product of many is 0 mod 2^64).
            check_op(op, param_bytes(reduce_over(c.axes)), {i64_operand(c.x, rng_, op == TGL_OP_PROD)},
                     {rand_output(I64, kept_dims(c.x, c.axes), rng_)}, {0}, op_name(op) + " i64 x " + shape_str(c.x));
        }
}

// Column sums of (2, 64 * 65,536 + 3) i64: 65,537 slabs of 64 columns, more workgroups than one
// dispatch dimension holds (the plugin splits the grid).
TEST_F(Int64ArithDiff, SumPastMaxWorkgroupsPerDispatch) {
    const Shape x{2, int64_t(64) * 65536 + 3};
    check_op(TGL_OP_SUM, param_bytes(reduce_over({0})), {i64_operand(x, rng_, false, false)}, {output_of(I64, {x[1]})}, {0},
             "sum over 2 rows of (2, 4194307) i64");
}

TEST_F(Int64ArithDiff, ArgmaxArgminI64Indices) {
    const std::vector<Shape> shapes = {{7}, {3, 5}, {2, 3, 7}, {5000}, {4, 1031}};
    for (tgl_op op : {TGL_OP_ARGMAX, TGL_OP_ARGMIN})
        for (const Shape& s : shapes)
            for (int last = 0; last < 2; ++last) {
                tgl_arg_reduce_params p{};
                p.struct_size = sizeof p;
                p.axis = int32_t(rng_.integer(0, int64_t(s.size()) - 1));
                p.select_last_index = uint32_t(last);
                Shape ys = kept_dims(s, {p.axis});
                // Small integers in f32: ties, so that the first / last index matters.
                InputArg x;
                x.dtype = TGL_DTYPE_F32;
                x.view = random_view(s, TGL_DTYPE_F32, rng_, true);
                x.storage = random_storage(TGL_DTYPE_F32, x.view.storage, rng_, int_values(TGL_DTYPE_I32, -3, 3));
                check_op(op, param_bytes(p), {x}, {rand_output(I64, ys, rng_)}, {0},
                         op_name(op) + " " + shape_str(s) + " axis " + std::to_string(p.axis) + " last " + std::to_string(last));
            }
}

}  // namespace
}  // namespace diff
