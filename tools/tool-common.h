/* What zkroute-bench and zkroute-fleet share: the command line as one
 * shell-quoted string (for the reports' "command" line), and the two
 * /proc readings both take (the load average; a process's CPU time). */
#ifndef ZKR_TOOL_COMMON_H
#define ZKR_TOOL_COMMON_H

/* argv[0..argc) joined by spaces, each word quoted for a POSIX shell when
 * it holds anything but a safe set of characters, so the line can be run
 * again as it is.  malloc'ed (the caller frees it); NULL when out of
 * memory. */
char *tool_shell_join(int argc, char **argv);

/* The 1-minute load average (/proc/loadavg), -1 when it cannot be read. */
double tool_loadavg1(void);

/* CPU seconds (user + system) process pid has used so far
 * (/proc/PID/stat), -1 when it cannot be read. */
double tool_pid_cpu_s(int pid);

#endif
