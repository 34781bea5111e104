#include <algorithm>
#include <map>

#include "rankscope/hang/rank_ranges.h"
#include "rankscope/report/hang_report.h"
#include "rankscope/report/text_format.h"

namespace rankscope {
namespace {

using hang::FormatRankRanges;

std::string Ranks(const std::vector<int64_t>& ranks) {
  return fmt::format("rank{} {}", ranks.size() == 1 ? "" : "s", FormatRankRanges(ranks));
}

const Evidence* Find(const Finding& f, EvidenceKind kind, std::string_view subject_kind = "") {
  for (const Evidence& e : f.evidence) {
    if (e.kind == kind && (subject_kind.empty() || e.subject_kind == subject_kind)) return &e;
  }
  return nullptr;
}

std::string Seconds(double s) { return s < 0 ? "?" : fmt::format("{:.1f} s", s); }

std::string FrameText(const Evidence& e) {
  return e.detail.empty() || e.subject_kind == "gil" ? e.subject : fmt::format("{} ({})", e.subject, e.detail);
}

std::string FrameLine(const hang::Frame& f) {
  if (f.native) return fmt::format("{} ({})", f.function, f.file);
  std::string file = f.file;
  const size_t site = file.rfind("site-packages/");
  if (site != std::string::npos) file = file.substr(site + 14);
  return f.code.empty() ? fmt::format("{}:{} {}", file, f.line, f.function)
                        : fmt::format("{}:{} {}   {}", file, f.line, f.function, f.code);
}

std::string WaitingClause(const Finding& f) {
  const Evidence* w = Find(f, EvidenceKind::kCollectiveWaiting);
  if (!w) return "";
  return fmt::format("{} wait in {} (process group {}, sequence {}{})", Ranks(w->ranks), w->subject, w->detail,
                     w->Get("seq"), w->Has("pending_s") ? fmt::format(", open {}", Seconds(w->Get("pending_s"))) : "");
}

void PrintStackGroups(const hang::RoleGroups& rg, const hang::RoleVerdict& v, const Style& st, std::string* out) {
  for (size_t i = 0; i < rg.groups.size(); ++i) {
    const hang::StackGroup& g = rg.groups[i];
    const bool majority = v.has_majority && i == v.majority_group;
    *out += fmt::format("  {} ({} of {}{})\n", st.Bold(Ranks(g.ranks)), g.ranks.size(), rg.ranks.size(),
                        majority ? ", majority" : "");
    // Python frames of the group; the example's native frames below the innermost one.
    const size_t shown = std::min<size_t>(g.frames.size(), 12);
    if (g.frames.size() > shown) *out += fmt::format("      ... {} outer frames\n", g.frames.size() - shown);
    for (size_t k = g.frames.size() - shown; k < g.frames.size(); ++k) *out += "      " + FrameLine(g.frames[k]) + "\n";
    size_t natives = 0;
    for (auto it = g.example.rbegin(); it != g.example.rend() && it->native && natives < 6; ++it, ++natives) {}
    for (size_t k = g.example.size() - natives; k < g.example.size(); ++k) {
      *out += "      " + st.Dim("[C] " + FrameLine(g.example[k])) + "\n";
    }
    if (g.frames.empty() && natives == 0) *out += "      (no Python frames)\n";
  }
  for (const hang::Divergence& d : v.odd) {
    *out += fmt::format("  {} part from the majority {}: {} at {}, the majority at {}\n", Ranks(d.ranks),
                        d.common_frame ? "below " + FrameLine(*d.common_frame) : "at the outermost frame",
                        Ranks(d.ranks), d.odd_frame ? FrameLine(*d.odd_frame) : "(its stack ends there)",
                        d.majority_frame ? FrameLine(*d.majority_frame) : "(its stack ends there)");
  }
}

void PrintCollectives(const hang::HangAnalysis& a, std::string* out) {
  if (a.files.dumps.empty()) {
    *out += "\nCollectives: no Flight Recorder dump (the collector writes rank<R>.flightrecorder when torch.distributed "
            "is initialized)\n";
    return;
  }
  *out += "\nCollectives (Flight Recorder, matched per process group by sequence number)\n";
  for (const hang::GroupMatch& g : a.fr.groups) {
    *out += fmt::format("  process group {}{}: {} {}\n", g.name, g.desc.empty() ? "" : " (" + g.desc + ")",
                        Ranks(g.members), g.members_known ? "" : "(members inferred from the dumps)");
    if (g.open) {
      const hang::OpenCollective& o = *g.open;
      std::vector<int64_t> waiting;
      for (int64_t r : o.entered) {
        if (std::find(o.completed.begin(), o.completed.end(), r) == o.completed.end()) waiting.push_back(r);
      }
      *out += fmt::format("    first open: seq {} {} {} {}", o.seq, o.call.op, o.call.SizesText(), o.call.DtypesText());
      if (!waiting.empty()) *out += fmt::format("; waiting: {}", FormatRankRanges(waiting));
      if (!o.completed.empty()) *out += fmt::format("; completed: {}", FormatRankRanges(o.completed));
      if (!o.missing.empty()) *out += fmt::format("; never entered: {}", FormatRankRanges(o.missing));
      if (!o.unknown.empty()) *out += fmt::format("; no dump: {}", FormatRankRanges(o.unknown));
      if (o.pending_s >= 0) *out += fmt::format("; open {}", Seconds(o.pending_s));
      *out += "\n";
    } else {
      *out += "    every collective recorded was completed by every member\n";
    }
    // Last completed, folded by value.
    std::map<int64_t, std::vector<int64_t>> by_last;
    for (const hang::MemberState& m : g.states) {
      if (m.has_dump) by_last[m.last_completed].push_back(m.rank);
    }
    std::string last;
    for (const auto& [seq, ranks] : by_last) last += fmt::format("{}{}: seq {}", last.empty() ? "" : ", ", Ranks(ranks), seq);
    if (!last.empty()) *out += "    last completed: " + last + "\n";
    for (const hang::Mismatch& m : g.mismatches) {
      *out += fmt::format("    mismatch at seq {} ({}): {} {} {}", m.seq, m.field, Ranks(m.majority.ranks),
                          m.majority.call.op, m.majority.call.SizesText());
      for (const auto& odd : m.odd) *out += fmt::format(" vs {} {} {}", Ranks(odd.ranks), odd.call.op, odd.call.SizesText());
      *out += "\n";
    }
  }
  for (const std::string& n : a.fr.notes) *out += "  note: " + n + "\n";
}

}  // namespace

std::string HangFindingSentence(const Finding& f) {
  const std::string who = Ranks(f.ranks);
  switch (f.kind) {
    case FindingKind::kHangCollectiveMismatch: {
      const Evidence* maj = Find(f, EvidenceKind::kCollectiveCall, "majority");
      const Evidence* odd = Find(f, EvidenceKind::kCollectiveCall, "odd");
      if (!maj || !odd) break;
      return fmt::format("{} called {} at sequence {} of process group {}, where {} called {}: the {} differs{}.",
                         Ranks(odd->ranks), odd->subject, maj->Get("seq"), maj->detail, Ranks(maj->ranks), maj->subject,
                         f.subject_detail == "op" ? "collective" : f.subject_detail,
                         f.ranks.empty() ? " (as many ranks on each side: either may be wrong)" : "");
    }
    case FindingKind::kHangMissingFromCollective: {
      std::string s = fmt::format("{} never entered the collective the other members wait in: {}.", who, WaitingClause(f));
      if (const Evidence* e = Find(f, EvidenceKind::kCollectiveElsewhere)) {
        s += fmt::format(" Meanwhile rank {} waits in {} (process group {}, sequence {}), which the others have not "
                         "reached: it skipped a collective.", e->rank, e->subject, e->detail, e->Get("seq"));
      } else if (const Evidence* in = Find(f, EvidenceKind::kStackFrame, "innermost")) {
        s += fmt::format(" Rank {} is at {}.", in->rank, FrameText(*in));
      }
      return s;
    }
    case FindingKind::kHangUnresponsiveRank: {
      std::string s = fmt::format("{} did not answer the snapshot: a thread holds the GIL in {}; its stack was taken "
                                  "from outside with py-spy.", who, f.subject.empty() ? "C code" : f.subject);
      if (const Evidence* in = Find(f, EvidenceKind::kStackFrame, "innermost")) {
        s += fmt::format(" The call into C is at {}.", FrameText(*in));
      }
      if (Find(f, EvidenceKind::kCollectiveWaiting)) s += " " + WaitingClause(f) + " for it.";
      return s;
    }
    case FindingKind::kHangDataLoaderWait: {
      std::string s = fmt::format("{} waits for a batch from its DataLoader", who);
      if (const Evidence* in = Find(f, EvidenceKind::kStackFrame, "innermost")) s += fmt::format(" (at {})", FrameText(*in));
      s += " and never entered the collective the other members wait in: " + WaitingClause(f) + ".";
      for (const Evidence& e : f.evidence) {
        if (e.kind == EvidenceKind::kStackFrame && e.subject_kind == "dataloader_worker") {
          s += fmt::format(" Its DataLoader worker (pid {:.0f}) is at {}.", e.Get("pid"), FrameText(e));
        }
      }
      return s;
    }
    case FindingKind::kHangStackOutlier: {
      const Evidence* odd = Find(f, EvidenceKind::kStackFrame, "odd");
      const Evidence* maj = Find(f, EvidenceKind::kStackFrame, "majority");
      const Evidence* common = Find(f, EvidenceKind::kStackFrame, "common");
      return fmt::format("{}'s main thread is at {} while {} are at {}{}.", who, odd ? FrameText(*odd) : f.subject,
                         maj ? Ranks(maj->ranks) : "the others", maj ? FrameText(*maj) : "?",
                         common ? "; the stacks part below " + common->subject : "");
    }
    case FindingKind::kHangStuckInCollective:
      return fmt::format("Every member entered the same collective and none completed it: {}. No rank is missing.",
                         WaitingClause(f));
    default:
      break;
  }
  return fmt::format("{}: {}", FindingKindId(f.kind), who);
}

std::string HangNextStepSentence(const Finding& f) {
  const std::string who = Ranks(f.ranks);
  switch (f.next.kind) {
    case NextStepKind::kHangFrame:
      return f.next.detail.empty()
                 ? fmt::format("look at what {} does at {}", who, f.next.subject)
                 : fmt::format("look at what {} does at {} instead of calling {}", who, f.next.subject, f.next.detail);
    case NextStepKind::kHangCollectiveCallSites:
      return fmt::format("compare where and with which arguments the ranks call {}: the {} differs", f.next.subject,
                         f.next.detail == "op" ? "collective" : f.next.detail);
    case NextStepKind::kHangNativeCall:
      return fmt::format("look at the C call {}: it blocks while holding the GIL (release the GIL around it or bound "
                         "it with a timeout); `py-spy dump --native --pid PID` shows it live", f.next.subject);
    case NextStepKind::kHangDataLoaderWorkers:
      if (!f.next.subject.empty()) {
        return fmt::format("look at {} in the Dataset or collate code, where {}'s DataLoader worker is stuck (its "
                           "stack, from py-spy, is rank<R>.worker<K>.stacks.txt in the snapshot)", f.next.subject, who);
      }
      return fmt::format("look at {}'s DataLoader worker processes (`py-spy dump --pid PID` of each): a worker that is "
                         "stuck, or died without the loader noticing", who);
    case NextStepKind::kHangTransport:
      return "look at the transport: the network between the hosts, the peers' processes, the communication library's "
             "logs (NCCL_DEBUG=INFO)";
    default:
      return "";
  }
}

std::string HangReportText(const hang::HangAnalysis& a, bool color) {
  const Style st(color);
  std::string out;
  std::vector<int64_t> all, collector, pyspy, none;
  std::vector<std::string> hosts;
  for (const auto& o : a.ranks) {
    all.push_back(o.rank);
    (!o.has_stacks ? none : o.source == hang::StackSource::kPySpy ? pyspy : collector).push_back(o.rank);
    if (!o.host.empty() && std::find(hosts.begin(), hosts.end(), o.host) == hosts.end()) hosts.push_back(o.host);
  }
  out += st.Bold(fmt::format("Hang analysis: {}", Ranks(all)));
  if (!a.files.job.empty()) out += fmt::format(" of job {}", a.files.job);
  if (!a.files.capture.empty()) out += fmt::format(", snapshot {}", a.files.capture);
  if (!hosts.empty()) out += fmt::format(", host{} {}", hosts.size() > 1 ? "s" : "", fmt::join(hosts, ", "));
  out += "\n";
  out += "Stacks: ";
  std::vector<std::string> parts;
  if (!collector.empty()) parts.push_back(fmt::format("{} by the collector", Ranks(collector)));
  if (!pyspy.empty()) parts.push_back(fmt::format("{} from outside with py-spy (the collector did not answer)", Ranks(pyspy)));
  if (!none.empty()) parts.push_back(fmt::format("none of {}", Ranks(none)));
  out += fmt::format("{}\n", fmt::join(parts, "; "));
  for (const auto& o : a.ranks) {
    if (!o.has_stacks && o.how != "none") out += fmt::format("  rank {}: {}\n", o.rank, o.how);
  }
  if (a.stalled) {
    std::vector<int64_t> stalled;
    for (const auto& o : a.ranks) {
      if (o.stalled) stalled.push_back(o.rank);
    }
    out += a.stalled_for_s >= 0 ? fmt::format("Stalled: {} for up to {}\n", stalled.empty() ? "yes" : Ranks(stalled),
                                              Seconds(a.stalled_for_s))
                                : "Stalled: assumed (the files carry no times)\n";
  } else {
    out += fmt::format("Not stalled: every rank completed a step and every collective moved within the last {} "
                       "(threshold {:.0f} s): the job is making progress\n", Seconds(a.stalled_for_s),
                       a.options.stalled_after_s);
  }

  out += "\n" + st.Bold("Findings") + "\n";
  if (a.findings.empty()) out += "  none: no rank stands out\n";
  for (size_t i = 0; i < a.findings.size(); ++i) {
    const Finding& f = a.findings[i];
    const std::string sev(SeverityName(f.severity));
    out += fmt::format("  {}. [{}] {}\n", i + 1, f.severity == Severity::kCritical ? st.Red(sev) : st.Yellow(sev),
                       st.Bold(std::string(FindingKindId(f.kind))));
    out += WrapText(HangFindingSentence(f), 100, "     ") + "\n";
    for (const Evidence& e : f.evidence) {
      if (e.kind == EvidenceKind::kStackFrame && (e.subject_kind == "native" || e.subject_kind == "gil")) {
        out += fmt::format("     {} {}\n", st.Dim(e.subject_kind == "gil" ? "GIL held by " + e.detail + " at" : "in C:"),
                           e.subject);
      }
    }
    const std::string next = HangNextStepSentence(f);
    if (!next.empty()) out += WrapText("next: " + next, 100, "     ") + "\n";
  }

  out += "\n" + st.Bold("What each rank was doing") + "\n";
  for (size_t i = 0; i < a.roles.size(); ++i) {
    const auto& rg = a.roles[i];
    const auto& v = a.verdicts[i];
    if (rg.role != "main" && rg.groups.size() == 1) {
      out += fmt::format(" {} thread: {} identical ({})\n", rg.role, Ranks(rg.groups[0].ranks),
                         rg.groups[0].frames.empty() ? "no Python frames" : FrameLine(rg.groups[0].frames.back()));
      continue;
    }
    out += fmt::format(" {} thread{}:\n", rg.role, rg.role == "main" ? "" : "s");
    PrintStackGroups(rg, v, st, &out);
  }
  PrintCollectives(a, &out);
  if (!a.files.warnings.empty() || !a.files.problems.empty()) {
    out += "\n" + st.Bold("Warnings") + "\n";
    for (const auto& w : a.files.warnings) out += "  " + w + "\n";
    for (const auto& p : a.files.problems) {
      out += p.message.rfind(p.path, 0) == 0 ? fmt::format("  not used: {}\n", p.message)
                                             : fmt::format("  not used: {}: {}\n", p.path, p.message);
    }
  }
  return out;
}

}  // namespace rankscope
