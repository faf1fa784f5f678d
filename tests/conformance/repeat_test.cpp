// Ops queued again with the same arguments (the GLES plugin plans such an op once and reuses the
// plan: backends/gles/op_cache.h): each run computes with the data of its moment, a change of
// params or views takes effect, each run reports its own device-side failure, buffers freed and
// allocated again are bound as themselves, and the plan keeps no freed memory.
#include "common.h"

#include <cstdlib>

namespace conf {
namespace {

using RepeatedOps = ConformanceTest;

tgl_tensor vec(tgl_buffer b, int64_t n, uint64_t byte_offset = 0, tgl_dtype dtype = TGL_DTYPE_F32) {
    return tgl_tensor_contiguous(b, byte_offset, dtype, 1, &n);
}

void put(Device& d, tgl_buffer b, const std::vector<float>& v) { d.upload(b, 0, v.data(), v.size() * 4); }

std::vector<float> get(Device& d, tgl_buffer b, size_t n, uint64_t byte_offset = 0) {
    std::vector<float> v(n);
    d.download(b, byte_offset, v.data(), n * 4);
    return v;
}

// y += x, 50 times, queued one by one without a wait: each run reads the previous one's result;
// then new x, and 3 more.
TEST_F(RepeatedOps, DependentInPlaceChain) {
    Device d(plug());
    const int64_t n = 300;
    Buffer x(d, n * 4), y(d, n * 4);
    const std::vector<float> x0 = iota_values(n, 0.25f, 0.25f), x1 = iota_values(n, -1.0f, 0.5f);
    put(d, x.handle(), x0);
    put(d, y.handle(), std::vector<float>(size_t(n), 0.0f));
    auto add = [&] { d.run_ok(TGL_OP_ADD, nullptr, {vec(y.handle(), n), vec(x.handle(), n)}, {vec(y.handle(), n)}); };
    for (int k = 0; k < 50; ++k) add();
    put(d, x.handle(), x1);  // queued after the adds: they still see x0
    for (int k = 0; k < 3; ++k) add();
    std::vector<float> want(static_cast<size_t>(n));
    for (size_t i = 0; i < want.size(); ++i) want[i] = 50 * x0[i] + 3 * x1[i];  // quarters: exact
    EXPECT_EQ(get(d, y.handle(), size_t(n)), want);
}

// The same buffers with other params (matmul's alpha) or another view (an offset): each run does
// what its own arguments say, also when the earlier arguments come back.
TEST_F(RepeatedOps, ChangedParamsAndViewsTakeEffect) {
    Device d(plug());
    const int64_t K = 64, N = 48;
    Buffer a(d, K * 4), w(d, K * N * 4), y(d, 3 * N * 4);
    std::vector<float> av(static_cast<size_t>(K)), wv(static_cast<size_t>(K * N));
    for (int64_t k = 0; k < K; ++k) av[size_t(k)] = float(k % 5) - 2;
    for (int64_t i = 0; i < K * N; ++i) wv[size_t(i)] = float(i % 7) - 3;
    put(d, a.handle(), av);
    put(d, w.handle(), wv);
    std::vector<float> ref(static_cast<size_t>(N), 0.0f);  // small integers: exact in any order
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) ref[size_t(n)] += av[size_t(k)] * wv[size_t(k * N + n)];
    const int64_t as[2] = {1, K}, ws[2] = {K, N}, ys[2] = {1, N};
    auto matmul = [&](float alpha, int slot) {
        tgl_matmul_params p = matmul_params(false, false, alpha, 0.0f);
        d.run_ok(TGL_OP_MATMUL, &p, {tgl_tensor_contiguous(a.handle(), 0, TGL_DTYPE_F32, 2, as),
                                     tgl_tensor_contiguous(w.handle(), 0, TGL_DTYPE_F32, 2, ws)},
                 {tgl_tensor_contiguous(y.handle(), uint64_t(slot) * N * 4, TGL_DTYPE_F32, 2, ys)});
    };
    // Each run once before (the first may plan differently, e.g. while it allocates memory);
    // two queued back to back, then read.
    const struct {
        float alpha;
        int slot;
    } runs[] = {{1, 0}, {1, 0}, {-1, 0}, {2, 0}, {1, 0}, {1, 1}, {-1, 1}, {2, 2}, {1, 2}, {2, 0}};
    for (size_t i = 1; i < sizeof runs / sizeof runs[0]; ++i) {
        matmul(runs[i - 1].alpha, runs[i - 1].slot);
        matmul(runs[i].alpha, runs[i].slot);
        for (size_t r : {i - 1, i}) {
            if (r == i - 1 && runs[r].slot == runs[i].slot) continue;  // overwritten
            std::vector<float> want = ref;
            for (float& v : want) v *= runs[r].alpha;
            EXPECT_EQ(get(d, y.handle(), size_t(N), uint64_t(runs[r].slot) * N * 4), want) << "run " << r << " after " << i - 1;
        }
    }
}

// gather with a good index, a bad one, a good one again, queued back to back: the bad run's
// failure is reported once, the good runs compute.
TEST_F(RepeatedOps, EachRunReportsItsOwnDeviceCheck) {
    Device d(plug());
    Buffer x(d, 16), idx(d, 12), y1(d, 12), y2(d, 12);
    put(d, x.handle(), {10, 20, 30, 40});
    const tgl_axis_params a0{sizeof(tgl_axis_params), 0, TGL_SCATTER_REPLACE};
    auto gather = [&](std::vector<int32_t> index, tgl_buffer y) {
        d.upload(idx.handle(), 0, index.data(), 12);
        return d.run(TGL_OP_GATHER, &a0, {vec(x.handle(), 4), vec(idx.handle(), 3, 0, TGL_DTYPE_I32)}, {vec(y, 3)});
    };
    ASSERT_EQ(gather({3, 0, 2}, y1.handle()), TGL_OK) << plug().last_error();
    EXPECT_EQ(get(d, y1.handle(), 3), (std::vector<float>{40, 10, 30}));
    for (int round = 0; round < 2; ++round) {
        tgl_status s = gather({1, 7, 0}, y1.handle());
        std::string msg = plug().last_error();
        EXPECT_EQ(gather({2, 2, 1}, y2.handle()), TGL_OK) << plug().last_error();
        if (s == TGL_OK) {
            s = d.api().synchronize(d.handle());
            msg = plug().last_error();
        }
        EXPECT_TRUE(is_error(s, TGL_ERROR_INDEX_OUT_OF_RANGE, msg, {"7"})) << "round " << round;
        EXPECT_EQ(d.api().synchronize(d.handle()), TGL_OK) << plug().last_error();  // reported once
        EXPECT_EQ(get(d, y2.handle(), 3), (std::vector<float>{30, 30, 20})) << "round " << round;
    }
}

// The same views on buffers freed and allocated again, of other sizes each time (a plugin may
// give a new buffer the name or address of a freed one): every run reads and writes its own.
TEST_F(RepeatedOps, BuffersAllocatedAgainAreTheirOwn) {
    Device d(plug());
    const int64_t K = 39, N = 36;  // A: 156 bytes, not a whole number of 16-byte quads
    const int64_t as[2] = {1, K}, ws[2] = {K, N}, ys[2] = {1, N};
    for (int round = 0; round < 6; ++round) {
        const uint64_t slack = uint64_t(round % 2) * 4;  // bytes past the views: none, or up to a whole quad
        Buffer a(d, K * 4 + slack), w(d, K * N * 4 + slack), y(d, N * 4 + slack);
        std::vector<float> av(static_cast<size_t>(K)), wv(static_cast<size_t>(K * N));
        for (int64_t k = 0; k < K; ++k) av[size_t(k)] = float((k + round) % 3);
        for (int64_t i = 0; i < K * N; ++i) wv[size_t(i)] = float((i + round) % 4) - 1;
        put(d, a.handle(), av);
        put(d, w.handle(), wv);
        tgl_matmul_params p = matmul_params(false, false, 1.0f, 0.0f);
        d.run_ok(TGL_OP_MATMUL, &p, {tgl_tensor_contiguous(a.handle(), 0, TGL_DTYPE_F32, 2, as),
                                     tgl_tensor_contiguous(w.handle(), 0, TGL_DTYPE_F32, 2, ws)},
                 {tgl_tensor_contiguous(y.handle(), 0, TGL_DTYPE_F32, 2, ys)});
        std::vector<float> want(static_cast<size_t>(N), 0.0f);
        for (int64_t n = 0; n < N; ++n)
            for (int64_t k = 0; k < K; ++k) want[size_t(n)] += av[size_t(k)] * wv[size_t(k * N + n)];
        EXPECT_EQ(get(d, y.handle(), size_t(N)), want) << "round " << round;
    }
}

// GLES: once its buffers are freed and the device has synchronized, an op run many times holds
// no device memory (memory.held_bytes back where it was), the device still open.
TEST_F(RepeatedOps, FreedOperandsAreNotHeld) {
    if (plug().name() != "gles") GTEST_SKIP() << "memory.held_bytes is the GLES plugin's";
    auto held = [&] {
        const tgl_property* props = nullptr;
        uint32_t n = 0;
        if (plug().api().device_properties(0, &props, &n) != TGL_OK) return -1LL;
        for (uint32_t i = 0; i < n; ++i)
            if (std::string(props[i].name) == "memory.held_bytes") return std::atoll(props[i].value);
        return -1LL;
    };
    Device d(plug());
    d.synchronize();
    const long long held0 = held();
    ASSERT_GE(held0, 0) << "memory.held_bytes missing";
    const int64_t n = 1 << 18;
    {
        Buffer a(d, n * 4), b(d, n * 4), y(d, n * 4);
        const float one = 1.0f;
        d.fill(a.handle(), 0, n * 4, &one, 4);
        d.fill(b.handle(), 0, n * 4, &one, 4);
        for (int k = 0; k < 5; ++k)
            d.run_ok(TGL_OP_ADD, nullptr, {vec(a.handle(), n), vec(b.handle(), n)}, {vec(y.handle(), n)});
        EXPECT_EQ(get(d, y.handle(), 4, 4 * (n - 4)), std::vector<float>(4, 2.0f));
    }
    d.synchronize();
    EXPECT_EQ(held(), held0);
}

}  // namespace
}  // namespace conf
