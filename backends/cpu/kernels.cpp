// The CPU reference kernels. Plain loops that follow the plans of validate.h. Every value is
// widened to double, computed with the C library in double, and rounded once, at the store;
// sums, products and dot products accumulate in double. The scalar functions of the elementwise ops
// are in scalar_ops.h.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "scalar_ops.h"
#include "parallel.h"
#include "reduce_kernels.h"
#include "status.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace tgl {
namespace cpu {
namespace {

// Below these amounts of work a kernel runs on the calling thread only.
constexpr int64_t kMinElementsPerThread = 1 << 16;

constexpr double kInf = std::numeric_limits<double>::infinity();

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
    int64_t off[ElementwisePlan::kMaxOperands];
    int64_t rem = begin;
    for (int d = last; d >= 0; --d) {
        index[d] = rem % p.shape[d];
        rem /= p.shape[d];
    }
    for (int k = 0; k < ElementwisePlan::kMaxOperands; ++k) {
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
        for (int k = 0; k < ElementwisePlan::kMaxOperands; ++k) off[k] += run * p.strides[k][last];
        // Carry into the outer dims.
        for (int d = last; d > 0 && index[d] == p.shape[d]; --d) {
            index[d] = 0;
            ++index[d - 1];
            for (int k = 0; k < ElementwisePlan::kMaxOperands; ++k)
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
    const ElementwisePlan& p = c.elementwise;
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
    const ElementwisePlan& p = c.elementwise;
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

// cast: every dtype to every dtype (the load is exact, the store rounds as 'cast' says).
void cast(const OpCall& c, unsigned threads) {
    const ElementwisePlan& p = c.elementwise;
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
        walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) { y.store(oy, x.load(ox), from_integer); });
    });
}

// Predicates: y (bool or u8) = 0 or 1. Every input value is exact in double, so comparisons of
// i32 beyond 2^24 are exact; NaN compares false except with ne; -0 == +0; NaN is true as a truth
// value (NaN != 0).
template <class F>
void predicate1(const OpCall& c, unsigned threads, const F& f) {
    const ElementwisePlan& p = c.elementwise;
    const Operand y = output_operand(c), x = input_operand(c, 0);
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        walk(p, begin, end, [&](int64_t oy, int64_t ox, int64_t) { y.base[oy] = f(x.load(ox)) ? 1 : 0; });
    });
}

template <class F>
void predicate2(const OpCall& c, unsigned threads, const F& f) {
    const ElementwisePlan& p = c.elementwise;
    const Operand y = output_operand(c), a = input_operand(c, 0), b = input_operand(c, 1);
    parallel_for(p.numel, threads, kMinElementsPerThread, [&](int64_t begin, int64_t end) {
        walk(p, begin, end, [&](int64_t oy, int64_t oa, int64_t ob) { y.base[oy] = f(a.load(oa), b.load(ob)) ? 1 : 0; });
    });
}

// Calls visit(f) with f(double a, double b) -> bool for a compare or logical op; false if `op` is
// not one.
template <class Visit>
bool visit_predicate(tgl_op op, Visit&& visit) {
    switch (op) {
    case TGL_OP_EQ: visit([](double a, double b) { return a == b; }); return true;
    case TGL_OP_NE: visit([](double a, double b) { return a != b; }); return true;
    case TGL_OP_LT: visit([](double a, double b) { return a < b; }); return true;
    case TGL_OP_LE: visit([](double a, double b) { return a <= b; }); return true;
    case TGL_OP_GT: visit([](double a, double b) { return a > b; }); return true;
    case TGL_OP_GE: visit([](double a, double b) { return a >= b; }); return true;
    case TGL_OP_LOGICAL_AND: visit([](double a, double b) { return (a != 0.0) && (b != 0.0); }); return true;
    case TGL_OP_LOGICAL_OR: visit([](double a, double b) { return (a != 0.0) || (b != 0.0); }); return true;
    case TGL_OP_LOGICAL_XOR: visit([](double a, double b) { return (a != 0.0) != (b != 0.0); }); return true;
    default: return false;
    }
}

// where: y = cond != 0 ? a : b, copied bit for bit.
void where(const OpCall& c, unsigned threads) {
    const ElementwisePlan& p = c.elementwise;
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

// ---------------------------------------------------------------------------------------------
// Reductions: y[o] = finish(fold of combine(acc, x) over the reduced elements, from init).
// Each output is computed by one thread, in the row-major order of the reduced dims, so the result
// does not depend on the number of threads.

// x and y are f32 or f16: every element is read exactly as double and the result rounded once at
// the store (f16 beyond its largest finite value: +-inf).
template <class Load, class Combine, class Finish>
void reduce(const OpCall& c, unsigned threads, const Load& load, double init, const Combine& combine,
            const Finish& finish) {
    const ReducePlan& p = c.reduce;
    const Operand y = output_operand(c);
    const int64_t min_outputs = std::max<int64_t>(1, kMinElementsPerThread / std::max<int64_t>(1, p.reduce_count));
    parallel_for(p.out_count, threads, min_outputs, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
            // Offsets of output o (row-major over the kept dims).
            int64_t x_base = p.x_offset, y_off = p.y_offset, rem = o;
            for (int d = p.outer_rank - 1; d >= 0; --d) {
                int64_t i = rem % p.outer_shape[d];
                rem /= p.outer_shape[d];
                x_base += i * p.outer_x_strides[d];
                y_off += i * p.outer_y_strides[d];
            }
            double acc = init;
            if (p.reduce_count > 0) {
                if (p.inner_rank == 0) {
                    acc = combine(acc, load(x_base));
                } else {
                    // Rows of the last reduced dim, walked by an odometer over the others.
                    const int last = p.inner_rank - 1;
                    const int64_t row = p.inner_shape[last], step = p.inner_x_strides[last];
                    int64_t index[TGL_MAX_RANK] = {};
                    int64_t off = x_base;
                    for (int64_t done = 0; done < p.reduce_count; done += row) {
                        for (int64_t j = 0; j < row; ++j) acc = combine(acc, load(off + j * step));
                        for (int d = last - 1; d >= 0; --d) {
                            if (++index[d] < p.inner_shape[d]) {
                                off += p.inner_x_strides[d];
                                break;
                            }
                            index[d] = 0;
                            off -= (p.inner_shape[d] - 1) * p.inner_x_strides[d];
                        }
                    }
                }
            }
            y.store(y_off, finish(acc));
        }
    });
}

// sum, mean, max, min, prod with the element loader of x's dtype (f32 read directly: the common case).
template <class Load>
void reduce_op(const OpCall& c, unsigned threads, const Load& load) {
    switch (c.info->op) {
    case TGL_OP_SUM:
        return reduce(c, threads, load, 0.0, [](double acc, double x) { return acc + x; }, [](double acc) { return acc; });
    case TGL_OP_MEAN: {
        const double count = static_cast<double>(c.reduce.reduce_count);  // 0 / 0 = NaN for an empty set
        return reduce(c, threads, load, 0.0, [](double acc, double x) { return acc + x; },
                      [count](double acc) { return acc / count; });
    }
    case TGL_OP_MAX: return reduce(c, threads, load, -kInf, maximum, [](double acc) { return acc; });
    case TGL_OP_MIN: return reduce(c, threads, load, kInf, minimum, [](double acc) { return acc; });
    case TGL_OP_PROD:
        return reduce(c, threads, load, 1.0, [](double acc, double x) { return acc * x; }, [](double acc) { return acc; });
    default:
        fail(TGL_ERROR_INTERNAL, "cpu kernels: no reduction kernel for op '%s'", c.info->name);
    }
}

void reduce_f32_f16(const OpCall& c, unsigned threads) {
    if (c.inputs[0].dtype == TGL_DTYPE_F32) {
        const float* x = cpu_buffer(c.inputs[0].buffer).f32();
        return reduce_op(c, threads, [x](int64_t i) { return static_cast<double>(x[i]); });
    }
    const Operand x = input_operand(c, 0);
    reduce_op(c, threads, [x](int64_t i) { return x.load(i); });
}

}  // namespace

void run(const OpCall& c, unsigned threads) {
    switch (c.info->family) {
    case OpFamily::Unary:
        if (c.info->op == TGL_OP_CAST) return cast(c, threads);
        if (c.info->op == TGL_OP_LOGICAL_NOT) return predicate1(c, threads, [](double x) { return x == 0.0; });
        return visit_unary(c, [&](const auto& f) { unary(c, threads, f); });
    case OpFamily::Binary:
        if (visit_predicate(c.info->op, [&](const auto& f) { predicate2(c, threads, f); })) return;
        return visit_binary(c, [&](const auto& f) { binary(c, threads, f); });
    case OpFamily::Ternary:
        return where(c, threads);
    case OpFamily::Matmul: return run_matmul(c, threads);
    case OpFamily::Normalize: return run_norm(c, threads);
    case OpFamily::Layout: return run_layout(c, threads);
    case OpFamily::Index: return run_index(c, threads);
    case OpFamily::Select: return run_select(c, threads);
    case OpFamily::Generate: return run_generate(c, threads);
    case OpFamily::Conv: return run_conv(c, threads);
    case OpFamily::Pool: return run_pool(c, threads);
    case OpFamily::Attention: return run_attention(c, threads);
    case OpFamily::Sequence: return run_sequence(c, threads);
    case OpFamily::Grad: return run_grad(c, threads);
    default:
        break;
    }
    if (run_reduce_more(c, threads)) return;  // argmax..cumprod (reduce_kernels.cpp)
    if (c.info->family == OpFamily::Reduce) return reduce_f32_f16(c, threads);
    fail(TGL_ERROR_INTERNAL, "cpu kernels: no kernel for op '%s' (id %u) although the catalogue lists it as implemented",
         c.info->name, c.info->op);
}

}  // namespace cpu
}  // namespace tgl
