"""Which Sarek recipe cckey matches. cckey's key is the one of Sarek's
spoc/framework/Compile_cache.ml at 21feb5c (each option pair digested:
hex(md5(k)) "=" hex(md5(v))). The older public revision 43b2be1 joined the
raw pairs ("k=v,k2=v2") and digested that. The vectors below were computed
with the older recipe (old_recipe, written from 43b2be1's text on hashlib);
cckey gives the same key exactly when a tuple has no options (both
canonical forms are then "", md5 d41d8cd9...), and a different one
whenever it has any."""
import hashlib
from typing import List, Tuple

import pytest

import cckey

Tuple4 = Tuple[str, str, str, List[Tuple[str, str]]]

OLD_43B2BE1: List[Tuple[Tuple4, str]] = [
    (("NVIDIA H200|580.159.04", "vec_add", "__global__ void vec_add() {}", []),
     "45552c6dfd18efd7f912010b34adcbdc:5eafe7ed354bd56348049a429ad6c938:"
     "7d72a4e339d6b3516da1130688e41bf7:d41d8cd98f00b204e9800998ecf8427e"),
    (("pthread-skylake-avx512-AMD EPYC|3.1+debian", "saxpy",
      "__kernel void saxpy(__global float *y) { y[0] *= 2.0f; }", []),
     "d5819e8814502508c2c7c1931344f0d4:e78844b8b75d921bd7c023be0ec0fd6c:"
     "78f8fea338a15448f5fc61c27bc3d544:d41d8cd98f00b204e9800998ecf8427e"),
    (("dev", "k", "src", [("-O", "3")]),
     "e77989ed21758e78331b20e477fc5582:8ce4b16b22b58894aa86c421e8759df3:"
     "25d902c24283ab8cfbac54dfa101ad31:4cb65ab70a0c86a5bf48bc3b2b34dd22"),
    (("dev", "k", "src", [("a", "1,b=2")]),
     "e77989ed21758e78331b20e477fc5582:8ce4b16b22b58894aa86c421e8759df3:"
     "25d902c24283ab8cfbac54dfa101ad31:9dc867b7f2bf1e40160f90e46628512e"),
    (("dev", "k", "src", [("b", "2"), ("a", "1")]),
     "e77989ed21758e78331b20e477fc5582:8ce4b16b22b58894aa86c421e8759df3:"
     "25d902c24283ab8cfbac54dfa101ad31:9dc867b7f2bf1e40160f90e46628512e"),
    (("llvmpipe (LLVM 15.0.6, 256 bits)|1|76616c2d257300000000000000000000", "main",
      "#version 450\nvoid main() {}\n", [("-D", "SCALE=2"), ("-O", "")]),
     "3ca33057b93ab46aa159d56eed83364c:fad58de7366495db4650cfefac2fcd61:"
     "74e60f4e546f28dcb3d8f483f76ea4f8:6e54f6ee31edaa576b14a724578e4427"),
]


def hexmd5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


def old_recipe(device: str, name: str, source: str, options: List[Tuple[str, str]]) -> str:
    """43b2be1's make_key: options sorted by key, joined raw."""
    canon = ",".join(k + "=" + v for k, v in sorted(options, key=lambda kv: kv[0].encode()))
    return ":".join([hexmd5(device), hexmd5(name), hexmd5(source), hexmd5(canon)])


@pytest.mark.parametrize("t, old", OLD_43B2BE1)
def test_the_two_recipes_differ_only_with_options(t: Tuple4, old: str) -> None:
    assert old_recipe(*t) == old                       # the vector is the old recipe's
    key = cckey.make_key(*t)
    if t[3]:
        assert key != old and key[:99] == old[:99]     # only the options digest differs
    else:
        assert key == old


def test_the_old_join_was_ambiguous_and_ours_is_not() -> None:
    # 43b2be1 gives [("a", "1,b=2")] and [("a", "1"), ("b", "2")] one key.
    assert OLD_43B2BE1[3][1] == OLD_43B2BE1[4][1]
    assert cckey.make_key(*OLD_43B2BE1[3][0]) != cckey.make_key(*OLD_43B2BE1[4][0])
