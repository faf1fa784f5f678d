// Dtypes and exact conversions: the tests' own reference for what each dtype stores. Floats are
// rounded with integer arithmetic on their bit patterns, so neither the compiler's half types nor
// the FPU's rounding or flush-to-zero modes take part.
#include "tgl_test/support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tgl_test {

namespace {

// A binary floating-point format: sign bit, exponent_bits, mantissa_bits (without the implicit 1).
struct FloatFormat {
    int exponent_bits;
    int mantissa_bits;

    constexpr int bias() const { return (1 << (exponent_bits - 1)) - 1; }
    constexpr int min_exponent() const { return 1 - bias(); }  // of the normal numbers
    constexpr uint64_t mantissa_mask() const { return (uint64_t(1) << mantissa_bits) - 1; }
    constexpr uint64_t exponent_mask() const { return ((uint64_t(1) << exponent_bits) - 1) << mantissa_bits; }
    constexpr uint64_t sign_bit() const { return uint64_t(1) << (exponent_bits + mantissa_bits); }
    constexpr uint64_t quiet_bit() const { return uint64_t(1) << (mantissa_bits - 1); }
};

constexpr FloatFormat kF64{11, 52};
constexpr FloatFormat kF32{8, 23};
constexpr FloatFormat kF16{5, 10};
constexpr FloatFormat kBF16{8, 7};

uint64_t double_bits(double d) {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
}

double bits_double(uint64_t u) {
    double d;
    std::memcpy(&d, &u, 8);
    return d;
}

// Rounds a double to `to`, once, to nearest with ties to even.
uint64_t narrow(double value, const FloatFormat& to) {
    const uint64_t in = double_bits(value);
    const uint64_t sign = (in >> 63) ? to.sign_bit() : 0;
    const int field = int((in & kF64.exponent_mask()) >> kF64.mantissa_bits);
    const uint64_t fraction = in & kF64.mantissa_mask();
    if (field == 0x7FF) {
        if (fraction == 0) return sign | to.exponent_mask();  // inf
        // NaN: the top payload bits survive; the quiet bit keeps a signalling NaN whose surviving
        // payload is 0 from turning into inf.
        return sign | to.exponent_mask() | to.quiet_bit() | (fraction >> (kF64.mantissa_bits - to.mantissa_bits));
    }
    // Zero, or a double subnormal: below 2^-1022, far under half the smallest subnormal of any
    // narrower format, so it rounds to zero.
    if (field == 0) return sign;

    // value = significand * 2^(exponent - 52). The result counts units of the target's spacing at
    // this exponent (subnormals share the spacing of the smallest normal binade).
    const int exponent = field - kF64.bias();
    const uint64_t significand = fraction | (uint64_t(1) << kF64.mantissa_bits);
    const int unit_exponent = std::max(exponent, to.min_exponent()) - to.mantissa_bits;
    const int shift = unit_exponent - (exponent - kF64.mantissa_bits);  // >= 52 - mantissa_bits > 0
    uint64_t units = 0;  // shift > 53: significand / 2^shift < 1/2, rounds to zero
    if (shift <= 53) {
        units = significand >> shift;
        const uint64_t rest = significand & ((uint64_t(1) << shift) - 1);
        const uint64_t half = uint64_t(1) << (shift - 1);
        if (rest > half || (rest == half && (units & 1))) ++units;
    }
    // A normal result has units in [2^m, 2^(m+1)]; adding the exponent field one below its value
    // makes the implicit bit carry it, and a rounding carry to 2^(m+1) moves to the next binade.
    // A subnormal result is its units (exponent field 0; 2^m becomes the smallest normal).
    uint64_t magnitude = units;
    if (exponent >= to.min_exponent()) magnitude += uint64_t(exponent - to.min_exponent()) << to.mantissa_bits;
    return sign | std::min(magnitude, to.exponent_mask());  // past the largest finite: inf
}

// The exact double of bits of format `from`.
double widen(uint64_t bits, const FloatFormat& from) {
    const uint64_t sign = (bits & from.sign_bit()) ? uint64_t(1) << 63 : 0;
    const int field = int((bits & from.exponent_mask()) >> from.mantissa_bits);
    uint64_t fraction = bits & from.mantissa_mask();
    const int shift = kF64.mantissa_bits - from.mantissa_bits;
    if (field == (1 << from.exponent_bits) - 1)  // inf, or NaN with its payload
        return bits_double(sign | kF64.exponent_mask() | (fraction << shift));
    int exponent = field - from.bias();
    if (field == 0) {
        if (fraction == 0) return bits_double(sign);
        // Subnormal: shift the leading 1 up into the implicit bit.
        exponent = from.min_exponent();
        while (!(fraction & (uint64_t(1) << from.mantissa_bits))) {
            fraction <<= 1;
            --exponent;
        }
        fraction &= from.mantissa_mask();
    }
    return bits_double(sign | (uint64_t(exponent + kF64.bias()) << kF64.mantissa_bits) | (fraction << shift));
}

const FloatFormat& float_format(tgl_dtype dt) {
    switch (dt) {
    case TGL_DTYPE_F32: return kF32;
    case TGL_DTYPE_F16: return kF16;
    case TGL_DTYPE_BF16: return kBF16;
    default: throw Failure("float_format: " + dtype_name(dt) + " is not a float dtype");
    }
}

}  // namespace

const std::vector<tgl_dtype>& all_dtypes() {
    static const std::vector<tgl_dtype> v = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_I8,
                                             TGL_DTYPE_U8,  TGL_DTYPE_BOOL, TGL_DTYPE_I64, TGL_DTYPE_I16};
    return v;
}

const std::vector<tgl_dtype>& word_dtypes() {
    static const std::vector<tgl_dtype> v = [] {
        std::vector<tgl_dtype> w;
        for (tgl_dtype dt : all_dtypes())
            if (dt != TGL_DTYPE_I64) w.push_back(dt);
        return w;
    }();
    return v;
}

std::string dtype_name(tgl_dtype dt) {
    switch (dt) {
    case TGL_DTYPE_F32: return "f32";
    case TGL_DTYPE_F16: return "f16";
    case TGL_DTYPE_BF16: return "bf16";
    case TGL_DTYPE_I32: return "i32";
    case TGL_DTYPE_I8: return "i8";
    case TGL_DTYPE_U8: return "u8";
    case TGL_DTYPE_BOOL: return "bool";
    case TGL_DTYPE_I64: return "i64";
    case TGL_DTYPE_I16: return "i16";
    case TGL_DTYPE_Q4_0: return "q4_0";
    case TGL_DTYPE_Q4_1: return "q4_1";
    case TGL_DTYPE_Q5_0: return "q5_0";
    case TGL_DTYPE_Q5_1: return "q5_1";
    case TGL_DTYPE_Q8_0: return "q8_0";
    case TGL_DTYPE_Q4_K: return "q4_K";
    case TGL_DTYPE_Q5_K: return "q5_K";
    case TGL_DTYPE_Q6_K: return "q6_K";
    default: return "dtype(" + std::to_string(dt) + ")";
    }
}

uint32_t dtype_size(tgl_dtype dt) {
    uint32_t size = tgl_dtype_size(dt);
    if (size == 0) throw Failure("dtype_size: unknown " + dtype_name(dt));
    return size;
}

bool is_float_dtype(tgl_dtype dt) { return dt == TGL_DTYPE_F32 || dt == TGL_DTYPE_F16 || dt == TGL_DTYPE_BF16; }

IntRange int_range(tgl_dtype dt) {
    switch (dt) {
    case TGL_DTYPE_I64: return {INT64_MIN, INT64_MAX};
    case TGL_DTYPE_I32: return {INT32_MIN, INT32_MAX};
    case TGL_DTYPE_I16: return {INT16_MIN, INT16_MAX};
    case TGL_DTYPE_I8: return {INT8_MIN, INT8_MAX};
    case TGL_DTYPE_U8: return {0, UINT8_MAX};
    case TGL_DTYPE_BOOL: return {0, 1};
    default: throw Failure("int_range: " + dtype_name(dt) + " is not an integer dtype");
    }
}

uint16_t f32_to_f16_bits(float f) { return uint16_t(narrow(widen(float_bits(f), kF32), kF16)); }
uint16_t f32_to_bf16_bits(float f) { return uint16_t(narrow(widen(float_bits(f), kF32), kBF16)); }
uint16_t f64_to_f16_bits(double d) { return uint16_t(narrow(d, kF16)); }
uint16_t f64_to_bf16_bits(double d) { return uint16_t(narrow(d, kBF16)); }
uint32_t f64_to_f32_bits(double d) { return uint32_t(narrow(d, kF32)); }
float f16_bits_to_f32(uint16_t h) { return bits_float(f64_to_f32_bits(widen(h, kF16))); }
float bf16_bits_to_f32(uint16_t b) { return bits_float(uint32_t(b) << 16); }

uint64_t value_to_bits(tgl_dtype dt, double v) {
    if (is_float_dtype(dt)) return uint32_t(narrow(v, float_format(dt)));
    const IntRange range = int_range(dt);
    // double(INT64_MAX) is 2^63, itself out of range: i64 takes v < 2^63.
    const bool in_range = v >= double(range.lo) && (dt == TGL_DTYPE_I64 ? v < 0x1p63 : v <= double(range.hi));
    if (!(v == std::floor(v) && in_range)) {  // NaN fails too
        char text[64];
        std::snprintf(text, sizeof text, "%.17g", v);
        throw Failure(std::string("value_to_bits: ") + text + " is not a value of " + dtype_name(dt));
    }
    const uint64_t all_bits = dtype_size(dt) == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * dtype_size(dt))) - 1;
    return uint64_t(int64_t(v)) & all_bits;  // two's complement in the low bytes
}

double bits_to_value(tgl_dtype dt, uint64_t bits) {
    switch (dt) {
    case TGL_DTYPE_F32: case TGL_DTYPE_F16: case TGL_DTYPE_BF16: return widen(uint32_t(bits), float_format(dt));
    case TGL_DTYPE_I64: return double(int64_t(bits));  // the nearest double beyond 2^53
    case TGL_DTYPE_I32: return double(int32_t(uint32_t(bits)));
    case TGL_DTYPE_I16: return double(int16_t(uint16_t(bits)));
    case TGL_DTYPE_I8: return double(int8_t(uint8_t(bits)));
    case TGL_DTYPE_U8: case TGL_DTYPE_BOOL: return double(uint8_t(bits));
    default: throw Failure("bits_to_value: unknown " + dtype_name(dt));
    }
}

double round_to_dtype(tgl_dtype dt, double v) { return bits_to_value(dt, value_to_bits(dt, v)); }

uint64_t load_element_bits(const uint8_t* p, uint32_t size) {
    uint64_t bits = 0;
    for (uint32_t k = 0; k < size; ++k) bits |= uint64_t(p[k]) << (8 * k);
    return bits;
}

void store_element_bits(uint8_t* p, uint32_t size, uint64_t bits) {
    for (uint32_t k = 0; k < size; ++k) p[k] = uint8_t(bits >> (8 * k));
}

std::vector<uint8_t> encode_values(tgl_dtype dt, const std::vector<double>& values) {
    const uint32_t size = dtype_size(dt);
    std::vector<uint8_t> bytes(values.size() * size);
    for (size_t i = 0; i < values.size(); ++i) store_element_bits(&bytes[i * size], size, value_to_bits(dt, values[i]));
    return bytes;
}

std::vector<double> decode_values(tgl_dtype dt, const std::vector<uint8_t>& bytes) {
    const uint32_t size = dtype_size(dt);
    if (bytes.size() % size)
        throw Failure("decode_values: " + std::to_string(bytes.size()) + " bytes is not a whole number of " +
                      dtype_name(dt) + " elements");
    std::vector<double> values(bytes.size() / size);
    for (size_t i = 0; i < values.size(); ++i) values[i] = bits_to_value(dt, load_element_bits(&bytes[i * size], size));
    return values;
}

Storage Storage::zeros(tgl_dtype dt, int64_t elements) {
    if (elements < 0) throw Failure("Storage::zeros: " + std::to_string(elements) + " elements");
    Storage s;
    s.dtype_ = dt;
    s.bytes_.assign(size_t(elements) * dtype_size(dt), 0);
    return s;
}

Storage Storage::from_values(tgl_dtype dt, const std::vector<double>& values) {
    Storage s;
    s.dtype_ = dt;
    s.bytes_ = encode_values(dt, values);
    return s;
}

Storage Storage::from_f32(const std::vector<float>& values) {
    Storage s;
    s.bytes_.resize(values.size() * 4);
    if (!values.empty()) std::memcpy(s.bytes_.data(), values.data(), s.bytes_.size());
    return s;
}

// ------------------------------------------------------------------------------------------------
// Random values
// ------------------------------------------------------------------------------------------------

ValueGen float_values(tgl_dtype dt, double lo, double hi) {
    if (!is_float_dtype(dt)) throw Failure("float_values: " + dtype_name(dt) + " is not a float dtype");
    return [dt, lo, hi](Rng& r) { return round_to_dtype(dt, r.uniform(lo, hi)); };
}

ValueGen int_values(tgl_dtype dt, int64_t lo, int64_t hi) {
    const IntRange range = int_range(dt);
    lo = std::max(lo, range.lo);
    hi = std::min(hi, range.hi);
    if (lo > hi) throw Failure("int_values: the range holds no value of " + dtype_name(dt));
    return [lo, hi](Rng& r) { return double(r.integer(lo, hi)); };
}

ValueGen bool_values(double p_true) {
    return [p_true](Rng& r) { return r.chance(p_true) ? 1.0 : 0.0; };
}

ValueGen with_special_values(tgl_dtype dt, ValueGen base, double p) {
    const std::vector<double>* specials = &special_values_of(dt);
    return [base, p, specials](Rng& r) { return r.chance(p) ? r.pick(*specials) : base(r); };
}

const std::vector<double>& special_values_of(tgl_dtype dt) {
    static const auto make = [](tgl_dtype t) {
        std::vector<double> v;
        if (is_float_dtype(t)) {
            const FloatFormat& f = float_format(t);
            const double largest = widen(f.exponent_mask() - 1, f);
            const double smallest_normal = widen(uint64_t(1) << f.mantissa_bits, f);
            const double largest_subnormal = widen(f.mantissa_mask(), f);
            const double smallest_subnormal = widen(1, f);
            v.push_back(std::nan(""));
            for (double x : {HUGE_VAL, 0.0, 1.0, 0.5, 2.0, largest, smallest_normal, largest_subnormal,
                             smallest_subnormal}) {
                v.push_back(x);
                v.push_back(-x);
            }
        } else {
            IntRange r = int_range(t);
            if (t == TGL_DTYPE_I64) r = {-(int64_t(1) << 53), int64_t(1) << 53};  // values doubles hold exactly
            for (int64_t x : {r.lo, r.lo + 1, int64_t(-1), int64_t(0), int64_t(1), r.hi - 1, r.hi})
                if (x >= r.lo && x <= r.hi && std::find(v.begin(), v.end(), double(x)) == v.end()) v.push_back(double(x));
        }
        return v;
    };
    static const std::vector<std::vector<double>> by_dtype = [] {
        std::vector<std::vector<double>> all(TGL_DTYPE_COUNT_V1_3);
        for (tgl_dtype t : all_dtypes()) all[t] = make(t);
        return all;
    }();
    if (dt >= by_dtype.size() || by_dtype[dt].empty()) throw Failure("special_values_of: unknown " + dtype_name(dt));
    return by_dtype[dt];
}

std::vector<double> random_values(int64_t n, Rng& rng, const ValueGen& gen) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = gen(rng);
    return v;
}

Storage random_storage(tgl_dtype dt, int64_t elements, Rng& rng, const ValueGen& gen) {
    Storage s = Storage::from_values(dt, random_values(elements, rng, gen));
    // The integer dtypes whose range holds their poison pattern (the float poisons are NaN payloads
    // no generator makes; i64's lies past the 2^53 the generators keep to): that value becomes its
    // neighbour, so that an op that moves input elements never writes the poison (i32: an output
    // element holding it was not written; i16, not poison_detectable: the comparison's mark of a
    // poison value is not one of the inputs').
    if (dt == TGL_DTYPE_I16 || dt == TGL_DTYPE_I32)
        for (int64_t i = 0; i < elements; ++i)
            if (s.bits(i) == poison_bits(dt)) s.set_bits(i, poison_bits(dt) ^ 1u);
    return s;
}

}  // namespace tgl_test
