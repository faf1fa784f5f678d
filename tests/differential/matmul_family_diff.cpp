// Differential tests of the matmul family beyond plain f32 matmul (GLES vs the CPU reference).
#include "diff.h"
