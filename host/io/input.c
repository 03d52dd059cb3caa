/* input.c: the clnz command's input files, opened once and read front to
 * back with read(2).
 *
 * Nothing is mapped: a file that another process cuts short while clnz
 * reads it is a read that comes up short (an error), where a mapping would
 * kill the process with SIGBUS. FIFOs and pipes (/dev/stdin) are streams:
 * opened without blocking, then given IO_FIFO_WAIT_MS for a writer to turn
 * up, so an input nobody writes is an error rather than a hang. Devices,
 * directories and sockets are refused at open. Also the memory arrays are
 * read into (io_data_alloc). */
#define _GNU_SOURCE
#include "io/io.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

size_t io_escape(const char *s, size_t n, int escape_high, char *buf, size_t k, size_t size,
                 size_t *used)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    for (; i < n && k + 8 < size; ++i) { /* room for an escape, "...'" and the NUL */
        unsigned char c = (unsigned char)s[i];
        if (c == '\n' || c == '\t' || c == '\r') {
            buf[k++] = '\\';
            buf[k++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        } else if (c < 0x20 || c == 0x7f || (escape_high && c > 0x7f)) {
            buf[k++] = '\\', buf[k++] = 'x', buf[k++] = hex[c >> 4], buf[k++] = hex[c & 15];
        } else {
            if (c == '\'' || c == '\\')
                buf[k++] = '\\';
            buf[k++] = (char)c;
        }
    }
    *used = i;
    return k;
}

const char *io_quote(const char *path, char *buf, size_t n)
{
    size_t len = strlen(path), used;
    buf[0] = '\'';
    size_t k = io_escape(path, len, 0, buf, 1, n, &used);
    if (used < len) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

char *io_show(const char *path)
{
    size_t len = strlen(path);
    int plain = len > 0;
    for (const unsigned char *p = (const unsigned char *)path; *p && plain; ++p)
        plain = *p > ' ' && *p < 0x7f && *p != '\'' && *p != '\\';
    if (plain)
        return strdup(path);
    if (len > (SIZE_MAX - 16) / 4)
        return NULL;
    size_t n = 4 * len + 16; /* \xNN for every byte: io_quote cuts nothing */
    char *buf = malloc(n);
    return buf ? (char *)io_quote(path, buf, n) : NULL;
}

/* A stream opened without blocking: waits for a writer (a FIFO nobody has
 * opened yet reads as empty), then makes reads block as usual. */
static int stream_start(in_file *f, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    int waited = 0;
    for (;;) {
        ssize_t n = read(f->fd, f->ahead, sizeof f->ahead);
        if (n > 0) {
            f->ahead_len = (size_t)n;
            break;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN) /* a writer is there; no bytes yet */
            break;
        if (n < 0)
            FAIL("cannot read %s: %s", io_quote(f->path, q, sizeof q), strerror(errno));
        if (waited) /* a writer came and went: an empty stream */
            break;
        /* No writer: poll wakes when one opens the FIFO (Linux reports no
         * hang-up on a FIFO until a writer has been there) or, for a pipe
         * whose writer has gone, at once. */
        struct pollfd p = {f->fd, POLLIN, 0};
        int r = poll(&p, 1, IO_FIFO_WAIT_MS);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            FAIL("%s: no process opened the FIFO for writing within %d s",
                 io_quote(f->path, q, sizeof q), IO_FIFO_WAIT_MS / 1000);
        waited = 1;
    }
    int fl = fcntl(f->fd, F_GETFL);
    if (fl < 0 || fcntl(f->fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        FAIL("cannot read %s: %s", io_quote(f->path, q, sizeof q), strerror(errno));
    return 0;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

unsigned io_std_closed;

int in_open(in_file *f, const char *path, char *err, size_t err_size)
{
    memset(f, 0, sizeof *f);
    /* "-" is standard input: a copy of descriptor 0, left blocking (the
     * writer is there from the start, however long it takes to write) */
    int is_stdin = strcmp(path, "-") == 0;
    f->path = path = is_stdin ? IN_STDIN_NAME : path;
    f->fd = -1;
    if (is_stdin && (io_std_closed & 1u << STDIN_FILENO))
        FAIL("standard input is closed: '-' has nothing to read");
    char q[IO_QUOTE_MAX];
    /* O_NONBLOCK: opening a FIFO must not wait for a writer */
    f->fd = is_stdin ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0)
                     : open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (f->fd < 0)
        FAIL("cannot open %s: %s", io_quote(path, q, sizeof q), strerror(errno));
    struct stat sb;
    if (fstat(f->fd, &sb) != 0) {
        int e = errno;
        in_close(f);
        FAIL("cannot open %s: %s", io_quote(path, q, sizeof q), strerror(e));
    }
    if (S_ISREG(sb.st_mode)) {
        /* standard input redirected from a file may start past its start */
        off_t at = is_stdin ? lseek(f->fd, 0, SEEK_CUR) : 0;
        f->size = (uint64_t)sb.st_size - (uint64_t)(at > 0 && at <= sb.st_size ? at : 0);
        return 0;
    }
    if (is_stdin && isatty(f->fd)) {
        in_close(f);
        FAIL("standard input is a terminal: pipe a .npy into clnz, or redirect one with '<'");
    }
    if (!S_ISFIFO(sb.st_mode)) {
        in_close(f);
        FAIL("%s is %s: clnz reads regular files, FIFOs and pipes", io_quote(path, q, sizeof q),
             kind_of(sb.st_mode));
    }
    f->stream = 1;
    if (stream_start(f, err, err_size)) {
        in_close(f);
        return -1;
    }
    return 0;
}

void in_close(in_file *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
}

int64_t in_read(in_file *f, void *buf, uint64_t n)
{
    unsigned char *out = buf;
    uint64_t got = 0;
    while (got < n && f->ahead_pos < f->ahead_len)
        out[got++] = f->ahead[f->ahead_pos++];
    while (got < n) {
        size_t want = n - got > (1u << 30) ? (1u << 30) : (size_t)(n - got);
        ssize_t r = read(f->fd, out + got, want);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (uint64_t)r;
    }
    return (int64_t)got;
}

size_t in_peek(in_file *f, void *buf, size_t n)
{
    if (n > sizeof f->ahead)
        n = sizeof f->ahead;
    /* top up what is read ahead: the bytes already there stay first */
    while (f->ahead_len < n) {
        ssize_t r = read(f->fd, f->ahead + f->ahead_len, n - f->ahead_len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        f->ahead_len += (size_t)r;
    }
    size_t have = f->ahead_len - f->ahead_pos;
    if (n > have)
        n = have;
    memcpy(buf, f->ahead + f->ahead_pos, n);
    return n;
}

unsigned char *in_slurp(in_file *f, size_t *len, char *err, size_t err_size)
{
    char q[IO_QUOTE_MAX];
    /* a regular file in one read of its size; a stream in growing steps */
    size_t cap = f->stream ? (size_t)1 << 16 : (size_t)f->size + 1, n = 0;
    if (!f->stream && f->size >= SIZE_MAX) {
        snprintf(err, err_size, "%s: too large", io_quote(f->path, q, sizeof q));
        return NULL;
    }
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            snprintf(err, err_size, "%s: out of memory", io_quote(f->path, q, sizeof q));
            return NULL;
        }
        int64_t r = in_read(f, buf + n, cap - 1 - n);
        if (r < 0) {
            snprintf(err, err_size, "cannot read %s: %s", io_quote(f->path, q, sizeof q),
                     strerror(errno));
            free(buf);
            return NULL;
        }
        n += (size_t)r;
        if (n < cap - 1 || !f->stream)
            break;
        unsigned char *more = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
        if (!more)
            free(buf);
        buf = more;
        cap *= 2;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

void *io_data_alloc(size_t bytes)
{
    int huge = bytes >= IO_HUGE_MIN_BYTES;
    void *p = NULL;
    if (posix_memalign(&p, huge ? IO_HUGE_PAGE : 4096, bytes ? bytes : 1) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    if (huge) /* a hint: where it is refused, 4 KiB pages as before */
        madvise(p, bytes / IO_HUGE_PAGE * IO_HUGE_PAGE, MADV_HUGEPAGE);
#endif
    return p;
}
