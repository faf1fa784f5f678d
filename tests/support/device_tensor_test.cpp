// Guarded device tensors of every dtype through one plugin's buffer calls (no op runs): uploads
// and downloads at odd element offsets, outputs written element by element (1-, 2- and 4-byte
// uploads, as an op would write them), and the checks that must catch an unwritten element or a
// write next to the view inside the same 32-bit word.
//   tgl_support_device_test --plugin=<path>
#include "tgl_test/support.h"

#include <cmath>

namespace tgl_test {
namespace {

class DeviceTensorTest : public SeededTest {
protected:
    Device& device() { return shared_device(Role::Plugin); }
};

ValueGen any_values(tgl_dtype dt) {
    if (dt == TGL_DTYPE_BOOL) return bool_values();
    if (is_float_dtype(dt)) return with_special_values(dt, float_values(dt, -4, 4), 0.2);
    return with_special_values(dt, int_values(dt, -100, 100), 0.2);
}

std::vector<Layout> layouts(const Shape& shape, Rng& rng) {
    const int r = int(shape.size());
    return {Layout{}, misaligned_layout(rng), misaligned_layout(rng), padded_layout(rng),
            stepped_layout(r, rng), negative_layout(r, rng), permuted_layout(r, rng), random_layout(shape, rng, false)};
}

// Writes view element values straight into the buffer, one element per upload, as an op would.
void write_elements(DeviceTensor& t, const std::vector<double>& logical, int64_t skip = -1) {
    const uint32_t size = dtype_size(t.dtype());
    for_each_offset(t.view(), [&](int64_t i, int64_t off) {
        if (i == skip) return;
        uint8_t bytes[4];
        store_element_bits(bytes, size, value_to_bits(t.dtype(), logical[size_t(i)]));
        t.device().upload(t.buffer(), t.element_byte_offset(off), bytes, size);
    });
}

TEST_F(DeviceTensorTest, InputsRoundTripAtAnyOffset) {
    const Shape shape{3, 5};
    for (tgl_dtype dt : all_dtypes()) {
        for (const Layout& layout : layouts(shape, rng_)) {
            DeviceTensor t(device(), make_view(shape, layout), dt);
            SCOPED_TRACE(dtype_name(dt) + " " + t.view().describe());
            EXPECT_EQ(t.desc().dtype, dt);
            EXPECT_EQ(t.desc().byte_offset, kGuardBytes + uint64_t(t.view().offset) * dtype_size(dt));
            const Storage storage = random_storage(dt, t.view().storage, rng_, any_values(dt));
            t.set_storage(storage);
            EXPECT_TRUE(t.unchanged());
            EXPECT_EQ(t.download_raw_storage().bytes(), storage.bytes());
            std::vector<double> logical = random_values(t.view().numel(), rng_, any_values(dt));
            t.set_logical(logical, dt == TGL_DTYPE_BOOL ? 1 : 3);
            EXPECT_TRUE(t.unchanged());
            EXPECT_TRUE(compare(dt, gather(t.download_raw_storage(), t.view()), logical, shape, 0, CompareMode::ExactBits));
        }
    }
}

TEST_F(DeviceTensorTest, OutputsWrittenElementByElementReadBack) {
    const Shape shape{3, 5};
    for (tgl_dtype dt : all_dtypes()) {
        for (const Layout& layout : layouts(shape, rng_)) {
            DeviceTensor t(device(), make_view(shape, layout), dt);
            SCOPED_TRACE(dtype_name(dt) + " " + t.view().describe());
            t.poison();
            const std::vector<double> logical = random_values(t.view().numel(), rng_, any_values(dt));
            write_elements(t, logical);
            EXPECT_TRUE(compare(dt, t.read_logical(), logical, shape, 0, CompareMode::ExactBits));
            EXPECT_TRUE(t.unchanged()) << "read_logical() takes what it read as the new state";
            // Prefilled outputs (matmul's beta != 0) read back as they were.
            t.prefill_logical(logical);
            EXPECT_TRUE(compare(dt, t.read_logical(), logical, shape, 0, CompareMode::ExactBits));
        }
    }
}

TEST_F(DeviceTensorTest, AnUnwrittenElementIsCaught) {
    const Shape shape{7};
    for (tgl_dtype dt : all_dtypes()) {
        SCOPED_TRACE(dtype_name(dt));
        DeviceTensor t(device(), make_view(shape, misaligned_layout(rng_)), dt);
        t.poison();
        std::vector<double> logical = random_values(7, rng_, any_values(dt));
        const double poison = bits_to_value(dt, poison_bits(dt));
        if (!is_float_dtype(dt))  // keep the poison's value out of the written ones
            for (double& v : logical) v = v == poison ? 0 : v;
        write_elements(t, logical, 3);
        if (poison_detectable(dt)) {
            try {
                t.read_logical();
                ADD_FAILURE() << "read_logical() accepted an output with element 3 never written";
            } catch (const Failure& f) {
                EXPECT_NE(std::string(f.what()).find("logical element 3"), std::string::npos) << f.what();
            }
        } else {
            // i8/u8/i16: the poison is a value, so the comparison is what notices (and names the poison).
            ::testing::AssertionResult r = compare(dt, t.read_logical(), logical, shape, 0);
            ASSERT_FALSE(r);
            EXPECT_NE(std::string(r.message()).find("poison"), std::string::npos) << r.message();
        }
    }
}

// A byte written just outside the view, inside the same 32-bit word as its first or last element:
// what a plugin that writes whole words for 1- and 2-byte elements would do.
TEST_F(DeviceTensorTest, AWriteNextToTheViewIsCaught) {
    const Shape shape{5};
    for (tgl_dtype dt : all_dtypes()) {
        for (bool before : {true, false}) {
            SCOPED_TRACE(dtype_name(dt) + (before ? ", byte before the view" : ", byte after the view"));
            DeviceTensor t(device(), make_view(shape, misaligned_layout(rng_)), dt);
            t.poison();
            const std::vector<double> logical = random_values(5, rng_, any_values(dt));
            write_elements(t, logical);
            const int64_t stray_element = before ? t.view().offset - 1 : t.view().offset + 5;
            const uint8_t stray = 0x00;  // no gap pattern has a zero byte
            t.device().upload(t.buffer(), t.element_byte_offset(stray_element), &stray, 1);
            try {
                t.read_logical();
                ADD_FAILURE() << "read_logical() missed a write to storage element " << stray_element;
            } catch (const Failure& f) {
                EXPECT_NE(std::string(f.what()).find("out-of-view write"), std::string::npos) << f.what();
                EXPECT_NE(std::string(f.what()).find("storage element " + std::to_string(stray_element)),
                          std::string::npos)
                    << f.what();
            }
        }
    }
}

TEST_F(DeviceTensorTest, F32ApiOnlyOnF32Tensors) {
    DeviceTensor half(device(), contiguous({3}), TGL_DTYPE_F16);
    EXPECT_THROW(half.set_values({1, 2, 3}), Failure);
    EXPECT_THROW(half.set_storage(std::vector<float>{1, 2, 3}), Failure);
    EXPECT_THROW(half.set_storage(Storage::zeros(TGL_DTYPE_BF16, 3)), Failure);
    half.poison();
    EXPECT_THROW(half.read(), Failure);
    // The f32 API and the typed API agree on f32 tensors.
    DeviceTensor f(device(), make_view({2, 3}, misaligned_layout(rng_)));
    f.set_values({1, 2, 3, 4, 5, 6}, 0.5f);
    EXPECT_EQ(f.download_raw_storage().bytes(), Storage::from_f32(f.download_storage()).bytes());
    EXPECT_EQ(gather(f.download_raw_storage(), f.view()), (std::vector<double>{1, 2, 3, 4, 5, 6}));
    f.poison();
    f.device().upload(f.buffer(), f.desc().byte_offset, std::vector<float>(6, 2.5f).data(), 24);
    EXPECT_EQ(f.read(), std::vector<float>(6, 2.5f));
}

}  // namespace
}  // namespace tgl_test

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    tgl_test::init(&argc, argv, tgl_test::Mode::Conformance);
    return RUN_ALL_TESTS();
}
