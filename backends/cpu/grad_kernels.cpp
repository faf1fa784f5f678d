// CPU reference kernels of the Grad family (plan: backends/common/grad_rules.h).
#include "kernels.h"
#include "status.h"

namespace tgl {
namespace cpu {

void run_grad(const OpCall& call, unsigned /*threads*/) {
    fail(TGL_ERROR_INTERNAL, "cpu kernels: no kernel for op '%s'", call.info->name);
}

}  // namespace cpu
}  // namespace tgl
