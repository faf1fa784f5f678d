#include "attention_rules.h"

#include "validate_util.h"

namespace tgl {

void plan_attention(OpCall& call, const void* /*params*/) {
    fail(TGL_ERROR_INTERNAL, "op '%s' has no plan in family Attention", call.info->name);
}

}  // namespace tgl
