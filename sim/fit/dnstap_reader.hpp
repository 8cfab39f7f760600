// SPDX-License-Identifier: GPL-3.0-or-later
// Reading dnstap captures: Frame Streams files (libfstrm's file reader) whose content type
// is "protobuf:dnstap.Dnstap", each data frame one dnstap.Dnstap message decoded with the
// code protoc-c generates from workers/dnstap.proto (target dnsarena_dnstap_proto).
//
// What a reader hands on is TapMessage: the message type, its time (response_time for
// responses, query_time for queries, 0 when the frame has neither) and the DNS wire
// message it carries. Frames of other Dnstap types or without a message are counted and
// skipped; the caller decides what each message type means (tap_tally.hpp).
//
// Errors are DnstapReadError, one line that names the file and, past the START frame,
// how many data frames were read and the byte offset where reading stopped:
//   missing / unreadable   "tap.0: cannot open: No such file or directory"
//   not Frame Streams      "tap.0: not a Frame Streams file (no START control frame at byte 0)"
//   foreign content type   "tap.0: content type 'protobuf:other', expected 'protobuf:dnstap.Dnstap'"
//   truncated              "tap.0: the file ends inside a frame after 1200 data frames (byte 81234 of 81250)"
//   undecodable frame      "tap.0: data frame 17 at byte 1234 is not a dnstap.Dnstap message"
// A truncated file (a writer killed mid-write) can instead be read up to its cut:
// ReadOptions::keep_truncated; the frames before it are delivered and the cut reported.
// libfstrm's reader ends such a file as if it were whole, so the cut is found by comparing
// the bytes of the frames read (and of the STOP frame) with the file's size; the frames
// before the cut have then been delivered already (the error comes last). A file that
// ends between frames without a STOP frame is read whole, with a note.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dnsarena::sim::fit {

inline constexpr const char* kDnstapContentType = "protobuf:dnstap.Dnstap";

// dnstap.Message.Type values the fit reads (the schema's numbers).
enum class TapType : std::uint8_t {
  client_query = 5,
  client_response = 6,
  forwarder_query = 7,
  forwarder_response = 8,
};

struct TapMessage {
  TapType type = TapType::client_query;
  std::uint64_t time_ns = 0;  // since the epoch; 0: the frame carries no time
  std::span<const std::uint8_t> wire;  // valid only during the callback
  std::uint8_t socket_protocol = 0;    // the schema's SocketProtocol (1 UDP .. 4 DOH); 0: absent
  std::uint32_t response_port = 0;     // the server side's port; 0: absent
  // The frame's Policy (a policy or stale answer), valid only during the callback.
  bool has_policy = false;
  std::string_view policy_type;
  std::uint8_t policy_action = 0;  // Policy.Action; 0: absent
  std::span<const std::uint8_t> policy_rule, policy_value;
};

class DnstapReadError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct ReadOptions {
  bool keep_truncated = false;  // deliver the frames before a cut instead of failing
};

// What one file held.
struct FileSummary {
  std::string path;
  std::uint64_t data_frames = 0;    // every data frame read
  std::uint64_t messages = 0;       // delivered to the callback
  std::uint64_t skipped = 0;        // other Dnstap / Message types, or no DNS message
  std::uint64_t bytes = 0;          // file size
  bool truncated = false;           // with keep_truncated: where it stopped is in `note`
  std::string note;
};

using TapCallback = std::function<void(const TapMessage&)>;

// Reads one file, calling `each` per message of a type TapType names. Throws DnstapReadError.
FileSummary read_dnstap_file(const std::string& path, const TapCallback& each, const ReadOptions& options = {});

}  // namespace dnsarena::sim::fit
