// tgl_op_coverage <report dir>: every op id of the catalogue is covered by the suites, or this
// fails naming the ops that are not. It reads the op reports (tests/support/src/op_report.cpp)
// that the conformance and differential ctests write into <report dir> (conformance_*.txt,
// differential_*.txt), and needs for each op:
//   known answer: the conformance suite ran it successfully (its tests compare each result with
//                 an answer written in the test);
//   differential: the differential suite ran it successfully on the reference and the subject
//                 (each such run is compared, reference against subject);
//   rejection:    the conformance suite had it rejected (bad input: run_op returned an error).
// Writes the table to <report dir>/op_coverage.md (the generated report) and prints the gaps.
#include "op_catalogue.h"

#include <cstdio>
#include <dirent.h>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

struct Counts {
    uint64_t known = 0, rejected = 0;
    std::map<std::string, uint64_t> diff_by_plugin;  // accepted runs in the differential suite
};

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s <op report directory>\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    std::map<uint32_t, Counts> counts;
    std::set<std::string> diff_plugins;
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string name = e->d_name;
            if ((starts_with(name, "conformance_") || starts_with(name, "differential_")) &&
                name.size() > 4 && name.compare(name.size() - 4, 4, ".txt") == 0)
                files.push_back(name);
        }
        closedir(d);
    }
    bool have_conformance = false, have_differential = false;
    for (const std::string& name : files) {
        const bool differential = starts_with(name, "differential_");
        (differential ? have_differential : have_conformance) = true;
        FILE* f = std::fopen((dir + "/" + name).c_str(), "r");
        if (!f) {
            std::fprintf(stderr, "op_coverage: cannot read %s/%s\n", dir.c_str(), name.c_str());
            return 1;
        }
        char plugin[64];
        unsigned op = 0;
        unsigned long long ok = 0, bad = 0;
        while (std::fscanf(f, "%63s %u %llu %llu", plugin, &op, &ok, &bad) == 4) {
            Counts& c = counts[op];
            if (differential) {
                diff_plugins.insert(plugin);
                c.diff_by_plugin[plugin] += ok;
            } else {
                c.known += ok;
                c.rejected += bad;
            }
        }
        std::fclose(f);
    }
    if (!have_conformance || !have_differential) {
        std::fprintf(stderr,
                     "op_coverage: %s has no %s report; the conformance and differential ctests write them "
                     "(TGL_TEST_OP_REPORT) and run first as this test's fixtures\n",
                     dir.c_str(), !have_conformance ? "conformance_*.txt" : "differential_*.txt");
        return 1;
    }

    uint32_t n = 0;
    const tgl::OpInfo* ops = tgl::all_ops(&n);
    const std::string out_path = dir + "/op_coverage.md";
    FILE* out = std::fopen(out_path.c_str(), "w");
    if (!out) {
        std::fprintf(stderr, "op_coverage: cannot write %s\n", out_path.c_str());
        return 1;
    }
    std::fprintf(out, "| op | id | known-answer runs | differential runs (");
    for (const std::string& p : diff_plugins) std::fprintf(out, "%s%s", p == *diff_plugins.begin() ? "" : ", ", p.c_str());
    std::fprintf(out, ") | rejected runs |\n|---|---|---|---|---|\n");
    int gaps = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const tgl::OpInfo& info = ops[i];
        const Counts& c = counts[info.op];
        uint64_t diff = UINT64_MAX;
        std::string diff_text;
        for (const std::string& p : diff_plugins) {
            auto it = c.diff_by_plugin.find(p);
            const uint64_t k = it == c.diff_by_plugin.end() ? 0 : it->second;
            diff = std::min(diff, k);
            diff_text += (diff_text.empty() ? "" : ", ") + std::to_string(k);
        }
        std::fprintf(out, "| %s | %u | %llu | %s | %llu |\n", info.name, info.op, (unsigned long long)c.known,
                     diff_text.c_str(), (unsigned long long)c.rejected);
        std::string missing;
        if (!c.known) missing += " known-answer";
        if (!diff) missing += " differential";
        if (!c.rejected) missing += " rejection";
        if (!missing.empty()) {
            std::printf("op '%s' (id %u) has no%s coverage\n", info.name, info.op, missing.c_str());
            ++gaps;
        }
    }
    std::fclose(out);
    std::printf("%u ops in the catalogue, %d without full coverage; table: %s\n", n, gaps, out_path.c_str());
    return gaps ? 1 : 0;
}
