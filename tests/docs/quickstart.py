#!/usr/bin/python3
"""The README's quick starts, kept true by ctest (tests/docs/CMakeLists.txt).

A quick start is the first fenced block after a line `<!-- quickstart:LANG -->` in README.md; what
it prints is the first fenced block after `<!-- quickstart:LANG output -->`.

  quickstart.py extract README.md LANG OUT
      writes the LANG block to OUT (at build time: the C and C++ ones are compiled from it).
  quickstart.py run README.md LANG [--python-path DIR]... -- COMMAND...
      runs COMMAND (the built program) and checks that it exits 0 and prints the README's output
      block: the same words, numbers equal within 1e-4 relative (so [1. 1.] matches
      [0.99999994 1.]), whitespace free.
  quickstart.py run README.md python --python-path DIR... -- PYTHON
      runs the python block with PYTHON, with the first DIR that holds a tensorgl package on
      PYTHONPATH. Exits 77 (ctest: skipped) only when no `tensorgl` package can be found at all.
"""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?(?:inf|nan)\b")


def block(readme, marker):
    """The body of the first fenced block after the line <!-- marker -->."""
    lines = open(readme, encoding="utf-8").read().split("\n")
    tag = "<!-- %s -->" % marker
    try:
        at = next(i for i, line in enumerate(lines) if line.strip() == tag)
    except StopIteration:
        sys.exit("%s has no line %s (the quick start this test checks)" % (readme, tag))
    start = next((i for i in range(at + 1, len(lines)) if lines[i].startswith("```")), None)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("```")), None) if start else None
    if start is None or end is None:
        sys.exit("%s: no complete ``` block after %s (line %d)" % (readme, tag, at + 1))
    return "\n".join(lines[start + 1:end]) + "\n"


def tokens(text):
    """Numbers (as floats) and the other non-space runs between them."""
    out, pos = [], 0
    for m in NUMBER.finditer(text):
        out += text[pos:m.start()].split()
        out.append(float(m.group()))
        pos = m.end()
    return out + text[pos:].split()


def same(expected, actual):
    e, a = tokens(expected), tokens(actual)
    if len(e) != len(a):
        return False
    for x, y in zip(e, a):
        if isinstance(x, float) != isinstance(y, float):
            return False
        if isinstance(x, float):
            if not abs(x - y) <= 1e-4 * max(abs(x), 1.0):
                return False
        elif x != y:
            return False
    return True


def run(readme, lang, python_paths, command):
    expected = block(readme, "quickstart:%s output" % lang)
    env = dict(os.environ)
    if lang == "python":
        found = [d for d in python_paths if os.path.isfile(os.path.join(d, "tensorgl", "__init__.py"))]
        if not found and importlib.util.find_spec("tensorgl") is None:
            print("SKIPPED: no `tensorgl` Python package to import (looked in %s and the interpreter's "
                  "path); the README's Python quick start was not run" % ", ".join(python_paths))
            return SKIP
        if found:
            env["PYTHONPATH"] = os.pathsep.join([found[0]] + [p for p in [env.get("PYTHONPATH")] if p])
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
            f.write(block(readme, "quickstart:python"))
        command = command + [f.name]
    try:
        p = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        if lang == "python":
            os.unlink(f.name)
    sys.stdout.write(p.stdout)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        print("FAILED: the %s quick start exited with status %d" % (lang, p.returncode))
        return 1
    if not same(expected, p.stdout):
        print("FAILED: the %s quick start printed\n%s\nwhere README.md shows\n%s" % (lang, p.stdout, expected))
        return 1
    print("OK: the %s quick start prints what README.md shows" % lang)
    return 0


def main(argv):
    if len(argv) == 5 and argv[1] == "extract":
        text = block(argv[2], "quickstart:%s" % argv[3])
        with open(argv[4], "w", encoding="utf-8") as f:
            f.write(text)
        return 0
    if len(argv) >= 6 and argv[1] == "run" and "--" in argv:
        sep = argv.index("--")
        opts, command = argv[4:sep], argv[sep + 1:]
        paths = [opts[i + 1] for i in range(0, len(opts) - 1, 2) if opts[i] == "--python-path"]
        if len(paths) * 2 != len(opts) or not command:
            sys.exit(__doc__)
        return run(argv[2], argv[3], paths, command)
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
