#include "rankscope/report/compare_view_json.h"

#include <filesystem>
#include <fstream>

#include "rankscope/report/html_report.h"
#include "rankscope/report/view_data.h"

namespace rankscope {

using nlohmann::json;

json ComparisonMarkerJson(const std::string& source, const json* comparison) {
  json m = {{"source", source}};
  if (comparison) {
    m["base"] = comparison->value("base", json::object()).value("inputs", json::array());
    m["new"] = comparison->value("new", json::object()).value("inputs", json::array());
    m["baseline"] = comparison->value("baseline", json());
  }
  return m;
}

json CompareOverviewJson(const json& comparison) {
  const json ranks = comparison.value("ranks", json::array());
  const json base = comparison.value("base", json::object()), neu = comparison.value("new", json::object());
  const size_t files = base.value("inputs", json::array()).size() + neu.value("inputs", json::array()).size();
  return {{"schema", comparison.value("schema", "")},
          {"job", {{"files", files}, {"ranks_analysed", ranks.size()}, {"world_size", json()}, {"backend", ""}}},
          {"ranks", json::array()},
          {"cluster", nullptr},
          {"findings", comparison.value("findings", json::array())},
          {"telemetry", nullptr},
          {"warnings", comparison.value("warnings", json::array())},
          {"errors", json::array()},
          {"overview", true},
          {"comparison", ComparisonMarkerJson("comparison", &comparison)}};
}

StatusOr<json> ReadComparisonJson(const std::string& path, uint64_t max_bytes) {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return IoError("cannot read {}: {}", path, ec.message());
  if (size > max_bytes) {
    return OutOfRange("{} is {} bytes: larger than the {} a comparison JSON may have here", path, size, max_bytes);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot open {}", path);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return DataLoss("{} is not valid JSON", path);
  const auto schema = j.find("schema");
  if (schema == j.end() || !schema->is_string() || schema->get<std::string>().rfind("rankscope.compare/", 0) != 0) {
    return InvalidArgument("{} is not a rankscope comparison (written by `rankscope compare --json`)", path);
  }
  if (!j.contains("ranks") || !j["ranks"].is_array()) return InvalidArgument("{}: a comparison without ranks", path);
  return j;
}

Status WriteCompareHtml(const json& comparison, const std::string& path) {
  const json bundle = {{"schema", kViewsSchema},
                       {"view", "bundle"},
                       {"overview", CompareOverviewJson(comparison)},
                       {"comparison", comparison}};
  return WriteHtmlReport(bundle, path);
}

}  // namespace rankscope
