#!/usr/bin/env python3
"""Writes the hand-made seeds of tests/fuzz/corpus: for fuzz_run_op one input per op of the
plugins' catalogue (index k of the supported ops in id order) with well-formed operands of a small
shape; for fuzz_handles a few call sequences (open, alloc, upload, copy, fill, download, free, double
free, close, use after close). The byte layout follows the Reader in fuzz_common.h: bytes past the
end read as 0, and 0 picks the common, well-formed choice."""
import os, struct, sys

here = os.path.dirname(os.path.abspath(__file__))

def run_op_seed(k, rank, dims, dtype_pick):
    b = bytearray([3])                      # 4 buffers
    for mode in (1, 0, 3, 1):               # per buffer: 4096 bytes, contents mode, xorshift seed
        b += bytes([0, mode]) + struct.pack('<I', 0x9e3779b9 + mode)
    b += bytes([0, 0]) + struct.pack('<H', k)  # one op; a catalogue op; its index
    b += bytes([0, 0, rank]) + b''.join(bytes([0, d - 1]) for d in dims) + bytes([dtype_pick])
    return bytes(b)

def main():
    n_ops = int(sys.argv[1]) if len(sys.argv) > 1 else 106
    d = os.path.join(here, 'corpus', 'fuzz_run_op')
    os.makedirs(d, exist_ok=True)
    for k in range(n_ops):  # f32 (3, 4) operands, every third op f16 (2, 2, 3)
        with open(os.path.join(d, 'seed-op%03d' % k), 'wb') as f:
            f.write(run_op_seed(k, 2, (3, 4), 0) if k % 3 else run_op_seed(k, 3, (2, 2, 3), 3))
    d = os.path.join(here, 'corpus', 'fuzz_handles')
    os.makedirs(d, exist_ok=True)
    seqs = {
        # open; alloc 64; upload; download-check; free; free again (double free); close
        'seed-alloc-free': [0, 0, 0, 2, 0, 0, 9, 64, 0, 6, 0, 0, 0, 0, 9, 0, 0, 32, 0, 0, 1, 11,
                            4, 0, 0, 0, 0, 4, 0, 0, 0, 0, 1, 0, 0],
        # open twice; alloc on each; copy across devices (foreign); fill; close one; use after close
        'seed-two-devices': [0, 0, 0, 0, 0, 0, 2, 0, 0, 9, 128, 0, 2, 0, 1, 9, 128, 0, 8, 0, 0, 0, 0,
                             0, 1, 9, 0, 0, 16, 9, 0, 0, 0, 9, 2, 9, 8, 0, 1, 0, 0, 6, 0, 0, 0, 0,
                             1, 0, 0, 10, 0, 0, 4, 0, 0, 0, 0],
    }
    for name, seq in seqs.items():
        with open(os.path.join(d, name), 'wb') as f:
            f.write(bytes(seq))

main()
