// SPDX-License-Identifier: GPL-3.0-or-later
#include "workers/zone_transfer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>


#include <cerrno>
#include <cstring>
#include <random>

#include "common/monotonic_clock.hpp"
#include "dns/knot_packet.hpp"

namespace dnsarena::workers {

const char* to_string(TransferKind k) {
  switch (k) {
    case TransferKind::axfr: return "AXFR";
    case TransferKind::ixfr: return "IXFR";
    case TransferKind::up_to_date: return "up-to-date";
  }
  return "?";
}

namespace {

std::uint32_t u32_at(const XfrBytes& b, std::size_t pos) {
  return static_cast<std::uint32_t>(b[pos]) << 24 | static_cast<std::uint32_t>(b[pos + 1]) << 16 |
         static_cast<std::uint32_t>(b[pos + 2]) << 8 | b[pos + 3];
}

// A connected TCP socket, closed with this object.
class Stream {
public:
  Stream(const sockaddr* to, socklen_t len, std::uint64_t deadline_ms) : deadline_ms_(deadline_ms) {
    fd_ = ::socket(to->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw TransferError(std::string("socket: ") + std::strerror(errno));
    if (::connect(fd_, to, len) != 0 && errno != EINPROGRESS) fail("connect");
    wait(POLLOUT);
    int err = 0;
    socklen_t el = sizeof err;
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &el);
    if (err) {
      errno = err;
      fail("connect");
    }
  }
  ~Stream() { ::close(fd_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void send_all(const std::uint8_t* p, std::size_t n) {
    while (n > 0) {
      wait(POLLOUT);
      const ssize_t w = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (w < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (w <= 0) fail("send");
      p += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  // Reads exactly n bytes; false on a clean end of stream before the first byte.
  bool read_exact(std::uint8_t* p, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      wait(POLLIN);
      const ssize_t r = ::recv(fd_, p + got, n - got, 0);
      if (r < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (r < 0) fail("recv");
      if (r == 0) {
        if (got == 0) return false;
        throw TransferError("the primary closed the connection in the middle of a message");
      }
      got += static_cast<std::size_t>(r);
    }
    return true;
  }

private:
  void wait(short events) {
    for (;;) {
      const std::uint64_t now = common::monotonic_ms();
      if (now >= deadline_ms_) throw TransferError("timed out (timeout_ms)");
      pollfd p{fd_, events, 0};
      const int r = ::poll(&p, 1, static_cast<int>(std::min<std::uint64_t>(deadline_ms_ - now, 1000)));
      if (r > 0) return;
      if (r < 0 && errno != EINTR) fail("poll");
    }
  }
  [[noreturn]] void fail(const char* what) { throw TransferError(std::string(what) + ": " + std::strerror(errno)); }
  int fd_ = -1;
  std::uint64_t deadline_ms_;
};

struct PacketFree {
  void operator()(knot_pkt_t* p) const { knot_pkt_free(p); }
};
using Packet = std::unique_ptr<knot_pkt_t, PacketFree>;

bool newer(std::uint32_t a, std::uint32_t b) { return static_cast<std::int32_t>(a - b) > 0; }

// The query, signed when `key` is given (its MAC in `mac`).
XfrBytes build_query(const XfrBytes& zone, std::optional<std::uint32_t> have, const knot_tsig_key_t* key,
                     std::uint16_t id, std::uint8_t* mac, std::size_t& mac_len) {
  Packet q(knot_pkt_new(nullptr, 1024, nullptr));
  if (!q) throw TransferError("out of memory");
  knot_wire_set_id(q->wire, id);
  int rc = knot_pkt_put_question(q.get(), zone.data(), KNOT_CLASS_IN, have ? KNOT_RRTYPE_IXFR : KNOT_RRTYPE_AXFR);
  if (rc == KNOT_EOK && have) {
    // RFC 1995 section 3: the client's SOA in the authority section; only the serial counts.
    rc = knot_pkt_begin(q.get(), KNOT_AUTHORITY);
    knot_rrset_t soa;
    knot_rrset_init(&soa, knot_dname_copy(zone.data(), nullptr), KNOT_RRTYPE_SOA, KNOT_CLASS_IN, 0);
    std::uint8_t rd[22] = {};  // root mname, root rname, serial, four zero timers
    knot_wire_write_u32(rd + 2, *have);
    if (rc == KNOT_EOK) rc = knot_rrset_add_rdata(&soa, rd, sizeof rd, nullptr);
    if (rc == KNOT_EOK) rc = knot_pkt_put(q.get(), KNOT_COMPR_HINT_NONE, &soa, KNOT_PF_FREE);
    else knot_rrset_clear(&soa, nullptr);
  }
  if (rc != KNOT_EOK) throw TransferError(std::string("cannot build the query: ") + knot_strerror(rc));
  std::size_t size = q->size;
  if (key) {
    rc = knot_tsig_sign(q->wire, &size, q->max_size, nullptr, 0, mac, &mac_len, key, 0, 0);
    if (rc != KNOT_EOK) throw TransferError(std::string("cannot sign the query: ") + knot_strerror(rc));
  }
  return XfrBytes(q->wire, size);
}

std::string rcode_text(unsigned rcode) {
  const knot_lookup_t* l = knot_lookup_by_id(knot_rcode_names, static_cast<int>(rcode));
  return l ? l->name : std::to_string(rcode);
}

// Turns the reply's records into a TransferResult (the state machine of the header).
class ReplyReader {
public:
  ReplyReader(std::optional<std::uint32_t> have, const TransferLimits& limits) : have_(have), limits_(limits) {}

  void add(ZoneRecord r) {
    if (state_ == State::done) throw TransferError("records after the final SOA");
    if (++count_ > limits_.max_records)
      throw TransferError("more than " + std::to_string(limits_.max_records) + " records (max_records)");
    const bool soa = r.type == KNOT_RRTYPE_SOA;
    if (soa && r.rdata.size() < 20) throw TransferError("a SOA record too short");
    switch (state_) {
      case State::first:
        if (!soa) throw TransferError("the reply does not start with the zone's SOA");
        res_.serial = soa_serial(r.rdata);
        res_.soa = r;
        state_ = State::second;
        return;
      case State::second:
        if (have_ && soa && soa_serial(r.rdata) == *have_ && newer(res_.serial, *have_)) {
          res_.kind = TransferKind::ixfr;
          res_.deltas.push_back({*have_, 0, {}, {}});
          state_ = State::removed;
          return;
        }
        res_.kind = TransferKind::axfr;
        res_.records.push_back(res_.soa);
        state_ = State::whole;
        [[fallthrough]];
      case State::whole:
        if (soa) {
          if (soa_serial(r.rdata) != res_.serial) throw TransferError("the closing SOA's serial differs from the first");
          state_ = State::done;
        } else {
          res_.records.push_back(std::move(r));
        }
        return;
      case State::removed:
        if (soa) {
          res_.deltas.back().to = soa_serial(r.rdata);
          state_ = State::added;
        } else {
          res_.deltas.back().removed.push_back(std::move(r));
        }
        return;
      case State::added:
        if (!soa) {
          res_.deltas.back().added.push_back(std::move(r));
          return;
        }
        if (soa_serial(r.rdata) == res_.serial) {
          if (res_.deltas.back().to != res_.serial) throw TransferError("the last IXFR delta does not end at the new serial");
          state_ = State::done;
          return;
        }
        if (soa_serial(r.rdata) != res_.deltas.back().to) throw TransferError("IXFR deltas do not chain");
        res_.deltas.push_back({soa_serial(r.rdata), 0, {}, {}});
        state_ = State::removed;
        return;
      case State::done: return;
    }
  }
  // At the end of a message: true when the transfer is complete.
  bool complete() {
    if (state_ == State::done) return true;
    // A lone SOA not newer than ours: nothing to transfer (RFC 1995 section 2).
    if (state_ == State::second && have_ && !newer(res_.serial, *have_)) {
      res_.kind = TransferKind::up_to_date;
      return true;
    }
    return false;
  }
  TransferResult& result() { return res_; }
  std::uint64_t count() const { return count_; }

private:
  enum class State { first, second, whole, removed, added, done };
  State state_ = State::first;
  std::optional<std::uint32_t> have_;
  const TransferLimits& limits_;
  TransferResult res_;
  std::uint64_t count_ = 0;
};

}  // namespace

std::uint32_t soa_serial(const XfrBytes& rdata) { return u32_at(rdata, rdata.size() - 20); }
std::uint32_t soa_refresh(const XfrBytes& rdata) { return u32_at(rdata, rdata.size() - 16); }
std::uint32_t soa_retry(const XfrBytes& rdata) { return u32_at(rdata, rdata.size() - 12); }

TransferResult transfer_zone(const sockaddr* primary, socklen_t len, const XfrBytes& zone,
                             std::optional<std::uint32_t> have_serial, const knot_tsig_key_t* key,
                             const TransferLimits& limits) {
  const std::uint64_t deadline = common::monotonic_ms() + limits.timeout_ms;
  std::random_device random;
  const auto id = static_cast<std::uint16_t>(random());
  std::uint8_t mac[kMaxTsigDigest];
  std::size_t mac_len = sizeof mac;
  const XfrBytes query = build_query(zone, have_serial, key, id, mac, mac_len);
  XfrBytes prev_mac(mac, key ? mac_len : 0);

  Stream s(primary, len, deadline);
  std::uint8_t prefix[2] = {static_cast<std::uint8_t>(query.size() >> 8), static_cast<std::uint8_t>(query.size())};
  XfrBytes out(prefix, 2);
  out += query;
  s.send_all(out.data(), out.size());

  ReplyReader reader(have_serial, limits);
  std::uint64_t bytes = 0, messages = 0;
  std::vector<std::uint8_t> buf;
  for (;;) {
    std::uint8_t lp[2];
    if (!s.read_exact(lp, 2))
      throw TransferError("the primary closed the connection after " + std::to_string(reader.count()) +
                          " records, before the transfer ended");
    const std::size_t n = static_cast<std::size_t>(lp[0]) << 8 | lp[1];
    bytes += n + 2;
    if (bytes > limits.max_bytes)
      throw TransferError("more than " + std::to_string(limits.max_bytes) + " bytes (max_bytes)");
    buf.resize(n);
    if (!s.read_exact(buf.data(), n)) throw TransferError("the primary closed the connection after a length");
    ++messages;
    Packet m(knot_pkt_new(buf.data(), n, nullptr));
    if (!m) throw TransferError("out of memory");
    int rc = knot_pkt_parse(m.get(), 0);
    if (rc != KNOT_EOK) throw TransferError(std::string("a malformed message: ") + knot_strerror(rc));
    if (knot_wire_get_id(m->wire) != id || !knot_wire_get_qr(m->wire))
      throw TransferError("a message that does not answer the query");
    const unsigned rcode = knot_wire_get_rcode(m->wire);
    if (rcode != KNOT_RCODE_NOERROR) {
      std::string what = "the primary answered " + rcode_text(rcode);
      if (m->tsig_rr && knot_tsig_rdata_error(m->tsig_rr))
        what += " (TSIG " + rcode_text(knot_tsig_rdata_error(m->tsig_rr)) + ")";
      throw TransferError(what);
    }
    if (key) {
      if (!m->tsig_rr) throw TransferError("message " + std::to_string(messages) + " is not signed (TSIG)");
      rc = messages == 1 ? knot_tsig_client_check(m->tsig_rr, m->wire, m->size, prev_mac.data(), prev_mac.size(), key, 0)
                         : knot_tsig_client_check_next(m->tsig_rr, m->wire, m->size, prev_mac.data(), prev_mac.size(),
                                                       key, 0);
      if (rc != KNOT_EOK) throw TransferError(std::string("TSIG of message ") + std::to_string(messages) +
                                              " does not verify: " + knot_strerror(rc));
      prev_mac.assign(knot_tsig_rdata_mac(m->tsig_rr), knot_tsig_rdata_mac_length(m->tsig_rr));
    }
    const knot_pktsection_t* an = knot_pkt_section(m.get(), KNOT_ANSWER);
    for (std::uint16_t i = 0; i < an->count; ++i) {
      const knot_rrset_t* rr = knot_pkt_rr(an, i);
      if (rr->rclass != KNOT_CLASS_IN) continue;
      XfrBytes owner(rr->owner, knot_dname_size(rr->owner));
      knot_dname_to_lower(owner.data());
      const knot_rdata_t* rd = rr->rrs.rdata;
      for (std::uint16_t j = 0; j < rr->rrs.count; ++j, rd = knot_rdataset_next(const_cast<knot_rdata_t*>(rd)))
        reader.add({owner, rr->type, rr->ttl, XfrBytes(rd->data, rd->len)});
    }
    if (reader.complete()) break;
  }
  TransferResult res = std::move(reader.result());
  res.bytes = bytes;
  res.messages = messages;
  return res;
}

}  // namespace dnsarena::workers
