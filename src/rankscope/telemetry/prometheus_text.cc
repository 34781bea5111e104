#include "rankscope/telemetry/prometheus_text.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rankscope/telemetry/metric_catalog.h"

namespace rankscope::telemetry {
namespace {

// Label values escape backslash, double quote and newline; HELP text backslash and newline.
void AppendEscaped(std::string* out, std::string_view text, bool quote) {
  for (char c : text) {
    if (c == '\\') out->append("\\\\");
    else if (c == '\n') out->append("\\n");
    else if (c == '"' && quote) out->append("\\\"");
    else out->push_back(c);
  }
}

void AppendSeries(std::string* out, const SeriesValue& v, const std::string& host) {
  out->append(v.key->metric);
  out->append("{host=\"");
  AppendEscaped(out, host, true);
  out->push_back('"');
  for (const Label& l : v.key->labels) {
    out->push_back(',');
    out->append(l.key);
    out->append("=\"");
    AppendEscaped(out, l.value, true);
    out->push_back('"');
  }
  out->append("} ");
  out->append(FormatValue(v.value));
  out->push_back('\n');
}

}  // namespace

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

std::string RenderPrometheus(const std::vector<SeriesValue>& values, const std::string& host) {
  std::vector<const SeriesValue*> sorted;
  sorted.reserve(values.size());
  for (const auto& v : values) sorted.push_back(&v);
  auto label_text = [](const SeriesValue* v) {
    std::string s;
    for (const Label& l : v->key->labels) s += l.key + "=" + l.value + ",";
    return s;
  };
  std::stable_sort(sorted.begin(), sorted.end(), [&](const SeriesValue* a, const SeriesValue* b) {
    const size_t oa = MetricOrder(a->key->metric), ob = MetricOrder(b->key->metric);
    if (oa != ob) return oa < ob;
    return label_text(a) < label_text(b);
  });
  std::string out;
  out.reserve(sorted.size() * 96);
  std::string_view current;
  for (const SeriesValue* v : sorted) {
    if (v->key->metric != current) {
      current = v->key->metric;
      const MetricDef* def = FindMetric(current);
      out += "# HELP ";
      out += current;
      out += ' ';
      AppendEscaped(&out, def ? def->help : "", false);
      out += "\n# TYPE ";
      out += current;
      out += def && def->type == MetricType::kCounter ? " counter\n" : " gauge\n";
    }
    AppendSeries(&out, *v, host);
  }
  return out;
}

}  // namespace rankscope::telemetry
