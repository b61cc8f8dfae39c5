#!/usr/bin/env python3
"""Remote-cache benchmark: cckey's Redis and HTTP remotes against
redis-benchmark and curl on the same servers in the same run, and a second
machine's warm over Redis against compiling.

usage: bench/remote.py BUILD_DIR [--entries N] [--size BYTES] [--write-results]

Starts redis-server and nginx (WebDAV) on free loopback ports. Each line is
the best of --repeat runs. With --write-results, replaces the "## Remote
caches" section of bench/RESULTS.md."""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

# In bench/RESULTS.md, what follows this line in the section is kept by --write-results.
NOTES = "<!-- notes below: kept by bench/remote.py --write-results -->"
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "remote"))
from servers import Nginx, Redis  # noqa: E402


def timed(cmd, **kw):
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True, **kw)
    return time.monotonic() - t0


def cckey_bench(exe, url, scratch, n, size, jobs, redis=None):
    """seconds for put and get through a store (and local puts for scale, and
    gets through a read-only handle: the remote transfer alone). A Redis
    server is emptied first, so that every run starts from the same state."""
    if redis:
        redis.cli("FLUSHALL")
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    env = dict(os.environ, JOBS=str(jobs))
    out = subprocess.run([exe, url] + [os.path.join(scratch, d) for d in ("l", "p", "g")] + [str(n), str(size)],
                         check=True, capture_output=True, text=True, env=env).stdout
    res = {}
    for line in out.splitlines():
        phase, _, n_, _, secs, cpu = line.split(",")[:6]
        res[phase] = float(secs)
        res[phase + "_cpu_us"] = float(cpu) / int(n_) * 1e6
    shutil.rmtree(scratch, ignore_errors=True)
    return res


def redis_benchmark_run(redis, tests, n, size, jobs, extra=()):
    out = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(redis.port), "-t", tests, "-n", str(n),
                          "-d", str(size), "-c", str(jobs), "--csv"] + list(extra), check=True, capture_output=True,
                         text=True).stdout
    return {k: n / float(v) for k, v in re.findall(r'^"(SET|GET)","([\d.]+)"', out, re.M)}


def redis_benchmark(redis, n, size, jobs):
    """The default test: every SET and GET on one key ("key:__rand_int__"
    unexpanded), overwritten in place: the cheapest case for the server."""
    s = redis_benchmark_run(redis, "set,get", n, size, jobs)
    return {"put": s["SET"], "get": s["GET"]}


def redis_populate(redis, keys, size):
    """SET key:000000000000 .. key:<keys-1> (redis-benchmark's -r names) to
    size-byte values, through one redis-cli --pipe, untimed."""
    value = b"x" * size
    cmds = []
    for i in range(keys):
        k = b"key:%012d" % i
        cmds.append(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(k), k, size, value))
    subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(redis.port), "--pipe"], input=b"".join(cmds),
                   check=True, capture_output=True)


def redis_benchmark_keys(redis, n, size, jobs):
    """Like cckey's workload, over n keys: `-r n` makes each SET and GET name
    a random key among n. SETs start from an empty server, as cckey's puts
    do (random picks: about 63% of n SETs make a new key, the rest
    replace a 100 KiB value); before the GETs every key is set, so each GET
    hits a distinct-key keyspace as cckey's gets do."""
    redis.cli("FLUSHALL")
    put = redis_benchmark_run(redis, "set", n, size, jobs, ["-r", str(n)])["SET"]
    redis_populate(redis, n, size)
    get = redis_benchmark_run(redis, "get", n, size, jobs, ["-r", str(n)])["GET"]
    redis.cli("FLUSHALL")
    return {"put": put, "get": get}


def curl_loop(nginx, scratch, n, size, jobs):
    """One curl process moving n files (connections reused; --parallel for jobs > 1).
    Its start (a one-file run of the same config, timed alike) is subtracted:
    cckey's times are taken inside its process."""
    os.makedirs(scratch, exist_ok=True)
    blob = os.path.join(scratch, "blob")
    with open(blob, "wb") as f:
        f.write(os.urandom(size))
    tag = f"c{time.monotonic_ns()}"
    par = ["--parallel", "--parallel-max", str(jobs)] if jobs > 1 else []
    base = ["curl", "-sSf", "-H", "Expect:"] + par

    def run(count, name):
        cfg = {k: os.path.join(scratch, name + k + ".cfg") for k in ("put", "get", "get_files")}
        kept = os.path.join(scratch, name + "kept")
        with open(cfg["put"], "w") as p, open(cfg["get"], "w") as g, open(cfg["get_files"], "w") as f:
            for i in range(count):
                url = f"{nginx.url()}/{tag}{name}/{i:02x}/e{i}"
                p.write(f'upload-file = "{blob}"\nurl = "{url}"\n')
                g.write(f'url = "{url}"\noutput = "/dev/null"\n')
                # As a cache fill keeps them: one file each, in 256 shard folders.
                f.write(f'url = "{url}"\noutput = "{kept}/{i % 256:02x}/e{i}"\n')
        res = {k: timed(base + (["--create-dirs"] if k == "get_files" else []) + ["-K", cfg[k]]) for k in cfg}
        shutil.rmtree(kept, ignore_errors=True)
        return res

    start = run(1, "s")
    res = run(n, "")
    res = {k: max(res[k] - start[k], 1e-9) for k in res}
    shutil.rmtree(scratch, ignore_errors=True)
    return res


def best(runs):
    return {k: min(r[k] for r in runs) for k in runs[0]}


def warm_speedup(cckey, redis, scratch, repeat):
    """The OpenCL example suite on this machine's OpenCL device: compiling
    (no remote) against a second machine's warm over Redis."""
    out = subprocess.run([cckey, "devices"], capture_output=True, text=True).stdout
    m = re.search(r"^opencl .*?device id: (.*?)$", out, re.M | re.S)
    if not m:
        return None
    manifest = os.path.join(scratch, "suite.jsonl")
    subprocess.run([cckey, "scan", os.path.join(ROOT, "examples", "kernels", "opencl"), "--device", m.group(1),
                    "-O", "", "-O", "-cl-fast-relaxed-math,-DUNROLL=4", "-o", manifest], check=True, capture_output=True)
    compile_s, copy_s = [], []
    for i in range(repeat):
        redis.cli("FLUSHALL")
        a, b = os.path.join(scratch, f"a{i}"), os.path.join(scratch, f"b{i}")
        compile_s.append(timed([cckey, "warm", manifest, "--cache-dir", a, "-q", "--remote", redis.url()]))
        copy_s.append(timed([cckey, "warm", manifest, "--cache-dir", b, "-q", "--remote", redis.url()]))
        out = subprocess.run([cckey, "cache", "stats", "--cache-dir", b, "--format", "json"], capture_output=True,
                             text=True).stdout
        assert json.loads(out)["entries"] == json.loads(out)["remote"]["hits"]
    with open(manifest) as f:
        tuples = sum(1 for l in f if l.strip())
    return tuples, min(compile_s), min(copy_s)


def mbps(n, size, secs):
    return n * size / secs / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--size", type=int, default=100 * 1024)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write-results", action="store_true")
    a = ap.parse_args()
    load0 = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"]
    exe = os.path.join(a.build, "bench", "cckey_remote_bench")
    cckey = os.path.join(a.build, "cckey")
    # Folders on tmpfs where there is one: the disk is not what is measured.
    base = "/dev/shm" if os.path.isdir("/dev/shm") else None
    work = tempfile.mkdtemp(prefix="cckey-rbench-", dir=base)
    redis = Redis(work)
    nginx = Nginx(os.path.join(work, "nginx"))
    rows = []
    try:
        for jobs in (1, 4):
            r = [cckey_bench(exe, redis.url(), os.path.join(work, "s"), a.entries, a.size, jobs, redis)
                 for _ in range(a.repeat)]
            one = best([redis_benchmark(redis, a.entries, a.size, jobs) for _ in range(a.repeat)])
            keys = best([redis_benchmark_keys(redis, a.entries, a.size, jobs) for _ in range(a.repeat)])
            rows.append(("redis", jobs, best(r), one, "redis-benchmark (one key)", keys))
            r = [cckey_bench(exe, nginx.url(), os.path.join(work, "s"), a.entries, a.size, jobs) for _ in range(a.repeat)]
            rows.append(("http", jobs, best(r), best([curl_loop(nginx, os.path.join(work, "c"), a.entries, a.size, jobs)
                                                      for _ in range(a.repeat)]), "curl -K (one process)", None))
        warm = warm_speedup(cckey, redis, work, a.repeat)
    finally:
        redis.stop()
        nginx.stop()
        shutil.rmtree(work, ignore_errors=True)
    lines = [f"{a.entries} entries of {a.size} bytes, best of {a.repeat}; MB/s are payload megabytes (10^6) per second.",
             "`cckey get` is a fresh store's look-ups, each a remote hit checked and copied into the folder;",
             "`cckey put` stores each entry in the folder and the remote; `local put` is the folder alone.",
             "Same payload size and concurrency on every side: cckey (`bench/remote_bench.c`, public API) runs `jobs`",
             f"threads on one store handle, timed inside its process, with {a.entries} distinct keys and an entry header of",
             "192 bytes more than the payload; `redis-benchmark -t set,get -n N -d SIZE -c jobs` (its own",
             "timing, no pipelining), in two forms: `one key`, its default, where every SET overwrites the same key",
             "(the server's cheapest case), and `N keys`, the same with `-r N` (each SET and GET names a random key",
             "among N; SETs into an emptied server, as cckey's puts; GETs after all N keys are set, so each hits).",
             f"cckey moves {a.entries} distinct entries, so `N keys` is the like-for-like baseline; the `one key` columns",
             "are kept for comparison with earlier tables. One `curl -K` process with `--parallel-max jobs`",
             "(connections reused, its start subtracted), GETs written to /dev/null, every URL distinct.",
             "The baselines neither check nor keep what they move. `CPU us/entry` is cckey's process CPU (user +",
             "system) per entry, the least of the runs; the servers' CPU is not in it.",
             "`read-only get` (extra columns) is the get phase through a read-only handle (`cckey_store_open_read_only`):",
             "each entry received, checked in memory exactly as a get checks it and handed over, nothing written:",
             "the remote transfer alone, without the local copy that the baselines do not make either.",
             "`curl into files` (HTTP only) is the same `curl -K` run keeping what it gets, as a cache fill does:",
             "one file per entry in 256 shard folders on the same tmpfs (`--create-dirs`), the like-for-like",
             "baseline for `cckey get`, which keeps each entry as a file in its folder.", "",
             "| remote | jobs | cckey put MB/s | cckey get MB/s | local put MB/s | baseline | baseline put MB/s | baseline get MB/s | get vs baseline | put vs baseline | read-only get MB/s | read-only get vs baseline | curl into files MB/s | get vs curl into files | N keys put MB/s | N keys get MB/s | get vs N keys | put vs N keys | read-only get vs N keys | put / get CPU us/entry |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    n, s = a.entries, a.size
    for kind, jobs, c, b, what, k in rows:
        keys, files = "- | - | - | - | -", "- | -"
        if "get_files" in b:
            files = f"{mbps(n, s, b['get_files']):.0f} | {b['get_files'] / c['get'] * 100:.0f}%"
        if k:
            keys = (f"{mbps(n, s, k['put']):.0f} | {mbps(n, s, k['get']):.0f} | {k['get'] / c['get'] * 100:.0f}% | "
                    f"{k['put'] / c['put'] * 100:.0f}% | {k['get'] / c['fetch'] * 100:.0f}%")
        lines.append(f"| {kind} | {jobs} | {mbps(n, s, c['put']):.0f} | {mbps(n, s, c['get']):.0f} | "
                     f"{mbps(n, s, c['local']):.0f} | {what} | {mbps(n, s, b['put']):.0f} | {mbps(n, s, b['get']):.0f} | "
                     f"{b['get'] / c['get'] * 100:.0f}% | {b['put'] / c['put'] * 100:.0f}% | "
                     f"{mbps(n, s, c['fetch']):.0f} | {b['get'] / c['fetch'] * 100:.0f}% | {files} | {keys} | "
                     f"{c['put_cpu_us']:.0f} / {c['get_cpu_us']:.0f} |")
    if warm:
        tuples, comp, copy = warm
        lines += ["", f"Second machine's warm over Redis, OpenCL example suite ({tuples} tuples, compiled on this "
                      f"machine's OpenCL device): compiling {comp:.3f} s, copying from Redis {copy:.3f} s: "
                      f"**{comp / copy:.1f}x** faster (best of {a.repeat}, whole `cckey warm` processes)."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.write_results:
        commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        load = open("/proc/loadavg").read().split()[:3] if os.path.exists("/proc/loadavg") else ["?"]
        cpu = "?"
        if os.path.exists("/proc/cpuinfo"):
            m = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read())
            cpu = m.group(1) if m else cpu
        # The MD5 code cckey picked on this machine (entries are checksummed with it), as it says.
        ver = subprocess.run([cckey, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"^CPU MD5: (\S+)", ver, re.M)
        isa = m.group(1) if m else "?"
        head = (f"## Remote caches (`bench/remote.py`)\n\n- machine: {cpu}, {os.cpu_count()} online CPUs "
                f"({platform.machine()}; MD5 ISA in use: {isa})\n- date: {datetime.datetime.utcnow().strftime('%Y-%m-%dT%H:%M:%SZ')}\n"
                f"- commit: {commit}\n- load average at the start: {' '.join(load0)}; at the end: {' '.join(load)}\n\n")
        path = os.path.join(HERE, "RESULTS.md")
        with open(path) as f:
            old = f.read()
        section = head + text
        m = re.search(r"^## Remote caches.*?(?=^## |\Z)", old, re.M | re.S)
        if m and NOTES in m.group(0):
            # Notes written by hand after the table stay with the new table.
            section += "\n" + m.group(0)[m.group(0).index(NOTES):].rstrip("\n") + "\n\n"
        new = old[:m.start()] + section + old[m.end():] if m else old.rstrip("\n") + "\n\n" + section
        with open(path, "w") as f:
            f.write(new)


if __name__ == "__main__":
    main()
