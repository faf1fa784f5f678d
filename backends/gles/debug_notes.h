// TGL_GLES_DEBUG (README): when set, the plugin notes on stderr what it decides and how long things
// take (devices probed, programs compiled or loaded, the GL thread's long tasks, kernel choices).
// The variable is read here only; each note's text stays with the code it describes.
#pragma once

#include <cstdlib>

namespace tgl {
namespace gles {

inline bool debug_enabled() { return ::secure_getenv("TGL_GLES_DEBUG") != nullptr; }

}  // namespace gles
}  // namespace tgl
