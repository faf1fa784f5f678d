// Conformance (known-answer, bad-input) tests of the index ops.
