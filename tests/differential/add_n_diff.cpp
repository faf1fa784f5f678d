// add_n (ops.h; ABI 1.3): the GLES plugin against the CPU reference. Both sum left to right in f32
// and round once at the store, so f16, bf16 and the integers (which wrap alike) must agree exactly; f32
// within tol::kElementwise (NMSE), as add: a driver may flush f32 subnormal results to zero. Every
// n from 1 to 8, f32, f16, bf16, i32, i8 and u8, odd sizes, random layouts of every operand (strided,
// permuted, negative, padded, broadcast), inputs of smaller ranks broadcast to y, f16 sums that
// pass the f16 range on the way, and one tensor past 65,535 workgroups.
#include "diff.h"

#include <string>
#include <vector>

namespace diff {
namespace {

const std::vector<tgl_dtype> kDtypes = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_I8, TGL_DTYPE_U8};

ValueGen values(tgl_dtype dt) {
    if (dt == TGL_DTYPE_F32) return with_special_values(dt, float_values(dt, -1e3, 1e3), 0.05);
    if (dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16) return with_special_values(dt, float_values(dt, -3e4, 3e4), 0.05);  // f16 sums pass 65504
    return with_special_values(dt, int_values(dt, int_range(dt).lo, int_range(dt).hi), 0.2);
}

// x of y's shape, or of it with some dims 1 or leading dims dropped (broadcast), in a random view.
InputArg operand(tgl_dtype dt, const Shape& ys, Rng& rng, bool may_broadcast) {
    Shape s = ys;
    if (may_broadcast && rng.chance(0.4)) {
        for (int64_t& d : s)
            if (rng.chance(0.5)) d = 1;
        if (!s.empty() && rng.chance(0.5)) s.erase(s.begin(), s.begin() + rng.integer(1, int64_t(s.size())));
    }
    InputArg a;
    a.dtype = dt;
    a.view = random_view(s, dt, rng, true);
    a.storage = random_storage(dt, a.view.storage, rng, values(dt));
    return a;
}

// f32 as add (subnormals), everything else exact.
double tolerance(tgl_dtype dt) { return dt == TGL_DTYPE_F32 ? tol::kElementwise : 0.0; }

std::string what(int n, tgl_dtype dt, const Shape& ys) {
    return "add_n of " + std::to_string(n) + " " + dtype_name(dt) + " inputs into " + shape_str(ys);
}

class AddNDiff : public SeededTest {};

TEST_F(AddNDiff, EveryCountDtypeAndLayout) {
    static const std::vector<Shape> shapes = {{1}, {7}, {33}, {3, 5}, {2, 3, 7}, {4, 1, 5}, {129}, {2, 2, 2, 3}, {}, {1031}, {0, 3}};
    for (int n = 1; n <= 8; ++n)
        for (tgl_dtype dt : kDtypes) {
            const Shape ys = rng_.pick(shapes);
            std::vector<InputArg> ins;
            const int full = int(rng_.integer(0, n - 1));  // one input of y's shape: y is the broadcast
            for (int k = 0; k < n; ++k) ins.push_back(operand(dt, ys, rng_, k != full));
            check_op(TGL_OP_ADD_N, {}, ins, {rand_output(dt, ys, rng_)}, {tolerance(dt)}, what(n, dt, ys));
        }
}

// Contiguous f32 of a multiple of 4 (the binary kernel's vec4 paths) and f16/bf16 through the scratch.
TEST_F(AddNDiff, LongContiguous) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16}) {
        const Shape ys{64, 1024};
        std::vector<InputArg> ins;
        for (int k = 0; k < 5; ++k) {
            InputArg a;
            a.dtype = dt;
            a.view = contiguous(k == 3 ? Shape{1024} : ys);
            a.storage = random_storage(dt, a.view.storage, rng_, values(dt));
            ins.push_back(a);
        }
        check_op(TGL_OP_ADD_N, {}, ins, {output_of(dt, ys)}, {tolerance(dt)}, what(5, dt, ys));
    }
}

// More than 65,535 workgroups of the scalar kernel (the dispatch is split in chunks).
TEST_F(AddNDiff, PastOneGridRow) {
    const Shape ys{70000 * 4 + 3};
    std::vector<InputArg> ins;
    for (int k = 0; k < 3; ++k) ins.push_back(operand(TGL_DTYPE_F16, ys, rng_, k != 1));
    check_op(TGL_OP_ADD_N, {}, ins, {output_of(TGL_DTYPE_F16, ys)}, {0}, what(3, TGL_DTYPE_F16, ys));
}

}  // namespace
}  // namespace diff
