#include "rankscope/hang/stack_snapshot.h"

#include <charconv>
#include <cstdlib>

#include "rankscope/base/utf8.h"

namespace rankscope::hang {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  s = Trim(s);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool ParseDouble(std::string_view s, double* out) {
  const std::string copy(Trim(s));
  if (copy.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}

// `thread <ident> "<name>" <kind> [gil]`; the name may contain spaces and quotes, so the kind
// is read from the end.
bool ParseThreadLine(std::string_view line, ThreadStack* t) {
  line.remove_prefix(std::string_view("thread ").size());
  const size_t space = line.find(' ');
  if (space == std::string_view::npos || !ParseNumber(line.substr(0, space), &t->ident)) return false;
  std::string_view rest = Trim(line.substr(space + 1));
  if (rest.size() >= 4 && rest.substr(rest.size() - 4) == " gil") {
    t->owns_gil = true;
    rest = Trim(rest.substr(0, rest.size() - 4));
  }
  const size_t last_space = rest.rfind(' ');
  if (last_space == std::string_view::npos) return false;
  t->kind = std::string(rest.substr(last_space + 1));
  std::string_view name = Trim(rest.substr(0, last_space));
  if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
  t->name = std::string(name);
  return true;
}

// `  File "<file>", line <n>, in <function>`
bool ParsePythonFrame(std::string_view line, Frame* f) {
  line = Trim(line);
  if (!StartsWith(line, "File \"")) return false;
  line.remove_prefix(6);
  const size_t sep = line.rfind("\", line ");
  if (sep == std::string_view::npos) return false;
  f->file = std::string(line.substr(0, sep));
  std::string_view rest = line.substr(sep + 8);
  const size_t in = rest.find(", in ");
  if (in == std::string_view::npos || !ParseNumber(rest.substr(0, in), &f->line)) return false;
  f->function = std::string(rest.substr(in + 5));
  return true;
}

// `  Native "<library>", in <symbol>`
bool ParseNativeFrame(std::string_view line, Frame* f) {
  line = Trim(line);
  if (!StartsWith(line, "Native \"")) return false;
  line.remove_prefix(8);
  const size_t sep = line.rfind("\", in ");
  if (sep == std::string_view::npos) return false;
  f->file = std::string(line.substr(0, sep));
  f->function = std::string(line.substr(sep + 6));
  f->native = true;
  return true;
}

void ApplyHeader(std::string_view key, std::string_view value, RankStacks* s) {
  if (key == "rank") ParseNumber(value, &s->rank);
  else if (key == "pid") ParseNumber(value, &s->pid);
  else if (key == "parent_pid") ParseNumber(value, &s->parent_pid);
  else if (key == "world_size") ParseNumber(value, &s->world_size);
  else if (key == "host") s->host = std::string(value);
  else if (key == "job") s->job = std::string(value);
  else if (key == "capture") s->capture = std::string(value);
  else if (key == "steps_completed") ParseNumber(value, &s->steps_completed);
  else if (key == "seconds_since_last_step") ParseDouble(value, &s->seconds_since_last_step);
  else if (key == "step_ms") ParseDouble(value, &s->step_ms);
  else if (key == "time_unix_ms") ParseNumber(value, &s->time_unix_ms);
  else if (key == "taken") s->source = StartsWith(value, "py-spy") ? StackSource::kPySpy : StackSource::kCollector;
  else if (key == "taken_because") s->source_detail = std::string(value);
}

}  // namespace

std::string Frame::Key() const {
  return native ? fmt::format("{} ({})", function, file) : fmt::format("{}:{} {}", file, line, function);
}

std::vector<const Frame*> ThreadStack::PythonFrames() const {
  std::vector<const Frame*> out;
  for (const Frame& f : frames) {
    if (!f.native) out.push_back(&f);
  }
  return out;
}

std::string_view StackSourceName(StackSource s) { return s == StackSource::kPySpy ? "py-spy" : "collector"; }

StatusOr<RankStacks> ParseStacks(std::string_view raw, std::string_view path) {
  if (raw.size() > kMaxStacksFileBytes) {
    return OutOfRange("{}: {} bytes is more than a stack snapshot can be ({} MiB at most)", path, raw.size(),
                      kMaxStacksFileBytes >> 20);
  }
  // The job's user wrote it: everything kept or quoted from it is valid UTF-8 (JSON carries
  // nothing else) and printable (the text report goes to a terminal).
  const std::string printable = PrintableUtf8(raw);
  const std::string_view text = printable;
  RankStacks s;
  s.path = std::string(path);
  size_t pos = 0;
  auto next_line = [&](std::string_view* line) {
    if (pos >= text.size()) return false;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    *line = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  };
  std::string_view line;
  if (!next_line(&line) || Trim(line) != "rankscope-stacks 1") {
    return DataLoss("{}: not a rankscope stack snapshot (the first line must be 'rankscope-stacks 1')", path);
  }
  int64_t announced = -1;
  size_t line_no = 1;
  // Header: key: value lines up to the first blank line.
  while (next_line(&line)) {
    ++line_no;
    if (Trim(line).empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      return DataLoss("{}:{}: header line '{}' is not 'key: value'", path, line_no, Trim(line).substr(0, 80));
    }
    const std::string_view key = Trim(line.substr(0, colon)), value = Trim(line.substr(colon + 1));
    if (key == "threads") ParseNumber(value, &announced);
    ApplyHeader(key, value, &s);
  }
  ThreadStack* current = nullptr;
  while (next_line(&line)) {
    ++line_no;
    if (Trim(line).empty()) continue;
    if (StartsWith(line, "thread ")) {
      ThreadStack t;
      if (!ParseThreadLine(line, &t)) {
        return DataLoss("{}:{}: bad thread line '{}'", path, line_no, line.substr(0, 120));
      }
      s.threads.push_back(std::move(t));
      current = &s.threads.back();
      continue;
    }
    if (!current) return DataLoss("{}:{}: a frame before the first 'thread' line", path, line_no);
    Frame f;
    if (ParsePythonFrame(line, &f) || ParseNativeFrame(line, &f)) {
      current->frames.push_back(std::move(f));
    } else if (StartsWith(line, "    ") && !current->frames.empty() && current->frames.back().code.empty()) {
      current->frames.back().code = std::string(Trim(line));  // the source line of the frame above
    } else if (pos >= text.size()) {
      s.warnings.push_back(fmt::format("{}: the last line is cut off (a truncated file?)", path));
    } else {
      return DataLoss("{}:{}: cannot read '{}' (expected a frame)", path, line_no, Trim(line).substr(0, 120));
    }
  }
  if (announced >= 0 && static_cast<size_t>(announced) != s.threads.size()) {
    s.warnings.push_back(fmt::format("{}: {} threads announced but {} read (a truncated file?)", path, announced,
                                     s.threads.size()));
  }
  return s;  // rank -1 (a process without RANK) is resolved by the caller
}

}  // namespace rankscope::hang
