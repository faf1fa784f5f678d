// ABI 1.2 graphs (plugin_api.h, graph_begin ... graph_destroy): recording, replay with new data,
// the handle rules, buffers freed while a graph holds them, device close, threads. ABI 1.3
// graph_replay_with: a replay with new params fields and swapped buffers equals the same ops run
// directly; bad bindings are refused with nothing queued.
#include "common.h"
#include "tgl_test/op_program.h"

#include <tensorgl/tensorgl.hpp>

#include <cstddef>
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
    tgl_axis_params a0{sizeof(tgl_axis_params), 0, 0};
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

// rope with a cos/sin cache checks its positions on the device (GLES) like an index op: replays with
// new positions, a bad one reported and writing nothing, then good ones again.
TEST_F(GraphTest, ReplayOfRopeWithACosSinCache) {
    GDevice d;
    // x (2 rows, D = 2); cache rows: angle 0, pi/2, pi as exact (cos, sin) values.
    tgl_buffer x = d.with({1, 2, 3, 4}), y = d.with({0, 0, 0, 0}), cs = d.with({1, 0, -1}), sn = d.with({0, 1, 0});
    tgl_buffer pos = d.alloc(2);
    auto set_pos = [&](std::vector<int32_t> v) { ASSERT_EQ(d.api.buffer_upload(d.h, pos, 0, v.data(), 8), TGL_OK); };
    set_pos({1, 2});
    const int64_t xs[2] = {2, 2}, n2 = 2, cache[2] = {3, 1};
    tgl_tensor in[5] = {tgl_tensor_contiguous(x, 0, TGL_DTYPE_F32, 2, xs), tgl_tensor_contiguous(pos, 0, TGL_DTYPE_I32, 1, &n2),
                        tgl_tensor_contiguous(0, 0, TGL_DTYPE_F32, 1, &n2),  // freq_factors absent (buffer 0)
                        tgl_tensor_contiguous(cs, 0, TGL_DTYPE_F32, 2, cache), tgl_tensor_contiguous(sn, 0, TGL_DTYPE_F32, 2, cache)};
    tgl_tensor out = tgl_tensor_contiguous(y, 0, TGL_DTYPE_F32, 2, xs);
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    ASSERT_EQ(d.api.run_op(d.h, TGL_OP_ROPE, nullptr, in, 5, &out, 1), TGL_OK) << plug().last_error();
    tgl_graph g = d.end();
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    EXPECT_EQ(d.read(y, 4), (std::vector<float>{-2, 1, -3, -4}));
    set_pos({0, 5});
    tgl_status s = d.api.graph_replay(d.h, g);
    std::string msg = plug().last_error();
    if (s == TGL_OK) {
        s = d.api.synchronize(d.h);
        msg = plug().last_error();
    }
    EXPECT_TRUE(is_error(s, TGL_ERROR_INDEX_OUT_OF_RANGE, msg, {"rope", "holds 5", "position 1", "[0, 3)"}));
    EXPECT_EQ(d.read(y, 4), (std::vector<float>{-2, 1, -3, -4}));  // nothing written
    set_pos({0, 1});
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    EXPECT_EQ(d.read(y, 4), (std::vector<float>{1, 2, -4, 3}));
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

// ----- ABI 1.3: graph_replay_with -------------------------------------------------------------

tgl_graph_binding operand_binding(uint32_t kind, uint32_t op, uint32_t slot, tgl_buffer b, uint64_t offset = 0) {
    return kind == TGL_GRAPH_BIND_OUTPUT ? tgl::Graph::output(op, slot, b, offset) : tgl::Graph::input(op, slot, b, offset);
}

template <class V>
tgl_graph_binding params_binding(uint32_t op, size_t offset, V value) {
    return tgl::Graph::param_bytes(op, offset, &value, uint32_t(sizeof value));
}

// One decode-like step, recorded once: h = x * w (mul), h = leaky_relu(h, slope), set_rows of h into
// a cache at `pos` (in place), token = sample(cache rows, seed). Replayed with another x, pos, slope
// and seed through bindings, it equals the same four ops run directly with those arguments; the next
// plain replay runs the recorded arguments again.
TEST_F(GraphTest, ReplayWithNewInputsEqualsDirectRun) {
    ASSERT_GE(tgl_plugin_abi_minor(plug().raw()), 3u);  // graph_replay_with
    GDevice d;
    const int64_t rows = 16, width = 40;
    const size_t n = size_t(width);
    auto rand_vec = [&](size_t k) {
        std::vector<float> v(k);
        for (float& f : v) f = float(rng_.uniform(-2, 2));
        return v;
    };
    const std::vector<float> w = rand_vec(n), x1 = rand_vec(n), x2 = rand_vec(n), cache0 = rand_vec(size_t(rows * width));
    tgl_buffer wb = d.with(w), xb1 = d.with(x1), xb2 = d.with(x2), h = d.alloc(n);
    tgl_buffer cache = d.with(cache0);
    auto int_buffer = [&](int32_t v) {
        tgl_buffer b = d.alloc(1);
        EXPECT_EQ(d.api.buffer_upload(d.h, b, 0, &v, 4), TGL_OK);
        return b;
    };
    tgl_buffer pos3 = int_buffer(3), pos11 = int_buffer(11);
    auto record_step = [&](tgl_buffer x, tgl_buffer pos, tgl_buffer c, tgl_buffer token, float slope, uint64_t seed_value) {
        EXPECT_EQ(d.binary(TGL_OP_MUL, x, wb, h, width), TGL_OK) << plug().last_error();
        tgl_leaky_relu_params lp{sizeof lp, slope};
        tgl_tensor ht = GDevice::t(h, width);
        EXPECT_EQ(d.api.run_op(d.h, TGL_OP_LEAKY_RELU, &lp, &ht, 1, &ht, 1), TGL_OK) << plug().last_error();
        const int64_t cs[2] = {rows, width}, rs[2] = {1, width}, one = 1;
        tgl_tensor ins[3] = {tgl_tensor_contiguous(c, 0, TGL_DTYPE_F32, 2, cs), tgl_tensor_contiguous(pos, 0, TGL_DTYPE_I32, 1, &one),
                             tgl_tensor_contiguous(h, 0, TGL_DTYPE_F32, 2, rs)};
        tgl_axis_params ap{sizeof ap, 0, 0};
        EXPECT_EQ(d.api.run_op(d.h, TGL_OP_SET_ROWS, &ap, ins, 3, &ins[0], 1), TGL_OK) << plug().last_error();
        tgl_sample_params sp{sizeof sp, 0, 1.0f, 1.0f, seed_value, 0};
        const int64_t logits[2] = {2, rows * width / 2};
        tgl_tensor lt = tgl_tensor_contiguous(c, 0, TGL_DTYPE_F32, 2, logits), tt = tgl_tensor_contiguous(token, 0, TGL_DTYPE_I32, 1, &one);
        tt.shape[0] = 2;
        EXPECT_EQ(d.api.run_op(d.h, TGL_OP_SAMPLE, &sp, &lt, 1, &tt, 1), TGL_OK) << plug().last_error();
    };
    tgl_buffer tok2 = d.alloc(2), tok_direct = d.alloc(2);
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    record_step(xb1, pos3, cache, tok2, 0.25f, 1);
    tgl_graph g = d.end();
    EXPECT_EQ(d.read(cache, cache0.size()), cache0);  // recorded, not run

    const std::vector<tgl_graph_binding> bindings = {
        operand_binding(TGL_GRAPH_BIND_INPUT, 0, 0, xb2),                                   // x
        params_binding(1, offsetof(tgl_leaky_relu_params, negative_slope), 0.5f),          // slope
        operand_binding(TGL_GRAPH_BIND_INPUT, 2, 1, pos11),                                 // position
        params_binding(3, offsetof(tgl_sample_params, seed), uint64_t(0x9e3779b97f4a7c15ull)),  // seed
    };
    ASSERT_EQ(d.api.graph_replay_with(d.h, g, bindings.data(), uint32_t(bindings.size())), TGL_OK) << plug().last_error();
    const std::vector<float> cache_replay = d.read(cache, cache0.size()), tok_replay = d.read(tok2, 2);

    // The same ops run directly on a second cache with the bound arguments.
    tgl_buffer cache_direct = d.with(cache0);
    record_step(xb2, pos11, cache_direct, tok_direct, 0.5f, 0x9e3779b97f4a7c15ull);
    EXPECT_EQ(cache_replay, d.read(cache_direct, cache0.size()));
    EXPECT_EQ(tok_replay, d.read(tok_direct, 2));  // (i32 bits compared as floats: equal bits)
    // Only row 11 changed, to leaky_relu(x2 * w, 0.5).
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < width; ++j) {
            const float v = x2[size_t(j)] * w[size_t(j)], want = r == 11 ? (v >= 0 ? v : 0.5f * v) : cache0[size_t(r * width + j)];
            ASSERT_EQ(cache_replay[size_t(r * width + j)], want) << "row " << r << " column " << j;
        }

    // The graph itself is unchanged: a plain replay writes row 3 from x1 with slope 0.25.
    ASSERT_EQ(d.api.graph_replay(d.h, g), TGL_OK) << plug().last_error();
    const std::vector<float> after = d.read(cache, cache0.size());
    for (int64_t j = 0; j < width; ++j) {
        const float v = x1[size_t(j)] * w[size_t(j)];
        ASSERT_EQ(after[size_t(3 * width + j)], v >= 0 ? v : 0.25f * v) << "column " << j;
        ASSERT_EQ(after[size_t(11 * width + j)], cache_replay[size_t(11 * width + j)]) << "column " << j;
    }
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// A binding to an output buffer freed after recording is refused (the recorded one stays valid);
// a freed buffer the graph holds and that is not bound still works.
TEST_F(GraphTest, ReplayWithKeepsRecordedBuffersAlive) {
    ASSERT_GE(tgl_plugin_abi_minor(plug().raw()), 3u);  // graph_replay_with
    GDevice d;
    const size_t n = 20;
    tgl_buffer x = d.with(fvals(n, 1, 1)), b = d.with(std::vector<float>(n, 2)), y = d.with(std::vector<float>(n, 0));
    tgl_buffer y2 = d.with(std::vector<float>(n, 0)), gone = d.with(std::vector<float>(n, 0));
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    ASSERT_EQ(d.binary(TGL_OP_MUL, x, b, y, n), TGL_OK);
    tgl_graph g = d.end();
    ASSERT_EQ(d.api.buffer_free(d.h, b), TGL_OK);  // held by the graph
    ASSERT_EQ(d.api.buffer_free(d.h, gone), TGL_OK);
    tgl_graph_binding to_gone = operand_binding(TGL_GRAPH_BIND_OUTPUT, 0, 0, gone);
    EXPECT_TGL_ERROR(d.api.graph_replay_with(d.h, g, &to_gone, 1), TGL_ERROR_STALE_HANDLE, {"bindings[0].buffer"});
    tgl_graph_binding to_y2 = operand_binding(TGL_GRAPH_BIND_OUTPUT, 0, 0, y2);
    ASSERT_EQ(d.api.graph_replay_with(d.h, g, &to_y2, 1), TGL_OK) << plug().last_error();
    std::vector<float> want = fvals(n, 2, 2);
    EXPECT_EQ(d.read(y2, n), want);
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 0));
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
}

// Every bad binding is refused naming it, and nothing of the replay is queued (also the ops before
// the bad one); the graph still replays afterwards.
TEST_F(GraphTest, BadBindingsAreRefusedAndChangeNothing) {
    ASSERT_GE(tgl_plugin_abi_minor(plug().raw()), 3u);  // graph_replay_with
    GDevice d, other;
    const size_t n = 24;
    tgl_buffer x = d.with(std::vector<float>(n + 8, 1)), y = d.with(std::vector<float>(n, 0)), small = d.alloc(4);  // x: room for a shifted view
    tgl_buffer foreign = other.alloc(n);
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    ASSERT_EQ(d.binary(TGL_OP_ADD, y, x, y, n), TGL_OK);  // op 0: y += x
    tgl_sample_params sp{sizeof sp, 0, 1.0f, 1.0f, 5, 0};
    const int64_t ls[2] = {1, int64_t(n)}, one = 1;
    tgl_tensor lt = tgl_tensor_contiguous(x, 0, TGL_DTYPE_F32, 2, ls), tt = tgl_tensor_contiguous(small, 0, TGL_DTYPE_I32, 1, &one);
    ASSERT_EQ(d.api.run_op(d.h, TGL_OP_SAMPLE, &sp, &lt, 1, &tt, 1), TGL_OK) << plug().last_error();  // op 1
    ASSERT_EQ(d.binary(TGL_OP_ADD, y, x, y, n), TGL_OK);  // op 2, NULL params
    tgl_graph g = d.end();

    struct Bad {
        const char* what;
        tgl_graph_binding b;
        tgl_status status;
        std::vector<std::string> tokens;
    };
    auto sized = [](tgl_graph_binding b, uint32_t size) { b.struct_size = size; return b; };
    auto kind = [](tgl_graph_binding b, uint32_t k) { b.kind = k; return b; };
    auto reserved = [](tgl_graph_binding b) { b.reserved = 1; return b; };
    auto vsize = [](tgl_graph_binding b, uint32_t s) { b.value_size = s; return b; };
    const tgl_graph_binding in0 = operand_binding(TGL_GRAPH_BIND_INPUT, 0, 1, x);
    const std::vector<Bad> bad = {
        {"struct_size", sized(in0, 40), TGL_ERROR_PARAMS_SIZE, {"bindings[1].struct_size", "40", "48"}},
        {"op_index", operand_binding(TGL_GRAPH_BIND_INPUT, 3, 0, x), TGL_ERROR_INVALID_ARGUMENT, {"op_index", "3", "3 ops"}},
        {"kind", kind(in0, 7), TGL_ERROR_INVALID_ARGUMENT, {"kind", "7"}},
        {"reserved", reserved(in0), TGL_ERROR_INVALID_ARGUMENT, {"reserved"}},
        {"input slot", operand_binding(TGL_GRAPH_BIND_INPUT, 0, 2, x), TGL_ERROR_INVALID_ARGUMENT, {"slot", "2 inputs"}},
        {"output slot", operand_binding(TGL_GRAPH_BIND_OUTPUT, 1, 1, x), TGL_ERROR_INVALID_ARGUMENT, {"slot", "1 outputs"}},
        {"operand value_size", vsize(in0, 4), TGL_ERROR_INVALID_ARGUMENT, {"value_size", "operand"}},
        {"handle", operand_binding(TGL_GRAPH_BIND_INPUT, 0, 1, 0x1234567812345678ull), TGL_ERROR_INVALID_HANDLE, {"bindings[1].buffer"}},
        {"foreign buffer", operand_binding(TGL_GRAPH_BIND_INPUT, 0, 1, foreign), TGL_ERROR_INVALID_HANDLE, {"another device"}},
        {"view outside the buffer", operand_binding(TGL_GRAPH_BIND_INPUT, 0, 1, small), TGL_ERROR_OUT_OF_BOUNDS,
         {"op 0 of the graph", "add", "inputs[1]"}},
        {"offset outside the buffer", operand_binding(TGL_GRAPH_BIND_INPUT, 0, 1, x, 40), TGL_ERROR_OUT_OF_BOUNDS, {"op 0", "inputs[1]"}},
        {"aliasing", operand_binding(TGL_GRAPH_BIND_OUTPUT, 0, 0, x, 4), TGL_ERROR_INVALID_ARGUMENT, {"op 0", "overlaps"}},
        {"params of NULL params", params_binding(2, 4, uint32_t(1)), TGL_ERROR_INVALID_ARGUMENT, {"op 2", "NULL params"}},
        {"params struct_size", params_binding(1, 0, uint32_t(8)), TGL_ERROR_INVALID_ARGUMENT, {"[0, 4)", "struct_size"}},
        {"params past the end", params_binding(1, offsetof(tgl_sample_params, offset) + 4, uint64_t(1)),
         TGL_ERROR_INVALID_ARGUMENT, {"[28, 36)", "32-byte"}},
        {"value_size 0", vsize(params_binding(1, 8, 1.0f), 0), TGL_ERROR_INVALID_ARGUMENT, {"value_size", "1 .. 8"}},
        {"value_size 9", vsize(params_binding(1, 8, 1.0f), 9), TGL_ERROR_INVALID_ARGUMENT, {"value_size", "1 .. 8"}},
        {"bad params value", params_binding(1, offsetof(tgl_sample_params, temperature), -1.0f), TGL_ERROR_INVALID_ARGUMENT,
         {"op 1 of the graph", "sample", "temperature"}},
    };
    for (const Bad& c : bad) {
        SCOPED_TRACE(c.what);
        // A good binding of op 0 first: it must not be applied either.
        const tgl_graph_binding pair[2] = {operand_binding(TGL_GRAPH_BIND_INPUT, 0, 0, y), c.b};
        EXPECT_TGL_ERROR(d.api.graph_replay_with(d.h, g, pair, 2), c.status, c.tokens);
        EXPECT_EQ(d.read(y, n), std::vector<float>(n, 0));
    }
    // Two bindings of one operand, or of overlapping params bytes.
    const tgl_graph_binding twice[2] = {in0, in0};
    EXPECT_TGL_ERROR(d.api.graph_replay_with(d.h, g, twice, 2), TGL_ERROR_INVALID_ARGUMENT, {"bindings[0] and bindings[1]"});
    const tgl_graph_binding overlap[2] = {params_binding(1, offsetof(tgl_sample_params, seed), uint64_t(1)),
                                          params_binding(1, offsetof(tgl_sample_params, seed) + 4, uint32_t(1))};
    EXPECT_TGL_ERROR(d.api.graph_replay_with(d.h, g, overlap, 2), TGL_ERROR_INVALID_ARGUMENT, {"params bytes"});
    EXPECT_TGL_ERROR(d.api.graph_replay_with(d.h, g, nullptr, 1), TGL_ERROR_NULL_POINTER, {"bindings"});
    EXPECT_TGL_ERROR(d.api.graph_replay_with(other.h, g, &in0, 1), TGL_ERROR_INVALID_HANDLE, {"another device"});
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    EXPECT_TGL_ERROR(d.api.graph_replay_with(d.h, g, &in0, 1), TGL_ERROR_INVALID_ARGUMENT, {"while this device records"});
    tgl_graph empty = d.end();
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 0));
    // Nothing was queued by any of them; n_bindings 0 is a plain replay.
    ASSERT_EQ(d.api.graph_replay_with(d.h, g, nullptr, 0), TGL_OK) << plug().last_error();
    EXPECT_EQ(d.read(y, n), std::vector<float>(n, 2));
    EXPECT_EQ(d.api.graph_destroy(d.h, g), TGL_OK);
    EXPECT_EQ(d.api.graph_destroy(d.h, empty), TGL_OK);
}

// The C++ wrapper's replay with bindings (tgl::Graph::input / param).
TEST_F(GraphTest, CppWrapperReplayWithBindings) {
    ASSERT_GE(tgl_plugin_abi_minor(plug().raw()), 3u);  // graph_replay_with
    GDevice d;
    const size_t n = 10;
    tgl_buffer x = d.with(fvals(n, -5, 1)), x2 = d.with(fvals(n, 5, -1)), y = d.alloc(n);
    ASSERT_EQ(d.api.graph_begin(d.h), TGL_OK);
    tgl_leaky_relu_params lp{sizeof lp, 0.5f};
    tgl_tensor xt = GDevice::t(x, n), yt = GDevice::t(y, n);
    ASSERT_EQ(d.api.run_op(d.h, TGL_OP_LEAKY_RELU, &lp, &xt, 1, &yt, 1), TGL_OK);
    tgl_graph h = d.end();
    const std::vector<tgl_graph_binding> b = {tgl::Graph::input(0, 0, x2),
                                              tgl::Graph::param(0, &tgl_leaky_relu_params::negative_slope, 0.125f)};
    ASSERT_EQ(d.api.graph_replay_with(d.h, h, b.data(), uint32_t(b.size())), TGL_OK) << plug().last_error();
    std::vector<float> got = d.read(y, n);
    for (size_t i = 0; i < n; ++i) {
        const float v = 5.0f - float(i);
        EXPECT_EQ(got[i], v >= 0 ? v : 0.125f * v) << i;
    }
    EXPECT_EQ(d.api.graph_destroy(d.h, h), TGL_OK);
}

// ---- Fusion inside recorded graphs (docs/graphs.md): whatever a plugin fuses, every buffer after
// a replay, intermediates included, is bit for bit what the ops run one by one give on the same
// device, and what a replay gives with fusion off (TGL_GRAPH_FUSION=0). GLES reports the ops it
// fused as the device counter graph.fused_ops (-1 where a plugin has none).

// A float tensor of buffer b: contiguous, or with the given strides and element offset.
ProgramTensor ft(int b, tgl_dtype dt, std::vector<int64_t> shape, std::vector<int64_t> strides = {}, int64_t offset = 0) {
    return ProgramTensor{b, dt, std::move(shape), std::move(strides), offset};
}

ProgramOp op1(tgl_op op, ProgramTensor x, ProgramTensor y, std::vector<uint8_t> params = {}) {
    return ProgramOp{op, {std::move(x)}, std::move(y), std::move(params)};
}

ProgramOp op2(tgl_op op, ProgramTensor a, ProgramTensor b, ProgramTensor y) {
    return ProgramOp{op, {std::move(a), std::move(b)}, std::move(y), {}};
}

// Runs p op by op, as a graph replayed twice (new data the second time) and as a graph on a device
// opened with TGL_GRAPH_FUSION=0, and expects every buffer bit-identical each time. Returns how
// many ops the plugin fused at graph_end (graph.fused_ops), or -1.
long long expect_graph_bit_identical(const OpProgram& p, Rng& rng) {
    ProgramDevice direct(Role::Plugin, p), graph(Role::Plugin, p), unfused(Role::Plugin, p, "TGL_GRAPH_FUSION=0");
    const long long before = graph.property("graph.fused_ops");
    const tgl_graph g = graph.record();
    const long long fused = before < 0 ? -1 : graph.property("graph.fused_ops") - before;
    const long long before_off = unfused.property("graph.fused_ops");
    const tgl_graph g_off = unfused.record();
    if (before_off >= 0) {
        EXPECT_EQ(unfused.property("graph.fused_ops"), before_off) << "TGL_GRAPH_FUSION=0 still fused";
    }
    for (int round = 0; round < 2; ++round) {
        const auto data = p.random_contents(rng);
        direct.upload(data);
        graph.upload(data);
        unfused.upload(data);
        direct.run_direct();
        graph.replay(g);
        unfused.replay(g_off);
        const auto want = direct.read_all();
        EXPECT_EQ(first_difference(p, graph.read_all(), want), "") << "round " << round << ": graph replay vs op by op";
        EXPECT_EQ(first_difference(p, unfused.read_all(), want), "") << "round " << round << ": TGL_GRAPH_FUSION=0";
    }
    EXPECT_EQ(graph.api.graph_destroy(graph.h, g), TGL_OK);
    EXPECT_EQ(unfused.api.graph_destroy(unfused.h, g_off), TGL_OK);
    return fused;
}

// silu(gate) * up (and gelu(gate) * up) over 3 x 1001 rows: the gated MLP's elementwise part, in
// f32 and f16; the intermediate silu(gate) is compared too (as every buffer).
TEST_F(GraphTest, FusedGatedMlpIsBitIdentical) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        for (bool gelu : {false, true}) {
            SCOPED_TRACE(dtype_name(dt) + (gelu ? " gelu" : " silu"));
            const std::vector<int64_t> s = {3, 1001};
            OpProgram p;
            p.buffers = {{dt, 3003}, {dt, 3003}, {dt, 3003}, {dt, 3003}};  // gate, up, t, h
            tgl_gelu_params gp{sizeof gp, TGL_GELU_TANH};
            p.ops = {gelu ? op1(TGL_OP_GELU, ft(0, dt, s), ft(2, dt, s), params_bytes(gp)) : op1(TGL_OP_SILU, ft(0, dt, s), ft(2, dt, s)),
                     op2(TGL_OP_MUL, ft(2, dt, s), ft(1, dt, s), ft(3, dt, s))};
            const long long fused = expect_graph_bit_identical(p, rng_);
            if (fused >= 0) {  // 4 operands: within the 4 storage blocks of the minimum limits
                EXPECT_EQ(fused, 2);
            }
        }
    }
}

// A longer chain with broadcasting (a row bias, a per-row scale, a scalar), scalar parameters,
// strided and offset views, odd sizes and an in-place last op.
TEST_F(GraphTest, FusedBroadcastStridedChainIsBitIdentical) {
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16}) {
        SCOPED_TRACE(dtype_name(dt));
        OpProgram p;
        // 0: x, read transposed (37 x 5 storage); 1: bias (37); 2: scale (5 x 1); 3: t1 at an odd
        // offset; 4: t2 with a padded row stride; 5: y; 6: a 1-element scalar.
        p.buffers = {{dt, 185}, {dt, 37}, {dt, 5}, {dt, 200}, {dt, 5 * 40}, {dt, 185}, {dt, 1}};
        const std::vector<int64_t> s = {5, 37};
        tgl_leaky_relu_params lp{sizeof lp, 0.125f};
        tgl_clamp_params cp{};
        cp.struct_size = sizeof cp;
        cp.min = -1.5f;
        cp.max = 1.25f;
        p.ops = {op2(TGL_OP_ADD, ft(0, dt, s, {1, 5}), ft(1, dt, {37}), ft(3, dt, s, {}, 3)),
                 op1(TGL_OP_LEAKY_RELU, ft(3, dt, s, {}, 3), ft(4, dt, s, {40, 1}), params_bytes(lp)),
                 op2(TGL_OP_MUL, ft(4, dt, s, {40, 1}), ft(2, dt, {5, 1}), ft(5, dt, s)),
                 op2(TGL_OP_SUB, ft(5, dt, s), ft(6, dt, {}), ft(5, dt, s)),
                 op1(TGL_OP_CLAMP, ft(5, dt, s), ft(5, dt, s), params_bytes(cp)),
                 op1(TGL_OP_TANH, ft(5, dt, s), ft(5, dt, s))};
        const long long fused = expect_graph_bit_identical(p, rng_);
        if (fused >= 0) {  // split in two chains where only 4 storage blocks are allowed
            EXPECT_GE(fused, 4);
        }
    }
}

// Chains broken by ops that are not fusable (a sum over rows), by an op that does not read the
// chain's result, and by a view that overlaps an intermediate without being it.
TEST_F(GraphTest, FusionStopsAtBreaksAndOverlaps) {
    const tgl_dtype f = TGL_DTYPE_F32;
    const std::vector<int64_t> s = {4, 33};
    OpProgram p;
    p.buffers = {{f, 132}, {f, 132}, {f, 132}, {f, 4}, {f, 140}, {f, 132}, {f, 132}};
    tgl_reduce_params rp = reduce_params({1}, false);
    p.ops = {op1(TGL_OP_SILU, ft(0, f, s), ft(1, f, s)),
             ProgramOp{TGL_OP_SUM, {ft(1, f, s)}, ft(3, f, {4}), params_bytes(rp)},  // not fusable: silu alone
             op2(TGL_OP_MUL, ft(1, f, s), ft(2, f, s), ft(2, f, s)),                 // in place over an input
             op1(TGL_OP_EXP, ft(2, f, s), ft(5, f, s)),                              // a chain of 2 with the mul
             op1(TGL_OP_NEG, ft(0, f, s), ft(4, f, s)),                              // reads no result: a new chain
             op1(TGL_OP_TANH, ft(4, f, s), ft(6, f, s)),                             // a chain of 2 with the neg
             op2(TGL_OP_ADD, ft(6, f, s), ft(4, f, s, {}, 1), ft(6, f, s))};         // neg's output shifted: alone
    const long long fused = expect_graph_bit_identical(p, rng_);
    if (fused >= 0) {
        EXPECT_EQ(fused, 4);
    }
}

// Aliasing inside a chain: in-place ops, an op reading one intermediate twice, an intermediate
// overwritten by a later op of the chain, and an input of the chain overwritten by a later op.
TEST_F(GraphTest, FusedChainWithAliasingIsBitIdentical) {
    const tgl_dtype f = TGL_DTYPE_F16;
    const std::vector<int64_t> s = {257};
    OpProgram p;
    p.buffers = {{f, 257}, {f, 257}, {f, 257}};
    p.ops = {op1(TGL_OP_SIGMOID, ft(0, f, s), ft(1, f, s)),
             op2(TGL_OP_MUL, ft(1, f, s), ft(1, f, s), ft(2, f, s)),  // t * t
             op2(TGL_OP_ADD, ft(2, f, s), ft(0, f, s), ft(1, f, s)),  // overwrites the first intermediate
             op2(TGL_OP_SUB, ft(1, f, s), ft(2, f, s), ft(0, f, s)),  // overwrites the chain's input
             op1(TGL_OP_SQRT, ft(0, f, s), ft(0, f, s))};
    const long long fused = expect_graph_bit_identical(p, rng_);
    if (fused >= 0) {
        EXPECT_EQ(fused, 5);
    }
}

// graph_replay_with inside a fused chain: moving the intermediate that links it (the chain is
// planned again: silu's output and mul's input no longer coincide), or moving an input of it (still
// fused, new data): each equals the same ops run one by one with the bindings applied.
TEST_F(GraphTest, ReplayWithSwappedBufferInsideAFusedChain) {
    const tgl_dtype f = TGL_DTYPE_F32;
    const std::vector<int64_t> s = {2, 515};
    OpProgram p;
    p.buffers = {{f, 1030}, {f, 1030}, {f, 1030}, {f, 1030}, {f, 1030}};  // gate, up, t, h, other
    p.ops = {op1(TGL_OP_SILU, ft(0, f, s), ft(2, f, s)), op2(TGL_OP_MUL, ft(2, f, s), ft(1, f, s), ft(3, f, s))};
    struct Case {
        const char* what;
        uint32_t kind, op, slot;
        long long fused;  // at the replay's planning
    };
    for (const Case& c : {Case{"mul reads another t", TGL_GRAPH_BIND_INPUT, 1, 0, 0},
                          Case{"silu writes another t", TGL_GRAPH_BIND_OUTPUT, 0, 0, 0},
                          Case{"mul reads another up", TGL_GRAPH_BIND_INPUT, 1, 1, 2},
                          Case{"mul writes another h", TGL_GRAPH_BIND_OUTPUT, 1, 0, 2}}) {
        SCOPED_TRACE(c.what);
        ProgramDevice graph(Role::Plugin, p), direct(Role::Plugin, p);
        const tgl_graph g = graph.record();
        const auto data = p.random_contents(rng_);
        graph.upload(data);
        direct.upload(data);
        tgl_graph_binding b{};
        b.struct_size = TGL_GRAPH_BINDING_SIZE_V1_3;
        b.kind = c.kind;
        b.op_index = c.op;
        b.slot = c.slot;
        b.buffer = graph.buffer(4);
        const long long before = graph.property("graph.fused_ops");
        graph.replay_with(g, {b});
        if (before >= 0) {
            EXPECT_EQ(graph.property("graph.fused_ops") - before, c.fused);
        }
        OpProgram bound = p;
        ProgramTensor& moved = c.kind == TGL_GRAPH_BIND_INPUT ? bound.ops[c.op].inputs[c.slot] : bound.ops[c.op].output;
        moved.buffer = 4;
        ProgramDevice direct_bound(Role::Plugin, bound);
        direct_bound.upload(data);
        direct_bound.run_direct();
        EXPECT_EQ(first_difference(p, graph.read_all(), direct_bound.read_all()), "");
        // The graph as recorded again afterwards: the fused plan of graph_end.
        graph.upload(data);
        graph.replay(g);
        direct.run_direct();
        EXPECT_EQ(first_difference(p, graph.read_all(), direct.read_all()), "");
        EXPECT_EQ(graph.api.graph_destroy(graph.h, g), TGL_OK);
    }
}

// ---- A norm followed by a scale (docs/graphs.md): layer_norm or rms_norm, then a chain of
// elementwise ops starting at its output, run by the norm's kernel as an epilogue. The norm's
// output and every output of the chain are compared, as every buffer.

// Whether the suite runs under TGL_GLES_LIMITS=minimum (4 storage blocks per shader: shorter chains).
bool minimum_limits() {
    const char* v = std::getenv("TGL_GLES_LIMITS");
    return v && std::string(v) == "minimum";
}

// An absent optional operand (a norm without gamma or beta).
const ProgramTensor kAbsent{-1, TGL_DTYPE_F32, {}, {}, 0};

std::vector<uint8_t> norm_params(uint32_t n_norm_dims, float eps) {
    tgl_layer_norm_params np{};
    np.struct_size = sizeof np;
    np.n_norm_dims = n_norm_dims;
    np.eps = eps;
    return params_bytes(np);
}

// rms_norm and layer_norm without a weight, then mul by a weight row, then add a bias row (the
// LLM's norm block), over rows of 24 (an invocation per row), 200 (a workgroup per row; f32: the
// row kept in registers, ROW_VEC4) and 203 (odd rows: the general path), f32 and f16.
TEST_F(GraphTest, FusedNormScaleIsBitIdentical) {
    struct Case {
        tgl_op op;
        tgl_dtype dt;
        int64_t d;
    };
    const tgl_dtype f32 = TGL_DTYPE_F32, f16 = TGL_DTYPE_F16;
    for (const Case& c : {Case{TGL_OP_RMS_NORM, f32, 24}, Case{TGL_OP_RMS_NORM, f32, 200}, Case{TGL_OP_RMS_NORM, f16, 203},
                          Case{TGL_OP_LAYER_NORM, f16, 24}, Case{TGL_OP_LAYER_NORM, f32, 200}, Case{TGL_OP_LAYER_NORM, f32, 203}}) {
        const tgl_dtype dt = c.dt;
        const int64_t d = c.d;
        SCOPED_TRACE(std::string(c.op == TGL_OP_RMS_NORM ? "rms_norm " : "layer_norm ") + dtype_name(dt) + " rows of " +
                     std::to_string(d));
        const std::vector<int64_t> s = {3, 5, d};
        const int64_t n = 15 * d;
        OpProgram p;
        p.buffers = {{dt, n}, {dt, d}, {dt, d}, {dt, n}, {dt, n}, {dt, n}};  // x, w, b, h, t, y
        p.ops = {ProgramOp{c.op, {ft(0, dt, s), kAbsent, kAbsent}, ft(3, dt, s), norm_params(1, 1e-5f)},
                 op2(TGL_OP_MUL, ft(3, dt, s), ft(1, dt, {d}), ft(4, dt, s)),
                 op2(TGL_OP_ADD, ft(4, dt, s), ft(2, dt, {d}), ft(5, dt, s))};
        const long long fused = expect_graph_bit_identical(p, rng_);
        if (fused >= 0) {  // minimum limits: x, y and 2 views: the norm and the mul, then the add alone
            EXPECT_EQ(fused, minimum_limits() ? 2 : 3);
        }
    }
}

// A norm with its own affine weight (layer_norm's gamma and beta, rms_norm's gamma) followed by a
// chain that reads another row operand, a per-row scale, the norm's input (a residual) and its own
// intermediates; strided and offset views; n_norm_dims 2; f32 and bf16.
TEST_F(GraphTest, FusedAffineNormChainIsBitIdentical) {
    for (tgl_op op : {TGL_OP_LAYER_NORM, TGL_OP_RMS_NORM}) {
        for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_BF16}) {
            SCOPED_TRACE(std::string(op == TGL_OP_RMS_NORM ? "rms_norm " : "layer_norm ") + dtype_name(dt));
            const std::vector<int64_t> s = {4, 3, 41};  // rows of 3 x 41 (n_norm_dims 2)
            OpProgram p;
            // 0: x; 1: gamma, 2: beta (3 x 41); 3: h, with a padded row stride at an offset; 4: a
            // per-row scale (4 x 1 x 1); 5: t; 6: y.
            p.buffers = {{dt, 492}, {dt, 123}, {dt, 123}, {dt, 4 * 3 * 48 + 5}, {dt, 4}, {dt, 492}, {dt, 492}};
            const ProgramTensor h = ft(3, dt, s, {144, 48, 1}, 5);
            std::vector<ProgramTensor> in = {ft(0, dt, s), ft(1, dt, {3, 41})};
            in.push_back(op == TGL_OP_LAYER_NORM ? ft(2, dt, {3, 41}) : kAbsent);
            tgl_gelu_params gp{sizeof gp, TGL_GELU_TANH};
            p.ops = {ProgramOp{op, in, h, norm_params(2, 1e-3f)},
                     op2(TGL_OP_MUL, ft(4, dt, {4, 1, 1}), h, ft(5, dt, s)),  // the scale first
                     op1(TGL_OP_GELU, ft(5, dt, s), ft(5, dt, s), params_bytes(gp)),
                     op2(TGL_OP_ADD, ft(5, dt, s), ft(0, dt, s), ft(6, dt, s)),  // + the residual x
                     op2(TGL_OP_MUL, ft(6, dt, s), h, ft(6, dt, s))};
            const long long fused = expect_graph_bit_identical(p, rng_);
            if (fused >= 0) {  // minimum limits: x, y, params and one view: the norm stays alone, its
                               // chain is cut in two chains of 2 (at most 4 views each)
                EXPECT_EQ(fused, minimum_limits() ? 4 : 5);
            }
        }
    }
}

// Rows of one element (an invocation per row, an empty inner dim after merging). Rows too long for
// one invocation's loop budget: GraphDiff.FusedNormScaleOnALoopBudgetLongRow.
TEST_F(GraphTest, FusedNormScaleOnOneElementRows) {
    const tgl_dtype f = TGL_DTYPE_F32;
    const std::vector<int64_t> s = {37, 1};
    OpProgram p;  // x, w, h, y
    p.buffers = {{f, 37}, {f, 1}, {f, 37}, {f, 37}};
    p.ops = {ProgramOp{TGL_OP_RMS_NORM, {ft(0, f, s), kAbsent, kAbsent}, ft(2, f, s), norm_params(1, 1e-5f)},
             op2(TGL_OP_MUL, ft(2, f, s), ft(1, f, {1}), ft(3, f, s))};
    const long long fused = expect_graph_bit_identical(p, rng_);
    if (fused >= 0) {
        EXPECT_EQ(fused, 2);
    }
}

// More rows than a fused norm takes (graph_fusion.cpp's kNormHeadRows, 256: past it the epilogue
// costs more than the dispatch it saves): the norm runs alone, its chain (mul, then add) fused as
// a chain of its own; 256 rows still fuse the three.
TEST_F(GraphTest, NormFusionOnlyUpToItsRowLimit) {
    const tgl_dtype f = TGL_DTYPE_F32;
    for (const int64_t rows : {256, 257}) {
        SCOPED_TRACE(std::to_string(rows) + " rows");
        const std::vector<int64_t> s = {rows, 4};
        OpProgram p;  // x, w, h, t, y
        p.buffers = {{f, rows * 4}, {f, 4}, {f, rows * 4}, {f, rows * 4}, {f, rows * 4}};
        p.ops = {ProgramOp{TGL_OP_RMS_NORM, {ft(0, f, s), kAbsent, kAbsent}, ft(2, f, s), norm_params(1, 1e-5f)},
                 op2(TGL_OP_MUL, ft(2, f, s), ft(1, f, {4}), ft(3, f, s)),
                 op2(TGL_OP_ADD, ft(3, f, s), ft(0, f, s), ft(4, f, s))};
        const long long fused = expect_graph_bit_identical(p, rng_);
        if (fused >= 0) {  // minimum limits (4 blocks): the norm and the mul, or nothing (mul + add: 5 views)
            EXPECT_EQ(fused, rows == 256 ? (minimum_limits() ? 2 : 3) : (minimum_limits() ? 0 : 2));
        }
    }
}

// Where the chain may not run inside the norm's kernel: it writes over the norm's input (other
// invocations still read it) or over the norm's output, it reads the norm's output shifted, or
// its first op does not read the norm's output. The ops stay unfused, or form a chain of their own.
TEST_F(GraphTest, NormFusionStopsAtOverlaps) {
    const tgl_dtype f = TGL_DTYPE_F32;
    const std::vector<int64_t> s = {6, 40};
    struct Case {
        const char* what;
        std::vector<ProgramOp> chain;  // after h = rms_norm(x) (buffers: 0 x, 1 w, 2 h, 3 t, 4 y)
        long long fused;
    };
    const std::vector<Case> cases = {
        {"mul writes over x", {op2(TGL_OP_MUL, ft(2, f, s), ft(1, f, {40}), ft(0, f, s))}, 0},
        {"mul in place over h", {op2(TGL_OP_MUL, ft(2, f, s), ft(1, f, {40}), ft(2, f, s))}, 0},
        {"add reads h shifted", {op2(TGL_OP_ADD, ft(2, f, s), ft(2, f, {40}, {}, 1), ft(3, f, s))}, 0},
        {"mul of x, then tanh", {op2(TGL_OP_MUL, ft(0, f, s), ft(1, f, {40}), ft(3, f, s)), op1(TGL_OP_TANH, ft(3, f, s), ft(4, f, s))}, 2},
        {"mul, then a write over x", {op2(TGL_OP_MUL, ft(2, f, s), ft(1, f, {40}), ft(3, f, s)), op1(TGL_OP_TANH, ft(3, f, s), ft(0, f, s))}, 2},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.what);
        OpProgram p;
        p.buffers = {{f, 240}, {f, 40}, {f, 240}, {f, 240}, {f, 240}};
        p.ops = {ProgramOp{TGL_OP_RMS_NORM, {ft(0, f, s), kAbsent, kAbsent}, ft(2, f, s), norm_params(1, 1e-5f)}};
        p.ops.insert(p.ops.end(), c.chain.begin(), c.chain.end());
        const long long fused = expect_graph_bit_identical(p, rng_);
        if (fused >= 0) {
            EXPECT_EQ(fused, c.fused);
        }
    }
}

// graph_replay_with on a fused norm block: a rebound weight (still fused, the new weight used),
// a rebound norm output (the mul reads the old one: the norm alone, mul and add a chain of their
// own), a rebound chain output, the norm's eps changed; each equals the same ops run one by one
// with the binding applied.
TEST_F(GraphTest, ReplayWithReboundWeightOfAFusedNorm) {
    const tgl_dtype f = TGL_DTYPE_F32;
    const std::vector<int64_t> s = {7, 256};
    OpProgram p;
    p.buffers = {{f, 1792}, {f, 256}, {f, 256}, {f, 1792}, {f, 1792}, {f, 1792}, {f, 1792}};  // x, w, b, h, t, y, other
    p.ops = {ProgramOp{TGL_OP_RMS_NORM, {ft(0, f, s), kAbsent, kAbsent}, ft(3, f, s), norm_params(1, 1e-5f)},
             op2(TGL_OP_MUL, ft(3, f, s), ft(1, f, {256}), ft(4, f, s)),
             op2(TGL_OP_ADD, ft(4, f, s), ft(2, f, {256}), ft(5, f, s))};
    struct Case {
        const char* what;
        uint32_t kind, op, slot;
        int buffer;
        long long fused;  // at the replay's planning (minimum limits: 4 blocks, not room for the add)
    };
    const bool minimum = minimum_limits();
    for (const Case& c : {Case{"mul reads another weight", TGL_GRAPH_BIND_INPUT, 1, 1, 2, minimum ? 2 : 3},
                          Case{"rms_norm writes another h", TGL_GRAPH_BIND_OUTPUT, 0, 0, 6, minimum ? 0 : 2},
                          Case{"add writes another y", TGL_GRAPH_BIND_OUTPUT, 2, 0, 6, minimum ? 2 : 3}}) {
        SCOPED_TRACE(c.what);
        ProgramDevice graph(Role::Plugin, p), direct(Role::Plugin, p);
        const tgl_graph g = graph.record();
        const auto data = p.random_contents(rng_);
        graph.upload(data);
        direct.upload(data);
        tgl_graph_binding b{};
        b.struct_size = TGL_GRAPH_BINDING_SIZE_V1_3;
        b.kind = c.kind;
        b.op_index = c.op;
        b.slot = c.slot;
        b.buffer = graph.buffer(c.buffer);
        const long long before = graph.property("graph.fused_ops");
        graph.replay_with(g, {b});
        if (before >= 0) {
            EXPECT_EQ(graph.property("graph.fused_ops") - before, c.fused);
        }
        OpProgram bound = p;
        ProgramTensor& moved = c.kind == TGL_GRAPH_BIND_INPUT ? bound.ops[c.op].inputs[c.slot] : bound.ops[c.op].output;
        moved.buffer = c.buffer;
        ProgramDevice direct_bound(Role::Plugin, bound);
        direct_bound.upload(data);
        direct_bound.run_direct();
        EXPECT_EQ(first_difference(p, graph.read_all(), direct_bound.read_all()), "");
        // The graph as recorded, replayed again: the fused plan of graph_end.
        graph.upload(data);
        graph.replay(g);
        direct.run_direct();
        EXPECT_EQ(first_difference(p, graph.read_all(), direct.read_all()), "");
        EXPECT_EQ(graph.api.graph_destroy(graph.h, g), TGL_OK);
    }
    {
        SCOPED_TRACE("rms_norm with another eps");
        ProgramDevice graph(Role::Plugin, p);
        const tgl_graph g = graph.record();
        const auto data = p.random_contents(rng_);
        graph.upload(data);
        const long long before = graph.property("graph.fused_ops");
        graph.replay_with(g, {params_binding(0, offsetof(tgl_layer_norm_params, eps), 0.25f)});
        if (before >= 0) {
            EXPECT_EQ(graph.property("graph.fused_ops") - before, minimum ? 2 : 3);
        }
        OpProgram bound = p;
        bound.ops[0].params = norm_params(1, 0.25f);
        ProgramDevice direct_bound(Role::Plugin, bound);
        direct_bound.upload(data);
        direct_bound.run_direct();
        EXPECT_EQ(first_difference(p, graph.read_all(), direct_bound.read_all()), "");
        EXPECT_EQ(graph.api.graph_destroy(graph.h, g), TGL_OK);
    }
}

}  // namespace
}  // namespace conf
