// CPU reference kernels of the Select family (plan: backends/common/select_rules.h).
#include "kernels.h"

#include "status.h"

namespace tgl {
namespace cpu {

void run_select(const OpCall& call, unsigned) {
    fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' is not implemented by plugin 'cpu'", call.info->name);
}

}  // namespace cpu
}  // namespace tgl
