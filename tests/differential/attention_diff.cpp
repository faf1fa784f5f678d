// Differential tests (GLES vs CPU) of attention and attention_backward on seeded random inputs:
// causal with Sq != Skv (both ways), GQA up to 8:1, masks broadcasting over batch/heads/rows with
// -inf entries and fully masked rows, bool masks, head dims 64, 80 (with Dv 48), 128 and 256, decoding (Sq = 1)
// against a long KV (the split + combine path), a 1031 x 1031 causal case, permuted (B, S, H, D)
// views of inputs and outputs, random strided / misaligned f16 views, empty batch and Skv = 0, one
// grid past 65,535 workgroups; f32 and f16 (bf16: the basic cases and the flash kernel's vector
// and scalar access). Backward inputs o and lse come from the reference's forward. The ABI 1.3
// options (top-left causal, softcap, ALiBi, window, sinks, f16 k/v under f32 q), alone and
// combined, through every forward path and the backward. Tolerance: tol::kMatmul (f32 dot
// products of any length in any order; f16 outputs are
// the same values rounded once more).
#include "diff.h"

namespace diff {
namespace {

class AttentionDiff : public SeededTest {};

const double dInf = std::numeric_limits<double>::infinity();

struct Dims {
    int64_t B, Hq, Hkv, Sq, Skv, D, Dv;
};

enum class Lay { Contiguous, Aligned, Bshd, Random };

// A (B, H, S, C) view: contiguous, a permuted view of a (B, S, H, C) array (the layout of most
// models), a contiguous one at offset 0 (f16 contiguous views are misaligned half of the time), or
// a random strided/permuted/negative/misaligned one.
View view4(const Shape& s, Lay lay, tgl_dtype dt, Rng& rng, bool input) {
    if (lay == Lay::Aligned) return make_view(s, Layout{});
    if (lay == Lay::Bshd) {
        Layout l;
        l.name = "bshd";
        l.perm = {0, 2, 1, 3};
        return make_view(s, l);
    }
    if (lay == Lay::Random) {
        static const std::vector<Kind> kinds = {Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Padded, Kind::Mixed};
        return view_of(s, rng.pick(kinds), rng, input, dt);
    }
    return view_of(s, Kind::Contiguous, rng, input, dt);
}

InputArg rand_in(tgl_dtype dt, const View& v, Rng& rng, double lo, double hi) {
    InputArg a;
    a.dtype = dt;
    a.view = v;
    a.storage = random_storage(dt, v.storage, rng, float_values(dt, lo, hi));
    return a;
}
OutputArg out_of(tgl_dtype dt, const View& v) {
    OutputArg o;
    o.dtype = dt;
    o.view = v;
    return o;
}

// The ABI 1.3 options of a case: causal 0, 1 (bottom-right) or 2 (top-left), softcap, ALiBi,
// window; sinks (an input) and f16 k, v (and mask) under an f32 q.
struct Options {
    uint32_t causal = 0;
    float softcap = 0.0f, max_bias = 0.0f;
    uint32_t window = 0;
    bool sinks = false;
    bool half_kv = false;
};

// A mask of `shape` (broadcasting to (B, Hq, Sq, Skv)): values in [-3, 1], with a fraction
// `p_inf` of -inf entries and, when full_rows, some rows (along the last dim) entirely -inf.
InputArg make_mask(tgl_dtype dt, const Shape& shape, Rng& rng, double p_inf, bool full_rows) {
    if (dt == TGL_DTYPE_BOOL) {  // 1 attends, 0 hides (a fraction p_inf)
        InputArg m;
        m.dtype = dt;
        m.view = rng.chance(0.5) ? view4(shape, Lay::Random, dt, rng, true) : contiguous(shape);
        m.storage = random_storage(dt, m.view.storage, rng, bool_values(1.0 - p_inf));
        return m;
    }
    InputArg m = rand_in(dt, rng.chance(0.3) ? view4(shape, Lay::Random, dt, rng, true) : contiguous(shape), rng, -3, 1);
    const View& v = m.view;
    const int64_t last = shape.empty() ? 1 : shape.back();
    std::vector<bool> dead_row(size_t(numel(shape) / std::max<int64_t>(1, last) + 1), false);
    for (size_t r = 0; r < dead_row.size(); ++r) dead_row[r] = full_rows && rng.chance(0.25);
    for_each_offset(v, [&](int64_t i, int64_t off) {
        if (rng.chance(p_inf) || dead_row[size_t(i / std::max<int64_t>(1, last))]) m.storage.set_value(off, -dInf);
    });
    return m;
}

struct FwdCase {
    tgl_dtype dt = TGL_DTYPE_F32;
    Dims d{};
    bool causal = false;  // bottom-right (opt.causal, when set, wins)
    Options opt;
    float scale = 0.0f;
    bool has_mask = false;
    Shape mask_shape;
    bool bool_mask = false;
    double p_inf = 0.0;
    bool full_rows = false;
    bool lse = true;
    bool nan_q = false;  // q's first element NaN: o and lse of its row NaN
    Lay in_lay = Lay::Contiguous, out_lay = Lay::Contiguous;
};

tgl_attention_params prm(const FwdCase& c) {
    return tgl_attention_params{sizeof(tgl_attention_params), c.opt.causal ? c.opt.causal : c.causal ? 1u : 0u,
                                c.scale, 0, c.opt.softcap, c.opt.max_bias, c.opt.window};
}

// k and v's dtype (and an additive mask's).
tgl_dtype kv_dtype(const FwdCase& c) { return c.opt.half_kv ? tgl_dtype(TGL_DTYPE_F16) : c.dt; }

std::string describe(const FwdCase& c, const char* what) {
    const tgl_attention_params p = prm(c);
    return std::string(what) + " " + dtype_name(c.dt) + " B" + std::to_string(c.d.B) + " Hq" + std::to_string(c.d.Hq) +
           " Hkv" + std::to_string(c.d.Hkv) + " Sq" + std::to_string(c.d.Sq) + " Skv" + std::to_string(c.d.Skv) + " D" +
           std::to_string(c.d.D) + " Dv" + std::to_string(c.d.Dv) + (p.causal ? " causal " + std::to_string(p.causal) : "") +
           (p.softcap > 0 ? " softcap " + std::to_string(p.softcap) : "") +
           (p.max_bias > 0 ? " max_bias " + std::to_string(p.max_bias) : "") +
           (p.window > 0 ? " window " + std::to_string(p.window) : "") + (c.opt.sinks ? " sinks" : "") +
           (c.opt.half_kv ? " f16 kv" : "") +
           (c.has_mask ? std::string(c.bool_mask ? " bool" : "") + " mask " + shape_name(c.mask_shape) : "");
}

// q, k, v, the mask and the sinks (absent or not) of a case.
std::vector<InputArg> fwd_inputs(const FwdCase& c, Rng& rng) {
    const Dims& d = c.d;
    const tgl_dtype kv = kv_dtype(c);
    std::vector<InputArg> ins = {
        rand_in(c.dt, view4({d.B, d.Hq, d.Sq, d.D}, c.in_lay, c.dt, rng, true), rng, -1.5, 1.5),
        rand_in(kv, view4({d.B, d.Hkv, d.Skv, d.D}, c.in_lay, kv, rng, true), rng, -1.5, 1.5),
        rand_in(kv, view4({d.B, d.Hkv, d.Skv, d.Dv}, c.in_lay, kv, rng, true), rng, -2, 2)};
    ins.push_back(c.has_mask ? make_mask(c.bool_mask ? tgl_dtype(TGL_DTYPE_BOOL) : kv, c.mask_shape, rng, c.p_inf, c.full_rows)
                             : absent_input());
    // Sinks about as large as the scores (some rows dominated by their sink), one -inf.
    if (c.opt.sinks) {
        InputArg sk = rand_in(TGL_DTYPE_F32, rng.chance(0.5) ? view_of({d.Hq}, Kind::Stepped, rng, true, TGL_DTYPE_F32)
                                                           : contiguous({d.Hq}),
                              rng, -2, 3);
        if (d.Hq > 1) sk.storage.set_value(sk.view.offset, -dInf);
        ins.push_back(sk);
    } else {
        ins.push_back(absent_input());
    }
    return ins;
}

// `subject`: a device of the subject plugin opened with its own settings (nullptr: the shared one).
void check_forward(const FwdCase& c, Rng& rng, Device* subject = nullptr) {
    const Dims& d = c.d;
    MultiSpec s;
    s.op = TGL_OP_ATTENTION;
    s.params = param_bytes(prm(c));
    s.inputs = fwd_inputs(c, rng);
    if (c.nan_q) s.inputs[0].storage.set_value(s.inputs[0].view.offset, std::numeric_limits<double>::quiet_NaN());
    s.outputs = {out_of(c.dt, view4({d.B, d.Hq, d.Sq, d.Dv}, c.out_lay, c.dt, rng, false)),
                 c.lse ? out_of(TGL_DTYPE_F32, view4({d.B, d.Hq, d.Sq, 1}, c.out_lay, TGL_DTYPE_F32, rng, false))
                       : absent_output()};
    if (c.lse) {  // lse is 3-D: drop the trailing 1 of the view
        View& v = s.outputs[1].view;
        v.shape.pop_back();
        v.strides.pop_back();
    }
    s.tolerance = {tol::kMatmul, tol::kMatmul};
    s.what = describe(c, "attention");
    check(s, subject);
}

void check_backward(const FwdCase& c, Rng& rng) {
    const Dims& d = c.d;
    std::vector<InputArg> fin = fwd_inputs(c, rng);
    const std::vector<uint8_t> pb = param_bytes(prm(c));
    // o and lse of the reference forward.
    std::vector<std::vector<double>> fo =
        run_op_values(shared_device(Role::Reference), TGL_OP_ATTENTION, pb.data(), fin,
                      {output_of(c.dt, {d.B, d.Hq, d.Sq, d.Dv}), output_of(TGL_DTYPE_F32, {d.B, d.Hq, d.Sq})});
    MultiSpec s;
    s.op = TGL_OP_ATTENTION_BACKWARD;
    s.params = pb;
    // o and lse as inputs (empty ones: any empty view).
    auto given = [&](tgl_dtype dt, const Shape& shape, const std::vector<double>& vals) {
        return numel(shape) > 0 ? input_values(dt, shape, vals) : rand_in(dt, contiguous(shape), rng, 0, 1);
    };
    s.inputs = {fin[0], fin[1], fin[2], given(c.dt, {d.B, d.Hq, d.Sq, d.Dv}, fo[0]),
                rand_in(c.dt, view4({d.B, d.Hq, d.Sq, d.Dv}, c.in_lay, c.dt, rng, true), rng, -1, 1),
                given(TGL_DTYPE_F32, {d.B, d.Hq, d.Sq}, fo[1]), fin[3]};
    s.outputs = {out_of(c.dt, view4({d.B, d.Hq, d.Sq, d.D}, c.out_lay, c.dt, rng, false)),
                 out_of(c.dt, view4({d.B, d.Hkv, d.Skv, d.D}, c.out_lay, c.dt, rng, false)),
                 out_of(c.dt, view4({d.B, d.Hkv, d.Skv, d.Dv}, c.out_lay, c.dt, rng, false))};
    s.tolerance = {tol::kMatmul, tol::kMatmul, tol::kMatmul};
    s.what = describe(c, "attention_backward");
    check(s);
}

FwdCase plain(tgl_dtype dt, Dims d, bool causal = false) {
    FwdCase c;
    c.dt = dt;
    c.d = d;
    c.causal = causal;
    return c;
}

TEST_F(AttentionDiff, Basic) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16}) {
        check_forward(plain(dt, {2, 3, 3, 5, 7, 16, 16}), rng_);
        FwdCase c = plain(dt, {1, 2, 2, 1, 1, 1, 1});
        c.lse = false;
        check_forward(c, rng_);
        c = plain(dt, {1, 1, 1, 17, 3, 8, 8});
        c.scale = -0.7f;
        check_forward(c, rng_);
    }
}

TEST_F(AttentionDiff, CausalUnequalLengths) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (auto sq_skv : {std::make_pair(13, 37), std::make_pair(37, 13), std::make_pair(29, 29), std::make_pair(1, 9)}) {
            FwdCase c = plain(dt, {1, 2, 1, sq_skv.first, sq_skv.second, 64, 64}, true);
            check_forward(c, rng_);
        }
}

TEST_F(AttentionDiff, GroupedQuery) {
    FwdCase c = plain(TGL_DTYPE_F32, {1, 8, 1, 9, 33, 32, 32});
    check_forward(c, rng_);
    c = plain(TGL_DTYPE_F16, {2, 8, 2, 5, 19, 24, 24}, true);
    check_forward(c, rng_);
}

TEST_F(AttentionDiff, Masks) {
    const Dims d{2, 3, 3, 6, 11, 16, 16};
    const std::vector<Shape> shapes = {{6, 11}, {1, 3, 1, 11}, {2, 1, 6, 11}, {11}, {2, 3, 6, 11}, {3, 6, 1}};
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (const Shape& ms : shapes) {
            FwdCase c = plain(dt, d);
            c.has_mask = true;
            c.mask_shape = ms;
            c.p_inf = 0.2;
            c.full_rows = ms.back() == 11;  // rows of keys entirely -inf
            c.causal = rng_.chance(0.3);
            check_forward(c, rng_);
        }
}

TEST_F(AttentionDiff, BoolMasks) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (const Shape& ms : std::vector<Shape>{{5, 9}, {2, 1, 1, 9}, {2, 4, 5, 9}}) {
            FwdCase c = plain(dt, {2, 4, 2, 5, 9, 16, 16});
            c.has_mask = true;
            c.bool_mask = true;
            c.mask_shape = ms;
            c.p_inf = 0.4;
            check_forward(c, rng_);
            if (dt == TGL_DTYPE_F32) check_backward(c, rng_);
        }
}

TEST_F(AttentionDiff, HeadDims) {
    for (auto dd : {std::make_pair(64, 64), std::make_pair(80, 80), std::make_pair(80, 48), std::make_pair(128, 128)}) {
        FwdCase c = plain(TGL_DTYPE_F32, {1, 2, 1, 23, 41, dd.first, dd.second});
        c.causal = dd.first == 80;
        check_forward(c, rng_);
    }
    FwdCase c = plain(TGL_DTYPE_F16, {1, 1, 1, 9, 20, 256, 256});
    check_forward(c, rng_);
}

TEST_F(AttentionDiff, DecodeLongKv) {
    FwdCase c = plain(TGL_DTYPE_F32, {1, 4, 2, 1, 4099, 64, 64});
    check_forward(c, rng_);
    c = plain(TGL_DTYPE_F16, {2, 2, 2, 1, 1500, 32, 32});
    c.has_mask = true;
    c.mask_shape = {2, 1, 1, 1500};
    c.p_inf = 0.3;
    check_forward(c, rng_);
    c = plain(TGL_DTYPE_F32, {1, 2, 2, 3, 2000, 16, 16});  // causal decode of 3 tokens
    c.causal = true;
    check_forward(c, rng_);
}

// One invocation's walk over 16,384 keys within the loop budget (llvmpipe cuts an invocation's
// loops short after 65,535 passes): 512 kv heads fill the grid, so a2b0225 split no key range and
// each invocation walked all 16,384 keys (about 5 passes a key at D 1).
// GQA 2:1; D 1 keeps K and V small (32 MiB each) and the case short.
TEST_F(AttentionDiff, LoopBudgetLongKv) {
    check_forward(plain(TGL_DTYPE_F32, {1, 1024, 512, 1, 16384, 1, 1}), rng_);
}

// attention_backward's invocations walk every key tile (dq) or row tile (dk, dv) of their kv head:
// past the loop budget (131,072 keys for 32 query rows, 40 to 70 passes per tile of 32 keys at D 1;
// 2 x 65,536 rows of a GQA 2:1 head over 32 keys) a2b0225 returned TGL_OK with a dq cut short on
// llvmpipe, and the plugin then refused the shape; where loops are limited the walk now runs in
// chunks of tiles, a dispatch each, the f32 accumulators carried between them.
TEST_F(AttentionDiff, LoopBudgetBackward) {
    check_backward(plain(TGL_DTYPE_F32, {1, 1, 1, 32, 131072, 1, 1}), rng_);
    check_backward(plain(TGL_DTYPE_F32, {1, 2, 1, 65536, 32, 2, 2}), rng_);
}

TEST_F(AttentionDiff, LongSequence) {
    FwdCase c = plain(TGL_DTYPE_F32, {1, 1, 1, 1031, 1031, 64, 64}, true);
    check_forward(c, rng_);
}

TEST_F(AttentionDiff, Layouts) {
    // 14 rows per kv head: PASS_FWD; 40 rows, causal: PASS_FLASH (vector access through the
    // (B, S, H, D) views, scalar through the random ones)
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16})
        for (Dims d : {Dims{2, 4, 2, 7, 13, 16, 16}, Dims{2, 2, 1, 40, 50, 24, 24}}) {
            FwdCase c = plain(dt, d, d.Sq == 40);
            c.in_lay = Lay::Bshd;
            c.out_lay = Lay::Bshd;
            check_forward(c, rng_);
            c.in_lay = Lay::Random;
            c.out_lay = Lay::Random;
            c.has_mask = true;
            c.mask_shape = {d.Sq, d.Skv};
            check_forward(c, rng_);
        }
}

TEST_F(AttentionDiff, Empty) {
    check_forward(plain(TGL_DTYPE_F32, {0, 2, 1, 5, 7, 8, 8}), rng_);
    FwdCase c = plain(TGL_DTYPE_F32, {1, 2, 1, 5, 0, 8, 8});  // no keys: o = 0, lse = -inf
    check_forward(c, rng_);
    c.dt = TGL_DTYPE_F16;
    check_backward(c, rng_);
    check_backward(plain(TGL_DTYPE_F32, {1, 2, 2, 0, 4, 8, 8}), rng_);  // no queries: dk = dv = 0
}

// The FlashAttention-2 forward (PASS_FLASH, 16+ rows of a kv head): lengths at and around its
// tiles (16, 32, 64 rows; 16, 32, 64 keys), primes, bottom-right causal with Sq != Skv both ways
// (a tile's rows then start past some keys or see none), head dims with and without padding (the
// scalar path where D or Dv is not a multiple of 4), f16, GQA tiles spanning heads, masks, lse or
// none (layouts: AttentionDiff.Layouts).
// Loop TGL_TUNE_ATTENTION over the tiles of attention_kernels.cpp to test each.
TEST_F(AttentionDiff, FlashBlockEdges) {
    // (D = 32: the default tiles of 64 rows fit llvmpipe's 32 KiB of shared memory)
    for (int64_t s : {63, 64, 65, 97})
        check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, s, s, 32, 32}, true), rng_);
    check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 65, 65, 64, 64}, true), rng_);
    check_forward(plain(TGL_DTYPE_F32, {1, 2, 2, 31, 33, 64, 64}), rng_);
    check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 131, 67, 32, 32}, true), rng_);  // first rows see no key
    check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 67, 131, 32, 32}, true), rng_);
    check_forward(plain(TGL_DTYPE_F32, {2, 1, 1, 17, 129, 16, 16}, true), rng_);
    for (Lay lay : {Lay::Aligned, Lay::Contiguous}) {  // f16 (and bf16) through vector and scalar access
        FwdCase c = plain(TGL_DTYPE_F16, {1, 2, 1, 65, 65, lay == Lay::Aligned ? 32 : 64, 64}, true);
        c.in_lay = c.out_lay = lay;
        check_forward(c, rng_);
        c.dt = TGL_DTYPE_BF16;
        check_forward(c, rng_);
        c = plain(TGL_DTYPE_F16, {1, 1, 1, 33, 40, 40, 24});
        c.in_lay = c.out_lay = lay;
        check_forward(c, rng_);
    }
}

TEST_F(AttentionDiff, FlashHeadDims) {
    for (auto dd : {std::make_pair(128, 128), std::make_pair(80, 48), std::make_pair(33, 17), std::make_pair(6, 10)}) {
        FwdCase c = plain(TGL_DTYPE_F32, {1, 1, 1, 66, 70, dd.first, dd.second}, true);
        c.scale = dd.first == 33 ? 0.3f : 0.0f;
        check_forward(c, rng_);
    }
    FwdCase c = plain(TGL_DTYPE_F16, {1, 1, 1, 20, 36, 256, 256});
    c.in_lay = c.out_lay = Lay::Aligned;
    check_forward(c, rng_);
}

TEST_F(AttentionDiff, FlashFeatures) {
    FwdCase c = plain(TGL_DTYPE_F32, {2, 8, 2, 23, 71, 32, 32}, true);  // GQA 4:1: tiles span heads
    check_forward(c, rng_);
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        c = plain(dt, {1, 2, 2, 70, 45, 16, 16});
        c.has_mask = true;
        c.mask_shape = {70, 45};
        c.p_inf = 0.2;
        c.full_rows = true;
        c.causal = dt == TGL_DTYPE_F16;
        check_forward(c, rng_);
        c.bool_mask = true;
        c.mask_shape = {1, 2, 70, 1};
        check_forward(c, rng_);
        c.lse = false;
        c.has_mask = false;
        check_forward(c, rng_);
    }
    c = plain(TGL_DTYPE_F32, {1, 1, 1, 20, 20, 8, 8}, true);
    c.nan_q = true;
    check_forward(c, rng_);
}

// ----- ABI 1.3 options: each through PASS_FLASH (16+ rows per kv head), PASS_FWD (few rows) and
// the split PASS_FWD + PASS_COMBINE of decoding (Sq = 1 or 3 against long keys), and combined.

Options opt_of(uint32_t causal, float softcap, float max_bias, uint32_t window, bool sinks, bool half_kv = false) {
    return Options{causal, softcap, max_bias, window, sinks, half_kv};
}

// The option sets every path is run with: each alone, then combinations.
std::vector<Options> option_sets() {
    return {opt_of(2, 0, 0, 0, false),          opt_of(0, 0.8f, 0, 0, false),     opt_of(0, 0, 8, 0, false),
            opt_of(1, 0, 0, 7, false),          opt_of(0, 0, 0, 5, false),        opt_of(0, 0, 0, 0, true),
            opt_of(0, 0, 0, 0, false, true),    opt_of(2, 0, 0, 4, false),        opt_of(1, 2.0f, 6, 9, true),
            opt_of(2, 1.0f, 8, 0, true, true),  opt_of(0, 3.0f, 4, 6, true, true)};
}

void check_options(Dims d, tgl_dtype dt, Rng& rng, bool backward, Lay lay = Lay::Contiguous, Device* subject = nullptr) {
    for (const Options& o : option_sets()) {
        if (o.half_kv && dt != TGL_DTYPE_F32) continue;
        FwdCase c = plain(dt, d);
        c.opt = o;
        c.in_lay = c.out_lay = lay;
        check_forward(c, rng, subject);
        if (backward && !o.half_kv) check_backward(c, rng);
    }
}

TEST_F(AttentionDiff, OptionsFlash) {  // 40 and 80 rows per kv head (GQA 2:1), keys past a few tiles
    check_options({1, 2, 1, 40, 53, 16, 16}, TGL_DTYPE_F32, rng_, false);
    check_options({1, 2, 2, 70, 45, 32, 24}, TGL_DTYPE_F16, rng_, false);
    check_options({2, 2, 1, 19, 19, 8, 8}, TGL_DTYPE_F32, rng_, false, Lay::Bshd);  // vector access
    FwdCase c = plain(TGL_DTYPE_F32, {1, 2, 1, 40, 53, 16, 16});  // seven storage blocks: q k v o mask lse sinks
    c.opt = opt_of(1, 1.0f, 8, 9, true);
    c.has_mask = true;
    c.mask_shape = {40, 53};
    c.p_inf = 0.1;
    check_forward(c, rng_);
}

// PASS_FLASH with KMAJ (TGL_TUNE_ATTENTION ..._km: channel-major q and K tiles, scores as outer
// products, an invocation's rows contiguous) and SG (_sg: subgroup shuffles for the row maxima and
// sums, p^T apart; where the device has subgroups): block edges, Sq != Skv under both alignments,
// GQA, padded head dims, f16/bf16 through vector and scalar access, masks and every option. The
// 64-row tile fits llvmpipe's 32 KiB at D <= 32; the 16-row one fits everywhere, the minimum
// limits (16 KiB, 128 invocations, 4 storage blocks: the cases without lse) too. (TGL_GLES_DEBUG=1
// prints the tile each op ran.)
TEST_F(AttentionDiff, FlashChannelMajor) {
    Device* big = &subject_device_with("TGL_TUNE_ATTENTION", "bq64_bk32_tm4_tx8_km_sg");
    Device* small = &subject_device_with("TGL_TUNE_ATTENTION", "bq16_bk16_tm4_tx4_km");
    for (Device* d : {big, small}) {
        SCOPED_TRACE(d == big ? "TGL_TUNE_ATTENTION=bq64_bk32_tm4_tx8_km_sg" : "TGL_TUNE_ATTENTION=bq16_bk16_tm4_tx4_km");
        check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 97, 97, 32, 32}, true), rng_, d);
        check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 131, 67, 32, 32}, true), rng_, d);  // first rows see no key
        FwdCase f16 = plain(TGL_DTYPE_F16, {1, 2, 1, 65, 65, 32, 32}, true);
        f16.in_lay = f16.out_lay = Lay::Aligned;
        check_forward(f16, rng_, d);
        FwdCase c = plain(TGL_DTYPE_F32, {1, 2, 1, 40, 53, 16, 16});  // mask, lse, sinks, ALiBi, softcap, window
        c.opt = opt_of(1, 1.0f, 8, 9, true);
        c.has_mask = true;
        c.mask_shape = {40, 53};
        c.p_inf = 0.1;
        check_forward(c, rng_, d);
    }
    check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 63, 63, 32, 32}, true), rng_, small);
    check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 67, 131, 32, 32}, true), rng_, small);
    FwdCase tl = plain(TGL_DTYPE_F32, {1, 1, 1, 67, 131, 16, 16});
    tl.opt.causal = 2;  // top-left
    check_forward(tl, rng_, small);
    check_forward(plain(TGL_DTYPE_F32, {1, 4, 1, 21, 40, 16, 16}, true), rng_, small);  // GQA tiles spanning heads
    check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 40, 36, 33, 17}, true), rng_, small);  // padded head dims
    FwdCase bf = plain(TGL_DTYPE_BF16, {1, 2, 1, 33, 33, 32, 32}, true);  // scalar access
    check_forward(bf, rng_, small);
    check_options({1, 2, 1, 40, 53, 16, 16}, TGL_DTYPE_F32, rng_, false, Lay::Contiguous, small);
    // QGLOBAL (_qg: q read from global memory, f32 with vector access): edges, GQA, every option.
    Device* qg = &subject_device_with("TGL_TUNE_ATTENTION", "bq64_bk32_tm4_tx8_qg");
    SCOPED_TRACE("TGL_TUNE_ATTENTION=bq64_bk32_tm4_tx8_qg");
    for (int64_t s : {65, 97}) check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, s, s, 32, 32}, true), rng_, qg);
    check_forward(plain(TGL_DTYPE_F32, {1, 1, 1, 131, 67, 32, 32}, true), rng_, qg);
    check_forward(plain(TGL_DTYPE_F32, {1, 4, 1, 21, 40, 16, 16}, true), rng_, qg);
    check_options({1, 2, 1, 40, 53, 16, 16}, TGL_DTYPE_F32, rng_, false, Lay::Aligned, qg);
    // Without lse (q, k, v, o: the 4 storage blocks of the minimum limits, where PASS_FLASH then runs).
    for (FwdCase c : {plain(TGL_DTYPE_F32, {1, 2, 1, 45, 45, 32, 32}, true), plain(TGL_DTYPE_F16, {1, 4, 2, 37, 50, 16, 16}, true)}) {
        c.lse = false;
        check_forward(c, rng_, small);
    }
}

TEST_F(AttentionDiff, OptionsTiled) {  // PASS_FWD: a few rows, odd sizes
    check_options({2, 3, 3, 5, 13, 7, 5}, TGL_DTYPE_F32, rng_, false);
    check_options({1, 4, 2, 3, 9, 16, 16}, TGL_DTYPE_F16, rng_, false, Lay::Random);
}

TEST_F(AttentionDiff, OptionsDecode) {  // split PASS_FWD + PASS_COMBINE
    check_options({1, 4, 2, 1, 2100, 32, 32}, TGL_DTYPE_F32, rng_, false);
    FwdCase c = plain(TGL_DTYPE_F32, {1, 2, 1, 3, 1500, 16, 16});
    c.opt = opt_of(1, 0, 8, 700, true, true);  // (a window past 4 key tiles: still split)
    c.has_mask = true;  // an f16 mask under f32 q
    c.mask_shape = {1, 2, 3, 1500};
    c.p_inf = 0.1;
    check_forward(c, rng_);
    c = plain(TGL_DTYPE_F16, {2, 2, 2, 1, 1200, 24, 24});
    c.opt = opt_of(0, 5.0f, 0, 64, true);  // a window centred on the last key: Skv - 64 .. Skv - 1 and none after
    check_forward(c, rng_);
}

TEST_F(AttentionDiff, OptionsBackward) {
    check_options({1, 2, 1, 6, 11, 16, 16}, TGL_DTYPE_F32, rng_, true);
    check_options({1, 2, 2, 37, 41, 8, 12}, TGL_DTYPE_F32, rng_, true);
    FwdCase c = plain(TGL_DTYPE_F16, {1, 4, 2, 9, 17, 16, 16});
    c.opt = opt_of(2, 1.5f, 8, 5, false);
    c.has_mask = true;
    c.mask_shape = {9, 17};
    c.p_inf = 0.2;
    check_backward(c, rng_);
}

TEST_F(AttentionDiff, OptionsEdges) {
    // Empty batch, no keys (with sinks: lse = the sink), no queries; a window of 1; Sq > Skv with
    // the top-left alignment (rows past the keys see all of them).
    for (Dims d : {Dims{0, 2, 1, 5, 7, 8, 8}, Dims{1, 2, 1, 5, 0, 8, 8}, Dims{1, 2, 2, 0, 4, 8, 8}}) {
        FwdCase c = plain(TGL_DTYPE_F32, d);
        c.opt = opt_of(2, 1.0f, 8, 3, true);
        check_forward(c, rng_);
    }
    FwdCase c = plain(TGL_DTYPE_F32, {1, 1, 1, 33, 33, 4, 4});
    c.opt = opt_of(0, 0, 0, 1, false);
    check_forward(c, rng_);
    c = plain(TGL_DTYPE_F32, {1, 2, 1, 37, 13, 8, 8});
    c.opt = opt_of(2, 0, 4, 0, true);
    check_forward(c, rng_);
    check_backward(c, rng_);
}

TEST_F(AttentionDiff, FlashManyWorkgroups) {
    check_forward(plain(TGL_DTYPE_F32, {65600, 1, 1, 16, 2, 4, 4}), rng_);
}

TEST_F(AttentionDiff, ManyWorkgroups) {
    check_forward(plain(TGL_DTYPE_F32, {70000, 1, 1, 1, 2, 2, 2}), rng_);
}

TEST_F(AttentionDiff, ManyWorkgroupsBackward) {
    check_backward(plain(TGL_DTYPE_F32, {70000, 1, 1, 1, 2, 2, 2}), rng_);
}

TEST_F(AttentionDiff, Backward) {
    check_backward(plain(TGL_DTYPE_F32, {2, 2, 2, 5, 7, 16, 16}), rng_);
    FwdCase c = plain(TGL_DTYPE_F32, {1, 2, 1, 13, 37, 64, 64}, true);
    check_backward(c, rng_);
    c = plain(TGL_DTYPE_F32, {1, 2, 1, 37, 13, 32, 32}, true);
    check_backward(c, rng_);
    c = plain(TGL_DTYPE_F32, {1, 8, 2, 6, 21, 16, 16});  // GQA 4:1 with a mask and dead rows
    c.has_mask = true;
    c.mask_shape = {1, 8, 6, 21};
    c.p_inf = 0.2;
    c.full_rows = true;
    check_backward(c, rng_);
    c = plain(TGL_DTYPE_F16, {1, 2, 2, 9, 17, 80, 48});
    c.in_lay = Lay::Bshd;
    c.out_lay = Lay::Random;
    check_backward(c, rng_);
    c = plain(TGL_DTYPE_F32, {1, 2, 1, 5, 7, 256, 256}, true);  // the largest head dim
    check_backward(c, rng_);
    c = plain(TGL_DTYPE_F16, {2, 2, 2, 7, 12, 16, 16});  // a mask broadcast over batch and heads
    c.has_mask = true;
    c.mask_shape = {7, 12};
    c.p_inf = 0.3;
    check_backward(c, rng_);
    c = plain(TGL_DTYPE_F32, {1, 1, 1, 70, 90, 128, 128}, true);
    c.scale = 0.2f;
    check_backward(c, rng_);
}

}  // namespace
}  // namespace diff
