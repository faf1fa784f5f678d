#include "validate.h"

#include "backend.h"
#include "block_dtypes.h"
#include "op_families.h"
#include "status.h"
#include "validate_util.h"

#include <algorithm>

namespace tgl {

const char* dtype_name(tgl_dtype dtype) {
    switch (dtype) {
    case TGL_DTYPE_F32: return "f32";
    case TGL_DTYPE_F16: return "f16";
    case TGL_DTYPE_BF16: return "bf16";
    case TGL_DTYPE_I32: return "i32";
    case TGL_DTYPE_I8: return "i8";
    case TGL_DTYPE_U8: return "u8";
    case TGL_DTYPE_BOOL: return "bool";
    case TGL_DTYPE_I64: return "i64";
    case TGL_DTYPE_I16: return "i16";
    case TGL_DTYPE_Q4_0: return "q4_0";
    case TGL_DTYPE_Q4_1: return "q4_1";
    case TGL_DTYPE_Q5_0: return "q5_0";
    case TGL_DTYPE_Q5_1: return "q5_1";
    case TGL_DTYPE_Q8_0: return "q8_0";
    case TGL_DTYPE_Q4_K: return "q4_K";
    case TGL_DTYPE_Q5_K: return "q5_K";
    case TGL_DTYPE_Q6_K: return "q6_K";
    default: return "invalid";
    }
}

std::string shape_string(int rank, const int64_t* shape) {
    std::string s = "(";
    for (int d = 0; d < rank; ++d) {
        if (d) s += ", ";
        s += std::to_string(shape[d]);
    }
    return s + ")";
}

namespace {

using i128 = __int128;

// Whether a non-empty view may map two elements to one address, by a sufficient test of
// distinctness: dims of size 1 left out, the others taken by increasing |stride|, each |stride|
// must exceed the span (sum of |stride| * (size - 1)) of the dims before it. It refuses some exotic
// interleaved views whose elements are distinct (shape (3, 2), strides (2, 3)); plugin_api.h says so.
bool may_overlap_itself(const TensorArg& t) {
    i128 abs_stride[TGL_MAX_RANK];
    int64_t size[TGL_MAX_RANK];
    int n = 0;
    for (int d = 0; d < t.rank; ++d) {
        if (t.shape[d] == 1) continue;
        abs_stride[n] = t.strides[d] < 0 ? -i128(t.strides[d]) : i128(t.strides[d]);
        size[n++] = t.shape[d];
    }
    bool used[TGL_MAX_RANK] = {};
    i128 span = 0;
    for (int k = 0; k < n; ++k) {
        int next = -1;  // the unused dim of least |stride| (rank <= 8: a selection is enough)
        for (int j = 0; j < n; ++j)
            if (!used[j] && (next < 0 || abs_stride[j] < abs_stride[next])) next = j;
        used[next] = true;
        if (abs_stride[next] <= span) return true;
        span += abs_stride[next] * (size[next] - 1);
    }
    return false;
}

// A view of a block dtype (plugin_api.h's layout rule; block_dtypes.h): the operand must take
// one, rank >= 1, byte_offset on a block boundary, the innermost stride 1, the others multiples of
// B. Its extent is counted in blocks: each row covers ceil(K / B) of them.
TensorArg check_block_tensor(const OpInfo& info, const tgl_tensor& t, bool output, uint32_t index,
                             const BufferLookup& lookup, const char* what) {
    const uint32_t slot = output ? info.n_inputs + index : index;
    if (!(info.operands[slot].dtypes & TGL_DTYPE_BIT(t.dtype)))
        fail(TGL_ERROR_DTYPE_MISMATCH, "op '%s': %s is %s, a block dtype; %s", info.name, what, dtype_name(t.dtype),
             kBlockDtypeUse);
    const int64_t B = tgl_dtype_block_size(t.dtype), BB = tgl_dtype_block_bytes(t.dtype);
    TensorArg arg;
    arg.dtype = t.dtype;
    arg.rank = int(t.rank);
    if (t.rank < 1)
        fail(TGL_ERROR_SHAPE_MISMATCH, "%s is a %s block tensor of rank 0; a block tensor has rank >= 1 (rows of K)",
             what, dtype_name(t.dtype));
    for (int d = 0; d < arg.rank; ++d) {
        if (t.shape[d] < 0)
            fail(TGL_ERROR_INVALID_ARGUMENT, "%s has negative size %lld in dim %d", what, (long long)t.shape[d], d);
        arg.shape[d] = t.shape[d];
        arg.strides[d] = t.strides[d];
    }
    char buffer_what[104];
    arg.buffer = lookup(t.buffer, operand_label_into(buffer_what, sizeof buffer_what, info, output, index, ".buffer"));
    if (t.byte_offset % uint64_t(BB) != 0)
        fail(TGL_ERROR_INVALID_ARGUMENT, "%s.byte_offset %llu is not on a block boundary: a %s block is %lld bytes",
             what, (unsigned long long)t.byte_offset, dtype_name(t.dtype), (long long)BB);
    if (t.byte_offset > uint64_t(INT64_MAX) / 2)
        fail(TGL_ERROR_OUT_OF_BOUNDS, "%s.byte_offset %llu is past the end of its %llu-byte buffer", what,
             (unsigned long long)t.byte_offset, (unsigned long long)arg.buffer->size());
    const int inner = arg.rank - 1;
    const int64_t K = arg.shape[inner];
    // Rows (every dim but the innermost) and the blocks of one row; overflow judged on the whole.
    uint64_t rows = 1, blocks = 0;
    bool overflow = false, empty = K == 0;
    for (int d = 0; d < inner; ++d) {
        empty = empty || arg.shape[d] == 0;
        if (arg.shape[d] && __builtin_mul_overflow(rows, uint64_t(arg.shape[d]), &rows)) overflow = true;
    }
    uint64_t bytes = 0;
    if (overflow || __builtin_mul_overflow(rows, uint64_t(blocks_of_row(K, B)), &blocks) ||
        __builtin_mul_overflow(blocks, uint64_t(BB), &bytes) || bytes > uint64_t(INT64_MAX) || rows * uint64_t(B) > uint64_t(INT64_MAX))
        fail(TGL_ERROR_SIZE_OVERFLOW, "%s: shape %s of %s blocks needs more than 2^63 bytes", what,
             shape_string(arg.rank, arg.shape).c_str(), dtype_name(t.dtype));
    arg.numel = 1;
    for (int d = 0; d < arg.rank; ++d) arg.numel *= arg.shape[d];
    arg.offset = int64_t(t.byte_offset) / BB * B;
    if (empty) {
        std::fill(arg.strides, arg.strides + arg.rank, int64_t(0));
        arg.byte_lo = arg.byte_hi = int64_t(t.byte_offset);
        return arg;
    }
    if (K > 1 && arg.strides[inner] != 1)
        fail(TGL_ERROR_INVALID_ARGUMENT, "%s: a %s block tensor's innermost dim must have stride 1 (its elements are "
             "packed in blocks); got strides %s", what, dtype_name(t.dtype), shape_string(arg.rank, arg.strides).c_str());
    arg.strides[inner] = 1;
    for (int d = 0; d < inner; ++d)
        if (arg.strides[d] % B != 0)
            fail(TGL_ERROR_INVALID_ARGUMENT, "%s: stride %lld of dim %d is not a multiple of the %s block size %lld, so "
                 "a row would not start on a block boundary (strides %s, in elements)", what, (long long)arg.strides[d],
                 d, dtype_name(t.dtype), (long long)B, shape_string(arg.rank, arg.strides).c_str());
    i128 byte_lo = 0, byte_hi = 0;
    block_view_bytes(t.dtype, arg.rank, arg.shape, arg.strides, arg.offset, &byte_lo, &byte_hi);
    if (byte_lo < 0 || byte_hi > i128(arg.buffer->size()))
        fail(TGL_ERROR_OUT_OF_BOUNDS,
             "%s: %s block view of shape %s, strides %s at byte offset %llu reaches bytes [%lld, %lld) (%lld-byte "
             "blocks of %lld, ceil(K / %lld) blocks a row) but its buffer has %llu bytes",
             what, dtype_name(t.dtype), shape_string(arg.rank, arg.shape).c_str(),
             shape_string(arg.rank, arg.strides).c_str(), (unsigned long long)t.byte_offset,
             (long long)std::max<i128>(byte_lo, INT64_MIN), (long long)std::min<i128>(byte_hi, INT64_MAX),
             (long long)BB, (long long)B, (long long)B, (unsigned long long)arg.buffer->size());
    arg.byte_lo = int64_t(byte_lo);
    arg.byte_hi = int64_t(byte_hi);
    return arg;
}

TensorArg check_tensor(const OpInfo& info, const tgl_tensor& t, bool output, uint32_t index,
                       const BufferLookup& lookup) {
    char what[96], buffer_what[104];
    operand_label_into(what, sizeof what, info, output, index);
    TensorArg arg;
    if (t.rank > TGL_MAX_RANK)
        fail(TGL_ERROR_RANK_TOO_LARGE, "%s has rank %u; the limit is %d", what, t.rank, TGL_MAX_RANK);
    if (is_block_dtype(t.dtype)) return check_block_tensor(info, t, output, index, lookup, what);
    uint32_t es = tgl_dtype_size(t.dtype);
    if (es == 0) fail(TGL_ERROR_INVALID_ARGUMENT, "%s has unknown dtype %u", what, t.dtype);
    arg.dtype = t.dtype;
    arg.rank = static_cast<int>(t.rank);
    int64_t numel = 1;
    for (int d = 0; d < arg.rank; ++d) {
        if (t.shape[d] < 0)
            fail(TGL_ERROR_INVALID_ARGUMENT, "%s has negative size %lld in dim %d", what,
                 (long long)t.shape[d], d);
        arg.shape[d] = t.shape[d];
        arg.strides[d] = t.strides[d];
    }
    // Overflow is judged on the full product even when another dim is 0.
    bool overflow = false;
    uint64_t nonzero_product = 1;
    for (int d = 0; d < arg.rank; ++d) {
        if (t.shape[d] == 0) continue;
        if (__builtin_mul_overflow(nonzero_product, uint64_t(t.shape[d]), &nonzero_product)) overflow = true;
    }
    uint64_t bytes = 0;
    if (overflow || nonzero_product > uint64_t(INT64_MAX) ||
        __builtin_mul_overflow(nonzero_product, uint64_t(es), &bytes))
        fail(TGL_ERROR_SIZE_OVERFLOW, "%s: shape %s of %s elements needs more than 2^64 bytes",
             what, shape_string(arg.rank, arg.shape).c_str(), dtype_name(t.dtype));
    for (int d = 0; d < arg.rank; ++d) numel *= arg.shape[d];
    arg.numel = numel;

    arg.buffer = lookup(t.buffer, operand_label_into(buffer_what, sizeof buffer_what, info, output, index, ".buffer"));

    if (t.byte_offset % es != 0)
        fail(TGL_ERROR_INVALID_ARGUMENT, "%s.byte_offset %llu is not a multiple of the %s element size %u",
             what, (unsigned long long)t.byte_offset, dtype_name(t.dtype), es);
    if (t.byte_offset > uint64_t(INT64_MAX))
        fail(TGL_ERROR_OUT_OF_BOUNDS, "%s.byte_offset %llu is past the end of its %llu-byte buffer", what,
             (unsigned long long)t.byte_offset, (unsigned long long)arg.buffer->size());
    arg.offset = int64_t(t.byte_offset / es);

    if (output) {
        for (int d = 0; d < arg.rank; ++d)
            if (arg.strides[d] == 0 && arg.shape[d] > 1)
                fail(TGL_ERROR_INVALID_ARGUMENT,
                     "%s has stride 0 in dim %d of size %lld: an output cannot broadcast", what, d,
                     (long long)arg.shape[d]);
    }
    if (numel == 0) {
        // An empty view touches no memory: its strides (which may be anything) are never used;
        // zeroed, no plan or kernel meets them.
        std::fill(arg.strides, arg.strides + arg.rank, int64_t(0));
        arg.byte_lo = arg.byte_hi = int64_t(t.byte_offset);
        return arg;
    }
    i128 lo = 0, hi = 0;
    for (int d = 0; d < arg.rank; ++d) {
        i128 span = i128(arg.strides[d]) * (arg.shape[d] - 1);
        if (span < 0) lo += span; else hi += span;
    }
    i128 byte_lo = i128(t.byte_offset) + lo * es;
    i128 byte_hi = i128(t.byte_offset) + (hi + 1) * es;
    if (byte_lo < 0 || byte_hi > i128(arg.buffer->size()))
        fail(TGL_ERROR_OUT_OF_BOUNDS,
             "%s: view of shape %s, strides %s at byte offset %llu reaches bytes [%lld, %lld) but its "
             "buffer has %llu bytes",
             what, shape_string(arg.rank, arg.shape).c_str(),
             shape_string(arg.rank, arg.strides).c_str(), (unsigned long long)t.byte_offset,
             (long long)std::max<i128>(byte_lo, INT64_MIN), (long long)std::min<i128>(byte_hi, INT64_MAX),
             (unsigned long long)arg.buffer->size());
    arg.byte_lo = int64_t(byte_lo);
    arg.byte_hi = int64_t(byte_hi);
    if (output && may_overlap_itself(arg))
        fail(TGL_ERROR_INVALID_ARGUMENT,
             "%s: view of shape %s, strides %s overlaps itself (two of its elements can share an address); an "
             "output's elements must be distinct: leaving out dims of size 1 and taking the others by increasing "
             "|stride|, each |stride| must exceed the span of the dims before it",
             what, shape_string(arg.rank, arg.shape).c_str(), shape_string(arg.rank, arg.strides).c_str());
    return arg;
}

// Every operand's dtype against the op's rule: one of the allowed dtypes, or the dtype of another
// operand.
void check_dtypes(OpCall& call) {
    const OpInfo& info = *call.info;
    // Operands by catalogue slot (inputs 0..n_inputs-1, then outputs); variadic ops pass fewer.
    auto operand = [&](uint32_t slot) -> const TensorArg* {
        if (slot < info.n_inputs) return slot < call.inputs.size() ? &call.inputs[slot] : nullptr;
        uint32_t o = slot - info.n_inputs;
        return o < call.outputs.size() ? &call.outputs[o] : nullptr;
    };
    auto label = [&](uint32_t slot) {
        return operand_label(info, slot >= info.n_inputs, slot < info.n_inputs ? slot : slot - info.n_inputs);
    };
    const TensorArg* first = nullptr;
    for (uint32_t slot = 0; slot < info.n_inputs + info.n_outputs; ++slot) {
        const TensorArg* arg = operand(slot);
        if (!arg || !arg->present()) continue;
        if (!first) first = arg;
        const OperandRule& rule = info.operands[slot];
        tgl_dtype dt = arg->dtype;
        if (rule.same_as >= 0 && (rule.dtypes & TGL_DTYPE_BIT(dt))) {
            continue;  // a dtype the rule lists besides "same as" (linear's W: a GGUF block dtype)
        } else if (rule.same_as >= 0) {
            const TensorArg* ref = operand(uint32_t(rule.same_as));
            if (!ref || !ref->present()) continue;  // an absent optional operand constrains nothing
            const bool mixed = ref->dtype == TGL_DTYPE_F32 && (rule.under_f32 & TGL_DTYPE_BIT(dt));
            if (dt != ref->dtype && !mixed)
                fail(TGL_ERROR_DTYPE_MISMATCH, "op '%s': %s is %s but %s is %s; they must have the same dtype%s%s",
                     info.name, label(slot).c_str(), dtype_name(dt), label(uint32_t(rule.same_as)).c_str(),
                     dtype_name(ref->dtype),
                     rule.under_f32 ? " (f16 or bf16 weights are taken only under f32 activations)" : "",
                     rule.dtypes ? "; a GGUF block dtype is also taken there" : "");
        } else if (!(rule.dtypes & TGL_DTYPE_BIT(dt))) {
            std::string allowed;
            for (tgl_dtype d = 1; d < TGL_DTYPE_COUNT_V1_3; ++d)
                if (tgl_dtype_block_size(d) && rule.dtypes & TGL_DTYPE_BIT(d)) allowed += std::string(allowed.empty() ? "" : ", ") + dtype_name(d);
            fail(TGL_ERROR_DTYPE_MISMATCH, "op '%s': %s is %s; this op takes %s there", info.name,
                 label(slot).c_str(), dtype_name(dt), allowed.c_str());
        }
    }
    call.dtype = first ? first->dtype : tgl_dtype(TGL_DTYPE_INVALID);
}

bool overlaps(const TensorArg& a, const TensorArg& b) {
    return a.buffer == b.buffer && a.numel > 0 && b.numel > 0 && a.byte_lo < b.byte_hi &&
           b.byte_lo < a.byte_hi;
}

bool same_view(const TensorArg& a, const TensorArg& b) {
    return a.buffer == b.buffer && a.dtype == b.dtype && a.offset == b.offset && a.rank == b.rank &&
           std::equal(a.shape, a.shape + a.rank, b.shape) &&
           std::equal(a.strides, a.strides + a.rank, b.strides);
}

// Outputs never share bytes with each other. An output may share memory with an input only as the
// identical view, and only where each element is read and written by the same invocation:
// elementwise ops, tril/triu, and y over x in scatter/scatter_add/set_rows (in place). Any other overlap
// would make the result depend on execution order.
bool may_be_in_place(const OpInfo& info, size_t input) {
    if (family_rules(info).in_place) return true;
    if (info.op == TGL_OP_TRIL || info.op == TGL_OP_TRIU) return true;
    return (info.op == TGL_OP_SCATTER || info.op == TGL_OP_SCATTER_ADD || info.op == TGL_OP_SET_ROWS) && input == 0;
}

void check_aliasing(const OpCall& call) {
    const OpInfo& info = *call.info;
    for (size_t o = 0; o < call.outputs.size(); ++o) {
        const TensorArg& out = call.outputs[o];
        for (size_t i = 0; i < call.inputs.size(); ++i) {
            const TensorArg& in = call.inputs[i];
            if (!overlaps(out, in) || (may_be_in_place(info, i) && same_view(out, in))) continue;
            fail(TGL_ERROR_INVALID_ARGUMENT,
                 "op '%s': %s overlaps %s in the same buffer; an output may only alias an input as "
                 "the identical view of an elementwise op, tril/triu, or x in scatter/scatter_add",
                 info.name, operand_label(info, true, uint32_t(o)).c_str(),
                 operand_label(info, false, uint32_t(i)).c_str());
        }
        for (size_t p = 0; p < o; ++p)
            if (overlaps(call.outputs[p], out))
                fail(TGL_ERROR_INVALID_ARGUMENT, "op '%s': %s overlaps %s in the same buffer; outputs must be disjoint",
                     info.name, operand_label(info, true, uint32_t(p)).c_str(),
                     operand_label(info, true, uint32_t(o)).c_str());
    }
}

}  // namespace

void OpCall::wrong_plan(const char* name) const {
    fail(TGL_ERROR_INTERNAL, "op '%s' (OpFamily %d) has no %s plan: its call holds plan alternative %zu of OpCall::plan",
         info ? info->name : "(none)", info ? int(info->family) : -1, name, plan.index());
}

OpCall validate_op(const OpInfo& info, const void* params, const tgl_tensor* inputs,
                   uint32_t n_inputs, const tgl_tensor* outputs, uint32_t n_outputs,
                   const BufferLookup& lookup) {
    OpCall call;
    call.info = &info;
    call.params = params;
    const uint32_t min_in = info.min_inputs ? info.min_inputs : info.n_inputs;
    const uint32_t min_out = info.min_outputs ? info.min_outputs : info.n_outputs;
    if (n_inputs < min_in || n_inputs > info.n_inputs || n_outputs < min_out || n_outputs > info.n_outputs) {
        auto range = [](uint32_t lo, uint32_t hi) { return lo == hi ? format("%u", hi) : format("%u to %u", lo, hi); };
        fail(TGL_ERROR_INVALID_ARGUMENT, "op '%s' takes %s inputs and %s outputs; got n_inputs = %u, n_outputs = %u",
             info.name, range(min_in, info.n_inputs).c_str(), range(min_out, info.n_outputs).c_str(), n_inputs, n_outputs);
    }
    if (n_inputs && !inputs) fail(TGL_ERROR_NULL_POINTER, "inputs is NULL but op '%s' takes %u inputs", info.name, n_inputs);
    if (n_outputs && !outputs) fail(TGL_ERROR_NULL_POINTER, "outputs is NULL but op '%s' takes %u outputs", info.name, n_outputs);

    const FamilyRules& family = family_rules(info);
    // Params that the family planner does not read are checked here, before the operands.
    if (family.read_params_first) family.read_params_first(call, params);

    // An optional operand whose buffer handle is 0 is absent: a TensorArg without a buffer.
    auto optional = [&](uint32_t slot, const tgl_tensor& t) { return (info.optional_slots >> slot & 1u) && t.buffer == 0; };
    for (uint32_t i = 0; i < n_inputs; ++i)
        call.inputs.push_back(optional(i, inputs[i]) ? TensorArg{} : check_tensor(info, inputs[i], false, i, lookup));
    for (uint32_t i = 0; i < n_outputs; ++i)
        call.outputs.push_back(optional(info.n_inputs + i, outputs[i]) ? TensorArg{}
                                                                        : check_tensor(info, outputs[i], true, i, lookup));

    check_dtypes(call);

    family.plan(call, params);
    check_aliasing(call);
    // Nothing to run when every output is empty (absent optional outputs count as empty).
    call.noop = true;
    for (const TensorArg& t : call.outputs) call.noop = call.noop && t.numel == 0;
    return call;
}

}  // namespace tgl
