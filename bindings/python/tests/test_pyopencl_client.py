"""A PyOpenCL program as a cache client: `cckey warm` compiles an OpenCL
kernel on PoCL into a store; the program finds the binary through the
binding (the device id from cckey.devices(), the key from
cckey.make_key), builds a cl.Program from it, runs it, and checks the
result against Python's own arithmetic. PyOpenCL comes from PyPI
(run_tests.sh installs it into the test venv)."""
import json
import os
import subprocess
from pathlib import Path

import pytest

import cckey

KERNEL = b"__kernel void scale(__global int *a, int k) { size_t i = get_global_id(0); a[i] = a[i] * k + (int)i; }\n"


def test_pyopencl_runs_the_binary_warm_stored(tmp_path: Path) -> None:
    cl = pytest.importorskip("pyopencl", reason="no PyOpenCL in this venv (run_tests.sh installs it)")
    np = pytest.importorskip("numpy")
    cli = os.environ.get("CCKEY_TEST_CLI", "")
    if not os.access(cli, os.X_OK):
        pytest.skip("no cckey command (run_tests.sh names it in CCKEY_TEST_CLI)")
    devs = [d for d in cckey.devices() if d["backend"] == "opencl" and d["usable"]]
    if not devs:
        pytest.skip("no usable OpenCL device (PoCL)")
    dev = devs[0]
    (tmp_path / "scale.cl").write_bytes(KERNEL)
    (tmp_path / "m.jsonl").write_text(json.dumps({"device": dev["id"], "name": "scale", "source_file": "scale.cl",
                                                  "options": []}) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CCKEY_")}
    p = subprocess.run([cli, "warm", "m.jsonl", "--cache-dir", "store"], cwd=tmp_path, env=env,
                       capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr
    key = cckey.make_key(dev["id"], "scale", KERNEL)
    with cckey.Store(tmp_path / "store") as store:
        binary = store.get(key)
    assert binary, "the binding's key misses what warm stored"
    cl_dev = next(d for pf in cl.get_platforms() for d in pf.get_devices()
                  if d.name == dev["name"] and d.driver_version == dev["driver"])
    ctx = cl.Context([cl_dev])
    prg = cl.Program(ctx, [cl_dev], [binary]).build()
    queue = cl.CommandQueue(ctx)
    data = np.arange(1000, dtype=np.int32) * 3 - 500
    buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=data)
    prg.scale(queue, data.shape, None, buf, np.int32(7))
    out = np.empty_like(data)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    assert out.tolist() == [v * 7 + i for i, v in enumerate(data.tolist())]
