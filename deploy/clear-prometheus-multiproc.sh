#!/bin/sh
# Clears a Prometheus multiprocess directory of the files of processes that are gone (run by hirekit-web.service
# before gunicorn starts). prometheus_client names them <kind>_<pid>.db; a live process's files (an RQ worker sharing
# the directory) are kept, so its counters stay in /metrics. Without this they pile up across restarts and every
# scrape reads them all.
set -eu
dir="${1:-${PROMETHEUS_MULTIPROC_DIR:?PROMETHEUS_MULTIPROC_DIR is not set}}"
[ -d "$dir" ] || exit 0
for file in "$dir"/*.db; do
  [ -e "$file" ] || continue
  pid="${file##*_}"
  pid="${pid%.db}"
  case "$pid" in
    ''|*[!0-9]*) rm -f "$file" ;;  # not a per-process file of ours: a leftover either way
    *) [ -d "/proc/$pid" ] || rm -f "$file" ;;
  esac
done
