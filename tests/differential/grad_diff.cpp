// Differential tests of the Grad family (GLES vs the CPU reference).
#include "diff.h"
