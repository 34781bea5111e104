// ModelBuilder: turns RawEvents into rows of a TraceModel.
//
// It decides what each event is (slice, instant, memory sample, flow, metadata), resolves
// pid/tid to a track, interns names, and counts what it skips and why.
#pragma once

#include <array>
#include <optional>
#include <unordered_map>

#include "rankscope/ingest/kineto/categories.h"
#include "rankscope/ingest/kineto/event_sink.h"
#include "rankscope/ingest/kineto/raw_event.h"
#include "rankscope/ingest/trace_model.h"

namespace rankscope::kineto {

class ModelBuilder final : public EventSink {
 public:
  explicit ModelBuilder(TraceModel* model) : model_(model) {}

  void Add(const RawEvent& ev);
  void Add(const RawEvent& ev, Views) override { Add(ev); }  // used before the call returns
  // Adds the per-spelling counts kept while reading to model->stats.by_category.
  void Finish();

  // Counts an element that could not be parsed at all.
  void Skip(const std::string& reason, uint64_t offset) override {
    ++model_->stats.elements;
    model_->stats.skipped.Add(reason, offset);
  }
  void BeginTentative() override { tentative_ = MakeCheckpoint(); }
  void CommitTentative() override { tentative_.reset(); }
  void AbandonTentative() override {
    if (tentative_) Rollback(*tentative_);
    tentative_.reset();
  }

 private:
  // Everything Add() can append to, so that a chunk parsed on a guess can be taken back.
  // Interned strings, tracks and process names are kept: they are idempotent.
  struct Checkpoint {
    size_t slices, gpu, python, collectives, op_shapes, op_work, p2p_peers, forward_ops, backward_ops, instants, memory,
        flows;
    IngestStats stats;
    std::array<uint64_t, kNumKnownCategories> by_known_category;
  };
  Checkpoint MakeCheckpoint() const;
  void Rollback(const Checkpoint& checkpoint);

  struct TrackKey {
    JsonId pid, tid;
    bool operator==(const TrackKey&) const = default;
  };
  struct TrackKeyHash {
    size_t operator()(const TrackKey& k) const {
      return std::hash<int64_t>()(k.pid.value * 1000003 + k.tid.value * 31 + k.pid.is_string * 2 +
                                  k.tid.is_string);
    }
  };

  JsonId Intern(const RawId& id);
  uint32_t TrackFor(const RawEvent& ev);
  uint32_t ProcessFor(const JsonId& pid);
  void AddSlice(const RawEvent& ev, ActivityKind kind);
  void AddInstant(const RawEvent& ev, ActivityKind kind);
  void AddMemory(const RawEvent& ev, uint32_t track);
  void AddFlow(const RawEvent& ev, FlowKind kind);
  void AddMetadata(const RawEvent& ev);
  void AddGpuInfo(const RawEvent& ev, uint32_t track);
  void AddCollective(const RawEvent& ev, uint32_t slice);
  void AddAnnotationCollective(const RawEvent& ev, uint32_t slice);
  void AddOpShape(const RawEvent& ev, uint32_t slice);
  ActivityKind CountCategory(const RawEvent& ev, FlowKind* flow_kind);

  TraceModel* model_;
  // Events per known spelling (index into kKnownCategories): an array while reading, merged into
  // the model's by-spelling map at the end.
  std::array<uint64_t, kNumKnownCategories> by_known_category_{};
  std::unordered_map<TrackKey, uint32_t, TrackKeyHash> track_index_;
  std::unordered_map<int64_t, uint32_t> int_process_index_;
  std::unordered_map<int64_t, uint32_t> string_process_index_;
  TrackKey last_key_{};
  uint32_t last_track_ = 0xFFFFFFFFu;
  std::optional<Checkpoint> tentative_;
};

}  // namespace rankscope::kineto
