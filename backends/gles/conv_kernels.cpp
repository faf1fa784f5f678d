// GLES host side of the Conv family (plan: backends/common/conv_rules.h).
#include "gles_device.h"
#include "dispatch_util.h"

namespace tgl {
namespace gles {

void run_conv(GlesDevice& /*dev*/, const OpCall& call) {
    fail(TGL_ERROR_INTERNAL, "op '%s' has no kernel in plugin 'gles'", call.info->name);
}

}  // namespace gles
}  // namespace tgl
