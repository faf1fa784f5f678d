// Differential tests (GLES vs CPU) of the generate ops.
