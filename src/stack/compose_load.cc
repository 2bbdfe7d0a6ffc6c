// Where a Compose file enters loading: the file is parsed once, and a Compose file is mapped
// onto blocks with the catalog and the secrets the rest of the load will use.
#include <sys/stat.h>

#include "stack/catalog.h"
#include "stack/compose_file.h"
#include "stack/secrets.h"
#include "stack/stack_writer.h"
#include "stack/substacks.h"

namespace stackie {

namespace {

Result<StackFile> map_compose_file(const YamlNode& root, const std::string& absolute_path,
                                   const std::map<std::string, std::string>& env,
                                   const std::vector<std::string>& block_path,
                                   std::vector<std::string>& warnings) {
  // Compose's `${NAME:-default}` takes the default only when NAME has no value in compose's
  // own sources, the environment and .env (which Stackie's secrets read too).
  SecretStore secrets(env, absolute_path);
  SecretKnown known = [&secrets](const std::string& name) {
    auto found = secrets.lookup(name);
    return found.ok() && found->has_value();
  };
  STACKIE_TRY_ASSIGN(project, parse_compose(root, absolute_path, known));
  ComposeMapContext context;
  context.catalog_ports =
      [&block_path](const std::string& name) -> std::optional<std::vector<ServedPort>> {
    std::string file = find_block_file(name, block_path);
    if (file.empty()) return std::nullopt;
    auto def = load_block_def(file, name);
    if (!def.ok()) return std::nullopt;  // loading the block reports it
    std::vector<ServedPort> ports;
    for (const auto& serve : def->serves)
      ports.push_back({serve.name, serve.type.empty() ? serve.name : serve.type, serve.port, 0});
    return ports;
  };
  context.is_directory = [](const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
  };
  auto stack = map_compose(project, context);
  for (auto& warning : project.warnings) warnings.push_back(std::move(warning));
  return stack;
}

}  // namespace

Result<StackFile> load_any_stack_file(const std::string& absolute_path,
                                      const std::map<std::string, std::string>& env,
                                      const std::vector<std::string>& block_path,
                                      std::vector<std::string>& warnings) {
  STACKIE_TRY_ASSIGN(root, parse_yaml_file(absolute_path));
  if (!looks_like_compose(root)) {
    STACKIE_TRY_ASSIGN(stack, parse_stack_file(root, absolute_path));
    STACKIE_TRY(compose_substacks(stack, warnings));
    return stack;
  }
  return map_compose_file(root, absolute_path, env, block_path, warnings);
}

Result<std::string> convert_compose(const std::string& absolute_path,
                                    const std::map<std::string, std::string>& env,
                                    const std::vector<std::string>& block_path) {
  STACKIE_TRY_ASSIGN(root, parse_yaml_file(absolute_path));
  if (!looks_like_compose(root))
    return Error{0, absolute_path + ": already a stack file, not a Compose file"};
  std::vector<std::string> warnings;
  STACKIE_TRY_ASSIGN(stack, map_compose_file(root, absolute_path, env, block_path, warnings));
  std::string name = absolute_path.substr(absolute_path.rfind('/') + 1);
  std::vector<std::string> header = {
      "Converted from " + name + " by `stackie convert` (stackie-compose(7)).",
      "Values compose took from the environment or .env are ${secrets.NAME} here; a default",
      "whose variable had no value when converting is written as it is."};
  if (!warnings.empty()) {
    header.push_back("");
    header.push_back("Not mapped (" + name + ", line: what):");
    size_t prefix = absolute_path.size() + 1;
    for (const auto& warning : warnings) {
      std::string text = warning.substr(prefix);
      size_t marker = text.find(": warning: ");
      std::string where = text.substr(0, marker);
      header.push_back("  " + where.substr(0, where.rfind(':')) + ": " + text.substr(marker + 11));
    }
  }
  return write_stack_file(stack, header);
}

}  // namespace stackie
