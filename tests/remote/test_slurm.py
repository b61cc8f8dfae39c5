#!/usr/bin/env python3
"""examples/slurm/warm-array.sh on a real single-node Slurm: munged,
slurmctld and slurmd (Debian's slurm-wlm) and a redis-server, all started
here on free loopback ports. The script is submitted as written with
`sbatch --array`; every array task warms its shard of the example suite
(the OpenCL kernels, compiled by PoCL) into a node-local folder and the
shared Redis.

Oracles: the tasks' own summaries and folders (each tuple compiled by
exactly one task, the tasks' entries disjoint and together one per key of
`cckey key`), and a fresh reader's `warm --check` against the Redis alone
(every tuple found, exit 0).

Usage: test_slurm.py PATH/TO/cckey [unittest args]
Skips (exit 77) with a one-line reason where the Slurm or munge binaries,
redis-server or an OpenCL device are absent."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(os.path.dirname(HERE), "cli")]   # servers, slurm; clitest
from servers import Redis, have, skip_unless  # noqa: E402
import slurm  # noqa: E402
from clitest import EXAMPLES, WARM_SUMMARY as SUMMARY  # noqa: E402

CCKEY = None
DEVICE = None
ENTRY = re.compile(r"^[0-9a-f]{32}(-[0-9a-f]{32}){3}$")
ARRAY = "1-5:2"   # tasks 1, 3 and 5: --shard auto must rank them 0, 1, 2 of 3


def run(args, timeout=300):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CCKEY_", "SLURM_"))}
    p = subprocess.run([CCKEY] + args, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr


def opencl_device():
    rc, out, _ = run(["devices"])
    m = re.search(r"^opencl\s+available.*?device id: (.+?)$", out, re.M | re.S)
    return m.group(1).strip() if m else None


def entry_names(folder):
    """The entry files of a cache folder (under its two-hex-digit shards)."""
    names = set()
    for root, _, files in os.walk(folder):
        names.update(n for n in files if ENTRY.match(n))
    return names


class SlurmArray(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="cckey-slurm-")
        os.chmod(cls.root, 0o755)   # above munged's socket (the key stays in a 0700 folder)
        cls.manifest = os.path.join(cls.root, "suite.jsonl")
        rc, out, err = run(["scan", os.path.join(EXAMPLES, "kernels", "opencl"), "--device", DEVICE,
                            "-O", "", "-O", "-cl-fast-relaxed-math,-DUNROLL=4", "-o", cls.manifest])
        assert rc == 0, err
        with open(cls.manifest) as f:
            cls.tuples = [json.loads(l) for l in f if l.strip()]
        rc, out, err = run(["batch", cls.manifest])
        assert rc == 0, err
        cls.keys = set(out.split())
        cls.redis = Redis(cls.root)
        try:
            cls.cluster = slurm.Slurm(os.path.join(cls.root, "slurm"))
        except Exception:
            cls.redis.stop()   # tearDownClass does not run after a failed setUpClass
            raise

    @classmethod
    def tearDownClass(cls):
        cls.cluster.stop()
        cls.redis.stop()
        shutil.rmtree(cls.root, ignore_errors=True)

    def submit(self, scratch):
        """sbatch --wait --array ARRAY examples/slurm/warm-array.sh MANIFEST.
        The script's own #SBATCH lines stay; only --cpus-per-task is lowered
        on the command line (as a user would on a smaller node) so the tasks
        fit this machine, and the output files are named per task."""
        os.mkdir(scratch)
        env = self.cluster.env({"CCKEY": CCKEY, "TMPDIR": scratch})
        p = subprocess.run(["sbatch", "--wait", "--array", ARRAY, "--cpus-per-task", "1",
                            "--export", "ALL,CCKEY_REMOTE=" + self.redis.url(),
                            "--output", os.path.join(scratch, "task-%a.out"),
                            os.path.join(EXAMPLES, "slurm", "warm-array.sh"), self.manifest],
                           capture_output=True, text=True, env=env, cwd=scratch, timeout=1200)
        job = re.search(r"Submitted batch job (\d+)", p.stdout)
        outs = {}
        for name in sorted(os.listdir(scratch)):
            if name.startswith("task-"):
                with open(os.path.join(scratch, name)) as f:
                    outs[name] = f.read()
        self.assertEqual(p.returncode, 0, (p.stdout, p.stderr, outs, self.cluster.log("slurmd")))
        self.assertTrue(job, p.stdout)
        return job.group(1), outs

    def test_array_warms_each_tuple_once_and_a_fresh_reader_finds_all(self):
        scratch = os.path.join(self.root, "job")
        job, outs = self.submit(scratch)
        self.assertEqual(sorted(outs), ["task-1.out", "task-3.out", "task-5.out"], outs)
        compiled = 0
        for name, out in outs.items():
            m = SUMMARY.search(out)
            self.assertTrue(m, (name, out))
            done, builds, cached, failed = (int(x) for x in m.groups())
            self.assertGreater(done, 0, (name, out))   # every task had a shard to build
            self.assertEqual((cached, failed), (0, 0), (name, out))
            compiled += done
        self.assertEqual(compiled, len(self.tuples), outs)

        # The tasks' node-local folders (named by the script from the job and
        # task ids): disjoint, and together one entry per key of the suite.
        per_task = [entry_names(os.path.join(scratch, f"cckey-warm-{job}-{t}")) for t in (1, 3, 5)]
        self.assertTrue(all(per_task), per_task)
        self.assertEqual(sum(len(s) for s in per_task), len(set().union(*per_task)), "a key compiled twice")
        self.assertEqual({n.replace("-", ":") for n in set().union(*per_task)}, self.keys)

        # A fresh reader with nothing local: every tuple is on the Redis.
        rc, out, err = run(["warm", "--check", "--format", "jsonl", "--cache-dir", os.path.join(self.root, "reader"),
                            "--remote", self.redis.url(), self.manifest])
        self.assertEqual(rc, 0, out + err)
        lines = [json.loads(l) for l in out.splitlines() if l.startswith('{"line"')]
        self.assertEqual(sorted(l["line"] for l in lines), list(range(1, len(self.tuples) + 1)), out)
        self.assertEqual({l["status"] for l in lines}, {"hit"}, out)
        self.assertEqual({l["key"] for l in lines}, self.keys, out)


def main():
    global CCKEY, DEVICE
    CCKEY = os.path.abspath(sys.argv.pop(1))
    absent = slurm.missing()
    skip_unless((not absent, f"{absent} is not installed (Debian: slurm-wlm, slurmctld, slurmd, munge)"),
                (have("redis-server"), "redis-server is not installed"))
    DEVICE = opencl_device()
    skip_unless((DEVICE, "no OpenCL device (PoCL: pocl-opencl-icd)"))
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
