/*
 * uploads.h - the bounds of one browser_file_upload (or browser_drop) call,
 * which the supervisor (files from the client's roots or --upload-dir,
 * supervisor/upload_roots.c) and the worker (files of the session's own
 * directory, worker/tools/upload.c) both hold. Its files reach the page as
 * base64 in one command (bridge_command.h bounds that at 48 MiB).
 */
#ifndef TABVISOR_UPLOADS_H
#define TABVISOR_UPLOADS_H

#define UPLOAD_MAX_FILES 64
#define UPLOAD_MAX_BYTES (32u * 1024 * 1024) /* all files of one call */

/* The argument the supervisor adds to a call's arguments for the worker:
 * {path: {"name", "data" (base64)}} for each path it read. */
#define UPLOAD_FILES_ARG "_files"

#endif
