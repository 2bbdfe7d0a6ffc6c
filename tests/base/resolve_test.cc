#include "stack/resolve.h"

#include <gtest/gtest.h>

namespace stackie {
namespace {

GraphBlock block(std::string name, std::vector<ServedPort> serves = {}) {
  GraphBlock out;
  out.name = std::move(name);
  out.where = {"s.yml", 1, 1};
  out.serves = std::move(serves);
  return out;
}

ConsumeDecl consume(std::string name, std::string target, std::string type = "") {
  ConsumeDecl out;
  out.name = std::move(name);
  out.block = std::move(target);
  out.port_type = std::move(type);
  out.where = {"s.yml", 9, 3};
  out.block_where = {"s.yml", 9, 9};
  return out;
}

std::vector<std::string> names(const std::vector<GraphBlock>& blocks, const ResolvedGraph& graph) {
  std::vector<std::string> out;
  for (size_t i : graph.order) out.push_back(blocks[i].name);
  return out;
}

TEST(Resolve, StartOrderIsStableByDeclaration) {
  std::vector<GraphBlock> blocks = {block("api"), block("db", {{"pg", "postgres", 5432, 0}}),
                                    block("cache", {{"r", "redis", 6379, 0}}), block("docs")};
  blocks[0].consumes = {consume("db", "db"), consume("cache", "", "redis")};
  auto graph = resolve_graph(blocks);
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  // api waits for db and cache; among ready blocks the earlier-declared starts first.
  EXPECT_EQ(names(blocks, *graph), (std::vector<std::string>{"db", "cache", "api", "docs"}));
  EXPECT_EQ(graph->depends_on[0], (std::vector<std::string>{"db", "cache"}));
  ASSERT_EQ(graph->consumes[0].size(), 2u);
  EXPECT_EQ(graph->consumes[0][0], (ConsumedPort{"db", "db", "pg", 5432}));
  EXPECT_EQ(graph->consumes[0][1], (ConsumedPort{"cache", "cache", "r", 6379}));
}

TEST(Resolve, LocalPortMovesOnlyWhenItClashes) {
  std::vector<GraphBlock> blocks = {block("api", {{"http", "http", 5432, 8080}}),
                                    block("db", {{"pg", "postgres", 5432, 0}}),
                                    block("db2", {{"pg", "postgres", 5432, 15432}})};
  blocks[0].consumes = {consume("a", "db"), consume("b", "db2")};
  auto graph = resolve_graph(blocks);
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  EXPECT_EQ(graph->consumes[0][0].local_port, 5433);  // 5432 is api's own
  EXPECT_EQ(graph->consumes[0][1].local_port, 5434);  // 5433 is taken by the first
}

TEST(Resolve, TheThreeConsumesErrors) {
  std::vector<GraphBlock> blocks = {block("api"), block("r1", {{"r", "redis", 6379, 0}}),
                                    block("r2", {{"r", "redis", 6380, 0}})};
  blocks[0].consumes = {consume("x", "nope")};
  EXPECT_EQ(resolve_graph(blocks).error().message,
            "s.yml:9:9: consumes 'x': no block 'nope' in this stack");
  blocks[0].consumes = {consume("x", "", "amqp")};
  EXPECT_EQ(resolve_graph(blocks).error().message,
            "s.yml:9:3: consumes 'x': no block in this stack serves a port of type 'amqp'");
  blocks[0].consumes = {consume("x", "", "redis")};
  EXPECT_EQ(resolve_graph(blocks).error().message,
            "s.yml:9:3: consumes 'x': port type 'redis' is served by 'r1' and 'r2'; name one "
            "with block_override");
  blocks[0].consumes = {consume("x", "r2", "redis")};  // block_override settles it
  EXPECT_EQ(resolve_graph(blocks)->consumes[0][0].provider, "r2");
  blocks[0].consumes = {consume("x", "r2", "http")};
  EXPECT_FALSE(resolve_graph(blocks).ok());
  blocks[0].consumes = {consume("x", "api")};
  EXPECT_FALSE(resolve_graph(blocks).ok());
}

TEST(Resolve, SeveralPortsNeedAType) {
  std::vector<GraphBlock> blocks = {
      block("api"), block("db", {{"pg", "postgres", 5432, 0}, {"m", "metrics", 9187, 0}})};
  blocks[0].consumes = {consume("x", "db")};
  EXPECT_EQ(resolve_graph(blocks).error().message,
            "s.yml:9:9: consumes 'x': block 'db' serves several ports ('pg' and 'm'); add a "
            "port_type to pick one");
}

TEST(Resolve, CycleIsNamed) {
  std::vector<GraphBlock> blocks = {block("a"), block("b"), block("c"), block("d")};
  blocks[0].depends_on = {{"b", {"s.yml", 3, 5}}};
  blocks[1].depends_on = {{"c", {"s.yml", 5, 5}}};
  blocks[2].depends_on = {{"b", {"s.yml", 7, 5}}};
  auto graph = resolve_graph(blocks);
  ASSERT_FALSE(graph.ok());
  EXPECT_EQ(graph.error().message, "s.yml:5:5: dependency cycle: b -> c -> b");
  blocks[3].depends_on = {{"d", {"s.yml", 9, 5}}};
  blocks[2].depends_on.clear();
  EXPECT_EQ(resolve_graph(blocks).error().message, "s.yml:9:5: block 'd' cannot depend on itself");
}

TEST(Resolve, DuplicateHostPorts) {
  std::vector<GraphBlock> blocks = {block("a", {{"p", "x", 8080, 0}}),
                                    block("b", {{"q", "x", 9000, 8080}})};
  blocks[1].serve_where = {{"s.yml", 6, 20}};
  EXPECT_EQ(resolve_graph(blocks).error().message,
            "s.yml:6:20: host port 8080 of 'b' (serves.q) is already used by 'a' (serves.p); "
            "give one a different port or host_port");
  blocks[1].serves[0].host_port = 0;  // inside ports may repeat across blocks, host ports not
  EXPECT_TRUE(resolve_graph(blocks).ok());
}

}  // namespace
}  // namespace stackie
