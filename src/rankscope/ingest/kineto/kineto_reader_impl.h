// Declarations of the per-target reader bodies, for kineto_format.cc to dispatch between.
#pragma once

#include "rankscope/base/status.h"
#include "rankscope/ingest/byte_source.h"
#include "rankscope/ingest/reader_options.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope::kineto {
namespace haswell {
Status ReadTraceInto(ByteSource* source, const ReaderOptions& options, TraceModel* model);
}
namespace generic {
Status ReadTraceInto(ByteSource* source, const ReaderOptions& options, TraceModel* model);
}
}  // namespace rankscope::kineto
