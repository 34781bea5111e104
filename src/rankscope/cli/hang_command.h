// `rankscope hang`: the hang analysis of a snapshot (docs/hang.md), from directories or files
// here, or gathered from the daemons of every host of the job (--host / --hostfile: a snapshot
// by id, else the newest hang they detected). Also run by `rankscope snapshot --analyze` on the
// directories the snapshot produced.
#pragma once

#include <string>
#include <vector>

#include "rankscope/cli/daemon_client.h"
#include "rankscope/hang/hang_analysis.h"

namespace rankscope::cli {

struct HangCommandOptions {
  std::vector<std::string> paths;
  hang::HangOptions analysis;
  std::string json_path;  // "-" = stdout instead of the text report
  bool color = false;
  // Gathering from daemons (when a host is given).
  HostOptions hosts;
  std::string id;         // the snapshot; "" = the newest hang the daemons detected
  std::string out;        // where the files go; "" = ./<id>
};

// Prints the report (text, or JSON with json_path); returns the exit status: 0 done, 2 when the
// files cannot be analysed (the message says why).
int RunHangAnalysis(const HangCommandOptions& options);

}  // namespace rankscope::cli
