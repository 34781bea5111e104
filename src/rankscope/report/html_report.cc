#include "rankscope/report/html_report.h"

#include <cstdio>
#include <fstream>

#include "rankscope/report/ui_page.h"

namespace rankscope {

std::string JsonForScriptElement(const nlohmann::json& value) {
  // Invalid UTF-8 in a name from a trace must not make the report unwritable.
  const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + 64);
  for (char c : text) {
    if (c == '<') {
      out += "\\u003c";  // '<' only occurs inside JSON strings, where the escape means the same
    } else {
      out += c;
    }
  }
  return out;
}

StatusOr<std::string> RenderHtmlReport(const nlohmann::json& bundle) {
  const std::string_view page = UiPage();
  if (page.empty()) {
    return FailedPrecondition("this rankscope was built without the web UI (npm was not found when it was built): "
                              "rebuild with Node.js and npm installed to get --html and rankscope serve");
  }
  const size_t at = page.find(kUiDataMarker);
  if (at == std::string_view::npos) return FailedPrecondition("the embedded web UI page has no data marker (a broken build of web/)");
  std::string out;
  const std::string data = JsonForScriptElement(bundle);
  out.reserve(page.size() + data.size() + 128);
  out.append(page.substr(0, at));
  out.append(R"(<script id="rankscope-data" type="application/json">)");
  out.append(data);
  out.append("</script>");
  out.append(page.substr(at + kUiDataMarker.size()));
  return out;
}

Status WriteHtmlReport(const nlohmann::json& bundle, const std::string& path) {
  RANKSCOPE_ASSIGN_OR_RETURN(std::string html, RenderHtmlReport(bundle));
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(html.data(), static_cast<std::streamsize>(html.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return IoError("cannot write {}", tmp);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return IoError("cannot rename {} to {}", tmp, path);
  }
  return OkStatus();
}

}  // namespace rankscope
