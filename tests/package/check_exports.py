#!/usr/bin/env python3
"""The shared library exports exactly the functions include/cckey.h declares
with CCKEY_API: nothing internal leaks, nothing declared is missing.
usage: check_exports.py LIBCCKEY_SO CCKEY_H"""
import re
import subprocess
import sys

lib, header = sys.argv[1], sys.argv[2]
text = open(header).read()
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
    sys.exit("no CCKEY_API declarations found in " + header)
for name in leaked:
    print("exported but not in cckey.h:", name)
for name in missing:
    print("declared in cckey.h but not exported:", name)
if leaked or missing:
    sys.exit(1)
print(f"{len(declared)} functions declared, the same {len(exported)} exported")
