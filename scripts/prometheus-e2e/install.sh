#!/usr/bin/env bash
# Installs what the Prometheus tests need (docs/prometheus.md): a real
# Prometheus server (Debian's `prometheus` package) for the end-to-end test
# that scrapes the reference server and tokex's --metrics-addr, and xmllint
# (Debian's libxml2-utils) for the JUnit schema check. Nothing is started:
# the tests start Prometheus themselves, on loopback, with a generated
# config. Installs only what is missing, only as root with apt-get; else it
# says why and exits 0 (the tests then skip, saying why).
#   TOKEX_SKIP_INSTALL=1  install nothing
set -euo pipefail
need=()
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
if [ ${#need[@]} -eq 0 ]; then
  echo "prometheus-e2e: prometheus and xmllint are installed"; exit 0
fi
if [ "${TOKEX_SKIP_INSTALL:-}" = 1 ]; then
  echo "prometheus-e2e: not installing ${need[*]} (TOKEX_SKIP_INSTALL=1): their tests skip"; exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "prometheus-e2e: cannot install ${need[*]} (needs root and apt-get): their tests skip"; exit 0
fi
echo "prometheus-e2e: apt-get install ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# No recommends: the package's exporters and the service are not wanted;
# policy-rc.d keeps a system with an init from starting the packaged service.
policy=/usr/sbin/policy-rc.d
made_policy=
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && made_policy=1
fi
status=0
apt-get install -y -qq --no-install-recommends "${need[@]}" || status=$?
[ -n "$made_policy" ] && rm -f "$policy"
if [ $status -ne 0 ]; then
  echo "prometheus-e2e: apt-get install ${need[*]} failed (exit $status): their tests skip"; exit 0
fi
command -v prometheus && prometheus --version 2>&1 | head -1
command -v xmllint
