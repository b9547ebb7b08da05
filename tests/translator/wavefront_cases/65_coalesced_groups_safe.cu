#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ int aggregated_increment(int* counter) {
  cg::coalesced_group active = cg::coalesced_threads();
  int prev = 0;
  if (active.thread_rank() == 0) prev = atomicAdd(counter, active.size());
  return active.shfl(prev, 0) + active.thread_rank();
}
