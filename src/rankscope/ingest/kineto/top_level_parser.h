// Applies one top-level key of a Kineto trace (everything except traceEvents) to TraceInfo:
// distributedInfo, deviceProperties, baseTimeNanoseconds, schemaVersion, names and ids.
#pragma once

#include <string_view>

#include "rankscope/ingest/trace_model.h"

namespace rankscope::kineto {

// `value` is the JSON text of the value (empty when it exceeded the reader's size limit).
// Problems are recorded in model->stats.ignored_fields; nothing here is fatal.
void ApplyTopLevelValue(std::string_view key, std::string_view value, uint64_t offset, TraceModel* model);

}  // namespace rankscope::kineto
