#include "supervisor/state_file.h"

#include <fcntl.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstddef>

#include "base/json.h"

namespace stackie {

namespace {

constexpr int kStateVersion = 1;
// Each stack keeps its client's environment subset; many stacks may outgrow the IPC's 1 MiB.
constexpr JsonLimits kStateLimits{.max_bytes = std::size_t{64} << 20, .max_depth = 8};

}  // namespace

std::string state_to_json(const std::vector<StackRecord>& stacks) {
  Json list = Json::array();
  for (const auto& record : stacks) {
    Json env = Json::object();
    for (const auto& [key, value] : record.request.env) env.set(key, value);
    list.push_back(Json::object({
        {"name", record.name},
        {"file", record.request.file},
        {"cwd", record.request.cwd},
        {"env", std::move(env)},
        {"ephemeral", record.request.ephemeral},
        {"no_sandbox", record.request.no_sandbox},
    }));
  }
  return to_json_line(Json::object({{"v", kStateVersion}, {"stacks", std::move(list)}}));
}

Result<std::vector<StackRecord>> state_from_json(const std::string& text) {
  Result<Json> parsed = parse_json(text, kStateLimits);
  if (!parsed.ok()) return Error{UV_EINVAL, "state file: " + parsed.error().message};
  const Json& root = *parsed;
  if (!root.is_object()) return Error{UV_EINVAL, "state file: not a JSON object"};
  if (root["v"] != Json(kStateVersion)) return Error{UV_EINVAL, "state file: unsupported version"};
  const Json& list = root["stacks"];
  if (!list.is_array()) return Error{UV_EINVAL, "state file: no stacks array"};
  std::vector<StackRecord> out;
  for (const Json& item : list.as_array()) {
    StackRecord record;
    record.name = item["name"].string_or("");
    record.request.file = item["file"].string_or("");
    record.request.cwd = item["cwd"].string_or("");
    record.request.ephemeral = item["ephemeral"].bool_or(false);
    record.request.no_sandbox = item["no_sandbox"].bool_or(false);
    if (const Json& env = item["env"]; env.is_object()) {
      for (const auto& [key, value] : env.as_object())
        if (value.is_string()) record.request.env.emplace_back(key, value.as_string());
    }
    if (record.name.empty() || record.request.file.empty())
      return Error{UV_EINVAL, "state file: a stack without name or file"};
    out.push_back(std::move(record));
  }
  return out;
}

Result<std::vector<StackRecord>> read_state_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::vector<StackRecord>{};
    return system_error(errno, "open " + path);
  }
  std::string text;
  char buf[8192];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  ::close(fd);
  auto parsed = state_from_json(text);
  if (!parsed.ok()) return Error{parsed.error().code, path + ": " + parsed.error().message};
  return parsed;
}

Status write_state_file(const std::string& path, const std::vector<StackRecord>& stacks) {
  std::string temp = path + ".tmp";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return system_error(errno, "open " + temp);
  std::string text = state_to_json(stacks);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int saved = errno;
      ::close(fd);
      return system_error(saved, "write " + temp);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) return system_error(errno, "sync " + temp);
  if (::rename(temp.c_str(), path.c_str()) != 0) return system_error(errno, "rename " + temp);
  return {};
}

}  // namespace stackie
