#!/usr/bin/env python3
"""cckey warm on suites: headers, toolchain records, CUDA with NVRTC alone,
10^5 source files, and --max-size smaller than the warmed set.

Usage: test_warm_suite.py PATH/TO/cckey EXAMPLES_DIR [unittest args]

Oracles: the compilers themselves (PoCL through cckey, NVRTC called here
through ctypes for the byte-for-byte cubin and its version), hashlib for the
header digests, and the entry layout as documented in
host/entry/entry.h, parsed here independently. Tests that need PoCL
or NVRTC skip with a one-line reason where they are absent."""
import ctypes
import ctypes.util
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import unittest

import clitest

CCKEY = None
EXAMPLES = None


def run(args, cwd=None, timeout=600, env=None):
    return clitest.run(CCKEY, args, cwd, timeout, environ=os.environ if env is None else env)


def readb(path):
    with open(path, "rb") as f:
        return f.read()


def opencl_device():
    """The identity of this host's first OpenCL device, or None."""
    return clitest.opencl_device(CCKEY)


load_nvrtc = clitest.load_nvrtc


def nvcc_build():
    """The toolkit build `nvcc --version` names (b"V13.0.88"), or None."""
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    try:
        out = subprocess.run([nvcc, "--version"], capture_output=True, timeout=60).stdout
    except OSError:
        return None
    m = re.search(rb"release [0-9.]+, (V[0-9.]+)", out)
    return m.group(1) if m else None


def nvrtc_cubin(lib, src, opts):
    """NVRTC's cubin for src, called directly: the oracle for warm's payload."""
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, b"kernel.cu", 0, None, None) == 0
    argv = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), argv)
    assert rc == 0, rc
    n = ctypes.c_size_t()
    assert lib.nvrtcGetCUBINSize(prog, ctypes.byref(n)) == 0
    buf = ctypes.create_string_buffer(n.value)
    assert lib.nvrtcGetCUBIN(prog, buf) == 0
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return buf.raw[:n.value]


def entries(store):
    """Every entry of a store: {key: (records, payload)}, parsed by the
    documented layout (v4: 192-byte header, record section, payload)."""
    out = {}
    for shard in os.listdir(store):
        sd = os.path.join(store, shard)
        if not re.fullmatch(r"[0-9a-f]{2}", shard) or not os.path.isdir(sd):
            continue   # the shard folders only (the store keeps counters beside them)
        for name in os.listdir(sd):
            if not re.fullmatch(r"[0-9a-f]{32}(-[0-9a-f]{32}){3}", name):
                continue
            data = readb(os.path.join(sd, name))
            assert data[:8] == b"CCKEYBIN"
            version, hsize, plen = struct.unpack_from("<IIQ", data, 8)
            assert version == 4 and hsize == 192
            rlen = struct.unpack_from("<I", data, 172)[0]
            assert len(data) == 192 + rlen + plen
            # Format 3: the payload enters the checksum as its 4 KiB pieces' MD5s.
            body = 192 + rlen
            pieces = b"".join(hashlib.md5(data[i:i + 4096]).digest() for i in range(body, len(data), 4096))
            assert hashlib.md5(data[:24] + bytes(16) + data[40:body] + pieces).digest() == data[24:40]
            recs, off = [], 192
            while off < 192 + rlen:
                rtype, flags, vlen = struct.unpack_from("<HHI", data, off)
                recs.append((rtype, flags, data[off + 8:off + 8 + vlen]))
                off += 8 + vlen
            assert off == 192 + rlen
            key = data[40:171].decode()
            out[key] = (recs, data[192 + rlen:])
    return out


def deps_of(recs):
    """DEPENDENCY records as {(root, path): (present, size, md5 hex)}."""
    out = {}
    for rtype, flags, v in recs:
        if rtype == 4:
            root, present = struct.unpack_from("<IB", v, 0)
            size = struct.unpack_from("<Q", v, 8)[0]
            out[(root, v[32:].decode())] = (present, size, v[16:32].hex())
    return out


summary = clitest.summary


class Headers(clitest.TmpTest):
    """The edit-a-header test and its nested, removed and moved variants."""
    prefix = "cckey-warm-hdr-"

    def setUp(self):
        self.device = clitest.opencl_or_skip(CCKEY)
        super().setUp()
        self.k = os.path.join(self.tmp, "suite")
        os.makedirs(os.path.join(self.k, "sub"))
        self.write("a.cl", '#include "hdr.h"\n__kernel void fa(__global int *p) { p[0] = V + W; }\n')
        self.write("hdr.h", '#include "sub/inner.h"\n#define V 1\n')
        self.write("sub/inner.h", "#define W 10\n")
        self.write("b.cl", "__kernel void fb(__global int *p) { p[0] = 2; }\n")
        rc, _, err = run(["scan", "suite", "-d", self.device, "-o", "m.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 0, err)

    def write(self, rel, text):   # in the suite's folder
        clitest.write_file(self.k, rel, text)

    def warm(self, want_rc=0):
        rc, out, err = run(["warm", "-q", "m.jsonl", "--cache-dir", "store"], cwd=self.tmp)
        self.assertEqual(rc, want_rc, out + err)
        return summary(out)

    def test_edit_nested_remove_and_move(self):
        self.assertEqual(self.warm(), (2, 0, 0))
        self.assertEqual(self.warm(), (0, 2, 0))
        # The entry of a.cl records both headers by content, relative to the
        # source's folder (root 1; root 0 is warm's working folder, searched
        # first and found empty); b.cl's records none.
        ents = entries(os.path.join(self.tmp, "store"))
        present = lambda recs: {k: v for k, v in deps_of(recs).items() if v[0]}
        by_deps = sorted((len(present(r)), r) for r, _ in ents.values())
        self.assertEqual([n for n, _ in by_deps], [0, 2])
        deps = deps_of(by_deps[1][1])
        for rel in ("hdr.h", "sub/inner.h"):
            body = readb(os.path.join(self.k, rel))
            self.assertEqual(deps[(1, rel)], (1, len(body), hashlib.md5(body).hexdigest()))
        self.assertEqual(deps[(0, "hdr.h")], (0, 0, "0" * 32), "the working folder was searched first")
        for rtype, _, v in by_deps[1][1]:
            if rtype == 1:
                self.assertEqual(v, b"OpenCL")
        self.assertNotIn(self.tmp.encode(), b"".join(v for r, _ in ents.values() for _, _, v in r),
                         "absolute paths are not recorded")

        self.write("hdr.h", '#include "sub/inner.h"\n#define V 2\n')
        self.assertEqual(self.warm(), (1, 1, 0), "only the entry that read hdr.h compiles again")
        self.write("sub/inner.h", "#define W 20\n")
        self.assertEqual(self.warm(), (1, 1, 0), "a nested header counts")
        os.remove(os.path.join(self.k, "sub/inner.h"))
        self.assertEqual(self.warm(want_rc=1), (0, 1, 1), "a removed header is a miss (and the build fails)")
        self.write("hdr.h", "#define V 3\n#define W 0\n")
        self.assertEqual(self.warm(), (1, 1, 0), "an include line removed")
        self.assertEqual(self.warm(), (0, 2, 0))
        # The whole suite moved to another folder: contents decide, so hits.
        os.rename(self.k, os.path.join(self.tmp, "moved"))
        with open(os.path.join(self.tmp, "m.jsonl")) as f:
            text = f.read().replace('"suite/', '"moved/')
        with open(os.path.join(self.tmp, "m.jsonl"), "w") as f:
            f.write(text)
        self.assertEqual(self.warm(), (0, 2, 0))
        # A header appearing earlier in the search path shadows one found later.
        os.makedirs(os.path.join(self.tmp, "inc"))
        with open(os.path.join(self.tmp, "inc", "extra.h"), "w") as f:
            f.write("#define X 1\n")
        with open(os.path.join(self.tmp, "moved", "c.cl"), "w") as f:
            f.write('#include <extra.h>\n__kernel void fc(__global int *p) { p[0] = X; }\n')
        rc, _, err = run(["scan", "moved/c.cl", "-d", self.device, "-O", "-I" + os.path.join(self.tmp, "inc"),
                          "-o", "c.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 0, err)
        warm_c = lambda: summary(run(["warm", "-q", "c.jsonl", "--cache-dir", "store"], cwd=self.tmp)[1])
        self.assertEqual(warm_c(), (1, 0, 0))
        self.assertEqual(warm_c(), (0, 1, 0))
        with open(os.path.join(self.tmp, "moved", "extra.h"), "w") as f:
            f.write("#define X 2\n")
        self.assertEqual(warm_c(), (1, 0, 0), "extra.h now found in the source's folder first")


class CudaWithoutDriver(clitest.TmpTest):
    prefix = "cckey-warm-cuda-"

    def setUp(self):
        self.nvrtc = load_nvrtc()
        if not self.nvrtc:
            self.skipTest("NVRTC (libnvrtc.so) not installed")
        super().setUp()

    def test_devices_reports_nvrtc(self):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        rc, out, _ = run(["devices"])
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"(?m)^nvrtc\s+available: NVRTC %d\.%d" % (major.value, minor.value))

    def test_example_suite_compiles_with_nvrtc_alone(self):
        cuda_dir = os.path.join(EXAMPLES, "kernels", "cuda")
        dev = "NVIDIA H200|580.159.04"
        rc, _, err = run(["scan", cuda_dir, "-d", dev, "-O", "arch=sm_90", "-o", "m.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 0, err)
        lines = [json.loads(l) for l in readb(os.path.join(self.tmp, "m.jsonl")).splitlines()]
        self.assertGreaterEqual(len(lines), 5)
        rc, out, err = run(["warm", "-q", "m.jsonl", "--cache-dir", "store"], cwd=self.tmp)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(summary(out), (len(lines), 0, 0))
        rc, out, err = run(["warm", "-q", "m.jsonl", "--cache-dir", "store"], cwd=self.tmp)
        self.assertEqual(summary(out), (0, len(lines), 0))
        # Each payload is the cubin NVRTC itself makes for that file and arch,
        # and the toolchain records name NVRTC and its version.
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        ents = entries(os.path.join(self.tmp, "store"))
        self.assertEqual(len(ents), len(lines))
        for recs, payload in ents.values():
            rec = {t: v for t, _, v in recs}
            self.assertEqual(rec[1], b"NVRTC")
            # NVRTC's version, with the toolkit build nvcc names (V13.0.88)
            # where nvcc is here: a patch upgrade is another toolchain.
            self.assertTrue(rec[2].startswith(b"NVRTC %d.%d" % (major.value, minor.value)), rec[2])
            if nvcc_build():
                self.assertIn(b"(" + nvcc_build(), rec[2])
            self.assertEqual(rec[3], b"--gpu-architecture=sm_90\0")
        for line in lines:
            src_path = os.path.join(self.tmp, line["source_file"])
            src = readb(src_path)
            want = nvrtc_cubin(self.nvrtc, src, [b"--include-path=" + os.path.dirname(os.path.realpath(src_path)).encode(),
                                                 b"--gpu-architecture=sm_90"])
            self.assertTrue(any(p == want for _, p in ents.values()), line["name"])
            self.assertIn(line["name"].encode() + b"\0", want)

    def test_without_arch_it_says_what_is_missing(self):
        with open(os.path.join(self.tmp, "m.jsonl"), "w") as f:
            f.write(json.dumps({"device": "NVIDIA H200|580.159.04", "name": "k", "language": "cuda",
                                "source": 'extern "C" __global__ void k() {}'}) + "\n")
        rc, out, err = run(["warm", "-q", "m.jsonl", "--cache-dir", "store"], cwd=self.tmp)
        self.assertEqual(rc, 1)
        self.assertIn("arch=sm_XX", err)


class Scale(clitest.TmpTest):
    prefix = "cckey-warm-scale-"

    def test_more_source_files_than_the_map_limit(self):
        """F10: 70,000 distinct files (vm.max_map_count is 65,530 by default)
        all load; the device is not here, so each fails alone, quickly."""
        n = 70000
        os.mkdir(os.path.join(self.tmp, "k"))
        with open(os.path.join(self.tmp, "m.jsonl"), "w") as m:
            for i in range(n):
                with open(os.path.join(self.tmp, "k", "k%d.cl" % i), "w") as f:
                    f.write("__kernel void k%d(__global int *p) { p[0] = %d; }\n" % (i, i))
                m.write(json.dumps({"device": "nodev|0", "name": "k%d" % i, "source_file": "k/k%d.cl" % i}) + "\n")
        rc, out, err = run(["warm", "-q", "m.jsonl", "--cache-dir", "store"], cwd=self.tmp)
        self.assertEqual(rc, 1, err[-2000:])
        self.assertIn("%d tuples (%d distinct keys)" % (n, n), out)
        self.assertEqual(summary(out), (0, 0, n))
        self.assertNotIn("cannot read", err)
        # One reason, one line: the tuples that fail alike are counted.
        self.assertIn("cckey: warm: %d tuples: no OpenCL device here is \"nodev|0\"" % n, err)
        self.assertIn("(first: m.jsonl:1: k0 on", err)
        self.assertEqual(err.count("\n"), 1, err[-2000:])

    def test_max_size_below_the_warmed_set_is_a_partial_result(self):
        """F11: entries evicted again during the run are counted, exit 1."""
        device = opencl_device()
        if not device:
            self.skipTest("no OpenCL device (PoCL) here")
        os.mkdir(os.path.join(self.tmp, "k"))
        for i in range(4):
            with open(os.path.join(self.tmp, "k", "k%d.cl" % i), "w") as f:
                f.write("__kernel void k%d(__global int *p) { p[0] = %d; }\n" % (i, i))
        rc, _, err = run(["scan", "k", "-d", device, "-o", "m.jsonl"], cwd=self.tmp)
        self.assertEqual(rc, 0, err)
        rc, out, err = run(["warm", "-q", "-j", "1", "m.jsonl", "--cache-dir", "full"], cwd=self.tmp)
        self.assertEqual(rc, 0, err)
        ents = entries(os.path.join(self.tmp, "full"))
        one = max(192 + sum(8 + len(v) for _, _, v in r) + len(p) for r, p in ents.values())
        rc, out, err = run(["warm", "-q", "-j", "1", "m.jsonl", "--cache-dir", "small", "--max-size",
                            str(2 * one + one // 2)], cwd=self.tmp)
        self.assertEqual(rc, 1, out + err)
        m = re.search(r", (\d+) evicted by --max-size", out)
        self.assertTrue(m, out)
        kept = len(entries(os.path.join(self.tmp, "small")))
        self.assertEqual(int(m.group(1)), 4 - kept)
        self.assertGreater(4 - kept, 0)
        self.assertIn("partial result", err)


if __name__ == "__main__":
    CCKEY, EXAMPLES = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:], verbosity=2)
