#include "pool_rules.h"

#include "validate_util.h"

namespace tgl {

void plan_pool(OpCall& call, const void* /*params*/) {
    fail(TGL_ERROR_INTERNAL, "op '%s' has no plan in family Pool", call.info->name);
}

}  // namespace tgl
