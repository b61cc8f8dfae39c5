#!/usr/bin/env python3
"""Build time of a batch of Vulkan compute shaders through `cckey warm`, on
Mesa's lavapipe: SPIR-V compiled by shaderc and each module made into a
pipeline on the device, against the same builds compiled only (another
machine's identity with --target-env, so no pipeline), at -j1 and -jN; then a
second warm (everything cached) and a header edit that only some shaders
include.

usage: bench/vulkan.py BUILD_DIR [--glsl N] [--hlsl N] [--repeat R]

Each figure is the best of --repeat runs, each into a fresh store: wall
seconds, and the CPU seconds the warm process used (all its threads,
lavapipe's included), which other work on a shared machine moves far less.
Prints a Markdown table for bench/RESULTS.md."""
import argparse
import datetime
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FAR = "Some GPU|1|00112233445566778899aabbccddeeff"


def write_suite(root, n_glsl, n_hlsl):
    """n_glsl .comp files (half include a.glsl, half b.glsl) and n_hlsl .hlsl
    files of two entry points each; every body differs, so no two builds
    are alike."""
    os.makedirs(root)
    for h in ("a", "b"):
        with open(os.path.join(root, h + ".glsl"), "w") as f:
            f.write("uint step_%s(uint x, uint k) { return (x ^ (x >> 7)) * 2654435761u + k; }\n" % h)
    for i in range(n_glsl):
        h = "ab"[i % 2]
        body = "".join("    v = step_%s(v, %du);\n" % (h, i * 31 + k) for k in range(24))
        with open(os.path.join(root, "s%03d.comp" % i), "w") as f:
            f.write('#version 450\n#include "%s.glsl"\nlayout(local_size_x = 64) in;\n'
                    "layout(std430, binding = 0) buffer B { uint v[]; } b;\n"
                    "void main()\n{\n    uint v = b.v[gl_GlobalInvocationID.x];\n%s"
                    "    b.v[gl_GlobalInvocationID.x] = v;\n}\n" % (h, body))
    for i in range(n_hlsl):
        with open(os.path.join(root, "h%03d.hlsl" % i), "w") as f:
            f.write("RWStructuredBuffer<uint> b : register(u0);\n")
            for e in ("fwd", "rev"):
                body = "".join("    v = v * %du + (v >> %d);\n" % (i * 7 + k + 3, k % 13 + 1) for k in range(24))
                f.write("[numthreads(64, 1, 1)]\nvoid %s%d(uint3 id : SV_DispatchThreadID)\n{\n"
                        "    uint v = b[id.x];\n%s    b[id.x] = v;\n}\n" % (e, i, body))


def cckey(build, args, cwd):
    p = subprocess.run([os.path.join(build, "cckey")] + args, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("cckey %s failed (%d): %s" % (" ".join(args), p.returncode, p.stderr))
    return p.stdout


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def warm(build, cwd, manifest, store, jobs):
    """(wall seconds, CPU seconds, summary) of one warm."""
    t, c = time.perf_counter(), cpu()
    out = cckey(build, ["warm", manifest, "--cache-dir", store, "-j", str(jobs), "--format", "json", "-q"], cwd)
    return time.perf_counter() - t, cpu() - c, json.loads(out)


def best(build, cwd, manifest, jobs, repeat, keep=None):
    """The fastest cold warm of repeat, each into a fresh store (kept at keep)."""
    runs = []
    for r in range(repeat):
        store = os.path.join(cwd, "store-%d-%d" % (jobs, r))
        runs.append(warm(build, cwd, manifest, store, jobs))
        if keep and r == 0:
            shutil.copytree(store, keep)
        shutil.rmtree(store)
    return min(r[0] for r in runs), min(r[1] for r in runs), runs[0][2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--glsl", type=int, default=48)
    ap.add_argument("--hlsl", type=int, default=24)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    work = tempfile.mkdtemp(prefix="cckey-bench-vk-")
    try:
        write_suite(os.path.join(work, "suite"), a.glsl, a.hlsl)
        cckey(build, ["scan", "suite", "--language", "vulkan", "-q", "-o", "here.jsonl"], work)
        cckey(build, ["scan", "suite", "--language", "vulkan", "-q", "-d", "vulkan:" + FAR, "-O",
                      "--target-env=vulkan1.3", "-o", "far.jsonl"], work)
        with open(os.path.join(work, "here.jsonl")) as f:
            n = sum(1 for _ in f)
        jobs = os.cpu_count() or 1
        rows = []
        for label, manifest in (("compile + pipeline on lavapipe", "here.jsonl"),
                                ("compile only (no device: --target-env)", "far.jsonl")):
            for j in sorted({1, jobs}):
                keep = os.path.join(work, "kept") if manifest == "here.jsonl" and j == jobs else None
                t, c, s = best(build, work, manifest, j, a.repeat, keep)
                assert s["compiled"] == n and s["failed"] == 0, s
                rows.append((label, j, n, t, c))
        kept = os.path.join(work, "kept")
        again = [warm(build, work, "here.jsonl", kept, jobs) for _ in range(a.repeat)]
        assert all(r[2]["compiled"] == 0 and r[2]["cached"] == n for r in again), again
        with open(os.path.join(work, "suite", "a.glsl"), "a") as f:
            f.write("// edited\n")
        te, ce, se = warm(build, work, "here.jsonl", kept, jobs)
        commit = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        cpu = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        except (OSError, StopIteration):
            pass
        print("- machine: %s, %d online CPUs; date: %s; commit: %s; %s" % (
            cpu, jobs, datetime.datetime.utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"), commit,
            [l for l in cckey(build, ["--version"], work).splitlines() if l.startswith("shaders:")][0]))
        print("- suite: %d GLSL files (one entry each) and %d HLSL files (two each): %d tuples, %d builds; "
              "best of %d" % (a.glsl, a.hlsl, n, n, a.repeat))
        print()
        print("- load average at the end: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
        print()
        print("| warm | -j | builds | wall s | builds/s | CPU s | ms CPU a build |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
        for label, j, b, t, c in rows:
            print("| %s | %d | %d | %.2f | %.0f | %.2f | %.1f |" % (label, j, b, t, b / t, c, 1000 * c / b))
        print("| second warm (all cached) | %d | 0 | %.3f | - | %.3f | - |" % (
            jobs, min(r[0] for r in again), min(r[1] for r in again)))
        print("| after editing a.glsl (included by half the GLSL files) | %d | %d | %.2f | %.0f | %.2f | %.1f |" % (
            jobs, se["compiled"], te, se["compiled"] / te, ce, 1000 * ce / se["compiled"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
