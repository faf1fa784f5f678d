// Integer arithmetic (ops.h, "Integer arithmetic") and floor_divide: the GLES plugin against the
// CPU reference, which must agree exactly. Every integer op in i32, i8 and u8 over the whole range
// (the extremes mixed in: min, min + 1, -1, 0, 1, max - 1, max) and over small values (so that
// quotients, remainders and division by zero are common), broadcasting, random layouts (permuted,
// stepped, negative, padded, odd offsets inside a word), empty tensors and one tensor past 65,535
// workgroups; sum/prod/max/min and cumsum/cumprod of i32 over random axes and long rows; abs, neg
// and clamp; floor_divide on f32 and f16.
#include "diff.h"

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

TEST_F(IntArithDiff, ReductionsI32) {
    const tgl_dtype dt = TGL_DTYPE_I32;
    struct Case { Shape x; std::vector<int> axes; };
    const std::vector<Case> cases = {{{7}, {0}},          {{5000}, {0}},        {{3, 4099}, {1}}, {{4099, 3}, {0}},
                                     {{6, 7, 8}, {0, 2}}, {{20000, 2}, {0}},    {{2, 0, 3}, {1}}, {{5000, 7}, {1}}};
    for (tgl_op op : {TGL_OP_SUM, TGL_OP_PROD, TGL_OP_MAX, TGL_OP_MIN})
        for (const Case& c : cases) {
            if ((op == TGL_OP_MAX || op == TGL_OP_MIN) && c.x[1] == 0) continue;  // empty max/min is an error
            tgl_reduce_params p{};
            p.struct_size = sizeof p;
            p.n_axes = uint32_t(c.axes.size());
            Shape ys;
            for (size_t d = 0; d < c.x.size(); ++d) {
                bool reduced = false;
                for (int a : c.axes) reduced = reduced || a == int(d);
                if (!reduced) ys.push_back(c.x[d]);
            }
            for (size_t i = 0; i < c.axes.size(); ++i) p.axes[i] = c.axes[i];
            std::vector<uint8_t> bytes(sizeof p);
            std::memcpy(bytes.data(), &p, sizeof p);
            // prod: mostly +-1 and small values (else nearly every product is 0 mod 2^32).
            ValueGen gen = op == TGL_OP_PROD ? int_values(dt, -3, 3) : values(dt, false);
            check_op(op, bytes, {operand(dt, c.x, rng_, gen)}, {rand_output(dt, ys, rng_)}, {0},
                     op_name(op) + " i32 x " + shape_str(c.x));
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

}  // namespace
}  // namespace diff
