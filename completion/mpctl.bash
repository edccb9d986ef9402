# SPDX-License-Identifier: GPL-2.0
# bash completion for mpctl and its mpctl-<command> links.
# The option lists are checked against --help and the man pages by
# bats/docs.bats.

_mpctl_commands="listen register add stress report info"

_mpctl_opts_listen="--level --cgroup --backend --mode --psi --count --timeout --min-interval --json --exec --metrics --metrics-format --realtime --verbose --quiet --sysroot --help --usage --version"
_mpctl_opts_register="--backend --cgroup --chunk --chunks --count --emulate --help --join --json --keep --metrics --metrics-format --timeout --usage --verbose --quiet --version"
_mpctl_opts_add="--help --json --quiet --timeout --usage --version --wait"
_mpctl_opts_stress="--backend --cgroup --chunk --duration --emulate --emulator-rt --help --high --hog --json --limit --output --overcommit --pretty --reclaim-nice --reclaim-rt --target --threads --usage --version --no-assist --no-early-warning --no-throttle --swap --parent --until-freed --force --strategy --miss-cost --seed --free --no-populate --lazyfree --answer-delay --stop-answering --cotenant --metrics --metrics-format --quiet --verbose"
_mpctl_opts_report="--allow-empty --allow-unsure --force --alpha --compare --pool --noise --duration --help --html --input --json --limit --list --markdown --output --pretty --repeat --scenario --stress-arg --svg --threshold --usage --version --parent --quiet --verbose --kcidb --kcidb-set --metrics --metrics-format"
_mpctl_opts_info="--cgroup --help --json --pretty --sysroot --usage --version"

_mpctl_scenarios="listen-latency shrinker hog overcommit emulated kernel-shrinker kernel-shrinker-max kernel-shrinker-late kernel-shrinker-noswap kernel-shrinker-stopped strategy-none strategy-madv-free strategy-psi strategy-kernel strategy-kernel-lazyfree strategy-kernel-munmap strategy-reclaim-agent"

# cgroups as their path in the hierarchy (/a/b), from the v1 memory
# hierarchy or else cgroup2, three levels deep
_mpctl_cgroups() {
	local root
	root=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)memory(,|$)/ { print $5; exit }' \
		/proc/self/mountinfo 2>/dev/null)
	[ -n "$root" ] || root=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' \
		/proc/self/mountinfo 2>/dev/null)
	[ -n "$root" ] || return
	echo /
	find "$root" -mindepth 1 -maxdepth 3 -type d -printf '/%P\n' 2>/dev/null
}

# the mount points of the memory hierarchies: v1 memory and cgroup2
_mpctl_cgroup_mounts() {
	awk '($0 ~ / - cgroup / && $NF ~ /(^|,)memory(,|$)/) ||
	     $0 ~ / - cgroup2 / { print $5 }' /proc/self/mountinfo 2>/dev/null
}

# --cgroup's word: a path in the hierarchy (/a/b), or a cgroupfs path
# (/sys/fs/cgroup/memory/a/), completed a directory at a time
_mpctl_cgroup_paths() {
	local cur=$1 mnt d
	local -a mounts
	COMPREPLY=()
	mapfile -t mounts < <(_mpctl_cgroup_mounts)
	for mnt in "${mounts[@]}"; do
		case $cur in
		"$mnt"/*)
			while IFS= read -r d; do
				COMPREPLY+=("$d/")
			done < <(compgen -d -- "$cur")
			compopt -o nospace -o filenames 2>/dev/null
			return ;;
		esac
	done
	for mnt in "${mounts[@]}"; do
		[[ $mnt/ == "$cur"* && -n $cur && ${#cur} -gt 1 ]] &&
			COMPREPLY+=("$mnt/")
	done
	[ ${#COMPREPLY[@]} -gt 0 ] && compopt -o nospace 2>/dev/null
	while IFS= read -r d; do
		COMPREPLY+=("$d")
	done < <(compgen -W "$(_mpctl_cgroups)" -- "$cur")
}

_mpctl_values() {
	case $1 in
	--level|-l) echo "low medium critical oom" ;;
	--backend|-b) echo "auto mempressure memcg psi" ;;
	--mode|-m) echo "default hierarchy local" ;;
	--scenario|-s) echo "$_mpctl_scenarios" ;;
	--high) echo "off" ;;
	--strategy) echo "none madv-free psi kernel kernel-lazyfree reclaim-agent" ;;
	--free) echo "reuse munmap free" ;;
	--metrics-format) echo "prometheus openmetrics" ;;
	--kcidb-set) echo "origin= checkout_id= build_id= tree_name= git_repository_url= git_repository_branch= git_commit_hash= git_commit_name= patchset_hash= config_name= config_url= compiler= log_url=" ;;
	esac
}

_mpctl() {
	local cur prev cmd opts vals i
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	# "--level=<TAB>": bash splits at '=' (COMP_WORDBREAKS)
	if [ "$cur" = "=" ]; then
		cur=""
	elif [ "$prev" = "=" ] && [ "$COMP_CWORD" -ge 2 ]; then
		prev=${COMP_WORDS[COMP_CWORD - 2]}
	fi
	case ${COMP_WORDS[0]##*/} in
	mpctl-*) cmd=${COMP_WORDS[0]##*/mpctl-}; cmd=${cmd#mpctl-} ;;
	*)
		if [ "$COMP_CWORD" -eq 1 ]; then
			mapfile -t COMPREPLY < <(compgen -W "$_mpctl_commands help --help --usage --version" -- "$cur")
			return
		fi
		cmd=${COMP_WORDS[1]} ;;
	esac
	if [ "$cmd" = help ]; then
		[ "$COMP_CWORD" -eq 2 ] &&
			mapfile -t COMPREPLY < <(compgen -W "$_mpctl_commands" -- "$cur")
		return
	fi
	# register [options] -- COMMAND...: complete COMMAND as a command line
	if [ "$cmd" = register ]; then
		for ((i = 1; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = -- ]; then
				declare -F _command_offset >/dev/null &&
					_command_offset $((i + 1))
				return
			fi
		done
	fi
	case $cmd in
	listen|register|add|stress|report|info) ;;
	*) return ;;
	esac
	vals=$(_mpctl_values "$prev")
	if [ -n "$vals" ]; then
		mapfile -t COMPREPLY < <(compgen -W "$vals" -- "$cur")
		# KEY= wants its value typed after it
		[ "$prev" != --kcidb-set ] || compopt -o nospace 2>/dev/null
		return
	fi
	case $prev in
	--cgroup|-c|--parent)
		_mpctl_cgroup_paths "$cur"
		return ;;
	--sysroot)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return ;;
	--output|-o|--svg|--html|--markdown|--input|-i|--metrics|--noise|--kcidb)
		compopt -o filenames 2>/dev/null
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		return ;;
	--chunk|-C|--limit|-L|--duration|-d|--timeout|-t|--min-interval|--count|-n|--threads|-T|--repeat|-r|--threshold|--hog|-H|--exec|-e|--psi|--chunks|--target|--emulator-rt|--reclaim-rt|--reclaim-nice|--overcommit|--stress-arg|--miss-cost|--answer-delay|--stop-answering|--seed)
		return ;;
	esac
	opts=_mpctl_opts_$cmd
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "${!opts}" -- "$cur")
		return
	fi
	# report --compare BASE.json NEW.json, report --pool REPORT.json...
	if [ "$cmd" = report ]; then
		for ((i = 1; i < COMP_CWORD; i++)); do
			if [ "${COMP_WORDS[i]}" = --compare ] ||
				[ "${COMP_WORDS[i]}" = --pool ]; then
				compopt -o filenames 2>/dev/null
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
				return
			fi
		done
	fi
}

complete -F _mpctl mpctl mpctl-listen mpctl-register mpctl-add mpctl-stress mpctl-report mpctl-info
