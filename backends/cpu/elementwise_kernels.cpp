// The CPU reference kernels of the elementwise families (Unary, Binary, Ternary). Plain loops that
// follow the ElementwisePlan. Every value is widened to double, computed with the C library in
// double, and rounded once, at the store. The scalar functions of the ops are in scalar_ops.h.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "int_ops.h"
#include "scalar_ops.h"
#include "parallel.h"
#include "status.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace tgl {
namespace cpu {
namespace {

// Below these amounts of work a kernel runs on the calling thread only.
constexpr int64_t kMinElementsPerThread = 1 << 16;


// ---------------------------------------------------------------------------------------------
// Elementwise: walks the output indices [begin, end) of the plan in row-major order and calls
// f(offset of operand 0, 1, 2) for each. Operand 0 is the output; unused operands have offset 0.

template <class F>
void walk(const ElementwisePlan& p, int64_t begin, int64_t end, const F& f) {
    if (p.rank == 0) {  // a single element
        if (begin < end) f(p.offset[0], p.offset[1], p.offset[2]);
        return;
    }
    const int last = p.rank - 1;
    int64_t index[TGL_MAX_RANK];
    int64_t off[ElementwisePlan::kMaxOperands] = {};  // unused operands stay 0
    int64_t rem = begin;
    for (int d = last; d >= 0; --d) {
        index[d] = rem % p.shape[d];
        rem /= p.shape[d];
    }
    for (int k = 0; k < p.n_operands; ++k) {
        off[k] = p.offset[k];
        for (int d = 0; d <= last; ++d) off[k] += index[d] * p.strides[k][d];
    }
    const int64_t s0 = p.strides[0][last], s1 = p.strides[1][last], s2 = p.strides[2][last];
    for (int64_t i = begin; i < end;) {
        // The rest of the current innermost row (or up to `end`).
        const int64_t run = std::min(p.shape[last] - index[last], end - i);
        for (int64_t j = 0; j < run; ++j) f(off[0] + j * s0, off[1] + j * s1, off[2] + j * s2);
        i += run;
        index[last] += run;
        for (int k = 0; k < p.n_operands; ++k) off[k] += run * p.strides[k][last];
        // Carry into the outer dims.
        for (int d = last; d > 0 && index[d] == p.shape[d]; --d) {
            index[d] = 0;
            ++index[d - 1];
            for (int k = 0; k < p.n_operands; ++k)
                off[k] += p.strides[k][d - 1] - p.shape[d] * p.strides[k][d];
        }
    }
}

// Element access of one operand of any dtype: load as double (exact for every dtype), store with
// the rounding rules of 'cast' (dtype_io.h).
struct Operand {
    uint8_t* base;
    tgl_dtype dtype;
    uint32_t size;
    double load(int64_t i) const { return load_as_double(base, dtype, i); }
    void store(int64_t i, double v, bool from_integer = false) const { store_from_double(base, dtype, i, v, from_integer); }
};

Operand output_operand(const OpCall& c) {
    const TensorArg& t = c.outputs[0];
    return Operand{cpu_buffer(t.buffer).bytes(), t.dtype, tgl_dtype_size(t.dtype)};
}
Operand input_operand(const OpCall& c, int k) {
    const TensorArg& t = c.inputs[size_t(k)];
    return Operand{cpu_buffer(t.buffer).bytes(), t.dtype, tgl_dtype_size(t.dtype)};
}

// f32 fast paths of the float ops (the common case), then any float dtype through Operand.
template <class F>
void unary(const OpCall& c, unsigned threads, const F& f) {
    const ElementwisePlan& p = c.elementwise();
    if (c.inputs[0].dtype == TGL_DTYPE_F32 && c.outputs[0].dtype == TGL_DTYPE_F32) {
        float* y = cpu_buffer(c.outputs[0].buffer).f32();
        const float* x = cpu_buffer(c.inputs[0].buffer).f32();
        parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
            walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) {
                y[oy] = static_cast<float>(f(static_cast<double>(x[ox])));
            });
        });
        return;
    }
    const Operand y = output_operand(c), x = input_operand(c, 0);
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) { y.store(oy, f(x.load(ox))); });
    });
}

template <class F>
void binary(const OpCall& c, unsigned threads, const F& f) {
    const ElementwisePlan& p = c.elementwise();
    if (c.inputs[0].dtype == TGL_DTYPE_F32 && c.outputs[0].dtype == TGL_DTYPE_F32) {
        float* y = cpu_buffer(c.outputs[0].buffer).f32();
        const float* a = cpu_buffer(c.inputs[0].buffer).f32();
        const float* b = cpu_buffer(c.inputs[1].buffer).f32();
        parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
            walk(p, begin, end, [&](int64_t oy, int64_t oa, int64_t ob) {
                y[oy] = static_cast<float>(f(static_cast<double>(a[oa]), static_cast<double>(b[ob])));
            });
        });
        return;
    }
    const Operand y = output_operand(c), a = input_operand(c, 0), b = input_operand(c, 1);
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        walk(p, begin, end, [&](int64_t oy, int64_t oa, int64_t ob) { y.store(oy, f(a.load(oa), b.load(ob))); });
    });
}

// Integer arithmetic (i64, i32, i8, u8; int_ops.h): exact int64 values, the result's low bits stored.
template <class F>
void int_unary(const OpCall& c, unsigned threads, const F& f) {
    const ElementwisePlan& p = c.elementwise();
    const Operand y = output_operand(c), x = input_operand(c, 0);
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) {
            store_int_wrapped(y.base, y.dtype, oy, f(load_as_int64(x.base, x.dtype, ox)));
        });
    });
}

template <class F>
void int_binary(const OpCall& c, unsigned threads, const F& f) {
    const ElementwisePlan& p = c.elementwise();
    const Operand y = output_operand(c), a = input_operand(c, 0), b = input_operand(c, 1);
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        walk(p, begin, end, [&](int64_t oy, int64_t oa, int64_t ob) {
            store_int_wrapped(y.base, y.dtype, oy, f(load_as_int64(a.base, a.dtype, oa), load_as_int64(b.base, b.dtype, ob)));
        });
    });
}

// The range of an integer dtype (i64, i32, i8, u8).
void int_range(tgl_dtype dt, int64_t* min, int64_t* max) {
    if (dt == TGL_DTYPE_I64) {
        *min = INT64_MIN;
        *max = INT64_MAX;
        return;
    }
    *min = dt == TGL_DTYPE_I32 ? INT32_MIN : (dt == TGL_DTYPE_I8 ? -128 : 0);
    *max = dt == TGL_DTYPE_I32 ? INT32_MAX : (dt == TGL_DTYPE_I8 ? 127 : 255);
}

// cast: every dtype to every dtype (the load is exact, the store rounds as 'cast' says): integer
// sources as int64 (i64 beyond 2^53 too), float sources as double.
void cast(const OpCall& c, unsigned threads) {
    const ElementwisePlan& p = c.elementwise();
    const Operand y = output_operand(c), x = input_operand(c, 0);
    const bool from_integer = !is_float_dtype(x.dtype);
    if (x.dtype == y.dtype) {  // a copy, bit for bit (NaN payloads included)
        parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
            walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) {
                std::memcpy(y.base + oy * y.size, x.base + ox * x.size, y.size);
            });
        });
        return;
    }
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        if (from_integer)
            walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) {
                store_from_int64(y.base, y.dtype, oy, load_as_int64(x.base, x.dtype, ox));
            });
        else
            walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) { y.store(oy, x.load(ox)); });
    });
}

// Predicates: y (bool or u8) = 0 or 1. Float inputs compare as doubles (exact; NaN compares false
// except with ne; -0 == +0; NaN is true as a truth value: NaN != 0), integer inputs as int64_t
// (exact over all 64 bits of an i64, where doubles round beyond 2^53).
template <class F>
void predicate1(const OpCall& c, unsigned threads, const F& f) {
    const ElementwisePlan& p = c.elementwise();
    const Operand y = output_operand(c), x = input_operand(c, 0);
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) { y.base[oy] = f(x.load(ox)) ? 1 : 0; });
    });
}

template <class F>
void predicate2(const OpCall& c, unsigned threads, const F& f) {
    const ElementwisePlan& p = c.elementwise();
    const Operand y = output_operand(c), a = input_operand(c, 0), b = input_operand(c, 1);
    const bool integers = !is_float_dtype(a.dtype);  // b has a's dtype
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        if (integers)
            walk(p, begin, end, [&](int64_t oy, int64_t oa, int64_t ob) {
                y.base[oy] = f(load_as_int64(a.base, a.dtype, oa), load_as_int64(b.base, b.dtype, ob)) ? 1 : 0;
            });
        else
            walk(p, begin, end, [&](int64_t oy, int64_t oa, int64_t ob) { y.base[oy] = f(a.load(oa), b.load(ob)) ? 1 : 0; });
    });
}

// Calls visit(f) with f(T a, T b) -> bool (T double or int64_t: predicate2's loads) for a compare or
// logical op; false if `op` is not one.
template <class Visit>
bool visit_predicate(tgl_op op, Visit&& visit) {
    switch (op) {
    case TGL_OP_EQ: visit([](auto a, auto b) { return a == b; }); return true;
    case TGL_OP_NE: visit([](auto a, auto b) { return a != b; }); return true;
    case TGL_OP_LT: visit([](auto a, auto b) { return a < b; }); return true;
    case TGL_OP_LE: visit([](auto a, auto b) { return a <= b; }); return true;
    case TGL_OP_GT: visit([](auto a, auto b) { return a > b; }); return true;
    case TGL_OP_GE: visit([](auto a, auto b) { return a >= b; }); return true;
    case TGL_OP_LOGICAL_AND: visit([](auto a, auto b) { return (a != 0) && (b != 0); }); return true;
    case TGL_OP_LOGICAL_OR: visit([](auto a, auto b) { return (a != 0) || (b != 0); }); return true;
    case TGL_OP_LOGICAL_XOR: visit([](auto a, auto b) { return (a != 0) != (b != 0); }); return true;
    default: return false;
    }
}

// where: y = cond != 0 ? a : b, copied bit for bit.
void where(const OpCall& c, unsigned threads) {
    const ElementwisePlan& p = c.elementwise();
    const Operand y = output_operand(c), cond = input_operand(c, 0), a = input_operand(c, 1), b = input_operand(c, 2);
    const int last = p.rank - 1;
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        // walk() carries three operand offsets; where has four, so the offset of b is computed
        // from the index here (the reference's simplicity beats its speed).
        for (int64_t i = begin; i < end; ++i) {
            int64_t off[4] = {p.offset[0], p.offset[1], p.offset[2], p.offset[3]};
            int64_t rem = i;
            for (int d = last; d >= 0; --d) {
                const int64_t idx = rem % p.shape[d];
                rem /= p.shape[d];
                for (int k = 0; k < 4; ++k) off[k] += idx * p.strides[k][d];
            }
            const Operand& src = cond.base[off[1]] != 0 ? a : b;
            const int64_t os = cond.base[off[1]] != 0 ? off[2] : off[3];
            std::memcpy(y.base + off[0] * y.size, src.base + os * y.size, y.size);
        }
    });
}

// add_n: y = ((x0 + x1) + x2) + ..., summed left to right in f32 and rounded once at the store
// (f16: one rounding; f32: the same roundings as chained adds, so GLES matches bit for bit);
// integers exact in int64 and wrapped at the store (as add). Offsets from the index, as in where.
void add_n(const OpCall& c, unsigned threads) {
    const ElementwisePlan& p = c.elementwise();
    const Operand y = output_operand(c);
    const int n = int(c.inputs.size()), last = p.rank - 1;
    std::vector<Operand> xs;
    for (int k = 0; k < n; ++k) xs.push_back(input_operand(c, k));
    const bool integer = !is_float_dtype(y.dtype);
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
            int64_t off[ElementwisePlan::kMaxOperands];
            for (int k = 0; k <= n; ++k) off[k] = p.offset[k];
            int64_t rem = i;
            for (int d = last; d >= 0; --d) {
                const int64_t idx = rem % p.shape[d];
                rem /= p.shape[d];
                for (int k = 0; k <= n; ++k) off[k] += idx * p.strides[k][d];
            }
            if (integer) {
                uint64_t sum = 0;  // unsigned: wraps without undefined behaviour
                for (int k = 0; k < n; ++k) sum += uint64_t(load_as_int64(xs[size_t(k)].base, y.dtype, off[k + 1]));
                store_int_wrapped(y.base, y.dtype, off[0], int64_t(sum));
            } else {
                float sum = float(xs[0].load(off[1]));
                for (int k = 1; k < n; ++k) sum += float(xs[size_t(k)].load(off[k + 1]));
                y.store(off[0], double(sum));
            }
        }
    });
}

}  // namespace

void run_unary(const OpCall& c, unsigned threads) {
    if (c.info->op == TGL_OP_CAST) return cast(c, threads);
    if (c.info->op == TGL_OP_LOGICAL_NOT) return predicate1(c, threads, [](double x) { return x == 0.0; });
    if (!is_float_dtype(c.outputs[0].dtype)) {
        int64_t min, max;
        int_range(c.outputs[0].dtype, &min, &max);
        return visit_int_unary(c, min, max, [&](const auto& f) { int_unary(c, threads, f); });
    }
    visit_unary(c, [&](const auto& f) { unary(c, threads, f); });
}

void run_binary(const OpCall& c, unsigned threads) {
    if (c.info->op == TGL_OP_ADD_N) return add_n(c, threads);
    if (visit_predicate(c.info->op, [&](const auto& f) { predicate2(c, threads, f); })) return;
    if (!is_float_dtype(c.outputs[0].dtype)) return visit_int_binary(c, [&](const auto& f) { int_binary(c, threads, f); });
    visit_binary(c, [&](const auto& f) { binary(c, threads, f); });
}

void run_where(const OpCall& c, unsigned threads) { where(c, threads); }

void register_elementwise_kernels(std::vector<CpuFamily>& families) {
    families.push_back({OpFamily::Unary, run_unary});
    families.push_back({OpFamily::Binary, run_binary});
    families.push_back({OpFamily::Ternary, run_where});
}

}  // namespace cpu
}  // namespace tgl
