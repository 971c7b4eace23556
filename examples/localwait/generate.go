package localwait

//go:generate go run ../../gen/cmd/fsmgen -spec turn.fsm -out . -pkg localwait
