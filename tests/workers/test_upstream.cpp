#include "tests/workers/test_upstream.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace dnsarena::test {

namespace {

using Bytes = std::vector<std::uint8_t>;

void put16(Bytes& b, unsigned v) {
  b.push_back(static_cast<std::uint8_t>(v >> 8));
  b.push_back(static_cast<std::uint8_t>(v));
}
void put32(Bytes& b, std::uint32_t v) {
  put16(b, v >> 16);
  put16(b, v & 0xFFFF);
}
Bytes wire(const std::string& dotted) {
  Bytes b;
  std::size_t start = 0;
  while (start < dotted.size()) {
    const std::size_t dot = dotted.find('.', start);
    const std::size_t end = dot == std::string::npos ? dotted.size() : dot;
    b.push_back(static_cast<std::uint8_t>(end - start));
    b.insert(b.end(), dotted.begin() + static_cast<long>(start), dotted.begin() + static_cast<long>(end));
    start = end + 1;
  }
  b.push_back(0);
  return b;
}
std::string lower_text(const std::uint8_t* n) {
  std::string s;
  while (*n) {
    for (unsigned i = 1; i <= *n; ++i) s.push_back(static_cast<char>(std::tolower(n[i])));
    s.push_back('.');
    n += *n + 1;
  }
  return s;
}

struct Rr {
  Bytes owner;  // empty: pointer to the question
  std::uint16_t type;
  std::uint32_t ttl;
  Bytes rdata;
};

void add_rr(Bytes& out, const Rr& r) {
  if (r.owner.empty()) put16(out, 0xC00C);
  else out.insert(out.end(), r.owner.begin(), r.owner.end());
  put16(out, r.type);
  put16(out, 1);
  put32(out, r.ttl);
  put16(out, static_cast<unsigned>(r.rdata.size()));
  out.insert(out.end(), r.rdata.begin(), r.rdata.end());
}

Rr soa() {
  Bytes rd = wire("ns.test.");
  const Bytes mbox = wire("hostmaster.test.");
  rd.insert(rd.end(), mbox.begin(), mbox.end());
  for (std::uint32_t v : {1u, 3600u, 600u, 86400u, 300u}) put32(rd, v);
  return {wire("test."), 6, 600, rd};
}

}  // namespace

TestUpstream::TestUpstream() {
  for (int* fd : {&fd_, &other_fd_}) {
    *fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (*fd < 0 || ::bind(*fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
      throw std::runtime_error("test upstream: cannot bind");
  }
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
  port_ = ntohs(a.sin_port);
  thread_ = std::thread([this] { loop(); });
}

TestUpstream::~TestUpstream() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
  ::close(other_fd_);
}

void TestUpstream::loop() {
  std::uint8_t buf[4096];
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    sockaddr_storage from{};
    socklen_t flen = sizeof from;
    const ssize_t n = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
    if (n < 17) continue;
    ++queries_;
    const UpstreamMode mode = mode_.load();
    if (mode == UpstreamMode::silent) continue;
    // Question (uncompressed, as dnsarena sends it).
    std::size_t pos = 12;
    while (pos < static_cast<std::size_t>(n) && buf[pos] != 0) pos += buf[pos] + 1u;
    const std::size_t qend = pos + 5;
    if (qend > static_cast<std::size_t>(n)) continue;
    const std::string qname = lower_text(buf + 12);
    const std::uint16_t qtype = static_cast<std::uint16_t>((buf[pos + 1] << 8) | buf[pos + 2]);
    // ECS option in the OPT record, if any: family, source, scope, address.
    bool has_ecs = false;
    std::uint8_t ecs_src = 0;
    std::uint8_t ecs_addr[4] = {0, 0, 0, 0};
    std::size_t opt = qend;
    if (opt + 11 <= static_cast<std::size_t>(n) && buf[opt] == 0 && buf[opt + 1] == 0 && buf[opt + 2] == 41) {
      std::size_t o = opt + 11;
      const std::size_t end = o + ((buf[opt + 9] << 8) | buf[opt + 10]);
      while (o + 4 <= end && end <= static_cast<std::size_t>(n)) {
        const unsigned code = (buf[o] << 8) | buf[o + 1], len = (buf[o + 2] << 8) | buf[o + 3];
        if (code == 8 && len >= 4 && buf[o + 5] == 1) {
          has_ecs = true;
          ecs_src = buf[o + 6];
          std::memcpy(ecs_addr, buf + o + 8, std::min<unsigned>(len - 4, 4));
        }
        o += 4 + len;
      }
    }

    std::vector<Rr> an, ns, ad;
    unsigned rcode = 0;
    if (qname == "a.test." && qtype == 1) {
      an.push_back({{}, 1, 300, {192, 0, 2, 1}});
      an.push_back({{}, 1, 300, {192, 0, 2, 2}});
      ad.push_back({wire("evil.example."), 1, 300, {6, 6, 6, 6}});  // out of bailiwick
    } else if (qname == "aaaa.test." && qtype == 28) {
      an.push_back({{}, 28, 300, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}});
    } else if (qname == "txt.test." && qtype == 16) {
      Bytes rd{14};
      const std::string s = "hello upstream";
      rd.insert(rd.end(), s.begin(), s.end());
      an.push_back({{}, 16, 300, rd});
    } else if (qname == "big.test." && qtype == 16) {
      for (int i = 0; i < 4; ++i) {
        Bytes rd{200};
        rd.insert(rd.end(), 200, static_cast<std::uint8_t>('a' + i));
        an.push_back({{}, 16, 300, rd});
      }
    } else if (qname == "cname.test." && qtype == 1) {
      an.push_back({{}, 5, 300, wire("target.test.")});
      an.push_back({wire("target.test."), 1, 300, {192, 0, 2, 9}});
    } else if (qname == "nodata.test.") {
      ns.push_back(soa());
    } else if (qname == "ecs.test." && qtype == 1) {
      an.push_back({{}, 1, 300, {10, ecs_addr[1], ecs_addr[2], 1}});
    } else {
      rcode = 3;
      ns.push_back(soa());
    }

    Bytes out;
    put16(out, (buf[0] << 8) | buf[1]);
    put16(out, 0x8000 | 0x0400 | (buf[2] & 0x01 ? 0x0100 : 0) | rcode);
    put16(out, 1);
    put16(out, static_cast<unsigned>(an.size()));
    put16(out, static_cast<unsigned>(ns.size()));
    put16(out, static_cast<unsigned>(ad.size() + 1));
    out.insert(out.end(), buf + 12, buf + qend);
    if (mode == UpstreamMode::wrong_question) out[12 + 1] ^= 0x01;  // first qname letter changes
    for (const auto& r : an) add_rr(out, r);
    for (const auto& r : ns) add_rr(out, r);
    for (const auto& r : ad) add_rr(out, r);
    // OPT, echoing ECS with scope /24.
    out.push_back(0);
    put16(out, 41);
    put16(out, 1232);
    put32(out, 0);
    if (has_ecs) {
      const unsigned abytes = (ecs_src + 7u) / 8u;
      put16(out, 8 + abytes);
      put16(out, 8);
      put16(out, 4 + abytes);
      put16(out, 1);
      out.push_back(ecs_src);
      out.push_back(ecs_src && qname == "ecs.test." ? 24 : 0);  // other names: scope 0
      out.insert(out.end(), ecs_addr, ecs_addr + abytes);
    } else {
      put16(out, 0);
    }
    if (mode == UpstreamMode::wrong_id) out[1] ^= 0x5A;
    const int send_fd = mode == UpstreamMode::wrong_port ? other_fd_ : fd_;
    ::sendto(send_fd, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
  }
}

}  // namespace dnsarena::test
