#include "rankscope/ingest/kineto/top_level_parser.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "rankscope/base/parse_int.h"

namespace rankscope::kineto {
namespace {

using simdjson::dom::element;

std::optional<int64_t> AsInt(element e) {
  int64_t v;
  if (e.get_int64().get(v) == simdjson::SUCCESS) return v;
  uint64_t u;
  if (e.get_uint64().get(u) == simdjson::SUCCESS) return std::nullopt;  // > INT64_MAX
  std::string_view s;  // some producers quote numbers
  if (e.get_string().get(s) == simdjson::SUCCESS) return ParseInt(s);
  return std::nullopt;
}

std::string AsString(element e) {
  std::string_view s;
  if (e.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return simdjson::minify(e);
}

int64_t IntField(element object, std::string_view key) {
  element v;
  if (object[key].get(v) != simdjson::SUCCESS) return -1;
  return AsInt(v).value_or(-1);
}

void ReadDevices(element value, TraceInfo* info, IngestStats* stats, uint64_t offset) {
  simdjson::dom::array devices;
  if (value.get_array().get(devices) != simdjson::SUCCESS) {
    stats->ignored_fields.Add("top-level deviceProperties is not an array", offset);
    return;
  }
  info->has_device_properties = true;
  for (element d : devices) {
    if (!d.is_object()) {
      stats->ignored_fields.Add("a deviceProperties entry is not an object", offset);
      continue;
    }
    DeviceProperties p;
    p.id = IntField(d, "id");
    element name;
    if (d["name"].get(name) == simdjson::SUCCESS) p.name = AsString(name);
    p.total_global_mem = IntField(d, "totalGlobalMem");
    p.compute_major = IntField(d, "computeMajor");
    p.compute_minor = IntField(d, "computeMinor");
    p.num_sms = IntField(d, "numSms");
    p.max_threads_per_block = IntField(d, "maxThreadsPerBlock");
    p.warp_size = IntField(d, "warpSize");
    info->devices.push_back(std::move(p));
  }
}

void ReadDistributedInfo(element value, TraceInfo* info, IngestStats* stats, uint64_t offset) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    stats->ignored_fields.Add("top-level distributedInfo is not an object", offset);
    return;
  }
  DistributedInfo& d = info->distributed;
  d.present = true;
  for (auto [key, v] : object) {
    if (key == "backend") {
      d.backend = AsString(v);
    } else if (key == "rank") {
      d.rank = AsInt(v);
      if (!d.rank) stats->ignored_fields.Add("distributedInfo.rank is not an integer", offset);
    } else if (key == "world_size") {
      d.world_size = AsInt(v);
      if (!d.world_size) stats->ignored_fields.Add("distributedInfo.world_size is not an integer", offset);
    } else if (key == "pg_count") {
      d.pg_count = AsInt(v);
    } else if (key == "nccl_version") {
      d.nccl_version = AsString(v);
    } else if (key == "pg_config" && v.is_array()) {
      for (element pg : v.get_array()) {
        if (!pg.is_object()) continue;
        ProcessGroupConfig c;
        element f;
        if (pg["pg_name"].get(f) == simdjson::SUCCESS) c.name = AsString(f);
        if (pg["pg_desc"].get(f) == simdjson::SUCCESS) c.desc = AsString(f);
        if (pg["backend_config"].get(f) == simdjson::SUCCESS) c.backend_config = AsString(f);
        c.size = IntField(pg, "pg_size");
        simdjson::dom::array ranks;
        if (pg["ranks"].get_array().get(ranks) == simdjson::SUCCESS) {
          for (element r : ranks) {
            if (auto rank = AsInt(r)) c.ranks.push_back(*rank);
          }
        }
        d.pg_config.push_back(std::move(c));
      }
    }
  }
}

void ReadCpuSched(element value, TraceInfo* info, IngestStats* stats, uint64_t offset) {
  const int64_t run = value.is_object() ? IntField(value, "run_ns") : -1;
  const int64_t wait = value.is_object() ? IntField(value, "wait_ns") : -1;
  if (run < 0 || wait < 0) {
    stats->ignored_fields.Add("rankscope_cpu_sched has no non-negative integer run_ns and wait_ns", offset);
    return;
  }
  info->cpu_sched = {run, wait, IntField(value, "threads")};
}

}  // namespace

void ApplyTopLevelValue(std::string_view key, std::string_view value, uint64_t offset, TraceModel* model) {
  TraceInfo& info = model->info;
  IngestStats& stats = model->stats;
  if (value.empty()) {
    stats.ignored_fields.Add(fmt::format("top-level \"{}\" is too large and was skipped", key), offset);
    return;
  }
  simdjson::dom::parser parser;
  element e;
  const simdjson::padded_string padded(value);
  if (auto err = parser.parse(padded).get(e)) {
    stats.ignored_fields.Add(fmt::format("top-level \"{}\" is not valid JSON ({})", key, simdjson::error_message(err)), offset);
    return;
  }
  if (key == "traceEvents") return;  // handled by the tokenizer
  if (key == "schemaVersion") {
    info.schema_version = AsInt(e);
  } else if (key == "baseTimeNanoseconds") {
    info.base_time_ns = AsInt(e);
    if (!info.base_time_ns) stats.ignored_fields.Add("baseTimeNanoseconds is not an integer that fits in 64 bits", offset);
  } else if (key == "deviceProperties") {
    ReadDevices(e, &info, &stats, offset);
  } else if (key == "distributedInfo") {
    ReadDistributedInfo(e, &info, &stats, offset);
  } else if (key == "traceName") {
    info.trace_name = AsString(e);
  } else if (key == "displayTimeUnit") {
    info.display_time_unit = AsString(e);
  } else if (key == "host_name" || key == "hostname") {
    info.host_name = AsString(e);
  } else if (key == "trace_id") {
    info.trace_id = AsString(e);
  } else if (key == "rankscope_cpu_sched") {
    ReadCpuSched(e, &info, &stats, offset);
  } else if (!e.is_array() && !e.is_object()) {
    info.extra[std::string(key)] = AsString(e);
  }
}

}  // namespace rankscope::kineto
