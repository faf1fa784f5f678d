#include "npy.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace npy {

namespace {

struct Descr { const char* descr; tglrt_dtype dtype; const char* name; uint32_t size; };
const Descr kDescrs[] = {
    {"<f4", TGLRT_DTYPE_FLOAT, "float32", 4}, {"<f2", TGLRT_DTYPE_FLOAT16, "float16", 2},
    {"<i4", TGLRT_DTYPE_INT32, "int32", 4},   {"<i8", TGLRT_DTYPE_INT64, "int64", 8},
    {"|i1", TGLRT_DTYPE_INT8, "int8", 1},     {"|u1", TGLRT_DTYPE_UINT8, "uint8", 1},
    {"|b1", TGLRT_DTYPE_BOOL, "bool", 1},     {"<f8", TGLRT_DTYPE_DOUBLE, "float64", 8},
    {"<i2", TGLRT_DTYPE_INT16, "int16", 2},   {"<u2", TGLRT_DTYPE_UINT16, "uint16", 2},
    {"<u4", TGLRT_DTYPE_UINT32, "uint32", 4}, {"<u8", TGLRT_DTYPE_UINT64, "uint64", 8},
};

const Descr* by_dtype(tglrt_dtype t) {
    for (const Descr& d : kDescrs)
        if (d.dtype == t) return &d;
    return nullptr;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error("'" + path + "': " + what);
}

// The value of `key` in the header dict, as its raw text up to the next top-level ',' or '}'.
std::string field(const std::string& path, const std::string& header, const std::string& key) {
    size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) fail(path, "the .npy header has no '" + key + "'");
    size_t colon = header.find(':', k);
    if (colon == std::string::npos) fail(path, "malformed .npy header");
    size_t i = colon + 1, depth = 0, start = i;
    for (; i < header.size(); ++i) {
        char c = header[i];
        if (c == '(') ++depth;
        else if (c == ')') { if (depth == 0) break; --depth; }
        else if ((c == ',' || c == '}') && depth == 0) break;
    }
    std::string v = header.substr(start, i - start + (i < header.size() && header[i] == ')' ? 1 : 0));
    size_t a = v.find_first_not_of(" "), b = v.find_last_not_of(" ");
    return a == std::string::npos ? "" : v.substr(a, b - a + 1);
}

}  // namespace

const char* dtype_name(tglrt_dtype t) {
    const Descr* d = by_dtype(t);
    return d ? d->name : "unsupported";
}
uint32_t elem_size(tglrt_dtype t) {
    const Descr* d = by_dtype(t);
    return d ? d->size : 0;
}

Array read(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) fail(path, std::string("cannot open: ") + std::strerror(errno));
    f.seekg(0, std::ios::end);
    std::streamoff file_size = f.tellg();
    f.seekg(0);
    char magic[8];
    if (file_size < 10 || !f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0)
        fail(path, "not a .npy file (no \\x93NUMPY magic)");
    uint8_t major = (uint8_t)magic[6];
    if (major < 1 || major > 3) fail(path, "unknown .npy version " + std::to_string(major));
    uint64_t hlen = 0;
    unsigned char lb[4] = {0, 0, 0, 0};
    if (!f.read((char*)lb, major == 1 ? 2 : 4)) fail(path, "truncated header");
    hlen = lb[0] | (lb[1] << 8) | ((uint64_t)lb[2] << 16) | ((uint64_t)lb[3] << 24);
    if (hlen > 65536 || (std::streamoff)hlen > file_size) fail(path, "header length " + std::to_string(hlen) + " is implausible");
    std::string header(hlen, '\0');
    if (hlen && !f.read(&header[0], (std::streamsize)hlen)) fail(path, "truncated header");
    std::string descr = field(path, header, "descr"), fortran = field(path, header, "fortran_order"),
                shape = field(path, header, "shape");
    if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"')) fail(path, "descr " + descr + " is not a simple dtype");
    descr = descr.substr(1, descr.size() - 2);
    if (descr == "=f4") descr = "<f4";  // native order on a little-endian host
    const Descr* d = nullptr;
    for (const Descr& k : kDescrs)
        if (descr == k.descr || (descr[0] == '<' && k.descr[0] == '|' && descr.substr(1) == k.descr + 1)) d = &k;
    if (!d) fail(path, "dtype '" + descr + "' is not supported (float32, float64, float16, int32, int64, int16, uint16, uint32, uint64, int8, uint8, bool; little-endian)");
    if (fortran != "False") fail(path, "fortran_order arrays are not supported (save a C-order array)");
    if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')') fail(path, "shape " + shape + " is not a tuple");
    Array a;
    a.dtype = d->dtype;
    std::string inner = shape.substr(1, shape.size() - 2);
    size_t pos = 0;
    uint64_t n = 1;
    while (pos < inner.size()) {
        size_t comma = inner.find(',', pos);
        std::string tok = inner.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        size_t s = tok.find_first_not_of(' ');
        if (s != std::string::npos) {
            tok = tok.substr(s);
            char* end = nullptr;
            errno = 0;
            long long v = std::strtoll(tok.c_str(), &end, 10);
            while (end && *end == ' ') ++end;
            if (errno || !end || *end || v < 0) fail(path, "shape entry '" + tok + "' is not a dim");
            a.shape.push_back(v);
            if (v && n > (uint64_t)file_size / (uint64_t)v) fail(path, "shape " + shape + " is larger than the file");
            n *= (uint64_t)v;
        }
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    if (a.shape.size() > TGLRT_MAX_RANK) fail(path, "rank above 8");
    uint64_t bytes = n * d->size, data_at = (major == 1 ? 10 : 12) + hlen;
    if ((uint64_t)file_size - data_at != bytes)
        fail(path, "holds " + std::to_string((uint64_t)file_size - data_at) + " data bytes; shape " + shape + " of " + d->name +
                       " needs " + std::to_string(bytes));
    a.data.resize(bytes);
    if (bytes && !f.read((char*)a.data.data(), (std::streamsize)bytes)) fail(path, "truncated data");
    return a;
}

void write(const std::string& path, const Array& a) {
    const Descr* d = by_dtype(a.dtype);
    if (!d) throw std::runtime_error("'" + path + "': dtype " + std::to_string(a.dtype) + " cannot be written as .npy");
    std::string shape = "(";
    for (size_t i = 0; i < a.shape.size(); ++i) shape += std::to_string(a.shape[i]) + (a.shape.size() == 1 ? "," : (i + 1 < a.shape.size() ? ", " : ""));
    shape += ")";
    std::string header = "{'descr': '" + std::string(d->descr) + "', 'fortran_order': False, 'shape': " + shape + ", }";
    size_t total = 10 + header.size() + 1;
    header.append((64 - total % 64) % 64, ' ');
    header += '\n';
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error("'" + path + "': cannot create: " + std::strerror(errno));
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(header.size() & 0xff), (unsigned char)(header.size() >> 8)};
    f.write((const char*)pre, 10);
    f.write(header.data(), (std::streamsize)header.size());
    f.write((const char*)a.data.data(), (std::streamsize)a.data.size());
    if (!f) throw std::runtime_error("'" + path + "': write failed");
}

}  // namespace npy
