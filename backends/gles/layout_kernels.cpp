// GLES host side of the Layout family (plan: backends/common/layout_rules.h).
#include "gles_device.h"
#include "dispatch_util.h"

namespace tgl {
namespace gles {

void run_layout(GlesDevice&, const OpCall& call) {
    fail(TGL_ERROR_UNIMPLEMENTED, "op '%s' is not implemented by plugin 'gles'", call.info->name);
}

}  // namespace gles
}  // namespace tgl
