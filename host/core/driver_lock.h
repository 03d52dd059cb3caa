/* driver_lock.h: the one process-wide lock around what OpenCL drivers do
 * not take from several threads at once (driver_lock.c). */
#ifndef CLNZ_CORE_DRIVER_LOCK_H
#define CLNZ_CORE_DRIVER_LOCK_H

void driver_lock(void);
void driver_unlock(int *unused);

/* Holds the lock until the enclosing block ends, on every return. Blocks
 * that hold it never nest (it is not recursive): platform and device
 * discovery, context and queue creation, a program's build or cache load. */
#define DRIVER_HOLD()                                                                \
    int driver_held_ __attribute__((cleanup(driver_unlock), unused)) = (driver_lock(), 1)

#endif
