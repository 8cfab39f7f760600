// SPDX-License-Identifier: GPL-3.0-or-later
// The dnstap frame's bytes: the protobuf wire format of the two messages of dnstap.proto
// (Dnstap and Message) that serve writes, encoded directly.
//
// Why not protobuf-c's packer: it walks field descriptors for every field and sizes each
// nested message before packing it; under callgrind that was about 2,300 instructions per
// frame, several times the cost of answering a cached query (docs/benchmarking.md, dnstap).
// The schema is fixed and small, so the fields are written here in one pass.
// tests/workers/dnstap_encoder_test.cpp decodes what this writes with the unpacker that
// protoc-c generates from dnstap.proto (the reference) and compares every field.
//
// Wire format (https://protobuf.dev/programming-guides/encoding/): each field is a key,
// varint (field number << 3 | wire type), then a varint (type 0), 4 little-endian bytes
// (type 5, fixed32) or a varint length and that many bytes (type 2: bytes, messages).
// DNSTAP-SCHEMA: the field numbers below are dnstap.proto's; keep them in step with it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace dnsarena::workers::dnstap_wire {

// dnstap.proto field numbers.
namespace dnstap_field {
inline constexpr unsigned identity = 1, version = 2, message = 14, type = 15;
inline constexpr std::uint64_t type_message = 1;  // Dnstap.Type.MESSAGE
}  // namespace dnstap_field
namespace message_field {
inline constexpr unsigned type = 1, socket_family = 2, socket_protocol = 3, query_address = 4, response_address = 5,
                          query_port = 6, response_port = 7, query_time_sec = 8, query_time_nsec = 9,
                          query_message = 10, query_zone = 11, response_time_sec = 12, response_time_nsec = 13,
                          response_message = 14, policy = 15;
}  // namespace message_field
namespace policy_field {
inline constexpr unsigned type = 1, rule = 2, action = 3, match = 4, value = 5;
inline constexpr std::uint64_t match_qname = 1;  // Policy.Match.QNAME
}  // namespace policy_field
// Enum values of dnstap.proto.
enum class MessageType : std::uint64_t { client_query = 5, client_response = 6, forwarder_query = 7, forwarder_response = 8 };
enum class SocketFamily : std::uint64_t { inet = 1, inet6 = 2 };
enum class SocketProtocol : std::uint64_t { udp = 1, tcp = 2, dot = 3, doh = 4 };
// Policy.Action (REFUSED has none: such a policy answer carries no action).
enum class PolicyAction : std::uint64_t { nxdomain = 1, nodata = 2, pass = 3, drop = 4, truncate = 5, local_data = 6 };

inline constexpr unsigned kWireVarint = 0, kWireBytes = 2, kWireFixed32 = 5;
inline constexpr std::size_t kMaxVarint = 10;

// Appends fields to a buffer the caller sized: at most the sum of each call's bound
// (varint: key + 10; bytes: key + 10 + size; fixed32: key + 4; keys here are one byte).
class Writer {
public:
  explicit Writer(std::uint8_t* out) : begin_(out), p_(out) {}
  std::size_t size() const { return static_cast<std::size_t>(p_ - begin_); }

  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<std::uint8_t>(v | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<std::uint8_t>(v);
  }
  void key(unsigned field, unsigned wire_type) { varint(std::uint64_t{field} << 3 | wire_type); }
  void uint_field(unsigned field, std::uint64_t v) {
    key(field, kWireVarint);
    varint(v);
  }
  void fixed32_field(unsigned field, std::uint32_t v) {
    key(field, kWireFixed32);
    for (int i = 0; i < 4; ++i) *p_++ = static_cast<std::uint8_t>(v >> (8 * i));
  }
  void bytes_field(unsigned field, std::span<const std::uint8_t> b) {
    key(field, kWireBytes);
    varint(b.size());
    if (!b.empty()) std::memcpy(p_, b.data(), b.size());
    p_ += b.size();
  }

private:
  std::uint8_t* begin_;
  std::uint8_t* p_;
};

// The bytes a varint of v takes.
inline std::size_t varint_size(std::uint64_t v) {
  std::size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// A whole Dnstap frame: `header` (its identity and version fields, encoded), the Message
// `body` as field 14, type MESSAGE.
inline std::size_t frame_size(std::span<const std::uint8_t> header, std::span<const std::uint8_t> body) {
  return header.size() + 1 + varint_size(body.size()) + body.size() + 2;  // keys 14 and 15 take one byte
}
inline void write_frame(std::span<const std::uint8_t> header, std::span<const std::uint8_t> body, std::uint8_t* out) {
  std::memcpy(out, header.data(), header.size());
  Writer w(out + header.size());
  w.bytes_field(dnstap_field::message, body);
  w.uint_field(dnstap_field::type, dnstap_field::type_message);
}

}  // namespace dnsarena::workers::dnstap_wire
