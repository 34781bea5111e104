// The definitions every rankscope number is computed from (docs/definitions.md explains each).
//
// Times are integer nanoseconds. A window W is a half-open interval [start, end) on the trace's
// own clock. Every GPU instant of W belongs to exactly one class, by the priority
// compute > communication > memory > sync > idle; "exposed" time of a class is the time it owns.
#pragma once

#include <cstdint>
#include <string_view>

namespace rankscope {

// GPU activity classes, in priority order (a lower value wins an instant).
enum class ActivityClass : uint8_t {
  kCompute = 0,        // kernels that are not communication
  kCommunication = 1,  // NCCL/RCCL/HCCL kernels and kernels matching a --comm-pattern
  kMemory = 2,         // Memcpy HtoD/DtoH/DtoD/PtoP, Memset
  kSync = 3,           // cuda_sync on a stream (Stream Sync, Stream Wait Event)
  kNone = 255,         // not GPU activity (or a sync that is not on a stream)
};
inline constexpr int kNumActivityClasses = 4;

std::string_view ActivityClassName(ActivityClass c);

// A gap before a kernel that is shorter than this is "kernel wait" (launch overhead between
// back-to-back kernels), unless the kernel's launch call began after the gap opened.
inline constexpr int64_t kDefaultKernelWaitThresholdNs = 30'000;

// Functions whose bottleneck ratio is above this share of W are flagged in the report.
inline constexpr double kFlagShare = 0.01;

// Tables in a per-rank summary keep their `kDefaultMaxRows` worst rows (by bottleneck, for the
// report) and, beyond them, every row whose in-window time is at least kKeepShare of |W| (for
// cross-rank comparison: a rank that lacks a row then ran it for less than that), at most
// kMaxKeptRows in all (then the largest; `omitted_max_in_window_ns` says how large the largest
// omitted row was). The rest are counted. kKeepShare of |W| is 0.1 % of a step, a twentieth of
// the smallest cost a finding reports (--min-cost-share, 2 %).
inline constexpr size_t kDefaultMaxRows = 500;
inline constexpr double kKeepShare = 0.001;
inline constexpr size_t kMaxKeptRows = 4096;

// A call of a function stalled when it took more than kStallFactor times the function's p99 call
// and at least kMinStallNs more: a call that long is not the function's work but the thread held
// off its CPU (preempted, a page fault, a pause). Its stalled time is what it took beyond the p99
// call. With fewer than 100 calls the p99 call is the longest, and nothing stalls.
inline constexpr double kStallFactor = 10;
inline constexpr int64_t kMinStallNs = 1'000'000;

// Collective instances kept per rank (for cross-rank matching); the rest are counted.
inline constexpr size_t kDefaultMaxCollectiveInstances = 100'000;

}  // namespace rankscope
