// SPDX-License-Identifier: GPL-3.0-or-later
// One worker's dnstap output (https://dnstap.info): DNS messages as they are received
// and sent, encoded in the public schema (dnstap.proto) by dnstap_encoder.hpp, and written
// as Frame Streams (libfstrm) to a unix socket or a file.
//
// Message types and what each carries (the schema's Message fields):
//   CLIENT_QUERY        a client's query: query_address/port (the client),
//                       response_address/port (the address it asked: over UDP the listen
//                       address, on a wildcard the one the datagram was sent to; over TCP,
//                       DoT and DoH the connection's local address), socket_family,
//                       socket_protocol UDP|TCP|DOT|DOH, query_time, query_message
//   CLIENT_RESPONSE     the answer sent to it: the same addresses, query_time when the
//                       query came in the same batch, response_time, response_message,
//                       and policy when the answer was one (below)
//   FORWARDER_QUERY     a query to an upstream: response_address/port (the upstream),
//                       protocol (UDP, TCP, or DOT for a zone's tls transport), query_time,
//                       query_message, query_zone (the forward zone)
//   FORWARDER_RESPONSE  every reply read from an upstream (accepted or not): the same, with
//                       query_time (the send's, as the upstream client's monotonic clock
//                       places it before now), response_time and response_message
//
// Policy (the schema's Policy message, field 15 of a CLIENT_RESPONSE):
//   a policy answer     type "policy zone N" (N: the policy zone's index, in the order
//                       serve logs them: the config's local zone, the default local
//                       zones, then each RPZ file), rule: the trigger in wire form ("*."
//                       first for a wildcard trigger), action NXDOMAIN, NODATA or
//                       LOCAL_DATA (none for REFUSED, which the schema lacks), match QNAME,
//                       value: the query name as asked
//   a stale answer      type "serve-stale" (RFC 8767: an expired entry answered), nothing
//                       else
// The worker marks an answer when it writes one (mark_policy, mark_stale: the answer's
// buffer and DNS ID); client_response() takes the mark that names its bytes. Marks wait in
// a ring of kMarks (a batch's worth): one whose answer is never tapped is overwritten.
//
// Threads: the worker's loop encodes a frame (one malloc) and submits it to fstrm's I/O
// thread, one per worker process, through a bounded single-producer queue
// (FSTRM_IOTHR_QUEUE_MODEL_SPSC). fstrm's queue holds at most 16,384 frames (a power of
// two); dnstap.queue frames beyond that wait in the worker's own backlog, in order, and move
// into fstrm's queue as it empties (drain_backlog, called by the worker's loop, which wakes
// within kBacklogRetryMs while frames wait). So the writer thread may be starved of the CPU
// for dnstap.queue / (frames per second) seconds before a frame is lost: at 50,000 frames a
// second per worker, 0.33 s with fstrm's queue alone, 1.3 s with the default 65,536.
// The backlog is bounded twice: dnstap.queue frames in all, and kBacklogBytesMax bytes.
// Submission never blocks: a frame that finds both full is dropped (dnstap_dropped), so a
// slow or stopped reader costs frames, never answers. The
// thread is started in the worker after fork (the supervisor starts none; a worker never
// forks), so fork never copies a thread. It does every write, connect and reconnect:
//   writes   when 8 KiB of frames wait (fstrm's buffer hint) or after 1 s without frames
//   gone     a reader that went away is noticed when a write to it fails; the frames of
//            that write are lost
//   again    fstrm reconnects every reopen interval (1 s, counted in whole seconds) when its
//            thread wakes (at least every second): a restarted reader gets frames within ~3 s
//   no reader  frames reaching the thread while none is connected are discarded by fstrm
//            (they count in dnstap_sent)
//
// Files: one per worker, PATH.<worker index>; a file already there (an earlier run, a
// worker restarted, one retiring after a reload) is first renamed PATH.<index>.<seconds>.<pid>,
// since fstrm truncates what it opens. A single file cannot be shared by several
// processes: each fstrm file writer writes its own START control frame and flushes whole
// buffers at its own offsets, so their frames would interleave mid-stream. A unix socket
// has no such limit: a reader (fstrm_capture) takes one connection per worker into one file.
//
// Costs: nothing when dnstap is off (the worker holds no writer; each hook is one pointer
// test). When on, one encode, one malloc and one queue entry per message; the worker's
// instructions per message are in docs/benchmarking.md (dnstap).
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <ctime>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache.hpp"
#include "workers/serve_config.hpp"
#include "workers/udp_pktinfo.hpp"

struct fstrm_iothr;
struct fstrm_iothr_queue;

namespace dnsarena::workers {

// The server side of a client's message: over UDP the listen address, and on a wildcard
// the address the datagram was sent to (pktinfo; nullptr or AF_UNSPEC: none); over a
// stream (TCP, DoT, DoH) the connection's own local address (`socket`, getsockname).
struct TapLocal {
  const Endpoint* listen = nullptr;
  const LocalAddress* pktinfo = nullptr;
  const sockaddr_storage* socket = nullptr;
};

// The schema's SocketProtocol values.
enum class TapProtocol : std::uint8_t { udp = 1, tcp = 2, dot = 3, doh = 4 };

class DnstapWriter {
public:
  // Starts the I/O thread, writing to cfg.socket or to cfg.file + "." + worker index.
  // Throws std::runtime_error when fstrm refuses the options (a socket path too long).
  DnstapWriter(const DnstapConfig& cfg, unsigned worker_index, cache::Cache& cache);
  // Stops the I/O thread after it has written what is queued (to a connected reader).
  ~DnstapWriter();
  DnstapWriter(const DnstapWriter&) = delete;
  DnstapWriter& operator=(const DnstapWriter&) = delete;

  bool client_queries() const { return client_query_; }
  bool client_responses() const { return client_response_; }

  void client_query(const sockaddr_storage& client, TapLocal local, TapProtocol protocol,
                    std::span<const std::uint8_t> wire, const timespec& received);
  // `received`: when the query came in (nullptr: not known here).
  void client_response(const sockaddr_storage& client, TapLocal local, TapProtocol protocol,
                       std::span<const std::uint8_t> wire, const timespec* received);
  // `zone`: the forward zone's name in wire form (may be empty).
  void forwarder_query(const sockaddr_storage& upstream, TapProtocol protocol, std::span<const std::uint8_t> zone,
                       std::span<const std::uint8_t> wire);
  // `sent_ago_us`: how long ago the query was sent (its query_time is now minus that).
  void forwarder_response(const sockaddr_storage& upstream, TapProtocol protocol, std::span<const std::uint8_t> zone,
                          std::span<const std::uint8_t> wire, std::uint64_t sent_ago_us);

  // The answer written at `answer` for DNS ID `id` is a policy answer: zone index, the
  // schema's Policy.Action (0: none), the trigger (wire form, "*." first when
  // `wildcard`) and the query name. Copied: the spans need not outlive the call.
  void mark_policy(const std::uint8_t* answer, std::uint16_t id, unsigned zone, std::uint8_t action,
                   std::span<const std::uint8_t> trigger, bool wildcard, std::span<const std::uint8_t> qname);
  // The answer written at `answer` for DNS ID `id` is a stale one.
  void mark_stale(const std::uint8_t* answer, std::uint16_t id);
  static constexpr unsigned kMarks = 64;

  static timespec wall_now();

  // Moves frames waiting in the backlog into fstrm's queue while it has room; returns true
  // when some still wait (the worker's loop then wakes within kBacklogRetryMs to retry).
  bool drain_backlog();
  bool backlog_waiting() const { return !backlog_.empty(); }

  static constexpr int kBacklogRetryMs = 2;
  static constexpr std::size_t kBacklogBytesMax = 32u << 20;  // 32 MiB of encoded frames
  static constexpr unsigned kFstrmQueueMax = 16384;          // fstrm's largest input queue

private:
  struct Frame;
  struct Mark {
    const std::uint8_t* answer = nullptr;  // nullptr: free
    std::uint16_t id = 0;
    bool stale = false;
    std::uint8_t action = 0;
    unsigned zone = 0;
    std::uint8_t rule_len = 0, qname_len = 0;
    std::uint8_t rule[257];  // "*." (2 bytes) + a name (255)
    std::uint8_t qname[255];
  };
  Mark* take_mark(std::span<const std::uint8_t> answer);
  Mark& new_mark(const std::uint8_t* answer, std::uint16_t id);
  struct Pending {
    std::uint8_t* bytes;
    std::size_t len;
  };
  void submit(Frame& f);
  bool hand_to_fstrm(std::uint8_t* bytes, std::size_t len);  // true: fstrm owns bytes now

  cache::Cache& cache_;
  std::deque<Pending> backlog_;  // in submission order; owned (malloc) until handed over
  std::size_t backlog_frames_max_ = 0;
  std::size_t backlog_bytes_ = 0;
  fstrm_iothr* iothr_ = nullptr;
  fstrm_iothr_queue* queue_ = nullptr;
  std::string identity_;
  std::string version_;
  std::vector<std::uint8_t> header_;  // the frame's identity and version fields, encoded once
  std::vector<std::uint8_t> body_;    // the Message being encoded (Frame)
  bool client_query_;
  bool client_response_;
  bool forwarder_query_;
  bool forwarder_response_;
  std::vector<Mark> marks_;  // kMarks, a ring
  unsigned next_mark_ = 0;
  unsigned marks_waiting_ = 0;
};

}  // namespace dnsarena::workers
