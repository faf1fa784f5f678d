// Conformance (known-answer, bad-input) tests of the norm ops.
