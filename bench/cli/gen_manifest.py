#!/usr/bin/env python3
"""Writes a benchmark manifest: LINES lines over 1,000 distinct 4 KiB sources,
10 devices and 3 option sets, in a seeded order.

Usage: gen_manifest.py DIR LINES [--inline]
  DIR/src/kNNN.cu   the sources (source_file mode)
  DIR/manifest.jsonl  one tuple a line: "source_file" (default), or the
                    source text itself in "source" (--inline)"""
import json
import os
import random
import sys

SOURCES, DEVICES, SOURCE_LEN = 1000, 10, 4096
OPTION_SETS = [[["-O", "3"], ["-arch", "sm_80"]], [["-O", "2"], ["-DBLOCK", "128"]], {"-DTILE": "16", "-O": "3"}]


def main():
    out_dir, lines = sys.argv[1], int(sys.argv[2])
    inline = "--inline" in sys.argv[3:]
    rng = random.Random(9)
    os.makedirs(os.path.join(out_dir, "src"), exist_ok=True)
    sources = []
    for s in range(SOURCES):
        body = ("// kernel %d\n" % s + "".join(rng.choice("abcdefghij {}();\n") for _ in range(SOURCE_LEN)))[:SOURCE_LEN]
        sources.append(body)
        if not inline:
            with open(os.path.join(out_dir, "src", "k%03d.cu" % s), "w") as f:
                f.write(body)
    devices = ["NVIDIA H200|580.%02d" % d for d in range(DEVICES)]
    with open(os.path.join(out_dir, "manifest.jsonl"), "w") as f:
        for i in range(lines):
            s = rng.randrange(SOURCES)
            row = {"device": devices[rng.randrange(DEVICES)], "name": "kern_%d" % rng.randrange(50)}
            if inline:
                row["source"] = sources[s]
            else:
                row["source_file"] = "src/k%03d.cu" % s
            row["options"] = OPTION_SETS[rng.randrange(3)]
            f.write(json.dumps(row, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main()
