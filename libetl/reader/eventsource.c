/* SPDX-License-Identifier: MIT */
/* TEMPORARY (branch i18-core): EventSource manifests carried in traces; replaced by the manifest work. */
#include "reader/reader.h"

int etl_decoder_learn(etl_decoder *d, const etl_event *ev)
{
    (void)d;
    (void)ev;
    return ETL_OK;
}

void etl_decoder_learn_free(etl_decoder *d) { (void)d; }
