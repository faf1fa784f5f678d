// .npy files (NumPy's format, versions 1-3): read with every field validated, and written.
#pragma once

#include <tensorgl/runtime.h>

#include <cstdint>
#include <string>
#include <vector>

namespace npy {

struct Array {
    tglrt_dtype dtype = TGLRT_DTYPE_UNDEFINED;
    std::vector<int64_t> shape;
    std::vector<uint8_t> data;  // C order, little-endian
};

// Throws std::runtime_error naming the file and what is wrong.
Array read(const std::string& path);
void write(const std::string& path, const Array& a);
// "float32" etc.; NumPy's descr ("<f4") of a dtype, empty if .npy cannot hold it.
const char* dtype_name(tglrt_dtype t);
uint32_t elem_size(tglrt_dtype t);

}  // namespace npy
