// `rankscope analyze ... --html FILE`: one self-contained HTML file — the web UI page with the
// job's view documents inlined (view_data.h) — that opens from disk with no server and no
// network, to attach to a ticket.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "rankscope/base/status.h"

namespace rankscope {

// The page with `bundle` (ViewBundleJson) inlined. Fails when rankscope was built without the UI.
StatusOr<std::string> RenderHtmlReport(const nlohmann::json& bundle);

// RenderHtmlReport written to `path` (through a temporary file renamed into place).
Status WriteHtmlReport(const nlohmann::json& bundle, const std::string& path);

// JSON that is safe inside <script type="application/json">: every '<' written as \u003c, so
// no "</script>" or "<!--" in a string can end or change the element.
std::string JsonForScriptElement(const nlohmann::json& value);

}  // namespace rankscope
