package policy

//go:generate go run ../gen/cmd/fsmgen -vocabulary -out .
