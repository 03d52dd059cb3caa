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

/* Holds a command's event once the call has enqueued the next (released,
 * as the spec allows, where there is no memory to hold it). */
void held_push(held_list *h, cl_event ev);
/* The call whose events from index `from` on are held ended with `last`
 * (retained here), or never runs (NULL): its group is closed. */
void held_end_call(held_list *h, size_t from, cl_event last);
/* Releases the groups whose last event is done (complete or failed). */
void held_sweep(held_list *h);
/* The context goes: the groups still pending move to a list of the
 * process's, released by a later context's release once they are done;
 * h is empty and freed after. */
void held_orphan(held_list *h);

#endif
