#include "grad_rules.h"

#include "validate_util.h"

namespace tgl {

void plan_grad(OpCall& call, const void* /*params*/) {
    fail(TGL_ERROR_INTERNAL, "op '%s' has no plan in family Grad", call.info->name);
}

}  // namespace tgl
