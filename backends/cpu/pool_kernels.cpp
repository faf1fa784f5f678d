// CPU reference kernels of the Pool family (plan: backends/common/pool_rules.h).
#include "kernels.h"
#include "status.h"

namespace tgl {
namespace cpu {

void run_pool(const OpCall& call, unsigned /*threads*/) {
    fail(TGL_ERROR_INTERNAL, "cpu kernels: no kernel for op '%s'", call.info->name);
}

}  // namespace cpu
}  // namespace tgl
