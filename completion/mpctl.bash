# SPDX-License-Identifier: GPL-2.0
# bash completion for mpctl and its mpctl-<command> links.
# The option lists are checked against --help and the man pages by
# bats/docs.bats.

_mpctl_commands="listen register add stress report"

_mpctl_opts_listen="--level --cgroup --backend --mode --psi --count --timeout --json --exec --realtime --verbose --sysroot --help --usage --version"
_mpctl_opts_register="--backend --cgroup --chunk --chunks --count --emulate --help --join --json --keep --timeout --usage --verbose --version"
_mpctl_opts_add="--help --json --timeout --usage --version --wait"
_mpctl_opts_stress="--backend --cgroup --chunk --duration --emulate --emulator-rt --help --high --hog --json --limit --output --overcommit --pretty --reclaim-nice --reclaim-rt --target --threads --usage --version --no-assist --no-throttle --swap"
_mpctl_opts_report="--allow-empty --alpha --compare --duration --help --html --input --json --limit --list --output --pretty --repeat --scenario --stress-arg --svg --threshold --usage --version"

_mpctl_values() {
	case $1 in
	--level|-l) echo "low medium critical oom" ;;
	--backend|-b) echo "auto mempressure memcg psi" ;;
	--mode|-m) echo "default hierarchy local" ;;
	esac
}

_mpctl() {
	local cur prev cmd opts vals
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	case ${COMP_WORDS[0]##*/} in
	mpctl-*) cmd=${COMP_WORDS[0]##*/mpctl-}; cmd=${cmd#mpctl-} ;;
	*)
		if [ "$COMP_CWORD" -eq 1 ]; then
			mapfile -t COMPREPLY < <(compgen -W "$_mpctl_commands --help --version" -- "$cur")
			return
		fi
		cmd=${COMP_WORDS[1]} ;;
	esac
	case $cmd in
	listen|register|add|stress|report) ;;
	*) return ;;
	esac
	vals=$(_mpctl_values "$prev")
	if [ -n "$vals" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$vals" -- "$cur")
		return
	fi
	case $prev in
	--cgroup|-c|--sysroot|--output|-o|--svg|--html)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return ;;
	esac
	opts=_mpctl_opts_$cmd
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "${!opts}" -- "$cur")
	fi
}

complete -F _mpctl mpctl mpctl-listen mpctl-register mpctl-add mpctl-stress mpctl-report
