// The `text` event of `logs -f` (docs/ipc.md): the lines of one read from a block's stream as
// one string. Decoded here straight from the event's line, without a JSON tree: under a flood
// the follower parsed an object per line and took as much CPU as the daemon, on the cores the
// block needs (issue 25). Anything but the exact line the daemon writes goes the slow way
// (log_text_from_json) and gives the same lines.
#pragma once

#include <string>
#include <string_view>

#include "base/json.h"
#include "ipc/protocol.h"

namespace stackie::cli {

struct LogText {
  std::string stack, block, stream, ts;
  std::string levels;  // a letter per line (base/log_level.h letter_of)
  std::string text;    // each line followed by "\n"
};

// `line` (without its newline) as write_log_text_event and encode_event write it for request
// `id`: {"v":1,"id":ID,"event":"text","data":{"stack":..,"block":..,"stream":..,"ts":..,
// "levels":..,"text":..}}. False for anything else, `out` then unspecified. `out` is reused
// from event to event, so that its strings keep their capacity.
bool decode_log_text_event(std::string_view line, ipc::RequestId id, LogText& out);

// The same from a `text` event's parsed data; false when a field is missing or not a string.
bool log_text_from_json(const Json& data, LogText& out);

}  // namespace stackie::cli
