#include <cuda/std/cstdint>
#include <cuda/std/type_traits>
#include <cuda/std/limits>
__global__ void k(cuda::std::int32_t* x) {
  static_assert(cuda::std::is_same<cuda::std::int32_t, int>::value, "");
  x[threadIdx.x] = cuda::std::numeric_limits<cuda::std::int32_t>::max();
}
