// libFuzzer target: any bytes a block writes, carried to the CLI (issue 15). The input goes
// through the daemon's BlockLogs (line splitting, the ring) in chunks whose sizes come from the
// input; every line becomes the daemon's `line` event exactly as `logs` sends it
// (log_line_event, encode_event), and the client's parser (decode_server_message) must accept
// it, with the text holding no NUL and reading back as the line with NUL and each byte that is
// not UTF-8 replaced by U+FFFD.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ipc/protocol.h"
#include "supervisor/block_logs.h"
#include "supervisor/daemon_handlers.h"

namespace {

// What the reader must see: `line`, NUL and invalid UTF-8 each as U+FFFD.
std::string expected_text(std::string_view line) {
  return stackie::to_json(stackie::Json(std::string(line)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t chunk = input.empty() ? 1 : 1 + static_cast<unsigned char>(input[0]) % 97;
  stackie::LogSettings settings;
  settings.max_line = 512;
  auto logs = stackie::BlockLogs::open("fuzz", "", settings);
  if (!logs.ok()) std::abort();
  for (std::size_t at = 0; at < input.size(); at += chunk)
    (*logs)->feed(stackie::LogStream::out, input.substr(at, chunk));
  (*logs)->end_of_stream(stackie::LogStream::out);
  for (const auto& line : (*logs)->tail(settings.ring_lines)) {
    const std::string stamp = stackie::format_timestamp(line.time_ms);
    std::string wire =
        stackie::ipc::encode_event(7, "line", stackie::log_line_event("s", "b", line, stamp));
    // The follower's own writer must give the same bytes.
    if (stackie::ipc::encode_event(7, "line", [&](std::string& out) {
          stackie::write_log_line_event(out, "s", "b", line, stamp);
        }) != wire)
      std::abort();
    if (wire.empty() || wire.back() != '\n' || wire.find('\n') != wire.size() - 1) std::abort();
    wire.pop_back();
    auto message = stackie::ipc::decode_server_message(wire);
    if (!message.ok()) std::abort();  // the CLI would refuse what the daemon sent
    const auto* event = std::get_if<stackie::ipc::Event>(&*message);
    if (event == nullptr) std::abort();
    const stackie::Json& text = event->data["text"];
    if (!text.is_string() || text.as_string().find('\0') != std::string::npos) std::abort();
    if (stackie::to_json(text) != expected_text(line.text)) std::abort();
  }
  return 0;
}
