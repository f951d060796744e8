/* SPDX-License-Identifier: MIT */
/* Private to libetl: the session control protocol's pieces that its unit test reaches (engine/control.c). */
#ifndef LIBETL_ENGINE_CONTROL_H
#define LIBETL_ENGINE_CONTROL_H
#ifndef ETL_BUILDING_LIBRARY
#error "engine/control.h is private to libetl: include <etl.h>"
#endif

#include <stddef.h>

#include "etl.h"

/* ---- the control socket (engine/control.c) ---- */

/* RUNTIME/KEY.sock, the one place it is built: ETL_OK, or ETL_FAILED with a message in err
   (errno EINVAL for a name that is not one, else the runtime directory's or ENAMETOOLONG). */
int etl_control_socket_path(const char *name, char *out, size_t size, char *err, size_t errsize);
/*
 * Connects to the controller of name: the socket, or -1 with errno ENOENT (no session),
 * ECONNREFUSED (orphaned: the socket is there, no live controller holds the name), ETIMEDOUT
 * (a live controller has held the name for etl_control_wait_ms without listening), with err
 * empty; or another failure, err saying why (for EINVAL, that name is not a session name).
 * pid gets the controller's pid for ETIMEDOUT.
 */
int etl_control_connect(const char *name, long *pid, char *err, size_t errsize);
/* How long a client waits, in ms, for the socket of a name that a live controller holds
   (5000): the name is claimed before the session starts, the socket listened on after. */
extern int etl_control_wait_ms;

#endif /* LIBETL_ENGINE_CONTROL_H */
