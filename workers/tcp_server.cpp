#include "workers/tcp_server.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace dnsarena::workers {

namespace {
constexpr std::uint64_t kIdMask = (1ull << 48) - 1;
}

TcpServer::TcpServer(int epoll_fd, int listen_fd, std::uint64_t tag, unsigned max_connections,
                     unsigned idle_timeout_ms, Handler handler)
    : epoll_fd_(epoll_fd),
      listen_fd_(listen_fd),
      tag_(tag),
      max_connections_(max_connections),
      idle_timeout_ms_(idle_timeout_ms),
      handler_(std::move(handler)) {}

TcpServer::~TcpServer() {
  for (auto& [id, c] : conns_) ::close(c.fd);
}

void TcpServer::on_accept(std::uint64_t now_ms) {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&peer), &peer_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a transient error: try at the next event
    if (conns_.size() >= max_connections_) {
      ::close(fd);
      continue;
    }
    const std::uint64_t id = next_id_++ & kIdMask;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = tag_ | id;
    if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) {
      ::close(fd);
      continue;
    }
    Conn& c = conns_[id];
    c.fd = fd;
    c.peer = peer;
    c.last_active_ms = now_ms;
  }
}

void TcpServer::close_conn(std::uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, it->second.fd, nullptr);
  ::close(it->second.fd);
  conns_.erase(it);
}

void TcpServer::on_event(std::uint64_t conn_id, std::uint32_t events, std::uint64_t now_ms) {
  conn_id &= kIdMask;
  auto it = conns_.find(conn_id);
  if (it == conns_.end()) return;
  it->second.last_active_ms = now_ms;
  if (events & EPOLLOUT) {
    flush(conn_id, it->second);
    it = conns_.find(conn_id);
    if (it == conns_.end()) return;
  }
  if (!(events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) return;
  bool eof = false;
  for (;;) {
    Conn& c = conns_.at(conn_id);
    std::uint8_t buf[16384];
    const ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n > 0) {
      c.in.insert(c.in.end(), buf, buf + n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) eof = true;
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  // Complete messages, in order. The handler may call send() (same connection).
  std::size_t pos = 0;
  for (;;) {
    auto cit = conns_.find(conn_id);
    if (cit == conns_.end()) return;
    std::vector<std::uint8_t>& in = cit->second.in;
    if (in.size() - pos < 2) break;
    const std::size_t len = (std::size_t{in[pos]} << 8) | in[pos + 1];
    if (in.size() - pos - 2 < len) break;
    std::vector<std::uint8_t> msg(in.begin() + static_cast<long>(pos + 2), in.begin() + static_cast<long>(pos + 2 + len));
    pos += 2 + len;
    handler_(conn_id, msg.data(), msg.size());
  }
  auto cit = conns_.find(conn_id);
  if (cit == conns_.end()) return;
  cit->second.in.erase(cit->second.in.begin(), cit->second.in.begin() + static_cast<long>(pos));
  if (eof) close_conn(conn_id);
}

void TcpServer::send(std::uint64_t conn_id, std::span<const std::uint8_t> msg) {
  auto it = conns_.find(conn_id & kIdMask);
  if (it == conns_.end() || msg.size() > 65535) return;
  Conn& c = it->second;
  c.out.push_back(static_cast<std::uint8_t>(msg.size() >> 8));
  c.out.push_back(static_cast<std::uint8_t>(msg.size()));
  c.out.insert(c.out.end(), msg.begin(), msg.end());
  flush(conn_id & kIdMask, c);
}

void TcpServer::flush(std::uint64_t id, Conn& c) {
  std::size_t done = 0;
  while (done < c.out.size()) {
    const ssize_t n = ::send(c.fd, c.out.data() + done, c.out.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    close_conn(id);
    return;
  }
  c.out.erase(c.out.begin(), c.out.begin() + static_cast<long>(done));
  const bool want = !c.out.empty();
  if (want != c.want_write) {
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0u);
    ev.data.u64 = tag_ | id;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
    c.want_write = want;
  }
}

sockaddr_storage TcpServer::peer(std::uint64_t conn_id) const {
  auto it = conns_.find(conn_id & kIdMask);
  return it == conns_.end() ? sockaddr_storage{} : it->second.peer;
}

void TcpServer::sweep_idle(std::uint64_t now_ms) {
  std::vector<std::uint64_t> idle;
  for (const auto& [id, c] : conns_)
    if (now_ms - c.last_active_ms > idle_timeout_ms_) idle.push_back(id);
  for (const auto id : idle) close_conn(id);
}

}  // namespace dnsarena::workers
