// rankscope: performance troubleshooting for distributed PyTorch training.
#include <CLI/CLI.hpp>

#include "rankscope/cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"rankscope: find out why a distributed PyTorch training job is slow or stuck", "rankscope"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "rankscope 0.1.0");
  int exit_code = 0;
  rankscope::cli::RegisterInfoCommand(app, &exit_code);
  rankscope::cli::RegisterTraceCommand(app, &exit_code);
  rankscope::cli::RegisterSnapshotCommand(app, &exit_code);
  rankscope::cli::RegisterHangCommand(app, &exit_code);
  rankscope::cli::RegisterStatusCommands(app, &exit_code);
  rankscope::cli::RegisterRunCommand(app, &exit_code);
  rankscope::cli::RegisterAnalyzeCommand(app, &exit_code);
  rankscope::cli::RegisterSummarizeCommand(app, &exit_code);
  rankscope::cli::RegisterCompareCommand(app, &exit_code);
  rankscope::cli::RegisterServeCommand(app, &exit_code);
  rankscope::cli::RegisterTelemetryCommand(app, &exit_code);
  rankscope::cli::RegisterTopCommand(app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
