#include <cuda.h>
#include <stdio.h>
typedef struct CUuuid_st { char bytes[16]; } CUuuid;
void print_uuid(CUdevice dev) {
  CUuuid id;
  cuDeviceGetUuid(&id, dev);
  for (int i = 0; i < 16; ++i) printf("%02x", (unsigned char)id.bytes[i]);
}
