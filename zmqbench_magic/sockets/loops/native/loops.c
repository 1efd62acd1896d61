/* The hot loops of a sample in C, driving the libzmq that pyzmq loaded, on sockets
 * pyzmq made (their handles come from Socket.underlying). Called through ctypes,
 * which releases the GIL for the call. Each loop returns how far it got: a socket
 * timeout (EAGAIN) hands control back to Python, which checks the far end is alive
 * and calls again from there, as the Python loops do.
 *
 * Only the few libzmq entry points used here are declared (the wheel ships no
 * zmq.h); zmq_msg_t is libzmq's opaque 64-byte message. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define ZMQ_DONTWAIT 1
#define ZMQ_SNDMORE 2
#define ZMQ_POLLIN 1

typedef struct { unsigned char opaque[64]; } __attribute__((aligned(8))) zmq_msg_t;
typedef void(zmq_free_fn)(void *data, void *hint);

int zmq_send(void *socket, const void *buf, size_t len, int flags);
int zmq_msg_init(zmq_msg_t *msg);
int zmq_msg_init_size(zmq_msg_t *msg, size_t size);
int zmq_msg_init_data(zmq_msg_t *msg, void *data, size_t size, zmq_free_fn *ffn, void *hint);
int zmq_msg_send(zmq_msg_t *msg, void *socket, int flags);
int zmq_msg_recv(zmq_msg_t *msg, void *socket, int flags);
int zmq_msg_close(zmq_msg_t *msg);
int zmq_msg_more(const zmq_msg_t *msg);
size_t zmq_msg_size(const zmq_msg_t *msg);
typedef struct { void *socket; int fd; short events; short revents; } zmq_pollitem_t;
int zmq_poll(zmq_pollitem_t *items, int nitems, long timeout);
void *zmq_msg_data(zmq_msg_t *msg);
int zmq_errno(void);

/* Python's time.perf_counter() on Linux: stamps from both sides compare. */
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The payload is owned by Python for the whole sample: nothing to free. */
static void keep(void *data, void *hint) { (void)data; (void)hint; }

static int send_flags(void *socket, const char *buf, size_t size, int zero_copy, int flags) {
    if (!zero_copy)
        return zmq_send(socket, buf, size, flags);
    zmq_msg_t msg;
    zmq_msg_init_data(&msg, (void *)buf, size, keep, NULL);
    int rc = zmq_msg_send(&msg, socket, flags);
    if (rc < 0)
        zmq_msg_close(&msg);
    return rc;
}

static int send_one(void *socket, const char *buf, size_t size, int zero_copy) {
    return send_flags(socket, buf, size, zero_copy, 0);
}

/* The error of the last call, for Python to name (EAGAIN: a timeout). */
int zb_errno(void) { return zmq_errno(); }
int zb_eagain(void) { return EAGAIN; }

/* Send up to `count` messages of `size` bytes; returns how many went (fewer on a
 * timeout), or -1 on another error. */
int64_t zb_send(void *socket, const char *buf, size_t size, int64_t count, int zero_copy) {
    for (int64_t i = 0; i < count; i++)
        if (send_one(socket, buf, size, zero_copy) < 0)
            return zmq_errno() == EAGAIN ? i : -1;
    return count;
}

/* Messages `first` to `count - 1`, message i at its intended time
 * `start + i * interval` (the open loop's schedule, on Python's perf_counter clock):
 * early, it waits (a sleep for waits of 2 ms or more, then a spin, as the Python
 * pacer does); late, it sends at once. Each send is tried without waiting; a full
 * queue makes it wait for room in a blocking send (up to the socket's send
 * timeout), and that wait adds to *blocked. *ended is the last send's time. Returns
 * how far it got (fewer than `count` on a send timeout: Python checks the
 * receivers and calls again from there), or -1 on another error. */
int64_t zb_send_paced(void *socket, const char *buf, size_t size, int64_t first, int64_t count,
                      int zero_copy, double start, double interval, double *blocked,
                      double *ended) {
    for (int64_t i = first; i < count; i++) {
        double due = start + (double)i * interval, wait = due - now();
        if (wait >= 2e-3) {
            double nap = wait - 1e-3;
            struct timespec t = {(time_t)nap, (long)((nap - (double)(time_t)nap) * 1e9)};
            nanosleep(&t, NULL);
        }
        while (now() < due)
            ;
        if (send_flags(socket, buf, size, zero_copy, ZMQ_DONTWAIT) < 0) {
            if (zmq_errno() != EAGAIN)
                return -1;
            double since = now();
            int rc = send_flags(socket, buf, size, zero_copy, 0);
            *blocked += now() - since;
            if (rc < 0)
                return zmq_errno() == EAGAIN ? i : -1;
        }
        *ended = now();
    }
    return count;
}

/* Receive up to `count` messages. The first receive's time goes to *first, every
 * later one's to *last (one clock read per message costs ~20 ns here, unlike in
 * Python). Returns how many arrived (fewer on a timeout), or -1 on another error. */
int64_t zb_sink(void *socket, int64_t count, double *first, double *last) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    int64_t received = 0;
    for (; received < count; received++) {
        if (zmq_msg_recv(&msg, socket, 0) < 0) {
            int error = zmq_errno();
            zmq_msg_close(&msg);
            return error == EAGAIN ? received : -1;
        }
        *last = now();
        if (received == 0)
            *first = *last;
    }
    zmq_msg_close(&msg);
    return received;
}

/* Round trips `done + 1` to `count`: send, wait for the reply, stamp stamps[i]
 * (stamps[0] is the start). *pending says the request of round trip `done + 1` is
 * already out (a timeout ended the last call while its reply was awaited); it is
 * set again if this call ends that way. Returns the round trips done, or -1.
 *
 * The far end echoes the payload, so each request after a call's first is the reply
 * just received (the same bytes), as libzmq's remote_lat and pyzmq's perf.py send
 * theirs: a buffer the receive has just written, where the payload's own was last
 * read a round trip ago. */
int64_t zb_ping(void *socket, const char *buf, size_t size, int64_t done, int64_t count,
                int zero_copy, int *pending, double *stamps) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    int have_reply = 0;
    for (; done < count; done++) {
        if (!*pending) {
            int rc = !have_reply ? send_one(socket, buf, size, zero_copy)
                     : zero_copy ? zmq_msg_send(&msg, socket, 0)
                                 : zmq_send(socket, zmq_msg_data(&msg), zmq_msg_size(&msg), 0);
            if (rc < 0)
                break;
        }
        *pending = 1;
        if (zmq_msg_recv(&msg, socket, 0) < 0)
            break;
        *pending = 0;
        stamps[done + 1] = now();
        have_reply = 1;
    }
    int error = done < count ? zmq_errno() : 0;
    zmq_msg_close(&msg);
    return done < count && error != EAGAIN ? -1 : done;
}

/* Send back each of `count` requests; with `zero_copy` the received message itself,
 * else a copy of its bytes. Returns how many were echoed, or -1. */
int64_t zb_echo(void *socket, int64_t count, int zero_copy) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    int64_t done = 0;
    for (; done < count; done++) {
        if (zmq_msg_recv(&msg, socket, 0) < 0)
            break;
        int rc = zero_copy ? zmq_msg_send(&msg, socket, 0)
                           : zmq_send(socket, zmq_msg_data(&msg), zmq_msg_size(&msg), 0);
        if (rc < 0)
            break;
        if (zero_copy)
            zmq_msg_init(&msg); /* sent: msg now empty, ready for the next receive */
    }
    int error = done < count ? zmq_errno() : 0;
    zmq_msg_close(&msg);
    return done < count && error != EAGAIN ? -1 : done;
}

/* Open loop (latency under load): message i is due at start + i * interval, sent
 * whether or not earlier replies have come back (at most `max_in_flight` unanswered,
 * what the queues between the ends hold), a late sender catching up at once. Each
 * send's time goes to sent_at[i], each reply's to replied_at[i] (replies come back
 * in order over one DEALER/ROUTER pair). *sent and *received say where a previous
 * call stopped. Longer than `liveness` seconds with nothing sent or answered (a
 * dead far end: replies stop, and sends fail once its connection is gone) returns,
 * for Python to check the far end. Returns replies received, or -1.
 *
 * Waits of 2 ms or more sleep in zmq_poll (woken by a reply); shorter ones spin, as
 * a millisecond-grained poll cannot keep a finer schedule. */
int64_t zb_pace(void *socket, const char *buf, size_t size, int64_t count, int zero_copy,
                double start, double interval, int64_t max_in_flight, double liveness,
                int64_t *sent, int64_t *received, double *sent_at, double *replied_at) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    zmq_pollitem_t item = {socket, 0, ZMQ_POLLIN, 0};
    double progress = now();
    int64_t result = -2;
    while (*received < count) {
        double t;
        int moved = 0;
        while (*sent < count && *sent - *received < max_in_flight
               && start + (double)*sent * interval <= (t = now())) {
            if (send_flags(socket, buf, size, zero_copy, ZMQ_DONTWAIT) < 0) {
                if (zmq_errno() != EAGAIN)
                    result = -1;
                break;
            }
            sent_at[(*sent)++] = t;
            moved = 1;
        }
        if (result == -1)
            break;
        while (*received < *sent) {
            if (zmq_msg_recv(&msg, socket, ZMQ_DONTWAIT) < 0) {
                if (zmq_errno() != EAGAIN)
                    result = -1;
                break;
            }
            replied_at[(*received)++] = now();
            moved = 1;
        }
        if (result == -1)
            break;
        t = now();
        if (moved) {
            progress = t;
            continue;
        }
        if (t - progress > liveness) {
            result = *received; /* nothing sent or answered for a while: Python looks */
            break;
        }
        double wait = *sent < count ? start + (double)*sent * interval - t : liveness;
        if (wait >= 2e-3 && zmq_poll(&item, 1, (long)(wait * 1e3) - 1) < 0) {
            result = -1;
            break;
        }
    }
    zmq_msg_close(&msg);
    return result == -2 ? *received : result;
}

/* The ROUTER far end of the open loop: send back each of `count` requests (the
 * routing frame first, then the payload frames), as received (`zero_copy`) or as a
 * copy of their bytes. Returns how many were echoed, or -1. */
int64_t zb_route(void *socket, int64_t count, int zero_copy) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    int64_t done = 0;
    int failed = 0;
    for (; done < count && !failed; done++) {
        int more = 1;
        while (more) {
            if (zmq_msg_recv(&msg, socket, 0) < 0) {
                failed = 1;
                break;
            }
            more = zmq_msg_more(&msg);
            int flags = more ? ZMQ_SNDMORE : 0;
            int rc = zero_copy ? zmq_msg_send(&msg, socket, flags)
                               : zmq_send(socket, zmq_msg_data(&msg), zmq_msg_size(&msg), flags);
            if (rc < 0) {
                failed = 1;
                break;
            }
            if (zero_copy)
                zmq_msg_init(&msg);
        }
    }
    if (failed)
        done--;
    int error = done < count ? zmq_errno() : 0;
    zmq_msg_close(&msg);
    return done < count && error != EAGAIN ? -1 : done;
}

/* Numbered messages (--sequence true): a stamp of 8 bytes, little-endian, at the start
 * of each, the sender's index in its top 16 bits and the message's number in the low
 * 48 (zmqbench_magic/sockets/numbering.py says the same for Python). */
#define NUMBER_BITS 48
#define NUMBER_MASK ((UINT64_C(1) << NUMBER_BITS) - 1)

/* Send messages `first` to `count` of `sender`, each built fresh (zmq_msg_init_size,
 * a copy of the payload, the stamp), whatever --copy says: the stamp differs per
 * message. Returns how many went (fewer on a timeout), or -1. */
int64_t zb_send_numbered(void *socket, const char *buf, size_t size, int64_t first,
                         int64_t count, int64_t sender) {
    uint64_t base = (uint64_t)sender << NUMBER_BITS;
    for (int64_t i = first; i < count; i++) {
        zmq_msg_t msg;
        if (zmq_msg_init_size(&msg, size) < 0)
            return -1;
        unsigned char *data = zmq_msg_data(&msg);
        memcpy(data, buf, size);
        uint64_t stamp = base | (uint64_t)i;
        for (int byte = 0; byte < 8; byte++)
            data[byte] = (unsigned char)(stamp >> (8 * byte));
        if (zmq_msg_send(&msg, socket, 0) < 0) {
            zmq_msg_close(&msg);
            return zmq_errno() == EAGAIN ? i - first : -1;
        }
    }
    return count - first;
}

/* As zb_sink, each message's stamp read into a receiver's tally (numbering.Tally):
 * `slots` maps a sender's index (below `senders`) to its slot, -1 if not expected;
 * each slot has `numbers` bits of `seen` and its next expected number in `nexts`;
 * a number below that, or from a sender or of a number not expected, counts in
 * *reordered. */
int64_t zb_sink_numbered(void *socket, int64_t count, double *first, double *last,
                         const int32_t *slots, int64_t senders, int64_t numbers,
                         unsigned char *seen, int64_t *nexts, int64_t *reordered) {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    int64_t width = (numbers + 7) / 8 * 8; /* bits per slot, whole bytes */
    int64_t received = 0;
    for (; received < count; received++) {
        if (zmq_msg_recv(&msg, socket, 0) < 0) {
            int error = zmq_errno();
            zmq_msg_close(&msg);
            return error == EAGAIN ? received : -1;
        }
        *last = now();
        if (received == 0)
            *first = *last;
        const unsigned char *data = zmq_msg_data(&msg);
        if (zmq_msg_size(&msg) < 8) {
            (*reordered)++;
            continue;
        }
        uint64_t stamp = 0;
        for (int byte = 7; byte >= 0; byte--)
            stamp = stamp << 8 | data[byte];
        uint64_t sender = stamp >> NUMBER_BITS;
        int64_t number = (int64_t)(stamp & NUMBER_MASK);
        int32_t slot = sender < (uint64_t)senders ? slots[sender] : -1;
        if (slot < 0 || number >= numbers) {
            (*reordered)++;
            continue;
        }
        if (number < nexts[slot])
            (*reordered)++;
        else
            nexts[slot] = number + 1;
        int64_t at = slot * width + number;
        seen[at >> 3] |= (unsigned char)(1u << (at & 7));
    }
    zmq_msg_close(&msg);
    return received;
}
