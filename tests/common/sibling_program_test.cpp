// SPDX-License-Identifier: GPL-3.0-or-later
// common/sibling_program: the lab finds the daemon beside itself first, then on PATH, and
// says where it looked when neither has it.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "common/child_process.hpp"
#include "common/sibling_program.hpp"

namespace {

namespace fs = std::filesystem;
using dnsarena::common::find_sibling_program;

// A scratch directory removed at the end of the test case.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    char tmpl[] = "/tmp/dnsarena-sibling-XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~ScratchDir() { fs::remove_all(path); }
  std::string file(const std::string& name, mode_t mode) const {
    const std::string p = (path / name).string();
    std::ofstream(p) << "#!/bin/sh\n";
    ::chmod(p.c_str(), mode);
    return p;
  }
};

// Sets PATH for one scope and restores it.
struct PathFor {
  std::string saved;
  bool had;
  explicit PathFor(const std::string& value) {
    const char* p = std::getenv("PATH");
    had = p != nullptr;
    if (had) saved = p;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~PathFor() {
    if (had) ::setenv("PATH", saved.c_str(), 1);
    else ::unsetenv("PATH");
  }
};

}  // namespace

TEST_CASE("a sibling program beside the running one wins over PATH", "[common][sibling]") {
  ScratchDir beside, on_path;
  const std::string here = beside.file("prog", 0755);
  on_path.file("prog", 0755);
  PathFor path(on_path.path.string());
  CHECK(find_sibling_program("prog", beside.path.string()) == here);
}

TEST_CASE("a sibling program absent or not executable beside is taken from PATH", "[common][sibling]") {
  ScratchDir beside, on_path;
  beside.file("prog", 0644);
  const std::string there = on_path.file("prog", 0755);
  PathFor path(on_path.path.string());
  CHECK(find_sibling_program("prog", beside.path.string()) == there);
  CHECK(find_sibling_program("prog", (beside.path / "missing").string()) == there);
}

TEST_CASE("a missing sibling program is an error naming where it was looked for", "[common][sibling]") {
  ScratchDir beside, empty;
  PathFor path(empty.path.string());
  try {
    find_sibling_program("prog", beside.path.string());
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    CHECK(what.find((beside.path / "prog").string()) != std::string::npos);
    CHECK(what.find(empty.path.string()) != std::string::npos);
  }
  CHECK_THROWS_AS(find_sibling_program("dir/prog", beside.path.string()), std::invalid_argument);
}

TEST_CASE("sibling_program looks in the running program's directory", "[common][sibling]") {
  const std::string self = dnsarena::common::self_executable();
  const std::string name = self.substr(self.rfind('/') + 1);
  PathFor path("");
  CHECK(dnsarena::common::sibling_program(name) == self);
}
