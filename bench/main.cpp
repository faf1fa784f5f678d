// tensorgl-bench: times tensorgl ops on any plugin (see bench/README.md).
//
//   tensorgl-bench [--plugin=gles|cpu|PATH] [--device=N] [--suite=LIST | --op=NAME [--shape=LIST]]
//                  [--dtype=LIST] [--broadcast] [--axis=K] [--variant=V] [--quick]
//                  [--baseline=PLUGIN] [--json=FILE] [--csv=FILE] [--max-time=S] [--list]
//   tensorgl-bench --compare A.json B.json [--markdown]
//   tensorgl-bench --help | --version
// Options take their value as --opt=VALUE or --opt VALUE (getopt_long); a bad option or value
// exits with status 2 and a message naming both.
#include "cases.h"
#include "gpu_clock.h"
#include "report.h"
#include "timing.h"

#include <tensorgl/tensorgl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <cerrno>
#include <climits>
#include <cctype>
#include <dirent.h>
#include <getopt.h>
#include <spawn.h>
#include <sys/stat.h>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace bench {
namespace {

const double g_process_start = now_s();  // as early as static initialization gets

// ---------------------------------------------------------------------------------------------
// Options.

struct Options {
    std::string plugin = "gles", baseline;
    uint32_t device = 0;
    std::vector<std::string> suites;
    std::string op, variant;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<tgl_dtype> dtypes = {TGL_DTYPE_F32};
    bool quick = false, list = false, markdown = false, child_first_op = false;
    std::string json_path, csv_path;
    std::vector<std::string> compare;
    TimingConfig timing;
    std::optional<double> max_time;
};

const char* kUsage =
    "usage: tensorgl-bench [options]\n"
    "       tensorgl-bench --compare A.json B.json [--markdown]\n"
    "Every option with a value takes it as --opt=VALUE or --opt VALUE.\n"
    "  --plugin=NAME|PATH   plugin to time (default gles)\n"
    "  --baseline=NAME|PATH also run the same cases on this plugin and print B/A ratios\n"
    "  --device=N           device index (default 0)\n"
    "  --suite=LIST         comma-separated suites (default all; see below)\n"
    "  --op=NAME            one op instead of suites (see below; also copy, fill, first_op)\n"
    "  --shape=LIST         shapes for --op, e.g. 4096x4096x4096 or 1024,4096 (matmul: MxKxN or\n"
    "                       BxMxKxN); default: the suite table's shapes of that op\n"
    "  --dtype=LIST         f32 (default), f16, bf16, i32, i8, u8, bool; unsupported ones are\n"
    "                       listed as skipped\n"
    "  --broadcast          binary ops: b is the last dim of a (a scalar for a 1-D shape)\n"
    "  --axis=K             reductions/softmax: reduce along axis K (default: the last)\n"
    "  --variant=V          chain (dependent in-place runs), graph (the chain recorded once as an\n"
    "                       ABI 1.2 graph and replayed) or sync (one op + synchronize per run)\n"
    "  --quick              tiny shapes and short timing (checks the runner; exits 1 if any\n"
    "                       result is missing or nonsensical)\n"
    "  --max-time=S         timed sampling per case stops after S seconds (default 2, quick 0.15)\n"
    "  --json=FILE --csv=FILE   write the results\n"
    "  --compare A.json B.json  print per-row B/A throughput of two result files (--markdown)\n"
    "  --list               print the cases that would run and exit\n"
    "  --version            print the version and exit\n"
    "  --help, -h           print this help (with the ops of --plugin) and exit\n"
    "The % copy column compares with a buffer_copy of as many bytes as the largest case moves\n"
    "(run first when the copy suite is not asked for).\n";

std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t p = s.find(sep, start);
        out.push_back(s.substr(start, p - start));
        if (p == std::string::npos) break;
        start = p + 1;
    }
    return out;
}

// A bad command line: the message names the option and the value it was given.
[[noreturn]] void bad_value(const char* option, const std::string& value, const std::string& expected) {
    throw std::invalid_argument(std::string("--") + option + ": expected " + expected + ", got \"" + value + "\"");
}

// A decimal integer in [lo, hi] (digits with an optional leading '-'), all of `text`.
bool parse_int(const std::string& text, long long lo, long long hi, long long& out) {
    if (text.empty() || text.size() > 20) return false;
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno || *end || !(std::isdigit(static_cast<unsigned char>(text[0])) || text[0] == '-')) return false;
    if (v < lo || v > hi) return false;
    out = v;
    return true;
}

std::vector<int64_t> parse_shape(const std::string& s) {
    std::vector<int64_t> dims;
    for (const auto& part : split(s, 'x')) {
        long long v = 0;
        if (!parse_int(part, 0, INT64_MAX, v))  // 0 is conv2d's padding; the recipes check the rest
            bad_value("shape", s, "dims that are integers from 0 joined by x, e.g. 4096x4096 (a list: 1024,4096)");
        dims.push_back(v);
    }
    return dims;
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
}

// The ops --op can time on `plugin`: those of its catalogue that cases.cpp has a recipe for.
std::vector<std::string> runnable_ops(const tgl::Plugin& plugin) {
    std::vector<std::string> ops;
    const Catalogue cat = load_catalogue(plugin);
    for (const auto& entry : cat) {
        const std::string& name = entry.first;
        Case c;
        c.op = name;
        c.dims = {2, 2};  // the shape each family's recipe takes, at its smallest
        if (name == "matmul") c.dims = {2, 2, 2};
        if (name == "conv2d") c.dims = {1, 1, 4, 4, 1, 1, 1, 1, 0};
        if (name == "attention") c.dims = {1, 1, 2, 2, 4};
        Workload w;
        std::string why;
        if (plan_case(c, cat, w, why) == Plan::Run) ops.push_back(name);
    }
    return ops;
}

void print_help(const std::string& plugin_spec) {
    std::printf("%s", kUsage);
    std::printf("\nsuites (--suite; elementwise = unary + binary, all = every suite):\n");
    for (const auto& suite : suite_names()) {
        std::vector<std::string> ops;
        for (const auto& e : suite_table())
            if (e.suite == suite && std::find(ops.begin(), ops.end(), e.op) == ops.end()) ops.push_back(e.op);
        if (!ops.empty()) std::printf("  %-10s %s\n", suite.c_str(), joined(ops).c_str());
    }
    std::printf("\nops (--op) of plugin \"%s\":\n", plugin_spec.c_str());
    try {
        tgl::Plugin plugin(plugin_spec);
        std::string line = " ";
        for (const auto& op : runnable_ops(plugin)) {  // wrapped at 100 columns
            if (line.size() + op.size() > 98) std::printf("%s\n", line.c_str()), line = " ";
            line += " " + op + ",";
        }
        std::printf("%s\n", line.c_str());
    } catch (const std::exception& e) {
        std::printf("  (not listed: %s)\n", e.what());
    }
    std::printf("  and the pseudo-ops copy (buffer_copy), fill (buffer_fill), first_op\n");
}

Options parse_args(int argc, char** argv) {
    enum {
        kPlugin = 256, kBaseline, kDevice, kSuite, kOp, kShape, kDtype, kBroadcast, kAxis, kVariant, kQuick,
        kList, kMarkdown, kChildFirstOp, kJson, kCsv, kMaxTime, kCompare, kVersion, kHelp
    };
    static const option kLong[] = {
        {"plugin", required_argument, nullptr, kPlugin},     {"baseline", required_argument, nullptr, kBaseline},
        {"device", required_argument, nullptr, kDevice},     {"suite", required_argument, nullptr, kSuite},
        {"op", required_argument, nullptr, kOp},             {"shape", required_argument, nullptr, kShape},
        {"dtype", required_argument, nullptr, kDtype},       {"broadcast", no_argument, nullptr, kBroadcast},
        {"axis", required_argument, nullptr, kAxis},         {"variant", required_argument, nullptr, kVariant},
        {"quick", no_argument, nullptr, kQuick},             {"list", no_argument, nullptr, kList},
        {"markdown", no_argument, nullptr, kMarkdown},       {"child-first-op", no_argument, nullptr, kChildFirstOp},
        {"json", required_argument, nullptr, kJson},         {"csv", required_argument, nullptr, kCsv},
        {"max-time", required_argument, nullptr, kMaxTime},  {"compare", required_argument, nullptr, kCompare},
        {"version", no_argument, nullptr, kVersion},         {"help", no_argument, nullptr, kHelp},
        {nullptr, 0, nullptr, 0}};
    // What getopt_long could not take, said with the option's name: unknown, ambiguous (a prefix
    // of several), missing its value, or given a value it does not take.
    auto refuse = [&](const std::string& arg, bool missing_value) {
        const std::string name = arg.substr(0, arg.find('='));
        const std::string bare = name.compare(0, 2, "--") == 0 ? name.substr(2) : name;
        std::vector<std::string> matches;
        for (const option* l = kLong; l->name; ++l)
            if (bare == l->name) matches = {l->name};
        if (matches.empty() && name.compare(0, 2, "--") == 0)
            for (const option* l = kLong; l->name; ++l)
                if (std::string(l->name).compare(0, bare.size(), bare) == 0) matches.push_back(std::string("--") + l->name);
        if (missing_value)
            throw std::invalid_argument(name + " needs a value: " + name + "=VALUE or " + name + " VALUE");
        if (matches.size() == 1 && arg.find('=') != std::string::npos)
            throw std::invalid_argument(name + " takes no value (got \"" + arg + "\")");
        if (matches.size() > 1)
            throw std::invalid_argument("option \"" + arg + "\" is ambiguous: " + joined(matches));
        throw std::invalid_argument("unknown option \"" + arg + "\" (see --help)");
    };

    Options o;
    bool help = false, version = false;
    opterr = 0;  // the errors are ours (refuse), with the option's name
    optind = 1;
    for (;;) {
        const int prev = optind;
        const int c = getopt_long(argc, argv, ":h", kLong, nullptr);
        if (c == -1) break;
        const std::string v = optarg ? optarg : "";
        // The argument getopt_long just looked at (for a missing value, it may be the last one).
        const std::string arg = argv[std::min(prev, argc - 1)];
        switch (c) {
        case 'h': case kHelp: help = true; break;
        case kVersion: version = true; break;
        case kPlugin: case kBaseline:
            if (v.empty()) bad_value(c == kPlugin ? "plugin" : "baseline", v, "a plugin name (gles, cpu) or a path");
            (c == kPlugin ? o.plugin : o.baseline) = v;
            break;
        case kDevice: {
            long long d = 0;
            if (!parse_int(v, 0, UINT32_MAX, d)) bad_value("device", v, "a device index (an integer from 0)");
            o.device = static_cast<uint32_t>(d);
            break;
        }
        case kSuite:
            for (auto& s : split(v, ',')) {
                bool known = false;
                for (const auto& n : suite_names()) known = known || n == s;
                if (!known) bad_value("suite", v, "suites among " + joined(suite_names()));
                o.suites.push_back(s);
            }
            break;
        case kOp:
            if (v.empty()) bad_value("op", v, "an op name (see --help)");
            o.op = v;
            break;
        case kShape: for (auto& s : split(v, ',')) o.shapes.push_back(parse_shape(s)); break;
        case kDtype:
            o.dtypes.clear();
            for (auto& s : split(v, ','))
                if (tgl_dtype dt = parse_dtype(s)) o.dtypes.push_back(dt);
                else bad_value("dtype", v, "dtypes among f32, f16, bf16, i32, i8, u8, bool");
            break;
        case kBroadcast: o.variant = "broadcast"; break;
        case kAxis: {
            long long a = 0;
            if (!parse_int(v, -TGL_MAX_RANK, TGL_MAX_RANK - 1, a))
                bad_value("axis", v, "an axis, an integer from " + std::to_string(-TGL_MAX_RANK) + " to " +
                                         std::to_string(TGL_MAX_RANK - 1));
            o.variant = "dim" + std::to_string(a);
            break;
        }
        case kVariant: {
            static const char* const kVariants[] = {"broadcast", "chain", "graph", "sync", "causal", "cold", "warm"};
            long long a = 0;
            bool known = v.compare(0, 3, "dim") == 0 && parse_int(v.substr(3), -TGL_MAX_RANK, TGL_MAX_RANK - 1, a);
            for (const char* k : kVariants) known = known || v == k;
            if (!known) bad_value("variant", v, "chain, graph, sync, broadcast, causal, cold, warm or dimK");
            o.variant = v;
            break;
        }
        case kQuick: o.quick = true; break;
        case kList: o.list = true; break;
        case kMarkdown: o.markdown = true; break;
        case kChildFirstOp: o.child_first_op = true; break;  // internal: spawned by the first_op suite
        case kJson: if (v.empty()) bad_value("json", v, "a file name"); o.json_path = v; break;
        case kCsv: if (v.empty()) bad_value("csv", v, "a file name"); o.csv_path = v; break;
        case kMaxTime: {
            errno = 0;
            char* end = nullptr;
            double t = std::strtod(v.c_str(), &end);
            if (v.empty() || *end || errno || !std::isfinite(t) || !(t > 0))
                bad_value("max-time", v, "a positive number of seconds, e.g. 0.5");
            o.max_time = t;
            break;
        }
        case kCompare: o.compare = {v}; break;
        case ':': refuse(arg, true); break;
        default: refuse(arg, false); break;
        }
    }
    if (help) {
        print_help(o.plugin);
        std::exit(0);
    }
    if (version) {
        std::printf("tensorgl-bench %s (plugin ABI headers %d.%d)\n", TGL_BENCH_VERSION, TGL_ABI_MAJOR, TGL_ABI_MINOR);
        std::exit(0);
    }
    // Operands: only --compare's second file.
    std::vector<std::string> rest(argv + optind, argv + argc);
    if (!o.compare.empty()) {
        if (rest.size() != 1)
            throw std::invalid_argument("--compare needs two JSON files: --compare A.json B.json (got " +
                                        std::to_string(1 + rest.size()) + ")");
        o.compare.push_back(rest[0]);
    } else if (!rest.empty()) {
        throw std::invalid_argument("unexpected argument \"" + rest[0] + "\" (options start with --; see --help)");
    }
    if (!o.op.empty() && !o.suites.empty())
        throw std::invalid_argument("--op and --suite exclude each other");
    if (o.op == "copy") o.op = kBufferCopy;
    if (o.op == "fill") o.op = kBufferFill;
    if (o.quick) {
        o.timing.warmup_s = 0;
        o.timing.target_sample_s = 0.002;
        o.timing.max_batch = 20;
        o.timing.min_samples = 3;
        o.timing.max_samples = 20;
        o.timing.max_time_s = 0.15;
    }
    if (o.max_time) o.timing.max_time_s = *o.max_time;
    o.timing.clock_ready = sm_clock_ramped;
    return o;
}

// The cases to run: the suite table's rows (or --op's shapes), once per dtype.
std::vector<Case> build_cases(const Options& o) {
    std::vector<Case> cases;
    auto add = [&](const SuiteEntry* e, const std::string& suite, const std::string& op,
                   const std::string& variant, const std::vector<int64_t>& dims) {
        std::vector<tgl_dtype> dts = o.dtypes;
        if (e && e->dtype) dts = {parse_dtype(e->dtype)};  // a row of a fixed dtype
        for (tgl_dtype dt : dts) {
            Case c;
            c.suite = suite;
            c.op = op;
            c.variant = variant;
            c.dims = dims;
            c.dtype = dt;
            if (e) {
                c.label = e->label;
                c.batch = o.quick ? e->batch_quick : e->batch_full;
            }
            if ((c.variant == "chain" || c.variant == "graph") && c.batch == 0) c.batch = o.quick ? 500 : 10000;
            bool dup = false;  // --dtype=f16 on a table that also has the f16 row
            for (const auto& other : cases) dup = dup || other.key() == c.key();
            if (!dup) cases.push_back(c);
        }
    };
    if (!o.op.empty()) {
        if (!o.shapes.empty()) {
            for (const auto& s : o.shapes) add(nullptr, "op", o.op, o.variant, s);
        } else {
            for (const auto& e : suite_table())
                if (e.op == o.op && (o.variant.empty() || o.variant == e.variant))
                    add(&e, e.suite, e.op, e.variant, o.quick ? e.quick : e.full);
            if (cases.empty())
                throw std::invalid_argument("no default shape for op \"" + o.op +
                                            "\": give --shape");
        }
    } else {
        std::vector<std::string> suites = o.suites.empty() ? std::vector<std::string>{"all"} : o.suites;
        for (const auto& e : suite_table()) {
            bool want = false;
            for (const auto& s : suites) want = want || suite_matches(s, e.suite);
            if (want) add(&e, e.suite, e.op, e.variant, o.quick ? e.quick : e.full);
        }
    }
    // % of copy bandwidth needs a copy: run the copy suite's row first if it is not there.
    bool has_copy = false;
    for (const auto& c : cases) has_copy = has_copy || (c.op == kBufferCopy && c.dtype == TGL_DTYPE_F32);
    if (!has_copy)
        for (const auto& e : suite_table())
            if (e.op == kBufferCopy) {
                Case c;
                c.suite = e.suite;
                c.op = e.op;
                c.dims = o.quick ? e.quick : e.full;  // resized by size_copy_reference
                c.label = "reference for % copy";
                c.copy_reference = true;
                cases.insert(cases.begin(), c);
                break;
            }
    return cases;
}

// ---------------------------------------------------------------------------------------------
// Running a workload.

// Inputs hold 0.5 (ints: 1): finite through exp, log, sqrt and long chains of adds.
void fill_pattern(tgl_dtype dt, uint8_t (&pattern)[4], uint32_t& size) {
    size = tgl_dtype_size(dt);
    uint32_t bits = 1;
    if (dt == TGL_DTYPE_F32) bits = 0x3F000000u;
    if (dt == TGL_DTYPE_F16) bits = 0x3800u;
    if (dt == TGL_DTYPE_BF16) bits = 0x3F00u;
    std::memcpy(pattern, &bits, 4);  // little-endian: the low `size` bytes are the value
}

// Buffers and views of one workload, and the function that queues one run of it.
struct Prepared {
    std::vector<tgl::Buffer> buffers;
    std::vector<tgl_tensor> in, out;
    std::function<void()> run;
};

std::unique_ptr<Prepared> prepare(const tgl::Device& dev, const Workload& w) {
    auto p = std::make_unique<Prepared>();
    const tgl_plugin_api& api = dev.api();
    auto new_buffer = [&](uint64_t bytes, tgl_dtype fill_dt) -> const tgl::Buffer& {
        p->buffers.emplace_back(dev, bytes);
        uint8_t pattern[4];
        uint32_t size;
        fill_pattern(fill_dt, pattern, size);
        tgl::detail::check(api, api.buffer_fill(dev.handle(), p->buffers.back().handle(), 0, bytes,
                                                pattern, size),
                           "buffer_fill");
        return p->buffers.back();
    };
    auto view = [&](const Operand& o, const std::vector<tgl_tensor>& inputs) {
        if (o.alias >= 0) return inputs.at(static_cast<size_t>(o.alias));
        if (o.absent) {
            tgl_tensor t{};
            t.dtype = o.dtype;
            return t;  // buffer 0: an optional operand left out
        }
        // A GGUF block operand (rows of whole blocks) is filled with bytes 0x01: f16 scales of
        // 257 * 2^-24, finite values.
        tgl_tensor t = tgl::tensor(new_buffer(operand_bytes(o), tgl_dtype_is_block(o.dtype) ? tgl_dtype(TGL_DTYPE_U8) : o.dtype),
                                   o.dtype, o.shape);
        if (tgl_dtype_is_block(o.dtype) && t.rank >= 2) {  // rows ceil(K / B) * B elements apart
            const int64_t B = tgl_dtype_block_size(o.dtype);
            int64_t s = (o.shape.back() + B - 1) / B * B;
            for (uint32_t d = t.rank - 1; d-- > 0;) {
                t.strides[d] = s;
                s *= o.shape[d];
            }
        }
        return t;
    };
    const tgl_device h = dev.handle();
    switch (w.kind) {
    case Workload::Copy: {
        tgl_buffer src = new_buffer(w.buffer_bytes, TGL_DTYPE_U8).handle();
        tgl_buffer dst = new_buffer(w.buffer_bytes, TGL_DTYPE_U8).handle();
        uint64_t bytes = w.buffer_bytes;
        p->run = [&api, h, src, dst, bytes] {
            tgl::detail::check(api, api.buffer_copy(h, src, 0, dst, 0, bytes), "buffer_copy");
        };
        break;
    }
    case Workload::Fill: {
        tgl_buffer dst = new_buffer(w.buffer_bytes, TGL_DTYPE_U8).handle();
        uint64_t bytes = w.buffer_bytes;
        p->run = [&api, h, dst, bytes] {
            const uint32_t pattern = 0x3F000000u;
            tgl::detail::check(api, api.buffer_fill(h, dst, 0, bytes, &pattern, 4), "buffer_fill");
        };
        break;
    }
    case Workload::GatedMlp: {
        for (const auto& o : w.inputs) p->in.push_back(view(o, p->in));
        for (const auto& o : w.outputs) p->out.push_back(view(o, p->in));
        const int64_t T = w.inputs[0].shape[0], F = w.inputs[1].shape[1];
        const Operand hidden{{T, F}, w.inputs[0].dtype};
        std::vector<tgl_tensor> t;  // g, u, a, h
        for (int i = 0; i < 4; ++i) t.push_back(view(hidden, p->in));
        Prepared* raw = p.get();
        p->run = [&dev, raw, t] {
            const std::vector<tgl_tensor>& in = raw->in;
            tgl::run_op(dev, TGL_OP_MATMUL, nullptr, {in[0], in[1]}, {t[0]});
            tgl::run_op(dev, TGL_OP_MATMUL, nullptr, {in[0], in[2]}, {t[1]});
            tgl::run_op(dev, TGL_OP_SILU, nullptr, {t[0]}, {t[2]});
            tgl::run_op(dev, TGL_OP_MUL, nullptr, {t[2], t[1]}, {t[3]});
            tgl::run_op(dev, TGL_OP_MATMUL, nullptr, {t[3], in[3]}, raw->out);
        };
        break;
    }
    case Workload::NormScale: {
        for (const auto& o : w.inputs) p->in.push_back(view(o, p->in));
        for (const auto& o : w.outputs) p->out.push_back(view(o, p->in));
        const tgl_tensor h = view(w.outputs[0], p->in), t = view(w.outputs[0], p->in);
        tgl_tensor absent{};  // the norm's own gamma and beta: left out
        absent.dtype = w.inputs[0].dtype;
        const bool layer = w.op == TGL_OP_LAYER_NORM;
        Prepared* raw = p.get();
        const tgl_op op = w.op;
        p->run = [&dev, raw, h, t, absent, layer, op] {
            const std::vector<tgl_tensor>& in = raw->in;
            tgl::run_op(dev, op, nullptr, {in[0], absent, absent}, {h});
            tgl::run_op(dev, TGL_OP_MUL, nullptr, {h, in[1]}, {layer ? t : raw->out[0]});
            if (layer) tgl::run_op(dev, TGL_OP_ADD, nullptr, {t, in[2]}, raw->out);
        };
        break;
    }
    default: {
        for (const auto& o : w.inputs) p->in.push_back(view(o, p->in));
        for (const auto& o : w.outputs) p->out.push_back(view(o, p->in));
        const void* params = w.params.empty() ? nullptr : w.params.data();
        Prepared* raw = p.get();
        tgl_op op = w.op;
        p->run = [&dev, raw, op, params] { tgl::run_op(dev, op, params, raw->in, raw->out); };
    }
    }
    dev.synchronize();  // fills done before anything is timed
    return p;
}

// ---------------------------------------------------------------------------------------------
// first_op: a child process (this binary with --child-first-op) loads the plugin, opens the
// device, runs one matmul and downloads C; it prints CLOCK_MONOTONIC stamps of each phase, and
// the time from spawning it to its result is one sample.

struct FirstOpPhases {
    double spawn = 0, main = 0, loaded = 0, probed = 0, opened = 0, result = 0;
    long long cache_hits = -1, cache_misses = -1;  // the child's program_cache.* (-1: none)
};

int child_first_op(const Options& o) {
    try {
        const double t_main = g_process_start;
        tgl::Plugin plugin(o.plugin);
        const double t_loaded = now_s();
        plugin.device_count();  // finding the devices, timed on its own
        const double t_probed = now_s();
        tgl::Device dev(plugin, o.device);
        const double t_opened = now_s();
        const std::vector<int64_t> d = o.shapes.at(0);  // M x K x N
        const int64_t M = d.at(0), K = d.at(1), N = d.at(2);
        auto a = tgl::Buffer::from(dev, std::vector<float>(static_cast<size_t>(M * K), 0.5f));
        auto b = tgl::Buffer::from(dev, std::vector<float>(static_cast<size_t>(K * N), 0.5f));
        tgl::Buffer c(dev, static_cast<uint64_t>(M * N) * sizeof(float));
        tgl::run_op(dev, TGL_OP_MATMUL, nullptr,
                    {tgl::tensor<float>(a, {M, K}), tgl::tensor<float>(b, {K, N})},
                    {tgl::tensor<float>(c, {M, N})});
        std::vector<float> out = c.download<float>();
        const double t_result = now_s();
        const bool ok = std::fabs(out.front() - 0.25f * K) <= 1e-3f * K &&
                        std::fabs(out.back() - 0.25f * K) <= 1e-3f * K;
        long long hits = -1, misses = -1;  // after the result: not part of the time
        for (const auto& kv : plugin.properties(o.device)) {
            if (kv.first == "program_cache.hits") hits = std::atoll(kv.second.c_str());
            if (kv.first == "program_cache.misses") misses = std::atoll(kv.second.c_str());
        }
        std::printf("TGL_FIRST_OP %.9f %.9f %.9f %.9f %.9f %d %lld %lld\n", t_main, t_loaded, t_probed, t_opened, t_result,
                    ok ? 1 : 0, hits, misses);
        std::fflush(stdout);
        return ok ? 0 : 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "first_op child: %s\n", e.what());
        return 1;
    }
}

FirstOpPhases spawn_first_op(const Options& o, const std::string& plugin, const Case& c,
                             const std::string& cache_dir) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> args = {"/proc/self/exe", "--child-first-op", "--plugin=" + plugin,
                                     "--device=" + std::to_string(o.device), "--shape=" + c.shape()};
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    FirstOpPhases ph;
    pid_t pid = 0;
    // The child's program cache: TGL_CACHE_DIR = cache_dir (the rest of the environment as is).
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e)
        if (std::strncmp(*e, "TGL_CACHE_DIR=", 14) != 0) env_strings.push_back(*e);
    env_strings.push_back("TGL_CACHE_DIR=" + cache_dir);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    ph.spawn = now_s();
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        throw std::runtime_error(std::string("posix_spawn failed: ") + std::strerror(rc));
    }
    std::string out;
    char buf[512];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    int ok = 0;
    size_t at = out.find("TGL_FIRST_OP ");
    if (at == std::string::npos ||
        std::sscanf(out.c_str() + at, "TGL_FIRST_OP %lf %lf %lf %lf %lf %d %lld %lld", &ph.main, &ph.loaded,
                    &ph.probed, &ph.opened, &ph.result, &ok, &ph.cache_hits, &ph.cache_misses) != 8 || !ok ||
        !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error("first_op child failed (exit status " + std::to_string(status) +
                                 "; its stderr is above)" + (ok ? "" : ", wrong or no result"));
    return ph;
}

// rm -r of a directory of directories of files (the first_op cache directories).
void remove_tree(const std::string& dir) {
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            if (!std::strcmp(e->d_name, ".") || !std::strcmp(e->d_name, "..")) continue;
            const std::string p = dir + "/" + e->d_name;
            struct stat st;
            if (lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) remove_tree(p);
            else unlink(p.c_str());
        }
        closedir(d);
    }
    rmdir(dir.c_str());
}

// ---------------------------------------------------------------------------------------------
// One case, one plugin run.

// ---------------------------------------------------------------------------------------------
// memory: the plugin's memory.live_bytes / memory.held_bytes after a warm-up of a mixed workload
// (elementwise, reductions with scratch, norms, matmul; about dims[0] MiB of tensors, kept live),
// and again after every buffer is freed.

// A numeric device property of the plugin (false where it has none, e.g. not a GLES plugin).
bool read_property(const tgl::Device& dev, uint32_t index, const char* name, double& value) {
    const tgl_property* props = nullptr;
    uint32_t n = 0;
    if (dev.api().device_properties(index, &props, &n) != TGL_OK) return false;
    for (uint32_t i = 0; i < n; ++i)
        if (std::strcmp(props[i].name, name) == 0) return value = std::atof(props[i].value), true;
    return false;
}

// The plugin's gl_thread.busy_ns counter in seconds, or -1 where it has none.
double gl_thread_busy_s(const tgl::Device& dev, uint32_t index) {
    double ns = 0;
    return read_property(dev, index, "gl_thread.busy_ns", ns) ? 1e-9 * ns : -1;
}

bool read_memory(const tgl::Device& dev, uint32_t index, double& live, double& held) {
    return read_property(dev, index, "memory.live_bytes", live) && read_property(dev, index, "memory.held_bytes", held);
}

Result run_memory_case(const tgl::Device& dev, uint32_t index, const Catalogue& cat, const Case& c) {
    Result r;
    r.c = c;
    double live0 = 0, held0 = 0;
    if (!read_memory(dev, index, live0, held0)) {
        r.status = Result::Skipped;
        r.reason = "the plugin has no memory.live_bytes / memory.held_bytes properties";
        return r;
    }
    const int64_t mib = c.dims.at(0);
    const int64_t side = std::max<int64_t>(64, int64_t(std::sqrt(double(mib) * (1 << 20) / 4 / 8)));
    // Each workload below holds about 1/8 of the total in its largest operand.
    const std::vector<Case> mix = {
        {"memory", "add", "", "", {side * side}, c.dtype},
        {"memory", "mul", "broadcast", "", {side, side}, c.dtype},
        {"memory", "sum", "dim1", "", {side, side}, c.dtype},
        {"memory", "sum", "dim0", "", {side, side}, c.dtype},
        {"memory", "softmax", "dim1", "", {side, side}, c.dtype},
        {"memory", "layer_norm", "", "", {side, side}, c.dtype},
        {"memory", "matmul", "", "", {side / 2, side / 2, side / 2}, c.dtype},
    };
    std::vector<std::unique_ptr<Prepared>> live;
    const double t0 = now_s();
    for (const Case& m : mix) {
        Workload w;
        std::string why;
        if (plan_case(m, cat, w, why) != Plan::Run) continue;  // an op the plugin lacks
        live.push_back(prepare(dev, w));
        for (int i = 0; i < 3; ++i) live.back()->run();
    }
    dev.synchronize();
    const double wall = now_s() - t0;
    double live1 = 0, held1 = 0;
    read_memory(dev, index, live1, held1);
    live.clear();  // every buffer freed
    dev.synchronize();
    double live2 = 0, held2 = 0;
    read_memory(dev, index, live2, held2);
    const double l = live1 - live0, h = held1 - held0;
    r.st.median_s = r.st.min_s = r.st.first_s = wall;
    r.st.samples = r.st.batch = 1;
    r.extra = {{"live_bytes", l},
               {"held_bytes", h},
               {"held_over_live", l > 0 ? h / l : 0},
               {"held_after_free_bytes", held2 - held0},
               {"live_after_free_bytes", live2 - live0}};
    char note[200];
    std::snprintf(note, sizeof note, "warm: live %.1f MiB, held %.1f MiB (%.3fx); after free: held %.2f MiB",
                  l / 1048576, h / 1048576, l > 0 ? h / l : 0.0, (held2 - held0) / 1048576);
    r.note = note;
    if (!(l > 0)) {
        r.status = Result::Error;
        r.reason = "memory.live_bytes did not grow while buffers were live";
    }
    return r;
}

// The ABI 1.1 device timer, when the plugin and the driver have one.
struct GpuTimer {
    bool available = false;
    std::string description;  // for the table header and the JSON
};

GpuTimer probe_timer(const tgl::Plugin& plugin, const tgl::Device& dev) {
    GpuTimer t;
    const tgl_plugin_api& api = dev.api();
    if (plugin.abi_minor() < 1 || !api.timer_begin || !api.timer_end) {
        t.description = "n/a: the plugin is ABI 1.0 (no timer)";
        return t;
    }
    tgl_status s = api.timer_begin(dev.handle());
    if (s != TGL_OK) {
        t.description = std::string("n/a: ") + api.last_error_message();
        return t;
    }
    uint64_t ns = 0;
    uint32_t flags = 0;
    s = api.timer_end(dev.handle(), &ns, &flags);
    t.available = s == TGL_OK;
    t.description = t.available ? "device time from timer_begin/timer_end (ABI 1.1) around each sample; "
                                  "disjoint samples dropped"
                                : std::string("n/a: timer_end failed: ") + api.last_error_message();
    return t;
}

// CPU time of the calling thread in seconds.
double thread_cpu_s() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Median of the finite values (NaN marks a dropped sample); 0 if none.
double median_finite(std::vector<double> v) {
    v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

Result run_case(const Options& o, const std::string& plugin_spec, const tgl::Device& dev,
                const Catalogue& cat, const Case& c, const GpuTimer& timer) {
    Result r;
    r.c = c;
    if (c.op == kMemory) return run_memory_case(dev, o.device, cat, c);
    Workload w;
    Plan plan = plan_case(c, cat, w, r.reason);
    if (plan != Plan::Run) {
        r.status = plan == Plan::Skip ? Result::Skipped : Result::Error;
        // A name no catalogue knows, asked for with --op, is a typo rather than a missing op.
        const bool unknown = r.reason.find("not in this plugin's catalogue") != std::string::npos;
        if (unknown && c.suite == "op") r.status = Result::Error;
        return r;
    }
    r.bytes = w.bytes;
    r.flops = w.flops;
    try {
        if (w.kind == Workload::FirstOp) {
            TimingConfig cfg = o.timing;
            cfg.min_samples = o.quick ? 2 : 5;
            cfg.max_samples = o.quick ? 2 : 10;
            cfg.target_rel_mad = 0.05;
            // cold: every child gets a fresh, empty program cache directory; warm: one untimed
            // child fills a directory that the timed children then load from.
            const bool warm = c.variant == "warm";
            char tmpl[] = "/tmp/tgl-bench-cache-XXXXXX";
            if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
            const std::string root = tmpl;
            int n_dirs = 0;
            auto fresh_dir = [&] {
                std::string d = root + "/" + std::to_string(n_dirs++);
                if (mkdir(d.c_str(), 0700) != 0) throw std::runtime_error("mkdir " + d + " failed");
                return d;
            };
            const std::string warm_dir = warm ? fresh_dir() : std::string();
            if (warm) spawn_first_op(o, plugin_spec, c, warm_dir);
            FirstOpPhases last;
            try {
                r.st = measure(
                    [&](int) {
                        last = spawn_first_op(o, plugin_spec, c, warm ? warm_dir : fresh_dir());
                        return last.result - last.spawn;
                    },
                    cfg, 1, false);
            } catch (...) {
                remove_tree(root);
                throw;
            }
            remove_tree(root);
            char note[200];
            std::snprintf(note, sizeof note,
                          "cold 1st %.1f ms; last: exec %.1f, load %.1f, find devices %.1f, open %.1f, op+read %.1f ms",
                          r.st.first_s * 1e3, (last.main - last.spawn) * 1e3,
                          (last.loaded - last.main) * 1e3, (last.probed - last.loaded) * 1e3, (last.opened - last.probed) * 1e3,
                          (last.result - last.opened) * 1e3);
            r.note = note;
            if (last.cache_hits >= 0) {  // whether the child compiled or loaded its programs
                std::snprintf(note, sizeof note, "; program cache: %lld hits, %lld compiled", last.cache_hits,
                              last.cache_misses);
                r.note += note;
            }
            r.bytes = r.flops = 0;  // a latency, not a throughput
            return r;
        }
        std::unique_ptr<Prepared> p = prepare(dev, w);
        const bool sync_each = w.sync_each;
        const tgl_plugin_api& api = dev.api();
        std::vector<double> gpu;   // per run, one per sample (NaN: none or disjoint)
        std::vector<double> host;  // per run: the host's time to queue it (no wait), one per sample
        std::vector<double> host_cpu;  // the same in CPU time of this thread (not waiting for a core)
        std::vector<double> gl_busy;   // per run: time on the plugin's GL thread (gl_thread.busy_ns), if any
        // graph: one recorded graph per batch size measure() asks for, recorded before the timing.
        std::map<int, tgl::Graph> graphs;
        if (w.graph && !api.graph_begin)  // the loader leaves members above the negotiated minor NULL
            throw tgl::Error(TGL_ERROR_UNIMPLEMENTED, "the plugin has no graphs (ABI minor below 2)");
        r.st = measure(
            [&](int batch) {
                const tgl::Graph* graph = nullptr;
                if (w.graph) {
                    auto it = graphs.find(batch);
                    if (it == graphs.end())
                        it = graphs.emplace(batch, tgl::Graph::record(dev, [&] {
                                                for (int i = 0; i < batch; ++i) p->run();
                                            })).first;
                    graph = &it->second;
                }
                const double busy0 = gl_thread_busy_s(dev, o.device);
                double t0 = now_s();
                const double c0 = thread_cpu_s();
                const bool timed = timer.available && api.timer_begin(dev.handle()) == TGL_OK;
                if (graph) {
                    graph->replay();
                } else {
                    for (int i = 0; i < batch; ++i) {
                        p->run();
                        if (sync_each) dev.synchronize();
                    }
                }
                host.push_back((now_s() - t0) / batch);
                host_cpu.push_back((thread_cpu_s() - c0) / batch);
                if (timed) {
                    uint64_t ns = 0;
                    uint32_t flags = 0;
                    tgl_status s = api.timer_end(dev.handle(), &ns, &flags);
                    const bool good = s == TGL_OK && !(flags & TGL_TIMER_DISJOINT);
                    gpu.push_back(good ? 1e-9 * double(ns) / batch : std::nan(""));
                } else {
                    gpu.push_back(std::nan(""));
                }
                dev.synchronize();
                const double elapsed = now_s() - t0;
                gl_busy.push_back(busy0 >= 0 ? (gl_thread_busy_s(dev, o.device) - busy0) / batch : std::nan(""));
                return elapsed / batch;
            },
            o.timing, c.batch);
        r.sm_clock_mhz = sm_clock_mhz();
        // The timed samples are the last ones measure() took.
        if (gpu.size() >= size_t(r.st.samples)) {
            std::vector<double> timed(gpu.end() - r.st.samples, gpu.end());
            r.gpu_s = median_finite(timed);
            for (double g : timed) r.gpu_discarded += std::isfinite(g) ? 0 : 1;
            if (!timer.available) r.gpu_discarded = 0;
        }
        if (host.size() >= size_t(r.st.samples) && !sync_each) {
            r.extra.push_back({"host_cpu_us_per_run",
                               1e6 * median_finite(std::vector<double>(host_cpu.end() - r.st.samples, host_cpu.end()))});
            r.extra.push_back({"host_queue_us_per_run",
                               1e6 * median_finite(std::vector<double>(host.end() - r.st.samples, host.end()))});
        }
        if (gl_busy.size() >= size_t(r.st.samples)) {
            const double busy = median_finite(std::vector<double>(gl_busy.end() - r.st.samples, gl_busy.end()));
            if (std::isfinite(busy)) r.extra.push_back({"gl_thread_us_per_run", 1e6 * busy});
        }
        if (w.kind == Workload::RunOp && (c.variant == "chain" || c.variant == "graph" || c.variant == "sync")) {
            char note[96];
            std::snprintf(note, sizeof note, "%.2f us/op", r.st.median_s * 1e6);
            r.note = note;
            if ((c.variant == "chain" || c.variant == "graph") && r.extra.size() >= 2) {
                std::snprintf(note, sizeof note, " (host: queueing %.2f us/op wall, %.2f us/op CPU",
                              r.extra[1].second, r.extra[0].second);
                r.note += note;
                if (r.extra.size() >= 3) {
                    std::snprintf(note, sizeof note, "; GL thread %.2f us/op", r.extra[2].second);
                    r.note += note;
                }
                r.note += ")";
            }
        }
    } catch (const tgl::Error& e) {
        r.status = e.status() == TGL_ERROR_UNIMPLEMENTED ? Result::Skipped : Result::Error;
        r.reason = e.what();
    } catch (const std::exception& e) {
        r.status = Result::Error;
        r.reason = e.what();
    }
    return r;
}

Run run_plugin(const Options& o, const std::string& spec, const std::vector<Case>& cases) {
    Run run;
    run.quick = o.quick;
    run.timing = o.timing;
    run.device_index = o.device;
    tgl::Plugin plugin(spec);
    tgl_plugin_info info = plugin.info();
    run.plugin_name = info.name ? info.name : "?";
    run.plugin_version = info.version ? info.version : "?";
    run.plugin_path = plugin.path();
    uint32_t count = plugin.device_count();
    if (o.device >= count)
        throw tgl::Error(TGL_ERROR_DEVICE_UNAVAILABLE,
                         "plugin \"" + run.plugin_name + "\" has " + std::to_string(count) +
                             " device(s); device " + std::to_string(o.device) + " does not exist");
    run.properties = plugin.properties(o.device);
    std::printf("plugin %s %s (%s), device %u of %u\n", run.plugin_name.c_str(),
                run.plugin_version.c_str(), run.plugin_path.c_str(), o.device, count);
    for (const char* name : {"name", "renderer", "api.version", "driver.version", "memory.bytes"})
        std::printf("  %-15s %s\n", name, run.property(name).c_str());
    std::fflush(stdout);

    tgl::Device dev(plugin, o.device);
    const GpuTimer timer = probe_timer(plugin, dev);
    run.gpu_timer = timer.description;
    const Catalogue cat = load_catalogue(plugin);
    std::vector<Case> sized = cases;
    size_copy_reference(sized, cat);
    const bool tty = isatty(STDERR_FILENO);
    for (size_t i = 0; i < sized.size(); ++i) {
        std::fprintf(stderr, "%s[%zu/%zu] %s: %s%s", tty ? "\r\033[K" : "", i + 1, sized.size(),
                     run.plugin_name.c_str(), sized[i].key().c_str(), tty ? "" : "\n");
        std::fflush(stderr);
        run.results.push_back(run_case(o, spec, dev, cat, sized[i], timer));
    }
    if (tty) std::fprintf(stderr, "\r\033[K");
    dev.close();
    return run;
}

// ---------------------------------------------------------------------------------------------
// --quick's self-check: every case has a row, no errors, every time positive and finite, the JSON
// written reads back with the same rows.

int check_quick(const std::vector<Case>& cases, const std::vector<Run>& runs,
                const std::string& json_path) {
    int problems = 0;
    auto bad = [&](const std::string& what) {
        std::fprintf(stderr, "quick check: %s\n", what.c_str());
        ++problems;
    };
    for (const auto& run : runs) {
        if (run.results.size() != cases.size()) bad(run.plugin_name + ": missing results");
        for (const auto& r : run.results) {
            const std::string id = run.plugin_name + " " + r.c.key();
            if (r.status == Result::Error) bad(id + ": error: " + r.reason);
            if (r.status != Result::Ok) continue;
            const Stats& s = r.st;
            if (!(s.median_s > 0) || !std::isfinite(s.median_s) || !(s.min_s > 0) ||
                !(s.first_s > 0) || s.samples < 1 || s.batch < 1 || s.min_s > s.median_s)
                bad(id + ": nonsensical timing");
            if (r.bytes > 0 && !(std::isfinite(r.gbps()) && r.gbps() > 0)) bad(id + ": bad GB/s");
        }
        if (!(run.copy_gbps() > 0)) bad(run.plugin_name + ": no copy bandwidth");
    }
    if (!json_path.empty()) {
        json::Value v;
        std::string err;
        if (!read_json_file(json_path, v, err)) bad("JSON does not read back: " + err);
        else {
            const json::Value* rs = v.get("results");
            if (!rs || rs->kind != json::Value::Array || rs->arr.size() != runs.at(0).results.size())
                bad("JSON results do not match the run");
            if (v.string_or("schema", "") != "tensorgl-bench/1") bad("JSON schema tag missing");
        }
    }
    if (problems == 0) std::printf("\nquick check: OK (%zu cases x %zu plugin(s))\n", cases.size(),
                                   runs.size());
    return problems ? 1 : 0;
}

int main_impl(int argc, char** argv) {
    Options o = parse_args(argc, argv);
    if (o.child_first_op) return child_first_op(o);

    if (!o.compare.empty()) {
        json::Value a, b;
        std::string err;
        if (!read_json_file(o.compare[0], a, err) || !read_json_file(o.compare[1], b, err)) {
            std::fprintf(stderr, "tensorgl-bench: %s\n", err.c_str());
            return 2;
        }
        print_compare(a, b, o.markdown);
        return 0;
    }

    const std::vector<Case> cases = build_cases(o);
    if (o.list) {
        for (const auto& c : cases)
            std::printf("%-9s %-40s %s%s\n", c.suite.c_str(), c.key().c_str(), c.label.c_str(),
                        c.copy_reference ? " (sized at run time to the largest case's bytes)" : "");
        return 0;
    }

    std::vector<Run> runs;
    runs.push_back(run_plugin(o, o.plugin, cases));
    print_table(runs.back());
    if (!o.baseline.empty()) {
        std::printf("\n");
        runs.push_back(run_plugin(o, o.baseline, cases));
        print_table(runs.back());
        // A = the baseline, B = the plugin: B/A > 1 means the plugin is faster.
        print_compare(to_json(runs[1]), to_json(runs[0]), o.markdown);
    }

    std::string err;
    if (!o.json_path.empty()) {
        json::Value root = to_json(runs[0]);
        if (runs.size() > 1) root.set("baseline", to_json(runs[1]));
        if (!write_text_file(o.json_path, json::dump(root), err)) {
            std::fprintf(stderr, "tensorgl-bench: %s\n", err.c_str());
            return 1;
        }
    }
    if (!o.csv_path.empty()) {
        std::string csv = to_csv(runs[0]);
        if (runs.size() > 1) {
            std::string more = to_csv(runs[1]);
            csv += more.substr(more.find('\n') + 1);  // without its header line
        }
        if (!write_text_file(o.csv_path, csv, err)) {
            std::fprintf(stderr, "tensorgl-bench: %s\n", err.c_str());
            return 1;
        }
    }
    if (o.quick) return check_quick(cases, runs, o.json_path);
    for (const auto& run : runs)
        for (const auto& r : run.results)
            if (r.status == Result::Error) return 1;
    return 0;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
    try {
        return bench::main_impl(argc, argv);
    } catch (const std::invalid_argument& e) {
        std::fprintf(stderr, "tensorgl-bench: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "tensorgl-bench: %s\n", e.what());
        return 1;
    }
}
