// Written for cckey's tests: a .h that defines kernels, included by
// suite_app.cu (and read as CUDA when named on its own).
#pragma once
#include "suite_types.cuh"

__global__ void blend(TColor *dst, const Pixel *src, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i].r | (src[i].a << 24);
}
