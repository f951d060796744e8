/* SPDX-License-Identifier: MIT */
/* placeholder, being written */
#include <check.h>
int main(void) { return 0; }
