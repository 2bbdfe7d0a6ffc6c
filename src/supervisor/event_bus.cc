#include "supervisor/event_bus.h"

#include <uv.h>

#include <algorithm>
#include <chrono>

#include "supervisor/block_logs.h"

namespace stackie {

namespace {

uint64_t now_ms() {
  using namespace std::chrono;
  return static_cast<uint64_t>(
      duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
}

bool any_of(const std::vector<std::string>& wanted, const std::string& value) {
  return wanted.empty() || std::find(wanted.begin(), wanted.end(), value) != wanted.end();
}

}  // namespace

Json event_json(const BusEvent& event) {
  return Json::object({{"seq", event.seq},
                       {"time", format_timestamp(static_cast<int64_t>(event.time_ms))},
                       {"stack", event.stack},
                       {"block", event.block},
                       {"sandbox_id", event.sandbox_id},
                       {"action", event.action},
                       {"details", event.details}});
}

bool EventFilter::matches(const BusEvent& event) const {
  if (!block.empty() && !any_of(block, event.block) &&
      !any_of(block, event.stack + "/" + event.block))
    return false;
  return any_of(stack, event.stack) && any_of(action, event.action) &&
         any_of(sandbox_id, event.sandbox_id);
}

Result<EventFilter> EventFilter::from_json(const Json& filters) {
  EventFilter filter;
  if (filters.is_null()) return filter;
  if (!filters.is_object()) return Error{UV_EINVAL, "\"filters\" must be an object"};
  for (const auto& [key, values] : filters.as_object()) {
    std::vector<std::string>* into = key == "stack"        ? &filter.stack
                                     : key == "block"      ? &filter.block
                                     : key == "event"      ? &filter.action
                                     : key == "sandbox_id" ? &filter.sandbox_id
                                                           : nullptr;
    if (into == nullptr)
      return Error{UV_EINVAL, "unknown filter \"" + key + "\" (stack, block, event, sandbox_id)"};
    if (values.is_string()) {
      into->push_back(values.as_string());
      continue;
    }
    if (!values.is_array())
      return Error{UV_EINVAL, "filter \"" + key + "\" must be a string or an array of strings"};
    for (const auto& value : values.as_array()) {
      if (!value.is_string())
        return Error{UV_EINVAL, "filter \"" + key + "\" must hold strings only"};
      into->push_back(value.as_string());
    }
  }
  return filter;
}

void EventBus::publish(std::string stack, std::string block, std::string sandbox_id,
                       std::string action, Json details) {
  BusEvent event{next_seq_++,           now_ms(),          std::move(stack),  std::move(block),
                 std::move(sandbox_id), std::move(action), std::move(details)};
  if (capacity_ > 0) {
    if (ring_.size() >= capacity_) ring_.pop_front();
    ring_.push_back(event);
  }
  // A subscriber may unsubscribe (itself or another) while it is called: walk the ids, and
  // call only those still there.
  std::vector<uint64_t> ids;
  ids.reserve(subscribers_.size());
  for (const auto& [id, subscriber] : subscribers_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = subscribers_.find(id);
    if (it == subscribers_.end()) continue;
    Subscriber call = it->second;  // a copy: the entry may go while it runs
    call(event);
  }
}

std::vector<BusEvent> EventBus::history(uint64_t since_ms) const {
  std::vector<BusEvent> out;
  for (const auto& event : ring_)
    if (event.time_ms >= since_ms) out.push_back(event);
  return out;
}

uint64_t EventBus::subscribe(Subscriber subscriber) {
  uint64_t id = next_subscriber_++;
  subscribers_.emplace(id, std::move(subscriber));
  return id;
}

void EventBus::unsubscribe(uint64_t id) {
  subscribers_.erase(id);
}

}  // namespace stackie
