// Known-answer and bad-input tests of the Sequence family, run on every plugin.
#include "common.h"
