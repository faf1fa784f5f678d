// report.h: results of one plugin run, and their table / JSON / CSV / comparison forms.
//
// JSON schema "tensorgl-bench/1" (torch_compare.py writes the same):
//   { "schema": "tensorgl-bench/1", "tool": "tensorgl-bench" | "torch_compare", "quick": bool,
//     "timing": { "method": "wall" | "cuda_events", "gpu_timer": "...", ...config },
//     "plugin": { "name", "version", "path" }, "device": { "index", "properties": {name: value} },
//     "copy_gbps": number | null,
//     "results": [ { "key", "suite", "op", "variant", "label", "shape", "dims": [..], "dtype",
//                    "status": "ok" | "skipped" | "error", "reason",
//                    "median_ms", "mad_ms", "rel_mad", "min_ms", "first_ms", "samples", "batch",
//                    "bytes", "flops", "gbps", "gflops", "pct_copy", "gpu_ms": number | null,
//                    "warmup_samples", "settled", "sm_clock_mhz": number | null, "note" } ],
//   settled: false where the warm-up ran out of time before the timings settled (timing.h).
//   gpu_ms: median device time per run from the ABI 1.1 timer (timer_begin/timer_end around each
//   sample; GL_EXT_disjoint_timer_query on GLES), null where the plugin/driver has none.
//     "baseline": { the same object for --baseline's plugin } (optional) }
// Rows are matched across files by "key" ("op[variant] shape dtype").
#ifndef TGL_BENCH_REPORT_H
#define TGL_BENCH_REPORT_H

#include "cases.h"
#include "json.h"
#include "timing.h"

#include <string>
#include <utility>
#include <vector>

namespace bench {

struct Result {
    Case c;
    enum Status { Ok, Skipped, Error } status = Ok;
    std::string reason;  // why skipped / what failed
    std::string note;    // extra for people (us/op, first-op phases)
    Stats st;
    double gpu_s = 0;       // median device time per run from the ABI 1.1 timer (0: none)
    int sm_clock_mhz = -1;  // the GPU's SM clock right after the timed samples (-1: unknown)
    int gpu_discarded = 0;  // samples dropped for TGL_TIMER_DISJOINT
    double bytes = 0, flops = 0;
    std::vector<std::pair<std::string, double>> extra;  // suite-specific numbers (JSON "extra")
    double gbps() const { return status == Ok && bytes > 0 ? bytes / st.median_s / 1e9 : 0; }
    double gflops() const { return status == Ok && flops > 0 ? flops / st.median_s / 1e9 : 0; }
};

struct Run {
    std::string plugin_name, plugin_version, plugin_path;
    uint32_t device_index = 0;
    std::vector<std::pair<std::string, std::string>> properties;
    bool quick = false;
    std::string gpu_timer;  // how gpu ms was measured, or why it is n/a
    TimingConfig timing;
    std::vector<Result> results;
    double copy_gbps() const;  // of the first buffer_copy row that ran, 0 if none
    std::string property(const std::string& name) const;
};

// Plain-text table on stdout (with a header saying how it was timed).
void print_table(const Run& run);
json::Value to_json(const Run& run);
std::string to_csv(const Run& run);

// Per-row comparison of two result files (matched by key): A ms, B ms and B/A throughput
// (= A time / B time; > 1: B is faster). markdown = true prints a Markdown table.
void print_compare(const json::Value& a, const json::Value& b, bool markdown);

// Reads a JSON file; false with a message on failure.
bool read_json_file(const std::string& path, json::Value& out, std::string& error);
bool write_text_file(const std::string& path, const std::string& text, std::string& error);

}  // namespace bench

#endif
