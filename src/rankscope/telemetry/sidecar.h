// The telemetry saved beside a capture's traces: <capture dir>/telemetry.<host>.tsv (not .json:
// every *.json[.gz] in a capture directory is read as a trace). Text, one sample per line, so
// that grep, awk and pandas read it as they are:
//
//   # rankscope-telemetry 1
//   # host: node17
//   # capture: 20261121-175048-0e35
//   # job: 3b8bd01f
//   # window_start_unix_ns: 1795283440000000000     the capture's span, margin included
//   # window_end_unix_ns: 1795283452000000000
//   # coverage_start_unix_ns: 1795283000000000000   oldest sample the daemon still had
//   # interval_ms: proc=1000 gpu=1000
//   # gpu: available                                 or "unavailable: <why>"
//   unix_ns	metric	labels	value
//   1795283441000123456	rankscope_cpu_busy_ratio		0.973
//   1795283441000123456	rankscope_process_cpu_cores	rank=0,job=3b8bd01f,pid=4242	0.31
//
// Gauges only (the ring buffer's content). A sample at time t describes the interval since the
// previous sample of its series (rates and ratios) or the instant t (memory, temperature).
// Labels are k=v joined by ','; '%', ',', '=', tab and newline in values are %XX-escaped.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rankscope/base/status.h"
#include "rankscope/telemetry/series.h"
#include "rankscope/telemetry/telemetry_store.h"

namespace rankscope::telemetry {

inline constexpr const char* kSidecarMagic = "# rankscope-telemetry 1";

struct SidecarHeader {
  std::string host, capture, job;
  int64_t window_start_ns = 0, window_end_ns = 0, coverage_start_ns = 0;
  std::string interval_ms;  // "proc=1000 gpu=1000"
  std::string gpu;          // "available" or "unavailable: <why>"
};

// "telemetry.<host>.tsv" (the host made a safe file name component).
std::string SidecarFileName(const std::string& host);

// The file's text. The daemon writes it into a capture directory through a descriptor
// (daemon/dir_handle.h), never by path.
std::string RenderSidecar(const SidecarHeader& header, const std::vector<Frame>& frames, const SeriesTable& series);
// Writes <path>.tmp then renames it: readers never see half a file (tools and tests; it
// follows the path as given).
Status WriteSidecar(const std::string& path, const SidecarHeader& header, const std::vector<Frame>& frames,
                    const SeriesTable& series);

struct Sample {
  int64_t unix_ns = 0;
  double value = 0;
};
struct SeriesSamples {
  SeriesKey key;
  std::vector<Sample> samples;  // in time order
};
struct TelemetryTable {
  std::string path;
  SidecarHeader header;
  std::vector<SeriesSamples> series;
  std::vector<std::string> warnings;  // lines that could not be read, and why
};

StatusOr<TelemetryTable> ReadSidecar(const std::string& path);
// Every telemetry.*.tsv directly in `dir`, by file name.
std::vector<std::string> FindSidecars(const std::string& dir);

std::string EncodeLabels(const Labels& labels);
Labels DecodeLabels(std::string_view text);

}  // namespace rankscope::telemetry
