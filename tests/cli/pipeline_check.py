#!/usr/bin/env python3
"""The device pipeline end to end through the CLI: a mixed-length manifest
keyed on OpenCL (small chunks, host threads sharing the work, and an injected
fault) must match the CPU backend byte for byte. Built with
-DCCKEY_SANITIZE=thread, this is ThreadSanitizer's look at the pipeline's
threads (Criterion suites cannot run under TSan). Exit 77: no OpenCL here."""
import json
import os
import random
import subprocess
import sys
import tempfile

cckey = sys.argv[1]
rng = random.Random(7)


def run(args, env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    return subprocess.run([cckey] + args, capture_output=True, env=env, timeout=600)


probe = run(["devices", "--json"])
if b'"backend": "opencl",\n      "available": true' not in probe.stdout:
    print("skip: no usable OpenCL device")
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    manifest = os.path.join(tmp, "mixed.jsonl")
    with open(manifest, "w") as f:
        for i in range(3000):
            n = int(16 * (4096 ** rng.random()))          # log-uniform 16 B .. 64 KiB
            src = "".join(rng.choice("abcdefgh{}();\n") for _ in range(n % 4096)) * (n // 4096 + 1)
            f.write(json.dumps({"device": f"d{i % 3}", "name": f"k{i % 11}", "source": src[:n],
                                "options": [["-O", str(i % 4)]]}) + "\n")
    want = run(["batch", "--backend", "cpu", manifest])
    assert want.returncode == 0, want.stderr
    cases = [
        ("opencl, small chunks", {"CCKEY_GPU_CHUNK_BYTES": "65536"}),
        ("opencl, device alone", {"CCKEY_GPU_CHUNK_BYTES": "65536", "CCKEY_GPU_CPU_SHARE": "0"}),
        ("opencl, fault at chunk 2", {"CCKEY_GPU_CHUNK_BYTES": "65536", "CCKEY_GPU_CPU_SHARE": "0",
                                      "CCKEY_FAULT_CHUNK": "2"}),
    ]
    failed = 0
    for what, env in cases:
        got = run(["batch", "--backend", "opencl", "--verify", manifest], env)
        ok = got.returncode == 0 and got.stdout == want.stdout
        if "FAULT" in "".join(env) and ok:
            ok = b"ran on the CPU" in got.stderr   # the one warning
        print(("ok    " if ok else "FAIL  ") + what)
        if not ok:
            failed += 1
            sys.stderr.write(got.stderr.decode(errors="replace")[-2000:])
    print(f"{len(cases) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
