// Differential tests (GLES vs CPU) of the select ops.
