#include "api/api_routes.h"

#include <uv.h>

#include <cstdlib>
#include <functional>
#include <optional>
#include <vector>

#include "api/api_token.h"
#include "base/json.h"

namespace stackie::api {

namespace {

// How a request's answer is made from its IPC session.
struct Plan {
  std::string method;
  Json params = Json::object();
  bool stream = false;        // follow: events go out as SSE, the reply ends the stream
  std::string collect_event;  // without stream: these events become the array ...
  std::string collect_field;  // ... of this member of the body
  std::function<Json(const Json&)> shape;  // the body from the result (default: the result)
};

int http_status_of(const std::string& code) {
  if (code == "not_found") return 404;
  if (code == "invalid_params" || code == "bad_request" || code == "unknown_method") return 400;
  if (code == "busy") return 409;
  if (code == "invalid_stack") return 422;
  if (code == "shutting_down") return 503;
  return 500;  // failed, internal
}

class HttpSink final : public ipc::SessionSink {
 public:
  HttpSink(std::shared_ptr<HttpResponder> responder, Plan plan)
      : responder_(std::move(responder)), plan_(std::move(plan)) {}

  bool open() const override { return responder_->alive(); }

  ipc::EventOutcome event(std::string_view name, const std::function<Json()>& make_data) override {
    if (plan_.stream) {
      start_stream_if_waiting();
      // As on the socket: what a slow reader lost is counted and told before the next event.
      if (skipped_ > 0 &&
          responder_->event("skipped", to_json(Json::object({{"count", skipped_}}))))
        skipped_ = 0;
      if (skipped_ == 0 && responder_->event(name, to_json(make_data())))
        return ipc::EventOutcome::sent;
      if (!responder_->alive()) return ipc::EventOutcome::gone;
      ++skipped_;
      return ipc::EventOutcome::skipped;
    }
    if (name == plan_.collect_event) collected_.push_back(make_data());
    return ipc::EventOutcome::sent;
  }

  void reply(const Json& result) override {
    if (plan_.stream && started()) {
      responder_->event("end", to_json(result));
      responder_->end();
      return;
    }
    Json body = plan_.shape ? plan_.shape(result) : result;
    if (!plan_.collect_field.empty()) body.set(plan_.collect_field, collected_);
    responder_->complete(200, to_json(body), {});
  }

  void fail(const ipc::RemoteError& error) override {
    Json object = Json::object({{"code", error.code}, {"message", error.message}});
    if (!error.data.is_null()) object.set("data", error.data);
    if (plan_.stream && started()) {
      responder_->event("error", to_json(object));
      responder_->end();
      return;
    }
    responder_->complete(http_status_of(error.code), to_json(Json::object({{"error", object}})),
                         {});
  }

  void start_stream_if_waiting() {
    streamed_ = true;
    responder_->start_stream();
  }
  bool started() const { return streamed_; }

 private:
  std::shared_ptr<HttpResponder> responder_;
  Plan plan_;
  Json collected_ = Json::array();
  bool streamed_ = false;
  int64_t skipped_ = 0;
};

bool truthy(const std::string& text) {
  return text == "1" || text == "true" || text == "yes";
}

std::optional<int64_t> integer(const std::string& text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || value < 0) return std::nullopt;
  return value;
}

std::vector<std::string> split_path(const std::string& raw) {
  std::vector<std::string> parts;
  size_t at = 0;
  while (at <= raw.size()) {
    size_t slash = raw.find('/', at);
    if (slash == std::string::npos) slash = raw.size();
    if (slash > at) parts.push_back(percent_decode(raw.substr(at, slash - at), false));
    at = slash + 1;
  }
  return parts;
}

struct Routed {
  std::optional<Plan> plan;
  int status = 0;  // with no plan: the refusal
  std::string code, message;
};

Routed refuse(int status, std::string code, std::string message) {
  return Routed{std::nullopt, status, std::move(code), std::move(message)};
}

Routed accept(Plan plan) {
  return Routed{std::move(plan), 200, "", ""};
}

Json one(std::string value) {
  Json list = Json::array();
  list.push_back(std::move(value));
  return list;
}

// Query parameters that are numbers: a bad one is the client's error, never a silent default.
bool set_number(Json& params, const HttpRequest& request, const std::string& query_name,
                const std::string& param, Routed& error) {
  auto it = request.query.find(query_name);
  if (it == request.query.end()) return true;
  auto value = integer(it->second);
  if (!value) {
    error = refuse(400, "invalid_params", query_name + " must be a non-negative integer");
    return false;
  }
  params.set(param, *value);
  return true;
}

Routed route(const HttpRequest& request) {
  std::vector<std::string> parts = split_path(request.header(":raw-path"));
  const std::string& verb = request.method;
  auto query = [&](const std::string& name) {
    auto it = request.query.find(name);
    return it == request.query.end() ? std::string() : it->second;
  };
  Routed error;
  if (parts.size() < 2 || parts[0] != "api") return refuse(404, "not_found", "no such path");
  Plan plan;
  std::string stack = query("stack");
  if (!stack.empty()) plan.params.set("stack", stack);
  const std::string& area = parts[1];
  if (area == "system" && parts.size() == 3 && parts[2] == "info" && verb == "GET") {
    plan.method = "daemon.status";
    return accept(std::move(plan));
  }
  if (area == "stacks" && parts.size() == 2 && verb == "GET") {
    plan.method = "daemon.status";
    plan.params = Json::object();
    plan.shape = [](const Json& r) { return Json::object({{"stacks", r["stacks"]}}); };
    return accept(std::move(plan));
  }
  if (area == "blocks" && parts.size() == 2 && verb == "GET") {
    plan.method = "ps";
    return accept(std::move(plan));
  }
  if (area == "blocks" && parts.size() >= 3) {
    std::string block = parts[2];
    std::string action = parts.size() == 4 ? parts[3] : "";
    if (parts.size() > 4) return refuse(404, "not_found", "no such path");
    if (action.empty()) {
      if (verb != "GET") return refuse(405, "method_not_allowed", "GET a block");
      plan.method = "status";
      plan.params.set("block", block);
      return accept(std::move(plan));
    }
    if (action == "start" || action == "stop" || action == "restart" || action == "kill") {
      if (verb != "POST") return refuse(405, "method_not_allowed", "POST to " + action);
      plan.method = action;
      plan.params.set("block", block);
      if (action == "kill") {
        if (!query("signal").empty()) plan.params.set("signal", query("signal"));
      } else {
        plan.params.set("wait", truthy(query("wait")));
      }
      return accept(std::move(plan));
    }
    if (action == "logs") {
      if (verb != "GET") return refuse(405, "method_not_allowed", "GET logs");
      plan.method = "logs";
      plan.params.set("blocks", one(block));
      if (!set_number(plan.params, request, "tail", "tail", error)) return error;
      if (!set_number(plan.params, request, "since", "since", error)) return error;
      if (!query("stream").empty()) plan.params.set("streams", one(query("stream")));
      if (!query("level").empty()) plan.params.set("level", query("level"));
      plan.stream = truthy(query("follow"));
      plan.params.set("follow", plan.stream);
      plan.collect_event = "line";
      plan.collect_field = "lines";
      return accept(std::move(plan));
    }
    if (action == "exec") {
      // The command in the body, {"argv": [...], "timeout_s": N}: run by the daemon with its
      // output captured (IPC `exec.run`), never relayed to a terminal.
      if (verb != "POST") return refuse(405, "method_not_allowed", "POST a command to exec");
      Result<Json> body = parse_json(request.body);
      if (!body.ok() || !body->is_object())
        return refuse(400, "bad_request", "the body must be a JSON object {\"argv\": [...]}");
      plan.method = "exec.run";
      plan.params.set("block", block);
      plan.params.set("argv", (*body)["argv"]);
      if (!(*body)["timeout_s"].is_null()) plan.params.set("timeout_s", (*body)["timeout_s"]);
      return accept(std::move(plan));
    }
    return refuse(404, "not_found", "no such block action: " + action);
  }
  if (area == "events" && parts.size() == 2 && verb == "GET") {
    plan.method = "events";
    plan.params = Json::object();
    if (!set_number(plan.params, request, "since", "since", error)) return error;
    Json filters = Json::object();
    for (const char* key : {"stack", "block", "event", "sandbox_id"})
      if (!query(key).empty()) filters.set(key, one(query(key)));
    plan.params.set("filters", filters);
    plan.stream = truthy(query("follow"));
    plan.params.set("follow", plan.stream);
    plan.collect_event = "event";
    plan.collect_field = "events";
    return accept(std::move(plan));
  }
  if (area == "stats" && parts.size() == 2 && verb == "GET") {
    plan.method = "stats";
    if (!query("block").empty()) plan.params.set("blocks", one(query("block")));
    if (!set_number(plan.params, request, "interval_ms", "interval_ms", error)) return error;
    plan.stream = truthy(query("stream"));
    plan.params.set("follow", plan.stream);
    return accept(std::move(plan));
  }
  return refuse(404, "not_found", "no such path: " + request.path);
}

}  // namespace

int http_status(const std::string& code) {
  return http_status_of(code);
}

HttpRouter make_router(ipc::Handler& handler, std::string token, ApiInfo info) {
  return [&handler, token = std::move(token), info = std::move(info)](
             const HttpRequest& request, std::shared_ptr<HttpResponder> responder) {
    if (request.path == "/api/system/health") {
      if (request.method != "GET")
        return responder->complete(405, error_body("method_not_allowed", "GET it"), {});
      return responder->complete(
          200, to_json(Json::object({{"status", "ok"}, {"version", info.version}})), {});
    }
    std::string authorization = request.header("authorization");
    const std::string prefix = "Bearer ";
    if (!authorization.starts_with(prefix) ||
        !same_token(authorization.substr(prefix.size()), token))
      return responder->complete(401, error_body("unauthorized", "a valid bearer token is needed"),
                                 {{"WWW-Authenticate", "Bearer"}});
    Routed routed = route(request);
    if (!routed.plan)
      return responder->complete(routed.status, error_body(routed.code, routed.message), {});
    Plan plan = std::move(*routed.plan);
    ipc::Request ipc_request;
    ipc_request.method = plan.method;
    ipc_request.params = plan.params;
    bool stream = plan.stream;
    auto sink = std::make_shared<HttpSink>(responder, std::move(plan));
    ipc::Session session = ipc::Session::with_sink(sink);
    responder->on_gone([&handler, session] { handler.on_close(session); });
    handler.on_request(session, ipc_request);
    // A stream that is not over yet shows its headers now, even before its first event.
    if (stream && session.alive()) sink->start_stream_if_waiting();
  };
}

}  // namespace stackie::api
