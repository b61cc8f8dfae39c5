"""Python binding bench: cckey.make_keys against a pure-Python hashlib loop
and against the C API (cckey_make_keys through ctypes, arrays built before
timing) on the same batches of short tuples.

    CCKEY_BUILD_DIR=build python bindings/python/bench/bench_cckey.py [--sizes 100000,1000000]

Every candidate's keys are compared with the hashlib loop's before timing.
Times are the best of --repeat runs; ratios are between candidates of one
run. Also times Source.key (memo hit) against make_key and hashlib.
"""
import argparse
import ctypes
import hashlib
import os
import platform
import random
import sys
import time

import cckey


def hashlib_keys(tuples):
    """The baseline: the loop a Python GPU stack writes today, idiomatic and
    not tuned either way: one hashlib.md5(...).hexdigest() per field, the
    options sorted by key and joined, no memo across tuples (a batch's
    fields are mostly distinct). Its keys are the oracle every candidate is
    checked against."""
    md5 = hashlib.md5
    out = []
    for device, name, source, options in tuples:
        pairs = sorted(options, key=lambda kv: kv[0])
        canon = ",".join(md5(k).hexdigest() + "=" + md5(v).hexdigest() for k, v in pairs)
        out.append(md5(device).hexdigest() + ":" + md5(name).hexdigest() + ":" + md5(source).hexdigest() + ":"
                   + md5(canon.encode()).hexdigest())
    return out


def suite_tuples(n):
    """A kernel suite: n // 100 sources of 4 KiB, each with 100 kernels, on 4
    devices, with three option sets (the OCaml bench's suite batch)."""
    rng = random.Random(11)
    sources = [bytes(rng.randrange(32, 127) for _ in range(4096)) for _ in range(max(1, n // 100))]
    devices = [f"GPU {d}|580.159.04".encode() for d in range(4)]
    option_sets = [[], [(b"-O", b"3")], [(b"-arch", b"sm_90"), (b"-O", b"2")]]
    return [(devices[i % 4], f"kernel_{i}".encode(), sources[i // 100], option_sets[i % 3]) for i in range(n)]


def short_tuples(n):
    """A suite of short kernels: 4 devices, a distinct name and source per
    kernel, one of three option sets."""
    devices = [f"GPU {d}|580.159.04".encode() for d in range(4)]
    option_sets = [[], [(b"-O", b"3")], [(b"-arch", b"sm_90"), (b"-O", b"2")]]
    return [(devices[i % 4], f"kernel_{i}".encode(), f"__global__ void kernel_{i}(float *x) {{ x[0] = {i}; }}".encode(),
             option_sets[i % 3]) for i in range(n)]


class Bytes(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class Option(ctypes.Structure):
    _fields_ = [("key", Bytes), ("value", Bytes)]


class Tuple(ctypes.Structure):
    _fields_ = [("device", Bytes), ("name", Bytes), ("source", Bytes), ("options", ctypes.POINTER(Option)),
                ("n_options", ctypes.c_size_t)]


class CApi:
    """cckey_make_keys from libcckey.so with the batch prepared up front."""

    def __init__(self, build):
        self.lib = ctypes.CDLL(os.path.join(build, "libcckey.so"))
        self.lib.cckey_make_keys.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        self.lib.cckey_batch_config_new.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self.lib.cckey_batch_config_set_backend.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self.cfg = ctypes.c_void_p()
        assert self.lib.cckey_batch_config_new(ctypes.byref(self.cfg)) == 0
        assert self.lib.cckey_batch_config_set_backend(self.cfg, 1) == 0   # CCKEY_BACKEND_CPU

    def prepare(self, tuples):
        keep = []
        made = {}   # one C buffer or options array per Python object, as a C caller would share them

        def b(data):
            if id(data) not in made:
                buf = ctypes.create_string_buffer(data, len(data))
                keep.append((data, buf))
                made[id(data)] = Bytes(ctypes.cast(buf, ctypes.c_void_p), len(data))
            return made[id(data)]

        def options(opts):
            if id(opts) not in made:
                o = (Option * max(1, len(opts)))(*[Option(b(k), b(v)) for k, v in opts])
                keep.append((opts, o))
                made[id(opts)] = ctypes.cast(o, ctypes.POINTER(Option))
            return made[id(opts)]

        arr = (Tuple * len(tuples))()
        for i, (d, n, s, opts) in enumerate(tuples):
            arr[i] = Tuple(b(d), b(n), b(s), options(opts), len(opts))
        out = ctypes.create_string_buffer(132 * len(tuples))
        return arr, out, keep

    def run(self, prepared):
        arr, out, _ = prepared
        assert self.lib.cckey_make_keys(out, arr, len(arr), self.cfg) == 0
        return out

    @staticmethod
    def keys(out, n):
        raw = out.raw
        return [raw[i * 132:i * 132 + 131].decode() for i in range(n)]


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_batch(label, tuples, capi, repeat):
    n = len(tuples)
    want = hashlib_keys(tuples)
    assert cckey.make_keys(tuples, backend="cpu") == want, "binding differs from hashlib"
    prepared = capi.prepare(tuples)
    assert CApi.keys(capi.run(prepared), n) == want, "C API differs from hashlib"
    t_hash = best(lambda: hashlib_keys(tuples), 1 if n >= 1_000_000 else repeat)
    t_bind = best(lambda: cckey.make_keys(tuples, backend="cpu"), repeat)
    t_c = best(lambda: capi.run(prepared), repeat)
    print(f"| {label} | {n} | {t_hash:.3f} | {t_bind:.3f} | {t_c:.3f} | {t_hash / t_bind:.1f}x | {t_bind / t_c:.2f}x |")


def bench_memo(repeat):
    source = os.urandom(2048).hex().encode()   # 4 KiB
    src = cckey.Source(source)
    args = (b"NVIDIA H200|580.159.04", b"vec_add", [(b"-O", b"3")])
    n = 200_000
    key = src.key(*args)
    assert key == hashlib_keys([(args[0], args[1], source, args[2])])[0] == cckey.make_key(args[0], args[1], source, args[2])
    table = {(args[0], args[1], b"-O", b"3"): key}
    lookup_key = (args[0], args[1], b"-O", b"3")

    def loop(f):
        for _ in range(n):
            f()

    t_memo = best(lambda: loop(lambda: src.key(*args)), repeat) / n
    t_make = best(lambda: loop(lambda: cckey.make_key(args[0], args[1], source, args[2])), repeat) / n
    t_dict = best(lambda: loop(lambda: table[lookup_key]), repeat) / n
    t_hash = best(lambda: loop(lambda: hashlib_keys([(args[0], args[1], source, args[2])])), repeat) / n
    print("\n| call (4 KiB source) | ns per key |\n| --- | ---: |")
    for name, t in (("Source.key (memo hit)", t_memo), ("make_key", t_make), ("hashlib recipe", t_hash),
                    ("dict lookup (baseline)", t_dict)):
        print(f"| {name} | {t * 1e9:.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build", default=os.environ.get("CCKEY_BUILD_DIR", "build"))
    a = ap.parse_args()
    capi = CApi(a.build)
    print(f"Python {platform.python_version()}, cckey {cckey.version()}, {os.cpu_count()} CPUs, backend cpu, "
          f"threads 0 (all cores), best of {a.repeat}\n")
    print("| batch | tuples | hashlib loop s | make_keys s | C API s | make_keys vs hashlib | make_keys / C API |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in (int(x) for x in a.sizes.split(",")):
        bench_batch("short (distinct names and sources)", short_tuples(n), capi, a.repeat)
    bench_batch("suite (1000 sources of 4 KiB x 100 kernels)", suite_tuples(100_000), capi, a.repeat)
    bench_memo(a.repeat)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
