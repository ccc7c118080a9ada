//go:build !unix

package main

import "os/exec"

func devProcAttr(*exec.Cmd) {}

func devSignalGroup(cmd *exec.Cmd, _ bool) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
