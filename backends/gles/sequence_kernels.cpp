// GLES host side of the Sequence family (plan: backends/common/sequence_rules.h).
#include "gles_device.h"
#include "dispatch_util.h"

namespace tgl {
namespace gles {

void run_sequence(GlesDevice& /*dev*/, const OpCall& call) {
    fail(TGL_ERROR_INTERNAL, "op '%s' has no kernel in plugin 'gles'", call.info->name);
}

}  // namespace gles
}  // namespace tgl
