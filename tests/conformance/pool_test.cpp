// Known-answer and bad-input tests of the Pool family, run on every plugin.
#include "common.h"
