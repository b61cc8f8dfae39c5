#!/usr/bin/env python3
"""Text-scan accuracy of `cckey scan` on a kernel suite, against the compilers.

Usage: bench/scan_accuracy.py SUITE_DIR [--cckey PATH] [--kernel-macro NAME]...
           [--options-file F] [--sample K] [--jobs N] [--show N]

The ground truth is built here, by the toolchains themselves:
  OpenCL (.cl .ocl .clc .opencl): PoCL's CL_PROGRAM_KERNEL_NAMES, through
    ctypes. A file that is a stringified program (MSTRINGIFY(...), a C++ raw
    string R"(...)", or adjacent string literals) is first turned into the
    string a host program would hand to clCreateProgramWithSource by the host
    C++ compiler itself (g++ compiles `const char *s = <the file>;` and prints
    s), and that string is built.
  CUDA (.cu .cuh): the .entry names of `nvcc -x cu -ptx`, retried with
    -rdc=true when the file launches kernels from the device.
A compilation unit is every kernel file that no other file of the suite
includes (a header included by a unit is compiled as part of it). Units that
do not compile are not measured (listed with the first error).

Per unit, the names `cckey scan --list --format jsonl` gives for it are
compared with the truth: precision = found-and-true / found, recall =
found-and-true / true. Misses and false positives are printed by category.

SUITE_DIR/bench-options.txt (optional, or --options-file): lines
"GLOB<TAB>FLAGS" giving the build flags of the files whose path (relative to
SUITE_DIR) matches GLOB, as the suite's host code passes them (e.g. Rodinia's
-DBLOCK_SIZE=16); "*" matches every file; {root} stands for SUITE_DIR. The
oracle gets all the flags; `cckey scan` gets the -D/-U ones as its option set
(-O), as a user scanning for that build would pass them, so units are
scanned in groups of equal flags.
"""
import argparse
import concurrent.futures
import ctypes
import ctypes.util
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict

OPENCL_EXT = (".cl", ".ocl", ".clc", ".opencl")
CUDA_EXT = (".cu", ".cuh")
HEADER_EXT = (".h", ".hpp", ".cuh", ".cu", ".cl", ".opencl")
INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def nvcc_path():
    for c in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if c and os.access(c, os.X_OK):
            return c
    return None


# ---- OpenCL oracle -----------------------------------------------------------

class OpenCL:
    """Builds a program on the first OpenCL device and lists its kernels."""

    def __init__(self):
        self.cl = ctypes.CDLL(ctypes.util.find_library("OpenCL") or "libOpenCL.so.1")
        cl = self.cl
        for f in ("clCreateContext", "clCreateProgramWithSource"):
            getattr(cl, f).restype = ctypes.c_void_p
        cl.clGetDeviceIDs.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint, ctypes.c_void_p,
                                      ctypes.c_void_p]
        plats, n = (ctypes.c_void_p * 8)(), ctypes.c_uint()
        if cl.clGetPlatformIDs(8, plats, ctypes.byref(n)) != 0 or n.value == 0:
            raise OSError("no OpenCL platform")
        devs = (ctypes.c_void_p * 1)()
        if cl.clGetDeviceIDs(plats[0], 0xFFFFFFFF, 1, devs, None) != 0:
            raise OSError("no OpenCL device")
        self.dev = devs[0]
        err = ctypes.c_int()
        self.ctx = cl.clCreateContext(None, 1, devs, None, None, ctypes.byref(err))
        if not self.ctx:
            raise OSError("clCreateContext failed")

    def info(self, prog, what):
        size = ctypes.c_size_t()
        self.cl.clGetProgramInfo(ctypes.c_void_p(prog), what, 0, None, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value + 1)
        self.cl.clGetProgramInfo(ctypes.c_void_p(prog), what, size, buf, None)
        return buf

    def kernel_names(self, src, options):
        """(names, None) or (None, the first error line of the build log)."""
        cl = self.cl
        s, err = ctypes.c_char_p(src), ctypes.c_int()
        prog = cl.clCreateProgramWithSource(ctypes.c_void_p(self.ctx), 1, ctypes.byref(s), None, ctypes.byref(err))
        dev = (ctypes.c_void_p * 1)(self.dev)
        if cl.clBuildProgram(ctypes.c_void_p(prog), 1, dev, options.encode(), None, None) != 0:
            n = ctypes.c_size_t()
            cl.clGetProgramBuildInfo(ctypes.c_void_p(prog), ctypes.c_void_p(self.dev), 0x1183, 0, None,
                                     ctypes.byref(n))
            log = ctypes.create_string_buffer(n.value + 1)
            cl.clGetProgramBuildInfo(ctypes.c_void_p(prog), ctypes.c_void_p(self.dev), 0x1183, n, log, None)
            cl.clReleaseProgram(ctypes.c_void_p(prog))
            return None, first_error(log.value.decode("utf-8", "replace"))
        count = ctypes.c_size_t()
        cl.clGetProgramInfo(ctypes.c_void_p(prog), 0x1167, ctypes.sizeof(count), ctypes.byref(count), None)
        names = self.info(prog, 0x1168).value.decode() if count.value else ""
        cl.clReleaseProgram(ctypes.c_void_p(prog))
        return [x for x in names.split(";") if x], None


_ocl = None


def opencl_job(args):
    """In a worker process: (path, names, error)."""
    global _ocl
    path, src, options = args
    if _ocl is None:
        os.environ.setdefault("POCL_KERNEL_CACHE", "0")
        _ocl = OpenCL()
    names, err = _ocl.kernel_names(src, options)
    return path, names, err


def first_error(log):
    lines = [l.strip() for l in log.splitlines() if l.strip()]
    for l in lines:
        if "error" in l:
            return l[:300]
    return lines[0][:300] if lines else "failed"


STRINGIFIED = re.compile(r'\A\s*(?:(?://[^\n]*\n|/\*.*?\*/)\s*)*(?:[A-Za-z_]\w*\s*\(|u8R"|[LuU]?R"|")', re.S)


def host_decode(path, cxx):
    """The program text a host program gets from the stringified file at
    path, as the host compiler makes it; None when it is not stringified."""
    with open(path, "rb") as f:
        head = f.read(4096).decode("utf-8", "replace")
    m = STRINGIFIED.match(head)
    if not m or re.match(r"\A\s*(?:(?://[^\n]*\n|/\*.*?\*/)\s*)*(?:__kernel|kernel|typedef|struct|void|inline)\b",
                         head, re.S):
        return None
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "decode.cpp")
        with open(prog, "w") as f:
            f.write('#include <cstdio>\n#define MSTRINGIFY(...) #__VA_ARGS__\n#define STRINGIFY(...) #__VA_ARGS__\n'
                    'static const char *s =\n#include "%s"\n;\nint main() { fputs(s, stdout); return 0; }\n' % path)
        exe = os.path.join(tmp, "decode")
        p = subprocess.run([cxx, "-std=c++17", "-w", "-o", exe, prog], capture_output=True)
        if p.returncode != 0:
            return None
        return subprocess.run([exe], capture_output=True, check=True).stdout


# ---- CUDA oracle -------------------------------------------------------------

def cuda_job(args):
    path, flags, nvcc = args
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "k.ptx")
        base = [nvcc, "-x", "cu", "-ptx", "-arch=sm_90"] + flags
        p = subprocess.run(base + [path, "-o", out], capture_output=True, timeout=600)
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 0 and "separate compilation" in err:
            p = subprocess.run(base + ["-rdc=true", path, "-o", out], capture_output=True, timeout=600)
            err = p.stderr.decode("utf-8", "replace")
        if p.returncode != 0:
            return path, None, first_error(err)
        with open(out) as f:
            return path, re.findall(r"\.entry\s+([A-Za-z0-9_$]+)\s*\(", f.read()), None


# ---- the suite ----------------------------------------------------------------

def suite_files(root):
    out = []
    for d, dirs, files in os.walk(root, followlinks=True):
        dirs[:] = sorted(x for x in dirs if not x.startswith("."))
        out += [os.path.join(d, f) for f in sorted(files) if not f.startswith(".")]
    return out


def included_files(files):
    """Paths some file of the suite includes with #include "..." (resolved
    beside the including file)."""
    inc = set()
    for path in files:
        if not path.endswith(HEADER_EXT + (".c", ".cpp")):
            continue
        try:
            with open(path, "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            continue
        for name in INCLUDE_RE.findall(text):
            inc.add(os.path.realpath(os.path.join(os.path.dirname(path), name)))
    return inc


def read_flags(root, options_file):
    path = options_file or os.path.join(root, "bench-options.txt")
    rules = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    glob, _, flags = line.rstrip("\n").partition("\t")
                    rules.append((glob.strip(), shlex.split(flags.replace("{root}", root))))
    return lambda rel: [x for g, fl in rules if fnmatch.fnmatch(rel, g) for x in fl]


def ground_truth(root, args):
    files = suite_files(root)
    covered = included_files(files)
    flags_for = read_flags(root, args.options_file)
    ocl_jobs, cuda_jobs, units = [], [], {}
    nvcc, cxx = nvcc_path(), shutil.which("g++") or shutil.which("c++")
    common = [d for d in ("Common", "common", "include") if os.path.isdir(os.path.join(root, d))]
    for path in files:
        real = os.path.realpath(path)
        ext = os.path.splitext(path)[1]
        if real in covered or ext not in OPENCL_EXT + CUDA_EXT:
            continue
        rel = os.path.relpath(path, root)
        fl = flags_for(rel)
        units[real] = rel
        if ext in OPENCL_EXT:
            src = host_decode(real, cxx) if cxx else None
            if src is None:
                with open(real, "rb") as f:
                    src = f.read()
            # clBuildProgram splits options at blanks and knows no sh quoting
            opts = " ".join('"%s"' % x if " " in x else x for x in fl + ["-I", os.path.dirname(real), "-cl-opt-disable"])
            ocl_jobs.append((real, src, opts))
        elif nvcc:
            inc = ["-I" + os.path.dirname(real)] + ["-I" + os.path.join(root, d) for d in common]
            cuda_jobs.append((real, inc + fl, nvcc))
    if args.sample > 1:
        ocl_jobs = ocl_jobs[::args.sample]
        cuda_jobs = cuda_jobs[::args.sample]
        kept = {j[0] for j in ocl_jobs + cuda_jobs}
        units = {k: v for k, v in units.items() if k in kept}
    truth, failed = {}, {}
    with concurrent.futures.ProcessPoolExecutor(args.jobs) as pool:
        for path, names, err in list(pool.map(opencl_job, ocl_jobs)) + list(pool.map(cuda_job, cuda_jobs)):
            if names is None:
                failed[path] = err
            else:
                truth[path] = names
    return units, truth, failed, flags_for


def macro_flags(flags):
    """The -D/-U flags of a flag list, each one word ("-D", "N=1" -> "-DN=1")."""
    out, it = [], iter(flags)
    for f in it:
        if f in ("-D", "-U"):
            out.append(f + next(it, ""))
        elif f.startswith(("-D", "-U")):
            out.append(f)
    return tuple(out)


def text_scan(root, units, flags_for, args):
    """The names `cckey scan --list` gives per unit; units with the same
    -D/-U flags are scanned together, with those flags as the option set."""
    groups = defaultdict(list)
    for real, rel in sorted(units.items()):
        groups[macro_flags(flags_for(rel))].append(real)
    found, warnings = defaultdict(list), []
    for macros, paths in sorted(groups.items()):
        cmd = [args.cckey, "scan", "--list", "--format", "jsonl"]
        if macros:
            cmd += ["-O", ",".join(shlex.quote(m) for m in macros)]
        for m in args.kernel_macro:
            cmd += ["--kernel-macro", m]
        p = subprocess.run(cmd + ["--"] + paths, capture_output=True, timeout=3600)
        if p.returncode != 0:
            sys.exit("cckey scan failed: %s" % p.stderr.decode("utf-8", "replace"))
        for line in p.stdout.decode().splitlines():
            if line.strip():
                e = json.loads(line)
                f = e["file"] if os.path.isabs(e["file"]) else os.path.join(os.getcwd(), e["file"])
                found[os.path.realpath(f)].append(e["name"])
        warnings += p.stderr.decode("utf-8", "replace").splitlines()
    return found, warnings


def demangle(names):
    if not names or not shutil.which("c++filt"):
        return {n: n for n in names}
    p = subprocess.run(["c++filt"], input="\n".join(names).encode(), capture_output=True)
    return dict(zip(names, p.stdout.decode().splitlines()))


def category(name, pretty, lang, truth_idents):
    if lang == "OpenCL":
        return "OpenCL kernel"
    ident = re.sub(r"[<(].*", "", pretty).split("::")[-1]
    if name.startswith(("_ZN3cub", "_ZN6thrust")):
        return "library kernel (Thrust/CUB)"
    if "<" in pretty:
        return "template instance"
    if name.startswith("_Z"):
        return "C++ name" if ident in truth_idents else "C++ name, no such kernel"
    return "extern \"C\" name"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("suite")
    ap.add_argument("--cckey", default=os.path.join(os.path.dirname(__file__), "..", "build", "cckey"))
    ap.add_argument("--kernel-macro", action="append", default=[])
    ap.add_argument("--options-file")
    ap.add_argument("--sample", type=int, default=1, help="measure every K-th unit only (for large suites)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--show", type=int, default=40, help="misses / false positives to print per category")
    args = ap.parse_args()
    root = os.path.realpath(args.suite)
    units, truth, failed, flags_for = ground_truth(root, args)
    found, warnings = text_scan(root, units, flags_for, args)
    totals = defaultdict(Counter)
    misses, fps = defaultdict(list), defaultdict(list)
    all_names = sorted({n for v in list(truth.values()) + list(found.values()) for n in v})
    pretty = demangle(all_names)
    for path, t in sorted(truth.items()):
        lang = "OpenCL" if path.endswith(OPENCL_EXT) else "CUDA"
        f, tset = set(found.get(path, [])), set(t)
        idents = {re.sub(r"[<(].*", "", pretty[n]).split("::")[-1] for n in tset}
        c = totals[lang]
        c["units"] += 1
        c["tp"] += len(f & tset)
        c["fp"] += len(f - tset)
        c["fn"] += len(tset - f)
        for n in sorted(tset - f):
            misses[(lang, category(n, pretty[n], lang, idents))].append("%s: %s" % (units[path], pretty[n]))
        for n in sorted(f - tset):
            fps[(lang, category(n, pretty[n], lang, idents))].append("%s: %s" % (units[path], pretty[n]))
    unmeasured = sum(len(v) for k, v in found.items() if k not in truth)
    print("suite: %s" % root)
    for lang in sorted(totals):
        c = totals[lang]
        prec = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 1.0
        rec = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 1.0
        print("%-6s units %4d  true %5d  found %5d  correct %5d  precision %.3f  recall %.3f"
              % (lang, c["units"], c["tp"] + c["fn"], c["tp"] + c["fp"], c["tp"], prec, rec))
    print("not measured: %d units that do not compile here; %d scanned entries in files without ground truth"
          % (len(failed), unmeasured))
    for title, groups in (("misses", misses), ("false positives", fps)):
        for (lang, cat), items in sorted(groups.items()):
            print("\n%s, %s %s: %d" % (title, lang, cat, len(items)))
            for x in items[:args.show]:
                print("  " + x)
            if len(items) > args.show:
                print("  ... %d more" % (len(items) - args.show))
    if failed:
        print("\nunits that do not compile here (not measured):")
        for path, err in sorted(failed.items())[:args.show]:
            print("  %s: %s" % (units.get(path, path), err))
    use_exact = [w for w in warnings if "--exact" in w]
    print("\ncckey warnings: %d (%d saying \"use --exact\")" % (len(warnings), len(use_exact)))


if __name__ == "__main__":
    main()
