#!/usr/bin/env python3
"""Hardening of the command line: where -o writes, signals, files that lie
about their size, files that shrink, write errors.

Usage: test_hardening.py PATH/TO/cckey [unittest args]"""
import json
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


def run(args, env_extra=None, **kw):
    if not env_extra:
        return test_cli.run(args, **kw)
    p = subprocess.run([test_cli.CCKEY] + args, env=dict(os.environ, **env_extra), capture_output=True, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


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

    def test_shrinking_manifest_is_the_same_clear_error(self):
        # batch reads a manifest through windows of it mapped read-only
        # (host/cli/manifest/window.c): one that shrinks under a window is
        # the same clear error, and -o is left unwritten.
        m = os.path.join(self.dir, "m.jsonl")
        out_path = os.path.join(self.dir, "keys.txt")
        rc, out, err = self.shrinking(["batch", "-b", "cpu", "--max-line", "2G", "-o", out_path, m], m)
        self.assertEqual(rc, 1, err)
        self.assertIn("shrank while it was being read", err)
        self.assertEqual(sorted(os.listdir(self.dir)), ["m.jsonl"])

    def test_shrinking_file_in_scan_and_warm_is_the_same_clear_error(self):
        # Every command that maps sources, not only key and batch: a scanned
        # file, and a warm manifest's source_file (digested before any build,
        # so the device need not exist).
        src = os.path.join(self.dir, "big.cl")
        rc, out, err = self.shrinking(["scan", src], src)
        self.assertEqual((rc, out), (1, ""))
        self.assertIn("shrank while it was being read", err)
        m = self.write("m.jsonl", '{"device": "0", "name": "k", "source_file": "big.cl"}\n')
        cache = os.path.join(self.dir, "cache")
        rc, out, err = self.shrinking(["warm", "-q", "--cache-dir", cache, m], src)
        self.assertEqual(rc, 1, err)
        self.assertIn("shrank while it was being read", err)
        entries = [f for _, _, fs in os.walk(cache) for f in fs if len(f) > 32 and f[32:33] == "-"]
        self.assertEqual(entries, [])


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


class Verify(Tmp):
    """A device that returns wrong digests silently (the test build's
    CCKEY_FAULT_CORRUPT): --verify repairs them and says so."""

    def setUp(self):
        super().setUp()
        self.testing = os.path.join(os.path.dirname(test_cli.CCKEY), "cckey-testing")
        if not os.access(self.testing, os.X_OK):
            self.skipTest("no cckey-testing beside cckey")
        p = subprocess.run([self.testing, "batch", "-b", "opencl", MANIFEST], capture_output=True)
        if p.returncode != 0:
            self.skipTest("no OpenCL runtime here")

    def corrupt(self, args):
        env = dict(os.environ, CCKEY_FAULT_CORRUPT="1")
        p = subprocess.run([self.testing, "batch", "-b", "opencl"] + args + [MANIFEST], env=env, capture_output=True)
        return p.returncode, p.stdout.decode(), p.stderr.decode()

    def test_without_verify_the_fault_changes_keys(self):
        rc, out, err = self.corrupt([])
        self.assertEqual(rc, 0)
        self.assertNotEqual(out, golden("manifest.keys"), "the fault hook changed nothing")

    def test_verify_repairs_and_names_the_device(self):
        for args in (["--verify"], ["--verify=all"], ["--verify=sample"], ["--verify=sample", "--verify-seed", "7"]):
            rc, out, err = self.corrupt(args)
            self.assertEqual((rc, out), (0, golden("manifest.keys")), f"{args}: {err}")
            self.assertRegex(err, r'warning: the opencl device \d+ ".+" returned \d+ wrong digests? of \d+', args)

    def test_verify_seed_needs_sample_and_a_number(self):
        for args in (["--verify-seed", "3"], ["--verify=sample", "--verify-seed", "-1"],
                     ["--verify=sample", "--verify-seed", "1x"], ["--verify=sample", "--verify-seed", ""]):
            rc, out, err = run(["batch"] + args + [MANIFEST])
            self.assertEqual((rc, out), (2, ""), args)
            self.assertIn("--verify-seed", err)


class Settings(Tmp):
    def test_tuning_variables_garbage_is_an_error_naming_it(self):
        for var, val in (("CCKEY_GPU_CHUNK_BYTES", "-1"), ("CCKEY_GPU_CHUNK_BYTES", "12Q"),
                         ("CCKEY_GPU_LONG_BYTES", "5x"), ("CCKEY_GPU_CPU_SHARE", "2")):
            for backend in ("cpu", "opencl", "auto"):
                rc, out, err = run(["batch", "--backend", backend, MANIFEST],
                                   env_extra={var: val})
                self.assertEqual((rc, out), (2, ""), f"{var}={val} --backend {backend}: {err}")
                self.assertIn(f"{var}={val}", err)

    def test_force_isa_bogus_or_unsupported_is_refused(self):
        import platform
        missing = "neon" if platform.machine() in ("x86_64", "AMD64") else "avx512"
        for val, why in (("bogus", "expected scalar, sse2"), (missing, "this CPU cannot run it")):
            rc, out, err = run(["key", "-d", "d", "-n", "n", "-s", "s"], env_extra={"CCKEY_FORCE_ISA": val})
            self.assertEqual((rc, out), (2, ""), val)
            self.assertIn(f"CCKEY_FORCE_ISA={val}: {why}", err)
        rc, out, err = run(["key", "-d", "d", "-n", "n", "-s", "s"], env_extra={"CCKEY_FORCE_ISA": "scalar"})
        self.assertEqual((rc, out.strip()), (0, make_key(b"d", b"n", b"s", [])))

    def test_max_size_parsing(self):
        m = self.write("m.jsonl", "")
        cache = os.path.join(self.dir, "c")
        for bad in (" -5", "-5", "+5", " 5", "5 ", "5iB", "5KiBB", "5X", "", "0", "99999999999999999999",
                    "17179869184G"):
            rc, out, err = run(["warm", "--max-size", bad, "--cache-dir", cache, m])
            self.assertEqual(rc, 2, repr(bad))
            self.assertIn("--max-size", err)
        for good in ("5", "5K", "5k", "5KiB", "5KB", "2G", "1T"):
            rc, out, err = run(["warm", "--max-size", good, "--cache-dir", cache, m])
            self.assertEqual(rc, 0, f"{good!r}: {err}")


class Scan(Tmp):
    KERNEL = "__kernel void k(void) {}\n"

    def test_deep_nesting_is_refused_in_little_memory(self):
        path = self.write("deep.cl", b"{" * (100 << 20))
        # A fresh interpreter measures only its own child; the address-space
        # limit turns the old per-brace growth into a quick failure.
        # (Not under a sanitizer, whose shadow memory needs the address space.)
        with open(test_cli.CCKEY, "rb") as f:
            binary = f.read()
        sanitized = b"__asan_init" in binary or b"__tsan_init" in binary
        probe = ("import resource, subprocess, sys\n"
                 "lim = lambda: " + ("None" if sanitized else
                                     "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))") + "\n"
                 "p = subprocess.run(sys.argv[1:], capture_output=True, preexec_fn=lim)\n"
                 "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
                 "sys.stdout.write(p.stderr.decode())\n")
        p = subprocess.run([sys.executable, "-c", probe, test_cli.CCKEY, "scan", "--list", path],
                           capture_output=True, timeout=300)
        first, _, err = p.stdout.decode().partition("\n")
        rc, rss_kb = map(int, first.split())
        self.assertEqual(rc, 2, err)
        self.assertIn("deep.cl:1: braces nested deeper than 4096 levels", err)
        self.assertLess(rss_kb, 64 * 1024, "peak RSS in KiB")
        # Just under the limit, with braces in comments and literals that do
        # not count, a kernel after it is still found.
        ok = self.write("ok.cl", "__kernel void a(void) " + "{" * 4096 + ' /* { */ "{" \'{\' // {\n' +
                        "}" * 4096 + "\n" + self.KERNEL)
        rc, out, err = run(["scan", "--list", ok])
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual([l.split(": ")[1] for l in out.splitlines()], ["a", "k"])

    def test_one_file_under_two_names_is_listed_once(self):
        os.makedirs(os.path.join(self.dir, "d"))
        self.write("d/e.cl", self.KERNEL)
        os.symlink("d/e.cl", os.path.join(self.dir, "link.cl"))
        rc, out, err = run(["scan", "--list", "d/e.cl", "./d/e.cl", "."], cwd=self.dir)
        self.assertEqual((rc, err), (0, ""))
        self.assertEqual(len(out.splitlines()), 1, out)

    def test_non_utf8_file_name_is_skipped_with_a_warning(self):
        os.makedirs(os.path.join(self.dir, "u"))
        self.write("u/good.cl", self.KERNEL)
        with open(os.path.join(self.dir.encode(), b"u", b"bad\xff.cl"), "w") as f:
            f.write(self.KERNEL)
        rc, out, err = run(["scan", "-d", "dev", "u"], cwd=self.dir)
        self.assertEqual(rc, 0, err)
        self.assertEqual([json.loads(l)["source_file"] for l in out.splitlines()], ["u/good.cl"])
        self.assertIn("skipping u/bad\\xff.cl: its name is not UTF-8", err)

    def test_jsonl_error_with_a_non_utf8_manifest_name(self):
        m = os.path.join(self.dir.encode(), b"m\xff.jsonl")
        with open(m, "w") as f:
            f.write('{"device": 1}\n')
        p = subprocess.run([test_cli.CCKEY.encode(), b"batch", b"-k", b"--format", b"jsonl", m], capture_output=True)
        self.assertEqual(p.returncode, 2)
        row = json.loads(p.stdout)
        self.assertIn("m\\xff.jsonl:1:", row["error"])
        self.assertIn("must be a string", row["error"])


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_hardening.py PATH/TO/cckey [unittest args]")
    test_cli.CCKEY = os.path.abspath(sys.argv.pop(1))
    unittest.main()
