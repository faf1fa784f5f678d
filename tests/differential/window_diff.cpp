// Operands larger than one SSBO window (GL_MAX_SHADER_STORAGE_BLOCK_SIZE: 128 MiB on llvmpipe and
// at the OpenGL ES 3.1 minimum): the GLES plugin runs such an op in pieces whose operands each fit
// one window (backends/gles/window_split.cpp). WindowDiff runs every family the mechanism serves
// on a subject device opened with TGL_GLES_TEST_FAULT=max_window=4096 (windows of 4 KiB, so that
// small tensors are cut into many pieces, along every kind of axis), against the CPU reference;
// exact where the op is exact. WindowBigDiff keeps the true cases (operands of 128 to 256
// MiB against the real limit); they take seconds on llvmpipe. WindowRefused: ops that cannot be
// cut fail with RESOURCE_EXHAUSTED saying why, and write nothing.
#include "diff.h"

#include <cmath>
#include <cstdlib>
#include <optional>

namespace diff {
namespace {

// The subject plugin's device with 4 KiB windows (the hook is read at device_open; other plugins
// ignore it).
Device& windowed_device() { return subject_device_with("TGL_GLES_TEST_FAULT", "max_window=4096"); }

InputArg floats(const Shape& shape, Kind k, Rng& rng, double lo = -2, double hi = 2, tgl_dtype dt = F32) {
    InputArg a;
    a.dtype = dt;
    a.view = view_of(shape, k, rng, true, dt);
    a.storage = random_storage(dt, a.view.storage, rng, float_values(dt, lo, hi));
    return a;
}

// f16 values in [lo, hi], contiguous from element 0 (floats() may start an f16 view inside a word:
// a graph replayed over fresh inputs needs the same storage each time).
InputArg halves(const Shape& shape, Rng& rng, double lo = -2, double hi = 2) {
    InputArg a;
    a.dtype = TGL_DTYPE_F16;
    a.view = contiguous(shape);
    a.storage = random_storage(TGL_DTYPE_F16, a.view.storage, rng, float_values(TGL_DTYPE_F16, lo, hi));
    return a;
}

InputArg ints(const Shape& shape, tgl_dtype dt, int64_t lo, int64_t hi, Rng& rng) {
    InputArg a;
    a.dtype = dt;
    a.view = contiguous(shape);
    a.storage = random_storage(dt, a.view.storage, rng, int_values(dt, lo, hi));
    return a;
}

// NEOX rope, theta 10000, no scaling.
tgl_rope_params neox_rope() {
    tgl_rope_params p{};
    p.struct_size = sizeof p;
    p.mode = TGL_ROPE_NEOX;
    p.theta_base = 10000;
    p.factor = 1;
    p.attn_factor = 1;
    return p;
}

InputArg bools(const Shape& shape, Rng& rng) {
    InputArg a;
    a.dtype = TGL_DTYPE_BOOL;
    a.view = contiguous(shape);
    a.storage = random_storage(TGL_DTYPE_BOOL, a.view.storage, rng, bool_values(0.02));
    return a;
}

MultiSpec spec(tgl_op op, std::vector<uint8_t> params, std::vector<InputArg> ins, std::vector<OutputArg> outs,
               CompareMode mode, double tol, const std::string& what) {
    MultiSpec s;
    s.op = op;
    s.params = std::move(params);
    s.inputs = std::move(ins);
    s.outputs = std::move(outs);
    s.mode.assign(s.outputs.size(), mode);
    s.tolerance.assign(s.outputs.size(), tol);
    s.what = what;
    return s;
}

// tril / triu of one (rows, cols) f32 matrix with the given layout and diagonal.
MultiSpec diagonal_op(tgl_op op, std::vector<int64_t> shape, Kind kind, int32_t diagonal, Rng& rng) {
    tgl_diagonal_params p{sizeof p, diagonal};
    return spec(op, param_bytes(p), {floats(shape, kind, rng)}, {output_of(F32, shape)}, CompareMode::ExactBits, 0,
                std::string(op == TGL_OP_TRIL ? "tril" : "triu") + " of (" + std::to_string(shape[0]) + ", " +
                    std::to_string(shape[1]) + "), diagonal " + std::to_string(diagonal));
}

std::vector<uint8_t> reduce_params(std::vector<int> axes, bool keepdims = false) {
    tgl_reduce_params p{};
    p.struct_size = sizeof p;
    p.keepdims = keepdims;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    return param_bytes(p);
}

std::vector<uint8_t> norm_params(std::vector<int> axes, float ord) {
    tgl_vector_norm_params p{};
    p.struct_size = sizeof p;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    p.ord = ord;
    return param_bytes(p);
}

std::vector<uint8_t> matmul_params(bool ta, bool tb, float alpha, float beta) {
    tgl_matmul_params p{};
    p.struct_size = sizeof p;
    p.transpose_a = ta;
    p.transpose_b = tb;
    p.alpha = alpha;
    p.beta = beta;
    return param_bytes(p);
}

MultiSpec reduce(tgl_op op, const Shape& x, std::vector<int> axes, const Shape& y, Rng& rng, double lo = -2,
                 double hi = 2, bool keepdims = false, Kind k = Kind::Contiguous) {
    const bool exact = op == TGL_OP_MAX || op == TGL_OP_MIN;
    return spec(op, reduce_params(axes, keepdims), {floats(x, k, rng, lo, hi)}, {output_of(F32, y)},
                exact ? CompareMode::ExactBits : CompareMode::Nmse, tol::kReduction,
                "reduction " + std::to_string(op) + " of " + shape_name(x));
}

// var or std over `axes` with Bessel's correction (or `correction`), of x in [lo, hi], in dtype dt.
MultiSpec moments(tgl_op op, const Shape& x, std::vector<int> axes, const Shape& y, Rng& rng, double lo = -2, double hi = 2,
                  float correction = 1, bool keepdims = false, tgl_dtype dt = F32, Kind k = Kind::Stepped) {
    tgl_var_params p{};
    p.struct_size = sizeof p;
    p.keepdims = keepdims;
    p.n_axes = uint32_t(axes.size());
    for (size_t i = 0; i < axes.size(); ++i) p.axes[i] = axes[i];
    p.correction = correction;
    return spec(op, param_bytes(p), {floats(x, k, rng, lo, hi, dt)}, {output_of(dt, y)}, CompareMode::Nmse,
                tol::kReduction, std::string(op == TGL_OP_VAR ? "var" : "std") + " of " + shape_name(x) + " in [" +
                                     std::to_string(lo) + ", " + std::to_string(hi) + "], correction " + std::to_string(correction));
}

// A reduction of f16 (or bf16) x into y of its dtype (f32 inside, rounded once).
MultiSpec reduce_f16(tgl_op op, const Shape& x, std::vector<int> axes, const Shape& y, Rng& rng, double lo = -2, double hi = 2,
                     tgl_dtype dt = TGL_DTYPE_F16) {
    return spec(op, reduce_params(axes), {floats(x, Kind::Contiguous, rng, lo, hi, dt)}, {output_of(dt, y)}, CompareMode::Nmse,
                tol::of_store(dt, tol::kReduction), dtype_name(dt) + " reduction " + std::to_string(op) + " of " + shape_name(x));
}

// matmul with B of dtype b_dt (f16/bf16: mixed weights under the f32 A and C).
MultiSpec matmul(const Shape& a, const Shape& b, const Shape& c, Rng& rng, bool ta = false, bool tb = false,
                 float alpha = 1, float beta = 0, tgl_dtype b_dt = F32) {
    OutputArg y = output_of(F32, c);
    if (beta != 0) {
        int64_t n = 1;
        for (int64_t d : c) n *= d;
        for (int64_t i = 0; i < n; ++i) y.init.push_back(rng.uniformf(-1, 1));
    }
    return spec(TGL_OP_MATMUL, matmul_params(ta, tb, alpha, beta), {floats(a, Kind::Contiguous, rng), floats(b, Kind::Contiguous, rng, -2, 2, b_dt)},
                {y}, CompareMode::Nmse, tol::kMatmul, "matmul " + shape_name(a) + " @ " + shape_name(b) + " " + dtype_name(b_dt));
}

MultiSpec linear(const Shape& x, int64_t n, bool bias, Rng& rng) {
    const int64_t k = x.back();
    Shape y = x;
    y.back() = n;
    std::vector<InputArg> ins = {floats(x, Kind::Contiguous, rng), floats({n, k}, Kind::Contiguous, rng)};
    ins.push_back(bias ? floats({n}, Kind::Contiguous, rng) : absent_input());
    tgl_linear_params p{sizeof p, TGL_ACTIVATION_NONE};
    return spec(TGL_OP_LINEAR, param_bytes(p), ins, {output_of(F32, y)}, CompareMode::Nmse, tol::kMatmul,
                "linear " + shape_name(x) + " by W (" + std::to_string(n) + ", " + std::to_string(k) + ")");
}

// grouped_linear of x (T, K) by W (E, N, K) (experts drawn at random), with a bias (E, N) when asked.
MultiSpec grouped_linear(int64_t T, int64_t E, int64_t N, int64_t K, bool bias, Rng& rng) {
    tgl_linear_params p{sizeof p, TGL_ACTIVATION_NONE};
    return spec(TGL_OP_GROUPED_LINEAR, param_bytes(p),
                {floats({T, K}, Kind::Contiguous, rng), floats({E, N, K}, Kind::Contiguous, rng),
                 ints({T}, TGL_DTYPE_I32, 0, E - 1, rng), bias ? floats({E, N}, Kind::Contiguous, rng) : absent_input()},
                {output_of(F32, {T, N})}, CompareMode::Nmse, tol::kMatmul,
                "grouped_linear x (" + std::to_string(T) + ", " + std::to_string(K) + ") by W " + shape_name({E, N, K}) +
                    (bias ? ", bias" : ""));
}

// linear_qkv of x (..., K) into outputs of nq, nk, nv columns, W (nq + nk + nv, K), with a bias.
MultiSpec linear_qkv(const Shape& x, int64_t nq, int64_t nk, int64_t nv, Rng& rng) {
    const int64_t k = x.back();
    std::vector<OutputArg> outs;
    for (int64_t n : {nq, nk, nv}) {
        Shape y = x;
        y.back() = n;
        outs.push_back(output_of(F32, y));
    }
    tgl_linear_params p{sizeof p, TGL_ACTIVATION_GELU};
    return spec(TGL_OP_LINEAR_QKV, param_bytes(p),
                {floats(x, Kind::Contiguous, rng), floats({nq + nk + nv, k}, Kind::Contiguous, rng),
                 floats({nq + nk + nv}, Kind::Contiguous, rng)},
                outs, CompareMode::Nmse, tol::kMatmul,
                "linear_qkv " + shape_name(x) + " into " + std::to_string(nq) + " + " + std::to_string(nk) + " + " +
                    std::to_string(nv) + ", gelu");
}

// scatter or scatter_add into x along `axis` from src by an index of `index` shape whose values
// lie in [0, hi] (hi < x's axis: many duplicates, some of y untouched).
MultiSpec scatter(tgl_op op, const Shape& x, int axis, const Shape& index, const Shape& src, int64_t hi, Rng& rng,
                  tgl_dtype dt = F32, Kind src_kind = Kind::Stepped) {
    InputArg xs = dt == TGL_DTYPE_I32 ? ints(x, dt, -1000, 1000, rng) : floats(x, Kind::Contiguous, rng, -2, 2, dt);
    InputArg ss = dt == TGL_DTYPE_I32 ? ints(src, dt, -1000, 1000, rng) : floats(src, src_kind, rng, -2, 2, dt);
    tgl_axis_params p{sizeof p, axis, 0};
    const bool exact = op == TGL_OP_SCATTER || dt == TGL_DTYPE_I32;
    return spec(op, param_bytes(p), {xs, ints(index, TGL_DTYPE_I32, 0, hi, rng), ss}, {output_of(dt, x)},
                exact ? CompareMode::ExactBits : CompareMode::Nmse, exact ? 0 : tol::kReduction,
                std::string(op == TGL_OP_SCATTER ? "scatter" : "scatter_add") + " into " + shape_name(x) + " along axis " +
                    std::to_string(axis) + " by " + shape_name(index) + " from " + shape_name(src));
}

// set_rows into x along `axis` from K rows of src at indices in [0, hi] (duplicates where K > hi);
// out of place (y = x copied in each piece's window); exact bits.
MultiSpec set_rows(const Shape& x, int axis, int64_t K, int64_t hi, Rng& rng) {
    Shape src = x;
    src[size_t(axis)] = K;
    tgl_axis_params p{sizeof p, axis, 0};
    return spec(TGL_OP_SET_ROWS, param_bytes(p),
                {floats(x, Kind::Contiguous, rng), ints({K}, TGL_DTYPE_I32, 0, hi, rng), floats(src, Kind::Stepped, rng)},
                {output_of(F32, x)}, CompareMode::ExactBits, 0,
                "set_rows into " + shape_name(x) + " along axis " + std::to_string(axis) + ", " + std::to_string(K) + " rows");
}

// gather (index of y's shape) or index_select (1-D index) along `axis`; exact bits.
MultiSpec indexing(tgl_op op, const Shape& x, int axis, const Shape& index, Rng& rng, tgl_dtype dt = F32) {
    InputArg table;
    table.dtype = dt;
    table.view = contiguous(x);
    table.storage = random_storage(dt, table.view.storage, rng,
                                   dt == TGL_DTYPE_U8 ? int_values(dt, 0, 255) : float_values(dt, -100, 100));
    InputArg idx;
    idx.dtype = TGL_DTYPE_I32;
    idx.view = contiguous(index);
    idx.storage = random_storage(TGL_DTYPE_I32, idx.view.storage, rng, int_values(TGL_DTYPE_I32, 0, x[size_t(axis)] - 1));
    Shape y = index;
    if (op == TGL_OP_INDEX_SELECT) {
        y = x;
        y[size_t(axis)] = index[0];
    }
    tgl_axis_params p{sizeof p, axis, 0};
    return spec(op, param_bytes(p), {table, idx}, {output_of(dt, y)}, CompareMode::ExactBits, 0,
                std::string(op == TGL_OP_GATHER ? "gather" : "index_select") + " from " + shape_name(x) + " by " +
                    shape_name(index) + " along axis " + std::to_string(axis));
}

// A layout op of x (one input unless `more`) into outputs of `ys`; exact bits.
MultiSpec layout(tgl_op op, std::vector<uint8_t> params, std::vector<InputArg> ins, std::vector<Shape> ys,
                 const std::string& what) {
    std::vector<OutputArg> outs;
    for (const Shape& y : ys) outs.push_back(output_of(F32, y));
    return spec(op, std::move(params), std::move(ins), std::move(outs), CompareMode::ExactBits, 0, what);
}

std::vector<uint8_t> conv_params(uint32_t layout = TGL_CONV_LAYOUT_CHANNELS_FIRST, int stride = 1, int pad = 0,
                                 tgl_activation activation = TGL_ACTIVATION_NONE, uint32_t groups = 1) {
    tgl_conv_params p{};
    p.struct_size = sizeof p;
    p.layout = layout;
    p.groups = groups;
    p.activation = activation;
    for (int d = 0; d < 3; ++d) p.stride[d] = stride, p.dilation[d] = 1, p.pad_begin[d] = p.pad_end[d] = pad;
    return param_bytes(p);
}

MultiSpec conv(tgl_op op, std::vector<uint8_t> params, std::vector<InputArg> ins, const Shape& y, const std::string& what,
               tgl_dtype dt = F32) {
    return spec(op, std::move(params), std::move(ins), {output_of(dt, y)}, CompareMode::Nmse, tol::kMatmul, what);
}

std::vector<uint8_t> pool_params(int kernel, int stride, int pad) {
    tgl_pool_params p{};
    p.struct_size = sizeof p;
    for (int d = 0; d < 3; ++d) p.kernel[d] = kernel, p.stride[d] = stride, p.pad_begin[d] = p.pad_end[d] = pad;
    return param_bytes(p);
}

// attention of q (B, Hq, Sq, D) over k, v (B, Hkv, Skv, D) (v with negative strides), with an
// additive (Sq, Skv) mask when asked, and lse. One head's k and v must fit a window: Skv * D small.
// With `opts` (ABI 1.3: causal 2, softcap, max_bias, window; its causal field wins) and sinks (a
// fifth input) when asked; else the four inputs of an ABI 1.1 host.
MultiSpec attention(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Skv, int64_t D, bool causal, bool mask,
                    Rng& rng, const tgl_attention_params* opts = nullptr, bool sinks = false) {
    tgl_attention_params p{sizeof p, causal ? 1u : 0u, 0.0f, 0, 0.0f, 0.0f, 0};
    if (opts) p = *opts;
    std::vector<InputArg> ins = {floats({B, Hq, Sq, D}, Kind::Contiguous, rng, -1.5, 1.5),
                                 floats({B, Hkv, Skv, D}, Kind::Contiguous, rng, -1.5, 1.5),
                                 floats({B, Hkv, Skv, D}, Kind::Negative, rng),
                                 mask ? floats({Sq, Skv}, Kind::Contiguous, rng) : absent_input()};
    if (opts) ins.push_back(sinks ? floats({Hq}, Kind::Contiguous, rng, -1, 2) : absent_input());
    return spec(TGL_OP_ATTENTION, param_bytes(p), ins, {output_of(F32, {B, Hq, Sq, D}), output_of(F32, {B, Hq, Sq})},
                CompareMode::Nmse, tol::kMatmul,
                std::string(p.causal ? "causal " + std::to_string(p.causal) + " " : "") + "attention q " +
                    shape_name({B, Hq, Sq, D}) + ", kv " + shape_name({B, Hkv, Skv, D}) + (mask ? ", mask (Sq, Skv)" : "") +
                    (p.window ? ", window " + std::to_string(p.window) : "") + (p.max_bias > 0 ? ", ALiBi" : "") +
                    (p.softcap > 0 ? ", softcap" : "") + (sinks ? ", sinks" : ""));
}
tgl_attention_params attention_opts(uint32_t causal, float softcap, float max_bias, uint32_t window) {
    return tgl_attention_params{sizeof(tgl_attention_params), causal, 0.0f, 0, softcap, max_bias, window};
}

// attention_backward of the same inputs, o and lse from the reference's forward, a random do.
MultiSpec attention_backward(int64_t B, int64_t Hq, int64_t Hkv, int64_t Sq, int64_t Skv, int64_t D, bool causal, Rng& rng) {
    const MultiSpec fwd = attention(B, Hq, Hkv, Sq, Skv, D, causal, false, rng);
    const std::vector<std::vector<double>> fo =
        run_op_values(shared_device(Role::Reference), TGL_OP_ATTENTION, fwd.params.data(), fwd.inputs,
                      {output_of(F32, {B, Hq, Sq, D}), output_of(F32, {B, Hq, Sq})});
    return spec(TGL_OP_ATTENTION_BACKWARD, fwd.params,
                {fwd.inputs[0], fwd.inputs[1], fwd.inputs[2], input_values(F32, {B, Hq, Sq, D}, fo[0]),
                 floats({B, Hq, Sq, D}, Kind::Contiguous, rng, -1, 1), input_values(F32, {B, Hq, Sq}, fo[1]), absent_input()},
                {output_of(F32, {B, Hq, Sq, D}), output_of(F32, {B, Hkv, Skv, D}), output_of(F32, {B, Hkv, Skv, D})},
                CompareMode::Nmse, tol::kMatmul, "attention_backward of " + fwd.what);
}

// f16 outputs of the Grad ops: at most one f16 ulp from the reference (grad_diff.cpp).
const double kTolF16 = 1.0 / (1 << 20);

// cross_entropy (or its backward, with a random dloss) of logits of `shape` (classes along dim 1)
// by targets in [0, C), ignore_index one of them (about 1 in C positions ignored; a random one
// unless given).
MultiSpec cross_entropy(tgl_op op, const Shape& logits, uint32_t reduction, float smoothing, Rng& r, tgl_dtype dt = F32,
                        Kind k = Kind::Contiguous, std::optional<int32_t> ignore_index = std::nullopt) {
    const int64_t C = logits[1];
    Shape ts = logits;
    ts.erase(ts.begin() + 1);
    const int32_t ignore = ignore_index ? *ignore_index : int32_t(r.integer(0, C - 1));
    tgl_cross_entropy_params p{sizeof p, reduction, ignore, smoothing};
    const Shape ls = reduction == TGL_REDUCTION_NONE ? ts : Shape{};
    std::vector<InputArg> ins = {floats(logits, k, r, -4, 4, dt), ints(ts, TGL_DTYPE_I32, 0, C - 1, r)};
    const bool backward = op == TGL_OP_CROSS_ENTROPY_BACKWARD;
    if (backward) ins.push_back(floats(ls, Kind::Contiguous, r, -2, 2, dt));
    const double tol = dt == TGL_DTYPE_F16 ? kTolF16 : backward ? tol::kTranscendental : tol::kReduction;
    return spec(op, param_bytes(p), ins, {output_of(dt, backward ? logits : ls)}, CompareMode::Nmse, tol,
                std::string(backward ? "cross_entropy_backward" : "cross_entropy") + " of " + shape_name(logits) + " " +
                    dtype_name(dt) + ", reduction " + std::to_string(reduction) + ", ignore_index " + std::to_string(ignore) +
                    ", smoothing " + std::to_string(smoothing));
}

// embedding_backward of dy (index..., D) into dW (V, D), padding row `pad` (-1: none).
MultiSpec embedding_backward(const Shape& index, int64_t V, int64_t D, int32_t pad, Rng& r, tgl_dtype dt = F32) {
    Shape ds = index;
    ds.push_back(D);
    tgl_embedding_backward_params p{sizeof p, pad >= 0 ? 1u : 0u, pad >= 0 ? pad : 0, 0};
    return spec(TGL_OP_EMBEDDING_BACKWARD, param_bytes(p), {floats(ds, Kind::Contiguous, r, -1, 1, dt), ints(index, TGL_DTYPE_I32, 0, V - 1, r)},
                {output_of(dt, {V, D})}, CompareMode::Nmse, dt == TGL_DTYPE_F16 ? kTolF16 : tol::kReduction,
                "embedding_backward of dy " + shape_name(ds) + " " + dtype_name(dt) + " into dW (" + std::to_string(V) + ", " +
                    std::to_string(D) + ")" + (pad >= 0 ? ", padding " + std::to_string(pad) : ""));
}

struct WindowCase {
    std::string name;
    std::function<MultiSpec(Rng&)> build;
};
void PrintTo(const WindowCase& c, std::ostream* os) { *os << c.name; }
std::string window_case_name(const ::testing::TestParamInfo<WindowCase>& info) { return info.param.name; }

std::vector<WindowCase> window_cases() {
    auto perm = [](std::vector<int> p) {
        tgl_permute_params prm{};
        prm.struct_size = sizeof prm;
        for (size_t i = 0; i < p.size(); ++i) prm.perm[i] = p[i];
        return param_bytes(prm);
    };
    return {
        // elementwise: any axis of y; broadcast inputs are not cut along their stretched axes
        {"add_broadcast_row", [](Rng& r) {
             return spec(TGL_OP_ADD, {}, {floats({40, 100}, Kind::Permuted, r), floats({100}, Kind::Contiguous, r)},
                         {output_of(F32, {40, 100})}, CompareMode::ExactBits, 0, "add (40, 100) + (100)");
         }},
        {"mul_column_broadcast_negstride", [](Rng& r) {
             return spec(TGL_OP_MUL, {}, {floats({3, 50, 30}, Kind::Negative, r), floats({3, 50, 1}, Kind::Contiguous, r)},
                         {output_of(F32, {3, 50, 30})}, CompareMode::ExactBits, 0, "mul (3, 50, 30) * (3, 50, 1)");
         }},
        // add_n: every pass of its binary kernel cut alike; f16 through the f32 scratch (per piece)
        {"add_n_f16_broadcast", [](Rng& r) {
             const tgl_dtype h = TGL_DTYPE_F16;
             return spec(TGL_OP_ADD_N, {}, {floats({40, 100}, Kind::Permuted, r, -2, 2, h), floats({100}, Kind::Contiguous, r, -2, 2, h),
                                            floats({40, 1}, Kind::Contiguous, r, -2, 2, h), floats({40, 100}, Kind::Stepped, r, -2, 2, h)},
                         {output_of(h, {40, 100})}, CompareMode::ExactBits, 0, "add_n f16 (40, 100) + (100) + (40, 1) + (40, 100)");
         }},
        {"exp_stepped", [](Rng& r) {
             return spec(TGL_OP_EXP, {}, {floats({70, 33}, Kind::Stepped, r)}, {output_of(F32, {70, 33})},
                         CompareMode::Nmse, tol::kTranscendental, "exp (70, 33)");
         }},
        {"where_bool_cond", [](Rng& r) {
             return spec(TGL_OP_WHERE, {}, {bools({30, 1}, r), floats({30, 60}, Kind::Contiguous, r),
                                            floats({60}, Kind::Contiguous, r)},
                         {output_of(F32, {30, 60})}, CompareMode::ExactBits, 0, "where (30, 1) ? (30, 60) : (60)");
         }},
        {"cast_f32_to_f16", [](Rng& r) {
             return spec(TGL_OP_CAST, {}, {floats({60, 70}, Kind::Contiguous, r, -1000, 1000)},
                         {output_of(TGL_DTYPE_F16, {60, 70})}, CompareMode::ExactBits, 0, "cast (60, 70) to f16");
         }},
        {"cast_f16_to_f32_1d", [](Rng& r) {
             return spec(TGL_OP_CAST, {}, {floats({5001}, Kind::Contiguous, r, -100, 100, TGL_DTYPE_F16)},
                         {output_of(F32, {5001})}, CompareMode::ExactBits, 0, "cast (5001) f16 to f32");
         }},
        // layout
        {"contiguous_of_transposed", [](Rng& r) {
             return spec(TGL_OP_CONTIGUOUS, {}, {floats({50, 60}, Kind::Permuted, r)}, {output_of(F32, {50, 60})},
                         CompareMode::ExactBits, 0, "contiguous of a permuted (50, 60)");
         }},
        {"expand_row", [](Rng& r) {
             return spec(TGL_OP_EXPAND, {}, {floats({1, 70}, Kind::Contiguous, r)}, {output_of(F32, {50, 70})},
                         CompareMode::ExactBits, 0, "expand (1, 70) to (50, 70)");
         }},
        {"permute_3d", [perm](Rng& r) {
             return spec(TGL_OP_PERMUTE, perm({2, 0, 1}), {floats({40, 30, 5}, Kind::Contiguous, r)},
                         {output_of(F32, {5, 40, 30})}, CompareMode::ExactBits, 0, "permute (40, 30, 5) by (2, 0, 1)");
         }},
        // reductions: kept axes cut, reduced axes combined
        {"sum_rows", [](Rng& r) { return reduce(TGL_OP_SUM, {40, 300}, {1}, {40}, r); }},
        {"sum_columns", [](Rng& r) { return reduce(TGL_OP_SUM, {300, 40}, {0}, {40}, r); }},
        {"sum_all", [](Rng& r) { return reduce(TGL_OP_SUM, {40, 300}, {}, {}, r); }},
        {"sum_all_permuted_keepdims", [](Rng& r) {
             return reduce(TGL_OP_SUM, {30, 7, 40}, {}, {1, 1, 1}, r, -2, 2, true, Kind::Permuted);
         }},
        {"mean_all", [](Rng& r) { return reduce(TGL_OP_MEAN, {50, 101}, {}, {}, r); }},
        {"mean_axis0", [](Rng& r) { return reduce(TGL_OP_MEAN, {301, 20}, {0}, {20}, r); }},
        {"max_axis0", [](Rng& r) { return reduce(TGL_OP_MAX, {300, 20}, {0}, {20}, r); }},
        {"min_all", [](Rng& r) { return reduce(TGL_OP_MIN, {60, 70}, {}, {}, r); }},
        {"prod_all", [](Rng& r) { return reduce(TGL_OP_PROD, {40, 50}, {}, {}, r, 0.999, 1.001); }},
        {"logsumexp_all", [](Rng& r) { return reduce(TGL_OP_LOGSUMEXP, {40, 50}, {}, {}, r); }},
        {"norm2_all", [](Rng& r) {
             return spec(TGL_OP_NORM, norm_params({}, 2), {floats({40, 50}, Kind::Contiguous, r)}, {output_of(F32, {})},
                         CompareMode::Nmse, tol::kReduction, "norm 2 of (40, 50)");
         }},
        {"norm1_axis0", [](Rng& r) {
             return spec(TGL_OP_NORM, norm_params({0}, 1), {floats({300, 10}, Kind::Contiguous, r)}, {output_of(F32, {10})},
                         CompareMode::Nmse, tol::kReduction, "norm 1 of (300, 10) over axis 0");
         }},
        {"any_all_bool", [](Rng& r) {
             return spec(TGL_OP_ANY, reduce_params({}), {bools({80, 80}, r)}, {output_of(TGL_DTYPE_BOOL, {})},
                         CompareMode::Exact, 0, "any of (80, 80) bool");
         }},
        {"all_rows_bool", [](Rng& r) {
             return spec(TGL_OP_ALL, reduce_params({0}), {bools({5000, 3}, r)}, {output_of(TGL_DTYPE_BOOL, {3})},
                         CompareMode::Exact, 0, "all of (5000, 3) bool over axis 0");
         }},
        // f16 sums along a cut axis: parts widened to f32, y rounded once; var/std: the parts'
        // means and variances combined
        {"sum_all_f16", [](Rng& r) { return reduce_f16(TGL_OP_SUM, {5003}, {}, {}, r); }},
        {"mean_axis0_f16", [](Rng& r) { return reduce_f16(TGL_OP_MEAN, {301, 20}, {0}, {20}, r); }},
        {"logsumexp_rows_f16", [](Rng& r) { return reduce_f16(TGL_OP_LOGSUMEXP, {3, 2100}, {1}, {3}, r); }},
        {"sum_all_bf16", [](Rng& r) { return reduce_f16(TGL_OP_SUM, {5003}, {}, {}, r, -2, 2, TGL_DTYPE_BF16); }},
        {"mean_axis0_bf16", [](Rng& r) { return reduce_f16(TGL_OP_MEAN, {301, 20}, {0}, {20}, r, -2, 2, TGL_DTYPE_BF16); }},
        {"norm2_all_f16", [](Rng& r) {
             return spec(TGL_OP_NORM, norm_params({}, 2), {floats({70, 50}, Kind::Contiguous, r, -2, 2, TGL_DTYPE_F16)},
                         {output_of(TGL_DTYPE_F16, {})}, CompareMode::Nmse, tol::kReduction, "norm 2 of (70, 50) f16");
         }},
        {"var_all", [](Rng& r) { return moments(TGL_OP_VAR, {40, 300}, {}, {}, r); }},
        {"var_all_large_mean", [](Rng& r) { return moments(TGL_OP_VAR, {3001}, {}, {}, r, 1000, 1001); }},
        {"std_axis0_keepdims_population", [](Rng& r) {
             return moments(TGL_OP_STD, {301, 20}, {0}, {1, 20}, r, -2, 2, 0, true);
         }},
        {"var_two_axes_f16", [](Rng& r) {
             return moments(TGL_OP_VAR, {50, 7, 30}, {0, 2}, {7}, r, -3, 3, 1, false, TGL_DTYPE_F16);
         }},
        // matmul: batch, M, N cut; K accumulated (alpha, beta kept)
        {"matmul_big_B_K_split", [](Rng& r) { return matmul({8, 300}, {300, 50}, {8, 50}, r); }},
        {"matmul_big_B_transposed", [](Rng& r) { return matmul({8, 300}, {50, 300}, {8, 50}, r, false, true); }},
        {"matmul_bf16_weights_K_split", [](Rng& r) { return matmul({8, 300}, {300, 50}, {8, 50}, r, false, false, 1, 0, TGL_DTYPE_BF16); }},
        {"matmul_f16_weights_transposed", [](Rng& r) { return matmul({8, 300}, {50, 300}, {8, 50}, r, false, true, 1, 0, TGL_DTYPE_F16); }},
        {"matmul_big_A_alpha_beta", [](Rng& r) { return matmul({300, 40}, {40, 8}, {300, 8}, r, false, false, 0.5f, 2.0f); }},
        {"matmul_K_split_alpha_beta", [](Rng& r) { return matmul({300, 9}, {300, 40}, {9, 40}, r, true, false, -1.5f, 0.5f); }},
        {"matmul_batch_broadcast", [](Rng& r) { return matmul({6, 20, 30}, {30, 9}, {6, 20, 9}, r); }},
        {"linear_bias", [](Rng& r) { return linear({5, 300}, 40, true, r); }},
        {"linear_batch_no_bias", [](Rng& r) { return linear({4, 3, 100}, 30, false, r); }},
        {"linear_int8_big_weight", [](Rng& r) {
             tgl_linear_params p{sizeof p, TGL_ACTIVATION_NONE};
             return spec(TGL_OP_LINEAR_INT8, param_bytes(p),
                         {floats({4, 100}, Kind::Contiguous, r), ints({60, 100}, TGL_DTYPE_I8, -127, 127, r),
                          floats({60}, Kind::Contiguous, r, 0.001, 0.02), floats({60}, Kind::Contiguous, r)},
                         {output_of(F32, {4, 60})}, CompareMode::Nmse, tol::kMatmul, "linear_int8 (4, 100) by Wq (60, 100)");
         }},
        {"linear_int4_big_weight", [](Rng& r) {
             tgl_linear_int4_params p{sizeof p, TGL_ACTIVATION_NONE, 32, 0};
             return spec(TGL_OP_LINEAR_INT4, param_bytes(p),
                         {floats({3, 128}, Kind::Contiguous, r), ints({80, 64}, TGL_DTYPE_U8, 0, 255, r),
                          floats({80, 4}, Kind::Contiguous, r, 0.001, 0.02), ints({80, 4}, TGL_DTYPE_U8, 0, 15, r),
                          absent_input()},
                         {output_of(F32, {3, 80})}, CompareMode::Nmse, tol::kMatmul, "linear_int4 (3, 128) by Wq (80, 64), G 32");
         }},
        // grouped_linear: tokens; the experts in windows (each piece the tokens of its experts);
        // N once one expert is left
        {"grouped_linear_expert_windows", [](Rng& r) { return grouped_linear(37, 7, 20, 30, true, r); }},
        {"grouped_linear_expert_then_N", [](Rng& r) { return grouped_linear(21, 3, 50, 31, true, r); }},
        {"grouped_linear_tokens", [](Rng& r) { return grouped_linear(150, 4, 11, 9, false, r); }},
        // linear_qkv: one linear per output over its rows of W, each cut along N where needed
        {"linear_qkv_big_weight", [](Rng& r) { return linear_qkv({5, 30}, 40, 21, 9, r); }},
        {"linear_qkv_empty_k_batch", [](Rng& r) { return linear_qkv({2, 3, 25}, 50, 0, 43, r); }},
        {"linear_qkv_batch", [](Rng& r) {
             tgl_linear_params p{sizeof p, TGL_ACTIVATION_NONE};
             return spec(TGL_OP_LINEAR_QKV, param_bytes(p),
                         {floats({50, 30}, Kind::Contiguous, r), floats({24, 30}, Kind::Contiguous, r), floats({24}, Kind::Contiguous, r)},
                         {output_of(F32, {50, 12}), output_of(F32, {50, 8}), output_of(F32, {50, 4})}, CompareMode::Nmse,
                         tol::kMatmul, "linear_qkv (50, 30) into 12 + 8 + 4");
         }},
        // scatter/scatter_add: any axis; the scatter axis in windows of y and x
        {"scatter_axis0_windows_duplicates", [](Rng& r) {
             return scatter(TGL_OP_SCATTER, {300, 7}, 0, {12, 7}, {15, 7}, 250, r);
         }},
        {"scatter_kv_cache", [](Rng& r) {
             return scatter(TGL_OP_SCATTER, {2, 3, 41, 16}, 2, {2, 3, 5, 16}, {2, 3, 5, 16}, 40, r);
         }},
        // set_rows: y and x in windows of the row axis, src with them along the others
        {"set_rows_kv_cache_windows", [](Rng& r) { return set_rows({2, 3, 41, 16}, 2, 5, 40, r); }},
        {"set_rows_rows_windows_duplicates", [](Rng& r) { return set_rows({300, 7}, 0, 20, 250, r); }},
        // more src rows than a window holds: the K rows in pieces, in order (the last duplicate wins)
        {"set_rows_src_rows_in_pieces", [](Rng& r) { return set_rows({50, 7}, 0, 300, 49, r); }},
        {"scatter_add_short_index", [](Rng& r) {
             return scatter(TGL_OP_SCATTER_ADD, {60, 50}, 1, {45, 20}, {50, 30}, 49, r);
         }},
        {"scatter_add_axis0_i32", [](Rng& r) {
             return scatter(TGL_OP_SCATTER_ADD, {700, 3}, 0, {30, 3}, {30, 3}, 650, r, TGL_DTYPE_I32);
         }},
        {"scatter_add_1d_f16", [](Rng& r) {
             return scatter(TGL_OP_SCATTER_ADD, {3001}, 0, {500}, {500}, 2999, r, TGL_DTYPE_F16);
         }},
        // rows: every axis but the ones the op works along
        {"softmax_rows", [](Rng& r) {
             return spec(TGL_OP_SOFTMAX, {}, {floats({60, 40}, Kind::Stepped, r), absent_input()}, {output_of(F32, {60, 40})},
                         CompareMode::Nmse, tol::kTranscendental, "softmax of (60, 40)");
         }},
        {"layer_norm_rows", [](Rng& r) {
             return spec(TGL_OP_LAYER_NORM, {}, {floats({30, 50}, Kind::Contiguous, r), floats({50}, Kind::Contiguous, r),
                                                 floats({50}, Kind::Contiguous, r)},
                         {output_of(F32, {30, 50})}, CompareMode::Nmse, tol::kTranscendental, "layer_norm of (30, 50)");
         }},
        {"rms_norm_3d", [](Rng& r) {
             return spec(TGL_OP_RMS_NORM, {}, {floats({3, 20, 40}, Kind::Contiguous, r), floats({40}, Kind::Contiguous, r)},
                         {output_of(F32, {3, 20, 40})}, CompareMode::Nmse, tol::kTranscendental, "rms_norm of (3, 20, 40)");
         }},
        // A row larger than a window (RowPieces): pieces of whole chunks, every piece's partial
        // statistics first, then each piece merges the row's and writes its part.
        {"softmax_row_pieces_mask", [](Rng& r) {
             tgl_softmax_params p{sizeof p, -1, 0.5f, 0};
             return spec(TGL_OP_SOFTMAX, param_bytes(p), {floats({2, 3000}, Kind::Contiguous, r, -20, 20), floats({1, 3000}, Kind::Contiguous, r, -4, 0)},
                         {output_of(F32, {2, 3000})}, CompareMode::Nmse, tol::kTranscendental, "softmax of rows of 3000 with a mask");
         }},
        {"log_softmax_row_pieces_axis0", [](Rng& r) {
             tgl_softmax_params p{sizeof p, 0, 1.0f, 0};
             return spec(TGL_OP_LOG_SOFTMAX, param_bytes(p), {floats({2500, 2}, Kind::Contiguous, r, -20, 20), absent_input()},
                         {output_of(F32, {2500, 2})}, CompareMode::Nmse, tol::kTranscendental, "log_softmax of (2500, 2) along axis 0");
         }},
        {"softmax_row_pieces_f16", [](Rng& r) {
             const tgl_dtype h = TGL_DTYPE_F16;
             return spec(TGL_OP_SOFTMAX, {}, {floats({1, 7000}, Kind::Contiguous, r, -8, 8, h), absent_input()}, {output_of(h, {1, 7000})},
                         CompareMode::Nmse, kTolF16, "softmax of a row of 7000 f16");
         }},
        {"layer_norm_row_pieces", [](Rng& r) {
             return spec(TGL_OP_LAYER_NORM, {}, {floats({2, 3000}, Kind::Contiguous, r, 97, 103), floats({3000}, Kind::Contiguous, r),
                                                 floats({3000}, Kind::Contiguous, r)},
                         {output_of(F32, {2, 3000})}, CompareMode::Nmse, tol::kTranscendental, "layer_norm of rows of 3000 around 100");
         }},
        {"rms_norm_row_pieces", [](Rng& r) {
             return spec(TGL_OP_RMS_NORM, {}, {floats({1, 2100}, Kind::Stepped, r), floats({2100}, Kind::Contiguous, r)},
                         {output_of(F32, {1, 2100})}, CompareMode::Nmse, tol::kTranscendental, "rms_norm of a stepped row of 2100");
         }},
        {"batch_norm_all_axes", [](Rng& r) {
             tgl_batch_norm_params p{sizeof p, 1e-5f};
             return spec(TGL_OP_BATCH_NORM, param_bytes(p),
                         {floats({6, 5, 12, 12}, Kind::Contiguous, r), floats({5}, Kind::Contiguous, r),
                          floats({5}, Kind::Contiguous, r, 0.5, 2), floats({5}, Kind::Contiguous, r), absent_input()},
                         {output_of(F32, {6, 5, 12, 12})}, CompareMode::Nmse, tol::kTranscendental, "batch_norm of (6, 5, 12, 12)");
         }},
        {"group_norm_batch", [](Rng& r) {
             tgl_group_norm_params p{sizeof p, 2, 1e-5f, 0};
             return spec(TGL_OP_GROUP_NORM, param_bytes(p),
                         {floats({6, 4, 10, 10}, Kind::Contiguous, r), floats({4}, Kind::Contiguous, r), floats({4}, Kind::Contiguous, r)},
                         {output_of(F32, {6, 4, 10, 10})}, CompareMode::Nmse, tol::kTranscendental,
                         "group_norm of (6, 4, 10, 10), 2 groups");
         }},
        {"argmax_rows", [](Rng& r) {
             tgl_arg_reduce_params p{sizeof p, 1, 0, 0, 0};
             return spec(TGL_OP_ARGMAX, param_bytes(p), {floats({60, 40}, Kind::Contiguous, r)},
                         {output_of(TGL_DTYPE_I32, {60})}, CompareMode::Exact, 0, "argmax of (60, 40) along axis 1");
         }},
        {"cumsum_rows", [](Rng& r) {
             tgl_scan_params p{sizeof p, -1, 0, 0};
             return spec(TGL_OP_CUMSUM, param_bytes(p), {floats({60, 40}, Kind::Contiguous, r)}, {output_of(F32, {60, 40})},
                         CompareMode::Nmse, tol::kReduction, "cumsum of (60, 40) along axis 1");
         }},
        {"sort_rows", [](Rng& r) {
             tgl_sort_params p{sizeof p, -1, 1, 0};
             return spec(TGL_OP_SORT, param_bytes(p), {floats({50, 30}, Kind::Contiguous, r)},
                         {output_of(F32, {50, 30}), output_of(TGL_DTYPE_I32, {50, 30})}, CompareMode::ExactBits, 0,
                         "descending sort of (50, 30) along axis 1");
         }},
        {"topk_rows", [](Rng& r) {
             tgl_sort_params p{sizeof p, -1, 1, 0};
             return spec(TGL_OP_TOPK, param_bytes(p), {floats({80, 30}, Kind::Contiguous, r)},
                         {output_of(F32, {80, 5}), output_of(TGL_DTYPE_I32, {80, 5})}, CompareMode::ExactBits, 0,
                         "top 5 of (80, 30) along axis 1");
         }},
        // sequence ops: rope/rope_backward every axis but the head dim; fft the leading axes;
        // selective_scan B and D
        {"rope_multi_section_with_factors", [](Rng& r) {  // positions (S, 3 streams): cut along S with x
             tgl_rope_params p = neox_rope();
             p.multi = TGL_ROPE_MULTI_SECTIONS;
             p.sections[0] = p.sections[1] = 3;
             p.sections[2] = 2;
             return spec(TGL_OP_ROPE, param_bytes(p),
                         {floats({2, 3, 30, 16}, Kind::Stepped, r), ints({30, 3}, TGL_DTYPE_I32, 0, 5000, r),
                          floats({8}, Kind::Contiguous, r, 1, 4), absent_input(), absent_input()},
                         {output_of(F32, {2, 3, 30, 16})}, CompareMode::Nmse, tol::kTranscendental,
                         "multi-section neox rope with freq_factors (2, 3, 30, 16)");
         }},
        {"rope_positions_per_sequence", [](Rng& r) {
             tgl_rope_params p = neox_rope();
             return spec(TGL_OP_ROPE, param_bytes(p), {floats({2, 3, 30, 16}, Kind::Stepped, r), ints({30}, TGL_DTYPE_I32, 0, 5000, r)},
                         {output_of(F32, {2, 3, 30, 16})}, CompareMode::Nmse, tol::kTranscendental, "neox rope (2, 3, 30, 16)");
         }},
        {"rope_backward_positions_per_batch", [](Rng& r) {
             return spec(TGL_OP_ROPE_BACKWARD, {}, {floats({2, 5, 21, 12}, Kind::Contiguous, r), ints({2, 1, 21}, TGL_DTYPE_I32, 0, 900, r)},
                         {output_of(F32, {2, 5, 21, 12})}, CompareMode::Nmse, tol::kTranscendental, "rope_backward (2, 5, 21, 12)");
         }},
        {"fft_rows", [](Rng& r) {
             return spec(TGL_OP_FFT, {}, {floats({5, 7, 32, 2}, Kind::Contiguous, r)}, {output_of(F32, {5, 7, 32, 2})},
                         CompareMode::Nmse, tol::kReduction, "fft of (5, 7, 32, 2)");
         }},
        {"selective_scan_batch_channels", [](Rng& r) {
             tgl_selective_scan_params p{sizeof p, 1, {0, 0}, 0};
             const Shape bdl = {3, 10, 40}, bnl = {3, 4, 40};
             return spec(TGL_OP_SELECTIVE_SCAN, param_bytes(p),
                         {floats(bdl, Kind::Contiguous, r, -1, 1), floats(bdl, Kind::Contiguous, r, -3, 1),
                          floats({10, 4}, Kind::Contiguous, r, -4, -0.05), floats(bnl, Kind::Contiguous, r, -1, 1),
                          floats(bnl, Kind::Contiguous, r, -1, 1), floats({10}, Kind::Contiguous, r, -1, 1),
                          floats(bdl, Kind::Stepped, r, -3, 3), floats({10}, Kind::Contiguous, r, -0.5, 0.1)},
                         {output_of(F32, bdl), output_of(F32, {3, 10, 4})}, CompareMode::Nmse, tol::kReduction,
                         "selective_scan B 3, D 10, L 40, N 4");
         }},
        // sample: the rows, each piece's Philox counter advanced by its first row (across a carry)
        {"sample_rows_counter_carry", [](Rng& r) {
             tgl_sample_params p{sizeof p, 0, 0.8f, 0.9f, 0x1234567890abcdefull, 0xfffffff0ull};
             return spec(TGL_OP_SAMPLE, param_bytes(p), {floats({300, 7}, Kind::Contiguous, r, -3, 3)},
                         {output_of(TGL_DTYPE_I32, {300})}, CompareMode::Exact, 0, "sample of (300, 7), offset 2^32 - 16");
         }},
        // grad row ops: every axis but the rows'; layer/rms norm backward with dx alone
        {"softmax_backward_axis1", [](Rng& r) {
             tgl_softmax_params p{sizeof p, 1, 0.5f, 0};
             return spec(TGL_OP_SOFTMAX_BACKWARD, param_bytes(p), {floats({9, 25, 8}, Kind::Contiguous, r, 0, 1), floats({9, 25, 8}, Kind::Negative, r)},
                         {output_of(F32, {9, 25, 8})}, CompareMode::Nmse, tol::kTranscendental, "softmax_backward (9, 25, 8) along axis 1");
         }},
        {"log_softmax_backward_rows", [](Rng& r) {
             return spec(TGL_OP_LOG_SOFTMAX_BACKWARD, {}, {floats({70, 30}, Kind::Contiguous, r, -5, 0), floats({70, 30}, Kind::Contiguous, r)},
                         {output_of(F32, {70, 30})}, CompareMode::Nmse, tol::kTranscendental, "log_softmax_backward (70, 30)");
         }},
        {"cumsum_backward_rows", [](Rng& r) {
             tgl_scan_params p{sizeof p, 1, 1, 1};
             return spec(TGL_OP_CUMSUM_BACKWARD, param_bytes(p), {floats({60, 40}, Kind::Contiguous, r)}, {output_of(F32, {60, 40})},
                         CompareMode::Nmse, tol::kReduction, "exclusive reverse cumsum_backward (60, 40)");
         }},
        {"layer_norm_backward_dx", [](Rng& r) {
             return spec(TGL_OP_LAYER_NORM_BACKWARD, {}, {floats({30, 50}, Kind::Contiguous, r), floats({30, 50}, Kind::Contiguous, r),
                                                          floats({50}, Kind::Contiguous, r)},
                         {output_of(F32, {30, 50}), absent_output(), absent_output()}, CompareMode::Nmse, tol::kTranscendental,
                         "layer_norm_backward (30, 50), dx only");
         }},
        {"layer_norm_backward_dgamma_dbeta", [](Rng& r) {
             return spec(TGL_OP_LAYER_NORM_BACKWARD, {}, {floats({41, 50}, Kind::Contiguous, r), floats({41, 50}, Kind::Stepped, r),
                                                          floats({50}, Kind::Contiguous, r)},
                         {output_of(F32, {41, 50}), output_of(F32, {50}), output_of(F32, {50})}, CompareMode::Nmse,
                         tol::kReduction, "layer_norm_backward (41, 50), dgamma and dbeta summed over pieces");
         }},
        {"rms_norm_backward_dgamma_3d", [](Rng& r) {
             tgl_layer_norm_params p{sizeof p, 1, 1e-5f, 0};
             return spec(TGL_OP_RMS_NORM_BACKWARD, param_bytes(p), {floats({9, 7, 30}, Kind::Contiguous, r), floats({9, 7, 30}, Kind::Contiguous, r),
                                                                    floats({30}, Kind::Contiguous, r)},
                         {output_of(F32, {9, 7, 30}), output_of(F32, {30})}, CompareMode::Nmse, tol::kReduction,
                         "rms_norm_backward (9, 7, 30), dgamma summed over pieces of two axes");
         }},
        // f16 dgamma, dbeta: each piece's partial sums in f32, added up in f32, rounded once
        {"layer_norm_backward_f16_dgamma_dbeta", [](Rng& r) {
             const tgl_dtype h = TGL_DTYPE_F16;
             return spec(TGL_OP_LAYER_NORM_BACKWARD, {}, {floats({61, 50}, Kind::Contiguous, r, -2, 2, h), floats({61, 50}, Kind::Stepped, r, -1, 1, h),
                                                          floats({50}, Kind::Contiguous, r, -2, 2, h)},
                         {output_of(h, {61, 50}), output_of(h, {50}), output_of(h, {50})}, CompareMode::Nmse, kTolF16,
                         "layer_norm_backward (61, 50) f16, dgamma and dbeta summed over pieces in f32");
         }},
        {"rms_norm_backward_f16_dgamma_3d", [](Rng& r) {
             const tgl_dtype h = TGL_DTYPE_F16;
             tgl_layer_norm_params p{sizeof p, 1, 1e-5f, 0};
             return spec(TGL_OP_RMS_NORM_BACKWARD, param_bytes(p), {floats({9, 7, 40}, Kind::Contiguous, r, -2, 2, h),
                                                                    floats({9, 7, 40}, Kind::Negative, r, -1, 1, h), absent_input()},
                         {output_of(h, {9, 7, 40}), output_of(h, {40})}, CompareMode::Nmse, kTolF16,
                         "rms_norm_backward (9, 7, 40) f16, dgamma summed over pieces of two axes in f32");
         }},
        // cross_entropy(_backward): the rows, each piece's targets and losses in the scratch of
        // the one target check; sum and mean over every row's loss after the pieces
        {"cross_entropy_mean_rows", [](Rng& r) { return cross_entropy(TGL_OP_CROSS_ENTROPY, {300, 20}, TGL_REDUCTION_MEAN, 0.1f, r); }},
        {"cross_entropy_none_4d_batch", [](Rng& r) {
             return cross_entropy(TGL_OP_CROSS_ENTROPY, {6, 5, 10, 8}, TGL_REDUCTION_NONE, 0.0f, r);
         }},
        // logits (N, C, L) viewing a (N, L, C) tensor (classes innermost, as a transposed LM head's
        // output): cut along N, then along L within one sequence
        {"cross_entropy_sum_channels_last_batch_then_length", [](Rng& r) {
             MultiSpec s = cross_entropy(TGL_OP_CROSS_ENTROPY, {2, 20, 100}, TGL_REDUCTION_SUM, 0.1f, r);
             s.inputs[0].view = make_view({2, 20, 100}, Layout{"classes innermost", {0, 2, 1}, {}, {}, 0, 0});
             s.inputs[0].storage = random_storage(F32, s.inputs[0].view.storage, r, float_values(F32, -4, 4));
             s.what += ", classes innermost";
             return s;
         }},
        {"cross_entropy_sum_f16", [](Rng& r) {
             return cross_entropy(TGL_OP_CROSS_ENTROPY, {400, 9}, TGL_REDUCTION_SUM, 0.0f, r, TGL_DTYPE_F16);
         }},
        {"cross_entropy_backward_mean_smoothing", [](Rng& r) {
             return cross_entropy(TGL_OP_CROSS_ENTROPY_BACKWARD, {250, 12}, TGL_REDUCTION_MEAN, 0.1f, r);
         }},
        {"cross_entropy_backward_none_f16_3d", [](Rng& r) {
             return cross_entropy(TGL_OP_CROSS_ENTROPY_BACKWARD, {3, 11, 100}, TGL_REDUCTION_NONE, 0.05f, r, TGL_DTYPE_F16);
         }},
        // embedding_backward: dW's rows in windows (each piece the tokens of its rows, the padding
        // row where it lands), after one index check and sort
        // an index larger than one window: checked window by window (consecutive positions), before
        // any piece writes
        {"gather_index_in_windows", [](Rng& r) { return indexing(TGL_OP_GATHER, {40, 30}, 1, {40, 30}, r); }},
        {"one_hot_index_in_windows", [](Rng& r) {
             tgl_unary_params p{sizeof p, 0};
             return spec(TGL_OP_ONE_HOT, param_bytes(p), {ints({3, 400}, TGL_DTYPE_I32, 0, 4, r)}, {output_of(F32, {3, 400, 5})},
                         CompareMode::ExactBits, 0, "one_hot of a (3, 400) index, 5 classes");
         }},
        {"embedding_backward_rows_padding", [](Rng& r) { return embedding_backward({100}, 60, 24, 17, r); }},
        // ... and its tokens (f32 dW: later pieces add to dW in token order), along the index's
        // outermost axis, then within one row of it
        {"embedding_backward_tokens_2d_index", [](Rng& r) { return embedding_backward({2, 150}, 40, 8, -1, r); }},
        // f16: the pieces of the tokens add to an f32 copy of dW (cut with dW), rounded once after
        {"embedding_backward_f16_tokens", [](Rng& r) { return embedding_backward({300}, 40, 8, 2, r, TGL_DTYPE_F16); }},
        {"embedding_backward_f16_tokens_and_rows", [](Rng& r) { return embedding_backward({400}, 300, 8, -1, r, TGL_DTYPE_F16); }},
        {"embedding_backward_f16_many_rows", [](Rng& r) { return embedding_backward({4, 25}, 300, 9, 250, r, TGL_DTYPE_F16); }},
        {"rms_norm_backward_dx_3d", [](Rng& r) {
             tgl_layer_norm_params p{sizeof p, 2, 1e-5f, 0};
             return spec(TGL_OP_RMS_NORM_BACKWARD, param_bytes(p), {floats({7, 6, 30}, Kind::Contiguous, r), floats({7, 6, 30}, Kind::Negative, r),
                                                                    absent_input()},
                         {output_of(F32, {7, 6, 30}), absent_output()}, CompareMode::Nmse, tol::kTranscendental,
                         "rms_norm_backward (7, 6, 30) over 2 dims, dx only");
         }},
        // generators: full along any axis; tril along its batch axes
        {"full_f16", [](Rng&) {
             tgl_full_params p{};
             p.struct_size = sizeof p;
             p.value = -2.75;
             return spec(TGL_OP_FULL, param_bytes(p), {}, {output_of(TGL_DTYPE_F16, {70, 50})}, CompareMode::ExactBits, 0,
                         "full (70, 50) f16");
         }},
        {"tril_batch", [](Rng& r) {
             tgl_diagonal_params p{};
             p.struct_size = sizeof p;
             p.diagonal = 1;
             return spec(TGL_OP_TRIL, param_bytes(p), {floats({9, 12, 20}, Kind::Contiguous, r)},
                         {output_of(F32, {9, 12, 20})}, CompareMode::ExactBits, 0, "tril of (9, 12, 20), diagonal 1");
         }},
        // eye / tril / triu: one matrix larger than a window, cut along its rows and columns, each
        // piece with its diagonal moved (a causal mask of 8k tokens is 256 MiB in f32)
        {"tril_one_matrix_rows", [](Rng& r) { return diagonal_op(TGL_OP_TRIL, {70, 40}, Kind::Contiguous, 3, r); }},
        {"triu_one_matrix_columns", [](Rng& r) { return diagonal_op(TGL_OP_TRIU, {3, 1500}, Kind::Contiguous, -2, r); }},
        {"tril_transposed_far_diagonals", [](Rng& r) { return diagonal_op(TGL_OP_TRIL, {64, 50}, Kind::Permuted, -60, r); }},
        {"triu_diagonal_past_the_columns", [](Rng& r) { return diagonal_op(TGL_OP_TRIU, {50, 64}, Kind::Contiguous, 63, r); }},
        {"eye_one_matrix", [](Rng&) {
             tgl_diagonal_params p{sizeof p, 5};
             return spec(TGL_OP_EYE, param_bytes(p), {}, {output_of(TGL_DTYPE_F16, {90, 60})}, CompareMode::ExactBits, 0,
                         "eye (90, 60) f16, diagonal 5");
         }},
        // gather / index_select: y and the index cut; the table in windows of its indexed axis
        {"index_select_big_table", [](Rng& r) { return indexing(TGL_OP_INDEX_SELECT, {300, 16}, 0, {50}, r); }},
        {"index_select_big_output", [](Rng& r) { return indexing(TGL_OP_INDEX_SELECT, {20, 30}, 0, {200}, r); }},
        {"embedding_big_table_and_output", [](Rng& r) { return indexing(TGL_OP_INDEX_SELECT, {500, 8}, 0, {300}, r); }},
        {"index_select_axis1_f16", [](Rng& r) {
             return indexing(TGL_OP_INDEX_SELECT, {30, 200}, 1, {70}, r, TGL_DTYPE_F16);
         }},
        {"gather_axis1", [](Rng& r) { return indexing(TGL_OP_GATHER, {16, 300}, 1, {16, 50}, r); }},
        {"gather_axis0_u8", [](Rng& r) { return indexing(TGL_OP_GATHER, {3000, 3}, 0, {200, 3}, r, TGL_DTYPE_U8); }},
        {"one_hot_f16", [](Rng& r) {
             tgl_unary_params p{sizeof p, 0};
             return spec(TGL_OP_ONE_HOT, param_bytes(p), {ints({20, 30}, TGL_DTYPE_I32, 0, 9, r)},
                         {output_of(TGL_DTYPE_F16, {20, 30, 10})}, CompareMode::ExactBits, 0, "one_hot of (20, 30), 10 classes, f16");
         }},
        // layout: the axes the op copies unchanged; concat/split/stack: the joined axis by operand
        {"concat_axis0", [](Rng& r) {
             tgl_axis_params p{sizeof p, 0, 0};
             return layout(TGL_OP_CONCAT, param_bytes(p), {floats({30, 40}, Kind::Contiguous, r), floats({0, 40}, Kind::Contiguous, r),
                                                           floats({20, 40}, Kind::Permuted, r)},
                           {{50, 40}}, "concat (30, 40), (0, 40), (20, 40) along axis 0");
         }},
        {"concat_axis1", [](Rng& r) {
             tgl_axis_params p{sizeof p, -1, 0};
             return layout(TGL_OP_CONCAT, param_bytes(p), {floats({40, 30}, Kind::Contiguous, r), floats({40, 50}, Kind::Stepped, r)},
                           {{40, 80}}, "concat (40, 30), (40, 50) along axis 1");
         }},
        {"split_axis1", [](Rng& r) {
             tgl_axis_params p{sizeof p, 1, 0};
             return layout(TGL_OP_SPLIT, param_bytes(p), {floats({40, 80}, Kind::Contiguous, r)}, {{40, 30}, {40, 50}},
                           "split (40, 80) into 30 + 50 along axis 1");
         }},
        {"stack_axis1", [](Rng& r) {
             tgl_axis_params p{sizeof p, 1, 0};
             return layout(TGL_OP_STACK, param_bytes(p), {floats({30, 40}, Kind::Contiguous, r), floats({30, 40}, Kind::Negative, r),
                                                          floats({30, 40}, Kind::Contiguous, r)},
                           {{30, 3, 40}}, "stack 3 of (30, 40) along axis 1");
         }},
        {"slice_axis1_step3", [](Rng& r) {
             tgl_slice_params p{sizeof p, 1, 1, INT64_MAX, 3};
             return layout(TGL_OP_SLICE, param_bytes(p), {floats({60, 80}, Kind::Contiguous, r)}, {{60, 27}},
                           "slice (60, 80)[:, 1::3]");
         }},
        {"narrow_axis1", [](Rng& r) {
             tgl_narrow_params p{sizeof p, 1, 10, 30};
             return layout(TGL_OP_NARROW, param_bytes(p), {floats({100, 50}, Kind::Contiguous, r)}, {{100, 30}},
                           "narrow (100, 50) along axis 1 from 10, 30 long");
         }},
        {"flip_axis1", [](Rng& r) {
             tgl_flip_params p{};
             p.struct_size = sizeof p;
             p.n_axes = 1;
             p.axes[0] = -1;
             return layout(TGL_OP_FLIP, param_bytes(p), {floats({60, 50}, Kind::Contiguous, r)}, {{60, 50}}, "flip (60, 50) along axis 1");
         }},
        {"pad_reflect_last", [](Rng& r) {
             tgl_pad_params p{};
             p.struct_size = sizeof p;
             p.mode = TGL_PAD_REFLECT;
             p.before[2] = 2;
             p.after[2] = 3;
             return layout(TGL_OP_PAD, param_bytes(p), {floats({4, 30, 40}, Kind::Contiguous, r)}, {{4, 30, 45}},
                           "reflect pad (4, 30, 40) by 2, 3 along axis 2");
         }},
        {"pad_constant_crop", [](Rng& r) {
             tgl_pad_params p{};
             p.struct_size = sizeof p;
             p.value = -7.5;
             p.before[1] = 3;
             p.after[1] = -5;
             return layout(TGL_OP_PAD, param_bytes(p), {floats({70, 40}, Kind::Contiguous, r)}, {{70, 38}},
                           "constant pad (70, 40) by 3, -5 along axis 1");
         }},
        {"tile_leading_and_last", [](Rng& r) {
             return layout(TGL_OP_TILE, {}, {floats({20, 30}, Kind::Contiguous, r)}, {{3, 20, 60}}, "tile (20, 30) to (3, 20, 60)");
         }},
        {"roll_axis1", [](Rng& r) {
             tgl_roll_params p{};
             p.struct_size = sizeof p;
             p.n_axes = 1;
             p.axes[0] = 1;
             p.shifts[0] = -7;
             return layout(TGL_OP_ROLL, param_bytes(p), {floats({60, 40}, Kind::Contiguous, r)}, {{60, 40}}, "roll (60, 40) by -7 along axis 1");
         }},
        {"reshape_leading", [](Rng& r) {
             return layout(TGL_OP_RESHAPE, {}, {floats({60, 40}, Kind::Contiguous, r)}, {{60, 8, 5}}, "reshape (60, 40) to (60, 8, 5)");
         }},
        {"reshape_merged_axes", [](Rng& r) {
             return layout(TGL_OP_RESHAPE, {}, {floats({4, 10, 60}, Kind::Negative, r)}, {{40, 60}}, "reshape a negative-strided (4, 10, 60) to (40, 60)");
         }},
        // conv: the batch axis; output channels (weight rows)
        {"conv2d_batch", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1),
                         {floats({6, 3, 12, 12}, Kind::Contiguous, r), floats({8, 3, 3, 3}, Kind::Contiguous, r),
                          floats({8}, Kind::Contiguous, r)},
                         {6, 8, 12, 12}, "conv2d (6, 3, 12, 12) by (8, 3, 3, 3), pad 1, bias");
         }},
        {"conv2d_big_weight", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(),
                         {floats({2, 16, 6, 6}, Kind::Contiguous, r), floats({40, 16, 3, 3}, Kind::Contiguous, r),
                          floats({40}, Kind::Contiguous, r)},
                         {2, 40, 4, 4}, "conv2d (2, 16, 6, 6) by (40, 16, 3, 3), bias");
         }},
        {"conv1d_channels_last", [](Rng& r) {
             return conv(TGL_OP_CONV1D, conv_params(TGL_CONV_LAYOUT_CHANNELS_LAST, 2),
                         {floats({5, 60, 8}, Kind::Contiguous, r), floats({12, 8, 3}, Kind::Contiguous, r), absent_input()},
                         {5, 29, 12}, "conv1d NLC (5, 60, 8) by (12, 8, 3), stride 2");
         }},
        {"conv3d_batch", [](Rng& r) {
             return conv(TGL_OP_CONV3D, conv_params(), {floats({4, 2, 6, 6, 6}, Kind::Contiguous, r),
                                                        floats({3, 2, 2, 2, 2}, Kind::Contiguous, r), absent_input()},
                         {4, 3, 5, 5, 5}, "conv3d (4, 2, 6, 6, 6) by (3, 2, 2, 2, 2)");
         }},
        {"conv_transpose2d_batch", [](Rng& r) {
             return conv(TGL_OP_CONV_TRANSPOSE2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 2),
                         {floats({5, 4, 6, 6}, Kind::Contiguous, r), floats({4, 3, 3, 3}, Kind::Contiguous, r),
                          floats({3}, Kind::Contiguous, r)},
                         {5, 3, 13, 13}, "conv_transpose2d (5, 4, 6, 6) by (4, 3, 3, 3), stride 2, bias");
         }},
        // conv: the first spatial axis, each piece with the input rows it reads and its own pads
        {"conv2d_nhwc_image_rows", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_LAST, 2, 1),
                         {floats({1, 41, 30, 3}, Kind::Contiguous, r), floats({4, 3, 3, 3}, Kind::Contiguous, r),
                          floats({4}, Kind::Contiguous, r)},
                         {1, 21, 15, 4}, "conv2d NHWC (1, 41, 30, 3) by (4, 3, 3, 3), stride 2, pad 1, bias");
         }},
        {"conv1d_one_channel_long_dilated", [](Rng& r) {
             tgl_conv_params p{};
             p.struct_size = sizeof p;
             p.groups = 1;
             p.stride[0] = 3;
             p.dilation[0] = 2;
             p.pad_begin[0] = 4;
             p.pad_end[0] = 1;
             return conv(TGL_OP_CONV1D, param_bytes(p),
                         {floats({1, 1, 3001}, Kind::Contiguous, r), floats({5, 1, 7}, Kind::Contiguous, r), absent_input()},
                         {1, 5, 998}, "conv1d (1, 1, 3001) by (5, 1, 7), stride 3, dilation 2, pads 4, 1");
         }},
        {"conv2d_nhwc_same_dilated_groups", [](Rng& r) {
             tgl_conv_params p{};
             p.struct_size = sizeof p;
             p.layout = TGL_CONV_LAYOUT_CHANNELS_LAST;
             p.groups = 2;
             p.padding_mode = TGL_CONV_PADDING_SAME;
             p.activation = TGL_ACTIVATION_RELU;
             for (int d = 0; d < 3; ++d) p.stride[d] = 1, p.dilation[d] = 2;
             return conv(TGL_OP_CONV2D, param_bytes(p),
                         {floats({1, 33, 20, 4}, Kind::Contiguous, r), floats({6, 2, 3, 4}, Kind::Contiguous, r),
                          floats({6}, Kind::Contiguous, r)},
                         {1, 33, 20, 6}, "conv2d NHWC (1, 33, 20, 4) by (6, 2, 3, 4), same padding, dilation 2, groups 2, relu");
         }},
        {"conv2d_backward_input_batch", [](Rng& r) {
             return conv(TGL_OP_CONV2D_BACKWARD_INPUT, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1),
                         {floats({5, 6, 10, 10}, Kind::Contiguous, r), floats({6, 4, 3, 3}, Kind::Contiguous, r)},
                         {5, 4, 10, 10}, "conv2d_backward_input dy (5, 6, 10, 10), w (6, 4, 3, 3), pad 1");
         }},
        {"conv2d_backward_weight_rows", [](Rng& r) {
             return spec(TGL_OP_CONV2D_BACKWARD_WEIGHT, conv_params(),
                         {floats({2, 20, 5, 5}, Kind::Contiguous, r), floats({2, 30, 3, 3}, Kind::Contiguous, r)},
                         {output_of(F32, {30, 20, 3, 3}), output_of(F32, {30})}, CompareMode::Nmse, tol::kMatmul,
                         "conv2d_backward_weight x (2, 20, 5, 5), dy (2, 30, 3, 3)");
         }},
        // conv: the input channels (channels-first: one output row's input rows span every channel),
        // each piece adding its channels' sum to y in f32, the last with the bias and activation;
        // with groups, runs of whole groups first
        {"conv2d_input_channels_bias_relu", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1, TGL_ACTIVATION_RELU),
                         {floats({1, 24, 10, 10}, Kind::Contiguous, r), floats({5, 24, 3, 3}, Kind::Contiguous, r),
                          floats({5}, Kind::Contiguous, r)},
                         {1, 5, 10, 10}, "conv2d (1, 24, 10, 10) by (5, 24, 3, 3), pad 1, bias, relu");
         }},
        {"conv2d_input_channels_f16_gelu", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1, TGL_ACTIVATION_GELU),
                         {floats({1, 40, 9, 9}, Kind::Contiguous, r, -2, 2, F16), floats({6, 40, 3, 3}, Kind::Contiguous, r, -0.5, 0.5, F16),
                          floats({6}, Kind::Contiguous, r, -2, 2, F16)},
                         {1, 6, 9, 9}, "f16 conv2d (1, 40, 9, 9) by (6, 40, 3, 3), pad 1, bias, gelu", F16);
         }},
        {"conv2d_input_and_output_channels_silu", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1, TGL_ACTIVATION_SILU),
                         {floats({1, 16, 12, 12}, Kind::Contiguous, r), floats({12, 16, 3, 3}, Kind::Contiguous, r),
                          floats({12}, Kind::Contiguous, r)},
                         {1, 12, 12, 12}, "conv2d (1, 16, 12, 12) by (12, 16, 3, 3), pad 1, bias, silu (y cut too)");
         }},
        {"conv1d_input_channels_strided", [](Rng& r) {
             return conv(TGL_OP_CONV1D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 2),
                         {floats({2, 30, 50}, Kind::Contiguous, r), floats({3, 30, 5}, Kind::Contiguous, r), absent_input()},
                         {2, 3, 23}, "conv1d (2, 30, 50) by (3, 30, 5), stride 2");
         }},
        {"conv3d_input_channels", [](Rng& r) {
             return conv(TGL_OP_CONV3D, conv_params(),
                         {floats({1, 12, 6, 6, 6}, Kind::Contiguous, r), floats({2, 12, 3, 3, 3}, Kind::Contiguous, r),
                          floats({2}, Kind::Contiguous, r)},
                         {1, 2, 4, 4, 4}, "conv3d (1, 12, 6, 6, 6) by (2, 12, 3, 3, 3), bias");
         }},
        {"conv_transpose2d_input_channels_relu", [](Rng& r) {
             return conv(TGL_OP_CONV_TRANSPOSE2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 2, 0, TGL_ACTIVATION_RELU),
                         {floats({1, 20, 8, 8}, Kind::Contiguous, r), floats({20, 3, 3, 3}, Kind::Contiguous, r),
                          floats({3}, Kind::Contiguous, r)},
                         {1, 3, 17, 17}, "conv_transpose2d (1, 20, 8, 8) by (20, 3, 3, 3), stride 2, bias, relu");
         }},
        {"conv_transpose1d_input_channels", [](Rng& r) {
             return conv(TGL_OP_CONV_TRANSPOSE1D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 3),
                         {floats({1, 40, 30}, Kind::Contiguous, r), floats({40, 2, 4}, Kind::Contiguous, r), absent_input()},
                         {1, 2, 91}, "conv_transpose1d (1, 40, 30) by (40, 2, 4), stride 3");
         }},
        {"conv2d_backward_input_dy_channels", [](Rng& r) {
             return conv(TGL_OP_CONV2D_BACKWARD_INPUT, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1),
                         {floats({1, 24, 8, 8}, Kind::Contiguous, r), floats({24, 3, 3, 3}, Kind::Contiguous, r)},
                         {1, 3, 8, 8}, "conv2d_backward_input dy (1, 24, 8, 8), w (24, 3, 3, 3), pad 1");
         }},
        {"conv2d_backward_weight_x_channels", [](Rng& r) {
             return spec(TGL_OP_CONV2D_BACKWARD_WEIGHT, conv_params(),
                         {floats({1, 24, 8, 8}, Kind::Contiguous, r), floats({1, 4, 6, 6}, Kind::Contiguous, r)},
                         {output_of(F32, {4, 24, 3, 3}), output_of(F32, {4})}, CompareMode::Nmse, tol::kMatmul,
                         "conv2d_backward_weight x (1, 24, 8, 8), dy (1, 4, 6, 6), db");
         }},
        {"conv2d_depthwise_groups", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1, TGL_ACTIVATION_RELU, 8),
                         {floats({1, 8, 16, 16}, Kind::Contiguous, r), floats({8, 1, 3, 3}, Kind::Contiguous, r),
                          floats({8}, Kind::Contiguous, r)},
                         {1, 8, 16, 16}, "depthwise conv2d (1, 8, 16, 16) by (8, 1, 3, 3), pad 1, bias, relu");
         }},
        {"conv2d_groups_then_input_channels", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 0, TGL_ACTIVATION_RELU, 2),
                         {floats({1, 48, 8, 8}, Kind::Contiguous, r), floats({6, 24, 3, 3}, Kind::Contiguous, r),
                          floats({6}, Kind::Contiguous, r)},
                         {1, 6, 6, 6}, "conv2d (1, 48, 8, 8) by (6, 24, 3, 3), groups 2, bias, relu");
         }},
        {"conv_transpose2d_groups", [](Rng& r) {
             return conv(TGL_OP_CONV_TRANSPOSE2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 2, 1, TGL_ACTIVATION_NONE, 4),
                         {floats({1, 16, 9, 9}, Kind::Contiguous, r), floats({16, 1, 3, 3}, Kind::Contiguous, r),
                          floats({4}, Kind::Contiguous, r)},
                         {1, 4, 17, 17}, "conv_transpose2d (1, 16, 9, 9) by (16, 1, 3, 3), stride 2, pad 1, groups 4, bias");
         }},
        {"conv2d_backward_input_groups", [](Rng& r) {
             return conv(TGL_OP_CONV2D_BACKWARD_INPUT, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1, TGL_ACTIVATION_NONE, 2),
                         {floats({1, 24, 8, 8}, Kind::Contiguous, r), floats({24, 2, 3, 3}, Kind::Contiguous, r)},
                         {1, 4, 8, 8}, "conv2d_backward_input dy (1, 24, 8, 8), w (24, 2, 3, 3), pad 1, groups 2");
         }},
        {"conv2d_backward_weight_groups", [](Rng& r) {
             return spec(TGL_OP_CONV2D_BACKWARD_WEIGHT, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 0, TGL_ACTIVATION_NONE, 2),
                         {floats({1, 24, 8, 8}, Kind::Contiguous, r), floats({1, 4, 6, 6}, Kind::Contiguous, r)},
                         {output_of(F32, {4, 12, 3, 3}), output_of(F32, {4})}, CompareMode::Nmse, tol::kMatmul,
                         "conv2d_backward_weight x (1, 24, 8, 8), dy (1, 4, 6, 6), groups 2, db");
         }},
        // pool: N and C
        {"max_pool2d_indices", [](Rng& r) {
             return spec(TGL_OP_MAX_POOL, pool_params(3, 2, 1), {floats({6, 4, 10, 10}, Kind::Negative, r)},
                         {output_of(F32, {6, 4, 5, 5}), output_of(TGL_DTYPE_I32, {6, 4, 5, 5})}, CompareMode::ExactBits, 0,
                         "max_pool 3x3 stride 2 pad 1 of (6, 4, 10, 10), indices");
         }},
        {"avg_pool1d", [](Rng& r) {
             return spec(TGL_OP_AVG_POOL, pool_params(4, 2, 0), {floats({3, 20, 50}, Kind::Contiguous, r)},
                         {output_of(F32, {3, 20, 24})}, CompareMode::Nmse, tol::kReduction, "avg_pool 4 stride 2 of (3, 20, 50)");
         }},
        {"global_avg_pool", [](Rng& r) {
             return spec(TGL_OP_GLOBAL_AVG_POOL, {}, {floats({8, 6, 7, 9}, Kind::Contiguous, r)}, {output_of(F32, {8, 6})},
                         CompareMode::Nmse, tol::kReduction, "global_avg_pool of (8, 6, 7, 9)");
         }},
        {"upsample_nearest2d", [](Rng& r) {
             return spec(TGL_OP_UPSAMPLE_NEAREST, {}, {floats({3, 5, 8, 8}, Kind::Contiguous, r)}, {output_of(F32, {3, 5, 16, 16})},
                         CompareMode::ExactBits, 0, "upsample_nearest (3, 5, 8, 8) to 16x16");
         }},
        // attention: batch, KV heads with their query heads, query rows (not causal)
        {"attention_gqa_batch_heads", [](Rng& r) { return attention(2, 4, 2, 20, 12, 16, false, false, r); }},
        {"attention_gqa_causal", [](Rng& r) { return attention(2, 6, 2, 20, 12, 16, true, false, r); }},
        {"attention_rows_mask", [](Rng& r) { return attention(1, 1, 1, 200, 12, 16, false, true, r); }},
        {"attention_mqa_heads", [](Rng& r) { return attention(1, 8, 1, 20, 12, 16, false, false, r); }},
        // attention_backward: batch, KV heads with their q heads
        {"attention_backward_gqa_causal", [](Rng& r) { return attention_backward(3, 6, 2, 8, 6, 8, true, r); }},
        {"attention_backward_heads", [](Rng& r) { return attention_backward(4, 5, 5, 8, 7, 8, false, r); }},
        // causal rows: each piece with the keys its rows see (Sq > Skv: the first rows see none)
        {"attention_causal_rows_mask", [](Rng& r) { return attention(1, 1, 1, 150, 15, 16, true, true, r); }},
        {"attention_causal_rows_unseen", [](Rng& r) { return attention(1, 2, 1, 201, 13, 16, true, false, r); }},
        // ABI 1.3 options: sinks follow the q heads; a bottom-right causal window is cut along rows
        // (each piece keeps P(i)); ALiBi is not cut along heads (its slopes are the whole op's), nor
        // top-left alignment along rows: those cut along the batch only.
        {"attention_sinks_heads_window_rows", [](Rng& r) {
             const tgl_attention_params p = attention_opts(1, 2.0f, 0.0f, 5);
             return attention(1, 4, 2, 150, 15, 16, true, false, r, &p, true);
         }},
        {"attention_alibi_topleft_batch", [](Rng& r) {
             const tgl_attention_params p = attention_opts(2, 0.0f, 8.0f, 4);
             // 8 query rows: a batch's piece (ALiBi keeps its heads, top-left its rows together)
             // holds its packed k, v and row partials within the 4 KiB window under the minimum
             // limits too (20 rows needed 5,856 bytes: refused there, as it should be).
             return attention(3, 3, 1, 8, 12, 16, false, true, r, &p, true);
         }},
    };
}

class WindowDiff : public SeededTestWithParam<WindowCase> {};

TEST_P(WindowDiff, MatchesReference) { check(GetParam().build(rng_), &windowed_device()); }

INSTANTIATE_TEST_SUITE_P(Diff, WindowDiff, ::testing::ValuesIn(window_cases()), window_case_name);

// The cases, against the device's real limit (128 MiB on llvmpipe, also under
// TGL_GLES_LIMITS=minimum): operands of 128 to 256 MiB. 6-19 s each on llvmpipe (mostly the
// harness's host work on 36-64 M elements), so they run in their own ctest, labelled big
// (tests/differential/CMakeLists.txt), and not in the default and minimum runs.
std::vector<WindowCase> big_cases() {
    return {
        {"sum_all_8192x8192_big", [](Rng& r) { return reduce(TGL_OP_SUM, {8192, 8192}, {}, {}, r, -1, 1); }},
        {"matmul_weight_4096x14336_big", [](Rng& r) { return matmul({2, 4096}, {4096, 14336}, {2, 14336}, r); }},
        {"linear_weight_4096x14336_big", [](Rng& r) { return linear({2, 14336}, 4096, true, r); }},
        {"embedding_table_140MiB_big", [](Rng& r) { return indexing(TGL_OP_INDEX_SELECT, {36000, 1024}, 0, {64}, r); }},
        {"embedding_output_137MiB_big", [](Rng& r) { return indexing(TGL_OP_INDEX_SELECT, {1000, 4096}, 0, {8770}, r); }},
        {"var_all_128MiB_big", [](Rng& r) {
             return moments(TGL_OP_VAR, {4100, 8200}, {}, {}, r, 3, 5, 1, false, F32, Kind::Contiguous);
         }},
        {"grouped_linear_experts_144MiB_big", [](Rng& r) { return grouped_linear(6, 8, 1152, 4096, true, r); }},
        {"linear_qkv_weight_144MiB_big", [](Rng& r) { return linear_qkv({2, 4096}, 4096, 2560, 2560, r); }},
        // a 128k vocabulary over 512 tokens: 256 MiB of f32 logits, the mean over every row's loss
        {"cross_entropy_128k_vocab_512_tokens_256MiB_big", [](Rng& r) {
             return cross_entropy(TGL_OP_CROSS_ENTROPY, {512, 131072}, TGL_REDUCTION_MEAN, 0.1f, r);
         }},
        // a 1024 x 1024 image of 64 channels (256 MiB f32) in pieces of its input channels; a
        // pointwise (1x1) convolution to 4 channels, so that llvmpipe takes seconds, not minutes
        {"conv2d_input_1x64x1024x1024_256MiB_big", [](Rng& r) {
             return conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 0, TGL_ACTIVATION_RELU),
                         {floats({1, 64, 1024, 1024}, Kind::Contiguous, r), floats({4, 64, 1, 1}, Kind::Contiguous, r),
                          floats({4}, Kind::Contiguous, r)},
                         {1, 4, 1024, 1024}, "conv2d (1, 64, 1024, 1024) by (4, 64, 1, 1), bias, relu");
         }},
        {"scatter_kv_cache_144MiB_big", [](Rng& r) {
             return scatter(TGL_OP_SCATTER, {1, 8, 4608, 1024}, 2, {1, 8, 4, 1024}, {1, 8, 4, 1024}, 4607, r);
         }},
    };
}

class WindowBigDiff : public SeededTestWithParam<WindowCase> {};

TEST_P(WindowBigDiff, MatchesReference) { check(GetParam().build(rng_)); }

INSTANTIATE_TEST_SUITE_P(Diff, WindowBigDiff, ::testing::ValuesIn(big_cases()), window_case_name);

// Runs an op whose index holds a bad value: INDEX_OUT_OF_RANGE at the wait, saying `where`, nothing
// written, the device usable afterwards.
void expect_bad_index_writes_nothing(Device& d, tgl_op op, const void* params, const std::vector<InputArg>& in,
                                     const std::vector<OutputArg>& out, const std::string& where) {
    tgl_test::OpCall call(d, in, out);
    ASSERT_EQ(call.run(op, params), TGL_OK) << d.plugin().last_error();
    const tgl_status st = d.api().synchronize(d.handle());
    const std::string msg = d.plugin().last_error();
    EXPECT_EQ(st, TGL_ERROR_INDEX_OUT_OF_RANGE) << msg;
    EXPECT_NE(msg.find(where), std::string::npos) << msg;
    EXPECT_TRUE(call.all_unchanged());
    EXPECT_EQ(d.api().synchronize(d.handle()), TGL_OK) << d.plugin().last_error();
}

// set_rows in place (y the identical view of x) into a destination larger than the window: each
// piece writes the rows that land in its window and leaves the rest; the same bytes as the CPU
// reference.
void expect_set_rows_in_place_matches(Device& subject, const Shape& cache, int axis, const std::vector<double>& index, Rng& rng) {
    Shape rows = cache;
    rows[size_t(axis)] = int64_t(index.size());
    int64_t n = 1, k = 1;
    for (int64_t v : cache) n *= v;
    for (int64_t v : rows) k *= v;
    std::vector<double> xv(static_cast<size_t>(n), 0.0), sv(static_cast<size_t>(k), 0.0);
    for (double& v : xv) v = double(float(rng.uniform(-2, 2)));
    for (double& v : sv) v = double(float(rng.uniform(-2, 2)));
    tgl_axis_params p{sizeof p, axis, 0};
    std::vector<std::vector<double>> got;
    for (Device* d : {&shared_device(Role::Reference), &subject}) {
        DeviceTensor x(*d, contiguous(cache), F32), idx(*d, contiguous({int64_t(index.size())}), TGL_DTYPE_I32),
            src(*d, contiguous(rows), F32);
        x.set_logical(xv);
        idx.set_logical(index);
        src.set_logical(sv);
        d->run_ok(TGL_OP_SET_ROWS, &p, {x.desc(), idx.desc(), src.desc()}, {x.desc()});
        got.push_back(x.read_logical());
        EXPECT_TRUE(src.unchanged());
    }
    EXPECT_TRUE(compare(F32, got[1], got[0], cache, 0, CompareMode::ExactBits, "set_rows in place, subject vs reference"));
}

TEST(WindowIndex, SetRowsInPlaceMatchesReference) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    // A (2, 128, 4, 8) f32 cache (32 KiB: 8 windows) written at tokens 127, 3, 64, 3 (position 3 wins).
    expect_set_rows_in_place_matches(windowed_device(), {2, 128, 4, 8}, 1, {127, 3, 64, 3}, rng);
    // 400 rows of 3 into a (40, 3) cache: src (4.8 KB) in pieces of its rows, duplicates across pieces.
    std::vector<double> index(400);
    for (double& v : index) v = double(rng.integer(0, 39));
    expect_set_rows_in_place_matches(windowed_device(), {40, 3}, 0, index, rng);
}

// The case against the real limit (label big, with WindowBigDiff): a KV cache of
// (1, 8, 4608, 1024) f32, 144 MiB, written in place at 3 tokens.
TEST(WindowBigDiffInPlace, SetRowsKvCache144MiB) {
    Rng rng = case_rng();
    expect_set_rows_in_place_matches(shared_device(Role::Subject), {1, 8, 4608, 1024}, 2, {4607, 0, 2301}, rng);
}

// set_rows in pieces: a bad index writes nothing in any piece.
TEST(WindowIndex, SetRowsBadIndexWritesNothing) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Device& d = windowed_device();
    tgl_axis_params p{sizeof p, 0, 0};
    expect_bad_index_writes_nothing(d, TGL_OP_SET_ROWS, &p,
                                    {input_values(F32, {3000, 2}, std::vector<double>(6000, 0.5)),
                                     input_values(TGL_DTYPE_I32, {4}, {2999, 0, 3000, 5}),
                                     input_values(F32, {4, 2}, std::vector<double>(8, 1))},
                                    {output_of(F32, {3000, 2})}, "holds 3000 at position 2");
}

// A bad index in any piece: nothing written by any piece, the error reported once (at the wait) with
// its position in the whole index tensor, and the device usable afterwards.
TEST(WindowIndex, BadIndexWritesNothing) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    Device& d = windowed_device();
    std::vector<double> index(300);
    for (double& v : index) v = double(rng.integer(0, 499));
    index[217] = 500;
    tgl_axis_params p{sizeof p, 0, 0};
    InputArg table = input_values(F32, {500, 8}, std::vector<double>(4000, 1.5));
    expect_bad_index_writes_nothing(d, TGL_OP_INDEX_SELECT, &p, {table, input_values(TGL_DTYPE_I32, {300}, index)},
                                    {output_of(F32, {300, 8})}, "holds 500 at position 217");
    index[217] = 499;
    check(spec(TGL_OP_INDEX_SELECT, param_bytes(p), {table, input_values(TGL_DTYPE_I32, {300}, index)},
               {output_of(F32, {300, 8})}, CompareMode::ExactBits, 0, "index_select after the error"),
          &d);
}

// scatter_add in pieces (y in windows of the scatter axis): a bad index in a later piece's part of
// the index writes nothing in any piece (y keeps its bytes: not even x's copy lands).
TEST(WindowIndex, ScatterBadIndexWritesNothing) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    Device& d = windowed_device();
    std::vector<double> index(200);
    for (double& v : index) v = double(rng.integer(0, 2999));
    index[173] = -1;
    tgl_axis_params p{sizeof p, 0, 0};
    expect_bad_index_writes_nothing(d, TGL_OP_SCATTER_ADD, &p,
                                    {input_values(F32, {3000}, std::vector<double>(3000, 0.5)),
                                     input_values(TGL_DTYPE_I32, {200}, index), input_values(F32, {200}, std::vector<double>(200, 1))},
                                    {output_of(F32, {3000})}, "holds -1 at position 173");
}

// grouped_linear in pieces (experts in windows, tokens cut): one bad expert index writes nothing.
TEST(WindowIndex, GroupedLinearBadIndexWritesNothing) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    Device& d = windowed_device();
    std::vector<double> index(90);
    for (double& v : index) v = double(rng.integer(0, 5));
    index[61] = 6;
    tgl_linear_params p{sizeof p, TGL_ACTIVATION_NONE};
    expect_bad_index_writes_nothing(d, TGL_OP_GROUPED_LINEAR, &p,
                                    {input_values(F32, {90, 12}, std::vector<double>(1080, 0.25)),
                                     input_values(F32, {6, 30, 12}, std::vector<double>(2160, 0.5)),
                                     input_values(TGL_DTYPE_I32, {90}, index), absent_input()},
                                    {output_of(F32, {90, 30})}, "holds 6 at position 61");
}

// gather with an index larger than one window (checked window by window): a bad index in the
// second window writes nothing, reported at its position in the whole index.
TEST(WindowIndex, GatherIndexInWindowsBadIndexWritesNothing) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    Device& d = windowed_device();
    std::vector<double> index(1200);
    for (double& v : index) v = double(rng.integer(0, 29));
    index[1000] = 30;
    tgl_axis_params p{sizeof p, 1, 0};
    expect_bad_index_writes_nothing(d, TGL_OP_GATHER, &p,
                                    {input_values(F32, {40, 30}, std::vector<double>(1200, 1.5)), input_values(TGL_DTYPE_I32, {40, 30}, index)},
                                    {output_of(F32, {40, 30})}, "holds 30 at position 1000");
}

// one_hot in pieces: the index tensor is checked once, before any piece writes.
TEST(WindowIndex, OneHotBadIndexWritesNothing) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    Device& d = windowed_device();
    std::vector<double> index(600);
    for (double& v : index) v = double(rng.integer(0, 9));
    index[417] = 10;
    tgl_unary_params p{sizeof p, 0};
    expect_bad_index_writes_nothing(d, TGL_OP_ONE_HOT, &p, {input_values(TGL_DTYPE_I32, {20, 30}, index)},
                                    {output_of(F32, {20, 30, 10})}, "holds 10 at position 417");
}

// cross_entropy, its backward (rows in pieces) and embedding_backward (dW's rows and the tokens in
// pieces): a bad target or index in a later piece's rows writes nothing in any piece.
TEST(WindowIndex, GradBadIndexWritesNothing) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    Device& d = windowed_device();
    std::vector<double> target(300);
    for (double& v : target) v = double(rng.integer(0, 19));
    target[251] = 20;
    const InputArg logits = input_values(F32, {300, 20}, random_values(6000, rng, float_values(F32, -3, 3)));
    for (uint32_t reduction : {TGL_REDUCTION_MEAN, TGL_REDUCTION_NONE}) {
        tgl_cross_entropy_params p{sizeof p, reduction, -100, 0.1f};
        const Shape ls = reduction == TGL_REDUCTION_NONE ? Shape{300} : Shape{};
        expect_bad_index_writes_nothing(d, TGL_OP_CROSS_ENTROPY, &p, {logits, input_values(TGL_DTYPE_I32, {300}, target)},
                                        {output_of(F32, ls)}, "holds 20 at position 251");
    }
    target[251] = -5;  // not ignore_index
    tgl_cross_entropy_params mean{sizeof mean, TGL_REDUCTION_MEAN, -100, 0.0f};
    expect_bad_index_writes_nothing(d, TGL_OP_CROSS_ENTROPY_BACKWARD, &mean,
                                    {logits, input_values(TGL_DTYPE_I32, {300}, target), input_values(F32, {}, {1.0})},
                                    {output_of(F32, {300, 20})}, "holds -5 at position 251");
    std::vector<double> index(100);
    for (double& v : index) v = double(rng.integer(0, 59));
    index[83] = 60;
    expect_bad_index_writes_nothing(d, TGL_OP_EMBEDDING_BACKWARD, nullptr,
                                    {input_values(F32, {100, 24}, std::vector<double>(2400, 0.5)), input_values(TGL_DTYPE_I32, {100}, index)},
                                    {output_of(F32, {60, 24})}, "holds 60 at position 83");
}

// In pieces, cross_entropy's mean and embedding_backward's sums come out bit for bit as the
// unsplit op's on the same device: every row's loss lands in one scratch and one pass sums them
// in the unsplit order; each dW element adds its tokens in position order across the pieces,
// its f32 accumulator stored and reloaded exactly between them (f16 dW: in an f32 copy, rounded
// once after the pieces, as the unsplit op rounds its accumulator).
TEST(WindowExact, GradSumsMatchTheUnsplitOpBitForBit) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    for (const MultiSpec& s : {cross_entropy(TGL_OP_CROSS_ENTROPY, {300, 20}, TGL_REDUCTION_MEAN, 0.1f, rng),
                               cross_entropy(TGL_OP_CROSS_ENTROPY, {12, 20, 8}, TGL_REDUCTION_SUM, 0.0f, rng),
                               cross_entropy(TGL_OP_CROSS_ENTROPY_BACKWARD, {250, 12}, TGL_REDUCTION_MEAN, 0.1f, rng),
                               embedding_backward({2, 150}, 40, 8, 3, rng),
                               embedding_backward({400}, 300, 8, -1, rng, TGL_DTYPE_F16)}) {
        const void* params = s.params.empty() ? nullptr : s.params.data();
        const std::vector<double> split = run_op_values(windowed_device(), s.op, params, s.inputs, s.outputs)[0];
        const std::vector<double> whole = run_op_values(shared_device(Role::Subject), s.op, params, s.inputs, s.outputs)[0];
        EXPECT_TRUE(compare(s.outputs[0].dtype, split, whole, s.outputs[0].view.shape, 0, CompareMode::ExactBits,
                            s.what + ": in pieces vs whole"));
    }
}

// A convolution in pieces over its input channels against the unsplit op on the same device: the
// same products, their f32 sums added piece by piece instead of in one run, the bias and the
// activation applied once, at the end. f32: NMSE within kConvPieces (f32 rounding of a reordered
// sum); f16: y rounded once from f32 sums that agree that closely, so every element within one
// f16 step and the sums' few f32 steps (kConvPiecesF16 bounds the NMSE of those steps).
TEST(WindowExact, ConvInputChannelPiecesMatchTheUnsplitOp) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    constexpr double kConvPieces = 1e-12, kConvPiecesF16 = 1e-7;
    Rng rng = case_rng();
    int ran = 0;
    for (const WindowCase& c : window_cases()) {
        if (c.name != "conv2d_input_channels_bias_relu" && c.name != "conv2d_input_channels_f16_gelu" &&
            c.name != "conv2d_input_and_output_channels_silu" && c.name != "conv_transpose2d_input_channels_relu" &&
            c.name != "conv2d_backward_input_dy_channels")
            continue;
        ++ran;
        const MultiSpec s = c.build(rng);
        const void* params = s.params.empty() ? nullptr : s.params.data();
        const std::vector<double> split = run_op_values(windowed_device(), s.op, params, s.inputs, s.outputs)[0];
        const std::vector<double> whole = run_op_values(shared_device(Role::Subject), s.op, params, s.inputs, s.outputs)[0];
        const bool f16 = s.outputs[0].dtype == F16;
        EXPECT_TRUE(compare(s.outputs[0].dtype, split, whole, s.outputs[0].view.shape, f16 ? kConvPiecesF16 : kConvPieces,
                            CompareMode::Nmse, s.what + ": in pieces vs whole"));
        if (f16) {
            // One f16 step (2^-10 of the value's binade, and 2^-24 below the smallest normal, 2^-14),
            // plus the f32 sums' reordering error: a few f32 steps of the partial sums, which for an
            // element that cancels to near 0 exceed its own f16 step (seed 3847083780518805872:
            // 0.000211 two steps apart). The partials are of the size of the largest |y|; over 151
            // seeds on llvmpipe the excess reached 2^-23.5 of it; allowed: 2^-19 (32 times that).
            constexpr double kF16MinNormal = 0x1p-14;
            double largest = 0;
            for (double w : whole) largest = std::max(largest, std::abs(w));
            for (size_t i = 0; i < split.size(); ++i) {
                const double step = std::ldexp(std::max(std::abs(whole[i]), kF16MinNormal), -10);
                ASSERT_LE(std::abs(split[i] - whole[i]), step + std::ldexp(largest, -19))
                    << s.what << ": element " << i << " in pieces " << split[i] << ", whole " << whole[i]
                    << " (largest |y| " << largest << ")";
            }
        }
    }
    EXPECT_EQ(ran, 5);
}

// An op run in pieces inside a graph: recorded once (partial results, the mean's divisor, std's
// weights, the table, y and expert windows, the one index check, the Grad ops' scratch and a
// convolution's f32 copy of its f16 y held by the graph), replayed over fresh inputs.
TEST(WindowGraph, ReplaysPieces) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    Device& d = windowed_device();
    auto make = [](Rng& r) {
        return std::vector<MultiSpec>{reduce(TGL_OP_MEAN, {301, 20}, {0}, {20}, r),
                                      indexing(TGL_OP_INDEX_SELECT, {500, 8}, 0, {300}, r),
                                      moments(TGL_OP_STD, {301, 20}, {0}, {20}, r, -2, 2, 1, false, F32, Kind::Contiguous),
                                      scatter(TGL_OP_SCATTER_ADD, {700, 3}, 0, {30, 3}, {30, 3}, 650, r, F32, Kind::Contiguous),
                                      grouped_linear(37, 7, 20, 30, true, r),
                                      cross_entropy(TGL_OP_CROSS_ENTROPY, {300, 20}, TGL_REDUCTION_MEAN, 0.1f, r, F32,
                                                    Kind::Contiguous, 7),
                                      cross_entropy(TGL_OP_CROSS_ENTROPY_BACKWARD, {250, 12}, TGL_REDUCTION_SUM, 0.0f, r, F32,
                                                    Kind::Contiguous, -100),
                                      embedding_backward({2, 150}, 40, 8, 5, r),
                                      conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1, TGL_ACTIVATION_RELU),
                                           {floats({1, 24, 10, 10}, Kind::Contiguous, r), floats({5, 24, 3, 3}, Kind::Contiguous, r),
                                            floats({5}, Kind::Contiguous, r)},
                                           {1, 5, 10, 10}, "conv2d in pieces of its input channels, bias, relu"),
                                      conv(TGL_OP_CONV2D, conv_params(TGL_CONV_LAYOUT_CHANNELS_FIRST, 1, 1, TGL_ACTIVATION_GELU),
                                           {halves({1, 40, 9, 9}, r), halves({6, 40, 3, 3}, r, -0.5, 0.5), halves({6}, r)},
                                           {1, 6, 9, 9}, "f16 conv2d in pieces of its input channels (an f32 copy of y), gelu", F16)};
    };
    const std::vector<MultiSpec> specs = make(rng);
    std::vector<std::unique_ptr<tgl_test::OpCall>> calls;
    ASSERT_EQ(d.api().graph_begin(d.handle()), TGL_OK) << d.plugin().last_error();
    bool recorded = true;
    for (const MultiSpec& s : specs) {
        calls.push_back(std::make_unique<tgl_test::OpCall>(d, s.inputs, s.outputs));
        const tgl_status st = calls.back()->run(s.op, s.params.data());
        EXPECT_EQ(st, TGL_OK) << s.what << ": " << d.plugin().last_error();
        if (st != TGL_OK) {
            recorded = false;
            break;
        }
    }
    // The recording ends even after a failed op: the shared device runs the later tests' ops.
    tgl_graph g = 0;
    const tgl_status ended = d.api().graph_end(d.handle(), &g);
    if (!recorded) {
        if (ended == TGL_OK) d.api().graph_destroy(d.handle(), g);
        return;
    }
    ASSERT_EQ(ended, TGL_OK) << d.plugin().last_error();
    for (int round = 0; round < 2; ++round) {
        const std::vector<MultiSpec> fresh = make(rng);
        for (size_t i = 0; i < specs.size(); ++i)
            for (size_t k = 0; k < fresh[i].inputs.size(); ++k) calls[i]->input(k)->set_storage(fresh[i].inputs[k].storage);
        ASSERT_EQ(d.api().graph_replay(d.handle(), g), TGL_OK) << d.plugin().last_error();
        for (size_t i = 0; i < specs.size(); ++i) {
            const MultiSpec& s = fresh[i];
            std::vector<double> want = run_op_values(shared_device(Role::Reference), s.op, s.params.data(), s.inputs, s.outputs)[0];
            std::vector<double> got = calls[i]->read()[0];
            EXPECT_TRUE(compare(s.outputs[0].dtype, got, want, s.outputs[0].view.shape, s.tolerance[0], s.mode[0],
                                "round " + std::to_string(round) + ", " + s.what));
        }
    }
    EXPECT_EQ(d.api().graph_destroy(d.handle(), g), TGL_OK) << d.plugin().last_error();
}

// What cannot be cut fails before anything is queued: RESOURCE_EXHAUSTED naming the limit and why.
TEST(WindowRefused, SaysWhy) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Rng rng = case_rng();
    Device& d = windowed_device();
    struct Refused {
        tgl_op op;
        std::vector<uint8_t> params;
        std::vector<InputArg> in;
        std::vector<OutputArg> out;
        std::string why;
    };
    tgl_sort_params sort{};
    sort.struct_size = sizeof sort;
    sort.axis = -1;
    const tgl_narrow_params narrow{sizeof narrow, 0, 10, 30};
    const tgl_group_norm_params group_norm{sizeof group_norm, 2, 1e-5f, 0};
    const MultiSpec causal = attention(1, 1, 1, 100, 70, 16, true, false, rng);  // one head's keys: 4480 bytes
    InputArg transposed_index;  // (40, 30) viewing a (30, 40) tensor: 4800 bytes, no row of it consecutive
    transposed_index.dtype = TGL_DTYPE_I32;
    transposed_index.view = make_view({40, 30}, Layout{"transposed", {1, 0}, {}, {}, 0, 0});
    transposed_index.storage = random_storage(TGL_DTYPE_I32, transposed_index.view.storage, rng, int_values(TGL_DTYPE_I32, 0, 39));
    const std::vector<Refused> cases = {
        {TGL_OP_SORT, param_bytes(sort), {floats({3000}, Kind::Contiguous, rng)},
         {output_of(F32, {3000}), output_of(TGL_DTYPE_I32, {3000})}, "each of its rows"},
        {TGL_OP_MATMUL, matmul_params(false, false, 1, 0),
         {floats({4, 3000}, Kind::Contiguous, rng, -1, 1, TGL_DTYPE_F16), floats({3000, 2}, Kind::Contiguous, rng, -1, 1, TGL_DTYPE_F16)},
         {output_of(TGL_DTYPE_F16, {4, 2})}, "rounded once per piece"},
        {TGL_OP_NARROW, param_bytes(narrow), {floats({100, 50}, Kind::Contiguous, rng)}, {output_of(F32, {30, 50})},
         "the axes it copies unchanged"},
        {TGL_OP_CONV2D, conv_params(), {floats({1, 2, 20, 600}, Kind::Contiguous, rng), floats({4, 2, 3, 3}, Kind::Contiguous, rng),
                                        absent_input()},
         {output_of(F32, {1, 4, 18, 598})}, "one channel's input rows of one output row must fit"},
        {TGL_OP_CONV_TRANSPOSE2D, conv_params(), {floats({1, 2, 40, 40}, Kind::Contiguous, rng),
                                                  floats({2, 1, 3, 3}, Kind::Contiguous, rng), absent_input()},
         {output_of(F32, {1, 1, 42, 42})}, "one channel's plane of the input and of the output must fit"},
        {TGL_OP_MAX_POOL, pool_params(2, 2, 0), {floats({1, 1, 40, 40}, Kind::Contiguous, rng)},
         {output_of(F32, {1, 1, 20, 20}), absent_output()}, "one (n, c) plane"},
        {TGL_OP_ATTENTION, causal.params, causal.inputs, causal.outputs, "one head's keys and values must fit"},
        {TGL_OP_CROSS_ENTROPY, {}, {floats({1100}, Kind::Contiguous, rng), input_values(TGL_DTYPE_I32, {}, {3})},
         {output_of(F32, {})}, "one row of logits (its C classes) must fit"},
        {TGL_OP_CROSS_ENTROPY, {}, {floats({1100, 2}, Kind::Contiguous, rng), ints({1100}, TGL_DTYPE_I32, 0, 1, rng)},
         {output_of(F32, {})}, "checked in one pass before anything is written"},
        {TGL_OP_LAYER_NORM, param_bytes(tgl_layer_norm_params{sizeof(tgl_layer_norm_params), 2, 1e-5f, 0}),
         {floats({40, 40}, Kind::Contiguous, rng), absent_input(), absent_input()}, {output_of(F32, {40, 40})},
         "only along one axis"},
        {TGL_OP_GROUP_NORM, param_bytes(group_norm), {floats({1, 4, 30, 30}, Kind::Contiguous, rng), absent_input(), absent_input()},
         {output_of(F32, {1, 4, 30, 30})}, "one sample must fit"},
        {TGL_OP_LINEAR_QKV, {}, {floats({2, 1100}, Kind::Contiguous, rng), floats({3, 1100}, Kind::Contiguous, rng), absent_input()},
         {output_of(F32, {2, 1}), output_of(F32, {2, 1}), output_of(F32, {2, 1})}, "one row of x, W or y must fit"},
        {TGL_OP_GROUPED_LINEAR, {}, {floats({2, 1100}, Kind::Contiguous, rng), floats({3, 2, 1100}, Kind::Contiguous, rng),
                                     input_values(TGL_DTYPE_I32, {2}, {0, 2}), absent_input()},
         {output_of(F32, {2, 2})}, "one row of x, W or y must fit"},
        {TGL_OP_SCATTER, {}, {floats({3000}, Kind::Contiguous, rng), ints({1100}, TGL_DTYPE_I32, 0, 2999, rng),
                              floats({1100}, Kind::Contiguous, rng)},
         {output_of(F32, {3000})}, "one such row of each must fit one window"},
        {TGL_OP_GATHER, param_bytes(tgl_axis_params{sizeof(tgl_axis_params), 0, 0}), {floats({40, 30}, Kind::Contiguous, rng), transposed_index},
         {output_of(F32, {40, 30})}, "such a cut does not shrink it"},
        {TGL_OP_ROPE, {}, {floats({40, 32}, Kind::Contiguous, rng), ints({40}, TGL_DTYPE_I32, 0, 9, rng), absent_input(),
                           floats({10, 16}, Kind::Contiguous, rng), floats({10, 16}, Kind::Contiguous, rng)},
         {output_of(F32, {40, 32})}, "rope with a cos/sin cache is not cut"},
    };
    for (const Refused& c : cases) {
        tgl_test::OpCall call(d, c.in, c.out);
        const tgl_status st = call.run(c.op, c.params.data());
        const std::string msg = d.plugin().last_error();
        EXPECT_EQ(st, TGL_ERROR_RESOURCE_EXHAUSTED) << msg;
        for (const std::string& token : {std::string("GL_MAX_SHADER_STORAGE_BLOCK_SIZE"), std::string("max_window"), c.why})
            EXPECT_NE(msg.find(token), std::string::npos) << "\"" << token << "\" not in: " << msg;
        EXPECT_TRUE(call.all_unchanged());
    }
}

}  // namespace
}  // namespace diff
