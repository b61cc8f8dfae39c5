// Written for cckey's tests: a header of types, in the shape image and
// signal samples share between their kernels (included by suite_app.cu).
#pragma once
typedef unsigned int TColor;
struct Pixel {
    unsigned char r, g, b, a;
};
typedef struct {
    float x, y;
} fComplex;
class Accum {
  public:
    float sum;
};
namespace img {
struct Tile {
    int w, h;
};
}
#define USE_ALPHA 1
#define SCALAR float
constexpr int kBlock = 128;
