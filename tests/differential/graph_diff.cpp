// ABI 1.2 graphs: a random sequence of dependent ops (elementwise, in place or not, matmul, a sum
// over an axis), recorded once on the subject and replayed with new data each round, against the
// reference running the same ops one by one with the same data.
#include "diff.h"

#include <cmath>

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

}  // namespace
}  // namespace diff
