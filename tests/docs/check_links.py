#!/usr/bin/python3
"""docs_links: the repository's Markdown files link only inside the repository, and every link
resolves. Fails on
  - a link or URL to anything outside: http(s)://, mailto:, any other scheme, anywhere in the text;
  - a relative link (inline, image or reference definition) to a file or directory that does not
    exist, or that lies outside the repository;
  - an #anchor that no heading of the target file (or of this file) makes, by GitHub's rules;
  - a path written in the text that climbs out of the repository (`../elsewhere/file`).
Usage: check_links.py <repository root>
       check_links.py --self-test     (the checker on made-up files: each kind of bad link is caught)
"""

import os
import re
import subprocess
import sys

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
URL = re.compile(r"\b(?:(?:https?|ftp|file)://|mailto:)[^\s)>\]`'\"]*", re.I)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
CLIMB = re.compile(r"(?<![\w./-])((?:\.\./)+[\w.-][\w./-]*)")


def markdown_files(root):
    """Tracked and untracked (not ignored) *.md files; every *.md outside build trees without git."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-co", "--exclude-standard", "*.md"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout
        return sorted(os.path.join(root, f) for f in out.split("\n") if f and os.path.isfile(os.path.join(root, f)))
    except (OSError, subprocess.CalledProcessError):
        found = []
        for d, dirs, files in os.walk(root):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))
                       and not os.path.exists(os.path.join(d, x, "CMakeCache.txt"))]
            found += [os.path.join(d, f) for f in files if f.endswith(".md")]
        return sorted(found)


def prose(text):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s{0,3}(```|~~~)", line)
        if m:
            fence = None if fence == m.group(1) else (fence or m.group(1))
            continue
        if fence is None:
            yield n, line


def anchors(path, cache={}):
    """The anchors GitHub makes for the headings of a Markdown file."""
    if path not in cache:
        seen, made = {}, set()
        for _, line in prose(open(path, encoding="utf-8").read()):
            m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            k = seen.get(slug, 0)
            seen[slug] = k + 1
            made.add(slug if k == 0 else "%s-%d" % (slug, k))
        cache[path] = made
    return cache[path]


def inside(root, path):
    return os.path.realpath(path) == root or os.path.realpath(path).startswith(root + os.sep)


def check(root, md):
    problems = []
    rel = os.path.relpath(md, root)
    text = open(md, encoding="utf-8").read()
    for n, line in enumerate(text.split("\n"), 1):  # URLs count in code blocks too
        for url in URL.findall(line):
            problems.append("%s:%d: links outside the repository: %s" % (rel, n, url))
    for n, line in prose(text):
        targets = INLINE.findall(re.sub(r"`[^`]*`", "``", line)) + REFERENCE.findall(line)
        for target in targets:
            if SCHEME.match(target):
                if not URL.match(target):
                    problems.append("%s:%d: links outside the repository: %s" % (rel, n, target))
                continue  # an http(s) target is reported above
            path, _, anchor = target.partition("#")
            dest = md if not path else os.path.normpath(os.path.join(os.path.dirname(md), path))
            if not inside(root, dest):
                problems.append("%s:%d: links outside the repository: %s" % (rel, n, target))
            elif not os.path.exists(dest):
                problems.append("%s:%d: broken link: %s (no such file: %s)" % (rel, n, target, os.path.relpath(dest, root)))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                problems.append("%s:%d: broken link: %s (no heading of %s makes #%s)"
                                % (rel, n, target, os.path.relpath(dest, root), anchor))
        for path in CLIMB.findall(line):
            if not inside(root, os.path.join(os.path.dirname(md), path)):
                problems.append("%s:%d: names a path outside the repository: %s" % (rel, n, path))
    return problems


def self_test():
    """Writes a tiny repository with one link of each kind, checks that exactly the bad ones are reported."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.realpath(os.path.join(tmp, "repo"))
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "a.md"), "w") as f:
            f.write("# Title\n\n## Some `code` (here)\n\n```sh\n# not a heading\n```\n")
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("\n".join([
                "# Top",
                "[ok](docs/a.md) [ok](docs/a.md#some-code-here) [ok](#top) ![ok](docs/) [ok][r]",
                "[web](https://example.org/x) see <http://example.org> or mailto:someone@example.org",
                "[missing](docs/b.md) [anchor](docs/a.md#not-a-heading) [self](#nowhere)",
                "[escape](../outside.md) and the path ../../etc/passwd in the text",
                "`[in code](nowhere.md)` is not a link",
                "[r]: docs/a.md#title",
                "[s]: docs/c.md",
                "```", "ftp://example.org in a code block still counts", "```", ""]))
        got = [p.split(": ", 1)[1] for p in check(root, os.path.join(root, "README.md"))]
    want = ["links outside the repository: https://example.org/x",
            "links outside the repository: http://example.org",
            "links outside the repository: mailto:someone@example.org",
            "links outside the repository: ftp://example.org",
            "broken link: docs/b.md (no such file: docs/b.md)",
            "broken link: docs/a.md#not-a-heading (no heading of docs/a.md makes #not-a-heading)",
            "broken link: #nowhere (no heading of README.md makes #nowhere)",
            "links outside the repository: ../outside.md",
            "names a path outside the repository: ../outside.md",
            "names a path outside the repository: ../../etc/passwd",
            "broken link: docs/c.md (no such file: docs/c.md)"]
    if sorted(got) != sorted(want):
        print("FAILED: the checker reported\n  %s\nwhere the self-test expects\n  %s" % ("\n  ".join(got), "\n  ".join(want)))
        return 1
    print("OK: the checker reports each of the %d bad links of the self-test and nothing else" % len(want))
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        sys.exit(__doc__)
    root = os.path.realpath(argv[1])
    files = markdown_files(root)
    problems = [p for md in files for p in check(root, md)]
    for p in problems:
        print(p)
    if problems:
        print("FAILED: %d link problem(s) in %d Markdown files" % (len(problems), len(files)))
        return 1
    print("OK: %d Markdown files link only inside the repository, and every link resolves" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
