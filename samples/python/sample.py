#!/usr/bin/python3
"""tensorgl Python sample: the computation of the C sample, checked against numpy.

    Y = relu(X @ W + bias)      X: 4x5, W: 5x3, bias: 3 (broadcast over the rows)
    s = sum(Y, axis 1)          s: 4

Four ops (matmul, add with broadcasting, relu, sum over axis 1) run on a tensorgl plugin ("gles"
unless another name or a plugin path is given); the results are compared with a float64 numpy
reference and the program exits 0 only if every element agrees within 1e-5 relative:
|y - ref| <= 1e-5 * max(|ref|, 1).

Usage: python3 sample.py [plugin] [--lib PATH], with the package tensorgl installed (pip install
./python, or cmake --install), or from a build tree:
    PYTHONPATH=<build>/python TENSORGL_LIB=<build>/lib/libtensorgl.so /usr/bin/python3 sample.py
"""

import argparse
import sys

import numpy as np

import tensorgl

M, K, N = 4, 5, 3
TOL = 1e-5


def inputs():
    """The same deterministic inputs as samples/c/matmul_bias_relu.c."""
    i = np.arange(M * K)
    x = (((i * 7 % 11) - 5) * 0.25 + 0.125).astype(np.float32).reshape(M, K)
    i = np.arange(K * N)
    w = (((i * 5 % 13) - 6).astype(np.float32) * np.float32(0.3)).reshape(K, N)
    bias = (np.float32(0.5) - np.float32(0.75) * np.arange(N, dtype=np.float32)).astype(np.float32)
    return x, w, bias


def run(plugin, x, w, bias):
    """The four ops on device 0 of `plugin`; returns (Y, s) as numpy arrays."""
    with tensorgl.Device(plugin, 0) as dev:
        tx, tw, tb = dev.tensor(x), dev.tensor(w), dev.tensor(bias)
        h = tx @ tw                         # X @ W             (4, 3)
        t = h + tb                          # + bias, broadcast (4, 3)
        y = tensorgl.relu(t)                # relu              (4, 3)
        s = tensorgl.sum(y, dim=1)          # row sums          (4,)
        return y.numpy(), s.numpy()


def agree(got, ref):
    """Elementwise |got - ref| <= TOL * max(|ref|, 1); NaN never agrees."""
    return np.abs(got.astype(np.float64) - ref) <= TOL * np.maximum(np.abs(ref), 1.0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plugin", nargs="?", default="gles", help="plugin name or path (default gles)")
    ap.add_argument("--lib", default=None,
                    help="path of libtensorgl (default: $TENSORGL_LIB, then the system search)")
    args = ap.parse_args(argv)

    np.set_printoptions(precision=6, suppress=True, floatmode="fixed")
    try:
        lib = tensorgl.Library(args.lib)
        plugin = lib.load_plugin(args.plugin)
        info = plugin.info()
        print("plugin %r %s (ABI %d.%d) from %s" % (info["name"], info["version"],
                                                    info["abi_major"], info["abi_minor"],
                                                    plugin.path))
        n = plugin.device_count()
        if n == 0:
            print("FAILED: plugin %r reports 0 devices: no usable device on this machine"
                  % info["name"], file=sys.stderr)
            return 1
        props = plugin.device_properties(0)
        print("device 0 of %d: name: %s" % (n, props.get("name", "(not reported)")))
        print("  renderer:    %s" % props.get("renderer", "(not reported)"))
        print("  api.version: %s" % props.get("api.version", "(not reported)"))

        x, w, bias = inputs()
        y, s = run(plugin, x, w, bias)
    except (tensorgl.TensorGLError, OSError) as e:
        print("FAILED: %s" % e, file=sys.stderr)
        return 1

    # float64 reference from the same float32 inputs.
    y_ref = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + bias.astype(np.float64), 0.0)
    s_ref = y_ref.sum(axis=1)

    print("\nY = relu(X @ W + bias) on %r:\n%s" % (args.plugin, y))
    print("Y numpy (float64):\n%s" % y_ref)
    print("s = sum(Y, axis 1) on %r: %s" % (args.plugin, s))
    print("s numpy (float64):        %s" % s_ref)

    ok = True
    for name, got, ref in (("Y", y, y_ref), ("s", s, s_ref)):
        if got.shape != ref.shape:
            print("FAILED: %s has shape %s, expected %s" % (name, got.shape, ref.shape),
                  file=sys.stderr)
            ok = False
            continue
        good = agree(got, ref)
        diff = np.abs(got.astype(np.float64) - ref)
        print("%s: max abs difference %.3g" % (name, np.max(diff) if diff.size else 0.0))
        if not good.all():
            bad = np.argwhere(~good)
            print("FAILED: %s differs from numpy at %d element(s), first at %s: %r vs %r"
                  % (name, len(bad), tuple(bad[0]), got[tuple(bad[0])], ref[tuple(bad[0])]),
                  file=sys.stderr)
            ok = False
    if ok:
        print("OK: %r agrees with numpy within %g relative" % (args.plugin, TOL))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
