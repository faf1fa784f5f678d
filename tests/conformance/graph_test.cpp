// ABI 1.2 graphs (plugin_api.h, graph_begin ... graph_destroy): recording, replay with new data,
// the handle rules, buffers freed while a graph holds them, device close, threads.
#include "common.h"

#include <tensorgl/tensorgl.hpp>

#include <cstring>
#include <thread>

namespace conf {
namespace {

class GraphTest : public ConformanceTest {};

// A device of its own (recording state is per device), raw API calls, f32 buffers.
struct GDevice {
    const tgl_plugin_api& api = plug().api();
    tgl_device h = 0;
    GDevice() {
        if (api.device_open(0, &h) != TGL_OK) throw Failure("device_open: " + plug().last_error());
    }
    ~GDevice() {
        if (h) api.device_close(h);
    }
    tgl_buffer alloc(size_t n) {
        tgl_buffer b = 0;
        if (api.buffer_alloc(h, n * 4, &b) != TGL_OK) throw Failure("buffer_alloc: " + plug().last_error());
        return b;
    }
    void upload(tgl_buffer b, const std::vector<float>& v) {
        if (api.buffer_upload(h, b, 0, v.data(), v.size() * 4) != TGL_OK)
            throw Failure("buffer_upload: " + plug().last_error());
    }
    tgl_buffer with(const std::vector<float>& v) {
        tgl_buffer b = alloc(v.size());
        upload(b, v);
        return b;
    }
    std::vector<float> read(tgl_buffer b, size_t n) {
        std::vector<float> v(n);
        tgl_status s = api.buffer_download(h, b, 0, v.data(), n * 4);
        if (s != TGL_OK) throw Failure(std::string("buffer_download: ") + tgl_status_name(s) + ": " + plug().last_error());
        return v;
    }
    static tgl_tensor t(tgl_buffer b, int64_t n, tgl_dtype dt = TGL_DTYPE_F32) {
        return tgl_tensor_contiguous(b, 0, dt, 1, &n);
    }
    // y = a op b over n floats.
    tgl_status binary(tgl_op op, tgl_buffer a, tgl_buffer b, tgl_buffer y, int64_t n) {
        tgl_tensor in[2] = {t(a, n), t(b, n)};
        tgl_tensor out = t(y, n);
        return api.run_op(h, op, nullptr, in, 2, &out, 1);
    }
    tgl_graph end() {
        tgl_graph g = 0;
        if (api.graph_end(h, &g) != TGL_OK) throw Failure("graph_end: " + plug().last_error());
        return g;
    }
};

std::vector<float> fvals(size_t n, float start, float step) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = start + step * float(i);
    return v;
}

// t = x + b; y = t * x: recorded once (nothing runs while recording), replayed with new x.
TEST_F(GraphTest, ReplayComputesWithTheNewData) {
    GDevice d;
    const size_t n = 300;
    tgl_buffer x = d.with(fvals(n, 1, 1)), b = d.with(fvals(n, 0.5f, 0)), t = d.with(std::vector<float>(n, -7));
    tgl_buffer y = d.with(std::vector<float>(n, -9));
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK) << plug().last_error();
    ASSERT_EQ(d.binary(TGL_OP_ADD, x, b, t, n), TGL_OK) << plug().last_error();
    ASSERT_EQ(d.binary(TGL_OP_MUL, t, x, y, n), TGL_OK) << plug().last_error();
    // Recorded, not run; a download while recording acts at once.
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, -9));
    EXPECT_EQ(d.read(t, n), std::vector<float>(n, -7));
    tgl_graph g = d.end();
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, -9));
    for (int round = 0; round < 3; ++round) {
        std::vector<float> xv = fvals(n, float(round * 10 - 4), 0.25f);
        d.upload(x, xv);
        ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
        std::vector<float> got = d.read(y, n), want(n);
        for (size_t i = 0; i < n; ++i) want[i] = (xv[i] + 0.5f) * xv[i];
        EXPECT_EQ(got, want) << "round " << round;
    }
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK) << plug().last_error();
}

// 200 dependent in-place adds y += x, replayed 3 times: y = y0 + 600 x (exact in f32).
TEST_F(GraphTest, RecordedChainOfDependentOps) {
    GDevice d;
    const size_t n = 1000;
    tgl_buffer x = d.with(std::vector<float>(n, 0.5f)), y = d.with(fvals(n, 0, 1));
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    for (int i = 0; i < 200; ++i) ASSERT_EQ(d.binary(TGL_OP_ADD, y, x, y, n), TGL_OK) << plug().last_error();
    tgl_graph g = d.end();
    for (int r = 0; r < 3; ++r) ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    std::vector<float> got = d.read(y, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], float(i) + 300.0f) << "element " << i;
    d.upload(x, std::vector<float>(n, -1.0f));  // new data
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK);
    got = d.read(y, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], float(i) + 100.0f) << "element " << i;
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

TEST_F(GraphTest, EmptyGraphIsValid) {
    GDevice d;
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    tgl_graph g = d.end();
    EXPECT_NE(g, 0u);
    EXPECT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    EXPECT_EQ(d.api.synchronize(d.h), TGL_OK);
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// Every misuse is an error naming what was wrong, and changes nothing.
TEST_F(GraphTest, BadCallsAreErrorsAndChangeNothing) {
    GDevice d, other;
    const size_t n = 64;
    tgl_buffer x = d.with(std::vector<float>(n, 1)), y = d.with(std::vector<float>(n, 0));
    const tgl_plugin_api& api = d.api;
    tgl_graph g = 0;
    EXPECT_TGL_ERROR(api.graph_end(d.h, &g), TGL_ERROR_INVALID_ARGUMENT, {"no graph is being recorded"});
    EXPECT_EQ(g, 0u);
    EXPECT_TGL_ERROR(api.graph_begin(0), TGL_ERROR_INVALID_HANDLE, {"device"});
    EXPECT_TGL_ERROR(api.graph_replay(d.h, 0), TGL_ERROR_INVALID_HANDLE, {"graph", "null"});
    EXPECT_TGL_ERROR(api.graph_replay(d.h, 0x1234567812345678ull), TGL_ERROR_INVALID_HANDLE, {"graph"});
    EXPECT_TGL_ERROR(api.graph_replay(d.h, x), TGL_ERROR_INVALID_HANDLE, {"not a graph handle"});  // a buffer

    ASSERT_EQ(api.graph_begin(d.h), TGL_OK);
    EXPECT_TGL_ERROR(api.graph_begin(d.h), TGL_ERROR_INVALID_ARGUMENT, {"already being recorded"});
    ASSERT_EQ(d.binary(TGL_OP_ADD, y, x, y, n), TGL_OK);
    EXPECT_TGL_ERROR(api.graph_end(d.h, nullptr), TGL_ERROR_NULL_POINTER, {"out"});  // the recording stays open
    g = d.end();
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 0));

    // Replay while recording: refused, nothing queued (and nothing recorded).
    ASSERT_EQ(api.graph_begin(d.h), TGL_OK);
    EXPECT_TGL_ERROR(api.graph_replay(d.h, g), TGL_ERROR_INVALID_ARGUMENT, {"while this device records"});
    tgl_graph empty = d.end();
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 0));
    ASSERT_EQ(api.graph_replay(d.h, empty), TGL_OK);  // the refused replay was not recorded either
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 0));

    // A graph of another device.
    EXPECT_TGL_ERROR(api.graph_replay(other.h, g), TGL_ERROR_INVALID_HANDLE, {"belongs to another device"});
    EXPECT_TGL_ERROR(api.graph_destroy(other.h, g), TGL_ERROR_INVALID_HANDLE, {"belongs to another device"});
    // Replay while another device records is fine.
    ASSERT_EQ(api.graph_begin(other.h), TGL_OK);
    ASSERT_EQ(api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 1));
    tgl_graph og = other.end();

    // Destroyed graphs.
    ASSERT_EQ(api.graph_destroy(d.h, g), TGL_OK);
    EXPECT_TGL_ERROR(api.graph_replay(d.h, g), TGL_ERROR_STALE_HANDLE, {"graph", "destroyed"});
    EXPECT_TGL_ERROR(api.graph_destroy(d.h, g), TGL_ERROR_STALE_HANDLE, {"double destroy"});
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 1));
    EXPECT_EQ(api.graph_destroy(d.h, empty), TGL_OK);
    EXPECT_EQ(api.graph_destroy(other.h, og), TGL_OK);
}

// A run_op that fails validation while recording returns its error, records nothing, and the
// recording goes on.
TEST_F(GraphTest, FailedRunOpRecordsNothing) {
    GDevice d;
    const size_t n = 32;
    tgl_buffer x = d.with(std::vector<float>(n, 2)), y = d.with(std::vector<float>(n, 0)), small = d.with(std::vector<float>(1, 7));
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    EXPECT_TGL_ERROR(d.binary(TGL_OP_ADD, y, x, small, n), TGL_ERROR_OUT_OF_BOUNDS, {"outputs[0]"});
    EXPECT_TGL_ERROR(d.api.run_op(d.h, tgl_op(99999), nullptr, nullptr, 0, nullptr, 0), TGL_ERROR_UNKNOWN_OP, {"99999"});
    ASSERT_EQ(d.binary(TGL_OP_ADD, y, x, y, n), TGL_OK) << plug().last_error();
    tgl_graph g = d.end();
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK);
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 2));  // one add: the failed calls left no trace
    EXPECT_EQ(d.read(small, 1), std::vector<float>(1, 7));  // the refused output was never written
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// Transfers and synchronize while recording act at once; only run_op is recorded.
TEST_F(GraphTest, TransfersWhileRecordingActAtOnce) {
    GDevice d;
    const size_t n = 48;
    tgl_buffer x = d.with(std::vector<float>(n, 1)), y = d.with(std::vector<float>(n, 0)), z = d.alloc(n);
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    d.upload(x, std::vector<float>(n, 3));
    const float five = 5;
    ASSERT_EQ(d.api.buffer_fill(d.h, z, 0, n * 4, &five, 4), TGL_OK);
    ASSERT_EQ(d.binary(TGL_OP_ADD, x, z, y, n), TGL_OK);  // recorded: y = x + z
    ASSERT_EQ(d.api.buffer_copy(d.h, x, 0, z, 0, n * 4), TGL_OK);  // at once: z = x = 3
    ASSERT_EQ(d.api.synchronize(d.h), TGL_OK);
    EXPECT_EQ(d.read(z, n), std::vector<float>(n, 3));
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 0));
    tgl_graph g = d.end();
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK);
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 6));  // not replayed: the fill and the copy
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// buffer_free of a graph's buffer: its handle dies, the memory lives on with the graph.
TEST_F(GraphTest, FreedBufferLivesWithTheGraph) {
    GDevice d;
    const size_t n = 100;
    tgl_buffer x = d.with(fvals(n, 1, 1)), t = d.alloc(n), y = d.with(std::vector<float>(n, 0));
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    ASSERT_EQ(d.binary(TGL_OP_ADD, x, x, t, n), TGL_OK);  // t = 2x (t is internal to the graph)
    ASSERT_EQ(d.binary(TGL_OP_ADD, y, t, y, n), TGL_OK);  // y += t
    tgl_graph g = d.end();
    ASSERT_EQ(d.api.buffer_free(d.h, t), TGL_OK) << plug().last_error();
    float one = 1;
    EXPECT_TGL_ERROR(d.api.buffer_upload(d.h, t, 0, &one, 4), TGL_ERROR_STALE_HANDLE, {"freed"});
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    d.upload(x, std::vector<float>(n, 10));
    ASSERT_EQ(d.api.buffer_free(d.h, x), TGL_OK);  // after the upload: the graph reads the 10s
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    std::vector<float> got = d.read(y, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], 2.0f * float(i + 1) + 20.0f) << "element " << i;
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// device_close with live graphs (and an open recording): OK; the graphs die with the device.
TEST_F(GraphTest, DeviceCloseDestroysItsGraphs) {
    const tgl_plugin_api& api = plug().api();
    tgl_graph g = 0;
    tgl_device h = 0;
    {
        GDevice d;
        const size_t n = 16;
        tgl_buffer x = d.with(std::vector<float>(n, 1)), y = d.with(std::vector<float>(n, 0));
        ASSERT_EQ(api.graph_begin(d.h), TGL_OK);
        ASSERT_EQ(d.binary(TGL_OP_ADD, y, x, y, n), TGL_OK);
        g = d.end();
        ASSERT_EQ(api.graph_replay(d.h, g), TGL_OK);
        ASSERT_EQ(api.graph_begin(d.h), TGL_OK);  // still recording at close
        ASSERT_EQ(d.binary(TGL_OP_ADD, y, x, y, n), TGL_OK);
        h = std::exchange(d.h, 0);
        EXPECT_EQ(api.device_close(h), TGL_OK) << plug().last_error();
    }
    EXPECT_TGL_ERROR(api.graph_replay(h, g), TGL_ERROR_STALE_HANDLE, {"device", "closed"});
    EXPECT_TGL_ERROR(api.graph_end(h, &g), TGL_ERROR_STALE_HANDLE, {"device", "closed"});
    GDevice d2;  // a new device never sees the old graph
    EXPECT_TGL_ERROR(api.graph_replay(d2.h, g), TGL_ERROR_STALE_HANDLE, {"graph", "destroyed"});
    // and starts without a recording
    EXPECT_TGL_ERROR(api.graph_end(d2.h, &g), TGL_ERROR_INVALID_ARGUMENT, {"no graph is being recorded"});
}

// An op that checks its data on the device (gather's index): each replay reports its own failure
// and a later replay with good data computes normally.
TEST_F(GraphTest, ReplayOfAnOpWithADeviceCheck) {
    GDevice d;
    tgl_buffer x = d.with({10, 20, 30, 40}), y = d.with({0, 0, 0});
    tgl_buffer idx = d.alloc(3);
    auto set_idx = [&](std::vector<int32_t> v) {
        ASSERT_EQ(d.api.buffer_upload(d.h, idx, 0, v.data(), 12), TGL_OK);
    };
    set_idx({3, 0, 2});
    const int64_t n4 = 4, n3 = 3;
    tgl_tensor in[2] = {tgl_tensor_contiguous(x, 0, TGL_DTYPE_F32, 1, &n4),
                        tgl_tensor_contiguous(idx, 0, TGL_DTYPE_I32, 1, &n3)};
    tgl_tensor out = tgl_tensor_contiguous(y, 0, TGL_DTYPE_F32, 1, &n3);
    tgl_axis_params a0{sizeof(tgl_axis_params), 0};
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    ASSERT_EQ(d.api.run_op(d.h, TGL_OP_GATHER, &a0, in, 2, &out, 1), TGL_OK) << plug().last_error();
    tgl_graph g = d.end();
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    EXPECT_EQ(d.read(y, 3), (std::vector<float>{40, 10, 30}));

    // A bad index, then good data again before anyone waits: the error is reported (by the
    // replay itself on a plugin that runs ops in the call, else at synchronize), and the second
    // replay computes.
    set_idx({1, 7, 0});
    tgl_status s = d.api.graph_replay(d.h, g);
    std::string msg = plug().last_error();
    set_idx({2, 2, 1});
    tgl_status s2 = d.api.graph_replay(d.h, g);
    EXPECT_EQ(s2, TGL_OK) << plug().last_error();
    if (s == TGL_OK) {
        s = d.api.synchronize(d.h);
        msg = plug().last_error();
    }
    EXPECT_TRUE(is_error(s, TGL_ERROR_INDEX_OUT_OF_RANGE, msg, {"7"}));
    EXPECT_EQ(d.api.synchronize(d.h), TGL_OK) << plug().last_error();  // reported once
    EXPECT_EQ(d.read(y, 3), (std::vector<float>{30, 30, 20}));
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// Ops that use the plugin's internal scratch memory (a long sum splits into partial sums): two in
// one graph, and direct ones between the replays, each with its own data.
TEST_F(GraphTest, OpsWithScratchMemoryReplay) {
    GDevice d;
    const int64_t n = int64_t(1) << 18;
    auto pattern = [&](int k) {
        std::vector<float> v(size_t(n), 0);
        for (int64_t i = 0; i < n; ++i) v[size_t(i)] = float((i * k) % 7);  // integer sums: exact
        return v;
    };
    auto exact_sum = [](const std::vector<float>& v) {
        double s = 0;
        for (float x : v) s += x;
        return float(s);
    };
    tgl_buffer a = d.alloc(size_t(n)), b = d.alloc(size_t(n)), c = d.alloc(size_t(n)), out = d.with({-1, -1, -1});
    tgl_reduce_params all{};
    all.struct_size = sizeof all;
    all.n_axes = 1;
    all.axes[0] = 0;
    auto sum = [&](tgl_buffer x, uint64_t slot) {
        tgl_tensor in = GDevice::t(x, n);
        tgl_tensor y = tgl_tensor_contiguous(out, slot * 4, TGL_DTYPE_F32, 0, nullptr);
        return d.api.run_op(d.h, TGL_OP_SUM, &all, &in, 1, &y, 1);
    };
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    ASSERT_EQ(sum(a, 0), TGL_OK) << plug().last_error();
    ASSERT_EQ(sum(b, 1), TGL_OK) << plug().last_error();
    tgl_graph g = d.end();
    for (int round = 1; round <= 3; ++round) {
        std::vector<float> va = pattern(round), vb = pattern(round + 3), vc = pattern(round + 1);
        d.upload(a, va);
        d.upload(b, vb);
        d.upload(c, vc);
        ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
        ASSERT_EQ(sum(c, 2), TGL_OK) << plug().last_error();  // direct, after the replay
        std::vector<float> got = d.read(out, 3);
        EXPECT_EQ(got, (std::vector<float>{exact_sum(va), exact_sum(vb), exact_sum(vc)})) << "round " << round;
    }
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// Recording is per device: run_op from another thread during the recording is recorded too.
TEST_F(GraphTest, RunOpFromAnotherThreadIsRecorded) {
    GDevice d;
    const size_t n = 64;
    tgl_buffer x = d.with(std::vector<float>(n, 1)), y = d.with(std::vector<float>(n, 0));
    tgl_buffer z = d.with(std::vector<float>(n, 0));
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    tgl_status from_thread = TGL_ERROR_INTERNAL;
    std::thread th([&] {
        for (int i = 0; i < 4; ++i) {
            from_thread = d.binary(TGL_OP_ADD, y, x, y, n);
            if (from_thread != TGL_OK) return;
        }
    });
    for (int i = 0; i < 3; ++i) ASSERT_EQ(d.binary(TGL_OP_ADD, z, x, z, n), TGL_OK);
    th.join();
    ASSERT_EQ(from_thread, TGL_OK);
    tgl_graph g = d.end();
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 0));
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK);
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 4));
    EXPECT_EQ(d.read(z, n), std::vector<float>(n, 3));
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// The C++ wrapper's tgl::Graph: record, replay, destroyed with the object; a throwing body
// leaves no recording open.
TEST_F(GraphTest, CppWrapperGraph) {
    tgl::Plugin p(plug().path());
    tgl::Device dev(p);
    const size_t n = 8;
    tgl::Buffer x = tgl::Buffer::from(dev, std::vector<float>(n, 2)), y = tgl::Buffer::from(dev, std::vector<float>(n, 1));
    auto add = [&] {
        tgl_tensor in[2] = {tgl::tensor<float>(y, {int64_t(n)}), tgl::tensor<float>(x, {int64_t(n)})};
        tgl_tensor out = tgl::tensor<float>(y, {int64_t(n)});
        tgl::detail::check(dev.api(), dev.api().run_op(dev.handle(), TGL_OP_ADD, nullptr, in, 2, &out, 1), "run_op");
    };
    tgl::Graph g = tgl::Graph::record(dev, [&] { add(); add(); });
    EXPECT_EQ(y.download<float>(), std::vector<float>(n, 1));
    g.replay();
    g.replay();
    EXPECT_EQ(y.download<float>(), std::vector<float>(n, 9));
    EXPECT_THROW(tgl::Graph::record(dev, [&] { add(); throw std::runtime_error("body failed"); }), std::runtime_error);
    EXPECT_EQ(y.download<float>(), std::vector<float>(n, 9));
    tgl::Graph::begin(dev);  // no recording was left open by the throwing body
    tgl::Graph e = tgl::Graph::end(dev);
    e.replay();
    tgl_graph h = g.handle();
    g.destroy();
    EXPECT_EQ(dev.api().graph_replay(dev.handle(), h), TGL_ERROR_STALE_HANDLE);
}

}  // namespace
}  // namespace conf
