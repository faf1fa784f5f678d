// libFuzzer target: sequences of device_open/close, buffer_alloc/free/size/upload/download/copy/fill
// and synchronize on the plugin named by TGL_FUZZ_PLUGIN (cpu or gles), through the loader, with
// live, stale (freed, double-freed, closed), foreign (another device's), made-up and null handles,
// and sizes/offsets at the edges.
//
// Oracle: no crash, hang, leak or sanitizer report; every call returns a plugin status, a failure
// leaves a non-empty message; and a model of what is live predicts success or the class of error:
// a call on live handles with in-range arguments succeeds, a freed or closed handle gives
// TGL_ERROR_STALE_HANDLE, a null or made-up one TGL_ERROR_INVALID_HANDLE; the bytes a buffer holds
// are what the model wrote into it (uploads, fills and copies), checked at every download.
#include "fuzz_common.h"

#include <string>

namespace {

using fuzz::check;
using fuzz::die;
using fuzz::Reader;

constexpr uint32_t kMaxOpens = 3;   // device_open per input (a GLES open makes a context: ~ms)
constexpr uint32_t kMaxCalls = 96;
constexpr uint64_t kMaxSmall = 4096;

struct Dev {
    tgl_device h;
    bool live;
};
struct Buf {
    tgl_buffer h;
    size_t dev;          // index into devices
    bool live;
    std::vector<uint8_t> model;  // expected contents; bytes never written are unknown (known = 0)
    std::vector<uint8_t> known;
};

const tgl_plugin_api& api() { return *fuzz::plugin().api; }

// What the plugin must answer for a handle: kLive, else the expected error status; kMadeUp for a
// made-up handle, which may be INVALID or, where it looks like one of an earlier generation of a
// slot, STALE (a plugin cannot tell it from a freed one).
constexpr int kLive = 0;
constexpr int kMadeUp = -1;

uint64_t pick_size(Reader& r) {
    switch (r.below(10)) {
    case 0: return 0;
    case 1: return uint64_t(1) << (50 + r.below(14));  // beyond any memory: must be refused
    case 2: return UINT64_MAX - r.below(4);
    case 3: return r.below(8);
    default: return r.below(kMaxSmall + 1);
    }
}

uint64_t pick_offset(Reader& r, uint64_t size) {
    switch (r.below(10)) {
    case 0: return UINT64_MAX - r.below(4);
    case 1: return size;
    case 2: return size + 1 + r.below(4);
    case 3: return uint64_t(r.i64());
    default: return size ? r.u16() % (size + 1) : 0;
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    uint32_t count = 0;
    if (check(api().device_count(&count), "device_count") != TGL_OK || count == 0) {
        std::fprintf(stderr, "fuzz_handles: plugin '%s' has no device: %s\n", fuzz::plugin().name,
                     api().last_error_message());
        std::exit(2);
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const tgl_plugin_api& a = api();
    Reader r(data, size);
    std::vector<Dev> devs;
    std::vector<Buf> bufs;
    uint32_t opens = 0;

    // A device handle and what the plugin must say about it (kLive or an error status).
    auto pick_dev = [&](int& expect) -> size_t {
        uint32_t c = r.below(16);
        if (c == 15 || devs.empty()) { expect = kMadeUp; return SIZE_MAX; }
        size_t i = r.below(uint32_t(devs.size()));
        expect = devs[i].live ? kLive : TGL_ERROR_STALE_HANDLE;
        return i;
    };
    auto dev_handle = [&](size_t i, Reader& rr) -> tgl_device {
        if (i != SIZE_MAX) return devs[i].h;
        switch (rr.below(4)) {
        case 0: return 0;
        case 1: return rr.u64() | 1;
        case 2: return devs.empty() ? 0x8000000100000001ull : (devs[0].h & ~0xFFFFFFFFull) | 0xFFFFFFF0u;  // no such slot
        default: return bufs.empty() ? 12345 : bufs[0].h;  // a buffer handle used as a device
        }
    };
    // A buffer handle on device di: live, stale, foreign (another device's) or made-up.
    auto pick_buf = [&](size_t di, int& expect) -> tgl_buffer {
        if (bufs.empty() || r.one_in(10)) {
            expect = kMadeUp;
            switch (r.below(3)) {
            case 0: return 0;
            case 1: return r.u64() | 1;
            default: return devs.empty() ? 7 : devs[0].h;  // a device handle used as a buffer
            }
        }
        size_t i = r.below(uint32_t(bufs.size()));
        const Buf& b = bufs[i];
        if (!b.live) expect = TGL_ERROR_STALE_HANDLE;
        else if (b.dev != di) expect = TGL_ERROR_INVALID_HANDLE;  // belongs to another device
        else expect = kLive;
        return b.h;
    };
    // The model of one of this input's buffers (the last one issued with that handle), or NULL.
    auto find_buf = [&](tgl_buffer h) -> Buf* {
        Buf* found = nullptr;
        for (Buf& x : bufs)
            if (x.h == h) found = &x;
        return found;
    };
    // Expected status of a call whose device and buffer handles were picked: the device is checked
    // first, then the buffer.
    auto expect_of = [](int dev_expect, int buf_expect) { return dev_expect ? dev_expect : buf_expect; };
    auto verify = [&](tgl_status s, int expect, const char* call) {
        check(s, call);
        if (expect == kLive) return true;  // the caller checks the success case (ranges may still fail)
        if (expect == kMadeUp) {
            if (s != TGL_ERROR_INVALID_HANDLE && s != TGL_ERROR_STALE_HANDLE)
                die("%s with a made-up handle returned %s (%s)", call, tgl_status_name(s), a.last_error_message());
            return false;
        }
        if (s != expect)
            die("%s returned %s, expected %s (%s)", call, tgl_status_name(s), tgl_status_name(expect),
                a.last_error_message());
        return false;
    };

    std::vector<uint8_t> host(kMaxSmall * 2 + 64);
    for (uint32_t call = 0; call < kMaxCalls && !r.empty(); ++call) {
        switch (r.below(12)) {
        case 0: {  // device_open
            if (opens >= kMaxOpens) break;
            ++opens;
            uint32_t index = r.one_in(8) ? r.u32() : 0;
            tgl_device h = 0;
            bool null_out = r.one_in(16);
            tgl_status s = check(a.device_open(index, null_out ? nullptr : &h), "device_open");
            if (null_out) {
                if (s != TGL_ERROR_NULL_POINTER) die("device_open(out = NULL) gave %s", tgl_status_name(s));
            } else if (index == 0) {
                if (s != TGL_OK) die("device_open(0) failed: %s", a.last_error_message());
                devs.push_back({h, true});
            } else {
                uint32_t n = 0;
                a.device_count(&n);
                if (index >= n && s != TGL_ERROR_DEVICE_UNAVAILABLE)
                    die("device_open(%u) of %u devices gave %s", index, n, tgl_status_name(s));
                if (s == TGL_OK) devs.push_back({h, true});
            }
            break;
        }
        case 1: {  // device_close
            int de;
            size_t di = pick_dev(de);
            tgl_status s = a.device_close(dev_handle(di, r));
            if (verify(s, de, "device_close")) {
                if (s != TGL_OK) die("device_close of a live device failed: %s", a.last_error_message());
                devs[di].live = false;
                for (Buf& b : bufs)
                    if (b.dev == di) b.live = false;
            }
            break;
        }
        case 2:
        case 3: {  // buffer_alloc
            int de;
            size_t di = pick_dev(de);
            uint64_t bytes = pick_size(r);
            tgl_buffer h = 0;
            bool null_out = r.one_in(16);
            tgl_status s = a.buffer_alloc(dev_handle(di, r), bytes, null_out ? nullptr : &h);
            check(s, "buffer_alloc");
            if (null_out) {
                if (s == TGL_OK) die("buffer_alloc(out = NULL) succeeded");
                break;
            }
            if (!verify(s, de, "buffer_alloc")) break;
            if (bytes > kMaxSmall) {
                if (s != TGL_ERROR_RESOURCE_EXHAUSTED)
                    die("buffer_alloc(%llu bytes) gave %s, expected TGL_ERROR_RESOURCE_EXHAUSTED",
                        (unsigned long long)bytes, tgl_status_name(s));
                break;
            }
            if (s != TGL_OK) die("buffer_alloc(%llu) failed: %s", (unsigned long long)bytes, a.last_error_message());
            if (h == 0) die("buffer_alloc returned the null handle");
            for (const Buf& b : bufs)
                if (b.live && b.h == h) die("buffer_alloc returned a handle that is still live");
            bufs.push_back({h, di, true, std::vector<uint8_t>(bytes), std::vector<uint8_t>(bytes)});
            break;
        }
        case 4: {  // buffer_free
            int de, be;
            size_t di = pick_dev(de);
            tgl_device d = dev_handle(di, r);
            tgl_buffer h = pick_buf(di, be);
            tgl_status s = a.buffer_free(d, h);
            if (verify(s, expect_of(de, be), "buffer_free")) {
                if (s != TGL_OK) die("buffer_free of a live buffer failed: %s", a.last_error_message());
                for (Buf& b : bufs)
                    if (b.h == h) b.live = false;
            }
            break;
        }
        case 5: {  // buffer_size
            int de, be;
            size_t di = pick_dev(de);
            tgl_device d = dev_handle(di, r);
            tgl_buffer h = pick_buf(di, be);
            uint64_t got = 0;
            tgl_status s = a.buffer_size(d, h, &got);
            if (verify(s, expect_of(de, be), "buffer_size")) {
                for (const Buf& b : bufs)
                    if (b.h == h && (s != TGL_OK || got != b.model.size()))
                        die("buffer_size gave %s, %llu bytes; expected %zu", tgl_status_name(s),
                            (unsigned long long)got, b.model.size());
            }
            break;
        }
        case 6:
        case 7: {  // buffer_upload / buffer_download
            bool up = r.below(12) < 6;
            int de, be;
            size_t di = pick_dev(de);
            tgl_device d = dev_handle(di, r);
            tgl_buffer h = pick_buf(di, be);
            Buf* b = find_buf(h);
            uint64_t bsize = b ? b->model.size() : 0;
            uint64_t off = pick_offset(r, bsize);
            uint64_t n = r.one_in(8) ? pick_offset(r, bsize) : (off < bsize ? r.u16() % (bsize - off + 1) : 0);
            bool null_ptr = r.one_in(16);
            uint8_t seed = r.u8();
            for (size_t i = 0; i < host.size(); ++i) host[i] = uint8_t(seed + i * 7);
            tgl_status s = up ? a.buffer_upload(d, h, off, null_ptr ? nullptr : host.data(), n)
                              : a.buffer_download(d, h, off, null_ptr ? nullptr : host.data(), n);
            const char* what = up ? "buffer_upload" : "buffer_download";
            if (!verify(s, expect_of(de, be), what)) break;
            bool in_range = off <= bsize && n <= bsize - off;
            tgl_status want = !in_range ? (off + n < off ? TGL_ERROR_SIZE_OVERFLOW : TGL_ERROR_OUT_OF_BOUNDS)
                              : (n && null_ptr) ? TGL_ERROR_NULL_POINTER : TGL_OK;
            if (n && null_ptr && want != TGL_OK && s == TGL_ERROR_NULL_POINTER) want = s;  // either check may come first
            if (s != want)
                die("%s(offset %llu, %llu bytes, %s) of a %llu-byte buffer gave %s, expected %s (%s)", what,
                    (unsigned long long)off, (unsigned long long)n, null_ptr ? "NULL" : "ptr",
                    (unsigned long long)bsize, tgl_status_name(s), tgl_status_name(want), a.last_error_message());
            if (s != TGL_OK) break;
            for (uint64_t i = 0; i < n; ++i) {
                if (up) {
                    b->model[off + i] = host[i];
                    b->known[off + i] = 1;
                } else if (b->known[off + i] && host[i] != b->model[off + i]) {
                    die("buffer_download: byte %llu is %u, expected %u", (unsigned long long)(off + i), host[i],
                        b->model[off + i]);
                }
            }
            break;
        }
        case 8: {  // buffer_copy
            int de, se, te;
            size_t di = pick_dev(de);
            tgl_device d = dev_handle(di, r);
            tgl_buffer src = pick_buf(di, se);
            tgl_buffer dst = r.one_in(3) ? src : pick_buf(di, te);
            if (dst == src) te = se;
            Buf *sb = find_buf(src), *db = find_buf(dst);
            uint64_t ssize = sb ? sb->model.size() : 0, dsize = db ? db->model.size() : 0;
            uint64_t so = pick_offset(r, ssize), doff = pick_offset(r, dsize);
            uint64_t n = r.one_in(8) ? pick_offset(r, ssize)
                                     : r.u16() % (std::min(ssize - std::min(so, ssize), dsize - std::min(doff, dsize)) + 1);
            tgl_status s = a.buffer_copy(d, src, so, dst, doff, n);
            if (!verify(s, expect_of(de, expect_of(se, te)), "buffer_copy")) break;
            bool ok = so <= ssize && n <= ssize - so && doff <= dsize && n <= dsize - doff &&
                      !(src == dst && n && so < doff + n && doff < so + n);
            if (ok != (s == TGL_OK))
                die("buffer_copy(src off %llu, dst off %llu, %llu bytes; sizes %llu, %llu, %s) gave %s (%s)",
                    (unsigned long long)so, (unsigned long long)doff, (unsigned long long)n,
                    (unsigned long long)ssize, (unsigned long long)dsize, src == dst ? "same buffer" : "two buffers",
                    tgl_status_name(s), a.last_error_message());
            if (s != TGL_OK) break;
            std::vector<uint8_t> m(sb->model.begin() + so, sb->model.begin() + so + n);
            std::vector<uint8_t> k(sb->known.begin() + so, sb->known.begin() + so + n);
            std::copy(m.begin(), m.end(), db->model.begin() + doff);
            std::copy(k.begin(), k.end(), db->known.begin() + doff);
            break;
        }
        case 9: {  // buffer_fill
            int de, be;
            size_t di = pick_dev(de);
            tgl_device d = dev_handle(di, r);
            tgl_buffer h = pick_buf(di, be);
            Buf* b = find_buf(h);
            uint64_t bsize = b ? b->model.size() : 0;
            static const uint32_t kPatterns[] = {1, 2, 4, 8, 16, 0, 3, 32};
            uint32_t ps = kPatterns[r.below(8)];
            uint64_t off = pick_offset(r, bsize), n = r.one_in(6) ? pick_offset(r, bsize) : (off < bsize ? r.u16() % (bsize - off + 1) : 0);
            if (!r.one_in(6) && ps) {  // mostly aligned, so that fills happen
                off -= off % ps;
                n -= n % ps;
            }
            uint8_t pattern[32];
            r.bytes(pattern, sizeof pattern);
            bool null_ptr = r.one_in(16);
            tgl_status s = a.buffer_fill(d, h, off, n, null_ptr ? nullptr : pattern, ps);
            if (!verify(s, expect_of(de, be), "buffer_fill")) break;
            bool valid_ps = ps == 1 || ps == 2 || ps == 4 || ps == 8 || ps == 16;
            bool ok = !null_ptr && valid_ps && off % ps == 0 && n % ps == 0 && off <= bsize && n <= bsize - off;
            if (ok != (s == TGL_OK))
                die("buffer_fill(offset %llu, %llu bytes, pattern %u bytes%s) of a %llu-byte buffer gave %s (%s)",
                    (unsigned long long)off, (unsigned long long)n, ps, null_ptr ? ", NULL" : "",
                    (unsigned long long)bsize, tgl_status_name(s), a.last_error_message());
            if (s != TGL_OK) break;
            for (uint64_t i = 0; i < n; ++i) {
                b->model[off + i] = pattern[i % ps];
                b->known[off + i] = 1;
            }
            break;
        }
        case 10: {  // synchronize
            int de;
            size_t di = pick_dev(de);
            tgl_status s = a.synchronize(dev_handle(di, r));
            if (verify(s, de, "synchronize") && s != TGL_OK) die("synchronize failed: %s", a.last_error_message());
            break;
        }
        default: {  // a whole-buffer download check of a live buffer
            for (Buf& b : bufs) {
                if (!b.live || b.model.empty()) continue;
                std::vector<uint8_t> got(b.model.size());
                tgl_status s = check(a.buffer_download(devs[b.dev].h, b.h, 0, got.data(), got.size()), "buffer_download");
                if (s != TGL_OK) die("buffer_download of a live buffer failed: %s", a.last_error_message());
                for (size_t i = 0; i < got.size(); ++i)
                    if (b.known[i] && got[i] != b.model[i])
                        die("buffer contents: byte %zu is %u, expected %u", i, got[i], b.model[i]);
                break;
            }
            break;
        }
        }
    }
    // Everything the input left open is released (LeakSanitizer checks the rest): buffers of live
    // devices freed explicitly or by device_close, devices closed.
    for (Buf& b : bufs)
        if (b.live && r.one_in(2) && check(a.buffer_free(devs[b.dev].h, b.h), "buffer_free") != TGL_OK)
            die("buffer_free at the end failed: %s", a.last_error_message());
    for (Dev& d : devs)
        if (d.live && check(a.device_close(d.h), "device_close") != TGL_OK)
            die("device_close at the end failed: %s", a.last_error_message());
    return 0;
}
