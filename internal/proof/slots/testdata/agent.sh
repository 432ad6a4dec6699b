#!/bin/sh
# A fleet agent in shell, with corestate alone (doc.go gives the line
# protocol): SLOT-ID TASK-PATH PLAN.
set -u
id=$1 task=$2 plan=$3
reg=$FLEET_REG
start=$(corestate owner $$ | jq -r .start)
echo "started $id $$ $start" >&3
if [ "$FLEET_MODE" = handover ]; then
	corestate slot adopt --owner $$ "$reg" "$id" >/dev/null
	case $? in
	0) echo "adopted $id" >&3 ;;
	2) echo "refused $id" >&3; exit 0 ;;
	*) echo "error $id adopt" >&3; exit 1 ;;
	esac
fi
if [ "$plan" = short ]; then
	corestate slot release "$reg" "$id" --if status=running status=completed >/dev/null 2>&1
	case $? in
	0) echo "released $id" >&3 ;;
	8) echo "long $id" >&3; plan=long ;;
	*) echo "error $id release" >&3; exit 1 ;;
	esac
fi
exec 4>&-
[ "$plan" = long ] && exec sleep 600
exit 0
