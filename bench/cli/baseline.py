#!/usr/bin/env python3
"""The baseline cckey batch is measured against: a short script with json and
hashlib, caching each source file's digest. Same keys, one a line.

Usage: baseline.py MANIFEST > keys"""
import hashlib
import json
import os
import sys


def hexmd5(b):
    return hashlib.md5(b).hexdigest()


def main():
    path = sys.argv[1]
    base = os.path.dirname(path) or "."
    file_md5 = {}
    out = sys.stdout
    with open(path, "rb") as f:
        for raw in f:
            if not raw.strip():
                continue
            t = json.loads(raw)
            if "source" in t:
                src = hexmd5(t["source"].encode())
            else:
                p = t["source_file"]
                src = file_md5.get(p)
                if src is None:
                    with open(os.path.join(base, p), "rb") as sf:
                        src = file_md5[p] = hexmd5(sf.read())
            opts = t.get("options") or []
            if isinstance(opts, dict):
                opts = list(opts.items())
            opts = sorted(((k.encode(), v.encode()) for k, v in opts), key=lambda kv: kv[0])
            canon = ",".join(hexmd5(k) + "=" + hexmd5(v) for k, v in opts)
            out.write("%s:%s:%s:%s\n" % (hexmd5(t["device"].encode()), hexmd5(t["name"].encode()), src,
                                         hexmd5(canon.encode())))


if __name__ == "__main__":
    main()
