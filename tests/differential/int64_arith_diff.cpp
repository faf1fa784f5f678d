// i64 arithmetic (ops.h, "Integer arithmetic"): the GLES plugin, which computes on two 32-bit
// words, against the CPU reference in int64_t, bit for bit. Random full-range 64-bit values (the
// edges INT64_MIN/MAX, +-2^31, 2^32 - 1, 2^32 mixed in) and small ones (equal values for the
// comparisons); add, sub, mul, maximum, minimum, the comparisons, abs, neg, clamp, add_n; odd sizes,
// broadcasting, random layouts (permuted, stepped, negative, padded), empty tensors; sum, prod,
// max and min over random axes, long rows and columns, and a column sum of more than 65,535
// workgroups; argmax/argmin with i64 indices.
#include "diff.h"

#include <string>
#include <vector>

namespace diff {
namespace {

const tgl_dtype I64 = TGL_DTYPE_I64, BOOL = TGL_DTYPE_BOOL, U8 = TGL_DTYPE_U8;
const std::vector<tgl_op> kBinary = {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_MAXIMUM, TGL_OP_MINIMUM};
const std::vector<tgl_op> kCompare = {TGL_OP_EQ, TGL_OP_NE, TGL_OP_LT, TGL_OP_LE, TGL_OP_GT, TGL_OP_GE};

// An i64 operand of this logical shape: a random layout (or contiguous), random bits.
InputArg operand(const Shape& shape, Rng& rng, bool small, bool layouts = true) {
    InputArg a;
    a.dtype = I64;
    a.view = layouts ? random_view(shape, I64, rng, true) : contiguous(shape);
    a.storage = i64_storage(a.view.storage, rng, small);
    return a;
}

Shape random_shape(Rng& rng) {
    static const std::vector<Shape> shapes = {{1}, {7}, {33}, {3, 5}, {2, 3, 7}, {4, 1, 5}, {129}, {2, 2, 2, 3}, {}, {1031}};
    return rng.pick(shapes);
}

std::string op_name(tgl_op op) { return "op " + std::to_string(op); }

class Int64ArithDiff : public SeededTest {};

TEST_F(Int64ArithDiff, BinaryAndCompareOps) {
    std::vector<tgl_op> ops = kBinary;
    ops.insert(ops.end(), kCompare.begin(), kCompare.end());
    for (tgl_op op : ops)
        for (int rep = 0; rep < 3; ++rep) {
            Shape s = random_shape(rng_), sb = s;
            if (!sb.empty() && rng_.chance(0.4)) sb[size_t(rng_.integer(0, int64_t(sb.size()) - 1))] = 1;  // broadcast b
            const bool small = rep == 2;  // equal values and ties
            const bool compare = std::find(kCompare.begin(), kCompare.end(), op) != kCompare.end();
            const tgl_dtype y = compare ? (rng_.chance(0.5) ? BOOL : U8) : I64;
            check_op(op, {}, {operand(s, rng_, small), operand(sb, rng_, small)}, {rand_output(y, s, rng_)}, {0},
                     op_name(op) + " i64 " + shape_str(s) + " x " + shape_str(sb) + (small ? " small" : " full range"));
        }
}

TEST_F(Int64ArithDiff, BroadcastAcrossRanks) {
    for (tgl_op op : {TGL_OP_MUL, TGL_OP_ADD, TGL_OP_LT})
        check_op(op, {}, {operand({13, 1, 17}, rng_, false), operand({5, 1}, rng_, false)},
                 {rand_output(op == TGL_OP_LT ? BOOL : I64, {13, 5, 17}, rng_)}, {0},
                 op_name(op) + " i64 (13,1,17) x (5,1)");
}

TEST_F(Int64ArithDiff, UnaryAbsNegClampAndAddN) {
    for (int rep = 0; rep < 3; ++rep) {
        Shape s = random_shape(rng_);
        for (tgl_op op : {TGL_OP_ABS, TGL_OP_NEG})
            check_op(op, {}, {operand(s, rng_, false)}, {rand_output(I64, s, rng_)}, {0}, op_name(op) + " i64 " + shape_str(s));
        const std::vector<float> bounds = {-1e19f, -5e9f, -3.5f, 0.0f, 7.25f, 3e9f, 2e18f, 1e19f};
        tgl_clamp_params p{sizeof(tgl_clamp_params), rng_.pick(bounds), rng_.pick(bounds), 0};
        check_op(TGL_OP_CLAMP, param_bytes(p), {operand(s, rng_, false)}, {rand_output(I64, s, rng_)}, {0},
                 "clamp i64 [" + std::to_string(p.min) + ", " + std::to_string(p.max) + "] " + shape_str(s));
        check_op(TGL_OP_ADD_N, {}, {operand(s, rng_, false), operand(s, rng_, false), operand(s, rng_, false)},
                 {rand_output(I64, s, rng_)}, {0}, "add_n of 3 i64 " + shape_str(s));
    }
}

TEST_F(Int64ArithDiff, EmptyTensors) {
    for (tgl_op op : {TGL_OP_ADD, TGL_OP_MUL, TGL_OP_GE})
        check_op(op, {}, {operand({3, 0, 2}, rng_, false, false), operand({2}, rng_, false, false)},
                 {output_of(op == TGL_OP_GE ? BOOL : I64, {3, 0, 2})}, {0}, op_name(op) + " i64 empty");
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

TEST_F(Int64ArithDiff, Reductions) {
    struct Case { Shape x; std::vector<int> axes; };
    // Short rows (an invocation per output), long rows (split workgroups), columns (slabs and
    // chunks), several axes, empty.
    const std::vector<Case> cases = {{{7}, {0}},          {{5000}, {0}},     {{3, 4099}, {1}}, {{4099, 3}, {0}},
                                     {{6, 7, 8}, {0, 2}}, {{20000, 2}, {0}}, {{2, 0, 3}, {1}}, {{5000, 7}, {1}}};
    for (tgl_op op : {TGL_OP_SUM, TGL_OP_PROD, TGL_OP_MAX, TGL_OP_MIN})
        for (const Case& c : cases) {
            if ((op == TGL_OP_MAX || op == TGL_OP_MIN) && c.x[1] == 0) continue;  // empty max/min is an error
            // prod: small values (else nearly every product of many is 0 mod 2^64).
            check_op(op, param_bytes(reduce_over(c.axes)), {operand(c.x, rng_, op == TGL_OP_PROD)},
                     {rand_output(I64, kept_dims(c.x, c.axes), rng_)}, {0}, op_name(op) + " i64 x " + shape_str(c.x));
        }
}

// Column sums of (2, 64 * 65,536 + 3) i64: 65,537 slabs of 64 columns, more workgroups than one
// dispatch dimension holds (the plugin splits the grid).
TEST_F(Int64ArithDiff, SumPastMaxWorkgroupsPerDispatch) {
    const Shape x{2, int64_t(64) * 65536 + 3};
    check_op(TGL_OP_SUM, param_bytes(reduce_over({0})), {operand(x, rng_, false, false)}, {output_of(I64, {x[1]})}, {0},
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
