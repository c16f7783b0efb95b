# Sourced by the scripts that start parts of a local cluster (controlplane.sh, realnode.sh,
# kueue.sh): their one command line form, process and port handling, certificates and kubeconfigs.
#
#   cli_parse "$@"                `<script> <command> --dir D [FILE...]`: sets cmd, dir (made and
#                                 absolute) and files; -h/--help prints the script's leading
#                                 comment; FILEs are refused unless cli_takes_files=1 was set first
#   free_port [address]           a port nothing uses on that address (default 127.0.0.1)
#   stop_pid_file <file> [signal] stops the process named in a pid file (TERM, then KILL after
#                                 10 s) and removes the file; nothing to do without the file
#   stop_pid <name> [signal]      the same for $dir/<name>.pid
#   sign_cert <ca dir> <out dir> <name> <subject> [san]   <out dir>/<name>.{crt,key} signed by
#                                 <ca dir>/ca.{crt,key}: a server and client cert with a SAN,
#                                 else a client cert
#   write_kubeconfig <file> <server> <ca.crt> <cert dir> <user>   a kubeconfig of one cluster and
#                                 one user whose cert and key are <cert dir>/<user>.{crt,key}
#   kube_minor                    the minor of the Kubernetes pinned for this run (tests/harness/
#                                 versions.env; NCCLOP_KUBE_MINOR picks another): 35, 36, 37
#   gang_api_version [minor]      the scheduling.k8s.io version of native gang scheduling it serves
#   gang_flags <component>        the flags that turn native gang scheduling on for kube-apiserver,
#                                 kube-scheduler or kube-controller-manager (one per line);
#                                 $CONTROLPLANE_FEATURE_GATES replaces the gates, empty: gang off

cli_parse() {
  local script help
  script=$(basename "$0")
  help() { sed -n '2,/^[^#]/{/^#/p}' "$0"; }
  cmd=${1:-}; shift || true
  case "$cmd" in -h|--help) help; exit 0 ;; esac
  dir=""; files=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --dir) dir=$2; shift 2 ;;
      -h|--help) help; exit 0 ;;
      --) shift; files+=("$@"); break ;;
      -*) echo "$script: unknown argument $1 (see --help)" >&2; exit 2 ;;
      *) files+=("$1"); shift ;;
    esac
  done
  if [ ${#files[@]} -gt 0 ] && [ "${cli_takes_files:-0}" != 1 ]; then
    echo "$script: unknown argument ${files[0]} (see --help)" >&2; exit 2
  fi
  [ -n "$cmd" ] && [ -n "$dir" ] || { help >&2; exit 2; }
  mkdir -p "$dir"; dir=$(cd "$dir" && pwd)
}

# The API server's port is asked for on its own bind address: a port free on 127.0.0.1 may be
# taken on another address, and 0.0.0.0 needs it free on all (seen with tens of thousands of
# sockets open on the machine).
free_port() {
  python3 -c 'import socket, sys; s=socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "${1:-127.0.0.1}"
}

stop_pid_file() {
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill "-${2:-TERM}" "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

stop_pid() { stop_pid_file "$dir/$1.pid" "${2:-TERM}"; }

sign_cert() {
  local ca=$1 out=$2 name=$3 subject=$4 san=${5:-}
  mkdir -p "$out"
  openssl req -newkey rsa:2048 -nodes -keyout "$out/$name.key" -out "$out/$name.csr" -subj "$subject" 2>/dev/null
  if [ -n "$san" ]; then printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" > "$out/$name.ext"
  else printf 'extendedKeyUsage=clientAuth\n' > "$out/$name.ext"; fi
  openssl x509 -req -in "$out/$name.csr" -CA "$ca/ca.crt" -CAkey "$ca/ca.key" -CAcreateserial \
    -out "$out/$name.crt" -days 3650 -extfile "$out/$name.ext" 2>/dev/null
}

write_kubeconfig() {
  local file=$1 server=$2 ca=$3 certs=$4 user=$5
  cat > "$file" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 < "$ca")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 < "$certs/$user.crt")
    client-key-data: $(base64 -w0 < "$certs/$user.key")
contexts:
- name: local
  context:
    cluster: local
    user: $user
    namespace: default
current-context: local
KC
}

kube_minor() {
  (
    # shellcheck source=../versions.env
    source "$(dirname "${BASH_SOURCE[0]}")/../versions.env"
    local m=${KUBE_VERSION#v1.}; echo "${m%%.*}"
  )
}

gang_api_version() {
  local minor=${1:-$(kube_minor)}
  if [ "$minor" -le 35 ]; then echo v1alpha1; elif [ "$minor" -eq 36 ]; then echo v1alpha2; else echo v1beta1; fi
}

# 1.35 and 1.36: gates GenericWorkload (the API and the pod field) and GangScheduling (the
# scheduler's plugin); 1.37 has no GangScheduling gate (naming it stops every component) and the
# plugin comes with GenericWorkload. The API server also serves the version by --runtime-config;
# on 1.36+ kube-controller-manager's podgroup-protection-controller (which lets a deleted PodGroup
# go once its pods are gone) needs GenericWorkload too. 1.36+ also get TopologyAwareWorkloadScheduling
# (alpha, off by default): the API server keeps a PodGroup's schedulingConstraints only with it
# (it drops them without it) and kube-scheduler places a group in one topology domain only with it.
gang_flags() {
  local component=$1 minor gates
  minor=$(kube_minor)
  if [ "$minor" -ge 37 ]; then gates=GenericWorkload=true; else gates=GenericWorkload=true,GangScheduling=true; fi
  if [ "$minor" -ge 36 ]; then gates=$gates,TopologyAwareWorkloadScheduling=true; fi
  # Restarts in place: on by default from 1.36; 1.35 has them alpha, off, and its API server
  # refuses the action RestartAllContainers without them: turned on as an admin would.
  if [ "$minor" -le 35 ]; then gates=$gates,RestartAllContainersOnContainerExits=true,NodeDeclaredFeatures=true; fi
  gates=${CONTROLPLANE_FEATURE_GATES-$gates}
  [ -n "$gates" ] || return 0
  case "$component" in
    apiserver)
      echo "--feature-gates=$gates"
      case "$gates" in *GenericWorkload=true*) echo "--runtime-config=scheduling.k8s.io/$(gang_api_version "$minor")=true" ;; esac ;;
    scheduler) echo "--feature-gates=$gates" ;;
    controller-manager) if [ "$minor" -ge 36 ]; then echo "--feature-gates=$gates"; fi ;;
    *) echo "gang_flags: unknown component $component" >&2; return 2 ;;
  esac
}
