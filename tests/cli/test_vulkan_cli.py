#!/usr/bin/env python3
"""Vulkan end to end through the CLI, on Mesa's lavapipe: `cckey devices`
lists it, `cckey scan` pairs it with GLSL and HLSL sources only, `cckey
warm` stores SPIR-V that `cache get` returns, a second warm compiles
nothing, an include edit recompiles exactly the shader that includes it, and
a warmed module run on lavapipe computes what Python computes.

Usage: test_vulkan_cli.py PATH/TO/cckey PATH/TO/vk-run [unittest args]

Oracles: spirv-val (SPIR-V validity), `cckey key` (the keys), tests/vk-run
(its own Vulkan code runs a stored module) against the formulas below, and
the store's files. Exit 77 with one line where lavapipe or shaderc is
absent."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

CCKEY = VK_RUN = None
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data", "vulkan")
N = 256


def run(args, cwd=None, env=None):
    e = dict(os.environ)
    e.pop("CCKEY_CACHE_DIR", None)
    e.update(env or {})
    p = subprocess.run([CCKEY] + args, cwd=cwd, capture_output=True, timeout=300, env=e)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def lavapipe():
    """lavapipe's identity as vulkaninfo (vulkan-tools) gives its fields:
    deviceName|driverVersion|pipelineCacheUUID, or None with why."""
    if not shutil.which("vulkaninfo"):
        return None, "no vulkaninfo (vulkan-tools) to tell whether lavapipe is here"
    p = subprocess.run(["vulkaninfo"], capture_output=True, text=True)
    drv = name = None
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(driverVersion|deviceName|pipelineCacheUUID)\s*= (.*)$", line)
        if not m:
            continue
        if m.group(1) == "driverVersion":
            drv = re.search(r"\((\d+)\)", m.group(2)).group(1)
        elif m.group(1) == "deviceName":
            name = m.group(2) if m.group(2).startswith("llvmpipe") else None
        elif name:
            return "%s|%s|%s" % (name, drv, m.group(2).replace("-", "")), ""
    return None, "no lavapipe (mesa-vulkan-drivers) here"


def mix32(x, scale):
    return (x * scale + ((x >> 3) ^ 0x9E3779B9)) & 0xFFFFFFFF


def inputs():
    return [(i * 2654435761 + 12345) & 0xFFFFFFFF for i in range(N)]


class Vulkan(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="cckey-vk-")
        self.suite = os.path.join(self.dir, "suite")
        os.makedirs(os.path.join(self.suite, "inc"))
        for f in ("mix.comp", "inc/mix.glsl", "ops.hlsl", "ops_common.hlsli"):
            shutil.copy(os.path.join(DATA, f), os.path.join(self.suite, f))
        with open(os.path.join(self.suite, "vadd.cl"), "w") as f:   # not a shader: no Vulkan device for it
            f.write("__kernel void vadd(__global float *a) { a[0] += 1.0f; }\n")
        self.store = os.path.join(self.dir, "store")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def scan(self, *extra):
        rc, out, err = run(["scan", "suite", "-O", "-D SCALE=3 -I suite/inc", "-o", "m.jsonl"] + list(extra),
                           cwd=self.dir)
        self.assertEqual(rc, 0, err)
        with open(os.path.join(self.dir, "m.jsonl")) as f:
            return [json.loads(line) for line in f]

    def warm(self, manifest="m.jsonl", env=None):
        rc, out, err = run(["warm", manifest, "--cache-dir", self.store, "--format", "jsonl"], cwd=self.dir, env=env)
        return rc, [json.loads(line) for line in out.splitlines()], err

    def key(self, t):
        args = ["key", "--device", t["device"], "--name", t["name"], "--source-file", t["source_file"],
                "--options-json", json.dumps(t["options"])]
        rc, out, err = run(args, cwd=self.dir)
        self.assertEqual(rc, 0, err)
        return out.strip()

    def get(self, t):
        path = os.path.join(self.dir, t["name"] + ".spv")
        rc, _, err = run(["cache", "get", self.key(t), "--cache-dir", self.store, "-o", path])
        self.assertEqual(rc, 0, err)
        return path

    def test_devices_scan_warm_get_run(self):
        rc, out, _ = run(["devices"])
        self.assertRegex(out, r"(?m)^vulkan +available.*\n +\[\d+\] llvmpipe")
        self.assertIn("device id: %s\n" % DEVICE, out)
        tuples = self.scan()
        vk = [t for t in tuples if t["device"] == DEVICE]
        # Lavapipe takes the shaders, and only them; their entries by language.
        self.assertEqual(sorted((t["language"], t["name"]) for t in vk),
                         [("glsl", "main"), ("hlsl", "flip"), ("hlsl", "scale")])
        self.assertFalse([t for t in tuples if t["device"] != DEVICE and t["language"] in ("glsl", "hlsl")])
        self.assertFalse([t for t in vk if t["source_file"].endswith(".cl")])
        with open(os.path.join(self.dir, "vk.jsonl"), "w") as f:
            f.writelines(json.dumps(t) + "\n" for t in vk)
        rc, res, err = self.warm("vk.jsonl")
        self.assertEqual((rc, [r["result"] for r in res]), (0, ["compiled"] * 3), err)
        for t in vk:
            path = self.get(t)
            with open(path, "rb") as f:
                self.assertEqual(f.read(4), bytes.fromhex("03022307"))   # 0x07230203, little-endian
            if shutil.which("spirv-val"):
                p = subprocess.run(["spirv-val", "--target-env", "vulkan1.3", path], capture_output=True)
                self.assertEqual(p.returncode, 0, p.stderr)
        # The stored modules compute what Python does.
        want = {"main": [mix32(x, 3) for x in inputs()], "scale": [(x * 3 + 7) & 0xFFFFFFFF for x in inputs()],
                "flip": [~x & 0xFFFFFFFF for x in inputs()]}
        for t in vk:
            group = {"main": 64, "scale": 64, "flip": 32}[t["name"]]
            p = subprocess.run([VK_RUN, self.get(t), t["name"], "0", "1", str(group), str(N)], capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertEqual([int(v) for v in p.stdout.split()], want[t["name"]], t["name"])
        # A second warm compiles nothing.
        rc, out, err = run(["warm", "vk.jsonl", "--cache-dir", self.store, "--format", "json"], cwd=self.dir)
        summary = json.loads(out)
        self.assertEqual((rc, summary["compiled"], summary["builds"], summary["cached"]), (0, 0, 0, 3), err)
        # An include edit recompiles exactly the shader that includes it; a
        # same-named file in warm's working folder is no header of it (shaderc
        # searches as glslc does), so its presence changes nothing.
        with open(os.path.join(self.dir, "mix.glsl"), "w") as f:
            f.write("uint mix32(uint x) { return 0u; }\n")
        rc, out, err = run(["warm", "vk.jsonl", "--cache-dir", self.store, "--format", "json"], cwd=self.dir)
        self.assertEqual((rc, json.loads(out)["compiled"]), (0, 0), err)
        with open(os.path.join(self.suite, "inc", "mix.glsl"), "a") as f:
            f.write("// edited\n")
        rc, res, err = self.warm("vk.jsonl")
        self.assertEqual(rc, 0, err)
        self.assertEqual(sorted((r["name"], r["result"]) for r in res),
                         [("flip", "cached"), ("main", "compiled"), ("scale", "cached")])
        self.assertEqual([r["reason"] for r in res if r["name"] == "main"], ["header_changed"])

    def test_scan_device_prefix_and_exact(self):
        tuples = self.scan("-d", "vulkan:" + DEVICE, "--language", "vulkan")
        self.assertEqual(sorted(t["name"] for t in tuples), ["flip", "main", "scale"])
        self.assertEqual({t["device"] for t in tuples}, {DEVICE})
        shutil.copy(os.path.join(DATA, "hidden.hlsl"), self.suite)
        rc, out, err = run(["scan", "--exact", "--list", "--language", "hlsl", "suite", "-O", "-D SCALE=3"],
                           cwd=self.dir)
        self.assertEqual(rc, 0, err)
        self.assertEqual(re.findall(r": (\w+)$", out, re.M), ["shown", "scale", "flip"])

    def test_failures_are_per_tuple(self):
        for f in ("bad.comp", "wide.comp"):
            shutil.copy(os.path.join(DATA, f), self.suite)
        tuples = [t for t in self.scan("-d", "glsl:" + DEVICE, "--language", "glsl")]
        rc, res, err = self.warm()
        self.assertEqual(rc, 1)
        by_file = {r["name"] + ":" + t["source_file"]: r for r, t in zip(res, tuples)}
        self.assertEqual(by_file["main:suite/mix.comp"]["result"], "compiled")
        self.assertIn("suite/bad.comp:4: error", by_file["main:suite/bad.comp"]["error"])
        self.assertIn('the Vulkan device "%s" refuses main' % DEVICE, by_file["main:suite/wide.comp"]["error"])
        for t in tuples:
            if t["source_file"] != "suite/mix.comp":   # a failed build stores nothing
                rc, _, _ = run(["cache", "get", self.key(t), "--cache-dir", self.store, "-o", os.devnull])
                self.assertEqual(rc, 1, t)

    def test_no_loader_and_foreign_device(self):
        self.scan("-d", "vulkan:" + DEVICE, "--language", "vulkan")
        rc, res, err = self.warm(env={"CCKEY_VULKAN_LIBRARY": "/nonexistent/libvulkan.so.1"})
        self.assertEqual(rc, 1)
        for r in res:
            self.assertEqual(r["result"], "failed")
            self.assertIn("--target-env=vulkan1.N", r["error"])
            self.assertIn("the Vulkan devices here: none (no Vulkan loader (/nonexistent/libvulkan.so.1)", r["error"])
        # Another machine's GPU: compiled for the Vulkan version given, without a pipeline.
        other = "Some GPU|42|00112233445566778899aabbccddeeff"
        rc, out, err = run(["scan", "suite", "--language", "glsl", "-d", "vulkan:" + other, "-O",
                            "-D SCALE=3 -I suite/inc --target-env=vulkan1.1", "-o", "far.jsonl"], cwd=self.dir)
        self.assertEqual(rc, 0, err)
        rc, res, err = self.warm("far.jsonl", env={"CCKEY_VULKAN_LIBRARY": "/nonexistent/libvulkan.so.1"})
        self.assertEqual((rc, [r["result"] for r in res]), (0, ["compiled"]), err)


if __name__ == "__main__":
    CCKEY, VK_RUN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    del sys.argv[1:3]
    DEVICE, why = lavapipe()
    if not DEVICE:
        print("skipped: %s" % why)
        sys.exit(77)
    unittest.main()
