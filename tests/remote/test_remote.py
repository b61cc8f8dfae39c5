#!/usr/bin/env python3
"""Remote caches under the store, sharded warming: cckey warm against a real
redis-server and a real nginx (WebDAV), started here on free loopback ports,
compiling the OpenCL example kernels on a real OpenCL runtime (PoCL in CI).

Usage: test_remote.py PATH/TO/cckey [unittest args]
Skips (exit 77) only when no OpenCL device exists; a test class skips when
its server binary is absent."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(os.path.dirname(HERE), "cli")]   # servers, slurm; clitest
from servers import Nginx, Redis, Silent, have  # noqa: E402
import clitest  # noqa: E402
from clitest import EXAMPLES, WARM_SUMMARY as SUMMARY  # noqa: E402

CCKEY = None
DEVICE = None
SHARD_DIR = re.compile(r"^[0-9a-f]{2}$")


def run(args, env=None, timeout=300):
    e = dict(os.environ)
    e.pop("CCKEY_REMOTE", None)
    e.pop("CCKEY_CACHE_DIR", None)
    e.update(env or {})
    p = subprocess.run([CCKEY] + args, capture_output=True, timeout=timeout, env=e)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def opencl_device():
    rc, out, _ = run(["devices"])
    section = None
    for line in out.splitlines():
        if line and not line.startswith(" "):
            section = line.split()[0]
        m = re.search(r"device id: (.*)$", line)
        if m and section == "opencl":
            return m.group(1)
    return None


def entries(folder):
    """Every entry file of a cache folder: name -> bytes."""
    out = {}
    if not os.path.isdir(folder):
        return out
    for shard in os.listdir(folder):
        sub = os.path.join(folder, shard)
        if SHARD_DIR.match(shard) and os.path.isdir(sub):
            for name in os.listdir(sub):
                if not name.startswith("."):
                    with open(os.path.join(sub, name), "rb") as f:
                        out[name] = f.read()
    return out


def counts(out):
    m = SUMMARY.search(out)
    assert m, out
    return tuple(int(x) for x in m.groups())


def warnings(err):
    return [l for l in err.splitlines() if "warning" in l]


class Base(clitest.SharedRootTest):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="cckey-remote-")
        cls.manifest = os.path.join(cls.root, "suite.jsonl")
        rc, out, err = run(["scan", os.path.join(EXAMPLES, "kernels", "opencl"), "--device", DEVICE,
                            "-O", "", "-O", "-cl-fast-relaxed-math,-DUNROLL=4", "-o", cls.manifest])
        assert rc == 0, err
        with open(cls.manifest) as f:
            cls.n_tuples = sum(1 for l in f if l.strip())

    def cache(self, name):
        return self.path(name)

    def warm(self, cache, *extra, manifest=None, env=None, timeout=300):
        return run(["warm", manifest or self.manifest, "--cache-dir", cache] + list(extra), env=env,
                   timeout=timeout)

    def many_builds(self, n):
        """A manifest of n distinct one-kernel sources: n builds."""
        path = os.path.join(self.tmp, f"many{n}.jsonl")
        with open(path, "w") as f:
            for i in range(n):
                src = f"__kernel void k{i}(__global int *p) {{ p[get_global_id(0)] = {i} * p[0]; }}\n"
                f.write(json.dumps({"device": DEVICE, "name": f"k{i}", "source": src}) + "\n")
        return path

    def expect_malformed_refused(self, url, spoil):
        """Warm through url, spoil(entry name, entry bytes) six of the served
        entries, warm a second cache: each spoilt one is an error and a miss
        (compiled again), every other one a hit, and the run neither crashes
        nor hangs: the connection stays in step after every bad reply."""
        rc, out, err = self.warm(self.cache("a"), "--remote", url)
        self.assertEqual(rc, 0, err)
        a = entries(self.cache("a"))
        for i, name in enumerate(sorted(a)[:6]):
            spoil(i, name, a[name])
        rc, out, err = self.warm(self.cache("b"), "--remote", url)
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out)[0], 6, out)
        self.assertIn(f"{self.n_tuples - 6} hits, 6 misses, 6 errors, 6 written", out)
        self.assertEqual(len(warnings(err)), 1, err)
        self.assertEqual(sorted(entries(self.cache("b"))), sorted(a))

    @staticmethod
    def malformed(i, entry):
        """Six ways an entry file can be wrong: empty, shorter than a header,
        a record length past its end, cut short, one payload byte flipped, a
        header padded with bytes beyond what it announces."""
        lying = entry[:172] + (0xFFFFFFF0).to_bytes(4, "little") + entry[176:]
        flipped = entry[:-1] + bytes([entry[-1] ^ 1])
        return [b"", b"CCKEYBIN short", lying, entry[:len(entry) // 2], flipped, entry + b"extra"][i]

    def expect_shared(self, url, extra=()):
        """Two caches share one remote: the first compiles everything, the
        second nothing, and ends up with the same entries."""
        rc, out, err = self.warm(self.cache("a"), "--remote", url, *extra)
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out)[0], self.n_tuples, out)
        self.assertEqual(warnings(err), [])
        self.assertIn(f"0 hits, {self.n_tuples} misses, 0 errors, {self.n_tuples} written", out)
        rc, out, err = self.warm(self.cache("b"), "--remote", url, *extra)
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out), (0, 0, self.n_tuples, 0), out)
        self.assertIn(f"{self.n_tuples} hits, 0 misses, 0 errors, 0 written", out)
        self.assertEqual(warnings(err), [])
        a, b = entries(self.cache("a")), entries(self.cache("b"))
        self.assertEqual(len(a), self.n_tuples)
        self.assertEqual(a, b)
        return a


@unittest.skipUnless(have("redis-server"), "redis-server is not installed")
class RedisTests(Base):
    def setUp(self):
        super().setUp()
        self.redis = Redis(self.tmp)

    def tearDown(self):
        self.redis.stop()

    def test_second_cache_compiles_nothing_and_copies_every_entry(self):
        a = self.expect_shared(self.redis.url())
        self.assertEqual(int(self.redis.cli("DBSIZE")), self.n_tuples)
        # The values are the entry files themselves.
        name = sorted(a)[0]
        raw = subprocess.run(["redis-cli", "-p", str(self.redis.port), "--no-raw", "STRLEN", "cckey:" + name],
                             capture_output=True, text=True).stdout
        self.assertIn(str(len(a[name])), raw)
        # cache stats: the folder's running remote counters, all remotes
        # together and per remote; a remote hit is a local miss.
        rc, out, err = run(["cache", "stats", "--cache-dir", self.cache("b")])
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, rf"remotes \(all\): +{self.n_tuples} hits, 0 misses, 0 errors")
        rc, out, err = run(["cache", "stats", "--format", "json", "--cache-dir", self.cache("b")])
        doc = json.loads(out)
        self.assertEqual((doc["hits"], doc["misses"]), (0, self.n_tuples))
        self.assertEqual((doc["remote"]["hits"], doc["remote"]["errors"]), (self.n_tuples, 0))
        self.assertEqual(len(doc["remotes"]), 1, doc["remotes"])
        each = doc["remotes"][0]
        self.assertIn(f"127.0.0.1:{self.redis.port}", each["url"])
        self.assertEqual((each["hits"], each["misses"], each["errors"]), (self.n_tuples, 0, 0))
        self.assertEqual(each["bytes_in"], sum(len(v) for v in a.values()))

    def test_ttl_and_database(self):
        rc, out, err = self.warm(self.cache("a"), "--remote", self.redis.url("/3|ttl=500"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(int(self.redis.cli("-n", "3", "DBSIZE")), self.n_tuples)
        self.assertEqual(int(self.redis.cli("DBSIZE")), 0)
        key = self.redis.cli("-n", "3", "--scan").split()[0]
        ttl = int(self.redis.cli("-n", "3", "TTL", key))
        self.assertTrue(0 < ttl <= 500, ttl)

    def test_only_read_never_writes(self):
        rc, out, err = self.warm(self.cache("a"), "--remote", self.redis.url(), "--remote-only-read")
        self.assertEqual(rc, 0, err)
        self.assertEqual(int(self.redis.cli("DBSIZE")), 0)
        rc, out, err = self.warm(self.cache("b"), "--remote", self.redis.url() + "|read-only")
        self.assertEqual(int(self.redis.cli("DBSIZE")), 0)

    def test_environment_and_folder_config(self):
        rc, out, err = self.warm(self.cache("a"), env={"CCKEY_REMOTE": self.redis.url()})
        self.assertEqual(rc, 0, err)
        self.assertEqual(int(self.redis.cli("DBSIZE")), self.n_tuples)
        os.makedirs(self.cache("b"))
        with open(os.path.join(self.cache("b"), "cckey.conf"), "w") as f:
            f.write(f"# shared cache\nremote = {self.redis.url()}\n")
        rc, out, err = self.warm(self.cache("b"))
        self.assertEqual(counts(out)[2], self.n_tuples, out)
        # --no-remote wins over both.
        rc, out, err = self.warm(self.cache("c"), "--no-remote", env={"CCKEY_REMOTE": self.redis.url()})
        self.assertEqual(counts(out)[0], self.n_tuples, out)
        # A bad line is a usage error that names the file and line.
        with open(os.path.join(self.cache("b"), "cckey.conf"), "a") as f:
            f.write("remote = ftp://nope\n")
        rc, out, err = self.warm(self.cache("b"))
        self.assertEqual(rc, 2)
        self.assertRegex(err, r"cckey\.conf:3: remote \"ftp://nope\": the URL must start with")

    def test_killed_mid_run_finishes_locally_with_one_warning(self):
        many = self.many_builds(24)
        p = subprocess.Popen([CCKEY, "warm", many, "--cache-dir", self.cache("a"), "-j", "2",
                              "--remote", self.redis.url()], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        # Kill the server once the run has written a few entries to it.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and p.poll() is None:
            if int(self.redis.cli("DBSIZE") or 0) >= 3:
                break
            time.sleep(0.02)
        self.assertIsNone(p.poll(), "the warm ended before the server was killed")
        self.redis.stop()
        out, err = p.communicate(timeout=300)
        out, err = out.decode(), err.decode()
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(counts(out), (24, 24, 0, 0), out)
        self.assertEqual(len(warnings(err)), 1, err)
        self.assertEqual(len(entries(self.cache("a"))), 24)

    def test_server_that_stops_answering_never_hangs_the_run(self):
        self.expect_shared(self.redis.url())   # connections would work...
        self.redis.proc.send_signal(signal.SIGSTOP)   # ...but now nothing answers
        rc, out, err = self.warm(self.cache("c"), "--remote", self.redis.url("|timeout=300|connect-timeout=300"),
                                 timeout=120)
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out)[0], self.n_tuples, out)
        self.assertEqual(len(warnings(err)), 1, err)
        self.assertIn("timed out", err)

    def test_check_reads_the_remote_and_writes_nothing(self):
        """warm --check (a read-only handle) checks the remote's entries in
        memory: all cached, nothing written anywhere; a spoilt one is not
        cached."""
        self.expect_shared(self.redis.url())
        rc, out, err = self.warm(self.cache("c"), "--remote", self.redis.url(), "--check")
        self.assertEqual(rc, 0, out + err)
        self.assertFalse(os.path.exists(self.cache("c")))
        name = sorted(entries(self.cache("a")))[0]
        self.redis.cli("SETRANGE", "cckey:" + name, "300", "X")
        rc, out, err = self.warm(self.cache("c"), "--remote", self.redis.url(), "--check")
        self.assertEqual(rc, 3, out + err)
        self.assertFalse(os.path.exists(self.cache("c")))
        self.assertEqual(int(self.redis.cli("DBSIZE")), self.n_tuples)

    def test_malformed_values_are_refused_and_the_run_goes_on(self):
        def spoil(i, name, entry):
            key = "cckey:" + name
            if i == 0:   # another type: GET answers with an error reply
                self.redis.cli("DEL", key)
                self.redis.cli("RPUSH", key, "x")
                return
            path = os.path.join(self.tmp, "value")
            with open(path, "wb") as f:
                f.write(self.malformed(i, entry))
            with open(path, "rb") as f:
                subprocess.run(["redis-cli", "-p", str(self.redis.port), "-x", "SET", key], stdin=f, check=True,
                               capture_output=True)
        self.expect_malformed_refused(self.redis.url(), spoil)

    def test_unreachable_server_is_one_warning(self):
        self.redis.stop()
        rc, out, err = self.warm(self.cache("a"), "--remote", self.redis.url())
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out)[0], self.n_tuples, out)
        self.assertEqual(len(warnings(err)), 1, err)
        self.assertIn("cannot connect", err)


@unittest.skipUnless(have("redis-server"), "redis-server is not installed")
class RedisAuthTests(Base):
    def setUp(self):
        super().setUp()
        self.redis = Redis(self.tmp, password="pa55")

    def tearDown(self):
        self.redis.stop()

    def test_password(self):
        self.expect_shared(self.redis.url())

    def test_wrong_or_missing_password_is_one_warning(self):
        for i, url in enumerate((f"redis://:wrong@127.0.0.1:{self.redis.port}", f"redis://127.0.0.1:{self.redis.port}")):
            rc, out, err = self.warm(self.cache(f"c{i}"), "--remote", url)
            self.assertEqual(rc, 0, err)
            self.assertEqual(counts(out)[0], self.n_tuples, out)
            self.assertEqual(len(warnings(err)), 1, err)
            self.assertNotIn("wrong", err)   # the password is never shown
        self.assertEqual(int(self.redis.cli("DBSIZE")), 0)


@unittest.skipUnless(have("nginx"), "nginx is not installed")
class HttpTests(Base):
    def setUp(self):
        super().setUp()
        self.nginx = Nginx(os.path.join(self.tmp, "nginx"))

    def tearDown(self):
        self.nginx.stop()

    def served(self, path):
        return entries(os.path.join(self.nginx.dir, "dav", path))

    def test_second_cache_compiles_nothing_and_copies_every_entry(self):
        a = self.expect_shared(self.nginx.url())
        # URL/<shard>/<entry name>, the entry files themselves.
        self.assertEqual(self.served("cache"), a)

    def test_malformed_files_are_refused_and_the_run_goes_on(self):
        def spoil(i, name, entry):
            served = os.path.join(self.nginx.dir, "dav", "cache")
            shard = next(d for d in os.listdir(served) if os.path.exists(os.path.join(served, d, name)))
            with open(os.path.join(served, shard, name), "wb") as f:
                f.write(self.malformed(i, entry))
        self.expect_malformed_refused(self.nginx.url(), spoil)

    def test_basic_auth(self):
        self.expect_shared(self.nginx.url("basic", "cckey:pw@"))
        rc, out, err = self.warm(self.cache("c"), "--remote", self.nginx.url("basic", "cckey:bad@"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out)[0], self.n_tuples, out)
        self.assertEqual(len(warnings(err)), 1, err)
        self.assertIn("HTTP 401", err)
        self.assertNotIn("bad", err)

    def test_bearer_token(self):
        self.expect_shared(self.nginx.url("bearer") + "|bearer=s3cret")
        rc, out, err = self.warm(self.cache("c"), "--remote", self.nginx.url("bearer") + "|bearer=nope")
        self.assertEqual(rc, 0, err)
        self.assertEqual(len(warnings(err)), 1, err)
        self.assertIn("HTTP 401", err)
        self.assertNotIn("nope", err)

    def test_server_errors_are_warnings_and_counted(self):
        rc, out, err = self.warm(self.cache("a"), "--remote", self.nginx.url("err") + "|retries=1")
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out)[0], self.n_tuples, out)
        self.assertIn("HTTP 500", err)
        self.assertLessEqual(len(warnings(err)), 2, err)
        m = re.search(r"(\d+) errors?", out)
        self.assertTrue(m and int(m.group(1)) > 0, out)
        rc, out, err = run(["cache", "stats", "--format", "json", "--cache-dir", self.cache("a")])
        self.assertGreater(json.loads(out)["remote"]["errors"], 0, out)
        self.assertGreater(json.loads(out)["remotes"][0]["errors"], 0, out)

    def test_slow_server_times_out_into_misses(self):
        silent = Silent()
        try:
            url = f"http://127.0.0.1:{silent.port}/cache|timeout=300|connect-timeout=300"
            rc, out, err = self.warm(self.cache("a"), "--remote", url, timeout=120)
        finally:
            silent.stop()
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out)[0], self.n_tuples, out)
        self.assertEqual(len(warnings(err)), 1, err)
        self.assertIn("Timeout", err)

    def test_two_remotes_in_order(self):
        # The first remote misses, the second has it: a hit, copied locally.
        self.expect_shared(self.nginx.url())
        rc, out, err = self.warm(self.cache("c"), "--remote", self.nginx.url("basic", "cckey:pw@"),
                                 "--remote", self.nginx.url())
        self.assertEqual(rc, 0, err)
        self.assertEqual(counts(out), (0, 0, self.n_tuples, 0), out)


class ShardTests(Base):
    def shard_runs(self, n, name="s"):
        parts = []
        for k in range(n):
            rc, out, err = self.warm(self.cache(f"{name}{k}"), "--shard", f"{k}/{n}")
            self.assertEqual(rc, 0, err)
            self.assertIn(f"shard {k}/{n}", out)
            parts.append(entries(self.cache(f"{name}{k}")))
        return parts

    def test_three_shards_are_disjoint_and_cover_one_run(self):
        rc, out, err = self.warm(self.cache("all"))
        self.assertEqual(rc, 0, err)
        whole = entries(self.cache("all"))
        self.assertEqual(len(whole), self.n_tuples)
        parts = self.shard_runs(3)
        for i in range(3):
            self.assertTrue(parts[i], f"shard {i} is empty")
            for j in range(i + 1, 3):
                self.assertFalse(set(parts[i]) & set(parts[j]), f"shards {i} and {j} overlap")
        union = {}
        for p in parts:
            union.update(p)
        self.assertEqual(set(union), set(whole))

    def test_auto_from_slurm_and_kubernetes(self):
        for k in range(3):
            env = {"SLURM_ARRAY_TASK_ID": str(k + 1), "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"}
            rc, out, err = self.warm(self.cache(f"slurm{k}"), "--shard", "auto", env=env)
            self.assertEqual(rc, 0, err)
            self.assertIn(f"shard {k}/3", out)
            rc, out, err = self.warm(self.cache(f"k8s{k}"), "--shard", "auto", "--shards", "3",
                                     env={"JOB_COMPLETION_INDEX": str(k)})
            self.assertEqual(rc, 0, err)
            self.assertIn(f"shard {k}/3", out)
            self.assertEqual(set(entries(self.cache(f"slurm{k}"))), set(entries(self.cache(f"k8s{k}"))))

    def test_bad_shard_arguments(self):
        for args, env in ((["--shard", "3/3"], {}), (["--shard", "1"], {}), (["--shard", "a/b"], {}),
                          (["--shard", "auto"], {}), (["--shard", "auto"], {"JOB_COMPLETION_INDEX": "0"}),
                          (["--shard", "auto", "--shards", "2"], {"JOB_COMPLETION_INDEX": "2"}),
                          (["--shards", "2"], {})):
            rc, out, err = self.warm(self.cache("bad"), *args, env=env)
            self.assertEqual(rc, 2, (args, err))
            self.assertIn("shard", err)


class ExampleTests(Base):
    """examples/slurm and examples/kubernetes as scripts: each task warms its
    shard into a fresh cache and the shared remote. Every tuple is compiled
    exactly once over all tasks (no task finds another's work: disjoint),
    and a later warm finds everything on the remote (the union is whole)."""

    def run_script(self, script, env):
        e = dict(os.environ)
        e.update(env)
        e["CCKEY"] = CCKEY
        p = subprocess.run([os.path.join(EXAMPLES, script), self.manifest], capture_output=True, text=True,
                           env=e, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout

    def expect_split(self, outs, url):
        compiled = [counts(o)[0] for o in outs]
        self.assertEqual(sum(compiled), self.n_tuples, outs)
        self.assertTrue(all(compiled), outs)
        for o in outs:
            self.assertEqual(counts(o)[2], 0, o)
            self.assertIn(" 0 hits,", o)
        rc, out, err = self.warm(self.cache("reader"), "--remote", url)
        self.assertEqual(counts(out), (0, 0, self.n_tuples, 0), out)

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_slurm_array(self):
        redis = Redis(self.tmp)
        try:
            outs = [self.run_script("slurm/warm-array.sh",
                                    {"SLURM_ARRAY_JOB_ID": "42", "SLURM_ARRAY_TASK_ID": str(t),
                                     "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3",
                                     "SLURM_CPUS_PER_TASK": "2", "CCKEY_REMOTE": redis.url(),
                                     "CCKEY_CACHE_DIR": self.cache(f"task{t}")})
                    for t in (1, 2, 3)]
            self.expect_split(outs, redis.url())
        finally:
            redis.stop()

    @unittest.skipUnless(have("nginx"), "nginx is not installed")
    def test_kubernetes_indexed_job(self):
        with open(os.path.join(EXAMPLES, "kubernetes", "warm-job.yaml")) as f:
            job = f.read()
        completions = int(re.search(r"^\s*completions:\s*(\d+)", job, re.M).group(1))
        shards = int(re.search(r"name: CCKEY_SHARDS\s*\n\s*value:\s*\"(\d+)\"", job).group(1))
        self.assertEqual(completions, shards)
        self.assertIn("completionMode: Indexed", job)
        self.assertIn("warm-shard.sh", job)
        nginx = Nginx(os.path.join(self.tmp, "nginx"))
        try:
            outs = [self.run_script("kubernetes/warm-shard.sh",
                                    {"JOB_COMPLETION_INDEX": str(i), "CCKEY_SHARDS": str(shards),
                                     "CCKEY_REMOTE": nginx.url(), "CCKEY_CACHE_DIR": self.cache(f"pod{i}")})
                    for i in range(shards)]
            self.expect_split(outs, nginx.url())
        finally:
            nginx.stop()

    def ci_recipe(self, name):
        with open(os.path.join(EXAMPLES, "ci", name)) as f:
            text = f.read()
        self.assertIn("examples/ci/warm-shard.sh kernels.jsonl", text)
        self.assertIn('cckey warm --check kernels.jsonl --remote "$CCKEY_REMOTE"', text)
        return text

    def warm_ci_jobs(self, envs):
        """warm-shard.sh once per CI job, as the CI system would start it."""
        redis = Redis(self.tmp)
        try:
            outs = [self.run_script("ci/warm-shard.sh", dict(env, CCKEY_REMOTE=redis.url(),
                                                             CCKEY_CACHE_DIR=self.cache(f"job{i}")))
                    for i, env in enumerate(envs)]
            self.expect_split(outs, redis.url())
        finally:
            redis.stop()

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_github_actions_matrix(self):
        # GitHub sets strategy.job-index (0..N-1) and job-total (the matrix
        # size) in the strategy context only; the workflow exports them.
        text = self.ci_recipe("github-actions.yml")
        shards = re.search(r"^\s*shard: \[([0-9, ]+)\]", text, re.M).group(1).split(",")
        self.assertIn("CCKEY_SHARD_INDEX: ${{ strategy.job-index }}", text)
        self.assertIn("CCKEY_SHARD_COUNT: ${{ strategy.job-total }}", text)
        self.warm_ci_jobs([{"CCKEY_SHARD_INDEX": str(i), "CCKEY_SHARD_COUNT": str(len(shards))}
                           for i in range(len(shards))])

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_gitlab_parallel(self):
        # GitLab's parallel: N sets CI_NODE_INDEX = 1..N and CI_NODE_TOTAL = N.
        n = int(re.search(r"^\s*parallel: (\d+)$", self.ci_recipe("gitlab-ci.yml"), re.M).group(1))
        self.warm_ci_jobs([{"CI_NODE_INDEX": str(i), "CI_NODE_TOTAL": str(n)} for i in range(1, n + 1)])


class SharedFolderTests(Base):
    """Many warms into one folder (as on NFS), and a folder changing under a
    running warm: misses and retried writes, never a crash or a failed run."""

    def verify(self, cache):
        rc, out, err = run(["cache", "verify", "--cache-dir", cache])
        self.assertEqual(rc, 0, out + err)
        self.assertIn("removed (damaged): 0", out)
        return int(re.search(r"ok: (\d+)", out).group(1))

    def test_eight_concurrent_warms_into_one_folder(self):
        many = self.many_builds(12)
        cache = self.cache("shared")
        procs = [subprocess.Popen([CCKEY, "warm", m, "--cache-dir", cache, "-j", "1"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                 for m in [many, self.manifest] * 4]
        for p in procs:
            out, err = p.communicate(timeout=600)
            self.assertEqual(p.returncode, 0, err.decode())
            self.assertIn(" 0 failed", out.decode())
        self.assertEqual(self.verify(cache), 12 + self.n_tuples)
        rc, out, err = run(["cache", "stats", "--format", "json", "--cache-dir", cache])
        self.assertEqual(json.loads(out)["temp_files"], 0, out)

    def test_entries_removed_under_a_running_warm(self):
        many = self.many_builds(24)
        cache = self.cache("shaky")
        p = subprocess.Popen([CCKEY, "warm", many, "--cache-dir", cache, "-j", "2"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        sweeps = removed = 0
        while p.poll() is None:
            # Another machine cleaning the folder: whole shard folders go.
            if os.path.isdir(cache):
                for shard in os.listdir(cache):
                    if SHARD_DIR.match(shard):
                        shutil.rmtree(os.path.join(cache, shard), ignore_errors=True)
                        removed += 1
            sweeps += 1
            time.sleep(0.05)
        out, err = p.communicate()
        self.assertEqual(p.returncode, 0, err.decode())
        self.assertIn(", 0 failed", out.decode())
        self.assertGreater(removed, 0, "nothing was removed while the warm ran")
        # What is left is sound, and a second warm completes the folder.
        left = self.verify(cache)
        rc, out, err = self.warm(cache, manifest=many)
        self.assertEqual(rc, 0, err)
        compiled, _, cached, failed = counts(out)
        self.assertEqual((compiled + cached, failed), (24, 0), out)
        self.assertEqual(cached, left)
        self.assertEqual(self.verify(cache), 24)


class BundleTests(Base):
    def warmed(self):
        cache = self.cache("src")
        rc, out, err = self.warm(cache)
        self.assertEqual(rc, 0, err)
        return cache

    def cache_cmd(self, *args):
        return run(["cache"] + list(args))

    def test_export_a_manifest_and_import_it_elsewhere(self):
        src = self.warmed()
        bundle = os.path.join(self.tmp, "suite.bundle")
        rc, out, err = self.cache_cmd("export", self.manifest, "-o", bundle, "--cache-dir", src)
        self.assertEqual(rc, 0, err)
        self.assertIn(f"{self.n_tuples} entries", err)
        rc, out, err = self.cache_cmd("import", bundle, "--cache-dir", self.cache("dst"))
        self.assertEqual(rc, 0, err)
        self.assertIn(f"imported: {self.n_tuples}", out)
        self.assertEqual(entries(self.cache("dst")), entries(src))
        rc, out, err = self.warm(self.cache("dst"))
        self.assertEqual(counts(out), (0, 0, self.n_tuples, 0), out)
        # Standard input works too, and importing again changes nothing.
        with open(bundle, "rb") as f:
            p = subprocess.run([CCKEY, "cache", "import", "-", "--cache-dir", self.cache("dst")], stdin=f,
                               capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(entries(self.cache("dst")), entries(src))

    def test_export_everything_and_missing_keys(self):
        src = self.warmed()
        extra = self.many_builds(2)
        rc, out, err = self.warm(src, manifest=extra)
        bundle = os.path.join(self.tmp, "all.bundle")
        rc, out, err = self.cache_cmd("export", "-o", bundle, "--cache-dir", src)
        self.assertEqual(rc, 0, err)
        self.assertIn(f"{self.n_tuples + 2} entries", err)
        rc, out, err = self.cache_cmd("import", bundle, "--cache-dir", self.cache("dst"))
        self.assertEqual(entries(self.cache("dst")), entries(src))
        # A manifest whose keys are not all cached: the bundle has the rest, exit 1.
        rc, out, err = self.cache_cmd("export", self.many_builds(3), "-o", bundle, "--cache-dir", src)
        self.assertEqual(rc, 1, err)
        self.assertIn("1 of the manifest's 3 keys have no entry", err)

    def test_damaged_bundles(self):
        src = self.warmed()
        bundle = os.path.join(self.tmp, "suite.bundle")
        self.assertEqual(self.cache_cmd("export", "-o", bundle, "--cache-dir", src)[0], 0)
        with open(bundle, "rb") as f:
            data = f.read()
        cut = os.path.join(self.tmp, "cut.bundle")
        with open(cut, "wb") as f:
            f.write(data[: len(data) // 2])
        rc, out, err = self.cache_cmd("import", cut, "--cache-dir", self.cache("a"))
        self.assertEqual(rc, 1)
        self.assertIn("ends early", err)
        # Whatever came in before the cut is whole.
        for name, raw in entries(self.cache("a")).items():
            self.assertEqual(raw, entries(src)[name])
        # Cut exactly where a member's header starts, and where the
        # end-of-archive mark starts: tar readers take a clean end between
        # members for a bundle whose writer left the mark out (CI, stop 32:
        # the half-way cut above fell on such a boundary and imported).
        with tarfile.open(bundle) as t:
            members = t.getmembers()
            boundaries = [members[len(members) // 2].offset, t.offset]
        for i, at in enumerate(boundaries):
            with open(cut, "wb") as f:
                f.write(data[:at])
            rc, out, err = self.cache_cmd("import", cut, "--cache-dir", self.cache(f"edge{i}"))
            self.assertEqual(rc, 1, f"a bundle cut at byte {at} of {len(data)} was imported: {out}{err}")
            self.assertIn("ends early", err)
        # The whole bundle still imports.
        rc, out, err = self.cache_cmd("import", bundle, "--cache-dir", self.cache("whole"))
        self.assertEqual(rc, 0, out + err)
        # One flipped byte inside the first entry (where tarfile says its
        # data starts): that entry is refused.
        with tarfile.open(bundle) as t:
            first = t.getmembers()[0].offset_data
        flipped = bytearray(data)
        flipped[first + 300] ^= 1
        bad = os.path.join(self.tmp, "bad.bundle")
        with open(bad, "wb") as f:
            f.write(flipped)
        rc, out, err = self.cache_cmd("import", bad, "--cache-dir", self.cache("b"))
        self.assertEqual(rc, 1)
        self.assertIn("refused (damaged): 1", out)
        self.assertEqual(len(entries(self.cache("b"))), self.n_tuples - 1)
        with open(bad, "wb") as f:
            f.write(b"not a bundle at all")
        rc, out, err = self.cache_cmd("import", bad, "--cache-dir", self.cache("c"))
        self.assertEqual(rc, 1)
        self.assertIn("not a cckey bundle", err)

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_import_into_a_remote(self):
        src = self.warmed()
        bundle = os.path.join(self.tmp, "suite.bundle")
        self.assertEqual(self.cache_cmd("export", "-o", bundle, "--cache-dir", src)[0], 0)
        redis = Redis(self.tmp)
        try:
            rc, out, err = self.cache_cmd("import", bundle, "--cache-dir", self.cache("a"), "--remote", redis.url())
            self.assertEqual(rc, 0, err)
            self.assertEqual(int(redis.cli("DBSIZE")), self.n_tuples)
            self.assertIn(f"{self.n_tuples} written", out)
            # Entries the remote has are not sent again.
            rc, out, err = self.cache_cmd("import", bundle, "--cache-dir", self.cache("b"), "--remote", redis.url())
            self.assertEqual(rc, 0, err)
            self.assertNotIn("written", out.replace("0 written", ""))
            rc, out, err = self.warm(self.cache("c"), "--remote", redis.url())
            self.assertEqual(counts(out), (0, 0, self.n_tuples, 0), out)
        finally:
            redis.stop()


# Entry files of format 4, read and rewritten here from the documented
# layout (host/entry/entry.h), to craft what an attacker could.
REC_FINGERPRINT, REC_SIGNATURE, REC_VARIANT = 5, 6, 7


def parse_entry(raw):
    import struct
    rec_len = struct.unpack_from("<I", raw, 172)[0]
    recs, off = [], 192
    while off < 192 + rec_len:
        t, flags, n = struct.unpack_from("<HHI", raw, off)
        recs.append([t, flags, raw[off + 8: off + 8 + n]])
        off += 8 + n
    return raw[:192], recs, raw[192 + rec_len:]


def build_entry(head, recs, payload):
    """An entry with a correct checksum (MD5 over the header, the records and
    the MD5s of the payload's 4096-byte pieces): well formed, whatever it says."""
    import hashlib
    import struct
    # One build: its VARIANT record says the binary is the whole payload.
    recs = [[t, f, struct.pack("<QQ", 0, len(payload)) + v[16:] if t == REC_VARIANT else v] for t, f, v in recs]
    assert sum(1 for r in recs if r[0] == REC_VARIANT) <= 1
    rec = b"".join(struct.pack("<HHI", t, f, len(v)) + v for t, f, v in recs)
    h = bytearray(head)
    struct.pack_into("<Q", h, 16, len(payload))
    struct.pack_into("<II", h, 172, len(rec), sum(1 for r in recs if r[0] == REC_VARIANT))
    h[24:40] = bytes(16)
    pieces = b"".join(hashlib.md5(payload[i:i + 4096]).digest() for i in range(0, len(payload), 4096))
    h[24:40] = hashlib.md5(bytes(h) + rec + pieces).digest()
    return bytes(h) + rec + payload


class PoisoningTests(Base):
    """A writer of the cache crafts entries: a good MD5 key with a wrong
    fingerprint, and (with a signing secret) tampered or unsigned entries."""

    def one_entry(self, cache):
        es = entries(cache)
        name = sorted(es)[0]
        return name, os.path.join(cache, [d for d in os.listdir(cache) if os.path.exists(os.path.join(cache, d, name))][0], name), es[name]

    def test_wrong_or_missing_fingerprint_is_never_served(self):
        cache = self.cache("a")
        rc, out, err = self.warm(cache)
        self.assertEqual(rc, 0, err)
        name, path, raw = self.one_entry(cache)
        head, recs, payload = parse_entry(raw)
        self.assertIn(REC_FINGERPRINT, [r[0] for r in recs])
        for variant in ("flipped", "absent"):
            if variant == "flipped":
                crafted = [[t, f, bytes([v[0] ^ 1]) + v[1:] if t == REC_FINGERPRINT else v] for t, f, v in recs]
            else:
                crafted = [r for r in recs if r[0] != REC_FINGERPRINT]
            evil = b"EVIL" * 64
            with open(path, "wb") as f:
                f.write(build_entry(head, crafted, evil))
            rc, out, err = self.warm(cache)
            self.assertEqual(rc, 0, err)
            self.assertEqual(counts(out)[0], 1, out)   # compiled again: not served
            self.assertIn("possible MD5 collision", err)
            with open(path, "rb") as f:
                self.assertNotIn(evil, f.read())

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_wrong_fingerprint_from_a_remote_is_never_served(self):
        redis = Redis(self.tmp)
        try:
            rc, out, err = self.warm(self.cache("a"), "--remote", redis.url())
            name, path, raw = self.one_entry(self.cache("a"))
            head, recs, payload = parse_entry(raw)
            crafted = [[t, f, bytes(len(v)) if t == REC_FINGERPRINT else v] for t, f, v in recs]
            self.set_remote(redis, name, build_entry(head, crafted, b"EVIL"))
            rc, out, err = self.warm(self.cache("b"), "--remote", redis.url())
            self.assertEqual(rc, 0, err)
            self.assertEqual(counts(out)[0], 1, out)
            self.assertNotIn(b"EVIL", entries(self.cache("b"))[name])
        finally:
            redis.stop()

    def set_remote(self, redis, name, value):
        path = os.path.join(self.tmp, "value")
        with open(path, "wb") as f:
            f.write(value)
        with open(path, "rb") as f:
            subprocess.run(["redis-cli", "-p", str(redis.port), "-x", "SET", "cckey:" + name], stdin=f,
                           check=True, capture_output=True)

    def get_remote(self, redis, name):
        return subprocess.run(["redis-cli", "-p", str(redis.port), "--raw", "GET", "cckey:" + name],
                              capture_output=True, check=True).stdout[:-1]

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_records_match_hashlib_sha256_and_hmac(self):
        """The fingerprint and signature records, recomputed by hashlib and
        hmac from the tuples of the manifest and the documented bytes."""
        import hashlib
        import hmac
        import struct
        redis = Redis(self.tmp)
        secret = b"team secret"
        manifest = self.many_builds(3)
        try:
            rc, out, err = self.warm(self.cache("a"), "--remote", redis.url(), manifest=manifest,
                                     env={"CCKEY_REMOTE_KEY": secret.decode()})
            self.assertEqual(rc, 0, err)
            local = entries(self.cache("a"))
            self.assertEqual(len(local), 3)
            with open(manifest) as f:
                tuples = [json.loads(l) for l in f]
            for t in tuples:
                dev, name, src = (t[k].encode() for k in ("device", "name", "source"))
                key = ":".join(hashlib.md5(x).hexdigest() for x in (dev, name, src, b""))
                entry_name = key.replace(":", "-")
                self.assertIn(entry_name, local)
                head, recs, payload = parse_entry(local[entry_name])
                self.assertEqual(head[40:40 + len(key)], key.encode())
                deps = b"".join(struct.pack("<HHI", ty, fl, len(v)) + v for ty, fl, v in recs if ty == 4)
                want = hashlib.sha256(b"cckey-fingerprint-1\0" + b"".join(
                    struct.pack("<Q", len(x)) + x for x in (dev, name, src)) + struct.pack("<Q", 0) +
                    struct.pack("<Q", len(deps)) + deps).digest()
                self.assertEqual([v for ty, _, v in recs if ty == REC_FINGERPRINT], [want])
                self.assertNotIn(REC_SIGNATURE, [r[0] for r in recs])   # the local copy is unsigned
                # The remote copy: the same records, then the signature.
                rhead, rrecs, rpayload = parse_entry(self.get_remote(redis, entry_name))
                self.assertEqual((rrecs[:-1], rpayload), (recs, payload))
                self.assertEqual(rrecs[-1][:2], [REC_SIGNATURE, 0])
                signed = b"".join(struct.pack("<HHI", ty, fl, len(v)) + v for ty, fl, v in recs)
                mac = hmac.new(secret, b"cckey-entry-mac-1\0" + key.encode() +
                               struct.pack("<QQ", len(signed), len(payload)) + signed + payload,
                               hashlib.sha256).digest()
                self.assertEqual(rrecs[-1][2], mac)
        finally:
            redis.stop()

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_signed_remote_refuses_tampered_unsigned_and_foreign_entries(self):
        redis = Redis(self.tmp)
        key = {"CCKEY_REMOTE_KEY": "team secret"}
        try:
            rc, out, err = self.warm(self.cache("a"), "--remote", redis.url(), env=key)
            self.assertEqual(rc, 0, err)
            names = sorted(entries(self.cache("a")))
            raw = self.get_remote(redis, names[0])
            head, recs, payload = parse_entry(raw)
            self.assertEqual(recs[-1][0], REC_SIGNATURE)
            self.assertEqual(len(recs[-1][2]), 32)
            # With the secret: every entry is served.
            rc, out, err = self.warm(self.cache("b"), "--remote", redis.url(), env=key)
            self.assertEqual(counts(out), (0, 0, self.n_tuples, 0), out)
            self.assertEqual(warnings(err), [])
            # Without it a reader still serves them (it checks no signature).
            rc, out, err = self.warm(self.cache("c"), "--remote", redis.url())
            self.assertEqual(counts(out)[2], self.n_tuples, out)
            # Tampered (payload changed, checksum fixed), unsigned, and signed
            # under another secret: all refused by a reader with the secret.
            self.set_remote(redis, names[0], build_entry(head, recs, payload[:-1] + bytes([payload[-1] ^ 1])))
            self.set_remote(redis, names[1], build_entry(*parse_entry(self.get_remote(redis, names[1]))[:1],
                                                         parse_entry(self.get_remote(redis, names[1]))[1][:-1],
                                                         parse_entry(self.get_remote(redis, names[1]))[2]))
            rc, out, err = self.warm(self.cache("x"), "--remote", redis.url(), env={"CCKEY_REMOTE_KEY": "other"})
            self.assertEqual(counts(out)[2], 0, out)
            self.assertIn("bad signature", err)
            rc, out, err = self.warm(self.cache("d"), "--remote", redis.url(), env=key)
            self.assertEqual(rc, 0, err)
            self.assertEqual(counts(out)[0], 2, out)
            self.assertEqual(counts(out)[2], self.n_tuples - 2, out)
            self.assertTrue("bad signature" in err or "unsigned" in err, err)
            self.assertRegex(out, r"[1-9]\d* errors?")
        finally:
            redis.stop()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    CCKEY = os.path.abspath(sys.argv.pop(1))
    DEVICE = opencl_device()
    if not DEVICE:
        print("skipped: no OpenCL device (the tests compile the example kernels)")
        sys.exit(77)
    unittest.main(verbosity=2)
