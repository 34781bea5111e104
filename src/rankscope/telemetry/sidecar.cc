#include "rankscope/telemetry/sidecar.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "rankscope/telemetry/proc_files.h"
#include "rankscope/telemetry/prometheus_text.h"

namespace rankscope::telemetry {
namespace {

bool NeedsEscape(char c) { return c == '%' || c == ',' || c == '=' || c == '\t' || c == '\n' || c == '\r'; }

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (NeedsEscape(c)) out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else out.push_back(c);
  }
  return out;
}

std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      unsigned v = 0;
      auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
      if (ec == std::errc() && p == s.data() + i + 3) {
        out.push_back(static_cast<char>(v));
        i += 2;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool ParseI64(std::string_view s, int64_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool ParseDouble(std::string_view s, double* v) {
  if (s == "NaN") { *v = std::numeric_limits<double>::quiet_NaN(); return true; }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return ec == std::errc() && p == s.data() + s.size();
}

void ApplyHeader(std::string_view key, std::string_view value, SidecarHeader* h) {
  int64_t n = 0;
  if (key == "host") h->host = value;
  else if (key == "capture") h->capture = value;
  else if (key == "job") h->job = value;
  else if (key == "interval_ms") h->interval_ms = value;
  else if (key == "gpu") h->gpu = value;
  else if (key == "window_start_unix_ns" && ParseI64(value, &n)) h->window_start_ns = n;
  else if (key == "window_end_unix_ns" && ParseI64(value, &n)) h->window_end_ns = n;
  else if (key == "coverage_start_unix_ns" && ParseI64(value, &n)) h->coverage_start_ns = n;
}

}  // namespace

std::string SidecarFileName(const std::string& host) {
  std::string safe;
  for (char c : host) safe.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '_');
  if (safe.empty() || safe.front() == '.') safe.insert(safe.begin(), '_');
  return "telemetry." + safe + ".tsv";
}

std::string EncodeLabels(const Labels& labels) {
  std::string out;
  for (const Label& l : labels) {
    if (!out.empty()) out.push_back(',');
    out += Escape(l.key) + "=" + Escape(l.value);
  }
  return out;
}

Labels DecodeLabels(std::string_view text) {
  Labels out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(start, end - start);
    const size_t eq = item.find('=');
    if (eq != std::string_view::npos) out.push_back({Unescape(item.substr(0, eq)), Unescape(item.substr(eq + 1))});
    start = end + 1;
  }
  return out;
}

std::string RenderSidecar(const SidecarHeader& h, const std::vector<Frame>& frames, const SeriesTable& series) {
  std::string out;
  fmt::format_to(std::back_inserter(out),
                 "{}\n# host: {}\n# capture: {}\n# job: {}\n# window_start_unix_ns: {}\n# window_end_unix_ns: {}\n"
                 "# coverage_start_unix_ns: {}\n# interval_ms: {}\n# gpu: {}\nunix_ns\tmetric\tlabels\tvalue\n",
                 kSidecarMagic, h.host, h.capture, h.job, h.window_start_ns, h.window_end_ns, h.coverage_start_ns,
                 h.interval_ms, h.gpu);
  // Label text is the same for every sample of a series: encode each series once.
  std::map<SeriesId, std::string> prefix;
  for (const Frame& f : frames) {
    for (const Point& p : f.points) {
      auto it = prefix.find(p.series);
      if (it == prefix.end()) {
        const auto k = series.Get(p.series);
        if (!k) continue;  // expired while the frames were being copied
        it = prefix.emplace(p.series, k->metric + "\t" + EncodeLabels(k->labels) + "\t").first;
      }
      fmt::format_to(std::back_inserter(out), "{}\t{}{}\n", f.unix_ns, it->second, FormatValue(p.value));
    }
  }
  return out;
}

Status WriteSidecar(const std::string& path, const SidecarHeader& h, const std::vector<Frame>& frames,
                    const SeriesTable& series) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return IoError("cannot write {}", tmp);
    out << RenderSidecar(h, frames, series);
    out.flush();
    if (!out) return IoError("cannot write {} (disk full?)", tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return IoError("cannot rename {} to {}", tmp, path);
  return OkStatus();
}

StatusOr<TelemetryTable> ReadSidecar(const std::string& path) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path));
  TelemetryTable t;
  t.path = path;
  const auto lines = SplitLines(text);
  if (lines.empty() || lines[0] != kSidecarMagic) {
    return DataLoss("{}: not a rankscope telemetry file (first line is not '{}')", path, kSidecarMagic);
  }
  std::map<std::string, size_t, std::less<>> index;  // "metric\tlabels" -> series
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    if (line.empty()) continue;
    if (line[0] == '#') {
      line.remove_prefix(1);
      const size_t colon = line.find(": ");
      if (colon != std::string_view::npos) ApplyHeader(line.substr(1, colon - 1), line.substr(colon + 2), &t.header);
      continue;
    }
    if (line.rfind("unix_ns\t", 0) == 0) continue;  // the column names
    const size_t a = line.find('\t'), b = line.find('\t', a + 1), c = line.find('\t', b + 1);
    Sample s;
    if (c == std::string_view::npos || !ParseI64(line.substr(0, a), &s.unix_ns) || !ParseDouble(line.substr(c + 1), &s.value)) {
      if (t.warnings.size() < 20) t.warnings.push_back(fmt::format("line {}: not 'unix_ns<TAB>metric<TAB>labels<TAB>value'", i + 1));
      continue;
    }
    const std::string_view key = line.substr(a + 1, c - a - 1);
    auto it = index.find(key);
    if (it == index.end()) {
      SeriesSamples ss;
      ss.key.metric = std::string(line.substr(a + 1, b - a - 1));
      ss.key.labels = DecodeLabels(line.substr(b + 1, c - b - 1));
      t.series.push_back(std::move(ss));
      it = index.emplace(std::string(key), t.series.size() - 1).first;
    }
    t.series[it->second].samples.push_back(s);
  }
  for (auto& s : t.series) {
    std::stable_sort(s.samples.begin(), s.samples.end(), [](const Sample& x, const Sample& y) { return x.unix_ns < y.unix_ns; });
  }
  return t;
}

std::vector<std::string> FindSidecars(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& name : ListDir(dir)) {
    if (name.rfind("telemetry.", 0) == 0 && name.size() > 14 && name.substr(name.size() - 4) == ".tsv") {
      out.push_back((std::filesystem::path(dir) / name).string());
    }
  }
  return out;
}

}  // namespace rankscope::telemetry
