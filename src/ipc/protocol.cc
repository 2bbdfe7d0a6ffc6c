#include "ipc/protocol.h"

#include <uv.h>

namespace stackie::ipc {

namespace {

Json header(std::optional<RequestId> id) {
  Json message = Json::object();
  message.set("v", kProtocolVersion);
  message.set("id", id ? Json(*id) : Json());
  return message;
}

Json error_object(std::string_view code, std::string_view message, const Json& data) {
  Json error = Json::object({{"code", code}, {"message", message}});
  if (!data.is_null()) error.set("data", data);
  return error;
}

RejectedRequest reject(std::optional<RequestId> id, std::string_view code, std::string message) {
  return RejectedRequest{id, RemoteError{std::string(code), std::move(message), Json()}};
}

Error protocol_error(std::string message) {
  return Error{UV_EPROTO, "malformed message from the daemon: " + std::move(message)};
}

}  // namespace

std::string encode_request(const Request& request) {
  Json message = header(request.id);
  message.set("method", request.method);
  message.set("params", request.params.is_null() ? Json::object() : request.params);
  return to_json_line(message);
}

std::string encode_event(RequestId id, std::string_view name,
                         const std::function<void(std::string&)>& write_data) {
  // The same text as header(id) + event + data through to_json_line, written around the data:
  // a Json message holding it copied every event's data once more, a followed log line's text
  // included, on the daemon's thread (issue 25).
  std::string out = "{\"v\":" + std::to_string(kProtocolVersion) + ",\"id\":" + std::to_string(id) +
                    ",\"event\":";
  append_json_string(out, name);
  out += ",\"data\":";
  write_data(out);
  out += "}\n";
  return out;
}

std::string encode_event(RequestId id, std::string_view name, const Json& data) {
  return encode_event(id, name, [&data](std::string& out) {
    if (data.is_null())
      out += "{}";
    else
      append_json(out, data);
  });
}

std::string encode_result(RequestId id, const Json& result) {
  Json message = header(id);
  message.set("result", result.is_null() ? Json::object() : result);
  return to_json_line(message);
}

std::string encode_error(std::optional<RequestId> id, std::string_view code,
                         std::string_view message, const Json& data) {
  Json reply = header(id);
  reply.set("error", error_object(code, message, data));
  return to_json_line(reply);
}

std::string encode_reply(const Reply& reply) {
  if (reply.ok()) {
    assert(reply.id.has_value());
    return encode_result(*reply.id, reply.result());
  }
  const RemoteError& error = reply.error();
  return encode_error(reply.id, error.code, error.message, error.data);
}

std::variant<Request, RejectedRequest> decode_request(std::string_view line,
                                                      const JsonLimits& limits) {
  auto parsed = parse_json(line, limits);
  if (!parsed) {
    const Error& error = parsed.error();
    if (error.code == UV_E2BIG) return reject(std::nullopt, errc::kTooLarge, error.message);
    return reject(std::nullopt, errc::kBadRequest, error.message);
  }
  const Json& message = *parsed;
  if (!message.is_object())
    return reject(std::nullopt, errc::kBadRequest, "a request must be a JSON object");

  // The id first, so that every later refusal can name the request it refuses.
  const Json* id = message.find("id");
  if (!id || !id->is_int())
    return reject(std::nullopt, errc::kBadRequest, "\"id\" must be an integer");
  const RequestId request_id = id->as_int();

  const Json* version = message.find("v");
  if (!version) return reject(request_id, errc::kBadRequest, "missing \"v\" (protocol version)");
  if (!version->is_int() || version->as_int() != kProtocolVersion)
    return reject(request_id, errc::kUnsupportedVersion,
                  "protocol version " + to_json(*version) + " is not supported (this side speaks " +
                      std::to_string(kProtocolVersion) + ")");

  const Json* method = message.find("method");
  if (!method || !method->is_string() || method->as_string().empty())
    return reject(request_id, errc::kBadRequest, "\"method\" must be a non-empty string");

  Request request;
  request.id = request_id;
  request.method = method->as_string();
  if (const Json* params = message.find("params"); params && !params->is_null()) {
    if (!params->is_object())
      return reject(request_id, errc::kBadRequest, "\"params\" must be an object");
    request.params = *params;
  }
  return request;
}

Result<ServerMessage> decode_server_message(std::string_view line, const JsonLimits& limits) {
  auto parsed = parse_json(line, limits);
  if (!parsed) {
    Error error = parsed.take_error();
    if (error.code == UV_E2BIG) return error;
    return protocol_error(std::move(error.message));
  }
  const Json& message = *parsed;
  if (!message.is_object()) return protocol_error("not a JSON object");
  const Json* version = message.find("v");
  if (!version || !version->is_int() || version->as_int() != kProtocolVersion)
    return protocol_error("missing or unsupported \"v\"");
  const Json* id = message.find("id");
  if (!id || !(id->is_int() || id->is_null()))
    return protocol_error("\"id\" must be an integer or null");

  const Json* event = message.find("event");
  const Json* result = message.find("result");
  const Json* error = message.find("error");
  if ((event != nullptr) + (result != nullptr) + (error != nullptr) != 1)
    return protocol_error("exactly one of \"event\", \"result\", \"error\" must be present");

  if (event) {
    if (!id->is_int()) return protocol_error("an event needs an integer \"id\"");
    if (!event->is_string() || event->as_string().empty())
      return protocol_error("\"event\" must be a non-empty string");
    const Json& data = message["data"];
    return ServerMessage(
        Event{id->as_int(), event->as_string(), data.is_null() ? Json::object() : data});
  }

  Reply reply;
  if (id->is_int()) reply.id = id->as_int();
  if (result) {
    if (!reply.id) return protocol_error("a result needs an integer \"id\"");
    reply.outcome = *result;
    return ServerMessage(std::move(reply));
  }
  if (!error->is_object()) return protocol_error("\"error\" must be an object");
  const Json& code = (*error)["code"];
  const Json& text = (*error)["message"];
  if (!code.is_string() || code.as_string().empty())
    return protocol_error("\"error.code\" must be a non-empty string");
  if (!text.is_string()) return protocol_error("\"error.message\" must be a string");
  reply.outcome = RemoteError{code.as_string(), text.as_string(), (*error)["data"]};
  return ServerMessage(std::move(reply));
}

}  // namespace stackie::ipc
