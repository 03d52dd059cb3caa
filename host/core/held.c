/* held.c: a call's events, kept until its last command is done.
 *
 * Each command of a call waits on the one before it, and the call's first
 * command may wait on a caller's event. When that event fails, PoCL 3.1
 * fails the commands behind it one after the other, and aborts the process
 * ("PTHREAD ERROR in pocl_update_event_failed") if the application has
 * released the event of one it reaches while that was still pending, which
 * the spec allows. So a call keeps each command's event until its last
 * command is done (complete or failed): chain.c holds them as it enqueues
 * (held_push), closes the call's group at its end (held_end_call) and
 * sweeps at every call's start and end (held_sweep), oldest group first.
 * Calls are chained, so their groups end in about the order they were
 * enqueued: a sweep stops at the first group still pending, and one that
 * ends out of turn is released a little later.
 *
 * A context released while a group is pending (behind a caller's event not
 * yet set) leaves it to the process's orphans, swept at each context's
 * release: a callback on the group's last event would do it sooner, but
 * PoCL 3.1 calls none for a failed event. */
#include "core/held.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int push(held_list *h, cl_event ev, int ends_call)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 16;
        held_event *grown = realloc(h->ev, cap * sizeof *grown);
        if (!grown)
            return 0;
        h->ev = grown;
        h->cap = cap;
    }
    h->ev[h->n++] = (held_event){ev, ends_call};
    return 1;
}

/* Held, or where there is no memory for it released, as the spec allows. */
static void hold(held_list *h, cl_event ev, int ends_call)
{
    if (!push(h, ev, ends_call))
        clReleaseEvent(ev);
}

void held_push(held_list *h, cl_event ev)
{
    hold(h, ev, 0);
}

void held_release(held_list *h, cl_event ev)
{
    hold(h, ev, 1);
}

void held_end_call(held_list *h, size_t from, cl_event last)
{
    if (h->n == from)
        return; /* one command: its event is the caller's and the context's */
    if (last) {
        clRetainEvent(last);
        if (push(h, last, 1))
            return;
        clReleaseEvent(last);
    }
    /* never runs, or no memory to hold the group's end: as the spec allows */
    while (h->n > from)
        clReleaseEvent(h->ev[--h->n].ev);
}

cl_int event_status(cl_event ev)
{
    cl_int s = CL_COMPLETE;
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
    return s;
}

int event_done(cl_event ev)
{
    return event_status(ev) <= CL_COMPLETE;
}

/* Releases the groups that are done: up to the first that is not, or
 * (all) every one, the others kept in order. */
static void sweep(held_list *h, int all)
{
    size_t kept = 0, start = 0; /* h->ev[0, kept) stay; the group from start on is next */
    for (size_t end = 0; end < h->n; ++end) {
        if (!h->ev[end].ends_call)
            continue;
        if (event_done(h->ev[end].ev)) {
            for (size_t i = start; i <= end; ++i)
                clReleaseEvent(h->ev[i].ev);
        } else if (!all) {
            break;
        } else {
            for (size_t i = start; i <= end; ++i)
                h->ev[kept++] = h->ev[i];
        }
        start = end + 1;
    }
    if (h->n > start && kept < start)
        memmove(h->ev + kept, h->ev + start, (h->n - start) * sizeof h->ev[0]);
    h->n = kept + h->n - start;
}

void held_sweep(held_list *h)
{
    sweep(h, 0);
}

static pthread_mutex_t orphans_lock = PTHREAD_MUTEX_INITIALIZER;
static held_list orphans;

void held_orphan(held_list *h)
{
    held_sweep(h);
    pthread_mutex_lock(&orphans_lock);
    sweep(&orphans, 1);
    for (size_t i = 0; i < h->n; ++i)
        hold(&orphans, h->ev[i].ev, h->ev[i].ends_call);
    if (!orphans.n) {
        free(orphans.ev);
        orphans = (held_list){0};
    }
    pthread_mutex_unlock(&orphans_lock);
    free(h->ev);
    *h = (held_list){0};
}

size_t held_orphans(void)
{
    pthread_mutex_lock(&orphans_lock);
    size_t n = orphans.n;
    pthread_mutex_unlock(&orphans_lock);
    return n;
}
