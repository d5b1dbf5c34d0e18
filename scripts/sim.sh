#!/usr/bin/env bash
# `make sim`: explores new seeds with tests/sim/zkroute-sim (docs/simulation.md).
# SEEDS new seeds (default 1000), or SIM_SECONDS of wall time; SIM_START
# the first seed (default: a random one); SIM_MODE stock or routed;
# SIM_JOBS worker processes; SIM_ARGS more options, split on blanks (e.g.
# "--slow-calls --consistency session").  Prints each failing seed with the command that
# replays it, then how many schedules ran; exits non-zero if any failed.
set -u
SIM=${SIM:-tests/sim/zkroute-sim}
args=(--mode "${SIM_MODE:-stock}" --jobs "${SIM_JOBS:-2}")
if [ -n "${SIM_SECONDS:-}" ]; then
  args+=(--seconds "$SIM_SECONDS")
else
  args+=(--seeds "${SEEDS:-1000}")
fi
if [ -n "${SIM_START:-}" ]; then args+=(--start "$SIM_START"); fi
# shellcheck disable=SC2206 # SIM_ARGS is a list of words on purpose
if [ -n "${SIM_ARGS:-}" ]; then args+=($SIM_ARGS); fi
exec "$SIM" "${args[@]}"
