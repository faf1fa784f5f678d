// Conformance (known-answer, bad-input) tests of the generate ops.
