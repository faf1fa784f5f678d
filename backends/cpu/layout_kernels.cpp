// CPU reference kernels of the Layout family (plan: backends/common/layout_rules.h).
#include "kernels.h"

#include "status.h"

namespace tgl {
namespace cpu {

void run_layout(const OpCall& call, unsigned) {
    fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' is not implemented by plugin 'cpu'", call.info->name);
}

}  // namespace cpu
}  // namespace tgl
