// Written for cckey's tests: an OpenCL file with helpers and no kernel.
inline float square(float x) { return x * x; }
inline int twice(int x) { return 2 * x; }
