// Differential tests of the Attention family (GLES vs the CPU reference).
#include "diff.h"
