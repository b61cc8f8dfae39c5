/* 3x3 image filters on single-channel float images, clamped at the borders.
 * "kernel" in a comment or a string must not fool a scanner: kernel void fake() {} */

inline float px(__global const float *img, int x, int y, int w, int h)
{
    x = clamp(x, 0, w - 1);
    y = clamp(y, 0, h - 1);
    return img[y * w + x];
}

kernel void gaussian_blur3(__global const float *src, __global float *dst, const int w, const int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float acc = 4.0f * px(src, x, y, w, h)
              + 2.0f * (px(src, x - 1, y, w, h) + px(src, x + 1, y, w, h)
                      + px(src, x, y - 1, w, h) + px(src, x, y + 1, w, h))
              + px(src, x - 1, y - 1, w, h) + px(src, x + 1, y - 1, w, h)
              + px(src, x - 1, y + 1, w, h) + px(src, x + 1, y + 1, w, h);
    dst[y * w + x] = acc / 16.0f;
}

kernel void sobel_magnitude(__global const float *src, __global float *dst, const int w, const int h)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float gx = px(src, x + 1, y - 1, w, h) + 2.0f * px(src, x + 1, y, w, h) + px(src, x + 1, y + 1, w, h)
             - px(src, x - 1, y - 1, w, h) - 2.0f * px(src, x - 1, y, w, h) - px(src, x - 1, y + 1, w, h);
    float gy = px(src, x - 1, y + 1, w, h) + 2.0f * px(src, x, y + 1, w, h) + px(src, x + 1, y + 1, w, h)
             - px(src, x - 1, y - 1, w, h) - 2.0f * px(src, x, y - 1, w, h) - px(src, x + 1, y - 1, w, h);
    dst[y * w + x] = sqrt(gx * gx + gy * gy);
}

#if 0
kernel void disabled_filter(__global float *p) { p[0] = 0.0f; }
#endif
