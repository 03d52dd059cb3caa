/* output_tmp.h: what output.c (files) and output_dir.c (folders) share:
 * the temporaries' names, the lock the signal thread takes before it
 * removes them, and the sweep of temporaries whose writer is gone. */
#ifndef CLNZ_IO_OUTPUT_TMP_H
#define CLNZ_IO_OUTPUT_TMP_H

#define TMP_PREFIX ".clnz-tmp-"
enum { TMP_RANDOM = 8, TMP_NAME = sizeof TMP_PREFIX - 1 + TMP_RANDOM };

/* A fresh temporary name, TMP_PREFIX and TMP_RANDOM letters or digits. */
void out_tmp_name(char out[TMP_NAME + 1]);
int out_is_tmp_name(const char *name);
/* The fatal signals go to one thread of ours (once per process, before any
 * other thread starts): it takes the registry lock, removes the named
 * temporaries (and calls the hook), and lets the process die. */
void out_signals_install(void);
void out_registry_lock(void);
void out_registry_unlock(void);
/* With the lock held, before a commit and after it: if a fatal signal has
 * come, never returns (the lock is let go and the signal thread ends the
 * process). */
void out_registry_stop_if_signalled(void);
/* Called by that thread under the lock: output_dir.c removes its folder. */
void out_set_signal_hook(void (*hook)(void));
/* Writes all n bytes (in pieces, through EINTR): 0, or -1 with errno. */
int out_write_all(int fd, const void *p, size_t n);
/* Removes the temporaries in a folder whose writer is gone. */
void out_remove_stale(int dirfd);
/* A temporary folder named `name` in dirfd (open as fd), removed with its
 * files when no writer holds its lock (output_dir.c). */
void out_dir_remove_if_stale(int dirfd, const char *name, int fd);

#endif
