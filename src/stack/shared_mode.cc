#include "stack/shared_mode.h"

#include <algorithm>

#include "stack/paths.h"

namespace stackie {

namespace {

// The catalog's own definitions ("stackie.postgres") keep the short names their data has always
// lived under: "postgres", "postgres.15". That form is read back unambiguously only while the
// short name has no '.' of its own (the first '.' starts the version); every other definition
// ("postgres" from a repository's sources, "stackie.pg.15") takes the long form, which starts
// with a character no short name starts with. Without it, a repository's definition named
// "postgres" was handed the user's stackie.postgres data.
std::optional<std::string> plain_short_name(const std::string& definition) {
  if (definition.rfind("stackie.", 0) != 0) return std::nullopt;
  std::string rest = definition.substr(8);
  if (rest.empty() || rest[0] == '-' || rest.find('.') != std::string::npos) return std::nullopt;
  return rest;
}

// What the comparison leaves out: the asking stack's own view (names, positions, consumes)
// and the host side of the ports.
ResolvedBlock comparable(const ResolvedBlock& block) {
  ResolvedBlock out = shared_instance_spec(block);
  out.moved_ports.clear();
  for (auto& port : out.serves) port.host_port = 0;
  out.environment_sources.clear();
  out.shared_settings.clear();
  return out;
}

}  // namespace

std::string shared_instance_name(const std::string& definition, const std::string& version) {
  return version.empty() ? definition : definition + "@" + version;
}

std::string shared_instance_dir(const std::string& definition, const std::string& version) {
  if (auto plain = plain_short_name(definition))
    return version.empty() ? *plain : *plain + "." + version;
  // Neither a definition's name nor a version holds an '@' (both are checked as names).
  return "@" + definition + (version.empty() ? "" : "@" + version);
}

std::string shared_sandbox_id(const std::string& definition, const std::string& version) {
  // Sandbox names take only [a-z0-9._-], so the long form cannot say '@'. Its marker is the
  // second '.' of "shared.." (a short name never starts with '.'); in its definition every '.'
  // is written "._", so the first ".." ends the definition and starts the version.
  // Every '-' is doubled: a stack's block id always has a run of '-' of odd length (the one
  // between stack and block, paths.h), so no shared id is ever one of them.
  if (auto plain = plain_short_name(definition))
    return "shared." + doubled_dashes(version.empty() ? *plain : *plain + "." + version);
  std::string escaped;
  for (char c : definition) escaped += c == '.' ? std::string("._") : std::string(1, c);
  return "shared.." + doubled_dashes(escaped + (version.empty() ? "" : ".." + version));
}

ResolvedBlock shared_instance_spec(const ResolvedBlock& request) {
  ResolvedBlock instance = request;
  instance.name = request.shared_instance;
  instance.consumes.clear();
  instance.depends_on.clear();
  instance.depend_conditions.clear();
  instance.profiles.clear();
  instance.policy.host_names.clear();
  return instance;
}

std::optional<std::string> shared_difference(const ResolvedBlock& instance,
                                             const ResolvedBlock& request) {
  const auto& have = instance.shared_settings;
  for (const auto& [name, value] : request.shared_settings) {
    const std::string& wanted_name = name;  // (clang 14: no structured binding in a lambda)
    auto found = std::find_if(have.begin(), have.end(),
                              [&](const auto& setting) { return setting.first == wanted_name; });
    if (found == have.end() || found->second != value) return name;
  }
  for (const auto& [name, value] : have) {
    const std::string& held_name = name;
    auto& asked = request.shared_settings;
    if (std::none_of(asked.begin(), asked.end(),
                     [&](const auto& setting) { return setting.first == held_name; }))
      return name;
  }
  // A host port the request names must be the instance's: a stack that asked for 16379 and
  // silently got the first stack's 6379 would be a port that moved without a word. Naming
  // none (0) takes the instance's, whatever it is.
  for (const auto& asked : request.serves) {
    if (asked.host_port == 0) continue;
    auto held = std::find_if(instance.serves.begin(), instance.serves.end(),
                             [&](const ServedPort& port) { return port.name == asked.name; });
    int held_host = held == instance.serves.end() ? 0
                    : held->host_port != 0        ? held->host_port
                                                  : held->port;
    if (held_host != asked.host_port) return "serves." + asked.name + ".host_port";
  }
  if (comparable(instance) == comparable(request)) return std::nullopt;
  if (instance.programs != request.programs) return "the programs found on this host (PATH)";
  return "what the definition makes of them (its text changed since the instance started)";
}

}  // namespace stackie
