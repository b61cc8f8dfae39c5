#!/usr/bin/env python3
"""The manifest parser's string kernels (host/cli/manifest/simd.c) on long,
escape-heavy strings: every kernel the CPU has (CCKEY_FORCE_ISA=scalar,
sse2, avx2, avx512; those this CPU has, by /proc/cpuinfo) must give the keys of the format's recipe for the valid
lines, and the same errors, at the same columns, for the bad ones.

The strings are built here byte by byte with their decoded form beside them,
so the keys come from gen_vectors.make_key (hashlib) and the column of a
control byte or of a bad escape letter is known in advance; the other faults
(bad UTF-8, lone surrogates, a string cut short) are held to the scalar
kernel, the byte-at-a-time loop the others must match.

Usage: test_manifest_kernels.py PATH/TO/cckey [unittest args]"""
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from gen_vectors import make_key  # noqa: E402

CCKEY = None
X86 = True
ALL_ISAS = ["scalar", "sse2", "avx2", "avx512"]
# The CPU flag (as /proc/cpuinfo names it) each kernel needs.
FLAG = {"sse2": "sse2", "avx2": "avx2", "avx512": "avx512f"}


def cpu_flags():
    """This CPU's flags as the kernel reports them: an oracle independent of
    cckey's own detection. Empty where /proc/cpuinfo has none (not Linux)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def machine_isas():
    """The kernels this CPU can run: scalar, and each whose flag it has."""
    flags = cpu_flags()
    return ["scalar"] + [isa for isa in ALL_ISAS[1:] if FLAG[isa] in flags]


ISAS = ALL_ISAS
ESCAPES = {b'\\n': b"\n", b'\\t': b"\t", b'\\"': b'"', b"\\/": b"/", b"\\\\": b"\\", b"\\b": b"\b",
           b"\\f": b"\f", b"\\r": b"\r", b"\\u00e9": "\u00e9".encode(), b"\\ud83d\\ude00": "\U0001F600".encode(),
           b"\\u0000": b"\0"}
RAW = ["\u00e9", "\u20ac", "\U0001F600", "\u0080", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\uffff",
       "\U00010000", "\U0010FFFF"]


def piece(rng):
    """One piece of a string: (JSON bytes, decoded bytes, code points)."""
    r = rng.random()
    if r < 0.45:
        s = "".join(rng.choice("abcdefghij {}();") for _ in range(rng.choice([1, 5, 17, 31, 32, 33, 63, 64, 65])))
        return s.encode(), s.encode(), len(s)
    if r < 0.9:
        e = rng.choice(list(ESCAPES)[:8] if rng.random() < 0.9 else list(ESCAPES))
        return e, ESCAPES[e], len(e)
    c = rng.choice(RAW)
    return c.encode(), c.encode(), 1


FAULTS = [(b"\x01", "control character 0x1"), (b"\x1f", "control character 0x1f"), (b"\\x", "invalid escape"),
          (b"\\u12G4", None), (b"\\udc00", None), (b"\\ud800x", None), (b"\xff", None), (b"\xc0\x80", None),
          (b"\xe2\x82a", None), (b"\xed\xa0\x80", None), (b"\xf4\x90\x80\x80", None), (b"\xf0\x8f\xbf\xbf", None),
          (b"\xe0\x9f\xbf", None), (b"\x80", None), (b"\xc3", None), (b"\xf5\x80\x80\x80", None)]


def make_line(rng, prefix):
    """A line and what it should give: (bytes, decoded source or None, fault
    message or None, expected column or None)."""
    text, decoded, col = [], [], len(prefix)
    for _ in range(rng.randrange(1, 120)):
        t, d, n = piece(rng)
        text.append(t)
        decoded.append(d)
        col += n
    if rng.random() < 0.3:
        fault, what = rng.choice(FAULTS)
        # A control byte is reported at its own column, a bad escape at its letter.
        at = col + 1 + (1 if fault == b"\\x" else 0)
        tail = b"".join(piece(rng)[0] for _ in range(rng.randrange(0, 4)))
        return prefix + b"".join(text) + fault + tail + b'"}', None, what, at if what else None
    if rng.random() < 0.05:   # cut short: no closing quote
        return prefix + b"".join(text), None, None, None
    return prefix + b"".join(text) + b'"}', b"".join(decoded), None, None


def run(isa, path):
    env = dict(os.environ, CCKEY_FORCE_ISA=isa)
    p = subprocess.run([CCKEY, "batch", "-k", "-q", path], capture_output=True, timeout=120, env=env)
    return p.returncode, p.stdout, p.stderr


class Kernels(unittest.TestCase):
    def test_every_kernel_agrees_with_the_recipe_and_the_scalar_loop(self):
        rng = random.Random(20261201)
        prefix = b'{"device":"d","name":"n","source":"'
        lines = [make_line(rng, prefix) for _ in range(600)]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.jsonl")
            with open(path, "wb") as f:
                f.write(b"".join(l[0] + b"\n" for l in lines))
            results = {isa: run(isa, path) for isa in ISAS}
        rc, out, err = results["scalar"]
        self.assertEqual(rc, 2, err)
        keys = out.decode().split("\n")[:-1]
        self.assertEqual(len(keys), len(lines))
        errors = {int(m.group(1)): (int(m.group(2)), m.group(3))
                  for m in re.finditer(r"m\.jsonl:(\d+):(\d+): invalid JSON: (.*)", err.decode("utf-8", "replace"))}
        for no, (_, source, what, col) in enumerate(lines, 1):
            if source is not None:
                self.assertEqual(keys[no - 1], make_key(b"d", b"n", source, []), f"line {no}")
                continue
            self.assertEqual(keys[no - 1], "", f"line {no}")
            self.assertIn(no, errors, f"line {no}")
            if what:
                self.assertEqual(errors[no], (col, what), f"line {no}")
        for isa in ISAS[1:]:
            self.assertEqual(results[isa], results["scalar"], isa)

    def test_a_kernel_the_cpu_lacks_is_refused(self):
        """Forcing a kernel this CPU cannot run is a usage error that names the
        widest it has, never a crash or a silent narrowing."""
        missing = [isa for isa in ALL_ISAS if isa not in ISAS]
        if not X86:
            self.skipTest("the string kernels are x86's; none to force here")
        if not missing:
            self.skipTest("this CPU runs every kernel (%s)" % ", ".join(ISAS))
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "m.jsonl")
            with open(path, "wb") as f:
                f.write(b'{"device":"d","name":"n","source":"s"}\n')
            for isa in missing:
                rc, out, err = run(isa, path)
                self.assertEqual((rc, out), (2, b""), isa)
                self.assertIn(b"CCKEY_FORCE_ISA=%s: this CPU cannot run it (the widest it has is %s)"
                              % (isa.encode(), ISAS[-1].encode()), err)

    def test_repeated_long_strings_decode_as_the_first(self):
        """Long strings that repeat an earlier one byte for byte are handed out
        from the first (host/cli/manifest/manifest.h): repeats, strings that
        share its first 256 bytes or all of it and go on, and long member
        names (a duplicate one is still an error) must all decode as their own."""
        rng = random.Random(7)
        pool = []
        for _ in range(12):
            text, decoded = [], []
            while sum(map(len, text)) < rng.choice([256, 300, 1000, 4000]):
                t, d, _ = piece(rng)
                text.append(t)
                decoded.append(d)
            pool.append((b"".join(text), b"".join(decoded)))
        lines, want = [], []
        for _ in range(1500):
            t, d = rng.choice(pool)
            kind = rng.random()
            if kind < 0.1:   # the same start, then more
                t2, d2 = rng.choice(pool)
                t, d = t + t2, d + d2
            elif kind < 0.15:   # a long member name, twice: a duplicate
                lines.append(b'{"device":"d","name":"n","source":"s","options":{"%s":"1","%s":"2"}}' % (t, t))
                want.append(None)
                continue
            elif kind < 0.25:   # a long member name and value, once
                lines.append(b'{"device":"d","name":"n","source":"%s","options":{"%s":"%s"}}' % (t, t, t))
                want.append(make_key(b"d", b"n", d, [(d, d)]) if b"\\u0000" not in t else None)
                continue
            lines.append(b'{"device":"%s","name":"n","source":"%s"}' % (t, t))
            want.append(make_key(d, b"n", d, []))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "m.jsonl")
            with open(path, "wb") as f:
                f.write(b"".join(l + b"\n" for l in lines))
            for isa in ["scalar", ISAS[-1]]:
                rc, out, err = run(isa, path)
                keys = out.decode().split("\n")[:-1]
                self.assertEqual(len(keys), len(lines))
                for no, (k, w) in enumerate(zip(keys, want), 1):
                    self.assertEqual(k, w or "", f"{isa} line {no}: {err[-500:]}")


if __name__ == "__main__":
    CCKEY = sys.argv.pop(1)
    X86 = platform.machine() in ("x86_64", "AMD64")
    ISAS = machine_isas() if X86 else ["scalar"]   # the kernels here are x86's
    print("kernels checked:", ", ".join(ISAS), file=sys.stderr)
    unittest.main()
