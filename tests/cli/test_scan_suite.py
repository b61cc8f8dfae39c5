#!/usr/bin/env python3
"""Both scans against the compilers, on fixtures in the shapes real suites
have (tests/data/scan_suite): #ifdef/#else duplicated headers, macro-declared
kernels (--kernel-macro), function-like attribute macros, cv-qualifiers in
typedefs, common CUDA/system typedefs, .opencl files, non-ASCII names; and,
for `scan --exact`, template instances, namespaces, types from headers,
names pasted by macros, host code; and on the example suite (examples/).

Usage: test_scan_suite.py PATH/TO/cckey FIXTURES_DIR [unittest args]

Oracles: OpenCL: the OpenCL runtime (PoCL) through ctypes, which builds each
file and reports CL_PROGRAM_KERNEL_NAMES; CUDA: `nvcc -ptx`, whose .entry
lines are the kernels' exact (mangled) names. Each oracle skips with a reason
where it is absent. Prints precision and recall of both modes over all
fixtures and the examples."""
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
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "kernels")
TOTALS = {}   # (mode, language) -> {"tp", "fp", "fn"}
MACROS = {"macro_kernels.cl": ["KERNEL_FQ"]}
STRING_HELD = ("strings_blas.opencl", "strings_stringify.cl")   # programs the host holds as strings


def scan(path, macros=(), extra=()):
    args = [CCKEY, "scan", "--list", "--format", "jsonl", path] + list(extra)
    for m in macros:
        args += ["--kernel-macro", m]
    p = subprocess.run(args, capture_output=True, timeout=600)
    assert p.returncode == 0, p.stderr
    names = [json.loads(l)["name"] for l in p.stdout.decode().splitlines() if l.strip()]
    return names, p.stderr.decode("utf-8", "replace")


def nvcc():
    for c in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if c and os.access(c, os.X_OK):
            return c
    return None


_PTX = {}


def cuda_entries(path, flags=(), errors=None):
    """The .entry names nvcc itself emits for path (None when it fails; then
    errors, a list, gets nvcc's messages). Each build once per run."""
    key = (path, tuple(flags))
    if key in _PTX and (_PTX[key] is not None or errors is None):
        return _PTX[key]
    _PTX[key] = _nvcc_entries(path, flags, errors)
    return _PTX[key]


def _nvcc_entries(path, flags, errors):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.ptx")
        p = subprocess.run([nvcc(), "-ptx", "-arch=sm_90"] + list(flags) + [path, "-o", out], capture_output=True,
                           timeout=300)
        if p.returncode != 0:
            if errors is not None:
                errors.append(p.stderr.decode("utf-8", "replace"))
            return None
        with open(out) as f:
            return re.findall(r"\.entry\s+([A-Za-z0-9_$]+)\s*\(", f.read())


def have_nvrtc():
    for n in ("libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so"):
        try:
            ctypes.CDLL(n)
            return True
        except OSError:
            pass
    return False


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

    def kernel_names(self, src, options=b"", log=None):
        """The program's CL_PROGRAM_KERNEL_NAMES; None when it does not build
        (then log, a list, gets the build log)."""
        cl = self.cl
        err = ctypes.c_int()
        s = ctypes.c_char_p(src)
        cl.clCreateProgramWithSource.restype = ctypes.c_void_p
        prog = cl.clCreateProgramWithSource(ctypes.c_void_p(self.ctx), 1, ctypes.byref(s), None, ctypes.byref(err))
        dev = (ctypes.c_void_p * 1)(self.dev)
        if cl.clBuildProgram(ctypes.c_void_p(prog), 1, dev, options, None, None) != 0:
            if log is not None:
                CL_PROGRAM_BUILD_LOG = 0x1183
                n = ctypes.c_size_t()
                cl.clGetProgramBuildInfo(ctypes.c_void_p(prog), ctypes.c_void_p(self.dev), CL_PROGRAM_BUILD_LOG, 0,
                                         None, ctypes.byref(n))
                b = ctypes.create_string_buffer(n.value + 1)
                cl.clGetProgramBuildInfo(ctypes.c_void_p(prog), ctypes.c_void_p(self.dev), CL_PROGRAM_BUILD_LOG,
                                         n, b, None)
                log.append(b.value.decode("utf-8", "replace"))
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


def tally(found, truth, mode="text", lang="?"):
    f, t = set(found), set(truth)
    c = TOTALS.setdefault((mode, lang), {"tp": 0, "fp": 0, "fn": 0})
    c["tp"] += len(f & t)
    c["fp"] += len(f - t)
    c["fn"] += len(t - f)


def suite(exts, without=()):
    """The fixtures and the example kernels with these extensions."""
    out = []
    for d in (FIXTURES, EXAMPLES):
        for root, _, files in os.walk(d):
            out += [os.path.join(root, f) for f in sorted(files)
                    if os.path.splitext(f)[1] in exts and f not in without]
    return sorted(out)


def good_and_bad(tmp, ext, good, bad):
    """Writes good.EXT and bad.EXT in tmp; their paths."""
    paths = []
    for name, text in (("good", good), ("bad", bad)):
        paths.append(os.path.join(tmp, name + ext))
        with open(paths[-1], "w") as f:
            f.write(text)
    return paths


def manifest(args):
    """scan's manifest lines for args, and its standard error."""
    p = subprocess.run([CCKEY, "scan"] + args, capture_output=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()], p.stderr.decode("utf-8", "replace")


class UsesOpenCL:
    """The OpenCL oracle, once per test class; None with why when absent."""

    @classmethod
    def setUpClass(cls):
        try:
            cls.ocl = OpenCL()
        except OSError as e:
            cls.ocl = None
            cls.why = str(e)


class TextScanOpenCL(UsesOpenCL, unittest.TestCase):
    def check(self, name):
        if not self.ocl:
            self.skipTest("no OpenCL runtime: %s" % self.why)
        with open(fixture(name), "rb") as f:
            truth = self.ocl.kernel_names(f.read())
        self.assertIsNotNone(truth, "the fixture builds")
        found, _ = scan(fixture(name), MACROS.get(name, ()))
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


class ExactOpenCL(UsesOpenCL, unittest.TestCase):
    """scan --exact on OpenCL: what the runtime itself reports."""

    def setUp(self):
        if not self.ocl:
            self.skipTest("no OpenCL runtime: %s" % self.why)

    def truth(self, path, options=b""):
        with open(path, "rb") as f:
            return self.ocl.kernel_names(f.read(), options + b" -I" + os.path.dirname(path).encode())

    def test_fixtures_and_examples(self):
        files = suite((".cl", ".opencl"), without=STRING_HELD)
        self.assertGreaterEqual(len(files), 7)
        for path in files:
            with self.subTest(path=os.path.basename(path)):
                truth = self.truth(path)
                self.assertIsNotNone(truth, "the file builds")
                exact, err = scan(path, extra=["--exact"])
                text, _ = scan(path, MACROS.get(os.path.basename(path), ()))
                tally(exact, truth, "exact", "OpenCL")
                tally(text, truth, "text", "OpenCL")
                self.assertEqual(sorted(exact), sorted(truth), err)
                self.assertEqual(len(exact), len(set(exact)), "each entry once")

    def test_macro_pasted_names_that_text_cannot_see(self):
        path = fixture("exact_macros.cl")
        exact, _ = scan(path, extra=["--exact"])
        text, _ = scan(path)
        self.assertEqual(sorted(exact), sorted(self.truth(path)))
        self.assertIn("add_uint", exact)
        self.assertNotIn("add_uint", text)

    def test_each_option_set_gets_its_own_entries(self, exact=True):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sets.cl")
            with open(path, "w") as f:
                f.write("__kernel void always(__global int *p) { p[0] = 1; }\n"
                        "#ifdef WITH_EXTRA\n__kernel void extra(__global int *p) { p[0] = 2; }\n#endif\n"
                        "#if BLOCK > 32\n__kernel void wide(__global int *p) { p[0] = BLOCK; }\n#endif\n")
            sets = ["-DBLOCK=16", "-DWITH_EXTRA,-DBLOCK=16", "-DBLOCK=64"]
            args = (["--exact"] if exact else []) + ["-d", "devA", "-d", "devB", path]
            for s in sets:
                args += ["-O", s]
            lines, _ = manifest(args)
            for s in sets:
                flags = " ".join(s.split(",")).encode()
                truth = self.truth(path, flags)
                pairs = [["-D", f[2:]] for f in s.split(",")]   # -DN=V is the pair ["-D", "N=V"]
                for dev in ("devA", "devB"):
                    got = [l["name"] for l in lines if l["options"] == pairs and l["device"] == dev]
                    self.assertEqual(sorted(got), sorted(truth), s)
            self.assertEqual(len(lines), 2 * (1 + 2 + 2))

    def test_the_text_scan_reads_each_sets_macros(self):
        # The same without --exact: #ifdef and #if see each set's -D.
        self.test_each_option_set_gets_its_own_entries(exact=False)

    def test_a_file_that_does_not_compile_is_a_warning(self):
        with tempfile.TemporaryDirectory() as tmp:
            good, bad = good_and_bad(tmp, ".cl", "__kernel void fine(__global int *p) { p[0] = 1; }\n",
                                     "__kernel void ok(__global int *p) { p[0] = 1; }\n"
                                     "__kernel void broken(__global int *p) { p[0] = undefined_thing; }\n")
            log = []
            with open(bad, "rb") as f:
                self.assertIsNone(self.ocl.kernel_names(f.read(), log=log), "the oracle refuses it too")
            first = next(l for l in log[0].splitlines() if "error" in l)
            # The message, without the name of the runtime's own copy of the file.
            what = re.search(r":\d+:\d+: (.*)", first).group(1).strip()
            p = subprocess.run([CCKEY, "scan", "--exact", "--list", tmp], capture_output=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.decode().split(), [good + ":1:", "fine"])
            err = p.stderr.decode()
            self.assertRegex(err, r"warning: scan: %s: does not compile: .*%s:2:\d+: " % (re.escape(bad), re.escape(bad)))
            self.assertIn(what, err)
            q = subprocess.run([CCKEY, "scan", "--exact", "--list", "-q", tmp], capture_output=True, timeout=300)
            # Nothing at all: PoCL's own "1 error generated." is dropped too.
            self.assertEqual((q.returncode, q.stdout, q.stderr), (0, p.stdout, b""))
            self.assertNotIn("error generated", err)

    def test_same_shape_as_the_text_scan(self):
        # On the examples both scans are right, so the manifests are equal
        # line for line, and --format json carries the same objects.
        d = os.path.join(EXAMPLES, "opencl")
        text, _ = manifest(["-d", "dev", "-O", "", "-O", "-cl-fast-relaxed-math", d])
        exact, _ = manifest(["--exact", "-j", "3", "-d", "dev", "-O", "", "-O", "-cl-fast-relaxed-math", d])
        self.assertEqual(exact, text)
        a = subprocess.run([CCKEY, "scan", "--list", "--format", "json", d], capture_output=True, check=True)
        b = subprocess.run([CCKEY, "scan", "--exact", "--list", "--format", "json", d], capture_output=True,
                           check=True)
        self.assertEqual(json.loads(b.stdout), json.loads(a.stdout))

    def test_the_manifest_feeds_warm(self):
        with tempfile.TemporaryDirectory() as tmp:
            m = os.path.join(tmp, "m.jsonl")
            subprocess.run([CCKEY, "scan", "--exact", fixture("exact_macros.cl"), "-o", m], check=True,
                           capture_output=True, timeout=300)
            with open(m) as f:
                names = [json.loads(l)["name"] for l in f]
            self.assertEqual(sorted(names), sorted(self.truth(fixture("exact_macros.cl"))) * 1)
            p = subprocess.run([CCKEY, "warm", m, "--cache-dir", os.path.join(tmp, "c"), "-q", "--format", "json"],
                               capture_output=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["compiled"], len(names))


class ExactCuda(unittest.TestCase):
    """scan --exact on CUDA: nvcc's (or NVRTC's) .entry names."""

    def setUp(self):
        if not nvcc():
            self.skipTest("nvcc not installed (the oracle)")

    def test_fixtures_and_examples(self):
        files = suite((".cu",), without=("nonascii.cu", "dynpar.cu"))
        self.assertGreaterEqual(len(files), 9)
        for path in files:
            with self.subTest(path=os.path.basename(path)):
                truth = cuda_entries(path)
                self.assertIsNotNone(truth, "the file compiles")
                exact, err = scan(path, extra=["--exact"])
                text, _ = scan(path)
                tally(exact, truth, "exact", "CUDA")
                tally(text, truth, "text", "CUDA")
                self.assertEqual(sorted(exact), sorted(truth), err)

    def test_templates_namespaces_header_types_and_pasted_names(self):
        exact, _ = scan(fixture("exact_templates.cu"), extra=["--exact"])
        self.assertIn("_Z5scaleIdLi4EEvPT_", exact)          # a template instance
        self.assertIn("_ZN7physics4stepEP8Particlef", exact)  # namespace, a type from a header
        self.assertIn("_Z9hash_keysPKyP6float4", exact)       # typedefs from a header
        exact, _ = scan(fixture("exact_host.cu"), extra=["--exact"])
        self.assertEqual(sorted(exact), sorted(cuda_entries(fixture("exact_host.cu"))))
        self.assertEqual(len(exact), 2)   # instantiated by the host code's launches

    def test_nvrtc_without_nvcc(self):
        if not have_nvrtc():
            self.skipTest("NVRTC not installed")
        for name in ("exact_templates.cu", "exact_macros.cu", "cv_typedef.cu", "attr_macro.cu"):
            with self.subTest(name=name):
                got, err = scan(fixture(name), extra=["--exact", "--nvcc", "none"])
                self.assertEqual(sorted(got), sorted(cuda_entries(fixture(name))), err)
        for name in sorted(os.listdir(os.path.join(EXAMPLES, "cuda"))):
            path = os.path.join(EXAMPLES, "cuda", name)
            with self.subTest(name=name):
                got, err = scan(path, extra=["--exact", "--nvcc", "none"])
                self.assertEqual(sorted(got), sorted(cuda_entries(path)), err)
        # Host code: NVRTC cannot, and says so, naming the file.
        got, err = scan(fixture("exact_host.cu"), extra=["--exact", "--nvcc", "none"])
        self.assertEqual(got, [])
        self.assertIn("exact_host.cu: does not compile: ", err)
        self.assertIn("cstdio", err)

    def test_a_file_that_does_not_compile_is_a_warning(self):
        with tempfile.TemporaryDirectory() as tmp:
            good, bad = good_and_bad(tmp, ".cu", 'extern "C" __global__ void fine(int *p) { p[0] = 1; }\n',
                                     "__global__ void ok(int *p) { p[0] = 1; }\n"
                                     "__global__ void broken(int *p) { p[0] = undefined_thing; }\n"
                                     "__global__ void worse(int *p) { p[0] = also_undefined; }\n")
            errors = []
            self.assertIsNone(cuda_entries(bad, errors=errors))
            first = next(l for l in errors[0].splitlines() if "error" in l).strip()
            self.assertIn("undefined_thing", first)
            p = subprocess.run([CCKEY, "scan", "--exact", "--list", tmp], capture_output=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.decode().split(), [good + ":1:", "fine"])
            err = p.stderr.decode()
            self.assertIn("scan: %s: does not compile: %s" % (bad, first), err)
            self.assertNotIn("also_undefined", err)   # the first error only

    def test_jobs_do_not_change_the_output(self):
        args = [CCKEY, "scan", "--exact", "-d", "d", "-O", "", "-O", "-DTILE=8", EXAMPLES, fixture("exact_macros.cu")]
        one = subprocess.run(args + ["-j", "1"], capture_output=True, timeout=600)
        four = subprocess.run(args + ["-j", "4"], capture_output=True, timeout=600)
        self.assertEqual(one.returncode, 0, one.stderr)
        self.assertEqual((four.returncode, four.stdout, four.stderr), (0, one.stdout, one.stderr))
        self.assertEqual(len(one.stdout.splitlines()), 2 * (12 + 4))


def listed(path, extra=()):
    """`scan --list --format jsonl` objects for path, and standard error."""
    p = subprocess.run([CCKEY, "scan", "--list", "--format", "jsonl", path] + list(extra), capture_output=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    return [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()], p.stderr.decode("utf-8", "replace")


def line_of(path, text):
    """The 1-based line of the first line of path holding text."""
    with open(path) as f:
        return next(i for i, l in enumerate(f, 1) if text in l)


def host_strings(path, names=None):
    """The strings a host program gets, decoded by the host C++ compiler
    itself: the file included as one expression (names None; MSTRINGIFY
    defined as the suites define it), or the file's variables `names`."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise unittest.SkipTest("no host C++ compiler (the oracle for decoded strings)")
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "decode.cpp")
        with open(prog, "w") as f:
            if names is None:
                f.write('#include <cstdio>\n#define MSTRINGIFY(...) #__VA_ARGS__\nstatic const char *s[] = {\n'
                        '#include "%s"\n};\n' % path)
            else:
                f.write('#include <cstdio>\n#include "%s"\nstatic const char *s[] = {%s};\n' % (path, ", ".join(names)))
            f.write("int main() { for (const char *p : s) fwrite(p, 1, __builtin_strlen(p) + 1, stdout); }\n")
        exe = os.path.join(tmp, "decode")
        subprocess.run([cxx, "-std=c++17", "-w", "-o", exe, prog], check=True, capture_output=True)
        return subprocess.run([exe], capture_output=True, check=True).stdout.split(b"\0")[:-1]


class StringHeldPrograms(UsesOpenCL, unittest.TestCase):
    """Programs kept as strings (raw strings, literals, MSTRINGIFY): the
    text scan lists the kernels PoCL finds in the very string the host
    passes to clCreateProgramWithSource, at their lines in the file, and
    the manifest carries that string as the entry's source."""

    def setUp(self):
        if not self.ocl:
            self.skipTest("no OpenCL runtime: %s" % self.why)

    def check(self, name, programs):
        path = fixture(name)
        truth = {}
        for prog in programs:
            for k in self.ocl.kernel_names(prog) or []:
                truth[k] = prog
        found, err = listed(path)
        self.assertEqual(sorted(e["name"] for e in found), sorted(truth), err)
        for e in found:
            self.assertEqual(e["line"], line_of(path, "void " + e["name"] + "("), e)
        for exact in ([], ["--exact"]):   # --exact builds each decoded string on the device
            lines, _ = manifest(exact + ["-d", "dev", path])
            self.assertEqual(sorted(l["name"] for l in lines), sorted(truth), exact)
            for l in lines:
                self.assertNotIn("source_file", l)
                self.assertEqual(l["source"].encode(), truth[l["name"]], l["name"])
        return found, err

    def test_raw_string_file(self):
        self.check("strings_blas.opencl", host_strings(fixture("strings_blas.opencl")))

    def test_programs_in_host_code(self):
        progs = host_strings(fixture("strings_host.cpp"), ["kFill", "kAxpy", "kNeg", "kHelp"])
        found, _ = self.check("strings_host.cpp", progs)
        self.assertEqual(len(found), 3)

    def test_stringified_file_with_host_and_device_directives(self):
        path = fixture("strings_stringify.cl")
        (prog,) = host_strings(path)
        truth = self.ocl.kernel_names(prog)
        self.assertIn("host_kept", truth)
        self.assertNotIn("host_dropped", truth)   # the host's #ifdef decided
        found, err = listed(path)
        names = [e["name"] for e in found]
        self.assertLessEqual(set(names), set(truth), "nothing the device does not have")
        # peak_double is under cl_khr_fp64, which only the device knows.
        self.assertEqual(sorted(names), ["host_kept", "peak_float"])
        exact, _ = scan(path, extra=["--exact"])   # the device decides cl_khr_fp64
        self.assertEqual(sorted(exact), sorted(truth))
        for missed in set(truth) - set(names):
            self.assertRegex(err, r"strings_stringify\.cl:%d: %s: .*--exact" % (
                line_of(path, "void %s(" % missed), missed))

    def test_the_manifest_warms_the_string(self):
        with tempfile.TemporaryDirectory() as tmp:
            m = os.path.join(tmp, "m.jsonl")
            subprocess.run([CCKEY, "scan", fixture("strings_host.cpp"), "-o", m], check=True, capture_output=True,
                           timeout=300)
            p = subprocess.run([CCKEY, "warm", m, "--cache-dir", os.path.join(tmp, "c"), "-q", "--format", "json"],
                               capture_output=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["compiled"], 3)


class TextScanCudaSuite(unittest.TestCase):
    """CUDA kernels in the shapes samples have, against `nvcc -ptx`."""

    def setUp(self):
        if not nvcc():
            self.skipTest("nvcc not installed (the oracle)")

    def test_header_types_library_types_conditions_and_templates(self):
        # Types and macros from included headers, cuRAND/cuFFT/cuComplex and
        # runtime types, #if in a parameter list, template instances from an
        # explicit instantiation, launches, a host template and defaults.
        truth = cuda_entries(fixture("suite_app.cu"))
        self.assertIsNotNone(truth, "the fixture compiles")
        found, err = scan(fixture("suite_app.cu"))
        self.assertEqual(sorted(found), sorted(truth), err)
        self.assertEqual(err, "")

    def test_what_it_cannot_name_is_a_warning_not_a_guess(self):
        truth = cuda_entries(fixture("suite_unsure.cu"))
        self.assertIsNotNone(truth, "the fixture compiles")
        found, err = scan(fixture("suite_unsure.cu"))
        self.assertEqual(found, ["_Z5plainPi"])
        self.assertEqual(len(truth), 5)
        for kernel in ("hidden", "deduced", "pasted", "runtime_version"):
            self.assertRegex(err, r"suite_unsure\.cu:%d: %s: .*use --exact" % (
                line_of(fixture("suite_unsure.cu"), "void %s(" % kernel), kernel))

    def test_a_header_kernel_is_its_units_and_says_where(self):
        found, _ = listed(fixture("suite_app.cu"))
        blend = [e for e in found if e["source_name"] == "blend"]
        self.assertEqual(len(blend), 1)
        self.assertEqual(blend[0]["file"], fixture("suite_app.cu"))
        self.assertEqual(blend[0]["defined_in"], fixture("suite_kernels.h"))
        self.assertEqual(blend[0]["line"], line_of(fixture("suite_kernels.h"), "void blend("))
        # Named on its own, the .h is read as CUDA.
        alone, _ = scan(fixture("suite_kernels.h"))
        self.assertEqual(alone, [blend[0]["name"]])

    def test_exact_credits_the_compiled_file(self):
        # A folder with the unit and its headers: each kernel once, for the
        # file nvcc compiled, with the header it is defined in.
        with tempfile.TemporaryDirectory() as tmp:
            for name in ("suite_app.cu", "suite_types.cuh", "suite_kernels.h"):
                shutil.copy(fixture(name), tmp)
            found, err = listed(tmp, ["--exact"])
            names = [e["name"] for e in found]
            self.assertEqual(sorted(names), sorted(cuda_entries(fixture("suite_app.cu"))), err)
            self.assertEqual({e["file"] for e in found}, {os.path.join(tmp, "suite_app.cu")})
            blend = next(e for e in found if e["source_name"] == "blend")
            self.assertEqual(blend["defined_in"], os.path.join(tmp, "suite_kernels.h"))
            p = subprocess.run([CCKEY, "scan", "--exact", "--list", tmp], capture_output=True, timeout=300)
            self.assertIn(b" (blend) in " + os.path.join(tmp, "suite_kernels.h").encode(), p.stdout)

    def test_exact_builds_dynamic_parallelism_with_rdc(self):
        path = fixture("dynpar.cu")
        self.assertIsNone(cuda_entries(path), "it needs -rdc=true")
        truth = cuda_entries(path, ["-rdc=true"])
        found, err = scan(path, extra=["--exact"])
        self.assertEqual(sorted(found), sorted(truth), err)
        self.assertIn("dynpar.cu: launches kernels from device code", err)
        self.assertIn("-rdc=true", err)


class ExactNoKernels(UsesOpenCL, unittest.TestCase):
    def test_a_program_without_kernels_names_nothing(self):
        # PoCL reports a name size of 1 for it and writes no byte there.
        if not self.ocl:
            self.skipTest("no OpenCL runtime: %s" % self.why)
        path = fixture("no_kernels.cl")
        with open(path, "rb") as f:
            self.assertEqual(self.ocl.kernel_names(f.read()), [])
        for args in (["--list"], ["-d", "dev"], ["--list", "--format", "json"]):
            p = subprocess.run([CCKEY, "scan", "--exact"] + args + [path], capture_output=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout.strip(), b"[]" if "json" in args else b"", args)
            self.assertIn(b"no_kernels.cl: the compiler reports no entry points", p.stderr)


def report():
    rows = []
    for mode in ("text", "exact"):
        for lang in ("OpenCL", "CUDA", "all"):
            keys = [k for k in TOTALS if k[0] == mode and (lang == "all" or k[1] == lang)]
            tp, fp, fn = (sum(TOTALS[k][x] for k in keys) for x in ("tp", "fp", "fn"))
            if tp + fp and tp + fn:
                rows.append("| %s | %s | %.2f | %.2f | %d | %d | %d |"
                            % (mode, lang, tp / (tp + fp), tp / (tp + fn), tp, fp, fn))
    if rows:
        print("precision and recall on the fixtures and examples, against the compilers:")
        print("| mode | language | precision | recall | right | wrong | missed |")
        print("|---|---|---|---|---|---|---|")
        print("\n".join(rows))


if __name__ == "__main__":
    CCKEY, FIXTURES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    prog = unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2, exit=False)
    report()
    sys.exit(0 if prog.result.wasSuccessful() else 1)
