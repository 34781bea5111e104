#include "rankscope/report/finding_json.h"

#include <cmath>

#include "rankscope/report/finding_text.h"

namespace rankscope {
namespace {

using nlohmann::json;

// Durations are whole nanoseconds in the report; other quantities keep their fraction.
json Value(const Quantity& q) {
  const std::string_view n = q.name;
  const bool ns = n.size() > 3 && n.substr(n.size() - 3) == "_ns";
  const bool bytes = n.size() > 6 && n.substr(n.size() - 6) == "_bytes";
  return ns || bytes ? json(std::llround(q.value)) : json(q.value);
}

json EvidenceJson(const Evidence& e, const Finding& f) {
  json values = json::object();
  for (const Quantity& q : e.values) values[q.name] = Value(q);
  return {{"kind", EvidenceKindName(e.kind)},
          {"rank", e.rank >= 0 ? json(e.rank) : json(nullptr)},
          {"ranks", e.ranks},
          {"host", e.host.empty() ? json(nullptr) : json(e.host)},
          {"subject", e.subject.empty() ? json(nullptr) : json(e.subject)},
          {"subject_kind", e.subject_kind.empty() ? json(nullptr) : json(e.subject_kind)},
          {"detail", e.detail.empty() ? json(nullptr) : json(e.detail)},
          {"values", values},
          {"text", DescribeEvidence(e, f)}};
}

json CostJson(const Cost& c) {
  return {{"method", CostMethodName(c.method)},
          {"unit", c.unit},
          {"saving_ns", std::llround(c.saving_ns)},
          {"share", c.step_ns > 0 ? c.saving_ns / c.step_ns : 0.0},
          {"step_ns", std::llround(c.step_ns)},
          {"estimated_step_ns", std::llround(c.estimated_step_ns)},
          {"added_ns", std::llround(c.added_ns)},
          {"window_share", c.share}};
}

}  // namespace

json FindingToJson(const Finding& f) {
  const FindingWords words = DescribeFinding(f);
  json evidence = json::array();
  for (const Evidence& e : f.evidence) evidence.push_back(EvidenceJson(e, f));
  json subject = nullptr;
  if (!f.subject.empty()) subject = {{"name", f.subject}, {"kind", f.subject_kind}, {"detail", f.subject_detail}};
  return {{"kind", FindingKindId(f.kind)},
          {"severity", SeverityName(f.severity)},
          {"title", words.title},
          {"ranks", f.ranks},
          {"hosts", f.hosts},
          {"host", f.hosts.size() == 1 ? json(f.hosts.front()) : json(nullptr)},
          {"subject", subject},
          {"cost", CostJson(f.cost)},
          {"cost_text", words.cost},
          {"evidence", evidence},
          {"next", {{"kind", NextStepKindName(f.next.kind)},
                    {"subject", f.next.subject.empty() ? json(nullptr) : json(f.next.subject)},
                    {"text", words.next}}}};
}

json FindingsToJson(const std::vector<Finding>& findings) {
  json out = json::array();
  for (const Finding& f : findings) out.push_back(FindingToJson(f));
  return out;
}

}  // namespace rankscope
