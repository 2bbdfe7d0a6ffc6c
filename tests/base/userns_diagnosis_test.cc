// base/userns_diagnosis.h: the lockbox's error and `stackie doctor` from the same facts.
#include "base/userns_diagnosis.h"

#include <gtest/gtest.h>

#include <cerrno>

namespace stackie {
namespace {

TEST(UsernsDiagnosis, NamesEachCauseAndItsFix) {
  UsernsFacts facts;
  facts.errnum = EPERM;
  facts.unprivileged_userns_clone = "0\n";
  EXPECT_NE(diagnose_userns_failure(facts).find("kernel.unprivileged_userns_clone=1"),
            std::string::npos);
  facts = {};
  facts.errnum = ENOSPC;
  facts.max_user_namespaces = "0\n";
  EXPECT_NE(diagnose_userns_failure(facts).find("user.max_user_namespaces=15000"),
            std::string::npos);
  facts = {};
  facts.errnum = EPERM;
  facts.apparmor_restrict = "1\n";
  EXPECT_NE(diagnose_userns_failure(facts).find("AppArmor"), std::string::npos);
  facts = {};
  facts.errnum = ENOSPC;
  facts.max_user_namespaces = "100";
  EXPECT_NE(diagnose_userns_failure(facts).find("(100) is reached"), std::string::npos);
  facts = {};
  facts.errnum = EPERM;
  EXPECT_NE(diagnose_userns_failure(facts).find("seccomp"), std::string::npos);
  facts.errnum = EINVAL;
  EXPECT_NE(diagnose_userns_failure(facts).find("CONFIG_USER_NS"), std::string::npos);
  for (int err : {EPERM, ENOSPC, EINVAL, EUSERS})
    EXPECT_NE(diagnose_userns_failure({err, {}, {}, {}}).find("fix:"), std::string::npos) << err;
}

TEST(UsernsDiagnosis, SysctlsSayWhichForbidsAndHowToLiftIt) {
  UsernsFacts facts;
  facts.errnum = EPERM;
  facts.unprivileged_userns_clone = "1\n";
  facts.max_user_namespaces = "15000\n";
  facts.apparmor_restrict = "1\n";
  auto sysctls = userns_sysctls(facts);
  ASSERT_EQ(sysctls.size(), 3u);
  EXPECT_EQ(sysctls[0].name, "kernel.unprivileged_userns_clone");
  EXPECT_EQ(sysctls[0].value, "1");
  EXPECT_FALSE(sysctls[0].forbids);
  EXPECT_FALSE(sysctls[1].forbids);
  EXPECT_TRUE(sysctls[2].forbids);
  // The doctor's fix and the lockbox's paragraph name the same command.
  EXPECT_NE(diagnose_userns_failure(facts).find(sysctls[2].fix), std::string::npos);
  EXPECT_EQ(userns_cause_and_fix(facts), sysctls[2].cause + ". fix: " + sysctls[2].fix);
  // Absent files are not listed (a kernel without the Debian patch has no userns_clone).
  EXPECT_TRUE(userns_sysctls({EPERM, {}, {}, {}}).empty());
}

}  // namespace
}  // namespace stackie
