#!/usr/bin/env python3
"""What finding headers costs `cckey warm` (issue 23): cold warms of real
suites with --deps text (the text scan alone), auto (the default: the
preprocessor only where the text cannot resolve an include) and
preprocessor (clang -E -dI for every build), alternated round by round,
each into a fresh store, from a working folder of their own. Reported: the
wall time of each warm (median of the rounds), and the time warm itself
spent finding headers (its --format json "headers" member), with the
builds each way found them. Builds that fail (cuda-samples' files hold host
code, which NVRTC refuses) still have their headers found first, so their
preprocessing is measured too.

Usage: bench/warm_deps.py build/cckey [--rounds N] [--suite NAME]...
Suites: examples (examples/kernels, OpenCL on PoCL and CUDA on NVRTC),
rodinia, clpeak (OpenCL, under /work/suites), cuda-samples (NVRTC), hashcat
(two kernels of /usr/share/hashcat/OpenCL with hashcat's own -D flags: its
includes are computed, `#include M2S(INCLUDE_PATH/inc_vendor.h)`).
Prints a Markdown table."""
import argparse
import fnmatch
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITES = os.environ.get("CCKEY_SUITES", "/work/suites")
HASHCAT = "/usr/share/hashcat/OpenCL"
NVIDIA = "NVIDIA H200|580.159.04"
MODES = ("text", "auto", "preprocessor")


def cckey(args, cwd=None, check=True):
    p = subprocess.run([CCKEY] + args, cwd=cwd, capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"cckey {' '.join(args)}: exit {p.returncode}: {p.stderr[-2000:]}")
    return p


def opencl_device():
    out = cckey(["devices"]).stdout
    m = re.search(r"^opencl\s+available.*?device id: (.+?)$", out, re.M | re.S)
    return m.group(1).strip() if m else None


def scan(paths, device, options=(), extra=()):
    args = ["scan"] + list(paths) + ["-d", device] + list(extra)
    for o in options:
        args += ["-O", o]
    tuples = [json.loads(l) for l in cckey(args).stdout.splitlines()]
    for t in tuples:   # scan names files from the folder it ran in; the manifest moves
        t["source_file"] = os.path.abspath(t["source_file"])
    return tuples


def rodinia(dev):
    base = os.path.join(SUITES, "rodinia")
    tuples = scan([os.path.join(base, "opencl")], dev)
    rules = []
    with open(os.path.join(base, "bench-options.txt")) as f:
        for line in f:
            glob, flags = line.rstrip("\n").split("\t")
            rules.append((glob, flags.replace("{root}", base)))
    for t in tuples:
        rel = os.path.relpath(t["source_file"], base)
        for glob, flags in rules:
            if fnmatch.fnmatch(rel, glob):
                for flag in flags.split():
                    t["options"].append([flag[:2], flag[2:]])
    return tuples


def hashcat(dev):
    files = [os.path.join(HASHCAT, f) for f in ("m00000_a0-pure.cl", "m00100_a3-optimized.cl")]
    tuples = scan(files, dev, extra=["--kernel-macro", "KERNEL_FQ"])
    opts = [["-DKERNEL_STATIC", ""], ["-I", HASHCAT], ["-DINCLUDE_PATH", HASHCAT], ["-DXM2S(x)", "#x"],
            ["-DM2S(x)", "XM2S(x)"]]
    values = dict(LOCAL_MEM_TYPE=2, VENDOR_ID=64, CUDA_ARCH=0, VECT_SIZE=1, DEVICE_TYPE=2, DGST_R0=0, DGST_R1=3,
                  DGST_R2=2, DGST_R3=1, DGST_ELEM=16, KERN_TYPE=0, ATTACK_EXEC=11, ATTACK_KERN=0, ATTACK_MODE=0)
    opts += [["-D" + k, str(v)] for k, v in values.items()]
    opts += [["-DHAS_" + h, "0"] for h in "ADD ADDC SUB SUBC VADD VADDC VADD_CO VADDC_CO VSUB VSUBB VSUB_CO "
             "VSUBB_CO VPERM VADD3 VBFE BFE LOP3 MOV64 PRMT".split()]
    for t in tuples:
        t["options"] = opts
    return tuples


def suite(name, dev):
    if name == "examples":
        k = os.path.join(ROOT, "examples", "kernels")
        return scan([os.path.join(k, "opencl")], dev) + scan([os.path.join(k, "cuda")], NVIDIA, ["arch=sm_90"])
    if name == "rodinia":
        return rodinia(dev)
    if name == "clpeak":
        return scan([os.path.join(SUITES, "clpeak", "src", "kernels")], dev)
    if name == "cuda-samples":
        return scan([os.path.join(SUITES, "cuda-samples", "Samples")], NVIDIA, ["arch=sm_90"])
    if name == "hashcat":
        return hashcat(dev)
    sys.exit(f"unknown suite {name}")


def warm(manifest, mode, work):
    store = os.path.join(work, "store-" + mode)
    shutil.rmtree(store, ignore_errors=True)
    t0 = time.monotonic()
    p = cckey(["warm", "-q", "--json", manifest, "--cache-dir", store, "--deps", mode], cwd=work, check=False)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"warm --deps {mode}: exit {p.returncode}: {p.stderr[-2000:]}")
    doc = json.loads(p.stdout)
    shutil.rmtree(store, ignore_errors=True)
    return wall, doc


def main():
    global CCKEY
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cckey")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--suite", action="append")
    a = ap.parse_args()
    CCKEY = os.path.abspath(a.cckey)
    dev = opencl_device()
    if not dev:
        sys.exit("no OpenCL device (PoCL)")
    names = a.suite or ["examples", "rodinia", "clpeak", "cuda-samples", "hashcat"]
    print("| suite | tuples | builds | --deps | warm s (median) | finding headers s | text / preprocessor / unverified | compiled / failed |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        tuples = suite(name, dev)
        work = tempfile.mkdtemp(prefix="cckey-bench-deps-")
        manifest = os.path.join(work, "m.jsonl")
        with open(manifest, "w") as f:
            f.write("".join(json.dumps(t) + "\n" for t in tuples))
        runs = {m: [] for m in MODES}
        for _ in range(a.rounds):
            for m in MODES:
                runs[m].append(warm(manifest, m, work))
        for m in MODES:
            walls = [w for w, _ in runs[m]]
            docs = [d for _, d in runs[m]]
            h = docs[-1]["headers"]
            secs = statistics.median(d["headers"]["seconds"] for d in docs)
            print(f"| {name} | {len(tuples)} | {docs[-1]['builds']} | {m} | {statistics.median(walls):.2f} "
                  f"({', '.join(f'{w:.2f}' for w in walls)}) | {secs:.3f} | {h['text']} / {h['preprocessor']} / "
                  f"{h['unverified']} | {docs[-1]['compiled']} / {docs[-1]['failed']} |", flush=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
