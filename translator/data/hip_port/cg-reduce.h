// Stands in for CUDA's <cooperative_groups/reduce.h>, which HIP does not ship: cooperative_groups::reduce
// and reduce_store_async with the plus/less/greater/bit_and/bit_or/bit_xor operators, built on the
// group's own shuffles (a butterfly over shfl_xor for thread_block_tile, a rank-ordered tree over
// shfl_down for coalesced groups, whose lanes need not be contiguous). Every thread of the group gets the
// result, as with CUDA. A tile may not be wider than the wavefront (64 lanes on gfx9 data-centre GPUs,
// 32 on gfx10/gfx11): HIP's thread_block_tile refuses larger sizes at compile time.
#if defined(__HIPCC__)
#include <hip/hip_cooperative_groups.h>
namespace cooperative_groups {
template <typename T> struct plus {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a + b; }
};
template <typename T> struct less {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <typename T> struct greater {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <typename T> struct bit_and {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a & b; }
};
template <typename T> struct bit_or {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a | b; }
};
template <typename T> struct bit_xor {
  __device__ __forceinline__ T operator()(const T& a, const T& b) const { return a ^ b; }
};

template <unsigned int Size, typename Parent, typename T, typename Op>
__device__ __forceinline__ T reduce(const thread_block_tile<Size, Parent>& group, T value, Op op) {
  for (unsigned int offset = 1; offset < Size; offset <<= 1) value = op(value, group.shfl_xor(value, offset));
  return value;
}
template <typename T, typename Op>
__device__ __forceinline__ T reduce(const coalesced_group& group, T value, Op op) {
  const unsigned int size = group.num_threads(), rank = group.thread_rank();
  for (unsigned int offset = 1; offset < size; offset <<= 1) {
    T other = group.shfl_down(value, offset);
    if (rank + offset < size) value = op(value, other);
  }
  return group.shfl(value, 0);
}
template <typename Group, typename T, typename Op>
__device__ __forceinline__ void reduce_store_async(const Group& group, T* destination, T value, Op op) {
  T result = reduce(group, value, op);
  if (group.thread_rank() == 0) *destination = result;
}
template <typename Group, typename T, typename Op>
__device__ __forceinline__ void reduce_store_async(const Group& group, T& destination, T value, Op op) {
  reduce_store_async(group, &destination, value, op);
}
}  // namespace cooperative_groups
#endif  // __HIPCC__
