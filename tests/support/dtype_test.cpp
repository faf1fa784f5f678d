// Tests of the support library's own reference: conversions between double and the bits of every
// dtype (hand-checked cases, then every f16 and bf16 value and every rounding tie), encodings,
// typed views, random values and the typed comparison. Host only.
#include "tgl_test/support.h"

#include <cfloat>
#include <cmath>
#include <limits>

namespace tgl_test {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

bool is_f16_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0; }
bool is_bf16_nan(uint16_t b) { return (b & 0x7F80) == 0x7F80 && (b & 0x007F) != 0; }

// Exact f16 value from its fields with the C library (independent of the code under test).
double f16_formula(uint16_t h) {
    const int field = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
    const double magnitude = field == 0x1F ? (mantissa ? kNaN : kInf)
                             : field == 0  ? std::ldexp(mantissa, -24)
                                           : std::ldexp(1024 + mantissa, field - 25);
    return (h & 0x8000) ? -magnitude : magnitude;
}

// ---- f16 --------------------------------------------------------------------------------------

TEST(F16, HandCheckedRounding) {
    EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3C00);
    EXPECT_EQ(f32_to_f16_bits(-2.0f), 0xC000);
    EXPECT_EQ(f32_to_f16_bits(0.5f), 0x3800);
    EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7BFF);                        // largest finite
    EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7C00);                        // the tie above it: to even = inf
    EXPECT_EQ(f32_to_f16_bits(std::nextafter(65520.0f, 0.0f)), 0x7BFF);  // 65519.992
    EXPECT_EQ(f32_to_f16_bits(-65520.0f), 0xFC00);
    EXPECT_EQ(f32_to_f16_bits(1e10f), 0x7C00);
    EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -14)), 0x0400);           // smallest normal
    EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -24)), 0x0001);           // smallest subnormal
    EXPECT_EQ(f32_to_f16_bits(std::ldexp(1.0f, -25)), 0x0000);           // tie to even: 0
    EXPECT_EQ(f32_to_f16_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
    EXPECT_EQ(f32_to_f16_bits(3 * std::ldexp(1.0f, -25)), 0x0002);       // 1.5 units: tie to even 2
    EXPECT_EQ(f32_to_f16_bits(5 * std::ldexp(1.0f, -25)), 0x0002);       // 2.5 units: tie to even 2
    EXPECT_EQ(f32_to_f16_bits(std::ldexp(1023.0f, -24)), 0x03FF);        // largest subnormal
    EXPECT_EQ(f32_to_f16_bits(std::ldexp(2047.0f, -25)), 0x0400);        // rounds up into the normals
    EXPECT_EQ(f32_to_f16_bits(1.0f + std::ldexp(1.0f, -11)), 0x3C00);    // tie, 1.0 is even
    EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);  // tie, to even 0x3C02
    EXPECT_EQ(f32_to_f16_bits(2047.0f / 1024.0f + std::ldexp(1.0f, -11)), 0x4000);  // carry into the exponent
    EXPECT_EQ(f32_to_f16_bits(0.0f), 0x0000);
    EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000);
    EXPECT_EQ(f32_to_f16_bits(-std::ldexp(1.0f, -26)), 0x8000);          // underflow keeps the sign
    EXPECT_EQ(f32_to_f16_bits(FLT_MIN), 0x0000);
    EXPECT_EQ(f32_to_f16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
    EXPECT_EQ(f32_to_f16_bits(INFINITY), 0x7C00);
    EXPECT_EQ(f32_to_f16_bits(-INFINITY), 0xFC00);
}

TEST(F16, NanStaysQuietNan) {
    EXPECT_EQ(f32_to_f16_bits(NAN), 0x7E00);
    EXPECT_EQ(f32_to_f16_bits(-NAN), 0xFE00);
    // A signalling NaN whose payload lies below the kept bits must not become inf.
    const uint16_t from_snan = f32_to_f16_bits(bits_float(0x7F800001u));
    EXPECT_TRUE(is_f16_nan(from_snan)) << std::hex << from_snan;
    EXPECT_EQ(from_snan & 0x0200, 0x0200) << "quiet bit";
    EXPECT_EQ(f32_to_f16_bits(bits_float(0x7FC0DEADu)), 0x7E06);  // top payload bits kept
    EXPECT_TRUE(is_f16_nan(f64_to_f16_bits(kNaN)));
    EXPECT_TRUE(std::isnan(f16_bits_to_f32(0x7C01)));
    EXPECT_TRUE(std::isnan(f16_bits_to_f32(0xFFFF)));
}

TEST(F16, HandCheckedDecoding) {
    EXPECT_EQ(f16_bits_to_f32(0x3C00), 1.0f);
    EXPECT_EQ(f16_bits_to_f32(0x3C01), 1.0f + std::ldexp(1.0f, -10));
    EXPECT_EQ(f16_bits_to_f32(0x7BFF), 65504.0f);
    EXPECT_EQ(f16_bits_to_f32(0x0001), std::ldexp(1.0f, -24));
    EXPECT_EQ(f16_bits_to_f32(0x03FF), std::ldexp(1023.0f, -24));
    EXPECT_EQ(f16_bits_to_f32(0x0400), std::ldexp(1.0f, -14));
    EXPECT_EQ(f16_bits_to_f32(0xC000), -2.0f);
    EXPECT_EQ(f16_bits_to_f32(0x7C00), INFINITY);
    EXPECT_EQ(f16_bits_to_f32(0xFC00), -INFINITY);
    EXPECT_EQ(float_bits(f16_bits_to_f32(0x8000)), 0x80000000u);
}

TEST(F16, DoubleRoundsOnce) {
    // 1 + 2^-11 + 2^-40 is above the tie between 0x3C00 and 0x3C01, so it rounds up; through f32
    // it would first become the tie 1 + 2^-11 and then round to even 0x3C00.
    const double above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
    EXPECT_EQ(f64_to_f16_bits(above_tie), 0x3C01);
    EXPECT_EQ(f32_to_f16_bits(float(above_tie)), 0x3C00);
    EXPECT_EQ(f64_to_f16_bits(1.0 + std::ldexp(1.0, -11)), 0x3C00);
    EXPECT_EQ(f64_to_f16_bits(65520.0), 0x7C00);
    EXPECT_EQ(f64_to_f16_bits(65520.0 - std::ldexp(1.0, -30)), 0x7BFF);
    EXPECT_EQ(f64_to_f16_bits(std::ldexp(1.0, -25) + std::ldexp(1.0, -60)), 0x0001);
    EXPECT_EQ(f64_to_f16_bits(-std::ldexp(1.0, -25)), 0x8000);
    EXPECT_EQ(f64_to_f16_bits(1e300), 0x7C00);
    EXPECT_EQ(f64_to_f16_bits(std::numeric_limits<double>::denorm_min()), 0x0000);
    EXPECT_EQ(f64_to_f16_bits(-DBL_MIN), 0x8000);
}

TEST(F16, EveryValueDecodesExactlyAndRoundTrips) {
    for (uint32_t h = 0; h <= 0xFFFF; ++h) {
        const uint16_t bits = uint16_t(h);
        const float f = f16_bits_to_f32(bits);
        if (is_f16_nan(bits)) {
            ASSERT_TRUE(std::isnan(f)) << std::hex << h;
            ASSERT_EQ(f32_to_f16_bits(f), bits | 0x0200) << std::hex << h;  // payload kept, quietened
            continue;
        }
        ASSERT_EQ(double(f), f16_formula(bits)) << std::hex << h;
        ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << h;
        ASSERT_EQ(f32_to_f16_bits(f), bits) << std::hex << h;
        ASSERT_EQ(f64_to_f16_bits(double(f)), bits) << std::hex << h;
        ASSERT_EQ(value_to_bits(TGL_DTYPE_F16, bits_to_value(TGL_DTYPE_F16, bits)), h) << std::hex << h;
    }
}

// For every pair of neighbours (a, b) of a 16-bit float format, of both signs: the midpoint rounds
// to the one with an even mantissa, and the nearest f32 and f64 values on either side of it round
// to their side. next_above(h) is the value above h (for the largest finite, the first value of the
// binade past it, which is where the tie with inf lies).
template <class ToBitsF32, class ToBitsF64, class ToValue>
void check_every_tie(uint16_t largest_finite, uint16_t sign_bit, ToBitsF32 from_f32, ToBitsF64 from_f64,
                     ToValue value) {
    for (uint32_t h = 0; h <= largest_finite; ++h) {
        const double a = value(uint16_t(h));
        const double b = h == largest_finite ? 2 * a - value(uint16_t(h - 1)) : value(uint16_t(h + 1));
        const double mid = (a + b) / 2;  // exact in f32 for both formats
        const uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
        for (uint16_t sign : {uint16_t(0), sign_bit}) {
            const double s = sign ? -1.0 : 1.0;
            const float mid32 = float(s * mid);
            ASSERT_EQ(double(mid32), s * mid) << std::hex << h;
            ASSERT_EQ(from_f32(mid32), even | sign) << std::hex << h;
            ASSERT_EQ(from_f64(s * mid), even | sign) << std::hex << h;
            // Float arguments on purpose: nextafter(float, double) would step in double.
            ASSERT_EQ(from_f32(std::nextafter(mid32, 0.0f)), h | sign) << std::hex << h;
            ASSERT_EQ(from_f32(std::nextafter(mid32, sign ? -INFINITY : INFINITY)), (h + 1) | sign) << std::hex << h;
            ASSERT_EQ(from_f64(std::nextafter(s * mid, 0.0)), h | sign) << std::hex << h;
            ASSERT_EQ(from_f64(std::nextafter(s * mid, s * kInf)), (h + 1) | sign) << std::hex << h;
        }
    }
}

TEST(F16, EveryTieRoundsToEven) {
    check_every_tie(0x7BFF, 0x8000, f32_to_f16_bits, f64_to_f16_bits, [](uint16_t h) { return double(f16_bits_to_f32(h)); });
}

// ---- bf16 -------------------------------------------------------------------------------------

TEST(BF16, HandCheckedRounding) {
    EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3F80);
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x3F808000u)), 0x3F80);  // tie, 0x3F80 is even
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x3F818000u)), 0x3F82);  // tie, to even 0x3F82
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x3F808001u)), 0x3F81);  // above the tie
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x3F817FFFu)), 0x3F81);  // below the tie
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x3FFF8000u)), 0x4000);  // carry into the exponent
    EXPECT_EQ(f32_to_bf16_bits(FLT_MAX), 0x7F80);                  // past the tie with inf
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x7F7F8000u)), 0x7F80);  // the tie with inf: 0x7F7F is odd
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x7F7F7FFFu)), 0x7F7F);  // largest finite
    EXPECT_EQ(f32_to_bf16_bits(-FLT_MAX), 0xFF80);
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x00008000u)), 0x0000);  // subnormal tie to even 0
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x00018000u)), 0x0002);  // subnormal tie to even 2
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x00008001u)), 0x0001);
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x007FFFFFu)), 0x0080);  // largest f32 subnormal -> smallest normal
    EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
    EXPECT_EQ(f32_to_bf16_bits(-0.0f), 0x8000);
    EXPECT_EQ(f32_to_bf16_bits(INFINITY), 0x7F80);
    EXPECT_EQ(f32_to_bf16_bits(NAN), 0x7FC0);
    EXPECT_EQ(f32_to_bf16_bits(-NAN), 0xFFC0);
    const uint16_t from_snan = f32_to_bf16_bits(bits_float(0x7F800001u));  // would be inf if truncated
    EXPECT_TRUE(is_bf16_nan(from_snan)) << std::hex << from_snan;
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x7FC0DEADu)), 0x7FC0);
    EXPECT_EQ(f32_to_bf16_bits(bits_float(0x7FEDBEEFu)), 0x7FED);
    EXPECT_EQ(bf16_bits_to_f32(0x3F80), 1.0f);
    EXPECT_EQ(bf16_bits_to_f32(0x7F7F), bits_float(0x7F7F0000u));
    EXPECT_EQ(bf16_bits_to_f32(0x0001), bits_float(0x00010000u));
}

TEST(BF16, DoubleRoundsOnce) {
    const double above_tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
    EXPECT_EQ(f64_to_bf16_bits(above_tie), 0x3F81);
    EXPECT_EQ(f32_to_bf16_bits(float(above_tie)), 0x3F80);  // through f32: the tie, then to even
    EXPECT_EQ(f64_to_bf16_bits(1e300), 0x7F80);
    EXPECT_EQ(f64_to_bf16_bits(std::ldexp(1.0, -134)), 0x0000);  // half the smallest subnormal
    EXPECT_EQ(f64_to_bf16_bits(std::ldexp(3.0, -134)), 0x0002);
}

TEST(BF16, EveryValueRoundTripsAndIsTheTopHalfOfItsF32) {
    for (uint32_t b = 0; b <= 0xFFFF; ++b) {
        const uint16_t bits = uint16_t(b);
        const float f = bf16_bits_to_f32(bits);
        ASSERT_EQ(float_bits(f), b << 16);
        if (is_bf16_nan(bits)) {
            ASSERT_TRUE(std::isnan(bits_to_value(TGL_DTYPE_BF16, bits))) << std::hex << b;
            ASSERT_EQ(f32_to_bf16_bits(f), bits | 0x0040) << std::hex << b;
            continue;
        }
        ASSERT_EQ(bits_to_value(TGL_DTYPE_BF16, bits), double(f)) << std::hex << b;
        ASSERT_EQ(std::signbit(bits_to_value(TGL_DTYPE_BF16, bits)), (b & 0x8000) != 0) << std::hex << b;
        ASSERT_EQ(f32_to_bf16_bits(f), bits) << std::hex << b;
        ASSERT_EQ(f64_to_bf16_bits(double(f)), bits) << std::hex << b;
    }
}

TEST(BF16, EveryTieRoundsToEven) {
    check_every_tie(0x7F7F, 0x8000, f32_to_bf16_bits, f64_to_bf16_bits, [](uint16_t b) { return double(bf16_bits_to_f32(b)); });
}

// ---- f32 from double: the same rounding code, checked against the hardware's conversion -------

TEST(F32, DoubleToF32MatchesHardwareRounding) {
    Rng rng(12345);
    for (int i = 0; i < 2000000; ++i) {
        // Exponents from well below the f32 subnormals to past its largest finite, any mantissa.
        const double d = std::ldexp(rng.uniform(1.0, 2.0), int(rng.integer(-160, 130))) * (rng.chance(0.5) ? -1 : 1);
        ASSERT_EQ(f64_to_f32_bits(d), float_bits(float(d))) << d;
        // Ties: the midpoint between a float and its neighbour.
        const float f = float(d);
        if (std::isinf(f)) continue;
        const double mid = (double(f) + double(std::nextafter(f, INFINITY))) / 2;
        if (std::isinf(mid)) continue;
        ASSERT_EQ(f64_to_f32_bits(mid), float_bits(float(mid))) << mid;
    }
    EXPECT_EQ(f64_to_f32_bits(std::ldexp(1.0, -150)), 0x00000000u);      // tie to even 0
    EXPECT_EQ(f64_to_f32_bits(std::ldexp(3.0, -150)), 0x00000002u);      // tie to even 2
    EXPECT_EQ(f64_to_f32_bits(double(FLT_MAX) + std::ldexp(1.0, 103)), 0x7F800000u);  // the tie with inf
    EXPECT_EQ(f64_to_f32_bits(-0.0), 0x80000000u);
    EXPECT_EQ(f64_to_f32_bits(kInf), 0x7F800000u);
    EXPECT_EQ(f64_to_f32_bits(kNaN), 0x7FC00000u);
}

// ---- integers and bool ------------------------------------------------------------------------

TEST(Integers, EncodeAndDecode) {
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I32, -1), 0xFFFFFFFFu);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I32, INT32_MIN), 0x80000000u);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I32, INT32_MAX), 0x7FFFFFFFu);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I8, -128), 0x80u);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I8, -1), 0xFFu);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I8, 127), 0x7Fu);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_U8, 255), 0xFFu);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_BOOL, 1), 0x01u);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_BOOL, 0), 0x00u);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I32, -0.0), 0u);
    EXPECT_EQ(bits_to_value(TGL_DTYPE_I32, 0xFFFFFFFEu), -2);
    EXPECT_EQ(bits_to_value(TGL_DTYPE_I8, 0x80u), -128);
    EXPECT_EQ(bits_to_value(TGL_DTYPE_U8, 0x80u), 128);
    EXPECT_EQ(bits_to_value(TGL_DTYPE_BOOL, 0x01u), 1);
    EXPECT_EQ(bits_to_value(TGL_DTYPE_BOOL, 0x02u), 2);  // not a bool: stays visible
    EXPECT_THROW(value_to_bits(TGL_DTYPE_I8, 128), Failure);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_I8, -129), Failure);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_U8, -1), Failure);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_U8, kNaN), Failure);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_I32, 0.5), Failure);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_I32, 2147483648.0), Failure);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_I32, kInf), Failure);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_BOOL, 2), Failure);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_INVALID, 0), Failure);
    EXPECT_THROW(dtype_size(TGL_DTYPE_COUNT_V1_3), Failure);
    // i64 takes every integer a double holds in [-2^63, 2^63); i16 its 16-bit range.
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I64, -0x1p63), 0x8000000000000000ull);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I64, 0x1p62 + 0x1p31), 0x4000000080000000ull);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I64, -1), ~uint64_t(0));
    EXPECT_THROW(value_to_bits(TGL_DTYPE_I64, 0x1p63), Failure);
    EXPECT_EQ(bits_to_value(TGL_DTYPE_I64, 0xFFFFFFFF00000000ull), -4294967296.0);
    EXPECT_EQ(value_to_bits(TGL_DTYPE_I16, -32768), 0x8000u);
    EXPECT_EQ(bits_to_value(TGL_DTYPE_I16, 0xFFFEu), -2);
    EXPECT_THROW(value_to_bits(TGL_DTYPE_I16, 32768), Failure);
}

TEST(Encoding, BytesAreLittleEndian) {
    EXPECT_EQ(encode_values(TGL_DTYPE_I32, {0x01020304, -2}),
              (std::vector<uint8_t>{0x04, 0x03, 0x02, 0x01, 0xFE, 0xFF, 0xFF, 0xFF}));
    EXPECT_EQ(encode_values(TGL_DTYPE_F16, {1.0, -0.0}), (std::vector<uint8_t>{0x00, 0x3C, 0x00, 0x80}));
    EXPECT_EQ(encode_values(TGL_DTYPE_BF16, {1.0}), (std::vector<uint8_t>{0x80, 0x3F}));
    EXPECT_EQ(encode_values(TGL_DTYPE_F32, {1.0}), (std::vector<uint8_t>{0x00, 0x00, 0x80, 0x3F}));
    EXPECT_EQ(encode_values(TGL_DTYPE_I8, {-1, 5}), (std::vector<uint8_t>{0xFF, 0x05}));
    EXPECT_EQ(encode_values(TGL_DTYPE_BOOL, {1, 0, 1}), (std::vector<uint8_t>{1, 0, 1}));
    EXPECT_EQ(encode_values(TGL_DTYPE_I64, {-2, 0x1p32 + 5}),
              (std::vector<uint8_t>{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 5, 0, 0, 0, 1, 0, 0, 0}));
    EXPECT_EQ(encode_values(TGL_DTYPE_I16, {-2, 0x0102}), (std::vector<uint8_t>{0xFE, 0xFF, 0x02, 0x01}));
    EXPECT_EQ(decode_values(TGL_DTYPE_I32, {0x04, 0x03, 0x02, 0x01}), std::vector<double>{0x01020304});
    EXPECT_THROW(decode_values(TGL_DTYPE_F16, {0x00, 0x3C, 0x00}), Failure);
}

// Equal, or both NaN: what ExactBits calls equal.
bool same_value(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

TEST(Encoding, SpecialValuesOfEveryDtypeRoundTrip) {
    for (tgl_dtype dt : all_dtypes()) {
        SCOPED_TRACE(dtype_name(dt));
        const std::vector<double>& specials = special_values_of(dt);
        ASSERT_FALSE(specials.empty());
        const std::vector<double> back = decode_values(dt, encode_values(dt, specials));
        ASSERT_EQ(back.size(), specials.size());
        for (size_t i = 0; i < specials.size(); ++i)
            EXPECT_TRUE(same_value(back[i], specials[i])) << fmt_value(dt, specials[i]) << " came back as " << back[i];
    }
    EXPECT_EQ(special_values_of(TGL_DTYPE_BOOL), (std::vector<double>{0, 1}));
    EXPECT_EQ(special_values_of(TGL_DTYPE_I8), (std::vector<double>{-128, -127, -1, 0, 1, 126, 127}));
    const std::vector<double>& f16 = special_values_of(TGL_DTYPE_F16);
    for (double v : {65504.0, std::ldexp(1.0, -14), std::ldexp(1023.0, -24), std::ldexp(1.0, -24), -0.0, -kInf})
        EXPECT_NE(std::find_if(f16.begin(), f16.end(), [&](double s) { return same_value(s, v); }), f16.end()) << v;
}

TEST(Encoding, DtypeTable) {
    size_t element_dtypes = 0;  // the dtypes of one element each; the GGUF block dtypes have none
    for (tgl_dtype dt = 1; dt < TGL_DTYPE_COUNT_V1_3; ++dt) element_dtypes += tgl_dtype_size(dt) != 0;
    EXPECT_EQ(all_dtypes().size(), element_dtypes);
    for (tgl_dtype dt : all_dtypes()) EXPECT_EQ(dtype_size(dt), tgl_dtype_size(dt));
    EXPECT_EQ(dtype_name(TGL_DTYPE_BF16), "bf16");
    EXPECT_EQ(dtype_name(42), "dtype(42)");
    EXPECT_TRUE(is_float_dtype(TGL_DTYPE_F16));
    EXPECT_FALSE(is_float_dtype(TGL_DTYPE_BOOL));
    EXPECT_EQ(int_range(TGL_DTYPE_U8).hi, 255);
    EXPECT_THROW(int_range(TGL_DTYPE_F32), Failure);
}

// ---- storage and views ------------------------------------------------------------------------

std::vector<Layout> every_layout_kind(const Shape& shape, Rng& rng) {
    const int r = int(shape.size());
    return {Layout{},
            misaligned_layout(rng),
            padded_layout(rng),
            permuted_layout(r, rng),
            stepped_layout(r, rng),
            negative_layout(r, rng),
            random_layout(shape, rng, false)};
}

TEST(Storage, ScatterThenGatherGivesTheValuesBackForEveryDtype) {
    Rng rng(7);
    const Shape shape{3, 5};  // odd element counts: views end inside a 32-bit word too
    for (tgl_dtype dt : all_dtypes()) {
        for (const Layout& layout : every_layout_kind(shape, rng)) {
            const View v = make_view(shape, layout);
            SCOPED_TRACE(dtype_name(dt) + " " + v.describe());
            const ValueGen gen = is_float_dtype(dt) ? with_special_values(dt, float_values(dt, -3, 3), 0.2)
                                                    : with_special_values(dt, int_values(dt, -50, 50), 0.2);
            const std::vector<double> logical = random_values(v.numel(), rng, gen);
            const double gap = dt == TGL_DTYPE_BOOL ? 1 : 7;
            const Storage s = scatter(dt, v, logical, gap);
            ASSERT_EQ(s.dtype(), dt);
            ASSERT_EQ(s.size(), v.storage);
            ASSERT_EQ(s.bytes().size(), size_t(v.storage) * dtype_size(dt));
            const std::vector<double> back = gather(s, v);
            ASSERT_EQ(back.size(), logical.size());
            for (size_t i = 0; i < back.size(); ++i) EXPECT_TRUE(same_value(back[i], logical[i])) << i;
            std::vector<bool> covered(size_t(v.storage), false);
            for_each_offset(v, [&](int64_t, int64_t off) { covered[size_t(off)] = true; });
            for (int64_t e = 0; e < v.storage; ++e) {
                if (covered[size_t(e)]) continue;
                EXPECT_EQ(s.value(e), gap) << "gap element " << e;
            }
        }
    }
}

TEST(Storage, MisalignedLayoutStartsAndEndsAtOddElements) {
    Rng rng(3);
    for (int i = 0; i < 20; ++i) {
        const View v = make_view({4}, misaligned_layout(rng));
        EXPECT_EQ(v.offset % 2, 1) << v.describe();
        EXPECT_EQ((v.storage - v.offset - v.numel()) % 2, 1) << v.describe();
    }
}

TEST(Storage, F32StorageMatchesTheFloatApi) {
    const std::vector<float> floats = {1.5f, -0.0f, bits_float(0x7FC0DEADu), INFINITY};
    const Storage s = Storage::from_f32(floats);
    ASSERT_EQ(s.size(), 4);
    for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(s.bits(i), float_bits(floats[size_t(i)]));
    const View v = make_view({2, 2}, Layout{"transposed", {1, 0}, {}, {}, 1, 2});
    const std::vector<float> logical = {1, 2, 3, 4};
    const std::vector<float> as_float = scatter(v, logical, 9.0f);
    const Storage as_typed = scatter(TGL_DTYPE_F32, v, {1, 2, 3, 4}, 9.0);
    EXPECT_EQ(Storage::from_f32(as_float).bytes(), as_typed.bytes());
    const std::vector<double> back = gather(as_typed, v);
    EXPECT_EQ(back, (std::vector<double>{1, 2, 3, 4}));
    EXPECT_EQ(Storage::zeros(TGL_DTYPE_I8, 3).bytes(), (std::vector<uint8_t>{0, 0, 0}));
    EXPECT_THROW(scatter(TGL_DTYPE_U8, v, {1, 2, 3, 4}, 300), Failure);
    EXPECT_THROW(gather(Storage::zeros(TGL_DTYPE_F16, 3), v), Failure);
}

// ---- output patterns --------------------------------------------------------------------------

TEST(Patterns, PoisonAndGapAreDistinctAndUnlikely) {
    for (tgl_dtype dt : all_dtypes()) {
        SCOPED_TRACE(dtype_name(dt));
        const uint32_t size = dtype_size(dt);
        const uint64_t poison = poison_bits(dt), gap = gap_bits(dt);
        if (size < 8) {
            EXPECT_LT(poison, uint64_t(1) << (8 * size));
            EXPECT_LT(gap, uint64_t(1) << (8 * size));
        }
        EXPECT_NE(poison, gap);
        const double poison_value = bits_to_value(dt, poison);
        if (is_float_dtype(dt)) {
            EXPECT_TRUE(std::isnan(poison_value));
            EXPECT_TRUE(std::isnan(bits_to_value(dt, gap)));
            EXPECT_NE(poison, value_to_bits(dt, kNaN)) << "the canonical NaN is a plausible result";
            EXPECT_NE(poison, value_to_bits(dt, -kNaN));
        }
        EXPECT_EQ(poison_detectable(dt), dt != TGL_DTYPE_I8 && dt != TGL_DTYPE_U8 && dt != TGL_DTYPE_I16);
    }
    EXPECT_EQ(poison_bits(TGL_DTYPE_F32), kPoisonBits);
    EXPECT_EQ(gap_bits(TGL_DTYPE_F32), kGapBits);
    EXPECT_GT(bits_to_value(TGL_DTYPE_BOOL, poison_bits(TGL_DTYPE_BOOL)), 1) << "bool poison must not be a bool";
}

// ---- random values ----------------------------------------------------------------------------

TEST(Random, ValuesAreOfTheDtypeAndInRange) {
    Rng rng(11);
    for (tgl_dtype dt : {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16}) {
        for (double v : random_values(5000, rng, float_values(dt, -2, 3))) {
            ASSERT_TRUE(same_value(round_to_dtype(dt, v), v)) << dtype_name(dt) << " " << v;
            ASSERT_GE(v, -2);
            ASSERT_LE(v, 3);
        }
    }
    std::vector<double> i8 = random_values(5000, rng, int_values(TGL_DTYPE_I8, -1000, 1000));
    EXPECT_EQ(*std::min_element(i8.begin(), i8.end()), -128);
    EXPECT_EQ(*std::max_element(i8.begin(), i8.end()), 127);
    std::vector<double> i32 = random_values(2000, rng, int_values(TGL_DTYPE_I32, INT64_MIN, INT64_MAX));
    for (double v : i32) ASSERT_NO_THROW(value_to_bits(TGL_DTYPE_I32, v));
    EXPECT_THROW(int_values(TGL_DTYPE_U8, -10, -1), Failure);
    EXPECT_THROW(float_values(TGL_DTYPE_I32, 0, 1), Failure);
    std::vector<double> bools = random_values(10000, rng, bool_values(0.3));
    const double trues = double(std::count(bools.begin(), bools.end(), 1.0));
    EXPECT_EQ(trues + double(std::count(bools.begin(), bools.end(), 0.0)), 10000);
    EXPECT_NEAR(trues / 10000, 0.3, 0.03);
    const ValueGen f16_with_specials = with_special_values(TGL_DTYPE_F16, float_values(TGL_DTYPE_F16, 0, 1), 0.5);
    std::vector<double> with_specials = random_values(2000, rng, f16_with_specials);
    EXPECT_TRUE(std::any_of(with_specials.begin(), with_specials.end(), [](double v) { return std::isnan(v); }));
    EXPECT_TRUE(std::any_of(with_specials.begin(), with_specials.end(), [](double v) { return v == 65504.0; }));
    const Storage s = random_storage(TGL_DTYPE_U8, 9, rng, int_values(TGL_DTYPE_U8, 0, 255));
    EXPECT_EQ(s.dtype(), TGL_DTYPE_U8);
    EXPECT_EQ(s.size(), 9);
}

// An input element equal to the poison would read as never written once an op moves it into its
// output (CI: set_rows of i16, seed 1765756786427589707): random storage never holds it.
TEST(Random, StorageNeverHoldsThePoisonPattern) {
    Rng rng(12);
    for (tgl_dtype dt : {TGL_DTYPE_I16, TGL_DTYPE_I32}) {
        SCOPED_TRACE(dtype_name(dt));
        const double poison = bits_to_value(dt, poison_bits(dt));
        const Storage s = random_storage(dt, 64, rng, [&](Rng& r) { return r.chance(0.5) ? poison : 7.0; });
        for (int64_t i = 0; i < 64; ++i) {
            ASSERT_NE(s.bits(i), poison_bits(dt)) << "element " << i;
            ASSERT_TRUE(s.bits(i) == value_to_bits(dt, 7.0) || s.bits(i) == (poison_bits(dt) ^ 1u)) << "element " << i;
        }
    }
}

// ---- comparison -------------------------------------------------------------------------------

TEST(Compare, FloatModes) {
    const Shape s{2};
    // 0 and -0: equal values, different bits.
    EXPECT_TRUE(compare(TGL_DTYPE_F16, {0.0, 1.0}, {-0.0, 1.0}, s, 0, CompareMode::Exact));
    EXPECT_FALSE(compare(TGL_DTYPE_F16, {0.0, 1.0}, {-0.0, 1.0}, s, 0, CompareMode::ExactBits));
    // Any NaN equals any NaN.
    const double other_nan = bits_to_value(TGL_DTYPE_F16, 0x7E01);
    EXPECT_TRUE(compare(TGL_DTYPE_F16, {other_nan, 1.0}, {-kNaN, 1.0}, s, 0, CompareMode::ExactBits));
    EXPECT_FALSE(compare(TGL_DTYPE_F16, {other_nan, 1.0}, {1.0, 1.0}, s, 0, CompareMode::ExactBits));
    // Exact modes round the expectation to the dtype: 1.0001 is 1.0 in f16 and bf16, not in f32.
    EXPECT_TRUE(compare(TGL_DTYPE_F16, {1.0, kInf}, {1.0001, 70000.0}, s, 0, CompareMode::ExactBits));
    EXPECT_TRUE(compare(TGL_DTYPE_BF16, {1.0, 2.0}, {1.0001, 2.0}, s, 0, CompareMode::ExactBits));
    EXPECT_FALSE(compare(TGL_DTYPE_F32, {1.0, 2.0}, {1.0001, 2.0}, s, 0, CompareMode::ExactBits));
    // One f16 ulp off fails bit-exactness and names the bits.
    ::testing::AssertionResult r =
        compare(TGL_DTYPE_F16, {bits_to_value(TGL_DTYPE_F16, 0x3C01), 1.0}, {1.0, 1.0}, s, 0, CompareMode::ExactBits);
    ASSERT_FALSE(r);
    EXPECT_NE(std::string(r.message()).find("0x3c01"), std::string::npos) << r.message();
    EXPECT_NE(std::string(r.message()).find("bits differ"), std::string::npos) << r.message();
    // NMSE and inf positions as for f32.
    EXPECT_TRUE(compare(TGL_DTYPE_BF16, {1.0, 2.0}, {1.001, 2.0}, s, 1e-6));
    EXPECT_FALSE(compare(TGL_DTYPE_BF16, {1.0, 2.0}, {1.1, 2.0}, s, 1e-6));
    EXPECT_FALSE(compare(TGL_DTYPE_F16, {kInf, 2.0}, {-kInf, 2.0}, s, 1));
    EXPECT_FALSE(compare(TGL_DTYPE_F16, {kNaN, 2.0}, {1.0, 2.0}, s, 1));
}

TEST(Compare, F32OverloadsAgree) {
    const Shape s{3};
    const std::vector<float> a = {1.0f, -0.0f, NAN}, b = {1.0f, 0.0f, -NAN};
    EXPECT_TRUE(compare(a, b, s, 0, CompareMode::Exact));
    EXPECT_FALSE(compare(a, b, s, 0, CompareMode::ExactBits));
    EXPECT_TRUE(compare(TGL_DTYPE_F32, {1.0, -0.0, kNaN}, {1.0, 0.0, -kNaN}, s, 0, CompareMode::Exact));
    EXPECT_FALSE(compare(TGL_DTYPE_F32, {1.0, -0.0, kNaN}, {1.0, 0.0, -kNaN}, s, 0, CompareMode::ExactBits));
    EXPECT_FALSE(compare(a, {1.0f, 0.0f}, s, 0, CompareMode::Exact));  // sizes differ
}

TEST(Compare, IntegersAreExactAndReportTheFirstMismatches) {
    EXPECT_TRUE(compare(TGL_DTYPE_I32, {1, -2, 3}, {1, -2, 3}, {3}, 0));
    // Tolerance and mode do not loosen integer comparisons.
    ::testing::AssertionResult r = compare(TGL_DTYPE_I32, {1, 2, 3, 4}, {1, 5, 3, 7}, {2, 2}, 1e9, CompareMode::Nmse);
    ASSERT_FALSE(r);
    const std::string m = r.message();
    EXPECT_NE(m.find("2 element(s) differ"), std::string::npos) << m;
    EXPECT_NE(m.find("[0, 1]: 2 | 5"), std::string::npos) << m;
    EXPECT_NE(m.find("[1, 1]: 4 | 7"), std::string::npos) << m;
    EXPECT_LT(m.find("[0, 1]"), m.find("[1, 1]")) << "index order";
    // A bool byte other than 0/1 never equals true, and the poison is pointed out.
    ::testing::AssertionResult b = compare(TGL_DTYPE_BOOL, {1, 2, 165}, {1, 1, 0}, {3}, 0);
    ASSERT_FALSE(b);
    EXPECT_NE(std::string(b.message()).find("0x02 (not a bool) | true"), std::string::npos) << b.message();
    EXPECT_NE(std::string(b.message()).find("poison"), std::string::npos) << b.message();
    ::testing::AssertionResult u = compare(TGL_DTYPE_U8, {165}, {3}, {1}, 0);
    EXPECT_NE(std::string(u.message()).find("poison"), std::string::npos) << u.message();
    EXPECT_TRUE(compare(TGL_DTYPE_I8, {-128, 127}, {-128, 127}, {2}, 0, CompareMode::ExactBits));
}

TEST(Compare, ValueFormatting) {
    EXPECT_EQ(fmt_value(TGL_DTYPE_F32, 1.5), "1.5");
    EXPECT_EQ(fmt_value(TGL_DTYPE_F16, 1.0 + std::ldexp(1.0, -10)), "1.00097656 (0x3c01)");
    EXPECT_EQ(fmt_value(TGL_DTYPE_F16, -0.0), "-0 (0x8000)");
    EXPECT_EQ(fmt_value(TGL_DTYPE_BF16, kNaN), "nan(0x7fc0)");
    EXPECT_EQ(fmt_value(TGL_DTYPE_I32, -7), "-7");
    EXPECT_EQ(fmt_value(TGL_DTYPE_I32, 0.5), "0.5");
    EXPECT_EQ(fmt_value(TGL_DTYPE_BOOL, 1), "true");
    EXPECT_EQ(fmt_value(TGL_DTYPE_BOOL, 0), "false");
}

}  // namespace
}  // namespace tgl_test
