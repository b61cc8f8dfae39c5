#!/usr/bin/env python3
"""Warm never serves a stale binary because of headers (issue 23): computed
includes, pre-includes, the folders searched and their order (-I, -isystem,
warm's working folder), __has_include, header ping-pong (several builds per
key), builds with no preprocessor, and bad input. Each case runs for OpenCL
on PoCL and for CUDA through NVRTC (no GPU: arch=sm_90), skipping a language
whose compiler is absent.

Usage: test_warm_deps.py PATH/TO/cckey [unittest args]

Oracles: the compilers themselves. A header edited to `#error` makes the
real build fail, so a run that still calls the tuple cached is serving a
stale binary; a restored header must be served the very bytes its first
build stored (`cckey cache get`, then the entry read by the documented
layout). Warm runs from a working folder of its own (the compilers search it
first). On 6f74adb the computed-include, CUDA pre-include, __has_include,
working-folder and ping-pong cases fail (a stale entry served, or compiled
again); the search-order case and PoCL's refusal of -include pass there too;
the no-preprocessor cases use options it lacks."""
import hashlib
import json
import os
import re
import shutil
import struct
import sys
import unittest

import clitest

CCKEY = None
NOT_WARM = 3
NVIDIA = "NVIDIA H200|580.159.04"


def run(args, cwd, timeout=600):
    return clitest.run(CCKEY, args, cwd, timeout)


def devices():
    rc, out, _ = run(["devices"], cwd="/")
    m = re.search(r"^opencl\s+available.*?device id: (.+?)$", out, re.M | re.S)
    return (m.group(1).strip() if m else None), bool(re.search(r"^nvrtc\s+available", out, re.M))


OPENCL, CUDA = "opencl", "cuda"
CLANG = any(shutil.which(n) for n in ["clang"] + [f"clang-{v}" for v in range(19, 13, -1)])


class Base(clitest.TmpTest):
    lang = None
    prefix = "cckey-warm-deps-"

    def setUp(self):
        cl, nvrtc = devices()
        if self.lang == OPENCL and not cl:
            self.skipTest("no OpenCL device (PoCL) here")
        if self.lang == CUDA and not nvrtc:
            self.skipTest("NVRTC is not installed")
        self.device = cl if self.lang == OPENCL else NVIDIA
        super().setUp()
        self.src = os.path.join(self.tmp, "suite")
        self.cwd = os.path.join(self.tmp, "run")
        os.makedirs(self.src)
        os.makedirs(self.cwd)
        self.store = os.path.join(self.tmp, "store")

    def write(self, rel, text, base=None):   # in the suite's folder unless told
        return clitest.write_file(base or self.src, rel, text)

    def kernel(self, rel, name, body, head=""):
        """A kernel source whose value comes from headers: OpenCL or CUDA."""
        if self.lang == OPENCL:
            text = f"{head}__kernel void {name}(__global int *p) {{ p[0] = {body}; }}\n"
        else:
            text = f'{head}extern "C" __global__ void {name}(int *p) {{ p[0] = {body}; }}\n'
        return self.write(rel + (".cl" if self.lang == OPENCL else ".cu"), text)

    def tuple(self, path, name, options=()):
        opts = [list(o) for o in options]
        if self.lang == CUDA:
            opts.append(["arch", "sm_90"])
        return {"device": self.device, "name": name, "source_file": path, "language": self.lang, "options": opts}

    def manifest(self, tuples):
        with open(os.path.join(self.tmp, "m.jsonl"), "w") as f:
            f.write("".join(json.dumps(t) + "\n" for t in tuples))

    def warm(self, *extra):
        return run(["warm", "-q", "../m.jsonl", "--cache-dir", self.store, "--format", "jsonl"] + list(extra),
                   cwd=self.cwd)

    def lines(self, *extra, rc=0):
        code, out, err = self.warm(*extra)
        self.assertEqual(code, rc, out + err)
        return [json.loads(l) for l in out.splitlines()]

    def results(self, *extra, rc=0):
        return [l["result"] for l in self.lines(*extra, rc=rc)]

    def stale(self, what):
        """--check after an edit that breaks the build: every tuple listed."""
        lines = self.lines("--check", rc=NOT_WARM)
        for l in lines:
            self.assertEqual((l["status"], l.get("reason")), ("miss", "header_changed"), (what, l))
        return lines


class Cases(Base):
    @unittest.skipUnless(CLANG, "clang (the preprocessor) is not installed")
    def test_computed_include_is_a_dependency(self):
        """Case 1: `#define HDR "m.h"` / `#include HDR`, and hashcat's shape:
        `#include M2S(INCLUDE_PATH/inc.h)` with the macros from -D flags."""
        self.write("m.h", "#define M 1\n")
        self.write("inc/inc.h", "#define N 2\n")
        a = self.kernel("a", "ka", "M", head='#define HDR "m.h"\n#include HDR\n')
        b = self.kernel("b", "kb", "N", head="#include M2S(INCLUDE_PATH/inc/inc.h)\n")
        d = [("-DINCLUDE_PATH", self.src), ("-DXM2S(x)", "#x"), ("-DM2S(x)", "XM2S(x)")]
        self.manifest([self.tuple(a, "ka"), self.tuple(b, "kb", d)])
        self.assertEqual(self.results(), ["compiled", "compiled"])
        self.assertEqual(self.results("--check"), ["cached", "cached"])
        self.write("m.h", "#error m.h edited\n")
        self.write("inc/inc.h", "#error inc.h edited\n")
        lines = self.stale("computed include")
        self.assertIn("m.h", lines[0]["detail"])
        self.assertIn("inc.h", lines[1]["detail"])

    @unittest.skipUnless(CLANG, "clang (the preprocessor) is not installed")
    def test_toolkit_headers_with_a_computed_include(self):
        """CUDA: <cooperative_groups.h> (NVRTC's toolkit folders) beside a
        computed include: clang sees the toolkit as NVRTC does, and records
        none of its headers (the compiler's own: the version record covers
        them), only the user's."""
        if self.lang != CUDA:
            return
        self.write("m.h", "#define M 1\n")
        k = self.kernel("t", "kt", "M", head='#include <cooperative_groups.h>\n#define HDR "m.h"\n#include HDR\n')
        self.manifest([self.tuple(k, "kt")])
        (l,) = self.lines()
        if not l.get("toolkit_include"):
            self.skipTest("NVRTC found no toolkit include folder here")
        self.assertEqual((l["result"], l["deps"]), ("compiled", "preprocessor"), l)
        paths = [p for p, present in entry_deps(self.store, l["key"]) if present]
        self.assertEqual([os.path.basename(p) for p in paths], ["m.h"], paths)
        self.write("m.h", "#error m.h edited\n")
        self.stale("toolkit")

    def test_pre_include_is_a_dependency(self):
        """Case 2: --pre-include (CUDA). PoCL refuses -include outright
        ("Invalid build option"): that tuple fails alone and stores nothing."""
        self.write("pre.h", "#define PRE 3\n")
        k = self.kernel("p", "kp", "PRE")
        if self.lang == OPENCL:
            self.manifest([self.tuple(k, "kp", [("-includepre.h", "")]), self.tuple(self.kernel("q", "kq", "1"), "kq")])
            lines = self.lines(rc=1)
            self.assertEqual([l["result"] for l in lines], ["failed", "compiled"])
            self.assertIn("-include", lines[0]["error"])
            self.assertEqual(self.results("--check", rc=NOT_WARM), ["not_compiled", "cached"])
            return
        self.manifest([self.tuple(k, "kp", [("--pre-include=", "pre.h")])])
        self.assertEqual(self.results(), ["compiled"])
        self.assertEqual(self.results("--check"), ["cached"])
        self.write("pre.h", "#error pre.h edited\n")
        self.assertIn("pre.h", self.stale("pre-include")[0]["detail"])

    def test_has_include_is_a_probe(self):
        """A header that appears where __has_include looked changes the build."""
        k = self.kernel("h", "kh", "V", head='#if __has_include("opt.h")\n#define V 2\n#else\n#define V 1\n#endif\n')
        self.manifest([self.tuple(k, "kh")])
        self.assertEqual(self.results(), ["compiled"])
        self.assertEqual(self.results("--check"), ["cached"])
        self.write("opt.h", "#error opt.h appeared\n")
        self.assertIn("opt.h appeared", self.stale("__has_include")[0]["detail"])

    def test_the_working_folder_is_searched_first(self):
        """Both compilers read "w.h" from warm's working folder before the
        source's own: one appearing there makes the entry stale."""
        self.write("w.h", "#define W 1\n")
        k = self.kernel("w", "kw", "W", head='#include "w.h"\n')
        self.manifest([self.tuple(k, "kw")])
        self.assertEqual(self.results(), ["compiled"])
        self.write("w.h", "#error the working folder's w.h\n", base=self.cwd)
        self.stale("working folder")
        code, out, err = self.warm()
        self.assertEqual(code, 1, "the real build reads the working folder's w.h and fails")
        self.assertIn("the working folder's w.h", err)

    def test_search_order_as_the_build_passes_it(self):
        """Two -I folders holding h.h: the first one given is read, so only
        its edit is a miss (PoCL and NVRTC take no -isystem, so -I folders
        and warm's own are the whole search here)."""
        zz, aa = os.path.join(self.tmp, "zz"), os.path.join(self.tmp, "aa")
        self.write("h.h", "#define H 1\n", base=zz)
        self.write("h.h", "#define H 2\n", base=aa)
        inc = "-I" if self.lang == OPENCL else "--include-path="
        k = self.kernel("i", "ki", "H", head="#include <h.h>\n")
        self.manifest([self.tuple(k, "ki", [(inc, zz), (inc, aa)])])
        self.assertEqual(self.results(), ["compiled"])
        self.write("h.h", "#error not read\n", base=aa)
        self.assertEqual(self.results("--check"), ["cached"], "a header the build never read")
        self.write("h.h", "#error read\n", base=zz)
        self.stale("search order")

    def test_ping_pong_hits_the_earlier_build(self):
        """Edit a header, warm, restore it, warm: the first build is served,
        byte for byte, as the key's older build."""
        self.write("pp.h", "#define P 1\n")
        k = self.kernel("pp", "kpp", "P", head='#include "pp.h"\n')
        self.manifest([self.tuple(k, "kpp")])
        (first,) = self.lines()
        self.assertEqual(first["result"], "compiled")
        built_first = self.payload(first["key"])
        self.write("pp.h", "#define P 2\n")
        self.assertEqual(self.results(), ["compiled"])
        self.write("pp.h", "#define P 1\n")
        (back,) = self.lines()
        self.assertEqual((back["status"], back["result"]), ("hit", "cached"), back)
        self.assertEqual((back.get("variant"), back.get("variants")), (1, 2), back)
        # The entry by the documented layout: newest build first, the
        # restored header's build second, its binary the first one's bytes.
        builds = entry_builds(self.store, first["key"])
        self.assertEqual(len(builds), 2)
        self.assertEqual(builds[1], built_first)
        self.assertNotEqual(builds[0], built_first)
        code, out, _ = run(["cache", "list", "--cache-dir", self.store, "--format", "jsonl"], cwd=self.cwd)
        (entry,) = [json.loads(l) for l in out.splitlines()]
        self.assertEqual((entry["key"], entry["variants"]), (first["key"], 2))
        code, out, _ = run(["cache", "stats", "--cache-dir", self.store, "--format", "json"], cwd=self.cwd)
        self.assertEqual((json.loads(out)["entries"], json.loads(out)["variants"]), (1, 2))

    def payload(self, key):
        out = os.path.join(self.tmp, "payload.bin")
        code, _, err = run(["cache", "get", key, "--cache-dir", self.store, "-o", out], cwd=self.cwd)
        self.assertEqual(code, 0, err)
        with open(out, "rb") as f:
            return f.read()


def entry_records(store, key):
    """(type, value) of every record of key's entry (documented layout)."""
    shard = hashlib.md5(key.encode()).hexdigest()[:2]
    with open(os.path.join(store, shard, key.replace(":", "-")), "rb") as f:
        data = f.read()
    rlen = struct.unpack_from("<I", data, 172)[0]
    recs, off = [], 192
    while off < 192 + rlen:
        rtype, _, vlen = struct.unpack_from("<HHI", data, off)
        recs.append((rtype, data[off + 8:off + 8 + vlen]))
        off += 8 + vlen
    return recs


def entry_deps(store, key):
    """(path, present) of each DEPENDENCY record (type 4)."""
    return [(v[32:].decode(), v[4] == 1) for t, v in entry_records(store, key) if t == 4]


def entry_builds(store, key):
    """The binaries of key's entry, newest first, parsed by the documented
    format 4 layout: VARIANT records (type 7) say where each one lies."""
    shard = hashlib.md5(key.encode()).hexdigest()[:2]
    with open(os.path.join(store, shard, key.replace(":", "-")), "rb") as f:
        data = f.read()
    version, _, plen = struct.unpack_from("<IIQ", data, 8)
    rlen, count = struct.unpack_from("<II", data, 172)
    assert version == 4 and len(data) == 192 + rlen + plen
    payload, builds, off = data[192 + rlen:], [], 192
    while off < 192 + rlen:
        rtype, _, vlen = struct.unpack_from("<HHI", data, off)
        if rtype == 7:
            at, n = struct.unpack_from("<QQ", data, off + 8)
            builds.append(payload[at:at + n])
        off += 8 + vlen
    assert len(builds) == count
    return builds


class NoPreprocessor(Base):
    @unittest.skipUnless(CLANG, "clang (the preprocessor) is not installed")
    def test_unresolved_includes_are_never_served(self):
        """Without a preprocessor, a computed include leaves the build
        unverified: stored, said so, and compiled again rather than served."""
        self.write("m.h", "#define M 1\n")
        k = self.kernel("u", "ku", "M", head='#define HDR "m.h"\n#include HDR\n')
        self.manifest([self.tuple(k, "ku")])
        code, out, err = run(["warm", "../m.jsonl", "--cache-dir", self.store, "--format", "jsonl",
                              "--preprocessor", "none"], cwd=self.cwd)
        self.assertEqual(code, 0, out + err)
        (l,) = [json.loads(x) for x in out.splitlines()]
        self.assertEqual((l["result"], l["deps"]), ("compiled", "unverified"))
        self.assertIn("#include HDR", err)
        self.assertIn("unverified", err)
        (l,) = self.lines("--check", rc=NOT_WARM)
        self.assertEqual(l["reason"], "unverified")
        self.assertIn("u.c", l["detail"])
        (l,) = self.lines()   # clang found this time
        self.assertEqual((l["reason"], l["result"], l["deps"]), ("unverified", "compiled", "preprocessor"))
        (l,) = self.lines()
        self.assertEqual((l["result"], l["variants"]), ("cached", 1), "the unverified build is not kept")

    def test_bad_input_fails_alone(self):
        """An unreadable header (a symlink loop) and a preprocessor that
        fails: per-tuple errors naming the file; the other tuple compiles;
        nothing is stored for the failed keys."""
        os.symlink("loop.h", os.path.join(self.src, "loop.h"))
        bad = self.kernel("bad", "kbad", "1", head='#include "loop.h"\n')
        self.write("m.h", "#define M 1\n")
        comp = self.kernel("comp", "kcomp", "M", head='#define HDR "m.h"\n#include HDR\n')
        good = self.kernel("good", "kgood", "7")
        fake = self.write("fake-clang", "#!/bin/sh\necho '<stdin>:2:10: error: boom' >&2\nexit 1\n", base=self.tmp)
        os.chmod(fake, 0o755)
        self.manifest([self.tuple(bad, "kbad"), self.tuple(comp, "kcomp"), self.tuple(good, "kgood")])
        code, out, err = self.warm("--preprocessor", fake)
        self.assertEqual(code, 1, out + err)
        lines = [json.loads(x) for x in out.splitlines()]
        self.assertEqual([l["result"] for l in lines], ["failed", "failed", "compiled"])
        self.assertIn("loop.h", lines[0]["error"])
        self.assertIn("comp.c", lines[1]["error"])
        self.assertIn("boom", lines[1]["error"])
        code, out, _ = run(["cache", "list", "--cache-dir", self.store, "--format", "jsonl"], cwd=self.cwd)
        self.assertEqual([json.loads(x)["key"] for x in out.splitlines()], [lines[2]["key"]])


def per_language(cls):
    """cls once per language: OpenCL (PoCL) and CUDA (NVRTC)."""
    for lang in (OPENCL, CUDA):
        name = cls.__name__ + ("OpenCL" if lang == OPENCL else "Cuda")
        globals()[name] = type(name, (cls,), {"lang": lang})


per_language(Cases)
per_language(NoPreprocessor)
del Cases, NoPreprocessor

if __name__ == "__main__":
    CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
