#!/usr/bin/env python3
"""Compressed store entries (issue 27): the size on disk and the cost of a
put and a get of the example suite's real binaries, uncompressed against
zstd at a few levels, in one run.

The binaries: examples/kernels/opencl compiled by PoCL and
examples/kernels/cuda by NVRTC (arch=sm_90, no GPU needed), both through
`cckey warm` into a scratch folder, then read back with `cckey cache get`.
Each candidate then puts every binary into a fresh folder through the
library (libcckey.so by ctypes: cckey_store_put, an fsync'ed write, and
cckey_store_get, a checked read that decompresses), round after round,
alternating the candidates within each round; each get is compared with
the binary. Reported per suite and candidate: bytes on disk (entry files)
against the payloads, their ratio, and the median over rounds of the mean
time per put and per get, also as a ratio to uncompressed.

Usage: bench/compression.py build/cckey build/libcckey.so [--rounds N]
Prints a Markdown table."""
import argparse
import ctypes
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
CANDIDATES = [("none", 0, 0), ("zstd -1", 1, -1), ("zstd 1", 1, 1), ("zstd 3", 1, 3), ("zstd 19", 1, 19)]
ENTRY = re.compile(r"^[0-9a-f]{32}(-[0-9a-f]{32}){3}$")


def cli(cckey, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCKEY_")}
    p = subprocess.run([cckey] + list(args), capture_output=True, env=env, timeout=1800)
    if p.returncode != 0:
        sys.exit(f"cckey {' '.join(args)}: {p.stderr.decode()}")
    return p.stdout


def binaries(cckey, tmp, name, scan_args):
    """key -> binary of a suite warmed into a fresh uncompressed folder."""
    manifest = os.path.join(tmp, name + ".jsonl")
    cli(cckey, "scan", *scan_args, "-o", manifest)
    folder = os.path.join(tmp, name + "-warm")
    cli(cckey, "warm", manifest, "--cache-dir", folder, "-q")
    out = {}
    for root, _, files in os.walk(folder):
        for f in files:
            if ENTRY.match(f):
                key = f.replace("-", ":")
                out[key] = cli(cckey, "cache", "get", key, "--cache-dir", folder)
    return out


def folder_bytes(folder):
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(folder) for f in fs if ENTRY.match(f))


class Lib:
    def __init__(self, path):
        self.l = ctypes.CDLL(path)
        self.l.cckey_store_open.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_uint64]
        self.l.cckey_store_set_compression.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
        self.l.cckey_store_put.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        self.l.cckey_store_get.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                                           ctypes.POINTER(ctypes.c_size_t)]
        self.l.cckey_store_free_buffer.argtypes = [ctypes.c_void_p]
        self.l.cckey_store_close.argtypes = [ctypes.c_void_p]

    def open(self, folder, method, level):
        s = ctypes.c_void_p()
        assert self.l.cckey_store_open(ctypes.byref(s), folder.encode(), 0) == 0
        assert self.l.cckey_store_set_compression(s, method, level) == 0
        return s

    def put_all(self, s, bins):
        t = time.perf_counter()
        for k, b in bins.items():
            assert self.l.cckey_store_put(s, k, b, len(b)) == 0
        return (time.perf_counter() - t) / len(bins)

    def get_all(self, s, bins):
        buf, n = ctypes.c_void_p(), ctypes.c_size_t()
        spent = 0.0
        for k, b in bins.items():
            t = time.perf_counter()
            assert self.l.cckey_store_get(s, k, ctypes.byref(buf), ctypes.byref(n)) == 0
            spent += time.perf_counter() - t
            assert ctypes.string_at(buf, n.value) == b, "get returned other bytes"
            self.l.cckey_store_free_buffer(buf)
        return spent / len(bins)


def measure(lib, tmp, bins, rounds):
    keyed = {k.encode(): v for k, v in bins.items()}
    puts = {c[0]: [] for c in CANDIDATES}
    gets = {c[0]: [] for c in CANDIDATES}
    disk = {}
    for r in range(rounds):
        for name, method, level in CANDIDATES:
            folder = os.path.join(tmp, "bench-%s-%d" % (name.replace(" ", ""), r))
            s = lib.open(folder, method, level)
            puts[name].append(lib.put_all(s, keyed))
            gets[name].append(lib.get_all(s, keyed))
            lib.l.cckey_store_close(s)
            disk[name] = folder_bytes(folder)
            shutil.rmtree(folder)
    return {n: (disk[n], statistics.median(puts[n]), statistics.median(gets[n])) for n, _, _ in CANDIDATES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cckey")
    ap.add_argument("lib")
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    cckey = os.path.abspath(a.cckey)
    out = cli(cckey, "devices").decode()
    m = re.search(r"^opencl\s+available.*?device id: (.+?)$", out, re.M | re.S)
    suites = []
    tmp = tempfile.mkdtemp(prefix="cckey-bench-zstd-")
    try:
        if m:
            suites.append(("OpenCL (PoCL)", binaries(cckey, tmp, "opencl", [
                os.path.join(EXAMPLES, "kernels", "opencl"), "-d", m.group(1).strip(), "-O", "",
                "-O", "-cl-fast-relaxed-math,-DUNROLL=4"])))
        if re.search(r"^nvrtc\s+available", out, re.M):
            suites.append(("CUDA (NVRTC, sm_90 and sm_80)", binaries(cckey, tmp, "cuda", [
                os.path.join(EXAMPLES, "kernels", "cuda"), "-d", "NVIDIA H200|580.159.04", "-O", "arch=sm_90",
                "-O", "arch=sm_80"])))
        lib = Lib(os.path.abspath(a.lib))
        print("host: %s, %d CPUs; %d rounds, candidates alternated in each; times: median over rounds of the "
              "mean per entry" % (platform.machine(), os.cpu_count(), a.rounds))
        print()
        print("| suite | entries | payload bytes | candidate | bytes on disk | ratio | put µs | put x none "
              "| get µs | get x none |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for title, bins in suites:
            res = measure(lib, tmp, bins, a.rounds)
            payload = sum(len(b) for b in bins.values())
            base = res["none"]
            for name, _, _ in CANDIDATES:
                d, p, g = res[name]
                print("| %s | %d | %d | %s | %d | %.2f | %.0f | %.2f | %.0f | %.2f |" % (
                    title, len(bins), payload, name, d, base[0] / d, p * 1e6, p / base[1], g * 1e6, g / base[2]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
