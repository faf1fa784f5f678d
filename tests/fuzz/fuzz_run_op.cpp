// libFuzzer target: decodes the input into a few run_op calls on one device of the plugin named by
// TGL_FUZZ_PLUGIN (cpu or gles), through the loader. Op ids are mostly valid (from query_op),
// some not; descriptors have ranks 0..9, shapes with 0 and huge dims, strides with 0, negative
// and huge entries, odd byte offsets, valid and invalid dtypes; params structs have right and
// wrong struct_size and field values that include NaN and infinities.
//
// Oracle: no crash, hang, leak or sanitizer report; every call returns a plugin status and a
// failed call leaves a non-empty message; a call that fails (at run_op, or later at synchronize,
// as the GLES plugin's index errors do) writes nothing: every buffer downloads as before;
// synchronize after a successful run_op fails only with the deferred TGL_ERROR_INDEX_OUT_OF_RANGE.
#include "fuzz_common.h"

#include <algorithm>
#include <string>

namespace {

using fuzz::check;
using fuzz::die;
using fuzz::Reader;

constexpr int64_t kMaxElements = 4096;  // per tensor: one input runs in milliseconds on llvmpipe
constexpr uint32_t kMaxBuffers = 4;
constexpr uint32_t kTensorSlots = 12;  // more than TGL_MAX_OP_INPUTS: n_inputs may be too large

struct OpEntry {
    tgl_op op;
    uint32_t n_inputs, n_outputs, params_size;
};

struct State {
    tgl_device dev = 0;
    tgl_device other_dev = 0;     // a second device: its buffer is a foreign handle on `dev`
    tgl_buffer foreign = 0;
    std::vector<OpEntry> ops;
};

State& state() {
    static State s;
    return s;
}

const tgl_plugin_api& api() { return *fuzz::plugin().api; }

// run_op outcomes by status (TGL_FUZZ_STATS=1 prints them at exit): how many calls reached a kernel.
uint64_t g_outcomes[TGL_ERROR_INDEX_OUT_OF_RANGE + 2];

void print_outcomes() {
    std::fprintf(stderr, "fuzz_run_op outcomes (plugin '%s'):", fuzz::plugin().name);
    for (int s = 0; s <= TGL_ERROR_INDEX_OUT_OF_RANGE; ++s)
        if (g_outcomes[s]) std::fprintf(stderr, " %s=%llu", tgl_status_name(s), (unsigned long long)g_outcomes[s]);
    std::fprintf(stderr, " deferred_index_errors=%llu\n", (unsigned long long)g_outcomes[TGL_ERROR_INDEX_OUT_OF_RANGE + 1]);
}

// Buffer contents: values that make ops interesting (NaN/inf, small indices, raw bits).
void make_contents(Reader& r, std::vector<uint8_t>& bytes) {
    uint32_t mode = r.below(4);
    uint32_t x = r.u32() | 1u;
    auto next = [&] {  // xorshift32
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        return x;
    };
    static const float kFloats[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.5f, -3.0f, 1e30f, -1e-30f,
                                    INFINITY, -INFINITY, NAN, 100.0f, 0.1f, 7.0f};
    for (size_t i = 0; i + 4 <= bytes.size(); i += 4) {
        uint32_t w = next();
        switch (mode) {
        case 0: {
            float f = kFloats[w % (sizeof kFloats / sizeof kFloats[0])];
            std::memcpy(&w, &f, 4);
            break;
        }
        case 1: w = (w >> 8) % 5; break;  // small non-negative ints: valid indices mostly
        case 2: w = ((w >> 4) % 7 == 0) ? uint32_t(-1) - (w % 3) : (w >> 8) % 4; break;  // some negative
        default: break;  // raw bits (f16 NaNs and infinities included)
        }
        std::memcpy(&bytes[i], &w, 4);
    }
}

struct Buffers {
    std::vector<tgl_buffer> handles;
    std::vector<uint64_t> sizes;
    tgl_buffer stale = 0;
};

uint64_t size_of(const Buffers& b, tgl_buffer h) {
    for (size_t i = 0; i < b.handles.size(); ++i)
        if (b.handles[i] == h) return b.sizes[i];
    return UINT64_MAX;  // not ours: the plugin must reject the handle
}

tgl_buffer pick_buffer(Reader& r, const Buffers& b, uint32_t slot) {
    switch (r.below(16)) {
    case 15: return 0;
    case 14: return b.stale;
    case 13: return state().foreign;
    case 12: return r.u64();
    case 11: return b.handles.empty() ? 0 : b.handles[0] ^ (uint64_t(1) << (32 + r.below(24)));
    case 10: return b.handles.empty() ? 0 : b.handles[0] + 1 + r.below(8);
    default: return b.handles.empty() ? 0 : b.handles[(slot + (r.one_in(4) ? r.u8() : 0)) % b.handles.size()];
    }
}

tgl_dtype pick_dtype(Reader& r, tgl_dtype base) {
    switch (r.below(12)) {
    case 11: return tgl_dtype(r.below(24));  // every value up to the GGUF block dtypes (16..23)
    case 10: return r.one_in(2) ? TGL_DTYPE_COUNT_V1_3 : tgl_dtype(r.u32());
    case 9: return TGL_DTYPE_I32;
    case 8: return TGL_DTYPE_BOOL;
    default: return base;
    }
}

int64_t pick_dim(Reader& r) {
    switch (r.below(16)) {
    case 15: return r.i64();
    case 14: return 0;
    case 13: return 1;
    default: return r.below(6);
    }
}

void make_tensor(Reader& r, tgl_tensor& t, const tgl_tensor& base, const Buffers& b, uint32_t slot,
                 bool output) {
    t = base;
    t.buffer = pick_buffer(r, b, slot);
    t.dtype = pick_dtype(r, base.dtype);
    uint32_t rk = std::min<uint32_t>(t.rank, TGL_MAX_RANK);  // entries that exist (rank may be 9+)
    switch (r.below(10)) {
    case 9: t.rank = r.below(10); for (uint32_t d = 0; d < TGL_MAX_RANK; ++d) t.shape[d] = pick_dim(r); break;
    case 8: if (rk > 0) t.shape[r.below(rk)] = pick_dim(r); break;
    case 7: if (rk > 0) t.shape[r.below(rk)] = 1; break;   // broadcast
    case 6:                                                  // one fewer leading dim
        if (rk > 0) {
            for (uint32_t d = 0; d + 1 < rk; ++d) t.shape[d] = t.shape[d + 1];
            t.rank = rk - 1;
        }
        break;
    case 5:                                                  // one more leading dim
        if (rk < TGL_MAX_RANK) {
            for (uint32_t d = rk; d > 0; --d) t.shape[d] = t.shape[d - 1];
            t.shape[0] = pick_dim(r);
            t.rank = rk + 1;
        }
        break;
    default: break;
    }
    rk = std::min<uint32_t>(t.rank, TGL_MAX_RANK);
    uint32_t esize = tgl_dtype_size(t.dtype);
    // Strides: row-major mostly; else per-dim choices (0 broadcast, negative, huge).
    int64_t stride = 1;
    for (uint32_t d = rk; d-- > 0;) {
        t.strides[d] = stride;
        if (t.shape[d] > 0 && t.shape[d] < (int64_t(1) << 20) && stride < (int64_t(1) << 40)) stride *= t.shape[d];
    }
    uint32_t layout = r.below(8);
    if (layout == 1 && rk > 0) t.strides[r.below(rk)] = output && r.one_in(2) ? -1 : 0;
    if (layout == 2)
        for (uint32_t d = 0; d < TGL_MAX_RANK; ++d) t.strides[d] = int64_t(r.below(7)) - 3;
    if (layout == 3 && rk > 0) t.strides[r.below(rk)] = r.i64();
    if (layout == 4 && rk > 0) {  // a transposed view
        uint32_t a = r.below(rk), c = r.below(rk);
        std::swap(t.strides[a], t.strides[c]);
    }
    // Byte offset: a few elements in (so that negative strides can stay in bounds), rarely odd or huge.
    switch (r.below(12)) {
    case 11: t.byte_offset = r.u64(); break;
    case 10: t.byte_offset = r.below(64); break;
    case 9: t.byte_offset = uint64_t(r.i64()); break;
    default: t.byte_offset = uint64_t(r.below(32)) * (esize ? esize : 4) + (slot % 2 ? 2048 : 0); break;
    }
    if (t.rank > TGL_MAX_RANK && r.one_in(2)) t.rank = TGL_MAX_RANK + 1 + r.below(3);
}

// Whether the plugin could accept this tensor with more than kMaxElements elements (then the call
// would do heavy work and is skipped). A tensor that is certainly rejected (bad rank, negative or
// overflowing shape, foreign buffer, out of bounds) is fine at any size.
bool too_heavy(const tgl_tensor& t, const Buffers& b) {
    if (t.rank > TGL_MAX_RANK) return false;
    __int128 numel = 1;
    for (uint32_t d = 0; d < t.rank; ++d) {
        if (t.shape[d] < 0) return false;
        numel *= t.shape[d];
        if (numel > INT64_MAX) return false;
    }
    if (numel <= kMaxElements) return false;
    uint64_t bytes = size_of(b, t.buffer);
    if (bytes == UINT64_MAX) return false;
    if (tgl_dtype_is_block(t.dtype)) return true;  // may be accepted (extent in blocks): skipped when large
    uint32_t esize = tgl_dtype_size(t.dtype);
    if (esize == 0) return false;
    __int128 lo = 0, hi = 0;
    for (uint32_t d = 0; d < t.rank; ++d) {
        __int128 reach = __int128(t.strides[d]) * (t.shape[d] - 1);
        if (reach > (__int128(1) << 64) || reach < -(__int128(1) << 64)) return false;  // reaches past any buffer
        (reach < 0 ? lo : hi) += reach;
    }
    __int128 first = __int128(t.byte_offset) + lo * esize;
    __int128 last = __int128(t.byte_offset) + hi * esize + esize;
    return first >= 0 && last <= __int128(bytes);  // in bounds: the plugin may well accept it
}

// Params: a 256-byte block of 8-byte chunks (small ints, int pairs, floats, doubles, raw bits).
void make_params(Reader& r, uint8_t* p, uint32_t params_size) {
    std::memset(p, 0, 256);
    for (uint32_t i = 0; i < std::min<uint32_t>(256, params_size + 16); i += 8) {
        switch (r.below(6)) {
        case 0: { int64_t v = r.i64(); std::memcpy(p + i, &v, 8); break; }
        case 1: { int32_t v[2] = {int32_t(r.below(12)) - 3, int32_t(r.below(12)) - 3}; std::memcpy(p + i, v, 8); break; }
        case 2: { float v[2] = {r.f32(), r.f32()}; std::memcpy(p + i, v, 8); break; }
        case 3: { double v = r.f64(); std::memcpy(p + i, &v, 8); break; }
        case 4: { int32_t v[2] = {int32_t(r.below(3)), r.one_in(2) ? 0 : int32_t(r.below(4))}; std::memcpy(p + i, v, 8); break; }
        default: r.bytes(p + i, 8); break;
        }
    }
    uint32_t size = params_size;
    switch (r.below(10)) {
    case 9: size = r.below(3) * 4; break;
    case 8: size = params_size + 4 * (r.below(5) + 1); break;
    case 7: size = params_size > 4 ? params_size - 4 : 0; break;
    case 6: size = r.u32(); break;
    default: break;
    }
    std::memcpy(p, &size, 4);
}

void snapshot(const Buffers& b, std::vector<std::vector<uint8_t>>& out) {
    out.resize(b.handles.size());
    for (size_t i = 0; i < b.handles.size(); ++i) {
        out[i].assign(b.sizes[i], 0);
        if (!b.sizes[i]) continue;
        tgl_status s = check(api().buffer_download(state().dev, b.handles[i], 0, out[i].data(), b.sizes[i]),
                             "buffer_download");
        if (s != TGL_OK) die("buffer_download of a live buffer failed: %s: %s", tgl_status_name(s), api().last_error_message());
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    const tgl_plugin_api& a = api();
    State& st = state();
    uint32_t count = 0;
    if (check(a.device_count(&count), "device_count") != TGL_OK || count == 0) {
        std::fprintf(stderr, "fuzz_run_op: plugin '%s' has no device: %s\n", fuzz::plugin().name, a.last_error_message());
        std::exit(2);
    }
    if (a.device_open(0, &st.dev) != TGL_OK || a.device_open(0, &st.other_dev) != TGL_OK ||
        a.buffer_alloc(st.other_dev, 4096, &st.foreign) != TGL_OK) {
        std::fprintf(stderr, "fuzz_run_op: cannot open devices: %s\n", a.last_error_message());
        std::exit(2);
    }
    for (tgl_op op = 0; op < 1200; ++op) {
        tgl_op_caps caps;
        std::memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        if (a.query_op(op, &caps) == TGL_OK && caps.supported)
            st.ops.push_back({op, caps.n_inputs, caps.n_outputs, caps.params_size});
    }
    std::fprintf(stderr, "fuzz_run_op: plugin '%s', %zu ops\n", fuzz::plugin().name, st.ops.size());
    if (const char* e = std::getenv("TGL_FUZZ_STATS"); e && *e == '1') std::atexit(print_outcomes);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const tgl_plugin_api& a = api();
    State& st = state();
    Reader r(data, size);

    Buffers b;
    uint32_t nbuf = 1 + r.below(kMaxBuffers);
    for (uint32_t i = 0; i < nbuf; ++i) {
        uint64_t bytes = r.one_in(8) ? r.below(64) : 4096;
        tgl_buffer h = 0;
        if (check(a.buffer_alloc(st.dev, bytes, &h), "buffer_alloc") != TGL_OK)
            die("buffer_alloc(%llu) failed: %s", (unsigned long long)bytes, a.last_error_message());
        std::vector<uint8_t> contents(bytes);
        make_contents(r, contents);
        if (bytes && check(a.buffer_upload(st.dev, h, 0, contents.data(), bytes), "buffer_upload") != TGL_OK)
            die("buffer_upload failed: %s", a.last_error_message());
        b.handles.push_back(h);
        b.sizes.push_back(bytes);
    }
    if (check(a.buffer_alloc(st.dev, 16, &b.stale), "buffer_alloc") != TGL_OK ||
        check(a.buffer_free(st.dev, b.stale), "buffer_free") != TGL_OK)
        die("alloc/free of a 16-byte buffer failed: %s", a.last_error_message());

    std::vector<std::vector<uint8_t>> before, after;
    uint32_t nops = 1 + r.below(4);
    for (uint32_t k = 0; k < nops && !r.empty(); ++k) {
        OpEntry e{0, 1, 1, 8};
        uint32_t pick = r.below(16);
        if (pick == 15) e.op = r.u32();
        else if (pick == 14) e.op = st.ops[r.below(uint32_t(st.ops.size()))].op + 1 + r.below(3);
        else e = st.ops[r.u16() % st.ops.size()];
        auto count = [&](uint32_t n) -> uint32_t {
            switch (r.below(16)) {
            case 15: return r.below(kTensorSlots + 1);
            case 14: return r.one_in(4) ? UINT32_MAX : n + 1;
            case 13: return n > 1 ? 1 + r.below(n) : n;  // variadic ops take fewer
            default: return n;
            }
        };
        uint32_t n_in = count(e.n_inputs), n_out = count(e.n_outputs);

        // A base descriptor that the operands are mutations of (so that shapes often agree).
        tgl_tensor base;
        std::memset(&base, 0, sizeof base);
        base.rank = r.below(5);
        for (uint32_t d = 0; d < base.rank; ++d) base.shape[d] = r.one_in(8) ? pick_dim(r) : 1 + r.below(5);
        static const tgl_dtype kBase[] = {TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_F32, TGL_DTYPE_F16,
                                          TGL_DTYPE_I32, TGL_DTYPE_BF16, TGL_DTYPE_U8, TGL_DTYPE_I8,
                                          TGL_DTYPE_BOOL};
        base.dtype = kBase[r.below(sizeof kBase / sizeof kBase[0])];
        tgl_tensor tensors[2][kTensorSlots];
        std::memset(tensors, 0, sizeof tensors);
        for (uint32_t i = 0; i < std::min(n_in, kTensorSlots); ++i) make_tensor(r, tensors[0][i], base, b, i, false);
        for (uint32_t i = 0; i < std::min(n_out, kTensorSlots); ++i)
            make_tensor(r, tensors[1][i], i == 0 ? base : tensors[1][i - 1], b, i + 1 + kTensorSlots / 2, true);
        alignas(8) uint8_t params[256];
        make_params(r, params, e.params_size);
        const void* params_ptr = r.one_in(5) ? nullptr : params;
        const tgl_tensor* in_ptr = r.one_in(32) ? nullptr : tensors[0];
        const tgl_tensor* out_ptr = r.one_in(32) ? nullptr : tensors[1];

        bool heavy = false;
        for (uint32_t i = 0; i < std::min(n_in, kTensorSlots); ++i) heavy = heavy || too_heavy(tensors[0][i], b);
        for (uint32_t i = 0; i < std::min(n_out, kTensorSlots); ++i) heavy = heavy || too_heavy(tensors[1][i], b);
        if (heavy) continue;
        // The counts only go past kTensorSlots as UINT32_MAX, which every op rejects before reading.

        snapshot(b, before);
        tgl_status s = check(a.run_op(st.dev, e.op, params_ptr, in_ptr, n_in, out_ptr, n_out), "run_op");
        std::string run_msg = s != TGL_OK ? a.last_error_message() : "";
        tgl_status sync = check(a.synchronize(st.dev), "synchronize");
        ++g_outcomes[s];
        if (s == TGL_OK && sync != TGL_OK) ++g_outcomes[TGL_ERROR_INDEX_OUT_OF_RANGE + 1];
        if (s == TGL_OK && sync != TGL_OK && sync != TGL_ERROR_INDEX_OUT_OF_RANGE)
            die("op %u ran (TGL_OK) but synchronize failed with %s: %s", e.op, tgl_status_name(sync),
                a.last_error_message());
        if (s != TGL_OK && sync != TGL_OK)
            die("run_op of op %u failed (%s: %s), yet synchronize failed too (%s: %s)", e.op, tgl_status_name(s),
                run_msg.c_str(), tgl_status_name(sync), a.last_error_message());
        if (s == TGL_OK && sync == TGL_OK) continue;
        snapshot(b, after);
        for (size_t i = 0; i < before.size(); ++i)
            if (before[i] != after[i]) {
                size_t at = 0;
                while (before[i][at] == after[i][at]) ++at;
                die("op %u failed (run_op: %s, synchronize: %s: %s) but buffer %zu changed (first at byte %zu)",
                    e.op, tgl_status_name(s), tgl_status_name(sync), s != TGL_OK ? run_msg.c_str() : a.last_error_message(),
                    i, at);
            }
    }

    for (tgl_buffer h : b.handles)
        if (check(a.buffer_free(st.dev, h), "buffer_free") != TGL_OK) die("buffer_free failed: %s", a.last_error_message());
    if (check(a.buffer_free(st.dev, b.stale), "buffer_free") != TGL_ERROR_STALE_HANDLE)
        die("a double free did not give TGL_ERROR_STALE_HANDLE");
    return 0;
}
