#include "types.h"
int main() { proj::float4 f{1, 2, 3, 4}; return device_count() + (int)f.a; }
