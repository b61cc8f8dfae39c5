#!/usr/bin/env python3
"""What warm tells a person while and after it runs: the progress bar counts
tuples against their total, with the builds in flight; identical failures
are one line with their count and the first tuple; -v and --format jsonl
list every tuple. On PoCL (OpenCL on the CPU).

Usage: test_warm_report.py PATH/TO/cckey [unittest args]

Oracles: the manifest itself (tuple counts, lines) and --format jsonl's
per-tuple results. Skips with a one-line reason where PoCL is absent."""
import json
import os
import re
import subprocess
import sys
import unittest

from clitest import OpenCLTest, env, run_on_pty

CCKEY = None


class Report(OpenCLTest):
    def write(self, name, text):
        with open(os.path.join(self.dir, name), "w") as f:
            f.write(text)

    def manifest(self, rows):
        self.write("m.jsonl", "".join(json.dumps(r) + "\n" for r in rows))

    def warm(self, *extra):
        p = subprocess.run([CCKEY, "warm", "m.jsonl", "--cache-dir", "store"] + list(extra), cwd=self.dir,
                           capture_output=True, env=env(), timeout=900)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def on_pty(self, args):
        rc, out = run_on_pty([CCKEY] + args, cwd=self.dir)
        self.assertEqual(rc, 0, out[-2000:])
        return out

    def test_progress_counts_tuples_of_the_total(self):
        n = 30
        rows = []
        for i in range(n):
            self.write("k%d.cl" % i, "__kernel void k(__global float *a) { a[0] = %d; }\n" % i)
            # Two entry points' worth of tuples per build: the bar counts
            # tuples (60), not builds (30).
            rows.append({"device": self.device, "name": "k", "source_file": "k%d.cl" % i, "options": []})
            rows.append({"device": self.device, "name": "k", "source_file": "k%d.cl" % i,
                         "options": [["-DUNUSED", ""]]})
        self.manifest(rows)
        raw = self.on_pty(["warm", "m.jsonl", "--cache-dir", "store", "-j1"])
        self.assertIn("warm: %d tuples" % (2 * n), raw)
        bars = re.findall(r"(\d+)/(\d+) tuples .*?\((\d+) building, (\d+) compiled", raw)
        if not bars:
            self.skipTest("the warm finished before the bar's first second")
        for done, total, building, compiled in bars:
            self.assertEqual(int(total), 2 * n)
            self.assertLessEqual(int(done), 2 * n)
            self.assertLessEqual(int(building), 1)   # -j1
            self.assertLessEqual(int(compiled), int(done))
        self.assertNotIn(" items", raw)

    def test_identical_failures_are_one_line(self):
        rows = [{"device": "no such device|1", "name": "k", "source_file": "k.cl", "options": [["-DN", str(i)]]}
                for i in range(30)]
        self.write("k.cl", "__kernel void k(__global float *a) { a[0] = N; }\n")
        # Two builds that fail to compile, each with its own log, and two
        # entry points of one failing build (one log).
        self.write("bad1.cl", "__kernel void a(__global float *x) { x[0] = y; }\n"
                              "__kernel void b(__global float *x) { x[0] = 1; }\n")
        self.write("bad2.cl", "__kernel void c(__global float *x) { x[0] = z; }\n")
        rows += [{"device": self.device, "name": n, "source_file": f, "options": []}
                 for n, f in (("a", "bad1.cl"), ("b", "bad1.cl"), ("c", "bad2.cl"))]
        self.manifest(rows)
        rc, out, err = self.warm("-q")
        self.assertEqual(rc, 1, err)
        lines = [l for l in err.splitlines() if l.startswith("cckey: warm:")]
        self.assertEqual(len([l for l in lines if "no OpenCL device here is" in l]), 1, err)
        self.assertRegex(err, r"cckey: warm: 30 tuples: no OpenCL device here is \"no such device\|1\".*"
                              r"\(first: m\.jsonl:1: k on ")
        self.assertRegex(err, r"cckey: warm: 2 tuples: build failed: .*\(first: m\.jsonl:31: a on ")
        self.assertRegex(err, r"cckey: warm: m\.jsonl:33: c on .*build failed")
        self.assertEqual(err.count("compiler log:"), 2)
        self.assertIn("undeclared identifier 'y'", err)
        self.assertIn("undeclared identifier 'z'", err)
        # -v: every tuple on its own line; jsonl: every tuple's result.
        rc, out, err = self.warm("-q", "-v")
        self.assertEqual(len([l for l in err.splitlines() if "no OpenCL device here is" in l]), 30)
        rc, out, err = self.warm("-q", "--format", "jsonl")
        results = [json.loads(l) for l in out.splitlines()]
        self.assertEqual(len(results), 33)
        self.assertEqual(sorted(r["result"] for r in results), ["failed"] * 33)


    def test_past_fifty_reasons_the_rest_are_counted(self):
        self.write("k.cl", "__kernel void k(__global float *a) { a[0] = 1; }\n")
        self.manifest([{"device": "nodev%d|0" % i, "name": "k", "source_file": "k.cl", "options": []}
                       for i in range(60)])
        rc, out, err = self.warm("-q")
        self.assertEqual(rc, 1, err)
        lines = err.splitlines()
        self.assertEqual(len([l for l in lines if "no OpenCL device here is" in l]), 50, err)
        self.assertIn("cckey: warm: ... and 10 more failed tuples (-v lists them all)", lines)
        rc, out, err = self.warm("-q", "-v")
        self.assertEqual(len([l for l in err.splitlines() if "no OpenCL device here is" in l]), 60, err)

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: test_warm_report.py PATH/TO/cckey [unittest args]")
    CCKEY = OpenCLTest.cckey = os.path.abspath(sys.argv.pop(1))
    unittest.main()
