#include "rankscope/ingest/trace_formats.h"

namespace rankscope {

const TraceFormat& SelectTraceFormat(std::string_view head, std::string_view file_name) {
  const std::span<const TraceFormat* const> formats = TraceFormats();
  for (const TraceFormat* format : formats) {
    if (format->Sniff(head, file_name)) return *format;
  }
  return *formats.front();
}

bool HasTraceFileSuffix(std::string_view file_name) {
  for (const TraceFormat* format : TraceFormats()) {
    for (std::string_view suffix : format->file_suffixes()) {
      if (file_name.ends_with(suffix)) return true;
    }
  }
  return false;
}

std::string TraceFilePatterns() {
  std::string out;
  for (const TraceFormat* format : TraceFormats()) {
    for (std::string_view suffix : format->file_suffixes()) {
      if (!out.empty()) out += ", ";
      out += "*";
      out += suffix;
    }
  }
  return out;
}

}  // namespace rankscope
