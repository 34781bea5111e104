/* A stand-in for libnvidia-ml.so.1 with known values, so that the NVML code path of rankscoped
 * (dlopen, symbol lookup, every call it makes, units) is tested on machines without a GPU.
 * Built by tests/cpp/CMakeLists.txt and by tests/python/test_telemetry.py (cc -shared).
 *
 * Two devices. NVLink counters grow at 100 KiB per millisecond since nvmlInit. Device 1 runs one
 * compute process: the pid in $FAKE_NVML_PID, using 2 GiB. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef struct fake_device { unsigned int index; } *nvmlDevice_t;
typedef struct { unsigned int gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef union { double d; unsigned int ui; unsigned long ul; unsigned long long ull; long long sll; int si; unsigned short us; } nvmlValue_t;
typedef struct {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
} nvmlFieldValue_t;
typedef struct {
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

enum { OK = 0, INVALID_ARGUMENT = 2, NOT_SUPPORTED = 3, INSUFFICIENT_SIZE = 7 };
static struct fake_device devices[2] = {{0}, {1}};
static double init_ms = -1;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

nvmlReturn_t nvmlInit_v2(void) { init_ms = now_ms(); return OK; }
nvmlReturn_t nvmlShutdown(void) { return OK; }
const char* nvmlErrorString(nvmlReturn_t r) { return r == OK ? "Success" : "fake error"; }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* n) { *n = 2; return OK; }

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t* d) {
  if (i >= 2) return INVALID_ARGUMENT;
  *d = &devices[i];
  return OK;
}

static void copy(char* dst, unsigned int len, const char* src) {
  strncpy(dst, src, len);
  if (len) dst[len - 1] = 0;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char* name, unsigned int len) {
  copy(name, len, d->index == 0 ? "Fake H100 0" : "Fake H100 1");
  return OK;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char* uuid, unsigned int len) {
  copy(uuid, len, d->index == 0 ? "GPU-fake-0000" : "GPU-fake-0001");
  return OK;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t* u) {
  u->gpu = d->index == 0 ? 37 : 81;
  u->memory = d->index == 0 ? 12 : 40;
  return OK;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  m->total = 85899345920ull;                                   /* 80 GiB */
  m->used = d->index == 0 ? 1610612736ull : 42949672960ull;    /* 1.5 GiB, 40 GiB */
  m->free = m->total - m->used;
  return OK;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int* mw) { *mw = d->index == 0 ? 123456 : 250000; return OK; }
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, unsigned int type, unsigned int* mhz) {
  if (type == 1) *mhz = 1410;       /* SM */
  else if (type == 2) *mhz = 1593;  /* memory */
  else return NOT_SUPPORTED;
  return OK;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, unsigned int sensor, unsigned int* c) {
  if (sensor != 0) return NOT_SUPPORTED;
  *c = d->index == 0 ? 61 : 70;
  return OK;
}
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, unsigned int counter, unsigned int* kbps) {
  *kbps = counter == 1 ? 2000 : 1000;  /* rx 2000 KB/s, tx 1000 KB/s */
  return OK;
}
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, nvmlFieldValue_t* values) {
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t* f = &values[i];
    if ((f->fieldId != 138 && f->fieldId != 139) || f->scopeId != 0xFFFFFFFFu) {
      f->nvmlReturn = NOT_SUPPORTED;
      continue;
    }
    f->nvmlReturn = OK;
    f->valueType = 3; /* unsigned long long, KiB */
    f->value.ull = (unsigned long long)((now_ms() - init_ms) * 100.0);
  }
  return OK;
}
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int* count, nvmlProcessInfo_t* infos) {
  const char* pid = getenv("FAKE_NVML_PID");
  if (d->index != 1 || !pid) {
    *count = 0;
    return OK;
  }
  if (*count < 1) {
    *count = 1;
    return INSUFFICIENT_SIZE;
  }
  *count = 1;
  infos[0].pid = (unsigned int)atoi(pid);
  infos[0].usedGpuMemory = 2147483648ull;  /* 2 GiB */
  infos[0].gpuInstanceId = infos[0].computeInstanceId = 0xFFFFFFFFu;
  return OK;
}
