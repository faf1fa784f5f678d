// Known-answer and bad-input tests of the matmul family (linear, qkv, grouped and quantized matmul, f16 storage), run on every plugin.
#include "common.h"
