// Differential tests of the matmul family beyond plain f32 matmul (GLES vs the CPU reference).
// f16 matmul, linear (every activation), linear_qkv, grouped_linear, linear_int8, linear_int4 on
// seeded random inputs: odd/prime sizes and 1s, batch (leading) dims, permuted / stepped /
// negative-stride / padded input views, misaligned f16 views, non-contiguous outputs, the decode
// shape M = 1, empty tensors and K = 0, and one product of more than 65,535 workgroups.
// Tolerance (NMSE): f32 outputs tol::kMatmul (f32 sums in any order vs double). f16 outputs
// 2 * tol::kMatmul: both plugins round nearly the same value once to f16, so they differ by at
// most one f16 ulp (relative 2^-10) where the value straddles a rounding boundary (NMSE <= 2^-20
// even if every element did), on top of the f32 summation differences.
#include "diff.h"

namespace diff {
namespace {

class MatmulFamilyDiff : public SeededTest {};

const tgl_dtype F32 = TGL_DTYPE_F32, F16 = TGL_DTYPE_F16;

double tol_of(tgl_dtype dt) { return dt == F16 ? 2 * tol::kMatmul : tol::kMatmul; }

Kind pick_kind(Rng& rng) {
    static const std::vector<Kind> kinds = {Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Padded, Kind::Mixed};
    return rng.pick(kinds);
}

View random_view(const Shape& shape, tgl_dtype dt, Rng& rng, bool input) {
    if (tgl_dtype_size(dt) < 4 && rng.chance(0.3)) return make_view(shape, misaligned_layout(rng));
    return view_of(shape, pick_kind(rng), rng, input);
}

InputArg rand_input(tgl_dtype dt, const Shape& shape, Rng& rng, const ValueGen& gen) {
    InputArg a;
    a.dtype = dt;
    a.view = random_view(shape, dt, rng, false);
    a.storage = random_storage(dt, a.view.storage, rng, gen);
    return a;
}
InputArg rand_float(tgl_dtype dt, const Shape& shape, Rng& rng, double lo = -1, double hi = 1) {
    return rand_input(dt, shape, rng, float_values(dt, lo, hi));
}
Shape with_last(Shape s, int64_t n) {
    s.back() = n;
    return s;
}

void run_case(tgl_op op, const std::vector<uint8_t>& params, std::vector<InputArg> ins, std::vector<OutputArg> outs, tgl_dtype dt,
              const std::string& what) {
    const size_t n_out = outs.size();
    check_op(op, params, std::move(ins), std::move(outs), std::vector<double>(n_out, tol_of(dt)), what);
}

// (M, K, N) with primes, 1s, the decode shape M = 1 and sizes around the tiles.
const std::vector<std::array<int64_t, 3>>& sizes() {
    static const std::vector<std::array<int64_t, 3>> v = {{1, 1, 1}, {7, 13, 5}, {1, 64, 129}, {3, 31, 37},
                                                          {33, 17, 65}, {130, 40, 3}, {2, 96, 71}};
    return v;
}

std::string mkn(const std::array<int64_t, 3>& s) {
    return "M " + std::to_string(s[0]) + " K " + std::to_string(s[1]) + " N " + std::to_string(s[2]);
}

TEST_F(MatmulFamilyDiff, MatmulF16) {
    for (const auto& s : sizes())
        for (int variant = 0; variant < 2; ++variant) {
            const bool ta = rng_.chance(0.5), tb = rng_.chance(0.5);
            const float beta = variant ? float(rng_.uniform(-1, 1)) : 0.0f;
            tgl_matmul_params p{sizeof(tgl_matmul_params), ta, tb, float(rng_.uniform(0.5, 2)), beta, 0};
            Shape batch = variant ? Shape{2} : Shape{};
            Shape as = batch, bs = variant ? Shape{} : Shape{};
            if (ta) { as.push_back(s[1]); as.push_back(s[0]); } else { as.push_back(s[0]); as.push_back(s[1]); }
            if (tb) { bs.push_back(s[2]); bs.push_back(s[1]); } else { bs.push_back(s[1]); bs.push_back(s[2]); }
            Shape cs = batch;
            cs.push_back(s[0]);
            cs.push_back(s[2]);
            OutputArg c = rand_output(F16, cs, rng_);
            if (beta != 0.0f) {
                int64_t n = 1;
                for (int64_t d : cs) n *= d;
                c.init = random_values(n, rng_, float_values(F16, -1, 1));
            }
            run_case(TGL_OP_MATMUL, param_bytes(p), {rand_float(F16, as, rng_), rand_float(F16, bs, rng_)}, {c}, F16,
                     "matmul f16 " + mkn(s) + (ta ? " ta" : "") + (tb ? " tb" : "") + (variant ? " batch 2, beta" : ""));
        }
}

TEST_F(MatmulFamilyDiff, Linear) {
    for (tgl_dtype dt : {F32, F16})
        for (const auto& s : sizes()) {
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_params p{sizeof(tgl_linear_params), act};
            // Leading dims: none (a single row), (M), or (2, M) / (M, 3): batch dims.
            const int lead = int(rng_.integer(0, 2));
            Shape xs = lead == 0 ? Shape{s[1]} : lead == 1 ? Shape{s[0], s[1]} : (rng_.chance(0.5) ? Shape{2, s[0], s[1]} : Shape{s[0], 3, s[1]});
            const bool bias = rng_.chance(0.7);
            run_case(TGL_OP_LINEAR, param_bytes(p),
                     {rand_float(dt, xs, rng_), rand_float(dt, {s[2], s[1]}, rng_), bias ? rand_float(dt, {s[2]}, rng_) : absent_input()},
                     {rand_output(dt, with_last(xs, s[2]), rng_)}, dt,
                     "linear " + dtype_name(dt) + " x " + shape_name(xs) + " N " + std::to_string(s[2]) + " act " + std::to_string(act) +
                         (bias ? " bias" : ""));
        }
}

TEST_F(MatmulFamilyDiff, LinearQkv) {
    const std::vector<std::array<int64_t, 3>> splits = {{8, 4, 4}, {13, 0, 7}, {32, 32, 40}, {5, 17, 2}};
    for (tgl_dtype dt : {F32, F16})
        for (const auto& sp : splits) {
            const int64_t K = rng_.pick(std::vector<int64_t>{1, 16, 29, 64});
            const int64_t n = sp[0] + sp[1] + sp[2];
            Shape xs = rng_.chance(0.5) ? Shape{2, int64_t(rng_.integer(1, 9)), K} : Shape{int64_t(rng_.integer(1, 40)), K};
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_params p{sizeof(tgl_linear_params), act};
            const bool bias = rng_.chance(0.6);
            run_case(TGL_OP_LINEAR_QKV, param_bytes(p),
                     {rand_float(dt, xs, rng_), rand_float(dt, {n, K}, rng_), bias ? rand_float(dt, {n}, rng_) : absent_input()},
                     {rand_output(dt, with_last(xs, sp[0]), rng_), rand_output(dt, with_last(xs, sp[1]), rng_),
                      rand_output(dt, with_last(xs, sp[2]), rng_)},
                     dt,
                     "linear_qkv " + dtype_name(dt) + " x " + shape_name(xs) + " split " + std::to_string(sp[0]) + "/" +
                         std::to_string(sp[1]) + "/" + std::to_string(sp[2]) + (bias ? " bias" : ""));
        }
}

TEST_F(MatmulFamilyDiff, Grouped) {
    // (T, K, N, E); sorted indices (one expert per tile mostly) and random ones (tiles mix experts).
    const std::vector<std::array<int64_t, 4>> cases = {{37, 19, 23, 3}, {1, 64, 129, 8}, {70, 32, 40, 5}, {5, 1, 1, 1}, {130, 24, 9, 4}};
    for (tgl_dtype dt : {F32, F16})
        for (const auto& c : cases) {
            const bool sorted = rng_.chance(0.5);
            std::vector<double> idx = random_values(c[0], rng_, int_values(TGL_DTYPE_I32, 0, c[3] - 1));
            if (sorted) std::sort(idx.begin(), idx.end());
            InputArg index;
            index.dtype = TGL_DTYPE_I32;
            index.view = random_view({c[0]}, TGL_DTYPE_I32, rng_, false);
            index.storage = random_storage(TGL_DTYPE_I32, index.view.storage, rng_, int_values(TGL_DTYPE_I32, 0, c[3] - 1));
            // Logical values in the view's order: write them through the view's element offsets.
            for (int64_t i = 0; i < c[0]; ++i) index.storage.set_value(index.view.offset + i * index.view.strides[0], idx[size_t(i)]);
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_params p{sizeof(tgl_linear_params), act};
            const bool bias = rng_.chance(0.6);
            run_case(TGL_OP_GROUPED_LINEAR, param_bytes(p),
                     {rand_float(dt, {c[0], c[1]}, rng_), rand_float(dt, {c[3], c[2], c[1]}, rng_), index,
                      bias ? rand_float(dt, {c[3], c[2]}, rng_) : absent_input()},
                     {rand_output(dt, {c[0], c[2]}, rng_)}, dt,
                     "grouped_linear " + dtype_name(dt) + " T " + std::to_string(c[0]) + " K " + std::to_string(c[1]) + " N " +
                         std::to_string(c[2]) + " E " + std::to_string(c[3]) + (sorted ? " sorted" : " mixed") + (bias ? " bias" : ""));
        }
}

// A tile of 32 rows with 32 distinct experts and K = 2048: its passes over the experts (each the
// whole K loop) exceed llvmpipe's 65,535 loop passes per invocation (cut short with TGL_OK); the
// GLES plugin spreads the experts over dispatches.
TEST_F(MatmulFamilyDiff, GroupedManyExpertsLongK) {
    const int64_t T = 32, K = 2048, N = 8, E = 32;
    std::vector<double> idx(static_cast<size_t>(T), 0.0);
    for (int64_t i = 0; i < T; ++i) idx[size_t(i)] = double((i * 7) % E);
    tgl_linear_params p{sizeof(tgl_linear_params), TGL_ACTIVATION_NONE};
    run_case(TGL_OP_GROUPED_LINEAR, param_bytes(p),
             {rand_float(F32, {T, K}, rng_), rand_float(F32, {E, N, K}, rng_), input_values(TGL_DTYPE_I32, {T}, idx), rand_float(F32, {E, N}, rng_)},
             {rand_output(F32, {T, N}, rng_)}, F32, "grouped_linear T 32 K 2048 N 8, 32 experts in one tile");
}

TEST_F(MatmulFamilyDiff, Int8) {
    // A subset of sizes() (each case compiles its own shader variants: runtime on llvmpipe).
    const std::vector<std::array<int64_t, 3>> int8_sizes = {{1, 1, 1}, {1, 64, 129}, {33, 17, 65}, {2, 96, 71}};
    for (tgl_dtype dt : {F32, F16})
        for (const auto& s : int8_sizes) {
            const tgl_dtype st = rng_.chance(0.5) ? F32 : F16;
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_params p{sizeof(tgl_linear_params), act};
            Shape xs = rng_.chance(0.3) ? Shape{2, s[0], s[1]} : Shape{s[0], s[1]};
            const bool bias = rng_.chance(0.6);
            run_case(TGL_OP_LINEAR_INT8, param_bytes(p),
                     {rand_float(dt, xs, rng_), rand_input(TGL_DTYPE_I8, {s[2], s[1]}, rng_, int_values(TGL_DTYPE_I8, -128, 127)),
                      rand_float(st, {s[2]}, rng_, 0.001, 0.02), bias ? rand_float(dt, {s[2]}, rng_) : absent_input()},
                     {rand_output(dt, with_last(xs, s[2]), rng_)}, dt,
                     "linear_int8 " + dtype_name(dt) + " x " + shape_name(xs) + " N " + std::to_string(s[2]) + " scale " + dtype_name(st));
        }
}

TEST_F(MatmulFamilyDiff, Int4) {
    // (M, K, N, G)
    const std::vector<std::array<int64_t, 4>> cases = {{1, 64, 129, 32}, {1, 128, 37, 64}, {7, 32, 5, 32}, {33, 192, 65, 64},
                                                       {3, 64, 1, 64}, {130, 96, 17, 32}};
    for (tgl_dtype dt : {F32, F16})
        for (const auto& c : cases) {
            const int64_t groups = c[1] / c[3];
            const tgl_dtype st = rng_.chance(0.5) ? F32 : F16;
            const bool zeros = rng_.chance(0.5), bias = rng_.chance(0.5);
            const uint32_t act = uint32_t(rng_.integer(0, TGL_ACTIVATION_COUNT_V1_0 - 1));
            tgl_linear_int4_params p{sizeof(tgl_linear_int4_params), act, uint32_t(c[3]), 0};
            Shape xs = rng_.chance(0.3) ? Shape{2, c[0], c[1]} : Shape{c[0], c[1]};
            run_case(TGL_OP_LINEAR_INT4, param_bytes(p),
                     {rand_float(dt, xs, rng_), rand_input(TGL_DTYPE_U8, {c[2], c[1] / 2}, rng_, int_values(TGL_DTYPE_U8, 0, 255)),
                      rand_float(st, {c[2], groups}, rng_, 0.01, 0.1),
                      zeros ? rand_input(TGL_DTYPE_U8, {c[2], groups}, rng_, int_values(TGL_DTYPE_U8, 0, 15)) : absent_input(),
                      bias ? rand_float(dt, {c[2]}, rng_) : absent_input()},
                     {rand_output(dt, with_last(xs, c[2]), rng_)}, dt,
                     "linear_int4 " + dtype_name(dt) + " x " + shape_name(xs) + " N " + std::to_string(c[2]) + " group " +
                         std::to_string(c[3]) + (zeros ? " zeros" : "") + (bias ? " bias" : "") + " scales " + dtype_name(st));
        }
}

TEST_F(MatmulFamilyDiff, EmptyAndKZero) {
    for (tgl_dtype dt : {F32, F16}) {
        tgl_linear_params silu{sizeof(tgl_linear_params), TGL_ACTIVATION_SILU};
        // K == 0 with a bias: y = silu(bias) on every row.
        run_case(TGL_OP_LINEAR, param_bytes(silu), {rand_float(dt, {3, 0}, rng_), rand_float(dt, {5, 0}, rng_), rand_float(dt, {5}, rng_)},
                 {rand_output(dt, {3, 5}, rng_)}, dt, "linear K 0 " + dtype_name(dt));
        // No rows: nothing to do.
        run_case(TGL_OP_LINEAR, param_bytes(silu), {rand_float(dt, {0, 4}, rng_), rand_float(dt, {5, 4}, rng_), absent_input()},
                 {rand_output(dt, {0, 5}, rng_)}, dt, "linear M 0 " + dtype_name(dt));
        run_case(TGL_OP_GROUPED_LINEAR, param_bytes(silu),
                 {rand_float(dt, {0, 4}, rng_), rand_float(dt, {2, 5, 4}, rng_), InputArg{TGL_DTYPE_I32, contiguous({0}), Storage::zeros(TGL_DTYPE_I32, 1)},
                  absent_input()},
                 {rand_output(dt, {0, 5}, rng_)}, dt, "grouped_linear T 0 " + dtype_name(dt));
        tgl_matmul_params mp{sizeof(tgl_matmul_params), 0, 0, 1.0f, 0.0f, 0};
        run_case(TGL_OP_MATMUL, param_bytes(mp), {rand_float(dt, {4, 0}, rng_), rand_float(dt, {0, 3}, rng_)}, {rand_output(dt, {4, 3}, rng_)}, dt,
                 "matmul f16 K 0 " + dtype_name(dt));
    }
}

// f16 storage on the GLES plugin's quad paths: FAST tiles (C stored by whole words where an
// invocation owns both halves; a last odd column, an odd C offset keep the masked store), split-K,
// the GEMV kernel both ways, and offsets that are not multiples of 4 (general path).
// (M, K, N, transpose B, front pad of A, front pad of C)
TEST_F(MatmulFamilyDiff, F16QuadPaths) {
    const std::vector<std::array<int64_t, 6>> cases = {{33, 40, 67, 1, 0, 0}, {64, 36, 64, 0, 0, 0}, {64, 36, 64, 0, 0, 1},
                                                       {1, 260, 128, 0, 0, 0}, {3, 72, 37, 1, 0, 0}, {32, 600, 24, 0, 0, 0},
                                                       {17, 40, 64, 0, 1, 0}};
    auto padded = [](const Shape& shape, int64_t front) {
        Layout l;
        l.name = "offset " + std::to_string(front);
        l.pad_front = front;
        l.pad_back = 1;
        return make_view(shape, l);
    };
    for (const auto& c : cases) {
        const bool tb = c[3] != 0;
        InputArg a, b;
        a.dtype = b.dtype = F16;
        a.view = padded({c[0], c[1]}, c[4]);
        b.view = tb ? padded({c[2], c[1]}, 0) : padded({c[1], c[2]}, 0);
        a.storage = random_storage(F16, a.view.storage, rng_, float_values(F16, -1, 1));
        b.storage = random_storage(F16, b.view.storage, rng_, float_values(F16, -1, 1));
        OutputArg out;
        out.dtype = F16;
        out.view = padded({c[0], c[2]}, c[5]);
        tgl_matmul_params p{sizeof(tgl_matmul_params), 0, tb, 1.0f, 0.0f, 0};
        run_case(TGL_OP_MATMUL, param_bytes(p), {a, b}, {out}, F16,
                 "matmul f16 " + mkn({c[0], c[1], c[2]}) + (tb ? " tb" : "") + " A offset " + std::to_string(c[4]) + " C offset " +
                     std::to_string(c[5]));
    }
    // Decode linear (W [N, K] k-contiguous: GEMV lanes along k) with bias and an activation.
    tgl_linear_params lp{sizeof(tgl_linear_params), TGL_ACTIVATION_SILU};
    InputArg x, w, bias;
    x.dtype = w.dtype = bias.dtype = F16;
    x.view = padded({1, 64}, 0);
    w.view = padded({72, 64}, 0);
    bias.view = padded({72}, 0);
    x.storage = random_storage(F16, x.view.storage, rng_, float_values(F16, -1, 1));
    w.storage = random_storage(F16, w.view.storage, rng_, float_values(F16, -1, 1));
    bias.storage = random_storage(F16, bias.view.storage, rng_, float_values(F16, -1, 1));
    OutputArg y;
    y.dtype = F16;
    y.view = padded({1, 72}, 0);
    run_case(TGL_OP_LINEAR, param_bytes(lp), {x, w, bias}, {y}, F16, "linear f16 decode M 1 K 64 N 72 bias silu");
}

// The epilogues after split-K partials and after the GEMV kernel (the reduce pass): bias and
// activations, int8 / int4 weights (scales read by the partial pass), linear_qkv's three outputs.
TEST_F(MatmulFamilyDiff, SplitKAndGemvEpilogues) {
    tgl_linear_params gelu{sizeof(tgl_linear_params), TGL_ACTIVATION_GELU};
    run_case(TGL_OP_LINEAR, param_bytes(gelu), {rand_float(F32, {33, 1024}, rng_), rand_float(F32, {40, 1024}, rng_), rand_float(F32, {40}, rng_)},
             {rand_output(F32, {33, 40}, rng_)}, F32, "linear split-K M 33 K 1024 N 40 bias gelu");
    tgl_linear_params relu{sizeof(tgl_linear_params), TGL_ACTIVATION_RELU};
    run_case(TGL_OP_LINEAR_INT8, param_bytes(relu),
             {rand_float(F32, {4, 768}, rng_), rand_input(TGL_DTYPE_I8, {24, 768}, rng_, int_values(TGL_DTYPE_I8, -128, 127)),
              rand_float(F32, {24}, rng_, 0.001, 0.02), rand_float(F32, {24}, rng_)},
             {rand_output(F32, {4, 24}, rng_)}, F32, "linear_int8 split-K M 4 K 768 N 24");
    tgl_linear_int4_params p4{sizeof(tgl_linear_int4_params), TGL_ACTIVATION_NONE, 64, 0};
    run_case(TGL_OP_LINEAR_INT4, param_bytes(p4),
             {rand_float(F16, {3, 1024}, rng_), rand_input(TGL_DTYPE_U8, {20, 512}, rng_, int_values(TGL_DTYPE_U8, 0, 255)),
              rand_float(F32, {20, 16}, rng_, 0.01, 0.1), rand_input(TGL_DTYPE_U8, {20, 16}, rng_, int_values(TGL_DTYPE_U8, 0, 15)),
              absent_input()},
             {rand_output(F16, {3, 20}, rng_)}, F16, "linear_int4 split-K M 3 K 1024 N 20 group 64 zeros");
    tgl_linear_params silu{sizeof(tgl_linear_params), TGL_ACTIVATION_SILU};
    for (int64_t rows : {5, 40}) {
        auto contig = [&](tgl_dtype dt, const Shape& sh) {
            InputArg a;
            a.dtype = dt;
            a.view = contiguous(sh);
            a.storage = random_storage(dt, a.view.storage, rng_, float_values(dt, -1, 1));
            return a;
        };
        run_case(TGL_OP_LINEAR_QKV, param_bytes(silu), {contig(F16, {rows, 600}), contig(F16, {16, 600}), contig(F16, {16})},
                 {rand_output(F16, {rows, 4}, rng_), rand_output(F16, {rows, 4}, rng_), rand_output(F16, {rows, 8}, rng_)}, F16,
                 "linear_qkv f16 rows " + std::to_string(rows) + " K 600 split 4/4/8 bias silu");
    }
}

// M = 1 and N = 2,097,200 columns: more than 65,535 workgroups along x at 32 columns per
// workgroup (the grid is split into dispatches). K = 2 keeps it lean.
TEST_F(MatmulFamilyDiff, PastWorkgroupLimit) {
    const int64_t N = 65535LL * 32 + 80;
    tgl_linear_params p{sizeof(tgl_linear_params), TGL_ACTIVATION_RELU};
    MultiSpec s;
    s.op = TGL_OP_LINEAR;
    s.params = param_bytes(p);
    s.inputs = {input_values(F32, {1, 2}, {0.5, -1}), InputArg{F32, contiguous({N, 2}), random_storage(F32, 2 * N, rng_, float_values(F32, -1, 1))},
                absent_input()};
    s.outputs = {output_of(F32, {1, N})};
    s.tolerance = {tol::kMatmul};
    s.what = "linear M 1 N " + std::to_string(N);
    check(s);
}

}  // namespace
}  // namespace diff
