// Known-answer and bad-input tests of the Conv family, run on every plugin.
#include "common.h"
