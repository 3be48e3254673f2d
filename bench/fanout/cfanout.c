// SPDX-License-Identifier: Apache-2.0
/*
 * The plain C fan-out baseline for bench/fanout/run: the least a daemon can do to deliver one JSON
 * line per sample to N Unix-socket clients, with the same socket writes tiltd makes.
 *
 *   cfanout SOCKET_PATH TICK_FIFO [io_uring] [hop]
 *
 * Listens on SOCKET_PATH. A client that connects sends one command line and gets one reply line
 * (as the benchmark's `watch` gets from tiltd). Every 8-byte record read from TICK_FIFO is a scan
 * timestamp (int64, native order) written by the benchmark's feeder at the sample rate; for each,
 * one attitude-like line of tiltd's length carrying that timestamp as "t_ns" is formatted once and
 * written to every client with one non-blocking write(2) each. A client whose socket is full
 * (the stalled one) loses that line: no queue, no gap event, nothing but the write. No fusion, no
 * JSON library, no allocation per line. Exits when the FIFO's writer closes it.
 *
 * With "io_uring" the writes of a line go to the kernel together, as tiltd's do by default: one
 * send (MSG_DONTWAIT) per client queued on an io_uring and submitted with one system call per
 * 256 clients, waiting for all of them to complete.
 *
 * With "hop" a second thread reads the FIFO and hands each timestamp to the writing thread
 * through a queue and an eventfd, as tiltd's sampler thread (blocked in libiio) hands each sample
 * to its event loop (a task queue and NIO's eventfd): the same writes, one thread hop more. It
 * shows what that hop costs the writes themselves (the scheduler places the woken writer and the
 * readers its writes wake differently), apart from anything tiltd computes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <liburing.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_CLIENTS 4096

static int clients[MAX_CLIENTS];
static int nclients;

static int listen_on(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (fd < 0 || strlen(path) >= sizeof addr.sun_path) return -1;
    strcpy(addr.sun_path, path);
    unlink(path);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 1024) != 0) return -1;
    return fd;
}

/* Accepts one client, reads its command line (it sends one right after connecting) and replies. */
static void accept_client(int lfd) {
    int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) return;
    char buf[512];
    size_t got = 0;
    while (got < sizeof buf) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 5000) <= 0) break;
        ssize_t n = read(fd, buf + got, sizeof buf - got);
        if (n <= 0) break;
        got += (size_t)n;
        if (memchr(buf, '\n', got)) break;
    }
    static const char reply[] = "{\"class\":\"reply\",\"seq\":0,\"id\":1,\"cmd\":\"watch\",\"ok\":true}\n";
    if (write(fd, reply, sizeof reply - 1) < 0 || nclients == MAX_CLIENTS) { close(fd); return; }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    clients[nclients++] = fd;
}

/* "hop": timestamps from the FIFO's reader thread to the writing thread, oldest first. */
#define HOP_QUEUE 4096
static int64_t hop_queue[HOP_QUEUE];
static atomic_uint_fast64_t hop_head, hop_tail; /* written by the reader, by the writer */
static atomic_int hop_done;
static int hop_tick, hop_doorbell;

/* The reader thread: each scan's timestamp into the queue, then the doorbell (an eventfd). */
static void *hop_reader(void *arg) {
    (void)arg;
    for (;;) {
        int64_t t;
        ssize_t n = read(hop_tick, &t, sizeof t);
        if (n != (ssize_t)sizeof t) atomic_store(&hop_done, 1);
        else {
            uint_fast64_t head = atomic_load(&hop_head);
            if (head - atomic_load(&hop_tail) < HOP_QUEUE) { /* else the writer is 4096 behind: drop */
                hop_queue[head % HOP_QUEUE] = t;
                atomic_store(&hop_head, head + 1);
            }
        }
        uint64_t one = 1;
        if (write(hop_doorbell, &one, sizeof one) < 0) perror("cfanout: eventfd write");
        if (n != (ssize_t)sizeof t) return NULL;
    }
}

/* One send per client through the ring, 256 per submission; counts what each wrote. */
static void write_all_uring(struct io_uring *ring, const char *line, int len, uint64_t *written, uint64_t *dropped) {
    for (int first = 0; first < nclients; first += 256) {
        int n = nclients - first < 256 ? nclients - first : 256;
        for (int i = 0; i < n; i++)
            io_uring_prep_send(io_uring_get_sqe(ring), clients[first + i], line, (size_t)len, MSG_DONTWAIT | MSG_NOSIGNAL);
        io_uring_submit_and_wait(ring, (unsigned)n);
        struct io_uring_cqe *cqe;
        for (int done = 0; done < n; done++) {
            int rc = io_uring_wait_cqe(ring, &cqe);
            if (rc == -EINTR) { done--; continue; }
            if (rc != 0) { fprintf(stderr, "cfanout: io_uring_wait_cqe: %s\n", strerror(-rc)); exit(1); }
            if (cqe->res == len) (*written)++; else (*dropped)++;
            io_uring_cqe_seen(ring, cqe);
        }
    }
}

int main(int argc, char **argv) {
    int use_ring = 0, hop = 0, usage_error = argc < 3;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "io_uring") == 0) use_ring = 1;
        else if (strcmp(argv[i], "hop") == 0) hop = 1;
        else usage_error = 1;
    }
    if (usage_error) {
        fprintf(stderr, "usage: cfanout SOCKET_PATH TICK_FIFO [io_uring] [hop]\n");
        return 2;
    }
    struct io_uring ring;
    if (use_ring && io_uring_queue_init(256, &ring, 0) != 0) { perror("io_uring_queue_init"); return 1; }
    signal(SIGPIPE, SIG_IGN);
    int lfd = listen_on(argv[1]);
    if (lfd < 0) { perror("listen"); return 1; }
    int tick = open(argv[2], O_RDONLY | O_CLOEXEC);
    if (tick < 0) { perror("open tick fifo"); return 1; }
    if (hop) {
        hop_tick = tick;
        hop_doorbell = tick = eventfd(0, EFD_CLOEXEC);
        pthread_t reader;
        if (tick < 0 || pthread_create(&reader, NULL, hop_reader, NULL) != 0) { perror("cfanout: hop"); return 1; }
    }
    uint64_t seq = 0, dropped = 0, written = 0;
    char line[256];
    for (;;) {
        struct pollfd p[2] = {{.fd = lfd, .events = POLLIN}, {.fd = tick, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) { if (errno == EINTR) continue; break; }
        if (p[0].revents & POLLIN) accept_client(lfd);
        if (!(p[1].revents & (POLLIN | POLLHUP))) continue;
        uint64_t rings;
        if (hop && read(tick, &rings, sizeof rings) != (ssize_t)sizeof rings) break;
        for (;;) {
            int64_t t;
            if (hop) {
                uint_fast64_t tail = atomic_load(&hop_tail);
                if (tail == atomic_load(&hop_head)) break;
                t = hop_queue[tail % HOP_QUEUE];
                atomic_store(&hop_tail, tail + 1);
            } else if (read(tick, &t, sizeof t) != (ssize_t)sizeof t) {
                goto done; /* the feeder is done */
            }
            /* The length of tiltd's attitude line, so both move the same bytes. */
            int len = snprintf(line, sizeof line,
                               "{\"class\":\"attitude\",\"seq\":%" PRIu64 ",\"t_ns\":%" PRId64
                               ",\"q\":[0.962731,0.141547,-0.101813,0.207124],\"roll_deg\":17.16,"
                               "\"pitch_deg\":-11.46,\"yaw_deg\":24.02,\"at_rest\":false,"
                               "\"gyro_bias\":[0.00012,-0.00008,0.00003]}\n",
                               ++seq, t);
            if (use_ring) write_all_uring(&ring, line, len, &written, &dropped);
            else
                for (int i = 0; i < nclients; i++) {
                    if (write(clients[i], line, (size_t)len) == len) written++;
                    else dropped++;
                }
            if (!hop) break; /* one scan per poll, as before */
        }
        if (hop && atomic_load(&hop_done) && atomic_load(&hop_tail) == atomic_load(&hop_head)) break;
    }
done:
    fprintf(stderr, "cfanout: %" PRIu64 " lines written, %" PRIu64 " not (socket full)\n", written, dropped);
    return 0;
}
