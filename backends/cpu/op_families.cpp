// How the CPU plugin runs an op: the run function its family registered (register_<family>_kernels
// in the family's <family>_kernels.cpp).
#include "kernels.h"

#include "op_families.h"

namespace tgl {
namespace cpu {

void run(const OpCall& call, unsigned threads) {
    // Never destroyed: host threads may still run ops while the process exits (static destructors
    // run then; PluginLifetime.ProcessExitsWithDevicesOpenAndThreadsBusy).
    static const std::vector<CpuFamily>& families = *new std::vector<CpuFamily>(registered_family_kernels());
    family_entry(families, *call.info, "the CPU plugin's kernels (register_<family>_kernels, backends/cpu)").run(call, threads);
}

}  // namespace cpu
}  // namespace tgl
