// tensorgl-run: runs an ONNX model on a tensorgl plugin through the runtime's C API.
//
//   tensorgl-run model.onnx [--plugin=gles] [--device=0] [--input name=file.npy ...]
//                [--output-dir DIR] [--repeat N] [--profile] [--reference=cpu] [--seed N] [--graph]
//
// Inputs not given are filled from a fixed-seed generator (floats uniform in [-1, 1), integers 0,
// bools false) and the tool says so. Exit status: 0 success, 1 a runtime/model error, 2 bad usage.
#include "npy.hpp"

#include <tensorgl/runtime.h>

#include <getopt.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

const char* kUsage =
    "usage: tensorgl-run MODEL.onnx [options]\n"
    "  --plugin=NAME        plugin name or path (default gles)\n"
    "  --device=N           device index (default 0)\n"
    "  --input NAME=FILE    an input from a .npy file (repeatable; others get seeded random data)\n"
    "  --seed=N             seed of the generated inputs (default 0)\n"
    "  --output-dir=DIR     write every output as DIR/<name>.npy\n"
    "  --repeat=N           run N times and report the times (default 1)\n"
    "  --profile            per-node device time table (the plugin's GPU timer, ABI 1.1)\n"
    "  --graph              record the plan once as an ABI 1.2 graph and replay it on every run\n"
    "  --f64-as-f32         run a model with double tensors in f32 (f32's precision; see docs/runtime.md)\n"
    "  --reference=PLUGIN   also run on PLUGIN and print max abs/rel differences per output\n"
    "  --help\n";

struct Failure : std::runtime_error { using std::runtime_error::runtime_error; };

void check(tglrt_status s, const std::string& what) {
    if (s != TGLRT_OK) throw Failure(what + ": " + tglrt_status_name(s) + ": " + tglrt_last_error());
}

float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, bits;
    if (e == 0) {
        float f = std::ldexp((float)m, -24);
        return sign ? -f : f;
    }
    bits = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

// Element i of a host tensor as a double.
double element(const std::vector<uint8_t>& d, tglrt_dtype t, size_t i) {
    switch (t) {
    case TGLRT_DTYPE_FLOAT: { float f; std::memcpy(&f, &d[i * 4], 4); return f; }
    case TGLRT_DTYPE_FLOAT16: { uint16_t h; std::memcpy(&h, &d[i * 2], 2); return half_to_float(h); }
    case TGLRT_DTYPE_BFLOAT16: { uint32_t b = (uint32_t)((uint16_t)(d[i * 2] | d[i * 2 + 1] << 8)) << 16; float f; std::memcpy(&f, &b, 4); return f; }
    case TGLRT_DTYPE_INT32: { int32_t x; std::memcpy(&x, &d[i * 4], 4); return x; }
    case TGLRT_DTYPE_INT64: { int64_t x; std::memcpy(&x, &d[i * 8], 8); return (double)x; }
    case TGLRT_DTYPE_DOUBLE: { double x; std::memcpy(&x, &d[i * 8], 8); return x; }
    case TGLRT_DTYPE_INT16: { int16_t x; std::memcpy(&x, &d[i * 2], 2); return x; }
    case TGLRT_DTYPE_UINT16: { uint16_t x; std::memcpy(&x, &d[i * 2], 2); return x; }
    case TGLRT_DTYPE_UINT32: { uint32_t x; std::memcpy(&x, &d[i * 4], 4); return x; }
    case TGLRT_DTYPE_UINT64: { uint64_t x; std::memcpy(&x, &d[i * 8], 8); return (double)x; }
    case TGLRT_DTYPE_INT8: return (int8_t)d[i];
    default: return d[i];
    }
}

uint32_t elem_size(tglrt_dtype t) {
    return t == TGLRT_DTYPE_BFLOAT16 ? 2 : npy::elem_size(t);
}

std::string shape_str(const tglrt_tensor_info& ti) {
    std::string s = "(";
    for (uint32_t d = 0; d < ti.rank; ++d) s += (d ? ", " : "") + std::to_string(ti.shape[d]);
    return s + (ti.rank == 1 ? ",)" : ")");
}

struct Session {
    tglrt_device* dev = nullptr;
    tglrt_model* model = nullptr;
    ~Session() {
        tglrt_model_free(model);
        tglrt_device_close(dev);
    }
    void open(const std::string& plugin, uint32_t device, const std::string& path, bool graph, bool f64_as_f32) {
        check(tglrt_device_open(plugin.c_str(), device, &dev), "opening plugin '" + plugin + "'");
        tglrt_load_options o{};
        o.struct_size = sizeof o;
        o.record_graph = graph;
        o.f64_as_f32 = f64_as_f32;
        check(tglrt_model_load_ex(dev, path.c_str(), &o, &model), "loading '" + path + "' on " + plugin);
    }
    std::vector<std::vector<uint8_t>> run(const std::vector<std::vector<uint8_t>>& inputs) {
        std::vector<const void*> ip;
        std::vector<uint64_t> ib, ob;
        for (const auto& v : inputs) ip.push_back(v.data()), ib.push_back(v.size());
        std::vector<std::vector<uint8_t>> outs(tglrt_model_output_count(model));
        std::vector<void*> op;
        for (uint32_t i = 0; i < outs.size(); ++i) {
            tglrt_tensor_info ti;
            check(tglrt_model_output_info(model, i, &ti), "output info");
            outs[i].resize(ti.bytes);
            op.push_back(outs[i].data());
            ob.push_back(ti.bytes);
        }
        check(tglrt_model_run(model, ip.data(), ib.data(), (uint32_t)ip.size(), op.data(), ob.data(), (uint32_t)op.size()), "run");
        return outs;
    }
};

std::string safe_file_name(const std::string& name) {
    std::string r;
    for (char c : name) r += (std::isalnum((unsigned char)c) || c == '_' || c == '-' || c == '.') ? c : '_';
    if (r.empty() || r == "." || r == "..") r = "_" + r;
    return r;
}

int run(int argc, char** argv) {
    std::string plugin = "gles", output_dir, reference;
    uint32_t device = 0;
    long repeat = 1;
    unsigned long seed = 0;
    bool profile = false, graph = false, f64_as_f32 = false;
    std::map<std::string, std::string> input_files;
    enum { O_PLUGIN = 1, O_DEVICE, O_INPUT, O_OUTDIR, O_REPEAT, O_PROFILE, O_REFERENCE, O_SEED, O_GRAPH, O_F64, O_HELP };
    static const option opts[] = {
        {"plugin", required_argument, nullptr, O_PLUGIN}, {"device", required_argument, nullptr, O_DEVICE},
        {"input", required_argument, nullptr, O_INPUT},   {"output-dir", required_argument, nullptr, O_OUTDIR},
        {"repeat", required_argument, nullptr, O_REPEAT}, {"profile", no_argument, nullptr, O_PROFILE},
        {"reference", required_argument, nullptr, O_REFERENCE}, {"seed", required_argument, nullptr, O_SEED},
        {"graph", no_argument, nullptr, O_GRAPH}, {"f64-as-f32", no_argument, nullptr, O_F64}, {"help", no_argument, nullptr, O_HELP}, {nullptr, 0, nullptr, 0}};
    auto number = [](const char* opt, const char* s, long lo, long hi) {
        char* end = nullptr;
        errno = 0;
        long v = std::strtol(s, &end, 10);
        if (errno || !end || *end || v < lo || v > hi)
            throw std::invalid_argument(std::string("--") + opt + " expects an integer in [" + std::to_string(lo) + ", " +
                                        std::to_string(hi) + "], got '" + s + "'");
        return v;
    };
    try {
        int c;
        while ((c = getopt_long(argc, argv, "", opts, nullptr)) != -1) {
            switch (c) {
            case O_PLUGIN: plugin = optarg; break;
            case O_DEVICE: device = (uint32_t)number("device", optarg, 0, 1 << 20); break;
            case O_INPUT: {
                const char* eq = std::strchr(optarg, '=');
                if (!eq || eq == optarg || !eq[1]) throw std::invalid_argument(std::string("--input expects NAME=FILE.npy, got '") + optarg + "'");
                std::string name(optarg, (size_t)(eq - optarg));
                if (input_files.count(name)) throw std::invalid_argument("--input '" + name + "' given twice");
                input_files[name] = eq + 1;
                break;
            }
            case O_OUTDIR: output_dir = optarg; break;
            case O_REPEAT: repeat = number("repeat", optarg, 1, 1000000); break;
            case O_PROFILE: profile = true; break;
            case O_GRAPH: graph = true; break;
            case O_F64: f64_as_f32 = true; break;
            case O_REFERENCE: reference = optarg; break;
            case O_SEED: seed = (unsigned long)number("seed", optarg, 0, 0x7fffffff); break;
            case O_HELP: std::fputs(kUsage, stdout); return 0;
            default: std::fputs(kUsage, stderr); return 2;
            }
        }
        if (optind != argc - 1) throw std::invalid_argument(optind >= argc ? "no model given" : std::string("unexpected argument '") + argv[optind + 1] + "'");
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "tensorgl-run: %s\n%s", e.what(), kUsage);
        return 2;
    }
    std::string model_path = argv[optind];

    Session s;
    s.open(plugin, device, model_path, graph, f64_as_f32);
    uint64_t wbytes = 0, peak = 0, naive = 0;
    check(tglrt_model_memory(s.model, &wbytes, &peak, &naive), "memory");
    std::printf("model %s on %s: %u inputs, %u outputs; weights %.1f KiB, activations peak %.1f KiB (%.1f KiB without reuse)\n",
                model_path.c_str(), tglrt_device_plugin_name(s.dev), tglrt_model_input_count(s.model),
                tglrt_model_output_count(s.model), wbytes / 1024.0, peak / 1024.0, naive / 1024.0);

    // Inputs.
    std::vector<std::vector<uint8_t>> inputs;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::map<std::string, std::string> unused = input_files;
    for (uint32_t i = 0; i < tglrt_model_input_count(s.model); ++i) {
        tglrt_tensor_info ti;
        check(tglrt_model_input_info(s.model, i, &ti), "input info");
        auto it = input_files.find(ti.name);
        if (it != input_files.end()) {
            unused.erase(ti.name);
            npy::Array a = npy::read(it->second);
            bool same_shape = a.shape.size() == ti.rank && std::equal(a.shape.begin(), a.shape.end(), ti.shape);
            if (a.dtype != ti.dtype || !same_shape)
                throw Failure("input '" + std::string(ti.name) + "' expects " + npy::dtype_name(ti.dtype) + " " + shape_str(ti) + "; '" +
                              it->second + "' holds " + npy::dtype_name(a.dtype) + " of rank " + std::to_string(a.shape.size()) +
                              (same_shape ? " (same shape)" : " (another shape)"));
            inputs.push_back(std::move(a.data));
            std::printf("input  %-20s %-8s %-16s from %s\n", ti.name, npy::dtype_name(ti.dtype), shape_str(ti).c_str(), it->second.c_str());
            continue;
        }
        std::vector<uint8_t> d(ti.bytes, 0);
        if (ti.dtype == TGLRT_DTYPE_FLOAT)
            for (uint64_t k = 0; k < ti.bytes / 4; ++k) { float f = uni(rng); std::memcpy(&d[k * 4], &f, 4); }
        else if (ti.dtype != TGLRT_DTYPE_FLOAT16 && ti.dtype != TGLRT_DTYPE_BFLOAT16)
            ;  // integers and bools: zeros (valid indices, shapes of nothing)
        else throw Failure("input '" + std::string(ti.name) + "' (" + npy::dtype_name(ti.dtype) + ") needs --input: only float32 inputs are generated");
        inputs.push_back(std::move(d));
        std::printf("input  %-20s %-8s %-16s generated (seed %lu)\n", ti.name, npy::dtype_name(ti.dtype), shape_str(ti).c_str(), seed);
    }
    if (!unused.empty()) throw Failure("--input '" + unused.begin()->first + "': the model has no input of that name");

    // Runs.
    std::vector<std::vector<uint8_t>> outs;
    std::vector<double> times;
    for (long r = 0; r < repeat; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        outs = s.run(inputs);
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(times.begin(), times.end());
    double sum = 0;
    for (double t : times) sum += t;
    std::printf("ran %ld time(s)%s: median %.3f ms, min %.3f ms, mean %.3f ms (host wall time, inputs and outputs included)\n", repeat,
                graph ? " (graph replay)" : "", times[times.size() / 2], times.front(), sum / times.size());

    if (!output_dir.empty()) {
        struct stat st;
        if (stat(output_dir.c_str(), &st) != 0 && mkdir(output_dir.c_str(), 0755) != 0)
            throw Failure("cannot create --output-dir '" + output_dir + "': " + std::strerror(errno));
    }
    for (uint32_t i = 0; i < outs.size(); ++i) {
        tglrt_tensor_info ti;
        check(tglrt_model_output_info(s.model, i, &ti), "output info");
        size_t n = ti.bytes / std::max<uint32_t>(elem_size(ti.dtype), 1);
        double lo = INFINITY, hi = -INFINITY, mean = 0;
        size_t nan = 0;
        for (size_t k = 0; k < n; ++k) {
            double v = element(outs[i], ti.dtype, k);
            if (std::isnan(v)) { ++nan; continue; }
            lo = std::min(lo, v);
            hi = std::max(hi, v);
            mean += v;
        }
        std::printf("output %-20s %-8s %-16s min %.6g max %.6g mean %.6g%s  first:", ti.name, npy::dtype_name(ti.dtype), shape_str(ti).c_str(),
                    lo, hi, n > nan ? mean / (n - nan) : NAN, nan ? (" NaN: " + std::to_string(nan)).c_str() : "");
        for (size_t k = 0; k < std::min<size_t>(n, 6); ++k) std::printf(" %.6g", element(outs[i], ti.dtype, k));
        std::printf("\n");
        if (!output_dir.empty()) {
            npy::Array a;
            a.dtype = ti.dtype;
            a.shape.assign(ti.shape, ti.shape + ti.rank);
            a.data = outs[i];
            std::string path = output_dir + "/" + safe_file_name(ti.name) + ".npy";
            npy::write(path, a);
            std::printf("       written to %s\n", path.c_str());
        }
    }

    if (profile) {
        check(tglrt_model_set_profiling(s.model, 1), "profiling");
        s.run(inputs);
        check(tglrt_model_set_profiling(s.model, 0), "profiling");
        struct Row { std::string name, op; uint32_t ops; uint64_t ns; };
        std::vector<Row> rows;
        uint64_t total = 0;
        int timer = 0;
        for (uint32_t i = 0; i < tglrt_model_profile_count(s.model); ++i) {
            tglrt_profile_entry e;
            check(tglrt_model_profile_entry(s.model, i, &e), "profile entry");
            rows.push_back({e.node_name, e.op_type, e.device_ops, e.total_ns});
            total += e.total_ns;
            timer = (int)e.device_timer;
        }
        std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });
        std::printf("\nprofile (one run, %s; each node timed alone)\n", timer ? "device timer" : "host wall time around each node: the plugin has no device timer");
        std::printf("  %-32s %-20s %7s %12s %7s\n", "node", "op type", "dev ops", "time (us)", "share");
        for (const Row& r : rows)
            std::printf("  %-32s %-20s %7u %12.1f %6.1f%%\n", r.name.c_str(), r.op.c_str(), r.ops, r.ns / 1e3, total ? 100.0 * r.ns / total : 0.0);
        std::printf("  %-32s %-20s %7s %12.1f\n", "total", "", "", total / 1e3);
    }

    if (!reference.empty()) {
        Session ref;
        ref.open(reference, 0, model_path, false, f64_as_f32);
        auto routs = ref.run(inputs);
        std::printf("\nreference %s vs %s:\n", reference.c_str(), plugin.c_str());
        for (uint32_t i = 0; i < outs.size(); ++i) {
            tglrt_tensor_info ti;
            check(tglrt_model_output_info(s.model, i, &ti), "output info");
            size_t n = ti.bytes / std::max<uint32_t>(elem_size(ti.dtype), 1);
            double max_abs = 0, max_rel = 0;
            size_t nan_mismatch = 0;
            for (size_t k = 0; k < n; ++k) {
                double a = element(outs[i], ti.dtype, k), b = element(routs[i], ti.dtype, k);
                if (std::isnan(a) || std::isnan(b)) { nan_mismatch += std::isnan(a) != std::isnan(b); continue; }
                if (a == b) continue;  // equal infinities too
                double d = std::fabs(a - b);
                max_abs = std::max(max_abs, d);
                max_rel = std::max(max_rel, d / std::max(std::fabs(b), 1e-30));
            }
            std::printf("  %-20s max abs diff %.3g  max rel diff %.3g%s\n", ti.name, max_abs, max_rel,
                        nan_mismatch ? (" NaN mismatches: " + std::to_string(nan_mismatch)).c_str() : "");
        }
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        return run(argc, argv);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tensorgl-run: %s\n", e.what());
        return 1;
    }
}
