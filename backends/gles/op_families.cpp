// How the GLES plugin finds an op's family: the entries the families registered
// (register_<family>_kernels in their <family>_kernels.cpp).
#include "gles_families.h"

#include "op_families.h"

namespace tgl {
namespace gles {

const GlesFamily& gles_family(const OpInfo& info) {
    // Never destroyed: host threads may still run ops while the process exits (static destructors
    // run then; PluginLifetime.ProcessExitsWithDevicesOpenAndThreadsBusy).
    static const std::vector<GlesFamily>& families = *new std::vector<GlesFamily>(registered_family_kernels());
    return family_entry(families, info, "the GLES plugin's kernels (register_<family>_kernels, backends/gles)");
}

}  // namespace gles
}  // namespace tgl
