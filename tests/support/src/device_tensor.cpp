// Device tensors with guard bytes and poisoned outputs.
#include "tgl_test/support.h"

#include <algorithm>
#include <cstdio>

namespace tgl_test {

namespace {

uint8_t guard_byte(uint64_t k) { return uint8_t(0x5A + 31 * k); }

std::string hex_bits(uint64_t bits, uint32_t size) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%0*llx", int(2 * size), (unsigned long long)bits);
    return text;
}

}  // namespace

uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

float poison_value() { return bits_float(kPoisonBits); }

uint64_t poison_bits(tgl_dtype dt) {
    switch (dt) {
    case TGL_DTYPE_F32: case TGL_DTYPE_I32: return kPoisonBits;
    case TGL_DTYPE_I64: return 0x7FC0DEAD7FC0DEADull;
    case TGL_DTYPE_I16: return 0xDEADu;
    case TGL_DTYPE_F16: return 0x7EADu;
    case TGL_DTYPE_BF16: return 0x7FEDu;
    case TGL_DTYPE_I8: case TGL_DTYPE_U8: case TGL_DTYPE_BOOL: return 0xA5u;
    default: throw Failure("poison_bits: unknown " + dtype_name(dt));
    }
}

uint64_t gap_bits(tgl_dtype dt) {
    switch (dt) {
    case TGL_DTYPE_F32: return kGapBits;
    case TGL_DTYPE_I64: return 0xDEADBEEFDEADBEEFull;
    case TGL_DTYPE_I16: return 0xBEEFu;
    case TGL_DTYPE_F16: case TGL_DTYPE_BF16: return 0xFFFFu;
    case TGL_DTYPE_I32: return 0xDEADBEEFu;
    case TGL_DTYPE_I8: case TGL_DTYPE_U8: case TGL_DTYPE_BOOL: return 0xEEu;
    default: throw Failure("gap_bits: unknown " + dtype_name(dt));
    }
}

bool poison_detectable(tgl_dtype dt) { return dt != TGL_DTYPE_I8 && dt != TGL_DTYPE_U8 && dt != TGL_DTYPE_I16; }

DeviceTensor::DeviceTensor(Device& device, View view, tgl_dtype dtype)
    : device_(device), view_(std::move(view)), dtype_(dtype) {
    bytes_ = 2 * kGuardBytes + uint64_t(view_.storage) * dtype_size(dtype_);
    buffer_ = device_.alloc(bytes_);
    shadow_.assign(size_t(bytes_), 0);
    for (uint64_t k = 0; k < kGuardBytes; ++k) {
        shadow_[size_t(k)] = guard_byte(k);
        shadow_[size_t(bytes_ - kGuardBytes + k)] = guard_byte(k + 128);
    }
}

DeviceTensor::~DeviceTensor() {
    if (buffer_) device_.api().buffer_free(device_.handle(), buffer_);
}

tgl_tensor DeviceTensor::desc() const {
    tgl_tensor t;
    std::memset(&t, 0, sizeof t);
    t.buffer = buffer_;
    t.byte_offset = element_byte_offset(view_.offset);
    t.dtype = dtype_;
    t.rank = uint32_t(view_.rank());
    for (int d = 0; d < view_.rank(); ++d) {
        t.shape[d] = view_.shape[size_t(d)];
        t.strides[d] = view_.strides[size_t(d)];
    }
    return t;
}

void DeviceTensor::require_f32(const char* member) const {
    if (dtype_ != TGL_DTYPE_F32)
        throw Failure(std::string("DeviceTensor::") + member + " takes or gives f32 values, but the tensor is " +
                      dtype_name(dtype_) + " (use the Storage / std::vector<double> members)");
}

void DeviceTensor::upload_shadow() { device_.upload(buffer_, 0, shadow_.data(), bytes_); }

void DeviceTensor::upload_storage(const uint8_t* bytes, int64_t elements) {
    if (elements != view_.storage)
        throw Failure("DeviceTensor::set_storage: " + std::to_string(elements) + " elements for " + view_.describe());
    if (elements) std::memcpy(&shadow_[kGuardBytes], bytes, size_t(elements) * dtype_size(dtype_));
    poisoned_ = false;
    upload_shadow();
}

void DeviceTensor::set_storage(const std::vector<float>& storage) {
    require_f32("set_storage");
    upload_storage(reinterpret_cast<const uint8_t*>(storage.data()), int64_t(storage.size()));
}

void DeviceTensor::set_storage(const Storage& storage) {
    if (storage.dtype() != dtype_)
        throw Failure("DeviceTensor::set_storage: " + dtype_name(storage.dtype()) + " storage for a " +
                      dtype_name(dtype_) + " tensor");
    upload_storage(storage.bytes().data(), storage.size());
}

void DeviceTensor::set_values(const std::vector<float>& logical, float gap) {
    require_f32("set_values");
    set_storage(scatter(view_, logical, gap));
}

void DeviceTensor::set_logical(const std::vector<double>& logical, double gap) {
    set_storage(scatter(dtype_, view_, logical, gap));
}

void DeviceTensor::write_output_pattern(const std::function<uint64_t(int64_t)>& bits_of_value) {
    const uint32_t size = dtype_size(dtype_);
    const uint64_t gap = gap_bits(dtype_);
    for (int64_t e = 0; e < view_.storage; ++e) store_element_bits(&shadow_[size_t(element_byte_offset(e))], size, gap);
    for_each_offset(view_, [&](int64_t i, int64_t off) {
        store_element_bits(&shadow_[size_t(element_byte_offset(off))], size, bits_of_value(i));
    });
    upload_shadow();
}

void DeviceTensor::poison() {
    const uint64_t poison = poison_bits(dtype_);
    write_output_pattern([poison](int64_t) { return poison; });
    poisoned_ = true;
}

void DeviceTensor::prefill_bits(size_t n_values, const std::function<uint64_t(int64_t)>& bits_of_value) {
    if (int64_t(n_values) != view_.numel())
        throw Failure("DeviceTensor::prefill: " + std::to_string(n_values) + " values for " + view_.describe());
    write_output_pattern(bits_of_value);
    poisoned_ = false;
}

void DeviceTensor::prefill(const std::vector<float>& logical) {
    require_f32("prefill");
    prefill_bits(logical.size(), [&](int64_t i) { return float_bits(logical[size_t(i)]); });
}

void DeviceTensor::prefill_logical(const std::vector<double>& logical) {
    prefill_bits(logical.size(), [&](int64_t i) { return value_to_bits(dtype_, logical[size_t(i)]); });
}

std::vector<uint8_t> DeviceTensor::download_all() {
    std::vector<uint8_t> got(static_cast<size_t>(bytes_));
    device_.download(buffer_, 0, got.data(), bytes_);
    return got;
}

std::vector<float> DeviceTensor::download_storage() {
    require_f32("download_storage");
    std::vector<float> s(static_cast<size_t>(view_.storage));
    if (!s.empty()) device_.download(buffer_, kGuardBytes, s.data(), uint64_t(s.size()) * 4);
    return s;
}

Storage DeviceTensor::download_raw_storage() {
    Storage s = Storage::zeros(dtype_, view_.storage);
    if (view_.storage) device_.download(buffer_, kGuardBytes, s.bytes().data(), uint64_t(s.bytes().size()));
    return s;
}

std::string DeviceTensor::describe_diff(const std::vector<uint8_t>& got, bool skip_view, size_t max_report) const {
    if (!skip_view && std::memcmp(got.data(), shadow_.data(), size_t(bytes_)) == 0) return "";
    const uint32_t size = dtype_size(dtype_);
    std::vector<char> covered;
    if (skip_view) {
        covered.assign(size_t(view_.storage), 0);
        for_each_offset(view_, [&](int64_t, int64_t off) { covered[size_t(off)] = 1; });
    }
    std::string report;
    size_t n_diff = 0;
    char line[256];
    auto byte_diff = [&](uint64_t b) {
        if (got[size_t(b)] == shadow_[size_t(b)]) return;
        if (n_diff++ >= max_report) return;
        bool in_storage = b >= kGuardBytes && b < bytes_ - kGuardBytes;
        if (!in_storage)
            std::snprintf(line, sizeof line, "\n    %s guard byte %llu: expected 0x%02x, found 0x%02x",
                          b < kGuardBytes ? "front" : "back",
                          (unsigned long long)(b < kGuardBytes ? b : b - (bytes_ - kGuardBytes)),
                          shadow_[size_t(b)], got[size_t(b)]);
        else
            std::snprintf(line, sizeof line,
                          "\n    storage element %llu (byte %llu of it, %s): expected 0x%02x, found 0x%02x",
                          (unsigned long long)((b - kGuardBytes) / size), (unsigned long long)((b - kGuardBytes) % size),
                          skip_view ? "outside the view" : "input/untouched buffer", shadow_[size_t(b)],
                          got[size_t(b)]);
        report += line;
    };
    for (uint64_t b = 0; b < kGuardBytes; ++b) byte_diff(b);
    for (int64_t e = 0; e < view_.storage; ++e) {
        if (skip_view && covered[size_t(e)]) continue;
        uint64_t b = element_byte_offset(e);
        if (std::memcmp(&got[size_t(b)], &shadow_[size_t(b)], size) == 0) continue;
        for (uint32_t k = 0; k < size; ++k) byte_diff(b + k);
    }
    for (uint64_t b = bytes_ - kGuardBytes; b < bytes_; ++b) byte_diff(b);
    if (n_diff == 0) return "";
    return std::to_string(n_diff) + " byte(s) of the buffer changed that must not have (" + dtype_name(dtype_) + " " +
           view_.describe() + ", " + std::to_string(kGuardBytes) + " guard bytes each side):" + report +
           (n_diff > max_report ? "\n    ..." : "");
}

const std::vector<uint8_t>& DeviceTensor::download_checked() {
    std::vector<uint8_t> got = download_all();
    std::string diff = describe_diff(got, true, 12);
    if (!diff.empty()) throw Failure("out-of-view write detected: " + diff);
    if (poisoned_ && poison_detectable(dtype_)) {
        const uint32_t size = dtype_size(dtype_);
        const uint64_t poison = poison_bits(dtype_);
        int64_t unwritten = 0, first_unwritten = -1;
        for_each_offset(view_, [&](int64_t i, int64_t off) {
            if (load_element_bits(&got[size_t(element_byte_offset(off))], size) != poison) return;
            if (first_unwritten < 0) first_unwritten = i;
            ++unwritten;
        });
        if (unwritten)
            throw Failure(std::to_string(unwritten) + " of " + std::to_string(view_.numel()) +
                          " output element(s) still hold the poison pattern " + hex_bits(poison, size) +
                          " (never written); the first is logical element " + std::to_string(first_unwritten) +
                          " of the " + dtype_name(dtype_) + " " + view_.describe());
    }
    shadow_ = std::move(got);
    poisoned_ = false;
    return shadow_;
}

std::vector<float> DeviceTensor::read() {
    require_f32("read");
    const std::vector<uint8_t>& got = download_checked();
    std::vector<float> values(static_cast<size_t>(view_.numel()));
    for_each_offset(view_, [&](int64_t i, int64_t off) {
        std::memcpy(&values[size_t(i)], &got[size_t(element_byte_offset(off))], 4);
    });
    return values;
}

std::vector<double> DeviceTensor::read_logical() {
    const std::vector<uint8_t>& got = download_checked();
    const uint32_t size = dtype_size(dtype_);
    std::vector<double> values(static_cast<size_t>(view_.numel()));
    for_each_offset(view_, [&](int64_t i, int64_t off) {
        values[size_t(i)] = bits_to_value(dtype_, load_element_bits(&got[size_t(element_byte_offset(off))], size));
    });
    return values;
}

std::vector<uint64_t> DeviceTensor::read_bits() const {
    if (poisoned_) throw Failure("DeviceTensor::read_bits: nothing read yet (call read_logical first)");
    const uint32_t size = dtype_size(dtype_);
    std::vector<uint64_t> bits(static_cast<size_t>(view_.numel()));
    for_each_offset(view_, [&](int64_t i, int64_t off) {
        bits[size_t(i)] = load_element_bits(&shadow_[size_t(element_byte_offset(off))], size);
    });
    return bits;
}

::testing::AssertionResult DeviceTensor::unchanged() {
    // Chunked first pass: no full-size copy for the common (unchanged) case.
    const uint64_t kChunk = uint64_t(8) << 20;
    std::vector<uint8_t> chunk(static_cast<size_t>(std::min(kChunk, bytes_)));
    bool same = true;
    for (uint64_t at = 0; at < bytes_ && same; at += kChunk) {
        uint64_t n = std::min(kChunk, bytes_ - at);
        device_.download(buffer_, at, chunk.data(), n);
        same = std::memcmp(chunk.data(), &shadow_[size_t(at)], size_t(n)) == 0;
    }
    if (same) return ::testing::AssertionSuccess();
    std::vector<uint8_t> got = download_all();
    std::string diff = describe_diff(got, false, 12);
    if (diff.empty()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << diff;
}

}  // namespace tgl_test
