/* SPDX-License-Identifier: MIT */
/* TEMPORARY (branch i18-core): instrumentation manifests; replaced by the manifest work. */
#include "reader/reader.h"

int etl_decoder_add_defaults(etl_decoder *d)
{
    (void)d;
    return ETL_OK;
}

int etl_decoder_add_manifest(etl_decoder *d, const char *path)
{
    etl_decoder_set_error(d, "%s: manifests are not read yet", path);
    return ETL_FAILED;
}

int etl_decoder_add_manifest_memory(etl_decoder *d, const void *xml, size_t size, const char *name)
{
    (void)xml;
    (void)size;
    etl_decoder_set_error(d, "%s: manifests are not read yet", name);
    return ETL_FAILED;
}
