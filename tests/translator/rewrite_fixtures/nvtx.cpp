#include <nvtx3/nvToolsExt.h>
#include <cuda_runtime.h>
#include <string>
struct NvtxRange {
  NvtxRange(const char* s) { nvtxRangePush(s); }
  NvtxRange(const std::string& base, int n) { nvtxRangePushA((base + std::to_string(n)).c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
};
void step(int i) {
  NvtxRange r("step");
  nvtxMarkA("begin");
  nvtxRangeId_t id = nvtxRangeStartA("phase");
  nvtxDomainHandle_t dom = nvtxDomainCreateA("trainer");
  nvtxEventAttributes_t attr = {};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attr.message.ascii = "forward";
  nvtxDomainRangePushEx(dom, &attr);
  nvtxDomainRangePop(dom);
  nvtxDomainMarkEx(dom, &attr);
  nvtxRangePushEx(&attr);
  nvtxRangePop();
  nvtxRangeEnd(id);
  nvtxDomainDestroy(dom);
  nvtxNameOsThreadA(0, "main");
}
