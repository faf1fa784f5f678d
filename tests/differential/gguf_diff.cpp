// GGUF block dtypes, GLES (subject) against the CPU reference: dequantize, linear (decode GEMV and
// prefill), grouped_linear with several experts and index_select of a block table, at edge shapes:
// odd K, K not a multiple of the block, empty, strided rows (gaps of whole blocks between rows),
// M = 1 and M > 1, f32 and f16 activations. Random blocks with fresh seeds (TGL_TEST_SEED).
// gguf_fuzz_case() is the fuzzer of fuzz_diff.cpp for these ops' block forms.
#include "diff.h"

#include "tgl_test/gguf_blocks.h"

namespace diff {
namespace {

using Bytes = std::vector<uint8_t>;

Device& ref() { return shared_device(Role::Reference); }
// The subject device: the shared one, or (SmallWindows) one whose SSBO windows are 4 KiB.
Device* g_subject = nullptr;
Device& sub() { return g_subject ? *g_subject : shared_device(Role::Subject); }

// A block tensor (rows..., K) whose rows lie `gap` blocks apart beyond their own ceil(K / B).
RawOperand block_operand(tgl_dtype dt, const Shape& shape, int64_t gap, Rng& r, bool subnormal_scales = false) {
    const int64_t B = tgl_dtype_block_size(dt);
    const int64_t row_blocks = (shape.back() + B - 1) / B + gap;
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < shape.size(); ++d) rows *= shape[d];
    RawOperand o;
    o.dtype = dt;
    o.shape = shape;
    o.bytes = random_blocks(dt, std::max<int64_t>(1, rows * row_blocks), r, subnormal_scales);
    o.strides.assign(shape.size(), 1);
    int64_t s = row_blocks * B;
    for (size_t d = shape.size() - 1; d-- > 0;) {
        o.strides[d] = s;
        s *= std::max<int64_t>(1, shape[d]);
    }
    return o;
}

RawOperand random_values(tgl_dtype dt, const Shape& shape, Rng& r) {
    std::vector<double> v(size_t(numel(shape)));
    for (double& x : v) x = r.uniform(-1, 1);
    return raw_values(dt, shape, v);
}

// The subject's output against the reference's: same status; values within tol of the largest
// reference magnitude (max-abs error relative to max |ref|).
void compare_runs(tgl_op op, const void* params, const std::vector<RawOperand>& ins, const RawOperand& out, double tol,
                  const std::string& what) {
    SCOPED_TRACE(what);
    const RawResult want = run_raw(ref(), op, params, ins, out);
    const RawResult got = run_raw(sub(), op, params, ins, out);
    ASSERT_EQ(want.status, TGL_OK) << want.message;
    ASSERT_EQ(got.status, TGL_OK) << got.message;
    ASSERT_EQ(got.values.size(), want.values.size());
    EXPECT_EQ(got.written_outside, -1) << "byte " << got.written_outside << " of the output's buffer, outside the output, was written";
    double scale = 0, err = 0;
    size_t worst = 0;
    for (size_t i = 0; i < want.values.size(); ++i) {
        scale = std::max(scale, std::abs(want.values[i]));
        const double e = std::abs(got.values[i] - want.values[i]);
        if (!(e <= err)) {
            err = e;
            worst = i;
        }
    }
    if (want.values.empty()) return;
    EXPECT_LE(err, tol * std::max(scale, 1e-30)) << "worst element " << worst << ": got " << got.values[worst]
                                                 << ", reference " << want.values[worst] << " (max |ref| " << scale << ")";
}

std::string name(tgl_dtype dt) { return dtype_name(dt); }
// A K two blocks and 3 long: odd, and not a multiple of the block.
int64_t odd_k(tgl_dtype dt) { return tgl_dtype_block_size(dt) * 2 + 3; }
std::string shape_name(const Shape& s) { return shape_str(s); }

const int64_t kOddK[] = {1, 7, 31, 33, 40, 100, 255, 257, 300};

void dequantize_case(tgl_dtype dt, Rng& r) {
    const int64_t B = tgl_dtype_block_size(dt);
    const int64_t K = r.chance(0.5) ? r.pick(std::vector<int64_t>(std::begin(kOddK), std::end(kOddK))) : B * r.integer(1, 3);
    Shape s;
    for (int64_t d = r.integer(0, 2); d > 0; --d) s.push_back(r.integer(1, 4));
    s.push_back(K);
    const tgl_dtype yd = r.chance(0.5) ? F32 : F16;
    RawOperand y = raw_output(yd, s);
    if (s.size() >= 2 && r.chance(0.5)) {  // y transposed in its last two dims
        const size_t a = s.size() - 2, b = s.size() - 1;
        std::vector<int64_t> st = y.strides;
        st[b] = s[a];
        st[a] = 1;
        for (size_t d = a; d-- > 0;) st[d] = st[d + 1] * s[d + 1] * (d + 1 == a ? s[b] : 1);
        y = raw_output(yd, s, st);
    }
    // f32: the exact value rounded once on both plugins; f16: the GPU rounds via f32 (twice).
    compare_runs(TGL_OP_DEQUANTIZE, nullptr, {block_operand(dt, s, r.integer(0, 1), r)}, y, yd == F32 ? 0 : 1e-3,
                 "dequantize " + name(dt) + " " + shape_name(s) + " -> " + name(yd));
}

// act < 0: a random activation (each one is another program to compile on llvmpipe).
// x_t_ok: x's storage may be transposed (not under small windows, where the float kernels need a
// row of x in one window: a transposed x's row spans all of it).
void linear_case(tgl_dtype dt, int64_t M, int64_t K, int64_t N, Rng& r, bool lead3 = false, int act = TGL_ACTIVATION_NONE,
                 bool x_t_ok = true) {
    const tgl_dtype xd = r.chance(0.5) ? F32 : F16;
    Shape xs = lead3 ? Shape{2, M, K} : Shape{M, K}, ys = lead3 ? Shape{2, M, N} : Shape{M, N};
    tgl_linear_params p{sizeof(tgl_linear_params), act < 0 ? uint32_t(r.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1)) : uint32_t(act)};
    RawOperand bias = r.chance(0.5) ? random_values(xd, {N}, r) : RawOperand{xd, {}, {}, {}, 0, true};
    RawOperand x = random_values(xd, xs, r);
    const bool x_t = x_t_ok && !lead3 && r.chance(0.3);  // x's storage transposed: k-stride M (strided GEMV loads)
    if (x_t) x.strides = {1, M};
    compare_runs(TGL_OP_LINEAR, &p, {x, block_operand(dt, {N, K}, r.integer(0, 1), r), bias},
                 raw_output(xd, ys), xd == F32 ? 2e-5 : 4e-3,
                 "linear " + name(dt) + " x " + shape_name(xs) + " " + name(xd) + " N " + std::to_string(N) + " act " +
                     std::to_string(p.activation) + (bias.absent ? "" : " bias") + (x_t ? " x transposed" : ""));
}

void grouped_case(tgl_dtype dt, Rng& r) {
    const int64_t T = r.integer(1, 12), E = r.integer(2, 4), N = r.integer(1, 9);
    const int64_t K = r.chance(0.5) ? r.integer(1, 300) : tgl_dtype_block_size(dt);
    std::vector<double> idx;
    for (int64_t t = 0; t < T; ++t) idx.push_back(double(r.integer(0, E - 1)));
    const tgl_dtype xd = r.chance(0.5) ? F32 : F16;
    RawOperand bias = r.chance(0.5) ? random_values(xd, {E, N}, r) : RawOperand{xd, {}, {}, {}, 0, true};
    compare_runs(TGL_OP_GROUPED_LINEAR, nullptr,
                 {random_values(xd, {T, K}, r), block_operand(dt, {E, N, K}, r.integer(0, 1), r), raw_values(I32, {T}, idx), bias},
                 raw_output(xd, {T, N}), xd == F32 ? 2e-5 : 4e-3,
                 "grouped_linear " + name(dt) + " T " + std::to_string(T) + " E " + std::to_string(E) + " K " + std::to_string(K) +
                     " N " + std::to_string(N));
}

void embedding_case(tgl_dtype dt, Rng& r) {
    const int64_t V = r.integer(1, 9), D = r.chance(0.5) ? r.integer(1, 300) : tgl_dtype_block_size(dt), T = r.integer(0, 6);
    std::vector<double> idx;
    for (int64_t t = 0; t < T; ++t) idx.push_back(double(r.integer(0, V - 1)));
    const tgl_dtype yd = r.chance(0.5) ? F32 : F16;
    compare_runs(TGL_OP_INDEX_SELECT, nullptr, {block_operand(dt, {V, D}, r.integer(0, 1), r), raw_values(I32, {T}, idx)},
                 raw_output(yd, {T, D}), yd == F32 ? 0 : 1e-3,
                 "index_select " + name(dt) + " table (" + std::to_string(V) + ", " + std::to_string(D) + ") rows " + std::to_string(T));
}

class Gguf : public SeededTest {};

TEST_F(Gguf, DequantizeEdgeShapes) {
    for (tgl_dtype dt : block_dtypes())
        for (int i = 0; i < 3; ++i) dequantize_case(dt, rng_);
}

// Decode (M = 1 .. 8: the GEMV kernel) and prefill (M > 8, and rows that do not merge), K odd and
// not a multiple of the block.
TEST_F(Gguf, LinearDecodeAndPrefill) {
    for (tgl_dtype dt : block_dtypes()) {
        const int64_t B = tgl_dtype_block_size(dt);
        linear_case(dt, 1, B * 2, 33, rng_, false, dt == TGL_DTYPE_Q4_0 ? TGL_ACTIVATION_SILU : TGL_ACTIVATION_NONE);
        linear_case(dt, 1, odd_k(dt), 17, rng_);
        linear_case(dt, 3, B + 7, 5, rng_);
        linear_case(dt, 8, 1, 4, rng_);
        linear_case(dt, 13, B - 1, 9, rng_);
        linear_case(dt, 2, 40, 6, rng_, true);
        linear_case(dt, 5, 1000, 3, rng_);  // x's rows too large for the GEMV's shared memory (16 KiB): read from x
    }
}

// Every scale of W an f16 subnormal or +-0 (so that the largest output is of their size): the
// GEMV widens them by unpackHalf2x16, which must not flush them; f32 x and y (an f16 y would
// round the outputs to subnormals too).
TEST_F(Gguf, LinearSubnormalScales) {
    const tgl_linear_params p{sizeof(tgl_linear_params), TGL_ACTIVATION_NONE};
    for (tgl_dtype dt : block_dtypes())
        for (int64_t M : {1, 3}) {
            const int64_t K = 2 * tgl_dtype_block_size(dt), N = 7;
            compare_runs(TGL_OP_LINEAR, &p,
                         {random_values(F32, {M, K}, rng_), block_operand(dt, {N, K}, 0, rng_, true),
                          RawOperand{F32, {}, {}, {}, 0, true}},
                         raw_output(F32, {M, N}), 2e-5, "linear " + name(dt) + " M " + std::to_string(M) + ", subnormal scales");
        }
}

TEST_F(Gguf, GroupedLinearExperts) {
    for (tgl_dtype dt : block_dtypes()) grouped_case(dt, rng_);
}

TEST_F(Gguf, EmbeddingRows) {
    for (tgl_dtype dt : block_dtypes()) embedding_case(dt, rng_);
}

// The decode GEMV's shapes (TGL_TUNE_GGUF: lanes, rows of W per invocation, pairs in flight,
// workgroup, x staged or not) on devices opened with each, at their edges: N not a multiple of the
// rows of a workgroup, K not a multiple of the block, of 32, of a pair (64) or of a trip (lanes x
// pairs in flight), K a multiple of 8 (f16 x read 8 halves at a time), M 1 .. 8, x transposed
// (random). One shape each way (each is another program to compile on llvmpipe): 4 lanes, 3 rows
// of W each (6 rows a workgroup), a pair of chunks in flight (a trip: 256 elements); x staged in
// shared memory by 8 invocations (the staging loop takes several turns) for two passes of a
// workgroup's rows, and x read by every invocation (what rows too long to stage take; the default
// stages).
TEST_F(Gguf, GemvShapes) {
    for (const char* shape : {"l4_r3_u1_wg8_p2_x1_n0", "l4_r3_u1_wg8_x0_n0"}) {
        SCOPED_TRACE(shape);
        g_subject = &subject_device_with("TGL_TUNE_GGUF", shape);
        for (tgl_dtype dt : {TGL_DTYPE_Q4_0, TGL_DTYPE_Q8_0, TGL_DTYPE_Q4_K, TGL_DTYPE_Q5_K}) {
            linear_case(dt, 1, 360, 7, rng_);  // the decode (M 1); a trip, then a pair, a chunk and 8 elements
            linear_case(dt, rng_.integer(1, 8), 519, 13, rng_);  // two trips and 7 elements
            linear_case(dt, rng_.integer(1, 8), 352, 5, rng_);   // a trip, a pair and a chunk
        }
    }
    g_subject = nullptr;
    // From n rows of W on, half the lanes: here l2 from 13 rows, l4 for 12 (the dispatch trace
    // names each program's LANES).
    for (int64_t N : {13, 12}) {
        const std::string trace = plan_trace_path("gguf_lanes");
        g_subject = &subject_device_with({{"TGL_GLES_TEST_PLAN_TRACE", trace}, {"TGL_TUNE_GGUF", "l4_r3_u1_wg8_p2_x1_n13"}});
        for (tgl_dtype dt : {TGL_DTYPE_Q4_0, TGL_DTYPE_Q4_K}) linear_case(dt, rng_.integer(1, 8), 519, N, rng_);
        g_subject = nullptr;
        std::string text;
        if (!take_plan_trace(trace, &text)) continue;
        if (text.find("PASS_GEMV") == std::string::npos) {  // e.g. TGL_GLES_LIMITS=minimum: decoded, then the float linear
            std::printf("[ note     ] N %d: the decode GEMV did not run on this device: its lanes not checked\n", int(N));
            continue;
        }
        const std::string want = N >= 13 ? "LANES=2" : "LANES=4", other = N >= 13 ? "LANES=4" : "LANES=2";
        EXPECT_NE(text.find(want), std::string::npos) << "N " << N << ": no GEMV dispatch with " << want << " in the trace:\n" << text;
        EXPECT_EQ(text.find(other), std::string::npos) << "N " << N << ": a GEMV dispatch with " << other << " in the trace:\n" << text;
    }
}

// The decode GEMV's workgroup size is measured where the device can time it (gguf_kernels.cpp:
// fastest_plan between the given size and twice it, which take the same sums in the same order),
// so the choice must never show in the results: wg512 and wg1024 as given, and measured (m2: on
// a software renderer too), each bit for bit the first, and the same as the reference within the
// usual tolerance. The trace shows that the wg1024 device ran that size (cut down where the
// device holds fewer invocations: TGL_GLES_LIMITS=minimum).
TEST_F(Gguf, GemvMeasuredShapesSameBits) {
    const std::string trace = plan_trace_path("gguf_wide");
    const char* shapes[] = {"l4_wg512_n0", "l4_wg1024_n0", "l4_n0_m2"};
    for (tgl_dtype dt : {TGL_DTYPE_Q4_0, TGL_DTYPE_Q8_0, TGL_DTYPE_Q4_K, TGL_DTYPE_Q5_K}) {
        const int64_t M = rng_.integer(1, 8), K = 519, N = 13;
        const tgl_dtype xd = rng_.chance(0.5) ? F16 : F32;
        const std::vector<RawOperand> ins = {random_values(xd, {M, K}, rng_), block_operand(dt, {N, K}, 0, rng_), RawOperand{xd, {}, {}, {}, 0, true}};
        const RawOperand out = raw_output(xd, {M, N});
        const std::string what = name(dt) + " " + name(xd) + " M " + std::to_string(M);
        std::vector<RawResult> got;
        for (const char* shape : shapes) {
            g_subject = shape == shapes[1] ? &subject_device_with({{"TGL_GLES_TEST_PLAN_TRACE", trace}, {"TGL_TUNE_GGUF", shape}})
                                           : &subject_device_with("TGL_TUNE_GGUF", shape);
            compare_runs(TGL_OP_LINEAR, nullptr, ins, out, xd == F32 ? 2e-5 : 4e-3, what + " " + shape);
            got.push_back(run_raw(sub(), TGL_OP_LINEAR, nullptr, ins, out));
        }
        g_subject = nullptr;
        for (size_t k = 1; k < got.size(); ++k) {
            ASSERT_EQ(got[k].status, TGL_OK) << what << " " << shapes[k] << ": " << got[k].message;
            ASSERT_EQ(got[k].values.size(), got[0].values.size());
            for (size_t i = 0; i < got[0].values.size(); ++i)
                ASSERT_EQ(got[k].values[i], got[0].values[i]) << what << " " << shapes[k] << " against " << shapes[0] << ", element " << i;
        }
    }
    std::string text;
    if (take_plan_trace(trace, &text) && text.find("PASS_GEMV") != std::string::npos && !std::getenv("TGL_GLES_LIMITS")) {
        EXPECT_NE(text.find("WG_SIZE=1024"), std::string::npos) << "the wg1024 device's GEMV ran another size:\n" << text;
    }
}

// The GEMV's f16 outputs in every layout: contiguous from an even element (stored as words of
// two rows), from an odd one, strided, and rows of x with an odd stride between y's rows (each
// element by atomics on its half word); N odd, so that a last row has no pair. Besides the
// values, every byte of y's buffer that is not one of y's elements keeps its 0xff fill
// (compare_runs checks it for every case).
TEST_F(Gguf, GemvF16OutputLayouts) {
    struct Layout {
        const char* what;
        int64_t M, y_offset, n_stride, m_stride;  // elements
    };
    const int64_t N = 33;
    for (const Layout& l : {Layout{"contiguous", 1, 0, 1, N}, Layout{"rows on words", 2, 2, 1, N + 1}, Layout{"odd offset", 1, 1, 1, N},
                            Layout{"n-stride 2", 2, 0, 2, 2 * N + 3}, Layout{"row stride odd", 3, 2, 1, N + 2}}) {
        for (tgl_dtype dt : {TGL_DTYPE_Q4_0, TGL_DTYPE_Q8_0, TGL_DTYPE_Q4_K, TGL_DTYPE_Q5_K}) {
            const int64_t K = 2 * std::max<int64_t>(64, tgl_dtype_block_size(dt)) + 32;  // pairs and a chunk
            RawOperand y = raw_output(F16, {l.M, N}, {l.m_stride, l.n_stride});
            y.byte_offset = uint64_t(l.y_offset) * 2;
            const tgl_linear_params p{sizeof(tgl_linear_params), TGL_ACTIVATION_NONE};
            compare_runs(TGL_OP_LINEAR, &p,
                         {random_values(F16, {l.M, K}, rng_), block_operand(dt, {N, K}, 0, rng_), RawOperand{F16, {}, {}, {}, 0, true}},
                         y, 4e-3, std::string(l.what) + " " + name(dt) + " M " + std::to_string(l.M));
        }
    }
}

// Operands larger than one SSBO window (4 KiB, TGL_GLES_TEST_FAULT=max_window on the subject):
// W's rows, the table, x, y and the index bound in windows (backends/gles/gguf_kernels.cpp).
TEST_F(Gguf, SmallWindows) {
    g_subject = &subject_device_with("TGL_GLES_TEST_FAULT", "max_window=4096");
    for (tgl_dtype dt : {TGL_DTYPE_Q4_0, TGL_DTYPE_Q6_K}) {
        const int64_t K = 500;  // a row of f32 x (2000 bytes) fits a window at any window alignment
        linear_case(dt, 1, K, 40, rng_, false, TGL_ACTIVATION_NONE, false);
        linear_case(dt, 10, K, 40, rng_, false, TGL_ACTIVATION_NONE, false);
        compare_runs(TGL_OP_DEQUANTIZE, nullptr, {block_operand(dt, {40, K}, 0, rng_)}, raw_output(F32, {40, K}), 0,
                     "dequantize " + name(dt) + " (40, 500), 4 KiB windows");
        compare_runs(TGL_OP_INDEX_SELECT, nullptr, {block_operand(dt, {40, K}, 0, rng_), raw_values(I32, {5}, {39, 0, 17, 39, 3})},
                     raw_output(F32, {5, K}), 0, "index_select " + name(dt) + " table (40, 500), 4 KiB windows");
    }
    g_subject = nullptr;
}

}  // namespace


void gguf_fuzz_case(tgl_op op, Rng& r) {
    const tgl_dtype dt = r.pick(block_dtypes());
    switch (op) {
    case TGL_OP_DEQUANTIZE: return dequantize_case(dt, r);
    case TGL_OP_LINEAR: return linear_case(dt, r.integer(1, 12), r.integer(1, 300), r.integer(1, 24), r, r.chance(0.2), -1);
    case TGL_OP_GROUPED_LINEAR: return grouped_case(dt, r);
    default: return embedding_case(dt, r);
    }
}

}  // namespace diff
