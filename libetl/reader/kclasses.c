/* SPDX-License-Identifier: MIT */
/* TEMPORARY (branch i18-core): the kernel's MOF classes as schemas; filled by the kernel-classes work. */
#include "reader/reader.h"

int etl_decoder_add_builtin(etl_decoder *d)
{
    (void)d;
    return ETL_OK;
}
