/* zkroute's own error codes: one X-macro table that generates the enum,
 * zkr_strerror() and zkr_err_name().  ZooKeeper's codes (ZOK, ZBADARGUMENTS,
 * ZCONNECTIONLOSS, ...) pass through zkroute unchanged; zkroute's live in a
 * range of their own, from -1000 down, so the two never collide. */
#ifndef ZKROUTE_ERRORS_H
#define ZKROUTE_ERRORS_H

#define ZKR_ERRNO_MAP(X)                                                                           \
  X(EHOSTS_EMPTY, -1001, "host list is empty")                                                     \
  X(EHOSTS_SPACE, -1002, "white space inside a host name or after a port")                         \
  X(EHOSTS_EMPTY_ENTRY, -1003, "host list has an entry of white space only")                       \
  X(EHOSTS_NO_PORT, -1004, "host entry has no port")                                               \
  X(EHOSTS_BAD_PORT, -1005, "port is not a number from 1 to 65535")                                \
  X(EHOSTS_BAD_HOST, -1006, "host name is empty, too long or has a bad character")                 \
  X(EHOSTS_BAD_IPV6, -1007, "host with ':' is not a valid IPv6 address")                           \
  X(EHOSTS_DUPLICATE, -1008, "host list names the same member twice (no longer returned: merged)") \
  X(EHOSTS_BAD_CHROOT, -1009, "chroot is not a valid absolute path")                               \
  X(EHOSTS_TOO_MANY, -1010, "host list has more members than ZKR_MAX_MEMBERS")                     \
  X(EHOSTS_TOO_LONG, -1011, "host list string is too long")                                        \
  X(EHOSTS_UNRESOLVED, -1012, "no host of the host list resolves to an address")                   \
  X(ESRVR_GARBAGE, -1020, "srvr reply not understood")                                             \
  X(ESRVR_TOO_BIG, -1021, "srvr reply larger than the size cap")                                   \
  X(ESRVR_NOT_SERVING, -1022, "server is not currently serving requests")                          \
  X(ESRVR_TIMEOUT, -1023, "srvr request timed out")                                                \
  X(ESRVR_CONNECT, -1024, "srvr connection failed or was reset")                                   \
  X(ESRVR_TRUNCATED, -1025, "srvr reply ended early")                                              \
  X(EINCALLBACK, -1030, "zkroute call made from inside a read selector")                           \
  X(ENOMEM, -1031, "out of memory")                                                                \
  X(ECLOSING, -1032, "handle is closing")                                                          \
  X(ECLOSED, -1033, "handle was closed, or is not a zkroute handle")                               \
  X(EOPTION, -1040, "unknown option name")                                                         \
  X(EOPTION_VALUE, -1041, "bad option value")                                                      \
  X(EOPTIONS_VERSION, -1042, "options struct version not supported")                               \
  X(EZONES_MEMBER, -1043, "zones option names a member not in the host list")                      \
  X(EZONES_COUNT, -1044, "zones option has not one label per member")                              \
  X(EZONES_DUPLICATE, -1045, "zones option labels a member twice")                                 \
  X(ENOMEMBER, -1050, "no usable member session")                                                  \
  X(EINIT, -1051, "could not create a member session")                                             \
  X(ETHREAD, -1052, "could not start a thread")                                                    \
  X(ETOOBIG, -1060,                                                                                \
    "request larger than the servers' packet limit (jute_maxbuffer, 1 MiB by default)")            \
  X(ECONFIG, -1070, "ensemble configuration (/zookeeper/config) not understood")

typedef enum {
#define ZKR_ERR_ENUM_(name, code, text) ZKR_##name = (code),
  ZKR_ERRNO_MAP(ZKR_ERR_ENUM_)
#undef ZKR_ERR_ENUM_
      ZKR_ERRNO_LAST_ = -1999
} zkr_errno_t;

#endif
