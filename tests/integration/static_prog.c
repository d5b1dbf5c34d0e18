/* A statically linked program: zkroute-run must refuse it, since the
 * loader that would honour LD_PRELOAD never runs (tests/integration/it_dropin.sh). */
int main(void) { return 0; }
