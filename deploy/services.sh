#!/usr/bin/env bash
# Installs (from Debian's packages, where absent) and starts the servers the full test suite talks to:
# PostgreSQL on 127.0.0.1:5432 (trust auth on loopback, user postgres, database test) and Redis on 127.0.0.1:6379,
# plus the tools some tests drive (nginx, chromium, jq, curl). Idempotent: what already answers is left alone.
# Needs root and apt-get to install; without them it starts what is installed and says what is missing.
set -euo pipefail

log() { printf 'services: %s\n' "$*"; }

can_install() { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; }

install_missing() {
  local packages=()
  command -v pg_ctlcluster >/dev/null 2>&1 && ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 \
    || packages+=(postgresql)
  command -v redis-server >/dev/null 2>&1 || packages+=(redis-server)
  command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || packages+=(nginx)
  command -v chromium >/dev/null 2>&1 || packages+=(chromium)
  command -v jq >/dev/null 2>&1 || packages+=(jq)
  command -v curl >/dev/null 2>&1 || packages+=(curl)
  [ "${#packages[@]}" -eq 0 ] && return 0
  if ! can_install; then
    log "missing ${packages[*]} (install them as root with apt-get); their tests skip"
    return 0
  fi
  log "installing ${packages[*]}"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends "${packages[@]}"; } >/tmp/hirekit-services-apt.log 2>&1; then
    log "could not install ${packages[*]} (see /tmp/hirekit-services-apt.log); their tests skip"
  fi
}

start_postgresql() {
  if pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
    log "PostgreSQL already answers on 127.0.0.1:5432"
  else
    command -v pg_ctlcluster >/dev/null 2>&1 || { log "PostgreSQL is not installed"; return 0; }
    local version
    version="$(ls /usr/lib/postgresql | sort -V | tail -1)"
    if [ ! -d "/etc/postgresql/$version/main" ]; then
      pg_createcluster "$version" main >/dev/null
    fi
    local hba="/etc/postgresql/$version/main/pg_hba.conf"
    # trust on loopback only: this server is for tests and development, never for data that matters
    if ! grep -q '^# hirekit: trust on loopback' "$hba"; then
      {
        echo '# hirekit: trust on loopback'
        echo 'host all all 127.0.0.1/32 trust'
        echo 'host all all ::1/128 trust'
        grep -v '^host' "$hba" || true
      } >"$hba.new"
      mv "$hba.new" "$hba"
      chown postgres:postgres "$hba" 2>/dev/null || true
    fi
    # a test server: loopback only, durability traded for speed
    mkdir -p "/etc/postgresql/$version/main/conf.d"
    printf '%s\n' "listen_addresses = '127.0.0.1'" "port = 5432" "fsync = off" "synchronous_commit = off" \
      "full_page_writes = off" "max_connections = 300" >"/etc/postgresql/$version/main/conf.d/hirekit.conf"
    log "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
    for _ in $(seq 1 60); do pg_isready -h 127.0.0.1 -p 5432 -q && break; sleep 0.5; done
  fi
  if pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
    psql -h 127.0.0.1 -U postgres -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" | grep -q 1 \
      || psql -h 127.0.0.1 -U postgres -d postgres -qc 'CREATE DATABASE test'
    log "PostgreSQL ready: postgresql://postgres@127.0.0.1:5432/test"
  fi
}

start_redis() {
  if redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1; then
    log "Redis already answers on 127.0.0.1:6379"
    return 0
  fi
  command -v redis-server >/dev/null 2>&1 || { log "Redis is not installed"; return 0; }
  log "starting Redis"
  mkdir -p /tmp/hirekit-redis
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no \
    --dir /tmp/hirekit-redis --logfile /tmp/hirekit-redis/redis.log
  for _ in $(seq 1 60); do redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && break; sleep 0.5; done
  redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 && log "Redis ready: redis://127.0.0.1:6379"
}

install_missing
start_postgresql
start_redis
