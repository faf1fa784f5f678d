// GLES host side of the Index family (plan: backends/common/index_rules.h; shader: glsl/index.comp),
// set_rows included.
// Every op queues: a check pass over the index tensor plus its report pass (device-side error, see
// GlesDevice::device_check), then the data passes, which write nothing when the check failed. The
// host never reads an index.
#include "gles_device.h"
#include "gles_families.h"
#include "dispatch_util.h"
#include "loop_budget.h"
#include "dtype_bits.h"  // backends/common

#include <algorithm>

namespace tgl {
namespace gles {

namespace {

std::shared_ptr<const Program> index_program(GlesDevice& dev, const OpCall& call, const char* pass, int rank, bool windowed = false) {
    Defines d = {{pass, ""},
                 {def::kYDtype, str(call.outputs[0].dtype)},
                 {def::kIndexDtype, str(call.inputs[size_t(call.index().index_input)].dtype)},
                 {"RANK", str(rank)},
                 {def::kWorkgroupSize, str(dev.workgroup_size())}};
    if (call.info->op == TGL_OP_SCATTER_ADD) d.emplace_back("ADD", "");
    static const char* const kReduce[] = {nullptr, "REDUCE_MUL", "REDUCE_AMIN", "REDUCE_AMAX"};  // TGL_SCATTER_*
    if (call.info->op == TGL_OP_SCATTER && call.index().reduction != TGL_SCATTER_REPLACE)
        d.emplace_back(kReduce[call.index().reduction], "");
    if (windowed) d.emplace_back("WINDOWED", "");
    return dev.program("index.comp", d);
}

}  // namespace

void add_index_check(GlesDevice& dev, const OpCall& call, const GlesDevice::DeviceCheck& check, std::vector<Dispatch>& ds,
                     const std::vector<IndexWindow>& windows) {
    const IndexPlan& p = call.index();
    const TensorArg& whole = call.inputs[size_t(p.index_input)];
    if (whole.numel == 0) return;
    const std::vector<IndexWindow> one = {{whole, 0}};
    const std::vector<IndexWindow>& parts = windows.empty() ? one : windows;
    // Check, then report: one invocation per index element, row-major over its shape; the report
    // passes after every window's check (the first bad position may lie in any of them).
    std::vector<Dispatch> reports;
    for (const IndexWindow& w : parts) {
        const TensorArg& index = w.view;
        if (index.numel == 0) continue;
        int32_t i_off = 0;
        const Binding ib = dev.window(index, "the index tensor", &i_off);
        int64_t one_size = 1, zero = 0;
        const int rank = std::max(index.rank, 1);
        Dispatch d;
        d.program = index_program(dev, call, "PASS_CHECK", rank);
        d.bindings = {ib, ib, ib, check.status};
        d.uniforms = {uniform_uint("u_numel", {count_u32(index.numel, "the index tensor")}),
                      uniform_int("u_shape", index.rank ? to_i32s(index.shape, rank, "the index's shape") : to_i32s(&one_size, 1, "")),
                      uniform_int("u_i_str", index.rank ? to_i32s(index.strides, rank, "a stride of the index") : to_i32s(&zero, 1, "")),
                      uniform_int("u_i_offset", {i_off}),
                      uniform_int("u_limit", {to_i32(p.axis_size, "the size of the indexed axis")}),
                      uniform_uint("u_op", {uint32_t(call.info->op)}),
                      uniform_int("u_axis", {p.axis}),
                      uniform_uint("u_pos_base", {count_u32(w.first, "the index tensor")}),
                      uniform_uint("u_check_seq", {check.seq})};
        const uint64_t groups = ceil_div(uint64_t(index.numel), uint64_t(dev.workgroup_size()));
        Dispatch report = d;
        d.uniforms.push_back(uniform_uint("u_report", {0u}));
        report.uniforms.push_back(uniform_uint("u_report", {1u}));
        add_chunks(dev, d, groups, ds);
        add_chunks(dev, report, groups, reports);
    }
    ds.insert(ds.end(), reports.begin(), reports.end());
}

namespace {

// set_rows: the index checked (unless a piece: checked once for the whole op), y = x unless in
// place, the last-duplicate pass into scratch t (K words), then src's elements into their rows.
void run_set_rows(GlesDevice& dev, const OpCall& call, const IndexPiece* piece) {
    const IndexPlan& p = call.index();
    const TensorArg& y = call.outputs[0];
    const TensorArg& index = call.inputs[1];
    const TensorArg& src = call.inputs[2];
    const int wg = dev.workgroup_size();
    const GlesDevice::DeviceCheck check = piece ? piece->check : dev.device_check();
    auto program = [&](const char* pass, int rank) { return index_program(dev, call, pass, rank, piece != nullptr); };
    std::vector<Dispatch> ds;
    if (!piece) add_index_check(dev, call, check, ds);

    int32_t y_off = 0, x_off = 0, i_off = 0, s_off = 0;
    const Binding yb = dev.window(y, "outputs[0] (y)", &y_off);
    // A pass that writes y, one invocation per element of `shape` (`what`), guarded by the check.
    auto y_pass = [&](const char* pass, const TensorArg& over, const int64_t* shape, const char* what) {
        Dispatch d;
        d.program = program(pass, p.rank);
        d.uniforms = {uniform_uint("u_numel", {count_u32(over.numel, what)}), uniform_int("u_shape", to_i32s(shape, p.rank, what)),
                      uniform_int("u_y_str", to_i32s(p.y_strides, p.rank, "a stride of y")), uniform_int("u_y_offset", {y_off}),
                      uniform_uint("u_check_seq", {check.seq})};
        return d;
    };
    const auto groups = [&](const TensorArg& over) { return ceil_div(uint64_t(over.numel), uint64_t(wg)); };
    if (!p.in_place) {  // y = x, every element (the out-of-place form)
        const Binding xb = dev.window(call.inputs[0], "inputs[0] (x)", &x_off);
        Dispatch copy = y_pass("PASS_COPY", y, p.shape, "outputs[0] (y)");
        copy.bindings = {yb, xb, yb, check.status};
        copy.uniforms.push_back(uniform_int("u_x_str", to_i32s(p.x_strides, p.rank, "a stride of x")));
        copy.uniforms.push_back(uniform_int("u_x_offset", {x_off}));
        add_chunks(dev, copy, groups(y), ds);
    }
    const int64_t K = index.shape[0];
    if (K > 0 && src.numel > 0) {
        const Binding ib = dev.window(index, "the index tensor", &i_off);
        const Binding sb = dev.window(src, "inputs[2] (src)", &s_off);
        Binding tb;  // t[k]: the row that position k writes, or -1
        tb.keep = dev.scratch(uint64_t(K) * 4);
        tb.name = static_cast<GlesBuffer&>(*tb.keep).name();
        tb.size = K * 4;
        const uint32_t k_count = count_u32(K, "the index tensor");
        Dispatch last;
        last.program = program("PASS_ROWS_LAST", 1);
        last.bindings = {tb, sb, ib};
        last.uniforms = {uniform_uint("u_numel", {k_count}),
                         uniform_int("u_shape", {int32_t(k_count)}),
                         uniform_int("u_i_str", {to_i32(index.strides[0], "the index's stride")}),
                         uniform_int("u_i_offset", {i_off})};
        // Each position compares the later ones: long index tensors take several dispatches, each
        // over a range of positions, in order, within the loop budget.
        const uint64_t k_chunk = std::min(uint64_t(K), loop_items_within(loop_budget(dev), 1));
        for (uint64_t k = 0; k < uint64_t(K); k += k_chunk) {
            Dispatch range = last;
            range.uniforms.push_back(uniform_int("u_k_begin", {int32_t(k)}));
            range.uniforms.push_back(uniform_int("u_k_end", {int32_t(std::min(uint64_t(K), k + k_chunk))}));
            add_chunks(dev, range, ceil_div(k_count, uint64_t(wg)), ds);
        }
        Dispatch rows = y_pass("PASS_SET_ROWS", src, p.src_shape, "inputs[2] (src)");
        rows.bindings = {yb, sb, tb, check.status};
        rows.uniforms.push_back(uniform_int("u_s_str", to_i32s(p.src_strides, p.rank, "a stride of src")));
        rows.uniforms.push_back(uniform_int("u_s_offset", {s_off}));
        rows.uniforms.push_back(uniform_int("u_axis", {p.axis}));
        if (piece) {
            rows.uniforms.push_back(uniform_int("u_lo", {to_i32(piece->axis_lo, "an index window")}));
            rows.uniforms.push_back(uniform_int("u_hi", {to_i32(piece->axis_lo + y.shape[p.axis], "an index window")}));
        }
        add_chunks(dev, rows, groups(src), ds);
    }
    dev.submit(call.info->name, std::move(ds));
}

}  // namespace

void run_index(GlesDevice& dev, const OpCall& call, const IndexPiece* piece) {
    if (call.info->op == TGL_OP_SET_ROWS) return run_set_rows(dev, call, piece);
    const IndexPlan& p = call.index();
    const tgl_op op = call.info->op;
    const TensorArg& y = call.outputs[0];
    const TensorArg& index = call.inputs[size_t(p.index_input)];
    const bool scatter = op == TGL_OP_SCATTER || op == TGL_OP_SCATTER_ADD;
    const int wg = dev.workgroup_size();
    const GlesDevice::DeviceCheck check = piece ? piece->check : dev.device_check();
    auto program = [&](const char* pass, int rank) { return index_program(dev, call, pass, rank, piece != nullptr); };
    std::vector<Dispatch> ds;

    int32_t i_off = 0, y_off = 0, x_off = 0, s_off = 0;
    Binding yb = dev.window(y, "outputs[0] (y)", &y_off);
    Binding ib = yb;  // an empty index (scatter only) binds a stand-in that is never read
    if (index.numel > 0) ib = dev.window(index, "the index tensor", &i_off);
    if (!piece) add_index_check(dev, call, check, ds);

    // The data passes iterate over y's elements.
    const uint32_t numel = count_u32(y.numel, "outputs[0] (y)");
    const uint64_t groups = ceil_div(numel, uint64_t(wg));
    Dispatch base;
    base.uniforms = {uniform_uint("u_numel", {numel}),
                     uniform_int("u_shape", to_i32s(p.shape, p.rank, "y's shape")),
                     uniform_int("u_y_str", to_i32s(p.y_strides, p.rank, "a stride of y")),
                     uniform_int("u_i_str", to_i32s(p.index_strides, p.rank, "a stride of the index")),
                     uniform_int("u_y_offset", {y_off}),
                     uniform_int("u_i_offset", {i_off}),
                     uniform_int("u_axis", {p.axis}),
                     uniform_uint("u_check_seq", {check.seq})};
    Binding xb = yb;
    if (op != TGL_OP_ONE_HOT) {
        xb = dev.window(call.inputs[0], "inputs[0] (x)", &x_off);
        base.uniforms.push_back(uniform_int("u_x_str", to_i32s(p.x_strides, p.rank, "a stride of x")));
        base.uniforms.push_back(uniform_int("u_x_offset", {x_off}));
    }
    if (!scatter) {
        Dispatch d = base;
        if (op == TGL_OP_ONE_HOT) {
            const uint32_t bits = uint32_t(double_to_dtype_bits(1.0, y.dtype));  // y is a word dtype
            d.program = program("PASS_ONE_HOT", p.rank);
            d.uniforms.push_back(uniform_uint("u_one", {bits}));
        } else {
            d.program = program("PASS_GATHER", p.rank);
            if (piece) {
                d.uniforms.push_back(uniform_int("u_lo", {to_i32(piece->axis_lo, "an index window")}));
                d.uniforms.push_back(uniform_int("u_hi", {to_i32(piece->axis_lo + p.axis_size, "an index window")}));
            }
        }
        d.bindings = {yb, xb, ib, check.status};
        add_chunks(dev, d, groups, ds);
        dev.submit(call.info->name, std::move(ds));
        return;
    }

    // scatter / scatter_add: owner computes into scratch words, then the guarded commit into y.
    const TensorArg& src = call.inputs[2];
    Binding sb = xb;
    if (src.numel > 0) sb = dev.window(src, "inputs[2] (src)", &s_off);
    const int64_t t_bytes = int64_t(numel) * 4;
    if (t_bytes > dev.max_window_bytes())
        fail(TGL_ERROR_RESOURCE_EXHAUSTED, "op '%s': y has %u elements; its %lld-byte scratch exceeds one shader storage block (%lld bytes)",
             call.info->name, numel, (long long)t_bytes, (long long)dev.max_window_bytes());
    Binding tb;
    tb.keep = dev.scratch(uint64_t(t_bytes));
    tb.name = static_cast<GlesBuffer&>(*tb.keep).name();
    tb.size = t_bytes;
    Dispatch owner = base;
    owner.program = program("PASS_SCATTER", p.rank);
    owner.bindings = {tb, xb, ib, sb};
    owner.uniforms.push_back(uniform_int("u_s_str", to_i32s(p.src_strides, p.rank, "a stride of src")));
    owner.uniforms.push_back(uniform_int("u_s_offset", {s_off}));
    owner.uniforms.push_back(uniform_int("u_index_shape", to_i32s(p.index_shape, p.rank, "the index's shape")));
    if (piece) owner.uniforms.push_back(uniform_int("u_lo", {to_i32(piece->axis_lo, "an index window")}));
    // Each element of y walks its whole index row: rows longer than the loop budget take several
    // dispatches, each over a range of the row, in order (the result is the same).
    const uint64_t row = uint64_t(std::max<int64_t>(p.index_shape[p.axis], 1));
    const uint64_t k_chunk = std::min(row, loop_items_within(loop_budget(dev), 1));
    for (uint64_t k = 0; k < row; k += k_chunk) {
        Dispatch range = owner;
        range.uniforms.push_back(uniform_int("u_k_begin", {int32_t(k)}));
        range.uniforms.push_back(uniform_int("u_k_end", {int32_t(std::min(row, k + k_chunk))}));
        add_chunks(dev, range, groups, ds);
    }
    Dispatch commit = base;
    commit.program = program("PASS_COMMIT", p.rank);
    commit.bindings = {yb, tb, ib, check.status};
    add_chunks(dev, commit, groups, ds);
    dev.submit(call.info->name, std::move(ds));
}

void register_index_kernels(std::vector<GlesFamily>& families) {
    // run_index without a piece (window_split.cpp runs pieces itself)
    families.push_back({OpFamily::Index, [](GlesDevice& dev, const OpCall& call) { run_index(dev, call); }, &kIndexSplit});
}

}  // namespace gles
}  // namespace tgl
