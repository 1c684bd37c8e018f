#!/usr/bin/env bash
# The fresh-machine check (issue #27): proves the install steps on a machine that has nothing
# but what the official Swift image installs, instead of trusting this machine.
#
# 1. A minimal Debian bookworm root (debootstrap --variant=minbase, from the mirror this
#    machine's apt uses), plus exactly the packages swift.org's `swift:6.3` image installs for the
#    toolchain (swiftlang/swift-docker 6.3/ubuntu/24.04/Dockerfile), built once and reused while its
#    marker file matches (--rebuild-root builds it again). Each run gets a fresh copy of it (an
#    overlay whose upper layer is emptied first), so nothing a run installs reaches the next.
# 2. The toolchain (/opt/swift) and the package mirror (/opt/swift-packages) bind-mounted
#    read-only, git's url.insteadOf settings and user config copied, /dev, /dev/pts, /dev/shm
#    and /sys mounted; each step runs in its own PID and mount namespace (its own /proc), so no
#    process outlives it. Everything is unmounted on exit, also on failure or Ctrl-C.
# 3. A fresh git clone of the repository (HEAD) in the root, and in it, each step timed and
#    logged: Scripts/setup.sh, the README's `swift run corrupt-fuzz run` (shortened with
#    --duration) and `swift test`, the outside package Tests/ConsumerPackage (swift test, with
#    corrupt-fuzz by path and by a file:// git URL), and the `run:` steps of the workflows
#    (read from the clone at run time by Scripts/fresh-machine-workflows.py).
# 4. A summary table (step, seconds, exit status, expected, PASS/FAIL/SKIP); exits 1 when a
#    step failed. Each step's full output is in the log folder.
#
#   sudo bash Scripts/fresh-machine-check.sh [options] [REPOSITORY]
#
# REPOSITORY (default: the checkout this script is in) is cloned at HEAD; --include PATH adds a
# path of its working tree (e.g. one not committed yet), --include-uncommitted all of it.
# shellcheck disable=SC2317,SC2016  # functions called through run_step and traps; bash -c scripts
set -uo pipefail

usage() {
    cat <<'EOF'
Usage: Scripts/fresh-machine-check.sh [options] [REPOSITORY]

  --root DIR             where the Debian root lives (default /var/tmp/corrupt-fuzz-fresh-root)
  --logs DIR             where the logs go (default /var/tmp/corrupt-fuzz-fresh-logs/<time>)
  --mirror URL           the Debian mirror (default: the one /etc/apt/sources* names)
  --image-packages NAME  ubuntu24: the swift:6.3 image's package list (default), or debian12
  --rebuild-root         debootstrap again even if the root's marker says it is ready
  --prepare-only         build or reuse the root, check `swift --version` in it, and stop
  --include PATH         copy PATH from REPOSITORY's working tree into the clone (repeatable)
  --include-uncommitted  apply all of REPOSITORY's uncommitted changes and untracked files
  --skip-setup           do not run Scripts/setup.sh
  --skip-demo            do not run `swift run corrupt-fuzz run`
  --demo-duration D      the demo's --duration (default 5s)
  --skip-tests           do not run `swift test` (about 10 minutes)
  --skip-consumer        do not test Tests/ConsumerPackage
  --consumer MODES       path, url or path,url (default path,url)
  --skip-workflows       do not run the workflows' steps
  --workflows LIST       comma-separated files of .github/workflows (default: every workflow
                         triggered by schedule or pull_request)
  --workflow-input K=V   a workflow_dispatch input (default seconds=5: the nightly campaign's
                         seconds per target and shard); repeatable
  --verbose              show each step's output as it runs (it is logged either way)
  -h, --help             this help
EOF
}

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$SCRIPT_DIR/.." && pwd)"
ROOT_DIR=/var/tmp/corrupt-fuzz-fresh-root
LOG_DIR=""
MIRROR=""
SUITE=bookworm
REBUILD_ROOT=0
PREPARE_ONLY=0
INCLUDE_UNCOMMITTED=0
INCLUDES=()
RUN_SETUP=1
RUN_DEMO=1
DEMO_DURATION=5s
RUN_TESTS=1
RUN_CONSUMER=1
CONSUMER_MODES="path,url"
RUN_WORKFLOWS=1
WORKFLOWS=auto
WORKFLOW_INPUTS=()
VERBOSE=0
TAIL_LINES=60

# What swift.org's official image installs for the toolchain, and nothing else. The image a
# workflow names as `swift:6.3` (what the CI and nightly jobs run in) is Ubuntu 24.04:
# swiftlang/swift-docker, 6.3/ubuntu/24.04/Dockerfile, whose list is below with its two
# versioned packages mapped to bookworm's (libgcc-13-dev, libstdc++-13-dev -> -12-dev). It has
# SQLite's library but not its headers, and no gcc or cc (the toolchain's clang is the only C
# compiler): the gaps that broke the nightly job. (The Debian 12 image installs more:
# libsqlite3-dev and gcc among them; --image-packages debian12 uses that list instead.)
# It also installs curl and gpg to download the toolchain and purges them afterwards.
SWIFT_IMAGE_PACKAGES=(
    binutils git unzip gnupg2 libc6-dev libcurl4-openssl-dev libedit2 libgcc-12-dev libpython3-dev
    libsqlite3-0 libstdc++-12-dev libxml2-dev libncurses-dev libz3-dev pkg-config tzdata zlib1g-dev
)
# swiftlang/swift-docker, 6.3/debian/12/Dockerfile (FROM debian:12).
SWIFT_DEBIAN12_PACKAGES=(
    binutils libicu-dev libcurl4-openssl-dev libedit-dev libsqlite3-dev libncurses-dev libpython3-dev
    libxml2-dev pkg-config uuid-dev tzdata git gcc libstdc++-12-dev
)

while [ $# -gt 0 ]; do
    case "$1" in
        --root) ROOT_DIR="$2"; shift ;;
        --image-packages)
            case "$2" in
                ubuntu24) ;;
                debian12) SWIFT_IMAGE_PACKAGES=("${SWIFT_DEBIAN12_PACKAGES[@]}") ;;
                *) echo "--image-packages takes ubuntu24 (the swift:6.3 image, default) or debian12" >&2; exit 2 ;;
            esac
            shift
            ;;
        --logs) LOG_DIR="$2"; shift ;;
        --mirror) MIRROR="$2"; shift ;;
        --rebuild-root) REBUILD_ROOT=1 ;;
        --prepare-only) PREPARE_ONLY=1 ;;
        --include) INCLUDES+=("$2"); shift ;;
        --include-uncommitted) INCLUDE_UNCOMMITTED=1 ;;
        --skip-setup) RUN_SETUP=0 ;;
        --skip-demo) RUN_DEMO=0 ;;
        --demo-duration) DEMO_DURATION="$2"; shift ;;
        --skip-tests) RUN_TESTS=0 ;;
        --skip-consumer) RUN_CONSUMER=0 ;;
        --consumer) CONSUMER_MODES="$2"; shift ;;
        --skip-workflows) RUN_WORKFLOWS=0 ;;
        --workflows) WORKFLOWS="$2"; shift ;;
        --workflow-input) WORKFLOW_INPUTS+=("$2"); shift ;;
        --verbose) VERBOSE=1 ;;
        -h | --help) usage; exit 0 ;;
        -*) echo "unknown option: $1" >&2; usage >&2; exit 2 ;;
        *) REPO="$1" ;;
    esac
    shift
done
[ ${#WORKFLOW_INPUTS[@]} -gt 0 ] || WORKFLOW_INPUTS=(seconds=5)

die() { echo "fresh-machine-check: $*" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, mount, chroot)"
ROOT_DIR="$(realpath -m "$ROOT_DIR")"
REPO_ABS="$(realpath -m "$REPO" 2>/dev/null || echo "$REPO")"
case "$ROOT_DIR/" in "$REPO_ABS"/*) die "the root must not be inside the repository: $ROOT_DIR" ;; esac
[ "$ROOT_DIR" != / ] || die "--root / is not a root to build"

BASE="$ROOT_DIR/base"            # debootstrap + the Swift image's packages (reused)
UPPER="$ROOT_DIR/upper"          # this run's changes (emptied at the start of each run)
OVERLAY_WORK="$ROOT_DIR/work"
MERGED="$ROOT_DIR/merged"        # the root the steps run in
MARKER="$BASE/.corrupt-fuzz-fresh-base"
SRC=/src/corrupt-fuzz            # the clone, inside the root
HOST_SRC="$MERGED$SRC"
SWIFT_HOST=/opt/swift
PACKAGES_HOST=/opt/swift-packages
ROOT_PATH=/opt/swift/usr/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The environment of every step: what the official Debian 12 image sets (PATH with the
# toolchain first, LD_LIBRARY_PATH to its runtime), HOME, and no locale (the image sets none).
ROOT_ENV=(HOME=/root USER=root LOGNAME=root "PATH=$ROOT_PATH" LD_LIBRARY_PATH=/opt/swift/usr/lib/swift/linux TERM=dumb)

if [ -z "$LOG_DIR" ]; then
    LOG_DIR="/var/tmp/corrupt-fuzz-fresh-logs/$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$LOG_DIR" && ln -sfn "$LOG_DIR" /var/tmp/corrupt-fuzz-fresh-logs/latest
fi
mkdir -p "$LOG_DIR" || die "cannot create $LOG_DIR"
LOG_DIR="$(realpath "$LOG_DIR")"

# MARK: - Mounts and cleanup

# Unmounts everything below $ROOT_DIR, deepest first (also what an interrupted run left).
unmount_all() {
    local points point
    mapfile -t points < <(awk -v r="$ROOT_DIR" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r -u)
    for point in "${points[@]}"; do
        point="$(printf '%b' "$point")"   # mountinfo writes a space as \040
        umount "$point" 2>/dev/null || umount -l "$point" 2>/dev/null || echo "warning: could not unmount $point" >&2
    done
    if awk -v r="$ROOT_DIR" '$5 == r || index($5, r "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
        echo "warning: still mounted below $ROOT_DIR:" >&2
        awk -v r="$ROOT_DIR" '$5 == r || index($5, r "/") == 1 { print "  " $5 }' /proc/self/mountinfo >&2
    fi
}
STEP_PID=""
on_signal() {
    echo "interrupted: stopping the running step and unmounting" >&2
    if [ -n "$STEP_PID" ]; then
        kill -TERM -- "-$STEP_PID" 2>/dev/null
        wait "$STEP_PID" 2>/dev/null
        fail_step "(interrupted during the step above)" "signal"
    fi
    print_summary
    exit 130
}
set -m
trap unmount_all EXIT
trap on_signal INT TERM HUP

# /dev as a container has it (a few device nodes, a private devpts and /dev/shm, not the
# host's disks), and a read-only /sys. /proc is mounted by each step, in its own namespaces.
mount_system() {
    local root="$1" node
    mount -t tmpfs -o nosuid,mode=755,size=65536k devtmpfs-fresh "$root/dev"
    for node in null zero full random urandom tty; do
        touch "$root/dev/$node" && mount --bind "/dev/$node" "$root/dev/$node"
    done
    mkdir -p "$root/dev/pts" "$root/dev/shm"
    mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$root/dev/pts"
    ln -s pts/ptmx "$root/dev/ptmx"
    ln -s /proc/self/fd "$root/dev/fd"
    ln -s /proc/self/fd/0 "$root/dev/stdin"
    ln -s /proc/self/fd/1 "$root/dev/stdout"
    ln -s /proc/self/fd/2 "$root/dev/stderr"
    mount -t tmpfs -o nosuid,nodev,mode=1777 shm "$root/dev/shm"
    mkdir -p "$root/sys" "$root/proc"
    mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
}

bind_ro() {
    mkdir -p "$2"
    mount --bind "$1" "$2" && mount -o remount,bind,ro "$2"
}

# in_root ROOT CWD [NAME=VALUE...] -- COMMAND...: runs COMMAND in ROOT, in CWD, with only the
# steps' environment, in new PID and mount namespaces (its own /proc; when it ends, every
# process it started is killed).
in_root() {
    local root="$1" cwd="$2"
    shift 2
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    shift
    unshare --fork --pid --mount --kill-child --mount-proc="$root/proc" \
        chroot "$root" /usr/bin/env -i "${ROOT_ENV[@]}" "${envs[@]}" \
        /bin/bash -c 'cd "$1" || exit 125; shift; exec "$@"' in-root "$cwd" "$@" </dev/null
}

# MARK: - Steps and the summary

STEP_NAMES=()
STEP_SECS=()
STEP_STATUS=()
STEP_EXPECTED=()
STEP_RESULTS=()
STEP_NOTES=()
STEP_LOGS=()
LAST_RESULT=""
STEP_NOTE=""      # a step's check may set it
PENDING_NOTE=""   # a note for the next step's row

slug() { printf '%s' "$1" | tr -c 'A-Za-z0-9._-' '-' | tr -s '-' | cut -c1-60; }

# run_step NAME EXPECTED CHECK -- COMMAND...: runs COMMAND, logs it, times it; PASS when it
# exits EXPECTED and CHECK (a function given the log, or "") succeeds.
run_step() {
    local name="$1" expected="$2" check="$3"
    shift 4
    local number=$((${#STEP_NAMES[@]} + 1))
    local log
    log="$LOG_DIR/$(printf '%02d' "$number")-$(slug "$name").log"
    printf '==> [%02d] %s  (%s)\n' "$number" "$name" "$(date +%H:%M:%S)"
    {
        printf '# %s\n# %s\n' "$name" "$*"
        printf '# started %s\n\n' "$(date -Is)"
    } >"$log"
    local start end status
    start=$(date +%s%N)
    # In the background, in a process group of its own (set -m), so that an interrupt stops
    # the whole step at once (see on_signal).
    if [ "$VERBOSE" = 1 ]; then
        (
            "$@" </dev/null 2>&1 | tee -a "$log"
            exit "${PIPESTATUS[0]}"
        ) &
    else
        "$@" </dev/null >>"$log" 2>&1 &
    fi
    STEP_PID=$!
    wait "$STEP_PID"
    status=$?
    STEP_PID=""
    end=$(date +%s%N)
    local seconds
    seconds=$(awk -v d="$((end - start))" 'BEGIN { printf "%.1f", d / 1e9 }')
    printf '\n# exit status %s after %ss\n' "$status" "$seconds" >>"$log"
    STEP_NOTE=""
    local result=PASS
    if [ "$status" != "$expected" ]; then
        result=FAIL
        STEP_NOTE="exit $status, expected $expected"
    elif [ -n "$check" ] && ! "$check" "$log"; then
        result=FAIL
    fi
    if [ -n "$PENDING_NOTE" ]; then
        STEP_NOTE="${STEP_NOTE:+$STEP_NOTE; }$PENDING_NOTE"
        PENDING_NOTE=""
    fi
    STEP_NAMES+=("$name")
    STEP_SECS+=("$seconds")
    STEP_STATUS+=("$status")
    STEP_EXPECTED+=("$expected")
    STEP_RESULTS+=("$result")
    STEP_NOTES+=("$STEP_NOTE")
    STEP_LOGS+=("$log")
    LAST_RESULT="$result"
    printf '    %s in %ss (exit %s)%s; log: %s\n' "$result" "$seconds" "$status" "${STEP_NOTE:+: $STEP_NOTE}" "$log"
    if [ "$result" = FAIL ] && [ "$VERBOSE" = 0 ]; then
        echo "    ---- last $TAIL_LINES lines of the log ----"
        tail -n "$TAIL_LINES" "$log" | sed 's/^/    | /'
        echo "    ----"
    fi
}

skip_step() {
    local name="$1" note="$2"
    printf '==> [--] %s: SKIP (%s)\n' "$name" "$note"
    STEP_NAMES+=("$name")
    STEP_SECS+=("-")
    STEP_STATUS+=("-")
    STEP_EXPECTED+=("-")
    STEP_RESULTS+=("SKIP")
    STEP_NOTES+=("$note")
    STEP_LOGS+=("")
}

# A step that fails without running anything (a precondition).
fail_step() {
    local name="$1" note="$2"
    printf '==> [!!] %s: FAIL (%s)\n' "$name" "$note"
    STEP_NAMES+=("$name")
    STEP_SECS+=("-")
    STEP_STATUS+=("-")
    STEP_EXPECTED+=("0")
    STEP_RESULTS+=("FAIL")
    STEP_NOTES+=("$note")
    STEP_LOGS+=("")
}

print_summary() {
    local width=4 i failed=0 passed=0 skipped=0
    for i in "${!STEP_NAMES[@]}"; do
        [ "${#STEP_NAMES[$i]}" -gt "$width" ] && width=${#STEP_NAMES[$i]}
        case "${STEP_RESULTS[$i]}" in
            FAIL) failed=$((failed + 1)) ;;
            PASS) passed=$((passed + 1)) ;;
            *) skipped=$((skipped + 1)) ;;
        esac
    done
    [ "$width" -gt 90 ] && width=90
    {
        echo
        echo "Fresh-machine check of $REPO_ABS ($CLONE_COMMIT) in $MERGED"
        printf "%-${width}s  %8s  %4s  %8s  %s\n" step seconds exit expected result
        printf "%-${width}s  %8s  %4s  %8s  %s\n" "$(printf '%*s' "$width" '' | tr ' ' -)" -------- ---- -------- ------
        for i in "${!STEP_NAMES[@]}"; do
            printf "%-${width}.${width}s  %8s  %4s  %8s  %s%s\n" "${STEP_NAMES[$i]}" "${STEP_SECS[$i]}" "${STEP_STATUS[$i]}" \
                "${STEP_EXPECTED[$i]}" "${STEP_RESULTS[$i]}" "${STEP_NOTES[$i]:+  (${STEP_NOTES[$i]})}"
        done
        echo
        echo "$passed passed, $failed failed, $skipped skipped; logs: $LOG_DIR"
        for i in "${!STEP_NAMES[@]}"; do
            if [ "${STEP_RESULTS[$i]}" = FAIL ] && [ -n "${STEP_LOGS[$i]}" ]; then echo "  FAIL ${STEP_NAMES[$i]}: ${STEP_LOGS[$i]}"; fi
        done
    } | tee "$LOG_DIR/summary.txt"
    [ "$failed" -eq 0 ]
}

# MARK: - The Debian root

# The mirror and suites this machine's apt uses (deb822 .sources and one-line .list files):
# prints "URI SUITE COMPONENTS" for each bookworm entry.
apt_entries() {
    local file
    for file in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        case "$file" in
            *.sources)
                awk -v suite="$SUITE" '
                    function flush() { if (types ~ /(^| )deb( |$)/) { n = split(suites, s, " "); split(uris, u, " ")
                        for (i = 1; i <= n; i++) if (s[i] ~ "^" suite) print u[1], s[i], comps }
                        types = ""; uris = ""; suites = ""; comps = "" }
                    /^[ \t]*#/ { next }
                    /^[ \t]*$/ { flush(); next }
                    /^Types:/ { sub(/^Types:[ \t]*/, ""); types = $0 }
                    /^URIs:/ { sub(/^URIs:[ \t]*/, ""); uris = $0 }
                    /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
                    /^Components:/ { sub(/^Components:[ \t]*/, ""); comps = $0 }
                    END { flush() }' "$file"
                ;;
            *)
                awk -v suite="$SUITE" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
                    if ($(i + 1) ~ "^" suite) { comps = ""; for (j = i + 2; j <= NF; j++) comps = comps (comps ? " " : "") $j
                        print $i, $(i + 1), comps } }' "$file"
                ;;
        esac
    done
}

build_base() {
    local entries
    entries="$(apt_entries)"
    if [ -z "$MIRROR" ]; then
        MIRROR="$(awk -v suite="$SUITE" '$2 == suite { print $1; exit }' <<<"$entries")"
        [ -n "$MIRROR" ] || MIRROR=http://deb.debian.org/debian
    fi
    local wanted="suite=$SUITE variant=minbase mirror=$MIRROR packages=${SWIFT_IMAGE_PACKAGES[*]}"
    if [ "$REBUILD_ROOT" = 0 ] && [ -f "$MARKER" ] && [ "$(cat "$MARKER")" = "$wanted" ]; then
        skip_step "root: debootstrap $SUITE + the Swift image's packages" "reused $BASE (marker $MARKER; --rebuild-root builds it again)"
        return 0
    fi
    command -v debootstrap >/dev/null 2>&1 || {
        echo "installing debootstrap on this machine"
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
    } || die "cannot install debootstrap"
    rm -rf "$BASE" "$UPPER" "$OVERLAY_WORK"
    mkdir -p "$BASE"
    run_step "root: debootstrap --variant=minbase $SUITE ($MIRROR)" 0 "" -- debootstrap --variant=minbase "$SUITE" "$BASE" "$MIRROR"
    [ "$LAST_RESULT" = PASS ] || return 1
    # apt's sources as on this machine (the bookworm, -updates and -security suites).
    rm -f "$BASE/etc/apt/sources.list"
    {
        echo "# Written by Scripts/fresh-machine-check.sh from this machine's apt sources."
        awk '{ comps = $3; for (i = 4; i <= NF; i++) comps = comps " " $i
               printf "Types: deb\nURIs: %s\nSuites: %s\nComponents: %s\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\n", $1, $2, comps }' \
            <<<"${entries:-$MIRROR $SUITE main}"
    } >"$BASE/etc/apt/sources.list.d/debian.sources"
    cp /etc/resolv.conf "$BASE/etc/resolv.conf"
    mount_system "$BASE"
    run_step "root: apt-get install the Swift image's packages" 0 "" -- in_root "$BASE" / DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true -- \
        /bin/bash -c 'apt-get -q update && apt-get -q install -y "$@" && rm -r /var/lib/apt/lists/*' install "${SWIFT_IMAGE_PACKAGES[@]}"
    unmount_all
    [ "$LAST_RESULT" = PASS ] || return 1
    echo "$wanted" >"$MARKER"
}

# A fresh copy of the base (an overlay), with the toolchain, the package mirror and git's
# configuration as on this machine.
prepare_run_root() {
    unmount_all
    rm -rf "$UPPER" "$OVERLAY_WORK"
    mkdir -p "$UPPER" "$OVERLAY_WORK" "$MERGED"
    mount -t overlay overlay -o "lowerdir=$BASE,upperdir=$UPPER,workdir=$OVERLAY_WORK" "$MERGED" || return 1
    mount_system "$MERGED" || return 1
    bind_ro "$SWIFT_HOST" "$MERGED/opt/swift" || return 1
    if [ -d "$PACKAGES_HOST" ]; then bind_ro "$PACKAGES_HOST" "$MERGED/opt/swift-packages" || return 1; fi
    cp /etc/resolv.conf "$MERGED/etc/resolv.conf"
    grep -q localhost "$MERGED/etc/hosts" 2>/dev/null || printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >>"$MERGED/etc/hosts"
    # As the official image does: `ln -sf $SWIFT_PREFIX/usr/bin/* /usr/bin/`.
    local tool
    for tool in "$SWIFT_HOST"/usr/bin/*; do ln -sf "/opt/swift/usr/bin/$(basename "$tool")" "$MERGED/usr/bin/"; done
    # git: the url.insteadOf rules that send github.com to the package mirror (system config
    # here), and the user's global config; nothing else of /etc/gitconfig (no credential helper).
    git config --system --get-regexp '^url\.' 2>/dev/null | while read -r key value; do
        git config --file "$MERGED/etc/gitconfig" --add "$key" "$value"
    done
    git config --global --get-regexp '^url\.' 2>/dev/null | while read -r key value; do
        git config --file "$MERGED/etc/gitconfig" --add "$key" "$value"
    done
    [ -f "$HOME/.gitconfig" ] && cp "$HOME/.gitconfig" "$MERGED/root/.gitconfig"
    return 0
}

# MARK: - The clone

CLONE_COMMIT="?"
clone_repository() {
    mkdir -p "$(dirname "$HOST_SRC")"
    git clone -q --no-hardlinks "$REPO" "$HOST_SRC" || return 1
    local changed=0 path file
    if [ "$INCLUDE_UNCOMMITTED" = 1 ]; then
        git -C "$REPO" diff HEAD --binary | git -C "$HOST_SRC" apply --binary --allow-empty - || return 1
        while IFS= read -r -d '' file; do
            mkdir -p "$(dirname "$HOST_SRC/$file")" && cp -a "$REPO/$file" "$HOST_SRC/$file"
        done < <(git -C "$REPO" ls-files --others --exclude-standard -z)
        changed=1
    fi
    for path in "${INCLUDES[@]}"; do
        [ -e "$REPO/$path" ] || { echo "--include $path: not in $REPO"; return 1; }
        rm -rf "${HOST_SRC:?}/$path"
        # The path's files that git does not ignore (no build folders).
        while IFS= read -r -d '' file; do
            [ -e "$REPO/$file" ] || continue
            mkdir -p "$(dirname "$HOST_SRC/$file")" && cp -a "$REPO/$file" "$HOST_SRC/$file"
        done < <(git -C "$REPO" ls-files --cached --others --exclude-standard -z -- "$path")
        changed=1
    done
    if [ "$changed" = 1 ]; then
        # One local commit, so the consumer's git-URL dependency sees the same tree.
        git -C "$HOST_SRC" add -A
        git -C "$HOST_SRC" -c user.name=fresh-machine-check -c user.email=fresh-machine-check@localhost \
            commit -q --allow-empty -m "fresh-machine-check: working-tree files of $REPO" || return 1
    fi
    CLONE_COMMIT="$(git -C "$HOST_SRC" log -1 --format='%h %s' | cut -c1-70)"
    echo "cloned $REPO at $CLONE_COMMIT into $SRC"
}

# MARK: - Checks of step outputs

check_demo() {
    if ! grep -q '^Report: .*junit.xml' "$1" || ! grep -q 'executions' "$1"; then
        STEP_NOTE="exit 1 but no summary (no 'Report: …junit.xml' line)"
        return 1
    fi
    # Not a failure, but worth seeing: loaders the demo left out (a trait built without).
    local skipped
    skipped="$(grep -c '^skipping ' "$1")"
    [ "$skipped" -gt 0 ] && STEP_NOTE="note: $(grep -m1 '^skipping ' "$1")${skipped:+ ($skipped skipping lines)}"
    return 0
}

check_consumer_url() {
    if [ -d "$HOST_SRC/Tests/ConsumerPackage/.build-url/checkouts" ] && grep -qi 'file:///src/corrupt-fuzz' "$1"; then return 0; fi
    STEP_NOTE="corrupt-fuzz was not fetched from its git URL"
    return 1
}

# MARK: - Main

echo "fresh-machine check: root $ROOT_DIR, logs $LOG_DIR"
unmount_all
mkdir -p "$ROOT_DIR"
CLONE_COMMIT="(not cloned yet)"
if ! build_base; then
    print_summary
    exit 1
fi
if ! prepare_run_root; then
    fail_step "root: fresh overlay with /opt/swift and the package mirror" "mounting failed"
    print_summary
    exit 1
fi
run_step "toolchain: swift --version (in the root)" 0 "" -- in_root "$MERGED" / -- swift --version
if [ "$PREPARE_ONLY" = 1 ]; then
    print_summary
    exit $?
fi

run_step "clone $REPO at HEAD into $SRC" 0 "" -- clone_repository
CLONE_COMMIT="$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)"
[ "$INCLUDE_UNCOMMITTED" = 1 ] && CLONE_COMMIT+=" + uncommitted changes"
[ ${#INCLUDES[@]} -gt 0 ] && CLONE_COMMIT+=" + working-tree ${INCLUDES[*]}"
if [ "$LAST_RESULT" != PASS ]; then
    print_summary
    exit 1
fi

# a. The project's own set-up.
if [ "$RUN_SETUP" = 0 ]; then
    skip_step "setup: bash Scripts/setup.sh" "--skip-setup"
elif [ -f "$HOST_SRC/Scripts/setup.sh" ]; then
    run_step "setup: bash Scripts/setup.sh" 0 "" -- in_root "$MERGED" "$SRC" -- bash Scripts/setup.sh
else
    skip_step "setup: bash Scripts/setup.sh" "Scripts/setup.sh is not in the clone yet"
fi

# b. The README's two commands.
if [ "$RUN_DEMO" = 1 ]; then
    run_step "readme: swift run corrupt-fuzz run --duration $DEMO_DURATION (findings: exit 1)" 1 check_demo -- \
        in_root "$MERGED" "$SRC" -- swift run corrupt-fuzz run --duration "$DEMO_DURATION"
else
    skip_step "readme: swift run corrupt-fuzz run" "--skip-demo"
fi
if [ "$RUN_TESTS" = 1 ]; then
    run_step "readme: swift test" 0 "" -- in_root "$MERGED" "$SRC" -- swift test
else
    skip_step "readme: swift test" "--skip-tests"
fi

# c. An outside package that depends on CorruptFuzzTesting (by path, and by a file:// git URL).
CONSUMER="$SRC/Tests/ConsumerPackage"
if [ "$RUN_CONSUMER" = 0 ]; then
    skip_step "consumer: Tests/ConsumerPackage swift test" "--skip-consumer"
elif [ ! -f "$MERGED$CONSUMER/Package.swift" ]; then
    fail_step "consumer: Tests/ConsumerPackage swift test" "Tests/ConsumerPackage is not in the clone (commit it, or --include Tests/ConsumerPackage)"
else
    BRANCH="$(git -C "$HOST_SRC" symbolic-ref --short -q HEAD || true)"
    case ",$CONSUMER_MODES," in
        *,path,*)
            rm -f "$MERGED$CONSUMER/Package.resolved"
            run_step "consumer: swift test, corrupt-fuzz by path (../..)" 0 "" -- in_root "$MERGED" "$CONSUMER" -- swift test
            ;;
    esac
    case ",$CONSUMER_MODES," in
        *,url,*)
            rm -f "$MERGED$CONSUMER/Package.resolved"
            if [ -n "$BRANCH" ]; then
                reference=(CORRUPT_FUZZ_BRANCH="$BRANCH")
                described="branch $BRANCH"
            else
                reference=(CORRUPT_FUZZ_REVISION="$(git -C "$HOST_SRC" rev-parse HEAD)")
                described="revision HEAD"
            fi
            run_step "consumer: swift test, corrupt-fuzz by URL (file://$SRC, $described)" 0 check_consumer_url -- \
                in_root "$MERGED" "$CONSUMER" CORRUPT_FUZZ_URL="file://$SRC" "${reference[@]}" -- swift test --scratch-path .build-url
            rm -f "$MERGED$CONSUMER/Package.resolved"
            ;;
    esac
fi

# d. The run: steps of the nightly and pull-request workflows, read from the clone now.
run_workflows() {
    local plan_dir=/var/tmp/fresh-workflows
    local python=python3
    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import yaml' 2>/dev/null && python=/usr/bin/python3
    if ! "$python" -c 'import yaml' 2>/dev/null; then
        echo "installing python3-yaml on this machine (the workflow reader runs outside the root)"
        apt-get install -y -qq python3-yaml >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq python3-yaml >/dev/null; }
        python=/usr/bin/python3
    fi
    local args=(--workspace "$SRC" --plan "$plan_dir" --host-root "$MERGED" --workflows "$WORKFLOWS")
    local input
    for input in "${WORKFLOW_INPUTS[@]}"; do args+=(--input "$input"); done
    rm -rf "${MERGED:?}$plan_dir"
    run_step "workflows: read .github/workflows (Scripts/fresh-machine-workflows.py)" 0 "" -- \
        "$python" "$SCRIPT_DIR/fresh-machine-workflows.py" "$HOST_SRC/.github/workflows" "${args[@]}"
    [ "$LAST_RESULT" = PASS ] || return
    declare -A job_ok=() started=() blocked=() failed=()
    local number workflow job instance needs job_if kind step_if title script note need key
    while IFS=$'\t' read -r -u 3 number workflow job instance needs job_if kind step_if title script note; do
        [ "$note" = - ] && note=""
        local name="$workflow $instance: $title"
        key="$workflow/$job"
        [ -n "${job_ok[$key]:-}" ] || job_ok[$key]=1
        if [ -z "${started[$workflow/$instance]:-}" ]; then
            started[$workflow/$instance]=1
            blocked[$workflow/$instance]=0
            for need in ${needs//,/ }; do
                [ "$need" = - ] && continue
                [ "${job_ok[$workflow/$need]:-1}" = 1 ] || blocked[$workflow/$instance]=1
            done
            case "$job_if" in *'always()'*) blocked[$workflow/$instance]=0 ;; esac
        fi
        if [ "${blocked[$workflow/$instance]}" = 1 ]; then
            skip_step "$name" "not run: a job it needs failed"
            continue
        fi
        case "$kind" in
            skip | job-skip)
                skip_step "$name" "$note"
                continue
                ;;
        esac
        if [ -n "${failed[$workflow/$instance]:-}" ] && [ "$step_if" = success ]; then
            skip_step "$name" "not run: an earlier step of the job failed"
            continue
        fi
        if [ -z "${failed[$workflow/$instance]:-}" ] && [ "$step_if" = failure ]; then
            skip_step "$name" "not run: only after a failure"
            continue
        fi
        PENDING_NOTE="$note"
        run_step "$name" 0 "" -- in_root "$MERGED" "$SRC" -- bash "$script"
        if [ "$LAST_RESULT" != PASS ]; then
            failed[$workflow/$instance]=1
            job_ok[$key]=0
        fi
    done 3<"$MERGED$plan_dir/plan.tsv"
}
if [ "$RUN_WORKFLOWS" = 1 ]; then
    run_workflows
else
    skip_step "workflows: run: steps" "--skip-workflows"
fi

print_summary
exit $?
