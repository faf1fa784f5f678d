#include "norm_rules.h"

#include "validate_util.h"

namespace tgl {

void plan_norm(OpCall& call, const void*) {
    fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' is not implemented", call.info->name);
}

}  // namespace tgl
