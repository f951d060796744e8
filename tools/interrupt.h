/* SPDX-License-Identifier: MIT */
/* Ctrl-C, SIGTERM and SIGHUP for the tools that write a file: they finish at their next step and
   leave nothing behind. Private to tools/. */
#ifndef ETL_TOOLS_INTERRUPT_H
#define ETL_TOOLS_INTERRUPT_H

#include <signal.h>

/* Set to 1 by the handler. */
extern volatile sig_atomic_t tool_interrupted;

/* Installs the handler for SIGINT, SIGTERM and SIGHUP. */
void tool_catch_signals(void);

#endif
