// Differential tests (GLES vs CPU) of the Pool family on seeded random inputs: 1d/2d/3d, odd and
// prime sizes, random kernels/strides/paddings/dilations, ceil_mode and count_include_pad both
// ways, permuted / stepped / negative-stride / padded input views, non-contiguous outputs,
// misaligned f16 views, NaN/inf in windows, empty batches, global pooling of few large planes (two
// passes on the GPU) and over 70,000 planes (70,000 workgroups, past the 65,535 per-axis limit),
// windows of more than 65,535 positions (llvmpipe's loop limit per invocation); f32 and f16.
// Comparison: max pooling values and indices, global max and nearest upsampling are exact (the
// same element is selected, its bits copied). Averages, bilinear and the backward ops are f32
// sums on the GPU against double sums on the CPU: NMSE tol::kReduction (f32), and for f16 two
// nearly equal values rounded to f16 differ by at most one f16 ulp: NMSE <= (2^-10)^2 = 2^-20.
#include "diff.h"

#include <algorithm>

namespace diff {
namespace {

class PoolDiff : public SeededTest {};

const double kTolF16 = 1.0 / (1 << 20);
double tol_of(tgl_dtype dt) { return dt == TGL_DTYPE_F16 ? kTolF16 : tol::of_store(dt, tol::kReduction); }

View random_view(const Shape& shape, tgl_dtype dt, Rng& rng, bool input) {
    static const std::vector<Kind> kinds = {Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Padded, Kind::Mixed};
    if (dt == TGL_DTYPE_F16 && rng.chance(0.3)) return make_view(shape, misaligned_layout(rng));
    return view_of(shape, rng.pick(kinds), rng, input);
}
InputArg rand_input(tgl_dtype dt, const Shape& shape, Rng& rng, bool specials = false) {
    InputArg a;
    a.dtype = dt;
    a.view = random_view(shape, dt, rng, true);
    // Small integers make ties (first-max rule) frequent; specials put NaN/inf into windows.
    ValueGen base = rng.chance(0.3) ? ValueGen([](Rng& r) { return double(r.integer(-4, 4)); }) : float_values(dt, -3, 3);
    a.storage = random_storage(dt, a.view.storage, rng, specials ? with_special_values(dt, base, 0.05) : base);
    return a;
}
void run_case(tgl_op op, const void* params, size_t params_size, std::vector<InputArg> ins, std::vector<OutputArg> outs,
              double tol, CompareMode mode, const std::string& what) {
    MultiSpec s;
    s.op = op;
    if (params) s.params.assign(static_cast<const uint8_t*>(params), static_cast<const uint8_t*>(params) + params_size);
    s.inputs = std::move(ins);
    s.outputs = std::move(outs);
    s.tolerance = {tol, 0};
    s.mode = {mode, CompareMode::Exact};
    s.what = what;
    check(s);
}

// A random windowed pooling setup over `k` spatial dims; returns the output shape for x's shape.
struct Window {
    tgl_pool_params p{};
    Shape x, y;
};
Window random_window(int k, bool max, Rng& rng, int64_t n, int64_t c) {
    Window w;
    w.p.struct_size = sizeof w.p;
    w.p.ceil_mode = rng.chance(0.4);
    w.p.count_include_pad = !max && rng.chance(0.5);
    w.x = {n, c};
    w.y = {n, c};
    for (int d = 0; d < k; ++d) {
        const int kernel = int(rng.integer(1, 4));
        const int dil = max && rng.chance(0.3) ? int(rng.integer(2, 3)) : 1;
        const int eff = dil * (kernel - 1) + 1;
        // PyTorch's limit (half the kernel) mostly; sometimes wider, as ONNX allows (ABI 1.3),
        // where windows with no input element appear.
        const int limit = rng.chance(0.25) ? eff + 2 : max ? eff / 2 : kernel / 2;
        w.p.kernel[d] = kernel;
        w.p.stride[d] = rng.chance(0.3) ? 0 : int(rng.integer(1, 3));
        w.p.dilation[d] = dil == 1 && rng.chance(0.5) ? 0 : dil;
        w.p.pad_begin[d] = int(rng.integer(0, limit));
        w.p.pad_end[d] = rng.chance(0.5) ? w.p.pad_begin[d] : int(rng.integer(0, limit));
        const int s = w.p.stride[d] ? w.p.stride[d] : kernel;
        const int64_t lo = std::max(1, eff - w.p.pad_begin[d] - w.p.pad_end[d]);
        int64_t in = rng.integer(lo, std::max<int64_t>(lo, k == 3 ? 7 : 13));
        const int64_t num = in + w.p.pad_begin[d] + w.p.pad_end[d] - eff;
        int64_t o = (w.p.ceil_mode ? (num + s - 1) / s : num / s) + 1;
        if (w.p.ceil_mode && (o - 1) * s >= in + w.p.pad_begin[d]) --o;
        w.x.push_back(in);
        w.y.push_back(o);
    }
    return w;
}

std::string window_name(const Window& w, int k) {
    std::string s = shape_name(w.x) + " k";
    for (int d = 0; d < k; ++d)
        s += std::to_string(w.p.kernel[d]) + "s" + std::to_string(w.p.stride[d]) + "p" + std::to_string(w.p.pad_begin[d]) + "/" +
             std::to_string(w.p.pad_end[d]) + "d" + std::to_string(w.p.dilation[d]) + " ";
    return s + (w.p.ceil_mode ? "ceil " : "") + (w.p.count_include_pad ? "cip" : "");
}

TEST_F(PoolDiff, MaxAvgPooling) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16})
        for (int k = 1; k <= 3; ++k)
            for (int rep = 0; rep < (dt == TGL_DTYPE_BF16 ? 2 : 6); ++rep) {  // bf16: a subset
                const int64_t n = rng_.integer(1, 2), c = rng_.integer(1, 3);
                for (bool max : {true, false}) {
                    Window w = random_window(k, max, rng_, n, c);
                    const std::string what = std::string(max ? "max_pool " : "avg_pool ") + dtype_name(dt) + " " + window_name(w, k);
                    if (max) {
                        std::vector<OutputArg> outs = {rand_output(dt, w.y, rng_),
                                                       rng_.chance(0.8) ? rand_output(TGL_DTYPE_I32, w.y, rng_) : absent_output()};
                        run_case(TGL_OP_MAX_POOL, &w.p, sizeof w.p, {rand_input(dt, w.x, rng_, true)}, outs, 0, CompareMode::ExactBits, what);
                    } else {
                        run_case(TGL_OP_AVG_POOL, &w.p, sizeof w.p, {rand_input(dt, w.x, rng_)}, {rand_output(dt, w.y, rng_)},
                                 tol_of(dt), CompareMode::Nmse, what);
                    }
                }
            }
}

TEST_F(PoolDiff, PoolingBackward) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (int k = 1; k <= 3; ++k)
            for (int rep = 0; rep < 4; ++rep)
                for (bool max : {true, false}) {
                    Window w = random_window(k, max, rng_, rng_.integer(1, 2), rng_.integer(1, 3));
                    const std::string what = std::string(max ? "max_pool_backward " : "avg_pool_backward ") + dtype_name(dt) + " " +
                                             window_name(w, k);
                    std::vector<InputArg> ins = {rand_input(dt, w.y, rng_)};
                    if (max) {  // the indices of a forward pass (on the reference plugin)
                        std::vector<double> idx = run_op_values(shared_device(Role::Reference), TGL_OP_MAX_POOL, &w.p,
                                                                {rand_input(dt, w.x, rng_)}, {output_of(dt, w.y), output_of(TGL_DTYPE_I32, w.y)})[1];
                        ins.push_back(input_values(TGL_DTYPE_I32, w.y, idx));
                    }
                    run_case(max ? TGL_OP_MAX_POOL_BACKWARD : TGL_OP_AVG_POOL_BACKWARD, &w.p, sizeof w.p, ins,
                             {rand_output(dt, w.x, rng_)}, tol_of(dt), CompareMode::Nmse, what);
                }
}

// (N, C, spatial...) shapes of rank 3..5 with odd sizes.
Shape random_nc_shape(int k, Rng& rng, int64_t hi) {
    Shape s = {rng.integer(1, 2), rng.integer(1, 3)};
    for (int d = 0; d < k; ++d) s.push_back(rng.integer(1, hi));
    return s;
}

TEST_F(PoolDiff, GlobalAndAdaptive) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (int k = 1; k <= 3; ++k)
            for (int rep = 0; rep < 4; ++rep) {
                Shape x = random_nc_shape(k, rng_, k == 1 ? 300 : k == 2 ? 23 : 9);
                Shape y = {x[0], x[1]};
                if (rng_.chance(0.5)) y.resize(x.size(), 1);
                for (bool max : {true, false})
                    run_case(max ? TGL_OP_GLOBAL_MAX_POOL : TGL_OP_GLOBAL_AVG_POOL, nullptr, 0, {rand_input(dt, x, rng_, max)},
                             {rand_output(dt, y, rng_)}, max ? 0 : tol_of(dt), max ? CompareMode::ExactBits : CompareMode::Nmse,
                             std::string(max ? "global_max_pool " : "global_avg_pool ") + dtype_name(dt) + " " + shape_name(x) +
                                 " -> " + shape_name(y));
                Shape xa = random_nc_shape(k, rng_, 11), ya = {xa[0], xa[1]};
                for (int d = 0; d < k; ++d) ya.push_back(rng_.integer(1, 7));
                run_case(TGL_OP_ADAPTIVE_AVG_POOL, nullptr, 0, {rand_input(dt, xa, rng_)}, {rand_output(dt, ya, rng_)}, tol_of(dt),
                         CompareMode::Nmse, "adaptive_avg_pool " + dtype_name(dt) + " " + shape_name(xa) + " -> " + shape_name(ya));
                run_case(TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD, nullptr, 0, {rand_input(dt, ya, rng_)}, {rand_output(dt, xa, rng_)},
                         tol_of(dt), CompareMode::Nmse,
                         "adaptive_avg_pool_backward " + dtype_name(dt) + " " + shape_name(ya) + " -> " + shape_name(xa));
            }
}

TEST_F(PoolDiff, Upsampling) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        for (int k = 1; k <= 3; ++k)
            for (int rep = 0; rep < 4; ++rep) {
                Shape x = random_nc_shape(k, rng_, 9), y = {x[0], x[1]};
                tgl_upsample_params p{sizeof(tgl_upsample_params), 0, {0, 0, 0}, 0};
                for (int d = 0; d < k; ++d) {
                    if (rng_.chance(0.4)) {
                        p.scales[d] = float(rng_.integer(5, 40)) / 10.0f;
                        y.push_back(std::max<int64_t>(1, int64_t(std::floor(double(x[2 + d]) * double(p.scales[d])))));
                        if (y.back() != int64_t(std::floor(double(x[2 + d]) * double(p.scales[d])))) p.scales[d] = 0;
                    } else {
                        y.push_back(rng_.integer(1, 19));
                    }
                }
                run_case(TGL_OP_UPSAMPLE_NEAREST, &p, sizeof p, {rand_input(dt, x, rng_, true)}, {rand_output(dt, y, rng_)}, 0,
                         CompareMode::ExactBits, "upsample_nearest " + dtype_name(dt) + " " + shape_name(x) + " -> " + shape_name(y));
            }
        for (int rep = 0; rep < 8; ++rep) {
            Shape x = random_nc_shape(2, rng_, 9), y = {x[0], x[1], rng_.integer(1, 19), rng_.integer(1, 19)};
            tgl_upsample_params p{sizeof(tgl_upsample_params), uint32_t(rep % 2), {0, 0, 0}, 0};
            if (rep % 4 == 2)  // PyTorch's scale_factor: the step is 1 / scale, not in / out
                for (int d = 0; d < 2; ++d) {
                    p.scales[d] = float(rng_.integer(11, 40)) / 10.0f;
                    y[2 + d] = int64_t(std::floor(double(x[2 + d]) * double(p.scales[d])));
                }
            run_case(TGL_OP_UPSAMPLE_BILINEAR, &p, sizeof p, {rand_input(dt, x, rng_)}, {rand_output(dt, y, rng_)}, tol_of(dt),
                     CompareMode::Nmse,
                     "upsample_bilinear " + dtype_name(dt) + " " + shape_name(x) + " -> " + shape_name(y) + (rep % 2 ? " align_corners" : ""));
        }
    }
}

TEST_F(PoolDiff, EmptyAndLarge) {
    tgl_pool_params p{};
    p.struct_size = sizeof p;
    p.kernel[0] = p.kernel[1] = 3;
    p.stride[0] = p.stride[1] = 2;
    p.pad_begin[0] = p.pad_end[0] = 1;
    run_case(TGL_OP_MAX_POOL, &p, sizeof p, {rand_input(TGL_DTYPE_F32, {0, 3, 5, 5}, rng_)},
             {rand_output(TGL_DTYPE_F32, {0, 3, 3, 2}, rng_), rand_output(TGL_DTYPE_I32, {0, 3, 3, 2}, rng_)}, 0, CompareMode::ExactBits,
             "max_pool empty batch");
    run_case(TGL_OP_UPSAMPLE_BILINEAR, nullptr, 0, {rand_input(TGL_DTYPE_F16, {2, 0, 3, 3}, rng_)},
             {rand_output(TGL_DTYPE_F16, {2, 0, 5, 5}, rng_)}, kTolF16, CompareMode::Nmse, "upsample_bilinear empty channels");
    // Few large planes: chunks reduced by separate workgroups, then combined (two passes on the GPU).
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (bool max : {true, false}) {
            const Shape xs = {1, 3, 257, 301};
            run_case(max ? TGL_OP_GLOBAL_MAX_POOL : TGL_OP_GLOBAL_AVG_POOL, nullptr, 0, {rand_input(dt, xs, rng_, max && rng_.chance(0.5))},
                     {rand_output(dt, {1, 3}, rng_)}, max ? 0 : tol_of(dt), max ? CompareMode::ExactBits : CompareMode::Nmse,
                     std::string(max ? "global_max_pool " : "global_avg_pool ") + dtype_name(dt) + " 1x3x257x301");
        }
    // 70,000 planes of 40: one workgroup each (more than 65,535 workgroups in one grid axis).
    InputArg x = input_values(TGL_DTYPE_F16, {1, 70000, 40}, random_values(70000 * 40, rng_, float_values(TGL_DTYPE_F16, -2, 2)));
    run_case(TGL_OP_GLOBAL_AVG_POOL, nullptr, 0, {x}, {output_of(TGL_DTYPE_F16, {1, 70000})}, kTolF16, CompareMode::Nmse,
             "global_avg_pool 70000 planes");
    run_case(TGL_OP_GLOBAL_MAX_POOL, nullptr, 0, {x}, {output_of(TGL_DTYPE_F16, {1, 70000, 1})}, 0, CompareMode::ExactBits,
             "global_max_pool 70000 planes");
}

// Windows of more positions than llvmpipe's 65,535 loop passes per invocation (which cut the
// window loops short, returning TGL_OK): each maximum lies past position 65,535 of its window, the
// averages are of positive values, so that a window walked only in part shows.
TEST_F(PoolDiff, WideWindows) {
    auto values = [&](int64_t n) { return random_values(n, rng_, float_values(F32, 1, 2)); };
    tgl_pool_params p{};
    p.struct_size = sizeof p;
    // max_pool1d: windows of 70,000 taps, stride 3, over 70,010 positions (4 outputs per channel):
    // channel 0's maximum at 69,999, a NaN at 69,000 in channel 1.
    p.kernel[0] = 70000;
    p.stride[0] = 3;
    std::vector<double> x = values(2 * 70010);
    x[69999] = 10;
    x[70010 + 69000] = std::numeric_limits<double>::quiet_NaN();
    run_case(TGL_OP_MAX_POOL, &p, sizeof p, {input_values(F32, {1, 2, 70010}, x)},
             {rand_output(F32, {1, 2, 4}, rng_), rand_output(TGL_DTYPE_I32, {1, 2, 4}, rng_)}, 0, CompareMode::ExactBits,
             "max_pool1d, 70,000-tap windows");
    // avg_pool1d: windows of 131,072 over 131,074 positions (3 outputs per channel).
    p.kernel[0] = 131072;
    p.stride[0] = 1;
    run_case(TGL_OP_AVG_POOL, &p, sizeof p, {input_values(F32, {1, 2, 131074}, values(2 * 131074))}, {rand_output(F32, {1, 2, 3}, rng_)},
             tol::kReduction, CompareMode::Nmse, "avg_pool1d, 131,072-position windows");
    // 2d: 260 x 260 windows (67,600 positions) over 260 x 261, the maximum in the last row.
    p.kernel[0] = p.kernel[1] = 260;
    p.stride[0] = p.stride[1] = 1;
    x = values(260 * 261);
    x[259 * 261 + 100] = 10;
    run_case(TGL_OP_MAX_POOL, &p, sizeof p, {input_values(F32, {1, 1, 260, 261}, x)},
             {rand_output(F32, {1, 1, 1, 2}, rng_), rand_output(TGL_DTYPE_I32, {1, 1, 1, 2}, rng_)}, 0, CompareMode::ExactBits,
             "max_pool2d, 260x260 windows");
    run_case(TGL_OP_AVG_POOL, &p, sizeof p, {input_values(F32, {1, 1, 260, 261}, x)}, {rand_output(F32, {1, 1, 1, 2}, rng_)},
             tol::kReduction, CompareMode::Nmse, "avg_pool2d, 260x260 windows");
    // Adaptive: one output over 70,001 inputs, and its backward (one dx element gathering 70,001 dy).
    run_case(TGL_OP_ADAPTIVE_AVG_POOL, nullptr, 0, {input_values(F32, {1, 2, 70001}, values(2 * 70001))}, {rand_output(F32, {1, 2, 1}, rng_)},
             tol::kReduction, CompareMode::Nmse, "adaptive_avg_pool1d, 70,001 -> 1");
    run_case(TGL_OP_ADAPTIVE_AVG_POOL_BACKWARD, nullptr, 0, {input_values(F32, {1, 2, 70001}, values(2 * 70001))},
             {rand_output(F32, {1, 2, 1}, rng_)}, tol::kReduction, CompareMode::Nmse, "adaptive_avg_pool1d_backward, 70,001 -> 1");
}

}  // namespace
}  // namespace diff
