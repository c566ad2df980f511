/*
 * log.h - leveled logging to stderr. stdout is reserved for MCP on stdio.
 * A sink hook lets the supervisor forward lines to MCP clients later.
 */
#ifndef TABVISOR_LOG_H
#define TABVISOR_LOG_H

enum log_level { LOG_DEBUG, LOG_INFO, LOG_NOTICE, LOG_WARNING, LOG_ERROR };

void log_init(const char *prog, enum log_level min);
void log_set_level(enum log_level min);
enum log_level log_level_from_name(const char *name); /* "debug".."error"; INFO if unknown */
const char *log_level_name(enum log_level lvl);

/* A second destination for log lines (the supervisor forwards them to MCP
 * clients as notifications/message). fn gets each line at or above min,
 * without the timestamp prefix, even below the stderr level. It is called
 * only on the thread that installed it and never re-entered: lines logged
 * from inside fn go to stderr only. fn NULL removes the sink. */
typedef void (*log_sink_fn)(void *ud, enum log_level lvl, const char *msg);
void log_set_sink(log_sink_fn fn, void *ud, enum log_level min);
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)

#endif
