// Test helpers for the GGUF block dtypes (plugin_api.h): random blocks with finite scales, and one
// op run on raw operands (block tensors cannot go through Storage/DeviceTensor, which count
// elements of a fixed size). Header-only; used by the conformance and differential suites.
#pragma once

#include "tgl_test/support.h"

#include <cstring>
#include <string>
#include <vector>

namespace tgl_test {

// The block dtypes of ABI 1.3 and their names.
inline const std::vector<tgl_dtype>& block_dtypes() {
    static const std::vector<tgl_dtype> v = {TGL_DTYPE_Q4_0, TGL_DTYPE_Q4_1, TGL_DTYPE_Q5_0, TGL_DTYPE_Q5_1,
                                             TGL_DTYPE_Q8_0, TGL_DTYPE_Q4_K, TGL_DTYPE_Q5_K, TGL_DTYPE_Q6_K};
    return v;
}

inline void put_f16(uint8_t* p, double v) {
    const uint16_t h = f64_to_f16_bits(v);
    p[0] = uint8_t(h & 0xff);
    p[1] = uint8_t(h >> 8);
}

// `blocks` random blocks of dt: random quant bytes, the f16 scale fields (d, and dmin / m where
// the format has one) of random sign and magnitude in [2^-10, 2^-2], so every element is finite;
// with subnormal_scales, f16 subnormals (2^-24 .. 2^-14) and a fifth of them +-0 instead.
inline std::vector<uint8_t> random_blocks(tgl_dtype dt, int64_t blocks, Rng& r, bool subnormal_scales = false) {
    const size_t bytes = tgl_dtype_block_bytes(dt);
    std::vector<uint8_t> out(size_t(blocks) * bytes);
    for (uint8_t& b : out) b = uint8_t(r.integer(0, 255));
    auto scale = [&] {
        const double sign = r.chance(0.5) ? -1 : 1;
        if (subnormal_scales) return sign * (r.chance(0.2) ? 0.0 : std::ldexp(double(r.integer(1, 1023)), -24));
        return sign * std::ldexp(r.uniform(1.0, 2.0), int(r.integer(-10, -3)));
    };
    for (int64_t i = 0; i < blocks; ++i) {
        uint8_t* b = &out[size_t(i) * bytes];
        const bool two = dt == TGL_DTYPE_Q4_1 || dt == TGL_DTYPE_Q5_1 || dt == TGL_DTYPE_Q4_K || dt == TGL_DTYPE_Q5_K;
        if (dt == TGL_DTYPE_Q6_K) {
            put_f16(b + 208, scale());
        } else {
            put_f16(b, scale());
            if (two) put_f16(b + 2, scale());
        }
    }
    return out;
}

// One operand of a raw run: bytes uploaded at byte_offset of a buffer of buffer_bytes (0: just
// large enough), described by dtype, shape and strides (elements).
struct RawOperand {
    tgl_dtype dtype = TGL_DTYPE_F32;
    std::vector<uint8_t> bytes;
    Shape shape;
    std::vector<int64_t> strides;
    uint64_t byte_offset = 0;
    bool absent = false;
};

// A raw operand holding `values` of a plain dtype, contiguous.
inline RawOperand raw_values(tgl_dtype dt, const Shape& shape, const std::vector<double>& values) {
    RawOperand o;
    o.dtype = dt;
    o.bytes = encode_values(dt, values);
    o.shape = shape;
    int64_t s = 1;
    o.strides.assign(shape.size(), 0);
    for (size_t d = shape.size(); d-- > 0;) {
        o.strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
    return o;
}

// A contiguous block tensor of rows of K (ceil(K / B) blocks each) from its bytes.
inline RawOperand raw_blocks(tgl_dtype dt, const Shape& shape, std::vector<uint8_t> bytes) {
    RawOperand o;
    o.dtype = dt;
    o.bytes = std::move(bytes);
    o.shape = shape;
    const int64_t B = tgl_dtype_block_size(dt);
    int64_t s = (shape.back() + B - 1) / B * B;
    o.strides.assign(shape.size(), 1);
    for (size_t d = shape.size() - 1; d-- > 0;) {
        o.strides[d] = s;
        s *= shape[d] > 0 ? shape[d] : 1;
    }
    return o;
}

struct RawResult {
    tgl_status status = TGL_OK;
    std::string message;
    std::vector<double> values;  // the output's elements, row-major over its shape
    int64_t written_outside = -1;  // the first byte of the output's buffer outside its elements that the op changed (-1: none)
};

// Runs op on d with the operands in fresh buffers (each output's buffer filled with 0xff bytes
// first, so that an element not written reads as NaN) and reads output 0 back, with the first
// byte of its buffer outside its elements that no longer holds 0xff.
inline RawResult run_raw(Device& d, tgl_op op, const void* params, const std::vector<RawOperand>& ins,
                         const RawOperand& out) {
    std::vector<std::unique_ptr<Buffer>> keep;
    auto place = [&](const RawOperand& o, bool is_out) {
        if (o.absent) return tgl_tensor{};
        uint64_t bytes = o.byte_offset + std::max<size_t>(o.bytes.size(), 4);
        keep.push_back(std::make_unique<Buffer>(d, bytes));
        if (is_out) {
            const uint8_t ff = 0xff;
            d.fill(keep.back()->handle(), 0, bytes, &ff, 1);
        }
        if (!o.bytes.empty()) d.upload(keep.back()->handle(), o.byte_offset, o.bytes.data(), o.bytes.size());
        tgl_tensor t = tgl_tensor_contiguous(keep.back()->handle(), o.byte_offset, o.dtype, uint32_t(o.shape.size()),
                                             o.shape.data());
        for (size_t i = 0; i < o.strides.size(); ++i) t.strides[i] = o.strides[i];
        return t;
    };
    std::vector<tgl_tensor> in;
    for (const RawOperand& o : ins) in.push_back(place(o, false));
    const tgl_tensor y = place(out, true);
    RawResult r;
    r.status = d.run(op, params, in, {y});
    if (r.status != TGL_OK) {
        const char* m = d.api().last_error_message ? d.api().last_error_message() : nullptr;
        r.message = m ? m : "";
        return r;
    }
    std::vector<uint8_t> bytes(keep.back()->bytes());
    d.download(y.buffer, 0, bytes.data(), bytes.size());
    const uint32_t es = dtype_size(out.dtype);
    std::vector<int64_t> c(out.shape.size(), 0);
    std::vector<bool> in_out(bytes.size(), false);
    const int64_t n = numel(out.shape);
    for (int64_t i = 0; i < n; ++i) {
        int64_t e = 0;
        for (size_t k = 0; k < c.size(); ++k) e += c[k] * out.strides[k];
        const size_t at = size_t(out.byte_offset + uint64_t(e) * es);
        r.values.push_back(bits_to_value(out.dtype, load_element_bits(&bytes[at], es)));
        for (uint32_t b = 0; b < es; ++b) in_out[at + b] = true;
        for (size_t k = c.size(); k-- > 0 && ++c[k] == out.shape[k];) c[k] = 0;
    }
    for (size_t i = 0; i < bytes.size() && r.written_outside < 0; ++i)
        if (!in_out[i] && bytes[i] != 0xff) r.written_outside = int64_t(i);
    return r;
}

// An output operand of a plain dtype: shape, strides (empty: contiguous), its buffer large enough.
inline RawOperand raw_output(tgl_dtype dt, const Shape& shape, std::vector<int64_t> strides = {}) {
    RawOperand o = raw_values(dt, shape, {});
    if (!strides.empty()) o.strides = strides;
    int64_t hi = 0;
    for (size_t k = 0; k < shape.size(); ++k) hi += (shape[k] > 0 ? shape[k] - 1 : 0) * std::abs(o.strides[k]);
    o.bytes.assign(size_t(hi + 1) * dtype_size(dt), 0xff);
    return o;
}

}  // namespace tgl_test
