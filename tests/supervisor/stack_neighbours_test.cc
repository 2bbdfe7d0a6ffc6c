// What one stack's blocks can do to another (supervisor/stack_neighbours.h): a block that can
// write where another stack is decided refuses the `up` of either, remembered across daemons.
#include "supervisor/stack_neighbours.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>

#include "support/temp_dir.h"

namespace stackie {
namespace {

class Neighbours : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(dir_.ok());
    outer_ = stack("outer", dir_.write("outer/stackie.yml", "# outer\n"));
    outer_.writable_dirs = {{dir_ / "outer", "writer"}};
    inner_ = stack("inner", dir_.write("outer/inner/stackie.yml", "# inner\n"));
  }

  static ResolvedStack stack(const std::string& name, const std::string& file) {
    ResolvedStack out;
    out.name = name;
    out.file = file;
    out.decisive_paths = {file.substr(0, file.rfind('/'))};
    return out;
  }

  std::string registry() const { return dir_ / "neighbours.json"; }

  // The registry as a daemon holds it, with `up_` for whether a stack is up.
  std::unique_ptr<StackNeighbours> open(size_t bound = StackNeighbours::kMaxPlanted) {
    auto neighbours = std::make_unique<StackNeighbours>(registry(), bound);
    neighbours->set_up_check([this](const std::string&) { return up_; });
    return neighbours;
  }
  // outer/.env, absent at outer's up: where its block may plant one.
  std::string absent_dot_env() {
    const std::string dot_env = dir_ / "outer/.env";
    outer_.absent_decisive = {{dot_env, {dir_ / "outer", "writer"}}};
    return dot_env;
  }
  // What the user does with a refused file that is theirs: a new file under the same name.
  static void write_anew(const std::string& path) {
    std::filesystem::copy_file(path, path + ".new");
    std::filesystem::rename(path + ".new", path);
  }

  bool up_ = true;

  testing::TempDir dir_{"neighbours"};
  ResolvedStack outer_, inner_;
};

TEST_F(Neighbours, AStackInsideWhatAnotherStacksBlockWritesIsRefused) {
  StackNeighbours neighbours(registry());
  ASSERT_TRUE(neighbours.check(outer_).ok());
  ASSERT_TRUE(neighbours.remember(outer_).ok());
  EXPECT_TRUE(neighbours.check(outer_).ok()) << "its own record is no neighbour";
  ResolvedStack renamed = outer_;
  renamed.name = "outer2";  // `up -p outer2`: the same file, so the same project
  EXPECT_TRUE(neighbours.check(renamed).ok());
  std::filesystem::create_directory_symlink(dir_ / "outer", dir_ / "outer-link");
  renamed.file = dir_ / "outer-link/stackie.yml";  // and through a link to its directory
  EXPECT_TRUE(neighbours.check(renamed).ok());
  auto refused = neighbours.check(inner_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "stack 'inner' is decided by " + dir_ / "outer/inner" + ", in " + dir_ / "outer" +
                ", which block 'writer' of stack 'outer' (" + outer_.file +
                ") can write: it could rewrite how this stack runs or plant links it follows; "
                "give each stack a project directory of its own (a block's `path` or volume "
                "that holds another project is the cause)");
  // Remembered in the file, for the next daemon: what a block wrote stays written.
  EXPECT_FALSE(StackNeighbours(registry()).check(inner_).ok());
  EXPECT_EQ(StackNeighbours(registry()).load_error(), "");
  // A file that cannot be read is said (the daemon logs it), not taken for "no neighbours".
  dir_.write("neighbours.json", "{\"x\": ");
  EXPECT_NE(StackNeighbours(registry()).load_error().find(registry() + ": "), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(registry() + ".bad")) << "kept aside, not overwritten";
  EXPECT_EQ(StackNeighbours(dir_ / "missing.json").load_error(), "") << "missing is empty";
}

// stackie-stack.yml is found before stackie.yml: a block that writes the project could plant
// one with the same stack name and its own blocks, and the next `up` would take it.
TEST_F(Neighbours, AStackFilePlantedBesideTheOneThatRanIsRefused) {
  StackNeighbours neighbours(registry());
  ASSERT_TRUE(neighbours.remember(outer_).ok());
  ResolvedStack planted = stack("outer", dir_.write("outer/stackie-stack.yml", "# planted\n"));
  auto refused = neighbours.check(planted);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("two stack files in one project: a block may have made " +
                                         planted.file + "; remove the one you did not write"),
            std::string::npos)
      << refused.error().message;
  std::filesystem::remove(outer_.file);  // the user's choice: the new file is the stack now
  EXPECT_TRUE(neighbours.check(planted).ok());
}

TEST_F(Neighbours, AStackWhoseBlockWouldWriteAnotherStackIsRefused) {
  StackNeighbours neighbours(registry());
  inner_.decisive_paths.push_back(dir_ / "secrets.env");
  ASSERT_TRUE(neighbours.remember(inner_).ok());
  auto refused = StackNeighbours(registry()).check(outer_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(
      refused.error().message.find("block 'writer' of stack 'outer' would write " + dir_ / "outer" +
                                   ", which holds " + dir_ / "outer/inner" + " of stack 'inner'"),
      std::string::npos)
      << refused.error().message;
  // A decisive file outside the project counts as well.
  outer_.writable_dirs = {{dir_.path(), "writer"}};
  inner_.decisive_paths = {dir_ / "secrets.env"};
  ASSERT_TRUE(neighbours.remember(inner_).ok());
  EXPECT_FALSE(neighbours.check(outer_).ok());
}

TEST_F(Neighbours, AStackThatNoLongerWritesThereOrIsGoneIsNoLongerInTheWay) {
  StackNeighbours neighbours(registry());
  ASSERT_TRUE(neighbours.remember(outer_).ok());
  ASSERT_FALSE(neighbours.check(inner_).ok());
  // Its next up records what it writes now.
  outer_.writable_dirs = {{dir_ / "outer/web", "writer"}};
  ASSERT_TRUE(neighbours.remember(outer_).ok());
  EXPECT_TRUE(neighbours.check(inner_).ok());
  // A checkout deleted with its stack file is forgotten.
  outer_.writable_dirs = {{dir_ / "outer", "writer"}};
  ASSERT_TRUE(neighbours.remember(outer_).ok());
  ASSERT_FALSE(neighbours.check(inner_).ok());
  // Not while that stack is up: its blocks still run (a branch switched under it).
  std::string up_file = outer_.file;
  neighbours.set_up_check([&](const std::string& file) { return file == up_file; });
  std::filesystem::remove(outer_.file);
  EXPECT_FALSE(neighbours.check(inner_).ok());
  ASSERT_TRUE(neighbours.remember(inner_).ok()) << "and a write keeps its record";
  StackNeighbours next_daemon(registry());
  next_daemon.set_up_check([&](const std::string& file) { return file == up_file; });
  EXPECT_FALSE(next_daemon.check(inner_).ok());
  up_file.clear();  // `down`
  EXPECT_TRUE(neighbours.check(inner_).ok());
}

TEST_F(Neighbours, ABlockFollowsNoLinkInAnotherStacksWritableDirectory) {
  ResolvedStack data = stack("data", dir_.write("data/stackie.yml", "# data\n"));
  data.writable_dirs = {{dir_ / "shared", "loader"}};
  StackNeighbours neighbours(registry());
  SandboxPolicy reader;
  reader.read_only = {{dir_ / "shared/conf", "/etc/app"}};
  SandboxPolicy other;
  other.read_only = {{dir_ / "elsewhere", "/etc/app"}};
  // Started before the data stack was known: nothing to add.
  SandboxPolicy early = reader;
  neighbours.confine(early);
  EXPECT_TRUE(early.link_free_roots.empty());
  // Each start asks again: the data stack, up since, writes above the reader's conf.
  ASSERT_TRUE(neighbours.remember(data).ok());
  neighbours.confine(reader);
  EXPECT_EQ(reader.link_free_roots, std::vector<std::string>{dir_ / "shared"});
  neighbours.confine(reader);
  EXPECT_EQ(reader.link_free_roots.size(), 1u) << "once";
  neighbours.confine(other);
  EXPECT_TRUE(other.link_free_roots.empty()) << "nothing of it is below";
}

// A `.env` the stack did not have at its last up, made while a block could write the project:
// the next up would read it (a secret it chose, a volume it named). Made by the user with the
// stack down, or written anew by the user after reading it, it is read.
TEST_F(Neighbours, AFileMadeWhileTheBlocksCouldWriteIsRefusedUntilMadeAnew) {
  bool up = true;
  StackNeighbours neighbours(registry());
  neighbours.set_up_check([&](const std::string&) { return up; });
  const std::string dot_env = dir_ / "outer/.env";
  outer_.absent_decisive = {{dot_env, {dir_ / "outer", "writer"}}};
  outer_.decisive_files = {outer_.file};
  ASSERT_TRUE(neighbours.check(outer_).ok());
  ASSERT_TRUE(neighbours.remember(outer_).ok());
  EXPECT_TRUE(neighbours.check(outer_).ok()) << "still absent";
  dir_.write("outer/.env", "DATA_DIR=/home/user/.ssh\n");  // the block, while it runs
  // A second name, which the block could have put where the user cleans up.
  std::filesystem::create_hard_link(dot_env, dir_ / "outer/cache-entry");
  // What the block may have left at the fresh name (a link, a second name) goes first.
  const std::string cure = "write it anew (rm -rf " + dot_env + ".new && cp " + dot_env + " " +
                           dot_env + ".new && mv " + dot_env + ".new " + dot_env + ")";
  auto refused = neighbours.check(outer_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "stack 'outer': " + dot_env +
                " did not exist at its last up and was made while block 'writer' could write " +
                dir_ / "outer" +
                ": an up does not read what a block may have written. `stackie down outer` "
                "first; then read it, and if it is yours, " +
                cure + " and up again; if not, remove it");
  // Down: that file is recorded as the blocks' (and known to the next daemon, from the file).
  up = false;
  ASSERT_TRUE(neighbours.writers_stopped(outer_.file).ok());
  refused = neighbours.check(outer_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(
      refused.error().message.find("a block may have written. Read it; if it is yours, " + cure),
      std::string::npos)
      << refused.error().message;
  StackNeighbours next(registry());
  next.set_up_check([&](const std::string&) { return up; });
  EXPECT_FALSE(next.check(outer_).ok());
  // What moved a timestamp does not make it the user's: the other name removed, a chmod.
  std::filesystem::remove(dir_ / "outer/cache-entry");
  std::filesystem::permissions(
      dot_env, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_FALSE(next.check(outer_).ok());
  // Written anew by the user: another file, read.
  std::filesystem::copy_file(dot_env, dot_env + ".new");
  std::filesystem::rename(dot_env + ".new", dot_env);
  EXPECT_TRUE(next.check(outer_).ok());

  // A daemon that died with the blocks running: at the next one's start they are stopped, and
  // what they made is theirs; what the user makes after is read.
  ASSERT_TRUE(next.remember(outer_).ok());  // up again
  std::filesystem::remove(dot_env);
  ASSERT_TRUE(next.remember(outer_).ok());
  const std::string secrets = dir_ / "outer/stackie.secrets.yml";
  outer_.absent_decisive.push_back({secrets, {dir_ / "outer", "writer"}});
  ASSERT_TRUE(next.remember(outer_).ok());
  dir_.write("outer/.env", "X=1\n");  // the block, before the daemon died
  StackNeighbours restarted(registry());
  restarted.set_up_check([&](const std::string&) { return false; });
  restarted.settle_stopped();
  dir_.write("outer/stackie.secrets.yml", "secrets: {}\n");  // the user, after
  auto after_restart = restarted.check(outer_);
  ASSERT_FALSE(after_restart.ok());
  EXPECT_EQ(after_restart.error().message.find("stack 'outer': " + dot_env), 0u)
      << after_restart.error().message;
  std::filesystem::remove(dot_env);
  EXPECT_TRUE(restarted.check(outer_).ok()) << "the secrets file was made with the blocks gone";

  // A record of the release before, with no word on whether the blocks run: taken as running,
  // so a .env that appeared is theirs.
  dir_.write("neighbours.json",
             "{\"" + outer_.file + "\": {\"stack\": \"outer\", \"file\": \"" + outer_.file +
                 "\", \"writable\": [], \"decisive\": [], \"absent\": [{\"path\": \"" + dot_env +
                 "\", \"dir\": \"" + dir_ / "outer" + "\", \"writer\": \"writer\"}]}}\n");
  dir_.write("outer/.env", "X=old\n");
  StackNeighbours upgraded(registry());
  upgraded.set_up_check([&](const std::string&) { return false; });
  upgraded.settle_stopped();
  EXPECT_FALSE(upgraded.check(outer_).ok()) << "an older record's absent paths still count";
  std::filesystem::remove(dot_env);

  // `up -p`: the same file as a second stack; the down of one leaves the other's blocks
  // running, so nothing is taken as stopped.
  ASSERT_TRUE(restarted.remember(outer_).ok());
  StackNeighbours two(registry());
  two.set_up_check([&](const std::string&) { return true; });  // the other name is still up
  ASSERT_TRUE(two.writers_stopped(outer_.file).ok());
  dir_.write("outer/.env", "X=2\n");
  EXPECT_FALSE(two.check(outer_).ok());
}

// A planted file keeps what it is when it moves: the project moved with `mv`, or the stack file
// gone for a while (a branch switched) while another stack came up.
TEST_F(Neighbours, AFileABlockMadeIsKnownWhereverItGoes) {
  auto neighbours = open();
  const std::string dot_env = absent_dot_env();
  ASSERT_TRUE(neighbours->check(outer_).ok());
  ASSERT_TRUE(neighbours->remember(outer_).ok());
  dir_.write("outer/.env", "DATA_DIR=/home/user/.ssh\n");  // the block
  up_ = false;
  ASSERT_TRUE(neighbours->writers_stopped(outer_.file).ok());

  // A branch without the stack file; another stack comes up meanwhile; the branch is back.
  const std::string stack_text = "# outer\n";
  std::filesystem::remove(outer_.file);
  ResolvedStack other = stack("other", dir_.write("other/stackie.yml", "# other\n"));
  ASSERT_TRUE(neighbours->check(other).ok());
  ASSERT_TRUE(neighbours->remember(other).ok());
  dir_.write("outer/stackie.yml", stack_text);
  outer_.decisive_files = {outer_.file, dot_env};
  auto after_switch = open();
  EXPECT_FALSE(after_switch->check(outer_).ok()) << "the record went with the stack file";

  // The project moved: another stack file, another record, the same .env.
  std::filesystem::rename(dir_ / "outer", dir_ / "moved");
  ResolvedStack moved = stack("outer", dir_ / "moved/stackie.yml");
  const std::string moved_env = dir_ / "moved/.env";
  moved.decisive_files = {moved.file, moved_env};
  auto refused = after_switch->check(moved);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "stack 'outer': " + moved_env + " is the file that " + dot_env +
                " was when block 'writer' of stack 'outer' could write " + dir_ / "outer" +
                ": an up does not read what a block may have written. Read it; if it is yours, "
                "write it anew (rm -rf " +
                moved_env + ".new && cp " + moved_env + " " + moved_env + ".new && mv " +
                moved_env + ".new " + moved_env + ") and up again; if not, remove it");

  // A sibling project's .env is a link to it: read through the link, so refused there too.
  ResolvedStack sibling = stack("sibling", dir_.write("sibling/stackie.yml", "# sibling\n"));
  std::filesystem::create_symlink(moved_env, dir_ / "sibling/.env");
  sibling.decisive_files = {sibling.file, dir_ / "sibling/.env"};
  EXPECT_FALSE(after_switch->check(sibling).ok()) << "through a link";

  // Written anew: read, here and through the link.
  write_anew(moved_env);
  EXPECT_TRUE(after_switch->check(moved).ok());
  EXPECT_TRUE(after_switch->check(sibling).ok());
}

// The project moved while its blocks ran: at their stop nothing is at the old place, and what
// they made went with the directory. The directory's identity and the name find it.
TEST_F(Neighbours, AFileMadeInAProjectMovedWhileItsBlocksRanIsFound) {
  auto neighbours = open();
  const std::string dot_env = absent_dot_env();
  ASSERT_TRUE(neighbours->check(outer_).ok());
  ASSERT_TRUE(neighbours->remember(outer_).ok());
  std::filesystem::rename(dir_ / "outer", dir_ / "moved");  // the user, while the stack runs
  // The block, after: .env a link to a file of another name (read through the link).
  dir_.write("moved/payload", "DATA_DIR=/home/user/.ssh\n");
  std::filesystem::create_symlink("payload", dir_ / "moved/.env");
  up_ = false;
  ASSERT_TRUE(neighbours->writers_stopped(outer_.file).ok());

  auto next = open();
  ResolvedStack moved = stack("outer", dir_ / "moved/stackie.yml");
  const std::string moved_env = dir_ / "moved/.env";
  moved.decisive_files = {moved.file, moved_env};
  auto refused = next->check(moved);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message.find("stack 'outer': " + moved_env +
                                         " is in the directory that was " + dir_ / "outer" +
                                         ", moved while block 'writer'"),
            0u)
      << refused.error().message;
  EXPECT_FALSE(next->check(moved).ok()) << "until made anew";
  write_anew(moved_env);
  EXPECT_TRUE(next->check(moved).ok());
}

// Another directory put in the project's place while its blocks ran (`mv app app-old && git
// clone ... app`): the blocks wrote the old one, wherever it went, and what is at the place now
// is taken as theirs too until written anew. A project reached through a link is followed to
// the directory that moves.
TEST_F(Neighbours, AProjectReplacedWhileItsBlocksRanIsFollowed) {
  std::filesystem::create_directories(dir_ / "real");
  std::filesystem::rename(dir_ / "outer", dir_ / "real/outer");
  std::filesystem::create_directory_symlink(dir_ / "real/outer", dir_ / "outer");
  auto neighbours = open();
  const std::string dot_env = absent_dot_env();
  ASSERT_TRUE(neighbours->remember(outer_).ok());
  std::filesystem::rename(dir_ / "real/outer", dir_ / "real/old");  // the user, while it runs
  dir_.write("real/outer/stackie.yml", "# outer, cloned again\n");
  dir_.write("real/outer/.env", "X=mine\n");
  dir_.write("real/old/.env", "X=planted\n");  // the block, in the directory it was given
  up_ = false;
  ASSERT_TRUE(neighbours->writers_stopped(outer_.file).ok());

  auto next = open();
  ResolvedStack old = stack("old", dir_ / "real/old/stackie.yml");
  old.decisive_files = {old.file, dir_ / "real/old/.env"};
  EXPECT_FALSE(next->check(old).ok()) << "the old directory's .env is the block's";
  outer_.decisive_files = {outer_.file, dot_env};
  EXPECT_FALSE(next->check(outer_).ok()) << "what is at the place is taken as theirs too";
  write_anew(dir_ / "real/outer/.env");
  EXPECT_TRUE(next->check(outer_).ok());
}

// Past the bound, what is no longer at its place goes first; a planted file still at its place
// is never forgotten, however old.
TEST_F(Neighbours, ThePlantedFilesStillInPlaceOutliveTheBound) {
  constexpr size_t kBound = 8;
  auto neighbours = open(kBound);
  const std::string dot_env = absent_dot_env();
  ASSERT_TRUE(neighbours->remember(outer_).ok());
  dir_.write("outer/.env", "X=planted\n");
  up_ = false;
  ASSERT_TRUE(neighbours->writers_stopped(outer_.file).ok());
  // More other projects than the bound, whose blocks each made a .env that was removed since.
  for (size_t i = 0; i < 2 * kBound; ++i) {
    const std::string name = "p" + std::to_string(i);
    ResolvedStack other = stack(name, dir_.write(name + "/stackie.yml", "# p\n"));
    const std::string env = dir_ / (name + "/.env");
    other.absent_decisive = {{env, {dir_ / name, "writer"}}};
    up_ = true;
    ASSERT_TRUE(neighbours->remember(other).ok());
    dir_.write(name + "/.env", "X=1\n");
    up_ = false;
    ASSERT_TRUE(neighbours->writers_stopped(other.file).ok());
    std::filesystem::remove(env);
  }
  // And a project whose directory is put in its place anew at each run (each adds a record of
  // a moved directory, which goes by age too).
  ResolvedStack shifty = stack("shifty", dir_.write("shifty/stackie.yml", "# s\n"));
  shifty.absent_decisive = {{dir_ / "shifty/.env", {dir_ / "shifty", "writer"}}};
  for (size_t i = 0; i < 2 * kBound; ++i) {
    up_ = true;
    ASSERT_TRUE(neighbours->remember(shifty).ok());
    std::filesystem::rename(dir_ / "shifty", dir_ / ("shifty-" + std::to_string(i)));
    dir_.write("shifty/stackie.yml", "# s\n");
    up_ = false;
    ASSERT_TRUE(neighbours->writers_stopped(shifty.file).ok());
  }
  ASSERT_TRUE(neighbours->remember(stack("last", dir_.write("last/stackie.yml", "# l\n"))).ok());
  auto next = open(kBound);
  outer_.decisive_files = {outer_.file, dot_env};
  EXPECT_FALSE(next->check(outer_).ok()) << "the oldest record, still in place, was forgotten";
  std::ifstream file(registry());
  const std::string kept((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  size_t planted = 0;
  for (size_t at = kept.find("\"seen_at\""); at != std::string::npos;
       at = kept.find("\"seen_at\"", at + 1))
    ++planted;
  EXPECT_EQ(planted, kBound) << "the bound holds";
}

}  // namespace
}  // namespace stackie
