import os
from typing import SupportsIndex, Iterable, Iterator, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union

# bytes, str (hashed as UTF-8) or any object with the buffer protocol.
Field = Union[bytes, str, bytearray, memoryview]
# Pairs (tuples or two-item sequences) in any order, or a mapping.
Options = Union[Iterable[Tuple[Field, Field]], Iterable[Sequence[Field]], Mapping[str, Field], Mapping[bytes, Field], None]
Tuple3 = Tuple[Field, Field, Field]
Tuple4 = Tuple[Field, Field, Field, Options]

KEY_LEN: int
__version__: str

class Error(Exception):
    status: int
    strerror: str
    detail: str

class ArgumentError(Error, ValueError): ...

class StorageError(Error, OSError):
    strerror: str

class BackendInfo(TypedDict):
    backend: str
    available: bool
    used: str
    reason: str

class DeviceInfo(TypedDict):
    backend: str
    index: int
    id: str
    name: str
    driver: str
    platform: str
    type: str
    global_mem: int
    compute_units: int
    usable: bool
    selected: bool
    auto_ok: bool

class StoreStats(TypedDict):
    entries: int
    bytes: int
    max_bytes: int
    temp_files: int
    temp_bytes: int
    hits: int
    misses: int

class Explanation(TypedDict):
    hit: bool
    why: Literal["hit", "absent", "headers", "toolchain", "corrupt", "unknown_record", "collision", "unverified"]
    detail: str

def make_key(device: Field, name: Field, source: Field, options: Options = ...) -> str: ...
def make_keys(
    tuples: Iterable[Union[Tuple3, Tuple4, Sequence[object]]],
    *,
    backend: Literal["auto", "cpu", "opencl", "cuda"] = ...,
    threads: int = ...,
    verify: Union[None, bool, Literal["all", "sample", "none"]] = ...,
    device: Optional[str] = ...,
) -> list[str]: ...
def devices() -> list[DeviceInfo]: ...
def backends() -> list[BackendInfo]: ...
def features() -> dict[str, bool]: ...
def version() -> str: ...

class Source:
    def __init__(self, source: Field) -> None: ...
    def key(self, device: Field, name: Field, options: Options = ...) -> str: ...
    @property
    def digest(self) -> str: ...

class Store:
    path: str
    def __init__(
        self,
        path: Union[str, bytes, os.PathLike[str]],
        max_bytes: SupportsIndex = ...,
        *,
        remotes: Optional[Sequence[str]] = ...,
        read_only: bool = ...,
        sign_key: Union[bytes, str, bytearray, memoryview, None] = ...,
        sign_key_file: Union[str, bytes, os.PathLike[str], None] = ...,
        no_remote: bool = ...,
    ) -> None: ...
    def get(self, key: Field) -> Optional[bytes]: ...
    def put(self, key: Field, data: Union[bytes, bytearray, memoryview]) -> None: ...
    def stats(self) -> StoreStats: ...
    def explain(
        self,
        key: Field,
        /,
        *,
        compiler: Optional[str] = ...,
        version: Optional[str] = ...,
        options: Optional[Sequence[str]] = ...,
        roots: Optional[Sequence[str]] = ...,
    ) -> Explanation: ...
    def __contains__(self, key: object) -> bool: ...
    def __getitem__(self, key: Field) -> bytes: ...
    def __delitem__(self, key: Field) -> None: ...
    def __len__(self) -> int: ...
    def __iter__(self) -> Iterator[str]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Store": ...
    def __exit__(self, *exc: object) -> None: ...
