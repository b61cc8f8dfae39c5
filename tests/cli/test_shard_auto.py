#!/usr/bin/env python3
"""warm --shard auto under a scheduler: every tuple of the manifest in
exactly one task's shard, whatever the array's first index, step or
concurrency limit, and a clear refusal (exit 2, naming the variable and its
value) where the environment says nothing usable.

The environment is set as Slurm documents it for sbatch --array (see
slurm_env); a real Slurm cluster runs the same in tests/remote. Shards are
read from warm --check --format jsonl on an empty store: it compiles
nothing and lists each tuple of its shard.

Usage: test_shard_auto.py PATH/TO/cckey [unittest args]"""
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

CCKEY = None
SLURM_VARS = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
              "SLURM_ARRAY_TASK_COUNT", "JOB_COMPLETION_INDEX", "CCKEY_SHARD_INDEX", "CCKEY_SHARD_COUNT",
              "CI_NODE_INDEX", "CI_NODE_TOTAL", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", "BUILDKITE_PARALLEL_JOB",
              "BUILDKITE_PARALLEL_JOB_COUNT")
# CI systems' parallel jobs: (index variable, count variable, first index),
# as each documents them; GitHub Actions' pair is the one its workflow sets.
CI_PAIRS = (("CCKEY_SHARD_INDEX", "CCKEY_SHARD_COUNT", 0), ("CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
            ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
            ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0))


def slurm_indices(spec):
    """The task indices of sbatch --array=SPEC for a range spec
    "FIRST-LAST[:STEP][%LIMIT]" or one index; the %LIMIT only caps how many
    run at once."""
    spec = spec.split("%")[0]
    m = re.fullmatch(r"(\d+)(?:-(\d+)(?::(\d+))?)?", spec)
    first = int(m.group(1))
    last = int(m.group(2) or first)
    step = int(m.group(3) or 1)
    return list(range(first, last + 1, step)), step


def slurm_env(spec, task, drop=()):
    """What Slurm sets in the environment of array task TASK: its index, the
    array's lowest and highest index, its step and its task count."""
    indices, step = slurm_indices(spec)
    env = {"SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_MIN": str(indices[0]),
           "SLURM_ARRAY_TASK_MAX": str(indices[-1]), "SLURM_ARRAY_TASK_STEP": str(step),
           "SLURM_ARRAY_TASK_COUNT": str(len(indices))}
    for name in drop:
        del env[name]
    return env


class ShardAuto(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory()
        cls.dir = cls._tmp.name
        cls.manifest = os.path.join(cls.dir, "m.jsonl")
        with open(cls.manifest, "w") as f:
            for i in range(60):   # distinct builds of varied cost
                f.write(json.dumps({"device": "d", "name": "k%d" % i, "source": "s%d " % i + "x" * (i * 37 % 211)}))
                f.write("\n")

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    def warm(self, args, env):
        full = {k: v for k, v in os.environ.items() if k not in SLURM_VARS}
        full.update(env)
        store = os.path.join(self.dir, "empty-store")
        p = subprocess.run([CCKEY, "warm", "--check", "--format", "jsonl", "--cache-dir", store] + args +
                           [self.manifest], env=full, capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def shard_lines(self, env, args=()):
        rc, out, err = self.warm(["--shard", "auto"] + list(args), env)
        self.assertIn(rc, (0, 3), err)   # 3: tuples to compile (the store is empty)
        return [json.loads(ln)["line"] for ln in out.splitlines() if ln.startswith('{"line"')]

    def assert_exactly_once(self, per_task):
        seen = sorted(n for lines in per_task for n in lines)
        self.assertEqual(seen, list(range(1, 61)), "some tuples in no shard or in two")
        self.assertTrue(all(per_task), "a task with an empty shard")

    def test_steps_offsets_and_limits_cover_each_tuple_once(self):
        # 0-10:2 is the array: tasks 6, 8 and 10 were refused and
        # shards 1, 3 and 5 never ran.
        for spec in ("0-10:2", "5-9", "0-5%2", "2-11:3%2", "7"):
            with self.subTest(spec=spec):
                indices, _ = slurm_indices(spec)
                self.assert_exactly_once([self.shard_lines(slurm_env(spec, t)) for t in indices])

    def test_older_slurm_without_step_or_max(self):
        # No _STEP: MIN, MAX and COUNT imply it. No _MAX either: a plain range.
        indices, _ = slurm_indices("4-12:4")
        self.assert_exactly_once([self.shard_lines(slurm_env("4-12:4", t, drop=["SLURM_ARRAY_TASK_STEP"]))
                                  for t in indices])
        drop = ["SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_TASK_MAX"]
        self.assert_exactly_once([self.shard_lines(slurm_env("5-7", t, drop=drop)) for t in range(5, 8)])
        # COUNT from --shards when Slurm gives none; it must agree when it does.
        drop = ["SLURM_ARRAY_TASK_COUNT"]
        self.assert_exactly_once([self.shard_lines(slurm_env("0-4:2", t, drop=drop), ["--shards", "3"])
                                  for t in range(0, 5, 2)])

    def refused(self, env, args=()):
        rc, out, err = self.warm(["--shard", "auto"] + list(args), env)
        self.assertEqual(rc, 2, (env, args, err))
        return err

    def test_bad_values_name_the_variable(self):
        for bad in ("-1", "abc", " 1", "1 ", "+1", "0x1"):
            with self.subTest(task_id=bad):
                err = self.refused(dict(slurm_env("0-3", 0), SLURM_ARRAY_TASK_ID=bad))
                self.assertIn('SLURM_ARRAY_TASK_ID is "%s"' % bad, err)
                self.assertNotIn("no job index", err)
        for name in ("SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP"):
            with self.subTest(name=name):
                err = self.refused(dict(slurm_env("0-3", 0), **{name: "abc"}))
                self.assertIn('%s is "abc"' % name, err)
        for bad in ("0", "-2"):   # a step or count of 0 is no array
            with self.subTest(step=bad):
                self.assertIn("SLURM_ARRAY_TASK_STEP", self.refused(dict(slurm_env("0-3", 0), SLURM_ARRAY_TASK_STEP=bad)))
        err = self.refused({"JOB_COMPLETION_INDEX": "-1"}, ["--shards", "2"])
        self.assertIn('JOB_COMPLETION_INDEX is "-1"', err)
        self.assertIn("no job index is set", self.refused({}))

    def test_arrays_that_give_no_rank_are_refused(self):
        # A task off the range's grid, or outside it.
        self.assertIn("task 3 is not in the array 0-10:2", self.refused(slurm_env("0-10:2", 3)))
        self.assertIn("task 12 is not in the array 0-10:2", self.refused(slurm_env("0-10:2", 12)))
        # Listed indices (--array=1,2,7): MIN..MAX by STEP is not the array.
        env = {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7",
               "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": "3"}
        self.assertIn("listed indices", self.refused(env))
        # --shards larger than the array would leave shards no task runs.
        self.assertIn("disagrees", self.refused(slurm_env("0-3", 0), ["--shards", "6"]))

    def test_ci_parallel_jobs_cover_each_tuple_once(self):
        for index, total, base in CI_PAIRS:
            for n in (1, 4):
                with self.subTest(index=index, n=n):
                    self.assert_exactly_once([self.shard_lines({index: str(base + k), total: str(n)})
                                              for k in range(n)])
        # Without the count variable, --shards N gives it.
        self.assert_exactly_once([self.shard_lines({"CI_NODE_INDEX": str(k)}, ["--shards", "3"]) for k in (1, 2, 3)])

    def test_ci_indices_out_of_range_are_refused(self):
        for index, total, base in CI_PAIRS:
            with self.subTest(index=index):
                err = self.refused({index: str(base + 3), total: "3"})
                self.assertIn("%s %d is not" % (index, base + 3), err)
                self.assertIn('%s is "x"' % total, self.refused({index: str(base), total: "x"}))
                self.assertIn("%s needs %s or --shards N" % (index, total), self.refused({index: str(base)}))
                self.assertIn("disagrees with %s 3" % total, self.refused({index: str(base), total: "3"},
                                                                          ["--shards", "4"]))
                self.assertIn('%s is "0"' % total, self.refused({index: str(base), total: "0"}))
        self.assertIn("CI_NODE_INDEX 0 is not from 1 to 2", self.refused({"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "2"}))
        # A Slurm array task inside a CI job: Slurm's index wins.
        env = dict(slurm_env("0-1", 1), CI_NODE_INDEX="1", CI_NODE_TOTAL="2")
        self.assertEqual(self.shard_lines(env), self.shard_lines(slurm_env("0-1", 1)))

    def test_blanks_around_a_shard_are_refused_alike(self):
        for arg in (" 1/2", "1/2 ", "1 /2", "1/ 2", "\t1/2"):
            with self.subTest(arg=arg):
                rc, out, err = self.warm(["--shard", arg], {})
                self.assertEqual(rc, 2, err)
                self.assertIn("--shard wants K/N", err)
        rc, out, err = self.warm(["--shard", "1/2"], {})
        self.assertIn(rc, (0, 3), err)
        rc, out, err = self.warm(["--shard", "auto", "--shards", " 2"], {"JOB_COMPLETION_INDEX": "0"})
        self.assertEqual(rc, 2, err)


if __name__ == "__main__":
    CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
