// Differential tests (GLES vs CPU) of the Conv family on seeded random inputs: 1x1 and 7x7 kernels,
// stride 2 with odd sizes and asymmetric pads, dilation 2, groups and depthwise (groups = channels),
// pads beyond the kernel's reach, 'same', 1d/2d/3d, channels-last, transposed 1d/2d with
// output_padding, both conv2d backward ops (with and without db), every activation, permuted /
// stepped / negative-stride / padded input views and non-contiguous outputs, misaligned f16 views,
// an empty batch, the GEMM's large tiles at their edges and bound-free loads (Tiles), one grid
// of more than 65,535 workgroups, and kernels of more taps than llvmpipe's 65,535 loop passes per
// invocation (LongKernels), 1x1 convolutions as matmul/linear products (Pointwise); f32 and f16, a
// bf16 subset, and mixed weights (f32 x and y with f16 or bf16 w and bias).
// Tolerance: tol::kMatmul (NMSE of f32 dot products summed in a different order than the CPU's
// double sums); f16 outputs are one rounding of nearly the same f32 value, far inside it.
#include "diff.h"

namespace diff {
namespace {

class ConvDiff : public SeededTest {};

// Any layout kind but broadcasting; f16 contiguous views start inside a word half of the time.
View random_view(const Shape& shape, tgl_dtype dt, Rng& rng, bool input) {
    static const std::vector<Kind> kinds = {Kind::Contiguous, Kind::Permuted, Kind::Stepped, Kind::Negative, Kind::Padded, Kind::Mixed};
    return view_of(shape, rng.pick(kinds), rng, input, dt);
}

InputArg rand_input(tgl_dtype dt, const Shape& shape, Rng& rng) {
    InputArg a;
    a.dtype = dt;
    a.view = random_view(shape, dt, rng, true);
    a.storage = random_storage(dt, a.view.storage, rng, float_values(dt, -1, 1));
    return a;
}
struct Conv {
    int S = 2;
    int64_t n = 1, cin = 1, cout = 1;
    std::vector<int64_t> in, k;  // S each
    std::vector<int> stride, dil, pb, pe, op;  // empty: 1 / 0
    uint32_t groups = 1, activation = 0;
    bool last = false, same = false, bias = false;
    bool dense = false;  // dense operands only: a stepped view of a million elements can pass the
                         // 128 MiB storage-block limit of a device

    tgl_conv_params params() const {
        tgl_conv_params p{};
        p.struct_size = sizeof p;
        p.groups = groups;
        p.activation = activation;
        p.layout = last ? TGL_CONV_LAYOUT_CHANNELS_LAST : TGL_CONV_LAYOUT_CHANNELS_FIRST;
        p.padding_mode = same ? TGL_CONV_PADDING_SAME : TGL_CONV_PADDING_EXPLICIT;
        for (int i = 0; i < 3; ++i) {
            p.stride[i] = i < int(stride.size()) ? stride[size_t(i)] : 1;
            p.dilation[i] = i < int(dil.size()) ? dil[size_t(i)] : 1;
            p.pad_begin[i] = i < int(pb.size()) ? pb[size_t(i)] : 0;
            p.pad_end[i] = i < int(pe.size()) ? pe[size_t(i)] : 0;
            p.output_padding[i] = i < int(op.size()) ? op[size_t(i)] : 0;
        }
        return p;
    }
    // Spatial output sizes of the forward (or transposed) relation.
    std::vector<int64_t> out(bool transposed) const {
        tgl_conv_params p = params();
        std::vector<int64_t> o;
        for (int i = 0; i < S; ++i) {
            int64_t b = p.pad_begin[i], e = p.pad_end[i];
            if (same) b = e = 0;
            int64_t reach = p.dilation[i] * (k[size_t(i)] - 1);
            if (transposed) o.push_back((in[size_t(i)] - 1) * p.stride[i] - b - e + reach + p.output_padding[i] + 1);
            else o.push_back(same ? in[size_t(i)] : (in[size_t(i)] + b + e - reach - 1) / p.stride[i] + 1);
        }
        return o;
    }
    Shape act(int64_t c, const std::vector<int64_t>& sp) const {
        Shape s = {n};
        if (!last) s.push_back(c);
        s.insert(s.end(), sp.begin(), sp.end());
        if (last) s.push_back(c);
        return s;
    }
    Shape weight(int64_t d0, int64_t d1) const {
        Shape s = {d0, d1};
        s.insert(s.end(), k.begin(), k.end());
        return s;
    }
};

InputArg dense_input(tgl_dtype dt, const Shape& shape, Rng& rng) {
    InputArg a;
    a.dtype = dt;
    a.view = contiguous(shape);
    a.storage = random_storage(dt, a.view.storage, rng, float_values(dt, -1, 1));
    return a;
}

// An operand of case c: dense where c.dense, else any layout.
InputArg op_input(const Conv& c, tgl_dtype dt, const Shape& shape, Rng& rng) {
    return c.dense ? dense_input(dt, shape, rng) : rand_input(dt, shape, rng);
}
OutputArg op_output(const Conv& c, tgl_dtype dt, const Shape& shape, Rng& rng) {
    return c.dense ? output_of(dt, shape) : rand_output(dt, shape, rng);
}

// The spatial input of a channels-last case: dense (channel stride 1, the GLES plugin's
// channel-fastest loads) for f32, any layout for f16.
InputArg x_input(const Conv& c, tgl_dtype dt, const Shape& shape, Rng& rng) {
    return c.last && dt == F32 ? dense_input(dt, shape, rng) : op_input(c, dt, shape, rng);
}

// The output of a channels-last case: dense for f32 (the GLES plugin's channel-fastest stores).
OutputArg y_output(const Conv& c, tgl_dtype dt, const Shape& shape, Rng& rng) {
    return c.last && dt == F32 ? output_of(dt, shape) : op_output(c, dt, shape, rng);
}

tgl_op forward_op(int S) { return S == 1 ? TGL_OP_CONV1D : S == 2 ? TGL_OP_CONV2D : TGL_OP_CONV3D; }

// tolerance: NMSE per output (0: tol::kMatmul); subject: a device of the subject plugin other than
// its shared one (null: that one).
void run(tgl_op op, const Conv& c, std::vector<InputArg> ins, std::vector<OutputArg> outs, const std::string& what,
         double tolerance = 0, Device* subject = nullptr) {
    MultiSpec s;
    s.op = op;
    s.params = param_bytes(c.params());
    s.inputs = std::move(ins);
    s.outputs = std::move(outs);
    if (tolerance == 0) tolerance = tol::kMatmul;
    s.tolerance = {tolerance, tolerance};
    s.what = what;
    check(s, subject);
}

// dt: x and y; wdt: w and the bias (mixed weights: f16/bf16 under f32 x), dt when INVALID.
std::string dtypes_name(tgl_dtype dt, tgl_dtype wdt) {
    return dtype_name(dt) + (wdt == dt ? "" : ", " + dtype_name(wdt) + " weights");
}

void forward(const Conv& c, tgl_dtype dt, Rng& rng, const std::string& what, tgl_dtype wdt = TGL_DTYPE_INVALID,
             double tolerance = 0, Device* subject = nullptr) {
    if (wdt == TGL_DTYPE_INVALID) wdt = dt;
    InputArg b = c.bias ? rand_input(wdt, {c.cout}, rng) : absent_input();
    run(forward_op(c.S), c, {x_input(c, dt, c.act(c.cin, c.in), rng), op_input(c, wdt, c.weight(c.cout, c.cin / c.groups), rng), b},
        {y_output(c, dt, c.act(c.cout, c.out(false)), rng)}, what + " " + dtypes_name(dt, wdt), tolerance, subject);
}

void transposed(const Conv& c, tgl_dtype dt, Rng& rng, const std::string& what, tgl_dtype wdt = TGL_DTYPE_INVALID) {
    if (wdt == TGL_DTYPE_INVALID) wdt = dt;
    InputArg b = c.bias ? rand_input(wdt, {c.cout}, rng) : absent_input();
    run(c.S == 1 ? TGL_OP_CONV_TRANSPOSE1D : TGL_OP_CONV_TRANSPOSE2D, c,
        {x_input(c, dt, c.act(c.cin, c.in), rng), op_input(c, wdt, c.weight(c.cin, c.cout / c.groups), rng), b},
        {y_output(c, dt, c.act(c.cout, c.out(true)), rng)}, what + " " + dtypes_name(dt, wdt));
}

void backward(const Conv& c, tgl_dtype dt, Rng& rng, const std::string& what) {
    const Shape xs = c.act(c.cin, c.in), ys = c.act(c.cout, c.out(false)), ws = c.weight(c.cout, c.cin / c.groups);
    run(TGL_OP_CONV2D_BACKWARD_INPUT, c, {x_input(c, dt, ys, rng), op_input(c, dt, ws, rng)}, {y_output(c, dt, xs, rng)},
        what + " backward_input " + dtype_name(dt));
    run(TGL_OP_CONV2D_BACKWARD_WEIGHT, c, {op_input(c, dt, xs, rng), op_input(c, dt, ys, rng)},
        {op_output(c, dt, ws, rng), c.bias ? rand_output(dt, {c.cout}, rng) : absent_output()}, what + " backward_weight " + dtype_name(dt));
}

Conv c2(int64_t n, int64_t cin, int64_t cout, std::vector<int64_t> in, std::vector<int64_t> k) {
    Conv c;
    c.S = int(in.size());
    c.n = n;
    c.cin = cin;
    c.cout = cout;
    c.in = std::move(in);
    c.k = std::move(k);
    return c;
}

TEST_F(ConvDiff, Forward) {
    std::vector<std::pair<std::string, Conv>> cases;
    Conv c = c2(2, 16, 24, {7, 9}, {1, 1});
    c.bias = true;
    cases.push_back({"1x1", c});
    c = c2(1, 3, 8, {23, 19}, {7, 7});
    c.stride = {2, 2}, c.pb = {3, 3}, c.pe = {3, 3}, c.bias = true, c.activation = TGL_ACTIVATION_RELU;
    cases.push_back({"7x7 stride 2 relu", c});
    c = c2(2, 5, 7, {11, 13}, {3, 3});
    c.stride = {2, 2}, c.pb = {1, 2}, c.pe = {0, 1};
    cases.push_back({"stride 2 odd sizes asymmetric pads", c});
    c = c2(1, 6, 10, {13, 12}, {3, 3});
    c.dil = {2, 2}, c.pb = {2, 1}, c.pe = {2, 1}, c.activation = TGL_ACTIVATION_GELU;
    cases.push_back({"dilation 2 gelu", c});
    c = c2(2, 12, 12, {9, 10}, {3, 3});
    c.groups = 12, c.pb = {1, 1}, c.pe = {1, 1}, c.bias = true;
    cases.push_back({"depthwise", c});
    c = c2(1, 6, 12, {8, 7}, {5, 3});
    c.groups = 6, c.same = true, c.dil = {1, 2};
    cases.push_back({"depthwise x2 same", c});
    c = c2(1, 9, 30, {8, 8}, {3, 3});
    c.groups = 3, c.stride = {1, 2}, c.activation = TGL_ACTIVATION_SILU;
    cases.push_back({"groups 3 silu", c});
    c = c2(1, 4, 6, {5, 5}, {2, 2});
    c.pb = {4, 5}, c.pe = {6, 4}, c.bias = true;
    cases.push_back({"pads beyond the kernel", c});
    c = c2(3, 7, 9, {50}, {5});
    c.stride = {3}, c.bias = true, c.activation = TGL_ACTIVATION_GELU_TANH;
    cases.push_back({"1d", c});
    c = c2(1, 4, 6, {6, 7, 5}, {3, 2, 3});
    c.stride = {1, 2, 1}, c.pb = {1, 0, 1}, c.pe = {1, 0, 1}, c.bias = true;
    cases.push_back({"3d", c});
    c = c2(2, 6, 40, {9, 8}, {3, 3});
    c.last = true, c.pb = {1, 1}, c.pe = {1, 1}, c.bias = true;
    cases.push_back({"nhwc", c});
    c = c2(1, 5, 7, {11, 6, 5}, {1, 3, 3});
    c.last = true, c.same = true;
    cases.push_back({"ndhwc same", c});
    c = c2(1, 64, 64, {7, 7}, {3, 3});
    c.pb = {1, 1}, c.pe = {1, 1}, c.bias = true, c.activation = TGL_ACTIVATION_RELU;
    cases.push_back({"64 channels 7x7 (split K on GLES)", c});
    for (const auto& [name, cc] : cases)
        for (tgl_dtype dt : {F32, F16}) forward(cc, dt, rng_, name);
    // bf16 (a subset: the GEMM tiles, the direct variant, 1d, 3d, channels-last, split K) and
    // mixed weights (f32 x and y, f16 or bf16 w and bias; odd K = cin * taps in most cases,
    // strided w from the random layouts).
    for (size_t i : {0, 4, 9, 12}) forward(cases[i].second, BF16, rng_, cases[i].first);
    for (const auto& [i, wdt] : std::vector<std::pair<size_t, tgl_dtype>>{{0, F16}, {1, BF16}, {4, BF16}, {8, F16}, {10, BF16}, {12, F16}})
        forward(cases[i].second, F32, rng_, cases[i].first, wdt);
    // Large enough for the 128x64 tile (GLES, where the limits allow it).
    c = c2(1, 8, 128, {64, 64}, {3, 3});
    c.pb = {1, 1}, c.pe = {1, 1}, c.bias = true, c.dense = true;
    forward(c, F32, rng_, "128 channels 64x64");
}

// The GEMM's tiles at their edges (prime channel counts just past 64 / 128, odd spatial sizes,
// batch > 1) on GLES's 128x64 and 64x128 tiles (N >= 4096 columns, at least 256 tiles: dense
// operands of a million elements) and the bound-free loads of convolutions whose taps all lie
// inside x (1x1, unpadded, stride 2), with the padded-at-the-end case beside them; channels-last,
// f16, backward weight with db. Loop TGL_TUNE_CONV over its candidates to cover every tile on them.
TEST_F(ConvDiff, Tiles) {
    Conv a = c2(2, 38, 262, {45, 47}, {1, 1});
    a.groups = 2, a.bias = true, a.activation = TGL_ACTIVATION_RELU, a.dense = true;
    Conv b = c2(3, 28, 268, {38, 41}, {3, 3});
    b.groups = 4, b.dense = true;
    Conv c = c2(2, 13, 37, {15, 17}, {1, 1});
    c.stride = {2, 2}, c.bias = true;
    Conv d = c2(2, 5, 11, {10, 11}, {3, 3});
    d.stride = {2, 2}, d.pe = {1, 1};
    Conv e = c2(1, 66, 258, {64, 65}, {1, 1});
    e.groups = 2, e.last = true, e.bias = true, e.dense = true;
    Conv f = c2(1, 20, 515, {7, 9}, {3, 3});
    f.pb = {1, 1}, f.pe = {1, 1}, f.bias = true, f.dense = true;
    // f16 on the first three (the dtype is the loads' and stores' business, not the tile's).
    const std::vector<std::pair<std::string, Conv>> cases = {{"1x1 2 groups of 131 channels (in bounds)", a},
                                                             {"1x1 stride 2 (in bounds)", c},
                                                             {"3x3 stride 2 padded at the end only", d},
                                                             {"3x3 unpadded 4 groups of 67 channels (in bounds)", b},
                                                             {"nhwc 1x1 2 groups of 129 channels", e},
                                                             {"3x3 515 channels x 63 positions (128x128 tile on GLES)", f}};
    for (size_t i = 0; i < cases.size(); ++i)
        for (tgl_dtype dt : {F32, F16})
            if (dt == F32 || i < 3) forward(cases[i].second, dt, rng_, cases[i].first);
    Conv w = c2(1, 332, 260, {10, 10}, {5, 5});
    w.groups = 2, w.bias = true, w.dense = true;
    backward(w, F32, rng_, "5x5 2 groups of 166 -> 130 channels (backward weight: 130 x 4150 GEMMs)");
}

// 1x1 convolutions as the matmul family's products (GLES: conv_kernels.cpp, pointwise_candidate):
// by default (W x x[n] for consecutive positions in y, no bias, at least 128 output channels and
// enough positions; else the implicit GEMM), and forced to each route (TGL_TUNE_CONV=mm1x1: the matmul where it applies, else the linear; lin1x1: the
// linear everywhere; gemm1x1: the implicit GEMM). Edges: odd channel counts, positions off every
// tile and quad (5x7 = 35, 1d, 3d), batch 1 and 3, bias or none with activations, a long K (520
// input channels over 18 positions: split K), channels-last, f16/bf16 and f16 weights under f32
// (the matmul route declines to the linear), random views (positions not one stride apart decline
// to the GEMM), and shapes that must route elsewhere (2 groups, stride 2, padded, 3x3).
TEST_F(ConvDiff, Pointwise) {
    std::vector<std::pair<std::string, Conv>> cases;
    Conv c = c2(3, 7, 131, {5, 7}, {1, 1});
    c.activation = TGL_ACTIVATION_RELU, c.dense = true;
    cases.push_back({"1x1 7 -> 131 channels 5x7 batch 3 relu", c});
    c = c2(2, 7, 131, {33, 35}, {1, 1});  // 1,155 positions: the matmul by default
    c.activation = TGL_ACTIVATION_RELU, c.dense = true;
    cases.push_back({"1x1 7 -> 131 channels 33x35 batch 2 relu", c});
    c = c2(1, 66, 130, {9, 11}, {1, 1});
    c.bias = true, c.dense = true;
    cases.push_back({"1x1 66 -> 130 channels 9x11 batch 1 bias", c});
    c = c2(2, 520, 9, {3, 6}, {1, 1});
    c.bias = true, c.activation = TGL_ACTIVATION_GELU, c.dense = true;
    cases.push_back({"1x1 520 -> 9 channels 3x6 (long K) bias gelu", c});
    c = c2(2, 5, 9, {6, 7}, {1, 1});
    c.last = true, c.bias = true, c.activation = TGL_ACTIVATION_SILU, c.dense = true;
    cases.push_back({"nhwc 1x1 5 -> 9 channels bias silu", c});
    c = c2(2, 6, 11, {6, 7}, {1, 1});
    c.last = true, c.dense = true;
    cases.push_back({"nhwc 1x1 6 -> 11 channels no bias", c});
    c = c2(3, 9, 5, {37}, {1});
    c.dense = true;
    cases.push_back({"1d 1x1 37 positions", c});
    c = c2(1, 4, 6, {3, 5, 7}, {1, 1, 1});
    c.bias = true, c.dense = true;
    cases.push_back({"3d 1x1x1 3x5x7", c});
    c = c2(2, 12, 10, {6, 5}, {1, 1});
    c.bias = true;
    cases.push_back({"1x1 random views bias", c});
    c = c2(2, 8, 6, {5, 6}, {1, 1});
    cases.push_back({"1x1 random views", c});
    // Not 1x1 products: the implicit GEMM takes them whatever the route.
    c = c2(2, 6, 10, {5, 7}, {1, 1});
    c.groups = 2, c.bias = true, c.dense = true;
    cases.push_back({"1x1 2 groups (not routed)", c});
    c = c2(1, 5, 7, {9, 8}, {1, 1});
    c.stride = {2, 2}, c.dense = true;
    cases.push_back({"1x1 stride 2 (not routed)", c});
    c = c2(1, 5, 7, {4, 5}, {1, 1});
    c.pb = {1, 0}, c.pe = {0, 1}, c.dense = true;
    cases.push_back({"1x1 padded (not routed)", c});
    // The 16-bit dtypes and mixed weights by default (the matmul for case 1, except mixed weights)
    // and on the linear (case 1 and the channels-last case 4).
    const std::pair<const char*, Device*> routes[] = {{"default", nullptr},
                                                      {"mm1x1", &subject_device_with("TGL_TUNE_CONV", "mm1x1")},
                                                      {"lin1x1", &subject_device_with("TGL_TUNE_CONV", "lin1x1")}};
    for (const auto& [route, dev] : routes)
        for (size_t i = 0; i < cases.size(); ++i) {
            const std::string what = std::string(route) + " " + cases[i].first;
            forward(cases[i].second, F32, rng_, what, F32, 0, dev);
            if ((i == 1 || i == 4) && std::string(route) != "mm1x1") {
                forward(cases[i].second, F16, rng_, what, F16, 0, dev);
                forward(cases[i].second, BF16, rng_, what, BF16, 0, dev);
                forward(cases[i].second, F32, rng_, what, F16, 0, dev);
            }
        }
    forward(cases[2].second, F32, rng_, "default " + cases[2].first, BF16);
    forward(cases[0].second, F32, rng_, "gemm1x1 " + cases[0].first, F32, 0, &subject_device_with("TGL_TUNE_CONV", "gemm1x1"));
}

// The 1x1 routes with 4 KiB windows: the op in pieces over the batch and the positions (each piece
// a product) and over the input channels (pieces that add to an f32 y: the implicit GEMM).
TEST_F(ConvDiff, PointwiseSmallWindows) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Conv a = c2(3, 6, 130, {5, 6}, {1, 1});
    a.activation = TGL_ACTIVATION_RELU, a.dense = true;
    Conv b = c2(1, 40, 9, {5, 6}, {1, 1});  // w 1440 bytes, x 4800 bytes: pieces of input channels
    b.bias = true, b.dense = true;
    for (const char* route : {"mm1x1", "lin1x1"}) {
        Device* d = &subject_device_with({{"TGL_TUNE_CONV", route}, {"TGL_GLES_TEST_FAULT", "max_window=4096"}});
        for (tgl_dtype dt : {F32, F16}) {
            forward(a, dt, rng_, std::string(route) + " 4 KiB windows", dt, 0, d);
            forward(b, dt, rng_, std::string(route) + " 4 KiB windows, input channels in pieces", dt, 0, d);
        }
    }
}

TEST_F(ConvDiff, Transposed) {
    Conv c = c2(2, 6, 4, {17}, {4});
    c.stride = {3}, c.pb = {2}, c.pe = {1}, c.op = {1}, c.bias = true;
    Conv d = c2(1, 8, 6, {7, 6}, {3, 3});
    d.stride = {2, 2}, d.pb = {1, 1}, d.pe = {1, 0}, d.op = {1, 0}, d.groups = 2, d.activation = TGL_ACTIVATION_RELU;
    Conv e = c2(1, 4, 40, {5, 4}, {3, 2});
    e.dil = {2, 2}, e.stride = {1, 2}, e.op = {1, 1}, e.last = true, e.bias = true;
    Conv f = c2(2, 5, 5, {6, 7}, {3, 3});
    f.groups = 5, f.stride = {2, 2}, f.pb = {1, 1}, f.pe = {1, 1};
    Conv g = c2(2, 6, 12, {5, 6}, {3, 4});
    g.stride = {2, 3}, g.pb = {1, 2}, g.pe = {0, 1}, g.op = {1, 2}, g.bias = true, g.activation = TGL_ACTIVATION_SILU;
    transposed(c, BF16, rng_, "1d stride 3 output_padding 1");
    transposed(g, BF16, rng_, "2d stride (2, 3) 12 channels (phases on GLES)");
    transposed(c, F32, rng_, "1d stride 3 output_padding 1", F16);
    transposed(d, F32, rng_, "2d stride 2 groups 2", BF16);
    transposed(g, F32, rng_, "2d stride (2, 3) 12 channels (phases on GLES)", BF16);
    for (tgl_dtype dt : {F32, F16}) {
        transposed(c, dt, rng_, "1d stride 3 output_padding 1");
        transposed(d, dt, rng_, "2d stride 2 groups 2");
        transposed(e, dt, rng_, "2d dilation 2 nhwc");
        transposed(f, dt, rng_, "2d depthwise");
        transposed(g, dt, rng_, "2d stride (2, 3) 12 channels (phases on GLES)");
    }
}

TEST_F(ConvDiff, Backward) {
    Conv c = c2(2, 6, 8, {11, 9}, {3, 3});
    c.groups = 2, c.stride = {2, 2}, c.pb = {1, 1}, c.pe = {1, 0}, c.bias = true;
    Conv d = c2(3, 5, 36, {7, 6}, {1, 1});
    Conv e = c2(1, 4, 4, {9, 9}, {3, 3});
    e.groups = 4, e.dil = {2, 2}, e.same = true, e.bias = true, e.last = true;
    Conv f = c2(1, 3, 40, {13, 12}, {5, 5});
    f.stride = {2, 3}, f.pb = {6, 2}, f.pe = {2, 2}, f.bias = true;
    Conv g = c2(2, 8, 16, {24, 24}, {3, 3});
    g.pb = {1, 1}, g.pe = {1, 1}, g.bias = true;
    Conv h = c2(1, 12, 8, {11, 10}, {3, 3});
    h.stride = {2, 2}, h.pb = {1, 1}, h.pe = {1, 1};
    for (tgl_dtype dt : {F32, F16}) {
        backward(g, dt, rng_, "3x3 24x24 (split K on GLES)");
        backward(h, dt, rng_, h.last ? "3x3 stride 2 nhwc, 12 input channels (phases on GLES)" : "3x3 stride 2, 12 input channels (phases on GLES)");
        h.last = !h.last;
        backward(c, dt, rng_, "3x3 stride 2 groups 2");
        backward(d, dt, rng_, "1x1");
        backward(e, dt, rng_, "depthwise dilation 2 same nhwc");
        backward(f, dt, rng_, "5x5 pads beyond the kernel");
    }
}

TEST_F(ConvDiff, EmptyBatch) {
    Conv c = c2(0, 3, 4, {5, 5}, {3, 3});
    c.bias = true;
    forward(c, F32, rng_, "empty batch");
    forward(c, F32, rng_, "empty batch", BF16);
    backward(c, F32, rng_, "empty batch");  // dw = 0, db = 0
}

// 65,600 groups of 5 output channels (a GEMM tile each): more than 65,535 workgroups.
TEST_F(ConvDiff, ManyWorkgroups) {
    Conv c = c2(1, 2 * 65600, 5 * 65600, {1}, {1});
    c.groups = 65600;
    MultiSpec s;
    s.op = TGL_OP_CONV1D;
    s.params = param_bytes(c.params());
    s.inputs = {dense_input(F32, c.act(c.cin, c.in), rng_), dense_input(F32, c.weight(c.cout, 2), rng_), absent_input()};
    s.outputs = {output_of(F32, c.act(c.cout, c.out(false)))};
    s.tolerance = {tol::kMatmul};
    s.what = "conv1d groups 65600";
    check(s);
}

// Kernels of more taps than llvmpipe's 65,535 loop passes per invocation, at channel counts that
// took the direct variant (one invocation per output walking every tap; cut short with TGL_OK):
// 131,072 taps, and 70,000 taps in 2 groups of 2 output channels.
TEST_F(ConvDiff, LongKernels) {
    Conv c = c2(1, 1, 1, {131074}, {131072});
    c.bias = true;
    forward(c, F32, rng_, "conv1d 131,072 taps");
    c = c2(1, 2, 4, {70003}, {70000});
    c.groups = 2;
    forward(c, F16, rng_, "conv1d 70,000 taps, 2 groups");
}

// Winograd F(2x2, 3x3) (GLES: backends/gles/conv_kernels.cpp), forced by TGL_TUNE_CONV=winograd on
// the subject: 2x2 output tiles cut at odd edges, pads 0, 1, 2 and asymmetric ones, batch > 1,
// channel counts off the GEMM's tiles and quads (5 -> 7, 70 -> 66), bias and activations,
// channels-last and random views, f32/f16/bf16 and f16 weights under f32; an empty batch; a shape
// that takes F(4x4, 3x3) unforced (64 -> 64 channels, 32x32); and 4 KiB windows (max_window: the op in
// pieces over batch, rows and input channels, the latter adding to an f32 y; the tiles in chunks;
// a weight whose transform passes a window declines to the GEMM).
// Tolerance: NMSE kWinograd (f32: measured 1.2e-14 - 1.3e-13 against the CPU plugin's double sums
// on llvmpipe, the implicit GEMM's order: 64 -> 64 channels 7.4e-14 against its 9.3e-14, 128 -> 128
// 1.3e-13 against 9.5e-14; f16/bf16: one rounding of the output, tol::of_store). kWinograd4, of
// F(4x4, 3x3) (TGL_TUNE_CONV=winograd4): measured 5e-14 - 3e-12 on the same cases.
constexpr double kWinograd = 1e-12;
constexpr double kWinograd4 = 3e-11;

Conv wino(int64_t n, int64_t cin, int64_t cout, std::vector<int64_t> in, int pb, int pe) {
    Conv c = c2(n, cin, cout, std::move(in), {3, 3});
    c.pb = {pb, pb}, c.pe = {pe, pe};
    return c;
}

TEST_F(ConvDiff, Winograd) {
    Device* forced = &subject_device_with("TGL_TUNE_CONV", "winograd");
    std::vector<std::pair<std::string, Conv>> cases;
    Conv c = wino(2, 5, 7, {11, 13}, 1, 1);
    c.bias = true, c.activation = TGL_ACTIVATION_RELU;
    cases.push_back({"odd 11x13 pad 1 relu", c});
    c = wino(1, 6, 9, {9, 8}, 0, 0);
    cases.push_back({"pad 0 (7x6 out)", c});
    c = wino(3, 3, 10, {7, 9}, 2, 1);
    c.bias = true, c.activation = TGL_ACTIVATION_SILU;
    cases.push_back({"pads 2 and 1 silu", c});
    c = wino(2, 6, 40, {9, 8}, 1, 1);
    c.last = true, c.bias = true;
    cases.push_back({"nhwc", c});
    c = wino(2, 70, 66, {15, 17}, 1, 1);
    c.bias = true, c.activation = TGL_ACTIVATION_GELU, c.dense = true;
    cases.push_back({"70 -> 66 channels gelu", c});
    c = wino(1, 4, 4, {1, 2}, 1, 1);
    cases.push_back({"1x2 image", c});
    for (const auto& [name, cc] : cases)
        for (tgl_dtype dt : {F32, F16}) forward(cc, dt, rng_, "winograd " + name, dt, tol::of_store(dt, kWinograd), forced);
    forward(cases[0].second, BF16, rng_, "winograd " + cases[0].first, BF16, tol::of_store(BF16, kWinograd), forced);
    // F(4x4, 3x3) (opt-in): 4x4 tiles cut at every edge of these shapes.
    Device* forced4 = &subject_device_with("TGL_TUNE_CONV", "winograd4");
    for (const auto& [name, cc] : cases)
        for (tgl_dtype dt : {F32, F16}) forward(cc, dt, rng_, "winograd4 " + name, dt, tol::of_store(dt, kWinograd4), forced4);
    forward(cases[4].second, F32, rng_, "winograd " + cases[4].first, F16, kWinograd, forced);
    c = wino(0, 3, 4, {5, 5}, 1, 1);
    c.bias = true;
    forward(c, F32, rng_, "winograd empty batch", F32, kWinograd, forced);
    // Unforced: the shape takes F(4x4, 3x3) by default (at least 64 channels each way and 1,024
    // positions).
    c = wino(1, 64, 64, {32, 32}, 1, 1);
    c.bias = true, c.dense = true;
    forward(c, F32, rng_, "64 -> 64 channels 32x32 (winograd4 by shape)", F32, kWinograd4);
}

TEST_F(ConvDiff, WinogradSmallWindows) {
    if (plugin(Role::Subject).name() != "gles") GTEST_SKIP() << "the max_window hook is the GLES plugin's";
    Device* d = &subject_device_with({{"TGL_TUNE_CONV", "winograd"}, {"TGL_GLES_TEST_FAULT", "max_window=4096"}});
    Conv a = wino(2, 5, 7, {9, 10}, 1, 1);
    a.bias = true, a.activation = TGL_ACTIVATION_RELU, a.dense = true;
    Conv b = wino(1, 30, 4, {6, 7}, 1, 1);  // w (4320 bytes) in pieces of 15 input channels
    b.bias = true, b.activation = TGL_ACTIVATION_RELU, b.dense = true;
    Conv c = wino(1, 12, 12, {5, 6}, 2, 0);  // U (16 x 12 x 12 f32) passes a window: the GEMM
    c.dense = true;
    for (tgl_dtype dt : {F32, F16}) {
        forward(a, dt, rng_, "winograd 4 KiB windows", dt, tol::of_store(dt, kWinograd), d);
        forward(b, dt, rng_, "winograd 4 KiB windows, input channels in pieces", dt, tol::of_store(dt, kWinograd), d);
        forward(c, dt, rng_, "winograd declined (4 KiB windows)", dt, tol::of_store(dt, kWinograd), d);
    }
}

}  // namespace
}  // namespace diff
