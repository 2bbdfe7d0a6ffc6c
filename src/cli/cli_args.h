// Small helpers shared by the verbs: argument walking, the stack file argument, PS_ROW printing.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/json.h"

namespace stackie::cli {

// Walks argv[1..]: `--flag VALUE`, `--flag=VALUE`, `-f VALUE`; "--" ends options.
class ArgWalker {
 public:
  ArgWalker(std::string_view verb, std::span<char*> argv) : verb_(verb), argv_(argv) {}
  bool done() const { return index_ >= argv_.size(); }
  std::string_view current() const { return argv_[index_]; }
  std::span<char*> rest() const { return argv_.subspan(index_); }
  void next() { ++index_; }
  // If current() is `name` or `name=...`, takes its value (next arg or after '='); on a missing
  // value sets error(). Returns nullopt when current() is not that flag.
  std::optional<std::string> value(std::string_view short_name, std::string_view long_name);
  bool flag(std::string_view short_name, std::string_view long_name);
  std::string error;

 private:
  std::string_view verb_;
  std::span<char*> argv_;
  size_t index_ = 1;
};

// The absolute path of the stack file (-f or the default names in the cwd).
std::optional<std::string> absolute_stack_file(const std::string& file, std::string& error);

// `-f FILE | STACK`: which stack a verb (ps, down) is about.
struct StackTarget {
  std::string file;
  std::string stack;
};
// Takes current() when it is -f/--file or a STACK word and returns true; false for any other
// option. A second STACK, or both forms, set args.error.
bool take_stack_target(ArgWalker& args, StackTarget& target);
// The request's params: {"stack"} or {"file": absolute}; with neither, the stack file of the
// cwd when `cwd_default`, else none. nullopt (with `error`) when no stack file is found.
std::optional<Json> stack_target_params(const StackTarget& target, bool cwd_default,
                                        std::string& error);
// The working directory, in Stackie's form ("/dir", "C:/dir"); an error when the OS cannot say
// (it was removed, or a parent is unreadable): never "." for a stack file to be resolved against.
Result<std::string> current_directory();

// "127.0.0.1:5433->5432,..." for a PS_ROW's ports.
std::string format_ports(const Json& ports);
std::string format_uptime(const Json& uptime_s);
// "0 B", "12 KB", "3.4 MB", "1.2 GB" (powers of 1024, as du -h).
std::string format_bytes(uint64_t bytes);
// Asks `question [y/N]` on the terminal: true for y/yes. Without a terminal on stdin, says to
// pass --yes and returns false (a script must not hang on a prompt nor remove data unasked).
bool confirm(const std::string& question);
// Prints `{"v":...}` or any JSON value on stdout, one line.
void print_json(const Json& value);

}  // namespace stackie::cli
