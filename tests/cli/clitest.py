"""Helpers the CLI tests share: the environment a test runs cckey in, the
OpenCL device this host has, and a run on a pseudo-terminal (for what cckey
shows only to a person: progress bars)."""
import os
import pty
import re
import select
import subprocess
import tempfile
import unittest


def env(**extra):
    """os.environ without the settings that would point cckey at a user's
    own cache or remotes, plus extra."""
    e = {k: v for k, v in os.environ.items() if k not in ("CCKEY_REMOTE", "CCKEY_CACHE_DIR")}
    e.update(extra)
    return e


def opencl_device(cckey):
    """The device id `cckey devices` gives the first OpenCL device, or None."""
    p = subprocess.run([cckey, "devices"], capture_output=True, env=env())
    m = re.search(r"^opencl\s+available.*?device id: (.+?)$", p.stdout.decode(), re.M | re.S)
    return m.group(1).strip() if m else None


def run_on_pty(argv, cwd=None, timeout=600, environ=None):
    """argv's exit status and everything it wrote to its terminal (stdout
    and stderr are one pseudo-terminal)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, close_fds=True,
                         env=environ if environ is not None else env())
    os.close(slave)
    chunks = []
    while True:
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            break
        try:
            data = os.read(master, 1 << 16)
        except OSError:   # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return p.wait(timeout=timeout), b"".join(chunks).decode("utf-8", "replace")


class OpenCLTest(unittest.TestCase):
    """A test on this host's OpenCL device (PoCL in CI), in a fresh folder
    (self.dir) of its own. Set OpenCLTest.cckey before unittest.main()."""
    cckey = None

    @classmethod
    def setUpClass(cls):
        cls.device = opencl_device(cls.cckey)
        if not cls.device:
            raise unittest.SkipTest("no OpenCL device (PoCL) here")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()
