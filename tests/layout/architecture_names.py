#!/usr/bin/env python3
"""ARCHITECTURE.md names every folder under host/ (as `host/NAME/` in its
folder table), and names no folder that is gone: a folder added or moved
without its row in the map fails this check.

    architecture_names.py SOURCE_DIR
Exit 0 when the map and the tree agree, 1 with one line per difference.
"""
import os
import re
import sys


def folders(root):
    found = set()
    for dirpath, dirnames, _ in os.walk(os.path.join(root, "host")):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for d in dirnames:
            found.add(os.path.relpath(os.path.join(dirpath, d), root).replace(os.sep, "/") + "/")
    return found


def named(text):
    """The folders the map's table rows start with: | `host/NAME/` | ..."""
    return set(re.findall(r"^\|\s*`(host/[^`]+/)`\s*\|", text, re.M))


def main(argv):
    if len(argv) != 2:
        print(__doc__)
        return 2
    root = argv[1]
    with open(os.path.join(root, "ARCHITECTURE.md")) as fh:
        text = fh.read()
    tree, rows = folders(root), named(text)
    bad = ["%s has no row in ARCHITECTURE.md" % f for f in sorted(tree - rows)]
    bad += ["ARCHITECTURE.md has a row for %s, which does not exist" % f for f in sorted(rows - tree)]
    for line in bad:
        print(line)
    if not bad:
        print("ARCHITECTURE.md names the %d folders under host/" % len(tree))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
