#!/usr/bin/env python3
"""Checks that the documentation's references resolve: every relative Markdown link of the tracked .md files (README.md,
docs/, the folders' READMEs; not the generated benchmark reports) names a file or directory of the source tree, and
its #anchor a heading there; and every path written as code in README.md, docs/*.md and bench/results/README.md
(`src/policy/policy.cpp`, `bench/results/mix/`, `mix/mix-....md` beside bench/results/README.md) exists, where its first
folder is one of the tree's or of the file's own folder (globs, placeholders and ellipses are passed over).

Usage: check-doc-links.py [SOURCE_DIR]   (default: this script's repository). Exit status 0: all resolve, 1: not.
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
CODE = re.compile(r"`([^`\n]+)`")
# A code span that may be a path: a relative name with a folder, no spaces, globs, placeholders or ellipses.
PATH_LIKE = re.compile(r"^[\w.+-]+/[^\s*<>{}…$~:|]*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def tracked_markdown(root):
    out = subprocess.run(["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "*.md"], capture_output=True, text=True)
    files = out.stdout.split() if out.returncode == 0 else []
    if not files:  # not a git checkout: walk the tree
        for d, _, names in os.walk(root):
            files += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith(".md")]
    # The benchmark reports are generated and link nothing; bench/results/README.md is the index.
    return sorted(f for f in files if not re.match(r"bench/results/[^/]+/", f) and "/build" not in "/" + f)


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    h = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", lambda m: m.group(1) or "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", h).replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    in_fence = False
    for line in open(path, encoding="utf-8"):
        if FENCE.match(line):
            in_fence = not in_fence
        if in_fence:
            continue
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m:
            s = slug(m.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


def body_lines(path):
    """(line number, text) outside fenced code blocks."""
    in_fence = False
    for i, line in enumerate(open(path, encoding="utf-8"), 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if not in_fence:
            yield i, line


def main(argv):
    root = os.path.abspath(argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    files = tracked_markdown(root)
    code_checked = {"README.md", "bench/results/README.md"} | {f for f in files if f.startswith("docs/")}
    problems, links = [], 0
    for rel in files:
        path = os.path.join(root, rel)
        for n, line in body_lines(path):
            for target in LINK.findall(line):
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, mailto: ...: not checked here
                    continue
                links += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(dest):
                    problems.append("%s:%d: link to %s: no such file" % (rel, n, target))
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    problems.append("%s:%d: link to %s: no heading with that anchor" % (rel, n, target))
            if rel not in code_checked:
                continue
            for span in CODE.findall(line):
                if not PATH_LIKE.match(span) or span.startswith("."):
                    continue
                bases = [b for b in (root, os.path.dirname(path)) if os.path.isdir(os.path.join(b, span.split("/")[0]))]
                if not bases:  # not a path of this tree (lib/x86_64-linux-gnu, share/doc/...)
                    continue
                links += 1
                if not any(os.path.exists(os.path.join(b, span)) for b in bases):
                    problems.append("%s:%d: `%s`: no such file or directory" % (rel, n, span))
    for p in problems:
        print("FAIL: " + p)
    print("%s: %d references in %d files" % ("FAIL" if problems else "PASS", links, len(files)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
