// libFuzzer target: any bytes a block writes, carried to the CLI (issue 15). The input goes
// through the daemon's BlockLogs (line splitting, the ring) in chunks whose sizes come from the
// input; every line becomes the daemon's `line` event exactly as `logs` sends it
// (log_line_event, encode_event), and the client's parser (decode_server_message) must accept
// it, with the text holding no NUL and reading back as the line with NUL and each byte that is
// not UTF-8 replaced by U+FFFD. All the lines together go the same way as one `lines` event,
// and as one `text` event, which the CLI's own decoder must read as the parser does.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "cli/log_text_event.h"
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
  const auto tail = (*logs)->tail(settings.ring_lines);
  // The same lines as one `lines` event, as a batching follower gets them: the writer gives
  // the Json's bytes and each line reads back as a `line` event would carry it.
  std::vector<stackie::LogBatchLine> batch;
  for (const auto& line : tail) batch.push_back({line.seq, line.level, line.text});
  const std::string batch_stamp = "2026-12-03T00:00:00.000Z";
  std::string lines_wire = stackie::ipc::encode_event(
      7, "lines", stackie::log_lines_event("s", "b", stackie::LogStream::out, batch_stamp, batch));
  if (stackie::ipc::encode_event(7, "lines", [&](std::string& out) {
        stackie::write_log_lines_event(out, "s", "b", stackie::LogStream::out, batch_stamp, batch);
      }) != lines_wire)
    std::abort();
  if (lines_wire.empty() || lines_wire.find('\n') != lines_wire.size() - 1) std::abort();
  lines_wire.pop_back();
  auto lines_message = stackie::ipc::decode_server_message(lines_wire);
  if (!lines_message.ok()) std::abort();
  const auto* lines_event = std::get_if<stackie::ipc::Event>(&*lines_message);
  if (lines_event == nullptr || !lines_event->data["lines"].is_array() ||
      lines_event->data["lines"].size() != tail.size())
    std::abort();
  for (size_t i = 0; i < tail.size(); ++i) {
    const stackie::Json& text = lines_event->data["lines"].as_array()[i]["text"];
    if (!text.is_string() || stackie::to_json(text) != expected_text(tail[i].text)) std::abort();
  }
  // And as one `text` event, as `stackie logs -f` asks for them: the writer gives the Json's
  // bytes, and the CLI's own decoder takes exactly that line and reads what the parser reads.
  std::string text_wire = stackie::ipc::encode_event(9, "text", [&](std::string& out) {
    stackie::write_log_text_event(out, "s", "b", stackie::LogStream::out, batch_stamp, batch);
  });
  if (text_wire !=
      stackie::ipc::encode_event(
          9, "text",
          stackie::log_text_event("s", "b", stackie::LogStream::out, batch_stamp, batch)))
    std::abort();
  text_wire.pop_back();
  auto text_message = stackie::ipc::decode_server_message(text_wire);
  if (!text_message.ok()) std::abort();
  stackie::cli::LogText parsed, decoded;
  if (!stackie::cli::log_text_from_json(std::get<stackie::ipc::Event>(*text_message).data,
                                        parsed) ||
      !stackie::cli::decode_log_text_event(text_wire, 9, decoded) || decoded.text != parsed.text ||
      decoded.levels != parsed.levels || decoded.levels.size() != tail.size())
    std::abort();
  for (const auto& line : tail) {
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
