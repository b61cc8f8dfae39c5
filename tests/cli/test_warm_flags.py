#!/usr/bin/env python3
"""Flags as people write them (issue 23): the order of -I folders kept in the
key and in warm's build, a space between a flag and its argument, -O ""
the empty set everywhere, a flag missing its argument, devices tied to one
language (scan --language, -d cuda:ID), and NVRTC with the toolkit's
include folders.

Usage: test_warm_flags.py PATH/TO/cckey EXAMPLES_DIR [unittest args]

Oracles: the compilers (PoCL through cckey: a build holds the entry point
only when the header that defines it was the one included; NVRTC likewise,
and the toolkit's own headers on disk), and hashlib for the key recipe.
Tests that need PoCL or NVRTC skip with a one-line reason where absent."""
import hashlib
import json
import os
import sys
import unittest

import clitest

CCKEY = None
EXAMPLES = None
H200 = "NVIDIA H200|580.159.04"


def readb(path):
    with open(path, "rb") as f:
        return f.read()


def run(args, cwd=None, timeout=600):
    return clitest.run(CCKEY, args, cwd, timeout, environ=os.environ)


def opencl_device():
    return clitest.opencl_device(CCKEY)


def nvrtc_here():
    return clitest.load_nvrtc() is not None


def recipe(device, name, source, opts):
    """The key by its definition (hashlib): the oracle for scan's pairs."""
    h = lambda b: hashlib.md5(b).hexdigest()
    canon = ",".join("%s=%s" % (h(k), h(v)) for k, v in sorted(opts, key=lambda kv: kv[0]))
    return ":".join((h(device), h(name), h(source), h(canon.encode())))


summary = clitest.summary


class Tmp(clitest.TmpTest):
    prefix = "cckey-flags-"

    def scan(self, args):
        rc, out, err = run(["scan"] + args, cwd=self.tmp)
        self.assertEqual(rc, 0, err)
        return [json.loads(l) for l in out.splitlines()]

    def warm(self, lines, store="store", fmt=None):
        with open(os.path.join(self.tmp, "m.jsonl"), "w") as f:
            f.write("".join(json.dumps(l) + "\n" for l in lines))
        rc, out, err = run(["warm", "-q", "m.jsonl", "--cache-dir", store] + (["--format", fmt] if fmt else []),
                           cwd=self.tmp)
        return rc, out, err


class IncludeOrder:
    """Case 3: two folders with a different h.h each, given in both orders.
    Each h.h defines a kernel named after its folder, so a build holds
    from_aa only when aa/h.h was the one included."""
    ext = lang = device = opts = None
    kernel = header = ""

    def test_each_order_has_its_key_and_its_build(self):
        for d in ("aa", "zz"):
            self.write(d + "/h.h", self.header % d)
        src = self.write("src/k" + self.ext, '#include "h.h"\n' + self.kernel)
        aa, zz = os.path.join(self.tmp, "aa"), os.path.join(self.tmp, "zz")
        lines = []
        for first, second in ((zz, aa), (aa, zz)):
            got = self.scan(["src", "-d", self.device, "-O", "-I%s -I%s %s" % (first, second, self.opts)])
            self.assertEqual(len(got), 1, got)
            lines.append(dict(got[0], name="from_" + os.path.basename(first)))
        # The keys of both (as entry point k): by the recipe, and not equal.
        with open(os.path.join(self.tmp, "k.jsonl"), "w") as f:
            f.write("".join(json.dumps(dict(l, name="k")) + "\n" for l in lines))
        rc, out, err = run(["batch", "k.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 0, err)
        keys = out.split()
        self.assertNotEqual(keys[0], keys[1], "the two -I orders must not share a key")
        rc, out, err = self.warm(lines)
        self.assertEqual((rc, summary(out)), (0, (2, 0, 0)), err)
        self.assertEqual([l["options"][:2] for l in lines], [[["-I", zz], ["-I", aa]], [["-I", aa], ["-I", zz]]])
        source = readb(src)
        for key, line in zip(keys, lines):
            self.assertEqual(key, recipe(self.device.encode(), b"k", source,
                                         [(k.encode(), v.encode()) for k, v in line["options"]]))


class IncludeOrderOpenCL(IncludeOrder, Tmp):
    ext, opts = ".cl", "-cl-mad-enable"
    header = "__kernel void from_%s(__global int *o) { o[0] = 1; }\n"
    kernel = "__kernel void k(__global int *o) { o[0] = 0; }\n"

    def setUp(self):
        self.device = clitest.opencl_or_skip(CCKEY)
        super().setUp()


class IncludeOrderCUDA(IncludeOrder, Tmp):
    ext, opts = ".cu", "arch=sm_90"
    header = 'extern "C" __global__ void from_%s(int *o) { o[0] = 1; }\n'
    kernel = 'extern "C" __global__ void k(int *o) { o[0] = 0; }\n'
    device = H200

    def setUp(self):
        if not nvrtc_here():
            self.skipTest("NVRTC (libnvrtc.so) not installed")
        super().setUp()


class SpacedFlags(Tmp):
    """Case 4: a space between a flag and its argument."""

    def setUp(self):
        self.device = clitest.opencl_or_skip(CCKEY)
        super().setUp()

    def test_define_and_include_with_a_space_build(self):
        self.write("inc/s.h", "#define OFFSET 1\n")
        self.write("src/s.cl", '#include "s.h"\n__kernel void s(__global float *o) { o[0] = SCALE + OFFSET; }\n')
        self.write("other/o.h", "\n")
        inc, other = os.path.join(self.tmp, "inc"), os.path.join(self.tmp, "other")
        got = self.scan(["src", "-d", self.device, "-O", "-D SCALE=3 -cl-mad-enable -I " + inc,
                         "-O", "-I %s -I %s -D SCALE=3" % (other, inc)])
        rc, out, err = self.warm(got)
        self.assertEqual((rc, summary(out)), (0, (2, 0, 0)), err)
        self.assertEqual([l["options"] for l in got], [[["-D", "SCALE=3"], ["-cl-mad-enable", ""], ["-I", inc]],
                                                       [["-I", other], ["-I", inc], ["-D", "SCALE=3"]]])


class EmptySet(Tmp):
    """Case 5: -O "" is the empty set in key as in scan."""

    def test_key_and_scan_agree(self):
        src = self.write("k.cl", "__kernel void k(__global int *o) { o[0] = 0; }\n")
        want = recipe(b"d", b"k", readb(src), [])
        for extra in ([], ["-O", ""], ["-O", " "], ["-O", "-"]):
            rc, out, err = run(["key", "-d", "d", "-n", "k", "-f", src] + extra)
            self.assertEqual((rc, out.strip()), (0, want), (extra, err))
        lines = self.scan(["k.cl", "-d", "d", "-O", ""])
        self.assertEqual(lines[0]["options"], [])
        rc, out, err = run(["key", "-d", "d", "-n", "k", "-f", src, "-O", "''"])
        self.assertEqual(out.strip(), recipe(b"d", b"k", readb(src), [(b"", b"")]), err)


class MissingArgument(Tmp):
    """A flag missing its argument: a usage error in scan and key, a failed
    tuple (never a hit, no entry) in warm, the others going on."""

    def test_scan_and_key_refuse_it(self):
        self.write("k.cl", "__kernel void k(__global int *o) { o[0] = 0; }\n")
        for flags, named in (("-DX -I", "-I"), ("-include", "-include"), ("--pre-include", "--pre-include")):
            rc, out, err = run(["scan", "k.cl", "-d", "d", "-O", flags], cwd=self.tmp)
            self.assertEqual((rc, out), (2, ""), flags)
            self.assertIn(named + " needs an argument", err)
            rc, out, err = run(["key", "-d", "d", "-n", "k", "-s", "s", "-O", flags])
            self.assertEqual((rc, out), (2, ""), flags)
            self.assertIn(named + " needs an argument", err)
        rc, out, err = run(["scan", "k.cl", "-d", "d", "-O", "-UX -DX"], cwd=self.tmp)
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("other order", err)

    def test_warm_fails_that_tuple_alone_and_never_serves_it(self):
        device = opencl_device()
        if not device:
            self.skipTest("no OpenCL device (PoCL) here")
        src = self.write("k.cl", "__kernel void k(__global int *o) { o[0] = 0; }\n")
        good = {"device": device, "name": "k", "source_file": "k.cl", "options": [["-D", "X=1"]]}
        bad = [dict(good, options=[["-I", ""]]), dict(good, options=[["-U", "X"], ["-D", "X"]]),
               dict(good, options=[["-Izz", ""], ["-Iaa", ""]])]
        # Entries already under the bad tuples' keys must not be served.
        with open(os.path.join(self.tmp, "k.jsonl"), "w") as f:
            f.write("".join(json.dumps(l) + "\n" for l in bad))
        rc, out, _ = run(["batch", "k.jsonl"], cwd=self.tmp)
        for key in out.split():
            self.assertEqual(run(["cache", "put", key, src, "--cache-dir", "store"], cwd=self.tmp)[0], 0)
        rc, out, err = self.warm([good] + bad, fmt="jsonl")
        self.assertEqual(rc, 1, err)
        res = [json.loads(l) for l in out.splitlines()]
        self.assertEqual([r["result"] for r in res], ["compiled", "failed", "failed", "failed"], out)
        self.assertIn("-I needs an argument", res[1]["error"])
        self.assertIn("other order", res[2]["error"])
        self.assertIn("other order", res[3]["error"])
        self.assertTrue(all(r["status"] == "miss" for r in res), out)


@unittest.skipUnless(nvrtc_here(), "NVRTC (libnvrtc.so) not installed")
class ToolkitHeaders(Tmp):
    """Case 7: NVRTC finds the toolkit's headers, and says where."""

    def test_cooperative_groups_compiles_and_jsonl_names_the_folders(self):
        self.write("cg/cg.cu", "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
                   'extern "C" __global__ void cgk(int *o) { o[cg::this_thread_block().thread_rank()] = 1; }\n')
        lines = self.scan(["cg", "-d", "cuda:" + H200, "-O", "arch=sm_90"])
        self.assertEqual([l["name"] for l in lines], ["cgk"])
        rc, out, err = self.warm(lines, fmt="jsonl")
        self.assertEqual(rc, 0, err)
        res = json.loads(out)
        self.assertEqual(res["result"], "compiled")
        inc = res["toolkit_include"]
        self.assertTrue(inc and os.path.isfile(os.path.join(inc[0], "cooperative_groups.h")), inc)
        self.assertTrue(all(os.path.isdir(d) for d in inc), inc)


class OneLanguageDevices(Tmp):
    """Case 10: -d cuda:ID and --language, on the example suite."""

    def test_prefix_ties_the_device_and_keeps_its_identity(self):
        kernels = os.path.join(EXAMPLES, "kernels")
        rc, listed, _ = run(["scan", "--list", "--format", "jsonl", kernels])
        cuda = [json.loads(l)["name"] for l in listed.splitlines() if json.loads(l)["language"] == "cuda"]
        lines = self.scan([kernels, "-d", "cuda:" + H200, "-O", "arch=sm_90", "-q"])
        self.assertEqual([l["name"] for l in lines], cuda)
        self.assertTrue(all(l["device"] == H200 and l["language"] == "cuda" for l in lines), lines)
        self.assertEqual(self.scan([kernels, "--language", "cuda", "-d", H200]), [dict(l, options=[]) for l in lines])
        both = self.scan([kernels, "-d", "opencl,cuda:x", "-d", ":cuda:0", "--language", "opencl", "-q"])
        self.assertEqual({l["device"] for l in both}, {"x", "cuda:0"})
        self.assertTrue(all(l["language"] == "opencl" for l in both))
        rc, _, err = run(["scan", kernels, "--language", "cdua"])
        self.assertEqual(rc, 2)
        self.assertIn("did you mean cuda", err)
        if nvrtc_here():
            rc, out, err = self.warm(lines)
            self.assertEqual((rc, summary(out)), (0, (len(cuda), 0, 0)), err)


if __name__ == "__main__":
    CCKEY, EXAMPLES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
