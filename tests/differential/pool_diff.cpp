// Differential tests of the Pool family (GLES vs the CPU reference).
#include "diff.h"
