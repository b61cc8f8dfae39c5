#!/usr/bin/env python3
"""Concurrent warms of one cache folder: P `cckey warm` processes started at
once on one manifest and one fresh folder, for each binary given (so two
builds of cckey, before and after a change, run in one sitting, alternated
round by round). Prints, per binary, the tuples all processes compiled
together (their --format json "compiled" members) and the wall time until
the last process ended (best and median of the rounds).

Usage: bench/warm_concurrent.py MANIFEST CCKEY [CCKEY ...] [--procs 4] [--rounds 3] [-j 1]
Runs from the manifest's folder, as warm resolves source_file there."""
import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time


def one_round(cckey, manifest, procs, jobs):
    folder = tempfile.mkdtemp(prefix="cckey-bench-claims-")
    env = {k: v for k, v in os.environ.items() if k not in ("CCKEY_REMOTE", "CCKEY_CACHE_DIR")}
    cwd = os.path.dirname(os.path.abspath(manifest)) or "."
    t0 = time.monotonic()
    ps = [subprocess.Popen([cckey, "warm", os.path.abspath(manifest), "--cache-dir", folder, "-q", "-j", str(jobs),
                            "--format", "json"], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
          for _ in range(procs)]
    compiled = failed = 0
    for p in ps:
        out, _ = p.communicate()
        r = json.loads(out)
        compiled += r["compiled"]
        failed += r["failed"]
    wall = time.monotonic() - t0
    shutil.rmtree(folder, ignore_errors=True)
    return compiled, failed, wall


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifest")
    ap.add_argument("cckey", nargs="+")
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-j", type=int, default=1, dest="jobs")
    a = ap.parse_args()
    res = {c: [] for c in a.cckey}
    for _ in range(a.rounds):
        for c in a.cckey:
            res[c].append(one_round(c, a.manifest, a.procs, a.jobs))
    with open(a.manifest) as f:
        tuples = sum(1 for line in f if line.strip())
    print("- machine: %s, %d online CPUs; date: %s; load average at the end: %s" % (
        cpu_name(), os.cpu_count(), time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        " ".join("%.2f" % x for x in os.getloadavg())))
    print("- %s: %d tuples; %d processes at once, -j %d each; %d rounds\n" % (a.manifest, tuples, a.procs, a.jobs,
                                                                               a.rounds))
    print("| cckey | tuples compiled (all processes, each round) | failed | wall s best | wall s median | rounds |")
    print("| --- | --- | --- | --- | --- | --- |")
    for c, rs in res.items():
        walls = [w for _, _, w in rs]
        print("| %s | %s | %s | %.2f | %.2f | %s |" % (c, "/".join(str(x) for x, _, _ in rs),
                                                      "/".join(str(y) for _, y, _ in rs), min(walls),
                                                      statistics.median(walls), ", ".join("%.2f" % w for w in walls)))


if __name__ == "__main__":
    main()
