// Operands larger than one SSBO window. A shader sees each operand through one SSBO binding, and
// one binding covers at most max_window_bytes() (GL_MAX_SHADER_STORAGE_BLOCK_SIZE: 128 MiB at the
// OpenGL ES 3.1 minimum and on llvmpipe). Binding one operand several times does not scale (4 SSBO
// blocks per shader at the minimum, and GLSL ES 3.10 indexes block arrays by constants only), so
// an op with an operand that does not fit runs in pieces instead: it is cut along an axis of its
// iteration space (which operand axes follow that axis is the family's rule, cut_axes below),
// recursively, until every operand of every piece fits one window. Each piece is validated and
// planned as an ordinary op (validate_op on the cut views), and the dispatches of all pieces are
// queued together, in order: no host wait, and nothing queued when any piece fails to plan.
//   Independent axes (an output axis and the input axes that follow it): each piece writes its own
//     part of the outputs.
//   Accumulate (matmul's K): the first piece computes C = alpha A1 B1 + beta C, the others
//     C = alpha Ai Bi + C. (set_rows' K rows: the first piece y = x with its rows, the others
//     their rows in place over y. A convolution's input channels, with groups == 1: the first
//     piece stores its channels' sum in f32, each later one adds its own to it, and only the last
//     adds the bias and applies the activation; an f16 y accumulates in an f32 copy, rounded once
//     after the pieces.)
//     A convolution's groups (groups > 1): each piece a run of whole groups (its groups
//     parameter their count), which may then be cut as a convolution of its own.
//     An operand may follow an axis several elements per index (attention's q heads per KV head;
//     reshape's x (4, 10) as y's 40).
//     A causal attention's query rows take the prefix of the keys their last row sees; a
//     convolution's output rows the input rows they read (its pads what lies outside x); sample's
//     rows their place in the Philox stream. An output that sums over the axis (layer/rms norm
//     backward's dgamma, dbeta) gets each piece's sums as f32 partial results, added up after in
//     f32 (an f16 output rounded once, at the end).
//     Consecutive rows (cross_entropy's positions, embedding_backward's tokens): the outermost axis
//     with more than one row, so that each piece is a run of rows of the whole op (row_lo); the
//     whole target or index is checked once, before any piece, into a scratch the pieces share
//     (each row's target and the count of those not ignored; the tokens sorted by index and each
//     value's run of them). cross_entropy's sum or mean is one pass over every row's loss after
//     the pieces, in the unsplit op's order (bit for bit its value); embedding_backward's pieces
//     of tokens add to dW in token order (an f16 dW through an f32 copy, rounded once after the
//     pieces: bit for bit the unsplit sums).
//   Window (gather's and index_select's table; scatter's and set_rows' x and y along their axis;
//     grouped_linear's experts; embedding_backward's dW rows): each piece holds a window of that
//     axis and handles the indices that land in it; the whole index tensor is checked once, before
//     any piece writes.
//   Route (concat, split, stack along their joined axis; linear_qkv's outputs, each a linear over
//     its rows of W): one piece per routed operand, with its part of the whole.
//   RowPieces (the row of softmax, log_softmax, layer_norm and rms_norm over one axis, where no
//     other cut shrinks an operand): pieces of whole chunks of norm.comp's ROW_CHUNKS; every
//     piece's chunks store their partial statistics into one scratch, then every piece merges the
//     row's partials and writes its part (Splitter::row_pieces, run_norm with a NormRowPiece).
//   Combine (a reduced axis of sum, mean, max, min, prod, logsumexp, norm, any, all, var, std):
//     each piece reduces its part into a scratch tensor of partial results, which the same
//     reduction (sum for mean, then a division by the count) reduces into y; f16 parts are widened
//     to f32 first (y rounded once, at the end); var/std combine the parts' means and variances.
// A piece whose operands fit but whose own plan needs a larger scratch (attention's packed k, v)
// is halved again while a cut shrinks it.
// An op that cannot be cut so that its operands fit fails with RESOURCE_EXHAUSTED, saying why.
#include "gles_device.h"
#include "gles_families.h"

#include "status.h"
#include "validate_util.h"

#include <algorithm>
#include <cstring>

namespace tgl {
namespace gles {

// One op to run: an op, its params' bytes (empty: NULL) and its operands (inputs, then outputs).
struct Piece {
    const OpInfo* info = nullptr;
    std::vector<uint8_t> params;
    std::vector<TensorArg> operands;
    size_t n_inputs = 0;
    int index_axis = 0;    // gather, index_select: the indexed axis
    // ... and the first index of it that x holds (a Window cut; embedding_backward: the first row
    // of dW)
    int64_t axis_lo = 0;
    // the piece's first row of the whole op, along row_step cuts (cross_entropy: position;
    // embedding_backward: token)
    int64_t row_lo = 0;
    // per operand (empty: none): an f32 view that receives the output instead of the operand's own
    // view, which is validated in the op's dtype (an f16 op's dgamma, dbeta partial sums; an f16
    // embedding_backward's dW over pieces of the tokens; an f16 convolution's y over pieces of its
    // input channels); cut with the operand
    std::vector<TensorArg> wide;
    // a convolution over part of its input channels after the first part: adds its sum to what
    // its (f32) y holds
    bool accumulate = false;
};

struct CutAxis {
    enum Kind { Independent, Accumulate, Combine, Window, Route, RowPieces };
    Kind kind = Independent;
    int64_t extent = 0;
    std::vector<int> axis;  // per operand: the operand's axis that follows this one; -1: not cut
    // per operand: elements of its axis per element of this one (empty: 1), e.g. attention's q
    // heads per KV head
    std::vector<int64_t> per = {};
    // Route (concat, split, stack along their axis; linear_qkv's outputs): one piece per operand
    // marked here, holding that operand and its part of the others' axis (the routed operand's
    // size along its `axis`; stack: -1, 1 element)
    std::vector<bool> routed = {};
    const OpInfo* piece_op = nullptr;  // Route: the op each piece runs (null: the op itself)
    // per operand: an axis cut to the prefix [0, hi + shift) of a piece [lo, hi) (empty, -1: none):
    // causal attention's keys, of which rows [lo, hi) see those before hi + Skv - Sq
    std::vector<int> prefix = {};
    int64_t shift = 0;
    bool counts_rows = false;  // sample's rows: a piece's Philox counter offset advances by its first row
    // cross_entropy's outer axes, embedding_backward's token axes: the whole op's rows per element
    // of the axis; a piece's row_lo advances by lo * row_step (where its rows lie in the scratch of
    // the whole op's check)
    int64_t row_step = 0;
    // per operand: an output that sums over this axis (layer/rms norm backward's dgamma, dbeta):
    // each piece writes its part's sums to an f32 scratch of partial results, added up after the
    // pieces in f32 (an f16 output rounded once, at the end)
    std::vector<bool> summed = {};
    // per operand: an output the pieces add to in turn (embedding_backward's dW over pieces of the
    // tokens): an f16 one is accumulated in an f32 copy, rounded once after the pieces
    std::vector<bool> accumulated = {};
    // a convolution's first spatial axis (y's rows): each piece's x cut to the rows its outputs
    // read, its pads what of them lies outside x
    bool halo = false;
    // a convolution's input channels (Accumulate, with `accumulated` y): each piece after the first
    // adds to y (Piece::accumulate); the pieces but the last run without the activation
    bool channel_sums = false;
    // per operand: taken by the last piece only, absent in the others (a convolution's bias, added
    // once the channels' sums are in; conv2d_backward_weight's db, the same in every piece)
    std::vector<bool> last_only = {};
    // a convolution's groups: a piece of groups [lo, hi) runs with groups = hi - lo
    bool groups = false;
    // eye, tril, triu: the matrix's rows (+1) or columns (-1): element (i, j) of a piece [lo, hi)
    // is (i + lo, j) or (i, j + lo) of the whole, so its diagonal is the whole's + lo or - lo
    int diagonal_shift = 0;
};

namespace {

int64_t elem_bytes(const TensorArg& t) { return int64_t(tgl_dtype_size(t.dtype)); }

// byte_lo/byte_hi of a view from its offset, shape and strides (as validate_op computes them).
void set_byte_range(TensorArg& t) {
    t.numel = 1;
    int64_t lo = t.offset, hi = t.offset;
    for (int d = 0; d < t.rank; ++d) {
        t.numel *= t.shape[d];
        if (t.shape[d] == 0) continue;
        const int64_t reach = (t.shape[d] - 1) * t.strides[d];
        (reach < 0 ? lo : hi) += reach;
    }
    if (!t.present() || t.numel == 0) {
        t.byte_lo = t.byte_hi = 0;
        return;
    }
    t.byte_lo = lo * elem_bytes(t);
    t.byte_hi = (hi + 1) * elem_bytes(t);
}

// Elements [lo, hi) of the view along `axis`, clamped to its size (scatter's index and src may be
// shorter than y along the axes they share).
TensorArg cut_view(TensorArg t, int axis, int64_t lo, int64_t hi) {
    hi = std::min(hi, t.shape[axis]);
    lo = std::min(lo, hi);
    t.offset += lo * t.strides[axis];
    t.shape[axis] = hi - lo;
    set_byte_range(t);
    return t;
}

// A contiguous row-major view of `buffer` at element `offset`.
TensorArg contiguous_view(const BufferRef& buffer, tgl_dtype dtype, int rank, const int64_t* shape, int64_t offset) {
    TensorArg t;
    t.buffer = buffer;
    t.dtype = dtype;
    t.rank = rank;
    t.offset = offset;
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; --d) {
        t.shape[d] = shape[d];
        t.strides[d] = stride;
        stride *= shape[d];
    }
    set_byte_range(t);
    return t;
}

template <class P>
std::vector<uint8_t> param_bytes(const P& p) {
    std::vector<uint8_t> b(sizeof p);
    std::memcpy(b.data(), &p, sizeof p);
    return b;
}

// The caller's params struct as P (NULL or a shorter published size: `defaults` for the rest).
template <class P>
P read_params(const Piece& piece, P defaults) {
    if (!piece.params.empty()) std::memcpy(&defaults, piece.params.data(), std::min(piece.params.size(), sizeof defaults));
    defaults.struct_size = sizeof defaults;
    return defaults;
}

// The OpCall of a piece: validate_op over the piece's views, so that the family's own rules plan it.
OpCall planned(const Piece& p) {
    std::vector<tgl_tensor> descs(p.operands.size());
    for (size_t k = 0; k < p.operands.size(); ++k) {
        const TensorArg& t = p.operands[k];
        tgl_tensor& d = descs[k];
        std::memset(&d, 0, sizeof d);
        d.buffer = t.present() ? tgl_buffer(k + 1) : 0;  // resolved by the lookup below
        d.byte_offset = uint64_t(t.offset * elem_bytes(t));
        d.dtype = t.dtype;
        d.rank = uint32_t(t.rank);
        std::copy(t.shape, t.shape + t.rank, d.shape);
        std::copy(t.strides, t.strides + t.rank, d.strides);
    }
    auto lookup = [&](tgl_buffer h, const char*) { return p.operands[size_t(h - 1)].buffer; };
    return validate_op(*p.info, p.params.empty() ? nullptr : p.params.data(), descs.data(), uint32_t(p.n_inputs),
                       descs.data() + p.n_inputs, uint32_t(descs.size() - p.n_inputs), lookup);
}

// Axis `d` of an output of rank `out_rank` in an input of rank `in_rank` broadcast NumPy-style
// (right-aligned) to it: the input's axis, or -1 where the input has none or stretches a 1.
int broadcast_axis(const TensorArg& in, int out_rank, int d, int64_t extent) {
    const int a = d - (out_rank - in.rank);
    return a >= 0 && in.shape[a] == extent ? a : -1;
}

// The reduced axes of a reduction (tgl_reduce_params, tgl_var_params and tgl_vector_norm_params
// share their first members) and whether y keeps them.
void reduced_axes(const Piece& p, bool* reduced, bool* keepdims) {
    tgl_reduce_params prm = read_params(p, tgl_reduce_params{sizeof(tgl_reduce_params), 0, 0, {}, 0});
    const int r = p.operands[0].rank;
    *keepdims = prm.keepdims != 0;
    for (int d = 0; d < r; ++d) reduced[d] = prm.n_axes == 0;
    for (uint32_t i = 0; i < prm.n_axes && i < TGL_MAX_RANK; ++i) reduced[(prm.axes[i] + r) % r] = true;
}

// Reductions whose partial results reduced again give the whole's in any dtype, bit for bit.
bool exact_in_any_dtype(tgl_op op) {
    return op == TGL_OP_MAX || op == TGL_OP_MIN || op == TGL_OP_ANY || op == TGL_OP_ALL;
}

// Whether `op` combines partial results of parts of a reduced axis (Splitter::combine): max, min,
// any, all reduced again; sum (mean: then a division), prod, logsumexp and norm reduced again in
// f32 (f16 x widened part by part, y rounded once at the end); var/std from the parts' means and
// variances.
bool combinable(tgl_op op) {
    switch (op) {
    case TGL_OP_MAX: case TGL_OP_MIN: case TGL_OP_ANY: case TGL_OP_ALL: case TGL_OP_SUM: case TGL_OP_MEAN:
    case TGL_OP_PROD: case TGL_OP_LOGSUMEXP: case TGL_OP_NORM: case TGL_OP_VAR: case TGL_OP_STD: return true;
    default: return false;
    }
}

// The names every cut rule reads: the piece's operands (inputs, then outputs), their count, the
// inputs' count and the op.
struct PieceParts {
    const TensorArg* ops;
    size_t n, n_in;
    tgl_op op;
};

PieceParts parts_of(const Piece& p) { return {p.operands.data(), p.operands.size(), p.n_inputs, p.info->op}; }

// add(kind, extent, axis, per): offers a cut along an axis of `extent` elements (none below 2).
auto adder(std::vector<CutAxis>& cuts) {
    return [&cuts](CutAxis::Kind kind, int64_t extent, std::vector<int> axis, std::vector<int64_t> per = {}) {
        if (extent >= 2) cuts.push_back(CutAxis{kind, extent, std::move(axis), std::move(per)});
    };
}

// The families' cut rules: the axes along which an op may be cut. Each is named by its family's
// SplitRule (end of this file), which the family registers with its run function
// (register_<family>_kernels in its <family>_kernels.cpp).

// Unary, Binary, Ternary: any axis of y, and the inputs' axes broadcast to it.
void elementwise_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& y = ops[n_in];
    for (int d = 0; d < y.rank; ++d) {
        std::vector<int> axis(n, -1);
        for (size_t k = 0; k < n_in; ++k) axis[k] = broadcast_axis(ops[k], y.rank, d, y.shape[d]);
        axis[n_in] = d;
        add(CutAxis::Independent, y.shape[d], axis);
    }
}

// Layout: the axes the op copies unchanged.
void layout_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& x = ops[0];
    const TensorArg& y = ops[n_in];
    if (op == TGL_OP_CONTIGUOUS || op == TGL_OP_EXPAND) {  // y[i] = x[i], x broadcast
        for (int d = 0; d < y.rank; ++d) add(CutAxis::Independent, y.shape[d], {broadcast_axis(x, y.rank, d, y.shape[d]), d});
    } else if (op == TGL_OP_PERMUTE) {  // y axis d is x axis perm[d]
        tgl_permute_params prm = read_params(p, tgl_permute_params{});
        for (int d = 0; d < y.rank; ++d) {
            const int a = (prm.perm[d] + x.rank) % x.rank;
            add(CutAxis::Independent, y.shape[d], {a, d});
        }
    } else if (op == TGL_OP_RESHAPE && x.numel > 0) {
        // x's axis e and y's axis d with as many elements before them (row-major): equal
        // extents are cut alike; where one is several axes of the other (x (4, 10) as y's
        // 40), the outer one of those is cut, and the other by as many elements per index.
        int64_t xo[TGL_MAX_RANK + 1] = {1}, yo[TGL_MAX_RANK + 1] = {1};  // elements before each axis
        for (int e = 0; e < x.rank; ++e) xo[e + 1] = xo[e] * x.shape[e];
        for (int d = 0; d < y.rank; ++d) yo[d + 1] = yo[d] * y.shape[d];
        auto ends_at = [](const int64_t* outer, int rank, int from, int64_t count) {
            for (int a = from; a <= rank; ++a)
                if (outer[a] == count) return true;
            return false;
        };
        for (int e = 0; e < x.rank; ++e)
            for (int d = 0; d < y.rank; ++d) {
                if (xo[e] != yo[d]) continue;
                if (x.shape[e] == y.shape[d]) add(CutAxis::Independent, y.shape[d], {e, d});
                else if (x.shape[e] < y.shape[d] && ends_at(xo, x.rank, e + 1, yo[d + 1]))  // y's d is x's e, e + 1, ...
                    add(CutAxis::Independent, x.shape[e], {e, d}, {1, y.shape[d] / x.shape[e]});
                else if (y.shape[d] < x.shape[e] && ends_at(yo, y.rank, d + 1, xo[e + 1]))  // x's e is y's d, d + 1, ...
                    add(CutAxis::Independent, y.shape[d], {e, d}, {x.shape[e] / y.shape[d], 1});
            }
    } else if (op == TGL_OP_CONCAT || op == TGL_OP_SPLIT || op == TGL_OP_STACK) {
        // the other axes of every operand; the joined axis routed, one piece per joined operand
        const size_t shared = op == TGL_OP_SPLIT ? 0 : n_in;
        const TensorArg& whole = ops[shared];
        const int axis = read_params(p, tgl_axis_params{0, 0, 0}).axis;
        const int a = whole.rank ? (axis + whole.rank) % whole.rank : 0;
        for (int d = 0; d < whole.rank; ++d) {
            std::vector<int> ax(n, -1);
            for (size_t k = 0; k < n; ++k) ax[k] = op == TGL_OP_STACK && k != shared ? (d < a ? d : d - 1) : d;
            if (d != a || (n == 2 && op != TGL_OP_STACK)) {  // one joined operand: a copy along a too
                add(CutAxis::Independent, whole.shape[d], ax);
                continue;
            }
            std::vector<bool> routed(n, true);
            routed[shared] = false;
            std::fill(ax.begin(), ax.end(), op == TGL_OP_STACK ? -1 : a);
            ax[shared] = a;
            if (n >= 3) cuts.push_back(CutAxis{CutAxis::Route, whole.shape[d], ax, {}, routed});
        }
    } else {  // the axes the op leaves alone: x's axis d is y's
        bool acts[TGL_MAX_RANK] = {};
        const int yx = y.rank - x.rank;  // tile: y's leading axes repeat all of x
        if (op == TGL_OP_SLICE || op == TGL_OP_NARROW) {
            const int axis = op == TGL_OP_SLICE ? read_params(p, tgl_slice_params{}).axis
                                                : read_params(p, tgl_narrow_params{}).axis;
            acts[(axis + x.rank) % std::max(x.rank, 1)] = true;
        } else if (op == TGL_OP_FLIP) {
            const tgl_flip_params prm = read_params(p, tgl_flip_params{});
            for (uint32_t i = 0; i < prm.n_axes && i < TGL_MAX_RANK; ++i) acts[(prm.axes[i] + x.rank) % x.rank] = true;
        } else if (op == TGL_OP_PAD) {
            const tgl_pad_params prm = read_params(p, tgl_pad_params{});
            for (int d = 0; d < x.rank; ++d) acts[d] = prm.before[d] != 0 || prm.after[d] != 0;
        } else if (op == TGL_OP_ROLL) {
            const tgl_roll_params prm = read_params(p, tgl_roll_params{});
            for (int d = 0; d < x.rank; ++d) acts[d] = prm.n_axes == 0;
            for (uint32_t i = 0; i < prm.n_axes && i < TGL_MAX_RANK; ++i) acts[(prm.axes[i] + x.rank) % x.rank] = true;
        } else if (op != TGL_OP_TILE) {
            return;
        }
        for (int d = 0; d < y.rank; ++d) {
            const int a = d - yx;
            if (a < 0) add(CutAxis::Independent, y.shape[d], {-1, d});  // tile: whole copies of x
            else if (!acts[a] && x.shape[a] == y.shape[d]) add(CutAxis::Independent, y.shape[d], {a, d});
        }
    }
}

// Reduce: kept axes independent; reduced axes combined.
void reduce_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& x = ops[0];
    bool reduced[TGL_MAX_RANK] = {}, keepdims = false;
    reduced_axes(p, reduced, &keepdims);
    const bool combine = combinable(op) && ops[n_in].rank < TGL_MAX_RANK;
    int yd = 0;
    for (int d = 0; d < x.rank; ++d) {
        if (!reduced[d]) add(CutAxis::Independent, x.shape[d], {d, yd++});
        else {
            if (combine) add(CutAxis::Combine, x.shape[d], {d, -1});
            if (keepdims) ++yd;
        }
    }
}

// Matmul: batch, M and N; matmul's K (f32) accumulated; grouped_linear's experts in windows;
// linear_qkv's outputs routed.
void matmul_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& y = ops[n_in];
    if (op == TGL_OP_MATMUL) {  // C (batch..., M, N) = A (batch..., M, K) B (batch..., K, N)
        tgl_matmul_params prm = read_params(p, tgl_matmul_params{0, 0, 0, 1.0f, 0.0f, 0});
        const TensorArg& a = ops[0];
        const TensorArg& b = ops[1];
        const int am = prm.transpose_a ? a.rank - 1 : a.rank - 2, ak = prm.transpose_a ? a.rank - 2 : a.rank - 1;
        const int bk = prm.transpose_b ? b.rank - 1 : b.rank - 2, bn = prm.transpose_b ? b.rank - 2 : b.rank - 1;
        for (int d = 0; d < y.rank - 2; ++d) {
            const int ab = broadcast_axis(a, y.rank, d, y.shape[d]), bb = broadcast_axis(b, y.rank, d, y.shape[d]);
            add(CutAxis::Independent, y.shape[d], {ab < a.rank - 2 ? ab : -1, bb < b.rank - 2 ? bb : -1, d});
        }
        add(CutAxis::Independent, y.shape[y.rank - 2], {am, -1, y.rank - 2});
        add(CutAxis::Independent, y.shape[y.rank - 1], {-1, bn, y.rank - 1});
        // f16 C would be rounded once per piece, where the op rounds once: K is cut for f32 only.
        if (y.dtype == TGL_DTYPE_F32) add(CutAxis::Accumulate, a.shape[ak], {ak, bk, -1});
    } else if (op == TGL_OP_GROUPED_LINEAR) {
        // (x (T, K), W (E, N, K), index (T), bias? (E, N)) -> y (T, N): the tokens (x, index
        // and y rows); N (W's and the bias's second axis: shrinks W's window once a piece holds
        // one expert); the experts in windows (W's and the bias's first axis: each piece
        // computes the tokens of its experts, the whole index checked once, up front)
        const int bias = ops[3].present() ? 1 : -1;
        add(CutAxis::Independent, y.shape[0], {0, -1, 0, -1, 0});
        add(CutAxis::Independent, y.shape[1], {-1, 1, -1, bias, 1});
        add(CutAxis::Window, ops[1].shape[0], {-1, 0, -1, bias == 1 ? 0 : -1, -1});
    } else {  // linear, linear_int8, linear_int4, linear_qkv
        // y (batch..., N) = x (batch..., K) W (N, K)^T + bias (N): the batch axes of x and
        // the outputs; N: y's last axis and the first of W, its scales, zeros and the bias
        // (linear_qkv's N is three outputs': routed, one linear per output over its rows of
        // W and the bias)
        for (int d = 0; d < y.rank - 1; ++d) {
            std::vector<int> axis(n, -1);
            axis[0] = d;
            for (size_t k = n_in; k < n; ++k) axis[k] = d;
            add(CutAxis::Independent, y.shape[d], axis);
        }
        std::vector<int> axis(n, -1);
        for (size_t k = 1; k < n_in; ++k)
            if (ops[k].present()) axis[k] = 0;
        for (size_t k = n_in; k < n; ++k) axis[k] = y.rank - 1;
        if (op != TGL_OP_LINEAR_QKV) {
            add(CutAxis::Independent, y.shape[y.rank - 1], axis);
        } else {
            std::vector<bool> routed(n, false);
            std::fill(routed.begin() + long(n_in), routed.end(), true);
            cuts.push_back(CutAxis{CutAxis::Route, ops[1].shape[0], axis, {}, routed, find_op(TGL_OP_LINEAR)});
        }
    }
}

// ArgReduce: kept axes; the reduced one must fit.
void arg_reduce_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const tgl_arg_reduce_params prm = read_params(p, tgl_arg_reduce_params{0, -1, 0, 0, 0});
    const TensorArg& x = ops[0];
    const int axis = x.rank ? (prm.axis + x.rank) % x.rank : 0;
    for (int d = 0, yd = 0; d < x.rank; ++d) {
        if (d != axis) add(CutAxis::Independent, x.shape[d], {d, yd});
        if (d != axis || prm.keepdims) ++yd;
    }
}

// Scan, Select, Normalize, Grad: rows, every axis of x but the ones the op works along (bit d of
// `along`: axis d of x is a row axis, not cut), with every operand's axis that follows it.
void row_cuts(const Piece& p, uint32_t along, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& x = ops[0];
    for (int d = 0; d < x.rank; ++d) {
        if (along >> d & 1u) continue;
        std::vector<int> axis(n, -1);
        for (size_t k = 0; k < n; ++k)
            if (ops[k].present()) axis[k] = broadcast_axis(ops[k], x.rank, d, x.shape[d]);
        add(CutAxis::Independent, x.shape[d], axis);
    }
}

// The bit of row_cuts' `along` of an op that works along one axis of x.
uint32_t along_axis(const TensorArg& x, int axis) { return 1u << ((axis + x.rank) % std::max(x.rank, 1)); }

// The bits of row_cuts' `along` of layer/rms norm (forward and backward): the last n_norm_dims axes.
uint32_t along_norm_dims(const Piece& p) {
    const TensorArg& x = p.operands[0];
    const uint32_t n_norm = read_params(p, tgl_layer_norm_params{0, 1, 1e-5f, 0}).n_norm_dims;
    uint32_t along = 0;
    for (int d = std::max<int>(0, x.rank - int(n_norm)); d < x.rank; ++d) along |= 1u << d;
    return along;
}

void scan_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    row_cuts(p, along_axis(p.operands[0], read_params(p, tgl_scan_params{0, -1, 0, 0}).axis), cuts);
}

void select_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    row_cuts(p, along_axis(p.operands[0], read_params(p, tgl_sort_params{0, -1, 0, 0}).axis), cuts);
}

void norm_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& x = ops[0];
    // The row itself, in pieces (RowPieces), where it runs along one axis: every operand's axis
    // that follows it.
    // (copies of the bindings: a C++17 lambda may not capture a structured binding)
    auto row_pieces = [&, ops = ops, n = n](uint32_t along) {
        int d = -1;
        for (int a = 0; a < x.rank; ++a)
            if (along == 1u << a) d = a;
        if (d < 0) return;
        std::vector<int> axis(n, -1);
        for (size_t k = 0; k < n; ++k)
            if (ops[k].present()) axis[k] = broadcast_axis(ops[k], x.rank, d, x.shape[d]);
        add(CutAxis::RowPieces, x.shape[d], axis);
    };
    if (op == TGL_OP_SOFTMAX || op == TGL_OP_LOG_SOFTMAX) {
        const uint32_t along = along_axis(x, read_params(p, tgl_softmax_params{0, -1, 1.0f, 0}).axis);
        row_cuts(p, along, cuts);
        row_pieces(along);
    } else if (op == TGL_OP_LAYER_NORM || op == TGL_OP_RMS_NORM || op == TGL_OP_ADD_LAYER_NORM ||
               op == TGL_OP_ADD_RMS_NORM) {
        row_cuts(p, along_norm_dims(p), cuts);
        if (op == TGL_OP_LAYER_NORM || op == TGL_OP_RMS_NORM) row_pieces(along_norm_dims(p));
    } else {  // group_norm: the batch axis (a group's statistics need all of it); batch_norm:
              // every axis, its per-channel operands (C) along the channel axis (1)
        const bool batch_norm = op == TGL_OP_BATCH_NORM;
        for (int d = 0; d < (batch_norm ? x.rank : std::min(x.rank, 1)); ++d) {
            std::vector<int> axis(n, -1);
            for (size_t k = 0; k < n; ++k)
                if (ops[k].present()) axis[k] = k == 0 || k == n_in ? d : (d == 1 ? 0 : -1);
            add(CutAxis::Independent, x.shape[d], axis);
        }
    }
}

// The outermost axis of `rows` (the op's rows, row-major over its shape: cross_entropy's target,
// embedding_backward's index) with more than one element (-1: none). A cut along it alone keeps
// each piece's rows consecutive rows of the whole op.
int outermost_row_axis(const TensorArg& rows) {
    for (int d = 0; d < rows.rank; ++d)
        if (rows.shape[d] >= 2) return d;
    return -1;
}

// The cut along axis d of `rows` (outermost_row_axis), its pieces' first rows counted in row_lo.
CutAxis consecutive_rows(const TensorArg& rows, int d, std::vector<int> axis) {
    CutAxis c{CutAxis::Independent, rows.shape[d], std::move(axis)};
    c.row_step = 1;
    for (int e = d + 1; e < rows.rank; ++e) c.row_step *= rows.shape[e];
    return c;
}

// Grad: the rows of cumsum, softmax/log_softmax and layer/rms norm backward. Layer/rms norm
// backward's dgamma and dbeta sum over every row: partial sums per piece (f32 in any dtype), added
// up after. cross_entropy(_backward): the rows (positions), along the outermost outer axis that
// has more than one, so that a piece's rows are consecutive rows of the whole op (its part of the
// scratch the whole op's target check filled). embedding_backward: dW's rows in windows (each
// piece the tokens whose index lands in its rows), the tokens likewise (dW accumulated in f32),
// and D (dW's columns, dy's last axis).
void grad_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& x = ops[0];
    uint32_t along = 0;
    std::vector<bool> summed;  // outputs summed over the rows
    if (op == TGL_OP_CUMSUM_BACKWARD) {
        along = along_axis(x, read_params(p, tgl_scan_params{0, -1, 0, 0}).axis);
    } else if (op == TGL_OP_SOFTMAX_BACKWARD || op == TGL_OP_LOG_SOFTMAX_BACKWARD) {
        along = along_axis(x, read_params(p, tgl_softmax_params{0, -1, 1.0f, 0}).axis);
    } else if (op == TGL_OP_LAYER_NORM_BACKWARD || op == TGL_OP_RMS_NORM_BACKWARD) {
        for (size_t k = n_in + 1; k < n; ++k)
            if (ops[k].present()) {
                summed.resize(n);
                summed[k] = true;
            }
        along = along_norm_dims(p);
    } else if (op == TGL_OP_CROSS_ENTROPY || op == TGL_OP_CROSS_ENTROPY_BACKWARD) {
        // (logits (N, C, d...), target (N, d...), dloss?) -> loss | dlogits; loss and dloss have
        // the target's shape with reduction none, else rank 0
        const bool none = read_params(p, tgl_cross_entropy_params{0, TGL_REDUCTION_MEAN, -100, 0.0f}).reduction == TGL_REDUCTION_NONE;
        const TensorArg& t = ops[1];
        const int d = outermost_row_axis(t);
        if (d < 0) return;
        const int xd = d == 0 ? 0 : d + 1;  // logits' axis
        std::vector<int> axis = {xd, d};
        if (op == TGL_OP_CROSS_ENTROPY_BACKWARD) axis.push_back(none ? d : -1);
        axis.push_back(op == TGL_OP_CROSS_ENTROPY ? (none ? d : -1) : xd);
        cuts.push_back(consecutive_rows(t, d, std::move(axis)));
        return;
    } else if (op == TGL_OP_EMBEDDING_BACKWARD) {  // (dy (..., D), index (...)) -> dW (V, D)
        // dW's rows in windows; the tokens (the pieces add to dW in token order, as the whole op
        // sums; in f32, f16 dW rounded once after them); D
        const TensorArg& index = ops[1];
        const TensorArg& dw = ops[n_in];
        add(CutAxis::Window, dw.shape[0], {-1, -1, 0});
        const int d = outermost_row_axis(index);
        if (d >= 0) {
            cuts.push_back(consecutive_rows(index, d, {d, d, -1}));
            cuts.back().accumulated = {false, false, true};
        }
        add(CutAxis::Independent, dw.shape[1], {x.rank - 1, -1, 1});
        return;
    } else {
        return;
    }
    const size_t first = cuts.size();
    row_cuts(p, along, cuts);
    for (size_t c = first; c < cuts.size(); ++c) cuts[c].summed = summed;
}

// Sequence: rope, fft, selective_scan and sample along the axes they do not work along.
void sequence_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& x = ops[0];
    if (op == TGL_OP_ROPE || op == TGL_OP_ROPE_BACKWARD) {
        // (x (..., D), positions broadcast to x.shape[:-1] (multi-section rope: but its last dim,
        // the streams), freq_factors?, cos?, sin?) -> y: every axis but the rows' (D); freq_factors
        // whole. Not with a cos/sin cache: its positions are checked before anything is written.
        if (n_in > 3 && ops[3].present()) return;
        const tgl_rope_params prm = read_params(p, tgl_rope_params{sizeof(tgl_rope_params), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, {}});
        TensorArg pos_rows = ops[1];
        if (prm.multi != TGL_ROPE_MULTI_NONE) --pos_rows.rank;
        for (int d = 0; d + 1 < x.rank; ++d) {
            std::vector<int> axis(n, -1);
            axis[0] = axis[n_in] = d;
            axis[1] = broadcast_axis(pos_rows, x.rank - 1, d, x.shape[d]);
            add(CutAxis::Independent, x.shape[d], axis);
        }
    } else if (op == TGL_OP_FFT || op == TGL_OP_IFFT) {  // (..., n, 2): the leading axes
        for (int d = 0; d + 2 < x.rank; ++d) add(CutAxis::Independent, x.shape[d], {d, d});
    } else if (op == TGL_OP_SELECTIVE_SCAN) {
        // (u, delta (B, D, L), A (D, N), Bm, Cm (B, N, L), Dskip? (D), z? (B, D, L),
        // delta_bias? (D)) -> (y (B, D, L), last_state? (B, D, N)): B and D (a channel's
        // recurrence runs along all of L)
        auto at = [ops = ops](size_t k, int a) { return ops[k].present() ? a : -1; };
        add(CutAxis::Independent, x.shape[0], {0, 0, -1, 0, 0, -1, at(6, 0), -1, 0, at(9, 0)});
        add(CutAxis::Independent, x.shape[1], {1, 1, 0, -1, -1, at(5, 0), at(6, 1), at(7, 0), 1, at(9, 1)});
    } else if (op == TGL_OP_SAMPLE && x.rank == 2 && x.shape[0] >= 2) {
        // (logits (B, V)) -> token (B): the rows, row b drawing at counter offset + b
        CutAxis rows{CutAxis::Independent, x.shape[0], {0, 0}};
        rows.counts_rows = true;
        cuts.push_back(rows);
    }
}

// Generate: full: any axis; eye, tril, triu: any axis too, a piece of the matrix's rows or
// columns with its diagonal moved by the piece's first row or column.
void generate_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const TensorArg& y = ops[n_in];
    const bool diagonal = op == TGL_OP_EYE || op == TGL_OP_TRIL || op == TGL_OP_TRIU;
    if (op != TGL_OP_FULL && !diagonal) return;
    for (int d = 0; d < y.rank; ++d) {
        if (y.shape[d] < 2) continue;
        CutAxis cut{CutAxis::Independent, y.shape[d], std::vector<int>(n, d)};  // tril/triu: x has y's shape
        if (diagonal) cut.diagonal_shift = d == y.rank - 2 ? 1 : d == y.rank - 1 ? -1 : 0;
        cuts.push_back(cut);
    }
}

// Index: gather, index_select, one_hot, scatter and scatter_add.
void index_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    if (op == TGL_OP_ONE_HOT) {  // y (index.shape..., classes): the index's axes
        for (int d = 0; d < ops[0].rank; ++d) add(CutAxis::Independent, ops[0].shape[d], {d, d});
        return;
    }
    if (op == TGL_OP_SCATTER || op == TGL_OP_SCATTER_ADD) {
        // (x, index, src) -> y: y and x along any axis; index and src with them along the
        // others (clamped to their sizes: they may be shorter); along the scatter axis y and
        // x in windows, each piece taking the indices that land in its window (every y
        // element still walks its whole index row in order: the last write wins, sums keep
        // their order), the whole index checked once, up front
        const TensorArg& y = ops[n_in];
        const int a = p.index_axis;
        for (int d = 0; d < y.rank; ++d) {
            if (d == a) add(CutAxis::Window, y.shape[d], {d, -1, -1, d});
            else add(CutAxis::Independent, y.shape[d], {d, d, d, d});
        }
        return;
    }
    if (op == TGL_OP_SET_ROWS) {
        // (x, index (K), src) -> y: y and x in windows along the row axis, each piece writing the
        // rows that land in its window (the whole index checked once, up front; every piece
        // resolves the duplicates over the whole index); src with them along the other axes
        const TensorArg& y = ops[n_in];
        const int a = p.index_axis;
        for (int d = 0; d < y.rank; ++d) {
            if (d == a) add(CutAxis::Window, y.shape[d], {d, -1, -1, d});
            else add(CutAxis::Independent, y.shape[d], {d, -1, d, d});
        }
        // the K rows of the index and src in order, each later piece in place over the earlier
        // ones' y (so the last duplicate still wins)
        add(CutAxis::Accumulate, ops[1].shape[0], {-1, 0, a, -1});
        return;
    }
    if (op != TGL_OP_GATHER && op != TGL_OP_INDEX_SELECT) return;
    // y and the index along any axis (index_select's index only along the indexed one), x
    // along the others; x's indexed axis in windows (the indices outside are skipped).
    const TensorArg& y = ops[n_in];
    const int a = p.index_axis;
    for (int d = 0; d < y.rank; ++d) {
        const int in_index = op == TGL_OP_GATHER ? d : (d == a ? 0 : -1);
        add(CutAxis::Independent, y.shape[d], {d == a ? -1 : d, in_index, d});
    }
    if (ops[0].rank > a) add(CutAxis::Window, ops[0].shape[a], {a, -1, -1});
}

// A convolution's params, NULL's defaults (stride and dilation 1, groups 1) filled in.
tgl_conv_params conv_params_of(const Piece& p) {
    tgl_conv_params defaults{};
    defaults.groups = 1;
    for (int i = 0; i < 3; ++i) defaults.stride[i] = defaults.dilation[i] = 1;
    return read_params(p, defaults);
}

// Conv: batch; output channels (weight rows) and the input channels (accumulated) where groups ==
// 1, else runs of whole groups; conv1d/2d/3d's first spatial axis.
void conv_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    const tgl_conv_params prm = conv_params_of(p);
    const TensorArg& y = ops[n_in];
    const int ch = prm.layout == TGL_CONV_LAYOUT_CHANNELS_LAST ? y.rank - 1 : 1;  // of x, y, dy, dx
    const int64_t g = std::max<int64_t>(prm.groups, 1);
    const bool one_group = g == 1;
    // runs of whole groups: operand k's axis axis[k], per[k] elements per group
    auto by_groups = [&](std::vector<int> axis, std::vector<int64_t> per) {
        CutAxis c{CutAxis::Independent, g, std::move(axis), std::move(per)};
        c.groups = true;
        if (g >= 2) cuts.push_back(c);
    };
    // the channels summed over (operand k's axis axis[k]), output `out` accumulated over the
    // pieces, `bias` (-1: none) added by the last piece
    const size_t n_operands = n;  // (a lambda may not capture a structured binding in C++17)
    auto channel_sums = [&](int64_t extent, std::vector<int> axis, size_t out, int bias) {
        if (!one_group || extent < 2) return;
        CutAxis c{CutAxis::Accumulate, extent, std::move(axis)};
        c.channel_sums = true;
        c.accumulated.assign(n_operands, false);
        c.accumulated[out] = true;
        c.last_only.assign(n_operands, false);
        if (bias >= 0) c.last_only[size_t(bias)] = true;
        cuts.push_back(c);
    };
    if (op == TGL_OP_CONV2D_BACKWARD_WEIGHT) {  // (x, dy) -> (dw, db?): dw's rows and columns; batch is summed
        const TensorArg& x = ops[0];
        const TensorArg& dy = ops[1];
        const int db = ops[3].present() ? 0 : -1;
        if (one_group) {
            add(CutAxis::Independent, y.shape[0], {-1, ch, 0, db});
            // x's channels, dw's columns (db, the same in every piece, from the last one)
            CutAxis c{CutAxis::Independent, x.shape[ch], {ch, -1, 1, -1}};
            c.last_only = {false, false, false, db == 0};
            if (c.extent >= 2) cuts.push_back(c);
        }
        by_groups({ch, ch, 0, db}, {x.shape[ch] / g, dy.shape[ch] / g, y.shape[0] / g, y.shape[0] / g});
    } else if (op == TGL_OP_CONV2D_BACKWARD_INPUT) {  // (dy, w) -> (dx): batch; dx's channels (w's columns); dy's
        const TensorArg& dy = ops[0];
        add(CutAxis::Independent, y.shape[0], {0, -1, 0});
        if (one_group) add(CutAxis::Independent, y.shape[ch], {-1, 1, ch});
        channel_sums(dy.shape[ch], {ch, 0, -1}, 2, -1);
        by_groups({ch, 0, ch}, {dy.shape[ch] / g, dy.shape[ch] / g, y.shape[ch] / g});
    } else {  // (x, w, bias?) -> (y); conv: w (C_out, ...), conv_transpose: w (C_in, C_out, ...)
        const TensorArg& x = ops[0];
        const bool bias = ops[2].present();
        add(CutAxis::Independent, y.shape[0], {0, -1, -1, 0});
        const bool transposed = op == TGL_OP_CONV_TRANSPOSE1D || op == TGL_OP_CONV_TRANSPOSE2D;
        if (one_group) add(CutAxis::Independent, y.shape[ch], {-1, transposed ? 1 : 0, bias ? 0 : -1, ch});
        channel_sums(x.shape[ch], {ch, transposed ? 0 : 1, -1, -1}, 3, bias ? 2 : -1);
        const int64_t cx = x.shape[ch] / g, cy = y.shape[ch] / g;
        by_groups({ch, 0, bias ? 0 : -1, ch}, {cx, transposed ? cx : cy, cy, cy});
        if (!transposed && y.rank >= 3) {  // y's first spatial axis, x by the rows it reads
            const int sp = ch == 1 ? 2 : 1;
            CutAxis rows{CutAxis::Independent, y.shape[sp], {sp, -1, -1, sp}, {std::max(prm.stride[0], 1), 1, 1, 1}};
            rows.halo = true;
            if (rows.extent >= 2) cuts.push_back(rows);
        }
    }
}

// Pool: every operand is (N, C, ...), each (n, c) on its own.
void pool_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    for (int d = 0; d < 2; ++d) {
        std::vector<int> axis(n, -1);
        for (size_t k = 0; k < n; ++k)
            if (ops[k].present()) axis[k] = d;
        add(CutAxis::Independent, ops[0].shape[d], axis);
    }
}

// Attention: forward and backward.
void attention_cuts(const Piece& p, std::vector<CutAxis>& cuts) {
    [[maybe_unused]] const auto [ops, n, n_in, op] = parts_of(p);
    [[maybe_unused]] const auto add = adder(cuts);
    if (op != TGL_OP_ATTENTION && op != TGL_OP_ATTENTION_BACKWARD) return;
    const TensorArg& q = ops[0];
    const TensorArg& kv = ops[1];
    const TensorArg& mask = ops[op == TGL_OP_ATTENTION ? 3 : 6];
    const int64_t group = kv.shape[1] ? q.shape[1] / kv.shape[1] : 1;
    auto mask_axis = [&](int d, int64_t extent) { return mask.present() ? broadcast_axis(mask, 4, d, extent) : -1; };
    const tgl_attention_params prm = read_params(p, tgl_attention_params{0, 0, 0.0f, 0, 0.0f, 0.0f, 0});
    // ALiBi's slope depends on the q head's index in the whole op: no cut along heads. Query rows
    // keep their positions P(i) only in bottom-right causal pieces (each piece's rows with the
    // prefix of keys its last row sees); a window or ALiBi without causal, and top-left
    // alignment, are not cut along rows.
    const bool heads = prm.max_bias <= 0.0f;
    const bool rows_free = prm.causal == 0 && prm.window == 0 && prm.max_bias <= 0.0f;
    if (op == TGL_OP_ATTENTION_BACKWARD) {
        // (q, k, v, o, do, lse, mask?) -> (dq, dk, dv): batch; KV heads with their q heads (a
        // KV head's dk, dv sum over its q heads and every query row: neither is cut)
        add(CutAxis::Independent, q.shape[0], {0, 0, 0, 0, 0, 0, mask_axis(0, q.shape[0]), 0, 0, 0});
        if (!heads) return;
        cuts.push_back(CutAxis{CutAxis::Independent, kv.shape[1], {1, 1, 1, 1, 1, 1, mask_axis(1, q.shape[1]), 1, 1, 1},
                               {group, 1, 1, group, group, group, group, group, 1, 1}});
        if (cuts.back().extent < 2) cuts.pop_back();
        return;
    }
    // (q, k, v, mask?, sinks?) -> (o, lse?): batch; KV heads with their q heads (GQA); query rows
    // (see above). A host of ABI < 1.3 passes no sinks slot: `ax` drops it.
    const bool sinks_slot = n_in > 4;
    const bool lse = ops[n_in + 1].present();
    auto ax = [&](auto v) {  // (axes, or elements per index)
        if (!sinks_slot) v.erase(v.begin() + 4);
        return v;
    };
    const int sk = sinks_slot && ops[4].present() ? 0 : -1;  // the sinks follow the q heads
    add(CutAxis::Independent, q.shape[0], ax(std::vector<int>{0, 0, 0, mask_axis(0, q.shape[0]), -1, 0, lse ? 0 : -1}));
    const int mh = mask_axis(1, q.shape[1]);
    if (heads) {
        cuts.push_back(CutAxis{CutAxis::Independent, kv.shape[1], ax(std::vector<int>{1, 1, 1, mh, sk, 1, lse ? 1 : -1}),
                               ax(std::vector<int64_t>{group, 1, 1, group, group, group, group})});
        if (cuts.back().extent < 2) cuts.pop_back();
        if (kv.shape[1] == 1) add(CutAxis::Independent, q.shape[1], ax(std::vector<int>{1, -1, -1, mh, sk, 1, lse ? 1 : -1}));  // MQA
    }
    const int rows_lse = lse ? 2 : -1;
    if (rows_free) {
        add(CutAxis::Independent, q.shape[2], ax(std::vector<int>{2, -1, -1, mask_axis(2, q.shape[2]), -1, 2, rows_lse}));
    } else if (prm.causal == 1 && q.shape[2] >= 2) {  // rows [lo, hi) with the keys they see, [0, hi + Skv - Sq)
        CutAxis rows{CutAxis::Independent, q.shape[2], ax(std::vector<int>{2, -1, -1, mask_axis(2, q.shape[2]), -1, 2, rows_lse})};
        rows.prefix = ax(std::vector<int>{-1, 2, 2, mask_axis(3, kv.shape[2]), -1, -1, -1});
        rows.shift = kv.shape[2] - q.shape[2];
        cuts.push_back(rows);
    }
}

// The families' refusals: why an op of the family cannot be cut so that operand t fits (the end of
// the RESOURCE_EXHAUSTED message).

constexpr const char* kNoCutFits = "none of the op's axes cuts this operand into smaller windows";

// Reduce, Unary, Binary, Ternary.
const char* no_cut_refusal(const Piece&, const TensorArg&) {
    return kNoCutFits;
}

const char* matmul_refusal(const Piece& p, const TensorArg&) {
    return p.info->op == TGL_OP_MATMUL && p.operands[p.n_inputs].dtype != TGL_DTYPE_F32
              ? "it would have to be cut along K, and an f16/bf16 C accumulated over pieces would be rounded once per "
                "piece, not once as the op promises (a transposed B, (N, K), is cut along N instead)"
              : "none of the op's axes cuts this operand into smaller windows (one row of x, W or y must "
                "fit one window)";
}

const char* layout_refusal(const Piece&, const TensorArg&) {
    return "a layout op is cut only along the axes it copies unchanged (slice, narrow, flip, pad, roll: the "
           "axes they do not act on; tile: y's leading axes and those of 1 repetition; reshape: the leading "
           "and trailing axes x and y share; concat, split, stack: the other axes, and the joined axis one "
           "joined operand per piece), and none of those cuts this operand into smaller windows";
}

const char* conv_refusal(const Piece& p, const TensorArg&) {
    const tgl_op op = p.info->op;
    if (op == TGL_OP_CONV1D || op == TGL_OP_CONV2D || op == TGL_OP_CONV3D)
        return "a convolution is cut along the batch axis, runs of whole groups, with groups == 1 the channels "
               "it outputs and the input channels (their sums accumulated), and its first spatial axis with the "
               "input rows each piece reads; so one channel's input rows of one output row must fit one window";
    return op == TGL_OP_CONV2D_BACKWARD_WEIGHT
              ? "conv2d_backward_weight is cut along runs of whole groups and, with groups == 1, dw's rows and "
                "columns (dy's and x's channels), not along the batch or the spatial axes it sums over; so one "
                "channel's plane of x and of dy (all images) must fit one window"
              : "transposed convolutions and conv2d_backward_input are cut along the batch axis, runs of whole "
                "groups and, with groups == 1, the channels they output and the channels they sum over, not "
                "along their spatial axes; so one channel's plane of the input and of the output must fit one "
                "window";
}

const char* pool_refusal(const Piece&, const TensorArg&) {
    return "a pooling op is cut along N and C only, so one (n, c) plane must fit one window";
}

const char* attention_refusal(const Piece& p, const TensorArg&) {
    return p.info->op == TGL_OP_ATTENTION
              ? "attention is cut along the batch, the KV heads with their query heads (not with ALiBi), and the "
                "query rows (bottom-right causal: each piece with the keys its rows see; not with top-left "
                "alignment, or a window or ALiBi without causal), so one head's keys and values must fit one "
                "window"
              : "attention_backward is cut along the batch and the KV heads with their query heads only (not "
                "with ALiBi; a KV head's dk and dv sum over its query heads and rows), so one KV head's group must "
                "fit one window";
}

const char* index_refusal(const Piece& p, const TensorArg&) {
    return p.info->op == TGL_OP_ONE_HOT
              ? "only the index's axes are cut, so one row of num_classes elements must fit one window"
          : p.info->op == TGL_OP_SCATTER || p.info->op == TGL_OP_SCATTER_ADD
              ? "the index and src are cut along the axes other than the scatter axis only (every element of "
                "y walks its whole index row), so one such row of each must fit one window"
              : kNoCutFits;
}

const char* generate_refusal(const Piece& p, const TensorArg&) {
    const tgl_op op = p.info->op;
    return op == TGL_OP_FULL || op == TGL_OP_EYE || op == TGL_OP_TRIL || op == TGL_OP_TRIU
              ? kNoCutFits
              : "this op is not run in pieces (its values depend on each element's position in the whole output)";
}

const char* sequence_refusal(const Piece& p, const TensorArg&) {
    return p.info->op == TGL_OP_SELECTIVE_SCAN
              ? "selective_scan is cut along B and D only (a channel's recurrence runs along all of L), so one "
                "channel's sequence must fit one window"
          : (p.info->op == TGL_OP_ROPE || p.info->op == TGL_OP_ROPE_BACKWARD) && p.n_inputs > 3 && p.operands[3].present()
              ? "rope with a cos/sin cache is not cut (its positions are checked before anything is written), so x, "
                "y and the cache must each fit one window"
              : "the op needs each of its rows (rope: the head dim; fft: the transformed axis) in one window, "
                "and only the other axes are cut";
}

const char* grad_refusal(const Piece& p, const TensorArg&) {
    const tgl_op op = p.info->op;
    return op == TGL_OP_EMBEDDING_BACKWARD
              ? "embedding_backward is cut along dW's rows, its tokens and D, so one token's row of dy must fit one "
                "window"
          : op == TGL_OP_CROSS_ENTROPY || op == TGL_OP_CROSS_ENTROPY_BACKWARD
              ? "cross_entropy is cut along its rows (positions) only, so one row of logits (its C classes) must "
                "fit one window"
              : "the op needs each of its rows (the elements along the axis it works on) in one window, and "
                "only the other axes are cut";
}

// ArgReduce, Scan, Select, Normalize.
const char* rows_refusal(const Piece& p, const TensorArg&) {
    const tgl_op op = p.info->op;
    return op == TGL_OP_GROUP_NORM
              ? "group_norm is cut along the batch axis only (a group's statistics span its channels and "
                "positions), so one sample must fit one window"
          : op == TGL_OP_BATCH_NORM
              ? kNoCutFits
          : op == TGL_OP_SOFTMAX || op == TGL_OP_LOG_SOFTMAX || op == TGL_OP_LAYER_NORM || op == TGL_OP_RMS_NORM
              ? "a row is run in pieces only along one axis (layer_norm and rms_norm: n_norm_dims 1), and "
                "elsewhere the op needs each of its rows in one window, with only the other axes cut"
          : p.info->family == OpFamily::Normalize
              ? "add_layer_norm and add_rms_norm need each of their rows in one window (only the other axes "
                "are cut)"
              : "the op needs each of its rows (the elements along the axes it works on) in one window, and "
                "only the other axes are cut";
}

// The family's rule: the axes along which the op may be cut (none without a rule).
std::vector<CutAxis> cut_axes(const Piece& p) {
    std::vector<CutAxis> cuts;
    if (const SplitRule* rule = gles_family(*p.info).split) rule->cut_axes(p, cuts);
    return cuts;
}

class Splitter {
public:
    explicit Splitter(GlesDevice& dev) : dev_(dev), max_(dev.max_window_bytes()) {}

    // Ops with an index (gather, index_select, one_hot, scatter, scatter_add, grouped_linear,
    // embedding_backward; cross_entropy's target): the whole index tensor is checked once, up
    // front, under check_; the pieces' data passes share it, so that a bad index anywhere writes
    // nothing at all and is reported at its position in the whole tensor. The Grad ops' check
    // also fills a scratch the pieces read (cross_entropy: each row's target and their count;
    // embedding_backward: the tokens sorted by index and each value's run of them).
    void check_indices_once(const OpCall& call) {
        const bool experts = call.info->op == TGL_OP_GROUPED_LINEAR, grad = call.info->family == OpFamily::Grad;
        const size_t at = grad ? 1 : size_t(experts ? call.matmul().index_input : call.index().index_input);
        const TensorArg& index = call.inputs[at];
        const char* label = call.info->op == TGL_OP_CROSS_ENTROPY || call.info->op == TGL_OP_CROSS_ENTROPY_BACKWARD
                                ? "the target tensor"
                                : "the index tensor";
        // gather, index_select, one_hot, scatter, scatter_add: an index larger than one window is
        // checked window by window (all before any piece writes)
        std::vector<IndexWindow> windows;
        if (dev_.window_bytes(index) > max_) {
            if (grad || experts)
                refuse(call.info, index, label, "its indices are checked in one pass before anything is written");
            if (!index_windows(index, 0, windows))
                refuse(call.info, index, label,
                       "its indices are checked before anything is written, in windows of consecutive positions "
                       "(cut along its outermost axis), and such a cut does not shrink it (its rows are not "
                       "consecutive in memory)");
        }
        check_ = dev_.device_check();
        indexed_ = call.info;
        if (grad) {
            scratch_ = add_grad_index_check(dev_, call, check_);
            whole_ = &call;
            return;
        }
        std::vector<Dispatch> ds;
        if (experts) add_expert_index_check(dev_, call, check_, ds);
        else add_index_check(dev_, call, check_, ds, windows);
        dev_.submit(call.info->name, std::move(ds));
    }

    // The index tensor t (positions [first, ...) of the whole) as views of consecutive positions
    // that each fit one window: cut along its outermost axis with more than one element, about a
    // window a piece, recursively. False where such a cut does not shrink it by a quarter.
    bool index_windows(const TensorArg& t, int64_t first, std::vector<IndexWindow>& out) {
        const int64_t bytes = dev_.window_bytes(t);
        if (bytes <= max_) {
            out.push_back({t, first});
            return true;
        }
        const int d = outermost_row_axis(t);
        if (d < 0) return false;
        const CutAxis rows = consecutive_rows(t, d, {d});
        if (dev_.window_bytes(cut_view(t, d, 0, (rows.extent + 1) / 2)) > bytes / 4 * 3) return false;
        const int64_t room = std::max<int64_t>(max_ - 2 * dev_.window_alignment(), 1);
        const int64_t count = std::min(rows.extent, std::max<int64_t>(2, (bytes + room - 1) / room));
        for (int64_t i = 0; i < count; ++i) {
            const int64_t lo = rows.extent * i / count, hi = rows.extent * (i + 1) / count;
            if (!index_windows(cut_view(t, d, lo, hi), first + lo * rows.row_step, out)) return false;
        }
        return true;
    }

    // What follows the pieces of an op with an index: cross_entropy's sum or mean over the rows.
    void after_pieces(const OpCall& call) {
        if (call.info->family == OpFamily::Grad) add_grad_after_pieces(dev_, call, IndexPiece{check_, 0, scratch_, whole_, 0});
    }

    // Runs the piece (planning its dispatches, which the caller captures), cut where needed.
    void run(const Piece& p) {
        size_t worst = p.operands.size();
        int64_t worst_bytes = 0;
        for (size_t k = 0; k < p.operands.size(); ++k) {
            const int64_t w = dev_.window_bytes(bound(p, k));
            if (w > max_ && w > worst_bytes) worst = k, worst_bytes = w;
        }
        if (worst == p.operands.size()) return run_fitting(p);
        const std::vector<CutAxis> cuts = cut_axes(p);
        const CutAxis* best = best_cut(p, cuts, worst);
        if (!best || dev_.window_bytes(halved(p, *best, worst)) > worst_bytes / 4 * 3) refuse(p, worst);
        // Pieces of about a window each (a view's window may start up to one alignment early).
        const int64_t room = std::max<int64_t>(max_ - 2 * dev_.window_alignment(), 1);
        cut_into(p, *best, std::min(best->extent, std::max<int64_t>(2, (worst_bytes + room - 1) / room)));
    }

private:
    static int64_t per(const CutAxis& c, size_t k) { return c.per.empty() ? 1 : c.per[k]; }

    // The view operand k of p binds: its f32 view where it has one (Piece::wide), else itself.
    static const TensorArg& bound(const Piece& p, size_t k) {
        return k < p.wide.size() && p.wide[k].present() ? p.wide[k] : p.operands[k];
    }

    // Operand k of p (the view it binds) cut to the first half of `c`.
    TensorArg halved(const Piece& p, const CutAxis& c, size_t k) {
        return cut_view(bound(p, k), c.axis[k], 0, (c.extent + 1) / 2 * per(c, k));
    }

    // The cut that shrinks operand k most (the first, outermost, of equals); null: none shrinks it.
    // A row in pieces (RowPieces) only where no other cut shrinks it by a quarter.
    const CutAxis* best_cut(const Piece& p, const std::vector<CutAxis>& cuts, size_t k) {
        const int64_t whole = dev_.window_bytes(bound(p, k));
        const CutAxis* other = nullptr;
        for (bool row_pieces : {false, true}) {
            const CutAxis* best = nullptr;
            int64_t best_bytes = whole;
            for (const CutAxis& c : cuts) {
                if (c.axis[k] < 0 || (c.kind == CutAxis::Route && c.routed[k])) continue;  // a routed operand stays whole
                if ((c.kind == CutAxis::RowPieces) != row_pieces) continue;
                const int64_t half = dev_.window_bytes(halved(p, c, k));
                if (half < best_bytes) best = &c, best_bytes = half;
            }
            if (row_pieces && best) return best;
            if (!row_pieces && best && best_bytes <= whole / 4 * 3) return best;
            if (!row_pieces) other = best;
        }
        return other;
    }

    // A piece whose operands fit. Where its own plan needs more than a window (attention's scratch
    // of packed k, v and partial rows grows with the piece), it is halved along the cut that
    // shrinks its largest operand most (of those a cut shrinks), while one does; then the plan's
    // error stands.
    void run_fitting(const Piece& p) {
        OpCall call = planned(p);
        if (call.noop) return;
        std::vector<Dispatch> ds;
        try {
            for (size_t k = 0; k < p.wide.size(); ++k)
                if (p.wide[k].present()) call.outputs[k - p.n_inputs] = p.wide[k];
            ds = dev_.capture([&] {
                if (p.accumulate) return run_conv(dev_, call, true);  // adds to the earlier pieces' y
                if (p.info != indexed_) return dev_.run(call);  // the op itself, or one of the passes around it
                const IndexPiece piece = piece_of(p);
                if (p.info->family == OpFamily::Matmul) run_matmul(dev_, call, &piece);
                else if (p.info->family == OpFamily::Grad) run_grad(dev_, call, piece);
                else run_index(dev_, call, &piece);
            });
        } catch (const Error& e) {
            if (e.status() != TGL_ERROR_RESOURCE_EXHAUSTED) throw;
            // the largest operand that a cut shrinks (causal attention's keys are not cut; its rows are)
            std::vector<size_t> order(p.operands.size());
            for (size_t k = 0; k < order.size(); ++k) order[k] = k;
            std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
                return dev_.window_bytes(bound(p, a)) > dev_.window_bytes(bound(p, b));
            });
            const std::vector<CutAxis> cuts = cut_axes(p);
            for (size_t k : order) {
                const CutAxis* best = best_cut(p, cuts, k);
                if (best && best->kind != CutAxis::Combine) return cut_into(p, *best, 2);
            }
            throw;
        }
        dev_.submit(p.info->name, std::move(ds));
    }

    // p cut along `cut` into `count` pieces, each run (and cut further where needed).
    void cut_into(const Piece& p, const CutAxis& cut, int64_t count) {
        if (cut.kind == CutAxis::Combine) return combine(p, cut, count);
        if (cut.kind == CutAxis::Route) return route(p, cut);
        if (cut.kind == CutAxis::RowPieces) return row_pieces(p, cut, count);
        std::vector<BufferRef> partials(cut.summed.size());  // of the outputs summed over the cut axis
        for (size_t k = 0; k < cut.summed.size(); ++k)
            if (cut.summed[k]) partials[k] = dev_.internal_buffer(uint64_t(count * p.operands[k].numel * 4));
        std::vector<BufferRef> wide(cut.accumulated.size());  // f32 copies of f16 outputs accumulated over the pieces
        for (size_t k = 0; k < cut.accumulated.size(); ++k) {
            const bool has_wide = k < p.wide.size() && p.wide[k].present();  // already f32 (a piece of a piece)
            if (cut.accumulated[k] && p.operands[k].dtype != TGL_DTYPE_F32 && !has_wide)
                wide[k] = dev_.internal_buffer(uint64_t(p.operands[k].numel * 4));
        }
        for (int64_t i = 0; i < count; ++i) {
            const int64_t lo = cut.extent * i / count, hi = cut.extent * (i + 1) / count;
            Piece part = p;
            for (size_t k = 0; k < p.operands.size(); ++k)
                if (cut.axis[k] >= 0) {
                    part.operands[k] = cut_view(p.operands[k], cut.axis[k], lo * per(cut, k), hi * per(cut, k));
                    if (k < p.wide.size() && p.wide[k].present())
                        part.wide[k] = cut_view(p.wide[k], cut.axis[k], lo * per(cut, k), hi * per(cut, k));
                }
            for (size_t k = 0; k < wide.size(); ++k)
                if (wide[k]) {  // validated in the op's dtype, written in f32
                    part.operands[k] = contiguous_view(wide[k], p.operands[k].dtype, p.operands[k].rank, p.operands[k].shape, 0);
                    part.wide.resize(p.operands.size());
                    part.wide[k] = contiguous_view(wide[k], TGL_DTYPE_F32, p.operands[k].rank, p.operands[k].shape, 0);
                }
            for (size_t k = 0; k < cut.prefix.size(); ++k)
                if (cut.prefix[k] >= 0)
                    part.operands[k] = cut_view(part.operands[k], cut.prefix[k], 0, std::max<int64_t>(0, hi + cut.shift));
            if (cut.kind == CutAxis::Window) {
                part.axis_lo += lo;
                window_params(p, lo, hi, part);
            }
            part.row_lo += lo * cut.row_step;
            if (cut.halo) halo_rows(p, cut.axis[0], lo, hi, part);
            for (size_t k = 0; k < cut.last_only.size(); ++k)
                if (cut.last_only[k] && i + 1 < count) part.operands[k] = TensorArg{};
            if (cut.channel_sums || cut.groups) conv_piece_params(p, cut, i, count, lo, hi, part);
            if (cut.diagonal_shift) diagonal_piece_params(p, cut.diagonal_shift * lo, part);
            if (cut.counts_rows) {  // the counter of row b of the whole op is offset + b (64-bit)
                tgl_sample_params prm = read_params(p, tgl_sample_params{sizeof(tgl_sample_params), 0, 1.0f, 1.0f, 0, 0});
                prm.offset += uint64_t(lo);
                part.params = param_bytes(prm);
            }
            if (cut.kind == CutAxis::Accumulate && i > 0 && p.info->op == TGL_OP_SET_ROWS) {
                part.operands[0] = part.operands[p.n_inputs];  // x = y: later rows land in place, after the earlier
            } else if (cut.kind == CutAxis::Accumulate && i > 0 && p.info->op == TGL_OP_MATMUL) {  // C = alpha Ai Bi + C
                tgl_matmul_params prm = read_params(p, tgl_matmul_params{0, 0, 0, 1.0f, 0.0f, 0});
                prm.beta = 1.0f;
                part.params = param_bytes(prm);
            }
            for (size_t k = 0; k < partials.size(); ++k)
                if (partials[k]) {  // validated in the op's dtype, written in f32
                    const TensorArg& t = p.operands[k];
                    part.operands[k] = contiguous_view(partials[k], t.dtype, t.rank, t.shape, i * t.numel);
                    part.wide.resize(p.operands.size());
                    part.wide[k] = contiguous_view(partials[k], TGL_DTYPE_F32, t.rank, t.shape, i * t.numel);
                }
            run(part);
        }
        for (size_t k = 0; k < partials.size(); ++k)
            if (partials[k]) {  // into the f32 partial result this piece is of the op, or the op's own output
                const TensorArg& t = bound(p, k);
                int64_t shape[TGL_MAX_RANK] = {count};
                std::copy(t.shape, t.shape + t.rank, shape + 1);
                const TensorArg parts = contiguous_view(partials[k], TGL_DTYPE_F32, t.rank + 1, shape, 0);
                if (t.dtype == TGL_DTYPE_F32) {
                    sum_first_axis(parts, t);
                    continue;
                }
                const TensorArg total = contiguous_view(dev_.internal_buffer(uint64_t(t.numel * 4)), TGL_DTYPE_F32, t.rank, t.shape, 0);
                sum_first_axis(parts, total);
                elementwise(TGL_OP_CAST, {total}, t);  // rounded once
            }
        for (size_t k = 0; k < wide.size(); ++k)
            if (wide[k]) {
                const TensorArg& t = p.operands[k];
                elementwise(TGL_OP_CAST, {contiguous_view(wide[k], TGL_DTYPE_F32, t.rank, t.shape, 0)}, t);  // rounded once
            }
    }

    // A piece's params where they name a coordinate of the windowed axis: embedding_backward's
    // padding_idx, in the piece's rows of dW (or none there).
    static void window_params(const Piece& p, int64_t lo, int64_t hi, Piece& part) {
        if (p.info->op != TGL_OP_EMBEDDING_BACKWARD) return;
        tgl_embedding_backward_params prm = read_params(p, tgl_embedding_backward_params{0, 0, 0, 0});
        if (!prm.has_padding_idx) return;
        const int64_t at = int64_t(prm.padding_idx) - lo;
        prm.has_padding_idx = at >= 0 && at < hi - lo;
        prm.padding_idx = prm.has_padding_idx ? int32_t(at) : 0;
        part.params = param_bytes(prm);
    }

    // eye, tril, triu: a piece of the matrix's rows or columns starting `shift` rows (or -shift
    // columns) into the whole has its diagonal moved by `shift`, clamped to [-rows, cols] of the
    // piece (beyond those every element is on the same side of it, as beyond the unclamped one).
    static void diagonal_piece_params(const Piece& p, int64_t shift, Piece& part) {
        tgl_diagonal_params prm = read_params(p, tgl_diagonal_params{sizeof(tgl_diagonal_params), 0});
        const TensorArg& y = part.operands[part.n_inputs];
        const int64_t rows = y.shape[y.rank - 2], cols = y.shape[y.rank - 1];
        prm.diagonal = int32_t(std::min(std::max(int64_t(prm.diagonal) + shift, -rows), cols));
        part.params = param_bytes(prm);
    }

    // A convolution's piece i of `count` along `cut`, [lo, hi): its groups (a run of groups); over
    // the input channels, whether it adds to y (every piece after the first, and every piece of a
    // piece that does) and its activation (the last piece's only).
    static void conv_piece_params(const Piece& p, const CutAxis& cut, int64_t i, int64_t count, int64_t lo, int64_t hi,
                                  Piece& part) {
        tgl_conv_params prm = conv_params_of(p);
        if (cut.groups) prm.groups = uint32_t(hi - lo);
        if (cut.channel_sums) {
            part.accumulate = p.accumulate || i > 0;
            if (i + 1 < count) prm.activation = TGL_ACTIVATION_NONE;
        }
        part.params = param_bytes(prm);
    }

    // A convolution's output rows [lo, hi) along x's axis `xa` (its first spatial one): x cut to
    // the rows they read, [lo s - pad, (hi - 1) s - pad + (k - 1) d + 1), the part of those outside
    // x the piece's own pads (zeros, as the whole op's). 'same' padding becomes its explicit pads.
    void halo_rows(const Piece& p, int xa, int64_t lo, int64_t hi, Piece& part) {
        tgl_conv_params prm = conv_params_of(p);
        const TensorArg& x = p.operands[0];
        const TensorArg& w = p.operands[1];
        const int spatial = x.rank - 2;
        for (int i = 0; i < spatial; ++i) {
            if (prm.padding_mode != TGL_CONV_PADDING_SAME) continue;
            const int32_t total = int32_t(prm.dilation[i] * (w.shape[2 + i] - 1));
            prm.pad_begin[i] = total / 2;
            prm.pad_end[i] = total - total / 2;
        }
        prm.padding_mode = TGL_CONV_PADDING_EXPLICIT;
        const int64_t reach = (w.shape[2] - 1) * prm.dilation[0] + 1;
        const int64_t in_lo = lo * prm.stride[0] - prm.pad_begin[0], in_hi = (hi - 1) * prm.stride[0] - prm.pad_begin[0] + reach;
        const int64_t a = std::min(std::max<int64_t>(in_lo, 0), x.shape[xa]), b = std::min(std::max(in_hi, a), x.shape[xa]);
        part.operands[0] = cut_view(x, xa, a, b);
        prm.pad_begin[0] = int32_t(a - in_lo);
        prm.pad_end[0] = int32_t(in_hi - b);
        part.params = param_bytes(prm);
    }

    // concat, split, stack along their axis; linear_qkv's outputs: one piece per routed operand
    // (an empty one adds nothing), with its part of the whole operands (those cut, not routed).
    void route(const Piece& p, const CutAxis& cut) {
        int64_t lo = 0;
        for (size_t r = 0; r < p.operands.size(); ++r) {
            if (!cut.routed[r]) continue;
            const int64_t len = cut.axis[r] >= 0 ? p.operands[r].shape[cut.axis[r]] : 1;
            Piece part = p;
            if (cut.piece_op) part.info = cut.piece_op;
            part.operands.clear();
            part.n_inputs = 0;
            for (size_t k = 0; k < p.operands.size(); ++k) {
                if (cut.routed[k] && k != r) continue;
                const bool whole = !cut.routed[k] && cut.axis[k] >= 0;
                part.operands.push_back(whole ? cut_view(p.operands[k], cut.axis[k], lo, lo + len) : p.operands[k]);
                if (k < p.n_inputs) ++part.n_inputs;
            }
            lo += len;
            if (len > 0) run(part);
        }
    }

    // A reduction cut along a reduced axis into `count` parts: partial results, then reduced again.
    // f16/bf16 x (but for max/min/any/all, exact in any dtype) is widened to f32 part by part, so that
    // the partial results and their reduction are f32 and y is rounded once, at the end, as the op
    // promises. var/std: each part's mean and variance, combined as Chan et al. (the parts' means'
    // spread added to their mean variance, weighted by the parts' sizes).
    // A row in pieces of about extent / count elements (RowPieces): whole chunks of the row pass
    // (plan_norm_row_pieces), every piece's stats pass, then every piece's apply pass, with one
    // scratch of the partials (and the params of the piece applied) that must fit one window.
    // Each piece must fit as it is (it is not cut further).
    void row_pieces(const Piece& p, const CutAxis& cut, int64_t count) {
        const OpCall whole = planned(p);
        if (whole.noop) return;
        const uint64_t row_len = uint64_t(cut.extent), max_words = uint64_t(max_) / 4;
        // Half a window for the params of a piece (up to 2 of them), half for the partials.
        const uint64_t max_piece = std::min<uint64_t>(row_len / uint64_t(count), std::max<uint64_t>(1, max_words / 4));
        const NormRowPieces plan = plan_norm_row_pieces(dev_, *p.info, row_len, max_piece);
        const uint64_t words = norm_row_piece_words(whole, plan);
        if (words > max_words)
            fail(TGL_ERROR_RESOURCE_EXHAUSTED,
                 "op '%s': run in pieces of its rows, it needs %llu bytes of partial statistics and params in one "
                 "shader storage block, past this device's window of %lld bytes (%llu rows of %llu chunks)",
                 p.info->name, (unsigned long long)(words * 4), (long long)max_, (unsigned long long)whole.norm().rows,
                 (unsigned long long)plan.splits);
        NormRowPiece rp;
        rp.plan = &plan;
        rp.scratch = dev_.internal_buffer(words * 4);
        rp.scratch_bytes = words * 4;
        rp.row_len = row_len;
        const uint64_t piece_len = plan.chunks_per_piece * plan.chunk;
        for (bool stats : {true, false})
            for (uint64_t lo = 0; lo < row_len; lo += piece_len) {
                Piece part = p;
                for (size_t k = 0; k < p.operands.size(); ++k)
                    if (cut.axis[k] >= 0)
                        part.operands[k] = cut_view(p.operands[k], cut.axis[k], int64_t(lo), int64_t(std::min(row_len, lo + piece_len)));
                const OpCall call = planned(part);
                rp.stats = stats;
                rp.chunk_lo = lo / plan.chunk;
                dev_.submit(p.info->name, dev_.capture([&] { run_norm(dev_, call, &rp); }));
            }
    }

    void combine(const Piece& p, const CutAxis& cut, int64_t count) {
        const TensorArg& x = p.operands[0];
        const TensorArg& y = p.operands[p.n_inputs];
        const tgl_op op = p.info->op;
        const bool moments = op == TGL_OP_VAR || op == TGL_OP_STD;
        const bool widen = (x.dtype == TGL_DTYPE_F16 || x.dtype == TGL_DTYPE_BF16) && !exact_in_any_dtype(op);
        if (widen) count = std::min(cut.extent, 2 * count);  // each part's f32 copy about a window
        const tgl_dtype pd = widen ? tgl_dtype(TGL_DTYPE_F32) : y.dtype;  // of the partial results
        const OpInfo* partial_op = find_op(op == TGL_OP_MEAN ? tgl_op(TGL_OP_SUM) : op);
        // partials: (count, y.shape...) contiguous (var/std: the means, then the variances)
        int64_t shape[TGL_MAX_RANK] = {count};
        std::copy(y.shape, y.shape + y.rank, shape + 1);
        const int64_t pbytes = tgl_dtype_size(pd);
        const BufferRef partials = dev_.internal_buffer(uint64_t(count * y.numel * pbytes * (moments ? 2 : 1)));
        BufferRef wide;  // the f32 copy of an f16 part, one for all parts (the dispatches are ordered)
        if (widen) {
            int64_t most = 0;
            for (int64_t i = 0; i < count; ++i)
                most = std::max(most, cut.extent * (i + 1) / count - cut.extent * i / count);
            wide = dev_.internal_buffer(uint64_t(std::max<int64_t>(1, x.numel / cut.extent * most * 4)));
        }
        bool reduced[TGL_MAX_RANK] = {}, keepdims = false;
        reduced_axes(p, reduced, &keepdims);
        double n = 1;  // reduced elements
        for (int d = 0; d < x.rank; ++d)
            if (reduced[d]) n *= double(x.shape[d]);
        std::vector<float> weights;  // var/std: each part's share of the reduced elements
        for (int64_t i = 0; i < count; ++i) {
            const int64_t lo = cut.extent * i / count, hi = cut.extent * (i + 1) / count;
            TensorArg xi = cut_view(x, cut.axis[0], lo, hi);
            if (widen) {
                const TensorArg wi = contiguous_view(wide, TGL_DTYPE_F32, xi.rank, xi.shape, 0);
                elementwise(TGL_OP_CAST, {xi}, wi);
                xi = wi;
            }
            Piece part = p;
            part.operands[0] = xi;
            part.operands[p.n_inputs] = contiguous_view(partials, pd, y.rank, y.shape, i * y.numel);
            if (!moments) {
                part.info = partial_op;
                run(part);
                continue;
            }
            weights.push_back(float(double(hi - lo) / double(cut.extent)));
            tgl_var_params prm = read_params(p, tgl_var_params{sizeof(tgl_var_params), 0, 0, {}, 1.0f});
            tgl_reduce_params mean_prm{sizeof mean_prm, prm.keepdims, prm.n_axes, {}, 0};
            std::copy(prm.axes, prm.axes + TGL_MAX_RANK, mean_prm.axes);
            part.info = find_op(TGL_OP_MEAN);
            part.params = param_bytes(mean_prm);
            run(part);
            prm.correction = 0.0f;  // the part's mean squared deviation
            part.info = find_op(TGL_OP_VAR);
            part.params = param_bytes(prm);
            part.operands[p.n_inputs] = contiguous_view(partials, pd, y.rank, y.shape, (count + i) * y.numel);
            run(part);
        }
        // y's value in f32: y itself, or (widened) a temporary cast into y at the end
        const TensorArg total = widen ? contiguous_view(dev_.internal_buffer(uint64_t(y.numel * 4)), TGL_DTYPE_F32, y.rank, y.shape, 0) : y;
        const TensorArg parts = contiguous_view(partials, pd, y.rank + 1, shape, 0);
        if (moments) {
            // mean = sum_i w_i mean_i; M2 / n = sum_i w_i (var_i + (mean_i - mean)^2); var = M2 / (n - correction)
            int64_t wshape[TGL_MAX_RANK] = {count};
            std::fill(wshape + 1, wshape + y.rank + 1, int64_t(1));
            const TensorArg w = f32_values(weights, y.rank + 1, wshape);
            const TensorArg mean = contiguous_view(dev_.internal_buffer(uint64_t(y.numel * 4)), TGL_DTYPE_F32, y.rank, y.shape, 0);
            const TensorArg t = contiguous_view(dev_.internal_buffer(uint64_t(count * y.numel * 4)), TGL_DTYPE_F32, y.rank + 1, shape, 0);
            const TensorArg vars = contiguous_view(partials, pd, y.rank + 1, shape, count * y.numel);
            elementwise(TGL_OP_MUL, {parts, w}, t);
            sum_first_axis(t, mean);
            elementwise(TGL_OP_SUB, {parts, mean}, t);
            elementwise(TGL_OP_MUL, {t, t}, t);
            elementwise(TGL_OP_ADD, {t, vars}, t);
            elementwise(TGL_OP_MUL, {t, w}, t);
            sum_first_axis(t, total);
            const double correction = read_params(p, tgl_var_params{sizeof(tgl_var_params), 0, 0, {}, 1.0f}).correction;
            elementwise(TGL_OP_MUL, {total, f32_values({float(n / std::max(0.0, n - correction))}, 0, nullptr)}, total);
            if (op == TGL_OP_STD) elementwise(TGL_OP_SQRT, {total}, total);
        } else {
            Piece again = p;
            again.info = partial_op;
            again.operands[0] = parts;
            again.operands[p.n_inputs] = total;
            if (op == TGL_OP_NORM) {
                tgl_vector_norm_params prm = read_params(p, tgl_vector_norm_params{0, 0, 0, {}, 2.0f});
                prm.keepdims = 0;
                prm.n_axes = 1;
                std::fill(prm.axes, prm.axes + TGL_MAX_RANK, 0);
                again.params = param_bytes(prm);
            } else {
                tgl_reduce_params prm{sizeof prm, 0, 1, {0}, 0};
                again.params = param_bytes(prm);
            }
            run(again);
            // mean = sum / count of reduced elements (in place; n is an f32 scalar on the device)
            if (op == TGL_OP_MEAN) elementwise(TGL_OP_DIV, {total, f32_values({float(n)}, 0, nullptr)}, total);
        }
        if (widen) elementwise(TGL_OP_CAST, {total}, y);
    }

    // An elementwise op (or cast) of `ins` into `out`, run as a piece (cut where needed).
    void elementwise(tgl_op op, std::vector<TensorArg> ins, const TensorArg& out) {
        Piece e;
        e.info = find_op(op);
        e.n_inputs = ins.size();
        e.operands = std::move(ins);
        e.operands.push_back(out);
        run(e);
    }

    // out = the sum of `in` over its first axis.
    void sum_first_axis(const TensorArg& in, const TensorArg& out) {
        Piece s;
        s.info = find_op(TGL_OP_SUM);
        s.params = param_bytes(tgl_reduce_params{sizeof(tgl_reduce_params), 0, 1, {0}, 0});
        s.n_inputs = 1;
        s.operands = {in, out};
        run(s);
    }

    // A contiguous f32 tensor of `shape` on the device holding `values`.
    TensorArg f32_values(const std::vector<float>& values, int rank, const int64_t* shape) {
        const BufferRef b = dev_.internal_buffer(values.size() * sizeof(float));
        dev_.upload(b, 0, values.data(), values.size() * sizeof(float));
        return contiguous_view(b, TGL_DTYPE_F32, rank, shape, 0);
    }

    [[noreturn]] void refuse(const Piece& p, size_t k) {
        const TensorArg& t = p.operands[k];
        char label[96];
        operand_label_into(label, sizeof label, *p.info, k >= p.n_inputs, uint32_t(k >= p.n_inputs ? k - p.n_inputs : k));
        const SplitRule* rule = gles_family(*p.info).split;
        const char* why = rule ? rule->refusal(p, t) : "this op family is not run in pieces";
        refuse(p.info, t, label, why);
    }

    [[noreturn]] void refuse(const OpInfo* info, const TensorArg& t, const char* label, const char* why) {
        fail(TGL_ERROR_RESOURCE_EXHAUSTED,
             "op '%s': %s spans %lld bytes (bytes [%lld, %lld) of its buffer), but one shader storage block on this "
             "device covers at most %lld bytes (GL_MAX_SHADER_STORAGE_BLOCK_SIZE = %lld%s), and the op cannot run in "
             "pieces whose operands fit: %s",
             info->name, label, (long long)dev_.window_bytes(t), (long long)t.byte_lo, (long long)t.byte_hi,
             (long long)max_, (long long)dev_.limits().max_ssbo_block_bytes,
             max_ < dev_.limits().max_ssbo_block_bytes ? ", lowered by TGL_GLES_TEST_FAULT=max_window" : "", why);
    }

    GlesDevice& dev_;
    const int64_t max_;
    const OpInfo* indexed_ = nullptr;  // an op with an index: its pieces use check_ (check_indices_once)
    GlesDevice::DeviceCheck check_;
    BufferRef scratch_;              // ... and (Grad) the scratch its check filled,
    const OpCall* whole_ = nullptr;  // and the whole op

    IndexPiece piece_of(const Piece& p) const { return IndexPiece{check_, p.axis_lo, scratch_, whole_, p.row_lo}; }
};

}  // namespace

// The families' split rules, each registered by its family's register_<family>_kernels (a family
// without one is not run in pieces).
const SplitRule kElementwiseSplit = {elementwise_cuts, no_cut_refusal};
const SplitRule kReduceSplit = {reduce_cuts, no_cut_refusal};
const SplitRule kArgReduceSplit = {arg_reduce_cuts, rows_refusal};
const SplitRule kScanSplit = {scan_cuts, rows_refusal};
const SplitRule kMatmulSplit = {matmul_cuts, matmul_refusal};
const SplitRule kNormSplit = {norm_cuts, rows_refusal};
const SplitRule kLayoutSplit = {layout_cuts, layout_refusal};
const SplitRule kIndexSplit = {index_cuts, index_refusal};
const SplitRule kSelectSplit = {select_cuts, rows_refusal};
const SplitRule kGenerateSplit = {generate_cuts, generate_refusal};
const SplitRule kConvSplit = {conv_cuts, conv_refusal};
const SplitRule kPoolSplit = {pool_cuts, pool_refusal};
const SplitRule kAttentionSplit = {attention_cuts, attention_refusal};
const SplitRule kSequenceSplit = {sequence_cuts, sequence_refusal};
const SplitRule kGradSplit = {grad_cuts, grad_refusal};

bool run_in_pieces(GlesDevice& dev, const OpCall& call) {
    const int64_t max = dev.max_window_bytes();
    bool fits = true;
    for (const TensorArg& t : call.inputs) fits = fits && dev.window_bytes(t) <= max;
    for (const TensorArg& t : call.outputs) fits = fits && dev.window_bytes(t) <= max;
    if (fits) return false;
    const tgl_op op = call.info->op;
    Piece whole;
    whole.info = call.info;
    if (call.params) {
        uint32_t size = 0;  // validated: a published size of the op's params struct
        std::memcpy(&size, call.params, sizeof size);
        whole.params.assign(static_cast<const uint8_t*>(call.params), static_cast<const uint8_t*>(call.params) + size);
    }
    whole.operands = call.inputs;
    whole.operands.insert(whole.operands.end(), call.outputs.begin(), call.outputs.end());
    whole.n_inputs = call.inputs.size();
    if (const IndexPlan* index = std::get_if<IndexPlan>(&call.plan)) whole.index_axis = index->axis;
    if (op == TGL_OP_SCATTER || op == TGL_OP_SCATTER_ADD)  // of src, only the elements at the index's coordinates are read
        for (int d = 0; d < whole.operands[1].rank; ++d) whole.operands[2] = cut_view(whole.operands[2], d, 0, whole.operands[1].shape[d]);
    const bool indexed = op == TGL_OP_GATHER || op == TGL_OP_INDEX_SELECT || op == TGL_OP_ONE_HOT ||
                         op == TGL_OP_SCATTER || op == TGL_OP_SCATTER_ADD || op == TGL_OP_SET_ROWS || op == TGL_OP_GROUPED_LINEAR ||
                         op == TGL_OP_EMBEDDING_BACKWARD || op == TGL_OP_CROSS_ENTROPY ||
                         op == TGL_OP_CROSS_ENTROPY_BACKWARD;
    Splitter splitter(dev);
    std::vector<Dispatch> dispatches = dev.capture([&] {
        if (indexed) splitter.check_indices_once(call);
        splitter.run(whole);
        if (indexed) splitter.after_pieces(call);
    });
    dev.submit(call.info->name, std::move(dispatches));
    return true;
}

}  // namespace gles
}  // namespace tgl
