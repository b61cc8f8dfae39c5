#!/usr/bin/env python3
"""The CLI is a client of the public API (ARCHITECTURE.md, "Folders").

Every file under host/cli/ may include system headers, the public headers
(cckey.h, cckey_store.h, cckey_advanced.h), and headers of host/cli/ itself; nothing else of the project. A quoted include is
resolved as the compiler resolves it: beside the including file first, then
on the include path, which for the CLI is include/ alone. Conditional
includes count too (a test-build-only include is still an include).

    include_rule.py SOURCE_DIR [CLI_BINARY] [--include-dirs=A;B]
        check the tree; that the binary links libcckey.so; that the CLI
        target's include path (as CMake computes it, transitively) holds no
        folder of the project but include/
    include_rule.py --self-test               show the check catches each
                                              kind of violation
Exit 0 when clean, 1 with one line per violation.
"""
import os
import re

PUBLIC = ("cckey.h", "cckey_store.h", "cckey_advanced.h")
import shutil
import subprocess
import sys
import tempfile

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def includes(root, folder):
    """Every #include of the C files under folder: (where, its folder, kind, name, as written)."""
    for dirpath, _, files in os.walk(folder):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            for m in INCLUDE.finditer(text):
                kind, name = m.group(1), m.group(2)
                where = "%s:%d" % (os.path.relpath(path, root), text.count("\n", 0, m.start()) + 1)
                yield where, dirpath, kind, name, "#include %s%s%s" % (kind, name, '"' if kind == '"' else ">")


def violations(root):
    cli = os.path.join(root, "host", "cli")
    public = os.path.join(root, "include")
    found = []
    for where, dirpath, kind, name, written in includes(root, cli):
        why = judge(kind, name, dirpath, cli, public, root)
        if why:
            found.append("%s: %s: %s" % (where, written, why))
    return found


def inside(path, folder):
    return os.path.commonpath([os.path.realpath(path), os.path.realpath(folder)]) == os.path.realpath(folder)


def judge(kind, name, here, cli, public, root):
    """None when the include is allowed, else the reason."""
    beside = os.path.normpath(os.path.join(here, name))
    if kind == '"' and os.path.exists(beside):
        if inside(beside, cli):
            return None
        return "reaches %s, outside host/cli/" % os.path.relpath(beside, root)
    on_path = os.path.join(public, name)
    if os.path.exists(on_path):
        return None if os.path.basename(name) in PUBLIC and inside(on_path, public) else \
            "only %s of include/ are public" % ", ".join(PUBLIC)
    if kind == '"':
        # Found on no path the CLI has: only an added -I to the library's
        # internals would make it compile.
        for top in ("host", "kernels", "tests"):
            for dirpath, _, files in os.walk(os.path.join(root, top)):
                if os.path.basename(name) in files and not inside(dirpath, cli):
                    return "is the library's internal %s" % os.path.relpath(
                        os.path.join(dirpath, os.path.basename(name)), root)
        return "not found beside the file or in include/"
    # <...>: a system header, unless it names one of ours.
    if name.startswith(("backends/", "core/", "md5/", "batch/", "entry/", "store/", "remote/", "testing/")):
        return "names a library-internal folder"
    return None


def links_shared(binary):
    out = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True)
    if out.returncode != 0:
        return "readelf failed on %s: %s" % (binary, out.stderr.strip())
    if not re.search(r"\(NEEDED\).*\[libcckey\.so", out.stdout):
        return "%s does not link libcckey.so (NEEDED: %s)" % (
            binary, ", ".join(re.findall(r"\(NEEDED\).*\[(.*)\]", out.stdout)))
    return None


def include_path_violations(root, dirs):
    found = []
    for d in filter(None, dirs.split(";")):
        if inside(d, root) and os.path.realpath(d) != os.path.realpath(os.path.join(root, "include")):
            found.append("the CLI's include path holds %s: only include/ of the project may be there" %
                         os.path.relpath(d, root))
    return found


def write_file(root, rel, text):
    """A self-test's file root/rel holding text, its folders made."""
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "w") as fh:
        fh.write(text)


def self_test():
    """A copy of the rule's world with one violation of each kind."""
    bad = {
        "a.c": '#include "../core/internal.h"\n',            # escapes host/cli
        "b.c": '#include "md5.h"\n',                          # needs -Ihost/md5
        "c.c": '#include <backends/backend.h>\n',            # internal, angle form
        "d.c": '#ifdef CCKEY_TESTING\n#include "../testing/testing.h"\n#endif\n',
        "e.c": '#include "private.h"\n',                     # a non-public header of include/
    }
    good = {
        "ok.c": '#include "cckey.h"\n#include "cckey_store.h"\n#include "cckey_advanced.h"\n#include "cli.h"\n#include "sub/own.h"\n#include <stdio.h>\n',
        "cli.h": "", "sub/own.h": '#include "../cli.h"\n',
    }
    with tempfile.TemporaryDirectory() as tmp:
        def write(rel, text):
            write_file(tmp, rel, text)
        for name in PUBLIC:
            write("include/" + name, "")
        write("include/private.h", "")
        write("host/core/internal.h", "")
        write("host/md5/md5.h", "")
        write("host/testing/testing.h", "")
        for rel, text in good.items():
            write("host/cli/" + rel, text)
        if violations(tmp):
            print("self-test: a clean tree was flagged: %s" % violations(tmp))
            return 1
        for rel, text in bad.items():
            write("host/cli/" + rel, text)
            got = violations(tmp)
            if not any(v.startswith("host/cli/" + rel + ":") for v in got):
                print("self-test: %s was not flagged (%r)" % (rel, text))
                return 1
            os.remove(os.path.join(tmp, "host/cli", rel))
        if include_path_violations(tmp, os.path.join(tmp, "include") + ";/usr/include;") or \
                not include_path_violations(tmp, os.path.join(tmp, "include") + ";" + os.path.join(tmp, "host")):
            print("self-test: the include-path check is wrong")
            return 1
    print("self-test: every kind of violation is caught, a clean tree passes")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    dirs = [a for a in argv[1:] if a.startswith("--include-dirs=")]
    argv = [a for a in argv if not a.startswith("--include-dirs=")]
    if len(argv) not in (2, 3) or len(dirs) > 1:
        print(__doc__)
        return 2
    found = violations(argv[1])
    if dirs:
        found += include_path_violations(argv[1], dirs[0][len("--include-dirs="):])
    if len(argv) == 3:
        if not shutil.which("readelf"):
            print("readelf not found: cannot check what the CLI links")
            return 1
        why = links_shared(argv[2])
        if why:
            found.append(why)
    for v in found:
        print(v)
    if not found:
        print("host/cli includes only the public headers and its own%s" %
              (", and links libcckey.so" if len(argv) == 3 else ""))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
