// Conformance (known-answer, bad-input) tests of the layout_ops ops.
