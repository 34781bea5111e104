// JSON as text for the files and replies rankscope writes. Strings in them can come from outside
// (a trace, a process's command line, a collector's message, a stack snapshot); nlohmann::json
// throws on invalid UTF-8 when writing, and a throw in the daemon's threads would end it, so
// invalid sequences are written as U+FFFD instead.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rankscope {

// Indented by `indent` spaces (-1: one line), with a final newline.
inline std::string DumpJson(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace rankscope
