// The scan family (cumsum, cumprod): known answers on small hand-checked cases with NaN, inf,
// exclusive and reverse scans, rows longer than one block, f16 storage (rounded once at the
// store, f16 overflow to inf); bad params and in-place calls.
#include "reductions.h"

#include <cmath>

namespace conf {
namespace {

using ReduceMore = ConformanceTest;

TEST_F(ReduceMore, Cumsum) {
    std::vector<double> x = {1, 2, 3, 4};
    auto p = scan_params(0, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {4}, x, F32, {4}), {1, 3, 6, 10}));
    p = scan_params(-1, true, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {4}, x, F32, {4}), {0, 1, 3, 6}));
    p = scan_params(0, false, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {4}, x, F32, {4}), {10, 9, 7, 4}));
    p = scan_params(0, true, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {4}, x, F32, {4}), {9, 7, 4, 0}));
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, nullptr, F32, {2, 3}, {1, 2, 3, 4, 5, 6}, F32, {2, 3}), {1, 3, 6, 4, 9, 15}));
    p = scan_params(0, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {2, 3}, {1, 2, 3, 4, 5, 6}, F32, {2, 3}), {1, 2, 3, 5, 7, 9}));
    p = scan_params(-2, true, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {2, 3}, {1, 2, 3, 4, 5, 6}, F32, {2, 3}), {4, 5, 6, 0, 0, 0}));
    // inf and NaN propagate from where they enter.
    p = scan_params(0, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {5}, {1, dInf, 1, -dInf, 1}, F32, {5}), {1, dInf, dInf, dNaN, dNaN}));
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {3}, {1, dNaN, 1}, F32, {3}), {1, dNaN, dNaN}));
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {}, {2.5}, F32, {}), {2.5}));
    // A long row of ones (several blocks): exact integers.
    std::vector<double> ones(3000, 1.0), want(3000), want_rev_ex(3000);
    for (int i = 0; i < 3000; ++i) {
        want[size_t(i)] = i + 1;
        want_rev_ex[size_t(i)] = 2999 - i;
    }
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {3000}, ones, F32, {3000}), want));
    p = scan_params(0, true, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMSUM, &p, F32, {3000}, ones, F32, {3000}), want_rev_ex));
}

TEST_F(ReduceMore, Cumprod) {
    std::vector<double> x = {1, 2, 3, 4};
    auto p = scan_params(0, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {4}, x, F32, {4}), {1, 2, 6, 24}));
    p = scan_params(0, true, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {4}, x, F32, {4}), {1, 1, 2, 6}));
    p = scan_params(0, false, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {4}, x, F32, {4}), {24, 24, 12, 4}));
    p = scan_params(0, true, true);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {4}, x, F32, {4}), {24, 12, 4, 1}));
    p = scan_params(1, false, false);
    EXPECT_TRUE(same(F32, run_dt(TGL_OP_CUMPROD, &p, F32, {2, 2}, {0, dInf, 2, -1}, F32, {2, 2}), {0, dNaN, 2, -2}));
}

TEST_F(ReduceMore, F16Scans) {
    auto p = scan_params(0, false, false);
    // The running value is f32: 40000 + 40000 is inf in f16 but 40000 again one step later.
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {3}, {40000, 40000, -40000}, F16, {3}), {40000, dInf, 40000}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {3}, {2048, 1, 1}, F16, {3}), {2048, 2048, 2050}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {4}, {1, dNaN, 1, 1}, F16, {4}), {1, dNaN, dNaN, dNaN}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMPROD, &p, F16, {3}, {256, 256, 1.0 / 256}, F16, {3}), {256, dInf, 256}));
    p = scan_params(0, true, true);
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {4}, {1, 2, 3, 4}, F16, {4}), {9, 7, 4, 0}));
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMPROD, &p, F16, {4}, {1, 2, 3, 4}, F16, {4}), {24, 12, 4, 1}));
    // Several blocks per row (carries through f32 scratch): 3000 ones, exact integers up to 2048,
    // then f16 rounds to even steps of 2.
    std::vector<double> ones(3000, 1.0), want(3000);
    for (int i = 0; i < 3000; ++i) want[size_t(i)] = round_to_dtype(F16, i + 1);
    p = scan_params(0, false, false);
    EXPECT_TRUE(same(F16, run_dt(TGL_OP_CUMSUM, &p, F16, {3000}, ones, F16, {3000}), want));
}

// ----- bad input ----------------------------------------------------------------------------------

TEST_F(ReduceMore, ScanBadParams) {
    auto s = scan_params(2, false, false);
    expect_reduction_rejected(TGL_OP_CUMSUM, &s, {2, 3}, F32, TGL_ERROR_AXIS_OUT_OF_RANGE, {"params->axis", "2"});
    s = scan_params(0, false, false);
    s.exclusive = 2;
    expect_reduction_rejected(TGL_OP_CUMSUM, &s, {2, 3}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->exclusive"});
    s = scan_params(0, false, false);
    s.reverse = 5;
    expect_reduction_rejected(TGL_OP_CUMPROD, &s, {2, 3}, F32, TGL_ERROR_INVALID_ARGUMENT, {"params->reverse", "5"});
    s = scan_params(0, false, false);
    expect_reduction_rejected(TGL_OP_CUMPROD, &s, {3, 2}, F32, TGL_ERROR_SHAPE_MISMATCH, {"(3, 2)", "(2, 3)"});
}

// A scan whose output overlaps its input is rejected (it is not an elementwise op).
TEST_F(ReduceMore, ScanInPlaceIsRejected) {
    Device& d = dev();
    DeviceTensor t(d, contiguous({4}), F32);
    t.set_logical({1, 2, 3, 4});
    EXPECT_TGL_ERROR(d.run(TGL_OP_CUMSUM, nullptr, {t.desc()}, {t.desc()}), TGL_ERROR_INVALID_ARGUMENT, {"overlaps"});
    EXPECT_TRUE(t.unchanged());
}

}  // namespace
}  // namespace conf
