#include "stack/resolve.h"

#include <algorithm>
#include <map>
#include <set>

#include "stack/yaml_fields.h"

namespace stackie {

namespace {

struct Edge {
  size_t to;             // the dependency
  SourceLocation where;  // where the consumer names it
};

std::string quote_list(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) out += i + 1 == names.size() ? " and " : ", ";
    out += "'" + names[i] + "'";
  }
  return out;
}

class GraphResolver {
 public:
  explicit GraphResolver(const std::vector<GraphBlock>& blocks) : blocks_(blocks) {
    for (size_t i = 0; i < blocks.size(); ++i) {
      index_[blocks[i].name] = i;
      names_.push_back(blocks[i].name);
    }
    edges_.resize(blocks.size());
    out_.consumes.resize(blocks.size());
    out_.depends_on.resize(blocks.size());
  }

  Result<ResolvedGraph> run() {
    STACKIE_TRY(check_host_ports());
    for (size_t i = 0; i < blocks_.size(); ++i) {
      STACKIE_TRY(resolve_depends_on(i));
      STACKIE_TRY(resolve_consumes(i));
    }
    STACKIE_TRY(order());
    return std::move(out_);
  }

 private:
  Result<size_t> find_block(const std::string& name, const SourceLocation& where,
                            std::string_view what) {
    auto found = index_.find(name);
    if (found != index_.end()) return found->second;
    return error_at(where, std::string(what) + ": no block '" + name + "' in this stack" +
                               did_you_mean(name, names_));
  }

  void add_dependency(size_t from, size_t to, const SourceLocation& where) {
    for (const auto& edge : edges_[from])
      if (edge.to == to) return;
    edges_[from].push_back({to, where});
    out_.depends_on[from].push_back(blocks_[to].name);
  }

  Status resolve_depends_on(size_t i) {
    for (const auto& [name, where] : blocks_[i].depends_on) {
      STACKIE_TRY_ASSIGN(target, find_block(name, where, "depends_on"));
      if (target == i) return error_at(where, "block '" + name + "' cannot depend on itself");
      add_dependency(i, target, where);
    }
    return {};
  }

  // The provider's port for one consumes entry: the three errors of DESIGN.md §4 live here.
  Status resolve_consumes(size_t i) {
    const GraphBlock& consumer = blocks_[i];
    std::set<int> taken;
    for (const auto& port : consumer.serves) taken.insert(port.port);
    for (const auto& consume : consumer.consumes) {
      std::string what = "consumes '" + consume.name + "'";
      std::vector<std::pair<size_t, size_t>> matches;  // (block, port)
      if (!consume.block.empty()) {
        STACKIE_TRY_ASSIGN(provider, find_block(consume.block, consume.block_where, what));
        const auto& serves = blocks_[provider].serves;
        for (size_t p = 0; p < serves.size(); ++p)
          if (consume.port_type.empty() || serves[p].type == consume.port_type)
            matches.emplace_back(provider, p);
        if (matches.empty())
          return error_at(consume.block_where,
                          what + ": block '" + consume.block + "' serves no port" +
                              (consume.port_type.empty() ? std::string()
                                                         : " of type '" + consume.port_type + "'"));
        if (matches.size() > 1) {
          std::vector<std::string> ports;
          for (auto [b, p] : matches) ports.push_back(blocks_[b].serves[p].name);
          return error_at(consume.block_where, what + ": block '" + consume.block +
                                                   "' serves several ports (" + quote_list(ports) +
                                                   "); add a port_type to pick one");
        }
      } else {
        for (size_t b = 0; b < blocks_.size(); ++b) {
          if (b == i) continue;
          const auto& serves = blocks_[b].serves;
          for (size_t p = 0; p < serves.size(); ++p)
            if (serves[p].type == consume.port_type) matches.emplace_back(b, p);
        }
        if (matches.empty())
          return error_at(consume.where, what + ": no block in this stack serves a port of type '" +
                                             consume.port_type + "'");
        if (matches.size() > 1) {
          std::vector<std::string> providers;
          for (auto [b, p] : matches) providers.push_back(blocks_[b].name);
          return error_at(consume.where, what + ": port type '" + consume.port_type +
                                             "' is served by " + quote_list(providers) +
                                             "; name one with block_override");
        }
      }
      auto [provider, port_index] = matches.front();
      if (provider == i)
        return error_at(consume.block_where, what + ": a block cannot consume itself");
      const ServedPort& port = blocks_[provider].serves[port_index];
      // Inside the consumer's namespace the provider appears on its own declared port, unless
      // the consumer already uses that number: then the next free one.
      int local = port.port;
      while (taken.count(local) && local < 65535) ++local;
      taken.insert(local);
      out_.consumes[i].push_back({consume.name, blocks_[provider].name, port.name, local});
      add_dependency(i, provider, consume.where);
    }
    return {};
  }

  Status check_host_ports() {
    std::map<int, std::pair<size_t, size_t>> used;
    for (size_t b = 0; b < blocks_.size(); ++b)
      for (size_t p = 0; p < blocks_[b].serves.size(); ++p) {
        const ServedPort& port = blocks_[b].serves[p];
        int host = port.host_port ? port.host_port : port.port;
        auto [it, inserted] = used.emplace(host, std::make_pair(b, p));
        if (inserted) continue;
        const auto& [first_block, first_port] = it->second;
        SourceLocation where =
            blocks_[b].serve_where.size() > p ? blocks_[b].serve_where[p] : blocks_[b].where;
        return error_at(where, "host port " + std::to_string(host) + " of '" + blocks_[b].name +
                                   "' (serves." + port.name + ") is already used by '" +
                                   blocks_[first_block].name + "' (serves." +
                                   blocks_[first_block].serves[first_port].name +
                                   "); give one a different port or host_port");
      }
    return {};
  }

  Status order() {
    size_t n = blocks_.size();
    std::vector<bool> placed(n, false);
    while (out_.order.size() < n) {
      bool progressed = false;
      for (size_t i = 0; i < n && !progressed; ++i) {
        if (placed[i]) continue;
        bool ready = std::all_of(edges_[i].begin(), edges_[i].end(),
                                 [&](const Edge& edge) { return placed[edge.to]; });
        if (!ready) continue;
        placed[i] = true;
        out_.order.push_back(i);
        progressed = true;
      }
      if (!progressed) return cycle_error(placed);
    }
    return {};
  }

  // Walks unplaced blocks along unplaced dependencies until a block repeats: that is a cycle.
  Error cycle_error(const std::vector<bool>& placed) {
    size_t start = 0;
    while (placed[start]) ++start;
    std::vector<size_t> path;
    std::vector<SourceLocation> wheres;
    std::vector<int> position(blocks_.size(), -1);
    size_t current = start;
    while (position[current] < 0) {
      position[current] = static_cast<int>(path.size());
      path.push_back(current);
      for (const auto& edge : edges_[current])
        if (!placed[edge.to]) {
          wheres.push_back(edge.where);
          current = edge.to;
          break;
        }
    }
    size_t first = static_cast<size_t>(position[current]);
    std::string text;
    for (size_t k = first; k < path.size(); ++k) text += blocks_[path[k]].name + " -> ";
    text += blocks_[current].name;
    return error_at(wheres[first], "dependency cycle: " + text);
  }

  const std::vector<GraphBlock>& blocks_;
  std::map<std::string, size_t> index_;
  std::vector<std::string> names_;
  std::vector<std::vector<Edge>> edges_;
  ResolvedGraph out_;
};

}  // namespace

Result<ResolvedGraph> resolve_graph(const std::vector<GraphBlock>& blocks) {
  GraphResolver resolver(blocks);
  return resolver.run();
}

}  // namespace stackie
