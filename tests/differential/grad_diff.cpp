// Differential tests (GLES vs CPU) of the Grad family on seeded random inputs: prime and 1 sizes,
// every axis, absent/present gamma and dgamma/dbeta, permuted / stepped / negative-stride / padded
// views, non-contiguous outputs, misaligned f16 views, empty tensors, and lean cases past 65,535
// workgroups; f32 and f16.
// Tolerances (NMSE): f32 tol::kTranscendental for the row ops (exp/log not correctly rounded),
// tol::kReduction for dgamma/dbeta, losses and embedding sums (f32 sums against double); f16
// outputs 2^-20 (at most one f16 ulp apart, as norm_diff.cpp argues).
#include "diff.h"

namespace diff {
namespace {

class GradDiff : public SeededTest {};

const double kTolF16 = 1.0 / (1 << 20);
double tol_row(tgl_dtype dt) { return dt == TGL_DTYPE_F16 ? kTolF16 : tol::of_store(dt, tol::kTranscendental); }
double tol_red(tgl_dtype dt) { return dt == TGL_DTYPE_F16 ? kTolF16 : tol::of_store(dt, tol::kReduction); }

View random_view(const Shape& shape, tgl_dtype dt, Rng& rng, bool input) {
    static const std::vector<Kind> kinds = {Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Padded, Kind::Mixed};
    if (dt == F16 && rng.chance(0.3)) return make_view(shape, misaligned_layout(rng));
    return view_of(shape, rng.pick(kinds), rng, input);
}
InputArg rand_input(tgl_dtype dt, const Shape& shape, Rng& rng, double lo, double hi, bool layouts = true) {
    InputArg a;
    a.dtype = dt;
    a.view = layouts ? random_view(shape, dt, rng, true) : contiguous(shape);
    a.storage = random_storage(dt, a.view.storage, rng, float_values(dt, lo, hi));
    return a;
}
// Index values (i32 or i64) in [lo, hi], sometimes `special` instead, in a random view.
InputArg rand_index(const Shape& shape, Rng& rng, int64_t lo, int64_t hi, int64_t special = 0, double p_special = 0.0,
                    bool layouts = true) {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = double(rng.chance(p_special) ? special : rng.integer(lo, hi));
    InputArg a;
    a.dtype = rng.chance(0.5) ? tgl_dtype(TGL_DTYPE_I64) : I32;  // either index dtype
    a.view = layouts ? view_of(shape, rng.chance(0.5) ? Kind::Contiguous : Kind::Permuted, rng, true) : contiguous(shape);
    a.storage = scatter(a.dtype, a.view, v, 0);
    return a;
}


const std::vector<Shape>& shapes() {
    static const std::vector<Shape> v = {{7}, {3, 5}, {2, 1, 13}, {5, 37, 3}, {1, 1}, {4, 300}};
    return v;
}

TEST_F(GradDiff, SoftmaxBackward) {
    for (tgl_dtype dt : {F32, F16})
        for (const Shape& s : shapes())
            for (int axis = -1; axis < int(s.size()); ++axis)
                for (tgl_op op : {TGL_OP_SOFTMAX_BACKWARD, TGL_OP_LOG_SOFTMAX_BACKWARD}) {
                    const bool log = op == TGL_OP_LOG_SOFTMAX_BACKWARD;
                    tgl_softmax_params p{sizeof(tgl_softmax_params), axis, float(rng_.uniform(-2, 2)), 0};
                    check_op(op, param_bytes(p), {rand_input(dt, s, rng_, log ? -6 : 0, log ? 0 : 1), rand_input(dt, s, rng_, -2, 2)},
                             {rand_output(dt, s, rng_)}, {tol_row(dt)},
                             std::string(log ? "log_softmax_backward " : "softmax_backward ") + dtype_name(dt) + " " + shape_name(s) +
                                 " axis " + std::to_string(axis));
                }
}

// bf16 (a subset: the kernels convert every float dtype alike): softmax and log_softmax backward.
TEST_F(GradDiff, Bf16Subset) {
    const tgl_dtype dt = TGL_DTYPE_BF16;
    for (const Shape& s : {Shape{3, 5}, Shape{4, 300}})
        for (tgl_op op : {TGL_OP_SOFTMAX_BACKWARD, TGL_OP_LOG_SOFTMAX_BACKWARD}) {
            const bool log = op == TGL_OP_LOG_SOFTMAX_BACKWARD;
            tgl_softmax_params p{sizeof(tgl_softmax_params), -1, 1.0f, 0};
            check_op(op, param_bytes(p), {rand_input(dt, s, rng_, log ? -6 : 0, log ? 0 : 1), rand_input(dt, s, rng_, -2, 2)},
                     {rand_output(dt, s, rng_)}, {tol_row(dt)}, std::to_string(op) + " bf16 " + shape_name(s));
        }
}

TEST_F(GradDiff, NormBackward) {
    for (tgl_dtype dt : {F32, F16})
        for (const Shape& s : shapes())
            for (uint32_t nd = 1; nd <= std::min<size_t>(2, s.size()); ++nd)
                for (tgl_op op : {TGL_OP_LAYER_NORM_BACKWARD, TGL_OP_RMS_NORM_BACKWARD}) {
                    const bool rms = op == TGL_OP_RMS_NORM_BACKWARD;
                    tgl_layer_norm_params p{sizeof(tgl_layer_norm_params), nd, float(rng_.uniform(1e-6, 1e-2)), 0};
                    Shape ps(s.end() - nd, s.end());
                    // A row of one element around 50: dx = rstd * g * (1 - xhat^2) cancels to ~eps / x^2,
                    // below f32 resolution; offset means only on longer rows.
                    const double mean = rng_.chance(0.5) || s.back() == 1 ? 0 : 50;
                    if (s.back() == 1) p.eps = 0.5f;  // rms of one element: 1 - xhat^2 well above f32 resolution
                    // dy without broadcast (stride-0) views: a constant dy row has dx = 0 exactly
                    // (layer_norm), and the f32 rounding left there has no reference scale to compare to.
                    InputArg dy = rand_input(dt, s, rng_, -1, 1);
                    dy.view = random_view(s, dt, rng_, false);
                    dy.storage = random_storage(dt, dy.view.storage, rng_, float_values(dt, -1, 1));
                    std::vector<InputArg> ins = {rand_input(dt, s, rng_, mean - 3, mean + 3), dy,
                                                 rng_.chance(0.7) ? rand_input(dt, ps, rng_, -2, 2) : absent_input()};
                    std::vector<OutputArg> outs = {rand_output(dt, s, rng_), rng_.chance(0.7) ? rand_output(dt, ps, rng_) : absent_output()};
                    if (!rms) outs.push_back(rng_.chance(0.7) ? rand_output(dt, ps, rng_) : absent_output());
                    // dx: cancellation of O(1) terms; the f32 statistics of a mean-50 row lose ~1e-6 relative.
                    check_op(op, param_bytes(p), ins, outs, {tol_row(dt), tol_red(dt), tol_red(dt)},
                             std::string(rms ? "rms" : "layer") + "_norm_backward " + dtype_name(dt) + " " + shape_name(s) +
                                 " n_norm_dims " + std::to_string(nd) + " mean " + std::to_string(int(mean)));
                }
}

TEST_F(GradDiff, CumsumBackward) {
    for (tgl_dtype dt : {F32, F16})
        for (const Shape& s : {Shape{7}, Shape{3, 70}, Shape{2, 1, 300}})
            for (int axis = 0; axis < int(s.size()); ++axis)
                for (int mode = 0; mode < 4; ++mode) {
                    tgl_scan_params p{sizeof(tgl_scan_params), axis, uint32_t(mode & 1), uint32_t(mode >> 1)};
                    check_op(TGL_OP_CUMSUM_BACKWARD, param_bytes(p), {rand_input(dt, s, rng_, -1, 1)}, {rand_output(dt, s, rng_)},
                             {tol_red(dt)}, "cumsum_backward " + dtype_name(dt) + " " + shape_name(s) + " axis " + std::to_string(axis) +
                                                " mode " + std::to_string(mode));
                }
}

TEST_F(GradDiff, EmbeddingBackward) {
    struct C {
        Shape index;
        int64_t V, D;
    };
    const std::vector<C> cases = {{{5}, 3, 1}, {{3, 7}, 17, 13}, {{1}, 1, 64}, {{2, 3, 5}, 4, 3}, {{0}, 5, 2}, {{211}, 7, 33}};
    for (tgl_dtype dt : {F32, F16})
        for (const C& c : cases) {
            Shape ds = c.index;
            ds.push_back(c.D);
            const bool pad = rng_.chance(0.4);
            tgl_embedding_backward_params p{sizeof(tgl_embedding_backward_params), pad ? 1u : 0u, int32_t(rng_.integer(0, c.V - 1)), 0};
            check_op(TGL_OP_EMBEDDING_BACKWARD, param_bytes(p), {rand_input(dt, ds, rng_, -1, 1), rand_index(c.index, rng_, 0, c.V - 1)},
                     {rand_output(dt, {c.V, c.D}, rng_)}, {tol_red(dt)},
                     "embedding_backward " + dtype_name(dt) + " index " + shape_name(c.index) + " V " + std::to_string(c.V) + " D " +
                         std::to_string(c.D) + (pad ? " padding " + std::to_string(p.padding_idx) : ""));
        }
}

TEST_F(GradDiff, CrossEntropy) {
    const std::vector<Shape> cases = {{1, 1}, {7, 5}, {13, 100}, {3, 4, 5}, {2, 3, 1, 7}, {5}};
    for (tgl_dtype dt : {F32, F16})
        for (const Shape& s : cases)
            for (uint32_t red : {TGL_REDUCTION_NONE, TGL_REDUCTION_MEAN, TGL_REDUCTION_SUM}) {
                const int cdim = s.size() == 1 ? 0 : 1;
                Shape ts;
                for (size_t d = 0; d < s.size(); ++d)
                    if (int(d) != cdim) ts.push_back(s[d]);
                const int32_t ignore = rng_.chance(0.5) ? -100 : int32_t(rng_.integer(0, s[size_t(cdim)] - 1));
                tgl_cross_entropy_params p{sizeof(tgl_cross_entropy_params), red, ignore, rng_.chance(0.5) ? 0.0f : 0.1f};
                InputArg z = rand_input(dt, s, rng_, -4, 4), t = rand_index(ts, rng_, 0, s[size_t(cdim)] - 1, ignore, 0.2);
                const Shape lshape = red == TGL_REDUCTION_NONE ? ts : Shape{};
                const std::string what = dtype_name(dt) + " " + shape_name(s) + " reduction " + std::to_string(red) + " ignore " +
                                         std::to_string(ignore) + " smoothing " + std::to_string(p.label_smoothing);
                check_op(TGL_OP_CROSS_ENTROPY, param_bytes(p), {z, t}, {rand_output(dt, lshape, rng_)}, {tol_red(dt)}, "cross_entropy " + what);
                check_op(TGL_OP_CROSS_ENTROPY_BACKWARD, param_bytes(p), {z, t, rand_input(dt, lshape, rng_, -2, 2)},
                         {rand_output(dt, s, rng_)}, {tol_row(dt)}, "cross_entropy_backward " + what);
            }
}

// Rows past one invocation's loop budget (llvmpipe cuts an invocation's loops short after 65,535
// passes: TGL_OK over a wrong result before, then a refusal): where loops are limited the GLES row
// pass cuts them into chunks, a workgroup each, in a stage per reduction. softmax_backward of one
// row of 2^22 + 1029 (two walks of 16,389 per invocation of a 256-wide workgroup and a tree: past
// the 32,768 a plan keeps), log_softmax_backward of a row of 2^22 + 5 with a scale, layer_norm_backward (4 walks; mean 50, gamma, dgamma, dbeta)
// of 2 rows and rms_norm_backward (3 walks; gamma, dgamma) of one row of 3 * 2^20 + 5.
TEST_F(GradDiff, RowsPastTheLoopBudget) {
    const int64_t big = (int64_t(1) << 22) + 1029, mid = (int64_t(1) << 22) + 5, m = 3 * (int64_t(1) << 20) + 5;
    check_op(TGL_OP_SOFTMAX_BACKWARD, {}, {rand_input(F32, {big}, rng_, 0, 1e-6, false), rand_input(F32, {big}, rng_, -1, 1, false)},
             {output_of(F32, {big})}, {tol_row(F32)}, "softmax_backward of one row of 2^22 + 1029");
    tgl_softmax_params sp{sizeof(tgl_softmax_params), -1, 0.5f, 0};
    check_op(TGL_OP_LOG_SOFTMAX_BACKWARD, param_bytes(sp),
             {rand_input(F32, {mid}, rng_, -30, -10, false), rand_input(F32, {mid}, rng_, -1, 1, false)}, {output_of(F32, {mid})},
             {tol_row(F32)}, "log_softmax_backward of a row of 2^22 + 5");
    tgl_layer_norm_params lp{sizeof(tgl_layer_norm_params), 1, 1e-5f, 0};
    check_op(TGL_OP_LAYER_NORM_BACKWARD, param_bytes(lp),
             {rand_input(F32, {2, m}, rng_, 47, 53, false), rand_input(F32, {2, m}, rng_, -1, 1, false), rand_input(F32, {m}, rng_, -2, 2, false)},
             {output_of(F32, {2, m}), output_of(F32, {m}), output_of(F32, {m})}, {tol_row(F32), tol_red(F32), tol_red(F32)},
             "layer_norm_backward of 2 rows of 3 * 2^20 + 5 around 50");
    check_op(TGL_OP_RMS_NORM_BACKWARD, param_bytes(lp),
             {rand_input(F32, {1, m}, rng_, -3, 3, false), rand_input(F32, {1, m}, rng_, -1, 1, false), rand_input(F32, {m}, rng_, -2, 2, false)},
             {output_of(F32, {1, m}), output_of(F32, {m})}, {tol_row(F32), tol_red(F32)}, "rms_norm_backward of one row of 3 * 2^20 + 5");
}

// cross_entropy's row pass has no split of a row: one row of 2^23 + 1024 classes (4 walks of 32,772
// passes per invocation) is refused (RESOURCE_EXHAUSTED naming the loop) where loops are limited,
// never TGL_OK over a loop cut short; elsewhere it matches.
TEST_F(GradDiff, CrossEntropyRowPastTheLoopBudget) {
    const int64_t C = (int64_t(1) << 23) + 1024;
    MultiSpec s;
    s.op = TGL_OP_CROSS_ENTROPY;
    s.inputs = {rand_input(F32, {1, C}, rng_, -5, 5, false), input_values(I32, {1}, {double(C - 7)})};
    s.outputs = {output_of(F32, {})};
    s.tolerance = {tol_red(F32)};
    s.what = "cross_entropy of one row of 2^23 + 1024 classes";
    check_or_loop_refusal(s);
}

TEST_F(GradDiff, Empty) {
    check_op(TGL_OP_SOFTMAX_BACKWARD, {}, {rand_input(F32, {0, 5}, rng_, 0, 1), rand_input(F32, {0, 5}, rng_, 0, 1)},
             {rand_output(F32, {0, 5}, rng_)}, {0}, "softmax_backward (0, 5)");
    // No rows: dgamma and dbeta are sums of nothing (zeros).
    check_op(TGL_OP_LAYER_NORM_BACKWARD, {}, {rand_input(F16, {0, 4}, rng_, -1, 1), rand_input(F16, {0, 4}, rng_, -1, 1), absent_input()},
             {rand_output(F16, {0, 4}, rng_), rand_output(F16, {4}, rng_), rand_output(F16, {4}, rng_)}, {0, 0, 0},
             "layer_norm_backward (0, 4)");
    tgl_cross_entropy_params sum{sizeof(tgl_cross_entropy_params), TGL_REDUCTION_SUM, -100, 0.0f};
    check_op(TGL_OP_CROSS_ENTROPY, param_bytes(sum), {rand_input(F32, {0, 3}, rng_, -1, 1), rand_index({0}, rng_, 0, 2)},
             {rand_output(F32, {}, rng_)}, {0}, "cross_entropy sum of (0, 3)");
    check_op(TGL_OP_CROSS_ENTROPY, {}, {rand_input(F32, {0, 3}, rng_, -1, 1), rand_index({0}, rng_, 0, 2)}, {rand_output(F32, {}, rng_)},
             {0}, "cross_entropy mean of (0, 3): NaN");
    check_op(TGL_OP_CUMSUM_BACKWARD, {}, {rand_input(F32, {3, 0}, rng_, -1, 1)}, {rand_output(F32, {3, 0}, rng_)}, {0}, "cumsum_backward (3, 0)");
}

// More than 65,535 workgroups: 70,000 rows of 40 (a workgroup each); 70,000 short rows with
// dgamma/dbeta; 70,000 targets; an embedding_backward of 70,000 tokens (argsort past one block).
TEST_F(GradDiff, Big) {
    check_op(TGL_OP_SOFTMAX_BACKWARD, {}, {rand_input(F32, {70000, 40}, rng_, 0, 1, false), rand_input(F32, {70000, 40}, rng_, -1, 1, false)},
             {output_of(F32, {70000, 40})}, {tol_row(F32)}, "softmax_backward of 70,000 rows of 40");
    check_op(TGL_OP_LAYER_NORM_BACKWARD, {},
             {rand_input(F32, {70000, 3}, rng_, -2, 2, false), rand_input(F32, {70000, 3}, rng_, -1, 1, false),
              rand_input(F32, {3}, rng_, -1, 1, false)},
             {output_of(F32, {70000, 3}), output_of(F32, {3}), output_of(F32, {3})}, {tol_row(F32), tol_red(F32), tol_red(F32)},
             "layer_norm_backward of 70,000 rows of 3");
    tgl_cross_entropy_params mean{sizeof(tgl_cross_entropy_params), TGL_REDUCTION_MEAN, -100, 0.1f};
    check_op(TGL_OP_CROSS_ENTROPY, param_bytes(mean), {rand_input(F32, {70000, 33}, rng_, -3, 3, false), rand_index({70000}, rng_, 0, 32, -100, 0.1, false)},
             {output_of(F32, {})}, {tol_red(F32)}, "cross_entropy of 70,000 rows of 33");
    check_op(TGL_OP_EMBEDDING_BACKWARD, {}, {rand_input(F32, {70000, 2}, rng_, -1, 1, false), rand_index({70000}, rng_, 0, 999, 0, 0, false)},
             {output_of(F32, {1000, 2})}, {tol_red(F32)}, "embedding_backward of 70,000 tokens");
    // 70,000 tokens of indices 0..2 (nearly all 1): dW[1] sums a run longer than llvmpipe's 65,535
    // loop passes per invocation (cut short with TGL_OK before).
    check_op(TGL_OP_EMBEDDING_BACKWARD, {}, {rand_input(F32, {70000, 2}, rng_, -1, 1, false), rand_index({70000}, rng_, 1, 1, 0, 0.001, false)},
             {output_of(F32, {3, 2})}, {tol_red(F32)}, "embedding_backward of 70,000 tokens, one run of about 69,930");
}

}  // namespace
}  // namespace diff
