// cases.h: what the benchmark runs. One table of suites (suite_table), a Case per row and dtype,
// and plan_case(), which turns a Case into a Workload (operands, params, bytes and FLOPs per run)
// from the plugin's own capability query, or says why the plugin cannot run it.
#ifndef TGL_BENCH_CASES_H
#define TGL_BENCH_CASES_H

#include <tensorgl/tensorgl.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace bench {

// Pseudo-ops that are not run_op ids.
inline const char* const kBufferCopy = "buffer_copy";
inline const char* const kBufferFill = "buffer_fill";
inline const char* const kFirstOp = "first_op";  // process start -> first matmul result (child)
inline const char* const kMemory = "memory";     // held/live bytes after a mixed workload
// A gated MLP block (T x D tokens, hidden F): g = x Wg, u = x Wu, a = silu(g), h = a * u, y = h Wd.
inline const char* const kGatedMlp = "gated_mlp";
// A transformer norm block (T x D tokens): rms_norm_scale: h = rms_norm(x), y = h * w (a weight row);
// layer_norm_scale: h = layer_norm(x), t = h * w, y = t + b (weight and bias rows); the norms
// without their own gamma, beta (the GLES plugin fuses the chain into the norm's kernel).
inline const char* const kRmsNormScale = "rms_norm_scale";
inline const char* const kLayerNormScale = "layer_norm_scale";

// One row of the suite table: the op at full size and at --quick size.
//   dims: elementwise/copy/fill: the shape (elements of dtype); reduce/softmax: the input shape;
//         matmul and first_op: M x K x N, or B x M x K x N (batched);
//         conv2d: N, C, H, W, K, R, S, stride, pad (NCHW x, KCRS weight, square stride/padding);
//         attention: B, H, Sq, Skv, D (q: BxHxSqxD, k/v: BxHxSkvxD);
//         memory: MiB of tensors kept live by the mixed workload;
//         gated_mlp: T x D x F (tokens, model width, hidden width);
//         rms_norm_scale, layer_norm_scale: T x D (tokens, model width).
//   variant: "" | "broadcast" (b is the last dim of a, or a scalar for 1-D) | "dimK" (reduce
//            along axis K) | "chain" (runs are dependent in-place ops: y = y + x) | "sync" (one op
//            and a synchronize per run) | "causal" (attention) | "cold" / "warm" (first_op: fresh
//            or filled program cache directory for each child).
//   batch: runs per timed sample when fixed (0: calibrated from the run time).
struct SuiteEntry {
    const char* suite;
    const char* op;
    const char* variant;
    std::vector<int64_t> full, quick;
    int batch_full = 0, batch_quick = 0;
    const char* label = "";  // what the row is, for people ("decode (GEMV)")
    const char* dtype = nullptr;  // a fixed dtype ("f16"): the row runs once, in it; else --dtype's
};

const std::vector<SuiteEntry>& suite_table();
// Suite names in table order, plus the aliases "elementwise" (unary + binary) and "all".
std::vector<std::string> suite_names();
bool suite_matches(const std::string& requested, const std::string& suite);

// One row of the results: an op at one shape and dtype.
struct Case {
    std::string suite, op, variant, label;
    std::vector<int64_t> dims;
    tgl_dtype dtype = TGL_DTYPE_F32;
    int batch = 0;  // fixed runs per sample, 0: calibrated
    bool copy_reference = false;  // the buffer_copy that % copy compares with (size_copy_reference)

    std::string shape() const;  // "4096x4096x4096"
    std::string key() const;    // "op[variant] shape dtype": how rows are matched across files
};

struct Operand;
// Bytes of an operand's contiguous storage (a GGUF block dtype: ceil(K / B) blocks a row).
uint64_t operand_bytes(const Operand& o);

// An operand of a run_op workload: a contiguous tensor in its own buffer, or (alias >= 0) the
// identical view of input #alias (in-place ops), or absent (an optional operand: buffer 0).
struct Operand {
    std::vector<int64_t> shape;
    tgl_dtype dtype = TGL_DTYPE_F32;
    int alias = -1;
    bool absent = false;
};

struct Workload {
    // GatedMlp: inputs x, Wg, Wu, Wd; output y. NormScale: norm `op`, inputs x, w, b; output y.
    enum Kind { RunOp, Copy, Fill, FirstOp, GatedMlp, NormScale } kind = RunOp;
    tgl_op op = 0;
    std::vector<uint8_t> params;  // empty: NULL params (the op's defaults)
    std::vector<Operand> inputs, outputs;
    uint64_t buffer_bytes = 0;   // Copy / Fill: bytes per run
    bool sync_each = false;      // synchronize after every run (latency of one op + wait)
    // The batch's runs recorded once as an ABI 1.2 graph (outside the timing), each sample one
    // graph_replay: per-run time = replay time / batch.
    bool graph = false;
    double bytes = 0;            // bytes read + written per run (each operand once)
    double flops = 0;            // per run: 2MNK for matmul, one per element for the others
};

// The plugin's op catalogue by name (query_op over every id), supported or not.
using Catalogue = std::map<std::string, tgl_op_caps>;
Catalogue load_catalogue(const tgl::Plugin& plugin);

enum class Plan { Run, Skip, Error };
// Builds the workload of `c` for a plugin with catalogue `cat`; Skip (with the reason) when the
// plugin does not support the op or dtype, Error when the case itself is malformed.
Plan plan_case(const Case& c, const Catalogue& cat, Workload& w, std::string& why);

// Sizes the copy reference among `cases` to move as many bytes as the largest other case the
// plugin can plan (each operand once, as GB/s counts them), at most the copy suite's full size:
// `--op=softmax --shape=64x64` compares with a 16 KiB copy, not a 256 MiB one. Left as built
// when no other case moves bytes.
void size_copy_reference(std::vector<Case>& cases, const Catalogue& cat);

// dtype names ("f32") and back (TGL_DTYPE_INVALID when unknown).
const char* dtype_name(tgl_dtype dt);
tgl_dtype parse_dtype(const std::string& s);

}  // namespace bench

#endif
