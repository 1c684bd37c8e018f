#!/usr/bin/env bash
# Installs what the nightly jobs need on a clean swift:6.3 container (as .ci/run does): libxml2
# for the XML module and the notes loaders, xmllint to check junit.xml.
set -euo pipefail
need=()
command -v xmllint >/dev/null 2>&1 || need+=(libxml2-utils)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
pkg-config --exists libxml-2.0 2>/dev/null || need+=(libxml2-dev)
if [ ${#need[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
