#include "stack/catalog_entry.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "stack/catalog.h"
#include "stack/yaml_fields.h"

namespace stackie {

namespace {

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

namespace {

ProgramSearch search_of(const ProgramDecl& program, const ProgramHost& host) {
  return {program.names, globs_for_os(program.search, host.os), host.path, host.root,
          usual_program_dirs(host.os)};
}

}  // namespace

FoundProgram find_block_program(const ProgramDecl& program, const ProgramHost& host,
                                const std::string& version) {
  return find_program(search_of(program, host), version);
}

std::vector<std::string> installed_block_versions(const ProgramDecl& program,
                                                  const ProgramHost& host) {
  return installed_versions(search_of(program, host));
}

bool has_versioned_programs(const BlockDef& def) {
  for (const auto& program : def.programs)
    for (const auto& glob : program.search)
      if (glob.find('*') != std::string::npos) return true;
  return false;
}

std::string version_install_hint(const ProgramDecl& program, const std::string& version,
                                 const std::string& os) {
  std::map<std::string, std::string> packages;
  for (auto [manager, package] : program.version_packages) {
    if (size_t star = package.find('*'); star != std::string::npos)
      package.replace(star, 1, version);
    packages[manager] = package;
  }
  std::string hint = install_hint(packages, os);
  return hint.empty() ? install_hint(program.packages, os) : hint;
}

bool CatalogEntry::ready() const {
  return std::all_of(programs.begin(), programs.end(),
                     [](const ProgramStatus& program) { return !program.path.empty(); });
}

Result<BlockDef> load_catalog_def(const std::string& name, const std::vector<std::string>& dirs,
                                  std::string* alias_of) {
  std::string file = find_block_file(name, dirs);
  if (file.empty())
    return Error{0, "unknown block '" + name + "': not in the block catalog" +
                        did_you_mean(name, catalog_names(dirs))};
  STACKIE_TRY_ASSIGN(def, load_block_def(file, name));
  if (def.alias.empty()) return def;
  std::string target_file = find_block_file(def.alias, dirs);
  if (target_file.empty())
    return error_at(def.where, "'" + name + "' is an alias of '" + def.alias +
                                   "', which is not in the block catalog");
  STACKIE_TRY_ASSIGN(target, load_block_def(target_file, def.alias));
  if (!target.alias.empty())
    return error_at(target.where, "'" + def.alias + "' is an alias too (of '" + target.alias +
                                      "'); an alias must name a definition");
  if (alias_of) *alias_of = def.alias;
  return target;
}

Result<CatalogEntry> describe_catalog_block(const std::string& name,
                                            const std::vector<std::string>& dirs,
                                            const ProgramHost& host) {
  CatalogEntry entry;
  entry.name = name;
  STACKIE_TRY_ASSIGN(def, load_catalog_def(name, dirs, &entry.alias_of));
  entry.def = std::move(def);
  for (const auto& program : entry.def.programs) {
    ProgramStatus status;
    status.name = program.name;
    status.path = find_block_program(program, host).path;
    status.install_hint = install_hint(program.packages, host.os);
    entry.programs.push_back(std::move(status));
  }
  return entry;
}

bool catalog_entry_matches(const CatalogEntry& entry, const std::string& term) {
  std::string wanted = lower(term);
  for (const std::string* text : {&entry.name, &entry.alias_of, &entry.def.description})
    if (lower(*text).find(wanted) != std::string::npos) return true;
  return false;
}

}  // namespace stackie
