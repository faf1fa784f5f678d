// CPU reference kernels of the Select family (plan: backends/common/select_rules.h): each row is
// read as (value as double, original index) and ordered with std::stable_sort under the documented
// comparator (NaN above every number, -0 == +0, ties kept in their original order in both
// directions); the first k positions are written. Values are copied bit for bit from x.
#include "kernels.h"

#include "cpu_buffer.h"
#include "dtype_io.h"
#include "parallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

namespace tgl {
namespace cpu {

void run_select(const OpCall& call, unsigned threads) {
    const SelectPlan& p = call.select();
    const tgl_dtype xt = call.inputs[0].dtype;
    const int64_t es = tgl_dtype_size(xt);
    const uint8_t* x = cpu_buffer(call.inputs[0].buffer).bytes();
    uint8_t* v = p.has_values ? cpu_buffer(call.outputs[0].buffer).bytes() : nullptr;
    const TensorArg& indices = call.outputs[p.has_values ? 1 : 0];
    uint8_t* ix = cpu_buffer(indices.buffer).bytes();
    // a before b: ascending, a < b with NaN the largest; descending, a > b with NaN the largest.
    // Equal keys (and two NaNs) are not ordered, so stable_sort keeps their original order.
    auto before = [desc = p.descending](double a, double b) {
        if (std::isnan(a) || std::isnan(b)) return desc ? !std::isnan(b) : !std::isnan(a);
        return desc ? a > b : a < b;
    };
    const int64_t min_rows = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(1, p.n));
    struct Scratch {
        std::vector<double> key;
        std::vector<int64_t> order;
    };
    auto make = [&] { return Scratch{std::vector<double>(size_t(p.n)), std::vector<int64_t>(size_t(p.n))}; };
    parallel_for_with_scratch(p.rows, threads, min_rows, make, [&](int64_t begin, int64_t end, Scratch& s) {
        std::vector<double>& key = s.key;
        std::vector<int64_t>& order = s.order;
        for (int64_t r = begin; r < end; ++r) {
            int64_t xo = p.x_offset, vo = p.v_offset, io = p.i_offset, rest = r;
            for (int d = p.outer_rank - 1; d >= 0; --d) {
                const int64_t c = rest % p.outer_shape[d];
                rest /= p.outer_shape[d];
                xo += c * p.outer_x_strides[d];
                vo += c * p.outer_v_strides[d];
                io += c * p.outer_i_strides[d];
            }
            for (int64_t i = 0; i < p.n; ++i) key[size_t(i)] = load_as_double(x, xt, xo + i * p.x_stride);
            std::iota(order.begin(), order.end(), int64_t(0));
            std::stable_sort(order.begin(), order.end(),
                             [&](int64_t a, int64_t b) { return before(key[size_t(a)], key[size_t(b)]); });
            for (int64_t j = 0; j < p.k; ++j) {
                const int64_t src = order[size_t(j)];
                store_from_int64(ix, indices.dtype, io + j * p.i_stride, src);  // i32 or i64
                if (v) std::memcpy(v + es * (vo + j * p.v_stride), x + es * (xo + src * p.x_stride), size_t(es));
            }
        }
    });
}

void register_select_kernels(std::vector<CpuFamily>& families) { families.push_back({OpFamily::Select, run_select}); }

}  // namespace cpu
}  // namespace tgl
