// Packed f16 arithmetic (GLES: TGL_TUNE_HALF, docs/half-precision.md). f16 matmul (K 64 and 4096:
// the FAST tiles, split over K at 4096; on a device opened with TGL_TUNE_HALF=matmul, its opt-in)
// and f16 causal attention (the subject's default device), each with packed f16 products where the
// driver offers GL_NV_gpu_shader5 (else the f32 path) and on a device opened with
// TGL_TUNE_HALF=off, against the CPU reference (f64 inside, rounded once to f16).
// Prints the NMSE and the largest relative error of both, and bounds them by the tolerances
// docs/half-precision.md documents; where the device offers packed f16, the two devices must give
// different results (the variant was taken, and the switch turns it off).
#include "diff.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace diff {
namespace {

// The documented bounds of f16 outputs with packed f16 products (docs/half-precision.md): NMSE,
// and |got - want| / max(|want|, rms(want)) per element.
constexpr double kHalfNmse = 4e-6, kHalfMaxRel = 2e-2;

struct Errors {
    double nmse = 0, max_rel = 0;
};

Errors errors_of(const std::vector<double>& got, const std::vector<double>& want) {
    double num = 0, den = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        num += (got[i] - want[i]) * (got[i] - want[i]);
        den += want[i] * want[i];
    }
    Errors e;
    e.nmse = den > 0 ? num / den : num;
    const double rms = std::sqrt(den / double(std::max<size_t>(1, want.size())));
    for (size_t i = 0; i < want.size(); ++i)
        e.max_rel = std::max(e.max_rel, std::fabs(got[i] - want[i]) / std::max(std::fabs(want[i]), rms));
    return e;
}

// Whether the subject plugin's device 0 offers packed f16 arithmetic (its property; "" if none).
bool subject_offers_half() {
    const char* v = tgl_device_property(plugin(Role::Subject).raw(), 0, "extensions.f16_arith");
    return v && std::strcmp(v, "1") == 0;
}

// Runs the op on the reference, the subject device `on_device` and its TGL_TUNE_HALF=off device;
// checks and prints the errors of output 0.
void measure(const char* what, Device& on_device, tgl_op op, const std::vector<uint8_t>& params,
             const std::vector<InputArg>& ins, const std::vector<OutputArg>& outs) {
    SCOPED_TRACE(what);
    const void* p = params.data();
    const std::vector<double> want = run_op_values(shared_device(Role::Reference), op, p, ins, outs)[0];
    const std::vector<double> on = run_op_values(on_device, op, p, ins, outs)[0];
    const std::vector<double> off = run_op_values(subject_device_with("TGL_TUNE_HALF", "off"), op, p, ins, outs)[0];
    const Errors e_on = errors_of(on, want), e_off = errors_of(off, want);
    const bool half = subject_offers_half();
    std::printf("[ half     ] %s: %s NMSE %.3g max rel %.3g; TGL_TUNE_HALF=off NMSE %.3g max rel %.3g\n", what,
                half ? "packed f16" : "f32 (no f16 arithmetic on this device)", e_on.nmse, e_on.max_rel, e_off.nmse, e_off.max_rel);
    EXPECT_LE(e_on.nmse, kHalfNmse);
    EXPECT_LE(e_on.max_rel, kHalfMaxRel);
    EXPECT_LE(e_off.nmse, kHalfNmse);
    EXPECT_LE(e_off.max_rel, kHalfMaxRel);
    if (half) EXPECT_NE(on, off) << "the device offers packed f16, yet TGL_TUNE_HALF=off changed nothing";
    else EXPECT_EQ(on, off) << "no packed f16 on this device, yet TGL_TUNE_HALF=off changed the result";
}

InputArg f16_input(const Shape& shape, Rng& rng, double lo, double hi) {
    InputArg a;
    a.dtype = TGL_DTYPE_F16;
    a.view = contiguous(shape);
    a.storage = random_storage(TGL_DTYPE_F16, a.view.storage, rng, float_values(TGL_DTYPE_F16, lo, hi));
    return a;
}

class HalfArithDiff : public SeededTest {};

TEST_F(HalfArithDiff, MatmulF16) {
    const int64_t M = 128, N = 128;
    for (int64_t K : {64, 4096}) {
        tgl_matmul_params p{sizeof(tgl_matmul_params), 0, 0, 1.0f, 0.0f, 0};
        const std::string what = "matmul f16 M 128 N 128 K " + std::to_string(K);
        measure(what.c_str(), subject_device_with("TGL_TUNE_HALF", "matmul"), TGL_OP_MATMUL, param_bytes(p), {f16_input({M, K}, rng_, -1, 1), f16_input({K, N}, rng_, -1, 1)},
                {output_of(TGL_DTYPE_F16, {M, N})});
    }
}

TEST_F(HalfArithDiff, CausalAttentionF16) {
    // B 1, H 2, S 256, D 64: the flash kernel (16+ rows per head), causal.
    const int64_t B = 1, H = 2, S = 256, D = 64;
    tgl_attention_params p{sizeof(tgl_attention_params), 1, 0.0f, 0, 0.0f, 0.0f, 0};
    measure("attention f16 causal B 1 H 2 S 256 D 64", shared_device(Role::Subject), TGL_OP_ATTENTION, param_bytes(p),
            {f16_input({B, H, S, D}, rng_, -1.5, 1.5), f16_input({B, H, S, D}, rng_, -1.5, 1.5),
             f16_input({B, H, S, D}, rng_, -2, 2), absent_input(), absent_input()},
            {output_of(TGL_DTYPE_F16, {B, H, S, D}), absent_output()});
}

}  // namespace
}  // namespace diff
