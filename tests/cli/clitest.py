"""Helpers the CLI tests share (tests/cli, and tests/remote through its
sys.path): the environment a test runs cckey in, a run of cckey, the OpenCL
device this host has, a run on a pseudo-terminal (for what cckey shows only
to a person: progress bars), and test cases in fresh folders."""
import ctypes
import ctypes.util
import os
import pty
import re
import select
import shutil
import subprocess
import tempfile
import unittest


# The repository's examples folder (kernels, CI and cluster scripts).
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples")
# warm's summary line: compiled, builds, already cached, failed.
WARM_SUMMARY = re.compile(r"(\d+) compiled in (\d+) builds?, (\d+) already cached, (\d+) failed")


def env(**extra):
    """os.environ without the settings that would point cckey at a user's
    own cache or remotes, plus extra."""
    e = {k: v for k, v in os.environ.items() if k not in ("CCKEY_REMOTE", "CCKEY_CACHE_DIR")}
    e.update(extra)
    return e


def run(cckey, args, cwd=None, timeout=600, environ=None):
    """cckey's exit status, stdout and stderr (text; bad UTF-8 replaced) for
    args, in env() unless environ is given."""
    p = subprocess.run([cckey] + args, cwd=cwd, capture_output=True, timeout=timeout,
                       env=environ if environ is not None else env())
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def write_file(folder, rel, data):
    """data (text as UTF-8, or bytes) at folder/rel, its folders made; the
    path."""
    path = os.path.join(folder, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def summary(out):
    """(compiled, already cached, failed) of warm's summary line in out."""
    m = WARM_SUMMARY.search(out)
    assert m, out
    return int(m.group(1)), int(m.group(3)), int(m.group(4))


def opencl_device(cckey):
    """The device id `cckey devices` gives the first OpenCL device, or None."""
    p = subprocess.run([cckey, "devices"], capture_output=True, env=env())
    m = re.search(r"^opencl\s+available.*?device id: (.+?)$", p.stdout.decode(), re.M | re.S)
    return m.group(1).strip() if m else None


def opencl_or_skip(cckey):
    """opencl_device(cckey), or skip the test (unittest.SkipTest) where
    there is none."""
    device = opencl_device(cckey)
    if not device:
        raise unittest.SkipTest("no OpenCL device (PoCL) here")
    return device


def load_nvrtc():
    """NVRTC (libnvrtc.so, from the loader's path, CUDA's usual folder or
    wherever ctypes finds it) as a ctypes library, or None."""
    for name in ("libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so", ctypes.util.find_library("nvrtc")):
        if not name:
            continue
        try:
            return ctypes.CDLL(name)
        except OSError:
            pass
    return None


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


class TmpTest(unittest.TestCase):
    """A test in a fresh folder of its own, self.tmp (its name starts with
    prefix), removed afterwards; self.write puts files in it."""
    prefix = "cckey-test-"

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix=self.prefix)

    def tearDown(self):
        if hasattr(self, "tmp"):   # a setUp skipped before making it
            shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, rel, data):
        return write_file(self.tmp, rel, data)


class SharedRootTest(unittest.TestCase):
    """Tests that share a class-wide folder cls.root (made by the class's
    setUpClass, removed here afterwards) and each get a fresh folder in it,
    self.tmp; self.path names a file there."""
    root = None

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.root, ignore_errors=True)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(dir=self.root)

    def path(self, name):
        return os.path.join(self.tmp, name)
