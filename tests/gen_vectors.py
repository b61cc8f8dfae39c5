#!/usr/bin/env python3
"""Independent key vectors for the C library, from the recipe alone:

  key = hex(md5(device)) ":" hex(md5(name)) ":" hex(md5(source)) ":" hex(md5(canon(options)))

canon() sorts the (key, value) pairs stably by key, bytes compared unsigned
with a proper prefix first (exactly Python's bytes ordering), writes each as
hex(md5(k)) "=" hex(md5(v)) and joins them with ",".

Usage: gen_vectors.py OUT [--seed N] [--random N]

Each line of OUT is tab-separated:
  label  key  hex(device)  hex(name)  hex(source)  n  hex(k1)  hex(v1) ... hex(kn)  hex(vn)
(fields are hex-encoded so that any bytes survive; an empty field is empty).
Before writing, the generator checks itself on the examples of the issue
and exits non-zero if it disagrees."""
import argparse
import hashlib
import random
import sys


def md5hex(b: bytes) -> str:
    return hashlib.md5(b).hexdigest()


def canon(options):
    pairs = sorted(options, key=lambda kv: kv[0])  # sorted() is stable
    return b",".join(f"{md5hex(k)}={md5hex(v)}".encode() for k, v in pairs)


def make_key(device: bytes, name: bytes, source: bytes, options) -> str:
    return ":".join((md5hex(device), md5hex(name), md5hex(source), md5hex(canon(options))))


ISSUE_EXAMPLES = [
    ("issue_example_1", b"0", b"kernel_a", b"code", [],
     "cfcd208495d565ef66e7dff9f98764da:73d6273882d67981027dcbbf1e2ca012:"
     "c13367945d5d4c91047b3b50234aa7ab:d41d8cd98f00b204e9800998ecf8427e"),
    ("issue_example_2", b"NVIDIA H200|580.159.04", b"vec_add", b"__global__ void vec_add(float *a) {}",
     [(b"arch", b"sm_90"), (b"-O", b"3")],
     "45552c6dfd18efd7f912010b34adcbdc:5eafe7ed354bd56348049a429ad6c938:"
     "82d7291d76296093ecda1094eb146d1e:6ffd84b89a8fc5513e9e085c93eec14a"),
]


def self_check():
    ok = True
    for label, d, n, s, o, want in ISSUE_EXAMPLES:
        got = make_key(d, n, s, o)
        if got != want:
            print(f"gen_vectors: {label}: got {got}, the issue says {want}", file=sys.stderr)
            ok = False
    # The ordering canon() relies on, stated directly.
    if sorted([b"b", b"aa", b"a", b"B", b"\x80", b"a\x00"]) != [b"B", b"a", b"a\x00", b"aa", b"b", b"\x80"]:
        print("gen_vectors: bytes do not sort unsigned with prefixes first", file=sys.stderr)
        ok = False
    return ok


def pattern(n: int, salt: int = 0) -> bytes:
    return bytes((i * 131 + salt * 7 + 1) & 0xFF for i in range(n))


def fixed_cases():
    c = []
    add = lambda label, d, n, s, o=(): c.append((label, d, n, s, list(o)))
    for label, d, n, s, o, _ in ISSUE_EXAMPLES:
        add(label, d, n, s, o)

    add("all_empty", b"", b"", b"")
    add("empty_option", b"", b"", b"", [(b"", b"")])
    add("empty_key_option", b"dev", b"k", b"src", [(b"", b"v"), (b"k", b"")])
    add("nul_bytes", b"a\x00b", b"\x00", b"\x00\x00\x00", [(b"\x00", b"\x00x"), (b"x\x00", b"")])
    add("nul_only_source", b"d", b"n", b"\x00" * 64)
    add("separators_in_fields", b"a:b:c:d", b"x,y=z", b"k=v,k2=v2:",
        [(b"k=v", b"a,b"), (b"a:b", b":"), (b",", b"="), (b"=", b",")])
    # A value that spells out a canonical pair must not alias anything.
    fake = f"{md5hex(b'a')}={md5hex(b'b')}".encode()
    add("value_looks_canonical", b"d", b"n", b"s", [(b"a", fake)])
    add("non_utf8", b"\xff\xfe\x80", b"\xc3\x28", b"\xed\xa0\x80\xf8\x88\x80\x80\x80",
        [(b"\xc0\xaf", b"\xff"), (b"\x80", b"\xfe\xff")])
    add("utf8_text", "Gerät|α".encode(), "ядро".encode(), "/* ✓ */".encode(), [("ключ".encode(), "значение".encode())])

    # Equal keys keep their order: these two differ.
    add("dup_keys_order_1", b"d", b"n", b"s", [(b"-O", b"3"), (b"arch", b"sm_90"), (b"-O", b"2")])
    add("dup_keys_order_2", b"d", b"n", b"s", [(b"-O", b"2"), (b"arch", b"sm_90"), (b"-O", b"3")])
    add("dup_pairs", b"d", b"n", b"s", [(b"k", b"v")] * 5)
    add("dup_keys_many", b"d", b"n", b"s", [(b"D", str(i).encode()) for i in range(40)])

    # Byte order: B < a < a\0 < aa < b < \x80 < \xff, given in many orders.
    keys = [b"b", b"aa", b"a", b"B", b"\xff", b"a\x00", b"\x80"]
    for i in range(6):
        perm = keys[i:] + keys[:i]
        if i % 2:
            perm.reverse()
        add(f"byte_order_{i}", b"d", b"n", b"s", [(k, b"v" + k) for k in perm])
    add("prefix_first", b"d", b"n", b"s", [(b"abc", b"1"), (b"ab", b"2"), (b"a", b"3"), (b"", b"4")])

    # Every length 0..129 in each field, so each padding case is covered.
    for n in range(130):
        add(f"len_device_{n}", pattern(n, 1), b"n", b"s")
        add(f"len_name_{n}", b"d", pattern(n, 2), b"s")
        add(f"len_source_{n}", b"d", b"n", pattern(n, 3))
        add(f"len_option_{n}", b"d", b"n", b"s", [(pattern(n, 4), pattern(129 - n, 5))])
    for n in (191, 192, 193, 255, 256, 257, 447, 448, 449, 1000, 4095, 4096, 4097, 65535, 65536, 65537, 1 << 20):
        add(f"long_source_{n}", b"d", b"n", pattern(n, 6))
    for n in (440, 448, 456, 1024):
        add(f"long_device_{n}", pattern(n, 7), pattern(n // 3, 8), b"s", [(pattern(n // 5, 9), b"v")])

    # Option counts around the C library's insertion/merge sort switch.
    for count in (1, 2, 15, 16, 17, 31, 32, 33, 64, 100, 257):
        rng = random.Random(count)
        opts = [(bytes([rng.choice(b"aAbB-_")]) * rng.randint(0, 3), str(i).encode()) for i in range(count)]
        add(f"options_{count}", b"dev", b"name", b"src", opts)
    return c


def random_cases(seed: int, count: int):
    rng = random.Random(seed)

    def field(maxlen):
        n = rng.choice([0, 1, 2, rng.randint(0, 16), rng.randint(0, maxlen)])
        alphabet = rng.choice([b"ab:,=\x00", bytes(range(256))])
        return bytes(rng.choice(alphabet) for _ in range(n))

    out = []
    for i in range(count):
        nopt = rng.choice([0, 0, 1, 2, 3, rng.randint(0, 24)])
        opts = [(field(12), field(40)) for _ in range(nopt)]
        out.append((f"random_{i}", field(80), field(40), field(300), opts))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--random", type=int, default=2000)
    a = ap.parse_args()
    if not self_check():
        return 1
    with open(a.out, "w", encoding="ascii", newline="\n") as f:
        for label, d, n, s, o in fixed_cases() + random_cases(a.seed, a.random):
            cols = [label, make_key(d, n, s, o), d.hex(), n.hex(), s.hex(), str(len(o))]
            for k, v in o:
                cols += [k.hex(), v.hex()]
            f.write("\t".join(cols) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
