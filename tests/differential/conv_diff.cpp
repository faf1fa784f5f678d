// Differential tests of the Conv family (GLES vs the CPU reference).
#include "diff.h"
