#!/usr/bin/env bash
exec "$(dirname "$0")/controlplane.sh" down "$@"
