#include "sequence_rules.h"

#include "validate_util.h"

namespace tgl {

void plan_sequence(OpCall& call, const void* /*params*/) {
    fail(TGL_ERROR_INTERNAL, "op '%s' has no plan in family Sequence", call.info->name);
}

}  // namespace tgl
