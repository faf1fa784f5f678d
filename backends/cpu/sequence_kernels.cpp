// CPU reference kernels of the Sequence family (plan: backends/common/sequence_rules.h), in double:
//   rope: the angle from rope_angle() (double), cos/sin in double (or the cache's values, after a
//     check of every position), one rounding at the store.
//   fft/ifft: power-of-two n: iterative radix-2 (bit reversal, then butterflies) with twiddles
//     cos/sin(2 pi k / m) of double angles; other n: the direct DFT sum, angle 2 pi ((jk) mod n) / n.
//   selective_scan: the recurrence of Mamba's selective_scan_ref, state and sums in double.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"
#include "philox.h"
#include "scalar_ops.h"
#include "status.h"

#include <cmath>
#include <algorithm>
#include <complex>
#include <vector>

namespace tgl {
namespace cpu {
namespace {

using R = SequencePlan::Role;

// Element offsets of row `row` for every role (row-major decomposition over the row dims).
void row_base(const SequencePlan& p, int64_t row, int64_t (&base)[SequencePlan::kRoles]) {
    for (int k = 0; k < SequencePlan::kRoles; ++k) base[k] = p.offset[k];
    int64_t rem = row;
    for (int d = p.row_rank - 1; d >= 0; --d) {
        const int64_t i = rem % p.row_shape[d];
        rem /= p.row_shape[d];
        for (int k = 0; k < SequencePlan::kRoles; ++k) base[k] += i * p.row_strides[k][d];
    }
}

// rope with a cos/sin cache: every element of positions (row-major) in [0, max_positions), checked
// before anything is written.
void check_rope_positions(const OpCall& c) {
    const SequencePlan& p = c.sequence();
    const TensorArg& pos = c.inputs[1];
    const uint8_t* data = cpu_buffer(pos.buffer).bytes();
    for (int64_t e = 0; e < pos.numel; ++e) {
        int64_t off = pos.offset, rem = e;
        for (int d = pos.rank - 1; d >= 0; --d) {
            off += (rem % pos.shape[d]) * pos.strides[d];
            rem /= pos.shape[d];
        }
        const int64_t v = int64_t(load_as_double(data, TGL_DTYPE_I32, off));
        if (v < 0 || v >= p.max_positions)
            fail(TGL_ERROR_INDEX_OUT_OF_RANGE, "%s", rope_position_message(*c.info, e, v, p.max_positions).c_str());
    }
}

void run_rope(const OpCall& c, unsigned threads) {
    const SequencePlan& p = c.sequence();
    const tgl_dtype dt = c.dtype;
    const uint8_t* x = cpu_buffer(c.inputs[0].buffer).bytes();
    const uint8_t* pos = cpu_buffer(c.inputs[1].buffer).bytes();
    const uint8_t* ff = p.has_ff ? cpu_buffer(c.inputs[2].buffer).bytes() : nullptr;
    const uint8_t* cos_t = p.cache ? cpu_buffer(c.inputs[3].buffer).bytes() : nullptr;
    const uint8_t* sin_t = p.cache ? cpu_buffer(c.inputs[4].buffer).bytes() : nullptr;
    uint8_t* y = cpu_buffer(c.outputs[0].buffer).bytes();
    if (p.cache) check_rope_positions(c);
    const int64_t half = p.n_rot / 2;
    parallel_for(p.rows, threads, std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.D)), [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
            int64_t b[SequencePlan::kRoles];
            row_base(p, row, b);
            for (int64_t i = 0; i < half; ++i) {
                const int64_t j0 = p.neox ? i : 2 * i, j1 = p.neox ? i + half : 2 * i + 1;
                const int64_t position =
                    int64_t(load_as_double(pos, TGL_DTYPE_I32, b[R::kP] + rope_stream(p, i) * p.stream_stride));
                double cs, sn;
                if (p.cache) {
                    cs = load_as_double(cos_t, dt, p.cos_offset + position * p.cos_strides[0] + i * p.cos_strides[1]);
                    sn = load_as_double(sin_t, dt, p.sin_offset + position * p.sin_strides[0] + i * p.sin_strides[1]);
                } else {
                    const double a = rope_angle(p, position, i, ff ? load_as_double(ff, TGL_DTYPE_F32, p.ff_offset + i * p.ff_stride) : 1.0);
                    cs = std::cos(a);
                    sn = std::sin(a);
                }
                cs *= p.mscale;
                sn *= p.backward ? -p.mscale : p.mscale;
                const double x0 = load_as_double(x, dt, b[R::kX] + j0 * p.x_d_stride);
                const double x1 = load_as_double(x, dt, b[R::kX] + j1 * p.x_d_stride);
                store_from_double(y, dt, b[R::kY] + j0 * p.y_d_stride, x0 * cs - x1 * sn, false);
                store_from_double(y, dt, b[R::kY] + j1 * p.y_d_stride, x0 * sn + x1 * cs, false);
            }
            for (int64_t j = p.n_rot; j < p.D; ++j)
                store_from_double(y, dt, b[R::kY] + j * p.y_d_stride, load_as_double(x, dt, b[R::kX] + j * p.x_d_stride),
                                  false);
        }
    });
}

using cd = std::complex<double>;

// In-place radix-2 FFT of a power-of-two length (sign -1 forward, +1 inverse, unscaled).
void fft_pow2(std::vector<cd>& v, double sign) {
    const size_t n = v.size();
    for (size_t i = 1, j = 0; i < n; ++i) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) std::swap(v[i], v[j]);
    }
    for (size_t m = 2; m <= n; m <<= 1)
        for (size_t k = 0; k < m / 2; ++k) {
            const double a = sign * 2.0 * M_PI * double(k) / double(m);
            const cd w(std::cos(a), std::sin(a));
            for (size_t s = 0; s < n; s += m) {
                const cd t = w * v[s + k + m / 2];
                v[s + k + m / 2] = v[s + k] - t;
                v[s + k] = v[s + k] + t;
            }
        }
}

void run_fft(const OpCall& c, unsigned threads) {
    const SequencePlan& p = c.sequence();
    const tgl_dtype dt = c.dtype;
    const uint8_t* x = cpu_buffer(c.inputs[0].buffer).bytes();
    uint8_t* y = cpu_buffer(c.outputs[0].buffer).bytes();
    const int64_t n = p.n;
    const bool pow2 = (n & (n - 1)) == 0;
    const double sign = p.inverse ? 1.0 : -1.0;
    const double scale = p.inverse ? 1.0 / double(n) : 1.0;
    struct Scratch {
        std::vector<cd> v, out;
    };
    auto make = [&] { return Scratch{std::vector<cd>(static_cast<size_t>(n)), std::vector<cd>(static_cast<size_t>(n))}; };
    parallel_for_with_scratch(p.rows, threads, std::max<int64_t>(1, 4096 / n), make, [&](int64_t begin, int64_t end,
                                                                                          Scratch& sc) {
        std::vector<cd>& v = sc.v;
        std::vector<cd>& out = sc.out;
        for (int64_t row = begin; row < end; ++row) {
            int64_t b[SequencePlan::kRoles];
            row_base(p, row, b);
            for (int64_t j = 0; j < n; ++j) {
                const int64_t o = b[R::kX] + j * p.x_n_stride;
                v[size_t(j)] = cd(load_as_double(x, dt, o), load_as_double(x, dt, o + p.x_c_stride));
            }
            if (pow2) {
                fft_pow2(v, sign);
                out = v;
            } else {
                for (int64_t k = 0; k < n; ++k) {
                    cd s = 0.0;
                    for (int64_t j = 0; j < n; ++j) {
                        const double a = sign * 2.0 * M_PI * double((j * k) % n) / double(n);
                        s += v[size_t(j)] * cd(std::cos(a), std::sin(a));
                    }
                    out[size_t(k)] = s;
                }
            }
            for (int64_t k = 0; k < n; ++k) {
                const int64_t o = b[R::kY] + k * p.y_n_stride;
                store_from_double(y, dt, o, out[size_t(k)].real() * scale, false);
                store_from_double(y, dt, o + p.y_c_stride, out[size_t(k)].imag() * scale, false);
            }
        }
    });
}

// Element (i, j, k) of a rank-1..3 operand.
double at(const OpCall& c, int input, int64_t i, int64_t j = 0, int64_t k = 0) {
    const TensorArg& t = c.inputs[size_t(input)];
    int64_t o = t.offset + i * t.strides[0];
    if (t.rank > 1) o += j * t.strides[1];
    if (t.rank > 2) o += k * t.strides[2];
    return load_as_double(cpu_buffer(t.buffer).bytes(), t.dtype, o);
}

void run_selective_scan(const OpCall& c, unsigned threads) {
    const SequencePlan& p = c.sequence();
    const TensorArg& y = c.outputs[0];
    const TensorArg& st = c.outputs[1];
    uint8_t* yb = cpu_buffer(y.buffer).bytes();
    uint8_t* sb = p.has_state ? cpu_buffer(st.buffer).bytes() : nullptr;
    auto make = [&] { return std::vector<double>(size_t(p.nstate)); };
    parallel_for_with_scratch(p.batch * p.dim, threads, 1, make, [&](int64_t begin, int64_t end,
                                                                     std::vector<double>& state) {
        for (int64_t bd = begin; bd < end; ++bd) {
            const int64_t b = bd / p.dim, d = bd % p.dim;
            const int64_t so = st.offset + b * st.strides[0] + d * st.strides[1];
            for (int64_t n = 0; n < p.nstate; ++n)  // x_{-1}: the carried state, or 0
                state[size_t(n)] = p.state_in ? load_as_double(sb, st.dtype, so + n * st.strides[2]) : 0.0;
            const double bias = p.has_bias ? at(c, 7, d) : 0.0;
            for (int64_t t = 0; t < p.len; ++t) {
                double dt = at(c, 1, b, d, t) + bias;
                if (p.softplus) dt = softplus(dt, 1.0, 20.0);
                const double u = at(c, 0, b, d, t);
                double sum = 0.0;
                for (int64_t n = 0; n < p.nstate; ++n) {
                    double& s = state[size_t(n)];
                    s = std::exp(dt * at(c, 2, d, n)) * s + dt * at(c, 3, b, n, t) * u;
                    sum += at(c, 4, b, n, t) * s;
                }
                if (p.has_dskip) sum += at(c, 5, d) * u;
                if (p.has_z) sum *= silu(at(c, 6, b, d, t));
                store_from_double(yb, y.dtype, y.offset + b * y.strides[0] + d * y.strides[1] + t * y.strides[2], sum,
                                  false);
            }
            if (sb)
                for (int64_t n = 0; n < p.nstate; ++n)
                    store_from_double(sb, st.dtype, so + n * st.strides[2], state[size_t(n)], false);
        }
    });
}

// sample, in f32 and integers as tgl_sample_params documents (the reference is exact there, so the
// GPU must give the same tokens bit for bit): plain loops and sorts.
void run_sample(const OpCall& c, unsigned threads) {
    const SequencePlan& p = c.sequence();
    const TensorArg& x = c.inputs[0];
    const uint8_t* xb = cpu_buffer(x.buffer).bytes();
    uint8_t* tb = cpu_buffer(c.outputs[0].buffer).bytes();
    const int64_t V = p.n;
    struct Scratch {
        std::vector<float> key;
        std::vector<uint32_t> w, sorted;
    };
    auto make = [&] {
        Scratch s{std::vector<float>(static_cast<size_t>(V)), std::vector<uint32_t>(static_cast<size_t>(V)), {}};
        s.sorted.reserve(static_cast<size_t>(V));  // (assigned V weights per row: no allocation then)
        return s;
    };
    parallel_for_with_scratch(p.rows, threads, std::max<int64_t>(1, 4096 / V), make, [&](int64_t begin, int64_t end,
                                                                                         Scratch& sc) {
        std::vector<float>& key = sc.key;
        std::vector<uint32_t>& w = sc.w;
        std::vector<uint32_t>& sorted = sc.sorted;
        for (int64_t row = begin; row < end; ++row) {
            const int64_t xo = p.offset[R::kX] + row * p.row_strides[R::kX][0];
            int64_t best = 0;
            for (int64_t j = 0; j < V; ++j) {
                const float v = float(load_as_double(xb, x.dtype, xo + j * p.x_n_stride));
                key[size_t(j)] = std::isnan(v) ? -INFINITY : v;
                if (key[size_t(j)] > key[size_t(best)]) best = j;
            }
            const float m = key[size_t(best)];
            int64_t token = best;
            if (!p.greedy && std::isfinite(m)) {
                for (int64_t j = 0; j < V; ++j) w[size_t(j)] = sample_weight((key[size_t(j)] - m) * p.inv_temperature);
                sorted.assign(w.begin(), w.end());
                std::sort(sorted.begin(), sorted.end(), std::greater<uint32_t>());
                uint32_t tau = p.top_k ? sorted[size_t(p.top_k - 1)] : 0u;  // the k-th largest weight
                if (p.top_p16) {
                    uint64_t total = 0;
                    for (uint32_t v : sorted)
                        if (v >= tau) total += v;
                    const uint64_t need = (uint64_t(p.top_p16) * total + 65535u) >> 16;
                    // The largest weight value whose mass (every kept weight >= it) reaches need.
                    uint64_t acc = 0;
                    for (size_t i = 0; i < sorted.size() && sorted[i] >= tau; ++i) {
                        acc += sorted[i];
                        if ((i + 1 == sorted.size() || sorted[i + 1] != sorted[i]) && acc >= need) {
                            tau = sorted[i];
                            break;
                        }
                    }
                }
                uint64_t total = 0;
                for (uint32_t v : w)
                    if (v >= tau) total += v;
                uint32_t words[4];
                philox_words(p.seed, p.rng_offset + uint64_t(row), words);
                // target = floor(R * total / 2^32) < total, exactly (R < 2^32, total < 2^48).
                const uint64_t lo = uint64_t(words[0]) * (total & 0xffffffffu), hi = uint64_t(words[0]) * (total >> 32);
                const uint64_t target = (lo >> 32) + hi;
                uint64_t run = 0;
                for (int64_t j = 0; j < V; ++j) {
                    if (w[size_t(j)] >= tau) run += w[size_t(j)];
                    if (run > target) {
                        token = j;
                        break;
                    }
                }
            }
            store_from_double(tb, TGL_DTYPE_I32, p.offset[R::kY] + row * p.row_strides[R::kY][0], double(token), true);
        }
    });
}

}  // namespace

void run_sequence(const OpCall& call, unsigned threads) {
    switch (call.info->op) {
    case TGL_OP_ROPE:
    case TGL_OP_ROPE_BACKWARD: return run_rope(call, threads);
    case TGL_OP_FFT:
    case TGL_OP_IFFT: return run_fft(call, threads);
    case TGL_OP_SELECTIVE_SCAN: return run_selective_scan(call, threads);
    case TGL_OP_SAMPLE: return run_sample(call, threads);
    default: fail(TGL_ERROR_INTERNAL, "cpu kernels: no kernel for op '%s'", call.info->name);
    }
}

void register_sequence_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Sequence, run_sequence}); }

}  // namespace cpu
}  // namespace tgl
