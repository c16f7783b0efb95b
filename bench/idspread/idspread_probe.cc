// idspread_probe: times how long 128 bytes take from the root to N receivers.
//
//   idspread_probe sidecars --ports FILE --root-port P [--settle-ms MS] [--timeout S]
//     FILE holds one sidecar API port per line (127.0.0.1). Opens one long-poll
//     `GET /v1/id?timeout=S` per sidecar, waits until they are all sent and settled, then POSTs a
//     fresh 128-byte id to the root sidecar and records, per receiver, the time from just before
//     the POST to the end of its 200 answer (which must carry that id).
//   idspread_probe push --n N
//     The seed's way (a root that connects to each trainer in turn and writes the id): N
//     listening receivers on loopback, one root thread connecting and writing to each in a loop.
//
// Prints one line per receiver: latency in microseconds (sorted), then "failures F". One
// thread polls every receiver socket, so a receiver is timed when its bytes arrive, not when
// a thread of its own is scheduled.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "contract/unique_id.h"

namespace {

using Clock = std::chrono::steady_clock;

int ConnectLoopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

struct Receiver {
  int fd = -1;
  std::string got;
  Clock::time_point done{};
  bool finished = false;
};

// Reads what a ready receiver has; at EOF or error closes it and returns true (it is done).
// The arrival of its latest bytes is stamped `now`.
template <size_t N>
bool ReadOrFinish(Receiver& receiver, pollfd& fd, Clock::time_point now, char (&buffer)[N]) {
  ssize_t n = read(fd.fd, buffer, N);
  if (n > 0) {
    receiver.got.append(buffer, static_cast<size_t>(n));
    receiver.done = now;
    return false;
  }
  receiver.finished = true;
  close(fd.fd);
  fd.fd = -1;
  return true;
}

// Polls every receiver until each has reached EOF (or `deadline`); stamps the moment its
// last bytes arrived.
void Drain(std::vector<Receiver>& receivers, Clock::time_point deadline) {
  std::vector<pollfd> fds(receivers.size());
  size_t open = 0;
  for (size_t i = 0; i < receivers.size(); ++i) {
    fds[i] = {receivers[i].fd, POLLIN, 0};
    if (!receivers[i].finished) ++open;
  }
  char buffer[4096];
  while (open > 0 && Clock::now() < deadline) {
    int ready = poll(fds.data(), fds.size(), 100);
    if (ready <= 0) continue;
    Clock::time_point now = Clock::now();
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (ReadOrFinish(receivers[i], fds[i], now, buffer)) --open;
    }
  }
}

void Report(const std::vector<Receiver>& receivers, Clock::time_point t0, const std::string& must_contain,
            size_t exact_size) {
  std::vector<long> micros;
  int failures = 0;
  for (const Receiver& r : receivers) {
    bool ok = r.finished && r.got.find(must_contain) != std::string::npos &&
              (exact_size == 0 || r.got.size() == exact_size);
    if (!ok) {
      ++failures;
      if (failures <= 3) std::fprintf(stderr, "receiver failed: %.200s\n", r.got.c_str());
      continue;
    }
    micros.push_back(std::chrono::duration_cast<std::chrono::microseconds>(r.done - t0).count());
  }
  std::sort(micros.begin(), micros.end());
  for (long m : micros) std::printf("%ld\n", m);
  std::printf("failures %d\n", failures);
}

std::string RandomId() {
  std::random_device rd;
  std::string id(128, '\0');
  for (char& c : id) c = static_cast<char>(rd());
  return id;
}

int Sidecars(const std::string& ports_file, int root_port, int settle_ms, int timeout_s) {
  std::vector<int> ports;
  std::ifstream in(ports_file);
  for (int p; in >> p;) ports.push_back(p);
  std::vector<Receiver> receivers(ports.size());
  const std::string get = "GET /v1/id?timeout=" + std::to_string(timeout_s) +
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  for (size_t i = 0; i < ports.size(); ++i) {
    receivers[i].fd = ConnectLoopback(ports[i]);
    if (receivers[i].fd < 0 || !WriteAll(receivers[i].fd, get)) {
      std::fprintf(stderr, "cannot long-poll the sidecar on port %d\n", ports[i]);
      return 1;
    }
  }
  // The GETs are in the sidecars' sockets; give their threads time to reach the wait.
  std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));

  const std::string id = RandomId();
  const std::string post = "POST /v1/id HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                           "Content-Length: 128\r\nConnection: close\r\n\r\n" + id;
  Clock::time_point t0 = Clock::now();
  std::thread poster([&] {
    int fd = ConnectLoopback(root_port);
    if (fd < 0 || !WriteAll(fd, post)) {
      std::fprintf(stderr, "cannot POST to the root sidecar\n");
      return;
    }
    char buffer[1024];
    std::string answer;
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) > 0;) answer.append(buffer, static_cast<size_t>(n));
    close(fd);
    if (answer.rfind("HTTP/1.1 200", 0) != 0) std::fprintf(stderr, "POST answered: %.300s\n", answer.c_str());
    std::fprintf(stderr, "post_answered_us %ld\n",
                 static_cast<long>(std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count()));
  });
  Drain(receivers, t0 + std::chrono::seconds(timeout_s));
  poster.join();
  Report(receivers, t0, "\"id\":\"" + contract::Base64Encode(id) + "\"", 0);
  return 0;
}

int Push(int n) {
  std::vector<int> listeners(n);
  std::vector<int> ports(n);
  for (int i = 0; i < n; ++i) {
    listeners[i] = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(listeners[i], reinterpret_cast<sockaddr*>(&addr), len) != 0 || listen(listeners[i], 4) != 0) {
      std::perror("listen");
      return 1;
    }
    getsockname(listeners[i], reinterpret_cast<sockaddr*>(&addr), &len);
    ports[i] = ntohs(addr.sin_port);
  }
  const std::string id = RandomId();
  std::vector<Receiver> receivers(n);
  Clock::time_point t0 = Clock::now();
  std::thread root([&] {
    for (int port : ports) {
      int fd = ConnectLoopback(port);
      if (fd < 0 || !WriteAll(fd, id)) std::fprintf(stderr, "push to %d failed\n", port);
      if (fd >= 0) close(fd);
    }
  });
  // Receivers: accept the root's connection and read until it closes, in one poll loop so each
  // is stamped when its bytes arrive.
  std::vector<pollfd> fds(n);
  for (int i = 0; i < n; ++i) fds[i] = {listeners[i], POLLIN, 0};
  int open = n;
  char buffer[256];
  Clock::time_point deadline = t0 + std::chrono::seconds(60);
  while (open > 0 && Clock::now() < deadline) {
    if (poll(fds.data(), fds.size(), 100) <= 0) continue;
    Clock::time_point now = Clock::now();
    for (int i = 0; i < n; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (receivers[i].fd < 0) {
        receivers[i].fd = accept(listeners[i], nullptr, nullptr);
        close(listeners[i]);
        fds[i].fd = receivers[i].fd;
        continue;
      }
      if (ReadOrFinish(receivers[i], fds[i], now, buffer)) --open;
    }
  }
  root.join();
  Report(receivers, t0, id, id.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto flag = [&](const std::string& name, const std::string& fallback) {
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == name) return args[i + 1];
    }
    return fallback;
  };
  std::string mode = args.empty() ? "" : args[0];
  if (mode == "sidecars") {
    return Sidecars(flag("--ports", ""), std::atoi(flag("--root-port", "0").c_str()),
                    std::atoi(flag("--settle-ms", "1000").c_str()), std::atoi(flag("--timeout", "60").c_str()));
  }
  if (mode == "push") return Push(std::atoi(flag("--n", "0").c_str()));
  std::fprintf(stderr, "usage: idspread_probe sidecars --ports FILE --root-port P | push --n N\n");
  return 2;
}
