/* SPDX-License-Identifier: MIT */
/* The tools' handler of SIGINT, SIGTERM and SIGHUP (tools/interrupt.h). */
#include <string.h>

#include "interrupt.h"

volatile sig_atomic_t tool_interrupted;

static void on_signal(int sig)
{
    (void)sig;
    tool_interrupted = 1;
}

void tool_catch_signals(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}
