// Differential tests (GLES vs CPU) of the layout ops.
