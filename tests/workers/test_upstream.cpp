// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/workers/test_upstream.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
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

// A fake RRSIG over `covered` signed by "test." (the signature bytes mean nothing: the
// cache never validates, it only has to keep and return them).
Rr rrsig(const Bytes& owner, std::uint16_t covered, std::uint32_t ttl) {
  Bytes rd;
  put16(rd, covered);
  rd.push_back(13);  // algorithm
  rd.push_back(2);   // labels
  put32(rd, ttl);
  put32(rd, 2000000000u);  // expiration
  put32(rd, 1700000000u);  // inception
  put16(rd, 4242);         // key tag
  const Bytes signer = wire("test.");
  rd.insert(rd.end(), signer.begin(), signer.end());
  rd.insert(rd.end(), 64, 0xAB);
  return {owner, 46, ttl, rd};
}

Bytes txt_string(std::size_t len, char fill) {
  Bytes rd{static_cast<std::uint8_t>(len)};
  rd.insert(rd.end(), len, static_cast<std::uint8_t>(fill));
  return rd;
}

// The query's parts the responder looks at.
struct Question {
  std::size_t end = 0;  // offset after QCLASS
  std::string qname;    // lowercase, dotted, trailing dot
  std::uint16_t qtype = 0;
  bool edns = false;
  bool do_bit = false;
  std::size_t udp_size = 512;
  bool has_ecs = false;
  std::uint8_t ecs_src = 0;
  std::uint8_t ecs_addr[4] = {0, 0, 0, 0};
};

bool read_question(const std::uint8_t* buf, std::size_t n, Question& q) {
  if (n < 17) return false;
  std::size_t pos = 12;
  while (pos < n && buf[pos] != 0) pos += buf[pos] + 1u;
  q.end = pos + 5;
  if (q.end > n) return false;
  q.qname = lower_text(buf + 12);
  q.qtype = static_cast<std::uint16_t>((buf[pos + 1] << 8) | buf[pos + 2]);
  const std::size_t opt = q.end;
  if (opt + 11 <= n && buf[opt] == 0 && buf[opt + 1] == 0 && buf[opt + 2] == 41) {
    q.edns = true;
    q.udp_size = std::max<std::size_t>(512, (buf[opt + 3] << 8) | buf[opt + 4]);
    q.do_bit = (buf[opt + 7] & 0x80) != 0;
    std::size_t o = opt + 11;
    const std::size_t end = o + ((buf[opt + 9] << 8) | buf[opt + 10]);
    while (o + 4 <= end && end <= n) {
      const unsigned code = (buf[o] << 8) | buf[o + 1], len = (buf[o + 2] << 8) | buf[o + 3];
      if (code == 8 && len >= 4 && buf[o + 5] == 1) {
        q.has_ecs = true;
        q.ecs_src = buf[o + 6];
        std::memcpy(q.ecs_addr, buf + o + 8, std::min<unsigned>(len - 4, 4));
      }
      o += 4 + len;
    }
  }
  return true;
}

struct Zone {
  std::vector<Rr> an, ns, ad;
  unsigned rcode = 0;
  bool authentic = false;  // the AD bit: what a validating resolver upstream would claim
};

// The records of the fixed zone for `q` (see the table in test_upstream.hpp).
Zone lookup(const Question& q) {
  Zone z;
  const std::string& name = q.qname;
  const std::uint16_t qtype = q.qtype;
  if (name == "a.test." && qtype == 1) {
    z.an.push_back({{}, 1, 300, {192, 0, 2, 1}});
    z.an.push_back({{}, 1, 300, {192, 0, 2, 2}});
    z.ad.push_back({wire("evil.example."), 1, 300, {6, 6, 6, 6}});  // out of bailiwick
  } else if (name == "aaaa.test." && qtype == 28) {
    z.an.push_back({{}, 28, 300, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}});
  } else if (name == "txt.test." && qtype == 16) {
    Bytes rd{14};
    const std::string t = "hello upstream";
    rd.insert(rd.end(), t.begin(), t.end());
    z.an.push_back({{}, 16, 300, rd});
  } else if (name == "big.test." && qtype == 16) {
    for (int i = 0; i < 4; ++i) z.an.push_back({{}, 16, 300, txt_string(200, static_cast<char>('a' + i))});
  } else if (name == "huge.test." && qtype == 16) {
    for (int i = 0; i < 10; ++i) z.an.push_back({{}, 16, 300, txt_string(200, static_cast<char>('a' + i))});
  } else if (name == "cname.test." && (qtype == 1 || qtype == 255)) {
    z.an.push_back({{}, 5, 300, wire("target.test.")});
    if (qtype == 1) z.an.push_back({wire("target.test."), 1, 300, {192, 0, 2, 9}});
  } else if (name == "ad.test." && qtype == 1) {
    z.an.push_back({{}, 1, 300, {192, 0, 2, 13}});
    z.authentic = true;
  } else if (name == "multi.test." && qtype == 255) {  // every RRset of the name
    z.an.push_back({{}, 1, 300, {192, 0, 2, 31}});
    z.an.push_back({{}, 1, 300, {192, 0, 2, 32}});
    z.an.push_back({{}, 28, 300, {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x31}});
    z.an.push_back({{}, 16, 300, txt_string(100, 'm')});
  } else if (name == "chain.test." && qtype == 1) {
    z.an.push_back({{}, 5, 300, wire("c2.test.")});
    z.an.push_back({wire("c2.test."), 5, 1, wire("h.test.")});
    z.an.push_back({wire("h.test."), 1, 300, {192, 0, 2, 8}});
  } else if (name == "negchain.test.") {
    z.rcode = 3;
    z.an.push_back({{}, 5, 300, wire("n2.test.")});
    z.an.push_back({wire("n2.test."), 5, 1, wire("n3.test.")});
    z.ns.push_back(soa());
  } else if (name == "nosoa.test.") {
    z.rcode = 3;  // no SOA: nothing to cache it by (RFC 2308 5)
  } else if (name == "zero.test." && qtype == 1) {
    z.an.push_back({{}, 1, 0, {192, 0, 2, 10}});
  } else if (name == "zeroauth.test." && qtype == 1) {
    z.an.push_back({{}, 1, 300, {192, 0, 2, 11}});
    z.ns.push_back({wire("test."), 2, 0, wire("ns.test.")});
  } else if (name == "hugettl.test." && qtype == 1) {
    z.an.push_back({{}, 1, 0x80000000u, {192, 0, 2, 12}});
  } else if (name == "bignx.test.") {
    z.rcode = 3;
    const std::string l60(60, 'x');
    Bytes owner;  // empty: the qname
    for (char c = 'a'; c < 'f'; ++c) {  // 5 links to distinct long names: > 1232 bytes
      const Bytes target = wire(std::string(1, c) + l60 + ".b" + l60 + ".c" + l60 + ".test.");
      z.an.push_back({owner, 5, 300, target});
      owner = target;
    }
    z.ns.push_back(soa());
  } else if (name == "out.test." && qtype == 1) {
    z.an.push_back({{}, 5, 300, wire("elsewhere.example.")});
  } else if (name == "x.deleg.test.") {
    z.ns.push_back({wire("deleg.test."), 2, 300, wire("ns.deleg.test.")});
    z.ad.push_back({wire("ns.deleg.test."), 1, 300, {192, 0, 2, 53}});
  } else if (name == "signed.test.") {
    z.rcode = 3;
    z.ns.push_back(soa());
    if (q.do_bit) {
      z.ns.push_back(rrsig(wire("test."), 6, 600));
      Bytes next = wire("target.test.");
      next.insert(next.end(), {0, 1, 0x40});  // window 0: A
      z.ns.push_back({wire("a.test."), 47, 300, next});
      z.ns.push_back(rrsig(wire("a.test."), 47, 300));
    }
  } else if (name == "x.dname.test." && qtype == 1) {
    z.an.push_back({wire("dname.test."), 39, 300, wire("target.test.")});
    if (q.do_bit) z.an.push_back(rrsig(wire("dname.test."), 39, 300));
    z.an.push_back({{}, 5, 300, wire("x.target.test.")});
    z.an.push_back({wire("x.target.test."), 1, 300, {192, 0, 2, 77}});
  } else if (name == "nodata.test.") {
    z.ns.push_back(soa());
  } else if (name == "ecs.test." && qtype == 1) {
    z.an.push_back({{}, 1, 300, {10, q.ecs_addr[1], q.ecs_addr[2], 1}});
  } else if (qtype == 1 && name.size() > 10 && name.ends_with(".host.test.")) {
    z.an.push_back({{}, 1, 300, {192, 0, 2, 100}});
  } else {
    z.rcode = 3;
    z.ns.push_back(soa());
  }
  return z;
}

// The reply to the query in buf (empty: none). Over UDP an answer over the client's size
// is truncated to header, question and OPT with TC, as Knot does.
Bytes build_reply(const std::uint8_t* buf, std::size_t n, UpstreamMode mode, bool tcp) {
  Question q;
  if (!read_question(buf, n, q)) return {};
  const Zone z = lookup(q);
  const bool referral = z.an.empty() && !z.ns.empty() && z.ns[0].type == 2;
  Bytes out;
  put16(out, (buf[0] << 8) | buf[1]);
  put16(out, 0x8000 | (referral ? 0 : 0x0400) | (buf[2] & 0x01 ? 0x0100 : 0) | (z.authentic ? 0x0020 : 0) | z.rcode);
  put16(out, 1);
  put16(out, static_cast<unsigned>(z.an.size()));
  put16(out, static_cast<unsigned>(z.ns.size()));
  put16(out, static_cast<unsigned>(z.ad.size() + 1));
  out.insert(out.end(), buf + 12, buf + q.end);
  if (mode == UpstreamMode::wrong_question) out[12 + 1] ^= 0x01;  // first qname letter changes
  if (mode == UpstreamMode::lowercase_echo)
    for (std::size_t i = 12; i < q.end - 4; ++i) out[i] = static_cast<std::uint8_t>(std::tolower(out[i]));
  for (const auto& r : z.an) add_rr(out, r);
  for (const auto& r : z.ns) add_rr(out, r);
  for (const auto& r : z.ad) add_rr(out, r);
  Bytes opt;
  opt.push_back(0);
  put16(opt, 41);
  put16(opt, 1232);
  put32(opt, q.do_bit ? 0x8000u : 0u);
  if (q.has_ecs) {  // echo ECS with scope /24 for ecs.test., 0 for other names
    const unsigned abytes = (q.ecs_src + 7u) / 8u;
    put16(opt, 8 + abytes);
    put16(opt, 8);
    put16(opt, 4 + abytes);
    put16(opt, 1);
    opt.push_back(q.ecs_src);
    opt.push_back(q.ecs_src && q.qname == "ecs.test." ? 24 : 0);
    opt.insert(opt.end(), q.ecs_addr, q.ecs_addr + abytes);
  } else {
    put16(opt, 0);
  }
  if (!tcp && out.size() + opt.size() > q.udp_size) {
    out.resize(q.end);
    out[2] |= 0x02;  // TC
    for (int i = 6; i < 10; ++i) out[i] = 0;  // ANCOUNT, NSCOUNT
    out[11] = 1;                               // ARCOUNT: the OPT alone
  }
  out.insert(out.end(), opt.begin(), opt.end());
  if (mode == UpstreamMode::wrong_id) out[1] ^= 0x5A;
  return out;
}

// The delay a name asks for with its first label (test_upstream.hpp): slow<N> and
// once<N> (N ms, digits up to the first non-digit); 0 and false for other names.
struct NameDelay {
  std::chrono::milliseconds delay{0};
  bool once = false;
};
NameDelay name_delay(const std::string& lower_name) {
  NameDelay d;
  std::size_t pos = 0;
  if (lower_name.starts_with("slow")) pos = 4;
  else if (lower_name.starts_with("once")) pos = 4, d.once = true;
  else return d;
  unsigned ms = 0;
  std::size_t digits = 0;
  while (pos < lower_name.size() && digits < 6 && lower_name[pos] >= '0' && lower_name[pos] <= '9') {
    ms = ms * 10 + static_cast<unsigned>(lower_name[pos++] - '0');
    ++digits;
  }
  if (digits == 0) return {};
  d.delay = std::chrono::milliseconds(ms);
  return d;
}

}  // namespace

namespace {

int bound_socket(int type, std::uint16_t port) {
  const int fd = ::socket(AF_INET, type | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (fd >= 0 && type == SOCK_STREAM) {
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  }
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      (type == SOCK_STREAM && ::listen(fd, 16) != 0)) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

std::uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

}  // namespace

TestUpstream::TestUpstream() {
  other_fd_ = bound_socket(SOCK_DGRAM, 0);
  // A port free for UDP and TCP alike: the kernel picks the UDP one, TCP may hold it.
  for (int tries = 0; tries < 100 && tcp_fd_ < 0; ++tries) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = bound_socket(SOCK_DGRAM, 0);
    if (fd_ >= 0) tcp_fd_ = bound_socket(SOCK_STREAM, port_of(fd_));
  }
  if (other_fd_ < 0 || fd_ < 0 || tcp_fd_ < 0) throw std::runtime_error("test upstream: cannot bind UDP and TCP");
  port_ = port_of(fd_);
  thread_ = std::thread([this] { loop(); });
}

TestUpstream::~TestUpstream() {
  stop_ = true;
  thread_.join();
  ::close(fd_);
  ::close(other_fd_);
  ::close(tcp_fd_);
}

std::vector<std::string> TestUpstream::names_received() const {
  std::lock_guard<std::mutex> lock(names_mutex_);
  return names_received_;
}

bool TestUpstream::record(const std::uint8_t* query, std::size_t len) {
  std::string name;
  for (std::size_t pos = 12; pos < len && query[pos] != 0 && pos + 1 + query[pos] <= len; pos += query[pos] + 1u) {
    name.append(reinterpret_cast<const char*>(query + pos + 1), query[pos]);
    name.push_back('.');
  }
  {
    std::lock_guard<std::mutex> lock(names_mutex_);
    names_received_.push_back(name);
  }
  if (mode_.load() != UpstreamMode::drop_first) return true;
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return !dropped_once_.insert(lower).second;  // the first time: drop
}

// One connection, served to its end (or for 2 s): length-prefixed queries, answers whole.
void TestUpstream::serve_tcp_connection(int conn) {
  Bytes in;
  for (int idle = 0; idle < 40 && !stop_;) {
    pollfd p{conn, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) {
      ++idle;
      continue;
    }
    std::uint8_t buf[4096];
    const ssize_t n = ::recv(conn, buf, sizeof buf, 0);
    if (n <= 0) break;
    in.insert(in.end(), buf, buf + n);
    while (in.size() >= 2 && in.size() >= 2u + ((in[0] << 8) | in[1])) {
      const std::size_t len = (in[0] << 8) | in[1];
      ++queries_;
      ++tcp_queries_;
      const UpstreamMode mode = mode_.load();
      const bool answer = record(in.data() + 2, len) && mode != UpstreamMode::silent;
      const Bytes reply = answer ? build_reply(in.data() + 2, len, mode, true) : Bytes{};
      in.erase(in.begin(), in.begin() + static_cast<long>(2 + len));
      if (reply.empty()) continue;
      Bytes framed;
      put16(framed, static_cast<unsigned>(reply.size()));
      framed.insert(framed.end(), reply.begin(), reply.end());
      ::send(conn, framed.data(), framed.size(), MSG_NOSIGNAL);
    }
  }
  ::close(conn);
}

void TestUpstream::loop() {
  std::uint8_t buf[4096];
  // Replies held back by a slow<N>/once<N> name: sent when due, in due order.
  struct Held {
    std::chrono::steady_clock::time_point due;
    sockaddr_storage to;
    socklen_t to_len;
    Bytes reply;
  };
  std::vector<Held> held;
  std::set<std::string> answered_once;  // once<N> names already answered
  while (!stop_) {
    const auto now = std::chrono::steady_clock::now();
    for (auto it = held.begin(); it != held.end();) {
      if (it->due > now) {
        ++it;
        continue;
      }
      ::sendto(fd_, it->reply.data(), it->reply.size(), 0, reinterpret_cast<sockaddr*>(&it->to), it->to_len);
      it = held.erase(it);
    }
    int wait_ms = 50;
    for (const Held& h : held)
      wait_ms = std::min<int>(wait_ms, static_cast<int>(std::max<std::int64_t>(
                                           0, std::chrono::ceil<std::chrono::milliseconds>(h.due - now).count())));
    pollfd p[2] = {{fd_, POLLIN, 0}, {tcp_fd_, POLLIN, 0}};
    if (::poll(p, 2, wait_ms) <= 0) continue;
    if (p[1].revents & POLLIN) {
      const int conn = ::accept4(tcp_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn >= 0) serve_tcp_connection(conn);
    }
    if (!(p[0].revents & POLLIN)) continue;
    sockaddr_storage from{};
    socklen_t flen = sizeof from;
    const ssize_t n = ::recvfrom(fd_, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &flen);
    if (n < 17) continue;
    ++queries_;
    const UpstreamMode mode = mode_.load();
    if (!record(buf, static_cast<std::size_t>(n)) || mode == UpstreamMode::silent) continue;
    Bytes out = build_reply(buf, static_cast<std::size_t>(n), mode, false);
    if (out.empty()) continue;
    Question q;
    if (mode == UpstreamMode::normal && read_question(buf, static_cast<std::size_t>(n), q))
      if (const NameDelay d = name_delay(q.qname); d.delay.count() > 0) {
        if (d.once && !answered_once.insert(q.qname).second) continue;  // a retry of a once<N> name: no reply
        held.push_back({std::chrono::steady_clock::now() + d.delay, from, flen, std::move(out)});
        continue;
      }
    if (const auto delay = std::chrono::microseconds(delay_us_.load()); delay.count() > 0)
      std::this_thread::sleep_for(delay);  // one query at a time: for sequential clients
    const int send_fd = mode == UpstreamMode::wrong_port ? other_fd_ : fd_;
    ::sendto(send_fd, out.data(), out.size(), 0, reinterpret_cast<sockaddr*>(&from), flen);
  }
}

}  // namespace dnsarena::test
