package main

import "syscall"

// ioctlGetTermios is the ioctl that reads a terminal's attributes.
const ioctlGetTermios = syscall.TCGETS
