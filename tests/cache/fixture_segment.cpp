// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/cache/fixture_segment.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace dnsarena::test {

const FormatFixture& format_fixture(std::uint32_t version, unsigned expired) {
  for (const FormatFixture& f : kFormatFixtures)
    if (f.version == version && f.spec.expired == expired) return f;
  throw std::runtime_error("no fixture of format " + std::to_string(version) + " with " + std::to_string(expired) +
                           " expired entries in format_fixtures.hpp");
}

namespace {

std::vector<char> gunzip(const std::string& path) {
  gzFile in = ::gzopen(path.c_str(), "rb");
  if (!in) throw std::runtime_error("cannot open fixture " + path + ": " + std::strerror(errno));
  std::vector<char> out;
  char buf[1 << 16];
  int n = 0;
  while ((n = ::gzread(in, buf, sizeof buf)) > 0) out.insert(out.end(), buf, buf + n);
  int err = Z_OK;
  const std::string message = n < 0 ? ::gzerror(in, &err) : "";
  ::gzclose(in);
  if (n < 0) throw std::runtime_error("fixture " + path + " does not decompress: " + message);
  return out;
}

}  // namespace

std::size_t install_fixture_segment(const FormatFixture& f, const std::string& segment) {
  const std::vector<char> image = gunzip(std::string(DNSARENA_FIXTURE_DIR) + "/" + f.file);
  const std::string path = "/dev/shm/" + segment;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < image.size()) {
    const ssize_t w = ::write(fd, image.data() + done, image.size() - done);
    if (w <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(path.c_str());
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(w);
  }
  ::close(fd);
  return image.size();
}

}  // namespace dnsarena::test
