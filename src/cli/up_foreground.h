// `stackie up` in the foreground (stdout a terminal, no --detach): once the stack is up, the
// log lines of every block, interleaved and coloured per block, until Ctrl-C, which stops the
// stack (compose's habit); a second Ctrl-C while it stops kills the blocks that are left.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/log_file_follow.h"
#include "cli/signal_pipe.h"
#include "ipc/client.h"

namespace stackie::cli {

class ForegroundUp {
 public:
  // Constructed before `up` is sent: Ctrl-C (SIGINT), SIGTERM and SIGHUP from then on are
  // ours, and stop the stack instead of leaving it starting.
  explicit ForegroundUp(bool color) : color_(color) {}

  // Whether a stopping signal has come (polled while `up` waits for the stack).
  bool interrupted();

  // The stack is up: follows its blocks' lines since `since_ms` (Unix ms: what they printed
  // while starting too) until a signal, then stops the stack. Returns the exit code: 128+N
  // after signal N (130 for Ctrl-C) once the stack is down, 0 when it went down otherwise
  // (a `stackie down` elsewhere), 3 when the daemon went away.
  int follow(ipc::Client& client, const std::string& stack, const std::vector<std::string>& blocks,
             int64_t since_ms);

  // The signal came while the stack was starting: stop what `up` began (`down` of the stack,
  // or of `file` when the daemon did not name the stack yet), on a new connection.
  int stop(const std::string& stack, const std::string& file,
           const std::vector<std::string>& blocks);

 private:
  int stop_on(ipc::Client& client, Json target, const std::vector<std::string>& blocks,
              std::optional<ipc::RequestId> logs_id);
  void print_line(const Json& line);
  void print_text(const std::string& block, std::string_view text);
  // The lines of a `files` or `files_failed` event of the logs call (cli/log_file_follow.h).
  void on_files_event(const ipc::Event& event);
  // What the followed files hold now; false when a file had more.
  bool drain_files();
  // Their records and notes, printed as print_line prints an event's lines.
  LogFileFollow::Records file_records();
  LogFileFollow::Note file_notes();

  // Where it can, the lines after the tail are read from the blocks' log files (as `logs -f`
  // does): the daemon then does nothing per line, however fast a block writes.
  std::unique_ptr<LogFileFollow> files_;
  bool more_in_files_ = false;

  bool color_;
  SignalPipe signals_;
  int signal_ = 0;                    // the first stopping signal
  std::vector<std::string> colored_;  // blocks in the order first seen: their colour slot
  size_t name_width_ = 0;             // the longest block name: the lines' text aligned
};

}  // namespace stackie::cli
