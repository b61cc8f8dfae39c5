#!/usr/bin/env python3
"""Compressed cache folders (cckey.conf compression = zstd) from the CLI, on
the example suite's real binaries: the OpenCL kernels compiled by PoCL and
the CUDA kernels by NVRTC where it is installed, with a real redis-server
(started here on a free port) as the remote.

Oracles: the zstd command (it decodes each stored frame: `cckey cache get`
must give those bytes), the entry layout documented in
host/entry/entry.h (read here with struct), the Redis object
itself (byte for byte the folder's file: remotes get what the folder
stores), and the entry sizes summed here for the ratio `cache stats`
prints.

Usage: test_compression.py PATH/TO/cckey [unittest args]
Skips (exit 77) with a one-line reason where no OpenCL device or the zstd
command is there; the remote test where redis-server is absent."""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples")
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "remote"))
from servers import Redis, have, skip_unless  # noqa: E402

CCKEY = None
ENTRY = re.compile(r"^[0-9a-f]{32}(-[0-9a-f]{32}){3}$")


def run(args, timeout=600, check=True):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCKEY_")}
    p = subprocess.run([CCKEY] + args, capture_output=True, timeout=timeout, env=env)
    if check:
        assert p.returncode == 0, (args, p.stdout.decode(), p.stderr.decode())
    return p.returncode, p.stdout, p.stderr.decode()


def entries(folder):
    """name -> (path, bytes) of every entry file."""
    out = {}
    for root, _, files in os.walk(folder):
        for n in files:
            if ENTRY.match(n):
                with open(os.path.join(root, n), "rb") as f:
                    out[n] = (os.path.join(root, n), f.read())
    return out


def layout(data):
    """(version, plain length, records, stored payload) per the documented header."""
    assert data[:8] == b"CCKEYBIN"
    version, hsize, plen = struct.unpack_from("<IIQ", data, 8)
    rlen, = struct.unpack_from("<I", data, 172)
    enc, stored = struct.unpack_from("<IQ", data, 180)
    assert hsize == 192
    if version == 5:
        assert enc == 1 and len(data) == 192 + rlen + stored
    else:
        assert version == 4 and (enc, stored) == (0, 0) and len(data) == 192 + rlen + plen
    return version, plen, data[192:192 + rlen], data[192 + rlen:]


def zstd_decode(frame):
    p = subprocess.run(["zstd", "-q", "-d", "-c"], input=frame, capture_output=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout


def redis_get(port, key):
    """GET over RESP, binary safe (redis-cli would add a newline)."""
    k = key.encode()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(b"*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n" % (len(k), k))
        buf = b""
        while b"\r\n" not in buf:
            buf += s.recv(65536)
        head, rest = buf.split(b"\r\n", 1)
        n = int(head[1:])
        while len(rest) < n + 2:
            rest += s.recv(1 << 20)
        return rest[:n]


def opencl_device():
    _, out, _ = run(["devices"])
    m = re.search(r"^opencl\s+available.*?device id: (.+?)$", out.decode(), re.M | re.S)
    return m.group(1).strip() if m else None


def nvrtc_available():
    _, out, _ = run(["devices"])
    return re.search(r"^nvrtc\s+available", out.decode(), re.M) is not None


class Compression(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="cckey-zstd-")
        cls.manifest = os.path.join(cls.root, "suite.jsonl")
        run(["scan", os.path.join(EXAMPLES, "kernels", "opencl"), "--device", DEVICE, "-O", "",
             "-O", "-cl-fast-relaxed-math", "-o", cls.manifest])
        with open(cls.manifest) as f:
            cls.n_tuples = sum(1 for l in f if l.strip())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def folder(self, name, level=None):
        d = os.path.join(self.root, name)
        os.makedirs(d)
        with open(os.path.join(d, "cckey.conf"), "w") as f:
            f.write("# the folder compresses\ncompression = zstd\n")
            if level is not None:
                f.write("compression_level = %d\n" % level)
        return d

    def expect_served_as_decoded(self, folder):
        """Every entry: cache get gives what zstd decodes from its frame
        (format 5) or its payload as stored (format 4)."""
        versions = []
        for name, (path, data) in entries(folder).items():
            version, plen, rec, stored = layout(data)
            plain = zstd_decode(stored) if version == 5 else stored
            self.assertEqual(len(plain), plen)
            out = os.path.join(self.root, "got")
            run(["cache", "get", name.replace("-", ":"), "--cache-dir", folder, "-o", out])
            with open(out, "rb") as f:
                self.assertEqual(f.read(), plain, name)
            versions.append(version)
        return versions

    def test_opencl_binaries_compressed_and_served_exactly(self):
        d = self.folder("ocl", level=19)
        run(["warm", self.manifest, "--cache-dir", d, "-q"])
        versions = self.expect_served_as_decoded(d)
        self.assertEqual(len(versions), self.n_tuples)
        self.assertIn(5, versions, "PoCL's binaries compress")
        # A second warm finds everything (reads its own compressed entries).
        rc, out, err = run(["warm", "--check", self.manifest, "--cache-dir", d])
        self.assertEqual(rc, 0, err)

    def test_cuda_binaries_compressed_and_served_exactly(self):
        if not nvrtc_available():
            self.skipTest("NVRTC is not installed")
        manifest = os.path.join(self.root, "cuda.jsonl")
        run(["scan", os.path.join(EXAMPLES, "kernels", "cuda"), "-d", "NVIDIA H200|580.159.04", "-O", "arch=sm_90",
             "-o", manifest])
        d = self.folder("cuda")
        run(["warm", manifest, "--cache-dir", d, "-q"])
        self.assertIn(5, self.expect_served_as_decoded(d))

    def test_stats_give_the_ratio_of_the_entries(self):
        d = self.folder("stats")
        run(["warm", self.manifest, "--cache-dir", d, "-q"])
        plain = disk = 0
        for _, data in entries(d).values():
            _, plen, rec, _ = layout(data)
            plain += 192 + len(rec) + plen
            disk += len(data)
        self.assertLess(disk, plain)
        _, out, _ = run(["cache", "stats", "--cache-dir", d])
        m = re.search(r"^compression ratio: ([0-9.]+) \((\d+) bytes uncompressed\)$", out.decode(), re.M)
        self.assertTrue(m, out)
        self.assertEqual(int(m.group(2)), plain)
        self.assertEqual(m.group(1), "%.2f" % (plain / disk))
        _, out, _ = run(["cache", "stats", "--cache-dir", d, "--format", "json"])
        j = json.loads(out)
        self.assertEqual((j["plain_bytes"], j["bytes"]), (plain, disk))
        self.assertAlmostEqual(j["compression_ratio"], plain / disk, places=9)

    def test_a_damaged_frame_is_a_miss_that_verify_removes(self):
        d = self.folder("damaged")
        run(["warm", self.manifest, "--cache-dir", d, "-q"])
        packed = [(p, data) for p, data in entries(d).values() if layout(data)[0] == 5]
        path, data = packed[0]
        spoilt = bytearray(data)
        spoilt[len(data) - 40] ^= 0xFF   # inside the frame
        with open(path, "wb") as f:
            f.write(spoilt)
        rc, out, _ = run(["cache", "verify", "--cache-dir", d], check=False)
        self.assertEqual(rc, 1, out)   # damage found
        self.assertIn("removed (damaged): 1", out.decode())
        self.assertFalse(os.path.exists(path))
        # The next warm compiles that one tuple again, and only that one.
        _, out, _ = run(["warm", self.manifest, "--cache-dir", d])
        self.assertRegex(out.decode(), r"\b1 compiled in 1 build, %d already cached" % (self.n_tuples - 1))

    @unittest.skipUnless(have("redis-server"), "redis-server is not installed")
    def test_the_remote_gets_what_the_folder_stores(self):
        redis = Redis(self.root)
        try:
            d = self.folder("pusher")
            run(["warm", self.manifest, "--cache-dir", d, "--remote", redis.url(), "-q"])
            held = entries(d)
            self.assertEqual(len(held), self.n_tuples)
            for name, (_, data) in held.items():
                self.assertEqual(redis_get(redis.port, "cckey:" + name), data, name)
            # A reader with no compression set is served from those bytes
            # and keeps them as they came.
            reader = os.path.join(self.root, "reader")
            run(["warm", self.manifest, "--cache-dir", reader, "--remote", redis.url(), "-q"])
            self.assertEqual({n: b for n, (_, b) in entries(reader).items()}, {n: b for n, (_, b) in held.items()})
            self.expect_served_as_decoded(reader)
        finally:
            redis.stop()


def main():
    global CCKEY, DEVICE
    CCKEY = os.path.abspath(sys.argv.pop(1))
    skip_unless((shutil.which("zstd"), "the zstd command is not installed (Debian: zstd)"))
    DEVICE = opencl_device()
    skip_unless((DEVICE, "no OpenCL device (PoCL: pocl-opencl-icd)"))
    unittest.main(verbosity=2)


DEVICE = None
if __name__ == "__main__":
    main()
