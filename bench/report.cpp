#include "report.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace bench {

double Run::copy_gbps() const {
    for (const auto& r : results)
        if (r.c.op == kBufferCopy && r.status == Result::Ok) return r.gbps();
    return 0;
}

std::string Run::property(const std::string& name) const {
    for (const auto& kv : properties)
        if (kv.first == name) return kv.second;
    return "(not reported)";
}

static const char* status_name(Result::Status s) {
    return s == Result::Ok ? "ok" : s == Result::Skipped ? "skipped" : "error";
}

static std::string fmt(const char* f, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, f, v);
    return buf;
}

// Three significant digits at least, no exponent for the ranges we see.
static std::string num(double v) {
    if (v == 0) return "0";
    double a = std::fabs(v);
    if (a >= 100) return fmt("%.0f", v);
    if (a >= 10) return fmt("%.1f", v);
    if (a >= 1) return fmt("%.2f", v);
    if (a >= 0.01) return fmt("%.4f", v);
    return fmt("%.3g", v);
}

static double pct_copy(const Run& run, const Result& r) {
    double c = run.copy_gbps();
    return c > 0 && r.gbps() > 0 ? 100.0 * r.gbps() / c : 0;
}

static std::string op_label(const Case& c) {
    return c.op + (c.variant.empty() ? "" : "[" + c.variant + "]");
}

// ---------------------------------------------------------------------------------------------
// Table.

void print_table(const Run& run) {
    std::printf("\n# plugin %s %s (%s), device %u\n", run.plugin_name.c_str(),
                run.plugin_version.c_str(), run.plugin_path.c_str(), run.device_index);
    std::printf("#   renderer: %s | api.version: %s | driver.version: %s\n",
                run.property("renderer").c_str(), run.property("api.version").c_str(),
                run.property("driver.version").c_str());
    std::printf("# timing: wall clock between synchronizes, median over samples of `batch` queued "
                "runs\n#   (stop at MAD/median < %.0f%% or %.3g s); gpu ms: %s\n",
                100 * run.timing.target_rel_mad, run.timing.max_time_s, run.gpu_timer.c_str());
    std::printf("# GB/s: each operand read or written once, 1e9 B/s; GFLOP/s: 2MNK for matmul, one "
                "per element otherwise;\n#   %% copy: of buffer_copy's %s GB/s in this run\n",
                num(run.copy_gbps()).c_str());

    std::vector<std::vector<std::string>> rows = {
        {"op", "shape", "dtype", "median ms", "+-%", "samples", "GB/s", "GFLOP/s", "% copy",
         "gpu ms", "note"}};
    for (const auto& r : run.results) {
        std::vector<std::string> row = {op_label(r.c), r.c.shape(), dtype_name(r.c.dtype)};
        if (r.status != Result::Ok) {
            row.insert(row.end(), {status_name(r.status), "", "", "", "", "", "", r.reason});
        } else {
            std::string note = r.note;
            if (!r.c.label.empty()) note = r.c.label + (note.empty() ? "" : "; " + note);
            if (r.sm_clock_mhz > 0) note += (note.empty() ? "" : "; ") + fmt("SM %.0f MHz", r.sm_clock_mhz);
            if (!r.st.settled) note += (note.empty() ? "" : "; ") + std::string("warm-up did not settle");
            row.insert(row.end(),
                       {num(r.st.median_s * 1e3), fmt("%.1f", 100 * r.st.rel_mad()),
                        std::to_string(r.st.samples) + "x" + std::to_string(r.st.batch),
                        r.bytes > 0 ? num(r.gbps()) : "-", r.flops > 0 ? num(r.gflops()) : "-",
                        pct_copy(run, r) > 0 ? fmt("%.1f", pct_copy(run, r)) : "-",
                        r.gpu_s > 0 ? num(r.gpu_s * 1e3) : "n/a", note});
        }
        rows.push_back(row);
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& row : rows)
        for (size_t i = 0; i + 1 < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (const auto& row : rows) {
        std::string line;
        for (size_t i = 0; i < row.size(); ++i) {
            bool left = i < 3 || i + 1 == row.size();
            std::string cell = row[i];
            if (i + 1 < row.size()) {
                std::string pad(width[i] - cell.size(), ' ');
                cell = left ? cell + pad : pad + cell;
            }
            line += (i ? "  " : "") + cell;
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        std::printf("%s\n", line.c_str());
    }
    std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// JSON and CSV.

json::Value to_json(const Run& run) {
    using json::Value;
    Value root = Value::object();
    root.set("schema", "tensorgl-bench/1");
    root.set("tool", "tensorgl-bench");
    root.set("quick", run.quick);
    Value timing = Value::object();
    timing.set("method", "wall");
    timing.set("gpu_timer", run.gpu_timer);
    timing.set("target_rel_mad", run.timing.target_rel_mad);
    timing.set("max_time_s", run.timing.max_time_s);
    timing.set("min_samples", run.timing.min_samples);
    timing.set("warmup_s", run.timing.warmup_s);
    timing.set("warmup_max_s", run.timing.warmup_max_s);
    timing.set("settle_samples", run.timing.settle_samples);
    timing.set("settle_rel", run.timing.settle_rel);
    timing.set("target_sample_s", run.timing.target_sample_s);
    root.set("timing", timing);
    Value plugin = Value::object();
    plugin.set("name", run.plugin_name);
    plugin.set("version", run.plugin_version);
    plugin.set("path", run.plugin_path);
    root.set("plugin", plugin);
    Value device = Value::object();
    device.set("index", run.device_index);
    Value props = Value::object();
    for (const auto& kv : run.properties) props.set(kv.first, kv.second);
    device.set("properties", props);
    root.set("device", device);
    root.set("copy_gbps", run.copy_gbps() > 0 ? Value(run.copy_gbps()) : Value());

    Value results = Value::array();
    for (const auto& r : run.results) {
        Value row = Value::object();
        row.set("key", r.c.key());
        row.set("suite", r.c.suite);
        row.set("op", r.c.op);
        row.set("variant", r.c.variant);
        row.set("label", r.c.label);
        row.set("shape", r.c.shape());
        Value dims = Value::array();
        for (int64_t d : r.c.dims) dims.push(static_cast<long long>(d));
        row.set("dims", dims);
        row.set("dtype", dtype_name(r.c.dtype));
        row.set("status", status_name(r.status));
        row.set("reason", r.reason);
        const bool ok = r.status == Result::Ok;
        auto opt = [&](double v) { return ok ? Value(v) : Value(); };
        row.set("median_ms", opt(r.st.median_s * 1e3));
        row.set("mad_ms", opt(r.st.mad_s * 1e3));
        row.set("rel_mad", opt(r.st.rel_mad()));
        row.set("min_ms", opt(r.st.min_s * 1e3));
        row.set("first_ms", opt(r.st.first_s * 1e3));
        row.set("samples", r.st.samples);
        row.set("batch", r.st.batch);
        row.set("bytes", r.bytes);
        row.set("flops", r.flops);
        row.set("gbps", ok && r.bytes > 0 ? Value(r.gbps()) : Value());
        row.set("gflops", ok && r.flops > 0 ? Value(r.gflops()) : Value());
        row.set("pct_copy", pct_copy(run, r) > 0 ? Value(pct_copy(run, r)) : Value());
        row.set("gpu_ms", ok && r.gpu_s > 0 ? Value(r.gpu_s * 1e3) : Value());
        row.set("warmup_samples", r.st.warmup_samples);
        row.set("settled", r.st.settled);
        row.set("sm_clock_mhz", ok && r.sm_clock_mhz > 0 ? Value(r.sm_clock_mhz) : Value());
        row.set("note", r.note);
        if (!r.extra.empty()) {
            Value extra = Value::object();
            for (const auto& kv : r.extra) extra.set(kv.first, kv.second);
            row.set("extra", extra);
        }
        results.push(row);
    }
    root.set("results", results);
    return root;
}

static std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
}

std::string to_csv(const Run& run) {
    std::ostringstream o;
    o << "plugin,suite,op,variant,shape,dtype,status,median_ms,mad_ms,samples,batch,bytes,flops,"
         "gbps,gflops,pct_copy,gpu_ms,note\n";
    for (const auto& r : run.results) {
        const bool ok = r.status == Result::Ok;
        auto n = [&](double v, bool have) { return have ? fmt("%.6g", v) : std::string(); };
        o << csv_cell(run.plugin_name) << ',' << r.c.suite << ',' << r.c.op << ',' << r.c.variant
          << ',' << r.c.shape() << ',' << dtype_name(r.c.dtype) << ',' << status_name(r.status)
          << ',' << n(r.st.median_s * 1e3, ok) << ',' << n(r.st.mad_s * 1e3, ok) << ','
          << r.st.samples << ',' << r.st.batch << ',' << fmt("%.0f", r.bytes) << ','
          << fmt("%.0f", r.flops) << ',' << n(r.gbps(), ok && r.bytes > 0) << ','
          << n(r.gflops(), ok && r.flops > 0) << ',' << n(pct_copy(run, r), pct_copy(run, r) > 0)
          << ',' << (ok && r.gpu_s > 0 ? fmt("%.6g", r.gpu_s * 1e3) : std::string("n/a")) << ','
          << csv_cell(r.status == Result::Ok ? r.note : r.reason) << '\n';
    }
    return o.str();
}

// ---------------------------------------------------------------------------------------------
// Comparison.

static std::string run_name(const json::Value& v) {
    const json::Value* p = v.get("plugin");
    std::string name = p ? p->string_or("name", "?") : "?";
    const json::Value* d = v.get("device");
    const json::Value* props = d ? d->get("properties") : nullptr;
    std::string dev = props ? props->string_or("renderer", props->string_or("name", "")) : "";
    return dev.empty() ? name : name + " (" + dev + ")";
}

void print_compare(const json::Value& a, const json::Value& b, bool markdown) {
    const json::Value* ra = a.get("results");
    const json::Value* rb = b.get("results");
    std::printf("\n# compare: A = %s, B = %s\n# ratio = B/A throughput (A median / B median; > 1: "
                "B is faster)\n",
                run_name(a).c_str(), run_name(b).c_str());
    std::vector<std::vector<std::string>> rows = {
        {"op", "shape", "dtype", "A ms", "B ms", "B/A", "A GB/s", "B GB/s", "A GFLOP/s",
         "B GFLOP/s"}};
    auto find = [](const json::Value* rs, const std::string& key) -> const json::Value* {
        if (!rs) return nullptr;
        for (const auto& r : rs->arr)
            if (r.string_or("key", "") == key) return &r;
        return nullptr;
    };
    auto cell = [](const json::Value* r, const char* field) -> std::string {
        if (!r) return "missing";
        if (r->string_or("status", "") != "ok") return r->string_or("status", "?");
        const json::Value* v = r->get(field);
        return v && v->kind == json::Value::Number ? num(v->num) : "-";
    };
    // Rows of A in order, then rows only B has.
    std::vector<std::string> keys;
    for (const auto* rs : {ra, rb})
        if (rs)
            for (const auto& r : rs->arr) {
                std::string k = r.string_or("key", "");
                bool seen = false;
                for (const auto& x : keys) seen = seen || x == k;
                if (!seen && !k.empty()) keys.push_back(k);
            }
    for (const auto& k : keys) {
        const json::Value* x = find(ra, k);
        const json::Value* y = find(rb, k);
        const json::Value* any = x ? x : y;
        std::string op = any->string_or("op", "?"), variant = any->string_or("variant", "");
        if (!variant.empty()) op += "[" + variant + "]";
        std::string ratio = "-";
        double ta = x ? x->number_or("median_ms", 0) : 0, tb = y ? y->number_or("median_ms", 0) : 0;
        if (ta > 0 && tb > 0) ratio = fmt("%.3f", ta / tb);
        rows.push_back({op, any->string_or("shape", "?"), any->string_or("dtype", "?"),
                        cell(x, "median_ms"), cell(y, "median_ms"), ratio, cell(x, "gbps"),
                        cell(y, "gbps"), cell(x, "gflops"), cell(y, "gflops")});
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& row : rows)
        for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    for (size_t r = 0; r < rows.size(); ++r) {
        std::string line = markdown ? "|" : "";
        for (size_t i = 0; i < rows[r].size(); ++i) {
            std::string pad(width[i] - rows[r][i].size(), ' ');
            std::string cell = i < 3 ? rows[r][i] + pad : pad + rows[r][i];
            line += markdown ? " " + cell + " |" : (i ? "  " : "") + cell;
        }
        std::printf("%s\n", line.c_str());
        if (markdown && r == 0) {
            std::string sep = "|";
            for (size_t i = 0; i < width.size(); ++i)
                sep += i < 3 ? std::string(width[i] + 2, '-') + "|"
                             : std::string(width[i] + 1, '-') + ":|";
            std::printf("%s\n", sep.c_str());
        }
    }
    std::fflush(stdout);
}

// ---------------------------------------------------------------------------------------------
// Files.

bool read_json_file(const std::string& path, json::Value& out, std::string& error) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        error = "cannot open " + path;
        return false;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    if (!json::parse(ss.str(), out, error)) {
        error = path + ": " + error;
        return false;
    }
    return true;
}

bool write_text_file(const std::string& path, const std::string& text, std::string& error) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) {
        error = "cannot write " + path;
        return false;
    }
    return true;
}

}  // namespace bench
