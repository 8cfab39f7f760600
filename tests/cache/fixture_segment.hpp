// SPDX-License-Identifier: GPL-3.0-or-later
// Puts a committed old-format image (fixtures/format_fixtures.hpp) where a segment of
// that name lives, /dev/shm/<name>, owned by this user with mode 0600 as
// Segment::create makes them, so that `serve`, `migrate` or Segment::open find it as
// the old build left it.
#pragma once
#include <cstddef>
#include <string>

#include "tests/cache/fixtures/format_fixtures.hpp"

namespace dnsarena::test {

// The first fixture of `version` whose spec has `expired` expired entries; throws
// std::runtime_error when format_fixtures.hpp lists none.
const FormatFixture& format_fixture(std::uint32_t version, unsigned expired);

// Decompresses tests/cache/fixtures/<f.file> into the new object /dev/shm/<segment>
// (which must not exist). Returns the image's size; throws std::runtime_error on failure.
std::size_t install_fixture_segment(const FormatFixture& f, const std::string& segment);

}  // namespace dnsarena::test
