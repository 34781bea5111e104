// Every `rankscope` subcommand registers itself on the CLI11 app through one of these.
// A command sets *exit_code when it runs; main() returns it.
#pragma once

#include <CLI/CLI.hpp>

namespace rankscope::cli {

void RegisterInfoCommand(CLI::App& app, int* exit_code);
// Capture from live jobs (docs/capture.md).
void RegisterTraceCommand(CLI::App& app, int* exit_code);
void RegisterSnapshotCommand(CLI::App& app, int* exit_code);
void RegisterHangCommand(CLI::App& app, int* exit_code);  // hang analysis (docs/hang.md)
void RegisterStatusCommands(CLI::App& app, int* exit_code);  // status, ps
void RegisterRunCommand(CLI::App& app, int* exit_code);
void RegisterAnalyzeCommand(CLI::App& app, int* exit_code);
// Rank summaries (docs/scale.md).
void RegisterSummarizeCommand(CLI::App& app, int* exit_code);
// Run comparison (docs/compare.md).
void RegisterCompareCommand(CLI::App& app, int* exit_code);
void RegisterServeCommand(CLI::App& app, int* exit_code);  // web UI (docs/ui.md)
// Node telemetry (docs/telemetry.md).
void RegisterTelemetryCommand(CLI::App& app, int* exit_code);
void RegisterTopCommand(CLI::App& app, int* exit_code);

}  // namespace rankscope::cli
