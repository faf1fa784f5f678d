#include "index_rules.h"

#include "validate_util.h"

namespace tgl {

void plan_index(OpCall& call, const void*) {
    fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' is not implemented", call.info->name);
}

}  // namespace tgl
