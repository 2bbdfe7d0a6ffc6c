// The Seatbelt profile generator (DESIGN.md §5b): golden files, and a small SBPL reader that
// checks every generated profile is well-formed and holds only the operations we expect, also
// for hostile path strings that try to close the string literal and add rules.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "sandbox/seatbelt_profile.h"

namespace stackie {
namespace {

// --- a minimal SBPL (TinyScheme subset) reader -------------------------------------------------

struct Node {
  enum class Kind { atom, string, list };
  Kind kind = Kind::atom;
  std::string text;  // atom name or decoded string bytes
  std::vector<Node> items;
  bool is_atom(std::string_view name) const { return kind == Kind::atom && text == name; }
};

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  // All top-level forms, or an error naming the offset.
  bool read_all(std::vector<Node>& out, std::string& error) {
    while (skip_space(), pos_ < text_.size()) {
      Node node;
      if (!read(node, error)) return false;
      if (node.kind != Node::Kind::list) return fail(error, "top-level atom");
      out.push_back(std::move(node));
    }
    return true;
  }

 private:
  bool fail(std::string& error, std::string_view what) {
    error = std::string(what) + " at offset " + std::to_string(pos_);
    return false;
  }
  void skip_space() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\n' || c == '\t') {
        ++pos_;
      } else if (c == ';') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool read(Node& node, std::string& error) {
    skip_space();
    if (pos_ >= text_.size()) return fail(error, "unexpected end");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      node.kind = Node::Kind::list;
      while (skip_space(), pos_ < text_.size() && text_[pos_] != ')') {
        Node child;
        if (!read(child, error)) return false;
        node.items.push_back(std::move(child));
      }
      if (pos_ >= text_.size()) return fail(error, "unclosed list");
      ++pos_;
      return true;
    }
    if (c == ')') return fail(error, "unbalanced ')'");
    if (c == '"') return read_string(node, error);
    node.kind = Node::Kind::atom;
    while (pos_ < text_.size()) {
      char a = text_[pos_];
      bool atom_char = (a >= 'a' && a <= 'z') || (a >= 'A' && a <= 'Z') || (a >= '0' && a <= '9') ||
                       a == '-' || a == '*' || a == '_' || a == '.' || a == '#';
      if (!atom_char) break;
      node.text += a;
      ++pos_;
    }
    if (node.text.empty()) return fail(error, "unexpected character");
    return true;
  }
  bool read_string(Node& node, std::string& error) {
    node.kind = Node::Kind::string;
    ++pos_;
    while (pos_ < text_.size()) {
      unsigned char c = static_cast<unsigned char>(text_[pos_++]);
      if (c == '"') return true;
      if (c < 0x20 || c >= 0x7f) return fail(error, "raw non-printable byte inside a string");
      if (c != '\\') {
        node.text += static_cast<char>(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      if (e == '"' || e == '\\') {
        node.text += e;
      } else if (e == 'x' && pos_ + 2 <= text_.size() && hex_value(text_[pos_]) >= 0 &&
                 hex_value(text_[pos_ + 1]) >= 0) {
        node.text += static_cast<char>(hex_value(text_[pos_]) * 16 + hex_value(text_[pos_ + 1]));
        pos_ += 2;
      } else {
        return fail(error, "unknown escape");
      }
    }
    return fail(error, "unterminated string");
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// One (action, operation, filter, value) fact per operation x filter of each rule.
struct Grant {
  std::string action, operation, filter, value;
  bool operator==(const Grant&) const = default;
  bool operator<(const Grant& o) const {
    return std::tie(action, operation, filter, value) <
           std::tie(o.action, o.operation, o.filter, o.value);
  }
};

const std::set<std::string> kKnownOperations = {
    "process-fork",       "process-exec",     "signal",
    "sysctl-read",        "ipc-posix-shm*",   "ipc-posix-sem*",
    "ipc-sysv-shm",       "ipc-sysv-sem",     "mach-lookup",
    "file-read-metadata", "file-read*",       "file-map-executable",
    "file-write-data",    "file-ioctl",       "file-write*",
    "network-bind",       "network-inbound",  "network-outbound",
    "network*",           "appleevent-send",  "ipc-posix-shm-read-data",
    "file-write-unlink",  "file-write-create"};

// Filters of one string argument: (NAME "value").
const std::set<std::string> kStringFilters = {"subpath",
                                              "literal",
                                              "global-name",
                                              "sysctl-name",
                                              "sysctl-name-prefix",
                                              "ipc-posix-name",
                                              "ipc-posix-name-prefix"};

// Parses `profile`, checks its structure and returns its grants. Fails the test on anything
// unexpected: a missing header, an unknown operation, a malformed filter, a raw byte.
std::vector<Grant> checked_grants(const std::string& profile) {
  std::vector<Node> forms;
  std::string error;
  EXPECT_TRUE(Reader(profile).read_all(forms, error)) << error << "\n" << profile;
  std::vector<Grant> grants;
  if (forms.size() < 2) {
    ADD_FAILURE() << "profile too short";
    return grants;
  }
  EXPECT_TRUE(forms[0].items.size() == 2 && forms[0].items[0].is_atom("version") &&
              forms[0].items[1].is_atom("1"))
      << "first form must be (version 1)";
  EXPECT_TRUE(forms[1].items.size() == 2 && forms[1].items[0].is_atom("deny") &&
              forms[1].items[1].is_atom("default"))
      << "second form must be (deny default)";
  for (size_t i = 2; i < forms.size(); ++i) {
    const Node& form = forms[i];
    EXPECT_GE(form.items.size(), 2u);
    if (form.items.size() < 2) continue;
    const std::string& action = form.items[0].text;
    EXPECT_TRUE(form.items[0].is_atom("allow") || form.items[0].is_atom("deny")) << action;
    std::vector<std::string> operations;
    std::vector<std::pair<std::string, std::string>> filters;
    for (size_t j = 1; j < form.items.size(); ++j) {
      const Node& item = form.items[j];
      if (item.kind == Node::Kind::atom) {
        EXPECT_TRUE(filters.empty()) << "operation after a filter";
        EXPECT_TRUE(kKnownOperations.count(item.text)) << "unexpected operation " << item.text;
        operations.push_back(item.text);
        continue;
      }
      EXPECT_EQ(item.kind, Node::Kind::list);
      if (item.items.size() == 2 && item.items[0].is_atom("target")) {
        EXPECT_TRUE(item.items[1].is_atom("same-sandbox"));
        filters.emplace_back("target", item.items[1].text);
      } else if (item.items.size() == 3 && item.items[1].is_atom("ip") &&
                 (item.items[0].is_atom("local") || item.items[0].is_atom("remote"))) {
        EXPECT_EQ(item.items[2].kind, Node::Kind::string);
        filters.emplace_back(item.items[0].text + " ip", item.items[2].text);
      } else if (item.items.size() == 3 && item.items[1].is_atom("unix-socket") &&
                 (item.items[0].is_atom("local") || item.items[0].is_atom("remote")) &&
                 item.items[2].kind == Node::Kind::list && item.items[2].items.size() == 2 &&
                 item.items[2].items[0].is_atom("subpath") &&
                 item.items[2].items[1].kind == Node::Kind::string) {
        // (local unix-socket (subpath "/dir")) -> filter "local unix-socket subpath"
        filters.emplace_back(item.items[0].text + " unix-socket subpath",
                             item.items[2].items[1].text);
      } else if (item.items.size() == 2 && item.items[1].kind == Node::Kind::string &&
                 item.items[0].kind == Node::Kind::atom &&
                 kStringFilters.count(item.items[0].text)) {
        filters.emplace_back(item.items[0].text, item.items[1].text);
      } else {
        ADD_FAILURE() << "unexpected filter in form " << i;
      }
    }
    EXPECT_FALSE(operations.empty()) << "rule without operation";
    if (filters.empty()) filters.emplace_back("", "");
    for (const auto& op : operations)
      for (const auto& [filter, value] : filters) grants.push_back({action, op, filter, value});
  }
  return grants;
}

std::set<std::string> values_for(const std::vector<Grant>& grants, std::string_view action,
                                 std::string_view operation, std::string_view filter) {
  std::set<std::string> out;
  for (const Grant& g : grants)
    if (g.action == action && g.operation == operation && g.filter == filter) out.insert(g.value);
  return out;
}

bool has_unfiltered(const std::vector<Grant>& grants, std::string_view operation) {
  for (const Grant& g : grants)
    if (g.action == "allow" && g.operation == operation && g.filter.empty()) return true;
  return false;
}

// --- policies ----------------------------------------------------------------------------------

SandboxPolicy minimal_policy() {
  SandboxPolicy policy;
  policy.name = "demo-minimal";
  return policy;
}

SandboxPolicy postgres_policy() {
  SandboxPolicy policy;
  policy.name = "demo-postgres";
  policy.read_only = {{"/opt/homebrew/opt/postgresql@15", ""}};
  policy.read_write = {{"/Users/dev/.stackie/storage/volumes/demo/data", "/var/lib/postgresql"}};
  policy.host_tmp_dir = "/Users/dev/.stackie/storage/tmp/demo-postgres";
  policy.network = NetworkMode::localhost;
  policy.tcp_bind = {5432};
  return policy;
}

// A localhost block that serves 8080 and consumes postgres (5432) and redis (6379).
SandboxPolicy api_policy() {
  SandboxPolicy policy;
  policy.name = "demo-api";
  policy.read_only = {{"/Users/dev/src/api", ""}};
  policy.host_tmp_dir = "/Users/dev/.stackie/storage/tmp/demo-api";
  policy.network = NetworkMode::localhost;
  policy.tcp_bind = {8080};
  policy.tcp_connect = {5432, 6379};
  return policy;
}

SandboxPolicy host_network_policy() {
  SandboxPolicy policy;
  policy.name = "demo-api";
  policy.system_view = false;
  policy.read_only = {{"/Users/dev/src/api", ""}, {"/usr/lib", ""}};
  policy.network = NetworkMode::host;
  return policy;
}

const std::vector<std::string> kHostilePaths = {
    "/tmp/x\") (allow default) (\"",
    "/tmp/x\")\n(allow file-write* (subpath \"/\"))\n(\"",
    "/tmp/back\\slash\\",
    "/tmp/back\\\") (allow network*) ;",
    "/tmp/new\nline\r\ttab",
    "/tmp/\x01\x1b[31m\x7f",
    "/tmp/; comment (allow default)",
    "/tmp/#| block |#",
    "/tmp/\xc3\xbcnic\xc3\xb8"
    "de/\xe6\x97\xa5\xe6\x9c\xac",
    "/tmp/\xff\xfe invalid utf-8",
};

SandboxPolicy hostile_policy() {
  SandboxPolicy policy;
  policy.name = "demo-hostile";
  policy.read_only = {{kHostilePaths[0], ""}, {kHostilePaths[2], ""}};
  policy.read_write = {{kHostilePaths[1], ""}};
  policy.host_tmp_dir = kHostilePaths[8];
  return policy;
}

// --- tests ---------------------------------------------------------------------------------------

TEST(SeatbeltLiteral, EscapesQuotesBackslashesAndEveryNonPrintableByte) {
  EXPECT_EQ(sbpl_string_literal("/usr/lib"), "\"/usr/lib\"");
  EXPECT_EQ(sbpl_string_literal("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(sbpl_string_literal("x\ny\r\t\x01\x7f"), "\"x\\x0ay\\x0d\\x09\\x01\\x7f\"");
  EXPECT_EQ(sbpl_string_literal("\xc3\xbc"), "\"\\xc3\\xbc\"");
  EXPECT_EQ(sbpl_string_literal(""), "\"\"");
}

TEST(SeatbeltProfile, StartsDenyDefaultAndHoldsOnlyKnownOperations) {
  for (const SandboxPolicy& policy :
       {minimal_policy(), postgres_policy(), api_policy(), host_network_policy()}) {
    std::vector<Grant> grants = checked_grants(seatbelt_profile(policy));
    EXPECT_FALSE(grants.empty());
    for (const Grant& g : grants) EXPECT_NE(g.operation, "default");
  }
}

TEST(SeatbeltProfile, GrantsPolicyPathsAsSubpaths) {
  std::vector<Grant> grants = checked_grants(seatbelt_profile(postgres_policy()));
  std::set<std::string> writable = values_for(grants, "allow", "file-write*", "subpath");
  EXPECT_EQ(writable, (std::set<std::string>{"/Users/dev/.stackie/storage/volumes/demo/data",
                                             "/Users/dev/.stackie/storage/tmp/demo-postgres"}))
      << "host paths (bind sources) and the temp dir, nothing else";
  std::set<std::string> readable = values_for(grants, "allow", "file-read*", "subpath");
  EXPECT_TRUE(readable.count("/opt/homebrew/opt/postgresql@15"));
  EXPECT_TRUE(readable.count("/System/Library")) << "system view";
  EXPECT_FALSE(readable.count("/Users")) << "no parent directory is readable";
  std::set<std::string> metadata = values_for(grants, "allow", "file-read-metadata", "literal");
  EXPECT_TRUE(metadata.count("/") && metadata.count("/Users") && metadata.count("/Users/dev"));
}

// Linux binds the stack file read-only on top of the project a block writes, and each directory
// it is given is a mount point it cannot remove or rename. Seatbelt has no mounts: the same by
// denials after the grants (the last matching rule decides).
TEST(SeatbeltProfile, WhatIsReadOnlyInsideAWritableDirectoryStaysSoAndNoGrantedDirectoryMoves) {
  SandboxPolicy policy = minimal_policy();
  policy.read_write = {{"/Users/dev/src/api", ""}, {"/Users/dev/src/api/config", ""}};
  policy.read_only = {{"/Users/dev/src/api/stackie.yml", ""}, {"/usr/lib", ""}};
  const std::string profile = seatbelt_profile(policy);
  std::vector<Grant> grants = checked_grants(profile);
  EXPECT_EQ(values_for(grants, "deny", "file-write*", "subpath"),
            (std::set<std::string>{"/Users/dev/src/api/stackie.yml"}))
      << "only what lies inside a writable directory";
  EXPECT_EQ(values_for(grants, "deny", "file-write-unlink", "literal"),
            (std::set<std::string>{"/Users/dev/src/api", "/Users/dev/src/api/config"}));
  EXPECT_EQ(values_for(grants, "deny", "file-write-create", "literal"),
            (std::set<std::string>{"/Users/dev/src/api", "/Users/dev/src/api/config"}));
  EXPECT_GT(profile.find("(deny file-write*"),
            profile.find("(allow file-read* file-write* file-map-executable"))
      << "the denials come after the grants, so they win";
}

// A .env, a secrets file or .git the project does not have: Linux has nothing to bind over
// them, Seatbelt denies making them (a rename onto one is a create of it).
TEST(SeatbeltProfile, WhatDecidesTheNextUpAndIsMissingCannotBeMade) {
  SandboxPolicy policy = minimal_policy();
  policy.read_write = {{"/Users/dev/src/api", ""}};
  policy.no_create = {"/Users/dev/src/api/.env", "/Users/dev/src/api/.git", "relative/ignored"};
  const std::string profile = seatbelt_profile(policy);
  std::vector<Grant> grants = checked_grants(profile);
  EXPECT_EQ(values_for(grants, "deny", "file-write-create", "literal"),
            (std::set<std::string>{"/Users/dev/src/api", "/Users/dev/src/api/.env",
                                   "/Users/dev/src/api/.git"}));
  EXPECT_GT(profile.find("(literal \"/Users/dev/src/api/.env\")"),
            profile.find("(allow file-read* file-write* file-map-executable"))
      << "after the grants, so it wins";
}

TEST(SeatbeltProfile, WithoutSystemViewOnlyThePolicyPathsAreReadable) {
  std::vector<Grant> grants = checked_grants(seatbelt_profile(host_network_policy()));
  EXPECT_EQ(values_for(grants, "allow", "file-read*", "subpath"),
            (std::set<std::string>{"/Users/dev/src/api", "/usr/lib"}));
  EXPECT_TRUE(values_for(grants, "allow", "file-write*", "subpath").empty());
  EXPECT_TRUE(values_for(grants, "allow", "file-read*", "literal").empty()) << "no devices";
}

TEST(SeatbeltProfile, NetworkFollowsTheMode) {
  std::vector<Grant> none = checked_grants(seatbelt_profile(minimal_policy()));
  for (const Grant& g : none) {
    EXPECT_EQ(g.operation.rfind("network", 0), std::string::npos) << g.operation;
    EXPECT_NE(g.value, "com.apple.mDNSResponder");
  }

  std::vector<Grant> local = checked_grants(seatbelt_profile(postgres_policy()));
  std::set<Grant> ip;
  for (const Grant& g : local)
    if (g.filter == "local ip" || g.filter == "remote ip") ip.insert(g);
  EXPECT_EQ(ip, (std::set<Grant>{{"allow", "network-bind", "local ip", "localhost:5432"},
                                 {"allow", "network-inbound", "local ip", "localhost:5432"}}))
      << "its own served port only: no wildcard, no outbound (it consumes nothing)";

  std::vector<Grant> host = checked_grants(seatbelt_profile(host_network_policy()));
  EXPECT_TRUE(has_unfiltered(host, "network*"));
  EXPECT_FALSE(has_unfiltered(local, "network*"));
}

// macOS has no network namespace: the host's loopback is shared by every block, so only the
// declared ports may cross (issue 19). The hostile case: a block that could bind any loopback
// port could squat a port another block serves; one that could connect anywhere on the
// loopback could reach every local service of the user (databases, dev servers, agents).
TEST(SeatbeltProfile, LocalhostCrossesOnlyTheDeclaredPorts) {
  std::vector<Grant> grants = checked_grants(seatbelt_profile(api_policy()));
  EXPECT_EQ(values_for(grants, "allow", "network-bind", "local ip"),
            std::set<std::string>{"localhost:8080"});
  EXPECT_EQ(values_for(grants, "allow", "network-inbound", "local ip"),
            std::set<std::string>{"localhost:8080"});
  EXPECT_EQ(values_for(grants, "allow", "network-outbound", "remote ip"),
            (std::set<std::string>{"localhost:5432", "localhost:6379"}));
  for (const Grant& g : grants) {
    EXPECT_EQ(g.value.find(":*"), std::string::npos) << g.operation << " " << g.value;
    EXPECT_NE(g.operation, "network*");
  }
  SandboxPolicy nothing_declared = api_policy();
  nothing_declared.tcp_bind.clear();
  nothing_declared.tcp_connect.clear();
  for (const Grant& g : checked_grants(seatbelt_profile(nothing_declared)))
    EXPECT_TRUE(g.filter != "local ip" && g.filter != "remote ip") << g.operation << " " << g.value;
}

TEST(SeatbeltProfile, ResolverOnlyWithOutboundNetwork) {
  auto resolver = [](const SandboxPolicy& policy) {
    std::vector<Grant> grants = checked_grants(seatbelt_profile(policy));
    bool service =
        values_for(grants, "allow", "mach-lookup", "global-name").count("com.apple.mDNSResponder") >
        0;
    bool socket = values_for(grants, "allow", "network-outbound", "literal")
                      .count("/private/var/run/mDNSResponder") > 0;
    EXPECT_EQ(service, socket) << "the Mach service and the socket go together";
    return service;
  };
  EXPECT_FALSE(resolver(minimal_policy())) << "network none";
  EXPECT_FALSE(resolver(postgres_policy())) << "localhost, serves only: no way out";
  EXPECT_TRUE(resolver(api_policy())) << "localhost that consumes";
  EXPECT_TRUE(resolver(host_network_policy()));
}

TEST(SeatbeltProfile, UnixSocketsOnlyInsideTheRuntimeDirectory) {
  std::vector<Grant> grants = checked_grants(seatbelt_profile(postgres_policy()));
  const std::set<std::string> runtime{"/Users/dev/.stackie/storage/tmp/demo-postgres"};
  EXPECT_EQ(values_for(grants, "allow", "network-bind", "local unix-socket subpath"), runtime);
  EXPECT_EQ(values_for(grants, "allow", "network-outbound", "remote unix-socket subpath"), runtime);
  std::vector<Grant> no_tmp = checked_grants(seatbelt_profile(host_network_policy()));
  EXPECT_TRUE(values_for(no_tmp, "allow", "network-bind", "local unix-socket subpath").empty());
}

// kern.procargs2 hands out any same-user process's argv and environment (secrets in
// DATABASE_URL); kern.proc.* lists every process. Programs need neither.
TEST(SeatbeltProfile, SysctlReadsOnlyNamedSystemFacts) {
  std::vector<Grant> grants = checked_grants(seatbelt_profile(host_network_policy()));
  EXPECT_FALSE(has_unfiltered(grants, "sysctl-read"));
  std::set<std::string> names = values_for(grants, "allow", "sysctl-read", "sysctl-name");
  std::set<std::string> prefixes = values_for(grants, "allow", "sysctl-read", "sysctl-name-prefix");
  EXPECT_TRUE(names.count("hw.ncpu") && names.count("kern.osrelease") && names.count("hw.memsize"));
  for (const std::string name : {"kern.procargs2", "kern.procargs", "kern.proc.all",
                                 "kern.proc.pid.1", "kern.proc.uid.501", "net.inet.tcp.pcblist"}) {
    EXPECT_FALSE(names.count(name)) << name;
    for (const std::string& prefix : prefixes)
      EXPECT_NE(name.rfind(prefix, 0), 0u) << name << " matched by prefix " << prefix;
  }
  for (const std::string& prefix : prefixes) {
    EXPECT_GE(prefix.size(), 4u) << "a prefix this short grants a whole tree";
    EXPECT_NE(prefix.rfind("kern.proc", 0), 0u) << prefix;
  }
}

// initdb reads its password from /dev/stdin (stackie.postgres): a process's own descriptors by
// name, and no other device.
TEST(SeatbeltProfile, OwnDescriptorsByNameButNotAllOfDev) {
  std::vector<Grant> grants = checked_grants(seatbelt_profile(minimal_policy()));
  std::set<std::string> literals = values_for(grants, "allow", "file-read*", "literal");
  EXPECT_TRUE(literals.count("/dev/stdin") && literals.count("/dev/null"));
  std::set<std::string> subpaths = values_for(grants, "allow", "file-read*", "subpath");
  EXPECT_TRUE(subpaths.count("/dev/fd"));
  EXPECT_FALSE(subpaths.count("/dev")) << "disks and other devices stay denied";
}

TEST(SeatbeltProfile, PosixIpcNamesArePrefixedPerBlock) {
  std::vector<Grant> grants = checked_grants(seatbelt_profile(postgres_policy()));
  const std::string prefix = seatbelt_ipc_prefix("demo-postgres");
  EXPECT_EQ(prefix.size(), 15u) << "s + 13 base32 + '.', leaving 15 of macOS's 31 bytes";
  EXPECT_NE(prefix, seatbelt_ipc_prefix("demo-api"));
  // 65 bits of SHA-256: no name a stack file could search for shares another's prefix. Every
  // character is one of base32's, and the 13 cover the digest's first 65 bits.
  EXPECT_EQ(seatbelt_ipc_prefix("a").find_first_not_of("abcdefghijklmnopqrstuvwxyz234567", 1), 14u);
  EXPECT_EQ(prefix, seatbelt_ipc_prefix("demo-postgres")) << "stable";
  for (const char* op : {"ipc-posix-shm*", "ipc-posix-sem*"}) {
    EXPECT_FALSE(has_unfiltered(grants, op)) << op;
    EXPECT_EQ(values_for(grants, "allow", op, "ipc-posix-name-prefix"),
              (std::set<std::string>{"/" + prefix, prefix}))
        << op;
  }
}

TEST(SeatbeltProfile, ProcessesSignalsAndIpcAreConfined) {
  std::vector<Grant> grants = checked_grants(seatbelt_profile(minimal_policy()));
  EXPECT_TRUE(has_unfiltered(grants, "process-fork"));
  EXPECT_TRUE(has_unfiltered(grants, "process-exec"));
  EXPECT_FALSE(has_unfiltered(grants, "signal")) << "signals only within the sandbox";
  EXPECT_EQ(values_for(grants, "allow", "signal", "target"), std::set<std::string>{"same-sandbox"});
  EXPECT_FALSE(has_unfiltered(grants, "mach-lookup")) << "mach lookups by name only";
  std::set<std::string> services = values_for(grants, "allow", "mach-lookup", "global-name");
  EXPECT_EQ(services.size(), 3u);
  for (const std::string& service : services)
    EXPECT_EQ(service.find("launchservices"), std::string::npos) << service;
}

TEST(SeatbeltProfile, LaunchServicesAndAppleEventsAreDeniedLast) {
  const std::string profile = seatbelt_profile(host_network_policy());
  std::vector<Grant> grants = checked_grants(profile);
  std::set<std::string> denied = values_for(grants, "deny", "mach-lookup", "global-name");
  EXPECT_TRUE(denied.count("com.apple.coreservices.launchservicesd"));
  EXPECT_TRUE(denied.count("com.apple.coreservices.appleevents"));
  ASSERT_FALSE(grants.empty());
  EXPECT_EQ(grants.back().action, "deny");
  EXPECT_EQ(grants.back().operation, "appleevent-send");
  // Nothing is allowed after the denies (later rules win in SBPL).
  bool seen_deny = false;
  for (const Grant& g : grants) {
    if (g.action == "deny") seen_deny = true;
    if (seen_deny) {
      EXPECT_EQ(g.action, "deny") << g.operation;
    }
  }
}

TEST(SeatbeltProfile, HostilePathsCannotInjectRules) {
  // The same policy with a benign path gives the shape every hostile variant must keep.
  auto with_path = [](const std::string& path) {
    SandboxPolicy policy = minimal_policy();
    policy.read_only = {{path, ""}};
    policy.read_write = {{path + "-rw", ""}};
    policy.host_tmp_dir = path + "-tmp";
    return policy;
  };
  // Ancestors get file-read-metadata literals; a hostile path with extra '/' has more of them,
  // so the comparison leaves those out (they are checked to be metadata-only below).
  auto without_metadata = [](std::vector<Grant> grants) {
    std::erase_if(grants, [](const Grant& g) { return g.operation == "file-read-metadata"; });
    return grants;
  };
  const std::vector<Grant> benign =
      without_metadata(checked_grants(seatbelt_profile(with_path("/tmp/benign"))));
  for (const std::string& path : kHostilePaths) {
    SCOPED_TRACE(testing::PrintToString(path));
    const std::string profile = seatbelt_profile(with_path(path));
    for (char c : profile) {
      unsigned char byte = static_cast<unsigned char>(c);
      EXPECT_TRUE(byte == '\n' || (byte >= 0x20 && byte < 0x7f)) << "raw byte " << int{byte};
    }
    const std::vector<Grant> all = checked_grants(profile);
    for (const Grant& g : all)
      if (g.operation == "file-read-metadata") {
        EXPECT_EQ(g.filter, "literal");
      }
    const std::vector<Grant> grants = without_metadata(all);
    ASSERT_EQ(grants.size(), benign.size()) << "a hostile path added or removed a rule";
    for (size_t i = 0; i < grants.size(); ++i) {
      EXPECT_EQ(grants[i].action, benign[i].action);
      EXPECT_EQ(grants[i].operation, benign[i].operation);
      EXPECT_EQ(grants[i].filter, benign[i].filter);
    }
    EXPECT_TRUE(values_for(grants, "allow", "file-read*", "subpath").count(path))
        << "the path reads back byte for byte";
    EXPECT_EQ(values_for(grants, "allow", "file-write*", "subpath"),
              (std::set<std::string>{path + "-rw", path + "-tmp"}));
  }
}

TEST(SeatbeltProfile, PathsThatAreNotAbsoluteOrHoldNulAreLeftOut) {
  SandboxPolicy policy = minimal_policy();
  policy.read_write = {{"relative/dir", ""}, {std::string("/tmp/a\0/etc", 11), ""}, {"", ""}};
  std::vector<Grant> grants = checked_grants(seatbelt_profile(policy));
  EXPECT_TRUE(values_for(grants, "allow", "file-write*", "subpath").empty())
      << "never widened to a prefix such as /tmp/a";
}

// --- golden files ------------------------------------------------------------------------------

std::string golden_path(const std::string& name) {
  const char* root = std::getenv("STACKIE_SOURCE_ROOT");
  return std::string(root ? root : ".") + "/tests/sandbox/golden/seatbelt_" + name + ".sb";
}

void expect_golden(const std::string& name, const SandboxPolicy& policy) {
  const std::string actual = seatbelt_profile(policy);
  const std::string path = golden_path(name);
  if (std::getenv("STACKIE_UPDATE_GOLDEN")) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path
                  << " (run with STACKIE_UPDATE_GOLDEN=1 to create it, then review it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "profile for '" << name << "' changed; if intended, "
                                    << "regenerate with STACKIE_UPDATE_GOLDEN=1 and review";
}

TEST(SeatbeltGolden, Minimal) {
  expect_golden("minimal", minimal_policy());
}
TEST(SeatbeltGolden, PostgresLocalhost) {
  expect_golden("postgres_localhost", postgres_policy());
}
TEST(SeatbeltGolden, HostNetworkNoSystemView) {
  expect_golden("host_network", host_network_policy());
}
TEST(SeatbeltGolden, ApiLocalhostConsumes) {
  expect_golden("api_localhost", api_policy());
}
TEST(SeatbeltGolden, HostilePaths) {
  expect_golden("hostile_paths", hostile_policy());
}

}  // namespace
}  // namespace stackie
