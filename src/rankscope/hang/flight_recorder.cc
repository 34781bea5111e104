#include "rankscope/hang/flight_recorder.h"

#include <algorithm>
#include <charconv>

#include <nlohmann/json.hpp>

#include "rankscope/base/utf8.h"
#include "rankscope/hang/pickle_reader.h"

namespace rankscope::hang {
namespace {

using Json = nlohmann::json;

// A float where an integer is expected (a hand-made dump, a NaN from a pickle) is clamped, never
// converted out of range.
int64_t FromDouble(double v) {
  if (!(v == v)) return 0;
  if (v >= 9.2e18) return INT64_MAX;
  if (v <= -9.2e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

int64_t FromJsonNumber(const Json& v) {
  if (v.is_number_unsigned()) return static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), INT64_MAX));
  if (v.is_number_integer()) return v.get<int64_t>();
  return FromDouble(v.get<double>());
}

int64_t Int(const Json& j, const char* key, int64_t fallback = 0) {
  auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (it->is_number()) return FromJsonNumber(*it);
  if (it->is_string()) {  // pg_status and a few others are strings of numbers
    const std::string& s = it->get_ref<const std::string&>();
    int64_t v = fallback;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
  }
  return fallback;
}

// A string or a number as text; anything else (a list, which could be nested deeper than
// dump() can recurse) is "". Strings come from the job's user: printable only.
std::string Text(const Json& v) {
  if (v.is_string()) return PrintableUtf8(v.get_ref<const std::string&>());
  if (v.is_number() || v.is_boolean()) return v.dump();
  return "";
}

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() ? "" : Text(*it);
}

bool Bool(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() && it->get<bool>();
}

std::vector<std::vector<int64_t>> Sizes(const Json& j, const char* key) {
  std::vector<std::vector<int64_t>> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const Json& shape : *it) {
    std::vector<int64_t> dims;
    if (shape.is_array()) {
      for (const Json& d : shape) dims.push_back(d.is_number() ? FromJsonNumber(d) : -1);
    }
    out.push_back(std::move(dims));
  }
  return out;
}

std::vector<std::string> Strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return out;
  for (const Json& s : *it) out.push_back(Text(s));
  return out;
}

bool ParseEntry(const Json& e, FrEntry* out) {
  if (!e.is_object()) return false;
  auto pg = e.find("process_group");
  if (pg == e.end()) return false;
  if (pg->is_array() && !pg->empty()) {
    out->pg_name = Text((*pg)[0]);
    if (pg->size() > 1) out->pg_desc = Text((*pg)[1]);
  } else if (pg->is_string()) {
    out->pg_name = Text(*pg);
  } else {
    return false;
  }
  out->record_id = Int(e, "record_id", -1);
  out->pg_id = Str(e, "pg_id");
  out->collective_seq_id = Int(e, "collective_seq_id");
  out->p2p_seq_id = Int(e, "p2p_seq_id");
  out->op_id = Int(e, "op_id");
  out->is_p2p = Bool(e, "is_p2p");
  out->profiling_name = Str(e, "profiling_name");
  out->input_sizes = Sizes(e, "input_sizes");
  out->output_sizes = Sizes(e, "output_sizes");
  out->input_dtypes = Strings(e, "input_dtypes");
  out->output_dtypes = Strings(e, "output_dtypes");
  out->state = Str(e, "state");
  out->retired = Bool(e, "retired");
  out->time_created_ns = Int(e, "time_created_ns");
  out->timeout_ms = Int(e, "timeout_ms");
  return true;
}

// pg_config: {"<name>": {"name", "desc", "ranks": "[0, 1]" or [0, 1]}} (NCCL fills the ranks,
// gloo leaves "[]").
void ParsePgConfig(const Json& config, FrDump* d) {
  if (!config.is_object()) return;
  for (const auto& [name, pg] : config.items()) {
    if (!pg.is_object()) continue;
    ProcessGroupInfo info;
    info.name = PrintableUtf8(name);
    info.desc = Str(pg, "desc");
    auto ranks = pg.find("ranks");
    if (ranks != pg.end() && ranks->is_string()) {
      auto parsed = Json::parse(ranks->get<std::string>(), nullptr, false);
      if (parsed.is_array()) {
        for (const Json& r : parsed) {
          if (r.is_number_integer()) info.ranks.push_back(r.get<int64_t>());
        }
      }
    } else if (ranks != pg.end() && ranks->is_array()) {
      for (const Json& r : *ranks) {
        if (r.is_number_integer()) info.ranks.push_back(r.get<int64_t>());
      }
    }
    std::sort(info.ranks.begin(), info.ranks.end());
    if (!info.name.empty()) d->groups[info.name] = std::move(info);
  }
}

void ParseRankscope(const Json& rs, FrDump* d) {
  if (!rs.is_object()) return;
  d->from_rankscope = true;
  d->rank = Int(rs, "rank", d->rank);
  d->world_size = Int(rs, "world_size", -1);
  d->pid = Int(rs, "pid");
  d->job = Str(rs, "job");
  d->host = Str(rs, "host");
  d->capture = Str(rs, "capture");
  d->time_unix_ns = Int(rs, "time_unix_ns");
  auto groups = rs.find("process_groups");
  if (groups == rs.end() || !groups->is_object()) return;
  for (const auto& [name, pg] : groups->items()) {
    if (!pg.is_object()) continue;
    ProcessGroupInfo info;
    info.name = PrintableUtf8(name);
    info.desc = Str(pg, "desc");
    if (auto r = pg.find("ranks"); r != pg.end() && r->is_array()) {
      for (const Json& v : *r) {
        if (v.is_number_integer()) info.ranks.push_back(v.get<int64_t>());
      }
    }
    std::sort(info.ranks.begin(), info.ranks.end());
    d->groups[info.name] = std::move(info);  // the collector knows better than gloo's empty pg_config
  }
}

}  // namespace

bool FrEntry::completed() const {
  if (state == "completed") return true;
  return retired && profiling_name.rfind("gloo:", 0) == 0;
}

std::string_view FrEntry::op() const {
  std::string_view name = profiling_name;
  const size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

StatusOr<FrDump> ParseFlightRecorder(std::string_view text, std::string_view path, int64_t rank_hint) {
  if (text.size() > kMaxFlightRecorderBytes) {
    return OutOfRange("{}: {} bytes is more than a flight-recorder dump can be ({} MiB at most)", path, text.size(),
                      kMaxFlightRecorderBytes >> 20);
  }
  Json j;
  if (LooksLikePickle(text)) {  // PyTorch's own dumps (NCCL on a timeout, _dump_fr_trace)
    auto decoded = ReadPickle(text);
    if (!decoded.ok()) return decoded.status().WithContext(path);
    j = std::move(*decoded);
  } else {
    try {
      j = Json::parse(text.begin(), text.end());
    } catch (const Json::parse_error& e) {
      return DataLoss("{}: not a complete JSON flight-recorder dump (byte {} of {}): a truncated file?", path, e.byte,
                      text.size());
    } catch (const Json::exception& e) {  // e.g. a number out of range: 1e999
      return DataLoss("{}: not a flight-recorder dump: {}", path, e.what());
    }
  }
  if (!j.is_object() || !j.contains("entries")) {
    return DataLoss("{}: a dump without \"entries\": not a flight-recorder dump", path);
  }
  FrDump d;
  d.path = std::string(path);
  d.rank = rank_hint;
  d.version = Str(j, "version");
  if (auto c = j.find("pg_config"); c != j.end()) ParsePgConfig(*c, &d);
  if (auto rs = j.find("rankscope"); rs != j.end()) ParseRankscope(*rs, &d);
  const Json& entries = j["entries"];
  if (!entries.is_array()) return DataLoss("{}: \"entries\" is not a list", path);
  for (const Json& e : entries) {
    FrEntry entry;
    if (ParseEntry(e, &entry)) {
      d.entries.push_back(std::move(entry));
    } else {
      ++d.skipped_entries;
    }
  }
  // A group's name and description as the entries give them, when the config said nothing.
  for (const FrEntry& e : d.entries) {
    ProcessGroupInfo& g = d.groups[e.pg_name];
    g.name = e.pg_name;
    if (g.desc.empty()) g.desc = e.pg_desc;
  }
  return d;
}

}  // namespace rankscope::hang
