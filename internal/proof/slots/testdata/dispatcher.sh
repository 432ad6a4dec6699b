#!/bin/sh
# A fleet dispatcher in shell, with corestate alone (doc.go gives the line
# protocol). It starts each agent through corestate's exec wrapper, which
# adopts the slot for the agent's process before the agent runs: no
# hand-over is needed.
set -u
reg=$FLEET_REG
dir=$(dirname "$reg")
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# oneline joins its input's lines: an answer is one line.
oneline() { tr '\n' ' '; }

spawn() { # TASK PARENT FLAGS
	task=$1 parent=$2 flags=,$3,
	set --
	[ "$parent" = - ] || set -- --parent "$parent"
	# A prompt file of this attempt's own, removed unless a slot records it.
	prompt=$(mktemp "$dir/$task/prompt-XXXXXX.md")
	try=0
	while :; do
		slot=$(corestate slot reserve --key "$task" "$@" --owner $$ --resource prompt="$prompt" "$reg" \
			-- "$dir/$task/status.json" --if status=queued status=running 2>"$err")
		rc=$?
		if [ $rc = 8 ] && grep -q 'registry full' "$err" && [ $try -lt 20 ]; then
			if ! corestate slot reap "$reg" --if status=running status=failed >/dev/null 2>"$err"; then
				rm -f -- "$prompt"
				echo "error reap: $(oneline <"$err")"
				return
			fi
			try=$((try + 1))
			continue
		fi
		break
	done
	[ $rc = 0 ] || rm -f -- "$prompt"
	case $rc in
	0) ;;
	10) echo "exists $(printf '%s\n' "$slot" | jq -r .id)"; return ;;
	8)
		for w in 'registry full:full' 'total reached:total' 'parent holds no:noparent' 'deeper than:toodeep'; do
			if grep -q "${w%:*}" "$err"; then echo "refused ${w#*:}"; return; fi
		done
		# The task left queued (a guard, or a transition rule): its slot came and went.
		if grep -q -e ': conflict: ' -e 'state conflict' "$err"; then echo conflict; return; fi
		echo "error $(oneline <"$err")"; return ;;
	*) echo "error exit $rc: $(oneline <"$err")"; return ;;
	esac
	id=$(printf '%s\n' "$slot" | jq -r .id)
	case $flags in *,pause-before-start,*) echo "paused $id"; cat >/dev/null; exit 0 ;; esac
	plan=short
	case $flags in *,long,*) plan=long ;; esac
	eval "set -- $(printf '%s' "$FLEET_AGENT" | jq -r '.argv | @sh')"
	case $flags in *,fail,*) set -- /nonexistent/agent ;; esac
	if ! command -v "$1" >/dev/null; then
		slot=$(corestate slot abort "$reg" "$id" --if status=running status=blocked) || { echo "error abort"; return; }
		p=$(printf '%s\n' "$slot" | jq -r .resources.prompt)
		rm -- "$p" # this dispatcher wrote it
		echo "aborted $id $p"
		return
	fi
	# The agent's environment, then the wrapper: corestate adopts the slot
	# with its own pid and becomes env, which becomes the agent.
	agentenv=$(printf '%s' "$FLEET_AGENT" | jq -r '(.env // []) | map(@sh) | join(" ")')
	eval "corestate slot adopt \"\$reg\" \"\$id\" -- env $agentenv \"\$@\" \"\$id\" \"\$dir/\$task/status.json\" \$plan >/dev/null &"
	pid=$!
	case $flags in *,pause-before-handover,*) echo "paused $id"; cat >/dev/null; exit 0 ;; esac
	echo "ok $id $pid"
}

while read -r cmd task parent flags; do
	case $cmd in
	stop) exec 4>&-; echo stopped; cat >/dev/null; exit 0 ;;
	spawn) spawn "$task" "$parent" "$flags" ;;
	*) echo "error bad command $cmd"; exit 1 ;;
	esac
done
