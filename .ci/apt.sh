# Sourced by .ci/install-*: `quietly CMD...` shows a command's output only when it fails, and `apt_install
# PACKAGE...` installs Debian packages, updating the package lists once an hour at most (so that two scripts run
# one after the other on a fresh machine update them once).
export DEBIAN_FRONTEND=noninteractive
apt_log=$(mktemp)
trap 'rm -f "$apt_log"' EXIT

quietly() { "$@" >>"$apt_log" 2>&1 || { cat "$apt_log" >&2; exit 1; }; }

# The time of the last update these scripts made (apt leaves its lists' times alone when nothing changed).
apt_stamp=/var/lib/apt/fleetbook-ci-updated

apt_update_once() {
  # Again when the lists are gone (an image build removes them after an install).
  if [[ -z "$(find "$apt_stamp" -mmin -60 2>/dev/null)" ]] || ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
    quietly apt-get update
    touch "$apt_stamp"
  fi
}

apt_install() {
  apt_update_once
  quietly apt-get install -y --no-install-recommends "$@"
}
