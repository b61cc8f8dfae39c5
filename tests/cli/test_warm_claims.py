#!/usr/bin/env python3
"""Concurrent warms of one cache folder share the work: in-flight claims
(host/cli/warm/claims.c), on kernels compiled by a real OpenCL runtime
(PoCL in CI).

Usage: test_warm_claims.py PATH/TO/cckey [unittest args]

Oracles: each warm's own --format json counts (compiled, cached), which
must add up to every tuple compiled exactly once over all the processes;
`warm --check` from a fresh process, which must find every tuple; the
claims folder itself (no claim left behind); and the operating system's
locks (Python's fcntl.lockf) for a claim another process holds. Skips with
a one-line reason where PoCL is absent."""
import fcntl
import json
import os
import signal
import subprocess
import sys
import time
import unittest

from clitest import OpenCLTest, env

CCKEY = None
N = 40
# A body slow enough to compile that a claim can be seen while it builds.
SLOW = "float x = a[0];" + " x = x * 1.0001f + 2.0f;" * 4000 + " a[0] = x + %d;"


def run(args, cwd, timeout=600):
    p = subprocess.run([CCKEY] + args, cwd=cwd, capture_output=True, timeout=timeout, env=env())
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def kernels(folder, n, body="a[get_global_id(0)] *= %d.0f;"):
    os.makedirs(os.path.join(folder, "k"), exist_ok=True)
    for i in range(n):
        with open(os.path.join(folder, "k", "k%d.cl" % i), "w") as f:
            f.write("__kernel void k%d(__global float *a) { %s }\n" % (i, body % (i + 1)))


def manifest(folder, device, n):
    with open(os.path.join(folder, "m.jsonl"), "w") as f:
        for i in range(n):
            f.write(json.dumps({"device": device, "name": "k%d" % i, "source_file": "k/k%d.cl" % i,
                                "options": []}) + "\n")


class Claims(OpenCLTest):
    def setUp(self):
        super().setUp()
        self.store = os.path.join(self.dir, "store")

    def warm(self, *extra):
        return subprocess.Popen([CCKEY, "warm", "m.jsonl", "--cache-dir", self.store, "-q", "--format", "json"]
                                + list(extra), cwd=self.dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env())

    def finish(self, p):
        out, err = p.communicate(timeout=900)
        self.assertEqual(p.returncode, 0, err.decode())
        return json.loads(out)

    def claims_left(self):
        d = os.path.join(self.store, "claims")
        return sorted(os.listdir(d)) if os.path.isdir(d) else []

    def check_all_cached(self, n):
        rc, out, err = run(["warm", "m.jsonl", "--cache-dir", self.store, "--check", "--format", "json"], self.dir)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["cached"], n)

    def killed_with_its_claim(self):
        """A warm of one slow build, killed while it compiles: the process
        and the claims it left."""
        kernels(self.dir, 1, body=SLOW)
        manifest(self.dir, self.device, 1)
        p = self.warm("-j1")
        deadline = time.monotonic() + 300   # a guard against a hang, not a timing
        while not self.claims_left() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        left = self.claims_left()
        p.send_signal(signal.SIGKILL)
        p.communicate()
        if not left or p.returncode == 0:
            self.skipTest("the build finished before its claim could be seen")
        return p, left

    def test_eight_warms_compile_each_tuple_once(self):
        kernels(self.dir, N)
        manifest(self.dir, self.device, N)
        procs = [self.warm("-j1") for _ in range(8)]
        results = [self.finish(p) for p in procs]
        self.assertEqual(sum(r["compiled"] for r in results), N, results)
        for r in results:
            self.assertEqual(r["tuples"], N)
            self.assertEqual(r["failed"], 0)
            self.assertEqual(r["compiled"] + r["cached"], N, r)
        self.assertEqual(self.claims_left(), [])
        self.check_all_cached(N)

    def test_a_dead_owners_claim_is_taken_over(self):
        # A build slow enough to be caught while it compiles: a long
        # unrolled body. The warm is killed with its claim on file.
        p, left = self.killed_with_its_claim()
        self.assertEqual(self.claims_left(), left)   # the dead owner's file stays
        with open(os.path.join(self.store, "claims", left[0])) as f:
            owner = f.read().split()
        # "host pid", or nothing when the kill came between the claim's
        # creation and its text (the lock, not the text, is the claim).
        if owner:
            self.assertEqual(owner[1], str(p.pid))
        r = self.finish(self.warm())
        self.assertEqual((r["compiled"], r["failed"]), (1, 0))
        self.assertEqual(self.claims_left(), [])
        self.check_all_cached(1)

    def test_a_live_holder_is_waited_for(self):
        p, left = self.killed_with_its_claim()
        path = os.path.join(self.store, "claims", left[0])
        holder = open(path, "r+")
        fcntl.lockf(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)   # free: its owner is dead
        p = self.warm()
        time.sleep(2)
        # Waiting, not compiling: the claim is held. (A broken claim would
        # let it finish; a slow machine can only make this pass late.)
        self.assertIsNone(p.poll())
        os.unlink(path)
        holder.close()
        r = self.finish(p)
        self.assertEqual((r["compiled"], r["failed"]), (1, 0))
        self.assertEqual(self.claims_left(), [])

    def test_a_folder_that_takes_no_claims_still_warms(self):
        kernels(self.dir, 2)
        manifest(self.dir, self.device, 2)
        os.makedirs(self.store)
        open(os.path.join(self.store, "claims"), "w").close()   # a file where the folder would go
        r = self.finish(self.warm())
        self.assertEqual((r["compiled"], r["failed"]), (2, 0))
        self.check_all_cached(2)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_warm_claims.py PATH/TO/cckey [unittest args]")
    CCKEY = OpenCLTest.cckey = os.path.abspath(sys.argv.pop(1))
    unittest.main()
