// Known-answer and bad-input tests of the Grad family, run on every plugin.
#include "common.h"
