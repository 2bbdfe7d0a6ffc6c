// libFuzzer target: the daemon's and the client's side of the wire. The input is fed to the line
// splitter in chunks whose sizes come from the input itself; every line goes through
// parse_json, decode_request and decode_server_message, and whatever parses must survive a
// round trip through our writer.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/json.h"
#include "ipc/framing.h"
#include "ipc/protocol.h"

namespace {

using namespace stackie;
using namespace stackie::ipc;

void check_line(std::string_view line) {
  const JsonLimits limits{.max_bytes = 4096, .max_depth = 16};
  auto json = parse_json(line, limits);
  if (json.ok()) {
    auto again = parse_json(to_json(*json), {.max_bytes = 1 << 20, .max_depth = 16});
    if (!again.ok() || !(*again == *json)) std::abort();
  }
  auto request = decode_request(line, limits);
  if (auto* ok = std::get_if<Request>(&request)) {
    if (ok->method.empty() || !ok->params.is_object()) std::abort();
    auto round = decode_request(encode_request(*ok), {});
    if (!std::holds_alternative<Request>(round)) std::abort();
  } else {
    const auto& rejected = std::get<RejectedRequest>(request);
    if (rejected.error.code.empty() || rejected.error.message.empty()) std::abort();
    // The error reply we would send must itself be a readable server message.
    std::string reply = encode_error(rejected.id, rejected.error.code, rejected.error.message);
    reply.pop_back();  // "\n"
    if (!decode_server_message(reply).ok()) std::abort();
  }
  (void)decode_server_message(line, limits);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t chunk = input.empty() ? 1 : 1 + static_cast<unsigned char>(input[0]) % 64;
  LineSplitter splitter(4096);
  for (std::size_t at = 0; at < input.size(); at += chunk) {
    auto status = splitter.feed(input.substr(at, chunk), check_line);
    if (!status.ok()) {
      if (!splitter.failed()) std::abort();
      break;
    }
    if (splitter.buffered() > splitter.max_line()) std::abort();
  }
  return 0;
}
