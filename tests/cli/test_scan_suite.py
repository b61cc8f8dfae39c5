#!/usr/bin/env python3
"""The text scan against the compilers, on fixtures in the shapes real suites
have (tests/data/scan_suite): #ifdef/#else duplicated headers, macro-declared
kernels (--kernel-macro), function-like attribute macros, cv-qualifiers in
typedefs, common CUDA/system typedefs, .opencl files, non-ASCII names.

Usage: test_scan_suite.py PATH/TO/cckey FIXTURES_DIR [unittest args]

Oracles: OpenCL: the OpenCL runtime (PoCL) through ctypes, which builds each
file and reports CL_PROGRAM_KERNEL_NAMES; CUDA: `nvcc -ptx`, whose .entry
lines are the kernels' exact (mangled) names. Each oracle skips with a reason
where it is absent. Prints precision and recall over all fixtures."""
import ctypes
import ctypes.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

CCKEY = None
FIXTURES = None
TOTALS = {"tp": 0, "fp": 0, "fn": 0}
MACROS = {"macro_kernels.cl": ["KERNEL_FQ"]}


def scan(path, macros=()):
    args = [CCKEY, "scan", "--list", "--format", "jsonl", path]
    for m in macros:
        args += ["--kernel-macro", m]
    p = subprocess.run(args, capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    names = [json.loads(l)["name"] for l in p.stdout.decode().splitlines() if l.strip()]
    return names, p.stderr.decode("utf-8", "replace")


def nvcc():
    for c in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if c and os.access(c, os.X_OK):
            return c
    return None


def cuda_entries(path):
    """The .entry names nvcc itself emits for path (None when it fails)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.ptx")
        p = subprocess.run([nvcc(), "-ptx", "-arch=sm_90", path, "-o", out], capture_output=True, timeout=300)
        if p.returncode != 0:
            return None
        with open(out) as f:
            return re.findall(r"\.entry\s+([A-Za-z0-9_$]+)\s*\(", f.read())


class OpenCL:
    """Just enough of the OpenCL API to build a program and list its kernels."""

    def __init__(self):
        name = ctypes.util.find_library("OpenCL") or "libOpenCL.so.1"
        self.cl = ctypes.CDLL(name)
        n = ctypes.c_uint()
        plats = (ctypes.c_void_p * 8)()
        if self.cl.clGetPlatformIDs(8, plats, ctypes.byref(n)) != 0 or n.value == 0:
            raise OSError("no OpenCL platform")
        devs = (ctypes.c_void_p * 1)()
        nd = ctypes.c_uint()
        CL_DEVICE_TYPE_ALL = 0xFFFFFFFF
        self.cl.clGetDeviceIDs.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint, ctypes.c_void_p,
                                           ctypes.c_void_p]
        if self.cl.clGetDeviceIDs(plats[0], CL_DEVICE_TYPE_ALL, 1, devs, ctypes.byref(nd)) != 0:
            raise OSError("no OpenCL device")
        self.dev = devs[0]
        err = ctypes.c_int()
        self.cl.clCreateContext.restype = ctypes.c_void_p
        self.ctx = self.cl.clCreateContext(None, 1, devs, None, None, ctypes.byref(err))
        if not self.ctx:
            raise OSError("clCreateContext failed")

    def kernel_names(self, src):
        cl = self.cl
        err = ctypes.c_int()
        s = ctypes.c_char_p(src)
        cl.clCreateProgramWithSource.restype = ctypes.c_void_p
        prog = cl.clCreateProgramWithSource(ctypes.c_void_p(self.ctx), 1, ctypes.byref(s), None, ctypes.byref(err))
        dev = (ctypes.c_void_p * 1)(self.dev)
        if cl.clBuildProgram(ctypes.c_void_p(prog), 1, dev, b"", None, None) != 0:
            cl.clReleaseProgram(ctypes.c_void_p(prog))
            return None
        size = ctypes.c_size_t()
        CL_PROGRAM_KERNEL_NAMES = 0x1168
        cl.clGetProgramInfo(ctypes.c_void_p(prog), CL_PROGRAM_KERNEL_NAMES, 0, None, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        cl.clGetProgramInfo(ctypes.c_void_p(prog), CL_PROGRAM_KERNEL_NAMES, size, buf, None)
        cl.clReleaseProgram(ctypes.c_void_p(prog))
        return [n for n in buf.value.decode().split(";") if n]


def fixture(name):
    return os.path.join(FIXTURES, name)


def tally(found, truth):
    f, t = set(found), set(truth)
    TOTALS["tp"] += len(f & t)
    TOTALS["fp"] += len(f - t)
    TOTALS["fn"] += len(t - f)


class TextScanOpenCL(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            cls.ocl = OpenCL()
        except OSError as e:
            cls.ocl = None
            cls.why = str(e)

    def check(self, name):
        if not self.ocl:
            self.skipTest("no OpenCL runtime: %s" % self.why)
        with open(fixture(name), "rb") as f:
            truth = self.ocl.kernel_names(f.read())
        self.assertIsNotNone(truth, "the fixture builds")
        found, _ = scan(fixture(name), MACROS.get(name, ()))
        tally(found, truth)
        self.assertEqual(sorted(found), sorted(truth))

    def test_duplicated_header_across_ifdef_else(self):
        self.check("dup_header.cl")

    def test_macro_declared_kernels(self):
        self.check("macro_kernels.cl")

    def test_opencl_extension(self):
        self.check("blas.opencl")

    def test_without_kernel_macro_the_file_says_why(self):
        found, err = scan(fixture("macro_kernels.cl"))
        self.assertEqual(found, ["plain"])
        found, err = scan(fixture("blas.opencl"), ["NOT_USED"])
        self.assertEqual(found, ["xaxpy"])
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "none.cl")
            with open(p, "w") as f:
                f.write("#define KQ __kernel\nKQ void hidden(__global int *p) { }\n")
            found, err = scan(p)
            self.assertEqual(found, [])
            self.assertIn("none.cl: no entry points", err)
            self.assertIn("--kernel-macro", err)

    def test_kernel_macro_must_be_an_identifier(self):
        p = subprocess.run([CCKEY, "scan", "--kernel-macro", "9x", FIXTURES], capture_output=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"identifier", p.stderr)


class TextScanCuda(unittest.TestCase):
    def check(self, name):
        if not nvcc():
            self.skipTest("nvcc not installed")
        truth = cuda_entries(fixture(name))
        self.assertIsNotNone(truth, "the fixture compiles")
        found, err = scan(fixture(name))
        tally(found, truth)
        self.assertEqual(sorted(found), sorted(truth), err)

    def test_cv_qualifiers_in_typedefs(self):
        self.check("cv_typedef.cu")

    def test_function_like_attribute_macro(self):
        self.check("attr_macro.cu")

    def test_common_typedefs(self):
        self.check("typedefs.cu")

    def test_non_ascii_names_are_refused(self):
        found, err = scan(fixture("nonascii.cu"))
        self.assertEqual(found, ["_Z11ascii_afterPi"])
        self.assertIn("non-ASCII", err)
        if nvcc():
            # The compiler refuses it too: nothing was guessed.
            self.assertIsNone(cuda_entries(fixture("nonascii.cu")))


def report():
    tp, fp, fn = TOTALS["tp"], TOTALS["fp"], TOTALS["fn"]
    if tp + fp and tp + fn:
        print("text scan on the fixtures: precision %.2f, recall %.2f (%d found, %d wrong, %d missed)"
              % (tp / (tp + fp), tp / (tp + fn), tp, fp, fn))


if __name__ == "__main__":
    CCKEY, FIXTURES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    prog = unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2, exit=False)
    report()
    sys.exit(0 if prog.result.wasSuccessful() else 1)
