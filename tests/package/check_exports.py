#!/usr/bin/env python3
"""The shared library exports exactly the functions the public headers
(include/cckey.h, cckey_store.h, cckey_advanced.h) declare with CCKEY_API:
nothing internal leaks, nothing declared is missing.
usage: check_exports.py LIBCCKEY_SO HEADER..."""
import re
import subprocess
import sys

lib, headers = sys.argv[1], sys.argv[2:]
text = "".join(open(h).read() for h in headers)
declared = set(re.findall(r"CCKEY_API\s[^;(]*?\b(cckey_\w+)\s*\(", text))
nm = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
exported = set()
for line in nm.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[1] not in ("w", "v"):
        exported.add(parts[2].split("@")[0])
# The linker's own section markers are not API.
exported -= {"_init", "_fini", "_edata", "_end", "__bss_start"}
leaked = sorted(exported - declared)
missing = sorted(declared - exported)
if not declared:
    sys.exit("no CCKEY_API declarations found in " + " ".join(headers))
for name in leaked:
    print("exported but not in a public header:", name)
for name in missing:
    print("declared in a public header but not exported:", name)
if leaked or missing:
    sys.exit(1)
print(f"{len(declared)} functions declared, the same {len(exported)} exported")
