// Stands in for CUDA's pre-4.0 driver launch API (cuParamSetv/i/f, cuParamSetSize, cuFuncSetBlockShape,
// cuFuncSetSharedSize, cuLaunch, cuLaunchGrid, cuLaunchGridAsync), which HIP never had. The old calls
// set state on the function; here each function keeps its parameter bytes at the offsets the program
// gave (the layout the kernel expects, as the old calls laid it out), its block shape and its dynamic
// shared memory, and a launch hands the buffer to hipModuleLaunchKernel through
// HIP_LAUNCH_PARAM_BUFFER_POINTER. cuFuncSetCacheConfig becomes FuncSetCacheConfig, a documented no-op:
// AMD GPUs have no L1/shared-memory split to choose (HIP's hipFuncSetCacheConfig ignores it as well).
#include <hip/hip_runtime_api.h>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>
namespace hip_port {
struct LegacyLaunchState {
  std::vector<unsigned char> parameters;
  size_t size = 0;
  unsigned int block_x = 1, block_y = 1, block_z = 1, shared_bytes = 0;
};
inline LegacyLaunchState& legacy_state(hipFunction_t function) {
  static std::mutex lock;
  static std::map<hipFunction_t, LegacyLaunchState> states;  // nodes never move: references stay valid
  std::lock_guard<std::mutex> guard(lock);
  return states[function];
}
inline hipError_t ParamSetv(hipFunction_t function, int offset, const void* value, unsigned int bytes) {
  if (offset < 0 || (value == nullptr && bytes != 0)) return hipErrorInvalidValue;
  LegacyLaunchState& state = legacy_state(function);
  if (state.parameters.size() < static_cast<size_t>(offset) + bytes) state.parameters.resize(offset + bytes);
  if (bytes != 0) std::memcpy(state.parameters.data() + offset, value, bytes);
  return hipSuccess;
}
inline hipError_t ParamSeti(hipFunction_t function, int offset, unsigned int value) {
  return ParamSetv(function, offset, &value, sizeof(value));
}
inline hipError_t ParamSetf(hipFunction_t function, int offset, float value) {
  return ParamSetv(function, offset, &value, sizeof(value));
}
inline hipError_t ParamSetSize(hipFunction_t function, unsigned int bytes) {
  LegacyLaunchState& state = legacy_state(function);
  state.size = bytes;
  if (state.parameters.size() < bytes) state.parameters.resize(bytes);
  return hipSuccess;
}
inline hipError_t FuncSetBlockShape(hipFunction_t function, int x, int y, int z) {
  if (x <= 0 || y <= 0 || z <= 0) return hipErrorInvalidValue;
  LegacyLaunchState& state = legacy_state(function);
  state.block_x = x, state.block_y = y, state.block_z = z;
  return hipSuccess;
}
inline hipError_t FuncSetSharedSize(hipFunction_t function, unsigned int bytes) {
  legacy_state(function).shared_bytes = bytes;
  return hipSuccess;
}
inline hipError_t FuncSetCacheConfig(hipFunction_t, hipFuncCache_t) { return hipSuccess; }
inline hipError_t LaunchGridAsync(hipFunction_t function, int grid_width, int grid_height, hipStream_t stream) {
  LegacyLaunchState& state = legacy_state(function);
  size_t size = state.size;
  void* config[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, state.parameters.data(), HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                    HIP_LAUNCH_PARAM_END};
  return hipModuleLaunchKernel(function, grid_width, grid_height, 1, state.block_x, state.block_y, state.block_z,
                               state.shared_bytes, stream, nullptr, size != 0 ? config : nullptr);
}
inline hipError_t LaunchGrid(hipFunction_t function, int grid_width, int grid_height) {
  return LaunchGridAsync(function, grid_width, grid_height, nullptr);
}
inline hipError_t Launch(hipFunction_t function) { return LaunchGridAsync(function, 1, 1, nullptr); }
}  // namespace hip_port
