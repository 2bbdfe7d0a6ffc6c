#include "spawn/setup_failure.h"

#include "base/json.h"

namespace stackie {

std::string describe_setup_failure(const std::string& report) {
  std::string line = report.substr(0, report.find('\n'));
  while (!line.empty() && line.back() == '\r') line.pop_back();  // a Windows monitor's CRLF
  Result<Json> json = parse_json(line);
  if (!json.ok() || !json->is_object()) {
    if (line.empty()) return "stackie-lockbox could not set up the sandbox (exit 125)";
    return "stackie-lockbox: " + line;
  }
  std::string message = (*json)["message"].string_or("");
  const std::string step = (*json)["step"].string_or("");
  if (message.empty()) message = line;
  return step.empty() ? message : message + " (sandbox step: " + step + ")";
}

}  // namespace stackie
