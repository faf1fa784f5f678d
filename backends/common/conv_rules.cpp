#include "conv_rules.h"

#include "validate_util.h"

namespace tgl {

void plan_conv(OpCall& call, const void* /*params*/) {
    fail(TGL_ERROR_INTERNAL, "op '%s' has no plan in family Conv", call.info->name);
}

}  // namespace tgl
