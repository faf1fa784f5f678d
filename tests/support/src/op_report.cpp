// Op report for the op_coverage ctest: with TGL_TEST_OP_REPORT=<file> set, every run_op that a
// test makes through a Plugin is counted per plugin name and op id, as accepted (TGL_OK) or
// rejected (any other status), and the counts are written to <file> at exit:
//   <plugin name> <op id> <accepted> <rejected>
// The counters are static atomics: no allocation while tests run (alloc_fail_test counts them).
#include "tgl_test/support.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tgl_test {

namespace {

constexpr int kSlots = 4;  // plugin names recorded per process (reference, subject, ...)

struct Slot {
    char name[32] = {};
    tgl_status (*run_op)(tgl_device, tgl_op, const void*, const tgl_tensor*, uint32_t, const tgl_tensor*,
                         uint32_t) = nullptr;
    std::atomic<uint32_t> accepted[TGL_OP_ID_LIMIT] = {};
    std::atomic<uint32_t> rejected[TGL_OP_ID_LIMIT] = {};
};

Slot g_slots[kSlots];
std::mutex g_slots_mutex;
const char* g_report_path = nullptr;

template <int K>
tgl_status counted_run_op(tgl_device device, tgl_op op, const void* params, const tgl_tensor* inputs,
                          uint32_t n_inputs, const tgl_tensor* outputs, uint32_t n_outputs) {
    Slot& slot = g_slots[K];
    const tgl_status s = slot.run_op(device, op, params, inputs, n_inputs, outputs, n_outputs);
    if (op < TGL_OP_ID_LIMIT) (s == TGL_OK ? slot.accepted : slot.rejected)[op].fetch_add(1, std::memory_order_relaxed);
    return s;
}

using RunOp = decltype(Slot::run_op);
constexpr RunOp kCounted[kSlots] = {counted_run_op<0>, counted_run_op<1>, counted_run_op<2>, counted_run_op<3>};

void write_report() {
    FILE* f = std::fopen(g_report_path, "w");
    if (!f) {
        std::fprintf(stderr, "TGL_TEST_OP_REPORT=%s: cannot write the op report\n", g_report_path);
        return;
    }
    for (Slot& slot : g_slots) {
        if (!slot.run_op) continue;
        for (uint32_t op = 0; op < TGL_OP_ID_LIMIT; ++op) {
            const uint32_t a = slot.accepted[op].load(), r = slot.rejected[op].load();
            if (a || r) std::fprintf(f, "%s %u %u %u\n", slot.name, op, a, r);
        }
    }
    std::fclose(f);
}

}  // namespace

const tgl_plugin_api* counted_api(const std::string& plugin_name, const tgl_plugin_api* api, tgl_plugin_api* copy) {
    static const char* path = std::getenv("TGL_TEST_OP_REPORT");
    if (!path || !*path) return api;
    std::lock_guard<std::mutex> lock(g_slots_mutex);
    for (int k = 0; k < kSlots; ++k) {
        Slot& slot = g_slots[k];
        const bool same = slot.run_op && std::strcmp(slot.name, plugin_name.c_str()) == 0;
        if (slot.run_op && !same) continue;
        if (!slot.run_op) {
            if (!g_report_path) {
                g_report_path = path;
                std::atexit(write_report);
            }
            std::snprintf(slot.name, sizeof slot.name, "%s", plugin_name.c_str());
            slot.run_op = api->run_op;
        }
        if (slot.run_op != api->run_op) return api;  // another file of that name: not counted
        std::memcpy(copy, api, sizeof *copy);
        copy->run_op = kCounted[k];
        return copy;
    }
    return api;  // more plugins than slots: not counted
}

}  // namespace tgl_test
