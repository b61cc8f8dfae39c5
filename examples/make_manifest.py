#!/usr/bin/env python3
"""Writes manifest.jsonl: every entry point of the example suite, for each
device that would run it, with each option set. Rerun after editing kernels.

(`cckey scan kernels/ --device ...` produces the same shape from the sources
themselves; this script pins the device list so the example is reproducible.)
"""
import json
import pathlib

here = pathlib.Path(__file__).resolve().parent

opencl_devices = [
    "NVIDIA H200|580.159.04",
    "AMD Instinct MI300X|3635.0 (HSA1.1,LC)",
    "Intel(R) Data Center GPU Max 1550|1.3.29735",
]
opencl_entries = {
    "kernels/opencl/vector_ops.cl": ["vec_add", "vec_scale", "saxpy"],
    "kernels/opencl/reduction.cl": ["reduce_sum", "reduce_max"],
    "kernels/opencl/image.cl": ["gaussian_blur3", "sobel_magnitude"],
}
opencl_options = [
    [],
    [["-cl-fast-relaxed-math", ""]],
    [["-D", "UNROLL=4"], ["-cl-mad-enable", ""]],
]

cuda_devices = ["NVIDIA H200|580.159.04", "NVIDIA A100-SXM4-80GB|580.159.04"]
cuda_entries = {
    "kernels/cuda/gemm.cu": ["sgemm_naive", "sgemm_tiled"],
    "kernels/cuda/softmax.cu": ["softmax_rows", "log_softmax_rows"],
    # A C++ entry point: the runtime looks it up by its mangled name.
    "kernels/cuda/histogram.cu": ["_Z12histogram256PKhmPj"],
}
cuda_options = [
    [["arch", "sm_90"], ["-O", "3"]],
    [["arch", "sm_80"], ["-O", "3"]],
    [["arch", "sm_90"], ["--use_fast_math", ""], ["-D", "TILE=32"]],
]

lines = []
for devices, entries, option_sets in (
    (opencl_devices, opencl_entries, opencl_options),
    (cuda_devices, cuda_entries, cuda_options),
):
    for path, names in entries.items():
        for name in names:
            for device in devices:
                for options in option_sets:
                    lines.append(json.dumps({"device": device, "name": name,
                                             "source_file": path, "options": options}))

(here / "manifest.jsonl").write_text("\n".join(lines) + "\n")
print(f"wrote {len(lines)} tuples to {here / 'manifest.jsonl'}")
