#include "rankscope/ingest/kineto/recorded_events.h"

#include <algorithm>
#include <cstring>

namespace rankscope::kineto {
namespace {

constexpr size_t kBlockBytes = 64 * 1024;

// The string views a `present` bit vouches for; `scratch`: may point into the parser's scratch
// strings (arrays rendered as text), so valid during the call only whatever EventSink::Views says.
struct GuardedView {
  RawEvent::Field field;
  std::string_view RawEvent::*member;
  bool scratch;
};
constexpr GuardedView kGuardedViews[] = {
    {RawEvent::kPgRanks, &RawEvent::pg_ranks, true},
    {RawEvent::kInSplit, &RawEvent::in_split, true},
    {RawEvent::kOutSplit, &RawEvent::out_split, true},
    {RawEvent::kCat, &RawEvent::cat, false},
    {RawEvent::kCollectiveName, &RawEvent::collective_name, false},
    {RawEvent::kDtype, &RawEvent::dtype, false},
    {RawEvent::kPgName, &RawEvent::pg_name, false},
    {RawEvent::kPgDesc, &RawEvent::pg_desc, false},
    {RawEvent::kArgName, &RawEvent::arg_name, false},
    {RawEvent::kArgLabels, &RawEvent::arg_labels, false},
    {RawEvent::kInputType, &RawEvent::input_type, false},
    {RawEvent::kInputDimsText, &RawEvent::input_dims_text, false},
    {RawEvent::kInputTypesText, &RawEvent::input_types_text, false},
};

}  // namespace

std::string_view RecordedEvents::Keep(std::string_view s) {
  if (s.empty()) return {};
  while (block_ < blocks_.size() && block_used_ + s.size() > block_sizes_[block_]) {
    ++block_;
    block_used_ = 0;
  }
  if (block_ == blocks_.size()) {
    const size_t size = std::max(kBlockBytes, s.size());
    blocks_.push_back(std::make_unique<char[]>(size));
    block_sizes_.push_back(size);
    block_used_ = 0;
  }
  char* out = blocks_[block_].get() + block_used_;
  std::memcpy(out, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(out, s.size());
}

void RecordedEvents::Add(const RawEvent& ev, Views views) {
  if (used_ == entries_.size()) entries_.emplace_back();
  Entry& entry = entries_[used_++];
  entry.skipped = false;
  RawEvent& e = entry.event;
  e = ev;
  // A view is copied if it may not outlive the call, and only if its field is present: a stale
  // view may point into a freed buffer.
  const bool copy_all = views == Views::kDuringCall;
  for (const GuardedView& g : kGuardedViews) {
    if (!ev.has(g.field)) {
      e.*g.member = {};
    } else if (copy_all || g.scratch) {
      e.*g.member = Keep(ev.*g.member);
    }
  }
  if (copy_all) {  // always valid: RawEvent::Reset clears them for every element
    e.name = Keep(ev.name);
    e.pid.text = Keep(ev.pid.text);
    e.tid.text = Keep(ev.tid.text);
    e.flow_id_text = Keep(ev.flow_id_text);
  }
  // reject_reason and ignored_field point at string literals: kept as they are.
}

void RecordedEvents::Skip(const std::string& reason, uint64_t offset) {
  if (used_ == entries_.size()) entries_.emplace_back();
  Entry& entry = entries_[used_++];
  entry.skipped = true;
  entry.reason = reason;
  entry.offset = offset;
}

void RecordedEvents::BeginTentative() {
  tentative_used_ = used_;
  tentative_block_ = block_;
  tentative_block_used_ = block_used_;
}

void RecordedEvents::AbandonTentative() {
  used_ = tentative_used_;
  block_ = tentative_block_;
  block_used_ = tentative_block_used_;
}

void RecordedEvents::Replay(EventSink* sink) const {
  for (size_t i = 0; i < used_; ++i) {
    const Entry& entry = entries_[i];
    if (entry.skipped) {
      sink->Skip(entry.reason, entry.offset);
    } else {
      sink->Add(entry.event, Views::kUntilNextChunk);
    }
  }
}

void RecordedEvents::Clear() {
  used_ = 0;
  block_ = 0;
  block_used_ = 0;
}

}  // namespace rankscope::kineto
