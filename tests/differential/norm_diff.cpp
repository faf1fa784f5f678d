// Differential tests (GLES vs CPU) of the norm ops.
