// `stackie blocks [--json]`, `stackie blocks show NAME [--json]` and `stackie search TERM
// [--json]`: the block catalog as this host sees it (stackie(1)): each block's description and
// ports, and whether its programs are installed here or how to install them. No daemon.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "base/json.h"
#include "cli/cli.h"
#include "cli/cli_args.h"
#include "cli/cli_daemon.h"
#include "cli/cmd.h"
#include "stack/catalog.h"
#include "stack/catalog_entry.h"
#include "stack/paths.h"

namespace stackie::cli {

extern const char kBlocksUsage[] =
    "Usage: stackie blocks [--json]\n"
    "       stackie blocks show NAME [--json]\n"
    "\n"
    "List the block catalog (STACKIE_BLOCK_PATH, then the built-in blocks): NAME, PORTS,\n"
    "whether the block's programs are installed on this host (\"ready\") or the command that\n"
    "installs them, and DESCRIPTION. `show` prints one block's definition file, its vars with\n"
    "their defaults, where each program was found and its package for apt, brew and winget.\n"
    "\n"
    "Options:\n"
    "      --json  {\"v\":1,\"blocks\":[BLOCK...]} or {\"v\":1,\"block\":BLOCK} (stackie(1))\n"
    "\n"
    "Exit status: 0, 1 a definition does not load or no such block, 2 usage error.\n";

extern const char kSearchUsage[] =
    "Usage: stackie search TERM [--json]\n"
    "\n"
    "List the catalog blocks whose name or description contains TERM (case-insensitive), as\n"
    "stackie blocks does.\n"
    "\n"
    "Options:\n"
    "      --json  {\"v\":1,\"blocks\":[BLOCK...]} (stackie(1))\n"
    "\n"
    "Exit status: 0 (also when nothing matches), 1 a definition does not load, 2 usage error.\n";

namespace {

struct Catalog {
  std::vector<std::string> dirs;
  ProgramHost host;
};

Catalog current_catalog() {
  Environment env = current_environment();
  Catalog catalog;
  // A relative STACKIE_BLOCK_PATH entry needs the working directory; without one it is left out.
  auto cwd = current_directory();
  for (const auto& dir : default_block_path(env)) {
    if (is_host_absolute_path(dir))
      catalog.dirs.push_back(dir);
    else if (cwd.ok())
      catalog.dirs.push_back(*cwd + "/" + dir);
  }
  if (auto path = env.find("PATH"); path != env.end())
    catalog.host.path = split_search_path(path->second);
  catalog.host.os = host_os_name();
  return catalog;
}

std::string ports_text(const BlockDef& def) {
  std::string out;
  for (const auto& serve : def.serves)
    out += (out.empty() ? "" : ",") + std::to_string(serve.port) + "/" +
           (serve.type.empty() ? serve.name : serve.type);
  return out.empty() ? "-" : out;
}

// "ready", or what to install: the distinct hints of the missing programs.
std::string programs_text(const CatalogEntry& entry) {
  if (entry.ready()) return "ready";
  std::vector<std::string> hints;
  std::string unnamed;
  for (const auto& program : entry.programs) {
    if (!program.path.empty()) continue;
    if (program.install_hint.empty())
      unnamed += (unnamed.empty() ? "" : ", ") + program.name;
    else if (std::find(hints.begin(), hints.end(), program.install_hint) == hints.end())
      hints.push_back(program.install_hint);
  }
  std::string out;
  for (const auto& hint : hints) out += (out.empty() ? "" : "; ") + hint;
  if (!unnamed.empty()) out += (out.empty() ? "" : "; ") + ("missing: " + unnamed);
  return out;
}

Json entry_json(const CatalogEntry& entry, bool details) {
  const BlockDef& def = entry.def;
  Json ports = Json::array();
  for (const auto& serve : def.serves)
    ports.push_back(Json::object({{"name", serve.name},
                                  {"port", serve.port},
                                  {"type", serve.type.empty() ? serve.name : serve.type}}));
  Json programs = Json::array();
  for (size_t i = 0; i < entry.programs.size(); ++i) {
    const ProgramStatus& status = entry.programs[i];
    Json program = Json::object({{"name", status.name},
                                 {"path", status.path.empty() ? Json() : Json(status.path)},
                                 {"install", status.install_hint}});
    if (details) {
      Json packages = Json::object();
      for (const auto& [manager, package] : def.programs[i].packages)
        packages.set(manager, package);
      program.set("packages", std::move(packages));
    }
    programs.push_back(std::move(program));
  }
  Json out = Json::object({{"name", entry.name},
                           {"alias_of", entry.alias_of.empty() ? Json() : Json(entry.alias_of)},
                           {"description", def.description},
                           {"file", def.file},
                           {"ports", std::move(ports)},
                           {"ready", entry.ready()},
                           {"programs", std::move(programs)}});
  if (details) {
    Json vars = Json::array();
    for (const auto& [name, value] : def.vars)
      vars.push_back(Json::object({{"name", name}, {"default", value.text}}));
    out.set("vars", std::move(vars));
  }
  return out;
}

// Every catalog block for which `keep` holds; a definition that does not load is reported on
// stderr (FILE:LINE:COL) and makes `failed` true, the others are still listed.
template <typename Keep>
std::vector<CatalogEntry> collect(const Catalog& catalog, Keep keep, bool& failed) {
  std::vector<CatalogEntry> out;
  for (const auto& name : catalog_names(catalog.dirs)) {
    auto entry = describe_catalog_block(name, catalog.dirs, catalog.host);
    if (!entry.ok()) {
      std::fprintf(stderr, "stackie: %s\n", entry.error().message.c_str());
      failed = true;
      continue;
    }
    if (keep(*entry)) out.push_back(std::move(*entry));
  }
  return out;
}

void print_list(const std::vector<CatalogEntry>& entries, bool json) {
  if (json) {
    Json list = Json::array();
    for (const auto& entry : entries) list.push_back(entry_json(entry, false));
    print_json(Json::object({{"v", 1}, {"blocks", std::move(list)}}));
    return;
  }
  std::vector<std::vector<std::string>> rows = {{"NAME", "PORTS", "PROGRAMS", "DESCRIPTION"}};
  for (const auto& entry : entries)
    rows.push_back(
        {entry.name, ports_text(entry.def), programs_text(entry),
         entry.alias_of.empty() ? entry.def.description : "another name of " + entry.alias_of});
  size_t width[3] = {0, 0, 0};
  for (const auto& row : rows)
    for (size_t i = 0; i < 3; ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows)
    std::printf("%-*s  %-*s  %-*s  %s\n", static_cast<int>(width[0]), row[0].c_str(),
                static_cast<int>(width[1]), row[1].c_str(), static_cast<int>(width[2]),
                row[2].c_str(), row[3].c_str());
}

int show(const Catalog& catalog, const std::string& name, bool json) {
  auto entry = describe_catalog_block(name, catalog.dirs, catalog.host);
  if (!entry.ok()) {
    std::fprintf(stderr, "stackie: %s\n", entry.error().message.c_str());
    return kExitFailed;
  }
  std::ifstream in(entry->def.file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    std::fprintf(stderr, "stackie: cannot read %s\n", entry->def.file.c_str());
    return kExitFailed;
  }
  if (json) {
    Json out = entry_json(*entry, true);
    out.set("definition", text.str());
    print_json(Json::object({{"v", 1}, {"block", std::move(out)}}));
    return kExitOk;
  }
  const BlockDef& def = entry->def;
  std::printf("%s%s: %s\n", entry->name.c_str(),
              entry->alias_of.empty() ? "" : (" (another name of " + entry->alias_of + ")").c_str(),
              def.description.c_str());
  std::printf("file      %s\n", def.file.c_str());
  std::printf("ports     %s\n", ports_text(def).c_str());
  for (const auto& [var, value] : def.vars)
    std::printf("var       %s (default: %s)\n", var.c_str(), value.text.c_str());
  for (size_t i = 0; i < entry->programs.size(); ++i) {
    const ProgramStatus& status = entry->programs[i];
    std::string packages;
    for (const auto& [manager, package] : def.programs[i].packages)
      packages += (packages.empty() ? "" : ", ") + manager + " " + package;
    std::printf("program   %s: %s%s\n", status.name.c_str(),
                status.path.empty() ? "not found" : status.path.c_str(),
                packages.empty() ? "" : (" (" + packages + ")").c_str());
  }
  std::printf("\n%s", text.str().c_str());
  return kExitOk;
}

// The words and --json of `blocks` and `search`; an exit status when an option is unknown.
std::optional<int> read_words(const char* verb, std::span<char*> argv, bool& json,
                              std::vector<std::string>& words) {
  ArgWalker args(verb, argv);
  while (!args.done()) {
    if (args.flag("", "--json"))
      json = true;
    else if (args.current().empty() || args.current()[0] != '-') {
      words.emplace_back(args.current());
      args.next();
    } else {
      return usage_error(verb, "unknown option '" + std::string(args.current()) + "'");
    }
  }
  return std::nullopt;
}

}  // namespace

int run_blocks(std::span<char*> argv) {
  bool json = false;
  std::vector<std::string> words;
  if (auto bad = read_words("blocks", argv, json, words)) return *bad;
  Catalog catalog = current_catalog();
  if (words.empty()) {
    bool failed = false;
    print_list(collect(
                   catalog, [](const CatalogEntry&) { return true; }, failed),
               json);
    return failed ? kExitFailed : kExitOk;
  }
  if (words[0] != "show")
    return usage_error("blocks", "unknown subcommand '" + words[0] + "' (try: show NAME)");
  if (words.size() != 2) return usage_error("blocks", "'show' takes one block name");
  return show(catalog, words[1], json);
}

int run_search(std::span<char*> argv) {
  bool json = false;
  std::vector<std::string> words;
  if (auto bad = read_words("search", argv, json, words)) return *bad;
  if (words.size() != 1) return usage_error("search", "give one search TERM");
  Catalog catalog = current_catalog();
  bool failed = false;
  auto entries = collect(
      catalog, [&](const CatalogEntry& entry) { return catalog_entry_matches(entry, words[0]); },
      failed);
  print_list(entries, json);
  return failed ? kExitFailed : kExitOk;
}

}  // namespace stackie::cli
