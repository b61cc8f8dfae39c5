#!/usr/bin/env python3
"""Seeing why a key hit or missed: cckey warm --check, --force and
--format jsonl, on kernels compiled by a real OpenCL runtime (PoCL in CI),
NVRTC where it is installed, and remote caches (a real redis-server and
nginx, started here on free ports) where those are installed.

Usage: test_warm_check.py PATH/TO/cckey [unittest args]

Oracles: `cckey key` for every key; the store folder itself (every file's
path, size, inode, mtime and bytes) before and after a run that must write
nothing; the entry layout documented in host/entry/entry.h, parsed
and re-written here (a toolchain record changed, a critical record added,
with the checksum recomputed by hashlib) to make each kind of miss; the
redis keys and nginx's folder for the remotes. Tests skip with a one-line
reason where PoCL, NVRTC, redis-server or nginx is absent."""
import hashlib
import json
import os
import re
import struct
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "remote"))
from servers import Nginx, Redis, have  # noqa: E402
import clitest  # noqa: E402

CCKEY = None
NOT_WARM = 3   # warm --check's exit status when any tuple is not cached
ENTRY = re.compile(r"^[0-9a-f]{32}(-[0-9a-f]{32}){3}$")


def run(args, cwd=None, timeout=600):
    return clitest.run(CCKEY, args, cwd, timeout)


def snapshot(folder):
    """Everything about a folder a write could change: each path under it
    with its type, size, inode, mtime and content digest."""
    out = {}
    if not os.path.exists(folder):
        return out
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = os.path.join(root, name)
            st = os.lstat(path)
            digest = None
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    digest = hashlib.sha256(f.read()).hexdigest()
            out[os.path.relpath(path, folder)] = (st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns, digest)
    return out


def entry_path(store, key):
    """DIR/xy/NAME: xy is the MD5 of the key, NAME the key with '-' for ':'."""
    shard = hashlib.md5(key.encode()).hexdigest()[:2]
    return os.path.join(store, shard, key.replace(":", "-"))


def parse_entry(data):
    """(key, [(type, flags, value)], payload) of a version 4 entry: every
    build's records (each build's VARIANT record first) and the payload."""
    assert data[:8] == b"CCKEYBIN"
    version, hsize, plen = struct.unpack_from("<IIQ", data, 8)
    assert (version, hsize) == (4, 192)
    rlen = struct.unpack_from("<I", data, 172)[0]
    recs, off = [], 192
    while off < 192 + rlen:
        rtype, flags, vlen = struct.unpack_from("<HHI", data, off)
        recs.append((rtype, flags, data[off + 8:off + 8 + vlen]))
        off += 8 + vlen
    return data[40:171].decode(), recs, data[192 + rlen:]


def build_entry(key, recs, payload):
    """An entry file as the documented layout says, checksum included."""
    rec = b"".join(struct.pack("<HHI", t, f, len(v)) + v for t, f, v in recs)
    hdr = bytearray(192)
    hdr[0:8] = b"CCKEYBIN"
    struct.pack_into("<IIQ", hdr, 8, 4, 192, len(payload))
    hdr[40:171] = key.encode()
    struct.pack_into("<II", hdr, 172, len(rec), sum(1 for t, _, _ in recs if t == 7))
    pieces = b"".join(hashlib.md5(payload[i:i + 4096]).digest() for i in range(0, len(payload), 4096))
    hdr[24:40] = hashlib.md5(bytes(hdr) + rec + pieces).digest()
    return bytes(hdr) + rec + payload


def rewrite_entry(store, key, change):
    """Replace key's entry by one whose records are change(records)."""
    path = entry_path(store, key)
    with open(path, "rb") as f:
        k, recs, payload = parse_entry(f.read())
    assert k == key
    with open(path + ".new", "wb") as f:
        f.write(build_entry(key, change(recs), payload))
    os.replace(path + ".new", path)


def cli_key(t, cwd):
    """`cckey key` for one manifest tuple: the oracle for warm's keys."""
    args = ["key", "-d", t["device"], "-n", t["name"]]
    args += ["-f", t["source_file"]] if "source_file" in t else ["-s", t["source"]]
    args += ["--options-json", json.dumps(t.get("options", []))]
    rc, out, err = run(args, cwd=cwd)
    assert rc == 0, err
    return out.strip()


def jsonl(out):
    """Every line of a --format jsonl run, each parsed (a line that is not
    JSON fails the test)."""
    return [json.loads(l) for l in out.splitlines()]


class Suite(clitest.TmpTest):
    """Three OpenCL kernels, one through a header, and a duplicate tuple."""
    prefix = "cckey-warm-check-"

    def setUp(self):
        self.device = clitest.opencl_or_skip(CCKEY)
        super().setUp()
        self.store = os.path.join(self.tmp, "store")
        self.write("k/a.cl", '#include "hdr.h"\n__kernel void fa(__global int *p) { p[0] = V; }\n')
        self.write("k/hdr.h", "#define V 1\n")
        self.write("k/b.cl", "__kernel void fb(__global int *p) { p[0] = 2; }\n")
        self.write("k/c.cl", "__kernel void fc(__global int *p) { p[0] = UNROLL; }\n")
        self.tuples = [
            {"device": self.device, "name": "fa", "source_file": "k/a.cl", "options": []},
            {"device": self.device, "name": "fb", "source_file": "k/b.cl", "options": []},
            {"device": self.device, "name": "fc", "source_file": "k/c.cl", "options": [["-DUNROLL", "4"]]},
            {"device": self.device, "name": "fb", "source_file": "k/b.cl", "options": []},   # line 2 again
        ]
        self.manifest("m.jsonl", self.tuples)
        self.keys = [cli_key(t, self.tmp) for t in self.tuples]
        self.assertEqual(len(set(self.keys)), 3)

    def manifest(self, name, tuples):
        self.write(name, "".join(json.dumps(t) + "\n" for t in tuples))

    def warm(self, *extra, manifest="m.jsonl"):
        return run(["warm", "-q", manifest, "--cache-dir", self.store] + list(extra), cwd=self.tmp)

    def listed_lines(self, out):
        """Manifest line numbers of the tuples a text --check listed."""
        return sorted(int(m) for m in re.findall(r"(?m)^m\.jsonl:(\d+): ", out))

    def check_jsonl(self, *extra, want_rc=None):
        rc, out, err = self.warm("--format", "jsonl", *extra)
        if want_rc is not None:
            self.assertEqual(rc, want_rc, out + err)
        lines = jsonl(out)
        self.assertEqual([l["line"] for l in lines], [1, 2, 3, 4], out)
        for l, t, key in zip(lines, self.tuples, self.keys):
            self.assertEqual((l["name"], l["device"], l["key"]), (t["name"], t["device"], key))
            self.assertIn(l["status"], ("hit", "miss"))
            self.assertEqual("reason" in l, l["status"] == "miss", l)
        return lines

    def test_check_lists_exactly_the_uncached_tuples_and_writes_nothing(self):
        # No folder at all: everything would be compiled, and no folder appears.
        rc, out, err = self.warm("--check")
        self.assertEqual(rc, NOT_WARM, out + err)
        self.assertEqual(self.listed_lines(out), [1, 2, 3, 4], out)
        self.assertFalse(os.path.exists(self.store), "--check made the store folder")

        # Warm fa alone: --check then lists fb (twice) and fc, and no file
        # of the folder changes (no entry, use mark, counter or tag).
        self.manifest("a.jsonl", self.tuples[:1])
        rc, out, err = self.warm(manifest="a.jsonl")
        self.assertEqual(rc, 0, out + err)
        before = snapshot(self.store)
        rc, out, err = self.warm("--check")
        self.assertEqual(rc, NOT_WARM, out + err)
        self.assertEqual(self.listed_lines(out), [2, 3, 4], out)
        self.assertIn("1 cached, 2 not cached", out)
        rc, out, err = self.warm("--check", "--format", "json")
        self.assertEqual(rc, NOT_WARM, out + err)
        doc = json.loads(out)
        self.assertEqual((doc["tuples"], doc["distinct_keys"], doc["cached"], doc["uncached"]), (4, 3, 1, 2))
        self.assertEqual([t["key"] for t in doc["would_compile"]], [self.keys[1], self.keys[2], self.keys[3]])
        self.assertEqual(snapshot(self.store), before, "--check wrote to the store")

        # A damaged entry is reported, and stays (a writing look-up removes it).
        path = entry_path(self.store, self.keys[0])
        with open(path, "r+b") as f:
            f.seek(-1, os.SEEK_END)
            last = f.read(1)
            f.seek(-1, os.SEEK_END)
            f.write(bytes([last[0] ^ 0xFF]))
        before = snapshot(self.store)
        rc, out, err = self.warm("--check")
        self.assertEqual(rc, NOT_WARM, out + err)
        self.assertEqual(self.listed_lines(out), [1, 2, 3, 4], out)
        self.assertRegex(out, r"(?m)^m\.jsonl:1: fa on .*corrupt")
        self.assertEqual(snapshot(self.store), before, "--check removed or touched the damaged entry")

        # Warm everything: --check passes, lists nothing, and writes nothing.
        rc, out, err = self.warm()
        self.assertEqual(rc, 0, out + err)
        before = snapshot(self.store)
        rc, out, err = self.warm("--check")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(self.listed_lines(out), [], out)
        self.assertIn("3 cached, 0 not cached", out)
        self.assertEqual(snapshot(self.store), before)
        rc, out, err = self.warm("--check", "--format", "json")
        self.assertEqual((rc, json.loads(out)["would_compile"]), (0, []))

    def test_force_compiles_again_and_replaces_each_entry(self):
        rc, out, err = self.warm()
        self.assertEqual(rc, 0, out + err)
        self.assertIn("3 compiled in 3 builds, 0 already cached", out)
        rc, out, err = self.warm()
        self.assertIn("0 compiled in 0 builds, 3 already cached", out)
        old = {k: os.stat(entry_path(self.store, k)).st_ino for k in set(self.keys)}
        rc, out, err = self.warm("--force")
        self.assertEqual(rc, 0, out + err)
        self.assertIn("3 compiled in 3 builds, 0 already cached", out)
        names = sorted(n for _, _, fs in os.walk(self.store) for n in fs if ENTRY.match(n))
        self.assertEqual(names, sorted(k.replace(":", "-") for k in set(self.keys)), "same keys, one entry each")
        for k, ino in old.items():
            path = entry_path(self.store, k)
            self.assertNotEqual(os.stat(path).st_ino, ino, "the entry was written anew (renamed into place)")
            with open(path, "rb") as f:
                self.assertEqual(parse_entry(f.read())[0], k)
        # jsonl under --force: what the store held, and that each compiled.
        lines = self.check_jsonl("--force", want_rc=0)
        self.assertEqual([(l["status"], l["result"]) for l in lines], [("hit", "compiled")] * 4)
        self.assertEqual(self.warm("--check")[0], 0)
        rc, _, err = self.warm("--check", "--force")
        self.assertEqual(rc, 2, "--check with --force is a usage error")

    def test_jsonl_gives_every_reason(self):
        # absent (--check, then a real warm that compiles them)
        lines = self.check_jsonl("--check", want_rc=NOT_WARM)
        self.assertEqual([(l["reason"], l["result"]) for l in lines], [("absent", "not_compiled")] * 4)
        lines = self.check_jsonl(want_rc=0)
        self.assertEqual([(l["status"], l["reason"], l["result"]) for l in lines],
                         [("miss", "absent", "compiled")] * 4)
        # hit
        for args in (["--check"], []):
            lines = self.check_jsonl(*args, want_rc=0)
            self.assertEqual([(l["status"], l["result"]) for l in lines], [("hit", "cached")] * 4)

        # header changed: fa's header edited; fb and fc untouched.
        self.write("k/hdr.h", "#define V 2\n")
        # toolchain changed: fb's entry recorded as built by another version.
        rewrite_entry(self.store, self.keys[1],
                      lambda recs: [(t, f, b"OpenCL 0.0 pretend-older" if t == 2 else v) for t, f, v in recs])
        # unknown record: fc's entry gains a critical record of type 999.
        rewrite_entry(self.store, self.keys[2], lambda recs: recs + [(999, 1, b"from a newer cckey")])
        lines = self.check_jsonl("--check", want_rc=NOT_WARM)
        got = [(l["reason"], l["result"]) for l in lines]
        self.assertEqual(got, [("header_changed", "not_compiled"), ("toolchain_changed", "not_compiled"),
                               ("unknown_record", "not_compiled"), ("toolchain_changed", "not_compiled")])
        self.assertIn("hdr.h", lines[0]["detail"])
        self.assertIn("pretend-older", lines[1]["detail"])

        # corrupt: fb's entry damaged on top (a flipped payload byte).
        path = entry_path(self.store, self.keys[1])
        with open(path, "r+b") as f:
            data = bytearray(f.read())
            data[-1] ^= 0x01
            f.seek(0)
            f.write(data)
        lines = self.check_jsonl("--check", want_rc=NOT_WARM)
        self.assertEqual([l["reason"] for l in lines], ["header_changed", "corrupt", "unknown_record", "corrupt"])
        self.assertTrue(os.path.exists(path), "--check keeps a damaged entry")

        # The real run: the same reasons, each compiled again, then all hits.
        lines = self.check_jsonl(want_rc=0)
        self.assertEqual([(l["reason"], l["result"]) for l in lines],
                         [("header_changed", "compiled"), ("corrupt", "compiled"), ("unknown_record", "compiled"),
                          ("corrupt", "compiled")])
        lines = self.check_jsonl(want_rc=0)
        self.assertEqual([l["status"] for l in lines], ["hit"] * 4)

    def test_failures_in_jsonl(self):
        self.write("k/bad.cl", "__kernel void fbad(__global int *p) { p[0] = ; }\n")
        self.tuples = self.tuples[:3] + [{"device": self.device, "name": "fbad", "source_file": "k/bad.cl"}]
        self.keys = self.keys[:3] + [cli_key(self.tuples[3], self.tmp)]
        self.manifest("m.jsonl", self.tuples)
        lines = self.check_jsonl(want_rc=1)
        self.assertEqual([l["result"] for l in lines], ["compiled", "compiled", "compiled", "failed"])
        self.assertIn("build failed", lines[3]["error"])


class Nvrtc(clitest.TmpTest):
    """A CUDA tuple compiled by NVRTC alone: its toolchain record is NVRTC's."""
    prefix = "cckey-warm-check-cuda-"

    def setUp(self):
        if not clitest.load_nvrtc():
            self.skipTest("NVRTC (libnvrtc.so) not installed")
        super().setUp()

    def test_version_record_decides(self):
        t = {"device": "NVIDIA H200|580.159.04", "name": "k", "language": "cuda",
             "source": 'extern "C" __global__ void k(int *p) { p[0] = 1; }', "options": [["arch", "sm_90"]]}
        with open(os.path.join(self.tmp, "m.jsonl"), "w") as f:
            f.write(json.dumps(t) + "\n")
        key = cli_key(t, self.tmp)
        store = os.path.join(self.tmp, "store")
        warm = lambda *a: run(["warm", "-q", "m.jsonl", "--cache-dir", store, "--format", "jsonl"] + list(a),
                              cwd=self.tmp)
        rc, out, err = warm()
        self.assertEqual(rc, 0, out + err)
        self.assertEqual([(l["key"], l["reason"], l["result"]) for l in jsonl(out)], [(key, "absent", "compiled")])
        rc, out, _ = warm("--check")
        self.assertEqual((rc, [l["status"] for l in jsonl(out)]), (0, ["hit"]))
        with open(entry_path(store, key), "rb") as f:
            recs = parse_entry(f.read())[1]
        self.assertEqual([v for t, _, v in recs if t == 1], [b"NVRTC"])
        rewrite_entry(store, key, lambda recs: [(t, f, b"NVRTC 1.0" if t == 2 else v) for t, f, v in recs])
        rc, out, _ = warm("--check")
        (line,) = jsonl(out)
        self.assertEqual((rc, line["reason"]), (NOT_WARM, "toolchain_changed"))
        self.assertIn("NVRTC 1.0", line["detail"])


class Remotes(clitest.TmpTest):
    """--check with remote caches under the store: remote hits count as
    cached, and nothing is written locally or to a remote."""
    prefix = "cckey-warm-check-remote-"

    def setUp(self):
        self.device = clitest.opencl_or_skip(CCKEY)
        super().setUp()
        self.m = os.path.join(self.tmp, "m.jsonl")
        with open(self.m, "w") as f:
            for i in range(3):
                src = f"__kernel void r{i}(__global int *p) {{ p[0] = {i}; }}\n"
                f.write(json.dumps({"device": self.device, "name": f"r{i}", "source": src}) + "\n")

    def warm(self, store, url, *extra):
        return run(["warm", "-q", self.m, "--cache-dir", os.path.join(self.tmp, store), "--remote", url] +
                   list(extra))

    def expect_read_only(self, url, remote_state):
        # An empty remote: all absent, and the remote stays empty.
        empty = remote_state()
        rc, out, err = self.warm("x", url, "--check", "--format", "jsonl")
        self.assertEqual(rc, NOT_WARM, out + err)
        self.assertEqual([l["reason"] for l in jsonl(out)], ["absent"] * 3)
        self.assertEqual(remote_state(), empty)
        # Warmed through another cache: the remote holds all three.
        rc, out, err = self.warm("a", url)
        self.assertEqual(rc, 0, out + err)
        full = remote_state()
        self.assertNotEqual(full, empty)
        # A fresh cache over that remote is warm, yet gains no folder, and
        # the remote is unchanged.
        rc, out, err = self.warm("b", url, "--check", "--format", "jsonl")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual([l["status"] for l in jsonl(out)], ["hit"] * 3)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "b")), "--check made the local folder")
        self.assertEqual(remote_state(), full)
        # The local folder is asked first; its misses go to the remote.
        rc, out, err = self.warm("a", url, "--check")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(remote_state(), full)

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_redis(self):
        redis = Redis(self.tmp)
        try:
            def state():
                keys = sorted(k for k in redis.cli("--raw", "KEYS", "*").split("\n") if k)
                return [(k, redis.cli("--raw", "STRLEN", k)) for k in keys]
            self.expect_read_only(redis.url(), state)
        finally:
            redis.stop()

    @unittest.skipUnless(have("nginx"), "nginx is not installed")
    def test_http(self):
        nginx = Nginx(self.tmp)
        try:
            self.expect_read_only(nginx.url(), lambda: snapshot(os.path.join(nginx.dir, "dav", "cache")))
        finally:
            nginx.stop()


if __name__ == "__main__":
    CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
