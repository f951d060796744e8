/* SPDX-License-Identifier: MIT */
/* The SQLite schema of etl2sqlite (tools/sqlschema.c). Private to tools/. */
#ifndef ETL_TOOLS_SQLSCHEMA_H
#define ETL_TOOLS_SQLSCHEMA_H

#define SQLSCHEMA_VERSION 1

/* CREATE TABLE statements, run before the load. */
extern const char sqlschema_tables[];
/* CREATE INDEX statements, run after the rows are in. */
extern const char sqlschema_indexes[];
/* CREATE VIEW statements. */
extern const char sqlschema_views[];

#endif
