// Differential tests of the Sequence family (GLES vs the CPU reference).
#include "diff.h"
