// DNS over TCP for one worker: a listening socket on the shared port (SO_REUSEPORT) and
// its connections, each carrying length-prefixed messages (RFC 1035 4.2.2, RFC 7766).
//
// Operations: on_accept() accepts every pending connection (over max_connections: closed
// at once); on_readable(id) reads what is there and calls the handler for every complete
// message (several queries per connection, pipelined); send(id, msg) queues the 2-byte
// length and the message and writes what the socket takes, the rest on EPOLLOUT;
// sweep_idle(now) closes connections idle longer than the timeout. The handler may answer
// at once or later (after an upstream reply); a later answer to a closed connection is
// dropped. Memory: one input and one output buffer per connection.
#pragma once
#include <sys/socket.h>

#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <vector>

namespace dnsarena::workers {

class TcpServer {
public:
  using Handler = std::function<void(std::uint64_t conn_id, std::uint8_t* msg, std::size_t len)>;
  // `tag` is OR-ed into epoll data of connection fds (the id occupies the low 48 bits).
  TcpServer(int epoll_fd, int listen_fd, std::uint64_t tag, unsigned max_connections, unsigned idle_timeout_ms,
            Handler handler);
  ~TcpServer();
  TcpServer(const TcpServer&) = delete;
  TcpServer& operator=(const TcpServer&) = delete;

  void on_accept(std::uint64_t now_ms);
  void on_event(std::uint64_t conn_id, std::uint32_t events, std::uint64_t now_ms);
  void send(std::uint64_t conn_id, std::span<const std::uint8_t> msg);
  void sweep_idle(std::uint64_t now_ms);
  std::size_t connections() const { return conns_.size(); }
  // The client's address (family AF_UNSPEC when the connection is gone).
  sockaddr_storage peer(std::uint64_t conn_id) const;

private:
  struct Conn {
    int fd = -1;
    sockaddr_storage peer{};
    std::vector<std::uint8_t> in;
    std::vector<std::uint8_t> out;
    std::uint64_t last_active_ms = 0;
    bool want_write = false;
  };
  void close_conn(std::uint64_t id);
  void flush(std::uint64_t id, Conn& c);

  int epoll_fd_;
  int listen_fd_;
  std::uint64_t tag_;
  unsigned max_connections_;
  unsigned idle_timeout_ms_;
  Handler handler_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, Conn> conns_;
};

}  // namespace dnsarena::workers
