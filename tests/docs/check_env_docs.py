#!/usr/bin/python3
"""docs_env_vars: every TGL_* / TENSORGL_* environment variable the code reads is documented in
README.md or docs/*.md.

A name counts as read when it appears as a string literal in C, C++ or Python source ("TGL_DEVICE",
a prefix such as "TGL_FIXTURE_LOAD_" stands for its family) or as $NAME / ${NAME...} in a shell
script, unless it is an identifier of the ABI's or the loader's headers (status, dtype and op names
appear as strings in messages). Usage: check_env_docs.py <repository root>
"""

import os
import re
import sys

SOURCES = (".c", ".cpp", ".h", ".hpp", ".py")
LITERAL = re.compile(r"[\"']((?:TGL|TENSORGL)_[A-Z0-9_]*)[\"']")
SHELL = re.compile(r"\$\{?((?:TGL|TENSORGL)_[A-Z0-9_]+)")
HEADERS = ("plugin_api/tensorgl/plugin_api.h", "plugin_api/tensorgl/ops.h", "loader/include/tensorgl/loader.h")


def files(root):
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if not x.startswith((".", "build")) and x != "__pycache__"
                   and not os.path.exists(os.path.join(d, x, "CMakeCache.txt"))]
        for n in names:
            yield os.path.join(d, n)


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    root = os.path.realpath(argv[1])
    identifiers = set()
    for h in HEADERS:
        code = re.sub(r"/\*.*?\*/|//[^\n]*", "", open(os.path.join(root, h)).read(), flags=re.S)  # not comments
        identifiers |= set(re.findall(r"\b(?:TGL|TENSORGL)_[A-Z0-9_]+", code))
    read = {}  # name -> first file that reads it
    for path in files(root):
        pattern = LITERAL if path.endswith(SOURCES) else SHELL if path.endswith(".sh") else None
        if pattern is None or "/tests/docs/" in path:
            continue
        for name in pattern.findall(open(path, encoding="utf-8", errors="replace").read()):
            is_identifier = name in identifiers or (name.endswith("_") and any(i.startswith(name) for i in identifiers))
            if not is_identifier:
                read.setdefault(name, os.path.relpath(path, root))
    docs = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    docs_dir = os.path.join(root, "docs")
    for n in sorted(os.listdir(docs_dir)) if os.path.isdir(docs_dir) else []:
        if n.endswith(".md"):
            docs += open(os.path.join(docs_dir, n), encoding="utf-8").read()
    documented = set(re.findall(r"(?:TGL|TENSORGL)_[A-Z0-9_]+", docs))
    missing = sorted(n for n in read if n not in documented)  # a prefix ("TGL_FIXTURE_LOAD_") as written
    for n in missing:
        print("%s (read in %s) is documented neither in README.md nor in docs/" % (n, read[n]))
    if missing:
        print("FAILED: %d environment variable(s) undocumented" % len(missing))
        return 1
    print("OK: the %d TGL_*/TENSORGL_* environment variables the code reads are documented" % len(read))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
