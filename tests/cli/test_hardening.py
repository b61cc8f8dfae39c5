#!/usr/bin/env python3
"""Hardening of the command line: where -o writes, signals, files that lie
about their size, files that shrink, write errors.

Usage: test_hardening.py PATH/TO/cckey [unittest args]"""
import os
import signal
import stat
import subprocess
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import test_cli  # noqa: E402
from test_cli import MANIFEST, Tmp, golden, read  # noqa: E402
from gen_vectors import make_key  # noqa: E402

GOOD_LINE = '{"device": "d", "name": "n", "source": "s"}\n'


def run(args, **kw):
    return test_cli.run(args, **kw)


def wait_for(cond, what, limit=60):
    """Poll until cond() holds. The limit only ends a broken run; it is no
    assertion about speed."""
    end = time.monotonic() + limit
    while not cond():
        if time.monotonic() > end:
            raise AssertionError("gave up waiting for " + what)
        time.sleep(0.002)


class Output(Tmp):
    def test_empty_output_name(self):
        rc, out, err = run(["batch", "-o", "", MANIFEST])
        self.assertEqual((rc, out), (1, ""))
        self.assertIn("output file name (-o) is empty", err)
        self.assertNotIn(": : ", err)

    def test_symlink_target_is_replaced_and_link_kept(self):
        os.mkdir(os.path.join(self.dir, "real"))
        target = self.write("real/keys.txt", "old\n")
        link = os.path.join(self.dir, "link")
        os.symlink("real/keys.txt", link)
        rc, out, err = run(["batch", "-o", link, MANIFEST])
        self.assertEqual((rc, out, err), (0, "", ""))
        self.assertTrue(os.path.islink(link), "the symlink was replaced by a file")
        self.assertEqual(read(target), golden("manifest.keys"))
        self.assertEqual(sorted(os.listdir(os.path.join(self.dir, "real"))), ["keys.txt"])
        # A dangling symlink: its target is created.
        dangling = os.path.join(self.dir, "dangling")
        os.symlink("real/new.txt", dangling)
        rc, out, err = run(["batch", "-o", dangling, MANIFEST])
        self.assertEqual(rc, 0, err)
        self.assertTrue(os.path.islink(dangling))
        self.assertEqual(read(os.path.join(self.dir, "real", "new.txt")), golden("manifest.keys"))

    def test_fifo_is_written_in_place(self):
        fifo = os.path.join(self.dir, "fifo")
        os.mkfifo(fifo)
        got = []
        # A daemon: were the FIFO replaced, its reader would wait forever.
        reader = threading.Thread(target=lambda: got.append(read(fifo)), daemon=True)
        reader.start()
        rc, out, err = run(["batch", "-o", fifo, MANIFEST])
        reader.join(timeout=30)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(got, [golden("manifest.keys")])
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced")
        self.assertEqual(os.listdir(self.dir), ["fifo"])

    def test_character_device_is_written_in_place(self):
        null = os.path.join(self.dir, "null")
        try:
            os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))
            with open(null, "w") as f:
                f.write("x")
        except OSError as e:
            self.skipTest(f"cannot make a device node here: {e}")
        for cmd in (["batch", "-o", null, MANIFEST], ["scan", "-o", null, os.path.join(test_cli.DATA, "src")]):
            rc, out, err = run(cmd)
            self.assertEqual(rc, 0, err)
            self.assertTrue(stat.S_ISCHR(os.lstat(null).st_mode), f"{cmd[0]} replaced the device")
        self.assertEqual(os.listdir(self.dir), ["null"])

    def test_dev_stdout_and_dev_fd(self):
        rc, out, err = run(["batch", "-o", "/dev/stdout", MANIFEST])
        self.assertEqual((rc, out, err), (0, golden("manifest.keys"), ""))
        r, w = os.pipe()
        p = subprocess.Popen([test_cli.CCKEY, "batch", "-o", f"/dev/fd/{w}", MANIFEST], pass_fds=(w,))
        os.close(w)
        with os.fdopen(r) as f:
            data = f.read()
        self.assertEqual(p.wait(), 0)
        self.assertEqual(data, golden("manifest.keys"))
        # An inherited descriptor opened for appending keeps its contents.
        path = self.write("appended.txt", "first\n")
        with open(path, "a") as f:
            p = subprocess.run([test_cli.CCKEY, "batch", "-o", f"/dev/fd/{f.fileno()}", MANIFEST],
                               pass_fds=(f.fileno(),))
        self.assertEqual(p.returncode, 0)
        self.assertEqual(read(path), "first\n" + golden("manifest.keys"))

    def test_folder_is_refused(self):
        rc, out, err = run(["batch", "-o", self.dir, MANIFEST])
        self.assertEqual(rc, 1)
        self.assertIn("Is a directory", err)


class Signals(Tmp):
    def test_temporary_file_removed_and_signal_reraised(self):
        out = os.path.join(self.dir, "keys.txt")
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE):
            # The manifest comes from a pipe held open: the batch is in
            # progress, its temporary output file open, until we signal it.
            p = subprocess.Popen([test_cli.CCKEY, "batch", "-o", out, "-"], stdin=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            p.stdin.write(GOOD_LINE.encode())
            p.stdin.flush()
            wait_for(lambda: any(n.startswith(".cckey-out.") for n in os.listdir(self.dir)),
                     "the temporary output file")
            p.send_signal(sig)
            rc = p.wait()
            p.stdin.close()
            p.stderr.close()
            self.assertEqual(rc, -sig, f"{signal.Signals(sig).name}: the signal was not re-raised")
            self.assertEqual(os.listdir(self.dir), [], f"{signal.Signals(sig).name} left a file behind")


class Inputs(Tmp):
    def test_proc_file_is_not_the_empty_source(self):
        # /proc/self/cmdline says st_size 0 and holds the reader's command line.
        path = "/proc/self/cmdline"
        self.assertEqual(os.stat(path).st_size, 0)
        args = ["key", "-d", "0", "-n", "k", "-f", path]
        rc, out, err = run(args)
        self.assertEqual((rc, err), (0, ""))
        cmdline = b"\0".join([test_cli.CCKEY.encode()] + [a.encode() for a in args]) + b"\0"
        self.assertEqual(out.strip(), make_key(b"0", b"k", cmdline, []))
        # The same through a manifest's source_file.
        m = self.write("m.jsonl", '{"device": "0", "name": "k", "source_file": "/proc/self/cmdline"}\n')
        rc, out, err = run(["batch", m])
        cmdline = b"\0".join(a.encode() for a in [test_cli.CCKEY, "batch", m]) + b"\0"
        self.assertEqual((rc, out.strip()), (0, make_key(b"0", b"k", cmdline, [])))

    def shrinking(self, args, path):
        """Start cckey on a big sparse file, cut the file short once cckey
        has mapped it: the next read of the lost pages raises SIGBUS."""
        with open(path, "wb") as f:
            f.truncate(1 << 30)
        p = subprocess.Popen([test_cli.CCKEY] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)

        def mapped():
            try:
                return path in read(f"/proc/{p.pid}/maps")
            except OSError:
                return True   # gone already: the assertions below say why
        wait_for(mapped, "cckey to map the file")
        os.truncate(path, 4096)
        out, err = p.communicate()
        return p.returncode, out.decode(), err.decode()

    def test_shrinking_source_file_is_a_clear_error(self):
        src = os.path.join(self.dir, "big.cl")
        rc, out, err = self.shrinking(["key", "-d", "0", "-n", "k", "-f", src], src)
        self.assertEqual((rc, out), (1, ""))
        self.assertIn("shrank while it was being read", err)
        m = self.write("m.jsonl", '{"device": "0", "name": "k", "source_file": "big.cl"}\n')
        out_path = os.path.join(self.dir, "keys.txt")
        rc, out, err = self.shrinking(["batch", "-b", "cpu", "-o", out_path, m], src)
        self.assertEqual(rc, 1)
        self.assertIn("shrank while it was being read", err)
        self.assertEqual(sorted(os.listdir(self.dir)), ["big.cl", "m.jsonl"])


class WriteErrors(Tmp):
    def test_full_disk_is_an_error(self):
        with open("/dev/full", "w") as full:
            p = subprocess.run([test_cli.CCKEY, "batch", MANIFEST], stdout=full, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 1)
        self.assertIn("No space left on device", p.stderr.decode())

    def test_write_error_stops_the_batch_before_the_input_ends(self):
        # The manifest pipe stays open: only an error reported as it happens
        # lets the batch end. SIGPIPE ignored: EPIPE is a write error.
        r, w = os.pipe()
        os.close(r)
        p = subprocess.Popen([test_cli.CCKEY, "batch", "--chunk", "1", "-"], stdin=subprocess.PIPE, stdout=w,
                             stderr=subprocess.PIPE, restore_signals=False,
                             preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
        os.close(w)
        p.stdin.write(GOOD_LINE.encode() * 3)
        p.stdin.flush()
        try:
            rc = p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "still running after its output failed"
        err = p.stderr.read().decode()
        p.stdin.close()
        p.stderr.close()
        self.assertEqual(rc, 1)
        self.assertIn("Broken pipe", err)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_hardening.py PATH/TO/cckey [unittest args]")
    test_cli.CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
