// Device tensors with guard bytes and poisoned outputs.
#include "tgl_test/support.h"

#include <algorithm>
#include <cstdio>

namespace tgl_test {

namespace {

uint8_t guard_byte(uint64_t k) { return uint8_t(0x5A + 31 * k); }

void put_bits(std::vector<uint8_t>& bytes, uint64_t at, uint32_t bits) { std::memcpy(&bytes[at], &bits, 4); }

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

DeviceTensor::DeviceTensor(Device& device, View view) : device_(device), view_(std::move(view)) {
    bytes_ = 2 * kGuardBytes + uint64_t(view_.storage) * 4;
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
    t.byte_offset = kGuardBytes + uint64_t(view_.offset) * 4;
    t.dtype = TGL_DTYPE_F32;
    t.rank = uint32_t(view_.rank());
    for (int d = 0; d < view_.rank(); ++d) {
        t.shape[d] = view_.shape[size_t(d)];
        t.strides[d] = view_.strides[size_t(d)];
    }
    return t;
}

void DeviceTensor::upload_shadow() { device_.upload(buffer_, 0, shadow_.data(), bytes_); }

void DeviceTensor::set_storage(const std::vector<float>& storage) {
    if (int64_t(storage.size()) != view_.storage)
        throw Failure("DeviceTensor::set_storage: " + std::to_string(storage.size()) + " elements for " +
                      view_.describe());
    if (!storage.empty()) std::memcpy(&shadow_[kGuardBytes], storage.data(), storage.size() * 4);
    poisoned_ = false;
    upload_shadow();
}

void DeviceTensor::set_values(const std::vector<float>& logical, float gap) {
    set_storage(scatter(view_, logical, gap));
}

void DeviceTensor::poison() {
    for (int64_t i = 0; i < view_.storage; ++i) put_bits(shadow_, kGuardBytes + uint64_t(i) * 4, kGapBits);
    for_each_offset(view_, [&](int64_t, int64_t off) { put_bits(shadow_, kGuardBytes + uint64_t(off) * 4, kPoisonBits); });
    poisoned_ = true;
    upload_shadow();
}

void DeviceTensor::prefill(const std::vector<float>& logical) {
    if (int64_t(logical.size()) != view_.numel())
        throw Failure("DeviceTensor::prefill: " + std::to_string(logical.size()) + " values for " + view_.describe());
    for (int64_t i = 0; i < view_.storage; ++i) put_bits(shadow_, kGuardBytes + uint64_t(i) * 4, kGapBits);
    for_each_offset(view_, [&](int64_t i, int64_t off) {
        put_bits(shadow_, kGuardBytes + uint64_t(off) * 4, float_bits(logical[size_t(i)]));
    });
    poisoned_ = false;
    upload_shadow();
}

std::vector<uint8_t> DeviceTensor::download_all() {
    std::vector<uint8_t> got(static_cast<size_t>(bytes_));
    device_.download(buffer_, 0, got.data(), bytes_);
    return got;
}

std::vector<float> DeviceTensor::download_storage() {
    std::vector<float> s(static_cast<size_t>(view_.storage));
    if (!s.empty()) device_.download(buffer_, kGuardBytes, s.data(), uint64_t(s.size()) * 4);
    return s;
}

std::string DeviceTensor::describe_diff(const std::vector<uint8_t>& got, bool skip_view, size_t max_report) const {
    if (!skip_view && std::memcmp(got.data(), shadow_.data(), size_t(bytes_)) == 0) return "";
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
                          (unsigned long long)((b - kGuardBytes) / 4), (unsigned long long)((b - kGuardBytes) % 4),
                          skip_view ? "outside the view" : "input/untouched buffer", shadow_[size_t(b)],
                          got[size_t(b)]);
        report += line;
    };
    for (uint64_t b = 0; b < kGuardBytes; ++b) byte_diff(b);
    for (int64_t e = 0; e < view_.storage; ++e) {
        if (skip_view && covered[size_t(e)]) continue;
        uint64_t b = kGuardBytes + uint64_t(e) * 4;
        if (std::memcmp(&got[size_t(b)], &shadow_[size_t(b)], 4) == 0) continue;
        for (int k = 0; k < 4; ++k) byte_diff(b + uint64_t(k));
    }
    for (uint64_t b = bytes_ - kGuardBytes; b < bytes_; ++b) byte_diff(b);
    if (n_diff == 0) return "";
    return std::to_string(n_diff) + " byte(s) of the buffer changed that must not have (" + view_.describe() +
           ", " + std::to_string(kGuardBytes) + " guard bytes each side):" + report +
           (n_diff > max_report ? "\n    ..." : "");
}

std::vector<float> DeviceTensor::read() {
    std::vector<uint8_t> got = download_all();
    std::string diff = describe_diff(got, true, 12);
    if (!diff.empty()) throw Failure("out-of-view write detected: " + diff);
    std::vector<float> values(static_cast<size_t>(view_.numel()));
    int64_t unwritten = 0, first_unwritten = -1;
    for_each_offset(view_, [&](int64_t i, int64_t off) {
        uint32_t bits;
        std::memcpy(&bits, &got[size_t(kGuardBytes + uint64_t(off) * 4)], 4);
        if (poisoned_ && bits == kPoisonBits) {
            if (first_unwritten < 0) first_unwritten = i;
            ++unwritten;
        }
        values[size_t(i)] = bits_float(bits);
    });
    if (unwritten)
        throw Failure(std::to_string(unwritten) + " of " + std::to_string(view_.numel()) +
                      " output element(s) still hold the poison pattern 0x7FC0DEAD (never written); the first is "
                      "logical element " + std::to_string(first_unwritten) + " of the " + view_.describe());
    shadow_ = std::move(got);
    poisoned_ = false;
    return values;
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
