// The C++ wrapper (tensorgl.hpp) end to end against the real CPU plugin, found by name through
// the default search path (it is built next to libtensorgl).
#include <tensorgl/tensorgl.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

std::string real(const std::string& path) {
    char* r = ::realpath(path.c_str(), nullptr);
    std::string s = r ? r : path;
    std::free(r);
    return s;
}

class CpuPlugin : public testing::Test {
protected:
    void SetUp() override { ::unsetenv("TGL_PLUGIN_PATH"); }
};

}  // namespace

TEST_F(CpuPlugin, FoundByNameNextToLibtensorgl) {
    tgl::Plugin cpu("cpu");
    EXPECT_EQ(cpu.name(), "cpu");
    EXPECT_EQ(cpu.path(), real(TGL_CPU_PLUGIN_FILE));
    EXPECT_EQ(cpu.abi_minor(), static_cast<uint32_t>(TGL_ABI_MINOR));
    EXPECT_GE(cpu.device_count(), 1u);
    EXPECT_FALSE(cpu.properties(0).empty());
    bool listed = false;
    for (const tgl::PluginEntry& e : tgl::Plugin::available())
        if (e.name == "cpu") listed = real(e.path) == real(TGL_CPU_PLUGIN_FILE);
    EXPECT_TRUE(listed);
}

TEST_F(CpuPlugin, BuffersUploadDownloadFillCopy) {
    tgl::Plugin cpu("cpu");
    tgl::Device dev(cpu, 0);
    auto a = tgl::Buffer::from(dev, std::vector<float>{1, 2, 3, 4});
    EXPECT_EQ(a.size(), 16u);
    EXPECT_EQ(a.download<float>(), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(a.download<float>(2, 8), (std::vector<float>{3, 4}));

    tgl::Buffer b(dev, 16);
    b.fill(7.5f);
    EXPECT_EQ(b.download<float>(), (std::vector<float>(4, 7.5f)));
    b.fill(-1.0f, 4, 8);
    EXPECT_EQ(b.download<float>(), (std::vector<float>{7.5f, -1, -1, 7.5f}));

    b.copy_from(a, 0, 8, 8);  // a[0..2) -> b[2..4)
    EXPECT_EQ(b.download<float>(), (std::vector<float>{7.5f, -1, 1, 2}));

    b.upload(std::vector<int32_t>{42}, 4);
    EXPECT_EQ(b.download<int32_t>(1, 4), (std::vector<int32_t>{42}));
}

TEST_F(CpuPlugin, RunOpContiguousAndStrided) {
    tgl::Plugin cpu("cpu");
    tgl::Device dev(cpu);
    auto a = tgl::Buffer::from(dev, std::vector<float>{1, 2, 3, 4, 5, 6});
    auto b = tgl::Buffer::from(dev, std::vector<float>{10, 20, 30});
    tgl::Buffer y(dev, 6 * sizeof(float));

    // y(2x3) = a(2x3) + b(3), broadcast over rows.
    tgl::run_op(dev, TGL_OP_ADD, nullptr, {tgl::tensor<float>(a, {2, 3}), tgl::tensor<float>(b, {3})},
                {tgl::tensor<float>(y, {2, 3})});
    EXPECT_EQ(y.download<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));

    // y = -a read backwards (stride -1 from the last element).
    tgl::run_op(dev, TGL_OP_NEG, nullptr, {tgl::strided_tensor<float>(a, {6}, {-1}, 5 * sizeof(float))},
                {tgl::tensor<float>(y, {6})});
    dev.synchronize();
    EXPECT_EQ(y.download<float>(), (std::vector<float>{-6, -5, -4, -3, -2, -1}));

    // Transposed view of a (3x2 with strides {1, 3}) times itself: matmul with params.
    tgl::Buffer c(dev, 9 * sizeof(float));
    tgl_matmul_params mp = tgl::make_params<tgl_matmul_params>();
    mp.alpha = 1.0f;
    tgl::run_op(dev, TGL_OP_MATMUL, &mp,
                {tgl::strided_tensor<float>(a, {3, 2}, {1, 3}), tgl::tensor<float>(a, {2, 3})},
                {tgl::tensor<float>(c, {3, 3})});
    // a^T @ a for a = [[1,2,3],[4,5,6]].
    EXPECT_EQ(c.download<float>(), (std::vector<float>{17, 22, 27, 22, 29, 36, 27, 36, 45}));
}

TEST_F(CpuPlugin, PluginErrorsBecomeExceptions) {
    tgl::Plugin cpu("cpu");
    tgl::Device dev(cpu);
    tgl::Buffer a(dev, 6 * sizeof(float));
    tgl::Buffer y(dev, 6 * sizeof(float));
    try {
        tgl::run_op(dev, TGL_OP_NEG, nullptr, {tgl::tensor<float>(a, {2, 3})},
                    {tgl::tensor<float>(y, {3, 2})});
        FAIL() << "a wrong output shape must throw";
    } catch (const tgl::Error& e) {
        EXPECT_EQ(e.status(), TGL_ERROR_SHAPE_MISMATCH);
        std::string w = e.what();
        EXPECT_NE(w.find("run_op(op 101) failed with TGL_ERROR_SHAPE_MISMATCH: "), std::string::npos)
            << w;
        EXPECT_GT(w.size(), std::string("run_op(op 101) failed with TGL_ERROR_SHAPE_MISMATCH: ").size())
            << "the plugin's own message must follow: " << w;
    }
    try {
        a.download<float>(8);  // 32 bytes from a 24-byte buffer
        FAIL() << "reading past the end must throw";
    } catch (const tgl::Error& e) {
        EXPECT_EQ(e.status(), TGL_ERROR_OUT_OF_BOUNDS) << e.what();
    }
    EXPECT_THROW(tgl::Device(cpu, 1000), tgl::Error);
    EXPECT_THROW(tgl::strided_tensor<float>(a, {2, 3}, {1}), tgl::Error);
    EXPECT_THROW(tgl::tensor<float>(a, std::vector<int64_t>(TGL_MAX_RANK + 1, 1)), tgl::Error);
}

TEST_F(CpuPlugin, RaiiAndMoves) {
    tgl::Plugin cpu("cpu");
    tgl::Device dev(cpu);
    tgl_buffer handle = 0;
    {
        tgl::Buffer a(dev, 64);
        handle = a.handle();
        tgl::Buffer b = std::move(a);
        EXPECT_EQ(b.handle(), handle);
        EXPECT_EQ(a.handle(), 0u);  // NOLINT(bugprone-use-after-move): on purpose
    }
    // The buffer was freed exactly once: its handle is now stale.
    uint64_t size = 0;
    EXPECT_EQ(cpu.api().buffer_size(dev.handle(), handle, &size), TGL_ERROR_STALE_HANDLE);

    tgl::Device moved = std::move(dev);
    tgl::Buffer c(moved, 16);
    tgl_device dh = moved.handle();
    moved.close();
    EXPECT_EQ(cpu.api().synchronize(dh), TGL_ERROR_STALE_HANDLE);
    // c's destructor frees a buffer of a closed device: the stale status is ignored.
}
