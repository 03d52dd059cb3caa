/* devices.h: device discovery shared by the context layer. */
#ifndef CLNZ_DEVICES_H
#define CLNZ_DEVICES_H
#include "internal.h"

/* "P:D" with two non-negative decimal numbers; returns 0 if malformed. */
int devices_parse_selector(const char *s, int *platform, int *device);
/* The device a selector names (NULL: CLNZ_DEVICE, else the default). */
clnz_status devices_find(const char *selector, cl_platform_id *platform, cl_device_id *device,
                         char *msg, size_t msg_size);
#endif
