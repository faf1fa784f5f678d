// Conformance (known-answer, bad-input) tests of the select ops.
