#include "stack/secrets.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "base/fs_path.h"
#include "stack/env_file.h"
#include "stack/yaml_fields.h"
#include "stack/yaml_node.h"

namespace stackie {

namespace {

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

bool exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

Result<std::map<std::string, std::string>> parse_companion(const std::string& path) {
  STACKIE_TRY_ASSIGN(root, parse_yaml_file(path));
  std::map<std::string, std::string> out;
  if (root.is_null()) return out;
  STACKIE_TRY(expect_kind(root, YamlNode::Kind::map, "secrets file"));
  STACKIE_TRY(check_fields(root, {"secrets"}, "a secrets file"));
  const YamlNode* secrets = root.find("secrets");
  if (!secrets) return out;
  STACKIE_TRY_ASSIGN(map, read_scalar_map(*secrets, "secrets"));
  for (auto& [name, value] : map) out[name] = value.text;
  return out;
}

}  // namespace

std::string companion_secrets_path(const std::string& stack_file) {
  std::string base = base_name(stack_file);
  for (std::string extension : {".yml", ".yaml"})
    if (base.size() > extension.size() &&
        base.compare(base.size() - extension.size(), extension.size(), extension) == 0) {
      base.resize(base.size() - extension.size());
      break;
    }
  return dir_of(stack_file) + "/" + base + ".secrets.yml";
}

Result<std::map<std::string, std::string>> parse_dotenv(const std::string& text,
                                                        const std::string& path) {
  STACKIE_TRY_ASSIGN(entries, parse_env_file(text, path));
  std::map<std::string, std::string> out;
  for (auto& entry : entries) out[entry.name] = std::move(entry.value);
  return out;
}

SecretStore::SecretStore(std::map<std::string, std::string> env, const std::string& stack_file)
    : env_(std::move(env)) {
  companion_.path = companion_secrets_path(stack_file);
  dot_env_.path = dir_of(stack_file) + "/.env";
  dev_vars_.path = dir_of(stack_file) + "/.dev.vars";
}

Status SecretStore::load(Source& source, bool yaml) {
  if (source.loaded) return {};
  source.loaded = true;
  if (!exists(source.path)) return {};
  struct stat info {};
  if (::stat(source.path.c_str(), &info) == 0 && (info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    warnings_.push_back(source.path + ": warning: this secrets file has mode " + mode +
                        ": other users of this machine may read it (chmod 600 " + source.path +
                        ")");
  }
  if (yaml) {
    STACKIE_TRY_ASSIGN(values, parse_companion(source.path));
    source.values = std::move(values);
  } else {
    STACKIE_TRY_ASSIGN(text, read_text_file(source.path));
    STACKIE_TRY_ASSIGN(values, parse_dotenv(text, source.path));
    source.values = std::move(values);
  }
  return {};
}

Result<std::optional<std::string>> SecretStore::lookup(const std::string& name) {
  if (auto found = env_.find(name); found != env_.end()) {
    if (std::find(found_in_env_.begin(), found_in_env_.end(), name) == found_in_env_.end())
      found_in_env_.push_back(name);
    return std::optional(found->second);
  }
  STACKIE_TRY(load(companion_, true));
  if (auto found = companion_.values.find(name); found != companion_.values.end())
    return std::optional(found->second);
  for (Source* source : {&dot_env_, &dev_vars_}) {
    STACKIE_TRY(load(*source, false));
    if (auto found = source->values.find(name); found != source->values.end())
      return std::optional(found->second);
  }
  return std::optional<std::string>();
}

std::vector<std::string> SecretStore::existing_files() const {
  std::vector<std::string> out;
  for (const Source* source : {&companion_, &dot_env_, &dev_vars_})
    if (exists(source->path)) out.push_back(source->path);
  return out;
}

std::string SecretStore::sources_description() const {
  return "the environment, " + base_name(companion_.path) + ", .env, .dev.vars";
}

}  // namespace stackie
