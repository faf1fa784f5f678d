// Differential tests (GLES vs CPU) of the index ops.
