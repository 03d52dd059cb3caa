/* devices.h: finding OpenCL devices and naming them (devices.c). */
#ifndef CLNZ_CORE_DEVICES_H
#define CLNZ_CORE_DEVICES_H

#include "core/context.h"

/* "P:D" with two non-negative decimal numbers; returns 0 if malformed. */
int devices_parse_selector(const char *s, int *platform, int *device);
/* The device a selector names (NULL: CLNZ_DEVICE, else the default). */
clnz_status devices_find(const char *selector, cl_platform_id *platform, cl_device_id *device,
                         char *msg, size_t msg_size);
/* Who a device is: the key of its cache files. */
void ident_of_device(cl_device_id dev, device_ident *id);
/* Whether an extension list (CL_DEVICE_EXTENSIONS: names separated by
 * spaces) holds `name` as a whole name, and whether a device's does. */
int devices_list_has(const char *list, const char *name);
int devices_have_extension(cl_device_id dev, const char *name);

#endif
