package strictrenewal

//go:generate go run ../../gen/cmd/fsmgen -spec lease.fsm -out . -pkg strictrenewal
