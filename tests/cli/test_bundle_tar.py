#!/usr/bin/env python3
"""Bundles as tar archives: cckey cache export/import against the real tar
command (GNU tar: it lists, unpacks and builds archives) and Python's
tarfile (it writes the hostile archives), on the example suite's OpenCL
kernels compiled by PoCL.

Oracles: `tar -tf` and `tar -xf` (the members are the folder's entry
files, byte for byte), an archive `tar -cf` made of a store folder, a
CCKEYBND bundle of the first releases written here from its documented
layout (hashlib's MD5 for the trailer), and the file system (nothing
written outside the folder).

Usage: test_bundle_tar.py PATH/TO/cckey [unittest args]
Skips (exit 77) with a one-line reason where tar, zstd or an OpenCL device
is absent."""
import hashlib
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "remote"))
from servers import skip_unless  # noqa: E402
import clitest  # noqa: E402
from clitest import EXAMPLES  # noqa: E402

CCKEY = None
DEVICE = None
ENTRY = re.compile(r"^[0-9a-f]{32}(-[0-9a-f]{32}){3}$")


def run(args, stdin=None, timeout=600):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCKEY_")}
    p = subprocess.run([CCKEY] + args, capture_output=True, timeout=timeout, env=env, stdin=stdin)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def entries(folder):
    """SHARD/NAME -> bytes of every entry file of a folder."""
    out = {}
    for shard in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        sub = os.path.join(folder, shard)
        if re.fullmatch(r"[0-9a-f]{2}", shard) and os.path.isdir(sub):
            for n in os.listdir(sub):
                if ENTRY.match(n):
                    with open(os.path.join(sub, n), "rb") as f:
                        out[shard + "/" + n] = f.read()
    return out


def tar(*args):
    p = subprocess.run(["tar"] + list(args), capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout.decode()


def opencl_device():
    _, out, _ = run(["devices"])
    m = re.search(r"^opencl\s+available.*?device id: (.+?)$", out, re.M | re.S)
    return m.group(1).strip() if m else None


class TarBundles(clitest.SharedRootTest):
    @classmethod
    def setUpClass(cls):
        cls.root = tempfile.mkdtemp(prefix="cckey-tar-")
        manifest = os.path.join(cls.root, "suite.jsonl")
        rc, _, err = run(["scan", os.path.join(EXAMPLES, "kernels", "opencl"), "--device", DEVICE, "-O", "",
                          "-o", manifest])
        assert rc == 0, err
        cls.src = os.path.join(cls.root, "src")
        rc, _, err = run(["warm", manifest, "--cache-dir", cls.src, "-q"])
        assert rc == 0, err
        cls.held = entries(cls.src)
        assert cls.held

    def export(self, name):
        rc, _, err = run(["cache", "export", "-o", self.path(name), "--cache-dir", self.src])
        self.assertEqual(rc, 0, err)
        return self.path(name)

    def imported(self, bundle, folder="dst", rc_want=0):
        rc, out, err = run(["cache", "import", bundle, "--cache-dir", self.path(folder)])
        self.assertEqual(rc, rc_want, out + err)
        return out, entries(self.path(folder))

    def test_tar_lists_and_unpacks_the_bundle(self):
        bundle = self.export("b.tar")
        self.assertEqual(sorted(tar("-tf", bundle).split()), sorted(self.held))
        unpacked = self.path("unpacked")
        os.mkdir(unpacked)
        tar("-xf", bundle, "-C", unpacked)
        self.assertEqual(entries(unpacked), self.held)
        out, got = self.imported(bundle)
        self.assertIn("imported: %d\n" % len(self.held), out)
        self.assertEqual(got, self.held)

    def test_zstd_bundles(self):
        bundle = self.export("b.tar.zst")
        with open(bundle, "rb") as f:
            self.assertEqual(f.read(4), b"\x28\xb5\x2f\xfd", "a zstd frame")
        self.assertEqual(sorted(tar("--zstd", "-tf", bundle).split()), sorted(self.held))
        self.assertLess(os.path.getsize(bundle), os.path.getsize(self.export("b.tar")))
        self.assertEqual(self.imported(bundle)[1], self.held)
        # From standard input, as a pipe.
        with open(bundle, "rb") as f:
            rc, out, err = run(["cache", "import", "-", "--cache-dir", self.path("piped")], stdin=f)
        self.assertEqual(rc, 0, err)
        self.assertEqual(entries(self.path("piped")), self.held)

    def test_a_tarred_store_folder_imports(self):
        made = self.path("folder.tar")
        tar("-cf", made, "-C", self.src, ".")   # CACHEDIR.TAG, stats and all: skipped, not refused
        out, got = self.imported(made)
        self.assertEqual(got, self.held)
        self.assertIn("refused (damaged): 0", out)

    def hostile(self, name, members, good=True):
        """A tar (Python's tarfile) of members (TarInfo, bytes or None), with
        one good entry first when good."""
        path = self.path(name)
        with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
            if good:
                first = sorted(self.held)[0]
                info = tarfile.TarInfo(first)
                info.size = len(self.held[first])
                t.addfile(info, io.BytesIO(self.held[first]))
            for info, data in members:
                t.addfile(info, io.BytesIO(data) if data is not None else None)
        return path

    def test_unsafe_members_are_refused_and_nothing_lands_outside(self):
        name, data = sorted(self.held.items())[1]
        base = name.split("/")[1]
        outside = self.path("outside")
        os.mkdir(outside)

        def reg(path):
            i = tarfile.TarInfo(path)
            i.size = len(data)
            return i, data

        def special(path, kind, **kw):
            i = tarfile.TarInfo(path)
            i.type = kind
            for k, v in kw.items():
                setattr(i, k, v)
            return i, None

        members = [reg(os.path.join(outside, base)),               # absolute
                   reg("../outside/" + base), reg("ab/../../outside/" + base),   # ..
                   special("cd/" + base, tarfile.SYMTYPE, linkname="/etc/passwd"),
                   special("ef/" + base, tarfile.LNKTYPE, linkname=name),
                   special("01/" + base, tarfile.CHRTYPE, devmajor=1, devminor=3),
                   special("02/" + base, tarfile.FIFOTYPE)]
        out, got = self.imported(self.hostile("hostile.tar", members), rc_want=1)
        self.assertIn('refused (absolute path, "..", link or device): %d' % len(members), out)
        self.assertIn("refused (damaged): 0", out)
        self.assertIn("imported: 1\n", out)
        self.assertEqual(list(got), [sorted(self.held)[0]])
        self.assertEqual(os.listdir(outside), [])
        for root, dirs, files in os.walk(self.path("dst")):
            for n in dirs + files:
                self.assertFalse(os.path.islink(os.path.join(root, n)), n)

    def test_damaged_and_cut_bundles(self):
        bundle = self.export("b.tar")
        with tarfile.open(bundle) as t:
            first = t.getmembers()[0]
        with open(bundle, "rb") as f:
            data = bytearray(f.read())
        data[first.offset_data + 300] ^= 1   # inside the first entry: that entry is refused
        with open(self.path("flipped.tar"), "wb") as f:
            f.write(data)
        out, got = self.imported(self.path("flipped.tar"), rc_want=1)
        self.assertIn("refused (damaged): 1", out)
        self.assertEqual(len(got), len(self.held) - 1)
        with open(bundle, "rb") as f:
            whole = f.read()
        with open(self.path("cut.tar"), "wb") as f:
            f.write(whole[: first.offset_data + 1000])
        rc, out, err = run(["cache", "import", self.path("cut.tar"), "--cache-dir", self.path("cut")])
        self.assertEqual(rc, 1)
        self.assertIn("ends early", err)
        with open(self.path("junk"), "wb") as f:
            f.write(b"not a bundle at all" * 100)
        rc, out, err = run(["cache", "import", self.path("junk"), "--cache-dir", self.path("junk-dst")])
        self.assertEqual(rc, 1)
        self.assertIn("not a cckey bundle", err)

    def test_first_release_bundles_still_import(self):
        # The CCKEYBND layout, written here from its documentation.
        body = b"CCKEYBND" + struct.pack("<II", 1, 0)
        for name, data in sorted(self.held.items()):
            key = name.split("/")[1].replace("-", ":").encode()
            body += b"E" + key + struct.pack("<Q", len(data)) + data
        body += b"Z" + struct.pack("<Q", len(self.held))
        body += hashlib.md5(body).digest()
        with open(self.path("old.bundle"), "wb") as f:
            f.write(body)
        out, got = self.imported(self.path("old.bundle"))
        self.assertEqual(got, self.held)


def main():
    global CCKEY, DEVICE
    CCKEY = os.path.abspath(sys.argv.pop(1))
    skip_unless((shutil.which("tar"), "tar is not installed"),
                (shutil.which("zstd"), "the zstd command is not installed (GNU tar's --zstd needs it)"))
    DEVICE = opencl_device()
    skip_unless((DEVICE, "no OpenCL device (PoCL: pocl-opencl-icd)"))
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
