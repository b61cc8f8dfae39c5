#!/usr/bin/env python3
"""The CLI as a new user meets it: --version, help, did-you-mean.

Usage: test_adoption.py PATH/TO/cckey [unittest args]"""
import ctypes.util
import json
import os
import subprocess
import sys
import unittest

CCKEY = None


def run(args, stdin=b"", cwd=None, env=None, timeout=60):
    p = subprocess.run([CCKEY] + args, input=stdin, cwd=cwd, env=env, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


class Version(unittest.TestCase):
    def version(self, env=None):
        rc, out, err = run(["--version"], env=env)
        self.assertEqual((rc, err), (0, ""))
        return out

    def test_version_names_format_backends_and_isa(self):
        out = self.version()
        self.assertRegex(out, r"^cckey \d+\.\d+\.\d+ \(key format 1\)\n")
        self.assertRegex(out, r"\nbackends compiled in: cpu( opencl)?( cuda)?\n")
        # The ISA is the one `cckey devices` reports for the CPU backend.
        rc, dev, _ = run(["devices", "--json"])
        self.assertEqual(rc, 0)
        cpu = [b for b in json.loads(dev)["backends"] if b["backend"] == "cpu"][0]
        self.assertIn("\nCPU MD5: %s\n" % cpu["simd"], out)
        self.assertIn("MIT License", out)

    def test_runtime_lines_follow_the_libraries(self):
        out = self.version()
        for what in ("OpenCL", "CUDA", "NVRTC"):
            self.assertRegex(out, r"\n%s: +(loads|does not load: \S.*)\n" % what)
        # A library path that cannot load must say so, with the reason.
        env = dict(os.environ, CCKEY_OPENCL_LIBRARY="/nonexistent/libOpenCL.so.1",
                   CCKEY_CUDA_LIBRARY="/nonexistent/libcuda.so.1", CCKEY_NVRTC_LIBRARY="/nonexistent/libnvrtc.so")
        out = self.version(env)
        if "opencl" in out.split("\n")[1]:
            self.assertRegex(out, r"\nOpenCL: +does not load: .*nonexistent")
        self.assertRegex(out, r"\nCUDA: +does not load: ")
        self.assertRegex(out, r"\nNVRTC: +does not load: ")
        # And where ocl-icd is installed, OpenCL loads (ctypes is the oracle).
        if "opencl" in out.split("\n")[1] and ctypes.util.find_library("OpenCL"):
            try:
                ctypes.CDLL("libOpenCL.so.1")
            except OSError:
                return
            self.assertRegex(self.version(), r"\nOpenCL: +loads\n")


class Help(unittest.TestCase):
    def test_help_command_prints_that_commands_help(self):
        for cmd in ("key", "batch", "scan", "warm", "cache", "devices", "selftest"):
            rc, out, err = run(["help", cmd])
            rc2, out2, _ = run([cmd, "--help"])
            self.assertEqual((rc, err), (0, ""), cmd)
            self.assertEqual(out, out2, cmd)
            self.assertTrue(out.startswith("usage: cckey " + cmd), cmd)
        rc, out, err = run(["help"])
        self.assertEqual(rc, 0)
        self.assertIn("Commands:", out)

    def test_unknown_command_suggests_the_one_edit_away(self):
        for typo, meant in (("bacth", "batch"), ("bach", "batch"), ("kye", "key"), ("scann", "scan"),
                            ("selftets", "selftest"), ("devics", "devices"), ("wram", "warm")):
            rc, out, err = run([typo])
            self.assertEqual((rc, out), (2, ""), typo)
            self.assertEqual(err.count("\n"), 1, err)
            self.assertIn('did you mean "%s"' % meant, err)
        rc, out, err = run(["help", "bacth"])
        self.assertEqual(rc, 2)
        self.assertIn('did you mean "batch"', err)
        # Two edits away, or nothing close: no guess.
        for far in ("btahc", "frobnicate"):
            rc, out, err = run([far])
            self.assertEqual(rc, 2)
            self.assertNotIn("did you mean", err)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_adoption.py PATH/TO/cckey [unittest args]")
    CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
