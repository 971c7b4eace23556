//go:build !unix

package main

import osexec "os/exec"

func ownGroup(*osexec.Cmd) {}

// signalGroup kills cmd's process alone: process groups are unix's.
func signalGroup(cmd *osexec.Cmd, _ bool) error {
	if cmd.Process == nil {
		return nil
	}
	return cmd.Process.Kill()
}
