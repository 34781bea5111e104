// `rankscope serve PATH... [--port 8484] [--bind 127.0.0.1] [--token-file F]`: the web UI
// (web/, docs/ui.md) over trace directories, captures, report JSON files or the daemon's
// output directory. The analysis runs here, in the engine; the page fetches JSON.
#include <fmt/format.h>
#include <signal.h>

#include <fstream>
#include <thread>

#include "rankscope/base/parallel_for.h"
#include "rankscope/cli/commands.h"
#include "rankscope/web/web_server.h"

namespace rankscope::cli {
namespace {

struct ServeFlags {
  std::vector<std::string> paths;
  int port = 8484;
  std::string bind = "127.0.0.1";
  std::string token_file;
  unsigned threads = DefaultThreadCount();
};

StatusOr<std::string> ReadToken(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read the token file {}", path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.size() < 16) return InvalidArgument("the token in {} is shorter than 16 characters", path);
  return token;
}

int RunServe(const ServeFlags& f) {
  auto fail = [](const Status& s) {
    fmt::print(stderr, "rankscope: error: {}\n", s.message());
    return 1;
  };
  web::ServeOptions options{f.bind, f.port, "", f.threads};
  if (!f.token_file.empty()) {
    auto token = ReadToken(f.token_file);
    if (!token.ok()) return fail(token.status());
    options.token = *token;
  }
  auto catalog = web::JobCatalog::Open(f.paths);
  if (!catalog.ok()) return fail(catalog.status());
  const size_t jobs = catalog->Scan().size();

  // SIGINT/SIGTERM end the server from this thread; the server runs on another.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  web::WebServer server(std::move(catalog).value(), options);
  if (Status s = server.Bind(); !s.ok()) return fail(s);
  const std::string host = f.bind.find(':') != std::string::npos ? "[" + f.bind + "]" : f.bind;
  fmt::print("rankscope serve: http://{}:{}/{}  ({} job{}; Ctrl-C stops)\n", host, server.port(),
             options.token.empty() ? "" : "#token=<token>", jobs, jobs == 1 ? "" : "s");
  std::fflush(stdout);
  std::thread serving([&] { server.Serve(); });
  int sig = 0;
  sigwait(&stop_signals, &sig);
  server.Stop();
  serving.join();
  return 0;
}

}  // namespace

void RegisterServeCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<ServeFlags>();
  CLI::App* cmd = app.add_subcommand("serve", "Web UI: the diagnosis of trace directories, captures, report JSON "
                                              "files or the daemon's output directory, in a browser");
  cmd->add_option("paths", f->paths, "Trace directories, capture directories, report JSON files, or the daemon's "
                                     "output directory (every capture below it is listed)")
      ->required();
  cmd->add_option("--port", f->port, "Port (0: any free port)")->capture_default_str()->check(CLI::Range(0, 65535));
  cmd->add_option("--bind", f->bind, "Address; other than loopback requires --token-file")->capture_default_str();
  cmd->add_option("--token-file", f->token_file, "File whose first line is the token (>= 16 characters) the page must "
                                                 "send; open http://HOST:PORT/#token=<token>");
  cmd->add_option("--threads", f->threads, "Files analysed in parallel (default: all cores)")->check(CLI::Range(1u, 1024u));
  cmd->callback([f, exit_code] { *exit_code = RunServe(*f); });
}

}  // namespace rankscope::cli
