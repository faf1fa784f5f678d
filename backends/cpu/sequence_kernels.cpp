// CPU reference kernels of the Sequence family (plan: backends/common/sequence_rules.h).
#include "kernels.h"
#include "status.h"

namespace tgl {
namespace cpu {

void run_sequence(const OpCall& call, unsigned /*threads*/) {
    fail(TGL_ERROR_INTERNAL, "cpu kernels: no kernel for op '%s'", call.info->name);
}

}  // namespace cpu
}  // namespace tgl
