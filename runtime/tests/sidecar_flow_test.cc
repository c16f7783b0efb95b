// The CPU half of the id flow against real nccl-sidecar processes (standalone mode: a root
// sidecar and a peer sidecar that fetches from it), on loopback ports chosen by the OS.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "nccl_k8s/runtime.h"
#include "sidecar_client.h"
#include "unique_id_codec.h"

extern char** environ;

namespace nccl_k8s {
namespace {

using namespace std::chrono_literals;

const char* SidecarPath() {
  const char* path = std::getenv("NCCL_K8S_TEST_SIDECAR");
  return path && *path ? path : nullptr;
}

// One sidecar process; its API port is read from its "started ... listen=HOST:PORT" log line.
class SidecarProcess {
 public:
  // root_urls (with roots > 1): every root sidecar's URL, --root-urls; then `listen_port` is fixed.
  SidecarProcess(int index, int attempt, const std::string& peer_url, int roots = 1, const std::string& root_urls = "",
                 int listen_port = 0) {
    log_path_ = ::testing::TempDir() + "sidecar-" + std::to_string(getpid()) + "-" + std::to_string(index) +
                "-" + std::to_string(attempt) + ".log";
    std::vector<std::string> args = {SidecarPath(), "--standalone", "--listen",
                                     "127.0.0.1:" + std::to_string(listen_port), "--probe-listen", "127.0.0.1:0"};
    if (!root_urls.empty()) {
      args.push_back("--root-urls");
      args.push_back(root_urls);
    }
    if (!peer_url.empty()) {
      args.push_back("--peer-url");
      args.push_back(peer_url);
    }
    std::vector<std::string> env = {"NCCLJOB_NAME=flowtest", "NCCLJOB_NAMESPACE=default",
                                    "NCCLJOB_POD_NAME=flowtest-" + std::to_string(index),
                                    "NCCLJOB_INDEX=" + std::to_string(index), "NCCLJOB_REPLICAS=2",
                                    "NCCLJOB_GPUS_PER_POD=1", "NCCLJOB_WORLD_SIZE=2",
                                    "NCCLJOB_ATTEMPT=" + std::to_string(attempt),
                                    "NCCLJOB_BOOTSTRAP_ROOTS=" + std::to_string(roots)};
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~SidecarProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
  }

  // Waits (up to 10 s) for the log line that names the bound port.
  int WaitForPort() {
    auto until = Clock::now() + 10s;
    while (Clock::now() < until && pid_ > 0) {
      std::ifstream in(log_path_);
      std::stringstream text;
      text << in.rdbuf();
      std::string s = text.str();
      size_t at = s.find("listen=127.0.0.1:");
      if (at != std::string::npos) return std::atoi(s.c_str() + at + 17);
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }
  std::string Url() {
    int port = WaitForPort();
    return port > 0 ? "http://127.0.0.1:" + std::to_string(port) : "";
  }
  std::string Log() {
    std::ifstream in(log_path_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  pid_t pid_ = -1;
  std::string log_path_;
};

class SidecarFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SidecarPath()) GTEST_FAIL() << "NCCL_K8S_TEST_SIDECAR is not set: run through ctest, which points it at the built nccl-sidecar";
  }
};

JobEnv RootEnv(const std::string& url, int attempt) {
  JobEnv env;
  env.index = 0;
  env.world_size = 2;
  env.replicas = 2;
  env.attempt = attempt;
  env.sidecar_url = url;
  return env;
}

TEST_F(SidecarFlow, RootPostsAndPeerFetchesTheSameId) {
  SidecarProcess root(0, 1, "");
  std::string root_url = root.Url();
  ASSERT_FALSE(root_url.empty()) << root.Log();
  SidecarProcess peer(1, 1, root_url);
  std::string peer_url = peer.Url();
  ASSERT_FALSE(peer_url.empty()) << peer.Log();

  // The worker asks first: the long-poll must wait for the root, not fail.
  Result<IdBytes> fetched = Status(Code::kUnavailable, "not run");
  std::thread worker([&] { fetched = FetchId(peer_url, 1, Clock::now() + 20s); });

  auto id = ObtainUniqueId(RootEnv(root_url, 1), Clock::now() + 10s);  // ncclGetUniqueId + POST
  ASSERT_TRUE(id.ok()) << id.status().ToString() << "\n" << root.Log();
  worker.join();
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString() << "\n" << peer.Log();
  EXPECT_EQ(IdToHex(*fetched), EncodeIdHex(*id));
  auto where = DecodeBootstrapAddress(*fetched);
  ASSERT_TRUE(where.has_value());
  EXPECT_GT(where->port, 0);
}

// After an in-place restart the pod's sidecar serves a later attempt than the NCCLJOB_ATTEMPT
// the pod was created with: the runtime takes the sidecar's (GET /v1/info), posts the root's id
// for it and accepts the id of it. With the env's attempt the root sidecar would refuse the POST
// (409) and the worker the answer (kStaleAttempt).
TEST_F(SidecarFlow, TakesTheSidecarsAttemptOverTheEnvs) {
  SidecarProcess root(0, 3, "");
  std::string root_url = root.Url();
  ASSERT_FALSE(root_url.empty()) << root.Log();
  SidecarProcess peer(1, 3, root_url);
  std::string peer_url = peer.Url();
  ASSERT_FALSE(peer_url.empty()) << peer.Log();
  JobEnv root_env = RootEnv(root_url, /*attempt=*/1);  // the attempt the pod was created for
  JobEnv worker_env = RootEnv(peer_url, 1);
  worker_env.index = 1;

  auto served = ServedAttempt(worker_env, Clock::now() + 10s);
  ASSERT_TRUE(served.ok()) << served.status().ToString();
  EXPECT_EQ(*served, 3);
  Result<std::vector<ncclUniqueId>> fetched = Status(Code::kUnavailable, "not run");
  std::thread worker([&] { fetched = ObtainUniqueIds(worker_env, Clock::now() + 20s); });
  auto id = ObtainUniqueId(root_env, Clock::now() + 10s);
  worker.join();
  ASSERT_TRUE(id.ok()) << id.status().ToString() << "\n" << root.Log();
  ASSERT_TRUE(fetched.ok()) << fetched.status().ToString() << "\n" << peer.Log();
  EXPECT_EQ(EncodeIdHex(fetched->front()), EncodeIdHex(*id));
  EXPECT_NE(root.Log().find("accepted the root id attempt=3"), std::string::npos) << root.Log();
}

// A port free now (bound and closed), for sidecars that must know each other's before they start.
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

TEST_F(SidecarFlow, TwoRootsEachPostAndBothRanksGetTheListInRootOrder) {
  const int ports[2] = {FreePort(), FreePort()};
  const std::string urls[2] = {"http://127.0.0.1:" + std::to_string(ports[0]), "http://127.0.0.1:" + std::to_string(ports[1])};
  SidecarProcess root0(0, 1, "", 2, urls[0] + "," + urls[1], ports[0]);
  SidecarProcess root1(1, 1, "", 2, urls[0] + "," + urls[1], ports[1]);
  ASSERT_GT(root0.WaitForPort(), 0) << root0.Log();
  ASSERT_GT(root1.WaitForPort(), 0) << root1.Log();
  Result<std::vector<ncclUniqueId>> got[2] = {Status(Code::kUnavailable, "not run"), Status(Code::kUnavailable, "not run")};
  std::vector<std::thread> ranks;
  for (int i = 0; i < 2; ++i) {
    ranks.emplace_back([&, i] {
      JobEnv env = RootEnv(urls[i], 1);
      env.index = i;
      env.bootstrap_roots = 2;
      env.bootstrap_roots_set = true;
      got[i] = ObtainUniqueIds(env, Clock::now() + 20s);  // each is a root: ncclGetUniqueId, POST, then the list
    });
  }
  for (auto& t : ranks) t.join();
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(got[i].ok()) << got[i].status().ToString() << "\n" << root0.Log() << root1.Log();
  ASSERT_EQ(got[0]->size(), 2u);
  ASSERT_EQ(got[1]->size(), 2u);
  for (int j = 0; j < 2; ++j) EXPECT_EQ(EncodeIdHex((*got[0])[j]), EncodeIdHex((*got[1])[j])) << "root " << j;
  EXPECT_NE(EncodeIdHex((*got[0])[0]), EncodeIdHex((*got[0])[1])) << "two roots, two ids";
  // One id is not enough for such a job.
  JobEnv env = RootEnv(urls[0], 1);
  env.bootstrap_roots = 2;
  auto one = ObtainUniqueId(env, Clock::now() + 1s);
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().code(), Code::kInvalidArgument);
}

TEST_F(SidecarFlow, RefusesAnIdOfAnotherAttempt) {
  SidecarProcess root(0, 1, "");
  std::string url = root.Url();
  ASSERT_FALSE(url.empty()) << root.Log();
  IdBytes id{};
  id[0] = 7;
  ASSERT_TRUE(PostId(url, id, 1, Clock::now() + 5s).ok()) << root.Log();
  auto fetched = FetchId(url, 2, Clock::now() + 5s);  // this pod believes it is attempt 2
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.status().code(), Code::kStaleAttempt) << fetched.status().ToString();
  // And the root sidecar refuses a post for an attempt that is not its own.
  Status wrong = PostId(url, id, 5, Clock::now() + 5s);
  EXPECT_FALSE(wrong.ok());
}

TEST_F(SidecarFlow, GivesUpAtTheDeadlineWhenNoIdComes) {
  SidecarProcess root(0, 1, "");
  std::string root_url = root.Url();
  ASSERT_FALSE(root_url.empty());
  SidecarProcess peer(1, 1, root_url);
  std::string peer_url = peer.Url();
  ASSERT_FALSE(peer_url.empty());
  auto started = Clock::now();
  auto fetched = FetchId(peer_url, 1, started + 2s);
  auto took = Clock::now() - started;
  ASSERT_FALSE(fetched.ok());
  EXPECT_EQ(fetched.status().code(), Code::kDeadlineExceeded) << fetched.status().ToString();
  EXPECT_GE(took, 2s);
  EXPECT_LT(took, 3s);
}

// Reads one HTTP request (head and Content-Length body) from `fd`; its body, or "" when it broke off.
std::string ReadRequestBody(int fd) {
  std::string raw;
  char buf[4096];
  for (;;) {
    size_t head_end = raw.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      size_t at = raw.find("Content-Length: ");
      size_t length = at == std::string::npos ? 0 : std::stoul(raw.substr(at + 16));
      if (raw.size() >= head_end + 4 + length) return raw.substr(head_end + 4, length);
    }
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return "";
    raw.append(buf, static_cast<size_t>(n));
  }
}

// The root gap: a root sidecar answers the POST only once the id is on its pod, so one killed
// before that closes the connection without an answer. The client must post the same id again
// (to the sidecar the kubelet restarts on the same port), or the attempt's id is lost.
TEST(SidecarClient, PostsTheSameIdAgainWhenTheSidecarDiesBeforeAnswering) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));

  std::vector<std::string> bodies;
  std::thread sidecar([&] {
    int killed = accept(listener, nullptr, nullptr);  // accepted the id, died before answering
    bodies.push_back(ReadRequestBody(killed));
    close(killed);
    int restarted = accept(listener, nullptr, nullptr);
    bodies.push_back(ReadRequestBody(restarted));
    const std::string answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n"
                               "Connection: close\r\n\r\n{\"attempt\":4}";
    send(restarted, answer.data(), answer.size(), MSG_NOSIGNAL);
    close(restarted);
  });
  IdBytes id{};
  for (size_t i = 0; i < id.size(); ++i) id[i] = static_cast<unsigned char>(i * 3 + 1);
  Status posted = PostId(url, id, 4, Clock::now() + 10s);
  sidecar.join();
  close(listener);
  ASSERT_TRUE(posted.ok()) << posted.ToString();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_FALSE(bodies[0].empty());
  EXPECT_EQ(bodies[1], bodies[0]);  // the same id and attempt again
  EXPECT_NE(bodies[0].find(IdToBase64(id)), std::string::npos) << bodies[0];
  EXPECT_NE(bodies[0].find("\"attempt\":4"), std::string::npos) << bodies[0];
}

// A loopback listener on a port of the kernel's choice; its URL.
int Listen(std::string* url) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(listener, 4) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(listener);
    return -1;
  }
  *url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  return listener;
}

void Answer(int fd, const std::string& status_line, const std::string& body) {
  ReadRequestBody(fd);
  const std::string answer = "HTTP/1.1 " + status_line + "\r\nContent-Type: application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
  send(fd, answer.data(), answer.size(), MSG_NOSIGNAL);
  close(fd);
}

// The in-place sidecar binds its API only once it knows its attempt, and a starting one may be
// refused or restarted: a request without an answer and a 5xx are asked again.
TEST(SidecarClient, AsksForTheAttemptUntilTheSidecarAnswers) {
  std::string url;
  int listener = Listen(&url);
  ASSERT_GE(listener, 0);
  std::thread sidecar([&] {
    close(accept(listener, nullptr, nullptr));  // closed without an answer
    Answer(accept(listener, nullptr, nullptr), "503 Service Unavailable", "{\"error\":\"busy\"}");
    Answer(accept(listener, nullptr, nullptr), "200 OK",
           "{\"attempt\":7,\"bootstrapRoots\":1,\"gpusPerPod\":1,\"index\":1,\"job\":\"j\",\"namespace\":\"n\","
           "\"replicas\":2,\"root\":false,\"worldSize\":2}");
  });
  auto attempt = FetchAttempt(url, Clock::now() + 10s);
  sidecar.join();
  close(listener);
  ASSERT_TRUE(attempt.ok()) << attempt.status().ToString();
  EXPECT_EQ(*attempt, 7);
}

TEST(SidecarClient, AnAttemptAnswerItCannotUseIsAnError) {
  for (const auto& [status_line, body, says] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"404 Not Found", "{\"error\":\"no such path\"}", "refused GET /v1/info: HTTP 404: no such path"},
           {"200 OK", "{\"job\":\"j\"}", "answer has no attempt number"},
           {"200 OK", "{\"attempt\":0}", "answer has no attempt number"}}) {
    std::string url;
    int listener = Listen(&url);
    ASSERT_GE(listener, 0);
    std::thread sidecar([&, status_line = status_line, body = body] { Answer(accept(listener, nullptr, nullptr), status_line, body); });
    auto attempt = FetchAttempt(url, Clock::now() + 10s);
    sidecar.join();
    close(listener);
    ASSERT_FALSE(attempt.ok());
    EXPECT_EQ(attempt.status().code(), Code::kUnavailable);
    EXPECT_NE(attempt.status().message().find(says), std::string::npos) << attempt.status().ToString();
  }
}

TEST(SidecarClient, RetriesUntilTheDeadlineWhenNothingListens) {
  auto started_attempt = Clock::now();
  auto attempt = FetchAttempt("http://127.0.0.1:1", started_attempt + 500ms);
  EXPECT_EQ(attempt.status().code(), Code::kDeadlineExceeded);
  EXPECT_NE(attempt.status().message().find("could not learn this pod's attempt from the sidecar at http://127.0.0.1:1"),
            std::string::npos) << attempt.status().ToString();
  EXPECT_LT(Clock::now() - started_attempt, 1500ms);

  auto started = Clock::now();
  auto fetched = FetchId("http://127.0.0.1:1", 1, started + 500ms);
  EXPECT_EQ(fetched.status().code(), Code::kDeadlineExceeded);
  EXPECT_NE(fetched.status().message().find("cannot connect"), std::string::npos) << fetched.status().ToString();
  EXPECT_LT(Clock::now() - started, 1500ms);
}

}  // namespace
}  // namespace nccl_k8s
