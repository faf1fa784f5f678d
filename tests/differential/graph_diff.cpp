// ABI 1.2 graphs: a random sequence of dependent ops (elementwise, in place or not, matmul, a sum
// over an axis), recorded once on the subject and replayed with new data each round, against the
// reference running the same ops one by one with the same data.
#include "diff.h"
#include "tgl_test/op_program.h"

#include <cmath>
#include <cstdlib>
#include <string>

namespace diff {
namespace {

class GraphDiff : public SeededTest {};

constexpr int kBuffers = 5;
constexpr int64_t kSide = 16, kN = kSide * kSide;  // each buffer: a 16 x 16 f32 matrix

struct Step {
    tgl_op op;
    int a, b, y;  // buffer indices (b: -1 for unary ops)
    bool rows;    // sum: over axis 1 into y's first 16 floats
};

struct Side {
    const tgl_plugin_api& api;
    Role role;
    tgl_device h = 0;
    tgl_buffer buf[kBuffers] = {};
    explicit Side(Role r) : api(plugin(r).api()), role(r) {
        if (api.device_open(0, &h) != TGL_OK) throw Failure("device_open: " + plugin(r).last_error());
        for (tgl_buffer& b : buf)
            if (api.buffer_alloc(h, kN * 4, &b) != TGL_OK) throw Failure("buffer_alloc: " + plugin(r).last_error());
    }
    ~Side() { api.device_close(h); }
    void check(tgl_status s, const char* what) {
        if (s != TGL_OK)
            throw Failure(std::string(role == Role::Reference ? "reference " : "subject ") + what + ": " +
                          tgl_status_name(s) + ": " + plugin(role).last_error());
    }
    tgl_tensor mat(int i) const {
        const int64_t shape[2] = {kSide, kSide};
        return tgl_tensor_contiguous(buf[i], 0, TGL_DTYPE_F32, 2, shape);
    }
    void run(const Step& s) {
        tgl_tensor in[2] = {mat(s.a), s.b >= 0 ? mat(s.b) : tgl_tensor{}};
        tgl_tensor out = mat(s.y);
        if (s.op == TGL_OP_MATMUL) {
            tgl_matmul_params p{};
            p.struct_size = sizeof p;
            p.alpha = 1.0f / kSide;  // keeps values in [-1, 1]
            check(api.run_op(h, s.op, &p, in, 2, &out, 1), "matmul");
        } else if (s.op == TGL_OP_SUM) {
            tgl_reduce_params p{};
            p.struct_size = sizeof p;
            p.n_axes = 1;
            p.axes[0] = 1;
            const int64_t n = kSide;
            out = tgl_tensor_contiguous(buf[s.y], 0, TGL_DTYPE_F32, 1, &n);
            check(api.run_op(h, s.op, &p, in, 1, &out, 1), "sum");
        } else {
            check(api.run_op(h, s.op, nullptr, in, s.b >= 0 ? 2 : 1, &out, 1), "elementwise op");
        }
    }
    void upload(int i, const std::vector<float>& v) { check(api.buffer_upload(h, buf[i], 0, v.data(), kN * 4), "upload"); }
    std::vector<float> read(int i) {
        std::vector<float> v(kN);
        check(api.buffer_download(h, buf[i], 0, v.data(), kN * 4), "download");
        return v;
    }
};

TEST_F(GraphDiff, ReplayedRandomSequenceMatchesTheReference) {
    // Ops that keep values in [-1, 1]: an unbounded result (add, sub, sum) is followed by tanh.
    const std::vector<tgl_op> binary = {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_MAXIMUM, TGL_OP_MINIMUM};
    const std::vector<tgl_op> unary = {TGL_OP_TANH, TGL_OP_SIGMOID, TGL_OP_NEG, TGL_OP_RELU};
    std::vector<Step> steps;
    for (int i = 0; i < 40; ++i) {
        const int kind = int(rng_.integer(0, 9));
        const int a = int(rng_.integer(0, kBuffers - 1)), b = int(rng_.integer(0, kBuffers - 1));
        int y = int(rng_.integer(0, kBuffers - 1));
        if (kind <= 4) {
            tgl_op op = rng_.pick(binary);
            if (rng_.chance(0.3)) y = a;  // in place
            steps.push_back({op, a, b, y, false});
            if (op == TGL_OP_ADD || op == TGL_OP_SUB) steps.push_back({TGL_OP_TANH, y, -1, y, false});
        } else if (kind <= 7) {
            steps.push_back({rng_.pick(unary), a, -1, rng_.chance(0.5) ? a : y, false});
        } else {
            while (y == a || y == b) y = (y + 1) % kBuffers;  // no overlap with the inputs
            if (kind == 8) {
                steps.push_back({TGL_OP_MATMUL, a, b, y, false});
            } else {
                steps.push_back({TGL_OP_SUM, a, -1, y, true});
                steps.push_back({TGL_OP_TANH, y, -1, y, false});
            }
        }
    }
    Side ref(Role::Reference), sub(Role::Subject);
    sub.check(sub.api.graph_begin(sub.h), "graph_begin");
    for (const Step& s : steps) sub.run(s);
    tgl_graph g = 0;
    sub.check(sub.api.graph_end(sub.h, &g), "graph_end");
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < kBuffers; ++i) {
            std::vector<float> v(kN);
            for (float& x : v) x = float(rng_.uniform(-1, 1));
            ref.upload(i, v);
            sub.upload(i, v);
        }
        for (const Step& s : steps) ref.run(s);
        sub.check(sub.api.graph_replay(sub.h, g), "graph_replay");
        for (int i = 0; i < kBuffers; ++i) {
            std::vector<float> want = ref.read(i), got = sub.read(i);
            for (int64_t k = 0; k < kN; ++k)
                ASSERT_NEAR(got[size_t(k)], want[size_t(k)], 1e-4 + 1e-4 * std::fabs(want[size_t(k)]))
                    << "round " << round << ", buffer " << i << ", element " << k << " of a " << steps.size()
                    << "-op graph";
        }
    }
    sub.check(sub.api.graph_destroy(sub.h, g), "graph_destroy");
}

// Graph fusion (docs/graphs.md): random chains of float elementwise ops (f32 and f16, broadcast
// operands, strided views, in-place ops, scalar parameters, odd sizes), half of them headed by a
// norm (rms_norm or layer_norm over the rows, with or without gamma and beta: the chain runs as
// the norm kernel's epilogue), recorded on the subject and replayed: every buffer, intermediates
// included, bit for bit what the subject gives op by op, and near what the reference gives op by op.
TEST_F(GraphDiff, FusedRandomChainsMatchOpByOp) {
    const std::vector<tgl_op> unary = {TGL_OP_TANH, TGL_OP_SIGMOID, TGL_OP_NEG, TGL_OP_RELU, TGL_OP_SILU, TGL_OP_GELU,
                                       TGL_OP_ABS, TGL_OP_SIN, TGL_OP_LEAKY_RELU, TGL_OP_CLAMP, TGL_OP_HARDSWISH};
    const std::vector<tgl_op> binary = {TGL_OP_ADD, TGL_OP_SUB, TGL_OP_MUL, TGL_OP_MAXIMUM, TGL_OP_MINIMUM};
    for (int trial = 0; trial < 6; ++trial) {
        const tgl_dtype dt = rng_.chance(0.5) ? TGL_DTYPE_F32 : TGL_DTYPE_F16;
        const int64_t rows = rng_.integer(1, 7), cols = rng_.integer(1, 70);
        const std::vector<int64_t> shape = {rows, cols};
        OpProgram p;
        // Buffers of rows x (cols + 3) elements: room for a padded row stride.
        const int64_t room = rows * (cols + 3);
        auto tensor = [&](int b, bool padded) {
            ProgramTensor t{b, dt, shape, {}, 0};
            if (padded) t.strides = {cols + 3, 1};
            return t;
        };
        auto fresh = [&](bool padded) {
            p.buffers.push_back({dt, room});
            return tensor(int(p.buffers.size()) - 1, padded);
        };
        ProgramTensor current = fresh(rng_.chance(0.3));
        std::string head;
        if (rng_.chance(0.5)) {  // a norm head: its output starts the chain
            const tgl_op op = rng_.chance(0.5) ? TGL_OP_RMS_NORM : TGL_OP_LAYER_NORM;
            std::vector<ProgramTensor> in = {current};
            for (const char* param : {" gamma", " beta"}) {
                if (rng_.chance(0.5)) {
                    p.buffers.push_back({dt, cols});
                    in.push_back(ProgramTensor{int(p.buffers.size()) - 1, dt, {cols}, {}, 0});
                    head += param;
                } else {
                    in.push_back(ProgramTensor{-1, dt, {}, {}, 0});  // absent
                }
            }
            tgl_layer_norm_params np{sizeof(tgl_layer_norm_params), 1, 1e-5f, 0};
            const ProgramTensor y = fresh(rng_.chance(0.3));
            p.ops.push_back(ProgramOp{op, in, y, params_bytes(np)});
            head = (op == TGL_OP_RMS_NORM ? "rms_norm" : "layer_norm") + head + ", then ";
            current = y;
        }
        const int n_ops = int(rng_.integer(2, 8));
        for (int k = 0; k < n_ops; ++k) {
            ProgramTensor y = rng_.chance(0.3) ? current : fresh(rng_.chance(0.3));  // in place or not
            if (rng_.chance(0.5)) {
                const tgl_op op = rng_.pick(unary);
                std::vector<uint8_t> params;
                if (op == TGL_OP_LEAKY_RELU) params = params_bytes(tgl_leaky_relu_params{sizeof(tgl_leaky_relu_params), 0.2f});
                if (op == TGL_OP_CLAMP) {
                    tgl_clamp_params cp{};
                    cp.struct_size = sizeof cp;
                    cp.min = -0.75f;
                    cp.max = 1.5f;
                    params = params_bytes(cp);
                }
                if (op == TGL_OP_GELU) params = params_bytes(tgl_gelu_params{sizeof(tgl_gelu_params), uint32_t(rng_.integer(0, 1))});
                p.ops.push_back(ProgramOp{op, {current}, y, params});
            } else {
                ProgramTensor other;
                switch (rng_.integer(0, 3)) {
                case 0: other = fresh(rng_.chance(0.3)); break;                      // full size
                case 1: p.buffers.push_back({dt, cols}); other = ProgramTensor{int(p.buffers.size()) - 1, dt, {cols}, {}, 0}; break;
                case 2: p.buffers.push_back({dt, rows}); other = ProgramTensor{int(p.buffers.size()) - 1, dt, {rows, 1}, {}, 0}; break;
                default: other = current; break;                                      // the intermediate twice
                }
                const bool swap = rng_.chance(0.5);
                p.ops.push_back(ProgramOp{rng_.pick(binary), {swap ? other : current, swap ? current : other}, y, {}});
            }
            current = y;
        }
        SCOPED_TRACE("trial " + std::to_string(trial) + ": " + dtype_name(dt) + " " + std::to_string(rows) + " x " +
                     std::to_string(cols) + ", " + head + std::to_string(n_ops) + " ops");
        ProgramDevice ref(Role::Reference, p), direct(Role::Subject, p), graph(Role::Subject, p);
        const tgl_graph g = graph.record();
        for (int round = 0; round < 2; ++round) {
            const auto data = p.random_contents(rng_, -1, 1);
            ref.upload(data);
            direct.upload(data);
            graph.upload(data);
            ref.run_direct();
            direct.run_direct();
            graph.replay(g);
            const auto got = graph.read_all();
            ASSERT_EQ(first_difference(p, got, direct.read_all()), "") << "round " << round << ": replay vs op by op";
            const auto want = ref.read_all();
            const double tol = dt == TGL_DTYPE_F16 ? 1e-2 : 1e-4;
            for (size_t b = 0; b < got.size(); ++b) {
                const std::vector<double> x = decode_values(dt, got[b]), w = decode_values(dt, want[b]);
                for (size_t e = 0; e < x.size(); ++e)
                    ASSERT_NEAR(x[e], w[e], tol + tol * std::fabs(w[e])) << "round " << round << ", buffer " << b << ", element " << e;
            }
        }
        EXPECT_EQ(graph.api.graph_destroy(graph.h, g), TGL_OK);
    }
}

// A norm block whose row is too long for one invocation's loop budget where loops are limited
// (llvmpipe): layer_norm over 2^22 + 3 elements (three walks of 16,385 per invocation of 256 exceed
// the 32,768 passes) is cut into chunks, and the chunks' pass that stores y runs the epilogue
// (norm.comp's CHUNK_APPLY), then mul by a weight row and add a bias row: the replay bit for bit
// the subject op by op, near the reference.
TEST_F(GraphDiff, FusedNormScaleOnALoopBudgetLongRow) {
    const tgl_dtype f = TGL_DTYPE_F32;
    const int64_t d = (int64_t(1) << 22) + 3;
    const std::vector<int64_t> s = {1, d};
    OpProgram p;
    p.buffers = {{f, d}, {f, d}, {f, d}, {f, d}, {f, d}, {f, d}};  // x, w, b, h, t, y
    tgl_layer_norm_params np{sizeof(tgl_layer_norm_params), 1, 1e-5f, 0};
    const ProgramTensor absent{-1, f, {}, {}, 0};
    p.ops = {ProgramOp{TGL_OP_LAYER_NORM, {ProgramTensor{0, f, s, {}, 0}, absent, absent}, ProgramTensor{3, f, s, {}, 0}, params_bytes(np)},
             ProgramOp{TGL_OP_MUL, {ProgramTensor{3, f, s, {}, 0}, ProgramTensor{1, f, {d}, {}, 0}}, ProgramTensor{4, f, s, {}, 0}, {}},
             ProgramOp{TGL_OP_ADD, {ProgramTensor{4, f, s, {}, 0}, ProgramTensor{2, f, {d}, {}, 0}}, ProgramTensor{5, f, s, {}, 0}, {}}};
    const char* limits = std::getenv("TGL_GLES_LIMITS");
    if (limits && std::string(limits) == "minimum")
        GTEST_SKIP() << "under the minimum limits the chunks' statistics and the chain's views exceed 4 storage blocks: "
                        "nothing fuses (the unfused norm: NormDiff.LoopBudgetLongRow)";
    ProgramDevice ref(Role::Reference, p), direct(Role::Subject, p), graph(Role::Subject, p);
    const long long before = graph.property("graph.fused_ops");
    const tgl_graph g = graph.record();
    if (before >= 0) {
        EXPECT_EQ(graph.property("graph.fused_ops") - before, 3) << "the norm and its chain in one kernel";
    }
    const auto data = p.random_contents(rng_, -1, 1);
    ref.upload(data);
    direct.upload(data);
    graph.upload(data);
    ref.run_direct();
    direct.run_direct();
    graph.replay(g);
    const auto got = graph.read_all();
    ASSERT_EQ(first_difference(p, got, direct.read_all()), "") << "replay vs op by op";
    const auto want = ref.read_all();
    for (size_t b = 3; b < got.size(); ++b) {
        const std::vector<double> x = decode_values(f, got[b]), w = decode_values(f, want[b]);
        for (size_t e = 0; e < x.size(); ++e)
            ASSERT_NEAR(x[e], w[e], 1e-4 + 1e-4 * std::fabs(w[e])) << "buffer " << b << ", element " << e;
    }
    EXPECT_EQ(graph.api.graph_destroy(graph.h, g), TGL_OK);
}

}  // namespace
}  // namespace diff
