// The daemon's event bus (docs/ipc.md, `events`): every lifecycle step of every block, with
// Docker's action names (create, init, start, health_status, kill, die, stop, restart, destroy,
// port), kept in a bounded ring and handed to the subscribers as it happens. No libuv, no
// timer: an event costs a ring slot and one call per subscriber, nothing when nothing happens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/json.h"

namespace stackie {

struct BusEvent {
  uint64_t seq = 0;      // from 1, for the daemon's life
  uint64_t time_ms = 0;  // wall clock, Unix ms
  std::string stack;
  std::string block;
  std::string sandbox_id;
  std::string action;
  Json details = Json::object();
};

// EVENT of docs/ipc.md: {seq, time, stack, block, sandbox_id, action, details}. The one shape
// of the IPC's `event`, `stackie events --json` and the HTTP API's SSE data.
Json event_json(const BusEvent& event);

// `filters` of `events`: within one key any value matches, the keys combine with AND.
struct EventFilter {
  std::vector<std::string> stack, block, action, sandbox_id;
  bool matches(const BusEvent& event) const;
  // {"stack": [..], "block": [..], "event": [..], "sandbox_id": [..]}; null = everything. An
  // unknown key or a value that is not a string is an error naming it (UV_EINVAL).
  static Result<EventFilter> from_json(const Json& filters);
};

class EventBus {
 public:
  static constexpr size_t kDefaultCapacity = 1000;
  using Subscriber = std::function<void(const BusEvent&)>;

  explicit EventBus(size_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  // Stamps seq and time, keeps it (dropping the oldest past the capacity), hands it to every
  // subscriber (which may unsubscribe itself or others meanwhile).
  void publish(std::string stack, std::string block, std::string sandbox_id, std::string action,
               Json details = Json::object());
  // The events kept with time_ms >= since_ms, oldest first.
  std::vector<BusEvent> history(uint64_t since_ms = 0) const;
  uint64_t subscribe(Subscriber subscriber);
  void unsubscribe(uint64_t id);
  size_t subscriber_count() const { return subscribers_.size(); }
  uint64_t last_seq() const { return next_seq_ - 1; }

 private:
  size_t capacity_;
  std::deque<BusEvent> ring_;
  std::map<uint64_t, Subscriber> subscribers_;
  uint64_t next_seq_ = 1;
  uint64_t next_subscriber_ = 1;
};

}  // namespace stackie
