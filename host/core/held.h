/* held.h: the events of a call's commands, kept until the call's last
 * command is done (held.c says why). */
#ifndef CLNZ_CORE_HELD_H
#define CLNZ_CORE_HELD_H

#include <CL/cl.h>
#include <stddef.h>

typedef struct {
    cl_event ev;
    int ends_call; /* a call's last event: its group is done when this is */
} held_event;

/* Oldest first, in groups: a call's events before its last, then its last
 * (a reference of the list's own). */
typedef struct {
    held_event *ev;
    size_t n, cap;
} held_list;

/* An event's execution status (CL_COMPLETE where it cannot be read), and
 * whether it is done: complete, or failed (waiting returns at once). */
cl_int event_status(cl_event ev);
int event_done(cl_event ev);
/* Holds a command's event once the call has enqueued the next (released,
 * as the spec allows, where there is no memory to hold it). */
void held_push(held_list *h, cl_event ev);
/* An event of the context's that may still be pending (an earlier call's
 * last, which later calls wait on), released once it is done: a group of
 * its own. */
void held_release(held_list *h, cl_event ev);
/* The call whose events from index `from` on are held ended with `last`
 * (retained here), or never runs (NULL): its group is closed. */
void held_end_call(held_list *h, size_t from, cl_event last);
/* Releases the groups whose last event is done (complete or failed), up
 * to the first that is not: calls' groups end about in order. */
void held_sweep(held_list *h);
/* The context goes: the groups still pending move to a list of the
 * process's, released by a later context's release once they are done
 * (every group that is, wherever it lies: one a caller never sets holds up
 * none behind it); h is empty and freed after. */
void held_orphan(held_list *h);
/* How many events the process's orphans hold now (for the tests). */
size_t held_orphans(void);

#endif
