// SPDX-License-Identifier: GPL-3.0-or-later
// Iterative resolution of one question from the root, as a state machine without I/O:
// need() says which query to send to which authoritative address next, provide() takes
// the reply (provide_failure(): a timeout, an unreachable server, a reply that did not
// parse or whose question differs), until need() says done and result() holds the answer.
// The caller owns sockets, timers, 0x20 and the source port, TC -> TCP and EDNS fallback;
// this class owns what to ask and what to believe. No clock, no randomness: the same
// replies give the same queries (the unit tests depend on it).
//
// What it does (RFC 1034 5.3.3, with RFC 8109 priming and RFC 9156 QNAME minimisation):
//   priming     when the store knows no root cut, ". NS" is asked of the hints' addresses
//               first; the root's NS set and its addresses (from the additional section)
//               become the root cut. A priming that fails falls back on the hints.
//   referrals   a reply without the answer, not authoritative, whose authority section
//               holds an NS set for a zone strictly below the current one and at or above
//               the name asked, is followed: the new cut is stored (store.learn).
//   glue        an A record of the additional section is used as a server's address only
//               when its owner is one of the referral's NS names and lies within the
//               zone of the server that sent it (its bailiwick): a server of com. cannot
//               give addresses for names under org.
//   glueless    when every known address of the cut has failed, an NS name without
//               addresses is resolved as a sub-resolution (its A set, from the closest
//               known cut), at most max_ns_lookups names per cut and
//               max_ns_lookups_total per resolution (NXNSAttack, CVE-2020-12667), at most
//               max_depth nested; a name under the cut's own zone is not
//               (only glue can give its address).
//   chains      CNAME and DNAME records in an answer are followed to the name they point
//               at, within the reply while the new name lies in the zone of the server
//               that sent it (records outside that zone are not believed), else resolved
//               anew from the closest known cut; at most max_chain links (the answer then is
//               SERVFAIL), a DNAME whose substitution exceeds 255 bytes gives YXDOMAIN.
//   minimising  with qname_minimisation, a cut is asked the name one label below its
//               zone (type A, as Unbound and Knot Resolver ask), then one label more each
//               time the reply shows no cut there (an answer or NODATA), until a referral
//               or the full name; at most kMaxMinimisedQueries per cut. Relaxed (RFC 9156
//               section 2.3, the default of Unbound and Knot Resolver): NXDOMAIN or an
//               error rcode for a minimised name makes the cut be asked the full name.
//   servers     the next address is the cut's untried one the caller ranks lowest
//               (use_servers, server_selection.hpp: RTT, timeouts and remembered
//               lameness are the caller's), else the first listed. An address whose
//               query got no reply in time (provide_failure(true)) may be slow rather
//               than dead: when every address of the cut has failed, each such one is
//               asked once more, before glueless names are resolved (the caller's next
//               attempt to it waits longer: its RTO backs off).
//   DS          a DS question goes to the cut above its name (the parent holds the set).
//   lameness    REFUSED, SERVFAIL, NOTIMP, FORMERR, an upward or sideways referral, or a
//               non-authoritative reply without a referral: that address is not asked
//               again in this cut; when none is left, SERVFAIL. REFUSED and the
//               non-authoritative non-referral are reported to the caller's selection
//               (lame for that zone, beyond this resolution).
//   budget      at most max_queries queries for the whole resolution, sub-resolutions and
//               priming included; past it the answer is SERVFAIL.
//
// Cost: the stack of tasks holds one frame per nested sub-resolution (max_depth + 2);
// each frame holds one cut. A reply costs one pass over its sections (RRsets already
// grouped by dnssec::parse_response).
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dnssec/rrset.hpp"
#include "recursion/delegation.hpp"
#include "recursion/server_selection.hpp"

namespace dnsarena::recursion {

struct Limits {
  unsigned max_queries = 32;     // per resolution, sub-resolutions and priming included
  unsigned max_ns_lookups = 5;   // glueless NS names resolved per cut (NXNSAttack)
  unsigned max_ns_lookups_total = 10;  // and per resolution, over every cut and chain link
  unsigned max_depth = 3;        // nested sub-resolutions
  unsigned max_chain = 12;       // CNAME and DNAME links followed
  unsigned max_referrals = 16;   // cuts descended per task
  bool qname_minimisation = true;
};

inline constexpr unsigned kMaxMinimisedQueries = 10;  // per cut, as RFC 9156 MAX_MINIMISE_COUNT

// One query to send.
struct Query {
  Bytes qname;  // wire, lowercase (the caller applies 0x20)
  std::uint16_t qtype = 0;
  ServerAddress server;
  Bytes zone;   // the cut the server serves (for logs and the caller's server state)
};

struct Result {
  std::uint16_t rcode = 2;                   // SERVFAIL until answered
  std::vector<dnssec::Rrset> answer;         // the chain (CNAME, DNAME) then the answer
  std::vector<dnssec::Rrset> authority;      // SOA of a negative answer; NSEC / NSEC3 proofs
                                             // (a denial's, a wildcard answer's) when sent
  std::string why;                           // for a SERVFAIL: which bound or failure
};

class IterativeResolution {
public:
  // REQUIRES: qname a valid uncompressed wire name; hints with at least one address.
  IterativeResolution(Bytes qname, std::uint16_t qtype, Delegation hints, DelegationStore& store, Limits limits = {});

  // The caller's server state (server_selection.hpp), which must outlive this object:
  // of the cut's addresses not yet failed, the lowest rank is asked next, ties in the
  // order the referral listed them. Without one (nullptr), that order alone.
  void use_servers(ServerSelection* servers) { servers_ = servers; }

  enum class Step { query, done };
  // The next query in `out`, or done.
  Step need(Query& out);
  // The reply to the query need() returned last.
  void provide(const dnssec::Response& reply);
  // That query got no usable reply; `no_reply`: none came in its time (it may be slow).
  void provide_failure(bool no_reply = false);

  const Result& result() const { return result_; }
  unsigned queries_sent() const { return queries_; }

private:
  struct Task {
    Bytes sname;  // the name resolved now (the question's, or a CNAME / DNAME target)
    std::uint16_t qtype = 0;
    bool priming = false;
    int for_server = -1;  // a sub-resolution: index of the NS name in the parent's cut
    Delegation cut;
    std::set<ServerAddress> failed;  // asked in this cut without a usable reply
    std::set<ServerAddress> no_reply;  // of those, timed out and not yet asked again
    std::set<ServerAddress> retried;   // asked again after a timeout (not a third time)
    std::set<Bytes> looked_up;       // NS names of this cut resolved or being resolved
    unsigned minimised_labels = 0;   // labels of the next minimised name; 0: the full name
    unsigned minimised_queries = 0;
    unsigned referrals = 0;
    unsigned links = 0;
    std::optional<Query> pending;
    bool done = false;
    Result result;
  };

  Task make_task(Bytes sname, std::uint16_t qtype) const;
  // The deepest known cut to ask t.sname of (for a DS set, the parent's), else the hints.
  Delegation closest_cut(const Task& t) const;
  void enter_cut(Task& t, Delegation cut) const;
  Bytes name_to_send(const Task& t) const;
  bool follow_referral(Task& t, const dnssec::Response& reply, const Bytes& sent);
  // Reads the answer section for t.sname; true when the task is finished or moved on.
  bool follow_answer(Task& t, const dnssec::Response& reply);
  void finish(Task& t, std::uint16_t rcode, std::string why = {});
  void fail_all(const std::string& why);
  // The pending query's server answered lamely for the cut: failed here, reported.
  void lame(Task& t, const ServerAddress& server);
  bool resolving_elsewhere(const Bytes& name) const;

  Delegation hints_;
  DelegationStore& store_;
  ServerSelection* servers_ = nullptr;
  Limits limits_;
  std::vector<Task> stack_;
  Result result_;
  unsigned queries_ = 0;
  unsigned ns_lookups_ = 0;  // sub-resolutions started
};

}  // namespace dnsarena::recursion
