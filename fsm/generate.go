package fsm

//go:generate go run ../gen/cmd/fsmgen -spec ../spec/turn.fsm -out . -pkg fsm
//go:generate go run ../gen/cmd/fsmgen -spec ../spec/lane.fsm -out . -pkg fsm
//go:generate go run ../gen/cmd/fsmgen -spec ../spec/lease.fsm -out . -pkg fsm
