// Differential tests (GLES vs CPU) of the norm ops on seeded random inputs: shapes with primes and
// 1s, every softmax axis, broadcast masks, absent/present gamma, beta and sum, permuted / stepped /
// negative-stride / padded input views, non-contiguous outputs, misaligned f16 views, empty tensors,
// a row of 600,000 elements and 70,000 rows (more than 65,535 workgroups); f32 and f16.
// Tolerance (NMSE): f32 tol::kTranscendental (exp/log on the GPU are not correctly rounded). f16
// outputs: both plugins round nearly the same value to f16 (unit roundoff u = 2^-11), so two
// results differ by at most one f16 ulp = 2u relative where the values straddle a rounding
// boundary; even if every element did, NMSE <= (2u)^2 = 2^-20 (about 9.5e-7).
#include "diff.h"

namespace diff {
namespace {

class NormDiff : public SeededTest {};

const double kTolF16 = 1.0 / (1 << 20);

double tol_of(tgl_dtype dt) { return dt == TGL_DTYPE_F16 ? kTolF16 : tol::of_store(dt, tol::kTranscendental); }

InputArg rand_input(tgl_dtype dt, const Shape& shape, Rng& rng, double lo, double hi, bool input_layouts = true) {
    InputArg a;
    a.dtype = dt;
    a.view = input_layouts ? random_view(shape, dt, rng, true) : contiguous(shape);
    a.storage = random_storage(dt, a.view.storage, rng, float_values(dt, lo, hi));
    return a;
}
void run_case(tgl_op op, const std::vector<uint8_t>& params, std::vector<InputArg> ins, std::vector<OutputArg> outs,
              tgl_dtype dt, const std::string& what) {
    check_op(op, params, std::move(ins), std::move(outs), {tol_of(dt), tol_of(dt) / 8},  // sum: one rounding of x + residual
             what);
}

const std::vector<Shape>& shapes() {
    static const std::vector<Shape> v = {{7}, {3, 5}, {2, 1, 13}, {5, 37, 3}, {1, 1}, {2, 3, 1, 41}, {4, 300}};
    return v;
}

// A shape that broadcasts to `s`: some dims 1, maybe fewer leading dims.
Shape broadcastable(const Shape& s, Rng& rng) {
    Shape m(s.begin() + rng.integer(0, int64_t(s.size()) - 1), s.end());
    for (int64_t& n : m)
        if (rng.chance(0.4)) n = 1;
    return m;
}

TEST_F(NormDiff, Softmax) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (const Shape& s : shapes())
            for (int axis = -1; axis < int(s.size()); ++axis)
                for (tgl_op op : {TGL_OP_SOFTMAX, TGL_OP_LOG_SOFTMAX}) {
                    bool masked = rng_.chance(0.5);
                    tgl_softmax_params p{sizeof(tgl_softmax_params), axis, float(rng_.uniform(-2, 2)), 0};
                    InputArg mask = masked ? rand_input(dt, broadcastable(s, rng_), rng_, -4, 0) : absent_input();
                    if (masked && rng_.chance(0.3))  // some masked-out (-inf) entries
                        for (int64_t i = 0; i < mask.storage.size(); ++i)
                            if (rng_.chance(0.2)) mask.storage.set_value(i, -std::numeric_limits<double>::infinity());
                    run_case(op, param_bytes(p), {rand_input(dt, s, rng_, -5, 5), mask}, {rand_output(dt, s, rng_)}, dt,
                             std::string(op == TGL_OP_SOFTMAX ? "softmax " : "log_softmax ") + dtype_name(dt) + " " +
                                 shape_name(s) + " axis " + std::to_string(axis) + (masked ? " masked" : ""));
                }
}

TEST_F(NormDiff, LayerRmsNorms) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (const Shape& s : shapes())
            for (uint32_t nd = 1; nd <= std::min<size_t>(2, s.size()); ++nd)
                for (tgl_op op : {TGL_OP_LAYER_NORM, TGL_OP_RMS_NORM, TGL_OP_ADD_LAYER_NORM, TGL_OP_ADD_RMS_NORM}) {
                    tgl_layer_norm_params p{sizeof(tgl_layer_norm_params), nd, float(rng_.uniform(1e-6, 1e-2)), 0};
                    Shape ps(s.end() - nd, s.end());
                    bool add = op == TGL_OP_ADD_LAYER_NORM || op == TGL_OP_ADD_RMS_NORM;
                    bool rms = op == TGL_OP_RMS_NORM || op == TGL_OP_ADD_RMS_NORM;
                    double mean = rng_.chance(0.5) ? 0 : 100;  // an offset mean checks the stable variance
                    std::vector<InputArg> ins = {rand_input(dt, s, rng_, mean - 3, mean + 3)};
                    if (add) ins.push_back(rand_input(dt, s, rng_, -1, 1));
                    ins.push_back(rng_.chance(0.7) ? rand_input(dt, ps, rng_, -2, 2) : absent_input());
                    // beta: layer norms; rms_norm since ABI 1.3 (sometimes not passed at all: 2 inputs).
                    if (!rms || (op == TGL_OP_RMS_NORM && rng_.chance(0.7)))
                        ins.push_back(rng_.chance(0.7) ? rand_input(dt, ps, rng_, -1, 1) : absent_input());
                    std::vector<OutputArg> outs = {rand_output(dt, s, rng_)};
                    if (add) outs.push_back(rng_.chance(0.6) ? rand_output(dt, s, rng_) : absent_output());
                    run_case(op, param_bytes(p), ins, outs, dt,
                             std::to_string(op) + " " + dtype_name(dt) + " " + shape_name(s) + " n_norm_dims " + std::to_string(nd));
                }
}

TEST_F(NormDiff, GroupBatchNorm) {
    const std::vector<std::pair<Shape, std::vector<uint32_t>>> cases = {
        {{2, 6, 5}, {1, 2, 3, 6}}, {{3, 4, 3, 3}, {1, 4}}, {{1, 7}, {7, 1}}, {{2, 10, 41}, {5}}, {{1, 3, 1, 2, 3}, {3}}};
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (const auto& c : cases) {
            const Shape& s = c.first;
            Shape ch = {s[1]};
            for (uint32_t g : c.second) {
                tgl_group_norm_params p{sizeof(tgl_group_norm_params), g, 1e-5f, 0};
                run_case(TGL_OP_GROUP_NORM, param_bytes(p),
                         {rand_input(dt, s, rng_, -3, 5), rng_.chance(0.7) ? rand_input(dt, ch, rng_, -2, 2) : absent_input(),
                          rng_.chance(0.7) ? rand_input(dt, ch, rng_, -1, 1) : absent_input()},
                         {rand_output(dt, s, rng_)}, dt, "group_norm " + dtype_name(dt) + " " + shape_name(s) + " groups " + std::to_string(g));
            }
            tgl_batch_norm_params b{sizeof(tgl_batch_norm_params), 1e-3f};
            run_case(TGL_OP_BATCH_NORM, param_bytes(b),
                     {rand_input(dt, s, rng_, -3, 3), rand_input(dt, ch, rng_, -1, 1), rand_input(dt, ch, rng_, 0.1, 4),
                      rng_.chance(0.7) ? rand_input(dt, ch, rng_, -2, 2) : absent_input(),
                      rng_.chance(0.7) ? rand_input(dt, ch, rng_, -1, 1) : absent_input()},
                     {rand_output(dt, s, rng_)}, dt, "batch_norm " + dtype_name(dt) + " " + shape_name(s));
        }
}

// bf16 (a subset: the kernels convert every float dtype alike): the row ops on three shapes with
// gamma, beta, a residual and a mask, and group_norm.
TEST_F(NormDiff, Bf16Subset) {
    const tgl_dtype dt = TGL_DTYPE_BF16;
    for (const Shape& s : {Shape{3, 5}, Shape{2, 1, 13}, Shape{4, 300}}) {
        const Shape ps = {s.back()};
        for (tgl_op op : {TGL_OP_SOFTMAX, TGL_OP_LOG_SOFTMAX}) {
            tgl_softmax_params p{sizeof(tgl_softmax_params), -1, 1.0f, 0};
            run_case(op, param_bytes(p), {rand_input(dt, s, rng_, -5, 5), rand_input(dt, broadcastable(s, rng_), rng_, -4, 0)},
                     {rand_output(dt, s, rng_)}, dt, std::to_string(op) + " bf16 " + shape_name(s) + " masked");
        }
        tgl_layer_norm_params p{sizeof(tgl_layer_norm_params), 1, 1e-5f, 0};
        run_case(TGL_OP_LAYER_NORM, param_bytes(p), {rand_input(dt, s, rng_, 97, 103), rand_input(dt, ps, rng_, -2, 2), rand_input(dt, ps, rng_, -1, 1)},
                 {rand_output(dt, s, rng_)}, dt, "layer_norm bf16 " + shape_name(s));
        run_case(TGL_OP_RMS_NORM, param_bytes(p), {rand_input(dt, s, rng_, -3, 3), rand_input(dt, ps, rng_, -2, 2)}, {rand_output(dt, s, rng_)}, dt,
                 "rms_norm bf16 " + shape_name(s));
        run_case(TGL_OP_ADD_RMS_NORM, param_bytes(p), {rand_input(dt, s, rng_, -3, 3), rand_input(dt, s, rng_, -1, 1), rand_input(dt, ps, rng_, -2, 2)},
                 {rand_output(dt, s, rng_), rand_output(dt, s, rng_)}, dt, "add_rms_norm bf16 " + shape_name(s));
    }
    tgl_group_norm_params gp{sizeof(tgl_group_norm_params), 2, 1e-5f, 0};
    run_case(TGL_OP_GROUP_NORM, param_bytes(gp), {rand_input(dt, {2, 6, 5}, rng_, -3, 5), rand_input(dt, {6}, rng_, -2, 2), absent_input()},
             {rand_output(dt, {2, 6, 5}, rng_)}, dt, "group_norm bf16 (2, 6, 5) groups 2");
}

TEST_F(NormDiff, Empty) {
    tgl_softmax_params sp{sizeof(tgl_softmax_params), 0, 1.0f, 0};
    run_case(TGL_OP_SOFTMAX, param_bytes(sp), {rand_input(TGL_DTYPE_F32, {0, 5}, rng_, -1, 1), absent_input()},
             {rand_output(TGL_DTYPE_F32, {0, 5}, rng_)}, TGL_DTYPE_F32, "softmax (0, 5)");
    run_case(TGL_OP_LAYER_NORM, {}, {rand_input(TGL_DTYPE_F16, {3, 0}, rng_, -1, 1), absent_input(), absent_input()},
             {rand_output(TGL_DTYPE_F16, {3, 0}, rng_)}, TGL_DTYPE_F16, "layer_norm (3, 0)");
    tgl_group_norm_params gp{sizeof(tgl_group_norm_params), 2, 1e-5f, 0};
    run_case(TGL_OP_GROUP_NORM, param_bytes(gp), {rand_input(TGL_DTYPE_F32, {0, 4, 3}, rng_, -1, 1), absent_input(), absent_input()},
             {rand_output(TGL_DTYPE_F32, {0, 4, 3}, rng_)}, TGL_DTYPE_F32, "group_norm (0, 4, 3)");
}

// The f32 register-row path (ROW_VEC4: rows contiguous and 16-byte aligned in x, y, mask/residual
// and sum; 256 invocations x up to 8 quads per row by default): row lengths around the quad and
// register boundaries (1024 per quad per invocation, 8192 per row at 256 x 8, 1024 x 8 past 16384),
// tails of 1..3 in single rows, masks, gamma/beta, the sum output; misaligned views and f16 that
// must take the general path; 66,000 rows (a grid past 65,535 workgroups).
TEST_F(NormDiff, RowVec4) {
    const std::vector<Shape> shapes = {{3, 36}, {5, 1020}, {2, 1028}, {1, 1023}, {2, 8192}, {1, 8196}, {1, 16387}, {2, 3, 44}};
    const tgl_op ops[] = {TGL_OP_SOFTMAX, TGL_OP_LOG_SOFTMAX, TGL_OP_LAYER_NORM, TGL_OP_RMS_NORM, TGL_OP_ADD_LAYER_NORM,
                          TGL_OP_ADD_RMS_NORM};
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (const Shape& s : shapes)
            for (tgl_op op : ops) {
                if (dt == TGL_DTYPE_F16 && s.back() > 1100) continue;
                const bool misaligned = rng_.chance(0.2);
                InputArg x = rand_input(dt, s, rng_, -5, 5, false);
                if (misaligned) x.view = make_view(s, misaligned_layout(rng_));
                x.storage = random_storage(dt, x.view.storage, rng_, float_values(dt, -5, 5));
                const std::string what = std::to_string(op) + " " + dtype_name(dt) + " " + shape_name(s) +
                                         (misaligned ? " misaligned x" : "");
                if (op == TGL_OP_SOFTMAX || op == TGL_OP_LOG_SOFTMAX) {
                    tgl_softmax_params p{sizeof(tgl_softmax_params), -1, float(rng_.uniform(0.5, 2)), 0};
                    InputArg mask = rng_.chance(0.5) ? rand_input(dt, s, rng_, -4, 0, false) : absent_input();
                    run_case(op, param_bytes(p), {x, mask}, {output_of(dt, s)}, dt, what);
                    continue;
                }
                const bool add = op == TGL_OP_ADD_LAYER_NORM || op == TGL_OP_ADD_RMS_NORM;
                const bool rms = op == TGL_OP_RMS_NORM || op == TGL_OP_ADD_RMS_NORM;
                tgl_layer_norm_params p{sizeof(tgl_layer_norm_params), 1, 1e-5f, 0};
                const Shape ps = {s.back()};
                std::vector<InputArg> ins = {x};
                if (add) ins.push_back(rand_input(dt, s, rng_, -1, 1, false));
                ins.push_back(rng_.chance(0.7) ? rand_input(dt, ps, rng_, -2, 2, false) : absent_input());
                if (!rms || op == TGL_OP_RMS_NORM) ins.push_back(rng_.chance(0.7) ? rand_input(dt, ps, rng_, -1, 1) : absent_input());
                std::vector<OutputArg> outs = {output_of(dt, s)};
                if (add) outs.push_back(rng_.chance(0.7) ? output_of(dt, s) : absent_output());
                run_case(op, param_bytes(p), ins, outs, dt, what);
            }
    run_case(TGL_OP_SOFTMAX, {}, {rand_input(TGL_DTYPE_F32, {66000, 36}, rng_, -5, 5, false), absent_input()},
             {output_of(TGL_DTYPE_F32, {66000, 36})}, TGL_DTYPE_F32, "softmax of 66,000 rows of 36");
}

// One row of 600,000 (one workgroup strides over it); 70,000 rows of 33 (a workgroup each: more
// than 65,535 workgroups, split over several dispatches); 70,000 short rows (one invocation each).
TEST_F(NormDiff, Big) {
    run_case(TGL_OP_SOFTMAX, {}, {rand_input(TGL_DTYPE_F32, {600000}, rng_, -20, 20, false), absent_input()},
             {output_of(TGL_DTYPE_F32, {600000})}, TGL_DTYPE_F32, "softmax of 600,000");
    run_case(TGL_OP_LAYER_NORM, {}, {rand_input(TGL_DTYPE_F32, {600000}, rng_, 1e4 - 1, 1e4 + 1, false), absent_input(), absent_input()},
             {output_of(TGL_DTYPE_F32, {600000})}, TGL_DTYPE_F32, "layer_norm of 600,000 around 1e4");
    run_case(TGL_OP_LOG_SOFTMAX, {}, {rand_input(TGL_DTYPE_F32, {70000, 33}, rng_, -5, 5, false), absent_input()},
             {output_of(TGL_DTYPE_F32, {70000, 33})}, TGL_DTYPE_F32, "log_softmax of 70,000 rows of 33");
    run_case(TGL_OP_RMS_NORM, {}, {rand_input(TGL_DTYPE_F16, {70000, 3}, rng_, -5, 5, false), absent_input()},
             {output_of(TGL_DTYPE_F16, {70000, 3})}, TGL_DTYPE_F16, "rms_norm of 70,000 rows of 3");
}

// Rows longer than one invocation's loop budget (llvmpipe cuts an invocation's loops short after
// 65,535 passes; a2b0225 left most of these outputs unwritten with TGL_OK): one row of 2^23
// (32,768 elements per invocation of a 256-wide workgroup; three walks for softmax and the
// variance, two for rms) in softmax, layer_norm (mean 1e4: the chunks' variances merged stably)
// and rms_norm; rows of 3 * 2^20 + 5 (cut into chunks that end inside the row) in log_softmax
// with a mask over two rows, add_layer_norm with its sum, and group_norm (5 x 629,146, gamma, beta);
// no rows of 2^23.
TEST_F(NormDiff, LoopBudgetLongRow) {
    const int64_t n = int64_t(1) << 23, m = 3 * (int64_t(1) << 20) + 5;
    const tgl_dtype f32 = TGL_DTYPE_F32;
    run_case(TGL_OP_SOFTMAX, {}, {rand_input(f32, {n}, rng_, -20, 20, false), absent_input()}, {output_of(f32, {n})}, f32,
             "softmax of 2^23");
    // Values around 1e4 with a spread of 2 (sigma 0.58): a mean held in f32 is up to half an ulp of
    // 1e4 (0.00049) off even when rounded once, which moves every output by 0.00049 / sigma * |gamma|
    // (NMSE up to ~6e-7 for that mean alone); the tolerance allows the mean 1.5 ulps (NMSE 5e-6).
    // At 1e-6 the GLES chunked statistics failed by their 0.66 ulp under the minimum limits with
    // TGL_TEST_SEED=8842038070936286560 (NMSE 1.009e-6).
    check_op(TGL_OP_LAYER_NORM, {},
             {rand_input(f32, {n}, rng_, 1e4 - 1, 1e4 + 1, false), rand_input(f32, {n}, rng_, -2, 2, false),
              rand_input(f32, {n}, rng_, -1, 1, false)},
             {output_of(f32, {n})}, {5e-6}, "layer_norm of 2^23 around 1e4");
    run_case(TGL_OP_RMS_NORM, {}, {rand_input(f32, {n}, rng_, -3, 3, false), absent_input()}, {output_of(f32, {n})}, f32,
             "rms_norm of 2^23");
    tgl_softmax_params sp{sizeof(tgl_softmax_params), -1, 0.5f, 0};
    run_case(TGL_OP_LOG_SOFTMAX, param_bytes(sp), {rand_input(f32, {2, m}, rng_, -20, 20, false), rand_input(f32, {1, m}, rng_, -4, 0, false)},
             {output_of(f32, {2, m})}, f32, "masked log_softmax of 2 rows of 3 * 2^20 + 5");
    run_case(TGL_OP_ADD_LAYER_NORM, {},
             {rand_input(f32, {m}, rng_, -3, 3, false), rand_input(f32, {m}, rng_, -1, 1, false), absent_input(), absent_input()},
             {output_of(f32, {m}), output_of(f32, {m})}, f32, "add_layer_norm of 3 * 2^20 + 5 with its sum");
    tgl_group_norm_params gp{sizeof(tgl_group_norm_params), 1, 1e-5f, 0};
    run_case(TGL_OP_GROUP_NORM, param_bytes(gp),
             {rand_input(f32, {1, 5, m / 5}, rng_, -3, 5, false), rand_input(f32, {5}, rng_, -2, 2, false),
              rand_input(f32, {5}, rng_, -1, 1, false)},
             {output_of(f32, {1, 5, m / 5})}, f32, "group_norm of one group of 5 x 629,146");
    run_case(TGL_OP_LAYER_NORM, {}, {rand_input(f32, {0, n}, rng_, -1, 1, false), absent_input(), absent_input()},
             {output_of(f32, {0, n})}, f32, "layer_norm of no rows of 2^23");
}

}  // namespace
}  // namespace diff
