/* Names and texts: zkr_strerror() and zkr_err_name() for every code,
 * ZooKeeper's and zkroute's (generated from ZKR_ERRNO_MAP).  The names of
 * roles, policies and states are the words of the options table (zkr__options_*). */
#include "zkroute.h"

const char *zkr_strerror(int code) {
  switch (code) {
#define ZKR_ERR_TEXT_(name, num, text)                                                             \
  case num: return text;
    ZKR_ERRNO_MAP(ZKR_ERR_TEXT_)
#undef ZKR_ERR_TEXT_
  default: break;
  }
  /* ZooKeeper's zerror() never returns NULL either: unknown codes read
   * "unknown error". */
  return zerror(code);
}

const char *zkr_err_name(int code) {
  switch (code) {
#define ZKR_ERR_NAME_(name, num, text)                                                             \
  case num: return "ZKR_" #name;
    ZKR_ERRNO_MAP(ZKR_ERR_NAME_)
#undef ZKR_ERR_NAME_
#define ZKR_ZK_NAME_(name)                                                                         \
  case name: return #name;
    ZKR_ZK_NAME_(ZOK)
    ZKR_ZK_NAME_(ZSYSTEMERROR)
    ZKR_ZK_NAME_(ZRUNTIMEINCONSISTENCY)
    ZKR_ZK_NAME_(ZDATAINCONSISTENCY)
    ZKR_ZK_NAME_(ZCONNECTIONLOSS)
    ZKR_ZK_NAME_(ZMARSHALLINGERROR)
    ZKR_ZK_NAME_(ZUNIMPLEMENTED)
    ZKR_ZK_NAME_(ZOPERATIONTIMEOUT)
    ZKR_ZK_NAME_(ZBADARGUMENTS)
    ZKR_ZK_NAME_(ZINVALIDSTATE)
    ZKR_ZK_NAME_(ZNEWCONFIGNOQUORUM)
    ZKR_ZK_NAME_(ZRECONFIGINPROGRESS)
    ZKR_ZK_NAME_(ZSSLCONNECTIONERROR)
    ZKR_ZK_NAME_(ZAPIERROR)
    ZKR_ZK_NAME_(ZNONODE)
    ZKR_ZK_NAME_(ZNOAUTH)
    ZKR_ZK_NAME_(ZBADVERSION)
    ZKR_ZK_NAME_(ZNOCHILDRENFOREPHEMERALS)
    ZKR_ZK_NAME_(ZNODEEXISTS)
    ZKR_ZK_NAME_(ZNOTEMPTY)
    ZKR_ZK_NAME_(ZSESSIONEXPIRED)
    ZKR_ZK_NAME_(ZINVALIDCALLBACK)
    ZKR_ZK_NAME_(ZINVALIDACL)
    ZKR_ZK_NAME_(ZAUTHFAILED)
    ZKR_ZK_NAME_(ZCLOSING)
    ZKR_ZK_NAME_(ZNOTHING)
    ZKR_ZK_NAME_(ZSESSIONMOVED)
    ZKR_ZK_NAME_(ZNOTREADONLY)
    ZKR_ZK_NAME_(ZEPHEMERALONLOCALSESSION)
    ZKR_ZK_NAME_(ZNOWATCHER)
    ZKR_ZK_NAME_(ZRECONFIGDISABLED)
    ZKR_ZK_NAME_(ZSESSIONCLOSEDREQUIRESASLAUTH)
    ZKR_ZK_NAME_(ZTHROTTLEDOP)
#undef ZKR_ZK_NAME_
  default: return "UNKNOWN";
  }
}
