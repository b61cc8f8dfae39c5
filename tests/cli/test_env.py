#!/usr/bin/env python3
"""The CLI maps the device environment variables onto the batch config (the
library reads none of them): a bad value is named with its variable and
fails before any work; a good one changes how the batch runs, never a key.

Usage: test_env.py PATH/TO/cckey"""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gen_vectors import make_key  # noqa: E402

CCKEY = None
MANIFEST = b"".join(
    json.dumps({"device": "dev%d" % (i % 3), "name": "k%d" % i, "source": "src %d" % (i * 7)}).encode() + b"\n"
    for i in range(200))
WANT = [make_key(b"dev%d" % (i % 3), b"k%d" % i, b"src %d" % (i * 7), []) for i in range(200)]


def run(args, env, stdin=b""):
    full = dict(os.environ)
    for k in list(full):
        if k.startswith("CCKEY_"):
            del full[k]
    full.update(env)
    p = subprocess.run([CCKEY] + args, input=stdin, env=full, capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


class Env(unittest.TestCase):
    def test_bad_values_are_named(self):
        bad = [("CCKEY_GPU_CHUNK_BYTES", "abc"), ("CCKEY_GPU_CHUNK_BYTES", "12x"), ("CCKEY_GPU_CHUNK_BYTES", "-5"),
               ("CCKEY_GPU_CHUNK_BYTES", "0"), ("CCKEY_GPU_CHUNK_BYTES", "4G"),
               ("CCKEY_GPU_CHUNK_BYTES", "99999999999999999999"), ("CCKEY_GPU_LONG_BYTES", "1G"),
               ("CCKEY_GPU_CPU_SHARE", "2"), ("CCKEY_GPU_CPU_SHARE", "yes"), ("CCKEY_GPU_CPU_SHARE", "01"),
               ("CCKEY_OPENCL_DEVICE", "x" * 300)]
        for var, val in bad:
            for cmd in (["batch", "--backend", "cpu"], ["devices"], ["selftest", "--backend", "cpu"]):
                rc, out, err = run(cmd, {var: val}, MANIFEST)
                self.assertEqual(rc, 2, (var, val, cmd, err))
                self.assertIn("%s=%s" % (var, val[:20]), err, (var, val, cmd))
                if cmd[0] == "batch":
                    self.assertEqual(out, "", "no keys after a bad setting")

    def test_good_values_keep_keys(self):
        for env in ({}, {"CCKEY_GPU_CHUNK_BYTES": "64K"}, {"CCKEY_GPU_CHUNK_BYTES": "64", "CCKEY_GPU_LONG_BYTES": "0"},
                    {"CCKEY_GPU_CPU_SHARE": "0"}, {"CCKEY_OPENCL_DEVICE": "0", "CCKEY_CUDA_DEVICE": "0"}):
            for backend in ("cpu", "auto"):
                rc, out, err = run(["batch", "--backend", backend], env, MANIFEST)
                self.assertEqual(rc, 0, (env, err))
                self.assertEqual(out.split(), WANT, env)

    def test_device_selector_reaches_the_listing(self):
        rc, out, err = run(["devices", "--json"], {"CCKEY_OPENCL_DEVICE": "no-such-device-xyz"})
        self.assertEqual(rc, 0, err)
        ocl = [b for b in json.loads(out)["backends"] if b["backend"] == "opencl"][0]
        if not ocl["devices"]:
            self.skipTest("no OpenCL device here: " + ocl.get("reason", ""))
        self.assertFalse(ocl["available"])
        self.assertIn("no-such-device-xyz", ocl["reason"])
        self.assertFalse(any(d["selected"] for d in ocl["devices"]))
        rc, out, err = run(["devices", "--json"], {"CCKEY_OPENCL_DEVICE": str(len(ocl["devices"]) - 1)})
        ocl = [b for b in json.loads(out)["backends"] if b["backend"] == "opencl"][0]
        self.assertTrue(ocl["devices"][-1]["selected"], out)


if __name__ == "__main__":
    CCKEY = sys.argv.pop(1)
    unittest.main()
