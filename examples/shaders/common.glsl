// Shared by saxpy.comp (an #include beside it): edit it and only the
// shaders that include it are compiled again by cckey warm.
float scaled(float x) { return x * SCALE; }
