// A short program of ops over a few buffers, run on one device of a plugin either op by op
// (run_op) or recorded as a graph and replayed, with every buffer read back afterwards: the graph
// tests compare the two bit for bit (graph fusion must not change any buffer, intermediates
// included), and against another plugin.
#pragma once

#include "tgl_test/support.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tgl_test {

struct ProgramTensor {
    int buffer = 0;  // -1: an absent optional operand (a zeroed tgl_tensor)
    tgl_dtype dtype = TGL_DTYPE_F32;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;  // elements; empty: contiguous
    int64_t offset = 0;            // elements
};

struct ProgramOp {
    tgl_op op;
    std::vector<ProgramTensor> inputs;
    ProgramTensor output;
    std::vector<uint8_t> params;  // the params struct's bytes; empty: NULL
};

struct OpProgram {
    struct Buffer {
        tgl_dtype dtype;  // of the values random_contents puts there
        int64_t elements;
    };
    std::vector<Buffer> buffers;
    std::vector<ProgramOp> ops;
    // Buffer contents: values in [lo, hi] of each buffer's dtype.
    std::vector<std::vector<uint8_t>> random_contents(Rng& rng, double lo = -2, double hi = 2) const;
};

// A params struct's bytes (ProgramOp::params).
template <class P>
std::vector<uint8_t> params_bytes(const P& p) {
    const uint8_t* b = reinterpret_cast<const uint8_t*>(&p);
    return std::vector<uint8_t>(b, b + sizeof p);
}

// A device of its own (graph recording is per device) with the program's buffers. `env` (optional,
// "NAME=value"): set while the device is opened (the GLES plugin reads TGL_GRAPH_FUSION there), the
// variable's old value restored after.
class ProgramDevice {
public:
    ProgramDevice(Role role, const OpProgram& program, const char* env = nullptr);
    ~ProgramDevice();
    ProgramDevice(const ProgramDevice&) = delete;
    ProgramDevice& operator=(const ProgramDevice&) = delete;

    void upload(const std::vector<std::vector<uint8_t>>& contents);
    std::vector<std::vector<uint8_t>> read_all();
    void run_direct();            // every op by run_op
    tgl_graph record();           // graph_begin, every op, graph_end
    void replay(tgl_graph g);
    void replay_with(tgl_graph g, const std::vector<tgl_graph_binding>& bindings);
    tgl_tensor tensor(const ProgramTensor& t) const;
    tgl_buffer buffer(int i) const { return buffers_[size_t(i)]; }
    // A device counter of the plugin (device_properties), or -1 where it has none.
    long long property(const char* name) const;

    const tgl_plugin_api& api;
    tgl_device h = 0;

private:
    void check(tgl_status s, const std::string& what) const;
    Role role_;
    const OpProgram& program_;
    std::vector<tgl_buffer> buffers_;
};

// "" when a == b (every buffer, byte for byte), else where they first differ (buffer, element).
std::string first_difference(const OpProgram& program, const std::vector<std::vector<uint8_t>>& a,
                             const std::vector<std::vector<uint8_t>>& b);

}  // namespace tgl_test
