#pragma once
#include <cuda_runtime_api.h>
#include <cstdint>
namespace proj { using uint32_t = std::uint32_t; struct float4 { float a, b, c, d; }; }
inline int device_count() { int n = 0; cudaGetDeviceCount(&n); return n; }
