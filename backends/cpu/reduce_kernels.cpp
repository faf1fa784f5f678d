// CPU reference kernels of the reduction families: Reduce (sum .. norm), ArgReduce (argmax,
// argmin) and Scan (cumsum, cumprod; cumsum_backward of the Grad family). Every element is read
// exactly as double (dtype_io.h), everything is computed in double in the plain row-major order of
// the reduced elements, and the result is rounded once at the store.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"
#include "scalar_ops.h"
#include "status.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace tgl {
namespace cpu {
namespace {

constexpr int64_t kMinElementsPerThread = 1 << 16;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Calls f(x_base, y_off) for every output o in [0, out_count) (row-major over the kept dims),
// spread over threads; each output is computed by one thread.
template <class F>
void for_each_output(const ReducePlan& p, unsigned threads, const F& f) {
    const int64_t min_outputs = std::max<int64_t>(1, kMinElementsPerThread / std::max<int64_t>(1, p.reduce_count));
    parallel_for(p.out_count, threads, min_outputs, [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
            int64_t x_base = p.x_offset, y_off = p.y_offset, rem = o;
            for (int d = p.outer_rank - 1; d >= 0; --d) {
                const int64_t i = rem % p.outer_shape[d];
                rem /= p.outer_shape[d];
                x_base += i * p.outer_x_strides[d];
                y_off += i * p.outer_y_strides[d];
            }
            f(x_base, y_off);
        }
    });
}

// The x offsets of the reduced elements of one output, in row-major order of the reduced dims.
std::vector<int64_t> reduced_offsets(const ReducePlan& p, int64_t x_base) {
    std::vector<int64_t> offs;
    offs.reserve(size_t(p.reduce_count));
    for (int64_t r = 0; r < p.reduce_count; ++r) {
        int64_t off = x_base, rem = r;
        for (int d = p.inner_rank - 1; d >= 0; --d) {
            off += (rem % p.inner_shape[d]) * p.inner_x_strides[d];
            rem /= p.inner_shape[d];
        }
        offs.push_back(off);
    }
    return offs;
}

struct Io {
    const uint8_t* x;
    tgl_dtype xt;
    uint8_t* y;
    tgl_dtype yt;
};

Io io_of(const OpCall& c) {
    return Io{cpu_buffer(c.inputs[0].buffer).bytes(), c.inputs[0].dtype, cpu_buffer(c.outputs[0].buffer).bytes(),
              c.outputs[0].dtype};
}

// sum, mean, max, min, prod: y[o] = finish(fold of combine(acc, x) over the reduced elements, from
// init), in the row-major order of the reduced dims, so the result does not depend on the number
// of threads. x and y are f32 or f16: every element is read exactly as double and the result
// rounded once at the store (f16 beyond its largest finite value: +-inf).
template <class Load, class Combine, class Finish>
void fold(const OpCall& c, unsigned threads, const Load& load, double init, const Combine& combine,
          const Finish& finish) {
    const ReducePlan& p = c.reduce();
    const Io io = io_of(c);
    for_each_output(p, threads, [&](int64_t x_base, int64_t y_off) {
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
        store_from_double(io.y, io.yt, y_off, finish(acc), false);
    });
}

// sum, mean, max, min, prod with the element loader of x's dtype (f32 read directly: the common case).
template <class Load>
void fold_op(const OpCall& c, unsigned threads, const Load& load) {
    switch (c.info->op) {
    case TGL_OP_SUM:
        return fold(c, threads, load, 0.0, [](double acc, double x) { return acc + x; }, [](double acc) { return acc; });
    case TGL_OP_MEAN: {
        const double count = static_cast<double>(c.reduce().reduce_count);  // 0 / 0 = NaN for an empty set
        return fold(c, threads, load, 0.0, [](double acc, double x) { return acc + x; },
                    [count](double acc) { return acc / count; });
    }
    case TGL_OP_MAX: return fold(c, threads, load, -kInf, maximum, [](double acc) { return acc; });
    case TGL_OP_MIN: return fold(c, threads, load, kInf, minimum, [](double acc) { return acc; });
    case TGL_OP_PROD:
        return fold(c, threads, load, 1.0, [](double acc, double x) { return acc * x; }, [](double acc) { return acc; });
    default:
        fail(TGL_ERROR_INTERNAL, "cpu kernels: no reduction kernel for op '%s'", c.info->name);
    }
}

void fold_f32_f16(const OpCall& c, unsigned threads) {
    if (c.inputs[0].dtype == TGL_DTYPE_F32) {
        const float* x = cpu_buffer(c.inputs[0].buffer).f32();
        return fold_op(c, threads, [x](int64_t i) { return static_cast<double>(x[i]); });
    }
    const Io io = io_of(c);
    fold_op(c, threads, [io](int64_t i) { return load_as_double(io.x, io.xt, i); });
}

// sum, prod, max, min of i32 and i64: sums and products in uint64_t, whose wrap-around (modulo
// 2^64) is the exact i64 result and keeps the low 32 bits, the i32 one, whatever the order; max/min
// in integer order (an empty set is rejected by validation for them).
void fold_int(const OpCall& c, unsigned threads) {
    const Io io = io_of(c);
    const tgl_op op = c.info->op;
    for_each_output(c.reduce(), threads, [&](int64_t x_base, int64_t y_off) {
        uint64_t acc = op == TGL_OP_PROD ? 1 : 0;
        int64_t best = 0;
        bool first = true;
        for (int64_t off : reduced_offsets(c.reduce(), x_base)) {
            const int64_t x = load_as_int64(io.x, io.xt, off);
            if (op == TGL_OP_SUM) acc += uint64_t(x);
            else if (op == TGL_OP_PROD) acc *= uint64_t(x);
            else if (first || (op == TGL_OP_MAX ? x > best : x < best)) best = x;
            first = false;
        }
        const bool fold = op == TGL_OP_SUM || op == TGL_OP_PROD;
        store_int_wrapped(io.y, io.yt, y_off, fold ? int64_t(acc) : best);
    });
}

// Reductions: y[o] = f(the reduced values of output o, in order).
template <class F>
void reduce_values(const OpCall& c, unsigned threads, const F& f) {
    const Io io = io_of(c);
    const bool y_integer = !is_float_dtype(io.yt);
    for_each_output(c.reduce(), threads, [&](int64_t x_base, int64_t y_off) {
        std::vector<int64_t> offs = reduced_offsets(c.reduce(), x_base);
        std::vector<double> v(offs.size());
        for (size_t i = 0; i < offs.size(); ++i) v[i] = load_as_double(io.x, io.xt, offs[i]);
        store_from_double(io.y, io.yt, y_off, f(v), y_integer);
    });
}

// Index of the first (last: the last) largest (argmax) / smallest (argmin) value; a NaN beats every
// number, so the first (last) NaN wins. -0 and +0 tie.
double arg_best(const std::vector<double>& v, bool largest, bool last) {
    size_t best = 0;
    for (size_t i = 1; i < v.size(); ++i) {
        const bool nan_i = std::isnan(v[i]), nan_best = std::isnan(v[best]);
        if (nan_i || nan_best) {
            if (nan_i && (!nan_best || last)) best = i;
            continue;
        }
        if (largest ? v[i] > v[best] : v[i] < v[best]) best = i;
        else if (last && v[i] == v[best]) best = i;
    }
    return double(best);
}

double logsumexp(const std::vector<double>& v) {
    double m = -kInf;
    for (double x : v) {
        if (std::isnan(x)) return kNaN;
        m = std::max(m, x);
    }
    if (std::isinf(m)) return m;  // empty or all -inf: -inf; any +inf: +inf
    double s = 0.0;
    for (double x : v) s += std::exp(x - m);
    return m + std::log(s);
}

double variance(const std::vector<double>& v, double correction) {
    const double n = double(v.size());
    double sum = 0.0;
    for (double x : v) sum += x;
    const double mean = sum / n;
    double ss = 0.0;
    for (double x : v) ss += (x - mean) * (x - mean);
    return ss / std::max(0.0, n - correction);
}

double norm(const std::vector<double>& v, int ord) {
    double s = 0.0;
    // Squares of f32/f16 values cannot overflow in double, so the plain formula is overflow-safe.
    for (double x : v) s += ord == 1 ? std::fabs(x) : x * x;
    return ord == 1 ? s : std::sqrt(s);
}

// Running sums/products with an accumulator of type Acc: double for floats (rounded at each
// store), uint64_t for i32 (wrapping; the low 32 bits are exact).
template <class Acc, class Load, class Store>
void scan_rows_as(const OpCall& c, unsigned threads, bool product, const Load& load, const Store& store) {
    const ScanPlan& scan = c.scan();
    const ReducePlan& p = scan.rows;
    const int64_t n = p.reduce_count;
    const int64_t xs = p.inner_rank ? p.inner_x_strides[0] : 0, ys = scan.y_stride;
    for_each_output(p, threads, [&](int64_t x_base, int64_t y_off) {
        Acc acc = product ? Acc(1) : Acc(0);
        for (int64_t k = 0; k < n; ++k) {
            const int64_t i = scan.reverse ? n - 1 - k : k;
            const Acc x = load(x_base + i * xs);
            if (!scan.exclusive) acc = product ? acc * x : acc + x;
            store(y_off + i * ys, acc);
            if (scan.exclusive) acc = product ? acc * x : acc + x;
        }
    });
}

void scan_rows(const OpCall& c, unsigned threads, bool product) {
    const Io io = io_of(c);
    if (!is_float_dtype(io.xt))
        return scan_rows_as<uint64_t>(
            c, threads, product, [&](int64_t i) { return uint64_t(load_as_int64(io.x, io.xt, i)); },
            [&](int64_t i, uint64_t v) { store_int_wrapped(io.y, io.yt, i, int64_t(v)); });
    scan_rows_as<double>(
        c, threads, product, [&](int64_t i) { return load_as_double(io.x, io.xt, i); },
        [&](int64_t i, double v) { store_from_double(io.y, io.yt, i, v, false); });
}

[[noreturn]] void no_kernel(const OpCall& c) {
    fail(TGL_ERROR_INTERNAL, "cpu kernels: no kernel for op '%s' (id %u) although the catalogue lists it as implemented",
         c.info->name, c.info->op);
}

}  // namespace

void run_reduce(const OpCall& c, unsigned threads) {
    switch (c.info->op) {
    case TGL_OP_LOGSUMEXP: return reduce_values(c, threads, logsumexp);
    case TGL_OP_VAR:
    case TGL_OP_STD: {
        const double corr = c.reduce().correction;
        const bool sd = c.info->op == TGL_OP_STD;
        return reduce_values(c, threads, [corr, sd](const std::vector<double>& v) {
            const double var = variance(v, corr);
            return sd ? std::sqrt(var) : var;
        });
    }
    case TGL_OP_ANY:
        return reduce_values(c, threads, [](const std::vector<double>& v) {
            for (double x : v) if (x != 0.0) return 1.0;  // NaN != 0
            return 0.0;
        });
    case TGL_OP_ALL:
        return reduce_values(c, threads, [](const std::vector<double>& v) {
            for (double x : v) if (x == 0.0) return 0.0;
            return 1.0;
        });
    case TGL_OP_NORM: {
        const int ord = c.reduce().norm_ord;
        return reduce_values(c, threads, [ord](const std::vector<double>& v) { return norm(v, ord); });
    }
    default:  // sum, mean, max, min, prod
        if (!is_float_dtype(c.inputs[0].dtype)) return fold_int(c, threads);  // i32, i64
        return fold_f32_f16(c, threads);
    }
}

void run_arg_reduce(const OpCall& c, unsigned threads) {
    switch (c.info->op) {
    case TGL_OP_ARGMAX: {
        const bool last = c.reduce().select_last;
        return reduce_values(c, threads, [last](const std::vector<double>& v) { return arg_best(v, true, last); });
    }
    case TGL_OP_ARGMIN: {
        const bool last = c.reduce().select_last;
        return reduce_values(c, threads, [last](const std::vector<double>& v) { return arg_best(v, false, last); });
    }
    default: no_kernel(c);
    }
}

void run_scan(const OpCall& c, unsigned threads) {
    switch (c.info->op) {
    case TGL_OP_CUMSUM:
    case TGL_OP_CUMSUM_BACKWARD: return scan_rows(c, threads, false);
    case TGL_OP_CUMPROD: return scan_rows(c, threads, true);
    default: no_kernel(c);
    }
}

void register_reduce_kernels(std::vector<CpuFamily>& families) {
    families.push_back({OpFamily::Reduce, run_reduce});
    families.push_back({OpFamily::ArgReduce, run_arg_reduce});
    families.push_back({OpFamily::Scan, run_scan});
}

}  // namespace cpu
}  // namespace tgl
