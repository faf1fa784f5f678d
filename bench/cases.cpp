#include "cases.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace bench {

// ---------------------------------------------------------------------------------------------
// The suites. Full sizes follow ../shared/anchors.md (256 MiB f32 streams, 8192 x 8192 rows, the
// SGEMM sizes); --quick sizes run in seconds on llvmpipe.

const std::vector<SuiteEntry>& suite_table() {
    static const int64_t N = 67108864;  // 256 MiB of f32
    static const int64_t n = 262144;    // 1 MiB of f32
    static const std::vector<SuiteEntry> table = {
        // suite     op            variant      full                    quick
        {"copy",     kBufferCopy,  "",          {N},                    {n}},
        {"fill",     kBufferFill,  "",          {N},                    {n}},
        {"unary",    "relu",       "",          {N},                    {n}},
        {"unary",    "exp",        "",          {N},                    {n}},
        {"unary",    "gelu",       "",          {N},                    {n}},
        {"binary",   "add",        "",          {N},                    {n}},
        {"binary",   "add",        "broadcast", {8192, 8192},           {512, 512}},
        {"binary",   "mul",        "",          {N},                    {n}},
        {"binary",   "mul",        "broadcast", {8192, 8192},           {512, 512}},
        {"reduce",   "sum",        "dim1",      {8192, 8192},           {512, 512}, 0, 0, "sum of each row"},
        {"reduce",   "sum",        "dim0",      {8192, 8192},           {512, 512}, 0, 0, "sum of each column"},
        {"norm",     "softmax",    "dim1",      {8192, 8192},           {512, 512}, 0, 0, "softmax of each row"},
        {"norm",     "layer_norm", "",          {8192, 8192},           {512, 512}, 0, 0, "no affine"},
        {"norm",     "rms_norm",   "",          {8192, 8192},           {512, 512}, 0, 0, "no affine"},
        {"matmul",   "matmul",     "",          {1024, 1024, 1024},     {64, 64, 64}},
        {"matmul",   "matmul",     "",          {4096, 4096, 4096},     {96, 96, 96}},
        {"matmul",   "matmul",     "",          {8192, 8192, 8192},     {128, 128, 128}},
        {"matmul",   "matmul",     "",          {64, 512, 512, 512},    {4, 32, 32, 32}, 0, 0, "batched"},
        {"matmul",   "matmul",     "",          {8192, 8192, 64},       {256, 256, 16}, 0, 0, "skinny N"},
        {"matmul",   "matmul",     "",          {1, 4096, 4096},        {1, 256, 256}, 0, 0, "decode (GEMV)"},
        {"matmul",   "matmul",     "",          {4096, 4096, 4096},     {96, 96, 96}, 0, 0, "f16 storage", "f16"},
        {"matmul",   "matmul",     "",          {1, 4096, 4096},        {1, 256, 256}, 0, 0, "f16 storage, decode", "f16"},
        // Decode GEMV of GGUF block weights (ABI 1.3) beside the f16 weights: linear, x (1, K) f16,
        // W (N, K) of the variant's dtype ("": x's), y (1, N); M x K x N.
        {"gguf",     "linear",     "",          {1, 4096, 4096},        {1, 256, 256}, 0, 0, "f16 weights, decode (GEMV)", "f16"},
        {"gguf",     "linear",     "q8_0",      {1, 4096, 4096},        {1, 256, 256}, 0, 0, "q8_0 weights, decode (GEMV)", "f16"},
        {"gguf",     "linear",     "q4_0",      {1, 4096, 4096},        {1, 256, 256}, 0, 0, "q4_0 weights, decode (GEMV)", "f16"},
        {"gguf",     "linear",     "q4_K",      {1, 4096, 4096},        {1, 256, 256}, 0, 0, "q4_K weights, decode (GEMV)", "f16"},
        // The same with 8x the rows of W (256 MiB of f16 weights): the kernel's streaming rate, past
        // the fixed cost of one queued op (~25 us on an H100/H200, see RESULTS.md).
        {"gguf",     "linear",     "",          {1, 4096, 32768},       {1, 256, 512}, 0, 0, "f16 weights, decode, 8x N", "f16"},
        {"gguf",     "linear",     "q8_0",      {1, 4096, 32768},       {1, 256, 512}, 0, 0, "q8_0 weights, decode, 8x N", "f16"},
        {"gguf",     "linear",     "q4_0",      {1, 4096, 32768},       {1, 256, 512}, 0, 0, "q4_0 weights, decode, 8x N", "f16"},
        {"gguf",     "linear",     "q4_K",      {1, 4096, 32768},       {1, 256, 512}, 0, 0, "q4_K weights, decode, 8x N", "f16"},
        // ResNet-50 convolutions at batch 32: N, C, H, W, K, R, S, stride, pad.
        {"conv",     "conv2d",     "",          {32, 3, 224, 224, 64, 7, 7, 2, 3},  {1, 3, 16, 16, 4, 7, 7, 2, 3}, 0, 0, "conv1 7x7/2"},
        {"conv",     "conv2d",     "",          {32, 64, 56, 56, 64, 3, 3, 1, 1},   {1, 4, 8, 8, 4, 3, 3, 1, 1}, 0, 0, "conv2_x 3x3"},
        {"conv",     "conv2d",     "",          {32, 64, 56, 56, 256, 1, 1, 1, 0},  {1, 4, 8, 8, 8, 1, 1, 1, 0}, 0, 0, "conv2_x 1x1 expand"},
        {"conv",     "conv2d",     "",          {32, 256, 56, 56, 64, 1, 1, 1, 0},  {1, 8, 8, 8, 4, 1, 1, 1, 0}, 0, 0, "conv2_x 1x1 reduce"},
        {"conv",     "conv2d",     "",          {32, 128, 28, 28, 128, 3, 3, 1, 1}, {1, 4, 8, 8, 4, 3, 3, 1, 1}, 0, 0, "conv3_x 3x3"},
        {"conv",     "conv2d",     "",          {32, 256, 14, 14, 256, 3, 3, 1, 1}, {1, 4, 6, 6, 4, 3, 3, 1, 1}, 0, 0, "conv4_x 3x3"},
        {"conv",     "conv2d",     "",          {32, 512, 7, 7, 512, 3, 3, 1, 1},   {1, 4, 5, 5, 4, 3, 3, 1, 1}, 0, 0, "conv5_x 3x3"},
        // Attention: B, H, Sq, Skv, D.
        {"attention", "attention", "causal", {8, 16, 2048, 2048, 64}, {1, 2, 64, 64, 16}, 0, 0, "causal prefill"},
        {"attention", "attention", "",       {1, 16, 1, 8192, 64},    {1, 2, 1, 128, 16}, 0, 0, "decode, 8k KV"},
        {"attention", "attention", "causal", {8, 16, 2048, 2048, 64}, {1, 2, 64, 64, 16}, 0, 0, "causal prefill, f16 storage", "f16"},
        // Sliding window (ABI 1.3; Mistral / Gemma 2 local layers): key tiles outside the window are
        // never read, so the time should follow the window, not the sequence.
        {"attention", "attention", "causal", {1, 16, 8192, 8192, 64}, {1, 2, 64, 64, 16}, 0, 0, "causal prefill 8k"},
        {"attention", "attention", "swa1024", {1, 16, 8192, 8192, 64}, {1, 2, 64, 64, 16}, 0, 0, "causal prefill 8k, window 1024"},
        {"attention", "attention", "swa1024", {1, 16, 1, 8192, 64},   {1, 2, 1, 128, 16}, 0, 0, "decode, 8k KV, window 1024"},
        // KV-cache update (ABI 1.3 set_rows, in place): tokens, row width, rows written. The same
        // rows into caches of 1k and 8k tokens: the time should not grow with the cache.
        {"set_rows", "set_rows",   "",          {1024, 1024, 1},        {64, 16, 1}, 0, 0, "1 row into a 1k-token cache, in place"},
        {"set_rows", "set_rows",   "",          {8192, 1024, 1},        {512, 16, 1}, 0, 0, "1 row into an 8k-token cache, in place"},
        {"set_rows", "set_rows",   "",          {8192, 1024, 32},       {512, 16, 4}, 0, 0, "32 rows into an 8k-token cache, in place"},
        // LLM sampling over a 128k vocabulary (Llama 3's 128,256): B, V. The default variant is a
        // chat sampler (temperature 0.8, top_k 50, top_p 0.9); greedy is the argmax shortcut.
        {"sample",   "sample",     "",          {1, 131072},            {1, 4096}, 0, 0, "1 row, 128k vocab, T 0.8, top_k 50, top_p 0.9"},
        {"sample",   "sample",     "",          {32, 131072},           {4, 4096}, 0, 0, "32 rows, 128k vocab, T 0.8, top_k 50, top_p 0.9"},
        {"sample",   "sample",     "greedy",    {1, 131072},            {1, 4096}, 0, 0, "1 row, 128k vocab, greedy"},
        {"latency",  "add",        "chain",     {256},                  {256}, 10000, 500, "dependent in-place adds"},
        {"latency",  "add",        "graph",     {256},                  {256}, 10000, 500, "the chain's adds recorded once (ABI 1.2 graph), replayed"},
        {"latency",  "add",        "sync",      {256},                  {256}, 0, 0, "one op + synchronize"},
        // A gated MLP block as one recorded graph (silu(gate) * up is fused by the GLES plugin;
        // TGL_GRAPH_FUSION=0 gives the unfused replay to compare): tokens, width, hidden width.
        {"mlp",      kGatedMlp,    "graph",     {1, 4096, 11008},       {1, 64, 176}, 0, 0, "gated MLP block, decode"},
        {"mlp",      kGatedMlp,    "graph",     {8, 4096, 11008},       {8, 64, 176}, 0, 0, "gated MLP block, 8 tokens"},
        // A transformer norm block as one recorded graph (the scale, and bias, run in the norm's
        // kernel by the GLES plugin; TGL_GRAPH_FUSION=0 to compare): tokens, width.
        {"mlp",      kRmsNormScale,   "graph",  {1, 4096},              {1, 64}, 0, 0, "rms_norm * w, decode"},
        {"mlp",      kRmsNormScale,   "graph",  {2048, 4096},           {16, 64}, 0, 0, "rms_norm * w, 2048 tokens"},
        {"mlp",      kLayerNormScale, "graph",  {1, 4096},              {1, 64}, 0, 0, "layer_norm * w + b, decode"},
        {"mlp",      kLayerNormScale, "graph",  {2048, 4096},           {16, 64}, 0, 0, "layer_norm * w + b, 2048 tokens"},
        {"first_op", kFirstOp,     "cold",      {256, 256, 256},        {64, 64, 64}, 0, 0, "child process, empty program cache"},
        {"first_op", kFirstOp,     "warm",      {256, 256, 256},        {64, 64, 64}, 0, 0, "child process, warm program cache"},
        {"memory",   kMemory,      "",          {1024},                 {8}, 0, 0, "mixed workload, then all freed"},
    };
    return table;
}

std::vector<std::string> suite_names() {
    std::vector<std::string> names;
    for (const auto& e : suite_table()) {
        bool seen = false;
        for (const auto& s : names) seen = seen || s == e.suite;
        if (!seen) names.push_back(e.suite);
    }
    names.push_back("elementwise");
    names.push_back("all");
    return names;
}

bool suite_matches(const std::string& requested, const std::string& suite) {
    if (requested == "all" || requested == suite) return true;
    return requested == "elementwise" && (suite == "unary" || suite == "binary");
}

// ---------------------------------------------------------------------------------------------
// Names.

static const char* const kDtypeNames[TGL_DTYPE_COUNT_V1_3] = {
    "?", "f32", "f16", "bf16", "i32", "i8", "u8", "bool", "i64", "i16", "?", "?", "?", "?", "?", "?",
    "q4_0", "q4_1", "q5_0", "q5_1", "q8_0", "q4_K", "q5_K", "q6_K"};

const char* dtype_name(tgl_dtype dt) { return dt < TGL_DTYPE_COUNT_V1_3 ? kDtypeNames[dt] : "?"; }

tgl_dtype parse_dtype(const std::string& s) {
    for (tgl_dtype dt = 1; dt < TGL_DTYPE_COUNT_V1_3; ++dt)
        if (s == kDtypeNames[dt]) return dt;
    return TGL_DTYPE_INVALID;
}

std::string Case::shape() const {
    std::string s;
    for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
    return s;
}

std::string Case::key() const {
    return op + (variant.empty() ? "" : "[" + variant + "]") + " " + shape() + " " +
           dtype_name(dtype);
}

Catalogue load_catalogue(const tgl::Plugin& plugin) {
    Catalogue cat;
    const tgl_plugin_api& api = plugin.api();
    for (tgl_op op = 1; op < 2000; ++op) {  // the ids of ABI 1.0 lie below 2000
        tgl_op_caps caps{};
        caps.struct_size = sizeof caps;
        if (api.query_op(op, &caps) == TGL_OK && caps.name) cat[caps.name] = caps;
    }
    return cat;
}

// ---------------------------------------------------------------------------------------------
// Recipes: operands and accounting of each op family.

namespace {

int64_t numel(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
}

std::string dtype_list(uint32_t mask) {
    std::string s;
    for (tgl_dtype dt = 1; dt < TGL_DTYPE_COUNT_V1_3; ++dt)
        if (mask & TGL_DTYPE_BIT(dt)) s += std::string(s.empty() ? "" : ", ") + kDtypeNames[dt];
    return s.empty() ? "none" : s;
}

// The output dtype: the input's if the op can write it, else the first it can (bool, i32, ...).
tgl_dtype output_dtype(const tgl_op_caps& caps, tgl_dtype in) {
    uint32_t mask = caps.output_dtypes[0];
    if (mask & TGL_DTYPE_BIT(in)) return in;
    for (tgl_dtype dt = 1; dt < TGL_DTYPE_COUNT_V1_3; ++dt)
        if (mask & TGL_DTYPE_BIT(dt)) return dt;
    return in;
}

template <class P> std::vector<uint8_t> params_bytes(const P& p) {
    std::vector<uint8_t> v(sizeof p);
    std::memcpy(v.data(), &p, sizeof p);
    return v;
}

// "dimK" -> K (normalized to [0, rank)); "" -> the last axis; false if malformed.
bool variant_axis(const std::string& variant, size_t rank, int32_t& axis) {
    if (variant.empty()) {
        axis = static_cast<int32_t>(rank) - 1;
        return true;
    }
    if (variant.compare(0, 3, "dim") != 0 || variant.size() == 3) return false;
    char* end = nullptr;
    long a = std::strtol(variant.c_str() + 3, &end, 10);
    if (*end) return false;
    if (a < 0) a += static_cast<long>(rank);
    if (a < 0 || a >= static_cast<long>(rank)) return false;
    axis = static_cast<int32_t>(a);
    return true;
}

}  // namespace

uint64_t operand_bytes(const Operand& o) {
    if (o.shape.empty()) return tgl_dtype_size(o.dtype);
    const int64_t rows = numel(std::vector<int64_t>(o.shape.begin(), o.shape.end() - 1));
    return static_cast<uint64_t>(rows) * tgl_block_row_bytes(o.dtype, static_cast<uint64_t>(o.shape.back()));
}

namespace {

// Bytes and FLOPs of a run_op workload: every present, non-aliased operand once, plus in-place
// outputs (read and written); one FLOP per element of the largest operand unless set already.
void account(Workload& w) {
    double bytes = 0, most = 0;
    for (const auto* ops : {&w.inputs, &w.outputs})
        for (const auto& o : *ops) {
            if (o.absent) continue;
            double n = static_cast<double>(numel(o.shape));
            bytes += static_cast<double>(operand_bytes(o));
            most = std::max(most, n);
        }
    w.bytes = bytes;
    if (w.flops == 0) w.flops = most;
}

// ---- params of the part-2 families, for the lead to finish once their structs are in the ABI ----
// conv2d with a square stride and padding (dilation 1, one group). Without params the op's
// defaults (stride 1, no padding) apply, so only such rows run until this builds the struct.
// conv2d: symmetric padding and stride in both spatial dims, NCHW, no bias, no activation.
bool conv_params(int64_t stride, int64_t pad, std::vector<uint8_t>& out, std::string& /*why*/) {
    auto p = tgl::make_params<tgl_conv_params>();
    p.groups = 1;
    for (int d = 0; d < 2; ++d) {
        p.stride[d] = static_cast<int32_t>(stride);
        p.dilation[d] = 1;
        p.pad_begin[d] = p.pad_end[d] = static_cast<int32_t>(pad);
    }
    out = params_bytes(p);
    return true;
}

// attention: causal or not, a causal sliding window or not, default scale 1/sqrt(D), no mask, no
// lse output.
bool attention_params(bool causal, uint32_t window, std::vector<uint8_t>& out, std::string& /*why*/) {
    auto p = tgl::make_params<tgl_attention_params>();
    p.causal = causal ? 1u : 0u;
    p.window = window;
    out = params_bytes(p);
    return true;
}

}  // namespace

Plan plan_case(const Case& c, const Catalogue& cat, Workload& w, std::string& why) {
    w = Workload{};
    const uint32_t esize = tgl_dtype_size(c.dtype);
    if (c.dims.empty() || esize == 0) {
        why = "empty shape or unknown dtype";
        return Plan::Error;
    }
    for (size_t i = 0; i < c.dims.size(); ++i)
        if (c.dims[i] <= 0 && !(c.op == "conv2d" && i == 8)) {  // conv2d's padding may be 0
            why = "every dim must be positive";
            return Plan::Error;
        }
    const int64_t n = numel(c.dims);

    if (c.op == kBufferCopy || c.op == kBufferFill) {  // in every plugin (ABI 1.0 functions)
        w.kind = c.op == kBufferCopy ? Workload::Copy : Workload::Fill;
        w.buffer_bytes = static_cast<uint64_t>(n) * esize;
        w.bytes = static_cast<double>(w.buffer_bytes) * (w.kind == Workload::Copy ? 2 : 1);
        return Plan::Run;
    }

    if (c.op == kGatedMlp) {
        if (c.dims.size() != 3) {
            why = "gated_mlp shape is TxDxF (tokens, width, hidden width)";
            return Plan::Error;
        }
        for (const char* name : {"matmul", "silu", "mul"}) {
            auto it = cat.find(name);
            if (it == cat.end() || !it->second.supported || !(it->second.input_dtypes[0] & TGL_DTYPE_BIT(c.dtype))) {
                why = std::string(name) + " in " + dtype_name(c.dtype) + " is not supported by this plugin";
                return Plan::Skip;
            }
        }
        const int64_t T = c.dims[0], D = c.dims[1], F = c.dims[2];
        w.kind = Workload::GatedMlp;
        w.graph = c.variant == "graph";
        w.inputs = {{{T, D}, c.dtype}, {{D, F}, c.dtype}, {{D, F}, c.dtype}, {{F, D}, c.dtype}};
        w.outputs = {{{T, D}, c.dtype}};
        // Each op's operands once: three matmuls, silu (g, a) and mul (a, u, h).
        w.bytes = double(esize) * double(3 * D * F + 2 * T * D + 2 * T * F + T * F + T * D + 2 * T * F + 3 * T * F);
        w.flops = 6.0 * double(T) * double(D) * double(F) + 2.0 * double(T) * double(F);
        return Plan::Run;
    }

    if (c.op == kRmsNormScale || c.op == kLayerNormScale) {
        if (c.dims.size() != 2) {
            why = c.op + " shape is TxD (tokens, width)";
            return Plan::Error;
        }
        const bool layer = c.op == kLayerNormScale;
        for (const char* name : {layer ? "layer_norm" : "rms_norm", "mul", "add"}) {
            auto it = cat.find(name);
            if (it == cat.end() || !it->second.supported || !(it->second.input_dtypes[0] & TGL_DTYPE_BIT(c.dtype))) {
                why = std::string(name) + " in " + dtype_name(c.dtype) + " is not supported by this plugin";
                return Plan::Skip;
            }
            if (std::strcmp(name, "mul") != 0 && std::strcmp(name, "add") != 0) w.op = it->second.op;
        }
        const int64_t T = c.dims[0], D = c.dims[1];
        w.kind = Workload::NormScale;
        w.graph = c.variant == "graph";
        w.inputs = {{{T, D}, c.dtype}, {{D}, c.dtype}, {{D}, c.dtype}};
        w.outputs = {{{T, D}, c.dtype}};
        // Each op's operands once: the norm (x, h), mul (h, w, t or y), add (t, b, y).
        const double td = double(T) * double(D);
        w.bytes = double(esize) * (layer ? 6 * td + 2 * double(D) : 4 * td + double(D));
        w.flops = (layer ? 2 : 1) * td;
        return Plan::Run;
    }

    const std::string op_name = c.op == kFirstOp ? "matmul" : c.op;
    auto it = cat.find(op_name);
    if (it == cat.end()) {
        why = "op \"" + op_name + "\" is not in this plugin's catalogue";
        return Plan::Skip;
    }
    const tgl_op_caps& caps = it->second;
    if (!caps.supported) {
        why = "not supported by this plugin (query_op: supported = 0)";
        return Plan::Skip;
    }
    if (!(caps.input_dtypes[0] & TGL_DTYPE_BIT(c.dtype))) {
        why = std::string("dtype ") + dtype_name(c.dtype) + " not supported (plugin: " +
              dtype_list(caps.input_dtypes[0]) + ")";
        return Plan::Skip;
    }
    w.op = caps.op;
    const tgl_dtype od = output_dtype(caps, c.dtype);
    const bool graph = c.variant == "graph";
    const bool chain = c.variant == "chain" || graph, sync = c.variant == "sync";
    w.sync_each = sync;
    w.graph = graph;
    auto malformed = [&](const std::string& what) {
        why = what;
        return Plan::Error;
    };

    // matmul (and the child process of first_op): M x K x N or B x M x K x N.
    if (caps.op == TGL_OP_MATMUL) {
        if (c.dims.size() != 3 && c.dims.size() != 4)
            return malformed("matmul shape is MxKxN or BxMxKxN");
        std::vector<int64_t> batch(c.dims.begin(), c.dims.end() - 3);
        const int64_t M = c.dims[c.dims.size() - 3], K = c.dims[c.dims.size() - 2],
                      N = c.dims.back();
        auto with_batch = [&](int64_t r, int64_t s) {
            std::vector<int64_t> v = batch;
            v.push_back(r);
            v.push_back(s);
            return v;
        };
        w.inputs = {{with_batch(M, K), c.dtype}, {with_batch(K, N), c.dtype}};
        w.outputs = {{with_batch(M, N), od}};
        w.flops = 2.0 * static_cast<double>(numel(batch)) * M * N * K;
        w.kind = c.op == kFirstOp ? Workload::FirstOp : Workload::RunOp;
        account(w);
        return Plan::Run;
    }

    // conv2d: N, C, H, W, K, R, S, stride, pad -> x NxCxHxW, weight KxCxRxS, y NxKxPxQ.
    if (op_name == "conv2d") {
        if (c.dims.size() != 9) return malformed("conv2d shape is N,C,H,W,K,R,S,stride,pad");
        const int64_t N = c.dims[0], C = c.dims[1], H = c.dims[2], W = c.dims[3], K = c.dims[4],
                      R = c.dims[5], S = c.dims[6], st = c.dims[7], pad = c.dims[8];
        const int64_t P = (H + 2 * pad - R) / st + 1, Q = (W + 2 * pad - S) / st + 1;
        if (P <= 0 || Q <= 0) return malformed("conv2d output would be empty");
        if (!conv_params(st, pad, w.params, why)) return Plan::Skip;
        w.inputs = {{{N, C, H, W}, c.dtype}, {{K, C, R, S}, c.dtype}};
        w.outputs = {{{N, K, P, Q}, od}};
        w.flops = 2.0 * N * K * P * Q * C * R * S;
    } else if (op_name == "linear") {
        // M x K x N; the variant names W's dtype (a GGUF block dtype), "" for x's.
        if (c.dims.size() != 3) return malformed("linear shape is MxKxN");
        const int64_t M = c.dims[0], K = c.dims[1], N = c.dims[2];
        const tgl_dtype wd = c.variant.empty() ? c.dtype : parse_dtype(c.variant);
        if (wd == TGL_DTYPE_INVALID) return malformed("linear variant: a dtype of W (q4_0, q4_K, q8_0, ...) or none");
        if (!(caps.input_dtypes[1] & TGL_DTYPE_BIT(wd))) {
            why = std::string("W of dtype ") + c.variant + " not supported (plugin: " + dtype_list(caps.input_dtypes[1]) + ")";
            return Plan::Skip;
        }
        w.inputs = {{{M, K}, c.dtype}, {{N, K}, wd}, {{N}, c.dtype}};
        w.inputs[2].absent = true;
        w.outputs = {{{M, N}, od}};
        w.flops = 2.0 * M * N * K;
    } else if (op_name == "set_rows") {
        // tokens, width, K: y = x (the cache, in place), K rows of src at indices all 1 (the
        // fill pattern of i32), so the last of the K duplicates lands: the GPU's work is the K
        // rows and the K^2 index comparisons, never a pass over the cache.
        if (c.dims.size() != 3) return malformed("set_rows shape is tokens,width,rows");
        const int64_t T = c.dims[0], W = c.dims[1], K = c.dims[2];
        w.inputs = {{{T, W}, c.dtype}, {{K}, TGL_DTYPE_I32}, {{K, W}, c.dtype}};
        w.outputs = {{{T, W}, od}};
        w.outputs[0].alias = 0;
        w.flops = static_cast<double>(K * W);
        w.bytes = static_cast<double>(2 * K * W * tgl_dtype_size(c.dtype) + 4 * K);  // src read, rows written
        return Plan::Run;
    } else if (op_name == "sample") {
        // B rows of V logits -> B i32 tokens. Every pass reads the row; the bytes are one read.
        if (c.dims.size() != 2) return malformed("sample shape is B,V");
        if (!(c.variant.empty() || c.variant == "greedy")) return malformed("sample variants: greedy or none");
        auto p = tgl::make_params<tgl_sample_params>();
        const bool greedy = c.variant == "greedy";
        p.temperature = greedy ? 0.0f : 0.8f;
        p.top_k = greedy ? 0 : 50;
        p.top_p = greedy ? 1.0f : 0.9f;
        p.seed = 1234;
        w.params = params_bytes(p);
        w.inputs = {{c.dims, c.dtype}};
        w.outputs = {{{c.dims[0]}, TGL_DTYPE_I32}};
        w.flops = static_cast<double>(n);
    } else if (op_name == "attention") {
        if (c.dims.size() != 5) return malformed("attention shape is B,H,Sq,Skv,D");
        const int64_t B = c.dims[0], Hh = c.dims[1], Sq = c.dims[2], Skv = c.dims[3], D = c.dims[4];
        // variants: "" (none), "causal", "swa<W>" (causal with a sliding window of W keys)
        const bool swa = c.variant.rfind("swa", 0) == 0;
        const bool causal = c.variant == "causal" || swa;
        const int64_t window = swa ? std::atoll(c.variant.c_str() + 3) : 0;
        if (!(c.variant.empty() || causal) || (swa && window <= 0))
            return malformed("attention variants: causal, swa<window> or none");
        if (!attention_params(causal, uint32_t(window), w.params, why)) return Plan::Skip;
        w.inputs = {{{B, Hh, Sq, D}, c.dtype}, {{B, Hh, Skv, D}, c.dtype}, {{B, Hh, Skv, D}, c.dtype}};
        w.outputs = {{{B, Hh, Sq, D}, od}};
        // The two matrix products (QK^T and PV) over the keys each query sees: half of them under a
        // causal mask (about), at most the window's.
        double keys = causal ? 0.5 * double(Skv) : double(Skv);
        if (swa) keys = std::min<double>(keys, double(window));
        if (Sq == 1) keys = double(swa ? std::min(window, Skv) : Skv);  // decode: its row sees the last keys
        w.flops = 4.0 * B * Hh * Sq * keys * D;
    }
    if (!w.inputs.empty()) {
        while (w.inputs.size() < caps.n_inputs) {  // bias, mask, ...: left out
            Operand absent{{1}, c.dtype};
            absent.absent = true;
            w.inputs.push_back(absent);
        }
        while (w.outputs.size() < caps.n_outputs) {
            Operand absent{{1}, od};
            absent.absent = true;
            w.outputs.push_back(absent);
        }
        account(w);
        return Plan::Run;
    }

    const int family = static_cast<int>(caps.op / 100);
    if ((family == 1 || caps.op == TGL_OP_CAST) && c.variant.empty()) {  // unary
        tgl_dtype out = od;
        if (caps.op == TGL_OP_CAST) out = c.dtype == TGL_DTYPE_F32 ? TGL_DTYPE_F16 : TGL_DTYPE_F32;
        w.inputs = {{c.dims, c.dtype}};
        w.outputs = {{c.dims, out}};
    } else if (family == 2 && caps.op != TGL_OP_WHERE) {  // binary
        if (!(c.variant.empty() || c.variant == "broadcast" || chain || sync))
            return malformed("binary variants: broadcast, chain, graph, sync");
        std::vector<int64_t> b = c.dims;
        if (c.variant == "broadcast")
            b = c.dims.size() >= 2 ? std::vector<int64_t>{c.dims.back()} : std::vector<int64_t>{1};
        w.inputs = {{c.dims, c.dtype}, {b, c.dtype}};
        w.outputs = {{c.dims, od}};
        if (chain || sync) {  // y = y + x: each run depends on the one before
            if (od != c.dtype) return malformed("chain/sync need an op that writes its input dtype");
            w.outputs[0].alias = 0;
        }
    } else if (family == 3) {  // reductions and scans along one axis
        int32_t axis = 0;
        if (!variant_axis(c.variant, c.dims.size(), axis))
            return malformed("reduction variant must be dimK with K an axis of the shape");
        std::vector<int64_t> reduced = c.dims;
        reduced.erase(reduced.begin() + axis);
        w.inputs = {{c.dims, c.dtype}};
        w.outputs = {{reduced, od}};
        tgl_var_params p{};  // also the layout of tgl_reduce_params / tgl_vector_norm_params
        p.n_axes = 1;
        p.axes[0] = axis;
        if (caps.op == TGL_OP_ARGMAX || caps.op == TGL_OP_ARGMIN) {
            auto a = tgl::make_params<tgl_arg_reduce_params>();
            a.axis = axis;
            w.params = params_bytes(a);
        } else if (caps.op == TGL_OP_CUMSUM || caps.op == TGL_OP_CUMPROD) {
            auto s = tgl::make_params<tgl_scan_params>();
            s.axis = axis;
            w.params = params_bytes(s);
            w.outputs[0].shape = c.dims;
        } else if (caps.op == TGL_OP_VAR || caps.op == TGL_OP_STD) {
            p.struct_size = sizeof(tgl_var_params);
            p.correction = 1.0f;
            w.params = params_bytes(p);
        } else if (caps.op == TGL_OP_NORM) {
            tgl_vector_norm_params q{};
            std::memcpy(&q, &p, sizeof q);
            q.struct_size = sizeof q;
            q.ord = 2.0f;
            w.params = params_bytes(q);
        } else {
            tgl_reduce_params r{};
            r.struct_size = sizeof r;
            r.n_axes = 1;
            r.axes[0] = axis;
            w.params = params_bytes(r);
        }
    } else if (caps.op == TGL_OP_SOFTMAX || caps.op == TGL_OP_LOG_SOFTMAX) {
        int32_t axis = 0;
        if (!variant_axis(c.variant, c.dims.size(), axis))
            return malformed("softmax variant must be dimK with K an axis of the shape");
        auto p = tgl::make_params<tgl_softmax_params>();
        p.axis = axis;
        p.scale = 1.0f;
        w.params = params_bytes(p);
        w.inputs = {{c.dims, c.dtype}};
        w.outputs = {{c.dims, od}};
    } else if (caps.op == TGL_OP_LAYER_NORM || caps.op == TGL_OP_RMS_NORM) {
        auto p = tgl::make_params<tgl_layer_norm_params>();
        p.n_norm_dims = 1;
        p.eps = 1e-5f;
        w.params = params_bytes(p);
        w.inputs = {{c.dims, c.dtype}};
        w.outputs = {{c.dims, od}};
    } else {
        return malformed("tensorgl-bench has no recipe for op \"" + op_name + "\" (variant \"" +
                         c.variant + "\") yet");
    }
    // Optional operands the recipe leaves out (softmax's mask, layer_norm's gamma/beta) are
    // passed as absent; run_op wants exactly the op's operand count.
    while (w.inputs.size() < caps.n_inputs) {
        Operand absent{{c.dims.back()}, c.dtype};
        absent.absent = true;
        w.inputs.push_back(absent);
    }
    account(w);
    return Plan::Run;
}

void size_copy_reference(std::vector<Case>& cases, const Catalogue& cat) {
    double most = 0;
    for (const Case& c : cases) {
        Workload w;
        std::string why;
        if (!c.copy_reference && plan_case(c, cat, w, why) == Plan::Run) most = std::max(most, w.bytes);
    }
    if (!(most > 0)) return;
    int64_t largest = 1;  // the copy suite's full size, in f32 elements
    for (const auto& e : suite_table())
        if (e.op == std::string(kBufferCopy)) largest = e.full.at(0);
    // A copy reads and writes its buffer: most / 2 bytes of f32 elements, rounded up.
    const int64_t elements = std::min<int64_t>(largest, std::max<int64_t>(1, int64_t(std::ceil(most / 8))));
    for (Case& c : cases)
        if (c.copy_reference) c.dims = {elements};
}

}  // namespace bench
