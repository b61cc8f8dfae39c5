#!/usr/bin/env python3
"""The library folders' include rules (ARCHITECTURE.md, "Folders"): what a
folder under host/ never includes.

    host/entry/   the entry format: nothing of host/store/ or host/remote/
    host/remote/  the remotes move entry files by name: nothing of host/store/

A quoted include is resolved as the compiler resolves it: beside the
including file first, then on the include paths the library and its tests
use (include/, host/). An angle include that names a project folder
(<store/...>) counts too, and so do conditional ones (an include under
#ifdef is still an include).

    folder_includes.py SOURCE_DIR     check the tree
    folder_includes.py --self-test    show the check catches each kind of
                                      violation and passes a clean tree
Exit 0 when clean, 1 with one line per violation.
"""
import os
import sys
import tempfile

from include_rule import includes, inside, write_file

# folder -> the folders its files never include
NEVER = {
    "host/entry": ("host/store", "host/remote"),
    "host/remote": ("host/store",),
}


def resolve(root, here, kind, name):
    """The file an include names, or None when it is no file of the tree."""
    places = ([here] if kind == '"' else []) + [os.path.join(root, "include"), os.path.join(root, "host")]
    for place in places:
        p = os.path.normpath(os.path.join(place, name))
        if os.path.isfile(p):
            return p
    return None


def violations(root):
    found = []
    for folder, never in sorted(NEVER.items()):
        for where, dirpath, kind, name, written in includes(root, os.path.join(root, folder)):
            target = resolve(root, dirpath, kind, name)
            for bad in never:
                if target and inside(target, os.path.join(root, bad)):
                    found.append("%s: %s reaches %s: %s/ never includes %s/" % (
                        where, written, os.path.relpath(target, root), folder, bad))
    return found


def self_test():
    bad = {
        "host/remote/a.c": '#include "../store/store_internal.h"\n',              # the circle issue 25 removed
        "host/remote/b.h": '#ifdef CCKEY_WITH_CRYPTO\n#include "../store/x.h"\n#endif\n',  # conditional
        "host/remote/c.c": '#include <store/x.h>\n',                                # on the include path
        "host/entry/d.c": '#include "../remote/remote.h"\n',
        "host/entry/e.h": '#include "../store/x.h"\n',
    }
    good = {
        "host/remote/ok.c": '#include "remote.h"\n#include "../entry/entry.h"\n#include "../core/internal.h"\n'
                            '#include "cckey_store.h"\n#include <stdio.h>\n',
        "host/entry/ok.c": '#include "entry.h"\n#include "../md5/md5.h"\n#include "cckey_store.h"\n',
        "host/store/ok.c": '#include "../remote/remote.h"\n#include "../entry/entry.h"\n',
    }
    files = ["host/store/store_internal.h", "host/store/x.h", "host/remote/remote.h", "host/entry/entry.h",
             "host/core/internal.h", "host/md5/md5.h", "include/cckey_store.h"]
    with tempfile.TemporaryDirectory() as tmp:
        for rel in files:
            write_file(tmp, rel, "")
        for rel, text in good.items():
            write_file(tmp, rel, text)
        if violations(tmp):
            print("self-test: a clean tree was flagged: %s" % violations(tmp))
            return 1
        for rel, text in bad.items():
            write_file(tmp, rel, text)
            got = violations(tmp)
            if not any(v.startswith(rel + ":") for v in got):
                print("self-test: %s was not flagged (%r)" % (rel, text))
                return 1
            os.remove(os.path.join(tmp, rel))
    print("self-test: every kind of violation is caught, a clean tree passes")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    found = violations(argv[1])
    for v in found:
        print(v)
    if not found:
        print("host/entry includes nothing of host/store or host/remote; host/remote nothing of host/store")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
