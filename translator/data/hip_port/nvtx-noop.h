// Stands in for NVIDIA's NVTX (nvToolsExt.h) where the toolchain has no roctx: every range, mark,
// domain and naming call compiles and does nothing, so the program builds and runs without annotations.
// Install roctx (ROCm's roctracer) and translate again to keep them.
#include <cstdint>
#define NVTX_VERSION 3
#define NVTX_EVENT_ATTRIB_STRUCT_SIZE ((uint16_t)sizeof(nvtxEventAttributes_t))
typedef uint64_t nvtxRangeId_t;
enum nvtxColorType_t { NVTX_COLOR_UNKNOWN = 0, NVTX_COLOR_ARGB = 1 };
enum nvtxMessageType_t { NVTX_MESSAGE_UNKNOWN = 0, NVTX_MESSAGE_TYPE_ASCII = 1, NVTX_MESSAGE_TYPE_UNICODE = 2,
                         NVTX_MESSAGE_TYPE_REGISTERED = 3 };
union nvtxMessageValue_t { const char* ascii; const wchar_t* unicode; const void* registered; };
struct nvtxEventAttributes_t {
  uint16_t version; uint16_t size; uint32_t category; int32_t colorType; uint32_t color;
  int32_t payloadType; int32_t reserved0;
  union { uint64_t ullValue; int64_t llValue; double dValue; uint32_t uiValue; int32_t iValue; float fValue; } payload;
  int32_t messageType; nvtxMessageValue_t message;
};
struct nvtxDomainRegistration_st {};
typedef nvtxDomainRegistration_st* nvtxDomainHandle_t;
inline int nvtxRangePushA(const char*) { return 0; }
inline int nvtxRangePush(const char*) { return 0; }
inline int nvtxRangePushEx(const nvtxEventAttributes_t*) { return 0; }
inline int nvtxRangePop() { return 0; }
inline void nvtxMarkA(const char*) {}
inline void nvtxMark(const char*) {}
inline void nvtxMarkEx(const nvtxEventAttributes_t*) {}
inline nvtxRangeId_t nvtxRangeStartA(const char*) { return 0; }
inline nvtxRangeId_t nvtxRangeStart(const char*) { return 0; }
inline nvtxRangeId_t nvtxRangeStartEx(const nvtxEventAttributes_t*) { return 0; }
inline void nvtxRangeEnd(nvtxRangeId_t) {}
inline nvtxDomainHandle_t nvtxDomainCreateA(const char*) { return nullptr; }
inline void nvtxDomainDestroy(nvtxDomainHandle_t) {}
inline int nvtxDomainRangePushEx(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { return 0; }
inline int nvtxDomainRangePop(nvtxDomainHandle_t) { return 0; }
inline void nvtxDomainMarkEx(nvtxDomainHandle_t, const nvtxEventAttributes_t*) {}
inline nvtxRangeId_t nvtxDomainRangeStartEx(nvtxDomainHandle_t, const nvtxEventAttributes_t*) { return 0; }
inline void nvtxDomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t) {}
inline void nvtxNameOsThreadA(uint32_t, const char*) {}
template <typename T> inline void nvtxNameCudaStreamA(T, const char*) {}
template <typename T> inline void nvtxNameCudaEventA(T, const char*) {}
inline void nvtxNameCudaDeviceA(int, const char*) {}
inline void nvtxNameCategoryA(uint32_t, const char*) {}
