// Known-answer and bad-input tests of the Attention family, run on every plugin.
#include "common.h"
