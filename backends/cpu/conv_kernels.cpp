// CPU reference kernels of the Conv family (plan: backends/common/conv_rules.h).
#include "kernels.h"
#include "status.h"

namespace tgl {
namespace cpu {

void run_conv(const OpCall& call, unsigned /*threads*/) {
    fail(TGL_ERROR_INTERNAL, "cpu kernels: no kernel for op '%s'", call.info->name);
}

}  // namespace cpu
}  // namespace tgl
